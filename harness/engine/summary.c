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
fd_trial_summary (const struct trial_spec *s, const struct trial_result *r)
{
  size_t i;

  printf ("trial: %s on %s (%s), seed %" PRIu64 ", %zu entries, %" PRIu64
          " MiB%s%s\n",
          s->fs->name, s->profile, s->size, s->seed, r->m.n, r->m.bytes >> 20,
          r->attached ? ", attached by " : "", r->attached ? r->attached : "");
  for (i = 0; i < r->nph; i++) {
    const struct phase *p = &r->ph[i];

    if (p->cut_short) { /* the disk's clock died with its server */
      printf ("  %-14s %10s virtual s %8.2f wall s  cut short\n", p->name, "?",
              p->wall_s);
      continue;
    }
    printf ("  %-14s %10.3f virtual s %8.2f wall s%s%s", p->name, p->virtual_s,
            p->wall_s, p->outcome ? "  " : "", p->outcome ? p->outcome : "");
    /* A checker's time is exact only where the drive watched it. */
    if (p->outcome && p->unwatched)
      printf (" (%" PRIu64 " of %" PRIu64 " picks after a grace)", p->unwatched,
              p->unwatched + p->watched + p->ahead);
    printf ("\n");
  }
  if (r->audited) {
    printf ("  audit:");
    for (i = 0; i < FD_AUDIT_NCLASSES; i++)
      printf (" %s %" PRIu64, fd_audit_class_name (i), r->audit.count[i]);
    printf ("; write probe %s\n", r->probe_ok ? "ok" : "FAILED");
    printf ("  durability:");
    for (i = 0; i < FD_DURABILITY_NCLASSES; i++)
      printf (" %s %" PRIu64, fd_durability_class_name (i),
              r->audit.durability[i]);
    printf ("\n");
    for (i = 0; i < r->nviolations && i < 5; i++)
      printf ("  violation: %s after %s: %s\n", r->violations[i].path,
              r->violations[i].how, r->violations[i].found);
    if (r->nviolations > 5)
      printf ("  (%zu violations in all)\n", r->nviolations);
  }
  if (s->crash_points) {
    size_t k, broke = 0, bad = 0;
    uint64_t files = 0;
    for (k = 0; k < r->npoints; k++) {
      broke += r->points[k].durability[FD_DURABLE_BROKEN] > 0;
      files += r->points[k].durability[FD_DURABLE_BROKEN];
      bad += r->points[k].error[0] != '\0';
    }
    printf ("  crash points: %zu of %" PRIu64 " flushes in %.1f s wall (%.0f "
            "a minute): %zu broke a durability promise (%" PRIu64
            " files), %zu ended in an error\n",
            r->npoints, r->log_flushes, r->points_wall_s,
            r->points_wall_s > 0 ? (double)r->npoints * 60 / r->points_wall_s
                                 : 0,
            broke, files, bad);
  }
  if (r->detection)
    printf ("  IRON: detection %s, recovery %s\n", r->detection, r->recovery);
  if (s->repair_cut && r->cut_outcome) {
    printf ("  repair cut after write %" PRIu64 ": %s", s->repair_cut,
            r->cut_outcome);
    if (s->cut_reference_intact >= 0 && r->audited)
      printf (", %" PRId64 " files lost against the uninterrupted repair",
              s->cut_reference_intact -
                  (int64_t)r->audit.count[FD_AUDIT_INTACT]);
    printf ("\n");
  }
  if (r->restore_s >= 0)
    printf ("  fsck or restore: %s %.3f virtual s, a restore of %" PRIu64
            " MiB %.3f s (%s): %s is quicker\n",
            s->check_only ? "check" : "check and repair",
            fd_trial_fsck_seconds (r), r->m.bytes >> 20, r->restore_s,
            s->restore_rate > 0 ? "at --restore-rate" : "at the disk's rate",
            fd_trial_quicker (r));
  if (r->mount && strcmp (r->mount, FD_MOUNT_MOUNTED) != 0)
    printf ("  mount after the repair: %s%s%s\n", r->mount,
            r->mount_reason[0] ? ": " : "", r->mount_reason);
  if (r->error[0])
    printf ("  error: %s\n", r->error);
}
