/* futuredisk — harness: which trials of a night share a populated disk
 * (see reuse.h); the base itself is engine/base.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attach.h"
#include "base.h"
#include "errmsg.h"
#include "fsadapter.h"
#include "reuse.h"
#include "target.h"
#include "trial.h"

/* The key of trial inputs s (fd_reuse_key). */
static int
reuse_key_spec (const struct trial_spec *s, char *buf, size_t len)
{
  char fill[32], meta[32], seed[32], writes[3 * 48 + 4] = "";
  char keys[FD_WRITE_FAULT_KEYS][48];
  size_t nw = 0, i, at = 0;
  struct fm_err e;
  /* A sweep of crash points rebuilds the disk from its own write log,
   * and a write fault target rewrites bytes of the store file in place
   * (crashpoints.c), as a garbled stripe does, which in a clone are the
   * overlay's, not the disk's.
   */
  if (s->crash_points ||
      (s->target && fd_target_any (s->target, fd_target_edits_store)) ||
      (s->faults_spec &&
       fd_fault_spec_writes (s->faults_spec, keys, &nw, &e) == -1))
    return -1;
  for (i = 0; i < nw; i++)
    snprintf (writes + strlen (writes), sizeof writes - strlen (writes), "%s%s",
              i ? "," : "", keys[i]);
  snprintf (fill, sizeof fill, "%g", s->fill);
  snprintf (meta, sizeof meta, "%" PRIu64,
            s->populate.meta_only ? s->populate.files : 0);
  snprintf (seed, sizeof seed, "%" PRIu64, s->seed);
  {
    /* Everything the populate depends on; a new such setting is a line
     * here.  The write faults strike the populate.
     */
    const char *const fields[][2] = {
        {"fs", s->fs->name},      {"profile", s->profile},
        {"size", s->size},        {"fill", fill},
        {"meta-only", meta},      {"tree", fd_tree_name (s->populate.tree)},
        {"seed", seed},           {"time", s->time_mode},
        {"think", s->think},      {"crash", s->crash ? "yes" : "no"},
        {"write-faults", writes}, {"attach", s->via ? s->via : "auto"},
    };
    for (i = 0; i < sizeof fields / sizeof fields[0] && at < len; i++)
      at += (size_t)snprintf (buf + at, len - at, "%s%s=%s", i ? " " : "",
                              fields[i][0], fields[i][1]);
  }
  return at < len ? 0 : -1;
}

int
fd_reuse_key (const struct fd_campaign_trial *t, char *buf, size_t len)
{
  struct trial_spec *s = malloc (sizeof *s);
  struct fm_err err;
  int rc = -1;

  if (s && fd_campaign_spec (t, s, &err) == 0)
    rc = reuse_key_spec (s, buf, len);
  free (s);
  return rc;
}

enum base_state {
  BASE_NONE,
  BASE_MAKING,
  BASE_READY
};

struct base {
  char key[512];
  char dir[PATH_MAX];
  size_t trials; /* of the night's, that share it */
  enum base_state state;
  int pid;        /* BASE_MAKING: the child making it */
  size_t running; /* trials on it (the maker, clones) running now */
  /* Its copies cannot be mounted at once (fd_fs's copies_collide: xfs,
   * btrfs share the UUID): one trial on it at a time.
   */
  bool alone;
};

struct fd_reuse {
  char root[PATH_MAX]; /* work/bases */
  struct base *b;
  size_t nb;
  size_t *of; /* per trial of the campaign: its base, or SIZE_MAX */
  int *pid;   /* per trial of the campaign: its child, once started */
  size_t ntrials;
  size_t cloned; /* trials started on a clone */
};

/* The base of key (a new one if it has none yet); SIZE_MAX if no room. */
static size_t
base_of (struct fd_reuse *r, const char *key)
{
  size_t i;

  for (i = 0; i < r->nb; i++)
    if (strcmp (r->b[i].key, key) == 0)
      return i;
  snprintf (r->b[i].key, sizeof r->b[i].key, "%s", key);
  snprintf (r->b[i].dir, sizeof r->b[i].dir, "%s/b%04zu", r->root, i);
  r->nb++;
  return i;
}

