/* futuredisk — faultmodels: the drive's segmented read buffer.
 *
 * What a segment does is seen from outside only as time: a read served
 * by the buffer costs the command overhead and the bus transfer, exactly;
 * anything else pays the media.  Expectations come from the profile's
 * numbers (command_ms, interface_mbps, readahead, cache), not the model's.
 */
#include <check.h>
#include <string.h>

#include "check-main.h"
#include "faultmodels/disk.h"
#include "model-tests.h"

#define KIB 1024ULL
#define MIB (1024 * KIB)
#define MS  1000000ULL

static struct fm_disk *
disk (const struct fm_profile *p, bool write_cache)
{
  return open_disk (p, 7, true, write_cache);
}

/* One request arriving at *now; the client then thinks for `think`. */
static struct fm_timing
io (struct fm_disk *d, enum fm_op op, uint64_t *now, uint64_t offset,
    uint64_t length, uint64_t think)
{
  struct fm_request rq = {
      .op = op, .offset = offset, .length = length, .arrival_ns = *now};
  struct fm_timing t;

  fm_disk_submit (d, &rq, &t);
  *now = t.done_ns + think;
  return t;
}

static struct fm_timing
rd (struct fm_disk *d, uint64_t *now, uint64_t offset, uint64_t length,
    uint64_t think)
{
  return io (d, FM_OP_READ, now, offset, length, think);
}

/* Command overhead plus the bus, from the profile's own numbers. */
static uint64_t
hit_ns (const struct fm_profile *p, uint64_t bytes)
{
  return p->command_ns +
         (bytes * 1000000000ULL + p->interface_bw - 1) / p->interface_bw;
}

static void
assert_hit (const struct fm_profile *p, const struct fm_timing *t,
            uint64_t bytes, const char *what)
{
  ck_assert_msg (t->cache_hit, "%s: not a hit", what);
  ck_assert_msg (t->done_ns - t->start_ns == hit_ns (p, bytes),
                 "%s: a hit took %llu ns, not command + bus %llu ns", what,
                 (unsigned long long)(t->done_ns - t->start_ns),
                 (unsigned long long)hit_ns (p, bytes));
  ck_assert_uint_eq (t->seeks, 0);
  ck_assert_uint_eq (t->rotation_ns, 0);
}

/* Four sequential 64 KiB readers, a quarter of the disk apart.  The
 * first round (with think time, so the drive reads ahead after each)
 * misses; then 100 rounds back to back all hit, each in its own segment,
 * at command + bus time.  With one segment every one of them misses.
 */
START_TEST (test_streams)
{
  struct fm_profile p = profile ("cmr-20t-2024");
  const uint64_t len = 64 * KIB, quarter = p.capacity / 4;
  uint32_t segments[] = {0, 1};
  size_t k;

  for (k = 0; k < 2; k++) {
    struct fm_disk *d;
    uint64_t now = 0, hits = 0, i, s;

    p.cache_segments = segments[k];
    d = disk (&p, true);
    for (s = 0; s < 4; s++) {
      struct fm_timing t = rd (d, &now, s * quarter, len, 100 * MS);
      ck_assert (!t.cache_hit);
    }
    for (i = 1; i <= 100; i++)
      for (s = 0; s < 4; s++) {
        struct fm_timing t = rd (d, &now, s * quarter + i * len, len, 0);

        hits += t.cache_hit;
        if (segments[k] == 0)
          assert_hit (&p, &t, len, "interleaved stream");
      }
    ck_assert_uint_eq (hits, segments[k] == 0 ? 400 : 0);
    fm_disk_free (d);
  }
}
END_TEST

/* Four segments, four readers: a fifth reader takes the least recently
 * used segment (the first reader's); the others still hit.
 */
