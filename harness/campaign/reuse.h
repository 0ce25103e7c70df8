/* futuredisk — harness: populate once, break many times.
 *
 * Trials of a campaign night that would populate the same disk (same
 * file system, profile, size, fill, seed and every other setting the
 * populate depends on: fd_reuse_key) share it: the first keeps its
 * populated disk as a base (base.h: fd_base_save, `futuredisk run
 * --base-out`) and the others clone it copy-on-write (fd_base_clone, `--base`;
 * the plugin's store=FILE base=BASE) instead of populating.  A trial's disk is
 * the same either way, and so is its record, but for wall times and `cloned`.
 */
#ifndef FUTUREDISK_REUSE_H
#define FUTUREDISK_REUSE_H

#include <stdbool.h>
#include <stddef.h>

#include "faultmodels/error.h"
#include "campaign.h"

/* The settings of a campaign trial its populate depends on, as
 * "name=value" words; 0, or -1 if its disk cannot be shared (a sweep of
 * crash points, a write fault target: both rewrite the store file).
 */
extern int fd_reuse_key (const struct fd_campaign_trial *t, char *buf,
                         size_t len);

/* The bases of one night, under work/bases. */
struct fd_reuse;
extern struct fd_reuse *fd_reuse_new (const char *work,
                                      const struct fd_campaign *c,
                                      const size_t *todo, size_t ntodo,
                                      struct fm_err *err);
/* How trial idx may start, run by the child pid (once started): 1 not
 * yet (its base is being made), else 0 with *base_out (make the base
 * there) or *base (clone it), or neither (populate alone).
 */
extern int fd_reuse_plan (struct fd_reuse *r, size_t idx, const char **base_out,
                          const char **base);
extern void fd_reuse_started (struct fd_reuse *r, size_t idx, int pid);
/* The child pid ended: a base it was making is ready, or gone. */
extern void fd_reuse_ended (struct fd_reuse *r, int pid);
/* How many trials cloned a base, and how many bases were made. */
extern void fd_reuse_counts (const struct fd_reuse *r, size_t *cloned,
                             size_t *bases);
/* Remove every base, then free r (NULL is fine). */
extern void fd_reuse_free (struct fd_reuse *r);

#endif
