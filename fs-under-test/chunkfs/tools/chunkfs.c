/* chunkfs — the FUSE mount: `chunkfs [-o OPTS] DEVICE|URI MOUNTPOINT`.
 *
 * libfuse's low-level API: chunkfs names inodes itself (chunk, inode),
 * which is what the low-level API wants.  Several threads take requests
 * from the kernel (reading a 1 MiB write off /dev/fuse is a copy worth
 * overlapping), but libchunkfs is single-threaded: every request is
 * processed holding fs_lock, taken in one place (serve_requests), so an
 * operation added to `ops` needs no locking of its own.  (One exception,
 * op_read, lets it go while its reply is copied to the kernel.)
 */
#define FUSE_USE_VERSION 34
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <semaphore.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "chunkfs/fs.h"
#include "chunkfs/io.h"

#define TTL           1.0 /* seconds the kernel may cache names and attributes */
#define WORKERS       4   /* threads taking requests */
#define MAX_WRITE     (1u << 20)
#define READ_AHEAD_KB 1024
#define WRITE_BEHIND  (16u << 20) /* bytes of writes queued to the device */

struct options {
  char *device;
  int force, ro, help, version;
  int commit; /* seconds between syncs (-o commit=N; 0: only on fsync) */
};

static struct cfs_fs *fs;
static pthread_mutex_t fs_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *progname = "chunkfs";

static void
usage (FILE *fp)
{
  fprintf (fp,
           "Usage: %s [-f] [-d] [-o OPTION[,OPTION...]] DEVICE|URI "
           "MOUNTPOINT\n"
           "Mount a chunkfs (made by mkfs.chunkfs) with FUSE.\n"
           "\n"
           "DEVICE is a file or block device; URI an NBD export\n"
           "(nbd+unix:///?socket=PATH, nbd://HOST[:PORT]/EXPORT), read with\n"
           "libnbd, so no kernel NBD client or privileges are needed.\n"
           "\n"
           "  -o ro       mount read-only\n"
           "  -o force    mount even with dirty or damaged chunks (the\n"
           "              file system was not unmounted cleanly: run\n"
           "              fsck.chunkfs first)\n"
           "  -o commit=N sync every N seconds while there are changes\n"
           "              (default 5, as ext4; 0: only on fsync and\n"
           "              unmount): a crash loses at most N seconds\n"
           "  -f          stay in the foreground\n"
           "  -d          FUSE debugging output (implies -f)\n"
           "  -h, --help  this help\n"
           "Other -o options go to FUSE (see mount.fuse3(8)).\n"
           "Unmount with fusermount3 -u MOUNTPOINT (or umount): every chunk\n"
           "is clean again afterwards.\n",
           progname);
}

static void
to_stat (const struct cfs_attr *a, struct stat *st)
{
  memset (st, 0, sizeof *st);
  st->st_ino = a->ino;
  st->st_mode = a->mode;
  st->st_nlink = a->links;
  st->st_uid = a->uid;
  st->st_gid = a->gid;
  st->st_rdev = (dev_t)a->rdev;
  st->st_size = (off_t)a->size;
  st->st_blocks = (blkcnt_t)(a->blocks * (CFS_BLOCK / 512));
  st->st_blksize = CFS_BLOCK;
  st->st_atim.tv_sec = (time_t)(a->atime / 1000000000u);
  st->st_atim.tv_nsec = (long)(a->atime % 1000000000u);
  st->st_mtim.tv_sec = (time_t)(a->mtime / 1000000000u);
  st->st_mtim.tv_nsec = (long)(a->mtime % 1000000000u);
  st->st_ctim.tv_sec = (time_t)(a->ctime / 1000000000u);
  st->st_ctim.tv_nsec = (long)(a->ctime % 1000000000u);
}

/* Reply with an error, saying what an I/O error was about. */
static void
fail (fuse_req_t req, int r)
{
  if (r == -EIO)
    fprintf (stderr, "%s: I/O error: %s\n", progname, cfs_fs_error (fs));
  fuse_reply_err (req, -r);
}

