/* futuredisk — faultmodels: a drive with two actuators.
 *
 * Published figures for the Seagate Exos 2X18 (SATA): 554 MB/s with both
 * actuators streaming, about 270 MB/s for one stream (a single actuator's
 * rate, as the Exos X18's), and 304 random 4 KiB read IOPS at QD16 —
 * 1.8x a single-actuator drive's 168-170 (Tom's Hardware and
 * ComputerBase on the 2X18; Exos X24 / Exos M datasheets for the single).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "check-main.h"
#include "faultmodels/disk.h"
#include "faultmodels/measure.h"

#define MIB (1ULL << 20)

static struct fm_disk *
disk (const char *name, struct fm_profile *p)
{
  struct fm_disk_options o;
  struct fm_err err;
  struct fm_disk *d;

  ck_assert_msg (fm_profile_builtin (name, p, &err) == 0, "%s", err.msg);
  fm_disk_default_options (p, &o);
  o.write_cache = false;
  d = fm_disk_new (p, 3, &o, &err);
  ck_assert_msg (d != NULL, "%s", err.msg);
  return d;
}

/* MB/s of `streams` sequential readers of 1 MiB requests, one at the
 * start of each half, each with one request in flight.
 */
static double
streaming (const char *name, int streams)
{
  struct fm_profile p;
  struct fm_disk *d = disk (name, &p);
  struct fm_request rq = {.op = FM_OP_READ, .length = MIB};
  struct fm_timing t;
  uint64_t next[2] = {0, p.capacity / 2}, tag, bytes = 0, end = 0;
  int k;

  for (k = 0; k < streams; k++) {
    rq.offset = next[k];
    next[k] += MIB;
    fm_disk_enqueue (d, &rq, (uint64_t)k);
  }
  while (fm_disk_dispatch (d, UINT64_MAX, &tag, &t)) {
    bytes += MIB;
    end = t.done_ns;
    if (bytes < 2048 * MIB) {
      rq.offset = next[tag];
      next[tag] += MIB;
      rq.arrival_ns = t.done_ns;
      fm_disk_enqueue (d, &rq, tag);
    }
  }
  fm_disk_free (d);
  return bytes / (end / 1e9) / 1e6;
}

START_TEST (test_streams)
{
  double one = streaming ("dual-18t-2022", 1),
         two = streaming ("dual-18t-2022", 2);

  /* The figures for BENCHMARKS.md: ctest -V -R check-dual shows them. */
  fprintf (stderr, "dual-18t-2022: one stream %.1f MB/s, two %.1f MB/s\n", one,
           two);
  ck_assert_msg (one > 270 * 0.95 && one < 285, "one stream %.1f MB/s", one);
  ck_assert_msg (two > 554 * 0.95 && two < 554 * 1.05, "two streams %.1f MB/s",
                 two);
}
END_TEST

static double
qd16 (const char *name)
{
  struct fm_profile p;
  struct fm_disk *d = disk (name, &p);
  double r = fm_measure_random_qd (d, 5, 4096, 0, 20000, 16);

  fm_disk_free (d);
  return r;
}

START_TEST (test_random)
{
  double dual = qd16 ("dual-18t-2022"), single = qd16 ("cmr-20t-2024");

  fprintf (stderr,
           "QD16 random 4 KiB reads: dual-18t-2022 %.1f IOPS, "
           "cmr-20t-2024 %.1f IOPS\n",
           dual, single);

  ck_assert_msg (dual > 304 * 0.85 && dual < 304 * 1.15, "QD16 %.1f IOPS",
                 dual);
  ck_assert_msg (dual > 1.5 * single, "dual %.1f vs single %.1f", dual, single);
}
END_TEST

struct seen {
  uint64_t lo, hi, bytes;
};

static void
note (void *opaque, uint64_t offset, uint64_t length)
{
  struct seen *s = opaque;

  if (offset < s->lo)
    s->lo = offset;
  if (offset + length > s->hi)
    s->hi = offset + length;
  s->bytes += length;
}

/* A request across the middle and a FLUSH each complete once, after both
 * halves did their part; destage and power cut speak the whole drive's
 * offsets.
 */
START_TEST (test_routing)
{
  struct fm_profile p;
  struct fm_disk_options o;
  struct fm_err err;
  struct fm_disk *d;
  struct fm_request w = {.op = FM_OP_WRITE, .length = 2 * MIB};
  struct fm_request f = {.op = FM_OP_FLUSH};
  struct fm_timing t;
  struct seen destaged = {UINT64_MAX, 0, 0}, lost = {UINT64_MAX, 0, 0};
  uint64_t tag, served = 0;

  ck_assert (fm_profile_builtin ("dual-18t-2022", &p, &err) == 0);
  fm_disk_default_options (&p, &o);
  d = fm_disk_new (&p, 3, &o, &err);
  ck_assert_msg (d != NULL, "%s", err.msg);
  fm_disk_on_destage (d, note, &destaged);
  w.offset = p.capacity / 2 - MIB;
  fm_disk_enqueue (d, &w, 7);
  fm_disk_enqueue (d, &f, 8);
  ck_assert_uint_eq (fm_disk_queued (d), 2);
  while (fm_disk_dispatch (d, UINT64_MAX, &tag, &t)) {
    ck_assert_uint_eq (tag, 7 + served);
    served++;
  }
  ck_assert_uint_eq (served, 2);
  ck_assert_uint_eq (fm_disk_queued (d), 0);
  ck_assert_uint_eq (destaged.lo, w.offset);
  ck_assert_uint_eq (destaged.hi, w.offset + w.length);
  ck_assert_uint_eq (fm_disk_dirty_bytes (d), 0);

  w.offset = p.capacity - 4 * MIB;
  w.arrival_ns = t.done_ns;
  fm_disk_submit (d, &w, &t);
  ck_assert (t.write_cached);
  ck_assert_uint_eq (fm_disk_dirty_bytes (d), w.length);
  fm_disk_powercut (d, note, &lost);
  ck_assert_uint_eq (lost.lo, w.offset);
  ck_assert_uint_eq (lost.bytes, w.length);
  fm_disk_free (d);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"streams", test_streams},
      {"random", test_random},
      {"routing", test_routing},
  };

  return fd_check_main ("dual", cases, sizeof cases / sizeof cases[0]);
}
