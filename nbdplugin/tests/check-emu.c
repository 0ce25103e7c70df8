/* futuredisk — nbdplugin: the request path (emu.c) without nbdkit. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-main.h"
#include "emu.h"
#include "faultmodels/rng.h"
#include "scheduler.h"

#define SIZE (64 << 20)

static uint64_t fake_wall; /* the wall clock the tests control */

static uint64_t
wall (void)
{
  return fake_wall;
}

static struct emu *
make (const char *profile, const char *store, bool think_zero, double scale)
{
  struct emu_config cfg = {.seed = 1,
                           .time_scale = scale,
                           .think_zero = think_zero,
                           .store_path = store,
                           .wall_ns = wall};
  struct fm_err err;
  struct emu *e;

  ck_assert_int_eq (fm_profile_builtin (profile, &cfg.profile, &err), 0);
  ck_assert_int_eq (fm_profile_resize (&cfg.profile, SIZE, &err), 0);
  fm_disk_default_options (&cfg.profile, &cfg.caches);
  e = emu_new (&cfg, &err);
  ck_assert_msg (e != NULL, "%s", err.msg);
  return e;
}

/* Every operation, random and unaligned, against a shadow copy. */
START_TEST (test_shadow)
{
  struct emu *e = make ("roadmap-2006", NULL, false, 0);
  char *shadow = calloc (1, SIZE), *buf = malloc (1 << 20);
  struct emu_result r;
  struct fm_err err;
  int i;

  for (i = 0; i < 3000; i++) {
    uint64_t h = fm_hash (9, FM_STREAM_BENCH, i, 0);
    uint64_t len = 1 + fm_below (fm_hash (9, 2, i, 0), (h & 3) ? 9000 : 300000);
    uint64_t off = fm_below (fm_hash (9, 1, i, 1), SIZE - len), k;

    fake_wall += 1000 * (h & 15);
    switch (h % 9) {
      case 0:
      case 1:
      case 2:
        for (k = 0; k < len; k++)
          buf[k] = (char)fm_hash (i, 2, k, 0);
        ck_assert_int_eq (
            emu_pwrite (e, buf, len, off, (h >> 20) & 1, &r, &err), 0);
        memcpy (shadow + off, buf, len);
        break;
      case 3:
      case 4:
      case 5:
        ck_assert_int_eq (emu_pread (e, buf, len, off, &r, &err), 0);
        ck_assert_mem_eq (buf, shadow + off, len);
        break;
      case 6:
        ck_assert_int_eq (emu_flush (e, &r, &err), 0);
        break;
      case 7:
        ck_assert_int_eq (
            emu_zero (e, len, off, (h >> 20) & 1, (h >> 21) & 1, &r, &err), 0);
        memset (shadow + off, 0, len);
        break;
      case 8:
        if (h & 256) {
          ck_assert_int_eq (emu_trim (e, len, off, false, &r, &err), 0);
          memset (shadow + off, 0, len);
        } else {
          ck_assert_int_eq (emu_cache (e, len, off, &r, &err), 0);
        }
        break;
    }
    ck_assert_uint_ge (r.done_ns, r.arrival_ns);
  }
  for (i = 0; i < SIZE >> 20; i++) {
    ck_assert_int_eq (emu_pread (e, buf, 1 << 20, (uint64_t)i << 20, &r, &err),
                      0);
    ck_assert_mem_eq (buf, shadow + ((uint64_t)i << 20), 1 << 20);
  }
  emu_free (e);
  free (shadow);
  free (buf);
}
END_TEST

/* Read the store file behind the emulator's back (header is 4 KiB). */
static void
peek (const char *path, uint64_t off, char *buf, size_t len)
{
  int fd = open (path, O_RDONLY);

  ck_assert_int_ge (fd, 0);
  ck_assert_int_eq (pread (fd, buf, len, 4096 + off), (ssize_t)len);
  close (fd);
}

/* A store file in a fresh directory: path names a file not yet made. */
static void
temp_store (char *dir, char *path)
{
  fd_check_tmpdir ("emu", dir, 64);
  snprintf (path, 128, "%s/disk", dir);
}

static void
remove_store (const char *dir, const char *path)
{
  unlink (path);
  rmdir (dir);
}

/* Acknowledged writes stay volatile until FLUSH or FUA. */
START_TEST (test_volatile_cache)
{
  char dir[64], path[128], buf[16];
  struct emu_result r;
  struct fm_err err;
  struct emu *e;

  temp_store (dir, path);
  e = make ("roadmap-2006", path, true, 0);
  ck_assert_int_eq (emu_pwrite (e, "cached", 6, 1000, false, &r, &err), 0);
  ck_assert_int_eq (emu_pwrite (e, "fua", 3, 5000000, true, &r, &err), 0);
  peek (path, 1000, buf, 6);
  ck_assert_mem_ne (buf, "cached", 6);
  peek (path, 5000000, buf, 3);
  ck_assert_mem_eq (buf, "fua", 3);
  /* Reads see the cache. */
  ck_assert_int_eq (emu_pread (e, buf, 6, 1000, &r, &err), 0);
  ck_assert_mem_eq (buf, "cached", 6);
  ck_assert_int_eq (emu_flush (e, &r, &err), 0);
  peek (path, 1000, buf, 6);
  ck_assert_mem_eq (buf, "cached", 6);

  /* An orderly shutdown writes the cache out too. */
  ck_assert_int_eq (emu_pwrite (e, "shutdown", 8, 2000, false, &r, &err), 0);
  peek (path, 2000, buf, 8);
  ck_assert_mem_ne (buf, "shutdown", 8);
  emu_free (e);
  peek (path, 2000, buf, 8);
  ck_assert_mem_eq (buf, "shutdown", 8);
  remove_store (dir, path);
}
END_TEST

/* Virtual time: service plus the client's think time (or not). */
START_TEST (test_clock)
{
  struct emu *e = make ("roadmap-2006", NULL, false, 0);
  struct emu_result r1, r2;
  struct fm_err err;
  char buf[4096];

  fake_wall = 1000000000;
  emu_free (e);
  e = make ("roadmap-2006", NULL, false, 0);
  ck_assert_uint_eq (emu_virtual_now (e), 0);
  ck_assert_int_eq (emu_pread (e, buf, 4096, 30 << 20, &r1, &err), 0);
  ck_assert_uint_eq (r1.arrival_ns, 0);
  ck_assert_uint_gt (r1.done_ns, 1000000); /* a seek and some rotation */
  ck_assert_uint_eq (r1.deadline_ns, 0);   /* virtual time never sleeps */
  fake_wall += 5000000;                    /* the client thinks 5 ms */
  ck_assert_uint_eq (emu_virtual_now (e), r1.done_ns + 5000000);
  ck_assert_int_eq (emu_pread (e, buf, 4096, 10 << 20, &r2, &err), 0);
  ck_assert_uint_eq (r2.arrival_ns, r1.done_ns + 5000000);

  /* think=zero: the next request arrives at the last completion. */
  ck_assert_int_eq (emu_set (e, "think", "zero", &err), 0);
  fake_wall += 7000000;
  ck_assert_int_eq (emu_pread (e, buf, 4096, 50 << 20, &r1, &err), 0);
  ck_assert_uint_eq (r1.arrival_ns, r2.done_ns + 0);
  emu_free (e);

  /* time=real: the reply waits for the modelled completion. */
  fake_wall = 500;
  e = make ("roadmap-2006", NULL, false, 1);
  fake_wall = 1500;
  ck_assert_int_eq (emu_pread (e, buf, 4096, 30 << 20, &r1, &err), 0);
  ck_assert_uint_eq (r1.arrival_ns, 1000);
  ck_assert_uint_eq (r1.deadline_ns, 500 + r1.done_ns);
  ck_assert_int_eq (emu_set (e, "time", "scale:2", &err), 0);
  fake_wall += 10;
  ck_assert_int_eq (emu_pread (e, buf, 4096, 0, &r2, &err), 0);
  ck_assert_uint_ge (r2.deadline_ns,
                     fake_wall + 2 * (r2.done_ns - r2.arrival_ns) - 2);
  emu_free (e);
}
END_TEST

