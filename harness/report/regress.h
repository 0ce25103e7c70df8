/* futuredisk — harness: a campaign night's regressions against the
 * nights before it, shared by `futuredisk compare` (text and JUnit) and
 * `futuredisk report` (the page's regressions and trend), so that both
 * say the same thing about the same night.
 *
 * Nights are ordered by time (db.h's FD_DB_NIGHTS_SQL), not by the order
 * a merge added them.  The baseline is the nbase nights before; of them,
 * those with the night's environment (kernel, tool and futuredisk
 * versions, the drive model's version) when there are any, else all of
 * them, and the environment's change is named as the likely cause.
 *
 * Per scenario (everything that defines a trial but its seed and
 * repetition), each trial against the baseline's trials of the same seed
 * and repetition (all of the scenario's where it has none):
 *   - an outcome the baseline never showed: of the check (any other), the
 *     repair, the recheck or the mount (a worse one; a better one is a
 *     note), an audit class with files in it, after a crash a broken
 *     durability promise, a rig error;
 *   - more files lost in an audit class, or after a crash more broken
 *     promises, than any baseline night by more than chance allows
 *     (FD_REGRESS_COUNT_SPREADS; fewer, and the other durability counts
 *     moving, are notes);
 *   - a failure rate above the baseline's 95 % Wilson interval;
 *   - a median fsck time above the baseline's by more than its measured
 *     spread allows and the minimum effect (fd_regress_timing), between
 *     trials of the same drive model version only.  With the environment
 *     changed, that is a change it likely explains, not a regression.
 */
#ifndef FUTUREDISK_REGRESS_H
#define FUTUREDISK_REGRESS_H

#include <stdbool.h>
#include <stddef.h>

#include "faultmodels/error.h"

struct sqlite3;

/* One scenario of the night. */
struct fd_finding {
  char scenario[512];
  char why[4096];        /* the regressions, "; "-separated; empty: none */
  char changed[1024];    /* fsck time moved with the environment: not a
                            regression; empty: no such change */
  char note[1024];       /* "; "-separated, e.g. "new scenario: no baseline" */
  long long first_trial; /* its lowest trial id in the night */
};

struct fd_findings {
  struct fd_finding *f;
  size_t n, regressions, changes;
  /* The baseline's nights, oldest first, "; "-separated; "" for none. */
  char baseline[1024];
  size_t nbaseline;
  /* Nights before this one left out of the baseline for their other
   * environment ("" for none), and how theirs differed.
   */
  char left_out[1024];
  /* How the baseline's environment differs from the night's ("kernel A
   * -> B; ..."; the drive model's version among them); "" when it does
   * not: then the baseline ran with the night's environment.
   */
  char env_change[1024];
  /* The drive model's versions when they differ ("2 tonight, 1 (or
   * unknown) in the baseline"): no fsck time compared.  "" otherwise.
   */
  char models[256];
  /* Scenarios whose fsck time was compared against the minimum effect
   * for an unmeasured spread only (one baseline night, no independent
   * repetitions).
   */
  size_t unmeasured;
};

/* Every scenario of the night (campaign, run_id) against the same
 * scenario in the baseline (above), into out (zeroed first; free with
 * fd_findings_free).  db comes from fd_report_open (report.h), whose
 * views the queries read.  -1 with err on an SQL error.
 */
extern int fd_regress_night (struct sqlite3 *db, const char *campaign,
                             const char *run_id, unsigned nbase,
                             struct fd_findings *out, struct fm_err *err);

extern void fd_findings_free (struct fd_findings *fs);

/* The smallest change of a median fsck time worth a regression, whatever
 * the spread: relative to the baseline's, and in seconds.
 */
#define FD_REGRESS_MIN_EFFECT   0.05
#define FD_REGRESS_MIN_EFFECT_S 0.1
/* A spread is measured with this many degrees of freedom: four baseline
 * nights, or repetitions (fewer say too little: Student's t at two is
 * 22).
 */
#define FD_REGRESS_MIN_DOF 3
/* Without a measured spread, the change must exceed this share of the
 * baseline's median and this many seconds instead: five demo nights of
 * one build differed by up to 12 % where the check took over a second,
 * by at most 0.21 s below that (BENCHMARKS.md, "compare: nights of one
 * build").
 */
#define FD_REGRESS_UNMEASURED_EFFECT   0.25
#define FD_REGRESS_UNMEASURED_EFFECT_S 0.25
/* How many square roots of a count of files lost it may grow by and be
 * chance (regress-outcome.c).
 */
#define FD_REGRESS_COUNT_SPREADS 3.0

/* One scenario's fsck times, compared. */
struct fd_timing {
  double now;     /* the night's median */
  double base;    /* the mean of the baseline nights' medians */
  double sd;      /* the spread that set the margin; < 0: not measured */
  size_t dof;     /* its degrees of freedom */
  double margin;  /* how far from base a median may be and be noise */
  size_t nights;  /* baseline nights with a time */
  size_t repeats; /* degrees of freedom of independent repetitions */
};

/* The night's median now against the baseline nights' medians
 * medians[0..k).  Its spread: that of the medians (fd_sd, k - 1 degrees
 * of freedom) and that of repetitions (fd_pooled_sd of rep[0..nrep) in
 * groups group[]: the same seed in the same night, each on a disk
 * populated for it: clones of one disk leave out how the populate lays
 * it out), each with FD_REGRESS_MIN_DOF degrees of freedom or more; the
 * margin is the larger one-sided 99.9 % prediction bound they give
 * (fd_t999 (dof) sd sqrt(1 + 1/k)), at least the minimum effect, or
 * without a measured spread the unmeasured effect.  1: slower beyond the
 * margin, -1: faster, 0: within it (and for k = 0).
 */
extern int fd_regress_timing (double now, const double *medians, size_t k,
                              const double *rep, const long long *group,
                              size_t nrep, struct fd_timing *t);

#endif
