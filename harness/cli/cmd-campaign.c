/* futuredisk — harness: `futuredisk campaign`, a night of trials: its
 * options, then the night engine (night.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "faultmodels/faults.h"
#include "faultmodels/units.h"
#include "campaign.h"
#include "commands.h"
#include "db.h"
#include "errmsg.h"
#include "night.h"
#include "options.h"
#include "proc.h"
#include "reuse.h"
#include "trial.h"

static void
campaign_usage (FILE *fp)
{
  fprintf (fp,
           "Usage: %s campaign FILE [--db DB] [--jobs N] [--shard I/N] "
           "[--budget TIME]\n"
           "                          [--resume] [--run-id ID] [--list] "
           "[--no-reuse]\n"
           "Run a campaign's trials (one night), each a '%s run' on a fresh "
           "disk,\nrecording them in a SQLite database.\n"
           "\n"
           "  --db DB        the database (default NAME.db, NAME the "
           "campaign's)\n"
           "  --jobs N       trials at once (default 1)\n"
           "  --shard I/N    run only trials I, I+N, I+2N, ... (0 <= I < N); "
           "under\n"
           "                 Slurm arrays and Kubernetes indexed Jobs it is "
           "taken\n"
           "                 from the environment (see futuredisk(1))\n"
           "  --budget TIME  start no trial after TIME (30min, 2h); the rest "
           "wait for\n"
           "                 --resume\n"
           "  --resume       finish the newest night (or --run-id's): run "
           "only the\n"
           "                 trials not yet recorded\n"
           "  --run-id ID    the night's name (default: $FUTUREDISK_RUN_ID, "
           "slurm-JOB\n"
           "                 under a Slurm array, else the start time, UTC)\n"
           "  --list         print the trials (of this shard) and exit\n"
           "  --no-reuse     populate every trial's disk afresh (default: "
           "trials that\n"
           "                 populate the same disk share one, each breaking "
           "a\n"
           "                 copy-on-write clone)\n"
           "Exit status: 0 every trial recorded, 1 some could not be run, 2 "
           "bad\n"
           "arguments or file, 3 the budget ran out first, 130 interrupted.\n",
           fd_progname, fd_progname);
}

/* Shard from the batch scheduler's environment, when not given. */
static int
shard_from_env (uint64_t *i, uint64_t *n, bool *set, struct fm_err *err)
{
  const char *id = getenv ("SLURM_ARRAY_TASK_ID");
  const char *count = getenv ("SLURM_ARRAY_TASK_COUNT");
  const char *min = getenv ("SLURM_ARRAY_TASK_MIN");
  uint64_t lo = 0, v;

  if (id && *id) {
    if (!count || !*count) {
      return fm_fail (err,
                      "SLURM_ARRAY_TASK_ID without SLURM_ARRAY_TASK_COUNT");
    }
    if ((min && *min &&
         fm_parse_uint ("SLURM_ARRAY_TASK_MIN", min, 0, 1000000, &lo, err) ==
             -1) ||
        fm_parse_uint ("SLURM_ARRAY_TASK_COUNT", count, 1, 100000, n, err) ==
            -1 ||
        fm_parse_uint ("SLURM_ARRAY_TASK_ID", id, lo, lo + *n - 1, &v, err) ==
            -1)
      return -1;
    *i = v - lo;
    *set = true;
    return 0;
  }
  id = getenv ("JOB_COMPLETION_INDEX");
  if (id && *id) {
    count = getenv ("FUTUREDISK_SHARD_COUNT");
    if (!count || !*count) {
      return fm_fail (
          err, "JOB_COMPLETION_INDEX without FUTUREDISK_SHARD_COUNT (set it "
               "to the Job's completions)");
    }
    if (fm_parse_uint ("FUTUREDISK_SHARD_COUNT", count, 1, 100000, n, err) ==
            -1 ||
        fm_parse_uint ("JOB_COMPLETION_INDEX", id, 0, *n - 1, i, err) == -1)
      return -1;
    *set = true;
  }
  return 0;
}

