/* futuredisk — nbdplugin: the sparse stores, RAM and file. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "check-main.h"
#include "faultmodels/rng.h"
#include "store.h"

#define SMALL (64 << 20)

static char tmpdir[64];

static void
make_tmpdir (void)
{
  fd_check_tmpdir ("store", tmpdir, sizeof tmpdir);
}

/* Random writes and zeroes at random, unaligned offsets, mirrored in
 * shadow (the disk's bytes as they should be).
 */
static void
shadow_ops (struct store *s, char *shadow, uint64_t seed)
{
  char *buf = malloc (1 << 20);
  int i;

  for (i = 0; i < 2000; i++) {
    uint64_t h = fm_hash (seed, FM_STREAM_BENCH, i, 0);
    uint64_t len = 1 + fm_below (h, 70000);
    uint64_t off =
        fm_below (fm_hash (seed, FM_STREAM_BENCH, i, 1), SMALL - len);
    uint64_t k;

    if (i % 7 == 3) {
      ck_assert_int_eq (s->ops->zero (s, len, off, i % 2), 0);
      memset (shadow + off, 0, len);
      continue;
    }
    for (k = 0; k < len; k++)
      buf[k] = (char)fm_hash (seed, i, k, 2);
    ck_assert_int_eq (s->ops->write (s, buf, len, off), 0);
    memcpy (shadow + off, buf, len);
    if (i % 5 == 0) {
      uint64_t roff =
          fm_below (fm_hash (seed, FM_STREAM_BENCH, i, 3), SMALL - (1 << 20));
      ck_assert_int_eq (s->ops->read (s, buf, 1 << 20, roff), 0);
      ck_assert_mem_eq (buf, shadow + roff, 1 << 20);
    }
  }
  free (buf);
}

/* Every byte of s is shadow's. */
static void
same_bytes (struct store *s, const char *shadow)
{
  char *buf = malloc (1 << 20);
  int i;

  for (i = 0; i < SMALL / (1 << 20); i++) {
    ck_assert_int_eq (s->ops->read (s, buf, 1 << 20, (uint64_t)i << 20), 0);
    ck_assert_mem_eq (buf, shadow + ((uint64_t)i << 20), 1 << 20);
  }
  free (buf);
}

/* Random writes at random, unaligned offsets against a shadow copy. */
static void
shadow_test (struct store *s, uint64_t seed)
{
  char *shadow = calloc (1, SMALL);

  shadow_ops (s, shadow, seed);
  same_bytes (s, shadow);
  free (shadow);
}

/* Every extent a store reports, in order (up to EXT_MAX). */
#define EXT_MAX 16384
struct ext_list {
  uint64_t off[EXT_MAX], len[EXT_MAX];
  bool hole[EXT_MAX];
  int n;
};

static int
collect (void *opaque, uint64_t offset, uint64_t length, bool hole)
{
  struct ext_list *l = opaque;

  ck_assert_int_lt (l->n, EXT_MAX);
  l->off[l->n] = offset;
  l->len[l->n] = length;
  l->hole[l->n] = hole;
  l->n++;
  return 0;
}

/* Writes, a zero that punches a page, and the extents that follow. */
static void
extents_test (struct store *s)
{
  struct ext_list l = {.n = 0};
  char page[STORE_PAGE];

  memset (page, 'x', sizeof page);
  ck_assert_int_eq (s->ops->write (s, page, STORE_PAGE, 8 * STORE_PAGE), 0);
  ck_assert_int_eq (s->ops->write (s, page, 10, 10 * STORE_PAGE + 5), 0);
  ck_assert_int_eq (s->ops->extents (s, 16 * STORE_PAGE, 0, collect, &l), 0);
  ck_assert_int_eq (l.n, 5);
  ck_assert (l.hole[0] && l.off[0] == 0 && l.len[0] == 8 * STORE_PAGE);
  ck_assert (!l.hole[1] && l.len[1] == STORE_PAGE);
  ck_assert (l.hole[2] && l.len[2] == STORE_PAGE);
  ck_assert (!l.hole[3] && l.off[3] == 10 * STORE_PAGE);
  ck_assert (l.hole[4] && l.off[4] + l.len[4] == 16 * STORE_PAGE);

  ck_assert_int_eq (s->ops->zero (s, STORE_PAGE, 8 * STORE_PAGE, true), 0);
  l.n = 0;
  ck_assert_int_eq (s->ops->extents (s, 10 * STORE_PAGE, 0, collect, &l), 0);
  ck_assert_int_eq (l.n, 1);
  ck_assert (l.hole[0]);
  ck_assert_int_eq (s->ops->read (s, page, STORE_PAGE, 8 * STORE_PAGE), 0);
  ck_assert_int_eq (page[0], 0);
  ck_assert_int_eq (page[STORE_PAGE - 1], 0);
}

START_TEST (test_ram_shadow)
{
  struct fm_err err;
  struct store *s = store_ram_new (SMALL, false, &err);

  ck_assert_ptr_nonnull (s);
  shadow_test (s, 1);
  s->ops->close (s);
}
END_TEST

/* The same on a disk big enough for the hash-table index. */
START_TEST (test_ram_shadow_hashed)
{
  struct fm_err err;
  struct store *s = store_ram_new (1ULL << 40, false, &err);

  ck_assert_ptr_nonnull (s);
  shadow_test (s, 2);
  s->ops->close (s);
  s = store_ram_new (1ULL << 40, false, &err);
  extents_test (s);
  s->ops->close (s);
}
END_TEST

