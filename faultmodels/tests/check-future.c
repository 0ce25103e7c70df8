/* futuredisk — faultmodels: the disks of today and of the roadmap to 2030.
 *
 * The expectations are the published figures the profiles were built
 * from (Seagate Exos M datasheet and review, Cheetah 15K.7 manual) and
 * the one rule that extends them to 2030: outer-zone bandwidth grows with
 * the square root of the data per platter, from the Exos M's 275 MB/s on
 * 3 TB platters.  The modelled times are checked against closed forms
 * (capacity / bandwidth; mean seek + half a revolution + transfer), so a
 * profile typed wrong or a model that drifts cannot agree with itself.
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "check-main.h"
#include "faultmodels/measure.h"
#include "faultmodels/profile.h"

static const char *const future[] = {"hamr-30t-2024",     "roadmap-2026",
                                     "roadmap-2028",      "roadmap-2030",
                                     "roadmap-2030-100t", NULL};

static struct fm_profile
profile (const char *name)
{
  struct fm_profile p;
  struct fm_err err;

  ck_assert_msg (fm_profile_builtin (name, &p, &err) == 0, "%s", err.msg);
  ck_assert_msg (fm_profile_validate (&p, &err) == 0, "%s", err.msg);
  return p;
}

static void
assert_within (const char *what, double got, double want, double rel)
{
  ck_assert_msg (fabs (got - want) <= rel * fabs (want),
                 "%s: got %.6g, want %.6g within %.2f%%", what, got, want,
                 rel * 100);
}

/* The shipping HAMR drive: Exos M 30 TB, 275 MB/s outer, 512 MB cache. */
START_TEST (test_hamr)
{
  struct fm_profile p = profile ("hamr-30t-2024");

  ck_assert_uint_eq (p.capacity, 30000000000000ULL);
  ck_assert_uint_eq (p.rpm, 7200);
  ck_assert_uint_eq (p.heads, 20); /* ten platters */
  ck_assert_uint_eq (p.cache_bytes, 512ULL << 20);
  assert_within ("outer MB/s", fm_profile_bw_outer (&p) / 1e6, 275, 0.001);
  /* Inner about half the outer, so a full read takes about 40 hours. */
  assert_within ("inner MB/s", fm_profile_bw_inner (&p) / 1e6, 137.5, 0.001);
  assert_within ("full read h", p.capacity / (double)p.bandwidth / 3600, 40.4,
                 0.01);
}
END_TEST

/* Every roadmap point: 10 platters, 7200 rpm, the nearline seek of the
 * last decade, and outer bandwidth 275 MB/s * sqrt (TB per platter / 3).
 */
START_TEST (test_roadmap)
{
  static const double tb[] = {30, 44, 60, 70, 100};
  size_t i;

  for (i = 0; future[i]; i++) {
    struct fm_profile p = profile (future[i]);
    double per_platter = p.capacity / 1e12 / (p.heads / 2.0);

    ck_assert_msg (p.kind == FM_KIND_HDD, "%s", future[i]);
    assert_within (future[i], p.capacity / 1e12, tb[i], 1e-12);
    ck_assert_uint_eq (p.heads, 20);
    ck_assert_uint_eq (p.rpm, 7200);
    ck_assert_double_eq (p.zone_ratio, 2.0);
    ck_assert_uint_eq (p.seek_t2t_ns, 300000);
    ck_assert_uint_eq (p.seek_avg_ns, 8000000);
    ck_assert_uint_eq (p.seek_full_ns, 16000000);
    ck_assert_uint_eq (p.seek_avg_ns + p.write_settle_ns, 8600000);
    /* 275 * sqrt (10/3) = 502 is rounded to 500 for the 100 TB disk. */
    assert_within (future[i], fm_profile_bw_outer (&p) / 1e6,
                   275 * sqrt (per_platter / 3), 0.005);
    /* Its capacity has a public address; a roadmap point's bandwidth is
     * ours and says how it was derived.
     */
    ck_assert_msg (strstr (p.sourced, "TB") && strchr (p.sourced, '/'),
                   "%s: sourced: %s", future[i], p.sourced);
    ck_assert_msg (i == 0 || strstr (p.estimated, "sqrt"), "%s: estimated: %s",
                   future[i], p.estimated);
  }

  /* The 2030 disk as the roadmap table sets it: 420 / 210 / 315 MB/s. */
  {
    struct fm_profile p = profile ("roadmap-2030");

    assert_within ("2030 outer", fm_profile_bw_outer (&p) / 1e6, 420, 1e-9);
    assert_within ("2030 inner", fm_profile_bw_inner (&p) / 1e6, 210, 1e-9);
    ck_assert_uint_eq (p.bandwidth, 315000000);
    ck_assert_uint_eq (p.cache_bytes, 1ULL << 30);
  }
}
END_TEST

/* The model on the full disks: a full read takes capacity / bandwidth, a
 * QD1 random 4 KiB read mean seek + half a revolution + transfer (12.2
 * ms +-10% for a 7200 rpm disk with 8 ms seeks, ublk-disksim's hgst-7k8
 * calibration, https://github.com/lumir-sliva/ublk-disksim).
 */
START_TEST (test_full_disk)
{
  size_t i;

  for (i = 0; future[i]; i++) {
    struct fm_profile p = profile (future[i]);
    struct fm_summary s;
    struct fm_err err;

    ck_assert_msg (fm_measure_summary (&p, 1, 5000, &s, &err) == 0, "%s",
                   err.msg);
    assert_within (future[i], s.min_full_read_s,
                   (double)p.capacity / p.bandwidth, 1e-12);
    assert_within (future[i], s.full_read_s, s.min_full_read_s, 0.005);
    assert_within (future[i], s.random_4k_ms, 12.2, 0.10);
  }
}
END_TEST

/* ent-15k transfers as the Cheetah 15K.7 does: 204 MB/s outer, 122 inner. */
START_TEST (test_ent15k)
{
  struct fm_profile p = profile ("ent-15k");
  struct fm_summary s;
  struct fm_err err;

  assert_within ("outer MB/s", fm_profile_bw_outer (&p) / 1e6, 204, 0.001);
  assert_within ("inner MB/s", fm_profile_bw_inner (&p) / 1e6, 122, 0.001);
  ck_assert_uint_eq (p.capacity, 600000000000ULL);
  ck_assert_msg (fm_measure_summary (&p, 1, 2000, &s, &err) == 0, "%s",
                 err.msg);
  assert_within ("full read s", s.full_read_s, 600e9 / 163e6, 0.005);
}
END_TEST

/* An unknown name lists every built-in, the last one too. */
START_TEST (test_listed)
{
  struct fm_profile p;
  struct fm_err err;
  const char *last = NULL;
  size_t i;

  ck_assert_int_eq (fm_profile_builtin ("roadmap-2042", &p, &err), -1);
  for (i = 0; fm_profile_builtin_name (i); i++) {
    last = fm_profile_builtin_name (i);
    ck_assert_msg (strstr (err.msg, last), "%s missing from: %s", last,
                   err.msg);
  }
  ck_assert_ptr_nonnull (last);
  for (i = 0; future[i]; i++)
    ck_assert_ptr_nonnull (strstr (err.msg, future[i]));
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"hamr", test_hamr},           {"roadmap", test_roadmap},
      {"full_disk", test_full_disk}, {"ent15k", test_ent15k},
      {"listed", test_listed},
  };

  return fd_check_main ("future", cases, sizeof cases / sizeof cases[0]);
}
