/* chunkfs — unit tests for the checker: the problem table, a clean file
 * system checks clean, each kind of damage is found and fixed, a crash
 * (writes never flushed) dirties only the chunks it touched and the
 * incremental check repairs them, and random damage to metadata is
 * always repaired so that a second check finds nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-main.h"
#include "chunkfs/check.h"
#include "chunkfs/fs.h"
#include "chunkfs/io.h"
#include "chunkfs/mkfs.h"
#include "img-check.h"
#include "problem.h"

static const uint8_t uuid_a[16] = {1, 2,  3,  4,  5,  6,  7,  8,
                                   9, 10, 11, 12, 13, 14, 15, 16};

struct img {
  char dir[64], path[96];
};

static void
img_cleanup (struct img *m)
{
  unlink (m->path);
  rmdir (m->dir);
}

static struct cfs_fs *
open_fs (struct cfs_io *io, unsigned flags)
{
  struct cfs_err err;
  struct cfs_fs *fs = cfs_fs_open (io, flags, &err);

  ck_assert_msg (fs != NULL, "%s", err.msg);
  return fs;
}

static uint64_t
rnd (uint64_t *s)
{
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* A chunkfs of `bytes` in 16 MiB chunks with a tree across chunks: top
 * directories spread by name, files up to 3 MiB, one of 40 MiB (it
 * continues over chunks), hard links across directories (back-
 * references), symlinks, a sparse file.
 */
static void
build_sized (struct img *m, uint64_t seed, off_t bytes)
{
  struct cfs_mkfs_opts o = {.chunk_bytes = 16 << 20,
                            .bytes_per_inode = 16 << 10,
                            .uuid = uuid_a,
                            .time_ns = 1};
  struct cfs_super s;
  struct cfs_err err;
  struct cfs_attr a, d[6];
  struct cfs_io *io;
  struct cfs_fs *fs;
  char *buf = malloc (40 << 20);
  int fd, i, j;

  fd_check_tmpdir ("fsck", m->dir, sizeof m->dir);
  snprintf (m->path, sizeof m->path, "%s/img", m->dir);
  fd = open (m->path, O_CREAT | O_RDWR, 0600);
  ck_assert_int_ge (fd, 0);
  ck_assert_int_eq (ftruncate (fd, bytes), 0);
  close (fd);
  ck_assert_ptr_nonnull (buf);
  for (i = 0; i < 40 << 20; i++)
    buf[i] = (char)rnd (&seed);
  io = cfs_open (m->path, true, &err);
  ck_assert_msg (io != NULL, "%s", err.msg);
  ck_assert_msg (cfs_mkfs (io, &o, &s, &err) == 0, "%s", err.msg);
  fs = open_fs (io, CFS_OPEN_WRITE);
  for (i = 0; i < 6; i++) {
    char name[16];
    snprintf (name, sizeof name, "dir%d", i);
    ck_assert_int_eq (cfs_mkdir (fs, 1, name, 0755, 0, 0, &d[i]), 0);
  }
  for (i = 0; i < 6; i++) {
    char name[16];
    for (j = 0; j < 12; j++) {
      uint64_t size = rnd (&seed) % (3 << 20);
      snprintf (name, sizeof name, "f%d", j);
      ck_assert_int_eq (cfs_create (fs, d[i].ino, name, 0100644, 0, 0, &a), 0);
      ck_assert_int_eq (cfs_pwrite (fs, a.ino, buf, size, 0), (ssize_t)size);
      if (j == 0) {
        snprintf (name, sizeof name, "link%d", i);
        ck_assert_int_eq (cfs_link (fs, a.ino, d[(i + 1) % 6].ino, name, &a),
                          0);
      }
    }
    ck_assert_int_eq (cfs_symlink (fs, d[i].ino, "sym", "../dir0/f1", 0, 0, &a),
                      0);
    ck_assert_int_eq (cfs_mkdir (fs, d[i].ino, "sub", 0700, 0, 0, &a), 0);
  }
  ck_assert_int_eq (cfs_create (fs, 1, "big", 0100600, 0, 0, &a), 0);
  ck_assert_int_eq (cfs_pwrite (fs, a.ino, buf, 40 << 20, 0), 40 << 20);
  ck_assert_int_eq (cfs_create (fs, d[2].ino, "sparse", 0100600, 0, 0, &a), 0);
  ck_assert_int_eq (cfs_pwrite (fs, a.ino, "x", 1, 100 << 20), 1);
  ck_assert_msg (cfs_fs_close (fs, &err) == 0, "%s", err.msg);
  ck_assert_int_eq (cfs_close (io, &err), 0);
  free (buf);
}

/* The usual image: 256 MiB. */
static void
build (struct img *m, uint64_t seed)
{
  build_sized (m, seed, 256 << 20);
}

static struct cfs_check_result
check (const char *path, enum cfs_check_mode mode, bool full)
{
  struct cfs_check_opts o = {
      .mode = mode, .full = full, .out = NULL, .progress_fd = -1, .name = path};
  struct cfs_check_result r;
  struct cfs_err err;
  struct cfs_io *io = cfs_open (path, mode != CFS_CHECK_NO, &err);

  if (getenv ("FSCK_VERBOSE"))
    o.out = stderr;
  ck_assert_msg (io != NULL, "%s", err.msg);
  cfs_check (io, &o, &r);
  ck_assert_int_eq (cfs_close (io, &err), 0);
  return r;
}

