/* futuredisk — harness: unit tests for campaign files: the expansion's
 * order and content, continuation lines, every error naming file, line
 * and key, shard specs, and the shipped campaigns.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "campaign.h"
#include "check-main.h"
#include "faultmodels/units.h"
#include "fsadapter.h"
#include "trial.h"

/* Write text to a fresh file; its path in path. */
static void
write_ini (const char *text, char *path, size_t len)
{
  FILE *fp;
  int fd;

  snprintf (path, len, "/tmp/check-campaign.XXXXXX");
  fd = mkstemp (path);
  ck_assert_int_ge (fd, 0);
  fp = fdopen (fd, "w");
  ck_assert_ptr_nonnull (fp);
  fputs (text, fp);
  fclose (fp);
}

/* Trial i's inputs as its run would have them (one at a time). */
static const struct trial_spec *
spec_of (const struct fd_campaign *c, size_t i)
{
  static struct trial_spec s;
  struct fm_err err;

  ck_assert_msg (fd_campaign_spec (fd_campaign_trial (c, i), &s, &err) == 0,
                 "%s", err.msg);
  return &s;
}

static struct fd_campaign *
load_text (const char *text, struct fm_err *err)
{
  char path[64];
  struct fd_campaign *c;

  write_ini (text, path, sizeof path);
  c = fd_campaign_load (path, err);
  unlink (path);
  return c;
}

START_TEST (test_expand)
{
  struct fm_err err;
  struct fd_campaign *c = load_text ("# a comment\n"
                                     "[campaign]\n"
                                     "name = nightly-1\n"
                                     "seeds = 1-2\n"
                                     "size = 512M\n"
                                     "\n"
                                     "[matrix a]\n"
                                     "fs = ext4 xfs\n"
                                     "fill = 10 20\n"
                                     "target = none inode:1:lse\n"
                                     "faults = consumer,age=2y\n"
                                     "[matrix b]\n"
                                     "fs = btrfs\n"
                                     "profile = roadmap-2013\n"
                                     "size = full\n"
                                     "crash = no yes\n"
                                     "repetitions = 2\n"
                                     "seeds = 7\n",
                                     &err);
  const struct fd_campaign_trial *t;

  ck_assert_msg (c != NULL, "%s", err.msg);
  ck_assert_str_eq (fd_campaign_name (c), "nightly-1");
  /* a: 2 fs x 2 fills x 2 targets x 2 seeds; b: 2 crash x 2 reps. */
  ck_assert_uint_eq (fd_campaign_ntrials (c), 16 + 4);
  t = fd_campaign_trial (c, 0);
  ck_assert_str_eq (t->matrix, "a");
  ck_assert_str_eq (spec_of (c, 0)->fs->name, "ext4");
  ck_assert_str_eq (spec_of (c, 0)->profile, "roadmap-2006");
  ck_assert_str_eq (spec_of (c, 0)->size, "512M");
  ck_assert_str_eq (spec_of (c, 0)->faults_spec, "consumer,age=2y");
  ck_assert_ptr_null (spec_of (c, 0)->target);
  ck_assert_str_eq (spec_of (c, 0)->time_mode, "virtual");
  ck_assert (spec_of (c, 0)->fill == 10 && t->seed == 1 && t->rep == 0 &&
             !spec_of (c, 0)->crash);
  ck_assert_uint_eq (fd_campaign_trial (c, 1)->seed, 2);
  ck_assert_str_eq (spec_of (c, 2)->target, "inode:1:lse");
  ck_assert (spec_of (c, 4)->fill == 20);
  ck_assert_str_eq (spec_of (c, 8)->fs->name, "xfs");
  t = fd_campaign_trial (c, 16);
  ck_assert_str_eq (t->matrix, "b");
  ck_assert_str_eq (spec_of (c, 16)->size, "full");
  ck_assert_ptr_null (spec_of (c, 16)->faults_spec);
  ck_assert (t->seed == 7 && t->rep == 0 && !spec_of (c, 16)->crash);
  ck_assert (fd_campaign_trial (c, 17)->rep == 1);
  ck_assert (spec_of (c, 19)->crash);
  ck_assert_ptr_null (fd_campaign_trial (c, 20));
  fd_campaign_free (c);

  /* A target type a file system lacks is skipped for that one. */
  c = load_text ("[campaign]\nname = x\n[matrix m]\nfs = ext4 xfs btrfs\n"
                 "target = gdt agf\n",
                 &err);
  ck_assert_msg (c != NULL, "%s", err.msg);
  ck_assert_uint_eq (fd_campaign_ntrials (c), 2);
  ck_assert_str_eq (spec_of (c, 0)->fs->name, "ext4");
  ck_assert_str_eq (spec_of (c, 1)->target, "agf");
  ck_assert (!spec_of (c, 0)->escalate);
  fd_campaign_free (c);

  /* The escalation crosses like any key: with and without it. */
  c = load_text ("[campaign]\nname = x\nescalate = yes\n[matrix m]\n"
                 "fs = ext4\ntarget = superblock\n[matrix n]\nfs = xfs\n"
                 "escalate = no yes\n",
                 &err);
  ck_assert_msg (c != NULL, "%s", err.msg);
  ck_assert_uint_eq (fd_campaign_ntrials (c), 3);
  ck_assert (spec_of (c, 0)->escalate);
  ck_assert (!spec_of (c, 1)->escalate);
  ck_assert (spec_of (c, 2)->escalate);
  fd_campaign_free (c);
}
END_TEST

