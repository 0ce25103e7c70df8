/* futuredisk — common: find a profile by name or file.
 *
 * Shared by the plugin (profile=) and the harness (--profile) so that the
 * same word means the same disk everywhere.  This is the I/O the pure
 * faultmodels library leaves to its callers.
 */
#ifndef FUTUREDISK_LOAD_PROFILE_H
#define FUTUREDISK_LOAD_PROFILE_H

#include <stdint.h>

#include "faultmodels/error.h"
#include "faultmodels/profile.h"

/* `arg` is a built-in profile name or a path to a profile file (a built-in
 * name wins; anything containing '/' is always a path).  Returns 0 or -1
 * with err naming the profile or the file and line.
 */
extern int fd_load_profile (const char *arg, struct fm_profile *out,
                            struct fm_err *err);

#endif
