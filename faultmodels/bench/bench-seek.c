/* futuredisk — faultmodels: the seek curve and 512e writes beside the
 * published figures (model time, not CPU time).
 *
 * Read seeks at fractions of each rotating profile's stroke, its write
 * seeks, then on each 512e profile the mean of 512 B and of aligned 4 KiB
 * FUA writes at the same random places.  The reference row is the seek
 * table extracted from a 4 TB, 7200 rpm drive (G4_LBA_64bit_4T.seeks in
 * https://github.com/westerndigitalcorporation/DiskSim; 1 %, 10 % and a
 * third interpolated) with a full stroke of 14-16 ms; HP quotes +16-22 ms
 * for a 512e read-modify-write
 * (https://manualsdump.com/en/manuals/hp-dx2390/290504/19).
 *
 * Usage: bench-seek [WRITES]   (default 5,000 per 512e measurement)
 */
#include <stdio.h>
#include <stdlib.h>

#include "faultmodels/disk.h"
#include "faultmodels/geometry.h"
#include "faultmodels/rng.h"
#include "faultmodels/seek.h"

static const double fractions[] = {0.0005, 0.003, 0.017, 0.01, 0.1, 1 / 3.0, 1};

static void
die (const struct fm_err *err)
{
  fprintf (stderr, "bench-seek: %s\n", err->msg);
  exit (1);
}

static void
seek_row (const struct fm_profile *p)
{
  struct fm_seek_spec spec;
  struct fm_geometry *g;
  struct fm_seek s;
  struct fm_err err;
  double C;
  size_t i;

  if ((g = fm_geometry_new (p, &err)) == NULL)
    die (&err);
  C = fm_geometry_design_cylinders (g);
  fm_geometry_free (g);
  fm_profile_seek_spec (p, &spec);
  if (fm_seek_init (&s, &spec, C, &err) == -1)
    die (&err);
  printf ("%-14s", p->name);
  for (i = 0; i < sizeof fractions / sizeof fractions[0]; i++)
    printf (" %6.2f", fm_seek_time (&s, fractions[i] * C) / 1e6);
  printf ("   %4.2f/%5.2f\n", fm_seek_write_time (&s, 1) / 1e6,
          (p->seek_avg_ns + p->write_settle_ns) / 1e6);
}

/* Mean FUA write time of `len` bytes at random 4 KiB slots. */
static double
fua_mean (const struct fm_profile *p, uint64_t len, uint64_t count)
{
  struct fm_disk_options o = {false, true, FM_QUEUE_SPTF};
  struct fm_request rq = {.op = FM_OP_WRITE, .flags = FM_REQ_FUA};
  struct fm_timing t;
  struct fm_err err;
  struct fm_disk *d = fm_disk_new (p, 1, &o, &err);
  uint64_t i, now = 0, sum = 0;

  if (d == NULL)
    die (&err);
  rq.length = len;
  for (i = 0; i < count; i++) {
    uint64_t h = fm_hash (1, FM_STREAM_BENCH, i, 0);

    rq.offset = fm_below (h, p->capacity / 4096) * 4096;
    rq.arrival_ns = now;
    fm_disk_submit (d, &rq, &t);
    sum += t.done_ns - t.start_ns;
    now = t.done_ns;
  }
  fm_disk_free (d);
  return sum / 1e6 / count;
}

int
main (int argc, char **argv)
{
  uint64_t n = argc > 1 ? strtoull (argv[1], NULL, 10) : 5000;
  struct fm_profile p;
  struct fm_err err;
  const char *name;
  size_t i;

  if (n == 0) {
    fprintf (stderr, "usage: bench-seek [WRITES]\n");
    return 2;
  }
  printf ("read seek, ms, at a fraction of the stroke; write t2t/avg, ms\n");
  printf ("%-14s %6s %6s %6s %6s %6s %6s %6s   %s\n", "profile", "0.05%",
          "0.3%", "1.7%", "1%", "10%", "1/3", "full", "write");
  printf ("%-14s %6s %6s %6s %6s %6s %6s %6s\n", "4 TB table", "1.6", "2.0",
          "2.9", "2.5", "4.7", "7.8", "14-16");
  for (i = 0; (name = fm_profile_builtin_name (i)) != NULL; i++) {
    if (fm_profile_builtin (name, &p, &err) == -1)
      die (&err);
    if (fm_profile_rotating (&p))
      seek_row (&p);
  }
  printf ("\n4 KiB physical sectors: mean FUA write, ms, %llu at random 4 KiB "
          "slots\n",
          (unsigned long long)n);
  printf ("%-14s %10s %10s %10s %10s\n", "profile", "512 B", "4 KiB",
          "difference", "revolution");
  for (i = 0; (name = fm_profile_builtin_name (i)) != NULL; i++) {
    double small, aligned;

    if (fm_profile_builtin (name, &p, &err) == -1)
      die (&err);
    if (!fm_profile_rotating (&p) || p.sector != 4096)
      continue;
    small = fua_mean (&p, 512, n);
    aligned = fua_mean (&p, 4096, n);
    printf ("%-14s %10.2f %10.2f %10.2f %10.2f\n", p.name, small, aligned,
            small - aligned, 60e3 / p.rpm);
  }
  return 0;
}
