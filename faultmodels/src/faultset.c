/* futuredisk — faultmodels: fault keys and presets (see faultset.h).
 *
 * One table (fault_keys) gives every key its type, range, unit and help;
 * the plugin, profile files, presets, the man page test and PROFILES.md
 * all follow it.
 */
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "faultmodels/faults.h"
#include "faultmodels/faultset.h"
#include "faultmodels/units.h"
#include "faultmodels/error.h"

enum fkey_type {
  T_PROB,     /* double in [0, 1] */
  T_RATE,     /* double in [0, max] */
  T_DURATION, /* ns from "30s", "2y" */
  T_COUNT,    /* integer in [min, max] */
  T_SIZE,     /* bytes */
  T_AUTO_RATE /* T_RATE or "auto" (stored as -1) */
};

struct fault_key {
  const char *key;
  enum fkey_type type;
  size_t offset;
  double min, max;
  const char *unit;
  const char *help;
};

#define F(field) offsetof (struct fm_faultset, field)

static const struct fault_key fault_keys[] = {
    {"ber", T_RATE, F (ber), 0, 1e-3, "errors per bit read",
     "unrecoverable read errors, sticky per sector until rewritten"},
    {"erc", T_DURATION, F (erc_ns), 0, 0, "duration",
     "error recovery a failing read spends before EIO"},
    {"ure-recover", T_PROB, F (ure_recover), 0, 1, "probability",
     "chance a failing read succeeds on a retry"},
    {"retry-revs", T_RATE, F (retry_revs), 1, 1e4, "revolutions",
     "mean retries, one revolution each, a read that comes back takes "
     "(geometric)"},
    {"marginal", T_PROB, F (marginal), 0, 1, "fraction of 4 KiB blocks",
     "share of the media that reads correctly, but only on a retry"},
    {"age", T_DURATION, F (age_ns), 0, 0, "duration",
     "the disk's age at start: latent sector errors had this long"},
    {"lse", T_PROB, F (lse), 0, 1, "probability per year",
     "chance per year of age that the disk turns LSE-prone"},
    {"lse-alpha", T_RATE, F (lse_alpha), 0.05, 10, "exponent",
     "Pareto tail of the number of LSEs on a prone disk"},
    {"lse-min", T_COUNT, F (lse_min), 1, 1e9, "sectors",
     "floor of that number"},
    {"lse-max", T_COUNT, F (lse_max), 1, 1e9, "sectors",
     "ceiling of that number"},
    {"lse-burst", T_RATE, F (lse_burst), 1, 1e6, "sectors",
     "mean sectors per episode (geometric)"},
    {"lse-spread", T_SIZE, F (lse_spread), 0, 0, "bytes",
     "mean distance between sectors of a burst; 0: one track"},
    {"lse-head", T_PROB, F (lse_head), 0, 1, "fraction",
     "share of episodes centred in the first 10% of the disk"},
    {"lse-rate", T_AUTO_RATE, F (lse_rate), 0, 1e6, "episodes per virtual hour",
     "onsets during the run; auto: the rate that built up over age"},
    {"realloc", T_PROB, F (realloc), 0, 1, "probability",
     "chance a rewritten bad sector moves to a spare"},
    {"spares", T_COUNT, F (spares), 0, 1e12, "sectors",
     "spare sectors; when they run out, such writes fail"},
    {"corrupt", T_PROB, F (corrupt), 0, 1, "probability",
     "chance the disk suffers silent corruption at all (flips, rot, "
     "stuck bits, lost and misdirected writes)"},
    {"flip-rate", T_RATE, F (flip_rate), 0, 1e-6, "flips per bit read",
     "transient bit flips on the read path"},
    {"rot-rate", T_RATE, F (rot_rate), 0, 1, "flips per sector per hour",
     "bits that flip at rest on the media, per virtual hour"},
    {"stuck-bits", T_RATE, F (stuck_bits), 0, 1e-6, "per bit of the disk",
     "bits stuck at 0 or 1: reads return the stuck value"},
    {"lost-write", T_PROB, F (lost_write), 0, 1, "per write",
     "chance a write is acknowledged but never written"},
    {"misdirected-write", T_PROB, F (misdirected_write), 0, 1, "per write",
     "chance a write lands up to 64 sectors away instead"},
    {"torn", T_PROB, F (torn), 0, 1, "per cached write",
     "chance a power cut tears a cached write, keeping a prefix"},
    {"fail-at", T_DURATION, F (fail_at_ns), 0, 0, "virtual time",
     "the whole disk fails at this time; 0: never"},
};

