/* futuredisk — faultmodels: one single-actuator drive (private).
 *
 * The drive that disk.c, queue.c, readcache.c, destage.c and smr.c
 * model: one head stack, one queue, one read buffer, one write cache.
 * Each call means what the fm_disk_ call of the same name in disk.h
 * means.  single.c puts it behind the fm_disk interface (iface.h); a
 * dual-actuator drive (dual.c) is two of these.  Nothing here calls up.
 */
#ifndef FAULTMODELS_SINGLE_H
#define FAULTMODELS_SINGLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "faultmodels/disk.h"

struct drive;

/* The profile is not validated here: fm_disk_new and dual.c do it. */
extern struct drive *drive_new (const struct fm_profile *p, uint64_t seed,
                                const struct fm_disk_options *o,
                                struct fm_err *err);
extern void drive_free (struct drive *d);
extern void drive_on_destage (struct drive *d, fm_destage_fn *fn, void *opaque);
extern void drive_submit (struct drive *d, const struct fm_request *rq,
                          struct fm_timing *t);
extern void drive_enqueue (struct drive *d, const struct fm_request *rq,
                           uint64_t tag);
extern bool drive_dispatch (struct drive *d, uint64_t now, uint64_t *tag,
                            struct fm_timing *t);
extern uint64_t drive_next_decision (const struct drive *d);
extern size_t drive_queued (const struct drive *d);
extern uint64_t drive_extend (struct drive *d, uint64_t ns);
extern uint64_t drive_spare_detour (const struct drive *d, uint64_t offset);
extern uint64_t drive_busy_until (const struct drive *d);
extern void drive_powercut (struct drive *d, fm_destage_fn *fn, void *opaque);
extern uint64_t drive_dirty_bytes (const struct drive *d);
extern void drive_smr_stats (const struct drive *d, uint64_t *cache_bytes,
                             uint64_t *clean_ns, uint64_t *bands_cleaned);

#endif
