/* futuredisk — harness: the report's charted sections: fsck time per
 * disk generation, per-pass times, files lost per fault spec, crash
 * trials and points, power cuts during repair, fsck or restore, the
 * escalations, and the trend over nights (inline SVG, svg.h).
 */
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>

#include "append.h"
#include "commands.h"
#include "db.h"
#include "errmsg.h"
#include "evidence.h"
#include "options.h"
#include "regress.h"
#include "report.h"
#include "robust.h"
#include "report-int.h"
#include "svg.h"

/* The trials that measure fsck time: no target, no faults, no crash. */
#define PLAIN "target = '' AND faults IN ('', 'none') AND crash = 0"

/* The generations' medians as a table: a row per disk, a column per
 * file system, each cell its time and (in brackets) its trials.
 */
static void
generations_table (FILE *fp, const struct strs *fs, const struct strs *disks,
                   const double *val, const size_t *cnt)
{
  char buf[64];
  size_t i, j;

  fputs ("<table class=\"fd-table\"><thead><tr><th>disk</th>", fp);
  for (i = 0; i < fs->n; i++) {
    fputs ("<th class=\"num\">", fp);
    fd_html (fp, fs->v[i]);
    fputs ("</th>", fp);
  }
  fputs ("</tr></thead><tbody>\n", fp);
  for (j = 0; j < disks->n; j++) {
    fputs ("<tr><td>", fp);
    fd_html (fp, disks->v[j]);
    fputs ("</td>", fp);
    for (i = 0; i < fs->n; i++) {
      double v = val[i * disks->n + j];
      if (isnan (v)) {
        fputs ("<td class=\"num\">-</td>", fp);
        continue;
      }
      fprintf (fp,
               "<td class=\"num\" data-v=\"%.17g\">%s <small>(%zu)</small>"
               "</td>",
               v, fd_fmt_secs (buf, sizeof buf, v), cnt[i * disks->n + j]);
    }
    fputs ("</tr>\n", fp);
  }
  fputs ("</tbody></table>\n", fp);
}

/* 1. fsck time per disk generation, one line per file system. */
void
rp_section_generations (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  sqlite3_stmt *st = rp_prepare (
      db,
      "SELECT fs || ', ' || load, disk, disk_bytes, check_s FROM t "
      "WHERE campaign = ?1 AND run_id = ?2 AND check_s IS NOT NULL AND " PLAIN
      " ORDER BY 3, 2, 1",
      c, r);
  struct strs fs = {0}, disks = {0};
  struct groups gs = {0};
  double *val = NULL;
  size_t *cnt = NULL, i;

  fputs ("<h2 id=\"generations\">fsck time by disk generation</h2>\n"
         "<p>The read-only check's time on the emulated disk's virtual "
         "clock (median over seeds) for trials with no faults: the "
         "workshop's question, measured.</p>\n",
         fp);
  rp_grid_from (st, &fs, &disks, 3, &gs);
  if (gs.n == 0) {
    fputs ("<p class=\"none\">No trials without faults in this night.</p>\n",
           fp);
    goto out;
  }
  val = rp_groups_medians (&gs, fs.n, disks.n, NAN);
  cnt = calloc (fs.n * disks.n, sizeof *cnt);
  if (val == NULL || cnt == NULL)
    goto out;
  for (i = 0; i < gs.n; i++)
    cnt[gs.g[i].a * disks.n + gs.g[i].b] = gs.g[i].n;
  {
    struct fd_series *series = calloc (fs.n, sizeof *series);
    if (series) {
      for (i = 0; i < fs.n; i++) {
        series[i].name = fs.v[i];
        series[i].y = val + i * disks.n;
      }
      fd_svg_lines (fp, "fsck time by disk generation (median over seeds)", "s",
                    (const char *const *)disks.v, disks.n, series, fs.n, NULL,
                    NULL);
      free (series);
    }
  }
  generations_table (fp, &fs, &disks, val, cnt);
out:
  rp_groups_free (&gs);
  free (val);
  free (cnt);
  rp_strs_free (&fs);
  rp_strs_free (&disks);
}

