/* futuredisk — nbdplugin: what the fault layer costs a request.
 *
 * CPU time per request and the memory the process gained, for one
 * stream of reads (or writes) on one disk with one set of faults: the
 * fault layer alone (dfaults_read and dfaults_flips, as the emulator
 * calls them for every read; dfaults_fate and dfaults_write for a write)
 * or the whole request path (emu_pread, emu_pwrite on the RAM store,
 * virtual time, think=zero).  One configuration per run, so that each run's
 * memory is its own; run it again for another.
 *
 * Usage: bench-faults faults|emu seq|rand|alt FAULTS DISK-GiB SPAN-GiB
 *                     [SECTOR]
 *   FAULTS: fault keys, "flip-rate=1e-7" or "faults=consumer,corrupt=1"
 *           (comma-separated, as the plugin's parameters; "none": none)
 *   seq:  128 KiB reads, one after the other, over the first SPAN bytes
 *   rand: as many 4 KiB reads as seq makes, at random over SPAN
 *   alt:  every other 4 KiB block of SPAN, in order (a count that changes
 *         every 4 KiB: the worst layout for anything kept per run)
 *   wseq, wrand: writes, as seq and rand read (the emu layer keeps what
 *         they write in RAM: a span of a few GiB at most)
 * SECTOR (faults only): 512 or 4096 (default 4096).  The emu layer uses
 * the roadmap-2013 profile (4 KiB sectors) cut to DISK-GiB.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu.h"
#include "faults.h"
#include "faultmodels/faultset.h"
#include "faultmodels/profile.h"
#include "faultmodels/rng.h"

#define GIB ((uint64_t)1 << 30)

static double
cpu_s (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* VmRSS in KiB. */
static long
rss_kib (void)
{
  FILE *fp = fopen ("/proc/self/status", "r");
  char line[256];
  long v = -1;

  while (fp && fgets (line, sizeof line, fp))
    if (sscanf (line, "VmRSS: %ld", &v) == 1)
      break;
  if (fp)
    fclose (fp);
  return v;
}

static void
die (const char *what, const char *msg)
{
  fprintf (stderr, "bench-faults: %s: %s\n", what, msg);
  exit (1);
}

/* A mode of writes ("wseq", "wrand"): those of its read mode. */
static bool
writes (const char *mode)
{
  return mode[0] == 'w';
}

/* The i-th request of mode over span: *off and *len. */
static void
nth_read (const char *mode, uint64_t span, uint64_t i, uint64_t *off,
          uint64_t *len)
{
  if (writes (mode))
    mode++;
  if (strcmp (mode, "seq") == 0) {
    *len = 128 << 10;
    *off = i * *len % span;
  } else if (strcmp (mode, "rand") == 0) {
    *len = 4096;
    *off = fm_below (fm_hash (1, FM_STREAM_BENCH, i, 0), span / 4096) * 4096;
  } else {
    *len = 4096;
    *off = 2 * i * 4096 % span;
  }
}

static uint64_t
reads_of (const char *mode, uint64_t span)
{
  return strcmp (mode, "alt") == 0 ? span / 8192 : span / (128 << 10);
}

/* The fault keys of spec ("k=v,k=v", or "none") into set. */
static void
set_faults (struct fm_faultset *set, const char *spec)
{
  char copy[512], *kv, *save = NULL;
  struct fm_err err;

  if (strcmp (spec, "none") == 0)
    return;
  snprintf (copy, sizeof copy, "%s", spec);
  for (kv = strtok_r (copy, ",", &save); kv; kv = strtok_r (NULL, ",", &save)) {
    char *eq = strchr (kv, '=');

    if (eq == NULL)
      die (kv, "not KEY=VALUE");
    *eq = '\0';
    if (fm_faultset_set (set, kv, eq + 1, &err) == -1)
      die (kv, err.msg);
  }
}

/* One configuration's stream of reads. */
struct run {
  const char *mode;
  uint64_t disk, span, sector, n;
  struct fm_faultset set;
  double cpu_s;   /* spent on the reads */
  uint64_t flips; /* they met */
};

