/* chunkfs — unit tests for the format codecs, the I/O managers and mkfs:
 * every structure round-trips, every kind of damage a checker must see
 * (a flipped bit, a misdirected or stale block, a foreign file system) is
 * refused by the decoders, and mkfs lays out exactly FORMAT.md.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-main.h"
#include "chunkfs/format.h"
#include "chunkfs/io.h"
#include "chunkfs/mkfs.h"

static const uint8_t uuid_a[16] = {1, 2,  3,  4,  5,  6,  7,  8,
                                   9, 10, 11, 12, 13, 14, 15, 16};
static const uint8_t uuid_b[16] = {16, 15, 14, 13, 12, 11, 10, 9,
                                   8,  7,  6,  5,  4,  3,  2,  1};

static struct cfs_super
a_super (void)
{
  struct cfs_super s;

  memset (&s, 0, sizeof s);
  memcpy (s.uuid, uuid_a, 16);
  s.chunk_blocks = 32768;
  s.chunks = 4;
  s.device_blocks = CFS_FIRST_CHUNK + 4 * 32768 + 100;
  s.inodes_per_chunk = 2048;
  s.root_ino = CFS_ROOT_INO;
  s.mkfs_time = 1234567890123456789ull;
  snprintf (s.label, sizeof s.label, "label");
  return s;
}

/* A sparse image file of `bytes`, opened with the unix manager. */
static struct cfs_io *
image (char *path, size_t len, uint64_t bytes)
{
  struct cfs_err err;
  struct cfs_io *io;
  int fd;

  snprintf (path, len, "/tmp/check-chunkfs.XXXXXX");
  fd = mkstemp (path);
  ck_assert_int_ge (fd, 0);
  ck_assert_int_eq (ftruncate (fd, (off_t)bytes), 0);
  close (fd);
  io = cfs_open (path, true, &err);
  ck_assert_msg (io != NULL, "%s", err.msg);
  return io;
}

START_TEST (test_crc32c)
{
  /* The check value of CRC-32C (RFC 3720 B.4; the "123456789" vector). */
  ck_assert_uint_eq (~cfs_crc32c (~0u, "123456789", 9), 0xE3069283u);
  /* 32 bytes of zeros: RFC 3720's first example, 0x8A9136AA. */
  {
    unsigned char z[32] = {0};
    ck_assert_uint_eq (~cfs_crc32c (~0u, z, 32), 0x8A9136AAu);
  }
  /* RFC 3720's other examples: 32 bytes of 0xFF, and 0, 1, ... 31 --
   * fed in pieces of every length, so the eight-byte steps and the byte
   * tail meet at every alignment.
   */
  {
    unsigned char ff[32], inc[32];
    for (int i = 0; i < 32; i++)
      ff[i] = 0xFF, inc[i] = (unsigned char)i;
    ck_assert_uint_eq (~cfs_crc32c (~0u, ff, 32), 0x62A8AB43u);
    for (size_t cut = 0; cut <= 32; cut++)
      ck_assert_uint_eq (
          ~cfs_crc32c (cfs_crc32c (~0u, inc, cut), inc + cut, 32 - cut),
          0x46DD794Eu);
  }
  /* The seed is the UUID: the same bytes check differently elsewhere. */
  ck_assert_uint_ne (cfs_meta_crc (uuid_a, "x", 1),
                     cfs_meta_crc (uuid_b, "x", 1));
}
END_TEST

