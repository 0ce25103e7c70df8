/* futuredisk — harness: the report's tables: a query's rows as an HTML
 * table whose cells say their type (report-int.h).
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

/* A number's cell: right-aligned, its raw value in data-v for the
 * page's sorting, text as svg.h's units say.
 */
static void
num_cell (FILE *fp, sqlite3_stmt *st, int i, char type)
{
  char buf[64];
  double v = sqlite3_column_double (st, i);

  if (sqlite3_column_type (st, i) == SQLITE_NULL) {
    fputs (type == '?' ? "<td class=\"num\">?</td>"
                       : "<td class=\"num\">-</td>",
           fp);
    return;
  }
  fprintf (fp, "<td class=\"num\" data-v=\"%.17g\">", v);
  if (type == 's')
    fd_fmt_secs (buf, sizeof buf, v);
  else if (type == 'L')
    snprintf (buf, sizeof buf, "%lld", sqlite3_column_int64 (st, i));
  else
    fd_fmt_num (buf, sizeof buf, v);
  if (type == 'L')
    fprintf (fp, "<a href=\"#trial-%s\">%s</a>", buf, buf);
  else
    fputs (buf, fp);
  fputs ("</td>", fp);
}

/* Column i of st's row as a cell of type (see query_table). */
void
rp_cell (FILE *fp, sqlite3_stmt *st, int i, char type)
{
  switch (type) {
    case 't':
      fputs ("<td>", fp);
      fd_html (fp, rp_col (st, i));
      fputs ("</td>", fp);
      return;
    case 'T':
    case 'w':
      fputs (type == 'T' ? "<td class=\"long\">" : "<td class=\"nw\">", fp);
      fd_html (fp, rp_col (st, i));
      fputs ("</td>", fp);
      return;
    case 'c':
      fputs ("<td><code>", fp);
      fd_html (fp, rp_col (st, i));
      fputs ("</code></td>", fp);
      return;
    case 'y':
      fputs (sqlite3_column_int (st, i) ? "<td>yes</td>" : "<td>no</td>", fp);
      return;
    default:
      num_cell (fp, st, i, type);
  }
}

/* A table's head: numbers' columns right-aligned over them. */
void
rp_table_head (FILE *fp, const char *cols, const char *const *heads,
               const char *cls)
{
  size_t k;

  fprintf (fp, "<table class=\"%s\"><thead><tr>", cls ? cls : "fd-table");
  for (k = 0; cols[k]; k++)
    fprintf (fp, "<th%s>%s</th>",
             strchr ("tTwcy", cols[k]) ? "" : " class=\"num\"", heads[k]);
  fputs ("</tr></thead><tbody>\n", fp);
}

/* The rows of st as an HTML table (sortable and filterable by the page's
 * script) under heads, one column per letter of cols: t text, T long
 * text (broken anywhere), w short text (never broken), c code, y yes or
 * no, n a count, f a mean, ? a mean or "?" when NULL, s seconds, L a
 * trial's id linking to its details.  Without rows, the paragraph none.
 * Finalizes st.  The table's class is cls (NULL: "fd-table", the class
 * the script sorts and filters).
 */
void
rp_query_table_as (FILE *fp, sqlite3_stmt *st, const char *cols,
                   const char *const *heads, const char *none, const char *cls)
{
  size_t n = 0, k;

  while (st && sqlite3_step (st) == SQLITE_ROW) {
    if (n++ == 0)
      rp_table_head (fp, cols, heads, cls);
    fputs ("<tr>", fp);
    for (k = 0; cols[k]; k++)
      rp_cell (fp, st, (int)k, cols[k]);
    fputs ("</tr>\n", fp);
  }
  sqlite3_finalize (st);
  if (n)
    fputs ("</tbody></table>\n", fp);
  else
    fprintf (fp, "<p class=\"none\">%s</p>\n", none);
}

void
rp_query_table (FILE *fp, sqlite3_stmt *st, const char *cols,
                const char *const *heads, const char *none)
{
  rp_query_table_as (fp, st, cols, heads, none, NULL);
}
