/* futuredisk — harness: one fault trial, the engine behind `futuredisk
 * run` and `futuredisk predict`.
 *
 * populate (clean disk) -> unmount (or, with crash, a power cut) ->
 * inject (the disk comes back with its faults: rates from the fault keys,
 * chosen blocks from the target) -> drop caches -> check (read-only) ->
 * repair -> recheck -> mount -> audit -> write probe -> unmount.  Each phase is
 * timed in virtual seconds (control marks), wall and CPU seconds, with the
 * plugin's I/O counters. Whatever happens, and on SIGINT or SIGTERM, the disk
 * is detached.
 */
#ifndef FUTUREDISK_TRIAL_H
#define FUTUREDISK_TRIAL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "faultmodels/error.h"
#include "attach.h"
#include "attribute.h"
#include "fsadapter.h"
#include "populate.h"

#define MAX_PHASES 16

struct fd_cgroup;

struct phase {
  const char *name;
  double virtual_s, wall_s, cpu_s;
  uint64_t reads, writes, bytes_read, bytes_written;
  uint64_t read_errors; /* reads the disk failed (ure, lse) */
  /* Virtual time: requests the drive picked once it saw the client
   * waiting (exact), once the client's clock had passed the decision,
   * and after a grace of wall time (the client could not be watched).
   */
  uint64_t watched, ahead, unwatched;
  int status, signal; /* checkers: raw exit, signal; else 0 */
  /* Checkers in a cgroup: its CPU seconds over the host's speed (what
   * think=cpu charged); < 0: no cgroup.
   */
  double charged_s;
  const char *outcome; /* checkers: normalized outcome; else NULL */
  /* A server of the disk died before the phase's end: its wall and CPU
   * seconds are known, the disk's counters (virtual seconds, I/O) and a
   * checker's outcome are not.
   */
  bool cut_short;
  struct fd_pass passes[12];
  size_t npasses;
  /* Checkers: the disk's virtual seconds from each pass heading the
   * checker printed to the next (the first from the phase's start), in
   * order: "pass 1", "pass 1b", ..., "phase 3", "step 2/7".
   */
  struct fd_pass vpasses[16];
  size_t nvpasses;
};

/* A file the audit found not intact, and the logged faults behind it. */
struct fd_damaged {
  char cls[16];
  char path[256];
  char found_at[272]; /* where the audit found it instead ("lost+found/#12") */
  char cause[64];     /* the kinds of faults on its blocks: "ure,rot" */
  struct fd_extents *extents; /* while mounted (first 200 files only) */
  /* A file lost from the tree: its nearest directory still there. */
  struct fd_extents *dir_extents;
};

/* A durability promise the audit found broken. */
struct fd_violation {
  char how[16];   /* the persistence pattern: "fsync", "sync", ... */
  char found[16]; /* an audit class, "resurrected" or "neither" */
  char path[256];
};

/* One crash point of a sweep (--crash-points): the disk as it was at a
 * flush of the populate's write stream (and, with cache, some of the
 * writes after it that a volatile cache may have made durable), checked,
 * repaired and audited against the promises made by then.
 */
struct fd_crash_point {
  uint64_t flush;        /* which flush of the stream, 1-based */
  uint64_t promises;     /* promises the populate had made by then */
  uint64_t cache_writes; /* writes after it applied too (a seeded subset,
                            in a seeded order); 0: the flush's state */
  char check[16], repair[16], recheck[16]; /* outcomes ("" if not run) */
  char mount[16];                          /* FD_MOUNT_*, "" if not tried */
  bool audited;
  uint64_t durability[FD_DURABILITY_NCLASSES];
  struct fd_violation violations[3]; /* the first few */
  size_t nviolations;
  char error[200];
};

/* A trial's inputs: set by the caller (a campaign's trial, `run`'s
 * options; the keys both share through spec.h), checked before, and only
 * read by the engine.
 */
