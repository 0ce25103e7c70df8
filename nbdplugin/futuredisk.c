/* nbdkit-futuredisk-plugin: serve tomorrow's disk.
 *
 * The nbdkit side of the emulated disk: parameters, lifecycle and the NBD
 * callbacks, each a thin call into emu.c (the request path), store-*.c
 * (the bytes), wcache.c (the drive's volatile cache) and control.c (the
 * control socket).  See nbdkit-futuredisk-plugin(1).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "control.h"
#include "emu.h"
#include "host.h"
#include "faultmodels/faultset.h"
#include "faultmodels/units.h"
#include "load-profile.h"
#include "scheduler.h"

/* -D futuredisk.trace=1: log every request with its modelled times. */
NBDKIT_DLL_PUBLIC int futuredisk_debug_trace;

/* -D futuredisk.grace_us=N: how long virtual time waits for requests sent
 * together; a machine too loaded to send them within the default needs
 * more.
 */
NBDKIT_DLL_PUBLIC int futuredisk_debug_grace_us = SCHED_GRACE_NS / 1000;

static const char *profile_arg = "roadmap-2013"; /* profile=NAME|FILE */
static struct fm_profile profile;                /* loaded in config */
static bool profile_loaded;
static uint64_t size;              /* size=; 0 = the profile's capacity */
static uint64_t seed = 1;          /* seed= */
static double time_scale;          /* time=: 0 virtual, 1 real, F scale */
static enum emu_think think;       /* think=real|zero|cpu */
static const char *cgroup;         /* cgroup=DIR: the client; NULL = none */
static const struct fd_host *host; /* host=NAME; NULL = not given */
static int read_ahead = -1;        /* read-ahead=on|off; -1 = profile */
static int write_cache = -1;       /* write-cache=on|off; -1 = profile */
static enum fm_queue_policy queue_policy; /* queue=sptf|fifo */
static char *stats_path;                  /* stats=FILE, absolute */
static char *control_path;                /* control=SOCKET, absolute */
static char *store_path;                  /* store=FILE, absolute */
static char *base_path;                   /* base=FILE, absolute */
static char *faultlog_path;               /* faultlog=FILE, absolute */
static char *writelog_path;               /* writelog=FILE, absolute */
static char *bad_path;                    /* bad=FILE, absolute */
static uint64_t powercut_after; /* powercut-after=N writes; 0 = never */

/* Fault keys (faultmodels/faultset.h) as given, applied over the
 * profile's fault settings once the profile is known: a preset
 * (faults=) first, then the other keys, so the order on the command line
 * does not matter.
 */
static struct {
  const char *key, *value;
} fault_args[64];
static size_t n_fault_args;

/* Drive parameters (fm_profile_set_param: queue-depth=, ...), applied
 * over the profile once it is known, like the fault keys.
 */
static struct {
  const char *key, *value;
} drive_args[32];
static size_t n_drive_args;

static struct emu *emu;
static struct control *control;

static void
futuredisk_unload (void)
{
  free (stats_path);
  free (control_path);
  free (store_path);
  free (base_path);
  free (faultlog_path);
  free (writelog_path);
  free (bad_path);
}

static int
fault_arg (const char *key, const char *value)
{
  struct fm_faultset scratch;
  struct fm_err err;
  size_t i;

  /* Check the value now, so the error comes with its key at once. */
  fm_faultset_defaults (&scratch);
  if (fm_faultset_set (&scratch, key, value, &err) == -1) {
    nbdkit_error ("%s", err.msg);
    return -1;
  }
  for (i = 0; i < n_fault_args; i++)
    if (strcmp (fault_args[i].key, key) == 0)
      break;
  if (i == sizeof fault_args / sizeof fault_args[0]) {
    nbdkit_error ("%s: too many fault parameters", key);
    return -1;
  }
  fault_args[i].key = key;
  fault_args[i].value = value;
  if (i == n_fault_args)
    n_fault_args++;
  return 0;
}

static int
drive_arg (const char *key, const char *value)
{
  size_t i;

  for (i = 0; i < n_drive_args; i++)
    if (strcmp (drive_args[i].key, key) == 0)
      break;
  if (i == sizeof drive_args / sizeof drive_args[0]) {
    nbdkit_error ("%s: too many drive parameters", key);
    return -1;
  }
  drive_args[i].key = key;
  drive_args[i].value = value;
  if (i == n_drive_args)
    n_drive_args++;
  return 0;
}

