/* futuredisk — harness: `futuredisk merge`, shards' databases into one.
 *
 * Shards of a campaign run on separate machines, each into its own
 * database; merging copies every trial (with its phases, passes, audit,
 * damaged files and evidence, and the machine it ran on) that the
 * destination does not already hold.  A
 * trial is known by its whole JSON record, timings included, so merging
 * the same shard twice adds nothing, and two different trials are never
 * taken for one.
 */
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "db.h"
#include "options.h"

static void
merge_usage (FILE *fp)
{
  fprintf (fp,
           "Usage: %s merge DEST SRC...\n"
           "Copy the trials of the SRC databases that DEST lacks into DEST "
           "(created\nif missing): the shards of a campaign, run on "
           "separate machines, become\none database.\n",
           fd_progname);
}

/* The trial columns (all but id), in one place for the INSERT ... SELECT. */
#define TRIAL_COLUMNS                                                          \
  "recorded, fs, profile, size, seed, fill_pct, faults, target, "              \
  "targets_hit, files, bytes, write_probe, error, version, record, "           \
  "campaign, run_id, rep, crash, meta_only, time_mode, think, scenario, "      \
  "repair_cut, crash_points, tree, mount, mount_reason, escalate, host, "      \
  "evidence_missing, model_version"

/* The machines are the destination's rows: a trial's env_id is looked
 * up there by the source row's contents (merge_envs adds them first).
 */
#define ENV_COLUMNS                                                            \
  "host, kernel, futuredisk, nbdkit, e2fsprogs, xfsprogs, btrfs_progs"
#define ENV_OF_SRC                                                             \
  "(SELECT m.id FROM main.environments m JOIN src.environments e USING "       \
  "(" ENV_COLUMNS ") WHERE e.id = s.env_id)"

/* Print the statement's error, naming src; -1.  Before any other
 * statement is finalized: finalizing one that ran clears the message.
 */
static int
sql_error (sqlite3 *db, const char *src)
{
  fprintf (stderr, "%s merge: %s: %s\n", fd_progname, src, sqlite3_errmsg (db));
  return -1;
}

/* Run st to its end and finalize it: 0, or -1 with the error left in
 * sqlite3_errmsg.
 */
static int
step_once (sqlite3_stmt *st)
{
  int rc = sqlite3_step (st) == SQLITE_DONE ? 0 : -1;

  sqlite3_finalize (st);
  return rc;
}

static int
attach_src (sqlite3 *db, const char *src)
{
  sqlite3_stmt *st;

  if (sqlite3_prepare_v2 (db, "ATTACH DATABASE ? AS src", -1, &st, NULL) !=
      SQLITE_OK)
    return -1;
  sqlite3_bind_text (st, 1, src, -1, SQLITE_STATIC);
  return step_once (st);
}

/* The child's columns but trial_id, from its own definition in src:
 * "a, b, c" into cols.
 */
static int
child_columns (sqlite3 *db, const char *child, char *cols, size_t len)
{
  sqlite3_stmt *st;
  char sql[512];

  cols[0] = '\0';
  snprintf (sql, sizeof sql, "PRAGMA src.table_info(%s)", child);
  if (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) != SQLITE_OK)
    return -1;
  while (sqlite3_step (st) == SQLITE_ROW) {
    const char *c = (const char *)sqlite3_column_text (st, 1);
    if (strcmp (c, "trial_id") == 0)
      continue;
    if (strlen (cols) + strlen (c) + 3 < len)
      snprintf (cols + strlen (cols), len - strlen (cols), "%s%s",
                cols[0] ? ", " : "", c);
  }
  sqlite3_finalize (st);
  return 0;
}

