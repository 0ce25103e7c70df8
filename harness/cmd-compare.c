/* futuredisk — harness: `futuredisk compare`, a night against the nights
 * before it.
 *
 * Per scenario (everything that defines a trial but its seed), three
 * regressions: an outcome class the baseline never showed (a checker
 * outcome, an audit class, after a crash a broken durability promise, an
 * error); a failure rate (data lost — after a crash, a promise broken —
 * recheck dirty, or an error) above the baseline's 95 % Wilson interval; a
 * median fsck time above the baseline's median by more than max(5 %,
 * 3 MAD).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faultmodels/units.h"
#include "append.h"
#include "commands.h"
#include "db.h"
#include "errmsg.h"
#include "options.h"
#include "report.h"
#include "robust.h"
#include "svg.h"

static void
compare_usage (FILE *fp)
{
  fprintf (fp,
           "Usage: %s compare DB [--campaign NAME] [--run-id ID] "
           "[--baseline N]\n"
           "                  [--junit FILE]\n"
           "Compare a campaign night (default: the newest) with the N "
           "nights before it\n(default 7), scenario by scenario: a new "
           "outcome class, a failure rate\nabove the baseline's Wilson "
           "interval, or an fsck time above the rolling\nmedian by more "
           "than max(5%%, 3 MAD) is a regression.\n"
           "\n"
           "  --junit FILE  also write JUnit XML (a test case per "
           "scenario)\n"
           "Exit status: 0 no regression, 1 regressions, 2 bad arguments "
           "or no data.\n",
           fd_progname);
}

/* The trials of one scenario in a set of nights. */
struct sample {
  double *check_s;
  size_t n, failures;
  char classes[2048]; /* " check:CLEAN audit:unreadable ..." */
};

/* Classes are kept as " a  b ", so " x " finds a whole one. */
static void
add_class (struct sample *s, const char *c)
{
  char word[96];

  snprintf (word, sizeof word, " %s ", c);
  if (strstr (s->classes, word) == NULL &&
      strlen (s->classes) + strlen (word) < sizeof s->classes)
    strcat (s->classes, word);
}

/* Fill s from the trials of scenario in the nights chosen by nights_sql,
 * an SQL condition in which ?2 is a and ?3 is b.
 */
