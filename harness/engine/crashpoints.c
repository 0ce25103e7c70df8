/* futuredisk — harness: a sweep of crash points (see crashpoints.h). */
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "progname.h"
#include "crashpoints.h"
#include "errmsg.h"
#include "faultmodels/rng.h"
#include "json.h"
#include "proc.h"
#include "target.h"
#include "trial-int.h"
#include "writelog.h"

#include "wlog.h"
/* Record r (a write or a zero) onto the store file fd. */
static int
apply (struct fd_wlog *l, const struct fd_wlog_entry *r, int fd,
       struct fm_err *err)
{
  uint64_t done = 0;

  if (r->kind == FD_WLOG_FLUSH)
    return 0;
  if (r->kind == FD_WLOG_ZERO) {
    if (fallocate (fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                   (off_t)(STORE_HEADER + r->offset), (off_t)r->length) == -1)
      return fm_fail (err, "replay: punch: %s", fd_strerror (errno));
    return 0;
  }
  if (fseek (l->fp, r->data_at, SEEK_SET) == -1)
    return fm_fail (err, "replay: seek: %s", fd_strerror (errno));
  while (done < r->length) {
    size_t n = r->length - done < CHUNK ? r->length - done : CHUNK;
    if (fread (l->buf, 1, n, l->fp) != n)
      return fm_fail (err, "replay: the write log ends inside a write");
    if (pwrite (fd, l->buf, n, (off_t)(STORE_HEADER + r->offset + done)) !=
        (ssize_t)n)
      return fm_fail (err, "replay: write: %s", fd_strerror (errno));
    done += n;
  }
  return 0;
}

/* Copy the store file from into to, holes as holes. */
static int
copy_sparse (struct fd_wlog *l, int from, int to, struct fm_err *err)
{
  off_t end = lseek (from, 0, SEEK_END), data = 0, hole;

  if (end == -1 || ftruncate (to, 0) == -1 || ftruncate (to, end) == -1)
    return fm_fail (err, "copy: %s", fd_strerror (errno));
  while ((data = lseek (from, data, SEEK_DATA)) != -1 && data < end) {
    if ((hole = lseek (from, data, SEEK_HOLE)) == -1)
      return fm_fail (err, "copy: %s", fd_strerror (errno));
    while (data < hole) {
      size_t n = hole - data < CHUNK ? (size_t)(hole - data) : CHUNK;
      if (pread (from, l->buf, n, data) != (ssize_t)n ||
          pwrite (to, l->buf, n, data) != (ssize_t)n)
        return fm_fail (err, "copy: %s", fd_strerror (errno));
      data += (off_t)n;
    }
  }
  return 0;
}

/* The writes after flush f (up to the next), a seeded subset in a seeded
 * order, onto fd: a state a volatile cache may leave.  How many.
 */
static int
cache_state (struct fd_wlog *l, size_t f, uint64_t seed, int fd,
             uint64_t *applied, struct fm_err *err)
{
  size_t from = l->flushes[f] + 1,
         to = f + 1 < l->nflushes ? l->flushes[f + 1] : l->n, n = 0, k;
  size_t *pick = malloc ((to - from + 1) * sizeof *pick);

  if (pick == NULL)
    return fm_fail (err, "out of memory");
  for (k = from; k < to; k++)
    if (l->v[k].kind != FD_WLOG_FLUSH &&
        fm_unit (fm_hash (seed, FM_STREAM_POPULATE, k, 31)) < 0.5)
      pick[n++] = k;
  for (k = n; k > 1; k--) { /* Fisher-Yates, seeded */
    size_t j = fm_below (fm_hash (seed, FM_STREAM_POPULATE, k, 32), k), x;
    x = pick[k - 1];
    pick[k - 1] = pick[j];
    pick[j] = x;
  }
  for (k = 0; k < n; k++)
    if (apply (l, &l->v[pick[k]], fd, err) == -1) {
      free (pick);
      return -1;
    }
  free (pick);
  *applied = n;
  return 0;
}

