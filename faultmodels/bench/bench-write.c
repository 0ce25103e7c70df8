/* futuredisk — faultmodels: the write path on the virtual clock.
 *
 * What a drive's write path decides, measured on the model alone (no
 * plugin, no wall clock): sequential 1 MiB writes with the write cache on
 * and off at QD1 and QD16, against the profile's outer-zone media rate;
 * how long a QD1 reader waits behind a sequential writer; random 4 KiB
 * write-through writes at QD16 per profile, and once its media cache is
 * full; and the flush after a burst of scattered cached writes.  Every
 * figure is virtual time, so it is the same on every machine; the
 * baseline is the profile's own media rate.
 *
 * Usage: bench-write [PROFILE]   (default cmr-20t-2024; PROFILE=all for the
 *                                 random-write table over every built-in)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faultmodels/disk.h"
#include "faultmodels/rng.h"

#define MIB (1ull << 20)

static uint64_t
max_u64 (uint64_t a, uint64_t b)
{
  return a > b ? a : b;
}

static struct fm_disk *
open_disk (const char *name, bool wcache, struct fm_profile *p)
{
  struct fm_disk_options o;
  struct fm_err err;
  struct fm_disk *d;

  if (fm_profile_builtin (name, p, &err) == -1) {
    fprintf (stderr, "bench-write: %s\n", err.msg);
    exit (1);
  }
  fm_disk_default_options (p, &o);
  o.write_cache = wcache && p->cache_bytes > 0;
  d = fm_disk_new (p, 1, &o, &err);
  if (d == NULL) {
    fprintf (stderr, "bench-write: %s\n", err.msg);
    exit (1);
  }
  return d;
}

/* Request i of a stream: sequential 1 MiB writes, or random 4 KiB ones. */
static void
make (const struct fm_profile *p, bool seq, uint64_t i, struct fm_request *rq)
{
  memset (rq, 0, sizeof *rq);
  rq->op = FM_OP_WRITE;
  if (seq) {
    rq->length = MIB;
    rq->offset = i * MIB;
  } else {
    rq->length = 4096;
    rq->offset =
        fm_below (fm_hash (7, FM_STREAM_BENCH, i, 0), p->capacity / 4096) *
        4096;
  }
}

/* n writes with `qd` in flight, each completion bringing the next.
 * Returns the time the last one finished; *mark the time the at-th did.
 */
static uint64_t
closed_loop (struct fm_disk *d, const struct fm_profile *p, bool seq,
             unsigned qd, uint64_t n, uint64_t at, uint64_t *mark)
{
  struct fm_request rq;
  struct fm_timing t;
  uint64_t issued, done = 0, tag, last = 0;

  for (issued = 0; issued < qd && issued < n; issued++) {
    make (p, seq, issued, &rq);
    fm_disk_enqueue (d, &rq, issued);
  }
  while (fm_disk_dispatch (d, UINT64_MAX, &tag, &t)) {
    if (++done == at)
      *mark = t.done_ns;
    last = max_u64 (last, t.done_ns);
    if (issued < n) {
      make (p, seq, issued, &rq);
      rq.arrival_ns = t.done_ns;
      fm_disk_enqueue (d, &rq, issued++);
    }
  }
  return last;
}

/* The outer zone's media rate: a full-stroke-free 256 MiB read at LBA 0. */
static double
media_mbps (const char *name)
{
  struct fm_profile p;
  struct fm_disk *d = open_disk (name, false, &p);
  struct fm_request rq = {.op = FM_OP_READ, .length = 256 * MIB};
  struct fm_timing t;

  fm_disk_submit (d, &rq, &t);
  fm_disk_free (d);
  return 256.0 * MIB / (t.done_ns - t.start_ns - t.overhead_ns) * 1e3;
}

static void
seq_writes (const char *name)
{
  static const unsigned qds[] = {1, 16};
  double media = media_mbps (name);
  int cache;
  size_t i;

  printf ("sequential 1 MiB writes, 4 GiB from LBA 0 (%s, media %.1f MB/s)\n",
          name, media);
  for (cache = 1; cache >= 0; cache--)
    for (i = 0; i < 2; i++) {
      struct fm_profile p;
      struct fm_disk *d = open_disk (name, cache, &p);
      uint64_t half = 0,
               end = closed_loop (d, &p, true, qds[i], 4096, 2048, &half);
      double mbps = 4096.0 * MIB / end * 1e3;
      double steady = 2048.0 * MIB / (end - half) * 1e3;

      printf ("  cache %-3s QD%-2u %8.1f MB/s  %.3f x media; second 2 GiB "
              "%8.1f MB/s  %.3f x media\n",
              cache ? "on" : "off", qds[i], mbps, mbps / media, steady,
              steady / media);
      fm_disk_free (d);
    }
}

