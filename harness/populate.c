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
static uint64_t
file_size (uint64_t seed, uint64_t i, uint64_t cap)
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

static int
push (struct fd_manifest *m, const struct fd_entry *e)
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

static int
write_file (const char *full, uint64_t seed, struct fd_entry *e, bool sparse,
            struct fm_err *err)
{
  unsigned char b[FD_BLOCK];
  uint64_t off, h = 0;
  int fd = create_file (full, e, err);

  if (fd == -1)
    return -1;
  for (off = 0; off < e->size; off += FD_BLOCK) {
    size_t n = e->size - off < FD_BLOCK ? e->size - off : FD_BLOCK;
    /* A sparse file's first half is a hole: it reads as zeros. */
    if (sparse && off + FD_BLOCK <= e->size / 2) {
      memset (b, 0, n);
    } else {
      fill_block (b, seed, e->id, off / FD_BLOCK);
      if (pwrite (fd, b, n, (off_t)off) != (ssize_t)n) {
        fm_fail (err, "%s: write: %s", full,
                 fd_strerror (errno ? errno : ENOSPC));
        close (fd);
        return -1;
      }
    }
    h = hash_bytes (h, b, n);
  }
  if (sparse && ftruncate (fd, (off_t)e->size) == -1) {
    fm_fail (err, "%s: %s", full, fd_strerror (errno));
    close (fd);
    return -1;
  }
  e->hash = h;
  if (close (fd) == -1) {
    return fm_fail (err, "%s: close: %s", full, fd_strerror (errno));
  }
  return 0;
}

/* Allocate a file without writing it (metadata only). */
static int
allocate_file (const char *full, struct fd_entry *e, struct fm_err *err)
{
  int fd = create_file (full, e, err), r;

  if (fd == -1)
    return -1;
  r = e->size ? posix_fallocate (fd, 0, (off_t)e->size) : 0;
  close (fd);
  if (r != 0) {
    return fm_fail (err, "%s: fallocate: %s", full, fd_strerror (r));
  }
  e->hash = 0; /* unwritten: reads as zeros */
  return 0;
}

/* Everything durable: sync(2), and fsync of the root directory, which
 * is what reaches a FUSE file system (sync(2) does not call into one).
 */
static void
sync_all (const char *root)
{
  int fd;

  sync ();
  if ((fd = open (root, O_RDONLY | O_DIRECTORY)) != -1) {
    fsync (fd);
    close (fd);
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
  time_t last; /* of the last progress line */
};

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
      sum += (double)file_size (o->seed, i, UINT64_MAX / 2);
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
  const struct fd_entry *to = &t->m->v[t->m->n - 1];
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
  return 0;
}

/* A file: allocated (metadata only) or written, now and then sparse. */
static int
make_file (struct tree *t, uint64_t i, struct fd_entry *e, const char *full,
           struct fm_err *err)
{
  const uint64_t seed = t->o->seed;

  if (t->o->meta_only) {
    e->type = FD_FILE;
    e->size = (uint64_t)((double)file_size (seed, t->files, UINT64_MAX / 2) *
                         t->scale) &
              ~(uint64_t)(FD_BLOCK - 1);
    if (allocate_file (full, e, err) == -1)
      return -1;
    t->m->bytes += e->size;
  } else {
    bool sparse = i % 31 == 5;
    e->type = sparse ? FD_SPARSE : FD_FILE;
    e->size = file_size (seed, i, t->cap);
    if (sparse)
      e->size += 8 * FD_BLOCK;
    if (write_file (full, seed, e, sparse, err) == -1)
      return -1;
    t->m->bytes += sparse ? e->size - e->size / 2 : e->size;
  }
  t->files++;
  return 0;
}

