/* chunkfs — mounting, syncing, and the file-system operations (fs.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h> /* SEEK_DATA, SEEK_HOLE */

#include "fs-internal.h"

static int lazy_flush (struct cfs_fs *fs);

const char *
cfs_fs_error (const struct cfs_fs *fs)
{
  return fs->errmsg;
}

const struct cfs_super *
cfs_fs_super (const struct cfs_fs *fs)
{
  return &fs->sb;
}

struct cfs_fs *
cfs_fs_open (struct cfs_io *io, unsigned flags, struct cfs_err *err)
{
  struct cfs_fs *fs = calloc (1, sizeof *fs);
  struct ino root;
  uint32_t c, dirty = 0;

  if (fs == NULL) {
    cfs_fail (err, "out of memory");
    return NULL;
  }
  fs->io = io;
  fs->writable = flags & CFS_OPEN_WRITE;
  {
    int copy;
    if (cfs_super_find (io, &fs->sb, &copy, err) == -1)
      goto fail;
  }
  if (fs->sb.device_blocks > cfs_blocks (io)) {
    cfs_fail (err, "the file system is %llu blocks, the device only %llu",
              (unsigned long long)fs->sb.device_blocks,
              (unsigned long long)cfs_blocks (io));
    goto fail;
  }
  cfs_geometry (&fs->sb, &fs->g);
  fs->nhash = 1 << 16;
  fs->chunks = calloc (fs->sb.chunks, sizeof *fs->chunks);
  fs->hash = calloc (fs->nhash, sizeof *fs->hash);
  if (fs->chunks == NULL || fs->hash == NULL) {
    cfs_fail (err, "out of memory");
    goto fail;
  }
  if (cfs_chunks_load (fs, err) == -1)
    goto fail;
  for (c = 0; c < fs->sb.chunks; c++)
    dirty += fs->chunks[c].h.state >= CFS_DIRTY;
  if (fs->writable && dirty && !(flags & CFS_OPEN_FORCE)) {
    cfs_fail (err,
              "%u chunk%s dirty or damaged: check the file system first "
              "(fsck.chunkfs), or mount it anyway with -o force",
              dirty, dirty == 1 ? " is" : "s are");
    goto fail;
  }
  if (cfs_iget (fs, cfs_ref (0, CFS_ROOT_INO), &root) < 0 ||
      !S_ISDIR (root.in.mode)) {
    cfs_fail (err, "the root directory is unreadable%s%s",
              fs->errmsg[0] ? ": " : "", fs->errmsg);
    goto fail;
  }
  return fs;
fail:
  cfs_cache_free (fs);
  free (fs->chunks);
  free (fs);
  return NULL;
}

int
cfs_fs_sync (struct cfs_fs *fs, struct cfs_err *err)
{
  struct cfs_err e;
  uint32_t c;
  int r = 0;

  if (!fs->writable)
    return 0;
  if (lazy_flush (fs) < 0)
    r = -1;
  for (c = 0; c < fs->sb.chunks; c++) {
    int rc;
    if (fs->chunks[c].br_changed && (rc = cfs_backrefs_write (fs, c)) < 0) {
      if (rc != -EIO)
        cfs_fs_eio (fs, "chunk %u: back-reference table: %s", c,
                    strerror (-rc));
      r = -1;
    }
  }
  if (cfs_release_freed (fs) < 0 || cfs_cache_writeback (fs) < 0)
    r = -1;
  if (cfs_flush (fs->io, &e) == -1) {
    cfs_fs_eio (fs, "%s", e.msg);
    r = -1;
  }
  /* Only with everything durable may a chunk say it is clean. */
  if (r == 0 && cfs_chunks_clean (fs) < 0)
    r = -1;
  if (r == -1)
    cfs_fail (err, "sync: %s", fs->errmsg);
  return r;
}

void
cfs_fs_abandon (struct cfs_fs *fs)
{
  uint32_t c;

  cfs_cache_free (fs);
  for (c = 0; c < fs->sb.chunks; c++)
    free (fs->chunks[c].br);
  free (fs->chunks);
  free (fs->open);
  free (fs->freed);
  free (fs->lazy);
  free (fs);
}

int
cfs_fs_close (struct cfs_fs *fs, struct cfs_err *err)
{
  int r = cfs_fs_sync (fs, err);

  cfs_fs_abandon (fs);
  return r;
}

/* ---- helpers ---- */

#define LAZY_MAX 4096 /* atimes kept for the next sync at most */

/* The waiting atimes written (sync's first step); a file freed since is
 * skipped (its generation changed).
 */
static int
lazy_flush (struct cfs_fs *fs)
{
  int r = 0;
  size_t i;

  for (i = 0; i < fs->nlazy && r == 0; i++) {
    const struct lazy_atime *l = &fs->lazy[i];
    struct ino n;
    if (cfs_iget_file (fs, l->ino, &n) < 0 ||
        n.in.generation != l->generation || n.in.atime >= l->atime)
      continue;
    n.in.atime = l->atime;
    r = cfs_iput (fs, &n);
  }
  fs->nlazy = 0;
  return r;
}

static uint32_t
chunk_of (const struct cfs_fs *fs, uint64_t abs)
{
  return (uint32_t)((abs - CFS_FIRST_CHUNK) / fs->sb.chunk_blocks);
}

static int
get_dir (struct cfs_fs *fs, uint64_t ref, struct ino *n)
{
  int r;

  if ((r = cfs_iget_file (fs, ref, n)) < 0)
    return r;
  return S_ISDIR (n->in.mode) ? 0 : -ENOTDIR;
}

static int
check_name (const char *name)
{
  size_t n = strlen (name);

  if (n == 0 || strchr (name, '/'))
    return -EINVAL;
  if (n > 255)
    return -ENAMETOOLONG;
  return 0;
}

