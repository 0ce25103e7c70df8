/* chunkfs — making a file system (mkfs.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "chunkfs/mkfs.h"

static void
set_bit (unsigned char *bitmap_blk, uint32_t bit)
{
  bitmap_blk[CFS_HEADER_SIZE + bit / 8] |= (unsigned char)(1u << bit % 8);
}

/* A directory block with one entry (or the empty entry when name is
 * NULL) spanning the whole block.
 */
static void
dir_block (const struct cfs_super *s, unsigned char *blk, uint32_t dir_ino,
           const char *name, uint32_t ino, uint8_t type)
{
  unsigned char *e = blk + CFS_HEADER_SIZE + 8;
  size_t span = CFS_BLOCK - 4 - (size_t)(e - blk);
  size_t nlen = name ? strlen (name) : 0;

  memset (blk, 0, CFS_BLOCK);
  cfs_meta_begin (blk, CFS_MAGIC_DIR, 0, 0, 1);
  cfs_put32 (blk + CFS_HEADER_SIZE, dir_ino); /* then the block index, 0 */
  /* entry: chunk, inode, generation, length, name length, type, name */
  if (name) {
    cfs_put32 (e + 4, ino);
    cfs_put32 (e + 8, 1);
  }
  cfs_put16 (e + 12, (uint16_t)span);
  e[14] = (unsigned char)nlen;
  e[15] = type;
  memcpy (e + 16, name ? name : "", nlen);
  cfs_meta_seal (s->uuid, blk);
}

uint64_t
cfs_default_chunk_bytes (uint64_t blocks)
{
  uint64_t bytes = 128ull << 20;

  while (bytes < (uint64_t)CFS_MAX_CHUNK_BLOCKS * CFS_BLOCK &&
         blocks / (bytes / CFS_BLOCK) > CFS_DEFAULT_CHUNKS)
    bytes *= 2;
  return bytes;
}

/* The superblock for a device of cfs_blocks (io): 0, or -1 when the
 * options or the device do not fit.
 */
static int
plan (struct cfs_io *io, const struct cfs_mkfs_opts *o, struct cfs_super *s,
      struct cfs_err *err)
{
  uint64_t blocks = cfs_blocks (io), now = o->time_ns;
  uint64_t chunk_bytes =
      o->chunk_bytes ? o->chunk_bytes : cfs_default_chunk_bytes (blocks);
  uint64_t ratio = o->bytes_per_inode ? o->bytes_per_inode : 64ull << 10;

  if (chunk_bytes < (uint64_t)CFS_MIN_CHUNK_BLOCKS * CFS_BLOCK ||
      chunk_bytes > (uint64_t)CFS_MAX_CHUNK_BLOCKS * CFS_BLOCK ||
      (chunk_bytes & (chunk_bytes - 1)))
    return cfs_fail (err,
                     "chunk size %llu: a power of two from 16 MiB to 4 GiB",
                     (unsigned long long)chunk_bytes);
  if (ratio < CFS_BLOCK || ratio > chunk_bytes / 64)
    return cfs_fail (err,
                     "inode ratio %llu: from 4096 bytes to a 64th of a chunk",
                     (unsigned long long)ratio);
  if (o->label && strlen (o->label) > 31)
    return cfs_fail (err, "label '%.40s...': 31 bytes at most", o->label);
  memset (s, 0, sizeof *s);
  s->chunk_blocks = (uint32_t)(chunk_bytes / CFS_BLOCK);
  if (blocks < CFS_FIRST_CHUNK + (uint64_t)s->chunk_blocks)
    return cfs_fail (
        err,
        "the device (%llu blocks) is smaller than one chunk of %llu "
        "MiB",
        (unsigned long long)blocks, (unsigned long long)(chunk_bytes >> 20));
  if ((blocks - CFS_FIRST_CHUNK) / s->chunk_blocks > CFS_MAX_CHUNKS)
    return cfs_fail (
        err,
        "%llu chunks of %llu MiB: at most %u fit the chunk maps; use "
        "bigger chunks",
        (unsigned long long)((blocks - CFS_FIRST_CHUNK) / s->chunk_blocks),
        (unsigned long long)(chunk_bytes >> 20), CFS_MAX_CHUNKS);
  if (now == 0) {
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  }
  if (o->uuid)
    memcpy (s->uuid, o->uuid, 16);
  else if (getrandom (s->uuid, 16, 0) != 16)
    return cfs_fail (err, "getrandom: %s", strerror (errno));
  s->device_blocks = blocks;
  s->chunks = (uint32_t)((blocks - CFS_FIRST_CHUNK) / s->chunk_blocks);
  s->inodes_per_chunk = (uint32_t)(chunk_bytes / ratio);
  s->inodes_per_chunk -= s->inodes_per_chunk % CFS_INODES_PER_BLOCK;
  s->root_chunk = 0;
  s->root_ino = CFS_ROOT_INO;
  s->features = CFS_FEATURE_ITABLE_MARK;
  s->mkfs_time = now;
  if (o->label)
    snprintf (s->label, sizeof s->label, "%s", o->label);
  return 0;
}

