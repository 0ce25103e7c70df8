/* futuredisk — harness: the populate's write log read back (see wlog.h). */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/types.h>

#include "errmsg.h"
#include "writelog.h"
#include "wlog.h"

void
fd_wlog_free (struct fd_wlog *l)
{
  if (l->fp)
    fclose (l->fp);
  free (l->v);
  free (l->flushes);
  free (l->buf);
}

/* A mark named "promise-N": N promises made by now. */
static int
read_mark (struct fd_wlog *l, const struct fd_wlog_rec *r, long at,
           uint64_t *promises)
{
  char name[80];
  long back = ftell (l->fp);

  if (r->length >= sizeof name)
    return 0; /* not ours: a phase mark is short, so is ours */
  if (fseek (l->fp, at, SEEK_SET) == -1 ||
      fread (name, 1, r->length, l->fp) != r->length)
    return -1;
  name[r->length] = '\0';
  if (strncmp (name, "promise-", 8) == 0)
    *promises = strtoull (name + 8, NULL, 10);
  return fseek (l->fp, back, SEEK_SET);
}

int
fd_wlog_load (const char *path, struct fd_wlog *l, struct fm_err *err)
{
  struct fd_wlog_rec r;
  long at;
  int k;

  memset (l, 0, sizeof *l);
  if ((l->buf = malloc (CHUNK)) == NULL)
    return fm_fail (err, "out of memory");
  if ((l->fp = fopen (path, "r")) == NULL)
    return fm_fail (err, "%s: %s", path, fd_strerror (errno));
  if (fd_wlog_next (l->fp, &r, &at, err) != 1 || r.kind != FD_WLOG_MAGIC)
    return fm_fail (err, "%s: not a write log", path);
  l->disk_size = r.offset;
  while ((k = fd_wlog_next (l->fp, &r, &at, err)) == 1) {
    if (r.kind == FD_WLOG_MARK) {
      if (read_mark (l, &r, at, &l->promises) == -1)
        return fm_fail (err, "%s: a mark cut short", path);
      if (l->nflushes)
        l->v[l->flushes[l->nflushes - 1]].promises = l->promises;
      continue;
    }
    if (r.offset > l->disk_size || r.length > l->disk_size - r.offset)
      return fm_fail (err, "%s: record %" PRIu64 " beyond the disk", path,
                      r.seq);
    if (l->n == l->cap) {
      size_t cap = l->cap ? 2 * l->cap : 4096;
      struct fd_wlog_entry *v = realloc (l->v, cap * sizeof *v);
      size_t *f = realloc (l->flushes, cap * sizeof *f);
      if (v)
        l->v = v;
      if (f)
        l->flushes = f;
      if (v == NULL || f == NULL)
        return fm_fail (err, "out of memory");
      l->cap = cap;
    }
    l->v[l->n] = (struct fd_wlog_entry){r.kind,   r.flags,     r.offset,
                                        r.length, l->promises, at};
    if (r.kind == FD_WLOG_FLUSH ||
        (r.kind == FD_WLOG_WRITE && (r.flags & FD_WLOG_FUA)))
      l->flushes[l->nflushes++] = l->n;
    l->n++;
  }
  return k == -1 ? fm_fail (err, "%s: %s", path, err->msg) : 0;
}
