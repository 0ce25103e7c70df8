/* futuredisk — faultmodels: fault kinds, durations, the fault map. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "faultmodels/counts.h"
#include "faultmodels/faults.h"
#include "faultmodels/rng.h"
#include "faultmodels/faultset.h"

START_TEST (test_kinds)
{
  enum fm_fault_kind k;
  struct fm_err err;
  int i;

  for (i = 0; i < FM_FAULT_NKINDS; i++) {
    ck_assert_int_eq (fm_fault_parse (fm_fault_name (i), &k, &err), 0);
    ck_assert_int_eq (k, i);
    ck_assert_uint_gt (strlen (fm_fault_description (i)), 20);
  }
  ck_assert_str_eq (fm_fault_name (FM_FAULT_URE), "ure");
  ck_assert_int_eq (fm_fault_parse ("gremlin", &k, &err), -1);
  ck_assert_str_eq (err.msg, "unknown fault kind 'gremlin' (kinds: ure, "
                             "disk-failure, powercut, torn-write, lost-write, "
                             "misdirected-write, flip, reallocated, lse, rot, "
                             "stuck, marginal)");
}
END_TEST

START_TEST (test_durations)
{
  static const struct {
    const char *s;
    uint64_t ns;
  } good[] = {
      {"0s", 0},
      {"500ms", 500000000},
      {"30s", 30000000000},
      {"2min", 120000000000},
      {"1.5h", 5400000000000},
      {"7us", 7000},
      {"12ns", 12},
  };
  static const char *const bad[] = {"",    "5",     "s",      "-1s",
                                    "1 s", "3days", "1e400s", "nan"};
  struct fm_err err;
  uint64_t ns;
  size_t i;

  for (i = 0; i < sizeof good / sizeof good[0]; i++) {
    ck_assert_msg (fm_parse_duration ("t", good[i].s, &ns, &err) == 0, "%s",
                   err.msg);
    ck_assert_uint_eq (ns, good[i].ns);
  }
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ck_assert_msg (fm_parse_duration ("fail-at", bad[i], &ns, &err) == -1,
                   "'%s' accepted", bad[i]);
    ck_assert_msg (strncmp (err.msg, "fail-at: ", 9) == 0, "%s", err.msg);
  }
}
END_TEST

START_TEST (test_faultmap)
{
  struct fm_faultmap *m = fm_faultmap_new ();
  enum fm_fault_kind k;
  uint64_t bad, n;

  ck_assert (!fm_faultmap_find (m, 0, 1000, &bad, &n, &k));
  ck_assert_int_eq (fm_faultmap_add (m, 100, 10, FM_FAULT_URE), 0);
  ck_assert_int_eq (fm_faultmap_add (m, 50, 5, FM_FAULT_URE), 0);
  ck_assert_uint_eq (fm_faultmap_sectors (m), 15);
  ck_assert (fm_faultmap_find (m, 0, 1000, &bad, &n, &k));
  ck_assert_uint_eq (bad, 50);
  ck_assert_uint_eq (n, 5);
  ck_assert_int_eq (k, FM_FAULT_URE);
  /* Clipped to the range asked about. */
  ck_assert (fm_faultmap_find (m, 105, 2, &bad, &n, &k));
  ck_assert_uint_eq (bad, 105);
  ck_assert_uint_eq (n, 2);
  ck_assert (!fm_faultmap_find (m, 55, 45, &bad, &n, &k));
  /* Rewriting the middle splits a run; overlapping adds merge cleanly. */
  ck_assert_int_eq (fm_faultmap_clear (m, 103, 4), 0);
  ck_assert_uint_eq (fm_faultmap_sectors (m), 11);
  ck_assert (!fm_faultmap_find (m, 103, 4, &bad, &n, &k));
  ck_assert (fm_faultmap_find (m, 103, 10, &bad, &n, &k));
  ck_assert_uint_eq (bad, 107);
  ck_assert_int_eq (fm_faultmap_add (m, 95, 20, FM_FAULT_URE), 0);
  ck_assert_uint_eq (fm_faultmap_sectors (m), 25);
  ck_assert_int_eq (fm_faultmap_clear (m, 0, 1000), 0);
  ck_assert_uint_eq (fm_faultmap_sectors (m), 0);
  ck_assert (!fm_faultmap_find (m, 0, 1000, &bad, &n, &k));
  fm_faultmap_free (m);
}
END_TEST

