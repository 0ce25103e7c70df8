/* chunkfs — the unix I/O manager: a file or a block device.
 *
 * A block device is opened O_DIRECT, as a kernel file system reads its
 * disk: through the device's page cache a read fails with the whole
 * folio the kernel read it in, and read-ahead makes that folio span
 * other files' blocks, so one bad sector made neighbouring files
 * unreadable too.  chunkfs keeps its own cache; the kernel's would only
 * hold a second copy.  An image file keeps the page cache (tests, mkfs
 * of an image), where no sector goes bad.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io-internal.h"

struct unix_io {
  struct cfs_io io;
  int fd;
  uint64_t blocks;
  bool direct; /* O_DIRECT: buffers, offsets and lengths block-aligned */
};

/* O_DIRECT moves a buffer not aligned to the block through a bounce
 * buffer of at most BOUNCE bytes, one per thread (the mount's request
 * threads read at once), freed when its thread ends.
 */
#define BOUNCE (1u << 20)
static pthread_key_t bounce_key;
static pthread_once_t bounce_once = PTHREAD_ONCE_INIT;

static void
bounce_key_make (void)
{
  if (pthread_key_create (&bounce_key, free) != 0)
    abort ();
}

static void *
bounce_buffer (void)
{
  void *b;

  pthread_once (&bounce_once, bounce_key_make);
  if ((b = pthread_getspecific (bounce_key)) != NULL)
    return b;
  if (posix_memalign (&b, CFS_BLOCK, BOUNCE) != 0)
    return NULL;
  if (pthread_setspecific (bounce_key, b) != 0) {
    free (b);
    return NULL;
  }
  return b;
}

static bool
aligned (const void *buf)
{
  return ((uintptr_t)buf & (CFS_BLOCK - 1)) == 0;
}

/* pread or pwrite all of [off, +len) from or to buf: 0, or an errno
 * (EIO for a short transfer) with *done the bytes moved before it.
 */
static int
transfer (struct unix_io *u, bool write, void *buf, size_t len, off_t off,
          size_t *done_out)
{
  size_t done = 0;

  while (done < len) {
    ssize_t r =
        write
            ? pwrite (u->fd, (char *)buf + done, len - done, off + (off_t)done)
            : pread (u->fd, (char *)buf + done, len - done, off + (off_t)done);
    if (r == -1 && errno == EINTR)
      continue;
    if (r <= 0) {
      *done_out = done;
      return r == 0 ? EIO : errno;
    }
    done += (size_t)r;
  }
  return 0;
}

/* transfer, through the bounce buffer when O_DIRECT needs it; on
 * failure *at is the block it failed at.
 */
static int
io_blocks (struct unix_io *u, bool write, void *buf, uint64_t block,
           uint32_t count, uint64_t *at)
{
  size_t len = (size_t)count * CFS_BLOCK, done, n, moved = 0;
  unsigned char *b;
  int e;

  if (!u->direct || aligned (buf)) {
    e = transfer (u, write, buf, len, (off_t)(block * CFS_BLOCK), &moved);
    *at = block + moved / CFS_BLOCK;
    return e;
  }
  *at = block;
  if ((b = bounce_buffer ()) == NULL)
    return ENOMEM;
  for (done = 0; done < len; done += n) {
    n = len - done < BOUNCE ? len - done : BOUNCE;
    if (write)
      memcpy (b, (char *)buf + done, n);
    if ((e = transfer (u, write, b, n, (off_t)(block * CFS_BLOCK + done),
                       &moved))) {
      *at = block + (done + moved) / CFS_BLOCK;
      return e;
    }
    if (!write)
      memcpy ((char *)buf + done, b, n);
  }
  return 0;
}

static struct cfs_io *
unix_open (const char *where, bool writable, struct cfs_err *err)
{
  struct unix_io *u = calloc (1, sizeof *u);
  struct stat st;
  uint64_t bytes;

  if (u == NULL) {
    cfs_errno (err, ENOMEM, "%s", where);
    return NULL;
  }
  u->io.m = &cfs_unix_io;
  u->fd = open (where, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
  if (u->fd == -1 || fstat (u->fd, &st) == -1) {
    cfs_errno (err, errno, "%s", where);
    if (u->fd != -1)
      close (u->fd);
    free (u);
    return NULL;
  }
  bytes = (uint64_t)st.st_size;
  if (S_ISBLK (st.st_mode) && ioctl (u->fd, BLKGETSIZE64, &bytes) == -1) {
    cfs_errno (err, errno, "%s: BLKGETSIZE64", where);
    close (u->fd);
    free (u);
    return NULL;
  }
  if (S_ISBLK (st.st_mode)) {
    int fl = fcntl (u->fd, F_GETFL);
    u->direct = fl != -1 && fcntl (u->fd, F_SETFL, fl | O_DIRECT) == 0;
  }
  u->blocks = bytes / CFS_BLOCK;
  return &u->io;
}

static int
unix_read (struct cfs_io *io, uint64_t block, uint32_t count, void *buf,
           struct cfs_err *err)
{
  uint64_t at;
  int e = io_blocks ((struct unix_io *)io, false, buf, block, count, &at);

  if (e) {
    cfs_errno (err, e, "read block %llu", (unsigned long long)at);
    return -1;
  }
  return 0;
}

static int
unix_write (struct cfs_io *io, uint64_t block, uint32_t count, const void *buf,
            bool fua, struct cfs_err *err)
{
  struct unix_io *u = (struct unix_io *)io;
  uint64_t at;
  int e = io_blocks (u, true, (void *)buf, block, count, &at);

  if (e) {
    cfs_errno (err, e, "write block %llu", (unsigned long long)at);
    return -1;
  }
  if (fua && fdatasync (u->fd) == -1) {
    cfs_errno (err, errno, "write block %llu: sync", (unsigned long long)block);
    return -1;
  }
  return 0;
}

static int
unix_flush (struct cfs_io *io, struct cfs_err *err)
{
  struct unix_io *u = (struct unix_io *)io;

  if (fdatasync (u->fd) == -1) {
    cfs_errno (err, errno, "flush");
    return -1;
  }
  return 0;
}

/* Punch a hole in a file, BLKZEROOUT a device, else write zeros. */
static int
unix_zero (struct cfs_io *io, uint64_t block, uint32_t count,
           struct cfs_err *err)
{
  struct unix_io *u = (struct unix_io *)io;
  uint64_t range[2] = {block * CFS_BLOCK, (uint64_t)count * CFS_BLOCK};
  static const char zeros[CFS_BLOCK];
  uint32_t i;

  if (fallocate (u->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                 (off_t)range[0], (off_t)range[1]) == 0 ||
      ioctl (u->fd, BLKZEROOUT, range) == 0)
    return 0;
  for (i = 0; i < count; i++)
    if (unix_write (io, block + i, 1, zeros, false, err) == -1)
      return -1;
  return 0;
}

static uint64_t
unix_blocks (struct cfs_io *io)
{
  return ((struct unix_io *)io)->blocks;
}

static int
unix_close (struct cfs_io *io, struct cfs_err *err)
{
  struct unix_io *u = (struct unix_io *)io;
  int r = close (u->fd);

  if (r == -1)
    cfs_errno (err, errno, "close");
  free (u);
  return r;
}

const struct cfs_io_manager cfs_unix_io = {
    .name = "unix",
    .open = unix_open,
    .read = unix_read,
    .write = unix_write,
    .flush = unix_flush,
    .zero = unix_zero,
    .blocks = unix_blocks,
    .close = unix_close,
};
