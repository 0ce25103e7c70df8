/* futuredisk — common: running tools (see proc.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "errmsg.h"
#include "proc.h"

#define OUT_MAX      (16 << 20)
#define PROGRESS_MAX 512

volatile sig_atomic_t fd_interrupted;
static int shield;

void
fd_shield_begin (void)
{
  shield++;
}

void
fd_shield_end (void)
{
  shield--;
}

static void
on_signal (int sig)
{
  fd_interrupted = sig;
}

void
fd_catch_signals (void)
{
  struct sigaction sa = {.sa_handler = on_signal};
  int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  size_t i;

  /* No SA_RESTART: a blocking call returns EINTR and the loop looks. */
  sigemptyset (&sa.sa_mask);
  for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    sigaction (sigs[i], &sa, NULL);
}

double
fd_now_s (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *
fd_argv_str (char *const argv[])
{
  static char buf[1024];
  size_t n = 0;
  int i;

  buf[0] = '\0';
  for (i = 0; argv[i] && n < sizeof buf - 1; i++)
    n += (size_t)snprintf (buf + n, sizeof buf - n, "%s%s", i ? " " : "",
                           argv[i]);
  return buf;
}

struct sink {
  int fd;
  char *buf;
  size_t len;
  bool skip;               /* the progress pipe: dropping a line too long */
  FILE *log;               /* every byte, or NULL */
  const char *const *keep; /* line starts kept, or NULL (fd_watch) */
  char line[512];          /* with keep: the line being read */
  size_t llen;
  bool lskip;               /* a line too long for line[], dropped */
  unsigned repeat_limit;    /* or 0 (fd_watch) */
  char cur[256], prev[256]; /* the line being read, the one before */
  size_t clen, plen;
  bool clong;    /* cur too long for cur[]: never a repeat */
  unsigned same; /* prev's run so far */
};

/* One read of the sink's pipe into tmp: how many bytes; 0 when none came
 * (interrupted, or at EOF, when the pipe is closed and s->fd is -1).
 */
static size_t
sink_read (struct sink *s, char *tmp, size_t size)
{
  ssize_t n = read (s->fd, tmp, size);

  if (n == -1 && (errno == EINTR || errno == EAGAIN))
    return 0;
  if (n <= 0) {
    close (s->fd);
    s->fd = -1;
    return 0;
  }
  return (size_t)n;
}

/* Add n bytes to the sink's buffer, as far as OUT_MAX allows. */
static void
add (struct sink *s, const char *b, size_t n)
{
  if (s->len + n > OUT_MAX)
    n = OUT_MAX - s->len;
  memcpy (s->buf + s->len, b, n);
  s->len += n;
  s->buf[s->len] = '\0';
}

/* Does line (NUL-ended) begin, after blanks, with one of starts? */
static bool
line_kept (const char *line, const char *const *starts)
{
  line += strspn (line, " \t");
  for (; *starts; starts++)
    if (strncmp (line, *starts, strlen (*starts)) == 0)
      return true;
  return false;
}

/* With keep, past half of OUT_MAX: byte c of a line, and the line added
 * whole if keep says so.
 */
static void
filter (struct sink *s, char c)
{
  if (c != '\n') {
    if (s->llen < sizeof s->line - 1)
      s->line[s->llen++] = c;
    else
      s->lskip = true;
    return;
  }
  s->line[s->llen] = '\0';
  if (!s->lskip && line_kept (s->line, s->keep) &&
      s->len + s->llen + 1 <= OUT_MAX) {
    s->line[s->llen] = '\n';
    add (s, s->line, s->llen + 1);
  }
  s->llen = 0;
  s->lskip = false;
}

/* Follow n bytes of output line by line, counting in s->same how many
 * times in a row the last line came, up to s->repeat_limit.
 */
static void
repeats (struct sink *s, const char *b, size_t n)
{
  while (n > 0) {
    const char *nl = memchr (b, '\n', n);
    size_t k = nl ? (size_t)(nl - b) : n, room = sizeof s->cur - 1 - s->clen;

    memcpy (s->cur + s->clen, b, k < room ? k : room);
    s->clen += k < room ? k : room;
    s->clong = s->clong || k > room;
    if (nl == NULL)
      return;
    if (!s->clong && s->same && s->clen == s->plen &&
        memcmp (s->cur, s->prev, s->clen) == 0) {
      s->same++;
    } else {
      memcpy (s->prev, s->cur, s->clen);
      s->plen = s->clen;
      s->same = s->clong ? 0 : 1;
    }
    s->clen = 0;
    s->clong = false;
    b += k + 1;
    n -= k + 1;
    if (s->same >= s->repeat_limit)
      return;
  }
}

/* Append what is there to the sink's buffer (the first OUT_MAX bytes
 * kept, the rest dropped; with keep, the first half, then the lines it
 * keeps) and to its log.
 */
static void
drain (struct sink *s)
{
  char tmp[65536];
  size_t n = sink_read (s, tmp, sizeof tmp), i = 0;

  if (s->log && n)
    fwrite (tmp, 1, n, s->log);
  if (s->repeat_limit && s->same < s->repeat_limit)
    repeats (s, tmp, n);
  if (s->keep == NULL) {
    add (s, tmp, n);
    return;
  }
  /* Whole lines while under half: a line is never cut at the switch. */
  while (i < n && s->llen == 0 &&
         (s->len < OUT_MAX / 2 ||
          (s->len < OUT_MAX && s->buf[s->len - 1] != '\n'))) {
    const char *nl = memchr (tmp + i, '\n', n - i);
    size_t k = nl ? (size_t)(nl - (tmp + i)) + 1 : n - i;
    if (nl == NULL) {
      add (s, tmp + i, k); /* a partial line: ends on the next read */
      i = n;
      break;
    }
    add (s, tmp + i, k);
    i += k;
  }
  for (; i < n; i++)
    filter (s, tmp[i]);
}

/* The child: its own process group (so a timeout kills all it started),
 * stdin from /dev/null, stdout and stderr into the pipes, and fd 3 into
 * the progress pipe if there is one (-1: none).
 */
static void __attribute__ ((noreturn))
exec_child (char *const argv[], int out, int errp, int prog,
            const struct fd_cgroup *cg)
{
  int null = open ("/dev/null", O_RDONLY);

  if (cg)
    fd_cgroup_enter (cg);
  setpgid (0, 0);
  dup2 (null, 0);
  dup2 (out, 1);
  dup2 (errp, 2);
  if (prog != -1)
    dup2 (prog, 3); /* dup2 clears close-on-exec on the copy */
  signal (SIGPIPE, SIG_DFL);
  execvp (argv[0], argv);
  fprintf (stderr, "%s: %s\n", argv[0], fd_strerror (errno));
  _exit (127);
}

/* Read the progress pipe: each complete line moves to last (size
 * bytes); a line longer than the sink's buffer is dropped whole, and
 * what follows it is kept.
 */
static void
drain_lines (struct sink *s, char *last, size_t size)
{
  char tmp[4096];
  size_t n = sink_read (s, tmp, sizeof tmp), i;

  for (i = 0; i < n; i++) {
    if (tmp[i] == '\n') {
      if (!s->skip && s->len < size) {
        memcpy (last, s->buf, s->len);
        last[s->len] = '\0';
      }
      s->len = 0;
      s->skip = false;
    } else if (s->len < PROGRESS_MAX - 1) {
      s->buf[s->len++] = tmp[i];
    } else {
      s->skip = true; /* too long for a progress line */
    }
  }
}

/* Collect the pipes until they close, the deadline passes (the group
 * is killed, p->timed_out) or an unshielded interrupt comes; with a
 * watch, tick after each wake.
 */
static void
collect (pid_t pid, struct sink sinks[3], double t0, double timeout_s,
         const struct fd_watch *w, struct fd_proc *p)
{
  char last[PROGRESS_MAX] = "";
  int i;

  while (sinks[0].fd != -1 || sinks[1].fd != -1 || sinks[2].fd != -1) {
    struct pollfd fds[3];
    int nf = 0, wait_ms = 1000;

    for (i = 0; i < 3; i++)
      if (sinks[i].fd != -1)
        fds[nf++] = (struct pollfd){.fd = sinks[i].fd, .events = POLLIN};
    if (fd_interrupted && !shield) {
      kill (-pid, SIGKILL);
      break;
    }
    if (timeout_s > 0) {
      double left = t0 + timeout_s - fd_now_s ();
      if (left <= 0) {
        p->timed_out = true;
        kill (-pid, SIGKILL);
        break;
      }
      if (left * 1000 < wait_ms)
        wait_ms = (int)(left * 1000) + 1;
    }
    if (poll (fds, (nfds_t)nf, wait_ms) > 0)
      for (i = 0; i < 3; i++) {
        int j;
        for (j = 0; j < nf && sinks[i].fd != -1; j++)
          if (fds[j].fd == sinks[i].fd && fds[j].revents) {
            if (i == 2)
              drain_lines (&sinks[i], last, sizeof last);
            else
              drain (&sinks[i]);
          }
      }
    for (i = 0; i < 2; i++)
      if (sinks[i].repeat_limit && sinks[i].same >= sinks[i].repeat_limit &&
          !p->repeating) {
        p->repeating = true;
        snprintf (p->repeated, sizeof p->repeated, "%.*s", (int)sinks[i].plen,
                  sinks[i].prev);
        kill (-pid, SIGKILL);
        /* Read no more of the loop, but the rest of what the other
         * pipes hold, up to their end: the group is dead.
         */
        close (sinks[i].fd);
        sinks[i].fd = -1;
      }
    if (w && w->tick)
      w->tick (w->opaque, last, p);
  }
  for (i = 0; i < 3; i++)
    if (sinks[i].fd != -1)
      close (sinks[i].fd);
}

/* Reap the child: its status, and its wall and CPU time. */
static void
reap (pid_t pid, double t0, struct fd_proc *p)
{
  struct rusage ru;
  int status;

  while (wait4 (pid, &status, 0, &ru) == -1 && errno == EINTR)
    ;
  p->wall_s = fd_now_s () - t0;
  p->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
             (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
  if (WIFEXITED (status)) {
    p->status = WEXITSTATUS (status);
  } else {
    p->status = -1;
    p->signal = WTERMSIG (status);
  }
}

int
fd_run (char *const argv[], double timeout_s, struct fd_proc *p,
        struct fm_err *err)
{
  return fd_run_watched (argv, timeout_s, NULL, p, err);
}

/* The pipes: stdout, stderr and (with a watch asking for it) progress. */
static int
open_pipes (int fds[3][2], bool progress, struct fm_err *err)
{
  int i;

  for (i = 0; i < 3; i++)
    fds[i][0] = fds[i][1] = -1;
  for (i = 0; i < (progress ? 3 : 2); i++)
    if (pipe2 (fds[i], O_CLOEXEC) == -1) {
      fm_fail (err, "pipe: %s", fd_strerror (errno));
      while (i-- > 0)
        close (fds[i][0]), close (fds[i][1]);
      return -1;
    }
  return 0;
}

int
fd_run_watched (char *const argv[], double timeout_s, const struct fd_watch *w,
                struct fd_proc *p, struct fm_err *err)
{
  int fds[3][2], i;
  struct sink sinks[3];
  char prog[PROGRESS_MAX];
  double t0 = fd_now_s ();
  pid_t pid;

  memset (p, 0, sizeof *p);
  p->out = calloc (1, OUT_MAX + 1);
  p->err = calloc (1, OUT_MAX + 1);
  if (p->out == NULL || p->err == NULL) {
    fd_proc_free (p);
    return fm_fail (err, "out of memory");
  }
  if (open_pipes (fds, w && w->progress_pipe, err) == -1) {
    fd_proc_free (p);
    return -1;
  }
  pid = fork ();
  if (pid == -1) {
    fm_fail (err, "fork: %s", fd_strerror (errno));
    for (i = 0; i < 3; i++)
      if (fds[i][0] != -1)
        close (fds[i][0]), close (fds[i][1]);
    fd_proc_free (p);
    return -1;
  }
  if (pid == 0)
    exec_child (argv, fds[0][1], fds[1][1], fds[2][1], w ? w->cgroup : NULL);
  setpgid (pid, pid);
  for (i = 0; i < 3; i++)
    if (fds[i][1] != -1)
      close (fds[i][1]);
  prog[0] = '\0';
  sinks[0] = (struct sink){.fd = fds[0][0],
                           .buf = p->out,
                           .log = w ? w->log : NULL,
                           .keep = w ? w->keep : NULL};
  sinks[1] = (struct sink){.fd = fds[1][0], .buf = p->err};
  sinks[0].repeat_limit = sinks[1].repeat_limit = w ? w->repeat_limit : 0;
  sinks[2] =
      (struct sink){.fd = fds[2][0], .buf = fds[2][0] == -1 ? NULL : prog};
  collect (pid, sinks, t0, timeout_s, w, p);
  reap (pid, t0, p);
  return 0;
}

void
fd_proc_free (struct fd_proc *p)
{
  free (p->out);
  free (p->err);
  p->out = p->err = NULL;
}

int
fd_run_ok (char *const argv[], double timeout_s, struct fm_err *err)
{
  char *out;

  if (fd_run_capture (argv, timeout_s, &out, err) == -1)
    return -1;
  free (out);
  return 0;
}

int
fd_run_capture (char *const argv[], double timeout_s, char **out,
                struct fm_err *err)
{
  struct fd_proc p;
  size_t n;

  *out = NULL;
  if (fd_run (argv, timeout_s, &p, err) == -1)
    return -1;
  if (p.status == 0) {
    *out = p.out;
    p.out = NULL;
    fd_proc_free (&p);
    return 0;
  }
  n = strlen (p.err);
  while (n > 0 && p.err[n - 1] == '\n')
    p.err[--n] = '\0';
  if (p.timed_out)
    fm_fail (err, "%s: no answer within %g s", fd_argv_str (argv), timeout_s);
  else if (p.signal)
    fm_fail (err, "%s: killed by signal %d", fd_argv_str (argv), p.signal);
  else
    fm_fail (err, "%s: exit %d: %s", fd_argv_str (argv), p.status,
             n > 300 ? p.err + n - 300 : p.err);
  fd_proc_free (&p);
  return -1;
}

/* Fork a child running argv in its own session with stdout and stderr
 * appended to log.  The child's pid, or -1 with err.
 */
pid_t
fd_spawn (char *const argv[], const char *log, struct fm_err *err)
{
  int fd = open (log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  pid_t pid;

  if (fd == -1) {
    return fm_fail (err, "%s: %s", log, fd_strerror (errno));
  }
  pid = fork ();
  if (pid == -1) {
    close (fd);
    return fm_fail (err, "fork: %s", fd_strerror (errno));
  }
  if (pid == 0) {
    int null = open ("/dev/null", O_RDONLY);

    /* A server must not hold our pipes or share our signals. */
    setsid ();
    dup2 (null, 0);
    dup2 (fd, 1);
    dup2 (fd, 2);
    execvp (argv[0], argv);
    fprintf (stderr, "%s: %s\n", argv[0], fd_strerror (errno));
    _exit (127);
  }
  close (fd);
  return pid;
}

/* The program argv runs: argv[0], or the one env(1) runs after its
 * VAR=VALUE settings.
 */
static const char *
program_of (char *const argv[])
{
  int i = 1;

  if (strcmp (argv[0], "env") != 0)
    return argv[0];
  while (argv[i] && strchr (argv[i], '='))
    i++;
  return argv[i] ? argv[i] : argv[0];
}

/* What the log holds from byte `from` on (its last size - 1 bytes at
 * most, trailing newlines dropped) into out; "" if nothing.
 */
static void
log_since (const char *log, off_t from, char *out, size_t size)
{
  FILE *fp = fopen (log, "r");
  struct stat st;
  size_t n = 0;

  out[0] = '\0';
  if (fp == NULL)
    return;
  if (fstat (fileno (fp), &st) == 0 && st.st_size > from) {
    off_t at = st.st_size - from > (off_t)size - 1
                   ? st.st_size - (off_t)size + 1
                   : from;
    if (fseeko (fp, at, SEEK_SET) == 0)
      n = fread (out, 1, size - 1, fp);
  }
  fclose (fp);
  out[n] = '\0';
  while (n > 0 && out[n - 1] == '\n')
    out[--n] = '\0';
}

/* Wait for the daemon's starting process: its exit status into *status
 * (0: it is ready), or -1 with err when it timed out or, having written a
 * line containing fatal to the log after byte from, did not exit within
 * FD_DAEMON_GRACE_S (killed then, *hung set).
 */
static int
wait_daemon (char *const argv[], pid_t pid, const char *log, off_t from,
             const char *fatal, double timeout_s, int *status, bool *hung,
             struct fm_err *err)
{
  double t0 = fd_now_s (), said = 0;
  char text[4096];

  *hung = false;
  while (waitpid (pid, status, WNOHANG) == 0) {
    struct timespec ts = {0, 20000000};
    double now = fd_now_s ();
    if (fatal && said == 0) {
      log_since (log, from, text, sizeof text);
      if (strstr (text, fatal))
        said = now;
    }
    if ((said > 0 && now - said > FD_DAEMON_GRACE_S) || now - t0 > timeout_s) {
      kill (pid, SIGKILL);
      waitpid (pid, status, 0);
      if (said > 0) {
        *hung = true;
        return 0;
      }
      return fm_fail (err, "%s: not ready within %g s", fd_argv_str (argv),
                      timeout_s);
    }
    nanosleep (&ts, NULL);
  }
  return 0;
}

int
fd_run_daemon (char *const argv[], const char *log, const char *fatal,
               double timeout_s, struct fm_err *err)
{
  char tail[400];
  struct stat st;
  off_t from = stat (log, &st) == 0 ? st.st_size : 0;
  pid_t pid = fd_spawn (argv, log, err);
  int status;
  bool hung;

  if (pid == -1 || wait_daemon (argv, pid, log, from, fatal, timeout_s, &status,
                                &hung, err) == -1)
    return -1;
  if (!hung && WIFEXITED (status) && WEXITSTATUS (status) == 0)
    return 0;
  log_since (log, from, tail, sizeof tail);
  if (hung)
    return fm_fail (err,
                    "%s failed: %s (and did not exit: killed %d s after "
                    "saying so)",
                    program_of (argv), tail, FD_DAEMON_GRACE_S);
  if (tail[0])
    return fm_fail (err, "%s failed: %s", program_of (argv), tail);
  if (WIFSIGNALED (status))
    return fm_fail (err, "%s failed: killed by signal %d; %s says nothing",
                    program_of (argv), WTERMSIG (status), log);
  return fm_fail (err, "%s failed: exit %d; %s says nothing", program_of (argv),
                  WEXITSTATUS (status), log);
}
