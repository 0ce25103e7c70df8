/* futuredisk — common: a checker's cgroup (see cgroup.h).
 *
 * The cgroup goes under the root of the v2 hierarchy (the root may have
 * processes and controllers at once; a non-root cgroup may not), named
 * futuredisk-PID-N so that concurrent harnesses never share one.  With a
 * v1 memory controller, the memory part is a second cgroup of the same
 * name under the harness's own v1 memory cgroup.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "errmsg.h"

struct fd_cgroup {
  char dir[PATH_MAX];     /* the v2 node */
  char mem_dir[PATH_MAX]; /* the v1 memory node, or "" */
  int procs_fd, mem_procs_fd;
  int stat_fd; /* the v2 node's cpu.stat */
};

int
fd_cpu_stat_parse (const char *text, uint64_t *usage_usec, struct fm_err *err)
{
  const char *p = text;
  char *end;

  while (p && *p) {
    if (strncmp (p, "usage_usec ", 11) == 0) {
      errno = 0;
      *usage_usec = strtoull (p + 11, &end, 10);
      if (errno || end == p + 11 || (*end != '\n' && *end != '\0'))
        return fm_fail (err, "cpu.stat: malformed usage_usec line");
      return 0;
    }
    p = strchr (p, '\n');
    if (p)
      p++;
  }
  return fm_fail (err, "cpu.stat: no usage_usec line");
}

int
fd_cpu_stat_read (int fd, uint64_t *usage_usec, struct fm_err *err)
{
  char buf[1024];
  ssize_t n = pread (fd, buf, sizeof buf - 1, 0);

  if (n < 0)
    return fm_fail (err, "cpu.stat: %s", fd_strerror (errno));
  buf[n] = '\0';
  return fd_cpu_stat_parse (buf, usage_usec, err);
}

/* The mount point of the first mount in /proc/self/mountinfo of type
 * fstype whose super options include opt (NULL: any), into out.
 */
