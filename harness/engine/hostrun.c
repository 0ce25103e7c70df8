/* futuredisk — harness: the checkers' host (see hostrun.h). */
#include <stdio.h>
#include <string.h>

#include "cgroup.h"
#include "host.h"
#include "hostrun.h"

int
fd_hostrun_check (const char *think_key, const char *think,
                  const char *host_key, const char *host, struct fm_err *err)
{
  if (think && strcmp (think, "real") && strcmp (think, "zero") &&
      strcmp (think, "cpu") && strcmp (think, "auto"))
    return fm_fail (err, "%s: '%.64s' is not auto, real, zero or cpu",
                    think_key, think);
  if (host && fd_host_find (host_key, host, err) == NULL)
    return -1;
  return 0;
}

/* No cgroup for the checkers: say why, and what the trials get instead
 * (auto falls back to think=real; with zero or real the drive cannot see
 * when they wait for it), once per process (predict opens one per disk).
 */
static void
no_cgroup_notice (const char *cmd, const char *why, const char *instead)
{
  static bool said;

  if (!said)
    fprintf (stderr, "futuredisk %s: no cgroup for the checkers (%s): %s\n",
             cmd, why, instead);
  said = true;
}

int
fd_hostrun_open (const char *cmd, const char *key, const char *think,
                 const char *host, uint64_t ram, struct fd_cgroup **cg,
                 const char **used, struct fm_err *err)
{
  const struct fd_host *h = NULL;
  bool cpu = think && strcmp (think, "cpu") == 0;
  bool fallback = think && strcmp (think, "auto") == 0;

  *cg = NULL;
  *used = fallback ? "cpu" : think;
  if (host && (h = fd_host_find ("--host", host, err)) == NULL)
    return -1;
  if (ram == 0 && h)
    ram = h->ram_bytes;
  if ((*cg = fd_cgroup_new (key, ram, err)) == NULL) {
    char msg[sizeof err->msg];
    snprintf (msg, sizeof msg, "%s", err->msg);
    /* think=zero and real need it only for the drive to watch them. */
    if (!cpu && !fallback && ram == 0) {
      no_cgroup_notice (cmd, msg,
                        "the drive cannot see when they wait for it, and "
                        "decides after a grace of wall time (the record "
                        "counts such decisions)");
      err->msg[0] = '\0';
      return 0;
    }
    if (fallback && ram == 0) {
      *used = "real";
      no_cgroup_notice (cmd, msg,
                        "the wall time between requests goes on the clock "
                        "(think=real), not their CPU time");
      err->msg[0] = '\0';
      return 0;
    }
    return fm_fail (err, "%s%s", msg,
                    cpu || fallback ? "; --think real puts wall time on the "
                                      "clock instead, without a cgroup"
                                    : "");
  }
  return 0;
}

int
fd_hostrun_args (const char *think, const char *host,
                 const struct fd_cgroup *cg, char args[2][FD_HOSTRUN_ARG_MAX],
                 const char **extra, size_t *n, size_t max, struct fm_err *err)
{
  bool cpu = think && strcmp (think, "cpu") == 0;

  if (cg == NULL)
    return 0;
  if (*n + (cpu && host ? 2 : 1) > max)
    return fm_fail (err, "--faults: too many keys");
  snprintf (args[0], FD_HOSTRUN_ARG_MAX, "cgroup=%s", fd_cgroup_dir (cg));
  extra[(*n)++] = args[0];
  if (cpu && host) {
    snprintf (args[1], FD_HOSTRUN_ARG_MAX, "host=%s", host);
    extra[(*n)++] = args[1];
  }
  return 0;
}

double
fd_hostrun_speed (const char *host)
{
  struct fm_err err;
  const struct fd_host *h = host ? fd_host_find ("host", host, &err) : NULL;

  return h ? h->speed : 1;
}
