/* chunkfs — the nbd I/O manager: an NBD export through libnbd, so the
 * tools work on an emulated disk without privileges or a kernel module.
 */
#include <errno.h>
#include <libnbd.h>
#include <stdio.h>
#include <stdlib.h>

#include "io-internal.h"

struct nbd_io {
  struct cfs_io io;
  struct nbd_handle *nbd;
  uint64_t blocks;
  bool fua; /* the server takes FUA */
};

static void
nbd_fail (struct cfs_err *err, const char *what, unsigned long long block)
{
  cfs_fail (err, "%s block %llu: %s", what, block,
            nbd_get_error () ? nbd_get_error () : "unknown error");
}

static struct cfs_io *
nbd_open (const char *where, bool writable, struct cfs_err *err)
{
  struct nbd_io *n = calloc (1, sizeof *n);
  int64_t size;

  if (n == NULL) {
    cfs_errno (err, ENOMEM, "%s", where);
    return NULL;
  }
  n->io.m = &cfs_nbd_io;
  if ((n->nbd = nbd_create ()) == NULL ||
      nbd_connect_uri (n->nbd, where) == -1) {
    cfs_fail (err, "%s: %s", where, nbd_get_error ());
    nbd_close (n->nbd);
    free (n);
    return NULL;
  }
  if ((size = nbd_get_size (n->nbd)) < 0 ||
      (writable && nbd_is_read_only (n->nbd) == 1)) {
    cfs_fail (err, "%s: %s", where,
              size < 0 ? nbd_get_error () : "the export is read-only");
    nbd_close (n->nbd);
    free (n);
    return NULL;
  }
  n->blocks = (uint64_t)size / CFS_BLOCK;
  n->fua = nbd_can_fua (n->nbd) == 1;
  return &n->io;
}

static int
nbd_io_read (struct cfs_io *io, uint64_t block, uint32_t count, void *buf,
             struct cfs_err *err)
{
  struct nbd_io *n = (struct nbd_io *)io;

  if (nbd_pread (n->nbd, buf, (size_t)count * CFS_BLOCK, block * CFS_BLOCK,
                 0) == -1) {
    nbd_fail (err, "read", (unsigned long long)block);
    return -1;
  }
  return 0;
}

static int
nbd_io_write (struct cfs_io *io, uint64_t block, uint32_t count,
              const void *buf, bool fua, struct cfs_err *err)
{
  struct nbd_io *n = (struct nbd_io *)io;

  if (nbd_pwrite (n->nbd, buf, (size_t)count * CFS_BLOCK, block * CFS_BLOCK,
                  fua && n->fua ? LIBNBD_CMD_FLAG_FUA : 0) == -1 ||
      (fua && !n->fua && nbd_flush (n->nbd, 0) == -1)) {
    nbd_fail (err, "write", (unsigned long long)block);
    return -1;
  }
  return 0;
}

static int
nbd_io_flush (struct cfs_io *io, struct cfs_err *err)
{
  struct nbd_io *n = (struct nbd_io *)io;

  if (nbd_flush (n->nbd, 0) == -1) {
    nbd_fail (err, "flush", 0);
    return -1;
  }
  return 0;
}

static int
nbd_io_zero (struct cfs_io *io, uint64_t block, uint32_t count,
             struct cfs_err *err)
{
  struct nbd_io *n = (struct nbd_io *)io;

  if (nbd_zero (n->nbd, (uint64_t)count * CFS_BLOCK, block * CFS_BLOCK, 0) ==
      -1) {
    nbd_fail (err, "zero", (unsigned long long)block);
    return -1;
  }
  return 0;
}

static uint64_t
nbd_io_blocks (struct cfs_io *io)
{
  return ((struct nbd_io *)io)->blocks;
}

static int
nbd_io_close (struct cfs_io *io, struct cfs_err *err)
{
  struct nbd_io *n = (struct nbd_io *)io;
  int r = nbd_shutdown (n->nbd, 0);

  if (r == -1)
    cfs_fail (err, "close: %s", nbd_get_error ());
  nbd_close (n->nbd);
  free (n);
  return r;
}

const struct cfs_io_manager cfs_nbd_io = {
    .name = "nbd",
    .open = nbd_open,
    .read = nbd_io_read,
    .write = nbd_io_write,
    .flush = nbd_io_flush,
    .zero = nbd_io_zero,
    .blocks = nbd_io_blocks,
    .close = nbd_io_close,
};