/* A repair, then a check that must find nothing. */
static void
repair_converges (const char *path, bool full)
{
  struct cfs_check_result r = check (path, CFS_CHECK_YES, full);

  ck_assert_msg (!(r.exit & ~CFS_EXIT_CORRECTED), "repair exit %u", r.exit);
  r = check (path, CFS_CHECK_NO, true);
  ck_assert_msg (r.exit == 0 && r.problems == 0,
                 "after the repair: exit %u, %llu problems", r.exit,
                 (unsigned long long)r.problems);
}

static void
corrupt (const char *path, uint64_t block, uint32_t offset, uint8_t xor)
{
  int fd = open (path, O_RDWR);
  unsigned char b;
  off_t at = (off_t)(block * CFS_BLOCK + offset);

  ck_assert_int_ge (fd, 0);
  ck_assert_int_eq (pread (fd, &b, 1, at), 1);
  b ^= xor;
  ck_assert_int_eq (pwrite (fd, &b, 1, at), 1);
  close (fd);
}

START_TEST (test_problem_table)
{
  size_t i;

  ck_assert_uint_gt (cfs_nproblems, 20);
  for (i = 0; i < cfs_nproblems; i++) {
    const struct cfs_problem *p = &cfs_problems[i];
    ck_assert_msg (i == 0 || cfs_problems[i - 1].code < p->code,
                   "problem %06X out of order or repeated", p->code);
    ck_assert_msg (p->msg && p->msg[0] && p->prompt && p->prompt[0],
                   "problem %06X lacks words", p->code);
    ck_assert_msg ((p->code >> 16) < CFS_CHECK_PASSES,
                   "problem %06X names no pass", p->code);
    ck_assert_ptr_eq (cfs_problem (p->code), p);
  }
  ck_assert_ptr_null (cfs_problem (0xFFFFFF));
}
END_TEST

START_TEST (test_clean)
{
  struct img m;
  struct cfs_check_result r;

  build (&m, 1);
  r = check (m.path, CFS_CHECK_NO, false);
  ck_assert_uint_eq (r.exit, 0);
  ck_assert_uint_eq (r.checked, 0); /* nothing dirty: nothing to read */
  r = check (m.path, CFS_CHECK_NO, true);
  ck_assert_msg (r.exit == 0 && r.problems == 0, "exit %u, %llu problems",
                 r.exit, (unsigned long long)r.problems);
  ck_assert_uint_gt (r.checked, 6);
  ck_assert_uint_gt (r.files, 80);
  img_cleanup (&m);
}
END_TEST

/* Operations after the last sync, their unflushed writes lost at a power
 * cut: the chunks they touched are exactly the dirty ones, the check
 * looks at those only, and leaves a file system that checks clean.
 */
START_TEST (test_crash)
{
  for (uint64_t seed = 1; seed <= 6; seed++) {
    struct cfs_test_faults f = {.volatile_writes = true};
    struct img m;
    struct cfs_err err;
    struct cfs_io *io;
    struct cfs_fs *fs;
    struct cfs_attr a, d;
    struct cfs_check_result r;
    char name[32];
    uint64_t s = seed;
    int i;

    build (&m, seed);
    io = cfs_test_io (cfs_open (m.path, true, &err), &f);
    fs = open_fs (io, CFS_OPEN_WRITE);
    ck_assert_int_eq (cfs_lookup (fs, 1, "dir3", &d), 0);
    for (i = 0; i < 20; i++) {
      snprintf (name, sizeof name, "new%d", i);
      ck_assert_int_eq (cfs_create (fs, d.ino, name, 0100644, 0, 0, &a), 0);
      ck_assert_int_gt (cfs_pwrite (fs, a.ino, "data", 4, rnd (&s) % 99999), 0);
      if (i % 3 == 0) {
        snprintf (name, sizeof name, "f%d", i % 12);
        cfs_unlink (fs, d.ino, name);
      }
      if (i == 5)
        ck_assert_int_eq (cfs_rename (fs, d.ino, "sub", 1, "moved", 0), 0);
      /* Part of the work is flushed, as the cache writes back. */
      if (i == (int)(seed % 7) * 3) {
        struct cfs_err e;
        cfs_flush (io, &e);
      }
    }
    cfs_test_io_drop_unflushed (io);
    cfs_fs_abandon (fs);
    ck_assert_int_eq (cfs_close (io, &err), 0);

    r = check (m.path, CFS_CHECK_NO, false);
    ck_assert_msg (r.checked >= 1 && r.checked < r.chunks,
                   "checked %u of %u chunks", r.checked, r.chunks);
    repair_converges (m.path, false);
    /* And it mounts clean. */
    io = cfs_open (m.path, true, &err);
    fs = open_fs (io, CFS_OPEN_WRITE);
    ck_assert_int_eq (cfs_lookup (fs, 1, "big", &a), 0);
    ck_assert_uint_eq (a.size, 40 << 20);
    ck_assert_int_eq (cfs_fs_close (fs, &err), 0);
    cfs_close (io, &err);
    img_cleanup (&m);
  }
}
END_TEST

