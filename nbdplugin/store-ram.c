/* futuredisk — nbdplugin: sparse store in RAM, hashed layout (disks over
 * 64 GiB, and disks behind a write cache; smaller ones use the flat
 * layout, store-flat.c, unless the address space for it cannot be
 * reserved).
 *
 * 4 KiB pages, grouped sixteen to a 64 KiB group, the groups in an
 * open-addressing hash table keyed by group number (16 bytes an entry, at
 * most half full), where a lonely page costs 4 KiB plus a 128-byte group
 * and two table slots, wherever it lies: 1 GiB written in scattered 4 KiB
 * pieces over 8 TB costs about 1.05 GiB, where a radix tree pays a chain
 * of nodes per lonely page (and the flat layout a page-table page).  A
 * sequential 1 MiB read costs 16 lookups.  Pages come from 2 MiB slabs,
 * page-aligned and without per-page malloc headers; freed pages go to a
 * free list for reuse.  Extents must still skip terabytes of holes
 * quickly, so a bitmap with one bit per 2 MiB region says where pages may
 * be (a set bit may be stale after a trim; a clear bit is never wrong).
 *
 * Pages held by pointer can change hands: a write cache borrows pages
 * (lend) and, at destage, hands a page written whole over for the one
 * the store held there (adopt), so the bytes are not copied again.  The
 * store's own layout for such disks, whatever their size.
 *
 * Locking: a rwlock.  Reading and writing existing pages share it (the
 * bytes are copied under the shared lock, which is what keeps a page from
 * being freed, or handed over, and reused at another offset, under a
 * reader); adding, freeing or exchanging pages takes it exclusively,
 * briefly.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "store.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

#define GROUP_PAGES  16
#define REGION_PAGES 512       /* 2 MiB per bitmap bit */
#define SLAB_BYTES   (2 << 20) /* pages are carved from slabs this big */
#define EMPTY        0         /* keys are group number + 1 */
#define TOMBSTONE    UINT64_MAX

struct group {
  char *page[GROUP_PAGES];
};

struct entry {
  uint64_t key;
  struct group *g;
};

/* Pages lent to a write cache, freed at close. */
struct lent {
  struct lent *next;
  char *map;
  size_t len;
};

struct ram {
  struct store s;
  pthread_rwlock_t lock; /* the table, groups and bitmap */
  struct entry *table;
  uint64_t cap;      /* entries, a power of two */
  uint64_t used;     /* live entries */
  uint64_t dead;     /* tombstones */
  uint64_t pages;    /* pages in use */
  uint64_t *regions; /* bitmap: 1 = the region may hold pages */

  pthread_mutex_t alloc_lock; /* the slabs and the free list */
  char **slabs;
  size_t nslabs, slabs_alloc;
  size_t slab_used;  /* bytes handed out from the newest slab */
  char *free_pages;  /* linked through their first 8 bytes */
  size_t nfree;      /* pages on it */
  size_t lent_pages; /* pages lent, all told */
  struct lent *lent;
};

static const char zero_page[STORE_PAGE];

/* ---- pages ---- */

/* Up to `want` fresh pages from the newest slab, contiguous; *got says
 * how many.  NULL out of memory.  alloc_lock held.
 */
