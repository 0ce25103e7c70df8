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
 * The read-ahead stream: after a read the drive keeps reading following
 * sectors into its segment, at media speed, until it holds `readahead`
 * bytes past the last request or something moves the head.  A later read
 * that starts inside the segment either finds its data there (bus transfer
 * only) or rides the stream and completes when the media gets to its end.
 */
#include <stdlib.h>
#include <string.h>

#include "faultmodels/disk.h"
#include "faultmodels/geometry.h"
#include "faultmodels/rng.h"
#include "faultmodels/seek.h"
#include "faultmodels/error.h"
#include "runs.h"

#define R_UNITS FM_ANGLE_UNITS

/* Well below one sector's time on any profile (1.5 us for 512 B sectors at
 * 333 MB/s) and far above the few ns of accumulated rounding.
 */
#define ANGLE_SLACK_NS 100

/* The drive starts background destage only after it has been idle this
 * long [E], so a busy host is not made to wait behind a destage that an
 * idle timer would never have started.
 */
#define IDLE_DESTAGE_NS 2000000ULL

struct stream {
  bool valid;         /* the segment holds data from a read */
  bool running;       /* still reading ahead (the head is on it) */
  uint64_t win_start; /* first sector still in the segment */
  uint64_t lba;       /* the stream had reached this sector ... */
  uint64_t t;         /* ... at this time */
  uint64_t cap;       /* read-ahead stops here (exclusive) */
};

struct fm_disk {
  struct fm_profile p;
  struct fm_disk_options o;
  struct fm_geometry *g; /* NULL for an SSD */
  struct fm_seek seek;
  uint64_t sectors;
  uint64_t phase0; /* platter angle at t = 0 */
  uint64_t ra_sectors, cache_sectors;
  uint64_t t_free; /* the drive is idle from here */

  /* The arm. */
  double head_pos; /* design cylinders */
  uint64_t head_cyl;
  uint32_t head_head;
  uint64_t head_lba; /* sector under the head after the last transfer */

  struct stream ra;

  /* Write-back cache: the dirty sectors, as merged runs. */
  struct fm_runs dirty;

  fm_destage_fn *on_destage;
  void *on_destage_opaque;
};

/* Where the time of one request went. */
struct acct {
  uint64_t seek, rotation, transfer, destage;
  uint32_t seeks;
};

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
  if (p->kind == FM_KIND_HDD) {
    d->g = fm_geometry_new (p, err);
    if (d->g == NULL)
      goto fail;
    if (fm_seek_init (&d->seek, p->seek_t2t_ns, p->seek_avg_ns, p->seek_full_ns,
                      fm_geometry_design_cylinders (d->g), err) == -1)
      goto fail;
    d->phase0 = fm_below (fm_hash (seed, FM_STREAM_PHASE, 0, 0), R_UNITS);
  }
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
  d->ra.running = false;
  d->ra.valid = false;
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
  d->ra.valid = d->ra.running = false;
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

static uint64_t
bus_time (const struct fm_disk *d, uint64_t sectors)
{
  return bytes_time (sectors * d->p.sector, d->p.interface_bw);
}

static uint64_t
max64 (uint64_t a, uint64_t b)
{
  return a > b ? a : b;
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

static uint64_t
rot_wait (const struct fm_disk *d, uint64_t t, const struct fm_location *loc)
{
  uint64_t w = (sector_angle (d, loc) + R_UNITS - angle_at (d, t)) % R_UNITS;

  if (R_UNITS - w <= ANGLE_SLACK_NS * (uint64_t)d->p.rpm)
    return 0;
  return (w + d->p.rpm - 1) / d->p.rpm;
}

/* Time for `n` sectors of a track of `spt` to pass under the head. */
static uint64_t
sectors_time (const struct fm_disk *d, uint64_t n, uint32_t spt)
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

static void
put_head (struct fm_disk *d, const struct fm_location *loc, uint64_t lba)
{
  d->head_pos = loc->position;
  d->head_cyl = loc->cylinder;
  d->head_head = loc->head;
  d->head_lba = lba;
}

static void
locate (const struct fm_disk *d, uint64_t lba, struct fm_location *loc)
{
  fm_geometry_locate (d->g, lba < d->sectors ? lba : d->sectors - 1, loc);
}

/* Move the arm to loc and wait for its sector; returns the time then. */
static uint64_t
position (struct fm_disk *d, uint64_t t, const struct fm_location *loc,
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
  w = rot_wait (d, t, loc);
  a->rotation += w;
  return t + w;
}

/* Transfer n sectors from loc's sector, the head already over it at time
 * t.  Returns the end time; the head is left after the last sector.
 */
static uint64_t
transfer (struct fm_disk *d, uint64_t t, struct fm_location loc, uint64_t n,
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
    w = rot_wait (d, t, &loc);
    t += w;
    a->rotation += w;
  }
  put_head (d, &loc, lba);
  return t;
}

static uint64_t
mechanical (struct fm_disk *d, uint64_t t, uint64_t lba, uint64_t n, bool write,
            struct acct *a)
{
  struct fm_location loc;

  locate (d, lba, &loc);
  t = position (d, t, &loc, write, a);
  return transfer (d, t, loc, n, a);
}

uint64_t
fm_disk_spare_detour (const struct fm_disk *d, uint64_t offset)
{
  struct fm_location loc;
  double dist;

  if (d->g == NULL)
    return 0;
  locate (d, offset / d->p.sector, &loc);
  dist = fm_geometry_design_cylinders (d->g) - loc.position;
  return 2 * fm_seek_time (&d->seek, dist > 1 ? dist : 1) +
         (uint64_t)(fm_profile_rev_ns (&d->p) / 2);
}

/* ---- the read-ahead stream ---- */

