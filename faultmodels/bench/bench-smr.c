/* futuredisk — faultmodels: the drive-managed SMR cliff, in virtual time.
 *
 * Two measurements on a shingled profile and on its CMR sibling (the same
 * profile with kind = hdd), QD1, write cache as the profile has it:
 *
 *   1. Random 4 KiB writes over the whole disk, back to back (no idle
 *      time, so no idle cleaning): IOPS while the media cache fills, and
 *      IOPS once it is full and every write waits for cleaning.
 *   2. A rebuild: SIZE-byte sequential writes (32 KiB, as Ars Technica
 *      reproduced the WD Red rebuild with) over SPAN bytes from the start
 *      of the disk, then a FLUSH; on the shingled disk right after step 1
 *      (media cache full of scattered writes, as on a disk that was in
 *      use) and on an empty one, against the CMR sibling.
 *
 *   3. With SCATTER > 0, the same rebuilds again with a random 4 KiB
 *      write after every SCATTER-th sequential one.
 *
 * Usage: bench-smr [PROFILE [SPAN_GIB [WRITE_KIB [SCATTER]]]]
 *        (defaults: smr-nas-2020, 100 GiB, 32 KiB, 0)
 */
#include <stdio.h>
#include <stdlib.h>

#include "faultmodels/disk.h"
#include "faultmodels/rng.h"

#define KIB 1024ULL
#define GIB (1024ULL * 1024 * 1024)

static struct fm_disk *
open_disk (const struct fm_profile *p)
{
  struct fm_err err;
  struct fm_disk *d = fm_disk_new (p, 1, NULL, &err);

  if (d == NULL) {
    fprintf (stderr, "bench-smr: %s\n", err.msg);
    exit (1);
  }
  return d;
}

/* Submit one request arriving at *now; *now becomes its completion. */
static void
submit (struct fm_disk *d, enum fm_op op, uint64_t off, uint64_t len,
        uint64_t *now)
{
  struct fm_request rq = {.op = op, .offset = off, .length = len};
  struct fm_timing t;

  rq.arrival_ns = *now;
  fm_disk_submit (d, &rq, &t);
  *now = t.done_ns;
}

static uint64_t
cache_bytes (const struct fm_disk *d)
{
  uint64_t bytes, ns, bands;

  fm_disk_smr_stats (d, &bytes, &ns, &bands);
  return bytes;
}

static uint64_t
bands_cleaned (const struct fm_disk *d)
{
  uint64_t bytes, ns, bands;

  fm_disk_smr_stats (d, &bytes, &ns, &bands);
  return bands;
}

/* Random 4 KiB writes: *i counts them (it picks the offsets), *now is the
 * virtual clock.  Stops after `max` writes or once `until` says so.
 */
static void
random_writes (struct fm_disk *d, uint64_t *i, uint64_t *now, uint64_t max,
               bool (*until) (const struct fm_disk *d))
{
  uint64_t slots = fm_disk_profile (d)->capacity / 4096, i0 = *i;

  while (*i - i0 < max && !(until && until (d))) {
    uint64_t h = fm_hash (1, FM_STREAM_BENCH, *i, 0);

    submit (d, FM_OP_WRITE, fm_below (h, slots) * 4096, 4096, now);
    ++*i;
  }
}

static bool
half_full (const struct fm_disk *d)
{
  return cache_bytes (d) * 2 >= fm_disk_profile (d)->smr_cache_bytes;
}

static bool
cleaning (const struct fm_disk *d)
{
  return bands_cleaned (d) > 0;
}

/* IOPS of `n` random writes from where the disk is. */
static double
random_iops (struct fm_disk *d, uint64_t *i, uint64_t *now, uint64_t n,
             bool (*until) (const struct fm_disk *d))
{
  uint64_t i0 = *i, t0 = *now;

  random_writes (d, i, now, n, until);
  return (*i - i0) / ((*now - t0) / 1e9);
}

/* Seconds of a sequential rewrite of [0, span) in `size` writes; with
 * `scatter`, a 4 KiB write at a random place after every `scatter`-th
 * (a file system's metadata as a rebuild goes [E]).
 */
static double
rebuild (struct fm_disk *d, uint64_t now, uint64_t span, uint64_t size,
         uint64_t scatter)
{
  uint64_t t0 = now, off, k = 0, slots = fm_disk_profile (d)->capacity / 4096;

  for (off = 0; off < span; off += size) {
    submit (d, FM_OP_WRITE, off, size, &now);
    if (scatter && ++k % scatter == 0)
      submit (d, FM_OP_WRITE,
              fm_below (fm_hash (2, FM_STREAM_BENCH, k, 0), slots) * 4096, 4096,
              &now);
  }
  submit (d, FM_OP_FLUSH, 0, 0, &now);
  return (now - t0) / 1e9;
}

