/* futuredisk — harness: a trial's evidence (evidence.h). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "errmsg.h"
#include "evidence.h"

/* Besides each checker phase's NAME.out: what the disk and the kernel
 * said.  (faults.jsonl: the broken disk's fault log; the populate's has
 * its own, so the two can be told apart.)
 */
static const char *const logs[] = {"faults.jsonl", "faults-populate.jsonl",
                                   "kernel.log",   "nbdkit.log",
                                   "nbdfuse.log",  NULL};

/* Read len bytes at off of fp into buf+*at; -1 with errno (ENODATA:
 * the file ended first).
 */
static int
read_at (FILE *fp, long off, size_t len, char *buf, size_t *at)
{
  if (fseek (fp, off, SEEK_SET) == -1)
    return -1;
  if (fread (buf + *at, 1, len, fp) != len) {
    if (!ferror (fp))
      errno = ENODATA;
    return -1;
  }
  *at += len;
  return 0;
}

void
fd_evidence_output_name (const struct trial_result *r, size_t i,
                         char name[FD_EVIDENCE_NAME])
{
  size_t k, nth = 1;

  for (k = 0; k < i; k++)
    nth += strcmp (r->ph[k].name, r->ph[i].name) == 0;
  if (nth == 1)
    snprintf (name, FD_EVIDENCE_NAME, "%s.out", r->ph[i].name);
  else
    snprintf (name, FD_EVIDENCE_NAME, "%s-%zu.out", r->ph[i].name, nth);
}

void
fd_evidence_unkept (char *list, size_t len, const char *name, const char *why)
{
  size_t at = strlen (list);
  int n = -1;

  if (at + 4 < len)
    n = snprintf (list + at, len - at, "%s%s: %s", at ? "; " : "", name, why);
  if (n < 0 || (size_t)n >= len - at) /* full: say that more was cut */
    memcpy (list + len - 4, "...", 4);
}

/* One item from the file at path (nothing if it is not there); one that
 * cannot be read is named in ev->unkept with the reason.
 */
static void
add_file (struct fd_evidence *ev, const char *dir, const char *name, FILE *note)
{
  char path[PATH_MAX + 48], cut[96];
  struct fd_evidence_item *it = &ev->item[ev->n];
  struct stat st;
  size_t tail, at = 0, n;
  FILE *fp;

  snprintf (path, sizeof path, "%s/%s", dir, name);
  if ((fp = fopen (path, "r")) == NULL) {
    if (errno != ENOENT)
      fd_evidence_unkept (ev->unkept, sizeof ev->unkept, name,
                          fd_strerror (errno));
    return;
  }
  if (ev->n == FD_EVIDENCE_MAX) {
    fclose (fp);
    snprintf (cut, sizeof cut, "a trial keeps %d items at most",
              FD_EVIDENCE_MAX);
    fd_evidence_unkept (ev->unkept, sizeof ev->unkept, name, cut);
    return;
  }
  it->text = NULL;
  if (fstat (fileno (fp), &st) == -1)
    goto fail;
  if (st.st_size == 0) { /* nothing said: nothing to keep */
    fclose (fp);
    return;
  }
  n = (uint64_t)st.st_size <= FD_EVIDENCE_CAP ? (size_t)st.st_size
                                              : FD_EVIDENCE_CAP;
  cut[0] = '\0';
  if ((uint64_t)st.st_size > FD_EVIDENCE_CAP)
    snprintf (cut, sizeof cut,
              "\n[futuredisk: %" PRIu64 " bytes left out here]\n",
              (uint64_t)st.st_size - FD_EVIDENCE_CAP);
  if ((it->text = malloc (n + strlen (cut) + 1)) == NULL) {
    fclose (fp);
    fd_evidence_unkept (ev->unkept, sizeof ev->unkept, name, "out of memory");
    return;
  }
  tail = cut[0] ? FD_EVIDENCE_CAP - FD_EVIDENCE_HEAD : 0;
  if (read_at (fp, 0, n - tail, it->text, &at) == -1)
    goto fail;
  memcpy (it->text + at, cut, strlen (cut));
  at += strlen (cut);
  if (tail &&
      read_at (fp, (long)(st.st_size - (off_t)tail), tail, it->text, &at) == -1)
    goto fail;
  fclose (fp);
  it->text[at] = '\0';
  it->len = at;
  it->bytes = (uint64_t)st.st_size;
  snprintf (it->name, sizeof it->name, "%s", name);
  ev->n++;
  if (cut[0] && note)
    fprintf (note,
             "futuredisk: evidence: %s is %" PRIu64 " bytes; kept its first "
             "%u KiB and last %u KiB (at most %u KiB an item)\n",
             name, it->bytes, FD_EVIDENCE_HEAD >> 10,
             (FD_EVIDENCE_CAP - FD_EVIDENCE_HEAD) >> 10, FD_EVIDENCE_CAP >> 10);
  return;

fail:
  fd_evidence_unkept (ev->unkept, sizeof ev->unkept, name, fd_strerror (errno));
  free (it->text);
  it->text = NULL;
  fclose (fp);
}

void
fd_evidence_collect (const struct trial_spec *s, const struct trial_result *r,
                     struct fd_evidence *ev, FILE *note)
{
  char name[FD_EVIDENCE_NAME];
  size_t i;

  ev->n = 0;
  ev->unkept[0] = '\0';
  for (i = 0; i < r->nph; i++) {
    /* A checker cut short by its disk's death has no outcome, but its
     * output up to then is what the reader needs most.
     */
    if ((r->ph[i].outcome == NULL && !r->ph[i].cut_short) ||
        strcmp (r->ph[i].name, "replay-mount") == 0)
      continue;
    fd_evidence_output_name (r, i, name);
    add_file (ev, s->dir, name, note);
  }
  for (i = 0; logs[i]; i++)
    add_file (ev, s->dir, logs[i], note);
}

