/* chunkfs — unit tests for extents: the in-memory extent list, and the
 * operations built on it through libchunkfs: fallocate (unwritten
 * extents, nothing written), PUNCH_HOLE, ZERO_RANGE with and without
 * KEEP_SIZE, truncating what KEEP_SIZE allocated, SEEK_DATA/SEEK_HOLE,
 * refused modes; after each, the checker finds nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-main.h"
#include "chunkfs/check.h"
#include "chunkfs/fs.h"
#include "chunkfs/io.h"
#include "chunkfs/mkfs.h"
#include "fs-internal.h"
#include "img.h"

#define B CFS_BLOCK

static struct cfs_extent
ext (uint32_t lblk, uint32_t start, uint32_t len)
{
  return (struct cfs_extent){lblk, start, len, false};
}

static uint32_t freed_blocks;

static void
count_freed (void *opaque, uint32_t start, uint32_t len, bool unwritten)
{
  (void)opaque, (void)start, (void)unwritten;
  freed_blocks += len;
}

/* Insert merges what joins; punch splits, trims and removes. */
START_TEST (test_extlist)
{
  struct cfs_extlist l = {0};

  ck_assert_int_eq (cfs_el_insert (&l, &(struct cfs_extent){10, 100, 5, false}),
                    0);
  ck_assert_int_eq (cfs_el_insert (&l, &(struct cfs_extent){15, 105, 5, false}),
                    0);
  ck_assert_uint_eq (l.n, 1); /* joined: 10..19 at 100 */
  ck_assert_uint_eq (l.v[0].len, 10);
  ck_assert_int_eq (cfs_el_insert (&l, &(struct cfs_extent){0, 500, 2, false}),
                    0);
  ck_assert_uint_eq (l.n, 2);
  ck_assert_uint_eq (l.v[0].lblk, 0);
  ck_assert_uint_eq (cfs_el_search (&l, 5), 1);
  ck_assert_uint_eq (cfs_el_search (&l, 20), 2);
  freed_blocks = 0;
  ck_assert_int_eq (cfs_el_punch (&l, 12, 3, count_freed, NULL), 0);
  ck_assert_uint_eq (freed_blocks, 3);
  ck_assert_uint_eq (l.n, 3); /* 0..1, 10..11, 15..19 */
  ck_assert_uint_eq (l.v[1].len, 2);
  ck_assert_uint_eq (l.v[2].lblk, 15);
  ck_assert_uint_eq (l.v[2].start, 105);
  ck_assert_int_eq (cfs_el_punch (&l, 1, 100, count_freed, NULL), 0);
  ck_assert_uint_eq (freed_blocks, 3 + 1 + 2 + 5);
  ck_assert_uint_eq (l.n, 1);
  ck_assert_uint_eq (l.v[0].len, 1);
  /* Unwritten and written do not merge. */
  {
    struct cfs_extent u = ext (1, 501, 1);
    u.unwritten = true;
    ck_assert_int_eq (cfs_el_insert (&l, &u), 0);
    ck_assert_uint_eq (l.n, 2);
  }
  cfs_el_free (&l);
}
END_TEST

static const uint8_t uuid_e[16] = {3, 1, 4, 1, 5, 9, 2, 6,
                                   5, 3, 5, 8, 9, 7, 9, 3};
static const struct img_spec spec = {"extents", 128 << 20, 64 << 10, uuid_e};

/* A 128 MiB chunkfs, mounted read-write. */
static void
img_make (struct img *m)
{
  img_create (m, &spec);
}

/* Unmount, check (nothing to find), remove. */
static void
img_done (struct img *m)
{
  struct cfs_check_opts o = {
      .mode = CFS_CHECK_NO, .full = true, .progress_fd = -1, .name = m->path};
  struct cfs_check_result r;
  struct cfs_err err;

  if (getenv ("FSCK_VERBOSE"))
    o.out = stderr;
  ck_assert_msg (cfs_fs_close (m->fs, &err) == 0, "%s", err.msg);
  cfs_check (m->io, &o, &r);
  ck_assert_msg (r.exit == 0 && r.problems == 0, "check: exit %u, %llu", r.exit,
                 (unsigned long long)r.problems);
  cfs_close (m->io, &err);
  unlink (m->path);
  rmdir (m->dir);
}