START_TEST (test_lru)
{
  struct fm_profile p = profile ("cmr-20t-2024");
  const uint64_t len = 64 * KIB, fifth = p.capacity / 5;
  struct fm_disk *d;
  struct fm_timing t;
  uint64_t now = 0, s;

  p.cache_segments = 4;
  d = disk (&p, true);
  for (s = 0; s < 5; s++) {
    t = rd (d, &now, s * fifth, len, 100 * MS);
    ck_assert (!t.cache_hit);
  }
  for (s = 1; s < 5; s++) {
    t = rd (d, &now, s * fifth + len, len, 0);
    assert_hit (&p, &t, len, "a reader that kept its segment");
  }
  t = rd (d, &now, len, len, 0);
  ck_assert_msg (!t.cache_hit, "the LRU reader's data was not evicted");
  ck_assert_uint_gt (t.seeks, 0);
  fm_disk_free (d);
}
END_TEST

/* Written data stays in a segment: reading it back is a hit, whether the
 * write went to the media or through the write cache and was destaged.
 * With the read buffer off the same read pays the media.
 */
START_TEST (test_read_after_write)
{
  struct fm_profile p = profile ("cmr-20t-2024");
  const uint64_t len = 64 * KIB, x = p.capacity / 3 / 4096 * 4096;
  struct fm_disk_options off = {false, true, FM_QUEUE_SPTF};

  /* Write-through writes going home, not to the media cache, whose idle
   * cleaning would stop the read-ahead this test reads from.
   */
  p.media_cache_entries = 0;
  struct fm_err err;
  struct fm_disk *d;
  struct fm_timing t;
  uint64_t now = 0;

  d = disk (&p, false); /* write-through */
  t = io (d, FM_OP_WRITE, &now, x, len, 0);
  ck_assert (!t.write_cached);
  t = rd (d, &now, x, len, 0);
  assert_hit (&p, &t, len, "read after a write-through write");
  /* A write inside a segment updates it there. */
  t = rd (d, &now, x + MIB, len, 100 * MS);
  t = io (d, FM_OP_WRITE, &now, x + 2 * MIB, len, 0);
  t = rd (d, &now, x + 2 * MIB, len, 0);
  assert_hit (&p, &t, len, "read of a rewritten part of a segment");
  t = rd (d, &now, x + 3 * MIB, len, 0);
  assert_hit (&p, &t, len, "read further on in that segment");
  fm_disk_free (d);

  d = disk (&p, true); /* write-back, then destaged */
  io (d, FM_OP_WRITE, &now, x, len, 0);
  io (d, FM_OP_FLUSH, &now, 0, 0, 0);
  ck_assert_uint_eq (fm_disk_dirty_bytes (d), 0);
  t = rd (d, &now, x, len, 0);
  assert_hit (&p, &t, len, "read after a destaged write");
  fm_disk_free (d);

  d = fm_disk_new (&p, 7, &off, &err);
  ck_assert_msg (d != NULL, "%s", err.msg);
  io (d, FM_OP_WRITE, &now, x, len, 0);
  io (d, FM_OP_FLUSH, &now, 0, 0, 0);
  t = rd (d, &now, x, len, 0);
  ck_assert (!t.cache_hit);
  ck_assert_uint_gt (t.done_ns - t.start_ns, hit_ns (&p, len));
  fm_disk_free (d);
}
END_TEST

/* After a read and a long idle the segment holds exactly `readahead`
 * bytes past it, or a segment's worth if segments are smaller: the
 * sector just past that is read from the media (the head is still
 * there: no seek), the one before it is a hit.
 */
START_TEST (test_prefetch_max)
{
  struct fm_profile p = profile ("cmr-20t-2024");
  const uint64_t len = 64 * KIB, x = 10 * MIB;
  const struct {
    uint32_t segments;
    uint64_t max;
  } cases[] = {
      {0, 8 * MIB},   /* readahead: 8 MiB */
      {128, 2 * MIB}, /* 256 MiB / 128: 2 MiB segments */
  };
  size_t k;

  ck_assert_uint_eq (p.readahead_bytes, 8 * MIB);
  ck_assert_uint_eq (p.cache_bytes, 256 * MIB);
  for (k = 0; k < 2; k++) {
    struct fm_disk *d;
    struct fm_timing t;
    uint64_t now = 0, edge = x + len + cases[k].max;

    p.cache_segments = cases[k].segments;
    d = disk (&p, true);
    rd (d, &now, x, len, 1000 * MS);
    t = rd (d, &now, edge, 4096, 0);
    ck_assert_msg (!t.cache_hit, "read ahead past %llu bytes",
                   (unsigned long long)cases[k].max);
    ck_assert_uint_eq (t.seeks, 0);
    t = rd (d, &now, edge - 4096, 4096, 0);
    assert_hit (&p, &t, 4096, "last sector of the prefetch");
    fm_disk_free (d);
  }
}
END_TEST

