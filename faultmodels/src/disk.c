/* futuredisk — faultmodels: one single-actuator drive (single.h): its
 * life cycle and the request path, which hands each request to the read
 * buffer (readcache.c), the write path (destage.c) or, on an SSD, a fixed
 * latency; the mechanics are mech.c's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "faultmodels/error.h"
#include "faultmodels/rng.h"
#include "drive.h"

void
fm_disk_default_options (const struct fm_profile *p, struct fm_disk_options *o)
{
  o->read_cache = p->readahead_bytes > 0;
  o->write_cache = p->cache_bytes > 0;
  o->queue = FM_QUEUE_SPTF;
}

struct drive *
drive_new (const struct fm_profile *p, uint64_t seed,
           const struct fm_disk_options *o, struct fm_err *err)
{
  struct drive *d = calloc (1, sizeof *d);
  if (d == NULL) {
    fm_fail (err, "out of memory");
    return NULL;
  }
  d->p = *p;
  if (o)
    d->o = *o;
  else
    fm_disk_default_options (p, &d->o);
  d->sectors = p->capacity / p->sector;
  d->ra_sectors = d->o.read_cache ? p->readahead_bytes / p->sector : 0;
  d->cache_sectors = d->o.write_cache ? p->cache_bytes / p->sector : 0;
  if (fm_profile_rotating (p)) {
    struct fm_seek_spec spec;

    d->g = fm_geometry_new (p, err);
    if (d->g == NULL)
      goto fail;
    fm_profile_seek_spec (p, &spec);
    if (fm_seek_init (&d->seek, &spec, fm_geometry_design_cylinders (d->g),
                      err) == -1)
      goto fail;
    d->phase0 = fm_below (fm_hash (seed, FM_STREAM_PHASE, 0, 0), R_UNITS);
  }
  for (size_t i = 0; i < MEMO_SLOTS; i++)
    d->memo[i].lba = UINT64_MAX;
  if (rc_init (d, err) == -1)
    goto fail;
  if (p->kind == FM_KIND_SMR && smr_new (d, err) == -1)
    goto fail;
  return d;

fail:
  drive_free (d);
  return NULL;
}

void
drive_free (struct drive *d)
{
  if (d) {
    fm_geometry_free (d->g);
    fm_runs_free (&d->dirty);
    free (d->q.v);
    fm_runs_free (&d->partial);
    fm_runs_free (&d->staged);
    rc_free (d);
    smr_free (d->smr);
    free (d);
  }
}

uint64_t
drive_busy_until (const struct drive *d)
{
  return d->t_free;
}

uint64_t
drive_extend (struct drive *d, uint64_t ns)
{
  /* Retries re-read the same sectors: the head stays, the stream stops. */
  rc_forget (d);
  d->t_free += ns;
  return d->t_free;
}

void
drive_powercut (struct drive *d, fm_destage_fn *fn, void *opaque)
{
  size_t i;

  for (i = 0; i < d->dirty.n; i++)
    fn (opaque, d->dirty.v[i].first * d->p.sector,
        d->dirty.v[i].n * d->p.sector);
  fm_runs_empty (&d->dirty);
  fm_runs_empty (&d->partial);
  rc_forget (d);
}

uint64_t
drive_dirty_bytes (const struct drive *d)
{
  return d->dirty.total * d->p.sector;
}

void
drive_on_destage (struct drive *d, fm_destage_fn *fn, void *opaque)
{
  d->on_destage = fn;
  d->on_destage_opaque = opaque;
}

uint64_t
drive_spare_detour (const struct drive *d, uint64_t offset)
{
  struct fm_location loc;
  double dist;

  if (d->g == NULL)
    return 0;
  drv_locate (d, offset / d->p.sector, &loc);
  dist = fm_geometry_design_cylinders (d->g) - loc.position;
  return 2 * fm_seek_time (&d->seek, dist > 1 ? dist : 1) +
         (uint64_t)(fm_profile_rev_ns (&d->p) / 2);
}