/* The absolute block holding inode (c, i) and its offset there. */
static void
inode_at (const char *path, uint64_t ref, uint64_t *block, uint32_t *off)
{
  struct cfs_err err;
  struct cfs_io *io = cfs_open (path, false, &err);
  unsigned char blk[CFS_BLOCK];
  struct cfs_super s;
  struct cfs_geometry g;
  uint32_t i = (uint32_t)ref;

  ck_assert_int_eq (cfs_read (io, 0, 1, blk, &err), 0);
  ck_assert_int_eq (cfs_super_decode (blk, &s, &err), 0);
  cfs_geometry (&s, &g);
  *block = cfs_block (&s, (uint32_t)(ref >> 32),
                      g.inode_table + i / CFS_INODES_PER_BLOCK);
  *off = i % CFS_INODES_PER_BLOCK * CFS_INODE_SIZE;
  cfs_close (io, &err);
}

static uint64_t
lookup_ino (const char *path, const char *dir, const char *name)
{
  struct cfs_err err;
  struct cfs_io *io = cfs_open (path, false, &err);
  struct cfs_fs *fs = open_fs (io, 0);
  struct cfs_attr d, a;

  ck_assert_int_eq (cfs_lookup (fs, 1, dir, &d), 0);
  ck_assert_int_eq (cfs_lookup (fs, d.ino, name, &a), 0);
  cfs_fs_abandon (fs);
  cfs_close (io, &err);
  return a.ino;
}

/* A damaged inode in a clean chunk: the incremental check trusts the
 * chunk (nothing marked it), -f finds it, -y clears it, the entries
 * naming it go, and the second run is clean.
 */
START_TEST (test_bad_inode)
{
  struct img m;
  struct cfs_check_result r;
  uint64_t blk;
  uint32_t off;

  build (&m, 2);
  inode_at (m.path, lookup_ino (m.path, "dir1", "f3"), &blk, &off);
  corrupt (m.path, blk, off + 20, 0x40);
  r = check (m.path, CFS_CHECK_NO, false);
  ck_assert_uint_eq (r.exit, 0);
  r = check (m.path, CFS_CHECK_NO, true);
  ck_assert_uint_eq (r.exit, CFS_EXIT_UNCORRECTED);
  repair_converges (m.path, true);
  img_cleanup (&m);
}
END_TEST

/* A continuation inode of the 40 MiB file destroyed: the chain breaks,
 * the file is cut where it broke, and the continuations after the break
 * are freed.
 */
START_TEST (test_broken_chain)
{
  struct img m;
  struct cfs_err err;
  struct cfs_io *io;
  struct cfs_fs *fs;
  struct cfs_attr a;
  struct cfs_check_result r;
  unsigned char slot[CFS_INODE_SIZE];
  uint64_t blk, next;
  uint32_t off;
  int fd;

  build (&m, 3);
  io = cfs_open (m.path, false, &err);
  fs = open_fs (io, 0);
  ck_assert_int_eq (cfs_lookup (fs, 1, "big", &a), 0);
  cfs_fs_abandon (fs);
  cfs_close (io, &err);
  inode_at (m.path, a.ino, &blk, &off);
  fd = open (m.path, O_RDWR);
  ck_assert_int_eq (
      pread (fd, slot, sizeof slot, (off_t)(blk * CFS_BLOCK + off)),
      (ssize_t)sizeof slot);
  next = cfs_get64 (slot + 72);
  ck_assert_uint_ne (next, 0); /* it does continue */
  inode_at (m.path, next, &blk, &off);
  memset (slot, 0xA5, sizeof slot);
  ck_assert_int_eq (
      pwrite (fd, slot, sizeof slot, (off_t)(blk * CFS_BLOCK + off)),
      (ssize_t)sizeof slot);
  close (fd);
  r = check (m.path, CFS_CHECK_NO, true);
  ck_assert_uint_eq (r.exit, CFS_EXIT_UNCORRECTED);
  repair_converges (m.path, true);
  io = cfs_open (m.path, false, &err);
  fs = open_fs (io, 0);
  ck_assert_int_eq (cfs_lookup (fs, 1, "big", &a), 0);
  ck_assert_uint_lt (a.size, 40 << 20); /* cut where it broke */
  cfs_fs_abandon (fs);
  cfs_close (io, &err);
  img_cleanup (&m);
}
END_TEST

/* Two files written a block each in turn, so each has 40 one-block
 * extents and its map a CHKE leaf: the absolute block of fragA's leaf,
 * and its inode.
 */
static uint64_t
fragment (const char *path, uint64_t *ino)
{
  struct cfs_err err;
  struct cfs_io *io = cfs_open (path, true, &err);
  struct cfs_fs *fs = open_fs (io, CFS_OPEN_WRITE);
  struct cfs_attr a, b;
  char blk[CFS_BLOCK];
  uint64_t leaf;

  ck_assert_int_eq (cfs_create (fs, 1, "fragA", 0100644, 0, 0, &a), 0);
  ck_assert_int_eq (cfs_create (fs, 1, "fragB", 0100644, 0, 0, &b), 0);
  for (int i = 0; i < 40; i++) {
    memset (blk, 'a' + i % 26, sizeof blk);
    ck_assert_int_eq (cfs_pwrite (fs, a.ino, blk, CFS_BLOCK, i * CFS_BLOCK),
                      CFS_BLOCK);
    memset (blk, 'A' + i % 26, sizeof blk);
    ck_assert_int_eq (cfs_pwrite (fs, b.ino, blk, CFS_BLOCK, i * CFS_BLOCK),
                      CFS_BLOCK);
  }
  ck_assert_int_eq (cfs_locate (fs, a.ino, CFS_AT_EXTENT, &leaf), 0);
  ck_assert_int_eq (cfs_getattr (fs, a.ino, &a), 0);
  ck_assert_uint_eq (a.blocks, 41); /* 40 data blocks and the leaf */
  ck_assert_msg (cfs_fs_close (fs, &err) == 0, "%s", err.msg);
  cfs_close (io, &err);
  *ino = a.ino;
  return leaf;
}

