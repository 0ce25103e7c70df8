/* futuredisk — harness: `futuredisk run`, one fault trial end to end
 * (the engine is trial.c).  One JSON line (--json[=FILE|-]) and a summary
 * on stdout; exit 130 when interrupted, with everything detached.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "errmsg.h"
#include "faultmodels/profile.h"
#include "faultmodels/units.h"
#include "load-profile.h"
#include "options.h"
#include "proc.h"
#include "attach.h"
#include "db.h"
#include "crashpoints.h"
#include "evidence.h"
#include "base.h"
#include "target.h"
#include "spec.h"
#include "trial.h"
#include "hostrun.h"
#include "cgroup.h"

/* The options, after the usage line. */
static const char run_help[] =
    "Run one fault trial: populate a file system on an emulated disk, "
    "break the\ndisk, check and repair it, audit every file, and "
    "record what happened.\n"
    "\n"
    "  --fs TYPE        file system (ext4, xfs, btrfs, chunkfs, ext3)\n"
    "  --profile P      disk profile or profile file (default "
    "roadmap-2006)\n"
    "  --size SIZE      rescale the disk (default 1G; full: the "
    "profile's own\n"
    "                   capacity)\n"
    "  --seed N         seed for the tree and the faults (default 1)\n"
    "  --fill PCT       fill this share of the file system (default "
    "30)\n"
    "  --meta-only N    N files, allocated not written (fallocate): "
    "fills huge\n"
    "                   disks while the plugin stores only "
    "metadata\n"
    "  --tree KIND      the tree's shape: mixed (default), hardlink-farm "
    "(rsnapshot\n"
    "                   snapshots), small-files (1-16 KiB), large-media, "
    "aged\n"
    "                   (free space fragmented by rounds of creates and "
    "deletes)\n"
    "  --faults SPEC    faults the disk comes back with: a preset "
    "and/or\n"
    "                   KEY=VALUE keys, comma-separated\n"
    "  --target T[:N[:K]]  also hit N files' blocks of type T "
    "(data, inode,\n"
    "                   per file system more: see futuredisk(1))\n"
    "                   with fault K (ure: unreadable, the default; "
    "lse;\n"
    "                   rot: one bit flipped at rest; lost-write, "
    "misdirected-write,\n"
    "                   torn-write: the last write to it undone;\n"
    "                   stripe[=SIZE], stripe-copy[=SIZE], "
    "stripe-ure[=SIZE]:\n"
    "                   RAID-level, the whole stripe garbled, a copy of "
    "the one\n"
    "                   before it, or unreadable); up to 4 joined by '+'\n"
    "  --time MODE      the disk's clock: virtual (default), real "
    "(requests\n"
    "                   take their modelled time), scale:F\n"
    "  --think auto|cpu|real|zero  the checker's own time between "
    "requests on\n"
    "                   the virtual clock: its CPU time in a cgroup (cpu: "
    "root,\n"
    "                   cgroup v2), wall time (real), none (zero, "
    "device-bound);\n"
    "                   auto (default): cpu where the cgroup can be made, "
    "else real\n"
    "  --host NAME      the machine the checker runs on: its speed "
    "(think=cpu)\n"
    "                   and RAM (a memory limit): native (default), "
    "server-2024,\n"
    "                   server-2006, nas-2010\n"
    "  --host-ram SIZE  the host's RAM instead of its own (e.g. 2G)\n"
    "  --json[=FILE|-]  the trial record as one JSON line, appended to "
    "FILE, or on\n"
    "                   stdout (--json, --json=-; the summary goes to "
    "stderr)\n"
    "  --db FILE        add it to a SQLite database (harness/SCHEMA.md)\n"
    "  --dir DIR        trial directory (default: a new one under "
    "/var/tmp)\n"
    "  --keep           keep the trial directory (store, logs, "
    "manifest)\n"
    "  --timeout SEC    kill a checker after SEC seconds (default "
    "3600)\n"
    "  --progress SEC   a running checker's progress line (virtual time so "
    "far,\n"
    "                   pass, share of it done) every SEC seconds of wall "
    "time\n"
    "                   (default 10; 0: at each update)\n"
    "  --attach HOW     the block device: nbd (/dev/nbdN), loop "
    "(nbdfuse + a\n"
    "                   loop device), serial (loop, the requests one at a "
    "time in\n"
    "                   the kernel's order), auto (default: nbd where the "
    "kernel has it)\n"
    "  --escalate       when the repair leaves the file system "
    "unmountable, run\n"
    "                   what an administrator runs next (e2fsck -b "
    "32768,\n"
    "                   xfs_repair -L, btrfs rescue super-recover and "
    "zero-log)\n"
    "                   as the phase escalate, then mount and audit\n"
    "  --restore-rate RATE  a restore from backup runs at RATE per second "
    "(e.g.\n"
    "                   125MB for 1 Gbit/s); default: the bytes in use "
    "written\n"
    "                   back through the drive model, sequentially\n"
    "  --repair-cut K   cut the power after the repair's Kth write, "
    "then repair\n"
    "                   again (sweep:N: the repair uninterrupted, then N "
    "cuts\n"
    "                   spread over its writes, a trial each)\n"
    "  --crash-points N|all  a crash workload, its writes logged; then the "
    "disk\n"
    "                   rebuilt at N of its flushes (every third with some "
    "of the\n"
    "                   writes a volatile cache held), each checked, "
    "repaired\n"
    "                   and audited against the promises made by then\n"
    "  --base-out DIR   keep the populated disk in DIR (made) for later "
    "trials\n"
    "                   that populate the same, and break a copy-on-write "
    "clone\n"
    "  --base DIR       instead of populating, break a clone of the disk "
    "kept in\n"
    "                   DIR (futuredisk campaign sets both; --no-reuse "
    "there not)\n"
    "  --campaign NAME, --run-id ID, --rep N\n"
    "                   label the record as repetition N of a campaign's "
    "night\n"
    "                   (futuredisk campaign sets them)\n"
    "An interrupted trial is not recorded.\n";

