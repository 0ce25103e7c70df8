/* futuredisk — harness: a night's regressions (see regress.h): which
 * nights are its baseline, what of their environment changed, and each
 * scenario's trials for the comparisons (regress-outcome.c,
 * regress-time.c).
 */
#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "append.h"
#include "db.h"
#include "json.h"
#include "regress-int.h"

/* What a night's environment is, field by field: its name, and the
 * column of its values.
 */
#define ENV_FIELDS 7
static const char *const env_name[ENV_FIELDS] = {
    "kernel",   "futuredisk",  "nbdkit",     "e2fsprogs",
    "xfsprogs", "btrfs-progs", "drive model"};
static const char *const env_column[ENV_FIELDS] = {
    "e.kernel",   "e.futuredisk",  "e.nbdkit",       "e.e2fsprogs",
    "e.xfsprogs", "e.btrfs_progs", "t.model_version"};

typedef char env_t[ENV_FIELDS][256];

/* A list of night names. */
struct names {
  char (*v)[96];
  size_t n;
};

static int
add_name (struct names *ns, const char *name)
{
  char (*slot)[96] = fd_append (&ns->v, &ns->n, sizeof *ns->v);

  if (slot == NULL)
    return -1;
  snprintf (*slot, sizeof *slot, "%s", name);
  return 0;
}

/* ns as a JSON array of strings (malloc'd; NULL out of memory), for
 * json_each in a query.
 */
static char *
names_json (const struct names *ns)
{
  char *buf = NULL;
  size_t len = 0, i;
  FILE *fp = open_memstream (&buf, &len);

  if (fp == NULL)
    return NULL;
  fputc ('[', fp);
  for (i = 0; i < ns->n; i++) {
    if (i)
      fputc (',', fp);
    fd_json_string (fp, ns->v[i]);
  }
  fputc (']', fp);
  if (fclose (fp) != 0) {
    free (buf);
    return NULL;
  }
  return buf;
}

/* The environment of the campaign's nights ns: each field's distinct
 * values, " / "-separated ("" where none was recorded).
 */
static int
env_of (sqlite3 *db, const char *campaign, const struct names *ns, env_t env)
{
  char sql[640], *json = names_json (ns);
  sqlite3_stmt *st;
  int k, rc = json ? 0 : -1;

  for (k = 0; rc == 0 && k < ENV_FIELDS; k++) {
    snprintf (sql, sizeof sql,
              "SELECT group_concat(v, ' / ') FROM (SELECT DISTINCT %s AS v "
              "FROM json_each(?2) n JOIN trials t ON t.campaign = ?1 AND "
              "t.run_id = n.value LEFT JOIN environments e ON e.id = "
              "t.env_id WHERE %s != '' ORDER BY v)",
              env_column[k], env_column[k]);
    if (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) != SQLITE_OK) {
      rc = -1;
      break;
    }
    sqlite3_bind_text (st, 1, campaign, -1, SQLITE_STATIC);
    sqlite3_bind_text (st, 2, json, -1, SQLITE_STATIC);
    env[k][0] = '\0';
    if (sqlite3_step (st) == SQLITE_ROW && sqlite3_column_text (st, 0))
      snprintf (env[k], sizeof env[k], "%s", sqlite3_column_text (st, 0));
    sqlite3_finalize (st);
  }
  free (json);
  return rc;
}

/* Where env (the baseline's) differs from now (the night's): "kernel A
 * -> B; ..." into buf, or "".  A field not recorded on either side is
 * no difference.  Returns whether the drive model's differs.
 */
static bool
env_diff (env_t env, env_t now, char *buf, size_t len)
{
  char one[600];
  int k;

  buf[0] = '\0';
  for (k = 0; k < ENV_FIELDS; k++)
    if (env[k][0] && now[k][0] && strcmp (env[k], now[k]) != 0) {
      snprintf (one, sizeof one, "%s %s -> %s", env_name[k], env[k], now[k]);
      rg_append (buf, len, one);
    }
  return env[ENV_FIELDS - 1][0] && now[ENV_FIELDS - 1][0] &&
         strcmp (env[ENV_FIELDS - 1], now[ENV_FIELDS - 1]) != 0;
}

