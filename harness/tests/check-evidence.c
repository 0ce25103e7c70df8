/* futuredisk — harness: unit tests for a trial's evidence: what a run
 * left in its directory is kept, an item over the cap keeps its head and
 * its end with a line saying how much was left out, everything reads
 * back from the database as it was stored, and a damaged row is an
 * error, never garbage.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-main.h"
#include "db.h"
#include "evidence.h"


static void
write_file (const char *dir, const char *name, const char *text, size_t n)
{
  char path[256];
  FILE *fp;

  snprintf (path, sizeof path, "%s/%s", dir, name);
  ck_assert_ptr_nonnull (fp = fopen (path, "w"));
  ck_assert_uint_eq (fwrite (text, 1, n, fp), n);
  ck_assert_int_eq (fclose (fp), 0);
}

/* A trial whose check and repair ran in dir. */
static void
trial_in (struct trial_spec *t, struct trial_result *r, const char *dir)
{
  memset (t, 0, sizeof *t);
  memset (r, 0, sizeof *r);
  snprintf (t->dir, sizeof t->dir, "%s", dir);
  r->ph[0] = (struct phase){.name = "populate"};
  r->ph[1] = (struct phase){.name = "check", .outcome = "UNFIXED"};
  r->ph[2] = (struct phase){.name = "repair", .outcome = "FIXED"};
  r->nph = 3;
}

static void
remove_dir (const char *dir)
{
  static const char *const names[] = {"check.out",  "repair.out",
                                      "kernel.log", "faults.jsonl",
                                      "nbdkit.log", "t.db"};
  char path[256];
  size_t i;

  for (i = 0; i < sizeof names / sizeof names[0]; i++) {
    snprintf (path, sizeof path, "%s/%s", dir, names[i]);
    unlink (path);
  }
  rmdir (dir);
}

START_TEST (test_collect)
{
  struct fd_evidence ev = {0};
  struct trial_spec t;
  struct trial_result r;
  struct fm_err err;
  char dir[64];

  fd_check_tmpdir ("evidence", dir, sizeof dir);
  trial_in (&t, &r, dir);
  write_file (dir, "check.out", "$ e2fsck -fn\nPass 1\n", 20);
  write_file (dir, "kernel.log", "EXT4-fs (loop1): unable\n", 24);
  write_file (dir, "nbdkit.log", "", 0); /* said nothing: not kept */
  ck_assert_int_eq (fd_evidence_collect (&t, &r, &ev, NULL, &err), 0);
  /* repair.out is not there: left out; the populate is no checker. */
  ck_assert_uint_eq (ev.n, 2);
  ck_assert_str_eq (ev.item[0].name, "check.out");
  ck_assert_str_eq (ev.item[0].text, "$ e2fsck -fn\nPass 1\n");
  ck_assert_uint_eq (ev.item[0].bytes, 20);
  ck_assert_str_eq (ev.item[1].name, "kernel.log");
  fd_evidence_free (&ev);
  remove_dir (dir);
}
END_TEST

/* An output of n bytes: "line K\n" numbered, so a cut shows where. */
static char *
numbered (size_t n)
{
  char *s = malloc (n + 32);
  size_t at = 0, k = 0;

  ck_assert_ptr_nonnull (s);
  while (at < n)
    at += (size_t)sprintf (s + at, "line %zu\n", k++);
  s[n] = '\0';
  return s;
}

START_TEST (test_cap)
{
  struct fd_evidence ev = {0};
  struct trial_spec t;
  struct trial_result r;
  struct fm_err err;
  char dir[64], note[512] = "", want[96];
  size_t n = 3 * FD_EVIDENCE_CAP, tail = FD_EVIDENCE_CAP - FD_EVIDENCE_HEAD;
  char *big = numbered (n);
  FILE *fp = fmemopen (note, sizeof note - 1, "w");
  const char *text;

  fd_check_tmpdir ("evidence", dir, sizeof dir);
  trial_in (&t, &r, dir);
  write_file (dir, "repair.out", big, n);
  ck_assert_int_eq (fd_evidence_collect (&t, &r, &ev, fp, &err), 0);
  fclose (fp);
  ck_assert_uint_eq (ev.n, 1);
  ck_assert_uint_eq (ev.item[0].bytes, n);
  text = ev.item[0].text;
  snprintf (want, sizeof want, "\n[futuredisk: %zu bytes left out here]\n",
            n - FD_EVIDENCE_CAP);
  ck_assert_uint_eq (ev.item[0].len, FD_EVIDENCE_CAP + strlen (want));
  ck_assert_int_eq (memcmp (text, big, FD_EVIDENCE_HEAD), 0);
  ck_assert_int_eq (memcmp (text + FD_EVIDENCE_HEAD, want, strlen (want)), 0);
  ck_assert_int_eq (
      memcmp (text + FD_EVIDENCE_HEAD + strlen (want), big + n - tail, tail),
      0);
  /* The cut is said, naming the item and the cap. */
  ck_assert_ptr_nonnull (strstr (note, "repair.out is 786432 bytes"));
  ck_assert_ptr_nonnull (strstr (note, "at most 256 KiB an item"));
  fd_evidence_free (&ev);
  free (big);
  remove_dir (dir);
}
END_TEST

