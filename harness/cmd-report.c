/* futuredisk — harness: `futuredisk report`, one self-contained HTML page
 * of a campaign night: fsck time per disk generation, per-pass times,
 * the IRON fingerprint (fault kind x block type), data lost per fault
 * spec, and the trend over nights.  The queries read the schema of
 * harness/SCHEMA.md; the charts are inline SVG (svg.h).
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
#include "svg.h"

/* One row per trial with what every section needs. */
static const char trial_view[] =
    "CREATE TEMP VIEW t AS SELECT tr.id, tr.campaign, tr.run_id, "
    " tr.scenario, tr.fs, tr.profile, tr.size, tr.faults, tr.target, "
    " tr.crash, tr.meta_only, tr.error, tr.files, tr.seed, tr.rep, "
    " tr.mount, tr.mount_reason, tr.env_id, "
    " coalesce(json_extract(tr.record, '$.disk.size'), 0) AS disk_bytes, "
    " tr.profile || ' ' || CASE "
    "  WHEN json_extract(tr.record, '$.disk.size') > 0 "
    "  THEN fd_size(json_extract(tr.record, '$.disk.size')) "
    "  ELSE tr.size END AS disk, "
    " CASE WHEN tr.meta_only > 0 THEN fd_count(tr.meta_only) || ' files' "
    "  ELSE 'fill ' || fd_count(tr.fill_pct) || '%' END AS load, "
    " CASE WHEN tr.target = '' THEN '' "
    "  WHEN instr(tr.target, '+') THEN '+' "
    "  WHEN instr(tr.target, ':') "
    "  THEN substr(tr.target, 1, instr(tr.target, ':') - 1) "
    "  ELSE tr.target END AS ttype, "
    " CASE WHEN tr.target = '' THEN '' "
    "  WHEN tr.target LIKE '%:%:%' THEN substr(tr.target, "
    "   instr(tr.target, ':') + instr(substr(tr.target, "
    "   instr(tr.target, ':') + 1), ':') + 1) ELSE 'ure' END AS tkind, "
    " (SELECT virtual_s FROM phases p WHERE p.trial_id = tr.id "
    "  AND p.name = 'check') AS check_s, "
    " (SELECT outcome FROM phases p WHERE p.trial_id = tr.id "
    "  AND p.name = 'check') AS check_outcome, "
    " (SELECT outcome FROM phases p WHERE p.trial_id = tr.id "
    "  AND p.name = 'recheck') AS recheck_outcome, "
    " json_extract(tr.record, '$.restore.fsck_s') AS fsck_s, "
    " json_extract(tr.record, '$.restore.restore_s') AS restore_s, "
    " (SELECT coalesce(sum(files), 0) FROM audit a WHERE a.trial_id = tr.id "
    "  AND a.class NOT IN ('intact', 'extra')) AS lost, "
    " (SELECT files FROM durability d WHERE d.trial_id = tr.id "
    "  AND d.class = 'durable_broken') AS violations, "
    " (SELECT files FROM durability d WHERE d.trial_id = tr.id "
    "  AND d.class = 'inflight_lost') AS allowed, "
    " (SELECT files FROM audit a WHERE a.trial_id = tr.id "
    "  AND a.class = 'intact') AS intact, tr.repair_cut, "
    " json_extract(tr.record, '$.repair_cut.outcome') AS cut_outcome, "
    " json_extract(tr.record, '$.iron.detection') AS detection, "
    " json_extract(tr.record, '$.iron.recovery') AS recovery "
    "FROM trials5 tr;"
    /* What a trial lost that it should not have: after a crash, only the
     * broken promises (losing what was in flight is allowed); else every
     * file not intact.  Trials recorded before the promises count all.
     */
    "CREATE TEMP VIEW tb0 AS SELECT *, CASE WHEN crash AND violations IS NOT "
    " NULL THEN violations ELSE lost END AS broken FROM t;"
    /* A trial's finding, the worst first; a rig error is none (the rig
     * failed, not the file system).
     */
    "CREATE TEMP VIEW tb AS SELECT *, CASE WHEN error != '' THEN '' "
    " WHEN mount = 'UNMOUNTABLE' THEN 'unmountable' "
    " WHEN coalesce(recheck_outcome, 'CLEAN') != 'CLEAN' THEN 'unrepaired' "
    " WHEN crash AND violations > 0 THEN 'broke a promise' "
    " WHEN broken > 0 AND check_outcome = 'CLEAN' THEN 'silent loss' "
    " WHEN broken > 0 THEN 'files lost' "
    " WHEN mount = 'RECOVERED' THEN 'recovered by escalation' "
    " ELSE '' END AS finding FROM tb0;";

/* Does table have column?  (Databases before schema version 5 have no
 * mount outcome or environment.)
 */
static bool
has_column (sqlite3 *db, const char *table, const char *column)
{
  char sql[128];
  sqlite3_stmt *st;
  bool found = false;

  snprintf (sql, sizeof sql,
            "SELECT 1 FROM pragma_table_info('%s') "
            "WHERE name = ?",
            table);
  if (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) != SQLITE_OK)
    return false;
  sqlite3_bind_text (st, 1, column, -1, SQLITE_STATIC);
  found = sqlite3_step (st) == SQLITE_ROW;
  sqlite3_finalize (st);
  return found;
}

static bool
has_table (sqlite3 *db, const char *table)
{
  sqlite3_stmt *st;
  bool found = false;

  if (sqlite3_prepare_v2 (db,
                          "SELECT 1 FROM sqlite_master WHERE type = 'table' "
                          "AND name = ?",
                          -1, &st, NULL) != SQLITE_OK)
    return false;
  sqlite3_bind_text (st, 1, table, -1, SQLITE_STATIC);
  found = sqlite3_step (st) == SQLITE_ROW;
  sqlite3_finalize (st);
  return found;
}

/* SQL's fd_size(bytes), fd_count(n) and fd_secs(s): svg.h's units in
 * queries.
 */
static void
sql_size (sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
  char buf[64];

  fd_fmt_bytes (buf, sizeof buf, sqlite3_value_double (argv[0]));
  sqlite3_result_text (ctx, buf, -1, SQLITE_TRANSIENT);
}

static void
sql_count (sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
  char buf[64];

  fd_fmt_num (buf, sizeof buf, sqlite3_value_double (argv[0]));
  sqlite3_result_text (ctx, buf, -1, SQLITE_TRANSIENT);
}

static void
sql_secs (sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
  char buf[64];

  if (sqlite3_value_type (argv[0]) == SQLITE_NULL) {
    sqlite3_result_null (ctx);
    return;
  }
  fd_fmt_secs (buf, sizeof buf, sqlite3_value_double (argv[0]));
  sqlite3_result_text (ctx, buf, -1, SQLITE_TRANSIENT);
}

