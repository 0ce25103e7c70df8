/* futuredisk — common: the host table (see host.h).
 *
 * Speeds are single-thread figures, since a checker is (e2fsck, most of
 * xfs_repair's and btrfs check's passes) one thread waiting for one
 * request at a time.  This machine's class is the reference: the CPU
 * the rig runs on reports family 25 model 17, AMD's Zen 4 EPYC (Genoa).
 */
#include <stdio.h>
#include <string.h>

#include "host.h"

static const struct fd_host hosts[] = {
    {FD_HOST_DEFAULT, "this machine as it is", 1.0, 0,
     "by definition: the CPU time measured here, and no memory limit"},
    {"server-2024", "AMD EPYC 9654 (Zen 4, 2022-24), 384 GiB", 1.0,
     384ull << 30,
     "the reference class: PassMark single-thread 2893 for the EPYC 9654 "
     "(https://fanaticosdelhardware.com/"
     "amd-epyc-9654-superior-ryzen-threadripper-pro-5995wx-en-casi-un-30-en-"
     "passmark); RAM [E]: 12 channels x 32 GiB"},
    {"server-2006", "Intel Xeon 5160 (Woodcrest, 3.0 GHz, 2006), 8 GiB", 0.35,
     8ull << 30,
     "[E] speed: a Core-microarchitecture core at 3.0 GHz (SPECint2000 3057, "
     "https://www.anandtech.com/Show/Index/2022?cPage=10&all=False&sort=0&"
     "page=4) against a Zen 4 core at 3.7 GHz with about twice the integer "
     "work per clock; RAM [E]: a two-socket 1U server of the time"},
    {"nas-2010", "Intel Atom D510 (1.66 GHz, in-order, 2010), 1 GiB", 0.12,
     1ull << 30,
     "[E] speed: an in-order core at 1.66 GHz; RAM: the 1 GiB such home "
     "and small-office NAS boxes shipped with [E]"},
};

#define N_HOSTS (sizeof hosts / sizeof hosts[0])

const struct fd_host *
fd_host_at (size_t i)
{
  return i < N_HOSTS ? &hosts[i] : NULL;
}

const struct fd_host *
fd_host_find (const char *key, const char *name, struct fm_err *err)
{
  char known[256] = "";
  size_t i, n = 0;

  for (i = 0; i < N_HOSTS; i++)
    if (strcmp (hosts[i].name, name) == 0)
      return &hosts[i];
  for (i = 0; i < N_HOSTS && n < sizeof known; i++)
    n += (size_t)snprintf (known + n, sizeof known - n, "%s%s", i ? ", " : "",
                           hosts[i].name);
  fm_fail (err, "%s: unknown host '%.64s' (known: %s)", key, name, known);
  return NULL;
}
