/* futuredisk — faultmodels: the write path (destage.c).
 *
 * Seen from outside as time and as the order of the destage callback:
 * reads are not stuck behind a writer's destages, sequential cached
 * writes go at the media rate, the dirty extents are bounded, destages go
 * in positioning-time order, small write-through writes take the media
 * cache at the datasheets' rate, and a flush costs at most what the
 * bounded cache can hold.
 * Expectations come from the profile's numbers, not the model's code.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check-main.h"
#include "faultmodels/disk.h"
#include "faultmodels/rng.h"
#include "model-tests.h"

#define KIB 1024ULL
#define MIB (1024 * KIB)
#define MS  1000000ULL

static struct fm_disk *
disk (const struct fm_profile *p, bool write_cache)
{
  return open_disk (p, 7, true, write_cache);
}

static struct fm_timing
io (struct fm_disk *d, enum fm_op op, uint64_t *now, uint64_t offset,
    uint64_t length, unsigned flags)
{
  struct fm_request rq = {.op = op,
                          .flags = flags,
                          .offset = offset,
                          .length = length,
                          .arrival_ns = *now};
  struct fm_timing t;

  fm_disk_submit (d, &rq, &t);
  *now = t.done_ns;
  return t;
}

/* The i-th of a seeded set of scattered 4 KiB offsets. */
static uint64_t
scattered (const struct fm_profile *p, uint64_t i)
{
  return fm_below (fm_hash (3, FM_STREAM_BENCH, i, 0), p->capacity / 4096) *
         4096;
}

/* What the media does at the outer edge: a 256 MiB read from LBA 0. */
static double
outer_rate (const struct fm_profile *p)
{
  struct fm_disk *d = disk (p, false);
  uint64_t now = 0;
  struct fm_timing t = io (d, FM_OP_READ, &now, 0, 256 * MIB, 0);

  fm_disk_free (d);
  return 256.0 * MIB / (t.done_ns - t.overhead_ns) * 1e9;
}

/* A QD1 reader behind a QD16 sequential writer that keeps the cache full:
 * no read waits past the age cap, and on average far less (a destage is
 * one track, not the cache).
 */
START_TEST (test_interleave)
{
  struct fm_profile p = profile ("cmr-20t-2024");
  struct fm_disk *d = disk (&p, true);
  struct fm_request w = {.op = FM_OP_WRITE, .length = MIB};
  struct fm_request r = {.op = FM_OP_READ, .length = 4096};
  struct fm_timing t;
  uint64_t tag, next = 0, sum = 0, longest = 0, reads = 0;
  bool reading = false;
  int k;

  for (k = 0; k < 16; k++, next += MIB) {
    w.offset = next;
    fm_disk_enqueue (d, &w, 0);
  }
  while (reads < 50 && fm_disk_dispatch (d, UINT64_MAX, &tag, &t)) {
    if (tag == 1) {
      uint64_t wait = t.done_ns - (t.start_ns - t.queue_ns);

      sum += wait;
      longest = wait > longest ? wait : longest;
      reads++;
    }
    if (tag == 1 ||
        (!reading && fm_disk_dirty_bytes (d) >= p.cache_bytes - 16 * MIB)) {
      reading = true;
      r.offset = scattered (&p, reads);
      r.arrival_ns = t.done_ns;
      fm_disk_enqueue (d, &r, 1);
    }
    if (tag == 0) {
      w.offset = next;
      next += MIB;
      w.arrival_ns = t.done_ns;
      fm_disk_enqueue (d, &w, 0);
    }
  }
  ck_assert_uint_eq (reads, 50);
  ck_assert_msg (longest <= p.queue_age_ns, "a read waited %llu ns",
                 (unsigned long long)longest);
  ck_assert_msg (sum / reads < 50 * MS, "reads waited %llu ns on average",
                 (unsigned long long)(sum / reads));
  fm_disk_free (d);
}
END_TEST

/* Cached sequential 1 MiB writes at QD1 over 2 GiB: past the first GiB
 * (the cache long full) they go at the outer media rate, within 10 %.
 */
START_TEST (test_sequential_rate)
{
  struct fm_profile p = profile ("cmr-20t-2024");
  struct fm_disk *d = disk (&p, true);
  double media = outer_rate (&p), rate;
  uint64_t now = 0, i, mid = 0;

  for (i = 0; i < 2048; i++) {
    io (d, FM_OP_WRITE, &now, i * MIB, MIB, 0);
    if (i == 1023)
      mid = now;
  }
  rate = 1024.0 * MIB / (now - mid) * 1e9;
  ck_assert_msg (rate >= 0.9 * media && rate <= 1.1 * media,
                 "%.1f MB/s against the media's %.1f", rate / 1e6, media / 1e6);
  fm_disk_free (d);
}
END_TEST

