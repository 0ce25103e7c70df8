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

#include "commands.h" /* fd_progname */
#include "crashpoints.h"
#include "errmsg.h"
#include "faultmodels/rng.h"
#include "json.h"
#include "proc.h"
#include "trial.h"
#include "writelog.h"

/* The plugin's store file: a 4 KiB header, then the disk's bytes. */
#define STORE_HEADER 4096
#define CHUNK        (1u << 20)

/* A record of the log.  A flush's promises are those marked before the
 * next flush: the fsync behind a promise flushed before the mark was
 * written, so the last flush before a mark is the one that made it good,
 * even when other writes (writeback, a log tail) came between.  Owing it
 * to the next flush instead would let the last point owe less than the
 * workload promised whenever only unflushed writes followed the mark.
 */
struct rec {
  uint32_t kind, flags;
  uint64_t offset, length, promises;
  long data_at;
};

struct wlog {
  FILE *fp;
  struct rec *v;
  size_t n, cap;
  size_t *flushes; /* records after which the writes before are durable */
  size_t nflushes;
  uint64_t promises; /* marked so far (after load, in all) */
  uint64_t disk_size;
  unsigned char *buf; /* CHUNK bytes */
};

static void
wlog_free (struct wlog *l)
{
  if (l->fp)
    fclose (l->fp);
  free (l->v);
  free (l->flushes);
  free (l->buf);
}

/* A mark named "promise-N": N promises made by now. */
static int
read_mark (struct wlog *l, const struct fd_wlog_rec *r, long at,
           uint64_t *promises)
{
  char name[80];
  long back = ftell (l->fp);

  if (r->length >= sizeof name)
    return 0; /* not ours: a phase mark is short, so is ours */
  if (fseek (l->fp, at, SEEK_SET) == -1 ||
      fread (name, 1, r->length, l->fp) != r->length)
    return -1;
  name[r->length] = '\0';
  if (strncmp (name, "promise-", 8) == 0)
    *promises = strtoull (name + 8, NULL, 10);
  return fseek (l->fp, back, SEEK_SET);
}

static int
load (const char *path, struct wlog *l, struct fm_err *err)
{
  struct fd_wlog_rec r;
  long at;
  int k;

  memset (l, 0, sizeof *l);
  if ((l->buf = malloc (CHUNK)) == NULL)
    return fm_fail (err, "out of memory");
  if ((l->fp = fopen (path, "r")) == NULL)
    return fm_fail (err, "%s: %s", path, fd_strerror (errno));
  if (fd_wlog_next (l->fp, &r, &at, err) != 1 || r.kind != FD_WLOG_MAGIC)
    return fm_fail (err, "%s: not a write log", path);
  l->disk_size = r.offset;
  while ((k = fd_wlog_next (l->fp, &r, &at, err)) == 1) {
    if (r.kind == FD_WLOG_MARK) {
      if (read_mark (l, &r, at, &l->promises) == -1)
        return fm_fail (err, "%s: a mark cut short", path);
      if (l->nflushes)
        l->v[l->flushes[l->nflushes - 1]].promises = l->promises;
      continue;
    }
    if (r.offset > l->disk_size || r.length > l->disk_size - r.offset)
      return fm_fail (err, "%s: record %" PRIu64 " beyond the disk", path,
                      r.seq);
    if (l->n == l->cap) {
      size_t cap = l->cap ? 2 * l->cap : 4096;
      struct rec *v = realloc (l->v, cap * sizeof *v);
      size_t *f = realloc (l->flushes, cap * sizeof *f);
      if (v)
        l->v = v;
      if (f)
        l->flushes = f;
      if (v == NULL || f == NULL)
        return fm_fail (err, "out of memory");
      l->cap = cap;
    }
    l->v[l->n] =
        (struct rec){r.kind, r.flags, r.offset, r.length, l->promises, at};
    if (r.kind == FD_WLOG_FLUSH ||
        (r.kind == FD_WLOG_WRITE && (r.flags & FD_WLOG_FUA)))
      l->flushes[l->nflushes++] = l->n;
    l->n++;
  }
  return k == -1 ? fm_fail (err, "%s: %s", path, err->msg) : 0;
}

