/* futuredisk — nbdplugin: the request path allocates nothing per request.
 *
 * This program is linked with the allocator wrapped (-Wl,--wrap=malloc
 * and the rest, see CMakeLists.txt): every call the plugin's code (emu,
 * the write cache, the stores, the drive model) makes to malloc, calloc,
 * realloc, free, mmap or munmap goes through a counter first.  Once a
 * workload has run and everything reached its high-water mark, running
 * the same workload again - writes that fill and overflow the drive's
 * cache, destages, flushes, reads of cached and destaged data - must not
 * count one call.  Before the write cache had its page pool, every
 * cached 4 KiB page was a malloc and every destaged one a free.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check-main.h"
#include "emu.h"
#include "faultmodels/rng.h"
#include "wcache.h"

#define SIZE (128 << 20)

static bool counting;  /* inside the window */
static uint64_t calls; /* allocator calls seen in it */

/* Check's own assertions allocate (it is linked in statically, so it is
 * counted too): inside the window a failed expectation is only noted,
 * and asserted on after it.
 */
static int failed_line;

#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond) && failed_line == 0)                                           \
      failed_line = __LINE__;                                                  \
  } while (0)

/* The real allocator (the linker's names) and our wrappers. */
void *__real_malloc (size_t n);
void *__real_calloc (size_t n, size_t m);
void *__real_realloc (void *p, size_t n);
void __real_free (void *p);
void *__real_mmap (void *a, size_t n, int prot, int flags, int fd, off_t o);
int __real_munmap (void *a, size_t n);
void *__wrap_malloc (size_t n);
void *__wrap_calloc (size_t n, size_t m);
void *__wrap_realloc (void *p, size_t n);
void __wrap_free (void *p);
void *__wrap_mmap (void *a, size_t n, int prot, int flags, int fd, off_t o);
int __wrap_munmap (void *a, size_t n);

static void
seen (void)
{
  if (counting)
    calls++;
}

void *
__wrap_malloc (size_t n)
{
  seen ();
  return __real_malloc (n);
}

void *
__wrap_calloc (size_t n, size_t m)
{
  seen ();
  return __real_calloc (n, m);
}

void *
__wrap_realloc (void *p, size_t n)
{
  seen ();
  return __real_realloc (p, n);
}

void
__wrap_free (void *p)
{
  if (p)
    seen ();
  __real_free (p);
}

void *
__wrap_mmap (void *a, size_t n, int prot, int flags, int fd, off_t o)
{
  seen ();
  return __real_mmap (a, n, prot, flags, fd, o);
}

int
__wrap_munmap (void *a, size_t n)
{
  seen ();
  return __real_munmap (a, n);
}

/* The wrapper must see the plugin's calls, or every test here would pass
 * for nothing.
 */
START_TEST (test_wrapped)
{
  struct fm_err err;
  struct store *s;

  counting = true;
  calls = 0;
  s = store_ram_new (SIZE, false, &err);
  counting = false;
  ck_assert_ptr_nonnull (s);
  ck_assert_uint_gt (calls, 0);
  s->ops->close (s);
}
END_TEST

static uint64_t fake_wall;

static uint64_t
wall (void)
{
  return fake_wall;
}

static struct emu *
make (const char *profile, const char *faults)
{
  /* No grace: one request at a time has nothing to wait for. */
  struct emu_config cfg = {.seed = 1,
                           .time_scale = 0,
                           .think_zero = true,
                           .wall_ns = wall,
                           .grace_ns = 1};
  struct fm_err err;
  struct emu *e;

  ck_assert_int_eq (fm_profile_builtin (profile, &cfg.profile, &err), 0);
  ck_assert_int_eq (fm_profile_resize (&cfg.profile, SIZE, &err), 0);
  fm_disk_default_options (&cfg.profile, &cfg.caches);
  fm_faultset_defaults (&cfg.faults);
  if (faults)
    ck_assert_int_eq (fm_faultset_preset (&cfg.faults, faults, &err), 0);
  e = emu_new (&cfg, &err);
  ck_assert_msg (e != NULL, "%s", err.msg);
  return e;
}