static void
reply_entry (fuse_req_t req, int r, const struct cfs_attr *a)
{
  struct fuse_entry_param e;

  if (r < 0) {
    fail (req, r);
    return;
  }
  memset (&e, 0, sizeof e);
  e.ino = a->ino;
  e.generation = a->generation;
  e.attr_timeout = e.entry_timeout = TTL;
  to_stat (a, &e.attr);
  fuse_reply_entry (req, &e);
}

static void
reply_attr (fuse_req_t req, int r, const struct cfs_attr *a)
{
  struct stat st;

  if (r < 0) {
    fail (req, r);
    return;
  }
  to_stat (a, &st);
  fuse_reply_attr (req, &st, TTL);
}

/* Set-user-ID and set-group-ID bits are cleared by the kernel, not
 * here: without FUSE_CAP_HANDLE_KILLPRIV it works out, as for ext4,
 * whether a write, truncate or chown must clear them (a writer without
 * CAP_FSETID; a chown always; set-group-ID only with group execute) and
 * sends a setattr with the new mode.  With the capability (version 1
 * of it: FUSE_WRITE_KILL_SUIDGID is version 2's, which libfuse 3.14
 * cannot ask for) the file system would have to clear them on every
 * write, root's too, not knowing the writer's capabilities.  libfuse's
 * documentation says it is on by default (3.14 leaves it off in fact):
 * it is turned off here whatever a libfuse does.
 *
 * ACLs: with FUSE_POSIX_ACL the kernel reads system.posix_acl_* through
 * getxattr, caches them, and (default_permissions being on) checks every
 * access against them as it checks the mode for ext4.  It leaves the rest
 * to the file system: the library keeps the mode in step with the access
 * ACL and the ACL with chmod, and op_create/op_mkdir/op_mknod give a new
 * inode its directory's default ACL.  For that the kernel must not apply
 * the umask itself (FUSE_DONT_MASK): a default ACL replaces the umask,
 * and inherit() applies it when there is none.
 *
 * open(O_TRUNC) is left to the kernel: without FUSE_CAP_ATOMIC_O_TRUNC
 * it keeps O_TRUNC out of the open request and truncates the opened file
 * as it does ext4's, by a setattr (size 0, mtime and ctime now, the
 * set-ID bits cleared for an opener without CAP_FSETID) after checking
 * write permission.  With the capability (libfuse asks for it by
 * default) op_open would get O_TRUNC and no setattr would follow, so the
 * set-ID bits would stay: the daemon does not know the opener's
 * capabilities.
 */
static void
op_init (void *userdata, struct fuse_conn_info *conn)
{
  conn->max_write = MAX_WRITE; /* whole 1 MiB writes, one request each */
  conn->want &= ~(unsigned)FUSE_CAP_HANDLE_KILLPRIV;
  conn->want &= ~(unsigned)FUSE_CAP_ATOMIC_O_TRUNC;
  if ((conn->capable & (FUSE_CAP_POSIX_ACL | FUSE_CAP_DONT_MASK)) ==
      (FUSE_CAP_POSIX_ACL | FUSE_CAP_DONT_MASK))
    conn->want |= FUSE_CAP_POSIX_ACL | FUSE_CAP_DONT_MASK;
}

static void
op_destroy (void *userdata)
{
  struct cfs_err err;

  if (cfs_fs_sync (fs, &err) == -1)
    fprintf (stderr, "%s: %s\n", progname, err.msg);
}

static void
op_lookup (fuse_req_t req, fuse_ino_t parent, const char *name)
{
  struct cfs_attr a;

  reply_entry (req, cfs_lookup (fs, parent, name, &a), &a);
}

static void
op_getattr (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  struct cfs_attr a;

  reply_attr (req, cfs_getattr (fs, ino, &a), &a);
}

static uint64_t
ns_of (const struct timespec *ts)
{
  return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

static uint64_t
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_REALTIME, &ts);
  return ns_of (&ts);
}

static void
op_setattr (fuse_req_t req, fuse_ino_t ino, struct stat *st, int to_set,
            struct fuse_file_info *fi)
{
  struct cfs_attr to = {0}, a;
  unsigned set = 0;

