/* futuredisk — harness: `futuredisk show`, one recorded trial and the
 * evidence kept with it (evidence.h): what ran, on which machine and
 * tool versions, what each phase came to, and what the checkers, the
 * disk and the kernel said.
 */
#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faultmodels/units.h"
#include "commands.h"
#include "db.h"
#include "evidence.h"
#include "options.h"

static void
show_usage (FILE *fp)
{
  fprintf (fp,
           "Usage: %s show DB TRIAL_ID [ITEM]...\n"
           "Print a recorded trial: its scenario, the machine and tool "
           "versions it ran\nwith, its phases, its mount outcome, audit and "
           "error, and the evidence kept\nwith it (each checker phase's "
           "output, the fault logs, the kernel's messages\nabout its "
           "device, the servers' logs).  With ITEMs (check.out, "
           "kernel.log, ...)\nonly those, as they were kept; an ITEM that "
           "names one of the trial's tables\n(phases, passes, audit, "
           "durability, damaged) prints its rows of it.\n"
           "\n"
           "Exit status: 0; 1 when the database, the trial or an ITEM is "
           "not there;\n2 on bad usage.\n",
           fd_progname);
}

static int
show_set (void *vo, int c, const char *arg, struct fm_err *err)
{
  return fm_fail (err, "unhandled option");
}

