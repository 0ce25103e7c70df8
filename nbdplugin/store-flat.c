/* futuredisk — nbdplugin: sparse store in RAM, flat layout (disks up to
 * 64 GiB).
 *
 * Every byte of the disk has its own address in one range of the
 * process's address space, reserved without backing (MAP_NORESERVE:
 * nothing is resident until written), so a request finds its bytes
 * without a lookup: the page tables, which the CPU walks for any access
 * anyway, are the index.  The hashed layout (store-ram.c) and nbdkit's
 * memory plugin chase one or two pointers per page before the copy, each
 * a cache miss on a random read.  A bitmap, one bit per 4 KiB page, says
 * which pages hold data; reads copy those and zero the rest without
 * touching the range (touching an unwritten page there would map the
 * zero page and cost page tables), and extents come from it.
 *
 * Cost on top of the data: one page-table page (4 KiB) per 2 MiB of disk
 * that holds data, typically 0.2% of it, at worst (lonely 4 KiB pages
 * 2 MiB apart) as much again as the data, and never more than 1/512 of
 * the capacity (128 MiB at 64 GiB); the bitmap, 32 KiB per GiB of disk,
 * resident only where used.  Bigger disks use the hashed layout, whose
 * overhead is per page written wherever it lies (1 GiB in lonely 4 KiB
 * pages over 256 GiB cost 444 MiB of page tables here).
 *
 * Locking: reads take none.  A page's address never changes and its
 * memory never serves another offset, so a read racing a write or a trim
 * sees old bytes, new bytes or zeros, as it would on a disk, and never
 * another offset's bytes.  Writes share a rwlock, zeroing holds it alone
 * (store.h's contract).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "store.h"

struct flat {
  struct store s;
  pthread_rwlock_t lock; /* writes share it; zeroing holds it alone */
  char *base;            /* the disk's bytes at their own offsets */
  size_t span;           /* the reserved length: size in whole pages */
  uint64_t *bits;        /* one per page: 1 = holds data */
  uint64_t pages;        /* bits set (atomic) */
  bool no_populate;      /* the kernel has no MADV_POPULATE_WRITE */
};

static bool
has (const struct flat *f, uint64_t p)
{
  /* Acquire: a set bit is seen only with the bytes written before it. */
  return __atomic_load_n (&f->bits[p / 64], __ATOMIC_ACQUIRE) >> (p % 64) & 1;
}

/* The bits of word w for pages [first, end). */
static uint64_t
mask_of (uint64_t w, uint64_t first, uint64_t end)
{
  uint64_t lo = first > w * 64 ? first - w * 64 : 0;
  uint64_t hi = end < (w + 1) * 64 ? end - w * 64 : 64;

  return (hi == 64 ? ~0ULL : (1ULL << hi) - 1) & ~((1ULL << lo) - 1);
}

/* Pages [first, end) hold data. */
static void
mark (struct flat *f, uint64_t first, uint64_t end)
{
  uint64_t w, added = 0;

  for (w = first / 64; w * 64 < end; w++) {
    uint64_t m = mask_of (w, first, end);
    uint64_t old = __atomic_load_n (&f->bits[w], __ATOMIC_ACQUIRE);

    /* An overwrite finds its bits set: a locked instruction there would
     * only wait for the copy before it to drain.
     */
    if ((old & m) == m)
      continue;
    old = __atomic_fetch_or (&f->bits[w], m, __ATOMIC_RELEASE);
    added += __builtin_popcountll (m & ~old);
  }
  if (added)
    __atomic_fetch_add (&f->pages, added, __ATOMIC_RELAXED);
}

/* Where the run of bytes from `offset` that all hold data, or are all
 * holes (*data says which), stops, at most at `end`.  Whole words of the
 * bitmap alike are skipped at once.
 */
static uint64_t
run_stop (const struct flat *f, uint64_t offset, uint64_t end, bool *data)
{
  uint64_t p = offset / STORE_PAGE, last = (end - 1) / STORE_PAGE;
  uint64_t alike;

  *data = has (f, p);
  alike = *data ? ~0ULL : 0;
  for (p++; p <= last; p++) {
    if (p % 64 == 0 &&
        __atomic_load_n (&f->bits[p / 64], __ATOMIC_ACQUIRE) == alike) {
      p += 63;
      continue;
    }
    if (has (f, p) != *data)
      return p * STORE_PAGE;
  }
  return end;
}

