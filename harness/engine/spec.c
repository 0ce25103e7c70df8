/* futuredisk — harness: a trial's inputs checked (see trial.h). */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "faultmodels/units.h"
#include "trial.h"

/* --time: what the plugin's time= takes (virtual, real, scale:F). */
int
fd_trial_parse_time (const char *s, struct fm_err *err)
{
  double f;

  if (strcmp (s, "virtual") == 0 || strcmp (s, "real") == 0)
    return 0;
  if (strncmp (s, "scale:", 6) == 0)
    return fm_parse_double ("--time scale", s + 6, 1e-6, 1e6, &f, err);
  return fm_fail (err, "--time: '%.64s' is not virtual, real or scale:F", s);
}