/* 2. Per-pass times as stacked bars, one bar per file system and disk. */
void
rp_section_passes (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  sqlite3_stmt *st = rp_prepare (
      db,
      "SELECT t.fs || ' ' || t.disk || ', ' || t.load, ps.pass, "
      " avg(ps.seconds / nullif(tot.s, 0) * t.check_s), max(t.disk_bytes) "
      "FROM t JOIN passes ps ON ps.trial_id = t.id AND ps.phase = 'check' "
      "JOIN (SELECT trial_id, sum(seconds) AS s FROM passes "
      "      WHERE phase = 'check' GROUP BY trial_id) tot "
      "  ON tot.trial_id = t.id "
      "WHERE t.campaign = ?1 AND t.run_id = ?2 AND " PLAIN
      " GROUP BY 1, 2 ORDER BY t.fs, 4, 1, 2",
      c, r);
  struct strs bars = {0}, segs = {0};
  struct groups gs = {0};
  double *v = NULL;

  fputs ("<h2 id=\"passes\">Where the check spends its time</h2>\n"
         "<p>Each pass's share of the time the checker reports for itself "
         "(e2fsck -tt, xfs_repair -v), scaled to the check's virtual time; "
         "mean over seeds.  btrfs check does not time its passes.</p>\n",
         fp);
  rp_grid_from (st, &bars, &segs, 2, &gs);
  /* 0 for a pass a checker did not run */
  if (gs.n && (v = rp_groups_medians (&gs, bars.n, segs.n, 0)) != NULL) {
    fd_svg_bars (fp, "check time per pass, on the virtual clock", "s",
                 (const char *const *)bars.v, bars.n,
                 (const char *const *)segs.v, segs.n, v);
  } else
    fputs ("<p class=\"none\">No pass times in this night.</p>\n", fp);
  free (v);
  rp_groups_free (&gs);
  rp_strs_free (&bars);
  rp_strs_free (&segs);
}

/* 4. Data lost per fault spec: files per audit class, mean per trial. */
void
rp_section_loss (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  static const char *const classes[] = {"lost_found", "partial", "corrupted",
                                        "unreadable", "missing", "link_lost"};
  const size_t ncls = sizeof classes / sizeof classes[0];
  sqlite3_stmt *st = rp_prepare (
      db,
      "SELECT t.fs || ' | ' || CASE WHEN t.faults = '' THEN 'no faults' "
      " ELSE t.faults END || CASE WHEN t.crash THEN ' | crash' ELSE '' END, "
      " a.class, avg(a.files) FROM t JOIN audit a ON a.trial_id = t.id "
      "WHERE t.campaign = ?1 AND t.run_id = ?2 AND t.ttype = '' "
      " AND t.meta_only = 0 GROUP BY 1, 2 ORDER BY 1",
      c, r);
  struct strs bars = {0};
  double *v = NULL;
  struct groups gs = {0};
  size_t k, b;

  fputs ("<h2 id=\"loss\">Files lost per fault spec</h2>\n"
         "<p>The audit's classes of damaged files, mean per trial, for "
         "trials with written data and no targeted block (fault rates, "
         "crashes, and none for comparison).</p>\n",
         fp);
  while (st && sqlite3_step (st) == SQLITE_ROW) {
    b = rp_strs_index (&bars, rp_col (st, 0));
    for (k = 0; k < ncls && strcmp (rp_col (st, 1), classes[k]); k++)
      ;
    if (b == (size_t)-1 ||
        (k < ncls &&
         rp_groups_add (&gs, b, k, sqlite3_column_double (st, 2)) == -1))
      break;
  }
  sqlite3_finalize (st);
  if (bars.n && (v = rp_groups_medians (&gs, bars.n, ncls, 0)) != NULL)
    fd_svg_bars (fp, "files lost per fault spec, mean per trial", "files",
                 (const char *const *)bars.v, bars.n, classes, ncls, v);
  else
    fputs ("<p class=\"none\">No audited untargeted trials in this "
           "night.</p>\n",
           fp);
  free (v);
  rp_groups_free (&gs);
  rp_strs_free (&bars);
}

