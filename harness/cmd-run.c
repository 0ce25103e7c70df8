/* futuredisk — harness: `futuredisk run`, one fault trial end to end.
 *
 * populate (clean disk) -> unmount -> inject (the disk comes back with its
 * faults: rates from --faults, chosen blocks from --target) -> drop caches
 * -> check (read-only) -> repair -> recheck -> mount -> audit -> write
 * probe -> unmount.  Each phase is timed in virtual seconds (control
 * marks), wall and CPU seconds, with the plugin's I/O counters; the trial
 * is one JSON line (--json FILE) and a summary on stdout.  Whatever
 * happens, and on SIGINT or SIGTERM, the disk is detached: nothing stays
 * mounted, attached or running.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "commands.h"
#include "ctlclient.h"
#include "errmsg.h"
#include "faultmodels/rng.h"
#include "faultmodels/units.h"
#include "fsadapter.h"
#include "json.h"
#include "populate.h"
#include "proc.h"

#define MAX_PHASES 12

struct phase {
  const char *name;
  double virtual_s, wall_s, cpu_s;
  uint64_t reads, writes, bytes_read, bytes_written;
  int status, signal;  /* checkers: raw exit, signal; else 0 */
  const char *outcome; /* checkers: normalized outcome; else NULL */
  struct fd_pass passes[12];
  size_t npasses;
};

struct trial {
  /* inputs */
  const struct fd_fs *fs;
  const char *profile, *size, *faults_spec, *target, *json_path;
  const char *extra[64];
  size_t n_extra;
  uint64_t seed;
  double fill, timeout;
  bool keep;
  char dir[PATH_MAX], mnt[PATH_MAX + 8], store[PATH_MAX + 16];
  /* results */
  struct phase ph[MAX_PHASES];
  size_t nph;
  struct fd_manifest m;
  struct fd_audit audit;
  char targets[1024]; /* "type path offset; ..." */
  bool probe_ok, audited;
  char error[600];
  char stats[16384]; /* the plugin's final stats object */
  char *damaged;     /* "class\tpath\n" per file not intact */
  size_t damaged_len;
};

static void
run_usage (FILE *fp)
{
  fprintf (fp,
           "Usage: %s run --fs TYPE [--profile P] [--size SIZE] [--seed N]\n"
           "              [--fill PCT] [--faults SPEC] "
           "[--target TYPE[:COUNT[:KIND]]]\n"
           "              [--json FILE] [--dir DIR] [--keep] "
           "[--timeout SECONDS]\n"
           "Run one fault trial: populate a file system on an emulated disk, "
           "break the\ndisk, check and repair it, audit every file, and "
           "record what happened.\n"
           "\n"
           "  --fs TYPE        file system (ext4, xfs, btrfs)\n"
           "  --profile P      disk profile or profile file (default "
           "roadmap-2006)\n"
           "  --size SIZE      rescale the disk (default 1G)\n"
           "  --seed N         seed for the tree and the faults (default 1)\n"
           "  --fill PCT       fill this share of the file system (default "
           "30)\n"
           "  --faults SPEC    faults the disk comes back with: a preset "
           "and/or\n"
           "                   KEY=VALUE keys, comma-separated\n"
           "  --target T[:N[:K]]  also hit N files' blocks of type T "
           "(data, inode)\n"
           "                   with fault K (ure: unreadable, the default; "
           "lse;\n"
           "                   rot: one bit flipped at rest)\n"
           "  --json FILE      append the trial record as one JSON line\n"
           "  --dir DIR        trial directory (default: a new one under "
           "/var/tmp)\n"
           "  --keep           keep the trial directory (store, logs, "
           "manifest)\n"
           "  --timeout SEC    kill a checker after SEC seconds (default "
           "3600)\n",
           fd_progname);
}