struct ext {
  uint64_t off[32], len[32];
  bool hole[32];
  int n;
};

static int
collect (void *opaque, uint64_t offset, uint64_t length, bool hole)
{
  struct ext *x = opaque;

  ck_assert_int_lt (x->n, 32);
  x->off[x->n] = offset;
  x->len[x->n] = length;
  x->hole[x->n++] = hole;
  return 0;
}

/* Cached writes are data in extents; trim makes holes again. */
START_TEST (test_extents)
{
  struct emu *e = make ("roadmap-2006", NULL, true, 0);
  struct emu_result r;
  struct fm_err err;
  struct ext x = {.n = 0};
  char buf[8192];

  memset (buf, 1, sizeof buf);
  ck_assert_int_eq (emu_pwrite (e, buf, 4096, 8192, false, &r, &err), 0);
  ck_assert_int_eq (emu_extents (e, 65536, 0, collect, &x, &err), 0);
  ck_assert_int_eq (x.n, 3);
  ck_assert (x.hole[0] && x.len[0] == 8192);
  ck_assert (!x.hole[1] && x.off[1] == 8192 && x.len[1] == 4096);
  ck_assert (x.hole[2] && x.off[2] + x.len[2] == 65536);

  ck_assert_int_eq (emu_flush (e, &r, &err), 0);
  x.n = 0;
  ck_assert_int_eq (emu_extents (e, 65536, 0, collect, &x, &err), 0);
  ck_assert_int_eq (x.n, 3);
  ck_assert (!x.hole[1] && x.off[1] == 8192);

  ck_assert_int_eq (emu_trim (e, 4096, 8192, false, &r, &err), 0);
  x.n = 0;
  ck_assert_int_eq (emu_extents (e, 65536, 0, collect, &x, &err), 0);
  ck_assert_int_eq (x.n, 1);
  ck_assert (x.hole[0]);
  ck_assert_int_eq (emu_pread (e, buf, 4096, 8192, &r, &err), 0);
  ck_assert_int_eq (buf[0], 0);
  emu_free (e);
}
END_TEST

START_TEST (test_stats)
{
  struct emu *e = make ("roadmap-2013", NULL, true, 0);
  struct emu_result r;
  struct fm_err err;
  char buf[4096], *json = NULL;
  size_t len = 0;
  FILE *fp;
  static const char *const fields[] = {
      "\"profile\": \"roadmap-2013\"",
      "\"size\": 67108864",
      "\"seed\": 1",
      "\"virtual_ns\": ",
      "\"busy_ns\": ",
      "\"reads\": 1",
      "\"writes\": 1",
      "\"flushes\": 1",
      "\"trims\": 0",
      "\"zeroes\": 0",
      "\"bytes_read\": 4096",
      "\"bytes_written\": 4096",
      "\"seeks\": ",
      "\"seek_ns\": ",
      "\"rotation_ns\": ",
      "\"transfer_ns\": ",
      "\"faults\": {\"ure\": 0, \"disk-failure\": 0, \"powercut\": 0, "
      "\"torn-write\": 0, \"lost-write\": 0, \"misdirected-write\": 0, "
      "\"flip\": 0, \"reallocated\": 0, \"lse\": 0, \"rot\": 0, "
      "\"stuck\": 0, \"marginal\": 0, \"retries\": 0, "
      "\"faulty_sectors\": 0, \"lse_prone\": false, "
      "\"lse_latent\": 0, \"lse_episodes\": 0, \"silent_corruption\": "
      "false, \"stuck_bits\": 0, \"spares_left\": 0}",
  };
  size_t i;

  ck_assert_int_eq (emu_pread (e, buf, 4096, 1 << 20, &r, &err), 0);
  ck_assert_int_eq (emu_pwrite (e, buf, 4096, 0, false, &r, &err), 0);
  ck_assert_int_eq (emu_flush (e, &r, &err), 0);
  fp = open_memstream (&json, &len);
  emu_stats_json (e, fp);
  fclose (fp);
  for (i = 0; i < sizeof fields / sizeof fields[0]; i++)
    ck_assert_msg (strstr (json, fields[i]) != NULL, "no %s in %s", fields[i],
                   json);
  free (json);

  emu_stats_clear (e);
  fp = open_memstream (&json, &len);
  emu_stats_json (e, fp);
  fclose (fp);
  ck_assert_ptr_nonnull (strstr (json, "\"reads\": 0"));
  free (json);

  ck_assert_int_eq (emu_set (e, "time", "warp", &err), -1);
  ck_assert_str_eq (err.msg, "time: 'warp' is not virtual, real or scale:F");
  ck_assert_int_eq (emu_set (e, "time", "scale:0", &err), -1);
  ck_assert_int_eq (emu_set (e, "think", "hard", &err), -1);
  ck_assert_str_eq (err.msg, "think: 'hard' is not real, zero or cpu");
  /* think=cpu reads a cgroup the disk was started with. */
  ck_assert_int_eq (emu_set (e, "think", "cpu", &err), -1);
  ck_assert_str_eq (err.msg,
                    "think: 'cpu' needs the plugin started with cgroup=DIR");
  ck_assert_int_eq (emu_set (e, "colour", "blue", &err), -1);
  ck_assert_str_eq (
      err.msg,
      "unknown setting 'colour' (settable: time, think, device, relay)");
  emu_free (e);
}
END_TEST

/* Set the fake cgroup's CPU microseconds (its cpu.stat). */
static void
set_cpu (const char *dir, uint64_t usec)
{
  char path[128];
  FILE *fp;

  snprintf (path, sizeof path, "%s/cpu.stat", dir);
  ck_assert_ptr_nonnull (fp = fopen (path, "w"));
  fprintf (fp, "usage_usec %llu\nuser_usec 0\nsystem_usec 0\n",
           (unsigned long long)usec);
  fclose (fp);
}

/* think=cpu: the cgroup's CPU time between a reply and the next request,
 * over the host's speed, is the think time; wall time is not.
 */
