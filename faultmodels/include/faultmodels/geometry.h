/* futuredisk — faultmodels: zoned recording geometry of a rotating disk.
 *
 * Constant linear density makes track capacity proportional to radius.
 * With k = outer/inner bandwidth, the zones have equal cylinder counts in
 * the design disk and radii falling linearly from 1 to 1/k, so zone 0 runs
 * at exactly the outer bandwidth, the last zone at exactly the inner one,
 * and their mean is the profile's (effective) bandwidth.  A track holds
 * BW * (T_rev + t_switch) bytes: the profile bandwidth already pays for the
 * head switch that track skew hides.
 *
 * Track skew: each track starts at the angle where the head arrives after
 * the previous track ends and a track switch passes, so a sequential
 * stream never waits for rotation, across short last tracks of a zone
 * included.  Angles are integers, FM_ANGLE_UNITS to a revolution; at `rpm`
 * revolutions per minute the platter turns exactly `rpm` units per ns.
 *
 * LBAs are laid out cylinder-major inside each zone.  A rescaled disk keeps
 * each zone's share of the LBA range and its sectors per track, so it has
 * fewer tracks; each of its cylinders sits at the radius the same LBA
 * fraction has on the design disk, so seeks cost what they cost there.
 */
#ifndef FAULTMODELS_GEOMETRY_H
#define FAULTMODELS_GEOMETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "faultmodels/error.h"
#include "faultmodels/profile.h"

#define FM_ANGLE_UNITS 60000000000ULL

struct fm_geometry;

struct fm_location {
  uint32_t zone;
  uint32_t head;
  uint32_t spt;         /* sectors per track in this zone */
  uint32_t sector;      /* index of the sector within its track */
  uint32_t track_len;   /* sectors on this track (the last may be short) */
  uint64_t track;       /* global track number */
  uint64_t cylinder;    /* cylinder on this (possibly rescaled) disk */
  uint64_t track_first; /* LBA of the track's first sector */
  uint64_t track_angle; /* angle of the track's first sector */
  double position;      /* radial position in design-disk cylinders */
};

/* Build the zone table for an HDD profile (sizes in physical sectors).
 * Returns NULL with err filled for SSD profiles or impossible geometry.
 */
extern struct fm_geometry *fm_geometry_new (const struct fm_profile *p,
                                            struct fm_err *err);
extern void fm_geometry_free (struct fm_geometry *g);

extern uint64_t fm_geometry_sectors (const struct fm_geometry *g);
extern double fm_geometry_design_cylinders (const struct fm_geometry *g);

/* Locate an LBA (in physical sectors, < fm_geometry_sectors). O(log zones).
 */
extern void fm_geometry_locate (const struct fm_geometry *g, uint64_t lba,
                                struct fm_location *loc);

/* Move loc to the first sector of the next track (no search: transfers
 * and streams walk track by track).  False past the last track.
 */
extern bool fm_geometry_next_track (const struct fm_geometry *g,
                                    struct fm_location *loc);

#endif
