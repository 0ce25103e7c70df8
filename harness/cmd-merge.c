/* futuredisk — harness: `futuredisk merge`, shards' databases into one.
 *
 * Shards of a campaign run on separate machines, each into its own
 * database; merging copies every trial (with its phases, passes, audit
 * and damaged files) that the destination does not already hold.  A
 * trial is known by its whole JSON record, timings included, so merging
 * the same shard twice adds nothing, and two different trials are never
 * taken for one.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "db.h"

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
  "campaign, run_id, rep, crash, meta_only, time_mode, think, scenario"

static int
merge_one (sqlite3 *db, const char *src, long long *added, long long *known)
{
  sqlite3_stmt *sel = NULL;
  struct fm_err err;
  sqlite3 *s;
  int rc = -1;

  /* Open it on its own first: that checks (and upgrades) its schema. */
  if ((s = fd_db_open (src, false, &err)) == NULL) {
    fprintf (stderr, "%s merge: %s\n", fd_progname, err.msg);
    return -1;
  }
  sqlite3_close (s);
  {
    sqlite3_stmt *a;
    if (sqlite3_prepare_v2 (db, "ATTACH DATABASE ? AS src", -1, &a, NULL) !=
        SQLITE_OK)
      goto sqlerr;
    sqlite3_bind_text (a, 1, src, -1, SQLITE_STATIC);
    if (sqlite3_step (a) != SQLITE_DONE) {
      sqlite3_finalize (a);
      goto sqlerr;
    }
    sqlite3_finalize (a);
  }
  if (sqlite3_exec (db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2 (db,
                          "SELECT id, EXISTS (SELECT 1 FROM main.trials m "
                          "WHERE m.record = s.record) FROM src.trials s "
                          "ORDER BY id",
                          -1, &sel, NULL) != SQLITE_OK)
    goto sqlerr_rollback;
  while (sqlite3_step (sel) == SQLITE_ROW) {
    static const char *const children[] = {"phases", "passes", "audit",
                                           "damaged"};
    sqlite3_int64 old = sqlite3_column_int64 (sel, 0), id;
    sqlite3_stmt *ins;
    size_t k;

    if (sqlite3_column_int (sel, 1)) {
      (*known)++;
      continue;
    }
    if (sqlite3_prepare_v2 (db,
                            "INSERT INTO main.trials (" TRIAL_COLUMNS
                            ") SELECT " TRIAL_COLUMNS
                            " FROM src.trials WHERE id = ?",
                            -1, &ins, NULL) != SQLITE_OK)
      goto sqlerr_rollback;
    sqlite3_bind_int64 (ins, 1, old);
    if (sqlite3_step (ins) != SQLITE_DONE) {
      sqlite3_finalize (ins);
      goto sqlerr_rollback;
    }
    sqlite3_finalize (ins);
    id = sqlite3_last_insert_rowid (db);
    for (k = 0; k < sizeof children / sizeof children[0]; k++) {
      char sql[512];
      {
        sqlite3_stmt *cp;
        char cols[512] = "";
        /* The child's columns but trial_id, from its own definition. */
        snprintf (sql, sizeof sql, "PRAGMA src.table_info(%s)", children[k]);
        if (sqlite3_prepare_v2 (db, sql, -1, &cp, NULL) != SQLITE_OK)
          goto sqlerr_rollback;
        while (sqlite3_step (cp) == SQLITE_ROW) {
          const char *c = (const char *)sqlite3_column_text (cp, 1);
          if (strcmp (c, "trial_id") == 0)
            continue;
          if (strlen (cols) + strlen (c) + 3 < sizeof cols)
            snprintf (cols + strlen (cols), sizeof cols - strlen (cols), "%s%s",
                      cols[0] ? ", " : "", c);
        }
        sqlite3_finalize (cp);
        snprintf (sql, sizeof sql,
                  "INSERT INTO main.%s (trial_id, %s) SELECT ?1, %s FROM "
                  "src.%s WHERE trial_id = ?2",
                  children[k], cols, cols, children[k]);
        if (sqlite3_prepare_v2 (db, sql, -1, &cp, NULL) != SQLITE_OK)
          goto sqlerr_rollback;
        sqlite3_bind_int64 (cp, 1, id);
        sqlite3_bind_int64 (cp, 2, old);
        if (sqlite3_step (cp) != SQLITE_DONE) {
          sqlite3_finalize (cp);
          goto sqlerr_rollback;
        }
        sqlite3_finalize (cp);
      }
    }
    (*added)++;
  }
  sqlite3_finalize (sel);
  sel = NULL;
  if (sqlite3_exec (db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    goto sqlerr_rollback;
  rc = 0;
  goto detach;

sqlerr_rollback:
  fprintf (stderr, "%s merge: %s: %s\n", fd_progname, src, sqlite3_errmsg (db));
  sqlite3_finalize (sel);
  sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
detach:
  sqlite3_exec (db, "DETACH DATABASE src", NULL, NULL, NULL);
  return rc;

sqlerr:
  fprintf (stderr, "%s merge: %s: %s\n", fd_progname, src, sqlite3_errmsg (db));
  return -1;
}

int
cmd_merge (int argc, char **argv)
{
  struct fm_err err;
  sqlite3 *db;
  int i, ret = 0;

  if (argc > 1 &&
      (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0)) {
    merge_usage (stdout);
    return 0;
  }
  if (argc < 3) {
    fprintf (stderr, "%s merge: DEST and at least one SRC are required\n",
             fd_progname);
    merge_usage (stderr);
    return 2;
  }
  if ((db = fd_db_open (argv[1], true, &err)) == NULL) {
    fprintf (stderr, "%s merge: %s\n", fd_progname, err.msg);
    return 1;
  }
  for (i = 2; i < argc; i++) {
    long long added = 0, known = 0;
    if (strcmp (argv[i], argv[1]) == 0) {
      fprintf (stderr, "%s merge: %s is the destination\n", fd_progname,
               argv[i]);
      ret = 1;
      continue;
    }
    if (merge_one (db, argv[i], &added, &known) == -1)
      ret = 1;
    else
      printf ("%s: %lld trials added, %lld already there\n", argv[i], added,
              known);
  }
  sqlite3_close (db);
  return ret;
}
