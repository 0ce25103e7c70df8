/* futuredisk — harness: unit test of a trial's record, byte for byte.
 *
 * A spec and a result filled with every part a record has (phases with
 * passes, the audit, broken promises, crash points, IRON, damaged files,
 * fsck or restore, a repair cut, the mount, the plugin's stats): the
 * JSON line must be exactly the one below, which the record printed
 * before the trial engine was split (the same data through the old
 * struct trial), so a change of the record's bytes is a decision, not
 * an accident.  One such decision: since jansson writes the record, a
 * real has no trailing zeros (1.5, not printf's 1.500000; 2.0, not
 * 2.000), the same numbers (SCHEMA.md).  Another: the record names the
 * drive model's version (model_version, faultmodels/version.h) after
 * futuredisk's.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faultmodels/version.h"
#include "check-main.h"
#include "trial.h"

#define S(x) s->x
#define R(x) r->x

static struct fd_violation violations[2] = {
    {"fsync", "missing", "d1/f2"},
    {"rename", "neither", "d1/\"q\"\tf3"},
};
static struct fd_crash_point points[1];
static struct fd_damaged damaged[1];

/* FILL: the record's data (the lines up to END FILL are shared with the
 * program that printed the expected record from the old code).
 */
static void
fill_spec (struct trial_spec *s)
{
  static struct fm_err err;

  S (fs) = fd_fs_find ("ext4", &err);
  S (profile) = "roadmap-2006";
  S (size) = "512M";
  S (seed) = 7;
  S (fill) = 12.5;
  S (populate.meta_only) = true;
  S (populate.files) = 300;
  S (crash) = true;
  S (time_mode) = "scale:2";
  S (campaign) = "demo";
  S (run_id) = "night-1";
  S (rep) = 2;
  S (faults_spec) = "harsh,age=5y";
  S (target) = "inode:1:lost-write";
  S (restore_rate) = 125e6;
  S (repair_cut) = 3;
  S (cut_reference_intact) = 290;
  S (crash_points) = 5;
}

/* Two phases, a checker's with its passes. */
static void
fill_phases (struct trial_result *r)
{
  R (ph[0]) = (struct phase){.name = "populate",
                             .virtual_s = 1.5,
                             .wall_s = 0.25,
                             .cpu_s = 0.125,
                             .reads = 4,
                             .writes = 362,
                             .bytes_read = 20480,
                             .bytes_written = 105357312};
  R (ph[1]) = (struct phase){.name = "check",
                             .virtual_s = 0.1904681,
                             .wall_s = 2,
                             .cpu_s = 1.0005,
                             .reads = 2354,
                             .read_errors = 3,
                             .status = 4,
                             .signal = 0,
                             .outcome = "UNFIXED",
                             .charged_s = 1.25,
                             .npasses = 2,
                             .nvpasses = 2};
  R (ph[1].passes[0]) = (struct fd_pass){"pass 1", 0.015};
  R (ph[1].passes[1]) = (struct fd_pass){"pass 1b", 2.5};
  R (ph[1].vpasses[0]) = (struct fd_pass){"pass 1", 0.0210625};
  R (ph[1].vpasses[1]) = (struct fd_pass){"pass 1b", 3};
  R (nph) = 2;
}

static void
fill (struct trial_spec *s, struct trial_result *r)
{
  fill_spec (s);
  fill_phases (r);
  R (attached) = "loop";
  R (cloned) = true;
  snprintf (R (targets), sizeof R (targets), "lost-write inode d1/f2 4096");
  R (m.n) = 301;
  R (m.bytes) = 123456789;
  R (audited) = true;
  R (probe_ok) = false;
  R (audit.count[0]) = 290;
  R (audit.count[3]) = 11;
  R (audit.durability[0]) = 280;
  R (audit.durability[1]) = 2;
  R (audit.zeroed_blocks) = 5;
  R (audit.garbled_blocks) = 1;
  R (violations) = violations;
  R (nviolations) = 2;
  points[0] = (struct fd_crash_point){.flush = 9,
                                      .promises = 4,
                                      .cache_writes = 3,
                                      .check = "CLEAN",
                                      .repair = "FIXED",
                                      .recheck = "CLEAN",
                                      .mount = "MOUNTED",
                                      .audited = true,
                                      .nviolations = 1};
  points[0].durability[1] = 1;
  points[0].violations[0] = violations[0];
  snprintf (points[0].error, sizeof points[0].error, "a \\ b");
  R (points) = points;
  R (npoints) = 1;
  R (log_flushes) = 40;
  R (log_promises) = 12;
  R (points_wall_s) = 7.25;
  R (detection) = "checksum";
  R (recovery) = "repair";
  snprintf (damaged[0].cls, sizeof damaged[0].cls, "corrupted");
  snprintf (damaged[0].path, sizeof damaged[0].path, "d1/f2");
  snprintf (damaged[0].cause, sizeof damaged[0].cause, "lost-write");
  R (damaged) = damaged;
  R (ndamaged) = 1;
  R (restore_s) = 0.98765432;
  R (cut) = true;
  R (cut_outcome) = "needs-another-repair";
  R (mount) = "UNMOUNTABLE";
  snprintf (R (mount_reason), sizeof R (mount_reason), "bad superblock");
  snprintf (R (error), sizeof R (error), "none\n");
  snprintf (R (stats), sizeof R (stats), "{\"reads\": 1, \"x\": [2, 3]}");
}
/* END FILL */

/* The drive model's version as the record writes it. */
#define STRINGIFY(x)  #x
#define DIGITS(x)     STRINGIFY (x)
#define MODEL_VERSION DIGITS (FM_MODEL_VERSION)

