/* futuredisk — faultmodels: zoned recording geometry (see geometry.h).
 *
 * Method.  Zone i of n has relative radius r_i = 1 - (1 - 1/k) i/(n-1), so
 * r_0 = 1 and r_{n-1} = 1/k.  Zones have equal cylinder counts, so zone i
 * holds a share r_i / sum(r) of the sectors and its tracks hold
 * spt_i = round(track_out * r_i / sector) sectors, where track_out =
 * BW_outer * (T_rev + t_switch).  Every zone then has the same number of
 * tracks, the mean track is (1 + 1/k)/2 of the outer one, and reading all
 * tracks takes tracks * (T_rev + t_switch) = capacity / bandwidth.
 */
#include <math.h>
#include <stdlib.h>

#include "faultmodels/geometry.h"
#include "faultmodels/error.h"

struct zone {
  uint64_t first_lba;   /* first sector of the zone */
  uint64_t sectors;     /* sectors in the zone */
  uint64_t first_track; /* global number of its first track */
  uint64_t first_angle; /* angle of its first track's first sector */
  uint32_t spt;         /* sectors per track */
};

struct fm_geometry {
  uint32_t nzones; /* zones holding at least one sector */
  uint32_t heads;
  uint64_t sectors;
  uint64_t tracks;
  uint64_t cylinders;
  double design_cylinders;
  double pos_scale; /* design cylinders per cylinder of this disk */
  uint64_t skew;    /* angle a track switch turns the platter */
  struct zone zones[];
};

/* The angle the platter turns during one track switch. */
static uint64_t
track_skew (const struct fm_profile *p)
{
  return (uint64_t)(((unsigned __int128)p->track_switch_ns * p->rpm) %
                    FM_ANGLE_UNITS);
}

/* Split `sectors` over the zones in proportion to radius; returns the
 * track count and, if z is not NULL, fills the zone table.
 */
static uint64_t
layout (const struct fm_profile *p, uint64_t sectors, struct zone *z,
        uint32_t *nzones)
{
  const uint32_t n = p->zones;
  const double k = p->zone_ratio;
  const double track_out = fm_profile_bw_outer (p) *
                           (fm_profile_rev_ns (p) + p->track_switch_ns) / 1e9;
  const uint64_t skew = track_skew (p);
  double rsum = 0, rcum = 0;
  uint64_t lba = 0, tracks = 0, angle = 0;
  uint32_t i, used = 0;

  for (i = 0; i < n; i++)
    rsum += n > 1 ? 1 - (1 - 1 / k) * i / (n - 1) : 1;
  for (i = 0; i < n; i++) {
    double r = n > 1 ? 1 - (1 - 1 / k) * i / (n - 1) : 1;
    uint64_t want, spt;

    /* Round the running total, so the shares add up to exactly `sectors`
     * and no zone's error compounds into the next.
     */
    rcum += r;
    if (i + 1 == n)
      want = sectors - lba;
    else
      want = (uint64_t)llround ((double)sectors * rcum / rsum) - lba;
    if (lba + want > sectors)
      want = sectors - lba;
    spt = (uint64_t)llround (track_out * r / p->sector);
    if (spt < 1)
      spt = 1;
    if (want == 0)
      continue;
    if (z) {
      uint64_t ntracks = (want + spt - 1) / spt,
               last = want - (ntracks - 1) * spt;

      z[used].first_angle = angle;
      /* The next zone starts where this one's last track ends, plus a
       * switch; a short last track ends part way round.
       */
      angle = (uint64_t)((angle + (unsigned __int128)ntracks * skew +
                          (last < spt ? last * FM_ANGLE_UNITS / spt : 0)) %
                         FM_ANGLE_UNITS);
      z[used].first_lba = lba;
      z[used].sectors = want;
      z[used].first_track = tracks;
      z[used].spt = (uint32_t)spt;
    }
    used++;
    lba += want;
    tracks += (want + spt - 1) / spt;
  }
  if (nzones)
    *nzones = used;
  return tracks;
}

struct fm_geometry *
fm_geometry_new (const struct fm_profile *p, struct fm_err *err)
{
  struct fm_geometry *g;
  uint64_t design_tracks;

  if (!fm_profile_rotating (p)) {
    fm_fail (err, "profile %s: only a rotating disk has a geometry", p->name);
    return NULL;
  }
  if (fm_profile_validate (p, err) == -1)
    return NULL;
  g = calloc (1, sizeof *g + p->zones * sizeof (struct zone));
  if (g == NULL) {
    fm_fail (err, "out of memory building the zone table");
    return NULL;
  }
  g->heads = p->heads;
  g->sectors = p->capacity / p->sector;
  g->tracks = layout (p, g->sectors, g->zones, &g->nzones);
  g->cylinders = (g->tracks + p->heads - 1) / p->heads;
  design_tracks = layout (p, p->design_capacity / p->sector, NULL, NULL);
  g->design_cylinders = (double)((design_tracks + p->heads - 1) / p->heads);
  if (g->design_cylinders < 2)
    g->design_cylinders = 2;
  g->pos_scale = g->design_cylinders / (double)g->cylinders;
  g->skew = track_skew (p);
  return g;
}

void
fm_geometry_free (struct fm_geometry *g)
{
  free (g);
}

uint64_t
fm_geometry_sectors (const struct fm_geometry *g)
{
  return g->sectors;
}

double
fm_geometry_design_cylinders (const struct fm_geometry *g)
{
  return g->design_cylinders;
}

static const struct zone *
find_zone (const struct fm_geometry *g, uint64_t lba)
{
  uint32_t lo = 0, hi = g->nzones; /* first zone starting after lba */

  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (g->zones[mid].first_lba <= lba)
      lo = mid + 1;
    else
      hi = mid;
  }
  return &g->zones[lo - 1];
}

/* Fill loc for an LBA known to lie in zone z. */
static void
fill (const struct fm_geometry *g, const struct zone *z, uint64_t lba,
      struct fm_location *loc)
{
  uint64_t off = lba - z->first_lba;
  uint64_t trk = off / z->spt;
  uint64_t left = z->sectors - trk * z->spt;

  loc->zone = (uint32_t)(z - g->zones);
  loc->spt = z->spt;
  loc->sector = (uint32_t)(off % z->spt);
  loc->track_len = left < z->spt ? (uint32_t)left : z->spt;
  loc->track = z->first_track + trk;
  loc->track_first = z->first_lba + trk * z->spt;
  loc->cylinder = loc->track / g->heads;
  loc->head = (uint32_t)(loc->track % g->heads);
  loc->position = (double)loc->cylinder * g->pos_scale;
  loc->track_angle =
      (uint64_t)((z->first_angle + (unsigned __int128)trk * g->skew) %
                 FM_ANGLE_UNITS);
}

void
fm_geometry_locate (const struct fm_geometry *g, uint64_t lba,
                    struct fm_location *loc)
{
  fill (g, find_zone (g, lba), lba, loc);
}

bool
fm_geometry_next_track (const struct fm_geometry *g, struct fm_location *loc)
{
  const struct zone *z = &g->zones[loc->zone];
  uint64_t next = loc->track_first + loc->track_len;

  if (next < z->first_lba + z->sectors)
    fill (g, z, next, loc);
  else if (loc->zone + 1 < g->nzones)
    fill (g, z + 1, next, loc);
  else
    return false;
  return true;
}