START_TEST (test_super)
{
  struct cfs_super s = a_super (), t;
  unsigned char blk[CFS_BLOCK];
  struct cfs_err err;
  size_t i;

  cfs_super_encode (&s, blk);
  ck_assert_int_eq (cfs_super_decode (blk, &t, &err), 0);
  ck_assert_mem_eq (&s, &t, sizeof s);
  /* Any single flipped bit is refused, wherever it is. */
  for (i = 0; i < CFS_BLOCK * 8; i += 97) {
    blk[i / 8] ^= 1 << i % 8;
    ck_assert_msg (cfs_super_decode (blk, &t, &err) == -1, "bit %zu", i);
    blk[i / 8] ^= 1 << i % 8;
  }
  /* A well-checksummed superblock with impossible geometry is refused. */
  s.chunk_blocks = 5000; /* not a power of two */
  cfs_super_encode (&s, blk);
  ck_assert_int_eq (cfs_super_decode (blk, &t, &err), -1);
  ck_assert_str_eq (err.msg, "superblock: bad blocks per chunk");
  s = a_super ();
  s.chunks = 5; /* more than the device holds */
  cfs_super_encode (&s, blk);
  ck_assert_int_eq (cfs_super_decode (blk, &t, &err), -1);
  ck_assert_str_eq (err.msg, "superblock: bad chunk count");
  s = a_super ();
  s.features = 0x80000000u; /* a feature this chunkfs does not know */
  cfs_super_encode (&s, blk);
  ck_assert_int_eq (cfs_super_decode (blk, &t, &err), -1);
  /* Another kind of block is not a superblock. */
  memcpy (blk, "CHKH", 4);
  ck_assert_int_eq (cfs_super_decode (blk, &t, &err), -1);
  ck_assert (strstr (err.msg, "not a CHKS block") != NULL);
}
END_TEST

START_TEST (test_header)
{
  struct cfs_chunk_header h, g;
  unsigned char blk[CFS_BLOCK];
  struct cfs_err err;

  memset (&h, 0, sizeof h);
  h.index = 3;
  h.state = CFS_DIRTY;
  h.generation = 42;
  h.free_blocks = 100;
  h.free_inodes = 7;
  h.backref_block = 9;
  h.backref_blocks = 1;
  h.super = a_super ();
  h.itable_mark = h.super.inodes_per_chunk;
  cfs_header_encode (&h, blk);
  ck_assert_int_eq (cfs_header_decode (blk, uuid_a, 3, &g, &err), 0);
  ck_assert_mem_eq (&h, &g, sizeof h);
  /* Without the feature the mark is not stored: every slot counts. */
  h.itable_mark = 80;
  cfs_header_encode (&h, blk);
  ck_assert (cfs_all_zero (blk + 152, 4));
  ck_assert_int_eq (cfs_header_decode (blk, uuid_a, 3, &g, &err), 0);
  ck_assert_uint_eq (g.itable_mark, h.super.inodes_per_chunk);
  /* With it, the mark is kept, even past the table (the checker's to
   * judge).
   */
  h.super.features = CFS_FEATURE_ITABLE_MARK;
  for (uint32_t m = 80; m < 1u << 20; m *= 1000) {
    h.itable_mark = m;
    cfs_header_encode (&h, blk);
    ck_assert_uint_eq (cfs_get32 (blk + 152), m);
    ck_assert_int_eq (cfs_header_decode (blk, uuid_a, 3, &g, &err), 0);
    ck_assert_mem_eq (&h, &g, sizeof h);
  }
  /* The header of another chunk: a misdirected write. */
  ck_assert_int_eq (cfs_header_decode (blk, uuid_a, 2, &g, &err), -1);
  ck_assert (strstr (err.msg, "it is chunk 3's") != NULL);
  /* Of another file system: its checksum is seeded otherwise. */
  ck_assert_int_eq (cfs_header_decode (blk, uuid_b, 3, &g, &err), -1);
  ck_assert (strstr (err.msg, "bad checksum") != NULL);
  /* All zero: an uninitialised chunk, not an error. */
  memset (blk, 0, sizeof blk);
  ck_assert_int_eq (cfs_header_decode (blk, uuid_a, 5, &g, &err), 0);
  ck_assert_int_eq (g.state, CFS_UNINIT);
  ck_assert_uint_eq (g.index, 5);
}
END_TEST

