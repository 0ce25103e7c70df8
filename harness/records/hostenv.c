/* futuredisk — harness: the machine and tool versions (hostenv.h). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "hostenv.h"
#include "proc.h"

/* The first line a tool prints of its version (stdout, else stderr:
 * e2fsck -V writes there), or "" when it does not run.
 */
static void
version_of (const char *prog, const char *opt, char *out, size_t len)
{
  char *argv[] = {(char *)prog, (char *)opt, NULL};
  struct fd_proc pr;
  struct fm_err e;
  const char *text;

  out[0] = '\0';
  if (fd_run (argv, 30, &pr, &e) == -1)
    return;
  text = pr.out && pr.out[0] ? pr.out : pr.err ? pr.err : "";
  if (pr.status >= 0 && pr.status != 127)
    snprintf (out, len, "%.*s", (int)strcspn (text, "\n"), text);
  fd_proc_free (&pr);
}

const struct fd_hostenv *
fd_hostenv (void)
{
  static struct fd_hostenv env;
  static bool read;
  struct utsname u;

  if (read)
    return &env;
  if (gethostname (env.host, sizeof env.host) == -1)
    env.host[0] = '\0';
  env.host[sizeof env.host - 1] = '\0';
  if (uname (&u) == 0)
    snprintf (env.kernel, sizeof env.kernel, "%s", u.release);
  snprintf (env.futuredisk, sizeof env.futuredisk, "%s", FUTUREDISK_VERSION);
  version_of ("nbdkit", "--version", env.nbdkit, sizeof env.nbdkit);
  version_of ("e2fsck", "-V", env.e2fsprogs, sizeof env.e2fsprogs);
  version_of ("xfs_repair", "-V", env.xfsprogs, sizeof env.xfsprogs);
  version_of ("btrfs", "--version", env.btrfs_progs, sizeof env.btrfs_progs);
  read = true;
  return &env;
}
