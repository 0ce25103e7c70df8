/* futuredisk — faultmodels: the drive's read buffer (see drive.h).
 *
 * The buffer is cut into segments, each a circular buffer holding the
 * last seg_sectors of a run of sectors, replaced least recently used
 * first (Seagate SAS manuals: segments are circular buffers, and writes
 * use them too, dropping stale copies of the written LBAs,
 * https://manualsdump.com/en/manuals/seagate-st1000nm0033/136682/16).
 *
 * After a read the drive keeps reading the following sectors into that
 * read's segment, at media speed, until it holds pf_max sectors past the
 * request.  A later read in a segment finds its data there (bus transfer
 * only) or, in the segment being read ahead, rides the stream and
 * completes when the media gets to its end.  The buffer is asked once
 * the read's command overhead has passed: the head reads on while the
 * drive takes the command in, and the drive cannot stop it for a command
 * it has not yet decoded.  So a read a few sectors past the stream (a
 * metadata scan skipping a block or two) finds them read meanwhile,
 * where asking at arrival stopped the stream short of them and the
 * overhead then made the head miss them by a revolution: a host with no
 * think time was slower than one thinking 25 us.  Any other read that
 * needs the head, or a write, abandons the read-ahead, but only once
 * pf_min sectors are in (IBM Ultrastar DDRS "Minimum Pre-fetch",
 * https://www.easymanua.ls/ibm/ddrs-39130-ultrastar-9-1-gb-hard-drive/manual?p=118).
 * A write stops it too, as "write hit stops prefetch" says in DiskSim's
 * WD 4 TB model (https://github.com/westerndigitalcorporation/DiskSim).
 * Hits in other segments need no head and leave it reading ahead; so
 * several sequential readers each keep their own segment.
 */
#include <stdlib.h>

#include <string.h>

#include "drive.h"

/* How far a stream at (lba, t0) gets by time t, stopping at cap. */
static uint64_t
advance (const struct drive *d, uint64_t lba, uint64_t t0, uint64_t t,
         uint64_t cap)
{
  uint64_t budget = t > t0 ? t - t0 : 0;
  struct fm_location loc;

  if (lba >= cap || budget == 0)
    return lba;
  drv_locate (d, lba, &loc);
  for (;;) {
    uint64_t k = loc.track_len - loc.sector, dt;

    if (k > cap - lba)
      k = cap - lba;
    dt = drv_sectors_time (d, k, loc.spt);
    if (dt > budget)
      return lba + budget * loc.spt * d->p.rpm / R_UNITS;
    budget -= dt;
    lba += k;
    if (lba >= cap || budget < d->p.track_switch_ns ||
        !fm_geometry_next_track (d->g, &loc))
      return lba;
    budget -= d->p.track_switch_ns;
  }
}

/* When a stream at (lba, t0) reaches `target`: advance's inverse. */
static uint64_t
reach_time (const struct drive *d, uint64_t lba, uint64_t t0, uint64_t target)
{
  struct fm_location loc;
  uint64_t t = t0;

  if (lba >= target)
    return t0;
  drv_locate (d, lba, &loc);
  for (;;) {
    uint64_t k = loc.track_len - loc.sector;

    if (k > target - lba)
      k = target - lba;
    t += drv_sectors_time (d, k, loc.spt);
    lba += k;
    if (lba >= target || !fm_geometry_next_track (d->g, &loc))
      return t;
    t += d->p.track_switch_ns;
  }
}

static uint64_t
min64 (uint64_t a, uint64_t b)
{
  return a < b ? a : b;
}

/* Where the stream is at time t (the read-ahead segment's end). */
static uint64_t
stream_pos (const struct drive *d, uint64_t t)
{
  const struct rcache *rc = &d->rc;

  return advance (d, rc->seg[rc->ra].end, rc->t, t, rc->cap);
}

/* LRU order is a ring through all segments, so the victim is found in
 * O(1): the ring's tail, the one before the most recently used.
 */
