/* chunkfs — libFuzzer target for the checker: damage a small chunkfs
 * (made once, in memory) as the input says, repair it with the checker,
 * check it again.  Whatever the damage: no crash, no hang, no access out
 * of bounds (the target is built with address and undefined sanitizers).
 *
 * Input: records of [kind u8][block u32][offset u16][length u8][bytes];
 * kind 0 patches bytes into a metadata block (superblock, dirty map,
 * initialised-chunks map (block 2 here), chunk headers, bitmaps, inode
 * tables, the first data blocks where directories and back-reference
 * tables live, two files' extent leaves, then the xattr blocks), 1 zeroes
 * the block, 2 fills it with the bytes repeated, 3 says how to check
 * (bit 0: -f, bit 1: -n only); 4 to 7 patch as 0 does and then seal the
 * block's checksums again, so the damage looks like valid metadata and
 * reaches the checker's deeper logic instead of its checksum test.
 * The image has special files too (a fifo, a device node): inodes whose
 * mapping area holds a device number instead of a map.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chunkfs/check.h"
#include "chunkfs/fs.h"
#include "chunkfs/mkfs.h"
#include "io-internal.h"

#define CHUNK_BLOCKS 4096u                        /* 16 MiB chunks */
#define NBLOCKS      (16 + 3 * CHUNK_BLOCKS + 7u) /* three, and a tail */

struct mem_io {
  struct cfs_io io;
  unsigned char *data;  /* the image */
  unsigned char *clean; /* the image as made */
  uint8_t *touched;     /* a byte per block: differs from clean */
  uint32_t *list;
  size_t nlist;
};

static void
touch (struct mem_io *m, uint64_t b)
{
  if (!m->touched[b]) {
    m->touched[b] = 1;
    m->list[m->nlist++] = (uint32_t)b;
  }
}

static int
mem_read (struct cfs_io *io, uint64_t block, uint32_t count, void *buf,
          struct cfs_err *err)
{
  struct mem_io *m = (struct mem_io *)io;

  if (block > NBLOCKS || count > NBLOCKS - block) {
    cfs_errno (err, 5, "read past the end");
    return -1;
  }
  memcpy (buf, m->data + block * CFS_BLOCK, (size_t)count * CFS_BLOCK);
  return 0;
}

static int
mem_write (struct cfs_io *io, uint64_t block, uint32_t count, const void *buf,
           bool fua, struct cfs_err *err)
{
  struct mem_io *m = (struct mem_io *)io;
  uint32_t i;

  if (block > NBLOCKS || count > NBLOCKS - block) {
    cfs_errno (err, 5, "write past the end");
    return -1;
  }
  for (i = 0; i < count; i++)
    touch (m, block + i);
  memcpy (m->data + block * CFS_BLOCK, buf, (size_t)count * CFS_BLOCK);
  return 0;
}

static int
mem_flush (struct cfs_io *io, struct cfs_err *err)
{
  return 0;
}

static int
mem_zero (struct cfs_io *io, uint64_t block, uint32_t count,
          struct cfs_err *err)
{
  struct mem_io *m = (struct mem_io *)io;
  uint32_t i;

  if (block > NBLOCKS || count > NBLOCKS - block) {
    cfs_errno (err, 5, "zero past the end");
    return -1;
  }
  for (i = 0; i < count; i++)
    touch (m, block + i);
  memset (m->data + block * CFS_BLOCK, 0, (size_t)count * CFS_BLOCK);
  return 0;
}

static uint64_t
mem_blocks (struct cfs_io *io)
{
  return NBLOCKS;
}

static int
mem_close (struct cfs_io *io, struct cfs_err *err)
{
  return 0;
}

static const struct cfs_io_manager mem_manager = {
    "memory",  NULL,     mem_read,   mem_write,
    mem_flush, mem_zero, mem_blocks, mem_close,
};

static struct mem_io img;
static uint32_t *meta; /* the blocks worth damaging */
static size_t nmeta;
static struct cfs_super sb;
static struct cfs_geometry geo;

/* Seal block b's checksums: each inode's in an inode-table block, the
 * block's own otherwise.
 */
static void
reseal (uint32_t b, unsigned char *blk)
{
  uint64_t rel =
      b >= CFS_FIRST_CHUNK ? (b - CFS_FIRST_CHUNK) % CHUNK_BLOCKS : 0;
  int i;

  if (b >= CFS_FIRST_CHUNK && rel >= geo.inode_table &&
      rel < geo.inode_table + geo.inode_table_blocks) {
    for (i = 0; i < CFS_INODES_PER_BLOCK; i++) {
      unsigned char *p = blk + i * CFS_INODE_SIZE;
      cfs_put32 (p + 252, cfs_meta_crc (sb.uuid, p, 252));
    }
    return;
  }
  cfs_meta_seal (sb.uuid, blk);
}

