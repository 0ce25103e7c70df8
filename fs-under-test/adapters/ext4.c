/* futuredisk — fs-under-test: the ext4 adapter (e2fsprogs).
 *
 * e2fsck's exit code is a sum of bits (fd_outcome_e2fsck).  -tt prints each
 * pass's elapsed/user/system seconds (e2fsck(8),
 * https://man7.org/linux/man-pages/man8/e2fsck.8.html).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsadapter.h"
#include "proc.h"

/* "Pass 1: Memory used: 132k/0k (38k/95k), time:  0.00/ 0.00/ 0.00" */
static bool
ext4_pass (const char *line, const char *end, struct fd_pass *p)
{
  const char *t = strstr (line, "time:");
  char name[32];
  double elapsed;

  if (strncmp (line, "Pass ", 5) != 0 || !t || t >= end ||
      sscanf (line, "Pass %31[^:]:", name) != 1 ||
      sscanf (t, "time: %lf", &elapsed) != 1)
    return false;
  snprintf (p->name, sizeof p->name, "pass %s", name);
  p->seconds = elapsed;
  return true;
}

static size_t
ext4_passes (const char *out, struct fd_pass *p, size_t max)
{
  return fd_pass_lines (out, ext4_pass, p, max);
}

/* e2fsck's words for a checksum that failed (its problem table). */
static const char *const e2fsck_checksum_failed[] = {
    "checksum does not match", "checksums are invalid", "checksum is invalid",
    NULL};

/* e2fsck -tt's pass lines ("Pass 1: Memory used: ..., time: ...") and
 * its total ("Peak memory: Memory used: ...").
 */
static const char *const e2fsck_kept_lines[] = {"Pass ", "Peak memory", NULL};

/* Run debugfs -c -R REQUEST on dev; its stdout in buf.  -c: the
 * requests need no bitmaps, and reading them all is a random read per
 * block group (32,768 on a 2 TB ext3, seconds per call).
 */
static int
debugfs (const char *dev, const char *request, char *buf, size_t len,
         struct fm_err *err)
{
  char *argv[] = {(char *)"debugfs", (char *)"-c", (char *)"-R",
                  (char *)request,   (char *)dev,  NULL};
  char *out;

  if (fd_run_capture (argv, 600, &out, err) == -1)
    return -1;
  snprintf (buf, len, "%s", out);
  free (out);
  return 0;
}

extern const struct fd_fs fd_fs_ext4;

/* Where group 0's primary group descriptors ("gdt"), block bitmap or
 * inode bitmap live, from dumpe2fs.
 */
static int
group0_block (const char *dev, const char *type, unsigned long long *blk,
              struct fm_err *err)
{
  char *argv[] = {(char *)"dumpe2fs", (char *)dev, NULL};
  const char *what = strcmp (type, "gdt") == 0 ? "Group descriptors at "
                     : strcmp (type, "block-bitmap") == 0 ? "Block bitmap at "
                     : strcmp (type, "inode-bitmap") == 0 ? "Inode bitmap at "
                                                          : NULL;
  char *out;
  const char *g, *p;

  if (what == NULL) {
    return fm_fail (err, "unknown target type '%.64s' for ext4/ext3 (%s)", type,
                    fd_fs_ext4.target_types);
  }
  if (fd_run_capture (argv, 600, &out, err) == -1)
    return -1;
  g = strstr (out, "Group 0:");
  p = g ? strstr (g, what) : NULL;
  if (p == NULL || sscanf (p + strlen (what), "%llu", blk) != 1) {
    fm_fail (err, "dumpe2fs %s: no '%s' in group 0", dev, what);
    free (out);
    return -1;
  }
  free (out);
  return 0;
}

static int
ext4_locate (const char *dev, const char *type, const char *path,
             uint64_t *offset, uint64_t *length, struct fm_err *err)
{
  char req[512], out[4096];
  const char *p;
  unsigned long long bs, blk;

  /* -h: the superblock alone, not every group descriptor (16,384 at
   * 2 TB). */
  if (debugfs (dev, "stats -h", out, sizeof out, err) == -1)
    return -1;
  if ((p = strstr (out, "Block size:")) == NULL ||
      sscanf (p, "Block size: %llu", &bs) != 1) {
    return fm_fail (err, "debugfs stats %s: no block size", dev);
  }
  if (strcmp (type, "data") == 0) {
    snprintf (req, sizeof req, "bmap \"/%s\" 0", path);
    if (debugfs (dev, req, out, sizeof out, err) == -1)
      return -1;
    if (sscanf (out, "%llu", &blk) != 1 || blk == 0) {
      return fm_fail (err, "%s has no first data block (debugfs: %.100s)", path,
                      out);
    }
  } else if (strcmp (type, "inode") == 0) {
    snprintf (req, sizeof req, "imap \"/%s\"", path);
    if (debugfs (dev, req, out, sizeof out, err) == -1)
      return -1;
    if ((p = strstr (out, "located at block ")) == NULL ||
        sscanf (p, "located at block %llu", &blk) != 1) {
      return fm_fail (err, "debugfs imap %s: %.100s", path, out);
    }
  } else if (strcmp (type, "dir") == 0 || strcmp (type, "journal") == 0) {
    /* The first block of the file's directory, or of the journal. */
    char dir[300];
    const char *slash = strrchr (path, '/');
    if (strcmp (type, "journal") == 0)
      snprintf (dir, sizeof dir, "<8>");
    else
      snprintf (dir, sizeof dir, "\"/%.*s\"", slash ? (int)(slash - path) : 0,
                path);
    snprintf (req, sizeof req, "bmap %s 0", dir);
    if (debugfs (dev, req, out, sizeof out, err) == -1)
      return -1;
    if (sscanf (out, "%llu", &blk) != 1 || blk == 0) {
      return fm_fail (err, "debugfs %s: %.100s", req, out);
    }
  } else if (strcmp (type, "superblock") == 0) {
    *offset = 1024; /* the primary superblock, whatever the block size */
    *length = 1024;
    return 0;
  } else if (group0_block (dev, type, &blk, err) == -1)
    return -1;
  *offset = blk * bs;
  *length = bs;
  return 0;
}