static int
load (sqlite3 *db, const char *campaign, const char *scenario,
      const char *nights_sql, const char *a, int b, struct sample *s)
{
  char sql[2048];
  sqlite3_stmt *st;

  memset (s, 0, sizeof *s);
  snprintf (sql, sizeof sql,
            "SELECT check_s, coalesce(check_outcome, ''), "
            " coalesce(recheck_outcome, ''), error, broken, "
            /* After a crash only a broken promise is an outcome: what
             * was in flight may or may not be lost, night by night.
             */
            " CASE WHEN crash AND violations IS NOT NULL THEN CASE WHEN "
            "  violations > 0 THEN 'violation' END ELSE "
            " (SELECT group_concat('audit:' || class, ' ') FROM audit "
            "  WHERE trial_id = t.id AND files > 0 AND class NOT IN "
            "  ('intact', 'extra')) END "
            "FROM tb t WHERE campaign = ?1 AND scenario = ?4 AND %s",
            nights_sql);
  if (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_text (st, 1, campaign, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 2, a, -1, SQLITE_STATIC);
  sqlite3_bind_int (st, 3, b);
  sqlite3_bind_text (st, 4, scenario, -1, SQLITE_STATIC);
  while (sqlite3_step (st) == SQLITE_ROW) {
    const char *check = (const char *)sqlite3_column_text (st, 1);
    const char *recheck = (const char *)sqlite3_column_text (st, 2);
    const char *error = (const char *)sqlite3_column_text (st, 3);
    const char *audit = (const char *)sqlite3_column_text (st, 5);
    double *x = fd_append (&s->check_s, &s->n, sizeof *s->check_s);
    char word[64];
    bool failed;

    if (x == NULL)
      break;
    /* NAN: a trial that never got to its check */
    *x = sqlite3_column_type (st, 0) != SQLITE_NULL
             ? sqlite3_column_double (st, 0)
             : NAN;
    failed = (error && error[0]) || sqlite3_column_int64 (st, 4) > 0 ||
             (recheck && recheck[0] && strcmp (recheck, "CLEAN") != 0);
    s->failures += failed;
    if (check && check[0]) {
      snprintf (word, sizeof word, "check:%s", check);
      add_class (s, word);
    }
    if (recheck && recheck[0]) {
      snprintf (word, sizeof word, "recheck:%s", recheck);
      add_class (s, word);
    }
    if (error && error[0])
      add_class (s, "error");
    while (audit && *audit) {
      size_t len = strcspn (audit, " ");
      snprintf (word, sizeof word, "%.*s", (int)len, audit);
      add_class (s, word);
      audit += len;
      while (*audit == ' ')
        audit++;
    }
  }
  sqlite3_finalize (st);
  return 0;
}

/* The finite check times of s, for medians. */
static size_t
times (const struct sample *s, double *out)
{
  size_t i, n = 0;

  for (i = 0; i < s->n; i++)
    if (!isnan (s->check_s[i]))
      out[n++] = s->check_s[i];
  return n;
}

struct finding {
  char scenario[512];
  char why[1024]; /* empty: no regression */
  char note[256];
};

static void
compare_scenario (const struct sample *now, const struct sample *base,
                  struct finding *f)
{
  double *a = malloc ((now->n + 1) * sizeof *a);
  double *b = malloc ((base->n + 1) * sizeof *b);
  size_t na, nb;
  const char *w;
  double lo, hi, p;

  if (a == NULL || b == NULL) {
    free (a);
    free (b);
    return;
  }
  if (base->n == 0) {
    snprintf (f->note, sizeof f->note, "new scenario: no baseline");
    free (a);
    free (b);
    return;
  }
  /* 1. Outcome classes never seen in the baseline. */
  for (w = now->classes; *w;) {
    char word[96];
    size_t len;
    while (*w == ' ')
      w++;
    len = strcspn (w, " ");
    if (len == 0)
      break;
    snprintf (word, sizeof word, " %.*s ", (int)len, w);
    if (strstr (base->classes, word) == NULL &&
        strlen (f->why) + len + 40 < sizeof f->why)
      snprintf (f->why + strlen (f->why), sizeof f->why - strlen (f->why),
                "%snew outcome %.*s", f->why[0] ? "; " : "", (int)len, w);
    w += len;
  }
  /* 2. The failure rate against the baseline's interval. */
  fd_wilson (base->failures, base->n, 1.96, &lo, &hi);
  p = now->n ? (double)now->failures / now->n : 0;
  if (p > hi)
    snprintf (f->why + strlen (f->why), sizeof f->why - strlen (f->why),
              "%sfailure rate %zu/%zu = %.0f%% above the baseline's %zu/%zu "
              "(95%% interval %.0f-%.0f%%)",
              f->why[0] ? "; " : "", now->failures, now->n, 100 * p,
              base->failures, base->n, 100 * lo, 100 * hi);
  else if (p < lo)
    snprintf (f->note, sizeof f->note,
              "failure rate %zu/%zu below the baseline's interval "
              "(%.0f-%.0f%%)",
              now->failures, now->n, 100 * lo, 100 * hi);
  /* 3. fsck time against the rolling median. */
  na = times (now, a);
  nb = times (base, b);
  if (na && nb) {
    double m = fd_median (b, nb), mad = fd_mad (b, nb), x = fd_median (a, na);
    double limit = m + fmax (0.05 * m, 3 * mad);
    if (x > limit)
      snprintf (f->why + strlen (f->why), sizeof f->why - strlen (f->why),
                "%sfsck time %.3g s above the baseline's median %.3g s + "
                "max(5%%, 3 MAD %.3g s) = %.3g s",
                f->why[0] ? "; " : "", x, m, mad, limit);
  }
  free (a);
  free (b);
}

struct compare_opts {
  const char *db, *campaign, *junit;
  char run_id[96]; /* "": the newest night */
  uint64_t nbase;
};

static int
compare_set (void *vo, int c, const char *arg, struct fm_err *err)
{
  struct compare_opts *o = vo;

  switch (c) {
    case 'c':
      o->campaign = arg;
      return 0;
    case 'r':
      snprintf (o->run_id, sizeof o->run_id, "%s", arg);
      return 0;
    case 'b':
      return fm_parse_uint ("--baseline", arg, 1, 1000, &o->nbase, err);
    case 'j':
      o->junit = arg;
      return 0;
  }
  return fm_fail (err, "unhandled option");
}

static const struct option compare_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"campaign", required_argument, NULL, 'c'},
    {"run-id", required_argument, NULL, 'r'},
    {"baseline", required_argument, NULL, 'b'},
    {"junit", required_argument, NULL, 'j'},
    {NULL, 0, NULL, 0},
};

