/* futuredisk — harness: a checker (check, repair, recheck) run as one phase
 * (see trial-int.h).
 */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "attach.h"
#include "cgroup.h"
#include "progname.h"
#include "ctlclient.h"
#include "errmsg.h"
#include "faultmodels/units.h"
#include "fsadapter.h"
#include "hostrun.h"
#include "json.h"
#include "proc.h"
#include "evidence.h"
#include "trial-int.h"

/* A checker running: what its progress line and pass times need. */
struct watch {
  struct trial *t;
  struct fd_disk *d;
  struct phase *p;
  uint64_t pass_vns; /* the clock as the last pass began */
  const char *name;
  const struct fd_clocks *c0;
  double last;           /* wall time of the last line */
  size_t out_at, err_at; /* how far last_pass has read */
  char pass[96];         /* the last pass named */
  int num;               /* its number (0: none yet) */
  bool sub;              /* a pass within it ("Pass 1B"), whose share of
                            work done e2fsck does not report */
};

/* A pass called name begins with the disk's clock at vns: the pass
 * before it closes.
 */
static void
pass_boundary (struct phase *p, uint64_t *since, uint64_t vns, const char *name)
{
  if (p->nvpasses)
    p->vpasses[p->nvpasses - 1].seconds = (double)(vns - *since) / 1e9;
  *since = vns;
  if (p->nvpasses < sizeof p->vpasses / sizeof p->vpasses[0]) {
    snprintf (p->vpasses[p->nvpasses].name, sizeof p->vpasses[p->nvpasses].name,
              "%s", name);
    p->vpasses[p->nvpasses++].seconds = 0;
  }
}

/* The disk's virtual clock now, or `otherwise`. */
static uint64_t
virtual_now (struct fd_disk *d, uint64_t otherwise)
{
  struct fd_json *j;
  struct fm_err err;
  uint64_t vns = otherwise;

  if (fd_ctl_ok (fd_disk_control (d), "stats", &j, &err) == -1)
    return otherwise; /* the phase's end reports a dead control socket */
  if (fd_json_u64 (j, "stats.virtual_ns", &vns, &err) == -1 || vns < otherwise)
    vns = otherwise;
  fd_json_free (j);
  return vns;
}

/* The lines of text[*at..] that start a pass: the last one's heading
 * and number in w->pass and w->num (untouched if there is none), and
 * each one a boundary of w's virtual pass times.  *at moves past the
 * last whole line, so each line is read once however long the output
 * grows (a repair can print megabytes).
 */
static void
last_pass (struct watch *w, const char *text, size_t *at)
{
  const struct fd_fs *fs = w->t->s->fs;
  const char *line = text + *at;

  while (*line) {
    const char *end = strchr (line, '\n');
    char l[128], name[32];
    int n;
    if (end == NULL)
      break; /* not whole yet */
    /* sscanf measures its whole input: give it the line alone. */
    snprintf (l, sizeof l, "%.*s", (int)(end - line), line);
    if (fs->pass_heading && fs->pass_heading (l, &n, name, sizeof name)) {
      snprintf (w->pass, sizeof w->pass, "%s", l);
      w->num = n;
      w->sub = strncmp (name, "pass ", 5) == 0 &&
               name[strspn (name + 5, "0123456789") + 5] != '\0';
      pass_boundary (w->p, &w->pass_vns, virtual_now (w->d, w->pass_vns), name);
    }
    line = end + 1;
  }
  *at = (size_t)(line - text);
}

/* One progress line, when the last is progress_every old: the virtual
 * time the checker has taken so far (the disk's clock), the wall time,
 * its pass, and the share of that pass done where the checker says so
 * ("PASS DONE TOTAL DEVICE" on fd 3, for the pass the output is in).
 */