/* The point's trial: t's inputs, with its own directory and disk and no
 * sweep or cut of its own.
 */
static void
point_spec (const struct trial_spec *s, struct trial_spec *ps, const char *dir)
{
  *ps = *s;
  ps->crash_points = 0;
  ps->repair_cut = 0;
  snprintf (ps->dir, sizeof ps->dir, "%s", dir);
  snprintf (ps->mnt, sizeof ps->mnt, "%s/mnt", dir);
  snprintf (ps->store, sizeof ps->store, "%s/disk.store", dir);
}

/* What the point's check, repair and audit found. */
static void
point_result (const struct trial_result *pr, const struct fm_err *e, int rc,
              struct fd_crash_point *cp)
{
  static const char *const names[] = {"check", "repair", "recheck"};
  char *out[] = {cp->check, cp->repair, cp->recheck};
  size_t k;

  for (k = 0; k < 3; k++) {
    const struct phase *p = fd_trial_phase (pr, names[k]);
    snprintf (out[k], sizeof cp->check, "%s",
              p && p->outcome ? p->outcome : "");
  }
  snprintf (cp->mount, sizeof cp->mount, "%s", pr->mount ? pr->mount : "");
  cp->audited = pr->audited;
  memcpy (cp->durability, pr->audit.durability, sizeof cp->durability);
  cp->nviolations = pr->nviolations;
  for (k = 0; k < pr->nviolations && k < 3; k++)
    cp->violations[k] = pr->violations[k];
  snprintf (cp->error, sizeof cp->error, "%s", rc == -1 ? e->msg : pr->error);
}

/* Which flushes: n spread evenly, the last always among them. */
static size_t
chosen_flush (uint64_t n, size_t nflushes, size_t i)
{
  return (size_t)(((uint64_t)i + 1) * nflushes / n) - 1;
}

/* A worker: a child checking one point in a directory of its own. */
struct worker {
  pid_t pid; /* 0: free */
  size_t point;
  char dir[PATH_MAX + 48];
};

/* In the child: check the point whose disk is in w->dir, leave its
 * result in w->dir/result.  The phases' chatter goes to w->dir/log.
 */
static void
point_child (const struct trial *t, const struct worker *w,
             struct fd_crash_point cp)
{
  static struct trial_spec ps;
  static struct trial_result pr; /* zeroed: the child's first trial */
  char path[PATH_MAX + 64];
  struct fm_err e;
  FILE *fp;
  int rc = -1;

  snprintf (path, sizeof path, "%s/log", w->dir);
  if (freopen (path, "w", stderr) == NULL)
    _exit (2);
  point_spec (t->s, &ps, w->dir);
  if (fd_manifest_at (&t->r->m, cp.promises, &pr.m) == 0)
    rc = fd_trial_run_disk (&ps, &pr, &e);
  else
    fm_fail (&e, "out of memory");
  point_result (&pr, &e, rc, &cp);
  fd_trial_clean (&ps, false);
  snprintf (path, sizeof path, "%s/result", w->dir);
  fp = fopen (path, "w");
  if (fp == NULL || fwrite (&cp, sizeof cp, 1, fp) != 1 || fclose (fp) != 0)
    _exit (2);
  _exit (0);
}

/* Wait for a worker to finish; its point's result into t.  The worker
 * is free again.
 */