/* Bytes [off, off + len) of the file are all `c`. */
static void
expect (struct img *m, uint64_t ino, uint64_t off, size_t len, char c)
{
  char *buf = malloc (len);

  ck_assert_ptr_nonnull (buf);
  ck_assert_int_eq (cfs_pread (m->fs, ino, buf, len, off), (ssize_t)len);
  for (size_t i = 0; i < len; i++)
    ck_assert_msg (buf[i] == c, "byte %llu is %d, not %d",
                   (unsigned long long)(off + i), buf[i], c);
  free (buf);
}

static void
fill (struct img *m, uint64_t ino, uint64_t off, size_t len, char c)
{
  char *buf = malloc (len);

  ck_assert_ptr_nonnull (buf);
  memset (buf, c, len);
  ck_assert_int_eq (cfs_pwrite (m->fs, ino, buf, len, off), (ssize_t)len);
  free (buf);
}

static uint64_t
blocks (struct img *m, uint64_t ino, uint64_t *size)
{
  struct cfs_attr a;

  ck_assert_int_eq (cfs_getattr (m->fs, ino, &a), 0);
  if (size)
    *size = a.size;
  return a.blocks;
}

/* fallocate allocates 40 MiB (across chunks: continuations) without
 * writing it: it reads as zeros; a write into it reads back, around it
 * zeros.
 */
START_TEST (test_fallocate)
{
  struct img m;
  struct cfs_attr a;
  uint64_t size;

  img_make (&m);
  ck_assert_int_eq (cfs_create (m.fs, 1, "f", 0100644, 0, 0, &a), 0);
  ck_assert_int_eq (cfs_fallocate (m.fs, a.ino, 0, 40 << 20, 0), 0);
  ck_assert_uint_eq (blocks (&m, a.ino, &size), (40 << 20) / B);
  ck_assert_uint_eq (size, 40 << 20);
  expect (&m, a.ino, 0, 3 * B, 0);
  expect (&m, a.ino, (40 << 20) - B, B, 0);
  fill (&m, a.ino, 30 << 20, 100, 'x'); /* part of a block, mid-file */
  expect (&m, a.ino, 30 << 20, 100, 'x');
  expect (&m, a.ino, (30 << 20) + 100, B - 100, 0);
  expect (&m, a.ino, (30 << 20) - B, B, 0);
  ck_assert_uint_eq (blocks (&m, a.ino, NULL), (40 << 20) / B);
  /* KEEP_SIZE past the end: allocated, the size kept. */
  ck_assert_int_eq (
      cfs_fallocate (m.fs, a.ino, 40 << 20, 4 * B, CFS_FALLOC_KEEP_SIZE), 0);
  ck_assert_uint_eq (blocks (&m, a.ino, &size), (40 << 20) / B + 4);
  ck_assert_uint_eq (size, 40 << 20);
  img_done (&m);
}
END_TEST

/* PUNCH_HOLE frees the whole blocks and zeros the partial ones. */
START_TEST (test_punch)
{
  struct img m;
  struct cfs_attr a;
  uint64_t size;

  img_make (&m);
  ck_assert_int_eq (cfs_create (m.fs, 1, "f", 0100644, 0, 0, &a), 0);
  fill (&m, a.ino, 0, 16 * B, 'a');
  ck_assert_int_eq (
      cfs_fallocate (m.fs, a.ino, B + 10, 4 * B,
                     CFS_FALLOC_PUNCH_HOLE | CFS_FALLOC_KEEP_SIZE),
      0);
  expect (&m, a.ino, 0, B + 10, 'a');
  expect (&m, a.ino, B + 10, 4 * B, 0);
  expect (&m, a.ino, 5 * B + 10, 11 * B - 10, 'a');
  ck_assert_uint_eq (blocks (&m, a.ino, &size), 16 - 3);
  ck_assert_uint_eq (size, 16 * B);
  /* Past the end: nothing changes, the size stays. */
  ck_assert_int_eq (
      cfs_fallocate (m.fs, a.ino, 20 * B, B,
                     CFS_FALLOC_PUNCH_HOLE | CFS_FALLOC_KEEP_SIZE),
      0);
  ck_assert_uint_eq (blocks (&m, a.ino, &size), 13);
  ck_assert_uint_eq (size, 16 * B);
  /* Writing into the hole fills it again. */
  fill (&m, a.ino, 2 * B, B, 'b');
  expect (&m, a.ino, 2 * B, B, 'b');
  ck_assert_uint_eq (blocks (&m, a.ino, NULL), 14);
  img_done (&m);
}
END_TEST