/* An extent leaf (CHKE) damaged: -f finds it, -y cuts the file's map
 * there (its blocks freed by the bitmap rebuild), the second run is
 * clean; an incremental check does not read the clean chunk.
 */
START_TEST (test_extent_block)
{
  struct img m;
  struct cfs_check_result r;
  uint64_t ino, leaf;

  build (&m, 5);
  leaf = fragment (m.path, &ino);
  corrupt (m.path, leaf, 100, 0x10);
  r = check (m.path, CFS_CHECK_NO, false);
  ck_assert_uint_eq (r.exit, 0);
  r = check (m.path, CFS_CHECK_NO, true);
  ck_assert_uint_eq (r.exit, CFS_EXIT_UNCORRECTED);
  repair_converges (m.path, true);
  img_cleanup (&m);
}
END_TEST

/* A sound-looking leaf (checksum sealed again) whose 20th extent claims
 * fragB's block, then one whose extents go backwards: each found, a map
 * cut at the bad extent, the second run clean, fragA's first 19 blocks
 * intact (and, going backwards, the rest gone).
 */
START_TEST (test_extent_bad)
{
  for (int how = 0; how < 2; how++) {
    struct img m;
    struct cfs_check_result r;
    struct cfs_err err;
    struct cfs_io *io;
    struct cfs_fs *fs;
    unsigned char blk[CFS_BLOCK];
    struct cfs_extent e;
    uint64_t ino, leaf;
    int fd;

    build (&m, 6 + (uint64_t)how);
    leaf = fragment (m.path, &ino);
    fd = open (m.path, O_RDWR);
    ck_assert_int_eq (pread (fd, blk, CFS_BLOCK, (off_t)(leaf * CFS_BLOCK)),
                      CFS_BLOCK);
    cfs_ext_get (blk + CFS_EXT_START + 12 * 19, &e);
    if (how == 0)
      e.start++; /* fragB's block: claimed twice */
    else
      e.lblk = 3; /* before the extent ahead of it */
    cfs_ext_put (blk + CFS_EXT_START + 12 * 19, &e);
    cfs_meta_seal (uuid_a, blk);
    ck_assert_int_eq (pwrite (fd, blk, CFS_BLOCK, (off_t)(leaf * CFS_BLOCK)),
                      CFS_BLOCK);
    close (fd);
    r = check (m.path, CFS_CHECK_NO, true);
    ck_assert_uint_eq (r.exit, CFS_EXIT_UNCORRECTED);
    repair_converges (m.path, true);
    io = cfs_open (m.path, false, &err);
    fs = open_fs (io, 0);
    for (int i = 0; i < 40; i++) {
      char got[CFS_BLOCK];
      ck_assert_int_eq (cfs_pread (fs, ino, got, CFS_BLOCK, i * CFS_BLOCK),
                        CFS_BLOCK);
      /* Claimed twice: the inode checked second loses it (either). */
      if (i < 19 || how == 1)
        ck_assert_int_eq (got[0], i < 19 ? 'a' + i % 26 : 0);
    }
    cfs_fs_abandon (fs);
    cfs_close (io, &err);
    img_cleanup (&m);
  }
}
END_TEST

/* Metadata blocks hit at random (bits flipped, blocks zeroed or filled
 * with garbage):
 * whatever the damage, -y repairs it and a second check is clean.
 */
START_TEST (test_random_damage)
{
  struct img m;
  uint64_t seed = 77;
  int round;

  build (&m, 4);
  for (round = 0; round < 150; round++) {
    struct cfs_err err;
    struct cfs_io *io = cfs_open (m.path, false, &err);
    unsigned char blk[CFS_BLOCK];
    struct cfs_super s;
    struct cfs_geometry g;
    uint32_t c, local;
    int hits = 1 + (int)(rnd (&seed) % 3), h;

    ck_assert_int_eq (cfs_read (io, 0, 1, blk, &err), 0);
    ck_assert_int_eq (cfs_super_decode (blk, &s, &err), 0);
    cfs_geometry (&s, &g);
    cfs_close (io, &err);
    for (h = 0; h < hits; h++) {
      uint64_t block;
      int how = (int)(rnd (&seed) % 8);
      c = (uint32_t)(rnd (&seed) % 8);
      /* Metadata: header, bitmaps, inode table, or an early data block
       * (directories, extent leaves and back-references live there);
       * now and then the superblock or the dirty map.
       */
      local = (uint32_t)(rnd (&seed) % (g.first_data + 64));
      block =
          how == 7 ? rnd (&seed) % CFS_FIRST_CHUNK : cfs_block (&s, c, local);
      if (how < 5)
        corrupt (m.path, block, (uint32_t)(rnd (&seed) % CFS_BLOCK),
                 (uint8_t)(1u << rnd (&seed) % 8));
      else {
        unsigned char junk[CFS_BLOCK];
        int fd = open (m.path, O_RDWR);
        for (size_t b = 0; b < sizeof junk; b++)
          junk[b] = how == 5 ? 0 : (unsigned char)rnd (&seed);
        ck_assert_int_eq (
            pwrite (fd, junk, sizeof junk, (off_t)(block * CFS_BLOCK)),
            CFS_BLOCK);
        close (fd);
      }
    }
    repair_converges (m.path, true);
  }
  img_cleanup (&m);
}
END_TEST

