/* futuredisk — harness: attach and detach an emulated disk (see attach.h).
 *
 * Order of attaching: nbdkit (daemonized, pid file); then either the
 * kernel's nbd client on /dev/nbdN (nbd-client), or nbdfuse (its file is
 * the disk) and a loop device over that file with direct I/O (without it
 * the page cache would absorb re-reads and hide latency and bad sectors);
 * mkfs, mount.  Detaching walks the same list backwards, each step only
 * if it was done.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <mntent.h>
#include <pwd.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libnbd.h>

#include "faultmodels/faultset.h"
#include "attach.h"
#include "ctlclient.h"
#include "errmsg.h"
#include "fsadapter.h"
#include "proc.h"

#define TOOL_TIMEOUT 120 /* seconds for losetup, mount, umount ... */
#define NBD_TRIES    16  /* nbd devices tried when others take them first */
/* Seconds from a SIGTERM (or SIGINT, SIGHUP) to aborting the FUSE
 * connections still up: a healthy teardown (the running command killed,
 * umount with the daemon's last sync, losetup -d) takes well under a
 * second on an emulated disk, while a request the disk holds (time=real
 * on a slow model, a stopped server) may never be answered, and umount,
 * losetup -d, fusermount3 and even the killed command wait for it in
 * the kernel, where no signal reaches.  An interrupted trial is not
 * recorded, so what an abort loses (the daemon's last sync) was going to
 * be thrown away anyway.
 */
#define ABORT_GRACE_S 5
#define FUSE_CONNS    16 /* FUSE connections watched at once */
#define FUSECTL       "/sys/fs/fuse/connections"

struct fd_disk {
  char dir[PATH_MAX];
  char sockdir[64]; /* the sockets' own directory, when dir is too long */
  char sock[PATH_MAX], ctl[PATH_MAX], pidfile[PATH_MAX];
  char fusedir[PATH_MAX], fusefile[PATH_MAX], fusepid[PATH_MAX];
  char dev[64];
  char mount[PATH_MAX];
  char fsname[32]; /* the adapter's */
  char fstype[32];
  char mount_opts[64];
  pid_t nbdkit_pid, nbdfuse_pid;
  unsigned fuse_conn, fs_conn; /* nbdfuse's, a FUSE file system's (or 0) */
  bool nbd;    /* dev is a kernel nbd device, else a loop device */
  bool serial; /* a loop device over one single-threaded nbdfuse */
  bool fuse_mounted, mounted;
  /* The kernel log from the attach on (-1: none readable): what it says
   * of dev goes to kernel.log in dir at the detach.
   */
  int kfd;
  char reason[512]; /* why the last mount failed, or "" */
};

int
fd_fault_spec (char *spec, const char **out, size_t max, size_t *n,
               struct fm_err *err)
{
  static char words[FD_FAULT_KEYS_MAX][160];
  char *tok, *save = NULL;

  for (tok = strtok_r (spec, ",", &save); tok;
       tok = strtok_r (NULL, ",", &save)) {
    if (*n >= max || *n >= FD_FAULT_KEYS_MAX)
      return fm_fail (err, "--faults: more than %zu keys",
                      max < FD_FAULT_KEYS_MAX ? max : FD_FAULT_KEYS_MAX);
    snprintf (words[*n], sizeof words[*n], "%s%s",
              strchr (tok, '=') ? "" : "faults=", tok);
    out[*n] = words[*n];
    (*n)++;
  }
  return 0;
}

/* The fault set a --faults SPEC describes (from preset none). */
static int
spec_faultset (const char *spec, struct fm_faultset *set, struct fm_err *err)
{
  char copy[4096];
  const char *kv[FD_FAULT_KEYS_MAX];
  size_t n = 0, i;

  snprintf (copy, sizeof copy, "%s", spec);
  if (fd_fault_spec (copy, kv, FD_FAULT_KEYS_MAX, &n, err) == -1)
    return -1;
  fm_faultset_preset (set, "none", err);
  for (i = 0; i < n; i++) {
    char key[64];
    const char *eq = strchr (kv[i], '=');
    snprintf (key, sizeof key, "%.*s", (int)(eq - kv[i]), kv[i]);
    if (fm_faultset_set (set, key, eq + 1, err) == -1)
      return -1;
  }
  return 0;
}

int
fd_fault_spec_check (const char *spec, struct fm_err *err)
{
  struct fm_faultset scratch;

  return spec_faultset (spec, &scratch, err);
}

int
fd_fault_spec_writes (const char *spec, char keys[FD_WRITE_FAULT_KEYS][48],
                      size_t *n, struct fm_err *err)
{
  struct fm_faultset set;

  *n = 0;
  if (spec_faultset (spec, &set, err) == -1)
    return -1;
  if (set.lost_write > 0)
    snprintf (keys[(*n)++], 48, "lost-write=%.17g", set.lost_write);
  if (set.misdirected_write > 0)
    snprintf (keys[(*n)++], 48, "misdirected-write=%.17g",
              set.misdirected_write);
  if (set.torn > 0)
    snprintf (keys[(*n)++], 48, "torn=%.17g", set.torn);
  return 0;
}

/* Everything lives in d->dir, under fixed names; the sockets in
 * d->sockdir when there is one.
 */
static void
set_paths (struct fd_disk *d)
{
  const char *sd = d->sockdir[0] ? d->sockdir : d->dir;

  snprintf (d->sock, sizeof d->sock, "%s/nbd.sock", sd);
  snprintf (d->ctl, sizeof d->ctl, "%s/control.sock", sd);
  snprintf (d->pidfile, sizeof d->pidfile, "%s/nbdkit.pid", d->dir);
  snprintf (d->fusedir, sizeof d->fusedir, "%s/fuse", d->dir);
  snprintf (d->fusefile, sizeof d->fusefile, "%s/fuse/disk", d->dir);
  snprintf (d->fusepid, sizeof d->fusepid, "%s/nbdfuse.pid", d->dir);
}

const char *
fd_plugin_path (void)
{
  const char *env = getenv ("FUTUREDISK_PLUGIN");

  if (env && *env)
    return env;
#ifdef FD_PLUGIN_BUILD_PATH
  /* Gone (an installed futuredisk whose build tree was removed): the
   * installed plugin.  There but unreadable (a checkout under a 0700
   * directory, run as another user) is check_plugin's error, not a reason
   * to load another plugin than the one built with this binary.
   */
  if (access (FD_PLUGIN_BUILD_PATH, R_OK) == 0 ||
      (errno != ENOENT && errno != ENOTDIR))
    return FD_PLUGIN_BUILD_PATH;
#endif
  return "futuredisk";
}

/* A user's name, for messages: "nobody", else "uid 65534". */
static const char *
user_name (uid_t uid, char *buf, size_t len)
{
  struct passwd *pw = getpwuid (uid);

  if (pw)
    snprintf (buf, len, "%s", pw->pw_name);
  else
    snprintf (buf, len, "uid %ld", (long)uid);
  return buf;
}

