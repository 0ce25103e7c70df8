/* futuredisk — harness: medians, MADs, standard deviations, Student's t
 * and Wilson intervals (robust.h).
 */
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

double
fd_mean (const double *v, size_t n)
{
  double sum = 0;
  size_t i;

  for (i = 0; i < n; i++)
    sum += v[i];
  return n ? sum / n : 0;
}

double
fd_sd (const double *v, size_t n)
{
  double m = fd_mean (v, n), ss = 0;
  size_t i;

  for (i = 0; i < n; i++)
    ss += (v[i] - m) * (v[i] - m);
  return n < 2 ? 0 : sqrt (ss / (n - 1));
}

double
fd_pooled_sd (const double *v, const long long *group, size_t n, size_t *dof)
{
  size_t i, j, k, ng;
  double ss = 0;

  *dof = 0;
  for (i = 0; i < n; i++) {
    double sum = 0, m;
    /* Each group once, at its first value. */
    for (j = 0; j < i && group[j] != group[i]; j++)
      ;
    if (j < i)
      continue;
    for (ng = 0, k = i; k < n; k++)
      if (group[k] == group[i])
        sum += v[k], ng++;
    if (ng < 2)
      continue;
    m = sum / ng;
    for (k = i; k < n; k++)
      if (group[k] == group[i])
        ss += (v[k] - m) * (v[k] - m);
    *dof += ng - 1;
  }
  return *dof ? sqrt (ss / *dof) : 0;
}

double
fd_t999 (size_t dof)
{
  /* The t tables' 0.999 column (Student 1908; any statistics text). */
  static const double t[] = {
      0,     318.309, 22.327, 10.215, 7.173, 5.893, 5.208, 4.785,
      4.501, 4.297,   4.144,  4.025,  3.930, 3.852, 3.787, 3.733,
      3.686, 3.646,   3.610,  3.579,  3.552, 3.527, 3.505, 3.485,
      3.467, 3.450,   3.435,  3.421,  3.408, 3.396, 3.385};
  const size_t nt = sizeof t / sizeof t[0];

  if (dof < nt)
    return t[dof ? dof : 1];
  /* Beyond 30: between 30's 3.385 and the normal's 3.090, as 1/dof. */
  return 3.090 + (3.385 - 3.090) * 30.0 / (double)dof;
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
