/* futuredisk — faultmodels: the drive interface behind struct fm_disk.
 *
 * Every kind of drive the public calls of disk.h reach implements these
 * operations, as an nbdkit filter implements its table: one actuator
 * (single.c) and two actuators (dual.c, two single drives).  An
 * implementation's struct starts with struct fm_disk; iface.c only
 * dispatches, and no implementation calls back up into it.  Each
 * operation means what the fm_disk_ call of the same name means.
 */
#ifndef FAULTMODELS_IFACE_H
#define FAULTMODELS_IFACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "faultmodels/disk.h"

struct fm_disk_ops {
  void (*free) (struct fm_disk *d);
  void (*on_destage) (struct fm_disk *d, fm_destage_fn *fn, void *opaque);
  void (*submit) (struct fm_disk *d, const struct fm_request *rq,
                  struct fm_timing *t);
  void (*enqueue) (struct fm_disk *d, const struct fm_request *rq,
                   uint64_t tag);
  bool (*dispatch) (struct fm_disk *d, uint64_t now, uint64_t *tag,
                    struct fm_timing *t);
  uint64_t (*next_decision) (const struct fm_disk *d);
  size_t (*queued) (const struct fm_disk *d);
  uint64_t (*extend) (struct fm_disk *d, uint64_t ns);
  uint64_t (*spare_detour) (const struct fm_disk *d, uint64_t offset);
  uint64_t (*busy_until) (const struct fm_disk *d);
  void (*powercut) (struct fm_disk *d, fm_destage_fn *fn, void *opaque);
  uint64_t (*dirty_bytes) (const struct fm_disk *d);
  void (*smr_stats) (const struct fm_disk *d, uint64_t *cache_bytes,
                     uint64_t *clean_ns, uint64_t *bands_cleaned);
};

/* The head of every implementation's struct. */
struct fm_disk {
  const struct fm_disk_ops *ops;
  struct fm_profile p; /* as the caller gave it */
};

/* Open one kind of drive for a validated profile; NULL with err. */
extern struct fm_disk *single_open (const struct fm_profile *p, uint64_t seed,
                                    const struct fm_disk_options *o,
                                    struct fm_err *err);
extern struct fm_disk *dual_open (const struct fm_profile *p, uint64_t seed,
                                  const struct fm_disk_options *o,
                                  struct fm_err *err);

#endif
