/* futuredisk — common: running the tools a trial drives (nbdkit,
 * nbdfuse, losetup, mkfs, mount, the checkers).
 *
 * One way to run a command: argv (never a shell), its output captured,
 * a timeout after which its whole process group is killed, and the
 * outcome a checker's record needs (exit code or signal, wall and CPU
 * seconds).
 */
#ifndef FUTUREDISK_PROC_H
#define FUTUREDISK_PROC_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "faultmodels/error.h"

struct fd_cgroup;

struct fd_proc {
  int status;     /* exit code; -1 if killed by a signal */
  int signal;     /* the signal that killed it, or 0 */
  bool timed_out; /* killed by us at the timeout */
  bool repeating; /* killed by us: a line repeated (fd_watch.repeat_limit) */
  char repeated[256]; /* that line */
  double wall_s;      /* wall seconds */
  double cpu_s;       /* user + system seconds of it and its children */
  char *out, *err;    /* captured output (NUL-terminated, at most 16 MiB) */
};

/* Run argv[0] (searched in PATH) with argv, stdin from /dev/null, and wait
 * up to timeout_s seconds (0: no limit).  Returns 0 when it ran (whatever
 * its exit code), -1 with err filled if it could not be started.
 */
extern int fd_run (char *const argv[], double timeout_s, struct fd_proc *p,
                   struct fm_err *err);

/* A long command watched while it runs (the checkers): with a progress
 * pipe, the child's file descriptor 3 is the write end of a pipe (for
 * e2fsck's and fsck.chunkfs's "-C3"), and tick is called with the last
 * complete line read from it so far ("" before the first) and the output
 * so far (p->out, p->err), each time something arrives on any pipe and at
 * least once a second; the caller decides what to print and how often.
 */
struct fd_watch {
  bool progress_pipe;
  void (*tick) (void *opaque, const char *progress, const struct fd_proc *p);
  void *opaque;
  /* Or NULL: all of stdout, as it comes (p->out keeps at most 16 MiB; a
   * repair can print gigabytes).
   */
  FILE *log;
  /* Or NULL: once p->out holds 8 MiB, only the lines of stdout that
   * begin (after blanks) with one of these (a NULL-ended list) are added
   * to it, so the ones that matter at the end (a checker's per-pass
   * times) survive.
   */
  const char *const *keep;
  /* Or 0: stop the command (its group killed, p->repeating) once stdout
   * or stderr has printed one line this many times in a row.  A checker
   * caught in a loop prints the same line forever; a timeout would
   * catch it only hours later.
   */
  unsigned repeat_limit;
  /* Or NULL: the cgroup the command runs in (cgroup.h), joined before
   * exec, so that all its CPU and memory are counted there.
   */
  const struct fd_cgroup *cgroup;
};

/* fd_run, watched by w (NULL: as fd_run). */
extern int fd_run_watched (char *const argv[], double timeout_s,
                           const struct fd_watch *w, struct fd_proc *p,
                           struct fm_err *err);

extern void fd_proc_free (struct fd_proc *p);

/* Run and require exit code 0: -1 with err naming the command and quoting
 * the end of its stderr otherwise.
 */
extern int fd_run_ok (char *const argv[], double timeout_s, struct fm_err *err);

/* Run and require exit code 0; its stdout (malloc'd) in *out. */
extern int fd_run_capture (char *const argv[], double timeout_s, char **out,
                           struct fm_err *err);

/* Start a daemon: run argv with stdout and stderr appended to `log` and
 * wait (up to timeout_s) for the command itself to exit, as a daemon's
 * parent does once its child is ready.  A line containing `fatal` (NULL:
 * none) that it writes to the log says the start failed before it has
 * exited: it gets FD_DAEMON_GRACE_S seconds to exit, then is killed (an
 * nbdkit with a sanitizer's runtime preloaded hangs in its exit handlers
 * after a plugin it could not load).  -1 with err unless it exited 0,
 * quoting what this start wrote to the log and naming the program (the
 * one env(1) runs, when argv is env VAR=VALUE... PROGRAM).
 */
#define FD_DAEMON_GRACE_S 2
extern int fd_run_daemon (char *const argv[], const char *log,
                          const char *fatal, double timeout_s,
                          struct fm_err *err);

/* Start argv in the background, in its own session, with stdout and
 * stderr appended to `log`, and return its pid at once (-1 with err).
 * For servers that stay in the foreground (nbdfuse).
 */
extern pid_t fd_spawn (char *const argv[], const char *log, struct fm_err *err);

/* Set by SIGINT, SIGTERM or SIGHUP once fd_catch_signals ran: a running
 * fd_run kills its command at once, and long loops stop, so the caller
 * can undo what it set up and exit.
 */
extern volatile sig_atomic_t fd_interrupted;
extern void fd_catch_signals (void);

/* Between fd_shield_begin and fd_shield_end (they nest) a signal still
 * sets fd_interrupted, but fd_run lets its command finish (timeouts
 * still apply): taking a disk down, and losetup between attaching a
 * device and naming it, must not be cut short by the signal that asked
 * for them.
 */
extern void fd_shield_begin (void);
extern void fd_shield_end (void);

/* Monotonic seconds (for wall times). */
extern double fd_now_s (void);

/* The command line as one string for messages (static buffer). */
extern const char *fd_argv_str (char *const argv[]);

#endif
