/* futuredisk — harness: unit tests for reading the plugin's JSON (control
 * replies, the stats file, fault log lines): what JSON allows must read
 * the same as the plugin's own layout, and what is wrong must be an error
 * that names the field, never a silent 0.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "attribute.h"
#include "check-main.h"
#include "ctlclient.h"

/* A stats reply read as a trial reads it (fd_stats_read). */
static int
read_stats (const char *reply, struct fd_stats *s, struct fm_err *err)
{
  struct fd_json *j = fd_json_parse (reply, "stats reply", err);
  int ret = j ? fd_stats_read (j, s, err) : -1;

  fd_json_free (j);
  return ret;
}

static void
expect_stats (const char *reply)
{
  struct fd_stats s;
  struct fm_err err;

  memset (&s, 0xff, sizeof s);
  ck_assert_msg (read_stats (reply, &s, &err) == 0, "%s: %s", reply, err.msg);
  ck_assert_uint_eq (s.reads, 3);
  ck_assert_uint_eq (s.writes, 5);
  ck_assert_uint_eq (s.bytes_read, 12288);
  ck_assert_uint_eq (s.bytes_written, 20480);
  ck_assert_uint_eq (s.ure, 1);
  ck_assert_uint_eq (s.lse, 2);
  ck_assert_uint_eq (s.picks, 9);
  ck_assert_uint_eq (s.watched, 6);
  ck_assert_uint_eq (s.ahead, 2);
}

static void
expect_error (const char *reply, const char *msg)
{
  struct fd_stats s;
  struct fm_err err = {""};

  ck_assert_msg (read_stats (reply, &s, &err) == -1, "'%s' was accepted",
                 reply);
  ck_assert_msg (strcmp (err.msg, msg) == 0, "'%s': '%s', want '%s'", reply,
                 err.msg, msg);
}

/* The plugin's own layout (emu_stats_json), abridged. */
#define STATS_REPLY                                                            \
  "{\"ok\": true, \"stats\": {\"profile\": \"x\", \"virtual_ns\": 7, "         \
  "\"reads\": 3, \"writes\": 5, \"bytes_read\": 12288, "                       \
  "\"bytes_written\": 20480, \"faults\": {\"ure\": 1, \"lse\": 2, "            \
  "\"lse_prone\": false, \"lse_latent\": 0}, \"decisions\": {\"picks\": 9, "   \
  "\"watched\": 6, \"ahead\": 2, \"unwatched\": 1, \"impatient\": 0}}}"

START_TEST (test_reordered)
{
  expect_stats (STATS_REPLY);
  /* "ok" last, counters and fault kinds in another order. */
  expect_stats ("{\"stats\": {\"faults\": {\"lse_latent\": 0, \"lse\": 2, "
                "\"ure\": 1}, \"decisions\": {\"ahead\": 2, \"watched\": 6, "
                "\"picks\": 9}, \"bytes_written\": 20480, \"bytes_read\": "
                "12288, \"writes\": 5, \"reads\": 3}, \"ok\": true}");
  ck_assert (fd_reply_ok (STATS_REPLY));
  ck_assert (
      fd_reply_ok ("{\"mark\": \"a\", \"virtual_ns\": 1, \"ok\": true}"));
}
END_TEST

START_TEST (test_whitespace)
{
  const char *compact =
      "{\"ok\":true,\"stats\":{\"reads\":3,\"writes\":5,\"bytes_read\":12288,"
      "\"bytes_written\":20480,\"faults\":{\"ure\":1,\"lse\":2},"
      "\"decisions\":{\"picks\":9,\"watched\":6,\"ahead\":2}}}";
  const char *loose =
      "{ \"ok\" : true ,\n\t\"stats\" : {\n  \"reads\" :  3,\n"
      "  \"writes\"\t: 5, \"bytes_read\":\r\n12288,\n"
      "  \"bytes_written\" : 20480 ,\n  \"faults\" : { "
      "\"ure\" : 1 , \"lse\" : 2 } ,\n  \"decisions\" : "
      "{ \"picks\" : 9 , \"watched\" : 6 , \"ahead\" : 2 } } }\n";

  expect_stats (compact);
  expect_stats (loose);
  ck_assert (fd_reply_ok (compact));
  ck_assert (fd_reply_ok (loose));
}
END_TEST

START_TEST (test_namesake)
{
  struct fm_err err;
  struct fd_json *j;
  uint64_t v = 0;

  /* A "reads" inside "faults" is not the counter; "ure" at the top is
   * not the fault count.
   */
  expect_stats ("{\"ok\": true, \"ure\": 40, \"stats\": {\"faults\": "
                "{\"reads\": 99, \"writes\": 98, \"ure\": 1, \"lse\": 2}, "
                "\"reads\": 3, \"writes\": 5, \"bytes_read\": 12288, "
                "\"bytes_written\": 20480, \"decisions\": {\"picks\": 9, "
                "\"watched\": 6, \"ahead\": 2}}}");
  j = fd_json_parse ("{\"ok\": true, \"mark\": \"a\", \"at\": {\"virtual_ns\": "
                     "1}, \"virtual_ns\": 5}",
                     "mark reply", &err);
  ck_assert_ptr_nonnull (j);
  ck_assert_int_eq (fd_json_u64 (j, "virtual_ns", &v, &err), 0);
  ck_assert_uint_eq (v, 5);
  fd_json_free (j);
}
END_TEST

