/* chunkfs — unit tests for special files and the POSIX edge cases of
 * the library: fifos, sockets and device nodes made, stat'ed, linked,
 * renamed and unlinked, their device numbers kept over a remount; each
 * kind of damage to a special inode found by the checker (by its
 * problem code) and repaired; rename over directories, RENAME_EXCHANGE
 * and RENAME_NOREPLACE, set-group-ID directories.  Every test ends with
 * `fsck -f` finding nothing: link counts, parents and back-references
 * are what the checker checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "check-main.h"
#include "img.h"
#include "chunkfs/check.h"
#include "chunkfs/fs.h"
#include "chunkfs/io.h"
#include "chunkfs/mkfs.h"
#include "problem.h"

static const uint8_t uuid_s[16] = {7, 1, 2,  3,  4,  5,  6,  7,
                                   8, 9, 10, 11, 12, 13, 14, 15};

static const struct img_spec spec = {"special", 128 << 20, 16 << 10, uuid_s};

/* A fresh 128 MiB chunkfs, mounted. */
static void
img_make (struct img *m)
{
  img_create (m, &spec);
}

static void
check_clean (const char *path)
{
  char *said;
  struct cfs_check_result r = img_check (path, CFS_CHECK_NO, &said);

  ck_assert_msg (r.exit == 0 && r.problems == 0, "exit %u, %llu problems:\n%s",
                 r.exit, (unsigned long long)r.problems, said);
  free (said);
}

/* ---- special files through the library ---- */

static const struct {
  const char *name;
  uint16_t mode;
} specials[] = {
    {"fifo", S_IFIFO | 0644},
    {"sock", S_IFSOCK | 0755},
    {"null", S_IFCHR | 0666},
    {"sda", S_IFBLK | 0660},
};

/* The device number specials[i] is made with. */
static uint64_t
rdev_of (size_t i)
{
  if (i == 2)
    return makedev (1, 3);
  if (i == 3)
    return makedev (259, 1048575); /* a 64-bit dev_t's large minor */
  return 0;
}

START_TEST (test_special_nodes)
{
  struct img m;
  struct cfs_attr a, d, b, to = {0};
  size_t i;

  img_make (&m);
  ck_assert_int_eq (cfs_mkdir (m.fs, 1, "dev", 0755, 0, 0, &d), 0);
  for (i = 0; i < sizeof specials / sizeof specials[0]; i++) {
    ck_assert_int_eq (cfs_mknod (m.fs, d.ino, specials[i].name,
                                 specials[i].mode, rdev_of (i), 10, 20, &a),
                      0);
    ck_assert_uint_eq (a.mode, specials[i].mode);
    ck_assert_uint_eq (a.rdev, rdev_of (i));
    ck_assert_uint_eq (a.size, 0);
    ck_assert_uint_eq (a.blocks, 0);
    ck_assert_uint_eq (a.uid, 10);
    ck_assert_uint_eq (a.gid, 20);
  }
  /* mknod(2) ignores the device number of a fifo. */
  ck_assert_int_eq (
      cfs_mknod (m.fs, d.ino, "fifo2", S_IFIFO | 0600, 77, 0, 0, &a), 0);
  ck_assert_uint_eq (a.rdev, 0);
  /* A regular file by mknod; not a directory or a symlink. */
  ck_assert_int_eq (cfs_mknod (m.fs, d.ino, "reg", S_IFREG | 0600, 0, 0, 0, &a),
                    0);
  ck_assert_int_eq (cfs_mknod (m.fs, d.ino, "dir", S_IFDIR | 0700, 0, 0, 0, &a),
                    -EINVAL);
  ck_assert_int_eq (cfs_mknod (m.fs, d.ino, "lnk", S_IFLNK | 0777, 0, 0, 0, &a),
                    -EINVAL);
  ck_assert_int_eq (
      cfs_mknod (m.fs, d.ino, "fifo", S_IFIFO | 0600, 0, 0, 0, &a), -EEXIST);
  ck_assert_int_eq (cfs_create (m.fs, d.ino, "x", S_IFIFO | 0600, 0, 0, &a),
                    -EINVAL);
  /* chmod and chown keep the type and the device number; no size. */
  ck_assert_int_eq (cfs_lookup (m.fs, d.ino, "null", &a), 0);
  to.mode = 0600;
  to.uid = 5;
  to.gid = 6;
  ck_assert_int_eq (cfs_setattr (m.fs, a.ino,
                                 CFS_SET_MODE | CFS_SET_UID | CFS_SET_GID, &to,
                                 &b),
                    0);
  ck_assert_uint_eq (b.mode, S_IFCHR | 0600);
  ck_assert_uint_eq (b.rdev, makedev (1, 3));
  ck_assert_uint_eq (b.uid, 5);
  to.size = 10;
  ck_assert_int_eq (cfs_setattr (m.fs, a.ino, CFS_SET_SIZE, &to, &b), -EINVAL);
  /* Hard link (in another directory), rename, unlink. */
  ck_assert_int_eq (cfs_link (m.fs, a.ino, 1, "null-link", &b), 0);
  ck_assert_uint_eq (b.links, 2);
  ck_assert_int_eq (cfs_rename (m.fs, d.ino, "sda", 1, "disk", 0), 0);
  ck_assert_int_eq (cfs_rename (m.fs, d.ino, "sock", d.ino, "fifo2", 0), 0);
  ck_assert_int_eq (cfs_unlink (m.fs, d.ino, "fifo"), 0);
  ck_assert_int_eq (cfs_lookup (m.fs, d.ino, "fifo", &b), -ENOENT);
  img_unmount (&m);
  check_clean (m.path);

  /* Everything as it was left, after a remount. */
  img_mount (&m);
  ck_assert_int_eq (cfs_lookup (m.fs, 1, "null-link", &a), 0);
  ck_assert_uint_eq (a.mode, S_IFCHR | 0600);
  ck_assert_uint_eq (a.rdev, makedev (1, 3));
  ck_assert_uint_eq (a.links, 2);
  ck_assert_int_eq (cfs_lookup (m.fs, 1, "disk", &a), 0);
  ck_assert_uint_eq (a.mode, S_IFBLK | 0660);
  ck_assert_uint_eq (a.rdev, makedev (259, 1048575));
  ck_assert_int_eq (cfs_lookup (m.fs, d.ino, "fifo2", &a), 0);
  ck_assert_uint_eq (a.mode, S_IFSOCK | 0755);
  ck_assert_uint_eq (a.rdev, 0);
  ck_assert_int_eq (cfs_unlink (m.fs, 1, "null-link"), 0);
  ck_assert_int_eq (cfs_unlink (m.fs, d.ino, "null"), 0);
  img_unmount (&m);
  check_clean (m.path);
  img_cleanup (&m);
}
END_TEST

