/* futuredisk — nbdplugin: persistent sparse store in a file (store=FILE).
 *
 * Layout: a 4 KiB header, then the disk's bytes at file offset
 * 4096 + disk offset.  The file is as sparse as the disk: unwritten ranges
 * are holes (ftruncate), zeroed ranges are punched, and extents are the
 * file's allocated ranges (FIEMAP; SEEK_DATA / SEEK_HOLE where the file
 * system has no FIEMAP).  The header records the disk size and profile so
 * that a restart with other parameters is refused instead of serving a
 * disk whose contents no longer mean what they meant.
 *
 * A disk larger than 8 TiB continues in FILE.1, FILE.2, ... (8 TiB of disk
 * each, no header): ext4 refuses files beyond 16 TiB, and the 20 and 24 TB
 * disks the project is about must fit on it.  Such a store is version 2;
 * one of 8 TiB or less is the single file of version 1, as before.
 *
 * Version 3 is a copy-on-write overlay of another store, its base
 * (store=FILE base=BASE, store-cow.c): the same layout, but the header
 * names the base, and a bitmap after the first file's data says which
 * pages the overlay holds; the others are read from the base.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "errmsg.h"
#include "store.h"

#define HEADER_SIZE  4096
#define MAGIC        "futuredisk-store"
#define VERSION      1 /* one file */
#define VERSION_SEG  2 /* FILE, FILE.1, ...: more than SEGMENT bytes */
#define VERSION_COW  3 /* an overlay of a base store, one or more files */
#define SEGMENT      (UINT64_C (1) << 43) /* disk bytes per file */
#define MAX_SEGMENTS 64                   /* 512 TiB */

struct header {
  char magic[16];   /* MAGIC, not NUL-terminated */
  uint32_t version; /* VERSION, little-endian like the rest */
  uint32_t header_size;
  uint64_t size;    /* disk bytes */
  char profile[64]; /* profile name, NUL-padded */
  /* VERSION_COW only: the base, and its file as the overlay found it */
  uint64_t base_bytes;   /* st_size */
  int64_t base_mtime_ns; /* st_mtim */
  char base[2048];       /* absolute path, NUL-terminated */
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

/* The allocated runs of [at, stop) in fd, file offsets, from FIEMAP: an
 * unwritten extent (what a zero without punch leaves on ext4) is data,
 * whether or not its pages are cached, where SEEK_DATA's answer depends
 * on the page cache.  1 if the file system has no FIEMAP (tmpfs).
 */
static int
fiemap_runs (int fd, uint64_t at, uint64_t stop, uint64_t base,
             struct store_join *j)
{
  union {
    struct fiemap m;
    char room[sizeof (struct fiemap) + 64 * sizeof (struct fiemap_extent)];
  } u;
  uint64_t pos = at;
  unsigned i;

  while (pos < stop && j->rc == 0) {
    memset (&u.m, 0, sizeof u.m);
    u.m.fm_start = pos;
    u.m.fm_length = stop - pos;
    u.m.fm_extent_count = 64;
    if (ioctl (fd, FS_IOC_FIEMAP, &u.m) == -1)
      return errno == EOPNOTSUPP || errno == ENOTTY ? 1 : -1;
    for (i = 0; i < u.m.fm_mapped_extents && j->rc == 0; i++) {
      const struct fiemap_extent *e = &u.m.fm_extents[i];
      uint64_t from = e->fe_logical > pos ? e->fe_logical : pos;
      uint64_t to = e->fe_logical + e->fe_length;

      to = to < stop ? to : stop;
      if (from > pos)
        store_join_extent (j, pos - base, from - pos, true);
      if (to > from && j->rc == 0)
        store_join_extent (j, from - base, to - from, false);
      pos = to > pos ? to : pos;
    }
    if (u.m.fm_mapped_extents == 0 ||
        (u.m.fm_extents[u.m.fm_mapped_extents - 1].fe_flags &
         FIEMAP_EXTENT_LAST)) {
      if (pos < stop && j->rc == 0)
        store_join_extent (j, pos - base, stop - pos, true);
      pos = stop;
    }
  }
  return 0;
}

/* The same from SEEK_DATA and SEEK_HOLE, where there is no FIEMAP. */
static int
seek_runs (int fd, uint64_t at, uint64_t stop, uint64_t base,
           struct store_join *j)
{
  uint64_t pos = at;