/* A store for a write cache lends pages and takes them over: a page
 * handed in holds the offset from then on, the one it replaces comes
 * back with the bytes it held, and where the store holds no page nothing
 * changes hands.  The flat layout does neither.
 */
/* One page through the batch: the page it replaced, or NULL. */
static char *
adopt1 (struct store *s, char *page, uint64_t offset)
{
  char *old;

  s->ops->adopt (s, &page, &offset, &old, 1);
  return old;
}

START_TEST (test_ram_adopt)
{
  struct fm_err err;
  struct store *s = store_ram_new (SMALL, true, &err), *flat;
  char *lent, *old, buf[STORE_PAGE];
  const uint64_t at = 5 * STORE_PAGE;
  struct ext_list l = {.n = 0};

  ck_assert_ptr_nonnull (s);
  ck_assert_str_eq (s->ops->name, "ram-hashed");
  ck_assert_ptr_nonnull (s->ops->lend);
  lent = s->ops->lend (s, 2);
  ck_assert_ptr_nonnull (lent);
  memset (lent, 'n', STORE_PAGE);
  ck_assert_ptr_null (adopt1 (s, lent, at));
  ck_assert_uint_eq (s->ops->bytes_stored (s), 0);
  ck_assert_int_eq (s->ops->read (s, buf, STORE_PAGE, at), 0);
  ck_assert_int_eq (buf[0], 0);

  memset (buf, 'o', STORE_PAGE);
  ck_assert_int_eq (s->ops->write (s, buf, STORE_PAGE, at), 0);
  old = adopt1 (s, lent, at);
  ck_assert_ptr_nonnull (old);
  ck_assert_ptr_ne (old, lent);
  ck_assert_int_eq (old[0], 'o');
  ck_assert_int_eq (old[STORE_PAGE - 1], 'o');
  ck_assert_int_eq (s->ops->read (s, buf, STORE_PAGE, at), 0);
  ck_assert_int_eq (buf[0], 'n');
  ck_assert_int_eq (buf[STORE_PAGE - 1], 'n');
  ck_assert_uint_eq (s->ops->bytes_stored (s), STORE_PAGE);

  /* The page handed back is the caller's: it can go in again. */
  memset (old, 'p', STORE_PAGE);
  ck_assert_ptr_eq (adopt1 (s, old, at), lent);
  ck_assert_int_eq (s->ops->read (s, buf, 2, at + STORE_PAGE - 1), 0);
  ck_assert_int_eq (buf[0], 'p');
  ck_assert_int_eq (buf[1], 0);
  ck_assert_int_eq (s->ops->extents (s, SMALL, 0, collect, &l), 0);
  ck_assert_int_eq (l.n, 3);
  ck_assert (!l.hole[1]);
  ck_assert_uint_eq (l.off[1], at);
  ck_assert_uint_eq (l.len[1], STORE_PAGE);
  s->ops->close (s);

  flat = store_ram_new (SMALL, false, &err);
  ck_assert_ptr_nonnull (flat);
  ck_assert_str_eq (flat->ops->name, "ram-flat");
  ck_assert_ptr_null (flat->ops->lend);
  ck_assert_ptr_null (flat->ops->adopt);
  flat->ops->close (flat);
}
END_TEST

/* Pages changing hands under readers: a reader of an offset sees one
 * whole page that was written there, never a page the cache has taken
 * back and is filling for another offset.  Each page handed in is filled
 * with one byte: the offset's round; a handed-back page is refilled with
 * a byte no page at its offset ever holds before it goes in again.
 */
#define ADOPT_PAGES  8
#define ADOPT_ROUNDS 200000

struct adopt_reader {
  struct store *s;
  volatile bool stop;
  uint64_t bad, reads;
};

static void *
adopt_reader (void *opaque)
{
  struct adopt_reader *a = opaque;
  static char buf[ADOPT_PAGES * STORE_PAGE];

  /* All the pages in one read: the longer the copy, the likelier a
   * page changes hands under it.
   */
  while (!a->stop) {
    uint64_t p, k;

    ck_assert_int_eq (a->s->ops->read (a->s, buf, sizeof buf, 0), 0);
    for (p = 0; p < ADOPT_PAGES; p++) {
      const char *pg = buf + p * STORE_PAGE;
      for (k = 1; k < STORE_PAGE; k++)
        if (pg[k] != pg[0])
          break;
      /* Round bytes are 'A' + p, 8 apart; refills are 'z'. */
      a->bad += k < STORE_PAGE || pg[0] == 'z' ||
                (uint8_t)(pg[0] - 'A') % ADOPT_PAGES != p;
    }
    __atomic_add_fetch (&a->reads, 1, __ATOMIC_RELAXED);
  }
  return NULL;
}

