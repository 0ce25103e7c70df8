/* futuredisk — harness: `futuredisk report`, one self-contained HTML page
 * of a campaign night: fsck time per disk generation, per-pass times,
 * the IRON fingerprint (fault kind x block type), data lost per fault
 * spec, and the trend over nights.  The queries read the schema of
 * harness/SCHEMA.md; the charts are inline SVG (svg.h).
 */
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "append.h"
#include "commands.h"
#include "db.h"
#include "errmsg.h"
#include "options.h"
#include "report.h"
#include "robust.h"
#include "svg.h"

/* One row per trial with what every section needs. */
static const char trial_view[] =
    "CREATE TEMP VIEW t AS SELECT tr.id, tr.campaign, tr.run_id, "
    " tr.scenario, tr.fs, tr.profile, tr.size, tr.faults, tr.target, "
    " tr.crash, tr.meta_only, tr.error, tr.files, tr.seed, "
    " coalesce(json_extract(tr.record, '$.disk.size'), 0) AS disk_bytes, "
    " tr.profile || ' ' || CASE "
    "  WHEN json_extract(tr.record, '$.disk.size') >= 1e12 "
    "  THEN printf('%.3g TB', json_extract(tr.record, '$.disk.size') / 1e12) "
    "  WHEN json_extract(tr.record, '$.disk.size') > 0 "
    "  THEN printf('%.3g GB', json_extract(tr.record, '$.disk.size') / 1e9) "
    "  ELSE tr.size END AS disk, "
    " CASE WHEN tr.meta_only > 0 THEN printf('%d files', tr.meta_only) "
    "  ELSE printf('fill %g%%', tr.fill_pct) END AS load, "
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
    "FROM trials tr;"
    /* What a trial lost that it should not have: after a crash, only the
     * broken promises (losing what was in flight is allowed); else every
     * file not intact.  Trials recorded before the promises count all.
     */
    "CREATE TEMP VIEW tb AS SELECT *, CASE WHEN crash AND violations IS NOT "
    " NULL THEN violations ELSE lost END AS broken FROM t;";

static int
report_view (struct sqlite3 *db, struct fm_err *err)
{
  if (sqlite3_exec (db, trial_view, NULL, NULL, NULL) != SQLITE_OK) {
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
  size_t *cnt = NULL, i, j;

  fputs ("<h2>fsck time by disk generation</h2>\n"
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
      fd_svg_lines (fp, "fsck time by disk generation", "s",
                    (const char *const *)disks.v, disks.n, series, fs.n);
      free (series);
    }
  }
  fputs ("<table><tr><th>disk</th>", fp);
  for (i = 0; i < fs.n; i++) {
    fputs ("<th>", fp);
    fd_html (fp, fs.v[i]);
    fputs (" (s)</th>", fp);
  }
  fputs ("</tr>\n", fp);
  for (j = 0; j < disks.n; j++) {
    fputs ("<tr><td>", fp);
    fd_html (fp, disks.v[j]);
    fputs ("</td>", fp);
    for (i = 0; i < fs.n; i++)
      if (isnan (val[i * disks.n + j]))
        fputs ("<td>-</td>", fp);
      else
        fprintf (fp, "<td>%.3g <small>(%zu)</small></td>", val[i * disks.n + j],
                 cnt[i * disks.n + j]);
    fputs ("</tr>\n", fp);
  }
  fputs ("</table>\n", fp);
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

  fputs ("<h2>Where the check spends its time</h2>\n"
         "<p>Each pass's share of the time the checker reports for itself "
         "(e2fsck -tt, xfs_repair -v), scaled to the check's virtual time; "
         "mean over seeds.  btrfs check does not time its passes.</p>\n",
         fp);
  grid_from (st, &bars, &segs, 2, &gs);
  /* 0 for a pass a checker did not run */
  if (gs.n && (v = groups_medians (&gs, bars.n, segs.n, 0)) != NULL) {
    fd_svg_bars (fp, "check time per pass", "virtual seconds",
                 (const char *const *)bars.v, bars.n,
                 (const char *const *)segs.v, segs.n, v);
  } else
    fputs ("<p class=\"none\">No pass times in this night.</p>\n", fp);
  free (v);
  groups_free (&gs);
  strs_free (&bars);
  strs_free (&segs);
}