static int
report_view (struct sqlite3 *db, struct fm_err *err)
{
  /* A database before version 5: no mount tried, as far as it says. */
  const char *trials5 =
      has_column (db, "trials", "mount")
          ? "CREATE TEMP VIEW trials5 AS SELECT * FROM main.trials;"
          : "CREATE TEMP VIEW trials5 AS SELECT *, '' AS mount, "
            "'' AS mount_reason, NULL AS env_id FROM main.trials;";

  if (sqlite3_create_function (db, "fd_size", 1,
                               SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
                               sql_size, NULL, NULL) != SQLITE_OK ||
      sqlite3_create_function (db, "fd_count", 1,
                               SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
                               sql_count, NULL, NULL) != SQLITE_OK ||
      sqlite3_create_function (db, "fd_secs", 1,
                               SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
                               sql_secs, NULL, NULL) != SQLITE_OK ||
      sqlite3_exec (db, trials5, NULL, NULL, NULL) != SQLITE_OK ||
      sqlite3_exec (db, trial_view, NULL, NULL, NULL) != SQLITE_OK) {
    return fm_fail (err, "report view: %s", sqlite3_errmsg (db));
  }
  return 0;
}

static int
report_night (struct sqlite3 *db, const char *campaign, char *name, size_t nlen,
              char *run_id, size_t rlen, struct fm_err *err)
{
  sqlite3_stmt *st;
  int found = 0;

  if (sqlite3_prepare_v2 (db,
                          "SELECT campaign, run_id FROM trials WHERE "
                          "(?1 IS NULL OR campaign = ?1) AND (?2 = '' OR "
                          "run_id = ?2) ORDER BY id DESC LIMIT 1",
                          -1, &st, NULL) != SQLITE_OK) {
    return fm_fail (err, "%s", sqlite3_errmsg (db));
  }
  if (campaign)
    sqlite3_bind_text (st, 1, campaign, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 2, run_id, -1, SQLITE_STATIC);
  if (sqlite3_step (st) == SQLITE_ROW) {
    found = 1;
    snprintf (name, nlen, "%s", (const char *)sqlite3_column_text (st, 0));
    snprintf (run_id, rlen, "%s", (const char *)sqlite3_column_text (st, 1));
  }
  sqlite3_finalize (st);
  if (!found) {
    return fm_fail (err, "no trials%s%s%s%s", campaign ? " of campaign " : "",
                    campaign ? campaign : "", run_id[0] ? " in night " : "",
                    run_id);
  }
  return 0;
}

struct sqlite3 *
fd_report_open (const char *path, const char *campaign, char *name, size_t nlen,
                char *run_id, size_t rlen, struct fm_err *err)
{
  sqlite3 *db = fd_db_open (path, false, err);

  if (db &&
      (report_view (db, err) == -1 ||
       report_night (db, campaign, name, nlen, run_id, rlen, err) == -1)) {
    sqlite3_close (db);
    return NULL;
  }
  return db;
}

/* Strings collected from query results, freed together. */
struct strs {
  char **v;
  size_t n;
};

static size_t
strs_index (struct strs *s, const char *x)
{
  size_t i;
  char *copy, **slot;

  for (i = 0; i < s->n; i++)
    if (strcmp (s->v[i], x) == 0)
      return i;
  if ((copy = strdup (x)) == NULL ||
      (slot = fd_append (&s->v, &s->n, sizeof *s->v)) == NULL) {
    free (copy);
    return (size_t)-1;
  }
  *slot = copy;
  return s->n - 1;
}

static void
strs_free (struct strs *s)
{
  size_t i;

  for (i = 0; i < s->n; i++)
    free (s->v[i]);
  free (s->v);
  memset (s, 0, sizeof *s);
}

/* Values grouped by two indexes (file system and disk, line and night),
 * for medians.
 */
struct groups {
  struct group {
    size_t a, b;
    double *v;
    size_t n;
  } * g;
  size_t n;
};

static int
groups_add (struct groups *gs, size_t a, size_t b, double x)
{
  struct group *g = NULL;
  double *slot;
  size_t i;

  for (i = 0; i < gs->n && !g; i++)
    if (gs->g[i].a == a && gs->g[i].b == b)
      g = &gs->g[i];
  if (g == NULL) {
    if ((g = fd_append (&gs->g, &gs->n, sizeof *gs->g)) == NULL)
      return -1;
    g->a = a, g->b = b;
  }
  if ((slot = fd_append (&g->v, &g->n, sizeof *g->v)) == NULL)
    return -1;
  *slot = x;
  return 0;
}

/* The groups' medians as an na x nb grid (`empty` where no group). */
static double *
groups_medians (struct groups *gs, size_t na, size_t nb, double empty)
{
  double *m = malloc ((na * nb + 1) * sizeof *m);
  size_t i;

  for (i = 0; m && i < na * nb; i++)
    m[i] = empty;
  for (i = 0; m && i < gs->n; i++)
    m[gs->g[i].a * nb + gs->g[i].b] = fd_median (gs->g[i].v, gs->g[i].n);
  return m;
}

static void
groups_free (struct groups *gs)
{
  size_t i;

  for (i = 0; i < gs->n; i++)
    free (gs->g[i].v);
  free (gs->g);
  memset (gs, 0, sizeof *gs);
}

static sqlite3_stmt *
prepare (sqlite3 *db, const char *sql, const char *campaign, const char *run_id)
{
  sqlite3_stmt *st;

  if (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) != SQLITE_OK) {
    fprintf (stderr, "%s report: %s\n", fd_progname, sqlite3_errmsg (db));
    return NULL;
  }
  sqlite3_bind_text (st, 1, campaign, -1, SQLITE_STATIC);
  if (sqlite3_bind_parameter_count (st) >= 2)
    sqlite3_bind_text (st, 2, run_id, -1, SQLITE_STATIC);
  return st;
}

static const char *
col (sqlite3_stmt *st, int i)
{
  const unsigned char *s = sqlite3_column_text (st, i);
  return s ? (const char *)s : "";
}

/* Rows of (row label, column label, ..., value at vcol) into groups
 * indexed by the labels' positions in a and b; the statement finalized.
 */