/* A stats member (emu_stats_json) as a number. */
static uint64_t
stat_of (struct emu *e, const char *key)
{
  char *text = NULL, *p, want[64];
  size_t len = 0;
  FILE *fp = open_memstream (&text, &len);
  uint64_t v;

  ck_assert_ptr_nonnull (fp);
  emu_stats_json (e, fp);
  fclose (fp);
  snprintf (want, sizeof want, "\"%s\": ", key);
  p = strstr (text, want);
  ck_assert_msg (p != NULL, "no %s in %s", key, text);
  v = strtoull (p + strlen (want), NULL, 10);
  free (text);
  return v;
}

/* One pass of the workload, the same every time: the disk written in
 * 1 MiB requests (more than the drive's cache, so it destages), small
 * random writes, aligned and not, some with FUA; a flush; the disk read
 * back in 1 MiB and at random in 4 KiB.  Every read is checked against
 * shadow.
 */
static void
pass (struct emu *e, char *shadow, char *buf)
{
  struct emu_result r;
  struct fm_err err;
  uint64_t i;

  for (i = 0; i < SIZE >> 20; i++) {
    uint64_t off = i << 20, k;

    for (k = 0; k < (1 << 20); k += 4096)
      buf[k] = (char)fm_hash (3, off + k, fake_wall, 0);
    EXPECT (emu_pwrite (e, buf, 1 << 20, off, false, &r, &err) == 0);
    memcpy (shadow + off, buf, 1 << 20);
  }
  for (i = 0; i < 3000; i++) {
    uint64_t h = fm_hash (4, i, 0, 0);
    uint64_t len = (h & 1) ? 4096 : 512 * (1 + fm_below (h >> 8, 16));
    uint64_t off = (h & 1) ? fm_below (h >> 20, SIZE / 4096) * 4096
                           : fm_below (h >> 20, (SIZE - len) / 512) * 512;

    memset (buf, (int)(h >> 40), len);
    EXPECT (emu_pwrite (e, buf, len, off, (h & 0xf0) == 0, &r, &err) == 0);
    memcpy (shadow + off, buf, len);
  }
  EXPECT (emu_flush (e, &r, &err) == 0);
  for (i = 0; i < 1000; i++) {
    uint64_t off = fm_below (fm_hash (5, i, 0, 0), SIZE / 4096) * 4096;

    EXPECT (emu_pwrite (e, buf, 4096, off, false, &r, &err) == 0);
    memcpy (shadow + off, buf, 4096);
  }
  for (i = 0; i < SIZE >> 20; i++) {
    EXPECT (emu_pread (e, buf, 1 << 20, i << 20, &r, &err) == 0);
    EXPECT (memcmp (buf, shadow + (i << 20), 1 << 20) == 0);
  }
  for (i = 0; i < 3000; i++) {
    uint64_t off = fm_below (fm_hash (6, i, 0, 0), SIZE / 4096) * 4096;

    EXPECT (emu_pread (e, buf, 4096, off, &r, &err) == 0);
    EXPECT (memcmp (buf, shadow + off, 4096) == 0);
  }
}

/* Warm up once, then two more passes with the counter on. */
static void
steady (const char *profile, const char *faults)
{
  struct emu *e = make (profile, faults);
  char *shadow = calloc (1, SIZE), *buf = malloc (1 << 20);

  failed_line = 0;
  pass (e, shadow, buf);
  counting = true;
  calls = 0;
  pass (e, shadow, buf);
  pass (e, shadow, buf);
  counting = false;
  ck_assert_msg (failed_line == 0, "%s: expectation at line %d failed", profile,
                 failed_line);
  ck_assert_msg (calls == 0, "%s%s%s: %" PRIu64 " allocator calls", profile,
                 faults ? " faults=" : "", faults ? faults : "", calls);
  /* The workload went through the drive's cache and out of it. */
  ck_assert_uint_gt (stat_of (e, "cached_writes"), 0);
  ck_assert_uint_gt (stat_of (e, "destage_ns"), 0);
  emu_free (e);
  free (shadow);
  free (buf);
}

/* 4 KiB sectors (roadmap-2013), 512-byte ones (roadmap-2006), a cache as
 * big as this disk (cmr-20t-2024), two actuators, shingles.
 */
