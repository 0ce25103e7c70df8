/* futuredisk — harness: a night of trials (see night.h), the engine
 * behind `futuredisk campaign` and `futuredisk demo`.
 *
 * Each trial is a `futuredisk run` child on a fresh disk, so a trial that
 * crashes takes nothing else down and several run at once.  The
 * database is the only record of what is done: a child records its trial
 * when it finishes (an interrupted child records nothing), so a resumed
 * night runs exactly the trials not yet in the database.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "faultmodels/faults.h"
#include "faultmodels/units.h"
#include "attach.h"
#include "campaign.h"
#include "progname.h"
#include "db.h"
#include "errmsg.h"
#include "night.h"
#include "proc.h"
#include "reuse.h"
#include "trial.h"

/* The trial's row in the database, or 0: the same campaign night and the
 * same inputs (seed and repetition included).
 */
static sqlite3_int64
recorded_spec (sqlite3 *db, const char *name, const char *run_id,
               const struct trial_spec *s)
{
  sqlite3_stmt *st;
  sqlite3_int64 id = 0;

  if (sqlite3_prepare_v2 (
          db,
          "SELECT id FROM trials WHERE campaign = ? AND run_id = ? AND fs = ?"
          " AND profile = ? AND size = ? AND fill_pct = ? AND meta_only = ?"
          " AND crash = ? AND faults = ? AND target = ? AND time_mode = ?"
          " AND (think = ?12 OR (?12 = 'auto' AND think IN ('cpu', 'real')))"
          " AND seed = ? AND rep = ? AND repair_cut = ?"
          " AND crash_points = ? AND tree = ? AND escalate = ? AND host = ?"
          " AND (?20 IS NULL OR json_extract(record, '$.attach') = ?20)"
          " ORDER BY id DESC LIMIT 1",
          -1, &st, NULL) != SQLITE_OK)
    return 0;
  sqlite3_bind_text (st, 1, name, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 2, run_id, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 3, s->fs->name, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 4, s->profile, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 5, s->size, -1, SQLITE_STATIC);
  sqlite3_bind_double (st, 6, s->fill);
  sqlite3_bind_int64 (
      st, 7, s->populate.meta_only ? (sqlite3_int64)s->populate.files : 0);
  sqlite3_bind_int (st, 8, s->crash);
  sqlite3_bind_text (st, 9, s->faults_spec ? s->faults_spec : "", -1,
                     SQLITE_STATIC);
  sqlite3_bind_text (st, 10, s->target ? s->target : "", -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 11, s->time_mode, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 12, s->think, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 13, (sqlite3_int64)s->seed);
  sqlite3_bind_int64 (st, 14, (sqlite3_int64)s->rep);
  sqlite3_bind_int64 (st, 15, (sqlite3_int64)s->repair_cut);
  sqlite3_bind_int64 (st, 16, (sqlite3_int64)s->crash_points);
  sqlite3_bind_text (st, 17, fd_tree_name (s->populate.tree), -1,
                     SQLITE_STATIC);
  sqlite3_bind_int (st, 18, s->escalate);
  sqlite3_bind_text (st, 19, fd_spec_host (s) ? fd_spec_host (s) : "native", -1,
                     SQLITE_STATIC);
  /* auto takes nbd or loop, whichever the machine has: either will do. */
  if (fd_attach_via_name (s->via))
    sqlite3_bind_text (st, 20, s->via, -1, SQLITE_STATIC);
  if (sqlite3_step (st) == SQLITE_ROW)
    id = sqlite3_column_int64 (st, 0);
  sqlite3_finalize (st);
  return id;
}

static sqlite3_int64
recorded (sqlite3 *db, const char *name, const char *run_id,
          const struct fd_campaign_trial *t)
{
  struct trial_spec *s = malloc (sizeof *s);
  struct fm_err err;
  sqlite3_int64 id = 0;

  if (s && fd_campaign_spec (t, s, &err) == 0)
    id = recorded_spec (db, name, run_id, s);
  free (s);
  return id;
}

/* What the progress line says of a recorded trial, in one query: its
 * error, the check's outcome and virtual seconds, the files it lost,
 * its mount after the repair.
 */
