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

#endif
