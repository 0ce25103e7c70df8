/* futuredisk — faultmodels: profile keys, files, validation and rescaling.
 *
 * One table (profile_keys) says, for every key a profile file may set, its
 * type, unit, range and where it lives in struct fm_profile.  The parser,
 * the validator and PROFILES.md all follow it, so a key cannot be parsed
 * and then forgotten.
 */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faultmodels/faults.h"
#include "faultmodels/profile.h"
#include "faultmodels/seek.h"
#include "faultmodels/units.h"
#include "faultmodels/error.h"
#include "builtin.h"

enum key_type {
  K_STR,   /* text, stored in a char array */
  K_KIND,  /* hdd | ssd | smr */
  K_SIZE,  /* bytes, with the suffixes of units.h */
  K_MS,    /* milliseconds in the file, ns in the struct */
  K_DUR,   /* a duration with its unit (500ms), ns in the struct */
  K_MBPS,  /* MB/s (10^6 bytes/s) in the file, bytes/s in the struct */
  K_U32,   /* plain integer */
  K_DOUBLE /* plain number */
};

struct profile_key {
  const char *key;
  enum key_type type;
  size_t offset;
  size_t size;     /* K_STR: array size */
  double min, max; /* in file units */
  bool hdd_only;
  bool param; /* the plugin takes it too: queue_depth as queue-depth= */
};

#define F(field)  offsetof (struct fm_profile, field)
#define SZ(field) sizeof (((struct fm_profile *)0)->field)

static const struct profile_key profile_keys[] = {
    {"name", K_STR, F (name), SZ (name), 0, 0, false, false},
    {"description", K_STR, F (description), SZ (description), 0, 0, false,
     false},
    {"sourced", K_STR, F (sourced), SZ (sourced), 0, 0, false, false},
    {"estimated", K_STR, F (estimated), SZ (estimated), 0, 0, false, false},
    {"host", K_STR, F (host), SZ (host), 0, 0, false, false},
    {"kind", K_KIND, F (kind), 0, 0, 0, false, false},
    {"capacity", K_SIZE, F (capacity), 0, 1, 1e18, false, false},
    {"sector", K_U32, F (sector), 0, 512, 65536, false, false},
    {"bandwidth_mbps", K_MBPS, F (bandwidth), 0, 0, 1e6, false, false},
    {"write_bandwidth_mbps", K_MBPS, F (write_bandwidth), 0, 0, 1e6, false,
     false},
    {"rpm", K_U32, F (rpm), 0, 1000, 30000, true, false},
    {"zone_ratio", K_DOUBLE, F (zone_ratio), 0, 1, 4, true, false},
    {"zones", K_U32, F (zones), 0, 1, 1024, true, false},
    {"heads", K_U32, F (heads), 0, 1, 64, true, false},
    {"actuators", K_U32, F (actuators), 0, 0, 2, true, false},
    {"seek_t2t_ms", K_MS, F (seek_t2t_ns), 0, 0.001, 100, true, false},
    {"seek_avg_ms", K_MS, F (seek_avg_ns), 0, 0.001, 1000, true, false},
    {"seek_full_ms", K_MS, F (seek_full_ns), 0, 0.001, 1000, true, false},
    {"seek_settle_ms", K_MS, F (seek_settle_ns), 0, 0, 100, true, false},
    {"write_settle_t2t_ms", K_MS, F (write_settle_t2t_ns), 0, 0, 100, true,
     false},
    {"write_settle_ms", K_MS, F (write_settle_ns), 0, 0, 100, true, false},
    {"track_switch_ms", K_MS, F (track_switch_ns), 0, 0, 100, true, false},
    {"command_ms", K_MS, F (command_ns), 0, 0, 1000, false, false},
    {"read_latency_ms", K_MS, F (read_latency_ns), 0, 0, 10000, false, false},
    {"write_latency_ms", K_MS, F (write_latency_ns), 0, 0, 10000, false, false},
    {"interface_mbps", K_MBPS, F (interface_bw), 0, 0, 1e6, false, false},
    {"cache", K_SIZE, F (cache_bytes), 0, 0, 1e12, false, false},
    {"readahead", K_SIZE, F (readahead_bytes), 0, 0, 1e12, false, false},
    {"cache_segments", K_U32, F (cache_segments), 0, 0, 2048, true, true},
    {"prefetch_min", K_SIZE, F (prefetch_min_bytes), 0, 0, 1e12, true, false},
    {"write_entries", K_U32, F (write_entries), 0, 1, 4096, true, false},
    {"media_cache_entries", K_U32, F (media_cache_entries), 0, 0, 65536, true,
     false},
    {"media_cache_ms", K_MS, F (media_cache_ns), 0, 0, 100, true, false},
    {"queue_depth", K_U32, F (queue_depth), 0, 1, 256, true, true},
    {"queue_age", K_DUR, F (queue_age_ns), 0, 0, 3600e3, true, true},
    /* Keys named smr_* only a shingled disk (kind = smr) has. */
    {"smr_cache", K_SIZE, F (smr_cache_bytes), 0, 1 << 20, 1e12, true, false},
    {"smr_band", K_SIZE, F (smr_band_bytes), 0, 1 << 20, 1 << 30, true, false},
    {"smr_direct", K_SIZE, F (smr_direct_bytes), 0, 512, 1 << 30, true, false},
    {"smr_idle", K_DUR, F (smr_idle_ns), 0, 0, 3600e3, true, false},
};