/* ---- damage to special inodes ---- */

/* Rewrite byte `at` of inode `ref`'s slot to v, its checksum made good
 * again (so only the checker's field checks can see it).
 */
static void
poke_inode (const char *path, uint64_t ref, uint32_t at, uint8_t v)
{
  struct cfs_err err;
  struct cfs_io *io = cfs_open (path, true, &err);
  unsigned char blk[CFS_BLOCK], *slot;
  struct cfs_super s;
  struct cfs_geometry g;
  uint32_t i = (uint32_t)ref;
  uint64_t abs;

  ck_assert_ptr_nonnull (io);
  ck_assert_int_eq (cfs_read (io, 0, 1, blk, &err), 0);
  ck_assert_int_eq (cfs_super_decode (blk, &s, &err), 0);
  cfs_geometry (&s, &g);
  abs = cfs_block (&s, (uint32_t)(ref >> 32),
                   g.inode_table + i / CFS_INODES_PER_BLOCK);
  ck_assert_int_eq (cfs_read (io, abs, 1, blk, &err), 0);
  slot = blk + i % CFS_INODES_PER_BLOCK * CFS_INODE_SIZE;
  slot[at] = v;
  cfs_put32 (slot + 252, cfs_meta_crc (s.uuid, slot, 252));
  ck_assert_int_eq (cfs_write (io, abs, 1, blk, true, &err), 0);
  ck_assert_int_eq (cfs_close (io, &err), 0);
}

/* Damage (one byte of an inode, or of an entry's type) the check must
 * name by its problem code, then repair so that a second check is clean.
 */
