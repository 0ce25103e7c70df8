/* futuredisk — harness: a night's median fsck time against the
 * baseline's, beyond the spread the scenario has shown (regress.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "regress-int.h"
#include "robust.h"

/* The margin a spread sd with dof degrees of freedom gives against k
 * nights, or -1 with too few.
 */
static double
bound (double sd, size_t dof, size_t k)
{
  if (dof < FD_REGRESS_MIN_DOF)
    return -1;
  return fd_t999 (dof) * sd * sqrt (1 + 1.0 / (double)k);
}

int
fd_regress_timing (double now, const double *medians, size_t k,
                   const double *rep, const long long *group, size_t nrep,
                   struct fd_timing *t)
{
  double s_rep, m_nights, m_rep;
  size_t dof_rep;

  *t = (struct fd_timing){.now = now, .sd = -1, .nights = k};
  if (k == 0)
    return 0;
  t->base = fd_mean (medians, k);
  s_rep = fd_pooled_sd (rep, group, nrep, &dof_rep);
  t->repeats = dof_rep;
  m_nights = bound (fd_sd (medians, k), k - 1, k);
  m_rep = bound (s_rep, dof_rep, k);
  if (m_nights >= m_rep && m_nights >= 0)
    t->sd = fd_sd (medians, k), t->dof = k - 1;
  else if (m_rep >= 0)
    t->sd = s_rep, t->dof = dof_rep;
  if (t->sd >= 0)
    t->margin =
        fmax (fmax (m_nights, m_rep),
              fmax (FD_REGRESS_MIN_EFFECT * t->base, FD_REGRESS_MIN_EFFECT_S));
  else
    t->margin = fmax (FD_REGRESS_UNMEASURED_EFFECT * t->base,
                      FD_REGRESS_UNMEASURED_EFFECT_S);
  return now > t->base + t->margin ? 1 : now < t->base - t->margin ? -1 : 0;
}

/* The model version the night's trials ran with (the highest, should
 * they differ), and whether the baseline has times of another.
 */
static long long
night_model (const struct rg_scenario *sc, long long *other)
{
  long long m = 0;
  size_t i;

  *other = 0;
  for (i = 0; i < sc->n; i++)
    if (sc->t[i].now && sc->t[i].model > m)
      m = sc->t[i].model;
  for (i = 0; i < sc->n; i++)
    if (!sc->t[i].now && !isnan (sc->t[i].check_s) && sc->t[i].model != m)
      *other = sc->t[i].model;
  return m;
}

/* The times to compare: the night's (into now), each baseline night's
 * median (into med, by night), and the repetitions of a seed in a night
 * whose disks were each populated for them (into rep, grouped by night
 * and seed); of the drive model version m only.
 */
struct times {
  double *now, *med, *rep;
  long long *group;
  size_t nnow, nmed, nrep;
};

static void
gather (const struct rg_scenario *sc, long long m, struct times *x)
{
  double *v = malloc ((sc->n + 1) * sizeof *v);
  int night, last = -1;
  size_t i, nv;

  for (i = 0; i < sc->n; i++) {
    const struct rg_trial *t = &sc->t[i];
    if (isnan (t->check_s) || t->model != m)
      continue;
    if (t->now)
      x->now[x->nnow++] = t->check_s;
    if (!t->cloned) {
      x->rep[x->nrep] = t->check_s;
      x->group[x->nrep++] = (long long)t->night << 32 | (t->seed & 0xffffffff);
    }
    if (t->night > last)
      last = t->night;
  }
  for (night = 1; v && night <= last; night++) {
    for (nv = 0, i = 0; i < sc->n; i++)
      if (sc->t[i].night == night && sc->t[i].model == m &&
          !isnan (sc->t[i].check_s))
        v[nv++] = sc->t[i].check_s;
    if (nv)
      x->med[x->nmed++] = fd_median (v, nv);
  }
  free (v);
}

/* What the comparison stood on, for its message. */
static void
basis (const struct fd_timing *t, char *buf, size_t len)
{
  if (t->sd < 0)
    snprintf (buf, len,
              "beyond the minimum effect of %.0f%% and %g s; the spread is "
              "not measured: fewer than %d baseline nights, no repetitions",
              100 * FD_REGRESS_UNMEASURED_EFFECT,
              FD_REGRESS_UNMEASURED_EFFECT_S, FD_REGRESS_MIN_DOF + 1);
  else
    snprintf (buf, len,
              "margin %.3g s: the 99.9%% bound of a spread of %.3g s (%zu "
              "night%s, %zu degrees of freedom of repetitions), at least "
              "%.0f%% and %g s",
              t->margin, t->sd, t->nights, t->nights == 1 ? "" : "s",
              t->repeats, 100 * FD_REGRESS_MIN_EFFECT, FD_REGRESS_MIN_EFFECT_S);
}

static void
say_timing (int r, const struct fd_timing *t, bool env_changed,
            struct rg_msgs *ms)
{
  char why[256];
  double pct = t->base > 0 ? 100 * (t->now - t->base) / t->base : 0;

  basis (t, why, sizeof why);
  if (r > 0)
    rg_say (ms, env_changed ? RG_CHANGED : RG_WHY, "", why,
            "fsck time %.3g s, %.0f%% above the baseline's %.3g s", t->now, pct,
            t->base);
  else if (r < 0)
    rg_say (ms, RG_NOTE, "", why,
            "fsck time %.3g s, %.0f%% below the baseline's %.3g s", t->now,
            -pct, t->base);
}

int
rg_times (const struct rg_scenario *sc, bool env_changed, struct rg_msgs *ms)
{
  size_t n = sc->n + 1;
  struct times x = {.now = malloc (n * sizeof *x.now),
                    .med = malloc (n * sizeof *x.med),
                    .rep = malloc (n * sizeof *x.rep),
                    .group = malloc (n * sizeof *x.group)};
  long long other, m = night_model (sc, &other);
  struct fd_timing t;
  int r, ret = 0;

  if (x.now && x.med && x.rep && x.group)
    gather (sc, m, &x);
  if (x.nnow && x.nmed) {
    r = fd_regress_timing (fd_median (x.now, x.nnow), x.med, x.nmed, x.rep,
                           x.group, x.nrep, &t);
    say_timing (r, &t, env_changed, ms);
    ret = t.sd < 0;
  } else if (x.nnow && other) {
    rg_say (ms, RG_NOTE, "", NULL,
            "fsck time not compared: drive model version %lld in this night, "
            "%lld%s in the baseline",
            m, other, other == 1 ? " (or unknown)" : "");
    ret = -1;
  }
  free (x.now);
  free (x.med);
  free (x.rep);
  free (x.group);
  return ret;
}
