/* futuredisk — faultmodels: fault kinds and the map of faulty sectors.
 *
 * One X-macro table names every fault kind the rig can inject, so the
 * plugin's parameters, the control protocol, the fault log and the stats
 * all spell a kind the same way.  The fault map records which sectors are
 * faulty and how; it is a plain sorted extent list (faults are few), with
 * no I/O and no randomness: random fault models decide, the map remembers.
 */
#ifndef FAULTMODELS_FAULTS_H
#define FAULTMODELS_FAULTS_H

#include <stdbool.h>
#include <stdint.h>

#include "faultmodels/error.h"

#define FM_FAULT_KINDS(X)                                                      \
  X (URE, "ure",                                                               \
     "unrecoverable read error: reads of the sector fail with EIO after the "  \
     "drive's error recovery time, until the sector is rewritten")             \
  X (DISK_FAILURE, "disk-failure",                                             \
     "the whole disk failed: every request fails with EIO")                    \
  X (POWERCUT, "powercut",                                                     \
     "power was cut: acknowledged writes still in the volatile cache are "     \
     "lost")                                                                   \
  X (TORN_WRITE, "torn-write",                                                 \
     "a cached write was part way onto the media when power went: a prefix "   \
     "of its sectors survived, the rest did not")                              \
  X (LOST_WRITE, "lost-write",                                                 \
     "a write was acknowledged but never written: the old data stays")         \
  X (MISDIRECTED_WRITE, "misdirected-write",                                   \
     "a write landed near the intended place instead: the target keeps old "   \
     "data, the victim is overwritten")                                        \
  X (FLIP, "flip",                                                             \
     "a bit flipped on the read path: the read succeeded with one bit wrong "  \
     "(the media holds the right data)")                                       \
  X (REALLOCATED, "reallocated",                                               \
     "an unreadable sector was rewritten onto a spare: every later access "    \
     "detours to the spare area")                                              \
  X (LSE, "lse",                                                               \
     "latent sector error: the sector went bad at rest (field model); "        \
     "reads fail until it is rewritten")                                       \
  X (ROT, "rot",                                                               \
     "a bit flipped at rest: the media holds the wrong bit until the sector "  \
     "is rewritten")                                                           \
  X (STUCK, "stuck",                                                           \
     "a bit of the media is stuck at 0 or 1: reads return the stuck value "    \
     "whatever was written")                                                   \
  X (MARGINAL, "marginal",                                                     \
     "a marginal sector: reads of it succeed, but only after retries, one "    \
     "revolution each; a read needing more than the error recovery time "      \
     "fails with EIO")

enum fm_fault_kind {
#define FM_FAULT_ENUM(id, name, desc) FM_FAULT_##id,
  FM_FAULT_KINDS (FM_FAULT_ENUM)
#undef FM_FAULT_ENUM
  FM_FAULT_NKINDS
};

extern const char *fm_fault_name (enum fm_fault_kind k);
extern const char *fm_fault_description (enum fm_fault_kind k);

/* Parse a kind name; -1 with err listing the kinds if unknown. */
extern int fm_fault_parse (const char *name, enum fm_fault_kind *out,
                           struct fm_err *err);

/* Parse a duration: a number with ns, us, ms, s, min or h (e.g. "30s",
 * "1.5h"), in ns.  -1 with err naming `what` and the value.
 */
extern int fm_parse_duration (const char *what, const char *s, uint64_t *ns,
                              struct fm_err *err);

/* ---- unrecoverable read errors from a bit error rate ---- */

/* The chance that a sector of `sector_bytes` is unreadable, given `ber`
 * unrecoverable errors per bit read (the datasheet's "1 sector per 10^14
 * bits" is ber = 1e-14): 1 - (1 - ber)^(8 * sector_bytes).
 */
extern double fm_ure_sector_probability (double ber, uint32_t sector_bytes);

/* The marginal sectors of a fresh disk of `sectors` sectors: a Poisson
 * number with mean sectors * p, at positions uniform over the disk, all
 * drawn from (seed, FM_STREAM_URE) — so the set depends on nothing but
 * the seed, never on what is read first.  Calls fn for each (a position
 * may repeat); returns the number drawn.
 */
extern uint64_t fm_ure_marginal (uint64_t seed, uint64_t sectors, double p,
                                 void (*fn) (void *opaque, uint64_t sector),
                                 void *opaque);

/* Is sector s unreadable after its `generation`th write (1, 2, ...: the
 * sector's own count, so the writes of other sectors, and their order,
 * do not matter)?  A rewrite re-rolls the sector with the same odds.
 */
extern bool fm_ure_reroll (uint64_t seed, uint64_t s, uint64_t generation,
                           double p);

