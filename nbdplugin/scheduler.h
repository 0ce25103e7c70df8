/* futuredisk — nbdplugin: when the drive decides.
 *
 * Every request waits in the drive's queue (faultmodels' fm_disk) until
 * the drive picks it.  This file holds the waiting: which thread keeps
 * the clock, when a decision is due, and waking the requests it took.
 * The request's own work when it is picked (faults, the write cache,
 * the counters) is the caller's, through sched_ops.serve: the scheduler
 * never calls up into the emulator.
 *
 * All calls but sched_new and sched_free are made with the caller's
 * lock held (the one given to sched_new), which sched_wait drops while
 * it sleeps.
 */
#ifndef FUTUREDISK_SCHEDULER_H
#define FUTUREDISK_SCHEDULER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client.h"
#include "faultmodels/disk.h"

struct sched;

/* The default grace [E]: long enough for the requests a client sends
 * together to reach the plugin, short against any disk's service.
 */
#define SCHED_GRACE_NS 50000

/* One request waiting in the drive, embedded in the caller's request;
 * its fields are the scheduler's.  Its address is the tag the request
 * was queued with (fm_disk_enqueue).
 */
struct sched_waiter {
  bool decided;  /* the drive picked it and serve ran */
  uint32_t wake; /* its own futex word */
  struct sched_waiter *next, **prevp;
};

struct sched_ops {
  /* The drive picked w, with timing t: do its work.  Lock held. */
  void (*serve) (void *opaque, struct sched_waiter *w,
                 const struct fm_timing *t);
  /* The scaled modes: the virtual time at wall time `wall`, and the
   * wall time a reply completing at virtual time v is held to.
   */
  uint64_t (*virtual_at) (void *opaque, uint64_t wall);
  uint64_t (*wall_at) (void *opaque, uint64_t v);
};

struct sched_config {
  struct fm_disk *disk;
  pthread_mutex_t *lock;
  bool reorders;              /* the drive reorders its queue at all */
  size_t window;              /* the drive's queue depth */
  uint64_t grace_ns;          /* wall ns; 0: SCHED_GRACE_NS */
  uint64_t (*wall_ns) (void); /* the caller's wall clock (tests own one) */
  const struct sched_ops *ops;
  void *opaque;
  /* The client, watched in virtual mode (client.h); NULL: none, the
   * grace decides.  Not owned.
   */
  struct client *client;
};

/* Virtual mode's decisions, by what let the drive take them. */
struct sched_stats {
  uint64_t picks;     /* requests picked */
  uint64_t watched;   /* ... once the client was seen quiet */
  uint64_t ahead;     /* ... once its clock had passed the decision */
  uint64_t impatient; /* times the client stayed busy past the patience */
};

extern void sched_stats (const struct sched *s, struct sched_stats *st);
extern void sched_stats_clear (struct sched *s);

extern struct sched *sched_new (const struct sched_config *cfg);
extern void sched_free (struct sched *s);

/* The time mode changed: virtual (scale 0) or scaled. */
extern void sched_set_scale (struct sched *s, double scale);

/* A request entered the plugin's request path (arrival to return); a
 * request is on its way to the lock (a write from before it prepares
 * its store pages), and it holds the lock.  Atomic: no lock needed.
 */
extern void sched_enter (struct sched *s);
extern void sched_arriving (struct sched *s);
extern void sched_arrived (struct sched *s);

/* w was just queued in the drive (lock held): wait until the drive has
 * picked it.  Returns true with the lock still held, or false without
 * it: another thread's decision took w out of the drive.
 */
extern bool sched_wait (struct sched *s, struct sched_waiter *w);

/* A request's reply is about to go (no lock needed). */
extern void sched_leave (struct sched *s);

/* The scaled modes: how many decisions the drive may take now, ahead of
 * the wall clock, with `queued` requests in its queue, a window of
 * `window` (the profile's queue depth) and `inflight` requests in the
 * plugin.  Early only while no later arrival could be a candidate: the
 * drive serves in arrival order, the request is alone, or the window
 * stays full, so that each pick chooses among `window` requests however
 * deep the client's queue is.  SIZE_MAX: all of them.
 */
extern size_t sched_early_decisions (size_t queued, size_t window,
                                     bool reorders, uint64_t inflight);

#endif