/* A truncate that does not grow the file frees what fallocate's
 * KEEP_SIZE allocated past its end (as ext4 and tmpfs do; open's O_TRUNC
 * of an empty file is one); one that grows it keeps them.
 */
START_TEST (test_truncate_prealloc)
{
  struct img m;
  struct cfs_attr a, to = {0}, got;

  img_make (&m);
  ck_assert_int_eq (cfs_create (m.fs, 1, "f", 0100644, 0, 0, &a), 0);
  fill (&m, a.ino, 0, 3, 'a');
  ck_assert_int_eq (
      cfs_fallocate (m.fs, a.ino, 0, 64 * B, CFS_FALLOC_KEEP_SIZE), 0);
  ck_assert_uint_eq (blocks (&m, a.ino, NULL), 64);
  /* The same size: the data's block stays, the rest goes. */
  to.size = 3;
  ck_assert_int_eq (cfs_setattr (m.fs, a.ino, CFS_SET_SIZE, &to, &got), 0);
  ck_assert_uint_eq (got.size, 3);
  ck_assert_uint_eq (got.blocks, 1);
  expect (&m, a.ino, 0, 3, 'a');
  /* Growing keeps them, and reads zeros past the old end. */
  ck_assert_int_eq (
      cfs_fallocate (m.fs, a.ino, 0, 64 * B, CFS_FALLOC_KEEP_SIZE), 0);
  to.size = 2 * B;
  ck_assert_int_eq (cfs_setattr (m.fs, a.ino, CFS_SET_SIZE, &to, &got), 0);
  ck_assert_uint_eq (got.blocks, 64);
  expect (&m, a.ino, 0, 3, 'a');
  expect (&m, a.ino, 3, 2 * B - 3, 0);
  /* An empty file preallocated across chunks (continuations) is emptied
   * of all of it.
   */
  ck_assert_int_eq (cfs_create (m.fs, 1, "g", 0100644, 0, 0, &a), 0);
  ck_assert_int_eq (
      cfs_fallocate (m.fs, a.ino, 0, 40 << 20, CFS_FALLOC_KEEP_SIZE), 0);
  ck_assert_uint_eq (blocks (&m, a.ino, NULL), (40 << 20) / B);
  to.size = 0;
  ck_assert_int_eq (cfs_setattr (m.fs, a.ino, CFS_SET_SIZE, &to, &got), 0);
  ck_assert_uint_eq (got.size, 0);
  ck_assert_uint_eq (got.blocks, 0);
  img_done (&m);
}
END_TEST

/* ZERO_RANGE: reads as zeros, the blocks stay allocated (holes in the
 * range allocated); without KEEP_SIZE the file grows to cover it.
 */
START_TEST (test_zero_range)
{
  struct img m;
  struct cfs_attr a;
  uint64_t size;

  img_make (&m);
  ck_assert_int_eq (cfs_create (m.fs, 1, "f", 0100644, 0, 0, &a), 0);
  fill (&m, a.ino, 0, 8 * B, 'a');
  fill (&m, a.ino, 12 * B, 4 * B, 'c'); /* a hole at 8..11 */
  ck_assert_int_eq (
      cfs_fallocate (m.fs, a.ino, 100, 14 * B,
                     CFS_FALLOC_ZERO_RANGE | CFS_FALLOC_KEEP_SIZE),
      0);
  expect (&m, a.ino, 0, 100, 'a');
  expect (&m, a.ino, 100, 14 * B, 0);
  expect (&m, a.ino, 14 * B + 100, 2 * B - 100, 'c');
  /* The hole filled; five extents (written, unwritten, the filled hole,
   * unwritten, written) need a leaf block.
   */
  ck_assert_uint_eq (blocks (&m, a.ino, &size), 16 + 1);
  ck_assert_uint_eq (size, 16 * B);
  /* Writing into a zeroed block makes it data again. */
  fill (&m, a.ino, 3 * B + 5, 10, 'd');
  expect (&m, a.ino, 3 * B, 5, 0);
  expect (&m, a.ino, 3 * B + 5, 10, 'd');
  expect (&m, a.ino, 3 * B + 15, B - 15, 0);
  /* Without KEEP_SIZE: past the end, the file grows. */
  ck_assert_int_eq (
      cfs_fallocate (m.fs, a.ino, 15 * B, 3 * B, CFS_FALLOC_ZERO_RANGE), 0);
  ck_assert_uint_eq (blocks (&m, a.ino, &size), 18 + 1);
  ck_assert_uint_eq (size, 18 * B);
  expect (&m, a.ino, 14 * B + 100, B - 100, 'c');
  expect (&m, a.ino, 15 * B, 3 * B, 0);
  img_done (&m);
}
END_TEST