START_TEST (test_inode)
{
  unsigned char slot[CFS_INODE_SIZE];
  struct cfs_inode in, out;
  struct cfs_err err;
  int i;

  memset (&in, 0, sizeof in);
  in.mode = 0100644;
  in.flags = CFS_INODE_HAS_CONT;
  in.links = 2;
  in.uid = 1000;
  in.gid = 100;
  in.size = 5ull << 30;
  in.mtime = 99;
  in.generation = 3;
  in.chunk = 7;
  in.next = cfs_ref (9, 12);
  in.mapped = 1ull << 30;
  cfs_put16 (in.map, CFS_EXT_ROOT);
  for (i = 0; i < CFS_EXT_ROOT; i++)
    cfs_ext_put (cfs_map_entry (&in, (unsigned)i),
                 &(struct cfs_extent){(uint32_t)i * 100, 1000 + (uint32_t)i, 50,
                                      i % 2 == 1});
  cfs_inode_encode (uuid_a, &in, slot);
  ck_assert_int_eq (cfs_inode_decode (slot, uuid_a, 7, &out, &err), 0);
  ck_assert_mem_eq (&in, &out, sizeof in);
  ck_assert_int_eq (cfs_inode_decode (slot, uuid_a, 8, &out, &err), -1);
  slot[20] ^= 4;
  ck_assert_int_eq (cfs_inode_decode (slot, uuid_a, 7, &out, &err), -1);
  memset (slot, 0, sizeof slot);
  ck_assert_int_eq (cfs_inode_decode (slot, uuid_a, 7, &out, &err), 0);
  ck_assert_uint_eq (out.mode, 0); /* free */
}
END_TEST

START_TEST (test_meta)
{
  unsigned char blk[CFS_BLOCK];
  struct cfs_err err;

  memset (blk, 0x5a, sizeof blk);
  cfs_meta_begin (blk, CFS_MAGIC_DIR, 0, 4, 10);
  cfs_meta_seal (uuid_a, blk);
  ck_assert_int_eq (cfs_meta_check (blk, uuid_a, CFS_MAGIC_DIR, 4, 10, &err),
                    0);
  /* A block written in a later generation than its chunk says: stale
   * header, or a lost write of the header.
   */
  ck_assert_int_eq (cfs_meta_check (blk, uuid_a, CFS_MAGIC_DIR, 4, 9, &err),
                    -1);
  ck_assert (strstr (err.msg, "newer than its chunk's") != NULL);
  ck_assert_int_eq (cfs_meta_check (blk, uuid_a, CFS_MAGIC_BITMAP, 4, 10, &err),
                    -1);
  ck_assert_int_eq (cfs_meta_check (blk, uuid_a, CFS_MAGIC_DIR, 5, 10, &err),
                    -1);
  blk[100] ^= 1;
  ck_assert_int_eq (cfs_meta_check (blk, uuid_a, CFS_MAGIC_DIR, 4, 10, &err),
                    -1);
}
END_TEST

START_TEST (test_io_unix)
{
  char path[64];
  struct cfs_io *io = image (path, sizeof path, 1 << 20);
  unsigned char a[2 * CFS_BLOCK], b[2 * CFS_BLOCK];
  struct cfs_err err;

  ck_assert_uint_eq (cfs_blocks (io), 256);
  memset (a, 0xab, sizeof a);
  ck_assert_int_eq (cfs_write (io, 10, 2, a, true, &err), 0);
  ck_assert_int_eq (cfs_read (io, 10, 2, b, &err), 0);
  ck_assert_mem_eq (a, b, sizeof a);
  ck_assert_int_eq (cfs_zero (io, 11, 1, &err), 0);
  ck_assert_int_eq (cfs_read (io, 10, 2, b, &err), 0);
  ck_assert_mem_eq (a, b, CFS_BLOCK);
  memset (a, 0, CFS_BLOCK);
  ck_assert_mem_eq (a, b + CFS_BLOCK, CFS_BLOCK);
  /* Past the end: an error naming the block. */
  ck_assert_int_eq (cfs_read (io, 256, 1, b, &err), -1);
  ck_assert (strstr (err.msg, "block 256") != NULL);
  ck_assert_int_eq (cfs_close (io, &err), 0);
  unlink (path);
  ck_assert_ptr_null (cfs_open ("/nonexistent/x", false, &err));
  ck_assert (strstr (err.msg, "/nonexistent/x") != NULL);
  ck_assert (cfs_io_for ("nbd+unix:///?socket=/s") == &cfs_nbd_io);
  ck_assert (cfs_io_for ("/dev/sda") == &cfs_unix_io);
}
END_TEST