/* Extended attributes, last so the blocks above stay where they were:
 * in the inode (f5 of each directory), in an xattr block (f6, and the
 * symlink, whose inode has no room).
 */
static void
add_xattrs (struct cfs_fs *fs, const struct cfs_attr *d)
{
  static char v[1200];
  struct cfs_attr a;
  int i;

  memset (v, 'a', sizeof v);
  for (i = 0; i < 3; i++) {
    if (cfs_lookup (fs, d[i].ino, "f5", &a) < 0 ||
        cfs_setxattr (fs, a.ino, "user.k", "v", 1, 0) < 0 ||
        cfs_lookup (fs, d[i].ino, "f6", &a) < 0 ||
        cfs_setxattr (fs, a.ino, "user.k", "v", 1, 0) < 0 ||
        cfs_setxattr (fs, a.ino, "trusted.big", v, sizeof v, 0) < 0)
      abort ();
  }
  if (cfs_lookup (fs, d[0].ino, "s", &a) < 0 ||
      cfs_setxattr (fs, a.ino, "security.s", "x", 1, 0) < 0)
    abort ();
}

/* Two files written a block each in turn: their maps need extent leaves
 * (CHKE), which join the blocks worth damaging.
 */
static void
fragment (struct cfs_fs *fs, const char *buf, uint64_t leaf[2])
{
  struct cfs_attr a, b;

  if (cfs_create (fs, 1, "fa", 0100644, 0, 0, &a) < 0 ||
      cfs_create (fs, 1, "fb", 0100644, 0, 0, &b) < 0)
    abort ();
  for (int i = 0; i < 12; i++)
    if (cfs_pwrite (fs, a.ino, buf, CFS_BLOCK, (uint64_t)i * CFS_BLOCK) < 0 ||
        cfs_pwrite (fs, b.ino, buf, CFS_BLOCK, (uint64_t)i * CFS_BLOCK) < 0)
      abort ();
  if (cfs_locate (fs, a.ino, CFS_AT_EXTENT, &leaf[0]) < 0 ||
      cfs_locate (fs, b.ino, CFS_AT_EXTENT, &leaf[1]) < 0)
    abort ();
}

/* The tree: three directories of files of many sizes, a hard link
 * across directories, a symlink, a subdirectory, special files and one
 * file larger than a chunk.
 */
static void
populate (struct cfs_fs *fs, struct cfs_attr d[3], const char *buf)
{
  struct cfs_attr a;
  int i, j;

  for (i = 0; i < 3; i++) {
    char name[16];
    snprintf (name, sizeof name, "d%d", i);
    if (cfs_mkdir (fs, 1, name, 0755, 0, 0, &d[i]) < 0)
      abort ();
  }
  for (i = 0; i < 3; i++)
    for (j = 0; j < 20; j++) {
      char name[16];
      snprintf (name, sizeof name, "f%d", j);
      if (cfs_create (fs, d[i].ino, name, 0100644, 0, 0, &a) < 0 ||
          cfs_pwrite (fs, a.ino, buf, (size_t)(j * 1000), 0) < 0)
        abort ();
      if (j == 3 && cfs_link (fs, a.ino, d[(i + 1) % 3].ino, "ln", &a) < 0)
        abort ();
    }
  cfs_symlink (fs, d[0].ino, "s", "f1", 0, 0, &a);
  cfs_mkdir (fs, d[1].ino, "sub", 0755, 0, 0, &a);
  /* Special files: no blocks, a device number in place of the map. */
  if (cfs_mknod (fs, 1, "fifo", 010644, 0, 0, 0, &a) < 0 ||
      cfs_mknod (fs, d[2].ino, "null", 020666, 0x103, 0, 0, &a) < 0)
    abort ();
  /* One file larger than a chunk: it continues. */
  if (cfs_create (fs, 1, "big", 0100644, 0, 0, &a) < 0)
    abort ();
  for (i = 0; i < 20; i++)
    if (cfs_pwrite (fs, a.ino, buf, (size_t)(1 << 20), (uint64_t)i << 20) < 0)
      abort ();
}