static bool
is_open (struct cfs_fs *fs, uint64_t ino, struct open_file **of)
{
  size_t i;

  for (i = 0; i < fs->nopen; i++)
    if (fs->open[i].ino == ino) {
      if (of)
        *of = &fs->open[i];
      return true;
    }
  return false;
}

/* Free an inode with no names left: its blocks, continuations, slot. */
static int
free_file (struct cfs_fs *fs, struct ino *n)
{
  uint32_t gen = n->in.generation;
  int r;

  if ((r = cfs_truncate_blocks (fs, n, 0)) < 0 ||
      (r = cfs_xattr_free (fs, n)) < 0)
    return r;
  memset (&n->in, 0, sizeof n->in);
  n->in.generation = gen;
  if ((r = cfs_iput (fs, n)) < 0)
    return r;
  return cfs_free_inode (fs, n->c, n->i);
}

/* One name fewer for n (whose entry is gone). */
static int
drop_link (struct cfs_fs *fs, struct ino *n)
{
  struct open_file *of;

  if (S_ISDIR (n->in.mode) || n->in.links <= 1) {
    n->in.links = 0;
    if (is_open (fs, cfs_ref (n->c, n->i), &of)) {
      of->unlinked = true;
      n->in.ctime = cfs_now_ns ();
      return cfs_iput (fs, n);
    }
    return free_file (fs, n);
  }
  n->in.links--;
  n->in.ctime = cfs_now_ns ();
  return cfs_iput (fs, n);
}

/* A read of n: its atime as ext4's default relatime keeps it (the
 * kernel leaves a FUSE file system's atime to it): updated when older
 * than the last change or a day old, so a file read over and over is
 * written once, not at every read.  In a chunk that is clean it waits
 * for the next sync (fs->lazy).
 */
static int
touch_atime (struct cfs_fs *fs, struct ino *n)
{
  uint64_t now = cfs_now_ns (), at = cfs_atime (fs, n);
  struct lazy_atime *l;

  if (!fs->writable || (at > n->in.mtime && at > n->in.ctime &&
                        (int64_t)(now - at) < 86400 * (int64_t)1000000000))
    return 0;
  if (fs->chunks[n->c].touched || fs->nlazy >= LAZY_MAX) {
    n->in.atime = now;
    return cfs_iput (fs, n);
  }
  if ((l = cfs_lazy_find (fs, n)) == NULL) {
    if (fs->nlazy == fs->alazy) {
      size_t na = fs->alazy ? 2 * fs->alazy : 64;
      struct lazy_atime *nl = realloc (fs->lazy, na * sizeof *nl);
      if (nl == NULL)
        return -ENOMEM;
      fs->lazy = nl;
      fs->alazy = na;
    }
    l = &fs->lazy[fs->nlazy++];
    *l = (struct lazy_atime){cfs_ref (n->c, n->i), 0, n->in.generation};
  }
  l->atime = now;
  return 0;
}

/* ---- operations ---- */

int
cfs_getattr (struct cfs_fs *fs, uint64_t ino, struct cfs_attr *a)
{
  struct ino n;
  int r;

  if ((r = cfs_iget_file (fs, ino, &n)) < 0)
    return r;
  return cfs_inode_attr (fs, &n, a);
}

int
cfs_lookup (struct cfs_fs *fs, uint64_t dir, const char *name,
            struct cfs_attr *a)
{
  struct dirent_loc loc;
  struct ino d, n;
  int r;

  if ((r = get_dir (fs, dir, &d)) < 0 || (r = check_name (name)) < 0)
    return r;
  if ((r = cfs_dir_find (fs, &d, name, &loc)) < 0)
    return r;
  if ((r = cfs_iget_file (fs, loc.target, &n)) < 0)
    return r == -ESTALE ? cfs_fs_eio (fs, "entry '%s' names a free inode", name)
                        : r;
  if (n.in.generation != loc.generation)
    return cfs_fs_eio (fs, "entry '%s' names generation %u, the inode is %u",
                       name, loc.generation, n.in.generation);
  return cfs_inode_attr (fs, &n, a);
}

/* A new inode's owner: the creator's uid, and its gid unless the
 * directory is set-group-ID (then the directory's group, and a new
 * directory inherits the bit), as ext4 and tmpfs do.  The kernel cannot
 * do this for a FUSE file system: it sends only the creator's ids.
 */
static void
inherit_owner (const struct ino *d, struct ino *n, uint32_t uid, uint32_t gid)
{
  n->in.uid = uid;
  n->in.gid = gid;
  if (d->in.mode & S_ISGID) {
    n->in.gid = d->in.gid;
    if (S_ISDIR (n->in.mode))
      n->in.mode |= S_ISGID;
  }
}

static int
make_node (struct cfs_fs *fs, uint64_t dir, const char *name, uint16_t mode,
           uint32_t uid, uint32_t gid, const char *target, uint64_t rdev,
           struct cfs_attr *a)
{
  struct dirent_loc loc;
  struct ino d, n;
  uint32_t c, i, near;
  uint64_t now = cfs_now_ns ();
  bool isdir = S_ISDIR (mode);
  int r;

