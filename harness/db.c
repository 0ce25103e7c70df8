/* futuredisk — harness: trial records in SQLite (see db.h, SCHEMA.md). */
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "db.h"

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS trials ("
    "  id INTEGER PRIMARY KEY,"
    "  recorded TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),"
    "  fs TEXT NOT NULL, profile TEXT NOT NULL, size TEXT NOT NULL,"
    "  seed INTEGER NOT NULL, fill_pct REAL NOT NULL,"
    "  faults TEXT NOT NULL, target TEXT NOT NULL, targets_hit TEXT NOT NULL,"
    "  files INTEGER NOT NULL, bytes INTEGER NOT NULL,"
    "  write_probe INTEGER, error TEXT NOT NULL, version TEXT NOT NULL,"
    "  record TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS phases ("
    "  trial_id INTEGER NOT NULL REFERENCES trials(id), seq INTEGER NOT NULL,"
    "  name TEXT NOT NULL, virtual_s REAL, wall_s REAL, cpu_s REAL,"
    "  reads INTEGER, writes INTEGER, bytes_read INTEGER,"
    "  bytes_written INTEGER, exit INTEGER, signal INTEGER, outcome TEXT,"
    "  PRIMARY KEY (trial_id, seq));"
    "CREATE TABLE IF NOT EXISTS passes ("
    "  trial_id INTEGER NOT NULL REFERENCES trials(id), phase TEXT NOT NULL,"
    "  pass TEXT NOT NULL, seconds REAL NOT NULL);"
    "CREATE TABLE IF NOT EXISTS audit ("
    "  trial_id INTEGER NOT NULL REFERENCES trials(id), class TEXT NOT NULL,"
    "  files INTEGER NOT NULL, PRIMARY KEY (trial_id, class));"
    "CREATE TABLE IF NOT EXISTS damaged ("
    "  trial_id INTEGER NOT NULL REFERENCES trials(id), class TEXT NOT NULL,"
    "  path TEXT NOT NULL, cause TEXT NOT NULL);";

/* Version 2: trials know their campaign night and scenario, phases count
 * the reads the disk failed.  Applied to a new database after the
 * version 1 schema, and to a version 1 database as its upgrade.
 */
#define SCENARIO_SQL_V2                                                        \
  "printf('fs=%s profile=%s size=%s fill=%g meta=%d crash=%d faults=%s "       \
  "target=%s', fs, profile, size, fill_pct, meta_only, crash, faults, "        \
  "target) || CASE WHEN time_mode = 'virtual' THEN '' "                        \
  "ELSE ' time=' || time_mode END || CASE WHEN think = 'real' THEN '' "        \
  "ELSE ' think=' || think END"

static const char schema_v2[] =
    "ALTER TABLE trials ADD COLUMN campaign TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE trials ADD COLUMN run_id TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE trials ADD COLUMN rep INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE trials ADD COLUMN crash INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE trials ADD COLUMN meta_only INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE trials ADD COLUMN time_mode TEXT NOT NULL DEFAULT 'virtual';"
    "ALTER TABLE trials ADD COLUMN think TEXT NOT NULL DEFAULT 'real';"
    "ALTER TABLE trials ADD COLUMN scenario TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE phases ADD COLUMN read_errors INTEGER;"
    "UPDATE trials SET crash = coalesce(json_extract(record, '$.crash'), 0);"
    "UPDATE trials SET scenario = " SCENARIO_SQL_V2 ";"
    "CREATE INDEX IF NOT EXISTS trials_night ON trials (campaign, run_id);";

/* Version 3: each trial's durability classes (what the audit found
 * against what the populate promised).  Older trials have none: their
 * records predate the promises.
 */
static const char schema_v3[] =
    "CREATE TABLE IF NOT EXISTS durability ("
    "  trial_id INTEGER NOT NULL REFERENCES trials(id), class TEXT NOT NULL,"
    "  files INTEGER NOT NULL, PRIMARY KEY (trial_id, class));"
    "ALTER TABLE trials ADD COLUMN repair_cut INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE trials ADD COLUMN crash_points INTEGER NOT NULL DEFAULT 0;";

/* Version 4: the workload tree (--tree); trials before it had the
 * mixed one.
 */
static const char schema_v4[] =
    "ALTER TABLE trials ADD COLUMN tree TEXT NOT NULL DEFAULT 'mixed';";

/* Since version 3 a repair cut and a sweep of crash points are part of
 * the scenario, since version 4 a tree other than the mixed one (so the
 * scenarios of older trials stay as they were).
 */
#define SCENARIO_SQL                                                           \
  SCENARIO_SQL_V2                                                              \
  " || CASE WHEN repair_cut > 0 THEN ' repair-cut=' || "                       \
  "repair_cut ELSE '' END || CASE WHEN crash_points != 0 THEN "                \
  "' crash-points=' || CASE WHEN crash_points < 0 THEN 'all' "                 \
  "ELSE crash_points END ELSE '' END || CASE WHEN tree != 'mixed' THEN "       \
  "' tree=' || tree ELSE '' END"

static int
fail (sqlite3 *db, const char *path, const char *what, struct fm_err *err)
{
  return fm_fail (err, "%s: %s: %s", path, what,
                  db ? sqlite3_errmsg (db) : "out of memory");
}

/* PRAGMA user_version, or -1 when the file is not a database. */
static int
user_version (sqlite3 *db)
{
  sqlite3_stmt *st;
  int version = -1;

  if (sqlite3_prepare_v2 (db, "PRAGMA user_version", -1, &st, NULL) !=
      SQLITE_OK)
    return -1;
  if (sqlite3_step (st) == SQLITE_ROW)
    version = sqlite3_column_int (st, 0);
  sqlite3_finalize (st);
  return version;
}

sqlite3 *
fd_db_open (const char *path, bool create, struct fm_err *err)
{
  sqlite3 *db = NULL;
  int version;
  char pragma[64];

  if (sqlite3_open_v2 (
          path, &db, SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0),
          NULL) != SQLITE_OK) {
    fail (db, path, "open", err);
    sqlite3_close (db);
    return NULL;
  }
  sqlite3_busy_timeout (db, 30000); /* shards may share a file */
  if ((version = user_version (db)) < 0) {
    fail (db, path, "not a futuredisk database", err);
    sqlite3_close (db);
    return NULL;
  }
  if (version < FD_DB_SCHEMA_VERSION) {
    /* Under the write lock, look again: another process may have just
     * created or upgraded it.
     */
    snprintf (pragma, sizeof pragma, "PRAGMA user_version = %d",
              FD_DB_SCHEMA_VERSION);
    if (sqlite3_exec (db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK ||
        (version = user_version (db)) < 0 ||
        (version == 0 &&
         sqlite3_exec (db, schema, NULL, NULL, NULL) != SQLITE_OK) ||
        (version < 2 &&
         sqlite3_exec (db, schema_v2, NULL, NULL, NULL) != SQLITE_OK) ||
        (version < 3 &&
         sqlite3_exec (db, schema_v3, NULL, NULL, NULL) != SQLITE_OK) ||
        (version < 4 &&
         sqlite3_exec (db, schema_v4, NULL, NULL, NULL) != SQLITE_OK) ||
        sqlite3_exec (db, pragma, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec (db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
      fail (db, path, version > 0 ? "upgrade schema" : "create schema", err);
      sqlite3_close (db);
      return NULL;
    }
  } else if (version > FD_DB_SCHEMA_VERSION) {
    fm_fail (err, "%s: schema version %d, this futuredisk knows up to %d", path,
             version, FD_DB_SCHEMA_VERSION);
    sqlite3_close (db);
    return NULL;
  }
  return db;
}

/* Prepare, bind text / int64 / double arguments by a format ("tid"),
 * step.
 */
static int
exec (sqlite3 *db, const char *sql, const char *fmt, ...)
{
  sqlite3_stmt *st;
  va_list ap;
  int i, r;

  if (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) != SQLITE_OK)
    return -1;
  va_start (ap, fmt);
  for (i = 0; fmt[i]; i++) {
    if (fmt[i] == 't')
      sqlite3_bind_text (st, i + 1, va_arg (ap, const char *), -1,
                         SQLITE_TRANSIENT);
    else if (fmt[i] == 'i')
      sqlite3_bind_int64 (st, i + 1, va_arg (ap, long long));
    else if (fmt[i] == 'd')
      sqlite3_bind_double (st, i + 1, va_arg (ap, double));
    /* (unbound parameters are NULL) */
  }
  va_end (ap);
  r = sqlite3_step (st);
  sqlite3_finalize (st);
  return r == SQLITE_DONE ? 0 : -1;
}

int
fd_db_add (const char *path, const struct trial *t, const char *record,
           struct fm_err *err)
{
  sqlite3 *db = fd_db_open (path, true, err);
  long long id;
  size_t i, j;

  if (db == NULL)
    return -1;
  if (sqlite3_exec (db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
    goto fail;
  if (exec (db,
            "INSERT INTO trials (fs, profile, size, seed, fill_pct, faults,"
            " target, targets_hit, files, bytes, error, version, record,"
            " campaign, run_id, rep, crash, meta_only, time_mode, think,"
            " repair_cut, crash_points, tree)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            "tttidtttiitttttiiittiit", t->fs->name, t->profile, t->size,
            (long long)t->seed, t->fill, t->faults_spec ? t->faults_spec : "",
            t->target ? t->target : "", t->targets, (long long)t->m.n,
            (long long)t->m.bytes, t->error, FUTUREDISK_VERSION, record,
            t->campaign ? t->campaign : "", t->run_id ? t->run_id : "",
            (long long)t->rep, (long long)t->crash,
            (long long)(t->populate.meta_only ? t->populate.files : 0),
            t->time_mode ? t->time_mode : "virtual",
            t->think ? t->think : "real", (long long)t->repair_cut,
            /* all: -1 in SQLite's signed integers */
            (long long)t->crash_points, fd_tree_name (t->populate.tree)) == -1)
    goto fail;
  id = sqlite3_last_insert_rowid (db);
  if (exec (db, "UPDATE trials SET scenario = " SCENARIO_SQL " WHERE id = ?",
            "i", id) == -1)
    goto fail;
  if (t->audited && exec (db, "UPDATE trials SET write_probe = ? WHERE id = ?",
                          "ii", (long long)t->probe_ok, id) == -1)
    goto fail;
  for (i = 0; i < t->nph; i++) {
    const struct phase *p = &t->ph[i];
    /* exit, signal and outcome only for checkers (else NULL). */
    if (exec (db,
              "INSERT INTO phases (trial_id, seq, name, virtual_s, wall_s,"
              " cpu_s, reads, writes, bytes_read, bytes_written, read_errors,"
              " exit, signal, outcome) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
              p->outcome ? "iitdddiiiiiiit" : "iitdddiiiii", id, (long long)i,
              p->name, p->virtual_s, p->wall_s, p->cpu_s, (long long)p->reads,
              (long long)p->writes, (long long)p->bytes_read,
              (long long)p->bytes_written, (long long)p->read_errors,
              (long long)p->status, (long long)p->signal, p->outcome) == -1)
      goto fail;
    for (j = 0; j < p->npasses; j++)
      if (exec (db, "INSERT INTO passes VALUES (?,?,?,?)", "ittd", id, p->name,
                p->passes[j].name, p->passes[j].seconds) == -1)
        goto fail;
  }
  for (i = 0; t->audited && i < FD_AUDIT_NCLASSES; i++)
    if (exec (db, "INSERT INTO audit VALUES (?,?,?)", "iti", id,
              fd_audit_class_name (i), (long long)t->audit.count[i]) == -1)
      goto fail;
  for (i = 0; t->audited && i < FD_DURABILITY_NCLASSES; i++)
    if (exec (db, "INSERT INTO durability VALUES (?,?,?)", "iti", id,
              fd_durability_class_name (i),
              (long long)t->audit.durability[i]) == -1)
      goto fail;
  for (i = 0; i < t->ndamaged; i++)
    if (exec (db, "INSERT INTO damaged VALUES (?,?,?,?)", "ittt", id,
              t->damaged[i].cls, t->damaged[i].path, t->damaged[i].cause) == -1)
      goto fail;
  if (sqlite3_exec (db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    goto fail;
  sqlite3_close (db);
  return 0;

fail:
  fail (db, path, "insert", err);
  sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
  sqlite3_close (db);
  return -1;
}
