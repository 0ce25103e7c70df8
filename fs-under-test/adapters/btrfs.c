/* futuredisk — fs-under-test: the btrfs adapter (btrfs-progs).
 *
 * btrfs check has no graded exit codes: 0 is success, anything else a
 * failure (reference harness-anchors.md §5), and it prints no pass
 * times.  Blocks are found in `btrfs inspect-internal dump-tree` (which
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
  unsigned long long ino, parent, leaf, disk_byte;
  char name[256];
};

/* The fs tree's inodes: name and parent (INODE_REF), the leaf holding
 * the inode item, and the first data extent's logical address.
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
map_logical (const char *dev, unsigned long long logical, uint64_t *phys,
             struct fm_err *err)
{
  char l[32], *out;
  char *argv[] = {(char *)"btrfs-map-logical", (char *)"-l", l, (char *)dev,
                  NULL};
  const char *p;
  unsigned long long y;

  snprintf (l, sizeof l, "%llu", logical);
  if (fd_run_capture (argv, 600, &out, err) == -1)
    return -1;
  if ((p = strstr (out, "physical ")) == NULL ||
      sscanf (p, "physical %llu", &y) != 1) {
    snprintf (err->msg, sizeof err->msg, "btrfs-map-logical %s: %.100s", l,
              out);
    free (out);
    return -1;
  }
  free (out);
  *phys = y;
  return 0;
}

static int
btrfs_locate (const char *dev, const char *type, const char *path,
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
  unsigned long long cur = 256; /* the top directory */
  struct btrfs_inode *v;
  size_t n, i = 0;

  if (strcmp (type, "data") != 0 && strcmp (type, "inode") != 0) {
    snprintf (err->msg, sizeof err->msg,
              "unknown target type '%.64s' for btrfs (data, inode)", type);
    return -1;
  }
  if (fd_run_capture (argv, 600, &out, err) == -1)
    return -1;
  v = parse_tree (out, &n);
  free (out);
  if (v == NULL) {
    snprintf (err->msg, sizeof err->msg, "out of memory");
    return -1;
  }
  while (*p) { /* walk the path from the top directory */
    size_t len = strcspn (p, "/");
    snprintf (comp, sizeof comp, "%.*s", (int)len, p);
    for (i = 0; i < n; i++)
      if (v[i].parent == cur && strcmp (v[i].name, comp) == 0)
        break;
    if (i == n) {
      snprintf (err->msg, sizeof err->msg, "btrfs: %s: no '%s' in dump-tree",
                path, comp);
      free (v);
      return -1;
    }
    cur = v[i].ino;
    p += len;
    while (*p == '/')
      p++;
  }
  if (strcmp (type, "data") == 0) {
    if (v[i].disk_byte == 0) {
      snprintf (err->msg, sizeof err->msg,
                "btrfs: %s has no data extent on disk (inline?)", path);
      free (v);
      return -1;
    }
    *length = 4096;
    i = map_logical (dev, v[i].disk_byte, offset, err);
  } else {
    *length = 16384; /* the default node size: the whole leaf */
    i = map_logical (dev, v[i].leaf, offset, err);
  }
  free (v);
  return i == 0 ? 0 : -1;
}

const struct fd_fs fd_fs_btrfs = {
    .name = "btrfs",
    .mount_type = "btrfs",
    .min_size = 128 << 20,
    .mkfs = {"mkfs.btrfs", "-q", "-f", "{dev}"},
    .check = {"btrfs", "check", "--readonly", "{dev}"},
    .repair = {"btrfs", "check", "--repair", "--force", "{dev}"},
    .outcome = btrfs_outcome,
    .passes = btrfs_passes,
    .locate = btrfs_locate,
    .target_types = "data inode",
};