  if ((r = get_dir (fs, dir, &d)) < 0 || (r = check_name (name)) < 0)
    return r;
  if (!fs->writable)
    return -EROFS;
  if ((r = cfs_dir_find (fs, &d, name, &loc)) != -ENOENT)
    return r == 0 ? -EEXIST : r;
  if (isdir && d.in.links >= UINT32_MAX - 1)
    return -EMLINK;
  /* Top-level directories spread over the disk, as ext4's Orlov
   * allocator spreads them over block groups; everything else stays near
   * its parent.
   */
  near = d.c;
  if (isdir && cfs_ref (d.c, d.i) == cfs_ref (0, CFS_ROOT_INO))
    near = cfs_name_hash (name, strlen (name)) % fs->sb.chunks;
  if ((r = cfs_pick_chunk (fs, near, isdir, &c)) < 0 ||
      (r = cfs_alloc_inode (fs, c, &i)) < 0)
    return r;
  if ((r = cfs_iget (fs, cfs_ref (c, i), &n)) < 0)
    return r;
  {
    uint32_t gen = n.in.generation + 1;
    memset (&n.in, 0, sizeof n.in);
    n.in.generation = gen;
  }
  n.in.mode = mode;
  n.in.links = isdir ? 2 : 1;
  n.in.rdev = rdev;
  inherit_owner (&d, &n, uid, gid);
  n.in.atime = n.in.mtime = n.in.ctime = now;
  if (isdir)
    n.in.offset = cfs_ref (d.c, d.i);
  if (target) {
    size_t len = strlen (target);
    n.in.size = len;
    if (len < sizeof n.in.symlink) {
      n.in.flags |= CFS_INODE_INLINE;
      memcpy (n.in.symlink, target, len);
    } else {
      unsigned char blk[CFS_BLOCK] = {0};
      struct cfs_err err;
      uint64_t abs;
      bool fresh;
      if ((r = cfs_iput (fs, &n)) < 0 ||
          (r = cfs_file_block (fs, &n, 0, true, &abs, &fresh)) < 0)
        goto undo;
      memcpy (blk, target, len);
      if (cfs_write (fs->io, abs, 1, blk, false, &err) == -1) {
        r = cfs_fs_eio (fs, "%s", err.msg);
        goto undo;
      }
    }
  }
  if ((r = cfs_iput (fs, &n)) < 0)
    goto undo;
  d.in.mtime = d.in.ctime = now;
  if (isdir)
    d.in.links++;
  if ((r = cfs_dir_add (fs, &d, name, cfs_ref (c, i), n.in.generation,
                        (uint8_t)(mode >> 12))) < 0)
    goto undo;
  return cfs_inode_attr (fs, &n, a);
undo:
  free_file (fs, &n);
  return r;
}

int
cfs_create (struct cfs_fs *fs, uint64_t dir, const char *name, uint16_t mode,
            uint32_t uid, uint32_t gid, struct cfs_attr *a)
{
  if (!S_ISREG (mode))
    return -EINVAL; /* the others: cfs_mknod, cfs_mkdir, cfs_symlink */
  return make_node (fs, dir, name, mode, uid, gid, NULL, 0, a);
}

int
cfs_mknod (struct cfs_fs *fs, uint64_t dir, const char *name, uint16_t mode,
           uint64_t rdev, uint32_t uid, uint32_t gid, struct cfs_attr *a)
{
  if (!S_ISREG (mode) && !cfs_mode_special (mode))
    return -EINVAL;
  /* mknod(2) ignores dev for anything but a device. */
  if (!S_ISCHR (mode) && !S_ISBLK (mode))
    rdev = 0;
  return make_node (fs, dir, name, mode, uid, gid, NULL, rdev, a);
}

int
cfs_mkdir (struct cfs_fs *fs, uint64_t dir, const char *name, uint16_t mode,
           uint32_t uid, uint32_t gid, struct cfs_attr *a)
{
  return make_node (fs, dir, name, (uint16_t)(S_IFDIR | (mode & 07777)), uid,
                    gid, NULL, 0, a);
}

int
cfs_symlink (struct cfs_fs *fs, uint64_t dir, const char *name,
             const char *target, uint32_t uid, uint32_t gid, struct cfs_attr *a)
{
  if (strlen (target) >= CFS_BLOCK)
    return -ENAMETOOLONG;
  if (target[0] == '\0')
    return -ENOENT;
  return make_node (fs, dir, name, S_IFLNK | 0777, uid, gid, target, 0, a);
}

int
cfs_readlink (struct cfs_fs *fs, uint64_t ino, char *buf, size_t len)
{
  struct ino n;
  size_t size;
  int r;

  if ((r = cfs_iget_file (fs, ino, &n)) < 0)
    return r;
  if (!S_ISLNK (n.in.mode))
    return -EINVAL;
  if (n.in.size >= CFS_BLOCK)
    return cfs_fs_eio (fs, "symlink (%u, %u): size %llu", n.c, n.i,
                       (unsigned long long)n.in.size);
  size = n.in.size < len - 1 ? n.in.size : len - 1;
  if (n.in.flags & CFS_INODE_INLINE) {
    if (n.in.size >= sizeof n.in.symlink)
      return cfs_fs_eio (fs, "symlink (%u, %u): size %llu inline", n.c, n.i,
                         (unsigned long long)n.in.size);
    memcpy (buf, n.in.symlink, size);
  } else {
    unsigned char blk[CFS_BLOCK];
    struct cfs_err err;
    uint64_t abs;
    bool fresh;
    if ((r = cfs_file_block (fs, &n, 0, false, &abs, &fresh)) < 0)
      return r;
    if (abs == 0)
      return cfs_fs_eio (fs, "symlink (%u, %u): no block", n.c, n.i);
    if (cfs_read (fs->io, abs, 1, blk, &err) == -1) {
      cfs_damaged (fs, n.c);
      return cfs_fs_eio (fs, "%s", err.msg);
    }
    memcpy (buf, blk, size);
  }
  buf[size] = '\0';
  return 0;
}

int
cfs_link (struct cfs_fs *fs, uint64_t ino, uint64_t dir, const char *name,
          struct cfs_attr *a)
{
  struct dirent_loc loc;
  struct ino d, n;
  int r;

  if ((r = get_dir (fs, dir, &d)) < 0 || (r = check_name (name)) < 0 ||
      (r = cfs_iget_file (fs, ino, &n)) < 0)
    return r;
  if (!fs->writable)
    return -EROFS;
  if (S_ISDIR (n.in.mode))
    return -EPERM;
  if (n.in.links >= 65000)
    return -EMLINK;
  if ((r = cfs_dir_find (fs, &d, name, &loc)) != -ENOENT)
    return r == 0 ? -EEXIST : r;
  n.in.links++;
  n.in.ctime = cfs_now_ns ();
  if ((r = cfs_iput (fs, &n)) < 0)
    return r;
  d.in.mtime = d.in.ctime = n.in.ctime;
  if ((r = cfs_dir_add (fs, &d, name, ino, n.in.generation,
                        (uint8_t)(n.in.mode >> 12))) < 0)
    return r;
  return cfs_inode_attr (fs, &n, a);
}