/* Can nbdkit, which runs as we do, read the plugin?  A plugin named by a
 * path that cannot be read is an error naming the directory in the way
 * (or the file's own mode), said before nbdkit is started: nbdkit would
 * say only "Permission denied", and one started with a sanitizer's
 * runtime preloaded hangs after saying it.  A bare name is nbdkit's to
 * find in its plugin directory.
 */
static int
check_plugin (const char *plugin, struct fm_err *err)
{
  char dir[PATH_MAX], why[PATH_MAX + 96], me[64], owner[64];
  const char *slash, *at = plugin;
  struct stat st;
  int e;

  if (strchr (plugin, '/') == NULL ||
      faccessat (AT_FDCWD, plugin, R_OK, AT_EACCESS) == 0)
    return 0;
  if ((e = errno) != EACCES)
    return fm_fail (err, "the plugin %s: %s", plugin, fd_strerror (e));
  /* The first directory on the way that we may not search, else the
   * file itself.
   */
  for (slash = strchr (plugin + 1, '/'); slash;
       slash = strchr (slash + 1, '/')) {
    snprintf (dir, sizeof dir, "%.*s", (int)(slash - plugin), plugin);
    if (faccessat (AT_FDCWD, dir, X_OK, AT_EACCESS) == -1) {
      at = dir;
      break;
    }
  }
  snprintf (why, sizeof why, "%s", fd_strerror (e));
  if (stat (at, &st) == 0)
    snprintf (why, sizeof why, "%s is mode %04o, owned by %s", at,
              (unsigned)(st.st_mode & 07777),
              user_name (st.st_uid, owner, sizeof owner));
  user_name (geteuid (), me, sizeof me);
  return fm_fail (err,
                  "the plugin %s is not readable by user %s: %s (set "
                  "FUTUREDISK_PLUGIN to a copy %s can read)",
                  plugin, me, why, me);
}

static void
sleep_ms (int ms)
{
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

  /* The whole time even if a signal arrives: retry loops count on it. */
  while (nanosleep (&ts, &ts) == -1 && errno == EINTR)
    ;
}

/* Wait for a daemon's pid file; its pid, or -1 with err. */
static pid_t
wait_pidfile (const char *path, const char *what, double seconds,
              struct fm_err *err)
{
  int i;

  for (i = 0; i < seconds * 50; i++) {
    FILE *fp = fopen (path, "r");
    long pid = 0;

    if (fp) {
      int ok = fscanf (fp, "%ld", &pid) == 1;
      fclose (fp);
      if (ok && pid > 0)
        return (pid_t)pid;
    }
    sleep_ms (20);
  }
  return fm_fail (err, "%s did not start within %g s", what, seconds);
}

/* Has pid exited?  Our own children (nbdfuse) are reaped here: until
 * then a zombie would still answer kill (pid, 0).
 */
static bool
gone (pid_t pid)
{
  if (waitpid (pid, NULL, WNOHANG) == pid)
    return true;
  return kill (pid, 0) == -1 && errno == ESRCH;
}

static bool
dead (pid_t pid)
{
  char path[64], buf[1024], *paren;
  FILE *fp;
  size_t n;
  long threads = 0;

  if (gone (pid))
    return true;
  /* A zombie that nobody has reaped yet (not our child) is dead too,
   * unless only its first thread has ended (num_threads, field 20).
   */
  snprintf (path, sizeof path, "/proc/%ld/stat", (long)pid);
  if ((fp = fopen (path, "r")) == NULL)
    return true;
  n = fread (buf, 1, sizeof buf - 1, fp);
  fclose (fp);
  buf[n] = '\0';
  paren = strrchr (buf, ')');
  if (paren == NULL || paren[1] != ' ' || (paren[2] != 'Z' && paren[2] != 'X'))
    return false;
  return sscanf (paren + 3,
                 " %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
                 "%*d %*d %ld",
                 &threads) != 1 ||
         threads <= 1;
}

/* Signal a process and wait until it is dead (escalating to SIGKILL
 * after grace_s seconds).  Dead, not gone: a daemon that is not our
 * child stays a zombie until init reaps it, which in a container can
 * take a second (measured: each detach waited 1-1.5 s for nbdkit's
 * zombie, most of a 512 MiB trial's time outside its phases).
 */
static void
stop_pid (pid_t pid, int sig, int grace_s)
{
  int i;

  if (pid <= 0 || kill (pid, sig) == -1)
    return;
  for (i = 0; i < grace_s * 50; i++) {
    if (dead (pid))
      return;
    sleep_ms (20);
  }
  kill (pid, SIGKILL);
  for (i = 0; i < 5 * 50 && !dead (pid); i++)
    sleep_ms (20);
}

/* Is path mounted on?  From /proc/mounts, not stat: a FUSE mount whose
 * server died cannot be stat'ed but must still be unmounted.
 */
static bool
is_mount_point (const char *path)
{
  FILE *fp = fopen ("/proc/mounts", "r");
  char line[PATH_MAX * 2], dev[PATH_MAX], dir[PATH_MAX];
  bool found = false;

  if (fp == NULL)
    return true; /* can't tell: try to unmount */
  while (!found && fgets (line, sizeof line, fp))
    found = sscanf (line, "%4095s %4095s", dev, dir) == 2 &&
            strcmp (dir, path) == 0;
  fclose (fp);
  return found;
}

/* Is pid a running `name` (its /proc comm)? */
static bool
is_named (pid_t pid, const char *name)
{
  char path[64], comm[64] = "";
  FILE *fp;

  if (pid <= 0)
    return false;
  snprintf (path, sizeof path, "/proc/%ld/comm", (long)pid);
  if ((fp = fopen (path, "r")) == NULL)
    return false;
  if (fgets (comm, sizeof comm, fp) == NULL)
    comm[0] = '\0';
  fclose (fp);
  comm[strcspn (comm, "\n")] = '\0';
  return strcmp (comm, name) == 0;
}

/* ---- the FUSE watchdog ----
 *
 * After an interrupt, the FUSE connections of the disks still attached
 * (nbdfuse's, and a FUSE file system's such as chunkfs) are aborted
 * through fusectl once ABORT_GRACE_S have passed: every request of the
 * connection then fails at once, so nothing waits on a daemon that does
 * not answer.  A thread does it, since the process's own thread may be
 * the one waiting.  The table is lock-free (a fork may copy it in any
 * state); each process that forks and attaches starts its own thread.
 */
static _Atomic unsigned watched[FUSE_CONNS];
static _Atomic pid_t watchdog_pid;

/* A mountinfo field as it is: its \ooo escapes (space, tab, newline,
 * backslash) decoded in place.
 */
static void
unescape_octal (char *s)
{
  char *out = s;

  for (; *s; s++)
    if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
        s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
      *out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
      s += 3;
    } else
      *out++ = *s;
  *out = '\0';
}

/* The kernel's id of the FUSE connection mounted on `path` (its
 * superblock's dev_t in the kernel's encoding, MAJOR << 20 | MINOR: a
 * fuseblk mount's is its block device's), from /proc/self/mountinfo,
 * since stat would ask the daemon; 0 if none.
 */