START_TEST (test_io_faults)
{
  char path[64];
  struct cfs_io *io;
  struct cfs_test_faults f = {.fail_read = 2, .fail_write = 3};
  unsigned char a[CFS_BLOCK], b[CFS_BLOCK];
  struct cfs_err err;
  uint64_t reads, writes;

  io = cfs_test_io (image (path, sizeof path, 1 << 20), &f);
  memset (a, 1, sizeof a);
  ck_assert_int_eq (cfs_write (io, 1, 1, a, false, &err), 0);
  ck_assert_int_eq (cfs_read (io, 1, 1, b, &err), 0);
  ck_assert_int_eq (cfs_read (io, 1, 1, b, &err), -1); /* the 2nd read */
  ck_assert (strstr (err.msg, "injected") != NULL);
  ck_assert_int_eq (cfs_write (io, 2, 1, a, false, &err), 0);
  ck_assert_int_eq (cfs_write (io, 3, 1, a, false, &err), -1);
  cfs_test_io_counts (io, &reads, &writes);
  ck_assert (reads == 2 && writes == 3);

  /* A bit flipped on every read of one block, never on the media. */
  f = (struct cfs_test_faults){
      .flip = true, .flip_block = 1, .flip_bit = 8 * 100 + 3};
  cfs_test_io_set (io, &f);
  ck_assert_int_eq (cfs_read (io, 1, 1, b, &err), 0);
  ck_assert_uint_eq (b[100], 1 ^ 8);
  ck_assert_uint_eq (b[99], 1);

  /* Volatile writes: visible to reads, lost at a power cut unless
   * flushed or FUA.
   */
  f = (struct cfs_test_faults){.volatile_writes = true};
  cfs_test_io_set (io, &f);
  memset (a, 2, sizeof a);
  ck_assert_int_eq (cfs_write (io, 5, 1, a, false, &err), 0); /* lost */
  ck_assert_int_eq (cfs_write (io, 6, 1, a, true, &err), 0);  /* FUA */
  ck_assert_int_eq (cfs_write (io, 7, 1, a, false, &err), 0);
  ck_assert_int_eq (cfs_read (io, 5, 1, b, &err), 0);
  ck_assert_uint_eq (b[0], 2);
  ck_assert_int_eq (cfs_write (io, 8, 1, a, false, &err), 0);
  ck_assert_int_eq (cfs_flush (io, &err), 0); /* 5, 7, 8 durable */
  memset (a, 3, sizeof a);
  ck_assert_int_eq (cfs_write (io, 5, 1, a, false, &err), 0); /* lost */
  cfs_test_io_drop_unflushed (io);
  ck_assert_int_eq (cfs_read (io, 5, 1, b, &err), 0);
  ck_assert_uint_eq (b[0], 2);
  ck_assert_int_eq (cfs_read (io, 6, 1, b, &err), 0);
  ck_assert_uint_eq (b[0], 2);
  ck_assert_int_eq (cfs_close (io, &err), 0);
  unlink (path);
}
END_TEST

