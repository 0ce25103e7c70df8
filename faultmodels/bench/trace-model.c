/* futuredisk — faultmodels: a deterministic request trace.
 *
 * Runs a seeded mixed stream (reads, writes, zeroes, trims, flushes, FUA
 * writes; sequential runs and random jumps; idle gaps of 1.5 s) through every
 * built-in profile at queue depths 1, 4 and 32 and prints every completion,
 * every destage callback and the end state.  The output depends only on the
 * model, so diffing it across a change shows whether any timing moved.
 *
 * Usage: trace-model [SEED] [REQUESTS]   (defaults 1 and 300)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "faultmodels/disk.h"
#include "faultmodels/rng.h"

static void
print_destage (void *opaque, uint64_t offset, uint64_t length)
{
  printf ("  %s %" PRIu64 "+%" PRIu64 "\n", (const char *)opaque, offset,
          length);
}

static struct fm_request
make_request (uint64_t seed, uint64_t i, uint64_t cap, uint64_t *next,
              uint64_t *arrival)
{
  uint64_t h = fm_hash (seed, 0, i, 0);
  uint64_t len = 4096ull << fm_below (fm_hash (seed, 1, i, 0), 9);
  uint64_t kind = fm_below (h, 100);
  struct fm_request rq = {FM_OP_READ, 0, 0, len, 0};

  if (kind < 40)
    rq.op = FM_OP_READ;
  else if (kind < 80)
    rq.op = FM_OP_WRITE;
  else if (kind < 86) {
    rq.op = FM_OP_WRITE;
    rq.flags = FM_REQ_FUA;
  } else if (kind < 90)
    rq.op = FM_OP_ZERO;
  else if (kind < 94)
    rq.op = FM_OP_TRIM;
  else
    rq.op = FM_OP_FLUSH;
  if (fm_below (fm_hash (seed, 2, i, 0), 2))
    rq.offset = *next;
  else
    rq.offset = fm_below (fm_hash (seed, 3, i, 0), cap / 4096) * 4096;
  if (rq.offset + len > cap)
    rq.offset = 0;
  if (rq.op == FM_OP_FLUSH)
    rq.offset = rq.length = 0;
  *next = rq.offset + rq.length;
  *arrival += fm_below (fm_hash (seed, 4, i, 0), 3000000);
  /* Now and then a long idle gap: background destage and SMR cleaning. */
  if (i % 40 == 39)
    *arrival += 1500000000;
  rq.arrival_ns = *arrival;
  return rq;
}

static void
print_timing (uint64_t tag, const struct fm_timing *t)
{
  printf ("%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
          " %" PRIu64 " %" PRIu64 "\n",
          tag, t->start_ns, t->done_ns, t->queue_ns, t->overhead_ns, t->seek_ns,
          t->rotation_ns, t->transfer_ns);
}

static void
run (struct fm_disk *d, uint64_t seed, uint64_t n, uint32_t qd, uint64_t cap)
{
  uint64_t next = 0, arrival = 0, tag;
  struct fm_timing t;

  for (uint64_t i = 0; i < n; i++) {
    struct fm_request rq = make_request (seed, i, cap, &next, &arrival);
    if (qd == 1) {
      fm_disk_submit (d, &rq, &t);
      print_timing (i, &t);
    } else {
      fm_disk_enqueue (d, &rq, i);
      while (fm_disk_queued (d) >= qd &&
             fm_disk_dispatch (d, UINT64_MAX, &tag, &t))
        print_timing (tag, &t);
    }
    if (i % 37 == 5)
      printf ("extend %" PRIu64 "\n", fm_disk_extend (d, 1000 + i));
  }
  while (fm_disk_dispatch (d, UINT64_MAX, &tag, &t))
    print_timing (tag, &t);
}

static void
report (struct fm_disk *d, uint64_t cap)
{
  uint64_t c, ns, b;

  fm_disk_smr_stats (d, &c, &ns, &b);
  printf ("busy %" PRIu64 " dirty %" PRIu64 " smr %" PRIu64 " %" PRIu64
          " %" PRIu64 " detour %" PRIu64 " %" PRIu64 "\n",
          fm_disk_busy_until (d), fm_disk_dirty_bytes (d), c, ns, b,
          fm_disk_spare_detour (d, 0), fm_disk_spare_detour (d, cap - 4096));
  fm_disk_powercut (d, print_destage, (void *)"lost");
  printf ("after powercut busy %" PRIu64 " dirty %" PRIu64 "\n",
          fm_disk_busy_until (d), fm_disk_dirty_bytes (d));
}

int
main (int argc, char **argv)
{
  uint64_t seed = argc > 1 ? strtoull (argv[1], NULL, 0) : 1;
  uint64_t n = argc > 2 ? strtoull (argv[2], NULL, 0) : 300;
  static const uint32_t depths[] = {1, 4, 32};
  const char *name;

  for (size_t i = 0; (name = fm_profile_builtin_name (i)) != NULL; i++) {
    struct fm_profile p;
    struct fm_err err;
    if (fm_profile_builtin (name, &p, &err) == -1) {
      fprintf (stderr, "trace-model: %s\n", err.msg);
      return 1;
    }
    for (size_t k = 0; k < sizeof depths / sizeof *depths; k++) {
      struct fm_disk_options o;
      fm_disk_default_options (&p, &o);
      struct fm_disk *d = fm_disk_new (&p, seed, &o, &err);
      if (d == NULL) {
        fprintf (stderr, "trace-model: %s: %s\n", name, err.msg);
        return 1;
      }
      printf ("== %s qd %" PRIu32 "\n", name, depths[k]);
      fm_disk_on_destage (d, print_destage, (void *)"destage");
      run (d, seed, n, depths[k], p.capacity);
      report (d, p.capacity);
      fm_disk_free (d);
    }
  }
  return 0;
}
