/* futuredisk — harness: the populate's write log replayed: a sweep of
 * crash points (futuredisk run --crash-points), and writes undone for the
 * targets of the write faults (lost, misdirected, torn).
 *
 * The populate runs once, on a disk whose plugin logs every write, flush
 * and zero with its data (writelog=) and a mark as each durability
 * promise is made.  The disk is then rebuilt from the log as it stood at
 * chosen flushes - the states a power cut there leaves - and, for every
 * third point, with a seeded subset of the writes after that flush in a
 * seeded order (what a volatile cache may have made durable before the
 * power went, dm-log-writes' and CrashMonkey's idea).  Each state is
 * checked, repaired and audited against the promises made by then,
 * without populating again.
 */
#ifndef FUTUREDISK_CRASHPOINTS_H
#define FUTUREDISK_CRASHPOINTS_H

#include <stdbool.h>
#include <stdint.h>

#include "faultmodels/error.h"

struct trial;

/* The write log's name in the trial directory. */
#define FD_WRITELOG_NAME "writes.log"

/* Run the sweep for t (populated with the write log, cut): t->points,
 * t->npoints and the log's figures.  0, or -1 with err.
 */
extern int fd_crash_points (struct trial *t, struct fm_err *err);

/* Is kind (a --target KIND) a fault of a write as it was made? */
extern bool fd_write_fault_kind (const char *kind);

/* Does a --target of this kind edit the store file in place (a write
 * fault, a garbled stripe)?  Such a trial needs a disk of its own: in a
 * copy-on-write clone the file is the overlay, not the disk.
 */
extern bool fd_target_edits_store (const char *kind);

/* A write fault of the disk range [offset, offset+length) (a block of
 * the populated file system): the last write the log has to it is
 * undone there - lost (the range holds what it held before), torn (a
 * seeded prefix of its 512-byte pieces made it, the rest is as before)
 * or misdirected (as lost, and its bytes landed a seeded 1-16 blocks
 * away) - in t->store, with the disk detached or idle.  Logged in the
 * populate's fault log, whose format the attribution reads; seed picks
 * the tear and the landing.  -1 with err (no write to the range, say).
 */
extern int fd_write_fault (const struct trial *t, const char *kind,
                           uint64_t offset, uint64_t length, uint64_t seed,
                           struct fm_err *err);

/* RAID-level corruption (--target TYPE:N:stripe): [offset,
 * offset+length) of the disk in t->store (cut at the disk's end)
 * overwritten with bytes from seed, as a controller that garbles a
 * whole stripe leaves it, or (from not FD_GARBLE_SEEDED) with a copy of
 * the disk's bytes at from, as a misplaced or stale chunk leaves it:
 * plausible metadata from the wrong place.  Logged in the populate's
 * fault log as kind "stripe" with detail.  The disk detached or idle.
 * -1 with err.
 */
#define FD_GARBLE_SEEDED UINT64_MAX
extern int fd_garble (const struct trial *t, uint64_t offset, uint64_t length,
                      uint64_t seed, uint64_t from, const char *detail,
                      struct fm_err *err);

#endif
