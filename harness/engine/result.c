/* futuredisk — harness: a trial's results: looked up and freed (see trial.h).
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach.h"
#include "attribute.h"
#include "trial.h"

const struct phase *
fd_trial_phase (const struct trial_result *r, const char *name)
{
  size_t i;

  for (i = 0; i < r->nph; i++)
    if (strcmp (r->ph[i].name, name) == 0)
      return &r->ph[i];
  return NULL;
}

void
fd_trial_free (struct trial_result *r)
{
  size_t k;

  fd_manifest_free (&r->m);
  /* A trial that failed between mapping and explaining its losses. */
  for (k = 0; k < r->ndamaged; k++) {
    fd_extents_free (r->damaged[k].extents);
    fd_extents_free (r->damaged[k].dir_extents);
  }
  free (r->damaged);
  free (r->violations);
  free (r->points);
  r->damaged = NULL;
  r->violations = NULL;
  r->points = NULL;
  r->npoints = 0;
  r->ndamaged = r->nviolations = 0;
}