START_TEST (test_think_cpu)
{
  struct emu_config cfg = {.seed = 1, .think_cpu = true, .wall_ns = wall};
  struct emu_result r1, r2;
  struct fm_err err;
  char dir[64], buf[4096], path[128];
  struct emu *e;

  ck_assert_int_eq (fm_profile_builtin ("roadmap-2006", &cfg.profile, &err), 0);
  ck_assert_int_eq (fm_profile_resize (&cfg.profile, SIZE, &err), 0);
  fm_disk_default_options (&cfg.profile, &cfg.caches);
  /* Without a cgroup there is no CPU to read. */
  ck_assert_ptr_null (emu_new (&cfg, &err));
  ck_assert_str_eq (err.msg,
                    "think=cpu needs cgroup=DIR: the checker's cgroup");
  fd_check_tmpdir ("think", dir, sizeof dir);
  set_cpu (dir, 7000);
  cfg.cgroup = dir;
  cfg.host_speed = 0.25; /* a host four times slower */
  fake_wall = 1000000000;
  ck_assert_ptr_nonnull (e = emu_new (&cfg, &err));
  ck_assert_int_eq (emu_pread (e, buf, 4096, 30 << 20, &r1, &err), 0);
  ck_assert_uint_eq (r1.arrival_ns, 0);
  fake_wall += 5000000000; /* wall time passes: it does not count */
  set_cpu (dir, 9000);     /* 2 ms of the checker's CPU */
  ck_assert_int_eq (emu_pread (e, buf, 4096, 10 << 20, &r2, &err), 0);
  ck_assert_uint_eq (r2.arrival_ns, r1.done_ns + 4 * 2000000);
  /* Back to wall time and on again: each counts from the switch. */
  ck_assert_int_eq (emu_set (e, "think", "real", &err), 0);
  fake_wall += 3000000;
  ck_assert_int_eq (emu_pread (e, buf, 4096, 50 << 20, &r1, &err), 0);
  ck_assert_uint_eq (r1.arrival_ns, r2.done_ns + 3000000);
  ck_assert_int_eq (emu_set (e, "think", "cpu", &err), 0);
  set_cpu (dir, 9500);
  fake_wall += 3000000;
  ck_assert_int_eq (emu_pread (e, buf, 4096, 20 << 20, &r2, &err), 0);
  ck_assert_uint_eq (r2.arrival_ns, r1.done_ns + 4 * 500000);
  emu_free (e);
  snprintf (path, sizeof path, "%s/cpu.stat", dir);
  unlink (path);
  rmdir (dir);
}
END_TEST

/* A write straight to the media (FUA, zero, trim) that covers only part
 * of a block whose other bytes are cached must not lose those bytes.
 */
START_TEST (test_partial_blocks)
{
  char dir[64], path[128], want[4096], buf[4096];
  struct emu_result r;
  struct fm_err err;
  struct emu *e;

  temp_store (dir, path);
  e = make ("roadmap-2009", path, true, 0);
  memset (want, 'c', sizeof want);
  ck_assert_int_eq (emu_pwrite (e, want, 4096, 0, false, &r, &err), 0);
  memcpy (want + 200, "fua!", 4);
  ck_assert_int_eq (emu_pwrite (e, "fua!", 4, 200, true, &r, &err), 0);
  memset (want + 1000, 0, 30);
  ck_assert_int_eq (emu_zero (e, 30, 1000, false, false, &r, &err), 0);
  memset (want + 3000, 0, 600);
  ck_assert_int_eq (emu_trim (e, 600, 3000, false, &r, &err), 0);
  ck_assert_int_eq (emu_pread (e, buf, 4096, 0, &r, &err), 0);
  ck_assert_mem_eq (buf, want, 4096);
  /* And the media agrees once flushed. */
  ck_assert_int_eq (emu_flush (e, &r, &err), 0);
  peek (path, 0, buf, 4096);
  ck_assert_mem_eq (buf, want, 4096);
  emu_free (e);
  remove_store (dir, path);
}
END_TEST

/* Faults: an injected unreadable sector fails reads with EIO after the
 * drive's error recovery, leaves its neighbours alone, and reads again
 * once rewritten; a failed disk fails everything; the log has it all.
 */
START_TEST (test_faults)
{
  char dir[64], log[128], buf[8192], line[512];
  struct emu_config cfg = {.seed = 1, .think_zero = true, .wall_ns = wall};
  struct emu_result r;
  struct fm_err err;
  struct emu *e;
  FILE *fp;
  int lines = 0;

  fd_check_tmpdir ("emu", dir, sizeof dir);
  snprintf (log, sizeof log, "%s/faults.jsonl", dir);
  cfg.faultlog_path = log;
  fm_faultset_defaults (&cfg.faults);
  cfg.faults.fail_at_ns = 3600000000000ULL; /* an hour of virtual time */
  ck_assert_int_eq (fm_profile_builtin ("roadmap-2006", &cfg.profile, &err), 0);
  ck_assert_int_eq (fm_profile_resize (&cfg.profile, SIZE, &err), 0);
  cfg.faults.erc_ns = 100000000; /* 100 ms */
  fm_disk_default_options (&cfg.profile, &cfg.caches);
  e = emu_new (&cfg, &err);
  ck_assert_msg (e != NULL, "%s", err.msg);

  ck_assert_int_eq (emu_inject (e, FM_FAULT_URE, 1 << 20, 1, "test", &err), 0);
  ck_assert_int_eq (emu_inject (e, FM_FAULT_URE, SIZE, 1, "test", &err), -1);
  ck_assert_ptr_nonnull (strstr (err.msg, "is outside the"));
  /* The sector's neighbours read fine; a read covering it fails late. */
  ck_assert_int_eq (emu_pread (e, buf, 512, (1 << 20) - 512, &r, &err), 0);
  ck_assert_int_eq (emu_pread (e, buf, 512, (1 << 20) + 512, &r, &err), 0);
  ck_assert_int_eq (emu_pread (e, buf, 8192, (1 << 20) - 4096, &r, &err), -1);
  ck_assert_int_eq (errno, EIO);
  ck_assert_ptr_nonnull (strstr (err.msg, "unrecoverable read error at "
                                          "sector 2048"));
  ck_assert_uint_ge (r.done_ns - r.arrival_ns, 100000000);
  /* It stays bad (sticky) until rewritten. */
  ck_assert_int_eq (emu_pread (e, buf, 1, (1 << 20) + 7, &r, &err), -1);
  memset (buf, 9, 512);
  ck_assert_int_eq (emu_pwrite (e, buf, 512, 1 << 20, true, &r, &err), 0);
  ck_assert_int_eq (emu_pread (e, buf, 8192, (1 << 20) - 4096, &r, &err), 0);
  ck_assert_int_eq (buf[4096], 9);

  /* The whole disk fails: everything gets EIO. */
  ck_assert_int_eq (emu_inject (e, FM_FAULT_DISK_FAILURE, 0, 0, "test", &err),
                    0);
  ck_assert_int_eq (emu_pread (e, buf, 512, 0, &r, &err), -1);
  ck_assert_ptr_nonnull (strstr (err.msg, "disk-failure"));
  ck_assert_int_eq (emu_pwrite (e, buf, 512, 0, false, &r, &err), -1);
  ck_assert_int_eq (emu_flush (e, &r, &err), -1);
  emu_free (e);

  /* The ground truth: two injections, two triggered UREs, one failure. */
  fp = fopen (log, "r");
  ck_assert_ptr_nonnull (fp);
  while (fgets (line, sizeof line, fp)) {
    lines++;
    ck_assert_msg (strncmp (line, "{\"virtual_ns\": ", 15) == 0, "%s", line);
    if (lines == 1)
      ck_assert_msg (strstr (line,
                             "\"event\": \"inject\", \"kind\": "
                             "\"ure\", \"offset\": 1048576, "
                             "\"length\": 512, \"detail\": \"test\"") != NULL,
                     "%s", line);
    if (lines == 2)
      ck_assert_msg (strstr (line, "\"event\": \"trigger\", \"kind\": "
                                   "\"ure\", \"offset\": 1048576, "
                                   "\"length\": 512") != NULL,
                     "%s", line);
  }
  fclose (fp);
  ck_assert_int_eq (lines, 5);
  unlink (log);
  rmdir (dir);
}
END_TEST

