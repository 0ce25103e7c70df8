/* futuredisk — nbdplugin: sparse store in RAM.
 *
 * A three-level radix tree of 4 KiB pages: a top array sized by the disk,
 * 512-entry middle nodes (each covering 1 GiB) and 64-entry leaves (256
 * KiB), so a scattered 4 KiB write costs at most 4 KiB of page, 512 B of
 * leaf and 4 KiB of middle node, and an untouched terabyte costs 8 bytes
 * per gigabyte.  Nodes and pages are installed with compare-and-swap, so
 * reads and writes never take a lock; zero frees pages and so takes the
 * tree exclusively (pthread rwlock, writers = zero).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

#define LEAF_BITS 6
#define MID_BITS  9
#define LEAF_N    (1u << LEAF_BITS)
#define MID_N     (1u << MID_BITS)

struct leaf {
  char *page[LEAF_N];
};

struct mid {
  struct leaf *leaf[MID_N];
};

struct ram {
  struct store s;
  pthread_rwlock_t lock;
  uint64_t ntop;
  uint64_t pages; /* allocated pages, for bytes_stored */
  struct mid **top;
};

static const char zero_page[STORE_PAGE];

/* The page holding byte `offset`, or NULL; optionally allocating it. */
static char *
page_at (struct ram *r, uint64_t offset, bool create)
{
  uint64_t p = offset / STORE_PAGE;
  struct mid **mp = &r->top[p >> (LEAF_BITS + MID_BITS)];
  struct mid *m = __atomic_load_n (mp, __ATOMIC_ACQUIRE);
  struct leaf **lp, *l;
  char **pp, *pg;

  if (m == NULL) {
    struct mid *nm;
    if (!create || (nm = calloc (1, sizeof *nm)) == NULL)
      return NULL;
    if (!__atomic_compare_exchange_n (mp, &m, nm, false, __ATOMIC_ACQ_REL,
                                      __ATOMIC_ACQUIRE))
      free (nm); /* someone else installed one: m now holds it */
    else
      m = nm;
  }
  lp = &m->leaf[(p >> LEAF_BITS) & (MID_N - 1)];
  l = __atomic_load_n (lp, __ATOMIC_ACQUIRE);
  if (l == NULL) {
    struct leaf *nl;
    if (!create || (nl = calloc (1, sizeof *nl)) == NULL)
      return NULL;
    if (!__atomic_compare_exchange_n (lp, &l, nl, false, __ATOMIC_ACQ_REL,
                                      __ATOMIC_ACQUIRE))
      free (nl);
    else
      l = nl;
  }
  pp = &l->page[p & (LEAF_N - 1)];
  pg = __atomic_load_n (pp, __ATOMIC_ACQUIRE);
  if (pg == NULL && create) {
    char *np = calloc (1, STORE_PAGE);
    if (np == NULL)
      return NULL;
    if (!__atomic_compare_exchange_n (pp, &pg, np, false, __ATOMIC_ACQ_REL,
                                      __ATOMIC_ACQUIRE))
      free (np);
    else {
      pg = np;
      __atomic_add_fetch (&r->pages, 1, __ATOMIC_RELAXED);
    }
  }
  return pg;
}

static int
ram_read (struct store *s, void *buf, uint64_t count, uint64_t offset)
{
  struct ram *r = (struct ram *)s;
  char *out = buf;

  pthread_rwlock_rdlock (&r->lock);
  while (count > 0) {
    uint64_t in = offset % STORE_PAGE, n = STORE_PAGE - in;
    const char *pg = page_at (r, offset, false);

    if (n > count)
      n = count;
    memcpy (out, pg ? pg + in : zero_page, n);
    out += n;
    offset += n;
    count -= n;
  }
  pthread_rwlock_unlock (&r->lock);
  return 0;
}

static int
ram_write (struct store *s, const void *buf, uint64_t count, uint64_t offset)
{
  struct ram *r = (struct ram *)s;
  const char *in_buf = buf;
  int ret = 0;

  pthread_rwlock_rdlock (&r->lock);
  while (count > 0) {
    uint64_t in = offset % STORE_PAGE, n = STORE_PAGE - in;
    char *pg;

    if (n > count)
      n = count;
    pg = page_at (r, offset, true);
    if (pg == NULL) {
      snprintf (s->err.msg, sizeof s->err.msg,
                "out of memory storing %llu bytes", (unsigned long long)count);
      errno = ENOMEM;
      ret = -1;
      break;
    }
    memcpy (pg + in, in_buf, n);
    in_buf += n;
    offset += n;
    count -= n;
  }
  pthread_rwlock_unlock (&r->lock);
  return ret;
}

