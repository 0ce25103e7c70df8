/* futuredisk — harness: a trial's record, one JSON line (see trial.h).
 *
 * Built as a jansson value and dumped, so whatever a string holds (a
 * file's name is any bytes) the line is JSON.  SCHEMA.md ("The record's
 * numbers and strings") says where the bytes differ from printf's.
 */

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faultmodels/version.h"
#include "ctlclient.h"
#include "errmsg.h"
#include "populate.h"
#include "trial-int.h"

/* Reals with at most 15 significant digits, so a value rounded to a few
 * decimals prints as those decimals (8.3, not 8.3000000000000007).
 */
#define RECORD_DUMP (JSON_PRESERVE_ORDER | JSON_REAL_PRECISION (15))

/* jansson's integers are signed: above INT64_MAX a count or seed wraps
 * to value - 2^64, as the database's columns store it.
 */
static json_t *
u64 (uint64_t v)
{
  return json_integer ((json_int_t)v);
}

/* x as printf's %.Nf wrote it in the record (the same decimal, read
 * back: rounding x * 10^N would round 0.015 up where printf, seeing
 * 0.01499..., rounds down), less the trailing zeros.  JSON has no NaN
 * or infinity: null, where printf wrote invalid JSON.
 */
static json_t *
fixed (double x, int decimals)
{
  char buf[DBL_MAX_10_EXP + 32];

  if (!isfinite (x))
    return json_null ();
  snprintf (buf, sizeof buf, "%.*f", decimals, x);
  return json_real (strtod (buf, NULL));
}

/* A number printf wrote with %.0f: an integer, as it read. */
static json_t *
whole (double x)
{
  char buf[DBL_MAX_10_EXP + 32];
  double v;

  if (!isfinite (x))
    return json_null ();
  snprintf (buf, sizeof buf, "%.0f", x);
  v = strtod (buf, NULL);
  return fabs (v) < 9e18 ? json_integer ((json_int_t)v) : json_real (v);
}

/* A percentage as %g wrote it: 6 significant digits, and a whole one an
 * integer, so "fill_pct": 50 stays 50 for readers that tell 50 from 50.0.
 */
static json_t *
shortest (double x)
{
  char buf[32];
  double v;

  snprintf (buf, sizeof buf, "%g", x);
  v = strtod (buf, NULL);
  if (!isfinite (v))
    return json_null ();
  if (v == trunc (v) && fabs (v) < 1e15)
    return json_integer ((json_int_t)v);
  return json_real (v);
}

/* How many bytes at p make one character jansson accepts (no overlong
 * form, surrogate or code point above U+10FFFF); 0: not UTF-8.
 */
static size_t
utf8_char (const unsigned char *p)
{
  unsigned char lo = 0x80, hi = 0xbf;
  size_t n, i;

  if (*p < 0x80)
    return 1;
  if (*p < 0xc2 || *p > 0xf4)
    return 0;
  n = *p < 0xe0 ? 2 : *p < 0xf0 ? 3 : 4;
  if (*p == 0xe0)
    lo = 0xa0;
  else if (*p == 0xed)
    hi = 0x9f;
  else if (*p == 0xf0)
    lo = 0x90;
  else if (*p == 0xf4)
    hi = 0x8f;
  if (p[1] < lo || p[1] > hi)
    return 0;
  for (i = 2; i < n; i++)
    if ((p[i] & 0xc0) != 0x80)
      return 0;
  return n;
}

/* s with each byte that is not part of a UTF-8 character replaced by
 * U+FFFD (malloc'd; NULL: out of memory).  jansson refuses such a
 * string, and a file's name or a checker's message may hold one.
 */
static char *
utf8_clean (const char *s)
{
  const unsigned char *p = (const unsigned char *)s;
  char *out = malloc (3 * strlen (s) + 1), *o = out;
  size_t n;

  if (out == NULL)
    return NULL;
  for (; *p; p += n ? n : 1) {
    if ((n = utf8_char (p)) == 0) {
      memcpy (o, "\xef\xbf\xbd", 3);
      o += 3;
    } else {
      memcpy (o, p, n);
      o += n;
    }
  }
  *o = '\0';
  return out;
}

static json_t *
str (const char *s)
{
  char *clean = utf8_clean (s);
  json_t *j = clean ? json_string_nocheck (clean) : NULL;

  free (clean);
  return j;
}

