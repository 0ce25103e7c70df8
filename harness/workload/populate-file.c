/* futuredisk — harness: what a populated file holds and how it is
 * written (see populate-int.h); under both the mixed tree (populate.c)
 * and the other trees (trees.c).
 */
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <ftw.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "errmsg.h"
#include "faultmodels/rng.h"
#include "populate.h"
#include "populate-int.h"
#include "proc.h"

const char fd_block_magic[8] = {'F', 'D', 'B', 'L', 'O', 'C', 'K', '1'};

/* ---- contents ---- */

/* Block blk of file id: a 32-byte header, then bytes from the seed. */
void
fd_block_fill (unsigned char *b, uint64_t seed, uint64_t id, uint64_t blk)
{
  uint64_t h = fm_hash (seed, FM_STREAM_POPULATE, id, blk + 1000), gen = 1;
  size_t i;

  memcpy (b, fd_block_magic, 8);
  memcpy (b + 8, &id, 8);
  memcpy (b + 16, &blk, 8);
  memcpy (b + 24, &gen, 8);
  for (i = 32; i < FD_BLOCK; i += 8) {
    uint64_t w = fm_mix64 (h + i);
    memcpy (b + i, &w, 8);
  }
}

uint64_t
fd_populate_hash_bytes (uint64_t h, const unsigned char *p, size_t n)
{
  size_t i;

  for (i = 0; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy (&w, p + i, 8);
    h = fm_mix64 (h ^ w);
  }
  for (; i < n; i++)
    h = fm_mix64 (h ^ p[i]);
  return h;
}

/* ---- the tree ---- */

static double
unit (uint64_t seed, uint64_t i, uint64_t k)
{
  return fm_unit (fm_hash (seed, FM_STREAM_POPULATE, i, k));
}

/* File sizes: lognormal around 8 KiB (most files are small), and one in
 * ten from a Pareto tail above 256 KiB (most bytes are in big files).
 */
uint64_t
fd_populate_size (uint64_t seed, uint64_t i, uint64_t cap)
{
  double s;

  if (unit (seed, i, 1) < 0.9) {
    double z = sqrt (-2 * log (1 - unit (seed, i, 2))) *
               cos (2 * M_PI * unit (seed, i, 3));
    s = exp (log (8192) + 1.5 * z);
  } else
    s = 262144 * pow (1 - unit (seed, i, 4), -1 / 1.3);
  return s < (double)cap ? (uint64_t)s : cap;
}

int
fd_manifest_push (struct fd_manifest *m, const struct fd_entry *e)
{
  if (m->n == m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 256;
    struct fd_entry *v = realloc (m->v, cap * sizeof *v);
    if (v == NULL)
      return -1;
    m->v = v;
    m->cap = cap;
  }
  m->v[m->n++] = *e;
  return 0;
}

/* Create e's file at full, for writing. */
static int
create_file (const char *full, const struct fd_entry *e, struct fm_err *err)
{
  int fd = open (full, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, e->mode);

  if (fd == -1)
    fm_fail (err, "%s: %s", full, fd_strerror (errno));
  return fd;
}

bool
fd_populate_in_hole (const struct fd_entry *e, uint64_t off)
{
  return e->type == FD_SPARSE && off + FD_BLOCK <= e->size / 2;
}

/* Blocks one write takes at most: a FUSE file system without a page
 * cache (chunkfs) serves each write as a request, and 4 KiB writes made
 * its populate mostly round trips (10,008 writes for a 50 MB tree).
 */
#define WRITE_BLOCKS 256

/* e's content from byte `from` to its end, into fd: a write per run of
 * blocks outside the hole, WRITE_BLOCKS at most.
 */
int
fd_populate_write_range (int fd, const char *full, uint64_t seed,
                         const struct fd_entry *e, uint64_t from,
                         struct fm_err *err)
{
  unsigned char *buf = NULL;
  uint64_t off = from - from % FD_BLOCK, blocks;
  int rc = 0, en = 0;

  blocks = (e->size - off + FD_BLOCK - 1) / FD_BLOCK;
  if (off < e->size &&
      (buf = malloc ((blocks < WRITE_BLOCKS ? blocks : WRITE_BLOCKS) *
                     FD_BLOCK)) == NULL)
    return fm_fail (err, "%s: out of memory", full);
  while (rc == 0 && off < e->size) {
    uint64_t start = off, len = 0, skip;
    if (fd_populate_in_hole (e, off)) {
      off += FD_BLOCK;
      continue;
    }
    while (off < e->size && !fd_populate_in_hole (e, off) &&
           len < (uint64_t)WRITE_BLOCKS * FD_BLOCK) {
      size_t n = e->size - off < FD_BLOCK ? e->size - off : FD_BLOCK;
      fd_block_fill (buf + len, seed, e->id, off / FD_BLOCK);
      len += n;
      off += n;
    }
    skip = start < from ? from - start : 0;
    if (pwrite (fd, buf + skip, len - skip, (off_t)(start + skip)) !=
        (ssize_t)(len - skip)) {
      en = errno ? errno : ENOSPC; /* a short write: the disk is full */
      fm_fail (err, "%s: write: %s", full, fd_strerror (en));
      rc = -1;
    }
  }
  free (buf);
  if (rc == -1)
    errno = en; /* for a caller that stops at a full file system */
  return rc;
}

uint64_t
fd_populate_content_hash (uint64_t seed, const struct fd_entry *e)
{
  unsigned char b[FD_BLOCK];
  uint64_t off, h = 0;

  for (off = 0; off < e->size; off += FD_BLOCK) {
    size_t n = e->size - off < FD_BLOCK ? e->size - off : FD_BLOCK;
    if (fd_populate_in_hole (e, off))
      memset (b, 0, n);
    else
      fd_block_fill (b, seed, e->id, off / FD_BLOCK);
    h = fd_populate_hash_bytes (h, b, n);
  }
  return h;
}

