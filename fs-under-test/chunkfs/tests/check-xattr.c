/* chunkfs — unit tests for extended attributes and POSIX ACLs: the
 * library calls behave as getxattr(2) and friends, a list moves between
 * the inode and its xattr block as it grows and shrinks (and the block
 * is counted and freed), ACLs keep the mode in step and are inherited,
 * and the checker finds and repairs damage to xattr areas and blocks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-main.h"
#include "chunkfs/check.h"
#include "chunkfs/fs.h"
#include "chunkfs/io.h"
#include "chunkfs/mkfs.h"
#include "img.h"
#include "fs-internal.h"
#include "problem.h"

static const uint8_t uuid_a[16] = {1, 2,  3,  4,  5,  6,  7,  8,
                                   9, 10, 11, 12, 13, 14, 15, 16};

static const struct img_spec spec = {"xattr", 64 << 20, 16 << 10, uuid_a};

/* A fresh 64 MiB chunkfs, mounted. */
static void
img_make (struct img *m)
{
  img_create (m, &spec);
}

static void
img_reopen (struct img *m)
{
  img_unmount (m);
  img_mount (m);
}

static uint64_t
blocks_of (struct img *m, uint64_t ino)
{
  struct cfs_attr a;

  ck_assert_int_eq (cfs_getattr (m->fs, ino, &a), 0);
  return a.blocks;
}

static uint64_t
free_blocks (struct img *m)
{
  struct cfs_fsstat st;
  struct cfs_err err;

  ck_assert_int_eq (cfs_fs_sync (m->fs, &err), 0);
  cfs_statfs (m->fs, &st);
  return st.free_blocks;
}

START_TEST (test_calls)
{
  struct img m;
  struct cfs_attr a;
  char buf[256];
  uint64_t f;

  img_make (&m);
  ck_assert_int_eq (cfs_create (m.fs, 1, "f", 0100644, 0, 0, &a), 0);
  f = a.ino;
  ck_assert_int_eq (cfs_getxattr (m.fs, f, "user.a", buf, sizeof buf),
                    -ENODATA);
  ck_assert_int_eq (cfs_setxattr (m.fs, f, "user.a", "one", 3, 0), 0);
  ck_assert_int_eq (cfs_setxattr (m.fs, f, "trusted.t", "", 0, 0), 0);
  ck_assert_int_eq (cfs_setxattr (m.fs, f, "security.s", "sec", 3, 0), 0);
  /* Size probe, a buffer too small, the value. */
  ck_assert_int_eq (cfs_getxattr (m.fs, f, "user.a", NULL, 0), 3);
  ck_assert_int_eq (cfs_getxattr (m.fs, f, "user.a", buf, 2), -ERANGE);
  ck_assert_int_eq (cfs_getxattr (m.fs, f, "user.a", buf, sizeof buf), 3);
  ck_assert_mem_eq (buf, "one", 3);
  ck_assert_int_eq (cfs_getxattr (m.fs, f, "trusted.t", buf, sizeof buf), 0);
  /* The flags. */
  ck_assert_int_eq (
      cfs_setxattr (m.fs, f, "user.a", "two", 3, CFS_XATTR_CREATE), -EEXIST);
  ck_assert_int_eq (
      cfs_setxattr (m.fs, f, "user.b", "two", 3, CFS_XATTR_REPLACE), -ENODATA);
  ck_assert_int_eq (
      cfs_setxattr (m.fs, f, "user.a", "three", 5, CFS_XATTR_REPLACE), 0);
  ck_assert_int_eq (cfs_getxattr (m.fs, f, "user.a", buf, sizeof buf), 5);
  /* The list, in the order set (a replaced entry goes last). */
  {
    const char want[] = "trusted.t\0security.s\0user.a";
    ck_assert_int_eq (cfs_listxattr (m.fs, f, NULL, 0), sizeof want);
    ck_assert_int_eq (cfs_listxattr (m.fs, f, buf, 5), -ERANGE);
    ck_assert_int_eq (cfs_listxattr (m.fs, f, buf, sizeof buf), sizeof want);
    ck_assert_mem_eq (buf, want, sizeof want);
  }
  /* Names. */
  ck_assert_int_eq (cfs_setxattr (m.fs, f, "user.", "x", 1, 0), -EINVAL);
  ck_assert_int_eq (cfs_setxattr (m.fs, f, "other.x", "x", 1, 0), -EOPNOTSUPP);
  ck_assert_int_eq (cfs_setxattr (m.fs, f, "system.x", "x", 1, 0), -EOPNOTSUPP);
  {
    char name[300];
    memset (name, 'n', sizeof name);
    memcpy (name, "user.", 5);
    name[256] = '\0';
    ck_assert_int_eq (cfs_setxattr (m.fs, f, name, "x", 1, 0), -ERANGE);
    name[255] = '\0';
    ck_assert_int_eq (cfs_setxattr (m.fs, f, name, "x", 1, 0), 0);
    ck_assert_int_eq (cfs_getxattr (m.fs, f, name, buf, sizeof buf), 1);
  }
  ck_assert_int_eq (cfs_removexattr (m.fs, f, "user.a"), 0);
  ck_assert_int_eq (cfs_removexattr (m.fs, f, "user.a"), -ENODATA);
  ck_assert_int_eq (cfs_getxattr (m.fs, f, "user.a", buf, sizeof buf),
                    -ENODATA);
  /* They last. */
  img_reopen (&m);
  ck_assert_int_eq (cfs_getxattr (m.fs, f, "security.s", buf, sizeof buf), 3);
  ck_assert_mem_eq (buf, "sec", 3);
  img_cleanup (&m);
}
END_TEST

