/* futuredisk — faultmodels: how many times each sector was read (or
 * written).
 *
 * A per-request draw keyed by a running number of requests depends on the
 * order in which the kernel sends them; one keyed by (sector, how many
 * times that sector was read) does not.  These are those per-sector
 * counts, kept as the sectors where the count changes (a run of sectors
 * with one count costs one entry of 16 bytes, however long): a disk read
 * end to end is one entry, a file read whole a couple, and memory grows
 * only with the number of places where neighbouring sectors were read a
 * different number of times - at most one per sector read, never one per
 * sector of the disk.  Entries live in blocks of a few hundred, found by
 * binary search, so an update costs a logarithm; blocks freed are kept
 * for reuse, so a steady workload allocates nothing.
 */
#ifndef FAULTMODELS_COUNTS_H
#define FAULTMODELS_COUNTS_H

#include <stddef.h>
#include <stdint.h>

struct fm_counts;

extern struct fm_counts *fm_counts_new (void);
extern void fm_counts_free (struct fm_counts *c);

/* Add one to the count of every sector in [first, first+n).  -1 only out
 * of memory, and then nothing changed.
 */
extern int fm_counts_bump (struct fm_counts *c, uint64_t first, uint64_t n);

/* The count of sector s (0: never bumped); *end, unless end is NULL, the
 * first sector after s whose count may differ (UINT64_MAX: none does).
 */
extern uint64_t fm_counts_get (const struct fm_counts *c, uint64_t s,
                               uint64_t *end);

/* How many places the count changes at, and the bytes held for them. */
extern size_t fm_counts_changes (const struct fm_counts *c);
extern size_t fm_counts_bytes (const struct fm_counts *c);

#endif