static void
summary_of (sqlite3 *db, sqlite3_int64 id, char *error, size_t elen,
            char *outcome, size_t olen, char *mount, size_t mlen,
            double *check_s, double *lost, double *allowed)
{
  sqlite3_stmt *st;

  /* After a crash only the broken promises are lost; what was in flight
   * and did not come back is allowed (NULL otherwise).
   */
  if (sqlite3_prepare_v2 (
          db,
          "SELECT t.error, p.outcome, p.virtual_s, CASE WHEN t.crash AND "
          "b.files IS NOT NULL THEN b.files ELSE (SELECT coalesce(sum("
          "a.files), 0) FROM audit a WHERE a.trial_id = t.id AND a.class "
          "NOT IN ('intact', 'extra')) END, CASE WHEN t.crash THEN l.files "
          "END, t.mount FROM trials t LEFT JOIN phases p ON p.trial_id = t.id "
          "AND "
          "p.name = 'check' LEFT JOIN durability b ON b.trial_id = t.id AND "
          "b.class = 'durable_broken' LEFT JOIN durability l ON l.trial_id = "
          "t.id AND l.class = 'inflight_lost' WHERE t.id = ?",
          -1, &st, NULL) != SQLITE_OK)
    return;
  sqlite3_bind_int64 (st, 1, id);
  if (sqlite3_step (st) == SQLITE_ROW) {
    if (sqlite3_column_text (st, 0))
      snprintf (error, elen, "%s", (const char *)sqlite3_column_text (st, 0));
    if (sqlite3_column_text (st, 1))
      snprintf (outcome, olen, "%s", (const char *)sqlite3_column_text (st, 1));
    *check_s = sqlite3_column_double (st, 2);
    *lost = sqlite3_column_double (st, 3);
    if (sqlite3_column_type (st, 4) != SQLITE_NULL)
      *allowed = sqlite3_column_double (st, 4);
    if (sqlite3_column_text (st, 5))
      snprintf (mount, mlen, "%s", (const char *)sqlite3_column_text (st, 5));
  }
  sqlite3_finalize (st);
}

static void
describe_spec (const struct trial_spec *s, char *buf, size_t len)
{
  char cut[48] = "", clock[64];
  const char *tree = fd_tree_name (s->populate.tree);
  const char *via = fd_attach_via_name (s->via); /* NULL: auto */
  bool meta = s->populate.meta_only;

  if (s->repair_cut)
    snprintf (cut, sizeof cut, " repair-cut %" PRIu64, s->repair_cut);
  else if (s->crash_points == UINT64_MAX)
    snprintf (cut, sizeof cut, " crash-points all");
  else if (s->crash_points)
    snprintf (cut, sizeof cut, " crash-points %" PRIu64, s->crash_points);
  /* A clock other than the defaults' (a matrix may cross them). */
  snprintf (clock, sizeof clock, "%s%.24s%s%.8s",
            strcmp (s->time_mode, "virtual") ? " time " : "",
            strcmp (s->time_mode, "virtual") ? s->time_mode : "",
            strcmp (s->think, "auto") ? " think " : "",
            strcmp (s->think, "auto") ? s->think : "");
  snprintf (
      buf, len, "%s %s %s %s%g%s%s%s%s%s%s%s%s%s%s%s%s%s seed %" PRIu64 "%s",
      s->fs->name, s->profile, s->size, meta ? "meta " : "fill ",
      meta ? (double)s->populate.files : s->fill,
      strcmp (tree, "mixed") ? " tree " : "",
      strcmp (tree, "mixed") ? tree : "", s->crash ? " crash" : "",
      s->faults_spec ? " faults " : "", s->faults_spec ? s->faults_spec : "",
      s->target ? " target " : "", s->target ? s->target : "", cut, clock,
      s->host ? " host " : "", s->host ? s->host : "", via ? " attach " : "",
      via ? via : "", s->seed, s->rep ? " (again)" : "");
}

/* "ext4 roadmap-2006 1G fill 30 faults consumer seed 2" */
void
fd_night_describe (const struct fd_campaign_trial *t, char *buf, size_t len)
{
  struct trial_spec *s = malloc (sizeof *s);
  struct fm_err err;

  if (s && fd_campaign_spec (t, s, &err) == 0)
    describe_spec (s, buf, len);
  else
    snprintf (buf, len, "%s", s ? err.msg : "out of memory");
  free (s);
}