START_TEST (test_ram_adopt_race)
{
  struct fm_err err;
  struct adopt_reader a = {.s = store_ram_new (SMALL, true, &err)};
  char *spare[ADOPT_PAGES], page[STORE_PAGE];
  pthread_t th;
  uint64_t p, round;

  ck_assert_ptr_nonnull (a.s);
  for (p = 0; p < ADOPT_PAGES; p++) {
    memset (page, 'A' + (int)p, STORE_PAGE);
    ck_assert_int_eq (a.s->ops->write (a.s, page, STORE_PAGE, p * STORE_PAGE),
                      0);
  }
  spare[0] = a.s->ops->lend (a.s, ADOPT_PAGES);
  ck_assert_ptr_nonnull (spare[0]);
  for (p = 1; p < ADOPT_PAGES; p++)
    spare[p] = spare[0] + p * STORE_PAGE;
  ck_assert_int_eq (pthread_create (&th, NULL, adopt_reader, &a), 0);
  while (__atomic_load_n (&a.reads, __ATOMIC_RELAXED) == 0)
    sched_yield ();
  for (round = 0; round < ADOPT_ROUNDS; round++) {
    uint64_t q = round % ADOPT_PAGES;
    int b = 'A' + (int)(q + ADOPT_PAGES * (round / ADOPT_PAGES % 4));

    memset (spare[q], b, STORE_PAGE);
    spare[q] = adopt1 (a.s, spare[q], q * STORE_PAGE);
    ck_assert_ptr_nonnull (spare[q]);
    memset (spare[q], 'z', STORE_PAGE); /* ours now: nobody reads it */
  }
  a.stop = true;
  pthread_join (th, NULL);
  ck_assert_uint_gt (a.reads, 0);
  ck_assert_uint_eq (a.bad, 0);
  a.s->ops->close (a.s);
}
END_TEST

START_TEST (test_ram_extents)
{
  struct fm_err err;
  struct store *s = store_ram_new (SMALL, false, &err);

  extents_test (s);
  s->ops->close (s);
}
END_TEST

/* 24 TB addressable; memory follows what is written, not the capacity. */
START_TEST (test_ram_sparse)
{
  const uint64_t cap = 24000000000000ULL;
  struct fm_err err;
  struct store *s = store_ram_new (cap, false, &err);
  struct ext_list l = {.n = 0};
  char buf[STORE_PAGE];
  int i;

  ck_assert_ptr_nonnull (s);
  memset (buf, 7, sizeof buf);
  for (i = 0; i < 1000; i++) {
    uint64_t off =
        fm_below (fm_hash (3, 1, i, 0), cap / STORE_PAGE) * STORE_PAGE;
    ck_assert_int_eq (s->ops->write (s, buf, STORE_PAGE, off), 0);
  }
  ck_assert_uint_le (s->ops->bytes_stored (s), 1000 * STORE_PAGE);
  ck_assert_uint_ge (s->ops->bytes_stored (s), 990 * STORE_PAGE);
  /* The last byte of the disk works, and the tail is a hole. */
  ck_assert_int_eq (s->ops->write (s, buf, 1, cap - 1), 0);
  ck_assert_int_eq (s->ops->read (s, buf, 1, cap - 1), 0);
  ck_assert_int_eq (buf[0], 7);
  ck_assert_int_eq (s->ops->extents (s, 1 << 30, 0, collect, &l), 0);
  ck_assert_int_ge (l.n, 1);
  s->ops->close (s);
}
END_TEST

/* Writers racing into fresh pages: four threads, each writing its own
 * pages and, all of them, the same bytes to a shared stretch, in random
 * unaligned pieces.  Whoever adds a page first, the others' bytes land
 * on it; no page is added twice or lost.
 */
#define RACE_THREADS 4
#define RACE_OWN     (2 << 20) /* each thread's own stretch */
#define RACE_SHARED  (RACE_THREADS * RACE_OWN)

struct racer {
  struct store *s;
  int id;
  char *written; /* one flag per byte of the store this thread wrote */
};

static char
race_byte (int id, uint64_t off)
{
  /* The shared stretch has one content whoever writes it. */
  return off >= RACE_SHARED ? (char)(off * 7 + 1) : (char)(id + off * 13);
}

static void *
racer (void *opaque)
{
  struct racer *a = opaque;
  char *buf = malloc (70000);
  int i;

  for (i = 0; i < 400; i++) {
    uint64_t h = fm_hash (a->id, FM_STREAM_BENCH, i, 0);
    uint64_t len = 1 + fm_below (h, 70000), base, span, off, k;

    if (i % 2) { /* the shared stretch */
      base = RACE_SHARED;
      span = RACE_SHARED;
    } else {
      base = (uint64_t)a->id * RACE_OWN;
      span = RACE_OWN;
    }
    off = base + fm_below (fm_hash (a->id, FM_STREAM_BENCH, i, 1), span - len);
    for (k = 0; k < len; k++)
      buf[k] = race_byte (a->id, off + k);
    ck_assert_int_eq (a->s->ops->write (a->s, buf, len, off), 0);
    memset (a->written + off, 1, len);
  }
  free (buf);
  return NULL;
}

static int
count_data (void *opaque, uint64_t offset, uint64_t length, bool hole)
{
  if (!hole)
    *(uint64_t *)opaque += length;
  return 0;
}

