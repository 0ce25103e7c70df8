/* futuredisk — faultmodels: parsing of sizes and numbers. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "faultmodels/units.h"
#include "faultmodels/error.h"

int
fm_fail (struct fm_err *err, const char *fmt, ...)
{
  va_list ap;

  if (err) {
    va_start (ap, fmt);
    vsnprintf (err->msg, sizeof err->msg, fmt, ap);
    va_end (ap);
  }
  return -1;
}

static const struct {
  const char *suffix;
  double mult;
} size_suffixes[] = {
    {"", 1},
    {"b", 1},
    {"s", 512},
    {"k", 1024.0},
    {"kib", 1024.0},
    {"kb", 1e3},
    {"m", 1048576.0},
    {"mib", 1048576.0},
    {"mb", 1e6},
    {"g", 1073741824.0},
    {"gib", 1073741824.0},
    {"gb", 1e9},
    {"t", 1099511627776.0},
    {"tib", 1099511627776.0},
    {"tb", 1e12},
    {"p", 1125899906842624.0},
    {"pib", 1125899906842624.0},
    {"pb", 1e15},
};

int
fm_parse_size (const char *what, const char *s, uint64_t *out,
               struct fm_err *err)
{
  char *end;
  double v;
  size_t i;

  char num[64];

  if (s == NULL || *s == '\0')
    return fm_fail (err, "%s: empty size", what);
  /* A size is digits with an optional point, then a suffix; strtod alone
   * would also take hex, exponents, inf and nan.
   */
  for (i = 0; s[i] && (isdigit ((unsigned char)s[i]) || s[i] == '.'); i++)
    ;
  if (i == 0 || i >= sizeof num)
    return fm_fail (err, "%s: '%s' is not a size", what, s);
  memcpy (num, s, i);
  num[i] = '\0';
  errno = 0;
  v = strtod (num, &end);
  if (errno != 0 || *end != '\0' || !isfinite (v))
    return fm_fail (err, "%s: '%s' is not a size", what, s);
  end = (char *)s + i;
  while (*end == ' ')
    end++;
  for (i = 0; i < sizeof size_suffixes / sizeof size_suffixes[0]; i++) {
    if (strcasecmp (end, size_suffixes[i].suffix) == 0) {
      double bytes = v * size_suffixes[i].mult;

      if (size_suffixes[i].mult == 1 && strchr (s, '.'))
        return fm_fail (err, "%s: '%s': a byte count must be whole", what, s);
      if (bytes >= 18446744073709551616.0)
        return fm_fail (err, "%s: '%s' is too large", what, s);
      *out = (uint64_t)llround (bytes);
      return 0;
    }
  }
  return fm_fail (err,
                  "%s: '%s': unknown suffix '%s' (use K M G T P, KiB..PiB, "
                  "KB..PB or s)",
                  what, s, end);
}

int
fm_parse_double (const char *what, const char *s, double min, double max,
                 double *out, struct fm_err *err)
{
  char *end;
  double v;

  if (s == NULL || *s == '\0')
    return fm_fail (err, "%s: empty value", what);
  errno = 0;
  v = strtod (s, &end);
  if (errno != 0 || end == s || *end != '\0' || !isfinite (v))
    return fm_fail (err, "%s: '%s' is not a number", what, s);
  if (v < min || v > max)
    return fm_fail (err, "%s: %s is out of range [%g, %g]", what, s, min, max);
  *out = v;
  return 0;
}

char *
fm_trim (char *s)
{
  char *e;

  while (isspace ((unsigned char)*s))
    s++;
  e = s + strlen (s);
  while (e > s && isspace ((unsigned char)e[-1]))
    *--e = '\0';
  return s;
}

char *
fm_value (char *v, const char **why)
{
  char *close, *hash;

  if (*v == '"') {
    if ((close = strchr (v + 1, '"')) == NULL) {
      *why = "unterminated quote";
      return NULL;
    }
    if (*fm_trim (close + 1) != '\0' && *fm_trim (close + 1) != '#') {
      *why = "text after the closing quote";
      return NULL;
    }
    *close = '\0';
    return v + 1;
  }
  if ((hash = strchr (v, '#')) != NULL)
    *hash = '\0';
  return fm_trim (v);
}

int
fm_parse_uint (const char *what, const char *s, uint64_t min, uint64_t max,
               uint64_t *out, struct fm_err *err)
{
  char *end;
  unsigned long long v;

  if (s == NULL || *s == '\0')
    return fm_fail (err, "%s: empty value", what);
  if (!isdigit ((unsigned char)s[0]))
    return fm_fail (err, "%s: '%s' is not a non-negative integer", what, s);
  errno = 0;
  v = strtoull (s, &end, 10);
  if (errno != 0 || *end != '\0')
    return fm_fail (err, "%s: '%s' is not a non-negative integer", what, s);
  if (v < min || v > max)
    return fm_fail (err, "%s: %s is out of range [%llu, %llu]", what, s,
                    (unsigned long long)min, (unsigned long long)max);
  *out = v;
  return 0;
}

void
fm_format_size (uint64_t bytes, char *buf, int len)
{
  static const char *const units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  double v = (double)bytes;
  int u = 0;

  while (v >= 1000 && u < 5) {
    v /= 1000;
    u++;
  }
  if (u == 0)
    snprintf (buf, len, "%llu B", (unsigned long long)bytes);
  else if (v == floor (v))
    snprintf (buf, len, "%.0f %s", v, units[u]);
  else
    snprintf (buf, len, "%.3g %s", v, units[u]);
}

void
fm_format_duration (double s, char *buf, int len)
{
  if (s < 120)
    snprintf (buf, len, "%.1f s", s);
  else if (s < 7200)
    snprintf (buf, len, "%.1f min", s / 60);
  else if (s < 3 * 86400)
    snprintf (buf, len, "%.1f h", s / 3600);
  else
    snprintf (buf, len, "%.1f days", s / 86400);
}