struct slot {
  pid_t pid;
  size_t idx;
  char dir[PATH_MAX], log[PATH_MAX + 8];
};

struct night {
  const struct fd_campaign *c;
  const char *db_path, *run_id;
  char db_buf[96], run_buf[128], self[PATH_MAX], work[PATH_MAX];
  size_t *todo, ntodo, next, done, recorded_errors, lost_trials, failed;
  size_t unmountable; /* findings: the repair left the file system so */
  double t0;
  struct slot *slots;
  uint64_t jobs;
  bool tty;
  struct fd_reuse *reuse; /* NULL: --no-reuse */
};

/* --base-out DIR or --base DIR into argv when the trial shares its
 * populated disk (reuse.h); how many arguments.
 */
static size_t
base_args (struct night *n, size_t idx, const char **argv)
{
  const char *out = NULL, *base = NULL;

  if (n->reuse == NULL || fd_reuse_plan (n->reuse, idx, &out, &base) != 0 ||
      (out == NULL && base == NULL))
    return 0;
  argv[0] = base ? "--base" : "--base-out";
  argv[1] = base ? base : out;
  return 2;
}

/* The trial's keys as run's options (spec.h): each one given, a flag
 * alone.  How many arguments.
 */
static size_t
key_args (const struct fd_campaign_trial *t, const char **argv)
{
  size_t k, a = 0;

  for (k = 0; k < FD_NKEYS; k++)
    if (t->value[k]) {
      argv[a++] = fd_key_option (k);
      if (!fd_key_flag (k))
        argv[a++] = t->value[k];
    }
  return a;
}

static int
start (struct night *n, struct slot *s, size_t idx, struct fm_err *err)
{
  const struct fd_campaign_trial *t = fd_campaign_trial (n->c, idx);
  char seed[32], rep[32];
  const char *argv[2 * FD_NKEYS + 24];
  size_t a = 0;

  snprintf (s->dir, sizeof s->dir, "%s/t%06zu", n->work, idx);
  snprintf (s->log, sizeof s->log, "%s.log", s->dir);
  if (mkdir (s->dir, 0700) == -1 && errno != EEXIST) {
    return fm_fail (err, "%s: %s", s->dir, fd_strerror (errno));
  }
  unlink (s->log);
  snprintf (seed, sizeof seed, "%" PRIu64, t->seed);
  snprintf (rep, sizeof rep, "%" PRIu64, t->rep);
  argv[a++] = n->self;
  argv[a++] = "run";
  a += key_args (t, argv + a);
  argv[a++] = "--seed";
  argv[a++] = seed;
  argv[a++] = "--db";
  argv[a++] = n->db_path;
  argv[a++] = "--campaign";
  argv[a++] = fd_campaign_name (n->c);
  argv[a++] = "--run-id";
  argv[a++] = n->run_id;
  argv[a++] = "--rep";
  argv[a++] = rep;
  argv[a++] = "--dir";
  argv[a++] = s->dir;
  a += base_args (n, idx, argv + a);
  argv[a] = NULL;
  s->idx = idx;
  s->pid = fd_spawn ((char *const *)argv, s->log, err);
  return s->pid == -1 ? -1 : 0;
}

