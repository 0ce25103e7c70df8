/* futuredisk — faultmodels: a drive with two actuators (see disk.h).
 *
 * Seagate's MACH.2 drives (Exos 2X14, 2X18) have two independent head
 * stacks; over SATA the drive is one device whose first half of LBAs
 * belongs to one actuator and second half to the other (the ATA
 * Concurrent Positioning Ranges log; Linux's independent_access_ranges),
 * https://www.seagate.com/.../mach-2 FAQ as quoted by
 * https://documentation-pdf.com/affiche-sc702_2_2101us_mach_2_faq-29343.html.
 * Each actuator reaches half the surfaces over the full stroke, at a
 * single actuator's rate; both work at once when the host keeps requests
 * for both halves in flight.
 *
 * Method.  The drive is two ordinary drives: each half is a single drive
 * (single.h) of
 * half the capacity and half the heads, with half the write cache [E: the
 * real drive shares one buffer], its own queue and its own read buffer.
 * Every call is routed by LBA: a request that spans the middle, and every
 * FLUSH, goes to both halves as two parts and completes when both have;
 * its timing merges the parts'.  The bus is not shared [E: SATA's 600 MB/s
 * exceeds the two actuators' outer 554 MB/s].
 */
#include <stdlib.h>
#include <string.h>

#include "faultmodels/rng.h"
#include "iface.h"
#include "single.h"

/* A request in flight: its caller's tag and how many parts are done. */
struct part_slot {
  uint64_t tag;
  unsigned parts, done;
  struct fm_timing t;
};

struct dual {
  struct fm_disk base; /* first: the interface's view */
  struct fm_disk_options o;
  struct drive *half[2];
  uint64_t boundary; /* bytes: where the second actuator's LBAs start */
  int last;          /* the half that served last (dual_extend) */
  struct part_slot *slot;
  uint32_t *free_slot;
  size_t nslots, nfree;
  struct destage_hop {
    fm_destage_fn *fn;
    void *opaque;
    uint64_t base;
  } hop[2];
};

static uint64_t
max64 (uint64_t a, uint64_t b)
{
  return a > b ? a : b;
}

/* Out of memory in the model is fatal, as elsewhere in the library. */
static void *
grow (void *p, size_t n)
{
  p = realloc (p, n);
  if (p == NULL)
    abort ();
  return p;
}

static const struct fm_disk_ops dual_ops;

static void
dual_free (struct fm_disk *d)
{
  struct dual *u = (struct dual *)d;

  drive_free (u->half[0]);
  drive_free (u->half[1]);
  free (u->slot);
  free (u->free_slot);
  free (u);
}

struct fm_disk *
dual_open (const struct fm_profile *p, uint64_t seed,
           const struct fm_disk_options *o, struct fm_err *err)
{
  struct dual *u = calloc (1, sizeof *u);
  struct fm_profile h = *p;
  int k;

  if (u == NULL) {
    fm_fail (err, "out of memory");
    return NULL;
  }
  u->base.ops = &dual_ops;
  u->base.p = *p;
  if (o)
    u->o = *o;
  else
    fm_disk_default_options (p, &u->o);
  /* Each half: half of everything the platters hold, one actuator. */
  h.actuators = 1;
  h.capacity = p->capacity / 2 / p->sector * p->sector;
  h.design_capacity = p->design_capacity / 2;
  h.heads = p->heads / 2;
  h.cache_bytes = p->cache_bytes / 2;
  h.cache_segments = p->cache_segments / 2;
  h.write_entries = p->write_entries > 1 ? p->write_entries / 2 : 1;
  h.media_cache_entries = p->media_cache_entries / 2;
  u->boundary = h.capacity;
  for (k = 0; k < 2; k++) {
    if (fm_profile_validate (&h, err) == -1)
      goto fail;
    u->half[k] =
        drive_new (&h, fm_hash (seed, FM_STREAM_PHASE, 1, k), &u->o, err);
    if (u->half[k] == NULL)
      goto fail;
  }
  return &u->base;

fail:
  dual_free (&u->base);
  return NULL;
}

/* Split rq into the parts each half serves; returns which halves (bit k
 * for half k) and fills part[k] in that half's own offsets.
 */
static unsigned
split (const struct dual *u, const struct fm_request *rq,
       struct fm_request part[2])
{
  uint64_t b = u->boundary, end = rq->offset + rq->length;

  part[0] = part[1] = *rq;
  if (rq->op == FM_OP_FLUSH)
    return 3;
  if (end <= b)
    return 1;
  part[1].offset = rq->offset > b ? rq->offset - b : 0;
  part[1].length = end - (rq->offset > b ? rq->offset : b);
  if (rq->offset >= b)
    return 2;
  part[0].length = b - rq->offset;
  return 3;
}

/* Fold part p of a request into the whole: it started with the first
 * part and ends with the last; the components add up.
 */
static void
merge (struct fm_timing *whole, const struct fm_timing *p, bool first)
{
  if (first) {
    *whole = *p;
    return;
  }
  if (p->start_ns < whole->start_ns) {
    whole->start_ns = p->start_ns;
    whole->queue_ns = p->queue_ns;
  }
  if (p->done_ns > whole->done_ns)
    whole->done_ns = p->done_ns;
  whole->overhead_ns += p->overhead_ns;
  whole->seek_ns += p->seek_ns;
  whole->rotation_ns += p->rotation_ns;
  whole->transfer_ns += p->transfer_ns;
  whole->destage_ns += p->destage_ns;
  whole->seeks += p->seeks;
  whole->cache_hit = whole->cache_hit && p->cache_hit;
  whole->write_cached = whole->write_cached && p->write_cached;
}