START_TEST (test_escalate_value)
{
  struct fm_err err;

  ck_assert_ptr_null (load_text ("[campaign]\nname = x\n[matrix m]\n"
                                 "fs = ext4\nescalate = 1\n",
                                 &err));
  ck_assert_msg (strstr (err.msg, ":5: [matrix m] escalate '1': no or yes"),
                 "%s", err.msg);
}
END_TEST

/* Keys that sweep where the power goes: repair-cut and crash-points. */
START_TEST (test_sweeps)
{
  struct fm_err err;
  struct fd_campaign *c;

  /* A repair-cut list sweeps, 0 the uncut repair beside the cuts. */
  c = load_text ("[campaign]\nname = x\n[matrix m]\nfs = ext4\n"
                 "target = gdt:1:rot\nrepair-cut = 0 1 8\n",
                 &err);
  ck_assert_msg (c != NULL, "%s", err.msg);
  ck_assert_uint_eq (fd_campaign_ntrials (c), 3);
  ck_assert_uint_eq (spec_of (c, 0)->repair_cut, 0);
  ck_assert_uint_eq (spec_of (c, 2)->repair_cut, 8);
  fd_campaign_free (c);

  /* Crash points are states of a crash: the trial is one. */
  c = load_text ("[campaign]\nname = x\n[matrix m]\nfs = ext4\n"
                 "crash-points = 0 all 5\n",
                 &err);
  ck_assert_msg (c != NULL, "%s", err.msg);
  ck_assert_uint_eq (fd_campaign_ntrials (c), 3);
  ck_assert (!spec_of (c, 0)->crash);
  ck_assert_uint_eq (spec_of (c, 1)->crash_points, UINT64_MAX);
  ck_assert (spec_of (c, 2)->crash && spec_of (c, 2)->crash_points == 5);
  fd_campaign_free (c);
}
END_TEST

/* A campaign's host key crosses as any other and reaches the trial's
 * inputs; without it the profile's host stands (roadmap-2006: none).
 */
START_TEST (test_host)
{
  struct fm_err err;
  struct fd_campaign *c;

  c = load_text ("[campaign]\nname = x\nthink = cpu\n[matrix m]\nfs = ext4\n"
                 "host = native server-2006\n[matrix n]\nfs = ext4\n",
                 &err);
  ck_assert_msg (c != NULL, "%s", err.msg);
  ck_assert_uint_eq (fd_campaign_ntrials (c), 3);
  ck_assert_str_eq (spec_of (c, 0)->host, "native");
  ck_assert_str_eq (spec_of (c, 1)->host, "server-2006");
  ck_assert_str_eq (spec_of (c, 1)->think, "cpu");
  ck_assert_ptr_null (spec_of (c, 2)->host);
  ck_assert_ptr_null (fd_spec_host (spec_of (c, 2)));
  ck_assert_str_eq (fd_campaign_trial (c, 1)->value[FD_KEY_HOST],
                    "server-2006");
  fd_campaign_free (c);
  ck_assert_ptr_null (load_text ("[campaign]\nname = x\n[matrix m]\n"
                                 "fs = ext4\nhost = cray-1\n",
                                 &err));
  ck_assert_msg (strstr (err.msg, ":5: [matrix m] host: unknown host "
                                  "'cray-1'"),
                 "%s", err.msg);
}
END_TEST