static const char expected[] =
#include "check-record.expected"
    ;

START_TEST (test_bytes)
{
  static struct trial_spec s;
  static struct trial_result r;
  struct fm_err err;
  char *text = NULL;
  size_t len = 0, i;
  FILE *fp = open_memstream (&text, &len);

  ck_assert_ptr_nonnull (fp);
  fill (&s, &r);
  ck_assert_int_eq (fd_trial_record (&s, &r, fp, &err), 0);
  ck_assert_int_eq (fclose (fp), 0);
  /* The first difference, with a little of each side: the whole record
   * is too long for one of Check's messages.
   */
  for (i = 0; text[i] && text[i] == expected[i]; i++)
    ;
  ck_assert_msg (text[i] == '\0' && expected[i] == '\0',
                 "differs at byte %zu: got \"%.60s\", want \"%.60s\"", i,
                 text + i, expected + i);
  free (text);
}
END_TEST

/* The record of s and r read back; NULL when it cannot be made, with
 * err.
 */
static json_t *
read_back (const struct trial_spec *s, const struct trial_result *r,
           struct fm_err *err)
{
  char *text = NULL;
  size_t len = 0;
  FILE *fp = open_memstream (&text, &len);
  json_error_t jerr;
  json_t *j = NULL;
  int rc;

  ck_assert_ptr_nonnull (fp);
  rc = fd_trial_record (s, r, fp, err);
  ck_assert_int_eq (fclose (fp), 0);
  if (rc == 0) {
    ck_assert_msg (len > 0 && text[len - 1] == '\n', "one line");
    j = json_loads (text, 0, &jerr);
    ck_assert_msg (j != NULL, "not JSON: %s", jerr.text);
  } else
    ck_assert_uint_eq (len, 0);
  free (text);
  return j;
}

/* A seed above INT64_MAX, the record's and the plugin's: value - 2^64,
 * as the database stores it, and back to the seed as a uint64.
 */
START_TEST (test_seed_max)
{
  static struct trial_spec s;
  static struct trial_result r;
  struct fm_err err;
  json_t *j;

  fill (&s, &r);
  s.seed = UINT64_MAX;
  snprintf (r.stats, sizeof r.stats,
            "{\"seed\": 18446744073709551615, \"size\": 9223372036854775807,"
            " \"x\": \"18446744073709551615\", \"r\": [-5, 1.5e3]}");
  j = read_back (&s, &r, &err);
  ck_assert_int_eq (json_integer_value (json_object_get (j, "seed")), -1);
  ck_assert_uint_eq ((uint64_t)json_integer_value (json_object_get (j, "seed")),
                     UINT64_MAX);
  ck_assert_int_eq (json_unpack (j, "{s:{s:I, s:I, s:s, s:[I, f]}}", "disk",
                                 "seed", &(json_int_t){0}, "size",
                                 &(json_int_t){0}, "x", &(const char *){0}, "r",
                                 &(json_int_t){0}, &(double){0}),
                    0);
  ck_assert_int_eq (json_integer_value (
                        json_object_get (json_object_get (j, "disk"), "seed")),
                    -1);
  ck_assert_int_eq (json_integer_value (
                        json_object_get (json_object_get (j, "disk"), "size")),
                    INT64_MAX);
  ck_assert_str_eq (
      json_string_value (json_object_get (json_object_get (j, "disk"), "x")),
      "18446744073709551615");
  json_decref (j);
}
END_TEST

/* Names that are not UTF-8 (a file's name is any bytes): each stray
 * byte is U+FFFD, a whole character stays as it is.
 */
START_TEST (test_not_utf8)
{
  static struct trial_spec s;
  static struct trial_result r;
  struct fm_err err;
  const char *path;
  double pass;
  json_t *j, *first;

  fill (&s, &r);
  snprintf (damaged[0].path, sizeof damaged[0].path,
            "d1/\xff\xff-\xc3\xa9-\xe2\x82-\xed\xa0\x80-\xc0\xaf");
  snprintf (r.ph[1].passes[0].name, sizeof r.ph[1].passes[0].name, "pass \xfe");
  j = read_back (&s, &r, &err);
  ck_assert_int_eq (json_unpack (j, "{s:[{s:s}], s:[o, {s:{s:f}}]}", "damaged",
                                 "path", &path, "phases", &first, "passes",
                                 "pass \xef\xbf\xbd", &pass),
                    0);
  ck_assert_str_eq (path, "d1/\xef\xbf\xbd\xef\xbf\xbd-\xc3\xa9-"
                          "\xef\xbf\xbd\xef\xbf\xbd-"
                          "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd-"
                          "\xef\xbf\xbd\xef\xbf\xbd");
  ck_assert_double_eq (pass, 0.01);
  json_decref (j);
}
END_TEST

/* Stats that are not JSON: no record, and a message that says why. */
START_TEST (test_bad_stats)
{
  static struct trial_spec s;
  static struct trial_result r;
  struct fm_err err;

  fill (&s, &r);
  snprintf (r.stats, sizeof r.stats, "{\"reads\": 1, \"x\": [2,");
  ck_assert_ptr_null (read_back (&s, &r, &err));
  ck_assert_msg (strstr (err.msg, "the plugin's stats is not JSON") != NULL,
                 "%s", err.msg);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"bytes", test_bytes},
      {"seed-max", test_seed_max},
      {"not-utf8", test_not_utf8},
      {"bad-stats", test_bad_stats},
  };

  return fd_check_main ("record", cases, sizeof cases / sizeof cases[0]);
}
