/* futuredisk — common: the write log, every command that changes a disk
 * in the order the disk served it (what dm-log-writes records below a
 * real file system).  The plugin writes it (writelog=FILE); the harness
 * reads it to rebuild the disk as it was at any flush, or with any subset
 * of the writes a volatile cache held then (futuredisk run --crash-points).
 *
 * Format: records, each a 32-byte little-endian header -- kind (u32),
 * flags (u32), offset (u64), length (u64), sequence number (u64) --
 * followed for a write by its `length` bytes of data and for a mark by
 * its name (`length` bytes).  A file starts with one record of kind
 * FD_WLOG_MAGIC whose offset is the disk's size.
 */
#ifndef FUTUREDISK_WRITELOG_H
#define FUTUREDISK_WRITELOG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "faultmodels/error.h"

enum fd_wlog_kind {
  FD_WLOG_MAGIC = 0x474f4c57, /* "WLOG" */
  FD_WLOG_WRITE = 1,
  FD_WLOG_FLUSH = 2,
  FD_WLOG_ZERO = 3, /* trim or write zeroes: reads as zeros after */
  FD_WLOG_MARK = 4  /* a name the control socket's `mark` set here */
};

#define FD_WLOG_FUA 1u /* a write with FUA: durable when acknowledged */

struct fd_wlog_rec {
  uint32_t kind, flags;
  uint64_t offset, length, seq;
};

/* ---- writing (the plugin) ---- */

struct fd_wlog;

extern struct fd_wlog *fd_wlog_create (const char *path, uint64_t disk_size,
                                       struct fm_err *err);
/* Append one record (data: a write's bytes or a mark's name, else NULL).
 * -1 with err if the file cannot take it.
 */
extern int fd_wlog_append (struct fd_wlog *w, enum fd_wlog_kind kind,
                           uint32_t flags, uint64_t offset, uint64_t length,
                           const void *data, struct fm_err *err);
extern int fd_wlog_close (struct fd_wlog *w, struct fm_err *err);

/* ---- reading (the harness) ---- */

/* The next record of fp into r; its data (a write's, a mark's name) is
 * left unread at *data_at (the file offset), to seek to when needed.  1,
 * 0 at the end, -1 with err for a short or bad record.
 */
extern int fd_wlog_next (FILE *fp, struct fd_wlog_rec *r, long *data_at,
                         struct fm_err *err);

#endif
