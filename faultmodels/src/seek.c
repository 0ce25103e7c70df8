/* futuredisk — faultmodels: the seek curve (see seek.h). */
#include <math.h>

#include "faultmodels/seek.h"
#include "faultmodels/error.h"

int
fm_seek_init (struct fm_seek *s, const struct fm_seek_spec *spec,
              double cylinders, struct fm_err *err)
{
  double tavg = (double)spec->avg_ns, tfull = (double)spec->full_ns;
  double t1 = (double)spec->t2t_ns;
  double ts = spec->settle_ns ? (double)spec->settle_ns : t1;
  double w1 = (double)spec->write_t2t_extra_ns;
  double ws = (double)spec->write_extra_ns;

  if (!(cylinders >= 2))
    return fm_fail (err, "seek curve needs at least 2 cylinders, got %g",
                    cylinders);
  if (ts < t1)
    return fm_fail (err, "settle %.3f ms is below the track-to-track seek",
                    ts / 1e6);
  /* a >= 0: the square-root term must not bend the curve downwards. */
  if (15 * tavg < 10 * ts + 5 * tfull)
    return fm_fail (err,
                    "average seek %.3f ms is below (2*settle + full)/3 = "
                    "%.3f ms (settle %.3f ms): no monotone seek curve fits",
                    tavg / 1e6, (2 * ts + tfull) / 3 / 1e6, ts / 1e6);
  /* Slope at the full stroke a/(2 sqrt C) + b >= 0. */
  if (4 * ts + 11 * tfull < 15 * tavg)
    return fm_fail (err,
                    "average seek %.3f ms is above (4*settle + 11*full)/15 = "
                    "%.3f ms (settle %.3f ms): the seek curve would fall "
                    "before full stroke",
                    tavg / 1e6, (4 * ts + 11 * tfull) / 15 / 1e6, ts / 1e6);
  if (t1 + w1 > ts + ws)
    return fm_fail (err,
                    "a track-to-track write seek (%.3f ms) would be slower "
                    "than one just past it (%.3f ms)",
                    (t1 + w1) / 1e6, (ts + ws) / 1e6);
  s->t_1 = t1;
  s->t_s = ts;
  s->a = (-10 * ts + 15 * tavg - 5 * tfull) / (3 * sqrt (cylinders));
  s->b = (7 * ts - 15 * tavg + 8 * tfull) / (3 * cylinders);
  s->w_1 = w1;
  s->w_s = ws;
  s->cylinders = cylinders;
  return 0;
}

uint64_t
fm_seek_time (const struct fm_seek *s, double d)
{
  double x = d - 1;

  if (d <= 0)
    return 0;
  if (x <= 0)
    return (uint64_t)(s->t_1 + 0.5);
  return (uint64_t)(s->t_s + s->a * sqrt (x) + s->b * x + 0.5);
}

uint64_t
fm_seek_write_time (const struct fm_seek *s, double d)
{
  if (d <= 0)
    return 0;
  return fm_seek_time (s, d) + (uint64_t)((d <= 1 ? s->w_1 : s->w_s) + 0.5);
}
