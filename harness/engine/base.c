/* futuredisk — harness: populate once, break many times (see base.h).
 *
 * What must hold of a base for a clone to be the trial populated afresh:
 * the disk is as the populating server left it at exit, unmounted (or
 * cut, with --crash) and flushed, and no fault of the broken disk was on
 * it yet (they come with the second server, which a clone starts as a
 * fresh trial does: cache empty, power on, virtual clock at zero, the
 * same fault keys and seed).  The populate's own virtual time, I/O
 * counters and promises come with the base (its phases and manifest), so
 * the record accounts for them as the fresh trial's does.  The store is
 * only ever read after it moved into the base; the plugin refuses a
 * clone of a base that changed.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attach.h"
#include "crashpoints.h"
#include "target.h"
#include "trial-int.h"
#include "errmsg.h"
#include "fsadapter.h"
#include "base.h"

#define STORE_NAME   "disk.store"
#define MANIFEST     "manifest.saved"
#define PHASES       "phases.tsv"
#define POPULATE_LOG "faults-populate.jsonl"
#define READY        "ready"
#define MAX_PARTS    64 /* disk.store.1, ...: a store of more than 8 TiB */

/* ---- one trial's side: save a base, clone one ---- */

/* dir/name and its parts name.1, ... moved to to/name (ENOENT: done). */
static int
move_store (const char *from, const char *to, struct fm_err *err)
{
  char a[PATH_MAX + 16], b[PATH_MAX + 16];
  int i;

  if (rename (from, to) == -1)
    return fm_fail (err, "%s -> %s: %s", from, to, fd_strerror (errno));
  for (i = 1; i < MAX_PARTS; i++) {
    snprintf (a, sizeof a, "%s.%d", from, i);
    snprintf (b, sizeof b, "%s.%d", to, i);
    if (rename (a, b) == -1) {
      if (errno == ENOENT)
        break;
      return fm_fail (err, "%s -> %s: %s", a, b, fd_strerror (errno));
    }
  }
  return 0;
}

/* from/name linked as to/name, if from has it. */
static int
link_if (const char *from, const char *to, const char *name, struct fm_err *err)
{
  char a[PATH_MAX + 64], b[PATH_MAX + 64];

  snprintf (a, sizeof a, "%s/%s", from, name);
  snprintf (b, sizeof b, "%s/%s", to, name);
  if (link (a, b) == -1 && errno != ENOENT)
    return fm_fail (err, "link %s %s: %s", a, b, fd_strerror (errno));
  return 0;
}

/* The populate's phases (exact: hex floats), and how it attached. */
static int
save_phases (const struct trial *t, const char *path, struct fm_err *err)
{
  FILE *fp = fopen (path, "w");
  size_t i;

  if (fp == NULL)
    return fm_fail (err, "%s: %s", path, fd_strerror (errno));
  fprintf (fp, "attach\t%s\n", t->r->attached ? t->r->attached : "");
  for (i = 0; i < t->r->nph; i++) {
    const struct phase *p = &t->r->ph[i];
    fprintf (fp,
             "%s\t%a\t%a\t%a\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64
             "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\n",
             p->name, p->virtual_s, p->wall_s, p->cpu_s, p->reads, p->writes,
             p->bytes_read, p->bytes_written, p->read_errors, p->watched,
             p->ahead, p->unwatched);
  }
  if (fclose (fp) == EOF)
    return fm_fail (err, "%s: %s", path, fd_strerror (errno));
  return 0;
}

int
fd_base_save (struct trial *t, const char *dir, struct fm_err *err)
{
  char path[PATH_MAX + 64], tmp[PATH_MAX + 64];
  FILE *fp;

  if (mkdir (dir, 0700) == -1)
    return fm_fail (err, "%s: %s", dir, fd_strerror (errno));
  snprintf (path, sizeof path, "%s/" STORE_NAME, dir);
  if (move_store (t->s->store, path, err) == -1)
    return -1;
  snprintf (path, sizeof path, "%s/" MANIFEST, dir);
  if (fd_manifest_save (&t->r->m, path, err) == -1)
    return -1;
  snprintf (path, sizeof path, "%s/" PHASES, dir);
  if (save_phases (t, path, err) == -1 ||
      link_if (t->s->dir, dir, POPULATE_LOG, err) == -1)
    return -1;
  /* Last, and whole or not at all: the campaign starts clones on it. */
  snprintf (tmp, sizeof tmp, "%s/" READY ".tmp", dir);
  snprintf (path, sizeof path, "%s/" READY, dir);
  if ((fp = fopen (tmp, "w")) == NULL || fclose (fp) == EOF ||
      rename (tmp, path) == -1)
    return fm_fail (err, "%s: %s", path, fd_strerror (errno));
  return 0;
}

