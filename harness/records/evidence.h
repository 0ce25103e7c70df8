/* futuredisk — harness: a trial's evidence, kept with its record.
 *
 * What a reader needs to see why a trial came out as it did, after its
 * directory is gone: each checker phase's output (NAME.out, a phase run
 * again NAME-2.out, ...; the command line first), the fault logs, the
 * kernel's messages about the trial's device and the servers' logs.
 * Each item keeps at most FD_EVIDENCE_CAP bytes (its first
 * FD_EVIDENCE_HEAD and its last
 * FD_EVIDENCE_CAP - FD_EVIDENCE_HEAD, a line between them saying how
 * many were left out: a checker's verdict is at its end) and is stored
 * zlib-compressed in the database's evidence table (harness/SCHEMA.md).
 */
#ifndef FUTUREDISK_EVIDENCE_H
#define FUTUREDISK_EVIDENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "faultmodels/error.h"
#include "trial.h"

#define FD_EVIDENCE_CAP  (256u << 10)
#define FD_EVIDENCE_HEAD (64u << 10)
#define FD_EVIDENCE_MAX  24   /* items of one trial */
#define FD_EVIDENCE_NAME 40   /* bytes of an item's name */
#define FD_EVIDENCE_WHY  1024 /* bytes of a list of items not kept */

struct sqlite3;

struct fd_evidence_item {
  char name[FD_EVIDENCE_NAME]; /* "check.out", "repair-2.out",
                                  "faults.jsonl", "kernel.log", ... */
  char *text;                  /* what is kept (malloc'd, NUL-ended) */
  size_t len;                  /* its bytes */
  uint64_t bytes;              /* the whole item's */
};

struct fd_evidence {
  struct fd_evidence_item item[FD_EVIDENCE_MAX];
  size_t n;
  /* What the run left but could not be read: "NAME: why; NAME: why"
   * (fd_evidence_unkept); empty when nothing.
   */
  char unkept[FD_EVIDENCE_WHY];
};

/* The file in the trial's directory that checker phase i of r saves its
 * output in, and the item it is kept as: NAME.out, the Kth phase of a
 * name NAME-K.out (xfs's repair runs again after the mount that replays
 * the log it refused), so no output is written over or kept twice under
 * one name.
 */
extern void fd_evidence_output_name (const struct trial_result *r, size_t i,
                                     char name[FD_EVIDENCE_NAME]);

/* Read the evidence a run of s left in s->dir (r: its phases, each
 * checker's output under fd_evidence_output_name's name) into ev (what
 * is not there is left out); an item over the cap is cut, with a line
 * saying so on note (NULL: none).  A file that cannot be read is named in
 * ev->unkept with the reason, and the rest are still read.
 */
extern void fd_evidence_collect (const struct trial_spec *s,
                                 const struct trial_result *r,
                                 struct fd_evidence *ev, FILE *note);

extern void fd_evidence_free (struct fd_evidence *ev);

/* Append "NAME: why" to list (len bytes, "; " between items), ending it
 * "..." where it is full.
 */
extern void fd_evidence_unkept (char *list, size_t len, const char *name,
                                const char *why);

/* Store ev as trial_id's rows of the evidence table (inside the
 * caller's transaction), each item on its own.  0: every item stored;
 * 1: one or more not, each appended to why (len bytes; fd_evidence_unkept)
 * with SQLite's reason, the others stored; -1 with err when SQLite rolled
 * the caller's transaction back (disk full, I/O error): nothing of it is
 * left.
 */
extern int fd_evidence_store (struct sqlite3 *db, long long trial_id,
                              const struct fd_evidence *ev, char *why,
                              size_t len, struct fm_err *err);

/* For fd_evidence_each: one item's name and whole size; non-zero
 * stops the walk.
 */
typedef int fd_evidence_fn (void *opaque, const char *name, uint64_t bytes);

/* Each item trial_id kept, in the order it was stored: how many were
 * visited, or -1 with err.
 */
extern int fd_evidence_each (struct sqlite3 *db, long long trial_id,
                             fd_evidence_fn *fn, void *opaque,
                             struct fm_err *err);

/* One item of trial_id as stored (malloc'd, NUL-ended) into *text and
 * its length, and the whole item's bytes into *bytes (NULL: not
 * wanted).  1 when there is no such item, -1 with err when it cannot
 * be read back (a damaged row).
 */
extern int fd_evidence_read (struct sqlite3 *db, long long trial_id,
                             const char *name, char **text, size_t *len,
                             uint64_t *bytes, struct fm_err *err);

#endif
