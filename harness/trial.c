/* futuredisk — harness: the trial engine (see trial.h). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "commands.h" /* fd_progname */
#include "crashpoints.h"
#include "ctlclient.h"
#include "errmsg.h"
#include "faultmodels/measure.h"
#include "faultmodels/rng.h"
#include "faultmodels/units.h"
#include "fsadapter.h"
#include "json.h"
#include "load-profile.h"
#include "populate.h"
#include "reuse.h"
#include "attribute.h"
#include "trial.h"
#include "proc.h"
#include "cgroup.h"
#include "hostrun.h"

static double
self_cpu (void)
{
  struct rusage a, b;

  getrusage (RUSAGE_SELF, &a);
  getrusage (RUSAGE_CHILDREN, &b);
  return (double)(a.ru_utime.tv_sec + a.ru_stime.tv_sec + b.ru_utime.tv_sec +
                  b.ru_stime.tv_sec) +
         (double)(a.ru_utime.tv_usec + a.ru_stime.tv_usec + b.ru_utime.tv_usec +
                  b.ru_stime.tv_usec) /
             1e6;
}

/* A phase in progress: where its clocks and counters started. */
struct clocks {
  double wall, cpu;
  uint64_t vns, reads, writes, br, bw, rerr;
};

static int
sample (struct fd_disk *d, const char *name, struct clocks *c,
        struct fm_err *err)
{
  char line[128];
  struct fd_json *j;
  struct fd_stats s;
  int ret;

  snprintf (line, sizeof line, "mark %s", name);
  if (fd_ctl_ok (fd_disk_control (d), line, &j, err) == -1)
    return -1;
  ret = fd_json_u64 (j, "virtual_ns", &c->vns, err);
  fd_json_free (j);
  if (ret == -1 || fd_ctl_ok (fd_disk_control (d), "stats", &j, err) == -1)
    return -1;
  ret = fd_stats_read (j, &s, err);
  fd_json_free (j);
  if (ret == -1)
    return -1;
  c->reads = s.reads;
  c->writes = s.writes;
  c->br = s.bytes_read;
  c->bw = s.bytes_written;
  c->rerr = s.ure + s.lse;
  c->wall = fd_now_s ();
  c->cpu = self_cpu ();
  return 0;
}

static struct phase *
begin (struct trial *t, struct fd_disk *d, const char *name, struct clocks *c,
       struct fm_err *err)
{
  struct phase *p = &t->ph[t->nph];

  memset (p, 0, sizeof *p);
  p->name = name;
  if (sample (d, name, c, err) == -1)
    return NULL;
  t->nph++;
  fprintf (stderr, "%s: %s ...\n", fd_progname, name);
  return p;
}

static int
end (struct fd_disk *d, struct phase *p, const struct clocks *c0,
     struct fm_err *err)
{
  struct clocks c1;

  if (sample (d, p->name, &c1, err) == -1)
    return -1;
  p->virtual_s = (double)(c1.vns - c0->vns) / 1e9;
  p->wall_s = c1.wall - c0->wall;
  p->cpu_s = c1.cpu - c0->cpu;
  p->reads = c1.reads - c0->reads;
  p->writes = c1.writes - c0->writes;
  p->bytes_read = c1.br - c0->br;
  p->bytes_written = c1.bw - c0->bw;
  p->read_errors = c1.rerr - c0->rerr;
  return 0;
}

/* A checker running: what its progress line and pass times need. */
struct watch {
  struct trial *t;
  struct fd_disk *d;
  struct phase *p;
  uint64_t pass_vns; /* the clock as the last pass began */
  const char *name;
  const struct clocks *c0;
  double last;           /* wall time of the last line */
  size_t out_at, err_at; /* how far last_pass has read */
  char pass[96];         /* the last pass named */
  int num;               /* its number (0: none yet) */
  bool sub;              /* a pass within it ("Pass 1B"), whose share of
                            work done e2fsck does not report */
};

/* Does line l start a pass: e2fsck's and fsck.chunkfs's "Pass 2:
 * Checking ..." or "Pass 1B: ..." (not their timing lines, "Pass 2:
 * Memory used", "Pass 5: I/O read", "Pass 2: time"), xfs_repair's "Phase
 * 3 - ...", btrfs check's "[2/7] checking ..."?  Its number in *num and
 * a short name ("pass 1b", "phase 3", "step 2/7") in name.
 */
static bool
pass_heading (const char *l, int *num, char *name, size_t len)
{
  char id[16];
  int n, a, b, k = 0;
  size_t i;

  if (sscanf (l, "Pass %15[0-9A-Za-z]: %n", id, &k) == 1 && k > 0 &&
      sscanf (id, "%d", &n) == 1 && strncmp (l + k, "Memory used", 11) != 0 &&
      strncmp (l + k, "I/O ", 4) != 0 && strncmp (l + k, "time ", 5) != 0) {
    for (i = 0; id[i]; i++)
      id[i] = (char)tolower ((unsigned char)id[i]);
    snprintf (name, len, "pass %s", id);
  } else if (sscanf (l, "Phase %d -%n", &n, &k) == 1 && k > 0) {
    snprintf (name, len, "phase %d", n);
  } else if (sscanf (l, "[%d/%d]", &a, &b) == 2 && (n = a) > 0) {
    snprintf (name, len, "step %d/%d", a, b);
  } else {
    return false;
  }
  *num = n;
  return true;
}

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
  const char *line = text + *at;

  while (*line) {
    const char *end = strchr (line, '\n');
    char l[128], name[32];
    int n;
    if (end == NULL)
      break; /* not whole yet */
    /* sscanf measures its whole input: give it the line alone. */
    snprintf (l, sizeof l, "%.*s", (int)(end - line), line);
    if ((*l == 'P' || *l == '[') && pass_heading (l, &n, name, sizeof name)) {
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
  if (!w->t->progress || now - w->last < w->t->progress_every)
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
  fprintf (w->t->progress, "%s: %s: %s virtual so far (%.0f s wall)%s%s%s\n",
           fd_progname, w->name, virt, now - w->c0->wall, pass[0] ? "; " : "",
           pass, share);
  fflush (w->t->progress);
}

/* A checker phase's cgroup counters at its start (think=cpu, --host). */
struct host_counts {
  uint64_t oom, cpu_us;
};

static void
host_begin (const struct trial *t, struct host_counts *hc)
{
  hc->oom = t->cgroup ? fd_cgroup_oom_kills (t->cgroup) : 0;
  hc->cpu_us = t->cgroup ? fd_cgroup_cpu_usec (t->cgroup) : 0;
}

/* Did the host's memory limit kill a process of the checker?  That is
 * a finding (the checker does not fit on that host), not the rig's
 * failure.
 */
static bool
host_oom (const struct trial *t, const struct host_counts *hc)
{
  return t->cgroup && fd_cgroup_oom_kills (t->cgroup) > hc->oom;
}

static double
host_charged (const struct trial *t, const struct host_counts *hc)
{
  if (t->cgroup == NULL)
    return -1;
  return (double)(fd_cgroup_cpu_usec (t->cgroup) - hc->cpu_us) / 1e6 /
         fd_hostrun_speed (t->host);
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

  if (t->progress && t->fs->progress_opt)
    with[n++] = t->fs->progress_opt;
  for (i = 1; i < FD_ARGV_MAX && tmpl[i] && n < FD_ARGV_MAX; i++)
    with[n++] = tmpl[i];
  with[n] = NULL;
  fd_fs_argv (with, fd_disk_device (d), argv);
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
  watch = (struct fd_watch){t->progress && t->fs->progress_opt != NULL,
                            check_tick,
                            w,
                            fp,
                            fd_checker_line_kept,
                            t->fs->loop_lines,
                            t->cgroup};
  if (fd_run_watched (argv, t->timeout, &watch, pr, err) == -1)
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
    while (n < FD_ESCALATE_MAX && t->fs->escalate[n][0]) {
      tmpls[n] = t->fs->escalate[n];
      n++;
    }
    return n;
  }
  tmpls[0] = strcmp (name, "repair-zap-log") == 0 ? t->fs->repair_zap_log
             : repair                             ? t->fs->repair
                                                  : t->fs->check;
  return 1;
}

/* Run a checker (check, repair, recheck, or the commands of escalate
 * in turn, until one times out or loops) as one phase.
 */
