/* futuredisk — harness: inline SVG charts (see svg.h). */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
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

/* Three significant digits without an exponent, trailing zeros dropped. */
static void
num3 (char *buf, size_t n, double v)
{
  double a = fabs (v);
  char *dot, *end;

  if (a >= 99.95 || a == 0)
    snprintf (buf, n, "%.0f", v);
  else if (a >= 9.995)
    snprintf (buf, n, "%.1f", v);
  else if (a >= 0.9995)
    snprintf (buf, n, "%.2f", v);
  else
    snprintf (buf, n, "%.3f", v);
  /* Below 0.001 three decimals say 0.000: give it its own digits. */
  if (a > 0 && a < 0.0005)
    snprintf (buf, n, "%.2g", v);
  if ((dot = strchr (buf, '.')) != NULL && strchr (buf, 'e') == NULL) {
    for (end = buf + strlen (buf) - 1; end > dot && *end == '0'; end--)
      *end = '\0';
    if (end == dot)
      *end = '\0';
  }
}

char *
fd_fmt_num (char *buf, size_t n, double v)
{
  char digits[64];
  size_t len, i, o = 0;

  if (isnan (v)) {
    snprintf (buf, n, "-");
    return buf;
  }
  if (fabs (v) < 999.5) {
    num3 (buf, n, v);
    return buf;
  }
  /* Thousands grouped with commas: 1,440 and 20,000, never 1.44e+03. */
  snprintf (digits, sizeof digits, "%.0f", fabs (v));
  len = strlen (digits);
  if (v < 0 && o + 1 < n)
    buf[o++] = '-';
  for (i = 0; i < len && o + 2 < n; i++) {
    if (i && (len - i) % 3 == 0)
      buf[o++] = ',';
    buf[o++] = digits[i];
  }
  buf[o < n ? o : n - 1] = '\0';
  return buf;
}

char *
fd_fmt_secs (char *buf, size_t n, double s)
{
  static const struct {
    double below, per;
    const char *unit;
  } steps[] = {{120, 1, "s"}, {7200, 60, "min"}, {172800, 3600, "h"}};
  char x[48];
  size_t i;

  if (isnan (s)) {
    snprintf (buf, n, "-");
    return buf;
  }
  for (i = 0; i < sizeof steps / sizeof steps[0]; i++)
    if (fabs (s) < steps[i].below) {
      snprintf (buf, n, "%s %s", fd_fmt_num (x, sizeof x, s / steps[i].per),
                steps[i].unit);
      return buf;
    }
  snprintf (buf, n, "%s days", fd_fmt_num (x, sizeof x, s / 86400));
  return buf;
}

