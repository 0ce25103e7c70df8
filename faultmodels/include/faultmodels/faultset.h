/* futuredisk — faultmodels: a disk's fault settings, their keys and presets.
 *
 * How a disk breaks is described by one plain value, struct fm_faultset,
 * set key by key from text.  The same keys, spelled the same way, are the
 * plugin's fault parameters (ber=1e-14), lines of a profile file
 * (ber = 1e-14) and the named presets (faults=consumer), so "start nbdkit
 * with a fault profile" is one word and no key is spelled two ways.
 * Rates are per bit read, per write, per sector per virtual hour, as each
 * key's help says; 0 turns a fault off.
 */
#ifndef FAULTMODELS_FAULTSET_H
#define FAULTMODELS_FAULTSET_H

#include <stddef.h>
#include <stdint.h>

#include "faultmodels/error.h"

struct fm_faultset {
  /* Unrecoverable read errors (datasheet URE, sticky per sector). */
  double ber;         /* per bit read */
  uint64_t erc_ns;    /* error recovery before a failing read's EIO */
  double ure_recover; /* chance a failing read succeeds on a retry */

  /* Retries that succeed, and the sectors that need them. */
  double retry_revs; /* mean retries (revolutions) a read that comes back
                        takes, geometric */
  double marginal;   /* share of 4 KiB blocks that read only on a retry */

  /* Latent sector errors (field model, episodes). */
  uint64_t age_ns;     /* modelled age of the disk at start */
  double lse;          /* chance per year of age the disk turns LSE-prone */
  double lse_alpha;    /* Pareto tail of errors per prone disk */
  uint64_t lse_min;    /* floor of that count */
  uint64_t lse_max;    /* ceiling of that count */
  double lse_burst;    /* mean sectors per episode (geometric) */
  uint64_t lse_spread; /* mean distance in a burst, bytes; 0: a track */
  double lse_head;     /* share of episodes centred in the first 10% */
  double lse_rate;     /* new episodes per virtual hour; < 0: the age's */

  /* Reallocation of bad sectors on rewrite. */
  double realloc;  /* chance a rewritten bad sector moves to a spare */
  uint64_t spares; /* spare sectors */

  /* Silent corruption. */
  double corrupt;    /* chance the disk suffers silent corruption at all */
  double flip_rate;  /* transient flips on the read path, per bit read */
  double rot_rate;   /* flips at rest, per sector per virtual hour */
  double stuck_bits; /* bits stuck at 0 or 1, per bit of the disk */
  double lost_write; /* chance a write is acknowledged, not done */
  double misdirected_write; /* chance a write lands near its target */

  /* Power and the whole disk. */
  double torn;         /* chance a cached write is torn by a power cut */
  uint64_t fail_at_ns; /* whole-disk failure; 0: never */
};

/* The quiet disk: every rate 0, erc 7 s, the field model's shapes. */
extern void fm_faultset_defaults (struct fm_faultset *f);

/* Set one key from text.  -1 with err "KEY: problem" for an unknown key
 * or a bad value.  The key "faults" applies a preset.
 */
extern int fm_faultset_set (struct fm_faultset *f, const char *key,
                            const char *value, struct fm_err *err);

/* Is `key` a fault key (or "faults")? */
extern int fm_faultset_is_key (const char *key);

/* The i-th key, its unit and its help line; NULL past the last. */
extern const char *fm_faultset_key (size_t i);
extern const char *fm_faultset_key_unit (size_t i);
extern const char *fm_faultset_key_help (size_t i);

/* Replace every rate with preset `name` (none, consumer, enterprise,
 * harsh; the table is in faultmodels/PROFILES.md).  `none` keeps erc.
 */
extern int fm_faultset_preset (struct fm_faultset *f, const char *name,
                               struct fm_err *err);
extern const char *fm_faultset_preset_name (size_t i);

/* The set as one JSON object (for stats and trial records). */
extern int fm_faultset_json (const struct fm_faultset *f, char *buf,
                             size_t len);

/* The chance the disk is LSE-prone at its age: 1 - (1 - lse)^years. */
extern double fm_faultset_lse_prone (const struct fm_faultset *f);

#endif
