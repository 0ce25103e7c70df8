/* futuredisk — harness: inline SVG charts (see svg.h). */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "svg.h"

/* A palette that survives colour blindness and greyscale printing
 * (Okabe-Ito), cycled.
 */
static const char *const palette[] = {"#0072B2", "#E69F00", "#009E73",
                                      "#D55E00", "#CC79A7", "#56B4E9",
                                      "#F0E442", "#000000"};
#define NPALETTE (sizeof palette / sizeof palette[0])

void
fd_html (FILE *fp, const char *s)
{
  for (; s && *s; s++)
    switch (*s) {
      case '&':
        fputs ("&amp;", fp);
        break;
      case '<':
        fputs ("&lt;", fp);
        break;
      case '>':
        fputs ("&gt;", fp);
        break;
      case '"':
        fputs ("&quot;", fp);
        break;
      default:
        fputc (*s, fp);
    }
}

static void
begin (FILE *fp, const char *cls, const char *title, int w, int h)
{
  fprintf (fp,
           "<svg class=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" "
           "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
           "font-family=\"sans-serif\" font-size=\"12\"><title>",
           cls, w, h, w, h);
  fd_html (fp, title);
  fprintf (fp, "</title><rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", w,
           h);
}

/* A round number of seconds for an axis label. */
static void
axis_label (FILE *fp, double v, const char *unit)
{
  if (v >= 100 || v == floor (v))
    fprintf (fp, "%.0f %s", v, unit);
  else if (v >= 1)
    fprintf (fp, "%.1f %s", v, unit);
  else
    fprintf (fp, "%.2g %s", v, unit);
}

/* A line chart's plot area and y scale. */
struct frame {
  int left, top, pw, ph; /* the plot area */
  size_t nx;             /* points on the x axis */
  double lo, hi;         /* the y axis */
  bool logy;
};

/* The y range: from the positive values, on a log scale when they span
 * more than two decades.
 */
static void
y_range (struct frame *f, const struct fd_series *series, size_t ns)
{
  double lo = INFINITY, hi = -INFINITY;
  size_t s, x;

  for (s = 0; s < ns; s++)
    for (x = 0; x < f->nx; x++)
      if (!isnan (series[s].y[x]) && series[s].y[x] > 0) {
        lo = fmin (lo, series[s].y[x]);
        hi = fmax (hi, series[s].y[x]);
      }
  if (!isfinite (lo))
    lo = 0.1, hi = 1;
  f->logy = hi / lo > 100;
  if (f->logy) {
    f->lo = pow (10, floor (log10 (lo)));
    f->hi = pow (10, ceil (log10 (hi)));
  } else {
    f->lo = 0;
    f->hi = hi * 1.1;
  }
}

static double
xpos (const struct frame *f, size_t i)
{
  return f->left +
         (f->nx > 1 ? f->pw * (double)(i) / (f->nx - 1) : f->pw / 2.0);
}

static double
ypos (const struct frame *f, double v)
{
  return f->top + f->ph -
         f->ph * (f->logy ? (log10 (v) - log10 (f->lo)) /
                                (log10 (f->hi) - log10 (f->lo))
                          : (v - f->lo) / (f->hi - f->lo));
}

/* Can v be drawn (a log scale has no place for 0)? */
static bool
drawable (const struct frame *f, double v)
{
  return !(isnan (v) || (f->logy && v <= 0));
}

/* Grid and y labels: decades on a log scale, fifths on a linear one. */
static void
grid (FILE *fp, const struct frame *f, const char *yunit)
{
  int k;

  for (k = 0; k <= (f->logy ? (int)lround (log10 (f->hi / f->lo)) : 5); k++) {
    double v = f->logy ? f->lo * pow (10, k) : f->lo + (f->hi - f->lo) * k / 5;
    double y = ypos (f, v);
    fprintf (fp,
             "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
             "stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" "
             "text-anchor=\"end\">",
             f->left, y, f->left + f->pw, y, f->left - 6, y + 4);
    axis_label (fp, v, yunit);
    fputs ("</text>\n", fp);
  }
}