static unsigned
fuse_conn_of (const char *path)
{
  FILE *fp = fopen ("/proc/self/mountinfo", "r");
  char line[PATH_MAX * 2 + 512], at[PATH_MAX], type[64];
  unsigned maj, min, id = 0;

  if (fp == NULL)
    return 0;
  while (fgets (line, sizeof line, fp)) {
    const char *dash = strstr (line, " - ");
    if (sscanf (line, "%*u %*u %u:%u %*s %4095s", &maj, &min, at) != 3 ||
        dash == NULL || sscanf (dash, " - %63s", type) != 1)
      continue;
    unescape_octal (at);
    if (strcmp (at, path) == 0 && strncmp (type, "fuse", 4) == 0)
      id = maj << 20 | min; /* the last mount on path is the one seen */
  }
  fclose (fp);
  return id;
}

static void
abort_conn (unsigned id)
{
  char path[64];
  int fd;

  snprintf (path, sizeof path, FUSECTL "/%u/abort", id);
  if ((fd = open (path, O_WRONLY)) == -1) {
    fprintf (stderr, "futuredisk: %s: %s\n", path, fd_strerror (errno));
    return;
  }
  if (write (fd, "1", 1) == 1)
    fprintf (stderr,
             "futuredisk: FUSE connection %u aborted: still up %d s after "
             "the signal\n",
             id, ABORT_GRACE_S);
  close (fd);
}

/* Is SIGINT, SIGTERM or SIGHUP pending for the process?  Its handler
 * (which sets fd_interrupted) runs only when the thread it went to
 * leaves the kernel, and that thread may be the one a FUSE request
 * holds: the signal then waits in the process's shared queue.
 */
static bool
signal_pending (void)
{
  FILE *fp = fopen ("/proc/self/status", "r");
  char line[256];
  unsigned long long pend = 0;

  if (fp == NULL)
    return false;
  while (fgets (line, sizeof line, fp))
    if (sscanf (line, "ShdPnd: %llx", &pend) == 1)
      break;
  fclose (fp);
  return pend &
         (1ull << (SIGINT - 1) | 1ull << (SIGTERM - 1) | 1ull << (SIGHUP - 1));
}

static void *
watchdog (void *unused)
{
  double since = 0;

  for (;;) {
    sleep_ms (100);
    if (!fd_interrupted && !signal_pending ()) {
      since = 0;
      continue;
    }
    if (since == 0)
      since = fd_now_s ();
    if (fd_now_s () - since < ABORT_GRACE_S)
      continue;
    for (int i = 0; i < FUSE_CONNS; i++) {
      unsigned id = atomic_exchange (&watched[i], 0);
      if (id)
        abort_conn (id);
    }
  }
  return unused;
}

/* Watch the FUSE connection on mount point `path`: its id, or 0. */
static unsigned
watch_fuse (const char *path)
{
  unsigned id = fuse_conn_of (path);
  sigset_t all, old;
  pthread_t t;

  if (id == 0)
    return 0;
  /* fusectl, where the abort files are, is mounted by systemd on most
   * machines but not in a container.
   */
  {
    char dir[64];
    snprintf (dir, sizeof dir, FUSECTL "/%u", id);
    if (access (dir, F_OK) != 0)
      mount ("fusectl", FUSECTL, "fusectl", 0, NULL);
  }
  for (int i = 0; i < FUSE_CONNS; i++) {
    unsigned none = 0;
    if (atomic_compare_exchange_strong (&watched[i], &none, id))
      break;
  }
  if (atomic_load (&watchdog_pid) == getpid ())
    return id;
  /* Signals go to the thread they are meant to interrupt, not to this. */
  sigfillset (&all);
  pthread_sigmask (SIG_BLOCK, &all, &old);
  if (pthread_create (&t, NULL, watchdog, NULL) == 0) {
    pthread_detach (t);
    atomic_store (&watchdog_pid, getpid ());
  }
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  return id;
}

/* The connection is gone (unmounted): no longer watched. */
static void
unwatch_fuse (unsigned *id)
{
  for (int i = 0; *id && i < FUSE_CONNS; i++) {
    unsigned mine = *id;
    atomic_compare_exchange_strong (&watched[i], &mine, 0);
  }
  *id = 0;
}

static int
start_nbdkit (struct fd_disk *d, const struct fd_attach_opts *o,
              struct fm_err *err)
{
  /* env + 2, nbdkit -P F -U S PLUGIN, 8 keys, the extras, NULL */
  char *argv[3 + 6 + 8 + FD_FAULT_KEYS_MAX + 1], profile[300], size[80],
      seed[40], ctl[PATH_MAX + 16], base[PATH_MAX + 16];
  char stats[PATH_MAX + 16], log[PATH_MAX + 16], store[PATH_MAX + 16];
  char preload[PATH_MAX + 16], daemon_log[PATH_MAX + 16];
  const char *pre = getenv ("FD_NBDKIT_PRELOAD"), *plugin = fd_plugin_path ();
  size_t n = 0, i;

  if (check_plugin (plugin, err) == -1)
    return -1;
  /* A plugin built with ASan needs its runtime preloaded into nbdkit. */
  if (pre && *pre) {
    snprintf (preload, sizeof preload, "LD_PRELOAD=%s", pre);
    argv[n++] = (char *)"env";
    argv[n++] = preload;
    argv[n++] = (char *)"ASAN_OPTIONS=detect_leaks=0";
  }
  argv[n++] = (char *)"nbdkit";
  argv[n++] = (char *)"-P";
  argv[n++] = d->pidfile;
  argv[n++] = (char *)"-U";
  argv[n++] = d->sock;
  argv[n++] = (char *)plugin;
  if (o->profile) {
    snprintf (profile, sizeof profile, "profile=%s", o->profile);
    argv[n++] = profile;
  }
  if (o->size) {
    snprintf (size, sizeof size, "size=%s", o->size);
    argv[n++] = size;
  }
  snprintf (seed, sizeof seed, "seed=%llu", (unsigned long long)o->seed);
  argv[n++] = seed;
  snprintf (ctl, sizeof ctl, "control=%s", d->ctl);
  argv[n++] = ctl;
  snprintf (stats, sizeof stats, "stats=%s/stats.json", d->dir);
  argv[n++] = stats;
  if (o->faultlog)
    snprintf (log, sizeof log, "faultlog=%s", o->faultlog);
  else
    snprintf (log, sizeof log, "faultlog=%s/faults.jsonl", d->dir);
  argv[n++] = log;
  if (o->store) {
    snprintf (store, sizeof store, "store=%s", o->store);
    argv[n++] = store;
  }
  if (o->base) {
    snprintf (base, sizeof base, "base=%s", o->base);
    argv[n++] = base;
  }
  if (o->n_extra > FD_FAULT_KEYS_MAX)
    return fm_fail (err, "more than %d extra plugin parameters",
                    FD_FAULT_KEYS_MAX);
  for (i = 0; i < o->n_extra; i++)
    argv[n++] = (char *)o->extra[i];
  argv[n] = NULL;
  snprintf (daemon_log, sizeof daemon_log, "%s/nbdkit.log", d->dir);
  /* Before it is ready, every error nbdkit prints is fatal. */
  if (fd_run_daemon (argv, daemon_log, ": error: ", TOOL_TIMEOUT, err) == -1) {
    /* Interrupted while nbdkit was starting: its server may have forked
     * already and will still write its pid file.  Wait for it a little,
     * so detach can stop it.
     */
    if (fd_interrupted) {
      struct fm_err ignored;
      pid_t pid = wait_pidfile (d->pidfile, "nbdkit", 2, &ignored);
      d->nbdkit_pid = pid > 0 ? pid : 0;
    }
    return -1;
  }
  d->nbdkit_pid = wait_pidfile (d->pidfile, "nbdkit", 30, err);
  return d->nbdkit_pid == -1 ? -1 : 0;
}

