/* futuredisk — harness: a night of a campaign's trials, each a
 * `futuredisk run` child, recorded in one database; what `futuredisk
 * campaign` and `futuredisk demo` both run.
 */
#ifndef FUTUREDISK_NIGHT_H
#define FUTUREDISK_NIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "campaign.h"

struct fd_night_opts {
  const char *db;     /* the database the trials are recorded in */
  const char *run_id; /* the night's name, or NULL (night.c says whence) */
  uint64_t jobs;      /* trials at once */
  uint64_t shard_i, shard_n; /* this shard's trials: i, i + n, ... */
  uint64_t budget_ns;        /* start no trial after this long; 0: none */
  bool shard_set;            /* shard given (--shard or the environment) */
  bool resume;               /* carry on the newest night in db */
  bool no_reuse;             /* populate every trial's disk afresh */
};

/* Run campaign c's trials of the night o describes, printing progress
 * on stderr; the exit code of `futuredisk campaign`: 0, 1 (a trial not
 * recorded, or the night could not run), 2 (the night already has
 * trials and o->resume is not set), 3 (the budget was spent first),
 * 130 (interrupted).
 */
extern int fd_night_run (const struct fd_night_opts *o,
                         const struct fd_campaign *c);

/* One line naming trial t's inputs ("ext4 roadmap-2006 1G fill 30 faults
 * consumer seed 2"), at most len bytes with its NUL.
 */
extern void fd_night_describe (const struct fd_campaign_trial *t, char *buf,
                               size_t len);

#endif