struct fd_reuse *
fd_reuse_new (const char *work, const struct fd_campaign *c, const size_t *todo,
              size_t ntodo, struct fm_err *err)
{
  struct fd_reuse *r = calloc (1, sizeof *r);
  size_t i, total = fd_campaign_ntrials (c);
  char key[512], abs[PATH_MAX];

  if (r == NULL || (r->b = calloc (ntodo + 1, sizeof *r->b)) == NULL ||
      (r->of = calloc (total + 1, sizeof *r->of)) == NULL ||
      (r->pid = calloc (total + 1, sizeof *r->pid)) == NULL) {
    fd_reuse_free (r);
    fm_fail (err, "out of memory");
    return NULL;
  }
  if (realpath (work, abs) == NULL ||
      (size_t)snprintf (r->root, sizeof r->root, "%s/bases", abs) >=
          sizeof r->root - 32 ||
      mkdir (r->root, 0700) == -1) {
    fm_fail (err, "%s/bases: %s", work, fd_strerror (errno));
    fd_reuse_free (r);
    return NULL;
  }
  r->ntrials = total;
  for (i = 0; i < total; i++)
    r->of[i] = SIZE_MAX;
  for (i = 0; i < ntodo; i++) {
    const struct fd_campaign_trial *t = fd_campaign_trial (c, todo[i]);
    const struct fd_fs *fs = fd_fs_find (t->value[FD_KEY_FS], err);
    if (fs && fd_reuse_key (t, key, sizeof key) == 0) {
      struct base *b = &r->b[r->of[todo[i]] = base_of (r, key)];
      b->trials++;
      b->alone = fs->copies_collide;
    }
  }
  return r;
}

/* Its ready file is there: clones may start (the maker goes on). */
static bool
is_ready (const struct base *b)
{
  struct fm_err err;

  return fd_base_check (b->dir, &err) == 0;
}

int
fd_reuse_plan (struct fd_reuse *r, size_t idx, const char **base_out,
               const char **base)
{
  struct base *b = r->of[idx] == SIZE_MAX ? NULL : &r->b[r->of[idx]];

  *base_out = *base = NULL;
  /* A disk no other trial of the night shares is not worth keeping. */
  if (b == NULL || b->trials < 2)
    return 0;
  if (b->state == BASE_MAKING && is_ready (b))
    b->state = BASE_READY;
  if (b->state == BASE_MAKING || (b->alone && b->running > 0))
    return 1;
  if (b->state == BASE_READY)
    *base = b->dir;
  else
    *base_out = b->dir;
  return 0;
}

void
fd_reuse_started (struct fd_reuse *r, size_t idx, int pid)
{
  const char *out, *base;
  struct base *b;
  if (fd_reuse_plan (r, idx, &out, &base) != 0 || (!out && !base))
    return;
  b = &r->b[r->of[idx]];
  r->pid[idx] = pid;
  b->running++;
  if (out) {
    b->state = BASE_MAKING;
    b->pid = pid;
  } else if (base)
    r->cloned++;
}

/* Remove what a base holds, and its directory. */
static void
remove_base (const struct base *b)
{
  fd_base_remove (b->dir);
}

void
fd_reuse_ended (struct fd_reuse *r, int pid)
{
  size_t i;

  for (i = 0; i < r->ntrials; i++)
    if (r->pid[i] == pid && r->of[i] != SIZE_MAX) {
      r->b[r->of[i]].running--;
      r->pid[i] = 0;
    }
  for (i = 0; i < r->nb; i++) {
    struct base *b = &r->b[i];
    if (b->state != BASE_MAKING || b->pid != pid)
      continue;
    if (is_ready (b))
      b->state = BASE_READY;
    else {
      /* It failed before the base was whole: the next trial of the key
       * makes it.
       */
      remove_base (b);
      b->state = BASE_NONE;
    }
  }
}

void
fd_reuse_counts (const struct fd_reuse *r, size_t *cloned, size_t *bases)
{
  size_t i;

  *cloned = r->cloned;
  *bases = 0;
  for (i = 0; i < r->nb; i++)
    *bases += r->b[i].state == BASE_READY;
}

void
fd_reuse_free (struct fd_reuse *r)
{
  size_t i;

  if (r == NULL)
    return;
  for (i = 0; i < r->nb; i++)
    if (r->b[i].state != BASE_NONE)
      remove_base (&r->b[i]);
  if (r->root[0])
    rmdir (r->root);
  free (r->b);
  free (r->of);
  free (r->pid);
  free (r);
}
