/* futuredisk — nbdplugin: the emulated disk (see emu.h).
 *
 * The virtual clock.  In virtual mode (time_scale 0) the drive never
 * sleeps: a request arrives at the virtual time of the latest completion
 * replied so far plus the wall time the client spent since that reply (its
 * think time; none with think=zero; with think=cpu the CPU time its cgroup
 * used since, over the host's speed), and the model says when it
 * completes.
 * Requests sent together (before the replies they could wait for) arrive
 * together and share the drive's queue.  So mark
 * differences predict the wall time the workload would take on the
 * emulated disk.  With time_scale F > 0 virtual time runs at 1/F of wall
 * time from the start, and each reply waits until the wall clock reaches
 * F times its modelled completion (real mode is F = 1).
 *
 * The queue.  Every request goes through the drive's queue
 * (fm_disk_enqueue) and waits for the drive to pick it; when the drive
 * decides is the scheduler's (scheduler.h), and the picked requests' work
 * under the lock (their `served` step: faults, the write cache, the
 * counters) is serve's here.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "client.h"
#include "errmsg.h"
#include "emu.h"
#include "writelog.h"
#include "faults.h"
#include "faultmodels/rng.h"
#include "faultmodels/units.h"
#include "json.h"
#include "monotonic.h"
#include "scheduler.h"
#include "wcache.h"

struct counters {
  uint64_t reads, writes, flushes, trims, zeroes, caches;
  uint64_t bytes_read, bytes_written;
  uint64_t busy_ns, queue_ns, seeks, seek_ns, rotation_ns, transfer_ns;
  uint64_t destage_ns, cache_hits, cached_writes;
  uint64_t refused; /* requests failed while the power was off */
};

struct emu {
  struct fm_profile profile;
  uint64_t seed;
  uint64_t (*wall_ns) (void);
  int (*sleep_ns) (uint64_t ns);

  pthread_mutex_t lock; /* everything below */
  struct fm_disk *disk;
  struct wcache *wc;
  struct store *store; /* internally synchronized */
  struct dfaults *faults;

  double scale;
  enum emu_think think;
  /* think=cpu: the checker cgroup's cpu.stat (or -1), the host's speed,
   * and the last host time read (a failed read repeats it: no time
   * passes rather than a jump); atomic.
   */
  int cpu_fd;
  double host_speed;
  uint64_t host_last;
  uint64_t v0, w0; /* scaled modes: v = v0 + (W - w0) / scale */
  /* Virtual mode: the latest completion and the wall time of its reply.
   * w_anchor is also stored without the lock when a reply goes (replied),
   * so it is accessed atomically.
   */
  uint64_t v_anchor, w_anchor;
  uint64_t last_arrival;

  struct sched *sched;   /* when the drive decides (scheduler.h) */
  struct client *client; /* the client it waits for (client.h) */

  double torn;
  uint64_t powercut_after, powercuts, writes_seen;
  /* poweroff: the write count at which the power goes for good (0: not
   * armed), and whether it is off (every request fails until poweron).
   */
  uint64_t off_at;
  bool off;
  struct fd_wlog *wlog;  /* writelog=FILE, or NULL */
  uint64_t rot_injected; /* inject rot so far: each flips its own bit */

  struct counters c;
  int destage_errno; /* set by the destage hook; 0 = fine */
  struct fm_err destage_err;
};

int
emu_parse_time (const char *value, double *scale, struct fm_err *err)
{
  struct fm_err e;

  if (strcmp (value, "virtual") == 0)
    *scale = 0;
  else if (strcmp (value, "real") == 0)
    *scale = 1;
  else if (strncmp (value, "scale:", 6) == 0) {
    if (fm_parse_double ("time", value + 6, 1e-6, 1e6, scale, &e) == -1) {
      return fm_fail (err,
                      "time: '%s': the factor after scale: must be a number in "
                      "[1e-06, 1e+06]",
                      value);
    }
  } else {
    return fm_fail (err, "time: '%s' is not virtual, real or scale:F", value);
  }
  return 0;
}

int
emu_parse_think (const char *value, enum emu_think *think, struct fm_err *err)
{
  if (strcmp (value, "real") == 0)
    *think = EMU_THINK_REAL;
  else if (strcmp (value, "zero") == 0)
    *think = EMU_THINK_ZERO;
  else if (strcmp (value, "cpu") == 0)
    *think = EMU_THINK_CPU;
  else {
    return fm_fail (err, "think: '%s' is not real, zero or cpu", value);
  }
  return 0;
}

/* think=cpu: the checker's cgroup's cpu.stat, opened once (read afresh
 * at every arrival and reply).
 */
static int
open_cpu_stat (struct emu *e, const struct emu_config *cfg, struct fm_err *err)
{
  char path[4096];
  uint64_t us;

  e->host_speed = cfg->host_speed > 0 ? cfg->host_speed : 1;
  if (cfg->cgroup == NULL) {
    if (cfg->think_cpu)
      return fm_fail (err, "think=cpu needs cgroup=DIR: the checker's cgroup");
    return 0;
  }
  snprintf (path, sizeof path, "%s/cpu.stat", cfg->cgroup);
  if ((e->cpu_fd = open (path, O_RDONLY | O_CLOEXEC)) == -1)
    return fm_fail (err, "cgroup: %s: %s", path, fd_strerror (errno));
  if (fd_cpu_stat_read (e->cpu_fd, &us, err) == -1)
    return fm_fail (err, "cgroup: %s: %s", path, err->msg);
  return 0;
}

