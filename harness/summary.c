/* futuredisk — harness: a trial's one-screen summary (see trial.h). */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "populate.h"
#include "trial-int.h"

void
fd_trial_summary (const struct trial *t)
{
  size_t i;

  printf ("trial: %s on %s (%s), seed %" PRIu64 ", %zu entries, %" PRIu64
          " MiB%s%s\n",
          t->fs->name, t->profile, t->size, t->seed, t->m.n, t->m.bytes >> 20,
          t->attached ? ", attached by " : "", t->attached ? t->attached : "");
  for (i = 0; i < t->nph; i++)
    printf ("  %-14s %10.3f virtual s %8.2f wall s%s%s\n", t->ph[i].name,
            t->ph[i].virtual_s, t->ph[i].wall_s, t->ph[i].outcome ? "  " : "",
            t->ph[i].outcome ? t->ph[i].outcome : "");
  if (t->audited) {
    printf ("  audit:");
    for (i = 0; i < FD_AUDIT_NCLASSES; i++)
      printf (" %s %" PRIu64, fd_audit_class_name (i), t->audit.count[i]);
    printf ("; write probe %s\n", t->probe_ok ? "ok" : "FAILED");
    printf ("  durability:");
    for (i = 0; i < FD_DURABILITY_NCLASSES; i++)
      printf (" %s %" PRIu64, fd_durability_class_name (i),
              t->audit.durability[i]);
    printf ("\n");
    for (i = 0; i < t->nviolations && i < 5; i++)
      printf ("  violation: %s after %s: %s\n", t->violations[i].path,
              t->violations[i].how, t->violations[i].found);
    if (t->nviolations > 5)
      printf ("  (%zu violations in all)\n", t->nviolations);
  }
  if (t->crash_points) {
    size_t k, broke = 0, bad = 0;
    uint64_t files = 0;
    for (k = 0; k < t->npoints; k++) {
      broke += t->points[k].durability[FD_DURABLE_BROKEN] > 0;
      files += t->points[k].durability[FD_DURABLE_BROKEN];
      bad += t->points[k].error[0] != '\0';
    }
    printf ("  crash points: %zu of %" PRIu64 " flushes in %.1f s wall (%.0f "
            "a minute): %zu broke a durability promise (%" PRIu64
            " files), %zu ended in an error\n",
            t->npoints, t->log_flushes, t->points_wall_s,
            t->points_wall_s > 0 ? (double)t->npoints * 60 / t->points_wall_s
                                 : 0,
            broke, files, bad);
  }
  if (t->detection)
    printf ("  IRON: detection %s, recovery %s\n", t->detection, t->recovery);
  if (t->repair_cut && t->cut_outcome) {
    printf ("  repair cut after write %" PRIu64 ": %s", t->repair_cut,
            t->cut_outcome);
    if (t->cut_reference_intact >= 0 && t->audited)
      printf (", %" PRId64 " files lost against the uninterrupted repair",
              t->cut_reference_intact -
                  (int64_t)t->audit.count[FD_AUDIT_INTACT]);
    printf ("\n");
  }
  if (t->restore_s >= 0)
    printf ("  fsck or restore: %s %.3f virtual s, a restore of %" PRIu64
            " MiB %.3f s (%s): %s is quicker\n",
            t->check_only ? "check" : "check and repair",
            fd_trial_fsck_seconds (t), t->m.bytes >> 20, t->restore_s,
            t->restore_rate > 0 ? "at --restore-rate" : "at the disk's rate",
            fd_trial_quicker (t));
  if (t->mount && strcmp (t->mount, FD_MOUNT_MOUNTED) != 0)
    printf ("  mount after the repair: %s%s%s\n", t->mount,
            t->mount_reason[0] ? ": " : "", t->mount_reason);
  if (t->error[0])
    printf ("  error: %s\n", t->error);
}
