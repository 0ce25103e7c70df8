/* futuredisk — harness: the workload trees beside the mixed one (--tree).
 *
 * Each is chosen by the seed alone and documented in futuredisk(1):
 *
 * hardlink-farm  a backup server's or mirror's rsnapshot tree: S = 7
 *                snapshots daily.6 (the oldest, made first) .. daily.0 of
 *                one directory tree; between snapshots each file changes
 *                with probability 0.10 (a new copy, new inode), is deleted
 *                with 0.02, and 2% new files appear; every other file is a
 *                hard link to the snapshot before's.  Sizes are the mixed
 *                tree's; the unique data (about 1.72 times the first
 *                snapshot) is the fill.
 * small-files    a mail spool or git object store: files of 1-16 KiB
 *                (uniform), in a 16 x 16 fan-out (0/0 .. f/f).
 * large-media    few large files: lognormal around 512 MiB (sigma 0.7),
 *                each between 1/64 and 1/4 of the data to write, in 8
 *                directories.
 * aged           8 rounds of creates up to 85% of the free space (at
 *                least the fill; fewer if the file system is full
 *                first), then deletes of each file with the
 *                probability that leaves about half the fill; then
 *                creates up to the fill.  The free space is left in
 *                holes between survivors, and later files are split
 *                across them.  Sizes are the mixed tree's.
 *
 * With --meta-only N the files are allocated, not written, and N is the
 * number of files (of hardlink-farm: in its first snapshot; aged: about
 * as many at the end); sizes are scaled to reach the fill, but
 * small-files's keep their bounds (fewer files when the fill comes
 * first).  None has a crash workload: that is the mixed tree's.
 */
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "errmsg.h"
#include "faultmodels/rng.h"
#include "populate-int.h"
#include "proc.h"

static const char *const tree_names[] = {
#define FD_TREE_NAME(id, name) name,
    FD_TREES (FD_TREE_NAME)
#undef FD_TREE_NAME
};

const char *
fd_tree_name (enum fd_tree t)
{
  return t < FD_NTREES ? tree_names[t] : "?";
}

int
fd_tree_parse (const char *what, const char *s, enum fd_tree *t,
               struct fm_err *err)
{
  size_t k;

  for (k = 0; k < FD_NTREES; k++)
    if (strcmp (s, tree_names[k]) == 0) {
      *t = (enum fd_tree)k;
      return 0;
    }
  return fm_fail (err,
                  "%s: '%.64s' is not mixed, hardlink-farm, small-files, "
                  "large-media or aged",
                  what, s);
}

#define SNAPSHOTS   7
#define CHANGE_RATE 0.10
#define DELETE_RATE 0.02
#define ADD_RATE    0.02
#define AGE_ROUNDS  8

/* A tree on its way. */
struct gen {
  const char *root;
  const struct fd_populate_opts *o;
  struct fd_manifest *m;
  uint64_t target; /* bytes of file data to end with */
  uint64_t room;   /* bytes free when it began */
  double scale;    /* metadata only: sizes times this */
  uint64_t next_id, files, links, deleted;
  int file_errno; /* errno of the last file that could not be made */
  struct fd_writeback wb;
  time_t last;
  char stage[32]; /* for the progress line */
};

static double
unit (const struct gen *g, uint64_t i, uint64_t k)
{
  return fm_unit (fm_hash (g->o->seed, FM_STREAM_POPULATE, i, 200 + k));
}

static void
progress (struct gen *g)
{
  FILE *fp = g->o->progress;

  if (fp && time (NULL) - g->last >= 2) {
    g->last = time (NULL);
    fprintf (fp,
             "populate %s (%s): %" PRIu64 " MiB in files (the fill: %" PRIu64
             " MiB), %" PRIu64 " files made, %" PRIu64 " links, %" PRIu64
             " deleted\n",
             fd_tree_name (g->o->tree), g->stage, g->m->bytes >> 20,
             g->target >> 20, g->files, g->links, g->deleted);
    fflush (fp);
  }
}

