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
#include "options.h"
#include "proc.h"
#include "trial.h"
#include "hostrun.h"
#include "cgroup.h"

static void
predict_usage (FILE *fp)
{
  fprintf (
      fp,
      "Usage: %s predict --fs TYPE [--fill PCT] [--files N|--files-per-tb N] "
      "[--profile P]...\n"
      "                  [--seed N] [--tree KIND] [--restore-rate RATE] "
      "[--json[=FILE|-]]\n"
      "Predict the read-only fsck time of each disk generation at full "
      "capacity:\nfill the file system with N files, allocated not "
      "written, then time the\ncheck in the disk's virtual seconds.\n"
      "\n"
      "  --fs TYPE     ext4, xfs, btrfs, chunkfs or ext3\n"
      "  --fill PCT    share of the capacity (default 50; '50%%' "
      "works)\n"
      "  --files N     files to spread it over, on every disk\n"
      "  --files-per-tb N  or so many per TB of capacity (default "
      "50000; large-media:\n"
      "                one per 512 MiB of the fill)\n"
      "  --profile P   a disk (repeatable; default the three roadmap "
      "disks)\n"
      "  --seed N      seed of the tree (default 1)\n"
      "  --tree KIND   the tree's shape: mixed (default), hardlink-farm, "
      "small-files,\n"
      "                large-media, aged (futuredisk(1))\n"
      "  --restore-rate RATE  a restore from backup runs at RATE per "
      "second (e.g.\n"
      "                125MB); default: the used bytes written back "
      "through the\n"
      "                drive model, sequentially\n"
      "  --think auto|cpu|real|zero  the checker's own time on the "
      "clock: its CPU\n"
      "                time in a cgroup (cpu: root, cgroup v2), wall, or "
      "none; auto\n"
      "                (default): cpu where the cgroup can be made, else "
      "real\n"
      "  --host NAME   the checker's machine: speed (think=cpu) and RAM "
      "limit;\n"
      "                native (default), server-2024, server-2006, "
      "nas-2010\n"
      "  --attach HOW  the block device: auto (default), nbd, loop, or "
      "serial (loop,\n"
      "                the requests reaching the drive one at a time in the "
      "kernel's\n"
      "                order: with --think zero a seed gives one check "
      "time)\n"
      "  --json[=FILE|-]  each disk's trial record, one JSON line: "
      "appended to FILE,\n"
      "                or on stdout (--json, --json=-; the table goes to "
      "stderr)\n"
      "Beside each check: a restore of the used bytes, and which gets the "
      "data back\nsooner.\n",
      fd_progname);
}

/* The trial's row of the table, when its check ran. */
static void
print_row (const struct trial_result *r, const struct fm_profile *p, bool first,
           double *first_fsck)
{
  char cap[32], used[32], fr[32], fk[32], rs[32] = "-";
  const struct phase *ck = fd_trial_phase (r, "check");
  double full_read;

  if (ck == NULL || ck->outcome == NULL)
    return;
  if (first)
    *first_fsck = ck->virtual_s;
  full_read = (double)p->design_capacity / (double)p->bandwidth;
  fm_format_size (p->capacity, cap, sizeof cap);
  fm_format_size (r->m.bytes, used, sizeof used);
  fm_format_duration (full_read, fr, sizeof fr);
  fm_format_duration (ck->virtual_s, fk, sizeof fk);
  if (r->restore_s >= 0)
    fm_format_duration (r->restore_s, rs, sizeof rs);
  printf ("%-17s %9s %8zu %9s %12s %12s %8.2fx %12s %s%s%s\n", p->name, cap,
          r->m.n, used, fr, fk,
          *first_fsck > 0 ? ck->virtual_s / *first_fsck : 0, rs,
          r->restore_s >= 0 ? fd_trial_quicker (r) : "-",
          strcmp (ck->outcome, "CLEAN") ? "  " : "",
          strcmp (ck->outcome, "CLEAN") ? ck->outcome : "");
  fflush (stdout);
}

struct predict_opts {
  const char *profiles[16], *fs, *json;
  size_t np;
  /* Files scale with capacity by default: the same mix of data on a
   * bigger disk (50,000 per TB: 10 MB a file at 50% full).
   */
  uint64_t files, per_tb, seed;
  double fill, restore_rate;
  enum fd_tree tree;
  bool per_tb_set;   /* --files-per-tb given */
  const char *think; /* --think (default auto) */
  const char *host;  /* --host; NULL: not given */
  const char *via;   /* --attach; NULL: auto */
};

/* A disk's checker host (--host, else the profile's host key), its
 * cgroup and the plugin parameters that name them.
 */
struct predict_host {
  const char *host;  /* NULL: native */
  const char *think; /* what --think came to with this host's cgroup */
  char name[32];
  struct fd_cgroup *cgroup;
  char think_arg[32], args[2][FD_HOSTRUN_ARG_MAX];
};

/* The files on a disk of `capacity` bytes: --files, else per TB; but
 * large-media's are few and large unless told otherwise: one per 512 MiB
 * (its median size) of the fill.
 */