/* SEEK_DATA and SEEK_HOLE: data is what was written; holes, unwritten
 * blocks and the end of the file are holes.
 */
START_TEST (test_seek)
{
  struct img m;
  struct cfs_attr a;
  uint64_t to;

  img_make (&m);
  ck_assert_int_eq (cfs_create (m.fs, 1, "f", 0100644, 0, 0, &a), 0);
  fill (&m, a.ino, 4 * B, 2 * B, 'a'); /* data 4..5 */
  ck_assert_int_eq (cfs_fallocate (m.fs, a.ino, 6 * B, 2 * B, 0), 0);
  fill (&m, a.ino, 10 * B, B, 'b'); /* data 10; size 11 blocks */
  ck_assert_int_eq (cfs_lseek (m.fs, a.ino, 0, SEEK_DATA, &to), 0);
  ck_assert_uint_eq (to, 4 * B);
  ck_assert_int_eq (cfs_lseek (m.fs, a.ino, 4 * B + 7, SEEK_DATA, &to), 0);
  ck_assert_uint_eq (to, 4 * B + 7);
  ck_assert_int_eq (cfs_lseek (m.fs, a.ino, 4 * B, SEEK_HOLE, &to), 0);
  ck_assert_uint_eq (to, 6 * B); /* unwritten 6..7 is a hole */
  ck_assert_int_eq (cfs_lseek (m.fs, a.ino, 6 * B, SEEK_DATA, &to), 0);
  ck_assert_uint_eq (to, 10 * B);
  ck_assert_int_eq (cfs_lseek (m.fs, a.ino, 10 * B, SEEK_HOLE, &to), 0);
  ck_assert_uint_eq (to, 11 * B); /* the end */
  ck_assert_int_eq (cfs_lseek (m.fs, a.ino, 0, SEEK_HOLE, &to), 0);
  ck_assert_uint_eq (to, 0);
  ck_assert_int_eq (cfs_lseek (m.fs, a.ino, 11 * B, SEEK_DATA, &to), -ENXIO);
  ck_assert_int_eq (cfs_lseek (m.fs, a.ino, 11 * B, SEEK_HOLE, &to), -ENXIO);
  ck_assert_int_eq (cfs_fallocate (m.fs, a.ino, 11 * B, 5 * B, 0), 0);
  ck_assert_int_eq (cfs_lseek (m.fs, a.ino, 11 * B, SEEK_DATA, &to), -ENXIO);
  ck_assert_int_eq (cfs_lseek (m.fs, a.ino, 0, SEEK_SET, &to), -EINVAL);
  img_done (&m);
}
END_TEST

/* Modes Linux refuses, and modes chunkfs does not have: EOPNOTSUPP. */
START_TEST (test_modes)
{
  struct img m;
  struct cfs_attr a;

  img_make (&m);
  ck_assert_int_eq (cfs_create (m.fs, 1, "f", 0100644, 0, 0, &a), 0);
  fill (&m, a.ino, 0, 4 * B, 'a');
  ck_assert_int_eq (cfs_fallocate (m.fs, a.ino, 0, B, CFS_FALLOC_PUNCH_HOLE),
                    -EOPNOTSUPP); /* punching needs KEEP_SIZE */
  ck_assert_int_eq (cfs_fallocate (m.fs, a.ino, 0, B,
                                   CFS_FALLOC_PUNCH_HOLE |
                                       CFS_FALLOC_ZERO_RANGE |
                                       CFS_FALLOC_KEEP_SIZE),
                    -EOPNOTSUPP);
  ck_assert_int_eq (cfs_fallocate (m.fs, a.ino, 0, B, 8), -EOPNOTSUPP);
  expect (&m, a.ino, 0, 4 * B, 'a');
  img_done (&m);
}
END_TEST

