/* futuredisk — faultmodels: service time of one request.
 *
 * struct fm_disk is the state of one drive: where the arm is, the platter
 * phase, the segmented read buffer, the write-back cache, and the time at
 * which the drive becomes free.  Callers hand it requests with their
 * arrival time (virtual ns) and get back when each completes and where the
 * time went.
 * Time components may overlap (the bus runs while the media does), so they
 * need not add up to done_ns - start_ns; summed over a run they say where
 * the drive's time went.
 *
 * It does no I/O and keeps no data: the plugin stores bytes, the model says
 * how long moving them takes.  Not thread-safe: one actuator, one caller at
 * a time (the plugin serializes the model and copies data in parallel).
 *
 * What a request costs (one actuator, QD1; times in integer ns):
 *   - command overhead, always;
 *   - a read held by a segment of the read buffer (read ahead after an
 *     earlier read, or written) or by the write cache: the bus transfer
 *     only; a read continuing the stream the drive is still reading ahead
 *     on: the media time still to go, nothing more;
 *   - otherwise a mechanical access: seek (seek.h: a write's settles
 *     longer) or head switch, the rotational wait from the platter angle at
 *     that instant, then the transfer track by track with a track switch
 *     (absorbed by skew) at every boundary;
 *   - a write whose bytes do not cover whole physical sectors merges the
 *     ragged one on the media (512e read-modify-write): two revolutions
 *     more, when it is written through or when the cache destages a sector
 *     it holds only part of;
 *   - writes with the cache on complete after the bus transfer; dirty data
 *     is destaged in elevator order while the drive is idle, when the cache
 *     would overflow, and on FLUSH — each destage a real mechanical write;
 *   - FUA writes and writes with the cache off go straight to the media.
 */
#ifndef FAULTMODELS_DISK_H
#define FAULTMODELS_DISK_H

#include <stdbool.h>
#include <stdint.h>

#include "faultmodels/error.h"
#include "faultmodels/profile.h"

struct fm_disk;

enum fm_op {
  FM_OP_READ,
  FM_OP_WRITE,
  FM_OP_ZERO, /* writes zeroes: costs a write of the same length */
  FM_OP_TRIM, /* command overhead only; drops dirty cached data */
  FM_OP_FLUSH,
};

#define FM_REQ_FUA 1u /* write through to the media */

struct fm_request {
  enum fm_op op;
  unsigned flags;      /* FM_REQ_* */
  uint64_t offset;     /* bytes */
  uint64_t length;     /* bytes */
  uint64_t arrival_ns; /* virtual time the request reached the drive */
};

struct fm_timing {
  uint64_t start_ns;    /* the drive began this request (after queueing) */
  uint64_t done_ns;     /* completion */
  uint64_t queue_ns;    /* waited for earlier work, destage included */
  uint64_t overhead_ns; /* command overhead and bus transfer */
  uint64_t seek_ns;     /* arm movement, settle and head switches */
  uint64_t rotation_ns; /* waiting for the sector to come round */
  uint64_t transfer_ns; /* media transfer, track switches included */
  uint64_t destage_ns;  /* destage done since the previous request (idle
                         * or forced); overlaps queue_ns when forced */
  uint32_t seeks;       /* arm movements (destage included) */
  bool cache_hit;       /* served from read-ahead, stream or write cache */
  bool write_cached;    /* the write is in the volatile cache, not media */
};

/* How the drive picks the next request from its queue. */
enum fm_queue_policy {
  FM_QUEUE_SPTF, /* shortest positioning time first, with the age cap */
  FM_QUEUE_FIFO, /* arrival order (a drive without command queueing) */
};

/* Caches can be turned off for tests and for "caches off" experiments. */
struct fm_disk_options {
  bool read_cache;  /* read buffer (default on if profile reads ahead) */
  bool write_cache; /* write-back cache (default on if profile has one) */
  enum fm_queue_policy queue; /* default SPTF */
};

extern void fm_disk_default_options (const struct fm_profile *p,
                                     struct fm_disk_options *o);

/* Create the drive model.  The seed sets the initial platter angle.
 * Returns NULL with err filled on a bad profile or out of memory.
 */
extern struct fm_disk *fm_disk_new (const struct fm_profile *p, uint64_t seed,
                                    const struct fm_disk_options *o,
                                    struct fm_err *err);
