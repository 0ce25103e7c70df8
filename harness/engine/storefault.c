/* futuredisk — harness: write faults and garbled stripes put in the store file
 * (see storefault.h).
 */

#define _FILE_OFFSET_BITS 64
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "crashpoints.h" /* FD_WRITELOG_NAME */
#include "errmsg.h"
#include "faultmodels/rng.h"
#include "json.h"
#include "storefault.h"
#include "trial.h"
#include "wlog.h"
#include "writelog.h"

/* Bytes [offset, offset+len) of record r (a write) into buf, at the
 * range's place in buf (which covers [at, at+blen)).
 */
static int
overlay (struct fd_wlog *l, const struct fd_wlog_entry *r, uint64_t at,
         unsigned char *buf, uint64_t blen, struct fm_err *err)
{
  uint64_t from = r->offset > at ? r->offset : at;
  uint64_t to =
      r->offset + r->length < at + blen ? r->offset + r->length : at + blen;

  if (from >= to)
    return 0;
  if (r->kind == FD_WLOG_ZERO) {
    memset (buf + (from - at), 0, to - from);
    return 0;
  }
  if (fseek (l->fp, r->data_at + (long)(from - r->offset), SEEK_SET) == -1 ||
      fread (buf + (from - at), 1, to - from, l->fp) != to - from)
    return fm_fail (err, "write log: a write cut short");
  return 0;
}

/* One fault line in the populate's fault log (the attribution's input). */
static void
log_fault (const struct trial_spec *s, const char *kind, uint64_t offset,
           uint64_t length, const char *detail)
{
  char path[PATH_MAX + 32];
  FILE *fp;

  snprintf (path, sizeof path, "%s/faults-populate.jsonl", s->dir);
  if ((fp = fopen (path, "a")) == NULL)
    return;
  fprintf (fp,
           "{\"virtual_ns\": 0, \"event\": \"inject\", \"kind\": \"%s\", "
           "\"offset\": %" PRIu64 ", \"length\": %" PRIu64 ", \"detail\": ",
           kind, offset, length);
  fd_json_string (fp, detail);
  fputs ("}\n", fp);
  fclose (fp);
}

/* The last write the log has to [offset, offset+length): the range as
 * it was just before it (*before) and as it made it (*made).  Which
 * record, or SIZE_MAX with err.
 */
static size_t
last_write (struct fd_wlog *l, const char *kind, uint64_t offset,
            uint64_t length, unsigned char *before, unsigned char *made,
            struct fm_err *err)
{
  size_t last = SIZE_MAX, k;

  for (k = 0; k < l->n; k++)
    if (l->v[k].kind == FD_WLOG_WRITE && l->v[k].offset < offset + length &&
        offset < l->v[k].offset + l->v[k].length)
      last = k;
  if (last == SIZE_MAX) {
    fm_fail (err,
             "--target %s: nothing was ever written to bytes %" PRIu64
             "-%" PRIu64,
             kind, offset, offset + length);
    return SIZE_MAX;
  }
  for (k = 0; k < last; k++)
    if (l->v[k].kind != FD_WLOG_FLUSH &&
        overlay (l, &l->v[k], offset, before, length, err) == -1)
      return SIZE_MAX;
  memcpy (made, before, length);
  if (overlay (l, &l->v[last], offset, made, length, err) == -1)
    return SIZE_MAX;
  return last;
}

/* Put the fault in the store file fd: the range as `before` says (a
 * torn write first takes a seeded prefix of `made`), and a misdirected
 * write's bytes where they landed.
 */
static int
put_fault (const struct trial_spec *s, int fd, const char *kind,
           uint64_t offset, uint64_t length, uint64_t disk_size, size_t rec,
           unsigned char *before, const unsigned char *made, uint64_t h,
           struct fm_err *err)
{
  char detail[160];
  uint64_t d = 4096 * (1 + fm_below (h >> 8, 16)), at;
  bool down = (h & 1) && offset >= d;

  if (strcmp (kind, "torn-write") == 0) {
    uint64_t pieces = length / 512, keep;
    if (pieces < 2)
      return fm_fail (err,
                      "--target torn-write: a range of one sector cannot tear");
    keep = 1 + fm_below (h, pieces - 1);
    memcpy (before, made, keep * 512);
    snprintf (detail, sizeof detail,
              "harness: write %zu torn, the first %" PRIu64 " of %" PRIu64
              " pieces made it",
              rec + 1, keep, pieces);
  } else
    snprintf (detail, sizeof detail, "harness: write %zu to it (the last) %s",
              rec + 1,
              strcmp (kind, "lost-write") == 0 ? "acknowledged, never written"
                                               : "landed elsewhere");
  if (pwrite (fd, before, length, (off_t)(STORE_HEADER + offset)) !=
      (ssize_t)length)
    return fm_fail (err, "%s: %s", s->store, fd_strerror (errno));
  log_fault (s, kind, offset, length, detail);
  if (strcmp (kind, "misdirected-write") != 0)
    return 0;
  if (!down && offset + length + d > disk_size)
    down = true;
  at = down ? offset - d : offset + d;
  if (pwrite (fd, made, length, (off_t)(STORE_HEADER + at)) != (ssize_t)length)
    return fm_fail (err, "%s: %s", s->store, fd_strerror (errno));
  snprintf (detail, sizeof detail,
            "harness: write %zu meant for byte %" PRIu64 " landed here",
            rec + 1, offset);
  log_fault (s, kind, at, length, detail);
  return 0;
}