/* The x labels and the x axis. */
static void
x_axis (FILE *fp, const struct frame *f, const char *const *xlabels)
{
  size_t x;

  for (x = 0; x < f->nx; x++) {
    /* Many categories: every other label a line lower, so none overlap. */
    fprintf (fp, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
             xpos (f, x), f->top + f->ph + 18 + (f->nx > 4 && x % 2 ? 16 : 0));
    fd_html (fp, xlabels[x]);
    fputs ("</text>\n", fp);
  }
  fprintf (fp,
           "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n",
           f->left, f->top + f->ph, f->left + f->pw, f->top + f->ph);
}

/* Series s: its line (broken where a value is missing), a point with a
 * tooltip for each value, and its legend entry.
 */
static void
draw_series (FILE *fp, const struct frame *f, const struct fd_series *sr,
             size_t s, const char *const *xlabels, const char *yunit)
{
  const char *colour = palette[s % NPALETTE];
  bool pen = false;
  size_t x;

  fprintf (fp, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"2\" d=\"",
           colour);
  for (x = 0; x < f->nx; x++) {
    if (!drawable (f, sr->y[x])) {
      pen = false;
      continue;
    }
    fprintf (fp, "%c%.1f %.1f ", pen ? 'L' : 'M', xpos (f, x),
             ypos (f, sr->y[x]));
    pen = true;
  }
  fputs ("\"/>\n", fp);
  for (x = 0; x < f->nx; x++) {
    if (!drawable (f, sr->y[x]))
      continue;
    fprintf (fp, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"><title>",
             xpos (f, x), ypos (f, sr->y[x]), colour);
    fd_html (fp, sr->name);
    fputs (", ", fp);
    fd_html (fp, xlabels[x]);
    fprintf (fp, ": %.3g %s</title></circle>\n", sr->y[x], yunit);
  }
  fprintf (fp,
           "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" "
           "fill=\"%s\"/><text x=\"%d\" y=\"%d\">",
           f->left + f->pw + 20, f->top + 18 * (int)s, colour,
           f->left + f->pw + 38, f->top + 18 * (int)s + 10);
  fd_html (fp, sr->name);
  fputs ("</text>\n", fp);
}

void
fd_svg_lines (FILE *fp, const char *title, const char *yunit,
              const char *const *xlabels, size_t nx,
              const struct fd_series *series, size_t ns)
{
  const int w = 720, left = 80, right = 170, top = 20, bottom = 60;
  const int h = 320;
  struct frame f = {.left = left,
                    .top = top,
                    .pw = w - left - right,
                    .ph = h - top - bottom,
                    .nx = nx};
  size_t s;

  y_range (&f, series, ns);
  begin (fp, "fd-lines", title, w, h);
  grid (fp, &f, yunit);
  x_axis (fp, &f, xlabels);
  for (s = 0; s < ns; s++)
    draw_series (fp, &f, &series[s], s, xlabels, yunit);
  if (f.logy)
    fprintf (fp, "<text x=\"4\" y=\"%d\">(log scale)</text>\n", top - 6);
  fputs ("</svg>\n", fp);
}

