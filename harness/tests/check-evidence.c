/* futuredisk — harness: unit tests for a trial's evidence: what a run
 * left in its directory is kept, a phase run twice under two names, an
 * item over the cap keeps its head and its end with a line saying how
 * much was left out, everything reads back from the database as it was
 * stored, an item that cannot be read or stored is named with the reason
 * and costs the others nothing, and a damaged row is an error, never
 * garbage.
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "check-main.h"
#include "db.h"
#include "evidence.h"
#include "fsadapter.h"

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
  static const char *const names[] = {
      "check.out",  "repair.out",   "repair-2.out", "recheck.out",
      "kernel.log", "faults.jsonl", "nbdkit.log",   "t.db"};
  char path[256];
  size_t i;

  for (i = 0; i < sizeof names / sizeof names[0]; i++) {
    snprintf (path, sizeof path, "%s/%s", dir, names[i]);
    if (unlink (path) == -1)
      rmdir (path); /* one made a directory, to be unreadable */
  }
  rmdir (dir);
}

START_TEST (test_collect)
{
  struct fd_evidence ev = {0};
  struct trial_spec t;
  struct trial_result r;
  char dir[64];

  fd_check_tmpdir ("evidence", dir, sizeof dir);
  trial_in (&t, &r, dir);
  write_file (dir, "check.out", "$ e2fsck -fn\nPass 1\n", 20);
  write_file (dir, "kernel.log", "EXT4-fs (loop1): unable\n", 24);
  write_file (dir, "nbdkit.log", "", 0); /* said nothing: not kept */
  fd_evidence_collect (&t, &r, &ev, NULL);
  /* repair.out is not there: left out; the populate is no checker. */
  ck_assert_uint_eq (ev.n, 2);
  ck_assert_str_eq (ev.item[0].name, "check.out");
  ck_assert_str_eq (ev.item[0].text, "$ e2fsck -fn\nPass 1\n");
  ck_assert_uint_eq (ev.item[0].bytes, 20);
  ck_assert_str_eq (ev.item[1].name, "kernel.log");
  ck_assert_str_eq (ev.unkept, "");
  fd_evidence_free (&ev);
  remove_dir (dir);
}
END_TEST

/* xfs's repair refused the dirty log, the mount replayed it, the repair
 * ran again: each repair's output is kept, under a name of its own.
 */
START_TEST (test_repeated)
{
  struct fd_evidence ev = {0};
  struct trial_spec t;
  struct trial_result r;
  char dir[64], name[FD_EVIDENCE_NAME];

  fd_check_tmpdir ("evidence", dir, sizeof dir);
  trial_in (&t, &r, dir);
  r.ph[3] = (struct phase){.name = "replay-mount", .outcome = "CLEAN"};
  r.ph[4] = (struct phase){.name = "repair", .outcome = "CLEAN"};
  r.ph[5] = (struct phase){.name = "recheck", .outcome = "CLEAN"};
  r.nph = 6;
  fd_evidence_output_name (&r, 2, name);
  ck_assert_str_eq (name, "repair.out");
  fd_evidence_output_name (&r, 4, name);
  ck_assert_str_eq (name, "repair-2.out");
  fd_evidence_output_name (&r, 5, name);
  ck_assert_str_eq (name, "recheck.out");
  write_file (dir, "check.out", "$ xfs_repair -n\n", 16);
  write_file (dir, "repair.out", "$ xfs_repair\nreplay the log\n", 28);
  write_file (dir, "repair-2.out", "$ xfs_repair\nPhase 7\n", 22);
  write_file (dir, "recheck.out", "$ xfs_repair -n\n", 16);
  fd_evidence_collect (&t, &r, &ev, NULL);
  ck_assert_uint_eq (ev.n, 4);
  ck_assert_str_eq (ev.item[1].name, "repair.out");
  ck_assert_str_eq (ev.item[1].text, "$ xfs_repair\nreplay the log\n");
  ck_assert_str_eq (ev.item[2].name, "repair-2.out");
  ck_assert_str_eq (ev.item[2].text, "$ xfs_repair\nPhase 7\n");
  ck_assert_str_eq (ev.item[3].name, "recheck.out");
  fd_evidence_free (&ev);
  remove_dir (dir);
}
END_TEST

/* A file that cannot be read is named with the reason; the rest are
 * still kept.
 */
