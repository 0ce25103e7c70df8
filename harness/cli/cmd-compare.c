/* futuredisk — harness: `futuredisk compare`, a night against the nights
 * before it.
 *
 * The regressions themselves are regress.c's, which the report shares;
 * this file prints them as text and JUnit XML.
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
#include "errmsg.h"
#include "options.h"
#include "regress.h"
#include "report.h"
#include "svg.h"

static void
compare_usage (FILE *fp)
{
  fprintf (fp,
           "Usage: %s compare DB [--campaign NAME] [--run-id ID] "
           "[--baseline N]\n"
           "                  [--junit FILE]\n"
           "Compare a campaign night (default: the newest by time) with the "
           "N nights\nbefore it (default 7), scenario by scenario: a new or "
           "worse outcome of the\ncheck, repair, recheck or mount, more "
           "files lost or promises broken than\nchance allows, a failure "
           "rate above the baseline's Wilson interval, or a\nmedian fsck "
           "time above the 99.9%% bound the baseline's nights and\n"
           "repetitions give (at least %.0f%% and %g s; %.0f%% and %g s "
           "while fewer than\n%d nights measure it) is a regression.  "
           "Only nights with the night's\nenvironment are the baseline if "
           "any; else the environment's change is\nnamed as the likely "
           "cause.\n"
           "\n"
           "  --junit FILE  also write JUnit XML (a test case per "
           "scenario)\n"
           "Exit status: 0 no regression, 1 regressions, 2 bad arguments "
           "or no data,\n3 no earlier night to compare with.\n",
           fd_progname, 100 * FD_REGRESS_MIN_EFFECT, FD_REGRESS_MIN_EFFECT_S,
           100 * FD_REGRESS_UNMEASURED_EFFECT, FD_REGRESS_UNMEASURED_EFFECT_S,
           FD_REGRESS_MIN_DOF + 1);
}

struct compare_opts {
  const char *db, *campaign, *junit;
  char run_id[96]; /* "": the newest night */
  uint64_t nbase;
};

static int
compare_set (void *vo, int c, const char *arg, struct fm_err *err)
{
  struct compare_opts *o = vo;

  switch (c) {
    case 'c':
      o->campaign = arg;
      return 0;
    case 'r':
      snprintf (o->run_id, sizeof o->run_id, "%s", arg);
      return 0;
    case 'b':
      return fm_parse_uint ("--baseline", arg, 1, 1000, &o->nbase, err);
    case 'j':
      o->junit = arg;
      return 0;
  }
  return fm_fail (err, "unhandled option");
}

static const struct option compare_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"campaign", required_argument, NULL, 'c'},
    {"run-id", required_argument, NULL, 'r'},
    {"baseline", required_argument, NULL, 'b'},
    {"junit", required_argument, NULL, 'j'},
    {NULL, 0, NULL, 0},
};

static const struct fd_cmd_opts compare_cmd = {"compare", compare_options,
                                               compare_usage, compare_set};

static int
compare_parse (int argc, char **argv, struct compare_opts *o)
{
  int first, rc;

  *o = (struct compare_opts){.nbase = 7};
  rc = fd_options_parse (&compare_cmd, argc, argv, o, &first);
  if (rc != FD_OPTS_RUN)
    return rc;
  if (first + 1 != argc) {
    fd_usage_error ("compare", "one database DB is required");
    compare_usage (stderr);
    return FD_OPTS_BAD;
  }
  o->db = argv[first];
  return FD_OPTS_RUN;
}

/* What the findings stood on: the baseline, the environment, how much
 * of the timing had a measured spread.
 */
static void
compare_basis (const struct fd_findings *fs)
{
  printf ("baseline: %s\n", fs->baseline);
  if (fs->left_out[0])
    printf ("left out of the baseline, run with another environment: %s\n",
            fs->left_out);
  if (fs->env_change[0])
    printf ("environment changed since the baseline, the likely cause of "
            "what differs: %s\n",
            fs->env_change);
  if (fs->models[0])
    printf ("fsck time not compared: %s\n", fs->models);
  if (fs->unmeasured)
    printf ("fsck time of %zu scenarios: the spread is not measured "
            "(fewer than %d baseline nights, no repetitions on disks of "
            "their own), so it is compared against a minimum effect of "
            "%.0f%% and %g s only\n",
            fs->unmeasured, FD_REGRESS_MIN_DOF + 1,
            100 * FD_REGRESS_UNMEASURED_EFFECT, FD_REGRESS_UNMEASURED_EFFECT_S);
}