static int
add_dir (struct gen *g, const char *path, struct fm_err *err)
{
  struct fd_entry e = {.type = FD_DIR, .mode = 0755, .how = "mkdir"};
  char full[4096];

  if (snprintf (e.path, sizeof e.path, "%s", path) >= (int)sizeof e.path)
    return fm_fail (err, "%s: path too long", path);
  snprintf (full, sizeof full, "%s/%s", g->root, path);
  if (mkdir (full, e.mode) == -1)
    return fm_fail (err, "%s: %s", full, fd_strerror (errno));
  if (fd_manifest_push (g->m, &e) == -1)
    return fm_fail (err, "out of memory");
  return 0;
}

/* After a file failed: when the file system has no inode left, say so
 * (chunkfs has few) instead of only ENOSPC.  -1.
 */
static int
out_of_inodes (const struct gen *g, struct fm_err *err)
{
  struct statvfs sv;

  if (statvfs (g->root, &sv) == 0 && sv.f_files > 0 && sv.f_ffree == 0)
    return fm_fail (err,
                    "--tree %s: out of inodes after %" PRIu64
                    " files (the file system has %" PRIu64
                    "): a smaller --fill or a bigger --size",
                    fd_tree_name (g->o->tree), g->files, (uint64_t)sv.f_files);
  return -1;
}

/* A new file of size bytes at path: its index in the manifest, or -1. */
static ssize_t
add_file (struct gen *g, const char *path, uint64_t size, struct fm_err *err)
{
  struct fd_entry e = {
      .type = FD_FILE, .mode = 0644, .how = "write", .size = size};
  char full[4096];

  if (fd_interrupted)
    return fm_fail (err, "interrupted");
  if (snprintf (e.path, sizeof e.path, "%s", path) >= (int)sizeof e.path)
    return fm_fail (err, "%s: path too long", path);
  e.id = ++g->next_id;
  snprintf (full, sizeof full, "%s/%s", g->root, path);
  if (fd_populate_file (full, g->o->seed, &e, g->m, err) == -1) {
    g->file_errno = errno;
    return out_of_inodes (g, err);
  }
  if (fd_manifest_push (g->m, &e) == -1)
    return fm_fail (err, "out of memory");
  g->m->bytes += size;
  g->files++;
  if (fd_populate_writeback (g->root, g->m, &g->wb, false, err) == -1)
    return -1;
  progress (g);
  return (ssize_t)g->m->n - 1;
}

/* A hard link at path to entry j (a file): its index, or -1. */
static ssize_t
add_link (struct gen *g, size_t j, const char *path, struct fm_err *err)
{
  struct fd_entry e = g->m->v[j];
  char full[4096], to[4096];

  if (fd_interrupted)
    return fm_fail (err, "interrupted");
  if (e.type == FD_HARDLINK) /* link to the first name */
    snprintf (e.target, sizeof e.target, "%s", g->m->v[j].target);
  else
    snprintf (e.target, sizeof e.target, "%s", g->m->v[j].path);
  if (snprintf (e.path, sizeof e.path, "%s", path) >= (int)sizeof e.path)
    return fm_fail (err, "%s: path too long", path);
  e.type = FD_HARDLINK;
  snprintf (full, sizeof full, "%s/%s", g->root, path);
  snprintf (to, sizeof to, "%s/%s", g->root, g->m->v[j].path);
  if (link (to, full) == -1)
    return fm_fail (err, "%s: %s", full, fd_strerror (errno));
  g->m->v[j].linked = true;
  if (fd_manifest_push (g->m, &e) == -1)
    return fm_fail (err, "out of memory");
  g->links++;
  progress (g);
  return (ssize_t)g->m->n - 1;
}

/* A size from the mixed tree's distribution (draw i), scaled, in whole
 * blocks.
 */