/* Scattered writes cost the bus alone while the cache holds few; a long
 * burst goes at the media's speed and never holds more than write_entries
 * extents.
 */
START_TEST (test_entries_bound)
{
  struct fm_profile p = profile ("cmr-20t-2024");
  struct fm_disk *d;
  struct fm_timing t;
  uint64_t now = 0, i, start;

  p.write_entries = 16;
  d = disk (&p, true);
  /* Below half the bound nothing destages: each costs the bus alone. */
  for (i = 0; i < 7; i++) {
    t = io (d, FM_OP_WRITE, &now, scattered (&p, i), 4096, 0);
    ck_assert (t.write_cached);
    ck_assert_uint_lt (t.done_ns - t.start_ns, 200000);
  }
  start = now;
  for (i = 7; i < 1007; i++) {
    io (d, FM_OP_WRITE, &now, scattered (&p, i), 4096, 0);
    ck_assert_uint_le (fm_disk_dirty_bytes (d), 16 * 4096);
  }
  /* One destage each: at least a settle and a sector, below a full
   * stroke and a revolution.
   */
  ck_assert_uint_gt ((now - start) / 1000, p.seek_t2t_ns);
  ck_assert_uint_lt ((now - start) / 1000, p.seek_full_ns + p.write_settle_ns +
                                               60 * 1000000000ULL / p.rpm);
  fm_disk_free (d);
}
END_TEST

struct order {
  uint64_t off[8];
  int n;
};

static void
note_destage (void *opaque, uint64_t offset, uint64_t length)
{
  struct order *o = opaque;

  (void)length;
  if (o->n < 8)
    o->off[o->n++] = offset;
}

/* The head parked mid-disk; one dirty extent a little behind it in LBA
 * order, one far ahead.  The elevator would go ahead first; the shortest
 * positioning time takes the near one behind.
 */
START_TEST (test_sptf_order)
{
  struct fm_profile p = profile ("cmr-20t-2024");
  struct fm_disk *d = disk (&p, true);
  uint64_t now = 0, mid = p.capacity / 2 / 4096 * 4096;
  uint64_t behind = mid - 8 * MIB, far = p.capacity - 64 * MIB;
  struct order o = {.n = 0};

  fm_disk_on_destage (d, note_destage, &o);
  io (d, FM_OP_WRITE, &now, behind, 4096, 0);
  io (d, FM_OP_WRITE, &now, far, 4096, 0);
  io (d, FM_OP_READ, &now, mid, 4096, 0);
  io (d, FM_OP_FLUSH, &now, 0, 0, 0);
  ck_assert_int_eq (o.n, 2);
  ck_assert_uint_eq (o.off[0], behind);
  ck_assert_uint_eq (o.off[1], far);
  fm_disk_free (d);
}
END_TEST

/* QD16 scattered 4 KiB writes with the cache off: n of them, the rate of
 * the second half.
 */
static double
qd16_rate (const struct fm_profile *p, uint64_t n)
{
  struct fm_disk *d = disk (p, false);
  struct fm_request w = {.op = FM_OP_WRITE, .length = 4096};
  struct fm_timing t;
  uint64_t issued, done = 0, tag, half = 0, last = 0;

  for (issued = 0; issued < 16; issued++) {
    w.offset = scattered (p, issued);
    fm_disk_enqueue (d, &w, issued);
  }
  while (fm_disk_dispatch (d, UINT64_MAX, &tag, &t)) {
    if (++done == n / 2)
      half = t.done_ns;
    last = t.done_ns;
    if (issued < n) {
      w.offset = scattered (p, issued++);
      w.arrival_ns = t.done_ns;
      fm_disk_enqueue (d, &w, 0);
    }
  }
  fm_disk_free (d);
  return (n - n / 2) / ((last - half) / 1e9);
}

/* Write-through writes land in the media cache: a hop, not a seek home;
 * they survive a power cut; cleaning from a pool outruns writing home.
 */
START_TEST (test_media_cache)
{
  struct fm_profile p = profile ("cmr-20t-2024"), home = p;
  struct fm_disk *d = disk (&p, false);
  struct order o = {.n = 0};
  struct fm_timing t;
  uint64_t now = 0, i;
  double staged, direct;

  ck_assert_uint_gt (p.media_cache_entries, 0);
  home.media_cache_entries = 0;
  for (i = 0; i < 8; i++) {
    t = io (d, FM_OP_WRITE, &now, scattered (&p, i), 4096, 0);
    ck_assert (!t.write_cached);
    ck_assert_uint_lt (t.done_ns - t.start_ns, p.seek_t2t_ns + 2 * MS);
  }
  fm_disk_powercut (d, note_destage, &o);
  ck_assert_int_eq (o.n, 0);
  fm_disk_free (d);
  /* With the cache on, FUA takes the same path. */
  d = disk (&p, true);
  t = io (d, FM_OP_WRITE, &now, scattered (&p, 9), 4096, FM_REQ_FUA);
  ck_assert (!t.write_cached);
  ck_assert_uint_lt (t.done_ns - t.start_ns, p.seek_t2t_ns + 2 * MS);
  fm_disk_free (d);

  p.media_cache_entries = 1024;
  staged = qd16_rate (&p, 6000);
  direct = qd16_rate (&home, 6000);
  ck_assert_msg (staged > 1.3 * direct, "%.0f IOPS staged, %.0f home", staged,
                 direct);
}
END_TEST