#define N_KEYS (sizeof profile_keys / sizeof profile_keys[0])

static bool
smr_only (const struct profile_key *k)
{
  return strncmp (k->key, "smr_", 4) == 0;
}

const char *
fm_profile_key (size_t i)
{
  return i < N_KEYS ? profile_keys[i].key : NULL;
}

/* The plugin parameter of key k: its name with '-' for '_'. */
static void
param_name (const struct profile_key *k, char *out, size_t size)
{
  size_t i;

  for (i = 0; k->key[i] && i + 1 < size; i++)
    out[i] = k->key[i] == '_' ? '-' : k->key[i];
  out[i] = '\0';
}

static int
param_index (const char *param)
{
  char name[64];
  size_t i;

  for (i = 0; i < N_KEYS; i++) {
    if (!profile_keys[i].param)
      continue;
    param_name (&profile_keys[i], name, sizeof name);
    if (strcmp (name, param) == 0)
      return (int)i;
  }
  return -1;
}

const char *
fm_profile_param (size_t i, char *buf, size_t size)
{
  size_t j;

  for (j = 0; j < N_KEYS; j++)
    if (profile_keys[j].param && i-- == 0) {
      param_name (&profile_keys[j], buf, size);
      return buf;
    }
  return NULL;
}

bool
fm_profile_is_param (const char *param)
{
  return param_index (param) != -1;
}

/* Where a validation message points: a file line, or just the profile. */
struct origin {
  const char *filename; /* NULL: not from a file */
  const int *lines;     /* per key, 0 = not set in the file */
};

static int
key_index (const char *key)
{
  size_t i;

  for (i = 0; i < N_KEYS; i++)
    if (strcmp (profile_keys[i].key, key) == 0)
      return (int)i;
  return -1;
}

/* Report a problem with key `k` (an index into profile_keys). */
static int
key_fail (const struct origin *o, const struct fm_profile *p, int k,
          struct fm_err *err, const char *msg)
{
  const char *key = profile_keys[k].key;

  if (o && o->filename && o->lines[k] > 0)
    return fm_fail (err, "%s:%d: %s: %s", o->filename, o->lines[k], key, msg);
  if (o && o->filename)
    return fm_fail (err, "%s: %s: %s", o->filename, key, msg);
  return fm_fail (err, "profile %s: %s: %s", p->name, key, msg);
}

/* The value of a numeric key, in the unit the file uses. */
static double
key_value (const struct fm_profile *p, const struct profile_key *k)
{
  const char *base = (const char *)p + k->offset;

  switch (k->type) {
    case K_SIZE:
      return (double)*(const uint64_t *)base;
    case K_MS:
    case K_DUR:
      return *(const uint64_t *)base / 1e6;
    case K_MBPS:
      return *(const uint64_t *)base / 1e6;
    case K_U32:
      return *(const uint32_t *)base;
    case K_DOUBLE:
      return *(const double *)base;
    case K_STR:
    case K_KIND:
      break;
  }
  abort ();
}