static void
compare_print (const char *name, const char *run_id,
               const struct fd_findings *fs)
{
  size_t i;

  printf ("%s night %s against %zu night%s before it: %zu scenarios, %zu "
          "regressions",
          name[0] ? name : "(no campaign)", run_id[0] ? run_id : "(none)",
          fs->nbaseline, fs->nbaseline == 1 ? "" : "s", fs->n, fs->regressions);
  if (fs->changes)
    printf (", %zu fsck times changed with the environment", fs->changes);
  printf ("\n");
  if (fs->nbaseline == 0)
    return;
  compare_basis (fs);
  for (i = 0; i < fs->n; i++) {
    const struct fd_finding *f = &fs->f[i];
    if (f->why[0])
      printf ("REGRESSION  %s\n            %s\n", f->scenario, f->why);
    if (f->changed[0])
      printf ("changed     %s\n            %s\n", f->scenario, f->changed);
    if (f->note[0])
      printf ("note        %s\n            %s\n", f->scenario, f->note);
  }
}

/* JUnit XML, a test case per scenario, for CI dashboards: 0, or -1 with
 * errno.
 */
static int
compare_junit (const char *path, const char *name, const char *run_id,
               const struct fd_findings *fs)
{
  FILE *fp = fopen (path, "w");
  size_t i;

  if (fp == NULL)
    return -1;
  fprintf (fp, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<testsuite name=\"futuredisk compare ");
  fd_html (fp, name);
  fprintf (fp, " ");
  fd_html (fp, run_id);
  fprintf (fp, "\" tests=\"%zu\" failures=\"%zu\">\n", fs->n, fs->regressions);
  for (i = 0; i < fs->n; i++) {
    fprintf (fp, "  <testcase classname=\"");
    fd_html (fp, name);
    fprintf (fp, "\" name=\"");
    fd_html (fp, fs->f[i].scenario);
    fprintf (fp, "\">");
    if (fs->f[i].why[0]) {
      fprintf (fp, "<failure message=\"");
      fd_html (fp, fs->f[i].why);
      fprintf (fp, "\"/>");
    }
    /* What is no regression: said, as before, beside the verdict. */
    if (fs->f[i].changed[0] || fs->f[i].note[0]) {
      fprintf (fp, "<system-out>");
      fd_html (fp, fs->f[i].changed);
      fprintf (fp, "%s", fs->f[i].changed[0] && fs->f[i].note[0] ? "; " : "");
      fd_html (fp, fs->f[i].note);
      fprintf (fp, "</system-out>");
    }
    fprintf (fp, "</testcase>\n");
  }
  fprintf (fp, "</testsuite>\n");
  return fclose (fp);
}

int
cmd_compare (int argc, char **argv)
{
  struct compare_opts o;
  struct fd_findings fs;
  char name[96];
  struct fm_err err;
  sqlite3 *db;
  int rc;

  rc = compare_parse (argc, argv, &o);
  if (rc != FD_OPTS_RUN)
    return rc;
  if ((db = fd_report_open (o.db, o.campaign, name, sizeof name, o.run_id,
                            sizeof o.run_id, &err)) == NULL) {
    fprintf (stderr, "%s compare: %s\n", fd_progname, err.msg);
    return 2;
  }
  rc = fd_regress_night (db, name, o.run_id, (unsigned)o.nbase, &fs, &err);
  sqlite3_close (db);
  if (rc == -1) {
    fprintf (stderr, "%s compare: %s\n", fd_progname, err.msg);
    return 2;
  }
  compare_print (name, o.run_id, &fs);
  if (o.junit && compare_junit (o.junit, name, o.run_id, &fs) != 0) {
    fprintf (stderr, "%s compare: %s: %s\n", fd_progname, o.junit,
             fd_strerror (errno));
    fd_findings_free (&fs);
    return 2;
  }
  rc = fs.regressions ? 1 : 0;
  if (fs.nbaseline == 0) {
    fprintf (stderr,
             "%s compare: %s: night %s is the first of campaign %s: no "
             "earlier night to compare it with\n",
             fd_progname, o.db, o.run_id[0] ? o.run_id : "(none)",
             name[0] ? name : "(none)");
    rc = 3;
  }
  fd_findings_free (&fs);
  return rc;
}