static int
apply_drive_args (struct fm_profile *p)
{
  struct fm_err err;
  size_t i;

  for (i = 0; i < n_drive_args; i++) {
    if (fm_profile_set_param (p, drive_args[i].key, drive_args[i].value,
                              &err) == -1 ||
        fm_profile_validate (p, &err) == -1) {
      nbdkit_error ("%s=%s: %s", drive_args[i].key, drive_args[i].value,
                    err.msg);
      return -1;
    }
  }
  return 0;
}

static int
apply_fault_args (struct fm_faultset *set)
{
  struct fm_err err;
  size_t i;
  int pass;

  for (pass = 0; pass < 2; pass++)
    for (i = 0; i < n_fault_args; i++) {
      if ((strcmp (fault_args[i].key, "faults") == 0) != (pass == 0))
        continue;
      if (fm_faultset_set (set, fault_args[i].key, fault_args[i].value, &err) ==
          -1) {
        nbdkit_error ("%s", err.msg);
        return -1;
      }
    }
  return 0;
}

static int
parse_onoff (const char *key, const char *value, int *out)
{
  int r = nbdkit_parse_bool (value);

  if (r == -1) {
    nbdkit_error ("%s: '%s' is not on or off", key, value);
    return -1;
  }
  *out = r;
  return 0;
}

/* A path parameter, made absolute now: nbdkit changes directory later. */
static int
parse_path (const char *key, const char *value, char **out)
{
  if (*value == '\0') {
    nbdkit_error ("%s: empty path", key);
    return -1;
  }
  free (*out);
  *out = nbdkit_absolute_path (value);
  return *out ? 0 : -1;
}

/* The keys of the virtual clock: how time passes and whose think time
 * counts.
 */
static bool
is_clock_key (const char *key)
{
  return strcmp (key, "time") == 0 || strcmp (key, "think") == 0 ||
         strcmp (key, "cgroup") == 0 || strcmp (key, "host") == 0;
}

static int
config_clock (const char *key, const char *value)
{
  struct fm_err err;
  int r = 0;

  if (strcmp (key, "time") == 0)
    r = emu_parse_time (value, &time_scale, &err);
  else if (strcmp (key, "think") == 0)
    r = emu_parse_think (value, &think, &err);
  else if (strcmp (key, "cgroup") == 0)
    cgroup = value;
  else if ((host = fd_host_find ("host", value, &err)) == NULL)
    r = -1;
  if (r == -1)
    nbdkit_error ("%s", err.msg);
  return r;
}

static int
futuredisk_config (const char *key, const char *value)
{
  struct fm_err err;

  if (strcmp (key, "profile") == 0) {
    profile_arg = value;
    if (fd_load_profile (value, &profile, &err) == -1) {
      nbdkit_error ("profile: %s", err.msg);
      return -1;
    }
    profile_loaded = true;
  } else if (strcmp (key, "size") == 0) {
    if (fm_parse_size ("size", value, &size, &err) == -1) {
      nbdkit_error ("%s", err.msg);
      return -1;
    }
    if (size == 0) {
      nbdkit_error ("size: must be positive");
      return -1;
    }
  } else if (strcmp (key, "seed") == 0) {
    if (fm_parse_uint ("seed", value, 0, UINT64_MAX, &seed, &err) == -1) {
      nbdkit_error ("%s", err.msg);
      return -1;
    }
  } else if (is_clock_key (key))
    return config_clock (key, value);
  else if (strcmp (key, "read-ahead") == 0)
    return parse_onoff (key, value, &read_ahead);
  else if (strcmp (key, "write-cache") == 0)
    return parse_onoff (key, value, &write_cache);
  else if (strcmp (key, "queue") == 0) {
    if (strcmp (value, "sptf") == 0)
      queue_policy = FM_QUEUE_SPTF;
    else if (strcmp (value, "fifo") == 0)
      queue_policy = FM_QUEUE_FIFO;
    else {
      nbdkit_error ("queue: '%s' is not sptf or fifo", value);
      return -1;
    }
  } else if (strcmp (key, "stats") == 0)
    return parse_path (key, value, &stats_path);
  else if (strcmp (key, "control") == 0)
    return parse_path (key, value, &control_path);
  else if (strcmp (key, "store") == 0)
    return parse_path (key, value, &store_path);
  else if (strcmp (key, "base") == 0)
    return parse_path (key, value, &base_path);
  else if (strcmp (key, "faultlog") == 0)
    return parse_path (key, value, &faultlog_path);
  else if (strcmp (key, "writelog") == 0)
    return parse_path (key, value, &writelog_path);
  else if (strcmp (key, "bad") == 0)
    return parse_path (key, value, &bad_path);
  else if (fm_faultset_is_key (key))
    return fault_arg (key, value);
  else if (fm_profile_is_param (key))
    return drive_arg (key, value);
  else if (strcmp (key, "powercut-after") == 0) {
    if (fm_parse_uint ("powercut-after", value, 1, UINT64_MAX, &powercut_after,
                       &err) == -1) {
      nbdkit_error ("%s", err.msg);
      return -1;
    }
  } else {
    nbdkit_error ("unknown parameter '%s' (see nbdkit-futuredisk-plugin(1) "
                  "or --help)",
                  key);
    return -1;
  }
  return 0;
}

