/* futuredisk — faultmodels: disk profiles.
 *
 * A profile is the datasheet of one disk: capacity, rotation, zoned
 * bandwidth, the three seek numbers, overheads and caches.  It is a plain
 * value (copy it freely); the models built from it (geometry, disk) are
 * opaque.  Built-in profiles carry their sources; users describe their own
 * disks in profile files (format in faultmodels/PROFILES.md).
 */
#ifndef FAULTMODELS_PROFILE_H
#define FAULTMODELS_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "faultmodels/error.h"
#include "faultmodels/faultset.h"

enum fm_kind {
  FM_KIND_HDD, /* rotating: seeks, rotation, zones, head switches */
  FM_KIND_SSD, /* fixed latency plus transfer; no mechanics */
  FM_KIND_SMR, /* rotating, drive-managed shingled: a media cache and bands */
};

struct fm_profile {
  char name[64];
  char description[160];
  char sourced[640];   /* which numbers come from a source, and which */
  char estimated[640]; /* which numbers are our estimates */
  /* The host a checker of this disk is taken to run on (a name of the
   * harness's host table, common/host.c); "": none said.
   */
  char host[32];

  enum fm_kind kind;
  uint64_t capacity;        /* bytes the disk exposes (may be rescaled) */
  uint64_t design_capacity; /* bytes of the disk the mechanics describe */
  uint32_t sector;          /* physical sector, bytes (512 or 4096) */

  /* Sequential bandwidth, bytes/s, effective (after head-switch skew) and
   * averaged over the LBA range, so that a full sequential read takes
   * exactly design_capacity / bandwidth seconds.  0 = unlimited.
   */
  uint64_t bandwidth;
  uint64_t write_bandwidth; /* SSD only; 0 = same as bandwidth */

  /* HDD mechanics. */
  uint32_t rpm;
  double zone_ratio;  /* outer / inner bandwidth, >= 1 */
  uint32_t zones;     /* recording zones */
  uint32_t heads;     /* recording surfaces */
  uint32_t actuators; /* 2: each half of the LBAs has its own arm; 0 = 1 */
  uint64_t seek_t2t_ns, seek_avg_ns, seek_full_ns; /* read seeks */
  uint64_t seek_settle_ns;      /* floor of seeks past one cylinder; 0 = t2t */
  uint64_t write_settle_t2t_ns; /* a write's extra: one-cylinder seek */
  uint64_t write_settle_ns;     /* a write's extra: any longer seek */
  uint64_t track_switch_ns;     /* head or cylinder switch inside a transfer */

  /* Both kinds. */
  uint64_t command_ns; /* controller overhead per command */
  uint64_t read_latency_ns, write_latency_ns; /* SSD media latency */
  uint64_t interface_bw;       /* bytes/s over the bus; 0 = unlimited */
  uint64_t cache_bytes;        /* write-back cache; 0 = write-through */
  uint64_t readahead_bytes;    /* most read ahead after a read; 0 = none */
  uint32_t cache_segments;     /* the read buffer's segments; 0 = derived */
  uint64_t prefetch_min_bytes; /* read ahead even if a command arrives */

  /* The write path (HDD).  The volatile cache holds at most write_entries
   * dirty extents; a write past that waits for a destage.  With
   * media_cache_entries > 0 the drive stages small write-through (cache
   * off or FUA) writes in a persistent media cache of that many extents,
   * cleaned to their home in positioning-time order.  A staged write
   * appends to the media cache's log near the head: media_cache_ns and
   * its transfer, while the pool has room.
   */
  uint32_t write_entries;       /* dirty extents in the volatile cache */
  uint32_t media_cache_entries; /* staged extents; 0 = no media cache */
  uint64_t media_cache_ns;      /* one staged write; 0 = a one-cylinder seek */

  /* Command queueing (HDD): requests waiting inside the drive, served
   * shortest positioning time first, none waiting longer than queue_age.
   */
  uint32_t queue_depth;  /* 1 = no queue: arrival order */
  uint64_t queue_age_ns; /* the oldest goes next once it waited this */

