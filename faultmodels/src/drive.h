/* futuredisk — faultmodels: the inside of struct drive (private), the
 * single-actuator drive of single.h.
 *
 * Layered, each calling only those below it: mech.c (positioning and
 * transfer), smr.c (the media cache and bands of a shingled disk),
 * readcache.c (the read buffer), destage.c (the write path), then disk.c
 * (the request path) and queue.c (the command queue).  They see the
 * drive through this header; nothing outside src/ does.
 */
#ifndef FAULTMODELS_DRIVE_H
#define FAULTMODELS_DRIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "faultmodels/disk.h"
#include "faultmodels/geometry.h"
#include "faultmodels/seek.h"
#include "runs.h"
#include "single.h"

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

/* Remembered locations of dirty extents (destage.c): a power of two. */
#define MEMO_SLOTS 128

/* One segment of the read buffer: a circular buffer holding the sectors
 * [start, end) of the disk, of which only the last seg_sectors stay.
 */
struct segment {
  bool valid;
  uint32_t prev, next; /* the LRU ring: next is less recently used */
  uint64_t start, end;
};

/* The read buffer: the profile's buffer cut into segments.  At most one
 * segment is reading ahead (one head): while it does, its `end` is where
 * the stream was at time t, and it grows at media speed up to `cap`.
 */
struct rcache {
  struct segment *seg;
  uint32_t n;
  uint64_t seg_sectors; /* what one segment holds */
  uint64_t pf_max;      /* prefetch after a read: readahead, within a segment */
  uint64_t pf_min;      /* read ahead even when another command arrives */
  int ra;               /* the segment reading ahead, -1 if none */
  uint64_t t;           /* the stream was at seg[ra].end at this time */
  uint64_t cap;         /* read-ahead stops here (exclusive) */
  uint64_t floor;       /* ... and always gets this far */
  uint64_t head_free;   /* a stopped stream holds the head until then */
  uint32_t mru;         /* most recently used; its prev is the LRU one */
  /* Which 1/4096ths of the disk the settled segments touch (rc_summarize),
   * so that the scheduler rules most reads out with one bit test.
   */
  uint64_t summary[64];
  unsigned shift; /* a sector's region: lba >> shift */
};

/* Where the time of one request went. */
struct acct {
  uint64_t seek, rotation, transfer, destage;
  uint32_t seeks;
};

/* A request waiting in the drive, with where it starts on the media. */
struct queued {
  struct fm_request rq;
  uint64_t tag;
  uint64_t entered;       /* when it got into the drive's window (age counts) */
  uint64_t lba;           /* first sector, clipped */
  uint64_t n;             /* sectors */
  struct fm_location loc; /* where lba is (rotating disks; n > 0) */
};

/* Requests in arrival order; the drive looks at the first `depth`. */
struct queue {
  struct queued *v;
  size_t n, alloc;
};

struct drive {
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

  struct rcache rc;

  /* Write-back cache: the dirty sectors, as merged runs, and the bytes
   * of those the cache holds only part of (runs in bytes): destaging one
   * of these costs a read-modify-write.
   */
  struct fm_runs dirty;
  struct fm_runs partial;
  /* The persistent media cache: staged write-through writes (destage.c). */
  struct fm_runs staged;
  /* Where the first sectors of dirty extents are: a destage prices each
   * candidate, flush after flush, and locating is the dearest part.
   */
  struct memo {
    uint64_t lba;   /* UINT64_MAX: empty */
    uint64_t angle; /* of its sector */
    struct fm_location loc;
  } memo[MEMO_SLOTS];
  uint64_t wc_busy;   /* a destage holds the head until then */
  uint64_t media_end; /* the host's last use of the media ended then */

  fm_destage_fn *on_destage;
  void *on_destage_opaque;

  struct fm_smr *smr; /* NULL unless kind smr */

  /* Where idle time went (destage), charged to the next request. */
  struct acct idle;

  /* The command queue (queue.c). */
  struct queue q;
};

static inline uint64_t
max64 (uint64_t a, uint64_t b)
{
  return a > b ? a : b;
}

