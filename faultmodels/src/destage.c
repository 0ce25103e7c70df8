/* futuredisk — faultmodels: the write path of a rotating disk (see drive.h).
 *
 * Method.  Two sets of dirty extents wait for the media: the volatile
 * write-back cache (`dirty`, lost at a power cut) and, on drives that have
 * one, the persistent media cache (`staged`), where small write-through
 * writes land first.  Both are bounded: the volatile cache by its size and
 * by write_entries extents, the media cache by media_cache_entries.  A
 * write that finds its set full waits for destages until there is room.
 *
 * A destage is one operation of the head: the extent whose first sector
 * the head reaches first (seek plus rotation, the scheduler's SPTF, over
 * both sets), written up to the end of its track at most, so that a read
 * never waits behind more than one track.  Destages that follow each
 * other along a stream continue it across the track switch as one
 * transfer would: a long run goes at the media rate.
 *
 * Destages run in the background, on the head's time, not the host's:
 * once a set is half full [E], and after IDLE_DESTAGE_NS of idleness for
 * whatever is left.  A cached write meanwhile costs only its command and
 * bus time; a read or a media write waits for the head, at most the
 * destage in progress.  No background destage starts while a read waits
 * (reads keep priority; the queue's age cap keeps writes from starving).
 *
 * The media cache is a log the drive appends to near the head, so a
 * staged write costs a fixed media_cache_ns and its transfer, not a
 * positioning to its home: that is what lets a drive publish 350-550
 * random writes per second at QD16 with the cache off while it reads 170
 * [E: where the media cache sits and how the drive reaches it are not
 * published; Dell says enterprise drives stage writes in "a media cache",
 * https://www.manualshelf.com/manual/dell/poweredge-c4130/white-papers-english/page-10.html;
 * media_cache_ns is fitted to the datasheets' figure, PROFILES.md].
 * Without media_cache_ns the write is a one-cylinder write seek.  Once
 * the pool of media_cache_entries extents is full, the sustained rate is
 * that of its cleaning: destages chosen by positioning time, one per
 * staged write.
 */
#include <stdlib.h>

#include "faultmodels/error.h"
#include "drive.h"

/* The largest write the media cache stages [E]; larger ones go home. */
#define STAGE_MAX_BYTES (128u << 10)

void
wc_forget (struct drive *d, uint64_t lba, uint64_t n)
{
  fm_runs_remove_or_abort (&d->dirty, lba, n);
  fm_runs_remove_or_abort (&d->partial, lba * d->p.sector, n * d->p.sector);
  fm_runs_remove_or_abort (&d->staged, lba, n);
}

/* Does the cache hold only part of some sector in bytes [from, to)? */
static bool
partial_in (const struct drive *d, uint64_t from, uint64_t to)
{
  size_t i = fm_runs_find (&d->partial, from);

  return i < d->partial.n && d->partial.v[i].first < to;
}

/* A cached write puts bytes [from, to) into the part of sector s: the
 * sector becomes partial, unless the cache already holds all of it or
 * these bytes complete it.
 */
static void
partial_add (struct drive *d, uint64_t s, uint64_t from, uint64_t to)
{
  const uint64_t ss = d->p.sector;
  size_t i;

  if (drv_dirty_covers (d, s, 1) && !partial_in (d, s * ss, (s + 1) * ss))
    return;
  fm_runs_add_or_abort (&d->partial, from, to - from, 0);
  i = fm_runs_find (&d->partial, s * ss);
  if (d->partial.v[i].first <= s * ss &&
      d->partial.v[i].first + d->partial.v[i].n >= (s + 1) * ss)
    fm_runs_remove_or_abort (&d->partial, s * ss, ss);
}

/* Bytes [off, off+len) go into the cache (before they are marked dirty):
 * whole sectors are whole, a ragged head or tail is partial.
 */
