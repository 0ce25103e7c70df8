/* futuredisk — faultmodels: the mechanics of one drive: positioning and
 * transfer (drive.h).  Nothing here calls another part of the drive.
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
 * */
#include <math.h>
#include <stdlib.h>

#include "drive.h"

/* ---- time helpers ---- */

uint64_t
drv_bytes_time (uint64_t bytes, uint64_t bw)
{
  if (bw == 0 || bytes == 0)
    return 0;
  return (uint64_t)(((unsigned __int128)bytes * 1000000000u + bw - 1) / bw);
}

uint64_t
drv_bus_time (const struct drive *d, uint64_t sectors)
{
  return drv_bytes_time (sectors * d->p.sector, d->p.interface_bw);
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