static uint64_t
mixed_size (const struct gen *g, uint64_t i)
{
  /* Written, no file above an eighth of the data (as the mixed tree);
   * allocated, the cap is the scale's business.
   */
  uint64_t cap = g->o->meta_only ? UINT64_MAX / 2 : g->target / 8 + FD_BLOCK;
  double s = (double)fd_populate_size (g->o->seed, i, cap);
  uint64_t b = (uint64_t)(s * g->scale) & ~(uint64_t)(FD_BLOCK - 1);

  return b ? b : FD_BLOCK;
}

/* Metadata only: the scale that makes n draws of size(g, i) come to
 * the fill.
 */
static void
scale_to_fill (struct gen *g, uint64_t n,
               double (*size) (const struct gen *g, uint64_t i))
{
  double sum = 0;
  uint64_t i;

  g->scale = 1;
  if (!g->o->meta_only)
    return;
  for (i = 0; i < n; i++)
    sum += size (g, i);
  if (sum > 0)
    g->scale = (double)g->target / sum;
}

static double
raw_mixed (const struct gen *g, uint64_t i)
{
  return (double)fd_populate_size (g->o->seed, i, UINT64_MAX / 2);
}

/* ---- small-files ---- */

static int
small_files (struct gen *g, struct fm_err *err)
{
  char path[64];
  uint64_t i;
  int a, b;

  for (a = 0; a < 16; a++) {
    snprintf (path, sizeof path, "%x", a);
    if (add_dir (g, path, err) == -1)
      return -1;
    for (b = 0; b < 16; b++) {
      snprintf (path, sizeof path, "%x/%x", a, b);
      if (add_dir (g, path, err) == -1)
        return -1;
    }
  }
  snprintf (g->stage, sizeof g->stage, "files");
  for (i = 0;
       g->m->bytes < g->target && (!g->o->meta_only || g->files < g->o->files);
       i++) {
    uint64_t size = 1024 + (uint64_t)(unit (g, i, 0) * 15 * 1024 + 0.5);
    unsigned d = (unsigned)(unit (g, i, 1) * 256) & 255;
    snprintf (path, sizeof path, "%x/%x/m%" PRIu64, d >> 4, d & 15, i);
    if (add_file (g, path, size, err) == -1)
      return -1;
  }
  return 0;
}

/* ---- large-media ---- */

static double
raw_media (const struct gen *g, uint64_t i)
{
  double z =
      sqrt (-2 * log (1 - unit (g, i, 2))) * cos (2 * M_PI * unit (g, i, 3));

  return exp (log (512.0 * 1048576) + 0.7 * z);
}

static int
large_media (struct gen *g, struct fm_err *err)
{
  double lo = (double)g->target / 64, hi = (double)g->target / 4;
  char path[64];
  uint64_t i;
  int k;

  for (k = 0; k < 8; k++) {
    snprintf (path, sizeof path, "media%d", k);
    if (add_dir (g, path, err) == -1)
      return -1;
  }
  scale_to_fill (g, g->o->files, raw_media);
  snprintf (g->stage, sizeof g->stage, "files");
  for (i = 0;
       g->o->meta_only ? g->files < g->o->files : g->m->bytes < g->target;
       i++) {
    double s = raw_media (g, i) * g->scale;
    uint64_t size;
    if (!g->o->meta_only) {
      s = s < lo ? lo : s > hi ? hi : s;
      if (s > (double)(g->target - g->m->bytes))
        s = (double)(g->target - g->m->bytes); /* the last one fits */
    }
    size = (uint64_t)s & ~(uint64_t)(FD_BLOCK - 1);
    snprintf (path, sizeof path, "media%d/v%" PRIu64 ".mkv",
              (int)(unit (g, i, 4) * 8) & 7, i);
    if (add_file (g, path, size ? size : FD_BLOCK, err) == -1)
      return -1;
  }
  return 0;
}

/* ---- aged ---- */

/* Delete each file with probability q per mille (round r), keeping the
 * manifest in order without them.
 */
