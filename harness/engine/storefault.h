/* futuredisk — harness: faults put in a trial's store file with the
 * disk detached or idle: writes undone for the targets of the write
 * faults (lost, misdirected, torn) from the populate's write log, and
 * RAID-level corruption of whole stripes.
 */
#ifndef FUTUREDISK_STOREFAULT_H
#define FUTUREDISK_STOREFAULT_H

#include <stdint.h>

#include "faultmodels/error.h"

struct trial_spec;

/* A write fault of the disk range [offset, offset+length) (a block of
 * the populated file system): the last write the log has to it is
 * undone there - lost (the range holds what it held before), torn (a
 * seeded prefix of its 512-byte pieces made it, the rest is as before)
 * or misdirected (as lost, and its bytes landed a seeded 1-16 blocks
 * away) - in s->store, with the disk detached or idle.  Logged in the
 * populate's fault log, whose format the attribution reads; seed picks
 * the tear and the landing.  -1 with err (no write to the range, say).
 */
extern int fd_write_fault (const struct trial_spec *s, const char *kind,
                           uint64_t offset, uint64_t length, uint64_t seed,
                           struct fm_err *err);

/* RAID-level corruption (--target TYPE:N:stripe): [offset,
 * offset+length) of the disk in s->store (cut at the disk's end)
 * overwritten with bytes from seed, as a controller that garbles a
 * whole stripe leaves it, or (from not FD_GARBLE_SEEDED) with a copy of
 * the disk's bytes at from, as a misplaced or stale chunk leaves it:
 * plausible metadata from the wrong place.  Logged in the populate's
 * fault log as kind "stripe" with detail.  The disk detached or idle.
 * -1 with err.
 */
#define FD_GARBLE_SEEDED UINT64_MAX
extern int fd_garble (const struct trial_spec *s, uint64_t offset,
                      uint64_t length, uint64_t seed, uint64_t from,
                      const char *detail, struct fm_err *err);

#endif
