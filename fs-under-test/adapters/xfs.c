/* futuredisk — fs-under-test: the xfs adapter (xfsprogs).
 *
 * xfs_repair -n exits 1 when it finds corruption, else 0; without -n it
 * exits 0 when it completes, or with -e 4 when it repaired something; 1
 * is a runtime error and 2 a dirty log it cannot replay (xfs_repair(8),
 * https://man7.org/linux/man-pages/man8/xfs_repair.8.html).  -v ends with
 * a summary table of phases 1-7 and their durations, at one-second
 * resolution.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsadapter.h"
#include "proc.h"

static enum fd_outcome
xfs_outcome (int status, int signal, bool repair)
{
  if (status < 0)
    return FD_CHECKER_CRASH;
  switch (status) {
    case 0:
      return FD_CLEAN;
    case 1:
      return repair ? FD_CHECKER_ERROR : FD_UNFIXED;
    case 2:
      return FD_UNFIXED; /* a dirty log it will not replay */
    case 4:
      return repair ? FD_FIXED : FD_CHECKER_ERROR;
    default:
      return FD_CHECKER_ERROR;
  }
}

/* "Phase 3:\t12/03 08:58:22\t12/03 08:58:25\t3 seconds" */
static bool
xfs_pass (const char *line, const char *end, struct fd_pass *p)
{
  const char *tab = line, *q;
  double secs = 0;
  int phase;

  if (sscanf (line, "Phase %d:", &phase) != 1 ||
      strncmp (strchr (line, ':') + 1, "\tSkipped", 8) == 0)
    return false;
  /* The duration is after the third tab: "1 minute, 3 seconds". */
  for (int k = 0; k < 3 && tab && tab < end; k++)
    tab = strchr (tab + 1, '\t');
  for (q = tab && tab < end ? tab + 1 : end; q < end;) {
    char unit[16];
    double v;
    int used;
    if (sscanf (q, "%lf %15[a-z]%n", &v, unit, &used) != 2)
      break;
    secs += v * (unit[0] == 'h' ? 3600 : unit[0] == 'm' ? 60 : 1);
    q += used;
    while (q < end && (*q == ',' || *q == ' '))
      q++;
  }
  snprintf (p->name, sizeof p->name, "phase %d", phase);
  p->seconds = secs;
  return true;
}

/* The summary table at the end of -v's output. */
static size_t
xfs_passes (const char *out, struct fd_pass *p, size_t max)
{
  return fd_pass_lines (strstr (out, "XFS_REPAIR Summary"), xfs_pass, p, max);
}

/* xfs_db -r -c CMD... on dev; stdout in *out. */
/* xfs_repair's "Phase 3 - for each AG..." */
static bool
xfs_pass_heading (const char *l, int *num, char *name, size_t len)
{
  int n, k = 0;

  if (*l != 'P' || sscanf (l, "Phase %d -%n", &n, &k) != 1 || k == 0)
    return false;
  snprintf (name, len, "phase %d", n);
  *num = n;
  return true;
}

static int
xfs_db (const char *dev, const char *c1, const char *c2, char **out,
        struct fm_err *err)
{
  char *argv[] = {
      (char *)"xfs_db",           (char *)"-r", (char *)"-c", (char *)c1,
      (char *)(c2 ? "-c" : NULL), (char *)c2,   (char *)dev,  NULL};

  if (c2 == NULL)
    argv[4] = (char *)dev, argv[5] = NULL;
  return fd_run_capture (argv, 600, out, err);
}

/* "convert KIND N daddr" -> the daddr (512-byte units). */
static int
to_daddr (const char *dev, const char *kind, unsigned long long n,
          unsigned long long *daddr, struct fm_err *err)
{
  char cmd[96], *out;
  const char *p;

  snprintf (cmd, sizeof cmd, "convert %s %llu daddr", kind, n);
  if (xfs_db (dev, cmd, NULL, &out, err) == -1)
    return -1;
  p = strchr (out, '(');
  if (p == NULL || sscanf (p, "(%llu)", daddr) != 1) {
    fm_fail (err, "xfs_db %s: %.100s", cmd, out);
    free (out);
    return -1;
  }
  free (out);
  return 0;
}

/* "xfs_db -r -c C -c 'p FIELD'": the field's number. */
static int
xfs_field (const char *dev, const char *c, const char *field,
           unsigned long long *v, struct fm_err *err)
{
  char p[64], want[80], *out;
  const char *at;

  snprintf (p, sizeof p, "p %s", field);
  snprintf (want, sizeof want, "%s = %%llu", field);
  if (xfs_db (dev, c, p, &out, err) == -1)
    return -1;
  at = strstr (out, field);
  if (at == NULL || sscanf (at, want, v) != 1) {
    fm_fail (err, "xfs_db %s: no %s: %.80s", c, field, out);
    free (out);
    return -1;
  }
  free (out);
  return 0;
}

/* The first block of the file's (or directory's) data fork, as a daddr;
 * 0 when it has none (an empty file, a short-form directory).
 */
static int
first_block (const char *dev, const char *path, unsigned long long *daddr,
             struct fm_err *err)
{
  char cmd[512], *out;
  const char *p;
  unsigned long long fsb;

  snprintf (cmd, sizeof cmd, "path /%s", path);
  if (xfs_db (dev, cmd, "bmap", &out, err) == -1)
    return -1;
  p = strstr (out, "startblock ");
  if (p == NULL || sscanf (p, "startblock %llu", &fsb) != 1) {
    free (out);
    *daddr = 0;
    return 0;
  }
  free (out);
  return to_daddr (dev, "fsb", fsb, daddr, err);
}

