/* futuredisk — harness: the HTML report of a campaign night (`futuredisk
 * report`, also written by `futuredisk demo`).
 */
#ifndef FUTUREDISK_REPORT_H
#define FUTUREDISK_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "faultmodels/error.h"

struct sqlite3;

/* Open the database at path for reading a night: campaign (NULL: the
 * newest trial's) and run_id ("": the campaign's newest), both written
 * back, and the temporary views that reports and comparisons query: "t"
 * with one row per trial (its check time and outcomes, mount outcome and
 * reason, data lost, target type and kind), "tb" adding what it lost
 * that it should not have (broken) and its finding ("unmountable",
 * "unrepaired", "broke a promise", "silent loss", "files lost",
 * "recovered by escalation", "" for none or a rig error).  NULL with err
 * if there is no such night.
 */
extern struct sqlite3 *fd_report_open (const char *path, const char *campaign,
                                       char *name, size_t nlen, char *run_id,
                                       size_t rlen, struct fm_err *err);

/* The whole page for one night (of a database fd_report_open opened). */
extern int fd_report_write (struct sqlite3 *db, const char *campaign,
                            const char *run_id, FILE *fp);

#endif
