/* futuredisk — harness: what the report's files share, and nothing
 * else includes.  The page is built in layers: report-db.c reads the
 * database (its views and query helpers), report-table.c writes a query
 * as an HTML table, the sections (report-charts.c, report-iron.c,
 * report-trials.c) each write their part of the page with those, and
 * report-page.c puts the page together in its order.  A lower layer
 * never calls a higher one.
 */
#ifndef FUTUREDISK_REPORT_INT_H
#define FUTUREDISK_REPORT_INT_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct fd_findings;

/* report-db.c */

/* Strings collected from query results, freed together. */
struct strs {
  char **v;
  size_t n;
};

/* The index of x in s, added if new; (size_t)-1 out of memory. */
extern size_t rp_strs_index (struct strs *s, const char *x);
extern void rp_strs_free (struct strs *s);

/* Values grouped by two indexes (file system and disk, line and night),
 * for medians.
 */
struct groups {
  struct group {
    size_t a, b;
    double *v;
    size_t n;
  } * g;
  size_t n;
};

extern int rp_groups_add (struct groups *gs, size_t a, size_t b, double x);

/* The groups' medians as an na x nb grid (`empty` where no group). */
extern double *rp_groups_medians (struct groups *gs, size_t na, size_t nb,
                                  double empty);
extern void rp_groups_free (struct groups *gs);

/* Rows of (row label, column label, ..., value at vcol) into groups
 * indexed by the labels' positions in a and b; the statement finalized.
 */
extern void rp_grid_from (sqlite3_stmt *st, struct strs *a, struct strs *b,
                          int vcol, struct groups *gs);

/* sql with ?1 bound to the campaign and ?2 (if it has one) to the night;
 * NULL, said on stderr, if it does not compile.
 */
extern sqlite3_stmt *rp_prepare (sqlite3 *db, const char *sql,
                                 const char *campaign, const char *run_id);

/* Column i of st's row as text ("" for NULL). */
extern const char *rp_col (sqlite3_stmt *st, int i);

/* Does the database have this table (an older schema may not)? */
extern bool rp_has_table (sqlite3 *db, const char *table);

/* report-table.c */

/* Column i of st's row as a cell of type (see rp_query_table). */
extern void rp_cell (FILE *fp, sqlite3_stmt *st, int i, char type);

/* A table's head: numbers' columns right-aligned over them. */
extern void rp_table_head (FILE *fp, const char *cols, const char *const *heads,
                           const char *cls);

/* The rows of st as an HTML table (sortable and filterable by the page's
 * script) under heads, one column per letter of cols: t text, T long
 * text (broken anywhere), w short text (never broken), c code, y yes or
 * no, n a count, f a mean, ? a mean or "?" when NULL, s seconds, L a
 * trial's id linking to its details.  Without rows, the paragraph none.
 * Finalizes st.  The table's class is cls (NULL: "fd-table", the class
 * the script sorts and filters).
 */
extern void rp_query_table_as (FILE *fp, sqlite3_stmt *st, const char *cols,
                               const char *const *heads, const char *none,
                               const char *cls);
extern void rp_query_table (FILE *fp, sqlite3_stmt *st, const char *cols,
                            const char *const *heads, const char *none);

/* The sections, each for campaign c's night r (report-charts.c,
 * report-iron.c, report-trials.c), in the page's order.
 */
extern void rp_section_summary (FILE *fp, sqlite3 *db, const char *c,
                                const char *r, const struct fd_findings *reg);
extern void rp_section_regressions (FILE *fp, const struct fd_findings *reg);
extern void rp_section_findings (FILE *fp, sqlite3 *db, const char *c,
                                 const char *r);
extern void rp_section_generations (FILE *fp, sqlite3 *db, const char *c,
                                    const char *r);
extern void rp_section_passes (FILE *fp, sqlite3 *db, const char *c,
                               const char *r);
extern void rp_section_iron (FILE *fp, sqlite3 *db, const char *c,
                             const char *r);
extern void rp_section_loss (FILE *fp, sqlite3 *db, const char *c,
                             const char *r);
extern void rp_section_crash (FILE *fp, sqlite3 *db, const char *c,
                              const char *r);
extern void rp_section_crash_points (FILE *fp, sqlite3 *db, const char *c,
                                     const char *r);
extern void rp_section_repair_cut (FILE *fp, sqlite3 *db, const char *c,
                                   const char *r);
extern void rp_section_restore (FILE *fp, sqlite3 *db, const char *c,
                                const char *r);
extern void rp_section_escalation (FILE *fp, sqlite3 *db, const char *c,
                                   const char *r);
/* Over the campaign's last nights, not one. */
extern void rp_section_trends (FILE *fp, sqlite3 *db, const char *c);
extern void rp_section_errors (FILE *fp, sqlite3 *db, const char *c,
                               const char *r);
extern void rp_section_trials (FILE *fp, sqlite3 *db, const char *c,
                               const char *r);
extern void rp_section_details (FILE *fp, sqlite3 *db, const char *c,
                                const char *r);

#endif