START_TEST (test_mkfs)
{
  char path[64];
  struct cfs_io *io = image (path, sizeof path, 3ull << 40); /* 3 TiB */
  struct cfs_mkfs_opts o = {
      .label = "t", .uuid = uuid_a, .time_ns = 7, .chunk_bytes = 128ull << 20};
  struct cfs_super s, t;
  struct cfs_chunk_header h;
  struct cfs_geometry g;
  struct cfs_inode root, lf;
  unsigned char blk[CFS_BLOCK];
  struct cfs_err err;
  uint32_t c;

  ck_assert_msg (cfs_mkfs (io, &o, &s, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq (s.chunk_blocks, 32768);
  ck_assert_uint_eq (s.chunks, ((3ull << 40) / 4096 - 16) / 32768);
  ck_assert_uint_eq (s.inodes_per_chunk, 2048);
  ck_assert_int_eq (cfs_read (io, 0, 1, blk, &err), 0);
  ck_assert_int_eq (cfs_super_decode (blk, &t, &err), 0);
  ck_assert_mem_eq (&s, &t, sizeof s);
  cfs_geometry (&s, &g);
  ck_assert_uint_eq (g.block_bitmap_blocks, 2); /* 32768 > 32544 bits */
  ck_assert_uint_eq (g.inode_table_blocks, 128);
  ck_assert_uint_eq (g.first_data, 1 + 2 + 1 + 128);
  /* Chunk 0 clean, with the superblock's copy; the others untouched. */
  ck_assert_int_eq (cfs_read (io, cfs_block (&s, 0, 0), 1, blk, &err), 0);
  ck_assert_int_eq (cfs_header_decode (blk, s.uuid, 0, &h, &err), 0);
  ck_assert_int_eq (h.state, CFS_CLEAN);
  ck_assert_mem_eq (&h.super, &s, sizeof s);
  ck_assert_uint_eq (h.free_blocks, 32768 - g.first_data - 2);
  ck_assert_uint_eq (h.free_inodes, 2048 - 3);
  ck_assert_uint_eq (s.features, CFS_FEATURE_ITABLE_MARK);
  ck_assert_uint_eq (h.itable_mark, CFS_MARK_STEP);
  for (c = 1; c < s.chunks; c += s.chunks / 7) {
    ck_assert_int_eq (cfs_read (io, cfs_block (&s, c, 0), 1, blk, &err), 0);
    ck_assert_int_eq (cfs_header_decode (blk, s.uuid, c, &h, &err), 0);
    ck_assert_int_eq (h.state, CFS_UNINIT);
  }
  /* The root and lost+found, each with one directory block. */
  ck_assert_int_eq (
      cfs_read (io, cfs_block (&s, 0, g.inode_table), 1, blk, &err), 0);
  ck_assert_int_eq (
      cfs_inode_decode (blk + CFS_INODE_SIZE, s.uuid, 0, &root, &err), 0);
  ck_assert_int_eq (
      cfs_inode_decode (blk + 2 * CFS_INODE_SIZE, s.uuid, 0, &lf, &err), 0);
  ck_assert_uint_eq (root.mode, 040755);
  ck_assert_uint_eq (root.links, 3);
  ck_assert_uint_eq (lf.mode, 040700);
  {
    struct cfs_extent e;
    ck_assert_uint_eq (cfs_map_count (&root), 1);
    cfs_ext_get (cfs_map_entry (&root, 0), &e);
    ck_assert_uint_eq (e.start, g.first_data);
    ck_assert_uint_eq (e.len, 1);
  }
  ck_assert_int_eq (
      cfs_read (io, cfs_block (&s, 0, g.first_data), 1, blk, &err), 0);
  ck_assert_int_eq (cfs_meta_check (blk, s.uuid, CFS_MAGIC_DIR, 0, 1, &err), 0);
  ck_assert_uint_eq (cfs_get32 (blk + CFS_HEADER_SIZE + 8 + 4),
                     CFS_LOST_FOUND_INO);
  ck_assert_int_eq (memcmp (blk + CFS_HEADER_SIZE + 8 + 16, "lost+found", 10),
                    0);
  /* The block bitmap marks the metadata and the two directory blocks. */
  ck_assert_int_eq (
      cfs_read (io, cfs_block (&s, 0, g.block_bitmap), 1, blk, &err), 0);
  ck_assert_int_eq (cfs_meta_check (blk, s.uuid, CFS_MAGIC_BITMAP, 0, 1, &err),
                    0);
  for (c = 0; c < g.first_data + 4; c++)
    ck_assert_int_eq ((blk[CFS_HEADER_SIZE + c / 8] >> c % 8) & 1,
                      c < g.first_data + 2);
  ck_assert_int_eq (cfs_close (io, &err), 0);
  unlink (path);
}
END_TEST

/* mkfs stopped by a failed write at any point, over a disk that held a
 * chunkfs before: what is left is the old file system untouched (failed
 * at the first write) or no superblock at all, never a new superblock
 * over a half-made chunk 0 (the old superblock goes first, the new one
 * last).
 */
START_TEST (test_mkfs_interrupted)
{
  char path[64];
  struct cfs_io *raw = image (path, sizeof path, 1ull << 30), *io;
  struct cfs_mkfs_opts o = {.chunk_bytes = 16 << 20, .uuid = uuid_a};
  unsigned char blk[CFS_BLOCK];
  struct cfs_super s, t;
  struct cfs_err err;
  uint64_t reads, writes, n;

  ck_assert_msg (cfs_mkfs (raw, &o, &s, &err) == 0, "%s", err.msg);
  /* Count the writes a whole mkfs makes, through the test manager. */
  io = cfs_test_io (raw, NULL);
  o.uuid = uuid_b;
  ck_assert_int_eq (cfs_mkfs (io, &o, &s, &err), 0);
  cfs_test_io_counts (io, &reads, &writes);
  ck_assert_uint_gt (writes, 60); /* the 63 zeroed headers and more */
  for (n = 1; n <= writes; n++) {
    struct cfs_test_faults f = {.fail_write = n};
    cfs_test_io_set (io, &f);
    ck_assert_int_eq (cfs_close (io, &err), 0);
    raw = cfs_open (path, true, &err);
    ck_assert_ptr_nonnull (raw);
    io = cfs_test_io (raw, &f);
    o.uuid = n % 2 ? uuid_a : uuid_b;
    ck_assert_msg (cfs_mkfs (io, &o, &s, &err) == -1, "write %llu",
                   (unsigned long long)n);
    ck_assert (strstr (err.msg, "injected") != NULL);
    ck_assert_int_eq (cfs_read (io, CFS_SUPER_BLOCK, 1, blk, &err), 0);
    if (n == 1) {
      /* Stopped before it changed anything: the old one, whole. */
      ck_assert_int_eq (cfs_super_decode (blk, &t, &err), 0);
      ck_assert_mem_eq (t.uuid, uuid_b, 16);
    } else
      ck_assert_msg (cfs_super_decode (blk, &t, &err) == -1,
                     "a superblock survived a mkfs failing at write %llu",
                     (unsigned long long)n);
  }
  ck_assert_int_eq (cfs_close (io, &err), 0);
  unlink (path);
}
END_TEST

/* The default chunk size keeps a disk at 2048 chunks or fewer, from
 * 128 MiB up to 4 GiB.
 */
START_TEST (test_default_chunk)
{
  static const struct {
    uint64_t bytes, chunk;
  } want[] = {
      {1ull << 30, 128ull << 20},
      {256ull << 30, 128ull << 20},
      {256ull << 30 | 1ull << 29, 256ull << 20},
      {500ull * 1000 * 1000 * 1000, 256ull << 20},
      {2ull * 1000 * 1000 * 1000 * 1000, 1ull << 30},
      {8ull * 1000 * 1000 * 1000 * 1000, 4ull << 30},
      {20ull * 1000 * 1000 * 1000 * 1000, 4ull << 30},
  };

  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    ck_assert_msg (cfs_default_chunk_bytes (want[i].bytes / CFS_BLOCK) ==
                       want[i].chunk,
                   "case %zu: %llu", i,
                   (unsigned long long)cfs_default_chunk_bytes (want[i].bytes /
                                                                CFS_BLOCK));
}
END_TEST

START_TEST (test_mkfs_errors)
{
  static const struct {
    uint64_t chunk, ratio, bytes;
    const char *label, *msg;
  } bad[] = {
      {3 << 20, 0, 1ull << 30, NULL, "chunk size 3145728"},
      {8ull << 30, 0, 1ull << 34, NULL, "chunk size 8589934592"},
      {0, 100, 1ull << 30, NULL, "inode ratio 100"},
      {0, 0, 100 << 20, NULL, "smaller than one chunk of 128 MiB"},
      {0, 0, 1ull << 30, "a label far longer than thirty-one bytes",
       "31 bytes at most"},
  };
  size_t i;

  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char path[64];
    struct cfs_io *io = image (path, sizeof path, bad[i].bytes);
    struct cfs_mkfs_opts o = {.chunk_bytes = bad[i].chunk,
                              .bytes_per_inode = bad[i].ratio,
                              .label = bad[i].label};
    struct cfs_super s;
    struct cfs_err err;
    ck_assert_int_eq (cfs_mkfs (io, &o, &s, &err), -1);
    ck_assert_msg (strstr (err.msg, bad[i].msg) != NULL, "case %zu: %s", i,
                   err.msg);
    cfs_close (io, &err);
    unlink (path);
  }
}
END_TEST

/* Over NBD, as the tools run on an emulated disk without privileges:
 * nbdkit's memory plugin, mkfs through libnbd, the superblock read back.
 */
START_TEST (test_io_nbd)
{
  char dir[64], cmd[512], uri[160], pidfile[96];
  struct cfs_mkfs_opts o = {.uuid = uuid_a, .time_ns = 7};
  unsigned char blk[CFS_BLOCK];
  struct cfs_super s, t;
  struct cfs_err err;
  struct cfs_io *io;
  FILE *fp;
  long pid = 0;

  fd_check_tmpdir ("chunkfs-nbd", dir, sizeof dir);
  snprintf (pidfile, sizeof pidfile, "%s/pid", dir);
  snprintf (cmd, sizeof cmd, "nbdkit -U %s/sock -P %s memory 1G", dir, pidfile);
  ck_assert_int_eq (system (cmd), 0); /* returns once it serves */
  snprintf (uri, sizeof uri, "nbd+unix:///?socket=%s/sock", dir);
  io = cfs_open (uri, true, &err);
  ck_assert_msg (io != NULL, "%s", err.msg);
  ck_assert_uint_eq (cfs_blocks (io), (1u << 30) / CFS_BLOCK);
  ck_assert_msg (cfs_mkfs (io, &o, &s, &err) == 0, "%s", err.msg);
  ck_assert_int_eq (cfs_read (io, 0, 1, blk, &err), 0);
  ck_assert_int_eq (cfs_super_decode (blk, &t, &err), 0);
  ck_assert_mem_eq (&s, &t, sizeof s);
  ck_assert_int_eq (cfs_read (io, cfs_blocks (io), 1, blk, &err), -1);
  ck_assert_int_eq (cfs_close (io, &err), 0);
  fp = fopen (pidfile, "r");
  ck_assert_ptr_nonnull (fp);
  ck_assert_int_eq (fscanf (fp, "%ld", &pid), 1);
  fclose (fp);
  kill ((pid_t)pid, SIGTERM);
  ck_assert_ptr_null (
      cfs_open ("nbd+unix:///?socket=/nonexistent", false, &err));
  ck_assert (strstr (err.msg, "/nonexistent") != NULL);
  snprintf (cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq (system (cmd), 0);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"crc32c", test_crc32c},
      {"super", test_super},
      {"header", test_header},
      {"inode", test_inode},
      {"meta", test_meta},
      {"io_unix", test_io_unix},
      {"io_faults", test_io_faults},
      {"io_nbd", test_io_nbd},
      {"mkfs", test_mkfs},
      {"default_chunk", test_default_chunk},
      {"mkfs_errors", test_mkfs_errors},
      {"mkfs_interrupted", test_mkfs_interrupted},
  };

  return fd_check_main ("chunkfs", cases, sizeof cases / sizeof cases[0]);
}