/* Copy src's trial old, with its rows in the child tables, into main. */
static int
copy_trial (sqlite3 *db, sqlite3_int64 old)
{
  static const char *const children[] = {"phases",     "passes",  "audit",
                                         "durability", "damaged", "evidence"};
  sqlite3_stmt *st;
  sqlite3_int64 id;
  size_t k;

  if (sqlite3_prepare_v2 (db,
                          "INSERT INTO main.trials (" TRIAL_COLUMNS
                          ", env_id) SELECT " TRIAL_COLUMNS ", " ENV_OF_SRC
                          " FROM src.trials s WHERE id = ?",
                          -1, &st, NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_int64 (st, 1, old);
  if (step_once (st) == -1)
    return -1;
  id = sqlite3_last_insert_rowid (db);
  for (k = 0; k < sizeof children / sizeof children[0]; k++) {
    char cols[512], sql[512];

    if (child_columns (db, children[k], cols, sizeof cols) == -1)
      return -1;
    snprintf (sql, sizeof sql,
              "INSERT INTO main.%s (trial_id, %s) SELECT ?1, %s FROM "
              "src.%s WHERE trial_id = ?2 ORDER BY rowid",
              children[k], cols, cols, children[k]);
    if (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) != SQLITE_OK)
      return -1;
    sqlite3_bind_int64 (st, 1, id);
    sqlite3_bind_int64 (st, 2, old);
    if (step_once (st) == -1)
      return -1;
  }
  return 0;
}

/* In one transaction, copy the trials of the attached src that main
 * lacks; the caller rolls back on -1.
 */
static int
merge_trials (sqlite3 *db, const char *src, long long *added, long long *known)
{
  sqlite3_stmt *sel;

  if (sqlite3_exec (db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK ||
      sqlite3_exec (db,
                    "INSERT OR IGNORE INTO main.environments (" ENV_COLUMNS
                    ") SELECT " ENV_COLUMNS " FROM src.environments",
                    NULL, NULL, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2 (db,
                          "SELECT id, EXISTS (SELECT 1 FROM main.trials m "
                          "WHERE m.record = s.record) FROM src.trials s "
                          "ORDER BY id",
                          -1, &sel, NULL) != SQLITE_OK)
    return sql_error (db, src);
  while (sqlite3_step (sel) == SQLITE_ROW) {
    if (sqlite3_column_int (sel, 1)) {
      (*known)++;
      continue;
    }
    if (copy_trial (db, sqlite3_column_int64 (sel, 0)) == -1) {
      sql_error (db, src);
      sqlite3_finalize (sel);
      return -1;
    }
    (*added)++;
  }
  sqlite3_finalize (sel);
  if (sqlite3_exec (db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    return sql_error (db, src);
  return 0;
}

static int
merge_one (sqlite3 *db, const char *src, long long *added, long long *known)
{
  struct fm_err err;
  sqlite3 *s;
  int rc;

  /* Open it on its own first: that checks (and upgrades) its schema. */
  if ((s = fd_db_open (src, false, &err)) == NULL) {
    fprintf (stderr, "%s merge: %s\n", fd_progname, err.msg);
    return -1;
  }
  sqlite3_close (s);
  if (attach_src (db, src) == -1)
    return sql_error (db, src);
  rc = merge_trials (db, src, added, known);
  if (rc == -1)
    sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
  sqlite3_exec (db, "DETACH DATABASE src", NULL, NULL, NULL);
  return rc;
}

struct merge_opts {
  const char *dest;
  char **srcs;
  int nsrc;
};

/* Operands only, as they are: a SRC may well start with '-'. */
static const struct fd_cmd_opts merge_cmd = {"merge", NULL, merge_usage, NULL};

static int
merge_parse (int argc, char **argv, struct merge_opts *o)
{
  int rc;

  rc = fd_operands_parse (&merge_cmd, argc, argv, 0, INT_MAX);
  if (rc != FD_OPTS_RUN)
    return rc;
  if (argc < 3) {
    fd_usage_error ("merge", "DEST and at least one SRC are required");
    merge_usage (stderr);
    return FD_OPTS_BAD;
  }
  *o = (struct merge_opts){argv[1], argv + 2, argc - 2};
  return FD_OPTS_RUN;
}

static int
merge_run (const struct merge_opts *o)
{
  struct fm_err err;
  sqlite3 *db;
  int i, ret = 0;

  if ((db = fd_db_open (o->dest, true, &err)) == NULL) {
    fprintf (stderr, "%s merge: %s\n", fd_progname, err.msg);
    return 1;
  }
  for (i = 0; i < o->nsrc; i++) {
    long long added = 0, known = 0;
    if (strcmp (o->srcs[i], o->dest) == 0) {
      fprintf (stderr, "%s merge: %s is the destination\n", fd_progname,
               o->srcs[i]);
      ret = 1;
      continue;
    }
    if (merge_one (db, o->srcs[i], &added, &known) == -1)
      ret = 1;
    else
      printf ("%s: %lld trials added, %lld already there\n", o->srcs[i], added,
              known);
  }
  sqlite3_close (db);
  return ret;
}

int
cmd_merge (int argc, char **argv)
{
  struct merge_opts o;
  int rc;

  rc = merge_parse (argc, argv, &o);
  if (rc != FD_OPTS_RUN)
    return rc;
  return merge_run (&o);
}