  if (to_set & FUSE_SET_ATTR_MODE)
    set |= CFS_SET_MODE, to.mode = (uint16_t)st->st_mode;
  if (to_set & FUSE_SET_ATTR_UID)
    set |= CFS_SET_UID, to.uid = st->st_uid;
  if (to_set & FUSE_SET_ATTR_GID)
    set |= CFS_SET_GID, to.gid = st->st_gid;
  if (to_set & FUSE_SET_ATTR_SIZE)
    set |= CFS_SET_SIZE, to.size = (uint64_t)st->st_size;
  if (to_set & FUSE_SET_ATTR_ATIME)
    set |= CFS_SET_ATIME, to.atime = ns_of (&st->st_atim);
  if (to_set & FUSE_SET_ATTR_ATIME_NOW)
    set |= CFS_SET_ATIME, to.atime = now_ns ();
  if (to_set & FUSE_SET_ATTR_MTIME)
    set |= CFS_SET_MTIME, to.mtime = ns_of (&st->st_mtim);
  if (to_set & FUSE_SET_ATTR_MTIME_NOW)
    set |= CFS_SET_MTIME, to.mtime = now_ns ();
  reply_attr (req, cfs_setattr (fs, ino, set, &to, &a), &a);
}

static void
op_readlink (fuse_req_t req, fuse_ino_t ino)
{
  char buf[CFS_BLOCK + 1];
  int r = cfs_readlink (fs, ino, buf, sizeof buf);

  if (r < 0)
    fail (req, r);
  else
    fuse_reply_readlink (req, buf);
}

/* After a create: the directory's default ACL, or the umask (r is the
 * create's result).
 */
static int
inherit (fuse_req_t req, fuse_ino_t parent, int r, struct cfs_attr *a)
{
  if (r < 0)
    return r;
  return cfs_acl_inherit (fs, parent, a->ino, fuse_req_ctx (req)->umask, a);
}

static void
op_mknod (fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
          dev_t rdev)
{
  const struct fuse_ctx *ctx = fuse_req_ctx (req);
  struct cfs_attr a;

  reply_entry (req,
               inherit (req, parent,
                        cfs_mknod (fs, parent, name, (uint16_t)mode,
                                   (uint64_t)rdev, ctx->uid, ctx->gid, &a),
                        &a),
               &a);
}

static void
op_mkdir (fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
  const struct fuse_ctx *ctx = fuse_req_ctx (req);
  struct cfs_attr a;

  reply_entry (req,
               inherit (req, parent,
                        cfs_mkdir (fs, parent, name, (uint16_t)mode, ctx->uid,
                                   ctx->gid, &a),
                        &a),
               &a);
}

static void
op_symlink (fuse_req_t req, const char *link, fuse_ino_t parent,
            const char *name)
{
  const struct fuse_ctx *ctx = fuse_req_ctx (req);
  struct cfs_attr a;

  reply_entry (
      req, cfs_symlink (fs, parent, name, link, ctx->uid, ctx->gid, &a), &a);
}

static void
op_link (fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
         const char *newname)
{
  struct cfs_attr a;

  reply_entry (req, cfs_link (fs, ino, newparent, newname, &a), &a);
}

/* Reply to a call that returns only a status. */
static void
reply_status (fuse_req_t req, int r)
{
  if (r < 0)
    fail (req, r);
  else
    fuse_reply_err (req, 0);
}

static void
op_unlink (fuse_req_t req, fuse_ino_t parent, const char *name)
{
  reply_status (req, cfs_unlink (fs, parent, name));
}

static void
op_rmdir (fuse_req_t req, fuse_ino_t parent, const char *name)
{
  reply_status (req, cfs_rmdir (fs, parent, name));
}

static void
op_rename (fuse_req_t req, fuse_ino_t parent, const char *name,
           fuse_ino_t newparent, const char *newname, unsigned int flags)
{
  unsigned f = 0;

  if (flags & RENAME_NOREPLACE)
    f |= CFS_RENAME_NOREPLACE;
  if (flags & RENAME_EXCHANGE)
    f |= CFS_RENAME_EXCHANGE;
  if (flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE))
    f |= 0x100; /* unknown: refused */
  reply_status (req, cfs_rename (fs, parent, name, newparent, newname, f));
}

static void
op_open (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  struct cfs_attr a;
  int r = cfs_getattr (fs, ino, &a);

  if (r < 0) {
    fail (req, r);
    return;
  }
  if (S_ISDIR (a.mode)) {
    fuse_reply_err (req, EISDIR);
    return;
  }
  cfs_open_ref (fs, ino);
  fuse_reply_open (req, fi);
}