static const char *const kind_names[] = {
    [FM_KIND_HDD] = "hdd", [FM_KIND_SSD] = "ssd", [FM_KIND_SMR] = "smr"};

int
fm_profile_key_value (const struct fm_profile *p, size_t i, char *buf,
                      size_t size)
{
  const char *base;
  uint64_t u;

  if (i >= N_KEYS)
    return -1;
  base = (const char *)p + profile_keys[i].offset;
  switch (profile_keys[i].type) {
    case K_STR:
      return snprintf (buf, size, "%s", base);
    case K_KIND:
      return snprintf (buf, size, "%s", kind_names[p->kind]);
    case K_SIZE:
      return snprintf (buf, size, "%" PRIu64, *(const uint64_t *)base);
    case K_DUR:
      return snprintf (buf, size, "%" PRIu64 "ns", *(const uint64_t *)base);
    case K_MS:
    case K_MBPS:
      /* Millionths in the struct (ns of a ms, bytes/s of a MB/s): printed
       * in full, the text parses back to the same integer.
       */
      u = *(const uint64_t *)base;
      return snprintf (buf, size, "%" PRIu64 ".%06" PRIu64, u / 1000000,
                       u % 1000000);
    case K_U32:
      return snprintf (buf, size, "%" PRIu32, *(const uint32_t *)base);
    case K_DOUBLE:
      return snprintf (buf, size, "%.17g", *(const double *)base);
  }
  abort ();
}

bool
fm_profile_rotating (const struct fm_profile *p)
{
  return p->kind == FM_KIND_HDD || p->kind == FM_KIND_SMR;
}

const char *
fm_profile_kind_name (enum fm_kind kind)
{
  return kind_names[kind];
}

double
fm_profile_rev_ns (const struct fm_profile *p)
{
  return p->rpm ? 60e9 / p->rpm : 0;
}

double
fm_profile_bw_outer (const struct fm_profile *p)
{
  if (!fm_profile_rotating (p))
    return (double)p->bandwidth;
  /* The mean of a linear radius run from 1 to 1/k is (1 + 1/k) / 2. */
  return 2.0 * (double)p->bandwidth / (1.0 + 1.0 / p->zone_ratio);
}

double
fm_profile_bw_inner (const struct fm_profile *p)
{
  if (!fm_profile_rotating (p))
    return (double)p->bandwidth;
  return fm_profile_bw_outer (p) / p->zone_ratio;
}

void
fm_profile_seek_spec (const struct fm_profile *p, struct fm_seek_spec *spec)
{
  spec->t2t_ns = p->seek_t2t_ns;
  spec->settle_ns = p->seek_settle_ns;
  spec->avg_ns = p->seek_avg_ns;
  spec->full_ns = p->seek_full_ns;
  spec->write_t2t_extra_ns = p->write_settle_t2t_ns;
  spec->write_extra_ns = p->write_settle_ns;
}

/* The orderings among the seek numbers, each blamed on its key; then the
 * curve's own shape (seek.h), blamed on the average.
 */
static int
check_seeks (const struct fm_profile *p, const struct origin *o,
             struct fm_err *err)
{
  char msg[FM_ERR_MAX];
  struct fm_seek_spec spec;
  struct fm_seek seek;
  uint64_t settle = p->seek_settle_ns ? p->seek_settle_ns : p->seek_t2t_ns;

  if (p->seek_avg_ns < p->seek_t2t_ns)
    return key_fail (o, p, key_index ("seek_avg_ms"), err,
                     "below the track-to-track seek");
  if (p->seek_full_ns < p->seek_avg_ns)
    return key_fail (o, p, key_index ("seek_full_ms"), err,
                     "below the average seek");
  if (p->seek_settle_ns && p->seek_settle_ns < p->seek_t2t_ns)
    return key_fail (o, p, key_index ("seek_settle_ms"), err,
                     "below the track-to-track seek (0 means the same)");
  if (p->seek_t2t_ns + p->write_settle_t2t_ns > settle + p->write_settle_ns) {
    snprintf (msg, sizeof msg,
              "a one-cylinder write seek (seek_t2t_ms + this = %.3f ms) "
              "would be slower than a longer one (settle + "
              "write_settle_ms = %.3f ms)",
              (p->seek_t2t_ns + p->write_settle_t2t_ns) / 1e6,
              (settle + p->write_settle_ns) / 1e6);
    return key_fail (o, p, key_index ("write_settle_t2t_ms"), err, msg);
  }
  /* The cylinder count does not affect monotonicity; any C will do. */
  fm_profile_seek_spec (p, &spec);
  if (fm_seek_init (&seek, &spec, 1e5, err) == -1) {
    snprintf (msg, sizeof msg, "%s", err->msg);
    return key_fail (o, p, key_index ("seek_avg_ms"), err, msg);
  }
  return 0;
}