static int
reap (struct trial *t, struct worker *ws, size_t nw, struct fm_err *err)
{
  char path[PATH_MAX + 64];
  int status;
  size_t k;
  FILE *fp;
  pid_t pid;

  while ((pid = waitpid (-1, &status, 0)) == -1 && errno == EINTR)
    ;
  if (pid == -1)
    return fm_fail (err, "waitpid: %s", fd_strerror (errno));
  for (k = 0; k < nw && ws[k].pid != pid; k++)
    ;
  if (k == nw)
    return 0; /* not ours */
  ws[k].pid = 0;
  {
    struct fd_crash_point *cp = &t->r->points[ws[k].point];
    snprintf (path, sizeof path, "%s/result", ws[k].dir);
    fp = fopen (path, "r");
    if (fp == NULL || fread (cp, sizeof *cp, 1, fp) != 1)
      snprintf (cp->error, sizeof cp->error,
                "the point's check died (%s %d; log %s/log)",
                WIFSIGNALED (status) ? "signal" : "exit",
                WIFSIGNALED (status) ? WTERMSIG (status) : WEXITSTATUS (status),
                ws[k].dir);
    if (fp)
      fclose (fp);
    unlink (path);
    fprintf (
        stderr,
        "%s: crash point %zu: flush %" PRIu64 ", %" PRIu64
        " promises%s: check %s, recheck %s%s, %" PRIu64 " violations, %" PRIu64
        " in flight lost%s%s\n",
        fd_progname, ws[k].point + 1, cp->flush, cp->promises,
        cp->cache_writes ? " + cached writes" : "",
        cp->check[0] ? cp->check : "-", cp->recheck[0] ? cp->recheck : "-",
        strcmp (cp->mount, FD_MOUNT_UNMOUNTABLE) ? ""
                                                 : ", " FD_MOUNT_UNMOUNTABLE,
        cp->durability[FD_DURABLE_BROKEN], cp->durability[FD_INFLIGHT_LOST],
        cp->error[0] ? "; " : "", cp->error);
    if (cp->error[0] == '\0') {
      snprintf (path, sizeof path, "%s/log", ws[k].dir);
      unlink (path);
    }
  }
  return 0;
}

/* How many workers are checking a point. */
static size_t
busy (const struct worker *ws, size_t nw)
{
  size_t k, n = 0;

  for (k = 0; k < nw; k++)
    n += ws[k].pid != 0;
  return n;
}

