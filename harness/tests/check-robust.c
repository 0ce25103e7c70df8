/* futuredisk — harness: unit tests for medians, MADs and Wilson intervals
 * (the arithmetic behind `futuredisk compare`).
 */
#include <math.h>

#include "check-main.h"
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

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"median", test_median},
      {"mad", test_mad},
      {"wilson", test_wilson},
  };

  return fd_check_main ("robust", cases, sizeof cases / sizeof cases[0]);
}
