/* futuredisk — nbdplugin: the emulated disk's faults and their log.
 *
 * Which sectors are faulty (a faultmodels fault map), whether the whole
 * disk has failed, and the ground-truth log: one JSON line for every fault
 * injected and every fault a request ran into, with its virtual time,
 * kind, byte offset and length, and detail.  From the log a reader can
 * explain every EIO the disk returned.
 *
 * Not thread-safe: the emulator calls it under its lock.
 */
#ifndef FUTUREDISK_FAULTS_H
#define FUTUREDISK_FAULTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "faultmodels/error.h"
#include "faultmodels/faults.h"
#include "faultmodels/faultset.h"

struct dfaults;

struct dfaults_config {
  const char *log_path; /* NULL: no log */
  uint32_t sector;
  uint64_t disk_size;
  uint64_t seed;
  uint64_t track_bytes; /* a track, for lse-spread's default */
  uint64_t retry_ns;    /* one retry: a revolution; a media read on flash */
  struct fm_faultset set;
};

/* Everything that is decided once is decided here and logged as injected
 * at virtual time 0: the marginal sectors (ber), whether the disk is
 * LSE-prone and its latent errors (age, lse), whether it corrupts
 * silently at all (corrupt) and its stuck bits.
 */
extern struct dfaults *dfaults_new (const struct dfaults_config *cfg,
                                    struct fm_err *err);
extern void dfaults_free (struct dfaults *f);

/* Inject a fault on bytes [offset, offset+length) (whole sectors), at
 * virtual time now; `source` says who (bad=FILE:LINE, control).
 */
extern int dfaults_inject (struct dfaults *f, uint64_t now,
                           enum fm_fault_kind kind, uint64_t offset,
                           uint64_t length, const char *source,
                           struct fm_err *err);

/* Load bad=FILE: one "OFFSET LENGTH KIND" per line, '#' comments. */
extern int dfaults_load (struct dfaults *f, const char *path,
                         struct fm_err *err);

/* A read at virtual time now of [offset, offset+count); `media` says the
 * drive went to the media for it (a read its buffer served meets no weak
 * sector).  Returns 0 if it may proceed, else -1 with err filled and the
 * fault logged and counted.  *extra_ns is the time the drive spent on
 * retries, to add to the request: retry_ns for each retry of a marginal
 * sector or of an unreadable one that comes back, and the whole error
 * recovery time (erc=) when the drive gives up.  The limit is per
 * command, as SCT ERC's is: a read whose retries would pass it fails.
 * What a read draws for a sector is keyed by the sector and a count of
 * its own, which this read raises whatever becomes of the read: whether
 * an unreadable one comes back by its reads while unreadable, a marginal
 * one's retries by its reads from the media, its flips (dfaults_flips)
 * by its reads.  So the order in which other sectors are read changes
 * none of it.
 */
extern int dfaults_read (struct dfaults *f, uint64_t now, uint64_t offset,
                         uint64_t count, bool media, uint64_t *extra_ns,
                         struct fm_err *err);
extern int dfaults_write (struct dfaults *f, uint64_t now, uint64_t offset,
                          uint64_t count, struct fm_err *err);

/* What becomes of the next write of [offset, offset+count): false if it
 * is lost (acknowledged, never written); else true with *actual the byte
 * offset where it lands (offset itself, or nearby if misdirected).  Call
 * before dfaults_write for that write, with the landing place.  Drawn
 * for the write's first sector and how many times that sector has been
 * written (dfaults_write counts where writes land; a write lost or
 * misdirected counts where it was aimed, so the next one there draws
 * afresh).
 */
extern bool dfaults_fate (struct dfaults *f, uint64_t now, uint64_t offset,
                          uint64_t count, uint64_t *actual);

/* Bit flips on the read path for a read of [offset, offset+count), after
 * dfaults_read counted it: the number of flips, and in *bits (malloc'd,
 * caller frees) the bit index of each in the read's buffer; logged and
 * counted.  Each sector's flips are its own, for its count of reads
 * (fm_flips); a sector read in part flips only in the part read.  Flip
 * them after the copy.  A bit listed twice flips back: the log says so,
 * too.
 */
extern uint64_t dfaults_flips (struct dfaults *f, uint64_t now, uint64_t offset,
                               uint64_t count, uint64_t **bits);

/* How many runs of reallocated sectors [offset, offset+count) touches:
 * each costs the drive a detour to the spare area.
 */
extern uint64_t dfaults_remapped_runs (const struct dfaults *f, uint64_t offset,
                                       uint64_t count);

/* Let virtual time run to `now`: latent sector errors whose onset has
 * come go into the map, and bits that rot at rest flip on the media
 * through rot (byte offset, bit) — both logged.  Call before each request
 * is served.
 */
typedef void dfaults_rot_fn (void *opaque, uint64_t offset, unsigned bit);
extern void dfaults_advance (struct dfaults *f, uint64_t now,
                             dfaults_rot_fn *rot, void *opaque);

/* Does the disk have stuck bits?  Fixed from the start, so callers may ask
 * without the lock and skip dfaults_stuck on the fast path.
 */
extern bool dfaults_has_stuck (const struct dfaults *f);

/* Force the stuck bits in buf, which holds the bytes read from
 * [offset, offset+count); each bit that comes out changed is logged and
 * counted.  Returns how many changed.
 */
extern uint64_t dfaults_stuck (struct dfaults *f, uint64_t now, void *buf,
                               uint64_t offset, uint64_t count);

/* Record an event the emulator produced itself (power cuts, torn
 * writes): logged, and counted under `kind`.
 */
extern void dfaults_record (struct dfaults *f, uint64_t now,
                            enum fm_fault_kind kind, uint64_t offset,
                            uint64_t length, const char *detail);

/* The "faults" member of the stats object: counts by kind of the faults
 * requests ran into (a marginal sector read slowly counts under
 * marginal), the retries that brought reads back, and the sectors
 * faulty now.
 */
extern void dfaults_json (const struct dfaults *f, FILE *fp);

#endif