/* The host's clock the client's think time is read on (w_anchor is its
 * reading at the latest reply): the wall clock (think=real), or the CPU
 * time of the checker's cgroup over the host's speed (think=cpu).  With
 * think=cpu the clock moves only while a process of the checker runs on
 * a CPU: nbdkit's, nbdfuse's and the loop device's threads, and other
 * load on the machine, are not in the cgroup.  Several requests in
 * flight: the think time runs from the reply of the latest completion,
 * as with think=real, so CPU the checker spent while a request it sent
 * was still in the drive overlapped that request and is not charged
 * again; a synchronous checker (e2fsck's passes) uses no CPU while it
 * waits, so what it is charged does not depend on when the replies go.
 */
static uint64_t
host_now (struct emu *e, uint64_t wall)
{
  struct fm_err err;
  uint64_t us, h;

  if (e->think != EMU_THINK_CPU || e->cpu_fd == -1)
    return wall;
  if (fd_cpu_stat_read (e->cpu_fd, &us, &err) == -1)
    return __atomic_load_n (&e->host_last, __ATOMIC_RELAXED);
  h = (uint64_t)((double)us * 1000.0 / e->host_speed);
  __atomic_store_n (&e->host_last, h, __ATOMIC_RELAXED);
  return h;
}

/* The model wrote cached data to the media: so do we. */
static void
destaged (void *opaque, uint64_t offset, uint64_t length)
{
  struct emu *e = opaque;

  if (wcache_commit (e->wc, length, offset) == -1 && e->destage_errno == 0) {
    e->destage_errno = errno ? errno : EIO;
    snprintf (e->destage_err.msg, sizeof e->destage_err.msg,
              "writing cached data at %" PRIu64 " to the store: %s", offset,
              e->store->err.msg);
  }
}

/* The disk's faults, as the config says. */
static struct dfaults *
faults_of (const struct emu_config *cfg, struct fm_err *err)
{
  struct dfaults_config fc = {.log_path = cfg->faultlog_path,
                              .sector = cfg->profile.sector,
                              .disk_size = cfg->profile.capacity,
                              .seed = cfg->seed,
                              .set = cfg->faults};

  /* A mean track: what the disk moves in one revolution. */
  fc.track_bytes = fm_profile_rotating (&cfg->profile)
                       ? (uint64_t)((double)cfg->profile.bandwidth *
                                    fm_profile_rev_ns (&cfg->profile) / 1e9)
                       : 1 << 20;
  /* A retry waits for the sector to come round again; flash re-reads
   * the page (with shifted read levels) [E].
   */
  fc.retry_ns = fm_profile_rotating (&cfg->profile)
                    ? (uint64_t)fm_profile_rev_ns (&cfg->profile)
                    : cfg->profile.read_latency_ns;
  return dfaults_new (&fc, err);
}

static void serve (void *opaque, struct sched_waiter *w,
                   const struct fm_timing *t);
static uint64_t clock_now (struct emu *e, uint64_t wall);
static uint64_t deadline (const struct emu *e, uint64_t done);

static uint64_t
virtual_at (void *opaque, uint64_t wall)
{
  return clock_now (opaque, wall);
}

static uint64_t
wall_at (void *opaque, uint64_t v)
{
  return deadline (opaque, v);
}

static const struct sched_ops sched_ops = {serve, virtual_at, wall_at};

/* The drive's decisions: a queue reorders only on a rotating drive with
 * a window and SPTF.
 */
static struct sched *
sched_of (struct emu *e, const struct emu_config *cfg)
{
  struct sched_config sc = {.disk = e->disk,
                            .lock = &e->lock,
                            .reorders = fm_profile_rotating (&cfg->profile) &&
                                        cfg->profile.queue_depth > 1 &&
                                        cfg->caches.queue == FM_QUEUE_SPTF,
                            .window = cfg->profile.queue_depth,
                            .grace_ns = cfg->grace_ns,
                            .wall_ns = cfg->wall_ns,
                            .ops = &sched_ops,
                            .opaque = e,
                            .client = e->client};
  struct sched *s = sched_new (&sc);

  if (s)
    sched_set_scale (s, cfg->time_scale);
  return s;
}

struct emu *
emu_new (const struct emu_config *cfg, struct fm_err *err)
{
  struct emu *e = calloc (1, sizeof *e);
  /* The cache's memory, once: as much as the model can hold dirty (a
   * flash drive's model never caches writes).
   */
  uint64_t cache_bytes =
      fm_profile_rotating (&cfg->profile) && cfg->caches.write_cache
          ? cfg->profile.cache_bytes
          : 0;

  if (e == NULL) {
    fm_fail (err, "out of memory");
    return NULL;
  }
  e->profile = cfg->profile;
  e->seed = cfg->seed;
  e->wall_ns = cfg->wall_ns ? cfg->wall_ns : fd_monotonic_ns;
  e->sleep_ns = cfg->sleep_ns;
  e->scale = cfg->time_scale;
  e->think = cfg->think_zero  ? EMU_THINK_ZERO
             : cfg->think_cpu ? EMU_THINK_CPU
                              : EMU_THINK_REAL;
  e->cpu_fd = -1;
  e->torn = cfg->faults.torn;
  e->powercut_after = cfg->powercut_after;
  pthread_mutex_init (&e->lock, NULL);
  if (open_cpu_stat (e, cfg, err) == -1)
    goto fail;
  e->disk = fm_disk_new (&cfg->profile, cfg->seed, &cfg->caches, err);
  if (e->disk == NULL)
    goto fail;
  e->store = cfg->store_path
                 ? store_file_open (cfg->store_path, cfg->profile.capacity,
                                    cfg->profile.name, err)
                 : store_ram_new (cfg->profile.capacity, cache_bytes > 0, err);
  if (e->store == NULL)
    goto fail;
  e->faults = faults_of (cfg, err);
  if (e->faults == NULL ||
      (cfg->bad_path && dfaults_load (e->faults, cfg->bad_path, err) == -1))
    goto fail;
  if (cfg->writelog_path &&
      (e->wlog = fd_wlog_create (cfg->writelog_path, cfg->profile.capacity,
                                 err)) == NULL)
    goto fail;
  e->wc = wcache_new (e->store, cache_bytes);
  if (e->wc == NULL) {
    fm_fail (err, "write cache: cannot have %" PRIu64 " bytes: %s",
             cfg->profile.cache_bytes, fd_strerror (errno));
    goto fail;
  }
  fm_disk_on_destage (e->disk, destaged, e);
  if ((e->client = client_new (cfg->cgroup, err)) == NULL)
    goto fail;
  if ((e->sched = sched_of (e, cfg)) == NULL) {
    fm_fail (err, "out of memory");
    goto fail;
  }
  e->w0 = e->wall_ns ();
  e->w_anchor = host_now (e, e->w0);
  return e;

fail:
  emu_free (e);
  return NULL;
}

