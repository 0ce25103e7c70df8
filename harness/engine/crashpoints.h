/* futuredisk — harness: the populate's write log replayed: a sweep of
 * crash points (futuredisk run --crash-points).
 *
 * The populate runs once, on a disk whose plugin logs every write, flush
 * and zero with its data (writelog=) and a mark as each durability
 * promise is made.  The disk is then rebuilt from the log as it stood at
 * chosen flushes - the states a power cut there leaves - and, for every
 * third point, with a seeded subset of the writes after that flush in a
 * seeded order (what a volatile cache may have made durable before the
 * power went, dm-log-writes' and CrashMonkey's idea).  Each state is
 * checked, repaired and audited against the promises made by then,
 * without populating again.  The write faults that read the same log
 * are storefault.h's.
 */
#ifndef FUTUREDISK_CRASHPOINTS_H
#define FUTUREDISK_CRASHPOINTS_H

#include <stdint.h>

#include "faultmodels/error.h"

struct trial;

/* The write log's name in the trial directory. */
#define FD_WRITELOG_NAME "writes.log"

/* Run the sweep for t (populated with the write log, cut): t->r->points,
 * npoints and the log's figures.  0, or -1 with err.
 */
extern int fd_crash_points (struct trial *t, struct fm_err *err);

#endif
