/* futuredisk — faultmodels: closed-loop workloads (see measure.h). */
#include "faultmodels/measure.h"
#include "faultmodels/rng.h"
#include "faultmodels/error.h"

uint64_t
fm_measure_sequential (struct fm_disk *d, enum fm_op op, uint64_t start,
                       uint64_t len, uint64_t req)
{
  struct fm_request rq = {.op = op};
  struct fm_timing t;
  uint64_t now = fm_disk_busy_until (d), t0 = now, off;

  for (off = start; off < start + len; off += req) {
    rq.offset = off;
    rq.length = start + len - off < req ? start + len - off : req;
    rq.arrival_ns = now;
    fm_disk_submit (d, &rq, &t);
    now = t.done_ns;
  }
  if (op == FM_OP_WRITE) {
    struct fm_request flush = {.op = FM_OP_FLUSH, .arrival_ns = now};

    fm_disk_submit (d, &flush, &t);
    now = t.done_ns;
  }
  return now - t0;
}

double
fm_measure_random (struct fm_disk *d, uint64_t seed, uint64_t req,
                   uint64_t span, uint64_t count)
{
  const struct fm_profile *p = fm_disk_profile (d);
  struct fm_request rq = {.op = FM_OP_READ, .length = req};
  struct fm_timing t;
  uint64_t now = fm_disk_busy_until (d), slots, i;
  double total = 0;

  if (span == 0 || span > p->capacity)
    span = p->capacity;
  slots = span / req;
  for (i = 0; i < count; i++) {
    rq.offset = fm_below (fm_hash (seed, FM_STREAM_BENCH, i, 0), slots) * req;
    rq.arrival_ns = now;
    fm_disk_submit (d, &rq, &t);
    total += (double)(t.done_ns - t.start_ns);
    now = t.done_ns;
  }
  return count ? total / (double)count : 0;
}

double
fm_measure_random_qd (struct fm_disk *d, uint64_t seed, uint64_t req,
                      uint64_t span, uint64_t count, unsigned qd)
{
  const struct fm_profile *p = fm_disk_profile (d);
  struct fm_request rq = {.op = FM_OP_READ, .length = req};
  struct fm_timing t;
  uint64_t t0 = fm_disk_busy_until (d), now = t0, slots, issued = 0, done = 0;
  uint64_t tag;

  if (span == 0 || span > p->capacity)
    span = p->capacity;
  slots = span / req;
  if (count == 0 || qd == 0)
    return 0;
  for (; issued < qd && issued < count; issued++) {
    rq.offset =
        fm_below (fm_hash (seed, FM_STREAM_BENCH, issued, 0), slots) * req;
    rq.arrival_ns = now;
    fm_disk_enqueue (d, &rq, issued);
  }
  while (fm_disk_dispatch (d, UINT64_MAX, &tag, &t)) {
    now = t.done_ns;
    done++;
    if (issued < count) {
      rq.offset =
          fm_below (fm_hash (seed, FM_STREAM_BENCH, issued, 0), slots) * req;
      rq.arrival_ns = now;
      fm_disk_enqueue (d, &rq, issued++);
    }
  }
  return now > t0 ? (double)done * 1e9 / (double)(now - t0) : 0;
}

int
fm_measure_summary (const struct fm_profile *p, uint64_t seed, uint64_t samples,
                    struct fm_summary *out, struct fm_err *err)
{
  static const unsigned qds[4] = FM_SUMMARY_QDS;
  struct fm_disk *d;
  double reads;
  size_t i;

  d = fm_disk_new (p, seed, NULL, err);
  if (d == NULL)
    return -1;
  out->min_full_read_s = p->bandwidth ? (double)p->capacity / p->bandwidth : 0;
  out->full_read_s =
      fm_measure_sequential (d, FM_OP_READ, 0, p->capacity, 16 << 20) / 1e9;
  fm_disk_free (d);

  /* A fresh drive, so the sequential run leaves no cached state behind. */
  d = fm_disk_new (p, seed, NULL, err);
  if (d == NULL)
    return -1;
  out->random_4k_ms = fm_measure_random (d, seed, 4096, 0, samples) / 1e6;
  fm_disk_free (d);
  out->random_4k_iops = out->random_4k_ms > 0 ? 1000 / out->random_4k_ms : 0;
  for (i = 0; i < 4; i++) {
    d = fm_disk_new (p, seed, NULL, err);
    if (d == NULL)
      return -1;
    out->random_4k_iops_qd[i] =
        fm_measure_random_qd (d, seed, 4096, 0, samples, qds[i]);
    fm_disk_free (d);
  }
  reads = (double)(p->capacity / 10 / 4096);
  out->random_10pct_s = reads * out->random_4k_ms / 1000;
  return 0;
}