static int
checker (struct trial *t, struct fd_disk *d, const char *name, bool repair,
         struct fm_err *err)
{
  const char *const *tmpls[FD_ESCALATE_MAX];
  size_t n = checker_templates (t, name, repair, tmpls), k;
  char log[PATH_MAX + 32];
  struct clocks c;
  struct fd_proc pr = {0};
  struct watch w;
  FILE *fp;
  struct phase *p;
  enum fd_outcome o = FD_CLEAN;
  struct host_counts hc;

  /* Cold caches, as after a reboot: the checker's reads reach the disk. */
  if ((fp = fopen ("/proc/sys/vm/drop_caches", "w")) != NULL) {
    fputs ("3\n", fp);
    fclose (fp);
  }
  if ((p = begin (t, d, name, &c, err)) == NULL)
    return -1;
  snprintf (log, sizeof log, "%s/%s.out", t->dir, name);
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
                            : t->fs->outcome (pr.status, pr.signal, repair);
  }
  p->charged_s = host_charged (t, &hc);
  if ((ferror (fp) | fclose (fp)) != 0) {
    fd_proc_free (&pr);
    return fm_fail (err, "%s: %s", log, fd_strerror (errno));
  }
  if (end (d, p, &c, err) == -1) {
    fd_proc_free (&pr);
    return -1;
  }
  if (p->nvpasses) /* the last pass runs to the phase's end */
    p->vpasses[p->nvpasses - 1].seconds =
        p->virtual_s - (double)(w.pass_vns - c.vns) / 1e9;
  p->status = pr.status;
  p->signal = pr.signal;
  if (pr.repeating && t->progress) {
    fprintf (t->progress,
             "%s: %s: stopped after %.0f s wall: it printed \"%s\" %u "
             "times in a row\n",
             fd_progname, name, pr.wall_s, pr.repeated, t->fs->loop_lines);
    fflush (t->progress);
  }
  p->outcome = fd_outcome_name (o);
  p->npasses = t->fs->passes (pr.out, p->passes, 12);
  fd_proc_free (&pr);
  if (fd_interrupted) {
    return fm_fail (err, "interrupted");
  }
  return 0;
}

bool
fd_target_next (const char **s, char *item, size_t size)
{
  size_t len = strcspn (*s, "+");

  if (**s == '\0')
    return false;
  snprintf (item, size, "%.*s", (int)len, *s);
  *s += len + ((*s)[len] == '+');
  return true;
}

bool
fd_target_any (const char *target, bool (*is) (const char *kind))
{
  char item[128];

  while (fd_target_next (&target, item, sizeof item))
    if (is (fd_target_kind_of (item)))
      return true;
  return false;
}

int
fd_target_check (const char *target, struct fm_err *err)
{
  char item[128];
  const char *s = target;
  unsigned parts = 0;

  if (*target == '\0' || target[strlen (target) - 1] == '+')
    return fm_fail (err, "target '%.64s': TYPE[:N[:KIND]][+...]", target);
  while (fd_target_next (&s, item, sizeof item)) {
    char type[32] = "", count[32] = "1", kind[32] = "ure", extra[8] = "";
    uint64_t n;
    if (++parts > FD_TARGET_MAX)
      return fm_fail (err, "target '%.64s': at most %d parts joined by '+'",
                      target, FD_TARGET_MAX);
    if (sscanf (item, "%31[^:]:%31[^:]:%31[^:]:%7s", type, count, kind,
                extra) == 4 ||
        !type[0]) {
      return fm_fail (err, "target '%.64s': TYPE[:N[:KIND]][+...]", target);
    }
    if (fm_parse_uint ("target count", count, 1, 1000, &n, err) == -1 ||
        fd_trial_target_kind (kind, err) == -1)
      return -1;
  }
  return 0;
}

bool
fd_target_types_known (const char *target, const char *types, char *bad,
                       size_t size)
{
  char want[72], known[320], item[128];

  /* " data inode ... " contains " TYPE " exactly when it is known. */
  snprintf (known, sizeof known, " %s ", types);
  while (fd_target_next (&target, item, sizeof item)) {
    int len = (int)strcspn (item, ":");
    snprintf (want, sizeof want, " %.*s ", len, item);
    if (len == 0 || strstr (known, want) == NULL) {
      snprintf (bad, size, "%.*s", len, item);
      return false;
    }
  }
  return true;
}

const char *
fd_target_kind_of (const char *target)
{
  const char *n = strchr (target, ':'), *k = n ? strchr (n + 1, ':') : NULL;

  return k ? k + 1 : "ure";
}

int
fd_target_stripe (const char *kind, uint64_t *bytes, enum fd_stripe_fault *how,
                  struct fm_err *err)
{
  static const struct {
    const char *name;
    enum fd_stripe_fault how;
  } kinds[] = {
      {"stripe-copy", FD_STRIPE_COPY},
      {"stripe-ure", FD_STRIPE_URE},
      {"stripe", FD_STRIPE_GARBLE},
  };
  const char *size = NULL;
  size_t i;

  *bytes = 0;
  *how = FD_STRIPE_GARBLE;
  for (i = 0; size == NULL && i < sizeof kinds / sizeof kinds[0]; i++) {
    size_t len = strlen (kinds[i].name);
    if (strncmp (kind, kinds[i].name, len) == 0 &&
        (kind[len] == '\0' || kind[len] == '=')) {
      size = kind + len;
      *how = kinds[i].how;
    }
  }
  if (size == NULL)
    return 0;
  if (*size == '\0') {
    *bytes = FD_STRIPE_DEFAULT;
    return 0;
  }
  if (fm_parse_size ("target stripe", size + 1, bytes, err) == -1)
    return -1;
  if (*bytes < FD_BLOCK || *bytes > (64 << 20) || *bytes % FD_BLOCK) {
    return fm_fail (err,
                    "target stripe '%.32s': a multiple of 4K from 4K to 64M",
                    size + 1);
  }
  return 0;
}

int
fd_trial_target_kind (const char *kind, struct fm_err *err)
{
  uint64_t stripe;
  enum fd_stripe_fault how;

  if (fd_target_stripe (kind, &stripe, &how, err) == -1)
    return -1;
  if (strcmp (kind, "ure") && strcmp (kind, "lse") && strcmp (kind, "rot") &&
      !fd_write_fault_kind (kind) && stripe == 0)
    return fm_fail (err,
                    "target kind '%.32s' is not ure, lse, rot, lost-write, "
                    "misdirected-write, torn-write, stripe[=SIZE], "
                    "stripe-copy[=SIZE] or stripe-ure[=SIZE]",
                    kind);
  return 0;
}

/* The stripe around byte off of the disk garbled (place `done` of
 * count): seeded bytes, or with copy the bytes of the stripe before it.
 */
static int
garble_stripe (struct trial *t, uint64_t off, uint64_t stripe, bool copy,
               uint64_t done, uint64_t count, struct fm_err *err)
{
  uint64_t at = off - off % stripe;
  char detail[200];

  if (copy && at < stripe)
    at = stripe; /* the disk's first stripe has none before it */
  snprintf (detail, sizeof detail,
            "harness: stripe of %" PRIu64 " bytes %s (RAID-level "
            "corruption), place %" PRIu64 " of %" PRIu64,
            stripe, copy ? "overwritten with the stripe before it" : "garbled",
            done + 1, count);
  return fd_garble (t, at, stripe, fm_hash (t->seed, FM_STREAM_WRITE, done, 79),
                    copy ? at - stripe : FD_GARBLE_SEEDED, detail, err);
}

/* A block a --target hits: where, and in which file. */
struct place {
  uint64_t off, n;
  const char *path;
};

/* One place hit with kind (the done'th of count).  A write fault undoes
 * a write the log has, a stripe is garbled in the store; the rest the
 * disk does through its control socket: an unreadable stripe is the
 * disk's unreadable sectors over the whole stripe, which only a rewrite
 * mends, as a degraded array's lost stripe is until written again.
 */