static void
race_test (struct store *s)
{
  struct racer a[RACE_THREADS];
  pthread_t th[RACE_THREADS];
  char *buf = malloc (STORE_PAGE);
  uint64_t p, pages = 0;
  int i;

  ck_assert_ptr_nonnull (s);
  for (i = 0; i < RACE_THREADS; i++) {
    a[i] = (struct racer){s, i, calloc (1, 2 * RACE_SHARED)};
    ck_assert_int_eq (pthread_create (&th[i], NULL, racer, &a[i]), 0);
  }
  for (i = 0; i < RACE_THREADS; i++)
    pthread_join (th[i], NULL);
  /* Every byte someone wrote reads as written, every other as zero. */
  for (p = 0; p < 2 * RACE_SHARED / STORE_PAGE; p++) {
    uint64_t k, bad = 0;
    int id = p * STORE_PAGE < RACE_SHARED ? p * STORE_PAGE / RACE_OWN : 0;
    ck_assert_int_eq (s->ops->read (s, buf, STORE_PAGE, p * STORE_PAGE), 0);
    for (k = 0; k < STORE_PAGE; k++) {
      uint64_t off = p * STORE_PAGE + k;
      bool w = false;
      for (i = 0; i < RACE_THREADS; i++)
        w |= a[i].written[off];
      bad += buf[k] != (w ? race_byte (id, off) : 0);
    }
    ck_assert_uint_eq (bad, 0);
  }
  for (i = 0; i < RACE_THREADS; i++)
    free (a[i].written);
  /* Each page the table holds is counted once: none added twice. */
  ck_assert_int_eq (s->ops->extents (s, 2 * RACE_SHARED, 0, count_data, &pages),
                    0);
  ck_assert_uint_gt (pages, 0);
  ck_assert_uint_eq (s->ops->bytes_stored (s), pages);
  free (buf);
  s->ops->close (s);
}

START_TEST (test_ram_race)
{
  struct fm_err err;

  race_test (store_ram_new (2 * RACE_SHARED, false, &err));
  /* The hashed layout adds pages under its lock: "added meanwhile". */
  race_test (store_ram_new (1ULL << 40, false, &err));
}
END_TEST

/* The flat layout: reading holes costs no memory, writing costs what is
 * written, punching gives it back; the size limit is enforced.  Measured
 * in the store's own range (mincore), not the process's RSS, which
 * ASan's shadow memory and the kernel's accounting move by megabytes.
 */
START_TEST (test_flat_memory)
{
  const uint64_t cap = 64ULL << 30;
  struct fm_err err;
  struct store *s = store_flat_new (cap, &err);
  char *buf = malloc (1 << 20);
  uint64_t i;

  ck_assert_ptr_nonnull (s);
  ck_assert_int_eq (store_flat_resident (s), 0);
  /* Holes 16 MiB apart: touching any would map a page (the zero page
   * counts) and cost a page table.
   */
  for (i = 0; i < 4096; i++)
    ck_assert_int_eq (s->ops->read (s, buf, STORE_PAGE, i * (cap / 4096)), 0);
  ck_assert_int_eq (store_flat_resident (s), 0);
  memset (buf, 0x5a, 1 << 20);
  for (i = 0; i < 64; i++)
    ck_assert_int_eq (s->ops->write (s, buf, 1 << 20, (1ULL << 30) + (i << 20)),
                      0);
  /* Exactly what was written is mapped (no huge pages); a loaded machine
   * may have swapped a little of it out already.
   */
  ck_assert_int_le (store_flat_resident (s), 64 << 20);
  ck_assert_int_gt (store_flat_resident (s), 60 << 20);
  ck_assert_uint_eq (s->ops->bytes_stored (s), 64 << 20);
  ck_assert_int_eq (s->ops->zero (s, 64 << 20, 1ULL << 30, true), 0);
  ck_assert_int_eq (store_flat_resident (s), 0);
  ck_assert_uint_eq (s->ops->bytes_stored (s), 0);
  ck_assert_int_eq (s->ops->read (s, buf, 1 << 20, 1ULL << 30), 0);
  ck_assert_int_eq (buf[0] | buf[(1 << 20) - 1], 0);
  /* Punched pages are holes again: reading them maps nothing. */
  ck_assert_int_eq (store_flat_resident (s), 0);
  s->ops->close (s);
  free (buf);

  ck_assert_ptr_null (store_flat_new (STORE_FLAT_MAX + 1, &err));
  ck_assert_ptr_nonnull (strstr (err.msg, "68719476737"));
}
END_TEST

#ifndef __SANITIZE_ADDRESS__
/* A line of /proc/self/status ("VmSize"), in bytes. */
static uint64_t
vm_bytes (const char *key)
{
  char line[128];
  unsigned long long kib = 0;
  FILE *f = fopen ("/proc/self/status", "r");

  ck_assert_ptr_nonnull (f);
  while (fgets (line, sizeof line, f))
    if (strncmp (line, key, strlen (key)) == 0 && line[strlen (key)] == ':')
      kib = strtoull (line + strlen (key) + 1, NULL, 10);
  fclose (f);
  return kib * 1024;
}
#endif

/* Where the address space for the flat layout cannot be reserved (a
 * limit, strict overcommit), a small disk still gets a RAM store: the
 * hashed layout.  Not under ASan, which needs address space of its own.
 */
START_TEST (test_ram_fallback)
{
#ifndef __SANITIZE_ADDRESS__
  struct rlimit lim;
  struct fm_err err;
  struct store *s;

  ck_assert_int_eq (getrlimit (RLIMIT_AS, &lim), 0);
  lim.rlim_cur = vm_bytes ("VmSize") + (1ULL << 30);
  ck_assert_int_eq (setrlimit (RLIMIT_AS, &lim), 0);
  ck_assert_ptr_null (store_flat_new (32ULL << 30, &err));
  ck_assert_ptr_nonnull (strstr (err.msg, "cannot reserve"));
  s = store_ram_new (32ULL << 30, false, &err);
  ck_assert_ptr_nonnull (s);
  shadow_test (s, 4);
  s->ops->close (s);
#endif
}
END_TEST