static void
count_sector (void *opaque, uint64_t sector)
{
  (*(uint64_t *)opaque)++;
}

static void
mark_sector (void *opaque, uint64_t sector)
{
  ((unsigned char *)opaque)[sector] = 1;
}

/* Over many seeds, the share of disks with at least one URE is 1 - e^-m,
 * within a binomial bound; the mean count is m.
 */
START_TEST (test_ure_statistics)
{
  const uint64_t sectors = 2000000, seeds = 1000;
  const double p = 1.0 / sectors; /* m = 1 per disk */
  uint64_t seed, with = 0, total = 0;
  double share, sd;

  ck_assert_double_eq_tol (fm_ure_sector_probability (1e-14, 4096),
                           4096 * 8 * 1e-14, 1e-16);
  for (seed = 0; seed < seeds; seed++) {
    uint64_t n = 0;
    fm_ure_marginal (seed, sectors, p, count_sector, &n);
    with += n > 0;
    total += n;
  }
  share = (double)with / seeds;
  sd = sqrt ((1 - exp (-1)) * exp (-1) / seeds);
  ck_assert_msg (fabs (share - (1 - exp (-1))) < 4 * sd, "share %.3f", share);
  ck_assert_msg (fabs ((double)total / seeds - 1) < 4 * sqrt (1.0 / seeds),
                 "mean %.3f", (double)total / seeds);

  /* A large mean (the normal branch): 8 TB at 1e-12 per bit, m = 64. */
  total = 0;
  for (seed = 0; seed < 200; seed++) {
    uint64_t n = 0;
    fm_ure_marginal (seed, 8000000000000ULL / 4096,
                     fm_ure_sector_probability (1e-12, 4096) * 10, count_sector,
                     &n);
    total += n;
  }
  ck_assert_msg (fabs ((double)total / 200 - 640) < 4 * sqrt (640.0 / 200),
                 "mean %.1f", (double)total / 200);

  /* Re-rolls come up bad with the same odds. */
  with = 0;
  for (seed = 0; seed < 200000; seed++)
    with += fm_ure_reroll (7, seed, 1 + seed % 5, 0.01);
  ck_assert_msg (fabs (with / 200000.0 - 0.01) < 4 * sqrt (0.01 / 200000),
                 "reroll share %.4f", with / 200000.0);
}
END_TEST

/* The marginal set is a function of the seed alone. */
START_TEST (test_ure_determinism)
{
  const uint64_t sectors = 1 << 20;
  unsigned char *a = calloc (sectors, 1), *b = calloc (sectors, 1);
  unsigned char *c = calloc (sectors, 1);

  fm_ure_marginal (5, sectors, 50.0 / sectors, mark_sector, a);
  fm_ure_marginal (5, sectors, 50.0 / sectors, mark_sector, b);
  fm_ure_marginal (6, sectors, 50.0 / sectors, mark_sector, c);
  ck_assert_mem_eq (a, b, sectors);
  ck_assert (memcmp (a, c, sectors) != 0);
  free (a);
  free (b);
  free (c);
}
END_TEST

/* |observed share - p| within 4 binomial standard deviations. */
static void
assert_share (const char *what, uint64_t hits, uint64_t n, double p)
{
  double share = (double)hits / (double)n;

  ck_assert_msg (fabs (share - p) < 4 * sqrt (p * (1 - p) / (double)n),
                 "%s: %.4f, expected %.4f", what, share, p);
}

/* The count of LSEs on a prone disk is a discrete Pareto,
 * P(N >= n) = n^-a, with a = 0.41 (faultmodels/PROFILES.md, lse-alpha):
 * P(N=1) = 1 - 2^-a, P(N<=10) = 1 - 11^-a, P(N>1000) = 1001^-a; min and
 * max clamp it.
 */
START_TEST (test_lse_count)
{
  const uint64_t seeds = 20000;
  uint64_t seed, one = 0, ten = 0, big = 0;

  for (seed = 0; seed < seeds; seed++) {
    uint64_t n = fm_lse_count (seed, 0.41, 1, 1000000000);
    ck_assert_uint_ge (n, 1);
    one += n == 1;
    ten += n <= 10;
    big += n > 1000;
    n = fm_lse_count (seed, 0.41, 10, 500);
    ck_assert (n >= 10 && n <= 500);
  }
  assert_share ("P(N=1)", one, seeds, 1 - pow (2, -0.41));
  assert_share ("P(N<=10)", ten, seeds, 1 - pow (11, -0.41));
  assert_share ("P(N>1000)", big, seeds, pow (1001, -0.41));
}
END_TEST