uint64_t
fm_profile_buffer_bytes (const struct fm_profile *p)
{
  return p->cache_bytes > p->readahead_bytes ? p->cache_bytes
                                             : p->readahead_bytes;
}

/* Unset, as many segments of `readahead` bytes as the buffer holds, at
 * most DEFAULT_SEGMENTS: the 32 of DiskSim's 4 TB model (2013) [E].
 */
#define DEFAULT_SEGMENTS 32

uint32_t
fm_profile_segments (const struct fm_profile *p)
{
  uint64_t per =
      p->readahead_bytes > p->sector ? p->readahead_bytes : p->sector;
  uint64_t n = fm_profile_buffer_bytes (p) / per;

  if (p->cache_segments)
    return p->cache_segments;
  return n < 1 ? 1 : n > DEFAULT_SEGMENTS ? DEFAULT_SEGMENTS : (uint32_t)n;
}

/* The read buffer's keys: segments of at least a sector, and a minimum
 * prefetch within the maximum.
 */
static int
check_buffer (const struct fm_profile *p, const struct origin *o,
              struct fm_err *err)
{
  char msg[FM_ERR_MAX];

  if (p->cache_segments &&
      fm_profile_buffer_bytes (p) / p->cache_segments < p->sector) {
    snprintf (msg, sizeof msg,
              "%u segments of a %llu-byte buffer are smaller than a "
              "sector",
              p->cache_segments,
              (unsigned long long)fm_profile_buffer_bytes (p));
    return key_fail (o, p, key_index ("cache_segments"), err, msg);
  }
  if (p->prefetch_min_bytes > p->readahead_bytes)
    return key_fail (o, p, key_index ("prefetch_min"), err,
                     "above readahead, the most the drive reads ahead");
  return 0;
}

/* The media cache and the bands, beyond their ranges. */
static int
check_smr (const struct fm_profile *p, const struct origin *o,
           struct fm_err *err)
{
  if (p->smr_band_bytes % p->sector)
    return key_fail (o, p, key_index ("smr_band"), err,
                     "not a multiple of the sector");
  if (p->smr_cache_bytes < p->smr_band_bytes)
    return key_fail (o, p, key_index ("smr_cache"), err,
                     "smaller than one band (smr_band)");
  /* The model keeps a cache position per run in an int. */
  if (p->smr_cache_bytes / p->sector >= (uint64_t)1 << 31)
    return key_fail (o, p, key_index ("smr_cache"), err,
                     "more than 2^31 sectors");
  return 0;
}

