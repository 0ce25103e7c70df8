/* futuredisk — nbdplugin: what a request draws does not depend on the
 * order of requests (faults.c without the emulator).
 *
 * The kernel sends its reads and writes in an order of its own, another
 * from run to run.  Every draw made per read (flips, the retries of a
 * marginal sector, the recovery of an unreadable one) is keyed by the
 * sector and how many times that sector has been read, and every draw
 * made per write (lost and misdirected writes, the re-roll of a
 * rewritten sector, reallocation) by the sector and how many times it
 * has been written.  So here the same requests go in two orders, the
 * second shuffled, with requests to other sectors between them and some
 * reads cut in two, and each sector's nth read or write must meet the
 * same faults in both.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "faults.h"
#include "faultmodels/rng.h"

#define SECTOR  512
#define SECTORS (64 << 11) /* 64 MiB */
#define MAXNTH  64
#define REGION  8192  /* the sectors compared; others are elsewhere */
#define NOISE   16384 /* the first of the others */

/* A disk with every fault given (as the plugin's keys would after
 * parsing; flip-rate beyond its key's range, for many flips in few
 * reads).
 */
static struct dfaults *
disk (void (*set) (struct fm_faultset *))
{
  struct dfaults_config cfg = {.sector = SECTOR,
                               .disk_size = (uint64_t)SECTORS * SECTOR,
                               .seed = 9,
                               .track_bytes = 1 << 20,
                               .retry_ns = 8000000};
  struct fm_err err;
  struct dfaults *f;

  fm_faultset_defaults (&cfg.set);
  cfg.set.erc_ns = 60000000000ULL; /* a minute: retries fit */
  set (&cfg.set);
  f = dfaults_new (&cfg, &err);
  ck_assert_msg (f != NULL, "%s", err.msg);
  return f;
}

/* Position i of a shuffle of 0..n-1 (Fisher-Yates from the seed). */
static size_t *
shuffled (size_t n, uint64_t seed)
{
  size_t *p = malloc (n * sizeof *p), i;

  ck_assert_ptr_nonnull (p);
  for (i = 0; i < n; i++)
    p[i] = i;
  for (i = n; i > 1; i--) {
    size_t j = fm_below (fm_hash (seed, FM_STREAM_BENCH, i, 0), i), t = p[j];
    p[j] = p[i - 1];
    p[i - 1] = t;
  }
  return p;
}

/* What each (sector, nth request to it) met, in one order. */
struct seen {
  uint8_t nth[SECTORS];          /* requests to the sector so far */
  uint64_t what[REGION][MAXNTH]; /* a digest of what it met */
  bool met[REGION][MAXNTH];
};

static struct seen *
seen_new (void)
{
  struct seen *s = calloc (1, sizeof *s);

  ck_assert_ptr_nonnull (s);
  return s;
}

static void
note (struct seen *s, uint64_t sector, uint64_t what)
{
  unsigned n = s->nth[sector];

  if (sector >= REGION)
    return; /* a request to other sectors */
  /* Check's assertions cost a write each: only failures are asserted
   * in the loops here.
   */
  if (n == 0 || n >= MAXNTH)
    ck_abort_msg ("sector %llu: request %u to it", (unsigned long long)sector,
                  n);
  s->what[sector][n] += fm_mix64 (what);
  s->met[sector][n] = true;
}

/* Every (sector, nth) met the same in both orders; returns how many met
 * anything.  With `both`, only the pairs noted in both are compared (a
 * read of several sectors notes none: what it met is a sum), and their
 * number is returned.
 */
static uint64_t
same (const struct seen *a, const struct seen *b, bool both)
{
  uint64_t s, n, met = 0;

  for (s = 0; s < REGION; s++)
    for (n = 0; n < MAXNTH; n++) {
      if (both && !(a->met[s][n] && b->met[s][n]))
        continue;
      if (a->met[s][n] != b->met[s][n] || a->what[s][n] != b->what[s][n])
        ck_abort_msg ("sector %llu, request %llu to it: not the same in the "
                      "two orders",
                      (unsigned long long)s, (unsigned long long)n);
      met += a->met[s][n];
    }
  return met;
}

/* ---- flips ---- */

static void
flips_on (struct fm_faultset *s)
{
  s->flip_rate = 1e-5;
}

struct span {
  uint64_t first, n; /* sectors */
};

