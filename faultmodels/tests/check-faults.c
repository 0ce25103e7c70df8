/* futuredisk — faultmodels: fault kinds, durations, the fault map. */
#include <check.h>
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
                             "disk-failure)");
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

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"kinds", test_kinds},
      {"durations", test_durations},
      {"faultmap", test_faultmap},
  };

  return fd_check_main ("faults", cases, sizeof cases / sizeof cases[0]);
}
