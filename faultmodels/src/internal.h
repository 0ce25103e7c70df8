/* futuredisk — faultmodels: helpers private to the library. */
#ifndef FAULTMODELS_INTERNAL_H
#define FAULTMODELS_INTERNAL_H

#include "faultmodels/error.h"

/* Fill err (if not NULL) with a printf-style message; returns -1 so that
 * callers can write `return fm_fail (err, ...);`.
 */
extern int fm_fail (struct fm_err *err, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

#endif
