/* futuredisk — nbdplugin: the sparse stores, RAM and file. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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

/* Random writes at random, unaligned offsets against a shadow copy. */
static void
shadow_test (struct store *s, uint64_t seed)
{
  char *shadow = calloc (1, SMALL), *buf = malloc (1 << 20);
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
  for (i = 0; i < SMALL / (1 << 20); i++) {
    ck_assert_int_eq (s->ops->read (s, buf, 1 << 20, (uint64_t)i << 20), 0);
    ck_assert_mem_eq (buf, shadow + ((uint64_t)i << 20), 1 << 20);
  }
  free (shadow);
  free (buf);
}

struct ext_list {
  uint64_t off[64], len[64];
  bool hole[64];
  int n;
};

static int
collect (void *opaque, uint64_t offset, uint64_t length, bool hole)
{
  struct ext_list *l = opaque;

  ck_assert_int_lt (l->n, 64);
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
  struct store *s = store_ram_new (SMALL, &err);

  ck_assert_ptr_nonnull (s);
  shadow_test (s, 1);
  s->ops->close (s);
}
END_TEST

/* The same on a disk big enough for the hash-table index. */
START_TEST (test_ram_shadow_hashed)
{
  struct fm_err err;
  struct store *s = store_ram_new (1ULL << 40, &err);

  ck_assert_ptr_nonnull (s);
  shadow_test (s, 2);
  s->ops->close (s);
  s = store_ram_new (1ULL << 40, &err);
  extents_test (s);
  s->ops->close (s);
}
END_TEST

START_TEST (test_ram_extents)
{
  struct fm_err err;
  struct store *s = store_ram_new (SMALL, &err);

  extents_test (s);
  s->ops->close (s);
}
END_TEST

/* 24 TB addressable; memory follows what is written, not the capacity. */
START_TEST (test_ram_sparse)
{
  const uint64_t cap = 24000000000000ULL;
  struct fm_err err;
  struct store *s = store_ram_new (cap, &err);
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

  race_test (store_ram_new (2 * RACE_SHARED, &err));
  /* The hashed layout adds pages under its lock: "added meanwhile". */
  race_test (store_ram_new (1ULL << 40, &err));
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
  s = store_ram_new (32ULL << 30, &err);
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
  /* hole, the data (reported per file: one page on each side), hole */
  ck_assert_int_eq (l.n, 4);
  ck_assert (l.hole[0] && !l.hole[1] && !l.hole[2] && l.hole[3]);
  ck_assert_uint_eq (l.off[1], seg - STORE_PAGE);
  ck_assert_uint_eq (l.len[1] + l.len[2], 2 * STORE_PAGE);
  ck_assert_uint_eq (l.off[3], seg + STORE_PAGE);
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

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"ram_shadow", test_ram_shadow},
      {"ram_extents", test_ram_extents},
      {"ram_sparse", test_ram_sparse},
      {"ram_race", test_ram_race},
      {"ram_shadow_hashed", test_ram_shadow_hashed},
      {"flat_memory", test_flat_memory},
      {"ram_fallback", test_ram_fallback},
      {"flat_locked", test_flat_locked},
      {"file_shadow", test_file_shadow},
      {"file_reopen", test_file_reopen},
      {"file_large", test_file_large},
  };

  return fd_check_main ("store", cases, sizeof cases / sizeof cases[0]);
}