START_TEST (test_missing)
{
  expect_error ("{\"ok\": true, \"stats\": {\"reads\": 3, \"bytes_read\": 1, "
                "\"bytes_written\": 1, \"faults\": {\"ure\": 1, \"lse\": 2}}}",
                "stats reply: 'stats.writes' is missing");
  expect_error ("{\"ok\": true, \"stats\": {\"reads\": 3, \"writes\": 5, "
                "\"bytes_read\": 1, \"bytes_written\": 1}}",
                "stats reply: 'stats.faults' is missing");
  /* Only a namesake elsewhere: still missing. */
  expect_error ("{\"ok\": true, \"reads\": 3, \"stats\": {\"writes\": 5}}",
                "stats reply: 'stats.reads' is missing");
  expect_error ("{\"ok\": true}", "stats reply: 'stats' is missing");
  ck_assert (!fd_reply_ok ("{\"mark\": \"a\"}"));
}
END_TEST

START_TEST (test_type)
{
  const char *const bad[] = {"\"3\"", "-3", "3.5", "true", "null", "[3]"};
  size_t i;

  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char reply[512];

    snprintf (reply, sizeof reply,
              "{\"ok\": true, \"stats\": {\"reads\": %s, \"writes\": 5, "
              "\"bytes_read\": 1, \"bytes_written\": 1, \"faults\": "
              "{\"ure\": 1, \"lse\": 2}}}",
              bad[i]);
    expect_error (reply,
                  "stats reply: 'stats.reads' is not a non-negative integer");
  }
  expect_error ("{\"ok\": true, \"stats\": {\"reads\": 3, \"writes\": 5, "
                "\"bytes_read\": 1, \"bytes_written\": 1, \"faults\": 2}}",
                "stats reply: 'stats.faults' is not an object");
  ck_assert (!fd_reply_ok ("{\"ok\": \"true\"}"));
  ck_assert (!fd_reply_ok ("{\"ok\": 1}"));
  ck_assert (!fd_reply_ok ("{\"ok\": false, \"error\": \"no\"}"));
}
END_TEST

START_TEST (test_malformed)
{
  const char *const bad[] = {
      /* Cut short, as a reply truncated in transit would be. */
      "{\"ok\": true, \"stats\": {\"reads\": 3, \"writes\": 5, ",
      /* Trailing garbage after a whole object. */
      STATS_REPLY "x",
      /* A key twice: which one is meant cannot be told. */
      "{\"ok\": true, \"stats\": {\"reads\": 3, \"reads\": 4, \"writes\": 5, "
      "\"bytes_read\": 1, \"bytes_written\": 1, \"faults\": {\"ure\": 1, "
      "\"lse\": 2}}}",
      "",
  };
  struct fm_err err;
  size_t i;

  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    struct fd_stats s;

    ck_assert_msg (read_stats (bad[i], &s, &err) == -1, "'%s' was accepted",
                   bad[i]);
    ck_assert_msg (strncmp (err.msg, "stats reply is not JSON: ", 25) == 0,
                   "'%s': %s", bad[i], err.msg);
    ck_assert_msg (!fd_reply_ok (bad[i]), "'%s' is ok", bad[i]);
  }
  ck_assert_ptr_null (fd_json_parse ("[1, 2]", "stats reply", &err));
  ck_assert_str_eq (err.msg, "stats reply is not a JSON object");
  ck_assert (!fd_reply_ok ("{\"ok\": true, \"ok\": false}"));
}
END_TEST

/* The first physical extent of a file just written (FIEMAP), so fault
 * log lines can name its bytes.
 */
