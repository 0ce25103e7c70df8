/* futuredisk — harness: the report's sections about single trials: the
 * summary per file system, regressions, findings, rig errors, every
 * trial, and each trial's details with its evidence.
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

/* The night's rig errors (the rig failed, not the file system), so
 * nobody has to open the database to see them.
 */
void
rp_section_errors (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  sqlite3_stmt *st =
      rp_prepare (db,
                  "SELECT id, scenario, seed, error FROM t WHERE "
                  "campaign = ?1 AND run_id = ?2 AND error != '' "
                  "ORDER BY id",
                  c, r);
  static const char *const heads[] = {"trial", "scenario", "seed", "error"};

  fputs ("<h2 id=\"errors\">Trials that ended in an error</h2>\n"
         "<p>The rig's own failures (a server died, a tool was missing, "
         "bad input): these trials say nothing about the file system.  A "
         "file system the repair left unmountable is a finding, not an "
         "error.</p>\n",
         fp);
  rp_query_table (fp, st, "LcnT", heads, "None.");
}

/* A trial's fault, in a few words. */
#define FAULT_SQL                                                              \
  "coalesce(nullif(trim(target || CASE WHEN faults IN ('', 'none') THEN '' "   \
  "ELSE ' ' || faults END || CASE WHEN crash THEN ' crash' ELSE '' END), "     \
  "''), 'none')"

/* Is the scenario's file system fs (its "fs=NAME " word)? */
static bool
scenario_fs_is (const char *scenario, const char *fs)
{
  size_t n = strlen (fs);

  return strncmp (scenario, "fs=", 3) == 0 &&
         strncmp (scenario + 3, fs, n) == 0 &&
         (scenario[3 + n] == ' ' || scenario[3 + n] == '\0');
}

/* Per file system, the night at a glance: the findings by kind, the rig
 * errors, compare's regressions, and the fsck time across disks.
 */
void
rp_section_summary (FILE *fp, sqlite3 *db, const char *c, const char *r,
                    const struct fd_findings *reg)
{
  static const char *const heads[] = {
      "file system", "trials",      "findings",
      "lost data",   "unmountable", "mounted after escalation",
      "unrepaired",  "silent loss", "broke a promise",
      "rig errors",  "regressions", "fsck time, smallest to largest disk"};
  sqlite3_stmt *st = rp_prepare (
      db,
      "SELECT fs, count(*), sum(finding != ''), sum(broken > 0), "
      " sum(mount = 'UNMOUNTABLE'), sum(mount = 'RECOVERED'), "
      " sum(finding = 'unrepaired'), sum(finding = 'silent loss'), "
      " sum(crash AND violations > 0), sum(error != ''), "
      /* the smallest disk's and the largest's, one if they are one */
      " (SELECT group_concat(s, ' to ') FROM (SELECT fd_secs(avg(u.check_s)) "
      "  AS s, row_number() OVER (ORDER BY u.disk_bytes) AS up, "
      "  row_number() OVER (ORDER BY u.disk_bytes DESC) AS down FROM t u "
      "  WHERE u.campaign = ?1 AND u.run_id = ?2 AND u.fs = tb.fs AND "
      "  u.target = '' AND u.faults IN ('', 'none') AND NOT u.crash AND "
      "  u.check_s IS NOT NULL GROUP BY u.disk_bytes ORDER BY u.disk_bytes) "
      "  WHERE up = 1 OR down = 1) "
      "FROM tb WHERE campaign = ?1 AND run_id = ?2 GROUP BY fs ORDER BY fs",
      c, r);
  size_t n = 0, i, k;

  fputs ("<h2 id=\"summary\">Summary per file system</h2>\n"
         "<p>Findings are what a file system did with the faults: data "
         "lost (after a crash only broken promises count), left unmountable "
         "by the repair, mounted only after the escalation step, a recheck "
         "still not clean, or a loss the check did not notice.  Rig errors "
         "are the rig's own failures.  Regressions: scenarios worse than in "
         "the nights before (below).  fsck time: the mean check of the "
         "trials without faults on the smallest and the largest disk.</p>\n",
         fp);
  while (st && sqlite3_step (st) == SQLITE_ROW) {
    const char *fs = rp_col (st, 0);
    size_t regressions = 0;
    if (n++ == 0)
      rp_table_head (fp, "tnnnnnnnnnnt", heads, NULL);
    for (i = 0; i < reg->n; i++)
      regressions +=
          reg->f[i].why[0] && scenario_fs_is (reg->f[i].scenario, fs);
    fputs ("<tr>", fp);
    for (k = 0; k < 10; k++)
      rp_cell (fp, st, (int)k, k ? 'n' : 't');
    fprintf (fp, "<td class=\"num\" data-v=\"%zu\">%zu</td>", regressions,
             regressions);
    rp_cell (fp, st, 10, 't');
    fputs ("</tr>\n", fp);
  }
  sqlite3_finalize (st);
  fputs (n ? "</tbody></table>\n" : "<p class=\"none\">No trials.</p>\n", fp);
}

