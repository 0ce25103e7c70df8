/* futuredisk — harness: `futuredisk demo`, the demo campaign and its
 * report: what `./futuredisk demo` shows a new user in a few minutes.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "faultmodels/units.h"
#include "campaign.h"
#include "commands.h"
#include "db.h"
#include "errmsg.h"
#include "night.h"
#include "options.h"
#include "report.h"

/* Where the shipped campaign files are: $FUTUREDISK_CAMPAIGNS, the
 * source tree this binary was built from, or the installed copies.
 */
static const char *
campaign_dir (void)
{
  const char *env = getenv ("FUTUREDISK_CAMPAIGNS");
  struct stat st;

  if (env && *env)
    return env;
#ifdef FD_CAMPAIGN_SOURCE_DIR
  if (stat (FD_CAMPAIGN_SOURCE_DIR, &st) == 0)
    return FD_CAMPAIGN_SOURCE_DIR;
#endif
  return FD_CAMPAIGN_INSTALL_DIR;
}

static void
demo_usage (FILE *fp)
{
  fprintf (fp,
           "Usage: %s demo [--jobs N] [--out DIR]\n"
           "Run the demo campaign (%s/demo.ini: fsck time on the three "
           "roadmap\ndisks, a bad block of each metadata type, fault "
           "rates and a crash on\next4, xfs and btrfs; a few minutes) "
           "and write DIR/report.html\n(default DIR: out).\n"
           "\n"
           "  --jobs N   trials at once (default: the number of CPUs)\n"
           "  --out DIR  where demo.db and report.html go\n",
           fd_progname, campaign_dir ());
}

/* One line of numbers from the night, by a query returning text. */
static void
summary_line (sqlite3 *db, const char *sql, const char *run_id)
{
  sqlite3_stmt *st;

  if (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) != SQLITE_OK) {
    fprintf (stderr, "%s demo: %s\n", fd_progname, sqlite3_errmsg (db));
    return;
  }
  sqlite3_bind_text (st, 1, run_id, -1, SQLITE_STATIC);
  if (sqlite3_step (st) == SQLITE_ROW && sqlite3_column_text (st, 0))
    printf ("  %s\n", (const char *)sqlite3_column_text (st, 0));
  sqlite3_finalize (st);
}

/* The night in four lines of numbers, under the report's name. */
static void
demo_summary (sqlite3 *db, const char *run_id)
{
  summary_line (
      db,
      "SELECT 'fsck time, smallest to largest roadmap disk: ' || "
      " group_concat(fs || ' ' || lo || ' -> ' || hi, ', ') FROM ("
      " SELECT fs, printf('%.3g s', (SELECT check_s FROM t t2 WHERE "
      "  t2.fs = t.fs AND t2.run_id = ?1 AND t2.target = '' AND t2.faults = "
      "  '' AND t2.crash = 0 ORDER BY disk_bytes LIMIT 1)) AS lo, "
      " printf('%.3g s', (SELECT check_s FROM t t2 WHERE t2.fs = t.fs AND "
      "  t2.run_id = ?1 AND t2.target = '' AND t2.faults = '' AND "
      "  t2.crash = 0 ORDER BY disk_bytes DESC LIMIT 1)) AS hi "
      " FROM t WHERE run_id = ?1 AND campaign = 'demo' AND target = '' "
      " AND faults = '' AND crash = 0 GROUP BY fs ORDER BY fs)",
      run_id);
  summary_line (db,
                "SELECT 'one bad block: ' || count(*) || ' trials, ' || "
                "coalesce(sum(coalesce(check_outcome, '') != 'CLEAN'), 0) || "
                "' noticed by the check, ' || coalesce(sum(lost > 0), 0) || "
                "' with files lost, ' || coalesce(sum(error != '' OR "
                "coalesce(recheck_outcome, 'CLEAN') != 'CLEAN'), 0) || ' left "
                "unrepaired, ' || coalesce(sum((SELECT mount FROM trials m "
                "WHERE m.id = t.id) = 'UNMOUNTABLE'), 0) || ' unmountable "
                "after it' FROM t WHERE run_id = ?1 AND campaign = 'demo' "
                "AND target != ''",
                run_id);
  summary_line (db,
                "SELECT 'fault rates: ' || count(*) || ' trials, "
                "' || coalesce(sum(lost > 0), 0) || ' lost data (' || "
                "coalesce(sum(lost), 0) || ' files)' FROM t WHERE run_id = ?1 "
                "AND campaign = 'demo' AND target = '' AND faults != '' AND "
                "NOT crash",
                run_id);
  /* After a crash, losing what was in flight is allowed: the line counts
   * the broken promises and sets the allowed loss beside them.
   */
  summary_line (db,
                "SELECT 'crashes: ' || count(*) || ' trials, ' || "
                "coalesce(sum(violations > 0), 0) || ' broke a durability "
                "promise (' || coalesce(sum(violations), 0) || ' files), ' || "
                "coalesce(sum(allowed), 0) || ' files in flight lost "
                "(allowed)' FROM t WHERE run_id = ?1 AND campaign = 'demo' "
                "AND target = '' AND crash",
                run_id);
}

