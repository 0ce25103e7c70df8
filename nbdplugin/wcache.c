/* futuredisk — nbdplugin: the drive's volatile write cache (see wcache.h).
 *
 * A chained hash of 4 KiB pages by page number.  The cache holds at most
 * the profile's cache size (the model destages before it overflows), so
 * the table stays small; operations on a range visit the range's pages
 * when it is shorter than the cache and every cached page otherwise.
 *
 * The pages come from slabs mapped and populated up front, so that a
 * write never waits for the allocator or for the kernel to fault in and
 * clear fresh memory: before the pool, every cached 4 KiB page was a
 * malloc, freed again at destage, and glibc gave the freed heap top back
 * to the kernel, so the next write faulted it in again (3/4 of the
 * server's time on 1 MiB writes, under the drive's lock).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "wcache.h"

#define BLOCK           512
#define BLOCKS_PER_PAGE (STORE_PAGE / BLOCK)
#define ALL_BLOCKS      ((uint8_t)((1u << BLOCKS_PER_PAGE) - 1))

/* Headroom beyond the cache size for pages the model's sectors share
 * with others (pages)...
 */
#define POOL_SLACK 256
/* ... and the least a pool that runs dry gets more by (pages). */
#define POOL_GROW 256
/* Pages handed to the store at once. */
#define ADOPT_BATCH 64

struct cpage {
  struct cpage *next; /* in its bucket, or in the free list */
  uint64_t page;      /* page number */
  uint8_t dirty;      /* one bit per 512-byte block */
  char *data;         /* STORE_PAGE bytes in a slab */
};

/* One mapping of pages and their headers, kept until wcache_free (the
 * pages are the store's where it lends them, and only headers are here).
 */
struct slab {
  struct slab *next;
  size_t len; /* bytes mapped */
  char *map;
};

struct wcache {
  struct store *backing;
  struct cpage **bucket;
  size_t nbuckets; /* power of two */
  size_t npages;   /* cached */
  uint64_t dirty_blocks;
  struct cpage *free_pages;
  struct slab *slabs;
  uint64_t pool_pages, grows;
  struct cpage *batch[ADOPT_BATCH]; /* pages on their way to the store */
  size_t nbatch;
};

/* Memory resident from the start: a private mapping, populated (the
 * kernel faults every page in now, written, so not the zero page), and
 * zero.  NULL if it cannot be had.
 */
