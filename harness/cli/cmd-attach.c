/* futuredisk — harness: `futuredisk attach` and `futuredisk detach`, for
 * poking at a mounted emulated disk by hand.
 *
 * attach leaves nbdkit, the block device (/dev/nbdN, or nbdfuse and a
 * loop device) and the mount running and
 * records them in /run/futuredisk/attach/NAME/state (NAME from the mount
 * point); detach reads that and takes it all down, newest first.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attach.h"
#include "commands.h"
#include "errmsg.h"
#include "faultmodels/units.h"
#include "options.h"

#define STATE_ROOT "/run/futuredisk/attach"

static void
attach_usage (FILE *fp)
{
  fprintf (fp,
           "Usage: %s attach --mount DIR [--profile P] [--size SIZE] "
           "[--seed N]\n"
           "                  [--faults SPEC] [--fs TYPE [--mkfs]] "
           "[--store FILE]\n"
           "                  [--attach auto|nbd|loop|serial]\n"
           "       %s detach DIR\n"
           "Attach an emulated disk as a block device (nbdkit, then "
           "nbd-client on\n/dev/nbdN, or nbdfuse + losetup --direct-io=on) "
           "and mount it on DIR; detach\ntakes it all down again.\n"
           "\n"
           "  --mount DIR    mount point (must exist)\n"
           "  --profile P    disk profile or profile file (default "
           "roadmap-2013)\n"
           "  --size SIZE    rescale the disk (e.g. 1G)\n"
           "  --seed N       seed for every fault (default 1)\n"
           "  --faults SPEC  a preset (none, consumer, enterprise, harsh) "
           "and/or\n"
           "                 KEY=VALUE fault keys, comma-separated "
           "(nbdkit-futuredisk-plugin(1))\n"
           "  --fs TYPE      file system (ext4, xfs, btrfs, chunkfs, ext3) to "
           "mount;\n"
           "                 without it the device is left unmounted\n"
           "  --mkfs         make the file system first\n"
           "  --store FILE   keep the disk's bytes in FILE across attaches\n"
           "  --attach HOW   nbd: /dev/nbdN; loop: nbdfuse + a loop device;\n"
           "                 serial: loop, the requests one at a time in the\n"
           "                 kernel's order;\n"
           "                 auto (default): nbd where the kernel has it\n"
           "\n"
           "attach prints the device, how it was made and the control socket "
           "(for\n'%s ctl').\n",
           fd_progname, fd_progname, fd_progname);
}

/* /run/futuredisk/attach/<mount point with '/' as '_'> */
static int
state_dir (const char *mount, char *out, size_t len)
{
  char real[PATH_MAX], *p;

  if (realpath (mount, real) == NULL) {
    fprintf (stderr, "%s: %s: %s\n", fd_progname, mount, fd_strerror (errno));
    return -1;
  }
  for (p = real; *p; p++)
    if (*p == '/')
      *p = '_';
  snprintf (out, len, "%s/%s", STATE_ROOT, real);
  return 0;
}

static int
mkdir_p (const char *path)
{
  char tmp[PATH_MAX], *p;

  snprintf (tmp, sizeof tmp, "%s", path);
  for (p = tmp + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      if (mkdir (tmp, 0700) == -1 && errno != EEXIST)
        return -1;
      *p = '/';
    }
  return mkdir (tmp, 0700) == -1 && errno != EEXIST ? -1 : 0;
}

/* Remove what attach keeps in the state directory (the logs of a failed
 * attach were already shown), then the directory.
 */
static void
clear_state_dir (const char *dir)
{
  const char *files[] = {"state",      "stats.json",  "faults.jsonl",
                         "nbdkit.log", "nbdfuse.log", NULL};
  char path[PATH_MAX + 16];
  size_t i;

  for (i = 0; files[i]; i++) {
    snprintf (path, sizeof path, "%s/%s", dir, files[i]);
    unlink (path);
  }
  rmdir (dir);
}

struct attach_opts {
  struct fd_attach_opts a; /* a.extra points at extra */
  const char *extra[FD_FAULT_KEYS_MAX];
};

static int
attach_set (void *vo, int c, const char *arg, struct fm_err *err)
{
  struct attach_opts *o = vo;

  switch (c) {
    case 'm':
      o->a.mount = arg;
      return 0;
    case 'p':
      o->a.profile = arg;
      return 0;
    case 's':
      o->a.size = arg;
      return 0;
    case 'S':
      return fm_parse_uint ("--seed", arg, 0, UINT64_MAX, &o->a.seed, err);
    case 'f': {
      /* fd_fault_spec cuts its spec up, and keeps copies of the keys. */
      char *spec = strdup (arg);
      int rc;
      if (spec == NULL)
        return fm_fail (err, "out of memory");
      rc =
          fd_fault_spec (spec, o->extra, FD_FAULT_KEYS_MAX, &o->a.n_extra, err);
      free (spec);
      return rc;
    }
    case 't':
      o->a.fs = arg;
      return 0;
    case 'k':
      o->a.mkfs = true;
      return 0;
    case 'o':
      o->a.store = arg;
      return 0;
    case 'a':
      if (fd_attach_via_check ("--attach", arg, err) == -1)
        return -1;
      o->a.via = arg;
      return 0;
  }
  return fm_fail (err, "unhandled option");
}

