/* futuredisk — harness: populate a file system and audit it afterwards.
 *
 * Populating writes a directory tree chosen by the seed alone: file sizes
 * lognormal with a Pareto tail, directories of realistic depth and
 * fan-out, hard links, symlinks and sparse files, up to a share of the
 * file system's capacity.  Every 4 KiB block of file data starts with a
 * header (magic, file id, block index, generation) so the audit can tell
 * a stale block, a block of another file (misdirected) and a zeroed block
 * apart.  The manifest remembers each file's path, type, size, mode and
 * content hash, and what was promised about it when the power went.
 *
 * Before a crash (no_sync), the first half of the tree is made durable by
 * syncfs(2); the rest is the crash workload, a seeded mix of the persistence
 * patterns applications rely on (CrashMonkey's and ALICE's persistence
 * points): write then fsync of the file and its directories, create then
 * fsync of the directory only, atomic replace (a temporary written and
 * fsynced, renamed over the old file, with and without a directory
 * fsync), append then fdatasync, a hard link or an unlink then fsync of
 * the directory, a chain of new directories, and plain unsynced writes.
 *
 * Auditing reads every file back and puts each in one class (what was
 * found), and in one durability class (what was found against what was
 * promised).
 */
#ifndef FUTUREDISK_POPULATE_H
#define FUTUREDISK_POPULATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "faultmodels/error.h"

#define FD_BLOCK 4096

enum fd_ftype {
  FD_FILE,
  FD_SPARSE,
  FD_HARDLINK,
  FD_SYMLINK,
  FD_DIR,
  FD_GONE /* unlinked, or a temporary renamed away: must not be there */
};

/* What the populate promised about an entry when it ended. */
enum fd_promise {
  FD_PROMISE_NONE,       /* in flight: a crash may lose it */
  FD_PROMISE_DURABLE,    /* name, size and content (FD_GONE: its absence) */
  FD_PROMISE_NAME,       /* the name exists; the content was not synced */
  FD_PROMISE_OLD_OR_NEW, /* an atomic rename in flight: the old (durable)
                            version or the new one, never neither */
  FD_PROMISE_PREFIX      /* an append in flight: the first old_size bytes
                            as they were (a crash point before its
                            fdatasync) */
};

struct fd_entry {
  char path[256]; /* relative to the mount point */
  enum fd_ftype type;
  uint64_t id;   /* file id in the block headers */
  uint64_t size; /* bytes (symlink: target length) */
  uint32_t mode;
  uint64_t hash;    /* content hash (symlink: of the target) */
  char target[256]; /* symlink target, hard link's original */
  enum fd_promise promise;
  const char *how; /* the persistence pattern: "sync", "fsync", ... */
  bool linked;     /* has a hard link (its content is shared) */
  /* FD_PROMISE_OLD_OR_NEW: the version the rename replaced (for an
   * append, the same id at its size before)
   */
  uint64_t old_id, old_size;
  /* When the promise was made: the number of promises the populate had
   * made then (1, 2, ...; 0: none), and that of the old version's.
   */
  uint64_t promised_at, old_promised_at;
};

struct fd_manifest {
  struct fd_entry *v;
  size_t n, cap;
  uint64_t bytes; /* file data written (or allocated) */
  bool meta_only; /* files allocated, not written: they read as zeros */
  /* With meta_only on a file system that cannot allocate without writing
   * (fd_populate_opts.unallocated): the inode numbers of the files made
   * with their size and no blocks, for the adapter to allocate once the
   * file system is unmounted (fd_fs.allocate).  Not saved.
   */
  bool deferred;
  uint64_t *unallocated;
  size_t nunallocated;
};

/* The shape of the tree (--tree; harness/workload/trees.c and futuredisk(1)
 * document the distributions).
 */
#define FD_TREES(X)                                                            \
  X (MIXED, "mixed")                                                           \
  X (HARDLINK_FARM, "hardlink-farm")                                           \
  X (SMALL_FILES, "small-files")                                               \
  X (LARGE_MEDIA, "large-media")                                               \
  X (AGED, "aged")

enum fd_tree {
#define FD_TREE_ENUM(id, name) FD_TREE_##id,
  FD_TREES (FD_TREE_ENUM)
#undef FD_TREE_ENUM
  FD_NTREES
};

extern const char *fd_tree_name (enum fd_tree t);

/* A tree's name into *t; -1 with err naming what (the option or key)
 * and the value.
 */
extern int fd_tree_parse (const char *what, const char *s, enum fd_tree *t,
                          struct fm_err *err);

struct fd_populate_opts {
  uint64_t seed;
  enum fd_tree tree; /* FD_TREE_MIXED: the default */
  double fill_pct;   /* share of the capacity to fill with file data */
  /* Metadata only: allocate the files (fallocate: unwritten extents)
   * instead of writing them, so an 8 TB disk fills to 50% while the
   * plugin stores only metadata.  There are then exactly `files` files,
   * their sizes from the same distribution scaled up to the fill.
   */
  bool meta_only;
  uint64_t files;
  /* With meta_only: the file system cannot allocate without writing
   * (ext3: no fallocate), so each file is made sparse at its size and
   * its inode number kept in the manifest's `unallocated`.
   */
  bool unallocated;
  FILE *progress; /* NULL, or a stream for a progress line */
  bool no_sync;   /* sync half way, leave the rest in flight (a crash
                     follows) */
  /* Called as each promise is made (after the sync, fsync or rename
   * returned) with the number made so far; NULL: nobody asks.  -1 (with
   * err) ends the populate.
   */
  int (*promised) (void *opaque, uint64_t n, struct fm_err *err);
  void *opaque;
};