/* A phase name as the static string the trial uses for it. */
static const char *
phase_named (const char *name)
{
  static const char *const names[] = {"populate", "unmount", "crash"};
  size_t i;

  for (i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp (names[i], name) == 0)
      return names[i];
  return NULL;
}

static int
load_phase (char *line, struct phase *p)
{
  char name[32];
  int n;

  /* A base kept before the drive counted its picks has 9 fields. */
  memset (p, 0, sizeof *p);
  n = sscanf (line,
              "%31[^\t]\t%la\t%la\t%la\t%" SCNu64 "\t%" SCNu64 "\t%" SCNu64
              "\t%" SCNu64 "\t%" SCNu64 "\t%" SCNu64 "\t%" SCNu64 "\t%" SCNu64,
              name, &p->virtual_s, &p->wall_s, &p->cpu_s, &p->reads, &p->writes,
              &p->bytes_read, &p->bytes_written, &p->read_errors, &p->watched,
              &p->ahead, &p->unwatched);
  if ((n != 9 && n != 12) || (p->name = phase_named (name)) == NULL)
    return -1;
  return 0;
}

static int
load_phases (struct trial *t, const char *path, struct fm_err *err)
{
  FILE *fp = fopen (path, "r");
  char line[512], via[16] = "";
  int ret = 0;

  if (fp == NULL)
    return fm_fail (err, "%s: %s", path, fd_strerror (errno));
  if (fgets (line, sizeof line, fp) == NULL || strncmp (line, "attach\t", 7))
    ret = fm_fail (err, "%s: no attach line", path);
  else
    sscanf (line + 7, "%15s", via);
  t->r->attached = fd_attach_via_name (via);
  while (ret == 0 && fgets (line, sizeof line, fp)) {
    struct phase *p = &t->r->ph[t->r->nph];
    if (t->r->nph == MAX_PHASES || load_phase (line, p) == -1)
      ret = fm_fail (err, "%s: a malformed phase: %s", path, line);
    /* Virtual time and I/O as the populate had them; this trial spent no
     * wall or CPU time on it.
     */
    p->wall_s = p->cpu_s = 0;
    t->r->nph++;
  }
  fclose (fp);
  return ret;
}

int
fd_base_check (const char *dir, struct fm_err *err)
{
  char path[PATH_MAX + 64];

  snprintf (path, sizeof path, "%s/" READY, dir);
  if (access (path, F_OK) == -1)
    return fm_fail (err, "--base %s: not a populated disk (no %s: %s)", dir,
                    READY, fd_strerror (errno));
  return 0;
}

int
fd_base_clone (struct trial *t, const char *dir, struct fm_err *err)
{
  char path[PATH_MAX + 64];

  if (fd_base_check (dir, err) == -1)
    return -1;
  snprintf (path, sizeof path, "%s/" PHASES, dir);
  if (load_phases (t, path, err) == -1)
    return -1;
  snprintf (path, sizeof path, "%s/" MANIFEST, dir);
  if (fd_manifest_load (path, &t->r->m, err) == -1 ||
      link_if (dir, t->s->dir, POPULATE_LOG, err) == -1)
    return -1;
  /* What the populate leaves in the trial's directory, for a reader. */
  snprintf (path, sizeof path, "%s/manifest.tsv", t->s->dir);
  if (fd_manifest_write (&t->r->m, path, err) == -1)
    return -1;
  t->r->cloned = true;
  return 0;
}

void
fd_base_remove (const char *dir)
{
  static const char *const files[] = {STORE_NAME,       MANIFEST, PHASES,
                                      POPULATE_LOG,     READY,    READY ".tmp",
                                      FD_WRITELOG_NAME, NULL};
  char path[PATH_MAX + 32];
  size_t i;

  for (i = 1; i < MAX_PARTS; i++) {
    snprintf (path, sizeof path, "%s/" STORE_NAME ".%zu", dir, i);
    if (unlink (path) == -1)
      break;
  }
  for (i = 0; files[i]; i++) {
    snprintf (path, sizeof path, "%s/%s", dir, files[i]);
    unlink (path);
  }
  rmdir (dir);
}