struct campaign_opts {
  const char *file;
  bool list;
  struct fd_night_opts night;
};

static int
campaign_set (void *vo, int c, const char *arg, struct fm_err *err)
{
  struct campaign_opts *o = vo;

  switch (c) {
    case 'd':
      o->night.db = arg;
      return 0;
    case 'j':
      return fm_parse_uint ("--jobs", arg, 1, 256, &o->night.jobs, err);
    case 's':
      o->night.shard_set = true;
      return fd_campaign_parse_shard (arg, &o->night.shard_i, &o->night.shard_n,
                                      err);
    case 'b':
      return fm_parse_duration ("--budget", arg, &o->night.budget_ns, err);
    case 'r':
      o->night.resume = true;
      return 0;
    case 'i':
      if (!*arg || strlen (arg) > 64 || strchr (arg, '/'))
        return fm_fail (err, "--run-id '%.64s': 1 to 64 characters, no '/'",
                        arg);
      o->night.run_id = arg;
      return 0;
    case 'l':
      o->list = true;
      return 0;
    case 'n':
      o->night.no_reuse = true;
      return 0;
  }
  return fm_fail (err, "unhandled option");
}

static const struct option campaign_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"db", required_argument, NULL, 'd'},
    {"jobs", required_argument, NULL, 'j'},
    {"shard", required_argument, NULL, 's'},
    {"budget", required_argument, NULL, 'b'},
    {"resume", no_argument, NULL, 'r'},
    {"run-id", required_argument, NULL, 'i'},
    {"list", no_argument, NULL, 'l'},
    {"no-reuse", no_argument, NULL, 'n'},
    {NULL, 0, NULL, 0},
};

static const struct fd_cmd_opts campaign_cmd = {"campaign", campaign_options,
                                                campaign_usage, campaign_set};

static int
campaign_parse (int argc, char **argv, struct campaign_opts *o)
{
  struct fm_err err;
  int first, rc;

  *o = (struct campaign_opts){.night = {.jobs = 1, .shard_n = 1}};
  rc = fd_options_parse (&campaign_cmd, argc, argv, o, &first);
  if (rc != FD_OPTS_RUN)
    return rc;
  if (first + 1 != argc) {
    fd_usage_error ("campaign", "%s",
                    first == argc ? "a campaign FILE is required"
                                  : "one campaign FILE only");
    campaign_usage (stderr);
    return FD_OPTS_BAD;
  }
  o->file = argv[first];
  if (!o->night.shard_set &&
      shard_from_env (&o->night.shard_i, &o->night.shard_n, &o->night.shard_set,
                      &err) == -1)
    return fd_usage_error ("campaign", "%s", err.msg);
  return FD_OPTS_RUN;
}

static void
campaign_list (const struct campaign_opts *o, const struct fd_campaign *c)
{
  size_t i, total = fd_campaign_ntrials (c);

  for (i = o->night.shard_i; i < total; i += o->night.shard_n) {
    char what[256];
    fd_night_describe (fd_campaign_trial (c, i), what, sizeof what);
    printf ("%6zu  [%s] %s\n", i, fd_campaign_trial (c, i)->matrix, what);
  }
}

int
cmd_campaign (int argc, char **argv)
{
  struct campaign_opts o;
  struct fd_campaign *c;
  struct fm_err err;
  int rc;

  rc = campaign_parse (argc, argv, &o);
  if (rc != FD_OPTS_RUN)
    return rc;
  if ((c = fd_campaign_load (o.file, &err)) == NULL)
    return fd_usage_error ("campaign", "%s", err.msg);
  rc = 0;
  if (o.list)
    campaign_list (&o, c);
  else
    rc = fd_night_run (&o.night, c);
  fd_campaign_free (c);
  return rc;
}
