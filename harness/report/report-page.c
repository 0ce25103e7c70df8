/* futuredisk — harness: the report page itself: its style, its small
 * sorting and filtering script, its head and contents, and the order of
 * its sections (fd_report_write).
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
#include "progname.h"
#include "db.h"
#include "errmsg.h"
#include "evidence.h"
#include "options.h"
#include "regress.h"
#include "report.h"
#include "robust.h"
#include "report-int.h"
#include "svg.h"

static const char page_style[] =
    "<style>body{font-family:sans-serif;max-width:82em;margin:1em auto;"
    "padding:0 1em;color:#222;line-height:1.4}"
    "table{border-collapse:collapse;margin:.5em 0;font-size:.92em}"
    "td,th{border:1px solid #ccc;padding:.15em .5em;text-align:left;"
    "vertical-align:top}th{background:#f2f2f2}td.long{overflow-wrap:anywhere;"
    "min-width:12em}td.nw{white-space:nowrap}td.num{text-align:right;white-"
    "space:nowrap;"
    "font-variant-numeric:tabular-nums}th.num{text-align:right}"
    "th.sortable{cursor:pointer}th[aria-sort=ascending]::after{content:' "
    "\\25B2'}th[aria-sort=descending]::after{content:' \\25BC'}"
    "figure{margin:1em 0}figcaption{font-weight:bold;margin-top:.3em}"
    "svg{display:block}.maps{display:flex;flex-wrap:wrap;gap:0 2em;"
    "align-items:flex-start}.none{color:#666}.changed{color:#b2182b}"
    "nav ul{padding-left:1.2em;columns:3}"
    "input.filter{margin:.5em 0 0;padding:.2em .4em;width:20em}"
    ".trial{border-top:1px solid #ccc;margin-top:1em}"
    "pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f8f8f8;"
    "padding:.4em;font-size:.85em}details{margin:.2em 0}"
    "summary{cursor:pointer}.cut{color:#666;font-size:.9em;margin:.2em 0}"
    "</style>\n";

/* Sorting and filtering of the tables: a click on a heading sorts by its
 * column (numbers by their data-v), the box above a table keeps the rows
 * holding its text.  Without scripts the page reads the same, unsorted.
 */
static const char page_script[] =
    "<script>\n(function () {\n"
    "  function key(td) {\n"
    "    var v = td.getAttribute('data-v');\n"
    "    return v === null ? td.textContent.trim() : parseFloat(v);\n"
    "  }\n"
    "  function cmp(a, b) {\n"
    "    if (typeof a === 'number' && typeof b === 'number') return a - b;\n"
    "    if (typeof a === 'number') return -1;\n"
    "    if (typeof b === 'number') return 1;\n"
    "    return a.localeCompare(b, undefined, {numeric: true});\n"
    "  }\n"
    "  function sortable(table) {\n"
    "    var body = table.tBodies[0], heads = table.tHead.rows[0].cells;\n"
    "    Array.prototype.forEach.call(heads, function (th, i) {\n"
    "      th.tabIndex = 0;\n"
    "      th.classList.add('sortable');\n"
    "      function sort() {\n"
    "        var asc = th.getAttribute('aria-sort') !== 'ascending';\n"
    "        var rows = Array.prototype.slice.call(body.rows);\n"
    "        Array.prototype.forEach.call(heads, function (h) {\n"
    "          h.removeAttribute('aria-sort');\n"
    "        });\n"
    "        th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');\n"
    "        rows.sort(function (a, b) {\n"
    "          var c = cmp(key(a.cells[i]), key(b.cells[i]));\n"
    "          return asc ? c : -c;\n"
    "        });\n"
    "        rows.forEach(function (r) { body.appendChild(r); });\n"
    "      }\n"
    "      th.addEventListener('click', sort);\n"
    "      th.addEventListener('keydown', function (e) {\n"
    "        if (e.key === 'Enter') sort();\n"
    "      });\n"
    "    });\n"
    "  }\n"
    "  function filterable(table) {\n"
    "    var body = table.tBodies[0], input = "
    "document.createElement('input');\n"
    "    input.type = 'search';\n"
    "    input.className = 'filter';\n"
    "    input.placeholder = 'filter rows';\n"
    "    input.setAttribute('aria-label', 'keep the rows containing');\n"
    "    table.parentNode.insertBefore(input, table);\n"
    "    input.addEventListener('input', function () {\n"
    "      var q = input.value.toLowerCase();\n"
    "      Array.prototype.forEach.call(body.rows, function (r) {\n"
    "        r.hidden = q !== '' && "
    "r.textContent.toLowerCase().indexOf(q) < 0;\n"
    "      });\n"
    "    });\n"
    "  }\n"
    "  document.querySelectorAll('table.fd-table').forEach(function (t) {\n"
    "    sortable(t);\n"
    "    if (t.tBodies[0].rows.length > 5) filterable(t);\n"
    "  });\n"
    "})();\n</script>\n";