void
fd_evidence_free (struct fd_evidence *ev)
{
  size_t i;

  for (i = 0; i < ev->n; i++)
    free (ev->item[i].text);
  ev->n = 0;
}

/* Compress one item and insert its row. */
static int
store_item (sqlite3_stmt *st, long long trial_id,
            const struct fd_evidence_item *it, struct fm_err *err)
{
  uLongf zlen = compressBound (it->len);
  Bytef *z = malloc (zlen);
  int r;

  if (z == NULL)
    return fm_fail (err, "out of memory");
  if (compress2 (z, &zlen, (const Bytef *)it->text, it->len, 6) != Z_OK) {
    free (z);
    return fm_fail (err, "zlib could not compress it");
  }
  sqlite3_reset (st);
  sqlite3_bind_int64 (st, 1, trial_id);
  sqlite3_bind_text (st, 2, it->name, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 3, (sqlite3_int64)it->bytes);
  sqlite3_bind_int64 (st, 4, (sqlite3_int64)it->len);
  sqlite3_bind_blob (st, 5, z, (int)zlen, SQLITE_TRANSIENT);
  r = sqlite3_step (st);
  free (z);
  if (r != SQLITE_DONE)
    return fm_fail (err, "%s", sqlite3_errmsg (sqlite3_db_handle (st)));
  return 0;
}

/* Each item on its own: a row refused (a constraint) undoes that
 * statement only, so one item's failure never takes the others with it,
 * as the one savepoint around them all once did when two outputs had
 * one name.  Only an error after which SQLite rolls back the whole
 * transaction (disk full, I/O) ends the walk.
 */
int
fd_evidence_store (sqlite3 *db, long long trial_id,
                   const struct fd_evidence *ev, char *why, size_t len,
                   struct fm_err *err)
{
  bool in_transaction = !sqlite3_get_autocommit (db);
  struct fm_err e;
  sqlite3_stmt *st;
  size_t i;
  int r = 0;

  if (ev->n == 0)
    return 0;
  if (sqlite3_prepare_v2 (db,
                          "INSERT INTO evidence (trial_id, name, bytes, kept, "
                          "data) VALUES (?,?,?,?,?)",
                          -1, &st, NULL) != SQLITE_OK) {
    fd_evidence_unkept (why, len, "every item", sqlite3_errmsg (db));
    return 1;
  }
  for (i = 0; i < ev->n; i++) {
    if (store_item (st, trial_id, &ev->item[i], &e) == 0)
      continue;
    if (in_transaction && sqlite3_get_autocommit (db)) { /* it is gone */
      r = fm_fail (err, "%s: %s", ev->item[i].name, e.msg);
      break;
    }
    fd_evidence_unkept (why, len, ev->item[i].name, e.msg);
    r = 1;
  }
  sqlite3_finalize (st);
  return r;
}

int
fd_evidence_each (sqlite3 *db, long long trial_id, fd_evidence_fn *fn,
                  void *opaque, struct fm_err *err)
{
  sqlite3_stmt *st;
  int n = 0;

  if (sqlite3_prepare_v2 (db,
                          "SELECT name, bytes FROM evidence WHERE trial_id = "
                          "? ORDER BY rowid",
                          -1, &st, NULL) != SQLITE_OK)
    return fm_fail (err, "evidence: %s", sqlite3_errmsg (db));
  sqlite3_bind_int64 (st, 1, trial_id);
  while (sqlite3_step (st) == SQLITE_ROW) {
    n++;
    if (fn (opaque, (const char *)sqlite3_column_text (st, 0),
            (uint64_t)sqlite3_column_int64 (st, 1)) != 0)
      break;
  }
  sqlite3_finalize (st);
  return n;
}

int
fd_evidence_read (sqlite3 *db, long long trial_id, const char *name,
                  char **text, size_t *len, uint64_t *bytes, struct fm_err *err)
{
  sqlite3_stmt *st;
  uLongf kept;
  int r = 1;

  *text = NULL;
  if (sqlite3_prepare_v2 (db,
                          "SELECT kept, bytes, data FROM evidence WHERE "
                          "trial_id = ? AND name = ?",
                          -1, &st, NULL) != SQLITE_OK)
    return fm_fail (err, "evidence: %s", sqlite3_errmsg (db));
  sqlite3_bind_int64 (st, 1, trial_id);
  sqlite3_bind_text (st, 2, name, -1, SQLITE_STATIC);
  if (sqlite3_step (st) == SQLITE_ROW) {
    sqlite3_int64 k = sqlite3_column_int64 (st, 0);
    const void *z = sqlite3_column_blob (st, 2);
    int zlen = sqlite3_column_bytes (st, 2);
    kept = (uLongf)k;
    if (bytes)
      *bytes = (uint64_t)sqlite3_column_int64 (st, 1);
    r = -1;
    if (k < 0 || k > FD_EVIDENCE_CAP + 4096 ||
        (*text = malloc (kept + 1)) == NULL)
      fm_fail (err, "evidence %s of trial %lld: bad size %lld", name, trial_id,
               (long long)k);
    else if (uncompress ((Bytef *)*text, &kept, z, (uLong)zlen) != Z_OK ||
             kept != (uLongf)k) {
      fm_fail (err, "evidence %s of trial %lld: damaged", name, trial_id);
      free (*text);
      *text = NULL;
    } else {
      (*text)[kept] = '\0';
      *len = kept;
      r = 0;
    }
  }
  sqlite3_finalize (st);
  return r;
}