static int
futuredisk_config_complete (void)
{
  struct fm_err err;

  if (!profile_loaded) {
    if (fd_load_profile (profile_arg, &profile, &err) == -1) {
      nbdkit_error ("profile: %s", err.msg);
      return -1;
    }
    profile_loaded = true;
  }
  if (size && fm_profile_resize (&profile, size, &err) == -1) {
    nbdkit_error ("%s", err.msg);
    return -1;
  }
  if (apply_drive_args (&profile) == -1)
    return -1;
  /* The host's speed scales the checker's CPU time alone. */
  if (host && think != EMU_THINK_CPU) {
    nbdkit_error ("host=%s applies to think=cpu only", host->name);
    return -1;
  }
  if (think == EMU_THINK_CPU && cgroup == NULL) {
    nbdkit_error ("think=cpu needs cgroup=DIR: the cgroup v2 directory the "
                  "client runs in");
    return -1;
  }
  /* Else the profile's host (checked when it was loaded). */
  if (host == NULL && profile.host[0] &&
      (host = fd_host_find ("host", profile.host, &err)) == NULL) {
    nbdkit_error ("%s", err.msg);
    return -1;
  }
  if (base_path && store_path == NULL) {
    nbdkit_error ("base=%s needs store=FILE: the overlay its writes go to",
                  base_path);
    return -1;
  }
  return apply_fault_args (&profile.faults);
}

