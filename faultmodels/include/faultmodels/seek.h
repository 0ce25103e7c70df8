/* futuredisk — faultmodels: the seek curve.
 *
 * A seek of one cylinder or less is a micro-jog the track-following servo
 * makes in place: it costs the datasheet's track-to-track time t_1.  Any
 * longer seek is a real move that ends in a settle, and short moves are
 * dominated by it (an extracted 4 TB, 7200 rpm seek table is flat at
 * 1.4-1.8 ms up to 140 cylinders: G4_LBA_64bit_4T.seeks in
 * https://github.com/westerndigitalcorporation/DiskSim).  So past one
 * cylinder the curve is Lee's three-point form standing on a settle floor
 * t_s instead of on t_1:
 *
 *   t(d) = t_1                                  0 < d <= 1
 *   t(d) = t_s + a*sqrt(d-1) + b*(d-1)          d > 1
 *
 * with a and b chosen so that t(C) = full stroke and the mean over
 * independent uniform start and end cylinders (distance density 2(1-x))
 * equals the datasheet average (the pairs within one cylinder weigh
 * O(1/C) and are left out):
 *
 *   a = (-10 t_s + 15 t_avg -  5 t_full) / (3 sqrt C)
 *   b = (  7 t_s - 15 t_avg +  8 t_full) / (3 C)
 *
 * The curve is monotone iff t_1 <= t_s, a >= 0 and a/(2 sqrt C) + b >= 0,
 * i.e. 15 t_avg >= 10 t_s + 5 t_full and 4 t_s + 11 t_full >= 15 t_avg
 * (independent of C).  t_s = t_1 is Lee's curve itself.
 *
 * Writes settle longer: the head must sit tighter on the track before it
 * may write, or it damages the neighbour.  A write seek is the read seek
 * plus the datasheet's write-minus-read difference: that of track-to-track
 * for a micro-jog, that of the average for every longer seek (a longer
 * settle, the same for every real move), so the mean write seek is the
 * datasheet's write average.  Laptop datasheets give the same difference
 * for the full stroke as for the average (Travelstar 5K160: read
 * 1.0/12/20 ms, write 1.1/13/21 ms).  fm_seek_init refuses any set of
 * numbers that breaks these rules.
 */
#ifndef FAULTMODELS_SEEK_H
#define FAULTMODELS_SEEK_H

#include <stdint.h>

#include "faultmodels/error.h"

/* The datasheet numbers, ns (0 in settle_ns means t_s = t_1), and what a
 * write adds: write minus read track-to-track, write minus read average.
 */
struct fm_seek_spec {
  uint64_t t2t_ns, settle_ns, avg_ns, full_ns; /* read seeks */
  uint64_t write_t2t_extra_ns, write_extra_ns; /* a write's extra settle */
};

struct fm_seek {
  double t_1, t_s, a, b; /* ns, ns, ns per sqrt(cylinder), ns per cylinder */
  double w_1, w_s;       /* a write's extra ns: micro-jog, longer seeks */
  double cylinders;      /* C: the stroke, in cylinders */
};

extern int fm_seek_init (struct fm_seek *s, const struct fm_seek_spec *spec,
                         double cylinders, struct fm_err *err);

/* Read seek time in ns for a distance of d cylinders (0 = no seek;
 * fractional distances up to one cylinder cost a track-to-track seek).
 */
extern uint64_t fm_seek_time (const struct fm_seek *s, double d);

/* The same seek ending in a write. */
extern uint64_t fm_seek_write_time (const struct fm_seek *s, double d);

#endif