START_TEST (test_block)
{
  struct img m;
  struct cfs_attr a;
  char big[4096], buf[4096];
  uint64_t f, s, before, b0;

  img_make (&m);
  memset (big, 'v', sizeof big);
  ck_assert_int_eq (cfs_create (m.fs, 1, "f", 0100644, 0, 0, &a), 0);
  f = a.ino;
  before = free_blocks (&m);
  b0 = blocks_of (&m, f);
  /* Small: in the inode, no block. */
  ck_assert_int_eq (cfs_setxattr (m.fs, f, "user.small", big, 60, 0), 0);
  ck_assert_uint_eq (blocks_of (&m, f), b0);
  ck_assert_uint_eq (free_blocks (&m), before);
  /* Grown past 100 bytes: the whole list goes to one block. */
  ck_assert_int_eq (cfs_setxattr (m.fs, f, "user.big", big, 2000, 0), 0);
  ck_assert_uint_eq (blocks_of (&m, f), b0 + 1);
  ck_assert_uint_eq (free_blocks (&m), before - 1);
  img_reopen (&m);
  ck_assert_int_eq (cfs_getxattr (m.fs, f, "user.big", buf, sizeof buf), 2000);
  ck_assert_int_eq (cfs_getxattr (m.fs, f, "user.small", buf, sizeof buf), 60);
  /* More than a block holds: refused, nothing changed. */
  ck_assert_int_eq (cfs_setxattr (m.fs, f, "user.more", big, 2100, 0), -ENOSPC);
  ck_assert_int_eq (cfs_setxattr (m.fs, f, "user.huge", big, 4096, 0), -ENOSPC);
  ck_assert_int_eq (cfs_getxattr (m.fs, f, "user.more", buf, sizeof buf),
                    -ENODATA);
  /* Shrunk: back in the inode, the block freed. */
  ck_assert_int_eq (cfs_removexattr (m.fs, f, "user.big"), 0);
  ck_assert_uint_eq (blocks_of (&m, f), b0);
  ck_assert_uint_eq (free_blocks (&m), before);
  ck_assert_int_eq (cfs_getxattr (m.fs, f, "user.small", buf, sizeof buf), 60);
  /* An inline symlink has no room in its inode: a block at once. */
  ck_assert_int_eq (cfs_symlink (m.fs, 1, "s", "f", 0, 0, &a), 0);
  s = a.ino;
  ck_assert_int_eq (cfs_setxattr (m.fs, s, "trusted.x", "y", 1, 0), 0);
  ck_assert_uint_eq (blocks_of (&m, s), 1);
  {
    char t[16];
    ck_assert_int_ge (cfs_readlink (m.fs, s, t, sizeof t), 0);
    ck_assert_str_eq (t, "f");
  }
  /* Its last attribute gone, so is the block. */
  ck_assert_int_eq (cfs_removexattr (m.fs, s, "trusted.x"), 0);
  ck_assert_uint_eq (blocks_of (&m, s), 0);
  ck_assert_int_eq (cfs_setxattr (m.fs, s, "trusted.x", "y", 1, 0), 0);
  /* Freed with their inodes. */
  ck_assert_int_eq (cfs_setxattr (m.fs, f, "user.big", big, 2000, 0), 0);
  ck_assert_uint_eq (free_blocks (&m), before - 2);
  ck_assert_int_eq (cfs_unlink (m.fs, 1, "f"), 0);
  ck_assert_int_eq (cfs_unlink (m.fs, 1, "s"), 0);
  ck_assert_uint_eq (free_blocks (&m), before);
  img_cleanup (&m);
}
END_TEST

