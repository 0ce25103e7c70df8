/* futuredisk — harness: `futuredisk report`, one self-contained HTML page
 * of a campaign night (report.h): its options, and the page written aside
 * and renamed.
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
#include "report-int.h"
#include "svg.h"

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
