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
