/* futuredisk — nbdplugin: watching the client (see client.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "client.h"
#include "errmsg.h"

/* A set of threads whose states are read: their stat files stay open
 * between readings, so that a reading is one pread per thread, not an
 * open, a read and a close.
 */
struct thread {
  long tid;
  int fd;
  bool seen; /* listed by the latest listing */
};

struct tset {
  struct thread *t;
  size_t n, alloc;
};

struct client {
  int threads_fd;  /* the cgroup's cgroup.threads, or -1 */
  int inflight_fd; /* /sys/block/DEV/inflight, or -1 */
  char dev[64];
  char waiting[80]; /* its FUSE connection's `waiting`, or "" */
  long relay;       /* the FUSE server's pid (nbdfuse), or 0 */
  struct tset client, relay_t, server;
  char *list; /* cgroup.threads as last read */
  size_t list_size;
};

struct client *
client_new (const char *cgroup, struct fm_err *err)
{
  struct client *c = calloc (1, sizeof *c);
  char path[4096];

  if (c == NULL) {
    fm_fail (err, "out of memory");
    return NULL;
  }
  c->threads_fd = c->inflight_fd = -1;
  if (cgroup) {
    snprintf (path, sizeof path, "%s/cgroup.threads", cgroup);
    /* Not a cgroup v2 directory of the kernel's (a test's stand-in for
     * cpu.stat): no threads to watch, and the stats say so.
     */
    if ((c->threads_fd = open (path, O_RDONLY | O_CLOEXEC)) == -1 &&
        errno != ENOENT) {
      fm_fail (err, "cgroup: %s: %s", path, fd_strerror (errno));
      free (c);
      return NULL;
    }
  }
  return c;
}

static void
tset_free (struct tset *ts)
{
  size_t i;

  for (i = 0; i < ts->n; i++)
    close (ts->t[i].fd);
  free (ts->t);
  ts->t = NULL;
  ts->n = ts->alloc = 0;
}

void
client_free (struct client *c)
{
  if (c == NULL)
    return;
  tset_free (&c->client);
  tset_free (&c->relay_t);
  tset_free (&c->server);
  free (c->list);
  if (c->threads_fd != -1)
    close (c->threads_fd);
  if (c->inflight_fd != -1)
    close (c->inflight_fd);
  free (c);
}

/* A loop device over a FUSE file: its connection's `waiting` (requests
 * the FUSE server holds or has yet to read) into c->waiting; "" for any
 * other device.
 */
static void
find_waiting (struct client *c, const char *dev)
{
  char path[128], file[4096];
  struct stat st;
  FILE *fp;

  c->waiting[0] = '\0';
  snprintf (path, sizeof path, "/sys/block/%s/loop/backing_file", dev);
  if ((fp = fopen (path, "r")) == NULL)
    return;
  if (fgets (file, sizeof file, fp) == NULL) {
    fclose (fp);
    return;
  }
  fclose (fp);
  file[strcspn (file, "\n")] = '\0';
  if (stat (file, &st) == -1)
    return;
  snprintf (path, sizeof path, "/sys/fs/fuse/connections/%u/waiting",
            major (st.st_dev) << 20 | minor (st.st_dev));
  if (access (path, R_OK) == 0)
    snprintf (c->waiting, sizeof c->waiting, "%s", path);
}

int
client_set_device (struct client *c, const char *dev, struct fm_err *err)
{
  char path[128];
  int fd = -1;

  if (strlen (dev) >= sizeof c->dev || strchr (dev, '/') ||
      strcmp (dev, ".") == 0 || strcmp (dev, "..") == 0)
    return fm_fail (err,
                    "device: '%.64s' is not a block device's name "
                    "(as under /sys/block, e.g. loop3)",
                    dev);
  if (*dev) {
    snprintf (path, sizeof path, "/sys/block/%s/inflight", dev);
    if ((fd = open (path, O_RDONLY | O_CLOEXEC)) == -1)
      return fm_fail (err, "device: %s: %s", path, fd_strerror (errno));
  }
  if (c->inflight_fd != -1)
    close (c->inflight_fd);
  c->inflight_fd = fd;
  find_waiting (c, dev);
  snprintf (c->dev, sizeof c->dev, "%s", dev);
  return 0;
}