/* The disk of point i (flush f) into worker w's directory. */
static int
prepare (struct trial *t, struct fd_wlog *l, int replay, const struct worker *w,
         size_t i, size_t f, struct fm_err *err)
{
  char store[PATH_MAX + 64], mnt[PATH_MAX + 64];
  struct fd_crash_point *cp = &t->r->points[i];
  int fd, rc;

  snprintf (store, sizeof store, "%s/disk.store", w->dir);
  snprintf (mnt, sizeof mnt, "%s/mnt", w->dir);
  if ((mkdir (w->dir, 0700) == -1 && errno != EEXIST) ||
      (mkdir (mnt, 0700) == -1 && errno != EEXIST))
    return fm_fail (err, "%s: %s", w->dir, fd_strerror (errno));
  if ((fd = open (store, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) == -1)
    return fm_fail (err, "%s: %s", store, fd_strerror (errno));
  rc = copy_sparse (l, replay, fd, err);
  /* Every third point: what a volatile cache may have kept besides. */
  if (rc == 0 && i % 3 == 2)
    rc = cache_state (l, f, t->s->seed ^ i, fd, &cp->cache_writes, err);
  close (fd);
  cp->flush = f + 1;
  cp->promises = l->v[l->flushes[f]].promises;
  return rc;
}

/* Run the points, two workers per processor: most of a point's time is
 * spent waiting (on attaching, the checker, the mount), not computing;
 * measured on 2 cores, two workers did 57 points a minute, four 77.
 */
static int
sweep (struct trial *t, struct fd_wlog *l, int replay, const char *pdir,
       struct fm_err *err)
{
  uint64_t n =
      t->s->crash_points < l->nflushes ? t->s->crash_points : l->nflushes;
  long cpus = sysconf (_SC_NPROCESSORS_ONLN);
  size_t nw = t->s->fs->copies_collide ? 1 : cpus > 1 ? 2 * (size_t)cpus : 2;
  size_t next = 0, i, k;
  struct worker *ws = calloc (nw, sizeof *ws);
  double t0 = fd_now_s ();
  int rc = 0;

  if (ws == NULL || (t->r->points = calloc (n, sizeof *t->r->points)) == NULL) {
    free (ws);
    return fm_fail (err, "out of memory");
  }
  for (k = 0; k < nw; k++)
    snprintf (ws[k].dir, sizeof ws[k].dir, "%s/%zu", pdir, k);
  for (i = 0; i < n && rc == 0 && !fd_interrupted; i++) {
    size_t f = chosen_flush (n, l->nflushes, i);

    for (; next <= l->flushes[f] && rc == 0; next++)
      rc = apply (l, &l->v[next], replay, err);
    while (rc == 0 && busy (ws, nw) == nw)
      rc = reap (t, ws, nw, err);
    for (k = 0; k < nw && ws[k].pid; k++)
      ;
    if (rc == -1 || prepare (t, l, replay, &ws[k], i, f, err) == -1) {
      rc = -1;
      break;
    }
    t->r->npoints = i + 1;
    fflush (stdout);
    fflush (stderr);
    ws[k].point = i;
    if ((ws[k].pid = fork ()) == -1) {
      ws[k].pid = 0;
      rc = fm_fail (err, "fork: %s", fd_strerror (errno));
    } else if (ws[k].pid == 0)
      point_child (t, &ws[k], t->r->points[i]);
  }
  while (busy (ws, nw) > 0) {
    struct fm_err e;
    if (reap (t, ws, nw, &e) == -1)
      break;
  }
  for (k = 0; k < nw; k++) {
    char path[PATH_MAX + 64];
    snprintf (path, sizeof path, "%s/mnt", ws[k].dir);
    rmdir (path);
    rmdir (ws[k].dir); /* kept when a point's log is */
  }
  free (ws);
  t->r->points_wall_s = fd_now_s () - t0;
  if (rc == 0 && fd_interrupted)
    rc = fm_fail (err, "interrupted");
  return rc;
}

int
fd_crash_points (struct trial *t, struct fm_err *err)
{
  char log[PATH_MAX + 32], rpath[PATH_MAX + 32], pdir[PATH_MAX + 32];
  struct fd_wlog l;
  int replay = -1, src = -1, rc = -1;
  unsigned char header[STORE_HEADER];

  snprintf (log, sizeof log, "%s/" FD_WRITELOG_NAME, t->s->dir);
  snprintf (rpath, sizeof rpath, "%s/replay.store", t->s->dir);
  snprintf (pdir, sizeof pdir, "%s/point", t->s->dir);
  if (fd_wlog_load (log, &l, err) == -1)
    goto out;
  if (l.nflushes == 0) {
    fm_fail (err, "%s: no flush in the write log: no crash point", log);
    goto out;
  }
  t->r->log_flushes = l.nflushes;
  t->r->log_promises = l.promises;
  /* The rebuilt disk starts empty, under the populated store's header. */
  if ((src = open (t->s->store, O_RDONLY | O_CLOEXEC)) == -1 ||
      pread (src, header, sizeof header, 0) != (ssize_t)sizeof header ||
      (replay = open (rpath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) ==
          -1 ||
      pwrite (replay, header, sizeof header, 0) != (ssize_t)sizeof header ||
      ftruncate (replay, (off_t)(STORE_HEADER + l.disk_size)) == -1) {
    fm_fail (err, "replay store: %s", fd_strerror (errno));
    goto out;
  }
  if (mkdir (pdir, 0700) == -1 && errno != EEXIST) {
    fm_fail (err, "%s: %s", pdir, fd_strerror (errno));
    goto out;
  }
  rc = sweep (t, &l, replay, pdir, err);

out:
  if (src != -1)
    close (src);
  if (replay != -1)
    close (replay);
  unlink (rpath);
  rmdir (pdir); /* kept when a point's log is */
  fd_wlog_free (&l);
  return rc;
}