static uint64_t
first_extent (const char *path)
{
  char buf[sizeof (struct fiemap) + sizeof (struct fiemap_extent)];
  struct fiemap *fm = (struct fiemap *)buf;
  char data[8192];
  int fd = open (path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

  ck_assert_int_ge (fd, 0);
  memset (data, 'x', sizeof data);
  ck_assert_int_eq (write (fd, data, sizeof data), (ssize_t)sizeof data);
  ck_assert_int_eq (fsync (fd), 0);
  memset (buf, 0, sizeof buf);
  fm->fm_length = FIEMAP_MAX_OFFSET;
  fm->fm_flags = FIEMAP_FLAG_SYNC;
  fm->fm_extent_count = 1;
  ck_assert_msg (ioctl (fd, FS_IOC_FIEMAP, fm) == 0 &&
                     fm->fm_mapped_extents == 1,
                 "%s: this file system has no FIEMAP", path);
  close (fd);
  return fm->fm_extents[0].fe_physical;
}

START_TEST (test_faultlog)
{
  char dir[] = "check-json.XXXXXX", file[64], log[64], cause[256] = "";
  struct fd_extents *x;
  uint64_t at;
  FILE *fp;

  /* In the build tree, not /tmp: tmpfs has no FIEMAP. */
  ck_assert_ptr_nonnull (mkdtemp (dir));
  snprintf (file, sizeof file, "%s/data", dir);
  snprintf (log, sizeof log, "%s/faults.jsonl", dir);
  at = first_extent (file);
  ck_assert_ptr_nonnull (x = fd_extents_of (".", file));
  ck_assert_ptr_nonnull (fp = fopen (log, "w"));
  /* The plugin's layout; elsewhere on the disk; a cut (length 0). */
  fprintf (fp,
           "{\"virtual_ns\": 1, \"event\": \"inject\", \"kind\": \"ure\", "
           "\"offset\": %" PRIu64 ", \"length\": 512, \"detail\": \"x\"}\n",
           at);
  fprintf (fp,
           "{\"virtual_ns\": 1, \"event\": \"inject\", \"kind\": \"flip\", "
           "\"offset\": %" PRIu64 ", \"length\": 512, \"detail\": \"x\"}\n",
           at + ((uint64_t)1 << 40));
  fprintf (fp,
           "{\"virtual_ns\": 2, \"event\": \"trigger\", \"kind\": "
           "\"powercut\", \"offset\": %" PRIu64 ", \"length\": 0, "
           "\"detail\": \"cut\"}\n",
           at);
  /* Compact, reordered, a nested namesake: all the same facts. */
  fprintf (fp, "{\"kind\":\"lse\",\"length\":4096,\"offset\":%" PRIu64 "}\n",
           at);
  fprintf (fp,
           "{\"detail\": {\"offset\": 0, \"length\": 0}, \"length\": 8, "
           "\"offset\": %" PRIu64 ", \"kind\": \"rot\"}\n",
           at + 8);
  /* Not entries: skipped with a warning, and a cut-off last line. */
  fprintf (fp,
           "{\"kind\": \"stuck\", \"offset\": \"%" PRIu64 "\", "
           "\"length\": 8}\n{\"kind\": 7, \"offset\": 0, \"length\": 8}\n",
           at);
  fprintf (fp, "{\"kind\": \"torn-write\", \"offset\": %" PRIu64, at);
  ck_assert_int_eq (fclose (fp), 0);

  fd_attribute (x, log, cause, sizeof cause);
  ck_assert_str_eq (cause, "ure,lse,rot");
  fd_extents_free (x);
  unlink (log);
  unlink (file);
  rmdir (dir);
}
END_TEST

/* A seed above INT64_MAX (any uint64 is one): read back as written, while
 * a negative the text itself holds is still refused, beside it or not.
 */
START_TEST (test_wide)
{
  const char *text = "{\"seed\": 18446744073709551615, \"half\": "
                     "9223372036854775808, \"r\": 2.5e19, \"n\": -3, "
                     "\"s\": \"18446744073709551615\"}";
  struct fm_err err = {""};
  struct fd_json *j = fd_json_parse (text, "stats", &err);
  uint64_t v;

  ck_assert_msg (j != NULL, "%s", err.msg);
  ck_assert_int_eq (fd_json_u64 (j, "seed", &v, &err), 0);
  ck_assert_uint_eq (v, UINT64_MAX);
  ck_assert_int_eq (fd_json_u64 (j, "half", &v, &err), 0);
  ck_assert_uint_eq (v, (uint64_t)INT64_MAX + 1);
  ck_assert_int_eq (fd_json_u64 (j, "n", &v, &err), -1);
  ck_assert_str_eq (err.msg, "stats: 'n' is not a non-negative integer");
  ck_assert_int_eq (fd_json_u64 (j, "r", &v, &err), -1);
  ck_assert_int_eq (fd_json_u64 (j, "s", &v, &err), -1);
  fd_json_free (j);
  /* Past 2^64 is no integer jansson or a seed can hold. */
  ck_assert_ptr_null (
      fd_json_parse ("{\"x\": 18446744073709551616}", "stats", &err));
  ck_assert_msg (strstr (err.msg, "stats is not JSON") != NULL, "%s", err.msg);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"reordered", test_reordered}, {"whitespace", test_whitespace},
      {"namesake", test_namesake},   {"missing", test_missing},
      {"type", test_type},           {"malformed", test_malformed},
      {"faultlog", test_faultlog},   {"wide", test_wide},
  };

  return fd_check_main ("json", cases, sizeof cases / sizeof cases[0]);
}