static int
check (const struct fm_profile *p, const struct origin *o, struct fm_err *err)
{
  char msg[FM_ERR_MAX];
  size_t i;
  int k;

  if (p->name[0] == '\0')
    return key_fail (o, p, key_index ("name"), err, "missing");
  for (i = 0; p->name[i]; i++) {
    unsigned char c = p->name[i];
    if (!isalnum (c) && c != '-' && c != '_' && c != '.')
      return key_fail (o, p, key_index ("name"), err,
                       "use letters, digits, '-', '_' and '.' only");
  }

  for (i = 0; i < N_KEYS; i++) {
    const struct profile_key *key = &profile_keys[i];
    double v;

    if (key->type == K_STR || key->type == K_KIND)
      continue;
    if ((key->hdd_only && !fm_profile_rotating (p)) ||
        (smr_only (key) && p->kind != FM_KIND_SMR))
      continue;
    v = key_value (p, key);
    if (v < key->min || v > key->max) {
      snprintf (msg, sizeof msg, "%g is out of range [%g, %g]", v, key->min,
                key->max);
      return key_fail (o, p, (int)i, err, msg);
    }
  }

  k = key_index ("sector");
  if (p->sector & (p->sector - 1))
    return key_fail (o, p, k, err, "must be a power of two");
  k = key_index ("capacity");
  if (p->capacity % p->sector) {
    snprintf (msg, sizeof msg,
              "%llu bytes is not a multiple of the %u-byte "
              "sector",
              (unsigned long long)p->capacity, p->sector);
    return key_fail (o, p, k, err, msg);
  }
  if (p->design_capacity == 0)
    return key_fail (o, p, k, err, "design capacity is zero");

  if (p->kind == FM_KIND_SMR && check_smr (p, o, err) == -1)
    return -1;
  if (fm_profile_rotating (p)) {
    double track_bytes;

    if (p->bandwidth == 0)
      return key_fail (o, p, key_index ("bandwidth_mbps"), err,
                       "a rotating disk needs a bandwidth (0 means "
                       "unlimited, which only an ssd may have)");
    if (p->track_switch_ns >= fm_profile_rev_ns (p))
      return key_fail (o, p, key_index ("track_switch_ms"), err,
                       "must be shorter than one revolution");
    if (check_seeks (p, o, err) == -1)
      return -1;
    if (p->actuators == 2 && p->heads % 2)
      return key_fail (o, p, key_index ("heads"), err,
                       "two actuators share the surfaces: give an even "
                       "number");
    track_bytes = fm_profile_bw_inner (p) *
                  (fm_profile_rev_ns (p) + p->track_switch_ns) / 1e9;
    if (track_bytes < p->sector)
      return key_fail (o, p, key_index ("bandwidth_mbps"), err,
                       "inner tracks would hold less than one sector");
    if (check_buffer (p, o, err) == -1)
      return -1;
  } else if (p->bandwidth == 0 && p->write_bandwidth != 0) {
    return key_fail (o, p, key_index ("write_bandwidth_mbps"), err,
                     "set without bandwidth_mbps");
  }
  return 0;
}

int
fm_profile_validate (const struct fm_profile *p, struct fm_err *err)
{
  return check (p, NULL, err);
}

int
fm_profile_resize (struct fm_profile *p, uint64_t size, struct fm_err *err)
{
  if (size == 0)
    return fm_fail (err, "size: must be positive");
  if (size % p->sector)
    return fm_fail (err,
                    "size: %llu bytes is not a multiple of profile %s's "
                    "%u-byte sector",
                    (unsigned long long)size, p->name, p->sector);
  if (p->kind == FM_KIND_SMR) {
    /* The media cache is tracks too: it keeps its share of the disk, but
     * holds at least one band.
     */
    uint64_t cache =
        (uint64_t)((double)p->smr_cache_bytes * size / p->capacity);

    cache -= cache % p->sector;
    if (cache < p->smr_band_bytes)
      cache = p->smr_band_bytes;
    if (cache >= size)
      return fm_fail (err,
                      "size: %llu bytes leaves no room beside profile %s's "
                      "media cache of at least one band (smr_band, %llu "
                      "bytes)",
                      (unsigned long long)size, p->name,
                      (unsigned long long)p->smr_band_bytes);
    p->smr_cache_bytes = cache;
  }
  p->capacity = size;
  return 0;
}

/* ---- profile files ---- */

/* Set key k from text v.  Messages are without the FILE:LINE: prefix. */
static int
set_key (struct fm_profile *p, const struct profile_key *key, const char *v,
         struct fm_err *err)
{
  char *base = (char *)p + key->offset;
  uint64_t u;
  double d;

