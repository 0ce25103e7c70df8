/* futuredisk — faultmodels: parsing of sizes and numbers.
 *
 * One parser for every size the project accepts (plugin size=, profile
 * files, campaign files), so "500GB" means the same thing everywhere:
 *
 *   plain number           bytes
 *   K M G T P   KiB..PiB   powers of 1024 (as nbdkit_parse_size)
 *   KB MB GB TB PB         powers of 1000 (as disk vendors write them)
 *   s                      512-byte sectors (as nbdkit_parse_size)
 *
 * Fractions are allowed with a suffix ("1.5T") and rounded to the nearest
 * byte.  Overflow, negative values, junk after the number and empty strings
 * are errors naming the value.
 */
#ifndef FAULTMODELS_UNITS_H
#define FAULTMODELS_UNITS_H

#include <stdint.h>

#include "faultmodels/error.h"

/* Parse a size in bytes.  `what` names the value in error messages
 * ("size", "capacity").  Returns 0, or -1 with err filled.
 */
extern int fm_parse_size (const char *what, const char *s, uint64_t *out,
                          struct fm_err *err);

/* Parse a finite floating-point number in [min, max]. */
extern int fm_parse_double (const char *what, const char *s, double min,
                            double max, double *out, struct fm_err *err);

/* s without its leading and trailing white space (ends it in place). */
extern char *fm_trim (char *s);

/* The value of a `key = value` line in a profile or campaign file (v is
 * what follows the '=', trimmed), so both kinds of file read comments
 * alike: a value in double quotes is what lies between them (it may hold
 * a '#'), and only a comment may follow the closing quote; otherwise '#'
 * starts a comment.  Ends it in place; NULL with *why ("unterminated
 * quote", "text after the closing quote") when it is not a value.
 */
extern char *fm_value (char *v, const char **why);

/* Parse an unsigned integer in [min, max] (decimal only). */
extern int fm_parse_uint (const char *what, const char *s, uint64_t min,
                          uint64_t max, uint64_t *out, struct fm_err *err);

/* Format bytes with a decimal suffix ("500 GB", "1.07 GB"). */
extern void fm_format_size (uint64_t bytes, char *buf, int len);

/* Format seconds the way durations are compared across disk generations:
 * "12.5 s" under 2 minutes, then minutes, hours, and days from 3 days.
 */
extern void fm_format_duration (double s, char *buf, int len);

#endif