/* File data leaves a share of its chunk free for the chunk's metadata:
 * a directory whose chunk a file filled (the file going on in other
 * chunks) still takes thousands of entries.  The reserve was 16 blocks
 * whatever the chunk's size, and 4,000 names need about 25 blocks.
 */
START_TEST (test_full_chunk_dir)
{
  struct img m;
  struct cfs_attr d, f, a;
  char name[16];

  img_make (&m);
  ck_assert_int_eq (cfs_mkdir (m.fs, 1, "d", 040755, 0, 0, &d), 0);
  ck_assert_int_eq (cfs_create (m.fs, d.ino, "big", 0100644, 0, 0, &f), 0);
  ck_assert_int_eq (cfs_fallocate (m.fs, f.ino, 0, 40 << 20, 0), 0);
  for (int i = 0; i < 4000; i++) {
    snprintf (name, sizeof name, "l%04d", i);
    ck_assert_msg (cfs_link (m.fs, f.ino, d.ino, name, &a) == 0,
                   "link %d failed", i);
  }
  ck_assert_uint_eq (a.links, 4001);
  img_done (&m);
}
END_TEST

static int
max_run (void *opaque, uint64_t lblk, uint64_t abs, uint64_t count)
{
  uint64_t *last = opaque;

  if (abs + count - 1 > *last)
    *last = abs + count - 1;
  return 0;
}

/* Directory blocks go to the chunk's metadata zone, file data after it:
 * a directory that grows after the file data was written still has all
 * its blocks before that data (the full check reads them together).
 */
START_TEST (test_metadata_zone)
{
  const struct cfs_super *sb;
  struct img m;
  struct cfs_attr d, f, a;
  uint64_t dir_first, dir_last = 0, data, local;
  char name[64];

  img_make (&m);
  sb = cfs_fs_super (m.fs);
  ck_assert_int_eq (cfs_mkdir (m.fs, 1, "d", 040755, 0, 0, &d), 0);
  ck_assert_int_eq (cfs_create (m.fs, d.ino, "f", 0100644, 0, 0, &f), 0);
  fill (&m, f.ino, 0, 1 << 20, 'x');
  for (int i = 0; i < 400; i++) {
    snprintf (name, sizeof name, "a-rather-long-name-for-entry-%04d", i);
    ck_assert_int_eq (cfs_link (m.fs, f.ino, d.ino, name, &a), 0);
  }
  ck_assert_int_eq (cfs_locate (m.fs, d.ino, CFS_AT_DATA, &dir_first), 0);
  ck_assert_int_eq (cfs_locate (m.fs, f.ino, CFS_AT_DATA, &data), 0);
  ck_assert_int_eq (cfs_file_runs (m.fs, d.ino, max_run, &dir_last), 0);
  ck_assert_uint_gt (dir_last, dir_first); /* it grew */
  ck_assert_uint_eq ((dir_first - 16) / sb->chunk_blocks,
                     (data - 16) / sb->chunk_blocks);
  ck_assert_uint_lt (dir_last, data);
  local = (data - 16) % sb->chunk_blocks;
  ck_assert_uint_gt (local, sb->chunk_blocks / 64);
  img_done (&m);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"extlist", test_extlist},
      {"fallocate", test_fallocate},
      {"punch", test_punch},
      {"truncate_prealloc", test_truncate_prealloc},
      {"zero_range", test_zero_range},
      {"seek", test_seek},
      {"modes", test_modes},
      {"full_chunk_dir", test_full_chunk_dir},
      {"metadata_zone", test_metadata_zone},
  };

  return fd_check_main ("extents", cases, sizeof cases / sizeof cases[0]);
}