  switch (key->type) {
    case K_STR:
      if (strlen (v) >= key->size)
        return fm_fail (err, "longer than %zu characters", key->size - 1);
      memcpy (base, v, strlen (v) + 1);
      return 0;
    case K_KIND:
      for (u = 0; u < sizeof kind_names / sizeof kind_names[0]; u++)
        if (strcmp (v, kind_names[u]) == 0) {
          p->kind = (enum fm_kind)u;
          return 0;
        }
      return fm_fail (err, "'%s' is not hdd, ssd or smr", v);
    case K_SIZE:
      if (fm_parse_size ("value", v, &u, err) == -1)
        return -1;
      *(uint64_t *)base = u;
      return 0;
    case K_DUR:
      if (fm_parse_duration ("value", v, &u, err) == -1)
        return -1;
      *(uint64_t *)base = u;
      return 0;
    case K_MS:
    case K_MBPS:
      /* Checked here, not only in check(): a negative value would wrap
       * when stored as unsigned nanoseconds. */
      if (fm_parse_double ("value", v, -1e12, 1e12, &d, err) == -1)
        return -1;
      if (d < key->min || d > key->max)
        return fm_fail (err, "%s is out of range [%g, %g]", v, key->min,
                        key->max);
      *(uint64_t *)base = (uint64_t)llround (d * 1e6);
      return 0;
    case K_U32:
      if (fm_parse_uint ("value", v, 0, UINT32_MAX, &u, err) == -1)
        return -1;
      *(uint32_t *)base = (uint32_t)u;
      return 0;
    case K_DOUBLE:
      if (fm_parse_double ("value", v, -1e12, 1e12, &d, err) == -1)
        return -1;
      *(double *)base = d;
      return 0;
  }
  abort ();
}

int
fm_profile_set_param (struct fm_profile *p, const char *param,
                      const char *value, struct fm_err *err)
{
  int k = param_index (param);
  struct fm_err e;

  if (k == -1)
    return fm_fail (err, "%s: not a drive parameter", param);
  if (profile_keys[k].hdd_only && !fm_profile_rotating (p))
    return fm_fail (err,
                    "%s: profile %s is not a rotating disk (only those "
                    "have this)",
                    param, p->name);
  if (*value == '\0')
    return fm_fail (err, "%s: empty value", param);
  if (set_key (p, &profile_keys[k], value, &e) == -1)
    return fm_fail (err, "%s: %s", param, e.msg);
  return 0;
}

/* Fault keys in a file: each once, and a preset (faults = NAME) before
 * any of them, since a preset replaces every rate.
 */
struct fault_lines {
  int preset;      /* line of faults = ..., 0 if none */
  int first;       /* line of the first other fault key */
  char seen[2048]; /* " key key ..." */
};

static int
fault_keys_seen (const char *filename, int lineno, const char *key,
                 struct fault_lines *fl, struct fm_err *err)
{
  char pat[80];

  /* seen reads " k1 k2 ... ": every key between spaces. */
  snprintf (pat, sizeof pat, " %s ", key);
  if (strstr (fl->seen, pat))
    return fm_fail (err, "%s:%d: %s: set twice", filename, lineno, key);
  if (fl->seen[0] == '\0')
    fl->seen[0] = ' ';
  if (strlen (fl->seen) + strlen (pat) < sizeof fl->seen)
    strcat (fl->seen, pat + 1);
  if (strcmp (key, "faults") == 0) {
    if (fl->first)
      return fm_fail (err,
                      "%s:%d: faults: a preset must come before the fault "
                      "keys it would replace (line %d)",
                      filename, lineno, fl->first);
    fl->preset = lineno;
  } else if (!fl->first)
    fl->first = lineno;
  return 0;
}

/* Defaults for a file without `base`: what most rotating disks share. */
static void
file_defaults (struct fm_profile *p)
{
  memset (p, 0, sizeof *p);
  p->kind = FM_KIND_HDD;
  p->sector = 4096;
  p->zone_ratio = 2.0;
  p->zones = 24;
  p->heads = 4;
  p->write_settle_t2t_ns = 100000;
  p->write_settle_ns = 1000000;
  p->track_switch_ns = 1000000;
  p->command_ns = 100000;
  p->queue_depth = 32;
  p->queue_age_ns = 500000000;
  p->write_entries = 128;
  p->smr_direct_bytes = 256 << 10;
  p->smr_idle_ns = 1000000000;
  fm_faultset_defaults (&p->faults);
}

/* A profile file being read: where we are, and what each line set. */
struct parse {
  const char *filename;
  int lineno;
  int lines[N_KEYS]; /* the line that set each key, 0 if none */
  struct fault_lines fault_lines;
  bool have_base;
  struct fm_profile p;
};

