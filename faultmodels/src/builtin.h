/* futuredisk — faultmodels: the built-in profile table (private).
 *
 * profile_builtin.c holds the table; profile.c resolves an entry, so the
 * table calls nothing and a derived built-in is parsed by the same code
 * as a profile file that names a base.
 */
#ifndef FAULTMODELS_BUILTIN_H
#define FAULTMODELS_BUILTIN_H

#include "faultmodels/profile.h"

struct builtin {
  /* Given whole, or for a derived disk only its name. */
  struct fm_profile p;
  const char *base; /* NULL, or the built-in this one derives from */
  const char *keys; /* profile-file lines over the base, one per change */
};

/* The entry named `name`, or NULL. */
extern const struct builtin *fm_builtin_find (const char *name);

#endif