/* A read elsewhere right after a read abandons its read-ahead: even a
 * long idle later the next sequential read pays the media.  With
 * prefetch_min = 1 MiB that much is read first (the other read waits for
 * it: 1 MiB of media time before its own seek) and hits later.
 */
START_TEST (test_abandon)
{
  struct fm_profile p = profile ("cmr-20t-2024");
  const uint64_t len = 64 * KIB, x = 1 * MIB, far = p.capacity / 2;
  /* 1 MiB inside the outermost track (2.6 MB): the raw media rate, the
   * profile's outer bandwidth without its share of track switches.
   */
  const double rev = fm_profile_rev_ns (&p);
  const double media_1m =
      MIB / fm_profile_bw_outer (&p) * 1e9 * rev / (rev + p.track_switch_ns);
  uint64_t mins[] = {0, MIB};
  size_t k;

  for (k = 0; k < 2; k++) {
    struct fm_disk *d;
    struct fm_timing t;
    uint64_t now = 0, off, waited;

    p.prefetch_min_bytes = mins[k];
    d = disk (&p, true);
    rd (d, &now, x, len, 0);
    t = rd (d, &now, far, len, 1000 * MS);
    ck_assert (!t.cache_hit);
    waited = t.done_ns - t.start_ns - t.seek_ns - t.rotation_ns - t.transfer_ns;
    if (mins[k] == 0) {
      ck_assert_uint_eq (waited, p.command_ns);
    } else {
      ck_assert_msg (waited > 0.99 * media_1m && waited < 1.01 * media_1m,
                     "waited %llu ns for the minimum prefetch, want %.0f",
                     (unsigned long long)waited, media_1m);
    }
    for (off = x + len; off < x + len + mins[k]; off += len) {
      t = rd (d, &now, off, len, 0);
      assert_hit (&p, &t, len, "minimum prefetch");
    }
    t = rd (d, &now, off, len, 0);
    ck_assert_msg (!t.cache_hit, "read ahead past prefetch_min");
    fm_disk_free (d);
  }
}
END_TEST

/* A read a block or two past the read-ahead, arriving at once (a
 * metadata scan skipping a block), finds the stream got there while the
 * drive took the command in: it ends when the media reaches its end, and
 * a later arrival never ends sooner.  Asked at arrival, the buffer had
 * stopped the stream short of it and the head then missed it by a
 * revolution, so a host with no think time was slower than one thinking
 * 25 us.  A read the stream reaches only long after the command still
 * goes to the media.
 */
START_TEST (test_skip_rides)
{
  struct fm_profile p = profile ("roadmap-2006");
  const uint64_t len = 4 * KIB, x = 10 * MIB, skip = 8 * KIB;
  const double rev = fm_profile_rev_ns (&p);
  uint64_t delay, last_done = 0;

  for (delay = 0; delay <= 200000; delay += 5000) {
    struct fm_disk *d = disk (&p, true);
    struct fm_timing t;
    uint64_t now = 0;

    rd (d, &now, x, len, delay);
    t = rd (d, &now, x + len + skip, len, 0);
    ck_assert_msg (t.cache_hit,
                   "arriving %llu ns after: not served by the "
                   "read-ahead",
                   (unsigned long long)delay);
    ck_assert_uint_eq (t.seeks, 0);
    ck_assert_msg (t.done_ns - t.start_ns < rev / 4,
                   "arriving %llu ns after: took %llu ns",
                   (unsigned long long)delay,
                   (unsigned long long)(t.done_ns - t.start_ns));
    ck_assert_msg (t.done_ns >= last_done,
                   "arriving %llu ns after ended sooner than arriving 5 us "
                   "earlier",
                   (unsigned long long)delay);
    last_done = t.done_ns;
    fm_disk_free (d);
  }

  /* 6 MiB on, inside its 8 MiB read-ahead but over two outer tracks
   * (2.6 MB each) away: the head goes there by itself.
   */
  {
    struct fm_disk *d;
    struct fm_timing t;
    uint64_t now = 0;

    p = profile ("cmr-20t-2024");
    d = disk (&p, true);
    rd (d, &now, x, len, 0);
    t = rd (d, &now, x + len + 6 * MIB, len, 0);
    ck_assert_msg (!t.cache_hit, "rode a read-ahead two tracks away");
    fm_disk_free (d);
  }
}
END_TEST