static uint64_t slept_ns; /* what the scaled modes asked to sleep */

/* A sleep on the test's clock: it passes at once. */
static int
fake_sleep (uint64_t ns)
{
  slept_ns += ns;
  fake_wall += ns;
  return 0;
}

/* time=real: a read that fails after the drive's error recovery replies
 * at the end of it, and the next read does not wait for it.  Asserts on
 * the deadlines the emulator computes and the sleeps it asks for, on the
 * test's clock.
 */
START_TEST (test_failed_read_paced)
{
  struct emu_config cfg = {
      .seed = 1, .time_scale = 1, .wall_ns = wall, .sleep_ns = fake_sleep};
  const uint64_t erc = 100000000; /* 100 ms */
  struct emu_result r;
  struct fm_err err;
  struct emu *e;
  uint64_t sent;
  char buf[4096];

  fm_faultset_defaults (&cfg.faults);
  cfg.faults.erc_ns = erc;
  ck_assert_int_eq (fm_profile_builtin ("laptop-5400", &cfg.profile, &err), 0);
  ck_assert_int_eq (fm_profile_resize (&cfg.profile, SIZE, &err), 0);
  fm_disk_default_options (&cfg.profile, &cfg.caches);
  fake_wall = 1000;
  e = emu_new (&cfg, &err);
  ck_assert_msg (e != NULL, "%s", err.msg);
  ck_assert_int_eq (emu_inject (e, FM_FAULT_URE, 1 << 20, 1, "test", &err), 0);

  slept_ns = 0;
  sent = fake_wall;
  ck_assert_int_eq (emu_pread (e, buf, 4096, 1 << 20, &r, &err), -1);
  ck_assert_int_eq (errno, EIO);
  ck_assert_uint_ge (r.done_ns - r.arrival_ns, erc);
  ck_assert_uint_eq (r.deadline_ns, 1000 + r.done_ns);
  /* The reply waited for the recovery. */
  ck_assert_uint_ge (slept_ns, erc);
  ck_assert_uint_eq (fake_wall, r.deadline_ns);
  ck_assert_uint_ge (fake_wall - sent, erc);

  /* The next read starts after it: a seek and a rotation, no recovery. */
  ck_assert_int_eq (emu_pread (e, buf, 4096, 40 << 20, &r, &err), 0);
  ck_assert_uint_lt (r.done_ns - r.arrival_ns, erc / 2);
  ck_assert_uint_eq (fake_wall, r.deadline_ns);

  /* Refused while the power is off: no time passes, no sleep. */
  ck_assert_int_eq (emu_poweroff (e, 0, "test", &err), 0);
  slept_ns = 0;
  ck_assert_int_eq (emu_pread (e, buf, 4096, 0, &r, &err), -1);
  ck_assert_uint_eq (r.deadline_ns, 0);
  ck_assert_uint_eq (slept_ns, 0);
  emu_free (e);
}
END_TEST

/* The scaled modes decide ahead of the clock only while each pick
 * leaves the window full: a client deeper than the drive's queue (QD16
 * and QD32 on laptop-5400's 8) gets a window of 8 at every such pick,
 * and the pick that would see fewer waits for the clock, when the
 * client's next requests can join.
 */
START_TEST (test_deep_window)
{
  struct fm_profile p;
  struct fm_err err;
  size_t window, depths[] = {8, 9, 16, 32}, i, k;

  ck_assert_int_eq (fm_profile_builtin ("laptop-5400", &p, &err), 0);
  window = p.queue_depth;
  ck_assert_uint_eq (window, 8);
  for (i = 0; i < sizeof depths / sizeof depths[0]; i++) {
    size_t queued = depths[i];
    size_t early = sched_early_decisions (queued, window, true, queued);

    ck_assert_uint_eq (early, queued - window + 1);
    /* Each pick chooses among the first `window` requests queued. */
    for (k = 0; k < early; k++)
      ck_assert_uint_ge (queued - k, window);
    /* Then none ahead of the clock, however deep the client is. */
    ck_assert_uint_eq (
        sched_early_decisions (queued - early, window, true, queued), 0);
  }
  /* Short of the window, a later arrival may still be the best pick. */
  ck_assert_uint_eq (sched_early_decisions (4, window, true, 4), 0);
  /* Alone, or served in arrival order: nothing can overtake. */
  ck_assert_uint_eq (sched_early_decisions (1, window, true, 1), SIZE_MAX);
  ck_assert_uint_eq (sched_early_decisions (16, window, false, 16), SIZE_MAX);
}
END_TEST

/* The sectors a full read finds unreadable, reading chunks in the given
 * order and narrowing each failing chunk down sector by sector.
 */
static void
unreadable (struct emu *e, bool backwards, unsigned char *bad)
{
  const uint64_t chunk = 65536, nchunks = SIZE / chunk;
  char buf[65536];
  struct emu_result r;
  struct fm_err err;
  uint64_t i, s;

  memset (bad, 0, SIZE / 512);
  for (i = 0; i < nchunks; i++) {
    uint64_t off = (backwards ? nchunks - 1 - i : i) * chunk;
    if (emu_pread (e, buf, chunk, off, &r, &err) == 0)
      continue;
    for (s = 0; s < chunk / 512; s++)
      if (emu_pread (e, buf, 512, off + s * 512, &r, &err) == -1)
        bad[off / 512 + s] = 1;
  }
}

static struct emu *
make_ber (uint64_t seed)
{
  struct emu_config cfg = {.seed = seed, .think_zero = true, .wall_ns = wall};
  struct fm_err err;
  struct emu *e;

  ck_assert_int_eq (fm_profile_builtin ("roadmap-2006", &cfg.profile, &err), 0);
  ck_assert_int_eq (fm_profile_resize (&cfg.profile, SIZE, &err), 0);
  fm_faultset_defaults (&cfg.faults);
  cfg.faults.erc_ns = 0;
  /* About 30 marginal 512-byte sectors in 64 MiB. */
  cfg.faults.ber = 30.0 / (SIZE / 512) / (8 * 512);
  fm_disk_default_options (&cfg.profile, &cfg.caches);
  e = emu_new (&cfg, &err);
  ck_assert_msg (e != NULL, "%s", err.msg);
  return e;
}

/* Determinism (docs/ARCHITECTURE.md): the same seed gives the same bad
 * sectors whether the disk is read forwards or backwards; another seed,
 * others.  A rewrite clears a sector, and the re-roll is deterministic
 * too.
 */
