/* futuredisk — faultmodels: the public drive calls (see disk.h), each
 * handed to the drive's implementation (iface.h).
 */
#include "faultmodels/error.h"
#include "iface.h"

struct fm_disk *
fm_disk_new (const struct fm_profile *p, uint64_t seed,
             const struct fm_disk_options *o, struct fm_err *err)
{
  if (fm_profile_validate (p, err) == -1)
    return NULL;
  if (p->actuators == 2)
    return dual_open (p, seed, o, err);
  return single_open (p, seed, o, err);
}

void
fm_disk_free (struct fm_disk *d)
{
  if (d)
    d->ops->free (d);
}

const struct fm_profile *
fm_disk_profile (const struct fm_disk *d)
{
  return &d->p;
}

void
fm_disk_on_destage (struct fm_disk *d, fm_destage_fn *fn, void *opaque)
{
  d->ops->on_destage (d, fn, opaque);
}

void
fm_disk_submit (struct fm_disk *d, const struct fm_request *rq,
                struct fm_timing *t)
{
  d->ops->submit (d, rq, t);
}

void
fm_disk_enqueue (struct fm_disk *d, const struct fm_request *rq, uint64_t tag)
{
  d->ops->enqueue (d, rq, tag);
}

bool
fm_disk_dispatch (struct fm_disk *d, uint64_t now, uint64_t *tag,
                  struct fm_timing *t)
{
  return d->ops->dispatch (d, now, tag, t);
}

uint64_t
fm_disk_next_decision (const struct fm_disk *d)
{
  return d->ops->next_decision (d);
}

size_t
fm_disk_queued (const struct fm_disk *d)
{
  return d->ops->queued (d);
}

uint64_t
fm_disk_extend (struct fm_disk *d, uint64_t ns)
{
  return d->ops->extend (d, ns);
}

uint64_t
fm_disk_spare_detour (const struct fm_disk *d, uint64_t offset)
{
  return d->ops->spare_detour (d, offset);
}

uint64_t
fm_disk_busy_until (const struct fm_disk *d)
{
  return d->ops->busy_until (d);
}

void
fm_disk_powercut (struct fm_disk *d, fm_destage_fn *fn, void *opaque)
{
  d->ops->powercut (d, fn, opaque);
}

uint64_t
fm_disk_dirty_bytes (const struct fm_disk *d)
{
  return d->ops->dirty_bytes (d);
}

void
fm_disk_smr_stats (const struct fm_disk *d, uint64_t *cache_bytes,
                   uint64_t *clean_ns, uint64_t *bands_cleaned)
{
  d->ops->smr_stats (d, cache_bytes, clean_ns, bands_cleaned);
}
