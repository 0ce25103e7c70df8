/* futuredisk — harness: a night's outcomes against the baseline's, each
 * trial against the baseline's trials of its seed and repetition
 * (regress.h says what is a regression).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "regress-int.h"
#include "robust.h"

/* How bad an outcome is, on the axes where one is worse than another:
 * a checker's (CLEAN, FIXED, UNFIXED, then the checker failing: an
 * error, a crash, a timeout, a loop, out of memory), a mount's.
 */
static int
severity (const char *axis, const char *outcome)
{
  static const char *const checker[] = {"CLEAN", "FIXED", "UNFIXED"};
  static const char *const mount[] = {"MOUNTED", "RECOVERED", "UNMOUNTABLE"};
  const char *const *order = strcmp (axis, "mount") ? checker : mount;
  int i;

  for (i = 0; i < 3; i++)
    if (strcmp (outcome, order[i]) == 0)
      return i;
  return 3;
}

/* The trial's outcome on axis ("" if none). */
static const char *
outcome (const struct rg_trial *t, const char *axis)
{
  return strcmp (axis, "check") == 0     ? t->check
         : strcmp (axis, "repair") == 0  ? t->repair
         : strcmp (axis, "recheck") == 0 ? t->recheck
                                         : t->mount;
}

static void
key_of (const struct rg_trial *t, char *buf, size_t len)
{
  if (t->rep)
    snprintf (buf, len, "seed %lld rep %lld", t->seed, t->rep);
  else
    snprintf (buf, len, "seed %lld", t->seed);
}

/* The baseline's trials to hold t against: of its seed and repetition,
 * or all of them where there are none (*own false).  Indexes into
 * base[], how many.
 */
static size_t
base_of (const struct rg_scenario *sc, const struct rg_trial *t, size_t *base,
         bool *own)
{
  size_t i, n = 0;

  for (i = 0; i < sc->n; i++)
    if (!sc->t[i].now && sc->t[i].seed == t->seed && sc->t[i].rep == t->rep)
      base[n++] = i;
  *own = n > 0;
  for (i = 0; n == 0 && i < sc->n; i++)
    if (!sc->t[i].now)
      base[n++] = i;
  return n;
}

/* The baseline's outcomes on axis, " A B " (a word: " A "). */
static void
axis_set (const struct rg_scenario *sc, const size_t *b, size_t nb,
          const char *axis, char *set, size_t len, int *best)
{
  size_t i;

  snprintf (set, len, " ");
  *best = 99;
  for (i = 0; i < nb; i++) {
    const char *o = outcome (&sc->t[b[i]], axis);
    char word[32];
    snprintf (word, sizeof word, " %s ", o);
    if (!o[0] || strstr (set, word))
      continue;
    if (strlen (set) + strlen (o) + 2 < len)
      snprintf (set + strlen (set), len - strlen (set), "%s ", o);
    if (severity (axis, o) < *best)
      *best = severity (axis, o);
  }
}

/* The "before: ..." of a message: the baseline's outcomes on axis. */
static void
before (const char *axis, const char *set, const char *own, char *buf,
        size_t len)
{
  size_t at = (size_t)snprintf (buf, len, "before:");
  const char *w = set;

  while (*w && at < len) {
    size_t l;
    while (*w == ' ')
      w++;
    if ((l = strcspn (w, " ")) == 0)
      break;
    at += (size_t)snprintf (buf + at, len - at, " %s:%.*s", axis, (int)l, w);
    w += l;
  }
  if (at < len)
    snprintf (buf + at, len - at, "%s", own);
}

/* 1. Checker and mount outcomes: the check's any other (a check that
 * finds less may have missed what it found), the others' a worse one.
 */
static void
axis_outcomes (const struct rg_scenario *sc, const struct rg_trial *t,
               const size_t *b, size_t nb, const char *key, const char *own,
               struct rg_msgs *ms)
{
  static const char *const axes[] = {"check", "repair", "recheck", "mount"};
  char set[256], was[400];
  size_t k;
  int best;

