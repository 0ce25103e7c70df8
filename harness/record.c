/* futuredisk — harness: a trial's record, one JSON line (see trial.h). */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "populate.h"
#include "trial-int.h"

/* The trial's inputs: what was run, and where it belongs. */
static void
record_inputs (const struct trial *t, FILE *fp)
{
  fprintf (fp, "{\"fs\": ");
  fd_json_string (fp, t->fs->name);
  fprintf (fp, ", \"profile\": ");
  fd_json_string (fp, t->profile);
  fprintf (fp, ", \"size\": ");
  fd_json_string (fp, t->size);
  fprintf (fp,
           ", \"seed\": %" PRIu64 ", \"fill_pct\": %g, \"meta_only\": %" PRIu64
           ", \"crash\": %s, \"tree\": \"%s\", \"time\": ",
           t->seed, t->fill, t->populate.meta_only ? t->populate.files : 0,
           t->crash ? "true" : "false", fd_tree_name (t->populate.tree));
  fd_json_string (fp, t->time_mode ? t->time_mode : "virtual");
  fprintf (fp, ", \"think\": ");
  fd_json_string (fp, t->think ? t->think : "real");
  fprintf (fp, ", \"attach\": ");
  fd_json_string (fp, t->attached ? t->attached : "");
  fprintf (fp, ", \"cloned\": %s", t->cloned ? "true" : "false");
  fprintf (fp, ", \"campaign\": ");
  fd_json_string (fp, t->campaign ? t->campaign : "");
  fprintf (fp, ", \"run_id\": ");
  fd_json_string (fp, t->run_id ? t->run_id : "");
  fprintf (fp, ", \"rep\": %" PRIu64 ", \"faults\": ", t->rep);
  fd_json_string (fp, t->faults_spec ? t->faults_spec : "");
  fprintf (fp, ", \"target\": ");
  fd_json_string (fp, t->target ? t->target : "");
  fprintf (fp, ", \"targets_hit\": ");
  fd_json_string (fp, t->targets);
}

/* One phase as a JSON object; a checker's with its exit and passes. */
static void
record_phase (const struct phase *p, FILE *fp)
{
  size_t j;

  fprintf (fp,
           "{\"name\": \"%s\", \"virtual_s\": %.6f, \"wall_s\": %.3f, "
           "\"cpu_s\": %.3f, \"reads\": %" PRIu64 ", \"writes\": %" PRIu64
           ", \"bytes_read\": %" PRIu64 ", \"bytes_written\": %" PRIu64
           ", \"read_errors\": %" PRIu64,
           p->name, p->virtual_s, p->wall_s, p->cpu_s, p->reads, p->writes,
           p->bytes_read, p->bytes_written, p->read_errors);
  if (p->outcome) {
    fprintf (fp,
             ", \"exit\": %d, \"signal\": %d, \"outcome\": \"%s\", "
             "\"passes\": {",
             p->status, p->signal, p->outcome);
    for (j = 0; j < p->npasses; j++)
      fprintf (fp, "%s\"%s\": %.2f", j ? ", " : "", p->passes[j].name,
               p->passes[j].seconds);
    fprintf (fp, "}, \"virtual_passes\": [");
    for (j = 0; j < p->nvpasses; j++)
      fprintf (fp, "%s[\"%s\", %.6f]", j ? ", " : "", p->vpasses[j].name,
               p->vpasses[j].seconds);
    fprintf (fp, "]");
  }
  fprintf (fp, "}");
}

/* The audit's classes and block kinds, or null when there was none. */
static void
record_audit (const struct trial *t, FILE *fp)
{
  size_t i;

  if (!t->audited) {
    fprintf (fp, "null");
    return;
  }
  fprintf (fp, "{");
  for (i = 0; i < FD_AUDIT_NCLASSES; i++)
    fprintf (fp, "%s\"%s\": %" PRIu64, i ? ", " : "", fd_audit_class_name (i),
             t->audit.count[i]);
  fprintf (fp,
           ", \"zeroed_blocks\": %" PRIu64 ", \"stale_blocks\": %" PRIu64
           ", \"foreign_blocks\": %" PRIu64 ", \"garbled_blocks\": %" PRIu64
           "}",
           t->audit.zeroed_blocks, t->audit.stale_blocks,
           t->audit.foreign_blocks, t->audit.garbled_blocks);
}

/* The broken promises listed (at most n of them). */
static void
record_violations (const struct fd_violation *v, size_t n, FILE *fp)
{
  size_t i;

  fprintf (fp, "[");
  for (i = 0; i < n; i++) {
    fprintf (fp,
             "%s{\"how\": \"%s\", \"found\": \"%s\", \"path\": ", i ? ", " : "",
             v[i].how, v[i].found);
    fd_json_string (fp, v[i].path);
    fprintf (fp, "}");
  }
  fprintf (fp, "]");
}

/* Durability classes and the broken promises (at most 200), or null. */
static void
record_durability (const struct trial *t, FILE *fp)
{
  size_t i;

  if (!t->audited) {
    fprintf (fp, "null");
    return;
  }
  fprintf (fp, "{");
  for (i = 0; i < FD_DURABILITY_NCLASSES; i++)
    fprintf (fp, "\"%s\": %" PRIu64 ", ", fd_durability_class_name (i),
             t->audit.durability[i]);
  fprintf (fp, "\"violations\": ");
  record_violations (t->violations, t->nviolations < 200 ? t->nviolations : 200,
                     fp);
  fprintf (fp, "}");
}

