/* futuredisk — harness: what the populate (populate.c) lends the
 * workload trees (trees.c).  Not for other callers.
 */
#ifndef FUTUREDISK_POPULATE_INT_H
#define FUTUREDISK_POPULATE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "faultmodels/error.h"
#include "populate.h"

/* Append e to m; -1 when out of memory. */
extern int fd_manifest_push (struct fd_manifest *m, const struct fd_entry *e);

/* The mixed tree's size of file i: lognormal around 8 KiB, one in ten
 * from a Pareto tail above 256 KiB; at most cap.
 */
extern uint64_t fd_populate_size (uint64_t seed, uint64_t i, uint64_t cap);

/* Make e (e->type FD_FILE, e->size and e->id set) at full, without
 * syncing: written block by block, or with m->meta_only allocated
 * (fallocate, or sparse and listed in m->unallocated) and left
 * unwritten.  e->hash is set.
 */
extern int fd_populate_file (const char *full, uint64_t seed,
                             struct fd_entry *e, struct fd_manifest *m,
                             struct fm_err *err);

/* syncfs(2) of root's file system, and fsync of root (what reaches a FUSE
 * file system).
 */
extern void fd_populate_sync (const char *root);

/* The trees other than the mixed one (trees.c). */
extern int fd_populate_tree (const char *root, const struct fd_populate_opts *o,
                             struct fd_manifest *m, struct fm_err *err);

#endif