/* ---- requests ---- */

static void
ssd_submit (struct drive *d, const struct fm_request *rq, uint64_t bytes,
            uint64_t t, struct fm_timing *out)
{
  uint64_t done = t + d->p.command_ns;
  uint64_t wbw = d->p.write_bandwidth ? d->p.write_bandwidth : d->p.bandwidth;

  switch (rq->op) {
    case FM_OP_READ:
      done += d->p.read_latency_ns;
      out->transfer_ns = drv_bytes_time (bytes, d->p.bandwidth);
      break;
    case FM_OP_WRITE:
    case FM_OP_ZERO:
      done += d->p.write_latency_ns;
      out->transfer_ns = drv_bytes_time (bytes, wbw);
      break;
    case FM_OP_TRIM:
    case FM_OP_FLUSH:
      break;
  }
  done += out->transfer_ns;
  out->overhead_ns = done - t - out->transfer_ns;
  out->done_ns = done;
}

/* The drive was idle until `until` (the next arrival): the head's free
 * time goes to destaging (destage.c) ...
 */
void
drv_idle (struct drive *d, uint64_t until, uint64_t read_at)
{
  if (d->g)
    wc_background (d, until, read_at);
  /* ... and a shingled disk's to cleaning its media cache. */
  if (d->smr) {
    uint64_t head = smr_idle_head (d, d->t_free, until);

    if (head != UINT64_MAX)
      rc_stop (d, head);
    d->t_free = smr_idle (d, d->t_free, until, &d->idle);
  }
}

/* Where the request's sectors are: [*first, *first + n), clipped. */
static uint64_t
sector_range (const struct drive *d, const struct fm_request *rq,
              uint64_t *first)
{
  const uint64_t ss = d->p.sector;
  uint64_t f = rq->offset / ss, last;

  /* Requests are in bytes at any alignment; the media works in sectors. */
  last = rq->length ? (rq->offset + rq->length + ss - 1) / ss : f;
  if (f > d->sectors)
    f = d->sectors;
  if (last > d->sectors)
    last = d->sectors;
  *first = f;
  return last - f;
}

void
drv_serve (struct drive *d, const struct fm_request *rq, uint64_t t,
           struct fm_timing *out)
{
  struct acct a = d->idle;
  uint64_t first, n = sector_range (d, rq, &first), done = 0;

  memset (out, 0, sizeof *out);
  memset (&d->idle, 0, sizeof d->idle);
  out->start_ns = t;
  out->queue_ns = t - rq->arrival_ns;

  if (d->g == NULL) {
    ssd_submit (d, rq, n * d->p.sector, t, out);
    d->t_free = out->done_ns;
    return;
  }

  switch (rq->op) {
    case FM_OP_READ:
      done = n ? rc_read (d, first, n, t, &a, &out->cache_hit)
               : t + d->p.command_ns;
      if (!out->cache_hit)
        d->media_end = done;
      break;
    case FM_OP_WRITE:
    case FM_OP_ZERO:
      done = n ? wc_write (d, first, n, rq, t, &a, &out->write_cached)
               : t + d->p.command_ns;
      break;
    case FM_OP_TRIM:
      wc_forget (d, first, n);
      done = t + d->p.command_ns;
      break;
    case FM_OP_FLUSH:
      done = wc_flush (d, t + d->p.command_ns, &a);
      break;
  }
  d->t_free = done;
  out->done_ns = done;
  out->seek_ns = a.seek;
  out->rotation_ns = a.rotation;
  out->transfer_ns = a.transfer;
  out->destage_ns = a.destage;
  out->seeks = a.seeks;
  out->overhead_ns = d->p.command_ns;
}

void
drive_submit (struct drive *d, const struct fm_request *rq,
              struct fm_timing *out)
{
  drv_idle (d, rq->arrival_ns, UINT64_MAX);
  drv_serve (d, rq, max64 (rq->arrival_ns, d->t_free), out);
}
