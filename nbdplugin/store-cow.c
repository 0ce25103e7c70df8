/* futuredisk — nbdplugin: a copy-on-write overlay of a read-only base
 * store (store=FILE base=BASE).
 *
 * The overlay is a file store of its own (store-file.c, header version
 * 3) with a bitmap after its first file's data: bit p set means page p
 * is the overlay's, whatever it holds there (data, zeros or a hole);
 * clear means it reads from the base.  A write or zero that covers only
 * part of a page the overlay does not have copies the page up from the
 * base first, so every owned page is whole.  The bitmap is mapped shared
 * from the file, so a restart serves the same disk.
 *
 * A summary byte per page of the bitmap says whether that page of bits
 * may hold a set bit, so runs of base pages (most of a freshly cloned
 * disk) are skipped 32768 pages at a time.
 *
 * Concurrency: bits are set atomically, after the bytes they cover are in
 * the overlay, so a read racing a write sees the base's old bytes or the
 * new ones.  A write or zero that touches a page the clone does not have
 * yet takes a lock, so a page copied up for one request never lands over
 * bytes another wrote (two writes to different bytes of one base page
 * both stay).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "errmsg.h"
#include "store.h"

#define MAP_SPAN (STORE_PAGE * 8) /* pages per page of the bitmap */

struct cowstore {
  struct store s;
  struct store *over, *base;
  unsigned char *map; /* the bitmap, mapped from the overlay's file */
  size_t map_len;
  unsigned char *summary; /* per page of map: 0 = no bit set there */
  uint64_t npages;
  pthread_mutex_t copy_lock; /* changes that touch the base's pages */
};

static bool
owned (const struct cowstore *c, uint64_t p)
{
  return (__atomic_load_n (&c->map[p / 8], __ATOMIC_ACQUIRE) >> (p % 8)) & 1;
}

/* Pages [p, end) are now the overlay's. */
static void
set_owned (struct cowstore *c, uint64_t p, uint64_t end)
{
  for (; p < end; p++) {
    __atomic_store_n (&c->summary[p / MAP_SPAN], 1, __ATOMIC_RELAXED);
    __atomic_fetch_or (&c->map[p / 8], (unsigned char)(1u << (p % 8)),
                       __ATOMIC_RELEASE);
  }
}

/* The end of the run of pages from p (< end) that are all owned or all
 * not, and which it is.
 */
static uint64_t
run_end (const struct cowstore *c, uint64_t p, uint64_t end, bool *o)
{
  *o = owned (c, p);
  for (p++; p < end;) {
    unsigned char b;

    if (!*o && p % MAP_SPAN == 0 && !c->summary[p / MAP_SPAN]) {
      p += MAP_SPAN;
      continue;
    }
    b = __atomic_load_n (&c->map[p / 8], __ATOMIC_ACQUIRE);
    if (p % 8 == 0 && b == (*o ? 0xff : 0)) {
      p += 8;
      continue;
    }
    if (((b >> (p % 8)) & 1) != *o)
      return p;
    p++;
  }
  return end;
}

static int
failed (struct cowstore *c, const struct store *from)
{
  int e = errno;

  c->s.err = from->err;
  errno = e;
  return -1;
}

static int
cow_read (struct store *s, void *buf, uint64_t count, uint64_t offset)
{
  struct cowstore *c = (struct cowstore *)s;
  char *p = buf;

  while (count > 0) {
    bool o;
    uint64_t q = run_end (c, offset / STORE_PAGE, c->npages, &o);
    uint64_t n = q * STORE_PAGE - offset;
    struct store *from = o ? c->over : c->base;

    if (n > count)
      n = count;
    if (from->ops->read (from, p, n, offset) == -1)
      return failed (c, from);
    p += n;
    offset += n;
    count -= n;
  }
  return 0;
}

static int
first_kind (void *opaque, uint64_t offset, uint64_t length, bool hole)
{
  (void)offset, (void)length;
  *(bool *)opaque = hole;
  return 1;
}

/* Page p (which a write or zero covers only in part) becomes the
 * overlay's with the base's bytes.  A hole of the base stays a hole (the
 * overlay's file has one there): the page is then data or hole after the
 * write as it would be in one store file, so the clone's extents and
 * bytes stored are a fresh store's.
 */
static int
copy_up (struct cowstore *c, uint64_t p)
{
  char page[STORE_PAGE];
  uint64_t at = p * STORE_PAGE;
  uint64_t n = c->s.size - at < STORE_PAGE ? c->s.size - at : STORE_PAGE;
  bool hole = false;

  if (c->base->ops->extents (c->base, n, at, first_kind, &hole) == -1 ||
      (!hole && c->base->ops->read (c->base, page, n, at) == -1))
    return failed (c, c->base);
  if (!hole && c->over->ops->write (c->over, page, n, at) == -1)
    return failed (c, c->over);
  set_owned (c, p, p + 1);
  return 0;
}

/* A write (buf) or a zero (buf NULL) of [offset, offset+count).  While
 * any page of it is the base's, under the lock: a copy-up must not land
 * after another request wrote the whole page.  Pages the clone already
 * has need no lock (the common case once a trial has written them).
 */