/* When the primary superblock or the group descriptors behind it are
 * gone, e2fsck(8) says to repair from a backup: the first is block
 * 32768 with 4 KiB blocks (ext3's are set, ext4's are mke2fs.conf's
 * default from 512 MiB up); e2fsck tries each block size for it, and
 * writes the primary back when it is done.
 */
#define E2FSCK_BACKUP_SUPERBLOCK                                               \
  .escalate = {{"e2fsck", "-fy", "-b", "32768", "{dev}"}}

/* What ext4 and ext3 share: e2fsprogs checks, repairs and locates. */
#define E2FSPROGS_TOOLS                                                        \
  .check = {"e2fsck", "-fn", "-tt", "{dev}"},                                  \
  .repair = {"e2fsck", "-fy", "-tt", "{dev}"}, .progress_opt = "-C3",          \
  .outcome = fd_outcome_e2fsck, .passes = ext4_passes, .locate = ext4_locate,  \
  .pass_heading = fd_pass_heading_e2fsck,                                      \
  .checksum_failed = e2fsck_checksum_failed, E2FSCK_BACKUP_SUPERBLOCK,         \
  .kept_lines = e2fsck_kept_lines,                                             \
  .target_types = "data inode dir journal superblock gdt block-bitmap "        \
                  "inode-bitmap"

/* The UUID and the directory hash seed from the trial's seed: mke2fs
 * draws both at random, and the hash seed orders each directory's
 * entries and (Orlov) picks the groups of new directories, so e2fsck's
 * reads differed from one run of a seed to the next.
 */
#define E2FS_IDENTITY "-U", "{uuid}", "-E", "hash_seed={hash_seed}"

const struct fd_fs fd_fs_ext4 = {
    .name = "ext4",
    .mount_type = "ext4",
    .min_size = 1 << 20,
    /* -F: the device is a loop device mke2fs may think is in use.  Lazy
     * initialisation (the default), so an 8 TB file system is made in
     * seconds; the mount option stops the kernel zeroing the inode tables
     * behind the trial's back, which would flood the disk with writes
     * and the measurements with noise.  no_prefetch_block_bitmaps: the
     * allocator's cheap passes skip a group whose bitmap is not loaded
     * yet, and the prefetch loads groups as its reads finish in wall
     * time, so where files landed changed from one run of a seed to the
     * next (single free blocks at group ends), and the check's reads
     * with it.  nodioread_nolock: buffered writeback then allocates
     * written extents, rather than unwritten ones that a workqueue on any
     * CPU converts when the I/O completes, splitting extents and giving
     * extent-tree blocks out at that moment: a fragmented (aged) tree
     * came out another way about one run in seven.
     */
    .mkfs = {"mkfs.ext4", "-q", "-F", E2FS_IDENTITY, "{dev}"},
    .mount_opts = "noinit_itable,no_prefetch_block_bitmaps,nodioread_nolock",
    E2FSPROGS_TOOLS,
};

/* ext3 as e2fsprogs 1.40 (2007) made it: mke2fs.conf's base features
 * then (sparse_super, filetype, resize_inode, dir_index) with a journal,
 * 4 KiB blocks, 128-byte inodes and one inode per 8 KiB; today's
 * ext_attr and large_file, which a 2007 kernel set on first use, are
 * left on.  Block-mapped files (no extents), no uninit_bg, flex_bg,
 * huge_file, dir_nlink or checksums, so e2fsck reads every inode table
 * and every indirect block, as it did then.  mke2fs writes the whole
 * inode tables (no lazy initialisation without uninit_bg): zeroes, which
 * the plugin keeps sparse.  The kernel's ext4 driver mounts it, and
 * cannot fallocate(2) its files: --meta-only gives them their blocks
 * unmounted (ext3alloc.c).
 */
const struct fd_fs fd_fs_ext3 = {
    .name = "ext3",
    .mount_type = "ext3",
    .min_size = 1 << 20,
    .mkfs = {"mkfs.ext4", "-q", "-F", "-t", "ext3", "-b", "4096", "-I", "128",
             "-i", "8192", E2FS_IDENTITY, "{dev}"},
    /* As ext4's: the kernel's ext4 driver, which mounts it, prefetches
     * the block bitmaps too.
     */
    .mount_opts = "no_prefetch_block_bitmaps",
    E2FSPROGS_TOOLS,
    .allocate = fd_ext3_allocate,
};
