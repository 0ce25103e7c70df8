/* futuredisk — harness: medians, MADs and Wilson intervals (robust.h). */
#include <math.h>
#include <stdlib.h>

#include "robust.h"

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double
fd_median (double *v, size_t n)
{
  if (n == 0)
    return 0;
  qsort (v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double
fd_mad (double *v, size_t n)
{
  double m = fd_median (v, n), *d, r;
  size_t i;

  if (n == 0 || (d = malloc (n * sizeof *d)) == NULL)
    return 0;
  for (i = 0; i < n; i++)
    d[i] = fabs (v[i] - m);
  r = fd_median (d, n);
  free (d);
  return r;
}

void
fd_wilson (unsigned long k, unsigned long n, double z, double *lo, double *hi)
{
  double p, z2n, centre, half;

  if (n == 0) {
    *lo = 0, *hi = 1;
    return;
  }
  p = (double)k / n;
  z2n = z * z / n;
  centre = (p + z2n / 2) / (1 + z2n);
  half = z * sqrt (p * (1 - p) / n + z2n / (4 * n)) / (1 + z2n);
  *lo = centre - half < 0 ? 0 : centre - half;
  *hi = centre + half > 1 ? 1 : centre + half;
}
