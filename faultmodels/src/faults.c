/* futuredisk — faultmodels: fault kinds and the fault map (see faults.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faultmodels/faults.h"
#include "faultmodels/rng.h"
#include "faultmodels/units.h"
#include "faultmodels/error.h"
#include "runs.h"

static const struct {
  const char *name;
  const char *description;
} kinds[] = {
#define FM_FAULT_ROW(id, name, desc) {name, desc},
    FM_FAULT_KINDS (FM_FAULT_ROW)
#undef FM_FAULT_ROW
};

const char *
fm_fault_name (enum fm_fault_kind k)
{
  return k < FM_FAULT_NKINDS ? kinds[k].name : "?";
}

const char *
fm_fault_description (enum fm_fault_kind k)
{
  return k < FM_FAULT_NKINDS ? kinds[k].description : "?";
}

int
fm_fault_parse (const char *name, enum fm_fault_kind *out, struct fm_err *err)
{
  char list[256] = "";
  int k;

  for (k = 0; k < FM_FAULT_NKINDS; k++) {
    if (strcmp (name, kinds[k].name) == 0) {
      *out = (enum fm_fault_kind)k;
      return 0;
    }
    snprintf (list + strlen (list), sizeof list - strlen (list), "%s%s",
              k ? ", " : "", kinds[k].name);
  }
  return fm_fail (err, "unknown fault kind '%.64s' (kinds: %s)", name, list);
}

int
fm_parse_duration (const char *what, const char *s, uint64_t *ns,
                   struct fm_err *err)
{
  static const struct {
    const char *suffix;
    double ns;
  } units[] = {
      {"ns", 1},     {"us", 1e3},   {"ms", 1e6},    {"s", 1e9},
      {"min", 60e9}, {"h", 3600e9}, {"d", 86400e9}, {"y", 365.25 * 86400e9},
  };
  char *end;
  double v;
  size_t i;

  if (s == NULL || *s < '0' || *s > '9')
    return fm_fail (err, "%s: '%s' is not a duration (e.g. 500ms, 30s, 2h)",
                    what, s ? s : "");
  v = strtod (s, &end);
  if (v == 0 && *end == '\0') {
    *ns = 0; /* zero needs no unit */
    return 0;
  }
  for (i = 0; i < sizeof units / sizeof units[0]; i++) {
    if (strcmp (end, units[i].suffix) == 0) {
      double t = v * units[i].ns;
      if (!isfinite (t) || t >= 1.8e19)
        return fm_fail (err, "%s: '%s' is too long", what, s);
      *ns = (uint64_t)llround (t);
      return 0;
    }
  }
  return fm_fail (err,
                  "%s: '%s' is not a duration: give a unit (ns, us, ms, s, "
                  "min, h, d, y)",
                  what, s);
}

/* ---- unrecoverable read errors from a bit error rate ---- */

double
fm_ure_sector_probability (double ber, uint32_t sector_bytes)
{
  return -expm1 (8.0 * sector_bytes * log1p (-ber));
}

/* Inversion by sequential search for small means, the normal
 * approximation (mean > 500, error < 1%) for large ones.
 */
uint64_t
fm_poisson (uint64_t h1, uint64_t h2, double mean)
{
  double u = fm_unit (h1);
  double p, cdf;
  uint64_t k = 0;

  if (mean <= 0)
    return 0;
  if (mean > 500) {
    /* Box-Muller from two independent uniforms. */
    double z = sqrt (-2 * log (1 - u)) * cos (2 * M_PI * fm_unit (h2));
    double v = mean + z * sqrt (mean) + 0.5;
    return v > 0 ? (uint64_t)v : 0;
  }
  p = cdf = exp (-mean);
  while (u > cdf && k < 100000) {
    k++;
    p *= mean / (double)k;
    cdf += p;
  }
  return k;
}

static uint64_t
poisson (uint64_t seed, enum fm_stream stream, double mean)
{
  return fm_poisson (fm_hash (seed, stream, UINT64_MAX, 0),
                     fm_hash (seed, stream, UINT64_MAX, 1), mean);
}

