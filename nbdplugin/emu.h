/* futuredisk — nbdplugin: the emulated disk, without nbdkit.
 *
 * One request path for every NBD command: put the request on the virtual
 * clock, price it with the disk model, move the bytes between the client,
 * the volatile write cache and the store, and count it.  nbdkit's
 * callbacks (futuredisk.c) are a thin shim over this, so the whole path is
 * unit-tested without a server.
 *
 * Threads: every call may come from any nbdkit worker.  The model, the
 * clock, the write cache and the counters sit under one lock (the drive
 * has one actuator); bytes that go straight to or from the store are
 * copied outside it, in parallel.
 */
#ifndef FUTUREDISK_EMU_H
#define FUTUREDISK_EMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "faultmodels/disk.h"
#include "faultmodels/error.h"
#include "faultmodels/faults.h"
#include "faultmodels/profile.h"
#include "faults.h"
#include "store.h"

struct emu;

struct emu_config {
  struct fm_profile profile; /* already rescaled to the disk's size */
  uint64_t seed;
  double time_scale; /* 0: virtual, 1: real, F: scale:F */
  bool think_zero;   /* think=zero: ignore the client's time */
  /* think=cpu: the client's time is the CPU time of the processes in the
   * cgroup v2 directory `cgroup` (its cpu.stat), divided by host_speed.
   */
  bool think_cpu;
  const char *cgroup;     /* NULL: none (think=cpu cannot be set) */
  double host_speed;      /* 0: 1 */
  const char *store_path; /* NULL: RAM */
  struct fm_disk_options caches;
  uint64_t (*wall_ns) (void); /* monotonic clock; NULL: CLOCK_MONOTONIC */
  /* Sleep ns of wall time (the scaled modes hold each reply until its
   * modelled completion); -1 if interrupted by shutdown.  NULL: replies
   * are never held (tests with a clock of their own).
   */
  int (*sleep_ns) (uint64_t ns);
  /* Virtual mode: how long a decision waits for requests sent together
   * (wall ns); 0: SCHED_GRACE_NS (scheduler.h).
   */
  uint64_t grace_ns;
  const char *bad_path;      /* bad=FILE to inject at start, or NULL */
  const char *faultlog_path; /* faultlog=FILE, or NULL */
  const char *writelog_path; /* writelog=FILE (common/writelog.h), or NULL */
  uint64_t powercut_after;   /* cut power after this many writes; 0: no */
  struct fm_faultset faults; /* how the disk breaks */
};

struct emu_result {
  uint64_t arrival_ns;  /* virtual time the request reached the drive */
  uint64_t done_ns;     /* virtual time it completed */
  uint64_t deadline_ns; /* wall time (cfg.wall_ns) it was held to; 0: none */
  bool cache_hit;
};

extern struct emu *emu_new (const struct emu_config *cfg, struct fm_err *err);

/* Orderly shutdown: like a drive told to stand by, it writes its cache to
 * the media first.  (A power cut is another matter, and another call.)
 */
extern void emu_free (struct emu *e);

/* The data path.  Each returns 0, or -1 with errno set (EIO, ENOMEM,
 * ENOSPC, ESHUTDOWN) and err filled; in the scaled time modes it returns
 * at the request's modelled completion (cfg.sleep_ns).
 */
extern int emu_pread (struct emu *e, void *buf, uint64_t count, uint64_t offset,
                      struct emu_result *r, struct fm_err *err);
extern int emu_pwrite (struct emu *e, const void *buf, uint64_t count,
                       uint64_t offset, bool fua, struct emu_result *r,
                       struct fm_err *err);
extern int emu_flush (struct emu *e, struct emu_result *r, struct fm_err *err);
extern int emu_trim (struct emu *e, uint64_t count, uint64_t offset, bool fua,
                     struct emu_result *r, struct fm_err *err);
extern int emu_zero (struct emu *e, uint64_t count, uint64_t offset,
                     bool may_trim, bool fua, struct emu_result *r,
                     struct fm_err *err);
extern int emu_cache (struct emu *e, uint64_t count, uint64_t offset,
                      struct emu_result *r, struct fm_err *err);

/* Cut the power: acknowledged writes still in the drive's volatile cache
 * are lost, except that each may be torn (a prefix of its sectors made it)
 * with the configured chance; all of it goes to the fault log.  The disk
 * comes back at once with exactly what was durable.
 */
extern int emu_powercut (struct emu *e, const char *source, struct fm_err *err);

/* The machine dies: the power goes as with emu_powercut - now (after 0),
 * or right after the `after`-th write from now - and stays off: every
 * request fails with EIO, taking no time, until emu_poweron.  -1 with
 * err if it is off already.
 */
extern int emu_poweroff (struct emu *e, uint64_t after, const char *source,
                         struct fm_err *err);

/* The power comes back (and an armed poweroff is forgotten); the disk
 * holds what was durable.  Whether it was off.
 */
extern bool emu_poweron (struct emu *e);

/* Control `mark NAME`: a mark in the write log (if there is one), where
 * the writes served so far end.  -1 with err if the log cannot take it.
 */
extern int emu_mark (struct emu *e, const char *name, struct fm_err *err);

/* Inject a fault (control `inject`); see faultmodels/faults.h. */
extern int emu_inject (struct emu *e, enum fm_fault_kind kind, uint64_t offset,
                       uint64_t length, const char *source, struct fm_err *err);

/* Extents: runs of data and holes (cached writes count as data). */
extern int emu_extents (struct emu *e, uint64_t count, uint64_t offset,
                        store_extent_fn *fn, void *opaque, struct fm_err *err);

/* The virtual clock now, as the next request would see it. */
extern uint64_t emu_virtual_now (struct emu *e);

/* Which store holds the bytes: "ram-flat", "ram-hashed" or "file". */
extern const char *emu_store_name (const struct emu *e);

/* Counters as the stats JSON object (one line; its members are listed in
 * nbdkit-futuredisk-plugin(1), "stats=FILE").
 */
extern void emu_stats_json (struct emu *e, FILE *fp);

/* Write the stats object to a file (atomically, by rename). */
extern int emu_write_stats (struct emu *e, const char *path,
                            struct fm_err *err);

/* Zero the counters (the clock and the disk's contents stay). */
extern void emu_stats_clear (struct emu *e);

/* Runtime settings: think=real|zero|cpu, time=virtual|real|scale:F.
 * Returns 0 or -1 with err naming the key or value.
 */
extern int emu_set (struct emu *e, const char *key, const char *value,
                    struct fm_err *err);

/* Parse time= and think= values; shared by the plugin's config and set. */
extern int emu_parse_time (const char *value, double *scale,
                           struct fm_err *err);
enum emu_think {
  EMU_THINK_REAL,
  EMU_THINK_ZERO,
  EMU_THINK_CPU
};
extern int emu_parse_think (const char *value, enum emu_think *think,
                            struct fm_err *err);

#endif