extern void fm_disk_free (struct fm_disk *d);

extern const struct fm_profile *fm_disk_profile (const struct fm_disk *d);

/* Called whenever the model writes cached data to the media (idle
 * destage, cache overflow, FLUSH), with the byte range made durable, so
 * that whoever keeps the data can commit exactly what the drive did.
 * Called from inside fm_disk_submit.
 */
typedef void fm_destage_fn (void *opaque, uint64_t offset, uint64_t length);
extern void fm_disk_on_destage (struct fm_disk *d, fm_destage_fn *fn,
                                void *opaque);

/* Model one request.  Requests must arrive in non-decreasing arrival_ns
 * order; a request reaching past the end of the disk is clipped.
 */
extern void fm_disk_submit (struct fm_disk *d, const struct fm_request *rq,
                            struct fm_timing *t);

/* ---- command queueing ----
 *
 * A drive with a queue (profile queue_depth > 1) holds several requests
 * and serves next the one it can reach soonest: the shortest positioning
 * time — seek plus rotational wait from where the head will be — with a
 * read from the buffer or a write into the cache costing none.  Only the
 * first queue_depth requests in arrival order are inside the drive; the
 * rest wait in the host.  A request that has waited queue_age goes next
 * regardless, so none starves.  FLUSH is not queued (as on SATA): the
 * requests that arrived before it are served first, those after it wait
 * for it, so a flush covers every write that arrived before it.  The
 * choice depends only on the requests queued and their arrival times:
 * the same arrivals give the same schedule.
 *
 * Queue with fm_disk_enqueue; fm_disk_dispatch serves one request when
 * the drive's decision is due by `now` (pass UINT64_MAX to decide at
 * once with what is queued).  fm_disk_submit is enqueue-and-dispatch for
 * a caller with one request at a time.
 */

/* Queue a request; `tag` is the caller's, handed back by dispatch.
 * Arrivals must be non-decreasing.  Aborts only out of memory.
 */
extern void fm_disk_enqueue (struct fm_disk *d, const struct fm_request *rq,
                             uint64_t tag);

/* If the drive picks its next request by virtual time `now`, serve it:
 * true, with its tag and timing.  False if the queue is empty or the
 * decision falls after `now`.
 */
extern bool fm_disk_dispatch (struct fm_disk *d, uint64_t now, uint64_t *tag,
                              struct fm_timing *t);

/* When the next decision falls (UINT64_MAX with an empty queue). */
extern uint64_t fm_disk_next_decision (const struct fm_disk *d);

/* Requests queued and not yet served. */
extern size_t fm_disk_queued (const struct fm_disk *d);

/* The request just served took `ns` longer (a failing read's error
 * recovery): the drive stays busy that much longer.  Returns the new
 * completion time of that request.
 */
extern uint64_t fm_disk_extend (struct fm_disk *d, uint64_t ns);

/* The extra time an access to a reallocated sector at byte `offset`
 * costs: a seek to the spare area at the inner edge and back, and half a
 * revolution there.  0 for a disk without mechanics.
 */
extern uint64_t fm_disk_spare_detour (const struct fm_disk *d, uint64_t offset);

/* Virtual time at which the drive finishes everything accepted so far
 * (dirty data still in the cache is not counted: it is destaged later).
 */
extern uint64_t fm_disk_busy_until (const struct fm_disk *d);

/* Power is cut: everything in the write cache is lost.  Calls fn for each
 * dirty extent (bytes, ascending) before forgetting it, so the caller can
 * decide what reached the media; the drive comes back idle, caches empty.
 */
extern void fm_disk_powercut (struct fm_disk *d, fm_destage_fn *fn,
                              void *opaque);

/* Bytes of acknowledged writes not yet on the media. */
extern uint64_t fm_disk_dirty_bytes (const struct fm_disk *d);

/* A shingled disk's media cache: the bytes it holds now (live or
 * overwritten, until their band is cleaned), the virtual time spent
 * cleaning bands and how many were cleaned.  All 0 for other kinds.
 */
extern void fm_disk_smr_stats (const struct fm_disk *d, uint64_t *cache_bytes,
                               uint64_t *clean_ns, uint64_t *bands_cleaned);

#endif
