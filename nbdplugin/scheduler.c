/* futuredisk — nbdplugin: when the drive decides (see scheduler.h).
 *
 * In the scaled modes a decision is taken at its time — when the wall
 * clock reaches the moment the drive is free — so every request that
 * arrived by then is a candidate.  In virtual mode there is no such
 * moment, so a decision is taken once the arrivals have stopped for a
 * grace of wall time (cfg.grace_ns).  A request alone in the plugin is
 * decided at once in every mode: nothing could overtake it.  Nor can
 * anything overtake the requests in a full window (a later arrival
 * queues behind the ones waiting in the host), so in every mode the
 * picks that leave the window full are taken at once, and no more: a
 * client deeper than the drive's queue gets the drive's whole window at
 * every pick.
 *
 * Requests wait each on its own futex word (a decision wakes only the
 * requests it decided; one wake for all cost 5.5x the memory plugin's
 * CPU per request with 16 in flight).  The decision takes a decided
 * request out of the queue itself, so its thread leaves without the
 * lock (a condition variable would retake it, and wait for the decider
 * that holds it).  One waiter, the decider, keeps the clock: it alone
 * sleeps for a lull or a due time and takes the decisions then, and
 * passes the part on when it leaves.
 */
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "monotonic.h"
#include "scheduler.h"

#include <stdio.h>
#include <sys/prctl.h>

struct sched {
  struct fm_disk *disk;
  pthread_mutex_t *lock;
  const struct sched_ops *ops;
  void *opaque;
  uint64_t (*wall_ns) (void);
  uint64_t grace_ns;
  bool reorders; /* the drive reorders its queue at all */
  size_t window;
  double scale;

  struct sched_waiter *waiters; /* in the drive, oldest first */
  struct sched_waiter *decider; /* or NULL */
  uint64_t inflight;            /* requests between arrival and return;
                                 * atomic: the return drops it without
                                 * the lock */
  uint64_t arriving;            /* requests on their way to the lock
                                 * (and a write preparing its store
                                 * pages first); atomic */
  /* CLOCK_MONOTONIC time of the latest arrival, decision or (virtual
   * mode) reply; atomic: a reply stores it without the lock.
   */
  uint64_t last_event;
  /* Virtual mode: whether the client sends requests together (decisions
   * then wait for the batch), waits since the last one that found
   * company, and requests since the last probe for it.
   */
  bool batching;
  unsigned misses, since_probe;
  /* While batching: the requests a lull found queued (the client's depth,
   * as far as it reaches the drive).  A queue back at that depth is
   * decided at once: the lull would bring no one else.  Every
   * DEPTH_PROBE_EVERY-th decision waits for the lull again, to learn a
   * new depth.
   */
  size_t depth;
  unsigned since_lull;
  /* Virtual mode: the mean wall time from one event (last_event) to the
   * next arrival while others are in the plugin.
   */
  uint64_t gap_ns;

  /* Virtual mode: the client the drive waits for (client.h), or NULL;
   * whether the decider polls it, and how often; since when (wall ns)
   * it has been busy, and whether it was busy so long that the grace
   * decides until it is next seen quiet.
   */
  struct client *client;
  bool polling;
  uint64_t poll_ns, busy_since;
  uint64_t kernel_since; /* since when the kernel holds a loop request */
  bool impatient;
  struct sched_stats st;
};

struct sched *
sched_new (const struct sched_config *cfg)
{
  struct sched *s = calloc (1, sizeof *s);

  if (s == NULL)
    return NULL;
  s->disk = cfg->disk;
  s->lock = cfg->lock;
  s->ops = cfg->ops;
  s->opaque = cfg->opaque;
  s->wall_ns = cfg->wall_ns ? cfg->wall_ns : fd_monotonic_ns;
  s->grace_ns = cfg->grace_ns ? cfg->grace_ns : SCHED_GRACE_NS;
  s->reorders = cfg->reorders;
  s->window = cfg->window;
  s->client = cfg->client;
  return s;
}

void
sched_free (struct sched *s)
{
  free (s);
}

void
sched_set_scale (struct sched *s, double scale)
{
  s->scale = scale;
}

void
sched_enter (struct sched *s)
{
  __atomic_add_fetch (&s->inflight, 1, __ATOMIC_RELAXED);
}

void
sched_arriving (struct sched *s)
{
  __atomic_add_fetch (&s->arriving, 1, __ATOMIC_RELAXED);
}

void
sched_arrived (struct sched *s)
{
  __atomic_sub_fetch (&s->arriving, 1, __ATOMIC_RELAXED);
}