static bool
find_mount (const char *fstype, const char *opt, char *out, size_t len)
{
  FILE *fp = fopen ("/proc/self/mountinfo", "r");
  char line[4096], mnt[PATH_MAX], type[64], super[1024];
  bool found = false;

  if (fp == NULL)
    return false;
  while (!found && fgets (line, sizeof line, fp)) {
    const char *dash = strstr (line, " - ");
    char o[1024 + 2];

    if (dash == NULL || sscanf (line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
        sscanf (dash + 3, "%63s %*s %1023s", type, super) != 2 ||
        strcmp (type, fstype) != 0)
      continue;
    snprintf (o, sizeof o, ",%s,", super);
    if (opt == NULL || strstr (o, opt))
      found = snprintf (out, len, "%s", mnt) < (int)len;
  }
  fclose (fp);
  return found;
}

/* This process's path in the v1 hierarchy of `controller`, into out. */
static bool
own_v1_path (const char *controller, char *out, size_t len)
{
  FILE *fp = fopen ("/proc/self/cgroup", "r");
  char line[4096];
  bool found = false;

  if (fp == NULL)
    return false;
  while (!found && fgets (line, sizeof line, fp)) {
    char *c = strchr (line, ':'), *p = c ? strchr (c + 1, ':') : NULL;
    char list[256];

    if (p == NULL || (size_t)(p - c) >= sizeof list - 2)
      continue;
    snprintf (list, sizeof list, ",%.*s,", (int)(p - c - 1), c + 1);
    line[strcspn (line, "\n")] = '\0';
    if (strstr (list, controller))
      found = snprintf (out, len, "%s", p + 1) < (int)len;
  }
  fclose (fp);
  return found;
}

static int
write_file (const char *dir, const char *name, const char *value,
            const char *key, struct fm_err *err)
{
  char path[PATH_MAX + 64];
  int fd, e;
  ssize_t n;

  snprintf (path, sizeof path, "%s/%s", dir, name);
  if ((fd = open (path, O_WRONLY | O_CLOEXEC)) == -1)
    return fm_fail (err, "%s: %s: %s", key, path, fd_strerror (errno));
  n = write (fd, value, strlen (value));
  e = errno;
  close (fd);
  if (n != (ssize_t)strlen (value))
    return fm_fail (err, "%s: writing '%s' to %s: %s", key, value, path,
                    fd_strerror (n < 0 ? e : EIO));
  return 0;
}

/* Read the first number after `field ` in dir/name; 0 if none. */
static uint64_t
read_field (const char *dir, const char *name, const char *field)
{
  char path[PATH_MAX + 64], line[256];
  size_t len = strlen (field);
  uint64_t v = 0;
  FILE *fp;

  snprintf (path, sizeof path, "%s/%s", dir, name);
  if ((fp = fopen (path, "r")) == NULL)
    return 0;
  while (fgets (line, sizeof line, fp))
    if (strncmp (line, field, len) == 0 && line[len] == ' ') {
      v = strtoull (line + len + 1, NULL, 10);
      break;
    }
  fclose (fp);
  return v;
}

static bool
file_exists (const char *dir, const char *name)
{
  char path[PATH_MAX + 64];

  snprintf (path, sizeof path, "%s/%s", dir, name);
  return access (path, F_OK) == 0;
}

static bool
has_word (const char *dir, const char *name, const char *word)
{
  char path[PATH_MAX + 64], text[1024] = "", w[80];
  FILE *fp;
  size_t n;

  snprintf (path, sizeof path, "%s/%s", dir, name);
  if ((fp = fopen (path, "r")) == NULL)
    return false;
  n = fread (text + 1, 1, sizeof text - 3, fp);
  fclose (fp);
  text[0] = ' ';
  text[n + 1] = '\0';
  text[strcspn (text, "\n")] = ' ';
  snprintf (w, sizeof w, " %s ", word);
  return strstr (text, w) != NULL;
}

/* The memory cap in the v2 node (memory controller enabled at the root
 * first, where it may be).
 */
static int
cap_v2 (struct fd_cgroup *cg, const char *root, uint64_t mem_max,
        const char *key, struct fm_err *err)
{
  char v[32];

  if (!has_word (root, "cgroup.subtree_control", "memory") &&
      write_file (root, "cgroup.subtree_control", "+memory", key, err) == -1)
    return -1;
  snprintf (v, sizeof v, "%" PRIu64, mem_max);
  if (write_file (cg->dir, "memory.max", v, key, err) == -1)
    return -1;
  /* Where there is swap, a host with so much RAM would not use ours. */
  if (file_exists (cg->dir, "memory.swap.max") &&
      write_file (cg->dir, "memory.swap.max", "0", key, err) == -1)
    return -1;
  return 0;
}

/* The memory cap in a v1 memory cgroup of the same name. */
static int
cap_v1 (struct fd_cgroup *cg, const char *name, uint64_t mem_max,
        const char *key, struct fm_err *err)
{
  char mnt[PATH_MAX], own[PATH_MAX], v[32], path[PATH_MAX + 64];

  if (!find_mount ("cgroup", ",memory,", mnt, sizeof mnt) ||
      !own_v1_path (",memory,", own, sizeof own))
    return fm_fail (err,
                    "%s: no memory controller (neither in cgroup v2 nor "
                    "v1) for the host's RAM limit",
                    key);
  snprintf (cg->mem_dir, sizeof cg->mem_dir, "%s%s/%s", mnt,
            strcmp (own, "/") ? own : "", name);
  if (mkdir (cg->mem_dir, 0755) == -1) {
    fm_fail (err, "%s: cannot make cgroup %s: %s", key, cg->mem_dir,
             fd_strerror (errno));
    cg->mem_dir[0] = '\0';
    return -1;
  }
  snprintf (v, sizeof v, "%" PRIu64, mem_max);
  if (write_file (cg->mem_dir, "memory.limit_in_bytes", v, key, err) == -1)
    return -1;
  if (file_exists (cg->mem_dir, "memory.memsw.limit_in_bytes") &&
      write_file (cg->mem_dir, "memory.memsw.limit_in_bytes", v, key, err) ==
          -1)
    return -1;
  snprintf (path, sizeof path, "%s/cgroup.procs", cg->mem_dir);
  if ((cg->mem_procs_fd = open (path, O_WRONLY | O_CLOEXEC)) == -1)
    return fm_fail (err, "%s: %s: %s", key, path, fd_strerror (errno));
  return 0;
}

static int
open_v2 (struct fd_cgroup *cg, const char *key, struct fm_err *err)
{
  char path[PATH_MAX + 32];

  snprintf (path, sizeof path, "%s/cgroup.procs", cg->dir);
  if ((cg->procs_fd = open (path, O_WRONLY | O_CLOEXEC)) == -1)
    return fm_fail (err, "%s: %s: %s", key, path, fd_strerror (errno));
  snprintf (path, sizeof path, "%s/cpu.stat", cg->dir);
  if ((cg->stat_fd = open (path, O_RDONLY | O_CLOEXEC)) == -1)
    return fm_fail (err, "%s: %s: %s (cgroup v2 without cpu.stat)", key, path,
                    fd_strerror (errno));
  return 0;
}

struct fd_cgroup *
fd_cgroup_new (const char *key, uint64_t mem_max, struct fm_err *err)
{
  static unsigned serial;
  struct fd_cgroup *cg;
  char root[PATH_MAX], name[64];

  if (geteuid () != 0) {
    fm_fail (err, "%s: a checker's cgroup needs root", key);
    return NULL;
  }
  if (!find_mount ("cgroup2", NULL, root, sizeof root)) {
    fm_fail (err,
             "%s: no cgroup v2 hierarchy is mounted (cgroup v1 alone "
             "has no cpu.stat)",
             key);
    return NULL;
  }
  if ((cg = calloc (1, sizeof *cg)) == NULL) {
    fm_fail (err, "out of memory");
    return NULL;
  }
  cg->procs_fd = cg->mem_procs_fd = cg->stat_fd = -1;
  snprintf (name, sizeof name, "futuredisk-%ld-%u", (long)getpid (), ++serial);
  snprintf (cg->dir, sizeof cg->dir, "%s/%s", root, name);
  if (mkdir (cg->dir, 0755) == -1) {
    fm_fail (err, "%s: cannot make cgroup %s: %s", key, cg->dir,
             fd_strerror (errno));
    free (cg);
    return NULL;
  }
  if (open_v2 (cg, key, err) == -1 ||
      (mem_max && (has_word (root, "cgroup.controllers", "memory")
                       ? cap_v2 (cg, root, mem_max, key, err)
                       : cap_v1 (cg, name, mem_max, key, err)) == -1)) {
    fd_cgroup_free (cg);
    return NULL;
  }
  return cg;
}

const char *
fd_cgroup_dir (const struct fd_cgroup *cg)
{
  return cg->dir;
}

void
fd_cgroup_enter (const struct fd_cgroup *cg)
{
  /* "0": the writing process.  A failure cannot be reported from here;
   * the harness checks the group's CPU moved instead.
   */
  if (write (cg->procs_fd, "0", 1) != 1)
    _exit (126);
  if (cg->mem_procs_fd != -1 && write (cg->mem_procs_fd, "0", 1) != 1)
    _exit (126);
}

uint64_t
fd_cgroup_oom_kills (const struct fd_cgroup *cg)
{
  if (cg->mem_dir[0])
    return read_field (cg->mem_dir, "memory.oom_control", "oom_kill");
  return read_field (cg->dir, "memory.events", "oom_kill");
}

uint64_t
fd_cgroup_cpu_usec (const struct fd_cgroup *cg)
{
  struct fm_err err;
  uint64_t us = 0;

  if (fd_cpu_stat_read (cg->stat_fd, &us, &err) == -1)
    return 0;
  return us;
}

/* Kill what is left in dir (listed in cgroup.procs) and remove it,
 * waiting up to a second for the dying to leave.
 */
static void
remove_dir (const char *dir)
{
  struct timespec nap = {0, 10000000};
  int tries;

  for (tries = 0; tries < 100; tries++) {
    char path[PATH_MAX + 32];
    FILE *fp;
    long pid;

    if (rmdir (dir) == 0 || errno == ENOENT)
      return;
    snprintf (path, sizeof path, "%s/cgroup.procs", dir);
    if ((fp = fopen (path, "r")) != NULL) {
      while (fscanf (fp, "%ld", &pid) == 1)
        kill ((pid_t)pid, SIGKILL);
      fclose (fp);
    }
    nanosleep (&nap, NULL);
  }
  fprintf (stderr, "futuredisk: cannot remove cgroup %s: %s\n", dir,
           fd_strerror (errno));
}

void
fd_cgroup_free (struct fd_cgroup *cg)
{
  if (cg == NULL)
    return;
  if (cg->procs_fd != -1)
    close (cg->procs_fd);
  if (cg->mem_procs_fd != -1)
    close (cg->mem_procs_fd);
  if (cg->stat_fd != -1)
    close (cg->stat_fd);
  remove_dir (cg->dir);
  if (cg->mem_dir[0])
    remove_dir (cg->mem_dir);
  free (cg);
}