int
fd_populate_sync_fd (int fd, enum fd_sync_how how)
{
  if (how == FD_FSYNC)
    return fsync (fd);
  if (how == FD_FDATASYNC)
    return fdatasync (fd);
  return 0;
}

int
fd_populate_write (const char *full, uint64_t seed, struct fd_entry *e,
                   enum fd_sync_how how, struct fm_err *err)
{
  int fd = create_file (full, e, err);

  if (fd == -1)
    return -1;
  if (fd_populate_write_range (fd, full, seed, e, 0, err) == -1)
    goto fail;
  if (e->type == FD_SPARSE && ftruncate (fd, (off_t)e->size) == -1) {
    fm_fail (err, "%s: %s", full, fd_strerror (errno));
    goto fail;
  }
  if (fd_populate_sync_fd (fd, how) == -1) {
    fm_fail (err, "%s: sync: %s", full, fd_strerror (errno));
    goto fail;
  }
  e->hash = fd_populate_content_hash (seed, e);
  if (close (fd) == -1) {
    return fm_fail (err, "%s: close: %s", full, fd_strerror (errno));
  }
  return 0;

fail:
  close (fd);
  return -1;
}

/* Allocate a file without writing it (metadata only); or where the
 * file system cannot (m->unallocated set), make it sparse at its size
 * and keep its inode number for the adapter to allocate unmounted.
 */
int
fd_populate_allocate (const char *full, struct fd_entry *e,
                      struct fd_manifest *m, struct fm_err *err)
{
  int fd = create_file (full, e, err), r = 0;
  struct stat st;

  if (fd == -1)
    return -1;
  if (m->deferred) {
    uint64_t *v = m->unallocated;
    if (m->nunallocated % 4096 == 0 &&
        (v = realloc (v, (m->nunallocated + 4096) * sizeof *v)) == NULL)
      r = ENOMEM;
    else if (ftruncate (fd, (off_t)e->size) == -1 || fstat (fd, &st) == -1)
      r = errno;
    else {
      m->unallocated = v;
      m->unallocated[m->nunallocated++] = (uint64_t)st.st_ino;
    }
  } else if (e->size) {
    r = posix_fallocate (fd, 0, (off_t)e->size);
  }
  close (fd);
  if (r != 0) {
    fm_fail (err, "%s: fallocate: %s", full, fd_strerror (r));
    errno = r; /* for a caller that stops at a full file system */
    return -1;
  }
  e->hash = 0; /* unwritten: reads as zeros */
  return 0;
}

int
fd_populate_create (const char *full, struct fd_entry *e, struct fm_err *err)
{
  int fd = create_file (full, e, err);

  if (fd == -1)
    return -1;
  close (fd);
  e->hash = 0; /* unwritten: reads as zeros */
  return 0;
}

int
fd_populate_fallocate (const char *full, const struct fd_entry *e,
                       struct fm_err *err)
{
  int fd = open (full, O_WRONLY | O_CLOEXEC), r;

  if (fd == -1)
    return fm_fail (err, "%s: %s", full, fd_strerror (errno));
  r = posix_fallocate (fd, 0, (off_t)e->size);
  close (fd);
  if (r != 0)
    return fm_fail (err, "%s: fallocate: %s", full, fd_strerror (r));
  return 0;
}

int
fd_populate_file (const char *full, uint64_t seed, struct fd_entry *e,
                  struct fd_manifest *m, struct fm_err *err)
{
  return m->meta_only ? fd_populate_allocate (full, e, m, err)
                      : fd_populate_write (full, seed, e, FD_NO_SYNC, err);
}

uint64_t
fd_writeback_batch (uint64_t fs_bytes)
{
  uint64_t b = fs_bytes / 64;

  return b > (256 << 20) ? 256 << 20 : b < (1 << 20) ? 1 << 20 : b;
}

int
fd_populate_writeback (const char *root, const struct fd_manifest *m,
                       struct fd_writeback *wb, bool all, struct fm_err *err)
{
  char full[4096];

  if (m->meta_only || (!all && m->bytes - wb->bytes < wb->batch))
    return 0;
  for (; wb->from < m->n; wb->from++) {
    const struct fd_entry *e = &m->v[wb->from];
    int fd, r;

    if ((e->type != FD_FILE && e->type != FD_SPARSE) || e->size == 0)
      continue;
    snprintf (full, sizeof full, "%s/%s", root, e->path);
    if ((fd = open (full, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
      return fm_fail (err, "%s: %s", full, fd_strerror (errno));
    r = sync_file_range (fd, 0, 0, SYNC_FILE_RANGE_WRITE);
    close (fd);
    if (r == -1)
      return fm_fail (err, "%s: sync_file_range: %s", full,
                      fd_strerror (errno));
  }
  wb->bytes = m->bytes;
  return 0;
}

/* Everything durable: syncfs(2) of the file system under root, and
 * fsync of the root directory, which is what reaches a FUSE file system
 * (a sync does not call into one).  Not sync(2): it waits on every file
 * system of the machine, so one trial's stuck disk would hold another's
 * populate (campaign jobs run side by side).
 */
void
fd_populate_sync (const char *root)
{
  int fd;

  if ((fd = open (root, O_RDONLY | O_DIRECTORY)) == -1) {
    sync (); /* cannot name it: all of them */
    return;
  }
  syncfs (fd);
  fsync (fd);
  close (fd);
}
