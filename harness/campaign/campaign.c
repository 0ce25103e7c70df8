/* futuredisk — harness: campaign files (see campaign.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faultmodels/profile.h"
#include "faultmodels/units.h"
#include "append.h"
#include "attach.h"
#include "campaign.h"
#include "hostrun.h"
#include "fsadapter.h"
#include "load-profile.h"
#include "target.h"
#include "trial.h"

/* The keys of a matrix; [campaign] gives defaults for all of them. */
#define MATRIX_KEYS(X)                                                         \
  X (FS, "fs", NULL)                                                           \
  X (PROFILE, "profile", "roadmap-2006")                                       \
  X (SIZE, "size", "1G")                                                       \
  X (FILL, "fill", "30")                                                       \
  X (META, "meta-only", "0")                                                   \
  X (TREE, "tree", "mixed")                                                    \
  X (CRASH, "crash", "no")                                                     \
  X (ESCALATE, "escalate", "no")                                               \
  X (FAULTS, "faults", "")                                                     \
  X (TARGET, "target", "none")                                                 \
  X (SEEDS, "seeds", "1")                                                      \
  X (REPS, "repetitions", "1")                                                 \
  X (TIMEOUT, "timeout", "3600")                                               \
  X (TIME, "time", "virtual")                                                  \
  X (THINK, "think", "real")                                                   \
  X (REPAIR_CUT, "repair-cut", "0")                                            \
  X (CRASH_POINTS, "crash-points", "0")

enum key {
#define KEY_ENUM(id, name, dflt) K_##id,
  MATRIX_KEYS (KEY_ENUM)
#undef KEY_ENUM
  NKEYS
};

static const struct {
  const char *name, *dflt;
} keys[] = {
#define KEY_ROW(id, name, dflt) {name, dflt},
    MATRIX_KEYS (KEY_ROW)
#undef KEY_ROW
};

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
  size_t k;
  struct values *vs;

  for (k = 0; k < NKEYS; k++)
    if (strcmp (key, keys[k].name) == 0)
      break;
  if (k == NKEYS) {
    return fm_fail (err, "%s:%d: unknown key '%.64s'", path, p->line, key);
  }
  vs = &p->cur->k[k];
  if (more && k == K_FAULTS) {
    return fm_fail (err, "%s:%d: one fault spec per 'faults' line", path,
                    p->line);
  }
  if (vs->line && k != K_FAULTS && !more) {
    return fm_fail (err, "%s:%d: '%s' given twice (first on line %d)", path,
                    p->line, key, vs->line);
  }
  if (vs->line == 0)
    vs->line = p->line;
  if (k == K_FAULTS)
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
 * default (kept in d).
 */
static const struct values *
get (const struct fd_campaign *c, const struct matrix *m, enum key k,
     struct values *d)
{
  if (m->k[k].line)
    return &m->k[k];
  if (c->defaults.k[k].line)
    return &c->defaults.k[k];
  d->v = (char **)&keys[k].dflt;
  d->n = keys[k].dflt != NULL;
  d->line = 0;
  return d;
}

