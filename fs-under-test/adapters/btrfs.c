/* futuredisk — fs-under-test: the btrfs adapter (btrfs-progs).
 *
 * btrfs check has no graded exit codes: 0 is success, anything else a
 * failure (btrfs-check(8),
 * https://btrfs.readthedocs.io/en/latest/btrfs-check.html), and it prints
 * no pass times.  Blocks are found in `btrfs inspect-internal dump-tree` (which
 * reads the unmounted device) and mapped from btrfs's logical addresses
 * to device offsets with btrfs-map-logical (the first mirror).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsadapter.h"
#include "proc.h"

static enum fd_outcome
btrfs_outcome (int status, int signal, bool repair)
{
  if (status < 0)
    return FD_CHECKER_CRASH;
  return status == 0 ? FD_CLEAN : FD_UNFIXED;
}

static size_t
btrfs_passes (const char *out, struct fd_pass *p, size_t max)
{
  return 0; /* btrfs check does not time its passes */
}

struct btrfs_inode {
  unsigned long long ino, parent, leaf, dir_leaf, disk_byte;
  char name[256];
};

/* The fs tree's inodes: name and parent (INODE_REF), the leaf holding
 * the inode item, for a directory the leaf holding its first entry, and
 * the first data extent's logical address.
 */
static struct btrfs_inode *
parse_tree (const char *out, size_t *n)
{
  struct btrfs_inode *v = NULL, *cur = NULL;
  unsigned long long leaf = 0, ino, parent;
  const char *at, *nl;
  size_t cap = 0;

  *n = 0;
  for (at = out; *at; at = *nl ? nl + 1 : nl) {
    const char *k;
    char kind[32], line[512];

    /* One line at a time: strstr must not run on into the next. */
    nl = strchrnul (at, '\n');
    snprintf (line, sizeof line, "%.*s", (int)(nl - at), at);
    if (sscanf (line, "leaf %llu items", &leaf) == 1)
      continue;
    if ((k = strstr (line, "key (")) != NULL &&
        sscanf (k, "key (%llu %31s %llu)", &ino, kind, &parent) == 3 &&
        strncmp (line, "\titem", 5) == 0) {
      size_t i;
      for (i = 0; i < *n && v[i].ino != ino; i++)
        ;
      if (i == *n) {
        if (*n == cap) {
          struct btrfs_inode *nv;
          cap = cap ? 2 * cap : 256;
          if ((nv = realloc (v, cap * sizeof *v)) == NULL) {
            free (v);
            return NULL;
          }
          v = nv;
        }
        memset (&v[i], 0, sizeof v[i]);
        v[i].ino = ino;
        (*n)++;
      }
      cur = &v[i];
      /* The lines after an item belong to it: only an INODE_REF's (its
       * name) and the first EXTENT_DATA's (its disk byte) are read.
       */
      if (strcmp (kind, "INODE_ITEM") == 0) {
        cur->leaf = leaf;
        cur = NULL;
      } else if (strcmp (kind, "DIR_INDEX") == 0) {
        if (cur->dir_leaf == 0)
          cur->dir_leaf = leaf;
        cur = NULL;
      } else if (strcmp (kind, "INODE_REF") == 0)
        cur->parent = parent;
      else if (strcmp (kind, "EXTENT_DATA") != 0 || parent != 0)
        cur = NULL;
      continue;
    }
    if (cur && (k = strstr (line, "name: ")) != NULL && !cur->name[0] &&
        strstr (line, "index "))
      sscanf (k, "name: %255[^\n]", cur->name);
    if (cur && (k = strstr (line, "disk byte ")) != NULL)
      sscanf (k, "disk byte %llu", &cur->disk_byte);
  }
  return v;
}

/* Logical address -> device offset (mirror 1). */
static int
map_logical (const char *dev, uint64_t logical, uint64_t *phys,
             struct fm_err *err)
{
  char l[32], *out;
  char *argv[] = {(char *)"btrfs-map-logical", (char *)"-l", l, (char *)dev,
                  NULL};
  const char *p;
  unsigned long long y;

