/* futuredisk — faultmodels: sorted runs of sectors (private).
 *
 * A set of non-overlapping runs [first, first+n), each with a tag, kept
 * sorted: the write cache's dirty extents (disk.c) and the map of faulty
 * sectors (faults.c).  Few runs, binary-searched, moved with memmove.
 */
#ifndef FAULTMODELS_RUNS_H
#define FAULTMODELS_RUNS_H

#include <stddef.h>
#include <stdint.h>

struct fm_run {
  uint64_t first, n;
  int tag;
};

struct fm_runs {
  struct fm_run *v;
  size_t n, alloc;
  uint64_t total; /* sectors in all runs */
};

/* Index of the first run ending after sector s (n if none). */
extern size_t fm_runs_find (const struct fm_runs *r, uint64_t s);

/* Take [first, first+n) out of the set.  -1 only out of memory. */
extern int fm_runs_remove (struct fm_runs *r, uint64_t first, uint64_t n);

/* Put [first, first+n) in with `tag`, replacing whatever was there; runs
 * of the same tag that touch it are merged.  -1 only out of memory.
 */
extern int fm_runs_add (struct fm_runs *r, uint64_t first, uint64_t n, int tag);

/* fm_runs_add and fm_runs_remove for the drive's own sets (its dirty
 * extents, media cache and SMR bands): a model that cannot track them
 * is unusable, so out of memory aborts.
 */
extern void fm_runs_add_or_abort (struct fm_runs *r, uint64_t first, uint64_t n,
                                  int tag);
extern void fm_runs_remove_or_abort (struct fm_runs *r, uint64_t first,
                                     uint64_t n);

extern void fm_runs_empty (struct fm_runs *r);
extern void fm_runs_free (struct fm_runs *r);

#endif