  while (pos < stop && j->rc == 0) {
    off_t data = lseek (fd, (off_t)pos, SEEK_DATA), h;

    if (data == -1 && errno != ENXIO)
      return -1;
    if (data == -1 || (uint64_t)data >= stop) {
      store_join_extent (j, pos - base, stop - pos, true);
      return 0;
    }
    if ((uint64_t)data > pos) {
      store_join_extent (j, pos - base, (uint64_t)data - pos, true);
      pos = (uint64_t)data;
      continue;
    }
    if ((h = lseek (fd, (off_t)pos, SEEK_HOLE)) == -1)
      return -1;
    h = (uint64_t)h < stop ? h : (off_t)stop;
    store_join_extent (j, pos - base, (uint64_t)h - pos, false);
    pos = (uint64_t)h;
  }
  return 0;
}

static int
file_extents (struct store *s, uint64_t count, uint64_t offset,
              store_extent_fn *fn, void *opaque)
{
  struct filestore *f = (struct filestore *)s;
  struct store_join j = {.fn = fn, .opaque = opaque};
  uint64_t end = offset + count;

  while (offset < end && j.rc == 0) {
    off_t at;
    uint64_t n;
    int fd = span (f, offset, end - offset, &at, &n), r;

    /* Within this file: disk offset = file offset - (at - offset). */
    r = fiemap_runs (fd, (uint64_t)at, (uint64_t)at + n, (uint64_t)at - offset,
                     &j);
    if (r == 1)
      r = seek_runs (fd, (uint64_t)at, (uint64_t)at + n, (uint64_t)at - offset,
                     &j);
    if (r == -1)
      return fail (s, "extents");
    offset += n;
  }
  return store_join_end (&j);
}

/* The disk's bytes in data extents, not the file's st_blocks: a clone
 * (store-cow.c) must report what a store written the same way from
 * scratch reports, and st_blocks also counts the header and the file
 * system's own blocks, which depend on the history of the file.
 */
static uint64_t
file_bytes_stored (struct store *s)
{
  return store_data_bytes (s);
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

/* Open the files after the first, FILE.1, ...: with O_CREAT, made (and
 * truncated) to their share of the disk.
 */
static int
open_segments (struct filestore *f, uint64_t size, int flags,
               struct fm_err *err)
{
  bool create = flags & O_CREAT;
  size_t k;

  for (k = 1; k < f->nseg; k++) {
    char seg[sizeof f->path + 24];
    uint64_t len = size - k * SEGMENT < SEGMENT ? size - k * SEGMENT : SEGMENT;

    snprintf (seg, sizeof seg, "%s.%zu", f->path, k);
    f->fd[k] = open (seg, flags | O_CLOEXEC, 0600);
    if (f->fd[k] == -1 || (create && ftruncate (f->fd[k], (off_t)len) == -1)) {
      return fm_fail (err, "store: %s: %s%s", seg, fd_strerror (errno),
                      create ? "" : " (a part of the store is missing)");
    }
  }
  return 0;
}

/* Where in an overlay's first file its bitmap starts: the first page
 * after the header and the first segment.
 */
static uint64_t
cow_map_at (uint64_t size)
{
  uint64_t end = HEADER_SIZE + (size < SEGMENT ? size : SEGMENT);

  return (end + STORE_PAGE - 1) / STORE_PAGE * STORE_PAGE;
}

/* A new store file: its header, and room for the first segment (and an
 * overlay's bitmap after it).  cow: the overlay's header fields, or NULL
 * for a plain store.
 */
static int
create_store (struct filestore *f, const char *path, uint64_t size,
              const char *profile, const struct header *cow, struct fm_err *err)
{
  struct header h;
  uint64_t len = HEADER_SIZE + (size < SEGMENT ? size : SEGMENT);

  if (cow) {
    h = *cow;
    h.version = VERSION_COW;
    len = cow_map_at (size) + store_cow_map_len (size);
  } else {
    memset (&h, 0, sizeof h);
    h.version = f->nseg > 1 ? VERSION_SEG : VERSION;
  }
  memcpy (h.magic, MAGIC, sizeof h.magic);
  h.header_size = HEADER_SIZE;
  h.size = size;
  snprintf (h.profile, sizeof h.profile, "%s", profile);
  if (pwrite (f->fd[0], &h, sizeof h, 0) != (ssize_t)sizeof h ||
      ftruncate (f->fd[0], (off_t)len) == -1)
    return fm_fail (err, "store: %s: creating: %s", path, fd_strerror (errno));
  return open_segments (f, size, O_RDWR | O_CREAT | O_TRUNC, err);
}

/* The header of an existing store file: ours, of a version we read. */
static int
read_header (int fd, const char *path, struct header *h, struct fm_err *err)
{
  ssize_t r = pread (fd, h, sizeof *h, 0);

  if (r != (ssize_t)sizeof *h || memcmp (h->magic, MAGIC, sizeof h->magic))
    return fm_fail (err,
                    "store: %s is not a futuredisk store (bad header); "
                    "refusing to use it",
                    path);
  if ((h->version != VERSION && h->version != VERSION_SEG &&
       h->version != VERSION_COW) ||
      h->header_size != HEADER_SIZE)
    return fm_fail (
        err, "store: %s has format version %u, this plugin reads %u, %u and %u",
        path, h->version, VERSION, VERSION_SEG, VERSION_COW);
  h->profile[sizeof h->profile - 1] = '\0';
  h->base[sizeof h->base - 1] = '\0';
  return 0;
}

/* An existing store file: refuse it unless it is ours, of a version we
 * read, and made for this disk (size and profile).
 */
static int
check_store (struct filestore *f, const char *path, uint64_t size,
             const char *profile, int flags, struct header *h,
             struct fm_err *err)
{
  if (read_header (f->fd[0], path, h, err) == -1)
    return -1;
  if (h->size != size)
    return fm_fail (err,
                    "store: %s holds a %llu-byte disk, but size is %llu "
                    "bytes; use the size it was made with or another file",
                    path, (unsigned long long)h->size,
                    (unsigned long long)size);
  if (strcmp (h->profile, profile) != 0)
    return fm_fail (err,
                    "store: %s was made with profile %s, not %s; use the "
                    "profile it was made with or another file",
                    path, h->profile, profile);
  /* A single-file store of more than 8 TiB (made on a file system that
   * allowed it, by a plugin before version 2): its layout differs.
   */
  if (h->version != VERSION_COW &&
      h->version != (f->nseg > 1 ? VERSION_SEG : VERSION))
    return fm_fail (err,
                    "store: %s is a version %u store of a %llu-byte disk; "
                    "make it again",
                    path, h->version, (unsigned long long)size);
  return open_segments (f, size, flags, err);
}

static void
file_free (struct filestore *f)
{
  size_t k;

  for (k = 0; k < MAX_SEGMENTS; k++)
    if (f->fd[k] >= 0)
      close (f->fd[k]);
  free (f);
}

/* A filestore for path with no file open yet; NULL with err. */
static struct filestore *
file_new (const char *path, uint64_t size, struct fm_err *err)
{
  struct filestore *f;
  size_t k;

  if (strlen (path) >= sizeof f->path) {
    fm_fail (err, "store: %s: the path is longer than %zu bytes", path,
             sizeof f->path - 1);
    return NULL;
  }
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
    file_free (f);
    return NULL;
  }
  return f;
}

/* Is the base's file as it was when the overlay was made?  Writing to
 * a base changes what every overlay of it reads, silently.
 */
static int
same_base (const char *path, const struct header *h, struct fm_err *err)
{
  struct stat st;

  if (stat (h->base, &st) == -1)
    return fm_fail (err, "store: %s: the base %s: %s", path, h->base,
                    fd_strerror (errno));
  if ((uint64_t)st.st_size != h->base_bytes ||
      (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec !=
          h->base_mtime_ns)
    return fm_fail (err,
                    "store: the base %s changed (size or modification time) "
                    "since the overlay %s was made of it; make the overlay "
                    "again",
                    h->base, path);
  return 0;
}

/* Open a store: read-write (made if missing or empty), or a base: read
 * only, and plain (an overlay of an overlay is not supported).
 */
static struct store *
file_open (const char *path, uint64_t size, const char *profile, bool base,
           struct fm_err *err)
{
  struct filestore *f = file_new (path, size, err);
  struct store *b;
  struct header h;
  struct stat st;
  int flags = base ? O_RDONLY : O_RDWR;

  if (f == NULL)
    return NULL;
  f->fd[0] = open (path, flags | (base ? 0 : O_CREAT) | O_CLOEXEC, 0600);
  if (f->fd[0] == -1 || fstat (f->fd[0], &st) == -1) {
    fm_fail (err, "store: %s: %s", path, fd_strerror (errno));
    goto fail;
  }
  if (st.st_size == 0 && !base) {
    if (create_store (f, path, size, profile, NULL, err) == -1)
      goto fail;
    return &f->s;
  }
  if (check_store (f, path, size, profile, flags, &h, err) == -1)
    goto fail;
  if (h.version != VERSION_COW)
    return &f->s;
  if (base) {
    fm_fail (err, "store: the base %s is itself an overlay (of %s)", path,
             h.base);
    goto fail;
  }
  if (same_base (path, &h, err) == -1)
    goto fail;
  /* An overlay: this factory opens its base and builds the copy-on-write
   * store over both.
   */
  if ((b = file_open (h.base, size, profile, true, err)) == NULL) {
    file_close (&f->s);
    return NULL;
  }
  return store_cow_wrap (&f->s, f->fd[0], cow_map_at (size), b, err);

fail:
  file_free (f);
  return NULL;
}

struct store *
store_file_open (const char *path, uint64_t size, const char *profile,
                 struct fm_err *err)
{
  return file_open (path, size, profile, false, err);
}

struct store *
store_file_open_base (const char *path, uint64_t size, const char *profile,
                      struct fm_err *err)
{
  return file_open (path, size, profile, true, err);
}

/* An existing file given with base=: an overlay of that base, or an
 * error saying what it is instead.
 */
static int
check_overlay (int fd, const char *path, const char *base, struct fm_err *err)
{
  struct header h;

  if (read_header (fd, path, &h, err) == -1)
    return -1;
  if (h.version != VERSION_COW)
    return fm_fail (err,
                    "store: %s is a plain store, not an overlay; base=%s "
                    "needs a new file (or an overlay of that base)",
                    path, base);
  if (strcmp (h.base, base) != 0)
    return fm_fail (err, "store: %s is an overlay of %s, not of %s", path,
                    h.base, base);
  return 0;
}

int
store_file_make_overlay (const char *path, const char *base, uint64_t size,
                         const char *profile, struct fm_err *err)
{
  struct filestore *f;
  struct header h;
  struct store *b;
  struct stat st;
  int ret = -1;

  memset (&h, 0, sizeof h);
  if (strlen (base) >= sizeof h.base)
    return fm_fail (err, "store: base %s: the path is longer than %zu bytes",
                    base, sizeof h.base - 1);
  /* The base must be a plain store of this very disk. */
  if ((b = store_file_open_base (base, size, profile, err)) == NULL)
    return -1;
  b->ops->close (b);
  if ((f = file_new (path, size, err)) == NULL)
    return -1;
  f->fd[0] = open (path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (f->fd[0] == -1 || fstat (f->fd[0], &st) == -1)
    fm_fail (err, "store: %s: %s", path, fd_strerror (errno));
  else if (st.st_size != 0)
    ret = check_overlay (f->fd[0], path, base, err);
  else {
    snprintf (h.base, sizeof h.base, "%s", base);
    if (stat (base, &st) == 0) {
      h.base_bytes = (uint64_t)st.st_size;
      h.base_mtime_ns =
          (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
      ret = create_store (f, path, size, profile, &h, err);
    } else
      fm_fail (err, "store: base %s: %s", base, fd_strerror (errno));
  }
  file_free (f);
  return ret;
}