  for (k = 0; k < 4; k++) {
    const char *o = outcome (t, axes[k]);
    char word[32];
    snprintf (word, sizeof word, " %s ", o);
    axis_set (sc, b, nb, axes[k], set, sizeof set, &best);
    if (!o[0] || strstr (set, word))
      continue;
    before (axes[k], set, own, was, sizeof was);
    if (strcmp (set, " ") == 0) {
      /* Not reached before (the baseline failed earlier, or recorded no
       * mount): only a bad outcome is news.
       */
      if (severity (axes[k], o) >= 2)
        rg_say (ms, RG_WHY, key, own + (own[0] ? 2 : 0), "new outcome %s:%s",
                axes[k], o);
    } else if (k > 0 && severity (axes[k], o) < best)
      rg_say (ms, RG_NOTE, key, was, "better outcome %s:%s", axes[k], o);
    else
      rg_say (ms, RG_WHY, key, was, "new outcome %s:%s", axes[k], o);
  }
}

/* The trial's classes that are bad wherever they appear: a rig error,
 * an audit class with files in it, after a crash a broken promise.
 * " a b " into set.
 */
static void
bad_classes (const struct rg_trial *t, char *set, size_t len)
{
  size_t i;

  snprintf (set, len, " %s", t->error ? "error " : "");
  for (i = 0; !t->crash && i < t->audit.n; i++)
    if (t->audit.v[i] > 0 && strlen (set) + 32 < len)
      snprintf (set + strlen (set), len - strlen (set), "audit:%s ",
                t->audit.name[i]);
  for (i = 0; t->crash && i < t->durability.n; i++)
    if (strcmp (t->durability.name[i], "durable_broken") == 0 &&
        t->durability.v[i] > 0 && strlen (set) + 16 < len)
      snprintf (set + strlen (set), len - strlen (set), "violation ");
}

/* 2. Bad classes the baseline's trials never showed. */
static void
new_classes (const struct rg_scenario *sc, const struct rg_trial *t,
             const size_t *b, size_t nb, const char *key, const char *own,
             struct rg_msgs *ms)
{
  char mine[512], seen[2048] = " ", one[512];
  const char *w;
  size_t i;

  for (i = 0; i < nb; i++) {
    bad_classes (&sc->t[b[i]], one, sizeof one);
    if (strlen (seen) + strlen (one) < sizeof seen)
      strcat (seen, one + 1);
  }
  bad_classes (t, mine, sizeof mine);
  for (w = mine; *w;) {
    char word[64];
    size_t l;
    while (*w == ' ')
      w++;
    if ((l = strcspn (w, " ")) == 0)
      break;
    snprintf (word, sizeof word, " %.*s ", (int)l, w);
    if (strstr (seen, word) == NULL)
      rg_say (ms, RG_WHY, key, own + (own[0] ? 2 : 0), "new outcome %.*s",
              (int)l, w);
    w += l;
  }
}

/* c's count called name, 0 if it has none. */
static long long
count_of (const struct rg_counts *c, const char *name)
{
  size_t i;

  for (i = 0; i < c->n; i++)
    if (strcmp (c->name[i], name) == 0)
      return c->v[i];
  return 0;
}

/* The range of a count over the baseline's trials b, and how far beyond
 * it a count may lie and be chance: FD_REGRESS_COUNT_SPREADS times the
 * larger of the count's square root, the spread of a count of chance hits
 * (Poisson's: which files random faults strike moves with where the
 * kernel put them, night by night), and the standard deviation the
 * baseline's nights showed, when there are enough of them.
 */