/* A QD16 sequential writer (tags below 16) and a QD1 random 4 KiB reader
 * (tag 16): how long each read takes from arrival to completion.
 */
static void
reader_behind_writer (const char *name)
{
  struct fm_profile p;
  struct fm_disk *d = open_disk (name, true, &p);
  struct fm_request rq;
  struct fm_timing t;
  uint64_t w = 0, reads = 0, tag, sum = 0, max = 0, wdone = 0, wbytes = 0;
  const uint64_t nreads = 200;
  bool started = false;
  uint64_t t0 = 0;

  for (w = 0; w < 16; w++) {
    make (&p, true, w, &rq);
    fm_disk_enqueue (d, &rq, w);
  }
  while (reads < nreads && fm_disk_dispatch (d, UINT64_MAX, &tag, &t)) {
    if (tag == 16) {
      uint64_t lat = t.done_ns - (t.start_ns - t.queue_ns);

      sum += lat;
      max = max_u64 (max, lat);
      make (&p, false, ++reads, &rq);
      rq.op = FM_OP_READ;
      rq.arrival_ns = t.done_ns;
      fm_disk_enqueue (d, &rq, 16);
      continue;
    }
    if (!started && t.done_ns >= 2000000000) { /* the cache is full */
      started = true;
      t0 = t.done_ns;
      make (&p, false, 0, &rq);
      rq.op = FM_OP_READ;
      rq.arrival_ns = t.done_ns;
      fm_disk_enqueue (d, &rq, 16);
    }
    if (started) {
      wbytes += MIB;
      wdone = t.done_ns;
    }
    make (&p, true, w++, &rq);
    rq.arrival_ns = t.done_ns;
    fm_disk_enqueue (d, &rq, tag);
  }
  printf ("QD1 random reads behind a QD16 sequential writer (%s, cache on)\n"
          "  read wait mean %.1f ms, max %.1f ms; writer meanwhile %.1f MB/s\n",
          name, sum / 1e6 / nreads, max / 1e6,
          wdone > t0 ? wbytes / ((wdone - t0) / 1e3) : 0.0);
  fm_disk_free (d);
}

static void
random_writes (const char *name)
{
  struct fm_profile p;
  struct fm_disk *d = open_disk (name, false, &p);
  uint64_t half = 0, end;

  if (p.rpm == 0) {
    fm_disk_free (d);
    return;
  }
  end = closed_loop (d, &p, false, 16, 40000, 20000, &half);
  printf ("  %-18s %8.0f IOPS (second half of 40,000)", name,
          20000.0 / ((end - half) / 1e9));
  fm_disk_free (d);
  /* Past the media cache's pool each write waits for a cleaning. */
  if (p.media_cache_entries > 0) {
    uint64_t n = p.media_cache_entries + 40000ull;

    d = open_disk (name, false, &p);
    end = closed_loop (d, &p, false, 16, n, n - 20000, &half);
    printf (", %.0f with the media cache full (the last 20,000 of its %u "
            "entries + 40,000)",
            20000.0 / ((end - half) / 1e9), p.media_cache_entries);
    fm_disk_free (d);
  }
  printf ("\n");
}

/* n scattered 4 KiB cached writes at QD1, then a flush. */
static void
burst_flush (const char *name, uint64_t n)
{
  struct fm_profile p;
  struct fm_disk *d = open_disk (name, true, &p);
  struct fm_request rq;
  struct fm_timing t;
  uint64_t i, now = 0;

  for (i = 0; i < n; i++) {
    make (&p, false, i, &rq);
    rq.arrival_ns = now;
    fm_disk_submit (d, &rq, &t);
    now = t.done_ns;
  }
  memset (&rq, 0, sizeof rq);
  rq.op = FM_OP_FLUSH;
  rq.arrival_ns = now;
  fm_disk_submit (d, &rq, &t);
  printf ("  %-14s %6llu writes: burst %10.1f ms, flush %10.1f ms\n", name,
          (unsigned long long)n, now / 1e6, (t.done_ns - now) / 1e6);
  fm_disk_free (d);
}

int
main (int argc, char **argv)
{
  const char *name = argc > 1 ? argv[1] : "cmr-20t-2024";
  size_t i;

  if (strcmp (name, "all") == 0) {
    printf ("random 4 KiB writes, QD16, write cache off\n");
    for (i = 0; fm_profile_builtin_name (i); i++)
      random_writes (fm_profile_builtin_name (i));
    return 0;
  }
  seq_writes (name);
  reader_behind_writer (name);
  printf ("random 4 KiB writes, QD16, write cache off\n");
  random_writes (name);
  printf ("scattered 4 KiB cached writes at QD1, then a flush\n");
  burst_flush (name, 64);
  burst_flush (name, 65536);
  return 0;
}
