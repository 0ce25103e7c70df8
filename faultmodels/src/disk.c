/* futuredisk — faultmodels: service time of one request (see disk.h).
 *
 * Method.  Rotation is kept as an angle, not an average.  One revolution
 * is R = 60e9 angle units, so at `rpm` revolutions per minute the platter
 * turns exactly `rpm` units per nanosecond and every angle is an integer:
 *
 *   angle(t)        = (t * rpm + phase0) mod R
 *   angle(track, s) = (track_angle + s * R / spt) mod R
 *
 * where the geometry skews each track_angle so that the first sector of
 * the next track arrives just as a head or cylinder switch finishes: a
 * sequential transfer loses only the switch time per track, which the
 * profile bandwidth already includes.
 * A rotational wait is (angle(track, s) - angle(t)) mod R, in units, over
 * rpm.  A sector that passed the head less than ANGLE_SLACK_NS ago counts
 * as under it: times are rounded up to whole ns at every step (alignment,
 * each piece of a transfer), and those roundings must not turn a seamless
 * track switch into a lost revolution.
 *
 * The read buffer is readcache.c's.
 */
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
}

struct fm_disk *
fm_disk_new (const struct fm_profile *p, uint64_t seed,
             const struct fm_disk_options *o, struct fm_err *err)
{
  struct fm_disk *d;

  if (fm_profile_validate (p, err) == -1)
    return NULL;
  d = calloc (1, sizeof *d);
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
    d->g = fm_geometry_new (p, err);
    if (d->g == NULL)
      goto fail;
    if (fm_seek_init (&d->seek, p->seek_t2t_ns, p->seek_avg_ns, p->seek_full_ns,
                      fm_geometry_design_cylinders (d->g), err) == -1)
      goto fail;
    d->phase0 = fm_below (fm_hash (seed, FM_STREAM_PHASE, 0, 0), R_UNITS);
  }
  if (p->kind == FM_KIND_SMR && smr_new (d, err) == -1)
    goto fail;
  return d;

fail:
  fm_disk_free (d);
  return NULL;
}

void
fm_disk_free (struct fm_disk *d)
{
  if (d) {
    fm_geometry_free (d->g);
    fm_runs_free (&d->dirty);
    smr_free (d->smr);
    free (d);
  }
}

const struct fm_profile *
fm_disk_profile (const struct fm_disk *d)
{
  return &d->p;
}

uint64_t
fm_disk_busy_until (const struct fm_disk *d)
{
  return d->t_free;
}

uint64_t
fm_disk_extend (struct fm_disk *d, uint64_t ns)
{
  /* Retries re-read the same sectors: the head stays, the stream stops. */
  rc_forget (d);
  d->t_free += ns;
  return d->t_free;
}

void
fm_disk_powercut (struct fm_disk *d, fm_destage_fn *fn, void *opaque)
{
  size_t i;

  for (i = 0; i < d->dirty.n; i++)
    fn (opaque, d->dirty.v[i].first * d->p.sector,
        d->dirty.v[i].n * d->p.sector);
  fm_runs_empty (&d->dirty);
  rc_forget (d);
}

uint64_t
fm_disk_dirty_bytes (const struct fm_disk *d)
{
  return d->dirty.total * d->p.sector;
}

void
fm_disk_on_destage (struct fm_disk *d, fm_destage_fn *fn, void *opaque)
{
  d->on_destage = fn;
  d->on_destage_opaque = opaque;
}

/* ---- time helpers ---- */

static uint64_t
bytes_time (uint64_t bytes, uint64_t bw)
{
  if (bw == 0 || bytes == 0)
    return 0;
  return (uint64_t)(((unsigned __int128)bytes * 1000000000u + bw - 1) / bw);
}

uint64_t
drv_bus_time (const struct fm_disk *d, uint64_t sectors)
{
  return bytes_time (sectors * d->p.sector, d->p.interface_bw);
}

/* ---- rotation ---- */

static uint64_t
angle_at (const struct fm_disk *d, uint64_t t)
{
  return ((t % R_UNITS) * d->p.rpm + d->phase0) % R_UNITS;
}

static uint64_t
sector_angle (const struct fm_disk *d, const struct fm_location *loc)
{
  return (loc->track_angle + (uint64_t)loc->sector * R_UNITS / loc->spt) %
         R_UNITS;
}

uint64_t
drv_rot_wait (const struct fm_disk *d, uint64_t t,
              const struct fm_location *loc)
{
  uint64_t w = (sector_angle (d, loc) + R_UNITS - angle_at (d, t)) % R_UNITS;

  if (R_UNITS - w <= ANGLE_SLACK_NS * (uint64_t)d->p.rpm)
    return 0;
  return (w + d->p.rpm - 1) / d->p.rpm;
}

