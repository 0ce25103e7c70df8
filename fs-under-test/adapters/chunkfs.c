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
 * The block-type map reads the file system with libchunkfs itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  struct cfs_err e;
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
  if ((io = cfs_open (dev, false, &e)) == NULL) {
    return fm_fail (err, "chunkfs: %s", e.msg);
  }
  if ((fs = cfs_fs_open (io, 0, &e)) == NULL) {
    fm_fail (err, "chunkfs: %s", e.msg);
    cfs_close (io, &e);
    return -1;
  }
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
  cfs_fs_abandon (fs);
  cfs_close (io, &e);
  return r;
}

const struct fd_fs fd_fs_chunkfs = {
    .name = "chunkfs",
    .mount_type = "fuseblk",
    .min_size = (16 + 32768) * 4096ull, /* one 128 MiB chunk */
    .mkfs = {"mkfs.chunkfs", "-q", "{dev}"},
    .mount_cmd = {"chunkfs", "-o", "blkdev", "{dev}", "{mnt}"},
    .check = {"fsck.chunkfs", "-fn", "-t", "{dev}"},
    .repair = {"fsck.chunkfs", "-fy", "-t", "{dev}"},
    .outcome = fd_outcome_e2fsck,
    .passes = chunkfs_passes,
    .locate = chunkfs_locate,
    .target_types = "data inode extent dir header block-bitmap "
                    "inode-bitmap backrefs superblock dirty-map",
};