/* The campaign's nbase nights before run_id, oldest first, into ns (none
 * for its first night).
 */
static int
nights_before (sqlite3 *db, const char *campaign, const char *run_id,
               unsigned nbase, struct names *ns)
{
  sqlite3_stmt *st;

  /* Kept for the connection: a report asks for several nights. */
  if (sqlite3_exec (db,
                    "CREATE TEMP TABLE IF NOT EXISTS rg_nights AS SELECT *, "
                    "row_number() OVER (PARTITION BY campaign ORDER "
                    "BY " FD_DB_NIGHT_ORDER ") AS pos FROM (" FD_DB_NIGHTS_SQL
                    ")",
                    NULL, NULL, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2 (db,
                          "SELECT b.run_id FROM rg_nights n JOIN rg_nights b "
                          "ON b.campaign = n.campaign AND b.pos < n.pos AND "
                          "b.pos >= n.pos - ?3 WHERE n.campaign = ?1 AND "
                          "n.run_id = ?2 ORDER BY b.pos",
                          -1, &st, NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_text (st, 1, campaign, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 2, run_id, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 3, nbase);
  while (sqlite3_step (st) == SQLITE_ROW)
    if (add_name (ns, (const char *)sqlite3_column_text (st, 0)) == -1)
      break;
  sqlite3_finalize (st);
  return 0;
}

/* "a; b; c" of ns into buf. */
static void
join (const struct names *ns, char *buf, size_t len)
{
  size_t i;

  buf[0] = '\0';
  for (i = 0; i < ns->n; i++)
    rg_append (buf, len, ns->v[i]);
}

/* Split the nights before into the baseline (those with the night's
 * environment, or all where none has it), appended to base (which holds
 * the night), and those left out.
 */
static int
split_env (sqlite3 *db, const char *campaign, env_t now,
           const struct names *before, struct names *base, struct names *out)
{
  struct names one = {0};
  char diff[1024];
  env_t env;
  size_t i;
  int rc = 0;

  for (i = 0; rc == 0 && i < before->n; i++) {
    one.n = 0;
    if (add_name (&one, before->v[i]) == -1 ||
        env_of (db, campaign, &one, env) == -1)
      rc = -1;
    else
      env_diff (env, now, diff, sizeof diff);
    if (rc == 0)
      rc = add_name (diff[0] ? out : base, before->v[i]);
  }
  free (one.v);
  if (rc == 0 && base->n == 1) {
    /* None with the night's environment: all of them, and the change is
     * the likely cause of what differs.
     */
    for (i = 0; rc == 0 && i < out->n; i++)
      rc = add_name (base, out->v[i]);
    out->n = 0;
  }
  return rc;
}

/* Choose the baseline: the night and its baseline's nights into nights
 * (the night first), what they stood on into out's fields.  -1 on an SQL
 * error.
 */
static int
baseline (sqlite3 *db, const char *campaign, const char *run_id, unsigned nbase,
          struct names *nights, struct fd_findings *out)
{
  struct names before = {0}, left = {0};
  char diff[1024];
  env_t now, env;
  int rc = -1;

  if (add_name (nights, run_id) == -1 ||
      nights_before (db, campaign, run_id, nbase, &before) == -1 ||
      env_of (db, campaign, nights, now) == -1 ||
      split_env (db, campaign, now, &before, nights, &left) == -1)
    goto out;
  out->nbaseline = nights->n - 1;
  {
    struct names base = {nights->v + 1, nights->n - 1};
    join (&base, out->baseline, sizeof out->baseline);
    if (base.n && env_of (db, campaign, &base, env) == 0 &&
        env_diff (env, now, out->env_change, sizeof out->env_change))
      snprintf (out->models, sizeof out->models,
                "drive model version %s in this night, %s%s in the baseline",
                now[ENV_FIELDS - 1], env[ENV_FIELDS - 1],
                strcmp (env[ENV_FIELDS - 1], "1") ? "" : " (or unknown)");
  }
  /* Some nights had the night's environment: the others are left out. */
  if (left.n && env_of (db, campaign, &left, env) == 0) {
    join (&left, out->left_out, sizeof out->left_out);
    env_diff (env, now, diff, sizeof diff);
    snprintf (out->left_out + strlen (out->left_out),
              sizeof out->left_out - strlen (out->left_out), " (%s)", diff);
  }
  rc = 0;
out:
  free (before.v);
  free (left.v);
  return rc;
}

/* "name=N name=N" into c. */
static void
parse_counts (const char *s, struct rg_counts *c)
{
  memset (c, 0, sizeof *c);
  while (s && *s && c->n < sizeof c->v / sizeof c->v[0]) {
    size_t len = strcspn (s, "=");
    if (s[len] != '=')
      break;
    snprintf (c->name[c->n], sizeof c->name[c->n], "%.*s", (int)len, s);
    c->v[c->n++] = strtoll (s + len + 1, NULL, 10);
    s += len + 1 + strcspn (s + len + 1, " ");
    while (*s == ' ')
      s++;
  }
}

static void
text (sqlite3_stmt *st, int i, char *buf, size_t len)
{
  const unsigned char *s = sqlite3_column_text (st, i);
  snprintf (buf, len, "%s", s ? (const char *)s : "");
}

/* One row of load's query into t. */
static void
row (sqlite3_stmt *st, struct rg_trial *t)
{
  t->night = sqlite3_column_int (st, 0);
  t->now = t->night == 0;
  t->seed = sqlite3_column_int64 (st, 1);
  t->rep = sqlite3_column_int64 (st, 2);
  /* NAN: a trial that never got to its check */
  t->check_s = sqlite3_column_type (st, 3) != SQLITE_NULL
                   ? sqlite3_column_double (st, 3)
                   : NAN;
  text (st, 4, t->check, sizeof t->check);
  text (st, 5, t->repair, sizeof t->repair);
  text (st, 6, t->recheck, sizeof t->recheck);
  text (st, 7, t->mount, sizeof t->mount);
  t->error = sqlite3_column_int (st, 8);
  t->cloned = sqlite3_column_int (st, 9);
  t->crash = sqlite3_column_int (st, 10);
  t->failure = sqlite3_column_int (st, 11);
  t->model = sqlite3_column_int64 (st, 12);
  parse_counts ((const char *)sqlite3_column_text (st, 13), &t->audit);
  parse_counts ((const char *)sqlite3_column_text (st, 14), &t->durability);
  t->id = sqlite3_column_int64 (st, 15);
  t->scenario = strdup ((const char *)sqlite3_column_text (st, 16));
}

/* Every trial of the nights (the night compared first, its index 0; the
 * baseline's from 1), by scenario.  One query for them all: a report
 * compares 30 nights.
 */
static int
load (sqlite3 *db, const char *campaign, const struct names *nights,
      struct rg_scenario *all)
{
  char *json = names_json (nights);
  sqlite3_stmt *st;

  if (json == NULL ||
      sqlite3_prepare_v2 (
          db,
          "SELECT n.key, t.seed, t.rep, t.check_s, "
          " coalesce(t.check_outcome, ''), coalesce((SELECT outcome FROM "
          " phases p WHERE p.trial_id = t.id AND p.name = 'repair' ORDER BY "
          " seq LIMIT 1), ''), coalesce(t.recheck_outcome, ''), t.mount, "
          " t.error != '', t.cloned, t.crash AND t.violations IS NOT NULL, "
          " t.error != '' OR t.broken > 0 OR t.mount = 'UNMOUNTABLE' OR "
          " coalesce(t.recheck_outcome, 'CLEAN') != 'CLEAN', "
          " t.model_version, (SELECT group_concat(class || '=' || files, "
          " ' ') FROM audit a WHERE a.trial_id = t.id AND a.class NOT IN "
          " ('intact', 'extra')), (SELECT group_concat(class || '=' || "
          " files, ' ') FROM durability d WHERE d.trial_id = t.id), t.id, "
          " t.scenario "
          "FROM json_each(?2) n JOIN tb t ON t.campaign = ?1 AND "
          " t.run_id = n.value ORDER BY t.scenario, t.id",
          -1, &st, NULL) != SQLITE_OK) {
    free (json);
    return -1;
  }
  sqlite3_bind_text (st, 1, campaign, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 2, json, -1, SQLITE_STATIC);
  while (sqlite3_step (st) == SQLITE_ROW) {
    struct rg_trial *t = fd_append (&all->t, &all->n, sizeof *all->t);
    if (t == NULL)
      break;
    row (st, t);
  }
  sqlite3_finalize (st);
  free (json);
  return 0;
}

/* The scenario sc (its trials in the night and the baseline) into its
 * finding fi.
 */
static void
compare_one (const struct rg_scenario *sc, struct fd_findings *out,
             struct fd_finding *fi)
{
  struct rg_msgs ms = {0};
  size_t i, nbase = 0;

  for (i = 0; i < sc->n; i++)
    nbase += !sc->t[i].now;
  if (nbase == 0)
    rg_say (&ms, RG_NOTE, "", NULL, "new scenario: no baseline");
  else {
    rg_outcomes (sc, &ms);
    if (rg_times (sc, out->env_change[0] != '\0', &ms) == 1)
      out->unmeasured++;
  }
  rg_flush (&ms, fi);
  /* Whatever changed with the environment, it is the likely cause. */
  if (out->env_change[0] && fi->why[0]) {
    char cause[1100];
    snprintf (cause, sizeof cause,
              "likely cause: the environment's change (%s)", out->env_change);
    rg_append (fi->why, sizeof fi->why, cause);
  }
}

/* Each scenario of the night (a run of all's trials, by scenario, with
 * one of the night's among them) into out.
 */
static int
compare_all (const struct rg_scenario *all, struct fd_findings *out)
{
  size_t i, j, k;

  for (i = 0; i < all->n; i = j) {
    struct rg_scenario sc = {all->t + i, 0};
    struct fd_finding *fi;
    for (j = i;
         j < all->n && strcmp (all->t[j].scenario, all->t[i].scenario) == 0;
         j++)
      sc.n++;
    for (k = i; k < j && !all->t[k].now; k++)
      ;
    if (k == j)
      continue; /* not run this night */
    if ((fi = fd_append (&out->f, &out->n, sizeof *out->f)) == NULL)
      return -1;
    snprintf (fi->scenario, sizeof fi->scenario, "%s", all->t[i].scenario);
    fi->first_trial = all->t[k].id;
    compare_one (&sc, out, fi);
    out->regressions += fi->why[0] != '\0';
    out->changes += fi->changed[0] != '\0';
  }
  return 0;
}

int
fd_regress_night (sqlite3 *db, const char *campaign, const char *run_id,
                  unsigned nbase, struct fd_findings *out, struct fm_err *err)
{
  struct names nights = {0};
  struct rg_scenario all = {0};
  size_t i;
  int rc = 0;

  memset (out, 0, sizeof *out);
  if (baseline (db, campaign, run_id, nbase, &nights, out) == -1 ||
      load (db, campaign, &nights, &all) == -1)
    rc = fm_fail (err, "%s", sqlite3_errmsg (db));
  else if (compare_all (&all, out) == -1)
    rc = fm_fail (err, "out of memory");
  for (i = 0; i < all.n; i++)
    free (all.t[i].scenario);
  free (all.t);
  free (nights.v);
  return rc;
}

void
fd_findings_free (struct fd_findings *fs)
{
  free (fs->f);
  memset (fs, 0, sizeof *fs);
}
