/* futuredisk — harness: the host a command's checkers run as (--think,
 * --host; campaign keys think and host).
 *
 * The checkers run in a cgroup of their own (common/cgroup.h), which the
 * plugin reads: think=cpu's clock is its CPU time, and in virtual time
 * the drive decides once none of its threads can send another request
 * (nbdkit-futuredisk-plugin(1), "Exact decisions").  think=cpu and a
 * host with a RAM size need it: made before any other work, so that a
 * machine without one (no root, cgroup v1 alone) fails at once with
 * nothing started; think=zero and real run without one where it cannot
 * be made (one line on stderr says so).  Removed at the end, also after
 * a signal.
 */
#ifndef FUTUREDISK_HOSTRUN_H
#define FUTUREDISK_HOSTRUN_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "faultmodels/error.h"

struct fd_cgroup;

/* Is think one of auto, real, zero, cpu and host (NULL: none) a known
 * host?  -1 with err naming the option (`think_key`, `host_key`).
 */
extern int fd_hostrun_check (const char *think_key, const char *think,
                             const char *host_key, const char *host,
                             struct fm_err *err);

/* The checkers' cgroup (ram, --host-ram, when not 0; else the host's
 * RAM size, its memory limit): 0 with *cg (NULL when it cannot be made
 * and think is zero or real) and *used the think mode the checkers run
 * with, or -1 with err naming key.  auto is cpu where the cgroup can be
 * made and real where it cannot: then *used is "real" and one line on
 * stderr ("futuredisk CMD: ...", once per process) says why, unless the
 * host's RAM limit needs the cgroup anyway, which fails as cpu does.
 */
extern int fd_hostrun_open (const char *cmd, const char *key, const char *think,
                            const char *host, uint64_t ram,
                            struct fd_cgroup **cg, const char **used,
                            struct fm_err *err);

/* The plugin's cgroup=DIR (when cg is not NULL) and, with think=cpu,
 * host=NAME (when host is not NULL) into args (two buffers), appended
 * to extra[*n] (at most max).
 */
#define FD_HOSTRUN_ARG_MAX (PATH_MAX + 16)
extern int fd_hostrun_args (const char *think, const char *host,
                            const struct fd_cgroup *cg,
                            char args[2][FD_HOSTRUN_ARG_MAX],
                            const char **extra, size_t *n, size_t max,
                            struct fm_err *err);

/* The host's speed (1 for NULL or an unknown name). */
extern double fd_hostrun_speed (const char *host);

#endif