/* attach crosses too; auto is its word for none, so an unset key and
 * auto both leave the trial to pick; a bad way is named with its line.
 */
START_TEST (test_attach)
{
  struct fm_err err;
  struct fd_campaign *c;

  c = load_text ("[campaign]\nname = x\nthink = zero\n[matrix m]\n"
                 "fs = ext4\nattach = serial loop auto\n[matrix n]\n"
                 "fs = ext4\n",
                 &err);
  ck_assert_msg (c != NULL, "%s", err.msg);
  ck_assert_uint_eq (fd_campaign_ntrials (c), 4);
  ck_assert_str_eq (spec_of (c, 0)->via, "serial");
  ck_assert_str_eq (spec_of (c, 1)->via, "loop");
  ck_assert_ptr_null (spec_of (c, 2)->via);
  ck_assert_ptr_null (fd_campaign_trial (c, 2)->value[FD_KEY_ATTACH]);
  ck_assert_ptr_null (spec_of (c, 3)->via);
  fd_campaign_free (c);
  ck_assert_ptr_null (load_text ("[campaign]\nname = x\n[matrix m]\n"
                                 "fs = ext4\nattach = usb\n",
                                 &err));
  ck_assert_msg (strstr (err.msg, ":5: [matrix m] attach usb: not one of "
                                  "auto, nbd, loop, serial"),
                 "%s", err.msg);
}
END_TEST

START_TEST (test_continuation)
{
  struct fm_err err;
  struct fd_campaign *c =
      load_text ("[campaign]\nname = x\ndescription = two\n  lines\n"
                 "[matrix m]\nfs = ext4\ntarget = data:1\n    inode:1\n"
                 "\tdir\nfaults = none\nfaults = harsh\n",
                 &err);

  ck_assert_msg (c != NULL, "%s", err.msg);
  ck_assert_uint_eq (fd_campaign_ntrials (c), 3 * 2);
  ck_assert_str_eq (spec_of (c, 0)->faults_spec, "none");
  ck_assert_str_eq (spec_of (c, 0)->target, "data:1");
  ck_assert_str_eq (spec_of (c, 1)->target, "inode:1");
  ck_assert_str_eq (spec_of (c, 3)->faults_spec, "harsh");
  fd_campaign_free (c);
}
END_TEST

/* Comments as profile files have them (fm_value): '#' after a value,
 * after a section's ']' and after a continued list; a quoted value keeps
 * its '#'.
 */