/* "FILE:LINE: " for errors about key k of matrix m. */
static void
where (const struct fd_campaign *c, const struct matrix *m, enum key k,
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

/* One matrix on its way to trials: each key's values, and the numbers
 * read from them.
 */
struct expansion {
  struct values d[NKEYS]; /* the defaults of keys set nowhere */
  const struct values *v[NKEYS];
  enum key bad; /* what the failed check was about */
  uint64_t *seeds, reps, meta[MAX_VALUES], cut[MAX_VALUES], points[MAX_VALUES];
  double fill[MAX_VALUES], timeout;
  size_t nseeds;
};

/* Each key but faults and seeds crosses at most MAX_VALUES values. */
static int
check_counts (struct expansion *x, struct fm_err *err)
{
  size_t k;

  for (k = 0; k < NKEYS; k++)
    if (k != K_FAULTS && k != K_SEEDS && x->v[k]->n > MAX_VALUES) {
      x->bad = (enum key)k;
      return fm_fail (err, "'%s': more than %d values", keys[k].name,
                      MAX_VALUES);
    }
  return 0;
}

/* A file system, and every size against it. */
static int
check_fs (struct expansion *x, size_t i, struct fm_err *err)
{
  const struct fd_fs *fs = fd_fs_find (x->v[K_FS]->v[i], err);
  const struct values *sizes = x->v[K_SIZE];
  uint64_t bytes;
  size_t j;

  x->bad = K_FS;
  if (fs == NULL)
    return -1;
  x->bad = K_SIZE; /* the rest is about the sizes */
  for (j = 0; j < sizes->n; j++) {
    if (strcmp (sizes->v[j], "full") == 0)
      continue; /* the profile's capacity: at least a few GB */
    if (fm_parse_size ("size", sizes->v[j], &bytes, err) == -1)
      return -1;
    if (bytes < fs->min_size) {
      return fm_fail (err, "size %s: %s needs at least %llu MiB", sizes->v[j],
                      fs->name, (unsigned long long)(fs->min_size >> 20));
    }
  }
  return 0;
}

static int
check_profile (struct expansion *x, size_t i, struct fm_err *err)
{
  struct fm_profile p;

  return fd_load_profile (x->v[K_PROFILE]->v[i], &p, err);
}

static int
check_fill (struct expansion *x, size_t i, struct fm_err *err)
{
  return fm_parse_double ("fill", x->v[K_FILL]->v[i], 0, 95, &x->fill[i], err);
}

static int
check_meta (struct expansion *x, size_t i, struct fm_err *err)
{
  return fm_parse_uint ("meta-only", x->v[K_META]->v[i], 0, 100000000,
                        &x->meta[i], err);
}

static int
check_tree (struct expansion *x, size_t i, struct fm_err *err)
{
  enum fd_tree t;

  return fd_tree_parse ("tree", x->v[K_TREE]->v[i], &t, err);
}

static int
check_repair_cut (struct expansion *x, size_t i, struct fm_err *err)
{
  return fm_parse_uint ("repair-cut", x->v[K_REPAIR_CUT]->v[i], 0, UINT64_MAX,
                        &x->cut[i], err);
}

/* N, or all (every flush: UINT64_MAX); 0: none. */
static int
check_crash_points (struct expansion *x, size_t i, struct fm_err *err)
{
  const char *v = x->v[K_CRASH_POINTS]->v[i];

  if (strcmp (v, "all") == 0) {
    x->points[i] = UINT64_MAX;
    return 0;
  }
  return fm_parse_uint ("crash-points", v, 0, 1000000, &x->points[i], err);
}

/* s is one of the words a and b (of key). */
static int
one_of (const char *key, const char *s, const char *a, const char *b,
        struct fm_err *err)
{
  if (strcmp (s, a) && strcmp (s, b)) {
    return fm_fail (err, "%s '%.32s': %s or %s", key, s, a, b);
  }
  return 0;
}

static int
check_crash (struct expansion *x, size_t i, struct fm_err *err)
{
  return one_of ("crash", x->v[K_CRASH]->v[i], "no", "yes", err);
}

static int
check_escalate (struct expansion *x, size_t i, struct fm_err *err)
{
  return one_of ("escalate", x->v[K_ESCALATE]->v[i], "no", "yes", err);
}

static int
check_faults (struct expansion *x, size_t i, struct fm_err *err)
{
  const char *s = x->v[K_FAULTS]->v[i];

  return s[0] ? fd_fault_spec_check (s, err) : 0;
}

/* A target, of a type that some file system of the matrix has. */
static int
check_target (struct expansion *x, size_t i, struct fm_err *err)
{
  const char *t = x->v[K_TARGET]->v[i];
  bool known = false;
  size_t j;

  if (strcmp (t, "none") == 0)
    return 0;
  if (fd_target_check (t, err) == -1)
    return -1;
  for (j = 0; j < x->v[K_FS]->n; j++)
    known |= fs_has_type (fd_fs_find (x->v[K_FS]->v[j], err), t);
  if (!known) {
    return fm_fail (
        err, "target '%.64s': no file system of the matrix has that type", t);
  }
  return 0;
}

/* seeds: "1 2 7" or ranges "1-10"; into a fresh x->seeds. */
static int
check_seeds (struct expansion *x, struct fm_err *err)
{
  const struct values *vs = x->v[K_SEEDS];
  size_t i;

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

/* The value of a key that takes one; NULL with err `what` if not one. */
static const char *
one_value (const struct values *vs, const char *what, struct fm_err *err)
{
  if (vs->n != 1) {
    fm_fail (err, "%s", what);
    return NULL;
  }
  return vs->v[0];
}

static int
check_reps (struct expansion *x, struct fm_err *err)
{
  const char *s = one_value (x->v[K_REPS], "repetitions: one number", err);

  return s ? fm_parse_uint ("repetitions", s, 1, 1000, &x->reps, err) : -1;
}

static int
check_timeout (struct expansion *x, struct fm_err *err)
{
  const char *s =
      one_value (x->v[K_TIMEOUT], "timeout: one number of seconds", err);

  return s ? fm_parse_double ("timeout", s, 1, 1e7, &x->timeout, err) : -1;
}

static int
check_time (struct expansion *x, size_t i, struct fm_err *err)
{
  return fd_trial_parse_time (x->v[K_TIME]->v[i], err);
}

static int
check_think (struct expansion *x, size_t i, struct fm_err *err)
{
  return fd_hostrun_check ("think", x->v[K_THINK]->v[i], "host", NULL, err);
}

/* The checks in the order they run (the first failure is reported):
 * each value of a key on its own, or the key as a whole.
 */
static const struct {
  enum key k;
  int (*each) (struct expansion *x, size_t i, struct fm_err *err);
  int (*all) (struct expansion *x, struct fm_err *err);
} checks[] = {
    {K_FS, check_fs, NULL},
    {K_PROFILE, check_profile, NULL},
    {K_FILL, check_fill, NULL},
    {K_META, check_meta, NULL},
    {K_TREE, check_tree, NULL},
    {K_CRASH, check_crash, NULL},
    {K_ESCALATE, check_escalate, NULL},
    {K_FAULTS, check_faults, NULL},
    {K_TARGET, check_target, NULL},
    {K_SEEDS, NULL, check_seeds},
    {K_REPS, NULL, check_reps},
    {K_TIMEOUT, NULL, check_timeout},
    {K_TIME, check_time, NULL},
    {K_THINK, check_think, NULL},
    {K_REPAIR_CUT, check_repair_cut, NULL},
    {K_CRASH_POINTS, check_crash_points, NULL},
};

/* Check every value; -1 with x->bad the key at fault. */
static int
check_values (struct expansion *x, struct fm_err *err)
{
  size_t j, i;

  if (check_counts (x, err) == -1)
    return -1;
  for (j = 0; j < sizeof checks / sizeof *checks; j++) {
    x->bad = checks[j].k;
    if (checks[j].all && checks[j].all (x, err) == -1)
      return -1;
    for (i = 0; checks[j].each && i < x->v[checks[j].k]->n; i++)
      if (checks[j].each (x, i, err) == -1)
        return -1;
  }
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
 * repetition, or none when the file system lacks the target's type.
 */
static int
add_trials (struct fd_campaign *c, const struct matrix *m,
            const struct expansion *x, const size_t *ix, struct fm_err *err)
{
  const struct values *const *v = x->v;
  const struct fd_fs *fs = fd_fs_find (v[K_FS]->v[ix[K_FS]], err);
  const char *target = v[K_TARGET]->v[ix[K_TARGET]];
  size_t s;
  uint64_t r;

  if (strcmp (target, "none") == 0)
    target = "";
  if (*target && !fs_has_type (fs, target))
    return 0;
  if (strcmp (v[K_TREE]->v[ix[K_TREE]], "mixed") != 0 &&
      (strcmp (v[K_CRASH]->v[ix[K_CRASH]], "yes") == 0 ||
       x->points[ix[K_CRASH_POINTS]] > 0))
    return fm_fail (err,
                    "%s: [matrix %s]: tree '%s' has no crash workload (crash, "
                    "crash-points): only the mixed tree has one",
                    c->path, m->name, v[K_TREE]->v[ix[K_TREE]]);
  for (s = 0; s < x->nseeds; s++)
    for (r = 0; r < x->reps; r++) {
      struct fd_campaign_trial *t = new_trial (c, err);
      if (t == NULL)
        return -1;
      *t = (struct fd_campaign_trial){
          .matrix = m->name,
          .fs = fs->name,
          .profile = v[K_PROFILE]->v[ix[K_PROFILE]],
          .size = v[K_SIZE]->v[ix[K_SIZE]],
          .fill = x->fill[ix[K_FILL]],
          .meta_only = x->meta[ix[K_META]],
          .tree = v[K_TREE]->v[ix[K_TREE]],
          /* crash points are states of a crash */
          .crash = strcmp (v[K_CRASH]->v[ix[K_CRASH]], "yes") == 0 ||
                   x->points[ix[K_CRASH_POINTS]] > 0,
          .escalate = strcmp (v[K_ESCALATE]->v[ix[K_ESCALATE]], "yes") == 0,
          .faults = v[K_FAULTS]->v[ix[K_FAULTS]],
          .target = target,
          .time = v[K_TIME]->v[ix[K_TIME]],
          .think = v[K_THINK]->v[ix[K_THINK]],
          .repair_cut = x->cut[ix[K_REPAIR_CUT]],
          .crash_points = x->points[ix[K_CRASH_POINTS]],
          .seed = x->seeds[s],
          .rep = r,
          .timeout = x->timeout,
      };
    }
  return 0;
}

/* The next combination, like an odometer: the last key varies fastest;
 * seeds, repetitions and the timeout are not crossed here.  False after
 * the last.
 */
static bool
next_combination (const struct expansion *x, size_t *ix)
{
  size_t k;

  for (k = NKEYS; k-- > 0;) {
    if (k == K_SEEDS || k == K_REPS || k == K_TIMEOUT)
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
  struct expansion x = {0};
  size_t ix[NKEYS] = {0}, k;
  int rc = 0;

  for (k = 0; k < NKEYS; k++)
    x.v[k] = get (c, m, (enum key)k, &x.d[k]);
  err->msg[0] = '\0';
  if (x.v[K_FS]->n == 0) {
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