static int
hit (struct trial *t, struct fd_disk *d, const char *kind, uint64_t stripe,
     enum fd_stripe_fault how, const struct place *p, uint64_t done,
     uint64_t count, struct fm_err *err)
{
  char line[128];

  if (stripe && how != FD_STRIPE_URE)
    return garble_stripe (t, p->off, stripe, how == FD_STRIPE_COPY, done, count,
                          err);
  if (fd_write_fault_kind (kind))
    return fd_write_fault (t, kind, p->off, p->n, t->seed + done, err);
  if (stripe)
    snprintf (line, sizeof line, "inject ure %" PRIu64 " %" PRIu64,
              p->off - p->off % stripe, stripe);
  else
    snprintf (line, sizeof line, "inject %s %" PRIu64 " %" PRIu64, kind, p->off,
              p->n);
  return fd_ctl_ok (fd_disk_control (d), line, NULL, err);
}

/* One part of a --target, TYPE[:COUNT[:KIND]]: what it hits, and
 * where (the places found, `done` of `count`).
 */
struct part {
  char type[32], kind[32];
  uint64_t count, done, stripe;
  enum fd_stripe_fault how;
  struct place *p;
};

/* Part n of the target (item): choose its COUNT regular files by the
 * seed, each part drawing its own (99 for the first, as before parts
 * were), and find their blocks of TYPE.
 */
static int
locate_part (struct trial *t, struct fd_disk *d, const char *item, unsigned n,
             struct part *pt, struct fm_err *err)
{
  char count_s[32] = "1";
  uint64_t tries;

  snprintf (pt->kind, sizeof pt->kind, "ure");
  sscanf (item, "%31[^:]:%31[^:]:%31s", pt->type, count_s, pt->kind);
  if (fm_parse_uint ("--target count", count_s, 1, 1000, &pt->count, err) ==
          -1 ||
      fd_target_stripe (pt->kind, &pt->stripe, &pt->how, err) == -1)
    return -1;
  if ((pt->p = calloc (pt->count, sizeof *pt->p)) == NULL)
    return fm_fail (err, "out of memory");
  for (tries = 0; pt->done < pt->count && tries < 100 * pt->count && t->m.n;
       tries++) {
    const struct fd_entry *e = &t->m.v[fm_below (
        fm_hash (t->seed, FM_STREAM_POPULATE, tries, 99 + n), t->m.n)];
    struct place *p = &pt->p[pt->done];
    if (e->type != FD_FILE || e->size < FD_BLOCK)
      continue;
    p->path = e->path;
    if (t->fs->locate (fd_disk_device (d), pt->type, e->path, &p->off, &p->n,
                       err) == -1)
      return -1;
    pt->done++;
  }
  if (pt->done < pt->count)
    return fm_fail (err, "--target %s: found only %" PRIu64 " files to hit",
                    item, pt->done);
  return 0;
}

/* --target: every part's places found first (a fault may hit what the
 * search reads, as a stripe does), then each part's faulted with its
 * KIND in turn.
 */
static int
inject_targets (struct trial *t, struct fd_disk *d, struct fm_err *err)
{
  struct part parts[FD_TARGET_MAX] = {0};
  const char *s = t->target;
  char item[128], one[PATH_MAX + 128];
  unsigned n = 0, i;
  uint64_t k, unlisted = 0;
  size_t room = sizeof t->targets - 48; /* for "; and N more" */
  int rc = 0;

  while (rc == 0 && n < FD_TARGET_MAX &&
         fd_target_next (&s, item, sizeof item)) {
    rc = locate_part (t, d, item, n, &parts[n], err);
    n++;
  }
  for (i = 0; rc == 0 && i < n; i++)
    for (k = 0; rc == 0 && k < parts[i].done; k++) {
      const struct part *pt = &parts[i];
      if ((rc = hit (t, d, pt->kind, pt->stripe, pt->how, &pt->p[k], k,
                     pt->count, err)) == -1)
        break;
      snprintf (one, sizeof one, "%s%s %s %s %" PRIu64, *t->targets ? "; " : "",
                pt->kind, pt->type, pt->p[k].path, pt->p[k].off);
      /* A list too long for the record ends with how many it left out:
       * every place is in the fault logs.
       */
      if (unlisted || strlen (t->targets) + strlen (one) >= room)
        unlisted++;
      else
        strcat (t->targets, one);
    }
  if (unlisted)
    snprintf (t->targets + strlen (t->targets),
              sizeof t->targets - strlen (t->targets), "; and %" PRIu64 " more",
              unlisted);
  for (i = 0; i < n; i++)
    free (parts[i].p);
  return rc;
}

static int
write_probe (struct trial *t)
{
  char path[PATH_MAX + 32];
  static char buf[1 << 20];
  FILE *fp;
  int ok;

  snprintf (path, sizeof path, "%s/futuredisk-probe", t->mnt);
  memset (buf, 0x5a, sizeof buf);
  fp = fopen (path, "w");
  ok = fp && fwrite (buf, 1, sizeof buf, fp) == sizeof buf &&
       fflush (fp) == 0 && fsync (fileno (fp)) == 0;
  if (fp)
    ok = fclose (fp) == 0 && ok;
  unlink (path);
  return ok;
}

void
fd_trial_read_stats (struct trial *t)
{
  char path[PATH_MAX + 32];
  FILE *fp;
  size_t n;

  snprintf (path, sizeof path, "%s/stats.json", t->dir);
  if ((fp = fopen (path, "r")) == NULL)
    return;
  n = fread (t->stats, 1, sizeof t->stats - 1, fp);
  t->stats[n] = '\0';
  while (n > 0 && (t->stats[n - 1] == '\n'))
    t->stats[--n] = '\0';
  fclose (fp);
}

/* The audit's "class\tpath\n" lines as a list, once. */
static int
collect_damaged (struct trial *t, const char *text, struct fm_err *err)
{
  const char *line = text;

  while (line && *line) {
    const char *tab = strchr (line, '\t'), *nl = strchrnul (line, '\n'), *end;
    struct fd_damaged *v, *x;

    if (tab == NULL || tab > nl)
      break;
    v = realloc (t->damaged, (t->ndamaged + 1) * sizeof *v);
    if (v == NULL) {
      return fm_fail (err, "out of memory");
    }
    t->damaged = v;
    x = &v[t->ndamaged++];
    memset (x, 0, sizeof *x);
    snprintf (x->cls, sizeof x->cls, "%.*s", (int)(tab - line), line);
    /* "class\tpath", or "class\tpath\twhere it was found" */
    if ((end = memchr (tab + 1, '\t', (size_t)(nl - tab - 1))) != NULL)
      snprintf (x->found_at, sizeof x->found_at, "%.*s", (int)(nl - end - 1),
                end + 1);
    else
      end = nl;
    snprintf (x->path, sizeof x->path, "%.*s", (int)(end - tab - 1), tab + 1);
    line = *nl ? nl + 1 : nl;
  }
  return 0;
}

/* The audit's "how\tfound\tpath\n" lines as a list. */
static int
collect_violations (struct trial *t, const char *text, struct fm_err *err)
{
  const char *line = text;

  while (line && *line) {
    const char *t1 = strchr (line, '\t'), *nl = strchrnul (line, '\n');
    const char *t2 = t1 ? strchr (t1 + 1, '\t') : NULL;
    struct fd_violation *v, *x;

    if (t2 == NULL || t2 > nl)
      break;
    v = realloc (t->violations, (t->nviolations + 1) * sizeof *v);
    if (v == NULL) {
      return fm_fail (err, "out of memory");
    }
    t->violations = v;
    x = &v[t->nviolations++];
    snprintf (x->how, sizeof x->how, "%.*s", (int)(t1 - line), line);
    snprintf (x->found, sizeof x->found, "%.*s", (int)(t2 - t1 - 1), t1 + 1);
    snprintf (x->path, sizeof x->path, "%.*s", (int)(nl - t2 - 1), t2 + 1);
    line = *nl ? nl + 1 : nl;
  }
  return 0;
}

/* Was x lost from the tree: no longer found under its name? */
static bool
lost_from_tree (const struct fd_damaged *x)
{
  return strcmp (x->cls, "missing") == 0 ||
         strcmp (x->cls, "lost_found") == 0 ||
         strcmp (x->cls, "link_lost") == 0;
}

/* While mounted: where each damaged file's blocks are (at most 200), and
 * for a file lost from the tree, its nearest directory's (where its name
 * was) on a file system FIEMAP maps.
 */