uint64_t
fm_ure_marginal (uint64_t seed, uint64_t sectors, double p,
                 void (*fn) (void *opaque, uint64_t sector), void *opaque)
{
  uint64_t n = poisson (seed, FM_STREAM_URE, (double)sectors * p), i;

  for (i = 0; i < n; i++)
    fn (opaque, fm_below (fm_hash (seed, FM_STREAM_URE, i, 0), sectors));
  return n;
}

bool
fm_ure_reroll (uint64_t seed, uint64_t s, uint64_t generation, double p)
{
  /* Generation 0 is the fresh disk (fm_ure_marginal); rerolls start at 1
   * and use another key space (a, b swapped) so the two never correlate.
   */
  return fm_unit (fm_hash (seed, FM_STREAM_URE, generation, s + 1)) < p;
}

/* ---- bit flips on the read path ---- */

/* The segment: as many sectors (a power of two, up to 2^20) as expect
 * between half a flip and one at one read each.  A read then costs a
 * draw or two per segment it touches, not one per sector.
 */
static uint64_t
flip_segment (double mean_per_sector)
{
  uint64_t k = 1;

  while (k < (1u << 20) && 2 * (double)k * mean_per_sector <= 1)
    k *= 2;
  return k;
}

uint64_t
fm_flips (uint64_t seed, double rate, uint32_t sector_bytes, uint64_t first,
          uint64_t n, uint64_t nth, fm_flip_fn *fn, void *opaque)
{
  uint64_t bits = 8ULL * sector_bytes, end = first + n, found = 0, k, g;
  double mean = (double)bits * rate;

  if (rate <= 0 || n == 0)
    return 0;
  k = flip_segment (mean);
  /* The flips of segment g's sectors at their nth reads: a Poisson
   * number over the segment's bits, each bit uniform, all from
   * (g, nth).  Split by sector, a Poisson process gives each sector its
   * own Poisson count, independent of the others': the draw per
   * (sector, nth) that the order of reads cannot change.
   */
  for (g = first / k; g * k < end; g++) {
    uint64_t key = fm_hash (seed, FM_STREAM_FLIP, g, nth), m, j;

    m = fm_poisson (fm_hash (key, FM_STREAM_FLIP, 0, 0),
                    fm_hash (key, FM_STREAM_FLIP, 0, 1), mean * (double)k);
    for (j = 0; j < m; j++) {
      uint64_t at =
          fm_below (fm_hash (key, FM_STREAM_FLIP, j + 1, 0), k * bits);
      uint64_t s = g * k + at / bits;

      if (s >= first && s < end) {
        fn (opaque, s, at % bits);
        found++;
      }
    }
  }
  return found;
}

/* ---- Poisson processes in one-second windows ---- */

/* Window keys live above 2^62 so they never meet the per-sector keys
 * (sectors, segments of them, read and write counts) of the same
 * stream.
 */
#define WINDOW_KEY(w) ((w) | (1ULL << 62))

uint64_t
fm_window_count (uint64_t seed, uint64_t stream, uint64_t w, double mean)
{
  return fm_poisson (fm_hash (seed, stream, WINDOW_KEY (w), 0),
                     fm_hash (seed, stream, WINDOW_KEY (w), 1), mean);
}

uint64_t
fm_window_event_ns (uint64_t seed, uint64_t stream, uint64_t w, uint64_t j)
{
  return fm_below (fm_hash (seed, stream, WINDOW_KEY (w), 2 * j + 2),
                   1000000000);
}

uint64_t
fm_window_event_hash (uint64_t seed, uint64_t stream, uint64_t w, uint64_t j)
{
  return fm_hash (seed, stream, WINDOW_KEY (w), 2 * j + 3);
}

/* ---- latent sector errors ---- */

uint64_t
fm_lse_count (uint64_t seed, double alpha, uint64_t min, uint64_t max)
{
  /* Inversion: N = floor(U^(-1/alpha)) has P(N >= n) = n^-alpha; 1 - U
   * keeps U away from 0.
   */
  double u = 1 - fm_unit (fm_hash (seed, FM_STREAM_LSE_EPISODE, UINT64_MAX, 1));
  double n = floor (pow (u, -1 / alpha));

  if (!(n < (double)max))
    return max;
  return (uint64_t)n < min ? min : (uint64_t)n;
}