static void
run_usage (FILE *fp)
{
  fprintf (
      fp,
      "Usage: %s run --fs TYPE [--profile P] [--size SIZE] [--seed N]\n"
      "              [--fill PCT] [--meta-only N] [--tree KIND] [--crash] "
      "[--faults SPEC] "
      "[--target TYPE[:COUNT[:KIND]]]\n"
      "              [--time MODE] [--think auto|cpu|real|zero] [--host NAME] "
      "[--host-ram SIZE] "
      "[--json[=FILE|-]] [--db "
      "FILE]\n"
      "              [--dir DIR] [--keep] [--timeout SECONDS] [--progress "
      "SECONDS] "
      "[--attach auto|nbd|loop|serial]\n"
      "              [--restore-rate RATE] [--repair-cut K|sweep:N]\n"
      "              [--crash-points N|all] [--base-out DIR | --base DIR]\n"
      "               [--campaign NAME --run-id ID "
      "[--rep N]]\n",
      fd_progname);
  fputs (run_help, fp);
}

/* The options go straight into the trial they describe; its results
 * beside them.
 */
struct run_opts {
  struct trial_spec s;
  struct trial_result r;
  const char *json_path;
  uint64_t sweep; /* --repair-cut sweep:N */
  const char *dir, *db_path;
  char spec[4096], clock_args[2][80];
  char host_args[2][FD_HOSTRUN_ARG_MAX];
  struct fd_cgroup *cgroup; /* the checkers' (--think cpu, --host) */
  uint64_t host_ram;        /* --host-ram; 0: the host's */
};

/* getopt_long's value of a key of the trial table (spec.h). */
#define KEY_OPT 1000

/* A value of a key of the trial table; the faults also split into the
 * plugin's keys, and --repair-cut also takes sweep:N (run's own).
 */
static int
run_set_key (struct run_opts *o, enum fd_key k, const char *arg,
             struct fm_err *err)
{
  struct trial_spec *s = &o->s;

  if (k == FD_KEY_REPAIR_CUT && strncmp (arg, "sweep:", 6) == 0)
    return fm_parse_uint ("--repair-cut sweep", arg + 6, 1, 1000, &o->sweep,
                          err);
  if (fd_spec_set (s, k, arg, true, err) == -1)
    return -1;
  if (k != FD_KEY_FAULTS)
    return 0;
  snprintf (o->spec, sizeof o->spec, "%s", arg);
  return fd_fault_spec (o->spec, s->extra, FD_FAULT_KEYS_MAX, &s->n_extra, err);
}

/* An option whose value is kept as it is: where it goes, or NULL. */
static const char **
run_slot (struct run_opts *o, int c)
{
  struct trial_spec *s = &o->s;

  switch (c) {
    case 'd':
      return &o->dir;
    case 'D':
      return &o->db_path;
    case 'c':
      return &s->campaign;
    case 'r':
      return &s->run_id;
    case 'U':
      return &s->base_out;
    case 'b':
      return &s->base;
  }
  return NULL;
}

