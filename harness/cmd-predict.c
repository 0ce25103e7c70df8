/* futuredisk — harness: `futuredisk predict`, the workshop's question
 * answered with measurements.
 *
 * For each disk generation: the whole disk, a file system filled to a
 * share of it with metadata only (fallocate: the plugin stores only
 * metadata), cold caches, and the read-only check timed in the disk's
 * virtual seconds — printed next to the time a full read of that disk
 * takes, the workshop's lower bound for anything that must look at
 * everything.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "errmsg.h"
#include "faultmodels/profile.h"
#include "faultmodels/units.h"
#include "load-profile.h"
#include "proc.h"
#include "trial.h"

static void
predict_usage (FILE *fp)
{
  fprintf (
      fp,
      "Usage: %s predict --fs TYPE [--fill PCT] [--files N|--files-per-tb N] "
      "[--profile P]...\n"
      "                  [--seed N] [--json FILE]\n"
      "Predict the read-only fsck time of each disk generation at full "
      "capacity:\nfill the file system with N files, allocated not "
      "written, then time the\ncheck in the disk's virtual seconds.\n"
      "\n"
      "  --fs TYPE     ext4, xfs or btrfs\n"
      "  --fill PCT    share of the capacity (default 50; '50%%' "
      "works)\n"
      "  --files N     files to spread it over, on every disk\n"
      "  --files-per-tb N  or so many per TB of capacity (default "
      "50000)\n"
      "  --profile P   a disk (repeatable; default the three roadmap "
      "disks)\n"
      "  --seed N      seed of the tree (default 1)\n"
      "  --json FILE   append one trial record per disk\n",
      fd_progname);
}

static void
duration (double s, char *buf, size_t len)
{
  if (s < 120)
    snprintf (buf, len, "%.1f s", s);
  else if (s < 7200)
    snprintf (buf, len, "%.1f min", s / 60);
  else
    snprintf (buf, len, "%.2f h", s / 3600);
}

int
cmd_predict (int argc, char **argv)
{
  static const struct option opts[] = {
      {"help", no_argument, NULL, 'h'},
      {"fs", required_argument, NULL, 't'},
      {"fill", required_argument, NULL, 'f'},
      {"files", required_argument, NULL, 'n'},
      {"files-per-tb", required_argument, NULL, 'N'},
      {"profile", required_argument, NULL, 'p'},
      {"seed", required_argument, NULL, 'S'},
      {"json", required_argument, NULL, 'j'},
      {NULL, 0, NULL, 0},
  };
  const char *profiles[16], *fs = NULL, *json = NULL;
  static const char *const roadmap[] = {"roadmap-2006", "roadmap-2009",
                                        "roadmap-2013"};
  size_t np = 0, i;
  /* Files scale with capacity by default: the same mix of data on a
   * bigger disk (50,000 per TB: 10 MB a file at 50% full).
   */
  uint64_t files = 0, per_tb = 50000, seed = 1;
  double fill = 50, t0 = fd_now_s (), first_fsck = 0;
  struct fm_err err;
  int c, ret = 0;

  optind = 1;
  while ((c = getopt_long (argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
      case 'h':
        predict_usage (stdout);
        return 0;
      case 't':
        fs = optarg;
        break;
      case 'f': {
        char v[32];
        snprintf (v, sizeof v, "%s", optarg);
        if (*v && v[strlen (v) - 1] == '%')
          v[strlen (v) - 1] = '\0';
        if (fm_parse_double ("--fill", v, 1, 90, &fill, &err) == -1)
          goto usage_err;
        break;
      }
      case 'n':
        if (fm_parse_uint ("--files", optarg, 1, 100000000, &files, &err) == -1)
          goto usage_err;
        break;
      case 'N':
        if (fm_parse_uint ("--files-per-tb", optarg, 1, 100000000, &per_tb,
                           &err) == -1)
          goto usage_err;
        files = 0;
        break;
      case 'p':
        if (np == sizeof profiles / sizeof profiles[0]) {
          snprintf (err.msg, sizeof err.msg, "--profile: at most 16");
          goto usage_err;
        }
        profiles[np++] = optarg;
        break;
      case 'S':
        if (fm_parse_uint ("--seed", optarg, 0, UINT64_MAX, &seed, &err) == -1)
          goto usage_err;
        break;
      case 'j':
        json = optarg;
        break;
      default:
        predict_usage (stderr);
        return 2;
    }
  }
  if (optind != argc || fs == NULL) {
    fprintf (stderr, "%s predict: %s\n", fd_progname,
             fs ? "unexpected argument" : "--fs TYPE is required");
    return 2;
  }
  if (fd_fs_find (fs, &err) == NULL)
    goto usage_err;
  if (np == 0)
    for (np = 0; np < 3; np++)
      profiles[np] = roadmap[np];
  for (i = 0; i < np; i++) { /* every profile loads before any work */
    struct fm_profile p;
    if (fd_load_profile (profiles[i], &p, &err) == -1)
      goto usage_err;
  }

  fd_catch_signals ();
  printf ("%-14s %9s %8s %9s %16s %16s %8s\n", "profile", "capacity", "files",
          "used", "full read", "fsck -n", "vs first");
  for (i = 0; i < np && !fd_interrupted; i++) {
    static struct trial t;
    struct fm_profile p;
    char cap[32], used[32], fr[32], fk[32], size[32];
    const struct phase *ck;
    double full_read;

    fd_load_profile (profiles[i], &p, &err);
    memset (&t, 0, sizeof t);
    t.fs = fd_fs_find (fs, &err);
    t.profile = profiles[i];
    snprintf (size, sizeof size, "%" PRIu64, p.capacity);
    t.size = size;
    t.seed = seed;
    t.fill = fill;
    t.timeout = 36000;
    t.check_only = true;
    t.populate = (struct fd_populate_opts){
        .seed = seed,
        .fill_pct = fill,
        .meta_only = true,
        .files =
            files ? files
                  : (uint64_t)((double)per_tb * (double)p.capacity / 1e12) + 1,
        .progress = stderr};
    fd_scratch_template ("predict", t.dir, sizeof t.dir);
    if (mkdtemp (t.dir) == NULL) {
      fprintf (stderr, "%s predict: mkdtemp: %s\n", fd_progname,
               fd_strerror (errno));
      return 1;
    }
    snprintf (t.mnt, sizeof t.mnt, "%s/mnt", t.dir);
    snprintf (t.store, sizeof t.store, "%s/disk.store", t.dir);
    mkdir (t.mnt, 0700);
    fprintf (stderr, "%s predict: %s (%s) ...\n", fd_progname, profiles[i], fs);
    if (fd_trial_run (&t, &err) == -1) {
      snprintf (t.error, sizeof t.error, "%s", err.msg);
      fprintf (stderr, "%s predict: %s: %s\n", fd_progname, profiles[i],
               err.msg);
      ret = 1;
    }
    if (json) {
      FILE *fp = fopen (json, "a");
      if (fp) {
        fd_trial_record (&t, fp);
        fclose (fp);
      }
    }
    fd_trial_clean (&t, true);
    ck = fd_trial_phase (&t, "check");
    if (ck == NULL || ck->outcome == NULL) {
      fd_manifest_free (&t.m);
      continue;
    }
    if (i == 0)
      first_fsck = ck->virtual_s;
    full_read = (double)p.design_capacity / (double)p.bandwidth;
    fm_format_size (p.capacity, cap, sizeof cap);
    fm_format_size (t.m.bytes, used, sizeof used);
    duration (full_read, fr, sizeof fr);
    duration (ck->virtual_s, fk, sizeof fk);
    printf ("%-14s %9s %8zu %9s %16s %16s %7.2fx%s%s\n", p.name, cap, t.m.n,
            used, fr, fk, first_fsck > 0 ? ck->virtual_s / first_fsck : 0,
            strcmp (ck->outcome, "CLEAN") ? "  " : "",
            strcmp (ck->outcome, "CLEAN") ? ck->outcome : "");
    fflush (stdout);
    fd_manifest_free (&t.m);
  }
  printf ("(%s, %.0f%% full, metadata only; took %.0f s wall)\n", fs, fill,
          fd_now_s () - t0);
  if (fd_interrupted)
    return 130;
  return ret;

usage_err:
  fprintf (stderr, "%s predict: %s\n", fd_progname, err.msg);
  return 2;
}