struct trial_spec {
  const struct fd_fs *fs;
  const char *profile, *size, *faults_spec, *target;
  /* What the profile says of itself: its capacity (--size full) and the
   * host a checker of it runs on ("" for none).
   */
  uint64_t profile_capacity;
  char profile_host[32];
  const char *campaign, *run_id; /* the campaign night it belongs to */
  uint64_t rep;                  /* its repetition there */
  const char *time_mode;         /* the plugin's time=, or NULL */
  const char *think;             /* the plugin's think=, or NULL */
  const char *host;              /* --host NAME (host.h), or NULL */
  /* The checkers' cgroup (hostrun.h; think=cpu, the host's RAM), or NULL */
  const struct fd_cgroup *cgroup;
  const char *via; /* --attach: auto, nbd, loop, serial; NULL: auto */
  const char *extra[FD_FAULT_KEYS_MAX];
  size_t n_extra;
  uint64_t seed;
  double fill, timeout;
  bool keep;
  struct fd_populate_opts populate;
  /* A checker's progress (virtual time so far, pass, share of the pass
   * done) goes to this stream at most every progress_every seconds of
   * wall time (0: at each update); NULL: none.
   */
  FILE *progress;
  double progress_every;
  bool check_only; /* stop after the read-only check (predict) */
  /* --escalate: when the repair leaves the file system unmountable, run
   * the adapter's documented next move (fd_fs.escalate) as the phase
   * "escalate" and mount again.
   */
  bool escalate;
  bool crash;          /* power cut with writes in flight instead of unmount */
  double restore_rate; /* --restore-rate, bytes/s; 0: the disk's own */
  /* --repair-cut K: the power goes after the repair's Kth write (0: no
   * cut), then the checker runs again (fd_trial_cut_outcome).
   */
  uint64_t repair_cut;
  /* --crash-points N|all: instead of checking the one crash, rebuild the
   * disk at N flushes of the populate's write log (UINT64_MAX: all) and
   * check each (harness/engine/crashpoints.c).  0: not asked.
   */
  uint64_t crash_points;
  /* The intact files of the same trial repaired uninterrupted (a sweep),
   * or -1: the record then says how many more this one lost.
   */
  int64_t cut_reference_intact;
  char dir[PATH_MAX], mnt[PATH_MAX + 8], store[PATH_MAX + 16];
  /* Populate once, break many times (reuse.h): base_out, keep the
   * populated disk in this directory for later trials; base, clone the
   * disk kept in it instead of populating.  NULL: neither.
   */
  const char *base_out, *base;
};

/* What a trial found: zeroed by the caller, filled in by the engine. */
struct trial_result {
  bool cloned;          /* the disk was a clone of a base: no populate ran */
  const char *attached; /* how the disk was attached: "nbd" or "loop" */
  struct phase ph[MAX_PHASES];
  size_t nph;
  struct fd_manifest m;
  struct fd_audit audit;
  char targets[1024]; /* "type path offset; ..." */
  bool probe_ok, audited;
  /* fsck or restore: a restore of the bytes in use from backup, to set
   * beside the checker's time (fd_trial_quicker); < 0: not known.
   */
  double restore_s;
  /* The mount after the repair: FD_MOUNT_*, or NULL when none was
   * tried (a check-only trial, a sweep, a failure of the rig before it);
   * the kernel's reason for the last mount that failed, or "".
   */
  const char *mount;
  char mount_reason[512];
  /* The rig's own failure (a server died, a tool is missing): never a
   * finding about the file system.  "" if none.
   */
  char error[600];
  char stats[16384];          /* the plugin's final stats object */
  struct fd_damaged *damaged; /* the files not intact, in manifest order */
  size_t ndamaged;
  struct fd_violation *violations; /* in manifest order */
  size_t nviolations;
  /* --repair-cut: whether the repair got to its Kth write (the power
   * went), and what came of the file system after it.
   */
  bool cut;
  const char *cut_outcome;
  /* --target: the IRON fingerprint's two axes for this block type and
   * fault kind (see below), or NULL.
   */
  const char *detection, *recovery;
  /* --crash-points: each point, and the stream they came from */
  struct fd_crash_point *points;
  size_t npoints;
  uint64_t log_flushes, log_promises;
  double points_wall_s;
};

