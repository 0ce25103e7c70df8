/* futuredisk — harness: populate once, break many times (see reuse.h).
 *
 * What must hold of a base for a clone to be the trial populated afresh:
 * the disk is as the populating server left it at exit, unmounted (or
 * cut, with --crash) and flushed, and no fault of the broken disk was on
 * it yet (they come with the second server, which a clone starts as a
 * fresh trial does: cache empty, power on, virtual clock at zero, the
 * same fault keys and seed).  The populate's own virtual time, I/O
 * counters and promises come with the base (its phases and manifest), so
 * the record accounts for them as the fresh trial's does.  The store is
 * only ever read after it moved into the base; the plugin refuses a
 * clone of a base that changed.
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
#include "crashpoints.h"
#include "target.h"
#include "trial-int.h"
#include "errmsg.h"
#include "fsadapter.h"
#include "reuse.h"

#define STORE_NAME   "disk.store"
#define MANIFEST     "manifest.saved"
#define PHASES       "phases.tsv"
#define POPULATE_LOG "faults-populate.jsonl"
#define READY        "ready"
#define MAX_PARTS    64 /* disk.store.1, ...: a store of more than 8 TiB */

/* ---- one trial's side: save a base, clone one ---- */

/* dir/name and its parts name.1, ... moved to to/name (ENOENT: done). */
static int
move_store (const char *from, const char *to, struct fm_err *err)
{
  char a[PATH_MAX + 16], b[PATH_MAX + 16];
  int i;

  if (rename (from, to) == -1)
    return fm_fail (err, "%s -> %s: %s", from, to, fd_strerror (errno));
  for (i = 1; i < MAX_PARTS; i++) {
    snprintf (a, sizeof a, "%s.%d", from, i);
    snprintf (b, sizeof b, "%s.%d", to, i);
    if (rename (a, b) == -1) {
      if (errno == ENOENT)
        break;
      return fm_fail (err, "%s -> %s: %s", a, b, fd_strerror (errno));
    }
  }
  return 0;
}

/* from/name linked as to/name, if from has it. */
static int
link_if (const char *from, const char *to, const char *name, struct fm_err *err)
{
  char a[PATH_MAX + 64], b[PATH_MAX + 64];

  snprintf (a, sizeof a, "%s/%s", from, name);
  snprintf (b, sizeof b, "%s/%s", to, name);
  if (link (a, b) == -1 && errno != ENOENT)
    return fm_fail (err, "link %s %s: %s", a, b, fd_strerror (errno));
  return 0;
}

/* The populate's phases (exact: hex floats), and how it attached. */
static int
save_phases (const struct trial *t, const char *path, struct fm_err *err)
{
  FILE *fp = fopen (path, "w");
  size_t i;

  if (fp == NULL)
    return fm_fail (err, "%s: %s", path, fd_strerror (errno));
  fprintf (fp, "attach\t%s\n", t->r->attached ? t->r->attached : "");
  for (i = 0; i < t->r->nph; i++) {
    const struct phase *p = &t->r->ph[i];
    fprintf (fp,
             "%s\t%a\t%a\t%a\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64
             "\t%" PRIu64 "\n",
             p->name, p->virtual_s, p->wall_s, p->cpu_s, p->reads, p->writes,
             p->bytes_read, p->bytes_written, p->read_errors);
  }
  if (fclose (fp) == EOF)
    return fm_fail (err, "%s: %s", path, fd_strerror (errno));
  return 0;
}

int
fd_base_save (struct trial *t, const char *dir, struct fm_err *err)
{
  char path[PATH_MAX + 64], tmp[PATH_MAX + 64];
  FILE *fp;

  if (mkdir (dir, 0700) == -1)
    return fm_fail (err, "%s: %s", dir, fd_strerror (errno));
  snprintf (path, sizeof path, "%s/" STORE_NAME, dir);
  if (move_store (t->s->store, path, err) == -1)
    return -1;
  snprintf (path, sizeof path, "%s/" MANIFEST, dir);
  if (fd_manifest_save (&t->r->m, path, err) == -1)
    return -1;
  snprintf (path, sizeof path, "%s/" PHASES, dir);
  if (save_phases (t, path, err) == -1 ||
      link_if (t->s->dir, dir, POPULATE_LOG, err) == -1)
    return -1;
  /* Last, and whole or not at all: the campaign starts clones on it. */
  snprintf (tmp, sizeof tmp, "%s/" READY ".tmp", dir);
  snprintf (path, sizeof path, "%s/" READY, dir);
  if ((fp = fopen (tmp, "w")) == NULL || fclose (fp) == EOF ||
      rename (tmp, path) == -1)
    return fm_fail (err, "%s: %s", path, fd_strerror (errno));
  return 0;
}

/* A phase name as the static string the trial uses for it. */
static const char *
phase_named (const char *name)
{
  static const char *const names[] = {"populate", "unmount", "crash"};
  size_t i;

  for (i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp (names[i], name) == 0)
      return names[i];
  return NULL;
}

