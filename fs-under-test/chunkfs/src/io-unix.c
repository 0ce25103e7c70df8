/* chunkfs — the unix I/O manager: a file or a block device. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io-internal.h"

struct unix_io {
  struct cfs_io io;
  int fd;
  uint64_t blocks;
  char *path;
};

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
  u->blocks = bytes / CFS_BLOCK;
  return &u->io;
}

static int
unix_read (struct cfs_io *io, uint64_t block, uint32_t count, void *buf,
           struct cfs_err *err)
{
  struct unix_io *u = (struct unix_io *)io;
  size_t len = (size_t)count * CFS_BLOCK, done = 0;

  while (done < len) {
    ssize_t r = pread (u->fd, (char *)buf + done, len - done,
                       (off_t)(block * CFS_BLOCK + done));
    if (r == -1 && errno == EINTR)
      continue;
    if (r <= 0) {
      cfs_errno (err, r == 0 ? EIO : errno, "read block %llu",
                 (unsigned long long)(block + done / CFS_BLOCK));
      return -1;
    }
    done += (size_t)r;
  }
  return 0;
}

static int
unix_write (struct cfs_io *io, uint64_t block, uint32_t count, const void *buf,
            bool fua, struct cfs_err *err)
{
  struct unix_io *u = (struct unix_io *)io;
  size_t len = (size_t)count * CFS_BLOCK, done = 0;

  while (done < len) {
    ssize_t r = pwrite (u->fd, (const char *)buf + done, len - done,
                        (off_t)(block * CFS_BLOCK + done));
    if (r == -1 && errno == EINTR)
      continue;
    if (r <= 0) {
      cfs_errno (err, r == 0 ? EIO : errno, "write block %llu",
                 (unsigned long long)(block + done / CFS_BLOCK));
      return -1;
    }
    done += (size_t)r;
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