/* Episodes' centres weighted to the first 10% of the disk (head share h:
 * P = h + (1 - h)/10), geometric bursts of the asked mean, members within
 * about `spread` of the centre.
 */
START_TEST (test_lse_episodes)
{
  const uint64_t sectors = 1ULL << 31, keys = 20000, spread = 2000;
  uint64_t key, head = 0, size = 0, members = 0;
  double dist = 0;

  for (key = 0; key < keys; key++) {
    uint64_t c = fm_lse_centre (3, key, sectors, 0.35);
    uint64_t k = fm_lse_burst (3, key, 3), j;

    ck_assert_uint_lt (c, sectors);
    head += c < sectors / 10;
    size += k;
    ck_assert_uint_eq (fm_lse_member (3, key, 0, c, spread, sectors), c);
    for (j = 1; j < k; j++) {
      uint64_t m = fm_lse_member (3, key, j, c, spread, sectors);
      ck_assert_uint_lt (m, sectors);
      dist += m > c ? (double)(m - c) : (double)(c - m);
      members++;
    }
  }
  assert_share ("head share", head, keys, 0.35 + 0.65 / 10);
  ck_assert_msg (fabs ((double)size / keys - 3) < 0.1, "mean burst %.3f",
                 (double)size / keys);
  /* Centres near an edge clip a few offsets: allow 5%. */
  ck_assert_msg (fabs (dist / (double)members - spread) < 0.05 * spread,
                 "mean distance %.1f", dist / (double)members);
  /* At the edges members stay on the disk. */
  ck_assert_uint_lt (fm_lse_member (3, 1, 1, 0, spread, 100), 100);
  ck_assert_uint_lt (fm_lse_member (3, 1, 1, 99, spread, 100), 100);
}
END_TEST

/* Poisson processes in one-second windows: the mean count per window is
 * the mean asked for, events fall inside their window, and everything is
 * a function of (seed, stream, window).
 */
START_TEST (test_windows)
{
  uint64_t w, n = 0;

  for (w = 0; w < 100000; w++) {
    uint64_t k = fm_window_count (9, 7, w, 0.25), j;
    n += k;
    for (j = 0; j < k; j++)
      ck_assert_uint_lt (fm_window_event_ns (9, 7, w, j), 1000000000);
    ck_assert_uint_eq (k, fm_window_count (9, 7, w, 0.25));
  }
  ck_assert_msg (fabs (n / 100000.0 - 0.25) < 4 * sqrt (0.25 / 100000),
                 "mean %.4f", n / 100000.0);
  ck_assert_uint_eq (fm_window_count (9, 7, 5, 0), 0);
}
END_TEST

