/* futuredisk — harness: the three charts the report draws, as inline SVG.
 *
 * Plain SVG 1.1 written straight into the HTML: no scripts, no external
 * files, readable in any browser or mail client.  Each chart is one
 * <svg> with a class ("fd-lines", "fd-bars", "fd-heat") and a <title>, so
 * tests and people can find them.  Labels are HTML-escaped here.
 */
#ifndef FUTUREDISK_SVG_H
#define FUTUREDISK_SVG_H

#include <stddef.h>
#include <stdio.h>

/* Write s with &, <, >, " escaped. */
extern void fd_html (FILE *fp, const char *s);

/* Lines over categories: series[s].y[x] (NAN where missing).  A log
 * scale when the values span more than two decades.
 */
struct fd_series {
  const char *name;
  const double *y;
};
extern void fd_svg_lines (FILE *fp, const char *title, const char *yunit,
                          const char *const *xlabels, size_t nx,
                          const struct fd_series *series, size_t ns);

/* Horizontal stacked bars: bar b's segment k is v[b * nseg + k]. */
extern void fd_svg_bars (FILE *fp, const char *title, const char *unit,
                         const char *const *labels, size_t nbars,
                         const char *const *segments, size_t nseg,
                         const double *v);

/* A grid of classes: cell (r, c) has class cls[r * nc + c] (an index into
 * classes, or -1 for no trials) and a tooltip tip[r * nc + c].
 */
extern void fd_svg_heat (FILE *fp, const char *title, const char *const *rows,
                         size_t nr, const char *const *cols, size_t nc,
                         const int *cls, const char *const *tip,
                         const char *const *classes, size_t nclasses);

#endif