#define futuredisk_config_help                                                 \
  "profile=NAME|FILE    Disk profile (default roadmap-2013); see\n"            \
  "                     'futuredisk model --help' for the built-ins.\n"        \
  "size=SIZE            Rescale the disk (default: the profile's).\n"          \
  "seed=N               Seed for every random choice (default 1).\n"           \
  "time=virtual|real|scale:F  Sleep never / to modelled time / F times it.\n"  \
  "think=real|zero|cpu  The client's time between requests: wall, none,\n"     \
  "                     or its cgroup's CPU time (cpu, with cgroup=).\n"       \
  "cgroup=DIR           The cgroup v2 directory the client runs in.\n"         \
  "host=NAME            think=cpu: the host's speed (server-2006, ...).\n"     \
  "read-ahead=on|off    The drive's read-ahead (default: the profile's).\n"    \
  "write-cache=on|off   The drive's volatile write cache (default: "           \
  "profile's).\n"                                                              \
  "stats=FILE           Write counters as JSON at exit and on request.\n"      \
  "control=SOCKET       Serve the control protocol on a unix socket.\n"        \
  "store=FILE           Keep the disk in a sparse file across restarts.\n"     \
  "base=FILE            With store=: a copy-on-write clone of the store "      \
  "FILE\n"                                                                     \
  "                     (read, never written).\n"                              \
  "faultlog=FILE        Log every injected and triggered fault (JSON "         \
  "lines).\n"                                                                  \
  "writelog=FILE        Log every write, flush and zero with its data.\n"      \
  "bad=FILE             Inject faults at start: OFFSET LENGTH KIND per "       \
  "line.\n"                                                                    \
  "powercut-after=N     Cut the power after the Nth write.\n"                  \
  "Drive parameters (also in profile files, with '_' for '-'):\n"              \
  "queue-depth=N        Commands queued in the drive, 1-256 (1 = none; "       \
  "32).\n"                                                                     \
  "queue-age=DURATION   None waits longer than this behind others (500ms).\n"  \
  "queue=sptf|fifo      Serve the queue soonest-reachable first (sptf), or "   \
  "in arrival order.\n"                                                        \
  "cache-segments=N     Read buffer segments, 0-2048 (0: readahead-sized).\n"  \
  "Fault keys (also in profile files; nbdkit-futuredisk-plugin(1)):\n"         \
  "faults=PRESET        none|consumer|enterprise|harsh, then the keys "        \
  "below.\n"                                                                   \
  "ber=P                Unrecoverable read errors per bit read (1e-14).\n"     \
  "erc=DURATION         Error recovery limit of a read (profile's).\n"         \
  "ure-recover=P        Chance a failing read succeeds on a retry.\n"          \
  "retry-revs=N         Mean retries (revolutions) a read that comes back "    \
  "takes (8).\n"                                                               \
  "marginal=F           Share of 4 KiB blocks that read only on a retry.\n"    \
  "age=DURATION         The disk's age: latent errors built up (e.g. 2y).\n"   \
  "lse=P                Chance per year of age the disk gets latent errors.\n" \
  "lse-alpha=A lse-min=N lse-max=N  Pareto count of latent errors.\n"          \
  "lse-burst=N lse-spread=SIZE lse-head=F  Episodes: size, spread, head.\n"    \
  "lse-rate=R|auto      New latent-error episodes per virtual hour.\n"         \
  "realloc=P spares=N   Rewritten bad sectors move to spares (20000).\n"       \
  "corrupt=P            Chance the disk corrupts silently at all (1).\n"       \
  "flip-rate=P          Bit flips on the read path, per bit read.\n"           \
  "rot-rate=R           Bits flipping at rest, per sector per virtual hour.\n" \
  "stuck-bits=P         Bits stuck at 0 or 1, per bit of the disk.\n"          \
  "lost-write=P misdirected-write=P  Per write: lost, or landing nearby.\n"    \
  "torn=P               Chance a power cut tears a cached write.\n"            \
  "fail-at=DURATION     The whole disk fails at this virtual time."

/* The scaled time modes hold each reply until its modelled completion. */
static int
sleep_ns (uint64_t ns)
{
  return nbdkit_nanosleep (ns / 1000000000u, ns % 1000000000u);
}

static int
futuredisk_get_ready (void)
{
  struct emu_config cfg = {
      .profile = profile,
      .seed = seed,
      .time_scale = time_scale,
      .think_zero = think == EMU_THINK_ZERO,
      .think_cpu = think == EMU_THINK_CPU,
      .cgroup = cgroup,
      .host_speed = host ? host->speed : 1,
      .store_path = store_path,
      .bad_path = bad_path,
      .faultlog_path = faultlog_path,
      .writelog_path = writelog_path,
      .powercut_after = powercut_after,
      .faults = profile.faults,
      .sleep_ns = sleep_ns,
      /* 0 (or less): emu's default */
      .grace_ns = futuredisk_debug_grace_us > 0
                      ? (uint64_t)futuredisk_debug_grace_us * 1000
                      : 0,
  };
  struct fm_err err;

  fm_disk_default_options (&profile, &cfg.caches);
  if (read_ahead != -1)
    cfg.caches.read_cache = read_ahead;
  if (write_cache != -1)
    cfg.caches.write_cache = write_cache;
  cfg.caches.queue = queue_policy;
  /* The overlay is made (or checked) here, so that emu opens it as any
   * other store file.
   */
  if (base_path &&
      store_file_make_overlay (store_path, base_path, profile.capacity,
                               profile.name, &err) == -1) {
    nbdkit_error ("%s", err.msg);
    return -1;
  }
  emu = emu_new (&cfg, &err);
  if (emu == NULL) {
    nbdkit_error ("%s", err.msg);
    return -1;
  }
  if (control_path && (control = control_open (control_path, &err)) == NULL) {
    nbdkit_error ("%s", err.msg);
    return -1;
  }
  nbdkit_debug ("futuredisk: profile %s, %" PRIu64 " bytes, seed %" PRIu64
                ", store %s",
                profile.name, profile.capacity, seed, emu_store_name (emu));
  return 0;
}