static void
run_faults (struct run *r)
{
  struct dfaults_config cfg = {.sector = (uint32_t)r->sector,
                               .disk_size = r->disk,
                               .seed = 1,
                               .track_bytes = 1 << 20,
                               .retry_ns = 8000000,
                               .set = r->set};
  struct fm_err err;
  struct dfaults *f = dfaults_new (&cfg, &err);
  double t0;
  uint64_t i;

  if (f == NULL)
    die ("dfaults_new", err.msg);
  t0 = cpu_s ();
  for (i = 0; i < r->n; i++) {
    uint64_t off, len, extra, *bits, at;

    nth_read (r->mode, r->span, i, &off, &len);
    if (writes (r->mode)) {
      if (dfaults_fate (f, i * 1000, off, len, &at) &&
          dfaults_write (f, i * 1000, at, len, &err) == -1)
        die ("dfaults_write", err.msg);
      continue;
    }
    if (dfaults_read (f, i * 1000, off, len, true, &extra, &err) == -1)
      die ("dfaults_read", err.msg);
    r->flips += dfaults_flips (f, i * 1000, off, len, &bits);
    free (bits);
  }
  r->cpu_s = cpu_s () - t0;
}

/* The "flip" member of the stats' faults. */
static uint64_t
emu_flips (struct emu *e)
{
  char *text = NULL, *p;
  size_t len = 0;
  FILE *fp = open_memstream (&text, &len);
  uint64_t v = 0;

  if (fp == NULL)
    die ("open_memstream", "out of memory");
  emu_stats_json (e, fp);
  fclose (fp);
  if ((p = strstr (text, "\"flip\": ")) != NULL)
    v = strtoull (p + 8, NULL, 10);
  free (text);
  return v;
}

static void
run_emu (struct run *r)
{
  struct emu_config cfg = {
      .seed = 1, .time_scale = 0, .think_zero = true, .grace_ns = 1};
  struct emu_result res;
  struct fm_err err;
  struct emu *e;
  char *buf = calloc (1, 128 << 10);
  double t0;
  uint64_t i;

  if (buf == NULL || fm_profile_builtin ("roadmap-2013", &cfg.profile, &err) ||
      fm_profile_resize (&cfg.profile, r->disk, &err) == -1)
    die ("profile", buf ? err.msg : "out of memory");
  fm_disk_default_options (&cfg.profile, &cfg.caches);
  cfg.faults = r->set;
  if ((e = emu_new (&cfg, &err)) == NULL)
    die ("emu_new", err.msg);
  t0 = cpu_s ();
  for (i = 0; i < r->n; i++) {
    uint64_t off, len;

    nth_read (r->mode, r->span, i, &off, &len);
    if (writes (r->mode)
            ? emu_pwrite (e, buf, len, off, false, &res, &err) == -1
            : emu_pread (e, buf, len, off, &res, &err) == -1)
      die (r->mode, err.msg);
  }
  r->cpu_s = cpu_s () - t0;
  r->flips = emu_flips (e);
  free (buf);
}

int
main (int argc, char **argv)
{
  struct run r = {.sector = 4096};
  bool faults;
  long rss0;

  if (argc < 6 || argc > 7 ||
      (strcmp (argv[1], "faults") != 0 && strcmp (argv[1], "emu") != 0) ||
      (strcmp (argv[2], "seq") != 0 && strcmp (argv[2], "rand") != 0 &&
       strcmp (argv[2], "alt") != 0 && strcmp (argv[2], "wseq") != 0 &&
       strcmp (argv[2], "wrand") != 0)) {
    fprintf (stderr, "usage: bench-faults faults|emu seq|rand|alt|wseq|wrand "
                     "FAULTS DISK-GiB SPAN-GiB [SECTOR]\n");
    return 2;
  }
  faults = strcmp (argv[1], "faults") == 0;
  r.mode = argv[2];
  r.disk = strtoull (argv[4], NULL, 10) * GIB;
  r.span = strtoull (argv[5], NULL, 10) * GIB;
  if (argc == 7)
    r.sector = strtoull (argv[6], NULL, 10);
  if (r.span == 0 || r.span > r.disk || (r.sector != 512 && r.sector != 4096))
    die ("arguments", "SPAN must be 1..DISK GiB, SECTOR 512 or 4096");
  fm_faultset_defaults (&r.set);
  set_faults (&r.set, argv[3]);
  r.n = reads_of (r.mode, r.span);
  rss0 = rss_kib ();
  if (faults)
    run_faults (&r);
  else
    run_emu (&r);
  /* The disk is still there: what it holds is in the RSS. */
  printf ("%s %s %s disk=%" PRIu64 "GiB span=%" PRIu64 "GiB sector=%" PRIu64
          ": %" PRIu64 " requests, %.0f ns CPU each, "
          "%" PRIu64 " flips, RSS +%.1f MiB\n",
          argv[1], r.mode, argv[3], r.disk / GIB, r.span / GIB,
          faults ? r.sector : 4096, r.n, r.cpu_s * 1e9 / (double)r.n, r.flips,
          (double)(rss_kib () - rss0) / 1024);
  return 0;
}