/* One read of span, its flips noted by sector and nth read. */
static void
read_flips (struct dfaults *f, struct seen *s, struct span r)
{
  uint64_t extra, *bits, k, i;
  struct fm_err err;

  for (i = r.first; i < r.first + r.n; i++)
    s->nth[i]++;
  if (dfaults_read (f, 0, r.first * SECTOR, r.n * SECTOR, true, &extra, &err))
    ck_abort_msg ("%s", err.msg);
  k = dfaults_flips (f, 0, r.first * SECTOR, r.n * SECTOR, &bits);
  for (i = 0; i < k; i++) {
    uint64_t bit = r.first * SECTOR * 8 + bits[i];
    note (s, bit / (SECTOR * 8), bit % (SECTOR * 8) + 1);
  }
  free (bits);
}

START_TEST (test_flip_order)
{
  enum {
    N = 1200
  };
  struct span r[N];
  struct seen *a = seen_new (), *b = seen_new ();
  struct dfaults *fa = disk (flips_on), *fb = disk (flips_on);
  size_t *p = shuffled (N, 1), i;
  uint64_t met;

  /* 400 reads of 1 to 64 sectors of the region, each thrice. */
  for (i = 0; i < N; i++) {
    r[i].n = 1 + fm_below (fm_hash (2, FM_STREAM_BENCH, i / 3, 0), 64);
    r[i].first =
        fm_below (fm_hash (2, FM_STREAM_BENCH, i / 3, 1), REGION - r[i].n);
  }
  for (i = 0; i < N; i++)
    read_flips (fa, a, r[i]);
  for (i = 0; i < N; i++) {
    struct span q = r[p[i]];
    uint64_t h = fm_hash (3, FM_STREAM_BENCH, i, 0);

    if (h & 1) { /* another sector's read first, far from these */
      struct span o = {NOISE + fm_below (h >> 8, 8192), 1 + (h >> 40) % 32};
      read_flips (fb, b, o);
    }
    if ((h & 6) == 0 && q.n > 1) { /* cut in two */
      struct span lo = {q.first, q.n / 2},
                  hi = {q.first + q.n / 2, q.n - q.n / 2};
      read_flips (fb, b, lo);
      read_flips (fb, b, hi);
    } else
      read_flips (fb, b, q);
  }
  met = same (a, b, false);
  /* 39,000 sector reads at 0.04 flips each. */
  ck_assert_uint_gt (met, 500);
  dfaults_free (fa);
  dfaults_free (fb);
  free (a);
  free (b);
  free (p);
}
END_TEST

/* ---- retries: marginal sectors, unreadable ones that may recover ---- */

static void
retries_on (struct fm_faultset *s)
{
  s->marginal = 0.9; /* a quarter of the 512-byte sectors */
  s->ure_recover = 0.5;
}

/* A read of n sectors from first: whether it failed and the retries it
 * took, noted for a single sector (what a read of several met is a sum);
 * returns -1 (failed), 0 (no retry) or 1 (read after retries).
 */
static int
read_retries (struct dfaults *f, struct seen *s, uint64_t first, uint64_t n)
{
  uint64_t extra, i;
  struct fm_err err;
  int r;

  for (i = first; i < first + n; i++)
    s->nth[i]++;
  r = dfaults_read (f, 0, first * SECTOR, n * SECTOR, true, &extra, &err);
  if (r == -1 && errno != EIO)
    ck_abort_msg ("%s", err.msg);
  if (n == 1)
    note (s, first, extra * 2 + (r == -1));
  return r == -1 ? -1 : extra > 0;
}

/* Request i of the retries' workload: each sector read alone six times
 * and each run of 16 three times, one group of 16 after the other.
 */
static struct span
retry_request (size_t i)
{
  size_t g = i / (16 * 6 + 3), k = i % (16 * 6 + 3);

  return k < 16 * 6 ? (struct span){16 * g + k / 6, 1}
                    : (struct span){16 * g, 16};
}

START_TEST (test_retry_order)
{
  enum {
    SECTS = 1024,
    N = SECTS / 16 * (16 * 6 + 3)
  };
  struct seen *a = seen_new (), *b = seen_new ();
  struct dfaults *fa = disk (retries_on), *fb = disk (retries_on);
  size_t *p = shuffled (N, 4), i;
  uint64_t s, failed = 0, retried = 0;
  struct fm_err err;

  /* One unreadable sector in every 16: each read of it fails, or with
   * chance 1/2 comes back after retries and mends it.  A read of the 16
   * that fails there still counts for the marginal sectors after it.
   */
  for (s = 3; s < SECTS; s += 16) {
    ck_assert_int_eq (
        dfaults_inject (fa, 0, FM_FAULT_URE, s * SECTOR, SECTOR, "test", &err),
        0);
    ck_assert_int_eq (
        dfaults_inject (fb, 0, FM_FAULT_URE, s * SECTOR, SECTOR, "test", &err),
        0);
  }
  for (i = 0; i < N; i++) {
    struct span r = retry_request (i);
    int k = read_retries (fa, a, r.first, r.n);
    failed += k == -1;
    retried += k == 1;
  }
  for (i = 0; i < N; i++) {
    uint64_t h = fm_hash (5, FM_STREAM_BENCH, i, 0);
    struct span r = retry_request (p[i]);

    if (h & 1)
      read_retries (fb, b, NOISE + fm_below (h >> 8, 8192), 1);
    read_retries (fb, b, r.first, r.n);
  }
  /* Each sector's nth read was a read of it alone in both orders for
   * about half of its six reads alone.
   */
  ck_assert_uint_gt (same (a, b, true), SECTS * 6 / 3);
  /* The draws were there to be made: 64 unreadable sectors, a quarter
   * of the rest marginal.
   */
  ck_assert_uint_gt (failed, 40);
  ck_assert_uint_gt (retried, 1000);
  dfaults_free (fa);
  dfaults_free (fb);
  free (a);
  free (b);
  free (p);
}
END_TEST

