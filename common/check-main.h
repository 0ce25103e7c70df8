/* futuredisk — common: main() for Check test programs.
 *
 * CTest runs one TCase per entry (CK_RUN_CASE).  A misspelt case name
 * would run nothing and pass, so a run of zero tests is a failure here.
 */
#ifndef FUTUREDISK_CHECK_MAIN_H
#define FUTUREDISK_CHECK_MAIN_H

#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fd_check_case {
  const char *name; /* the TCase name CTest passes in CK_RUN_CASE */
  const TTest *test;
};

/* A fresh private directory for a test's files, /tmp/check-NAME.<rnd>,
 * in dir (at least 64 bytes).  The caller removes what it made.
 */
static inline void
fd_check_tmpdir (const char *name, char *dir, size_t len)
{
  int n = snprintf (dir, len, "/tmp/check-%s.", name);

  ck_assert (n > 0 && (size_t)n + 7 <= len);
  memset (dir + n, 'X', 6); /* mkdtemp's template */
  dir[n + 6] = '\0';
  ck_assert_ptr_nonnull (mkdtemp (dir));
}

/* Build a suite of one TCase per test, run it, and return the exit code. */
static inline int
fd_check_main (const char *suite, const struct fd_check_case *cases, size_t n)
{
  Suite *s = suite_create (suite);
  SRunner *sr;
  int run, failed;
  size_t i;

  for (i = 0; i < n; i++) {
    TCase *tc = tcase_create (cases[i].name);
    tcase_add_test (tc, cases[i].test);
    suite_add_tcase (s, tc);
  }
  sr = srunner_create (s);

  srunner_run_all (sr, CK_ENV);
  run = srunner_ntests_run (sr);
  failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  if (run == 0) {
    fprintf (stderr, "no test ran: is CK_RUN_CASE a real TCase name?\n");
    return EXIT_FAILURE;
  }
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