/* Split one line into key and value (a value may be "quoted"; # starts
 * a comment).  *key is NULL for a blank or comment line.
 */
static int
split_line (struct parse *ps, char *line, char **key, char **val,
            struct fm_err *err)
{
  char *eq, *k = fm_trim (line), *v;
  const char *why;

  *key = NULL;
  if (*k == '\0' || *k == '#')
    return 0;
  eq = strchr (k, '=');
  if (eq == NULL)
    return fm_fail (err, "%s:%d: expected 'key = value', got '%s'",
                    ps->filename, ps->lineno, k);
  *eq = '\0';
  k = fm_trim (k);
  v = fm_value (fm_trim (eq + 1), &why);
  if (v == NULL)
    return fm_fail (err, "%s:%d: %s: %s", ps->filename, ps->lineno, k, why);
  if (*k == '\0')
    return fm_fail (err, "%s:%d: missing key before '='", ps->filename,
                    ps->lineno);
  *key = k;
  *val = v;
  return 0;
}

/* A derived built-in is the profile file "base = BASE", "name = NAME",
 * then its keys: resolved by the parser below, as a user's file with a
 * base is.
 */
static int
derive (const struct builtin *b, struct fm_profile *out, struct fm_err *err)
{
  char text[4096], what[96];
  int n;

  n = snprintf (text, sizeof text, "base = %s\nname = %s\n%s", b->base,
                b->p.name, b->keys);
  if (n < 0 || (size_t)n >= sizeof text)
    abort (); /* the table's own text: a larger buffer is the fix */
  snprintf (what, sizeof what, "built-in profile %s", b->p.name);
  return fm_profile_parse (what, text, (size_t)n, out, err);
}

int
fm_profile_builtin (const char *name, struct fm_profile *out,
                    struct fm_err *err)
{
  const struct builtin *b = fm_builtin_find (name);
  char list[512] = "";
  const char *n;
  size_t i;

  if (b && b->base)
    return derive (b, out, err);
  if (b) {
    /* The table gives each disk's error recovery; the rest of its fault
     * settings are the quiet defaults.
     */
    *out = b->p;
    fm_faultset_defaults (&out->faults);
    if (b->p.faults.erc_ns)
      out->faults.erc_ns = b->p.faults.erc_ns;
    return 0;
  }
  for (i = 0; (n = fm_profile_builtin_name (i)) != NULL; i++) {
    if (i > 0)
      strncat (list, ", ", sizeof list - strlen (list) - 1);
    strncat (list, n, sizeof list - strlen (list) - 1);
  }
  return fm_fail (err, "unknown profile '%s' (built-in profiles: %s)", name,
                  list);
}

/* base = NAME: a built-in profile to start from, before any other key. */
static int
take_base (struct parse *ps, const char *val, struct fm_err *err)
{
  struct fm_err e;
  size_t i;

  if (ps->have_base)
    return fm_fail (err, "%s:%d: base: set twice", ps->filename, ps->lineno);
  for (i = 0; i < N_KEYS; i++)
    if (ps->lines[i])
      return fm_fail (err,
                      "%s:%d: base: must come before every other key "
                      "(%s is set on line %d)",
                      ps->filename, ps->lineno, profile_keys[i].key,
                      ps->lines[i]);
  if (fm_profile_builtin (val, &ps->p, &e) == -1)
    return fm_fail (err, "%s:%d: base: %s", ps->filename, ps->lineno, e.msg);
  ps->have_base = true;
  return 0;
}

static int
take_key (struct parse *ps, const char *key, const char *val,
          struct fm_err *err)
{
  struct fm_err e;
  int k;