static void
fmt_duration (double s, char *buf, size_t len)
{
  if (s >= 3600)
    snprintf (buf, len, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
  else
    snprintf (buf, len, "%dm%02ds", (int)(s / 60), (int)s % 60);
}

/* A trial ended: look for its record, report one line of progress. */
static void
finished (struct night *n, struct slot *s, int status)
{
  const struct fd_campaign_trial *t = fd_campaign_trial (n->c, s->idx);
  sqlite3 *db;
  struct fm_err err;
  sqlite3_int64 id = 0;
  char what[256], line[512], eta[32], error[256] = "", outcome[32] = "-";
  char mount[16] = "", how[48] = "";
  bool unmountable;
  double check_s = 0, lost = 0, allowed = -1, elapsed = fd_now_s () - n->t0;

  n->done++;
  if (n->reuse)
    fd_reuse_ended (n->reuse, s->pid);
  fd_night_describe (t, what, sizeof what);
  if ((db = fd_db_open (n->db_path, false, &err)) != NULL) {
    id = recorded (db, fd_campaign_name (n->c), n->run_id, t);
    if (id)
      summary_of (db, id, error, sizeof error, outcome, sizeof outcome, mount,
                  sizeof mount, &check_s, &lost, &allowed);
    sqlite3_close (db);
  }
  if (id == 0) {
    n->failed++;
    snprintf (line, sizeof line, "%s: NOT RECORDED (%s %d; log %s)", what,
              WIFSIGNALED (status) ? "signal" : "exit",
              WIFSIGNALED (status) ? WTERMSIG (status) : WEXITSTATUS (status),
              s->log);
  } else {
    if (error[0])
      n->recorded_errors++;
    if (lost > 0)
      n->lost_trials++;
    /* A finding: the repair left the file system unmountable. */
    unmountable = strcmp (mount, FD_MOUNT_UNMOUNTABLE) == 0;
    if (unmountable || strcmp (mount, FD_MOUNT_RECOVERED) == 0)
      snprintf (how, sizeof how, ", %s after the repair",
                unmountable ? "unmountable" : "mounted only escalated");
    n->unmountable += unmountable;
    if (allowed >= 0)
      snprintf (line, sizeof line,
                "%s: check %.1f s %s%s, %.0f broken promises, %.0f in flight "
                "lost (allowed)%s%.80s",
                what, check_s, outcome, how, lost, allowed,
                error[0] ? "; " : "", error);
    else
      snprintf (line, sizeof line,
                "%s: check %.1f s %s%s, %.0f files lost%s%.80s", what, check_s,
                outcome, how, lost, error[0] ? "; " : "", error);
    /* Recorded: the log and the trial directory are of no more use. */
    unlink (s->log);
    rmdir (s->dir);
  }
  fmt_duration (
      n->done < n->ntodo ? elapsed / n->done * (double)(n->ntodo - n->done) : 0,
      eta, sizeof eta);
  fprintf (stderr,
           "%s[%zu/%zu] ETA %s, %zu not recorded, %zu with errors, %zu "
           "unmountable, %zu lost data | %s%s",
           n->tty ? "\r\033[K" : "", n->done, n->ntodo, eta, n->failed,
           n->recorded_errors, n->unmountable, n->lost_trials, line,
           n->tty ? "" : "\n");
  s->pid = 0;
}

/* Move the first trial left that may start now to n->todo[n->next]:
 * false if each waits for a base another trial is making.  (The order
 * of the trials is the database's, not the results'.)
 */
static bool
next_startable (struct night *n)
{
  const char *out, *base;
  size_t k, idx;

  for (k = n->next; k < n->ntodo; k++)
    if (n->reuse == NULL ||
        fd_reuse_plan (n->reuse, n->todo[k], &out, &base) == 0)
      break;
  if (k == n->ntodo)
    return false;
  idx = n->todo[k];
  memmove (&n->todo[n->next + 1], &n->todo[n->next],
           (k - n->next) * sizeof *n->todo);
  n->todo[n->next] = idx;
  return true;
}

/* Run the trials of n->todo, n->jobs at a time. */
static int
run_night (struct night *n, double budget_s, struct fm_err *err)
{
  uint64_t j;
  size_t running = 0;
  bool out_of_budget = false;

  n->slots = calloc (n->jobs, sizeof *n->slots);
  if (n->slots == NULL) {
    return fm_fail (err, "out of memory");
  }
  fd_catch_signals ();
  while (n->next < n->ntodo || running) {
    int status;
    pid_t pid;

    if (fd_interrupted) {
      /* Each child takes its disk down and records nothing; its log
       * is of no use: the trial runs again on --resume.
       */
      for (j = 0; j < n->jobs; j++)
        if (n->slots[j].pid > 0)
          kill (-n->slots[j].pid, SIGTERM);
      for (j = 0; j < n->jobs; j++)
        if (n->slots[j].pid > 0) {
          while (waitpid (n->slots[j].pid, NULL, 0) == -1 && errno == EINTR)
            ;
          unlink (n->slots[j].log);
          rmdir (n->slots[j].dir);
        }
      break;
    }
    if (budget_s > 0 && fd_now_s () - n->t0 >= budget_s)
      out_of_budget = true;
    for (j = 0; j < n->jobs && n->next < n->ntodo && !out_of_budget; j++)
      if (n->slots[j].pid == 0) {
        if (!next_startable (n))
          break;
        if (start (n, &n->slots[j], n->todo[n->next], err) == -1) {
          n->slots[j].pid = 0;
          break;
        }
        if (n->reuse)
          fd_reuse_started (n->reuse, n->todo[n->next], n->slots[j].pid);
        n->next++;
        running++;
      }
    if (running == 0)
      break;
    pid = waitpid (-1, &status, WNOHANG);
    if (pid > 0) {
      for (j = 0; j < n->jobs; j++)
        if (n->slots[j].pid == pid) {
          finished (n, &n->slots[j], status);
          running--;
        }
      continue;
    }
    {
      struct timespec ts = {0, 100 * 1000 * 1000};
      nanosleep (&ts, NULL);
    }
  }
  if (n->tty)
    fputc ('\n', stderr);
  free (n->slots);
  return out_of_budget && n->next < n->ntodo ? 1 : 0;
}

/* The newest night of the campaign in the database by time (db.h), or ""
 * if none.
 */
static void
newest_night (sqlite3 *db, const char *name, char *out, size_t len)
{
  sqlite3_stmt *st;

  out[0] = '\0';
  if (sqlite3_prepare_v2 (db,
                          "SELECT run_id FROM (" FD_DB_NIGHTS_SQL ") WHERE "
                          "campaign = ? ORDER BY " FD_DB_NIGHT_ORDER_DESC
                          " LIMIT 1",
                          -1, &st, NULL) != SQLITE_OK)
    return;
  sqlite3_bind_text (st, 1, name, -1, SQLITE_STATIC);
  if (sqlite3_step (st) == SQLITE_ROW)
    snprintf (out, len, "%s", (const char *)sqlite3_column_text (st, 0));
  sqlite3_finalize (st);
}

/* The night's name, first found of: --run-id, $FUTUREDISK_RUN_ID, the
 * Slurm array's job, with --resume the newest night in db, the time now.
 */
static const char *
night_id (const struct fd_night_opts *o, sqlite3 *db, const char *name,
          char *buf, size_t len)
{
  const char *env;
  time_t now;

  if (o->run_id)
    return o->run_id;
  if ((env = getenv ("FUTUREDISK_RUN_ID")) && *env)
    return env;
  if ((env = getenv ("SLURM_ARRAY_JOB_ID")) && *env) {
    snprintf (buf, len, "slurm-%.64s", env);
    return buf;
  }
  if (o->resume) {
    newest_night (db, name, buf, len);
    if (buf[0])
      return buf;
  }
  now = time (NULL);
  strftime (buf, len, "%Y-%m-%dT%H:%M:%SZ", gmtime (&now));
  return buf;
}

/* Name the night and find the trials of this shard it still lacks:
 * 0, or the exit code.
 */
static int
night_plan (const struct fd_night_opts *o, struct night *n)
{
  const char *name = fd_campaign_name (n->c);
  size_t i, total = fd_campaign_ntrials (n->c);
  struct fm_err err;
  sqlite3 *db;

  if (n->db_path == NULL) {
    snprintf (n->db_buf, sizeof n->db_buf, "%s.db", name);
    n->db_path = n->db_buf;
  }
  if ((db = fd_db_open (n->db_path, true, &err)) == NULL) {
    fprintf (stderr, "%s campaign: %s\n", fd_progname, err.msg);
    return 1;
  }
  n->run_id = night_id (o, db, name, n->run_buf, sizeof n->run_buf);
  for (i = o->shard_i; i < total; i += o->shard_n) {
    if (recorded (db, name, n->run_id, fd_campaign_trial (n->c, i)))
      n->done++;
    else
      n->todo[n->ntodo++] = i;
  }
  sqlite3_close (db);
  if (n->done && !o->resume) {
    fprintf (stderr,
             "%s campaign: night '%s' of %s already has %zu trials in %s: "
             "--resume finishes it, --run-id starts another\n",
             fd_progname, n->run_id, name, n->done, n->db_path);
    return 2;
  }
  fprintf (stderr,
           "%s campaign: %s, night %s: %zu trials (shard %" PRIu64 "/%" PRIu64
           ": %zu), %zu recorded before, %zu to run, %" PRIu64
           " at a time, into %s\n",
           fd_progname, name, n->run_id, total, o->shard_i, o->shard_n,
           n->done + n->ntodo, n->done, n->ntodo, n->jobs, n->db_path);
  return 0;
}

/* The binary the children run, their work directory and the bases
 * they share in it (unless no_reuse): 0, or 1.
 */
static int
night_prepare (struct night *n, bool no_reuse)
{
  struct fm_err err;
  /* The children run this very binary. */
  ssize_t len = readlink ("/proc/self/exe", n->self, sizeof n->self - 1);

  if (len < 0) {
    fprintf (stderr, "%s campaign: /proc/self/exe: %s\n", fd_progname,
             fd_strerror (errno));
    return 1;
  }
  n->self[len] = '\0';
  fd_scratch_template ("campaign", n->work, sizeof n->work);
  if (mkdtemp (n->work) == NULL) {
    fprintf (stderr, "%s campaign: mkdtemp: %s\n", fd_progname,
             fd_strerror (errno));
    return 1;
  }
  if (!no_reuse && (n->reuse = fd_reuse_new (n->work, n->c, n->todo, n->ntodo,
                                             &err)) == NULL) {
    fprintf (stderr, "%s campaign: %s\n", fd_progname, err.msg);
    rmdir (n->work);
    return 1;
  }
  return 0;
}

/* Sum the night up after run_night returned ret; the exit code. */
static int
night_end (struct night *n, int ret, const struct fm_err *err)
{
  const char *name = fd_campaign_name (n->c);

  if (ret == -1)
    fprintf (stderr, "%s campaign: %s\n", fd_progname, err->msg);
  if (n->reuse) {
    size_t cloned, bases;
    fd_reuse_counts (n->reuse, &cloned, &bases);
    fprintf (stderr,
             "%s campaign: %zu trials broke a clone of one of %zu populated "
             "disks\n",
             fd_progname, cloned, bases);
    fd_reuse_free (n->reuse);
  }
  rmdir (n->work); /* kept when a trial's log is kept */
  fprintf (stderr,
           "%s campaign: %s night %s: %zu of %zu trials run in %.0f s; %zu "
           "not recorded, %zu recorded with errors, %zu unmountable after "
           "the repair, %zu lost data; database %s\n",
           fd_progname, name, n->run_id, n->done, n->ntodo, fd_now_s () - n->t0,
           n->failed, n->recorded_errors, n->unmountable, n->lost_trials,
           n->db_path);
  if (n->failed)
    fprintf (stderr, "%s campaign: logs of the trials not recorded are in %s\n",
             fd_progname, n->work);
  if (fd_interrupted) {
    fprintf (stderr,
             "%s campaign: interrupted; the trials recorded are kept, "
             "--resume --run-id %s runs the rest\n",
             fd_progname, n->run_id);
    return 130;
  }
  if (ret == -1 || n->failed)
    return 1;
  if (ret == 1 || n->next < n->ntodo) {
    fprintf (stderr,
             "%s campaign: budget spent with %zu trials left: --resume "
             "--run-id %s runs them\n",
             fd_progname, n->ntodo - n->next, n->run_id);
    return 3;
  }
  return 0;
}

int
fd_night_run (const struct fd_night_opts *o, const struct fd_campaign *c)
{
  struct night n;
  struct fm_err err;
  int rc;

  memset (&n, 0, sizeof n);
  n.c = c;
  n.db_path = o->db;
  n.jobs = o->jobs;
  if ((n.todo = calloc (fd_campaign_ntrials (c) + 1, sizeof *n.todo)) == NULL)
    return 1;
  rc = night_plan (o, &n);
  if (rc == 0)
    rc = night_prepare (&n, o->no_reuse);
  if (rc == 0) {
    n.tty = isatty (2);
    n.t0 = fd_now_s ();
    n.done = 0;
    rc = night_end (&n, run_night (&n, (double)o->budget_ns / 1e9, &err), &err);
  }
  free (n.todo);
  return rc;
}
