/* futuredisk — fs-under-test: the adapter table and what the adapters
 * share (see fsadapter.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "fsadapter.h"

extern const struct fd_fs fd_fs_ext4, fd_fs_ext3, fd_fs_xfs, fd_fs_btrfs,
    fd_fs_chunkfs;

/* ext3 last: lists of "every file system" (the generations matrices)
 * are about today's.
 */
static const struct fd_fs *const adapters[] = {
    &fd_fs_ext4, &fd_fs_xfs, &fd_fs_btrfs, &fd_fs_chunkfs, &fd_fs_ext3};

#define N_ADAPTERS (sizeof adapters / sizeof adapters[0])

const char *
fd_outcome_name (enum fd_outcome o)
{
  static const char *const names[] = {
#define FD_OUTCOME_NAME(id, name) name,
      FD_OUTCOMES (FD_OUTCOME_NAME)
#undef FD_OUTCOME_NAME
  };

  return (size_t)o < sizeof names / sizeof names[0] ? names[o] : "?";
}

enum fd_outcome
fd_outcome_e2fsck (int status, int signal, bool repair)
{
  if (status < 0)
    return FD_CHECKER_CRASH; /* (a timeout is the caller's to tell) */
  if (status >= 8)
    return FD_CHECKER_ERROR;
  if (status & 4)
    return FD_UNFIXED;
  if (status & 3)
    return repair ? FD_FIXED : FD_UNFIXED;
  return FD_CLEAN;
}

const struct fd_fs *
fd_fs_find (const char *name, struct fm_err *err)
{
  char list[128] = "";
  size_t i;

  for (i = 0; i < N_ADAPTERS; i++) {
    if (strcmp (adapters[i]->name, name) == 0)
      return adapters[i];
    snprintf (list + strlen (list), sizeof list - strlen (list), "%s%s",
              i ? ", " : "", adapters[i]->name);
  }
  fm_fail (err, "unknown file system '%.64s' (adapters: %s)", name, list);
  return NULL;
}

void
fd_fs_argv_at (const char *const tmpl[FD_ARGV_MAX], const char *dev,
               const char *mnt, char *argv[FD_ARGV_MAX + 1])
{
  size_t i;

  for (i = 0; i < FD_ARGV_MAX && tmpl[i]; i++)
    argv[i] = (char *)(strcmp (tmpl[i], "{dev}") == 0          ? dev
                       : strcmp (tmpl[i], "{mnt}") == 0 && mnt ? mnt
                                                               : tmpl[i]);
  argv[i] = NULL;
}

void
fd_fs_argv (const char *const tmpl[FD_ARGV_MAX], const char *dev,
            char *argv[FD_ARGV_MAX + 1])
{
  fd_fs_argv_at (tmpl, dev, NULL, argv);
}

bool
fd_pass_heading_e2fsck (const char *l, int *num, char *name, size_t len)
{
  char id[16];
  int n, k = 0;
  size_t i;

  if (*l != 'P' || sscanf (l, "Pass %15[0-9A-Za-z]: %n", id, &k) != 1 ||
      k == 0 || sscanf (id, "%d", &n) != 1 ||
      strncmp (l + k, "Memory used", 11) == 0 ||
      strncmp (l + k, "I/O ", 4) == 0 || strncmp (l + k, "time ", 5) == 0)
    return false;
  for (i = 0; id[i]; i++)
    id[i] = (char)tolower ((unsigned char)id[i]);
  snprintf (name, len, "pass %s", id);
  *num = n;
  return true;
}

size_t
fd_pass_lines (const char *out, fd_pass_line *one, struct fd_pass *p,
               size_t max)
{
  const char *line = out;
  size_t n = 0;

  while (line && *line && n < max) {
    const char *end = strchrnul (line, '\n');
    char l[512];
    int len = snprintf (l, sizeof l, "%.*s", (int)(end - line), line);

    /* One line alone, NUL-ended: sscanf and strstr measure their whole
     * input, and a repair's output can be megabytes.
     */
    if (len >= (int)sizeof l)
      len = (int)sizeof l - 1;
    if (one (l, l + len, &p[n]))
      n++;
    line = *end ? end + 1 : NULL;
  }
  return n;
}