static int
remove_name (struct cfs_fs *fs, uint64_t dir, const char *name, bool isdir)
{
  struct dirent_loc loc;
  struct ino d, n;
  int r;

  if ((r = get_dir (fs, dir, &d)) < 0 || (r = check_name (name)) < 0)
    return r;
  if (!fs->writable)
    return -EROFS;
  if ((r = cfs_dir_find (fs, &d, name, &loc)) < 0 ||
      (r = cfs_iget_file (fs, loc.target, &n)) < 0)
    return r;
  if (isdir && !S_ISDIR (n.in.mode))
    return -ENOTDIR;
  if (!isdir && S_ISDIR (n.in.mode))
    return -EISDIR;
  if (isdir && (r = cfs_dir_is_empty (fs, &n)) <= 0)
    return r == 0 ? -ENOTEMPTY : r;
  if ((r = cfs_dir_remove (fs, &d, name)) < 0)
    return r;
  d.in.mtime = d.in.ctime = cfs_now_ns ();
  if (isdir)
    d.in.links--;
  if ((r = cfs_iput (fs, &d)) < 0)
    return r;
  return drop_link (fs, &n);
}

int
cfs_unlink (struct cfs_fs *fs, uint64_t dir, const char *name)
{
  return remove_name (fs, dir, name, false);
}

int
cfs_rmdir (struct cfs_fs *fs, uint64_t dir, const char *name)
{
  return remove_name (fs, dir, name, true);
}

/* Is `anc` an ancestor of (or) directory `d`?  Up the parent fields. */
static int
is_ancestor (struct cfs_fs *fs, uint64_t anc, uint64_t d)
{
  uint32_t steps = 0;
  struct ino n;
  int r;

  while (steps++ < CFS_MAX_CHAIN) {
    if (d == anc)
      return 1;
    if (d == cfs_ref (0, CFS_ROOT_INO))
      return 0;
    if ((r = get_dir (fs, d, &n)) < 0)
      return r;
    d = n.in.offset;
  }
  return cfs_fs_eio (fs, "directory parents loop");
}

/* A directory moving from parent `from` to `to`: its ".." goes with it. */
static void
move_dir (struct ino *n, struct ino *from, struct ino *to)
{
  if (!S_ISDIR (n->in.mode) || from == to)
    return;
  from->in.links--;
  to->in.links++;
  n->in.offset = cfs_ref (to->c, to->i);
}

/* RENAME_EXCHANGE: name in d1 and newname in d2 (d2 == d1 in one
 * directory) swap their inodes.  Each entry is retargeted in place, so
 * the back-references follow (dir.c); a directory changing parents
 * takes its ".." (the parents' link counts) and its parent field along.
 */
static int
exchange (struct cfs_fs *fs, struct ino *d1, const char *name, struct ino *d2,
          const char *newname)
{
  struct dirent_loc al, bl;
  struct ino a, b;
  uint64_t now = cfs_now_ns ();
  int r;

  if ((r = cfs_dir_find (fs, d1, name, &al)) < 0 ||
      (r = cfs_iget_file (fs, al.target, &a)) < 0 ||
      (r = cfs_dir_find (fs, d2, newname, &bl)) < 0 ||
      (r = cfs_iget_file (fs, bl.target, &b)) < 0)
    return r;
  if (al.target == bl.target)
    return 0; /* two names of one file */
  /* Neither directory may end up inside itself. */
  if (d1 != d2 && S_ISDIR (a.in.mode) &&
      (r = is_ancestor (fs, al.target, cfs_ref (d2->c, d2->i))) != 0)
    return r < 0 ? r : -EINVAL;
  if (d1 != d2 && S_ISDIR (b.in.mode) &&
      (r = is_ancestor (fs, bl.target, cfs_ref (d1->c, d1->i))) != 0)
    return r < 0 ? r : -EINVAL;
  if ((r = cfs_dir_retarget (fs, d2, newname, al.target, a.in.generation,
                             al.type)) < 0 ||
      (r = cfs_dir_retarget (fs, d1, name, bl.target, b.in.generation,
                             bl.type)) < 0)
    return r;
  move_dir (&a, d1, d2);
  move_dir (&b, d2, d1);
  d1->in.mtime = d1->in.ctime = d2->in.mtime = d2->in.ctime = now;
  a.in.ctime = b.in.ctime = now;
  if ((r = cfs_iput (fs, d1)) < 0 ||
      (d2 != d1 && (r = cfs_iput (fs, d2)) < 0) || (r = cfs_iput (fs, &a)) < 0)
    return r;
  return cfs_iput (fs, &b);
}