/* Entry i on disk: a directory, now and then a link, else a file. */
static int
make_entry (struct tree *t, uint64_t i, struct fd_entry *e, struct fm_err *err)
{
  const struct fd_manifest *m = t->m;
  char full[4096];

  place (t, i, e);
  snprintf (full, sizeof full, "%s/%s", t->root, e->path);
  if (e->type == FD_DIR)
    return make_dir (t, e, full, err);
  if (t->files > 10 && i % 23 == 7)
    return make_symlink (t, i, e, full, err);
  if (t->files > 10 && i % 29 == 11 && m->v[m->n - 1].type == FD_FILE)
    return make_hardlink (t, e, full, err);
  return make_file (t, i, e, full, err);
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

static int
add_entry (struct tree *t, uint64_t i, struct fm_err *err)
{
  struct fd_entry e = {.id = i + 1, .mode = 0644};

  if (fd_interrupted)
    return fm_fail (err, "interrupted");
  if (make_entry (t, i, &e, err) == -1)
    return -1;
  /* Before a crash, the first half is made durable and the second is
   * left in flight: the audit then tells what a crash costs.
   */
  if (t->o->no_sync && !t->half_synced && t->m->bytes >= t->target / 2) {
    sync_all (t->root);
    t->half_synced = true;
  }
  if (push (t->m, &e) == -1)
    return fm_fail (err, "out of memory");
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
  m->meta_only = o->meta_only;
  rc = plan (&t, err);
  for (i = 0;
       rc == 0 && (o->meta_only ? t.files < o->files : m->bytes < t.target);
       i++)
    rc = add_entry (&t, i, err);
  if (rc == 0 && !o->no_sync)
    sync_all (root);
  free (t.dirs);
  return rc;
}

void
fd_manifest_free (struct fd_manifest *m)
{
  free (m->v);
  memset (m, 0, sizeof *m);
}

static const char *const type_names[] = {"file", "sparse", "hardlink",
                                         "symlink", "dir"};

int
fd_manifest_write (const struct fd_manifest *m, const char *path,
                   struct fm_err *err)
{
  FILE *fp = fopen (path, "w");
  size_t i;

  if (fp == NULL) {
    return fm_fail (err, "%s: %s", path, fd_strerror (errno));
  }
  fprintf (fp, "# path\ttype\tsize\tmode\thash\tid\n");
  for (i = 0; i < m->n; i++)
    fprintf (fp, "%s\t%s\t%" PRIu64 "\t%04o\t%016" PRIx64 "\t%" PRIu64 "\n",
             m->v[i].path, type_names[m->v[i].type], m->v[i].size,
             (unsigned)m->v[i].mode, m->v[i].hash, m->v[i].id);
  if (fclose (fp) == EOF) {
    return fm_fail (err, "%s: %s", path, fd_strerror (errno));
  }
  return 0;
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

/* Read one file back block by block against what was written: its
 * class, and what each wrong block holds.
 */
static enum fd_audit_class
audit_file (const char *full, const struct fd_entry *e, uint64_t seed,
            bool meta_only, struct fd_audit *a)
{
  unsigned char b[FD_BLOCK], want[FD_BLOCK];
  uint64_t off = 0, bad = 0;
  struct stat st;
  int fd = open (full, O_RDONLY | O_CLOEXEC);

  if (fd == -1)
    return errno == ENOENT ? FD_AUDIT_MISSING : FD_AUDIT_UNREADABLE;
  if (fstat (fd, &st) == -1 || !S_ISREG (st.st_mode)) {
    close (fd);
    return FD_AUDIT_CORRUPTED;
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
    ssize_t n = pread (fd, b, FD_BLOCK, (off_t)off);
    if (n < 0) {
      close (fd);
      return FD_AUDIT_UNREADABLE;
    }
    if (n == 0)
      break;
    if (e->type == FD_SPARSE && off + FD_BLOCK <= e->size / 2)
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

/* Files found in lost+found, by the file id in their first data block. */
static void
scan_lost_found (const char *root, const struct fd_manifest *m,
                 enum fd_audit_class *cls)
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
    if ((fd = open (full, O_RDONLY | O_CLOEXEC)) == -1)
      continue;
    /* A sparse file's data starts half way; look at both ends. */
    if (pread (fd, b, 32, 0) == 32 && memcmp (b, magic, 8) == 0) {
      memcpy (&id, b + 8, 8);
      for (i = 0; i < m->n; i++)
        if (m->v[i].id == id && cls[i] == FD_AUDIT_MISSING &&
            m->v[i].type != FD_DIR && m->v[i].type != FD_SYMLINK)
          cls[i] = FD_AUDIT_LOST_FOUND;
    }
    close (fd);
  }
  closedir (d);
}

int
fd_audit (const char *root, uint64_t seed, const struct fd_manifest *m,
          struct fd_audit *a, struct fm_err *err)
{
  enum fd_audit_class *cls = calloc (m->n ? m->n : 1, sizeof *cls);
  struct walk w = {root, m, 0};
  size_t i;

  FILE *detail = a->detail;
  memset (a, 0, sizeof *a);
  a->detail = detail;
  if (cls == NULL || (sorted = malloc ((m->n + 1) * sizeof *sorted)) == NULL) {
    free (cls);
    return fm_fail (err, "out of memory");
  }
  for (i = 0; i < m->n; i++) {
    const struct fd_entry *e = &m->v[i];
    char full[4096];
    struct stat st;

    if (fd_interrupted) {
      free (cls);
      free (sorted);
      sorted = NULL;
      return fm_fail (err, "interrupted");
    }
    snprintf (full, sizeof full, "%s/%s", root, e->path);
    if (e->type == FD_DIR) {
      cls[i] = lstat (full, &st) == 0 && S_ISDIR (st.st_mode)
                   ? FD_AUDIT_INTACT
                   : FD_AUDIT_MISSING;
    } else if (e->type == FD_SYMLINK) {
      char t[256];
      ssize_t n = readlink (full, t, sizeof t - 1);
      if (n < 0)
        cls[i] = errno == ENOENT ? FD_AUDIT_MISSING : FD_AUDIT_UNREADABLE;
      else {
        t[n] = '\0';
        cls[i] =
            strcmp (t, e->target) == 0 ? FD_AUDIT_INTACT : FD_AUDIT_CORRUPTED;
      }
    } else
      cls[i] = audit_file (full, e, seed, m->meta_only, a);
  }
  scan_lost_found (root, m, cls);
  for (i = 0; i < m->n; i++) {
    if (m->v[i].type == FD_DIR)
      continue; /* classes count files; directories only guide */
    a->count[cls[i]]++;
    if (cls[i] != FD_AUDIT_INTACT && a->detail)
      fprintf (a->detail, "%s\t%s\n", fd_audit_class_name (cls[i]),
               m->v[i].path);
  }
  for (i = 0; i < m->n; i++)
    sorted[i] = &m->v[i];
  qsort (sorted, m->n, sizeof *sorted, cmp_entries);
  walk_state = &w;
  nftw (root, count_extra, 32, FTW_PHYS | FTW_MOUNT);
  a->count[FD_AUDIT_EXTRA] = w.extra;
  free (sorted);
  sorted = NULL;
  free (cls);
  return 0;
}