/* The fault keys: values, units, errors naming the key, presets, JSON. */
START_TEST (test_faultset)
{
  struct fm_faultset f, g;
  struct fm_err err;
  char json[2048];
  size_t i;

  fm_faultset_defaults (&f);
  ck_assert_uint_eq (f.erc_ns, 7000000000ULL);
  ck_assert_double_eq (f.lse_alpha, 0.41);
  ck_assert_int_eq (fm_faultset_set (&f, "ber", "1e-14", &err), 0);
  ck_assert_double_eq (f.ber, 1e-14);
  ck_assert_int_eq (fm_faultset_set (&f, "age", "2y", &err), 0);
  ck_assert_uint_eq (f.age_ns, 2 * 31557600000000000ULL);
  ck_assert_int_eq (fm_faultset_set (&f, "lse-spread", "1M", &err), 0);
  ck_assert_uint_eq (f.lse_spread, 1 << 20);
  ck_assert_int_eq (fm_faultset_set (&f, "lse-rate", "auto", &err), 0);
  ck_assert_double_lt (f.lse_rate, 0);
  ck_assert_int_eq (fm_faultset_set (&f, "lse-rate", "2.5", &err), 0);
  ck_assert_double_eq (f.lse_rate, 2.5);
  ck_assert_int_eq (fm_faultset_set (&f, "fail-at", "0", &err), 0);
  ck_assert_int_eq (fm_faultset_set (&f, "ber", "0.5", &err), -1);
  ck_assert_str_eq (err.msg, "ber: 0.5 is out of range [0, 0.001]");
  ck_assert_int_eq (fm_faultset_set (&f, "gremlins", "1", &err), -1);
  ck_assert_str_eq (err.msg, "unknown fault key 'gremlins'");
  ck_assert_int_eq (fm_faultset_set (&f, "erc", "7", &err), -1);
  ck_assert_ptr_nonnull (strstr (err.msg, "erc: '7' is not a duration"));
  ck_assert_int_eq (fm_faultset_set (&f, "lse-max", "5", &err), 0);
  ck_assert_int_eq (fm_faultset_set (&f, "lse-min", "6", &err), -1);
  ck_assert_str_eq (err.msg, "lse-min: lse-min 6 exceeds lse-max 5");

  /* Presets replace every rate; none keeps erc. */
  ck_assert_int_eq (fm_faultset_set (&f, "faults", "harsh", &err), 0);
  ck_assert_double_eq (f.ber, 1e-11);
  ck_assert_uint_eq (f.erc_ns, 100000000);
  ck_assert_uint_eq (f.spares, 100);
  ck_assert_double_eq (fm_faultset_lse_prone (&f), 1);
  ck_assert_int_eq (fm_faultset_preset (&f, "none", &err), 0);
  ck_assert_uint_eq (f.erc_ns, 100000000);
  ck_assert_double_eq (f.ber, 0);
  ck_assert_double_eq (fm_faultset_lse_prone (&f), 0);
  ck_assert_int_eq (fm_faultset_preset (&f, "consumer", &err), 0);
  /* 3.15% of nearline disks in their first year (Bairavasundaram et al.,
   * SIGMETRICS 2007).
   */
  ck_assert_double_eq_tol (fm_faultset_lse_prone (&f), 0.0315, 1e-9);
  ck_assert_int_eq (fm_faultset_set (&f, "age", "32d", &err), 0);
  ck_assert_double_lt (fm_faultset_lse_prone (&f), 0.0315);
  ck_assert_int_eq (fm_faultset_preset (&f, "nasty", &err), -1);
  ck_assert_ptr_nonnull (strstr (err.msg, "unknown preset 'nasty'"));
  for (i = 0; fm_faultset_preset_name (i); i++)
    ck_assert_int_eq (
        fm_faultset_preset (&g, fm_faultset_preset_name (i), &err), 0);
  ck_assert_uint_eq (i, 4);

  /* Every key has a unit and help, and appears in the JSON. */
  ck_assert_int_eq (fm_faultset_json (&f, json, sizeof json), 0);
  for (i = 0; fm_faultset_key (i); i++) {
    char name[64];
    ck_assert_ptr_nonnull (fm_faultset_key_unit (i));
    ck_assert_uint_gt (strlen (fm_faultset_key_help (i)), 10);
    ck_assert (fm_faultset_is_key (fm_faultset_key (i)));
    snprintf (name, sizeof name, "\"%s\": ", fm_faultset_key (i));
    ck_assert_msg (strstr (json, name), "%s not in %s", name, json);
  }
  ck_assert_uint_ge (i, 20);
  ck_assert (fm_faultset_is_key ("faults"));
  ck_assert (!fm_faultset_is_key ("rpm"));
  ck_assert_int_eq (fm_faultset_json (&f, json, 10), -1);
}
END_TEST

/* Per-sector counts against a plain array of them: bumps of every
 * shape (single sectors, runs that span others, the whole range, ends
 * that meet), enough of them to split blocks and join them again.
 * get's end is where the count really changes, and the number of
 * changes kept is the number of places the array steps.
 */
#define CSECTORS 20000

static void
counts_agree (const struct fm_counts *c, const uint64_t *want)
{
  uint64_t s = 0, end, n, steps = 0;
  size_t i;

  for (i = 1; i < CSECTORS; i++)
    steps += want[i] != want[i - 1];
  steps += want[0] != 0;
  while (s < CSECTORS) {
    n = fm_counts_get (c, s, &end);
    ck_assert_uint_gt (end, s);
    for (; s < end && s < CSECTORS; s++)
      ck_assert_msg (want[s] == n, "sector %llu: %llu, wants %llu",
                     (unsigned long long)s, (unsigned long long)n,
                     (unsigned long long)want[s]);
    ck_assert (s == CSECTORS || want[s] != n);
  }
  /* Past the last sector bumped: 0, to the end of everything. */
  ck_assert_uint_eq (fm_counts_get (c, CSECTORS + 5, &end), 0);
  ck_assert_uint_eq (end, UINT64_MAX);
  /* The step down to 0 after the last sector is one more change. */
  ck_assert_uint_eq (fm_counts_changes (c), steps + (want[CSECTORS - 1] != 0));
}

