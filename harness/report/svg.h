/* futuredisk — harness: the charts the report draws, as inline SVG, and
 * the numbers it prints, in units a person reads.
 *
 * Plain SVG 1.1 written straight into the HTML, no external files.  Each
 * chart is one <figure> holding an <svg> with a class ("fd-lines",
 * "fd-bars", "fd-heat") and a <title>, and a <figcaption> with the same
 * title, so that the caption is on the page and not only on hover.  Every
 * label is measured (approximately, see svg.c) and the drawing made wide
 * enough for it: no label is cut.  Labels are HTML-escaped here.
 */
#ifndef FUTUREDISK_SVG_H
#define FUTUREDISK_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Write s with &, <, >, " escaped. */
extern void fd_html (FILE *fp, const char *s);

/* Numbers as people write them, into buf (n bytes), which is returned:
 * fd_fmt_num three significant digits and never an exponent (1,440;
 * 13.9; 0.0412), fd_fmt_secs in s, min, h or days (67.4 s, 3.4 min),
 * fd_fmt_bytes in binary units when a whole number of MiB below 1 TiB
 * (512 MiB, as sizes are given), else decimal (500 GB, 8 TB, as disks are
 * sold).
 */
extern char *fd_fmt_num (char *buf, size_t n, double v);
extern char *fd_fmt_secs (char *buf, size_t n, double s);
extern char *fd_fmt_bytes (char *buf, size_t n, double bytes);

/* v in unit: seconds ("s") as fd_fmt_secs, else the number, then the
 * unit ("%" without a space).
 */
extern char *fd_fmt_unit (char *buf, size_t n, double v, const char *unit);

/* Lines over categories: series[s].y[x] (NAN where missing).  A log
 * scale when the values span more than two decades.  mark: NULL, or per
 * category whether to draw a dashed line before it labelled mark_label
 * (e.g. the night whose environment changed).
 */
struct fd_series {
  const char *name;
  const double *y;
};
extern void fd_svg_lines (FILE *fp, const char *title, const char *yunit,
                          const char *const *xlabels, size_t nx,
                          const struct fd_series *series, size_t ns,
                          const bool *mark, const char *mark_label);

/* Horizontal stacked bars: bar b's segment k is v[b * nseg + k]. */
extern void fd_svg_bars (FILE *fp, const char *title, const char *unit,
                         const char *const *labels, size_t nbars,
                         const char *const *segments, size_t nseg,
                         const double *v);

/* A grid of classes: cell (r, c) has class cls[r * nc + c] (an index into
 * classes, or -1 for no trials), the text label[r * nc + c] (NULL: none)
 * and a tooltip tip[r * nc + c].  classes go from best to worst, and are
 * spread over one colour scale from pale green to dark red, whatever
 * their number: on every map red means worse.
 */
extern void fd_svg_heat (FILE *fp, const char *title, const char *const *rows,
                         size_t nr, const char *const *cols, size_t nc,
                         const int *cls, const char *const *label,
                         const char *const *tip, const char *const *classes,
                         size_t nclasses);

#endif
