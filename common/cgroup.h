/* futuredisk — common: the cgroup a checker runs in (think=cpu, host=).
 *
 * The checker's CPU time is the cgroup's (cpu.stat usage_usec: user and
 * system, of every process in it), so the nbdkit, nbdfuse and loop
 * threads that serve its requests are not counted; its memory is capped
 * at the host's RAM.  CPU accounting needs cgroup v2 (every v2 node has
 * cpu.stat); the memory limit is v2's memory.max where the v2 hierarchy
 * has the memory controller, else the v1 memory controller's
 * memory.limit_in_bytes (a hybrid mount, as on Debian hosts before
 * systemd 247 and in many containers).
 */
#ifndef FUTUREDISK_CGROUP_H
#define FUTUREDISK_CGROUP_H

#include <stdbool.h>
#include <stdint.h>

#include "faultmodels/error.h"

struct fd_cgroup;

/* usage_usec from the text of a cpu.stat file; -1 with err if absent or
 * malformed.
 */
extern int fd_cpu_stat_parse (const char *text, uint64_t *usage_usec,
                              struct fm_err *err);

/* usage_usec of the cpu.stat file open at fd (read afresh from offset 0
 * each time: the kernel makes the text at each read).
 */
extern int fd_cpu_stat_read (int fd, uint64_t *usage_usec, struct fm_err *err);

/* Make a fresh cgroup for checkers, with memory capped at mem_max bytes
 * (0: no cap).  NULL with err naming `key` and saying why (not root, no
 * cgroup v2, no memory controller): then nothing is left behind.
 */
extern struct fd_cgroup *fd_cgroup_new (const char *key, uint64_t mem_max,
                                        struct fm_err *err);

/* The v2 directory: the plugin's cgroup= (its cpu.stat is the CPU). */
extern const char *fd_cgroup_dir (const struct fd_cgroup *cg);

/* In a child between fork and exec: move the calling process into the
 * cgroup (async-signal-safe: writes to descriptors opened beforehand).
 */
extern void fd_cgroup_enter (const struct fd_cgroup *cg);

/* Processes the memory limit's OOM killer killed in it so far. */
extern uint64_t fd_cgroup_oom_kills (const struct fd_cgroup *cg);

/* Its CPU microseconds so far (cpu.stat usage_usec); 0 if unreadable. */
extern uint64_t fd_cgroup_cpu_usec (const struct fd_cgroup *cg);

/* Kill what is left in it and remove it (also after a signal).  NULL is
 * fine.
 */
extern void fd_cgroup_free (struct fd_cgroup *cg);

#endif