/* The rebuild on a shingled disk whose media cache is full (`full`, after
 * random writes) or empty, against the CMR sibling.
 */
static void
rebuilds (const struct fm_profile *p, struct fm_disk *full, uint64_t now,
          uint64_t span, uint64_t size, uint64_t scatter)
{
  struct fm_profile cmr = *p;
  struct fm_disk *d;
  double s_full, s_empty, s_cmr;

  cmr.kind = FM_KIND_HDD;
  submit (full, FM_OP_FLUSH, 0, 0, &now); /* start with the write cache empty */
  s_full = rebuild (full, now, span, size, scatter);
  d = open_disk (p);
  s_empty = rebuild (d, 0, span, size, scatter);
  fm_disk_free (d);
  d = open_disk (&cmr);
  s_cmr = rebuild (d, 0, span, size, scatter);
  fm_disk_free (d);
  printf ("%s: rebuild, %llu KiB sequential writes over %.0f GiB", p->name,
          (unsigned long long)(size / 1024), span / (double)GIB);
  if (scatter)
    printf (", a random 4 KiB write after every %llu",
            (unsigned long long)scatter);
  printf (", then FLUSH\n");
  printf ("  SMR, media cache full: %.0f s (%.1f h, %.1f MB/s)\n", s_full,
          s_full / 3600, span / s_full / 1e6);
  printf ("  SMR, media cache empty: %.0f s (%.1f h, %.1f MB/s)\n", s_empty,
          s_empty / 3600, span / s_empty / 1e6);
  printf ("  CMR sibling: %.0f s (%.1f h, %.1f MB/s)\n", s_cmr, s_cmr / 3600,
          span / s_cmr / 1e6);
  printf ("  ratio SMR full / CMR: %.1fx; SMR empty / CMR: %.1fx\n",
          s_full / s_cmr, s_empty / s_cmr);
}

int
main (int argc, char **argv)
{
  const char *name = argc > 1 ? argv[1] : "smr-nas-2020";
  uint64_t span = (argc > 2 ? strtoull (argv[2], NULL, 10) : 100) * GIB;
  uint64_t size = (argc > 3 ? strtoull (argv[3], NULL, 10) : 32) * KIB;
  uint64_t scatter = argc > 4 ? strtoull (argv[4], NULL, 10) : 0;
  struct fm_profile p, cmr;
  struct fm_err err;
  struct fm_disk *d;
  uint64_t i = 0, now = 0, fill_writes, bytes, clean_ns, bands;
  double before, after, cmr_iops;

  if (fm_profile_builtin (name, &p, &err) == -1) {
    fprintf (stderr, "bench-smr: %s\n", err.msg);
    return 1;
  }
  if (p.kind != FM_KIND_SMR || span == 0 || size == 0 || span > p.capacity) {
    fprintf (stderr, "bench-smr: need a shingled profile, 0 < span <= "
                     "capacity, size > 0\n");
    return 1;
  }
  cmr = p;
  cmr.kind = FM_KIND_HDD;

  d = open_disk (&p);
  before = random_iops (d, &i, &now, UINT64_MAX, half_full);
  random_writes (d, &i, &now, UINT64_MAX, cleaning);
  fill_writes = i;
  after = random_iops (d, &i, &now, 20000, NULL);
  fm_disk_smr_stats (d, &bytes, &clean_ns, &bands);
  printf ("%s: random 4 KiB writes, QD1, write cache %s\n", p.name,
          p.cache_bytes ? "on" : "off");
  printf ("  filling the media cache: %.0f IOPS (first half)\n", before);
  printf ("  cache full after %llu writes (%.1f GiB), virtual %.1f s\n",
          (unsigned long long)fill_writes, p.smr_cache_bytes / (double)GIB,
          now / 1e9);
  printf ("  cache full: %.1f IOPS (%.0fx slower); %llu bands cleaned, "
          "%.2f s per band\n",
          after, before / after, (unsigned long long)bands,
          clean_ns / 1e9 / bands);
  {
    struct fm_disk *c = open_disk (&cmr);
    uint64_t j = 0, t = 0;

    /* Past the write cache first: then each write waits for a destage. */
    random_writes (c, &j, &t, cmr.cache_bytes / 4096, NULL);
    cmr_iops = random_iops (c, &j, &t, 20000, NULL);
    fm_disk_free (c);
  }
  printf ("  CMR sibling: %.1f IOPS\n", cmr_iops);

  rebuilds (&p, d, now, span, size, scatter);
  fm_disk_free (d);
  return 0;
}