/* The keys: derived segment counts, and checks that name the key. */
START_TEST (test_keys)
{
  static const char hdd[] = "name = d\ncapacity = 1G\nrpm = 7200\n"
                            "bandwidth_mbps = 100\nseek_t2t_ms = 1\n"
                            "seek_avg_ms = 8\nseek_full_ms = 16\n";
  static const struct {
    const char *text;
    const char *message;
  } bad[] = {
      {"cache = 1M\ncache_segments = 512\n",
       "t.profile:9: cache_segments: 512 segments of a 1048576-byte buffer "
       "are smaller than a sector"},
      {"cache_segments = 4096\n", "t.profile:8: cache_segments: 4096 is out "
                                  "of range [0, 2048]"},
      {"readahead = 1M\nprefetch_min = 2M\n",
       "t.profile:9: prefetch_min: above readahead"},
  };
  struct fm_profile p = profile ("roadmap-2006");
  struct fm_err err;
  char text[512];
  size_t i;

  ck_assert_uint_eq (fm_profile_segments (&p), 16); /* 16 MiB / 1 MiB */
  p = profile ("cmr-20t-2024");
  ck_assert_uint_eq (fm_profile_segments (&p), 32); /* at most 32 */
  ck_assert_uint_eq (fm_profile_buffer_bytes (&p), 256 * MIB);
  p.readahead_bytes = 512 * MIB; /* more than the cache: one segment */
  ck_assert_uint_eq (fm_profile_segments (&p), 1);
  ck_assert_uint_eq (fm_profile_buffer_bytes (&p), 512 * MIB);

  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    snprintf (text, sizeof text, "%s%s", hdd, bad[i].text);
    ck_assert_int_eq (
        fm_profile_parse ("t.profile", text, strlen (text), &p, &err), -1);
    ck_assert_msg (strstr (err.msg, bad[i].message), "got '%s', want '%s'",
                   err.msg, bad[i].message);
  }
  snprintf (text, sizeof text,
            "%scache = 64M\nreadahead = 4M\n"
            "cache_segments = 8\nprefetch_min = 256K\n",
            hdd);
  ck_assert_msg (
      fm_profile_parse ("t.profile", text, strlen (text), &p, &err) == 0, "%s",
      err.msg);
  ck_assert_uint_eq (fm_profile_segments (&p), 8);
  ck_assert_uint_eq (p.prefetch_min_bytes, 256 * KIB);

  /* cache-segments= is a plugin parameter, prefetch_min is not. */
  p = profile ("cmr-20t-2024");
  ck_assert (fm_profile_is_param ("cache-segments"));
  ck_assert (!fm_profile_is_param ("prefetch-min"));
  ck_assert_int_eq (fm_profile_set_param (&p, "cache-segments", "8", &err), 0);
  ck_assert_uint_eq (fm_profile_segments (&p), 8);
  p = profile ("ssd-sata");
  ck_assert_int_eq (fm_profile_set_param (&p, "cache-segments", "8", &err), -1);
  ck_assert_ptr_nonnull (strstr (err.msg, "not a rotating disk"));
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"streams", test_streams},
      {"lru", test_lru},
      {"read_after_write", test_read_after_write},
      {"prefetch_max", test_prefetch_max},
      {"abandon", test_abandon},
      {"skip_rides", test_skip_rides},
      {"keys", test_keys},
  };

  return fd_check_main ("cache", cases, sizeof cases / sizeof cases[0]);
}