/* cfs_file_runs: what it gives is where the file's bytes are. */
struct runs {
  int fd;
  uint64_t blocks, next, calls;
  struct cfs_fs *fs;
  uint64_t ino;
};

static int
one_run (void *opaque, uint64_t lblk, uint64_t abs, uint64_t count)
{
  struct runs *x = opaque;
  char dev[CFS_BLOCK], file[CFS_BLOCK];
  uint64_t k;

  ck_assert_uint_ge (lblk, x->next); /* in file order, not overlapping */
  ck_assert_uint_gt (count, 0);
  for (k = 0; k < count; k++) {
    ck_assert_int_eq (
        pread (x->fd, dev, sizeof dev, (off_t)((abs + k) * CFS_BLOCK)),
        CFS_BLOCK);
    memset (file, 0, sizeof file);
    ck_assert_int_ge (
        cfs_pread (x->fs, x->ino, file, sizeof file, (lblk + k) * CFS_BLOCK),
        1);
    ck_assert_msg (memcmp (dev, file, sizeof dev) == 0,
                   "file block %llu is not at device block %llu",
                   (unsigned long long)(lblk + k),
                   (unsigned long long)(abs + k));
  }
  x->next = lblk + count;
  x->blocks += count;
  x->calls++;
  return 0;
}

static struct runs
runs_of (struct cfs_fs *fs, int fd, const char *dir, const char *name)
{
  struct runs x = {.fd = fd, .fs = fs};
  struct cfs_attr a;
  uint64_t at = 1;

  if (dir) {
    ck_assert_int_eq (cfs_lookup (fs, 1, dir, &a), 0);
    at = a.ino;
  }
  ck_assert_int_eq (cfs_lookup (fs, at, name, &a), 0);
  x.ino = a.ino;
  ck_assert_int_eq (cfs_file_runs (fs, a.ino, one_run, &x), 0);
  return x;
}

static int
stop_run (void *opaque, uint64_t lblk, uint64_t abs, uint64_t count)
{
  (void)lblk, (void)abs, (void)count;
  ++*(int *)opaque;
  return 7;
}

START_TEST (test_file_runs)
{
  struct img m;
  struct cfs_err err;
  struct cfs_io *io;
  struct cfs_fs *fs;
  struct cfs_attr a;
  struct runs x;
  int fd, calls = 0;

  build (&m, 1);
  io = cfs_open (m.path, false, &err);
  ck_assert_msg (io != NULL, "%s", err.msg);
  fs = open_fs (io, 0);
  fd = open (m.path, O_RDONLY);
  ck_assert_int_ge (fd, 0);
  /* 40 MiB over 16 MiB chunks: continuations in other chunks, so more
   * than one run, and every block found.
   */
  x = runs_of (fs, fd, NULL, "big");
  ck_assert_uint_eq (x.blocks, (40 << 20) / CFS_BLOCK);
  ck_assert_uint_gt (x.calls, 2);
  /* One byte at 100 MiB: one block, the hole before it left out. */
  x = runs_of (fs, fd, "dir2", "sparse");
  ck_assert_uint_eq (x.blocks, 1);
  ck_assert_uint_eq (x.next, (100 << 20) / CFS_BLOCK + 1);
  /* An inline symlink has no data blocks; a stop is passed back. */
  x = runs_of (fs, fd, "dir0", "sym");
  ck_assert_uint_eq (x.blocks, 0);
  ck_assert_int_eq (cfs_lookup (fs, 1, "big", &a), 0);
  ck_assert_int_eq (cfs_file_runs (fs, a.ino, stop_run, &calls), 7);
  ck_assert_int_eq (calls, 1);
  close (fd);
  cfs_fs_abandon (fs);
  ck_assert_int_eq (cfs_close (io, &err), 0);
  img_cleanup (&m);
}
END_TEST

/* Block `block` of the image, changed by fn, sealed again (a valid but
 * wrong block, as a lost or stale write leaves).
 */
static void
reseal (const char *path, uint64_t block, void (*fn) (unsigned char *blk))
{
  unsigned char blk[CFS_BLOCK];
  int fd = open (path, O_RDWR);

  ck_assert_int_ge (fd, 0);
  ck_assert_int_eq (pread (fd, blk, sizeof blk, (off_t)(block * CFS_BLOCK)),
                    CFS_BLOCK);
  fn (blk);
  cfs_meta_seal (uuid_a, blk);
  ck_assert_int_eq (pwrite (fd, blk, sizeof blk, (off_t)(block * CFS_BLOCK)),
                    CFS_BLOCK);
  close (fd);
}

static uint32_t stale_chunk;

