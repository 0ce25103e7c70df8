/* futuredisk — nbdplugin: persistent sparse store in a file (store=FILE).
 *
 * Layout: a 4 KiB header, then the disk's bytes at file offset
 * 4096 + disk offset.  The file is as sparse as the disk: unwritten ranges
 * are holes (ftruncate), zeroed ranges are punched, and extents come from
 * SEEK_DATA / SEEK_HOLE.  The header records the disk size and profile so
 * that a restart with other parameters is refused instead of serving a
 * disk whose contents no longer mean what they meant.
 *
 * A disk larger than 8 TiB continues in FILE.1, FILE.2, ... (8 TiB of disk
 * each, no header): ext4 refuses files beyond 16 TiB, and the 20 and 24 TB
 * disks the project is about must fit on it.  Such a store is version 2;
 * one of 8 TiB or less is the single file of version 1, as before.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errmsg.h"
#include "store.h"

#define HEADER_SIZE  4096
#define MAGIC        "futuredisk-store"
#define VERSION      1 /* one file */
#define VERSION_SEG  2 /* FILE, FILE.1, ...: more than SEGMENT bytes */
#define SEGMENT      (UINT64_C (1) << 43) /* disk bytes per file */
#define MAX_SEGMENTS 64                   /* 512 TiB */

struct header {
  char magic[16];   /* MAGIC, not NUL-terminated */
  uint32_t version; /* VERSION, little-endian like the rest */
  uint32_t header_size;
  uint64_t size;    /* disk bytes */
  char profile[64]; /* profile name, NUL-padded */
};

struct filestore {
  struct store s;
  int fd[MAX_SEGMENTS];
  size_t nseg;
  char path[256];
};

/* The file holding disk offset `offset`, where in it, and how many of
 * count bytes lie in it.
 */
static int
span (const struct filestore *f, uint64_t offset, uint64_t count, off_t *at,
      uint64_t *n)
{
  uint64_t k = offset / SEGMENT, in = offset % SEGMENT;

  *at = (off_t)((k == 0 ? HEADER_SIZE : 0) + in);
  *n = SEGMENT - in < count ? SEGMENT - in : count;
  return f->fd[k < f->nseg ? k : f->nseg - 1];
}

static int
fail (struct store *s, const char *what)
{
  int e = errno;
  struct filestore *f = (struct filestore *)s;

  snprintf (s->err.msg, sizeof s->err.msg, "%s: %s: %s", f->path, what,
            fd_strerror (e));
  errno = e;
  return -1;
}

static int
file_read (struct store *s, void *buf, uint64_t count, uint64_t offset)
{
  struct filestore *f = (struct filestore *)s;
  char *p = buf;

  while (count > 0) {
    off_t at;
    uint64_t n;
    int fd = span (f, offset, count, &at, &n);
    ssize_t r = pread (fd, p, n, at);
    if (r == -1) {
      if (errno == EINTR)
        continue;
      return fail (s, "read");
    }
    if (r == 0) { /* past the end: a short file reads as zeros */
      memset (p, 0, n);
      r = (ssize_t)n;
    }
    p += r;
    offset += r;
    count -= r;
  }
  return 0;
}

static int
file_write (struct store *s, const void *buf, uint64_t count, uint64_t offset)
{
  struct filestore *f = (struct filestore *)s;
  const char *p = buf;

  while (count > 0) {
    off_t at;
    uint64_t n;
    int fd = span (f, offset, count, &at, &n);
    ssize_t r = pwrite (fd, p, n, at);
    if (r == -1) {
      if (errno == EINTR)
        continue;
      return fail (s, "write");
    }
    p += r;
    offset += r;
    count -= r;
  }
  return 0;
}