static void
op_create (fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
           struct fuse_file_info *fi)
{
  const struct fuse_ctx *ctx = fuse_req_ctx (req);
  struct fuse_entry_param e;
  struct cfs_attr a;
  int r = inherit (
      req, parent,
      cfs_create (fs, parent, name, (uint16_t)mode, ctx->uid, ctx->gid, &a),
      &a);

  if (r < 0) {
    fail (req, r);
    return;
  }
  memset (&e, 0, sizeof e);
  e.ino = a.ino;
  e.generation = a.generation;
  e.attr_timeout = e.entry_timeout = TTL;
  to_stat (&a, &e.attr);
  cfs_open_ref (fs, a.ino);
  fuse_reply_create (req, &e, fi);
}

static void
op_read (fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
         struct fuse_file_info *fi)
{
  char *buf = malloc (size ? size : 1);
  ssize_t n;

  if (buf == NULL) {
    fuse_reply_err (req, ENOMEM);
    return;
  }
  n = cfs_pread (fs, ino, buf, size, (uint64_t)off);
  if (n < 0)
    fail (req, (int)n);
  else {
    /* The data is the request's own now: the copy into the kernel (a
     * fifth of a cold read's time) need not hold the next read back.
     */
    pthread_mutex_unlock (&fs_lock);
    fuse_reply_buf (req, buf, (size_t)n);
    pthread_mutex_lock (&fs_lock);
  }
  free (buf);
}

static void
op_write (fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
          off_t off, struct fuse_file_info *fi)
{
  ssize_t n = cfs_pwrite (fs, ino, buf, size, (uint64_t)off);

  if (n < 0)
    fail (req, (int)n);
  else
    fuse_reply_write (req, (size_t)n);
}

static void
op_release (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  int r = cfs_release (fs, ino);

  fuse_reply_err (req, r < 0 ? -r : 0);
}

/* fsync makes the whole file system durable and its chunks clean: the
 * chunk states are per chunk, not per file, and an fsync'd file must
 * not need a check after a crash.
 */
static void
op_fsync (fuse_req_t req, fuse_ino_t ino, int datasync,
          struct fuse_file_info *fi)
{
  struct cfs_err err;

  if (cfs_fs_sync (fs, &err) == -1) {
    fprintf (stderr, "%s: %s\n", progname, err.msg);
    fuse_reply_err (req, EIO);
    return;
  }
  fuse_reply_err (req, 0);
}

static void
op_opendir (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  struct cfs_attr a;
  int r = cfs_getattr (fs, ino, &a);

  if (r < 0)
    fail (req, r);
  else if (!S_ISDIR (a.mode))
    fuse_reply_err (req, ENOTDIR);
  else
    fuse_reply_open (req, fi);
}

struct dirbuf {
  fuse_req_t req;
  char *buf;
  size_t size, used;
};

static int
add_entry (void *opaque, const char *name, uint64_t ino, uint16_t type_mode,
           uint64_t next)
{
  struct dirbuf *d = opaque;
  struct stat st = {.st_ino = ino, .st_mode = type_mode};
  size_t n = fuse_add_direntry (d->req, d->buf + d->used, d->size - d->used,
                                name, &st, (off_t)next);

  if (n > d->size - d->used)
    return 1; /* full: this entry comes first next time */
  d->used += n;
  return 0;
}

static void
op_readdir (fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
            struct fuse_file_info *fi)
{
  struct dirbuf d = {req, malloc (size ? size : 1), size, 0};
  int r;

  if (d.buf == NULL) {
    fuse_reply_err (req, ENOMEM);
    return;
  }
  r = cfs_readdir (fs, ino, (uint64_t)off, add_entry, &d);
  if (r < 0)
    fail (req, r);
  else
    fuse_reply_buf (req, d.buf, d.used);
  free (d.buf);
}

static void
op_releasedir (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  fuse_reply_err (req, 0);
}

static void
op_fsyncdir (fuse_req_t req, fuse_ino_t ino, int datasync,
             struct fuse_file_info *fi)
{
  op_fsync (req, ino, datasync, fi);
}