static int
start_nbdfuse (struct fd_disk *d, struct fm_err *err)
{
  char *argv[10];
  size_t n = 0;
  char log[PATH_MAX + 16];
  struct stat st;

  if (mkdir (d->fusedir, 0700) == -1 && errno != EEXIST) {
    return fm_fail (err, "%s: %s", d->fusedir, fd_strerror (errno));
  }
  argv[n++] = (char *)"nbdfuse";
  argv[n++] = (char *)"-P";
  argv[n++] = d->fusepid;
  /* Serial: one FUSE thread and one connection, so the requests reach
   * the drive one at a time, in the order the kernel sent them.
   * Otherwise FUSE's threads take them as they come and nbdfuse spreads
   * them over its connections at random: their order, and which ones
   * the drive queues together, change from run to run.
   */
  if (d->serial) {
    argv[n++] = (char *)"-s";
    argv[n++] = (char *)"-C";
    argv[n++] = (char *)"1";
  }
  argv[n++] = d->fusefile;
  argv[n++] = (char *)"--unix";
  argv[n++] = d->sock;
  argv[n] = NULL;
  snprintf (log, sizeof log, "%s/nbdfuse.log", d->dir);
  /* nbdfuse stays in the foreground; its pid file says it is ready. */
  d->fuse_mounted = true; /* (perhaps half-way: detach checks) */
  if ((d->nbdfuse_pid = fd_spawn (argv, log, err)) == -1)
    return -1;
  if (wait_pidfile (d->fusepid, "nbdfuse", 30, err) == -1)
    return -1;
  if (stat (d->fusefile, &st) == -1) {
    return fm_fail (err, "nbdfuse: %s: %s", d->fusefile, fd_strerror (errno));
  }
  d->fuse_conn = watch_fuse (d->fusedir);
  return 0;
}

static int
start_loop (struct fd_disk *d, struct fm_err *err)
{
  char *argv[] = {(char *)"losetup", (char *)"--direct-io=on",
                  (char *)"-f",      (char *)"--show",
                  d->fusefile,       NULL};
  struct fd_proc p;
  int r;

  /* A signal must not kill losetup between attaching a device and
   * telling us which: that device would be lost to the detach.
   */
  fd_shield_begin ();
  r = fd_run (argv, TOOL_TIMEOUT, &p, err);
  fd_shield_end ();
  if (r == -1)
    return -1;
  if (p.status != 0 || strncmp (p.out, "/dev/", 5) != 0) {
    fm_fail (err, "%s: exit %d: %s", fd_argv_str (argv), p.status, p.err);
    fd_proc_free (&p);
    return -1;
  }
  snprintf (d->dev, sizeof d->dev, "%s", p.out);
  d->dev[strcspn (d->dev, "\n")] = '\0';
  fd_proc_free (&p);
  return 0;
}

/* The kernel's read-ahead for the device: what it gives a disk that
 * reports no optimal I/O size (128 KiB), whichever device we were given.
 * A loop device's depends on its history: one that had been attached to
 * a file on the machine's own disk had 2,560 KiB, and kept it over our
 * FUSE file; telling it whether the disk spins (tell_rotational) may set
 * it again, so this comes after.  The same trial then read its metadata
 * in 1 MiB requests or in 128 KiB ones, depending on the device it got:
 * 747 or 846 check reads, 3.86 or 4.40 virtual seconds (ext4,
 * roadmap-2006, 50,000 files).
 */
#define READ_AHEAD_SECTORS 256

static int
pin_read_ahead (struct fd_disk *d, struct fm_err *err)
{
  long got = 0;
  int fd = open (d->dev, O_RDONLY | O_CLOEXEC);

  if (fd == -1)
    return fm_fail (err, "%s: %s", d->dev, fd_strerror (errno));
  if (ioctl (fd, BLKRASET, (unsigned long)READ_AHEAD_SECTORS) == -1 ||
      ioctl (fd, BLKRAGET, &got) == -1) {
    int e = errno;
    close (fd);
    return fm_fail (err, "%s: setting its read-ahead to %d KiB: %s", d->dev,
                    READ_AHEAD_SECTORS / 2, fd_strerror (e));
  }
  close (fd);
  if (got != READ_AHEAD_SECTORS)
    return fm_fail (err, "%s: read-ahead set to %d KiB, reads back %ld KiB",
                    d->dev, READ_AHEAD_SECTORS / 2, got / 2);
  return 0;
}

/* The drive waits for its client (nbdkit-futuredisk-plugin(1), "Exact
 * decisions"): it counts the device's requests in flight against the
 * requests it holds, so every request the loop device has started must
 * reach it, and as one NBD request.  FUSE passes a loop device's request
 * to nbdfuse whole up to 512 KiB (128 pages, whatever the buffer's
 * alignment: 1 MiB direct reads at an offset 512 bytes into a page
 * arrive as 512 KiB pieces, one per loop request, once the loop device's
 * requests are capped there), and splits a larger one.  And it holds
 * back asynchronous requests past its max_background (12 by default: a
 * client 16 deep had 16 requests in the loop device and 13 in FUSE),
 * which then never reach the plugin until another returns; the loop
 * device starts at most nr_requests, so that many may go.  The nbd
 * device sends each request whole and at once.
 */
#define ONE_FUSE_REQUEST_KB 512

static int
write_number (const char *path, unsigned long v, struct fm_err *err)
{
  FILE *fp = fopen (path, "w");

  if (fp == NULL)
    return fm_fail (err, "%s: %s", path, fd_strerror (errno));
  fprintf (fp, "%lu\n", v);
  if (fclose (fp) == EOF)
    return fm_fail (err, "%s: writing %lu: %s", path, v, fd_strerror (errno));
  return 0;
}

static int
pass_requests_whole (struct fd_disk *d, struct fm_err *err)
{
  char path[128];
  unsigned long depth;
  FILE *fp;

  if (d->nbd)
    return 0;
  snprintf (path, sizeof path, "/sys/block/%s/queue/max_sectors_kb",
            d->dev + strlen ("/dev/"));
  if (write_number (path, ONE_FUSE_REQUEST_KB, err) == -1)
    return -1;
  snprintf (path, sizeof path, "/sys/block/%s/queue/nr_requests",
            d->dev + strlen ("/dev/"));
  if ((fp = fopen (path, "r")) == NULL)
    return fm_fail (err, "%s: %s", path, fd_strerror (errno));
  if (fscanf (fp, "%lu", &depth) != 1)
    depth = 0;
  fclose (fp);
  if (depth == 0)
    return fm_fail (err, "%s: not a number", path);
  if (d->fuse_conn == 0)
    return fm_fail (err, "%s: no FUSE connection to pass %lu requests at once",
                    d->fusefile, depth);
  snprintf (path, sizeof path, FUSECTL "/%u/max_background", d->fuse_conn);
  if (write_number (path, depth, err) == -1)
    return -1;
  snprintf (path, sizeof path, FUSECTL "/%u/congestion_threshold",
            d->fuse_conn);
  return write_number (path, depth, err);
}

