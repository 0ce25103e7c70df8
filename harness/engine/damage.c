/* futuredisk — harness: the audit phase, and the files it found damaged mapped
 * to their faults (see trial-int.h).
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach.h"
#include "attribute.h"
#include "fsadapter.h"
#include "populate.h"
#include "trial-int.h"

/* Room for as many more items as text has lines, in one allocation: one
 * realloc per line copied the list each time, which took a minute for
 * the 6,000 damaged files of a torn ext3 under the sanitizers.
 */
static void *
grow_for_lines (void *list, size_t n, size_t size, const char *text)
{
  size_t lines = 1;
  const char *p;

  for (p = text; p && (p = strchr (p, '\n')) != NULL; p++)
    lines++;
  return realloc (list, (n + lines) * size);
}

/* The audit's "class\tpath\n" lines as a list, once. */
static int
collect_damaged (struct trial *t, const char *text, struct fm_err *err)
{
  const char *line = text;
  struct fd_damaged *v;

  v = grow_for_lines (t->r->damaged, t->r->ndamaged, sizeof *v, text);
  if (v == NULL)
    return fm_fail (err, "out of memory");
  t->r->damaged = v;
  while (line && *line) {
    const char *tab = strchr (line, '\t'), *nl = strchrnul (line, '\n'), *end;
    struct fd_damaged *x;

    if (tab == NULL || tab > nl)
      break;
    x = &v[t->r->ndamaged++];
    memset (x, 0, sizeof *x);
    snprintf (x->cls, sizeof x->cls, "%.*s", (int)(tab - line), line);
    /* "class\tpath", or "class\tpath\twhere it was found" */
    if ((end = memchr (tab + 1, '\t', (size_t)(nl - tab - 1))) != NULL)
      snprintf (x->found_at, sizeof x->found_at, "%.*s", (int)(nl - end - 1),
                end + 1);
    else
      end = nl;
    snprintf (x->path, sizeof x->path, "%.*s", (int)(end - tab - 1), tab + 1);
    line = *nl ? nl + 1 : nl;
  }
  return 0;
}

/* The audit's "how\tfound\tpath\n" lines as a list. */
static int
collect_violations (struct trial *t, const char *text, struct fm_err *err)
{
  const char *line = text;
  struct fd_violation *v;

  v = grow_for_lines (t->r->violations, t->r->nviolations, sizeof *v, text);
  if (v == NULL)
    return fm_fail (err, "out of memory");
  t->r->violations = v;
  while (line && *line) {
    const char *t1 = strchr (line, '\t'), *nl = strchrnul (line, '\n');
    const char *t2 = t1 ? strchr (t1 + 1, '\t') : NULL;
    struct fd_violation *x;

    if (t2 == NULL || t2 > nl)
      break;
    x = &v[t->r->nviolations++];
    snprintf (x->how, sizeof x->how, "%.*s", (int)(t1 - line), line);
    snprintf (x->found, sizeof x->found, "%.*s", (int)(t2 - t1 - 1), t1 + 1);
    snprintf (x->path, sizeof x->path, "%.*s", (int)(nl - t2 - 1), t2 + 1);
    line = *nl ? nl + 1 : nl;
  }
  return 0;
}

/* Was x lost from the tree: no longer found under its name? */
static bool
lost_from_tree (const struct fd_damaged *x)
{
  return strcmp (x->cls, "missing") == 0 ||
         strcmp (x->cls, "lost_found") == 0 ||
         strcmp (x->cls, "link_lost") == 0;
}

/* While mounted: where each damaged file's blocks are (at most 200), and
 * for a file lost from the tree, its nearest directory's (where its name
 * was) on a file system FIEMAP maps.
 */