void
fd_svg_bars (FILE *fp, const char *title, const char *unit,
             const char *const *labels, size_t nbars,
             const char *const *segments, size_t nseg, const double *v)
{
  const int left = 260, pw = 400, right = 20, bar = 18, gap = 8, top = 10;
  const int legend = 18 * (int)((nseg + 3) / 4) + 10;
  const int w = left + pw + right;
  const int h = top + (bar + gap) * (int)nbars + 30 + legend;
  double max = 0;
  size_t b, k;

  for (b = 0; b < nbars; b++) {
    double sum = 0;
    for (k = 0; k < nseg; k++)
      sum += v[b * nseg + k];
    max = fmax (max, sum);
  }
  if (max <= 0)
    max = 1;
  begin (fp, "fd-bars", title, w, h);
  for (b = 0; b < nbars; b++) {
    double x = left, sum = 0;
    int y = top + (bar + gap) * (int)b;
    fprintf (fp, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 6,
             y + 13);
    fd_html (fp, labels[b]);
    fputs ("</text>\n", fp);
    for (k = 0; k < nseg; k++) {
      double len = pw * v[b * nseg + k] / max;
      sum += v[b * nseg + k];
      if (len <= 0)
        continue;
      fprintf (fp,
               "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
               "fill=\"%s\"><title>",
               x, y, len, bar, palette[k % NPALETTE]);
      fd_html (fp, labels[b]);
      fputs (": ", fp);
      fd_html (fp, segments[k]);
      fprintf (fp, " %.3g %s</title></rect>\n", v[b * nseg + k], unit);
      x += len;
    }
    fprintf (fp, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\">%.3g</text>\n",
             fmin (x + 4, (double)(w - 40)), y + 13, sum);
  }
  {
    int y = top + (bar + gap) * (int)nbars + 4;
    fprintf (fp, "<text x=\"%d\" y=\"%d\">", left, y + 10);
    fd_html (fp, unit);
    fputs ("</text>\n", fp);
    for (k = 0; k < nseg; k++) {
      int lx = 10 + 170 * (int)(k % 4), ly = y + 24 + 18 * (int)(k / 4);
      fprintf (fp,
               "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" "
               "fill=\"%s\"/><text x=\"%d\" y=\"%d\">",
               lx, ly - 10, palette[k % NPALETTE], lx + 16, ly);
      fd_html (fp, segments[k]);
      fputs ("</text>\n", fp);
    }
  }
  fputs ("</svg>\n", fp);
}

/* Heat-map classes, from harmless to worst. */
static const char *const heat_colours[] = {"#cfe8cf", "#7fc97f", "#fdc086",
                                           "#e7298a", "#b2182b", "#6a3d9a"};
#define NHEAT (sizeof heat_colours / sizeof heat_colours[0])

void
fd_svg_heat (FILE *fp, const char *title, const char *const *rows, size_t nr,
             const char *const *cols, size_t nc, const int *cls,
             const char *const *tip, const char *const *classes,
             size_t nclasses)
{
  const int left = 130, cw = 90, ch = 26, top = 30;
  const int w = left + cw * (int)nc + 20;
  const int h = top + ch * (int)nr + 20 + 18 * (int)nclasses;
  size_t r, c, k;

  begin (fp, "fd-heat", title, w < 420 ? 420 : w, h);
  for (c = 0; c < nc; c++) {
    fprintf (fp, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">",
             left + cw * (int)c + cw / 2, top - 8);
    fd_html (fp, cols[c]);
    fputs ("</text>\n", fp);
  }
  for (r = 0; r < nr; r++) {
    int y = top + ch * (int)r;
    fprintf (fp, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 6,
             y + 17);
    fd_html (fp, rows[r]);
    fputs ("</text>\n", fp);
    for (c = 0; c < nc; c++) {
      int k2 = cls[r * nc + c];
      fprintf (fp,
               "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
               "fill=\"%s\" stroke=\"#fff\"><title>",
               left + cw * (int)c, y, cw, ch,
               k2 < 0 ? "#f4f4f4" : heat_colours[(size_t)k2 % NHEAT]);
      fd_html (fp, tip[r * nc + c] ? tip[r * nc + c] : "no trials");
      fputs ("</title></rect>\n", fp);
    }
  }
  for (k = 0; k < nclasses; k++) {
    int y = top + ch * (int)nr + 14 + 18 * (int)k;
    fprintf (fp,
             "<rect x=\"10\" y=\"%d\" width=\"12\" height=\"12\" "
             "fill=\"%s\"/><text x=\"28\" y=\"%d\">",
             y - 10, heat_colours[k % NHEAT], y);
    fd_html (fp, classes[k]);
    fputs ("</text>\n", fp);
  }
  fputs ("</svg>\n", fp);
}