/* An ACL in the kernel's xattr form: tag, perm, id triples. */
static size_t
acl (unsigned char *v, const uint32_t *e, size_t n)
{
  size_t k;

  cfs_put32 (v, 2);
  for (k = 0; k < n; k++) {
    cfs_put16 (v + 4 + 8 * k, (uint16_t)e[3 * k]);
    cfs_put16 (v + 6 + 8 * k, (uint16_t)e[3 * k + 1]);
    cfs_put32 (v + 8 + 8 * k, e[3 * k + 2]);
  }
  return 4 + 8 * n;
}

static uint16_t
mode_of (struct img *m, uint64_t ino)
{
  struct cfs_attr a;

  ck_assert_int_eq (cfs_getattr (m->fs, ino, &a), 0);
  return a.mode;
}

START_TEST (test_acl)
{
  /* u::rw-, u:1000:rwx, g::r--, m::rwx, o::--- */
  const uint32_t ext[] = {1, 6, 0, 2, 7, 1000, 4, 4, 0, 0x10, 7, 0, 0x20, 0, 0};
  const uint32_t min[] = {1, 6, 0, 4, 4, 0, 0x20, 4, 0};
  const uint32_t bad[] = {1, 6, 0, 2, 7, 1000, 4, 4, 0, 0x20, 0, 0};
  unsigned char v[256], buf[256];
  struct img m;
  struct cfs_attr a;
  uint64_t f;
  size_t n;

  img_make (&m);
  ck_assert_int_eq (cfs_create (m.fs, 1, "f", 0100640, 0, 0, &a), 0);
  f = a.ino;
  /* An extended ACL sets the mode from owner, mask and other. */
  n = acl (v, ext, 5);
  ck_assert_int_eq (cfs_setxattr (m.fs, f, "system.posix_acl_access", v, n, 0),
                    0);
  ck_assert_uint_eq (mode_of (&m, f), 0100670);
  ck_assert_int_eq (
      cfs_getxattr (m.fs, f, "system.posix_acl_access", buf, sizeof buf),
      (int)n);
  /* chmod rewrites owner, mask and other. */
  {
    struct cfs_attr to = {.mode = 0751};
    ck_assert_int_eq (cfs_setattr (m.fs, f, CFS_SET_MODE, &to, &a), 0);
    ck_assert_int_eq (
        cfs_getxattr (m.fs, f, "system.posix_acl_access", buf, sizeof buf),
        (int)n);
    ck_assert_uint_eq (cfs_get16 (buf + 6), 7);  /* owner */
    ck_assert_uint_eq (cfs_get16 (buf + 14), 7); /* u:1000 kept */
    ck_assert_uint_eq (cfs_get16 (buf + 22), 4); /* group kept */
    ck_assert_uint_eq (cfs_get16 (buf + 30), 5); /* mask */
    ck_assert_uint_eq (cfs_get16 (buf + 38), 1); /* other */
  }
  /* A minimal ACL is the mode: not kept. */
  n = acl (v, min, 3);
  ck_assert_int_eq (cfs_setxattr (m.fs, f, "system.posix_acl_access", v, n, 0),
                    0);
  ck_assert_uint_eq (mode_of (&m, f), 0100644);
  ck_assert_int_eq (
      cfs_getxattr (m.fs, f, "system.posix_acl_access", buf, sizeof buf),
      -ENODATA);
  /* Invalid ACLs, and a default ACL on a file, are refused. */
  n = acl (v, bad, 4);
  ck_assert_int_eq (cfs_setxattr (m.fs, f, "system.posix_acl_access", v, n, 0),
                    -EINVAL);
  ck_assert_int_eq (cfs_setxattr (m.fs, f, "system.posix_acl_access", v, 7, 0),
                    -EINVAL);
  n = acl (v, ext, 5);
  ck_assert_int_eq (cfs_setxattr (m.fs, f, "system.posix_acl_default", v, n, 0),
                    -EACCES);
  img_cleanup (&m);
}
END_TEST