/* Are sectors [lba, lba+n) all dirty in the write cache?  Here, not in
 * destage.c, so that the read buffer below the write path can ask.
 */
static inline bool
drv_dirty_covers (const struct drive *d, uint64_t lba, uint64_t n)
{
  size_t i = fm_runs_find (&d->dirty, lba);

  return i < d->dirty.n && d->dirty.v[i].first <= lba &&
         d->dirty.v[i].first + d->dirty.v[i].n >= lba + n;
}

/* ---- mechanics (mech.c) ---- */

/* Time for `bytes` at `bw` bytes/s, rounded up to whole ns. */
extern uint64_t drv_bytes_time (uint64_t bytes, uint64_t bw);

/* Bus time of `sectors` sectors. */
extern uint64_t drv_bus_time (const struct drive *d, uint64_t sectors);

/* The platter's angle at time t, and that of loc's sector (R_UNITS a
 * revolution).
 */
extern uint64_t drv_angle_at (const struct drive *d, uint64_t t);
extern uint64_t drv_sector_angle (const struct drive *d,
                                  const struct fm_location *loc);

/* How long the arm takes to reach loc's track (a seek with its settle,
 * a head switch, or nothing); *seek says whether the arm moves.
 */
extern uint64_t drv_arm_time (const struct drive *d,
                              const struct fm_location *loc, bool write,
                              bool *seek);

/* Rotational wait at time t until loc's sector is under the head. */
extern uint64_t drv_rot_wait (const struct drive *d, uint64_t t,
                              const struct fm_location *loc);

/* Time for `n` sectors of a track of `spt` to pass under the head. */
extern uint64_t drv_sectors_time (const struct drive *d, uint64_t n,
                                  uint32_t spt);

extern void drv_locate (const struct drive *d, uint64_t lba,
                        struct fm_location *loc);
extern void drv_put_head (struct drive *d, const struct fm_location *loc,
                          uint64_t lba);

/* Move the arm to loc and wait for its sector; returns the time then. */
extern uint64_t drv_position (struct drive *d, uint64_t t,
                              const struct fm_location *loc, bool write,
                              struct acct *a);

/* What drv_position would take from t, without moving anything; or
 * UINT64_MAX as soon as it is clear it takes `bound` or more.
 */
extern uint64_t drv_price (const struct drive *d, uint64_t t,
                           const struct fm_location *loc, bool write,
                           uint64_t bound);

/* Transfer n sectors from loc, the head over it at time t; returns the
 * end time and leaves the head after the last sector.
 */
extern uint64_t drv_transfer (struct drive *d, uint64_t t,
                              struct fm_location loc, uint64_t n,
                              struct acct *a);

/* Position and transfer: one media access. */
extern uint64_t drv_mechanical (struct drive *d, uint64_t t, uint64_t lba,
                                uint64_t n, bool write, struct acct *a);

/* ---- the request path (disk.c) ---- */

/* The drive was idle until `until`: destage meanwhile, none starting at
 * or after `read_at` (a read waiting).
 */
extern void drv_idle (struct drive *d, uint64_t until, uint64_t read_at);

/* ---- the write path (destage.c) ---- */

/* Where a write goes: the volatile cache, the media cache, or home. */
enum wc_path {
  WC_CACHE,
  WC_STAGE,
  WC_MEDIA
};

/* Which path a write of [lba, lba+n) with `flags` takes, and whether its
 * set has room for it now (*room false: it waits for destages first).
 */
extern enum wc_path wc_path (const struct drive *d, uint64_t lba, uint64_t n,
                             unsigned flags, bool *room);

/* [lba, lba+n) is trimmed or written home: no cached copy is due. */
extern void wc_forget (struct drive *d, uint64_t lba, uint64_t n);

/* Destage in the background on the head's free time before `until`, none
 * starting at or after `read_at`.
 */
extern void wc_background (struct drive *d, uint64_t until, uint64_t read_at);

/* A write of sectors [lba, lba+n), which rq's bytes touch, its command
 * starting at t.  Returns its completion; *cached if the volatile cache
 * holds it.
 */
