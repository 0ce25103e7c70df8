/* futuredisk — harness: the keys of a trial's inputs, one table for
 * every way a trial is described.
 *
 * A key is both a campaign file key ("fill = 30 50") and a `run` option
 * of the same name ("--fill 30"); a night of a campaign hands each trial
 * to `run` as those options.  Each key has one setter that checks its
 * value and stores it in a struct trial_spec, so a value is validated
 * by the same code wherever it comes from, and the rules that tie keys
 * together (fd_spec_check) are written once too.
 */
#ifndef FUTUREDISK_SPEC_H
#define FUTUREDISK_SPEC_H

#include <stdbool.h>
#include <stddef.h>

#include "faultmodels/error.h"

struct trial_spec;

/* In the order a campaign crosses them (the last varies fastest). */
enum fd_key {
  FD_KEY_FS,
  FD_KEY_PROFILE,
  FD_KEY_SIZE,
  FD_KEY_FILL,
  FD_KEY_META_ONLY,
  FD_KEY_TREE,
  FD_KEY_CRASH,
  FD_KEY_ESCALATE,
  FD_KEY_FAULTS,
  FD_KEY_TARGET,
  FD_KEY_TIMEOUT,
  FD_KEY_TIME,
  FD_KEY_THINK,
  FD_KEY_REPAIR_CUT,
  FD_KEY_CRASH_POINTS,
  FD_KEY_HOST,
  FD_KEY_ATTACH,
  FD_NKEYS
};

/* The name: "fill".  fd_key_option: "--fill". */
extern const char *fd_key_name (enum fd_key k);
extern const char *fd_key_option (enum fd_key k);
/* The key called name, or FD_NKEYS. */
extern enum fd_key fd_key_find (const char *name);
/* The value of a key not given: its default, or its word for none
 * ("0", "no", "none"); NULL for fs, which has neither.
 */
extern const char *fd_key_default (enum fd_key k);
/* Is v the campaign's word for "not given" (faults "", target none,
 * repair-cut 0, ...)?  Such a value sets nothing and is not handed on.
 */
extern bool fd_key_none (enum fd_key k, const char *v);
/* A yes/no key: "crash = yes" in a campaign, "--crash" alone in run. */
extern bool fd_key_flag (enum fd_key k);
/* A key a campaign matrix takes one value of (timeout), not a list. */
extern bool fd_key_single (enum fd_key k);

/* Check value v of key k and store it in s; -1 with err naming it as
 * dashes asks ("--fill ..." for run, "fill ..." for a campaign).
 */
extern int fd_spec_set (struct trial_spec *s, enum fd_key k, const char *v,
                        bool dashes, struct fm_err *err);
/* Every key with a default set to it (the rest of s untouched). */
extern void fd_spec_defaults (struct trial_spec *s);
/* s from the defaults and the values given (NULL: not given). */
extern int fd_spec_from (struct trial_spec *s, const char *const *value,
                         struct fm_err *err);
/* The host the trial's checkers run on: --host, else the profile's host
 * key, else NULL (this machine as it is).
 */
extern const char *fd_spec_host (const struct trial_spec *s);
/* The rules between keys (the file system's minimum size, only the mixed
 * tree has a crash workload, ...); -1 with err and *bad the key to blame.
 */
extern int fd_spec_check (const struct trial_spec *s, bool dashes,
                          enum fd_key *bad, struct fm_err *err);

#endif
