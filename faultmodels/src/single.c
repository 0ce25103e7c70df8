/* futuredisk — faultmodels: a single-actuator drive behind the fm_disk
 * interface (iface.h).  The drive itself is single.h's; this only
 * adapts the calls.
 */
#include <stdlib.h>

#include "faultmodels/error.h"
#include "iface.h"
#include "single.h"

struct single {
  struct fm_disk base; /* first: the interface's view */
  struct drive *d;
};

static struct drive *
drv (const struct fm_disk *d)
{
  return ((const struct single *)d)->d;
}

static void
s_free (struct fm_disk *d)
{
  drive_free (drv (d));
  free (d);
}

static void
s_on_destage (struct fm_disk *d, fm_destage_fn *fn, void *opaque)
{
  drive_on_destage (drv (d), fn, opaque);
}

static void
s_submit (struct fm_disk *d, const struct fm_request *rq, struct fm_timing *t)
{
  drive_submit (drv (d), rq, t);
}

static void
s_enqueue (struct fm_disk *d, const struct fm_request *rq, uint64_t tag)
{
  drive_enqueue (drv (d), rq, tag);
}

static bool
s_dispatch (struct fm_disk *d, uint64_t now, uint64_t *tag, struct fm_timing *t)
{
  return drive_dispatch (drv (d), now, tag, t);
}

static uint64_t
s_next_decision (const struct fm_disk *d)
{
  return drive_next_decision (drv (d));
}

static size_t
s_queued (const struct fm_disk *d)
{
  return drive_queued (drv (d));
}

static uint64_t
s_extend (struct fm_disk *d, uint64_t ns)
{
  return drive_extend (drv (d), ns);
}

static uint64_t
s_spare_detour (const struct fm_disk *d, uint64_t offset)
{
  return drive_spare_detour (drv (d), offset);
}

static uint64_t
s_busy_until (const struct fm_disk *d)
{
  return drive_busy_until (drv (d));
}

static void
s_powercut (struct fm_disk *d, fm_destage_fn *fn, void *opaque)
{
  drive_powercut (drv (d), fn, opaque);
}

static uint64_t
s_dirty_bytes (const struct fm_disk *d)
{
  return drive_dirty_bytes (drv (d));
}

static void
s_smr_stats (const struct fm_disk *d, uint64_t *cache_bytes, uint64_t *clean_ns,
             uint64_t *bands_cleaned)
{
  drive_smr_stats (drv (d), cache_bytes, clean_ns, bands_cleaned);
}

static const struct fm_disk_ops single_ops = {
    .free = s_free,
    .on_destage = s_on_destage,
    .submit = s_submit,
    .enqueue = s_enqueue,
    .dispatch = s_dispatch,
    .next_decision = s_next_decision,
    .queued = s_queued,
    .extend = s_extend,
    .spare_detour = s_spare_detour,
    .busy_until = s_busy_until,
    .powercut = s_powercut,
    .dirty_bytes = s_dirty_bytes,
    .smr_stats = s_smr_stats,
};

struct fm_disk *
single_open (const struct fm_profile *p, uint64_t seed,
             const struct fm_disk_options *o, struct fm_err *err)
{
  struct single *s = calloc (1, sizeof *s);

  if (s == NULL) {
    fm_fail (err, "out of memory");
    return NULL;
  }
  s->d = drive_new (p, seed, o, err);
  if (s->d == NULL) {
    free (s);
    return NULL;
  }
  s->base.ops = &single_ops;
  s->base.p = *p;
  return &s->base;
}