/* Record r (a write or a zero) onto the store file fd. */
static int
apply (struct wlog *l, const struct rec *r, int fd, struct fm_err *err)
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
copy_sparse (struct wlog *l, int from, int to, struct fm_err *err)
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
cache_state (struct wlog *l, size_t f, uint64_t seed, int fd, uint64_t *applied,
             struct fm_err *err)
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

/* The point's trial: t's inputs, its own directory and disk. */
static void
point_trial (const struct trial *t, struct trial *pt, const char *dir)
{
  *pt = *t;
  pt->nph = 0;
  pt->damaged = NULL;
  pt->ndamaged = 0;
  pt->violations = NULL;
  pt->nviolations = 0;
  pt->points = NULL;
  pt->npoints = 0;
  pt->audited = pt->probe_ok = false;
  pt->mount = NULL;
  pt->error[0] = pt->stats[0] = pt->targets[0] = pt->mount_reason[0] = '\0';
  pt->crash_points = 0;
  pt->repair_cut = 0;
  pt->cut = false;
  pt->cut_outcome = NULL;
  memset (&pt->audit, 0, sizeof pt->audit);
  snprintf (pt->dir, sizeof pt->dir, "%s", dir);
  snprintf (pt->mnt, sizeof pt->mnt, "%s/mnt", dir);
  snprintf (pt->store, sizeof pt->store, "%s/disk.store", dir);
}

/* What the point's check, repair and audit found. */
static void
point_result (const struct trial *pt, const struct fm_err *e, int rc,
              struct fd_crash_point *cp)
{
  static const char *const names[] = {"check", "repair", "recheck"};
  char *out[] = {cp->check, cp->repair, cp->recheck};
  size_t k;

  for (k = 0; k < 3; k++) {
    const struct phase *p = fd_trial_phase (pt, names[k]);
    snprintf (out[k], sizeof cp->check, "%s",
              p && p->outcome ? p->outcome : "");
  }
  snprintf (cp->mount, sizeof cp->mount, "%s", pt->mount ? pt->mount : "");
  cp->audited = pt->audited;
  memcpy (cp->durability, pt->audit.durability, sizeof cp->durability);
  cp->nviolations = pt->nviolations;
  for (k = 0; k < pt->nviolations && k < 3; k++)
    cp->violations[k] = pt->violations[k];
  snprintf (cp->error, sizeof cp->error, "%s", rc == -1 ? e->msg : pt->error);
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
  static struct trial pt;
  char path[PATH_MAX + 64];
  struct fm_err e;
  FILE *fp;
  int rc = -1;