/* The page's contents, linking to each section. */
static void
page_nav (FILE *fp)
{
  static const char *const toc[][2] = {
      {"summary", "Summary per file system"},
      {"regressions", "Regressions"},
      {"findings", "Findings"},
      {"generations", "fsck time by disk generation"},
      {"passes", "Where the check spends its time"},
      {"iron", "IRON fingerprint"},
      {"loss", "Files lost per fault spec"},
      {"crash", "Crash trials"},
      {"crash-points", "Crash points"},
      {"repair-cut", "Power cuts during repair"},
      {"restore", "fsck or restore?"},
      {"escalation", "When the repair gives up"},
      {"trend", "Night over night"},
      {"errors", "Rig errors"},
      {"trials", "All trials"},
      {"details", "Trial details"},
  };
  size_t i;

  fputs ("<nav><ul>", fp);
  for (i = 0; i < sizeof toc / sizeof toc[0]; i++)
    fprintf (fp, "<li><a href=\"#%s\">%s</a></li>", toc[i][0], toc[i][1]);
  fputs ("</ul></nav>\n", fp);
}

/* The night's environments (schema version 5) and drive model versions
 * (7), with their trials.
 */
static void
page_env (FILE *fp, sqlite3 *db, const char *c, const char *r)
{
  static const char *const heads[] = {
      "host",     "kernel",      "futuredisk",  "nbdkit", "e2fsprogs",
      "xfsprogs", "btrfs-progs", "drive model", "trials"};
  sqlite3_stmt *st;

  if (!rp_has_table (db, "environments"))
    return;
  st = rp_prepare (db,
                   "SELECT e.host, e.kernel, e.futuredisk, e.nbdkit, "
                   " e.e2fsprogs, e.xfsprogs, e.btrfs_progs, t.model_version, "
                   " count(*) FROM t JOIN environments e ON e.id = t.env_id "
                   " WHERE t.campaign = ?1 AND t.run_id = ?2 GROUP BY e.id, "
                   " t.model_version ORDER BY e.id, t.model_version",
                   c, r);
  fputs ("<h3 id=\"environment\">Environment</h3>\n", fp);
  rp_query_table (fp, st, "tttttttnn", heads,
                  "Not recorded: the night's trials were recorded before "
                  "schema version 5.");
}