static void
partial_note (struct drive *d, uint64_t off, uint64_t len)
{
  const uint64_t ss = d->p.sector;
  uint64_t end = off + len, head = off / ss, tail = end / ss;
  uint64_t whole = (off + ss - 1) / ss;

  if (tail > whole)
    fm_runs_remove_or_abort (&d->partial, whole * ss, (tail - whole) * ss);
  if (off % ss)
    partial_add (d, head, off, end < (head + 1) * ss ? end : (head + 1) * ss);
  if (end % ss && (tail != head || off % ss == 0))
    partial_add (d, tail, off > tail * ss ? off : tail * ss, end);
}

/* Would [lba, lba+n) make a new extent of r rather than join one? */
static bool
grows (const struct fm_runs *r, uint64_t lba, uint64_t n)
{
  size_t i = fm_runs_find (r, lba ? lba - 1 : 0);

  return i == r->n || r->v[i].first > lba + n;
}

static bool
has_room (const struct drive *d, enum wc_path path, uint64_t lba, uint64_t n)
{
  if (path == WC_CACHE)
    return d->dirty.total + n <= d->cache_sectors &&
           (d->dirty.n < d->p.write_entries || !grows (&d->dirty, lba, n));
  if (path == WC_STAGE)
    return d->staged.n < d->p.media_cache_entries ||
           !grows (&d->staged, lba, n);
  return true;
}

enum wc_path
wc_path (const struct drive *d, uint64_t lba, uint64_t n, unsigned flags,
         bool *room)
{
  enum wc_path path = WC_MEDIA;

  if (!(flags & FM_REQ_FUA) && n <= d->cache_sectors)
    path = WC_CACHE;
  else if (d->p.media_cache_entries && n * d->p.sector <= STAGE_MAX_BYTES &&
           !d->smr)
    path = WC_STAGE;
  *room = has_room (d, path, lba, n);
  return path;
}

/* ---- choosing and doing one destage ---- */

/* Which set a destage may take from. */
enum wc_set {
  WC_ANY,
  WC_VOLATILE_ONLY,
  WC_STAGED_ONLY
};

/* drv_locate, remembered, with the angle of the sector. */
static const struct memo *
locate (struct drive *d, uint64_t lba)
{
  struct memo *m = &d->memo[(lba ^ lba >> 7) & (MEMO_SLOTS - 1)];

  if (m->lba != lba) {
    drv_locate (d, lba, &m->loc);
    m->angle = drv_sector_angle (d, &m->loc);
    m->lba = lba;
  }
  return m;
}

/* drv_price of a write to m's sector from time t, the platter at angle
 * a0 then; the same sums with fewer divisions: the scheduler prices many
 * extents from one head position.
 */
static uint64_t
price (const struct drive *d, uint64_t a0, const struct memo *m, uint64_t bound)
{
  const uint64_t rpm = d->p.rpm;
  bool seek;
  uint64_t s = drv_arm_time (d, &m->loc, true, &seek), w;

  if (s >= bound)
    return UINT64_MAX;
  w = (m->angle + R_UNITS - (a0 + s * rpm) % R_UNITS) % R_UNITS;
  if (R_UNITS - w <= ANGLE_SLACK_NS * rpm)
    return s;
  return s + (w + rpm - 1) / rpm;
}

/* The best extent of r to destage from the head at time t, by
 * positioning time: *best lowered and *at set when one beats it.  The
 * extents are in LBA order, so in cylinder order: the search walks out
 * from the head, the nearer side first, and stops on each side at the
 * first extent whose seek alone loses.
 */
static void
pick (struct drive *d, const struct fm_runs *r, uint64_t t, uint64_t *best,
      size_t *at)
{
  const uint64_t h = d->head_lba;
  size_t up = fm_runs_find (r, h), down = up, i;
  uint64_t a0 = drv_angle_at (d, t), p;

  while (up < r->n || down > 0) {
    bool rise = down == 0 ||
                (up < r->n && (r->v[up].first > h ? r->v[up].first - h : 0) <
                                  h - r->v[down - 1].first);

    i = rise ? up++ : --down;
    p = price (d, a0, locate (d, r->v[i].first), *best);
    if (p == UINT64_MAX) {
      if (rise)
        up = r->n;
      else
        down = 0;
    } else if (p < *best) {
      *best = p;
      *at = i;
    }
  }
}

