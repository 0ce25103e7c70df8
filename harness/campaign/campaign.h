/* futuredisk — harness: campaign files, the matrix a night of trials
 * runs (harness/campaigns/README.md describes the format).
 *
 * A campaign file is INI: a [campaign] section (name, and defaults for
 * every matrix key) and one or more [matrix NAME] sections whose lists
 * are crossed - file systems x profiles x sizes x fills x meta-only x
 * trees x crash x fault specs x targets x seeds x repetitions.  Loading checks
 * every value (file systems, profiles, sizes, fault keys, target types)
 * so a bad file fails before the first trial, naming file, line and key.
 * The expansion is in file order and deterministic: trial i is the same
 * trial on every machine, which is what sharding relies on.
 */
#ifndef FUTUREDISK_CAMPAIGN_H
#define FUTUREDISK_CAMPAIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "faultmodels/error.h"

struct fd_campaign;

/* One trial of the expansion: the arguments of its `futuredisk run`. */
struct fd_campaign_trial {
  const char *matrix; /* the [matrix NAME] it came from */
  const char *fs, *profile, *size;
  double fill;
  uint64_t meta_only; /* files; 0: written data (--fill) */
  const char *tree;   /* --tree: mixed, hardlink-farm, ... */
  bool crash;
  bool escalate;         /* --escalate: the next move after an unmountable
                            repair */
  const char *faults;    /* a fault spec, or "" */
  const char *target;    /* TYPE[:N[:KIND]], or "" */
  const char *time;      /* the disk's clock: virtual, real, scale:F */
  const char *think;     /* does the client's time count: real, zero */
  uint64_t repair_cut;   /* power cut after the repair's Nth write; 0: none */
  uint64_t crash_points; /* a sweep of N crash points (UINT64_MAX: all);
                            0: none */
  uint64_t seed, rep;
  double timeout; /* seconds per checker */
};

/* Load and expand the campaign at path; NULL with err ("FILE:LINE: ..."). */
extern struct fd_campaign *fd_campaign_load (const char *path,
                                             struct fm_err *err);
extern void fd_campaign_free (struct fd_campaign *c);

extern const char *fd_campaign_name (const struct fd_campaign *c);
extern size_t fd_campaign_ntrials (const struct fd_campaign *c);
extern const struct fd_campaign_trial *
fd_campaign_trial (const struct fd_campaign *c, size_t i);

/* "--shard I/N": 0 <= I < N; -1 with err naming the value. */
extern int fd_campaign_parse_shard (const char *s, uint64_t *i, uint64_t *n,
                                    struct fm_err *err);

#endif
