/* futuredisk — harness: trial records in SQLite (see db.h, SCHEMA.md). */
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "faultmodels/version.h"
#include "db.h"
#include "evidence.h"
#include "hostenv.h"

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

/* Version 5: a file system the repair left unmountable is a finding
 * (mount, mount_reason), no longer an error; each trial's evidence, and
 * the machine and tool versions it ran with.  Trials recorded before it
 * get their mount outcome from their records: an error "mount after
 * repair: ..." becomes UNMOUNTABLE with the kernel's reason; a trial
 * that was audited mounted.  They have no evidence.
 */
static const char schema_v5[] =
    "ALTER TABLE trials ADD COLUMN mount TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE trials ADD COLUMN mount_reason TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE trials ADD COLUMN env_id INTEGER;"
    "ALTER TABLE trials ADD COLUMN escalate INTEGER NOT NULL DEFAULT 0;"
    "CREATE TABLE IF NOT EXISTS evidence ("
    "  trial_id INTEGER NOT NULL REFERENCES trials(id), name TEXT NOT NULL,"
    "  bytes INTEGER NOT NULL, kept INTEGER NOT NULL, data BLOB NOT NULL,"
    "  PRIMARY KEY (trial_id, name));"
    "CREATE TABLE IF NOT EXISTS environments ("
    "  id INTEGER PRIMARY KEY, host TEXT NOT NULL, kernel TEXT NOT NULL,"
    "  futuredisk TEXT NOT NULL, nbdkit TEXT NOT NULL,"
    "  e2fsprogs TEXT NOT NULL, xfsprogs TEXT NOT NULL,"
    "  btrfs_progs TEXT NOT NULL, UNIQUE (host, kernel, futuredisk, nbdkit,"
    "  e2fsprogs, xfsprogs, btrfs_progs));"
    "UPDATE trials SET mount = 'UNMOUNTABLE', mount_reason = CASE"
    "  WHEN instr(error, '; kernel: ') > 0"
    "  THEN substr(error, instr(error, '; kernel: ') + 10)"
    "  ELSE substr(error, 21) END, error = ''"
    "  WHERE error LIKE 'mount after repair: %';"
    "UPDATE trials SET mount = 'MOUNTED' WHERE write_probe IS NOT NULL;";

/* Version 6: the host the checkers ran on (--host, a campaign's host
 * key, the profile's); trials before it name theirs in the record.
 */
static const char schema_v6[] =
    "ALTER TABLE trials ADD COLUMN host TEXT NOT NULL DEFAULT 'native';"
    "UPDATE trials SET host = coalesce(json_extract(record, '$.host'),"
    " 'native');";

/* Version 7: what of each trial's evidence is missing and why
 * (evidence_missing), where before a failure to store it was said on the
 * run's standard error only: an xfs trial that repaired twice named both
 * outputs repair.out, and the second's failed row took every item with
 * it.  Older trials without evidence say what can still be told: a trial
 * the version 5 upgrade found (no machine, env_id NULL) was recorded
 * before evidence was kept; for a later one the reason is not known.
 * And the drive model's version (faultmodels/version.h), so that times
 * of different models are not compared: trials before it have none in
 * their records, 1, "1 or unknown".
 */
static const char schema_v7[] =
    "ALTER TABLE trials ADD COLUMN model_version INTEGER NOT NULL DEFAULT 1;"
    "ALTER TABLE trials ADD COLUMN evidence_missing TEXT NOT NULL DEFAULT '';"
    "UPDATE trials SET evidence_missing = CASE WHEN env_id IS NULL"
    "  THEN 'recorded before schema 5, which began keeping it'"
    "  ELSE 'why was not recorded (before schema 7 futuredisk run said it on"
    " standard error only)' END"
    "  WHERE NOT EXISTS (SELECT 1 FROM evidence e WHERE e.trial_id = "
    "trials.id);";

/* Since version 3 a repair cut and a sweep of crash points are part of
 * the scenario, since version 4 a tree other than the mixed one, since
 * version 5 an escalation, since version 6 a host other than this
 * machine (so the scenarios of older trials stay as they were).  A disk
 * attached `serial` is a drive whose queue is one deep, another scenario
 * (the record's `attach`; nbd and loop give the drive the same queue).
 */
