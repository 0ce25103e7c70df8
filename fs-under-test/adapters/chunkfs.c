/* futuredisk — fs-under-test: the chunkfs adapter (the bundled file
 * system, fs-under-test/chunkfs).
 *
 * Mounted with its own FUSE command as a fuseblk mount (-o blkdev), so
 * umount(8) waits until the daemon has synced and marked every chunk
 * clean.  The harness's check is forced (-f) like e2fsck -f, so a fault
 * in a clean chunk is found; the incremental check a crash calls for is
 * fsck.chunkfs without -f (the chunkfs benchmark measures it).
 * fsck.chunkfs exits with e2fsck's bits; -t prints "Pass N: time S s".
 *
 * The block-type map, and where a damaged file's blocks are (FUSE has no
 * FIEMAP), read the file system with libchunkfs itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "chunkfs/fs.h"
#include "fsadapter.h"

/* "Pass 2: time 0.000123 s (directory entries and back-references)" */
static bool
chunkfs_pass (const char *line, const char *end, struct fd_pass *p)
{
  int pass;
  double s;

  if (sscanf (line, "Pass %d: time %lf s", &pass, &s) != 2)
    return false;
  snprintf (p->name, sizeof p->name, "pass %d", pass);
  p->seconds = s;
  return true;
}

static size_t
chunkfs_passes (const char *out, struct fd_pass *p, size_t max)
{
  return fd_pass_lines (out, chunkfs_pass, p, max);
}

/* The inode of `path` (relative to the root); its parent's in *parent. */
static int
resolve (struct cfs_fs *fs, const char *path, uint64_t *ino, uint64_t *parent,
         struct fm_err *err)
{
  char buf[4096], *part, *save = NULL;
  struct cfs_attr a;
  uint64_t at = 1, up = 1;
  int r;

  snprintf (buf, sizeof buf, "%s", path);
  for (part = strtok_r (buf, "/", &save); part;
       part = strtok_r (NULL, "/", &save)) {
    if ((r = cfs_lookup (fs, at, part, &a)) < 0) {
      return fm_fail (err, "chunkfs: %s: %s", path, strerror (-r));
    }
    up = at;
    at = a.ino;
  }
  *ino = at;
  *parent = up;
  return 0;
}

/* libchunkfs read-only on dev (a device, or the disk's NBD URI). */
static struct cfs_fs *
open_ro (const char *dev, struct cfs_io **io, struct fm_err *err)
{
  struct cfs_err e;
  struct cfs_fs *fs;

  if ((*io = cfs_open (dev, false, &e)) == NULL) {
    fm_fail (err, "chunkfs: %s", e.msg);
    return NULL;
  }
  if ((fs = cfs_fs_open (*io, 0, &e)) == NULL) {
    fm_fail (err, "chunkfs: %s", e.msg);
    cfs_close (*io, &e);
  }
  return fs;
}

static void
close_ro (struct cfs_fs *fs, struct cfs_io *io)
{
  struct cfs_err e;

  cfs_fs_abandon (fs);
  cfs_close (io, &e);
}

static const struct {
  const char *type;
  enum cfs_where where;
  bool of_parent; /* the file's directory's, not the file's */
} kinds[] = {
    {"inode", CFS_AT_INODE, false},
    {"data", CFS_AT_DATA, false},
    {"extent", CFS_AT_EXTENT, false},
    {"dir", CFS_AT_DATA, true},
    {"header", CFS_AT_HEADER, false},
    {"block-bitmap", CFS_AT_BLOCK_BITMAP, false},
    {"inode-bitmap", CFS_AT_INODE_BITMAP, false},
    {"backrefs", CFS_AT_BACKREFS, true},
};