/* Locked memory refuses to be given back: a punched page must still read
 * as zeros around bytes written to it later.  Not under ASan, whose
 * shadow memory cannot all be locked.
 */
START_TEST (test_flat_locked)
{
#ifndef __SANITIZE_ADDRESS__
  struct fm_err err;
  struct store *s;
  char page[STORE_PAGE];
  int k, bad = 0;

  if (mlockall (MCL_CURRENT | MCL_FUTURE) == -1) {
    /* Only root may lock this much (CI runs as root). */
    fprintf (stderr, "flat_locked: mlockall: %s: not tested\n",
             strerror (errno));
    return;
  }
  s = store_flat_new (1 << 20, &err);
  ck_assert_ptr_nonnull (s);
  memset (page, 'x', sizeof page);
  ck_assert_int_eq (s->ops->write (s, page, STORE_PAGE, STORE_PAGE), 0);
  ck_assert_int_eq (s->ops->zero (s, STORE_PAGE, STORE_PAGE, true), 0);
  ck_assert_uint_eq (s->ops->bytes_stored (s), 0);
  ck_assert_int_eq (s->ops->write (s, "y", 1, STORE_PAGE + 100), 0);
  ck_assert_int_eq (s->ops->read (s, page, STORE_PAGE, STORE_PAGE), 0);
  for (k = 0; k < STORE_PAGE; k++)
    bad += page[k] != (k == 100 ? 'y' : 0);
  ck_assert_int_eq (bad, 0);
  s->ops->close (s);
  munlockall ();
#endif
}
END_TEST

START_TEST (test_file_shadow)
{
  char path[256];
  struct fm_err err;
  struct store *s;

  make_tmpdir ();
  snprintf (path, sizeof path, "%s/disk", tmpdir);
  s = store_file_open (path, SMALL, "roadmap-2013", &err);
  ck_assert_msg (s != NULL, "%s", err.msg);
  shadow_test (s, 2);
  s->ops->close (s);
  unlink (path);
  rmdir (tmpdir);
}
END_TEST

START_TEST (test_file_reopen)
{
  char path[256], buf[16];
  struct fm_err err;
  struct store *s;
  int fd;

  make_tmpdir ();
  snprintf (path, sizeof path, "%s/disk", tmpdir);
  s = store_file_open (path, SMALL, "roadmap-2006", &err);
  ck_assert_ptr_nonnull (s);
  ck_assert_int_eq (s->ops->write (s, "persistent", 10, 1048576 + 12345), 0);
  ck_assert_int_eq (s->ops->flush (s), 0);
  extents_test (s);
  s->ops->close (s);

  s = store_file_open (path, SMALL, "roadmap-2006", &err);
  ck_assert_msg (s != NULL, "%s", err.msg);
  ck_assert_int_eq (s->ops->read (s, buf, 10, 1048576 + 12345), 0);
  ck_assert_mem_eq (buf, "persistent", 10);
  s->ops->close (s);

  ck_assert_ptr_null (store_file_open (path, SMALL * 2, "roadmap-2006", &err));
  ck_assert_ptr_nonnull (strstr (err.msg, "holds a 67108864-byte disk, but "
                                          "size is 134217728 bytes"));
  ck_assert_ptr_null (store_file_open (path, SMALL, "roadmap-2013", &err));
  ck_assert_ptr_nonnull (strstr (err.msg, "was made with profile "
                                          "roadmap-2006, not roadmap-2013"));
  /* Something that is not a store is never overwritten. */
  unlink (path);
  fd = open (path, O_CREAT | O_WRONLY, 0600);
  ck_assert_int_eq (write (fd, "my precious data", 16), 16);
  close (fd);
  ck_assert_ptr_null (store_file_open (path, SMALL, "roadmap-2006", &err));
  ck_assert_ptr_nonnull (strstr (err.msg, "is not a futuredisk store"));
  unlink (path);
  ck_assert_ptr_null (
      store_file_open ("/nonexistent/dir/disk", SMALL, "x", &err));
  ck_assert_ptr_nonnull (strstr (err.msg, "No such file or directory"));
  rmdir (tmpdir);
}
END_TEST

/* 24 TB in a file store on ext4, whose files stop at 16 TiB: the disk
 * continues in DISK.1 and DISK.2 (8 TiB each).  Writes straddling a
 * boundary, extents across it, the last byte, a reopen, and a missing
 * part refused.
 */
