/* futuredisk — harness: a campaign night's regressions against the
 * nights before it, shared by `futuredisk compare` (text and JUnit) and
 * `futuredisk report` (the page's regressions and trend), so that both
 * say the same thing about the same night.
 *
 * Per scenario (everything that defines a trial but its seed), three
 * regressions: an outcome class the baseline never showed (a checker
 * outcome, an audit class, a mount the repair left unmountable or only
 * escalation recovered, after a crash a broken durability promise, an
 * error); a failure rate (data lost — after a crash, a promise broken —
 * recheck dirty, unmountable, or an error) above the baseline's 95 %
 * Wilson interval; a median fsck time above the baseline's median by more
 * than max(5 %, 3 MAD).
 */
#ifndef FUTUREDISK_REGRESS_H
#define FUTUREDISK_REGRESS_H

#include <stddef.h>

#include "faultmodels/error.h"

struct sqlite3;

/* One scenario of the night. */
struct fd_finding {
  char scenario[512];
  char why[1024];        /* the regressions, "; "-separated; empty: none */
  char note[256];        /* e.g. "new scenario: no baseline" */
  long long first_trial; /* its lowest trial id in the night */
};

struct fd_findings {
  struct fd_finding *f;
  size_t n, regressions;
};

/* Every scenario of the night (campaign, run_id) against the same
 * scenario in the nbase nights of the campaign before it, into out
 * (zeroed first; free with fd_findings_free).  db comes from
 * fd_report_open (report.h), whose views the queries read.  -1 with err
 * on an SQL error.
 */
extern int fd_regress_night (struct sqlite3 *db, const char *campaign,
                             const char *run_id, unsigned nbase,
                             struct fd_findings *out, struct fm_err *err);

extern void fd_findings_free (struct fd_findings *fs);

#endif