static int
age_deletes (struct gen *g, unsigned r, uint64_t q, struct fm_err *err)
{
  struct fd_manifest *m = g->m;
  size_t i, kept = 0;

  for (i = 0; i < m->n; i++) {
    struct fd_entry *e = &m->v[i];
    char full[4096];
    if (e->type == FD_FILE &&
        fm_below (fm_hash (g->o->seed, FM_STREAM_POPULATE, e->id, 300 + r),
                  1000) < q) {
      snprintf (full, sizeof full, "%s/%s", g->root, e->path);
      if (unlink (full) == -1)
        return fm_fail (err, "%s: unlink: %s", full, fd_strerror (errno));
      m->bytes -= e->size;
      g->deleted++;
      continue;
    }
    m->v[kept++] = *e;
  }
  m->n = kept;
  return 0;
}

/* Create files (draws from *i on) until the data reaches upto.  With
 * full_ok, a full file system ends the creates early (btrfs, say, fills
 * before 85% of what statvfs said was free): the file that did not fit
 * is removed.
 */
static int
age_creates (struct gen *g, uint64_t upto, bool full_ok, uint64_t *i,
             struct fm_err *err)
{
  char path[64], full[4096];

  for (; g->m->bytes < upto; (*i)++) {
    uint64_t size = mixed_size (g, *i);
    if (size > upto - g->m->bytes)
      size = (upto - g->m->bytes + FD_BLOCK - 1) & ~(uint64_t)(FD_BLOCK - 1);
    snprintf (path, sizeof path, "d%d/a%" PRIu64,
              (int)(unit (g, *i, 5) * 16) & 15, *i);
    g->file_errno = 0;
    if (add_file (g, path, size, err) == -1) {
      if (!full_ok || g->file_errno != ENOSPC)
        return -1;
      snprintf (full, sizeof full, "%s/%s", g->root, path);
      if (unlink (full) == -1 && errno != ENOENT)
        return fm_fail (err, "%s: unlink: %s", full, fd_strerror (errno));
      (*i)++;
      return 0;
    }
  }
  return 0;
}

static int
aged (struct gen *g, struct fm_err *err)
{
  uint64_t high = (uint64_t)(0.85 * (double)g->room), i = 0, q;
  char path[16];
  unsigned r;
  int k;

  if (high < g->target)
    high = g->target;
  /* Of `high` bytes, keep about half the fill. */
  q = high ? (uint64_t)(1000 * (1 - (double)g->target / 2 / (double)high)) : 0;
  for (k = 0; k < 16; k++) {
    snprintf (path, sizeof path, "d%d", k);
    if (add_dir (g, path, err) == -1)
      return -1;
  }
  scale_to_fill (g, g->o->files, raw_mixed);
  for (r = 0; r < AGE_ROUNDS; r++) {
    snprintf (g->stage, sizeof g->stage, "round %u of %d", r + 1, AGE_ROUNDS);
    if (age_creates (g, high, true, &i, err) == -1 ||
        fd_populate_writeback (g->root, g->m, &g->wb, true, err) == -1 ||
        age_deletes (g, r, q, err) == -1)
      return -1;
    /* The deletes took entries out of the manifest: all before its end
     * are written back.  Their blocks are the allocator's again only
     * once the journal commits them: here, rather than when its timer
     * says, so the next round's files land in the same place each run.
     */
    g->wb.from = g->m->n;
    g->wb.bytes = g->m->bytes;
    fd_populate_sync (g->root);
  }
  snprintf (g->stage, sizeof g->stage, "last creates");
  return age_creates (g, g->target, false, &i, err);
}

/* ---- hardlink-farm ---- */

/* The first snapshot's tree: n files of the mixed sizes whose unique
 * data over all snapshots comes to the fill, in 1 + n/8 directories
 * (each under a uniformly chosen earlier one).
 */
struct farm {
  uint64_t n, ndirs;
  char (*dirs)[160]; /* relative to a snapshot; "" is its top */
  uint32_t *dir;     /* each file's directory */
  ssize_t *cur;      /* each file's current version in the manifest;
                        -1: deleted */
};