static void
op_statfs (fuse_req_t req, fuse_ino_t ino)
{
  struct cfs_fsstat s;
  struct statvfs v;

  cfs_statfs (fs, &s);
  memset (&v, 0, sizeof v);
  v.f_bsize = v.f_frsize = CFS_BLOCK;
  v.f_blocks = s.blocks;
  v.f_bfree = v.f_bavail = s.free_blocks;
  v.f_files = s.inodes;
  v.f_ffree = v.f_favail = s.free_inodes;
  v.f_namemax = 255;
  fuse_reply_statfs (req, &v);
}

static void
op_fallocate (fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t length,
              struct fuse_file_info *fi)
{
  unsigned m = 0;

  if (off < 0 || length <= 0) {
    fuse_reply_err (req, EINVAL);
    return;
  }
  if (mode &
      ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) {
    fuse_reply_err (req, EOPNOTSUPP);
    return;
  }
  m |= mode & FALLOC_FL_KEEP_SIZE ? CFS_FALLOC_KEEP_SIZE : 0;
  m |= mode & FALLOC_FL_PUNCH_HOLE ? CFS_FALLOC_PUNCH_HOLE : 0;
  m |= mode & FALLOC_FL_ZERO_RANGE ? CFS_FALLOC_ZERO_RANGE : 0;
  reply_status (req,
                cfs_fallocate (fs, ino, (uint64_t)off, (uint64_t)length, m));
}

static void
op_lseek (fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
          struct fuse_file_info *fi)
{
  uint64_t to;
  int r;

  if (off < 0) {
    fuse_reply_err (req, ENXIO);
    return;
  }
  if ((r = cfs_lseek (fs, ino, (uint64_t)off, whence, &to)) < 0)
    fuse_reply_err (req, -r);
  else
    fuse_reply_lseek (req, (off_t)to);
}

static void
op_setxattr (fuse_req_t req, fuse_ino_t ino, const char *name,
             const char *value, size_t size, int flags)
{
  unsigned f = 0;

  if (flags & ~(XATTR_CREATE | XATTR_REPLACE)) {
    fuse_reply_err (req, EINVAL);
    return;
  }
  if (flags & XATTR_CREATE)
    f |= CFS_XATTR_CREATE;
  if (flags & XATTR_REPLACE)
    f |= CFS_XATTR_REPLACE;
  reply_status (req, cfs_setxattr (fs, ino, name, value, size, f));
}

/* A value or list of up to size bytes (0: only its size), from get. */
static void
reply_xattr (fuse_req_t req, size_t size, ssize_t n, const char *buf)
{
  if (n < 0)
    fail (req, (int)n);
  else if (size == 0)
    fuse_reply_xattr (req, (size_t)n);
  else
    fuse_reply_buf (req, buf, (size_t)n);
}

/* With a getxattr to ask, the kernel asks for security.capability before
 * every write(2) of a regular file (to drop file capabilities, which FUSE
 * does not let it mark as absent): one request more per write call.
 */
static void
op_getxattr (fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
  char *buf = malloc (size ? size : 1);

  if (buf == NULL) {
    fuse_reply_err (req, ENOMEM);
    return;
  }
  reply_xattr (req, size, cfs_getxattr (fs, ino, name, buf, size), buf);
  free (buf);
}

/* The names of list[0..n) but trusted.*: the new length. */
static size_t
drop_trusted (char *list, size_t n)
{
  size_t in = 0, out = 0;

  while (in < n) {
    size_t len = strlen (list + in) + 1;
    if (strncmp (list + in, "trusted.", 8) != 0) {
      memmove (list + out, list + in, len);
      out += len;
    }
    in += len;
  }
  return out;
}

/* trusted.* is listed to root only, as ext4 lists it only to a caller
 * with CAP_SYS_ADMIN (the kernel refuses anyone else its values, and
 * rsync -X or getfattr -m - would stumble on them); uid 0 stands for the
 * capability here.
 */