static void
check_tick (void *opaque, const char *progress, const struct fd_proc *pr)
{
  struct watch *w = opaque;
  double now = fd_now_s ();
  char pass[96], share[32] = "", virt[32];
  uint64_t vns;
  unsigned long done, total;
  int p;

  last_pass (w, pr->err, &w->err_at);
  last_pass (w, pr->out, &w->out_at);
  if (!w->t->s->progress || now - w->last < w->t->s->progress_every)
    return;
  vns = virtual_now (w->d, w->c0->vns);
  w->last = now;
  snprintf (pass, sizeof pass, "%s", w->pass);
  if (sscanf (progress, "%d %lu %lu", &p, &done, &total) == 3 && total > 0 &&
      (p == w->num || w->num == 0) && !w->sub) {
    if (w->num == 0) /* the output names no pass: the progress line does */
      snprintf (pass, sizeof pass, "pass %d", p);
    snprintf (share, sizeof share, " (%.0f %% done)",
              100.0 * (double)done / (double)total);
  }
  fm_format_duration ((double)(vns - w->c0->vns) / 1e9, virt, sizeof virt);
  fprintf (w->t->s->progress, "%s: %s: %s virtual so far (%.0f s wall)%s%s%s\n",
           fd_progname, w->name, virt, now - w->c0->wall, pass[0] ? "; " : "",
           pass, share);
  fflush (w->t->s->progress);
}

/* The checker's command line: the template's, with the progress option
 * after the program name when progress is shown.
 */
static void
checker_argv (const struct trial *t, const char *const *tmpl, struct fd_disk *d,
              char *argv[FD_ARGV_MAX + 2])
{
  const char *with[FD_ARGV_MAX + 1] = {tmpl[0]};
  size_t i, n = 1;

  if (t->s->progress && t->s->fs->progress_opt)
    with[n++] = t->s->fs->progress_opt;
  for (i = 1; i < FD_ARGV_MAX && tmpl[i] && n < FD_ARGV_MAX; i++)
    with[n++] = tmpl[i];
  with[n] = NULL;
  fd_fs_argv (with, fd_disk_device (d), argv);
}

/* Cold caches, as after a reboot: the checker's reads reach the disk.
 * Only this device's page cache is dropped (BLKFLSBUF, as `blockdev
 * --flushbufs`): dropping the machine's (vm.drop_caches) also emptied it
 * under the checker of a trial running beside this one, which then read
 * again what it had read, up to four times the requests from one run of
 * the same check to the next.  A checker that reaches the disk without
 * the kernel (fsck.chunkfs over NBD) has no such cache.
 */
static void
cold_device (const struct fd_disk *d)
{
  int fd = open (fd_disk_device (d), O_RDONLY | O_CLOEXEC);
  struct stat st;

  if (fd == -1)
    return;
  if (fstat (fd, &st) == 0 && S_ISBLK (st.st_mode))
    ioctl (fd, BLKFLSBUF, 0);
  close (fd);
}

/* A checker phase's cgroup counters at its start (think=cpu, --host). */
struct host_counts {
  uint64_t oom, cpu_us;
};

static void
host_begin (const struct trial *t, struct host_counts *hc)
{
  const struct fd_cgroup *cg = t->s->cgroup;

  hc->oom = cg ? fd_cgroup_oom_kills (cg) : 0;
  hc->cpu_us = cg ? fd_cgroup_cpu_usec (cg) : 0;
}

/* Did the host's memory limit kill a process of the checker?  That is
 * a finding (the checker does not fit on that host), not the rig's
 * failure.
 */
static bool
host_oom (const struct trial *t, const struct host_counts *hc)
{
  return t->s->cgroup && fd_cgroup_oom_kills (t->s->cgroup) > hc->oom;
}

/* What think=cpu put on the clock; -1 where nothing was (the checkers
 * run in a cgroup with every think mode, for the drive to watch them).
 */
static double
host_charged (const struct trial *t, const struct host_counts *hc)
{
  if (t->s->cgroup == NULL || t->s->think == NULL ||
      strcmp (t->s->think, "cpu") != 0)
    return -1;
  return (double)(fd_cgroup_cpu_usec (t->s->cgroup) - hc->cpu_us) / 1e6 /
         fd_hostrun_speed (t->s->host);
}

/* One command of a checker phase, its stdout and then its stderr
 * appended to fp after the command line (the evidence says what ran).
 */
static int
checker_cmd (struct trial *t, struct fd_disk *d, const char *const *tmpl,
             struct watch *w, FILE *fp, struct fd_proc *pr, struct fm_err *err)
{
  char *argv[FD_ARGV_MAX + 2];
  struct fd_watch watch;
  size_t i;