static int
load_phase (char *line, struct phase *p)
{
  char name[32];

  memset (p, 0, sizeof *p);
  if (sscanf (line,
              "%31[^\t]\t%la\t%la\t%la\t%" SCNu64 "\t%" SCNu64 "\t%" SCNu64
              "\t%" SCNu64 "\t%" SCNu64,
              name, &p->virtual_s, &p->wall_s, &p->cpu_s, &p->reads, &p->writes,
              &p->bytes_read, &p->bytes_written, &p->read_errors) != 9 ||
      (p->name = phase_named (name)) == NULL)
    return -1;
  return 0;
}

static int
load_phases (struct trial *t, const char *path, struct fm_err *err)
{
  FILE *fp = fopen (path, "r");
  char line[512], via[16] = "";
  int ret = 0;

  if (fp == NULL)
    return fm_fail (err, "%s: %s", path, fd_strerror (errno));
  if (fgets (line, sizeof line, fp) == NULL || strncmp (line, "attach\t", 7))
    ret = fm_fail (err, "%s: no attach line", path);
  else
    sscanf (line + 7, "%15s", via);
  /* static strings, as fd_disk_via gives them */
  t->r->attached = strcmp (via, "nbd") == 0    ? "nbd"
                   : strcmp (via, "loop") == 0 ? "loop"
                                               : NULL;
  while (ret == 0 && fgets (line, sizeof line, fp)) {
    struct phase *p = &t->r->ph[t->r->nph];
    if (t->r->nph == MAX_PHASES || load_phase (line, p) == -1)
      ret = fm_fail (err, "%s: a malformed phase: %s", path, line);
    /* Virtual time and I/O as the populate had them; this trial spent no
     * wall or CPU time on it.
     */
    p->wall_s = p->cpu_s = 0;
    t->r->nph++;
  }
  fclose (fp);
  return ret;
}

int
fd_base_check (const char *dir, struct fm_err *err)
{
  char path[PATH_MAX + 64];

  snprintf (path, sizeof path, "%s/" READY, dir);
  if (access (path, F_OK) == -1)
    return fm_fail (err, "--base %s: not a populated disk (no %s: %s)", dir,
                    READY, fd_strerror (errno));
  return 0;
}

int
fd_base_clone (struct trial *t, const char *dir, struct fm_err *err)
{
  char path[PATH_MAX + 64];

  if (fd_base_check (dir, err) == -1)
    return -1;
  snprintf (path, sizeof path, "%s/" PHASES, dir);
  if (load_phases (t, path, err) == -1)
    return -1;
  snprintf (path, sizeof path, "%s/" MANIFEST, dir);
  if (fd_manifest_load (path, &t->r->m, err) == -1 ||
      link_if (dir, t->s->dir, POPULATE_LOG, err) == -1)
    return -1;
  /* What the populate leaves in the trial's directory, for a reader. */
  snprintf (path, sizeof path, "%s/manifest.tsv", t->s->dir);
  if (fd_manifest_write (&t->r->m, path, err) == -1)
    return -1;
  t->r->cloned = true;
  return 0;
}

/* ---- the campaign's side: which trials share a base ---- */

int
fd_reuse_key (const struct fd_campaign_trial *t, char *buf, size_t len)
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
  if (t->crash_points || fd_target_any (t->target, fd_target_edits_store) ||
      (*t->faults && fd_fault_spec_writes (t->faults, keys, &nw, &e) == -1))
    return -1;
  for (i = 0; i < nw; i++)
    snprintf (writes + strlen (writes), sizeof writes - strlen (writes), "%s%s",
              i ? "," : "", keys[i]);
  snprintf (fill, sizeof fill, "%g", t->fill);
  snprintf (meta, sizeof meta, "%" PRIu64, t->meta_only);
  snprintf (seed, sizeof seed, "%" PRIu64, t->seed);
  {
    /* Everything the populate depends on; a new such setting is a line
     * here.  The write faults strike the populate.
     */
    const char *const fields[][2] = {
        {"fs", t->fs},
        {"profile", t->profile},
        {"size", t->size},
        {"fill", fill},
        {"meta-only", meta},
        {"tree", t->tree},
        {"seed", seed},
        {"time", t->time},
        {"think", t->think},
        {"crash", t->crash ? "yes" : "no"},
        {"write-faults", writes},
    };
    for (i = 0; i < sizeof fields / sizeof fields[0] && at < len; i++)
      at += (size_t)snprintf (buf + at, len - at, "%s%s=%s", i ? " " : "",
                              fields[i][0], fields[i][1]);
  }
  return at < len ? 0 : -1;
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
    const struct fd_fs *fs = fd_fs_find (t->fs, err);
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
  char path[PATH_MAX + 16];

  snprintf (path, sizeof path, "%s/" READY, b->dir);
  return access (path, F_OK) == 0;
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
  static const char *const files[] = {STORE_NAME,       MANIFEST, PHASES,
                                      POPULATE_LOG,     READY,    READY ".tmp",
                                      FD_WRITELOG_NAME, NULL};
  char path[PATH_MAX + 32];
  size_t i;

  for (i = 1; i < MAX_PARTS; i++) {
    snprintf (path, sizeof path, "%s/" STORE_NAME ".%zu", b->dir, i);
    if (unlink (path) == -1)
      break;
  }
  for (i = 0; files[i]; i++) {
    snprintf (path, sizeof path, "%s/%s", b->dir, files[i]);
    unlink (path);
  }
  rmdir (b->dir);
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