/* A geometric variate >= 1 with mean m, from hash h. */
static uint64_t
geometric (uint64_t h, double m)
{
  double u = 1 - fm_unit (h), k;

  if (m <= 1)
    return 1;
  k = 1 + floor (log (u) / log1p (-1 / m));
  return k < 1e12 ? (uint64_t)k : 1000000000000ULL;
}

uint64_t
fm_lse_burst (uint64_t seed, uint64_t key, double burst)
{
  return geometric (fm_hash (seed, FM_STREAM_LSE_EPISODE, key, 1), burst);
}

uint64_t
fm_lse_centre (uint64_t seed, uint64_t key, uint64_t sectors, double head)
{
  uint64_t h = fm_hash (seed, FM_STREAM_LSE_EPISODE, key, 2);
  uint64_t head_sectors = sectors / 10 ? sectors / 10 : 1;

  if (fm_unit (fm_hash (seed, FM_STREAM_LSE_EPISODE, key, 3)) < head)
    return fm_below (h, head_sectors);
  return fm_below (h, sectors);
}

uint64_t
fm_lse_member (uint64_t seed, uint64_t key, uint64_t j, uint64_t centre,
               uint64_t spread, uint64_t sectors)
{
  uint64_t h = fm_hash (seed, FM_STREAM_LSE_EPISODE, key, 4 + j), d;

  if (j == 0)
    return centre;
  /* geometric() counts from 1; the offset may be 0..: mean spread. */
  d = geometric (h, (double)spread + 1) - 1;
  if (h & 1) /* the low bit, below fm_unit's 53, picks the side */
    return d > centre ? 0 : centre - d;
  return d >= sectors - 1 - centre ? sectors - 1 : centre + d;
}

/* ---- retries and marginal sectors ---- */

uint64_t
fm_retries (uint64_t seed, uint64_t stream, uint64_t s, uint64_t attempt,
            double mean)
{
  /* Keys above 2^63 keep clear of the decisions a stream makes per
   * (sector, attempt), such as whether a failing read recovers at all.
   */
  return geometric (fm_hash (seed, stream, s, attempt | (1ULL << 63)), mean);
}

double
fm_marginal_sector_probability (double share, uint32_t sector_bytes)
{
  if (share >= 1)
    return 1;
  return -expm1 (sector_bytes / 4096.0 * log1p (-share));
}

bool
fm_marginal (uint64_t seed, uint64_t s, double p)
{
  return fm_unit (fm_hash (seed, FM_STREAM_MARGINAL, s, 0)) < p;
}

/* ---- the fault map: runs of faulty sectors, tagged with their kind ---- */

struct fm_faultmap {
  struct fm_runs runs;
};

struct fm_faultmap *
fm_faultmap_new (void)
{
  return calloc (1, sizeof (struct fm_faultmap));
}

void
fm_faultmap_free (struct fm_faultmap *m)
{
  if (m) {
    fm_runs_free (&m->runs);
    free (m);
  }
}

int
fm_faultmap_clear (struct fm_faultmap *m, uint64_t first, uint64_t n)
{
  return fm_runs_remove (&m->runs, first, n);
}

int
fm_faultmap_add (struct fm_faultmap *m, uint64_t first, uint64_t n,
                 enum fm_fault_kind k)
{
  return fm_runs_add (&m->runs, first, n, (int)k);
}

bool
fm_faultmap_find (const struct fm_faultmap *m, uint64_t first, uint64_t n,
                  uint64_t *bad, uint64_t *bad_n, enum fm_fault_kind *kind)
{
  size_t i = fm_runs_find (&m->runs, first);
  const struct fm_run *r;
  uint64_t s, e;

  if (i == m->runs.n || m->runs.v[i].first >= first + n)
    return false;
  r = &m->runs.v[i];
  s = r->first > first ? r->first : first;
  e = r->first + r->n < first + n ? r->first + r->n : first + n;
  *bad = s;
  *bad_n = e - s;
  *kind = (enum fm_fault_kind)r->tag;
  return true;
}

uint64_t
fm_faultmap_sectors (const struct fm_faultmap *m)
{
  return m->runs.total;
}