/* Write n sectors from lba to the media.  With `rmw` a partial physical
 * sector must be merged first, which costs RMW_REVS revolutions more than
 * an aligned write's ordinary wait: HP's Advanced Format paper measures
 * +16-22 ms, two revolutions at 7200 and at 5400 rpm
 * (https://manualsdump.com/en/manuals/hp-dx2390/290504/19) — one to read
 * the sector back as it passes and one before the merged sector can be
 * written [E: the split is ours, the total HP's].  Rounding each
 * revolution up leaves the head a fraction of a ns past the sector, well
 * inside ANGLE_SLACK_NS.
 */
#define RMW_REVS 2

static uint64_t
media_write (struct drive *d, uint64_t t, uint64_t lba, uint64_t n, bool rmw,
             int tag, struct acct *a)
{
  uint64_t rev = rmw ? RMW_REVS * ((R_UNITS + d->p.rpm - 1) / d->p.rpm) : 0;
  struct fm_location loc;

  a->rotation += rev;
  /* A shingled disk decides where it goes: its media cache or its band. */
  if (d->smr)
    return smr_write (d, t + rev, lba, n, tag, a);
  drv_locate (d, lba, &loc);
  t = drv_position (d, t, &loc, true, a);
  return drv_transfer (d, t + rev, loc, n, a);
}

/* Write k sectors from loc from time s.  Right after the destage that
 * ended where this one starts, the head is already there: the stream
 * goes on as one transfer would, a track switch and no seek.
 */
static uint64_t
piece (struct drive *d, uint64_t s, const struct fm_location *loc, uint64_t k,
       bool rmw, int tag, struct acct *a)
{
  uint64_t lba = loc->track_first + loc->sector, w;

  if (d->smr || rmw)
    return media_write (d, s, lba, k, rmw, tag, a);
  if (lba != d->head_lba || s != d->wc_busy)
    return drv_transfer (d, drv_position (d, s, loc, true, a), *loc, k, a);
  if (loc->sector == 0) {
    s += d->p.track_switch_ns;
    a->transfer += d->p.track_switch_ns;
  }
  w = drv_rot_wait (d, s, loc);
  a->rotation += w;
  return drv_transfer (d, s + w, *loc, k, a);
}

/* One destage from time s (the head free by then), from the volatile
 * cache, the media cache, or whichever is nearer.  Returns its end.
 */
static uint64_t
destage (struct drive *d, uint64_t s, enum wc_set which, struct acct *a)
{
  uint64_t best = UINT64_MAX, ss = d->p.sector, k, end;
  size_t at = 0, at2 = SIZE_MAX;
  struct fm_location loc;
  struct fm_runs *r = which == WC_STAGED_ONLY ? &d->staged : &d->dirty;
  struct fm_run e;
  bool rmw = false;

  s = rc_stop (d, s);
  if (which != WC_STAGED_ONLY)
    pick (d, &d->dirty, s, &best, &at);
  if (which != WC_VOLATILE_ONLY)
    pick (d, &d->staged, s, &best, &at2);
  if (at2 != SIZE_MAX) {
    r = &d->staged;
    at = at2;
  }
  e = r->v[at];
  loc = locate (d, e.first)->loc;
  k = loc.track_len - loc.sector < e.n ? loc.track_len - loc.sector : e.n;
  if (r == &d->dirty)
    rmw = partial_in (d, e.first * ss, (e.first + k) * ss);
  end = piece (d, s, &loc, k, rmw, e.tag, a);
  if (r == &d->dirty) {
    fm_runs_remove_or_abort (&d->partial, e.first * ss, k * ss);
    if (d->on_destage)
      d->on_destage (d->on_destage_opaque, e.first * ss, k * ss);
  }
  fm_runs_remove_or_abort (r, e.first, k);
  a->destage += end - s;
  d->wc_busy = end;
  return end;
}

/* When the head is free for a destage: after the last one, and after
 * the host's last use of the media.
 */
