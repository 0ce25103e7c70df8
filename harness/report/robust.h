/* futuredisk — harness: the few statistics reports and comparisons need.
 *
 * Robust ones: a night's fsck times have outliers (a trial that hit a
 * retry storm), so centres are medians and spreads median absolute
 * deviations; failure rates over a handful of trials get Wilson score
 * intervals, which stay inside [0, 1] and behave at 0 and n failures.
 * Nights' medians, a few of them, get Student's t: the bound a new one
 * should stay under, for as much as so few nights can say.
 */
#ifndef FUTUREDISK_ROBUST_H
#define FUTUREDISK_ROBUST_H

#include <stddef.h>

/* The median of v[0..n) (sorted in place); 0 for n = 0. */
extern double fd_median (double *v, size_t n);

/* The median absolute deviation from the median (v sorted in place). */
extern double fd_mad (double *v, size_t n);

/* The mean and the sample standard deviation (n - 1 in the denominator)
 * of v[0..n); the deviation 0 for n < 2.
 */
extern double fd_mean (const double *v, size_t n);
extern double fd_sd (const double *v, size_t n);

/* The pooled standard deviation of repeated measurements: v[0..n) in
 * groups named by group[0..n) (equal names, one group: one seed's
 * repetitions in one night), from each value's deviation from its
 * group's mean, over the groups of two or more.  *dof: its degrees of
 * freedom, the values in such groups less their number; 0 (and a return
 * of 0): no repetitions, nothing measured.
 */
extern double fd_pooled_sd (const double *v, const long long *group, size_t n,
                            size_t *dof);

/* Student's t distribution's 99.9th percentile with dof degrees of
 * freedom (dof >= 1): how many standard deviations a one-sided bound
 * that a new value exceeds one time in a thousand lies from a mean.
 */
extern double fd_t999 (size_t dof);

/* The Wilson score interval of k successes in n trials at z (1.96 for
 * 95 %); [0, 1] for n = 0.
 */
extern void fd_wilson (unsigned long k, unsigned long n, double z, double *lo,
                       double *hi);

#endif