/* Crash trials: the promises kept and broken per file system, and the
 * persistence patterns whose promises broke.
 */
void
rp_section_crash (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  sqlite3_stmt *st = rp_prepare (
      db,
      "SELECT fs || ', ' || disk || ', ' || load || CASE WHEN faults IN "
      "('', 'none') THEN '' ELSE ', ' || faults END, count(*), "
      " sum(violations > 0), avg(violations), avg(allowed), "
      " avg((SELECT files FROM durability d WHERE d.trial_id = t.id AND "
      "  d.class = 'inflight_survived')), "
      " avg((SELECT files FROM durability d WHERE d.trial_id = t.id AND "
      "  d.class = 'durable_intact')), "
      " (SELECT group_concat(how || ' ' || n, ', ') FROM (SELECT "
      "  json_extract(v.value, '$.how') AS how, count(*) AS n FROM t u "
      "  JOIN trials x ON x.id = u.id, json_each(x.record, "
      "  '$.durability.violations') v WHERE u.campaign = ?1 AND u.run_id = "
      "  ?2 AND u.crash AND u.scenario = t.scenario GROUP BY 1 ORDER BY 2 "
      "  DESC)) FROM t WHERE campaign = ?1 AND run_id = ?2 AND crash AND "
      " violations IS NOT NULL GROUP BY scenario ORDER BY 1",
      c, r);
  static const char *const heads[] = {"scenario",
                                      "trials",
                                      "with violations",
                                      "violations",
                                      "in flight, lost (allowed)",
                                      "in flight, survived",
                                      "durable, intact",
                                      "violations by pattern"};

  fputs ("<h2 id=\"crash\">Crash trials: promises kept and broken</h2>\n"
         "<p>After a power cut, a file the populate made durable (fsync of "
         "the file and its directories, fdatasync after an append, sync, an "
         "atomic rename) must come back as it was promised; losing it is a "
         "<b>violation</b>.  What was still in flight may be lost: "
         "<i>allowed</i>.  Means per trial.</p>\n",
         fp);
  rp_query_table (fp, st, "tnnfffft", heads,
                  "No audited crash trials in this night.");
}

/* Crash points: per scenario, the points checked and those at which a
 * durability promise broke.
 */
void
rp_section_crash_points (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  sqlite3_stmt *st = rp_prepare (
      db,
      "SELECT u.fs || ', ' || u.disk || ', ' || u.load || CASE WHEN u.faults "
      " IN ('', 'none') THEN '' ELSE ', ' || u.faults END, "
      " count(DISTINCT u.id), count(*), "
      " sum(json_extract(p.value, '$.durable_broken') > 0), "
      " sum(json_extract(p.value, '$.durable_broken')), "
      " sum(json_extract(p.value, '$.error') != ''), "
      " sum(json_extract(p.value, '$.cache_writes') > 0) "
      "FROM t u JOIN trials x ON x.id = u.id, "
      " json_each(x.record, '$.crash_points.points') p "
      "WHERE u.campaign = ?1 AND u.run_id = ?2 GROUP BY 1 ORDER BY 1",
      c, r);
  static const char *const heads[] = {"scenario",
                                      "trials",
                                      "points",
                                      "points that broke a promise",
                                      "files",
                                      "points in error",
                                      "with cached writes"};

  fputs ("<h2 id=\"crash-points\">Crash points</h2>\n"
         "<p>The crash workload's writes logged once, the disk rebuilt at "
         "flushes spread over them (some with a seeded subset of the writes "
         "a volatile cache held after the flush) and each state checked, "
         "repaired and audited against the promises made by then.</p>\n",
         fp);
  rp_query_table (fp, st, "tnnnnnn", heads, "No crash points this night.");
}

/* Power cuts during repair: per file system and scenario, each cut
 * point's outcomes and the files lost against the same trial (seed)
 * repaired without a cut in the same night.
 */
