/* futuredisk — harness: what the comparison's files share (regress.h
 * says what they compare).  regress.c picks the nights and loads each
 * scenario's trials; regress-outcome.c compares their outcomes and
 * regress-time.c their fsck times; regress-msg.c gathers what they say.
 */
#ifndef FUTUREDISK_REGRESS_INT_H
#define FUTUREDISK_REGRESS_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "regress.h"

/* Named counts of one trial: files per audit class or durability class. */
struct rg_counts {
  char name[12][24];
  long long v[12];
  size_t n;
};

/* One trial of the scenario, in the night compared or the baseline. */
struct rg_trial {
  bool now;  /* of the night compared, else of the baseline */
  int night; /* the night's index (the night compared: 0) */
  long long seed, rep, model;
  double check_s; /* NAN: no check */
  bool cloned;    /* its disk a clone of another trial's populated one */
  bool crash;     /* after a crash, with its durability counted */
  bool error;     /* a rig error */
  bool failure;   /* for the failure rate (regress.h) */
  char check[24], repair[24], recheck[24], mount[24];
  struct rg_counts audit;      /* files lost per class (not crash) */
  struct rg_counts durability; /* per durability class (crash) */
  long long id;                /* its trial id */
  char *scenario;              /* its scenario (the loader's) */
};

struct rg_scenario {
  struct rg_trial *t;
  size_t n;
};

/* What the comparisons say about a scenario, before it is written into
 * its finding: the same text for several seeds is said once, naming
 * them all.
 */
enum rg_kind {
  RG_WHY,
  RG_CHANGED,
  RG_NOTE
};

struct rg_said {
  enum rg_kind kind;
  char text[512];  /* "new outcome repair:FIXED" */
  char after[512]; /* after the seeds: "before: repair:CLEAN" */
  char keys[256];  /* "seed 1, seed 3" */
};

struct rg_msgs {
  struct rg_said *m;
  size_t n;
};

/* regress-msg.c */

/* Say text (printf) of the trial key ("" for the scenario as a whole),
 * with after following the keys.
 */
extern void rg_say (struct rg_msgs *ms, enum rg_kind kind, const char *key,
                    const char *after, const char *fmt, ...)
    __attribute__ ((format (printf, 5, 6)));

/* Everything said, into the finding's why, changed and note (why first
 * for those said of the scenario as a whole); ms emptied.
 */
extern void rg_flush (struct rg_msgs *ms, struct fd_finding *f);

/* Append "; " (unless empty) and text to buf. */
extern void rg_append (char *buf, size_t len, const char *text);

/* regress-outcome.c */

/* The night's trials' outcomes against the baseline's (regress.h). */
extern void rg_outcomes (const struct rg_scenario *sc, struct rg_msgs *ms);

/* regress-time.c */

/* The night's median fsck time against the baseline's, between trials
 * of the night's drive model version: a regression (or, with
 * env_changed, a change) into ms.  Returns 1 when compared without a
 * measured spread, -1 when the drive model's versions left nothing to
 * compare, else 0.
 */
extern int rg_times (const struct rg_scenario *sc, bool env_changed,
                     struct rg_msgs *ms);

#endif