static void
range (const struct rg_scenario *sc, const size_t *b, size_t nb,
       bool durability, const char *name, long long *lo, long long *hi,
       double *margin)
{
  double *v = malloc ((nb + 1) * sizeof *v), sd = 0;
  size_t i;

  for (i = 0; i < nb; i++) {
    const struct rg_trial *u = &sc->t[b[i]];
    long long x = count_of (durability ? &u->durability : &u->audit, name);
    if (i == 0 || x < *lo)
      *lo = x;
    if (i == 0 || x > *hi)
      *hi = x;
    if (v)
      v[i] = (double)x;
  }
  if (v && nb > FD_REGRESS_MIN_DOF)
    sd = fd_sd (v, nb);
  free (v);
  *margin = FD_REGRESS_COUNT_SPREADS * fmax (sd, sqrt ((double)*hi));
}

/* 3. Counts beyond the baseline's range and chance: files lost per audit
 * class, or after a crash the durability classes.  More lost, more
 * promises broken: a regression (unless the class is new: said above);
 * the rest a note.
 */
static void
counts (const struct rg_scenario *sc, const struct rg_trial *t, const size_t *b,
        size_t nb, const char *key, const char *own, struct rg_msgs *ms)
{
  const struct rg_counts *c = t->crash ? &t->durability : &t->audit;
  size_t i;

  for (i = 0; i < c->n; i++) {
    const char *name = c->name[i];
    long long v = c->v[i], lo = 0, hi = 0;
    bool worse = !t->crash || strcmp (name, "durable_broken") == 0;
    double margin;
    char was[64];
    range (sc, b, nb, t->crash, name, &lo, &hi, &margin);
    if (v <= hi + margin && v >= lo - margin)
      continue;
    if (lo == hi)
      snprintf (was, sizeof was, "%lld", lo);
    else
      snprintf (was, sizeof was, "%lld-%lld", lo, hi);
    if (worse && v > hi && hi == 0)
      continue; /* a new class */
    rg_say (ms, worse && v > hi ? RG_WHY : RG_NOTE, key, own + (own[0] ? 2 : 0),
            "%s %s %s -> %lld", t->crash ? "durability" : "files lost", name,
            was, v);
  }
}

/* 4. The failure rate against the baseline's Wilson interval. */
static void
failure_rate (const struct rg_scenario *sc, struct rg_msgs *ms)
{
  size_t i, n[2] = {0, 0}, k[2] = {0, 0};
  double lo, hi, p;

  for (i = 0; i < sc->n; i++) {
    n[sc->t[i].now]++;
    k[sc->t[i].now] += sc->t[i].failure;
  }
  fd_wilson (k[0], n[0], 1.96, &lo, &hi);
  p = n[1] ? (double)k[1] / n[1] : 0;
  if (p > hi)
    rg_say (ms, RG_WHY, "", NULL,
            "failure rate %zu/%zu = %.0f%% above the baseline's %zu/%zu "
            "(95%% interval %.0f-%.0f%%)",
            k[1], n[1], 100 * p, k[0], n[0], 100 * lo, 100 * hi);
  else if (p < lo)
    rg_say (ms, RG_NOTE, "", NULL,
            "failure rate %zu/%zu below the baseline's interval "
            "(%.0f-%.0f%%)",
            k[1], n[1], 100 * lo, 100 * hi);
}

void
rg_outcomes (const struct rg_scenario *sc, struct rg_msgs *ms)
{
  size_t i, nb, *b = malloc ((sc->n + 1) * sizeof *b);
  char key[64];
  bool own;

  if (b == NULL)
    return;
  for (i = 0; i < sc->n; i++) {
    const struct rg_trial *t = &sc->t[i];
    /* "; ", then what the trial is held against if not its own seed */
    const char *other = "; against the other seeds' baseline";
    if (!t->now || (nb = base_of (sc, t, b, &own)) == 0)
      continue;
    key_of (t, key, sizeof key);
    axis_outcomes (sc, t, b, nb, key, own ? "" : other, ms);
    new_classes (sc, t, b, nb, key, own ? "" : other, ms);
    counts (sc, t, b, nb, key, own ? "" : other, ms);
  }
  free (b);
  failure_rate (sc, ms);
}