void
rp_section_repair_cut (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  sqlite3_stmt *st = rp_prepare (
      db,
      "SELECT k.fs || ', ' || k.disk || ', ' || k.load || CASE WHEN k.crash "
      " THEN ', crash' ELSE '' END || CASE WHEN k.faults IN ('', 'none') THEN "
      " '' ELSE ', ' || k.faults END || CASE WHEN k.target = '' THEN '' ELSE "
      " ', ' || k.target END, k.repair_cut, count(*), "
      " sum(k.cut_outcome = 'recovered'), "
      " sum(k.cut_outcome = 'needs-another-repair'), "
      " sum(k.cut_outcome = 'unrecoverable'), "
      " sum(k.cut_outcome = 'not-reached'), "
      " avg((SELECT u.intact FROM t u WHERE u.campaign = k.campaign AND "
      "  u.run_id = k.run_id AND u.repair_cut = 0 AND u.fs = k.fs AND "
      "  u.profile = k.profile AND u.size = k.size AND u.faults = k.faults "
      "  AND u.target = k.target AND u.crash = k.crash AND u.seed = k.seed "
      "  ORDER BY u.id DESC LIMIT 1) - coalesce(k.intact, 0)) "
      "FROM t k WHERE k.campaign = ?1 AND k.run_id = ?2 AND k.repair_cut > 0 "
      "GROUP BY 1, 2 ORDER BY 1, 2",
      c, r);
  static const char *const heads[] = {
      "scenario",    "cut after write",      "trials",
      "recovered",   "needs another repair", "unrecoverable",
      "not reached", "files lost vs uncut"};

  fputs ("<h2 id=\"repair-cut\">Power cuts during repair</h2>\n"
         "<p>The power goes after the repair's Kth write; when it is back "
         "the checker repairs again, and once more if the recheck is not "
         "clean (Gatla et al., FAST'18).  Files lost: against the same trial "
         "repaired without a cut this night, mean per trial.</p>\n",
         fp);
  rp_query_table (fp, st, "tnnnnnn?", heads, "No repair was cut this night.");
}

/* One line per label over the nights: the median of the query's values
 * (label, run_id, value) per label and night.
 */
static void
trend_chart (FILE *fp, sqlite3 *db, const char *c, const char *sql,
             const struct strs *nights, const bool *changed, const char *title,
             const char *unit)
{
  sqlite3_stmt *st = rp_prepare (db, sql, c, NULL);
  struct strs lines = {0};
  struct groups gs = {0};
  struct fd_series *series = NULL;
  double *m = NULL;
  size_t i;

  while (st && sqlite3_step (st) == SQLITE_ROW) {
    size_t l, nn;
    for (nn = 0; nn < nights->n && strcmp (nights->v[nn], rp_col (st, 1)); nn++)
      ;
    if (nn == nights->n)
      continue;
    if ((l = rp_strs_index (&lines, rp_col (st, 0))) == (size_t)-1 ||
        rp_groups_add (&gs, l, nn, sqlite3_column_double (st, 2)) == -1)
      break;
  }
  sqlite3_finalize (st);
  if (lines.n && (m = rp_groups_medians (&gs, lines.n, nights->n, NAN)) &&
      (series = calloc (lines.n, sizeof *series))) {
    for (i = 0; i < lines.n; i++)
      series[i].name = lines.v[i], series[i].y = m + i * nights->n;
    fd_svg_lines (fp, title, unit, (const char *const *)nights->v, nights->n,
                  series, lines.n, changed, "new environment");
  }
  free (series);
  free (m);
  rp_groups_free (&gs);
  rp_strs_free (&lines);
}

/* The environments (kernel, tool and drive model versions) a night's
 * trials ran with, one "; "-separated string into buf; the host is left
 * out, as the shards of one night run on several.  "" when not recorded.
 */
static void
night_env (sqlite3 *db, const char *c, const char *r, char *buf, size_t n)
{
  sqlite3_stmt *st;

  buf[0] = '\0';
  if (!rp_has_table (db, "environments"))
    return;
  st = rp_prepare (
      db,
      "SELECT group_concat(v, '; ') FROM (SELECT DISTINCT "
      " 'kernel ' || e.kernel || ', futuredisk ' || e.futuredisk || "
      " ', nbdkit ' || e.nbdkit || ', e2fsprogs ' || e.e2fsprogs || "
      " ', xfsprogs ' || e.xfsprogs || ', btrfs-progs ' || "
      " e.btrfs_progs || ', drive model ' || t.model_version AS v "
      " FROM t JOIN environments e ON "
      " e.id = t.env_id WHERE t.campaign = ?1 AND t.run_id = ?2 "
      " ORDER BY 1)",
      c, r);
  if (st && sqlite3_step (st) == SQLITE_ROW)
    snprintf (buf, n, "%s", rp_col (st, 0));
  sqlite3_finalize (st);
}