extern uint64_t wc_write (struct drive *d, uint64_t lba, uint64_t n,
                          const struct fm_request *rq, uint64_t t,
                          struct acct *a, bool *cached);

/* Destage the whole volatile cache from time t; returns when done. */
extern uint64_t wc_flush (struct drive *d, uint64_t t, struct acct *a);

/* Serve one request starting at time t (>= its arrival, >= t_free). */
extern void drv_serve (struct drive *d, const struct fm_request *rq, uint64_t t,
                       struct fm_timing *out);

/* ---- the read buffer (readcache.c) ---- */

/* Cut the buffer into segments (after ra_sectors is set); rc_free undoes
 * it.  -1 with err if out of memory.
 */
extern int rc_init (struct drive *d, struct fm_err *err);
extern void rc_free (struct drive *d);

/* A read of [lba, lba+n) that arrived at t (command overhead not yet
 * paid): served from a segment, riding the read-ahead, or from the
 * media.  Returns the completion time; *hit says the buffer served it.
 */
extern uint64_t rc_read (struct drive *d, uint64_t lba, uint64_t n, uint64_t t,
                         struct acct *a, bool *hit);

/* Would a read of [lba, lba+n) arriving at time t need no positioning:
 * its data in a segment or the write cache, or on the read-ahead the head
 * is already doing, once the command overhead has passed (as rc_read
 * asks)?  (The queue's scheduler prices such reads at zero.)
 * No side effects: the LRU order is not touched.
 */
extern bool rc_ready (const struct drive *d, uint64_t lba, uint64_t n,
                      uint64_t t);

/* The scheduler prices every queued read at every decision: rc_summarize
 * takes a summary of the buffer, and until the buffer next changes
 * rc_maybe answers false only where rc_ready would — in one bit test for
 * most reads.
 */
extern void rc_summarize (struct drive *d);
extern bool rc_maybe (const struct drive *d, uint64_t lba, uint64_t n);

/* The head is needed elsewhere at time t: stop reading ahead.  Returns
 * when the head is free, later than t while the minimum prefetch is still
 * being read.
 */
extern uint64_t rc_stop (struct drive *d, uint64_t t);

/* [lba, lba+n) is being written at time t: a new command, so the
 * read-ahead stops; the written data stays in a segment for later reads
 * and every other copy of it is dropped.
 */
extern void rc_written (struct drive *d, uint64_t lba, uint64_t n, uint64_t t);

/* Forget everything buffered (power cut, error recovery). */
extern void rc_forget (struct drive *d);

/* ---- shingled media (smr.c), for kind smr ---- */

/* Build the media cache and band state of d (d->g set); -1 with err. */
extern int smr_new (struct drive *d, struct fm_err *err);
extern void smr_free (struct fm_smr *s);

/* Tag of a write-cache run: a host write of n sectors that the drive
 * will log in its media cache whatever it is merged with (a small one).
 */
extern int smr_tag (const struct drive *d, uint64_t n);

/* Write [lba, lba+n) to the media from time t, `tag` as smr_tag gave
 * it: to the media cache or straight to its band, cleaning first if
 * the cache is full.  Returns the time it is done.
 */
extern uint64_t smr_write (struct drive *d, uint64_t t, uint64_t lba,
                           uint64_t n, int tag, struct acct *a);

/* Read [lba, lba+n) from the media from time t, each piece from where its
 * newest copy is.  Returns the time it is done.
 */
extern uint64_t smr_read (struct drive *d, uint64_t t, uint64_t lba, uint64_t n,
                          struct acct *a);

/* When the cleaning smr_idle (same arguments) would do first needs the
 * head, UINT64_MAX if never: the caller stops the read-ahead then, as
 * this layer does not reach the read buffer above it.  Every other media
 * access here comes after the read-ahead has stopped.
 */
extern uint64_t smr_idle_head (const struct drive *d, uint64_t t,
                               uint64_t until);

/* The drive is idle from t until a request arrives at `until`: clean
 * bands after the idle delay.  Returns when the drive is free again.
 */
extern uint64_t smr_idle (struct drive *d, uint64_t t, uint64_t until,
                          struct acct *a);

#endif
