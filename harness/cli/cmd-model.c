/* futuredisk — harness: `futuredisk model`, what the disk models predict.
 *
 * For each profile: the datasheet numbers, the workshop's minimum full-read
 * time (capacity / bandwidth), and what the service-time model gives for a
 * full sequential read, QD1 random 4 KiB reads, and reading 10% of the disk
 * that way — the workshop's question, asked of the model — and random reads
 * with 4, 16 and 32 in flight, which the drive's queue reorders.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "errmsg.h"
#include "faultmodels/measure.h"
#include "faultmodels/units.h"
#include "faultmodels/version.h"
#include "json.h"
#include "load-profile.h"
#include "options.h"

#define MAX_PROFILES 64

static void
model_usage (FILE *fp)
{
  fprintf (
      fp,
      "Usage: %s model [--profile NAME|FILE]... [--size SIZE] [--seed N]\n"
      "                        [--samples N] [--json[=FILE|-]]\n"
      "\n"
      "Print what the disk model predicts for each profile (default: every\n"
      "built-in).  A profile is a built-in name or a profile file\n"
      "(faultmodels/PROFILES.md).\n"
      "\n"
      "Options:\n"
      "  -p, --profile NAME|FILE  model this profile (repeatable)\n"
      "  -s, --size SIZE          rescale every profile to SIZE (e.g. 1G, "
      "500GB);\n"
      "                           the bandwidth curve and seek stroke are "
      "kept\n"
      "      --seed N             platter phase and random offsets (default "
      "1)\n"
      "      --samples N          random reads to average (default 20000)\n"
      "  -j, --json[=FILE|-]      the same as a JSON array: on stdout instead "
      "of the\n"
      "                           table (--json, --json=-), or written to "
      "FILE\n"
      "                           beside it\n"
      "  -h, --help               this help\n"
      "\n"
      "Columns (JSON key in brackets):\n"
      "  capacity        bytes the disk holds [capacity_bytes]\n"
      "  bw mean/out/in  effective sequential MB/s: the mean over the disk, "
      "the\n"
      "                  outer and the inner zone [bw_mean_mbps, "
      "bw_outer_mbps,\n"
      "                  bw_inner_mbps]\n"
      "  seek            datasheet average read seek, ms [avg_seek_ms]\n"
      "  min full read   capacity / mean bandwidth, the workshop's figure\n"
      "                  [min_full_read_s]\n"
      "  full read       modelled: 16 MiB sequential reads at queue depth 1,\n"
      "                  with head switches, rotation and read-ahead "
      "[full_read_s]\n"
      "  4k ms / IOPS    mean service time of a random 4 KiB read at queue\n"
      "                  depth 1 over the whole disk, and its inverse ('-' "
      "and\n"
      "                  null for a disk that takes no time)\n"
      "                  [random_4k_ms, random_4k_iops]\n"
      "  10%% random      time to read 10%% of the disk in such reads\n"
      "                  [random_10pct_s]\n"
      "  QD4 QD16 QD32   random 4 KiB read IOPS with 4, 16 and 32 reads in\n"
      "                  flight (the drive reorders its queue: profile\n"
      "                  queue_depth), from a seeded closed-loop run of the\n"
      "                  model, not a formula; JSON also has QD1\n"
      "                  [random_4k_iops_qd1, _qd4, _qd16, _qd32]\n"
      "\n"
      "Built-in profiles:",
      fd_progname);
  for (size_t i = 0; fm_profile_builtin_name (i); i++)
    fprintf (fp, " %s", fm_profile_builtin_name (i));
  fprintf (fp, "\n");
}

/* An IOPS figure, or `none` for a disk that takes no time. */
static void
qd_iops (double v, const char *fmt, const char *none, char *buf, size_t len)
{
  if (v > 0)
    snprintf (buf, len, fmt, v);
  else
    snprintf (buf, len, "%s", none);
}