static const char *const profiles[] = {"roadmap-2013", "roadmap-2006",
                                       "cmr-20t-2024", "dual-18t-2022",
                                       "smr-nas-2020"};

START_TEST (test_steady)
{
  size_t i;

  for (i = 0; i < sizeof profiles / sizeof profiles[0]; i++)
    steady (profiles[i], NULL);
}
END_TEST

START_TEST (test_steady_faults)
{
  size_t i;

  for (i = 0; i < sizeof profiles / sizeof profiles[0]; i++)
    steady (profiles[i], "consumer");
}
END_TEST

/* The pool itself: as many pages as the cache size asks (plus slack),
 * reused while the data fits; scattered 512-byte blocks that need more
 * pages than that make it grow once, to the new high-water mark, and a
 * second round of the same needs nothing.
 */
static void
pool_test (bool for_cache)
{
  struct fm_err err;
  struct store *s = store_ram_new (SIZE, for_cache, &err);
  struct wcache *w;
  char buf[8192], back[8192];
  uint64_t i, round, pages, grows;

  ck_assert_ptr_nonnull (s);
  /* The store's own fresh pages are not the pool's: a store that lends
   * gets them from the allocator, so its half of the disk is written
   * first, and the destages below hand pages over.
   */
  memset (back, 'z', sizeof back);
  for (i = 0; for_cache && i < SIZE / 2; i += sizeof back)
    ck_assert_int_eq (s->ops->write (s, back, sizeof back, SIZE / 2 + i), 0);
  w = wcache_new (s, 1 << 20);
  ck_assert_ptr_nonnull (w);
  pages = wcache_pool_pages (w);
  ck_assert_uint_ge (pages, (1 << 20) / 4096);
  memset (buf, 'a', sizeof buf);
  failed_line = 0;
  counting = true;
  calls = 0;
  for (round = 0; round < 200; round++) {
    uint64_t off =
        SIZE / 2 +
        (fm_below (fm_hash (7, round, 0, 0), SIZE / 2 - (1 << 20)) & ~511ULL);

    for (i = 0; i < (1 << 20); i += sizeof buf)
      EXPECT (wcache_write (w, buf, sizeof buf, off + i) == 0);
    EXPECT (wcache_commit (w, 1 << 20, off) == 0);
    EXPECT (s->ops->read (s, back, 512, off + 4096) == 0 && back[0] == 'a');
  }
  counting = false;
  ck_assert_int_eq (failed_line, 0);
  ck_assert_uint_eq (calls, 0);
  ck_assert_uint_eq (wcache_pool_grows (w), 0);
  ck_assert_uint_eq (wcache_pool_pages (w), pages);

  /* One 512-byte block per page: pool + 1 pages' worth of cache data. */
  for (round = 0; round < 2; round++) {
    counting = round == 1;
    calls = 0;
    for (i = 0; i <= pages; i++) {
      buf[0] = (char)i;
      EXPECT (wcache_write (w, buf, 512, i * 4096 + 1024) == 0);
    }
    counting = false;
    ck_assert_int_eq (failed_line, 0);
    ck_assert_uint_eq (wcache_dirty_bytes (w), (pages + 1) * 512);
    for (i = 0; i <= pages; i++) {
      memset (back, 0, 512);
      wcache_overlay (w, back, 512, i * 4096 + 1024);
      ck_assert_int_eq (back[0], (char)i);
    }
    grows = wcache_pool_grows (w);
    ck_assert_uint_eq (grows, 1);
    ck_assert_uint_eq (calls, 0);
    /* A power cut: the store never sees the blocks. */
    wcache_discard (w, SIZE, 0);
    ck_assert_uint_eq (wcache_dirty_bytes (w), 0);
    ck_assert_int_eq (s->ops->read (s, back, 512, 4096 + 1024), 0);
    ck_assert_int_eq (back[0], 0);
  }
  wcache_free (w);
  s->ops->close (s);
}

START_TEST (test_pool)
{
  pool_test (false);
  pool_test (true);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"wrapped", test_wrapped},
      {"pool", test_pool},
      {"steady", test_steady},
      {"steady_faults", test_steady_faults},
  };

  return fd_check_main ("wpath", cases, sizeof cases / sizeof cases[0]);
}
