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
#include "fsadapter.h"
#include "load-profile.h"
#include "trial.h"

/* The keys of a matrix; [campaign] gives defaults for all of them. */
#define MATRIX_KEYS(X)                                                         \
  X (FS, "fs", NULL)                                                           \
  X (PROFILE, "profile", "roadmap-2006")                                       \
  X (SIZE, "size", "1G")                                                       \
  X (FILL, "fill", "30")                                                       \
  X (META, "meta-only", "0")                                                   \
  X (CRASH, "crash", "no")                                                     \
  X (FAULTS, "faults", "")                                                     \
  X (TARGET, "target", "none")                                                 \
  X (SEEDS, "seeds", "1")                                                      \
  X (REPS, "repetitions", "1")                                                 \
  X (TIMEOUT, "timeout", "3600")                                               \
  X (TIME, "time", "virtual")                                                  \
  X (THINK, "think", "real")

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

/* key = value into m: words split on white space; `faults` lines add one
 * spec each.
 */
static int
set_key (struct fd_campaign *c, struct matrix *m, int line, const char *key,
         char *value, bool more, struct fm_err *err)
{
  size_t k;
  struct values *vs;

  for (k = 0; k < NKEYS; k++)
    if (strcmp (key, keys[k].name) == 0)
      break;
  if (k == NKEYS) {
    return fm_fail (err, "%s:%d: unknown key '%.64s'", c->path, line, key);
  }
  vs = &m->k[k];
  if (more && k == K_FAULTS) {
    return fm_fail (err, "%s:%d: one fault spec per 'faults' line", c->path,
                    line);
  }
  if (vs->line && k != K_FAULTS && !more) {
    return fm_fail (err, "%s:%d: '%s' given twice (first on line %d)", c->path,
                    line, key, vs->line);
  }
  if (vs->line == 0)
    vs->line = line;
  if (k == K_FAULTS)
    return push (vs, value, strlen (value));
  while (*value) {
    size_t len = strcspn (value, " \t");
    if (push (vs, value, len) == -1)
      return -1;
    value += len;
    while (*value == ' ' || *value == '\t')
      value++;
  }
  if (vs->n == 0) {
    return fm_fail (err, "%s:%d: '%s' has no value", c->path, line, key);
  }
  return 0;
}

static int
parse (struct fd_campaign *c, FILE *fp, struct fm_err *err)
{
  char buf[4096];
  struct matrix *cur = NULL;
  char last_key[32] = ""; /* the key an indented line continues */
  int line = 0;
  bool in_campaign = false;

  while (fgets (buf, sizeof buf, fp)) {
    char *s, *eq;

    line++;
    if (strchr (buf, '\n') == NULL && !feof (fp)) {
      return fm_fail (err, "%s:%d: line too long", c->path, line);
    }
    s = fm_trim (buf);
    if (*s == '\0' || *s == '#' || *s == ';')
      continue;
    if ((buf[0] == ' ' || buf[0] == '\t') && last_key[0]) {
      /* An indented line continues the value above. */
      if (strcmp (last_key, "description") == 0)
        continue;
      if (set_key (c, cur, line, last_key, s, true, err) == -1) {
        if (!err->msg[0])
          fm_fail (err, "out of memory");
        return -1;
      }
      continue;
    }
    last_key[0] = '\0';
    if (*s == '[') {
      char *end = strchr (s, ']');
      if (end == NULL || fm_trim (end + 1)[0]) {
        return fm_fail (err, "%s:%d: bad section '%.64s'", c->path, line, s);
      }
      *end = '\0';
      s = fm_trim (s + 1);
      if (strcmp (s, "campaign") == 0) {
        if (line != c->defaults.line && c->defaults.line) {
          return fm_fail (err, "%s:%d: a second [campaign] section", c->path,
                          line);
        }
        if (c->nm) {
          return fm_fail (err,
                          "%s:%d: [campaign] must come before the matrices",
                          c->path, line);
        }
        c->defaults.line = line;
        cur = &c->defaults;
        in_campaign = true;
      } else if (strncmp (s, "matrix", 6) == 0 &&
                 isspace ((unsigned char)s[6]) && *fm_trim (s + 6)) {
        if ((cur = fd_append (&c->m, &c->nm, sizeof *c->m)) == NULL) {
          return fm_fail (err, "out of memory");
        }
        snprintf (cur->name, sizeof cur->name, "%s", fm_trim (s + 6));
        cur->line = line;
        in_campaign = false;
      } else {
        return fm_fail (
            err, "%s:%d: unknown section '[%.64s]' (campaign, matrix NAME)",
            c->path, line, s);
      }
      continue;
    }
    if ((eq = strchr (s, '=')) == NULL || cur == NULL) {
      return fm_fail (err, "%s:%d: %s", c->path, line,
                      cur ? "expected KEY = VALUE"
                          : "expected [campaign] first");
    }
    *eq = '\0';
    {
      char *key = fm_trim (s), *value = fm_trim (eq + 1);
      snprintf (last_key, sizeof last_key, "%s", key);
      if (in_campaign && strcmp (key, "name") == 0) {
        if (!*value || strlen (value) >= sizeof c->name ||
            strspn (value, "abcdefghijklmnopqrstuvwxyz"
                           "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") !=
                strlen (value)) {
          return fm_fail (err,
                          "%s:%d: name '%.64s': letters, digits, '-', '_', '.'",
                          c->path, line, value);
        }
        snprintf (c->name, sizeof c->name, "%s", value);
      } else if (in_campaign && strcmp (key, "description") == 0)
        ; /* for the reader of the file */
      else if (set_key (c, cur, line, key, value, false, err) == -1) {
        if (!err->msg[0])
          fm_fail (err, "out of memory");
        return -1;
      }
    }
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

/* Does fs know the target's type? */
static bool
fs_has_type (const struct fd_fs *fs, const char *target)
{
  char want[40], known[320];

  snprintf (want, sizeof want, " %.*s ", (int)strcspn (target, ":"), target);
  snprintf (known, sizeof known, " %s ", fs->target_types);
  return strstr (known, want) != NULL;
}

static int
check_target (const char *t, struct fm_err *err)
{
  char type[32] = "", count[32] = "1", kind[32] = "ure", extra[8] = "";
  uint64_t n;

  if (sscanf (t, "%31[^:]:%31[^:]:%31[^:]:%7s", type, count, kind, extra) ==
          4 ||
      !type[0]) {
    return fm_fail (err, "target '%.64s': TYPE[:N[:KIND]]", t);
  }
  if (fm_parse_uint ("target count", count, 1, 1000, &n, err) == -1)
    return -1;
  if (strcmp (kind, "ure") && strcmp (kind, "lse") && strcmp (kind, "rot")) {
    return fm_fail (err, "target '%.64s': kind '%s' is not ure, lse or rot", t,
                    kind);
  }
  return 0;
}

/* seeds: "1 2 7" or ranges "1-10"; into a fresh array. */
static int
parse_seeds (const struct values *vs, uint64_t **out, size_t *n,
             struct fm_err *err)
{
  size_t i;

  *out = NULL, *n = 0;
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
      if (*n >= MAX_TRIALS ||
          (slot = fd_append (out, n, sizeof *slot)) == NULL) {
        return fm_fail (err, "seeds: too many");
      }
      *slot = s;
      if (s == UINT64_MAX)
        break;
    }
  }
  return 0;
}

