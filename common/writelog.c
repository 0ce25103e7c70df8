/* futuredisk — common: the write log (see writelog.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "writelog.h"

/* The largest record a reader accepts: the plugin's largest request. */
#define MAX_LENGTH (UINT64_C (1) << 32)

struct fd_wlog {
  FILE *fp;
  char path[256];
  uint64_t seq;
};

static int
put (struct fd_wlog *w, const struct fd_wlog_rec *r, const void *data,
     struct fm_err *err)
{
  unsigned char h[32];

  /* Little-endian on every host the plugin builds for; spelt out so the
   * file means the same everywhere.
   */
  for (int i = 0; i < 4; i++) {
    h[i] = (unsigned char)(r->kind >> (8 * i));
    h[4 + i] = (unsigned char)(r->flags >> (8 * i));
  }
  for (int i = 0; i < 8; i++) {
    h[8 + i] = (unsigned char)(r->offset >> (8 * i));
    h[16 + i] = (unsigned char)(r->length >> (8 * i));
    h[24 + i] = (unsigned char)(r->seq >> (8 * i));
  }
  if (fwrite (h, sizeof h, 1, w->fp) != 1 ||
      (data && r->length && fwrite (data, r->length, 1, w->fp) != 1)) {
    return fm_fail (err, "writelog %s: %s", w->path,
                    fd_strerror (errno ? errno : EIO));
  }
  return 0;
}

struct fd_wlog *
fd_wlog_create (const char *path, uint64_t disk_size, struct fm_err *err)
{
  struct fd_wlog *w = calloc (1, sizeof *w);
  struct fd_wlog_rec magic = {.kind = FD_WLOG_MAGIC, .offset = disk_size};

  if (w == NULL) {
    fm_fail (err, "out of memory");
    return NULL;
  }
  snprintf (w->path, sizeof w->path, "%s", path);
  if ((w->fp = fopen (path, "w")) == NULL) {
    fm_fail (err, "writelog %s: %s", path, fd_strerror (errno));
    free (w);
    return NULL;
  }
  if (put (w, &magic, NULL, err) == -1) {
    fclose (w->fp);
    free (w);
    return NULL;
  }
  return w;
}

int
fd_wlog_append (struct fd_wlog *w, enum fd_wlog_kind kind, uint32_t flags,
                uint64_t offset, uint64_t length, const void *data,
                struct fm_err *err)
{
  struct fd_wlog_rec r = {kind, flags, offset, length, ++w->seq};

  return put (w, &r, data, err);
}

int
fd_wlog_close (struct fd_wlog *w, struct fm_err *err)
{
  int r = 0;

  if (w == NULL)
    return 0;
  if (fclose (w->fp) == EOF)
    r = fm_fail (err, "writelog %s: %s", w->path, fd_strerror (errno));
  free (w);
  return r;
}

static uint64_t
le (const unsigned char *p, int n)
{
  uint64_t v = 0;

  for (int i = n - 1; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

int
fd_wlog_next (FILE *fp, struct fd_wlog_rec *r, long *data_at,
              struct fm_err *err)
{
  unsigned char h[32];
  size_t n = fread (h, 1, sizeof h, fp);

  if (n == 0 && feof (fp))
    return 0;
  if (n != sizeof h)
    return fm_fail (err, "writelog: a record cut short at byte %ld",
                    ftell (fp) - (long)n);
  r->kind = (uint32_t)le (h, 4);
  r->flags = (uint32_t)le (h + 4, 4);
  r->offset = le (h + 8, 8);
  r->length = le (h + 16, 8);
  r->seq = le (h + 24, 8);
  if (r->kind != FD_WLOG_MAGIC &&
      (r->kind < FD_WLOG_WRITE || r->kind > FD_WLOG_MARK))
    return fm_fail (err, "writelog: unknown record kind %u at byte %ld",
                    r->kind, ftell (fp) - 32);
  *data_at = ftell (fp);
  if (r->kind == FD_WLOG_WRITE || r->kind == FD_WLOG_MARK) {
    if (r->length > MAX_LENGTH || fseek (fp, (long)r->length, SEEK_CUR) == -1)
      return fm_fail (err, "writelog: a record of %llu bytes at byte %ld",
                      (unsigned long long)r->length, *data_at - 32);
  }
  return 1;
}