/* While the media cache has room, QD16 write-through 4 KiB writes go at
 * the datasheets' rate (4K QD16 random write, write cache disabled):
 * within 10 % of it.
 */
START_TEST (test_writethrough_rate)
{
  static const struct {
    const char *name;
    double iops;
  } published[] = {
      {"cmr-20t-2024", 550},  /* Exos X24, DS2080 */
      {"hamr-30t-2024", 350}, /* Exos M, DS2045 */
      {"dual-18t-2022", 560}, /* Exos 2X18 */
  };
  size_t i;

  for (i = 0; i < sizeof published / sizeof published[0]; i++) {
    struct fm_profile p = profile (published[i].name);
    double rate = qd16_rate (&p, 20000);

    ck_assert_uint_gt (p.media_cache_entries, 20000);
    ck_assert_msg (rate >= 0.9 * published[i].iops &&
                       rate <= 1.1 * published[i].iops,
                   "%s: %.0f IOPS against the datasheet's %.0f",
                   published[i].name, rate, published[i].iops);
  }
}
END_TEST

/* A burst far beyond the cache's extents, then a flush: the flush writes
 * at most write_entries extents, each within a full stroke and a
 * revolution and a track.
 */
START_TEST (test_flush_bounded)
{
  struct fm_profile p = profile ("cmr-20t-2024");
  struct fm_disk *d = disk (&p, true);
  uint64_t now = 0, i, rev = 60 * 1000000000ULL / p.rpm, bound;
  struct fm_timing t;

  for (i = 0; i < 20000; i++)
    io (d, FM_OP_WRITE, &now, scattered (&p, i), 4096, 0);
  t = io (d, FM_OP_FLUSH, &now, 0, 0, 0);
  bound = p.write_entries *
          (p.seek_full_ns + p.write_settle_ns + 2 * rev + 10 * MS);
  ck_assert_uint_eq (fm_disk_dirty_bytes (d), 0);
  ck_assert_msg (t.done_ns - t.start_ns <= bound, "flush took %llu ns",
                 (unsigned long long)(t.done_ns - t.start_ns));
  /* ... and well under a second: the published consumer flush of 64
   * writes is ~0.6 s (ublk-disksim).
   */
  ck_assert_uint_lt (t.done_ns - t.start_ns, 2000 * MS);
  fm_disk_free (d);
}
END_TEST

START_TEST (test_keys)
{
  static const struct {
    const char *line;
    const char *message;
  } bad[] = {
      {"write_entries = 0\n",
       "t.profile:3: write_entries: 0 is out of range [1, 4096]"},
      {"write_entries = 5000\n",
       "t.profile:3: write_entries: 5000 is out of range [1, 4096]"},
      {"media_cache_entries = 70000\n",
       "t.profile:3: media_cache_entries: 70000 is out of range [0, 65536]"},
      {"media_cache_ms = 200\n",
       "t.profile:3: media_cache_ms: 200 is out of range [0, 100]"},
  };
  struct fm_profile p;
  struct fm_err err;
  char text[256];
  size_t i;

  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    snprintf (text, sizeof text, "base = cmr-20t-2024\nname = t\n%s",
              bad[i].line);
    ck_assert_int_eq (
        fm_profile_parse ("t.profile", text, strlen (text), &p, &err), -1);
    ck_assert_str_eq (err.msg, bad[i].message);
  }
  snprintf (text, sizeof text,
            "base = cmr-20t-2024\nname = t\nwrite_entries = 64\n"
            "media_cache_entries = "
            "0\nmedia_cache_ms = 2.5\n");
  ck_assert_int_eq (
      fm_profile_parse ("t.profile", text, strlen (text), &p, &err), 0);
  ck_assert_uint_eq (p.write_entries, 64);
  ck_assert_uint_eq (p.media_cache_entries, 0);
  ck_assert_uint_eq (p.media_cache_ns, 2500000);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"interleave", test_interleave},
      {"sequential_rate", test_sequential_rate},
      {"entries_bound", test_entries_bound},
      {"sptf_order", test_sptf_order},
      {"media_cache", test_media_cache},
      {"writethrough_rate", test_writethrough_rate},
      {"flush_bounded", test_flush_bounded},
      {"keys", test_keys},
  };

  return fd_check_main ("write", cases, sizeof cases / sizeof cases[0]);
}