/* Threads must start after nbdkit forks into the background. */
static int
futuredisk_after_fork (void)
{
  struct fm_err err;

  if (control && control_serve (control, emu, stats_path, &err) == -1) {
    nbdkit_error ("%s", err.msg);
    return -1;
  }
  return 0;
}

static void
futuredisk_cleanup (void)
{
  struct fm_err err;

  control_close (control);
  control = NULL;
  if (emu && stats_path && emu_write_stats (emu, stats_path, &err) == -1)
    nbdkit_error ("%s", err.msg);
  emu_free (emu);
  emu = NULL;
}

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

static void *
futuredisk_open (int readonly)
{
  return NBDKIT_HANDLE_NOT_NEEDED;
}

static int64_t
futuredisk_get_size (void *handle)
{
  return (int64_t)profile.capacity;
}

/* The preferred size is the physical sector, the unit that costs no
 * read-modify-write.  The minimum stays 1, not the logical sector: a
 * minimum makes libnbd refuse smaller requests on the client side, and
 * the rig's own clients (nbdfuse under a 512-byte loop device) send what
 * the file system sends; the store keeps bytes, and the model prices a
 * ragged write as the merge it is.
 */
static int
futuredisk_block_size (void *handle, uint32_t *minimum, uint32_t *preferred,
                       uint32_t *maximum)
{
  *minimum = 1;
  *preferred = profile.sector;
  *maximum = 64 << 20; /* nbdkit's own limit on a read or write */
  return 0;
}

/* Tell the kernel what kind of disk this is: it schedules differently. */
static int
futuredisk_is_rotational (void *handle)
{
  return fm_profile_rotating (&profile);
}

/* One shared disk behind every connection: a flush on any connection
 * makes every acknowledged write durable, which is what multi-conn means.
 */
static int
futuredisk_can_multi_conn (void *handle)
{
  return 1;
}

/* FUA writes go through the drive's cache to the media in the model. */
static int
futuredisk_can_fua (void *handle)
{
  return NBDKIT_FUA_NATIVE;
}

/* FLUSH destages the drive's volatile cache: the heart of the rig. */
static int
futuredisk_can_flush (void *handle)
{
  return 1;
}

/* Trim frees the store's pages and drops cached data, like a drive that
 * returns zeros after TRIM.
 */
static int
futuredisk_can_trim (void *handle)
{
  return 1;
}

/* Writing zeros costs a media write in the model but no data copy here. */
static int
futuredisk_can_zero (void *handle)
{
  return 1;
}

/* A zero that may trim is fast (it costs a trim); one that may not costs
 * as much as writing zeros, so it is refused when the client asks for
 * fast zeroing (futuredisk_zero).
 */
static int
futuredisk_can_fast_zero (void *handle)
{
  return 1;
}

/* Holes in the store are reported, so clients can skip them. */
static int
futuredisk_can_extents (void *handle)
{
  return 1;
}

/* CACHE is a read the drive prefetches into its segment: native. */
static int
futuredisk_can_cache (void *handle)
{
  return NBDKIT_CACHE_NATIVE;
}

/* The request is done (held to its modelled time already, in the scaled
 * time modes): trace it.
 */
static int
finish (const char *op, uint64_t count, uint64_t offset,
        const struct emu_result *r)
{
  if (futuredisk_debug_trace)
    nbdkit_debug ("trace: %s offset=%" PRIu64 " count=%" PRIu64
                  " arrival_ns=%" PRIu64 " done_ns=%" PRIu64
                  " service_ns=%" PRIu64 "%s",
                  op, offset, count, r->arrival_ns, r->done_ns,
                  r->done_ns - r->arrival_ns, r->cache_hit ? " hit" : "");
  return 0;
}

static int
failed (const char *op, const struct fm_err *err)
{
  int e = errno ? errno : EIO;

  nbdkit_error ("%s: %s", op, err->msg);
  nbdkit_set_error (e);
  return -1;
}

static int
futuredisk_pread (void *handle, void *buf, uint32_t count, uint64_t offset,
                  uint32_t flags)
{
  struct emu_result r;
  struct fm_err err;

  if (emu_pread (emu, buf, count, offset, &r, &err) == -1)
    return failed ("pread", &err);
  return finish ("pread", count, offset, &r);
}