/* o[key] = v (a key that may not be UTF-8); -1 if v is NULL or out of
 * memory, v released either way.
 */
static int
set (json_t *o, const char *key, json_t *v)
{
  char *clean = utf8_clean (key);
  int ret = clean ? json_object_set_new_nocheck (o, clean, v) : -1;

  if (clean == NULL)
    json_decref (v);
  free (clean);
  return ret;
}

/* Append v to array a; -1 if v is NULL or out of memory. */
static int
push (json_t *a, json_t *v)
{
  return json_array_append_new (a, v);
}

/* The trial's inputs: what was run, and where it belongs. */
static json_t *
record_inputs (const struct trial_spec *s, const struct trial_result *r)
{
  json_t *o = json_object ();

  if (o == NULL || set (o, "fs", str (s->fs->name)) ||
      set (o, "profile", str (s->profile)) || set (o, "size", str (s->size)) ||
      set (o, "seed", u64 (s->seed)) ||
      set (o, "fill_pct", shortest (s->fill)) ||
      set (o, "meta_only",
           u64 (s->populate.meta_only ? s->populate.files : 0)) ||
      set (o, "crash", json_boolean (s->crash)) ||
      set (o, "tree", str (fd_tree_name (s->populate.tree))) ||
      set (o, "time", str (s->time_mode ? s->time_mode : "virtual")) ||
      set (o, "think", str (s->think ? s->think : "real")) ||
      set (o, "host", str (s->host ? s->host : "native")) ||
      set (o, "attach", str (r->attached ? r->attached : "")) ||
      set (o, "cloned", json_boolean (r->cloned)) ||
      set (o, "campaign", str (s->campaign ? s->campaign : "")) ||
      set (o, "run_id", str (s->run_id ? s->run_id : "")) ||
      set (o, "rep", u64 (s->rep)) ||
      set (o, "faults", str (s->faults_spec ? s->faults_spec : "")) ||
      set (o, "target", str (s->target ? s->target : "")) ||
      set (o, "targets_hit", str (r->targets))) {
    json_decref (o);
    return NULL;
  }
  return o;
}

/* A checker's passes: its own times, and the disk's virtual ones. */
static int
record_passes (const struct phase *p, json_t *o)
{
  json_t *passes = json_object (), *vpasses = json_array ();
  int bad = passes == NULL || vpasses == NULL;
  size_t j;

  for (j = 0; !bad && j < p->npasses; j++)
    bad = set (passes, p->passes[j].name, fixed (p->passes[j].seconds, 2));
  for (j = 0; !bad && j < p->nvpasses; j++)
    bad = push (vpasses, json_pack ("[o, o]", str (p->vpasses[j].name),
                                    fixed (p->vpasses[j].seconds, 6)));
  if (bad) {
    json_decref (passes);
    json_decref (vpasses);
    return -1;
  }
  /* Both, so that neither is left unreleased. */
  return set (o, "passes", passes) | set (o, "virtual_passes", vpasses);
}

/* One phase as a JSON object; a checker's with its exit and passes. */
static json_t *
record_phase (const struct phase *p)
{
  json_t *o = json_pack (
      "{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:{s:o, s:o, s:o}}",
      "name", str (p->name), "virtual_s", fixed (p->virtual_s, 6), "wall_s",
      fixed (p->wall_s, 3), "cpu_s", fixed (p->cpu_s, 3), "reads",
      u64 (p->reads), "writes", u64 (p->writes), "bytes_read",
      u64 (p->bytes_read), "bytes_written", u64 (p->bytes_written),
      "read_errors", u64 (p->read_errors), "decisions", "watched",
      u64 (p->watched), "ahead", u64 (p->ahead), "unwatched",
      u64 (p->unwatched));

  if (o == NULL || p->outcome == NULL)
    return o;
  if (set (o, "exit", json_integer (p->status)) ||
      set (o, "signal", json_integer (p->signal)) ||
      set (o, "outcome", str (p->outcome)) ||
      (p->charged_s >= 0 && set (o, "charged_s", fixed (p->charged_s, 6))) ||
      record_passes (p, o)) {
    json_decref (o);
    return NULL;
  }
  return o;
}