static int
run_set (void *vo, int c, const char *arg, struct fm_err *err)
{
  struct run_opts *o = vo;
  struct trial_spec *s = &o->s;
  const char **slot = run_slot (o, c);

  if (c >= KEY_OPT) /* a flag's bare --crash says yes */
    return run_set_key (o, (enum fd_key) (c - KEY_OPT), arg ? arg : "yes", err);
  if (slot) {
    *slot = arg;
    return 0;
  }
  switch (c) {
    case 'j':
      return fd_json_option (arg, &o->json_path, err);
    case 'S':
      return fm_parse_uint ("--seed", arg, 0, UINT64_MAX, &s->seed, err);
    case 'k':
      s->keep = true;
      return 0;
    case 'g':
      return fm_parse_double ("--progress", arg, 0, 1e7, &s->progress_every,
                              err);
    case 'Q':
      return fm_parse_size ("--host-ram", arg, &o->host_ram, err) == -1 ||
                     o->host_ram == 0
                 ? fm_fail (err, "--host-ram: '%.64s' is not a positive size",
                            arg)
                 : 0;
    case 'R':
      return fm_parse_uint ("--rep", arg, 0, 1000000, &s->rep, err);
    case 'B':
      return fd_parse_rate ("--restore-rate", arg, &s->restore_rate, err);
  }
  return fm_fail (err, "unhandled option");
}

/* run's own options; the trial table's keys follow (run_options_all). */
static const struct option run_own_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"seed", required_argument, NULL, 'S'},
    {"json", optional_argument, NULL, 'j'},
    {"dir", required_argument, NULL, 'd'},
    {"keep", no_argument, NULL, 'k'},
    {"progress", required_argument, NULL, 'g'},
    {"db", required_argument, NULL, 'D'},
    {"host-ram", required_argument, NULL, 'Q'},
    {"campaign", required_argument, NULL, 'c'},
    {"run-id", required_argument, NULL, 'r'},
    {"rep", required_argument, NULL, 'R'},
    {"restore-rate", required_argument, NULL, 'B'},
    {"base-out", required_argument, NULL, 'U'},
    {"base", required_argument, NULL, 'b'},
};

#define N_OWN (sizeof run_own_options / sizeof run_own_options[0])

static struct option run_options[N_OWN + FD_NKEYS + 1];

static const struct fd_cmd_opts run_cmd = {"run", run_options, run_usage,
                                           run_set};

/* run's options and then one per key of the trial table. */
static void
run_options_all (void)
{
  size_t k;

  memcpy (run_options, run_own_options, sizeof run_own_options);
  for (k = 0; k < FD_NKEYS; k++)
    run_options[N_OWN + k] = (struct option){
        fd_key_name (k), fd_key_flag (k) ? no_argument : required_argument,
        NULL, KEY_OPT + (int)k};
  run_options[N_OWN + FD_NKEYS] = (struct option){NULL, 0, NULL, 0};
}

/* A plugin clock parameter (k 0: time=, 1: think=), after the fault
 * keys.
 */
static int
run_clock_arg (struct run_opts *o, size_t k, const char *val,
               struct fm_err *err)
{
  struct trial_spec *s = &o->s;

  if (val == NULL)
    return 0;
  if (s->n_extra == FD_FAULT_KEYS_MAX)
    return fm_fail (err, "--faults: too many keys");
  snprintf (o->clock_args[k], sizeof o->clock_args[k], "%s=%s",
            k ? "think" : "time", val);
  s->extra[s->n_extra++] = o->clock_args[k];
  return 0;
}

