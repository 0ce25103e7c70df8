/* futuredisk — harness: `futuredisk run`, one fault trial end to end
 * (the engine is trial.c).  One JSON line (--json FILE) and a summary on
 * stdout; exit 130 when interrupted, with everything detached.
 */
#include <errno.h>
#include <getopt.h>
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
#include "proc.h"
#include "attach.h"
#include "db.h"
#include "trial.h"

static void
run_usage (FILE *fp)
{
  fprintf (
      fp,
      "Usage: %s run --fs TYPE [--profile P] [--size SIZE] [--seed N]\n"
      "              [--fill PCT] [--meta-only N] [--crash] [--faults SPEC] "
      "[--target TYPE[:COUNT[:KIND]]]\n"
      "              [--time MODE] [--think real|zero] [--json FILE] [--db "
      "FILE]\n"
      "              [--dir DIR] [--keep] [--timeout SECONDS] "
      "[--attach auto|nbd|loop]\n"
      "               [--campaign NAME --run-id ID "
      "[--rep N]]\n"
      "Run one fault trial: populate a file system on an emulated disk, "
      "break the\ndisk, check and repair it, audit every file, and "
      "record what happened.\n"
      "\n"
      "  --fs TYPE        file system (ext4, xfs, btrfs, chunkfs)\n"
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
      "  --faults SPEC    faults the disk comes back with: a preset "
      "and/or\n"
      "                   KEY=VALUE keys, comma-separated\n"
      "  --target T[:N[:K]]  also hit N files' blocks of type T "
      "(data, inode,\n"
      "                   per file system more: see futuredisk(1))\n"
      "                   with fault K (ure: unreadable, the default; "
      "lse;\n"
      "                   rot: one bit flipped at rest)\n"
      "  --time MODE      the disk's clock: virtual (default), real "
      "(requests\n"
      "                   take their modelled time), scale:F\n"
      "  --think real|zero  does the checker's own time between requests "
      "count\n"
      "                   on the virtual clock (default real; zero: "
      "device-bound)\n"
      "  --json FILE      append the trial record as one JSON line\n"
      "  --db FILE        add it to a SQLite database (harness/SCHEMA.md)\n"
      "  --dir DIR        trial directory (default: a new one under "
      "/var/tmp)\n"
      "  --keep           keep the trial directory (store, logs, "
      "manifest)\n"
      "  --timeout SEC    kill a checker after SEC seconds (default "
      "3600)\n"
      "  --attach HOW     the block device: nbd (/dev/nbdN), loop "
      "(nbdfuse + a\n"
      "                   loop device), auto (default: nbd where the "
      "kernel has it)\n"
      "  --campaign NAME, --run-id ID, --rep N\n"
      "                   label the record as repetition N of a campaign's "
      "night\n"
      "                   (futuredisk campaign sets them)\n"
      "An interrupted trial is not recorded.\n",
      fd_progname);
}