/* Take the decisions due by virtual time `now`, at most `most` of them;
 * in virtual mode only until `mine` is decided, so the rest stay queued
 * for later arrivals to join.  Lock held.
 */
static void waiter_left (struct sched *s, struct sched_waiter *j);

static void
decide (struct sched *s, uint64_t now, const struct sched_waiter *mine,
        unsigned most)
{
  struct fm_timing t;
  uint64_t tag;
  unsigned n = 0;

  while (n < most && !(s->scale == 0 && mine->decided) &&
         fm_disk_dispatch (s->disk, now, &tag, &t)) {
    struct sched_waiter *j = (struct sched_waiter *)(uintptr_t)tag;
    s->ops->serve (s->opaque, j, &t);
    j->decided = true;
    if (j != mine)
      waiter_left (s, j);
    n++;
  }
  if (s->scale == 0)
    s->st.picks += n;
}

/* Could a later arrival still be picked before the drive's next
 * decision (it reorders, and its window has room)?  Lock held.
 */
static bool
reorderable (const struct sched *s)
{
  return s->reorders && fm_disk_queued (s->disk) < s->window;
}

static bool
company_possible (const struct sched *s)
{
  return __atomic_load_n (&s->inflight, __ATOMIC_RELAXED) > 1 &&
         reorderable (s);
}

size_t
sched_early_decisions (size_t queued, size_t window, bool reorders,
                       uint64_t inflight)
{
  if (!reorders || inflight <= 1)
    return SIZE_MAX;
  /* Each early pick must leave the window full for the next: the
   * request after the window moves into it and a later arrival stays
   * behind it.  The first pick past that would choose among fewer.
   */
  return queued >= window ? queued - window + 1 : 0;
}

/* Virtual mode: should a new request's decision wait for others sent with
 * it?  A reply goes out the moment its request is decided, so a client's
 * requests reach the plugin one after another unless a decision waits:
 * once a wait has found company, every decision waits (batching); after
 * BATCH_MISSES waits that found none, none does — but every
 * PROBE_EVERY-th request waits again, to notice a client that started
 * sending requests together.  A client with one request at a time pays
 * the grace once per PROBE_EVERY requests.  A request that finds the
 * drive's window full waits too: decide_due takes at once only the picks
 * that keep the window full.  While batching, a decision waits for a lull
 * of the grace (an arrival, a decision or a reply restarts it), so the
 * reply a decision lets go can bring the client's next request into the
 * queue first, as it would reach a real drive's queue while the drive
 * served the one before.  The lull also tells the client's depth: once
 * the queue is back at it, DEPTH_BATCH decisions are taken at once with
 * no lull (one would serialise the client: a single request in transit at
 * a time), and short of it the lull is DEPTH_LULL graces; every
 * DEPTH_PROBE_EVERY-th decision waits a lull to learn the depth again.
 * No lull ends while a decided request has yet to reply or a write is
 * still preparing its store pages on its way in: a write-through write's
 * store copy runs after its decision, its reply brings the client's next
 * request, and both take longer than a lull of graces for large writes.
 * For the same reason the lull is at least GAP_LULL times the mean wall
 * time from an event to the next arrival (at most LULL_CAP_NS): 1 MiB
 * writes reach the plugin some 300 us apart.  fio keeping 16 random reads
 * in flight on cmr-20t-2024 gets 162 virtual IOPS against the model's 166
 * at QD16 (one decision per lull: 158), at 19,000 requests per second of
 * wall time (one per lull: 6,700; DEPTH_BATCH 6: 22,000 but 156).  Larger
 * batches buy little: on a 1 GiB span, 8 gave 15 % more wall rate for 4 %
 * less virtual, 16 gave 22 % for 12 %, because each request's thread
 * still sleeps until its decision.
 * Lock held.
 */
#define PROBE_EVERY       16
#define BATCH_MISSES      8
#define DEPTH_PROBE_EVERY 64
#define DEPTH_LULL        4
#define DEPTH_BATCH       4
#define GAP_LULL          2
#define LULL_CAP_NS       1000000u

static bool
virtual_waits (struct sched *s)
{
  if (!s->reorders)
    return false;
  if (!reorderable (s) || s->batching ||
      __atomic_load_n (&s->inflight, __ATOMIC_RELAXED) > 1)
    return true;
  if (++s->since_probe < PROBE_EVERY)
    return false;
  s->since_probe = 0;
  return true;
}

/* Is the client's depth known (batching, and a lull found company)?
 * Lock held.
 */
static bool
depth_known (const struct sched *s)
{
  return s->batching && s->depth > 1;
}

/* Is the queue back at the client's depth, so that a lull would bring
 * no one else?  Lock held.
 */