  /* Drive-managed SMR (kind smr): small writes go to a persistent media
   * cache at the outer edge; bands are rewritten whole when it is cleaned.
   */
  uint64_t smr_cache_bytes;  /* persistent media cache */
  uint64_t smr_band_bytes;   /* shingled band: the unit of cleaning */
  uint64_t smr_direct_bytes; /* host writes this large may skip the cache */
  uint64_t smr_idle_ns;      /* idle time before cleaning starts */

  /* How the disk breaks: the fault keys a profile file may set. */
  struct fm_faultset faults;
};

/* Name of the i-th built-in profile, or NULL past the last one. */
extern const char *fm_profile_builtin_name (size_t i);

/* How the i-th built-in is defined: NULL for a disk given whole (and past
 * the last), else the built-in it derives from, with *keys set to the
 * profile-file lines it overrides that base with (PROFILES.md).
 */
extern const char *fm_profile_builtin_base (size_t i, const char **keys);

/* Copy the built-in profile `name` into *out.  Returns 0, or -1 naming the
 * unknown profile and listing the built-ins.
 */
extern int fm_profile_builtin (const char *name, struct fm_profile *out,
                               struct fm_err *err);

/* Parse a profile file already read into memory (the library does no I/O).
 * `filename` is used only in messages, which have the form
 * "FILE:LINE: KEY: problem".  Unset keys keep defaults, or inherit from
 * `base = NAME` when the file names a built-in to start from.
 */
extern int fm_profile_parse (const char *filename, const char *text, size_t len,
                             struct fm_profile *out, struct fm_err *err);

/* Name of the i-th key a profile file may set, or NULL past the last.
 * (Fault keys come on top: fm_faultset_key.)
 */
extern const char *fm_profile_key (size_t i);

/* The value of the i-th key in p, as a profile file would spell it
 * (exactly: it parses back to the same value).  Returns snprintf's count,
 * or -1 past the last key.
 */
extern int fm_profile_key_value (const struct fm_profile *p, size_t i,
                                 char *buf, size_t size);

/* Drive parameters: the profile keys the plugin also takes, spelled with
 * '-' for '_' (queue_depth = 32 in a file is queue-depth=32 for nbdkit),
 * with the same values and checks.  fm_profile_param names the i-th into
 * buf (NULL past the last); fm_profile_set_param sets one, -1 with err
 * "PARAM: problem"; fm_profile_validate afterwards checks the whole.
 */
extern const char *fm_profile_param (size_t i, char *buf, size_t size);
extern bool fm_profile_is_param (const char *param);
extern int fm_profile_set_param (struct fm_profile *p, const char *param,
                                 const char *value, struct fm_err *err);

/* The read buffer (HDD): the larger of cache and readahead, cut into
 * fm_profile_segments segments: cache_segments, or if that is 0 as many
 * segments of `readahead` bytes as the buffer holds, 1 to 32.
 */
extern uint64_t fm_profile_buffer_bytes (const struct fm_profile *p);
extern uint32_t fm_profile_segments (const struct fm_profile *p);

/* Check every field and the seek curve; the parser and the built-in table
 * both end with this.  Returns 0 or -1 naming the field.
 */
extern int fm_profile_validate (const struct fm_profile *p, struct fm_err *err);

/* Rescale to `size` bytes: the bandwidth curve over the LBA fraction, the
 * seek curve over the stroke, rotation and caches stay; only the number of
 * tracks changes.  So a full read takes size / bandwidth.  `size` must be a
 * positive multiple of the sector.  A shingled disk's media cache keeps
 * its share of the disk (at least one band).
 */
extern int fm_profile_resize (struct fm_profile *p, uint64_t size,
                              struct fm_err *err);

/* Has the disk mechanics (seeks, rotation, zones)?  hdd and smr do. */
extern bool fm_profile_rotating (const struct fm_profile *p);

/* "hdd", "ssd" or "smr", as profile files spell the kind. */
extern const char *fm_profile_kind_name (enum fm_kind kind);

/* Derived numbers the model and its reports share. */
extern double fm_profile_rev_ns (const struct fm_profile *p);
extern double fm_profile_bw_outer (const struct fm_profile *p); /* bytes/s */
extern double fm_profile_bw_inner (const struct fm_profile *p);
/* The seek numbers of a rotating disk, for fm_seek_init. */
struct fm_seek_spec;
extern void fm_profile_seek_spec (const struct fm_profile *p,
                                  struct fm_seek_spec *spec);

#endif
