/* chunkfs — the file system itself: a mounted chunkfs and the operations
 * the FUSE mount (and tests) call on it.  Inode-based, as FUSE's
 * low-level API: an inode is named by cfs_ref (chunk, inode), and the
 * root directory is cfs_ref (0, 1) = 1, FUSE's root.
 *
 * Operations return 0 or a negative errno.  -EIO means a block could not
 * be read or failed its checksum: its chunk is then marked damaged, and
 * cfs_fs_error says which block.  Single-threaded: the caller serialises.
 */
#ifndef CHUNKFS_FS_H
#define CHUNKFS_FS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "chunkfs/format.h"
#include "chunkfs/io.h"

struct cfs_fs;

struct cfs_attr {
  uint64_t ino; /* cfs_ref (chunk, inode) */
  uint32_t generation;
  uint16_t mode;
  uint32_t links, uid, gid;
  uint64_t size;
  uint64_t blocks; /* 4096-byte blocks allocated, extent leaves included */
  uint64_t atime, mtime, ctime;
  uint64_t rdev; /* a device node's (Linux's dev_t); 0 for anything else */
};

struct cfs_fsstat {
  uint64_t blocks, free_blocks; /* 4096-byte blocks */
  uint64_t inodes, free_inodes;
  uint32_t chunks, dirty_chunks;
};

#define CFS_OPEN_WRITE 1u /* mount read-write */
#define CFS_OPEN_FORCE 2u /* even with dirty or damaged chunks */

/* Mount the chunkfs on io (which stays the caller's).  Reads the
 * superblock (or the first good copy) and every chunk header.  -1 with
 * err; a file system with dirty or damaged chunks is refused unless
 * CFS_OPEN_FORCE ("check it first").
 */
extern struct cfs_fs *cfs_fs_open (struct cfs_io *io, unsigned flags,
                                   struct cfs_err *err);

/* Make everything durable and every touched chunk clean again. */
extern int cfs_fs_sync (struct cfs_fs *fs, struct cfs_err *err);

/* Sync (when writable) and free; -1 with err if the sync failed. */
extern int cfs_fs_close (struct cfs_fs *fs, struct cfs_err *err);

/* Free without writing anything: what a crash leaves (tests). */
extern void cfs_fs_abandon (struct cfs_fs *fs);

extern const struct cfs_super *cfs_fs_super (const struct cfs_fs *fs);

/* What the last -EIO was about. */
extern const char *cfs_fs_error (const struct cfs_fs *fs);

extern int cfs_getattr (struct cfs_fs *fs, uint64_t ino, struct cfs_attr *a);
extern int cfs_lookup (struct cfs_fs *fs, uint64_t dir, const char *name,
                       struct cfs_attr *a);

/* Create a regular file, directory or symlink (target) in dir.  In a
 * set-group-ID directory the new inode takes the directory's group (and
 * a new directory the set-group-ID bit), as in System V and ext4.
 */
extern int cfs_create (struct cfs_fs *fs, uint64_t dir, const char *name,
                       uint16_t mode, uint32_t uid, uint32_t gid,
                       struct cfs_attr *a);
extern int cfs_mkdir (struct cfs_fs *fs, uint64_t dir, const char *name,
                      uint16_t mode, uint32_t uid, uint32_t gid,
                      struct cfs_attr *a);
/* A regular file, fifo, socket, or character or block device (rdev,
 * Linux's dev_t, kept for devices only) in dir: mknod(2).  -EINVAL for
 * any other type.
 */
extern int cfs_mknod (struct cfs_fs *fs, uint64_t dir, const char *name,
                      uint16_t mode, uint64_t rdev, uint32_t uid, uint32_t gid,
                      struct cfs_attr *a);
extern int cfs_symlink (struct cfs_fs *fs, uint64_t dir, const char *name,
                        const char *target, uint32_t uid, uint32_t gid,
                        struct cfs_attr *a);
extern int cfs_readlink (struct cfs_fs *fs, uint64_t ino, char *buf,
                         size_t len);
extern int cfs_link (struct cfs_fs *fs, uint64_t ino, uint64_t dir,
                     const char *name, struct cfs_attr *a);
extern int cfs_unlink (struct cfs_fs *fs, uint64_t dir, const char *name);
extern int cfs_rmdir (struct cfs_fs *fs, uint64_t dir, const char *name);

/* rename(2) and renameat2(2): NOREPLACE fails with -EEXIST when newname
 * exists; EXCHANGE swaps two existing names atomically (either may be a
 * directory, in different parents).
 */
#define CFS_RENAME_NOREPLACE 1u
#define CFS_RENAME_EXCHANGE  2u
extern int cfs_rename (struct cfs_fs *fs, uint64_t dir, const char *name,
                       uint64_t newdir, const char *newname, unsigned flags);

#define CFS_SET_MODE  1u
#define CFS_SET_UID   2u
#define CFS_SET_GID   4u
#define CFS_SET_SIZE  8u
#define CFS_SET_ATIME 16u
#define CFS_SET_MTIME 32u
/* Any change marks ctime, CFS_SET_SIZE mtime too.  A size that does
 * not grow the file frees its blocks from there on, those fallocate's
 * KEEP_SIZE allocated past the end included, as ext4 does.
 */
extern int cfs_setattr (struct cfs_fs *fs, uint64_t ino, unsigned set,
                        const struct cfs_attr *to, struct cfs_attr *a);