static uint64_t
predict_files (const struct predict_opts *o, uint64_t capacity)
{
  if (o->files)
    return o->files;
  if (o->tree == FD_TREE_LARGE_MEDIA && !o->per_tb_set)
    return (uint64_t)((double)capacity * o->fill / 100 / (512.0 * 1048576)) + 1;
  return (uint64_t)((double)o->per_tb * (double)capacity / 1e12) + 1;
}

static int
predict_set (void *vo, int c, const char *arg, struct fm_err *err)
{
  struct predict_opts *o = vo;

  switch (c) {
    case 't':
      o->fs = arg;
      return 0;
    case 'f': {
      char v[32];
      snprintf (v, sizeof v, "%s", arg);
      if (*v && v[strlen (v) - 1] == '%')
        v[strlen (v) - 1] = '\0';
      return fm_parse_double ("--fill", v, 1, 90, &o->fill, err);
    }
    case 'n':
      return fm_parse_uint ("--files", arg, 1, 100000000, &o->files, err);
    case 'N':
      o->files = 0;
      o->per_tb_set = true;
      return fm_parse_uint ("--files-per-tb", arg, 1, 100000000, &o->per_tb,
                            err);
    case 'p':
      if (o->np == sizeof o->profiles / sizeof o->profiles[0])
        return fm_fail (err, "--profile: at most 16");
      o->profiles[o->np++] = arg;
      return 0;
    case 'S':
      return fm_parse_uint ("--seed", arg, 0, UINT64_MAX, &o->seed, err);
    case 'j':
      return fd_json_option (arg, &o->json, err);
    case 'B':
      return fd_parse_rate ("--restore-rate", arg, &o->restore_rate, err);
    case 'W':
      return fd_tree_parse ("--tree", arg, &o->tree, err);
    case 'K':
      o->think = arg;
      return fd_hostrun_check ("--think", arg, "--host", NULL, err);
    case 'H':
      o->host = arg;
      return fd_hostrun_check ("--think", NULL, "--host", arg, err);
    case 'a':
      o->via = arg;
      return fd_attach_via_check ("--attach", arg, err);
  }
  return fm_fail (err, "unhandled option");
}

static const struct option predict_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"fs", required_argument, NULL, 't'},
    {"fill", required_argument, NULL, 'f'},
    {"files", required_argument, NULL, 'n'},
    {"files-per-tb", required_argument, NULL, 'N'},
    {"profile", required_argument, NULL, 'p'},
    {"seed", required_argument, NULL, 'S'},
    {"json", optional_argument, NULL, 'j'},
    {"restore-rate", required_argument, NULL, 'B'},
    {"tree", required_argument, NULL, 'W'},
    {"think", required_argument, NULL, 'K'},
    {"host", required_argument, NULL, 'H'},
    {"attach", required_argument, NULL, 'a'},
    {NULL, 0, NULL, 0},
};

static const struct fd_cmd_opts predict_cmd = {"predict", predict_options,
                                               predict_usage, predict_set};

/* Parse and check everything, loading every profile, before any work. */
static int
predict_parse (int argc, char **argv, struct predict_opts *o)
{
  static const char *const roadmap[] = {"roadmap-2006", "roadmap-2009",
                                        "roadmap-2013"};
  struct fm_err err;
  int first, rc;
  size_t i;

  *o = (struct predict_opts){
      .per_tb = 50000, .seed = 1, .fill = 50, .think = "auto"};
  rc = fd_options_parse (&predict_cmd, argc, argv, o, &first);
  if (rc != FD_OPTS_RUN)
    return rc;
  if (first != argc)
    return fd_usage_error ("predict", "unexpected argument '%s'%s", argv[first],
                           fd_json_hint (o->json));
  if (o->fs == NULL)
    return fd_usage_error ("predict", "--fs TYPE is required");
  if (fd_fs_find (o->fs, &err) == NULL)
    return fd_usage_error ("predict", "%s", err.msg);
  if (o->np == 0)
    for (o->np = 0; o->np < 3; o->np++)
      o->profiles[o->np] = roadmap[o->np];
  for (i = 0; i < o->np; i++) {
    struct fm_profile p;
    if (fd_load_profile (o->profiles[i], &p, &err) == -1)
      return fd_usage_error ("predict", "%s", err.msg);
  }
  return FD_OPTS_RUN;
}

/* One disk generation's trial; 0, or 1 if it failed (its row is still
 * printed when the check ran).  *first_fsck: the first disk's check time.
 */
