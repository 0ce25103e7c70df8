/* futuredisk — faultmodels: drive-managed SMR (smr.c).
 *
 * A small shingled disk (smr-nas-2020 cut to 8 GiB with a 256 MiB media
 * cache, 30 MiB bands, and a 16 MiB write cache so that the media cache
 * is the larger, as on the real disk) against its CMR sibling, the same
 * profile with kind = hdd.  Bounds come from the profile's numbers (band /
 * bandwidth, the seek curve's ends, revolutions), not from the model's tables.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check-main.h"
#include "faultmodels/disk.h"
#include "faultmodels/rng.h"
#include "model-tests.h"

#define KIB 1024ULL
#define MIB (1024ULL * 1024)
#define GIB (1024ULL * MIB)

static struct fm_profile
small_smr (void)
{
  struct fm_profile p;
  struct fm_err err;

  ck_assert_msg (fm_profile_builtin ("smr-nas-2020", &p, &err) == 0, "%s",
                 err.msg);
  ck_assert_int_eq (fm_profile_resize (&p, 8 * GIB, &err), 0);
  p.smr_cache_bytes = 256 * MIB;
  p.cache_bytes = 16 * MIB;
  return p;
}

static struct fm_profile
cmr_of (struct fm_profile p)
{
  p.kind = FM_KIND_HDD;
  return p;
}

static struct fm_disk *
disk (const struct fm_profile *p, bool write_cache)
{
  return open_disk (p, 7, false, write_cache);
}

/* Submit at *now (or later); *now becomes its completion. */
static struct fm_timing
submit (struct fm_disk *d, enum fm_op op, uint64_t off, uint64_t len,
        uint64_t *now)
{
  struct fm_request rq = {.op = op, .offset = off, .length = len};
  struct fm_timing t;

  rq.arrival_ns = *now;
  fm_disk_submit (d, &rq, &t);
  *now = t.done_ns;
  return t;
}

struct smr_stats {
  uint64_t bytes, clean_ns, bands;
};

static struct smr_stats
stats (const struct fm_disk *d)
{
  struct smr_stats s;

  fm_disk_smr_stats (d, &s.bytes, &s.clean_ns, &s.bands);
  return s;
}

/* Random 4 KiB writes back to back from write number *i; IOPS. */
static double
random_writes (struct fm_disk *d, uint64_t *i, uint64_t n, uint64_t *now)
{
  uint64_t slots = fm_disk_profile (d)->capacity / 4096, t0 = *now, k;

  for (k = 0; k < n; k++, ++*i)
    submit (d, FM_OP_WRITE,
            fm_below (fm_hash (3, FM_STREAM_BENCH, *i, 0), slots) * 4096, 4096,
            now);
  return n / ((*now - t0) / 1e9);
}

static int
parse (const char *text, struct fm_profile *p, struct fm_err *err)
{
  return fm_profile_parse ("t.profile", text, strlen (text), p, err);
}