START_TEST (test_counts)
{
  struct fm_counts *c = fm_counts_new ();
  uint64_t *want = calloc (CSECTORS, sizeof *want), i, k, end;

  ck_assert_ptr_nonnull (c);
  ck_assert_uint_eq (fm_counts_get (c, 7, &end), 0);
  ck_assert_uint_eq (end, UINT64_MAX);
  ck_assert_int_eq (fm_counts_bump (c, 0, 0), 0);
  ck_assert_uint_eq (fm_counts_changes (c), 0);
  /* Two runs that meet are one. */
  ck_assert_int_eq (fm_counts_bump (c, 100, 50), 0);
  ck_assert_int_eq (fm_counts_bump (c, 150, 50), 0);
  ck_assert_uint_eq (fm_counts_changes (c), 2);
  ck_assert_uint_eq (fm_counts_get (c, 99, &end), 0);
  ck_assert_uint_eq (end, 100);
  ck_assert_uint_eq (fm_counts_get (c, 120, &end), 1);
  ck_assert_uint_eq (end, 200);
  for (i = 100; i < 200; i++)
    want[i] = 1;
  for (i = 0; i < 40000; i++) {
    uint64_t h = fm_hash (11, FM_STREAM_BENCH, i, 0);
    uint64_t first = fm_below (h, CSECTORS), n;

    switch (h >> 62) {
      case 0:
        n = 1;
        break;
      case 1:
        n = 1 + fm_below (h >> 20, 16);
        break;
      case 2:
        n = 1 + fm_below (h >> 20, 3000);
        break;
      default:
        n = i % 5000 == 0 ? CSECTORS : 8;
        first &= ~7ULL;
        break;
    }
    if (n > CSECTORS - first)
      n = CSECTORS - first;
    ck_assert_int_eq (fm_counts_bump (c, first, n), 0);
    for (k = first; k < first + n; k++)
      want[k]++;
    if (i % 4000 == 0)
      counts_agree (c, want);
  }
  counts_agree (c, want);
  ck_assert_uint_gt (fm_counts_changes (c), 1000); /* blocks split */
  /* Raised, run by run of the lowest count, to one count everywhere:
   * the steps melt into one run.
   */
  for (;;) {
    uint64_t lo = UINT64_MAX, hi = 0;

    for (i = 0; i < CSECTORS; i++) {
      lo = want[i] < lo ? want[i] : lo;
      hi = want[i] > hi ? want[i] : hi;
    }
    if (lo == hi)
      break;
    for (i = 0; i<CSECTORS; i = k> i ? k : i + 1) {
      for (k = i; k < CSECTORS && want[k] == lo; k++)
        want[k]++;
      if (k > i)
        ck_assert_int_eq (fm_counts_bump (c, i, k - i), 0);
    }
  }
  counts_agree (c, want);
  ck_assert_uint_eq (fm_counts_changes (c), 2);
  fm_counts_free (c);
  free (want);
}
END_TEST

/* Runs appended in order (every other sector read, one after the
 * other) fill their blocks: 16 bytes a change and little more, where
 * blocks split in halves would hold twice that.
 */
START_TEST (test_counts_append)
{
  struct fm_counts *c = fm_counts_new ();
  uint64_t k, end;

  for (k = 0; k < 100000; k++)
    ck_assert_int_eq (fm_counts_bump (c, 2 * k, 1), 0);
  ck_assert_uint_eq (fm_counts_changes (c), 200000);
  for (k = 0; k < 200000; k += 997) {
    ck_assert_uint_eq (fm_counts_get (c, k, &end), (k + 1) % 2);
    ck_assert_uint_eq (end, k + 1);
  }
  ck_assert_msg (fm_counts_bytes (c) < 200000 * 16 * 5 / 4,
                 "%zu bytes for 200,000 changes", fm_counts_bytes (c));
  fm_counts_free (c);
}
END_TEST

/* The flips of one (sector, nth read) pair: bit indexes, in a set. */
struct flipset {
  uint64_t v[64];
  size_t n;
};