START_TEST (test_acl_inherit)
{
  const uint32_t ext[] = {1, 6, 0, 2, 7, 1000, 4, 4, 0, 0x10, 7, 0, 0x20, 0, 0};
  unsigned char v[256], buf[256];
  struct img m;
  struct cfs_attr a, d;
  size_t n = acl (v, ext, 5);

  img_make (&m);
  /* Inheritance: a default ACL narrowed by the mode asked for, no umask;
   * a directory keeps the default too.
   */
  ck_assert_int_eq (cfs_mkdir (m.fs, 1, "d", 0755, 0, 0, &d), 0);
  ck_assert_int_eq (
      cfs_setxattr (m.fs, d.ino, "system.posix_acl_default", v, n, 0), 0);
  ck_assert_int_eq (cfs_create (m.fs, d.ino, "g", 0100664, 0, 0, &a), 0);
  ck_assert_int_eq (cfs_acl_inherit (m.fs, d.ino, a.ino, 022, &a), 0);
  ck_assert_uint_eq (a.mode, 0100660); /* u rw & rw, mask rwx & rw, o 0 */
  ck_assert_int_eq (
      cfs_getxattr (m.fs, a.ino, "system.posix_acl_access", buf, sizeof buf),
      (int)n);
  ck_assert_uint_eq (cfs_get16 (buf + 30), 6); /* the mask, narrowed */
  ck_assert_int_eq (
      cfs_getxattr (m.fs, a.ino, "system.posix_acl_default", buf, sizeof buf),
      -ENODATA);
  ck_assert_int_eq (cfs_mkdir (m.fs, d.ino, "sub", 0777, 0, 0, &a), 0);
  ck_assert_int_eq (cfs_acl_inherit (m.fs, d.ino, a.ino, 022, &a), 0);
  ck_assert_uint_eq (a.mode, 040670);
  ck_assert_int_eq (
      cfs_getxattr (m.fs, a.ino, "system.posix_acl_default", buf, sizeof buf),
      (int)n);
  /* Without a default ACL the umask applies. */
  ck_assert_int_eq (cfs_create (m.fs, 1, "h", 0100666, 0, 0, &a), 0);
  ck_assert_int_eq (cfs_acl_inherit (m.fs, 1, a.ino, 027, &a), 0);
  ck_assert_uint_eq (a.mode, 0100640);
  ck_assert_int_eq (cfs_listxattr (m.fs, a.ino, (char *)buf, sizeof buf), 0);
  img_cleanup (&m);
}
END_TEST

/* ---- the checker ---- */

/* Files with attributes for the checker: f0..f5 in a directory, the odd
 * ones with a list in an xattr block, the even ones in the inode.
 */