START_TEST (test_profile)
{
  const char *hdd = "name = s\ncapacity = 100G\nrpm = 5400\n"
                    "bandwidth_mbps = 100\nseek_t2t_ms = 1\n"
                    "seek_avg_ms = 9\nseek_full_ms = 18\n";
  char text[1024];
  struct fm_profile p;
  struct fm_err err;

  ck_assert_int_eq (fm_profile_builtin ("smr-8t-2015", &p, &err), 0);
  ck_assert_int_eq (p.kind, FM_KIND_SMR);
  ck_assert (fm_profile_rotating (&p));
  ck_assert_str_eq (fm_profile_kind_name (p.kind), "smr");
  ck_assert_uint_eq (p.smr_cache_bytes, 20000000000ULL);
  ck_assert_int_eq (fm_profile_builtin ("smr-nas-2020", &p, &err), 0);
  ck_assert_int_eq (p.kind, FM_KIND_SMR);

  /* Resized, the media cache keeps its share, and at least a band. */
  ck_assert_int_eq (fm_profile_resize (&p, 400000000000ULL, &err), 0);
  ck_assert_uint_eq (p.smr_cache_bytes, 1717986918ULL / 4096 * 4096);
  ck_assert_int_eq (fm_profile_resize (&p, 32 * MIB, &err), 0);
  ck_assert_uint_eq (p.smr_cache_bytes, p.smr_band_bytes);
  ck_assert_int_eq (fm_profile_resize (&p, 16 * MIB, &err), -1);
  ck_assert_ptr_nonnull (strstr (err.msg, "leaves no room"));

  snprintf (text, sizeof text,
            "%skind = smr\nsmr_cache = 1G\nsmr_band = 32M\n"
            "smr_idle = 2s\n",
            hdd);
  ck_assert_msg (parse (text, &p, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq (p.smr_band_bytes, 32 * MIB);
  ck_assert_uint_eq (p.smr_idle_ns, 2000000000ULL);
  ck_assert_uint_eq (p.smr_direct_bytes, 256 * KIB); /* the default */

  snprintf (text, sizeof text, "%skind = smr\nsmr_band = 32M\n", hdd);
  ck_assert_int_eq (parse (text, &p, &err), -1);
  ck_assert_str_eq (err.msg, "t.profile: missing required key 'smr_cache'");
  snprintf (text, sizeof text, "%ssmr_band = 32M\n", hdd);
  ck_assert_int_eq (parse (text, &p, &err), -1);
  ck_assert_ptr_nonnull (strstr (err.msg, "t.profile:8: smr_band: only a "
                                          "shingled disk"));
  snprintf (text, sizeof text,
            "%skind = smr\nsmr_cache = 1G\nsmr_band = 33554944\n", hdd);
  ck_assert_int_eq (parse (text, &p, &err), -1);
  ck_assert_ptr_nonnull (strstr (err.msg, "smr_band: not a multiple"));
  snprintf (text, sizeof text,
            "%skind = smr\nsmr_cache = 16M\nsmr_band = 32M\n", hdd);
  ck_assert_int_eq (parse (text, &p, &err), -1);
  ck_assert_ptr_nonnull (strstr (err.msg, "smr_cache: smaller than one band"));

  /* The CMR sibling: the same disk without shingles. */
  ck_assert_msg (
      parse ("base = smr-nas-2020\nname = cmr\nkind = hdd\n", &p, &err) == 0,
      "%s", err.msg);
  ck_assert_int_eq (p.kind, FM_KIND_HDD);
}
END_TEST

/* Writes below smr_direct are logged; larger ones that start a band or
 * continue a stream go to their bands (Ars: 32 KiB hits the cliff, 512 KiB
 * does not).
 */
START_TEST (test_direct)
{
  struct fm_profile p = small_smr ();
  struct fm_disk *d = disk (&p, false);
  uint64_t now = 0, off, band = p.smr_band_bytes;

  for (off = 0; off < 4 * MIB; off += 512 * KIB)
    submit (d, FM_OP_WRITE, band + off, 512 * KIB, &now);
  ck_assert_uint_eq (stats (d).bytes, 0);
  /* A large write in the middle of a band, not continuing: logged. */
  submit (d, FM_OP_WRITE, 5 * band + MIB, 512 * KIB, &now);
  ck_assert_uint_eq (stats (d).bytes, 512 * KIB);
  for (off = 0; off < 4 * MIB; off += 32 * KIB)
    submit (d, FM_OP_WRITE, 2 * band + off, 32 * KIB, &now);
  ck_assert_uint_eq (stats (d).bytes, 512 * KIB + 4 * MIB);
  fm_disk_free (d);

  /* With the write cache on, 32 KiB writes merge into large runs there,
   * but the drive still logs them: the host's command size decides.
   */
  d = disk (&p, true);
  for (off = 0; off < 4 * MIB; off += 32 * KIB)
    submit (d, FM_OP_WRITE, band + off, 32 * KIB, &now);
  submit (d, FM_OP_FLUSH, 0, 0, &now);
  ck_assert_uint_eq (stats (d).bytes, 4 * MIB);
  ck_assert_uint_eq (fm_disk_dirty_bytes (d), 0);
  fm_disk_free (d);
}
END_TEST

/* A sector whose newest copy is logged is read from the cache zone at the
 * outer edge; its neighbour from its band.
 */
START_TEST (test_read_location)
{
  struct fm_profile p = small_smr (), c = cmr_of (p);
  struct fm_disk *d = disk (&p, false), *h = disk (&c, false);
  uint64_t now = 0, hnow = 0, x = p.capacity - p.smr_band_bytes / 2;
  struct fm_timing t;

  submit (d, FM_OP_WRITE, x, 4096, &now);
  submit (h, FM_OP_WRITE, x, 4096, &hnow);
  t = submit (d, FM_OP_READ, x + 4096, 4096, &now);
  ck_assert_uint_eq (t.seeks, 1); /* out to the band at the inner edge */
  t = submit (d, FM_OP_READ, x, 4096, &now);
  ck_assert_uint_eq (t.seeks, 1);               /* back to the cache zone */
  ck_assert_uint_ge (t.seek_ns, p.seek_avg_ns); /* most of the stroke */
  submit (h, FM_OP_READ, x + 4096, 4096, &hnow);
  t = submit (h, FM_OP_READ, x, 4096, &hnow);
  ck_assert_uint_eq (t.seeks, 0);
  /* Once its band is cleaned, the band holds it. */
  now += p.smr_idle_ns + 10000000000ULL;
  submit (d, FM_OP_READ, x + 8192, 4096, &now);
  ck_assert_uint_eq (stats (d).bytes, 0);
  t = submit (d, FM_OP_READ, x, 4096, &now);
  ck_assert_uint_eq (t.seeks, 0);
  fm_disk_free (d);
  fm_disk_free (h);
}
END_TEST

/* Cleaning one band costs 2 x band / bandwidth and the positioning, within
 * bounds from the profile; it starts only after smr_idle.
 */
START_TEST (test_idle_cleaning)
{
  struct fm_profile p = small_smr ();
  struct fm_disk *d = disk (&p, false);
  uint64_t now = 0, b, n = 8;
  double rev = 60e9 / p.rpm, band = (double)p.smr_band_bytes, lo, hi;
  struct smr_stats s;
  struct fm_timing t;

  for (b = 0; b < n; b++)
    submit (d, FM_OP_WRITE, (3 + 9 * b) * p.smr_band_bytes + 8192, 4096, &now);
  ck_assert_uint_eq (stats (d).bytes, n * 4096);
  now += p.smr_idle_ns - 1000000; /* not idle long enough */
  submit (d, FM_OP_READ, 0, 4096, &now);
  ck_assert_uint_eq (stats (d).bands, 0);
  now += p.smr_idle_ns + 60000000000ULL;
  t = submit (d, FM_OP_READ, 0, 4096, &now);
  s = stats (d);
  ck_assert_uint_eq (s.bands, n);
  ck_assert_uint_eq (s.bytes, 0);
  ck_assert_uint_eq (t.queue_ns, 0); /* all done before it came */
  /* Per band: read it and write it at zone speed, plus at most four seeks
   * (cache, band, and back) and a few revolutions of waiting.
   */
  lo = 2 * band / fm_profile_bw_outer (&p) * 1e9;
  hi = 2 * band / fm_profile_bw_inner (&p) * 1e9 + 4 * p.seek_full_ns + 4 * rev;
  ck_assert_msg (s.clean_ns / n >= lo && s.clean_ns / n <= hi,
                 "%.3f s per band, want %.3f-%.3f", s.clean_ns / 1e9 / n,
                 lo / 1e9, hi / 1e9);
  fm_disk_free (d);
}
END_TEST

/* When the log is full a write waits for a band to be cleaned. */
START_TEST (test_forced_cleaning)
{
  struct fm_profile p = small_smr ();
  struct fm_disk *d = disk (&p, false);
  uint64_t now = 0, i = 0;
  struct fm_timing t;

  random_writes (d, &i, p.smr_cache_bytes / 4096, &now);
  ck_assert_uint_eq (stats (d).bytes, p.smr_cache_bytes);
  ck_assert_uint_eq (stats (d).bands, 0);
  t = submit (d, FM_OP_WRITE, 4096, 4096, &now);
  ck_assert_uint_eq (stats (d).bands, 1);
  ck_assert_uint_ge (t.done_ns - t.start_ns,
                     2 * p.smr_band_bytes / fm_profile_bw_outer (&p) * 1e9);
  fm_disk_free (d);
}
END_TEST

/* The cliff: random 4 KiB writes, write cache on, are fast while the media
 * cache takes them and at least 10x slower once it is full; a 32 KiB
 * sequential rewrite then takes at least 10x as long as on the CMR
 * sibling.
 */
START_TEST (test_cliff)
{
  struct fm_profile p = small_smr (), c = cmr_of (p);
  struct fm_disk *d = disk (&p, true), *h = disk (&c, true);
  uint64_t i = 0, now = 0, hnow = 0, t0, off, span = GIB;
  uint64_t fill = p.smr_cache_bytes / 4096;
  double before, after, cmr, rebuild_smr, rebuild_cmr;

  before = random_writes (d, &i, fill / 2, &now);
  random_writes (d, &i, fill, &now);
  ck_assert_uint_gt (stats (d).bands, 0);
  after = random_writes (d, &i, 2000, &now);
  i = 0;
  random_writes (h, &i, p.cache_bytes / 4096, &hnow);
  cmr = random_writes (h, &i, 2000, &hnow);
  ck_assert_msg (before >= 10 * after, "before %.0f IOPS, after %.1f", before,
                 after);
  ck_assert_msg (before >= 10 * cmr, "before %.0f IOPS, CMR %.1f", before, cmr);

  /* Both start with their write caches on the media. */
  submit (d, FM_OP_FLUSH, 0, 0, &now);
  submit (h, FM_OP_FLUSH, 0, 0, &hnow);
  t0 = now;
  for (off = 0; off < span; off += 32 * KIB)
    submit (d, FM_OP_WRITE, off, 32 * KIB, &now);
  submit (d, FM_OP_FLUSH, 0, 0, &now);
  rebuild_smr = now - t0;
  t0 = hnow;
  for (off = 0; off < span; off += 32 * KIB)
    submit (h, FM_OP_WRITE, off, 32 * KIB, &hnow);
  submit (h, FM_OP_FLUSH, 0, 0, &hnow);
  rebuild_cmr = hnow - t0;
  ck_assert_msg (rebuild_smr >= 10 * rebuild_cmr, "rebuild %.1f s vs %.1f s",
                 rebuild_smr / 1e9, rebuild_cmr / 1e9);
  fm_disk_free (d);
  fm_disk_free (h);
}
END_TEST

/* Same seed, same requests: the same times. */
START_TEST (test_deterministic)
{
  struct fm_profile p = small_smr ();
  struct fm_disk *a = disk (&p, true), *b = disk (&p, true);
  uint64_t i = 0, j = 0, ta = 0, tb = 0;

  random_writes (a, &i, p.smr_cache_bytes / 4096 + 500, &ta);
  random_writes (b, &j, p.smr_cache_bytes / 4096 + 500, &tb);
  ck_assert_uint_eq (ta, tb);
  ck_assert_uint_eq (stats (a).clean_ns, stats (b).clean_ns);
  fm_disk_free (a);
  fm_disk_free (b);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"profile", test_profile},
      {"direct", test_direct},
      {"read_location", test_read_location},
      {"idle_cleaning", test_idle_cleaning},
      {"forced_cleaning", test_forced_cleaning},
      {"cliff", test_cliff},
      {"deterministic", test_deterministic},
  };

  return fd_check_main ("smr", cases, sizeof cases / sizeof cases[0]);
}