int
cfs_rename (struct cfs_fs *fs, uint64_t dir, const char *name, uint64_t newdir,
            const char *newname, unsigned flags)
{
  struct dirent_loc sloc, dloc;
  struct ino d1, d2, src, dst, *nd;
  bool exists, same_dir = dir == newdir;
  uint64_t now = cfs_now_ns ();
  int r;

  if (flags & ~(CFS_RENAME_NOREPLACE | CFS_RENAME_EXCHANGE) ||
      flags == (CFS_RENAME_NOREPLACE | CFS_RENAME_EXCHANGE))
    return -EINVAL;
  if ((r = get_dir (fs, dir, &d1)) < 0 || (r = get_dir (fs, newdir, &d2)) < 0 ||
      (r = check_name (name)) < 0 || (r = check_name (newname)) < 0)
    return r;
  if (!fs->writable)
    return -EROFS;
  nd = same_dir ? &d1 : &d2;
  if (flags & CFS_RENAME_EXCHANGE)
    return exchange (fs, &d1, name, nd, newname);
  if ((r = cfs_dir_find (fs, &d1, name, &sloc)) < 0 ||
      (r = cfs_iget_file (fs, sloc.target, &src)) < 0)
    return r;
  r = cfs_dir_find (fs, nd, newname, &dloc);
  if (r < 0 && r != -ENOENT)
    return r;
  exists = r == 0;
  if (exists) {
    if (flags & CFS_RENAME_NOREPLACE)
      return -EEXIST;
    if (dloc.target == sloc.target)
      return 0; /* two names of one file: nothing to do */
    if ((r = cfs_iget_file (fs, dloc.target, &dst)) < 0)
      return r;
    if (S_ISDIR (src.in.mode) && !S_ISDIR (dst.in.mode))
      return -ENOTDIR;
    if (!S_ISDIR (src.in.mode) && S_ISDIR (dst.in.mode))
      return -EISDIR;
    if (S_ISDIR (dst.in.mode) && (r = cfs_dir_is_empty (fs, &dst)) <= 0)
      return r == 0 ? -ENOTEMPTY : r;
  }
  if (S_ISDIR (src.in.mode) && !same_dir &&
      (r = is_ancestor (fs, sloc.target, newdir)) != 0)
    return r < 0 ? r : -EINVAL;

  if (exists) {
    if ((r = cfs_dir_retarget (fs, nd, newname, sloc.target, src.in.generation,
                               sloc.type)) < 0)
      return r;
  } else if ((r = cfs_dir_add (fs, nd, newname, sloc.target, src.in.generation,
                               sloc.type)) < 0)
    return r;
  if ((r = cfs_dir_remove (fs, &d1, name)) < 0)
    return r;
  d1.in.mtime = d1.in.ctime = nd->in.mtime = nd->in.ctime = now;
  if (S_ISDIR (src.in.mode) && !same_dir) {
    d1.in.links--;
    if (!exists)
      d2.in.links++; /* a replaced directory's ".." goes as this one's comes */
    src.in.offset = newdir;
  }
  if (exists && S_ISDIR (dst.in.mode) && same_dir)
    d1.in.links--; /* the replaced directory's ".." */
  src.in.ctime = now;
  if ((r = cfs_iput (fs, &d1)) < 0 ||
      (!same_dir && (r = cfs_iput (fs, &d2)) < 0) ||
      (r = cfs_iput (fs, &src)) < 0)
    return r;
  if (exists)
    return drop_link (fs, &dst);
  return 0;
}

/* Zero bytes [from, end of its block) of the file's block at `from`. */
static int
zero_tail (struct cfs_fs *fs, struct ino *h, uint64_t from)
{
  unsigned char blk[CFS_BLOCK];
  struct cfs_err err;
  uint64_t abs;
  bool fresh;
  int r;

  if (from % CFS_BLOCK == 0)
    return 0;
  if ((r = cfs_file_block (fs, h, from / CFS_BLOCK, false, &abs, &fresh)) < 0)
    return r;
  if (abs == 0)
    return 0;
  if (cfs_read (fs->io, abs, 1, blk, &err) == -1) {
    cfs_damaged (fs, chunk_of (fs, abs));
    return cfs_fs_eio (fs, "%s", err.msg);
  }
  memset (blk + from % CFS_BLOCK, 0, CFS_BLOCK - from % CFS_BLOCK);
  if ((r = cfs_touch (fs, chunk_of (fs, abs))) < 0)
    return r;
  if (cfs_write (fs->io, abs, 1, blk, false, &err) == -1)
    return cfs_fs_eio (fs, "%s", err.msg);
  return 0;
}

int
cfs_setattr (struct cfs_fs *fs, uint64_t ino, unsigned set,
             const struct cfs_attr *to, struct cfs_attr *a)
{
  struct ino n;
  int r;

  if ((r = cfs_iget_file (fs, ino, &n)) < 0)
    return r;
  if (set && !fs->writable)
    return -EROFS;
  if (set & CFS_SET_SIZE) {
    if (!S_ISREG (n.in.mode))
      return S_ISDIR (n.in.mode) ? -EISDIR : -EINVAL;
    /* Unless the file grows, blocks allocated past its end (fallocate's
     * KEEP_SIZE) go too, as on ext4 and tmpfs: `: > f` empties an empty
     * f's preallocation.
     */
    if (to->size <= n.in.size) {
      if ((to->size < n.in.size && (r = zero_tail (fs, &n, to->size)) < 0) ||
          (r = cfs_truncate_blocks (fs, &n, to->size)) < 0)
        return r;
    }
    n.in.size = to->size;
    n.in.mtime = cfs_now_ns ();
  }
  if (set & CFS_SET_MODE) {
    n.in.mode = (uint16_t)((n.in.mode & S_IFMT) | (to->mode & 07777));
    if ((r = cfs_acl_chmod (fs, &n)) < 0)
      return r;
  }
  if (set & CFS_SET_UID)
    n.in.uid = to->uid;
  if (set & CFS_SET_GID)
    n.in.gid = to->gid;
  if (set & CFS_SET_ATIME) {
    struct lazy_atime *l = cfs_lazy_find (fs, &n);
    if (l)
      l->atime = 0; /* the time set now wins */
    n.in.atime = to->atime;
  }
  if (set & CFS_SET_MTIME)
    n.in.mtime = to->mtime;
  if (set) {
    n.in.ctime = cfs_now_ns ();
    if ((r = cfs_iput (fs, &n)) < 0)
      return r;
  }
  return cfs_inode_attr (fs, &n, a);
}

/* Read or write whole blocks [first, first + count) of the file at buf,
 * one request per run of consecutive disk blocks.
 */
struct run {
  uint64_t abs;
  uint32_t count;
  unsigned char *buf;
};
#define RUN_MAX (1u << 20) /* blocks in one request at most (4 GiB) */