START_TEST (test_file_large)
{
  const uint64_t cap = 24000000000000ULL, seg = 1ULL << 43;
  char path[256], part[280], buf[2 * STORE_PAGE], back[2 * STORE_PAGE];
  struct ext_list l = {.n = 0};
  struct fm_err err;
  struct store *s;
  size_t i;

  make_tmpdir ();
  snprintf (path, sizeof path, "%s/disk", tmpdir);
  s = store_file_open (path, cap, "cmr-20t-2024", &err);
  ck_assert_msg (s != NULL, "%s", err.msg);
  for (i = 0; i < sizeof buf; i++)
    buf[i] = (char)(i * 7 + 1);
  /* Across the first boundary, and at the very end. */
  ck_assert_int_eq (s->ops->write (s, buf, sizeof buf, seg - STORE_PAGE), 0);
  ck_assert_int_eq (s->ops->write (s, buf, 1, cap - 1), 0);
  ck_assert_int_eq (s->ops->flush (s), 0);
  ck_assert_int_eq (
      s->ops->extents (s, 4 * STORE_PAGE, seg - 2 * STORE_PAGE, collect, &l),
      0);
  /* hole, the data (one run, though it is in two files), hole */
  ck_assert_int_eq (l.n, 3);
  ck_assert (l.hole[0] && !l.hole[1] && l.hole[2]);
  ck_assert_uint_eq (l.off[1], seg - STORE_PAGE);
  ck_assert_uint_eq (l.len[1], 2 * STORE_PAGE);
  ck_assert_uint_eq (l.off[2], seg + STORE_PAGE);
  ck_assert_int_eq (s->ops->zero (s, STORE_PAGE, seg, true), 0);
  s->ops->close (s);

  s = store_file_open (path, cap, "cmr-20t-2024", &err);
  ck_assert_msg (s != NULL, "%s", err.msg);
  ck_assert_int_eq (s->ops->read (s, back, sizeof back, seg - STORE_PAGE), 0);
  ck_assert_mem_eq (back, buf, STORE_PAGE);
  memset (buf + STORE_PAGE, 0, STORE_PAGE); /* zeroed after the boundary */
  ck_assert_mem_eq (back + STORE_PAGE, buf + STORE_PAGE, STORE_PAGE);
  ck_assert_int_eq (s->ops->read (s, back, 1, cap - 1), 0);
  ck_assert_int_eq (back[0], 1);
  s->ops->close (s);

  snprintf (part, sizeof part, "%s.2", path);
  ck_assert_int_eq (unlink (part), 0);
  ck_assert_ptr_null (store_file_open (path, cap, "cmr-20t-2024", &err));
  ck_assert_ptr_nonnull (strstr (err.msg, "a part of the store is missing"));
  unlink (path);
  snprintf (part, sizeof part, "%s.1", path);
  unlink (part);
  rmdir (tmpdir);
}
END_TEST

/* ---- copy-on-write clones of a base store ---- */

/* The whole of a file, to see that a base is never written. */
static char *
slurp (const char *path, size_t *len)
{
  FILE *fp = fopen (path, "rb");
  char *buf;

  ck_assert_ptr_nonnull (fp);
  ck_assert_int_eq (fseek (fp, 0, SEEK_END), 0);
  *len = (size_t)ftell (fp);
  rewind (fp);
  buf = malloc (*len);
  ck_assert_uint_eq (fread (buf, 1, *len, fp), *len);
  fclose (fp);
  return buf;
}

/* a and b report the same extents and the same bytes stored. */
static void
same_extents (struct store *a, struct store *b)
{
  struct ext_list *la = calloc (1, sizeof *la), *lb = calloc (1, sizeof *lb);
  int i;

  ck_assert_int_eq (a->ops->extents (a, SMALL, 0, collect, la), 0);
  ck_assert_int_eq (b->ops->extents (b, SMALL, 0, collect, lb), 0);
  ck_assert_int_gt (la->n, 10);
  ck_assert_int_eq (la->n, lb->n);
  for (i = 0; i < la->n; i++) {
    ck_assert_uint_eq (la->off[i], lb->off[i]);
    ck_assert_uint_eq (la->len[i], lb->len[i]);
    ck_assert_int_eq (la->hole[i], lb->hole[i]);
  }
  ck_assert_uint_eq (a->ops->bytes_stored (a), b->ops->bytes_stored (b));
  free (la);
  free (lb);
}

/* A base written at random, an overlay of it written at random on top:
 * the clone reads as the two streams of writes would leave one disk,
 * reports the extents and bytes stored of a store that took both
 * streams, keeps its bytes across a reopen, and the base's file is the
 * same to the byte.
 */
START_TEST (test_cow_shadow)
{
  char base[256], over[256], fresh[256], *shadow = calloc (1, SMALL), *b0, *b1;
  size_t n0, n1;
  struct fm_err err;
  struct store *s, *f;

  make_tmpdir ();
  snprintf (base, sizeof base, "%s/base", tmpdir);
  snprintf (over, sizeof over, "%s/over", tmpdir);
  snprintf (fresh, sizeof fresh, "%s/fresh", tmpdir);
  s = store_file_open (base, SMALL, "roadmap-2013", &err);
  ck_assert_msg (s != NULL, "%s", err.msg);
  shadow_ops (s, shadow, 5);
  s->ops->close (s);
  b0 = slurp (base, &n0);

  ck_assert_msg (
      store_file_make_overlay (over, base, SMALL, "roadmap-2013", &err) == 0,
      "%s", err.msg);
  s = store_file_open (over, SMALL, "roadmap-2013", &err);
  ck_assert_msg (s != NULL, "%s", err.msg);
  ck_assert_str_eq (s->ops->name, "file+base");
  same_bytes (s, shadow);
  shadow_ops (s, shadow, 6);
  same_bytes (s, shadow);
  ck_assert_int_eq (s->ops->flush (s), 0);

  f = store_file_open (fresh, SMALL, "roadmap-2013", &err);
  ck_assert_msg (f != NULL, "%s", err.msg);
  b1 = calloc (1, SMALL);
  shadow_ops (f, b1, 5);
  shadow_ops (f, b1, 6);
  ck_assert_mem_eq (b1, shadow, SMALL);
  free (b1);
  same_extents (s, f);
  f->ops->close (f);
  s->ops->close (s);

  /* A restart: the same base and overlay, the same disk. */
  ck_assert_int_eq (
      store_file_make_overlay (over, base, SMALL, "roadmap-2013", &err), 0);
  s = store_file_open (over, SMALL, "roadmap-2013", &err);
  ck_assert_msg (s != NULL, "%s", err.msg);
  same_bytes (s, shadow);
  s->ops->close (s);

  b1 = slurp (base, &n1);
  ck_assert_uint_eq (n0, n1);
  ck_assert_mem_eq (b0, b1, n0);
  free (b0);
  free (b1);
  free (shadow);
  unlink (base);
  unlink (over);
  unlink (fresh);
  rmdir (tmpdir);
}
END_TEST

