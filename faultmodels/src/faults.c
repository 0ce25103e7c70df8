/* futuredisk — faultmodels: fault kinds and the fault map (see faults.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faultmodels/faults.h"
#include "faultmodels/rng.h"
#include "faultmodels/units.h"
#include "internal.h"

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
      {"ns", 1},  {"us", 1e3},   {"ms", 1e6},
      {"s", 1e9}, {"min", 60e9}, {"h", 3600e9},
  };
  char *end;
  double v;
  size_t i;

  if (s == NULL || *s < '0' || *s > '9')
    return fm_fail (err, "%s: '%s' is not a duration (e.g. 500ms, 30s, 2h)",
                    what, s ? s : "");
  v = strtod (s, &end);
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
                  "min, h)",
                  what, s);
}

/* ---- unrecoverable read errors from a bit error rate ---- */

double
fm_ure_sector_probability (double ber, uint32_t sector_bytes)
{
  return -expm1 (8.0 * sector_bytes * log1p (-ber));
}

/* A Poisson variate of mean `mean` from the uniforms of (seed, stream):
 * inversion by sequential search for small means, the normal
 * approximation (mean > 500, error < 1%) for large ones.
 */
static uint64_t
poisson (uint64_t seed, enum fm_stream stream, double mean)
{
  double u = fm_unit (fm_hash (seed, stream, UINT64_MAX, 0));
  double p, cdf;
  uint64_t k = 0;

  if (mean <= 0)
    return 0;
  if (mean > 500) {
    /* Box-Muller from two independent uniforms. */
    double u2 = fm_unit (fm_hash (seed, stream, UINT64_MAX, 1));
    double z = sqrt (-2 * log (1 - u)) * cos (2 * M_PI * u2);
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

uint64_t
fm_flip_count (uint64_t seed, uint64_t read, uint64_t bits, double rate)
{
  /* poisson() keys its uniforms by (stream, UINT64_MAX, 0|1): fold the
   * read number into the seed so every read gets its own.
   */
  return poisson (fm_hash (seed, FM_STREAM_FLIP, read, 0), FM_STREAM_FLIP,
                  (double)bits * rate);
}

uint64_t
fm_flip_bit (uint64_t seed, uint64_t read, uint64_t j, uint64_t bits)
{
  return fm_below (fm_hash (seed, FM_STREAM_FLIP, read, j + 1), bits);
}

/* ---- the fault map: sorted, non-overlapping runs ---- */

struct run {
  uint64_t first, n;
  enum fm_fault_kind kind;
};

struct fm_faultmap {
  struct run *runs;
  size_t nruns, alloc;
  uint64_t sectors;
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
    free (m->runs);
    free (m);
  }
}

/* Index of the first run ending after sector s. */
static size_t
find_run (const struct fm_faultmap *m, uint64_t s)
{
  size_t lo = 0, hi = m->nruns;

  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (m->runs[mid].first + m->runs[mid].n <= s)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static int
reserve (struct fm_faultmap *m, size_t more)
{
  if (m->nruns + more > m->alloc) {
    size_t na = m->alloc ? 2 * m->alloc : 16;
    struct run *nr;

    while (na < m->nruns + more)
      na *= 2;
    nr = realloc (m->runs, na * sizeof *nr);
    if (nr == NULL)
      return -1;
    m->runs = nr;
    m->alloc = na;
  }
  return 0;
}

int
fm_faultmap_clear (struct fm_faultmap *m, uint64_t first, uint64_t n)
{
  uint64_t end = first + n;
  size_t i;

  if (reserve (m, 1) == -1) /* a split needs one more run */
    return -1;
  i = find_run (m, first);
  while (i < m->nruns && m->runs[i].first < end) {
    struct run *r = &m->runs[i];
    uint64_t r_end = r->first + r->n;

    if (r->first < first && r_end > end) { /* split around the range */
      memmove (r + 2, r + 1, (m->nruns - i - 1) * sizeof *r);
      r[1] = (struct run){end, r_end - end, r->kind};
      r->n = first - r->first;
      m->nruns++;
      m->sectors -= n;
      return 0;
    }
    if (r->first < first) { /* keep the head */
      m->sectors -= r_end - first;
      r->n = first - r->first;
      i++;
    } else if (r_end > end) { /* keep the tail */
      m->sectors -= end - r->first;
      r->n = r_end - end;
      r->first = end;
      return 0;
    } else { /* inside: drop */
      m->sectors -= r->n;
      memmove (r, r + 1, (m->nruns - i - 1) * sizeof *r);
      m->nruns--;
    }
  }
  return 0;
}

int
fm_faultmap_add (struct fm_faultmap *m, uint64_t first, uint64_t n,
                 enum fm_fault_kind k)
{
  size_t i;

  if (n == 0)
    return 0;
  if (fm_faultmap_clear (m, first, n) == -1 || reserve (m, 1) == -1)
    return -1;
  i = find_run (m, first);
  memmove (&m->runs[i + 1], &m->runs[i], (m->nruns - i) * sizeof *m->runs);
  m->runs[i] = (struct run){first, n, k};
  m->nruns++;
  m->sectors += n;
  return 0;
}

bool
fm_faultmap_find (const struct fm_faultmap *m, uint64_t first, uint64_t n,
                  uint64_t *bad, uint64_t *bad_n, enum fm_fault_kind *kind)
{
  size_t i = find_run (m, first);
  uint64_t s, e;

  if (i == m->nruns || m->runs[i].first >= first + n)
    return false;
  s = m->runs[i].first > first ? m->runs[i].first : first;
  e = m->runs[i].first + m->runs[i].n;
  if (e > first + n)
    e = first + n;
  *bad = s;
  *bad_n = e - s;
  *kind = m->runs[i].kind;
  return true;
}

uint64_t
fm_faultmap_sectors (const struct fm_faultmap *m)
{
  return m->sectors;
}