/* The rows of st as an HTML table under heads, one column per letter
 * of cols: t text (escaped), ? text or "?" when NULL, f a mean (%.1f),
 * g a time (%.3g).  Without rows, the paragraph none.  Finalizes st.
 */
static void
query_table (FILE *fp, sqlite3_stmt *st, const char *cols,
             const char *const *heads, const char *none)
{
  size_t n = 0, k;

  while (st && sqlite3_step (st) == SQLITE_ROW) {
    if (n++ == 0) {
      fputs ("<table><tr>", fp);
      for (k = 0; cols[k]; k++)
        fprintf (fp, "<th>%s</th>", heads[k]);
      fputs ("</tr>\n", fp);
    }
    fputs ("<tr>", fp);
    for (k = 0; cols[k]; k++) {
      int i = (int)k;
      fputs ("<td>", fp);
      if (cols[k] == 'f' || cols[k] == 'g')
        fprintf (fp, cols[k] == 'f' ? "%.1f" : "%.3g",
                 sqlite3_column_double (st, i));
      else
        fd_html (fp,
                 cols[k] == '?' && sqlite3_column_type (st, i) == SQLITE_NULL
                     ? "?"
                     : col (st, i));
      fputs ("</td>", fp);
    }
    fputs ("</tr>\n", fp);
  }
  sqlite3_finalize (st);
  if (n)
    fputs ("</table>\n", fp);
  else
    fprintf (fp, "<p class=\"none\">%s</p>\n", none);
}

/* 3. The IRON fingerprint: per file system, block type x fault kind,
 * coloured by the worst thing that happened.
 */
static const char *const iron_classes[] = {
    "tolerated (check clean, nothing lost)",
    "detected and repaired",
    "repaired, files lost",
    "silent: check clean, files lost",
    "unrepaired (recheck dirty or unmountable)",
};

static int
iron_class (const char *check, const char *recheck, double lost,
            const char *error)
{
  bool clean = strcmp (check, "CLEAN") == 0;

  if (error[0] || (recheck[0] && strcmp (recheck, "CLEAN") != 0))
    return 4;
  if (clean)
    return lost > 0 ? 3 : 0;
  return lost > 0 ? 2 : 1;
}

/* The fingerprint's two axes (trial.h): detection and recovery, in the
 * order of Prabhakaran et al.'s tables.
 */
static const char *const detection_classes[] = {"none", "error-code", "sanity",
                                                "checksum"};
static const char *const recovery_classes[] = {"none",   "propagate",  "retry",
                                               "repair", "redundancy", "remap"};

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
};

static const struct {
  const char *title;
  const char *const *legend;
  size_t n;
  bool worst; /* the worst trial colours the cell, else the most common */
} iron_maps[] = {
    {"outcome", iron_classes, 5, true},
    {"detection", detection_classes, 4, false},
    {"recovery", recovery_classes, 6, false},
};

static int
index_of (const char *const *v, size_t n, const char *s)
{
  size_t i;

  for (i = 0; i < n && strcmp (v[i], s); i++)
    ;
  return i < n ? (int)i : -1;
}

/* Map m's class for file system fs with a fault of kind in a block of
 * type, -1 if none; *tip counts the trials by class.
 */
