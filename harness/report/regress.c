/* futuredisk — harness: a night's regressions (see regress.h). */
#include <math.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "append.h"
#include "regress.h"
#include "robust.h"

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

/* The classes of one trial's row (see load's query) into s. */
static void
add_trial_classes (struct sample *s, sqlite3_stmt *st)
{
  const char *check = (const char *)sqlite3_column_text (st, 1);
  const char *recheck = (const char *)sqlite3_column_text (st, 2);
  const char *error = (const char *)sqlite3_column_text (st, 3);
  const char *audit = (const char *)sqlite3_column_text (st, 5);
  const char *mount = (const char *)sqlite3_column_text (st, 6);
  char word[64];

  if (check && check[0]) {
    snprintf (word, sizeof word, "check:%s", check);
    add_class (s, word);
  }
  if (recheck && recheck[0]) {
    snprintf (word, sizeof word, "recheck:%s", recheck);
    add_class (s, word);
  }
  /* A mount is news only when it did not simply work: trials recorded
   * before the mount outcome was kept have none.
   */
  if (mount && mount[0] && strcmp (mount, "MOUNTED") != 0) {
    snprintf (word, sizeof word, "mount:%s", mount);
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
            "  ('intact', 'extra')) END, mount "
            "FROM tb t WHERE campaign = ?1 AND scenario = ?4 AND %s",
            nights_sql);
  if (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_text (st, 1, campaign, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 2, a, -1, SQLITE_STATIC);
  sqlite3_bind_int (st, 3, b);
  sqlite3_bind_text (st, 4, scenario, -1, SQLITE_STATIC);
  while (sqlite3_step (st) == SQLITE_ROW) {
    const char *error = (const char *)sqlite3_column_text (st, 3);
    const char *recheck = (const char *)sqlite3_column_text (st, 2);
    const char *mount = (const char *)sqlite3_column_text (st, 6);
    double *x = fd_append (&s->check_s, &s->n, sizeof *s->check_s);

    if (x == NULL)
      break;
    /* NAN: a trial that never got to its check */
    *x = sqlite3_column_type (st, 0) != SQLITE_NULL
             ? sqlite3_column_double (st, 0)
             : NAN;
    s->failures += (error && error[0]) || sqlite3_column_int64 (st, 4) > 0 ||
                   (recheck && recheck[0] && strcmp (recheck, "CLEAN") != 0) ||
                   (mount && strcmp (mount, "UNMOUNTABLE") == 0);
    add_trial_classes (s, st);
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

/* Append "; " (unless first) and the formatted text to f->why. */
static void __attribute__ ((format (printf, 2, 3)))
why (struct fd_finding *f, const char *fmt, ...)
{
  size_t len = strlen (f->why);
  va_list ap;

  if (len && len + 2 < sizeof f->why)
    len += (size_t)snprintf (f->why + len, sizeof f->why - len, "; ");
  va_start (ap, fmt);
  if (len < sizeof f->why)
    vsnprintf (f->why + len, sizeof f->why - len, fmt, ap);
  va_end (ap);
}

/* 1. Outcome classes never seen in the baseline. */
static void
new_classes (const struct sample *now, const struct sample *base,
             struct fd_finding *f)
{
  const char *w;

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
      why (f, "new outcome %.*s", (int)len, w);
    w += len;
  }
}

static void
compare_scenario (const struct sample *now, const struct sample *base,
                  struct fd_finding *f)
{
  double *a = malloc ((now->n + 1) * sizeof *a);
  double *b = malloc ((base->n + 1) * sizeof *b);
  size_t na, nb;
  double lo, hi, p;

  if (a == NULL || b == NULL || base->n == 0) {
    if (base->n == 0)
      snprintf (f->note, sizeof f->note, "new scenario: no baseline");
    free (a);
    free (b);
    return;
  }
  new_classes (now, base, f);
  /* 2. The failure rate against the baseline's interval. */
  fd_wilson (base->failures, base->n, 1.96, &lo, &hi);
  p = now->n ? (double)now->failures / now->n : 0;
  if (p > hi)
    why (f,
         "failure rate %zu/%zu = %.0f%% above the baseline's %zu/%zu "
         "(95%% interval %.0f-%.0f%%)",
         now->failures, now->n, 100 * p, base->failures, base->n, 100 * lo,
         100 * hi);
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
      why (f,
           "fsck time %.3g s above the baseline's median %.3g s + "
           "max(5%%, 3 MAD %.3g s) = %.3g s",
           x, m, mad, limit);
  }
  free (a);
  free (b);
}

/* The night's position among the campaign's nights (0 if not found),
 * and a temporary table of them all for the baseline's query; -1 on an
 * SQL error.
 */
static int
night_position (sqlite3 *db, const char *name, const char *run_id)
{
  sqlite3_stmt *st;
  int pos = 0;

  /* Nights in the order they began; the baseline is the nbase before.
   * Kept for the connection: a report asks for several nights.
   */
  if (sqlite3_exec (db,
                    "CREATE TEMP TABLE IF NOT EXISTS nights AS SELECT "
                    "campaign, run_id, row_number() OVER (PARTITION BY "
                    "campaign ORDER BY min(id)) AS pos FROM trials GROUP BY "
                    "campaign, run_id",
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
             const char *scenario, unsigned nbase, int night_pos,
             struct fd_finding *fi)
{
  struct sample now, base;
  char cond[256];

  snprintf (fi->scenario, sizeof fi->scenario, "%s", scenario);
  load (db, name, scenario, "run_id = ?2 AND ?3 = ?3", run_id, 0, &now);
  snprintf (cond, sizeof cond,
            "run_id IN (SELECT n.run_id FROM nights n WHERE n.campaign = "
            "?1 AND n.pos < ?3 AND n.pos >= ?3 - %u) AND ?2 = ?2",
            nbase);
  load (db, name, scenario, cond, "", night_pos, &base);
  compare_scenario (&now, &base, fi);
  free (now.check_s);
  free (base.check_s);
}

int
fd_regress_night (sqlite3 *db, const char *campaign, const char *run_id,
                  unsigned nbase, struct fd_findings *out, struct fm_err *err)
{
  sqlite3_stmt *st;
  int pos;

  memset (out, 0, sizeof *out);
  if ((pos = night_position (db, campaign, run_id)) == -1 ||
      sqlite3_prepare_v2 (db,
                          "SELECT scenario, min(id) FROM t WHERE campaign = ? "
                          "AND run_id = ? GROUP BY scenario ORDER BY scenario",
                          -1, &st, NULL) != SQLITE_OK)
    return fm_fail (err, "%s", sqlite3_errmsg (db));
  sqlite3_bind_text (st, 1, campaign, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 2, run_id, -1, SQLITE_STATIC);
  while (sqlite3_step (st) == SQLITE_ROW) {
    struct fd_finding *fi = fd_append (&out->f, &out->n, sizeof *out->f);
    if (fi == NULL)
      break;
    memset (fi, 0, sizeof *fi);
    fi->first_trial = sqlite3_column_int64 (st, 1);
    compare_one (db, campaign, run_id,
                 (const char *)sqlite3_column_text (st, 0), nbase, pos, fi);
    out->regressions += fi->why[0] != '\0';
  }
  sqlite3_finalize (st);
  return 0;
}

void
fd_findings_free (struct fd_findings *fs)
{
  free (fs->f);
  memset (fs, 0, sizeof *fs);
}