/* Bit flips on the read path, at `rate` per bit read: the nth read of
 * a sector of `sector_bytes` flips a Poisson number of its bits (mean
 * 8 * sector_bytes * rate), each uniform - drawn for (seed, sector, nth)
 * alone, so a sector's nth read meets the same flips whatever was read
 * before it, and every read of it draws afresh (flips on the read path
 * are transient).  For sectors [first, first+n), each at its nth read:
 * fn (opaque, sector, bit) for every flip (a bit may come twice); returns
 * how many.
 */
typedef void fm_flip_fn (void *opaque, uint64_t sector, uint64_t bit);
extern uint64_t fm_flips (uint64_t seed, double rate, uint32_t sector_bytes,
                          uint64_t first, uint64_t n, uint64_t nth,
                          fm_flip_fn *fn, void *opaque);

/* ---- retries and marginal sectors ---- */

/* How many retries a read that does come back takes: each retry (one
 * more revolution; one more media read on flash) succeeds with chance
 * 1/mean, so the count is geometric, at least 1, with mean `mean`.  Drawn
 * from (seed, stream, s, attempt): `attempt` is how many times sector s
 * has been read (fm_counts), so every read of a weak sector draws afresh
 * and the reads of other sectors do not move its draws.
 */
extern uint64_t fm_retries (uint64_t seed, uint64_t stream, uint64_t s,
                            uint64_t attempt, double mean);

/* The chance that a sector of `sector_bytes` is marginal when a share
 * `share` of the media's 4 KiB blocks is: 1 - (1 - share)^(bytes / 4096),
 * so the share of 4 KiB reads that meet one does not depend on the
 * sector size.
 */
extern double fm_marginal_sector_probability (double share,
                                              uint32_t sector_bytes);

/* Is sector s marginal (chance p)?  A pure function of (seed, s): weak
 * spots of the media stay where they are, whatever is read or written
 * first, and no list of them is kept.
 */
extern bool fm_marginal (uint64_t seed, uint64_t s, double p);

/* ---- Poisson processes in virtual time ---- */

/* Faults that arrive over time (LSE onsets, rot) are Poisson processes
 * cut into one-second windows: how many events window w holds, and when
 * (ns into the window) and where (a hash for placement) its j-th falls.
 * Pure functions of (seed, stream, w, j): no state, no order.
 */
extern uint64_t fm_window_count (uint64_t seed, uint64_t stream, uint64_t w,
                                 double mean);
extern uint64_t fm_window_event_ns (uint64_t seed, uint64_t stream, uint64_t w,
                                    uint64_t j);
extern uint64_t fm_window_event_hash (uint64_t seed, uint64_t stream,
                                      uint64_t w, uint64_t j);

/* A Poisson variate of mean `mean` from the uniforms of two hashes. */
extern uint64_t fm_poisson (uint64_t h1, uint64_t h2, double mean);

/* ---- latent sector errors, field model (Bairavasundaram et al.,
 * SIGMETRICS 2007; Schroeder, Damouras and Gill, FAST 2010) ---- */

/* How many LSEs a prone disk carries: discrete Pareto,
 * P(N >= n) = n^-alpha, clamped to [min, max].  The seed picks the draw.
 */
extern uint64_t fm_lse_count (uint64_t seed, double alpha, uint64_t min,
                              uint64_t max);

/* Episode `key`: its size (geometric, mean `burst`, at least 1) and its
 * centre sector (a share `head` uniform in the first 10% of the disk, the
 * rest uniform over all of it).
 */
extern uint64_t fm_lse_burst (uint64_t seed, uint64_t key, double burst);
extern uint64_t fm_lse_centre (uint64_t seed, uint64_t key, uint64_t sectors,
                               double head);

/* The j-th sector of episode `key` (j = 0 is the centre): the centre plus
 * a two-sided geometric offset of mean `spread` sectors, inside the disk.
 */
extern uint64_t fm_lse_member (uint64_t seed, uint64_t key, uint64_t j,
                               uint64_t centre, uint64_t spread,
                               uint64_t sectors);

/* ---- the map of sectors that are faulty ---- */

struct fm_faultmap;

extern struct fm_faultmap *fm_faultmap_new (void);
extern void fm_faultmap_free (struct fm_faultmap *m);

/* Mark sectors [first, first+n) faulty with kind k (replacing whatever
 * was there).  -1 only when out of memory.
 */
extern int fm_faultmap_add (struct fm_faultmap *m, uint64_t first, uint64_t n,
                            enum fm_fault_kind k);

/* Sectors [first, first+n) were rewritten: forget their faults. */
extern int fm_faultmap_clear (struct fm_faultmap *m, uint64_t first,
                              uint64_t n);

/* The first faulty sector in [first, first+n) and its run: true and
 * *bad, *bad_n (the run, clipped to the range), *kind; false if none.
 */
extern bool fm_faultmap_find (const struct fm_faultmap *m, uint64_t first,
                              uint64_t n, uint64_t *bad, uint64_t *bad_n,
                              enum fm_fault_kind *kind);

/* Faulty sectors in the map. */
extern uint64_t fm_faultmap_sectors (const struct fm_faultmap *m);

#endif
