/* futuredisk — harness: attributing losses to faults (see attribute.h). */
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "attribute.h"
#include "ctlclient.h"

#define MAX_EXTENTS 256

struct fd_extents {
  size_t n;
  uint64_t start[MAX_EXTENTS], len[MAX_EXTENTS];
};

struct fd_extents *
fd_extents_of (const char *root, const char *path)
{
  char full[4096];
  struct fd_extents *x;
  struct fiemap *fm;
  size_t i;
  int fd;

  snprintf (full, sizeof full, "%s/%s", root, path);
  if ((fd = open (full, O_RDONLY | O_CLOEXEC)) == -1)
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

void
fd_attribute (const struct fd_extents *x, const char *faultlog, char *buf,
              size_t len)
{
  FILE *fp = fopen (faultlog, "r");
  char line[1024];

  buf[0] = '\0';
  if (fp == NULL || x == NULL) {
    if (fp)
      fclose (fp);
    return;
  }
  while (fgets (line, sizeof line, fp)) {
    uint64_t off, n;
    char kind[32], pat[40];
    const char *k = strstr (line, "\"kind\": \"");
    size_t i;

    if (k == NULL || sscanf (k, "\"kind\": \"%31[^\"]", kind) != 1 ||
        !fd_json_u64 (line, "offset", &off) ||
        !fd_json_u64 (line, "length", &n) || n == 0)
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
  fclose (fp);
}