static uint64_t
head_free (const struct drive *d)
{
  return max64 (d->wc_busy, d->media_end);
}

/* Is a set past the mark where destage runs while the host works? */
static bool
pressed (const struct drive *d)
{
  return (d->dirty.n > 0 && (2 * d->dirty.total >= d->cache_sectors ||
                             2 * d->dirty.n >= d->p.write_entries)) ||
         (d->staged.n > 0 && 2 * d->staged.n >= d->p.media_cache_entries);
}

void
wc_background (struct drive *d, uint64_t until, uint64_t read_at)
{
  if (until > read_at)
    until = read_at;
  while (d->dirty.n > 0 || d->staged.n > 0) {
    uint64_t s = head_free (d);

    if (!pressed (d))
      s = max64 (s, d->t_free + IDLE_DESTAGE_NS);
    if (s >= until)
      break;
    destage (d, s, WC_ANY, &d->idle);
  }
}

/* ---- host writes and flushes ---- */

/* Room in `path`'s set for [lba, lba+n) from time t: destages until
 * there is.  Returns when there is.
 */
static uint64_t
make_room (struct drive *d, enum wc_path path, uint64_t lba, uint64_t n,
           uint64_t t, struct acct *a)
{
  enum wc_set which = path == WC_CACHE ? WC_VOLATILE_ONLY : WC_STAGED_ONLY;

  while (!has_room (d, path, lba, n))
    t = destage (d, max64 (t, head_free (d)), which, a);
  return t;
}

/* The media cache takes [lba, lba+n) from time t: the append to its log
 * beside the head and the transfer there.  Returns its end.
 */
static uint64_t
stage (struct drive *d, uint64_t lba, uint64_t n, uint64_t t, struct acct *a)
{
  struct fm_location loc;
  uint64_t hop = d->p.media_cache_ns, x;

  t = make_room (d, WC_STAGE, lba, n, max64 (t, rc_stop (d, t)), a);
  drv_locate (d, d->head_lba, &loc);
  x = drv_sectors_time (d, n, loc.spt);
  if (hop == 0)
    hop = fm_seek_write_time (&d->seek, 1.0);
  a->seek += hop;
  a->seeks++;
  a->transfer += x;
  fm_runs_remove_or_abort (&d->dirty, lba, n);
  fm_runs_remove_or_abort (&d->partial, lba * d->p.sector, n * d->p.sector);
  fm_runs_add_or_abort (&d->staged, lba, n, 0);
  d->media_end = t + hop + x;
  return d->media_end;
}

uint64_t
wc_write (struct drive *d, uint64_t lba, uint64_t n,
          const struct fm_request *rq, uint64_t t, struct acct *a, bool *cached)
{
  uint64_t cmd_end = t + d->p.command_ns;
  uint64_t bus_end = cmd_end + drv_bus_time (d, n);
  bool rmw = (rq->offset | (rq->offset + rq->length)) % d->p.sector != 0;
  bool room;
  enum wc_path path = wc_path (d, lba, n, rq->flags, &room);

  /* The buffer keeps the written data, not what the media held. */
  rc_written (d, lba, n, t);
  if (path == WC_CACHE) {
    uint64_t ready = max64 (bus_end, make_room (d, path, lba, n, t, a));

    fm_runs_remove_or_abort (&d->staged, lba, n);
    partial_note (d, rq->offset, rq->length);
    fm_runs_add_or_abort (&d->dirty, lba, n, smr_tag (d, n));
    *cached = true;
    return ready;
  }
  if (path == WC_STAGE)
    return max64 (bus_end, stage (d, lba, n, cmd_end, a));
  wc_forget (d, lba, n);
  d->media_end = media_write (d, max64 (cmd_end, rc_stop (d, t)), lba, n, rmw,
                              smr_tag (d, n), a);
  return max64 (bus_end, d->media_end);
}

uint64_t
wc_flush (struct drive *d, uint64_t t, struct acct *a)
{
  while (d->dirty.n > 0)
    t = destage (d, max64 (t, head_free (d)), WC_VOLATILE_ONLY, a);
  return t;
}