START_TEST (test_ber_order)
{
  unsigned char *fwd = malloc (SIZE / 512), *rev = malloc (SIZE / 512);
  unsigned char *other = malloc (SIZE / 512);
  struct emu *e = make_ber (11), *f = make_ber (11), *g = make_ber (12);
  struct emu_result r;
  struct fm_err err;
  char zero[512] = {0};
  uint64_t s, n = 0;

  unreadable (e, false, fwd);
  unreadable (f, true, rev);
  unreadable (g, false, other);
  ck_assert_mem_eq (fwd, rev, SIZE / 512);
  ck_assert (memcmp (fwd, other, SIZE / 512) != 0);
  for (s = 0; s < SIZE / 512; s++)
    n += fwd[s];
  ck_assert_msg (n >= 10 && n <= 55, "%llu unreadable sectors",
                 (unsigned long long)n);
  /* Rewrite every bad sector on both disks in the same order. */
  for (s = 0; s < SIZE / 512; s++) {
    if (fwd[s]) {
      ck_assert_int_eq (emu_pwrite (e, zero, 512, s * 512, true, &r, &err), 0);
      ck_assert_int_eq (emu_pwrite (f, zero, 512, s * 512, true, &r, &err), 0);
    }
  }
  unreadable (e, false, fwd);
  unreadable (f, true, rev);
  ck_assert_mem_eq (fwd, rev, SIZE / 512);
  for (n = 0, s = 0; s < SIZE / 512; s++)
    n += fwd[s];
  ck_assert_uint_le (n, 3); /* each re-roll fails with p ~ 2e-4 */
  emu_free (e);
  emu_free (f);
  emu_free (g);
  free (fwd);
  free (rev);
  free (other);
}
END_TEST

/* A 64 MiB roadmap-2006 disk logging its faults to DIR/faults.jsonl (a
 * fresh directory); the fault settings in cfg are the caller's.
 */
static struct emu *
make_logged (struct emu_config *cfg, char *dir, char *log)
{
  struct fm_err err;
  struct emu *e;

  fd_check_tmpdir ("emu", dir, 64);
  snprintf (log, 128, "%s/faults.jsonl", dir);
  cfg->faultlog_path = log;
  ck_assert_int_eq (fm_profile_builtin ("roadmap-2006", &cfg->profile, &err),
                    0);
  ck_assert_int_eq (fm_profile_resize (&cfg->profile, SIZE, &err), 0);
  fm_disk_default_options (&cfg->profile, &cfg->caches);
  e = emu_new (cfg, &err);
  ck_assert_msg (e != NULL, "%s", err.msg);
  return e;
}

/* reference: issue 4 item 4.  After a power cut every flushed byte is
 * intact, and the bytes that differ from what was acknowledged are exactly
 * in the ranges the log lists as lost (or as torn, past the prefix kept).
 */
START_TEST (test_powercut)
{
  char dir[64], log[128], line[512];
  struct emu_config cfg = {.seed = 4, .think_zero = true, .wall_ns = wall};
  unsigned char *acked = calloc (1, SIZE), *durable = calloc (1, SIZE);
  unsigned char *lost = calloc (1, SIZE), *buf = malloc (SIZE);
  struct emu_result r;
  struct fm_err err;
  struct emu *e;
  FILE *fp;
  uint64_t i, torn = 0;

  fm_faultset_defaults (&cfg.faults);
  cfg.faults.torn = 0.5;
  e = make_logged (&cfg, dir, log);

  for (i = 0; i < 330; i++) { /* 30 writes after the last flush */
    uint64_t h = fm_hash (21, FM_STREAM_BENCH, i, 0);
    uint64_t len = 512 * (1 + fm_below (h, 64));
    uint64_t off = 512 * fm_below (fm_hash (21, 2, i, 0), (SIZE - len) / 512);

    memset (buf, (int)(i % 250) + 1, len);
    ck_assert_int_eq (
        emu_pwrite (e, buf, len, off, (h >> 8) % 5 == 0, &r, &err), 0);
    memcpy (acked + off, buf, len);
    if ((h >> 8) % 5 == 0) /* FUA: durable at once */
      memcpy (durable + off, buf, len);
    if (i % 50 == 49) {
      ck_assert_int_eq (emu_flush (e, &r, &err), 0);
      memcpy (durable, acked, SIZE);
    }
  }
  ck_assert_int_eq (emu_powercut (e, "test", &err), 0);
  ck_assert_int_eq (emu_pread (e, buf, SIZE, 0, &r, &err), 0);

  /* What the log says was lost: lost ranges, and the tails of torn ones. */
  fp = fopen (log, "r");
  ck_assert_ptr_nonnull (fp);
  while (fgets (line, sizeof line, fp)) {
    unsigned long long off, len;
    char *o = strstr (line, "\"offset\": "), *l = strstr (line, "\"length\": ");

    ck_assert (o && l);
    off = strtoull (o + 10, NULL, 10);
    len = strtoull (l + 10, NULL, 10);
    if (strstr (line, "\"kind\": \"powercut\""))
      memset (lost + off, 1, len);
    else if (strstr (line, "\"kind\": \"torn-write\""))
      torn++;
  }
  fclose (fp);
  /* Sector by sector: lost ranges hold what was durable before the cut,
   * everything else what was acknowledged.
   */
  for (i = 0; i < SIZE; i += 512) {
    const unsigned char *want = lost[i] ? durable : acked;
    if (memcmp (buf + i, want + i, 512) != 0)
      ck_abort_msg ("sector at byte %llu: not what was %s",
                    (unsigned long long)i,
                    lost[i] ? "durable" : "acknowledged");
  }
  ck_assert_uint_gt (torn, 0); /* torn = 0.5 over dozens of extents */
  for (i = 0; i < SIZE && !lost[i]; i += 512)
    ;
  ck_assert_uint_lt (i, SIZE); /* something was lost */
  emu_free (e);
  unlink (log);
  rmdir (dir);
  free (acked);
  free (durable);
  free (lost);
  free (buf);
}
END_TEST

/* ure-recover=: a share of failing reads succeed on retry (and the
 * sector reads from then on); the rest fail with EIO.  Deterministic.
 */
START_TEST (test_ure_recover)
{
  struct emu_config cfg = {.seed = 8, .think_zero = true, .wall_ns = wall};
  struct emu *e[2];
  struct emu_result r;
  struct fm_err err;
  char buf[512];
  int k, i, ok[2] = {0, 0};

  fm_faultset_defaults (&cfg.faults);
  cfg.faults.ure_recover = 0.3;
  ck_assert_int_eq (fm_profile_builtin ("roadmap-2006", &cfg.profile, &err), 0);
  ck_assert_int_eq (fm_profile_resize (&cfg.profile, SIZE, &err), 0);
  fm_disk_default_options (&cfg.profile, &cfg.caches);
  /* The limit must leave room for the retries of a read that comes back
   * (check-recovery prices them).
   */
  cfg.faults.erc_ns = 7000000000ULL;
  for (k = 0; k < 2; k++) {
    e[k] = emu_new (&cfg, &err);
    ck_assert_ptr_nonnull (e[k]);
    for (i = 0; i < 400; i++)
      ck_assert_int_eq (
          emu_inject (e[k], FM_FAULT_URE, i * 65536, 1, "t", &err), 0);
    for (i = 0; i < 400; i++) {
      int rc = emu_pread (e[k], buf, 512, i * 65536, &r, &err);
      ok[k] += rc == 0;
      /* A recovered sector reads from now on. */
      if (rc == 0)
        ck_assert_int_eq (emu_pread (e[k], buf, 512, i * 65536, &r, &err), 0);
    }
  }
  ck_assert_int_eq (ok[0], ok[1]);
  /* 120 expected; binomial sd 9.2. */
  ck_assert_msg (ok[0] > 120 - 40 && ok[0] < 120 + 40, "%d recovered", ok[0]);
  emu_free (e[0]);
  emu_free (e[1]);
}
END_TEST