START_TEST (test_comments)
{
  static const struct {
    const char *text, *msg;
  } bad[] = {
      {"[campaign]\nname = x\n[matrix m]\nfs = \"ext4\n", ":4: 'fs': "
                                                          "unterminated quote"},
      {"[campaign]\nname = x\n[matrix m]\nfs = \"ext4\" xfs\n",
       ":4: 'fs': text after the closing quote"},
      {"[campaign]\nname = x\n[matrix m]\nfs = ext4\n  \"xfs\n",
       ":5: 'fs': unterminated quote"},
      {"[campaign]\nname = x\n[matrix m]\nfs = # none\n",
       ":4: 'fs' has no value"},
      {"[campaign]\nname = x\n[matrix m] fs\n", ":3: bad section"},
      /* ';' starts a comment line only, as '#' does in profile files. */
      {"[campaign]\nname = x\n[matrix m]\nfs = ext4\nseeds = 1 ; 2\n",
       ":5: [matrix m] seeds"},
  };
  struct fm_err err;
  struct fd_campaign *c;
  char v[] = "  \"a # b\"  # c", w[] = "a b # c # d";
  const char *why;
  size_t i;

  c = load_text ("[campaign]   # the defaults\n"
                 "name = x     # a comment\n"
                 "description = \"#1\"  # quoted\n"
                 "seeds = 1-2  # two\n"
                 "[matrix m]# no space before it\n"
                 "fs = ext4 xfs # two of them\n"
                 "target = data:1   # continued\n"
                 "    inode:1       # and again\n"
                 "    # a comment line inside the list\n"
                 "faults = harsh    # one spec\n",
                 &err);
  ck_assert_msg (c != NULL, "%s", err.msg);
  ck_assert_str_eq (fd_campaign_name (c), "x");
  ck_assert_uint_eq (fd_campaign_ntrials (c), 2 * 2 * 2);
  ck_assert_str_eq (spec_of (c, 0)->fs->name, "ext4");
  ck_assert_str_eq (spec_of (c, 0)->target, "data:1");
  ck_assert_str_eq (spec_of (c, 2)->target, "inode:1");
  ck_assert_str_eq (spec_of (c, 0)->faults_spec, "harsh");
  fd_campaign_free (c);
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ck_assert_msg (load_text (bad[i].text, &err) == NULL, "case %zu loaded", i);
    ck_assert_msg (strstr (err.msg, bad[i].msg) != NULL,
                   "case %zu: '%s' lacks '%s'", i, err.msg, bad[i].msg);
  }
  /* The one rule, as profile files read it. */
  ck_assert_str_eq (fm_value (fm_trim (v), &why), "a # b");
  ck_assert_str_eq (fm_value (w, &why), "a b");
}
END_TEST

START_TEST (test_errors)
{
  static const struct {
    const char *text, *msg;
  } bad[] = {
      {"", "no [campaign] section"},
      {"fs = ext4\n", ":1: expected [campaign] first"},
      {"[campaign]\nfs = ext4\n", "[campaign] has no name"},
      {"[campaign]\nname = a b\n", ":2: name 'a b'"},
      {"[campaign]\nname = x\n", "no [matrix NAME] section"},
      {"[campaign]\nname = x\n[matrix]\n", ":3: unknown section '[matrix]'"},
      {"[campaign]\nname = x\n[matrix m\n", ":3: bad section"},
      {"[campaign]\nname = x\n[nightly]\n", "unknown section '[nightly]'"},
      {"[campaign]\nname = x\n[matrix m]\nfs = ext4\n[campaign]\n",
       ":5: a second [campaign] section"},
      {"[campaign]\nname = x\n[matrix m]\nfs ext4\n", ":4: expected KEY"},
      {"[campaign]\nname = x\n[matrix m]\nfss = ext4\n",
       ":4: unknown key 'fss'"},
      {"[campaign]\nname = x\n[matrix m]\nfs = ext4\nfs = xfs\n",
       ":5: 'fs' given twice (first on line 4)"},
      {"[campaign]\nname = x\n[matrix m]\nfs =\n", ":4: 'fs' has no value"},
      {"[campaign]\nname = x\n[matrix m]\nfill = 5\n",
       ":3: [matrix m] has no 'fs'"},
      {"[campaign]\nname = x\n[matrix m]\nfs = ext5\n",
       ":4: [matrix m] unknown file system 'ext5'"},
      {"[campaign]\nname = x\nfill = 120\n[matrix m]\nfs = ext4\n",
       ":3: [matrix m] fill: 120 is out of range"},
      {"[campaign]\nname = x\n[matrix m]\nfs = xfs\nsize = 100M\n",
       ":5: [matrix m] size 100M: xfs needs a disk of at least 300 MiB"},
      {"[campaign]\nname = x\n[matrix m]\nfs = ext4\nsize = big\n",
       ":5: [matrix m] size"},
      {"[campaign]\nname = x\n[matrix m]\nfs = ext4\nprofile = floppy\n",
       "unknown profile 'floppy'"},
      {"[campaign]\nname = x\n[matrix m]\nfs = ext4\ntarget = data:1:melt\n",
       ":5: [matrix m] target kind 'melt' is not ure, lse, rot"},
      {"[campaign]\nname = x\n[matrix m]\nfs = ext4\ntarget = data:0\n",
       "target count"},
      {"[campaign]\nname = x\n[matrix m]\nfs = ext4\ntarget = agf\n",
       "target 'agf': no file system of the matrix has that type"},
      {"[campaign]\nname = x\n[matrix m]\nfs = ext4\ntarget = data+agf\n",
       "target 'data+agf': no file system of the matrix has that type"},
      {"[campaign]\nname = x\n[matrix m]\nfs = ext4\ntarget = data:1+\n",
       "target 'data:1+': TYPE[:N[:KIND]][+...]"},
      {"[campaign]\nname = x\n[matrix m]\nfs = ext4\n"
       "target = data+data+data+data+data\n",
       "at most 4 parts joined by '+'"},
      {"[campaign]\nname = x\n[matrix m]\nfs = ext4\n"
       "target = data:1:stripe-ure=1K\n",
       "target stripe '1K': a multiple of 4K"},
      {"[campaign]\nname = x\n[matrix m]\nfs = ext4\nseeds = one\n",
       ":5: [matrix m] seeds"},
      {"[campaign]\nname = x\n[matrix m]\nfs = ext4\ncrash = maybe\n",
       "crash 'maybe': no or yes"},
      {"[campaign]\nname = x\n[matrix m]\nfs = ext4\nrepair-cut = -1\n",
       ":5: [matrix m] repair-cut"},
      {"[campaign]\nname = x\n[matrix m]\nfs = ext4\ncrash-points = some\n",
       ":5: [matrix m] crash-points"},
      {"[campaign]\nname = x\n[matrix m]\nfs = ext4\nfaults = bogus=1\n",
       ":5: [matrix m] unknown fault key 'bogus'"},
      {"[campaign]\nname = x\n[matrix m]\nfs = ext4\nfaults = harsh\n  ,x=1\n",
       ":6: one fault spec per 'faults' line"},
      {"[campaign]\nname = x\n[matrix m]\nfs = ext4\nrepetitions = 0\n",
       "repetitions"},
      {"[campaign]\nname = x\n[matrix m]\nfs = ext4\ntime = fast\n",
       "] time: 'fast'"},
      {"[campaign]\nname = x\n[matrix m]\nfs = ext4\nmeta-only = -3\n",
       "meta-only"},
  };
  size_t i;

  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    struct fm_err err;
    struct fd_campaign *c = load_text (bad[i].text, &err);
    ck_assert_msg (c == NULL, "case %zu loaded", i);
    ck_assert_msg (strstr (err.msg, bad[i].msg) != NULL,
                   "case %zu: '%s' lacks '%s'", i, err.msg, bad[i].msg);
    ck_assert_msg (strstr (err.msg, "/tmp/check-campaign.") == err.msg,
                   "case %zu: '%s' does not name the file", i, err.msg);
  }
}
END_TEST

