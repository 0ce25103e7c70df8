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

/* ---- time helpers ---- */

static uint64_t
bytes_time (uint64_t bytes, uint64_t bw)
{
  if (bw == 0 || bytes == 0)
    return 0;
  return (uint64_t)(((unsigned __int128)bytes * 1000000000u + bw - 1) / bw);
}

uint64_t
drv_bus_time (const struct drive *d, uint64_t sectors)
{
  return bytes_time (sectors * d->p.sector, d->p.interface_bw);
}

/* ---- rotation ---- */

uint64_t
drv_angle_at (const struct drive *d, uint64_t t)
{
  return ((t % R_UNITS) * d->p.rpm + d->phase0) % R_UNITS;
}

uint64_t
drv_sector_angle (const struct drive *d, const struct fm_location *loc)
{
  return (loc->track_angle + (uint64_t)loc->sector * R_UNITS / loc->spt) %
         R_UNITS;
}

uint64_t
drv_rot_wait (const struct drive *d, uint64_t t, const struct fm_location *loc)
{
  uint64_t w =
      (drv_sector_angle (d, loc) + R_UNITS - drv_angle_at (d, t)) % R_UNITS;

  if (R_UNITS - w <= ANGLE_SLACK_NS * (uint64_t)d->p.rpm)
    return 0;
  return (w + d->p.rpm - 1) / d->p.rpm;
}

/* Time for `n` sectors of a track of `spt` to pass under the head. */
uint64_t
drv_sectors_time (const struct drive *d, uint64_t n, uint32_t spt)
{
  uint64_t per_rev = (uint64_t)spt * d->p.rpm;
  return (n * R_UNITS + per_rev - 1) / per_rev;
}

/* When the last of `k` sectors from loc has passed under the head, the
 * head being over loc's sector at time t.  Anchored to the platter angle,
 * not summed from rounded durations, so no drift builds up track by track.
 */
static uint64_t
pass_end (const struct drive *d, uint64_t t, const struct fm_location *loc,
          uint64_t k)
{
  uint64_t nominal = k * R_UNITS / loc->spt;
  uint64_t end = (drv_sector_angle (d, loc) + nominal) % R_UNITS;
  uint64_t delta = (end + R_UNITS - drv_angle_at (d, t)) % R_UNITS;

  if (delta + R_UNITS / 2 < nominal) /* a whole track: end == start */
    delta += R_UNITS;
  return t + (delta + d->p.rpm - 1) / d->p.rpm;
}

/* ---- the arm ---- */

void
drv_put_head (struct drive *d, const struct fm_location *loc, uint64_t lba)
{
  d->head_pos = loc->position;
  d->head_cyl = loc->cylinder;
  d->head_head = loc->head;
  d->head_lba = lba;
}

void
drv_locate (const struct drive *d, uint64_t lba, struct fm_location *loc)
{
  fm_geometry_locate (d->g, lba < d->sectors ? lba : d->sectors - 1, loc);
}

/* How long the arm takes to reach loc's track: a seek (with the write
 * settle), a head switch, or nothing.  *seek says whether the arm moved.
 */
uint64_t
drv_arm_time (const struct drive *d, const struct fm_location *loc, bool write,
              bool *seek)
{
  *seek = loc->cylinder != d->head_cyl;
  if (*seek) {
    double dist = fabs (loc->position - d->head_pos);

    return write ? fm_seek_write_time (&d->seek, dist)
                 : fm_seek_time (&d->seek, dist);
  }
  return loc->head != d->head_head ? d->p.track_switch_ns : 0;
}

/* Move the arm to loc and wait for its sector; returns the time then. */
uint64_t
drv_position (struct drive *d, uint64_t t, const struct fm_location *loc,
              bool write, struct acct *a)
{
  bool seek;
  uint64_t s = drv_arm_time (d, loc, write, &seek), w;

  t += s;
  a->seek += s;
  a->seeks += seek;
  w = drv_rot_wait (d, t, loc);
  a->rotation += w;
  return t + w;
}

uint64_t
drv_price (const struct drive *d, uint64_t t, const struct fm_location *loc,
           bool write, uint64_t bound)
{
  bool seek;
  uint64_t s = drv_arm_time (d, loc, write, &seek);

  /* Rotation only adds: a seek past the bound loses already. */
  if (s >= bound)
    return UINT64_MAX;
  return s + drv_rot_wait (d, t + s, loc);
}

/* Transfer n sectors from loc's sector, the head already over it at time
 * t.  Returns the end time; the head is left after the last sector.
 */
uint64_t
drv_transfer (struct drive *d, uint64_t t, struct fm_location loc, uint64_t n,
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
drv_mechanical (struct drive *d, uint64_t t, uint64_t lba, uint64_t n,
                bool write, struct acct *a)
{
  struct fm_location loc;

  drv_locate (d, lba, &loc);
  t = drv_position (d, t, &loc, write, a);
  return drv_transfer (d, t, loc, n, a);
}

/* Write n sectors from lba to the media.  With `rmw` a partial physical
 * sector must be merged first, which costs RMW_REVS revolutions more than
 * an aligned write's ordinary wait: HP's Advanced Format paper measures
 * +16-22 ms, two revolutions at 7200 and at 5400 rpm
 * (https://manualsdump.com/en/manuals/hp-dx2390/290504/19) — one to read
 * the sector back as it passes and one before the merged sector can be
 * written [E: the split is ours, the total HP's].  Rounding each
 * revolution up leaves the head a fraction of a ns past the sector, well
 * inside ANGLE_SLACK_NS.
 */
#define RMW_REVS 2

uint64_t
drv_media_write (struct drive *d, uint64_t t, uint64_t lba, uint64_t n,
                 bool rmw, int tag, struct acct *a)
{
  uint64_t rev = rmw ? RMW_REVS * ((R_UNITS + d->p.rpm - 1) / d->p.rpm) : 0;
  struct fm_location loc;

  a->rotation += rev;
  /* A shingled disk decides where it goes: its media cache or its band. */
  if (d->smr)
    return smr_write (d, t + rev, lba, n, tag, a);
  drv_locate (d, lba, &loc);
  t = drv_position (d, t, &loc, true, a);
  return drv_transfer (d, t + rev, loc, n, a);
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

/* The drive was idle until `until` (the next arrival): the head's free
 * time goes to destaging (destage.c) ...
 */
void
drv_idle (struct drive *d, uint64_t until, uint64_t read_at)
{
  if (d->g)
    wc_background (d, until, read_at);
  /* ... and a shingled disk's to cleaning its media cache. */
  if (d->smr)
    d->t_free = smr_idle (d, d->t_free, until, &d->idle);
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