/* Time for `n` sectors of a track of `spt` to pass under the head. */
uint64_t
drv_sectors_time (const struct fm_disk *d, uint64_t n, uint32_t spt)
{
  uint64_t per_rev = (uint64_t)spt * d->p.rpm;
  return (n * R_UNITS + per_rev - 1) / per_rev;
}

/* When the last of `k` sectors from loc has passed under the head, the
 * head being over loc's sector at time t.  Anchored to the platter angle,
 * not summed from rounded durations, so no drift builds up track by track.
 */
static uint64_t
pass_end (const struct fm_disk *d, uint64_t t, const struct fm_location *loc,
          uint64_t k)
{
  uint64_t nominal = k * R_UNITS / loc->spt;
  uint64_t end = (sector_angle (d, loc) + nominal) % R_UNITS;
  uint64_t delta = (end + R_UNITS - angle_at (d, t)) % R_UNITS;

  if (delta + R_UNITS / 2 < nominal) /* a whole track: end == start */
    delta += R_UNITS;
  return t + (delta + d->p.rpm - 1) / d->p.rpm;
}

/* ---- the arm ---- */

void
drv_put_head (struct fm_disk *d, const struct fm_location *loc, uint64_t lba)
{
  d->head_pos = loc->position;
  d->head_cyl = loc->cylinder;
  d->head_head = loc->head;
  d->head_lba = lba;
}

void
drv_locate (const struct fm_disk *d, uint64_t lba, struct fm_location *loc)
{
  fm_geometry_locate (d->g, lba < d->sectors ? lba : d->sectors - 1, loc);
}

/* Move the arm to loc and wait for its sector; returns the time then. */
uint64_t
drv_position (struct fm_disk *d, uint64_t t, const struct fm_location *loc,
              bool write, struct acct *a)
{
  uint64_t w;

  if (loc->cylinder != d->head_cyl) {
    double dist = loc->position - d->head_pos;
    uint64_t s = fm_seek_time (&d->seek, dist < 0 ? -dist : dist);

    if (write)
      s += d->p.write_settle_ns;
    t += s;
    a->seek += s;
    a->seeks++;
  } else if (loc->head != d->head_head) {
    t += d->p.track_switch_ns;
    a->seek += d->p.track_switch_ns;
  }
  w = drv_rot_wait (d, t, loc);
  a->rotation += w;
  return t + w;
}

/* Transfer n sectors from loc's sector, the head already over it at time
 * t.  Returns the end time; the head is left after the last sector.
 */
uint64_t
drv_transfer (struct fm_disk *d, uint64_t t, struct fm_location loc, uint64_t n,
              struct acct *a)
{
  uint64_t lba = loc.track_first + loc.sector;

  for (;;) {
    uint64_t k = loc.track_len - loc.sector, dt, w;

    if (k > n)
      k = n;
    dt = pass_end (d, t, &loc, k) - t;
    t += dt;
    a->transfer += dt;
    lba += k;
    n -= k;
    if (n == 0 || !fm_geometry_next_track (d->g, &loc))
      break;
    t += d->p.track_switch_ns;
    a->transfer += d->p.track_switch_ns;
    w = drv_rot_wait (d, t, &loc);
    t += w;
    a->rotation += w;
  }
  drv_put_head (d, &loc, lba);
  return t;
}

uint64_t
drv_mechanical (struct fm_disk *d, uint64_t t, uint64_t lba, uint64_t n,
                bool write, struct acct *a)
{
  struct fm_location loc;

  drv_locate (d, lba, &loc);
  t = drv_position (d, t, &loc, write, a);
  return drv_transfer (d, t, loc, n, a);
}

uint64_t
fm_disk_spare_detour (const struct fm_disk *d, uint64_t offset)
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

/* ---- write-back cache ---- */

bool
drv_dirty_covers (const struct fm_disk *d, uint64_t lba, uint64_t n)
{
  size_t i = fm_runs_find (&d->dirty, lba);

  return i < d->dirty.n && d->dirty.v[i].first <= lba &&
         d->dirty.v[i].first + d->dirty.v[i].n >= lba + n;
}

/* A model that cannot track its cache is unusable: out of memory here
 * aborts.
 */
static void
dirty_remove (struct fm_disk *d, uint64_t lba, uint64_t n)
{
  if (fm_runs_remove (&d->dirty, lba, n) == -1)
    abort ();
}

/* `tag` says where a shingled disk will put it (smr_tag); 0 otherwise. */
static void
dirty_add (struct fm_disk *d, uint64_t lba, uint64_t n, int tag)
{
  if (fm_runs_add (&d->dirty, lba, n, tag) == -1)
    abort ();
}

/* Where data reaches the media: a shingled disk decides where it goes. */
static uint64_t
media_write (struct fm_disk *d, uint64_t t, uint64_t lba, uint64_t n, int tag,
             struct acct *a)
{
  if (d->smr)
    return smr_write (d, t, lba, n, tag, a);
  return drv_mechanical (d, t, lba, n, true, a);
}