START_TEST (test_shards)
{
  static const char *const bad[] = {"",    "1",   "2/2",  "-1/2",
                                    "0/0", "a/b", "0/2x", "1/2/3"};
  struct fm_err err;
  uint64_t i, n;
  size_t k;

  ck_assert_int_eq (fd_campaign_parse_shard ("0/1", &i, &n, &err), 0);
  ck_assert (i == 0 && n == 1);
  ck_assert_int_eq (fd_campaign_parse_shard ("3/4", &i, &n, &err), 0);
  ck_assert (i == 3 && n == 4);
  for (k = 0; k < sizeof bad / sizeof bad[0]; k++)
    ck_assert_msg (fd_campaign_parse_shard (bad[k], &i, &n, &err) == -1,
                   "'%s' accepted", bad[k]);
}
END_TEST

/* The example in campaigns/README.md, as it stands there. */
static struct fd_campaign *
load_readme_example (struct fm_err *err)
{
  static char text[8192];
  char path[512], *start, *end;
  size_t len;
  FILE *fp;

  snprintf (path, sizeof path, "%s/README.md", CAMPAIGN_DIR);
  fp = fopen (path, "r");
  ck_assert_ptr_nonnull (fp);
  len = fread (text, 1, sizeof text - 1, fp);
  fclose (fp);
  text[len] = '\0';
  start = strstr (text, "```ini\n");
  ck_assert_ptr_nonnull (start);
  start += strlen ("```ini\n");
  end = strstr (start, "```");
  ck_assert_ptr_nonnull (end);
  *end = '\0';
  return load_text (start, err);
}

