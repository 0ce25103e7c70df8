/* futuredisk — harness: unit tests for medians, MADs, spreads and Wilson
 * intervals, and the fsck time's verdict (the arithmetic behind
 * `futuredisk compare`).
 */
#include <math.h>
#include <stdint.h>

#include "check-main.h"
#include "regress.h"
#include "robust.h"

START_TEST (test_median)
{
  double odd[] = {5, 1, 3}, even[] = {4, 1, 3, 2}, one[] = {7};

  ck_assert_double_eq (fd_median (odd, 3), 3);
  ck_assert_double_eq (fd_median (even, 4), 2.5);
  ck_assert_double_eq (fd_median (one, 1), 7);
  ck_assert_double_eq (fd_median (NULL, 0), 0);
}
END_TEST

START_TEST (test_mad)
{
  /* Median 2; deviations 1 1 0 0 2 4 7 -> MAD 1 (the textbook example). */
  double v[] = {1, 1, 2, 2, 4, 6, 9};
  double same[] = {3, 3, 3, 3};

  ck_assert_double_eq (fd_mad (v, 7), 1);
  ck_assert_double_eq (fd_mad (same, 4), 0);
}
END_TEST

START_TEST (test_wilson)
{
  double lo, hi;

  /* 0 of 10: [0, 0.2775] at z = 1.96 (Wilson 1927; Newcombe 1998). */
  fd_wilson (0, 10, 1.96, &lo, &hi);
  ck_assert_double_eq_tol (lo, 0, 1e-12);
  ck_assert_double_eq_tol (hi, 0.2775, 5e-4);
  /* 5 of 10: symmetric about one half, [0.2366, 0.7634]. */
  fd_wilson (5, 10, 1.96, &lo, &hi);
  ck_assert_double_eq_tol (lo, 0.2366, 5e-4);
  ck_assert_double_eq_tol (hi, 0.7634, 5e-4);
  /* The interval narrows as n grows: 50 of 100 is [0.4038, 0.5962]. */
  {
    double lo2, hi2;
    fd_wilson (50, 100, 1.96, &lo2, &hi2);
    ck_assert_double_eq_tol (lo2, 0.4038, 5e-4);
    ck_assert (hi2 - lo2 < hi - lo);
  }
  /* 10 of 10 mirrors 0 of 10. */
  fd_wilson (10, 10, 1.96, &lo, &hi);
  ck_assert_double_eq_tol (lo, 1 - 0.2775, 5e-4);
  ck_assert_double_eq_tol (hi, 1, 1e-12);
  /* No trials: no information. */
  fd_wilson (0, 0, 1.96, &lo, &hi);
  ck_assert (lo == 0 && hi == 1);
}
END_TEST

/* n normal deviates (mean 0, sd 1), the same every run: Box and Muller
 * over a 64-bit LCG (Knuth's MMIX constants).
 */
static void
normals (double *v, size_t n)
{
  uint64_t x = 42;
  size_t i;

  for (i = 0; i < n; i += 2) {
    double u1, u2;
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    u1 = ((x >> 11) + 0.5) / 9007199254740992.0;
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    u2 = ((x >> 11) + 0.5) / 9007199254740992.0;
    v[i] = sqrt (-2 * log (u1)) * cos (2 * M_PI * u2);
    if (i + 1 < n)
      v[i + 1] = sqrt (-2 * log (u1)) * sin (2 * M_PI * u2);
  }
}

START_TEST (test_sd)
{
  static double v[2001];
  double pair[] = {1, 3}, four[] = {2, 4, 4, 6};

  ck_assert_double_eq (fd_sd (pair, 1), 0);
  ck_assert_double_eq (fd_mean (pair, 2), 2);
  ck_assert_double_eq_tol (fd_sd (pair, 2), sqrt (2), 1e-12);
  /* Squares of deviations 4 0 0 4 over 3. */
  ck_assert_double_eq_tol (fd_sd (four, 4), sqrt (8.0 / 3), 1e-12);
  /* Many normal values: the standard deviation. */
  normals (v, 2001);
  ck_assert_double_eq_tol (fd_sd (v, 2001), 1, 0.05);
}
END_TEST

START_TEST (test_pooled_sd)
{
  double v[] = {1, 3, 10, 12, 5}, shifted[] = {101, 103, 10, 12, 5};
  long long g[] = {1, 1, 2, 2, 3}, alone[] = {1, 2, 3, 4, 5};
  static double many[3000];
  static long long triples[3000];
  size_t dof, i;

  /* No group of two: nothing measured. */
  ck_assert_double_eq (fd_pooled_sd (v, alone, 5, &dof), 0);
  ck_assert_uint_eq (dof, 0);
  /* Pairs 2 apart: squares 1 1 1 1 over 2 degrees of freedom; the
   * single value is no repetition.
   */
  ck_assert_double_eq_tol (fd_pooled_sd (v, g, 5, &dof), sqrt (2), 1e-12);
  ck_assert_uint_eq (dof, 2);
  /* Where a group lies (another seed's disk) is not spread. */
  ck_assert_double_eq_tol (fd_pooled_sd (shifted, g, 5, &dof), sqrt (2), 1e-12);
  /* Many triples of normal values, each about its own centre: the
   * standard deviation.
   */
  normals (many, 3000);
  for (i = 0; i < 3000; i++) {
    triples[i] = (long long)(i / 3);
    many[i] += 100.0 * (double)(i / 3);
  }
  ck_assert_double_eq_tol (fd_pooled_sd (many, triples, 3000, &dof), 1, 0.05);
  ck_assert_uint_eq (dof, 2000);
}
END_TEST