static int
file_zero (struct store *s, uint64_t count, uint64_t offset, bool punch)
{
  struct filestore *f = (struct filestore *)s;
  static const char zeros[STORE_PAGE];
  int mode = punch ? FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
                   : FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE;

  uint64_t o = offset, c = count;

  while (c > 0) {
    off_t at;
    uint64_t n;
    int fd = span (f, o, c, &at, &n);
    if (fallocate (fd, mode, at, (off_t)n) == -1)
      break;
    o += n;
    c -= n;
  }
  if (c == 0)
    return 0;
  if (errno != EOPNOTSUPP)
    return fail (s, punch ? "punch hole" : "zero range");
  /* A file system that cannot do it in place: write the zeros. */
  while (count > 0) {
    uint64_t n = count < sizeof zeros ? count : sizeof zeros;
    if (file_write (s, zeros, n, offset) == -1)
      return -1;
    offset += n;
    count -= n;
  }
  return 0;
}

static int
file_flush (struct store *s)
{
  struct filestore *f = (struct filestore *)s;
  size_t k;

  for (k = 0; k < f->nseg; k++)
    if (fdatasync (f->fd[k]) == -1)
      return fail (s, "fdatasync");
  return 0;
}

static int
file_extents (struct store *s, uint64_t count, uint64_t offset,
              store_extent_fn *fn, void *opaque)
{
  struct filestore *f = (struct filestore *)s;
  uint64_t end = offset + count;

  while (offset < end) {
    off_t at, data;
    uint64_t n, next, stop, base;
    int fd = span (f, offset, end - offset, &at, &n);
    bool hole;
    int rc;

    /* Within this file: disk offset = file offset - base. */
    base = (uint64_t)at - offset;
    stop = offset + n;
    data = lseek (fd, at, SEEK_DATA);
    if (data == -1 && errno != ENXIO)
      return fail (s, "lseek SEEK_DATA");
    if (data == -1 || (uint64_t)data - base >= stop) {
      next = stop;
      hole = true;
    } else if (data > at) {
      next = (uint64_t)data - base;
      hole = true;
    } else {
      off_t h = lseek (fd, at, SEEK_HOLE);
      if (h == -1)
        return fail (s, "lseek SEEK_HOLE");
      next = (uint64_t)h - base;
      hole = false;
    }
    if (next > stop)
      next = stop;
    if (next > end)
      next = end;
    rc = fn (opaque, offset, next - offset, hole);
    if (rc != 0)
      return rc < 0 ? -1 : 0;
    offset = next;
  }
  return 0;
}

static uint64_t
file_bytes_stored (struct store *s)
{
  struct filestore *f = (struct filestore *)s;
  uint64_t bytes = 0;
  struct stat st;
  size_t k;

  for (k = 0; k < f->nseg; k++)
    if (fstat (f->fd[k], &st) == 0)
      bytes += (uint64_t)st.st_blocks * 512;
  return bytes;
}

static void
file_close (struct store *s)
{
  struct filestore *f = (struct filestore *)s;
  size_t k;

  for (k = 0; k < f->nseg; k++)
    close (f->fd[k]);
  free (f);
}

static const struct store_ops file_ops = {
    .name = "file",
    .read = file_read,
    .write = file_write,
    .zero = file_zero,
    .flush = file_flush,
    .extents = file_extents,
    .bytes_stored = file_bytes_stored,
    .close = file_close,
};

/* Open (creating: truncate) the files after the first: FILE.1, ... */
static int
open_segments (struct filestore *f, uint64_t size, bool create,
               struct fm_err *err)
{
  size_t k;

  for (k = 1; k < f->nseg; k++) {
    char seg[sizeof f->path + 24];
    uint64_t len = size - k * SEGMENT < SEGMENT ? size - k * SEGMENT : SEGMENT;

    snprintf (seg, sizeof seg, "%s.%zu", f->path, k);
    f->fd[k] =
        open (seg, O_RDWR | O_CLOEXEC | (create ? O_CREAT | O_TRUNC : 0), 0600);
    if (f->fd[k] == -1 || (create && ftruncate (f->fd[k], (off_t)len) == -1)) {
      return fm_fail (err, "store: %s: %s%s", seg, fd_strerror (errno),
                      create ? "" : " (a part of the store is missing)");
    }
  }
  return 0;
}