static int
predict_one (const struct predict_opts *o, struct predict_host *h,
             const char *profile, bool first, double *first_fsck)
{
  static struct trial_spec t;
  static struct trial_result r;
  struct fm_profile p;
  struct fm_err err;
  char size[32];
  int ret = 0;

  fd_load_profile (profile, &p, &err);
  memset (&t, 0, sizeof t);
  memset (&r, 0, sizeof r);
  t.fs = fd_fs_find (o->fs, &err);
  t.profile = profile;
  snprintf (size, sizeof size, "%" PRIu64, p.capacity);
  t.size = size;
  t.seed = o->seed;
  t.fill = o->fill;
  t.timeout = 36000;
  t.check_only = true;
  t.restore_rate = o->restore_rate;
  t.populate = (struct fd_populate_opts){.seed = o->seed,
                                         .fill_pct = o->fill,
                                         .tree = o->tree,
                                         .meta_only = true,
                                         .files = predict_files (o, p.capacity),
                                         .progress = stderr};
  t.progress = stderr;
  t.progress_every = 10;
  t.think = h->think;
  t.via = o->via;
  t.host = h->host;
  t.cgroup = h->cgroup;
  snprintf (h->think_arg, sizeof h->think_arg, "think=%s", h->think);
  t.extra[t.n_extra++] = h->think_arg;
  fd_hostrun_args (h->think, h->host, h->cgroup, h->args, t.extra, &t.n_extra,
                   FD_FAULT_KEYS_MAX, &err);
  fd_scratch_template ("predict", t.dir, sizeof t.dir);
  if (mkdtemp (t.dir) == NULL) {
    fprintf (stderr, "%s predict: mkdtemp: %s\n", fd_progname,
             fd_strerror (errno));
    return -1;
  }
  snprintf (t.mnt, sizeof t.mnt, "%s/mnt", t.dir);
  snprintf (t.store, sizeof t.store, "%s/disk.store", t.dir);
  mkdir (t.mnt, 0700);
  fprintf (stderr, "%s predict: %s (%s) ...\n", fd_progname, profile, o->fs);
  if (fd_trial_run (&t, &r, &err) == -1) {
    snprintf (r.error, sizeof r.error, "%s", err.msg);
    fprintf (stderr, "%s predict: %s: %s\n", fd_progname, profile, err.msg);
    ret = 1;
  }
  /* An interrupted trial measured nothing whole: no record, no row (as
   * futuredisk run).
   */
  if (o->json && !fd_interrupted) {
    FILE *fp = fd_json_open (o->json, "a");

    if (fp && fd_trial_record (&t, &r, fp, &err) == -1) {
      fprintf (stderr, "%s predict: %s: %s\n", fd_progname, o->json, err.msg);
      fd_json_close (fp);
      ret = 1;
    } else if (fp == NULL || fd_json_close (fp) == -1) {
      fprintf (stderr, "%s predict: %s: %s\n", fd_progname, o->json,
               fd_strerror (errno));
      ret = 1;
    }
  }
  fd_trial_clean (&t, true);
  if (!fd_interrupted)
    print_row (&r, &p, first, first_fsck);
  fd_trial_free (&r);
  return ret;
}

static void
free_hosts (struct predict_host *h, size_t n)
{
  size_t i;

  for (i = 0; i < n; i++)
    fd_cgroup_free (h[i].cgroup);
}

/* Every disk's checker cgroup, before anything starts: -1 with err if
 * one cannot be made (none is left then).
 */
static int
open_hosts (const struct predict_opts *o, struct predict_host *h,
            struct fm_err *err)
{
  struct fm_profile p;
  size_t i;

  for (i = 0; i < o->np; i++) {
    h[i].host = o->host;
    if (h[i].host == NULL && fd_load_profile (o->profiles[i], &p, err) == 0 &&
        p.host[0]) {
      snprintf (h[i].name, sizeof h[i].name, "%s", p.host);
      h[i].host = h[i].name;
    }
    if (fd_hostrun_open ("predict", "--think", o->think, h[i].host, 0,
                         &h[i].cgroup, &h[i].think, err) == -1) {
      free_hosts (h, i);
      return -1;
    }
  }
  return 0;
}

int
cmd_predict (int argc, char **argv)
{
  struct predict_opts o;
  static struct predict_host h[16];
  struct fm_err err;
  double t0 = fd_now_s (), first_fsck = 0;
  int ret = 0, rc;
  size_t i;

  rc = predict_parse (argc, argv, &o);
  if (rc != FD_OPTS_RUN)
    return rc;
  /* The checkers' cgroup first: without one, nothing is started. */
  if (open_hosts (&o, h, &err) == -1)
    return fd_usage_error ("predict", "%s", err.msg);
  fd_catch_signals ();
  printf ("%-17s %9s %8s %9s %12s %12s %9s %12s %s\n", "profile", "capacity",
          "files", "used", "full read", "fsck -n", "vs first", "restore",
          "quicker");
  for (i = 0; i < o.np && !fd_interrupted; i++) {
    rc = predict_one (&o, &h[i], o.profiles[i], i == 0, &first_fsck);
    if (rc == -1) {
      free_hosts (h, o.np);
      return 1;
    }
    ret |= rc;
  }
  free_hosts (h, o.np);
  /* The think mode too: auto comes to cpu or real on this machine. */
  printf ("(%s, %.0f%% full, %s tree, metadata only, think=%s; took %.0f s "
          "wall)\n",
          o.fs, o.fill, fd_tree_name (o.tree), h[0].think, fd_now_s () - t0);
  if (fd_interrupted)
    return 130;
  return ret;
}
