/* futuredisk — harness: campaign files (see campaign.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faultmodels/profile.h"
#include "faultmodels/units.h"
#include "append.h"
#include "campaign.h"
#include "fsadapter.h"
#include "target.h"
#include "spec.h"
#include "trial.h"

/* The keys of a matrix: the trial's keys (spec.h), then the campaign's
 * own; [campaign] gives defaults for all of them.
 */
enum {
  K_SEEDS = FD_NKEYS, /* "1 2 7", "1-10": a trial each (run's --seed) */
  K_REPS,             /* repetitions: each trial again (run's --rep) */
  NKEYS
};

static const char *
key_name (size_t k)
{
  return k == K_SEEDS ? "seeds" : k == K_REPS ? "repetitions" : fd_key_name (k);
}

/* A key set nowhere: the trial key's default or its word for none. */
static const char *
key_default (size_t k)
{
  return k == K_SEEDS ? "1" : k == K_REPS ? "1" : fd_key_default (k);
}

static size_t
key_find (const char *name)
{
  size_t k;

  for (k = 0; k < NKEYS; k++)
    if (strcmp (name, key_name (k)) == 0)
      break;
  return k;
}

#define MAX_TRIALS 1000000
#define MAX_VALUES 64 /* of a crossed key */

/* A key's values: words, except `faults`, one spec per line. */
struct values {
  char **v;
  size_t n;
  int line; /* where it was set (0: not set) */
};

struct matrix {
  char name[64];
  int line;
  struct values k[NKEYS];
};

struct fd_campaign {
  char name[64];
  const char *path;
  struct matrix defaults; /* [campaign] */
  struct matrix *m;
  size_t nm;
  struct fd_campaign_trial *t;
  size_t nt, cap;
};

static int
push (struct values *vs, const char *s, size_t len)
{
  char *copy = strndup (s, len), **slot;

  if (copy == NULL ||
      (slot = fd_append (&vs->v, &vs->n, sizeof *slot)) == NULL) {
    free (copy);
    return -1;
  }
  *slot = copy;
  return 0;
}

static void
values_free (struct values *vs)
{
  size_t i;

  for (i = 0; i < vs->n; i++)
    free (vs->v[i]);
  free (vs->v);
  memset (vs, 0, sizeof *vs);
}

/* Where parse is in the file. */
struct parser {
  struct fd_campaign *c;
  struct matrix *cur; /* the section being read */
  bool in_campaign;   /* ...and it is [campaign] */
  char last_key[32];  /* the key an indented line continues */
  int line;
};

/* key = value into the current section: words split on white space;
 * `faults` lines add one spec each.  more: a continuation line.
 */
static int
set_key (struct parser *p, const char *key, char *value, bool more,
         struct fm_err *err)
{
  const char *path = p->c->path;
  size_t k = key_find (key);
  struct values *vs;

  if (k == NKEYS) {
    return fm_fail (err, "%s:%d: unknown key '%.64s'", path, p->line, key);
  }
  vs = &p->cur->k[k];
  if (more && k == FD_KEY_FAULTS) {
    return fm_fail (err, "%s:%d: one fault spec per 'faults' line", path,
                    p->line);
  }
  if (vs->line && k != FD_KEY_FAULTS && !more) {
    return fm_fail (err, "%s:%d: '%s' given twice (first on line %d)", path,
                    p->line, key, vs->line);
  }
  if (vs->line == 0)
    vs->line = p->line;
  if (k == FD_KEY_FAULTS)
    return push (vs, value, strlen (value)) == -1
               ? fm_fail (err, "out of memory")
               : 0;
  while (*value) {
    size_t len = strcspn (value, " \t");
    if (push (vs, value, len) == -1)
      return fm_fail (err, "out of memory");
    value += len;
    while (*value == ' ' || *value == '\t')
      value++;
  }
  if (vs->n == 0) {
    return fm_fail (err, "%s:%d: '%s' has no value", path, p->line, key);
  }
  return 0;
}

