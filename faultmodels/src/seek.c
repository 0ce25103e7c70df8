/* futuredisk — faultmodels: Lee's three-point seek curve (see seek.h). */
#include <math.h>

#include "faultmodels/seek.h"
#include "faultmodels/error.h"

int
fm_seek_init (struct fm_seek *s, uint64_t t2t_ns, uint64_t avg_ns,
              uint64_t full_ns, double cylinders, struct fm_err *err)
{
  double tmin = (double)t2t_ns, tavg = (double)avg_ns;
  double tfull = (double)full_ns;

  if (!(cylinders >= 2))
    return fm_fail (err, "seek curve needs at least 2 cylinders, got %g",
                    cylinders);
  /* a >= 0: the square-root term must not bend the curve downwards. */
  if (15 * tavg < 10 * tmin + 5 * tfull)
    return fm_fail (err,
                    "average seek %.3f ms is below (2*t2t + full)/3 = %.3f "
                    "ms: no monotone seek curve fits",
                    tavg / 1e6, (2 * tmin + tfull) / 3 / 1e6);
  /* Slope at the full stroke a/(2 sqrt C) + b >= 0. */
  if (4 * tmin + 11 * tfull < 15 * tavg)
    return fm_fail (err,
                    "average seek %.3f ms is above (4*t2t + 11*full)/15 = "
                    "%.3f ms: the seek curve would fall before full stroke",
                    tavg / 1e6, (4 * tmin + 11 * tfull) / 15 / 1e6);
  s->t_min = tmin;
  s->a = (-10 * tmin + 15 * tavg - 5 * tfull) / (3 * sqrt (cylinders));
  s->b = (7 * tmin - 15 * tavg + 8 * tfull) / (3 * cylinders);
  s->cylinders = cylinders;
  return 0;
}

uint64_t
fm_seek_time (const struct fm_seek *s, double d)
{
  double x;

  if (d <= 0)
    return 0;
  x = d > 1 ? d - 1 : 0;
  return (uint64_t)(s->t_min + s->a * sqrt (x) + s->b * x + 0.5);
}
