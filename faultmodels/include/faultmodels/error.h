/* futuredisk — faultmodels: error reporting.
 *
 * The library has no globals, so there is no "last error": every call that
 * can fail takes a caller-owned struct fm_err and fills it with one line
 * that names the bad value (and, for profile files, the file and line).
 */
#ifndef FAULTMODELS_ERROR_H
#define FAULTMODELS_ERROR_H

#define FM_ERR_MAX 512

struct fm_err {
  char msg[FM_ERR_MAX];
};

/* Fill err (if not NULL) with a printf-style message and return -1, so
 * that a failing path reads `return fm_fail (err, "...", ...);`.  The one
 * way anything in the project sets a struct fm_err.
 */
extern int fm_fail (struct fm_err *err, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

#endif
