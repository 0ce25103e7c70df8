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

struct dfaults;

struct dfaults_config {
  const char *log_path; /* NULL: no log */
  uint32_t sector;
  uint64_t disk_size;
  uint64_t seed;
  double ber; /* unrecoverable read errors per bit; 0 = none */
  uint64_t erc_ns;
  double ure_recover;       /* chance a failing read succeeds on retry */
  double lost_write;        /* chance a write is acknowledged, not done */
  double misdirected_write; /* chance a write lands near its target */
  double flip_rate;         /* bit flips on the read path, per bit read */
  double realloc;           /* chance a rewrite moves a bad sector to a spare */
  uint64_t spares;          /* spare sectors for that */
  uint64_t fail_at_ns;      /* whole-disk failure; 0: never */
};

/* With ber > 0 the fresh disk's marginal sectors are in the map (and the
 * log) from the start, and every write re-rolls the sectors it writes.
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

/* A request at virtual time now touching [offset, offset+count).  Returns
 * 0 if it may proceed, else -1 with err filled and the fault logged and
 * counted; *extra_ns is the time the drive spends failing (error
 * recovery), to add to the request.
 */
extern int dfaults_read (struct dfaults *f, uint64_t now, uint64_t offset,
                         uint64_t count, uint64_t *extra_ns,
                         struct fm_err *err);
extern int dfaults_write (struct dfaults *f, uint64_t now, uint64_t offset,
                          uint64_t count, struct fm_err *err);

/* What becomes of the next write of [offset, offset+count): false if it
 * is lost (acknowledged, never written); else true with *actual the byte
 * offset where it lands (offset itself, or nearby if misdirected).  Call
 * before dfaults_write for that write, with the landing place.
 */
extern bool dfaults_fate (struct dfaults *f, uint64_t now, uint64_t offset,
                          uint64_t count, uint64_t *actual);

/* Bit flips on the read path for a read of [offset, offset+count): the
 * number of flips, and in *bits (malloc'd, caller frees) the bit index of
 * each in the read's buffer; logged and counted.  Flip them after the
 * copy.  A bit listed twice flips back: the log says so, too.
 */
extern uint64_t dfaults_flips (struct dfaults *f, uint64_t now, uint64_t offset,
                               uint64_t count, uint64_t **bits);

/* How many runs of reallocated sectors [offset, offset+count) touches:
 * each costs the drive a detour to the spare area.
 */
extern uint64_t dfaults_remapped_runs (const struct dfaults *f, uint64_t offset,
                                       uint64_t count);

/* Record an event the emulator produced itself (power cuts, torn
 * writes): logged, and counted under `kind`.
 */
extern void dfaults_record (struct dfaults *f, uint64_t now,
                            enum fm_fault_kind kind, uint64_t offset,
                            uint64_t length, const char *detail);

/* The "faults" member of the stats object: counts by kind of the faults
 * requests ran into, and the sectors faulty now.
 */
extern void dfaults_json (const struct dfaults *f, FILE *fp);

#endif
