/* futuredisk — nbdplugin: persistent sparse store in a file (store=FILE).
 *
 * Layout: a 4 KiB header, then the disk's bytes at file offset
 * 4096 + disk offset.  The file is as sparse as the disk: unwritten ranges
 * are holes (ftruncate), zeroed ranges are punched, and extents come from
 * SEEK_DATA / SEEK_HOLE.  The header records the disk size and profile so
 * that a restart with other parameters is refused instead of serving a
 * disk whose contents no longer mean what they meant.
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

#define HEADER_SIZE 4096
#define MAGIC       "futuredisk-store"
#define VERSION     1

struct header {
  char magic[16];   /* MAGIC, not NUL-terminated */
  uint32_t version; /* VERSION, little-endian like the rest */
  uint32_t header_size;
  uint64_t size;    /* disk bytes */
  char profile[64]; /* profile name, NUL-padded */
};

struct filestore {
  struct store s;
  int fd;
  char path[256];
};

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
    ssize_t r = pread (f->fd, p, count, HEADER_SIZE + offset);
    if (r == -1) {
      if (errno == EINTR)
        continue;
      return fail (s, "read");
    }
    if (r == 0) { /* past the end: a short file reads as zeros */
      memset (p, 0, count);
      return 0;
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
    ssize_t r = pwrite (f->fd, p, count, HEADER_SIZE + offset);
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

  if (fallocate (f->fd, mode, HEADER_SIZE + offset, count) == 0)
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

  if (fdatasync (f->fd) == -1)
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
    off_t data = lseek (f->fd, HEADER_SIZE + offset, SEEK_DATA);
    uint64_t next;
    bool hole;
    int rc;

    if (data == -1 && errno != ENXIO)
      return fail (s, "lseek SEEK_DATA");
    if (data == -1 || (uint64_t)data - HEADER_SIZE >= end) {
      next = end;
      hole = true;
    } else if ((uint64_t)data > HEADER_SIZE + offset) {
      next = data - HEADER_SIZE;
      hole = true;
    } else {
      off_t h = lseek (f->fd, HEADER_SIZE + offset, SEEK_HOLE);
      if (h == -1)
        return fail (s, "lseek SEEK_HOLE");
      next = (uint64_t)h - HEADER_SIZE;
      hole = false;
    }
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
  struct stat st;

  if (fstat (f->fd, &st) == -1)
    return 0;
  return (uint64_t)st.st_blocks * 512;
}

static void
file_close (struct store *s)
{
  struct filestore *f = (struct filestore *)s;

  close (f->fd);
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

struct store *
store_file_open (const char *path, uint64_t size, const char *profile,
                 struct fm_err *err)
{
  struct filestore *f;
  struct header h;
  struct stat st;
  ssize_t r;

  f = calloc (1, sizeof *f);
  if (f == NULL) {
    snprintf (err->msg, sizeof err->msg, "out of memory");
    return NULL;
  }
  snprintf (f->path, sizeof f->path, "%s", path);
  f->s.ops = &file_ops;
  f->s.size = size;
  f->fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (f->fd == -1 || fstat (f->fd, &st) == -1) {
    snprintf (err->msg, sizeof err->msg, "store: %s: %s", path,
              fd_strerror (errno));
    goto fail;
  }
  if (st.st_size == 0) {
    memset (&h, 0, sizeof h);
    memcpy (h.magic, MAGIC, sizeof h.magic);
    h.version = VERSION;
    h.header_size = HEADER_SIZE;
    h.size = size;
    snprintf (h.profile, sizeof h.profile, "%s", profile);
    if (pwrite (f->fd, &h, sizeof h, 0) != (ssize_t)sizeof h ||
        ftruncate (f->fd, HEADER_SIZE + size) == -1) {
      snprintf (err->msg, sizeof err->msg, "store: %s: creating: %s", path,
                fd_strerror (errno));
      goto fail;
    }
    return &f->s;
  }
  r = pread (f->fd, &h, sizeof h, 0);
  if (r != (ssize_t)sizeof h || memcmp (h.magic, MAGIC, sizeof h.magic)) {
    snprintf (err->msg, sizeof err->msg,
              "store: %s is not a futuredisk store (bad header); refusing "
              "to overwrite it",
              path);
    goto fail;
  }
  if (h.version != VERSION || h.header_size != HEADER_SIZE) {
    snprintf (err->msg, sizeof err->msg,
              "store: %s has format version %u, this plugin reads %u", path,
              h.version, VERSION);
    goto fail;
  }
  h.profile[sizeof h.profile - 1] = '\0';
  if (h.size != size) {
    snprintf (err->msg, sizeof err->msg,
              "store: %s holds a %llu-byte disk, but size is %llu bytes; "
              "use the size it was made with or another file",
              path, (unsigned long long)h.size, (unsigned long long)size);
    goto fail;
  }
  if (strcmp (h.profile, profile) != 0) {
    snprintf (err->msg, sizeof err->msg,
              "store: %s was made with profile %s, not %s; use the profile "
              "it was made with or another file",
              path, h.profile, profile);
    goto fail;
  }
  return &f->s;

fail:
  if (f->fd >= 0)
    close (f->fd);
  free (f);
  return NULL;
}