/* The campaign's last 30 nights, oldest first, as a time axis reads. */
static void
last_nights (sqlite3 *db, const char *c, struct strs *nights)
{
  sqlite3_stmt *st =
      rp_prepare (db,
                  "SELECT run_id FROM (" FD_DB_NIGHTS_SQL ") WHERE "
                  "campaign = ?1 ORDER BY " FD_DB_NIGHT_ORDER_DESC " LIMIT 30",
                  c, NULL);
  size_t i;

  while (st && sqlite3_step (st) == SQLITE_ROW)
    rp_strs_index (nights, rp_col (st, 0));
  sqlite3_finalize (st);
  for (i = 0; i < nights->n / 2; i++) {
    char *x = nights->v[i];
    nights->v[i] = nights->v[nights->n - 1 - i];
    nights->v[nights->n - 1 - i] = x;
  }
}

/* One night's row of the trend table: its counts, its regressions
 * against the 7 nights before it (as `futuredisk compare` says), its
 * environment, flagged where it differs from the night before's.
 */
static void
night_row (FILE *fp, sqlite3 *db, const char *c, const char *night,
           const char *env, bool changed)
{
  sqlite3_stmt *st = rp_prepare (db,
                                 "SELECT count(*), sum(finding != ''), "
                                 " sum(error != '') FROM tb WHERE "
                                 " campaign = ?1 AND run_id = ?2",
                                 c, night);
  struct fd_findings fs;
  struct fm_err err;
  int k;

  fputs ("<tr><td>", fp);
  fd_html (fp, night);
  fputs ("</td>", fp);
  if (st && sqlite3_step (st) == SQLITE_ROW)
    for (k = 0; k < 3; k++)
      rp_cell (fp, st, k, 'n');
  sqlite3_finalize (st);
  if (fd_regress_night (db, c, night, 7, &fs, &err) == 0)
    fprintf (fp, "<td class=\"num\" data-v=\"%zu\">%zu</td>", fs.regressions,
             fs.regressions);
  else
    fputs ("<td class=\"num\">?</td>", fp);
  fd_findings_free (&fs);
  fprintf (fp, "<td>%s", changed ? "<b class=\"changed\">changed:</b> " : "");
  fd_html (fp, env[0] ? env : "not recorded");
  fputs ("</td></tr>\n", fp);
}

/* 5. Night over night: fsck time and the share of trials with a
 * finding, the environment's changes marked; and a row per night.
 */
void
rp_section_trends (FILE *fp, sqlite3 *db, const char *c)
{
  static const char *const heads[] = {"night",       "trials",
                                      "findings",    "rig errors",
                                      "regressions", "environment"};
  struct strs nights = {0};
  char prev[1024] = "", env[1024];
  bool *changed;
  size_t i;

  fputs ("<h2 id=\"trend\">Night over night</h2>\n", fp);
  last_nights (db, c, &nights);
  if (nights.n < 2 || (changed = calloc (nights.n, sizeof *changed)) == NULL) {
    fputs ("<p class=\"none\">One night so far: trends start with the "
           "second.</p>\n",
           fp);
    rp_strs_free (&nights);
    return;
  }
  fputs ("<p>The campaign's last nights, oldest first.  A dashed line "
         "marks a night whose kernel, tools or drive model differ from the "
         "night before's: a change there may explain a change in the "
         "figures.</p>\n",
         fp);
  rp_table_head (fp, "tnnnnt", heads, NULL);
  for (i = 0; i < nights.n; i++) {
    night_env (db, c, nights.v[i], env, sizeof env);
    changed[i] = i > 0 && env[0] && prev[0] && strcmp (env, prev) != 0;
    night_row (fp, db, c, nights.v[i], env, changed[i]);
    snprintf (prev, sizeof prev, "%s", env);
  }
  fputs ("</tbody></table>\n", fp);
  trend_chart (
      fp, db, c,
      "SELECT fs || ' ' || disk || ', ' || load, run_id, check_s FROM t WHERE "
      "campaign = ?1 AND check_s IS NOT NULL AND " PLAIN " ORDER BY 1",
      &nights, changed, "median fsck time per night", "s");
  trend_chart (fp, db, c,
               "SELECT fs, run_id, 100.0 * avg(finding != '' OR error != '') "
               "FROM tb WHERE campaign = ?1 GROUP BY 1, 2 ORDER BY 1",
               &nights, changed,
               "trials with a finding or a rig error, per night", "%");
  free (changed);
  rp_strs_free (&nights);
}

