/* futuredisk — harness: the machine a trial ran on and the versions of
 * the tools that decided it (kernel, nbdkit, e2fsprogs, xfsprogs,
 * btrfs-progs), so that a change between nights can be traced to them.
 */
#ifndef FUTUREDISK_HOSTENV_H
#define FUTUREDISK_HOSTENV_H

struct fd_hostenv {
  char host[64];
  char kernel[64];     /* uname -r */
  char futuredisk[32]; /* this build's version */
  char nbdkit[64];     /* each tool's own version line; "" if absent */
  char e2fsprogs[64];
  char xfsprogs[64];
  char btrfs_progs[64];
};

/* This machine's, read once per process. */
extern const struct fd_hostenv *fd_hostenv (void);

#endif
