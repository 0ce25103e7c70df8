/* futuredisk — faultmodels: the inside of struct fm_disk (private).
 *
 * disk.c owns the mechanics (positioning, transfer, the write-back cache
 * and the request path); readcache.c owns the drive's read buffer; smr.c
 * the media cache and bands of a shingled disk.  They see the drive
 * through this header; nothing outside src/ does.
 */
#ifndef FAULTMODELS_DRIVE_H
#define FAULTMODELS_DRIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "faultmodels/disk.h"
#include "faultmodels/geometry.h"
#include "faultmodels/seek.h"
#include "runs.h"

#define R_UNITS FM_ANGLE_UNITS

/* Well below one sector's time on any profile (1.5 us for 512 B sectors at
 * 333 MB/s) and far above the few ns of accumulated rounding.
 */
#define ANGLE_SLACK_NS 100

/* The drive starts background destage only after it has been idle this
 * long [E], so a busy host is not made to wait behind a destage that an
 * idle timer would never have started.
 */
#define IDLE_DESTAGE_NS 2000000ULL

struct stream {
  bool valid;         /* the segment holds data from a read */
  bool running;       /* still reading ahead (the head is on it) */
  uint64_t win_start; /* first sector still in the segment */
  uint64_t lba;       /* the stream had reached this sector ... */
  uint64_t t;         /* ... at this time */
  uint64_t cap;       /* read-ahead stops here (exclusive) */
};

struct fm_disk {
  struct fm_profile p;
  struct fm_disk_options o;
  struct fm_geometry *g; /* NULL for an SSD */
  struct fm_seek seek;
  uint64_t sectors;
  uint64_t phase0; /* platter angle at t = 0 */
  uint64_t ra_sectors, cache_sectors;
  uint64_t t_free; /* the drive is idle from here */

  /* The arm. */
  double head_pos; /* design cylinders */
  uint64_t head_cyl;
  uint32_t head_head;
  uint64_t head_lba; /* sector under the head after the last transfer */

  struct stream ra;

  /* Write-back cache: the dirty sectors, as merged runs. */
  struct fm_runs dirty;

  fm_destage_fn *on_destage;
  void *on_destage_opaque;

  struct fm_smr *smr; /* NULL unless kind smr */
};

/* Where the time of one request went. */
struct acct {
  uint64_t seek, rotation, transfer, destage;
  uint32_t seeks;
};

static inline uint64_t
max64 (uint64_t a, uint64_t b)
{
  return a > b ? a : b;
}

/* ---- mechanics (disk.c) ---- */

/* Bus time of `sectors` sectors. */
extern uint64_t drv_bus_time (const struct fm_disk *d, uint64_t sectors);

/* Rotational wait at time t until loc's sector is under the head. */
extern uint64_t drv_rot_wait (const struct fm_disk *d, uint64_t t,
                              const struct fm_location *loc);

/* Time for `n` sectors of a track of `spt` to pass under the head. */
extern uint64_t drv_sectors_time (const struct fm_disk *d, uint64_t n,
                                  uint32_t spt);

extern void drv_locate (const struct fm_disk *d, uint64_t lba,
                        struct fm_location *loc);
extern void drv_put_head (struct fm_disk *d, const struct fm_location *loc,
                          uint64_t lba);

/* Move the arm to loc and wait for its sector; returns the time then. */
extern uint64_t drv_position (struct fm_disk *d, uint64_t t,
                              const struct fm_location *loc, bool write,
                              struct acct *a);

/* Transfer n sectors from loc, the head over it at time t; returns the
 * end time and leaves the head after the last sector.
 */
extern uint64_t drv_transfer (struct fm_disk *d, uint64_t t,
                              struct fm_location loc, uint64_t n,
                              struct acct *a);

/* Position and transfer: one media access. */
extern uint64_t drv_mechanical (struct fm_disk *d, uint64_t t, uint64_t lba,
                                uint64_t n, bool write, struct acct *a);

/* Are sectors [lba, lba+n) all dirty in the write cache? */
extern bool drv_dirty_covers (const struct fm_disk *d, uint64_t lba,
                              uint64_t n);

/* ---- the read buffer (readcache.c) ---- */

/* A read of [lba, lba+n) that arrived at t (command overhead not yet
 * paid): served from the buffer, riding the read-ahead, or from the
 * media.  Returns the completion time; *hit says the buffer served it.
 */
extern uint64_t rc_read (struct fm_disk *d, uint64_t lba, uint64_t n,
                         uint64_t t, struct acct *a, bool *hit);

/* Would a read of [lba, lba+n) at time t need no positioning: its data
 * in the buffer or the write cache, or on the read-ahead the head is
 * already doing?  (The queue's scheduler prices such reads at zero.)
 */
extern bool rc_ready (const struct fm_disk *d, uint64_t lba, uint64_t n,
                      uint64_t t);

/* The head is needed elsewhere at time t: stop reading ahead. */
extern void rc_stop (struct fm_disk *d, uint64_t t);

/* [lba, lba+n) is being written at time t: the buffer's copy is stale. */
extern void rc_written (struct fm_disk *d, uint64_t lba, uint64_t n,
                        uint64_t t);

/* Forget everything buffered (power cut, error recovery). */
extern void rc_forget (struct fm_disk *d);

/* ---- shingled media (smr.c), for kind smr ---- */

/* Build the media cache and band state of d (d->g set); -1 with err. */
extern int smr_new (struct fm_disk *d, struct fm_err *err);
extern void smr_free (struct fm_smr *s);

/* Tag of a write-cache run: a host write of n sectors that the drive
 * will log in its media cache whatever it is merged with (a small one).
 */
extern int smr_tag (const struct fm_disk *d, uint64_t n);

/* Write [lba, lba+n) to the media from time t, `tag` as smr_tag gave
 * it: to the media cache or straight to its band, cleaning first if
 * the cache is full.  Returns the time it is done.
 */
extern uint64_t smr_write (struct fm_disk *d, uint64_t t, uint64_t lba,
                           uint64_t n, int tag, struct acct *a);

/* Read [lba, lba+n) from the media from time t, each piece from where its
 * newest copy is.  Returns the time it is done.
 */
extern uint64_t smr_read (struct fm_disk *d, uint64_t t, uint64_t lba,
                          uint64_t n, struct acct *a);

/* The drive is idle from t until a request arrives at `until`: clean
 * bands after the idle delay.  Returns when the drive is free again.
 */
extern uint64_t smr_idle (struct fm_disk *d, uint64_t t, uint64_t until,
                          struct acct *a);

#endif
