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
 *
 * Memory: like the drive's DRAM, the cache gets its pages once, when it
 * is made (the profile's cache size, resident from the start), and
 * reuses them: caching, committing and discarding take pages from and
 * give them back to a free list, so the request path neither allocates
 * nor touches fresh memory.  Only a cache that needs more pages than the
 * drive's cache bytes (512-byte sectors scattered over many pages, data
 * misdirected away from the sectors the model caches) gets more, once,
 * and keeps them.
 * Where the store lends pages (store.h), the pool is the store's pages,
 * and a destage of a page written whole swaps it for the store's page
 * there instead of copying it: a page moves between the cache and the
 * store, and neither may be used once the store is closed.
 */
#ifndef FUTUREDISK_WCACHE_H
#define FUTUREDISK_WCACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "store.h"

struct wcache;

/* A cache for the data of `bytes` cached bytes (the drive's cache size;
 * 0 for a drive without one).  NULL if the memory cannot be had.
 */
extern struct wcache *wcache_new (struct store *backing, uint64_t bytes);
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

/* The pool: pages it holds (cached or free), and how many times it had
 * to get more after wcache_new (each time a new high-water mark).
 */
extern uint64_t wcache_pool_pages (const struct wcache *w);
extern uint64_t wcache_pool_grows (const struct wcache *w);

#endif