void
emu_free (struct emu *e)
{
  if (e == NULL)
    return;
  if (e->wc) {
    wcache_commit (e->wc, e->profile.capacity, 0);
    wcache_free (e->wc);
  }
  if (e->store) {
    e->store->ops->flush (e->store);
    e->store->ops->close (e->store);
  }
  sched_free (e->sched);
  client_free (e->client);
  fm_disk_free (e->disk);
  dfaults_free (e->faults);
  {
    struct fm_err err;
    /* At exit nobody is left to fail a request for it: say it. */
    if (fd_wlog_close (e->wlog, &err) == -1)
      fprintf (stderr, "futuredisk: %s\n", err.msg);
  }
  if (e->cpu_fd != -1)
    close (e->cpu_fd);
  pthread_mutex_destroy (&e->lock);
  free (e);
}

/* ---- the clock (call with the lock held) ---- */

static uint64_t
clock_now (struct emu *e, uint64_t wall)
{
  uint64_t v;

  if (e->scale > 0)
    v = e->v0 + (uint64_t)((double)(wall - e->w0) / e->scale);
  else if (e->think == EMU_THINK_ZERO)
    v = e->v_anchor;
  else {
    uint64_t w = __atomic_load_n (&e->w_anchor, __ATOMIC_RELAXED);
    uint64_t h = host_now (e, wall);
    v = e->v_anchor + (h > w ? h - w : 0);
  }
  return v > e->last_arrival ? v : e->last_arrival;
}

/* Re-anchor at the current virtual time (a mode change, or start). */
static void
clock_rebase (struct emu *e, uint64_t wall)
{
  uint64_t v = clock_now (e, wall);

  e->v0 = e->last_arrival = v;
  __atomic_store_n (&e->v_anchor, v, __ATOMIC_RELAXED);
  e->w0 = wall;
  __atomic_store_n (&e->w_anchor, host_now (e, wall), __ATOMIC_RELAXED);
}

const char *
emu_store_name (const struct emu *e)
{
  return e->store->ops->name;
}

uint64_t
emu_virtual_now (struct emu *e)
{
  uint64_t v;

  pthread_mutex_lock (&e->lock);
  v = clock_now (e, e->wall_ns ());
  pthread_mutex_unlock (&e->lock);
  return v;
}

/* Wall time a reply completing at virtual time done waits for (scaled
 * modes), or 0.  Lock held.
 */
static uint64_t
deadline (const struct emu *e, uint64_t done)
{
  return e->scale > 0 ? e->w0 + (uint64_t)((double)(done - e->v0) * e->scale)
                      : 0;
}

/* A bit rots on the media (dfaults_advance's callback).  A store that
 * cannot take the change leaves the media right; the log still lists the
 * rot, so the failure is recorded for the next request.  Lock held.
 */
static void
rot (void *opaque, uint64_t offset, unsigned bit)
{
  struct emu *e = opaque;
  unsigned char b;

  if (e->store->ops->read (e->store, &b, 1, offset) == -1)
    return;
  b ^= (unsigned char)(1u << bit);
  if (e->store->ops->write (e->store, &b, 1, offset) == -1 &&
      e->destage_errno == 0) {
    e->destage_errno = errno ? errno : EIO;
    e->destage_err = e->store->err;
  }
}

/* A failed destage fails the request that caused it.  Lock held. */
static int
destage_failed (struct emu *e, struct fm_err *err)
{
  if (e->destage_errno == 0)
    return 0;
  errno = e->destage_errno;
  *err = e->destage_err;
  e->destage_errno = 0;
  return -1;
}

/* The request took `extra` ns longer than the model priced (error
 * recovery, detours to spares): the drive stays busy for it.  Lock held.
 */
static void
penalize (struct emu *e, struct emu_result *r, uint64_t extra)
{
  r->done_ns = fm_disk_extend (e->disk, extra);
  r->deadline_ns = deadline (e, r->done_ns);
  e->c.busy_ns += extra;
}

/* Every run of reallocated sectors a request touches costs a detour to
 * the spare area.  Lock held.
 */
static void
detours (struct emu *e, uint64_t count, uint64_t offset, struct emu_result *r)
{
  uint64_t runs = dfaults_remapped_runs (e->faults, offset, count);

  if (runs)
    penalize (e, r, runs * fm_disk_spare_detour (e->disk, offset));
}

/* A read that runs into a faulty sector fails, after the drive's error
 * recovery, and one that meets a weak sector on the media takes retries:
 * the request (and the drive) pay for both.  Lock held.
 */