static void
ring_move (struct rcache *rc, uint32_t i)
{
  struct segment *v = rc->seg;
  uint32_t m = rc->mru, l;

  v[v[i].prev].next = v[i].next;
  v[v[i].next].prev = v[i].prev;
  l = v[m].prev;
  v[i].prev = l;
  v[i].next = m;
  v[l].next = i;
  v[m].prev = i;
}

static void
touch (struct rcache *rc, struct segment *s)
{
  uint32_t i = (uint32_t)(s - rc->seg);

  if (i == rc->mru)
    return;
  if (i != rc->seg[rc->mru].prev)
    ring_move (rc, i);
  rc->mru = i; /* the tail becomes the head by turning the ring */
}

/* An emptied segment goes to the tail, to be reused first. */
static void
retire (struct rcache *rc, struct segment *s)
{
  uint32_t i = (uint32_t)(s - rc->seg);

  s->valid = false;
  s->start = s->end = 0;
  if (i == rc->mru)
    rc->mru = s->next;
  else
    ring_move (rc, i);
}

/* A segment holds [start, end), at most seg_sectors of it. */
static void
seg_set (struct rcache *rc, struct segment *s, uint64_t start, uint64_t end)
{
  if (end <= start) {
    retire (rc, s);
    return;
  }
  s->valid = true;
  s->start = end - start > rc->seg_sectors ? end - rc->seg_sectors : start;
  s->end = end;
}

/* What the buffer can do for a read of [lba, end) at time t. */
enum look_kind {
  L_MISS, /* nothing: a new segment (victim) */
  L_HIT,  /* all of it is in segment seg */
  L_RIDE, /* seg is reading ahead and will get there */
  L_PART  /* seg holds it up to `held`; the media must do the rest */
};

struct look {
  enum look_kind kind;
  int seg, victim;
  uint64_t held;
};

/* Is lba in [s->start, s->end]: in the segment, or just after it? */
static bool
seg_reaches (const struct segment *s, uint64_t lba)
{
  return lba - s->start <= s->end - s->start && s->valid;
}

/* The segment reading ahead first: its end moves with time; then the
 * others, in a pass with one branch that is almost never taken.
 */
static void
look (const struct drive *d, uint64_t lba, uint64_t end, uint64_t t,
      struct look *l)
{
  const struct rcache *rc = &d->rc;
  uint32_t i;

  l->kind = L_MISS;
  l->victim = rc->n ? (int)rc->seg[rc->mru].prev : 0;
  if (rc->ra >= 0 && lba >= rc->seg[rc->ra].start && lba <= rc->cap) {
    const struct segment *s = &rc->seg[rc->ra];
    uint64_t hi = stream_pos (d, t);
    uint64_t lo =
        hi - s->start > rc->seg_sectors ? hi - rc->seg_sectors : s->start;

    if (lba >= lo && lba <= hi) {
      l->seg = rc->ra;
      l->held = hi;
      l->kind = end <= hi ? L_HIT : hi < rc->cap ? L_RIDE : L_PART;
      return;
    }
  }
  for (i = 0; i < rc->n; i++) {
    const struct segment *s = &rc->seg[i];

    if (seg_reaches (s, lba) && (int)i != rc->ra) {
      l->seg = (int)i;
      l->held = s->end;
      /* L_PART includes the read just after it: the same segment. */
      l->kind = end <= s->end ? L_HIT : L_PART;
      return;
    }
  }
}

/* Read ahead into segment i after a read that ended at `end`, time t. */
static void
stream_start (struct drive *d, int i, uint64_t end, uint64_t t)
{
  struct rcache *rc = &d->rc;

  rc->ra = -1;
  if (rc->pf_max == 0 || end >= d->sectors)
    return;
  rc->ra = i;
  rc->t = t;
  rc->cap = min64 (end + rc->pf_max, d->sectors);
  rc->floor = min64 (end + rc->pf_min, rc->cap);
}

/* A hit at time t on the segment reading ahead: keep it pf_max ahead of
 * `end`, restarting the stream if it had filled up (the head is still
 * there, so only the rotation to its next sector is lost).
 */