static void
build (struct img *m, uint64_t *ino)
{
  char big[1500], name[16];
  struct cfs_attr a, d;
  int i;

  memset (big, 'b', sizeof big);
  img_make (m);
  ck_assert_int_eq (cfs_mkdir (m->fs, 1, "d", 0755, 0, 0, &d), 0);
  for (i = 0; i < 6; i++) {
    snprintf (name, sizeof name, "f%d", i);
    ck_assert_int_eq (cfs_create (m->fs, d.ino, name, 0100644, 0, 0, &a), 0);
    ino[i] = a.ino;
    ck_assert_int_eq (cfs_setxattr (m->fs, a.ino, "user.k", "v", 1, 0), 0);
    ck_assert_int_eq (cfs_setxattr (m->fs, a.ino, "trusted.x", big,
                                    i % 2 ? sizeof big : 8, 0),
                      0);
  }
  img_unmount (m);
}

/* A check of the image: the result, and whether problem `code` was
 * reported.
 */
static struct cfs_check_result
check (struct img *m, enum cfs_check_mode mode, uint32_t code, bool *seen)
{
  struct cfs_check_opts o = {
      .mode = mode, .full = true, .progress_fd = -1, .name = m->path};
  struct cfs_check_result r;
  struct cfs_err err;
  struct cfs_io *io = cfs_open (m->path, mode != CFS_CHECK_NO, &err);
  char *text = NULL, tag[16];
  size_t len = 0;

  ck_assert_msg (io != NULL, "%s", err.msg);
  o.out = open_memstream (&text, &len);
  cfs_check (io, &o, &r);
  fclose (o.out);
  ck_assert_int_eq (cfs_close (io, &err), 0);
  snprintf (tag, sizeof tag, "[%06X]", code);
  if (seen)
    *seen = strstr (text, tag) != NULL;
  if (getenv ("FSCK_VERBOSE"))
    fputs (text, stderr);
  free (text);
  return r;
}

/* The damage is found (-n), repaired (-y) with problem code, a second
 * check finds nothing, and file ino lost the attributes the damage hit.
 */
static void
repaired (struct img *m, uint32_t code, uint64_t ino)
{
  struct cfs_check_result r;
  bool seen;
  char buf[64];

  r = check (m, CFS_CHECK_NO, code, &seen);
  ck_assert_msg (seen && r.exit == CFS_EXIT_UNCORRECTED,
                 "-n: exit %u, problem %06X %s", r.exit, code,
                 seen ? "seen" : "not seen");
  r = check (m, CFS_CHECK_YES, code, &seen);
  ck_assert_msg (seen && r.exit == CFS_EXIT_CORRECTED, "-y: exit %u", r.exit);
  r = check (m, CFS_CHECK_NO, code, &seen);
  ck_assert_msg (r.exit == 0 && r.problems == 0,
                 "after the repair: exit %u, %llu problems", r.exit,
                 (unsigned long long)r.problems);
  img_reopen (m);
  ck_assert_int_eq (cfs_getxattr (m->fs, ino, "user.k", buf, sizeof buf),
                    -ENODATA);
  /* ...and can have new ones. */
  ck_assert_int_eq (cfs_setxattr (m->fs, ino, "user.k", "w", 1, 0), 0);
  img_unmount (m);
  r = check (m, CFS_CHECK_NO, code, &seen);
  ck_assert_uint_eq (r.problems, 0);
}

/* Inode ino of the image, to change: its decoded self, and where. */
struct islot {
  uint64_t blk;
  uint32_t off;
  struct cfs_inode in;
  struct cfs_super sb;
};

static void
islot_read (struct img *m, uint64_t ino, struct islot *s)
{
  unsigned char b[CFS_BLOCK];
  struct cfs_err err;

  img_reopen (m);
  s->sb = *cfs_fs_super (m->fs);
  ck_assert_int_eq (cfs_locate (m->fs, ino, CFS_AT_INODE, &s->blk), 0);
  img_unmount (m);
  s->off =
      (uint32_t)(ino & 0xFFFFFFFFu) % CFS_INODES_PER_BLOCK * CFS_INODE_SIZE;
  m->io = cfs_open (m->path, true, &err);
  ck_assert_int_eq (cfs_read (m->io, s->blk, 1, b, &err), 0);
  ck_assert_int_eq (cfs_inode_decode (b + s->off, s->sb.uuid,
                                      (uint32_t)(ino >> 32), &s->in, &err),
                    0);
  ck_assert_int_eq (cfs_close (m->io, &err), 0);
  m->io = NULL;
}