static void
note_flip (void *opaque, uint64_t sector, uint64_t bit)
{
  struct flipset *f = opaque;

  ck_assert_uint_lt (f->n, 64);
  f->v[f->n++] = sector * 4096 * 8 + bit;
}

static int
cmp_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Read-path flips are a function of (seed, sector, its nth read) alone:
 * a sector drawn by itself meets the flips it meets inside any run
 * around it, and the nth and (n+1)th reads of it draw apart.
 */
START_TEST (test_flip_keys)
{
  const double rate = 1e-6; /* 0.033 flips per 4 KiB sector read */
  uint64_t nth, s, total = 0;

  for (nth = 1; nth <= 20; nth++) {
    struct flipset whole = {.n = 0}, alone = {.n = 0}, split = {.n = 0};

    fm_flips (3, rate, 4096, 1000, 900, nth, note_flip, &whole);
    for (s = 1000; s < 1900; s++)
      fm_flips (3, rate, 4096, s, 1, nth, note_flip, &alone);
    fm_flips (3, rate, 4096, 1000, 333, nth, note_flip, &split);
    fm_flips (3, rate, 4096, 1333, 567, nth, note_flip, &split);
    qsort (whole.v, whole.n, sizeof *whole.v, cmp_u64);
    qsort (alone.v, alone.n, sizeof *alone.v, cmp_u64);
    qsort (split.v, split.n, sizeof *split.v, cmp_u64);
    ck_assert_uint_eq (whole.n, alone.n);
    ck_assert_uint_eq (whole.n, split.n);
    ck_assert (memcmp (whole.v, alone.v, whole.n * sizeof *whole.v) == 0);
    ck_assert (memcmp (whole.v, split.v, whole.n * sizeof *whole.v) == 0);
    for (s = 0; s < whole.n; s++) {
      ck_assert_uint_ge (whole.v[s] / (4096 * 8), 1000);
      ck_assert_uint_lt (whole.v[s] / (4096 * 8), 1900);
    }
    total += whole.n;
  }
  /* 900 sectors x 20 reads x 0.033: about 590, never the same flips
   * for every read.
   */
  ck_assert_uint_gt (total, 400);
  ck_assert_uint_lt (total, 800);
  ck_assert_uint_eq (fm_flips (3, 0, 4096, 0, 100, 1, note_flip, NULL), 0);
}
END_TEST

static void
count_flip (void *opaque, uint64_t sector, uint64_t bit)
{
  (void)sector;
  (void)bit;
  (*(uint64_t *)opaque)++;
}

/* The rate comes out as asked, per bit read, at rates from the presets'
 * to the largest allowed and for both sector sizes: a fixed seed, so
 * the count is fixed too; the bounds are five standard deviations.
 */
START_TEST (test_flip_rate)
{
  static const struct {
    double rate;
    uint32_t sector;
    uint64_t sectors, reads;
  } c[] = {
      {1e-6, 4096, 10000, 30},     {1e-7, 4096, 100000, 30},
      {1e-7, 512, 400000, 25},     {1e-12, 512, 1ULL << 40, 1},
      {1e-9, 4096, 1ULL << 30, 2},
  };
  size_t i;

  for (i = 0; i < sizeof c / sizeof c[0]; i++) {
    double mean =
        (double)c[i].sectors * (double)c[i].reads * 8 * c[i].sector * c[i].rate;
    uint64_t n = 0, nth;

    for (nth = 1; nth <= c[i].reads; nth++)
      fm_flips (17, c[i].rate, c[i].sector, 12345, c[i].sectors, nth,
                count_flip, &n);
    ck_assert_msg (fabs ((double)n - mean) < 5 * sqrt (mean),
                   "rate %g, %u-byte sectors: %llu flips, expected %.0f",
                   c[i].rate, c[i].sector, (unsigned long long)n, mean);
  }
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"kinds", test_kinds},
      {"durations", test_durations},
      {"faultmap", test_faultmap},
      {"ure_statistics", test_ure_statistics},
      {"ure_determinism", test_ure_determinism},
      {"lse_count", test_lse_count},
      {"lse_episodes", test_lse_episodes},
      {"windows", test_windows},
      {"faultset", test_faultset},
      {"counts", test_counts},
      {"counts_append", test_counts_append},
      {"flip_keys", test_flip_keys},
      {"flip_rate", test_flip_rate},
  };

  return fd_check_main ("faults", cases, sizeof cases / sizeof cases[0]);
}