static void
dual_submit (struct fm_disk *d, const struct fm_request *rq,
             struct fm_timing *out)
{
  struct dual *u = (struct dual *)d;
  struct fm_request part[2];
  struct fm_timing t;
  unsigned halves = split (u, rq, part);
  bool first = true;
  int k;

  for (k = 0; k < 2; k++)
    if (halves & (1u << k)) {
      drive_submit (u->half[k], &part[k], &t);
      merge (out, &t, first);
      first = false;
      u->last = k;
    }
}

static void
dual_enqueue (struct fm_disk *d, const struct fm_request *rq, uint64_t tag)
{
  struct dual *u = (struct dual *)d;
  struct fm_request part[2];
  unsigned halves = split (u, rq, part);
  uint32_t s;
  int k;

  if (u->nfree == 0) {
    u->slot = grow (u->slot, (u->nslots + 64) * sizeof *u->slot);
    u->free_slot = grow (u->free_slot, (u->nslots + 64) * sizeof (uint32_t));
    for (s = 0; s < 64; s++)
      u->free_slot[u->nfree++] = (uint32_t)(u->nslots + 63 - s);
    u->nslots += 64;
  }
  s = u->free_slot[--u->nfree];
  u->slot[s].tag = tag;
  u->slot[s].parts = halves == 3 ? 2 : 1;
  u->slot[s].done = 0;
  for (k = 0; k < 2; k++)
    if (halves & (1u << k))
      drive_enqueue (u->half[k], &part[k], s);
}

/* The half whose next decision falls first (the first half on a tie). */
static int
next_half (const struct dual *u)
{
  return drive_next_decision (u->half[1]) < drive_next_decision (u->half[0])
             ? 1
             : 0;
}

static bool
dual_dispatch (struct fm_disk *d, uint64_t now, uint64_t *tag,
               struct fm_timing *t)
{
  struct dual *u = (struct dual *)d;
  struct fm_timing p;
  uint64_t s;
  int k;

  for (;;) {
    k = next_half (u);
    if (!drive_dispatch (u->half[k], now, &s, &p))
      return false;
    u->last = k;
    merge (&u->slot[s].t, &p, u->slot[s].done++ == 0);
    if (u->slot[s].done == u->slot[s].parts) {
      *tag = u->slot[s].tag;
      *t = u->slot[s].t;
      u->free_slot[u->nfree++] = (uint32_t)s;
      return true;
    }
  }
}

static uint64_t
dual_next_decision (const struct fm_disk *d)
{
  const struct dual *u = (const struct dual *)d;

  return drive_next_decision (u->half[next_half (u)]);
}

static size_t
dual_queued (const struct fm_disk *d)
{
  const struct dual *u = (const struct dual *)d;

  return u->nslots - u->nfree;
}

static uint64_t
dual_busy_until (const struct fm_disk *d)
{
  const struct dual *u = (const struct dual *)d;

  return max64 (drive_busy_until (u->half[0]), drive_busy_until (u->half[1]));
}

static uint64_t
dual_extend (struct fm_disk *d, uint64_t ns)
{
  return drive_extend (((struct dual *)d)->half[((struct dual *)d)->last], ns);
}

/* A half's destage or power-cut report, in the whole drive's offsets. */
static void
hop (void *opaque, uint64_t offset, uint64_t length)
{
  const struct destage_hop *h = opaque;

  h->fn (h->opaque, h->base + offset, length);
}

static void
dual_powercut (struct fm_disk *d, fm_destage_fn *fn, void *opaque)
{
  struct dual *u = (struct dual *)d;
  struct destage_hop h[2] = {{fn, opaque, 0}, {fn, opaque, u->boundary}};
  int k;

  for (k = 0; k < 2; k++)
    drive_powercut (u->half[k], hop, &h[k]);
}

static uint64_t
dual_dirty_bytes (const struct fm_disk *d)
{
  const struct dual *u = (const struct dual *)d;

  return drive_dirty_bytes (u->half[0]) + drive_dirty_bytes (u->half[1]);
}

static void
dual_on_destage (struct fm_disk *d, fm_destage_fn *fn, void *opaque)
{
  struct dual *u = (struct dual *)d;
  int k;

  for (k = 0; k < 2; k++) {
    u->hop[k] = (struct destage_hop){fn, opaque, k ? u->boundary : 0};
    drive_on_destage (u->half[k], fn ? hop : NULL, &u->hop[k]);
  }
}

static uint64_t
dual_spare_detour (const struct fm_disk *d, uint64_t offset)
{
  const struct dual *u = (const struct dual *)d;

  return offset < u->boundary
             ? drive_spare_detour (u->half[0], offset)
             : drive_spare_detour (u->half[1], offset - u->boundary);
}

static void
dual_smr_stats (const struct fm_disk *d, uint64_t *cache_bytes,
                uint64_t *clean_ns, uint64_t *bands_cleaned)
{
  /* The halves' media caches are not reported, as before the interface
   * existed, so that outputs stay comparable; summing them is open.
   */
  (void)d;
  *cache_bytes = *clean_ns = *bands_cleaned = 0;
}

static const struct fm_disk_ops dual_ops = {
    .free = dual_free,
    .on_destage = dual_on_destage,
    .submit = dual_submit,
    .enqueue = dual_enqueue,
    .dispatch = dual_dispatch,
    .next_decision = dual_next_decision,
    .queued = dual_queued,
    .extend = dual_extend,
    .spare_detour = dual_spare_detour,
    .busy_until = dual_busy_until,
    .powercut = dual_powercut,
    .dirty_bytes = dual_dirty_bytes,
    .smr_stats = dual_smr_stats,
};
