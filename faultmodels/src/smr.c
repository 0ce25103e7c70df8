/* futuredisk — faultmodels: a drive-managed shingled disk (see drive.h).
 *
 * Shingled tracks overlap like roof tiles: a track cannot be rewritten
 * without destroying the next, so the disk is cut into bands that are
 * only ever written whole, and a drive that hides this from the host
 * (drive-managed SMR) logs writes in a persistent media cache and later
 * merges them into their bands.  The model follows what Skylight measured
 * on Seagate's drives (Aghayev and Desnoyers, FAST '15,
 * https://www.usenix.org/conference/fast15/technical-sessions/presentation/aghayev):
 *
 *   - The media cache (smr_cache) is a log on the outermost tracks.  Its
 *     position c lies where LBA c does: the geometry puts both at the
 *     outer edge, and the model needs only the seek and transfer times
 *     there, not a separate user-invisible zone.
 *   - A host write smaller than smr_direct (256 KiB [E]) is logged: the
 *     drive appends it at the log's head at sequential speed, however the
 *     write cache merged it, because the command size is what the drive
 *     sees (Ars Technica: 32 KiB sequential writes hit the cliff, 512 KiB
 *     chunks did not,
 * https://arstechnica.com/gadgets/2020/06/western-digitals-smr-disks-arent-great-but-theyre-not-garbage/2/).
 *     A larger write goes straight to its band when it starts a band or
 *     continues the previous such write (a sequential stream fills bands
 *     in order); any other write is logged too.  (The rest of a band that
 *     such a stream leaves half-written is assumed intact [E].)
 *   - Each band remembers which of its sectors have their newest copy in
 *     the log, and where; reads fetch those pieces from the log.
 *   - Cleaning a band reads its logged pieces, reads the band, and writes
 *     it back whole: 2 x band / bandwidth, the seeks, and one positioning
 *     per logged piece, so a band full of scattered small writes costs
 *     more than one logged in a stream.  It frees every log sector the
 *     band's entries took, live or overwritten.
 *   - The drive cleans while idle, after smr_idle (1 s [E]; Skylight saw
 *     cleaning start after about a second), band after band until a
 *     request arrives (which then waits for the band in progress); and in
 *     the foreground when a write does not fit in the log, before taking
 *     it.  Bands are cleaned in LBA order, a sweep from where the last
 *     cleaning stopped [E], so a log filled by scattered writes frees
 *     little per band: the cliff.
 *
 * Cheap by design: per band a list of logged runs, a set of bands with
 * log entries, integer arithmetic only; no randomness.
 */
#include <stdlib.h>

#include "faultmodels/error.h"
#include "drive.h"

struct band {
  /* Sectors whose newest copy is in the log.  A run's tag is its cache
   * position minus its offset in the band, so runs logged back to back
   * merge, and sector x of the band sits at x + tag.
   */
  struct fm_runs live;
  uint64_t logged; /* log sectors its entries take, live or overwritten */
};

/* A cleaned band's list of runs is kept for the next band that logs a
 * write, so that cleaning and logging do not free and allocate one per
 * band on the request path; at most SPARES of them, each of at most
 * SPARE_RUNS runs (a band cleaned with more pays for its own).
 */
#define SPARES     64
#define SPARE_RUNS 1024

struct fm_smr {
  struct fm_runs spare[SPARES];
  unsigned nspare;
  uint64_t band_sectors, nbands, cache_sectors, direct_sectors;
  struct band *bands;
  struct fm_runs dirty; /* band numbers with entries in the log */
  uint64_t used;        /* log sectors taken */
  uint64_t head;        /* where the next entry goes */
  uint64_t seq_next;    /* the sector after the last write to a band */
  uint64_t cursor;      /* the cleaner's sweep: next band it looks at */
  uint64_t clean_ns, cleaned;
};

static uint64_t
min64 (uint64_t a, uint64_t b)
{
  return a < b ? a : b;
}

int
smr_new (struct drive *d, struct fm_err *err)
{
  struct fm_smr *s;

  if (d->p.smr_cache_bytes >= d->p.capacity)
    return fm_fail (err, "profile %s: smr_cache: not smaller than the disk",
                    d->p.name);
  s = calloc (1, sizeof *s);
  if (s == NULL)
    return fm_fail (err, "out of memory");
  d->smr = s;
  s->band_sectors = d->p.smr_band_bytes / d->p.sector;
  s->nbands = (d->sectors + s->band_sectors - 1) / s->band_sectors;
  s->cache_sectors = d->p.smr_cache_bytes / d->p.sector;
  s->direct_sectors = (d->p.smr_direct_bytes + d->p.sector - 1) / d->p.sector;
  s->seq_next = UINT64_MAX;
  s->bands = calloc (s->nbands, sizeof *s->bands);
  if (s->bands == NULL)
    return fm_fail (err, "out of memory for %llu bands",
                    (unsigned long long)s->nbands);
  return 0;
}

