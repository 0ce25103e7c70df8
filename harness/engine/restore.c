/* futuredisk — harness: fsck or restore: the checker's time beside a restore
 * from backup (see trial-int.h).
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "faultmodels/measure.h"
#include "faultmodels/units.h"
#include "load-profile.h"
#include "trial-int.h"

/* The checker's share of the trial: its check and every step that
 * repaired, the escalation included (a read-only recheck only
 * confirms).
 */
double
fd_trial_fsck_seconds (const struct trial_result *r)
{
  double s = 0;
  size_t i;

  for (i = 0; i < r->nph; i++)
    if (strcmp (r->ph[i].name, "check") == 0 ||
        strncmp (r->ph[i].name, "repair", 6) == 0 ||
        strcmp (r->ph[i].name, "replay-mount") == 0 ||
        strcmp (r->ph[i].name, "escalate") == 0)
      s += r->ph[i].virtual_s;
  return s;
}

/* A restore from backup writes the bytes in use back: at --restore-rate,
 * or sequentially from the start of a fresh disk of the trial's profile
 * and size through the drive model (its zones, cache and, on a shingled
 * disk, its bands), 16 MiB at a time, then a FLUSH.  Metadata and file
 * boundaries cost a restore little against the data and are left out.
 */
void
fd_trial_restore_estimate (struct trial *t)
{
  struct fm_profile p;
  struct fm_disk *d;
  struct fm_err e;
  uint64_t size, bytes = t->r->m.bytes;

  t->r->restore_s = -1;
  if (t->s->restore_rate > 0) {
    t->r->restore_s = (double)bytes / t->s->restore_rate;
    return;
  }
  if (fd_load_profile (t->s->profile, &p, &e) == -1 ||
      (strcmp (t->s->size, "full") != 0 &&
       (fm_parse_size ("--size", t->s->size, &size, &e) == -1 ||
        fm_profile_resize (&p, size, &e) == -1)) ||
      (d = fm_disk_new (&p, t->s->seed, NULL, &e)) == NULL)
    return;
  if (bytes > p.capacity)
    bytes = p.capacity;
  t->r->restore_s =
      fm_measure_sequential (d, FM_OP_WRITE, 0, bytes, 16 << 20) / 1e9;
  fm_disk_free (d);
}

const char *
fd_trial_quicker (const struct trial_result *r)
{
  return fd_trial_fsck_seconds (r) <= r->restore_s ? "fsck" : "restore";
}
