/* futuredisk — harness: a populated disk kept as a base, and a trial
 * that clones it instead of populating (see campaign/reuse.h for which
 * trials of a night share one).
 *
 * A base is a directory: the store (disk.store, read-only from then on),
 * the populate's manifest and phases, the populating server's fault log,
 * and `ready`, made last.
 */
#ifndef FUTUREDISK_BASE_H
#define FUTUREDISK_BASE_H

#include "faultmodels/error.h"

/* A trial running (trial-int.h): the engine calls these. */
struct trial;

/* After t populated its disk (its store, detached): make dir (absolute)
 * a base of it.  The store moves there; the trial goes on with a clone.
 */
extern int fd_base_save (struct trial *t, const char *dir, struct fm_err *err);

/* Is dir a whole base (its ready file there)?  -1 with err if not. */
extern int fd_base_check (const char *dir, struct fm_err *err);

/* Instead of populating: take the base in dir's manifest, phases and
 * logs into t, which then breaks a clone of its store.
 */
extern int fd_base_clone (struct trial *t, const char *dir, struct fm_err *err);

/* Remove what the base in dir holds, and dir. */
extern void fd_base_remove (const char *dir);

#endif
