/* futuredisk — faultmodels: the drive's command queue (see disk.h).
 *
 * Method.  The queue is an array in arrival order.  A decision falls when
 * the drive is free and something has arrived: T = max(t_free, first
 * arrival).  The drive looks at the first queue_depth requests that
 * arrived by T, up to the first FLUSH (which is served alone, in order),
 * and prices each from the head's position at T: zero for a read the
 * buffer or the write cache already holds (rc_ready) and for a write the
 * cache will take, else the seek and the rotational wait to its first
 * sector — exactly what serving it would cost to start (drv_price: what
 * drv_position would take, with the arm left where it is).  The cheapest goes;
 * ties go to the oldest. Once the oldest has waited queue_age inside the drive
 * it goes whatever it costs (the age cap of ublk-disksim,
 * https://github.com/lumir-sliva/ublk-disksim).  Its age counts from when
 * it got into the drive's window, not from its arrival at the host: time
 * spent waiting for a free slot is not the drive's to make up.
 * Pricing is a seek-curve evaluation and a rotational wait per candidate:
 * O(queue_depth) per decision.
 */
#include <stdlib.h>
#include <string.h>

#include "drive.h"

/* Does a come before b among requests that arrived at the same time?
 * Requests sent together reach the host in an order of its threads'
 * making; the drive sees them in one of the request's own, so the same
 * arrivals give the same queue.
 */
static bool
before (const struct fm_request *a, const struct fm_request *b)
{
  if (a->offset != b->offset)
    return a->offset < b->offset;
  if (a->length != b->length)
    return a->length < b->length;
  return a->op < b->op;
}

/* Room for rq in arrival order, among those that arrived with it in
 * `before` order: its index, the entries from there on moved up one.
 * FLUSH keeps its place: it is a barrier for what arrived before it.
 */
static size_t
sorted_place (struct queue *q, const struct fm_request *rq)
{
  size_t i = q->n;

  while (i > 0 && rq->op != FM_OP_FLUSH && q->v[i - 1].rq.op != FM_OP_FLUSH &&
         q->v[i - 1].rq.arrival_ns == rq->arrival_ns &&
         before (rq, &q->v[i - 1].rq))
    i--;
  memmove (&q->v[i + 1], &q->v[i], (q->n - i) * sizeof q->v[0]);
  q->n++;
  return i;
}

void
drive_enqueue (struct drive *d, const struct fm_request *rq, uint64_t tag)
{
  struct queue *q = &d->q;
  struct queued *e;
  uint64_t ss = d->p.sector, first = rq->offset / ss, last;

  if (q->n == q->alloc) {
    size_t na = q->alloc ? 2 * q->alloc : 64;
    struct queued *nv = realloc (q->v, na * sizeof *nv);

    if (nv == NULL)
      abort (); /* a model that cannot queue is unusable */
    q->v = nv;
    q->alloc = na;
  }
  last = rq->length ? (rq->offset + rq->length + ss - 1) / ss : first;
  if (first > d->sectors)
    first = d->sectors;
  if (last > d->sectors)
    last = d->sectors;
  e = &q->v[sorted_place (q, rq)];
  e->rq = *rq;
  e->tag = tag;
  e->lba = first;
  e->n = last - first;
  e->entered = rq->arrival_ns; /* re-set on entry if it waits for a slot */
  /* Located once: the scheduler prices it at every decision. */
  if (d->g && e->n)
    drv_locate (d, e->lba, &e->loc);
}

static size_t
depth (const struct drive *d)
{
  return d->p.queue_depth ? d->p.queue_depth : 1;
}

size_t
drive_queued (const struct drive *d)
{
  return d->q.n;
}

uint64_t
drive_next_decision (const struct drive *d)
{
  if (d->q.n == 0)
    return UINT64_MAX;
  return max64 (d->t_free, d->q.v[0].rq.arrival_ns);
}

/* The price of a write whose cache is full: below nothing else, so reads
 * keep priority over the destages it needs until the age cap.
 */
#define WAITS_FOR_ROOM (UINT64_MAX - 1)

/* Time from t until e's first sector is under the head: its price, or
 * UINT64_MAX if that is `bound` or more.
 */
static uint64_t
price (const struct drive *d, const struct queued *e, uint64_t t,
       uint64_t bound)
{
  bool write = e->rq.op != FM_OP_READ, room = true;

  if (e->n == 0 || e->rq.op == FM_OP_TRIM)
    return 0;
  if (write && wc_path (d, e->lba, e->n, e->rq.flags, &room) != WC_MEDIA)
    return room ? 0 : WAITS_FOR_ROOM;
  if (!write && rc_maybe (d, e->lba, e->n) && rc_ready (d, e->lba, e->n, t))
    return 0;
  t = max64 (t + d->p.command_ns, d->wc_busy);
  return drv_price (d, t, &e->loc, write, bound);
}

/* Index of the request the drive serves at decision time T. */
static size_t
choose (struct drive *d, uint64_t T)
{
  const struct queue *q = &d->q;
  size_t i, best = 0, window = depth (d);
  uint64_t best_price = UINT64_MAX;

  if (d->g == NULL || d->o.queue == FM_QUEUE_FIFO || window == 1 ||
      q->v[0].rq.op == FM_OP_FLUSH || T - q->v[0].entered >= d->p.queue_age_ns)
    return 0;
  if (window > q->n)
    window = q->n;
  rc_summarize (d);
  for (i = 0; i < window; i++) {
    const struct queued *e = &q->v[i];
    uint64_t p;

    if (e->rq.arrival_ns > T || e->rq.op == FM_OP_FLUSH)
      break;
    p = price (d, e, T, best_price);
    if (p < best_price) {
      best_price = p;
      best = i;
      if (p == 0)
        break;
    }
  }
  return best;
}

/* When the first read in the drive's window arrived (UINT64_MAX: none). */
static uint64_t
first_read (const struct drive *d)
{
  size_t i, window = depth (d);

  for (i = 0; i < window && i < d->q.n; i++)
    if (d->q.v[i].rq.op == FM_OP_READ)
      return d->q.v[i].rq.arrival_ns;
  return UINT64_MAX;
}

bool
drive_dispatch (struct drive *d, uint64_t now, uint64_t *tag,
                struct fm_timing *t)
{
  struct queue *q = &d->q;
  struct fm_request rq;
  uint64_t T;
  size_t i;

  if (q->n == 0)
    return false;
  T = drive_next_decision (d);
  if (T > now)
    return false;
  /* The head's free time before the decision goes to destaging, none
   * starting once a read waits; a shingled disk's cleaning can move the
   * decision later, past `now` — then it waits for its time.
   */
  drv_idle (d, T, first_read (d));
  T = drive_next_decision (d);
  if (T > now)
    return false;
  i = choose (d, T);
  rq = q->v[i].rq;
  *tag = q->v[i].tag;
  memmove (&q->v[i], &q->v[i + 1], (q->n - i - 1) * sizeof q->v[0]);
  q->n--;
  drv_serve (d, &rq, T, t);
  /* Its slot went to the first request waiting in the host. */
  if (q->n >= depth (d))
    q->v[depth (d) - 1].entered =
        max64 (q->v[depth (d) - 1].rq.arrival_ns, t->done_ns);
  return true;
}