/* Check every value of m, then append its cross product to c->t. */
static int
expand (struct fd_campaign *c, struct matrix *m, struct fm_err *err)
{
  struct values d[NKEYS];
  const struct values *v[NKEYS];
  uint64_t *seeds = NULL, reps, meta[64];
  double fill[64], timeout;
  size_t nseeds, i, k;
  size_t ix[NKEYS] = {0};

  for (k = 0; k < NKEYS; k++)
    v[k] = get (c, m, (enum key)k, &d[k]);
  err->msg[0] = '\0';
  if (v[K_FS]->n == 0) {
    return fm_fail (err, "%s:%d: [matrix %s] has no 'fs'", c->path, m->line,
                    m->name);
  }
  for (k = 0; k < NKEYS; k++)
    if (k != K_FAULTS && k != K_SEEDS && v[k]->n > 64) {
      fm_fail (err, "'%s': more than 64 values", keys[k].name);
      goto bad;
    }
  for (i = 0; i < v[K_FS]->n; i++) {
    const struct fd_fs *fs = fd_fs_find (v[K_FS]->v[i], err);
    uint64_t bytes;
    size_t j;
    if (fs == NULL) {
      k = K_FS;
      goto bad;
    }
    for (j = 0; j < v[K_SIZE]->n; j++) {
      if (strcmp (v[K_SIZE]->v[j], "full") == 0)
        continue; /* the profile's capacity: at least a few GB */
      if (fm_parse_size ("size", v[K_SIZE]->v[j], &bytes, err) == -1) {
        k = K_SIZE;
        goto bad;
      }
      if (bytes < fs->min_size) {
        fm_fail (err, "size %s: %s needs at least %llu MiB", v[K_SIZE]->v[j],
                 fs->name, (unsigned long long)(fs->min_size >> 20));
        k = K_SIZE;
        goto bad;
      }
    }
  }
  for (i = 0; i < v[K_PROFILE]->n; i++) {
    struct fm_profile p;
    if (fd_load_profile (v[K_PROFILE]->v[i], &p, err) == -1) {
      k = K_PROFILE;
      goto bad;
    }
  }
  for (i = 0; i < v[K_FILL]->n; i++)
    if (fm_parse_double ("fill", v[K_FILL]->v[i], 0, 95, &fill[i], err) == -1) {
      k = K_FILL;
      goto bad;
    }
  for (i = 0; i < v[K_META]->n; i++)
    if (fm_parse_uint ("meta-only", v[K_META]->v[i], 0, 100000000, &meta[i],
                       err) == -1) {
      k = K_META;
      goto bad;
    }
  for (i = 0; i < v[K_CRASH]->n; i++)
    if (strcmp (v[K_CRASH]->v[i], "no") && strcmp (v[K_CRASH]->v[i], "yes")) {
      fm_fail (err, "crash '%.32s': no or yes", v[K_CRASH]->v[i]);
      k = K_CRASH;
      goto bad;
    }
  for (i = 0; i < v[K_FAULTS]->n; i++)
    if (v[K_FAULTS]->v[i][0] &&
        fd_fault_spec_check (v[K_FAULTS]->v[i], err) == -1) {
      k = K_FAULTS;
      goto bad;
    }
  for (i = 0; i < v[K_TARGET]->n; i++) {
    const char *t = v[K_TARGET]->v[i];
    size_t j;
    bool known = false;
    if (strcmp (t, "none") == 0)
      continue;
    if (check_target (t, err) == -1) {
      k = K_TARGET;
      goto bad;
    }
    for (j = 0; j < v[K_FS]->n; j++)
      known |= fs_has_type (fd_fs_find (v[K_FS]->v[j], err), t);
    if (!known) {
      fm_fail (err,
               "target '%.64s': no file system of the matrix has that type", t);
      k = K_TARGET;
      goto bad;
    }
  }
  if (parse_seeds (v[K_SEEDS], &seeds, &nseeds, err) == -1) {
    k = K_SEEDS;
    goto bad;
  }
  if (v[K_REPS]->n != 1 || fm_parse_uint ("repetitions", v[K_REPS]->v[0], 1,
                                          1000, &reps, err) == -1) {
    if (v[K_REPS]->n != 1)
      fm_fail (err, "repetitions: one number");
    k = K_REPS;
    goto bad;
  }
  if (v[K_TIMEOUT]->n != 1 || fm_parse_double ("timeout", v[K_TIMEOUT]->v[0], 1,
                                               1e7, &timeout, err) == -1) {
    if (v[K_TIMEOUT]->n != 1)
      fm_fail (err, "timeout: one number of seconds");
    k = K_TIMEOUT;
    goto bad;
  }
  for (i = 0; i < v[K_TIME]->n; i++)
    if (fd_trial_parse_time (v[K_TIME]->v[i], err) == -1) {
      k = K_TIME;
      goto bad;
    }
  for (i = 0; i < v[K_THINK]->n; i++)
    if (strcmp (v[K_THINK]->v[i], "real") &&
        strcmp (v[K_THINK]->v[i], "zero")) {
      fm_fail (err, "think '%.32s': real or zero", v[K_THINK]->v[i]);
      k = K_THINK;
      goto bad;
    }

  /* The cross product, the last key varying fastest; seeds and
   * repetitions innermost.
   */
  for (;;) {
    const struct fd_fs *fs = fd_fs_find (v[K_FS]->v[ix[K_FS]], err);
    const char *target = v[K_TARGET]->v[ix[K_TARGET]];
    size_t s;
    uint64_t r;

    if (strcmp (target, "none") == 0)
      target = "";
    for (s = 0; (!*target || fs_has_type (fs, target)) && s < nseeds; s++)
      for (r = 0; r < reps; r++) {
        struct fd_campaign_trial *t;
        if (c->nt == c->cap) {
          struct fd_campaign_trial *nt;
          if (c->nt >= MAX_TRIALS) {
            fm_fail (err, "%s: more than %d trials", c->path, MAX_TRIALS);
            free (seeds);
            return -1;
          }
          c->cap = c->cap ? 2 * c->cap : 64;
          if ((nt = realloc (c->t, c->cap * sizeof *nt)) == NULL) {
            fm_fail (err, "out of memory");
            free (seeds);
            return -1;
          }
          c->t = nt;
        }
        t = &c->t[c->nt++];
        t->matrix = m->name;
        t->fs = fs->name;
        t->profile = v[K_PROFILE]->v[ix[K_PROFILE]];
        t->size = v[K_SIZE]->v[ix[K_SIZE]];
        t->fill = fill[ix[K_FILL]];
        t->meta_only = meta[ix[K_META]];
        t->crash = strcmp (v[K_CRASH]->v[ix[K_CRASH]], "yes") == 0;
        t->faults = v[K_FAULTS]->v[ix[K_FAULTS]];
        t->target = target;
        t->time = v[K_TIME]->v[ix[K_TIME]];
        t->think = v[K_THINK]->v[ix[K_THINK]];
        t->seed = seeds[s];
        t->rep = r;
        t->timeout = timeout;
      }
    /* The next combination, like an odometer. */
    for (k = NKEYS; k-- > 0;) {
      if (k == K_SEEDS || k == K_REPS || k == K_TIMEOUT)
        continue;
      if (++ix[k] < v[k]->n)
        break;
      ix[k] = 0;
    }
    if (k == (size_t)-1)
      break;
  }
  free (seeds);
  return 0;

bad:
  free (seeds);
  where (c, m, (enum key)k, err);
  return -1;
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