static int
run_flush (struct cfs_fs *fs, struct run *run, bool write)
{
  uint32_t chunk = chunk_of (fs, run->abs);
  struct cfs_err err;
  int r;

  if (run->count == 0)
    return 0;
  r = write ? cfs_write (fs->io, run->abs, run->count, run->buf, false, &err)
            : cfs_read (fs->io, run->abs, run->count, run->buf, &err);
  run->count = 0;
  if (r == -1) {
    cfs_damaged (fs, chunk);
    return cfs_fs_eio (fs, "%s", err.msg);
  }
  return 0;
}

ssize_t
cfs_pread (struct cfs_fs *fs, uint64_t ino, void *buf, size_t len, uint64_t off)
{
  unsigned char *out = buf, blk[CFS_BLOCK];
  struct run run = {0};
  struct ino h;
  uint64_t end, pos;
  int r;

  if ((r = cfs_iget_file (fs, ino, &h)) < 0)
    return r;
  if (S_ISDIR (h.in.mode))
    return -EISDIR;
  if (off >= h.in.size)
    return touch_atime (fs, &h);
  end = off + len < h.in.size ? off + len : h.in.size;
  /* A lookup a run of blocks that map alike (the map's extent, or its
   * hole), not a block: a lookup decodes the segment's inode and map.
   */
  for (pos = off; pos < end;) {
    uint64_t lblk = pos / CFS_BLOCK, abs, left;
    size_t in = pos % CFS_BLOCK;
    struct cfs_fmap m;
    if ((r = cfs_file_map (fs, &h, lblk, &m)) < 0)
      return r;
    abs = m.unwritten ? 0 : m.abs; /* unwritten: zeros */
    /* The blocks from lblk on that the read still touches, of this run. */
    left = (in + (end - pos) + CFS_BLOCK - 1) / CFS_BLOCK;
    if (m.count && m.count < left)
      left = m.count;
    if (abs && in == 0 && end - pos >= CFS_BLOCK) {
      uint64_t whole = (end - pos) / CFS_BLOCK;
      if (whole > left)
        whole = left;
      if (whole > RUN_MAX)
        whole = RUN_MAX;
      if (run.count && run.abs + run.count == abs &&
          run.count + whole <= RUN_MAX)
        run.count += (uint32_t)whole;
      else {
        if ((r = run_flush (fs, &run, false)) < 0)
          return r;
        run = (struct run){abs, (uint32_t)whole, out + (pos - off)};
      }
      pos += whole * CFS_BLOCK;
      continue;
    }
    if ((r = run_flush (fs, &run, false)) < 0)
      return r;
    if (abs == 0) {
      /* A hole or unwritten run: zeros to its end or the read's. */
      uint64_t n = left * CFS_BLOCK - in;
      if (n > end - pos)
        n = end - pos;
      memset (out + (pos - off), 0, n);
      pos += n;
    } else {
      /* Part of a block. */
      size_t n = CFS_BLOCK - in;
      struct cfs_err err;
      if (n > end - pos)
        n = end - pos;
      if (cfs_read (fs->io, abs, 1, blk, &err) == -1) {
        cfs_damaged (fs, chunk_of (fs, abs));
        return cfs_fs_eio (fs, "%s", err.msg);
      }
      memcpy (out + (pos - off), blk + in, n);
      pos += n;
    }
  }
  if ((r = run_flush (fs, &run, false)) < 0 || (r = touch_atime (fs, &h)) < 0)
    return r;
  return (ssize_t)(end - off);
}

static ssize_t write_blocks (struct cfs_fs *fs, uint64_t ino, const void *buf,
                             size_t len, uint64_t off);

ssize_t
cfs_pwrite (struct cfs_fs *fs, uint64_t ino, const void *buf, size_t len,
            uint64_t off)
{
  ssize_t n = write_blocks (fs, ino, buf, len, off);
  struct cfs_err err;

  /* Out of space while blocks freed since the last sync wait: sync (they
   * become free) and go on.
   */
  if (n == -ENOSPC && fs->nfreed && cfs_fs_sync (fs, &err) == 0)
    n = write_blocks (fs, ino, buf, len, off);
  return n;
}

static ssize_t
write_blocks (struct cfs_fs *fs, uint64_t ino, const void *buf, size_t len,
              uint64_t off)
{
  const unsigned char *src = buf;
  unsigned char blk[CFS_BLOCK];
  struct run run = {0};
  struct ino h;
  uint64_t pos;
  int r;

  if ((r = cfs_iget_file (fs, ino, &h)) < 0)
    return r;
  if (!S_ISREG (h.in.mode))
    return -EINVAL;
  if (!fs->writable)
    return -EROFS;
  if (off + len < off || off + len > (1ull << 44))
    return -EFBIG;
  for (pos = off; pos < off + len;) {
    uint64_t lblk = pos / CFS_BLOCK, abs;
    size_t in = pos % CFS_BLOCK, n = CFS_BLOCK - in;
    bool fresh;
    if (n > off + len - pos)
      n = off + len - pos;
    if ((r = cfs_file_block (fs, &h, lblk, true, &abs, &fresh)) < 0)
      break;
    /* Overwriting a block of a clean chunk dirties it too. */
    if ((r = cfs_touch (fs, chunk_of (fs, abs))) < 0)
      break;
    if (in == 0 && n == CFS_BLOCK) {
      if (run.count && run.abs + run.count == abs)
        run.count++;
      else {
        if ((r = run_flush (fs, &run, true)) < 0)
          break;
        run = (struct run){abs, 1, (unsigned char *)src + (pos - off)};
      }
    } else {
      struct cfs_err err;
      if ((r = run_flush (fs, &run, true)) < 0)
        break;
      if (fresh)
        memset (blk, 0, CFS_BLOCK);
      else if (cfs_read (fs->io, abs, 1, blk, &err) == -1) {
        cfs_damaged (fs, chunk_of (fs, abs));
        r = cfs_fs_eio (fs, "%s", err.msg);
        break;
      }
      memcpy (blk + in, src + (pos - off), n);
      if (cfs_write (fs->io, abs, 1, blk, false, &err) == -1) {
        r = cfs_fs_eio (fs, "%s", err.msg);
        break;
      }
    }
    pos += n;
  }
  if (r >= 0)
    r = run_flush (fs, &run, true);
  else
    run_flush (fs, &run, true);
  /* What was written counts, even if the rest failed (ENOSPC). */
  if (pos > off) {
    int e;
    if (pos > h.in.size)
      h.in.size = pos;
    h.in.mtime = h.in.ctime = cfs_now_ns ();
    if ((e = cfs_iput (fs, &h)) < 0)
      return e;
    return (ssize_t)(pos - off);
  }
  return r;
}