int
cmd_run (int argc, char **argv)
{
  static const struct option opts[] = {
      {"help", no_argument, NULL, 'h'},
      {"fs", required_argument, NULL, 't'},
      {"profile", required_argument, NULL, 'p'},
      {"size", required_argument, NULL, 's'},
      {"seed", required_argument, NULL, 'S'},
      {"fill", required_argument, NULL, 'f'},
      {"faults", required_argument, NULL, 'F'},
      {"target", required_argument, NULL, 'T'},
      {"json", required_argument, NULL, 'j'},
      {"dir", required_argument, NULL, 'd'},
      {"keep", no_argument, NULL, 'k'},
      {"timeout", required_argument, NULL, 'o'},
      {"meta-only", required_argument, NULL, 'M'},
      {"db", required_argument, NULL, 'D'},
      {"crash", no_argument, NULL, 'C'},
      {"time", required_argument, NULL, 'm'},
      {"think", required_argument, NULL, 'K'},
      {"campaign", required_argument, NULL, 'c'},
      {"run-id", required_argument, NULL, 'r'},
      {"rep", required_argument, NULL, 'R'},
      {"attach", required_argument, NULL, 'a'},
      {NULL, 0, NULL, 0},
  };
  static struct trial t;
  static char spec[4096], clock_args[2][80];
  const char *fs = NULL, *dir = NULL, *db_path = NULL;
  struct fm_err err;
  int c, ret = 0;
  bool made_dir = false;

  memset (&t, 0, sizeof t);
  t.profile = "roadmap-2006";
  t.size = "1G";
  t.seed = 1;
  t.fill = 30;
  t.timeout = 3600;
  optind = 1;
  while ((c = getopt_long (argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
      case 'h':
        run_usage (stdout);
        return 0;
      case 't':
        fs = optarg;
        break;
      case 'p':
        t.profile = optarg;
        break;
      case 's':
        t.size = optarg;
        break;
      case 'S':
        if (fm_parse_uint ("--seed", optarg, 0, UINT64_MAX, &t.seed, &err) ==
            -1)
          goto usage_err;
        break;
      case 'f':
        if (fm_parse_double ("--fill", optarg, 0, 95, &t.fill, &err) == -1)
          goto usage_err;
        break;
      case 'F':
        t.faults_spec = optarg;
        if (fd_fault_spec_check (optarg, &err) == -1)
          goto usage_err;
        snprintf (spec, sizeof spec, "%s", optarg);
        if (fd_fault_spec (spec, t.extra, FD_FAULT_KEYS_MAX, &t.n_extra,
                           &err) == -1)
          goto usage_err;
        break;
      case 'T':
        t.target = optarg;
        break;
      case 'j':
        t.json_path = optarg;
        break;
      case 'd':
        dir = optarg;
        break;
      case 'k':
        t.keep = true;
        break;
      case 'o':
        if (fm_parse_double ("--timeout", optarg, 1, 1e7, &t.timeout, &err) ==
            -1)
          goto usage_err;
        break;
      case 'D':
        db_path = optarg;
        break;
      case 'C':
        t.crash = true;
        break;
      case 'm':
        if (fd_trial_parse_time (optarg, &err) == -1)
          goto usage_err;
        t.time_mode = optarg;
        break;
      case 'K':
        if (strcmp (optarg, "real") && strcmp (optarg, "zero")) {
          fm_fail (&err, "--think: '%.64s' is not real or zero", optarg);
          goto usage_err;
        }
        t.think = optarg;
        break;
      case 'c':
        t.campaign = optarg;
        break;
      case 'r':
        t.run_id = optarg;
        break;
      case 'R':
        if (fm_parse_uint ("--rep", optarg, 0, 1000000, &t.rep, &err) == -1)
          goto usage_err;
        break;
      case 'a':
        if (fd_attach_via_check (optarg, &err) == -1)
          goto usage_err;
        t.via = optarg;
        break;
      case 'M':
        t.populate.meta_only = true;
        if (fm_parse_uint ("--meta-only", optarg, 1, 100000000,
                           &t.populate.files, &err) == -1)
          goto usage_err;
        break;
      default:
        run_usage (stderr);
        return 2;
    }
  }
  if (optind != argc || fs == NULL) {
    fprintf (stderr, "%s run: %s\n", fd_progname,
             fs ? "unexpected argument" : "--fs TYPE is required");
    run_usage (stderr);
    return 2;
  }
  if ((t.fs = fd_fs_find (fs, &err)) == NULL)
    goto usage_err;
  {
    uint64_t bytes;
    struct fm_profile p;
    if (strcmp (t.size, "full") == 0) {
      if (fd_load_profile (t.profile, &p, &err) == -1)
        goto usage_err;
      bytes = p.capacity;
    } else if (fm_parse_size ("--size", t.size, &bytes, &err) == -1)
      goto usage_err;
    if (bytes < t.fs->min_size) {
      fm_fail (&err, "--size: %s needs a disk of at least %" PRIu64 " MiB",
               t.fs->name, t.fs->min_size >> 20);
      goto usage_err;
    }
  }
  if ((t.campaign == NULL) != (t.run_id == NULL)) {
    fm_fail (&err, "--campaign and --run-id go together");
    goto usage_err;
  }
  {
    /* The plugin's clock parameters, after the fault keys. */
    const char *const key[] = {"time", "think"},
                      *val[] = {t.time_mode, t.think};
    size_t k;
    for (k = 0; k < 2; k++)
      if (val[k]) {
        if (t.n_extra == FD_FAULT_KEYS_MAX) {
          fm_fail (&err, "--faults: too many keys");
          goto usage_err;
        }
        snprintf (clock_args[k], sizeof clock_args[k], "%s=%s", key[k], val[k]);
        t.extra[t.n_extra++] = clock_args[k];
      }
  }
  if (t.target) {
    char type[34];
    const char *w = t.fs->target_types;
    size_t len = strcspn (t.target, ":");
    snprintf (type, sizeof type, " %.*s ", (int)(len < 30 ? len : 30),
              t.target);
    /* " data inode ... " contains " TYPE " exactly when it is known. */
    char known[256];
    snprintf (known, sizeof known, " %s ", w);
    if (strstr (known, type) == NULL) {
      fm_fail (&err, "--target: unknown type '%.*s' for %s (%s)", (int)len,
               t.target, t.fs->name, w);
      goto usage_err;
    }
  }
  if (dir) {
    if (mkdir (dir, 0700) == -1 && errno != EEXIST) {
      fprintf (stderr, "%s run: %s: %s\n", fd_progname, dir,
               fd_strerror (errno));
      return 1;
    }
    snprintf (t.dir, sizeof t.dir, "%s", dir);
  } else {
    fd_scratch_template ("run", t.dir, sizeof t.dir);
    if (mkdtemp (t.dir) == NULL) {
      fprintf (stderr, "%s run: mkdtemp: %s\n", fd_progname,
               fd_strerror (errno));
      return 1;
    }
    made_dir = true;
  }
  snprintf (t.mnt, sizeof t.mnt, "%s/mnt", t.dir);
  snprintf (t.store, sizeof t.store, "%s/disk.store", t.dir);
  mkdir (t.mnt, 0700);
  unlink (t.store); /* a fresh disk every trial */

  t.populate.seed = t.seed;
  t.populate.fill_pct = t.fill;
  t.populate.progress = stderr;
  fd_catch_signals ();
  if (fd_trial_run (&t, &err) == -1) {
    snprintf (t.error, sizeof t.error, "%s", err.msg);
    ret = 1;
  }
  fd_trial_read_stats (&t);
  fd_trial_summary (&t);
  /* An interrupted trial measured nothing whole: a campaign resumed
   * later runs it again, so it must not be found recorded.
   */
  if (fd_interrupted)
    db_path = NULL, t.json_path = NULL;
  if (db_path) {
    char *rec = NULL;
    size_t len = 0;
    FILE *mf = open_memstream (&rec, &len);
    if (mf) {
      fd_trial_record (&t, mf);
      fclose (mf);
    }
    if (rec == NULL || fd_db_add (db_path, &t, rec, &err) == -1) {
      fprintf (stderr, "%s run: %s\n", fd_progname,
               rec ? err.msg : "out of memory");
      ret = 1;
    }
    free (rec);
  }
  if (t.json_path) {
    FILE *fp = fopen (t.json_path, "a");
    if (fp == NULL) {
      fprintf (stderr, "%s run: %s: %s\n", fd_progname, t.json_path,
               fd_strerror (errno));
      ret = 1;
    } else {
      fd_trial_record (&t, fp);
      fclose (fp);
    }
  }
  if (!t.keep)
    fd_trial_clean (&t, made_dir);
  else
    printf ("  kept: %s\n", t.dir);
  fd_manifest_free (&t.m);
  free (t.damaged);
  if (fd_interrupted) {
    fprintf (stderr, "%s run: interrupted; everything detached\n", fd_progname);
    return 130;
  }
  return ret;

usage_err:
  fprintf (stderr, "%s run: %s\n", fd_progname, err.msg);
  return 2;
}