static void
grid_from (sqlite3_stmt *st, struct strs *a, struct strs *b, int vcol,
           struct groups *gs)
{
  while (st && sqlite3_step (st) == SQLITE_ROW) {
    size_t i = strs_index (a, col (st, 0));
    size_t j = strs_index (b, col (st, 1));
    if (i == (size_t)-1 || j == (size_t)-1 ||
        groups_add (gs, i, j, sqlite3_column_double (st, vcol)) == -1)
      break;
  }
  sqlite3_finalize (st);
}

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
static void
section_generations (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  sqlite3_stmt *st = prepare (
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
  grid_from (st, &fs, &disks, 3, &gs);
  if (gs.n == 0) {
    fputs ("<p class=\"none\">No trials without faults in this night.</p>\n",
           fp);
    goto out;
  }
  val = groups_medians (&gs, fs.n, disks.n, NAN);
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
  groups_free (&gs);
  free (val);
  free (cnt);
  strs_free (&fs);
  strs_free (&disks);
}

/* 2. Per-pass times as stacked bars, one bar per file system and disk. */
static void
section_passes (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  sqlite3_stmt *st = prepare (
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
  grid_from (st, &bars, &segs, 2, &gs);
  /* 0 for a pass a checker did not run */
  if (gs.n && (v = groups_medians (&gs, bars.n, segs.n, 0)) != NULL) {
    fd_svg_bars (fp, "check time per pass, on the virtual clock", "s",
                 (const char *const *)bars.v, bars.n,
                 (const char *const *)segs.v, segs.n, v);
  } else
    fputs ("<p class=\"none\">No pass times in this night.</p>\n", fp);
  free (v);
  groups_free (&gs);
  strs_free (&bars);
  strs_free (&segs);
}

/* A number's cell: right-aligned, its raw value in data-v for the
 * page's sorting, text as svg.h's units say.
 */
static void
num_cell (FILE *fp, sqlite3_stmt *st, int i, char type)
{
  char buf[64];
  double v = sqlite3_column_double (st, i);

  if (sqlite3_column_type (st, i) == SQLITE_NULL) {
    fputs (type == '?' ? "<td class=\"num\">?</td>"
                       : "<td class=\"num\">-</td>",
           fp);
    return;
  }
  fprintf (fp, "<td class=\"num\" data-v=\"%.17g\">", v);
  if (type == 's')
    fd_fmt_secs (buf, sizeof buf, v);
  else if (type == 'L')
    snprintf (buf, sizeof buf, "%lld", sqlite3_column_int64 (st, i));
  else
    fd_fmt_num (buf, sizeof buf, v);
  if (type == 'L')
    fprintf (fp, "<a href=\"#trial-%s\">%s</a>", buf, buf);
  else
    fputs (buf, fp);
  fputs ("</td>", fp);
}

/* Column i of st's row as a cell of type (see query_table). */
static void
cell (FILE *fp, sqlite3_stmt *st, int i, char type)
{
  switch (type) {
    case 't':
      fputs ("<td>", fp);
      fd_html (fp, col (st, i));
      fputs ("</td>", fp);
      return;
    case 'T':
    case 'w':
      fputs (type == 'T' ? "<td class=\"long\">" : "<td class=\"nw\">", fp);
      fd_html (fp, col (st, i));
      fputs ("</td>", fp);
      return;
    case 'c':
      fputs ("<td><code>", fp);
      fd_html (fp, col (st, i));
      fputs ("</code></td>", fp);
      return;
    case 'y':
      fputs (sqlite3_column_int (st, i) ? "<td>yes</td>" : "<td>no</td>", fp);
      return;
    default:
      num_cell (fp, st, i, type);
  }
}

/* A table's head: numbers' columns right-aligned over them. */
static void
table_head (FILE *fp, const char *cols, const char *const *heads,
            const char *cls)
{
  size_t k;

  fprintf (fp, "<table class=\"%s\"><thead><tr>", cls ? cls : "fd-table");
  for (k = 0; cols[k]; k++)
    fprintf (fp, "<th%s>%s</th>",
             strchr ("tTwcy", cols[k]) ? "" : " class=\"num\"", heads[k]);
  fputs ("</tr></thead><tbody>\n", fp);
}

/* The rows of st as an HTML table (sortable and filterable by the page's
 * script) under heads, one column per letter of cols: t text, T long
 * text (broken anywhere), w short text (never broken), c code, y yes or
 * no, n a count, f a mean, ? a mean or "?" when NULL, s seconds, L a
 * trial's id linking to its details.  Without rows, the paragraph none.
 * Finalizes st.  The table's class is cls (NULL: "fd-table", the class
 * the script sorts and filters).
 */
static void
query_table_as (FILE *fp, sqlite3_stmt *st, const char *cols,
                const char *const *heads, const char *none, const char *cls)
{
  size_t n = 0, k;

  while (st && sqlite3_step (st) == SQLITE_ROW) {
    if (n++ == 0)
      table_head (fp, cols, heads, cls);
    fputs ("<tr>", fp);
    for (k = 0; cols[k]; k++)
      cell (fp, st, (int)k, cols[k]);
    fputs ("</tr>\n", fp);
  }
  sqlite3_finalize (st);
  if (n)
    fputs ("</tbody></table>\n", fp);
  else
    fprintf (fp, "<p class=\"none\">%s</p>\n", none);
}

static void
query_table (FILE *fp, sqlite3_stmt *st, const char *cols,
             const char *const *heads, const char *none)
{
  query_table_as (fp, st, cols, heads, none, NULL);
}

/* 3. The IRON fingerprint: per file system, block type x fault kind,
 * coloured by the worst thing that happened.  Every map's classes go
 * from best to worst, so that on all three red means worse.
 */
static const char *const iron_classes[] = {
    "tolerated: check clean, nothing lost", "detected and repaired",
    "mounted only after escalation",        "repaired, files lost",
    "silent: check clean, files lost",      "unrepaired: recheck not clean",
    "unmountable after the repair",
};

/* A trial's outcome class; -1 for a rig error, which says nothing about
 * the file system.
 */
static int
iron_class (const char *check, const char *recheck, double lost,
            const char *error, const char *mount)
{
  if (error[0])
    return -1;
  if (strcmp (mount, "UNMOUNTABLE") == 0)
    return 6;
  if (recheck[0] && strcmp (recheck, "CLEAN") != 0)
    return 5;
  if (lost > 0)
    return strcmp (check, "CLEAN") == 0 ? 4 : 3;
  if (strcmp (mount, "RECOVERED") == 0)
    return 2;
  return strcmp (check, "CLEAN") == 0 ? 0 : 1;
}

/* The fingerprint's two axes (trial.h), best first: a checksum is sure
 * to notice, a sanity check may not; recovered with nothing lost beats
 * the checker's repair, which beats handing the application an error.
 */
static const char *const detection_classes[] = {"checksum", "error-code",
                                                "sanity", "none"};
static const char *const recovery_classes[] = {
    "redundancy", "retry", "remap", "repair", "propagate", "none"};

/* The fault kinds a target can carry: the disk's (ure, lse), the
 * media's (rot) and the write's (lost, misdirected, torn).
 */
static const char *const iron_kinds[] = {
    "ure", "lse", "rot", "lost-write", "misdirected-write", "torn-write"};
#define NKINDS (sizeof iron_kinds / sizeof iron_kinds[0])

/* One targeted trial: where its fault went and what came of it, on the
 * three maps (outcome, detection, recovery; -1 where unknown).
 */
struct iron_row {
  char fs[32], type[32], kind[24];
  int cls[3];
  bool error;
};

static const struct {
  const char *title;
  const char *const *legend;
  size_t n;
  bool worst; /* the worst trial colours the cell, else the most common */
} iron_maps[] = {
    {"the worst outcome of the cell's trials", iron_classes, 7, true},
    {"how the fault was detected (the most common)", detection_classes, 4,
     false},
    {"what recovered from it (the most common)", recovery_classes, 6, false},
};

static int
index_of (const char *const *v, size_t n, const char *s)
{
  size_t i;

  for (i = 0; i < n && strcmp (v[i], s); i++)
    ;
  return i < n ? (int)i : -1;
}

/* The tooltip of a cell: its trials by class, and its rig errors. */
static char *
iron_tip (const char *type, const char *kind, size_t m, const size_t *counts,
          size_t total, size_t errors)
{
  char t[400];
  int len = snprintf (t, sizeof t, "%s, %s: %zu trials", type, kind, total);
  size_t k;

  for (k = 0; k < iron_maps[m].n; k++)
    if (counts[k] && len > 0 && (size_t)len < sizeof t)
      len += snprintf (t + len, sizeof t - len, "; %zu %s", counts[k],
                       iron_maps[m].legend[k]);
  if (errors && len > 0 && (size_t)len < sizeof t)
    snprintf (t + len, sizeof t - len, "; %zu rig errors (not counted)",
              errors);
  return strdup (t);
}

/* Map m's class for file system fs with a fault of kind in a block of
 * type, -1 if none; *tip counts the trials by class, *label is "k/n"
 * (k of the cell's n trials are of its class).
 */
static int
iron_cell (const struct iron_row *rows, size_t nrows, size_t m, const char *fs,
           const char *type, const char *kind, char **tip, char **label)
{
  size_t counts[8] = {0}, total = 0, errors = 0, j, k;
  int cls = -1;

  for (j = 0; j < nrows; j++) {
    if (strcmp (rows[j].fs, fs) || strcmp (rows[j].type, type) ||
        strcmp (rows[j].kind, kind))
      continue;
    errors += rows[j].error;
    if (rows[j].cls[m] >= 0) {
      counts[rows[j].cls[m]]++;
      total++;
    }
  }
  for (k = 0; k < iron_maps[m].n; k++)
    if (counts[k] && (cls < 0 || iron_maps[m].worst || counts[k] > counts[cls]))
      cls = (int)k;
  if (total || errors) {
    char l[32];
    *tip = iron_tip (type, kind, m, counts, total, errors);
    snprintf (l, sizeof l, "%zu/%zu", cls >= 0 ? counts[cls] : 0, total);
    *label = strdup (l);
  }
  return cls;
}

/* The fingerprint of file system fs, its three maps; -1 when out of
 * memory.
 */
static int
iron_map (FILE *fp, const struct iron_row *rows, size_t nrows, const char *fs)
{
  struct strs types = {0};
  int *cls;
  char **tips, **labels;
  size_t i, nt, m;
  char title[160];
  bool ok;

  for (i = 0; i < nrows; i++)
    if (strcmp (rows[i].fs, fs) == 0)
      strs_index (&types, rows[i].type);
  nt = types.n;
  cls = malloc (nt * NKINDS * sizeof *cls);
  tips = calloc (nt * NKINDS, sizeof *tips);
  labels = calloc (nt * NKINDS, sizeof *labels);
  ok = cls && tips && labels;
  if (ok) {
    fputs ("<h3 id=\"iron-", fp);
    fd_html (fp, fs);
    fputs ("\">", fp);
    fd_html (fp, fs);
    fputs ("</h3>\n<div class=\"maps\">\n", fp);
    for (m = 0; m < sizeof iron_maps / sizeof iron_maps[0]; m++) {
      for (i = 0; i < nt * NKINDS; i++)
        cls[i] = iron_cell (rows, nrows, m, fs, types.v[i / NKINDS],
                            iron_kinds[i % NKINDS], &tips[i], &labels[i]);
      snprintf (title, sizeof title, "%s: %s", fs, iron_maps[m].title);
      fd_svg_heat (fp, title, (const char *const *)types.v, nt, iron_kinds,
                   NKINDS, cls, (const char *const *)labels,
                   (const char *const *)tips, iron_maps[m].legend,
                   iron_maps[m].n);
      for (i = 0; i < nt * NKINDS; i++) {
        free (tips[i]);
        free (labels[i]);
        tips[i] = labels[i] = NULL;
      }
    }
    fputs ("</div>\n", fp);
  }
  free (labels);
  free (tips);
  free (cls);
  strs_free (&types);
  return ok ? 0 : -1;
}

static void
iron_intro (FILE *fp)
{
  fputs ("<h2 id=\"iron\">IRON fingerprint: what each file system does with "
         "a bad block</h2>\n"
         "<p>Trials that fault one block of a type (rows) with a kind of "
         "fault (columns): ure = unreadable, lse = latent sector error, rot "
         "= one bit flipped at rest, and the last write to the block lost, "
         "misdirected (landed nearby) or torn.  Three maps per file system "
         "(Prabhakaran et al., SOSP'05): the worst outcome over the cell's "
         "trials; how the fault was <b>detected</b> (a checksum, the disk's "
         "error code, the checker's sanity checks, or not at all); and what "
         "<b>recovered</b> from it (a redundant copy, a retry, a remapped "
         "sector, the checker's repair, the error handed to the "
         "application, or nothing), the most common over the trials.  One "
         "colour scale on every map: pale green is the best class, dark red "
         "the worst.  A cell's <i>k/n</i>: k of its n trials are of the "
         "class it shows (hover for all of them); trials that ended in a "
         "rig error are not counted.</p>\n",
         fp);
}

static void
section_iron (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  sqlite3_stmt *st =
      prepare (db,
               "SELECT fs, ttype, tkind, coalesce(check_outcome, ''), "
               " coalesce(recheck_outcome, ''), lost, error, "
               " coalesce(detection, ''), coalesce(recovery, ''), mount "
               "FROM t WHERE campaign = ?1 AND run_id = ?2 "
               " AND ttype NOT IN ('', '+') "
               "ORDER BY fs, ttype, tkind",
               c, r);
  struct strs fss = {0};
  struct iron_row *rows = NULL;
  size_t nrows = 0, f;

  iron_intro (fp);
  while (st && sqlite3_step (st) == SQLITE_ROW) {
    struct iron_row *w = fd_append (&rows, &nrows, sizeof *rows);
    if (w == NULL)
      break;
    snprintf (w->fs, sizeof w->fs, "%s", col (st, 0));
    snprintf (w->type, sizeof w->type, "%s", col (st, 1));
    snprintf (w->kind, sizeof w->kind, "%s", col (st, 2));
    w->error = col (st, 6)[0] != '\0';
    w->cls[0] =
        iron_class (col (st, 3), col (st, 4), sqlite3_column_double (st, 5),
                    col (st, 6), col (st, 9));
    w->cls[1] = w->error ? -1 : index_of (detection_classes, 4, col (st, 7));
    w->cls[2] = w->error ? -1 : index_of (recovery_classes, 6, col (st, 8));
    strs_index (&fss, w->fs);
  }
  sqlite3_finalize (st);
  if (nrows == 0)
    fputs ("<p class=\"none\">No targeted trials in this night.</p>\n", fp);
  for (f = 0; f < fss.n && iron_map (fp, rows, nrows, fss.v[f]) == 0; f++)
    ;
  free (rows);
  strs_free (&fss);
}

/* 4. Data lost per fault spec: files per audit class, mean per trial. */
static void
section_loss (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  static const char *const classes[] = {"lost_found", "partial", "corrupted",
                                        "unreadable", "missing", "link_lost"};
  const size_t ncls = sizeof classes / sizeof classes[0];
  sqlite3_stmt *st = prepare (
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
    b = strs_index (&bars, col (st, 0));
    for (k = 0; k < ncls && strcmp (col (st, 1), classes[k]); k++)
      ;
    if (b == (size_t)-1 ||
        (k < ncls &&
         groups_add (&gs, b, k, sqlite3_column_double (st, 2)) == -1))
      break;
  }
  sqlite3_finalize (st);
  if (bars.n && (v = groups_medians (&gs, bars.n, ncls, 0)) != NULL)
    fd_svg_bars (fp, "files lost per fault spec, mean per trial", "files",
                 (const char *const *)bars.v, bars.n, classes, ncls, v);
  else
    fputs ("<p class=\"none\">No audited untargeted trials in this "
           "night.</p>\n",
           fp);
  free (v);
  groups_free (&gs);
  strs_free (&bars);
}

/* Crash trials: the promises kept and broken per file system, and the
 * persistence patterns whose promises broke.
 */
static void
section_crash (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  sqlite3_stmt *st = prepare (
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
  query_table (fp, st, "tnnfffft", heads,
               "No audited crash trials in this night.");
}

/* Crash points: per scenario, the points checked and those at which a
 * durability promise broke.
 */
static void
section_crash_points (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  sqlite3_stmt *st = prepare (
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
  query_table (fp, st, "tnnnnnn", heads, "No crash points this night.");
}

/* Power cuts during repair: per file system and scenario, each cut
 * point's outcomes and the files lost against the same trial (seed)
 * repaired without a cut in the same night.
 */
static void
section_repair_cut (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  sqlite3_stmt *st = prepare (
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
  query_table (fp, st, "tnnnnnn?", heads, "No repair was cut this night.");
}

/* One line per label over the nights: the median of the query's values
 * (label, run_id, value) per label and night.
 */
static void
trend_chart (FILE *fp, sqlite3 *db, const char *c, const char *sql,
             const struct strs *nights, const bool *changed, const char *title,
             const char *unit)
{
  sqlite3_stmt *st = prepare (db, sql, c, NULL);
  struct strs lines = {0};
  struct groups gs = {0};
  struct fd_series *series = NULL;
  double *m = NULL;
  size_t i;

  while (st && sqlite3_step (st) == SQLITE_ROW) {
    size_t l, nn;
    for (nn = 0; nn < nights->n && strcmp (nights->v[nn], col (st, 1)); nn++)
      ;
    if (nn == nights->n)
      continue;
    if ((l = strs_index (&lines, col (st, 0))) == (size_t)-1 ||
        groups_add (&gs, l, nn, sqlite3_column_double (st, 2)) == -1)
      break;
  }
  sqlite3_finalize (st);
  if (lines.n && (m = groups_medians (&gs, lines.n, nights->n, NAN)) &&
      (series = calloc (lines.n, sizeof *series))) {
    for (i = 0; i < lines.n; i++)
      series[i].name = lines.v[i], series[i].y = m + i * nights->n;
    fd_svg_lines (fp, title, unit, (const char *const *)nights->v, nights->n,
                  series, lines.n, changed, "new environment");
  }
  free (series);
  free (m);
  groups_free (&gs);
  strs_free (&lines);
}

/* The environments (kernel and tool versions) a night's trials ran
 * with, one "; "-separated string into buf; the host is left out, as the
 * shards of one night run on several.  "" when not recorded.
 */
static void
night_env (sqlite3 *db, const char *c, const char *r, char *buf, size_t n)
{
  sqlite3_stmt *st;

  buf[0] = '\0';
  if (!has_table (db, "environments"))
    return;
  st = prepare (db,
                "SELECT group_concat(v, '; ') FROM (SELECT DISTINCT "
                " 'kernel ' || e.kernel || ', futuredisk ' || e.futuredisk || "
                " ', nbdkit ' || e.nbdkit || ', e2fsprogs ' || e.e2fsprogs || "
                " ', xfsprogs ' || e.xfsprogs || ', btrfs-progs ' || "
                " e.btrfs_progs AS v FROM t JOIN environments e ON "
                " e.id = t.env_id WHERE t.campaign = ?1 AND t.run_id = ?2 "
                " ORDER BY 1)",
                c, r);
  if (st && sqlite3_step (st) == SQLITE_ROW)
    snprintf (buf, n, "%s", col (st, 0));
  sqlite3_finalize (st);
}

/* The campaign's last 30 nights, oldest first, as a time axis reads. */
static void
last_nights (sqlite3 *db, const char *c, struct strs *nights)
{
  sqlite3_stmt *st = prepare (db,
                              "SELECT run_id FROM t WHERE campaign = ?1 GROUP "
                              "BY run_id ORDER BY min(id) DESC LIMIT 30",
                              c, NULL);
  size_t i;

  while (st && sqlite3_step (st) == SQLITE_ROW)
    strs_index (nights, col (st, 0));
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
  sqlite3_stmt *st = prepare (db,
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
      cell (fp, st, k, 'n');
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
static void
section_trends (FILE *fp, sqlite3 *db, const char *c)
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
    strs_free (&nights);
    return;
  }
  fputs ("<p>The campaign's last nights, oldest first.  A dashed line "
         "marks a night whose kernel or tools differ from the night "
         "before's: a change there may explain a change in the "
         "figures.</p>\n",
         fp);
  table_head (fp, "tnnnnt", heads, NULL);
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
  strs_free (&nights);
}

/* fsck or restore: per scenario, the checker's time to get the file
 * system back beside a restore of the bytes in use from backup.
 */
static void
section_restore (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  sqlite3_stmt *st =
      prepare (db,
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
  query_table (fp, st, "tnssn", heads, "No trial whose check ran.");
}

/* Trials whose repair left the file system unmountable and that ran
 * the next move (--escalate): how long it took, and what came of it.
 */
static void
section_escalation (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  sqlite3_stmt *st = prepare (
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
  query_table (fp, st, "LwcwswswnT", heads,
               "No escalation this night (none asked, or every repair left "
               "the file system mountable).");
}

/* The night's rig errors (the rig failed, not the file system), so
 * nobody has to open the database to see them.
 */
static void
section_errors (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  sqlite3_stmt *st = prepare (db,
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
  query_table (fp, st, "LcnT", heads, "None.");
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
static void
section_summary (FILE *fp, sqlite3 *db, const char *c, const char *r,
                 const struct fd_findings *reg)
{
  static const char *const heads[] = {
      "file system", "trials",      "findings",
      "lost data",   "unmountable", "mounted after escalation",
      "unrepaired",  "silent loss", "broke a promise",
      "rig errors",  "regressions", "fsck time, smallest to largest disk"};
  sqlite3_stmt *st = prepare (
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
    const char *fs = col (st, 0);
    size_t regressions = 0;
    if (n++ == 0)
      table_head (fp, "tnnnnnnnnnnt", heads, NULL);
    for (i = 0; i < reg->n; i++)
      regressions +=
          reg->f[i].why[0] && scenario_fs_is (reg->f[i].scenario, fs);
    fputs ("<tr>", fp);
    for (k = 0; k < 10; k++)
      cell (fp, st, (int)k, k ? 'n' : 't');
    fprintf (fp, "<td class=\"num\" data-v=\"%zu\">%zu</td>", regressions,
             regressions);
    cell (fp, st, 10, 't');
    fputs ("</tr>\n", fp);
  }
  sqlite3_finalize (st);
  fputs (n ? "</tbody></table>\n" : "<p class=\"none\">No trials.</p>\n", fp);
}

/* compare's regressions of the night, each scenario linking to its first
 * trial.
 */
static void
section_regressions (FILE *fp, const struct fd_findings *reg)
{
  static const char *const heads[] = {"scenario", "regression"};
  size_t i, nobase = 0, rows = 0;

  for (i = 0; i < reg->n; i++)
    nobase += strcmp (reg->f[i].note, "new scenario: no baseline") == 0;
  fprintf (fp,
           "<h2 id=\"regressions\">Regressions against the nights before</h2>"
           "\n<p>As <code>futuredisk compare</code> says: each of the "
           "night's %zu scenarios against the same scenario in the 7 nights "
           "of the campaign before it.  A regression is an outcome never "
           "seen there, a failure rate above the baseline's 95%% Wilson "
           "interval, or a median fsck time above the baseline's by more "
           "than max(5%%, 3 MAD).  <b>%zu regressions</b>; %zu scenarios "
           "are new (no baseline).</p>\n",
           reg->n, reg->regressions, nobase);
  for (i = 0; i < reg->n; i++) {
    const struct fd_finding *f = &reg->f[i];
    if (!f->why[0] &&
        (!f->note[0] || strcmp (f->note, "new scenario: no baseline") == 0))
      continue;
    if (rows++ == 0)
      table_head (fp, "ct", heads, NULL);
    fprintf (fp, "<tr><td><a href=\"#trial-%lld\"><code>", f->first_trial);
    fd_html (fp, f->scenario);
    fprintf (fp, "</code></a></td><td>%s", f->why[0] ? "" : "note: ");
    fd_html (fp, f->why[0] ? f->why : f->note);
    fputs ("</td></tr>\n", fp);
  }
  if (rows)
    fputs ("</tbody></table>\n", fp);
}

/* The trials with a finding, the worst first. */
static void
section_findings (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  static const char *const heads[] = {
      "trial", "finding", "file system", "disk",       "fault",
      "check", "recheck", "mount",       "files lost", "why it did not mount"};
  sqlite3_stmt *st = prepare (
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
  query_table (fp, st, "LwwwcwwwnT", heads, "No findings this night.");
}

/* Every trial of the night, a row each. */
static void
section_trials (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  static const char *const heads[] = {
      "trial", "file system", "disk",    "load",  "fault",      "seed",
      "check", "fsck time",   "recheck", "mount", "files lost", "finding"};
  sqlite3_stmt *st = prepare (
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
  query_table (fp, st, "Lwwwcnwswwnw", heads, "No trials.");
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

  if (!has_table (db, "evidence") ||
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
  query_table_as (fp, st, "ttnsn", heads, "No phases recorded.", "plain");
}

/* One trial's block: what it was, how each phase went, the mount, what
 * was lost, and its evidence.
 */
static void
trial_block (FILE *fp, sqlite3 *db, sqlite3_stmt *st)
{
  long long id = sqlite3_column_int64 (st, 0);
  const char *mount = col (st, 4), *reason = col (st, 5);
  const char *error = col (st, 6), *finding = col (st, 7);

  fprintf (fp,
           "<section class=\"trial\" id=\"trial-%lld\"><h3>Trial %lld</h3>\n"
           "<p><code>",
           id, id);
  fd_html (fp, col (st, 1));
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
static void
section_details (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  sqlite3_stmt *st = prepare (db,
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

static const char page_style[] =
    "<style>body{font-family:sans-serif;max-width:82em;margin:1em auto;"
    "padding:0 1em;color:#222;line-height:1.4}"
    "table{border-collapse:collapse;margin:.5em 0;font-size:.92em}"
    "td,th{border:1px solid #ccc;padding:.15em .5em;text-align:left;"
    "vertical-align:top}th{background:#f2f2f2}td.long{overflow-wrap:anywhere;"
    "min-width:12em}td.nw{white-space:nowrap}td.num{text-align:right;white-"
    "space:nowrap;"
    "font-variant-numeric:tabular-nums}th.num{text-align:right}"
    "th.sortable{cursor:pointer}th[aria-sort=ascending]::after{content:' "
    "\\25B2'}th[aria-sort=descending]::after{content:' \\25BC'}"
    "figure{margin:1em 0}figcaption{font-weight:bold;margin-top:.3em}"
    "svg{display:block}.maps{display:flex;flex-wrap:wrap;gap:0 2em;"
    "align-items:flex-start}.none{color:#666}.changed{color:#b2182b}"
    "nav ul{padding-left:1.2em;columns:3}"
    "input.filter{margin:.5em 0 0;padding:.2em .4em;width:20em}"
    ".trial{border-top:1px solid #ccc;margin-top:1em}"
    "pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f8f8f8;"
    "padding:.4em;font-size:.85em}details{margin:.2em 0}"
    "summary{cursor:pointer}.cut{color:#666;font-size:.9em;margin:.2em 0}"
    "</style>\n";

/* Sorting and filtering of the tables: a click on a heading sorts by its
 * column (numbers by their data-v), the box above a table keeps the rows
 * holding its text.  Without scripts the page reads the same, unsorted.
 */
static const char page_script[] =
    "<script>\n(function () {\n"
    "  function key(td) {\n"
    "    var v = td.getAttribute('data-v');\n"
    "    return v === null ? td.textContent.trim() : parseFloat(v);\n"
    "  }\n"
    "  function cmp(a, b) {\n"
    "    if (typeof a === 'number' && typeof b === 'number') return a - b;\n"
    "    if (typeof a === 'number') return -1;\n"
    "    if (typeof b === 'number') return 1;\n"
    "    return a.localeCompare(b, undefined, {numeric: true});\n"
    "  }\n"
    "  function sortable(table) {\n"
    "    var body = table.tBodies[0], heads = table.tHead.rows[0].cells;\n"
    "    Array.prototype.forEach.call(heads, function (th, i) {\n"
    "      th.tabIndex = 0;\n"
    "      th.classList.add('sortable');\n"
    "      function sort() {\n"
    "        var asc = th.getAttribute('aria-sort') !== 'ascending';\n"
    "        var rows = Array.prototype.slice.call(body.rows);\n"
    "        Array.prototype.forEach.call(heads, function (h) {\n"
    "          h.removeAttribute('aria-sort');\n"
    "        });\n"
    "        th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');\n"
    "        rows.sort(function (a, b) {\n"
    "          var c = cmp(key(a.cells[i]), key(b.cells[i]));\n"
    "          return asc ? c : -c;\n"
    "        });\n"
    "        rows.forEach(function (r) { body.appendChild(r); });\n"
    "      }\n"
    "      th.addEventListener('click', sort);\n"
    "      th.addEventListener('keydown', function (e) {\n"
    "        if (e.key === 'Enter') sort();\n"
    "      });\n"
    "    });\n"
    "  }\n"
    "  function filterable(table) {\n"
    "    var body = table.tBodies[0], input = "
    "document.createElement('input');\n"
    "    input.type = 'search';\n"
    "    input.className = 'filter';\n"
    "    input.placeholder = 'filter rows';\n"
    "    input.setAttribute('aria-label', 'keep the rows containing');\n"
    "    table.parentNode.insertBefore(input, table);\n"
    "    input.addEventListener('input', function () {\n"
    "      var q = input.value.toLowerCase();\n"
    "      Array.prototype.forEach.call(body.rows, function (r) {\n"
    "        r.hidden = q !== '' && "
    "r.textContent.toLowerCase().indexOf(q) < 0;\n"
    "      });\n"
    "    });\n"
    "  }\n"
    "  document.querySelectorAll('table.fd-table').forEach(function (t) {\n"
    "    sortable(t);\n"
    "    if (t.tBodies[0].rows.length > 5) filterable(t);\n"
    "  });\n"
    "})();\n</script>\n";

/* The page's contents, linking to each section. */
static void
page_nav (FILE *fp)
{
  static const char *const toc[][2] = {
      {"summary", "Summary per file system"},
      {"regressions", "Regressions"},
      {"findings", "Findings"},
      {"generations", "fsck time by disk generation"},
      {"passes", "Where the check spends its time"},
      {"iron", "IRON fingerprint"},
      {"loss", "Files lost per fault spec"},
      {"crash", "Crash trials"},
      {"crash-points", "Crash points"},
      {"repair-cut", "Power cuts during repair"},
      {"restore", "fsck or restore?"},
      {"escalation", "When the repair gives up"},
      {"trend", "Night over night"},
      {"errors", "Rig errors"},
      {"trials", "All trials"},
      {"details", "Trial details"},
  };
  size_t i;

  fputs ("<nav><ul>", fp);
  for (i = 0; i < sizeof toc / sizeof toc[0]; i++)
    fprintf (fp, "<li><a href=\"#%s\">%s</a></li>", toc[i][0], toc[i][1]);
  fputs ("</ul></nav>\n", fp);
}

/* The night's environments (schema version 5), with their trials. */
static void
page_env (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  static const char *const heads[] = {"host",        "kernel",    "futuredisk",
                                      "nbdkit",      "e2fsprogs", "xfsprogs",
                                      "btrfs-progs", "trials"};
  sqlite3_stmt *st;

  if (!has_table (db, "environments"))
    return;
  st = prepare (db,
                "SELECT e.host, e.kernel, e.futuredisk, e.nbdkit, "
                " e.e2fsprogs, e.xfsprogs, e.btrfs_progs, count(*) FROM t "
                " JOIN environments e ON e.id = t.env_id WHERE t.campaign = "
                " ?1 AND t.run_id = ?2 GROUP BY e.id ORDER BY e.id",
                c, r);
  fputs ("<h3 id=\"environment\">Environment</h3>\n", fp);
  query_table (fp, st, "tttttttn", heads,
               "Not recorded: the night's trials were recorded before "
               "schema version 5.");
}

/* The headline: the night's counts in one paragraph. */
static void
page_headline (FILE *fp, sqlite3 *db, const char *c, const char *r,
               const struct fd_findings *reg)
{
  sqlite3_stmt *st = prepare (
      db,
      "SELECT count(*), count(DISTINCT scenario), sum(finding != ''), "
      " sum(broken > 0), sum(mount = 'UNMOUNTABLE'), sum(error != ''), "
      " coalesce(sum(crash AND violations IS NOT NULL), 0), "
      " coalesce(sum(violations > 0 AND crash), 0), "
      " coalesce(sum(CASE WHEN crash THEN violations END), 0), "
      " coalesce(sum(CASE WHEN crash THEN allowed END), 0) "
      "FROM tb WHERE campaign = ?1 AND run_id = ?2",
      c, r);
  long long v[10] = {0};
  int k;

  if (st && sqlite3_step (st) == SQLITE_ROW)
    for (k = 0; k < 10; k++)
      v[k] = sqlite3_column_int64 (st, k);
  sqlite3_finalize (st);
  fprintf (fp,
           ": %lld trials in %lld scenarios; <b>%lld findings</b> (%lld lost "
           "data, %lld unmountable), %lld rig errors; <b>%zu "
           "regressions</b> against the nights before.",
           v[0], v[1], v[2], v[3], v[4], v[5], reg->regressions);
  if (v[6])
    fprintf (fp,
             " Of %lld crash trials, <b>%lld broke a durability promise</b> "
             "(%lld files: violations); %lld files that were in flight "
             "were lost, which a crash allows.",
             v[6], v[7], v[8], v[9]);
  fputs ("</p>\n", fp);
}

static void
page_head (FILE *fp, sqlite3 *db, const char *campaign, const char *run_id,
           const struct fd_findings *reg)
{
  /* Trials recorded by `futuredisk run --db` belong to no campaign. */
  const char *title = campaign[0] ? campaign : "trials outside campaigns";
  const char *night = run_id[0] ? run_id : "(none)";

  fputs ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta name=\"viewport\" content=\"width=device-width\">"
         "<title>futuredisk: ",
         fp);
  fd_html (fp, title);
  fputs (" ", fp);
  fd_html (fp, night);
  fputs ("</title>\n", fp);
  fputs (page_style, fp);
  fputs ("</head><body>\n<h1>futuredisk report: ", fp);
  fd_html (fp, title);
  fputs ("</h1>\n<p>Night <b>", fp);
  fd_html (fp, night);
  fputs ("</b>", fp);
  page_headline (fp, db, campaign, run_id, reg);
  page_env (fp, db, campaign, run_id);
  page_nav (fp);
}

int
fd_report_write (struct sqlite3 *db, const char *campaign, const char *run_id,
                 FILE *fp)
{
  struct fd_findings reg;
  struct fm_err err;

  /* Against the 7 nights before, as `futuredisk compare` by default. */
  if (fd_regress_night (db, campaign, run_id, 7, &reg, &err) == -1)
    fprintf (stderr, "%s report: regressions: %s\n", fd_progname, err.msg);
  page_head (fp, db, campaign, run_id, &reg);
  section_summary (fp, db, campaign, run_id, &reg);
  section_regressions (fp, &reg);
  section_findings (fp, db, campaign, run_id);
  section_generations (fp, db, campaign, run_id);
  section_passes (fp, db, campaign, run_id);
  section_iron (fp, db, campaign, run_id);
  section_loss (fp, db, campaign, run_id);
  section_crash (fp, db, campaign, run_id);
  section_crash_points (fp, db, campaign, run_id);
  section_repair_cut (fp, db, campaign, run_id);
  section_restore (fp, db, campaign, run_id);
  section_escalation (fp, db, campaign, run_id);
  section_trends (fp, db, campaign);
  section_errors (fp, db, campaign, run_id);
  section_trials (fp, db, campaign, run_id);
  section_details (fp, db, campaign, run_id);
  fd_findings_free (&reg);
  fputs ("<p><small>Generated by futuredisk " FUTUREDISK_VERSION
         " from the trial database (harness/SCHEMA.md).</small></p>\n",
         fp);
  fputs (page_script, fp);
  fputs ("</body></html>\n", fp);
  return ferror (fp) ? -1 : 0;
}

static void
report_usage (FILE *fp)
{
  fprintf (fp,
           "Usage: %s report DB -o FILE [--campaign NAME] [--run-id ID]\n"
           "Render a campaign night (default: the newest) as one "
           "self-contained HTML\npage with inline SVG charts.\n"
           "\n"
           "  -o, --output FILE  where to write the page\n"
           "  --campaign NAME    the campaign (default: the newest trial's)\n"
           "  --run-id ID        the night (default: the campaign's "
           "newest)\n",
           fd_progname);
}

struct report_opts {
  const char *db, *out, *campaign;
  char run_id[96]; /* "": the campaign's newest night */
};

static int
report_set (void *vo, int c, const char *arg, struct fm_err *err)
{
  struct report_opts *o = vo;

  switch (c) {
    case 'o':
      o->out = arg;
      return 0;
    case 'c':
      o->campaign = arg;
      return 0;
    case 'r':
      snprintf (o->run_id, sizeof o->run_id, "%s", arg);
      return 0;
  }
  return fm_fail (err, "unhandled option");
}

static const struct option report_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"output", required_argument, NULL, 'o'},
    {"campaign", required_argument, NULL, 'c'},
    {"run-id", required_argument, NULL, 'r'},
    {NULL, 0, NULL, 0},
};

static const struct fd_cmd_opts report_cmd = {"report", report_options,
                                              report_usage, report_set};

static int
report_parse (int argc, char **argv, struct report_opts *o)
{
  int first, rc;

  memset (o, 0, sizeof *o);
  rc = fd_options_parse_short (&report_cmd, "ho:", argc, argv, o, &first);
  if (rc != FD_OPTS_RUN)
    return rc;
  if (first + 1 != argc || o->out == NULL) {
    fd_usage_error ("report", "%s",
                    first + 1 != argc ? "one database DB is required"
                                      : "-o FILE is required");
    report_usage (stderr);
    return FD_OPTS_BAD;
  }
  o->db = argv[first];
  return FD_OPTS_RUN;
}

static int
report_run (struct report_opts *o)
{
  char name[96], tmp[4096];
  struct fm_err err;
  sqlite3 *db;
  FILE *fp;
  int ret = 0;

  if ((db = fd_report_open (o->db, o->campaign, name, sizeof name, o->run_id,
                            sizeof o->run_id, &err)) == NULL) {
    fprintf (stderr, "%s report: %s\n", fd_progname, err.msg);
    return 1;
  }
  /* Written aside and renamed, so a reader never sees half a page. */
  snprintf (tmp, sizeof tmp, "%s.tmp", o->out);
  if ((fp = fopen (tmp, "w")) == NULL) {
    fprintf (stderr, "%s report: %s: %s\n", fd_progname, tmp,
             fd_strerror (errno));
    sqlite3_close (db);
    return 1;
  }
  /* Closed whatever happened, and only a whole page is renamed. */
  ret = fd_report_write (db, name, o->run_id, fp) == -1 ? 1 : 0;
  if (fclose (fp) != 0 || ret != 0 || rename (tmp, o->out) == -1) {
    fprintf (stderr, "%s report: %s: %s\n", fd_progname, o->out,
             fd_strerror (errno));
    unlink (tmp);
    ret = 1;
  } else
    printf ("%s\n", o->out);
  sqlite3_close (db);
  return ret;
}

int
cmd_report (int argc, char **argv)
{
  struct report_opts o;
  int rc;

  rc = report_parse (argc, argv, &o);
  if (rc != FD_OPTS_RUN)
    return rc;
  return report_run (&o);
}
