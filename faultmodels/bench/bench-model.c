/* futuredisk — faultmodels: how many requests the model prices per second.
 *
 * The plugin runs the model on every request under one lock, so its cost
 * caps the plugin's request rate.  Each workload below runs on one core
 * and is timed in thread CPU time; the baselines run in the same process:
 * the `ideal` profile (the model's fixed cost, no mechanics) and a 4 KiB
 * memcpy (what the plugin pays anyway to move a 4 KiB request's data).
 *
 * Usage: bench-model [REQUESTS]   (default 5,000,000 per workload)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "faultmodels/disk.h"
#include "faultmodels/rng.h"

enum workload {
  RANDOM_READ,
  SEQ_READ,
  MIXED,
  RANDOM_QD32 /* random 4 KiB reads, 32 in flight: SPTF over the queue */
};

static double
cpu_seconds (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* n random reads with 32 in flight: each completion brings the next
 * arrival.  Returns the requests served.
 */
static uint64_t
run_queued (struct fm_disk *d, uint64_t slots, uint64_t n)
{
  struct fm_request rq = {.op = FM_OP_READ, .length = 4096};
  struct fm_timing t;
  uint64_t issued, served = 0, tag;

  for (issued = 0; issued < 32 && issued < n; issued++) {
    rq.offset =
        fm_below (fm_hash (1, FM_STREAM_BENCH, issued, 0), slots) * 4096;
    fm_disk_enqueue (d, &rq, issued);
  }
  while (fm_disk_dispatch (d, UINT64_MAX, &tag, &t)) {
    served++;
    if (issued < n) {
      rq.offset =
          fm_below (fm_hash (1, FM_STREAM_BENCH, issued, 0), slots) * 4096;
      rq.arrival_ns = t.done_ns;
      fm_disk_enqueue (d, &rq, issued++);
    }
  }
  return served;
}

/* Returns requests per second. */
static double
run (const char *profile, enum workload w, uint64_t n)
{
  struct fm_profile p;
  struct fm_err err;
  struct fm_disk *d;
  struct fm_request rq = {.op = FM_OP_READ, .length = 4096};
  struct fm_timing t;
  uint64_t now = 0, i, slots, sink = 0;
  double t0, t1;

  if (fm_profile_builtin (profile, &p, &err) == -1 ||
      (d = fm_disk_new (&p, 1, NULL, &err)) == NULL) {
    fprintf (stderr, "bench-model: %s\n", err.msg);
    exit (1);
  }
  slots = p.capacity / 4096;
  t0 = cpu_seconds ();
  if (w == RANDOM_QD32) {
    sink = run_queued (d, slots, n);
    n = sink ? n : 0;
  }
  for (i = 0; w != RANDOM_QD32 && i < n; i++) {
    uint64_t h = fm_hash (1, FM_STREAM_BENCH, i, 0);

    switch (w) {
      case RANDOM_READ:
        rq.offset = fm_below (h, slots) * 4096;
        break;
      case SEQ_READ:
        rq.length = 1 << 20;
        rq.offset = (i << 20) % p.capacity;
        break;
      case RANDOM_QD32:
        break;
      case MIXED: /* a file-system-like mix: 70% reads, 25% writes, flushes */
        rq.offset = fm_below (h, slots) * 4096;
        rq.op = (h & 127) < 90    ? FM_OP_READ
                : (h & 127) < 126 ? FM_OP_WRITE
                                  : FM_OP_FLUSH;
        break;
    }
    rq.arrival_ns = now + (h & 0xffff); /* some think time */
    fm_disk_submit (d, &rq, &t);
    now = t.done_ns;
    sink += t.seeks;
  }
  t1 = cpu_seconds ();
  fm_disk_free (d);
  if (sink == UINT64_MAX)
    printf ("%llu\n", (unsigned long long)sink); /* keep the loop */
  return n / (t1 - t0);
}

static double
memcpy_rate (uint64_t n)
{
  static char src[4096], dst[4096];
  double t0, t1;
  uint64_t i;

  t0 = cpu_seconds ();
  for (i = 0; i < n; i++) {
    src[i & 4095] = (char)i;
    memcpy (dst, src, sizeof dst);
    __asm__ __volatile__("" : : "r"(dst) : "memory");
  }
  t1 = cpu_seconds ();
  return n / (t1 - t0);
}

int
main (int argc, char **argv)
{
  static const struct {
    const char *profile;
    enum workload w;
    const char *name;
  } runs[] = {
      {"roadmap-2013", RANDOM_READ, "random 4 KiB reads"},
      {"roadmap-2013", SEQ_READ, "sequential 1 MiB reads"},
      {"roadmap-2013", MIXED, "mixed reads, writes, flushes"},
      {"cmr-20t-2024", RANDOM_READ, "random 4 KiB reads"},
      {"cmr-20t-2024", MIXED, "mixed reads, writes, flushes"},
      {"roadmap-2013", RANDOM_QD32, "random 4 KiB reads, QD32 SPTF"},
      {"cmr-20t-2024", RANDOM_QD32, "random 4 KiB reads, QD32 SPTF"},
  };
  uint64_t n = argc > 1 ? strtoull (argv[1], NULL, 10) : 5000000;
  double ideal, copy;
  size_t i;

  if (n == 0) {
    fprintf (stderr, "usage: bench-model [REQUESTS]\n");
    return 2;
  }
  ideal = run ("ideal", RANDOM_READ, n);
  copy = memcpy_rate (n);
  printf ("%-14s %-30s %14s %10s %10s\n", "profile", "workload", "requests/s",
          "vs ideal", "vs memcpy");
  printf ("%-14s %-30s %14.0f %10s %10s\n", "ideal", "random 4 KiB reads",
          ideal, "1.00", "-");
  printf ("%-14s %-30s %14.0f %10s %10s\n", "(baseline)", "memcpy 4 KiB", copy,
          "-", "1.00");
  for (i = 0; i < sizeof runs / sizeof runs[0]; i++) {
    double r = run (runs[i].profile, runs[i].w, n);
    printf ("%-14s %-30s %14.0f %10.2f %10.2f\n", runs[i].profile, runs[i].name,
            r, r / ideal, r / copy);
  }
  return 0;
}
