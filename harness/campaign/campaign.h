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
#include "spec.h"

struct fd_campaign;
struct trial_spec;

/* One trial of the expansion: the arguments of its `futuredisk run`. */
struct fd_campaign_trial {
  const char *matrix;          /* the [matrix NAME] it came from */
  const char *value[FD_NKEYS]; /* each key's (spec.h); NULL: not given */
  uint64_t seed, rep;
};

/* Load and expand the campaign at path; NULL with err ("FILE:LINE: ..."). */
extern struct fd_campaign *fd_campaign_load (const char *path,
                                             struct fm_err *err);
extern void fd_campaign_free (struct fd_campaign *c);

extern const char *fd_campaign_name (const struct fd_campaign *c);
extern size_t fd_campaign_ntrials (const struct fd_campaign *c);
extern const struct fd_campaign_trial *
fd_campaign_trial (const struct fd_campaign *c, size_t i);

/* Trial t's inputs in s, as its `run` would have them (the keys'
 * defaults where not given); -1 with err (a profile file gone since).
 */
extern int fd_campaign_spec (const struct fd_campaign_trial *t,
                             struct trial_spec *s, struct fm_err *err);

/* "--shard I/N": 0 <= I < N; -1 with err naming the value. */
extern int fd_campaign_parse_shard (const char *s, uint64_t *i, uint64_t *n,
                                    struct fm_err *err);

#endif
