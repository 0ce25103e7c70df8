/* futuredisk — faultmodels: short seeks, write seeks and 512e against
 * published figures.
 *
 * Short seeks: the seek table DIXtrac extracted from a 4 TB, 7200 rpm
 * drive (G4_LBA_64bit_4T.seeks in
 * https://github.com/westerndigitalcorporation/DiskSim, about 310,000
 * cylinders): 1.4-1.8 ms up to 140 cylinders (0.05 % of the stroke), 2.0
 * ms at 987 (0.3 %), 2.9 ms at 5,222 (1.7 %), and interpolated 2.5 ms at
 * 1 %, 4.7 ms at 10 %, 7.8 ms at a third; full stroke 1.3-3.6 revolutions
 * on drives of 45 MB to 5 TB (H. Wong,
 * https://blog.stuffedcow.net/2019/09/hard-disk-geometry-microbenchmarking/).
 * Write seeks: Ultrastar DC HC310 track-to-track 0.23 ms read, 0.32 ms
 * write.  512e: HP's Advanced Format paper
 * (https://manualsdump.com/en/manuals/hp-dx2390/290504/19): a write not
 * covering whole 4 KiB sectors pays a read-modify-write, reads never.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "check-main.h"
#include "faultmodels/disk.h"
#include "faultmodels/rng.h"
#include "faultmodels/seek.h"
#include "model-tests.h"

static const char *const hdds[] = {
    "roadmap-2006", "roadmap-2009", "roadmap-2013", "cmr-8t-2015",
    "cmr-20t-2024", "laptop-5400",  "ent-15k",      NULL};

/* The 7200 rpm disks of today the figures above describe. */
static const char *const modern[] = {"cmr-8t-2015", "cmr-20t-2024", NULL};

/* Design cylinders in closed form (as check-model). */
static double
cylinders (const struct fm_profile *p)
{
  double track = p->bandwidth * (60.0 / p->rpm + p->track_switch_ns / 1e9);
  return ceil (p->design_capacity / (p->heads * track));
}

static struct fm_seek
curve (const struct fm_profile *p)
{
  struct fm_seek_spec spec;
  struct fm_seek s;
  struct fm_err err;

  fm_profile_seek_spec (p, &spec);
  ck_assert_msg (fm_seek_init (&s, &spec, cylinders (p), &err) == 0, "%s",
                 err.msg);
  return s;
}

static void
assert_within (const char *what, double got, double want, double rel)
{
  ck_assert_msg (fabs (got - want) <= rel * fabs (want),
                 "%s: got %.6g, want %.6g within %.1f%%", what, got, want,
                 rel * 100);
}

/* Read seeks of today's 7200 rpm profiles within 15 % of the table. */
START_TEST (test_short_seeks)
{
  static const struct {
    double fraction, ms;
  } table[] = {{0.0005, 1.6}, {0.003, 2.0}, {0.017, 2.9},
               {0.01, 2.5},   {0.1, 4.7},   {1 / 3.0, 7.8}};
  const char *const *n;
  size_t i;

  for (n = modern; *n; n++) {
    struct fm_profile p = profile (*n);
    struct fm_seek s = curve (&p);
    double C = cylinders (&p), full;

    for (i = 0; i < sizeof table / sizeof table[0]; i++)
      assert_within (*n, fm_seek_time (&s, table[i].fraction * C) / 1e6,
                     table[i].ms, 0.15);
    full = fm_seek_time (&s, C) / 1e6;
    ck_assert_msg (full >= 14 && full <= 16, "%s: full stroke %.2f ms", *n,
                   full);
  }
  /* Every disk's full stroke takes 1.3-3.6 revolutions. */
  for (n = hdds; *n; n++) {
    struct fm_profile p = profile (*n);
    struct fm_seek s = curve (&p);
    double revs = fm_seek_time (&s, cylinders (&p)) / (60e9 / p.rpm);

    ck_assert_msg (revs >= 1.3 && revs <= 3.6, "%s: full stroke %.2f revs", *n,
                   revs);
  }
}
END_TEST

/* One cylinder costs track-to-track; anything longer at least the settle;
 * the datasheet average holds over random pairs; the curve never falls.
 */
START_TEST (test_settle_floor)
{
  const char *const *n;

  for (n = hdds; *n; n++) {
    struct fm_profile p = profile (*n);
    struct fm_seek s = curve (&p);
    double C = cylinders (&p), sum = 0;
    const int steps = 200000;
    int i;

    ck_assert_uint_gt (p.seek_settle_ns, p.seek_t2t_ns);
    ck_assert_uint_eq (fm_seek_time (&s, 1), p.seek_t2t_ns);
    ck_assert_uint_eq (fm_seek_time (&s, 0.5), p.seek_t2t_ns);
    ck_assert_uint_ge (fm_seek_time (&s, 1.001), p.seek_settle_ns);
    ck_assert_uint_lt (fm_seek_time (&s, 2), p.seek_settle_ns + 100000);
    for (i = 0; i < steps; i++) {
      double x = (i + 0.5) / steps;
      sum += 2 * (1 - x) * (double)fm_seek_time (&s, x * C) / steps;
    }
    assert_within ("mean over seek pairs", sum, (double)p.seek_avg_ns, 0.002);
    for (i = 1; i < 2000; i++)
      ck_assert_uint_le (fm_seek_time (&s, (i - 1) * C / 2000 + 1),
                         fm_seek_time (&s, i * C / 2000 + 1));
  }
}
END_TEST