static void
map_damaged (struct trial *t, struct fd_disk *d)
{
  size_t k;

  for (k = 0; k < t->ndamaged && k < 200; k++) {
    /* A file in lost+found: its blocks there (a lost write to its
     * directory may have sent it there, one to its data may come with it).
     */
    const char *path =
        t->damaged[k].found_at[0] ? t->damaged[k].found_at : t->damaged[k].path;
    if (!t->fs->file_ranges && lost_from_tree (&t->damaged[k])) {
      t->damaged[k].dir_extents =
          fd_dir_extents_of (t->mnt, t->damaged[k].path);
      if (t->fs->fiemap_to_device)
        fd_extents_map (t->damaged[k].dir_extents, t->fs->fiemap_to_device,
                        fd_disk_device (d));
    }
    if (t->fs->file_ranges) {
      t->damaged[k].extents =
          fd_extents_from (t->fs, fd_disk_socket (d), t->mnt, path);
      continue;
    }
    t->damaged[k].extents = fd_extents_of (t->mnt, path);
    if (t->fs->fiemap_to_device)
      fd_extents_map (t->damaged[k].extents, t->fs->fiemap_to_device,
                      fd_disk_device (d));
  }
}

/* After the server wrote its last log line: the faults behind each. */
static void
explain_damaged (struct trial *t)
{
  char log[PATH_MAX + 32], plog[PATH_MAX + 32];
  size_t k;

  /* Faults of the writes (lost, misdirected, torn by the cut) are in the
   * populating server's log, the rest in the broken disk's.
   */
  snprintf (log, sizeof log, "%s/faults.jsonl", t->dir);
  snprintf (plog, sizeof plog, "%s/faults-populate.jsonl", t->dir);
  for (k = 0; k < t->ndamaged; k++) {
    struct fd_damaged *x = &t->damaged[k];
    char kinds[64] = "", *kind, *save = NULL;
    x->cause[0] = '\0';
    fd_attribute (x->extents, plog, x->cause, sizeof x->cause);
    fd_attribute (x->extents, log, x->cause, sizeof x->cause);
    fd_attribute (x->dir_extents, plog, kinds, sizeof kinds);
    fd_attribute (x->dir_extents, log, kinds, sizeof kinds);
    for (kind = strtok_r (kinds, ",", &save); kind;
         kind = strtok_r (NULL, ",", &save)) {
      size_t n = strlen (x->cause);
      snprintf (x->cause + n, sizeof x->cause - n, "%sdir:%s", n ? "," : "",
                kind);
    }
    fd_extents_free (x->extents);
    fd_extents_free (x->dir_extents);
    x->extents = x->dir_extents = NULL;
  }
}

/* A repair that refuses a dirty log (xfs_repair's exit 2): replay it by
 * mounting and unmounting, and repair again; if the mount fails too,
 * repair destroying the log (fstests' _repair_scratch_fs ladder).
 */
static int
replay_ladder (struct trial *t, struct fd_disk *d, struct fm_err *err)
{
  const struct phase *r = &t->ph[t->nph - 1];
  struct clocks c;
  struct phase *p;
  struct fm_err e;
  bool mounted;

  if (t->fs->dirty_log_exit == 0 || r->status != t->fs->dirty_log_exit)
    return 0;
  if ((p = begin (t, d, "replay-mount", &c, err)) == NULL)
    return -1;
  mounted = fd_disk_mount (d, &e) == 0 && fd_disk_unmount (d, &e) == 0;
  p->status = mounted ? 0 : 1;
  p->outcome = mounted ? "CLEAN" : "CHECKER_ERROR";
  if (end (d, p, &c, err) == -1)
    return -1;
  return checker (t, d, mounted ? "repair" : "repair-zap-log", true, err);
}

/* Detach d, failing if one of its servers died under the trial (the
 * teardown still runs).
 */
static int
detach_checked (struct fd_disk *d, struct fm_err *err)
{
  struct fm_err e;

  if (fd_disk_check (d, err) == -1) {
    fd_disk_detach (d, &e);
    return -1;
  }
  return fd_disk_detach (d, err);
}

/* The machine dies with writes in flight: the drive loses what its cache
 * had not made durable, and the kernel never reaches the disk again (its
 * dirty pages are lost with it).  Unmounting then only takes the dead
 * file system out of the way.
 */
static int
power_cut (struct trial *t, struct fd_disk *d, struct fm_err *err)
{
  struct clocks c;
  struct phase *p;
  struct fm_err e;

  if ((p = begin (t, d, "crash", &c, err)) == NULL ||
      end (d, p, &c, err) == -1 ||
      fd_ctl_ok (fd_disk_control (d), "poweroff", NULL, err) == -1)
    return -1;
  fd_disk_unmount (d, &e);
  return 0;
}

static int
unmount_phase (struct trial *t, struct fd_disk *d, struct fm_err *err)
{
  struct clocks c;
  struct phase *p;

  if ((p = begin (t, d, "unmount", &c, err)) == NULL ||
      fd_disk_unmount (d, err) == -1 || end (d, p, &c, err) == -1)
    return -1;
  return 0;
}

/* Metadata-only files the file system could not allocate mounted get
 * their blocks on the unmounted disk (fd_fs.allocate).
 */
static int
allocate_phase (struct trial *t, struct fd_disk *d, struct fm_err *err)
{
  struct clocks c;
  struct phase *p;

  if ((p = begin (t, d, "allocate", &c, err)) == NULL ||
      t->fs->allocate (fd_disk_device (d), t->m.unallocated, t->m.nunallocated,
                       err) == -1 ||
      end (d, p, &c, err) == -1)
    return -1;
  return 0;
}

/* Is the --target's kind a write fault (which needs the write log)? */
static bool
write_target (const struct trial *t)
{
  return t->target && fd_target_any (t->target, fd_write_fault_kind);
}

/* --crash-points: each promise marked in the write log as it is made. */
static int
mark_promise (void *opaque, uint64_t n, struct fm_err *err)
{
  char line[64];

  snprintf (line, sizeof line, "mark promise-%" PRIu64, n);
  return fd_ctl_ok (fd_disk_control (opaque), line, NULL, err);
}

/* 1. A clean disk, populated, then unmounted (or crashed) and detached.
 * Each server keeps its own ground truth: the populating one's (the
 * crash's power cut) and the broken disk's (faults.jsonl).
 */
static int
populate_disk (struct trial *t, struct fd_attach_opts *o, struct fm_err *err)
{
  char path[PATH_MAX + 32], wlog[PATH_MAX + 48];
  struct fd_disk *d;
  struct clocks c;
  struct phase *p;
  struct fm_err e;
  char wkeys[FD_WRITE_FAULT_KEYS][48];
  const char *wextra[FD_WRITE_FAULT_KEYS + 1];
  size_t nw = 0, k;

  /* Writes meet their faults as the file system makes them: the spec's
   * lost, misdirected and (at a power cut) torn writes strike the
   * populate; the rest is the disk coming back broken (attach_broken).
   */
  if (t->faults_spec &&
      fd_fault_spec_writes (t->faults_spec, wkeys, &nw, err) == -1)
    return -1;
  for (k = 0; k < nw; k++)
    wextra[k] = wkeys[k];
  /* A sweep of crash points rebuilds the disk from its write log, and a
   * write fault undoes a write it has.
   */
  snprintf (wlog, sizeof wlog, "writelog=%s/" FD_WRITELOG_NAME, t->dir);
  if (t->crash_points || write_target (t))
    wextra[nw++] = wlog;
  snprintf (path, sizeof path, "%s/faults-populate.jsonl", t->dir);
  o->faultlog = path;
  o->extra = wextra;
  o->n_extra = nw;
  d = fd_disk_attach (o, err);
  o->faultlog = NULL;
  o->extra = NULL;
  o->n_extra = 0;
  if (d == NULL)
    return -1;
  t->attached = fd_disk_via (d);  /* static: outlives d */
  t->populate.no_sync = t->crash; /* leave writes in flight */
  t->populate.unallocated = t->fs->allocate != NULL;
  t->populate.promised = t->crash_points ? mark_promise : NULL;
  t->populate.opaque = d;
  if ((p = begin (t, d, "populate", &c, err)) == NULL ||
      fd_populate (t->mnt, &t->populate, &t->m, err) == -1 ||
      end (d, p, &c, err) == -1)
    goto fail;
  snprintf (path, sizeof path, "%s/manifest.tsv", t->dir);
  if (fd_manifest_write (&t->m, path, err) == -1 ||
      (t->crash ? power_cut (t, d, err) : unmount_phase (t, d, err)) == -1 ||
      (t->m.nunallocated && allocate_phase (t, d, err) == -1))
    goto fail;
  return detach_checked (d, err);

fail:
  fd_disk_detach (d, &e);
  return -1;
}