  snprintf (l, sizeof l, "%" PRIu64, logical);
  if (fd_run_capture (argv, 600, &out, err) == -1)
    return -1;
  if ((p = strstr (out, "physical ")) == NULL ||
      sscanf (p, "physical %llu", &y) != 1) {
    fm_fail (err, "btrfs-map-logical %s: %.100s", l, out);
    free (out);
    return -1;
  }
  free (out);
  *phys = y;
  return 0;
}

extern const struct fd_fs fd_fs_btrfs;

/* The trees whose roots `dump-tree -r` lists, by the words it uses. */
static const struct {
  const char *type, *words;
} roots[] = {
    {"root-tree", "root tree: "},
    {"chunk-tree", "chunk tree: "},
    {"extent-tree", "extent tree key "},
    {"dev-tree", "device tree key "},
    {"fs-tree", "fs tree key "},
    {"csum-tree", "checksum tree key "},
    {"free-space-tree", "free space tree key "},
};

/* The logical address of a tree's root node. */
static int
tree_root (const char *dev, size_t r, unsigned long long *logical,
           struct fm_err *err)
{
  char *argv[] = {(char *)"btrfs",     (char *)"inspect-internal",
                  (char *)"dump-tree", (char *)"-r",
                  (char *)dev,         NULL};
  char *out;
  const char *p;

  if (fd_run_capture (argv, 600, &out, err) == -1)
    return -1;
  /* "root tree: 30588928 level 0", or for the trees a ROOT_ITEM
   * describes, "extent tree key (EXTENT_TREE ROOT_ITEM 0) 30408704 ..."
   */
  p = strstr (out, roots[r].words);
  if (p)
    p += strlen (roots[r].words);
  if (p && *p == '(' && (p = strchr (p, ')')) != NULL)
    p++;
  if (p == NULL || sscanf (p, "%llu", logical) != 1) {
    fm_fail (err, "btrfs dump-tree -r: no %s", roots[r].type);
    free (out);
    return -1;
  }
  free (out);
  return 0;
}

/* data, inode, dir: walk the fs tree's names to path. */
static int
fs_tree_block (const char *dev, const char *type, const char *path,
               uint64_t *offset, uint64_t *length, struct fm_err *err)
{
  char *argv[] = {(char *)"btrfs",
                  (char *)"inspect-internal",
                  (char *)"dump-tree",
                  (char *)"-t",
                  (char *)"fs",
                  (char *)dev,
                  NULL};
  char comp[256], *out;
  const char *p = path;
  unsigned long long cur = 256, logical; /* 256: the top directory */
  struct btrfs_inode *v;
  size_t n, i, parent;

  if (fd_run_capture (argv, 600, &out, err) == -1)
    return -1;
  v = parse_tree (out, &n);
  free (out);
  if (v == NULL) {
    return fm_fail (err, "out of memory");
  }
  for (i = 0; i < n && v[i].ino != cur; i++)
    ;
  parent = i;
  while (*p && i < n) { /* walk the path from the top directory */
    size_t len = strcspn (p, "/");
    snprintf (comp, sizeof comp, "%.*s", (int)len, p);
    parent = i;
    for (i = 0; i < n; i++)
      if (v[i].parent == cur && strcmp (v[i].name, comp) == 0)
        break;
    if (i == n)
      break;
    cur = v[i].ino;
    p += len;
    while (*p == '/')
      p++;
  }
  if (i == n) {
    fm_fail (err, "btrfs: %s: no '%s' in dump-tree", path, comp);
    free (v);
    return -1;
  }
  if (strcmp (type, "data") == 0) {
    *length = 4096;
    logical = v[i].disk_byte;
  } else {
    *length = 16384; /* the default node size: the whole leaf */
    logical = strcmp (type, "dir") == 0 ? v[parent].dir_leaf : v[i].leaf;
  }
  free (v);
  if (logical == 0) {
    return fm_fail (err, "btrfs: %s has no %s block on disk (inline?)", path,
                    type);
  }
  return map_logical (dev, logical, offset, err);
}