static void
op_listxattr (fuse_req_t req, fuse_ino_t ino, size_t size)
{
  ssize_t n = cfs_listxattr (fs, ino, NULL, 0);
  char *buf;

  if (n < 0) {
    fail (req, (int)n);
    return;
  }
  if ((buf = malloc (n ? (size_t)n : 1)) == NULL) {
    fuse_reply_err (req, ENOMEM);
    return;
  }
  n = cfs_listxattr (fs, ino, buf, (size_t)n);
  if (n > 0 && fuse_req_ctx (req)->uid != 0)
    n = (ssize_t)drop_trusted (buf, (size_t)n);
  if (n > 0 && size && (size_t)n > size)
    n = -ERANGE;
  reply_xattr (req, size, n, buf);
  free (buf);
}

static void
op_removexattr (fuse_req_t req, fuse_ino_t ino, const char *name)
{
  reply_status (req, cfs_removexattr (fs, ino, name));
}

/* No flush: nothing is held per open file, and without the op libfuse
 * answers ENOSYS, after which the kernel stops sending FLUSH -- one
 * round trip less on every close.
 */
static const struct fuse_lowlevel_ops ops = {
    .init = op_init,
    .destroy = op_destroy,
    .lookup = op_lookup,
    .getattr = op_getattr,
    .setattr = op_setattr,
    .readlink = op_readlink,
    .mknod = op_mknod,
    .mkdir = op_mkdir,
    .unlink = op_unlink,
    .rmdir = op_rmdir,
    .symlink = op_symlink,
    .rename = op_rename,
    .link = op_link,
    .open = op_open,
    .read = op_read,
    .write = op_write,
    .release = op_release,
    .fsync = op_fsync,
    .opendir = op_opendir,
    .readdir = op_readdir,
    .releasedir = op_releasedir,
    .fsyncdir = op_fsyncdir,
    .statfs = op_statfs,
    .create = op_create,
    .fallocate = op_fallocate,
    .setxattr = op_setxattr,
    .getxattr = op_getxattr,
    .listxattr = op_listxattr,
    .removexattr = op_removexattr,
    .lseek = op_lseek,
};

struct server {
  struct fuse_session *se;
  sem_t stopped; /* posted by each worker that stops */
  pthread_t workers[WORKERS];
  int nworkers;
};

static void
free_buf (void *opaque)
{
  free (((struct fuse_buf *)opaque)->mem);
}

/* A worker: take requests (cancellable only while waiting for one) and
 * process each holding fs_lock, until the file system is unmounted or
 * the session told to exit.
 */
static void *
serve_requests (void *opaque)
{
  struct server *sv = opaque;
  struct fuse_buf buf = {0};
  int r;

  pthread_setcancelstate (PTHREAD_CANCEL_DISABLE, NULL);
  pthread_cleanup_push (free_buf, &buf);
  while (!fuse_session_exited (sv->se)) {
    pthread_setcancelstate (PTHREAD_CANCEL_ENABLE, NULL);
    r = fuse_session_receive_buf (sv->se, &buf);
    pthread_setcancelstate (PTHREAD_CANCEL_DISABLE, NULL);
    if (r == -EINTR || r == -EAGAIN)
      continue;
    if (r <= 0) {
      if (r < 0 && r != -ENODEV) /* ENODEV: unmounted */
        fprintf (stderr, "%s: reading a request: %s\n", progname,
                 strerror (-r));
      fuse_session_exit (sv->se);
      break;
    }
    pthread_mutex_lock (&fs_lock);
    fuse_session_process_buf (sv->se, &buf);
    pthread_mutex_unlock (&fs_lock);
  }
  pthread_cleanup_pop (1);
  sem_post (&sv->stopped);
  return NULL;
}

/* Sync if `commit` seconds passed since the last one and there are
 * changes: the commit interval bounds what a crash loses, and how many
 * chunks it leaves dirty.
 */
static void
commit_if_due (int commit, double *last)
{
  double now = (double)now_ns () / 1e9;
  struct cfs_err err;
  struct cfs_fsstat st;

  if (commit <= 0 || now - *last < commit)
    return;
  pthread_mutex_lock (&fs_lock);
  cfs_statfs (fs, &st);
  if (st.dirty_chunks && cfs_fs_sync (fs, &err) == -1)
    fprintf (stderr, "%s: %s\n", progname, err.msg);
  pthread_mutex_unlock (&fs_lock);
  *last = now;
}