static void
print_json (FILE *fp, const struct fm_profile *p, const struct fm_summary *s,
            bool last)
{
  char iops[32] = "null"; /* a disk that takes no time has no IOPS limit */
  char qd[4][32];
  size_t i;

  if (s->random_4k_iops > 0)
    snprintf (iops, sizeof iops, "%.2f", s->random_4k_iops);
  for (i = 0; i < 4; i++)
    qd_iops (s->random_4k_iops_qd[i], "%.2f", "null", qd[i], sizeof qd[i]);
  fprintf (fp, "  {\"name\": ");
  fd_json_string (fp, p->name);
  fprintf (fp,
           ", \"model_version\": %d, \"kind\": \"%s\", "
           "\"capacity_bytes\": %llu, "
           "\"sector_bytes\": %u, \"rpm\": %u,\n"
           "   \"bw_mean_mbps\": %.3f, \"bw_outer_mbps\": %.3f, "
           "\"bw_inner_mbps\": %.3f, \"avg_seek_ms\": %.3f,\n"
           "   \"min_full_read_s\": %.3f, \"full_read_s\": %.3f, "
           "\"random_4k_ms\": %.4f, \"random_4k_iops\": %s, "
           "\"random_10pct_s\": %.1f,\n   \"random_4k_iops_qd1\": %s, "
           "\"random_4k_iops_qd4\": %s, \"random_4k_iops_qd16\": %s, "
           "\"random_4k_iops_qd32\": %s, \"queue_depth\": %u,\n"
           "   \"description\": ",
           FM_MODEL_VERSION, fm_profile_kind_name (p->kind),
           (unsigned long long)p->capacity, p->sector, p->rpm,
           p->bandwidth / 1e6, fm_profile_bw_outer (p) / 1e6,
           fm_profile_bw_inner (p) / 1e6, p->seek_avg_ns / 1e6,
           s->min_full_read_s, s->full_read_s, s->random_4k_ms, iops,
           s->random_10pct_s, qd[0], qd[1], qd[2], qd[3],
           fm_profile_rotating (p) ? p->queue_depth : 1);
  fd_json_string (fp, p->description);
  fprintf (fp, ",\n   \"sourced\": ");
  fd_json_string (fp, p->sourced);
  fprintf (fp, ",\n   \"estimated\": ");
  fd_json_string (fp, p->estimated);
  fprintf (fp, "}%s\n", last ? "" : ",");
}

static void
print_row (const struct fm_profile *p, const struct fm_summary *s)
{
  char cap[32], bw[32], minr[32], full[32], pct[32], iops[32] = "-";
  char qd[3][32];
  size_t i;

  fm_format_size (p->capacity, cap, sizeof cap);
  if (p->bandwidth == 0)
    snprintf (bw, sizeof bw, "unlimited");
  else
    snprintf (bw, sizeof bw, "%.0f/%.0f/%.0f", p->bandwidth / 1e6,
              fm_profile_bw_outer (p) / 1e6, fm_profile_bw_inner (p) / 1e6);
  fm_format_duration (s->min_full_read_s, minr, sizeof minr);
  fm_format_duration (s->full_read_s, full, sizeof full);
  fm_format_duration (s->random_10pct_s, pct, sizeof pct);
  if (s->random_4k_iops > 0)
    snprintf (iops, sizeof iops, "%.0f", s->random_4k_iops);
  for (i = 0; i < 3; i++)
    qd_iops (s->random_4k_iops_qd[i + 1], "%.0f", "-", qd[i], sizeof qd[i]);
  /* Whole seconds for real disks, decimals for small rescaled ones. */
  printf ("%-17s %8s %13s %5.1f %8.*f s %-9s %8.*f s %-9s %7.3f %7s %11s "
          "%5s %5s %5s\n",
          p->name, cap, bw, p->seek_avg_ns / 1e6,
          s->min_full_read_s < 100 ? 2 : 0, s->min_full_read_s, minr,
          s->full_read_s < 100 ? 2 : 0, s->full_read_s, full, s->random_4k_ms,
          iops, pct, qd[0], qd[1], qd[2]);
}

struct model_opts {
  const char *names[MAX_PROFILES];
  size_t n;
  uint64_t size, seed, samples;
  const char *json; /* --json's "-" or FILE, NULL without */
};