/* The daddr of the block holding the inode of path. */
static int
inode_block (const char *dev, const char *path, unsigned long long bs,
             unsigned long long *daddr, struct fm_err *err)
{
  char cmd[512], *out;
  const char *p;
  unsigned long long ino;

  snprintf (cmd, sizeof cmd, "path /%s", path);
  if (xfs_db (dev, cmd, "inode", &out, err) == -1)
    return -1;
  if ((p = strstr (out, "inode number is ")) == NULL ||
      sscanf (p, "inode number is %llu", &ino) != 1) {
    fm_fail (err, "xfs_db %s: %.80s", cmd, out);
    free (out);
    return -1;
  }
  free (out);
  if (to_daddr (dev, "ino", ino, daddr, err) == -1)
    return -1;
  *daddr -= *daddr % (bs / 512);
  return 0;
}

extern const struct fd_fs fd_fs_xfs;

/* AG 0's headers, in sectors (xfs_format.h: sb, AGF, AGI, AGFL), and the
 * btree roots its AGF and AGI point at.
 */
static const struct {
  const char *type, *header, *field;
  unsigned sector;
} ag0[] = {
    {"superblock", NULL, NULL, 0},
    {"agf", NULL, NULL, 1},
    {"agi", NULL, NULL, 2},
    {"agfl", NULL, NULL, 3},
    {"bnobt", "agf 0", "bnoroot", 0},
    {"cntbt", "agf 0", "cntroot", 0},
    {"refcountbt", "agf 0", "refcntroot", 0},
    {"inobt", "agi 0", "root", 0},
    {"finobt", "agi 0", "free_root", 0},
};

static int
xfs_locate (const char *dev, const char *type, const char *path,
            uint64_t *offset, uint64_t *length, struct fm_err *err)
{
  unsigned long long bs, ss, v, daddr;
  size_t i;

  if (xfs_field (dev, "sb 0", "blocksize", &bs, err) == -1 ||
      xfs_field (dev, "sb 0", "sectsize", &ss, err) == -1)
    return -1;
  *length = bs;
  for (i = 0; i < sizeof ag0 / sizeof ag0[0]; i++)
    if (strcmp (type, ag0[i].type) == 0)
      break;
  if (i < sizeof ag0 / sizeof ag0[0] && ag0[i].header == NULL) {
    *offset = ag0[i].sector * ss;
    *length = ss;
    return 0;
  } else if (i < sizeof ag0 / sizeof ag0[0]) {
    /* In AG 0 an AG block number is also the file-system block. */
    if (xfs_field (dev, ag0[i].header, ag0[i].field, &v, err) == -1)
      return -1;
    daddr = v * (bs / 512);
  } else if (strcmp (type, "log") == 0) {
    if (xfs_field (dev, "sb 0", "logstart", &v, err) == -1 ||
        to_daddr (dev, "fsb", v, &daddr, err) == -1)
      return -1;
  } else if (strcmp (type, "data") == 0) {
    if (first_block (dev, path, &daddr, err) == -1)
      return -1;
    if (daddr == 0) {
      return fm_fail (err, "%s has no data block", path);
    }
  } else if (strcmp (type, "dir") == 0) {
    /* The directory's first block; a short-form directory lives in its
     * inode, so that block holds its entries.
     */
    char dir[300];
    const char *slash = strrchr (path, '/');
    snprintf (dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 0, path);
    if (first_block (dev, dir, &daddr, err) == -1 ||
        (daddr == 0 && inode_block (dev, dir, bs, &daddr, err) == -1))
      return -1;
  } else if (strcmp (type, "inode") == 0) {
    if (inode_block (dev, path, bs, &daddr, err) == -1)
      return -1;
  } else {
    return fm_fail (err, "unknown target type '%.64s' for xfs (%s)", type,
                    fd_fs_xfs.target_types);
  }
  *offset = daddr * 512;
  return 0;
}

const struct fd_fs fd_fs_xfs = {
    .name = "xfs",
    .mount_type = "xfs",
    .min_size = 300 << 20, /* mkfs.xfs refuses smaller */
    /* The UUID from the seed: it places nothing, but it is in every
     * metadata block's header, so the disk's bytes follow the seed.  Two
     * disks of one seed attached at once share it, which xfs refuses to
     * mount twice unless told nouuid (the mount option for snapshots).
     */
    .mkfs = {"mkfs.xfs", "-q", "-f", "-m", "uuid={uuid}", "{dev}"},
    .identity = 1,
    .mount_opts = "nouuid",
    .check = {"xfs_repair", "-n", "-v", "{dev}"},
    .repair = {"xfs_repair", "-e", "-v", "{dev}"},
    .dirty_log_exit = 2,
    .repair_zap_log = {"xfs_repair", "-L", "-e", "-v", "{dev}"},
    /* A log the repair could neither replay nor pass over: zero it,
     * losing the metadata changes it held (xfs_repair(8) -L).
     */
    .escalate = {{"xfs_repair", "-L", "-e", "-v", "{dev}"}},
    .outcome = xfs_outcome,
    .passes = xfs_passes,
    .pass_heading = xfs_pass_heading,
    /* "Metadata CRC error detected at ...", "bad CRC for inode ..." */
    .checksum_failed = (const char *const[]){"crc error", "bad crc", NULL},
    /* "Phase 3 - for each AG..." and the table of phase times after
     * "XFS_REPAIR Summary" (one "Phase N:" row each).
     */
    .kept_lines = (const char *const[]){"Phase ", "XFS_REPAIR Summary", NULL},
    .locate = xfs_locate,
    .target_types = "data inode dir log superblock agf agi agfl bnobt cntbt "
                    "refcountbt inobt finobt",
    /* "Filesystem has duplicate UUID" without nouuid; with it copies
     * could mount side by side, but crash points still check them one at
     * a time, as they did before.
     */
    .copies_collide = true,
};
