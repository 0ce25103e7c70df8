/* futuredisk — harness: the report's IRON fingerprint (Prabhakaran et
 * al., SOSP'05): per file system, block type x fault kind, three maps.
 */
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>

#include "append.h"
#include "commands.h"
#include "db.h"
#include "errmsg.h"
#include "evidence.h"
#include "options.h"
#include "regress.h"
#include "report.h"
#include "robust.h"
#include "report-int.h"
#include "svg.h"

/* 3. The IRON fingerprint: per file system, block type x fault kind,
 * coloured by the worst thing that happened.  Every map's classes go
 * from best to worst, so that on all three red means worse.
 */
static const char *const iron_classes[] = {
    "tolerated: check clean, nothing lost", "detected and repaired",
    "mounted only after escalation",        "repaired, files lost",
    "silent: check clean, files lost",      "unrepaired: recheck not clean",
    "unmountable after the repair",
};

/* A trial's outcome class; -1 for a rig error, which says nothing about
 * the file system.
 */
static int
iron_class (const char *check, const char *recheck, double lost,
            const char *error, const char *mount)
{
  if (error[0])
    return -1;
  if (strcmp (mount, "UNMOUNTABLE") == 0)
    return 6;
  if (recheck[0] && strcmp (recheck, "CLEAN") != 0)
    return 5;
  if (lost > 0)
    return strcmp (check, "CLEAN") == 0 ? 4 : 3;
  if (strcmp (mount, "RECOVERED") == 0)
    return 2;
  return strcmp (check, "CLEAN") == 0 ? 0 : 1;
}

/* The fingerprint's two axes (trial.h), best first: a checksum is sure
 * to notice, a sanity check may not; recovered with nothing lost beats
 * the checker's repair, which beats handing the application an error.
 */
static const char *const detection_classes[] = {"checksum", "error-code",
                                                "sanity", "none"};
static const char *const recovery_classes[] = {
    "redundancy", "retry", "remap", "repair", "propagate", "none"};

/* The fault kinds a target can carry: the disk's (ure, lse), the
 * media's (rot) and the write's (lost, misdirected, torn).
 */
static const char *const iron_kinds[] = {
    "ure", "lse", "rot", "lost-write", "misdirected-write", "torn-write"};
#define NKINDS (sizeof iron_kinds / sizeof iron_kinds[0])

/* One targeted trial: where its fault went and what came of it, on the
 * three maps (outcome, detection, recovery; -1 where unknown).
 */
struct iron_row {
  char fs[32], type[32], kind[24];
  int cls[3];
  bool error;
};

static const struct {
  const char *title;
  const char *const *legend;
  size_t n;
  bool worst; /* the worst trial colours the cell, else the most common */
} iron_maps[] = {
    {"the worst outcome of the cell's trials", iron_classes, 7, true},
    {"how the fault was detected (the most common)", detection_classes, 4,
     false},
    {"what recovered from it (the most common)", recovery_classes, 6, false},
};

static int
index_of (const char *const *v, size_t n, const char *s)
{
  size_t i;

  for (i = 0; i < n && strcmp (v[i], s); i++)
    ;
  return i < n ? (int)i : -1;
}

/* The tooltip of a cell: its trials by class, and its rig errors. */
static char *
iron_tip (const char *type, const char *kind, size_t m, const size_t *counts,
          size_t total, size_t errors)
{
  char t[400];
  int len = snprintf (t, sizeof t, "%s, %s: %zu trials", type, kind, total);
  size_t k;

  for (k = 0; k < iron_maps[m].n; k++)
    if (counts[k] && len > 0 && (size_t)len < sizeof t)
      len += snprintf (t + len, sizeof t - len, "; %zu %s", counts[k],
                       iron_maps[m].legend[k]);
  if (errors && len > 0 && (size_t)len < sizeof t)
    snprintf (t + len, sizeof t - len, "; %zu rig errors (not counted)",
              errors);
  return strdup (t);
}

/* Map m's class for file system fs with a fault of kind in a block of
 * type, -1 if none; *tip counts the trials by class, *label is "k/n"
 * (k of the cell's n trials are of its class).
 */
static int
iron_cell (const struct iron_row *rows, size_t nrows, size_t m, const char *fs,
           const char *type, const char *kind, char **tip, char **label)
{
  size_t counts[8] = {0}, total = 0, errors = 0, j, k;
  int cls = -1;

  for (j = 0; j < nrows; j++) {
    if (strcmp (rows[j].fs, fs) || strcmp (rows[j].type, type) ||
        strcmp (rows[j].kind, kind))
      continue;
    errors += rows[j].error;
    if (rows[j].cls[m] >= 0) {
      counts[rows[j].cls[m]]++;
      total++;
    }
  }
  for (k = 0; k < iron_maps[m].n; k++)
    if (counts[k] && (cls < 0 || iron_maps[m].worst || counts[k] > counts[cls]))
      cls = (int)k;
  if (total || errors) {
    char l[32];
    *tip = iron_tip (type, kind, m, counts, total, errors);
    snprintf (l, sizeof l, "%zu/%zu", cls >= 0 ? counts[cls] : 0, total);
    *label = strdup (l);
  }
  return cls;
}

