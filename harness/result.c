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
fd_trial_phase (const struct trial *t, const char *name)
{
  size_t i;

  for (i = 0; i < t->nph; i++)
    if (strcmp (t->ph[i].name, name) == 0)
      return &t->ph[i];
  return NULL;
}
void
fd_trial_free (struct trial *t)
{
  size_t k;

  fd_manifest_free (&t->m);
  /* A trial that failed between mapping and explaining its losses. */
  for (k = 0; k < t->ndamaged; k++) {
    fd_extents_free (t->damaged[k].extents);
    fd_extents_free (t->damaged[k].dir_extents);
  }
  free (t->damaged);
  free (t->violations);
  free (t->points);
  t->damaged = NULL;
  t->violations = NULL;
  t->points = NULL;
  t->npoints = 0;
  t->ndamaged = t->nviolations = 0;
}