void
smr_free (struct fm_smr *s)
{
  uint64_t b;

  if (s == NULL)
    return;
  for (b = 0; s->bands && b < s->nbands; b++)
    fm_runs_free (&s->bands[b].live);
  while (s->nspare > 0)
    fm_runs_free (&s->spare[--s->nspare]);
  fm_runs_free (&s->dirty);
  free (s->bands);
  free (s);
}

int
smr_tag (const struct drive *d, uint64_t n)
{
  return d->smr && n < d->smr->direct_sectors;
}

/* Append n sectors at cache position c, all before the end of the log.
 * The drive writes an entry wherever the head is in the cache zone (it
 * keeps the map), so an append costs the seek there and the transfer,
 * not a wait for one particular sector: sequential cost, even when each
 * of a run of small writes arrives after its sector has passed.
 */
static uint64_t
append_io (struct drive *d, uint64_t t, uint64_t c, uint64_t n, struct acct *a)
{
  struct fm_location loc;
  uint64_t rot = a->rotation, end = c + n;

  drv_locate (d, c, &loc);
  t = drv_position (d, t, &loc, true, a);
  t -= a->rotation - rot; /* no wait for the sector: see above */
  a->rotation = rot;
  for (;;) {
    uint64_t k = min64 (n, loc.track_len - loc.sector);
    uint64_t dt = drv_sectors_time (d, k, loc.spt);

    t += dt;
    a->transfer += dt;
    n -= k;
    if (n == 0 || !fm_geometry_next_track (d->g, &loc))
      break;
    t += d->p.track_switch_ns;
    a->transfer += d->p.track_switch_ns;
  }
  drv_put_head (d, &loc, end);
  return t;
}

/* Read or write n log sectors from cache position c, wrapping round. */
static uint64_t
cache_io (struct drive *d, uint64_t t, uint64_t c, uint64_t n, bool write,
          struct acct *a)
{
  const uint64_t size = d->smr->cache_sectors;

  while (n > 0) {
    uint64_t k = min64 (n, size - c);

    t = write ? append_io (d, t, c, k, a)
              : drv_mechanical (d, t, c, k, false, a);
    c = (c + k) % size;
    n -= k;
  }
  return t;
}

static uint64_t
band_first (const struct fm_smr *s, uint64_t b)
{
  return b * s->band_sectors;
}

/* Merge band b's logged pieces into it and free their log space. */
static uint64_t
clean_band (struct drive *d, uint64_t t, uint64_t b, struct acct *a)
{
  struct fm_smr *s = d->smr;
  struct band *bd = &s->bands[b];
  uint64_t first = band_first (s, b), t0 = t;
  uint64_t len = min64 (s->band_sectors, d->sectors - first);
  size_t i;

  if (bd->live.n > 0) {
    for (i = 0; i < bd->live.n; i++) {
      const struct fm_run *r = &bd->live.v[i];

      t = cache_io (d, t, (uint64_t)((int64_t)(r->first - first) + r->tag),
                    r->n, false, a);
    }
    t = drv_mechanical (d, t, first, len, false, a);
    t = drv_mechanical (d, t, first, len, true, a);
    if (s->nspare < SPARES && bd->live.alloc <= SPARE_RUNS) {
      fm_runs_empty (&bd->live);
      s->spare[s->nspare++] = bd->live;
      bd->live = (struct fm_runs){0};
    } else
      fm_runs_free (&bd->live);
  }
  s->used -= bd->logged;
  bd->logged = 0;
  fm_runs_remove_or_abort (&s->dirty, b, 1);
  s->cursor = b + 1 < s->nbands ? b + 1 : 0;
  s->clean_ns += t - t0;
  s->cleaned++;
  return t;
}

/* Clean the next band with log entries at or after the sweep. */
static uint64_t
clean_one (struct drive *d, uint64_t t, struct acct *a)
{
  struct fm_smr *s = d->smr;
  size_t i = fm_runs_find (&s->dirty, s->cursor);
  uint64_t b;

  if (i == s->dirty.n)
    i = 0;
  b = s->dirty.v[i].first;
  if (b < s->cursor && s->cursor < b + s->dirty.v[i].n)
    b = s->cursor;
  return clean_band (d, t, b, a);
}

/* Log [lba, lba+n), all in one band, at the head of the log. */
static uint64_t
log_append (struct drive *d, uint64_t t, uint64_t lba, uint64_t n,
            struct acct *a)
{
  struct fm_smr *s = d->smr;
  uint64_t b = lba / s->band_sectors, off = lba - band_first (s, b);
  uint64_t pos, k;
  struct band *bd = &s->bands[b];