/* Zero bytes [pos, pos + n) of one block of the file, where it holds
 * data (a hole or an unwritten block reads as zeros already).
 */
static int
zero_bytes (struct cfs_fs *fs, struct ino *h, uint64_t pos, size_t n)
{
  unsigned char blk[CFS_BLOCK];
  struct cfs_fmap m;
  struct cfs_err err;
  int r;

  if (n == 0)
    return 0;
  if ((r = cfs_file_map (fs, h, pos / CFS_BLOCK, &m)) < 0)
    return r;
  if (m.abs == 0 || m.unwritten)
    return 0;
  if (cfs_read (fs->io, m.abs, 1, blk, &err) == -1) {
    cfs_damaged (fs, chunk_of (fs, m.abs));
    return cfs_fs_eio (fs, "%s", err.msg);
  }
  memset (blk + pos % CFS_BLOCK, 0, n);
  if ((r = cfs_touch (fs, chunk_of (fs, m.abs))) < 0)
    return r;
  if (cfs_write (fs->io, m.abs, 1, blk, false, &err) == -1)
    return cfs_fs_eio (fs, "%s", err.msg);
  return 0;
}

/* [off, end) reads as zeros: the partial blocks at its edges zeroed in
 * place, the whole blocks between punched (freed) or made unwritten
 * (allocated where they were holes).
 */
static int
zero_span (struct cfs_fs *fs, struct ino *h, uint64_t off, uint64_t end,
           bool punch)
{
  uint64_t first = (off + CFS_BLOCK - 1) / CFS_BLOCK, last = end / CFS_BLOCK;
  int r;

  if (first > last) /* inside one block */
    return zero_bytes (fs, h, off, (size_t)(end - off));
  if ((r = zero_bytes (fs, h, off, (size_t)(first * CFS_BLOCK - off))) < 0 ||
      (r = zero_bytes (fs, h, last * CFS_BLOCK,
                       (size_t)(end - last * CFS_BLOCK))) < 0 ||
      first == last)
    return r;
  if (punch)
    return cfs_file_punch (fs, h, first, last - first);
  if ((r = cfs_file_mark (fs, h, first, last - first, true)) < 0)
    return r;
  /* Holes are allocated too where their chunk has room; one that cannot
   * be (its chunk is full and the file goes on elsewhere) stays a hole:
   * it reads as zeros all the same.
   */
  for (uint64_t lblk = first; lblk < last;) {
    struct cfs_fmap m;
    if ((r = cfs_file_alloc (fs, h, lblk, last - lblk, true, &m)) == -ENOSPC)
      r = cfs_file_map (fs, h, lblk, &m);
    if (r < 0)
      return r;
    lblk += m.count;
  }
  return 0;
}

int
cfs_fallocate (struct cfs_fs *fs, uint64_t ino, uint64_t off, uint64_t len,
               unsigned mode)
{
  const unsigned known =
      CFS_FALLOC_KEEP_SIZE | CFS_FALLOC_PUNCH_HOLE | CFS_FALLOC_ZERO_RANGE;
  bool keep = mode & CFS_FALLOC_KEEP_SIZE;
  struct ino h;
  uint64_t lblk, end = (off + len + CFS_BLOCK - 1) / CFS_BLOCK;
  int r;

  /* As Linux: a hole is punched only with the size kept, and not
   * together with zeroing.
   */
  if ((mode & ~known) || ((mode & CFS_FALLOC_PUNCH_HOLE) &&
                          (!keep || (mode & CFS_FALLOC_ZERO_RANGE))))
    return -EOPNOTSUPP;
  if ((r = cfs_iget_file (fs, ino, &h)) < 0)
    return r;
  if (!S_ISREG (h.in.mode))
    return -ENODEV;
  if (!fs->writable)
    return -EROFS;
  if (len == 0 || off + len < off || off + len > (1ull << 44))
    return -EFBIG;
  if (mode & (CFS_FALLOC_PUNCH_HOLE | CFS_FALLOC_ZERO_RANGE)) {
    if ((r = zero_span (fs, &h, off, off + len, mode & CFS_FALLOC_PUNCH_HOLE)) <
        0)
      return r;
    h.in.mtime = cfs_now_ns ();
  } else
    /* New blocks are unwritten extents: they read as zeros without a
     * write, so allocating a huge file costs its extents, not its blocks.
     */
    for (lblk = off / CFS_BLOCK; lblk < end;) {
      struct cfs_fmap m;
      if ((r = cfs_file_alloc (fs, &h, lblk, end - lblk, true, &m)) < 0)
        return r;
      lblk += m.count;
    }
  if (!keep && off + len > h.in.size)
    h.in.size = off + len;
  h.in.ctime = cfs_now_ns ();
  return cfs_iput (fs, &h);
}