/* Files added per snapshot after the first. */
static uint64_t
farm_adds (const struct farm *f)
{
  return (uint64_t)(ADD_RATE * (double)f->n + 0.5);
}

/* Metadata only: the sizes (unscaled) of every file version the farm
 * will make, as farm_file decides them, so the scale is exact: the
 * mixed sizes' heavy tail makes an estimate from the first snapshot
 * miss by half.  f->cur is scratch.
 */
static double
farm_raw_total (const struct gen *g, struct farm *f)
{
  uint64_t n = f->n, j, k;
  double total = 0;
  unsigned s;

  for (j = 0; j < n; j++) {
    f->cur[j] = 0;
    total += raw_mixed (g, j);
  }
  for (s = 1; s < SNAPSHOTS; s++) {
    for (j = 0; j < n; j++) {
      double r = unit (g, j * SNAPSHOTS + s, 6);
      if (f->cur[j] < 0)
        continue;
      if (r < DELETE_RATE)
        f->cur[j] = -1;
      else if (r < DELETE_RATE + CHANGE_RATE)
        total += raw_mixed (g, ((uint64_t)s << 40) | j);
    }
    for (k = 0; k < farm_adds (f); k++, n++) {
      f->cur[n] = 0;
      total += raw_mixed (g, n);
    }
  }
  return total;
}

static int
farm_plan (struct gen *g, struct farm *f, struct fm_err *err)
{
  double copies = 1 + (SNAPSHOTS - 1) * (CHANGE_RATE + ADD_RATE), sum = 0;
  uint64_t k, cap;

  if (g->o->meta_only)
    f->n = g->o->files;
  else
    for (f->n = 0; sum * copies < (double)g->target; f->n++)
      sum += (double)mixed_size (g, f->n);
  f->ndirs = 1 + f->n / 8;
  cap = f->n + (farm_adds (f) + 1) * SNAPSHOTS;
  f->dirs = calloc (f->ndirs, sizeof *f->dirs);
  f->dir = calloc (cap, sizeof *f->dir);
  f->cur = calloc (cap, sizeof *f->cur);
  if (f->dirs == NULL || f->dir == NULL || f->cur == NULL)
    return fm_fail (err, "out of memory");
  if (g->o->meta_only && f->n > 0)
    g->scale = (double)g->target / farm_raw_total (g, f);
  for (k = 1; k < f->ndirs; k++) {
    uint64_t p = fm_below (fm_hash (g->o->seed, FM_STREAM_POPULATE, k, 400), k);
    char parent[sizeof f->dirs[0]];
    /* p < k, but the compiler cannot know the two do not overlap. */
    memcpy (parent, f->dirs[p], sizeof parent);
    if (snprintf (f->dirs[k], sizeof f->dirs[k], "%s%sd%" PRIu64, parent,
                  p ? "/" : "", k) >= (int)sizeof f->dirs[k])
      snprintf (f->dirs[k], sizeof f->dirs[k], "d%" PRIu64, k); /* too deep */
  }
  for (k = 0; k < cap; k++)
    f->dir[k] = (uint32_t)fm_below (
        fm_hash (g->o->seed, FM_STREAM_POPULATE, k, 401), f->ndirs);
  return 0;
}

/* File j of snapshot `snap` (number s): new, changed, deleted or a
 * hard link to the snapshot before's version.
 */
static int
farm_file (struct gen *g, struct farm *f, uint64_t j, unsigned s,
           const char *snap, struct fm_err *err)
{
  double r = unit (g, j * SNAPSHOTS + s, 6);
  char path[256];
  uint64_t draw = ((uint64_t)s << 40) | j;

  if (s > 0 && f->cur[j] < 0)
    return 0; /* deleted earlier */
  snprintf (path, sizeof path, "%s/%s%sf%" PRIu64, snap, f->dirs[f->dir[j]],
            f->dirs[f->dir[j]][0] ? "/" : "", j);
  if (s > 0 && r < DELETE_RATE) {
    f->cur[j] = -1;
    g->deleted++;
    return 0;
  }
  if (s > 0 && r >= DELETE_RATE + CHANGE_RATE)
    f->cur[j] = add_link (g, (size_t)f->cur[j], path, err);
  else
    f->cur[j] = add_file (g, path, mixed_size (g, s ? draw : j), err);
  return f->cur[j] < 0 ? -1 : 0;
}