static const struct fd_cmd_opts compare_cmd = {"compare", compare_options,
                                               compare_usage, compare_set};

static int
compare_parse (int argc, char **argv, struct compare_opts *o)
{
  int first, rc;

  *o = (struct compare_opts){.nbase = 7};
  rc = fd_options_parse (&compare_cmd, argc, argv, o, &first);
  if (rc != FD_OPTS_RUN)
    return rc;
  if (first + 1 != argc) {
    fd_usage_error ("compare", "one database DB is required");
    compare_usage (stderr);
    return FD_OPTS_BAD;
  }
  o->db = argv[first];
  return FD_OPTS_RUN;
}

/* The scenarios of the night, each against the baseline. */
struct findings {
  struct finding *f;
  size_t n, regressions;
};

/* The night's position among the campaign's nights (0 if not found),
 * and a temporary table of them all for the baseline's query; -1 on an
 * SQL error.
 */
static int
night_position (sqlite3 *db, const char *name, const char *run_id)
{
  sqlite3_stmt *st;
  int pos = 0;

  /* Nights in the order they began; the baseline is the nbase before. */
  if (sqlite3_exec (db,
                    "CREATE TEMP TABLE nights AS SELECT campaign, run_id, "
                    "row_number() OVER (PARTITION BY campaign ORDER BY "
                    "min(id)) AS pos FROM trials GROUP BY campaign, run_id",
                    NULL, NULL, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2 (db,
                          "SELECT pos FROM nights WHERE campaign = ? AND "
                          "run_id = ?",
                          -1, &st, NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_text (st, 1, name, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 2, run_id, -1, SQLITE_STATIC);
  if (sqlite3_step (st) == SQLITE_ROW)
    pos = sqlite3_column_int (st, 0);
  sqlite3_finalize (st);
  return pos;
}

/* One scenario of the night against the same in the nbase nights before
 * the one at night_pos.
 */
static void
compare_one (sqlite3 *db, const char *name, const char *run_id,
             const char *scenario, uint64_t nbase, int night_pos,
             struct finding *fi)
{
  struct sample now, base;
  char cond[256];

  snprintf (fi->scenario, sizeof fi->scenario, "%s", scenario);
  load (db, name, scenario, "run_id = ?2 AND ?3 = ?3", run_id, 0, &now);
  snprintf (cond, sizeof cond,
            "run_id IN (SELECT n.run_id FROM nights n WHERE n.campaign = "
            "?1 AND n.pos < ?3 AND n.pos >= ?3 - %d) AND ?2 = ?2",
            (int)nbase);
  load (db, name, scenario, cond, "", night_pos, &base);
  compare_scenario (&now, &base, fi);
  free (now.check_s);
  free (base.check_s);
}

/* Every scenario of the night into out; -1 if they cannot be listed. */
static int
compare_night (sqlite3 *db, const char *name, const char *run_id,
               uint64_t nbase, int night_pos, struct findings *out)
{
  sqlite3_stmt *st;

  if (sqlite3_prepare_v2 (db,
                          "SELECT DISTINCT scenario FROM t WHERE campaign = ? "
                          "AND run_id = ? ORDER BY scenario",
                          -1, &st, NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_text (st, 1, name, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 2, run_id, -1, SQLITE_STATIC);
  while (sqlite3_step (st) == SQLITE_ROW) {
    struct finding *fi = fd_append (&out->f, &out->n, sizeof *out->f);
    if (fi == NULL)
      break;
    compare_one (db, name, run_id, (const char *)sqlite3_column_text (st, 0),
                 nbase, night_pos, fi);
    out->regressions += fi->why[0] != '\0';
  }
  sqlite3_finalize (st);
  return 0;
}

static void
compare_print (const char *name, const char *run_id, uint64_t nbase,
               const struct findings *fs)
{
  size_t i;

  printf ("%s night %s against up to %" PRIu64 " nights before it: %zu "
          "scenarios, %zu regressions\n",
          name[0] ? name : "(no campaign)", run_id[0] ? run_id : "(none)",
          nbase, fs->n, fs->regressions);
  for (i = 0; i < fs->n; i++) {
    if (fs->f[i].why[0])
      printf ("REGRESSION  %s\n            %s\n", fs->f[i].scenario,
              fs->f[i].why);
    else if (fs->f[i].note[0])
      printf ("note        %s\n            %s\n", fs->f[i].scenario,
              fs->f[i].note);
  }
}

/* JUnit XML, a test case per scenario, for CI dashboards: 0, or -1 with
 * errno.
 */
static int
compare_junit (const char *path, const char *name, const char *run_id,
               const struct findings *fs)
{
  FILE *fp = fopen (path, "w");
  size_t i;

  if (fp == NULL)
    return -1;
  fprintf (fp, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<testsuite name=\"futuredisk compare ");
  fd_html (fp, name);
  fprintf (fp, " ");
  fd_html (fp, run_id);
  fprintf (fp, "\" tests=\"%zu\" failures=\"%zu\">\n", fs->n, fs->regressions);
  for (i = 0; i < fs->n; i++) {
    fprintf (fp, "  <testcase classname=\"");
    fd_html (fp, name);
    fprintf (fp, "\" name=\"");
    fd_html (fp, fs->f[i].scenario);
    fprintf (fp, "\">");
    if (fs->f[i].why[0]) {
      fprintf (fp, "<failure message=\"");
      fd_html (fp, fs->f[i].why);
      fprintf (fp, "\"/>");
    } else if (fs->f[i].note[0]) {
      fprintf (fp, "<system-out>");
      fd_html (fp, fs->f[i].note);
      fprintf (fp, "</system-out>");
    }
    fprintf (fp, "</testcase>\n");
  }
  fprintf (fp, "</testsuite>\n");
  return fclose (fp);
}

int
cmd_compare (int argc, char **argv)
{
  struct compare_opts o;
  struct findings fs = {NULL, 0, 0};
  char name[96];
  struct fm_err err;
  sqlite3 *db;
  int rc, night_pos;

  rc = compare_parse (argc, argv, &o);
  if (rc != FD_OPTS_RUN)
    return rc;
  if ((db = fd_report_open (o.db, o.campaign, name, sizeof name, o.run_id,
                            sizeof o.run_id, &err)) == NULL) {
    fprintf (stderr, "%s compare: %s\n", fd_progname, err.msg);
    return 2;
  }
  if ((night_pos = night_position (db, name, o.run_id)) == -1) {
    fprintf (stderr, "%s compare: %s\n", fd_progname, sqlite3_errmsg (db));
    sqlite3_close (db);
    return 2;
  }
  rc = compare_night (db, name, o.run_id, o.nbase, night_pos, &fs);
  sqlite3_close (db);
  if (rc == -1)
    return 2;
  compare_print (name, o.run_id, o.nbase, &fs);
  if (o.junit && compare_junit (o.junit, name, o.run_id, &fs) != 0) {
    fprintf (stderr, "%s compare: %s: %s\n", fd_progname, o.junit,
             fd_strerror (errno));
    free (fs.f);
    return 2;
  }
  free (fs.f);
  return fs.regressions ? 1 : 0;
}