/* Pages of the base written, zeroed and trimmed in part and whole: the
 * rest of each page keeps the base's bytes; extents see the union.
 */
START_TEST (test_cow_extents)
{
  char base[256], over[256], page[STORE_PAGE], back[STORE_PAGE];
  struct ext_list l = {.n = 0};
  struct fm_err err;
  struct store *s;

  make_tmpdir ();
  snprintf (base, sizeof base, "%s/base", tmpdir);
  snprintf (over, sizeof over, "%s/over", tmpdir);
  s = store_file_open (base, SMALL, "roadmap-2013", &err);
  memset (page, 'b', sizeof page);
  ck_assert_int_eq (s->ops->write (s, page, STORE_PAGE, 2 * STORE_PAGE), 0);
  ck_assert_int_eq (s->ops->write (s, page, STORE_PAGE, 4 * STORE_PAGE), 0);
  ck_assert_int_eq (s->ops->write (s, page, STORE_PAGE, 6 * STORE_PAGE), 0);
  s->ops->close (s);
  ck_assert_int_eq (
      store_file_make_overlay (over, base, SMALL, "roadmap-2013", &err), 0);
  s = store_file_open (over, SMALL, "roadmap-2013", &err);
  ck_assert_msg (s != NULL, "%s", err.msg);
  /* Part of base page 2 rewritten; base page 4 trimmed whole; part of
   * base page 6 zeroed; part of page 9 (a hole in both) written; part
   * of page 11 (a hole) zeroed, which leaves it a hole.
   */
  ck_assert_int_eq (s->ops->write (s, "over", 4, 2 * STORE_PAGE + 100), 0);
  ck_assert_int_eq (s->ops->zero (s, STORE_PAGE, 4 * STORE_PAGE, true), 0);
  ck_assert_int_eq (s->ops->zero (s, 10, 6 * STORE_PAGE + 7, true), 0);
  ck_assert_int_eq (s->ops->write (s, page, 100, 9 * STORE_PAGE + 5), 0);
  ck_assert_int_eq (s->ops->zero (s, 10, 11 * STORE_PAGE + 7, true), 0);
  ck_assert_int_eq (s->ops->read (s, back, STORE_PAGE, 2 * STORE_PAGE), 0);
  ck_assert_int_eq (back[99], 'b');
  ck_assert_mem_eq (back + 100, "over", 4);
  ck_assert_int_eq (back[104], 'b');
  ck_assert_int_eq (s->ops->read (s, back, STORE_PAGE, 6 * STORE_PAGE), 0);
  ck_assert_int_eq (back[6], 'b');
  ck_assert_int_eq (back[7], 0);
  ck_assert_int_eq (back[16], 0);
  ck_assert_int_eq (back[17], 'b');
  ck_assert_int_eq (s->ops->read (s, back, STORE_PAGE, 4 * STORE_PAGE), 0);
  ck_assert_int_eq (back[0] | back[STORE_PAGE - 1], 0);
  ck_assert_int_eq (s->ops->extents (s, 12 * STORE_PAGE, 0, collect, &l), 0);
  /* hole 0-1, data 2, hole 3-5, data 6, hole 7-8, data 9, hole 10-11 */
  ck_assert_int_eq (l.n, 7);
  ck_assert (l.hole[0] && l.len[0] == 2 * STORE_PAGE);
  ck_assert (!l.hole[1] && l.len[1] == STORE_PAGE);
  ck_assert (l.hole[2] && l.len[2] == 3 * STORE_PAGE);
  ck_assert (!l.hole[3] && l.off[3] == 6 * STORE_PAGE);
  ck_assert (l.hole[4] && l.len[4] == 2 * STORE_PAGE);
  ck_assert (!l.hole[5] && l.off[5] == 9 * STORE_PAGE);
  ck_assert (l.hole[6] && l.off[6] + l.len[6] == 12 * STORE_PAGE);
  ck_assert_uint_eq (s->ops->bytes_stored (s), 3 * STORE_PAGE);
  s->ops->close (s);
  unlink (base);
  unlink (over);
  rmdir (tmpdir);
}
END_TEST

/* Many threads write their own 512-byte pieces of base pages at once:
 * copying a page up must not undo another thread's piece.
 */
struct piece_writer {
  struct store *s;
  int id;
};