/* What the night's comparison stood on: its baseline, the environment,
 * how much of the timing had a measured spread.
 */
static void
regressions_basis (FILE *fp, const struct fd_findings *reg)
{
  fputs ("<p>Baseline: ", fp);
  fd_html (fp, reg->nbaseline ? reg->baseline : "none (the first night)");
  fputs (".", fp);
  if (reg->left_out[0]) {
    fputs (" Left out, run with another environment: ", fp);
    fd_html (fp, reg->left_out);
    fputs (".", fp);
  }
  if (reg->env_change[0]) {
    fputs (" <b class=\"changed\">The environment changed</b> since the "
           "baseline, the likely cause of what differs: ",
           fp);
    fd_html (fp, reg->env_change);
    fputs (".", fp);
  }
  if (reg->models[0]) {
    fputs (" fsck time not compared: ", fp);
    fd_html (fp, reg->models);
    fputs (".", fp);
  }
  if (reg->unmeasured)
    fprintf (fp,
             " In %zu scenarios the spread of fsck time is not measured "
             "(fewer than %d baseline nights, no repetitions on disks of "
             "their own): "
             "compared against a minimum effect of %.0f%% and %g s only.",
             reg->unmeasured, FD_REGRESS_MIN_DOF + 1,
             100 * FD_REGRESS_UNMEASURED_EFFECT,
             FD_REGRESS_UNMEASURED_EFFECT_S);
  fputs ("</p>\n", fp);
}

/* One scenario's row: its regressions, changes and notes. */
static void
regressions_row (FILE *fp, const struct fd_finding *f)
{
  fprintf (fp, "<tr><td><a href=\"#trial-%lld\"><code>", f->first_trial);
  fd_html (fp, f->scenario);
  fputs ("</code></a></td><td>", fp);
  fd_html (fp, f->why);
  if (f->changed[0]) {
    fprintf (fp, "%schanged with the environment: ", f->why[0] ? "; " : "");
    fd_html (fp, f->changed);
  }
  if (f->note[0]) {
    fprintf (fp, "%snote: ", f->why[0] || f->changed[0] ? "; " : "");
    fd_html (fp, f->note);
  }
  fputs ("</td></tr>\n", fp);
}

/* compare's regressions of the night, each scenario linking to its first
 * trial.
 */
void
rp_section_regressions (FILE *fp, const struct fd_findings *reg)
{
  static const char *const heads[] = {"scenario", "regression"};
  size_t i, nobase = 0, rows = 0;

  for (i = 0; i < reg->n; i++)
    nobase += strcmp (reg->f[i].note, "new scenario: no baseline") == 0;
  fprintf (fp,
           "<h2 id=\"regressions\">Regressions against the nights before</h2>"
           "\n<p>As <code>futuredisk compare</code> says: each of the "
           "night's %zu scenarios against the same scenario in the 7 nights "
           "of the campaign before it, by time (those with the night's "
           "environment, if any), each trial against its seed's.  A "
           "regression is an outcome of the check, repair, recheck or mount "
           "never seen there (a better one is a note), more files lost or "
           "promises broken than chance allows, a failure rate above the "
           "baseline's 95%% Wilson interval, or a median fsck time above the "
           "99.9%% bound its nights and repetitions give, by at least "
           "%.0f%% and %g s.  <b>%zu regressions</b>; %zu scenarios are new "
           "(no baseline).</p>\n",
           reg->n, 100 * FD_REGRESS_MIN_EFFECT, FD_REGRESS_MIN_EFFECT_S,
           reg->regressions, nobase);
  regressions_basis (fp, reg);
  for (i = 0; i < reg->n; i++) {
    const struct fd_finding *f = &reg->f[i];
    if (!f->why[0] && !f->changed[0] &&
        (!f->note[0] || strcmp (f->note, "new scenario: no baseline") == 0))
      continue;
    if (rows++ == 0)
      rp_table_head (fp, "ct", heads, NULL);
    regressions_row (fp, f);
  }
  if (rows)
    fputs ("</tbody></table>\n", fp);
}