static int
flat_read (struct store *s, void *buf, uint64_t count, uint64_t offset)
{
  struct flat *f = (struct flat *)s;
  uint64_t end = offset + count;
  char *out = buf;

  while (offset < end) {
    bool data;
    uint64_t stop = run_stop (f, offset, end, &data);

    if (data)
      memcpy (out, f->base + offset, stop - offset);
    else
      memset (out, 0, stop - offset);
    out += stop - offset;
    offset = stop;
  }
  return 0;
}

static int
flat_write (struct store *s, const void *buf, uint64_t count, uint64_t offset)
{
  struct flat *f = (struct flat *)s;

  if (count == 0)
    return 0;
  /* The kernel zeroes a page on first touch, so a partial page needs
   * nothing more than its own bytes.
   */
  pthread_rwlock_rdlock (&f->lock);
  memcpy (f->base + offset, buf, count);
  mark (f, offset / STORE_PAGE, (offset + count - 1) / STORE_PAGE + 1);
  pthread_rwlock_unlock (&f->lock);
  return 0;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Holes in the range get their pages faulted in now (writable, still
 * zero, still holes in the bitmap); pages that hold data are resident
 * already.  A kernel without MADV_POPULATE_WRITE leaves it to the write.
 */
static void
flat_prepare (struct store *s, uint64_t count, uint64_t offset)
{
  struct flat *f = (struct flat *)s;
  uint64_t first = offset / STORE_PAGE, p, end;

  if (count == 0 || __atomic_load_n (&f->no_populate, __ATOMIC_RELAXED))
    return;
  end = (offset + count - 1) / STORE_PAGE + 1;
  for (p = first; p < end && has (f, p); p++)
    ;
  if (p == end)
    return;
  if (madvise (f->base + p * STORE_PAGE, (end - p) * STORE_PAGE,
               MADV_POPULATE_WRITE) == -1 &&
      errno == EINVAL)
    __atomic_store_n (&f->no_populate, true, __ATOMIC_RELAXED);
}

/* Free pages [first, end) that hold data: clear their bits, then give
 * their memory back (it reads as zeros when next touched).  Exclusive.
 */
static void
punch_pages (struct flat *f, uint64_t first, uint64_t end)
{
  uint64_t w;

  for (w = first / 64; w * 64 < end; w++) {
    uint64_t m = mask_of (w, first, end);
    uint64_t old = __atomic_fetch_and (&f->bits[w], ~m, __ATOMIC_RELAXED);
    uint64_t gone = old & m, lo, hi;

    if (gone == 0)
      continue;
    __atomic_fetch_sub (&f->pages, __builtin_popcountll (gone),
                        __ATOMIC_RELAXED);
    /* One call for the span from the first to the last freed page. */
    lo = w * 64 + __builtin_ctzll (gone);
    hi = w * 64 + 64 - __builtin_clzll (gone);
    if (madvise (f->base + lo * STORE_PAGE, (hi - lo) * STORE_PAGE,
                 MADV_DONTNEED) == -1)
      /* (Locked memory refuses.)  A page written again later must read
       * as zeros around its new bytes, so zero them by hand.
       */
      memset (f->base + lo * STORE_PAGE, 0, (hi - lo) * STORE_PAGE);
  }
}

/* Zero the bytes in [a, b) of the pages there that hold data (holes
 * read as zeros already, and touching them would allocate them).
 * Exclusive.
 */
static void
zero_present (struct flat *f, uint64_t a, uint64_t b)
{
  while (a < b) {
    uint64_t next = (a / STORE_PAGE + 1) * STORE_PAGE;

    if (next > b)
      next = b;
    if (has (f, a / STORE_PAGE))
      memset (f->base + a, 0, next - a);
    a = next;
  }
}

static int
flat_zero (struct store *s, uint64_t count, uint64_t offset, bool punch)
{
  struct flat *f = (struct flat *)s;
  uint64_t end = offset + count;
  uint64_t first = (offset + STORE_PAGE - 1) / STORE_PAGE; /* whole pages */
  uint64_t last = end / STORE_PAGE;

  if (count == 0)
    return 0;
  pthread_rwlock_wrlock (&f->lock);
  if (!punch) { /* allocated zeros */
    memset (f->base + offset, 0, count);
    mark (f, offset / STORE_PAGE, (end - 1) / STORE_PAGE + 1);
  } else if (first >= last) { /* no whole page */
    zero_present (f, offset, end);
  } else { /* whole pages go; partial ones at either end keep their rest */
    zero_present (f, offset, first * STORE_PAGE);
    zero_present (f, last * STORE_PAGE, end);
    punch_pages (f, first, last);
  }
  pthread_rwlock_unlock (&f->lock);
  return 0;
}

static int
flat_flush (struct store *s)
{
  return 0;
}

static int
flat_extents (struct store *s, uint64_t count, uint64_t offset,
              store_extent_fn *fn, void *opaque)
{
  struct flat *f = (struct flat *)s;
  uint64_t end = offset + count;

  while (offset < end) {
    bool data;
    uint64_t stop = run_stop (f, offset, end, &data);
    int rc = fn (opaque, offset, stop - offset, !data);
    if (rc != 0)
      return rc < 0 ? -1 : 0;
    offset = stop;
  }
  return 0;
}

static uint64_t
flat_bytes_stored (struct store *s)
{
  struct flat *f = (struct flat *)s;

  return __atomic_load_n (&f->pages, __ATOMIC_RELAXED) * STORE_PAGE;
}

static void
flat_close (struct store *s)
{
  struct flat *f = (struct flat *)s;

  munmap (f->base, f->span);
  free (f->bits);
  pthread_rwlock_destroy (&f->lock);
  free (f);
}

int64_t
store_flat_resident (struct store *s)
{
  struct flat *f = (struct flat *)s;
  /* A bounded vector: the range holds up to 16 Mi pages. */
  unsigned char vec[4096];
  size_t off, k, n;
  int64_t pages = 0;

  for (off = 0; off < f->span; off += n * STORE_PAGE) {
    n = (f->span - off) / STORE_PAGE;
    if (n > sizeof vec)
      n = sizeof vec;
    if (mincore (f->base + off, n * STORE_PAGE, vec) == -1)
      return -1;
    for (k = 0; k < n; k++)
      pages += vec[k] & 1;
  }
  return pages * STORE_PAGE;
}

static const struct store_ops flat_ops = {
    .name = "ram-flat",
    .read = flat_read,
    .write = flat_write,
    .prepare = flat_prepare,
    .zero = flat_zero,
    .flush = flat_flush,
    .extents = flat_extents,
    .bytes_stored = flat_bytes_stored,
    .close = flat_close,
};

struct store *
store_flat_new (uint64_t size, struct fm_err *err)
{
  uint64_t pages = (size + STORE_PAGE - 1) / STORE_PAGE;
  struct flat *f;

  if (size == 0 || size > STORE_FLAT_MAX) {
    fm_fail (err, "a flat RAM store holds 1 to %llu bytes, not %llu",
             (unsigned long long)STORE_FLAT_MAX, (unsigned long long)size);
    errno = EINVAL;
    return NULL;
  }
  if ((f = calloc (1, sizeof *f)) == NULL)
    goto oom;
  f->span = pages * STORE_PAGE;
  f->base = mmap (NULL, f->span, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (f->base == MAP_FAILED) {
    free (f);
    fm_fail (err, "cannot reserve %llu bytes of address space: %s",
             (unsigned long long)size, strerror (errno));
    return NULL;
  }
  /* Where transparent huge pages are on for everything, one lonely 4 KiB
   * write would make 2 MiB resident.
   */
  madvise (f->base, f->span, MADV_NOHUGEPAGE);
  if ((f->bits = calloc ((pages + 63) / 64, sizeof *f->bits)) == NULL) {
    munmap (f->base, f->span);
    free (f);
    goto oom;
  }
  pthread_rwlock_init (&f->lock, NULL);
  f->s.ops = &flat_ops;
  f->s.size = size;
  return &f->s;

oom:
  fm_fail (err, "out of memory for a %llu-byte store",
           (unsigned long long)size);
  errno = ENOMEM;
  return NULL;
}