/* How far a stream at (lba, t0) gets by time t, stopping at cap. */
static uint64_t
advance (const struct fm_disk *d, uint64_t lba, uint64_t t0, uint64_t t,
         uint64_t cap)
{
  uint64_t budget = t > t0 ? t - t0 : 0;
  struct fm_location loc;

  if (lba >= cap || budget == 0)
    return lba;
  locate (d, lba, &loc);
  for (;;) {
    uint64_t k = loc.track_len - loc.sector, dt;

    if (k > cap - lba)
      k = cap - lba;
    dt = sectors_time (d, k, loc.spt);
    if (dt > budget)
      return lba + budget * loc.spt * d->p.rpm / R_UNITS;
    budget -= dt;
    lba += k;
    if (lba >= cap || budget < d->p.track_switch_ns ||
        !fm_geometry_next_track (d->g, &loc))
      return lba;
    budget -= d->p.track_switch_ns;
  }
}

static uint64_t
stream_pos (const struct fm_disk *d, uint64_t t)
{
  if (!d->ra.running)
    return d->ra.lba;
  return advance (d, d->ra.lba, d->ra.t, t, d->ra.cap);
}

/* The head is needed elsewhere at time t: stop reading ahead, leaving the
 * arm over the sector the stream had reached.
 */
static void
stream_stop (struct fm_disk *d, uint64_t t)
{
  struct fm_location loc;

  if (!d->ra.running)
    return;
  d->ra.lba = stream_pos (d, t);
  d->ra.t = t;
  d->ra.running = false;
  locate (d, d->ra.lba, &loc);
  put_head (d, &loc, d->ra.lba);
}

/* Start reading ahead after a read of [start, end) that ended at time t. */
static void
stream_start (struct fm_disk *d, uint64_t start, uint64_t end, uint64_t t)
{
  if (d->ra_sectors == 0) {
    d->ra.valid = d->ra.running = false;
    return;
  }
  d->ra.valid = true;
  d->ra.running = end < d->sectors;
  d->ra.win_start = start;
  d->ra.lba = end;
  d->ra.t = t;
  d->ra.cap =
      end + d->ra_sectors < d->sectors ? end + d->ra_sectors : d->sectors;
}

/* A segment hit at time t: keep the segment ra_sectors ahead of `end`,
 * restarting the stream if it had filled up and the head is still there.
 */
static void
stream_extend (struct fm_disk *d, uint64_t end, uint64_t t)
{
  uint64_t cap =
      end + d->ra_sectors < d->sectors ? end + d->ra_sectors : d->sectors;
  uint64_t cur = stream_pos (d, t);

  if (cap <= d->ra.cap)
    return;
  if (d->ra.running && cur == d->ra.cap) {
    struct fm_location loc;

    locate (d, cur, &loc);
    d->ra.lba = cur;
    d->ra.t = t + rot_wait (d, t, &loc);
  }
  d->ra.cap = cap;
}

/* ---- write-back cache ---- */

static bool
dirty_covers (const struct fm_disk *d, uint64_t lba, uint64_t n)
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

static void
dirty_add (struct fm_disk *d, uint64_t lba, uint64_t n)
{
  if (fm_runs_add (&d->dirty, lba, n, 0) == -1)
    abort ();
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
  stream_stop (d, t);
  t = mechanical (d, t, e.first, e.n, true, a);
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
hdd_read (struct fm_disk *d, uint64_t lba, uint64_t n, uint64_t t,
          struct acct *a, bool *hit)
{
  uint64_t end = lba + n, cmd_end = t + d->p.command_ns;
  uint64_t bus_end = cmd_end + bus_time (d, n), media_end, from = lba;

  if (dirty_covers (d, lba, n)) {
    *hit = true;
    return bus_end;
  }
  if (d->ra.valid && lba >= d->ra.win_start) {
    uint64_t cur = stream_pos (d, t);

    if (end <= cur) { /* all of it is in the segment */
      *hit = true;
      stream_extend (d, end, t);
      return bus_end;
    }
    if (lba <= cur && d->ra.running && cur < d->ra.cap) {
      /* Ride the stream: the media reaches `end` when it reaches it. */
      struct fm_location loc;

      locate (d, d->ra.lba, &loc);
      media_end = transfer (d, d->ra.t, loc, end - d->ra.lba, a);
      *hit = true;
      stream_start (d, lba, end, media_end);
      return max64 (bus_end, media_end);
    }
    if (lba <= cur)
      from = cur; /* the segment holds the head of the request */
  }
  stream_stop (d, t);
  media_end = mechanical (d, cmd_end, from, end - from, false, a);
  stream_start (d, lba, end, media_end);
  return max64 (bus_end, media_end);
}

static uint64_t
hdd_write (struct fm_disk *d, uint64_t lba, uint64_t n, bool fua, uint64_t t,
           struct acct *a, bool *cached)
{
  uint64_t cmd_end = t + d->p.command_ns;
  uint64_t bus_end = cmd_end + bus_time (d, n);

  /* The segment no longer holds what the media will hold. */
  if (d->ra.valid && lba < d->ra.cap && lba + n > d->ra.win_start) {
    stream_stop (d, t);
    d->ra.valid = false;
  }
  if (!fua && n <= d->cache_sectors) {
    uint64_t ready = bus_end;

    while (d->dirty.total + n > d->cache_sectors)
      ready = destage_one (d, ready, a);
    dirty_add (d, lba, n);
    *cached = true;
    return ready;
  }
  dirty_remove (d, lba, n);
  stream_stop (d, t);
  return max64 (bus_end, mechanical (d, cmd_end, lba, n, true, a));
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
      done = n ? hdd_read (d, first, n, t, &a, &out->cache_hit)
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