static void
stream_extend (struct drive *d, uint64_t end, uint64_t t)
{
  struct rcache *rc = &d->rc;
  struct segment *s = &rc->seg[rc->ra];
  uint64_t cap = min64 (end + rc->pf_max, d->sectors);
  uint64_t cur = stream_pos (d, t);

  if (cap <= rc->cap)
    return;
  if (cur == rc->cap) {
    struct fm_location loc;

    drv_locate (d, cur, &loc);
    seg_set (rc, s, s->start, cur);
    rc->t = t + drv_rot_wait (d, t, &loc);
  }
  rc->cap = cap;
  rc->floor = max64 (rc->floor, min64 (end + rc->pf_min, cap));
}

uint64_t
rc_stop (struct drive *d, uint64_t t)
{
  struct rcache *rc = &d->rc;
  struct fm_location loc;
  struct segment *s;
  uint64_t pos;

  /* A destage in progress has the head too (destage.c). */
  if (rc->ra < 0)
    return max64 (max64 (t, rc->head_free), d->wc_busy);
  s = &rc->seg[rc->ra];
  pos = stream_pos (d, t);
  if (pos < rc->floor) {
    t = reach_time (d, s->end, rc->t, rc->floor);
    pos = rc->floor;
  }
  seg_set (rc, s, s->start, pos);
  rc->ra = -1;
  rc->head_free = t;
  drv_locate (d, pos, &loc);
  drv_put_head (d, &loc, pos);
  return t;
}

/* Ride the stream: the media reaches `end` when it reaches it. */
static uint64_t
ride (struct drive *d, uint64_t end, struct acct *a)
{
  struct rcache *rc = &d->rc;
  struct segment *s = &rc->seg[rc->ra];
  struct fm_location loc;
  uint64_t done;

  drv_locate (d, s->end, &loc);
  done = drv_transfer (d, rc->t, loc, end - s->end, a);
  seg_set (rc, s, s->start, end);
  touch (rc, s);
  stream_start (d, rc->ra, end, done);
  return done;
}

uint64_t
rc_read (struct drive *d, uint64_t lba, uint64_t n, uint64_t t, struct acct *a,
         bool *hit)
{
  struct rcache *rc = &d->rc;
  uint64_t end = lba + n, cmd_end = t + d->p.command_ns;
  uint64_t bus_end = cmd_end + drv_bus_time (d, n), media_end, from = lba;
  struct segment *s;
  struct look l;

  if (drv_dirty_covers (d, lba, n)) {
    *hit = true;
    return bus_end;
  }
  look (d, lba, end, cmd_end, &l);
  if (l.kind == L_HIT) {
    *hit = true;
    touch (rc, &rc->seg[l.seg]);
    if (l.seg == rc->ra)
      stream_extend (d, end, cmd_end);
    return bus_end;
  }
  if (l.kind == L_RIDE) {
    *hit = true;
    return max64 (bus_end, ride (d, end, a));
  }
  if (l.kind == L_PART)
    from = l.held;
  cmd_end = rc_stop (d, cmd_end);
  media_end = d->smr ? smr_read (d, cmd_end, from, end - from, a)
                     : drv_mechanical (d, cmd_end, from, end - from, false, a);
  if (rc->n == 0)
    return max64 (bus_end, media_end);
  s = &rc->seg[l.kind == L_PART ? l.seg : l.victim];
  seg_set (rc, s, l.kind == L_PART ? s->start : lba, end);
  touch (rc, s);
  stream_start (d, (int)(s - rc->seg), end, media_end);
  return max64 (bus_end, media_end);
}

bool
rc_ready (const struct drive *d, uint64_t lba, uint64_t n, uint64_t t)
{
  struct look l;

  if (drv_dirty_covers (d, lba, n))
    return true;
  look (d, lba, lba + n, t + d->p.command_ns, &l);
  return l.kind == L_HIT || l.kind == L_RIDE;
}