/* The headline: the night's counts in one paragraph. */
static void
page_headline (FILE *fp, sqlite3 *db, const char *c, const char *r,
               const struct fd_findings *reg)
{
  sqlite3_stmt *st = rp_prepare (
      db,
      "SELECT count(*), count(DISTINCT scenario), sum(finding != ''), "
      " sum(broken > 0), sum(mount = 'UNMOUNTABLE'), sum(error != ''), "
      " coalesce(sum(crash AND violations IS NOT NULL), 0), "
      " coalesce(sum(violations > 0 AND crash), 0), "
      " coalesce(sum(CASE WHEN crash THEN violations END), 0), "
      " coalesce(sum(CASE WHEN crash THEN allowed END), 0) "
      "FROM tb WHERE campaign = ?1 AND run_id = ?2",
      c, r);
  long long v[10] = {0};
  int k;

  if (st && sqlite3_step (st) == SQLITE_ROW)
    for (k = 0; k < 10; k++)
      v[k] = sqlite3_column_int64 (st, k);
  sqlite3_finalize (st);
  fprintf (fp,
           ": %lld trials in %lld scenarios; <b>%lld findings</b> (%lld lost "
           "data, %lld unmountable), %lld rig errors; <b>%zu "
           "regressions</b> against the nights before.",
           v[0], v[1], v[2], v[3], v[4], v[5], reg->regressions);
  if (v[6])
    fprintf (fp,
             " Of %lld crash trials, <b>%lld broke a durability promise</b> "
             "(%lld files: violations); %lld files that were in flight "
             "were lost, which a crash allows.",
             v[6], v[7], v[8], v[9]);
  fputs ("</p>\n", fp);
}

static void
page_head (FILE *fp, sqlite3 *db, const char *campaign, const char *run_id,
           const struct fd_findings *reg)
{
  /* Trials recorded by `futuredisk run --db` belong to no campaign. */
  const char *title = campaign[0] ? campaign : "trials outside campaigns";
  const char *night = run_id[0] ? run_id : "(none)";

  fputs ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta name=\"viewport\" content=\"width=device-width\">"
         "<title>futuredisk: ",
         fp);
  fd_html (fp, title);
  fputs (" ", fp);
  fd_html (fp, night);
  fputs ("</title>\n", fp);
  fputs (page_style, fp);
  fputs ("</head><body>\n<h1>futuredisk report: ", fp);
  fd_html (fp, title);
  fputs ("</h1>\n<p>Night <b>", fp);
  fd_html (fp, night);
  fputs ("</b>", fp);
  page_headline (fp, db, campaign, run_id, reg);
  page_env (fp, db, campaign, run_id);
  page_nav (fp);
}

int
fd_report_write (struct sqlite3 *db, const char *campaign, const char *run_id,
                 FILE *fp)
{
  struct fd_findings reg;
  struct fm_err err;

  /* Against the 7 nights before, as `futuredisk compare` by default. */
  if (fd_regress_night (db, campaign, run_id, 7, &reg, &err) == -1)
    fprintf (stderr, "%s report: regressions: %s\n", fd_progname, err.msg);
  page_head (fp, db, campaign, run_id, &reg);
  rp_section_summary (fp, db, campaign, run_id, &reg);
  rp_section_regressions (fp, &reg);
  rp_section_findings (fp, db, campaign, run_id);
  rp_section_generations (fp, db, campaign, run_id);
  rp_section_passes (fp, db, campaign, run_id);
  rp_section_iron (fp, db, campaign, run_id);
  rp_section_loss (fp, db, campaign, run_id);
  rp_section_crash (fp, db, campaign, run_id);
  rp_section_crash_points (fp, db, campaign, run_id);
  rp_section_repair_cut (fp, db, campaign, run_id);
  rp_section_restore (fp, db, campaign, run_id);
  rp_section_escalation (fp, db, campaign, run_id);
  rp_section_trends (fp, db, campaign);
  rp_section_errors (fp, db, campaign, run_id);
  rp_section_trials (fp, db, campaign, run_id);
  rp_section_details (fp, db, campaign, run_id);
  fd_findings_free (&reg);
  fputs ("<p><small>Generated by futuredisk " FUTUREDISK_VERSION
         " from the trial database (harness/SCHEMA.md).</small></p>\n",
         fp);
  fputs (page_script, fp);
  fputs ("</body></html>\n", fp);
  return ferror (fp) ? -1 : 0;
}
