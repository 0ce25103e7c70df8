/* futuredisk — harness: populate and audit (see populate.h). */
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <ftw.h>
#include <inttypes.h>
#include <math.h>
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

static const char magic[8] = {'F', 'D', 'B', 'L', 'O', 'C', 'K', '1'};

/* ---- contents ---- */

/* Block blk of file id: a 32-byte header, then bytes from the seed. */
static void
fill_block (unsigned char *b, uint64_t seed, uint64_t id, uint64_t blk)
{
  uint64_t h = fm_hash (seed, FM_STREAM_POPULATE, id, blk + 1000), gen = 1;
  size_t i;

  memcpy (b, magic, 8);
  memcpy (b + 8, &id, 8);
  memcpy (b + 16, &blk, 8);
  memcpy (b + 24, &gen, 8);
  for (i = 32; i < FD_BLOCK; i += 8) {
    uint64_t w = fm_mix64 (h + i);
    memcpy (b + i, &w, 8);
  }
}

static uint64_t
hash_bytes (uint64_t h, const unsigned char *p, size_t n)
{
  size_t i;

  for (i = 0; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy (&w, p + i, 8);
    h = fm_mix64 (h ^ w);
  }
  for (; i < n; i++)
    h = fm_mix64 (h ^ p[i]);
  return h;
}

/* ---- the tree ---- */

static double
unit (uint64_t seed, uint64_t i, uint64_t k)
{
  return fm_unit (fm_hash (seed, FM_STREAM_POPULATE, i, k));
}

/* File sizes: lognormal around 8 KiB (most files are small), and one in
 * ten from a Pareto tail above 256 KiB (most bytes are in big files).
 */
uint64_t
fd_populate_size (uint64_t seed, uint64_t i, uint64_t cap)
{
  double s;

  if (unit (seed, i, 1) < 0.9) {
    double z = sqrt (-2 * log (1 - unit (seed, i, 2))) *
               cos (2 * M_PI * unit (seed, i, 3));
    s = exp (log (8192) + 1.5 * z);
  } else
    s = 262144 * pow (1 - unit (seed, i, 4), -1 / 1.3);
  return s < (double)cap ? (uint64_t)s : cap;
}

int
fd_manifest_push (struct fd_manifest *m, const struct fd_entry *e)
{
  if (m->n == m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 256;
    struct fd_entry *v = realloc (m->v, cap * sizeof *v);
    if (v == NULL)
      return -1;
    m->v = v;
    m->cap = cap;
  }
  m->v[m->n++] = *e;
  return 0;
}

/* Create e's file at full, for writing. */
static int
create_file (const char *full, const struct fd_entry *e, struct fm_err *err)
{
  int fd = open (full, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, e->mode);

  if (fd == -1)
    fm_fail (err, "%s: %s", full, fd_strerror (errno));
  return fd;
}

/* Is byte offset off of e in the hole of a sparse file?  Its first half
 * is one: it reads as zeros.
 */
static bool
in_hole (const struct fd_entry *e, uint64_t off)
{
  return e->type == FD_SPARSE && off + FD_BLOCK <= e->size / 2;
}

/* Blocks one write takes at most: a FUSE file system without a page
 * cache (chunkfs) serves each write as a request, and 4 KiB writes made
 * its populate mostly round trips (10,008 writes for a 50 MB tree).
 */
#define WRITE_BLOCKS 256

/* e's content from byte `from` to its end, into fd: a write per run of
 * blocks outside the hole, WRITE_BLOCKS at most.
 */
