/* futuredisk — faultmodels: fault kinds, durations, the fault map. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "faultmodels/faults.h"

START_TEST (test_kinds)
{
  enum fm_fault_kind k;
  struct fm_err err;
  int i;

  for (i = 0; i < FM_FAULT_NKINDS; i++) {
    ck_assert_int_eq (fm_fault_parse (fm_fault_name (i), &k, &err), 0);
    ck_assert_int_eq (k, i);
    ck_assert_uint_gt (strlen (fm_fault_description (i)), 20);
  }
  ck_assert_str_eq (fm_fault_name (FM_FAULT_URE), "ure");
  ck_assert_int_eq (fm_fault_parse ("gremlin", &k, &err), -1);
  ck_assert_str_eq (err.msg, "unknown fault kind 'gremlin' (kinds: ure, "
                             "disk-failure, powercut, torn-write, lost-write, "
                             "misdirected-write, flip, reallocated, lse, rot, "
                             "stuck)");
}
END_TEST

START_TEST (test_durations)
{
  static const struct {
    const char *s;
    uint64_t ns;
  } good[] = {
      {"0s", 0},
      {"500ms", 500000000},
      {"30s", 30000000000},
      {"2min", 120000000000},
      {"1.5h", 5400000000000},
      {"7us", 7000},
      {"12ns", 12},
  };
  static const char *const bad[] = {"",    "5",     "s",      "-1s",
                                    "1 s", "3days", "1e400s", "nan"};
  struct fm_err err;
  uint64_t ns;
  size_t i;

  for (i = 0; i < sizeof good / sizeof good[0]; i++) {
    ck_assert_msg (fm_parse_duration ("t", good[i].s, &ns, &err) == 0, "%s",
                   err.msg);
    ck_assert_uint_eq (ns, good[i].ns);
  }
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ck_assert_msg (fm_parse_duration ("fail-at", bad[i], &ns, &err) == -1,
                   "'%s' accepted", bad[i]);
    ck_assert_msg (strncmp (err.msg, "fail-at: ", 9) == 0, "%s", err.msg);
  }
}
END_TEST

START_TEST (test_faultmap)
{
  struct fm_faultmap *m = fm_faultmap_new ();
  enum fm_fault_kind k;
  uint64_t bad, n;

  ck_assert (!fm_faultmap_find (m, 0, 1000, &bad, &n, &k));
  ck_assert_int_eq (fm_faultmap_add (m, 100, 10, FM_FAULT_URE), 0);
  ck_assert_int_eq (fm_faultmap_add (m, 50, 5, FM_FAULT_URE), 0);
  ck_assert_uint_eq (fm_faultmap_sectors (m), 15);
  ck_assert (fm_faultmap_find (m, 0, 1000, &bad, &n, &k));
  ck_assert_uint_eq (bad, 50);
  ck_assert_uint_eq (n, 5);
  ck_assert_int_eq (k, FM_FAULT_URE);
  /* Clipped to the range asked about. */
  ck_assert (fm_faultmap_find (m, 105, 2, &bad, &n, &k));
  ck_assert_uint_eq (bad, 105);
  ck_assert_uint_eq (n, 2);
  ck_assert (!fm_faultmap_find (m, 55, 45, &bad, &n, &k));
  /* Rewriting the middle splits a run; overlapping adds merge cleanly. */
  ck_assert_int_eq (fm_faultmap_clear (m, 103, 4), 0);
  ck_assert_uint_eq (fm_faultmap_sectors (m), 11);
  ck_assert (!fm_faultmap_find (m, 103, 4, &bad, &n, &k));
  ck_assert (fm_faultmap_find (m, 103, 10, &bad, &n, &k));
  ck_assert_uint_eq (bad, 107);
  ck_assert_int_eq (fm_faultmap_add (m, 95, 20, FM_FAULT_URE), 0);
  ck_assert_uint_eq (fm_faultmap_sectors (m), 25);
  ck_assert_int_eq (fm_faultmap_clear (m, 0, 1000), 0);
  ck_assert_uint_eq (fm_faultmap_sectors (m), 0);
  ck_assert (!fm_faultmap_find (m, 0, 1000, &bad, &n, &k));
  fm_faultmap_free (m);
}
END_TEST

static void
count_sector (void *opaque, uint64_t sector)
{
  (*(uint64_t *)opaque)++;
}

static void
mark_sector (void *opaque, uint64_t sector)
{
  ((unsigned char *)opaque)[sector] = 1;
}

/* reference §4.3 item 8: over many seeds, the share of disks with at
 * least one URE is 1 - e^-m, within a binomial bound; the mean count is m.
 */
START_TEST (test_ure_statistics)
{
  const uint64_t sectors = 2000000, seeds = 1000;
  const double p = 1.0 / sectors; /* m = 1 per disk */
  uint64_t seed, with = 0, total = 0;
  double share, sd;

  ck_assert_double_eq_tol (fm_ure_sector_probability (1e-14, 4096),
                           4096 * 8 * 1e-14, 1e-16);
  for (seed = 0; seed < seeds; seed++) {
    uint64_t n = 0;
    fm_ure_marginal (seed, sectors, p, count_sector, &n);
    with += n > 0;
    total += n;
  }
  share = (double)with / seeds;
  sd = sqrt ((1 - exp (-1)) * exp (-1) / seeds);
  ck_assert_msg (fabs (share - (1 - exp (-1))) < 4 * sd, "share %.3f", share);
  ck_assert_msg (fabs ((double)total / seeds - 1) < 4 * sqrt (1.0 / seeds),
                 "mean %.3f", (double)total / seeds);

  /* A large mean (the normal branch): 8 TB at 1e-12 per bit, m = 64. */
  total = 0;
  for (seed = 0; seed < 200; seed++) {
    uint64_t n = 0;
    fm_ure_marginal (seed, 8000000000000ULL / 4096,
                     fm_ure_sector_probability (1e-12, 4096) * 10, count_sector,
                     &n);
    total += n;
  }
  ck_assert_msg (fabs ((double)total / 200 - 640) < 4 * sqrt (640.0 / 200),
                 "mean %.1f", (double)total / 200);

  /* Re-rolls come up bad with the same odds. */
  with = 0;
  for (seed = 0; seed < 200000; seed++)
    with += fm_ure_reroll (7, seed, 1 + seed % 5, 0.01);
  ck_assert_msg (fabs (with / 200000.0 - 0.01) < 4 * sqrt (0.01 / 200000),
                 "reroll share %.4f", with / 200000.0);
}
END_TEST

/* The marginal set is a function of the seed alone. */
START_TEST (test_ure_determinism)
{
  const uint64_t sectors = 1 << 20;
  unsigned char *a = calloc (sectors, 1), *b = calloc (sectors, 1);
  unsigned char *c = calloc (sectors, 1);

  fm_ure_marginal (5, sectors, 50.0 / sectors, mark_sector, a);
  fm_ure_marginal (5, sectors, 50.0 / sectors, mark_sector, b);
  fm_ure_marginal (6, sectors, 50.0 / sectors, mark_sector, c);
  ck_assert_mem_eq (a, b, sectors);
  ck_assert (memcmp (a, c, sectors) != 0);
  free (a);
  free (b);
  free (c);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"kinds", test_kinds},
      {"durations", test_durations},
      {"faultmap", test_faultmap},
      {"ure_statistics", test_ure_statistics},
      {"ure_determinism", test_ure_determinism},
  };

  return fd_check_main ("faults", cases, sizeof cases / sizeof cases[0]);
}