/* A larger read-ahead for the mount's own backing device info: the
 * kernel reads ahead 128 KiB at a time by default, one request (and one
 * NBD round trip) each, and the INIT reply can only lower that.  The
 * stat waits for INIT, served by the workers; when it returns the
 * kernel has its limits and the setting sticks.  Unprivileged, or with
 * no sysfs, the default stays: this is speed, not behaviour.
 */
static void
read_ahead (const char *mountpoint)
{
  char path[128];
  struct stat st;
  FILE *fp;

  if (stat (mountpoint, &st) == -1)
    return;
  /* fuseblk's is "MAJ:MIN-fuseblk"; a plain FUSE mount's, on an
   * anonymous device (major 0), "0:MIN".
   */
  snprintf (path, sizeof path, "/sys/class/bdi/%u:%u-fuseblk/read_ahead_kb",
            major (st.st_dev), minor (st.st_dev));
  if (access (path, W_OK) != 0) {
    if (major (st.st_dev) != 0)
      return;
    snprintf (path, sizeof path, "/sys/class/bdi/0:%u/read_ahead_kb",
              minor (st.st_dev));
  }
  if ((fp = fopen (path, "w")) != NULL) {
    fprintf (fp, "%d\n", READ_AHEAD_KB);
    fclose (fp);
  }
}

/* The workers serve until unmounted (or a signal); this thread commits
 * meanwhile.  0, or -1 if no worker could start.
 */
static int
serve (struct fuse_session *se, const char *mountpoint, int commit)
{
  struct server sv = {.se = se};
  double last = (double)now_ns () / 1e9;
  int i;

  sem_init (&sv.stopped, 0, 0);
  for (i = 0; i < WORKERS; i++)
    if (pthread_create (&sv.workers[sv.nworkers], NULL, serve_requests, &sv) ==
        0)
      sv.nworkers++;
  if (sv.nworkers == 0) {
    fprintf (stderr, "%s: no thread to serve requests\n", progname);
    sem_destroy (&sv.stopped);
    return -1;
  }
  read_ahead (mountpoint);
  while (!fuse_session_exited (se)) {
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    ts.tv_nsec += 500000000;
    ts.tv_sec += ts.tv_nsec / 1000000000, ts.tv_nsec %= 1000000000;
    if (sem_timedwait (&sv.stopped, &ts) == 0)
      sem_post (&sv.stopped); /* one stopped: the loop sees the exit */
    commit_if_due (commit, &last);
  }
  /* The others may still wait for a request that never comes. */
  for (i = 0; i < sv.nworkers; i++)
    pthread_cancel (sv.workers[i]);
  for (i = 0; i < sv.nworkers; i++)
    pthread_join (sv.workers[i], NULL);
  sem_destroy (&sv.stopped);
  fuse_session_reset (se);
  return 0;
}

enum {
  KEY_HELP,
  KEY_VERSION,
  KEY_RO
};

static const struct fuse_opt opt_spec[] = {
    {"force", offsetof (struct options, force), 1},
    {"commit=%d", offsetof (struct options, commit), 0},
    FUSE_OPT_KEY ("ro", KEY_RO),
    FUSE_OPT_KEY ("-h", KEY_HELP),
    FUSE_OPT_KEY ("--help", KEY_HELP),
    FUSE_OPT_KEY ("-V", KEY_VERSION),
    FUSE_OPT_KEY ("--version", KEY_VERSION),
    FUSE_OPT_END,
};

static int
opt_proc (void *data, const char *arg, int key, struct fuse_args *outargs)
{
  struct options *o = data;

  switch (key) {
    case KEY_HELP:
      o->help = 1;
      return 0;
    case KEY_VERSION:
      o->version = 1;
      return 0;
    case KEY_RO:
      o->ro = 1;
      return 1; /* and the kernel mounts it read-only too */
    case FUSE_OPT_KEY_NONOPT:
      if (o->device == NULL) {
        o->device = strdup (arg);
        return 0;
      }
      return 1; /* the mount point, for fuse_parse_cmdline */
    default:
      return 1;
  }
}

/* The options for the kernel: permissions, and the source mount(8)
 * shows.
 */