  if (strcmp (key, "base") == 0)
    return take_base (ps, val, err);
  k = key_index (key);
  if (k == -1 && fm_faultset_is_key (key)) {
    if (fault_keys_seen (ps->filename, ps->lineno, key, &ps->fault_lines,
                         err) == -1)
      return -1;
    if (*val == '\0')
      return fm_fail (err, "%s:%d: %s: empty value", ps->filename, ps->lineno,
                      key);
    if (fm_faultset_set (&ps->p.faults, key, val, &e) == -1)
      return fm_fail (err, "%s:%d: %s", ps->filename, ps->lineno, e.msg);
    return 0;
  }
  if (k == -1)
    return fm_fail (err, "%s:%d: unknown key '%s' (see PROFILES.md)",
                    ps->filename, ps->lineno, key);
  if (ps->lines[k])
    return fm_fail (err, "%s:%d: %s: set twice (first on line %d)",
                    ps->filename, ps->lineno, key, ps->lines[k]);
  if (*val == '\0')
    return fm_fail (err, "%s:%d: %s: empty value", ps->filename, ps->lineno,
                    key);
  if (set_key (&ps->p, &profile_keys[k], val, &e) == -1)
    return fm_fail (err, "%s:%d: %s: %s", ps->filename, ps->lineno, key, e.msg);
  ps->lines[k] = ps->lineno;
  return 0;
}

/* Every key of `req` set in the file (with a base, all but the name
 * may come from it).
 */
static int
require (const struct parse *ps, const char *const *req, struct fm_err *err)
{
  for (; *req; req++)
    if (!ps->lines[key_index (*req)] &&
        !(ps->have_base && strcmp (*req, "name")))
      return fm_fail (err, "%s: missing required key '%s'", ps->filename, *req);
  return 0;
}

/* After the last line: the required keys, no rotating-disk key on an SSD
 * and no shingled-disk key on any other kind.
 */
static int
finish (struct parse *ps, struct fm_err *err)
{
  static const char *const required_hdd[] = {
      "name",        "capacity",    "rpm",          "bandwidth_mbps",
      "seek_t2t_ms", "seek_avg_ms", "seek_full_ms", NULL};
  static const char *const required_ssd[] = {"name", "capacity", NULL};
  static const char *const required_smr[] = {"smr_cache", "smr_band", NULL};
  const char *const *req;
  size_t i;

  /* A file that sets a capacity describes a disk of that capacity. */
  if (ps->lines[key_index ("capacity")])
    ps->p.design_capacity = ps->p.capacity;
  req = fm_profile_rotating (&ps->p) ? required_hdd : required_ssd;
  if (require (ps, req, err) == -1 ||
      (ps->p.kind == FM_KIND_SMR && require (ps, required_smr, err) == -1))
    return -1;
  for (i = 0; i < N_KEYS; i++)
    if (ps->lines[i] && smr_only (&profile_keys[i]) &&
        ps->p.kind != FM_KIND_SMR)
      return fm_fail (err,
                      "%s:%d: %s: only a shingled disk (kind = smr) has "
                      "this",
                      ps->filename, ps->lines[i], profile_keys[i].key);
  if (ps->p.kind == FM_KIND_SSD)
    for (i = 0; i < N_KEYS; i++)
      if (ps->lines[i] && profile_keys[i].hdd_only)
        return fm_fail (err,
                        "%s:%d: %s: only a rotating disk (kind = hdd) "
                        "has this",
                        ps->filename, ps->lines[i], profile_keys[i].key);
  return 0;
}

int
fm_profile_parse (const char *filename, const char *text, size_t len,
                  struct fm_profile *out, struct fm_err *err)
{
  struct parse ps = {.filename = filename};
  struct origin o = {filename, ps.lines};
  size_t pos = 0;

  file_defaults (&ps.p);
  while (pos < len) {
    char line[1024], *key, *val;
    size_t n = 0;

    ps.lineno++;
    while (pos < len && text[pos] != '\n') {
      if (text[pos] == '\0')
        return fm_fail (err, "%s:%d: NUL byte in a profile file", filename,
                        ps.lineno);
      if (n + 1 >= sizeof line)
        return fm_fail (err, "%s:%d: line longer than %zu characters", filename,
                        ps.lineno, sizeof line - 2);
      line[n++] = text[pos++];
    }
    pos++; /* the newline */
    line[n] = '\0';
    if (split_line (&ps, line, &key, &val, err) == -1 ||
        (key && take_key (&ps, key, val, err) == -1))
      return -1;
  }
  if (finish (&ps, err) == -1 || check (&ps.p, &o, err) == -1)
    return -1;
  *out = ps.p;
  return 0;
}
