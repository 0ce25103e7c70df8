/* futuredisk — common: the hosts a checker can be run as (think=cpu,
 * host=NAME).
 *
 * A host is a CPU speed and a RAM size.  The speed is relative to this
 * machine's class (an AMD EPYC of the Zen 4 generation, 2023-24): the
 * checker's CPU seconds here, divided by it, are its CPU seconds there.
 * The RAM is the memory limit its cgroup gets (memory.max), so that a
 * checker that would not fit on that host is stopped as it would be
 * there.  Shared by the plugin (the speed) and the harness (the RAM).
 */
#ifndef FUTUREDISK_HOST_H
#define FUTUREDISK_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "faultmodels/error.h"

struct fd_host {
  const char *name;
  const char *cpu;    /* what it stands for, for the docs and errors */
  double speed;       /* single-thread speed against this machine's class */
  uint64_t ram_bytes; /* its memory; 0: no limit (this machine's own) */
  const char *source; /* where speed and RAM come from ([E]: estimate) */
};

/* The host called name, or NULL with err naming `key` and the value and
 * listing the known hosts.
 */
extern const struct fd_host *fd_host_find (const char *key, const char *name,
                                           struct fm_err *err);

/* The i-th host of the table, or NULL past its end. */
extern const struct fd_host *fd_host_at (size_t i);

/* The default host: this machine's class, speed 1, no memory limit. */
#define FD_HOST_DEFAULT "native"

#endif