static void
damage_found_and_fixed (const char *name, uint32_t at, uint8_t v, uint32_t code)
{
  struct img m;
  struct cfs_attr a;
  struct cfs_check_result r;
  char tag[16], *said;
  size_t i;

  img_make (&m);
  for (i = 0; i < sizeof specials / sizeof specials[0]; i++)
    ck_assert_int_eq (cfs_mknod (m.fs, 1, specials[i].name, specials[i].mode,
                                 rdev_of (i), 0, 0, &a),
                      0);
  ck_assert_int_eq (cfs_lookup (m.fs, 1, name, &a), 0);
  img_unmount (&m);
  poke_inode (m.path, a.ino, at, v);
  snprintf (tag, sizeof tag, "[%06X]", code);
  r = img_check (m.path, CFS_CHECK_NO, &said);
  ck_assert_msg (r.exit & CFS_EXIT_UNCORRECTED && strstr (said, tag),
                 "%s byte %u = %u: want %s, exit %u:\n%s", name, at, v, tag,
                 r.exit, said);
  free (said);
  r = img_check (m.path, CFS_CHECK_YES, &said);
  ck_assert_msg (r.exit == CFS_EXIT_CORRECTED && strstr (said, tag),
                 "repair exit %u:\n%s", r.exit, said);
  free (said);
  check_clean (m.path);
  /* The file is still there, its type and device number intact. */
  img_mount (&m);
  ck_assert_int_eq (cfs_lookup (m.fs, 1, name, &a), 0);
  ck_assert_uint_eq (a.size, 0);
  ck_assert_uint_eq (a.blocks, 0);
  for (i = 0; strcmp (specials[i].name, name); i++)
    ;
  ck_assert_uint_eq (a.mode, specials[i].mode);
  ck_assert_uint_eq (a.rdev, rdev_of (i));
  img_cleanup (&m);
}

START_TEST (test_special_damage)
{
  /* Size (offset 16), mapped bytes (80), the block map past rdev (100,
   * 140), continuation links (72), flags (2), a fifo's or socket's
   * device number (88, 95).
   */
  damage_found_and_fixed ("fifo", 16, 1, PR_1_SPECIAL_SIZE);
  damage_found_and_fixed ("null", 17, 3, PR_1_SPECIAL_SIZE);
  damage_found_and_fixed ("sda", 80, 16, PR_1_SPECIAL_MAP);
  damage_found_and_fixed ("sock", 100, 9, PR_1_SPECIAL_MAP);
  damage_found_and_fixed ("null", 140, 9, PR_1_SPECIAL_MAP);
  damage_found_and_fixed ("fifo", 72, 2, PR_1_SPECIAL_MAP);
  damage_found_and_fixed ("sda", 2, CFS_INODE_HAS_CONT, PR_1_SPECIAL_MAP);
  damage_found_and_fixed ("fifo", 88, 1, PR_1_SPECIAL_RDEV);
  damage_found_and_fixed ("sock", 95, 0x80, PR_1_SPECIAL_RDEV);
}
END_TEST

/* A special file's type changed under its entry (mode byte 1: the type
 * bits): the entry's type no longer matches, and -y makes it match.
 */
START_TEST (test_special_entry_type)
{
  struct img m;
  struct cfs_attr a;
  struct cfs_check_result r;
  char *said;

  img_make (&m);
  ck_assert_int_eq (cfs_mknod (m.fs, 1, "fifo", S_IFIFO | 0644, 0, 0, 0, &a),
                    0);
  img_unmount (&m);
  poke_inode (m.path, a.ino, 1, (S_IFSOCK | 0644) >> 8);
  r = img_check (m.path, CFS_CHECK_NO, &said);
  ck_assert_msg (strstr (said, "[020004]"), "exit %u:\n%s", r.exit, said);
  free (said);
  r = img_check (m.path, CFS_CHECK_YES, NULL);
  ck_assert_uint_eq (r.exit, CFS_EXIT_CORRECTED);
  check_clean (m.path);
  img_cleanup (&m);
}
END_TEST

/* ---- rename ---- */

static uint64_t
ino_of (struct img *m, uint64_t dir, const char *name)
{
  struct cfs_attr a;

  ck_assert_int_eq (cfs_lookup (m->fs, dir, name, &a), 0);
  return a.ino;
}

static uint32_t
links_of (struct img *m, uint64_t ino)
{
  struct cfs_attr a;

  ck_assert_int_eq (cfs_getattr (m->fs, ino, &a), 0);
  return a.links;
}

/* Two top-level directories in different chunks (their chunk is picked
 * by a hash of the name): *a and *b.
 */
static void
two_chunks (struct img *m, struct cfs_attr *a, struct cfs_attr *b)
{
  char name[16];
  int i;

  ck_assert_int_eq (cfs_mkdir (m->fs, 1, "a", 0755, 0, 0, a), 0);
  for (i = 0;; i++) {
    ck_assert_int_lt (i, 100);
    snprintf (name, sizeof name, "b%d", i);
    ck_assert_int_eq (cfs_mkdir (m->fs, 1, name, 0755, 0, 0, b), 0);
    if (b->ino >> 32 != a->ino >> 32)
      break;
  }
}

