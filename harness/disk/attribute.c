/* futuredisk — harness: attributing losses to faults (see attribute.h). */
#include <fcntl.h>
#include <limits.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "attribute.h"
#include "progname.h"
#include "ctlclient.h"
#include "populate.h"

#define MAX_EXTENTS 256

struct fd_extents {
  size_t n;
  uint64_t start[MAX_EXTENTS], len[MAX_EXTENTS];
};

/* The physical extents of the open file fd (NULL if it cannot be
 * mapped); closes fd.
 */
static struct fd_extents *
extents_of_fd (int fd)
{
  struct fd_extents *x;
  struct fiemap *fm;
  size_t i;

  if (fd == -1)
    return NULL;
  fm = calloc (1, sizeof *fm + MAX_EXTENTS * sizeof (struct fiemap_extent));
  x = calloc (1, sizeof *x);
  if (fm == NULL || x == NULL) {
    free (fm);
    free (x);
    close (fd);
    return NULL;
  }
  fm->fm_length = FIEMAP_MAX_OFFSET;
  fm->fm_flags = FIEMAP_FLAG_SYNC;
  fm->fm_extent_count = MAX_EXTENTS;
  if (ioctl (fd, FS_IOC_FIEMAP, fm) == -1) {
    free (fm);
    free (x);
    close (fd);
    return NULL;
  }
  for (i = 0; i < fm->fm_mapped_extents && i < MAX_EXTENTS; i++) {
    x->start[i] = fm->fm_extents[i].fe_physical;
    x->len[i] = fm->fm_extents[i].fe_length;
  }
  x->n = i;
  free (fm);
  close (fd);
  return x;
}

struct fd_extents *
fd_extents_of (const char *root, const char *path)
{
  char full[4096];

  snprintf (full, sizeof full, "%s/%s", root, path);
  return extents_of_fd (fd_open_regular (full));
}

struct fd_extents *
fd_dir_extents_of (const char *root, const char *path)
{
  char full[4096], dir[4096];
  char *slash;
  int fd;

  snprintf (dir, sizeof dir, "%s", path);
  do {
    if ((slash = strrchr (dir, '/')) != NULL)
      *slash = '\0';
    else
      snprintf (dir, sizeof dir, ".");
    snprintf (full, sizeof full, "%s/%s", root, dir);
    fd = open (full, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  } while (fd == -1 && slash != NULL);
  return extents_of_fd (fd);
}

static int
add_range (void *opaque, uint64_t offset, uint64_t length)
{
  struct fd_extents *x = opaque;

  if (x->n == MAX_EXTENTS)
    return 1; /* as many as FIEMAP is asked for */
  x->start[x->n] = offset;
  x->len[x->n++] = length;
  return 0;
}

struct fd_extents *
fd_extents_from (const struct fd_fs *fs, const char *socket, const char *root,
                 const char *path)
{
  struct fd_extents *x = calloc (1, sizeof *x);
  char uri[PATH_MAX + 32];
  struct fm_err err;

  if (x == NULL)
    return NULL;
  snprintf (uri, sizeof uri, "nbd+unix:///?socket=%s", socket);
  if (fs->file_ranges (uri, root, path, add_range, x, &err) == -1) {
    fprintf (stderr, "%s: %s: blocks not found: %s\n", fd_progname, path,
             err.msg);
    free (x);
    return NULL;
  }
  return x;
}

void
fd_extents_map (struct fd_extents *x,
                int (*map) (const char *dev, uint64_t addr, uint64_t *offset,
                            struct fm_err *err),
                const char *dev)
{
  struct fm_err err;
  size_t i, kept = 0;

  for (i = 0; x && i < x->n; i++)
    if (map (dev, x->start[i], &x->start[kept], &err) == 0)
      x->len[kept] = x->len[i], kept++;
  if (x)
    x->n = kept;
}

void
fd_extents_free (struct fd_extents *x)
{
  free (x);
}

/* One fault log line's kind and bytes; -1 with err naming the file, the
 * line and the field if it is not a fault log entry.
 */
static int
fault_of (const char *line, const char *faultlog, unsigned long lineno,
          char *kind, size_t len, uint64_t *off, uint64_t *n,
          struct fm_err *err)
{
  char what[PATH_MAX + 32];
  struct fd_json *j;
  int ret = 0;

  snprintf (what, sizeof what, "%s:%lu", faultlog, lineno);
  j = fd_json_parse (line, what, err);
  if (j == NULL || fd_json_str (j, "kind", kind, len, err) == -1 ||
      fd_json_u64 (j, "offset", off, err) == -1 ||
      fd_json_u64 (j, "length", n, err) == -1)
    ret = -1;
  fd_json_free (j);
  return ret;
}

void
fd_attribute (const struct fd_extents *x, const char *faultlog, char *buf,
              size_t len)
{
  FILE *fp = fopen (faultlog, "r");
  char *line = NULL;
  size_t cap = 0;
  unsigned long lineno = 0;

  if (fp == NULL || x == NULL) {
    if (fp)
      fclose (fp);
    return;
  }
  while (getline (&line, &cap, fp) != -1) {
    uint64_t off, n;
    char kind[32], pat[40];
    struct fm_err err;
    size_t i;

    lineno++;
    if (fault_of (line, faultlog, lineno, kind, sizeof kind, &off, &n, &err) ==
        -1) {
      /* A line cut short by a crash, say: it explains nothing, but a
       * reader of the record should know the log was not all read.
       */
      fprintf (stderr, "%s: %s; line skipped\n", fd_progname, err.msg);
      continue;
    }
    if (n == 0)
      continue;
    for (i = 0; i < x->n; i++)
      if (off < x->start[i] + x->len[i] && x->start[i] < off + n)
        break;
    if (i == x->n)
      continue;
    snprintf (pat, sizeof pat, ",%s,", kind);
    {
      char have[512];
      snprintf (have, sizeof have, ",%s,", buf);
      if (strstr (have, pat))
        continue; /* each kind once */
    }
    snprintf (buf + strlen (buf), len - strlen (buf), "%s%s", buf[0] ? "," : "",
              kind);
  }
  free (line);
  fclose (fp);
}