static int
read_faults (struct emu *e, uint64_t count, uint64_t offset,
             struct emu_result *r, struct fm_err *err)
{
  uint64_t extra;
  int ret = dfaults_read (e->faults, r->arrival_ns, offset, count,
                          !r->cache_hit, &extra, err);

  if (extra)
    penalize (e, r, extra);
  if (ret == 0)
    detours (e, count, offset, r);
  return ret;
}

static int
store_failed (struct emu *e, struct fm_err *err)
{
  int saved = errno ? errno : EIO;

  *err = e->store->err;
  errno = saved;
  return -1;
}

struct cut {
  struct emu *e;
  uint64_t now;
  int failed; /* errno of a store failure while keeping a torn prefix */
};

/* One dirty extent at the moment of the cut (fm_disk_powercut's
 * callback): torn with chance `torn`, keeping a prefix of 1..n-1 sectors,
 * else lost whole.  Every lost byte range is in the log.
 */
static void
cut_extent (void *opaque, uint64_t offset, uint64_t length)
{
  struct cut *cut = opaque;
  struct emu *e = cut->e;
  uint64_t ss = e->profile.sector, n = length / ss, keep = 0;
  char detail[96];

  if (e->torn > 0 && n >= 2 &&
      fm_unit (fm_hash (e->seed, FM_STREAM_TORN, offset, e->powercuts)) <
          e->torn) {
    keep = 1 + fm_below (fm_hash (e->seed, FM_STREAM_TORN, offset,
                                  e->powercuts + (1ULL << 63)),
                         n - 1);
    if (wcache_commit (e->wc, keep * ss, offset) == -1 && !cut->failed)
      cut->failed = errno ? errno : EIO;
    snprintf (detail, sizeof detail,
              "torn: the first %" PRIu64 " of %" PRIu64 " sectors survived",
              keep, n);
    dfaults_record (e->faults, cut->now, FM_FAULT_TORN_WRITE, offset, length,
                    detail);
  }
  snprintf (detail, sizeof detail, "lost: acknowledged, never flushed");
  dfaults_record (e->faults, cut->now, FM_FAULT_POWERCUT, offset + keep * ss,
                  length - keep * ss, detail);
  wcache_discard (e->wc, length - keep * ss, offset + keep * ss);
}

/* Lock held. */
static int
powercut (struct emu *e, const char *source, struct fm_err *err)
{
  struct cut cut = {e, clock_now (e, e->wall_ns ()), 0};
  char detail[128];

  snprintf (detail, sizeof detail, "%s: %" PRIu64 " dirty bytes in the cache",
            source, wcache_dirty_bytes (e->wc));
  dfaults_record (e->faults, cut.now, FM_FAULT_POWERCUT, 0, 0, detail);
  fm_disk_powercut (e->disk, cut_extent, &cut);
  /* The model's sectors cover every cached block; nothing may survive. */
  wcache_discard (e->wc, e->profile.capacity, 0);
  e->powercuts++;
  if (cut.failed) {
    errno = cut.failed;
    return store_failed (e, err);
  }
  return 0;
}

int
emu_powercut (struct emu *e, const char *source, struct fm_err *err)
{
  int r;

  pthread_mutex_lock (&e->lock);
  r = powercut (e, source, err);
  pthread_mutex_unlock (&e->lock);
  return r;
}

/* The power goes and stays off.  Lock held. */
static int
switch_off (struct emu *e, const char *source, struct fm_err *err)
{
  int r = powercut (e, source, err);

  e->off = true;
  e->off_at = 0;
  return r;
}

int
emu_poweroff (struct emu *e, uint64_t after, const char *source,
              struct fm_err *err)
{
  int r = 0;

  pthread_mutex_lock (&e->lock);
  if (e->off)
    r = fm_fail (err, "the power is off already");
  else if (after == 0)
    r = switch_off (e, source, err);
  else
    e->off_at = e->writes_seen + after;
  pthread_mutex_unlock (&e->lock);
  return r;
}

bool
emu_poweron (struct emu *e)
{
  bool was;

  pthread_mutex_lock (&e->lock);
  was = e->off;
  e->off = false;
  e->off_at = 0;
  pthread_mutex_unlock (&e->lock);
  return was;
}

/* ---- the request path ---- */

/* One request on its way through the drive. */
struct job {
  enum fm_op op;
  bool fua;
  uint64_t count, offset;
  void *buf;         /* pread: filled; pwrite: the data */
  uint64_t *counter; /* which request counter it bumps */
  uint64_t *bytes;   /* and which byte counter, if any */
  int (*served) (struct emu *e, struct job *j, const struct fm_timing *t);
  struct emu_result *r;
  struct fm_err *err;
  int ret;       /* the served step's result */
  bool refused;  /* the power was off: it never ran */
  bool arriving; /* counted as arriving since before its store pages */
  /* What the served step leaves for the work outside the lock. */
  bool copied, apply, cached;
  uint64_t at, nflips, *flips;
  struct sched_waiter w; /* while in the drive */
};

/* The power is off (poweroff): j fails and never completes.  Lock held. */
static void
refuse (struct emu *e, struct job *j)
{
  e->c.refused++;
  j->refused = true;
  j->ret = fm_fail (j->err, "the power is off (poweroff)");
}

/* The drive picked j: account for it and run its served step (the
 * scheduler's serve).  Lock held.
 */