static int
btrfs_locate (const char *dev, const char *type, const char *path,
              uint64_t *offset, uint64_t *length, struct fm_err *err)
{
  unsigned long long logical;
  size_t r;

  if (strcmp (type, "data") == 0 || strcmp (type, "inode") == 0 ||
      strcmp (type, "dir") == 0)
    return fs_tree_block (dev, type, path, offset, length, err);
  if (strcmp (type, "superblock") == 0) {
    *offset = 65536; /* the primary copy; mirrors at 64 MiB and 256 GiB */
    *length = 4096;
    return 0;
  }
  for (r = 0; r < sizeof roots / sizeof roots[0]; r++)
    if (strcmp (type, roots[r].type) == 0) {
      if (tree_root (dev, r, &logical, err) == -1)
        return -1;
      *length = 16384;
      return map_logical (dev, logical, offset, err);
    }
  return fm_fail (err, "unknown target type '%.64s' for btrfs (%s)", type,
                  fd_fs_btrfs.target_types);
}

/* btrfs check's "[2/7] checking extents" */
static bool
btrfs_pass_heading (const char *l, int *num, char *name, size_t len)
{
  int a, b;

  if (*l != '[' || sscanf (l, "[%d/%d]", &a, &b) != 2 || a <= 0)
    return false;
  snprintf (name, len, "step %d/%d", a, b);
  *num = a;
  return true;
}

const struct fd_fs fd_fs_btrfs = {
    .name = "btrfs",
    .mount_type = "btrfs",
    .min_size = 128 << 20,
    /* The UUID (the fsid, in every tree block's header) from the seed;
     * btrfs-progs 6.2 has no option for the device's UUID or the chunk
     * tree's, which stay random.  mkfs.btrfs refuses a UUID another
     * device has, so a disk of the same seed attached beside takes the
     * seed's next one (fd_fs_mkfs_argv's attempt).  It asks libblkid's
     * cache, which trusts what it saw in the last 2 s: a disk of the
     * seed just detached (its device number even given to this disk)
     * would still have the UUID there, so it starts from no cache and
     * probes every device afresh.
     */
    .mkfs = {"env", "BLKID_FILE=/dev/null", "mkfs.btrfs", "-q", "-f", "-U",
             "{uuid}", "{dev}"},
    .identity = 2,
    .check = {"btrfs", "check", "--readonly", "{dev}"},
    .repair = {"btrfs", "check", "--repair", "--force", "{dev}"},
    /* --repair on some full disks fixes the block accounting, commits,
     * finds the byte count off by the node the commit wrote, and prints
     * "super bytes used X mismatches actual used Y" again, a few times a
     * second, forever (btrfs-progs 6.2; kdave/btrfs-progs#850).  At about
     * 2.5 lines a second, 100 stop it after some 40 s (1,000 took 430 s,
     * 29 % of a nightly's phase time); a repair that makes progress
     * prints each fix with its own numbers.
     */
    .loop_lines = 100,
    /* btrfs-rescue(8): restore the superblock from its mirror copies,
     * then clear a log tree that fails to replay.
     */
    .escalate = {{"btrfs", "rescue", "super-recover", "-y", "{dev}"},
                 {"btrfs", "rescue", "zero-log", "{dev}"}},
    .outcome = btrfs_outcome,
    .passes = btrfs_passes,
    .pass_heading = btrfs_pass_heading,
    /* "checksum verify failed on N wanted ... found ...", and its data
     * checks' words.
     */
    .checksum_failed =
        (const char *const[]){"checksum verify failed", "csum mismatch",
                              "csum failed", NULL},
    /* "[1/7] checking root items" */
    .kept_lines = (const char *const[]){"[", NULL},
    .locate = btrfs_locate,
    .fiemap_to_device = map_logical,
    .target_types = "data inode dir superblock root-tree chunk-tree "
                    "extent-tree dev-tree fs-tree csum-tree free-space-tree",
    /* One fsid on two devices: one file system to kernels before 6.7. */
    .copies_collide = true,
};
