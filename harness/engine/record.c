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
record_inputs (const struct trial_spec *s, const struct trial_result *r,
               FILE *fp)
{
  fprintf (fp, "{\"fs\": ");
  fd_json_string (fp, s->fs->name);
  fprintf (fp, ", \"profile\": ");
  fd_json_string (fp, s->profile);
  fprintf (fp, ", \"size\": ");
  fd_json_string (fp, s->size);
  fprintf (fp,
           ", \"seed\": %" PRIu64 ", \"fill_pct\": %g, \"meta_only\": %" PRIu64
           ", \"crash\": %s, \"tree\": \"%s\", \"time\": ",
           s->seed, s->fill, s->populate.meta_only ? s->populate.files : 0,
           s->crash ? "true" : "false", fd_tree_name (s->populate.tree));
  fd_json_string (fp, s->time_mode ? s->time_mode : "virtual");
  fprintf (fp, ", \"think\": ");
  fd_json_string (fp, s->think ? s->think : "real");
  fprintf (fp, ", \"host\": ");
  fd_json_string (fp, s->host ? s->host : "native");
  fprintf (fp, ", \"attach\": ");
  fd_json_string (fp, r->attached ? r->attached : "");
  fprintf (fp, ", \"cloned\": %s", r->cloned ? "true" : "false");
  fprintf (fp, ", \"campaign\": ");
  fd_json_string (fp, s->campaign ? s->campaign : "");
  fprintf (fp, ", \"run_id\": ");
  fd_json_string (fp, s->run_id ? s->run_id : "");
  fprintf (fp, ", \"rep\": %" PRIu64 ", \"faults\": ", s->rep);
  fd_json_string (fp, s->faults_spec ? s->faults_spec : "");
  fprintf (fp, ", \"target\": ");
  fd_json_string (fp, s->target ? s->target : "");
  fprintf (fp, ", \"targets_hit\": ");
  fd_json_string (fp, r->targets);
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
    fprintf (fp, ", \"exit\": %d, \"signal\": %d, \"outcome\": \"%s\", ",
             p->status, p->signal, p->outcome);
    if (p->charged_s >= 0)
      fprintf (fp, "\"charged_s\": %.6f, ", p->charged_s);
    fprintf (fp, "\"passes\": {");
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
record_audit (const struct trial_result *r, FILE *fp)
{
  size_t i;

  if (!r->audited) {
    fprintf (fp, "null");
    return;
  }
  fprintf (fp, "{");
  for (i = 0; i < FD_AUDIT_NCLASSES; i++)
    fprintf (fp, "%s\"%s\": %" PRIu64, i ? ", " : "", fd_audit_class_name (i),
             r->audit.count[i]);
  fprintf (fp,
           ", \"zeroed_blocks\": %" PRIu64 ", \"stale_blocks\": %" PRIu64
           ", \"foreign_blocks\": %" PRIu64 ", \"garbled_blocks\": %" PRIu64
           "}",
           r->audit.zeroed_blocks, r->audit.stale_blocks,
           r->audit.foreign_blocks, r->audit.garbled_blocks);
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
record_durability (const struct trial_result *r, FILE *fp)
{
  size_t i;

  if (!r->audited) {
    fprintf (fp, "null");
    return;
  }
  fprintf (fp, "{");
  for (i = 0; i < FD_DURABILITY_NCLASSES; i++)
    fprintf (fp, "\"%s\": %" PRIu64 ", ", fd_durability_class_name (i),
             r->audit.durability[i]);
  fprintf (fp, "\"violations\": ");
  record_violations (r->violations, r->nviolations < 200 ? r->nviolations : 200,
                     fp);
  fprintf (fp, "}");
}

/* --crash-points: each point's outcomes and durability, or null. */
static void
record_points (const struct trial_spec *s, const struct trial_result *r,
               FILE *fp)
{
  size_t i, k;

  if (!s->crash_points) {
    fprintf (fp, "null");
    return;
  }
  fprintf (fp,
           "{\"flushes\": %" PRIu64 ", \"promises\": %" PRIu64
           ", \"wall_s\": %.3f, \"per_minute\": %.1f, \"points\": [",
           r->log_flushes, r->log_promises, r->points_wall_s,
           r->points_wall_s > 0 ? (double)r->npoints * 60 / r->points_wall_s
                                : 0);
  for (i = 0; i < r->npoints; i++) {
    const struct fd_crash_point *cp = &r->points[i];
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
record_damaged (const struct trial_result *r, FILE *fp)
{
  size_t i;

  fprintf (fp, "[");
  for (i = 0; i < r->ndamaged && i < 200; i++) {
    fprintf (fp, "%s{\"class\": \"%s\", \"path\": ", i ? ", " : "",
             r->damaged[i].cls);
    fd_json_string (fp, r->damaged[i].path);
    fprintf (fp, ", \"cause\": ");
    fd_json_string (fp, r->damaged[i].cause);
    fprintf (fp, "}");
  }
  fprintf (fp, "]");
}

/* fsck or restore, or null when the check did not run. */
static void
record_restore (const struct trial_spec *s, const struct trial_result *r,
                FILE *fp)
{
  if (r->restore_s < 0) {
    fprintf (fp, "null");
    return;
  }
  fprintf (fp,
           "{\"bytes\": %" PRIu64 ", \"rate\": %.0f, \"restore_s\": %.6f, "
           "\"fsck_s\": %.6f, \"quicker\": \"%s\"}",
           r->m.bytes, s->restore_rate, r->restore_s, fd_trial_fsck_seconds (r),
           fd_trial_quicker (r));
}

void
fd_trial_record (const struct trial_spec *s, const struct trial_result *r,
                 FILE *fp)
{
  size_t i;

  record_inputs (s, r, fp);
  fprintf (fp, ", \"files\": %zu, \"bytes\": %" PRIu64 ", \"phases\": [",
           r->m.n, r->m.bytes);
  for (i = 0; i < r->nph; i++) {
    fprintf (fp, "%s", i ? ", " : "");
    record_phase (&r->ph[i], fp);
  }
  fprintf (fp, "], \"audit\": ");
  record_audit (r, fp);
  fprintf (fp, ", \"durability\": ");
  record_durability (r, fp);
  fprintf (fp, ", \"crash_points\": ");
  record_points (s, r, fp);
  fprintf (fp, ", \"iron\": ");
  if (r->detection)
    fprintf (fp, "{\"detection\": \"%s\", \"recovery\": \"%s\"}", r->detection,
             r->recovery);
  else
    fprintf (fp, "null");
  fprintf (fp, ", \"damaged\": ");
  record_damaged (r, fp);
  fprintf (fp, ", \"restore\": ");
  record_restore (s, r, fp);
  fprintf (fp, ", \"repair_cut\": ");
  if (s->repair_cut && r->cut_outcome) {
    fprintf (fp, "{\"after\": %" PRIu64 ", \"cut\": %s, \"outcome\": \"%s\"",
             s->repair_cut, r->cut ? "true" : "false", r->cut_outcome);
    if (s->cut_reference_intact >= 0 && r->audited)
      fprintf (fp, ", \"lost_vs_uninterrupted\": %" PRId64,
               s->cut_reference_intact -
                   (int64_t)r->audit.count[FD_AUDIT_INTACT]);
    fprintf (fp, "}");
  } else
    fprintf (fp, "null");
  fprintf (fp, ", \"mount\": ");
  if (r->mount) {
    fprintf (fp, "{\"outcome\": \"%s\", \"reason\": ", r->mount);
    fd_json_string (fp, r->mount_reason);
    fprintf (fp, "}");
  } else
    fprintf (fp, "null");
  fprintf (fp, ", \"version\": \"%s\"", FUTUREDISK_VERSION);
  fprintf (fp, ", \"write_probe\": %s, \"error\": ",
           r->audited ? (r->probe_ok ? "true" : "false") : "null");
  fd_json_string (fp, r->error);
  fprintf (fp, ", \"disk\": %s}\n", r->stats[0] ? r->stats : "null");
}
