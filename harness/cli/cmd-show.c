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
           "kernel.log, ...)\nonly those, as they were kept.\n"
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

/* Every item, or the ones named; 1 if one of those is not there. */
static int
show_evidence (sqlite3 *db, long long id, char **items, int nitems)
{
  char *list = item_names (db, id), *name, *save = NULL;
  int i, ret = 0, r;

  if (list == NULL)
    return -1;
  for (i = 0; i < nitems; i++)
    if ((r = show_item (db, id, items[i], true)) != 0) {
      if (r == 1)
        fprintf (stderr,
                 "%s show: trial %lld has no evidence '%s'; it has:%s%s",
                 fd_progname, id, items[i], list[0] ? "\n" : " none\n", list);
      ret = 1;
    }
  if (nitems == 0 && list[0] == '\0')
    printf ("evidence: none kept (a trial recorded before schema 5)\n");
  for (name = nitems ? NULL : strtok_r (list, "\n", &save); name;
       name = strtok_r (NULL, "\n", &save))
    if (show_item (db, id, name, false) != 0)
      ret = 1;
  free (list);
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
