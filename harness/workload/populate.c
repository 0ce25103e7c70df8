/* futuredisk — harness: the mixed tree, the crash workload and the
 * manifest (see populate.h).
 */
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <ftw.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "errmsg.h"
#include "faultmodels/rng.h"
#include "populate.h"
#include "populate-int.h"
#include "proc.h"

/* fsync the directory full, or fail naming it. */
static int
sync_dir (const char *full, struct fm_err *err)
{
  int fd = open (full, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

  if (fd == -1)
    return fm_fail (err, "%s: %s", full, fd_strerror (errno));
  r = fsync (fd);
  close (fd);
  if (r == -1)
    return fm_fail (err, "%s: fsync: %s", full, fd_strerror (errno));
  return 0;
}

/* A new name is durable once every directory on its path is: fsync
 * rel's directory and each above it up to the root, as a careful
 * application does after creating it.
 */
static int
sync_parents (const char *root, const char *rel, struct fm_err *err)
{
  char full[4096];
  size_t rootlen = strlen (root);

  snprintf (full, sizeof full, "%s/%s", root, rel);
  for (;;) {
    char *slash = strrchr (full + rootlen, '/');
    if (slash == NULL)
      return 0;
    *slash = '\0';
    if (sync_dir (full[0] ? full : "/", err) == -1)
      return -1;
    if ((size_t)(slash - full) <= rootlen)
      return 0;
  }
}

/* A populate run: where, how much, and the tree so far. */
struct tree {
  const char *root;
  const struct fd_populate_opts *o;
  struct fd_manifest *m;
  uint64_t target; /* bytes of file data to add */
  uint64_t cap;    /* the largest file */
  double scale;    /* meta_only: what the sizes are scaled by */
  uint64_t *dirs;  /* manifest index of directory k + 1 */
  uint64_t ndirs;  /* directories, the root included */
  uint64_t files;  /* files made (not links or directories) */
  bool half_synced;
  struct fd_writeback wb;
  uint64_t promises; /* made so far */
  time_t last;       /* of the last progress line */
};

/* A promise made (the sync, fsync or rename behind it returned): count
 * it, stamp e with it, tell whoever asked.
 */
static int
promise (struct tree *t, struct fd_entry *e, struct fm_err *err)
{
  t->promises++;
  if (e)
    e->promised_at = t->promises;
  return t->o->promised ? t->o->promised (t->o->opaque, t->promises, err) : 0;
}

/* How much to write: the fill less what the file system holds already. */
static int
plan (struct tree *t, struct fm_err *err)
{
  const struct fd_populate_opts *o = t->o;
  struct statvfs sv;
  uint64_t total, used, i;

  if (statvfs (t->root, &sv) == -1) {
    return fm_fail (err, "%s: %s", t->root, fd_strerror (errno));
  }
  total = (uint64_t)sv.f_blocks * sv.f_frsize;
  used = (uint64_t)(sv.f_blocks - sv.f_bfree) * sv.f_frsize;
  t->target = (uint64_t)(o->fill_pct / 100 * (double)total);
  t->target = t->target > used ? t->target - used : 0;
  t->cap = t->target / 8 > (1 << 20) ? t->target / 8 : (1 << 20);
  t->wb.batch = fd_writeback_batch (total);
  t->scale = 1;
  if (o->meta_only) {
    /* The same sizes, scaled so that `files` files reach the fill. */
    double sum = 0;
    for (i = 0; i < o->files; i++)
      sum += (double)fd_populate_size (o->seed, i, UINT64_MAX / 2);
    t->scale = sum > 0 ? (double)t->target / sum : 1;
  }
  return 0;
}

/* Entry i's parent and path, and whether it is a directory.  About one
 * directory for every eight files: a random recursive tree (each new
 * directory under a uniformly chosen earlier one) is logarithmically
 * deep, with a few wide directories.
 */
static void
place (const struct tree *t, uint64_t i, struct fd_entry *e)
{
  const uint64_t seed = t->o->seed;
  uint64_t parent;
  const char *pp;

  if (i % 9 == 4) {
    parent = fm_below (fm_hash (seed, FM_STREAM_POPULATE, i, 5), t->ndirs);
    e->type = FD_DIR;
    e->mode = 0755;
  } else
    parent = fm_below (fm_hash (seed, FM_STREAM_POPULATE, i, 6), t->ndirs);
  /* Directory 0 is the root itself, so every path has a parent; the
   * others are entries of the manifest.
   */
  pp = parent > 0 ? t->m->v[t->dirs[parent - 1]].path : "";
  if (snprintf (e->path, sizeof e->path, "%s%s%s%" PRIu64, pp, *pp ? "/" : "",
                e->type == FD_DIR ? "d" : "f", i) >= (int)sizeof e->path)
    snprintf (e->path, sizeof e->path, "f%" PRIu64, i); /* too deep */
}

static int
make_dir (struct tree *t, const struct fd_entry *e, const char *full,
          struct fm_err *err)
{
  uint64_t *nd = realloc (t->dirs, t->ndirs * sizeof *t->dirs);

  if (nd == NULL)
    return fm_fail (err, "%s: out of memory", full);
  t->dirs = nd;
  if (mkdir (full, e->mode) == -1)
    return fm_fail (err, "%s: %s", full, fd_strerror (errno));
  t->dirs[t->ndirs++ - 1] = t->m->n; /* its index, once pushed */
  return 0;
}

/* A symlink to an earlier entry (its text is what is checked). */
static int
make_symlink (const struct tree *t, uint64_t i, struct fd_entry *e,
              const char *full, struct fm_err *err)
{
  const struct fd_entry *to = &t->m->v[fm_below (
      fm_hash (t->o->seed, FM_STREAM_POPULATE, i, 7), t->m->n)];

  e->type = FD_SYMLINK;
  e->mode = 0777;
  snprintf (e->target, sizeof e->target, "/%s", to->path);
  e->size = strlen (e->target);
  e->hash =
      fd_populate_hash_bytes (0, (const unsigned char *)e->target, e->size);
  if (symlink (e->target, full) == -1) {
    return fm_fail (err, "%s: %s", full, fd_strerror (errno));
  }
  return 0;
}

/* A hard link to the file just written. */
static int
make_hardlink (const struct tree *t, struct fd_entry *e, const char *full,
               struct fm_err *err)
{
  struct fd_entry *to = &t->m->v[t->m->n - 1];
  char tfull[4096];

  e->type = FD_HARDLINK;
  e->id = to->id;
  e->size = to->size;
  e->hash = to->hash;
  snprintf (e->target, sizeof e->target, "%s", to->path);
  snprintf (tfull, sizeof tfull, "%s/%s", t->root, to->path);
  if (link (tfull, full) == -1) {
    return fm_fail (err, "%s: %s", full, fd_strerror (errno));
  }
  to->linked = true;
  return 0;
}

/* A file: allocated (metadata only) or written, now and then sparse. */
static int
make_file (struct tree *t, uint64_t i, struct fd_entry *e, const char *full,
           enum fd_sync_how how, struct fm_err *err)
{
  const uint64_t seed = t->o->seed;

  if (t->o->meta_only) {
    e->type = FD_FILE;
    e->size =
        (uint64_t)((double)fd_populate_size (seed, t->files, UINT64_MAX / 2) *
                   t->scale) &
        ~(uint64_t)(FD_BLOCK - 1);
    if ((t->m->deferred ? fd_populate_allocate (full, e, t->m, err)
                        : fd_populate_create (full, e, err)) == -1)
      return -1;
    t->m->bytes += e->size;
  } else {
    bool sparse = i % 31 == 5;
    e->type = sparse ? FD_SPARSE : FD_FILE;
    e->size = fd_populate_size (seed, i, t->cap);
    if (sparse)
      e->size += 8 * FD_BLOCK;
    if (fd_populate_write (full, seed, e, how, err) == -1)
      return -1;
    t->m->bytes += sparse ? e->size - e->size / 2 : e->size;
  }
  t->files++;
  return 0;
}

/* Entry i, placed, on disk: a directory, now and then a link, else a
 * file.
 */
static int
make_placed (struct tree *t, uint64_t i, struct fd_entry *e, const char *full,
             struct fm_err *err)
{
  const struct fd_manifest *m = t->m;

  if (e->type == FD_DIR)
    return make_dir (t, e, full, err);
  if (t->files > 10 && i % 23 == 7)
    return make_symlink (t, i, e, full, err);
  if (t->files > 10 && i % 29 == 11 && m->v[m->n - 1].type == FD_FILE)
    return make_hardlink (t, e, full, err);
  return make_file (t, i, e, full, FD_NO_SYNC, err);
}

/* ---- the crash workload ---- */

/* The persistence patterns after the half-way sync, and how often each
 * is chosen (per cent).
 */
enum pattern {
  PAT_WRITE,
  PAT_FSYNC,
  PAT_DIRSYNC,
  PAT_REPLACE,
  PAT_REPLACE_NOSYNC,
  PAT_APPEND,
  PAT_LINK,
  PAT_UNLINK,
  PAT_CHAIN
};

static const struct {
  enum pattern p;
  const char *how;
  unsigned pct;
} patterns[] = {{PAT_WRITE, "write", 30},
                {PAT_FSYNC, "fsync", 15},
                {PAT_DIRSYNC, "dirsync", 10},
                {PAT_REPLACE, "replace", 10},
                {PAT_REPLACE_NOSYNC, "replace-nosync", 10},
                {PAT_APPEND, "append", 8},
                {PAT_LINK, "link", 7},
                {PAT_UNLINK, "unlink", 5},
                {PAT_CHAIN, "chain", 5}};

#define NPATTERNS (sizeof patterns / sizeof patterns[0])

static size_t
choose_pattern (uint64_t seed, uint64_t i)
{
  uint64_t r = fm_below (fm_hash (seed, FM_STREAM_POPULATE, i, 8), 100);
  size_t k;

  for (k = 0; k + 1 < NPATTERNS && r >= patterns[k].pct; k++)
    r -= patterns[k].pct;
  return k;
}

/* A file made durable by the half-way sync and not touched since: what
 * replace, append, link and unlink work on.  Its index, or -1.
 */
static ssize_t
pick_durable (const struct tree *t, uint64_t i)
{
  const struct fd_manifest *m = t->m;
  size_t k, start;

  if (m->n == 0)
    return -1;
  start = fm_below (fm_hash (t->o->seed, FM_STREAM_POPULATE, i, 9), m->n);
  for (k = 0; k < m->n; k++) {
    const struct fd_entry *x = &m->v[(start + k) % m->n];
    if (x->type == FD_FILE && x->promise == FD_PROMISE_DURABLE &&
        strcmp (x->how, "sync") == 0 && !x->linked &&
        strlen (x->path) + 24 < sizeof x->path)
      return (ssize_t)((start + k) % m->n);
  }
  return -1;
}

/* Atomic replace: a temporary written and fsynced, renamed over file j,
 * the directory fsynced (or not: then the old version or the new).
 */
static int
crash_replace (struct tree *t, uint64_t i, size_t j, bool dirsync,
               const char *how, struct fm_err *err)
{
  struct fd_entry *x = &t->m->v[j];
  struct fd_entry tmp = {.id = i + 1, .mode = x->mode, .type = FD_FILE};
  char full[4096], tfull[4096 + 32];

  snprintf (full, sizeof full, "%s/%s", t->root, x->path);
  snprintf (tmp.path, sizeof tmp.path, "%s.t%" PRIu64, x->path, i);
  snprintf (tfull, sizeof tfull, "%s/%s", t->root, tmp.path);
  tmp.size = fd_populate_size (t->o->seed, i, t->cap);
  if (fd_populate_write (tfull, t->o->seed, &tmp, FD_FSYNC, err) == -1)
    return -1;
  if (rename (tfull, full) == -1)
    return fm_fail (err, "%s: rename: %s", tfull, fd_strerror (errno));
  if (dirsync && sync_parents (t->root, x->path, err) == -1)
    return -1;
  t->m->bytes = t->m->bytes - x->size + tmp.size;
  x->old_id = x->id;
  x->old_size = x->size;
  x->id = tmp.id;
  x->size = tmp.size;
  x->hash = tmp.hash;
  x->promise = dirsync ? FD_PROMISE_DURABLE : FD_PROMISE_OLD_OR_NEW;
  x->how = how;
  x->old_promised_at = x->promised_at;
  /* The temporary's name is gone (durably so after the fsync). */
  tmp.type = FD_GONE;
  tmp.promise = dirsync ? FD_PROMISE_DURABLE : FD_PROMISE_NONE;
  tmp.how = how;
  if (promise (t, x, err) == -1)
    return -1;
  tmp.promised_at = x->promised_at;
  return fd_manifest_push (t->m, &tmp) == -1 ? fm_fail (err, "out of memory")
                                             : 0;
}

/* Append to file j, then fdatasync: its new size and content are
 * durable.
 */
static int
crash_append (struct tree *t, uint64_t i, size_t j, const char *how,
              struct fm_err *err)
{
  struct fd_entry *x = &t->m->v[j];
  uint64_t old = x->size;
  char full[4096];
  int fd;

  snprintf (full, sizeof full, "%s/%s", t->root, x->path);
  if ((fd = open (full, O_WRONLY | O_CLOEXEC)) == -1)
    return fm_fail (err, "%s: %s", full, fd_strerror (errno));
  x->size = old + fd_populate_size (t->o->seed, i, t->cap) / 4 + 1;
  if (fd_populate_write_range (fd, full, t->o->seed, x, old, err) == -1 ||
      (fd_populate_sync_fd (fd, FD_FDATASYNC) == -1 &&
       fm_fail (err, "%s: fdatasync: %s", full, fd_strerror (errno)) == -1)) {
    close (fd);
    return -1;
  }
  close (fd);
  t->m->bytes += x->size - old;
  x->hash = fd_populate_content_hash (t->o->seed, x);
  x->how = how;
  x->old_id = x->id;
  x->old_size = old;
  x->old_promised_at = x->promised_at;
  return promise (t, x, err);
}

/* A chain of three new directories under e's, e at its end, all made
 * durable.  The directories are entries of their own.
 */
static int
crash_chain (struct tree *t, uint64_t i, struct fd_entry *e, char *full,
             size_t len, struct fm_err *err)
{
  char dir[256];
  const char *slash = strrchr (e->path, '/');
  int k, n = slash ? (int)(slash - e->path) : 0;

  snprintf (dir, sizeof dir, "%.*s", n, e->path);
  for (k = 0; k < 3; k++) {
    struct fd_entry d = {.type = FD_DIR, .mode = 0755, .how = "chain"};
    if (snprintf (d.path, sizeof d.path, "%s%sc%" PRIu64 "-%d", dir,
                  dir[0] ? "/" : "", i, k) >= (int)sizeof d.path)
      break; /* too deep: the file goes where the chain got to */
    snprintf (full, len, "%s/%s", t->root, d.path);
    if (mkdir (full, d.mode) == -1)
      return fm_fail (err, "%s: %s", full, fd_strerror (errno));
    if (fd_manifest_push (t->m, &d) == -1)
      return fm_fail (err, "out of memory");
    snprintf (dir, sizeof dir, "%s", d.path);
  }
  if (snprintf (e->path, sizeof e->path, "%s/f%" PRIu64, dir, i) >=
      (int)sizeof e->path)
    return fm_fail (err, "%s: path too long", dir);
  snprintf (full, len, "%s/%s", t->root, e->path);
  return 0;
}

/* One step of the crash workload (after the half-way sync): entry i by a
 * persistence pattern chosen by the seed, with what it promised.
 */
static int
crash_step (struct tree *t, uint64_t i, struct fd_entry *e, struct fm_err *err)
{
  size_t k = choose_pattern (t->o->seed, i);
  enum pattern p = patterns[k].p;
  const char *how = patterns[k].how;
  ssize_t j = -1;
  char full[4096];

  place (t, i, e);
  snprintf (full, sizeof full, "%s/%s", t->root, e->path);
  if (e->type == FD_DIR || p == PAT_WRITE) {
    if (make_placed (t, i, e, full, err) == -1)
      return -1;
    e->promise = FD_PROMISE_NONE;
    e->how = e->type == FD_DIR ? "mkdir" : "write";
    return fd_manifest_push (t->m, e) == -1 ? fm_fail (err, "out of memory")
                                            : 0;
  }
  if (p == PAT_REPLACE || p == PAT_REPLACE_NOSYNC || p == PAT_APPEND ||
      p == PAT_LINK || p == PAT_UNLINK) {
    if ((j = pick_durable (t, i)) < 0)
      p = PAT_FSYNC, how = "fsync"; /* nothing durable to work on yet */
  }
  switch (p) {
    case PAT_REPLACE:
    case PAT_REPLACE_NOSYNC:
      return crash_replace (t, i, (size_t)j, p == PAT_REPLACE, how, err);
    case PAT_APPEND:
      return crash_append (t, i, (size_t)j, how, err);
    case PAT_UNLINK: {
      struct fd_entry *x = &t->m->v[j];
      snprintf (full, sizeof full, "%s/%s", t->root, x->path);
      if (unlink (full) == -1)
        return fm_fail (err, "%s: unlink: %s", full, fd_strerror (errno));
      if (sync_parents (t->root, x->path, err) == -1)
        return -1;
      t->m->bytes -= x->size;
      x->type = FD_GONE;
      x->how = how;
      x->old_promised_at = x->promised_at;
      return promise (t, x, err);
    }
    case PAT_LINK: {
      struct fd_entry *x = &t->m->v[j];
      char tfull[4096];
      snprintf (tfull, sizeof tfull, "%s/%s", t->root, x->path);
      if (link (tfull, full) == -1)
        return fm_fail (err, "%s: %s", full, fd_strerror (errno));
      x->linked = true;
      e->type = FD_HARDLINK;
      e->id = x->id;
      e->size = x->size;
      e->hash = x->hash;
      snprintf (e->target, sizeof e->target, "%s", x->path);
      break;
    }
    case PAT_CHAIN:
      if (crash_chain (t, i, e, full, sizeof full, err) == -1)
        return -1;
      /* fall through */
    case PAT_FSYNC:
    case PAT_DIRSYNC:
      if (make_file (t, i, e, full, p == PAT_DIRSYNC ? FD_NO_SYNC : FD_FSYNC,
                     err) == -1)
        return -1;
      break;
    case PAT_WRITE:
      abort (); /* made above */
  }
  if (sync_parents (t->root, e->path, err) == -1)
    return -1;
  e->promise = p == PAT_DIRSYNC ? FD_PROMISE_NAME : FD_PROMISE_DURABLE;
  e->how = how;
  if (promise (t, e, err) == -1)
    return -1;
  return fd_manifest_push (t->m, e) == -1 ? fm_fail (err, "out of memory") : 0;
}

static void
show_progress (struct tree *t)
{
  FILE *progress = t->o->progress;

  if (progress && time (NULL) - t->last >= 2) {
    t->last = time (NULL);
    fprintf (progress,
             "populate: %" PRIu64 " of %" PRIu64 " MiB, %" PRIu64 " files\n",
             t->m->bytes >> 20, t->target >> 20, t->files);
    fflush (progress);
  }
}

/* Everything so far durable (sync), and promised so. */
static int
sync_promise (struct tree *t, struct fm_err *err)
{
  size_t k;

  if (fd_populate_writeback (t->root, t->m, &t->wb, true, err) == -1)
    return -1;
  fd_populate_sync (t->root);
  if (promise (t, NULL, err) == -1)
    return -1;
  for (k = 0; k < t->m->n; k++) {
    t->m->v[k].promise = FD_PROMISE_DURABLE;
    t->m->v[k].how = "sync";
    t->m->v[k].promised_at = t->promises;
  }
  return 0;
}

static int
add_entry (struct tree *t, uint64_t i, struct fm_err *err)
{
  struct fd_entry e = {.id = i + 1, .mode = 0644, .how = "write"};
  char full[4096];

  if (fd_interrupted)
    return fm_fail (err, "interrupted");
  if (t->half_synced && !t->o->meta_only) {
    if (crash_step (t, i, &e, err) == -1)
      return -1;
    show_progress (t);
    return 0;
  }
  place (t, i, &e);
  snprintf (full, sizeof full, "%s/%s", t->root, e.path);
  if (make_placed (t, i, &e, full, err) == -1)
    return -1;
  if (fd_manifest_push (t->m, &e) == -1)
    return fm_fail (err, "out of memory");
  if (fd_populate_writeback (t->root, t->m, &t->wb, false, err) == -1)
    return -1;
  /* Before a crash, the first half is made durable; the crash workload
   * follows.
   */
  if (t->o->no_sync && !t->half_synced && t->m->bytes >= t->target / 2) {
    if (sync_promise (t, err) == -1)
      return -1;
    t->half_synced = true;
  }
  show_progress (t);
  return 0;
}

/* The metadata-only tree's files get their blocks after the whole tree
 * is made, as delayed allocation gives a written file its blocks at
 * writeback, after the directories around it have grown.  Allocating
 * each file as it is made (fallocate at create) put every directory's
 * later blocks between file data: ext4's pass 2 read them with ten
 * times the requests of the same tree written for real.
 */
static int
allocate_all (struct tree *t, struct fm_err *err)
{
  char full[4096];
  size_t k;

  for (k = 0; k < t->m->n; k++) {
    const struct fd_entry *e = &t->m->v[k];
    if (e->type != FD_FILE || e->size == 0)
      continue;
    snprintf (full, sizeof full, "%s/%s", t->root, e->path);
    if (fd_populate_fallocate (full, e, err) == -1)
      return -1;
  }
  return 0;
}

/* Run the thread on the first CPU it may use; *was: where it could run
 * before (false if that could not be told).  ext4's allocator gives
 * small files blocks from a preallocation per CPU, so the same writes
 * from another CPU land elsewhere, and the check reads another layout.
 */
static bool
pin_first_cpu (cpu_set_t *was)
{
  cpu_set_t one;
  int c;

  if (sched_getaffinity (0, sizeof *was, was) == -1)
    return false;
  for (c = 0; c < CPU_SETSIZE && !CPU_ISSET (c, was); c++)
    ;
  CPU_ZERO (&one);
  CPU_SET (c, &one);
  return c < CPU_SETSIZE && sched_setaffinity (0, sizeof one, &one) == 0;
}

static int
populate_mixed (struct tree *t, struct fm_err *err)
{
  const struct fd_populate_opts *o = t->o;
  uint64_t i;
  int rc = plan (t, err);

  for (i = 0; rc == 0 &&
              (o->meta_only ? t->files < o->files : t->m->bytes < t->target);
       i++)
    rc = add_entry (t, i, err);
  if (rc == 0 && o->meta_only && !t->m->deferred)
    rc = allocate_all (t, err);
  if (rc == 0 && !o->no_sync)
    rc = sync_promise (t, err);
  free (t->dirs);
  return rc;
}

int
fd_populate (const char *root, const struct fd_populate_opts *o,
             struct fd_manifest *m, struct fm_err *err)
{
  struct tree t = {
      .root = root, .o = o, .m = m, .ndirs = 1, .last = time (NULL)};
  cpu_set_t was;
  bool pinned;
  int rc;

  memset (m, 0, sizeof *m);
  if (o->meta_only && o->unallocated && o->tree == FD_TREE_AGED)
    /* Its files get their blocks afterwards, in inode order: nothing
     * would be left of the rounds of creates and deletes.
     */
    return fm_fail (err, "--tree aged with --meta-only on a file system "
                         "that allocates afterwards (ext3): its free space "
                         "would not be fragmented; write the files");
  m->meta_only = o->meta_only;
  m->deferred = o->meta_only && o->unallocated;
  pinned = pin_first_cpu (&was);
  rc = o->tree != FD_TREE_MIXED ? fd_populate_tree (root, o, m, err)
                                : populate_mixed (&t, err);
  if (pinned)
    sched_setaffinity (0, sizeof was, &was);
  return rc;
}

int
fd_manifest_at (const struct fd_manifest *m, uint64_t promises,
                struct fd_manifest *out)
{
  size_t i;

  *out = *m;
  out->cap = m->n ? m->n : 1;
  if ((out->v = malloc (out->cap * sizeof *out->v)) == NULL)
    return -1;
  for (i = 0; i < m->n; i++) {
    struct fd_entry *e = &out->v[i];
    bool old_holds;

    *e = m->v[i];
    old_holds = e->old_promised_at && e->old_promised_at <= promises;
    if (e->promise == FD_PROMISE_NONE || e->promised_at <= promises)
      continue;
    /* Made after the crash point: in flight, but what it replaced or
     * appended to was owed already.
     */
    if (e->type != FD_GONE && old_holds && strncmp (e->how, "replace", 7) == 0)
      e->promise = FD_PROMISE_OLD_OR_NEW;
    else if (e->type != FD_GONE && old_holds && strcmp (e->how, "append") == 0)
      e->promise = FD_PROMISE_PREFIX;
    else
      e->promise = FD_PROMISE_NONE;
  }
  return 0;
}

int
fd_entry_write (const char *root, uint64_t seed, const struct fd_entry *e,
                bool old, struct fm_err *err)
{
  struct fd_entry v = *e;
  char full[4096];

  snprintf (full, sizeof full, "%s/%s", root, e->path);
  if (old) {
    v.type = FD_FILE;
    v.id = e->old_id;
    v.size = e->old_size;
  }
  if (unlink (full) == -1 && errno != ENOENT)
    return fm_fail (err, "%s: %s", full, fd_strerror (errno));
  return fd_populate_write (full, seed, &v, FD_NO_SYNC, err);
}

void
fd_manifest_free (struct fd_manifest *m)
{
  free (m->unallocated);
  free (m->v);
  memset (m, 0, sizeof *m);
}

static const char *const type_names[] = {"file",    "sparse", "hardlink",
                                         "symlink", "dir",    "gone"};
static const char *const promise_names[] = {"none", "durable", "name",
                                            "old-or-new", "prefix"};

int
fd_manifest_write (const struct fd_manifest *m, const char *path,
                   struct fm_err *err)
{
  FILE *fp = fopen (path, "w");
  size_t i;

  if (fp == NULL) {
    return fm_fail (err, "%s: %s", path, fd_strerror (errno));
  }
  fprintf (fp, "# path\ttype\tsize\tmode\thash\tid\tpromise\thow\n");
  for (i = 0; i < m->n; i++)
    fprintf (fp,
             "%s\t%s\t%" PRIu64 "\t%04o\t%016" PRIx64 "\t%" PRIu64 "\t%s\t%s\n",
             m->v[i].path, type_names[m->v[i].type], m->v[i].size,
             (unsigned)m->v[i].mode, m->v[i].hash, m->v[i].id,
             promise_names[m->v[i].promise], m->v[i].how);
  if (fclose (fp) == EOF) {
    return fm_fail (err, "%s: %s", path, fd_strerror (errno));
  }
  return 0;
}

/* ---- the manifest kept with a populated disk (fd_manifest_save) ---- */

#define SAVED_MAGIC "# futuredisk manifest 1"

/* The persistence patterns by name: a loaded entry's `how` points at
 * the same static strings a populate sets.
 */
static const char *
how_named (const char *name)
{
  static const char *const extra[] = {"mkdir", "sync"};
  size_t k;

  for (k = 0; k < NPATTERNS; k++)
    if (strcmp (patterns[k].how, name) == 0)
      return patterns[k].how;
  for (k = 0; k < sizeof extra / sizeof extra[0]; k++)
    if (strcmp (extra[k], name) == 0)
      return extra[k];
  return NULL;
}

int
fd_manifest_save (const struct fd_manifest *m, const char *path,
                  struct fm_err *err)
{
  FILE *fp = fopen (path, "w");
  size_t i;

  if (fp == NULL)
    return fm_fail (err, "%s: %s", path, fd_strerror (errno));
  fprintf (fp, SAVED_MAGIC "\t%" PRIu64 "\t%d\n", m->bytes, m->meta_only);
  for (i = 0; i < m->n; i++) {
    const struct fd_entry *e = &m->v[i];
    fprintf (fp,
             "%s\t%d\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu32 "\t%" PRIu64
             "\t%s\t%d\t%s\t%d\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64
             "\n",
             e->path, (int)e->type, e->id, e->size, e->mode, e->hash, e->target,
             (int)e->promise, e->how ? e->how : "", e->linked, e->old_id,
             e->old_size, e->promised_at, e->old_promised_at);
  }
  if (fclose (fp) == EOF)
    return fm_fail (err, "%s: %s", path, fd_strerror (errno));
  return 0;
}

/* One saved entry (a line without its newline) into e; -1 if malformed. */
static int
parse_saved (char *line, struct fd_entry *e)
{
  char *f[14], *how;
  int k, type, promise, linked;

  for (k = 0; k < 14; k++)
    if ((f[k] = strsep (&line, "\t")) == NULL)
      return -1;
  if (line != NULL || strlen (f[0]) >= sizeof e->path ||
      strlen (f[6]) >= sizeof e->target)
    return -1;
  memset (e, 0, sizeof *e);
  strcpy (e->path, f[0]);
  strcpy (e->target, f[6]);
  type = atoi (f[1]);
  promise = atoi (f[7]);
  linked = atoi (f[9]);
  e->id = strtoull (f[2], NULL, 10);
  e->size = strtoull (f[3], NULL, 10);
  e->mode = (uint32_t)strtoul (f[4], NULL, 10);
  e->hash = strtoull (f[5], NULL, 10);
  e->old_id = strtoull (f[10], NULL, 10);
  e->old_size = strtoull (f[11], NULL, 10);
  e->promised_at = strtoull (f[12], NULL, 10);
  e->old_promised_at = strtoull (f[13], NULL, 10);
  how = f[8];
  e->how = *how ? how_named (how) : NULL;
  if (type < FD_FILE || type > FD_GONE || promise < FD_PROMISE_NONE ||
      promise > FD_PROMISE_PREFIX || (*how && e->how == NULL))
    return -1;
  e->type = (enum fd_ftype)type;
  e->promise = (enum fd_promise)promise;
  e->linked = linked != 0;
  return 0;
}

int
fd_manifest_load (const char *path, struct fd_manifest *m, struct fm_err *err)
{
  FILE *fp = fopen (path, "r");
  char *line = NULL;
  size_t cap = 0, n = 1;
  ssize_t len;
  int meta = 0, ret = 0;

  memset (m, 0, sizeof *m);
  if (fp == NULL)
    return fm_fail (err, "%s: %s", path, fd_strerror (errno));
  if (getline (&line, &cap, fp) <= 0 ||
      sscanf (line, SAVED_MAGIC "\t%" SCNu64 "\t%d", &m->bytes, &meta) != 2)
    ret = fm_fail (err, "%s: not a saved manifest", path);
  m->meta_only = meta != 0;
  while (ret == 0 && (len = getline (&line, &cap, fp)) > 0) {
    struct fd_entry e;
    n++;
    if (line[len - 1] == '\n')
      line[len - 1] = '\0';
    if (parse_saved (line, &e) == -1)
      ret = fm_fail (err, "%s:%zu: a malformed entry", path, n);
    else if (fd_manifest_push (m, &e) == -1)
      ret = fm_fail (err, "out of memory");
  }
  free (line);
  fclose (fp);
  if (ret == -1)
    fd_manifest_free (m);
  return ret;
}
