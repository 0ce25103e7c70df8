/* futuredisk — harness: the few statistics reports and comparisons need.
 *
 * Robust ones: a night's fsck times have outliers (a trial that hit a
 * retry storm), so centres are medians and spreads median absolute
 * deviations; failure rates over a handful of trials get Wilson score
 * intervals, which stay inside [0, 1] and behave at 0 and n failures.
 */
#ifndef FUTUREDISK_ROBUST_H
#define FUTUREDISK_ROBUST_H

#include <stddef.h>

/* The median of v[0..n) (sorted in place); 0 for n = 0. */
extern double fd_median (double *v, size_t n);

/* The median absolute deviation from the median (v sorted in place). */
extern double fd_mad (double *v, size_t n);

/* The Wilson score interval of k successes in n trials at z (1.96 for
 * 95 %); [0, 1] for n = 0.
 */
extern void fd_wilson (unsigned long k, unsigned long n, double z, double *lo,
                       double *hi);

#endif