/* The dirty map, every chunk clean, the initialised-chunks map, and every
 * chunk but 0 uninitialised (a zero header).
 */
static int
write_map (struct cfs_io *io, const struct cfs_super *s, unsigned char *blk,
           struct cfs_err *err)
{
  uint32_t c, i;

  for (i = 0; i < cfs_map_blocks (s); i++) {
    cfs_meta_begin (blk, CFS_MAGIC_MAP, 0, CFS_NO_CHUNK, 0);
    memset (blk + CFS_HEADER_SIZE, 0, CFS_BLOCK - CFS_HEADER_SIZE);
    cfs_meta_seal (s->uuid, blk);
    if (cfs_write (io, CFS_MAP_BLOCK + i, 1, blk, false, err) == -1)
      return -1;
  }
  /* The initialised-chunks map: chunk 0 only. */
  for (i = 0; i < cfs_map_blocks (s); i++) {
    cfs_meta_begin (blk, CFS_MAGIC_INITMAP, 0, CFS_NO_CHUNK, 0);
    memset (blk + CFS_HEADER_SIZE, 0, CFS_BLOCK - CFS_HEADER_SIZE);
    if (i == 0)
      blk[CFS_HEADER_SIZE] = 1;
    cfs_meta_seal (s->uuid, blk);
    if (cfs_write (io, cfs_initmap_block (s) + i, 1, blk, false, err) == -1)
      return -1;
  }
  for (c = 1; c < s->chunks; c++)
    if (cfs_zero (io, cfs_block (s, c, 0), 1, err) == -1)
      return -1;
  return 0;
}

/* The `count` bitmap blocks of chunk 0 from local block `at` (flags 0:
 * blocks, 1: inodes), bits 0 to used - 1 set.
 */
static int
write_bitmap (struct cfs_io *io, const struct cfs_super *s, unsigned char *blk,
              uint32_t at, uint32_t count, uint16_t flags, uint32_t used,
              struct cfs_err *err)
{
  uint32_t i, b;

  for (i = 0; i < count; i++) {
    uint32_t first = i * CFS_BITS_PER_BITMAP;
    cfs_meta_begin (blk, CFS_MAGIC_BITMAP, flags, 0, 1);
    memset (blk + CFS_HEADER_SIZE, 0, CFS_BLOCK - CFS_HEADER_SIZE);
    for (b = first; b < used && b < first + CFS_BITS_PER_BITMAP; b++)
      set_bit (blk, b - first);
    cfs_meta_seal (s->uuid, blk);
    if (cfs_write (io, cfs_block (s, 0, at + i), 1, blk, false, err) == -1)
      return -1;
  }
  return 0;
}

/* Chunk 0's first inode table block, with the root and lost+found, and
 * their directory blocks (the first two data blocks).
 */
static int
write_root (struct cfs_io *io, const struct cfs_super *s,
            const struct cfs_geometry *g, unsigned char *blk,
            struct cfs_err *err)
{
  struct cfs_inode root, lf;

