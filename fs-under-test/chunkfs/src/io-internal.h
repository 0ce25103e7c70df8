/* chunkfs — what every I/O channel starts with: its manager. */
#ifndef CHUNKFS_IO_INTERNAL_H
#define CHUNKFS_IO_INTERNAL_H

#include "chunkfs/io.h"

struct cfs_io {
  const struct cfs_io_manager *m;
};

/* err = "what: strerror(errnum)" */
extern void cfs_errno (struct cfs_err *err, int errnum, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

#endif