/* Write one dirty extent to the media, elevator order (the first extent
 * at or after the head, wrapping round).  Returns the time it finishes.
 */
static uint64_t
destage_one (struct fm_disk *d, uint64_t t, struct acct *a)
{
  size_t i = fm_runs_find (&d->dirty, d->head_lba);
  struct fm_run e;
  uint64_t t0 = t;

  if (i == d->dirty.n)
    i = 0;
  e = d->dirty.v[i];
  rc_stop (d, t);
  t = media_write (d, t, e.first, e.n, e.tag, a);
  dirty_remove (d, e.first, e.n);
  if (d->on_destage)
    d->on_destage (d->on_destage_opaque, e.first * d->p.sector,
                   e.n * d->p.sector);
  a->destage += t - t0;
  return t;
}

/* ---- requests ---- */

static void
ssd_submit (struct fm_disk *d, const struct fm_request *rq, uint64_t bytes,
            uint64_t t, struct fm_timing *out)
{
  uint64_t done = t + d->p.command_ns;
  uint64_t wbw = d->p.write_bandwidth ? d->p.write_bandwidth : d->p.bandwidth;

  switch (rq->op) {
    case FM_OP_READ:
      done += d->p.read_latency_ns;
      out->transfer_ns = bytes_time (bytes, d->p.bandwidth);
      break;
    case FM_OP_WRITE:
    case FM_OP_ZERO:
      done += d->p.write_latency_ns;
      out->transfer_ns = bytes_time (bytes, wbw);
      break;
    case FM_OP_TRIM:
    case FM_OP_FLUSH:
      break;
  }
  done += out->transfer_ns;
  out->overhead_ns = done - t - out->transfer_ns;
  out->done_ns = done;
}

static uint64_t
hdd_write (struct fm_disk *d, uint64_t lba, uint64_t n, bool fua, uint64_t t,
           struct acct *a, bool *cached)
{
  uint64_t cmd_end = t + d->p.command_ns;
  uint64_t bus_end = cmd_end + drv_bus_time (d, n);

  /* The buffer no longer holds what the media will hold. */
  rc_written (d, lba, n, t);
  if (!fua && n <= d->cache_sectors) {
    uint64_t ready = bus_end;

    while (d->dirty.total + n > d->cache_sectors)
      ready = destage_one (d, ready, a);
    dirty_add (d, lba, n, smr_tag (d, n));
    *cached = true;
    return ready;
  }
  dirty_remove (d, lba, n);
  rc_stop (d, t);
  return max64 (bus_end, media_write (d, cmd_end, lba, n, smr_tag (d, n), a));
}

void
fm_disk_submit (struct fm_disk *d, const struct fm_request *rq,
                struct fm_timing *out)
{
  const uint64_t ss = d->p.sector;
  uint64_t first, last, n, t, done = 0, bytes;
  struct acct a = {0};

  memset (out, 0, sizeof *out);

  /* Requests are in bytes at any alignment; the media works in sectors. */
  first = rq->offset / ss;
  last = rq->length ? (rq->offset + rq->length + ss - 1) / ss : first;
  if (first > d->sectors)
    first = d->sectors;
  if (last > d->sectors)
    last = d->sectors;
  n = last - first;
  bytes = n * ss;

  /* Idle time goes to destaging the write cache. */
  t = d->t_free;
  if (d->g && d->dirty.n > 0 && rq->arrival_ns > t + IDLE_DESTAGE_NS) {
    t += IDLE_DESTAGE_NS;
    while (d->dirty.n > 0 && t < rq->arrival_ns)
      t = destage_one (d, t, &a);
    d->t_free = t;
  }
  /* ... and a shingled disk's to cleaning its media cache. */
  if (d->smr)
    d->t_free = smr_idle (d, d->t_free, rq->arrival_ns, &a);
  t = max64 (rq->arrival_ns, d->t_free);
  out->start_ns = t;
  out->queue_ns = t - rq->arrival_ns;

  if (d->g == NULL) {
    ssd_submit (d, rq, bytes, t, out);
    d->t_free = out->done_ns;
    return;
  }

  switch (rq->op) {
    case FM_OP_READ:
      done = n ? rc_read (d, first, n, t, &a, &out->cache_hit)
               : t + d->p.command_ns;
      break;
    case FM_OP_WRITE:
    case FM_OP_ZERO:
      done = n ? hdd_write (d, first, n, rq->flags & FM_REQ_FUA, t, &a,
                            &out->write_cached)
               : t + d->p.command_ns;
      break;
    case FM_OP_TRIM:
      dirty_remove (d, first, n);
      done = t + d->p.command_ns;
      break;
    case FM_OP_FLUSH:
      done = t + d->p.command_ns;
      while (d->dirty.n > 0)
        done = destage_one (d, done, &a);
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
