/* futuredisk — nbdplugin: the drive's volatile write cache (the data).
 *
 * The model (faultmodels/disk.h) decides when a write is cached and when
 * cached data reaches the media; this holds the bytes in between, so that
 * what is durable is exactly what the model destaged.  Reads see cached
 * data; what the model never destaged is what a power cut loses.
 *
 * Dirty state is kept per 512-byte block of 4 KiB pages: the smallest
 * sector any profile has.  Not thread-safe: the caller holds the lock it
 * holds for the model.
 */
#ifndef FUTUREDISK_WCACHE_H
#define FUTUREDISK_WCACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "store.h"

struct wcache;

extern struct wcache *wcache_new (struct store *backing);
extern void wcache_free (struct wcache *w);

/* Cache a write (buf NULL writes zeros).  Bytes of a block not written
 * keep what the store holds.  -1 with errno on failure.
 */
extern int wcache_write (struct wcache *w, const void *buf, uint64_t count,
                         uint64_t offset);

/* Overlay cached bytes on buf, which holds what the store has there. */
extern void wcache_overlay (struct wcache *w, void *buf, uint64_t count,
                            uint64_t offset);

extern bool wcache_intersects (struct wcache *w, uint64_t count,
                               uint64_t offset);

/* Write the cached bytes of a range to the store and forget them. */
extern int wcache_commit (struct wcache *w, uint64_t count, uint64_t offset);

/* The range is about to be written on the media directly (FUA, trim,
 * zero, a write the model sends straight through): forget cached bytes
 * wholly inside it, and write out blocks it only partly covers, whose
 * other bytes must survive.  -1 with errno if the store fails.
 */
extern int wcache_supersede (struct wcache *w, uint64_t count, uint64_t offset);

/* Forget the cached bytes of a range without writing them (power cut). */
extern void wcache_discard (struct wcache *w, uint64_t count, uint64_t offset);

extern uint64_t wcache_dirty_bytes (const struct wcache *w);

/* Call fn for each page-aligned run of cached pages in a range, in order
 * (for extents: cached data is data even where the store has a hole).
 */
extern int wcache_each_page (struct wcache *w, uint64_t count, uint64_t offset,
                             int (*fn) (void *opaque, uint64_t page_offset),
                             void *opaque);

#endif
