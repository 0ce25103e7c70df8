/* futuredisk — common: unit tests for running tools (proc.c): exit codes
 * and output, the timeout, and what a signal does to a running command
 * with and without the shield detach relies on.
 */
#include <signal.h>

#include "check-main.h"
#include "proc.h"

static char sh[] = "sh", dash_c[] = "-c";

START_TEST (test_run)
{
  char script[] = "echo out; echo err >&2; exit 3";
  char *argv[] = {sh, dash_c, script, NULL};
  struct fm_err err;
  struct fd_proc p;

  ck_assert_int_eq (fd_run (argv, 10, &p, &err), 0);
  ck_assert_int_eq (p.status, 3);
  ck_assert_int_eq (p.signal, 0);
  ck_assert (!p.timed_out);
  ck_assert_str_eq (p.out, "out\n");
  ck_assert_str_eq (p.err, "err\n");
  fd_proc_free (&p);
  /* fd_run_ok quotes the command's complaint. */
  ck_assert_int_eq (fd_run_ok (argv, 10, &err), -1);
  ck_assert_ptr_nonnull (strstr (err.msg, "err"));
}
END_TEST

START_TEST (test_timeout)
{
  char script[] = "sleep 30";
  char *argv[] = {sh, dash_c, script, NULL};
  struct fm_err err;
  struct fd_proc p;

  ck_assert_int_eq (fd_run (argv, 0.3, &p, &err), 0);
  ck_assert (p.timed_out);
  ck_assert_int_eq (p.signal, SIGKILL);
  /* Killed at the timeout, not before, and not after the command's own
   * 30 s: bounds fd_run sets, whatever the machine's speed.
   */
  ck_assert (p.wall_s >= 0.3 && p.wall_s < 30);
  fd_proc_free (&p);
}
END_TEST

/* The command signals us itself, so the signal surely arrives while it
 * runs; it then sleeps for `nap` and says whether it lived to finish.
 * Where it must be killed, the nap is long (30 s), so that a slow machine
 * that takes its time to act on the signal does not let it finish; the
 * timeout (60 s) is longer still, so that a kill is the signal's doing.
 */
static void
run_signalled (struct fd_proc *p, const char *nap)
{
  char script[128];
  char *argv[] = {sh, dash_c, script, NULL};
  struct fm_err err;

  snprintf (script, sizeof script, "kill -TERM $PPID; sleep %s; echo finished",
            nap);
  fd_interrupted = 0;
  fd_catch_signals ();
  ck_assert_int_eq (fd_run (argv, 60, p, &err), 0);
  ck_assert_int_eq (fd_interrupted, SIGTERM);
  ck_assert (!p->timed_out);
}

START_TEST (test_interrupted)
{
  struct fd_proc p;

  run_signalled (&p, "30");
  ck_assert_int_eq (p.signal, SIGKILL);
  ck_assert_str_eq (p.out, "");
  fd_proc_free (&p);
}
END_TEST

START_TEST (test_shielded)
{
  struct fd_proc p;

  fd_shield_begin ();
  fd_shield_begin ();
  fd_shield_end (); /* they nest: still shielded */
  run_signalled (&p, "0.5");
  fd_shield_end ();
  ck_assert_int_eq (p.status, 0);
  ck_assert_str_eq (p.out, "finished\n");
  fd_proc_free (&p);
  /* Unshielded again: the next command is killed at once. */
  run_signalled (&p, "30");
  ck_assert_int_eq (p.signal, SIGKILL);
  fd_proc_free (&p);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"run", test_run},
      {"timeout", test_timeout},
      {"interrupted", test_interrupted},
      {"shielded", test_shielded},
  };

  return fd_check_main ("proc", cases, sizeof cases / sizeof cases[0]);
}