static int
write_range (int fd, const char *full, uint64_t seed, const struct fd_entry *e,
             uint64_t from, struct fm_err *err)
{
  unsigned char *buf = NULL;
  uint64_t off = from - from % FD_BLOCK, blocks;
  int rc = 0, en = 0;

  blocks = (e->size - off + FD_BLOCK - 1) / FD_BLOCK;
  if (off < e->size &&
      (buf = malloc ((blocks < WRITE_BLOCKS ? blocks : WRITE_BLOCKS) *
                     FD_BLOCK)) == NULL)
    return fm_fail (err, "%s: out of memory", full);
  while (rc == 0 && off < e->size) {
    uint64_t start = off, len = 0, skip;
    if (in_hole (e, off)) {
      off += FD_BLOCK;
      continue;
    }
    while (off < e->size && !in_hole (e, off) &&
           len < (uint64_t)WRITE_BLOCKS * FD_BLOCK) {
      size_t n = e->size - off < FD_BLOCK ? e->size - off : FD_BLOCK;
      fill_block (buf + len, seed, e->id, off / FD_BLOCK);
      len += n;
      off += n;
    }
    skip = start < from ? from - start : 0;
    if (pwrite (fd, buf + skip, len - skip, (off_t)(start + skip)) !=
        (ssize_t)(len - skip)) {
      en = errno ? errno : ENOSPC; /* a short write: the disk is full */
      fm_fail (err, "%s: write: %s", full, fd_strerror (en));
      rc = -1;
    }
  }
  free (buf);
  if (rc == -1)
    errno = en; /* for a caller that stops at a full file system */
  return rc;
}

/* The hash of e's whole content, as the audit will read it. */
static uint64_t
content_hash (uint64_t seed, const struct fd_entry *e)
{
  unsigned char b[FD_BLOCK];
  uint64_t off, h = 0;

  for (off = 0; off < e->size; off += FD_BLOCK) {
    size_t n = e->size - off < FD_BLOCK ? e->size - off : FD_BLOCK;
    if (in_hole (e, off))
      memset (b, 0, n);
    else
      fill_block (b, seed, e->id, off / FD_BLOCK);
    h = hash_bytes (h, b, n);
  }
  return h;
}

/* How a file's data is made durable before it is closed. */
enum sync_how {
  NO_SYNC,
  FSYNC,
  FDATASYNC
};

static int
sync_fd (int fd, enum sync_how how)
{
  if (how == FSYNC)
    return fsync (fd);
  if (how == FDATASYNC)
    return fdatasync (fd);
  return 0;
}

static int
write_file (const char *full, uint64_t seed, struct fd_entry *e,
            enum sync_how how, struct fm_err *err)
{
  int fd = create_file (full, e, err);

  if (fd == -1)
    return -1;
  if (write_range (fd, full, seed, e, 0, err) == -1)
    goto fail;
  if (e->type == FD_SPARSE && ftruncate (fd, (off_t)e->size) == -1) {
    fm_fail (err, "%s: %s", full, fd_strerror (errno));
    goto fail;
  }
  if (sync_fd (fd, how) == -1) {
    fm_fail (err, "%s: sync: %s", full, fd_strerror (errno));
    goto fail;
  }
  e->hash = content_hash (seed, e);
  if (close (fd) == -1) {
    return fm_fail (err, "%s: close: %s", full, fd_strerror (errno));
  }
  return 0;

fail:
  close (fd);
  return -1;
}

/* Allocate a file without writing it (metadata only); or where the
 * file system cannot (m->unallocated set), make it sparse at its size
 * and keep its inode number for the adapter to allocate unmounted.
 */
static int
allocate_file (const char *full, struct fd_entry *e, struct fd_manifest *m,
               struct fm_err *err)
{
  int fd = create_file (full, e, err), r = 0;
  struct stat st;

  if (fd == -1)
    return -1;
  if (m->deferred) {
    uint64_t *v = m->unallocated;
    if (m->nunallocated % 4096 == 0 &&
        (v = realloc (v, (m->nunallocated + 4096) * sizeof *v)) == NULL)
      r = ENOMEM;
    else if (ftruncate (fd, (off_t)e->size) == -1 || fstat (fd, &st) == -1)
      r = errno;
    else {
      m->unallocated = v;
      m->unallocated[m->nunallocated++] = (uint64_t)st.st_ino;
    }
  } else if (e->size) {
    r = posix_fallocate (fd, 0, (off_t)e->size);
  }
  close (fd);
  if (r != 0) {
    fm_fail (err, "%s: fallocate: %s", full, fd_strerror (r));
    errno = r; /* for a caller that stops at a full file system */
    return -1;
  }
  e->hash = 0; /* unwritten: reads as zeros */
  return 0;
}

