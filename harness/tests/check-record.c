/* futuredisk — harness: unit test of a trial's record, byte for byte.
 *
 * A spec and a result filled with every part a record has (phases with
 * passes, the audit, broken promises, crash points, IRON, damaged files,
 * fsck or restore, a repair cut, the mount, the plugin's stats): the
 * JSON line must be exactly the one below, which the record printed
 * before the trial engine was split (the same data through the old
 * struct trial), so a change of the record's bytes is a decision, not
 * an accident.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static const char expected[] =
#include "check-record.expected"
    ;

START_TEST (test_bytes)
{
  static struct trial_spec s;
  static struct trial_result r;
  char *text = NULL;
  size_t len = 0, i;
  FILE *fp = open_memstream (&text, &len);

  ck_assert_ptr_nonnull (fp);
  fill (&s, &r);
  fd_trial_record (&s, &r, fp);
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

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"bytes", test_bytes},
  };

  return fd_check_main ("record", cases, sizeof cases / sizeof cases[0]);
}
