/* chunkfs — dispatch through a channel's I/O manager (io.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "io-internal.h"

int
cfs_fail (struct cfs_err *err, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (err->msg, sizeof err->msg, fmt, ap);
  va_end (ap);
  return -1;
}

void
cfs_errno (struct cfs_err *err, int errnum, const char *fmt, ...)
{
  va_list ap;
  int n;

  va_start (ap, fmt);
  n = vsnprintf (err->msg, sizeof err->msg, fmt, ap);
  va_end (ap);
  if (n >= 0 && (size_t)n < sizeof err->msg)
    snprintf (err->msg + n, sizeof err->msg - n, ": %s", strerror (errnum));
}

const struct cfs_io_manager *
cfs_io_for (const char *where)
{
  static const char *const uris[] = {"nbd://", "nbds://", "nbd+unix://",
                                     "nbds+unix://"};
  size_t i;

  for (i = 0; i < sizeof uris / sizeof uris[0]; i++)
    if (strncmp (where, uris[i], strlen (uris[i])) == 0)
      return &cfs_nbd_io;
  return &cfs_unix_io;
}

struct cfs_io *
cfs_open (const char *where, bool writable, struct cfs_err *err)
{
  return cfs_io_for (where)->open (where, writable, err);
}

int
cfs_read (struct cfs_io *io, uint64_t block, uint32_t count, void *buf,
          struct cfs_err *err)
{
  return io->m->read (io, block, count, buf, err);
}

int
cfs_write (struct cfs_io *io, uint64_t block, uint32_t count, const void *buf,
           bool fua, struct cfs_err *err)
{
  return io->m->write (io, block, count, buf, fua, err);
}

int
cfs_flush (struct cfs_io *io, struct cfs_err *err)
{
  return io->m->flush (io, err);
}

int
cfs_zero (struct cfs_io *io, uint64_t block, uint32_t count,
          struct cfs_err *err)
{
  return io->m->zero (io, block, count, err);
}

int
cfs_write_behind (struct cfs_io *io, size_t bytes, struct cfs_err *err)
{
  return io->m->write_behind ? io->m->write_behind (io, bytes, err) : 0;
}

uint64_t
cfs_blocks (struct cfs_io *io)
{
  return io->m->blocks (io);
}

int
cfs_close (struct cfs_io *io, struct cfs_err *err)
{
  return io ? io->m->close (io, err) : 0;
}