int
fd_populate_file (const char *full, uint64_t seed, struct fd_entry *e,
                  struct fd_manifest *m, struct fm_err *err)
{
  return m->meta_only ? allocate_file (full, e, m, err)
                      : write_file (full, seed, e, NO_SYNC, err);
}

/* Everything durable: syncfs(2) of the file system under root, and
 * fsync of the root directory, which is what reaches a FUSE file system
 * (a sync does not call into one).  Not sync(2): it waits on every file
 * system of the machine, so one trial's stuck disk would hold another's
 * populate (campaign jobs run side by side).
 */
void
fd_populate_sync (const char *root)
{
  int fd;

  if ((fd = open (root, O_RDONLY | O_DIRECTORY)) == -1) {
    sync (); /* cannot name it: all of them */
    return;
  }
  syncfs (fd);
  fsync (fd);
  close (fd);
}

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
  e->hash = hash_bytes (0, (const unsigned char *)e->target, e->size);
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
           enum sync_how how, struct fm_err *err)
{
  const uint64_t seed = t->o->seed;

  if (t->o->meta_only) {
    e->type = FD_FILE;
    e->size =
        (uint64_t)((double)fd_populate_size (seed, t->files, UINT64_MAX / 2) *
                   t->scale) &
        ~(uint64_t)(FD_BLOCK - 1);
    if (allocate_file (full, e, t->m, err) == -1)
      return -1;
    t->m->bytes += e->size;
  } else {
    bool sparse = i % 31 == 5;
    e->type = sparse ? FD_SPARSE : FD_FILE;
    e->size = fd_populate_size (seed, i, t->cap);
    if (sparse)
      e->size += 8 * FD_BLOCK;
    if (write_file (full, seed, e, how, err) == -1)
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
  return make_file (t, i, e, full, NO_SYNC, err);
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
  if (write_file (tfull, t->o->seed, &tmp, FSYNC, err) == -1)
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
  if (write_range (fd, full, t->o->seed, x, old, err) == -1 ||
      (sync_fd (fd, FDATASYNC) == -1 &&
       fm_fail (err, "%s: fdatasync: %s", full, fd_strerror (errno)) == -1)) {
    close (fd);
    return -1;
  }
  close (fd);
  t->m->bytes += x->size - old;
  x->hash = content_hash (t->o->seed, x);
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
      if (make_file (t, i, e, full, p == PAT_DIRSYNC ? NO_SYNC : FSYNC, err) ==
          -1)
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

int
fd_populate (const char *root, const struct fd_populate_opts *o,
             struct fd_manifest *m, struct fm_err *err)
{
  struct tree t = {
      .root = root, .o = o, .m = m, .ndirs = 1, .last = time (NULL)};
  uint64_t i;
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
  if (o->tree != FD_TREE_MIXED)
    return fd_populate_tree (root, o, m, err);
  rc = plan (&t, err);
  for (i = 0;
       rc == 0 && (o->meta_only ? t.files < o->files : m->bytes < t.target);
       i++)
    rc = add_entry (&t, i, err);
  if (rc == 0 && !o->no_sync)
    rc = sync_promise (&t, err);
  free (t.dirs);
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
  return write_file (full, seed, &v, NO_SYNC, err);
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

/* ---- the audit ---- */

const char *
fd_audit_class_name (enum fd_audit_class c)
{
  static const char *const names[] = {
#define FD_AUDIT_NAME(id, name) name,
      FD_AUDIT_CLASSES (FD_AUDIT_NAME)
#undef FD_AUDIT_NAME
  };
  return c < FD_AUDIT_NCLASSES ? names[c] : "?";
}

const char *
fd_durability_class_name (enum fd_durability_class c)
{
  static const char *const names[] = {
#define FD_DURABILITY_NAME(id, name) name,
      FD_DURABILITY_CLASSES (FD_DURABILITY_NAME)
#undef FD_DURABILITY_NAME
  };
  return c < FD_DURABILITY_NCLASSES ? names[c] : "?";
}

/* What a wrong block holds instead of block blk of file id. */
static void
judge_block (struct fd_audit *a, const unsigned char *b, size_t n, uint64_t id,
             uint64_t blk)
{
  uint64_t hid, hblk;
  size_t i;

  for (i = 0; i < n && b[i] == 0; i++)
    ;
  if (i == n) {
    a->zeroed_blocks++;
    return;
  }
  if (n >= 32 && memcmp (b, magic, 8) == 0) {
    memcpy (&hid, b + 8, 8);
    memcpy (&hblk, b + 16, 8);
    if (hid != id || hblk != blk) {
      a->foreign_blocks++;
      return;
    }
    if (memcmp (b + 24, "\1\0\0\0\0\0\0\0", 8) != 0) {
      a->stale_blocks++;
      return;
    }
  }
  a->garbled_blocks++;
}

int
fd_open_regular (const char *full)
{
  struct stat st;
  int fd;

  if (lstat (full, &st) == -1)
    return -1;
  if (!S_ISREG (st.st_mode)) {
    errno = EINVAL;
    return -1;
  }
  fd = open (full, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd != -1 && (fstat (fd, &st) == -1 || !S_ISREG (st.st_mode))) {
    close (fd);
    errno = EINVAL;
    return -1;
  }
  return fd;
}

/* Read one file back block by block against what was written: its
 * class, and what each wrong block holds.  For a promise of a prefix,
 * only the first e->size bytes count (the file may be longer).
 */
static enum fd_audit_class
audit_file (const char *full, const struct fd_entry *e, uint64_t seed,
            bool meta_only, struct fd_audit *a)
{
  unsigned char b[FD_BLOCK], want[FD_BLOCK];
  uint64_t off = 0, bad = 0;
  struct stat st;
  int fd = fd_open_regular (full);

  if (fd == -1)
    return errno == ENOENT   ? FD_AUDIT_MISSING
           : errno == EINVAL ? FD_AUDIT_CORRUPTED
                             : FD_AUDIT_UNREADABLE;
  if (fstat (fd, &st) == -1) {
    close (fd);
    return FD_AUDIT_UNREADABLE;
  }
  if (meta_only) {
    /* Allocated, never written: reading terabytes of zeros proves
     * nothing.  The size, and the first and last blocks, must be right.
     */
    uint64_t ends[2] = {0, e->size > FD_BLOCK ? e->size - FD_BLOCK : 0};
    int k;
    if ((uint64_t)st.st_size != e->size) {
      close (fd);
      return FD_AUDIT_PARTIAL;
    }
    memset (want, 0, sizeof want);
    for (k = 0; k < 2 && e->size; k++) {
      ssize_t n = pread (fd, b, FD_BLOCK, (off_t)ends[k]);
      if (n < 0) {
        close (fd);
        return FD_AUDIT_UNREADABLE;
      }
      if (memcmp (b, want, (size_t)n) != 0) {
        judge_block (a, b, (size_t)n, e->id, ends[k] / FD_BLOCK);
        bad++;
      }
    }
    close (fd);
    return bad ? FD_AUDIT_CORRUPTED : FD_AUDIT_INTACT;
  }
  for (;;) {
    bool prefix = e->promise == FD_PROMISE_PREFIX;
    ssize_t n;
    if (prefix && off >= e->size)
      break;
    n = pread (fd, b,
               prefix && e->size - off < FD_BLOCK ? e->size - off : FD_BLOCK,
               (off_t)off);
    if (n < 0) {
      close (fd);
      return FD_AUDIT_UNREADABLE;
    }
    if (n == 0)
      break;
    if (in_hole (e, off))
      memset (want, 0, sizeof want);
    else
      fill_block (want, seed, e->id, off / FD_BLOCK);
    if (memcmp (b, want, (size_t)n) != 0) {
      bad++;
      judge_block (a, b, (size_t)n, e->id, off / FD_BLOCK);
    }
    off += (uint64_t)n;
  }
  close (fd);
  if (off != e->size)
    return FD_AUDIT_PARTIAL;
  return bad ? FD_AUDIT_CORRUPTED : FD_AUDIT_INTACT;
}

struct walk {
  const char *root;
  const struct fd_manifest *m;
  uint64_t extra;
};

static struct walk *walk_state; /* nftw has no opaque pointer */

static int
by_path (const void *k, const void *v)
{
  return strcmp ((const char *)k, ((const struct fd_entry *const *)v)[0]->path);
}

static const struct fd_entry **sorted;

static int
count_extra (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  const char *rel = path + strlen (walk_state->root);

  while (*rel == '/')
    rel++;
  if (*rel == '\0' || strncmp (rel, "lost+found", 10) == 0)
    return 0;
  if (!bsearch (rel, sorted, walk_state->m->n, sizeof *sorted, by_path))
    walk_state->extra++;
  return 0;
}

static int
cmp_entries (const void *a, const void *b)
{
  return strcmp ((*(const struct fd_entry *const *)a)->path,
                 (*(const struct fd_entry *const *)b)->path);
}

/* Files found in lost+found, by the file id in their first data block;
 * where each was found in lf[] (its name there, or NULL).
 */
static void
scan_lost_found (const char *root, const struct fd_manifest *m,
                 enum fd_audit_class *cls, char **lf)
{
  char dir[4096];
  struct dirent *de;
  DIR *d;

  snprintf (dir, sizeof dir, "%s/lost+found", root);
  if ((d = opendir (dir)) == NULL)
    return;
  while ((de = readdir (d)) != NULL) {
    char full[4096 + 256];
    unsigned char b[32];
    uint64_t id;
    size_t i;
    int fd;

    if (de->d_name[0] == '.')
      continue;
    snprintf (full, sizeof full, "%s/%s", dir, de->d_name);
    if ((fd = fd_open_regular (full)) == -1)
      continue;
    /* A sparse file's data starts half way; look at both ends. */
    if (pread (fd, b, 32, 0) == 32 && memcmp (b, magic, 8) == 0) {
      memcpy (&id, b + 8, 8);
      for (i = 0; i < m->n; i++)
        if (m->v[i].id == id && cls[i] == FD_AUDIT_MISSING &&
            m->v[i].type != FD_DIR && m->v[i].type != FD_SYMLINK) {
          cls[i] = FD_AUDIT_LOST_FOUND;
          lf[i] = strdup (de->d_name); /* NULL: found, place unknown */
        }
    }
    close (fd);
  }
  closedir (d);
}

/* Entries holding a file's content (its names), by id then position. */
static int
by_id (const void *a, const void *b)
{
  const struct fd_entry *x = *(const struct fd_entry *const *)a,
                        *y = *(const struct fd_entry *const *)b;

  if (x->id != y->id)
    return x->id < y->id ? -1 : 1;
  return x < y ? -1 : x > y;
}

static bool
has_content (const struct fd_entry *e)
{
  return e->type == FD_FILE || e->type == FD_SPARSE || e->type == FD_HARDLINK;
}

/* A missing name of a file another of whose names is intact: the link
 * was lost, not the file.  names: room for m->n pointers.
 */
static void
find_lost_links (const struct fd_manifest *m, enum fd_audit_class *cls,
                 const struct fd_entry **names)
{
  size_t i, j, k, n = 0;

  for (i = 0; i < m->n; i++)
    if (has_content (&m->v[i]))
      names[n++] = &m->v[i];
  qsort (names, n, sizeof *names, by_id);
  for (i = 0; i < n; i = j) {
    bool intact = false;
    for (j = i; j < n && names[j]->id == names[i]->id; j++)
      intact |= cls[names[j] - m->v] == FD_AUDIT_INTACT;
    for (k = i; intact && k < j; k++)
      if (cls[names[k] - m->v] == FD_AUDIT_MISSING)
        cls[names[k] - m->v] = FD_AUDIT_LINK_LOST;
  }
}

/* What the audit found of an entry beyond its class. */
enum found {
  FOUND_AS_IS,
  FOUND_OLD,  /* the version an atomic rename replaced */
  FOUND_THERE /* a gone entry's name */
};

static void
add_blocks (struct fd_audit *a, const struct fd_audit *b)
{
  a->zeroed_blocks += b->zeroed_blocks;
  a->stale_blocks += b->stale_blocks;
  a->foreign_blocks += b->foreign_blocks;
  a->garbled_blocks += b->garbled_blocks;
}

/* One entry of the manifest, read back: its class. */
static enum fd_audit_class
audit_entry (const char *full, const struct fd_entry *e, uint64_t seed,
             bool meta_only, struct fd_audit *a, enum found *found)
{
  struct fd_audit now = {0}, before = {0};
  struct fd_entry old;
  enum fd_audit_class c;
  struct stat st;
  char t[256];
  ssize_t n;

  *found = FOUND_AS_IS;
  switch (e->type) {
    case FD_DIR:
      return lstat (full, &st) == 0 && S_ISDIR (st.st_mode) ? FD_AUDIT_INTACT
                                                            : FD_AUDIT_MISSING;
    case FD_GONE:
      if (lstat (full, &st) == 0)
        *found = FOUND_THERE;
      return FD_AUDIT_INTACT; /* not a file: judged by its absence alone */
    case FD_SYMLINK:
      if ((n = readlink (full, t, sizeof t - 1)) < 0)
        return errno == ENOENT ? FD_AUDIT_MISSING : FD_AUDIT_UNREADABLE;
      t[n] = '\0';
      return strcmp (t, e->target) == 0 ? FD_AUDIT_INTACT : FD_AUDIT_CORRUPTED;
    default:
      break;
  }
  if (e->promise == FD_PROMISE_PREFIX) {
    old = *e;
    old.size = e->old_size;
    return audit_file (full, &old, seed, meta_only, a);
  }
  if (e->promise != FD_PROMISE_OLD_OR_NEW)
    return audit_file (full, e, seed, meta_only, a);
  /* A rename in flight: the new version, else the old one intact. */
  c = audit_file (full, e, seed, meta_only, &now);
  if (c != FD_AUDIT_INTACT) {
    old = *e;
    old.type = FD_FILE;
    old.id = e->old_id;
    old.size = e->old_size;
    if (audit_file (full, &old, seed, meta_only, &before) == FD_AUDIT_INTACT) {
      *found = FOUND_OLD;
      return FD_AUDIT_INTACT;
    }
  }
  add_blocks (a, &now);
  return c;
}

/* What was found against what was promised; *what names a broken
 * promise's finding.
 */
static enum fd_durability_class
judge (const struct fd_entry *e, enum fd_audit_class c, enum found f,
       const char **what)
{
  bool durable = e->promise == FD_PROMISE_DURABLE;

  *what = fd_audit_class_name (c);
  if (e->type == FD_GONE) {
    *what = "resurrected";
    if (f == FOUND_THERE)
      return durable ? FD_DURABLE_BROKEN : FD_INFLIGHT_LOST;
    return durable ? FD_DURABLE_INTACT : FD_INFLIGHT_SURVIVED;
  }
  switch (e->promise) {
    case FD_PROMISE_NONE:
      return c == FD_AUDIT_INTACT ? FD_INFLIGHT_SURVIVED : FD_INFLIGHT_LOST;
    case FD_PROMISE_DURABLE:
    case FD_PROMISE_PREFIX:
      return c == FD_AUDIT_INTACT ? FD_DURABLE_INTACT : FD_DURABLE_BROKEN;
    case FD_PROMISE_NAME:
      return c == FD_AUDIT_MISSING || c == FD_AUDIT_LOST_FOUND ||
                     c == FD_AUDIT_LINK_LOST
                 ? FD_DURABLE_BROKEN
                 : FD_DURABLE_INTACT;
    case FD_PROMISE_OLD_OR_NEW:
      if (c == FD_AUDIT_INTACT)
        return f == FOUND_OLD ? FD_INFLIGHT_LOST : FD_INFLIGHT_SURVIVED;
      *what = "neither";
      return FD_DURABLE_BROKEN;
  }
  abort ();
}

/* Each entry's classes into a, with its detail and violation lines. */
static void
tally (const struct fd_manifest *m, const enum fd_audit_class *cls,
       const unsigned char *found, char *const *lf, struct fd_audit *a)
{
  size_t i;

  for (i = 0; i < m->n; i++) {
    const struct fd_entry *e = &m->v[i];
    enum fd_durability_class d;
    const char *what;

    if (e->type == FD_DIR)
      continue; /* classes count files; directories only guide */
    d = judge (e, cls[i], (enum found)found[i], &what);
    a->durability[d]++;
    if (d == FD_DURABLE_BROKEN && a->violations)
      fprintf (a->violations, "%s\t%s\t%s\n", e->how, what, e->path);
    if (e->type == FD_GONE)
      continue;
    a->count[cls[i]]++;
    if (cls[i] != FD_AUDIT_INTACT && a->detail)
      fprintf (a->detail, "%s\t%s%s%s\n", fd_audit_class_name (cls[i]), e->path,
               lf[i] ? "\tlost+found/" : "", lf[i] ? lf[i] : "");
  }
}

int
fd_audit (const char *root, uint64_t seed, const struct fd_manifest *m,
          struct fd_audit *a, struct fm_err *err)
{
  enum fd_audit_class *cls = calloc (m->n ? m->n : 1, sizeof *cls);
  unsigned char *found = calloc (m->n ? m->n : 1, 1);
  char **lf = calloc (m->n ? m->n : 1, sizeof *lf);
  struct walk w = {root, m, 0};
  FILE *detail = a->detail, *violations = a->violations;
  size_t i;
  int rc = 0;

  memset (a, 0, sizeof *a);
  a->detail = detail;
  a->violations = violations;
  if (cls == NULL || found == NULL || lf == NULL ||
      (sorted = malloc ((m->n + 1) * sizeof *sorted)) == NULL) {
    rc = fm_fail (err, "out of memory");
    goto out;
  }
  for (i = 0; i < m->n; i++) {
    char full[4096];
    enum found f;

    if (fd_interrupted) {
      rc = fm_fail (err, "interrupted");
      goto out;
    }
    snprintf (full, sizeof full, "%s/%s", root, m->v[i].path);
    cls[i] = audit_entry (full, &m->v[i], seed, m->meta_only, a, &f);
    found[i] = (unsigned char)f;
  }
  scan_lost_found (root, m, cls, lf);
  find_lost_links (m, cls, sorted);
  tally (m, cls, found, lf, a);
  for (i = 0; i < m->n; i++)
    sorted[i] = &m->v[i];
  qsort (sorted, m->n, sizeof *sorted, cmp_entries);
  walk_state = &w;
  nftw (root, count_extra, 32, FTW_PHYS | FTW_MOUNT);
  a->count[FD_AUDIT_EXTRA] = w.extra;

out:
  free (sorted);
  sorted = NULL;
  for (i = 0; lf && i < m->n; i++)
    free (lf[i]);
  free (lf);
  free (found);
  free (cls);
  return rc;
}