START_TEST (test_t999)
{
  /* The table, and past it towards the normal's 3.090. */
  ck_assert_double_eq (fd_t999 (1), 318.309);
  ck_assert_double_eq (fd_t999 (6), 5.208);
  ck_assert_double_eq (fd_t999 (30), 3.385);
  ck_assert_double_eq_tol (fd_t999 (60), 3.232, 0.01);
  ck_assert_double_eq_tol (fd_t999 (120), 3.160, 0.01);
  ck_assert (fd_t999 (100000) > 3.09 && fd_t999 (100000) < 3.1);
}
END_TEST

/* How often nights of normal noise make fd_regress_timing call the next
 * one slower: the bound is one-sided 99.9 %, so about one in a thousand.
 * (A spread of 10 %, so that the minimum effect does not hide it.)
 */
START_TEST (test_false_alarms)
{
  enum {
    K = 7,
    NIGHTS = 20000
  };
  static double z[(K + 1) * NIGHTS];
  size_t i, j, alarms = 0;

  normals (z, sizeof z / sizeof z[0]);
  for (i = 0; i < NIGHTS; i++) {
    double med[K];
    struct fd_timing t;
    for (j = 0; j < K; j++)
      med[j] = 100 + 10 * z[i * (K + 1) + j];
    alarms += fd_regress_timing (100 + 10 * z[i * (K + 1) + K], med, K, NULL,
                                 NULL, 0, &t) == 1;
  }
  ck_assert_msg (alarms >= 8 && alarms <= 40, "%zu false alarms in %d", alarms,
                 NIGHTS);
}
END_TEST

START_TEST (test_timing)
{
  struct fd_timing t;
  double same[] = {10.0, 10.3, 9.8, 10.1}, steady[] = {10, 10.05, 9.95, 10.02};
  double one[] = {8.14}, tiny[] = {0.025, 0.025, 0.025, 0.025};
  double wide[] = {10, 12, 8, 11, 9}, alone[] = {10};
  double rep[] = {10, 10.02, 9.98, 10.01, 9.99, 10.0};
  long long groups[] = {1, 1, 2, 2, 3, 3};

  /* No baseline night: nothing to say. */
  ck_assert_int_eq (fd_regress_timing (10, same, 0, NULL, NULL, 0, &t), 0);
  /* The same build again, within the nights' spread. */
  ck_assert_int_eq (fd_regress_timing (10.6, same, 4, NULL, NULL, 0, &t), 0);
  ck_assert (t.sd > 0 && t.dof == 3 && t.nights == 4);
  /* 10 % slower where the nights moved by tenths of a per cent. */
  ck_assert_int_eq (fd_regress_timing (11, steady, 4, NULL, NULL, 0, &t), 1);
  ck_assert_double_eq_tol (t.margin, 0.05 * t.base, 1e-9);
  /* Much faster is said too. */
  ck_assert_int_eq (fd_regress_timing (8, steady, 4, NULL, NULL, 0, &t), -1);
  /* Three nights say too little: the unmeasured effect applies. */
  ck_assert_int_eq (fd_regress_timing (11, steady, 3, NULL, NULL, 0, &t), 0);
  ck_assert (t.sd < 0);
  /* One night, no repetitions: only a large change counts: 8.63 against
   * 8.14 s (6 %) is none, 35 % is one.
   */
  ck_assert_int_eq (fd_regress_timing (8.63, one, 1, NULL, NULL, 0, &t), 0);
  ck_assert (t.sd < 0);
  ck_assert_double_eq_tol (t.margin, FD_REGRESS_UNMEASURED_EFFECT * 8.14, 1e-9);
  ck_assert_int_eq (fd_regress_timing (11, one, 1, NULL, NULL, 0, &t), 1);
  /* A check of hundredths of a second: 0.0656 against 0.025 s is below
   * the smallest change in seconds worth a regression, measured or not.
   */
  ck_assert_int_eq (fd_regress_timing (0.0656, tiny, 1, NULL, NULL, 0, &t), 0);
  ck_assert_double_eq (t.margin, FD_REGRESS_UNMEASURED_EFFECT_S);
  ck_assert_int_eq (fd_regress_timing (0.0656, tiny, 4, NULL, NULL, 0, &t), 0);
  ck_assert_double_eq (t.margin, FD_REGRESS_MIN_EFFECT_S);
  /* Nights that spread widely: 30 % more is within it. */
  ck_assert_int_eq (fd_regress_timing (13, wide, 5, NULL, NULL, 0, &t), 0);
  /* One night, but repetitions measure the spread: 8 % is beyond it. */
  ck_assert_int_eq (fd_regress_timing (10.8, alone, 1, rep, groups, 6, &t), 1);
  ck_assert (t.sd >= 0 && t.repeats == 3);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"median", test_median},
      {"mad", test_mad},
      {"wilson", test_wilson},
      {"sd", test_sd},
      {"pooled-sd", test_pooled_sd},
      {"t999", test_t999},
      {"false-alarms", test_false_alarms},
      {"timing", test_timing},
  };

  return fd_check_main ("robust", cases, sizeof cases / sizeof cases[0]);
}