static json_t *
record_phases (const struct trial_result *r)
{
  json_t *a = json_array ();
  size_t i;

  for (i = 0; a && i < r->nph; i++)
    if (push (a, record_phase (&r->ph[i])) == -1) {
      json_decref (a);
      return NULL;
    }
  return a;
}

/* The audit's classes and block kinds, or null when there was none. */
static json_t *
record_audit (const struct trial_result *r)
{
  json_t *o;
  size_t i;

  if (!r->audited)
    return json_null ();
  o = json_object ();
  for (i = 0; o && i < FD_AUDIT_NCLASSES; i++)
    if (set (o, fd_audit_class_name (i), u64 (r->audit.count[i]))) {
      json_decref (o);
      return NULL;
    }
  if (o && (set (o, "zeroed_blocks", u64 (r->audit.zeroed_blocks)) ||
            set (o, "stale_blocks", u64 (r->audit.stale_blocks)) ||
            set (o, "foreign_blocks", u64 (r->audit.foreign_blocks)) ||
            set (o, "garbled_blocks", u64 (r->audit.garbled_blocks)))) {
    json_decref (o);
    return NULL;
  }
  return o;
}

/* The broken promises listed (at most n of them). */
static json_t *
record_violations (const struct fd_violation *v, size_t n)
{
  json_t *a = json_array ();
  size_t i;

  for (i = 0; a && i < n; i++)
    if (push (a, json_pack ("{s:o, s:o, s:o}", "how", str (v[i].how), "found",
                            str (v[i].found), "path", str (v[i].path)))) {
      json_decref (a);
      return NULL;
    }
  return a;
}

/* Durability classes and the broken promises (at most max), into o. */
static int
record_classes (const uint64_t *durability, const struct fd_violation *v,
                size_t n, size_t max, json_t *o)
{
  size_t k;

  for (k = 0; k < FD_DURABILITY_NCLASSES; k++)
    if (set (o, fd_durability_class_name (k), u64 (durability[k])))
      return -1;
  return set (o, "violations", record_violations (v, n < max ? n : max));
}

/* Durability classes and the broken promises (at most 200), or null. */
static json_t *
record_durability (const struct trial_result *r)
{
  json_t *o;

  if (!r->audited)
    return json_null ();
  if ((o = json_object ()) &&
      record_classes (r->audit.durability, r->violations, r->nviolations, 200,
                      o)) {
    json_decref (o);
    return NULL;
  }
  return o;
}

/* One crash point: its outcomes, durability and first violations. */
static json_t *
record_point (const struct fd_crash_point *cp)
{
  json_t *o = json_pack (
      "{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b}", "flush", u64 (cp->flush),
      "promises", u64 (cp->promises), "cache_writes", u64 (cp->cache_writes),
      "check", str (cp->check), "repair", str (cp->repair), "recheck",
      str (cp->recheck), "mount", str (cp->mount), "audited", cp->audited);

  if (o &&
      (record_classes (cp->durability, cp->violations, cp->nviolations, 3, o) ||
       set (o, "error", str (cp->error)))) {
    json_decref (o);
    return NULL;
  }
  return o;
}

/* --crash-points: each point's outcomes and durability, or null. */
static json_t *
record_points (const struct trial_spec *s, const struct trial_result *r)
{
  json_t *points, *o;
  size_t i;

  if (!s->crash_points)
    return json_null ();
  points = json_array ();
  for (i = 0; points && i < r->npoints; i++)
    if (push (points, record_point (&r->points[i]))) {
      json_decref (points);
      return NULL;
    }
  o = json_pack ("{s:o, s:o, s:o, s:o, s:o}", "flushes", u64 (r->log_flushes),
                 "promises", u64 (r->log_promises), "wall_s",
                 fixed (r->points_wall_s, 3), "per_minute",
                 fixed (r->points_wall_s > 0
                            ? (double)r->npoints * 60 / r->points_wall_s
                            : 0,
                        1),
                 "points", points);
  return o;
}

/* Which files (at most 200), so a loss can be matched to its fault. */
static json_t *
record_damaged (const struct trial_result *r)
{
  json_t *a = json_array ();
  size_t i;

  for (i = 0; a && i < r->ndamaged && i < 200; i++)
    if (push (a, json_pack ("{s:o, s:o, s:o}", "class", str (r->damaged[i].cls),
                            "path", str (r->damaged[i].path), "cause",
                            str (r->damaged[i].cause)))) {
      json_decref (a);
      return NULL;
    }
  return a;
}

