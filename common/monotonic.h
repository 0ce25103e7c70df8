/* futuredisk — common: the monotonic clock in nanoseconds, for the
 * plugin's request path and its scheduler (header only: both call it on
 * every request).
 */
#ifndef FUTUREDISK_MONOTONIC_H
#define FUTUREDISK_MONOTONIC_H

#include <stdint.h>
#include <time.h>

static inline uint64_t
fd_monotonic_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