static void *
write_pieces (void *opaque)
{
  struct piece_writer *w = opaque;
  char piece[512];
  uint64_t p;

  memset (piece, 'A' + w->id, sizeof piece);
  for (p = 0; p < 512; p++)
    ck_assert_int_eq (w->s->ops->write (w->s, piece, sizeof piece,
                                        p * STORE_PAGE + w->id * 512),
                      0);
  return NULL;
}

START_TEST (test_cow_race)
{
  char base[256], over[256], *all = malloc (512 * STORE_PAGE);
  struct piece_writer w[8];
  pthread_t th[8];
  struct fm_err err;
  struct store *s;
  uint64_t k;
  int i;

  make_tmpdir ();
  snprintf (base, sizeof base, "%s/base", tmpdir);
  snprintf (over, sizeof over, "%s/over", tmpdir);
  s = store_file_open (base, SMALL, "roadmap-2013", &err);
  memset (all, 'b', 512 * STORE_PAGE);
  ck_assert_int_eq (s->ops->write (s, all, 512 * STORE_PAGE, 0), 0);
  s->ops->close (s);
  ck_assert_int_eq (
      store_file_make_overlay (over, base, SMALL, "roadmap-2013", &err), 0);
  s = store_file_open (over, SMALL, "roadmap-2013", &err);
  for (i = 0; i < 8; i++) {
    w[i] = (struct piece_writer){.s = s, .id = i};
    pthread_create (&th[i], NULL, write_pieces, &w[i]);
  }
  for (i = 0; i < 8; i++)
    pthread_join (th[i], NULL);
  ck_assert_int_eq (s->ops->read (s, all, 512 * STORE_PAGE, 0), 0);
  /* (One assertion: Check's are slow in a loop of millions.) */
  for (k = 0; k < 512 * STORE_PAGE; k++)
    if (all[k] != 'A' + (int)(k % STORE_PAGE / 512))
      break;
  ck_assert_uint_eq (k, 512 * STORE_PAGE);
  s->ops->close (s);
  free (all);
  unlink (base);
  unlink (over);
  rmdir (tmpdir);
}
END_TEST

/* What base= refuses, each with an error saying why. */
START_TEST (test_cow_refuse)
{
  char base[256], over[256], other[256];
  struct fm_err err;
  struct store *s;
  int fd;

  make_tmpdir ();
  snprintf (base, sizeof base, "%s/base", tmpdir);
  snprintf (over, sizeof over, "%s/over", tmpdir);
  snprintf (other, sizeof other, "%s/other", tmpdir);
  ck_assert_int_eq (store_file_make_overlay (over, base, SMALL, "x", &err), -1);
  ck_assert_ptr_nonnull (strstr (err.msg, "No such file or directory"));
  s = store_file_open (base, SMALL, "roadmap-2013", &err);
  s->ops->close (s);
  s = store_file_open (other, SMALL, "roadmap-2013", &err);
  s->ops->close (s);
  ck_assert_int_eq (
      store_file_make_overlay (over, base, SMALL * 2, "roadmap-2013", &err),
      -1);
  ck_assert_ptr_nonnull (strstr (err.msg, "holds a 67108864-byte disk"));
  /* A plain store is not made an overlay; an overlay keeps its base. */
  ck_assert_int_eq (
      store_file_make_overlay (other, base, SMALL, "roadmap-2013", &err), -1);
  ck_assert_ptr_nonnull (strstr (err.msg, "is a plain store, not an overlay"));
  ck_assert_int_eq (
      store_file_make_overlay (over, base, SMALL, "roadmap-2013", &err), 0);
  ck_assert_int_eq (
      store_file_make_overlay (over, other, SMALL, "roadmap-2013", &err), -1);
  ck_assert_ptr_nonnull (strstr (err.msg, "is an overlay of"));
  /* An overlay is no base. */
  ck_assert_int_eq (
      store_file_make_overlay (other, over, SMALL, "roadmap-2013", &err), -1);
  ck_assert_ptr_nonnull (strstr (err.msg, "is itself an overlay"));
  /* A base written after the overlay was made. */
  fd = open (base, O_WRONLY);
  ck_assert_int_eq (pwrite (fd, "x", 1, 8192), 1);
  close (fd);
  ck_assert_ptr_null (store_file_open (over, SMALL, "roadmap-2013", &err));
  ck_assert_ptr_nonnull (strstr (err.msg, "changed"));
  unlink (base);
  unlink (over);
  unlink (other);
  rmdir (tmpdir);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"ram_shadow", test_ram_shadow},
      {"ram_extents", test_ram_extents},
      {"ram_sparse", test_ram_sparse},
      {"ram_race", test_ram_race},
      {"ram_shadow_hashed", test_ram_shadow_hashed},
      {"ram_adopt", test_ram_adopt},
      {"ram_adopt_race", test_ram_adopt_race},
      {"flat_memory", test_flat_memory},
      {"ram_fallback", test_ram_fallback},
      {"flat_locked", test_flat_locked},
      {"file_shadow", test_file_shadow},
      {"file_reopen", test_file_reopen},
      {"file_large", test_file_large},
      {"cow_shadow", test_cow_shadow},
      {"cow_extents", test_cow_extents},
      {"cow_race", test_cow_race},
      {"cow_refuse", test_cow_refuse},
  };

  return fd_check_main ("store", cases, sizeof cases / sizeof cases[0]);
}