char *
fd_fmt_bytes (char *buf, size_t n, double bytes)
{
  static const char *const bin[] = {"B", "KiB", "MiB", "GiB"};
  static const char *const dec[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  const double mib = 1048576;
  char x[48];
  double v = bytes;
  size_t k = 0;

  if (bytes < mib * mib && fmod (bytes, mib) == 0) {
    for (; v >= 1024 && k + 1 < sizeof bin / sizeof bin[0]; k++)
      v /= 1024;
    snprintf (buf, n, "%s %s", fd_fmt_num (x, sizeof x, v), bin[k]);
  } else {
    for (; v >= 1000 && k + 1 < sizeof dec / sizeof dec[0]; k++)
      v /= 1000;
    snprintf (buf, n, "%s %s", fd_fmt_num (x, sizeof x, v), dec[k]);
  }
  return buf;
}

char *
fd_fmt_unit (char *buf, size_t n, double v, const char *unit)
{
  char x[48];

  if (strcmp (unit, "s") == 0)
    return fd_fmt_secs (buf, n, v);
  snprintf (buf, n, "%s%s%s", fd_fmt_num (x, sizeof x, v),
            strcmp (unit, "%") == 0 || unit[0] == '\0' ? "" : " ", unit);
  return buf;
}

/* The width a label takes at font size px, rounded up: the widest of
 * DejaVu Sans's digits and lower case letters is about 0.63 em, and
 * browsers fall back to it or to a narrower sans-serif.  An estimate on
 * the safe side, so the drawings leave room rather than cut.
 */
static int
text_width (const char *s, int px)
{
  size_t n = 0;

  /* UTF-8: count characters, not bytes. */
  for (; s && *s; s++)
    n += ((unsigned char)*s & 0xc0) != 0x80;
  return (int)ceil (n * px * 0.64) + 2;
}

static int
widest (const char *const *v, size_t n, int px)
{
  int w = 0;
  size_t i;

  for (i = 0; i < n; i++)
    if (text_width (v[i], px) > w)
      w = text_width (v[i], px);
  return w;
}

/* The figure, its caption first (so that it stands above its own
 * drawing, visible without hovering), then the drawing.
 */
static void
begin (FILE *fp, const char *cls, const char *title, int w, int h)
{
  fputs ("<figure class=\"fd-fig\"><figcaption>", fp);
  fd_html (fp, title);
  fprintf (fp,
           "</figcaption><svg class=\"%s\" "
           "xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
           "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" "
           "font-size=\"12\"><title>",
           cls, w, h, w, h);
  fd_html (fp, title);
  fprintf (fp, "</title><rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", w,
           h);
}

static void
end (FILE *fp)
{
  fputs ("</svg></figure>\n", fp);
}

/* A line chart's plot area and y scale. */
struct frame {
  int left, top, pw, ph; /* the plot area */
  size_t nx;             /* points on the x axis */
  double lo, hi;         /* the y axis */
  double step;           /* between a linear axis's labels */
  bool logy;
};

/* A round step (1, 2 or 5 times a power of ten) that cuts 0..hi into at
 * most five: labels read 0, 0.05, 0.1 rather than 0, 0.036, 0.071.
 */
static double
nice_step (double hi)
{
  double raw = hi / 5, mag = pow (10, floor (log10 (raw)));

  if (raw <= mag)
    return mag;
  if (raw <= 2 * mag)
    return 2 * mag;
  return raw <= 5 * mag ? 5 * mag : 10 * mag;
}

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
    f->step = nice_step (hi * 1.05);
    f->hi = ceil (hi * 1.05 / f->step) * f->step;
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

/* Grid and y labels: decades on a log scale, round steps on a linear
 * one.
 */
static void
grid (FILE *fp, const struct frame *f, const char *yunit)
{
  const int n = f->logy ? (int)lround (log10 (f->hi / f->lo))
                        : (int)lround ((f->hi - f->lo) / f->step);
  char lab[64];
  int k;

  for (k = 0; k <= n; k++) {
    double v = f->logy ? f->lo * pow (10, k) : f->lo + f->step * k;
    double y = ypos (f, v);
    fprintf (fp,
             "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
             "stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" "
             "text-anchor=\"end\">",
             f->left, y, f->left + f->pw, y, f->left - 6, y + 4);
    fd_html (fp, fd_fmt_unit (lab, sizeof lab, v, yunit));
    fputs ("</text>\n", fp);
  }
}

/* The x labels (every other a line lower when they would touch) and the
 * x axis.
 */
static void
x_axis (FILE *fp, const struct frame *f, const char *const *xlabels, int wx)
{
  double step = f->nx > 1 ? (double)f->pw / (f->nx - 1) : f->pw;
  bool stagger = step < wx + 8;
  size_t x;

  for (x = 0; x < f->nx; x++) {
    fprintf (fp, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
             xpos (f, x), f->top + f->ph + 18 + (stagger && x % 2 ? 16 : 0));
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
  char lab[64];
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
    fputs (": ", fp);
    fd_html (fp, fd_fmt_unit (lab, sizeof lab, sr->y[x], yunit));
    fputs ("</title></circle>\n", fp);
  }
  fprintf (fp,
           "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" "
           "fill=\"%s\"/><text x=\"%d\" y=\"%d\">",
           f->left + f->pw + 20, f->top + 18 * (int)s, colour,
           f->left + f->pw + 38, f->top + 18 * (int)s + 10);
  fd_html (fp, sr->name);
  fputs ("</text>\n", fp);
}

/* Dashed lines before the marked categories, labelled once each. */
static void
marks (FILE *fp, const struct frame *f, const bool *mark, const char *label)
{
  size_t x;

  for (x = 1; mark && x < f->nx; x++) {
    double mx;
    if (!mark[x])
      continue;
    mx = (xpos (f, x - 1) + xpos (f, x)) / 2;
    fprintf (fp,
             "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
             "stroke=\"#b2182b\" stroke-dasharray=\"4 3\"/>"
             "<text x=\"%.1f\" y=\"%d\" fill=\"#b2182b\" "
             "text-anchor=\"middle\">",
             mx, f->top, mx, f->top + f->ph, mx, f->top - 4);
    fd_html (fp, label);
    fputs ("</text>\n", fp);
  }
}

void
fd_svg_lines (FILE *fp, const char *title, const char *yunit,
              const char *const *xlabels, size_t nx,
              const struct fd_series *series, size_t ns, const bool *mark,
              const char *mark_label)
{
  const char *names[64];
  const int wx = widest (xlabels, nx, 12), top = 30, ph = 240;
  int left = 90, right, pw, w;
  struct frame f;
  size_t s;

  for (s = 0; s < ns && s < 64; s++)
    names[s] = series[s].name;
  /* Room for the widest x label at both ends, the legend at the right. */
  right = 50 + widest (names, s, 12);
  if (left < wx / 2 + 10)
    left = wx / 2 + 10;
  pw = nx > 1 ? (int)(nx - 1) * (wx + 16) : 200;
  pw = pw < 460 ? 460 : pw;
  w = left + pw + (right > wx / 2 + 10 ? right : wx / 2 + 10);
  f = (struct frame){.left = left, .top = top, .pw = pw, .ph = ph, .nx = nx};
  y_range (&f, series, ns);
  begin (fp, "fd-lines", title, w,
         top + ph + 60 + (ns > 13 ? 18 * (int)(ns - 13) : 0));
  grid (fp, &f, yunit);
  x_axis (fp, &f, xlabels, wx);
  marks (fp, &f, mark, mark_label);
  for (s = 0; s < ns; s++)
    draw_series (fp, &f, &series[s], s, xlabels, yunit);
  if (f.logy)
    fprintf (fp, "<text x=\"4\" y=\"%d\">(log scale)</text>\n", top - 14);
  end (fp);
}

/* One bar: its label, segments with tooltips, and the total. */
static void
bar (FILE *fp, const char *label, const char *const *segments, size_t nseg,
     const double *v, double scale, int left, int y, const char *unit)
{
  double x = left, sum = 0;
  char lab[64];
  size_t k;

  fprintf (fp, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 6,
           y + 13);
  fd_html (fp, label);
  fputs ("</text>\n", fp);
  for (k = 0; k < nseg; k++) {
    double len = scale * v[k];
    sum += v[k];
    if (len <= 0)
      continue;
    fprintf (fp,
             "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"18\" "
             "fill=\"%s\"><title>",
             x, y, len, palette[k % NPALETTE]);
    fd_html (fp, label);
    fputs (": ", fp);
    fd_html (fp, segments[k]);
    fputs (" ", fp);
    fd_html (fp, fd_fmt_unit (lab, sizeof lab, v[k], unit));
    fputs ("</title></rect>\n", fp);
    x += len;
  }
  fprintf (fp, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\">", x + 4, y + 13);
  fd_html (fp, fd_fmt_unit (lab, sizeof lab, sum, unit));
  fputs ("</text>\n", fp);
}

void
fd_svg_bars (FILE *fp, const char *title, const char *unit,
             const char *const *labels, size_t nbars,
             const char *const *segments, size_t nseg, const double *v)
{
  /* The labels' column as wide as the widest; room for the totals. */
  const int left = widest (labels, nbars, 12) + 12, pw = 460;
  const int wseg = widest (segments, nseg, 12) + 30, top = 10, step = 26;
  int right = 20, w, per_row, legend;
  double max = 0;
  size_t b, k;

  for (b = 0; b < nbars; b++) {
    double sum = 0;
    char lab[64];
    for (k = 0; k < nseg; k++)
      sum += v[b * nseg + k];
    max = fmax (max, sum);
    fd_fmt_unit (lab, sizeof lab, sum, unit);
    if (text_width (lab, 11) + 10 > right)
      right = text_width (lab, 11) + 10;
  }
  if (max <= 0)
    max = 1;
  w = left + pw + right;
  per_row = (w - 10) / wseg > 0 ? (w - 10) / wseg : 1;
  legend = 18 * (int)((nseg + (size_t)per_row - 1) / (size_t)per_row) + 30;
  begin (fp, "fd-bars", title, w, top + step * (int)nbars + legend + 10);
  for (b = 0; b < nbars; b++)
    bar (fp, labels[b], segments, nseg, v + b * nseg, pw / max, left,
         top + step * (int)b, unit);
  {
    int y = top + step * (int)nbars + 4;
    for (k = 0; k < nseg; k++) {
      int lx = 10 + wseg * (int)(k % (size_t)per_row);
      int ly = y + 14 + 18 * (int)(k / (size_t)per_row);
      fprintf (fp,
               "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" "
               "fill=\"%s\"/><text x=\"%d\" y=\"%d\">",
               lx, ly - 10, palette[k % NPALETTE], lx + 16, ly);
      fd_html (fp, segments[k]);
      fputs ("</text>\n", fp);
    }
  }
  end (fp);
}

/* The one scale of every map, best to worst: pale green, yellows,
 * oranges, red, dark red.  Lightness falls along it, so it reads in
 * greyscale and with red-green colour blindness too.
 */
static const char *const heat_colours[] = {"#d9f0d3", "#ffffcc", "#fed976",
                                           "#feb24c", "#fd8d3c", "#e31a1c",
                                           "#800026"};
#define NHEAT (sizeof heat_colours / sizeof heat_colours[0])

/* Class k of n on the scale: the best at its start, the worst at its
 * end.
 */
static size_t
heat_index (size_t k, size_t n)
{
  return n > 1 ? (size_t)lround ((double)k * (NHEAT - 1) / (n - 1)) : 0;
}

/* The legend: the classes in order, from "better" to "worse". */
static void
heat_legend (FILE *fp, const char *const *classes, size_t nclasses, int x0,
             int y0)
{
  size_t k;

  fprintf (fp, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">better</text>\n",
           x0, y0);
  for (k = 0; k < nclasses; k++) {
    int y = y0 + 18 * (int)(k + 1);
    fprintf (fp,
             "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" "
             "fill=\"%s\" stroke=\"#999\"/><text x=\"%d\" y=\"%d\">",
             x0, y - 11, heat_colours[heat_index (k, nclasses)], x0 + 20, y);
    fd_html (fp, classes[k]);
    fputs ("</text>\n", fp);
  }
  fprintf (fp, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">worse</text>\n",
           x0, y0 + 18 * (int)(nclasses + 1));
}

void
fd_svg_heat (FILE *fp, const char *title, const char *const *rows, size_t nr,
             const char *const *cols, size_t nc, const int *cls,
             const char *const *label, const char *const *tip,
             const char *const *classes, size_t nclasses)
{
  const int left = widest (rows, nr, 12) + 16, ch = 26, top = 30;
  const int cw =
      widest (cols, nc, 12) + 10 > 64 ? widest (cols, nc, 12) + 10 : 64;
  /* The legend at the right of the grid. */
  const int lx = left + cw * (int)nc + 24;
  const int w = lx + widest (classes, nclasses, 12) + 30;
  const int hg = top + ch * (int)nr + 10, hl = 18 * (int)(nclasses + 2) + 20;
  size_t r, c;

  begin (fp, "fd-heat", title, w, hg > hl ? hg : hl);
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
      int k = cls[r * nc + c];
      size_t hi = k < 0 ? 0 : heat_index ((size_t)k, nclasses);
      fputs ("<g><title>", fp);
      fd_html (fp, tip[r * nc + c] ? tip[r * nc + c] : "no trials");
      fprintf (fp,
               "</title><rect x=\"%d\" y=\"%d\" width=\"%d\" "
               "height=\"%d\" fill=\"%s\" stroke=\"#fff\"/>",
               left + cw * (int)c, y, cw, ch,
               k < 0 ? "#f4f4f4" : heat_colours[hi]);
      if (label && label[r * nc + c]) {
        /* Dark cells get white text. */
        fprintf (fp,
                 "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" "
                 "fill=\"%s\">",
                 left + cw * (int)c + cw / 2, y + 17,
                 k >= 0 && hi >= NHEAT - 2 ? "#fff" : "#222");
        fd_html (fp, label[r * nc + c]);
        fputs ("</text>", fp);
      }
      fputs ("</g>\n", fp);
    }
  }
  heat_legend (fp, classes, nclasses, lx, top);
  end (fp);
}