#define N_KEYS (sizeof fault_keys / sizeof fault_keys[0])

static const struct fault_key *
find_key (const char *key)
{
  size_t i;

  for (i = 0; i < N_KEYS; i++)
    if (strcmp (fault_keys[i].key, key) == 0)
      return &fault_keys[i];
  return NULL;
}

const char *
fm_faultset_key (size_t i)
{
  return i < N_KEYS ? fault_keys[i].key : NULL;
}

const char *
fm_faultset_key_unit (size_t i)
{
  return i < N_KEYS ? fault_keys[i].unit : NULL;
}

const char *
fm_faultset_key_help (size_t i)
{
  return i < N_KEYS ? fault_keys[i].help : NULL;
}

int
fm_faultset_is_key (const char *key)
{
  return strcmp (key, "faults") == 0 || find_key (key) != NULL;
}

/* Mean retries of a read that comes back [E]: with marginal sectors at
 * the presets' share it gives a consumer disk the published tail
 * (faultmodels/PROFILES.md, retry-revs).
 */
#define RETRY_REVS 8

void
fm_faultset_defaults (struct fm_faultset *f)
{
  memset (f, 0, sizeof *f);
  f->erc_ns = 7000000000ULL; /* SCT ERC / TLER's common 7 s */
  f->retry_revs = RETRY_REVS;
  /* The field model's shapes (faultmodels/PROFILES.md, "Fault keys", for
   * their sources): they matter only once lse or age make a disk prone.
   */
  f->lse_alpha = 0.41;
  f->lse_min = 1;
  f->lse_max = 20000;
  f->lse_burst = 3;
  f->lse_head = 0.35;
  f->lse_rate = -1;
  f->spares = 20000;
  f->corrupt = 1;
}

#define YEAR_NS (365.25 * 86400e9)

/* Presets: a nearline/consumer disk, an enterprise one, and a harsh test
 * disk (the table and its sources: faultmodels/PROFILES.md).  A preset
 * names every rate, so applying one forgets the keys set before it.  The
 * datasheet URE rate is scaled by 0.1, as field drives beat their spec
 * (e.g. https://www.high-rely.com/blog/why-raid-5-stops-working-in-2009-not/).
 */
struct preset {
  const char *name;
  double ber, erc_s, ure_recover, retry_revs, marginal, age_y, lse;
  uint64_t lse_min;
  double lse_burst, realloc;
  uint64_t spares;
  double corrupt, flip_rate, rot_rate, stuck_bits, lost, misdirected, torn;
};

static const struct preset presets[] = {
    {"none", 0, -1, 0, RETRY_REVS, 0, 0, 0, 1, 3, 0, 20000, 0, 0, 0, 0, 0, 0,
     0},
    {"consumer", 1e-15, 120, 0.3, RETRY_REVS, 2e-3, 1, 0.0315, 1, 3, 0.6, 20000,
     0.005, 0, 1e-12, 1e-13, 1e-12, 1e-12, 0.5},
    {"enterprise", 1e-16, 7, 0.3, RETRY_REVS, 2e-3, 1, 0.0146, 1, 3, 0.6, 20000,
     0.0005, 0, 1e-13, 1e-14, 1e-13, 1e-13, 0.5},
    /* harsh: no slow sectors, which its 100 ms limit would turn into read
     * errors that mask the latent errors it is for.
     */
    {"harsh", 1e-11, 0.1, 0, RETRY_REVS, 0, 3, 1, 10, 8, 1, 100, 1, 1e-12, 1e-6,
     1e-10, 1e-5, 1e-5, 1},
};

const char *
fm_faultset_preset_name (size_t i)
{
  return i < sizeof presets / sizeof presets[0] ? presets[i].name : NULL;
}