/* A chunk never initialised (its header all zero). */
static uint32_t
uninitialised (const char *path, const struct cfs_super *s)
{
  unsigned char blk[CFS_BLOCK], zero[CFS_BLOCK] = {0};
  int fd = open (path, O_RDONLY);
  uint32_t c;

  ck_assert_int_ge (fd, 0);
  for (c = s->chunks - 1; c > 0; c--) {
    ck_assert_int_eq (
        pread (fd, blk, sizeof blk, (off_t)(cfs_block (s, c, 0) * CFS_BLOCK)),
        CFS_BLOCK);
    if (memcmp (blk, zero, sizeof blk) == 0)
      break;
  }
  close (fd);
  ck_assert_uint_gt (c, 0);
  return c;
}

static void
clear_stale_bit (unsigned char *blk)
{
  blk[CFS_HEADER_SIZE + stale_chunk / 8] &=
      (unsigned char)~(1u << stale_chunk % 8);
}

/* A chunk other than 0 that holds one of build's top directories. */
static uint32_t
dir_chunk (struct cfs_fs *fs)
{
  struct cfs_attr a;
  uint32_t c = 0;
  int i;

  for (i = 0; i < 6 && c == 0; i++) {
    char name[16];
    snprintf (name, sizeof name, "dir%d", i);
    ck_assert_int_eq (cfs_lookup (fs, 1, name, &a), 0);
    c = (uint32_t)(a.ino >> 32);
  }
  ck_assert_uint_gt (c, 0);
  return c;
}

/* The initialised-chunks map: -f reads no chunk whose bit is clear; a
 * map block that does not check is rebuilt from the headers; a valid map
 * that calls a chunk in use uninitialised (a lost write of the map) is
 * found when a reference leads into the chunk, which is then checked
 * after all; -y leaves a map that checks clean.
 */
START_TEST (test_init_map)
{
  struct img m;
  struct cfs_check_result r;
  struct cfs_super s;
  struct cfs_geometry g;
  struct cfs_err err;
  struct cfs_io *io;
  struct cfs_fs *fs;
  uint64_t imap, uninit;
  uint32_t inuse;

  /* 1 GiB: more chunks than the mount initialises in one batch. */
  build_sized (&m, 1, 1 << 30);
  io = cfs_open (m.path, false, &err);
  fs = open_fs (io, 0);
  s = *cfs_fs_super (fs);
  stale_chunk = dir_chunk (fs);
  cfs_fs_abandon (fs);
  cfs_close (io, &err);
  cfs_geometry (&s, &g);
  imap = cfs_initmap_block (&s);
  r = check (m.path, CFS_CHECK_NO, true);
  ck_assert_uint_eq (r.problems, 0);
  inuse = r.checked;
  ck_assert_uint_lt (inuse, s.chunks); /* some never initialised */

  /* Garbage where an uninitialised chunk's header would be: never read
   * (then the zeros back).
   */
  uninit = cfs_block (&s, uninitialised (m.path, &s), 0);
  corrupt (m.path, uninit, 100, 0xff);
  r = check (m.path, CFS_CHECK_NO, true);
  ck_assert_msg (r.problems == 0 && r.checked == inuse,
                 "%llu problems, %u checked", (unsigned long long)r.problems,
                 r.checked);
  corrupt (m.path, uninit, 100, 0xff);

  /* A map block that does not check: every header it covers is read,
   * the map rebuilt.
   */
  corrupt (m.path, imap, 40, 0x10);
  r = check (m.path, CFS_CHECK_NO, true);
  ck_assert_uint_eq (r.problems, 1);
  ck_assert_uint_eq (r.checked, inuse);
  repair_converges (m.path, true);

  /* The incremental check rebuilds it whole too (all its headers). */
  corrupt (m.path, imap, 40, 0x10);
  r = check (m.path, CFS_CHECK_YES, false);
  ck_assert_uint_eq (r.problems, 1);
  ck_assert_uint_eq (r.checked, 0); /* nothing dirty: none checked */
  r = check (m.path, CFS_CHECK_NO, true);
  ck_assert_msg (r.problems == 0 && r.checked == inuse,
                 "%llu problems, %u of %u checked",
                 (unsigned long long)r.problems, r.checked, inuse);

  /* Stale but valid: the chunk is named from chunk 0's root, so the
   * full check finds it, and checks it: damage there is found too.
   */
  reseal (m.path, imap, clear_stale_bit);
  corrupt (m.path, cfs_block (&s, stale_chunk, g.block_bitmap), 60, 0x01);
  r = check (m.path, CFS_CHECK_NO, true);
  ck_assert_msg (r.problems >= 2 && r.checked == inuse,
                 "%llu problems, %u of %u checked",
                 (unsigned long long)r.problems, r.checked, inuse);
  repair_converges (m.path, true);
  /* The incremental check meets the same through a dirty chunk. */
  reseal (m.path, imap, clear_stale_bit);
  r = check (m.path, CFS_CHECK_NO, false);
  ck_assert_uint_eq (r.checked, 0); /* nothing dirty: nothing to read */
  repair_converges (m.path, true);
  img_cleanup (&m);
}
END_TEST

/* Chunk c's header, read and decoded (with the superblock s). */
static struct cfs_chunk_header
header_of (const char *path, const struct cfs_super *s, uint32_t c)
{
  unsigned char blk[CFS_BLOCK];
  struct cfs_chunk_header h;
  struct cfs_err err;
  int fd = open (path, O_RDONLY);

  ck_assert_int_ge (fd, 0);
  ck_assert_int_eq (
      pread (fd, blk, sizeof blk, (off_t)(cfs_block (s, c, 0) * CFS_BLOCK)),
      CFS_BLOCK);
  close (fd);
  ck_assert_msg (cfs_header_decode (blk, s->uuid, c, &h, &err) == 0, "%s",
                 err.msg);
  return h;
}