/* "[campaign]" or "[matrix NAME]" starts a section. */
static int
parse_section (struct parser *p, char *s, struct fm_err *err)
{
  struct fd_campaign *c = p->c;
  char *end = strchr (s, ']'), *rest = end ? fm_trim (end + 1) : NULL;

  if (end == NULL || (*rest && *rest != '#')) {
    return fm_fail (err, "%s:%d: bad section '%.64s'", c->path, p->line, s);
  }
  *end = '\0';
  s = fm_trim (s + 1);
  if (strcmp (s, "campaign") == 0) {
    if (p->line != c->defaults.line && c->defaults.line) {
      return fm_fail (err, "%s:%d: a second [campaign] section", c->path,
                      p->line);
    }
    if (c->nm) {
      return fm_fail (err, "%s:%d: [campaign] must come before the matrices",
                      c->path, p->line);
    }
    c->defaults.line = p->line;
    p->cur = &c->defaults;
    p->in_campaign = true;
    return 0;
  }
  if (strncmp (s, "matrix", 6) == 0 && isspace ((unsigned char)s[6]) &&
      *fm_trim (s + 6)) {
    if ((p->cur = fd_append (&c->m, &c->nm, sizeof *c->m)) == NULL) {
      return fm_fail (err, "out of memory");
    }
    snprintf (p->cur->name, sizeof p->cur->name, "%s", fm_trim (s + 6));
    p->cur->line = p->line;
    p->in_campaign = false;
    return 0;
  }
  return fm_fail (err,
                  "%s:%d: unknown section '[%.64s]' (campaign, matrix NAME)",
                  c->path, p->line, s);
}