START_TEST (test_exchange)
{
  struct img m;
  struct cfs_attr a, b, x, y, s1, s2;
  uint64_t fa, fb;

  img_make (&m);
  two_chunks (&m, &a, &b);
  ck_assert_int_eq (cfs_create (m.fs, a.ino, "f", 0100644, 0, 0, &x), 0);
  ck_assert_int_eq (cfs_pwrite (m.fs, x.ino, "aaaa", 4, 0), 4);
  ck_assert_int_eq (cfs_mknod (m.fs, b.ino, "g", S_IFIFO | 0600, 0, 0, 0, &y),
                    0);
  fa = x.ino;
  fb = y.ino;
  /* Files across chunks: the entries swap, back-references follow. */
  ck_assert_int_eq (
      cfs_rename (m.fs, a.ino, "f", b.ino, "g", CFS_RENAME_EXCHANGE), 0);
  ck_assert_uint_eq (ino_of (&m, a.ino, "f"), fb);
  ck_assert_uint_eq (ino_of (&m, b.ino, "g"), fa);
  ck_assert_int_eq (cfs_getattr (m.fs, fa, &x), 0);
  ck_assert_uint_eq (x.size, 4);
  /* A directory and a file with different parents: the parents' link
   * counts move with the directory's "..".
   */
  ck_assert_int_eq (cfs_mkdir (m.fs, a.ino, "sub", 0755, 0, 0, &s1), 0);
  ck_assert_int_eq (cfs_create (m.fs, s1.ino, "inside", 0100644, 0, 0, &x), 0);
  ck_assert_uint_eq (links_of (&m, a.ino), 3);
  ck_assert_uint_eq (links_of (&m, b.ino), 2);
  ck_assert_int_eq (
      cfs_rename (m.fs, a.ino, "sub", b.ino, "g", CFS_RENAME_EXCHANGE), 0);
  ck_assert_uint_eq (links_of (&m, a.ino), 2);
  ck_assert_uint_eq (links_of (&m, b.ino), 3);
  ck_assert_uint_eq (ino_of (&m, b.ino, "g"), s1.ino);
  ck_assert_uint_eq (ino_of (&m, a.ino, "sub"), fa);
  /* Two directories in different parents. */
  ck_assert_int_eq (cfs_mkdir (m.fs, a.ino, "d2", 0700, 0, 0, &s2), 0);
  ck_assert_int_eq (
      cfs_rename (m.fs, a.ino, "d2", b.ino, "g", CFS_RENAME_EXCHANGE), 0);
  ck_assert_uint_eq (ino_of (&m, a.ino, "d2"), s1.ino);
  ck_assert_uint_eq (ino_of (&m, b.ino, "g"), s2.ino);
  ck_assert_uint_eq (links_of (&m, a.ino), 3);
  ck_assert_uint_eq (links_of (&m, b.ino), 3);
  /* In one directory. */
  ck_assert_int_eq (
      cfs_rename (m.fs, a.ino, "d2", a.ino, "sub", CFS_RENAME_EXCHANGE), 0);
  ck_assert_uint_eq (ino_of (&m, a.ino, "sub"), s1.ino);
  /* Refused: a directory into its own subtree (either way round), a
   * missing name, both flags, an unknown flag.
   */
  ck_assert_int_eq (
      cfs_rename (m.fs, a.ino, "sub", s1.ino, "inside", CFS_RENAME_EXCHANGE),
      -EINVAL);
  ck_assert_int_eq (
      cfs_rename (m.fs, s1.ino, "inside", a.ino, "sub", CFS_RENAME_EXCHANGE),
      -EINVAL);
  ck_assert_int_eq (
      cfs_rename (m.fs, a.ino, "nope", b.ino, "g", CFS_RENAME_EXCHANGE),
      -ENOENT);
  ck_assert_int_eq (
      cfs_rename (m.fs, a.ino, "sub", b.ino, "nope", CFS_RENAME_EXCHANGE),
      -ENOENT);
  ck_assert_int_eq (cfs_rename (m.fs, a.ino, "sub", b.ino, "g",
                                CFS_RENAME_EXCHANGE | CFS_RENAME_NOREPLACE),
                    -EINVAL);
  ck_assert_int_eq (cfs_rename (m.fs, a.ino, "sub", b.ino, "g", 0x100),
                    -EINVAL);
  /* Two names of one file: nothing happens. */
  ck_assert_int_eq (cfs_link (m.fs, fb, b.ino, "fifo2", &y), 0);
  ck_assert_int_eq (
      cfs_rename (m.fs, a.ino, "f", b.ino, "fifo2", CFS_RENAME_EXCHANGE), 0);
  img_unmount (&m);
  check_clean (m.path);
  img_cleanup (&m);
}
END_TEST