/* 2. The disk comes back broken: fault keys at start, targets now.  The
 * same server serves the checks and the mount after them: faults
 * injected through its control socket live in it.
 */
static struct fd_disk *
attach_broken (struct trial *t, struct fd_attach_opts *o, struct fm_err *err)
{
  struct fd_disk *d;
  struct clocks c;
  struct phase *p;
  struct fm_err e;

  o->mkfs = false;
  o->defer_mount = true;
  o->extra = t->extra;
  o->n_extra = t->n_extra;
  if ((d = fd_disk_attach (o, err)) == NULL)
    return NULL;
  if ((p = begin (t, d, "inject", &c, err)) == NULL ||
      (t->target && inject_targets (t, d, err) == -1) ||
      end (d, p, &c, err) == -1) {
    fd_disk_detach (d, &e);
    return NULL;
  }
  return d;
}

/* The audit phase: every file read back, the damaged ones and the
 * broken promises listed.
 */
static int
audit_files (struct trial *t, struct fd_disk *d, struct fm_err *err)
{
  char *text = NULL, *vtext = NULL;
  size_t text_len = 0, vtext_len = 0;
  struct clocks c;
  struct phase *p;
  int r = 0;

  t->audit.detail = open_memstream (&text, &text_len);
  t->audit.violations = open_memstream (&vtext, &vtext_len);
  if (t->audit.detail == NULL || t->audit.violations == NULL)
    r = fm_fail (err, "out of memory");
  else if ((p = begin (t, d, "audit", &c, err)) == NULL ||
           fd_audit (t->mnt, t->seed, &t->m, &t->audit, err) == -1 ||
           end (d, p, &c, err) == -1)
    r = -1;
  if (t->audit.detail)
    fclose (t->audit.detail);
  if (t->audit.violations)
    fclose (t->audit.violations);
  t->audit.detail = NULL;
  t->audit.violations = NULL;
  if (r == 0)
    r = collect_damaged (t, text, err);
  if (r == 0)
    r = collect_violations (t, vtext, err);
  free (text);
  free (vtext);
  if (r == 0)
    t->audited = true;
  return r;
}

/* Is the last checker phase's outcome a checker that failed? */
static bool
checker_failed (const struct trial *t)
{
  const char *o = t->ph[t->nph - 1].outcome;

  return o && (strcmp (o, "CHECKER_ERROR") == 0 ||
               strcmp (o, "CHECKER_CRASH") == 0 || strcmp (o, "TIMEOUT") == 0 ||
               strcmp (o, "LOOPING") == 0 || strcmp (o, "OOM") == 0);
}

static bool
last_clean (const struct trial *t)
{
  const char *o = t->ph[t->nph - 1].outcome;

  return o && strcmp (o, "CLEAN") == 0;
}

/* 3. Check, repair, check again.  With --repair-cut K the power goes
 * after the repair's Kth write (the machine dies with the checker: what
 * it writes after that never reaches the disk); when it comes back the
 * checker repairs again, and once more if the recheck is not clean
 * (Gatla et al., FAST'18).  t->cut_outcome says how that ended; a
 * file system left unmountable is decided at the mount.
 */
static int
check_and_repair (struct trial *t, struct fd_disk *d, struct fm_err *err)
{
  const char *ctl = fd_disk_control (d);
  char line[64];
  struct fd_json *j = NULL;
  bool failed = false;

  if (checker (t, d, "check", false, err) == -1)
    return -1;
  snprintf (line, sizeof line, "poweroff %" PRIu64, t->repair_cut);
  if (t->repair_cut && fd_ctl_ok (ctl, line, NULL, err) == -1)
    return -1;
  if (checker (t, d, "repair", true, err) == -1)
    return -1;
  if (t->repair_cut) {
    /* Power back on, whether or not it went: an armed cut is forgotten. */
    if (fd_ctl_ok (ctl, "poweron", &j, err) == -1 ||
        fd_json_bool (j, "was_off", &t->cut, err) == -1) {
      fd_json_free (j);
      return -1;
    }
    fd_json_free (j);
    t->cut_outcome = FD_CUT_NOT_REACHED;
    if (t->cut) {
      if (checker (t, d, "repair-after-cut", true, err) == -1)
        return -1;
      failed = checker_failed (t);
    }
  }
  if (replay_ladder (t, d, err) == -1 ||
      checker (t, d, "recheck", false, err) == -1)
    return -1;
  if (!t->cut)
    return 0;
  if (!failed && last_clean (t)) {
    t->cut_outcome = FD_CUT_RECOVERED;
    return 0;
  }
  if (checker (t, d, "repair-again", true, err) == -1)
    return -1;
  failed = failed || checker_failed (t);
  if (checker (t, d, "recheck-again", false, err) == -1)
    return -1;
  t->cut_outcome =
      !failed && last_clean (t) ? FD_CUT_ANOTHER : FD_CUT_UNRECOVERABLE;
  return 0;
}

static int trial_steps (struct trial *t, struct fm_err *err);

/* The checker's share of the trial: its check and every step that
 * repaired, the escalation included (a read-only recheck only
 * confirms).
 */
static double
fsck_seconds (const struct trial *t)
{
  double s = 0;
  size_t i;

  for (i = 0; i < t->nph; i++)
    if (strcmp (t->ph[i].name, "check") == 0 ||
        strncmp (t->ph[i].name, "repair", 6) == 0 ||
        strcmp (t->ph[i].name, "replay-mount") == 0 ||
        strcmp (t->ph[i].name, "escalate") == 0)
      s += t->ph[i].virtual_s;
  return s;
}

/* A restore from backup writes the bytes in use back: at --restore-rate,
 * or sequentially from the start of a fresh disk of the trial's profile
 * and size through the drive model (its zones, cache and, on a shingled
 * disk, its bands), 16 MiB at a time, then a FLUSH.  Metadata and file
 * boundaries cost a restore little against the data and are left out.
 */
static void
restore_estimate (struct trial *t)
{
  struct fm_profile p;
  struct fm_disk *d;
  struct fm_err e;
  uint64_t size, bytes = t->m.bytes;

  t->restore_s = -1;
  if (t->restore_rate > 0) {
    t->restore_s = (double)bytes / t->restore_rate;
    return;
  }
  if (fd_load_profile (t->profile, &p, &e) == -1 ||
      (strcmp (t->size, "full") != 0 &&
       (fm_parse_size ("--size", t->size, &size, &e) == -1 ||
        fm_profile_resize (&p, size, &e) == -1)) ||
      (d = fm_disk_new (&p, t->seed, NULL, &e)) == NULL)
    return;
  if (bytes > p.capacity)
    bytes = p.capacity;
  t->restore_s =
      fm_measure_sequential (d, FM_OP_WRITE, 0, bytes, 16 << 20) / 1e9;
  fm_disk_free (d);
}

/* Does a checker's saved output (DIR/NAME.out) report a checksum that
 * failed?  (Not merely a pass that checks them: "[5/7] checking csums".)
 * The phrases of e2fsck, xfs_repair, btrfs check and fsck.chunkfs.
 */
static bool
says_checksum (const struct trial *t, const char *name)
{
  static const char *const failed[] = {"checksum does not match",
                                       "checksums are invalid",
                                       "checksum is invalid",
                                       "checksum verify failed",
                                       "csum mismatch",
                                       "csum failed",
                                       "bad checksum",
                                       "crc error",
                                       "bad crc"};
  char path[PATH_MAX + 32], line[1024];
  bool found = false;
  size_t k;
  FILE *fp;

  snprintf (path, sizeof path, "%s/%s.out", t->dir, name);
  if ((fp = fopen (path, "r")) == NULL)
    return false;
  while (!found && fgets (line, sizeof line, fp))
    for (k = 0; k < sizeof failed / sizeof failed[0] && !found; k++)
      found = strcasestr (line, failed[k]) != NULL;
  fclose (fp);
  return found;
}