  checker_argv (t, tmpl, d, argv);
  fputs ("$", fp);
  for (i = 0; argv[i]; i++)
    fprintf (fp, " %s", argv[i]);
  fputs ("\n", fp);
  fflush (fp);
  w->out_at = w->err_at = 0;
  watch = (struct fd_watch){t->s->progress && t->s->fs->progress_opt != NULL,
                            check_tick,
                            w,
                            fp,
                            t->s->fs->kept_lines,
                            t->s->fs->loop_lines,
                            t->s->cgroup};
  if (fd_run_watched (argv, t->s->timeout, &watch, pr, err) == -1)
    return -1;
  fputs (pr->err, fp);
  return 0;
}

/* The templates a checker phase runs, in order, and how many. */
static size_t
checker_templates (const struct trial *t, const char *name, bool repair,
                   const char *const *tmpls[FD_ESCALATE_MAX])
{
  size_t n = 0;

  if (strcmp (name, "escalate") == 0) {
    while (n < FD_ESCALATE_MAX && t->s->fs->escalate[n][0]) {
      tmpls[n] = t->s->fs->escalate[n];
      n++;
    }
    return n;
  }
  tmpls[0] = strcmp (name, "repair-zap-log") == 0 ? t->s->fs->repair_zap_log
             : repair                             ? t->s->fs->repair
                                                  : t->s->fs->check;
  return 1;
}

/* Run a checker (check, repair, recheck, or the commands of escalate
 * in turn, until one times out or loops) as one phase.
 */
int
fd_trial_checker (struct trial *t, struct fd_disk *d, const char *name,
                  bool repair, struct fm_err *err)
{
  const char *const *tmpls[FD_ESCALATE_MAX];
  size_t n = checker_templates (t, name, repair, tmpls), k;
  char log[PATH_MAX + FD_EVIDENCE_NAME + 2], out[FD_EVIDENCE_NAME];
  struct fd_clocks c;
  struct fd_proc pr = {0};
  struct watch w;
  FILE *fp;
  struct phase *p;
  enum fd_outcome o = FD_CLEAN;
  struct host_counts hc;

  cold_device (d);
  if ((p = fd_phase_begin (t, d, name, &c, err)) == NULL)
    return -1;
  fd_evidence_output_name (t->r, t->r->nph - 1, out);
  snprintf (log, sizeof log, "%s/%s", t->s->dir, out);
  if ((fp = fopen (log, "w")) == NULL)
    return fm_fail (err, "%s: %s", log, fd_strerror (errno));
  w = (struct watch){t, d, p, c.vns, name, &c, fd_now_s (), 0, 0, "", 0, false};
  host_begin (t, &hc);
  for (k = 0; k < n && o != FD_TIMEOUT && o != FD_LOOPING && o != FD_OOM; k++) {
    if (k)
      fd_proc_free (&pr);
    if (checker_cmd (t, d, tmpls[k], &w, fp, &pr, err) == -1) {
      fclose (fp);
      return -1;
    }
    o = pr.timed_out        ? FD_TIMEOUT
        : pr.repeating      ? FD_LOOPING
        : host_oom (t, &hc) ? FD_OOM
                            : t->s->fs->outcome (pr.status, pr.signal, repair);
  }
  p->charged_s = host_charged (t, &hc);
  if ((ferror (fp) | fclose (fp)) != 0) {
    fd_proc_free (&pr);
    return fm_fail (err, "%s: %s", log, fd_strerror (errno));
  }
  if (fd_phase_end (d, p, &c, err) == -1) {
    fd_proc_free (&pr);
    return -1;
  }
  if (p->nvpasses) /* the last pass runs to the phase's end */
    p->vpasses[p->nvpasses - 1].seconds =
        p->virtual_s - (double)(w.pass_vns - c.vns) / 1e9;
  p->status = pr.status;
  p->signal = pr.signal;
  if (pr.repeating && t->s->progress) {
    fprintf (t->s->progress,
             "%s: %s: stopped after %.0f s wall: it printed \"%s\" %u "
             "times in a row\n",
             fd_progname, name, pr.wall_s, pr.repeated, t->s->fs->loop_lines);
    fflush (t->s->progress);
  }
  p->outcome = fd_outcome_name (o);
  p->npasses = t->s->fs->passes (pr.out, p->passes, 12);
  fd_proc_free (&pr);
  if (fd_interrupted) {
    return fm_fail (err, "interrupted");
  }
  return 0;
}