int
client_set_relay (struct client *c, const char *pid, struct fm_err *err)
{
  char path[64], *end;
  long v;

  errno = 0;
  v = strtol (pid, &end, 10);
  if (*pid == '\0')
    v = 0;
  else if (errno || *end || v <= 0)
    return fm_fail (err, "relay: '%.64s' is not a process id", pid);
  if (v) {
    snprintf (path, sizeof path, "/proc/%ld/task", v);
    if (access (path, R_OK) == -1)
      return fm_fail (err, "relay: %s: %s", path, fd_strerror (errno));
  }
  tset_free (&c->relay_t);
  c->relay = v;
  return 0;
}

const char *
client_device (const struct client *c)
{
  return c->dev;
}

/* The sum of the numbers in a sysfs file read into buf (r bytes, or -1:
 * the device's in-flight reads and writes; FUSE's one count); -1 if
 * unreadable.
 */
static long
sum_of (char *buf, ssize_t r)
{
  char *p = buf, *end;
  long sum = 0;

  if (r <= 0)
    return -1;
  buf[r] = '\0';
  for (;;) {
    long v = strtol (p, &end, 10);
    if (end == p)
      break;
    sum += v;
    p = end;
  }
  return p == buf ? -1 : sum;
}

static long
inflight (const struct client *c)
{
  char buf[64];

  return sum_of (buf, pread (c->inflight_fd, buf, sizeof buf - 1, 0));
}

/* FUSE's requests held or unread; -1 for none.  fusectl's files do not
 * seek: each reading opens the file afresh.
 */
static long
fuse_waiting (const struct client *c)
{
  char buf[64];
  long n;
  int fd;

  if (c->waiting[0] == '\0' ||
      (fd = open (c->waiting, O_RDONLY | O_CLOEXEC)) == -1)
    return -1;
  n = sum_of (buf, read (fd, buf, sizeof buf - 1));
  close (fd);
  return n;
}

/* cgroup.threads, whole, into c->list; its length, or -1. */
static ssize_t
read_list (struct client *c)
{
  for (;;) {
    ssize_t r;

    if (c->list_size == 0 || c->list == NULL) {
      char *nl = realloc (c->list, 4096);
      if (nl == NULL)
        return -1;
      c->list = nl;
      c->list_size = 4096;
    }
    r = pread (c->threads_fd, c->list, c->list_size - 1, 0);
    if (r < 0)
      return -1;
    if ((size_t)r < c->list_size - 1) {
      c->list[r] = '\0';
      return r;
    }
    /* Filled: a longer list than last time; read it again, whole. */
    {
      char *nl = realloc (c->list, 2 * c->list_size);
      if (nl == NULL)
        return -1;
      c->list = nl;
      c->list_size *= 2;
    }
  }
}

static struct thread *
thread_of (struct tset *ts, long tid)
{
  char path[64];
  size_t i;
  int fd;

  for (i = 0; i < ts->n; i++)
    if (ts->t[i].tid == tid)
      return &ts->t[i];
  snprintf (path, sizeof path, "/proc/%ld/stat", tid);
  if ((fd = open (path, O_RDONLY | O_CLOEXEC)) == -1)
    return NULL; /* gone already */
  if (ts->n == ts->alloc) {
    size_t na = ts->alloc ? 2 * ts->alloc : 16;
    struct thread *nt = realloc (ts->t, na * sizeof *nt);
    if (nt == NULL) {
      close (fd);
      return NULL;
    }
    ts->t = nt;
    ts->alloc = na;
  }
  ts->t[ts->n] = (struct thread){tid, fd, false};
  return &ts->t[ts->n++];
}

/* Is the thread runnable?  Its state is the field after the command
 * name, which is in parentheses and may hold anything: read from the
 * last ')'.  A thread that has exited reads as not runnable.
 */
static bool
runnable (const struct thread *t)
{
  char buf[512];
  ssize_t r = pread (t->fd, buf, sizeof buf - 1, 0);
  char *p;

  if (r <= 0)
    return false;
  buf[r] = '\0';
  p = strrchr (buf, ')');
  return p && p[1] == ' ' && p[2] == 'R';
}

/* Close the stat files of threads no longer listed. */
static void
sweep (struct tset *ts)
{
  size_t i = 0;

  while (i < ts->n) {
    if (ts->t[i].seen) {
      ts->t[i++].seen = false;
      continue;
    }
    close (ts->t[i].fd);
    ts->t[i] = ts->t[--ts->n];
  }
}