/* Write s->in back, sealed as valid. */
static void
islot_write (struct img *m, const struct islot *s)
{
  unsigned char b[CFS_BLOCK];
  struct cfs_err err;
  struct cfs_io *io = cfs_open (m->path, true, &err);

  ck_assert_int_eq (cfs_read (io, s->blk, 1, b, &err), 0);
  cfs_inode_encode (s->sb.uuid, &s->in, b + s->off);
  ck_assert_int_eq (cfs_write (io, s->blk, 1, b, false, &err), 0);
  ck_assert_int_eq (cfs_close (io, &err), 0);
}

/* The xattr block of s's inode: read, changed by fn, resealed or not. */
static void
xblock_patch (struct img *m, const struct islot *s, uint32_t off,
              const void *bytes, size_t len, bool reseal)
{
  uint64_t abs = cfs_block (&s->sb, s->in.chunk, s->in.xattr_block);
  unsigned char b[CFS_BLOCK];
  struct cfs_err err;
  struct cfs_io *io = cfs_open (m->path, true, &err);

  ck_assert_uint_ne (s->in.xattr_block, 0);
  ck_assert_int_eq (cfs_read (io, abs, 1, b, &err), 0);
  ck_assert_mem_eq (b, CFS_MAGIC_XATTR, 4);
  memcpy (b + off, bytes, len);
  if (reseal)
    cfs_meta_seal (s->sb.uuid, b);
  ck_assert_int_eq (cfs_write (io, abs, 1, b, false, &err), 0);
  ck_assert_int_eq (cfs_close (io, &err), 0);
}

START_TEST (test_fsck_clean)
{
  struct cfs_check_result r;
  uint64_t ino[6];
  struct img m;

  build (&m, ino);
  r = check (&m, CFS_CHECK_NO, 0, NULL);
  ck_assert_msg (r.exit == 0 && r.problems == 0, "exit %u, %llu problems",
                 r.exit, (unsigned long long)r.problems);
  img_cleanup (&m);
}
END_TEST

/* Each kind of damage to an xattr block: a flipped bit, and resealed as
 * valid: another owner, an older owner's generation, a malformed entry,
 * a name twice, another kind of block; then pointers out of the data and
 * to another inode's block.
 */
START_TEST (test_fsck_block)
{
  static const struct {
    uint32_t off;
    unsigned char bytes[8];
    size_t len;
    bool reseal;
  } dmg[] = {
      {100, {0x10}, 1, false},                      /* checksum */
      {CFS_HEADER_SIZE, {9}, 1, true},              /* owner */
      {CFS_HEADER_SIZE + 4, {7}, 1, true},          /* owner's generation */
      {CFS_XATTR_START + 1, {0}, 1, true},          /* user. with no name */
      {CFS_XATTR_START, {9}, 1, true},              /* unknown namespace */
      {CFS_XATTR_START + 2, {0xff, 0xff}, 2, true}, /* runs past the end */
      {CFS_XATTR_START + 6, {1, 1, 0xDC, 0x05, 'k'}, 5, true}, /* twice */
      {CFS_BLOCK - 100, {1}, 1, true},    /* bytes after the end */
      {0, {'C', 'H', 'K', 'X'}, 4, true}, /* another kind */
  };
  uint64_t ino[6];
  struct islot s;
  struct img m;
  size_t d;

  for (d = 0; d < sizeof dmg / sizeof dmg[0]; d++) {
    build (&m, ino);
    islot_read (&m, ino[1], &s);
    xblock_patch (&m, &s, dmg[d].off, dmg[d].bytes, dmg[d].len, dmg[d].reseal);
    repaired (&m, PR_1_XATTR_BLOCK_BAD, ino[1]);
    img_cleanup (&m);
  }
}
END_TEST

