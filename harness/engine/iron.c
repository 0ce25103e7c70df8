/* futuredisk — harness: the IRON fingerprint of a trial with a --target (see
 * trial.h).
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctlclient.h" /* fd_json_* */
#include "populate.h"
#include "target.h"
#include "evidence.h"
#include "trial-int.h"

/* Does checker phase i's saved output report a checksum that failed, in
 * the adapter's words for it?
 */
static bool
output_says_checksum (const struct trial *t, size_t i)
{
  const char *const *failed = t->s->fs->checksum_failed;
  char path[PATH_MAX + FD_EVIDENCE_NAME + 2], out[FD_EVIDENCE_NAME], line[1024];
  bool found = false;
  size_t k;
  FILE *fp;

  fd_evidence_output_name (t->r, i, out);
  snprintf (path, sizeof path, "%s/%s", t->s->dir, out);
  if (failed == NULL || (fp = fopen (path, "r")) == NULL)
    return false;
  while (!found && fgets (line, sizeof line, fp))
    for (k = 0; failed[k] && !found; k++)
      found = strcasestr (line, failed[k]) != NULL;
  fclose (fp);
  return found;
}

/* Does a phase called name (each, where it ran more than once: xfs's
 * repair after the log's replay) say a checksum failed?
 */
static bool
says_checksum (const struct trial *t, const char *name)
{
  size_t i;

  for (i = 0; i < t->r->nph; i++)
    if (strcmp (t->r->ph[i].name, name) == 0 && output_says_checksum (t, i))
      return true;
  return false;
}

/* A counter of the plugin's final stats (0 if it is not there). */
static uint64_t
stat_of (const struct trial *t, const char *path)
{
  struct fm_err err;
  struct fd_json *j =
      t->r->stats[0] ? fd_json_parse (t->r->stats, "stats", &err) : NULL;
  uint64_t v = 0;

  if (j && fd_json_u64 (j, path, &v, &err) == -1)
    v = 0;
  fd_json_free (j);
  return v;
}

static const char *
phase_outcome (const struct trial *t, const char *name)
{
  const struct phase *p = fd_trial_phase (t->r, name);

  return p && p->outcome ? p->outcome : "";
}

/* The two axes of the IRON fingerprint for a trial with a target (see
 * trial.h), from the checker's outcomes and words, the audit and the
 * plugin's counters.
 */
void
fd_trial_iron (struct trial *t)
{
  const char *kind;
  const struct phase *check = fd_trial_phase (t->r, "check");
  bool silent, noticed, checksum, lost, eio;
  uint64_t bad = 0;
  size_t i;

  t->r->detection = t->r->recovery = NULL;
  /* The fingerprint is of one block type and one fault kind, and needs
   * a check that ran to its end.
   */
  if (t->s->target == NULL || t->r->targets[0] == '\0' || check == NULL ||
      check->outcome == NULL || strchr (t->s->target, '+'))
    return;
  kind = fd_target_kind_of (t->s->target);
  silent = strcmp (kind, "ure") != 0 && strcmp (kind, "lse") != 0;
  noticed = strcmp (phase_outcome (t, "check"), "CLEAN") != 0;
  checksum = says_checksum (t, "check") || says_checksum (t, "repair");
  for (i = 0; i < FD_AUDIT_NCLASSES; i++)
    if (i != FD_AUDIT_INTACT && i != FD_AUDIT_EXTRA)
      bad += t->r->audit.count[i];
  lost = !t->r->audited || bad > 0;
  eio = t->r->audited && t->r->audit.count[FD_AUDIT_UNREADABLE] > 0;
  /* Detection: a silent fault answered with EIO was refused by a
   * checksum; a disk error that reached anyone is an error code.
   */
  if (checksum || (silent && eio))
    t->r->detection = "checksum";
  else if (!silent && (check->read_errors > 0 || eio))
    t->r->detection = "error-code";
  else if (noticed)
    t->r->detection = "sanity";
  else
    t->r->detection = "none";
  /* Recovery: the checker's repair (of the structures; files it could
   * not save are the audit's), else what kept the data without it.
   */
  /* (xfs_repair exits 0 having fixed things: a repair that left clean
   * what the check found broken repaired it.)
   */
  if (strcmp (phase_outcome (t, "recheck"), "CLEAN") == 0 &&
      (strcmp (phase_outcome (t, "repair"), "FIXED") == 0 ||
       (noticed && strcmp (phase_outcome (t, "repair"), "CLEAN") == 0)))
    t->r->recovery = "repair";
  else if (!lost && !noticed && strcmp (t->r->detection, "none") != 0)
    t->r->recovery = stat_of (t, "faults.reallocated") > 0 ? "remap"
                     : stat_of (t, "faults.retries") > 0   ? "retry"
                                                           : "redundancy";
  else if (eio)
    t->r->recovery = "propagate";
  else
    t->r->recovery = "none";
}
