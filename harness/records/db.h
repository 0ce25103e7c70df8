/* futuredisk — harness: trial records in SQLite.
 *
 * One database holds any number of trials (nights of campaigns).  The
 * schema is versioned with PRAGMA user_version and created on first use;
 * it is documented in harness/SCHEMA.md.  Each trial's JSON record is
 * kept whole beside the columns a report queries.
 */
#ifndef FUTUREDISK_DB_H
#define FUTUREDISK_DB_H

#include <stdbool.h>

#include "faultmodels/error.h"
#include "trial.h"

#define FD_DB_SCHEMA_VERSION 7

/* A database's campaign nights, a row each (campaign, run_id, started,
 * first_id), to be ordered by FD_DB_NIGHT_ORDER: by the time the night's
 * first trial was recorded, which `futuredisk merge` keeps, so a night
 * merged after a later one still sorts before it; nights recorded in the
 * same second by the order they were added.
 */
#define FD_DB_NIGHTS_SQL                                                       \
  "SELECT campaign, run_id, min(recorded) AS started, min(id) AS first_id "    \
  "FROM trials GROUP BY campaign, run_id"
#define FD_DB_NIGHT_ORDER      "started, first_id"
#define FD_DB_NIGHT_ORDER_DESC "started DESC, first_id DESC"

struct sqlite3;

/* Open the database at path (creating it when create is set), creating
 * or upgrading its schema; NULL with err naming the file.  A database of
 * a newer schema is refused, never altered.
 */
extern struct sqlite3 *fd_db_open (const char *path, bool create,
                                   struct fm_err *err);

struct fd_evidence;

/* Add one trial (its JSON record, its evidence ev, and this machine's
 * environment) to the database at path, creating it if needed.  Each
 * item of ev is stored on its own; what is not (ev->unkept, a row
 * refused) is named with the reason in the trial's evidence_missing.
 * 0; 1 with err listing them when the trial is recorded without some or
 * all of its evidence; -1 with err naming the file and SQLite's message.
 */
extern int fd_db_add (const char *path, const struct trial_spec *s,
                      const struct trial_result *r, const char *record,
                      const struct fd_evidence *ev, struct fm_err *err);
/* (ev NULL: the trial left no evidence to keep, and misses none.) */

#endif