/* Populate `root` (a mounted file system). */
extern int fd_populate (const char *root, const struct fd_populate_opts *o,
                        struct fd_manifest *m, struct fm_err *err);

extern void fd_manifest_free (struct fd_manifest *m);

/* Write e's content (populated with seed) at root/e->path, replacing
 * what is there: a file or hard link of the manifest, or with old set,
 * the version an atomic rename replaced.  What a lost rename leaves, for
 * the tests of the audit.
 */
extern int fd_entry_write (const char *root, uint64_t seed,
                           const struct fd_entry *e, bool old,
                           struct fm_err *err);

/* The manifest as the promises stood when only the first `promises` had
 * been made (a crash point): a promise made later does not hold yet -
 * what it made is in flight, and a file it replaced or appended to is
 * owed in its old version.  Into out (allocated; fd_manifest_free).
 */
extern int fd_manifest_at (const struct fd_manifest *m, uint64_t promises,
                           struct fd_manifest *out);

/* Write the manifest as TSV: path, type, size, mode, hash, id, promise,
 * how.
 */
extern int fd_manifest_write (const struct fd_manifest *m, const char *path,
                              struct fm_err *err);

/* The manifest with every field, kept with a populated disk that later
 * trials clone (fd_trial_save_base), and read back by them: what
 * fd_manifest_load gives is what the populate made.
 */
extern int fd_manifest_save (const struct fd_manifest *m, const char *path,
                             struct fm_err *err);
extern int fd_manifest_load (const char *path, struct fd_manifest *m,
                             struct fm_err *err);

/* Audit classes: the trial record's `audit` (harness/futuredisk.pod,
 * harness/SCHEMA.md).  link_lost: a name of a hard-linked file is gone
 * while another of its names reads back intact (the link was lost, not
 * the file); a file all of whose names are gone is missing under each.
 */
#define FD_AUDIT_CLASSES(X)                                                    \
  X (INTACT, "intact")                                                         \
  X (LOST_FOUND, "lost_found")                                                 \
  X (PARTIAL, "partial")                                                       \
  X (CORRUPTED, "corrupted")                                                   \
  X (UNREADABLE, "unreadable")                                                 \
  X (MISSING, "missing")                                                       \
  X (LINK_LOST, "link_lost")                                                   \
  X (EXTRA, "extra")

enum fd_audit_class {
#define FD_AUDIT_ENUM(id, name) FD_AUDIT_##id,
  FD_AUDIT_CLASSES (FD_AUDIT_ENUM)
#undef FD_AUDIT_ENUM
  FD_AUDIT_NCLASSES
};

extern const char *fd_audit_class_name (enum fd_audit_class c);

/* Durability classes: what was found against what was promised.  A
 * broken durable promise is a violation; losing what was in flight is
 * allowed.  Every entry but a directory is in exactly one.
 */
#define FD_DURABILITY_CLASSES(X)                                               \
  X (DURABLE_INTACT, "durable_intact")                                         \
  X (DURABLE_BROKEN, "durable_broken")                                         \
  X (INFLIGHT_LOST, "inflight_lost")                                           \
  X (INFLIGHT_SURVIVED, "inflight_survived")

enum fd_durability_class {
#define FD_DURABILITY_ENUM(id, name) FD_##id,
  FD_DURABILITY_CLASSES (FD_DURABILITY_ENUM)
#undef FD_DURABILITY_ENUM
  FD_DURABILITY_NCLASSES
};

extern const char *fd_durability_class_name (enum fd_durability_class c);

struct fd_audit {
  uint64_t count[FD_AUDIT_NCLASSES];
  uint64_t durability[FD_DURABILITY_NCLASSES];
  /* Of the corrupted and partial files' bad blocks: what they hold. */
  uint64_t zeroed_blocks, stale_blocks, foreign_blocks, garbled_blocks;
  FILE *detail; /* NULL, or "class\tpath" per file not intact; a file
                 * found in lost+found: "lost_found\tpath\tlost+found/NAME" */
  /* NULL, or "how\tfound\tpath" per broken promise; found is an audit
   * class, "resurrected" (an unlink undone) or "neither" (a rename that
   * left neither version).
   */
  FILE *violations;
};

/* Read back every file of the manifest under root (populated with
 * `seed`); classify.
 */
extern int fd_audit (const char *root, uint64_t seed,
                     const struct fd_manifest *m, struct fd_audit *a,
                     struct fm_err *err);

/* full opened read-only if it is a regular file: a repair can leave a
 * fifo (whose open waits for a writer) or a device node (whose open
 * reaches the host's device) where a file was.  -1 with errno (EINVAL:
 * not a regular file).
 */
extern int fd_open_regular (const char *full);

#endif