/* Run the trial s in s->dir (which exists) into r (zeroed).  0, or -1
 * with err (r holds what was measured up to the failure).
 */
extern int fd_trial_run (const struct trial_spec *s, struct trial_result *r,
                         struct fm_err *err);

/* The plugin's final stats into r->stats (after a run). */
extern void fd_trial_read_stats (const struct trial_spec *s,
                                 struct trial_result *r);

/* The record as one JSON line (SCHEMA.md): 0, or -1 with err when it
 * cannot be made (the plugin's stats are not JSON, no memory) or
 * written.  A one-screen summary on stdout.
 */
extern int fd_trial_record (const struct trial_spec *s,
                            const struct trial_result *r, FILE *fp,
                            struct fm_err *err);
extern void fd_trial_summary (const struct trial_spec *s,
                              const struct trial_result *r);

/* Steps 2-4 alone on the disk already in s->store (a crash point): it
 * comes back with the fault keys, is checked, repaired, mounted and
 * audited against r->m (set by the caller).
 */
extern int fd_trial_run_disk (const struct trial_spec *s,
                              struct trial_result *r, struct fm_err *err);

/* Free what a run allocated (manifest, damaged files, violations). */
extern void fd_trial_free (struct trial_result *r);

/* Remove what the trial left in s->dir (and the directory, if asked). */
extern void fd_trial_clean (const struct trial_spec *s, bool remove_dir);

/* A mkdtemp template for a scratch directory of `what` ("run",
 * "campaign"): $TMPDIR/futuredisk-WHAT.XXXXXX, /var/tmp without TMPDIR
 * (disk stores are big and sparse; /tmp may be a small tmpfs).
 */
extern void fd_scratch_template (const char *what, char *buf, size_t len);

/* "fsck" or "restore": which gets the data back sooner (after a run
 * whose restore_s >= 0).
 */
extern const char *fd_trial_quicker (const struct trial_result *r);

/* The IRON fingerprint's axes (Prabhakaran et al., SOSP'05), as a trial
 * with a --target sees them from outside the file system.  Detection:
 * "none"; "error-code" (the disk's error reached the checker or the
 * application); "sanity" (the checker's consistency checks); "checksum"
 * (the checker says so, or the file system refused silently bad data
 * with EIO).  Recovery: "none" (data lost or wrong, or left
 * inconsistent); "propagate" (the application got EIO); "retry" (a
 * retried read came back, nothing lost); "repair" (the checker repaired
 * the structures; files it could not save are the audit's); "redundancy"
 * (another copy served it, nothing lost); "remap" (a rewrite moved the
 * sector to a spare).
 */
/* A trial's mount after the repair (the record's mount.outcome): a
 * file system the repair left unmountable is a finding, not an error.
 */
#define FD_MOUNT_MOUNTED     "MOUNTED"     /* mounted after the repair */
#define FD_MOUNT_UNMOUNTABLE "UNMOUNTABLE" /* and after --escalate too */
#define FD_MOUNT_RECOVERED   "RECOVERED"   /* only after --escalate */

/* A repair cut's outcomes (the record's repair_cut.outcome). */
#define FD_CUT_NOT_REACHED "not-reached" /* fewer than K writes: no cut */
#define FD_CUT_RECOVERED   "recovered"   /* one more repair: clean */
#define FD_CUT_ANOTHER     "needs-another-repair" /* two more repairs */
#define FD_CUT_UNRECOVERABLE                                                   \
  "unrecoverable" /* still not clean, the checker failed, or unmountable */

/* The phase called name, or NULL. */
extern const struct phase *fd_trial_phase (const struct trial_result *r,
                                           const char *name);

#endif