static void
put_header (const char *path, const struct cfs_super *s,
            const struct cfs_chunk_header *h)
{
  unsigned char blk[CFS_BLOCK];
  int fd = open (path, O_RDWR);

  ck_assert_int_ge (fd, 0);
  cfs_header_encode (h, blk);
  ck_assert_int_eq (pwrite (fd, blk, sizeof blk,
                            (off_t)(cfs_block (s, h->index, 0) * CFS_BLOCK)),
                    CFS_BLOCK);
  close (fd);
}

/* The inode-table mark: the mount raises it a step at a time as slots
 * are used (and never below the highest); a mark below an inode in use
 * or past the table is found by -f, whatever else it reads, and raised
 * or clamped by -y.
 */
START_TEST (test_itable_mark)
{
  struct img m;
  struct cfs_check_result r;
  struct cfs_chunk_header h;
  struct cfs_super s;
  struct cfs_err err;
  struct cfs_io *io;
  struct cfs_fs *fs;
  struct cfs_attr d, a;
  uint32_t c, high = 0;
  char name[16], *text;

  build (&m, 3);
  io = cfs_open (m.path, true, &err);
  fs = open_fs (io, CFS_OPEN_WRITE);
  s = *cfs_fs_super (fs);
  ck_assert (s.features & CFS_FEATURE_ITABLE_MARK);
  ck_assert_int_eq (cfs_mkdir (fs, 1, "many", 0755, 0, 0, &d), 0);
  c = (uint32_t)(d.ino >> 32);
  for (int i = 0; i < 150; i++) {
    snprintf (name, sizeof name, "n%d", i);
    ck_assert_int_eq (cfs_create (fs, d.ino, name, 0100644, 0, 0, &a), 0);
    if ((uint32_t)(a.ino >> 32) == c && (uint32_t)a.ino > high)
      high = (uint32_t)a.ino;
  }
  ck_assert_int_eq (cfs_fs_close (fs, &err), 0);
  cfs_close (io, &err);
  ck_assert_uint_gt (high, CFS_MARK_STEP);
  h = header_of (m.path, &s, c);
  ck_assert_uint_eq (h.itable_mark % CFS_MARK_STEP, 0);
  ck_assert_uint_gt (h.itable_mark, high);
  ck_assert_uint_le (h.itable_mark, high + CFS_MARK_STEP);
  r = check (m.path, CFS_CHECK_NO, true);
  ck_assert_uint_eq (r.problems, 0);

  /* Too low: the inodes past it are still read, and still named. */
  h.itable_mark = CFS_MARK_STEP;
  put_header (m.path, &s, &h);
  r = img_check (m.path, CFS_CHECK_NO, &text);
  ck_assert_msg (r.problems == 1 && strstr (text, "[010004]"), "%s", text);
  free (text);
  repair_converges (m.path, true);
  ck_assert_uint_gt (header_of (m.path, &s, c).itable_mark, high);

  /* Past the table. */
  h = header_of (m.path, &s, c);
  h.itable_mark = s.inodes_per_chunk + 7;
  put_header (m.path, &s, &h);
  r = img_check (m.path, CFS_CHECK_NO, &text);
  ck_assert_msg (r.problems == 1 && strstr (text, "[010003]"), "%s", text);
  free (text);
  repair_converges (m.path, true);
  ck_assert_uint_eq (header_of (m.path, &s, c).itable_mark, s.inodes_per_chunk);
  img_cleanup (&m);
}
END_TEST

/* Every chunk's dirty-map bit set. */
static void
set_first_bits (unsigned char *blk)
{
  memset (blk + CFS_HEADER_SIZE, 0xff, 8);
}

/* A chunk header that cannot be read: each read of it costs the drive's
 * error recovery (minutes), so the checker reads it at most twice (once
 * in a request with its neighbours, once alone to know which block
 * failed) and remembers it, whatever refers to the chunk, until -y
 * rewrites it; the repair then converges.
 */
START_TEST (test_unreadable_once)
{
  struct img m;
  struct cfs_super s;
  struct cfs_err err;
  struct cfs_io *io;
  struct cfs_fs *fs;
  struct cfs_test_faults f = {.bad = true};
  struct cfs_check_opts o = {.progress_fd = -1, .name = "t"};
  struct cfs_check_result r;

  build (&m, 4);
  io = cfs_open (m.path, false, &err);
  fs = open_fs (io, 0);
  s = *cfs_fs_super (fs);
  f.bad_block = cfs_block (&s, dir_chunk (fs), 0);
  cfs_fs_abandon (fs);
  cfs_close (io, &err);
  for (int full = 0; full < 2; full++) {
    o.mode = CFS_CHECK_NO;
    o.full = full;
    if (!full) /* the incremental check reads it when it is dirty */
      reseal (m.path, CFS_MAP_BLOCK, set_first_bits);
    io = cfs_test_io (cfs_open (m.path, false, &err), &f);
    cfs_check (io, &o, &r);
    ck_assert_uint_gt (r.problems, 0);
    ck_assert_uint_ge (cfs_test_io_bad_reads (io), 1);
    ck_assert_uint_le (cfs_test_io_bad_reads (io), 2);
    cfs_close (io, &err);
  }
  o.mode = CFS_CHECK_YES;
  io = cfs_test_io (cfs_open (m.path, true, &err), &f);
  cfs_check (io, &o, &r);
  ck_assert_uint_le (cfs_test_io_bad_reads (io), 2);
  cfs_close (io, &err);
  repair_converges (m.path, true);
  img_cleanup (&m);
}
END_TEST