/* lost-write= and misdirected-write=: replaying the writes as the fault
 * log says they went (lost ones skipped, misdirected ones where they
 * landed) gives exactly what the disk holds.
 */
START_TEST (test_write_faults)
{
  enum {
    N = 600
  };
  struct emu_config cfg = {.seed = 13, .think_zero = true, .wall_ns = wall};
  char dir[64], log[128], line[512];
  unsigned char *want = calloc (1, SIZE), *buf = malloc (SIZE);
  static uint64_t landed[N]; /* where write i went; UINT64_MAX: lost */
  struct emu_result r;
  struct fm_err err;
  struct emu *e;
  FILE *fp;
  int i, lost = 0, moved = 0;

  fm_faultset_defaults (&cfg.faults);
  cfg.faults.lost_write = 0.1;
  cfg.faults.misdirected_write = 0.1;
  e = make_logged (&cfg, dir, log);
  /* Write i goes to its own 64 KiB slot, so the log names it by offset. */
  for (i = 0; i < N; i++) {
    memset (buf, i % 251 + 1, 4096);
    ck_assert_int_eq (emu_pwrite (e, buf, 4096, (uint64_t)i * 65536 + 8192,
                                  i % 3 == 0, &r, &err),
                      0);
    landed[i] = (uint64_t)i * 65536 + 8192;
  }
  ck_assert_int_eq (emu_flush (e, &r, &err), 0);
  fp = fopen (log, "r");
  ck_assert_ptr_nonnull (fp);
  while (fgets (line, sizeof line, fp)) {
    uint64_t off = strtoull (strstr (line, "\"offset\": ") + 10, NULL, 10);
    int w = (int)((off - 8192) / 65536);

    ck_assert_int_lt (w, N);
    if (strstr (line, "\"lost-write\"")) {
      landed[w] = UINT64_MAX;
      lost++;
    } else if (strstr (line, "\"misdirected-write\"")) {
      landed[w] = strtoull (strstr (line, "landed at byte ") + 15, NULL, 10);
      ck_assert_uint_ne (landed[w], off);
      moved++;
    }
  }
  fclose (fp);
  for (i = 0; i < N; i++)
    if (landed[i] != UINT64_MAX)
      memset (want + landed[i], i % 251 + 1, 4096);
  ck_assert_int_eq (emu_pread (e, buf, SIZE, 0, &r, &err), 0);
  ck_assert_msg (memcmp (buf, want, SIZE) == 0,
                 "the disk is not what the log says");
  /* 60 of each expected (binomial sd 7.3). */
  ck_assert_msg (lost > 30 && lost < 90, "%d lost", lost);
  ck_assert_msg (moved > 30 && moved < 90, "%d misdirected", moved);
  emu_free (e);
  unlink (log);
  rmdir (dir);
  free (want);
  free (buf);
}
END_TEST

/* flip-rate=: reads come back with bits flipped, never an error; the
 * flipped bits are exactly those the log lists, and the media is intact.
 */
START_TEST (test_flips)
{
  struct emu_config cfg = {.seed = 17, .think_zero = true, .wall_ns = wall};
  char dir[64], log[128], line[512];
  unsigned char *seen = calloc (1, SIZE), *logged = calloc (1, SIZE);
  unsigned char *buf = malloc (1 << 20);
  struct emu_result r;
  struct fm_err err;
  struct emu *e;
  FILE *fp;
  uint64_t off, i, nflips = 0;

  fm_faultset_defaults (&cfg.faults);
  cfg.faults.flip_rate = 50.0 / ((double)SIZE * 8);
  e = make_logged (&cfg, dir, log);
  /* The disk is all zeros: every set bit that comes back is a flip. */
  for (off = 0; off < SIZE; off += 1 << 20) {
    ck_assert_int_eq (emu_pread (e, buf, 1 << 20, off, &r, &err), 0);
    for (i = 0; i < 1 << 20; i++)
      seen[off + i] = buf[i];
  }
  fp = fopen (log, "r");
  ck_assert_ptr_nonnull (fp);
  while (fgets (line, sizeof line, fp)) {
    uint64_t at = strtoull (strstr (line, "\"offset\": ") + 10, NULL, 10);
    unsigned bit = (unsigned)atoi (strstr (line, "\"bit ") + 5);

    ck_assert_ptr_nonnull (strstr (line, "\"kind\": \"flip\""));
    logged[at] ^= 1u << bit;
    nflips++;
  }
  fclose (fp);
  ck_assert_msg (memcmp (seen, logged, SIZE) == 0,
                 "the flipped bits are not the logged ones");
  ck_assert_msg (nflips > 50 - 30 && nflips < 50 + 30, "%llu flips",
                 (unsigned long long)nflips);
  /* Without flips enabled the same disk reads back all zeros. */
  emu_free (e);
  cfg.faults.flip_rate = 0;
  cfg.faultlog_path = NULL;
  e = emu_new (&cfg, &err);
  ck_assert_int_eq (emu_pread (e, buf, 1 << 20, 0, &r, &err), 0);
  for (i = 0; i < 1 << 20; i++)
    ck_assert_int_eq (buf[i], 0);
  emu_free (e);
  unlink (log);
  rmdir (dir);
  free (seen);
  free (logged);
  free (buf);
}
END_TEST

/* realloc=: rewriting a pending sector may move it to a spare; from then
 * on every access to it detours to the spare area (a seek there and back);
 * with no spare left the write fails.
 */
START_TEST (test_realloc)
{
  struct emu_config cfg = {.seed = 2, .think_zero = true, .wall_ns = wall};
  char dir[64], log[128], buf[4096] = {0};
  struct emu_result r;
  struct fm_err err;
  struct emu *e;

  fm_faultset_defaults (&cfg.faults);
  cfg.faults.realloc = 1;
  cfg.faults.spares = 1;
  e = make_logged (&cfg, dir, log);
  uint64_t before, after;

  /* The same read, twice, costs this much when nothing is remapped. */
  ck_assert_int_eq (emu_pread (e, buf, 4096, 40 << 20, &r, &err), 0);
  ck_assert_int_eq (emu_pread (e, buf, 4096, 1 << 20, &r, &err), 0);
  before = r.done_ns - r.arrival_ns;
  ck_assert_int_eq (emu_inject (e, FM_FAULT_URE, 1 << 20, 512, "t", &err), 0);
  ck_assert_int_eq (emu_inject (e, FM_FAULT_URE, 2 << 20, 512, "t", &err), 0);
  ck_assert_int_eq (emu_pwrite (e, buf, 4096, 1 << 20, true, &r, &err), 0);
  ck_assert_int_eq (emu_pread (e, buf, 4096, 40 << 20, &r, &err), 0);
  ck_assert_int_eq (emu_pread (e, buf, 4096, 1 << 20, &r, &err), 0);
  after = r.done_ns - r.arrival_ns;
  ck_assert_uint_ge (after, before + 2 * cfg.profile.seek_t2t_ns);
  /* The one spare is used: the next bad sector cannot be rewritten. */
  ck_assert_int_eq (emu_pwrite (e, buf, 512, 2 << 20, true, &r, &err), -1);
  ck_assert_ptr_nonnull (strstr (err.msg, "none is left"));
  emu_free (e);
  unlink (log);
  rmdir (dir);
}
END_TEST