static bool
at_depth (const struct sched *s)
{
  return depth_known (s) && s->since_lull < DEPTH_PROBE_EVERY &&
         fm_disk_queued (s->disk) >= s->depth;
}

/* The lull a waiting decision takes: the grace; while batching at a known
 * depth, a queue short of it waits DEPTH_LULL graces for the rest (with
 * think=zero the client sends its next request at once on the virtual
 * clock; only its wall time lags, so a decision taken without it would
 * reorder less than the drive would).  Lock held.
 */
static uint64_t
lull_needed (const struct sched *s)
{
  uint64_t base = depth_known (s) ? DEPTH_LULL * s->grace_ns : s->grace_ns;
  uint64_t gap = GAP_LULL * s->gap_ns;

  if (gap > LULL_CAP_NS)
    gap = LULL_CAP_NS;
  return gap > base ? gap : base;
}

/* Is a request on its way to the lock?  (No lock needed.) */
static bool
arriving (const struct sched *s)
{
  return __atomic_load_n (&s->arriving, __ATOMIC_ACQUIRE) != 0;
}

/* Has every decided request replied, and has every write on its way in
 * reached the drive?  Until then a lull proves nothing: the replies still
 * to go bring requests, and the writes are coming.  Lock held.
 */
static bool
settled (const struct sched *s)
{
  return __atomic_load_n (&s->inflight, __ATOMIC_RELAXED) <=
             fm_disk_queued (s->disk) &&
         !arriving (s);
}

/* Wall ns since the latest event: none if a reply stored it after `now`
 * was read (replies store it without the lock).
 */
static uint64_t
since_event (const struct sched *s, uint64_t now)
{
  uint64_t last = __atomic_load_n (&s->last_event, __ATOMIC_RELAXED);

  return now > last ? now - last : 0;
}

/* Wall ns left of the lull a waiting decision takes (0: it is over). Lock
 * held.
 */
static uint64_t
lull_left (const struct sched *s)
{
  uint64_t since = since_event (s, fd_monotonic_ns ());
  uint64_t need = lull_needed (s);

  if (s->scale == 0 && !settled (s))
    return need;
  return since < need ? need - since : 0;
}

/* An event now: the lull a waiting decision takes starts again.  Stored
 * without the lock (replies store it too).
 */
static void
event_at (struct sched *s, uint64_t now)
{
  __atomic_store_n (&s->last_event, now, __ATOMIC_RELAXED);
}

/* A request arrived: the events' gap learns from it.  Lock held. */
static void
arrived (struct sched *s)
{
  uint64_t now = fd_monotonic_ns ();
  uint64_t since = since_event (s, now);

  if (s->scale == 0 && __atomic_load_n (&s->inflight, __ATOMIC_RELAXED) > 1)
    s->gap_ns +=
        (since < LULL_CAP_NS ? since : LULL_CAP_NS) / 8 - s->gap_ns / 8;
  event_at (s, now);
}

/* A decision that waited is about to be taken, after a lull or at the
 * depth: did company come?  Lock held.
 */
static void
batch_seen (struct sched *s, bool lull)
{
  size_t queued = fm_disk_queued (s->disk);

  if (!lull) {
    s->since_lull++;
    return;
  }
  s->since_lull = 0;
  s->depth = queued;
  if (queued > 1) {
    s->batching = true;
    s->misses = 0;
  } else if (++s->misses >= BATCH_MISSES) {
    s->batching = false;
    s->since_probe = 0;
  }
}

/* j's wake word: the decision took j out of the drive (its thread
 * returns without the lock), or a count of calls to take the decider's
 * part.
 */
#define WAKE_LEFT 1u
#define WAKE_CALL 2u