static void
kernel_args (struct fuse_args *args, const char *device)
{
  char fsname[PATH_MAX + 16];

  /* The kernel checks permissions from the modes chunkfs keeps. */
  fuse_opt_add_arg (args, "-odefault_permissions");
  /* The source mount(8) shows; for a fuseblk mount (-o blkdev, what
   * `mount -t fuseblk.chunkfs` asks for) it must be the device itself.
   */
  snprintf (fsname, sizeof fsname, "-ofsname=%s",
            strpbrk (device, ",\\") ? "chunkfs" : device);
  fuse_opt_add_arg (args, fsname);
}

/* The device in *io and the file system on it in fs: 0, or -1 (said). */
static int
open_fs (const struct options *o, struct cfs_io **io)
{
  struct cfs_err err;

  if ((*io = cfs_open (o->device, !o->ro, &err)) == NULL) {
    fprintf (stderr, "%s: %s\n", progname, err.msg);
    return -1;
  }
  if ((fs = cfs_fs_open (
           *io, (o->ro ? 0 : CFS_OPEN_WRITE) | (o->force ? CFS_OPEN_FORCE : 0),
           &err)) == NULL) {
    fprintf (stderr, "%s: %s: %s\n", progname, o->device, err.msg);
    return -1;
  }
  return 0;
}

/* Mounted on the mount point and served until unmounted: the exit
 * code.
 */
static int
mount_and_serve (struct fuse_args *args, const struct fuse_cmdline_opts *co,
                 int commit, struct cfs_io *io)
{
  struct cfs_err err;

  struct fuse_session *se;
  int ret = 1;

  if ((se = fuse_session_new (args, &ops, sizeof ops, NULL)) == NULL)
    return 1;
  if (fuse_set_signal_handlers (se) == 0) {
    if (fuse_session_mount (se, co->mountpoint) == 0) {
      fuse_daemonize (co->foreground);
      /* After the fork, which a thread would not survive.  Without it
       * each 1 MiB write waits for the device; only speed is lost.
       */
      if (cfs_write_behind (io, WRITE_BEHIND, &err) == -1)
        fprintf (stderr, "%s: %s\n", progname, err.msg);
      ret = serve (se, co->mountpoint, commit) != 0;
      fuse_session_unmount (se);
    }
    fuse_remove_signal_handlers (se);
  }
  fuse_session_destroy (se);
  return ret;
}

/* The file system and its device closed (either may be NULL): ret, or 1
 * when closing fails.
 */
static int
close_fs (struct cfs_io *io, int ret)
{
  struct cfs_err err;

  if (fs && cfs_fs_close (fs, &err) == -1) {
    fprintf (stderr, "%s: %s\n", progname, err.msg);
    ret = 1;
  }
  if (io && cfs_close (io, &err) == -1) {
    fprintf (stderr, "%s: %s\n", progname, err.msg);
    ret = 1;
  }
  return ret;
}

int
main (int argc, char **argv)
{
  struct fuse_args args = FUSE_ARGS_INIT (argc, argv);
  struct options o = {.commit = 5};
  struct fuse_cmdline_opts co = {0};
  struct cfs_io *io = NULL;
  int ret = 1;

  if (fuse_opt_parse (&args, &o, opt_spec, opt_proc) == -1)
    return 1;
  if (o.help || o.version) {
    if (o.help)
      usage (stdout);
    else
      printf ("chunkfs (futuredisk) format %d, libfuse %s\n", CFS_VERSION,
              fuse_pkgversion ());
    free (o.device);
    fuse_opt_free_args (&args);
    return 0;
  }
  if (fuse_parse_cmdline (&args, &co) != 0)
    return 1;
  if (o.commit < 0)
    fprintf (stderr, "%s: -o commit=%d: seconds, 0 or more\n", progname,
             o.commit);
  else if (o.device == NULL || co.mountpoint == NULL) {
    fprintf (stderr, "%s: %s\n", progname,
             o.device ? "no mount point given" : "no device given");
    usage (stderr);
  } else {
    kernel_args (&args, o.device);
    if (open_fs (&o, &io) == 0)
      ret = mount_and_serve (&args, &co, o.commit, io);
  }
  ret = close_fs (io, ret);
  free (co.mountpoint);
  free (o.device);
  fuse_opt_free_args (&args);
  return ret;
}