/* The log's lines of `kind` and `event`: how many, and (if mask) the
 * bits their "bit N" details name, XORed into mask at their offsets, and
 * (if sectors) a mark at each sector (512 bytes) they start in.
 */
static uint64_t
read_log (const char *log, const char *kind, const char *event,
          unsigned char *mask, unsigned char *sectors)
{
  char line[512], k[64], ev[64];
  uint64_t n = 0;
  FILE *fp = fopen (log, "r");

  ck_assert_ptr_nonnull (fp);
  snprintf (k, sizeof k, "\"kind\": \"%s\"", kind);
  snprintf (ev, sizeof ev, "\"event\": \"%s\"", event);
  while (fgets (line, sizeof line, fp)) {
    uint64_t at;

    if (!strstr (line, k) || !strstr (line, ev))
      continue;
    at = strtoull (strstr (line, "\"offset\": ") + 10, NULL, 10);
    if (mask)
      mask[at] ^= 1u << atoi (strstr (line, "bit ") + 4);
    if (sectors)
      sectors[at / 512] = 1;
    n++;
  }
  fclose (fp);
  return n;
}

/* Which 512-byte sectors fail to read: 64 KiB at a time, then sector by
 * sector where a chunk fails.
 */
static uint64_t
failing_sectors (struct emu *e, unsigned char *bad)
{
  static char buf[65536];
  struct emu_result r;
  struct fm_err err;
  uint64_t off, s, n = 0;

  for (off = 0; off < SIZE; off += sizeof buf) {
    if (emu_pread (e, buf, sizeof buf, off, &r, &err) == 0)
      continue;
    ck_assert_int_eq (errno, EIO);
    for (s = off / 512; s < (off + sizeof buf) / 512; s++)
      if (emu_pread (e, buf, 512, s * 512, &r, &err) == -1) {
        bad[s] = 1;
        n++;
      }
  }
  return n;
}

/* The field model of latent errors (faultmodels/faults.h): an aged,
 * LSE-prone disk starts with latent errors in bursts, all in the log;
 * each fails reads until rewritten; rewriting reallocates or clears in
 * place; the same seed gives the same set.
 */
START_TEST (test_lse)
{
  struct emu_config cfg = {.seed = 31, .think_zero = true, .wall_ns = wall};
  unsigned char *bad = calloc (SIZE / 512, 1), *logged = calloc (SIZE / 512, 1);
  unsigned char *again = calloc (SIZE / 512, 1),
                *other = calloc (SIZE / 512, 1);
  char dir[64], log[128], buf[512] = {0}, *json;
  struct emu_result r;
  struct fm_err err;
  struct emu *e;
  uint64_t n, s, realloc;
  size_t len;
  FILE *fp;

  fm_faultset_defaults (&cfg.faults);
  cfg.faults.age_ns = 2 * 31557600000000000ULL;
  cfg.faults.lse = 1;
  cfg.faults.lse_min = cfg.faults.lse_max = 40;
  cfg.faults.lse_rate = 0;
  cfg.faults.erc_ns = 1000000;
  cfg.faults.realloc = 0.5;
  e = make_logged (&cfg, dir, log);
  n = failing_sectors (e, bad);
  ck_assert_uint_eq (read_log (log, "lse", "inject", NULL, logged), 40);
  ck_assert_msg (memcmp (bad, logged, SIZE / 512) == 0,
                 "failing sectors differ from the logged LSEs");
  ck_assert (n > 0 && n <= 40); /* a burst may draw a sector twice */
  fp = open_memstream (&json, &len);
  emu_stats_json (e, fp);
  fclose (fp);
  ck_assert_ptr_nonnull (strstr (json, "\"lse_prone\": true"));
  ck_assert_ptr_nonnull (strstr (json, "\"lse_episodes\": "));
  free (json);

  /* Rewriting clears every one; about half go to spares. */
  for (s = 0; s < SIZE / 512; s++)
    if (bad[s])
      ck_assert_int_eq (emu_pwrite (e, buf, 512, s * 512, true, &r, &err), 0);
  ck_assert_uint_eq (failing_sectors (e, again), 0);
  realloc = read_log (log, "reallocated", "trigger", NULL, NULL);
  ck_assert_msg (realloc > 0 && realloc < n, "%llu of %llu reallocated",
                 (unsigned long long)realloc, (unsigned long long)n);
  emu_free (e);
  unlink (log); /* the next disk logs in a fresh directory */
  rmdir (dir);

  /* Same seed, same sectors; another seed, others. */
  e = make_logged (&cfg, dir, log);
  memset (again, 0, SIZE / 512);
  failing_sectors (e, again);
  ck_assert (memcmp (bad, again, SIZE / 512) == 0);
  emu_free (e);
  unlink (log); /* the next disk logs in a fresh directory */
  rmdir (dir);
  cfg.seed = 32;
  e = make_logged (&cfg, dir, log);
  failing_sectors (e, other);
  ck_assert (memcmp (bad, other, SIZE / 512) != 0);
  emu_free (e);
  unlink (log); /* the next disk logs in a fresh directory */
  rmdir (dir);
  /* A disk that is not prone has none. */
  cfg.faults.lse = 0;
  e = make_logged (&cfg, dir, log);
  ck_assert_uint_eq (read_log (log, "lse", "inject", NULL, NULL), 0);
  emu_free (e);
  unlink (log);
  rmdir (dir);
  free (bad);
  free (logged);
  free (again);
  free (other);
}
END_TEST

/* lse-rate=: new episodes arrive over virtual time (here the client's
 * idle time), each logged at its onset, each failing reads from then on.
 */
START_TEST (test_lse_onsets)
{
  struct emu_config cfg = {.seed = 5, .think_zero = false, .wall_ns = wall};
  unsigned char *bad = calloc (SIZE / 512, 1), *logged = calloc (SIZE / 512, 1);
  char dir[64], log[128], buf[512], line[512];
  struct emu_result r;
  struct fm_err err;
  struct emu *e;
  uint64_t n, i;
  FILE *fp;

  fm_faultset_defaults (&cfg.faults);
  cfg.faults.age_ns = 3600000000000ULL;
  cfg.faults.lse = 1;
  cfg.faults.lse_min = cfg.faults.lse_max = 1;
  cfg.faults.lse_burst = 1;
  cfg.faults.lse_rate = 3600; /* one a second */
  cfg.faults.erc_ns = 0;
  fake_wall = 0;
  e = make_logged (&cfg, dir, log);
  ck_assert_uint_eq (read_log (log, "lse", "inject", NULL, NULL), 1);
  fake_wall += 200000000000ULL; /* the client idles 200 s */
  emu_pread (e, buf, 512, 0, &r, &err);
  n = read_log (log, "lse", "inject", NULL, logged);
  ck_assert_msg (n > 1 + 200 - 4 * 15 && n < 1 + 200 + 4 * 15, "%llu onsets",
                 (unsigned long long)n);
  /* Onsets carry their own times, inside the idle 200 s. */
  fp = fopen (log, "r");
  while (fgets (line, sizeof line, fp)) {
    uint64_t t = strtoull (strstr (line, "\"virtual_ns\": ") + 14, NULL, 10);
    if (strstr (line, "onset now"))
      ck_assert (t > 0 && t <= r.arrival_ns);
  }
  fclose (fp);
  /* The scan takes virtual time too, and more onsets come during it:
   * every error from before fails, and every failure is logged.
   */
  failing_sectors (e, bad);
  for (i = 0; i < SIZE / 512; i++)
    ck_assert (!logged[i] || bad[i]);
  read_log (log, "lse", "inject", NULL, logged);
  for (i = 0; i < SIZE / 512; i++)
    ck_assert (!bad[i] || logged[i]);
  emu_free (e);
  unlink (log);
  rmdir (dir);
  free (bad);
  free (logged);
}
END_TEST