static void
serve (void *opaque, struct sched_waiter *w, const struct fm_timing *t)
{
  struct emu *e = opaque;
  struct job *j = (struct job *)((char *)w - offsetof (struct job, w));
  struct emu_result *r = j->r;

  /* Queued when the power went (poweroff): it never completes. */
  if (e->off) {
    refuse (e, j);
    return;
  }

  r->done_ns = t->done_ns;
  r->cache_hit = t->cache_hit;
  r->deadline_ns = deadline (e, t->done_ns);
  (*j->counter)++;
  if (j->bytes)
    *j->bytes += j->count;
  e->c.busy_ns += t->done_ns - t->start_ns;
  e->c.queue_ns += t->queue_ns;
  e->c.seeks += t->seeks;
  e->c.seek_ns += t->seek_ns;
  e->c.rotation_ns += t->rotation_ns;
  e->c.transfer_ns += t->transfer_ns;
  e->c.destage_ns += t->destage_ns;
  e->c.cache_hits += t->cache_hit;
  e->c.cached_writes += t->write_cached;
  j->cached = t->write_cached;
  j->ret = destage_failed (e, j->err);
  if (j->ret == 0)
    j->ret = j->served (e, j, t);
}

static bool
drive (struct emu *e, struct job *j)
{
  struct fm_request rq = {.op = j->op,
                          .flags = j->fua ? FM_REQ_FUA : 0,
                          .offset = j->offset,
                          .length = j->count};
  rq.arrival_ns = e->last_arrival = clock_now (e, e->wall_ns ());
  dfaults_advance (e->faults, rq.arrival_ns, rot, e);
  j->r->arrival_ns = rq.arrival_ns;
  j->r->done_ns = j->r->deadline_ns = 0;
  fm_disk_enqueue (e->disk, &rq, (uintptr_t)&j->w);
  return sched_wait (e->sched, &j->w);
}

/* The reply is about to go: in the scaled modes at the request's modelled
 * completion; in virtual mode the client's think time starts now, from
 * this request's completion if it is the latest.  Until then the request
 * counts as in flight: others may still overtake it.  Returns ret, or -1
 * if the wait was cut short by shutdown.
 */