static int
chunkfs_locate (const char *dev, const char *type, const char *path,
                uint64_t *offset, uint64_t *length, struct fm_err *err)
{
  struct cfs_io *io;
  struct cfs_fs *fs;
  uint64_t ino, parent, abs = 0;
  size_t i;
  int r = -1;

  *length = CFS_BLOCK;
  if (strcmp (type, "superblock") == 0 || strcmp (type, "dirty-map") == 0) {
    *offset = (uint64_t)(type[0] == 's' ? CFS_SUPER_BLOCK : CFS_MAP_BLOCK) *
              CFS_BLOCK;
    return 0;
  }
  for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (strcmp (kinds[i].type, type) == 0)
      break;
  if (i == sizeof kinds / sizeof kinds[0]) {
    return fm_fail (err, "chunkfs: no block type '%.32s'", type);
  }
  if ((fs = open_ro (dev, &io, err)) == NULL)
    return -1;
  if (resolve (fs, path, &ino, &parent, err) == 0) {
    int rc = cfs_locate (fs, kinds[i].of_parent ? parent : ino, kinds[i].where,
                         &abs);
    if (rc < 0)
      fm_fail (err, "chunkfs: %s: no %s block (%s)", path, type,
               rc == -ENOENT ? "it has none" : strerror (-rc));
    else {
      *offset = abs * CFS_BLOCK;
      r = 0;
    }
  }
  close_ro (fs, io);
  return r;
}

/* Device byte ranges from cfs_file_runs's blocks. */
struct ranges {
  fd_range_fn *fn;
  void *opaque;
};

static int
to_bytes (void *opaque, uint64_t lblk, uint64_t abs, uint64_t count)
{
  struct ranges *x = opaque;

  (void)lblk;
  return x->fn (x->opaque, abs * CFS_BLOCK, count * CFS_BLOCK);
}

/* FUSE has no FIEMAP: libchunkfs reads the map off the disk, through
 * its NBD server (fsadapter.h).  The mount's daemon may hold changes not
 * yet written, but the audit only read, and the repaired file system it
 * mounted was clean on the disk.  The inode comes from the mount
 * (st_ino is chunkfs's inode reference); a stat that fails (a directory
 * block unreadable) falls back to libchunkfs's own lookup.
 */
static int
chunkfs_file_ranges (const char *uri, const char *root, const char *path,
                     fd_range_fn *fn, void *opaque, struct fm_err *err)
{
  struct ranges x = {fn, opaque};
  char full[4096];
  struct cfs_io *io;
  struct cfs_fs *fs;
  struct stat st;
  uint64_t ino, parent;
  int r = 0, rc;

  snprintf (full, sizeof full, "%s/%s", root, path);
  if ((fs = open_ro (uri, &io, err)) == NULL)
    return -1;
  if (stat (full, &st) == 0)
    ino = st.st_ino;
  else if (resolve (fs, path, &ino, &parent, err) == -1) {
    close_ro (fs, io);
    return -1;
  }
  if ((rc = cfs_file_runs (fs, ino, to_bytes, &x)) < 0)
    r = fm_fail (err, "chunkfs: %s: its blocks: %s (%s)", path, strerror (-rc),
                 cfs_fs_error (fs));
  close_ro (fs, io);
  return r; /* a stop from fn is no error */
}

const struct fd_fs fd_fs_chunkfs = {
    .name = "chunkfs",
    .mount_type = "fuseblk",
    .min_size = (16 + 32768) * 4096ull, /* one 128 MiB chunk */
    /* The UUID seals every metadata block: from the seed, as the rest. */
    .mkfs = {"mkfs.chunkfs", "-q", "-U", "{uuid}", "{dev}"},
    .identity = 3,
    .mount_cmd = {"chunkfs", "-o", "blkdev", "{dev}", "{mnt}"},
    .check = {"fsck.chunkfs", "-fn", "-t", "{dev}"},
    .repair = {"fsck.chunkfs", "-fy", "-t", "{dev}"},
    .progress_opt = "-C3",
    .outcome = fd_outcome_e2fsck,
    .passes = chunkfs_passes,
    .pass_heading = fd_pass_heading_e2fsck,
    .checksum_failed = (const char *const[]){"bad checksum", NULL},
    /* fsck.chunkfs -t times its passes as e2fsck -tt does */
    .kept_lines = (const char *const[]){"Pass ", "Peak memory", NULL},
    .locate = chunkfs_locate,
    .file_ranges = chunkfs_file_ranges,
    .target_types = "data inode extent dir header block-bitmap "
                    "inode-bitmap backrefs superblock dirty-map",
};