/* rot-rate=: bits flip at rest on the media as virtual time passes; what
 * reads return differs from what was written in exactly the logged bits,
 * and a rewrite heals them.
 */
START_TEST (test_rot)
{
  struct emu_config cfg = {.seed = 6, .think_zero = false, .wall_ns = wall};
  unsigned char *seen = malloc (SIZE), *logged = calloc (SIZE, 1);
  char dir[64], log[128];
  struct emu_result r;
  struct fm_err err;
  struct emu *e;
  uint64_t n;

  fm_faultset_defaults (&cfg.faults);
  /* About 50 flips in 100 s over 131072 sectors. */
  cfg.faults.rot_rate = 50.0 * 36 / (SIZE / 512);
  fake_wall = 0;
  e = make_logged (&cfg, dir, log);
  fake_wall += 100000000000ULL;
  ck_assert_int_eq (emu_pread (e, seen, SIZE, 0, &r, &err), 0);
  n = read_log (log, "rot", "inject", logged, NULL);
  ck_assert_msg (n > 50 - 4 * 7 && n < 50 + 4 * 7, "%llu flips",
                 (unsigned long long)n);
  ck_assert_msg (memcmp (seen, logged, SIZE) == 0,
                 "the rotted bits are not the logged ones");
  /* Rewritten, the disk reads back clean (in the same virtual second). */
  memset (seen, 0, SIZE);
  ck_assert_int_eq (emu_pwrite (e, seen, SIZE, 0, true, &r, &err), 0);
  ck_assert_int_eq (emu_pread (e, seen, SIZE, 0, &r, &err), 0);
  memset (logged, 0, SIZE);
  ck_assert (memcmp (seen, logged, SIZE) == 0);
  emu_free (e);
  unlink (log);
  rmdir (dir);
  free (seen);
  free (logged);
}
END_TEST

/* stuck-bits=: every stuck bit is in the log from the start; reads return
 * the stuck value whatever was written (zeros, then ones), and each read
 * that it changes is logged too.
 */
START_TEST (test_stuck)
{
  struct emu_config cfg = {.seed = 7, .think_zero = true, .wall_ns = wall};
  unsigned char *seen = malloc (SIZE), *ones = calloc (SIZE, 1);
  unsigned char *zeros = calloc (SIZE, 1);
  char dir[64], log[128], line[512];
  struct emu_result r;
  struct fm_err err;
  struct emu *e;
  uint64_t i, n = 0;
  FILE *fp;

  fm_faultset_defaults (&cfg.faults);
  cfg.faults.stuck_bits = 50.0 / ((double)SIZE * 8);
  e = make_logged (&cfg, dir, log);
  fp = fopen (log, "r");
  while (fgets (line, sizeof line, fp)) {
    uint64_t at = strtoull (strstr (line, "\"offset\": ") + 10, NULL, 10);
    unsigned bit = (unsigned)atoi (strstr (line, "bit ") + 4);
    unsigned v = (unsigned)atoi (strstr (line, "stuck at ") + 9);

    ck_assert_ptr_nonnull (strstr (line, "\"kind\": \"stuck\""));
    (v ? ones : zeros)[at] |= 1u << bit;
    n++;
  }
  fclose (fp);
  ck_assert_msg (n > 50 - 4 * 7 && n < 50 + 4 * 7, "%llu stuck bits",
                 (unsigned long long)n);
  ck_assert_int_eq (emu_pread (e, seen, SIZE, 0, &r, &err), 0);
  ck_assert (memcmp (seen, ones, SIZE) == 0);
  memset (seen, 0xff, SIZE);
  ck_assert_int_eq (emu_pwrite (e, seen, SIZE, 0, true, &r, &err), 0);
  ck_assert_int_eq (emu_pread (e, seen, SIZE, 0, &r, &err), 0);
  for (i = 0; i < SIZE; i++)
    zeros[i] = (unsigned char)~zeros[i];
  ck_assert (memcmp (seen, zeros, SIZE) == 0);
  ck_assert_uint_eq (read_log (log, "stuck", "trigger", NULL, NULL), n);
  emu_free (e);
  unlink (log);
  rmdir (dir);
  free (seen);
  free (ones);
  free (zeros);
}
END_TEST

/* corrupt=0: a disk that drew no silent corruption neither flips, rots,
 * sticks, loses nor misdirects, whatever the rates say.
 */
START_TEST (test_corrupt_gate)
{
  struct emu_config cfg = {.seed = 7, .think_zero = true, .wall_ns = wall};
  unsigned char *seen = malloc (SIZE);
  char dir[64], log[128];
  struct emu_result r;
  struct fm_err err;
  struct emu *e;
  uint64_t i;

  fm_faultset_defaults (&cfg.faults);
  cfg.faults.corrupt = 0;
  cfg.faults.stuck_bits = 1e-7;
  cfg.faults.flip_rate = 1e-7;
  cfg.faults.lost_write = 1;
  e = make_logged (&cfg, dir, log);
  memset (seen, 0x5a, SIZE);
  ck_assert_int_eq (emu_pwrite (e, seen, SIZE, 0, true, &r, &err), 0);
  ck_assert_int_eq (emu_pread (e, seen, SIZE, 0, &r, &err), 0);
  for (i = 0; i < SIZE; i++)
    if (seen[i] != 0x5a)
      ck_abort_msg ("byte %llu is 0x%02x", (unsigned long long)i, seen[i]);
  emu_free (e);
  ck_assert_uint_eq (read_log (log, "stuck", "inject", NULL, NULL), 0);
  unlink (log);
  rmdir (dir);
  free (seen);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"shadow", test_shadow},
      {"volatile_cache", test_volatile_cache},
      {"clock", test_clock},
      {"think_cpu", test_think_cpu},
      {"extents", test_extents},
      {"stats", test_stats},
      {"partial_blocks", test_partial_blocks},
      {"faults", test_faults},
      {"ber_order", test_ber_order},
      {"powercut", test_powercut},
      {"ure_recover", test_ure_recover},
      {"write_faults", test_write_faults},
      {"flips", test_flips},
      {"realloc", test_realloc},
      {"lse", test_lse},
      {"lse_onsets", test_lse_onsets},
      {"rot", test_rot},
      {"stuck", test_stuck},
      {"corrupt_gate", test_corrupt_gate},
      {"failed_read_paced", test_failed_read_paced},
      {"deep_window", test_deep_window},
  };

  return fd_check_main ("emu", cases, sizeof cases / sizeof cases[0]);
}