START_TEST (test_shipped)
{
  static const char *const files[] = {"demo.ini", "nightly.ini"};
  struct fd_campaign *c;
  struct fm_err err;
  size_t k;

  for (k = 0; k < 2; k++) {
    char path[512];
    snprintf (path, sizeof path, "%s/%s", CAMPAIGN_DIR, files[k]);
    c = fd_campaign_load (path, &err);
    ck_assert_msg (c != NULL, "%s", err.msg);
    ck_assert_uint_gt (fd_campaign_ntrials (c), 10);
    fd_campaign_free (c);
  }
  /* The README says it loads and has 16 trials. */
  c = load_readme_example (&err);
  ck_assert_msg (c != NULL, "README.md's example: %s", err.msg);
  ck_assert_uint_eq (fd_campaign_ntrials (c), 16);
  fd_campaign_free (c);
}
END_TEST

/* Mangled campaign files (seeded byte flips, cuts, spliced lines) either
 * load or fail with a message: never a crash, a hang or an out-of-bounds
 * access (the sanitizer build runs this too).
 */
START_TEST (test_fuzz)
{
  static const char seed_text[] =
      "[campaign]\nname = f\nseeds = 1-3\nsize = 512M\n"
      "description = x\n  y\n"
      "[matrix a]\nfs = ext4 xfs\nfill = 10 20\n"
      "target = none inode:1:lse superblock\n  data:1:rot\n"
      "faults = consumer,age=2y\nfaults = none\n"
      "[matrix b]\nfs = btrfs\nsize = full\ncrash = no yes\n"
      "think = zero\ntime = scale:0.5\nrepetitions = 2\nrepair-cut = 0 5\n";
  static const char alphabet[] = "[]=#;: \t\n-,.0123456789abcdefxyz";
  uint64_t state = 0x9e3779b97f4a7c15ULL;
  char text[2048], path[64];
  int round, loaded = 0;

  for (round = 0; round < 3000; round++) {
    size_t len = sizeof seed_text - 1, k, edits;
    memcpy (text, seed_text, len + 1);
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    edits = 1 + (state >> 33) % 6;
    for (k = 0; k < edits; k++) {
      size_t at;
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      at = (state >> 20) % len;
      switch ((state >> 8) % 4) {
        case 0: /* replace a byte */
          text[at] = alphabet[(state >> 40) % (sizeof alphabet - 1)];
          break;
        case 1: /* cut the file short */
          len = at;
          text[len] = '\0';
          break;
        case 2: /* delete a byte */
          memmove (text + at, text + at + 1, len - at);
          len--;
          break;
        default: /* repeat a stretch */
          if (len + 40 < sizeof text) {
            memmove (text + at + 40, text + at, len - at + 1);
            memmove (text + at, text + (at > 40 ? at - 40 : 0), 40);
            len += 40;
          }
      }
      if (len == 0)
        break;
    }
    {
      struct fm_err err;
      struct fd_campaign *c;
      write_ini (text, path, sizeof path);
      err.msg[0] = '\0';
      c = fd_campaign_load (path, &err);
      unlink (path);
      if (c) {
        size_t i;
        loaded++;
        for (i = 0; i < fd_campaign_ntrials (c); i++)
          ck_assert_ptr_nonnull (fd_campaign_trial (c, i)->value[FD_KEY_FS]);
        fd_campaign_free (c);
      } else
        ck_assert_msg (err.msg[0] != '\0', "round %d: no message", round);
    }
  }
  /* Some mutations leave a valid file: the loader was really exercised. */
  ck_assert_int_gt (loaded, 10);
  ck_assert_int_lt (loaded, 3000);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"expand", test_expand},
      {"sweeps", test_sweeps},
      {"host", test_host},
      {"attach", test_attach},
      {"continuation", test_continuation},
      {"comments", test_comments},
      {"errors", test_errors},
      {"escalate", test_escalate_value},
      {"shards", test_shards},
      {"shipped", test_shipped},
      {"fuzz", test_fuzz},
  };

  return fd_check_main ("campaign", cases, sizeof cases / sizeof cases[0]);
}