static int
replied (struct emu *e, const struct emu_result *r, int ret, struct fm_err *err)
{
  uint64_t v, wall;

  /* A failure the drive took time over (error recovery) is late too: a
   * reply at once would hand its time to the next request's wait.
   */
  if (r->deadline_ns && e->sleep_ns &&
      r->deadline_ns > (wall = e->wall_ns ()) &&
      e->sleep_ns (r->deadline_ns - wall) == -1) {
    fm_fail (err, "interrupted by shutdown");
    errno = ESHUTDOWN;
    ret = -1;
  }
  sched_leave (e->sched);
  if (e->scale > 0 || r->done_ns == 0)
    return ret;
  /* No lock: a racing reply of an older request only moves the start of
   * the think time by the length of the race.
   */
  v = __atomic_load_n (&e->v_anchor, __ATOMIC_RELAXED);
  while (r->done_ns >= v)
    if (__atomic_compare_exchange_n (&e->v_anchor, &v, r->done_ns, false,
                                     __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
      __atomic_store_n (&e->w_anchor, host_now (e, e->wall_ns ()),
                        __ATOMIC_RELAXED);
      break;
    }
  return ret;
}

/* Run j through the drive: the locked part.  Returns j->ret. */
static int
run (struct emu *e, struct job *j)
{
  bool locked = true;

  /* On its way in until it holds the lock: the drive's watch cannot see
   * a thread asleep on it (client.h).
   */
  if (!j->arriving)
    sched_arriving (e->sched);
  pthread_mutex_lock (&e->lock);
  sched_arrived (e->sched);
  /* A disk without power never sees the request: no time passes. */
  if (!e->off)
    locked = drive (e, j);
  else {
    sched_enter (e->sched);
    j->r->done_ns = j->r->deadline_ns = 0;
    refuse (e, j);
  }
  if (locked)
    pthread_mutex_unlock (&e->lock);
  if (j->refused)
    errno = EIO;
  return j->ret;
}

static int
read_served (struct emu *e, struct job *j, const struct fm_timing *t)
{
  int ret;

  ret = read_faults (e, j->count, j->offset, j->r, j->err);
  if (ret == 0)
    j->nflips = dfaults_flips (e->faults, j->r->arrival_ns, j->offset, j->count,
                               &j->flips);
  /* Cached data must be read with the cache held still. */
  if (ret == 0 && wcache_intersects (e->wc, j->count, j->offset)) {
    j->copied = true;
    if (e->store->ops->read (e->store, j->buf, j->count, j->offset) == -1)
      ret = store_failed (e, j->err);
    else
      wcache_overlay (e->wc, j->buf, j->count, j->offset);
  }
  return ret;
}

int
emu_pread (struct emu *e, void *buf, uint64_t count, uint64_t offset,
           struct emu_result *r, struct fm_err *err)
{
  struct job j = {.op = FM_OP_READ,
                  .count = count,
                  .offset = offset,
                  .buf = buf,
                  .counter = &e->c.reads,
                  .bytes = &e->c.bytes_read,
                  .served = read_served,
                  .r = r,
                  .err = err};
  uint64_t i;
  int ret = run (e, &j);

  if (ret == 0 && !j.copied &&
      e->store->ops->read (e->store, buf, count, offset) == -1)
    ret = store_failed (e, err);
  /* Stuck bits read as their stuck value whatever was written. */
  if (ret == 0 && dfaults_has_stuck (e->faults)) {
    pthread_mutex_lock (&e->lock);
    dfaults_stuck (e->faults, r->arrival_ns, buf, offset, count);
    pthread_mutex_unlock (&e->lock);
  }
  /* Silent corruption on the way out: the media keeps the right bits. */
  for (i = 0; ret == 0 && i < j.nflips; i++)
    ((unsigned char *)buf)[j.flips[i] / 8] ^= 1u << (j.flips[i] % 8);
  free (j.flips);
  return replied (e, r, ret, err);
}

/* The write log gets each command in the order the drive served it (so
 * a flush in the log covers every write before it).  Lock held.
 */
static int
logged (struct emu *e, enum fd_wlog_kind kind, const struct job *j)
{
  if (e->wlog == NULL)
    return 0;
  if (fd_wlog_append (e->wlog, kind, j->fua ? FD_WLOG_FUA : 0, j->offset,
                      kind == FD_WLOG_FLUSH ? 0 : j->count,
                      kind == FD_WLOG_WRITE ? j->buf : NULL, j->err) == -1) {
    errno = EIO;
    return -1;
  }
  return 0;
}

static int
write_served (struct emu *e, struct job *j, const struct fm_timing *t)
{
  int ret = 0;

  j->apply =
      dfaults_fate (e->faults, j->r->arrival_ns, j->offset, j->count, &j->at);
  if (j->apply)
    ret = dfaults_write (e->faults, j->r->arrival_ns, j->at, j->count, j->err);
  if (ret == 0 && j->apply)
    detours (e, j->count, j->at, j->r);
  if (ret == 0 && j->apply && j->cached) {
    if (wcache_write (e->wc, j->buf, j->count, j->at) == -1)
      ret = store_failed (e, j->err);
  } else if (ret == 0 && j->apply &&
             wcache_supersede (e->wc, j->count, j->at) == -1) {
    /* Straight to the media: older cached bytes there are superseded. */
    ret = store_failed (e, j->err);
  }
  /* powercut-after=N: the Nth write is acknowledged, then power goes. */
  if (ret == 0 && ++e->writes_seen == e->powercut_after)
    ret = powercut (e, "powercut-after", j->err);
  /* poweroff N: the Nth write from then on is acknowledged, then the
   * power goes for good.
   */
  if (ret == 0 && e->off_at && e->writes_seen == e->off_at)
    ret = switch_off (e, "poweroff", j->err);
  /* Acknowledged: into the write log (whatever the disk did with it). */
  if (ret == 0)
    ret = logged (e, FD_WLOG_WRITE, j);
  return ret;
}

int
emu_pwrite (struct emu *e, const void *buf, uint64_t count, uint64_t offset,
            bool fua, struct emu_result *r, struct fm_err *err)
{
  struct job j = {.op = FM_OP_WRITE,
                  .fua = fua,
                  .count = count,
                  .offset = offset,
                  .buf = (void *)buf,
                  .counter = &e->c.writes,
                  .bytes = &e->c.bytes_written,
                  .served = write_served,
                  .r = r,
                  .err = err};
  int ret;

  /* Fresh store pages are faulted in here, in parallel, rather than by
   * a destage under the lock, one thread at a time.
   */
  if (e->store->ops->prepare) {
    j.arriving = true;
    sched_arriving (e->sched);
    e->store->ops->prepare (e->store, count, offset);
  }
  ret = run (e, &j);

  if (ret == 0 && j.apply && !j.cached &&
      e->store->ops->write (e->store, buf, count, j.at) == -1)
    ret = store_failed (e, err);
  return replied (e, r, ret, err);
}

static int
flush_served (struct emu *e, struct job *j, const struct fm_timing *t)
{
  int ret = logged (e, FD_WLOG_FLUSH, j);

  if (ret == 0)
    ret = dfaults_write (e->faults, j->r->arrival_ns, 0, 0, j->err);

  /* The model destaged everything; nothing may stay volatile after a
   * flush, whatever rounding separated its sectors from our blocks.
   */
  if (ret == 0 && wcache_commit (e->wc, e->profile.capacity, 0) == -1)
    ret = store_failed (e, j->err);
  return ret;
}

int
emu_flush (struct emu *e, struct emu_result *r, struct fm_err *err)
{
  struct job j = {.op = FM_OP_FLUSH,
                  .counter = &e->c.flushes,
                  .served = flush_served,
                  .r = r,
                  .err = err};
  int ret = run (e, &j);

  if (ret == 0 && e->store->ops->flush (e->store) == -1)
    ret = store_failed (e, err);
  return replied (e, r, ret, err);
}

/* Trim and zero: the range reads as zeros and cached bytes there are
 * forgotten; trim (and zero with may-trim) leaves holes.
 */
static int
discard_served (struct emu *e, struct job *j, const struct fm_timing *t)
{
  int ret = logged (e, FD_WLOG_ZERO, j);

  if (ret == 0)
    ret = dfaults_write (e->faults, j->r->arrival_ns, j->offset, j->count,
                         j->err);

  if (ret == 0 && j->cached) {
    if (wcache_write (e->wc, NULL, j->count, j->offset) == -1)
      ret = store_failed (e, j->err);
  } else if (ret == 0) {
    /* Under the lock: a destage of older bytes must not land after. */
    if (wcache_supersede (e->wc, j->count, j->offset) == -1 ||
        e->store->ops->zero (e->store, j->count, j->offset,
                             j->op == FM_OP_TRIM) == -1)
      ret = store_failed (e, j->err);
  }
  return ret;
}

static int
discard_range (struct emu *e, enum fm_op op, uint64_t *counter, uint64_t count,
               uint64_t offset, bool fua, struct emu_result *r,
               struct fm_err *err)
{
  struct job j = {.op = op,
                  .fua = fua,
                  .count = count,
                  .offset = offset,
                  .counter = counter,
                  .served = discard_served,
                  .r = r,
                  .err = err};
  int ret = run (e, &j);

  return replied (e, r, ret, err);
}

int
emu_trim (struct emu *e, uint64_t count, uint64_t offset, bool fua,
          struct emu_result *r, struct fm_err *err)
{
  return discard_range (e, FM_OP_TRIM, &e->c.trims, count, offset, fua, r, err);
}

int
emu_zero (struct emu *e, uint64_t count, uint64_t offset, bool may_trim,
          bool fua, struct emu_result *r, struct fm_err *err)
{
  return discard_range (e, may_trim ? FM_OP_TRIM : FM_OP_ZERO, &e->c.zeroes,
                        count, offset, fua, r, err);
}

/* A drive prefetching into its buffer: a read without the transfer. */
static int
cache_served (struct emu *e, struct job *j, const struct fm_timing *t)
{
  return read_faults (e, j->count, j->offset, j->r, j->err);
}

int
emu_cache (struct emu *e, uint64_t count, uint64_t offset, struct emu_result *r,
           struct fm_err *err)
{
  struct job j = {.op = FM_OP_READ,
                  .count = count,
                  .offset = offset,
                  .counter = &e->c.caches,
                  .served = cache_served,
                  .r = r,
                  .err = err};
  int ret = run (e, &j);

  return replied (e, r, ret, err);
}

int
emu_mark (struct emu *e, const char *name, struct fm_err *err)
{
  int r = 0;

  pthread_mutex_lock (&e->lock);
  if (e->wlog)
    r = fd_wlog_append (e->wlog, FD_WLOG_MARK, 0, 0, strlen (name), name, err);
  pthread_mutex_unlock (&e->lock);
  return r;
}

int
emu_inject (struct emu *e, enum fm_fault_kind kind, uint64_t offset,
            uint64_t length, const char *source, struct fm_err *err)
{
  int r;

  pthread_mutex_lock (&e->lock);
  if (kind == FM_FAULT_ROT && length > 0 && offset < e->profile.capacity &&
      length <= e->profile.capacity - offset) {
    /* One bit of the range rots on the media, chosen by the seed and the
     * number of such injections: the log names it.
     */
    uint64_t bit =
        fm_below (fm_hash (e->seed, FM_STREAM_ROT, offset, ++e->rot_injected),
                  length * 8);
    char detail[256];

    snprintf (detail, sizeof detail, "%s: bit %u of the byte flipped at rest",
              source, (unsigned)(bit % 8));
    offset += bit / 8;
    length = 1;
    r = dfaults_inject (e->faults, clock_now (e, e->wall_ns ()), kind, offset,
                        length, detail, err);
    if (r == 0)
      rot (e, offset, (unsigned)(bit % 8));
  } else
    r = dfaults_inject (e->faults, clock_now (e, e->wall_ns ()), kind, offset,
                        length, source, err);
  pthread_mutex_unlock (&e->lock);
  return r;
}

/* ---- extents: the store's, with cached pages as data ---- */

struct merge {
  store_extent_fn *fn;
  void *opaque;
  uint64_t *pages; /* cached page offsets in the range, ascending */
  size_t n, i, alloc;
};

static int
collect_page (void *opaque, uint64_t page_offset)
{
  struct merge *m = opaque;

  if (m->n == m->alloc) {
    size_t na = m->alloc ? 2 * m->alloc : 64;
    uint64_t *np = realloc (m->pages, na * sizeof *np);
    if (np == NULL)
      return -1;
    m->pages = np;
    m->alloc = na;
  }
  m->pages[m->n++] = page_offset;
  return 0;
}

/* Split a hole of the store at the cached pages inside it. */
static int
merge_extent (void *opaque, uint64_t offset, uint64_t length, bool hole)
{
  struct merge *m = opaque;
  uint64_t end = offset + length;
  int rc;

  while (m->i < m->n && m->pages[m->i] + STORE_PAGE <= offset)
    m->i++;
  if (!hole)
    return m->fn (m->opaque, offset, length, false);
  while (offset < end) {
    uint64_t next;
    bool h;

    if (m->i < m->n && m->pages[m->i] <= offset) {
      next = m->pages[m->i] + STORE_PAGE;
      h = false;
      m->i++;
    } else {
      next = m->i < m->n && m->pages[m->i] < end ? m->pages[m->i] : end;
      h = true;
    }
    if (next > end)
      next = end;
    rc = m->fn (m->opaque, offset, next - offset, h);
    if (rc != 0)
      return rc;
    offset = next;
  }
  return 0;
}

int
emu_extents (struct emu *e, uint64_t count, uint64_t offset,
             store_extent_fn *fn, void *opaque, struct fm_err *err)
{
  struct merge m = {.fn = fn, .opaque = opaque};
  int ret = 0;

  pthread_mutex_lock (&e->lock);
  if (wcache_each_page (e->wc, count, offset, collect_page, &m) == -1) {
    fm_fail (err, "extents: out of memory");
    errno = ENOMEM;
    ret = -1;
  }
  pthread_mutex_unlock (&e->lock);
  if (ret == 0 &&
      e->store->ops->extents (e->store, count, offset, m.n ? merge_extent : fn,
                              m.n ? (void *)&m : opaque) == -1) {
    fm_fail (err, "extents: %s", e->store->err.msg);
    ret = -1;
  }
  free (m.pages);
  return ret;
}

/* ---- stats and settings ---- */

void
emu_stats_json (struct emu *e, FILE *fp)
{
  struct counters c;
  struct sched_stats ss;
  char dev[64];
  uint64_t v, dirty, stored, smr_bytes, smr_clean_ns, smr_bands;
  char *faults = NULL;
  size_t faults_len = 0;
  FILE *ff;
  bool off;

  pthread_mutex_lock (&e->lock);
  c = e->c;
  sched_stats (e->sched, &ss);
  snprintf (dev, sizeof dev, "%s", client_device (e->client));
  off = e->off;
  v = clock_now (e, e->wall_ns ());
  dirty = wcache_dirty_bytes (e->wc);
  fm_disk_smr_stats (e->disk, &smr_bytes, &smr_clean_ns, &smr_bands);
  ff = open_memstream (&faults, &faults_len);
  if (ff) {
    dfaults_json (e->faults, ff);
    fclose (ff);
  }
  pthread_mutex_unlock (&e->lock);
  stored = e->store->ops->bytes_stored (e->store);

  fprintf (fp, "{\"profile\": ");
  fd_json_string (fp, e->profile.name);
  fprintf (fp,
           ", \"smr_cache_bytes\": %" PRIu64 ", \"smr_clean_ns\": %" PRIu64
           ", \"smr_bands_cleaned\": %" PRIu64,
           smr_bytes, smr_clean_ns, smr_bands);
  fprintf (
      fp,
      ", \"size\": %" PRIu64 ", \"seed\": %" PRIu64 ", \"virtual_ns\": %" PRIu64
      ", \"busy_ns\": %" PRIu64 ", \"queue_ns\": %" PRIu64
      ", \"reads\": %" PRIu64 ", \"writes\": %" PRIu64 ", \"flushes\": %" PRIu64
      ", \"trims\": %" PRIu64 ", \"zeroes\": %" PRIu64 ", \"caches\": %" PRIu64
      ", \"bytes_read\": %" PRIu64 ", \"bytes_written\": %" PRIu64
      ", \"seeks\": %" PRIu64 ", \"seek_ns\": %" PRIu64
      ", \"rotation_ns\": %" PRIu64 ", \"transfer_ns\": %" PRIu64
      ", \"destage_ns\": %" PRIu64 ", \"cache_hits\": %" PRIu64
      ", \"cached_writes\": %" PRIu64 ", \"refused\": %" PRIu64
      ", \"power\": \"%s\", \"dirty_bytes\": %" PRIu64
      ", \"stored_bytes\": %" PRIu64 ", \"faults\": %s",
      e->profile.capacity, e->seed, v, c.busy_ns, c.queue_ns, c.reads, c.writes,
      c.flushes, c.trims, c.zeroes, c.caches, c.bytes_read, c.bytes_written,
      c.seeks, c.seek_ns, c.rotation_ns, c.transfer_ns, c.destage_ns,
      c.cache_hits, c.cached_writes, c.refused, off ? "off" : "on", dirty,
      stored, faults ? faults : "{}");
  fprintf (fp, ", \"device\": ");
  fd_json_string (fp, dev);
  fprintf (fp,
           ", \"decisions\": {\"picks\": %" PRIu64 ", \"watched\": %" PRIu64
           ", \"ahead\": %" PRIu64 ", \"unwatched\": %" PRIu64
           ", \"impatient\": %" PRIu64 "}}",
           ss.picks, ss.watched, ss.ahead, ss.picks - ss.watched - ss.ahead,
           ss.impatient);
  free (faults);
}

int
emu_write_stats (struct emu *e, const char *path, struct fm_err *err)
{
  char tmp[4096];
  FILE *fp;

  /* Write beside it and rename, so a reader never sees half a file. */
  snprintf (tmp, sizeof tmp, "%s.tmp", path);
  fp = fopen (tmp, "w");
  if (fp == NULL) {
    return fm_fail (err, "stats: %s: %s", tmp, fd_strerror (errno));
  }
  emu_stats_json (e, fp);
  fputc ('\n', fp);
  if (fclose (fp) == EOF || rename (tmp, path) == -1) {
    fm_fail (err, "stats: %s: %s", path, fd_strerror (errno));
    unlink (tmp);
    return -1;
  }
  return 0;
}

void
emu_stats_clear (struct emu *e)
{
  pthread_mutex_lock (&e->lock);
  memset (&e->c, 0, sizeof e->c);
  sched_stats_clear (e->sched);
  pthread_mutex_unlock (&e->lock);
}

int
emu_set (struct emu *e, const char *key, const char *value, struct fm_err *err)
{
  double scale = 1;
  enum emu_think think = EMU_THINK_REAL;

  if (strcmp (key, "time") == 0) {
    if (emu_parse_time (value, &scale, err) == -1)
      return -1;
    pthread_mutex_lock (&e->lock);
    clock_rebase (e, e->wall_ns ());
    e->scale = scale;
    sched_set_scale (e->sched, scale);
    pthread_mutex_unlock (&e->lock);
    return 0;
  }
  if (strcmp (key, "think") == 0) {
    if (emu_parse_think (value, &think, err) == -1)
      return -1;
    if (think == EMU_THINK_CPU && e->cpu_fd == -1)
      return fm_fail (err, "think: 'cpu' needs the plugin started with "
                           "cgroup=DIR");
    pthread_mutex_lock (&e->lock);
    clock_rebase (e, e->wall_ns ());
    e->think = think;
    /* The anchor on the new mode's host clock. */
    __atomic_store_n (&e->w_anchor, host_now (e, e->wall_ns ()),
                      __ATOMIC_RELAXED);
    pthread_mutex_unlock (&e->lock);
    return 0;
  }
  if (strcmp (key, "device") == 0 || strcmp (key, "relay") == 0) {
    int r;

    pthread_mutex_lock (&e->lock);
    r = key[0] == 'd' ? client_set_device (e->client, value, err)
                      : client_set_relay (e->client, value, err);
    pthread_mutex_unlock (&e->lock);
    return r;
  }
  return fm_fail (err,
                  "unknown setting '%s' (settable: time, think, device, "
                  "relay)",
                  key);
}