/* The campaign's name names its results: a safe file name. */
static int
set_name (struct parser *p, const char *value, struct fm_err *err)
{
  struct fd_campaign *c = p->c;

  if (!*value || strlen (value) >= sizeof c->name ||
      strspn (value,
              "abcdefghijklmnopqrstuvwxyz"
              "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != strlen (value)) {
    return fm_fail (err, "%s:%d: name '%.64s': letters, digits, '-', '_', '.'",
                    c->path, p->line, value);
  }
  snprintf (c->name, sizeof c->name, "%s", value);
  return 0;
}

/* KEY = VALUE: name and description only in [campaign], matrix keys in
 * any section.
 */
static int
parse_key_value (struct parser *p, char *s, struct fm_err *err)
{
  char *eq = strchr (s, '='), *key, *value;
  const char *why;

  if (eq == NULL || p->cur == NULL) {
    return fm_fail (err, "%s:%d: %s", p->c->path, p->line,
                    p->cur ? "expected KEY = VALUE"
                           : "expected [campaign] first");
  }
  *eq = '\0';
  key = fm_trim (s);
  /* Comments and quotes as in profile files: one rule, one function. */
  if ((value = fm_value (fm_trim (eq + 1), &why)) == NULL)
    return fm_fail (err, "%s:%d: '%.64s': %s", p->c->path, p->line, key, why);
  snprintf (p->last_key, sizeof p->last_key, "%s", key);
  if (p->in_campaign && strcmp (key, "name") == 0)
    return set_name (p, value, err);
  if (p->in_campaign && strcmp (key, "description") == 0)
    return 0; /* for the reader of the file */
  return set_key (p, key, value, false, err);
}

static int
parse_line (struct parser *p, char *buf, struct fm_err *err)
{
  char *s = fm_trim (buf);
  const char *why;

  if (*s == '\0' || *s == '#' || *s == ';')
    return 0;
  if ((buf[0] == ' ' || buf[0] == '\t') && p->last_key[0]) {
    /* An indented line continues the value above. */
    if (strcmp (p->last_key, "description") == 0)
      return 0;
    if ((s = fm_value (s, &why)) == NULL)
      return fm_fail (err, "%s:%d: '%s': %s", p->c->path, p->line, p->last_key,
                      why);
    return set_key (p, p->last_key, s, true, err);
  }
  p->last_key[0] = '\0';
  if (*s == '[')
    return parse_section (p, s, err);
  return parse_key_value (p, s, err);
}

static int
parse (struct fd_campaign *c, FILE *fp, struct fm_err *err)
{
  struct parser p = {.c = c};
  char buf[4096];

  while (fgets (buf, sizeof buf, fp)) {
    p.line++;
    if (strchr (buf, '\n') == NULL && !feof (fp)) {
      return fm_fail (err, "%s:%d: line too long", c->path, p.line);
    }
    if (parse_line (&p, buf, err) == -1)
      return -1;
  }
  if (c->defaults.line == 0 || c->name[0] == '\0') {
    return fm_fail (err, "%s: %s", c->path,
                    c->defaults.line ? "[campaign] has no name"
                                     : "no [campaign] section");
  }
  if (c->nm == 0) {
    return fm_fail (err, "%s: no [matrix NAME] section", c->path);
  }
  return 0;
}

/* The values of key k in matrix m: its own, the campaign's, or the
 * default (kept in d, pointing at *dflt).
 */
static const struct values *
get (const struct fd_campaign *c, const struct matrix *m, size_t k,
     struct values *d, const char **dflt)
{
  if (m->k[k].line)
    return &m->k[k];
  if (c->defaults.k[k].line)
    return &c->defaults.k[k];
  *dflt = key_default (k);
  d->v = (char **)dflt;
  d->n = *dflt != NULL;
  d->line = 0;
  return d;
}

/* "FILE:LINE: " for errors about key k of matrix m. */
static void
where (const struct fd_campaign *c, const struct matrix *m, size_t k,
       struct fm_err *err)
{
  char inner[sizeof err->msg];
  int line = m->k[k].line ? m->k[k].line : c->defaults.k[k].line;

  snprintf (inner, sizeof inner, "%s", err->msg);
  fm_fail (err, "%s:%d: [matrix %s] %s", c->path, line ? line : m->line,
           m->name, inner);
}

/* Does fs know the type of each part of the target? */
static bool
fs_has_type (const struct fd_fs *fs, const char *target)
{
  char bad[64];

  return fd_target_types_known (target, fs->target_types, bad, sizeof bad);
}

/* One matrix on its way to trials: each key's values, the seeds read
 * from them, and a trial's inputs to check them in.
 */
struct expansion {
  struct values d[NKEYS]; /* the defaults of keys set nowhere */
  const char *dflt[NKEYS];
  const struct values *v[NKEYS];
  size_t bad; /* what the failed check was about */
  uint64_t *seeds, reps;
  size_t nseeds;
  struct trial_spec spec;
};

/* Each key but faults and seeds crosses at most MAX_VALUES values; a
 * single key (timeout) takes one.
 */
static int
check_counts (struct expansion *x, struct fm_err *err)
{
  size_t k;

  for (k = 0; k < NKEYS; k++) {
    x->bad = k;
    if (k < FD_NKEYS && fd_key_single (k) && x->v[k]->n != 1)
      return fm_fail (err, "%s: one value", key_name (k));
    if (k != FD_KEY_FAULTS && k != K_SEEDS && x->v[k]->n > MAX_VALUES)
      return fm_fail (err, "'%s': more than %d values", key_name (k),
                      MAX_VALUES);
  }
  return 0;
}

/* A target, of a type that some file system of the matrix has. */
static int
check_target_known (struct expansion *x, const char *t, struct fm_err *err)
{
  bool known = false;
  size_t j;

  for (j = 0; j < x->v[FD_KEY_FS]->n; j++)
    known |= fs_has_type (fd_fs_find (x->v[FD_KEY_FS]->v[j], err), t);
  if (!known) {
    return fm_fail (
        err, "target '%.64s': no file system of the matrix has that type", t);
  }
  return 0;
}

/* Each value of each trial key on its own, by the key's setter. */
static int
check_trial_keys (struct expansion *x, struct fm_err *err)
{
  size_t k, i;

  for (k = 0; k < FD_NKEYS; k++) {
    x->bad = k;
    for (i = 0; i < x->v[k]->n; i++) {
      const char *v = x->v[k]->v[i];
      if (fd_key_none (k, v))
        continue;
      if (fd_spec_set (&x->spec, k, v, false, err) == -1 ||
          (k == FD_KEY_TARGET && check_target_known (x, v, err) == -1))
        return -1;
    }
  }
  return 0;
}

/* seeds: "1 2 7" or ranges "1-10"; into a fresh x->seeds. */
static int
check_seeds (struct expansion *x, struct fm_err *err)
{
  const struct values *vs = x->v[K_SEEDS];
  size_t i;

  x->bad = K_SEEDS;
  x->seeds = NULL, x->nseeds = 0;
  for (i = 0; i < vs->n; i++) {
    char a[32], b[32];
    uint64_t lo, hi, s;
    if (sscanf (vs->v[i], "%31[0-9]-%31[0-9]", a, b) == 2) {
      if (fm_parse_uint ("seeds", a, 0, UINT64_MAX, &lo, err) == -1 ||
          fm_parse_uint ("seeds", b, lo, lo + 99999, &hi, err) == -1)
        return -1;
    } else if (fm_parse_uint ("seeds", vs->v[i], 0, UINT64_MAX, &lo, err) == -1)
      return -1;
    else
      hi = lo;
    for (s = lo; s <= hi; s++) {
      uint64_t *slot;
      if (x->nseeds >= MAX_TRIALS ||
          (slot = fd_append (&x->seeds, &x->nseeds, sizeof *slot)) == NULL) {
        return fm_fail (err, "seeds: too many");
      }
      *slot = s;
      if (s == UINT64_MAX)
        break;
    }
  }
  return 0;
}

static int
check_reps (struct expansion *x, struct fm_err *err)
{
  const struct values *vs = x->v[K_REPS];

  x->bad = K_REPS;
  if (vs->n != 1)
    return fm_fail (err, "repetitions: one number");
  return fm_parse_uint ("repetitions", vs->v[0], 1, 1000, &x->reps, err);
}

/* Check every value; -1 with x->bad the key at fault. */
static int
check_values (struct expansion *x, struct fm_err *err)
{
  if (check_counts (x, err) == -1 || check_trial_keys (x, err) == -1 ||
      check_seeds (x, err) == -1 || check_reps (x, err) == -1)
    return -1;
  return 0;
}

/* Room for one more trial in c. */
static struct fd_campaign_trial *
new_trial (struct fd_campaign *c, struct fm_err *err)
{
  if (c->nt == c->cap) {
    struct fd_campaign_trial *nt;
    if (c->nt >= MAX_TRIALS) {
      fm_fail (err, "%s: more than %d trials", c->path, MAX_TRIALS);
      return NULL;
    }
    c->cap = c->cap ? 2 * c->cap : 64;
    if ((nt = realloc (c->t, c->cap * sizeof *nt)) == NULL) {
      fm_fail (err, "out of memory");
      return NULL;
    }
    c->t = nt;
  }
  return &c->t[c->nt++];
}

/* The trials of the combination ix of m's values: every seed times every
 * repetition, or none when the file system lacks the target's type.  The
 * rules between keys are run's (fd_spec_check).
 */
static int
add_trials (struct fd_campaign *c, const struct matrix *m, struct expansion *x,
            const size_t *ix, struct fm_err *err)
{
  const char *value[FD_NKEYS];
  enum fd_key bad;
  size_t k, s;
  uint64_t r;

  for (k = 0; k < FD_NKEYS; k++) {
    value[k] = x->v[k]->v[ix[k]];
    if (fd_key_none (k, value[k]))
      value[k] = NULL;
  }
  memset (&x->spec, 0, sizeof x->spec);
  if (fd_spec_from (&x->spec, value, err) == -1)
    return -1; /* each value passed check_values */
  if (value[FD_KEY_TARGET] && !fs_has_type (x->spec.fs, value[FD_KEY_TARGET]))
    return 0;
  if (fd_spec_check (&x->spec, false, &bad, err) == -1) {
    where (c, m, bad, err);
    return -1;
  }
  for (s = 0; s < x->nseeds; s++)
    for (r = 0; r < x->reps; r++) {
      struct fd_campaign_trial *t = new_trial (c, err);
      if (t == NULL)
        return -1;
      t->matrix = m->name;
      memcpy (t->value, value, sizeof value);
      t->seed = x->seeds[s];
      t->rep = r;
    }
  return 0;
}

/* The next combination, like an odometer: the last key varies fastest;
 * seeds, repetitions and single keys are not crossed here.  False after
 * the last.
 */
static bool
next_combination (const struct expansion *x, size_t *ix)
{
  size_t k;

  for (k = FD_NKEYS; k-- > 0;) {
    if (fd_key_single (k))
      continue;
    if (++ix[k] < x->v[k]->n)
      return true;
    ix[k] = 0;
  }
  return false;
}

/* Check every value of m, then append its cross product to c->t, seeds
 * and repetitions innermost.
 */
static int
expand (struct fd_campaign *c, struct matrix *m, struct fm_err *err)
{
  struct expansion x;
  size_t ix[NKEYS] = {0}, k;
  int rc = 0;

  memset (&x, 0, sizeof x);
  for (k = 0; k < NKEYS; k++)
    x.v[k] = get (c, m, k, &x.d[k], &x.dflt[k]);
  err->msg[0] = '\0';
  if (x.v[FD_KEY_FS]->n == 0) {
    return fm_fail (err, "%s:%d: [matrix %s] has no 'fs'", c->path, m->line,
                    m->name);
  }
  if (check_values (&x, err) == -1) {
    where (c, m, x.bad, err);
    rc = -1;
  }
  while (rc == 0) {
    rc = add_trials (c, m, &x, ix, err);
    if (!next_combination (&x, ix))
      break;
  }
  free (x.seeds);
  return rc;
}

struct fd_campaign *
fd_campaign_load (const char *path, struct fm_err *err)
{
  struct fd_campaign *c = calloc (1, sizeof *c);
  FILE *fp;
  size_t i;

  if (c == NULL) {
    fm_fail (err, "out of memory");
    return NULL;
  }
  c->path = path;
  if ((fp = fopen (path, "r")) == NULL) {
    fm_fail (err, "%s: cannot open", path);
    free (c);
    return NULL;
  }
  err->msg[0] = '\0';
  i = parse (c, fp, err) == 0;
  fclose (fp);
  for (size_t j = 0; i && j < c->nm; j++)
    i = expand (c, &c->m[j], err) == 0;
  if (!i) {
    fd_campaign_free (c);
    return NULL;
  }
  return c;
}

void
fd_campaign_free (struct fd_campaign *c)
{
  size_t i, k;

  if (c == NULL)
    return;
  for (k = 0; k < NKEYS; k++)
    values_free (&c->defaults.k[k]);
  for (i = 0; i < c->nm; i++)
    for (k = 0; k < NKEYS; k++)
      values_free (&c->m[i].k[k]);
  free (c->m);
  free (c->t);
  free (c);
}

const char *
fd_campaign_name (const struct fd_campaign *c)
{
  return c->name;
}

size_t
fd_campaign_ntrials (const struct fd_campaign *c)
{
  return c->nt;
}

const struct fd_campaign_trial *
fd_campaign_trial (const struct fd_campaign *c, size_t i)
{
  return i < c->nt ? &c->t[i] : NULL;
}

int
fd_campaign_spec (const struct fd_campaign_trial *t, struct trial_spec *s,
                  struct fm_err *err)
{
  memset (s, 0, sizeof *s);
  if (fd_spec_from (s, t->value, err) == -1)
    return -1;
  s->seed = t->seed;
  s->rep = t->rep;
  return 0;
}

int
fd_campaign_parse_shard (const char *s, uint64_t *i, uint64_t *n,
                         struct fm_err *err)
{
  char a[32], b[32], extra;

  if (sscanf (s, "%31[0-9]/%31[0-9]%c", a, b, &extra) != 2) {
    return fm_fail (err, "--shard '%.64s': I/N, 0 <= I < N", s);
  }
  if (fm_parse_uint ("--shard count", b, 1, 100000, n, err) == -1 ||
      fm_parse_uint ("--shard index", a, 0, *n - 1, i, err) == -1)
    return -1;
  return 0;
}