/* Parse and check everything before any work. */
static int
run_parse (int argc, char **argv, struct run_opts *o)
{
  struct trial_spec *s = &o->s;
  struct fm_err err;
  enum fd_key bad;
  int first, rc;

  memset (o, 0, sizeof *o);
  fd_spec_defaults (s);
  s->seed = 1;
  s->progress_every = 10;
  s->cut_reference_intact = -1;
  run_options_all ();
  rc = fd_options_parse (&run_cmd, argc, argv, o, &first);
  if (rc != FD_OPTS_RUN)
    return rc;
  if (first != argc || s->fs == NULL) {
    if (first != argc)
      fd_usage_error ("run", "unexpected argument '%s'%s", argv[first],
                      fd_json_hint (o->json_path));
    else
      fd_usage_error ("run", "--fs TYPE is required");
    run_usage (stderr);
    return FD_OPTS_BAD;
  }
  if (fd_spec_check (s, true, &bad, &err) == -1)
    return fd_usage_error ("run", "%s", err.msg);
  s->host = fd_spec_host (s);
  if ((s->campaign == NULL) != (s->run_id == NULL))
    return fd_usage_error ("run", "--campaign and --run-id go together");
  if (s->crash_points && o->sweep)
    return fd_usage_error ("run", "--crash-points goes with neither "
                                  "--repair-cut nor --target");
  if (s->base && s->base_out)
    return fd_usage_error ("run", "--base and --base-out: one or the other");
  if (s->base && fd_base_check (s->base, &err) == -1)
    return fd_usage_error ("run", "%s", err.msg);
  if ((s->base || s->base_out) &&
      (s->crash_points || o->sweep ||
       (s->target && fd_target_any (s->target, fd_target_edits_store))))
    return fd_usage_error ("run",
                           "--%s: a disk of its own for "
                           "--crash-points, --repair-cut sweep:, "
                           "a write fault or stripe --target",
                           s->base ? "base" : "base-out");
  if (o->sweep && s->keep)
    return fd_usage_error ("run", "--repair-cut sweep: runs many trials in "
                                  "one directory: --keep keeps none");
  if (run_clock_arg (o, 0, s->time_mode, &err) == -1)
    return fd_usage_error ("run", "%s", err.msg);
  return FD_OPTS_RUN;
}

/* The trial directory: --dir as given, or a new one (*made).  -1 when
 * it cannot be made, said on stderr.
 */
static int
run_make_dir (struct run_opts *o, bool *made)
{
  struct trial_spec *s = &o->s;

  *made = false;
  if (o->dir) {
    if (mkdir (o->dir, 0700) == -1 && errno != EEXIST) {
      fprintf (stderr, "%s run: %s: %s\n", fd_progname, o->dir,
               fd_strerror (errno));
      return -1;
    }
    snprintf (s->dir, sizeof s->dir, "%s", o->dir);
  } else {
    fd_scratch_template ("run", s->dir, sizeof s->dir);
    if (mkdtemp (s->dir) == NULL) {
      fprintf (stderr, "%s run: mkdtemp: %s\n", fd_progname,
               fd_strerror (errno));
      return -1;
    }
    *made = true;
  }
  snprintf (s->mnt, sizeof s->mnt, "%s/mnt", s->dir);
  snprintf (s->store, sizeof s->store, "%s/disk.store", s->dir);
  return 0;
}

/* The record and the evidence into the database: 0, or 1 if the trial
 * is not recorded.  Evidence that cannot be read or stored is said, here
 * and in the trial's evidence_missing, and the trial recorded without it.
 */
static int
record_db (const struct trial_spec *s, const struct trial_result *r,
           const char *db_path)
{
  struct fd_evidence ev = {0};
  struct fm_err err;
  char *rec = NULL;
  size_t len = 0;
  FILE *mf = open_memstream (&rec, &len);
  int rc = -1;

  if (mf == NULL) {
    fprintf (stderr, "%s run: out of memory\n", fd_progname);
    return 1;
  }
  if (fd_trial_record (s, r, mf, &err) == -1) {
    fclose (mf);
    free (rec);
    fprintf (stderr, "%s run: not recorded in %s: %s\n", fd_progname, db_path,
             err.msg);
    return 1;
  }
  if (fclose (mf) != 0) {
    free (rec);
    fprintf (stderr, "%s run: out of memory\n", fd_progname);
    return 1;
  }
  fd_evidence_collect (s, r, &ev, stderr);
  if ((rc = fd_db_add (db_path, s, r, rec, &ev, &err)) != 0)
    fprintf (stderr, "%s run: %s\n", fd_progname, err.msg);
  fd_evidence_free (&ev);
  free (rec);
  return rc == -1;
}

/* The record into the database and the JSON file; 0, or 1 if either
 * failed.
 */
static int
run_record (const struct run_opts *o)
{
  int ret = 0;

  if (o->db_path)
    ret = record_db (&o->s, &o->r, o->db_path);
  if (o->json_path) {
    FILE *fp = fd_json_open (o->json_path, "a");
    struct fm_err err;

    if (fp && fd_trial_record (&o->s, &o->r, fp, &err) == -1) {
      fprintf (stderr, "%s run: %s: %s\n", fd_progname, o->json_path, err.msg);
      fd_json_close (fp);
      ret = 1;
    } else if (fp == NULL || fd_json_close (fp) == -1) {
      fprintf (stderr, "%s run: %s: %s\n", fd_progname, o->json_path,
               fd_strerror (errno));
      ret = 1;
    }
  }
  return ret;
}