/* The trials with a finding, the worst first. */
void
rp_section_findings (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  static const char *const heads[] = {
      "trial", "finding", "file system", "disk",       "fault",
      "check", "recheck", "mount",       "files lost", "why it did not mount"};
  sqlite3_stmt *st = rp_prepare (
      db,
      "SELECT id, finding, fs, disk, " FAULT_SQL ", "
      " coalesce(check_outcome, ''), coalesce(recheck_outcome, ''), mount, "
      " broken, mount_reason FROM tb WHERE campaign = ?1 AND run_id = ?2 AND "
      " finding != '' ORDER BY CASE finding WHEN 'unmountable' THEN 0 "
      " WHEN 'unrepaired' THEN 1 WHEN 'broke a promise' THEN 2 "
      " WHEN 'silent loss' THEN 3 WHEN 'files lost' THEN 4 ELSE 5 END, fs, id",
      c, r);

  fputs ("<h2 id=\"findings\">Findings</h2>\n"
         "<p>Every trial in which the file system lost data, was left "
         "unmountable or unrepaired, or mounted only after escalation; the "
         "worst first.  A trial's number links to its details.</p>\n",
         fp);
  rp_query_table (fp, st, "LwwwcwwwnT", heads, "No findings this night.");
}

/* Every trial of the night, a row each. */
void
rp_section_trials (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  static const char *const heads[] = {
      "trial", "file system", "disk",    "load",  "fault",      "seed",
      "check", "fsck time",   "recheck", "mount", "files lost", "finding"};
  sqlite3_stmt *st = rp_prepare (
      db,
      "SELECT id, fs, disk, load, " FAULT_SQL ", seed, "
      " coalesce(check_outcome, ''), check_s, coalesce(recheck_outcome, ''), "
      " mount, broken, CASE WHEN error != '' THEN 'rig error' ELSE finding "
      " END FROM tb WHERE campaign = ?1 AND run_id = ?2 ORDER BY id",
      c, r);

  fputs ("<h2 id=\"trials\">All trials</h2>\n"
         "<p>Click a column's heading to sort by it, type in the box to "
         "keep the rows that contain the text.</p>\n",
         fp);
  rp_query_table (fp, st, "Lwwwcnwswwnw", heads, "No trials.");
}

/* Text of n bytes for a <pre>: escaped, control characters but tab and
 * newline shown as '?', so that a binary log cannot break the page.
 */
static void
html_n (FILE *fp, const char *s, size_t n)
{
  size_t i;

  for (i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch == '&')
      fputs ("&amp;", fp);
    else if (ch == '<')
      fputs ("&lt;", fp);
    else if (ch == '>')
      fputs ("&gt;", fp);
    else if (ch < 32 && ch != '\n' && ch != '\t')
      fputc ('?', fp);
    else
      fputc (ch, fp);
  }
}

/* The page keeps the last 8 KiB of each evidence item. */
#define EVIDENCE_TAIL 8192

/* One evidence item, collapsed: its name and size, the end of its text
 * and, when that is not all, where the rest is.
 */
static void
evidence_item (FILE *fp, long long id, const char *name, long long bytes,
               const char *text, size_t len)
{
  char sz[64];
  size_t from = 0;

  fputs ("<details><summary>", fp);
  fd_html (fp, name);
  fprintf (fp, " (%s)</summary>\n",
           fd_fmt_bytes (sz, sizeof sz, (double)bytes));
  if (len > EVIDENCE_TAIL) {
    /* From the first whole line of the tail. */
    const char *nl =
        memchr (text + len - EVIDENCE_TAIL, '\n', EVIDENCE_TAIL - 1);
    from = nl ? (size_t)(nl + 1 - text) : len - EVIDENCE_TAIL;
  }
  if (from || (size_t)bytes > len)
    fprintf (fp,
             "<p class=\"cut\">The last %s of %s here; "
             "<code>futuredisk show <i>DB</i> %lld</code> prints it "
             "all.</p>\n",
             fd_fmt_bytes (sz, sizeof sz, (double)(len - from)), name, id);
  fputs ("<pre>", fp);
  html_n (fp, text + from, len - from);
  fputs ("</pre></details>\n", fp);
}

/* Where a trial's evidence goes on the page, item by item. */
struct evidence_out {
  FILE *fp;
  sqlite3 *db;
  long long id;
  size_t n;
};

/* One item whole (its last 8 KiB): under the first, the block's title;
 * a damaged row is said, and the rest of the page still written.
 */
static int
evidence_shown (void *opaque, const char *name, uint64_t bytes)
{
  struct evidence_out *o = opaque;
  struct fm_err err = {{0}};
  char *text = NULL;
  size_t len = 0;

  if (o->n++ == 0)
    fputs ("<div class=\"evidence\"><b>Evidence</b>\n", o->fp);
  if (fd_evidence_read (o->db, o->id, name, &text, &len, &bytes, &err) == 0)
    evidence_item (o->fp, o->id, name, (long long)bytes, text, len);
  else {
    fputs ("<p class=\"cut\">", o->fp);
    fd_html (o->fp, err.msg);
    fputs ("</p>\n", o->fp);
  }
  free (text);
  return 0;
}