void
rc_summarize (struct drive *d)
{
  struct rcache *rc = &d->rc;
  uint32_t i;

  memset (rc->summary, 0, sizeof rc->summary);
  for (i = 0; i < rc->n; i++) {
    const struct segment *s = &rc->seg[i];
    uint64_t r;

    /* A segment reaches lba in [start, end]: both ends count. */
    if (s->valid && (int)i != rc->ra)
      for (r = s->start >> rc->shift; r <= s->end >> rc->shift; r++)
        rc->summary[r / 64] |= 1ULL << (r % 64);
  }
}

bool
rc_maybe (const struct drive *d, uint64_t lba, uint64_t n)
{
  const struct rcache *rc = &d->rc;
  uint64_t r = lba >> rc->shift;

  if (rc->ra >= 0 && lba >= rc->seg[rc->ra].start && lba <= rc->cap)
    return true;
  if (rc->n && (rc->summary[r / 64] >> (r % 64)) & 1)
    return true;
  return drv_dirty_covers (d, lba, n);
}

/* Drop [lo, hi) from segment s, which overlaps it; of a segment cut in
 * two, the part after the hole stays, the part a sequential reader would
 * read next.
 */
static void
drop (struct rcache *rc, struct segment *s, uint64_t lo, uint64_t hi)
{
  if (hi < s->end)
    s->start = hi;
  else if (lo > s->start)
    s->end = lo;
  else
    retire (rc, s);
}

void
rc_written (struct drive *d, uint64_t lba, uint64_t n, uint64_t t)
{
  struct rcache *rc = &d->rc;
  struct segment *s = NULL;
  uint64_t end = lba + n;
  uint32_t i;

  if (rc->n == 0)
    return;
  rc_stop (d, t);
  /* The segment the write lands in or continues keeps it; every other
   * copy of the written sectors is stale.
   */
  for (i = 0; i < rc->n; i++) {
    struct segment *c = &rc->seg[i];

    /* One branch, almost never taken: & rather than &&. */
    if ((c->start < end) & (lba <= c->end) & c->valid) {
      if (s == NULL && lba >= c->start)
        s = c; /* lba in [start, end]: it lands here */
      else if (lba < c->end)
        drop (rc, c, lba, end);
    }
  }
  if (s)
    seg_set (rc, s, s->start, max64 (s->end, end));
  else {
    s = &rc->seg[rc->seg[rc->mru].prev];
    seg_set (rc, s, lba, end);
  }
  touch (rc, s);
}

void
rc_forget (struct drive *d)
{
  uint32_t i;

  for (i = 0; i < d->rc.n; i++)
    d->rc.seg[i].valid = false;
  d->rc.ra = -1;
}

int
rc_init (struct drive *d, struct fm_err *err)
{
  struct rcache *rc = &d->rc;
  uint32_t i;

  rc->ra = -1;
  if (d->g == NULL || !d->o.read_cache ||
      fm_profile_buffer_bytes (&d->p) < d->p.sector)
    return 0;
  rc->n = fm_profile_segments (&d->p);
  rc->seg = calloc (rc->n, sizeof *rc->seg);
  if (rc->seg == NULL) {
    rc->n = 0;
    return fm_fail (err, "out of memory");
  }
  for (i = 0; i < rc->n; i++) {
    rc->seg[i].next = (i + 1) % rc->n;
    rc->seg[i].prev = (i + rc->n - 1) % rc->n;
  }
  rc->seg_sectors = fm_profile_buffer_bytes (&d->p) / rc->n / d->p.sector;
  rc->pf_max = min64 (d->ra_sectors, rc->seg_sectors);
  rc->pf_min = min64 (d->p.prefetch_min_bytes / d->p.sector, rc->pf_max);
  while ((d->sectors >> rc->shift) >= 64 * 64)
    rc->shift++;
  return 0;
}

void
rc_free (struct drive *d)
{
  free (d->rc.seg);
  d->rc.seg = NULL;
  d->rc.n = 0;
}
