/* futuredisk — faultmodels: counter-based random numbers.
 *
 * Every random decision in futuredisk is a pure function of
 * (seed, stream, a, b) — typically (seed, stream, sector, generation) — so
 * the answer never depends on the order in which requests arrive or on
 * which thread asks.  The mixer is the splitmix64 finaliser, nested so that
 * each argument passes through a full avalanche before the next is folded
 * in.  Header-only: it sits on the hot path of every request.
 */
#ifndef FAULTMODELS_RNG_H
#define FAULTMODELS_RNG_H

#include <stdint.h>

/* Streams: one per kind of decision, so turning one fault model on never
 * shifts the numbers another one sees.  Append only; the values are part of
 * the determinism contract (same seed, same faults, across versions).
 */
enum fm_stream {
  FM_STREAM_PHASE = 1,        /* initial platter angle */
  FM_STREAM_BENCH = 2,        /* workload generators (model, benchmarks) */
  FM_STREAM_URE = 3,          /* unrecoverable read errors */
  FM_STREAM_URE_RETRY = 4,    /* does a failing read recover on retry */
  FM_STREAM_REALLOC = 5,      /* rewrite in place or onto a spare */
  FM_STREAM_FLIP = 6,         /* bit flips on the read path */
  FM_STREAM_ROT = 7,          /* rot at rest */
  FM_STREAM_WRITE = 8,        /* lost / misdirected writes */
  FM_STREAM_TORN = 9,         /* torn writes at power cut */
  FM_STREAM_LSE_EPISODE = 10, /* LSE-proneness, counts, episodes */
  FM_STREAM_STUCK = 11,       /* stuck bits */
  FM_STREAM_CORRUPT = 12,     /* does the disk corrupt silently at all */
  FM_STREAM_POPULATE = 13,    /* the harness's file trees and contents */
  FM_STREAM_MARGINAL = 14,    /* marginal sectors and their retries */
  FM_STREAM_MKFS = 15,        /* a file system's identity (its UUIDs) */
};

static inline uint64_t
fm_mix64 (uint64_t z)
{
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static inline uint64_t
fm_hash (uint64_t seed, uint64_t stream, uint64_t a, uint64_t b)
{
  return fm_mix64 (seed ^ fm_mix64 (stream ^ fm_mix64 (a ^ fm_mix64 (b))));
}

/* A uniform double in [0, 1) from the top 53 bits of a hash. */
static inline double
fm_unit (uint64_t h)
{
  return (double)(h >> 11) * 0x1.0p-53;
}

/* A uniform integer in [0, n) without modulo bias worth measuring
 * (Lemire's multiply-shift; n < 2^64).
 */
static inline uint64_t
fm_below (uint64_t h, uint64_t n)
{
  return (uint64_t)(((unsigned __int128)h * n) >> 64);
}

#endif