static void *
populated (size_t len)
{
  void *p = mmap (NULL, len, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

  return p == MAP_FAILED ? NULL : p;
}

/* n more pages into the free list: one slab holds their data (page
 * aligned, first) and their headers.
 */
static int
pool_add (struct wcache *w, size_t n)
{
  bool lent = w->backing->ops->lend != NULL;
  size_t own = lent ? 0 : n * STORE_PAGE;
  size_t len = own + n * sizeof (struct cpage) + sizeof (struct slab);
  char *map = populated (len), *data;
  struct cpage *c;
  struct slab *s;
  size_t i;

  if (map == NULL)
    return -1;
  data = lent ? w->backing->ops->lend (w->backing, n) : map;
  if (data == NULL) {
    munmap (map, len);
    return -1;
  }
  c = (struct cpage *)(map + own);
  s = (struct slab *)(c + n);
  *s = (struct slab){.next = w->slabs, .len = len, .map = map};
  w->slabs = s;
  for (i = 0; i < n; i++) {
    c[i].data = data + i * STORE_PAGE;
    c[i].next = w->free_pages;
    w->free_pages = &c[i];
  }
  w->pool_pages += n;
  return 0;
}

/* The bucket array for n buckets, populated like the pages. */
static struct cpage **
buckets (size_t n)
{
  return populated (n * sizeof (struct cpage *));
}

/* The low bits of the page number with the higher ones folded in: the
 * pages of a run fill neighbouring buckets (a sequential write touches a
 * cache line of the table per 8 pages, not one per page), and pages a
 * multiple of the table apart (a file system's groups) still part.
 */
static size_t
slot_in (uint64_t page, size_t nbuckets)
{
  unsigned k = (unsigned)__builtin_ctzll (nbuckets);

  return (size_t)(page ^ (page >> k) ^ (page >> 2 * k)) & (nbuckets - 1);
}

/* Enough buckets for every page of the pool: the table never grows on
 * the request path while the pool does not.
 */
static int
grow (struct wcache *w)
{
  size_t n = w->nbuckets, i;
  struct cpage **b;

  while (n < w->pool_pages)
    n *= 2;
  if (n == w->nbuckets)
    return 0;
  if ((b = buckets (n)) == NULL)
    return -1;
  for (i = 0; i < w->nbuckets; i++) {
    struct cpage *c = w->bucket[i], *next;
    for (; c; c = next) {
      size_t s = slot_in (c->page, n);
      next = c->next;
      c->next = b[s];
      b[s] = c;
    }
  }
  munmap (w->bucket, w->nbuckets * sizeof *w->bucket);
  w->bucket = b;
  w->nbuckets = n;
  return 0;
}

struct wcache *
wcache_new (struct store *backing, uint64_t bytes)
{
  struct wcache *w = calloc (1, sizeof *w);
  uint64_t disk_pages = (backing->size + STORE_PAGE - 1) / STORE_PAGE;
  uint64_t n = (bytes + STORE_PAGE - 1) / STORE_PAGE;

  if (w == NULL)
    return NULL;
  w->backing = backing;
  /* No more than the disk has, which a small disk with a big cache
   * profile would otherwise pay for in full.
   */
  n = bytes ? n + POOL_SLACK : 0;
  if (n > disk_pages)
    n = disk_pages;
  w->nbuckets = 1024;
  if ((n && pool_add (w, (size_t)n) == -1) ||
      (w->bucket = buckets (w->nbuckets)) == NULL || grow (w) == -1) {
    wcache_free (w);
    return NULL;
  }
  return w;
}

void
wcache_free (struct wcache *w)
{
  struct slab *s, *next;

  if (w == NULL)
    return;
  /* Cached pages live in the slabs: nothing to free one by one. */
  if (w->bucket)
    munmap (w->bucket, w->nbuckets * sizeof *w->bucket);
  for (s = w->slabs; s; s = next) {
    next = s->next;
    munmap (s->map, s->len);
  }
  free (w);
}

uint64_t
wcache_pool_pages (const struct wcache *w)
{
  return w->pool_pages;
}

uint64_t
wcache_pool_grows (const struct wcache *w)
{
  return w->grows;
}

static size_t
slot (const struct wcache *w, uint64_t page)
{
  return slot_in (page, w->nbuckets);
}

static struct cpage *
find (const struct wcache *w, uint64_t page)
{
  struct cpage *c = w->bucket[slot (w, page)];

  while (c && c->page != page)
    c = c->next;
  return c;
}

static void
drop (struct wcache *w, struct cpage *c)
{
  struct cpage **pp = &w->bucket[slot (w, c->page)];

  while (*pp != c)
    pp = &(*pp)->next;
  *pp = c->next;
  w->npages--;
  c->next = w->free_pages;
  w->free_pages = c;
}

/* A page from the pool for page number `page`, in its bucket.  A pool
 * that has run dry gets another slab (a quarter more, at least
 * POOL_GROW pages) and keeps it: a new high-water mark, not a cost per
 * request.
 */
static struct cpage *
take (struct wcache *w, uint64_t page)
{
  struct cpage *c = w->free_pages;

  if (c == NULL) {
    uint64_t more =
        w->pool_pages / 4 > POOL_GROW ? w->pool_pages / 4 : POOL_GROW;

    if (pool_add (w, (size_t)more) == -1 || grow (w) == -1) {
      errno = ENOMEM;
      return NULL;
    }
    w->grows++;
    c = w->free_pages;
  }
  w->free_pages = c->next;
  c->page = page;
  c->dirty = 0;
  c->next = w->bucket[slot (w, page)];
  w->bucket[slot (w, page)] = c;
  w->npages++;
  return c;
}

/* Blocks of a page that [offset, offset+count) touches (whole = false)
 * or covers entirely (whole = true), as a mask.
 */
static uint8_t
blocks (uint64_t page, uint64_t count, uint64_t offset, bool whole)
{
  uint64_t ps = page * STORE_PAGE, pe = ps + STORE_PAGE;
  uint64_t s = offset > ps ? offset : ps;
  uint64_t e = offset + count < pe ? offset + count : pe;
  unsigned b0, b1;

  if (s >= e)
    return 0;
  b0 = (unsigned)(whole ? (s - ps + BLOCK - 1) / BLOCK : (s - ps) / BLOCK);
  b1 = (unsigned)(whole ? (e - ps) / BLOCK : (e - ps + BLOCK - 1) / BLOCK);
  if (b1 <= b0)
    return 0;
  return (uint8_t)(((1u << b1) - 1) & ~((1u << b0) - 1));
}

static uint8_t
block_mask (uint64_t page, uint64_t count, uint64_t offset)
{
  return blocks (page, count, offset, false);
}

static unsigned
popcount8 (uint8_t m)
{
  return (unsigned)__builtin_popcount (m);
}

int
wcache_write (struct wcache *w, const void *buf, uint64_t count,
              uint64_t offset)
{
  const char *in = buf;

  while (count > 0) {
    uint64_t page = offset / STORE_PAGE, po = offset % STORE_PAGE;
    uint64_t n = STORE_PAGE - po < count ? STORE_PAGE - po : count;
    struct cpage *c = find (w, page);
    uint8_t m = block_mask (page, n, offset), refresh;
    unsigned b;

    if (c == NULL && (c = take (w, page)) == NULL)
      return -1;
    /* A block that becomes dirty without being written whole must keep
     * what the media holds in the rest of it; clean blocks of a cached
     * page may be stale, so read them from the store.
     */
    refresh = m & ~c->dirty & ~blocks (page, n, offset, true);
    for (b = 0; b < BLOCKS_PER_PAGE; b++) {
      if ((refresh & (1u << b)) &&
          w->backing->ops->read (w->backing, c->data + b * BLOCK, BLOCK,
                                 page * STORE_PAGE + b * BLOCK) == -1) {
        if (c->dirty == 0)
          drop (w, c);
        return -1;
      }
    }
    if (in) {
      memcpy (c->data + po, in, n);
      in += n;
    } else {
      memset (c->data + po, 0, n);
    }
    w->dirty_blocks += popcount8 (m & ~c->dirty);
    c->dirty |= m;
    offset += n;
    count -= n;
  }
  return 0;
}

void
wcache_overlay (struct wcache *w, void *buf, uint64_t count, uint64_t offset)
{
  char *out = buf;
  uint64_t end = offset + count, page;

  if (w->npages == 0)
    return;
  for (page = offset / STORE_PAGE; page * STORE_PAGE < end; page++) {
    struct cpage *c = find (w, page);
    uint64_t ps = page * STORE_PAGE;
    unsigned b;

    if (c == NULL)
      continue;
    for (b = 0; b < BLOCKS_PER_PAGE; b++) {
      uint64_t bs = ps + b * BLOCK, be = bs + BLOCK;
      uint64_t s = bs > offset ? bs : offset, e = be < end ? be : end;

      if (!(c->dirty & (1u << b)) || s >= e)
        continue;
      memcpy (out + (s - offset), c->data + (s - ps), e - s);
    }
  }
}

bool
wcache_intersects (struct wcache *w, uint64_t count, uint64_t offset)
{
  uint64_t first = offset / STORE_PAGE;
  uint64_t last = (offset + count + STORE_PAGE - 1) / STORE_PAGE, page;
  size_t i;

  if (w->npages == 0 || count == 0)
    return false;
  if (last - first <= w->npages) {
    for (page = first; page < last; page++) {
      struct cpage *c = find (w, page);
      if (c && (c->dirty & block_mask (page, count, offset)))
        return true;
    }
    return false;
  }
  for (i = 0; i < w->nbuckets; i++)
    for (struct cpage *c = w->bucket[i]; c; c = c->next)
      if (c->page >= first && c->page < last &&
          (c->dirty & block_mask (c->page, count, offset)))
        return true;
  return false;
}

/* Apply fn to each cached page overlapping the range; fn may drop it. */
typedef int page_fn (struct wcache *w, struct cpage *c, uint64_t count,
                     uint64_t offset);

static int
each_overlapping (struct wcache *w, uint64_t count, uint64_t offset,
                  page_fn *fn)
{
  uint64_t first = offset / STORE_PAGE;
  uint64_t last = (offset + count + STORE_PAGE - 1) / STORE_PAGE, page;
  size_t i;

  if (w->npages == 0 || count == 0)
    return 0;
  if (last - first <= w->npages) {
    for (page = first; page < last; page++) {
      struct cpage *c = find (w, page);
      if (c && fn (w, c, count, offset) == -1)
        return -1;
    }
    return 0;
  }
  for (i = 0; i < w->nbuckets; i++) {
    struct cpage *c = w->bucket[i], *next;
    for (; c; c = next) {
      next = c->next;
      if (c->page >= first && c->page < last && fn (w, c, count, offset) == -1)
        return -1;
    }
  }
  return 0;
}

/* Write the dirty blocks of c in mask m to the store; drop c if clean. */
static int
commit_blocks (struct wcache *w, struct cpage *c, uint8_t m)
{
  uint8_t todo = c->dirty & m;
  unsigned b = 0;

  /* Write runs of dirty blocks, so a whole dirty page is one write. */
  while (b < BLOCKS_PER_PAGE) {
    unsigned e;

    if (!(todo & (1u << b))) {
      b++;
      continue;
    }
    for (e = b; e < BLOCKS_PER_PAGE && (todo & (1u << e)); e++)
      ;
    if (w->backing->ops->write (w->backing, c->data + b * BLOCK,
                                (e - b) * BLOCK,
                                c->page * STORE_PAGE + b * BLOCK) == -1)
      return -1;
    b = e;
  }
  w->dirty_blocks -= popcount8 (todo);
  c->dirty &= ~todo;
  if (c->dirty == 0)
    drop (w, c);
  return 0;
}

/* Forget the dirty blocks of c in mask m; drop c if clean. */
static void
discard_blocks (struct wcache *w, struct cpage *c, uint8_t m)
{
  w->dirty_blocks -= popcount8 (c->dirty & m);
  c->dirty &= ~m;
  if (c->dirty == 0)
    drop (w, c);
}

static int
commit_page (struct wcache *w, struct cpage *c, uint64_t count, uint64_t offset)
{
  return commit_blocks (w, c, block_mask (c->page, count, offset));
}

static int
discard_page (struct wcache *w, struct cpage *c, uint64_t count,
              uint64_t offset)
{
  discard_blocks (w, c, block_mask (c->page, count, offset));
  return 0;
}

static int
supersede_page (struct wcache *w, struct cpage *c, uint64_t count,
                uint64_t offset)
{
  uint8_t whole = blocks (c->page, count, offset, true);
  uint8_t partial = block_mask (c->page, count, offset) & ~whole;
  bool emptied = (c->dirty & ~whole) == 0; /* discard will free c */

  discard_blocks (w, c, whole);
  return emptied ? 0 : commit_blocks (w, c, partial);
}

int
wcache_supersede (struct wcache *w, uint64_t count, uint64_t offset)
{
  return each_overlapping (w, count, offset, supersede_page);
}

/* Pages written whole change hands instead of being copied: the store
 * takes each and gives back the page it held, ADOPT_BATCH at a time (one
 * exclusive hold of the store's lock each).  Where the store holds none,
 * the page is written (a fresh page is the store's to make: the cache
 * keeps its pool).  The batch is empty afterwards, even on failure.
 */
static int
adopt_batch (struct wcache *w)
{
  char *pages[ADOPT_BATCH], *old[ADOPT_BATCH];
  uint64_t offsets[ADOPT_BATCH];
  size_t i, n;
  int ret = 0;

  for (i = 0; i < w->nbatch; i++) {
    pages[i] = w->batch[i]->data;
    offsets[i] = w->batch[i]->page * STORE_PAGE;
  }
  w->backing->ops->adopt (w->backing, pages, offsets, old, w->nbatch);
  n = w->nbatch;
  w->nbatch = 0;
  for (i = 0; i < n; i++) {
    struct cpage *c = w->batch[i];
    if (old[i] == NULL) {
      if (ret == 0 && commit_blocks (w, c, ALL_BLOCKS) == -1)
        ret = -1;
      continue;
    }
    c->data = old[i];
    discard_blocks (w, c, ALL_BLOCKS); /* the store holds them now */
  }
  return ret;
}

/* commit_page, with pages written whole batched for the store to take.
 * Pages already visited may be dropped here; each_overlapping has the
 * next one in hand, which is not among them.
 */
static int
adopt_page (struct wcache *w, struct cpage *c, uint64_t count, uint64_t offset)
{
  if (c->dirty != ALL_BLOCKS ||
      block_mask (c->page, count, offset) != ALL_BLOCKS)
    return commit_page (w, c, count, offset);
  w->batch[w->nbatch++] = c;
  return w->nbatch == ADOPT_BATCH ? adopt_batch (w) : 0;
}

int
wcache_commit (struct wcache *w, uint64_t count, uint64_t offset)
{
  int ret;

  if (!w->backing->ops->adopt)
    return each_overlapping (w, count, offset, commit_page);
  ret = each_overlapping (w, count, offset, adopt_page);
  if (w->nbatch && adopt_batch (w) == -1)
    ret = -1;
  return ret;
}

void
wcache_discard (struct wcache *w, uint64_t count, uint64_t offset)
{
  each_overlapping (w, count, offset, discard_page);
}

uint64_t
wcache_dirty_bytes (const struct wcache *w)
{
  return w->dirty_blocks * BLOCK;
}

static int
cmp_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

int
wcache_each_page (struct wcache *w, uint64_t count, uint64_t offset,
                  int (*fn) (void *opaque, uint64_t page_offset), void *opaque)
{
  uint64_t first = offset / STORE_PAGE;
  uint64_t last = (offset + count + STORE_PAGE - 1) / STORE_PAGE, page;
  uint64_t *pages;
  size_t n = 0, i;
  int r = 0;

  if (w->npages == 0 || count == 0)
    return 0;
  if (last - first <= w->npages) {
    for (page = first; page < last; page++)
      if (find (w, page) && fn (opaque, page * STORE_PAGE) == -1)
        return -1;
    return 0;
  }
  /* Collect and sort, so the pages come in order. */
  pages = malloc (w->npages * sizeof *pages);
  if (pages == NULL)
    return -1;
  for (i = 0; i < w->nbuckets; i++)
    for (struct cpage *c = w->bucket[i]; c; c = c->next)
      if (c->page >= first && c->page < last)
        pages[n++] = c->page;
  qsort (pages, n, sizeof *pages, cmp_u64);
  for (i = 0; i < n && r == 0; i++)
    r = fn (opaque, pages[i] * STORE_PAGE) == -1 ? -1 : 0;
  free (pages);
  return r;
}