#define SCENARIO_SQL                                                           \
  SCENARIO_SQL_V2                                                              \
  " || CASE WHEN repair_cut > 0 THEN ' repair-cut=' || "                       \
  "repair_cut ELSE '' END || CASE WHEN crash_points != 0 THEN "                \
  "' crash-points=' || CASE WHEN crash_points < 0 THEN 'all' "                 \
  "ELSE crash_points END ELSE '' END || CASE WHEN tree != 'mixed' THEN "       \
  "' tree=' || tree ELSE '' END || CASE WHEN escalate THEN ' escalate' "       \
  "ELSE '' END || CASE WHEN host != 'native' THEN ' host=' || host ELSE '' "   \
  "END || CASE WHEN json_extract(record, '$.attach') = 'serial' THEN "         \
  "' attach=serial' ELSE '' END"

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
        (version < 5 &&
         sqlite3_exec (db, schema_v5, NULL, NULL, NULL) != SQLITE_OK) ||
        (version < 6 &&
         sqlite3_exec (db, schema_v6, NULL, NULL, NULL) != SQLITE_OK) ||
        (version < 7 &&
         sqlite3_exec (db, schema_v7, NULL, NULL, NULL) != SQLITE_OK) ||
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

/* The id of this machine's row of environments (added if new). */
static int
env_id (sqlite3 *db, long long *id)
{
  const struct fd_hostenv *e = fd_hostenv ();
  sqlite3_stmt *st;
  int r = -1;

  if (exec (db,
            "INSERT OR IGNORE INTO environments (host, kernel, futuredisk,"
            " nbdkit, e2fsprogs, xfsprogs, btrfs_progs) VALUES"
            " (?,?,?,?,?,?,?)",
            "ttttttt", e->host, e->kernel, e->futuredisk, e->nbdkit,
            e->e2fsprogs, e->xfsprogs, e->btrfs_progs) == -1 ||
      sqlite3_prepare_v2 (db,
                          "SELECT id FROM environments WHERE host = ? AND"
                          " kernel = ? AND futuredisk = ? AND nbdkit = ? AND"
                          " e2fsprogs = ? AND xfsprogs = ? AND btrfs_progs = ?",
                          -1, &st, NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_text (st, 1, e->host, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 2, e->kernel, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 3, e->futuredisk, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 4, e->nbdkit, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 5, e->e2fsprogs, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 6, e->xfsprogs, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 7, e->btrfs_progs, -1, SQLITE_STATIC);
  if (sqlite3_step (st) == SQLITE_ROW) {
    *id = sqlite3_column_int64 (st, 0);
    r = 0;
  }
  sqlite3_finalize (st);
  return r;
}

/* The trial's row (its inputs, outcome columns, machine, scenario):
 * its id into *id.  -1 with SQLite's message.
 */
static int
add_trial (sqlite3 *db, const struct trial_spec *s,
           const struct trial_result *r, const char *record, long long *id)
{
  long long env;

  if (exec (db,
            "INSERT INTO trials (fs, profile, size, seed, fill_pct, faults,"
            " target, targets_hit, files, bytes, error, version, record,"
            " campaign, run_id, rep, crash, meta_only, time_mode, think,"
            " repair_cut, crash_points, tree)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            "tttidtttiitttttiiittiit", s->fs->name, s->profile, s->size,
            (long long)s->seed, s->fill, s->faults_spec ? s->faults_spec : "",
            s->target ? s->target : "", r->targets, (long long)r->m.n,
            (long long)r->m.bytes, r->error, FUTUREDISK_VERSION, record,
            s->campaign ? s->campaign : "", s->run_id ? s->run_id : "",
            (long long)s->rep, (long long)s->crash,
            (long long)(s->populate.meta_only ? s->populate.files : 0),
            s->time_mode ? s->time_mode : "virtual",
            s->think ? s->think : "real", (long long)s->repair_cut,
            /* all: -1 in SQLite's signed integers */
            (long long)s->crash_points, fd_tree_name (s->populate.tree)) == -1)
    return -1;
  *id = sqlite3_last_insert_rowid (db);
  if (env_id (db, &env) == -1 ||
      exec (db,
            "UPDATE trials SET mount = ?, mount_reason = ?, env_id = ?,"
            " escalate = ?, host = ?, model_version = ? WHERE id = ?",
            "ttiitii", r->mount ? r->mount : "", r->mount_reason, env,
            (long long)s->escalate, s->host ? s->host : "native",
            (long long)FM_MODEL_VERSION, *id) == -1 ||
      exec (db, "UPDATE trials SET scenario = " SCENARIO_SQL " WHERE id = ?",
            "i", *id) == -1)
    return -1;
  if (r->audited && exec (db, "UPDATE trials SET write_probe = ? WHERE id = ?",
                          "ii", (long long)r->probe_ok, *id) == -1)
    return -1;
  return 0;
}

/* The trial's phases and their passes. */
static int
add_phases (sqlite3 *db, const struct trial_result *r, long long id)
{
  size_t i, j;

  for (i = 0; i < r->nph; i++) {
    const struct phase *p = &r->ph[i];
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
      return -1;
    for (j = 0; j < p->npasses; j++)
      if (exec (db, "INSERT INTO passes VALUES (?,?,?,?)", "ittd", id, p->name,
                p->passes[j].name, p->passes[j].seconds) == -1)
        return -1;
  }
  return 0;
}

/* What the audit found: its classes, durability and damaged files. */
static int
add_audit (sqlite3 *db, const struct trial_result *r, long long id)
{
  size_t i;

  for (i = 0; r->audited && i < FD_AUDIT_NCLASSES; i++)
    if (exec (db, "INSERT INTO audit VALUES (?,?,?)", "iti", id,
              fd_audit_class_name (i), (long long)r->audit.count[i]) == -1)
      return -1;
  for (i = 0; r->audited && i < FD_DURABILITY_NCLASSES; i++)
    if (exec (db, "INSERT INTO durability VALUES (?,?,?)", "iti", id,
              fd_durability_class_name (i),
              (long long)r->audit.durability[i]) == -1)
      return -1;
  for (i = 0; i < r->ndamaged; i++)
    if (exec (db, "INSERT INTO damaged VALUES (?,?,?,?)", "ittt", id,
              r->damaged[i].cls, r->damaged[i].path, r->damaged[i].cause) == -1)
      return -1;
  return 0;
}

/* The trial with its phases, audit and evidence in one transaction, and
 * in its evidence_missing what of ev is not kept and why (into why, len
 * bytes).  lost: why no evidence is stored at all (ev is then not).  0,
 * or 1 when something is missing; -1 with SQLite's message; 2 when the
 * transaction failed (SQLite rolled it back, or the last row or the
 * commit failed) after evidence went in, which may be what filled the
 * disk (why: SQLite's message).
 */
static int
add_once (sqlite3 *db, const struct trial_spec *s,
          const struct trial_result *res, const char *record,
          const struct fd_evidence *ev, const char *lost, char *why, size_t len)
{
  struct fm_err e;
  long long id;

  if (sqlite3_exec (db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK ||
      add_trial (db, s, res, record, &id) == -1 ||
      add_phases (db, res, id) == -1 || add_audit (db, res, id) == -1)
    return -1;
  /* No evidence collected at all (a made-up trial): nothing missing. */
  snprintf (why, len, "%s", lost ? lost : ev ? ev->unkept : "");
  if (lost == NULL && ev &&
      fd_evidence_store (db, id, ev, why, len, &e) == -1) {
    snprintf (why, len, "%s", e.msg);
    return 2;
  }
  if (exec (db, "UPDATE trials SET evidence_missing = ? WHERE id = ?", "ti",
            why, id) == -1 ||
      sqlite3_exec (db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
    if (lost)
      return -1;
    snprintf (why, len, "%s", sqlite3_errmsg (db));
    return 2;
  }
  return why[0] != '\0';
}

int
fd_db_add (const char *path, const struct trial_spec *s,
           const struct trial_result *res, const char *record,
           const struct fd_evidence *ev, struct fm_err *err)
{
  sqlite3 *db = fd_db_open (path, true, err);
  char why[FD_EVIDENCE_WHY], lost[FD_EVIDENCE_WHY + 128];
  int r;

  if (db == NULL)
    return -1;
  /* Evidence that cannot be stored costs the trial nothing else: where
   * the transaction failed with it, the trial goes in again without it,
   * saying why.
   */
  if ((r = add_once (db, s, res, record, ev, NULL, why, sizeof why)) == 2) {
    sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL); /* if still open */
    snprintf (lost, sizeof lost,
              "storing it failed (%s), so the trial was recorded without it",
              why);
    r = add_once (db, s, res, record, ev, lost, why, sizeof why);
  }
  if (r == -1) {
    fail (db, path, "insert", err);
    sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close (db);
    return -1;
  }
  sqlite3_close (db);
  if (r == 1)
    fm_fail (err, "%s: evidence not kept: %s", path, why);
  return r;
}