/* A counter of the plugin's final stats (0 if it is not there). */
static uint64_t
stat_of (const struct trial *t, const char *path)
{
  struct fm_err err;
  struct fd_json *j =
      t->stats[0] ? fd_json_parse (t->stats, "stats", &err) : NULL;
  uint64_t v = 0;

  if (j && fd_json_u64 (j, path, &v, &err) == -1)
    v = 0;
  fd_json_free (j);
  return v;
}

static const char *
phase_outcome (const struct trial *t, const char *name)
{
  const struct phase *p = fd_trial_phase (t, name);

  return p && p->outcome ? p->outcome : "";
}

/* The two axes of the IRON fingerprint for a trial with a target (see
 * trial.h), from the checker's outcomes and words, the audit and the
 * plugin's counters.
 */
static void
iron_axes (struct trial *t)
{
  const char *kind;
  const struct phase *check = fd_trial_phase (t, "check");
  bool silent, noticed, checksum, lost, eio;
  uint64_t bad = 0;
  size_t i;

  t->detection = t->recovery = NULL;
  /* The fingerprint is of one block type and one fault kind. */
  if (t->target == NULL || t->targets[0] == '\0' || check == NULL ||
      strchr (t->target, '+'))
    return;
  kind = fd_target_kind_of (t->target);
  silent = strcmp (kind, "ure") != 0 && strcmp (kind, "lse") != 0;
  noticed = strcmp (phase_outcome (t, "check"), "CLEAN") != 0;
  checksum = says_checksum (t, "check") || says_checksum (t, "repair");
  for (i = 0; i < FD_AUDIT_NCLASSES; i++)
    if (i != FD_AUDIT_INTACT && i != FD_AUDIT_EXTRA)
      bad += t->audit.count[i];
  lost = !t->audited || bad > 0;
  eio = t->audited && t->audit.count[FD_AUDIT_UNREADABLE] > 0;
  /* Detection: a silent fault answered with EIO was refused by a
   * checksum; a disk error that reached anyone is an error code.
   */
  if (checksum || (silent && eio))
    t->detection = "checksum";
  else if (!silent && (check->read_errors > 0 || eio))
    t->detection = "error-code";
  else if (noticed)
    t->detection = "sanity";
  else
    t->detection = "none";
  /* Recovery: the checker's repair (of the structures; files it could
   * not save are the audit's), else what kept the data without it.
   */
  /* (xfs_repair exits 0 having fixed things: a repair that left clean
   * what the check found broken repaired it.)
   */
  if (strcmp (phase_outcome (t, "recheck"), "CLEAN") == 0 &&
      (strcmp (phase_outcome (t, "repair"), "FIXED") == 0 ||
       (noticed && strcmp (phase_outcome (t, "repair"), "CLEAN") == 0)))
    t->recovery = "repair";
  else if (!lost && !noticed && strcmp (t->detection, "none") != 0)
    t->recovery = stat_of (t, "faults.reallocated") > 0 ? "remap"
                  : stat_of (t, "faults.retries") > 0   ? "retry"
                                                        : "redundancy";
  else if (eio)
    t->recovery = "propagate";
  else
    t->recovery = "none";
}

int
fd_trial_run (struct trial *t, struct fm_err *err)
{
  int r = trial_steps (t, err);

  iron_axes (t);
  if (fd_trial_phase (t, "check"))
    restore_estimate (t);
  else
    t->restore_s = -1;
  return r;
}

/* How the trial's disk is attached (populate makes the file system). */
static struct fd_attach_opts
attach_opts (struct trial *t)
{
  return (struct fd_attach_opts){.dir = t->dir,
                                 .profile = t->profile,
                                 /* "full": the profile's own capacity */
                                 .size =
                                     strcmp (t->size, "full") ? t->size : NULL,
                                 .seed = t->seed,
                                 .store = t->store,
                                 .fs = t->fs->name,
                                 .mkfs = true,
                                 .mount = t->mnt,
                                 .via = t->via,
                                 .kernel_log = true};
}

/* 4a. Mount after the repair.  A file system the repair left
 * unmountable is a finding (t->mount, with the kernel's reason), not an
 * error; a server that died under the disk is the rig's failure.  With
 * --escalate the adapter's next move runs as the phase "escalate" and
 * the mount is tried once more.
 */
static int
mount_repaired (struct trial *t, struct fd_disk *d, struct fm_err *err)
{
  struct fm_err e;

  if (fd_disk_mount (d, &e) == 0) {
    t->mount = FD_MOUNT_MOUNTED;
    return 0;
  }
  if (fd_disk_check (d, err) == -1)
    return -1;
  t->mount = FD_MOUNT_UNMOUNTABLE;
  snprintf (t->mount_reason, sizeof t->mount_reason, "%s",
            fd_disk_mount_reason (d));
  if (!t->escalate || t->fs->escalate[0][0] == NULL)
    return 0;
  if (checker (t, d, "escalate", true, err) == -1)
    return -1;
  if (fd_disk_mount (d, &e) == 0)
    t->mount = FD_MOUNT_RECOVERED;
  else if (fd_disk_check (d, err) == -1)
    return -1;
  return 0;
}

/* 2-4 on the disk in t->store: it comes back broken, is checked and
 * repaired, mounted and audited.
 */
static int
broken_steps (struct trial *t, struct fd_attach_opts *o, struct fm_err *err)
{
  struct fd_disk *d;
  struct fm_err e;

  if ((d = attach_broken (t, o, err)) == NULL)
    return -1;

  /* 3. Check, repair, check again. */
  if (t->check_only) {
    if (checker (t, d, "check", false, err) == -1)
      goto fail;
    if (detach_checked (d, err) == -1)
      return -1;
    fd_trial_read_stats (t);
    return 0;
  }
  if (check_and_repair (t, d, err) == -1)
    goto fail;

  /* 4. Mount, audit every file, prove the file system takes writes. */
  if (mount_repaired (t, d, err) == -1)
    goto fail;
  if (strcmp (t->mount, FD_MOUNT_UNMOUNTABLE) == 0) {
    if (t->cut)
      t->cut_outcome = FD_CUT_UNRECOVERABLE;
    fd_disk_detach (d, &e);
    fd_trial_read_stats (t);
    return 0;
  }
  if (audit_files (t, d, err) == -1)
    goto fail;
  map_damaged (t, d);
  t->probe_ok = write_probe (t);
  if (detach_checked (d, err) == -1)
    return -1;
  explain_damaged (t);
  fd_trial_read_stats (t);
  return 0;

fail:
  fd_disk_detach (d, &e);
  return -1;
}

static int
trial_steps (struct trial *t, struct fm_err *err)
{
  struct fd_attach_opts o = attach_opts (t);
  char base[PATH_MAX + 16];

  if (t->base ? fd_base_clone (t, t->base, err) == -1
              : populate_disk (t, &o, err) == -1 ||
                    (t->base_out && fd_base_save (t, t->base_out, err) == -1))
    return -1;
  if (t->crash_points)
    return fd_crash_points (t, err);
  /* The populated disk is in a base: break a clone of it. */
  if (t->base || t->base_out) {
    snprintf (base, sizeof base, "%s/disk.store",
              t->base ? t->base : t->base_out);
    o.base = base;
  }
  return broken_steps (t, &o, err);
}

int
fd_trial_run_disk (struct trial *t, struct fm_err *err)
{
  struct fd_attach_opts o = attach_opts (t);

  return broken_steps (t, &o, err);
}

void
fd_trial_clean (const struct trial *t, bool remove_dir)
{
  static const char *const files[] = {"disk.store",
                                      "manifest.tsv",
                                      "stats.json",
                                      "faults.jsonl",
                                      "faults-populate.jsonl",
                                      FD_WRITELOG_NAME,
                                      "nbd.sock",
                                      "control.sock",
                                      "nbdkit.log",
                                      "nbdfuse.log",
                                      "check.out",
                                      "repair.out",
                                      "recheck.out",
                                      "repair-after-cut.out",
                                      "repair-again.out",
                                      "recheck-again.out",
                                      "repair-zap-log.out",
                                      "escalate.out",
                                      "kernel.log",
                                      NULL};
  char path[PATH_MAX + 32];
  size_t i;

  /* A store of more than 8 TiB continues in disk.store.1, .2, ... */
  for (i = 1; i < 64; i++) {
    snprintf (path, sizeof path, "%s/disk.store.%zu", t->dir, i);
    if (unlink (path) == -1)
      break;
  }
  for (i = 0; files[i]; i++) {
    snprintf (path, sizeof path, "%s/%s", t->dir, files[i]);
    unlink (path);
  }
  rmdir (t->mnt);
  if (remove_dir)
    rmdir (t->dir);
}

