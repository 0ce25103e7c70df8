/* futuredisk — harness: the audit of a populated tree (see populate.h). */
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
  if (n >= 32 && memcmp (b, fd_block_magic, 8) == 0) {
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
    if (fd_populate_in_hole (e, off))
      memset (want, 0, sizeof want);
    else
      fd_block_fill (want, seed, e->id, off / FD_BLOCK);
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
    if (pread (fd, b, 32, 0) == 32 && memcmp (b, fd_block_magic, 8) == 0) {
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
