/* futuredisk — harness: the report's reading of the trial database: the
 * views every section queries (one row per trial), and the helpers that
 * gather query results (report-int.h).
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
#include "progname.h"
#include "db.h"
#include "errmsg.h"
#include "evidence.h"
#include "options.h"
#include "regress.h"
#include "report.h"
#include "robust.h"
#include "report-int.h"
#include "svg.h"

/* One row per trial with what every section needs. */
static const char trial_view[] =
    "CREATE TEMP VIEW t AS SELECT tr.id, tr.campaign, tr.run_id, "
    " tr.scenario, tr.fs, tr.profile, tr.size, tr.faults, tr.target, "
    " tr.crash, tr.meta_only, tr.error, tr.files, tr.seed, tr.rep, "
    " tr.mount, tr.mount_reason, tr.env_id, tr.model_version, "
    " coalesce(json_extract(tr.record, '$.cloned'), 0) AS cloned, "
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

bool
rp_has_table (sqlite3 *db, const char *table)
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
            "'' AS mount_reason, NULL AS env_id, 1 AS model_version "
            "FROM main.trials;";

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

  /* The newest night by time: a merge may add an older one last. */
  if (sqlite3_prepare_v2 (db,
                          "SELECT campaign, run_id FROM (" FD_DB_NIGHTS_SQL
                          ") WHERE (?1 IS NULL OR campaign = ?1) AND (?2 = "
                          "'' OR run_id = ?2) ORDER BY " FD_DB_NIGHT_ORDER_DESC
                          " LIMIT 1",
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
size_t
rp_strs_index (struct strs *s, const char *x)
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

void
rp_strs_free (struct strs *s)
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
int
rp_groups_add (struct groups *gs, size_t a, size_t b, double x)
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
double *
rp_groups_medians (struct groups *gs, size_t na, size_t nb, double empty)
{
  double *m = malloc ((na * nb + 1) * sizeof *m);
  size_t i;

  for (i = 0; m && i < na * nb; i++)
    m[i] = empty;
  for (i = 0; m && i < gs->n; i++)
    m[gs->g[i].a * nb + gs->g[i].b] = fd_median (gs->g[i].v, gs->g[i].n);
  return m;
}

void
rp_groups_free (struct groups *gs)
{
  size_t i;

  for (i = 0; i < gs->n; i++)
    free (gs->g[i].v);
  free (gs->g);
  memset (gs, 0, sizeof *gs);
}

sqlite3_stmt *
rp_prepare (sqlite3 *db, const char *sql, const char *campaign,
            const char *run_id)
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

const char *
rp_col (sqlite3_stmt *st, int i)
{
  const unsigned char *s = sqlite3_column_text (st, i);
  return s ? (const char *)s : "";
}

/* Rows of (row label, column label, ..., value at vcol) into groups
 * indexed by the labels' positions in a and b; the statement finalized.
 */
void
rp_grid_from (sqlite3_stmt *st, struct strs *a, struct strs *b, int vcol,
              struct groups *gs)
{
  while (st && sqlite3_step (st) == SQLITE_ROW) {
    size_t i = rp_strs_index (a, rp_col (st, 0));
    size_t j = rp_strs_index (b, rp_col (st, 1));
    if (i == (size_t)-1 || j == (size_t)-1 ||
        rp_groups_add (gs, i, j, sqlite3_column_double (st, vcol)) == -1)
      break;
  }
  sqlite3_finalize (st);
}