START_TEST (test_fsck_pointer)
{
  uint64_t ino[6];
  struct islot s, t;
  struct img m;

  /* Outside the chunk's data. */
  build (&m, ino);
  islot_read (&m, ino[3], &s);
  s.in.xattr_block = 3;
  islot_write (&m, &s);
  repaired (&m, PR_1_XATTR_BLOCK_BAD, ino[3]);
  img_cleanup (&m);
  /* Another inode's block (f1's): f3's pointer goes, f1 keeps its own
   * and f3's old block is freed by the bitmap.
   */
  build (&m, ino);
  islot_read (&m, ino[1], &s);
  islot_read (&m, ino[3], &t);
  t.in.xattr_block = s.in.xattr_block;
  islot_write (&m, &t);
  repaired (&m, PR_1_XATTR_BLOCK_BAD, ino[3]);
  img_reopen (&m);
  {
    char buf[2000];
    ck_assert_int_eq (cfs_getxattr (m.fs, ino[1], "trusted.x", buf, sizeof buf),
                      1500);
  }
  img_cleanup (&m);
}
END_TEST

/* Damage to the in-inode area, sealed in a valid inode. */
START_TEST (test_fsck_area)
{
  uint64_t ino[6];
  struct islot s;
  struct img m;
  int d;

  for (d = 0; d < 5; d++) {
    build (&m, ino);
    islot_read (&m, ino[2], &s);
    ck_assert_uint_eq (s.in.xattr_block, 0);
    ck_assert_uint_eq (s.in.xattr[0], 1); /* user.k first */
    if (d == 0)
      s.in.xattr[1] = 0; /* no name */
    else if (d == 1)
      s.in.xattr[3] = 1; /* a value past the end */
    else if (d == 2)
      s.in.xattr[99] = 1; /* after the last entry */
    else if (d == 3)
      memcpy (s.in.xattr + 19, s.in.xattr, 6); /* user.k twice */
    else {
      /* An access ACL of version 1 and no entries. */
      static const unsigned char bad[] = {4, 0, 4, 0, 1, 0, 0, 0};
      memset (s.in.xattr, 0, sizeof s.in.xattr);
      memcpy (s.in.xattr, bad, sizeof bad);
    }
    islot_write (&m, &s);
    repaired (&m, PR_1_XATTR_AREA_BAD, ino[2]);
    img_cleanup (&m);
  }
}
END_TEST

/* A file with an xattr block unlinked while open, then a crash: pass 4
 * frees the inode, and its xattr block with it.
 */
START_TEST (test_fsck_unlinked)
{
  struct cfs_check_result r;
  struct cfs_err err;
  struct cfs_attr d;
  uint64_t ino[6];
  struct img m;
  bool seen;

  build (&m, ino);
  img_reopen (&m);
  ck_assert_int_eq (cfs_lookup (m.fs, 1, "d", &d), 0);
  cfs_open_ref (m.fs, ino[5]);
  ck_assert_int_eq (cfs_unlink (m.fs, d.ino, "f5"), 0);
  ck_assert_int_eq (cfs_fs_sync (m.fs, &err), 0);
  cfs_fs_abandon (m.fs);
  m.fs = NULL;
  r = check (&m, CFS_CHECK_YES, PR_4_UNLINKED, &seen);
  ck_assert_msg (seen && r.exit == CFS_EXIT_CORRECTED, "exit %u", r.exit);
  r = check (&m, CFS_CHECK_NO, 0, NULL);
  ck_assert_msg (r.exit == 0 && r.problems == 0, "exit %u, %llu problems",
                 r.exit, (unsigned long long)r.problems);
  img_cleanup (&m);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"calls", test_calls},
      {"block", test_block},
      {"acl", test_acl},
      {"acl_inherit", test_acl_inherit},
      {"fsck_clean", test_fsck_clean},
      {"fsck_block", test_fsck_block},
      {"fsck_pointer", test_fsck_pointer},
      {"fsck_area", test_fsck_area},
      {"fsck_unlinked", test_fsck_unlinked},
  };

  return fd_check_main ("xattr", cases, sizeof cases / sizeof cases[0]);
}