/* A write seek is the read seek plus the write settle: +0.1 ms for one
 * cylinder (HC310), the datasheet's difference on average.
 */
START_TEST (test_write_seeks)
{
  const char *const *n;

  for (n = hdds; *n; n++) {
    struct fm_profile p = profile (*n);
    struct fm_seek s = curve (&p);
    double C = cylinders (&p), sum = 0;
    const int steps = 100000;
    int i;

    assert_within ("write minus read track-to-track",
                   (double)(fm_seek_write_time (&s, 1) - fm_seek_time (&s, 1)),
                   100000, 0.5);
    for (i = 0; i < steps; i++) {
      double x = (i + 0.5) / steps;
      uint64_t r = fm_seek_time (&s, x * C), w = fm_seek_write_time (&s, x * C);

      ck_assert_uint_gt (w, r);
      sum += 2 * (1 - x) * (double)w / steps;
    }
    assert_within ("mean write seek", sum,
                   (double)(p.seek_avg_ns + p.write_settle_ns), 0.002);
    ck_assert_uint_le (fm_seek_write_time (&s, 1),
                       fm_seek_write_time (&s, 1.001));
  }
  for (n = modern; *n; n++) {
    struct fm_profile p = profile (*n);

    /* Average write minus read: 0.6-0.8 ms on nearline drives. */
    ck_assert_uint_ge (p.write_settle_ns, 600000);
    ck_assert_uint_le (p.write_settle_ns, 800000);
  }
}
END_TEST

/* A disk's drive: caches as asked, FUA or not. */
static struct fm_disk *
drive (const struct fm_profile *p, bool write_cache)
{
  struct fm_disk_options o = {false, write_cache, FM_QUEUE_SPTF};
  struct fm_err err;
  struct fm_disk *d = fm_disk_new (p, 7, &o, &err);

  ck_assert_msg (d != NULL, "%s", err.msg);
  return d;
}

/* Mean service time of `count` FUA writes of `len` bytes at `skew` bytes
 * into random 4 KiB slots, one after the other.
 */
static double
fua_writes (const struct fm_profile *p, uint64_t len, uint64_t skew, int count)
{
  struct fm_disk *d = drive (p, true);
  struct fm_request rq = {.op = FM_OP_WRITE, .flags = FM_REQ_FUA};
  struct fm_timing t;
  uint64_t now = 0, sum = 0;
  int i;

  rq.length = len;
  for (i = 0; i < count; i++) {
    uint64_t h = fm_hash (3, FM_STREAM_BENCH, (uint64_t)i, 0);

    rq.offset = fm_below (h, p->capacity / 4096 - 1) * 4096 + skew;
    rq.arrival_ns = now;
    fm_disk_submit (d, &rq, &t);
    sum += t.done_ns - t.start_ns;
    now = t.done_ns;
  }
  fm_disk_free (d);
  return (double)sum / count;
}

/* 512e, write-through: a 512 B or misaligned write costs two revolutions
 * more than an aligned 4 KiB one at the same places (HP: +16-22 ms at
 * 7200-5400 rpm); reads never do.
 */
START_TEST (test_rmw_fua)
{
  struct fm_profile p = profile ("cmr-20t-2024");

  /* FUA writes going home, not to the media cache (check-write). */
  p.media_cache_entries = 0;
  double rev = 60e9 / p.rpm;
  double aligned = fua_writes (&p, 4096, 0, 2000);
  double small = fua_writes (&p, 512, 0, 2000);
  double skewed = fua_writes (&p, 4096, 512, 2000);
  double tail = fua_writes (&p, 3584, 0, 2000);
  struct fm_disk *d = drive (&p, false);
  struct fm_request rq = {.op = FM_OP_READ, .offset = 512, .length = 512};
  struct fm_timing t1, t2;

  ck_assert_uint_eq (p.sector, 4096);
  assert_within ("512 B minus 4 KiB", small - aligned, 2 * rev, 0.01);
  /* A misaligned 4 KiB write touches two sectors: a little more media. */
  assert_within ("misaligned minus aligned", skewed - aligned, 2 * rev, 0.05);
  assert_within ("ragged tail minus aligned", tail - aligned, 2 * rev, 0.01);
  /* HP: +16-22 ms at 7200 rpm (8.33 ms a revolution) to 5400 rpm. */
  ck_assert_double_ge (small - aligned, 16e6 * 0.99);
  ck_assert_double_le (small - aligned, 22e6);

  /* Reads: the same 512 B read twice costs a revolution, not two. */
  fm_disk_submit (d, &rq, &t1);
  rq.arrival_ns = t1.done_ns;
  fm_disk_submit (d, &rq, &t2);
  ck_assert_uint_eq (t2.seeks, 0);
  ck_assert_uint_lt (t2.done_ns - t2.start_ns, (uint64_t)(rev * 1.05));
  fm_disk_free (d);
}
END_TEST