static const struct option attach_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"mount", required_argument, NULL, 'm'},
    {"profile", required_argument, NULL, 'p'},
    {"size", required_argument, NULL, 's'},
    {"seed", required_argument, NULL, 'S'},
    {"faults", required_argument, NULL, 'f'},
    {"fs", required_argument, NULL, 't'},
    {"mkfs", no_argument, NULL, 'k'},
    {"store", required_argument, NULL, 'o'},
    {"attach", required_argument, NULL, 'a'},
    {NULL, 0, NULL, 0},
};

static const struct fd_cmd_opts attach_cmd = {"attach", attach_options,
                                              attach_usage, attach_set};

static int
attach_parse (int argc, char **argv, struct attach_opts *o)
{
  int first, rc;

  memset (o, 0, sizeof *o);
  o->a.seed = 1;
  o->a.extra = o->extra;
  rc = fd_options_parse (&attach_cmd, argc, argv, o, &first);
  if (rc != FD_OPTS_RUN)
    return rc;
  if (first != argc || o->a.mount == NULL) {
    fd_usage_error ("attach", "%s",
                    o->a.mount ? "unexpected argument"
                               : "--mount DIR is required");
    attach_usage (stderr);
    return FD_OPTS_BAD;
  }
  if (o->a.mkfs && !o->a.fs)
    return fd_usage_error ("attach", "--mkfs needs --fs TYPE");
  return FD_OPTS_RUN;
}

/* Attach, record it in the state directory and say where it all is. */
static int
attach_run (struct attach_opts *o)
{
  char dir[PATH_MAX], state[PATH_MAX + 8];
  const char *mount = o->a.mount;
  struct fd_disk *d;
  struct fm_err err;

  if (state_dir (mount, dir, sizeof dir) == -1)
    return 1;
  snprintf (state, sizeof state, "%s/state", dir);
  if (access (state, F_OK) == 0) {
    fprintf (stderr,
             "%s attach: %s already has an attached disk (%s detach %s)\n",
             fd_progname, mount, fd_progname, mount);
    return 1;
  }
  if (mkdir_p (dir) == -1) {
    fprintf (stderr, "%s attach: %s: %s\n", fd_progname, dir,
             fd_strerror (errno));
    return 1;
  }
  o->a.dir = dir;
  /* No file system: the bare device, for a benchmark or a tool of the
   * user's; DIR still names the attach.
   */
  if (o->a.fs == NULL)
    o->a.mount = NULL;
  d = fd_disk_attach (&o->a, &err);
  if (d == NULL) {
    fprintf (stderr, "%s attach: %s\n", fd_progname, err.msg);
    clear_state_dir (dir);
    return 1;
  }
  if (fd_disk_save (d, state, &err) == -1) {
    fprintf (stderr, "%s attach: %s\n", fd_progname, err.msg);
    fd_disk_detach (d, &err);
    return 1;
  }
  printf ("device %s\nattach %s\ncontrol %s\nmount %s\n", fd_disk_device (d),
          fd_disk_via (d), fd_disk_control (d),
          o->a.fs ? mount : "none (no --fs)");
  free (d); /* still attached: the state file remembers it */
  return 0;
}

int
cmd_attach (int argc, char **argv)
{
  struct attach_opts o;
  int rc;

  rc = attach_parse (argc, argv, &o);
  if (rc != FD_OPTS_RUN)
    return rc;
  return attach_run (&o);
}

/* detach takes its one operand, the mount point, as it is. */
static const struct fd_cmd_opts detach_cmd = {"detach", NULL, attach_usage,
                                              NULL};

static int
detach_run (const char *mount)
{
  char dir[PATH_MAX], path[PATH_MAX + 16];
  struct fd_disk *d;
  struct fm_err err;
  FILE *fp;
  int ret = 0;
  bool died = false;

  if (state_dir (mount, dir, sizeof dir) == -1)
    return 1;
  snprintf (path, sizeof path, "%s/state", dir);
  if ((d = fd_disk_load (path, &err)) == NULL) {
    fprintf (stderr, "%s detach: nothing attached at %s (%s)\n", fd_progname,
             mount, err.msg);
    return 1;
  }
  /* A server that died is reported; the teardown still runs and, if it
   * succeeds, nothing is left to detach again.
   */
  if (fd_disk_check (d, NULL, &err) == -1) {
    fprintf (stderr, "%s detach: %s\n", fd_progname, err.msg);
    died = true;
  }
  if (fd_disk_detach (d, &err) == -1) {
    fprintf (stderr, "%s detach: %s\n", fd_progname, err.msg);
    ret = 1;
  }
  /* The server wrote its stats at exit: print them, then tidy up. */
  snprintf (path, sizeof path, "%s/stats.json", dir);
  if ((fp = fopen (path, "r")) != NULL) {
    char buf[8192];
    size_t n;
    while ((n = fread (buf, 1, sizeof buf, fp)) > 0)
      fwrite (buf, 1, n, stdout);
    fclose (fp);
  }
  if (ret == 0)
    clear_state_dir (dir);
  return ret || died ? 1 : 0;
}

int
cmd_detach (int argc, char **argv)
{
  int rc;

  rc = fd_operands_parse (&detach_cmd, argc, argv, 1, 1);
  if (rc != FD_OPTS_RUN)
    return rc;
  return detach_run (argv[1]);
}