/* --crash-points: each point's outcomes and durability, or null. */
static void
record_points (const struct trial *t, FILE *fp)
{
  size_t i, k;

  if (!t->crash_points) {
    fprintf (fp, "null");
    return;
  }
  fprintf (fp,
           "{\"flushes\": %" PRIu64 ", \"promises\": %" PRIu64
           ", \"wall_s\": %.3f, \"per_minute\": %.1f, \"points\": [",
           t->log_flushes, t->log_promises, t->points_wall_s,
           t->points_wall_s > 0 ? (double)t->npoints * 60 / t->points_wall_s
                                : 0);
  for (i = 0; i < t->npoints; i++) {
    const struct fd_crash_point *cp = &t->points[i];
    fprintf (fp,
             "%s{\"flush\": %" PRIu64 ", \"promises\": %" PRIu64
             ", \"cache_writes\": %" PRIu64
             ", \"check\": \"%s\", \"repair\": \"%s\", "
             "\"recheck\": \"%s\", \"mount\": \"%s\", \"audited\": %s",
             i ? ", " : "", cp->flush, cp->promises, cp->cache_writes,
             cp->check, cp->repair, cp->recheck, cp->mount,
             cp->audited ? "true" : "false");
    for (k = 0; k < FD_DURABILITY_NCLASSES; k++)
      fprintf (fp, ", \"%s\": %" PRIu64, fd_durability_class_name (k),
               cp->durability[k]);
    fprintf (fp, ", \"violations\": ");
    record_violations (cp->violations,
                       cp->nviolations < 3 ? cp->nviolations : 3, fp);
    fprintf (fp, ", \"error\": ");
    fd_json_string (fp, cp->error);
    fprintf (fp, "}");
  }
  fprintf (fp, "]}");
}

/* Which files (at most 200), so a loss can be matched to its fault. */
static void
record_damaged (const struct trial *t, FILE *fp)
{
  size_t i;

  fprintf (fp, "[");
  for (i = 0; i < t->ndamaged && i < 200; i++) {
    fprintf (fp, "%s{\"class\": \"%s\", \"path\": ", i ? ", " : "",
             t->damaged[i].cls);
    fd_json_string (fp, t->damaged[i].path);
    fprintf (fp, ", \"cause\": ");
    fd_json_string (fp, t->damaged[i].cause);
    fprintf (fp, "}");
  }
  fprintf (fp, "]");
}

/* fsck or restore, or null when the check did not run. */
static void
record_restore (const struct trial *t, FILE *fp)
{
  if (t->restore_s < 0) {
    fprintf (fp, "null");
    return;
  }
  fprintf (fp,
           "{\"bytes\": %" PRIu64 ", \"rate\": %.0f, \"restore_s\": %.6f, "
           "\"fsck_s\": %.6f, \"quicker\": \"%s\"}",
           t->m.bytes, t->restore_rate, t->restore_s, fd_trial_fsck_seconds (t),
           fd_trial_quicker (t));
}

void
fd_trial_record (const struct trial *t, FILE *fp)
{
  size_t i;

  record_inputs (t, fp);
  fprintf (fp, ", \"files\": %zu, \"bytes\": %" PRIu64 ", \"phases\": [",
           t->m.n, t->m.bytes);
  for (i = 0; i < t->nph; i++) {
    fprintf (fp, "%s", i ? ", " : "");
    record_phase (&t->ph[i], fp);
  }
  fprintf (fp, "], \"audit\": ");
  record_audit (t, fp);
  fprintf (fp, ", \"durability\": ");
  record_durability (t, fp);
  fprintf (fp, ", \"crash_points\": ");
  record_points (t, fp);
  fprintf (fp, ", \"iron\": ");
  if (t->detection)
    fprintf (fp, "{\"detection\": \"%s\", \"recovery\": \"%s\"}", t->detection,
             t->recovery);
  else
    fprintf (fp, "null");
  fprintf (fp, ", \"damaged\": ");
  record_damaged (t, fp);
  fprintf (fp, ", \"restore\": ");
  record_restore (t, fp);
  fprintf (fp, ", \"repair_cut\": ");
  if (t->repair_cut && t->cut_outcome) {
    fprintf (fp, "{\"after\": %" PRIu64 ", \"cut\": %s, \"outcome\": \"%s\"",
             t->repair_cut, t->cut ? "true" : "false", t->cut_outcome);
    if (t->cut_reference_intact >= 0 && t->audited)
      fprintf (fp, ", \"lost_vs_uninterrupted\": %" PRId64,
               t->cut_reference_intact -
                   (int64_t)t->audit.count[FD_AUDIT_INTACT]);
    fprintf (fp, "}");
  } else
    fprintf (fp, "null");
  fprintf (fp, ", \"mount\": ");
  if (t->mount) {
    fprintf (fp, "{\"outcome\": \"%s\", \"reason\": ", t->mount);
    fd_json_string (fp, t->mount_reason);
    fprintf (fp, "}");
  } else
    fprintf (fp, "null");
  fprintf (fp, ", \"version\": \"%s\"", FUTUREDISK_VERSION);
  fprintf (fp, ", \"write_probe\": %s, \"error\": ",
           t->audited ? (t->probe_ok ? "true" : "false") : "null");
  fd_json_string (fp, t->error);
  fprintf (fp, ", \"disk\": %s}\n", t->stats[0] ? t->stats : "null");
}