static void
make_image (void)
{
  static const uint8_t uuid[16] = {7, 7, 7, 7, 1, 2, 3, 4,
                                   5, 6, 7, 8, 9, 9, 9, 9};
  struct cfs_mkfs_opts o = {.chunk_bytes = CHUNK_BLOCKS * CFS_BLOCK,
                            .bytes_per_inode = 64 << 10,
                            .uuid = uuid,
                            .time_ns = 1};
  struct cfs_geometry g;
  struct cfs_super s;
  struct cfs_err err;
  struct cfs_attr d[3];
  struct cfs_fs *fs;
  uint64_t leaf[2];
  static char buf[1 << 20];
  uint32_t c, b;

  img.io.m = &mem_manager;
  img.data = calloc (NBLOCKS, CFS_BLOCK);
  img.clean = calloc (NBLOCKS, CFS_BLOCK);
  img.touched = calloc (NBLOCKS, 1);
  img.list = calloc (NBLOCKS, sizeof *img.list);
  meta = calloc (NBLOCKS, sizeof *meta);
  if (!img.data || !img.clean || !img.touched || !img.list || !meta)
    abort ();
  memset (buf, 'x', sizeof buf);
  if (cfs_mkfs (&img.io, &o, &s, &err) == -1 ||
      (fs = cfs_fs_open (&img.io, CFS_OPEN_WRITE, &err)) == NULL)
    abort ();
  populate (fs, d, buf);
  fragment (fs, buf, leaf);
  add_xattrs (fs, d);
  if (cfs_fs_close (fs, &err) == -1)
    abort ();
  memcpy (img.clean, img.data, (size_t)NBLOCKS * CFS_BLOCK);
  memset (img.touched, 0, NBLOCKS);
  img.nlist = 0;
  cfs_geometry (&s, &g);
  sb = s;
  geo = g;
  for (b = 0; b < CFS_FIRST_CHUNK; b++)
    meta[nmeta++] = b;
  for (c = 0; c < s.chunks; c++)
    for (b = 0; b < g.first_data + 48; b++)
      meta[nmeta++] = (uint32_t)cfs_block (&s, c, b);
  meta[nmeta++] = (uint32_t)leaf[0]; /* at 16 + 3 x (first_data + 48) */
  meta[nmeta++] = (uint32_t)leaf[1];
  /* The xattr blocks, wherever they are (after the rest, so that the
   * inputs above keep their blocks).
   */
  for (b = CFS_FIRST_CHUNK; b < NBLOCKS; b++)
    if (!memcmp (img.data + (size_t)b * CFS_BLOCK, CFS_MAGIC_XATTR, 4) &&
        (b - CFS_FIRST_CHUNK) % CHUNK_BLOCKS >= g.first_data + 48)
      meta[nmeta++] = b;
}

static void
restore (void)
{
  size_t i;

  for (i = 0; i < img.nlist; i++) {
    uint32_t b = img.list[i];
    memcpy (img.data + (size_t)b * CFS_BLOCK, img.clean + (size_t)b * CFS_BLOCK,
            CFS_BLOCK);
    img.touched[b] = 0;
  }
  img.nlist = 0;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct cfs_check_opts o = {
      .mode = CFS_CHECK_YES, .progress_fd = -1, .name = "fuzz"};
  struct cfs_check_result r;
  size_t at = 0;
  int records = 0;

  if (img.data == NULL)
    make_image ();
  while (at + 8 <= size && records++ < 64) {
    uint8_t kind = data[at] % 8, len = data[at + 7];
    uint32_t which = (uint32_t)data[at + 1] | (uint32_t)data[at + 2] << 8 |
                     (uint32_t)data[at + 3] << 16 |
                     (uint32_t)data[at + 4] << 24;
    uint16_t off = (uint16_t)((data[at + 5] | data[at + 6] << 8) % CFS_BLOCK);
    const uint8_t *bytes = data + at + 8;
    uint32_t b = meta[which % nmeta];
    unsigned char *blk = img.data + (size_t)b * CFS_BLOCK;

    at += 8;
    if (len > size - at)
      len = (uint8_t)(size - at);
    at += len;
    if (kind == 3) {
      o.full = which & 1;
      o.mode = which & 2 ? CFS_CHECK_NO : CFS_CHECK_YES;
      continue;
    }
    touch (&img, b);
    if (kind == 1)
      memset (blk, 0, CFS_BLOCK);
    else if (kind == 2 && len)
      for (size_t i = 0; i < CFS_BLOCK; i++)
        blk[i] = bytes[i % len];
    else
      for (size_t i = 0; i < len && off + i < CFS_BLOCK; i++)
        blk[off + i] = bytes[i];
    if (kind >= 4)
      reseal (b, blk);
  }
  cfs_check (&img.io, &o, &r);
  if (o.mode == CFS_CHECK_YES) {
    o.mode = CFS_CHECK_NO;
    o.full = true;
    cfs_check (&img.io, &o, &r);
  }
  restore ();
  return 0;
}
