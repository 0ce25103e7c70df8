/* futuredisk — harness: the trial engine's parts, for its own files
 * only (trial.h is the engine's interface).
 *
 * trial.c    the sequence: populate, crash or unmount, then steps 2-4
 * steps.c    steps 2-4 on a populated disk (also each crash point's)
 * phase.c    a phase's clocks and counters, from the disk's control
 * checker.c  a checker run as one phase, its passes timed
 * inject.c   a --target's faults put on the broken disk
 * damage.c   the audit phase, and the damaged files' faults
 * iron.c     the IRON fingerprint; restore.c: fsck or restore
 * record.c, summary.c: the results written out
 */
#ifndef FUTUREDISK_TRIAL_INT_H
#define FUTUREDISK_TRIAL_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "faultmodels/error.h"
#include "attach.h"
#include "trial.h"

/* A trial running: its inputs, read only, and its results. */
struct trial {
  const struct trial_spec *s;
  struct trial_result *r;
};

/* A phase in progress: where its clocks and counters started. */
struct fd_clocks {
  double wall, cpu;
  uint64_t vns, reads, writes, br, bw, rerr;
  uint64_t picks, watched, ahead;
};

/* Start the phase called name (a static string) as t's next, marking the
 * disk's write log and clock: NULL with err if the control failed.
 */
extern struct phase *fd_phase_begin (struct trial *t, struct fd_disk *d,
                                     const char *name, struct fd_clocks *c,
                                     struct fm_err *err);

/* End phase p begun at c0: its virtual, wall and CPU seconds and I/O.
 * -1 with err if the disk's counters cannot be read; when that is because
 * a server of d died, err says so ("nbdkit (pid N) died during check")
 * and p is cut short.
 */
extern int fd_phase_end (struct fd_disk *d, struct phase *p,
                         const struct fd_clocks *c0, struct fm_err *err);

/* Detach d, failing if one of its servers died under the trial (the
 * teardown still runs).
 */
extern int fd_trial_detach (struct fd_disk *d, struct fm_err *err);

/* Run a checker as the phase called name: check (repair false),
 * repair, recheck, ..., or "escalate" (the adapter's commands in turn).
 */
extern int fd_trial_checker (struct trial *t, struct fd_disk *d,
                             const char *name, bool repair, struct fm_err *err);

/* --target: every part's places found, then faulted (t->r->targets). */
extern int fd_trial_inject (struct trial *t, struct fd_disk *d,
                            struct fm_err *err);

/* The audit phase on the mounted disk (t->r->audit, damaged,
 * violations); then, still mounted, where the damaged files' blocks
 * are; after the detach, which logged faults are behind each.
 */
extern int fd_trial_audit (struct trial *t, struct fd_disk *d,
                           struct fm_err *err);
extern void fd_trial_map_damaged (struct trial *t, struct fd_disk *d);
extern void fd_trial_explain_damaged (struct trial *t);

/* How the trial's disk is attached (populate makes the file system). */
extern struct fd_attach_opts fd_trial_attach_opts (struct trial *t);

/* Steps 2-4 on the disk in t->s->store, attached with o. */
extern int fd_trial_broken_steps (struct trial *t, struct fd_attach_opts *o,
                                  struct fm_err *err);

/* The IRON fingerprint's axes into t->r->detection and recovery. */
extern void fd_trial_iron (struct trial *t);

/* The checker's virtual seconds (check and every repair), and a restore
 * from backup's into t->r->restore_s.
 */
extern double fd_trial_fsck_seconds (const struct trial_result *r);
extern void fd_trial_restore_estimate (struct trial *t);

#endif