START_TEST (test_rename_over_dir)
{
  struct img m;
  struct cfs_attr a, b, x, e;

  img_make (&m);
  two_chunks (&m, &a, &b);
  ck_assert_int_eq (cfs_mkdir (m.fs, a.ino, "src", 0755, 0, 0, &x), 0);
  ck_assert_int_eq (cfs_create (m.fs, x.ino, "file", 0100644, 0, 0, &x), 0);
  ck_assert_int_eq (cfs_mkdir (m.fs, b.ino, "empty", 0755, 0, 0, &e), 0);
  ck_assert_int_eq (cfs_mkdir (m.fs, b.ino, "full", 0755, 0, 0, &x), 0);
  ck_assert_int_eq (
      cfs_mknod (m.fs, x.ino, "sock", S_IFSOCK | 0600, 0, 0, 0, &x), 0);
  ck_assert_int_eq (cfs_create (m.fs, b.ino, "plain", 0100644, 0, 0, &x), 0);
  /* Not empty; a directory over a file; a file over a directory; a
   * directory into itself; NOREPLACE.
   */
  ck_assert_int_eq (cfs_rename (m.fs, a.ino, "src", b.ino, "full", 0),
                    -ENOTEMPTY);
  ck_assert_int_eq (cfs_rename (m.fs, a.ino, "src", b.ino, "plain", 0),
                    -ENOTDIR);
  ck_assert_int_eq (cfs_rename (m.fs, b.ino, "plain", b.ino, "empty", 0),
                    -EISDIR);
  ck_assert_int_eq (
      cfs_rename (m.fs, 1, "a", ino_of (&m, a.ino, "src"), "in", 0), -EINVAL);
  ck_assert_int_eq (
      cfs_rename (m.fs, a.ino, "src", b.ino, "empty", CFS_RENAME_NOREPLACE),
      -EEXIST);
  /* An empty directory replaced, across chunks: it is freed, and the
   * parents' counts are those of one directory having moved.
   */
  ck_assert_int_eq (links_of (&m, a.ino), 3);
  ck_assert_int_eq (links_of (&m, b.ino), 4);
  ck_assert_int_eq (cfs_rename (m.fs, a.ino, "src", b.ino, "empty", 0), 0);
  ck_assert_int_eq (cfs_getattr (m.fs, e.ino, &x), -ESTALE);
  ck_assert_int_eq (links_of (&m, a.ino), 2);
  ck_assert_int_eq (links_of (&m, b.ino), 4);
  /* And within one directory. */
  ck_assert_int_eq (cfs_mkdir (m.fs, b.ino, "e2", 0755, 0, 0, &e), 0);
  ck_assert_int_eq (cfs_rename (m.fs, b.ino, "empty", b.ino, "e2", 0), 0);
  ck_assert_int_eq (links_of (&m, b.ino), 4);
  ck_assert_int_eq (cfs_lookup (m.fs, ino_of (&m, b.ino, "e2"), "file", &x), 0);
  img_unmount (&m);
  check_clean (m.path);
  img_cleanup (&m);
}
END_TEST

/* ---- ownership ---- */

START_TEST (test_setgid_dir)
{
  struct img m;
  struct cfs_attr d, x;

  img_make (&m);
  ck_assert_int_eq (cfs_mkdir (m.fs, 1, "shared", 02775, 10, 50, &d), 0);
  ck_assert_uint_eq (d.mode, S_IFDIR | 02775);
  ck_assert_int_eq (cfs_create (m.fs, d.ino, "f", 0100644, 1, 2, &x), 0);
  ck_assert_uint_eq (x.uid, 1);
  ck_assert_uint_eq (x.gid, 50);
  ck_assert_uint_eq (x.mode, 0100644);
  ck_assert_int_eq (cfs_mknod (m.fs, d.ino, "p", S_IFIFO | 0644, 0, 1, 2, &x),
                    0);
  ck_assert_uint_eq (x.gid, 50);
  ck_assert_int_eq (cfs_symlink (m.fs, d.ino, "l", "f", 1, 2, &x), 0);
  ck_assert_uint_eq (x.gid, 50);
  ck_assert_int_eq (cfs_mkdir (m.fs, d.ino, "sub", 0755, 1, 2, &x), 0);
  ck_assert_uint_eq (x.gid, 50);
  ck_assert_uint_eq (x.mode, S_IFDIR | 02755);
  /* Not in an ordinary directory. */
  ck_assert_int_eq (cfs_create (m.fs, 1, "g", 0100644, 1, 2, &x), 0);
  ck_assert_uint_eq (x.gid, 2);
  ck_assert_int_eq (cfs_mkdir (m.fs, 1, "h", 0755, 1, 2, &x), 0);
  ck_assert_uint_eq (x.mode, S_IFDIR | 0755);
  img_cleanup (&m);
}
END_TEST