static int
change (struct cowstore *c, const void *buf, uint64_t count, uint64_t offset,
        bool punch)
{
  uint64_t end = offset + count, p0 = offset / STORE_PAGE,
           p1 = (end + STORE_PAGE - 1) / STORE_PAGE;
  bool o, lock = run_end (c, p0, p1, &o) < p1 || !o;
  int ret = 0;

  if (lock)
    pthread_mutex_lock (&c->copy_lock);
  if (offset % STORE_PAGE && !owned (c, p0))
    ret = copy_up (c, p0);
  if (ret == 0 && end % STORE_PAGE && end < c->s.size && !owned (c, p1 - 1))
    ret = copy_up (c, p1 - 1);
  if (ret == 0 &&
      (buf ? c->over->ops->write (c->over, buf, count, offset)
           : c->over->ops->zero (c->over, count, offset, punch)) == -1)
    ret = failed (c, c->over);
  if (ret == 0 && lock)
    set_owned (c, p0, p1);
  if (lock)
    pthread_mutex_unlock (&c->copy_lock);
  return ret;
}

static int
cow_write (struct store *s, const void *buf, uint64_t count, uint64_t offset)
{
  return count ? change ((struct cowstore *)s, buf, count, offset, false) : 0;
}

static int
cow_zero (struct store *s, uint64_t count, uint64_t offset, bool punch)
{
  return count ? change ((struct cowstore *)s, NULL, count, offset, punch) : 0;
}

static int
cow_flush (struct store *s)
{
  struct cowstore *c = (struct cowstore *)s;

  if (msync (c->map, c->map_len, MS_SYNC) == -1) {
    snprintf (s->err.msg, sizeof s->err.msg, "store: overlay bitmap: msync: %s",
              fd_strerror (errno));
    return -1;
  }
  if (c->over->ops->flush (c->over) == -1)
    return failed (c, c->over);
  return 0;
}

static int
cow_extents (struct store *s, uint64_t count, uint64_t offset,
             store_extent_fn *fn, void *opaque)
{
  struct cowstore *c = (struct cowstore *)s;
  struct store_join j = {.fn = fn, .opaque = opaque};
  uint64_t end = offset + count;

  while (offset < end && j.rc == 0) {
    bool o;
    uint64_t q = run_end (c, offset / STORE_PAGE, c->npages, &o);
    uint64_t n = q * STORE_PAGE - offset;
    struct store *from = o ? c->over : c->base;

    if (n > end - offset)
      n = end - offset;
    if (from->ops->extents (from, n, offset, store_join_extent, &j) == -1)
      return j.rc == -1 ? -1 : failed (c, from);
    offset += n;
  }
  return store_join_end (&j);
}

static uint64_t
cow_bytes_stored (struct store *s)
{
  return store_data_bytes (s);
}

static void
cow_close (struct store *s)
{
  struct cowstore *c = (struct cowstore *)s;

  msync (c->map, c->map_len, MS_SYNC);
  munmap (c->map, c->map_len);
  c->over->ops->close (c->over);
  c->base->ops->close (c->base);
  pthread_mutex_destroy (&c->copy_lock);
  free (c->summary);
  free (c);
}

static const struct store_ops cow_ops = {
    .name = "file+base",
    .read = cow_read,
    .write = cow_write,
    .zero = cow_zero,
    .flush = cow_flush,
    .extents = cow_extents,
    .bytes_stored = cow_bytes_stored,
    .close = cow_close,
};

/* The summary of a bitmap read back from the file (a restart). */
static void
summarize (struct cowstore *c)
{
  size_t i, k;

  for (i = 0; i * STORE_PAGE < c->map_len; i++)
    for (k = 0; k < STORE_PAGE; k++)
      if (c->map[i * STORE_PAGE + k]) {
        c->summary[i] = 1;
        break;
      }
}

uint64_t
store_cow_map_len (uint64_t size)
{
  uint64_t pages = (size + STORE_PAGE - 1) / STORE_PAGE;

  return ((pages + 7) / 8 + STORE_PAGE - 1) / STORE_PAGE * STORE_PAGE;
}

struct store *
store_cow_wrap (struct store *over, int fd, uint64_t map_at, struct store *base,
                struct fm_err *err)
{
  struct cowstore *c = calloc (1, sizeof *c);
  uint64_t size = over->size;

  if (c == NULL) {
    fm_fail (err, "out of memory");
    over->ops->close (over);
    base->ops->close (base);
    return NULL;
  }
  c->s.ops = &cow_ops;
  c->s.size = size;
  c->over = over;
  c->npages = (size + STORE_PAGE - 1) / STORE_PAGE;
  c->map_len = store_cow_map_len (size);
  c->summary = calloc (c->map_len / STORE_PAGE, 1);
  c->map = mmap (NULL, c->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                 (off_t)map_at);
  if (c->summary == NULL || c->map == MAP_FAILED) {
    fm_fail (err, "store: mapping the overlay's bitmap: %s",
             fd_strerror (c->summary ? errno : ENOMEM));
    goto fail;
  }
  c->base = base;
  pthread_mutex_init (&c->copy_lock, NULL);
  summarize (c);
  return &c->s;

fail:
  over->ops->close (over);
  base->ops->close (base);
  free (c->summary);
  free (c);
  return NULL;
}