/* A database holding trial 1 (a row in trials, so the schema is whole). */
static sqlite3 *
db_with_trial (const char *dir, char *path, size_t len)
{
  struct fm_err err;
  sqlite3 *db;

  snprintf (path, len, "%s/t.db", dir);
  ck_assert_ptr_nonnull (db = fd_db_open (path, true, &err));
  ck_assert_int_eq (sqlite3_exec (db,
                                  "INSERT INTO trials (fs, profile, size, "
                                  "seed, fill_pct, faults, target, targets_hit,"
                                  " files, bytes, error, version, record) "
                                  "VALUES ('ext4', 'p', '1G', 1, 30, '', '', "
                                  "'', 0, 0, '', 'v', '{}')",
                                  NULL, NULL, NULL),
                    SQLITE_OK);
  return db;
}

static int
counted (void *n, int ncols, char **values, char **names)
{
  ++*(int *)n;
  return 0;
}

/* How many rows sql gives. */
static int
count (sqlite3 *db, const char *sql)
{
  int n = 0;

  ck_assert_int_eq (sqlite3_exec (db, sql, counted, &n, NULL), SQLITE_OK);
  return n;
}

/* For fd_evidence_each: "NAME BYTES;" appended to the buffer. */
static int
name_of (void *names, const char *name, uint64_t bytes)
{
  char *s = names;

  sprintf (s + strlen (s), "%s %llu;", name, (unsigned long long)bytes);
  return 0;
}

START_TEST (test_roundtrip)
{
  struct fd_evidence ev = {0};
  char names[128];
  struct trial_spec t;
  struct trial_result r;
  struct fm_err err;
  char dir[64], path[128], *text;
  size_t n = 2 * FD_EVIDENCE_CAP, len;
  char *big = numbered (n);
  uint64_t bytes;
  sqlite3 *db;

  fd_check_tmpdir ("evidence", dir, sizeof dir);
  trial_in (&t, &r, dir);
  write_file (dir, "check.out", big, n);
  write_file (dir, "faults.jsonl", "{\"kind\": \"ure\"}\n", 16);
  ck_assert_int_eq (fd_evidence_collect (&t, &r, &ev, NULL, &err), 0);
  db = db_with_trial (dir, path, sizeof path);
  ck_assert_msg (fd_evidence_store (db, 1, &ev, &err) == 0, "%s", err.msg);
  ck_assert_int_eq (
      fd_evidence_read (db, 1, "check.out", &text, &len, &bytes, &err), 0);
  ck_assert_uint_eq (bytes, n);
  ck_assert_uint_eq (len, ev.item[0].len);
  ck_assert_int_eq (memcmp (text, ev.item[0].text, len), 0);
  free (text);
  /* Stored compressed: far smaller than what it keeps. */
  ck_assert_int_eq (count (db, "SELECT 1 FROM evidence WHERE name = "
                               "'check.out' AND length(data) * 4 < kept"),
                    1);
  ck_assert_int_eq (
      fd_evidence_read (db, 1, "nothing.out", &text, &len, NULL, &err), 1);
  ck_assert_ptr_null (text);
  /* The items in the order they were kept, each with its whole size. */
  names[0] = '\0';
  ck_assert_int_eq (fd_evidence_each (db, 1, name_of, names, &err), 2);
  ck_assert_str_eq (names, "check.out 524288;faults.jsonl 16;");
  ck_assert_int_eq (fd_evidence_each (db, 7, name_of, names, &err), 0);
  sqlite3_close (db);
  fd_evidence_free (&ev);
  free (big);
  remove_dir (dir);
}
END_TEST

/* A row whose data is not what its sizes say is an error naming it. */
START_TEST (test_damaged)
{
  struct fm_err err;
  char dir[64], path[128], *text;
  size_t len;
  sqlite3 *db;

  fd_check_tmpdir ("evidence", dir, sizeof dir);
  db = db_with_trial (dir, path, sizeof path);
  ck_assert_int_eq (
      sqlite3_exec (db,
                    "INSERT INTO evidence VALUES (1, 'check.out', 10, 10, "
                    "x'00112233'), (1, 'kernel.log', 5, -3, x'');",
                    NULL, NULL, NULL),
      SQLITE_OK);
  ck_assert_int_eq (
      fd_evidence_read (db, 1, "check.out", &text, &len, NULL, &err), -1);
  ck_assert_ptr_null (text);
  ck_assert_str_eq (err.msg, "evidence check.out of trial 1: damaged");
  ck_assert_int_eq (
      fd_evidence_read (db, 1, "kernel.log", &text, &len, NULL, &err), -1);
  ck_assert_str_eq (err.msg, "evidence kernel.log of trial 1: bad size -3");
  sqlite3_close (db);
  remove_dir (dir);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"collect", test_collect},
      {"cap", test_cap},
      {"roundtrip", test_roundtrip},
      {"damaged", test_damaged},
  };

  return fd_check_main ("evidence", cases, sizeof cases / sizeof cases[0]);
}