/* ---- writes: lost, misdirected, re-rolled, reallocated ---- */

static void
writes_on (struct fm_faultset *s)
{
  s->lost_write = 0.08;
  s->misdirected_write = 0.08;
  s->ber = 1.25e-5; /* 5 % of 512-byte sectors unreadable, and rewritten */
  s->realloc = 0.5;
  s->spares = 1000000;
}

/* One write of span: its fate noted at its first sector. */
static void
write_fate (struct dfaults *f, struct seen *s, struct span w)
{
  uint64_t at, i;
  struct fm_err err;
  bool applied;

  for (i = w.first; i < w.first + w.n; i++)
    s->nth[i]++;
  applied = dfaults_fate (f, 0, w.first * SECTOR, w.n * SECTOR, &at);
  if (applied && dfaults_write (f, 0, at, w.n * SECTOR, &err) == -1)
    ck_abort_msg ("%s", err.msg);
  note (s, w.first, applied ? at + 1 : 0);
}

/* After the writes: which sectors read, which fail, which live on a
 * spare - noted as one more request to each.
 */
static void
aftermath (struct dfaults *f, struct seen *s)
{
  uint64_t sector, extra;
  struct fm_err err;

  for (sector = 0; sector < REGION; sector++) {
    int r = dfaults_read (f, 0, sector * SECTOR, SECTOR, true, &extra, &err);

    s->nth[sector]++;
    note (s, sector,
          2 * dfaults_remapped_runs (f, sector * SECTOR, SECTOR) + (r == -1));
  }
}

START_TEST (test_write_order)
{
  enum {
    TARGETS = 36,
    WRITES = 8,
    N = TARGETS * WRITES
  };
  struct seen *a = seen_new (), *b = seen_new ();
  struct dfaults *fa = disk (writes_on), *fb = disk (writes_on);
  size_t *p = shuffled (N, 6), i;
  struct span w[N];
  uint64_t lost = 0, moved = 0;

  /* Writes of 1 to 16 sectors, 200 apart, so that one misdirected
   * lands on no other's sectors; each eight times.
   */
  for (i = 0; i < N; i++) {
    w[i].first = 100 + 200 * (i / WRITES);
    w[i].n = 1 + fm_below (fm_hash (7, FM_STREAM_BENCH, i / WRITES, 0), 16);
  }
  for (i = 0; i < N; i++)
    write_fate (fa, a, w[i]);
  for (i = 0; i < N; i++) {
    uint64_t h = fm_hash (8, FM_STREAM_BENCH, i, 0);

    if (h & 1) {
      struct span o = {NOISE + fm_below (h >> 8, 8192), 1 + (h >> 40) % 16};
      write_fate (fb, b, o);
    }
    write_fate (fb, b, w[p[i]]);
  }
  aftermath (fa, a);
  aftermath (fb, b);
  ck_assert_uint_gt (same (a, b, false), N);
  for (i = 0; i < TARGETS; i++) {
    unsigned k;
    for (k = 1; k <= WRITES; k++) {
      uint64_t what = a->what[w[i * WRITES].first][k];
      lost += what == fm_mix64 (0);
      moved += what != fm_mix64 (0) &&
               what != fm_mix64 (w[i * WRITES].first * SECTOR + 1);
    }
  }
  /* 8 % of 288 each. */
  ck_assert_uint_gt (lost, 8);
  ck_assert_uint_gt (moved, 8);
  dfaults_free (fa);
  dfaults_free (fb);
  free (a);
  free (b);
  free (p);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"flip_order", test_flip_order},
      {"retry_order", test_retry_order},
      {"write_order", test_write_order},
  };

  return fd_check_main ("draws", cases, sizeof cases / sizeof cases[0]);
}