START_TEST (test_unreadable)
{
  struct fd_evidence ev = {0};
  struct trial_spec t;
  struct trial_result r;
  char dir[64], path[128];

  fd_check_tmpdir ("evidence", dir, sizeof dir);
  trial_in (&t, &r, dir);
  snprintf (path, sizeof path, "%s/check.out", dir);
  ck_assert_int_eq (mkdir (path, 0700), 0); /* opens, never reads */
  write_file (dir, "repair.out", "$ e2fsck -fy\n", 14);
  write_file (dir, "kernel.log", "EXT4-fs (loop1): mounted\n", 25);
  fd_evidence_collect (&t, &r, &ev, NULL);
  ck_assert_uint_eq (ev.n, 2);
  ck_assert_str_eq (ev.item[0].name, "repair.out");
  ck_assert_str_eq (ev.item[1].name, "kernel.log");
  ck_assert_str_eq (ev.unkept, "check.out: Is a directory");
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
  char dir[64], note[512] = "", want[96];
  size_t n = 3 * FD_EVIDENCE_CAP, tail = FD_EVIDENCE_CAP - FD_EVIDENCE_HEAD;
  char *big = numbered (n);
  FILE *fp = fmemopen (note, sizeof note - 1, "w");
  const char *text;

  fd_check_tmpdir ("evidence", dir, sizeof dir);
  trial_in (&t, &r, dir);
  write_file (dir, "repair.out", big, n);
  fd_evidence_collect (&t, &r, &ev, fp);
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
  fd_evidence_collect (&t, &r, &ev, NULL);
  db = db_with_trial (dir, path, sizeof path);
  names[0] = '\0'; /* what was not stored: nothing */
  ck_assert_msg (fd_evidence_store (db, 1, &ev, names, sizeof names, &err) == 0,
                 "%s", err.msg);
  ck_assert_str_eq (names, "");
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

/* An item whose row is refused (two of one name: what the xfs trial that
 * repaired twice once gave) is named with SQLite's reason; every other
 * item is stored.
 */
START_TEST (test_one_fails)
{
  struct fd_evidence ev = {0};
  struct trial_spec t;
  struct trial_result r;
  struct fm_err err;
  char dir[64], path[128], why[FD_EVIDENCE_WHY] = "kernel.log: unread";
  sqlite3 *db;

  fd_check_tmpdir ("evidence", dir, sizeof dir);
  trial_in (&t, &r, dir);
  write_file (dir, "check.out", "$ xfs_repair -n\n", 16);
  write_file (dir, "repair.out", "$ xfs_repair\n", 13);
  write_file (dir, "faults.jsonl", "{}\n", 3);
  fd_evidence_collect (&t, &r, &ev, NULL);
  ck_assert_uint_eq (ev.n, 3);
  /* The first repair's name given to the check: a collision. */
  snprintf (ev.item[0].name, sizeof ev.item[0].name, "repair.out");
  db = db_with_trial (dir, path, sizeof path);
  ck_assert_int_eq (fd_evidence_store (db, 1, &ev, why, sizeof why, &err), 1);
  ck_assert_str_eq (why, "kernel.log: unread; repair.out: UNIQUE constraint "
                         "failed: evidence.trial_id, evidence.name");
  ck_assert_int_eq (count (db, "SELECT 1 FROM evidence WHERE trial_id = 1"), 2);
  ck_assert_int_eq (count (db, "SELECT 1 FROM evidence WHERE name = "
                               "'faults.jsonl'"),
                    1);
  sqlite3_close (db);
  fd_evidence_free (&ev);
  remove_dir (dir);
}
END_TEST

/* A list of items not kept that outgrows its buffer ends "...". */
START_TEST (test_unkept_full)
{
  char list[32] = "";

  fd_evidence_unkept (list, sizeof list, "check.out", "Is a directory");
  ck_assert_str_eq (list, "check.out: Is a directory");
  fd_evidence_unkept (list, sizeof list, "repair.out", "out of memory");
  ck_assert_str_eq (list, "check.out: Is a directory; r...");
  fd_evidence_unkept (list, sizeof list, "kernel.log", "out of memory");
  ck_assert_str_eq (list, "check.out: Is a directory; r...");
}
END_TEST

/* A disk with room for the trial but not its evidence: the trial is
 * recorded without it, saying why, where it once went unrecorded (the
 * commit after the failed evidence failed too).
 */
START_TEST (test_disk_full)
{
  static struct fm_err ferr;
  struct fd_evidence ev = {0};
  struct trial_spec t;
  struct trial_result r;
  struct fm_err err;
  char dir[64], small[96], path[128], *noise = malloc (FD_EVIDENCE_CAP);
  uint64_t x = 88172645463325252u;
  size_t i;
  sqlite3 *db;

  fd_check_tmpdir ("evidence", dir, sizeof dir);
  snprintf (small, sizeof small, "%s/db", dir); /* the database's disk */
  ck_assert_int_eq (mkdir (small, 0700), 0);
  ck_assert_msg (mount ("tmpfs", small, "tmpfs", 0, "size=160k") == 0,
                 "mount tmpfs: %s", strerror (errno));
  trial_in (&t, &r, dir);
  ck_assert_ptr_nonnull (t.fs = fd_fs_find ("ext4", &ferr));
  t.profile = "roadmap-2006";
  t.size = "512M";
  ck_assert_ptr_nonnull (noise);
  for (i = 0; i < FD_EVIDENCE_CAP; i++) { /* xorshift: incompressible */
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    noise[i] = (char)x;
  }
  write_file (dir, "check.out", noise, FD_EVIDENCE_CAP);
  fd_evidence_collect (&t, &r, &ev, NULL);
  snprintf (path, sizeof path, "%s/t.db", small);
  ck_assert_int_eq (fd_db_add (path, &t, &r, "{}", &ev, &err), 1);
  ck_assert_msg (strstr (err.msg, "evidence not kept: storing it failed (") &&
                     strstr (err.msg, "full"),
                 "%s", err.msg);
  ck_assert_ptr_nonnull (db = fd_db_open (path, false, &err));
  ck_assert_int_eq (count (db, "SELECT 1 FROM trials WHERE evidence_missing "
                               "LIKE 'storing it failed (%full%), so the "
                               "trial was recorded without it'"),
                    1);
  ck_assert_int_eq (count (db, "SELECT 1 FROM evidence"), 0);
  ck_assert_int_eq (count (db, "SELECT 1 FROM phases"), 3);
  sqlite3_close (db);
  fd_evidence_free (&ev);
  free (noise);
  ck_assert_int_eq (umount (small), 0);
  rmdir (small);
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
      {"collect", test_collect},         {"repeated", test_repeated},
      {"unreadable", test_unreadable},   {"cap", test_cap},
      {"roundtrip", test_roundtrip},     {"one-fails", test_one_fails},
      {"unkept-full", test_unkept_full}, {"disk-full", test_disk_full},
      {"damaged", test_damaged},
  };

  return fd_check_main ("evidence", cases, sizeof cases / sizeof cases[0]);
}