static int
model_set (void *vo, int c, const char *arg, struct fm_err *err)
{
  struct model_opts *o = vo;

  switch (c) {
    case 'p':
      if (o->n == MAX_PROFILES)
        return fm_fail (err, "at most %d profiles", MAX_PROFILES);
      o->names[o->n++] = arg;
      return 0;
    case 's':
      if (fm_parse_size ("--size", arg, &o->size, err) == -1)
        return -1;
      if (o->size == 0)
        return fm_fail (err, "--size: must be positive");
      return 0;
    case 'S':
      return fm_parse_uint ("--seed", arg, 0, UINT64_MAX, &o->seed, err);
    case 'n':
      return fm_parse_uint ("--samples", arg, 1, 100000000, &o->samples, err);
    case 'j':
      return fd_json_option (arg, &o->json, err);
  }
  return fm_fail (err, "unhandled option");
}

static const struct option model_options[] = {
    {"profile", required_argument, NULL, 'p'},
    {"size", required_argument, NULL, 's'},
    {"seed", required_argument, NULL, 'S'},
    {"samples", required_argument, NULL, 'n'},
    {"json", optional_argument, NULL, 'j'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static const struct fd_cmd_opts model_cmd = {"model", model_options,
                                             model_usage, model_set};

static int
model_parse (int argc, char **argv, struct model_opts *o)
{
  int first, rc;

  *o = (struct model_opts){.seed = 1, .samples = 20000};
  rc = fd_options_parse_short (&model_cmd, "p:s:j::h", argc, argv, o, &first);
  if (rc != FD_OPTS_RUN)
    return rc;
  if (first < argc)
    return fd_usage_error ("model", "unexpected argument '%s'%s", argv[first],
                           fd_json_hint (o->json));
  if (o->n == 0)
    for (; fm_profile_builtin_name (o->n); o->n++)
      o->names[o->n] = fm_profile_builtin_name (o->n);
  return FD_OPTS_RUN;
}

/* The table on stdout unless the JSON is there (fd_json_option). */
static int
model_print (const struct model_opts *o, const struct fm_profile *p, size_t n)
{
  bool table = o->json == NULL || strcmp (o->json, "-") != 0;
  FILE *jf = NULL;
  struct fm_summary s;
  struct fm_err err;
  size_t i;

  if (o->json && (jf = fd_json_open (o->json, "w")) == NULL) {
    fprintf (stderr, "%s model: %s: %s\n", fd_progname, o->json,
             fd_strerror (errno));
    return 1;
  }
  if (jf)
    fprintf (jf, "[\n");
  if (table)
    printf ("%-17s %8s %13s %5s %19s %19s %7s %7s %11s %5s %5s %5s\n",
            "profile", "capacity", "bw mean/out/in", "seek", "min full read",
            "full read", "4k ms", "IOPS", "10% random", "QD4", "QD16", "QD32");
  for (i = 0; i < n; i++) {
    if (fm_measure_summary (&p[i], o->seed, o->samples, &s, &err) == -1) {
      fflush (stdout);
      fprintf (stderr, "%s model: %s\n", fd_progname, err.msg);
      if (jf)
        fd_json_close (jf);
      return 1;
    }
    if (jf)
      print_json (jf, &p[i], &s, i + 1 == n);
    if (table)
      print_row (&p[i], &s);
    fflush (stdout);
  }
  if (jf) {
    fprintf (jf, "]\n");
    if (fd_json_close (jf) == -1) {
      fprintf (stderr, "%s model: %s: %s\n", fd_progname, o->json,
               fd_strerror (errno));
      return 1;
    }
  }
  return 0;
}

/* Every profile is loaded before anything is printed, so a bad name
 * fails at once and never after half a table.
 */
static int
model_run (const struct model_opts *o)
{
  struct fm_profile *p;
  struct fm_err err;
  size_t i, n = o->n;
  int r = 1;

  p = calloc (n, sizeof *p);
  if (p == NULL) {
    perror (fd_progname);
    return 1;
  }
  for (i = 0; i < n; i++) {
    if (fd_load_profile (o->names[i], &p[i], &err) == -1 ||
        (o->size && fm_profile_resize (&p[i], o->size, &err) == -1)) {
      fprintf (stderr, "%s model: %s\n", fd_progname, err.msg);
      goto out;
    }
  }
  r = model_print (o, p, n);
out:
  free (p);
  return r;
}

int
cmd_model (int argc, char **argv)
{
  struct model_opts o;
  int rc;

  rc = model_parse (argc, argv, &o);
  if (rc != FD_OPTS_RUN)
    return rc;
  return model_run (&o);
}