static const struct option show_options[] = {
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static const struct fd_cmd_opts show_cmd = {"show", show_options, show_usage,
                                            show_set};

static const char *
col (sqlite3_stmt *st, int i)
{
  const unsigned char *s = sqlite3_column_text (st, i);

  return s ? (const char *)s : "";
}

/* The trial's own row, its night and its machine; 1 if there is none. */
static int
show_header (sqlite3 *db, long long id)
{
  sqlite3_stmt *st;
  int r = 1;

  if (sqlite3_prepare_v2 (
          db,
          "SELECT t.scenario, t.seed, t.rep, t.campaign, t.run_id, "
          " t.recorded, t.version, t.files, t.mount, t.mount_reason, "
          " t.error, e.host, e.kernel, e.nbdkit, e.e2fsprogs, e.xfsprogs, "
          " e.btrfs_progs, t.targets_hit "
          "FROM trials t LEFT JOIN environments e ON e.id = t.env_id "
          "WHERE t.id = ?",
          -1, &st, NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_int64 (st, 1, id);
  if (sqlite3_step (st) == SQLITE_ROW) {
    r = 0;
    printf ("trial %lld: %s seed=%lld rep=%lld\n", id, col (st, 0),
            sqlite3_column_int64 (st, 1), sqlite3_column_int64 (st, 2));
    if (col (st, 3)[0])
      printf ("night: %s %s\n", col (st, 3), col (st, 4));
    printf ("recorded: %s by futuredisk %s; %lld files\n", col (st, 5),
            col (st, 6), sqlite3_column_int64 (st, 7));
    if (sqlite3_column_type (st, 11) != SQLITE_NULL)
      printf ("machine: %s, kernel %s; %s; %s; %s; %s\n", col (st, 11),
              col (st, 12), col (st, 13), col (st, 14), col (st, 15),
              col (st, 16));
    else
      printf ("machine: not recorded (before schema 5)\n");
    if (col (st, 17)[0])
      printf ("targets hit: %s\n", col (st, 17));
    if (col (st, 8)[0])
      printf ("mount after the repair: %s%s%s\n", col (st, 8),
              col (st, 9)[0] ? ": " : "", col (st, 9));
    printf ("error: %s\n", col (st, 10)[0] ? col (st, 10) : "none");
  }
  sqlite3_finalize (st);
  return r;
}

/* Its phases, and the audit's classes. */
static int
show_phases (sqlite3 *db, long long id)
{
  sqlite3_stmt *st;
  char v[32];

  if (sqlite3_prepare_v2 (db,
                          "SELECT name, virtual_s, wall_s, exit, outcome "
                          "FROM phases WHERE trial_id = ? ORDER BY seq",
                          -1, &st, NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_int64 (st, 1, id);
  printf ("phases:           virtual      wall  exit  outcome\n");
  while (sqlite3_step (st) == SQLITE_ROW) {
    fm_format_duration (sqlite3_column_double (st, 1), v, sizeof v);
    printf ("  %-14s %9s %8.2f s", col (st, 0), v,
            sqlite3_column_double (st, 2));
    if (sqlite3_column_type (st, 4) != SQLITE_NULL)
      printf ("  %4lld  %s", sqlite3_column_int64 (st, 3), col (st, 4));
    printf ("\n");
  }
  sqlite3_finalize (st);
  if (sqlite3_prepare_v2 (db,
                          "SELECT class, files FROM audit WHERE trial_id = ?"
                          " AND files > 0",
                          -1, &st, NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_int64 (st, 1, id);
  printf ("audit:");
  while (sqlite3_step (st) == SQLITE_ROW)
    printf (" %s %lld", col (st, 0), sqlite3_column_int64 (st, 1));
  printf ("\n");
  sqlite3_finalize (st);
  return 0;
}

/* One item as kept: with a heading, or (bare) exactly as it was. */
static int
show_item (sqlite3 *db, long long id, const char *name, bool bare)
{
  struct fm_err err;
  uint64_t bytes;
  char *text;
  size_t len;
  int r = fd_evidence_read (db, id, name, &text, &len, &bytes, &err);

  if (r == -1)
    fprintf (stderr, "%s show: %s\n", fd_progname, err.msg);
  if (r != 0)
    return r;
  if (!bare)
    printf ("\n==> %s (%" PRIu64 " bytes%s) <==\n", name, bytes,
            bytes > len ? ", cut: see futuredisk(1), Evidence" : "");
  fwrite (text, 1, len, stdout);
  if (!bare && len && text[len - 1] != '\n')
    printf ("\n");
  free (text);
  return 0;
}

/* One item's name on its own line. */
static int
name_line (void *fp, const char *name, uint64_t bytes)
{
  fprintf (fp, "%s\n", name);
  return 0;
}

/* The names of trial id's items, one a line (malloc'd), or NULL. */
static char *
item_names (sqlite3 *db, long long id)
{
  struct fm_err err;
  char *list = NULL;
  size_t len = 0;
  FILE *fp = open_memstream (&list, &len);

  if (fp == NULL)
    return NULL;
  if (fd_evidence_each (db, id, name_line, fp, &err) == -1)
    fprintf (stderr, "%s show: %s\n", fd_progname, err.msg);
  fclose (fp);
  return list;
}

/* What of trial id's evidence is missing and why (the column
 * evidence_missing, harness/SCHEMA.md; "" when nothing is): malloc'd, or
 * NULL.
 */
static char *
missing_of (sqlite3 *db, long long id)
{
  sqlite3_stmt *st;
  char *why = NULL;

  if (sqlite3_prepare_v2 (db,
                          "SELECT evidence_missing FROM trials WHERE id = ?",
                          -1, &st, NULL) != SQLITE_OK)
    return NULL;
  sqlite3_bind_int64 (st, 1, id);
  if (sqlite3_step (st) == SQLITE_ROW)
    why = strdup (col (st, 0));
  sqlite3_finalize (st);
  return why;
}

/* The tables with rows per trial that a reader may name as an ITEM
 * (`show DB 13 damaged`): not evidence, but the trial's rows of them are
 * what was asked for.
 */
static const char *const trial_tables[] = {"phases",     "passes",  "audit",
                                           "durability", "damaged", NULL};

/* Trial id's rows of the table called name, tab-separated under a line of
 * their columns' names (trial_id left out): 0, 1 if name is no such
 * table, -1 with SQLite's message.
 */
static int
show_table (sqlite3 *db, long long id, const char *name)
{
  char sql[96];
  sqlite3_stmt *st;
  int i, k, n;

  for (k = 0; trial_tables[k] && strcmp (trial_tables[k], name) != 0; k++)
    ;
  if (trial_tables[k] == NULL)
    return 1;
  snprintf (sql, sizeof sql,
            "SELECT * FROM %s WHERE trial_id = ? ORDER BY rowid",
            trial_tables[k]);
  if (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_int64 (st, 1, id);
  n = sqlite3_column_count (st);
  for (i = 0, k = 0; i < n; i++)
    if (strcmp (sqlite3_column_name (st, i), "trial_id") != 0)
      printf ("%s%s", k++ ? "\t" : "", sqlite3_column_name (st, i));
  printf ("\n");
  while (sqlite3_step (st) == SQLITE_ROW) {
    for (i = 0, k = 0; i < n; i++)
      if (strcmp (sqlite3_column_name (st, i), "trial_id") != 0)
        printf ("%s%s", k++ ? "\t" : "", col (st, i));
    printf ("\n");
  }
  sqlite3_finalize (st);
  return 0;
}

/* The ITEM named, or else the trial's table of that name; one that is
 * neither is said, with the items the trial has or why it has none.
 */
static int
show_named (sqlite3 *db, long long id, const char *name, const char *list,
            const char *missing)
{
  const char *p;
  int r = show_item (db, id, name, true);

  if (r == 1 && (r = show_table (db, id, name)) == -1)
    fprintf (stderr, "%s show: %s: %s\n", fd_progname, name,
             sqlite3_errmsg (db));
  if (r != 1)
    return r;
  fprintf (stderr, "%s show: trial %lld has no evidence named '%s'; ",
           fd_progname, id, name);
  if (list[0] == '\0')
    fprintf (stderr, "it kept none: %s\n",
             missing[0] ? missing : "it left no output to keep");
  else {
    fprintf (stderr, "it has: ");
    for (p = list; *p; p++) /* one a line: a list */
      if (*p != '\n')
        fputc (*p, stderr);
      else
        fputs (p[1] ? ", " : "\n", stderr);
  }
  return 1;
}

/* Every item, or the ones named; 1 if one of those is not there.  What
 * is missing and why is said too.
 */
static int
show_evidence (sqlite3 *db, long long id, char **items, int nitems)
{
  char *list = item_names (db, id), *missing = missing_of (db, id);
  char *name, *save = NULL;
  int i, ret = 0;

  if (list == NULL || missing == NULL) {
    free (list);
    free (missing);
    return -1;
  }
  for (i = 0; i < nitems; i++)
    if (show_named (db, id, items[i], list, missing) != 0)
      ret = 1;
  if (nitems == 0 && list[0] == '\0')
    printf ("evidence: none%s%s\n", missing[0] ? " kept: " : "",
            missing[0] ? missing : ": the trial left no output to keep");
  else if (nitems == 0 && missing[0])
    printf ("evidence not kept: %s\n", missing);
  for (name = nitems ? NULL : strtok_r (list, "\n", &save); name;
       name = strtok_r (NULL, "\n", &save))
    if (show_item (db, id, name, false) != 0)
      ret = 1;
  free (list);
  free (missing);
  return ret;
}

static bool
trial_exists (sqlite3 *db, long long id)
{
  sqlite3_stmt *st;
  bool found = false;

  if (sqlite3_prepare_v2 (db, "SELECT 1 FROM trials WHERE id = ?", -1, &st,
                          NULL) == SQLITE_OK) {
    sqlite3_bind_int64 (st, 1, id);
    found = sqlite3_step (st) == SQLITE_ROW;
    sqlite3_finalize (st);
  }
  return found;
}

int
cmd_show (int argc, char **argv)
{
  struct fm_err err;
  long long id;
  char *end;
  sqlite3 *db;
  int first, rc, nitems;

  rc = fd_options_parse (&show_cmd, argc, argv, NULL, &first);
  if (rc != FD_OPTS_RUN)
    return rc;
  if (argc - first < 2) {
    fd_usage_error ("show", "a database DB and a TRIAL_ID are required");
    show_usage (stderr);
    return FD_OPTS_BAD;
  }
  errno = 0;
  id = strtoll (argv[first + 1], &end, 10);
  if (errno || end == argv[first + 1] || *end || id < 1)
    return fd_usage_error ("show",
                           "TRIAL_ID '%.64s' is not a trial id (1, 2, ...)",
                           argv[first + 1]);
  nitems = argc - first - 2;
  if ((db = fd_db_open (argv[first], false, &err)) == NULL) {
    fprintf (stderr, "%s show: %s\n", fd_progname, err.msg);
    return 1;
  }
  rc = 0;
  if (!trial_exists (db, id)) {
    fprintf (stderr, "%s show: %s: no trial %lld\n", fd_progname, argv[first],
             id);
    rc = 1;
  } else if (nitems == 0 &&
             (show_header (db, id) != 0 || show_phases (db, id) == -1))
    rc = -1;
  if (rc == 0)
    rc = show_evidence (db, id, argv + first + 2, nitems);
  if (rc == -1)
    fprintf (stderr, "%s show: %s: %s\n", fd_progname, argv[first],
             sqlite3_errmsg (db));
  sqlite3_close (db);
  return rc == 0 ? 0 : 1;
}