/* One trial in s->dir (made by the caller): run, summary, record.  0,
 * 1 if it failed or was not recorded, 130 when interrupted.  The
 * results stay in o->r for the caller, who cleans up.
 */
static int
run_one (struct run_opts *o)
{
  struct trial_spec *s = &o->s;
  struct trial_result *r = &o->r;
  struct fm_err err;
  int ret = 0;

  memset (r, 0, sizeof *r);
  mkdir (s->mnt, 0700);
  unlink (s->store); /* a fresh disk every trial */
  s->populate.seed = s->seed;
  s->populate.fill_pct = s->fill;
  s->populate.progress = stderr;
  s->progress = stderr;
  if (fd_trial_run (s, r, &err) == -1) {
    snprintf (r->error, sizeof r->error, "%s", err.msg);
    ret = 1;
  }
  fd_trial_read_stats (s, r);
  fd_trial_summary (s, r);
  /* An interrupted trial measured nothing whole: a campaign resumed
   * later runs it again, so it must not be found recorded.
   */
  if (fd_interrupted)
    return 130;
  return ret | run_record (o);
}

/* --repair-cut sweep:N: the repair uninterrupted first, then cut after
 * N write counts spread evenly over its writes, each a trial of its own
 * on the same seed (the same tree and faults); a table of the outcomes
 * and of the files each lost against the uninterrupted repair.
 */
static int
run_sweep (struct run_opts *o, bool made_dir)
{
  struct trial_spec *s = &o->s;
  struct trial_result *r = &o->r;
  const struct phase *rp;
  uint64_t writes, k, i, last = 0;
  int64_t ref_intact;
  int ret;

  s->repair_cut = 0;
  s->cut_reference_intact = -1;
  ret = run_one (o);
  rp = fd_trial_phase (r, "repair");
  writes = rp ? rp->writes : 0;
  ref_intact = r->audited ? (int64_t)r->audit.count[FD_AUDIT_INTACT] : -1;
  fd_trial_clean (s, false);
  fd_trial_free (r);
  if (ret != 0 || writes == 0) {
    if (ret == 0)
      fprintf (stderr,
               "%s run: --repair-cut: the repair wrote nothing: no "
               "point to cut at\n",
               fd_progname);
    return ret ? ret : 1;
  }
  printf ("repair-cut sweep: the uninterrupted repair wrote %" PRIu64
          " times; %s\n",
          writes, ref_intact >= 0 ? "its files are the reference" : "");
  for (i = 1; i <= o->sweep && ret != 130; i++) {
    k = (writes * i + o->sweep) / (o->sweep + 1);
    if (k <= last)
      continue; /* fewer writes than points: each K once */
    s->repair_cut = last = k;
    s->cut_reference_intact = ref_intact;
    ret |= run_one (o);
    fd_trial_clean (s, false);
    fd_trial_free (r);
  }
  if (made_dir)
    rmdir (s->dir);
  return ret;
}

static int
run_trial (struct run_opts *o)
{
  struct trial_spec *s = &o->s;
  struct fm_err err;
  bool made_dir;
  int ret;

  /* The checkers' cgroup first: without one, nothing is started. */
  if (fd_hostrun_open ("run", "--think", s->think, s->host, o->host_ram,
                       &o->cgroup, &s->think, &err) == -1 ||
      run_clock_arg (o, 1, s->think, &err) == -1 ||
      fd_hostrun_args (s->think, s->host, o->cgroup, o->host_args, s->extra,
                       &s->n_extra, FD_FAULT_KEYS_MAX, &err) == -1) {
    fd_cgroup_free (o->cgroup);
    return fd_usage_error ("run", "%s", err.msg);
  }
  s->cgroup = o->cgroup;
  if (run_make_dir (o, &made_dir) == -1) {
    fd_cgroup_free (o->cgroup);
    return 1;
  }
  fd_catch_signals ();
  if (o->sweep)
    ret = run_sweep (o, made_dir);
  else {
    ret = run_one (o);
    if (!s->keep)
      fd_trial_clean (s, made_dir);
    else
      printf ("  kept: %s\n", s->dir);
    fd_trial_free (&o->r);
  }
  fd_cgroup_free (o->cgroup);
  if (ret == 130) {
    fprintf (stderr, "%s run: interrupted; everything detached\n", fd_progname);
    return 130;
  }
  return ret;
}

int
cmd_run (int argc, char **argv)
{
  static struct run_opts o; /* a trial is too big for the stack */
  int rc;

  rc = run_parse (argc, argv, &o);
  if (rc != FD_OPTS_RUN)
    return rc;
  return run_trial (&o);
}