static void
wake (struct sched_waiter *j, uint32_t how)
{
  /* j's thread may see the word and return before the syscall: a wake
   * of a stale address is at worst a spurious wake-up, which every wait
   * here tolerates.
   */
  if (how == WAKE_LEFT)
    __atomic_or_fetch (&j->wake, WAKE_LEFT, __ATOMIC_RELEASE);
  else
    __atomic_add_fetch (&j->wake, WAKE_CALL, __ATOMIC_RELEASE);
  syscall (SYS_futex, &j->wake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Wait, lock held on entry, for j's wake-up, at most `d` ns if d is not
 * UINT64_MAX.  Returns with the lock held, or false without it: the
 * decision took j out of the drive.
 */
static bool
wait_for (struct sched *s, struct sched_waiter *j, uint64_t d)
{
  uint32_t seen = __atomic_load_n (&j->wake, __ATOMIC_ACQUIRE);
  struct timespec ts = {(time_t)(d / 1000000000u), (long)(d % 1000000000u)};

  pthread_mutex_unlock (s->lock);
  /* Relative timeout, so a spurious wake-up restarts it: the caller's
   * loop recomputes what is left either way.
   */
  if (__atomic_load_n (&j->wake, __ATOMIC_ACQUIRE) == seen)
    syscall (SYS_futex, &j->wake, FUTEX_WAIT_PRIVATE, seen,
             d == UINT64_MAX ? NULL : &ts, NULL, 0);
  if (__atomic_load_n (&j->wake, __ATOMIC_ACQUIRE) & WAKE_LEFT)
    return false;
  pthread_mutex_lock (s->lock);
  /* Taken out while this thread waited for the lock (a call to take
   * the decider's part woke it, and a decision came first).
   */
  if (__atomic_load_n (&j->wake, __ATOMIC_RELAXED) & WAKE_LEFT) {
    pthread_mutex_unlock (s->lock);
    return false;
  }
  return true;
}

/* j joins the waiters, or leaves them.  Leaving with no decider (j was
 * it, or j was decided on its own way in before it took the part) calls
 * the oldest undecided waiter to take the part: the others sleep until
 * their own decision.  Lock held.
 */
static void
waiter_add (struct sched *s, struct sched_waiter *j)
{
  struct sched_waiter **p = &s->waiters;

  j->wake = 0;
  while (*p)
    p = &(*p)->next;
  j->next = NULL;
  j->prevp = p;
  *p = j;
}

static void
waiter_remove (struct sched *s, struct sched_waiter *j)
{
  struct sched_waiter *w;

  *j->prevp = j->next;
  if (j->next)
    j->next->prevp = j->prevp;
  if (s->decider == j)
    s->decider = NULL;
  if (s->decider)
    return;
  for (w = s->waiters; w; w = w->next)
    if (!w->decided) {
      wake (w, WAKE_CALL);
      break;
    }
}

/* Another thread's decision took j: out of the drive, and its thread
 * told so.  Lock held.
 */
static void
waiter_left (struct sched *s, struct sched_waiter *j)
{
  waiter_remove (s, j);
  wake (j, WAKE_LEFT);
}

/* How long a client may stay busy, with requests waiting, before the
 * grace decides instead (wall ns): a client that never blocks, or one
 * whose requests wait upstream of the plugin (a pipeline shallower than
 * its queue), would hold the drive for ever.  Far longer than a
 * checker's CPU between two waits for a read.
 */
#define PATIENCE_NS (2 * 1000000000ull)
/* How long the kernel may hold a loop request that is not yet a FUSE
 * request, with nothing else moving, before the grace decides: its
 * worker passes a request on in microseconds, and one that waits for
 * FUSE longer may wait for a decision.
 */
#define KERNEL_NS   1000000u
#define POLL_MIN_NS 2000u
#define POLL_MAX_NS 200000u

/* Virtual mode with a client to watch: one pick once the client is
 * quiet, or once its clock has passed the drive's decision (think=cpu
 * or real: nothing it sends from now on can arrive by then).  True if
 * the watch decided, or says wait (the decider polls it); false if it
 * cannot tell, and the grace decides.  Lock held.
 */
static bool
watched (struct sched *s, struct sched_waiter *j)
{
  enum client_state st;
  uint64_t now;

  s->polling = false;
  if (s->client == NULL)
    return false;
  /* A request asleep on the lock all through the reading is on its
   * way in; one that came to it later was in flight, and counted.
   */
  st = client_state (s->client, fm_disk_queued (s->disk));
  if (st == CLIENT_QUIET && arriving (s))
    st = CLIENT_BUSY;
  if (st != CLIENT_KERNEL)
    s->kernel_since = 0;
  else {
    now = fd_monotonic_ns ();
    if (s->kernel_since == 0)
      s->kernel_since = now;
    st = now - s->kernel_since < KERNEL_NS ? CLIENT_BUSY : CLIENT_UNKNOWN;
  }
  if (st == CLIENT_UNKNOWN)
    return false;
  if (st == CLIENT_QUIET || s->ops->virtual_at (s->opaque, s->wall_ns ()) >
                                fm_disk_next_decision (s->disk)) {
    uint64_t before = s->st.picks;

    decide (s, UINT64_MAX, j, 1);
    if (st == CLIENT_QUIET)
      s->st.watched += s->st.picks - before;
    else
      s->st.ahead += s->st.picks - before;
    s->busy_since = 0;
    s->impatient = false;
    s->poll_ns = POLL_MIN_NS;
    s->polling = true;
    return true;
  }
  now = fd_monotonic_ns ();
  if (s->busy_since == 0)
    s->busy_since = now;
  if (s->impatient)
    return false;
  if (now - s->busy_since >= PATIENCE_NS) {
    s->impatient = true;
    s->st.impatient++;
    fprintf (stderr,
             "futuredisk: the client on %s has not blocked for %llu s with "
             "%zu requests waiting: the drive decides after a grace until "
             "it does (virtual time is not exact meanwhile)\n",
             client_device (s->client), PATIENCE_NS / 1000000000ull,
             fm_disk_queued (s->disk));
    return false;
  }
  s->polling = true;
  return true;
}

/* The decider's next sleep while it polls the client: short at first,
 * longer while the client stays busy.  Timer slack would make the
 * shortest sleeps 50 us: the polling thread asks for none.
 */
static uint64_t
poll_wait (struct sched *s)
{
  static __thread bool slack_set;
  uint64_t d = s->poll_ns ? s->poll_ns : POLL_MIN_NS;

  if (!slack_set) {
    prctl (PR_SET_TIMERSLACK, 1000ul, 0, 0, 0);
    slack_set = true;
  }
  s->poll_ns = d * 2 > POLL_MAX_NS ? POLL_MAX_NS : d * 2;
  return d;
}

/* One pass of j's waiting: the decisions due now, if any.  Lock held. */
static void
decide_due (struct sched *s, struct sched_waiter *j, bool waits)
{
  bool full = lull_left (s) == 0;

  size_t early =
      sched_early_decisions (fm_disk_queued (s->disk), s->window, s->reorders,
                             __atomic_load_n (&s->inflight, __ATOMIC_RELAXED));
  unsigned most = early > UINT_MAX ? UINT_MAX : (unsigned)early;

  if (s->scale > 0) {
    /* Decisions ahead of the clock while no later arrival could be a
     * candidate, then those due by the clock.
     */
    decide (s, UINT64_MAX, j, most);
    decide (s, s->ops->virtual_at (s->opaque, s->wall_ns ()), j, UINT_MAX);
  } else if (watched (s, j)) {
    /* Decided, or waiting for the client. */
  } else if (s->reorders && !reorderable (s)) {
    /* A full window: the picks that keep it full, at once (no lull
     * could add a candidate); the rest wait for the client's next
     * requests like any other decision.
     */
    decide (s, UINT64_MAX, j, most);
  } else if (!waits || full || at_depth (s)) {
    /* While batching, one decision per lull (the reply it lets go may
     * bring the client's next request, which then joins the queue), or
     * DEPTH_BATCH at the depth.
     */
    if (waits)
      batch_seen (s, full);
    if (waits && s->batching) {
      decide (s, UINT64_MAX, j, full ? 1 : DEPTH_BATCH);
      event_at (s, fd_monotonic_ns ());
    } else
      decide (s, UINT64_MAX, j, UINT_MAX);
  }
}

/* Queue j in the drive and wait for the drive to serve it.  Lock held
 * on entry; on return too, unless another thread's decision took j out
 * of the drive (false).
 */

bool
sched_wait (struct sched *s, struct sched_waiter *w)
{
  bool waits;

  waiter_add (s, w);
  sched_enter (s);
  /* The grace is about when threads reach us: the real clock, even when
   * a test drives the emulated one (cfg.wall_ns).
   */
  arrived (s);
  waits = s->scale == 0 && virtual_waits (s);
  for (;;) {
    uint64_t d = UINT64_MAX;

    decide_due (s, w, waits);
    if (w->decided)
      break;
    if (s->decider == NULL)
      s->decider = w;
    if (s->decider == w) {
      if (s->scale > 0 && company_possible (s)) {
        uint64_t due =
            s->ops->wall_at (s->opaque, fm_disk_next_decision (s->disk));
        uint64_t wall = s->wall_ns ();

        d = due > wall ? due - wall : 0;
      } else if (s->polling)
        d = poll_wait (s);
      else
        d = lull_left (s);
    }
    if (!wait_for (s, w, d))
      return false;
  }
  waiter_remove (s, w);
  return true;
}

/* The lull starts again: the client's next request follows the reply. */
void
sched_leave (struct sched *s)
{
  if (s->scale == 0)
    event_at (s, fd_monotonic_ns ());
  __atomic_sub_fetch (&s->inflight, 1, __ATOMIC_RELAXED);
}

void
sched_stats (const struct sched *s, struct sched_stats *st)
{
  *st = s->st;
}

void
sched_stats_clear (struct sched *s)
{
  memset (&s->st, 0, sizeof s->st);
}
