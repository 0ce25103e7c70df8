/* futuredisk — harness: the HTML report of a campaign night (`futuredisk
 * report`, also written by `futuredisk demo`).
 */
#ifndef FUTUREDISK_REPORT_H
#define FUTUREDISK_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "faultmodels/error.h"

struct sqlite3;

/* A temporary view "t" of the database: one row per trial with its
 * check time and outcomes, data lost, and target type and kind.  Reports
 * and comparisons query it.
 */
extern int fd_report_view (struct sqlite3 *db, struct fm_err *err);

/* Which night: campaign (NULL: the newest trial's) and run_id (""): the
 * campaign's newest); both written back.  -1 with err if none.
 */
extern int fd_report_night (struct sqlite3 *db, const char *campaign,
                            char *name, size_t nlen, char *run_id, size_t rlen,
                            struct fm_err *err);

/* The whole page for one night (the view must exist). */
extern int fd_report_write (struct sqlite3 *db, const char *campaign,
                            const char *run_id, FILE *fp);

#endif