void
fd_trial_map_damaged (struct trial *t, struct fd_disk *d)
{
  size_t k;

  for (k = 0; k < t->r->ndamaged && k < 200; k++) {
    /* A file in lost+found: its blocks there (a lost write to its
     * directory may have sent it there, one to its data may come with it).
     */
    const char *path = t->r->damaged[k].found_at[0] ? t->r->damaged[k].found_at
                                                    : t->r->damaged[k].path;
    if (!t->s->fs->file_ranges && lost_from_tree (&t->r->damaged[k])) {
      t->r->damaged[k].dir_extents =
          fd_dir_extents_of (t->s->mnt, t->r->damaged[k].path);
      if (t->s->fs->fiemap_to_device)
        fd_extents_map (t->r->damaged[k].dir_extents,
                        t->s->fs->fiemap_to_device, fd_disk_device (d));
    }
    if (t->s->fs->file_ranges) {
      t->r->damaged[k].extents =
          fd_extents_from (t->s->fs, fd_disk_socket (d), t->s->mnt, path);
      continue;
    }
    t->r->damaged[k].extents = fd_extents_of (t->s->mnt, path);
    if (t->s->fs->fiemap_to_device)
      fd_extents_map (t->r->damaged[k].extents, t->s->fs->fiemap_to_device,
                      fd_disk_device (d));
  }
}

/* After the server wrote its last log line: the faults behind each. */
void
fd_trial_explain_damaged (struct trial *t)
{
  char log[PATH_MAX + 32], plog[PATH_MAX + 32];
  size_t k;

  /* Faults of the writes (lost, misdirected, torn by the cut) are in the
   * populating server's log, the rest in the broken disk's.
   */
  snprintf (log, sizeof log, "%s/faults.jsonl", t->s->dir);
  snprintf (plog, sizeof plog, "%s/faults-populate.jsonl", t->s->dir);
  for (k = 0; k < t->r->ndamaged; k++) {
    struct fd_damaged *x = &t->r->damaged[k];
    char kinds[64] = "", *kind, *save = NULL;
    x->cause[0] = '\0';
    fd_attribute (x->extents, plog, x->cause, sizeof x->cause);
    fd_attribute (x->extents, log, x->cause, sizeof x->cause);
    fd_attribute (x->dir_extents, plog, kinds, sizeof kinds);
    fd_attribute (x->dir_extents, log, kinds, sizeof kinds);
    for (kind = strtok_r (kinds, ",", &save); kind;
         kind = strtok_r (NULL, ",", &save)) {
      size_t n = strlen (x->cause);
      snprintf (x->cause + n, sizeof x->cause - n, "%sdir:%s", n ? "," : "",
                kind);
    }
    fd_extents_free (x->extents);
    fd_extents_free (x->dir_extents);
    x->extents = x->dir_extents = NULL;
  }
}

/* The audit phase: every file read back, the damaged ones and the
 * broken promises listed.
 */
int
fd_trial_audit (struct trial *t, struct fd_disk *d, struct fm_err *err)
{
  char *text = NULL, *vtext = NULL;
  size_t text_len = 0, vtext_len = 0;
  struct fd_clocks c;
  struct phase *p;
  int r = 0;

  t->r->audit.detail = open_memstream (&text, &text_len);
  t->r->audit.violations = open_memstream (&vtext, &vtext_len);
  if (t->r->audit.detail == NULL || t->r->audit.violations == NULL)
    r = fm_fail (err, "out of memory");
  else if ((p = fd_phase_begin (t, d, "audit", &c, err)) == NULL ||
           fd_audit (t->s->mnt, t->s->seed, &t->r->m, &t->r->audit, err) ==
               -1 ||
           fd_phase_end (d, p, &c, err) == -1)
    r = -1;
  if (t->r->audit.detail)
    fclose (t->r->audit.detail);
  if (t->r->audit.violations)
    fclose (t->r->audit.violations);
  t->r->audit.detail = NULL;
  t->r->audit.violations = NULL;
  if (r == 0)
    r = collect_damaged (t, text, err);
  if (r == 0)
    r = collect_violations (t, vtext, err);
  free (text);
  free (vtext);
  if (r == 0)
    t->r->audited = true;
  return r;
}
