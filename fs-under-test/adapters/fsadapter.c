/* futuredisk — fs-under-test: the adapter table and what the adapters
 * share (see fsadapter.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "faultmodels/rng.h"
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

/* The k-th UUID of seed's file systems, in the random (version 4) form
 * mkfs would have drawn.
 */
static void
seed_uuid (uint64_t seed, uint64_t k, char out[37])
{
  unsigned char b[16];
  size_t i;

  for (i = 0; i < 16; i++)
    b[i] = (unsigned char)(fm_hash (seed, FM_STREAM_MKFS, k, i / 8) >>
                           (8 * (i % 8)));
  b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
  b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
  snprintf (out, 37,
            "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
            "%02x%02x%02x%02x%02x%02x",
            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10],
            b[11], b[12], b[13], b[14], b[15]);
}

/* tmpl with each "{name}" in it replaced by value, into out; false if
 * it has none.
 */
static bool
replace (const char *tmpl, const char *name, const char *value, char *out,
         size_t len)
{
  const char *at = strstr (tmpl, name);

  if (at == NULL)
    return false;
  snprintf (out, len, "%.*s%s%s", (int)(at - tmpl), tmpl, value,
            at + strlen (name));
  return true;
}

void
fd_fs_mkfs_argv (const struct fd_fs *fs, const char *dev, uint64_t seed,
                 unsigned attempt, struct fd_mkfs_argv *out)
{
  /* ext4's first pair is 0 and 1, as it always was. */
  uint64_t k = ((uint64_t)attempt << 32) | (uint64_t)fs->identity << 1;
  char uuid[37], hash_seed[37];
  size_t i;

  seed_uuid (seed, k, uuid);
  seed_uuid (seed, k | 1, hash_seed);
  fd_fs_argv (fs->mkfs, dev, out->argv);
  for (i = 0; out->argv[i]; i++)
    if (replace (fs->mkfs[i], "{uuid}", uuid, out->text[i],
                 sizeof out->text[i]) ||
        replace (fs->mkfs[i], "{hash_seed}", hash_seed, out->text[i],
                 sizeof out->text[i]))
      out->argv[i] = out->text[i];
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