  memset (&root, 0, sizeof root);
  root.mode = 040755;
  root.links = 3; /* itself, its own ".", lost+found's ".." */
  root.size = root.mapped = CFS_BLOCK;
  root.atime = root.mtime = root.ctime = s->mkfs_time;
  root.generation = 1;
  root.offset = cfs_ref (0, CFS_ROOT_INO); /* its own parent */
  cfs_put16 (root.map, 1);                 /* one extent: its directory block */
  cfs_ext_put (cfs_map_entry (&root, 0),
               &(struct cfs_extent){0, g->first_data, 1, false});
  lf = root;
  lf.mode = 040700;
  lf.links = 2;
  cfs_ext_put (cfs_map_entry (&lf, 0),
               &(struct cfs_extent){0, g->first_data + 1, 1, false});
  memset (blk, 0, CFS_BLOCK);
  cfs_inode_encode (s->uuid, &root, blk + CFS_ROOT_INO * CFS_INODE_SIZE);
  cfs_inode_encode (s->uuid, &lf, blk + CFS_LOST_FOUND_INO * CFS_INODE_SIZE);
  if (cfs_write (io, cfs_block (s, 0, g->inode_table), 1, blk, false, err) ==
      -1)
    return -1;
  dir_block (s, blk, CFS_ROOT_INO, "lost+found", CFS_LOST_FOUND_INO, 4);
  if (cfs_write (io, cfs_block (s, 0, g->first_data), 1, blk, false, err) == -1)
    return -1;
  dir_block (s, blk, CFS_LOST_FOUND_INO, NULL, 0, 0);
  return cfs_write (io, cfs_block (s, 0, g->first_data + 1), 1, blk, false,
                    err);
}

/* Chunk 0 in full: bitmaps, inode table, the root and lost+found, and
 * last its header, clean.
 */
static int
write_chunk0 (struct cfs_io *io, const struct cfs_super *s,
              const struct cfs_geometry *g, unsigned char *blk,
              struct cfs_err *err)
{
  struct cfs_chunk_header h;

  if (cfs_zero (io, cfs_block (s, 0, g->inode_table), g->inode_table_blocks,
                err) == -1 ||
      write_bitmap (io, s, blk, g->block_bitmap, g->block_bitmap_blocks, 0,
                    g->first_data + 2, err) == -1 ||
      /* inode 0 set, so it is never handed out */
      write_bitmap (io, s, blk, g->inode_bitmap, g->inode_bitmap_blocks, 1,
                    CFS_LOST_FOUND_INO + 1, err) == -1 ||
      write_root (io, s, g, blk, err) == -1)
    return -1;
  memset (&h, 0, sizeof h);
  h.index = 0;
  h.state = CFS_CLEAN;
  h.generation = 1;
  h.free_blocks = s->chunk_blocks - (g->first_data + 2);
  h.free_inodes = s->inodes_per_chunk - (CFS_LOST_FOUND_INO + 1);
  h.itable_mark = cfs_mark_start (s);
  h.cleaned = s->mkfs_time;
  h.super = *s;
  cfs_header_encode (&h, blk);
  return cfs_write (io, cfs_block (s, 0, 0), 1, blk, false, err);
}

int
cfs_mkfs (struct cfs_io *io, const struct cfs_mkfs_opts *o, struct cfs_super *s,
          struct cfs_err *err)
{
  struct cfs_geometry g;
  unsigned char *blk;
  int r = -1;

  if (plan (io, o, s, err) == -1)
    return -1;
  cfs_geometry (s, &g);
  if ((blk = malloc (CFS_BLOCK)) == NULL)
    return cfs_fail (err, "out of memory");
  /* The old superblock goes first, so a crash part way leaves no file
   * system that looks made; the new one is written last.
   */
  if (cfs_zero (io, CFS_SUPER_BLOCK, CFS_FIRST_CHUNK, err) == -1 ||
      write_map (io, s, blk, err) == -1 ||
      write_chunk0 (io, s, &g, blk, err) == -1 || cfs_flush (io, err) == -1)
    goto out;
  cfs_super_encode (s, blk);
  if (cfs_write (io, CFS_SUPER_BLOCK, 1, blk, true, err) == -1 ||
      cfs_flush (io, err) == -1)
    goto out;
  r = 0;
out:
  free (blk);
  return r;
}