static int
iron_cell (const struct iron_row *rows, size_t nrows, size_t m, const char *fs,
           const char *type, const char *kind, char **tip)
{
  size_t counts[8] = {0}, total = 0, j, k;
  int cls = -1;

  for (j = 0; j < nrows; j++)
    if (strcmp (rows[j].fs, fs) == 0 && strcmp (rows[j].type, type) == 0 &&
        strcmp (rows[j].kind, kind) == 0 && rows[j].cls[m] >= 0) {
      counts[rows[j].cls[m]]++;
      total++;
    }
  for (k = 0; k < iron_maps[m].n; k++)
    if (counts[k] && (cls < 0 || iron_maps[m].worst || counts[k] > counts[cls]))
      cls = (int)k;
  if (total) {
    char t[320];
    int len = snprintf (t, sizeof t, "%s, %s: %zu trials", type, kind, total);
    for (k = 0; k < iron_maps[m].n; k++)
      if (counts[k] && len > 0 && (size_t)len < sizeof t)
        len += snprintf (t + len, sizeof t - len, "; %zu %s", counts[k],
                         iron_maps[m].legend[k]);
    *tip = strdup (t);
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
  char **tips;
  size_t i, nt, m;
  char title[96];

  for (i = 0; i < nrows; i++)
    if (strcmp (rows[i].fs, fs) == 0)
      strs_index (&types, rows[i].type);
  nt = types.n;
  cls = malloc (nt * NKINDS * sizeof *cls);
  tips = calloc (nt * NKINDS, sizeof *tips);
  if (cls == NULL || tips == NULL) {
    free (cls);
    free (tips);
    strs_free (&types);
    return -1;
  }
  fputs ("<h3>", fp);
  fd_html (fp, fs);
  fputs ("</h3>\n", fp);
  for (m = 0; m < sizeof iron_maps / sizeof iron_maps[0]; m++) {
    for (i = 0; i < nt * NKINDS; i++)
      cls[i] = iron_cell (rows, nrows, m, fs, types.v[i / NKINDS],
                          iron_kinds[i % NKINDS], &tips[i]);
    snprintf (title, sizeof title, "IRON fingerprint of %s: %s", fs,
              iron_maps[m].title);
    fd_svg_heat (fp, title, (const char *const *)types.v, nt, iron_kinds,
                 NKINDS, cls, (const char *const *)tips, iron_maps[m].legend,
                 iron_maps[m].n);
    for (i = 0; i < nt * NKINDS; i++) {
      free (tips[i]);
      tips[i] = NULL;
    }
  }
  free (tips);
  free (cls);
  strs_free (&types);
  return 0;
}

static void
section_iron (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  sqlite3_stmt *st =
      prepare (db,
               "SELECT fs, ttype, tkind, coalesce(check_outcome, ''), "
               " coalesce(recheck_outcome, ''), lost, error, "
               " coalesce(detection, ''), coalesce(recovery, '') FROM t "
               "WHERE campaign = ?1 AND run_id = ?2 "
               " AND ttype NOT IN ('', '+') "
               "ORDER BY fs, ttype, tkind",
               c, r);
  struct strs fss = {0};
  struct iron_row *rows = NULL;
  size_t nrows = 0, f;

  fputs ("<h2>IRON fingerprint: what each file system does with a bad "
         "block</h2>\n"
         "<p>Trials that fault one block of a type (rows) with a kind of "
         "fault (columns): ure = unreadable, lse = latent sector error, rot "
         "= one bit flipped at rest, and the last write to the block lost, "
         "misdirected (landed nearby) or torn.  Three maps per file system "
         "(Prabhakaran et al., SOSP'05): the worst outcome over the cell's "
         "trials; how the fault was <b>detected</b> (none, the disk's error "
         "code, the checker's sanity checks, a checksum); and what "
         "<b>recovered</b> from it (none, the error propagated to the "
         "application, a retry, the checker's repair, a redundant copy, a "
         "remapped sector) - the most common over the trials.  Hover for "
         "counts.</p>\n",
         fp);
  while (st && sqlite3_step (st) == SQLITE_ROW) {
    struct iron_row *w = fd_append (&rows, &nrows, sizeof *rows);
    if (w == NULL)
      break;
    snprintf (w->fs, sizeof w->fs, "%s", col (st, 0));
    snprintf (w->type, sizeof w->type, "%s", col (st, 1));
    snprintf (w->kind, sizeof w->kind, "%s", col (st, 2));
    w->cls[0] = iron_class (col (st, 3), col (st, 4),
                            sqlite3_column_double (st, 5), col (st, 6));
    w->cls[1] = index_of (detection_classes, 4, col (st, 7));
    w->cls[2] = index_of (recovery_classes, 6, col (st, 8));
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

  fputs ("<h2>Files lost per fault spec</h2>\n"
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
    fd_svg_bars (fp, "files lost per fault spec", "files per trial",
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

  fputs ("<h2>Crash trials: promises kept and broken</h2>\n"
         "<p>After a power cut, a file the populate made durable (fsync of "
         "the file and its directories, fdatasync after an append, sync, an "
         "atomic rename) must come back as it was promised; losing it is a "
         "<b>violation</b>.  What was still in flight may be lost: "
         "<i>allowed</i>.  Means per trial.</p>\n",
         fp);
  query_table (fp, st, "tttfffft", heads,
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

  fputs ("<h2>Crash points</h2>\n"
         "<p>The crash workload's writes logged once, the disk rebuilt at "
         "flushes spread over them (some with a seeded subset of the writes "
         "a volatile cache held after the flush) and each state checked, "
         "repaired and audited against the promises made by then.</p>\n",
         fp);
  query_table (fp, st, "ttttttt", heads, "No crash points this night.");
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

  fputs ("<h2>Power cuts during repair</h2>\n"
         "<p>The power goes after the repair's Kth write; when it is back "
         "the checker repairs again, and once more if the recheck is not "
         "clean (Gatla et al., FAST'18).  Files lost: against the same trial "
         "repaired without a cut this night, mean per trial.</p>\n",
         fp);
  query_table (fp, st, "ttttttt?", heads, "No repair was cut this night.");
}

/* One line per label over the nights: the median of the query's values
 * (label, run_id, value) per label and night.
 */
static void
trend_chart (FILE *fp, sqlite3 *db, const char *c, const char *sql,
             const struct strs *nights, const char *title, const char *unit)
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
                  series, lines.n);
  }
  free (series);
  free (m);
  groups_free (&gs);
  strs_free (&lines);
}

/* 5. Night over night: fsck time and the share of trials losing data. */
static void
section_trends (FILE *fp, sqlite3 *db, const char *c)
{
  sqlite3_stmt *st;
  struct strs nights = {0};
  size_t i;

  fputs ("<h2>Night over night</h2>\n", fp);
  st = prepare (db,
                "SELECT run_id FROM t WHERE campaign = ?1 GROUP BY run_id "
                "ORDER BY min(id) DESC LIMIT 30",
                c, NULL);
  while (st && sqlite3_step (st) == SQLITE_ROW)
    strs_index (&nights, col (st, 0));
  sqlite3_finalize (st);
  if (nights.n < 2) {
    fputs ("<p class=\"none\">One night so far: trends start with the "
           "second.</p>\n",
           fp);
    strs_free (&nights);
    return;
  }
  /* Oldest first, as a time axis reads. */
  for (i = 0; i < nights.n / 2; i++) {
    char *x = nights.v[i];
    nights.v[i] = nights.v[nights.n - 1 - i];
    nights.v[nights.n - 1 - i] = x;
  }
  trend_chart (
      fp, db, c,
      "SELECT fs || ' ' || disk || ', ' || load, run_id, check_s FROM t WHERE "
      "campaign = ?1 AND check_s IS NOT NULL AND " PLAIN " ORDER BY 1",
      &nights, "median fsck time per night", "s");
  trend_chart (fp, db, c,
               "SELECT fs, run_id, 100.0 * avg(broken > 0 OR error != '') "
               "FROM tb WHERE campaign = ?1 GROUP BY 1, 2 ORDER BY 1",
               &nights, "trials losing data or failing, per night", "%");
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
  static const char *const heads[] = {"scenario", "trials", "fsck (s)",
                                      "restore (s)", "restore quicker"};

  fputs ("<h2>fsck or restore?</h2>\n"
         "<p>The checker's virtual time to get the file system back (check "
         "and repairs) beside a restore of the bytes in use from backup "
         "(written back through the drive model, or at the trial's "
         "<code>--restore-rate</code>); means over the trials.</p>\n",
         fp);
  query_table (fp, st, "ttggt", heads, "No trial whose check ran.");
}

/* The night's errors, so nobody has to open the database to see them. */
static void
section_errors (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  sqlite3_stmt *st = prepare (db,
                              "SELECT scenario, seed, error FROM t WHERE "
                              "campaign = ?1 AND run_id = ?2 AND error != '' "
                              "ORDER BY id",
                              c, r);
  static const char *const heads[] = {"scenario", "seed", "error"};

  fputs ("<h2>Trials that ended in an error</h2>\n", fp);
  query_table (fp, st, "ttt", heads, "None.");
}

int
fd_report_write (struct sqlite3 *db, const char *campaign, const char *run_id,
                 FILE *fp)
{
  sqlite3_stmt *st =
      prepare (db,
               "SELECT count(*), sum(error != ''), sum(broken > 0), "
               " count(DISTINCT scenario), min(id), "
               " coalesce(sum(crash AND violations IS NOT NULL), 0), "
               " coalesce(sum(violations > 0 AND crash), 0), "
               " coalesce(sum(CASE WHEN crash THEN violations END), 0), "
               " coalesce(sum(CASE WHEN crash THEN allowed END), 0) "
               "FROM tb WHERE campaign = ?1 AND run_id = ?2",
               campaign, run_id);
  long long n = 0, errors = 0, lost = 0, scenarios = 0;
  long long crashes = 0, crash_broke = 0, crash_violations = 0,
            crash_allowed = 0;
  /* Trials recorded by `futuredisk run --db` belong to no campaign. */
  const char *title = campaign[0] ? campaign : "trials outside campaigns";
  const char *night = run_id[0] ? run_id : "(none)";

  if (st && sqlite3_step (st) == SQLITE_ROW) {
    n = sqlite3_column_int64 (st, 0);
    errors = sqlite3_column_int64 (st, 1);
    lost = sqlite3_column_int64 (st, 2);
    scenarios = sqlite3_column_int64 (st, 3);
    crashes = sqlite3_column_int64 (st, 5);
    crash_broke = sqlite3_column_int64 (st, 6);
    crash_violations = sqlite3_column_int64 (st, 7);
    crash_allowed = sqlite3_column_int64 (st, 8);
  }
  sqlite3_finalize (st);
  fputs ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<title>futuredisk: ",
         fp);
  fd_html (fp, title);
  fputs (" ", fp);
  fd_html (fp, night);
  fputs ("</title>\n<style>body{font-family:sans-serif;max-width:60em;"
         "margin:1em auto;padding:0 1em;color:#222}"
         "table{border-collapse:collapse;margin:.5em 0}"
         "td,th{border:1px solid #ccc;padding:.2em .6em;text-align:right}"
         "td:first-child,th:first-child{text-align:left}"
         "svg{display:block;margin:.5em 0}.none{color:#777}"
         "</style></head><body>\n<h1>futuredisk report: ",
         fp);
  fd_html (fp, title);
  fputs ("</h1>\n<p>Night <b>", fp);
  fd_html (fp, night);
  fprintf (fp,
           "</b>: %lld trials in %lld scenarios; %lld lost data, %lld ended "
           "in an error.",
           n, scenarios, lost, errors);
  if (crashes)
    fprintf (fp,
             " Of %lld crash trials, <b>%lld broke a durability promise</b> "
             "(%lld files: violations); %lld files that were in flight "
             "were lost, which a crash allows.",
             crashes, crash_broke, crash_violations, crash_allowed);
  fputs ("</p>\n", fp);
  section_generations (fp, db, campaign, run_id);
  section_passes (fp, db, campaign, run_id);
  section_iron (fp, db, campaign, run_id);
  section_loss (fp, db, campaign, run_id);
  section_crash (fp, db, campaign, run_id);
  section_crash_points (fp, db, campaign, run_id);
  section_repair_cut (fp, db, campaign, run_id);
  section_restore (fp, db, campaign, run_id);
  section_trends (fp, db, campaign);
  section_errors (fp, db, campaign, run_id);
  fputs ("<p><small>Generated by futuredisk " FUTUREDISK_VERSION
         " from the trial database (harness/SCHEMA.md).</small></p>\n"
         "</body></html>\n",
         fp);
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