/* Tell the plugin which device its client sends through, and which
 * process relays the loop device's requests (nbdfuse), so that the
 * drive can see when every request has reached it.
 */
static int
tell_device (struct fd_disk *d, struct fm_err *err)
{
  char line[128];

  /* Serial's single FUSE thread holds the rest of a deep client's
   * requests upstream, one at a time: the count never settles.
   */
  if (d->serial)
    return 0;

  snprintf (line, sizeof line, "set device=%s", d->dev + strlen ("/dev/"));
  if (fd_ctl_ok (d->ctl, line, NULL, err) == -1)
    return -1;
  if (d->nbd)
    return 0;
  snprintf (line, sizeof line, "set relay=%ld", (long)d->nbdfuse_pid);
  return fd_ctl_ok (d->ctl, line, NULL, err);
}

/* Tell the kernel whether a loop device's disk spins, as the NBD export
 * says (the nbd device takes it from the export itself): a loop device
 * over a FUSE file says it does not, and the file systems lay out
 * differently on a disk they believe solid-state (btrfs's ssd mode, ext4's
 * group scan).  Asked of the server, so that the answer is the profile's
 * whatever named it.
 */
static int
tell_rotational (struct fd_disk *d, struct fm_err *err)
{
  char path[128];
  struct nbd_handle *h;
  int rot;

  if (d->nbd)
    return 0;
  if ((h = nbd_create ()) == NULL)
    return fm_fail (err, "libnbd: %s", nbd_get_error ());
  if (nbd_connect_unix (h, d->sock) == -1 ||
      (rot = nbd_is_rotational (h)) == -1) {
    fm_fail (err, "%s: asking the server whether the disk spins: %s", d->sock,
             nbd_get_error ());
    nbd_close (h);
    return -1;
  }
  nbd_shutdown (h, 0);
  nbd_close (h);
  snprintf (path, sizeof path, "/sys/block/%s/queue/rotational",
            d->dev + strlen ("/dev/"));
  return write_number (path, (unsigned long)rot, err);
}

/* The ways a disk becomes a block device, as fd_disk_via names them. */
static const char *const vias[] = {"nbd", "loop", "serial"};

const char *
fd_attach_via_name (const char *via)
{
  size_t i;

  for (i = 0; via && i < sizeof vias / sizeof vias[0]; i++)
    if (strcmp (via, vias[i]) == 0)
      return vias[i];
  return NULL;
}

int
fd_attach_via_check (const char *label, const char *via, struct fm_err *err)
{
  if (via == NULL || strcmp (via, "auto") == 0 || fd_attach_via_name (via))
    return 0;
  return fm_fail (err, "%s %.32s: not one of auto, nbd, loop, serial", label,
                  via);
}

/* Is an executable `name` on PATH? */
static bool
on_path (const char *name)
{
  const char *path = getenv ("PATH"), *p, *colon;
  char file[PATH_MAX];

  for (p = path ? path : "/usr/bin:/bin"; *p; p = colon + 1) {
    colon = strchrnul (p, ':');
    snprintf (file, sizeof file, "%.*s/%s", (int)(colon - p), p, name);
    if (access (file, X_OK) == 0)
      return true;
    if (*colon == '\0')
      break;
  }
  return false;
}

/* Does the kernel have nbd devices?  Loads the module when it can; most
 * containers have no modules to load, and modprobe then fails quietly.
 */
static bool
kernel_has_nbd (void)
{
  char *argv[] = {(char *)"modprobe", (char *)"-q", (char *)"nbd", NULL};
  struct fm_err e;

  if (access ("/sys/block/nbd0", F_OK) == 0)
    return true;
  if (on_path ("modprobe"))
    fd_run_ok (argv, TOOL_TIMEOUT, &e);
  return access ("/sys/block/nbd0", F_OK) == 0;
}

/* Is /dev/nbdN connected?  The kernel shows a connected device's pid. */
static bool
nbd_busy (int n)
{
  char path[64];

  snprintf (path, sizeof path, "/sys/block/nbd%d/pid", n);
  return access (path, F_OK) == 0;
}

/* Connect the first free /dev/nbdN to the server.  Another attach (a
 * campaign's other job) may take the device found free first: nbd-client
 * then fails and the next one is tried.
 */
static int
start_nbd (struct fd_disk *d, struct fm_err *err)
{
  char dev[32], sys[64];
  int n, tries = 0;

  for (n = 0;; n++) {
    char *argv[] = {(char *)"nbd-client", (char *)"-unix", d->sock, dev, NULL};
    struct fd_proc p;
    int r;

    snprintf (sys, sizeof sys, "/sys/block/nbd%d", n);
    if (access (sys, F_OK) != 0) {
      return fm_fail (
          err,
          "no free nbd device (all %d in use; modprobe nbd nbds_max=N "
          "for more)",
          n);
    }
    if (nbd_busy (n))
      continue;
    snprintf (dev, sizeof dev, "/dev/nbd%d", n);
    /* As with losetup: a signal must not stop nbd-client between
     * connecting the device and our noting which.
     */
    fd_shield_begin ();
    r = fd_run (argv, TOOL_TIMEOUT, &p, err);
    fd_shield_end ();
    if (r == -1)
      return -1;
    if (p.status == 0) {
      fd_proc_free (&p);
      snprintf (d->dev, sizeof d->dev, "%s", dev);
      return 0;
    }
    if (!nbd_busy (n) || ++tries == NBD_TRIES) {
      /* Failed for a reason of its own, not a race for the device. */
      fm_fail (err, "%s: exit %d: %s", fd_argv_str (argv), p.status, p.err);
      fd_proc_free (&p);
      return -1;
    }
    fd_proc_free (&p);
  }
}

/* Disconnect /dev/nbdN and wait until the kernel has let it go, so that
 * the next attach may take it.
 */
static int
stop_nbd (struct fd_disk *d, struct fm_err *err)
{
  char *argv[] = {(char *)"nbd-client", (char *)"-d", d->dev, NULL};
  int n, i;

  if (fd_run_ok (argv, TOOL_TIMEOUT, err) == -1)
    return -1;
  if (sscanf (d->dev, "/dev/nbd%d", &n) != 1)
    return 0;
  for (i = 0; i < 10 * 50 && nbd_busy (n); i++)
    sleep_ms (20);
  if (nbd_busy (n)) {
    return fm_fail (err, "%s still connected 10 s after %s", d->dev,
                    fd_argv_str (argv));
  }
  return 0;
}

/* mount(8) says only "dmesg(1) may have more information".  The kernel
 * log from here on (-1: none readable), for kernel_reason.
 */