static char *
slab_carve (struct ram *r, size_t want, size_t *got)
{
  char *pg;

  if (r->nslabs == 0 || r->slab_used == SLAB_BYTES) {
    char *slab;

    if (r->nslabs == r->slabs_alloc) {
      size_t n = r->slabs_alloc ? 2 * r->slabs_alloc : 64;
      char **ns = realloc (r->slabs, n * sizeof *ns);
      if (ns == NULL)
        return NULL;
      r->slabs = ns;
      r->slabs_alloc = n;
    }
    /* mmap: zeroed, page-aligned, and only resident once touched. */
    slab = mmap (NULL, SLAB_BYTES, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (slab == MAP_FAILED)
      return NULL;
    r->slabs[r->nslabs++] = slab;
    r->slab_used = 0;
  }
  *got = (SLAB_BYTES - r->slab_used) / STORE_PAGE;
  if (*got > want)
    *got = want;
  pg = r->slabs[r->nslabs - 1] + r->slab_used;
  r->slab_used += *got * STORE_PAGE;
  return pg;
}

/* Up to `want` (at most TAKE_MAX) pages into pg[]; returns how many, 0
 * out of memory.  Pages waiting on the free list (reused, or prepared)
 * come first; else fresh ones, contiguous in a slab (a large write to a
 * fresh area then reads back with one memcpy).
 */
#define TAKE_MAX 64
static size_t
pages_take (struct ram *r, char **pg, size_t want)
{
  size_t got = 0, k;

  pthread_mutex_lock (&r->alloc_lock);
  while (got < want && r->free_pages) {
    pg[got] = r->free_pages;
    memcpy (&r->free_pages, pg[got], sizeof (char *));
    r->nfree--;
    got++;
  }
  if (got == 0 && (pg[0] = slab_carve (r, want, &got)) != NULL)
    for (k = 1; k < got; k++)
      pg[k] = pg[0] + k * STORE_PAGE;
  pthread_mutex_unlock (&r->alloc_lock);
  return got;
}

static void
page_free (struct ram *r, char *pg)
{
  pthread_mutex_lock (&r->alloc_lock);
  memcpy (pg, &r->free_pages, sizeof (char *));
  r->free_pages = pg;
  r->nfree++;
  pthread_mutex_unlock (&r->alloc_lock);
}

/* Put `need` more pages on the free list, resident: the kernel faults
 * fresh ones in here, where the writes that take them later (a destage,
 * under the drive's lock) would each wait for it.  Writes prepared
 * together, or one page prepared twice before its destage, leave pages
 * over, which the next fresh writes take.  The list holds at most
 * PREPARED_MAX pages plus as many as were lent (a write cache can hold
 * that many prepared writes before it destages them); prepares past it
 * leave their pages to the write.
 */
#define PREPARED_MAX 16384 /* pages: 64 MiB */
static void
free_add (struct ram *r, size_t need)
{
  while (need > 0) {
    char *run, *head = NULL;
    size_t got = 0, k;

    pthread_mutex_lock (&r->alloc_lock);
    run = r->nfree < PREPARED_MAX + r->lent_pages ? slab_carve (r, need, &got)
                                                  : NULL;
    pthread_mutex_unlock (&r->alloc_lock);
    if (run == NULL)
      return;
    need -= got;
    /* Faulted in by one call (a fault per page costs more); a kernel
     * without MADV_POPULATE_WRITE faults them as they are linked.
     */
    madvise (run, got * STORE_PAGE, MADV_POPULATE_WRITE);
    for (k = got; k-- > 0;) {
      memcpy (run + k * STORE_PAGE, &head, sizeof head);
      head = run + k * STORE_PAGE;
    }
    pthread_mutex_lock (&r->alloc_lock);
    memcpy (run + (got - 1) * STORE_PAGE, &r->free_pages, sizeof (char *));
    r->free_pages = head;
    r->nfree += got;
    pthread_mutex_unlock (&r->alloc_lock);
  }
}

/* ---- the table ---- */

static uint64_t
hash (uint64_t key)
{
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdULL;
  key ^= key >> 33;
  return key;
}

/* The slot holding group gn, or NULL.  Lock held (either way). */
static struct entry *
lookup (const struct ram *r, uint64_t gn)
{
  uint64_t key = gn + 1, i = hash (key) & (r->cap - 1);

  for (;;) {
    struct entry *e = &r->table[i];
    if (e->key == key)
      return e;
    if (e->key == EMPTY)
      return NULL;
    i = (i + 1) & (r->cap - 1);
  }
}

/* The page holding byte `offset`, or NULL.  Lock held. */
static char *
page_at (const struct ram *r, uint64_t offset)
{
  uint64_t p = offset / STORE_PAGE;
  const struct entry *e = lookup (r, p / GROUP_PAGES);

  return e ? e->g->page[p % GROUP_PAGES] : NULL;
}

/* Rebuild the table at a new capacity, dropping tombstones.  Exclusive. */
static int
rehash (struct ram *r, uint64_t cap)
{
  struct entry *t = calloc (cap, sizeof *t);
  uint64_t i;

  if (t == NULL)
    return -1;
  for (i = 0; i < r->cap; i++) {
    uint64_t key = r->table[i].key, j;
    if (key == EMPTY || key == TOMBSTONE)
      continue;
    for (j = hash (key) & (cap - 1); t[j].key != EMPTY; j = (j + 1) & (cap - 1))
      ;
    t[j] = r->table[i];
  }
  free (r->table);
  r->table = t;
  r->cap = cap;
  r->dead = 0;
  return 0;
}

/* Put page pg at page number p, unless someone did first; returns the
 * page now there, or NULL out of memory.  Exclusive.
 */
static char *
insert (struct ram *r, uint64_t p, char *pg)
{
  uint64_t gn = p / GROUP_PAGES, key = gn + 1, i;
  struct entry *e = lookup (r, gn);

  if (e == NULL) {
    struct group *g = calloc (1, sizeof *g);

    if (g == NULL ||
        ((r->used + r->dead + 1) * 2 > r->cap &&
         rehash (r, r->used * 4 > r->cap ? r->cap * 2 : r->cap) == -1)) {
      free (g);
      return NULL;
    }
    for (i = hash (key) & (r->cap - 1);; i = (i + 1) & (r->cap - 1))
      if (r->table[i].key == EMPTY || r->table[i].key == TOMBSTONE)
        break;
    e = &r->table[i];
    if (e->key == TOMBSTONE)
      r->dead--;
    e->key = key;
    e->g = g;
    r->used++;
  }
  if (e->g->page[p % GROUP_PAGES])
    return e->g->page[p % GROUP_PAGES];
  e->g->page[p % GROUP_PAGES] = pg;
  r->pages++;
  r->regions[p / REGION_PAGES / 64] |= 1ULL << (p / REGION_PAGES % 64);
  return pg;
}

/* Free page p (exclusive); the group goes when its last page does. */
static void
remove_page (struct ram *r, struct entry *e, uint64_t p)
{
  int k;

  page_free (r, e->g->page[p % GROUP_PAGES]);
  e->g->page[p % GROUP_PAGES] = NULL;
  r->pages--;
  for (k = 0; k < GROUP_PAGES; k++)
    if (e->g->page[k])
      return;
  free (e->g);
  e->g = NULL;
  e->key = TOMBSTONE;
  r->used--;
  r->dead++;
}

/* ---- the store ---- */

static int
ram_read (struct store *s, void *buf, uint64_t count, uint64_t offset)
{
  struct ram *r = (struct ram *)s;
  const struct entry *e = NULL;
  uint64_t gn = UINT64_MAX; /* the group e is for */
  const char *run = NULL;   /* source of the pending copy, or NULL */
  char *out = buf, *run_out = buf;
  uint64_t run_len = 0;

  /* Pages written in order sit in order in their slab: gather runs of
   * adjacent pages (and look each group up once) to copy with one memcpy.
   */
  pthread_rwlock_rdlock (&r->lock);
  while (count > 0) {
    uint64_t p = offset / STORE_PAGE, in = offset % STORE_PAGE;
    uint64_t n = STORE_PAGE - in;
    const char *pg;

    if (n > count)
      n = count;
    if (p / GROUP_PAGES != gn) {
      gn = p / GROUP_PAGES;
      e = lookup (r, gn);
    }
    pg = e ? e->g->page[p % GROUP_PAGES] : NULL;
    if (run && pg && pg + in == run + run_len) {
      run_len += n;
    } else {
      if (run)
        memcpy (run_out, run, run_len);
      if (pg == NULL) {
        memset (out, 0, n);
        run = NULL;
      } else {
        run = pg + in;
        run_out = out;
        run_len = n;
      }
    }
    out += n;
    offset += n;
    count -= n;
  }
  if (run)
    memcpy (run_out, run, run_len);
  pthread_rwlock_unlock (&r->lock);
  return 0;
}

static int
oom (struct store *s, uint64_t count)
{
  snprintf (s->err.msg, sizeof s->err.msg, "out of memory storing %llu bytes",
            (unsigned long long)count);
  errno = ENOMEM;
  return -1;
}

/* Copy bytes [in, in + n) of a page's worth from src into the fresh page
 * pg, zeroing the rest of it.
 */
static void
fill_fresh (char *pg, uint64_t in, uint64_t n, const char *src)
{
  memset (pg, 0, in);
  memcpy (pg + in, src, n);
  memset (pg + in + n, 0, STORE_PAGE - in - n);
}

static int
ram_write (struct store *s, const void *buf, uint64_t count, uint64_t offset)
{
  struct ram *r = (struct ram *)s;
  const char *src = buf;

  /* Pages that exist are written in place under the shared lock. */
  pthread_rwlock_rdlock (&r->lock);
  while (count > 0) {
    uint64_t in = offset % STORE_PAGE, n = STORE_PAGE - in;
    char *pg = page_at (r, offset);

    if (pg == NULL)
      break;
    if (n > count)
      n = count;
    memcpy (pg + in, src, n);
    src += n;
    offset += n;
    count -= n;
  }
  pthread_rwlock_unlock (&r->lock);

  /* The rest goes to fresh pages, contiguous so that it reads back with
   * one memcpy, and filled before the table is locked: nobody can see
   * them yet, and first touching fresh memory (the kernel zeroing it) is
   * the dearest part of a write.  Then one exclusive hold adds them all.
   * A page someone else added meanwhile is written in place instead.
   */
  while (count > 0) {
    uint64_t in = offset % STORE_PAGE, run_off = offset, left = count;
    size_t want = (in + count + STORE_PAGE - 1) / STORE_PAGE, got, k;
    char *run[TAKE_MAX];
    const char *run_src = src;

    got = pages_take (r, run, want < TAKE_MAX ? want : TAKE_MAX);
    if (got == 0)
      return oom (s, count);
    for (k = 0; k < got; k++) {
      uint64_t pin = run_off % STORE_PAGE, n = STORE_PAGE - pin;
      if (n > left)
        n = left;
      fill_fresh (run[k], pin, n, run_src);
      run_src += n;
      run_off += n;
      left -= n;
    }
    pthread_rwlock_wrlock (&r->lock);
    for (k = 0; k < got; k++) {
      uint64_t pin = offset % STORE_PAGE, n = STORE_PAGE - pin;
      char *pg = insert (r, offset / STORE_PAGE, run[k]);
      if (n > count)
        n = count;
      if (pg == NULL) {
        pthread_rwlock_unlock (&r->lock);
        for (; k < got; k++)
          page_free (r, run[k]);
        return oom (s, count);
      }
      if (pg != run[k]) { /* added by a racing writer: ours goes on top */
        memcpy (pg + pin, src, n);
        page_free (r, run[k]);
      }
      src += n;
      offset += n;
      count -= n;
    }
    pthread_rwlock_unlock (&r->lock);
  }
  return 0;
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
    struct entry *e;

    if (n > count)
      n = count;
    if (!(r->regions[p / REGION_PAGES / 64] &
          (1ULL << (p / REGION_PAGES % 64)))) {
      /* No page in this region: skip to its end. */
      uint64_t end = (p / REGION_PAGES + 1) * REGION_PAGES * STORE_PAGE;
      n = end - offset < count ? end - offset : count;
    } else if ((e = lookup (r, p / GROUP_PAGES)) != NULL &&
               e->g->page[p % GROUP_PAGES]) {
      if (n == STORE_PAGE)
        remove_page (r, e, p);
      else
        memset (e->g->page[p % GROUP_PAGES] + in, 0, n);
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
    uint64_t p = offset / STORE_PAGE, reg = p / REGION_PAGES, next;
    bool hole;

    if (r->regions[reg / 64] == 0) {
      /* 64 empty regions (128 MiB) at once. */
      next = (reg / 64 + 1) * 64 * REGION_PAGES;
      hole = true;
    } else if (!(r->regions[reg / 64] & (1ULL << (reg % 64)))) {
      next = (reg + 1) * REGION_PAGES;
      hole = true;
    } else {
      next = p + 1;
      hole = page_at (r, offset) == NULL;
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
  struct ram *r = (struct ram *)s;
  uint64_t n;

  pthread_rwlock_rdlock (&r->lock);
  n = r->pages * STORE_PAGE;
  pthread_rwlock_unlock (&r->lock);
  return n;
}

static void
ram_close (struct store *s)
{
  struct ram *r = (struct ram *)s;
  uint64_t i;

  for (i = 0; i < r->cap; i++)
    if (r->table[i].key != EMPTY && r->table[i].key != TOMBSTONE)
      free (r->table[i].g);
  for (i = 0; i < r->nslabs; i++)
    munmap (r->slabs[i], SLAB_BYTES);
  free (r->slabs);
  while (r->lent) {
    struct lent *l = r->lent;
    r->lent = l->next;
    munmap (l->map, l->len);
    free (l);
  }
  free (r->table);
  free (r->regions);
  pthread_rwlock_destroy (&r->lock);
  pthread_mutex_destroy (&r->alloc_lock);
  free (r);
}

static void
ram_prepare (struct store *s, uint64_t count, uint64_t offset)
{
  struct ram *r = (struct ram *)s;
  uint64_t p, end;
  size_t need = 0;

  if (count == 0)
    return;
  end = (offset + count - 1) / STORE_PAGE + 1;
  pthread_rwlock_rdlock (&r->lock);
  for (p = offset / STORE_PAGE; p < end; p++)
    need += page_at (r, p * STORE_PAGE) == NULL;
  pthread_rwlock_unlock (&r->lock);
  if (need)
    free_add (r, need);
}

static char *
ram_lend (struct store *s, size_t n)
{
  struct ram *r = (struct ram *)s;
  struct lent *l = malloc (sizeof *l);
  char *map;

  if (l == NULL)
    return NULL;
  /* Resident now: the cache's pages are its DRAM, there from the start. */
  map = mmap (NULL, n * STORE_PAGE, PROT_READ | PROT_WRITE,
              MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (map == MAP_FAILED) {
    free (l);
    return NULL;
  }
  *l = (struct lent){.map = map, .len = n * STORE_PAGE};
  pthread_mutex_lock (&r->alloc_lock);
  l->next = r->lent;
  r->lent = l;
  r->lent_pages += n;
  pthread_mutex_unlock (&r->alloc_lock);
  return map;
}

static void
ram_adopt (struct store *s, char *const *pages, const uint64_t *offsets,
           char **old, size_t n)
{
  struct ram *r = (struct ram *)s;
  size_t i;

  pthread_rwlock_wrlock (&r->lock);
  for (i = 0; i < n; i++) {
    uint64_t p = offsets[i] / STORE_PAGE;
    struct entry *e = lookup (r, p / GROUP_PAGES);

    old[i] = e ? e->g->page[p % GROUP_PAGES] : NULL;
    if (old[i])
      e->g->page[p % GROUP_PAGES] = pages[i];
  }
  pthread_rwlock_unlock (&r->lock);
}

static const struct store_ops ram_ops = {
    .name = "ram-hashed",
    .read = ram_read,
    .write = ram_write,
    .zero = ram_zero,
    .flush = ram_flush,
    .extents = ram_extents,
    .bytes_stored = ram_bytes_stored,
    .prepare = ram_prepare,
    .lend = ram_lend,
    .adopt = ram_adopt,
    .close = ram_close,
};

struct store *
store_ram_new (uint64_t size, bool for_cache, struct fm_err *err)
{
  struct ram *r;
  uint64_t pages = (size + STORE_PAGE - 1) / STORE_PAGE;
  uint64_t regions = pages / REGION_PAGES + 1;

  if (size <= STORE_FLAT_MAX && !for_cache) {
    struct store *s = store_flat_new (size, err);
    if (s)
      return s;
  }
  if ((r = calloc (1, sizeof *r)) == NULL)
    goto oom;
  r->cap = 1024;
  r->table = calloc (r->cap, sizeof *r->table);
  /* One bit per 2 MiB: 1.5 MiB of bitmap for 24 TB, and calloc leaves the
   * pages of it that are never set untouched.
   */
  r->regions = calloc (regions / 64 + 1, sizeof *r->regions);
  if (r->table == NULL || r->regions == NULL)
    goto oom;
  pthread_rwlock_init (&r->lock, NULL);
  pthread_mutex_init (&r->alloc_lock, NULL);
  r->s.ops = &ram_ops;
  r->s.size = size;
  return &r->s;

oom:
  if (r) {
    free (r->table);
    free (r->regions);
  }
  free (r);
  fm_fail (err, "out of memory for a %llu-byte store",
           (unsigned long long)size);
  return NULL;
}