struct demo_opts {
  const char *out;
  uint64_t njobs;
};

static int
demo_set (void *vo, int c, const char *arg, struct fm_err *err)
{
  struct demo_opts *o = vo;

  switch (c) {
    case 'j':
      return fm_parse_uint ("--jobs", arg, 1, 256, &o->njobs, err);
    case 'o':
      o->out = arg;
      return 0;
  }
  return fm_fail (err, "unhandled option");
}

static const struct option demo_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"jobs", required_argument, NULL, 'j'},
    {"out", required_argument, NULL, 'o'},
    {NULL, 0, NULL, 0},
};

static const struct fd_cmd_opts demo_cmd = {"demo", demo_options, demo_usage,
                                            demo_set};

static int
demo_parse (int argc, char **argv, struct demo_opts *o)
{
  int first, rc;

  *o = (struct demo_opts){.out = "out",
                          .njobs = (uint64_t)sysconf (_SC_NPROCESSORS_ONLN)};
  rc = fd_options_parse (&demo_cmd, argc, argv, o, &first);
  if (rc != FD_OPTS_RUN)
    return rc;
  if (first != argc)
    return fd_usage_error ("demo", "unexpected argument '%s'", argv[first]);
  return FD_OPTS_RUN;
}

/* The campaign into OUT/demo.db, then its report; the campaign's exit
 * code, unless the report could not be written.
 */
static int
demo_run (const struct demo_opts *o)
{
  char ini[PATH_MAX], db_path[PATH_MAX + 16], html[PATH_MAX + 16];
  char name[96], run_id[96] = "";
  struct fd_night_opts night = {.jobs = 1, .shard_n = 1};
  struct fd_campaign *c;
  struct fm_err err;
  sqlite3 *db;
  FILE *fp;
  int rc;

  if (mkdir (o->out, 0755) == -1 && errno != EEXIST) {
    fprintf (stderr, "%s demo: %s: %s\n", fd_progname, o->out,
             fd_strerror (errno));
    return 1;
  }
  snprintf (ini, sizeof ini, "%s/demo.ini", campaign_dir ());
  snprintf (db_path, sizeof db_path, "%s/demo.db", o->out);
  snprintf (html, sizeof html, "%s/report.html", o->out);
  if ((c = fd_campaign_load (ini, &err)) == NULL) {
    fprintf (stderr, "%s demo: %s\n", fd_progname, err.msg);
    return 2;
  }
  night.db = db_path;
  night.jobs = o->njobs ? o->njobs : 1;
  rc = fd_night_run (&night, c);
  fd_campaign_free (c);
  if (rc == 130 || rc == 2)
    return rc;
  if ((db = fd_report_open (db_path, "demo", name, sizeof name, run_id,
                            sizeof run_id, &err)) == NULL) {
    fprintf (stderr, "%s demo: %s\n", fd_progname, err.msg);
    return 1;
  }
  if ((fp = fopen (html, "w")) == NULL ||
      fd_report_write (db, name, run_id, fp) == -1 || fclose (fp) != 0) {
    fprintf (stderr, "%s demo: %s: %s\n", fd_progname, html,
             fd_strerror (errno));
    sqlite3_close (db);
    return 1;
  }
  printf ("\nReport: %s\n", html);
  demo_summary (db, run_id);
  sqlite3_close (db);
  return rc;
}

int
cmd_demo (int argc, char **argv)
{
  struct demo_opts o;
  int rc;

  rc = demo_parse (argc, argv, &o);
  if (rc != FD_OPTS_RUN)
    return rc;
  return demo_run (&o);
}