int
fm_faultset_preset (struct fm_faultset *f, const char *name, struct fm_err *err)
{
  size_t i;

  for (i = 0; i < sizeof presets / sizeof presets[0]; i++) {
    const struct preset *p = &presets[i];
    uint64_t erc = f->erc_ns;

    if (strcmp (p->name, name) != 0)
      continue;
    fm_faultset_defaults (f);
    f->erc_ns = p->erc_s < 0 ? erc : (uint64_t)llround (p->erc_s * 1e9);
    f->ber = p->ber;
    f->ure_recover = p->ure_recover;
    f->retry_revs = p->retry_revs;
    f->marginal = p->marginal;
    f->age_ns = (uint64_t)llround (p->age_y * YEAR_NS);
    f->lse = p->lse;
    f->lse_min = p->lse_min;
    f->lse_burst = p->lse_burst;
    f->realloc = p->realloc;
    f->spares = p->spares;
    f->corrupt = p->corrupt;
    f->flip_rate = p->flip_rate;
    f->rot_rate = p->rot_rate;
    f->stuck_bits = p->stuck_bits;
    f->lost_write = p->lost;
    f->misdirected_write = p->misdirected;
    f->torn = p->torn;
    return 0;
  }
  return fm_fail (err,
                  "faults: unknown preset '%.64s' (none, consumer, "
                  "enterprise, harsh)",
                  name);
}

int
fm_faultset_set (struct fm_faultset *f, const char *key, const char *value,
                 struct fm_err *err)
{
  const struct fault_key *k;
  char *base = (char *)f;
  uint64_t u;
  double d;

  if (strcmp (key, "faults") == 0)
    return fm_faultset_preset (f, value, err);
  if ((k = find_key (key)) == NULL)
    return fm_fail (err, "unknown fault key '%.64s'", key);
  base += k->offset;
  switch (k->type) {
    case T_AUTO_RATE:
      if (strcmp (value, "auto") == 0) {
        *(double *)base = -1;
        return 0;
      }
      /* fall through */
    case T_PROB:
    case T_RATE:
      if (fm_parse_double (key, value, k->min, k->max, &d, err) == -1)
        return -1;
      *(double *)base = d;
      return 0;
    case T_DURATION:
      return fm_parse_duration (key, value, (uint64_t *)base, err);
    case T_COUNT:
      if (fm_parse_uint (key, value, (uint64_t)k->min, (uint64_t)k->max, &u,
                         err) == -1)
        return -1;
      *(uint64_t *)base = u;
      if (f->lse_min > f->lse_max)
        return fm_fail (err, "%s: lse-min %" PRIu64 " exceeds lse-max %" PRIu64,
                        key, f->lse_min, f->lse_max);
      return 0;
    case T_SIZE:
      return fm_parse_size (key, value, (uint64_t *)base, err);
  }
  return fm_fail (err, "%s: internal error", key);
}

int
fm_faultset_json (const struct fm_faultset *f, char *buf, size_t len)
{
  size_t i, n = 0;

  n += (size_t)snprintf (buf + n, n < len ? len - n : 0, "{");
  for (i = 0; i < N_KEYS; i++) {
    const struct fault_key *k = &fault_keys[i];
    const char *base = (const char *)f + k->offset;

    n += (size_t)snprintf (buf + n, n < len ? len - n : 0,
                           "%s\"%s\": ", i ? ", " : "", k->key);
    if (k->type == T_DURATION || k->type == T_COUNT || k->type == T_SIZE)
      n += (size_t)snprintf (buf + n, n < len ? len - n : 0, "%" PRIu64,
                             *(const uint64_t *)base);
    else if (k->type == T_AUTO_RATE && *(const double *)base < 0)
      n += (size_t)snprintf (buf + n, n < len ? len - n : 0, "\"auto\"");
    else
      n += (size_t)snprintf (buf + n, n < len ? len - n : 0, "%.17g",
                             *(const double *)base);
  }
  n += (size_t)snprintf (buf + n, n < len ? len - n : 0, "}");
  return n < len ? 0 : -1;
}

double
fm_faultset_lse_prone (const struct fm_faultset *f)
{
  double years = (double)f->age_ns / YEAR_NS;

  if (f->lse >= 1)
    return years > 0 ? 1 : 0;
  return -expm1 (years * log1p (-f->lse));
}