/* Bytes read (short only at end of file), or a negative errno.  Reads
 * (and cfs_readdir from cookie 0) update atime as relatime does.
 */
extern ssize_t cfs_pread (struct cfs_fs *fs, uint64_t ino, void *buf,
                          size_t len, uint64_t off);
extern ssize_t cfs_pwrite (struct cfs_fs *fs, uint64_t ino, const void *buf,
                           size_t len, uint64_t off);
/* fallocate(2) modes. */
#define CFS_FALLOC_KEEP_SIZE  1u /* do not grow the file */
#define CFS_FALLOC_PUNCH_HOLE 2u /* free the blocks (with KEEP_SIZE only) */
#define CFS_FALLOC_ZERO_RANGE 4u /* read as zeros, blocks kept allocated */
/* Mode 0 (or KEEP_SIZE): allocate blocks for [off, off + len) that read
 * as zeros (unwritten extents: nothing is written).  PUNCH_HOLE: the
 * range reads as zeros and its whole blocks are freed.  ZERO_RANGE: the
 * range reads as zeros, its whole blocks allocated.  -EOPNOTSUPP for any
 * other mode.
 */
extern int cfs_fallocate (struct cfs_fs *fs, uint64_t ino, uint64_t off,
                          uint64_t len, unsigned mode);
/* lseek(2)'s SEEK_DATA and SEEK_HOLE from off: the offset in *out;
 * -ENXIO at or past the end (or, for SEEK_DATA, no data after off).
 */
extern int cfs_lseek (struct cfs_fs *fs, uint64_t ino, uint64_t off, int whence,
                      uint64_t *out);

/* Directory entries from cookie (0: the first; "." and ".." included),
 * each given to fn with the cookie of the next; fn returns non-zero to
 * stop (the entry it refused is given again next time).
 */
typedef int (*cfs_dirent_fn) (void *opaque, const char *name, uint64_t ino,
                              uint16_t type_mode, uint64_t next);
extern int cfs_readdir (struct cfs_fs *fs, uint64_t dir, uint64_t cookie,
                        cfs_dirent_fn fn, void *opaque);

/* Open files: an inode unlinked while open is freed at its last close. */
extern void cfs_open_ref (struct cfs_fs *fs, uint64_t ino);
extern int cfs_release (struct cfs_fs *fs, uint64_t ino);

extern void cfs_statfs (struct cfs_fs *fs, struct cfs_fsstat *st);

/* Extended attributes (user., trusted., security.) and POSIX ACLs
 * (system.posix_acl_access, system.posix_acl_default, in the kernel's
 * xattr form), as getxattr(2) and friends: with len 0 only the size is
 * returned; -ERANGE when len is too small, -ENODATA when absent,
 * -EOPNOTSUPP for another namespace, -ENOSPC when the inode's
 * attributes would outgrow one block.  Setting the access ACL sets the
 * mode's permission bits (and keeps no ACL the mode says all of).
 */
#define CFS_XATTR_CREATE  1u /* fail with -EEXIST if it exists */
#define CFS_XATTR_REPLACE 2u /* fail with -ENODATA unless it exists */
extern ssize_t cfs_getxattr (struct cfs_fs *fs, uint64_t ino, const char *name,
                             void *buf, size_t len);
extern int cfs_setxattr (struct cfs_fs *fs, uint64_t ino, const char *name,
                         const void *value, size_t len, unsigned flags);
/* The names, each NUL-terminated. */
extern ssize_t cfs_listxattr (struct cfs_fs *fs, uint64_t ino, char *buf,
                              size_t len);
extern int cfs_removexattr (struct cfs_fs *fs, uint64_t ino, const char *name);
/* A new inode ino in dir (created with the mode asked for, unmasked):
 * dir's default ACL inherited as POSIX says (a directory's default too,
 * the mode narrowed by it), or without one the umask applied.  *a is
 * the new attributes.
 */
extern int cfs_acl_inherit (struct cfs_fs *fs, uint64_t dir, uint64_t ino,
                            uint32_t umask, struct cfs_attr *a);

/* Where an inode's structures are on the device (the harness's block-type
 * map aims faults with it): the absolute block of its inode-table block,
 * its first data block, its first extent leaf (CHKE), and its chunk's
 * header, bitmaps and back-reference table.  -ENOENT if it has none.
 */
enum cfs_where {
  CFS_AT_INODE,
  CFS_AT_DATA,
  CFS_AT_EXTENT,
  CFS_AT_HEADER,
  CFS_AT_BLOCK_BITMAP,
  CFS_AT_INODE_BITMAP,
  CFS_AT_BACKREFS,
};
extern int cfs_locate (struct cfs_fs *fs, uint64_t ino, enum cfs_where where,
                       uint64_t *abs);

/* Where a file's data lies on the device (the harness matches losses to
 * the faults on these blocks): each run of blocks that follow each other
 * both in the file and on the device, in file order, given to fn as
 * (file block, absolute block, count); holes are left out.  fn returns
 * non-zero to stop (cfs_file_runs returns it).  Every block up to the
 * file's size is looked up, so the cost grows with the size.
 */
typedef int (*cfs_run_fn) (void *opaque, uint64_t lblk, uint64_t abs,
                           uint64_t count);
extern int cfs_file_runs (struct cfs_fs *fs, uint64_t ino, cfs_run_fn fn,
                          void *opaque);

#endif