static void
drop_last_backref (unsigned char *blk)
{
  cfs_put32 (blk + CFS_HEADER_SIZE, cfs_get32 (blk + CFS_HEADER_SIZE) - 1);
}

/* The block's first record again at its end (a table block has room for
 * 254).
 */
static void
repeat_first_backref (unsigned char *blk)
{
  uint32_t n = cfs_get32 (blk + CFS_HEADER_SIZE);

  ck_assert_uint_lt (n, 254);
  memcpy (blk + CFS_HEADER_SIZE + 4 + 16 * n, blk + CFS_HEADER_SIZE + 4, 16);
  cfs_put32 (blk + CFS_HEADER_SIZE, n + 1);
}

/* 600 names in dir0 for inodes of one other chunk, made in dir1: that
 * chunk, whose back-reference table now takes three blocks or more.
 */
static uint32_t
names_into_one_chunk (const char *path, struct cfs_super *s)
{
  struct cfs_err err;
  struct cfs_io *io = cfs_open (path, true, &err);
  struct cfs_fs *fs = open_fs (io, CFS_OPEN_WRITE);
  struct cfs_attr from, to, a, l;
  uint32_t tc = 0;
  int i, linked;

  *s = *cfs_fs_super (fs);
  ck_assert_int_eq (cfs_lookup (fs, 1, "dir0", &from), 0);
  ck_assert_int_eq (cfs_lookup (fs, 1, "dir1", &to), 0);
  /* New inodes go to the directory's chunk until it is full: the links
   * are made to those of the first one's chunk only.
   */
  for (i = 0, linked = 0; linked < 600 && i < 4000; i++) {
    char name[16];
    snprintf (name, sizeof name, "t%d", i);
    ck_assert_int_eq (cfs_create (fs, to.ino, name, 0100644, 0, 0, &a), 0);
    if (tc == 0)
      tc = (uint32_t)(a.ino >> 32);
    if (a.ino >> 32 != tc || tc == from.ino >> 32)
      continue;
    snprintf (name, sizeof name, "l%d", i);
    ck_assert_int_eq (cfs_link (fs, a.ino, from.ino, name, &l), 0);
    linked++;
  }
  ck_assert_int_eq (linked, 600);
  ck_assert_msg (cfs_fs_close (fs, &err) == 0, "%s", err.msg);
  cfs_close (io, &err);
  return tc;
}

/* Every name into a chunk with a table of several blocks is found in
 * it, whichever block holds it; a record missing from the last block is
 * found, as are a record twice and a middle block that does not check;
 * -y leaves a table that checks clean.
 */
START_TEST (test_backref_table)
{
  struct img m;
  struct cfs_super s;
  struct cfs_chunk_header h;
  struct cfs_check_result r;
  uint32_t tc;
  char *text;

  build (&m, 3);
  tc = names_into_one_chunk (m.path, &s);
  h = header_of (m.path, &s, tc);
  ck_assert_uint_ge (h.backref_blocks, 3);
  r = check (m.path, CFS_CHECK_NO, true);
  ck_assert_msg (r.exit == 0 && r.problems == 0, "exit %u, %llu problems",
                 r.exit, (unsigned long long)r.problems);

  reseal (m.path, cfs_block (&s, tc, h.backref_block + h.backref_blocks - 1),
          drop_last_backref);
  r = check (m.path, CFS_CHECK_NO, true);
  ck_assert_uint_eq (r.exit, CFS_EXIT_UNCORRECTED);
  repair_converges (m.path, true);

  /* A record twice: the second copy is stale, and only it. */
  h = header_of (m.path, &s, tc);
  reseal (m.path, cfs_block (&s, tc, h.backref_block + h.backref_blocks - 1),
          repeat_first_backref);
  r = img_check (m.path, CFS_CHECK_NO, &text);
  ck_assert_msg (r.exit == CFS_EXIT_UNCORRECTED && r.problems == 1 &&
                     strstr (text, "[040001]"),
                 "%s", text);
  free (text);
  repair_converges (m.path, true);

  h = header_of (m.path, &s, tc);
  corrupt (m.path, cfs_block (&s, tc, h.backref_block + 1), 100, 0x20);
  r = check (m.path, CFS_CHECK_NO, true);
  ck_assert_uint_eq (r.exit, CFS_EXIT_UNCORRECTED);
  repair_converges (m.path, true);
  img_cleanup (&m);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"problem_table", test_problem_table},
      {"clean", test_clean},
      {"crash", test_crash},
      {"bad_inode", test_bad_inode},
      {"broken_chain", test_broken_chain},
      {"random_damage", test_random_damage},
      {"file_runs", test_file_runs},
      {"init_map", test_init_map},
      {"extent_block", test_extent_block},
      {"extent_bad", test_extent_bad},
      {"itable_mark", test_itable_mark},
      {"unreadable_once", test_unreadable_once},
      {"backref_table", test_backref_table},
  };

  return fd_check_main ("fsck", cases, sizeof cases / sizeof cases[0]);
}
