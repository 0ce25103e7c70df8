/* futuredisk — harness: the --target grammar, TYPE[:N[:KIND]][+...]:
 * which blocks of which files a trial hits, and with what fault.
 */
#ifndef FUTUREDISK_TARGET_H
#define FUTUREDISK_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "faultmodels/error.h"

/* A --target is one TYPE[:N[:KIND]] or several joined by '+' (at most
 * FD_TARGET_MAX), each hit in turn.  The next one from *s into item
 * (size bytes), moving *s past it; false when none is left.
 */
#define FD_TARGET_MAX 4
extern bool fd_target_next (const char **s, char *item, size_t size);

/* Does any of target's parts carry a kind for which is() is true? */
extern bool fd_target_any (const char *target, bool (*is) (const char *kind));

/* Is target well formed: at most FD_TARGET_MAX parts, each with a
 * type, a count from 1 to 1000 and a kind fd_trial_target_kind takes?
 * -1 with err naming it; every such message begins with "target", so a
 * command may put "--" before it to name its option.
 */
extern int fd_target_check (const char *target, struct fm_err *err);

/* Is the type of each part of target one of types (space-separated, an
 * adapter's target_types)?  If not, the first that is not in bad (size
 * bytes).
 */
extern bool fd_target_types_known (const char *target, const char *types,
                                   char *bad, size_t size);

/* The KIND of a --target TYPE[:N[:KIND]] ("ure" when there is none). */
extern const char *fd_target_kind_of (const char *target);

/* Is kind a fault a --target can carry: ure, lse, rot (the disk's),
 * lost-write, misdirected-write, torn-write (undone from the write log),
 * stripe[=SIZE] (RAID-level corruption: the whole stripe around the
 * block garbled), stripe-copy[=SIZE] (the stripe overwritten with the
 * one before it), stripe-ure[=SIZE] (the stripe unreadable: a degraded
 * array that cannot rebuild it)?  -1 with err naming it.
 */
extern int fd_trial_target_kind (const char *kind, struct fm_err *err);

/* A stripe's bytes when no size is given: a RAID 5 of four data disks
 * with 64 KiB chunks (mdadm's default chunk is 512 KiB; hardware
 * controllers of the kernel.org era used 64 KiB).
 */
#define FD_STRIPE_DEFAULT (256 << 10)

/* What a stripe kind does to the stripe. */
enum fd_stripe_fault {
  FD_STRIPE_GARBLE, /* stripe: seeded bytes */
  FD_STRIPE_COPY,   /* stripe-copy: the stripe before it */
  FD_STRIPE_URE,    /* stripe-ure: unreadable until rewritten */
};

/* The stripe of a --target KIND stripe[=SIZE], stripe-copy[=SIZE] or
 * stripe-ure[=SIZE] into *bytes (0: kind is none of them), and what
 * it does into *how.  -1 with err naming a bad size.
 */
extern int fd_target_stripe (const char *kind, uint64_t *bytes,
                             enum fd_stripe_fault *how, struct fm_err *err);

/* Is kind (a --target KIND) a fault of a write as it was made? */
extern bool fd_write_fault_kind (const char *kind);

/* Does a --target of this kind edit the store file in place (a write
 * fault, a garbled stripe)?  Such a trial needs a disk of its own: in a
 * copy-on-write clone the file is the overlay, not the disk.
 */
extern bool fd_target_edits_store (const char *kind);

#endif