  snprintf (path, sizeof path, "%s/log", w->dir);
  if (freopen (path, "w", stderr) == NULL)
    _exit (2);
  point_trial (t, &pt, w->dir);
  if (fd_manifest_at (&t->m, cp.promises, &pt.m) == 0)
    rc = fd_trial_run_disk (&pt, &e);
  else
    fm_fail (&e, "out of memory");
  point_result (&pt, &e, rc, &cp);
  fd_trial_clean (&pt, false);
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
    struct fd_crash_point *cp = &t->points[ws[k].point];
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
prepare (struct trial *t, struct wlog *l, int replay, const struct worker *w,
         size_t i, size_t f, struct fm_err *err)
{
  char store[PATH_MAX + 64], mnt[PATH_MAX + 64];
  struct fd_crash_point *cp = &t->points[i];
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
    rc = cache_state (l, f, t->seed ^ i, fd, &cp->cache_writes, err);
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
sweep (struct trial *t, struct wlog *l, int replay, const char *pdir,
       struct fm_err *err)
{
  uint64_t n = t->crash_points < l->nflushes ? t->crash_points : l->nflushes;
  long cpus = sysconf (_SC_NPROCESSORS_ONLN);
  size_t nw = t->fs->copies_collide ? 1 : cpus > 1 ? 2 * (size_t)cpus : 2;
  size_t next = 0, i, k;
  struct worker *ws = calloc (nw, sizeof *ws);
  double t0 = fd_now_s ();
  int rc = 0;

  if (ws == NULL || (t->points = calloc (n, sizeof *t->points)) == NULL) {
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
    t->npoints = i + 1;
    fflush (stdout);
    fflush (stderr);
    ws[k].point = i;
    if ((ws[k].pid = fork ()) == -1) {
      ws[k].pid = 0;
      rc = fm_fail (err, "fork: %s", fd_strerror (errno));
    } else if (ws[k].pid == 0)
      point_child (t, &ws[k], t->points[i]);
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
  t->points_wall_s = fd_now_s () - t0;
  if (rc == 0 && fd_interrupted)
    rc = fm_fail (err, "interrupted");
  return rc;
}

bool
fd_write_fault_kind (const char *kind)
{
  return strcmp (kind, "lost-write") == 0 ||
         strcmp (kind, "misdirected-write") == 0 ||
         strcmp (kind, "torn-write") == 0;
}

bool
fd_target_edits_store (const char *kind)
{
  uint64_t stripe;
  enum fd_stripe_fault how;
  struct fm_err e;

  /* An unreadable stripe is the disk's to keep, as any ure. */
  return fd_write_fault_kind (kind) ||
         (fd_target_stripe (kind, &stripe, &how, &e) == 0 && stripe &&
          how != FD_STRIPE_URE);
}

/* Bytes [offset, offset+len) of record r (a write) into buf, at the
 * range's place in buf (which covers [at, at+blen)).
 */
static int
overlay (struct wlog *l, const struct rec *r, uint64_t at, unsigned char *buf,
         uint64_t blen, struct fm_err *err)
{
  uint64_t from = r->offset > at ? r->offset : at;
  uint64_t to =
      r->offset + r->length < at + blen ? r->offset + r->length : at + blen;

  if (from >= to)
    return 0;
  if (r->kind == FD_WLOG_ZERO) {
    memset (buf + (from - at), 0, to - from);
    return 0;
  }
  if (fseek (l->fp, r->data_at + (long)(from - r->offset), SEEK_SET) == -1 ||
      fread (buf + (from - at), 1, to - from, l->fp) != to - from)
    return fm_fail (err, "write log: a write cut short");
  return 0;
}

/* One fault line in the populate's fault log (the attribution's input). */
static void
log_fault (const struct trial *t, const char *kind, uint64_t offset,
           uint64_t length, const char *detail)
{
  char path[PATH_MAX + 32];
  FILE *fp;

  snprintf (path, sizeof path, "%s/faults-populate.jsonl", t->dir);
  if ((fp = fopen (path, "a")) == NULL)
    return;
  fprintf (fp,
           "{\"virtual_ns\": 0, \"event\": \"inject\", \"kind\": \"%s\", "
           "\"offset\": %" PRIu64 ", \"length\": %" PRIu64 ", \"detail\": ",
           kind, offset, length);
  fd_json_string (fp, detail);
  fputs ("}\n", fp);
  fclose (fp);
}

/* The last write the log has to [offset, offset+length): the range as
 * it was just before it (*before) and as it made it (*made).  Which
 * record, or SIZE_MAX with err.
 */
static size_t
last_write (struct wlog *l, const char *kind, uint64_t offset, uint64_t length,
            unsigned char *before, unsigned char *made, struct fm_err *err)
{
  size_t last = SIZE_MAX, k;

  for (k = 0; k < l->n; k++)
    if (l->v[k].kind == FD_WLOG_WRITE && l->v[k].offset < offset + length &&
        offset < l->v[k].offset + l->v[k].length)
      last = k;
  if (last == SIZE_MAX) {
    fm_fail (err,
             "--target %s: nothing was ever written to bytes %" PRIu64
             "-%" PRIu64,
             kind, offset, offset + length);
    return SIZE_MAX;
  }
  for (k = 0; k < last; k++)
    if (l->v[k].kind != FD_WLOG_FLUSH &&
        overlay (l, &l->v[k], offset, before, length, err) == -1)
      return SIZE_MAX;
  memcpy (made, before, length);
  if (overlay (l, &l->v[last], offset, made, length, err) == -1)
    return SIZE_MAX;
  return last;
}

/* Put the fault in the store file fd: the range as `before` says (a
 * torn write first takes a seeded prefix of `made`), and a misdirected
 * write's bytes where they landed.
 */
static int
put_fault (const struct trial *t, int fd, const char *kind, uint64_t offset,
           uint64_t length, uint64_t disk_size, size_t rec,
           unsigned char *before, const unsigned char *made, uint64_t h,
           struct fm_err *err)
{
  char detail[160];
  uint64_t d = 4096 * (1 + fm_below (h >> 8, 16)), at;
  bool down = (h & 1) && offset >= d;

  if (strcmp (kind, "torn-write") == 0) {
    uint64_t pieces = length / 512, keep;
    if (pieces < 2)
      return fm_fail (err,
                      "--target torn-write: a range of one sector cannot tear");
    keep = 1 + fm_below (h, pieces - 1);
    memcpy (before, made, keep * 512);
    snprintf (detail, sizeof detail,
              "harness: write %zu torn, the first %" PRIu64 " of %" PRIu64
              " pieces made it",
              rec + 1, keep, pieces);
  } else
    snprintf (detail, sizeof detail, "harness: write %zu to it (the last) %s",
              rec + 1,
              strcmp (kind, "lost-write") == 0 ? "acknowledged, never written"
                                               : "landed elsewhere");
  if (pwrite (fd, before, length, (off_t)(STORE_HEADER + offset)) !=
      (ssize_t)length)
    return fm_fail (err, "%s: %s", t->store, fd_strerror (errno));
  log_fault (t, kind, offset, length, detail);
  if (strcmp (kind, "misdirected-write") != 0)
    return 0;
  if (!down && offset + length + d > disk_size)
    down = true;
  at = down ? offset - d : offset + d;
  if (pwrite (fd, made, length, (off_t)(STORE_HEADER + at)) != (ssize_t)length)
    return fm_fail (err, "%s: %s", t->store, fd_strerror (errno));
  snprintf (detail, sizeof detail,
            "harness: write %zu meant for byte %" PRIu64 " landed here",
            rec + 1, offset);
  log_fault (t, kind, at, length, detail);
  return 0;
}

int
fd_write_fault (const struct trial *t, const char *kind, uint64_t offset,
                uint64_t length, uint64_t seed, struct fm_err *err)
{
  char log[PATH_MAX + 32];
  unsigned char *before = NULL, *made = NULL;
  struct wlog l;
  size_t rec;
  int fd = -1, rc = -1;

  snprintf (log, sizeof log, "%s/" FD_WRITELOG_NAME, t->dir);
  if (load (log, &l, err) == -1)
    goto out;
  if (length == 0 || offset >= l.disk_size || length > l.disk_size - offset ||
      length > CHUNK) {
    fm_fail (err, "--target %s: a range of %" PRIu64 " bytes at %" PRIu64, kind,
             length, offset);
    goto out;
  }
  before = calloc (1, length);
  made = calloc (1, length);
  if (before == NULL || made == NULL) {
    fm_fail (err, "out of memory");
    goto out;
  }
  if ((rec = last_write (&l, kind, offset, length, before, made, err)) ==
      SIZE_MAX)
    goto out;
  if ((fd = open (t->store, O_RDWR | O_CLOEXEC)) == -1) {
    fm_fail (err, "%s: %s", t->store, fd_strerror (errno));
    goto out;
  }
  rc = put_fault (t, fd, kind, offset, length, l.disk_size, rec, before, made,
                  fm_hash (seed, FM_STREAM_WRITE, offset, 77), err);

out:
  if (fd != -1)
    close (fd);
  free (before);
  free (made);
  wlog_free (&l);
  return rc;
}

/* The store's segment k (0: the file with the header) and the disk
 * bytes it holds.  -1 with err.
 */
#define SEGMENT (UINT64_C (8) << 40)

static int
open_segment (const struct trial *t, uint64_t k, uint64_t *bytes,
              struct fm_err *err)
{
  char path[PATH_MAX + 48];
  struct stat st;
  int fd;

  if (k == 0)
    snprintf (path, sizeof path, "%s", t->store);
  else
    snprintf (path, sizeof path, "%s.%" PRIu64, t->store, k);
  if ((fd = open (path, O_RDWR | O_CLOEXEC)) == -1 || fstat (fd, &st) == -1) {
    if (fd != -1)
      close (fd);
    return fm_fail (err, "%s: %s", path, fd_strerror (errno));
  }
  *bytes = (uint64_t)st.st_size - (k == 0 ? STORE_HEADER : 0);
  return fd;
}

/* The disk's bytes [offset, offset+length) through the store's
 * segments: read into buf (zeros past what the store holds), or written
 * from it (cut at the disk's end).  The bytes within the disk, or -1
 * with err.
 */
static int64_t
disk_io (const struct trial *t, uint64_t offset, uint64_t length,
         unsigned char *buf, bool write, struct fm_err *err)
{
  uint64_t done = 0;

  if (!write)
    memset (buf, 0, length);
  while (done < length) {
    uint64_t at = offset + done, k = at / SEGMENT, in = at % SEGMENT, have;
    uint64_t n = (k + 1) * SEGMENT - at;
    int fd = open_segment (t, k, &have, err);
    off_t pos = (off_t)((k == 0 ? STORE_HEADER : 0) + in);
    ssize_t r;
    if (fd == -1)
      return -1;
    if (in >= have) {
      close (fd);
      break; /* past the disk's end */
    }
    if (n > length - done)
      n = length - done;
    if (n > have - in)
      n = have - in;
    r = write ? pwrite (fd, buf + done, n, pos)
              : pread (fd, buf + done, n, pos);
    close (fd);
    if (r != (ssize_t)n)
      return fm_fail (err, "%s: %s", t->store,
                      r == -1 ? fd_strerror (errno) : "short transfer");
    done += n;
  }
  return (int64_t)done;
}

int
fd_garble (const struct trial *t, uint64_t offset, uint64_t length,
           uint64_t seed, uint64_t from, const char *detail, struct fm_err *err)
{
  uint64_t *words = malloc (length + 8), i;
  unsigned char *buf = (unsigned char *)words;
  int64_t done = -1;

  if (words == NULL)
    return fm_fail (err, "out of memory");
  if (from != FD_GARBLE_SEEDED)
    done = disk_io (t, from, length, buf, false, err);
  else
    for (i = 0, done = 0; i < (length + 7) / 8; i++)
      words[i] = fm_hash (seed, FM_STREAM_WRITE, offset + 8 * i, 78);
  if (done != -1)
    done = disk_io (t, offset, length, buf, true, err);
  free (words);
  if (done == -1)
    return -1;
  if (done == 0)
    return fm_fail (err, "byte %" PRIu64 ": beyond the disk", offset);
  log_fault (t, "stripe", offset, (uint64_t)done, detail);
  return 0;
}

int
fd_crash_points (struct trial *t, struct fm_err *err)
{
  char log[PATH_MAX + 32], rpath[PATH_MAX + 32], pdir[PATH_MAX + 32];
  struct wlog l;
  int replay = -1, src = -1, rc = -1;
  unsigned char header[STORE_HEADER];

  snprintf (log, sizeof log, "%s/" FD_WRITELOG_NAME, t->dir);
  snprintf (rpath, sizeof rpath, "%s/replay.store", t->dir);
  snprintf (pdir, sizeof pdir, "%s/point", t->dir);
  if (load (log, &l, err) == -1)
    goto out;
  if (l.nflushes == 0) {
    fm_fail (err, "%s: no flush in the write log: no crash point", log);
    goto out;
  }
  t->log_flushes = l.nflushes;
  t->log_promises = l.promises;
  /* The rebuilt disk starts empty, under the populated store's header. */
  if ((src = open (t->store, O_RDONLY | O_CLOEXEC)) == -1 ||
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
  wlog_free (&l);
  return rc;
}