/* Time a FLUSH takes to destage what the n writes {offset, length} left
 * in the cache of a fresh drive.
 */
static uint64_t
flush_after (const struct fm_profile *p, const uint64_t (*w)[2], int n)
{
  struct fm_disk *d = drive (p, true);
  struct fm_request rq = {.op = FM_OP_WRITE};
  struct fm_timing t;
  int i;

  for (i = 0; i < n; i++) {
    rq.offset = w[i][0];
    rq.length = w[i][1];
    fm_disk_submit (d, &rq, &t);
    ck_assert (t.write_cached);
    rq.arrival_ns = t.done_ns;
  }
  /* The same instant for every case (the same platter angle), before the
   * drive's idle destage would start.
   */
  ck_assert_uint_lt (rq.arrival_ns, 1500000);
  rq.op = FM_OP_FLUSH;
  rq.arrival_ns = 1500000;
  fm_disk_submit (d, &rq, &t);
  fm_disk_free (d);
  return t.done_ns - t.start_ns;
}

/* With the write cache on, the read-modify-write is paid at destage, and
 * only for a sector the cache holds in part.
 */
START_TEST (test_rmw_cached)
{
  struct fm_profile p = profile ("cmr-20t-2024");
  const uint64_t base = 1000000 * 4096ULL, rev = 8333334;
  const uint64_t whole[][2] = {{base, 4096}};
  const uint64_t part[][2] = {{base + 1024, 512}};
  const uint64_t eight[][2] = {{base, 512},        {base + 512, 512},
                               {base + 1024, 512}, {base + 1536, 512},
                               {base + 2048, 512}, {base + 2560, 512},
                               {base + 3072, 512}, {base + 3584, 512}};
  const uint64_t over[][2] = {{base, 4096}, {base + 1024, 512}};
  const uint64_t wide[][2] = {{base + 512, 8192}};
  const uint64_t wide_fixed[][2] = {
      {base + 512, 8192}, {base, 512}, {base + 8704, 3584}};
  uint64_t t_whole = flush_after (&p, whole, 1);

  /* (To a few ns: each piece of the timeline is rounded up.) */
  ck_assert_uint_le (
      llabs ((long long)(flush_after (&p, part, 1) - (t_whole + 2 * rev))), 4);
  /* Eight 512 B writes complete the sector in the cache: no merge. */
  ck_assert_uint_le (llabs ((long long)(flush_after (&p, eight, 8) - t_whole)),
                     2);
  /* A part written into a sector the cache holds whole: no merge. */
  ck_assert_uint_le (llabs ((long long)(flush_after (&p, over, 2) - t_whole)),
                     2);
  /* Both ends ragged, then both completed. */
  ck_assert_uint_gt (flush_after (&p, wide, 1),
                     flush_after (&p, wide_fixed, 3) + rev / 2);
}
END_TEST

/* Each new seek key is checked, and the message names it. */
START_TEST (test_seek_keys)
{
  static const struct {
    const char *text, *msg;
  } bad[] = {
      {"seek_settle_ms = 0.3\n", "t.profile:3: seek_settle_ms: below"},
      {"seek_settle_ms = 4.5\n", "seek_avg_ms: average seek 8.000 ms is below"},
      {"write_settle_t2t_ms = 1.7\n", "t.profile:3: write_settle_t2t_ms:"},
      {"write_settle_ms = 101\n", "t.profile:3: write_settle_ms: 101 is out"},
  };
  struct fm_profile q;
  struct fm_err err;
  size_t i;

  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char text[256];

    snprintf (text, sizeof text, "base = cmr-20t-2024\nname = x\n%s",
              bad[i].text);
    ck_assert_int_eq (
        fm_profile_parse ("t.profile", text, strlen (text), &q, &err), -1);
    ck_assert_msg (strstr (err.msg, bad[i].msg) != NULL, "%s: %s", bad[i].text,
                   err.msg);
  }
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"short_seeks", test_short_seeks}, {"settle_floor", test_settle_floor},
      {"write_seeks", test_write_seeks}, {"rmw_fua", test_rmw_fua},
      {"rmw_cached", test_rmw_cached},   {"seek_keys", test_seek_keys},
  };

  return fd_check_main ("seek", cases, sizeof cases / sizeof cases[0]);
}