/* The fingerprint of file system fs, its three maps; -1 when out of
 * memory.
 */
static int
iron_map (FILE *fp, const struct iron_row *rows, size_t nrows, const char *fs)
{
  struct strs types = {0};
  int *cls;
  char **tips, **labels;
  size_t i, nt, m;
  char title[160];
  bool ok;

  for (i = 0; i < nrows; i++)
    if (strcmp (rows[i].fs, fs) == 0)
      rp_strs_index (&types, rows[i].type);
  nt = types.n;
  cls = malloc (nt * NKINDS * sizeof *cls);
  tips = calloc (nt * NKINDS, sizeof *tips);
  labels = calloc (nt * NKINDS, sizeof *labels);
  ok = cls && tips && labels;
  if (ok) {
    fputs ("<h3 id=\"iron-", fp);
    fd_html (fp, fs);
    fputs ("\">", fp);
    fd_html (fp, fs);
    fputs ("</h3>\n<div class=\"maps\">\n", fp);
    for (m = 0; m < sizeof iron_maps / sizeof iron_maps[0]; m++) {
      for (i = 0; i < nt * NKINDS; i++)
        cls[i] = iron_cell (rows, nrows, m, fs, types.v[i / NKINDS],
                            iron_kinds[i % NKINDS], &tips[i], &labels[i]);
      snprintf (title, sizeof title, "%s: %s", fs, iron_maps[m].title);
      fd_svg_heat (fp, title, (const char *const *)types.v, nt, iron_kinds,
                   NKINDS, cls, (const char *const *)labels,
                   (const char *const *)tips, iron_maps[m].legend,
                   iron_maps[m].n);
      for (i = 0; i < nt * NKINDS; i++) {
        free (tips[i]);
        free (labels[i]);
        tips[i] = labels[i] = NULL;
      }
    }
    fputs ("</div>\n", fp);
  }
  free (labels);
  free (tips);
  free (cls);
  rp_strs_free (&types);
  return ok ? 0 : -1;
}

static void
iron_intro (FILE *fp)
{
  fputs ("<h2 id=\"iron\">IRON fingerprint: what each file system does with "
         "a bad block</h2>\n"
         "<p>Trials that fault one block of a type (rows) with a kind of "
         "fault (columns): ure = unreadable, lse = latent sector error, rot "
         "= one bit flipped at rest, and the last write to the block lost, "
         "misdirected (landed nearby) or torn.  Three maps per file system "
         "(Prabhakaran et al., SOSP'05): the worst outcome over the cell's "
         "trials; how the fault was <b>detected</b> (a checksum, the disk's "
         "error code, the checker's sanity checks, or not at all); and what "
         "<b>recovered</b> from it (a redundant copy, a retry, a remapped "
         "sector, the checker's repair, the error handed to the "
         "application, or nothing), the most common over the trials.  One "
         "colour scale on every map: pale green is the best class, dark red "
         "the worst.  A cell's <i>k/n</i>: k of its n trials are of the "
         "class it shows (hover for all of them); trials that ended in a "
         "rig error are not counted.</p>\n",
         fp);
}

void
rp_section_iron (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  sqlite3_stmt *st =
      rp_prepare (db,
                  "SELECT fs, ttype, tkind, coalesce(check_outcome, ''), "
                  " coalesce(recheck_outcome, ''), lost, error, "
                  " coalesce(detection, ''), coalesce(recovery, ''), mount "
                  "FROM t WHERE campaign = ?1 AND run_id = ?2 "
                  " AND ttype NOT IN ('', '+') "
                  "ORDER BY fs, ttype, tkind",
                  c, r);
  struct strs fss = {0};
  struct iron_row *rows = NULL;
  size_t nrows = 0, f;

  iron_intro (fp);
  while (st && sqlite3_step (st) == SQLITE_ROW) {
    struct iron_row *w = fd_append (&rows, &nrows, sizeof *rows);
    if (w == NULL)
      break;
    snprintf (w->fs, sizeof w->fs, "%s", rp_col (st, 0));
    snprintf (w->type, sizeof w->type, "%s", rp_col (st, 1));
    snprintf (w->kind, sizeof w->kind, "%s", rp_col (st, 2));
    w->error = rp_col (st, 6)[0] != '\0';
    w->cls[0] = iron_class (rp_col (st, 3), rp_col (st, 4),
                            sqlite3_column_double (st, 5), rp_col (st, 6),
                            rp_col (st, 9));
    w->cls[1] = w->error ? -1 : index_of (detection_classes, 4, rp_col (st, 7));
    w->cls[2] = w->error ? -1 : index_of (recovery_classes, 6, rp_col (st, 8));
    rp_strs_index (&fss, w->fs);
  }
  sqlite3_finalize (st);
  if (nrows == 0)
    fputs ("<p class=\"none\">No targeted trials in this night.</p>\n", fp);
  for (f = 0; f < fss.n && iron_map (fp, rows, nrows, fss.v[f]) == 0; f++)
    ;
  free (rows);
  rp_strs_free (&fss);
}