/* fsck or restore, or null when the check did not run to its end. */
static json_t *
record_restore (const struct trial_spec *s, const struct trial_result *r)
{
  if (r->restore_s < 0)
    return json_null ();
  return json_pack ("{s:o, s:o, s:o, s:o, s:o}", "bytes", u64 (r->m.bytes),
                    "rate", whole (s->restore_rate), "restore_s",
                    fixed (r->restore_s, 6), "fsck_s",
                    fixed (fd_trial_fsck_seconds (r), 6), "quicker",
                    str (fd_trial_quicker (r)));
}

/* --repair-cut: where the power went and what came of it, or null. */
static json_t *
record_cut (const struct trial_spec *s, const struct trial_result *r)
{
  json_t *o;

  if (!s->repair_cut || !r->cut_outcome)
    return json_null ();
  o = json_pack ("{s:o, s:b, s:o}", "after", u64 (s->repair_cut), "cut", r->cut,
                 "outcome", str (r->cut_outcome));
  if (o && s->cut_reference_intact >= 0 && r->audited &&
      set (o, "lost_vs_uninterrupted",
           json_integer (s->cut_reference_intact -
                         (int64_t)r->audit.count[FD_AUDIT_INTACT]))) {
    json_decref (o);
    return NULL;
  }
  return o;
}

/* The plugin's final stats object, or NULL with err.  Its integers above
 * INT64_MAX (a seed) come as value - 2^64, as the record's own are.
 */
static json_t *
record_disk (const struct trial_result *r, struct fm_err *err)
{
  struct fd_json *j =
      fd_json_parse (r->stats, "the record: the plugin's stats", err);
  json_t *o;

  if (j == NULL)
    return NULL;
  o = json_incref (fd_json_root (j));
  fd_json_free (j);
  return o;
}

/* A checker's verdict on the target's damage, or null. */
static json_t *
record_iron (const struct trial_result *r)
{
  if (!r->detection)
    return json_null ();
  return json_pack ("{s:o, s:o}", "detection", str (r->detection), "recovery",
                    str (r->recovery));
}

/* The mount after the repair, or null when none was tried. */
static json_t *
record_mount (const struct trial_result *r)
{
  if (!r->mount)
    return json_null ();
  return json_pack ("{s:o, s:o}", "outcome", str (r->mount), "reason",
                    str (r->mount_reason));
}

/* Everything between the inputs and the disk, in the record's order. */
static int
record_rest (const struct trial_spec *s, const struct trial_result *r,
             json_t *o)
{
  if (set (o, "files", u64 (r->m.n)) || set (o, "bytes", u64 (r->m.bytes)) ||
      set (o, "phases", record_phases (r)) ||
      set (o, "audit", record_audit (r)) ||
      set (o, "durability", record_durability (r)) ||
      set (o, "crash_points", record_points (s, r)) ||
      set (o, "iron", record_iron (r)) ||
      set (o, "damaged", record_damaged (r)) ||
      set (o, "restore", record_restore (s, r)) ||
      set (o, "repair_cut", record_cut (s, r)) ||
      set (o, "mount", record_mount (r)) ||
      set (o, "version", str (FUTUREDISK_VERSION)) ||
      set (o, "model_version", json_integer (FM_MODEL_VERSION)))
    return -1;
  return set (o, "write_probe",
              r->audited ? json_boolean (r->probe_ok) : json_null ()) ||
         set (o, "error", str (r->error));
}

int
fd_trial_record (const struct trial_spec *s, const struct trial_result *r,
                 FILE *fp, struct fm_err *err)
{
  json_t *disk = json_null (), *o;
  int ret = -1;

  if (r->stats[0] && (disk = record_disk (r, err)) == NULL)
    return -1;
  if ((o = record_inputs (s, r)) == NULL || record_rest (s, r, o)) {
    json_decref (disk);
    fm_fail (err, "the record: out of memory");
  } else if (set (o, "disk", disk))
    fm_fail (err, "the record: out of memory");
  else if (json_dumpf (o, fp, RECORD_DUMP) == -1 || putc ('\n', fp) == EOF)
    fm_fail (err, "the record: %s", fd_strerror (errno));
  else
    ret = 0;
  json_decref (o);
  return ret;
}