/* One item named, with its size. */
static int
evidence_named (void *opaque, const char *name, uint64_t bytes)
{
  struct evidence_out *o = opaque;
  char sz[64];

  fputs (o->n++ ? ", " : "<p class=\"cut\">Evidence kept: ", o->fp);
  fd_html (o->fp, name);
  fprintf (o->fp, " (%s)", fd_fmt_bytes (sz, sizeof sz, (double)bytes));
  return 0;
}

/* A trial's evidence (schema version 5): the checkers' output, the fault
 * log, the kernel's and the servers' logs.  A trial with nothing to
 * explain keeps it in the database only: its items are named, with the
 * command that prints them, so the page stays the size of its findings,
 * not of the night.
 */
static void
trial_evidence (FILE *fp, sqlite3 *db, long long id, bool whole)
{
  struct evidence_out o = {fp, db, id, 0};
  struct fm_err err;

  if (!rp_has_table (db, "evidence") ||
      fd_evidence_each (db, id, whole ? evidence_shown : evidence_named, &o,
                        &err) <= 0)
    return;
  if (whole)
    fputs ("</div>\n", fp);
  else
    fprintf (fp,
             "; <code>futuredisk show <i>DB</i> %lld</code> prints it.</p>\n",
             id);
}

/* A trial's phases: name, outcome, exit status, virtual time. */
static void
trial_phases (FILE *fp, sqlite3 *db, long long id)
{
  static const char *const heads[] = {"phase", "outcome", "exit",
                                      "virtual time", "read errors"};
  sqlite3_stmt *st;

  if (sqlite3_prepare_v2 (db,
                          "SELECT name, coalesce(outcome, ''), exit, "
                          "virtual_s, read_errors FROM phases WHERE "
                          "trial_id = ? ORDER BY seq",
                          -1, &st, NULL) != SQLITE_OK)
    return;
  sqlite3_bind_int64 (st, 1, id);
  /* A handful of rows in their own order: nothing to sort. */
  rp_query_table_as (fp, st, "ttnsn", heads, "No phases recorded.", "plain");
}

/* One trial's block: what it was, how each phase went, the mount, what
 * was lost, and its evidence.
 */
static void
trial_block (FILE *fp, sqlite3 *db, sqlite3_stmt *st)
{
  long long id = sqlite3_column_int64 (st, 0);
  const char *mount = rp_col (st, 4), *reason = rp_col (st, 5);
  const char *error = rp_col (st, 6), *finding = rp_col (st, 7);

  fprintf (fp,
           "<section class=\"trial\" id=\"trial-%lld\"><h3>Trial %lld</h3>\n"
           "<p><code>",
           id, id);
  fd_html (fp, rp_col (st, 1));
  fprintf (fp, "</code>, seed %lld, repetition %lld.",
           sqlite3_column_int64 (st, 2), sqlite3_column_int64 (st, 3));
  if (finding[0]) {
    fputs (" Finding: <b>", fp);
    fd_html (fp, finding);
    fputs ("</b>.", fp);
  }
  fputs ("</p>\n", fp);
  trial_phases (fp, db, id);
  fputs ("<p>Mount after the repair: ", fp);
  fd_html (fp, mount[0] ? mount : "not tried");
  if (reason[0]) {
    fputs (" (", fp);
    fd_html (fp, reason);
    fputs (")", fp);
  }
  fprintf (fp, ".  Files lost: %lld.</p>\n", sqlite3_column_int64 (st, 8));
  if (error[0]) {
    fputs ("<p>Rig error: <code>", fp);
    fd_html (fp, error);
    fputs ("</code></p>\n", fp);
  }
  trial_evidence (fp, db, id, finding[0] || error[0]);
  fputs ("<p><a href=\"#trials\">back to all trials</a></p></section>\n", fp);
}

/* Every trial's details, where the tables' links lead. */
void
rp_section_details (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  sqlite3_stmt *st =
      rp_prepare (db,
                  "SELECT id, scenario, seed, rep, mount, "
                  " mount_reason, error, finding, "
                  " coalesce(broken, 0) FROM tb "
                  "WHERE campaign = ?1 AND run_id = ?2 ORDER BY id",
                  c, r);

  fputs ("<h2 id=\"details\">Trial details</h2>\n", fp);
  while (st && sqlite3_step (st) == SQLITE_ROW)
    trial_block (fp, db, st);
  sqlite3_finalize (st);
}