/* fsck or restore: per scenario, the checker's time to get the file
 * system back beside a restore of the bytes in use from backup.
 */
void
rp_section_restore (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  sqlite3_stmt *st = rp_prepare (
      db,
      "SELECT fs || ', ' || disk || ', ' || load || CASE WHEN "
      "crash THEN ', crash' ELSE '' END || CASE WHEN faults IN "
      "('', 'none') THEN '' ELSE ', ' || faults END || CASE WHEN "
      "target = '' THEN '' ELSE ', ' || target END, count(*), "
      "avg(fsck_s), avg(restore_s), sum(restore_s < fsck_s) FROM t "
      "WHERE campaign = ?1 AND run_id = ?2 AND restore_s IS NOT NULL "
      "GROUP BY 1 ORDER BY 1",
      c, r);
  static const char *const heads[] = {"scenario", "trials", "fsck", "restore",
                                      "restore quicker"};

  fputs ("<h2 id=\"restore\">fsck or restore?</h2>\n"
         "<p>The checker's virtual time to get the file system back (check "
         "and repairs) beside a restore of the bytes in use from backup "
         "(written back through the drive model, or at the trial's "
         "<code>--restore-rate</code>); means over the trials.</p>\n",
         fp);
  rp_query_table (fp, st, "tnssn", heads, "No trial whose check ran.");
}

/* Trials whose repair left the file system unmountable and that ran
 * the next move (--escalate): how long it took, and what came of it.
 */
void
rp_section_escalation (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  sqlite3_stmt *st = rp_prepare (
      db,
      "SELECT t.id, t.fs, CASE WHEN t.target = '' THEN t.faults ELSE "
      " t.target END, (SELECT outcome FROM phases p WHERE p.trial_id = t.id "
      " AND p.name = 'repair'), (SELECT sum(virtual_s) FROM phases p WHERE "
      " p.trial_id = t.id AND p.name IN ('check', 'repair', 'recheck')), "
      " e.outcome, e.virtual_s, t.mount, CASE WHEN t.mount = 'RECOVERED' "
      " THEN t.lost END, t.mount_reason FROM t JOIN phases e ON "
      " e.trial_id = t.id AND e.name = 'escalate' WHERE t.campaign = ?1 AND "
      " t.run_id = ?2 ORDER BY t.mount DESC, e.virtual_s DESC, t.id",
      c, r);
  static const char *const heads[] = {
      "trial",          "file system",
      "fault",          "repair",
      "check + repair", "escalation",
      "its time",       "mount after",
      "files lost",     "why the repair left it unmountable"};

  fputs ("<h2 id=\"escalation\">When the repair gives up</h2>\n"
         "<p>Trials whose repair left the file system unmountable, and "
         "what an administrator runs next (<code>--escalate</code>: e2fsck "
         "with a backup superblock, <code>xfs_repair -L</code>, "
         "<code>btrfs rescue super-recover</code> and "
         "<code>zero-log</code>): the check and repair's virtual time, the "
         "escalation's, and whether the file system then mounted "
         "(RECOVERED, its files audited) or not.</p>\n",
         fp);
  rp_query_table (fp, st, "LwcwswswnT", heads,
                  "No escalation this night (none asked, or every repair left "
                  "the file system mountable).");
}