/* One listed thread: is it runnable (it is not `self`)?  */
static bool
listed_runs (struct tset *ts, long tid, long self)
{
  struct thread *t;

  if (tid == self || (t = thread_of (ts, tid)) == NULL)
    return false;
  t->seen = true;
  return runnable (t);
}

/* Does a thread of the cgroup run (1), none (0), or is there none at
 * all, or no list to read (-1)?
 */
static int
client_runs (struct client *c)
{
  char *p, *end;
  size_t listed = 0;
  bool runs = false;

  if (read_list (c) == -1)
    return -1;
  for (p = c->list; *p && !runs; p = end) {
    long tid = strtol (p, &end, 10);

    if (end == p)
      break;
    listed++;
    runs = listed_runs (&c->client, tid, 0);
  }
  if (!runs)
    sweep (&c->client);
  return listed == 0 ? -1 : runs;
}

/* Does a thread of process `pid` run, `self` aside?  A process that is
 * gone runs nothing.
 */
static bool
process_runs (struct tset *ts, long pid, long self)
{
  char path[64];
  struct dirent *de;
  bool runs = false;
  DIR *d;

  snprintf (path, sizeof path, "/proc/%ld/task", pid);
  if ((d = opendir (path)) == NULL)
    return false;
  while (!runs && (de = readdir (d)) != NULL)
    if (de->d_name[0] != '.')
      runs = listed_runs (ts, strtol (de->d_name, NULL, 10), self);
  closedir (d);
  if (!runs)
    sweep (ts);
  return runs;
}

/* Does a thread of the server (nbdkit: the caller's own process, but
 * for the calling thread) or of the relay (nbdfuse) run?  Either may
 * be carrying a request or a reply.
 */
static bool
server_runs (struct client *c)
{
  long self = syscall (SYS_gettid);

  return process_runs (&c->server, getpid (), self);
}

static bool
relay_runs (struct client *c)
{
  return c->relay && process_runs (&c->relay_t, c->relay, 0);
}

/* Does the kernel hold a loop request that is not (or no longer) a FUSE
 * request?  None where there is no FUSE count to read.
 */
static bool
kernel_holds (const struct client *c, long before)
{
  return c->waiting[0] && fuse_waiting (c) != before;
}

enum client_state
client_state (struct client *c, size_t held)
{
  long before, after;
  int runs;

  if (c->inflight_fd == -1 || c->threads_fd == -1)
    return CLIENT_UNKNOWN;
  /* Nobody in the cgroup (the harness itself mounts or populates): no
   * one to watch.
   */
  if (read_list (c) <= 0)
    return CLIENT_UNKNOWN;
  if ((before = inflight (c)) == -1)
    return CLIENT_UNKNOWN;
  if ((size_t)before <= held) {
    /* Every request the kernel holds is here, undecided: nothing is in
     * transit and nothing completes until a decision, so a thread seen
     * blocked stays blocked, and anything it submitted before it
     * blocked shows in the second count.
     */
    if ((runs = client_runs (c)) == -1)
      return CLIENT_UNKNOWN;
    if (runs)
      return CLIENT_BUSY;
    after = inflight (c);
    return after != -1 && (size_t)after <= held ? CLIENT_QUIET : CLIENT_BUSY;
  }
  /* More in flight than here: requests wait upstream (FUSE passes a
   * server only as many as it has threads, libfuse 10; a request nbdfuse
   * took may wait inside it for a reply on its connection), or move.
   * Quiet when nothing moves: no reply on its way (the stages read in
   * the order replies travel, so that one moving ahead of the reading
   * is seen at a later stage), the client blocked, no request on its
   * way (read in the order requests travel), the count unchanged.
   */
  if (server_runs (c) || relay_runs (c))
    return CLIENT_BUSY;
  if (kernel_holds (c, before))
    goto kernel;
  if ((runs = client_runs (c)) == -1)
    return CLIENT_UNKNOWN;
  if (runs || relay_runs (c) || server_runs (c))
    return CLIENT_BUSY;
  if (kernel_holds (c, before))
    goto kernel;
  after = inflight (c);
  return after == before ? CLIENT_QUIET : CLIENT_BUSY;
kernel:
  return CLIENT_KERNEL;
}