/* ---- atime ---- */

/* A read updates atime as relatime does; in a clean chunk the new atime
 * waits for the next sync instead of making the chunk dirty, and an
 * atime set explicitly since wins.
 */
START_TEST (test_lazy_atime)
{
  struct img m;
  struct cfs_attr f, g, a, to = {0};
  struct cfs_fsstat st;
  struct cfs_err err;
  char buf[8];

  img_make (&m);
  ck_assert_int_eq (cfs_create (m.fs, 1, "f", 0100644, 0, 0, &f), 0);
  ck_assert_int_eq (cfs_pwrite (m.fs, f.ino, "data", 4, 0), 4);
  ck_assert_int_eq (cfs_create (m.fs, 1, "g", 0100644, 0, 0, &g), 0);
  ck_assert_int_eq (cfs_getattr (m.fs, f.ino, &f), 0);
  ck_assert_int_eq (cfs_fs_sync (m.fs, &err), 0);
  cfs_statfs (m.fs, &st);
  ck_assert_uint_eq (st.dirty_chunks, 0);
  ck_assert_int_eq (cfs_pread (m.fs, f.ino, buf, sizeof buf, 0), 4);
  ck_assert_int_eq (cfs_pread (m.fs, g.ino, buf, sizeof buf, 0), 0);
  cfs_statfs (m.fs, &st);
  ck_assert_uint_eq (st.dirty_chunks, 0); /* a read dirties nothing */
  ck_assert_int_eq (cfs_getattr (m.fs, f.ino, &a), 0);
  ck_assert_uint_gt (a.atime, f.mtime);
  ck_assert_uint_eq (a.mtime, f.mtime);
  ck_assert_uint_eq (a.ctime, f.ctime);
  f = a;
  /* A second read: atime is newer than mtime and ctime, so no update. */
  ck_assert_int_eq (cfs_pread (m.fs, f.ino, buf, sizeof buf, 0), 4);
  ck_assert_int_eq (cfs_getattr (m.fs, f.ino, &a), 0);
  ck_assert_uint_eq (a.atime, f.atime);
  /* g's read-time atime is overridden by utimensat. */
  to.atime = 5;
  ck_assert_int_eq (cfs_setattr (m.fs, g.ino, CFS_SET_ATIME, &to, &a), 0);
  ck_assert_uint_eq (a.atime, 5);
  img_unmount (&m);
  img_mount (&m);
  ck_assert_int_eq (cfs_getattr (m.fs, f.ino, &a), 0);
  ck_assert_uint_eq (a.atime, f.atime); /* written by the unmount's sync */
  ck_assert_int_eq (cfs_getattr (m.fs, g.ino, &a), 0);
  ck_assert_uint_eq (a.atime, 5);
  /* A file freed with an atime waiting: nothing is written for it. */
  ck_assert_int_eq (cfs_fs_sync (m.fs, &err), 0);
  to.atime = 1;
  ck_assert_int_eq (cfs_setattr (m.fs, f.ino, CFS_SET_ATIME, &to, &a), 0);
  ck_assert_int_eq (cfs_fs_sync (m.fs, &err), 0);
  ck_assert_int_eq (cfs_pread (m.fs, f.ino, buf, sizeof buf, 0), 4);
  ck_assert_int_eq (cfs_unlink (m.fs, 1, "f"), 0);
  img_unmount (&m);
  check_clean (m.path);
  img_cleanup (&m);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"special_nodes", test_special_nodes},
      {"special_damage", test_special_damage},
      {"special_entry_type", test_special_entry_type},
      {"exchange", test_exchange},
      {"rename_over_dir", test_rename_over_dir},
      {"setgid_dir", test_setgid_dir},
      {"lazy_atime", test_lazy_atime},
  };

  return fd_check_main ("special", cases, sizeof cases / sizeof cases[0]);
}
