/* futuredisk — faultmodels: closed-loop workloads run on the model.
 *
 * The numbers `futuredisk model` prints, the unit tests check against
 * closed forms, and the benchmark times all come from these runs: a QD1
 * host with zero think time driving an fm_disk, nothing else.
 */
#ifndef FAULTMODELS_MEASURE_H
#define FAULTMODELS_MEASURE_H

#include <stdint.h>

#include "faultmodels/disk.h"
#include "faultmodels/error.h"
#include "faultmodels/profile.h"

/* Read or write (op) [start, start+len) sequentially in `req` byte
 * requests; writes end with a FLUSH, so what the cache held is on the
 * media.  Returns the virtual ns from the first arrival to the last
 * completion.
 */
extern uint64_t fm_measure_sequential (struct fm_disk *d, enum fm_op op,
                                       uint64_t start, uint64_t len,
                                       uint64_t req);

/* `count` QD1 reads of `req` bytes at uniformly random `req`-aligned
 * offsets in [0, span) (span 0: the whole disk), positions drawn from
 * (seed, FM_STREAM_BENCH, i).  Returns the mean service time in ns.
 */
extern double fm_measure_random (struct fm_disk *d, uint64_t seed, uint64_t req,
                                 uint64_t span, uint64_t count);

/* `count` random reads of `req` bytes as fm_measure_random, from a host
 * that keeps `qd` in flight (a new one arrives as each completes, no
 * think time).  Returns the IOPS: count over the virtual time taken.
 */
extern double fm_measure_random_qd (struct fm_disk *d, uint64_t seed,
                                    uint64_t req, uint64_t span, uint64_t count,
                                    unsigned qd);

/* The columns of `futuredisk model` for one profile. */
struct fm_summary {
  double min_full_read_s; /* capacity / bandwidth: the workshop's figure */
  double full_read_s;     /* modelled: 16 MiB sequential reads, QD1 */
  double random_4k_ms;    /* mean QD1 random 4 KiB read service time */
  double random_4k_iops;
  double random_10pct_s; /* 10% of the disk in random 4 KiB reads */
  /* Random 4 KiB read IOPS from a host keeping FM_SUMMARY_QDS[i] reads in
   * flight (fm_measure_random_qd, `samples` reads each).
   */
  double random_4k_iops_qd[4];
};

#define FM_SUMMARY_QDS                                                         \
  {                                                                            \
    1, 4, 16, 32                                                               \
  }

/* Model the profile with default caches and the given seed; `samples` is
 * the number of random reads to average (20000 gives about +-0.2%).
 */
extern int fm_measure_summary (const struct fm_profile *p, uint64_t seed,
                               uint64_t samples, struct fm_summary *out,
                               struct fm_err *err);

#endif
