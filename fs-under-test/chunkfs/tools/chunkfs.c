/* chunkfs — the FUSE mount: `chunkfs [-o OPTS] DEVICE|URI MOUNTPOINT`.
 *
 * libfuse's low-level API, single-threaded: chunkfs names inodes itself
 * (chunk, inode), which is what the low-level API wants, and the file
 * system underneath serialises its callers.
 */
#define FUSE_USE_VERSION 34
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <fuse_lowlevel.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "chunkfs/fs.h"
#include "chunkfs/io.h"

#define TTL 1.0 /* seconds the kernel may cache names and attributes */

struct options {
  char *device;
  int force, ro, help, version;
  int commit; /* seconds between syncs (-o commit=N; 0: only on fsync) */
};

static struct cfs_fs *fs;
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

static void
op_mknod (fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
          dev_t rdev)
{
  const struct fuse_ctx *ctx = fuse_req_ctx (req);
  struct cfs_attr a;

  reply_entry (
      req,
      cfs_create (fs, parent, name, (uint16_t)mode, ctx->uid, ctx->gid, &a),
      &a);
}

static void
op_mkdir (fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
  const struct fuse_ctx *ctx = fuse_req_ctx (req);
  struct cfs_attr a;

  reply_entry (
      req, cfs_mkdir (fs, parent, name, (uint16_t)mode, ctx->uid, ctx->gid, &a),
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
  int r = cfs_create (fs, parent, name, (uint16_t)mode, ctx->uid, ctx->gid, &a);

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
  else
    fuse_reply_buf (req, buf, (size_t)n);
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
op_flush (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  fuse_reply_err (req, 0); /* nothing is held per open file */
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

static const struct fuse_lowlevel_ops ops = {
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
    .flush = op_flush,
    .release = op_release,
    .fsync = op_fsync,
    .opendir = op_opendir,
    .readdir = op_readdir,
    .releasedir = op_releasedir,
    .fsyncdir = op_fsyncdir,
    .statfs = op_statfs,
    .create = op_create,
    .fallocate = op_fallocate,
    .lseek = op_lseek,
};

/* fuse_session_loop, with a sync every `commit` seconds while the file
 * system has changes: the commit interval bounds what a crash loses, and
 * how many chunks it leaves dirty.
 */
static int
serve (struct fuse_session *se, int commit)
{
  struct fuse_buf buf = {0};
  struct pollfd p = {.fd = fuse_session_fd (se), .events = POLLIN};
  double last = (double)now_ns () / 1e9;
  int r = 0;

  while (!fuse_session_exited (se)) {
    double now;
    int n = poll (&p, 1, commit > 0 ? 500 : -1);

    if (n < 0 && errno != EINTR) {
      r = -errno;
      break;
    }
    if (n > 0) {
      r = fuse_session_receive_buf (se, &buf);
      if (r == -EINTR)
        continue;
      if (r <= 0) {
        if (r == -ENODEV)
          r = 0; /* unmounted */
        break;
      }
      fuse_session_process_buf (se, &buf);
      r = 0;
    }
    now = (double)now_ns () / 1e9;
    if (commit > 0 && now - last >= commit) {
      struct cfs_err err;
      struct cfs_fsstat st;
      cfs_statfs (fs, &st);
      if (st.dirty_chunks && cfs_fs_sync (fs, &err) == -1)
        fprintf (stderr, "%s: %s\n", progname, err.msg);
      last = now;
    }
  }
  free (buf.mem);
  fuse_session_reset (se);
  return r < 0 ? -1 : 0;
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
                 int commit)
{
  struct fuse_session *se;
  int ret = 1;

  if ((se = fuse_session_new (args, &ops, sizeof ops, NULL)) == NULL)
    return 1;
  if (fuse_set_signal_handlers (se) == 0) {
    if (fuse_session_mount (se, co->mountpoint) == 0) {
      fuse_daemonize (co->foreground);
      ret = serve (se, commit) != 0;
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
      ret = mount_and_serve (&args, &co, o.commit);
  }
  ret = close_fs (io, ret);
  free (co.mountpoint);
  free (o.device);
  fuse_opt_free_args (&args);
  return ret;
}