int
fd_write_fault (const struct trial_spec *s, const char *kind, uint64_t offset,
                uint64_t length, uint64_t seed, struct fm_err *err)
{
  char log[PATH_MAX + 32];
  unsigned char *before = NULL, *made = NULL;
  struct fd_wlog l;
  size_t rec;
  int fd = -1, rc = -1;

  snprintf (log, sizeof log, "%s/" FD_WRITELOG_NAME, s->dir);
  if (fd_wlog_load (log, &l, err) == -1)
    goto out;
  if (length == 0 || offset >= l.disk_size || length > l.disk_size - offset ||
      length > CHUNK) {
    fm_fail (err, "--target %s: a range of %" PRIu64 " bytes at %" PRIu64, kind,
             length, offset);
    goto out;
  }
  before = calloc (1, length);
  made = calloc (1, length);
  if (before == NULL || made == NULL) {
    fm_fail (err, "out of memory");
    goto out;
  }
  if ((rec = last_write (&l, kind, offset, length, before, made, err)) ==
      SIZE_MAX)
    goto out;
  if ((fd = open (s->store, O_RDWR | O_CLOEXEC)) == -1) {
    fm_fail (err, "%s: %s", s->store, fd_strerror (errno));
    goto out;
  }
  rc = put_fault (s, fd, kind, offset, length, l.disk_size, rec, before, made,
                  fm_hash (seed, FM_STREAM_WRITE, offset, 77), err);

out:
  if (fd != -1)
    close (fd);
  free (before);
  free (made);
  fd_wlog_free (&l);
  return rc;
}

/* The store's segment k (0: the file with the header) and the disk
 * bytes it holds.  -1 with err.
 */
#define SEGMENT (UINT64_C (8) << 40)

static int
open_segment (const struct trial_spec *s, uint64_t k, uint64_t *bytes,
              struct fm_err *err)
{
  char path[PATH_MAX + 48];
  struct stat st;
  int fd;

  if (k == 0)
    snprintf (path, sizeof path, "%s", s->store);
  else
    snprintf (path, sizeof path, "%s.%" PRIu64, s->store, k);
  if ((fd = open (path, O_RDWR | O_CLOEXEC)) == -1 || fstat (fd, &st) == -1) {
    if (fd != -1)
      close (fd);
    return fm_fail (err, "%s: %s", path, fd_strerror (errno));
  }
  *bytes = (uint64_t)st.st_size - (k == 0 ? STORE_HEADER : 0);
  return fd;
}

/* The disk's bytes [offset, offset+length) through the store's
 * segments: read into buf (zeros past what the store holds), or written
 * from it (cut at the disk's end).  The bytes within the disk, or -1
 * with err.
 */
static int64_t
disk_io (const struct trial_spec *s, uint64_t offset, uint64_t length,
         unsigned char *buf, bool write, struct fm_err *err)
{
  uint64_t done = 0;

  if (!write)
    memset (buf, 0, length);
  while (done < length) {
    uint64_t at = offset + done, k = at / SEGMENT, in = at % SEGMENT, have;
    uint64_t n = (k + 1) * SEGMENT - at;
    int fd = open_segment (s, k, &have, err);
    off_t pos = (off_t)((k == 0 ? STORE_HEADER : 0) + in);
    ssize_t r;
    if (fd == -1)
      return -1;
    if (in >= have) {
      close (fd);
      break; /* past the disk's end */
    }
    if (n > length - done)
      n = length - done;
    if (n > have - in)
      n = have - in;
    r = write ? pwrite (fd, buf + done, n, pos)
              : pread (fd, buf + done, n, pos);
    close (fd);
    if (r != (ssize_t)n)
      return fm_fail (err, "%s: %s", s->store,
                      r == -1 ? fd_strerror (errno) : "short transfer");
    done += n;
  }
  return (int64_t)done;
}

int
fd_garble (const struct trial_spec *s, uint64_t offset, uint64_t length,
           uint64_t seed, uint64_t from, const char *detail, struct fm_err *err)
{
  uint64_t *words = malloc (length + 8), i;
  unsigned char *buf = (unsigned char *)words;
  int64_t done = -1;

  if (words == NULL)
    return fm_fail (err, "out of memory");
  if (from != FD_GARBLE_SEEDED)
    done = disk_io (s, from, length, buf, false, err);
  else
    for (i = 0, done = 0; i < (length + 7) / 8; i++)
      words[i] = fm_hash (seed, FM_STREAM_WRITE, offset + 8 * i, 78);
  if (done != -1)
    done = disk_io (s, offset, length, buf, true, err);
  free (words);
  if (done == -1)
    return -1;
  if (done == 0)
    return fm_fail (err, "byte %" PRIu64 ": beyond the disk", offset);
  log_fault (s, "stripe", offset, (uint64_t)done, detail);
  return 0;
}