static int
futuredisk_pwrite (void *handle, const void *buf, uint32_t count,
                   uint64_t offset, uint32_t flags)
{
  struct emu_result r;
  struct fm_err err;

  if (emu_pwrite (emu, buf, count, offset, flags & NBDKIT_FLAG_FUA, &r, &err) ==
      -1)
    return failed ("pwrite", &err);
  return finish ("pwrite", count, offset, &r);
}

static int
futuredisk_flush (void *handle, uint32_t flags)
{
  struct emu_result r;
  struct fm_err err;

  if (emu_flush (emu, &r, &err) == -1)
    return failed ("flush", &err);
  return finish ("flush", 0, 0, &r);
}

static int
futuredisk_trim (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  struct emu_result r;
  struct fm_err err;

  if (emu_trim (emu, count, offset, flags & NBDKIT_FLAG_FUA, &r, &err) == -1)
    return failed ("trim", &err);
  return finish ("trim", count, offset, &r);
}

static int
futuredisk_zero (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  bool may_trim = flags & NBDKIT_FLAG_MAY_TRIM;
  struct emu_result r;
  struct fm_err err;

  if ((flags & NBDKIT_FLAG_FAST_ZERO) && !may_trim) {
    nbdkit_set_error (ENOTSUP);
    return -1;
  }
  if (emu_zero (emu, count, offset, may_trim, flags & NBDKIT_FLAG_FUA, &r,
                &err) == -1)
    return failed ("zero", &err);
  return finish ("zero", count, offset, &r);
}

struct extents_ctx {
  struct nbdkit_extents *extents;
  bool one; /* NBDKIT_FLAG_REQ_ONE: the first extent is enough */
};

static int
add_extent (void *opaque, uint64_t offset, uint64_t length, bool hole)
{
  struct extents_ctx *x = opaque;

  if (nbdkit_add_extent (x->extents, offset, length,
                         hole ? NBDKIT_EXTENT_HOLE | NBDKIT_EXTENT_ZERO : 0) ==
      -1)
    return -1;
  return x->one ? 1 : 0;
}

static int
futuredisk_extents (void *handle, uint32_t count, uint64_t offset,
                    uint32_t flags, struct nbdkit_extents *extents)
{
  struct extents_ctx x = {extents, flags & NBDKIT_FLAG_REQ_ONE};
  struct fm_err err;

  if (emu_extents (emu, count, offset, add_extent, &x, &err) == -1)
    return failed ("extents", &err);
  return 0;
}

static int
futuredisk_cache (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  struct emu_result r;
  struct fm_err err;

  if (emu_cache (emu, count, offset, &r, &err) == -1)
    return failed ("cache", &err);
  return finish ("cache", count, offset, &r);
}

static struct nbdkit_plugin plugin = {
    .name = "futuredisk",
    .longname = "futuredisk: an emulated disk with modelled time",
    .version = FUTUREDISK_VERSION,
    .unload = futuredisk_unload,
    .config = futuredisk_config,
    .config_complete = futuredisk_config_complete,
    .config_help = futuredisk_config_help,
    .magic_config_key = "profile",
    .get_ready = futuredisk_get_ready,
    .after_fork = futuredisk_after_fork,
    .cleanup = futuredisk_cleanup,
    .open = futuredisk_open,
    .get_size = futuredisk_get_size,
    .block_size = futuredisk_block_size,
    .is_rotational = futuredisk_is_rotational,
    .can_multi_conn = futuredisk_can_multi_conn,
    .can_fua = futuredisk_can_fua,
    .can_flush = futuredisk_can_flush,
    .can_trim = futuredisk_can_trim,
    .can_zero = futuredisk_can_zero,
    .can_fast_zero = futuredisk_can_fast_zero,
    .can_extents = futuredisk_can_extents,
    .can_cache = futuredisk_can_cache,
    .pread = futuredisk_pread,
    .pwrite = futuredisk_pwrite,
    .flush = futuredisk_flush,
    .trim = futuredisk_trim,
    .zero = futuredisk_zero,
    .extents = futuredisk_extents,
    .cache = futuredisk_cache,
    .errno_is_preserved = 0,
};

NBDKIT_REGISTER_PLUGIN (plugin)