const struct phase *
fd_trial_phase (const struct trial *t, const char *name)
{
  size_t i;

  for (i = 0; i < t->nph; i++)
    if (strcmp (t->ph[i].name, name) == 0)
      return &t->ph[i];
  return NULL;
}

/* The trial's inputs: what was run, and where it belongs. */
static void
record_inputs (const struct trial *t, FILE *fp)
{
  fprintf (fp, "{\"fs\": ");
  fd_json_string (fp, t->fs->name);
  fprintf (fp, ", \"profile\": ");
  fd_json_string (fp, t->profile);
  fprintf (fp, ", \"size\": ");
  fd_json_string (fp, t->size);
  fprintf (fp,
           ", \"seed\": %" PRIu64 ", \"fill_pct\": %g, \"meta_only\": %" PRIu64
           ", \"crash\": %s, \"tree\": \"%s\", \"time\": ",
           t->seed, t->fill, t->populate.meta_only ? t->populate.files : 0,
           t->crash ? "true" : "false", fd_tree_name (t->populate.tree));
  fd_json_string (fp, t->time_mode ? t->time_mode : "virtual");
  fprintf (fp, ", \"think\": ");
  fd_json_string (fp, t->think ? t->think : "real");
  fprintf (fp, ", \"host\": ");
  fd_json_string (fp, t->host ? t->host : "native");
  fprintf (fp, ", \"attach\": ");
  fd_json_string (fp, t->attached ? t->attached : "");
  fprintf (fp, ", \"cloned\": %s", t->cloned ? "true" : "false");
  fprintf (fp, ", \"campaign\": ");
  fd_json_string (fp, t->campaign ? t->campaign : "");
  fprintf (fp, ", \"run_id\": ");
  fd_json_string (fp, t->run_id ? t->run_id : "");
  fprintf (fp, ", \"rep\": %" PRIu64 ", \"faults\": ", t->rep);
  fd_json_string (fp, t->faults_spec ? t->faults_spec : "");
  fprintf (fp, ", \"target\": ");
  fd_json_string (fp, t->target ? t->target : "");
  fprintf (fp, ", \"targets_hit\": ");
  fd_json_string (fp, t->targets);
}

/* One phase as a JSON object; a checker's with its exit and passes. */
static void
record_phase (const struct phase *p, FILE *fp)
{
  size_t j;

  fprintf (fp,
           "{\"name\": \"%s\", \"virtual_s\": %.6f, \"wall_s\": %.3f, "
           "\"cpu_s\": %.3f, \"reads\": %" PRIu64 ", \"writes\": %" PRIu64
           ", \"bytes_read\": %" PRIu64 ", \"bytes_written\": %" PRIu64
           ", \"read_errors\": %" PRIu64,
           p->name, p->virtual_s, p->wall_s, p->cpu_s, p->reads, p->writes,
           p->bytes_read, p->bytes_written, p->read_errors);
  if (p->outcome) {
    fprintf (fp, ", \"exit\": %d, \"signal\": %d, \"outcome\": \"%s\", ",
             p->status, p->signal, p->outcome);
    if (p->charged_s >= 0)
      fprintf (fp, "\"charged_s\": %.6f, ", p->charged_s);
    fprintf (fp, "\"passes\": {");
    for (j = 0; j < p->npasses; j++)
      fprintf (fp, "%s\"%s\": %.2f", j ? ", " : "", p->passes[j].name,
               p->passes[j].seconds);
    fprintf (fp, "}, \"virtual_passes\": [");
    for (j = 0; j < p->nvpasses; j++)
      fprintf (fp, "%s[\"%s\", %.6f]", j ? ", " : "", p->vpasses[j].name,
               p->vpasses[j].seconds);
    fprintf (fp, "]");
  }
  fprintf (fp, "}");
}

/* The audit's classes and block kinds, or null when there was none. */
static void
record_audit (const struct trial *t, FILE *fp)
{
  size_t i;

  if (!t->audited) {
    fprintf (fp, "null");
    return;
  }
  fprintf (fp, "{");
  for (i = 0; i < FD_AUDIT_NCLASSES; i++)
    fprintf (fp, "%s\"%s\": %" PRIu64, i ? ", " : "", fd_audit_class_name (i),
             t->audit.count[i]);
  fprintf (fp,
           ", \"zeroed_blocks\": %" PRIu64 ", \"stale_blocks\": %" PRIu64
           ", \"foreign_blocks\": %" PRIu64 ", \"garbled_blocks\": %" PRIu64
           "}",
           t->audit.zeroed_blocks, t->audit.stale_blocks,
           t->audit.foreign_blocks, t->audit.garbled_blocks);
}

/* The broken promises listed (at most n of them). */
static void
record_violations (const struct fd_violation *v, size_t n, FILE *fp)
{
  size_t i;

  fprintf (fp, "[");
  for (i = 0; i < n; i++) {
    fprintf (fp,
             "%s{\"how\": \"%s\", \"found\": \"%s\", \"path\": ", i ? ", " : "",
             v[i].how, v[i].found);
    fd_json_string (fp, v[i].path);
    fprintf (fp, "}");
  }
  fprintf (fp, "]");
}

/* Durability classes and the broken promises (at most 200), or null. */
static void
record_durability (const struct trial *t, FILE *fp)
{
  size_t i;

  if (!t->audited) {
    fprintf (fp, "null");
    return;
  }
  fprintf (fp, "{");
  for (i = 0; i < FD_DURABILITY_NCLASSES; i++)
    fprintf (fp, "\"%s\": %" PRIu64 ", ", fd_durability_class_name (i),
             t->audit.durability[i]);
  fprintf (fp, "\"violations\": ");
  record_violations (t->violations, t->nviolations < 200 ? t->nviolations : 200,
                     fp);
  fprintf (fp, "}");
}

/* --crash-points: each point's outcomes and durability, or null. */
static void
record_points (const struct trial *t, FILE *fp)
{
  size_t i, k;

  if (!t->crash_points) {
    fprintf (fp, "null");
    return;
  }
  fprintf (fp,
           "{\"flushes\": %" PRIu64 ", \"promises\": %" PRIu64
           ", \"wall_s\": %.3f, \"per_minute\": %.1f, \"points\": [",
           t->log_flushes, t->log_promises, t->points_wall_s,
           t->points_wall_s > 0 ? (double)t->npoints * 60 / t->points_wall_s
                                : 0);
  for (i = 0; i < t->npoints; i++) {
    const struct fd_crash_point *cp = &t->points[i];
    fprintf (fp,
             "%s{\"flush\": %" PRIu64 ", \"promises\": %" PRIu64
             ", \"cache_writes\": %" PRIu64
             ", \"check\": \"%s\", \"repair\": \"%s\", "
             "\"recheck\": \"%s\", \"mount\": \"%s\", \"audited\": %s",
             i ? ", " : "", cp->flush, cp->promises, cp->cache_writes,
             cp->check, cp->repair, cp->recheck, cp->mount,
             cp->audited ? "true" : "false");
    for (k = 0; k < FD_DURABILITY_NCLASSES; k++)
      fprintf (fp, ", \"%s\": %" PRIu64, fd_durability_class_name (k),
               cp->durability[k]);
    fprintf (fp, ", \"violations\": ");
    record_violations (cp->violations,
                       cp->nviolations < 3 ? cp->nviolations : 3, fp);
    fprintf (fp, ", \"error\": ");
    fd_json_string (fp, cp->error);
    fprintf (fp, "}");
  }
  fprintf (fp, "]}");
}

/* Which files (at most 200), so a loss can be matched to its fault. */
static void
record_damaged (const struct trial *t, FILE *fp)
{
  size_t i;

  fprintf (fp, "[");
  for (i = 0; i < t->ndamaged && i < 200; i++) {
    fprintf (fp, "%s{\"class\": \"%s\", \"path\": ", i ? ", " : "",
             t->damaged[i].cls);
    fd_json_string (fp, t->damaged[i].path);
    fprintf (fp, ", \"cause\": ");
    fd_json_string (fp, t->damaged[i].cause);
    fprintf (fp, "}");
  }
  fprintf (fp, "]");
}