static int
ram_zero (struct store *s, uint64_t count, uint64_t offset, bool punch)
{
  struct ram *r = (struct ram *)s;

  if (!punch) { /* allocated zeros: write them */
    while (count > 0) {
      uint64_t n = STORE_PAGE - offset % STORE_PAGE;
      if (n > count)
        n = count;
      if (ram_write (s, zero_page, n, offset) == -1)
        return -1;
      offset += n;
      count -= n;
    }
    return 0;
  }
  pthread_rwlock_wrlock (&r->lock);
  while (count > 0) {
    uint64_t p = offset / STORE_PAGE, in = offset % STORE_PAGE;
    uint64_t n = STORE_PAGE - in;
    struct mid *m = r->top[p >> (LEAF_BITS + MID_BITS)];
    struct leaf *l = m ? m->leaf[(p >> LEAF_BITS) & (MID_N - 1)] : NULL;

    if (n > count)
      n = count;
    if (l == NULL) {
      /* Skip the rest of this empty leaf at once. */
      uint64_t leaf_end = ((p | (LEAF_N - 1)) + 1) * STORE_PAGE;
      n = leaf_end - offset < count ? leaf_end - offset : count;
    } else if (l->page[p & (LEAF_N - 1)]) {
      if (n == STORE_PAGE) {
        free (l->page[p & (LEAF_N - 1)]);
        l->page[p & (LEAF_N - 1)] = NULL;
        r->pages--;
      } else {
        memset (l->page[p & (LEAF_N - 1)] + in, 0, n);
      }
    }
    offset += n;
    count -= n;
  }
  pthread_rwlock_unlock (&r->lock);
  return 0;
}

static int
ram_flush (struct store *s)
{
  return 0;
}

static int
ram_extents (struct store *s, uint64_t count, uint64_t offset,
             store_extent_fn *fn, void *opaque)
{
  struct ram *r = (struct ram *)s;
  uint64_t run_start = offset, end = offset + count;
  bool run_hole = false, have_run = false;
  int ret = 0;

  pthread_rwlock_rdlock (&r->lock);
  while (offset < end) {
    uint64_t p = offset / STORE_PAGE;
    struct mid *m = __atomic_load_n (&r->top[p >> (LEAF_BITS + MID_BITS)],
                                     __ATOMIC_ACQUIRE);
    struct leaf *l =
        m ? __atomic_load_n (&m->leaf[(p >> LEAF_BITS) & (MID_N - 1)],
                             __ATOMIC_ACQUIRE)
          : NULL;
    uint64_t next;
    bool hole;

    if (m == NULL) {
      next = ((p >> (LEAF_BITS + MID_BITS)) + 1) << (LEAF_BITS + MID_BITS);
      hole = true;
    } else if (l == NULL) {
      next = ((p >> LEAF_BITS) + 1) << LEAF_BITS;
      hole = true;
    } else {
      next = p + 1;
      hole = __atomic_load_n (&l->page[p & (LEAF_N - 1)], __ATOMIC_ACQUIRE) ==
             NULL;
    }
    next *= STORE_PAGE;
    if (next > end)
      next = end;
    if (have_run && hole != run_hole) {
      int rc = fn (opaque, run_start, offset - run_start, run_hole);
      if (rc != 0) {
        ret = rc < 0 ? -1 : 0;
        goto out;
      }
      run_start = offset;
    }
    run_hole = hole;
    have_run = true;
    offset = next;
  }
  if (have_run && fn (opaque, run_start, end - run_start, run_hole) < 0)
    ret = -1;
out:
  pthread_rwlock_unlock (&r->lock);
  return ret;
}

static uint64_t
ram_bytes_stored (struct store *s)
{
  return __atomic_load_n (&((struct ram *)s)->pages, __ATOMIC_RELAXED) *
         STORE_PAGE;
}

static void
ram_close (struct store *s)
{
  struct ram *r = (struct ram *)s;
  uint64_t i, j, k;

  for (i = 0; i < r->ntop; i++) {
    struct mid *m = r->top[i];
    if (m == NULL)
      continue;
    for (j = 0; j < MID_N; j++) {
      struct leaf *l = m->leaf[j];
      if (l == NULL)
        continue;
      for (k = 0; k < LEAF_N; k++)
        free (l->page[k]);
      free (l);
    }
    free (m);
  }
  free (r->top);
  pthread_rwlock_destroy (&r->lock);
  free (r);
}

static const struct store_ops ram_ops = {
    .name = "ram",
    .read = ram_read,
    .write = ram_write,
    .zero = ram_zero,
    .flush = ram_flush,
    .extents = ram_extents,
    .bytes_stored = ram_bytes_stored,
    .close = ram_close,
};

struct store *
store_ram_new (uint64_t size, struct fm_err *err)
{
  struct ram *r = calloc (1, sizeof *r);
  uint64_t pages = (size + STORE_PAGE - 1) / STORE_PAGE;

  if (r == NULL)
    goto oom;
  r->ntop = (pages >> (LEAF_BITS + MID_BITS)) + 1;
  r->top = calloc (r->ntop, sizeof *r->top);
  if (r->top == NULL)
    goto oom;
  pthread_rwlock_init (&r->lock, NULL);
  r->s.ops = &ram_ops;
  r->s.size = size;
  return &r->s;

oom:
  if (r)
    free (r->top);
  free (r);
  snprintf (err->msg, sizeof err->msg, "out of memory for a %llu-byte store",
            (unsigned long long)size);
  return NULL;
}