static int
kernel_log_from_now (void)
{
  int fd = open ("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

  if (fd >= 0 && lseek (fd, 0, SEEK_END) == -1) {
    close (fd);
    fd = -1;
  }
  return fd;
}

/* The next record's text from kfd into rec (size bytes), its first line
 * only; false at the end.  One record per read: "prio,seq,time,flags;
 * text\n" and continuation lines; EAGAIN at the end, EPIPE where the
 * ring overwrote records.
 */
static bool
kernel_next (int kfd, char *rec, size_t size, const char **text)
{
  ssize_t n;
  char *semi;

  while ((n = read (kfd, rec, size - 1)) > 0 || (n == -1 && errno == EPIPE)) {
    if (n <= 0)
      continue;
    rec[n] = '\0';
    if ((semi = strchr (rec, ';')) == NULL)
      continue;
    semi[strcspn (semi, "\n")] = '\0';
    *text = semi + 1;
    return true;
  }
  return false;
}

/* Does text name the device dev ("loop3": "EXT4-fs (loop3): ...",
 * "BTRFS error (device loop3): ...", "I/O error, dev loop3, ...") as a
 * word, not as the start of loop31?
 */
static bool
names_device (const char *text, const char *dev)
{
  const char *name = strrchr (dev, '/') ? strrchr (dev, '/') + 1 : dev;
  size_t len = strlen (name);
  const char *at;

  for (at = strstr (text, name); len && at; at = strstr (at + 1, name))
    if ((at == text || !isalnum ((unsigned char)at[-1])) &&
        !isalnum ((unsigned char)at[len]))
      return true;
  return false;
}

/* The kernel's last word on d's device since kernel_log_from_now (e.g.
 * "EXT4-fs (loop3): ..."), added to err and kept as d's reason, so that
 * a trial's record says why its file system did not mount; without
 * one, mount(8)'s own words.  Closes kfd.
 */
static void
add_kernel_reason (int kfd, struct fd_disk *d, struct fm_err *err)
{
  char rec[1024], last[512] = "", msg[sizeof err->msg];
  const char *text, *own;

  while (kfd >= 0 && kernel_next (kfd, rec, sizeof rec, &text))
    if (names_device (text, d->dev))
      snprintf (last, sizeof last, "%s", text);
  if (kfd >= 0)
    close (kfd);
  if (last[0]) {
    snprintf (d->reason, sizeof d->reason, "%s", last);
    snprintf (msg, sizeof msg, "%s", err->msg);
    fm_fail (err, "%s; kernel: %s", msg, last);
    return;
  }
  /* "mount ... MNT: exit 32: mount: MNT: can't read superblock on
   * /dev/loop1.": after the mount point's last mention.
   */
  for (own = err->msg; strstr (own, d->mount);)
    own = strstr (own, d->mount) + strlen (d->mount);
  own += strspn (own, ": ");
  snprintf (d->reason, sizeof d->reason, "%.*s", (int)strcspn (own, "\n"), own);
}

/* What the kernel said of d's device since the attach, appended to
 * kernel.log in its directory.
 */
static void
save_kernel_log (struct fd_disk *d)
{
  char rec[1024], path[PATH_MAX + 16];
  const char *text;
  FILE *fp = NULL;

  if (d->kfd < 0)
    return;
  snprintf (path, sizeof path, "%s/kernel.log", d->dir);
  while (d->dev[0] && kernel_next (d->kfd, rec, sizeof rec, &text))
    if (names_device (text, d->dev) && (fp || (fp = fopen (path, "a")) != NULL))
      fprintf (fp, "%s\n", text);
  if (fp)
    fclose (fp);
  close (d->kfd);
  d->kfd = -1;
}

const char *
fd_disk_mount_reason (const struct fd_disk *d)
{
  return d->reason;
}

int
fd_disk_mount (struct fd_disk *d, struct fm_err *err)
{
  char *argv[] = {(char *)"mount", (char *)"-t", d->fstype, d->dev,
                  d->mount,        NULL,         NULL,      NULL};
  int kfd;

  if (d->mount_opts[0]) {
    argv[5] = (char *)"-o";
    argv[6] = d->mount_opts;
  }

  if (d->mounted || !d->mount[0])
    return 0;
  d->reason[0] = '\0';
  {
    struct fm_err e;
    const struct fd_fs *fs = d->fsname[0] ? fd_fs_find (d->fsname, &e) : NULL;
    if (fs && fs->mount_cmd[0]) {
      char *cmd[FD_ARGV_MAX + 1];
      fd_fs_argv_at (fs->mount_cmd, d->dev, d->mount, cmd);
      if (fd_run_ok (cmd, TOOL_TIMEOUT, err) == -1) {
        add_kernel_reason (-1, d, err);
        return -1;
      }
      d->mounted = true;
      d->fs_conn = watch_fuse (d->mount);
      return 0;
    }
  }
  kfd = kernel_log_from_now ();
  if (fd_run_ok (argv, TOOL_TIMEOUT, err) == -1) {
    add_kernel_reason (kfd, d, err);
    return -1;
  }
  if (kfd >= 0)
    close (kfd);
  d->mounted = true;
  d->fs_conn = watch_fuse (d->mount);
  return 0;
}

int
fd_disk_unmount (struct fd_disk *d, struct fm_err *err)
{
  char *argv[] = {(char *)"umount", d->mount, NULL};
  int i;

  if (!d->mounted)
    return 0;
  /* A mount just used may be busy for a moment (udev, a closing shell). */
  for (i = 0; i < 10; i++) {
    if (fd_run_ok (argv, TOOL_TIMEOUT, err) == 0) {
      d->mounted = false;
      unwatch_fuse (&d->fs_conn);
      return 0;
    }
    sleep_ms (200);
  }
  return -1;
}

/* d's settings from the options and the adapter fs (NULL: none): its
 * directory, mount point, nbd or loop, and where its sockets go.
 */
static int
configure (struct fd_disk *d, const struct fd_attach_opts *o,
           const struct fd_fs *fs, struct fm_err *err)
{
  if (realpath (o->dir, d->dir) == NULL) {
    return fm_fail (err, "%s: %s", o->dir, fd_strerror (errno));
  }
  if (fs) {
    snprintf (d->fsname, sizeof d->fsname, "%s", fs->name);
    snprintf (d->fstype, sizeof d->fstype, "%s", fs->mount_type);
    snprintf (d->mount_opts, sizeof d->mount_opts, "%s",
              fs->mount_opts ? fs->mount_opts : "");
  }
  if (o->mount && realpath (o->mount, d->mount) == NULL) {
    return fm_fail (err, "mount point %s: %s", o->mount, fd_strerror (errno));
  }
  if (o->mount && !fs) {
    return fm_fail (err, "mounting needs a file system type (--fs)");
  }
  d->serial = o->via && strcmp (o->via, "serial") == 0;
  if (o->via == NULL || strcmp (o->via, "auto") == 0)
    d->nbd = kernel_has_nbd () && on_path ("nbd-client");
  else if ((d->nbd = strcmp (o->via, "nbd") == 0) && !kernel_has_nbd ()) {
    return fm_fail (err, "--attach nbd: the kernel has no nbd devices "
                         "(modprobe nbd failed)");
  }
  /* A unix socket's path must fit sun_path (108 bytes): under a deep
   * directory the sockets go to a short private one instead.
   */
  if (strlen (d->dir) + sizeof "/control.sock" >
      sizeof ((struct sockaddr_un *)0)->sun_path) {
    snprintf (d->sockdir, sizeof d->sockdir, "/tmp/futuredisk-sock.XXXXXX");
    if (mkdtemp (d->sockdir) == NULL) {
      return fm_fail (err, "%s: %s", d->sockdir, fd_strerror (errno));
    }
  }
  return 0;
}

/* mkfs failed with ENOTCONN (mkfs.btrfs stats every mount on the
 * machine): name the FUSE mounts whose server is gone, which is what
 * gives it, so the error says what to clear.  Only then: stat on a FUSE
 * mount whose server lives but hangs would hang too.
 */
static void
name_dead_mounts (struct fm_err *err)
{
  char msg[FM_ERR_MAX], line[4096];
  struct mntent *m, buf;
  bool first = true;
  struct stat st;
  FILE *f;

  if (strstr (err->msg, strerror (ENOTCONN)) == NULL ||
      (f = setmntent ("/proc/self/mounts", "r")) == NULL)
    return;
  snprintf (msg, sizeof msg, "%s", err->msg);
  while ((m = getmntent_r (f, &buf, line, sizeof line)) != NULL)
    if (strncmp (m->mnt_type, "fuse", 4) == 0 && stat (m->mnt_dir, &st) == -1 &&
        errno == ENOTCONN) {
      snprintf (msg + strlen (msg), sizeof msg - strlen (msg), "%s%s",
                first ? "; FUSE mounts whose server is gone (umount -l "
                        "each): "
                      : " ",
                m->mnt_dir);
      first = false;
    }
  endmntent (f);
  fm_fail (err, "%s", msg);
}

/* mkfs with the seed's UUIDs.  mkfs.btrfs refuses a UUID another device
 * has, which a disk of the same seed attached beside this one does (two
 * trials of a seed at once, here or another user's): then the seed's
 * next, as reproducible, said on stderr.
 */
static int
make_fs (const struct fd_fs *fs, const char *dev, uint64_t seed,
         struct fm_err *err)
{
  unsigned attempt;

  for (attempt = 0;; attempt++) {
    struct fd_mkfs_argv mkfs;

    fd_fs_mkfs_argv (fs, dev, seed, attempt, &mkfs);
    if (fd_run_ok (mkfs.argv, 3600, err) == 0)
      break;
    if (attempt == 15 || strstr (err->msg, FD_MKFS_UUID_TAKEN) == NULL) {
      name_dead_mounts (err);
      return -1;
    }
  }
  if (attempt > 0)
    fprintf (stderr,
             "futuredisk: %s: the UUID of seed %" PRIu64 " is on another "
             "attached disk (one of the same seed): made with the seed's "
             "UUID no. %u\n",
             fs->name, seed, attempt + 1);
  return 0;
}

struct fd_disk *
fd_disk_attach (const struct fd_attach_opts *o, struct fm_err *err)
{
  struct fd_disk *d = calloc (1, sizeof *d);
  const struct fd_fs *fs = NULL;
  struct fm_err e;

  if (d == NULL) {
    fm_fail (err, "out of memory");
    return NULL;
  }
  d->kfd = -1;
  if ((o->fs && (fs = fd_fs_find (o->fs, err)) == NULL) ||
      fd_attach_via_check ("--attach", o->via, err) == -1 ||
      configure (d, o, fs, err) == -1) {
    free (d);
    return NULL;
  }
  set_paths (d);
  if (o->kernel_log)
    d->kfd = kernel_log_from_now ();
  /* Leftovers of an earlier attach here (nbdkit leaves its socket). */
  unlink (d->pidfile);
  unlink (d->fusepid);
  unlink (d->sock);
  unlink (d->ctl);
  if (start_nbdkit (d, o, err) == -1)
    goto fail;
  if (d->nbd ? start_nbd (d, err) == -1
             : start_nbdfuse (d, err) == -1 || start_loop (d, err) == -1)
    goto fail;
  /* The request cap first: setting it resets the read-ahead. */
  if (tell_rotational (d, err) == -1 || pass_requests_whole (d, err) == -1 ||
      pin_read_ahead (d, err) == -1 || tell_device (d, err) == -1)
    goto fail;
  if (o->mkfs && fs && make_fs (fs, d->dev, o->seed, err) == -1)
    goto fail;
  if (!o->defer_mount && fd_disk_mount (d, err) == -1)
    goto fail;
  return d;

fail:
  fd_disk_detach (d, &e);
  return NULL;
}

/* Any other loop device over our disk (one a failure left unrecorded)
 * goes too, while its backing file can still be named.
 */
static void
detach_stray_loops (struct fd_disk *d)
{
  char *argv[] = {(char *)"losetup", (char *)"-j", d->fusefile, NULL};
  char *out = NULL, *line, *save = NULL;
  struct fm_err e;

  if (fd_run_capture (argv, TOOL_TIMEOUT, &out, &e) == 0)
    for (line = strtok_r (out, "\n", &save); line;
         line = strtok_r (NULL, "\n", &save)) {
      char *colon = strchr (line, ':');
      char *det[] = {(char *)"losetup", (char *)"-d", line, NULL};
      if (colon == NULL)
        continue;
      *colon = '\0';
      fd_run_ok (det, TOOL_TIMEOUT, &e);
    }
  free (out);
}

static int
unmount_fuse (struct fd_disk *d, struct fm_err *err)
{
  char *argv[] = {(char *)"fusermount3", (char *)"-u", d->fusedir, NULL};
  int i, r;

  /* A loop device lets go of its file a moment after losetup -d returns
   * (udev may still hold the device open): until then the FUSE mount is
   * busy.
   */
  for (i = 0; (r = fd_run_ok (argv, TOOL_TIMEOUT, err)) == -1 && i < 50; i++)
    sleep_ms (100);
  return r;
}

/* The last line of a daemon's log, for an error that says why it died. */
static void
last_log_line (const char *dir, const char *name, char *out, size_t len)
{
  char path[PATH_MAX + 32], line[512];
  FILE *fp;

  snprintf (path, sizeof path, "%s/%s", dir, name);
  snprintf (out, len, "(its log %s is empty)", path);
  if ((fp = fopen (path, "r")) == NULL)
    return;
  while (fgets (line, sizeof line, fp))
    if (line[0] != '\n') {
      line[strcspn (line, "\n")] = '\0';
      snprintf (out, len, "%s: %s", path, line);
    }
  fclose (fp);
}

int
fd_disk_check (const struct fd_disk *d, const char *during, struct fm_err *err)
{
  char why[PATH_MAX + 600], when[64] = "under the disk";

  if (during)
    snprintf (when, sizeof when, "during %s", during);
  if (d->nbdkit_pid > 0 && dead (d->nbdkit_pid)) {
    last_log_line (d->dir, "nbdkit.log", why, sizeof why);
    return fm_fail (err, "nbdkit (pid %ld) died %s; %s", (long)d->nbdkit_pid,
                    when, why);
  }
  if (d->nbdfuse_pid > 0 && dead (d->nbdfuse_pid)) {
    last_log_line (d->dir, "nbdfuse.log", why, sizeof why);
    return fm_fail (err, "nbdfuse (pid %ld) died %s; %s", (long)d->nbdfuse_pid,
                    when, why);
  }
  return 0;
}

int
fd_disk_detach (struct fd_disk *d, struct fm_err *err)
{
  struct fm_err e;
  int ret = 0;

  if (d == NULL)
    return 0;
  /* Taking down is never interrupted: a signal that stopped the trial,
   * or one arriving now, must not also stop umount, losetup -d and
   * fusermount3 (nbdfuse, stopped with its file still open, would
   * unmount lazily and leave the loop device over a vanished file).
   */
  fd_shield_begin ();
  if (fd_disk_unmount (d, &e) == -1 && ret == 0) {
    *err = e;
    ret = -1;
  }
  save_kernel_log (d);
  if (d->dev[0]) {
    char *argv[] = {(char *)"losetup", (char *)"-d", d->dev, NULL};
    if ((d->nbd ? stop_nbd (d, &e) : fd_run_ok (argv, TOOL_TIMEOUT, &e)) ==
            -1 &&
        ret == 0) {
      *err = e;
      ret = -1;
    }
    d->dev[0] = '\0';
  }
  if (d->fuse_mounted && is_mount_point (d->fusedir))
    detach_stray_loops (d);
  if (d->fuse_mounted && is_mount_point (d->fusedir) &&
      unmount_fuse (d, &e) == -1 && ret == 0) {
    *err = e;
    ret = -1;
  }
  if (!is_mount_point (d->fusedir))
    unwatch_fuse (&d->fuse_conn);
  /* nbdfuse exits once unmounted; make sure, then stop the server (its
   * cleanup writes the stats file and destages the cache).  A pid from a
   * state file may be stale: only signal what is still ours.
   */
  /* Interrupted, nbdfuse may still wait for a reply the server holds
   * (its connection aborted, it has nothing left to do): no grace.
   */
  if (is_named (d->nbdfuse_pid, "nbdfuse"))
    stop_pid (d->nbdfuse_pid, fd_interrupted ? SIGKILL : SIGTERM, 30);
  /* A server holding requests may take long to stop: interrupted, it
   * gets the grace the FUSE connections got.
   */
  if (is_named (d->nbdkit_pid, "nbdkit"))
    stop_pid (d->nbdkit_pid, SIGTERM, fd_interrupted ? ABORT_GRACE_S : 30);
  rmdir (d->fusedir);
  unlink (d->pidfile);
  unlink (d->fusepid);
  /* nbdkit leaves its sockets behind when it is killed. */
  unlink (d->sock);
  unlink (d->ctl);
  if (d->sockdir[0])
    rmdir (d->sockdir);
  free (d);
  fd_shield_end ();
  return ret;
}

const char *
fd_disk_device (const struct fd_disk *d)
{
  return d->dev;
}

const char *
fd_disk_control (const struct fd_disk *d)
{
  return d->ctl;
}

const char *
fd_disk_via (const struct fd_disk *d)
{
  return d->nbd ? vias[0] : d->serial ? vias[2] : vias[1];
}

const char *
fd_disk_socket (const struct fd_disk *d)
{
  return d->sock;
}

/* The state file: one KEY=VALUE line for each field, in this order. */
enum state_kind {
  STATE_STR,
  STATE_PID,
  STATE_BOOL
};
#define STATE(key, kind, field)                                                \
  {                                                                            \
    key, kind, offsetof (struct fd_disk, field),                               \
        sizeof ((struct fd_disk *)0)->field                                    \
  }
static const struct {
  const char *key;
  enum state_kind kind;
  size_t off, len;
} state_fields[] = {
    STATE ("dir", STATE_STR, dir),
    STATE ("sockdir", STATE_STR, sockdir),
    STATE ("nbdkit_pid", STATE_PID, nbdkit_pid),
    STATE ("nbdfuse_pid", STATE_PID, nbdfuse_pid),
    STATE ("fuse_mounted", STATE_BOOL, fuse_mounted),
    STATE ("dev", STATE_STR, dev),
    STATE ("mount", STATE_STR, mount),
    STATE ("mounted", STATE_BOOL, mounted),
    STATE ("fstype", STATE_STR, fstype),
    STATE ("mount_opts", STATE_STR, mount_opts),
    STATE ("fs", STATE_STR, fsname),
    STATE ("nbd", STATE_BOOL, nbd),
};
#undef STATE
#define NSTATE_FIELDS (sizeof state_fields / sizeof state_fields[0])

int
fd_disk_save (const struct fd_disk *d, const char *path, struct fm_err *err)
{
  FILE *fp = fopen (path, "w");
  size_t i;

  if (fp == NULL) {
    return fm_fail (err, "%s: %s", path, fd_strerror (errno));
  }
  for (i = 0; i < NSTATE_FIELDS; i++) {
    const char *at = (const char *)d + state_fields[i].off;
    fprintf (fp, "%s=", state_fields[i].key);
    if (state_fields[i].kind == STATE_STR)
      fprintf (fp, "%s\n", at);
    else if (state_fields[i].kind == STATE_PID)
      fprintf (fp, "%ld\n", (long)*(const pid_t *)at);
    else
      fprintf (fp, "%d\n", *(const bool *)at);
  }
  if (fclose (fp) == EOF) {
    return fm_fail (err, "%s: %s", path, fd_strerror (errno));
  }
  return 0;
}

/* KEY=VALUE into the field of d it names; unknown keys are ignored. */
static void
load_field (struct fd_disk *d, const char *key, const char *v)
{
  size_t i;

  for (i = 0; i < NSTATE_FIELDS; i++) {
    char *at = (char *)d + state_fields[i].off;
    if (strcmp (key, state_fields[i].key) != 0)
      continue;
    if (state_fields[i].kind == STATE_STR)
      snprintf (at, state_fields[i].len, "%s", v);
    else if (state_fields[i].kind == STATE_PID)
      *(pid_t *)at = (pid_t)atol (v);
    else
      *(bool *)at = atoi (v);
    return;
  }
}

struct fd_disk *
fd_disk_load (const char *path, struct fm_err *err)
{
  struct fd_disk *d = calloc (1, sizeof *d);
  FILE *fp = fopen (path, "r");
  char line[PATH_MAX + 32];

  if (fp == NULL || d == NULL) {
    fm_fail (err, "%s: %s", path, fp ? "out of memory" : fd_strerror (errno));
    if (fp)
      fclose (fp);
    free (d);
    return NULL;
  }
  while (fgets (line, sizeof line, fp)) {
    char *v = strchr (line, '=');
    if (v == NULL)
      continue;
    *v++ = '\0';
    v[strcspn (v, "\n")] = '\0';
    load_field (d, line, v);
  }
  fclose (fp);
  d->kfd = -1; /* the kernel's words before this are another process's */
  if (!d->dir[0]) {
    fm_fail (err, "%s: not a futuredisk state file", path);
    free (d);
    return NULL;
  }
  set_paths (d);
  return d;
}
