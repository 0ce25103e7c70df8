/* futuredisk — faultmodels: the counter-based RNG.
 *
 * Determinism (docs/ARCHITECTURE.md): every random decision is a pure
 * function of (seed, stream, sector, generation), so the same seed gives
 * the same bad sectors whether the disk is read forwards or backwards.
 */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "faultmodels/rng.h"

#define SECTORS 200000
#define P_BAD   0.001

/* The sectors a full pass marks bad, visiting them in the given order. */
static void
bad_set (uint64_t seed, bool backwards, unsigned char *bad)
{
  uint64_t i;

  memset (bad, 0, SECTORS);
  for (i = 0; i < SECTORS; i++) {
    uint64_t s = backwards ? SECTORS - 1 - i : i;
    if (fm_unit (fm_hash (seed, FM_STREAM_URE, s, 0)) < P_BAD)
      bad[s] = 1;
  }
}

START_TEST (test_determinism)
{
  uint64_t i;

  /* Fixed values: a change here silently changes every fault ever seeded,
   * so it must be deliberate.
   */
  ck_assert_uint_eq (fm_mix64 (0), 0xe220a8397b1dcdafULL);
  ck_assert_uint_eq (fm_hash (1, 2, 3, 4), fm_hash (1, 2, 3, 4));
  for (i = 0; i < 1000; i++) {
    ck_assert_uint_eq (fm_hash (i, FM_STREAM_URE, i * 7, 1),
                       fm_hash (i, FM_STREAM_URE, i * 7, 1));
    ck_assert_uint_ne (fm_hash (i, FM_STREAM_URE, i * 7, 1),
                       fm_hash (i, FM_STREAM_URE, i * 7, 2));
    ck_assert_uint_ne (fm_hash (i, FM_STREAM_URE, 5, 0),
                       fm_hash (i + 1, FM_STREAM_URE, 5, 0));
  }
}
END_TEST

START_TEST (test_order)
{
  unsigned char *fwd = malloc (SECTORS), *rev = malloc (SECTORS);
  unsigned char *other = malloc (SECTORS);
  size_t nbad = 0, i, differ = 0;

  bad_set (12345, false, fwd);
  bad_set (12345, true, rev);
  ck_assert_mem_eq (fwd, rev, SECTORS);
  for (i = 0; i < SECTORS; i++)
    nbad += fwd[i];
  /* 200 expected; Poisson sd ~14. */
  ck_assert_msg (nbad > 130 && nbad < 270, "%zu bad sectors", nbad);

  bad_set (12346, false, other);
  for (i = 0; i < SECTORS; i++)
    differ += fwd[i] != other[i];
  ck_assert_uint_gt (differ, 300); /* another seed, another set */
  free (fwd);
  free (rev);
  free (other);
}
END_TEST

/* Chi-square over 64 bins of 640,000 draws; 63 degrees of freedom, the
 * 99.99% point is about 117.
 */
START_TEST (test_uniformity)
{
  uint64_t bins[64] = {0}, i;
  const uint64_t n = 640000;
  double chi = 0, e = n / 64.0, sum = 0;

  for (i = 0; i < n; i++) {
    double u = fm_unit (fm_hash (99, FM_STREAM_FLIP, i, 0));
    ck_assert (u >= 0 && u < 1);
    bins[(int)(u * 64)]++;
    sum += u;
  }
  for (i = 0; i < 64; i++)
    chi += (bins[i] - e) * (bins[i] - e) / e;
  ck_assert_msg (chi < 117, "chi-square %.1f", chi);
  ck_assert_msg (fabs (sum / n - 0.5) < 0.002, "mean %.4f", sum / n);
  /* fm_below stays below its bound and covers it. */
  for (i = 0; i < 10000; i++)
    ck_assert_uint_lt (fm_below (fm_hash (1, 1, i, 0), 7), 7);
  ck_assert_uint_eq (fm_below (UINT64_MAX, 10), 9);
  ck_assert_uint_eq (fm_below (0, 10), 0);
}
END_TEST

/* Streams, neighbouring sectors and generations must not correlate:
 * turning one fault model on never shifts what another sees.
 */
START_TEST (test_independence)
{
  const uint64_t n = 200000;
  double sxy = 0, sx = 0, sy = 0, sxx = 0, syy = 0, r;
  double nx = 0, gx = 0;
  uint64_t i;

  for (i = 0; i < n; i++) {
    double x = fm_unit (fm_hash (5, FM_STREAM_URE, i, 0));
    double y = fm_unit (fm_hash (5, FM_STREAM_REALLOC, i, 0));
    sx += x;
    sy += y;
    sxx += x * x;
    syy += y * y;
    sxy += x * y;
    nx += x * fm_unit (fm_hash (5, FM_STREAM_URE, i + 1, 0));
    gx += x * fm_unit (fm_hash (5, FM_STREAM_URE, i, 1));
  }
  r = (n * sxy - sx * sy) / sqrt ((n * sxx - sx * sx) * (n * syy - sy * sy));
  ck_assert_msg (fabs (r) < 0.01, "stream correlation %.4f", r);
  /* E[XY] = 1/4 for independent uniforms; sd of the mean ~0.0005. */
  ck_assert_msg (fabs (nx / n - 0.25) < 0.003, "neighbours %.4f", nx / n);
  ck_assert_msg (fabs (gx / n - 0.25) < 0.003, "generations %.4f", gx / n);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"determinism", test_determinism},
      {"order", test_order},
      {"uniformity", test_uniformity},
      {"independence", test_independence},
  };

  return fd_check_main ("rng", cases, sizeof cases / sizeof cases[0]);
}
