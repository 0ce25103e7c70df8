/* futuredisk — common: unit tests for running tools (proc.c): exit codes
 * and output, the timeout, and what a signal does to a running command
 * with and without the shield detach relies on, and a watched command's
 * progress pipe.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* What the ticks saw: how many, and the last progress line and output. */
struct seen {
  int ticks;
  char progress[600];
  char out[64];
};

static void
tick (void *opaque, const char *progress, const struct fd_proc *p)
{
  struct seen *s = opaque;

  s->ticks++;
  snprintf (s->progress, sizeof s->progress, "%s", progress);
  snprintf (s->out, sizeof s->out, "%s", p->out);
}

START_TEST (test_watched)
{
  /* A line too long for the progress buffer is dropped whole; a line
   * without its newline is not complete, so not shown.
   */
  char script[] = "echo 'Pass 1: x'; echo '1 5 10 dev' >&3; "
                  "head -c 2000 /dev/zero | tr '\\0' 7 >&3; echo >&3; "
                  "echo '2 7 10 dev' >&3; printf '3 1' >&3; echo done";
  char *argv[] = {sh, dash_c, script, NULL};
  struct seen s = {0};
  struct fd_watch w = {true, tick, &s, NULL, NULL, 0, NULL};
  struct fm_err err;
  struct fd_proc p;

  ck_assert_int_eq (fd_run_watched (argv, 10, &w, &p, &err), 0);
  ck_assert_int_eq (p.status, 0);
  ck_assert_int_gt (s.ticks, 0);
  /* The last tick comes after every pipe closed: it saw everything. */
  ck_assert_str_eq (s.progress, "2 7 10 dev");
  ck_assert_str_eq (s.out, "Pass 1: x\ndone\n");
  fd_proc_free (&p);
}
END_TEST

START_TEST (test_no_progress_pipe)
{
  /* Without a progress pipe the ticks still come, with no progress. */
  char script[] = "echo '1 2 3 dev'";
  char *argv[] = {sh, dash_c, script, NULL};
  struct seen s = {0};
  struct fd_watch w = {false, tick, &s, NULL, NULL, 0, NULL};
  struct fm_err err;
  struct fd_proc p;

  ck_assert_int_eq (fd_run_watched (argv, 10, &w, &p, &err), 0);
  ck_assert_int_eq (p.status, 0);
  ck_assert_int_gt (s.ticks, 0);
  ck_assert_str_eq (s.progress, "");
  ck_assert_str_eq (s.out, "1 2 3 dev\n");
  fd_proc_free (&p);
}
END_TEST

static const char *const starts_pass[] = {"Pass ", NULL};

/* Run script under sh -c with its stdout logged to memory (*log, free
 * it) and the watch's keep and repeat_limit; the run must start.
 */
static void
run_logged (char *script, const char *const *keep, unsigned repeat_limit,
            struct fd_proc *p, char **log, size_t *loglen)
{
  char *argv[] = {sh, dash_c, script, NULL};
  FILE *fp = open_memstream (log, loglen);
  struct fd_watch w = {false, NULL, NULL, fp, keep, repeat_limit, NULL};
  struct fm_err err;

  ck_assert_ptr_nonnull (fp);
  ck_assert_int_eq (fd_run_watched (argv, 60, &w, p, &err), 0);
  fclose (fp);
}

START_TEST (test_long_output)
{
  /* 40 MiB of output: the log has all of it; p->out the first half of
   * 16 MiB in whole lines, then only the lines keep says yes to, the
   * last of them among them.
   */
  char script[] =
      "yes 'Clone multiply-claimed blocks? yes_____' | head -c 20971520; "
      "echo 'Pass 1D: time 5'; "
      "yes 'File has 1 multiply-claimed block______' | head -c 20971520; "
      "echo 'Pass 5: time 7'; echo tail";
  char *log = NULL;
  size_t loglen = 0;
  struct fd_proc p;
  const char *half;

  run_logged (script, starts_pass, 0, &p, &log, &loglen);
  ck_assert_uint_eq (loglen, 2u * 20971520 + 16 + 15 + 5);
  ck_assert_uint_le (strlen (p.out), 16u << 20);
  half = strstr (p.out, "Pass 1D: time 5\n");
  ck_assert_ptr_nonnull (half);
  ck_assert_str_eq (half, "Pass 1D: time 5\nPass 5: time 7\n");
  /* The part before is whole lines. */
  ck_assert_int_eq (half[-1], '\n');
  ck_assert_int_eq ((int)((half - p.out) % 40), 0);
  fd_proc_free (&p);
  free (log);
}
END_TEST

START_TEST (test_repeating)
{
  /* A line printed 5 times in a row stops the command (one line of the
   * output between two runs of 4 does not); the log has all it printed
   * up to then, whatever came in the same read after.
   */
  char script[] = "for i in 1 2 3 4; do echo again; done; echo other; "
                  "for i in 1 2 3 4; do echo again >&2; done; echo >&2; "
                  "while :; do echo 'super bytes used 1 mismatches'; done";
  char *log = NULL;
  size_t loglen = 0;
  struct fd_proc p;

  run_logged (script, NULL, 5, &p, &log, &loglen);
  ck_assert (p.repeating);
  ck_assert (!p.timed_out);
  ck_assert_int_eq (p.signal, SIGKILL);
  ck_assert_str_eq (p.repeated, "super bytes used 1 mismatches");
  ck_assert_ptr_nonnull (strstr (log, "other\nsuper bytes used 1"));
  ck_assert_str_eq (p.err, "again\nagain\nagain\nagain\n\n");
  fd_proc_free (&p);
  free (log);
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
      {"watched", test_watched},
      {"no-progress-pipe", test_no_progress_pipe},
      {"long-output", test_long_output},
      {"repeating", test_repeating},
  };

  return fd_check_main ("proc", cases, sizeof cases / sizeof cases[0]);
}