  while (s->used + n > s->cache_sectors)
    t = clean_one (d, t, a);
  pos = s->head;
  t = cache_io (d, t, pos, n, true, a);
  k = min64 (n, s->cache_sectors - pos);
  if (bd->live.alloc == 0 && s->nspare > 0)
    bd->live = s->spare[--s->nspare];
  fm_runs_add_or_abort (&bd->live, lba, k, (int)((int64_t)pos - (int64_t)off));
  if (k < n) /* wrapped round to position 0 */
    fm_runs_add_or_abort (&bd->live, lba + k, n - k, (int)-(int64_t)(off + k));
  bd->logged += n;
  s->used += n;
  s->head = (pos + n) % s->cache_sectors;
  fm_runs_add_or_abort (&s->dirty, b, 1, 0);
  return t;
}

uint64_t
smr_write (struct drive *d, uint64_t t, uint64_t lba, uint64_t n, int tag,
           struct acct *a)
{
  struct fm_smr *s = d->smr;
  uint64_t end = lba + n;

  if (tag == 0 && (lba % s->band_sectors == 0 || lba == s->seq_next)) {
    uint64_t x;

    t = drv_mechanical (d, t, lba, n, true, a);
    /* The band now holds the newest copy; the log's is stale. */
    for (x = lba; x < end;) {
      uint64_t b = x / s->band_sectors;
      uint64_t k = min64 (end, band_first (s, b + 1)) - x;

      if (s->bands[b].live.n > 0)
        fm_runs_remove_or_abort (&s->bands[b].live, x, k);
      x += k;
    }
    s->seq_next = end;
    return t;
  }
  while (lba < end) {
    uint64_t k = min64 (end, band_first (s, lba / s->band_sectors + 1)) - lba;

    t = log_append (d, t, lba, k, a);
    lba += k;
  }
  return t;
}

uint64_t
smr_read (struct drive *d, uint64_t t, uint64_t lba, uint64_t n, struct acct *a)
{
  struct fm_smr *s = d->smr;
  uint64_t end = lba + n, x = lba, from = lba; /* [from, x): from bands */

  while (x < end) {
    uint64_t b = x / s->band_sectors, first = band_first (s, b);
    uint64_t bend = min64 (end, first + s->band_sectors);
    const struct fm_runs *live = &s->bands[b].live;
    size_t i = fm_runs_find (live, x);

    while (x < bend) {
      const struct fm_run *r = i < live->n ? &live->v[i] : NULL;
      uint64_t k;

      if (r == NULL || r->first >= bend) {
        x = bend;
        break;
      }
      if (r->first > x) {
        x = r->first;
        continue;
      }
      if (x > from)
        t = drv_mechanical (d, t, from, x - from, false, a);
      k = min64 (bend, r->first + r->n) - x;
      t = cache_io (d, t, (uint64_t)((int64_t)(x - first) + r->tag), k, false,
                    a);
      x += k;
      from = x;
      i++;
    }
  }
  if (end > from)
    t = drv_mechanical (d, t, from, end - from, false, a);
  return t;
}

uint64_t
smr_idle_head (const struct drive *d, uint64_t t, uint64_t until)
{
  const struct fm_smr *s = d->smr;
  size_t i;

  if (s == NULL || s->dirty.n == 0 || until <= t + d->p.smr_idle_ns)
    return UINT64_MAX;
  /* Bands with nothing live clean in no time, so the sweep reaches the
   * first one with live pieces at once.
   */
  for (i = 0; i < s->dirty.n; i++)
    for (uint64_t b = s->dirty.v[i].first;
         b < s->dirty.v[i].first + s->dirty.v[i].n; b++)
      if (s->bands[b].live.n > 0)
        return t + d->p.smr_idle_ns;
  return UINT64_MAX;
}

uint64_t
smr_idle (struct drive *d, uint64_t t, uint64_t until, struct acct *a)
{
  struct fm_smr *s = d->smr;

  if (s == NULL || s->dirty.n == 0 || until <= t + d->p.smr_idle_ns)
    return t;
  t += d->p.smr_idle_ns;
  while (s->dirty.n > 0 && t < until)
    t = clean_one (d, t, a);
  return t;
}

void
drive_smr_stats (const struct drive *d, uint64_t *cache_bytes,
                 uint64_t *clean_ns, uint64_t *bands_cleaned)
{
  const struct fm_smr *s = d->smr;

  *cache_bytes = s ? s->used * d->p.sector : 0;
  *clean_ns = s ? s->clean_ns : 0;
  *bands_cleaned = s ? s->cleaned : 0;
}
