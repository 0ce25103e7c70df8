/* futuredisk — harness: the populate's write log (common/writelog.h)
 * read back whole, for the sweep of crash points and the write faults:
 * every write, zero and flush with where its data is, the flushes that
 * made the writes before them durable, and the promises marked by then.
 */
#ifndef FUTUREDISK_WLOG_H
#define FUTUREDISK_WLOG_H

#include <stdint.h>
#include <stdio.h>

#include "faultmodels/error.h"

/* The plugin's store file: a 4 KiB header, then the disk's bytes. */
#define STORE_HEADER 4096
#define CHUNK        (1u << 20)

/* A record of the log.  A flush's promises are those marked before the
 * next flush: the fsync behind a promise flushed before the mark was
 * written, so the last flush before a mark is the one that made it good,
 * even when other writes (writeback, a log tail) came between.  Owing it
 * to the next flush instead would let the last point owe less than the
 * workload promised whenever only unflushed writes followed the mark.
 */
struct fd_wlog_entry {
  uint32_t kind, flags;
  uint64_t offset, length, promises;
  long data_at;
};

struct fd_wlog {
  FILE *fp;
  struct fd_wlog_entry *v;
  size_t n, cap;
  size_t *flushes; /* records after which the writes before are durable */
  size_t nflushes;
  uint64_t promises; /* marked so far (after load, in all) */
  uint64_t disk_size;
  unsigned char *buf; /* CHUNK bytes */
};

/* Read the log at path into l (zeroed first).  -1 with err. */
extern int fd_wlog_load (const char *path, struct fd_wlog *l,
                         struct fm_err *err);

/* Free what fd_wlog_load allocated (after a failure too). */
extern void fd_wlog_free (struct fd_wlog *l);

#endif
