/* futuredisk — faultmodels: the drive's read buffer (see drive.h).
 *
 * The read-ahead stream: after a read the drive keeps reading following
 * sectors into its segment, at media speed, until it holds `readahead`
 * bytes past the last request or something moves the head.  A later read
 * that starts inside the segment either finds its data there (bus transfer
 * only) or rides the stream and completes when the media gets to its end.
 */
#include "drive.h"

/* How far a stream at (lba, t0) gets by time t, stopping at cap. */
static uint64_t
advance (const struct fm_disk *d, uint64_t lba, uint64_t t0, uint64_t t,
         uint64_t cap)
{
  uint64_t budget = t > t0 ? t - t0 : 0;
  struct fm_location loc;

  if (lba >= cap || budget == 0)
    return lba;
  drv_locate (d, lba, &loc);
  for (;;) {
    uint64_t k = loc.track_len - loc.sector, dt;

    if (k > cap - lba)
      k = cap - lba;
    dt = drv_sectors_time (d, k, loc.spt);
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
void
rc_stop (struct fm_disk *d, uint64_t t)
{
  struct fm_location loc;

  if (!d->ra.running)
    return;
  d->ra.lba = stream_pos (d, t);
  d->ra.t = t;
  d->ra.running = false;
  drv_locate (d, d->ra.lba, &loc);
  drv_put_head (d, &loc, d->ra.lba);
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

    drv_locate (d, cur, &loc);
    d->ra.lba = cur;
    d->ra.t = t + drv_rot_wait (d, t, &loc);
  }
  d->ra.cap = cap;
}

uint64_t
rc_read (struct fm_disk *d, uint64_t lba, uint64_t n, uint64_t t,
         struct acct *a, bool *hit)
{
  uint64_t end = lba + n, cmd_end = t + d->p.command_ns;
  uint64_t bus_end = cmd_end + drv_bus_time (d, n), media_end, from = lba;

  if (drv_dirty_covers (d, lba, n)) {
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

      drv_locate (d, d->ra.lba, &loc);
      media_end = drv_transfer (d, d->ra.t, loc, end - d->ra.lba, a);
      *hit = true;
      stream_start (d, lba, end, media_end);
      return max64 (bus_end, media_end);
    }
    if (lba <= cur)
      from = cur; /* the segment holds the head of the request */
  }
  rc_stop (d, t);
  media_end = d->smr ? smr_read (d, cmd_end, from, end - from, a)
                     : drv_mechanical (d, cmd_end, from, end - from, false, a);
  stream_start (d, lba, end, media_end);
  return max64 (bus_end, media_end);
}

bool
rc_ready (const struct fm_disk *d, uint64_t lba, uint64_t n, uint64_t t)
{
  uint64_t cur;

  if (drv_dirty_covers (d, lba, n))
    return true;
  if (!d->ra.valid || lba < d->ra.win_start)
    return false;
  cur = stream_pos (d, t);
  return lba + n <= cur || (lba <= cur && d->ra.running && cur < d->ra.cap);
}

void
rc_written (struct fm_disk *d, uint64_t lba, uint64_t n, uint64_t t)
{
  if (d->ra.valid && lba < d->ra.cap && lba + n > d->ra.win_start) {
    rc_stop (d, t);
    d->ra.valid = false;
  }
}

void
rc_forget (struct fm_disk *d)
{
  d->ra.running = false;
  d->ra.valid = false;
}
