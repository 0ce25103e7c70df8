/* futuredisk — faultmodels: the seek curve.
 *
 * Lee's three-point curve, t(d) = t_min + a*sqrt(d-1) + b*(d-1) for a seek
 * of d >= 1 cylinders, with a and b chosen so that t(1) = track-to-track,
 * t(C) = full stroke, and the mean over independent uniform start and end
 * cylinders (distance density 2(1-x)) equals the datasheet average:
 *
 *   a = (-10 t_min + 15 t_avg -  5 t_full) / (3 sqrt C)
 *   b = (  7 t_min - 15 t_avg +  8 t_full) / (3 C)
 *
 * The curve is monotone on [1, C] iff a >= 0 and a/(2 sqrt C) + b >= 0,
 * i.e. 15 t_avg >= 10 t_min + 5 t_full and 4 t_min + 11 t_full >= 15 t_avg
 * (independent of C); fm_seek_init refuses anything else.
 */
#ifndef FAULTMODELS_SEEK_H
#define FAULTMODELS_SEEK_H

#include <stdint.h>

#include "faultmodels/error.h"

struct fm_seek {
  double t_min, a, b; /* ns, ns per sqrt(cylinder), ns per cylinder */
  double cylinders;   /* C: the stroke, in cylinders */
};

extern int fm_seek_init (struct fm_seek *s, uint64_t t2t_ns, uint64_t avg_ns,
                         uint64_t full_ns, double cylinders,
                         struct fm_err *err);

/* Seek time in ns for a distance of d cylinders (0 = no seek; fractional
 * distances below one cylinder cost a track-to-track seek).
 */
extern uint64_t fm_seek_time (const struct fm_seek *s, double d);

#endif