/* fsck or restore, or null when the check did not run. */
static void
record_restore (const struct trial *t, FILE *fp)
{
  if (t->restore_s < 0) {
    fprintf (fp, "null");
    return;
  }
  fprintf (fp,
           "{\"bytes\": %" PRIu64 ", \"rate\": %.0f, \"restore_s\": %.6f, "
           "\"fsck_s\": %.6f, \"quicker\": \"%s\"}",
           t->m.bytes, t->restore_rate, t->restore_s, fsck_seconds (t),
           fd_trial_quicker (t));
}

const char *
fd_trial_quicker (const struct trial *t)
{
  return fsck_seconds (t) <= t->restore_s ? "fsck" : "restore";
}

void
fd_trial_record (const struct trial *t, FILE *fp)
{
  size_t i;

  record_inputs (t, fp);
  fprintf (fp, ", \"files\": %zu, \"bytes\": %" PRIu64 ", \"phases\": [",
           t->m.n, t->m.bytes);
  for (i = 0; i < t->nph; i++) {
    fprintf (fp, "%s", i ? ", " : "");
    record_phase (&t->ph[i], fp);
  }
  fprintf (fp, "], \"audit\": ");
  record_audit (t, fp);
  fprintf (fp, ", \"durability\": ");
  record_durability (t, fp);
  fprintf (fp, ", \"crash_points\": ");
  record_points (t, fp);
  fprintf (fp, ", \"iron\": ");
  if (t->detection)
    fprintf (fp, "{\"detection\": \"%s\", \"recovery\": \"%s\"}", t->detection,
             t->recovery);
  else
    fprintf (fp, "null");
  fprintf (fp, ", \"damaged\": ");
  record_damaged (t, fp);
  fprintf (fp, ", \"restore\": ");
  record_restore (t, fp);
  fprintf (fp, ", \"repair_cut\": ");
  if (t->repair_cut && t->cut_outcome) {
    fprintf (fp, "{\"after\": %" PRIu64 ", \"cut\": %s, \"outcome\": \"%s\"",
             t->repair_cut, t->cut ? "true" : "false", t->cut_outcome);
    if (t->cut_reference_intact >= 0 && t->audited)
      fprintf (fp, ", \"lost_vs_uninterrupted\": %" PRId64,
               t->cut_reference_intact -
                   (int64_t)t->audit.count[FD_AUDIT_INTACT]);
    fprintf (fp, "}");
  } else
    fprintf (fp, "null");
  fprintf (fp, ", \"mount\": ");
  if (t->mount) {
    fprintf (fp, "{\"outcome\": \"%s\", \"reason\": ", t->mount);
    fd_json_string (fp, t->mount_reason);
    fprintf (fp, "}");
  } else
    fprintf (fp, "null");
  fprintf (fp, ", \"version\": \"%s\"", FUTUREDISK_VERSION);
  fprintf (fp, ", \"write_probe\": %s, \"error\": ",
           t->audited ? (t->probe_ok ? "true" : "false") : "null");
  fd_json_string (fp, t->error);
  fprintf (fp, ", \"disk\": %s}\n", t->stats[0] ? t->stats : "null");
}

void
fd_trial_summary (const struct trial *t)
{
  size_t i;

  printf ("trial: %s on %s (%s), seed %" PRIu64 ", %zu entries, %" PRIu64
          " MiB%s%s\n",
          t->fs->name, t->profile, t->size, t->seed, t->m.n, t->m.bytes >> 20,
          t->attached ? ", attached by " : "", t->attached ? t->attached : "");
  for (i = 0; i < t->nph; i++)
    printf ("  %-14s %10.3f virtual s %8.2f wall s%s%s\n", t->ph[i].name,
            t->ph[i].virtual_s, t->ph[i].wall_s, t->ph[i].outcome ? "  " : "",
            t->ph[i].outcome ? t->ph[i].outcome : "");
  if (t->audited) {
    printf ("  audit:");
    for (i = 0; i < FD_AUDIT_NCLASSES; i++)
      printf (" %s %" PRIu64, fd_audit_class_name (i), t->audit.count[i]);
    printf ("; write probe %s\n", t->probe_ok ? "ok" : "FAILED");
    printf ("  durability:");
    for (i = 0; i < FD_DURABILITY_NCLASSES; i++)
      printf (" %s %" PRIu64, fd_durability_class_name (i),
              t->audit.durability[i]);
    printf ("\n");
    for (i = 0; i < t->nviolations && i < 5; i++)
      printf ("  violation: %s after %s: %s\n", t->violations[i].path,
              t->violations[i].how, t->violations[i].found);
    if (t->nviolations > 5)
      printf ("  (%zu violations in all)\n", t->nviolations);
  }
  if (t->crash_points) {
    size_t k, broke = 0, bad = 0;
    uint64_t files = 0;
    for (k = 0; k < t->npoints; k++) {
      broke += t->points[k].durability[FD_DURABLE_BROKEN] > 0;
      files += t->points[k].durability[FD_DURABLE_BROKEN];
      bad += t->points[k].error[0] != '\0';
    }
    printf ("  crash points: %zu of %" PRIu64 " flushes in %.1f s wall (%.0f "
            "a minute): %zu broke a durability promise (%" PRIu64
            " files), %zu ended in an error\n",
            t->npoints, t->log_flushes, t->points_wall_s,
            t->points_wall_s > 0 ? (double)t->npoints * 60 / t->points_wall_s
                                 : 0,
            broke, files, bad);
  }
  if (t->detection)
    printf ("  IRON: detection %s, recovery %s\n", t->detection, t->recovery);
  if (t->repair_cut && t->cut_outcome) {
    printf ("  repair cut after write %" PRIu64 ": %s", t->repair_cut,
            t->cut_outcome);
    if (t->cut_reference_intact >= 0 && t->audited)
      printf (", %" PRId64 " files lost against the uninterrupted repair",
              t->cut_reference_intact -
                  (int64_t)t->audit.count[FD_AUDIT_INTACT]);
    printf ("\n");
  }
  if (t->restore_s >= 0)
    printf ("  fsck or restore: %s %.3f virtual s, a restore of %" PRIu64
            " MiB %.3f s (%s): %s is quicker\n",
            t->check_only ? "check" : "check and repair", fsck_seconds (t),
            t->m.bytes >> 20, t->restore_s,
            t->restore_rate > 0 ? "at --restore-rate" : "at the disk's rate",
            fd_trial_quicker (t));
  if (t->mount && strcmp (t->mount, FD_MOUNT_MOUNTED) != 0)
    printf ("  mount after the repair: %s%s%s\n", t->mount,
            t->mount_reason[0] ? ": " : "", t->mount_reason);
  if (t->error[0])
    printf ("  error: %s\n", t->error);
}

/* --time: what the plugin's time= takes (virtual, real, scale:F). */
int
fd_trial_parse_time (const char *s, struct fm_err *err)
{
  double f;

  if (strcmp (s, "virtual") == 0 || strcmp (s, "real") == 0)
    return 0;
  if (strncmp (s, "scale:", 6) == 0)
    return fm_parse_double ("--time scale", s + 6, 1e-6, 1e6, &f, err);
  return fm_fail (err, "--time: '%.64s' is not virtual, real or scale:F", s);
}

void
fd_trial_free (struct trial *t)
{
  size_t k;

  fd_manifest_free (&t->m);
  /* A trial that failed between mapping and explaining its losses. */
  for (k = 0; k < t->ndamaged; k++) {
    fd_extents_free (t->damaged[k].extents);
    fd_extents_free (t->damaged[k].dir_extents);
  }
  free (t->damaged);
  free (t->violations);
  free (t->points);
  t->damaged = NULL;
  t->violations = NULL;
  t->points = NULL;
  t->npoints = 0;
  t->ndamaged = t->nviolations = 0;
}

void
fd_scratch_template (const char *what, char *buf, size_t len)
{
  const char *dir = getenv ("TMPDIR");

  snprintf (buf, len, "%s/futuredisk-%s.XXXXXX", dir && *dir ? dir : "/var/tmp",
            what);
}