static int
farm_snapshot (struct gen *g, struct farm *f, unsigned s, uint64_t *nfiles,
               struct fm_err *err)
{
  char snap[32], path[256];
  uint64_t j, k, add = s ? farm_adds (f) : 0;

  snprintf (snap, sizeof snap, "daily.%u", SNAPSHOTS - 1 - s);
  snprintf (g->stage, sizeof g->stage, "snapshot %s", snap);
  if (add_dir (g, snap, err) == -1)
    return -1;
  for (k = 1; k < f->ndirs; k++) {
    snprintf (path, sizeof path, "%s/%s", snap, f->dirs[k]);
    if (add_dir (g, path, err) == -1)
      return -1;
  }
  for (j = 0; j < *nfiles; j++)
    if (farm_file (g, f, j, s, snap, err) == -1)
      return -1;
  for (k = 0; k < add; k++, (*nfiles)++) {
    f->cur[*nfiles] = -1;
    if (farm_file (g, f, *nfiles, 0, snap, err) == -1)
      return -1;
  }
  return 0;
}

static int
hardlink_farm (struct gen *g, struct fm_err *err)
{
  struct farm f = {0};
  uint64_t nfiles;
  unsigned s;
  int rc = farm_plan (g, &f, err);

  nfiles = f.n;
  for (s = 0; rc == 0 && s < SNAPSHOTS; s++)
    rc = farm_snapshot (g, &f, s, &nfiles, err);
  free (f.dirs);
  free (f.dir);
  free (f.cur);
  return rc;
}

/* ---- all trees ---- */

int
fd_populate_tree (const char *root, const struct fd_populate_opts *o,
                  struct fd_manifest *m, struct fm_err *err)
{
  struct gen g = {
      .root = root, .o = o, .m = m, .scale = 1, .last = time (NULL)};
  struct statvfs sv;
  uint64_t total, used;
  size_t k;
  int rc = -1;

  if (o->no_sync)
    return fm_fail (err, "--tree %s: no crash workload (the mixed tree has it)",
                    fd_tree_name (o->tree));
  if (statvfs (root, &sv) == -1)
    return fm_fail (err, "%s: %s", root, fd_strerror (errno));
  total = (uint64_t)sv.f_blocks * sv.f_frsize;
  used = (uint64_t)(sv.f_blocks - sv.f_bfree) * sv.f_frsize;
  g.room = total - used;
  g.wb.batch = fd_writeback_batch (total);
  g.target = (uint64_t)(o->fill_pct / 100 * (double)total);
  g.target = g.target > used ? g.target - used : 0;
  switch (o->tree) {
    case FD_TREE_HARDLINK_FARM:
      rc = hardlink_farm (&g, err);
      break;
    case FD_TREE_SMALL_FILES:
      rc = small_files (&g, err);
      break;
    case FD_TREE_LARGE_MEDIA:
      rc = large_media (&g, err);
      break;
    case FD_TREE_AGED:
      rc = aged (&g, err);
      break;
    default:
      return fm_fail (err, "tree %d: not a tree of trees.c", (int)o->tree);
  }
  if (rc == -1 || fd_populate_writeback (root, m, &g.wb, true, err) == -1)
    return -1;
  /* Everything durable at the end, as the mixed tree without a crash. */
  fd_populate_sync (root);
  for (k = 0; k < m->n; k++) {
    m->v[k].promise = FD_PROMISE_DURABLE;
    m->v[k].how = "sync";
    m->v[k].promised_at = 1;
  }
  return o->promised ? o->promised (o->opaque, 1, err) : 0;
}