int
cfs_lseek (struct cfs_fs *fs, uint64_t ino, uint64_t off, int whence,
           uint64_t *out)
{
  struct ino h;
  uint64_t lblk;
  int r;

  if (whence != SEEK_DATA && whence != SEEK_HOLE)
    return -EINVAL;
  if ((r = cfs_iget_file (fs, ino, &h)) < 0)
    return r;
  if (off >= h.in.size)
    return -ENXIO;
  /* Data is what is written; holes and unwritten extents read as zeros
   * and count as holes.  The end of the file is a hole.
   */
  for (lblk = off / CFS_BLOCK; lblk * CFS_BLOCK < h.in.size;) {
    struct cfs_fmap m;
    bool data;
    if ((r = cfs_file_map (fs, &h, lblk, &m)) < 0)
      return r;
    data = m.abs && !m.unwritten;
    if (data == (whence == SEEK_DATA)) {
      *out = lblk * CFS_BLOCK > off ? lblk * CFS_BLOCK : off;
      return 0;
    }
    if (m.count > (UINT64_MAX - lblk * CFS_BLOCK) / CFS_BLOCK)
      break;
    lblk += m.count;
  }
  if (whence == SEEK_DATA)
    return -ENXIO;
  *out = h.in.size;
  return 0;
}

int
cfs_readdir (struct cfs_fs *fs, uint64_t dir, uint64_t cookie, cfs_dirent_fn fn,
             void *opaque)
{
  struct ino d;
  int r;

  if ((r = get_dir (fs, dir, &d)) < 0)
    return r;
  if (cookie == 0 && (r = touch_atime (fs, &d)) < 0)
    return r;
  return cfs_dir_iterate (fs, &d, cookie, fn, opaque);
}

void
cfs_open_ref (struct cfs_fs *fs, uint64_t ino)
{
  struct open_file *of;

  if (is_open (fs, ino, &of)) {
    of->count++;
    return;
  }
  if (fs->nopen == fs->aopen) {
    size_t na = fs->aopen ? 2 * fs->aopen : 16;
    struct open_file *no = realloc (fs->open, na * sizeof *no);
    if (no == NULL)
      return; /* then an unlinked open file is freed at once */
    fs->open = no;
    fs->aopen = na;
  }
  fs->open[fs->nopen++] = (struct open_file){ino, 1, false};
}

int
cfs_release (struct cfs_fs *fs, uint64_t ino)
{
  struct open_file *of;
  struct ino n;
  bool unlinked;
  int r;

  if (!is_open (fs, ino, &of) || --of->count > 0)
    return 0;
  unlinked = of->unlinked;
  *of = fs->open[--fs->nopen];
  if (!unlinked)
    return 0;
  if ((r = cfs_iget_file (fs, ino, &n)) < 0)
    return r;
  return n.in.links == 0 ? free_file (fs, &n) : 0;
}

void
cfs_statfs (struct cfs_fs *fs, struct cfs_fsstat *st)
{
  uint32_t data = fs->g.chunk_blocks - fs->g.first_data, c;

  memset (st, 0, sizeof *st);
  st->chunks = fs->sb.chunks;
  st->blocks = (uint64_t)fs->sb.chunks * data;
  st->inodes = (uint64_t)fs->sb.chunks * (fs->g.inodes - 1);
  for (c = 0; c < fs->sb.chunks; c++) {
    const struct chunk *k = &fs->chunks[c];
    if (k->h.state == CFS_UNINIT) {
      st->free_blocks += data;
      st->free_inodes += fs->g.inodes - 1;
      continue;
    }
    if (!k->bad) {
      st->free_blocks += k->h.free_blocks;
      st->free_inodes += k->h.free_inodes;
    }
    st->dirty_chunks += k->h.state >= CFS_DIRTY;
  }
  /* Freed, free for use at the next sync (df shows them free now). */
  for (size_t i = 0; i < fs->nfreed; i++)
    st->free_blocks += fs->freed[i].count;
}

int
cfs_locate (struct cfs_fs *fs, uint64_t ino, enum cfs_where where,
            uint64_t *abs)
{
  uint32_t c = ref_chunk (ino);
  const struct chunk *k;
  struct ino n;
  bool fresh;
  int r;

  if ((r = cfs_iget_file (fs, ino, &n)) < 0)
    return r;
  k = &fs->chunks[c];
  switch (where) {
    case CFS_AT_INODE:
      *abs = cfs_block (&fs->sb, c,
                        fs->g.inode_table + n.i / CFS_INODES_PER_BLOCK);
      return 0;
    case CFS_AT_DATA:
      if ((r = cfs_file_block (fs, &n, 0, false, abs, &fresh)) < 0)
        return r;
      return *abs ? 0 : -ENOENT;
    case CFS_AT_EXTENT:
      return cfs_first_leaf (fs, &n, abs);
    case CFS_AT_HEADER:
      *abs = cfs_block (&fs->sb, c, 0);
      return 0;
    case CFS_AT_BLOCK_BITMAP:
      *abs = cfs_block (&fs->sb, c, fs->g.block_bitmap);
      return 0;
    case CFS_AT_INODE_BITMAP:
      *abs = cfs_block (&fs->sb, c, fs->g.inode_bitmap);
      return 0;
    case CFS_AT_BACKREFS:
      if (k->h.backref_block == 0)
        return -ENOENT;
      *abs = cfs_block (&fs->sb, c, k->h.backref_block);
      return 0;
  }
  return -EINVAL;
}

int
cfs_file_runs (struct cfs_fs *fs, uint64_t ino, cfs_run_fn fn, void *opaque)
{
  uint64_t lblk, nblk, first = 0, start = 0, count = 0, abs;
  struct ino n;
  bool fresh;
  int r;

  if ((r = cfs_iget_file (fs, ino, &n)) < 0)
    return r;
  if (n.in.flags & CFS_INODE_INLINE)
    return 0; /* the target is in the inode: no data blocks */
  nblk = (n.in.size + CFS_BLOCK - 1) / CFS_BLOCK;
  for (lblk = 0; lblk < nblk; lblk++) {
    if ((r = cfs_file_block (fs, &n, lblk, false, &abs, &fresh)) < 0)
      return r;
    if (count && abs == start + count && lblk == first + count) {
      count++;
      continue;
    }
    if (count && (r = fn (opaque, first, start, count)) != 0)
      return r;
    first = lblk, start = abs, count = abs != 0;
  }
  return count ? fn (opaque, first, start, count) : 0;
}