static double
wall_now (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double
self_cpu (void)
{
  struct rusage a, b;

  getrusage (RUSAGE_SELF, &a);
  getrusage (RUSAGE_CHILDREN, &b);
  return (double)(a.ru_utime.tv_sec + a.ru_stime.tv_sec + b.ru_utime.tv_sec +
                  b.ru_stime.tv_sec) +
         (double)(a.ru_utime.tv_usec + a.ru_stime.tv_usec + b.ru_utime.tv_usec +
                  b.ru_stime.tv_usec) /
             1e6;
}

/* A phase in progress: where its clocks and counters started. */
struct clocks {
  double wall, cpu;
  uint64_t vns, reads, writes, br, bw;
};

static int
sample (struct fd_disk *d, const char *name, struct clocks *c,
        struct fm_err *err)
{
  char line[128], *reply;

  snprintf (line, sizeof line, "mark %s", name);
  if (fd_ctl_ok (fd_disk_control (d), line, &reply, err) == -1)
    return -1;
  fd_json_u64 (reply, "virtual_ns", &c->vns);
  free (reply);
  if (fd_ctl_ok (fd_disk_control (d), "stats", &reply, err) == -1)
    return -1;
  fd_json_u64 (reply, "reads", &c->reads);
  fd_json_u64 (reply, "writes", &c->writes);
  fd_json_u64 (reply, "bytes_read", &c->br);
  fd_json_u64 (reply, "bytes_written", &c->bw);
  free (reply);
  c->wall = wall_now ();
  c->cpu = self_cpu ();
  return 0;
}

static struct phase *
begin (struct trial *t, struct fd_disk *d, const char *name, struct clocks *c,
       struct fm_err *err)
{
  struct phase *p = &t->ph[t->nph];

  memset (p, 0, sizeof *p);
  p->name = name;
  if (sample (d, name, c, err) == -1)
    return NULL;
  t->nph++;
  fprintf (stderr, "%s run: %s ...\n", fd_progname, name);
  return p;
}

static int
end (struct fd_disk *d, struct phase *p, const struct clocks *c0,
     struct fm_err *err)
{
  struct clocks c1;

  if (sample (d, p->name, &c1, err) == -1)
    return -1;
  p->virtual_s = (double)(c1.vns - c0->vns) / 1e9;
  p->wall_s = c1.wall - c0->wall;
  p->cpu_s = c1.cpu - c0->cpu;
  p->reads = c1.reads - c0->reads;
  p->writes = c1.writes - c0->writes;
  p->bytes_read = c1.br - c0->br;
  p->bytes_written = c1.bw - c0->bw;
  return 0;
}

/* Run a checker (check, repair or recheck) as one phase. */
static int
checker (struct trial *t, struct fd_disk *d, const char *name, bool repair,
         struct fm_err *err)
{
  const char *const *tmpl = repair ? t->fs->repair : t->fs->check;
  char *argv[FD_ARGV_MAX + 1];
  struct clocks c;
  struct fd_proc pr;
  struct phase *p;
  enum fd_outcome o;

  /* Cold caches, as after a reboot: the checker's reads reach the disk. */
  {
    FILE *fp = fopen ("/proc/sys/vm/drop_caches", "w");
    if (fp) {
      fputs ("3\n", fp);
      fclose (fp);
    }
  }
  if ((p = begin (t, d, name, &c, err)) == NULL)
    return -1;
  fd_fs_argv (tmpl, fd_disk_device (d), argv);
  if (fd_run (argv, t->timeout, &pr, err) == -1)
    return -1;
  if (end (d, p, &c, err) == -1) {
    fd_proc_free (&pr);
    return -1;
  }
  p->status = pr.status;
  p->signal = pr.signal;
  o = pr.timed_out ? FD_TIMEOUT : t->fs->outcome (pr.status, pr.signal, repair);
  p->outcome = fd_outcome_name (o);
  p->npasses = t->fs->passes (pr.out, p->passes, 12);
  {
    char log[PATH_MAX + 32];
    FILE *fp;
    snprintf (log, sizeof log, "%s/%s.out", t->dir, name);
    if ((fp = fopen (log, "w")) != NULL) {
      fputs (pr.out, fp);
      fputs (pr.err, fp);
      fclose (fp);
    }
  }
  fd_proc_free (&pr);
  if (fd_interrupted) {
    snprintf (err->msg, sizeof err->msg, "interrupted");
    return -1;
  }
  return 0;
}

/* --target TYPE[:COUNT[:KIND]]: choose COUNT regular files by the seed,
 * find their blocks of TYPE, fault them with KIND through the control
 * socket.
 */
static int
inject_targets (struct trial *t, struct fd_disk *d, struct fm_err *err)
{
  char type[32] = "", count_s[32] = "1", kind[32] = "ure";
  uint64_t count, done = 0, tries;

  sscanf (t->target, "%31[^:]:%31[^:]:%31s", type, count_s, kind);
  if (fm_parse_uint ("--target count", count_s, 1, 1000, &count, err) == -1)
    return -1;
  for (tries = 0; done < count && tries < 100 * count && t->m.n; tries++) {
    const struct fd_entry *e = &t->m.v[fm_below (
        fm_hash (t->seed, FM_STREAM_POPULATE, tries, 99), t->m.n)];
    uint64_t off, n;
    char line[128];

    if (e->type != FD_FILE || e->size < FD_BLOCK)
      continue;
    if (t->fs->locate (fd_disk_device (d), type, e->path, &off, &n, err) == -1)
      return -1;
    snprintf (line, sizeof line, "inject %s %" PRIu64 " %" PRIu64, kind, off,
              n);
    if (fd_ctl_ok (fd_disk_control (d), line, NULL, err) == -1)
      return -1;
    snprintf (t->targets + strlen (t->targets),
              sizeof t->targets - strlen (t->targets), "%s%s %s %s %" PRIu64,
              done ? "; " : "", kind, type, e->path, off);
    done++;
  }
  if (done < count) {
    snprintf (err->msg, sizeof err->msg,
              "--target %s: found only %" PRIu64 " files to hit", t->target,
              done);
    return -1;
  }
  return 0;
}

static int
write_probe (struct trial *t)
{
  char path[PATH_MAX + 32];
  static char buf[1 << 20];
  FILE *fp;
  int ok;

  snprintf (path, sizeof path, "%s/futuredisk-probe", t->mnt);
  memset (buf, 0x5a, sizeof buf);
  fp = fopen (path, "w");
  ok = fp && fwrite (buf, 1, sizeof buf, fp) == sizeof buf &&
       fflush (fp) == 0 && fsync (fileno (fp)) == 0;
  if (fp)
    ok = fclose (fp) == 0 && ok;
  unlink (path);
  return ok;
}

static void
read_stats (struct trial *t)
{
  char path[PATH_MAX + 32];
  FILE *fp;
  size_t n;

  snprintf (path, sizeof path, "%s/stats.json", t->dir);
  if ((fp = fopen (path, "r")) == NULL)
    return;
  n = fread (t->stats, 1, sizeof t->stats - 1, fp);
  t->stats[n] = '\0';
  while (n > 0 && (t->stats[n - 1] == '\n'))
    t->stats[--n] = '\0';
  fclose (fp);
}

static int
trial_run (struct trial *t, struct fm_err *err)
{
  struct fd_attach_opts o = {.dir = t->dir,
                             .profile = t->profile,
                             .size = t->size,
                             .seed = t->seed,
                             .store = t->store,
                             .fs = t->fs->name,
                             .mkfs = true,
                             .mount = t->mnt};
  struct fd_disk *d;
  struct clocks c;
  struct phase *p;
  struct fm_err e;
  char path[PATH_MAX + 32];

  /* 1. A clean disk, populated. */
  if ((d = fd_disk_attach (&o, err)) == NULL)
    return -1;
  if ((p = begin (t, d, "populate", &c, err)) == NULL ||
      fd_populate (t->mnt, t->seed, t->fill, &t->m, stderr, err) == -1 ||
      end (d, p, &c, err) == -1)
    goto fail;
  snprintf (path, sizeof path, "%s/manifest.tsv", t->dir);
  if (fd_manifest_write (&t->m, path, err) == -1)
    goto fail;
  if ((p = begin (t, d, "unmount", &c, err)) == NULL ||
      fd_disk_unmount (d, err) == -1 || end (d, p, &c, err) == -1)
    goto fail;
  if (fd_disk_detach (d, err) == -1)
    return -1;

  /* 2. The disk comes back broken: fault keys at start, targets now. */
  /* The same server serves the checks and the mount after them: faults
   * injected through its control socket live in it.
   */
  o.mkfs = false;
  o.defer_mount = true;
  o.extra = t->extra;
  o.n_extra = t->n_extra;
  if ((d = fd_disk_attach (&o, err)) == NULL)
    return -1;
  if ((p = begin (t, d, "inject", &c, err)) == NULL ||
      (t->target && inject_targets (t, d, err) == -1) ||
      end (d, p, &c, err) == -1)
    goto fail;

  /* 3. Check, repair, check again. */
  if (checker (t, d, "check", false, err) == -1 ||
      checker (t, d, "repair", true, err) == -1 ||
      checker (t, d, "recheck", false, err) == -1)
    goto fail;

  /* 4. Mount, audit every file, prove the file system takes writes. */
  if (fd_disk_mount (d, err) == -1) {
    /* A file system the checker left unmountable is a finding. */
    snprintf (t->error, sizeof t->error, "mount after repair: %s", err->msg);
    fd_disk_detach (d, &e);
    read_stats (t);
    return 0;
  }
  t->audit.detail = open_memstream (&t->damaged, &t->damaged_len);
  if ((p = begin (t, d, "audit", &c, err)) == NULL ||
      fd_audit (t->mnt, t->seed, &t->m, &t->audit, err) == -1 ||
      end (d, p, &c, err) == -1)
    goto fail;
  if (t->audit.detail)
    fclose (t->audit.detail);
  t->audit.detail = NULL;
  t->audited = true;
  t->probe_ok = write_probe (t);
  if (fd_disk_detach (d, err) == -1)
    return -1;
  read_stats (t);
  return 0;

fail:
  fd_disk_detach (d, &e);
  return -1;
}

static void
record (const struct trial *t, FILE *fp)
{
  size_t i, j;

  fprintf (fp, "{\"fs\": ");
  fd_json_string (fp, t->fs->name);
  fprintf (fp, ", \"profile\": ");
  fd_json_string (fp, t->profile);
  fprintf (fp, ", \"size\": ");
  fd_json_string (fp, t->size);
  fprintf (fp,
           ", \"seed\": %" PRIu64 ", \"fill_pct\": %g, \"faults\": ", t->seed,
           t->fill);
  fd_json_string (fp, t->faults_spec ? t->faults_spec : "");
  fprintf (fp, ", \"target\": ");
  fd_json_string (fp, t->target ? t->target : "");
  fprintf (fp, ", \"targets_hit\": ");
  fd_json_string (fp, t->targets);
  fprintf (fp, ", \"files\": %zu, \"bytes\": %" PRIu64 ", \"phases\": [",
           t->m.n, t->m.bytes);
  for (i = 0; i < t->nph; i++) {
    const struct phase *p = &t->ph[i];
    fprintf (fp,
             "%s{\"name\": \"%s\", \"virtual_s\": %.6f, \"wall_s\": %.3f, "
             "\"cpu_s\": %.3f, \"reads\": %" PRIu64 ", \"writes\": %" PRIu64
             ", \"bytes_read\": %" PRIu64 ", \"bytes_written\": %" PRIu64,
             i ? ", " : "", p->name, p->virtual_s, p->wall_s, p->cpu_s,
             p->reads, p->writes, p->bytes_read, p->bytes_written);
    if (p->outcome) {
      fprintf (fp,
               ", \"exit\": %d, \"signal\": %d, \"outcome\": \"%s\", "
               "\"passes\": {",
               p->status, p->signal, p->outcome);
      for (j = 0; j < p->npasses; j++)
        fprintf (fp, "%s\"%s\": %.2f", j ? ", " : "", p->passes[j].name,
                 p->passes[j].seconds);
      fprintf (fp, "}");
    }
    fprintf (fp, "}");
  }
  fprintf (fp, "], \"audit\": ");
  if (t->audited) {
    fprintf (fp, "{");
    for (i = 0; i < FD_AUDIT_NCLASSES; i++)
      fprintf (fp, "%s\"%s\": %" PRIu64, i ? ", " : "", fd_audit_class_name (i),
               t->audit.count[i]);
    fprintf (fp,
             ", \"zeroed_blocks\": %" PRIu64 ", \"stale_blocks\": %" PRIu64
             ", \"foreign_blocks\": %" PRIu64 ", \"garbled_blocks\": %" PRIu64
             "}",
             t->audit.zeroed_blocks, t->audit.stale_blocks,
             t->audit.foreign_blocks, t->audit.garbled_blocks);
  } else
    fprintf (fp, "null");
  /* Which files (at most 200), so a loss can be matched to its fault. */
  fprintf (fp, ", \"damaged\": [");
  if (t->damaged) {
    const char *line = t->damaged;
    int k = 0;
    while (*line && k < 200) {
      const char *tab = strchr (line, '\t'), *nl = strchrnul (line, '\n');
      char cls[32], path[256];
      if (tab == NULL || tab > nl)
        break;
      snprintf (cls, sizeof cls, "%.*s", (int)(tab - line), line);
      snprintf (path, sizeof path, "%.*s", (int)(nl - tab - 1), tab + 1);
      fprintf (fp, "%s{\"class\": \"%s\", \"path\": ", k++ ? ", " : "", cls);
      fd_json_string (fp, path);
      fprintf (fp, "}");
      line = *nl ? nl + 1 : nl;
    }
  }
  fprintf (fp, "]");
  fprintf (fp, ", \"version\": \"%s\"", FUTUREDISK_VERSION);
  fprintf (fp, ", \"write_probe\": %s, \"error\": ",
           t->audited ? (t->probe_ok ? "true" : "false") : "null");
  fd_json_string (fp, t->error);
  fprintf (fp, ", \"disk\": %s}\n", t->stats[0] ? t->stats : "null");
}

static void
summary (const struct trial *t)
{
  size_t i;

  printf ("trial: %s on %s (%s), seed %" PRIu64 ", %zu entries, %" PRIu64
          " MiB\n",
          t->fs->name, t->profile, t->size, t->seed, t->m.n, t->m.bytes >> 20);
  for (i = 0; i < t->nph; i++)
    printf ("  %-9s %10.3f virtual s %8.2f wall s%s%s\n", t->ph[i].name,
            t->ph[i].virtual_s, t->ph[i].wall_s, t->ph[i].outcome ? "  " : "",
            t->ph[i].outcome ? t->ph[i].outcome : "");
  if (t->audited) {
    printf ("  audit:");
    for (i = 0; i < FD_AUDIT_NCLASSES; i++)
      printf (" %s %" PRIu64, fd_audit_class_name (i), t->audit.count[i]);
    printf ("; write probe %s\n", t->probe_ok ? "ok" : "FAILED");
  }
  if (t->error[0])
    printf ("  error: %s\n", t->error);
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
      {NULL, 0, NULL, 0},
  };
  static struct trial t;
  static char spec[4096];
  const char *fs = NULL, *dir = NULL;
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
      case 'F': {
        char *tok, *save = NULL;
        static char words[64][160];
        t.faults_spec = optarg;
        snprintf (spec, sizeof spec, "%s", optarg);
        for (tok = strtok_r (spec, ",", &save); tok && t.n_extra < 64;
             tok = strtok_r (NULL, ",", &save)) {
          snprintf (words[t.n_extra], sizeof words[0], "%s%s",
                    strchr (tok, '=') ? "" : "faults=", tok);
          t.extra[t.n_extra] = words[t.n_extra];
          t.n_extra++;
        }
        break;
      }
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
    if (fm_parse_size ("--size", t.size, &bytes, &err) == -1)
      goto usage_err;
    if (bytes < t.fs->min_size) {
      snprintf (err.msg, sizeof err.msg,
                "--size: %s needs a disk of at least %" PRIu64 " MiB",
                t.fs->name, t.fs->min_size >> 20);
      goto usage_err;
    }
  }
  if (t.target && strncmp (t.target, "data", 4) != 0 &&
      strncmp (t.target, "inode", 5) != 0) {
    snprintf (err.msg, sizeof err.msg,
              "--target: unknown type '%s' (data, inode)", t.target);
    goto usage_err;
  }
  if (dir) {
    if (mkdir (dir, 0700) == -1 && errno != EEXIST) {
      fprintf (stderr, "%s run: %s: %s\n", fd_progname, dir,
               fd_strerror (errno));
      return 1;
    }
    snprintf (t.dir, sizeof t.dir, "%s", dir);
  } else {
    snprintf (t.dir, sizeof t.dir, "/var/tmp/futuredisk-run.XXXXXX");
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

  fd_catch_signals ();
  if (trial_run (&t, &err) == -1) {
    snprintf (t.error, sizeof t.error, "%s", err.msg);
    ret = 1;
  }
  read_stats (&t);
  summary (&t);
  if (t.json_path) {
    FILE *fp = fopen (t.json_path, "a");
    if (fp == NULL) {
      fprintf (stderr, "%s run: %s: %s\n", fd_progname, t.json_path,
               fd_strerror (errno));
      ret = 1;
    } else {
      record (&t, fp);
      fclose (fp);
    }
  }
  if (!t.keep) {
    const char *files[] = {"disk.store",  "manifest.tsv",
                           "stats.json",  "faults.jsonl",
                           "nbdkit.log",  "nbdfuse.log",
                           "check.out",   "repair.out",
                           "recheck.out", NULL};
    char path[PATH_MAX + 32];
    size_t i;
    for (i = 0; files[i]; i++) {
      snprintf (path, sizeof path, "%s/%s", t.dir, files[i]);
      unlink (path);
    }
    rmdir (t.mnt);
    if (made_dir)
      rmdir (t.dir);
  } else
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