/* A new store file: its header, and room for the first segment. */
static int
create_store (struct filestore *f, const char *path, uint64_t size,
              const char *profile, struct fm_err *err)
{
  struct header h;

  memset (&h, 0, sizeof h);
  memcpy (h.magic, MAGIC, sizeof h.magic);
  h.version = f->nseg > 1 ? VERSION_SEG : VERSION;
  h.header_size = HEADER_SIZE;
  h.size = size;
  snprintf (h.profile, sizeof h.profile, "%s", profile);
  if (pwrite (f->fd[0], &h, sizeof h, 0) != (ssize_t)sizeof h ||
      ftruncate (f->fd[0], (off_t)(HEADER_SIZE +
                                   (size < SEGMENT ? size : SEGMENT))) == -1)
    return fm_fail (err, "store: %s: creating: %s", path, fd_strerror (errno));
  return open_segments (f, size, true, err);
}

/* An existing store file: refuse it unless it is ours, of a version we
 * read, and made for this disk (size and profile).
 */
static int
check_store (struct filestore *f, const char *path, uint64_t size,
             const char *profile, struct fm_err *err)
{
  struct header h;
  ssize_t r;

  r = pread (f->fd[0], &h, sizeof h, 0);
  if (r != (ssize_t)sizeof h || memcmp (h.magic, MAGIC, sizeof h.magic))
    return fm_fail (err,
                    "store: %s is not a futuredisk store (bad header); "
                    "refusing to overwrite it",
                    path);
  if ((h.version != VERSION && h.version != VERSION_SEG) ||
      h.header_size != HEADER_SIZE)
    return fm_fail (
        err, "store: %s has format version %u, this plugin reads %u and %u",
        path, h.version, VERSION, VERSION_SEG);
  h.profile[sizeof h.profile - 1] = '\0';
  if (h.size != size)
    return fm_fail (err,
                    "store: %s holds a %llu-byte disk, but size is %llu "
                    "bytes; use the size it was made with or another file",
                    path, (unsigned long long)h.size, (unsigned long long)size);
  if (strcmp (h.profile, profile) != 0)
    return fm_fail (err,
                    "store: %s was made with profile %s, not %s; use the "
                    "profile it was made with or another file",
                    path, h.profile, profile);
  /* A single-file store of more than 8 TiB (made on a file system that
   * allowed it, by a plugin before version 2): its layout differs.
   */
  if (h.version != (f->nseg > 1 ? VERSION_SEG : VERSION))
    return fm_fail (err,
                    "store: %s is a version %u store of a %llu-byte disk; "
                    "make it again",
                    path, h.version, (unsigned long long)size);
  return open_segments (f, size, false, err);
}

struct store *
store_file_open (const char *path, uint64_t size, const char *profile,
                 struct fm_err *err)
{
  struct filestore *f;
  struct stat st;
  size_t k;

  f = calloc (1, sizeof *f);
  if (f == NULL) {
    fm_fail (err, "out of memory");
    return NULL;
  }
  snprintf (f->path, sizeof f->path, "%s", path);
  f->s.ops = &file_ops;
  f->s.size = size;
  f->nseg = size > SEGMENT ? (size + SEGMENT - 1) / SEGMENT : 1;
  for (k = 0; k < MAX_SEGMENTS; k++)
    f->fd[k] = -1;
  if (f->nseg > MAX_SEGMENTS) {
    fm_fail (err,
             "store: a %llu-byte disk is more than a store file holds "
             "(%d x 8 TiB)",
             (unsigned long long)size, MAX_SEGMENTS);
    goto fail;
  }
  f->fd[0] = open (path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (f->fd[0] == -1 || fstat (f->fd[0], &st) == -1) {
    fm_fail (err, "store: %s: %s", path, fd_strerror (errno));
    goto fail;
  }
  if ((st.st_size == 0 ? create_store (f, path, size, profile, err)
                       : check_store (f, path, size, profile, err)) == -1)
    goto fail;
  return &f->s;

fail:
  for (k = 0; k < MAX_SEGMENTS; k++)
    if (f->fd[k] >= 0)
      close (f->fd[k]);
  free (f);
  return NULL;
}
