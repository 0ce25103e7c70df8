/* futuredisk — harness: unit tests for the crash workload's promises and
 * the audit's durability classes, on a small tmpfs (root: the suite runs
 * as root in CI).  Each class is produced for real by changing the tree
 * the way a crash could, and the audit must say what was promised and
 * what broke.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-main.h"
#include "populate.h"

struct tree {
  char dir[64];
  struct fd_manifest m;
};

/* A crash workload on a fresh 32 MiB tmpfs: half synced, then the mix. */
static void
grow (struct tree *t, uint64_t seed)
{
  struct fd_populate_opts o = {.seed = seed, .fill_pct = 40, .no_sync = true};
  struct fm_err err;

  fd_check_tmpdir ("populate", t->dir, sizeof t->dir);
  ck_assert_msg (mount ("tmpfs", t->dir, "tmpfs", 0, "size=32m") == 0,
                 "mount tmpfs: %s", strerror (errno));
  ck_assert_msg (fd_populate (t->dir, &o, &t->m, &err) == 0, "%s", err.msg);
}

static void
fell (struct tree *t)
{
  fd_manifest_free (&t->m);
  ck_assert (umount (t->dir) == 0);
  rmdir (t->dir);
}

/* The first entry made by pattern how with the given promise and type. */
static const struct fd_entry *
find (const struct tree *t, const char *how, enum fd_promise p,
      enum fd_ftype type)
{
  size_t i;

  for (i = 0; i < t->m.n; i++)
    if (strcmp (t->m.v[i].how, how) == 0 && t->m.v[i].promise == p &&
        t->m.v[i].type == type)
      return &t->m.v[i];
  ck_abort_msg ("no %s entry", how);
  return NULL;
}

static void
audit (const struct tree *t, uint64_t seed, struct fd_audit *a, char *viol,
       size_t len)
{
  struct fm_err err;
  FILE *fp;

  memset (viol, 0, len);
  fp = fmemopen (viol, len, "w");

  ck_assert_ptr_nonnull (fp);
  memset (a, 0, sizeof *a);
  a->violations = fp;
  ck_assert_msg (fd_audit (t->dir, seed, &t->m, a, &err) == 0, "%s", err.msg);
  fclose (fp);
}

static char *
at (const struct tree *t, const struct fd_entry *e, char *buf, size_t len)
{
  snprintf (buf, len, "%s/%s", t->dir, e->path);
  return buf;
}

START_TEST (test_every_pattern)
{
  static const char *const hows[] = {
      "sync",           "write",  "fsync", "dirsync", "replace",
      "replace-nosync", "append", "link",  "unlink",  "chain"};
  struct tree t;
  struct fd_audit a;
  char viol[4096];
  uint64_t files = 0;
  size_t i, k;

  grow (&t, 7);
  for (k = 0; k < sizeof hows / sizeof hows[0]; k++) {
    for (i = 0; i < t.m.n && strcmp (t.m.v[i].how, hows[k]); i++)
      ;
    ck_assert_msg (i < t.m.n, "no entry made by %s", hows[k]);
  }
  /* Nothing crashed: every promise kept, everything in flight there. */
  audit (&t, 7, &a, viol, sizeof viol);
  for (i = 0; i < t.m.n; i++)
    files += t.m.v[i].type != FD_DIR;
  ck_assert_uint_eq (a.durability[FD_DURABLE_BROKEN], 0);
  ck_assert_uint_eq (a.durability[FD_INFLIGHT_LOST], 0);
  ck_assert_uint_eq (a.durability[FD_DURABLE_INTACT] +
                         a.durability[FD_INFLIGHT_SURVIVED],
                     files);
  ck_assert_uint_gt (a.durability[FD_INFLIGHT_SURVIVED], 0);
  ck_assert_msg (viol[0] == '\0', "%s", viol);
  fell (&t);
}
END_TEST

START_TEST (test_broken_and_allowed)
{
  struct tree t;
  struct fd_audit a, before;
  char viol[4096], path[4096], want[1024];
  const struct fd_entry *fs, *inflight, *gone, *name;
  int fd;

  grow (&t, 7);
  audit (&t, 7, &before, viol, sizeof viol);
  /* An fsynced file lost: a violation. */
  fs = find (&t, "fsync", FD_PROMISE_DURABLE, FD_FILE);
  ck_assert (unlink (at (&t, fs, path, sizeof path)) == 0);
  /* An unsynced file lost: allowed. */
  inflight = find (&t, "write", FD_PROMISE_NONE, FD_FILE);
  ck_assert (unlink (at (&t, inflight, path, sizeof path)) == 0);
  /* A durable unlink undone: resurrected. */
  gone = find (&t, "unlink", FD_PROMISE_DURABLE, FD_GONE);
  ck_assert ((fd = creat (at (&t, gone, path, sizeof path), 0644)) != -1);
  close (fd);
  /* A name promised, its content not: empty is fine. */
  name = find (&t, "dirsync", FD_PROMISE_NAME, FD_FILE);
  ck_assert (truncate (at (&t, name, path, sizeof path), 0) == 0);
  audit (&t, 7, &a, viol, sizeof viol);
  ck_assert_uint_eq (a.durability[FD_DURABLE_BROKEN], 2);
  ck_assert_uint_eq (a.durability[FD_INFLIGHT_LOST], 1);
  snprintf (want, sizeof want, "fsync\tmissing\t%s\n", fs->path);
  ck_assert_msg (strstr (viol, want), "%s", viol);
  snprintf (want, sizeof want, "unlink\tresurrected\t%s\n", gone->path);
  ck_assert_msg (strstr (viol, want), "%s", viol);
  ck_assert_uint_eq (a.count[FD_AUDIT_MISSING],
                     before.count[FD_AUDIT_MISSING] + 2);
  fell (&t);
}
END_TEST

START_TEST (test_rename_old_or_new)
{
  struct tree t;
  struct fd_audit a;
  struct fm_err err;
  char viol[4096], path[4096], want[1024];
  const struct fd_entry *r;

  grow (&t, 7);
  r = find (&t, "replace-nosync", FD_PROMISE_OLD_OR_NEW, FD_FILE);
  /* The new version: the rename survived. */
  audit (&t, 7, &a, viol, sizeof viol);
  ck_assert_uint_eq (a.durability[FD_INFLIGHT_LOST], 0);
  /* The old version: the rename was lost, which a crash allows. */
  ck_assert_msg (fd_entry_write (t.dir, 7, r, true, &err) == 0, "%s", err.msg);
  audit (&t, 7, &a, viol, sizeof viol);
  ck_assert_uint_eq (a.durability[FD_INFLIGHT_LOST], 1);
  ck_assert_uint_eq (a.durability[FD_DURABLE_BROKEN], 0);
  ck_assert_uint_eq (a.count[FD_AUDIT_EXTRA], 0);
  /* Neither (half the old version): the rename was not atomic. */
  ck_assert (
      truncate (at (&t, r, path, sizeof path), (off_t)(r->old_size / 2)) == 0);
  audit (&t, 7, &a, viol, sizeof viol);
  ck_assert_uint_eq (a.durability[FD_DURABLE_BROKEN], 1);
  snprintf (want, sizeof want, "replace-nosync\tneither\t%s\n", r->path);
  ck_assert_str_eq (viol, want);
  /* The new version again: survived. */
  ck_assert_msg (fd_entry_write (t.dir, 7, r, false, &err) == 0, "%s", err.msg);
  audit (&t, 7, &a, viol, sizeof viol);
  ck_assert_uint_eq (a.durability[FD_DURABLE_BROKEN], 0);
  ck_assert_uint_eq (a.durability[FD_INFLIGHT_LOST], 0);
  fell (&t);
}
END_TEST

/* The promises as they stood at a crash point: what was promised later
 * is in flight, and a file replaced or appended to later is owed in its
 * old version.
 */
START_TEST (test_promises_at_a_crash_point)
{
  struct tree t;
  struct fd_manifest at;
  struct fd_audit a;
  struct fm_err err;
  char viol[4096];
  const struct fd_entry *r, *ap, *fs;
  size_t i;
  uint64_t half = 0;

  grow (&t, 7);
  for (i = 0; i < t.m.n; i++)
    if (strcmp (t.m.v[i].how, "sync") == 0)
      half = t.m.v[i].promised_at;
  ck_assert_uint_gt (half, 0);
  r = find (&t, "replace", FD_PROMISE_DURABLE, FD_FILE);
  ap = find (&t, "append", FD_PROMISE_DURABLE, FD_FILE);
  fs = find (&t, "fsync", FD_PROMISE_DURABLE, FD_FILE);
  ck_assert_uint_gt (r->promised_at, half);
  ck_assert_uint_eq (r->old_promised_at, half);
  /* Before the half-way sync nothing is owed. */
  ck_assert_int_eq (fd_manifest_at (&t.m, half - 1, &at), 0);
  for (i = 0; i < at.n; i++)
    ck_assert_int_eq (at.v[i].promise, FD_PROMISE_NONE);
  fd_manifest_free (&at);
  /* Just before the replace: the old version or the new. */
  ck_assert_int_eq (fd_manifest_at (&t.m, r->promised_at - 1, &at), 0);
  ck_assert_int_eq (at.v[r - t.m.v].promise, FD_PROMISE_OLD_OR_NEW);
  ck_assert_int_eq (at.v[fs - t.m.v].promise, fs->promised_at < r->promised_at
                                                  ? FD_PROMISE_DURABLE
                                                  : FD_PROMISE_NONE);
  ck_assert_msg (fd_entry_write (t.dir, 7, r, true, &err) == 0, "%s", err.msg);
  {
    struct tree view = {.m = at};
    snprintf (view.dir, sizeof view.dir, "%s", t.dir);
    audit (&view, 7, &a, viol, sizeof viol);
  }
  ck_assert_msg (viol[0] == '\0' || strstr (viol, r->path) == NULL, "%s", viol);
  fd_manifest_free (&at);
  /* After it, the old version is a broken promise. */
  audit (&t, 7, &a, viol, sizeof viol);
  ck_assert_msg (strstr (viol, r->path) != NULL, "%s", viol);
  /* An append before its fdatasync: the old size's bytes are owed. */
  ck_assert_int_eq (fd_manifest_at (&t.m, ap->promised_at - 1, &at), 0);
  ck_assert_int_eq (at.v[ap - t.m.v].promise, FD_PROMISE_PREFIX);
  ck_assert_uint_eq (at.v[ap - t.m.v].old_size, ap->old_size);
  ck_assert_uint_lt (ap->old_size, ap->size);
  fd_manifest_free (&at);
  fell (&t);
}
END_TEST

START_TEST (test_same_seed_same_workload)
{
  struct tree a, b;
  size_t i;

  grow (&a, 11);
  grow (&b, 11);
  ck_assert_uint_eq (a.m.n, b.m.n);
  for (i = 0; i < a.m.n; i++) {
    ck_assert_str_eq (a.m.v[i].path, b.m.v[i].path);
    ck_assert_str_eq (a.m.v[i].how, b.m.v[i].how);
    ck_assert_uint_eq (a.m.v[i].hash, b.m.v[i].hash);
    ck_assert_int_eq (a.m.v[i].promise, b.m.v[i].promise);
  }
  fell (&a);
  fell (&b);
}
END_TEST

/* A hardlink-farm tree: a name lost while another name of the file is
 * intact is a link lost; a file all of whose names are gone is missing
 * under each.
 */
START_TEST (test_link_lost_or_file_lost)
{
  struct fd_populate_opts o = {
      .seed = 5, .fill_pct = 20, .tree = FD_TREE_HARDLINK_FARM};
  struct tree t;
  struct fd_audit a;
  struct fm_err err;
  const struct fd_entry *link = NULL, *whole = NULL;
  char path[512], viol[4096];
  size_t i, j, names = 0;

  fd_check_tmpdir ("populate", t.dir, sizeof t.dir);
  ck_assert (mount ("tmpfs", t.dir, "tmpfs", 0, "size=32m") == 0);
  ck_assert_msg (fd_populate (t.dir, &o, &t.m, &err) == 0, "%s", err.msg);
  /* A link, and another file (not linked) with its names. */
  for (i = 0; i < t.m.n && link == NULL; i++)
    if (t.m.v[i].type == FD_HARDLINK)
      link = &t.m.v[i];
  ck_assert_ptr_nonnull (link);
  for (i = 0; i < t.m.n && whole == NULL; i++)
    if (t.m.v[i].type == FD_FILE && t.m.v[i].linked && t.m.v[i].id != link->id)
      whole = &t.m.v[i];
  ck_assert_ptr_nonnull (whole);
  ck_assert (unlink (at (&t, link, path, sizeof path)) == 0);
  for (j = 0; j < t.m.n; j++)
    if (t.m.v[j].id == whole->id && t.m.v[j].type != FD_DIR) {
      ck_assert_msg (unlink (at (&t, &t.m.v[j], path, sizeof path)) == 0,
                     "%s: %s", path, strerror (errno));
      names++;
    }
  ck_assert_uint_ge (names, 2);
  audit (&t, 5, &a, viol, sizeof viol);
  ck_assert_uint_eq (a.count[FD_AUDIT_LINK_LOST], 1);
  ck_assert_uint_eq (a.count[FD_AUDIT_MISSING], names);
  ck_assert_uint_eq (a.durability[FD_DURABLE_BROKEN], names + 1);
  fell (&t);
}
END_TEST

/* A file a repair moved to lost+found (renamed there by its inode, as
 * e2fsck does) is lost_found, and the detail line says where it is, for
 * the harness to find its blocks.
 */
START_TEST (test_lost_found_says_where)
{
  struct tree t;
  struct fd_audit a;
  struct fm_err err;
  const struct fd_entry *f = NULL;
  char path[512], to[512], detail[8192], want[600];
  size_t i;

  grow (&t, 7);
  for (i = 0; i < t.m.n && f == NULL; i++)
    if (t.m.v[i].type == FD_FILE && !t.m.v[i].linked && t.m.v[i].size > 0 &&
        t.m.v[i].promise != FD_PROMISE_NONE)
      f = &t.m.v[i];
  ck_assert_ptr_nonnull (f);
  snprintf (to, sizeof to, "%s/lost+found", t.dir);
  ck_assert (mkdir (to, 0700) == 0 || errno == EEXIST);
  snprintf (to, sizeof to, "%s/lost+found/#4242", t.dir);
  ck_assert (rename (at (&t, f, path, sizeof path), to) == 0);
  memset (&a, 0, sizeof a);
  memset (detail, 0, sizeof detail);
  a.detail = fmemopen (detail, sizeof detail, "w");
  ck_assert_ptr_nonnull (a.detail);
  ck_assert_msg (fd_audit (t.dir, 7, &t.m, &a, &err) == 0, "%s", err.msg);
  fclose (a.detail);
  ck_assert_uint_eq (a.count[FD_AUDIT_LOST_FOUND], 1);
  snprintf (want, sizeof want, "lost_found\t%s\tlost+found/#4242\n", f->path);
  ck_assert_msg (strstr (detail, want) != NULL, "%s", detail);
  fell (&t);
}
END_TEST

/* A repair can leave a fifo where a file was (a garbled inode's mode):
 * the audit judges it corrupted instead of waiting for a writer, and a
 * fifo in lost+found is passed over.
 */
START_TEST (test_fifo_is_not_opened)
{
  struct tree t;
  struct fd_audit a;
  struct fm_err err;
  const struct fd_entry *f = NULL;
  char path[512], lf[512];
  size_t i;

  grow (&t, 9);
  for (i = 0; i < t.m.n && f == NULL; i++)
    if (t.m.v[i].type == FD_FILE && !t.m.v[i].linked && t.m.v[i].size > 0)
      f = &t.m.v[i];
  ck_assert_ptr_nonnull (f);
  ck_assert (unlink (at (&t, f, path, sizeof path)) == 0);
  ck_assert (mkfifo (path, 0644) == 0);
  snprintf (lf, sizeof lf, "%s/lost+found", t.dir);
  ck_assert (mkdir (lf, 0700) == 0 || errno == EEXIST);
  snprintf (lf, sizeof lf, "%s/lost+found/#77", t.dir);
  ck_assert (mkfifo (lf, 0644) == 0);
  memset (&a, 0, sizeof a);
  alarm (60); /* a wait for a writer fails the test, not the suite */
  ck_assert_msg (fd_audit (t.dir, 9, &t.m, &a, &err) == 0, "%s", err.msg);
  alarm (0);
  ck_assert_uint_eq (a.count[FD_AUDIT_CORRUPTED], 1);
  fell (&t);
}
END_TEST

/* A manifest saved with a base and loaded by a clone is the populate's,
 * field for field (the `how` the same static string), and the audit of
 * the tree against it says what it said against the original.
 */
START_TEST (test_saved_manifest_is_the_same)
{
  struct tree t;
  struct fd_manifest back;
  struct fd_audit a, b;
  struct fm_err err;
  char path[96], viol[4096], viol2[4096];
  size_t i;

  grow (&t, 13);
  snprintf (path, sizeof path, "%s.saved", t.dir);
  ck_assert_msg (fd_manifest_save (&t.m, path, &err) == 0, "%s", err.msg);
  ck_assert_msg (fd_manifest_load (path, &back, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq (back.n, t.m.n);
  ck_assert_uint_eq (back.bytes, t.m.bytes);
  ck_assert_int_eq (back.meta_only, t.m.meta_only);
  for (i = 0; i < t.m.n; i++) {
    const struct fd_entry *x = &t.m.v[i], *y = &back.v[i];
    ck_assert_str_eq (x->path, y->path);
    ck_assert_str_eq (x->target, y->target);
    ck_assert_ptr_eq (x->how, y->how);
    ck_assert (x->type == y->type && x->id == y->id && x->size == y->size &&
               x->mode == y->mode && x->hash == y->hash &&
               x->promise == y->promise && x->linked == y->linked &&
               x->old_id == y->old_id && x->old_size == y->old_size &&
               x->promised_at == y->promised_at &&
               x->old_promised_at == y->old_promised_at);
  }
  audit (&t, 13, &a, viol, sizeof viol);
  fd_manifest_free (&t.m);
  t.m = back;
  audit (&t, 13, &b, viol2, sizeof viol2);
  ck_assert_mem_eq (a.count, b.count, sizeof a.count);
  ck_assert_mem_eq (a.durability, b.durability, sizeof a.durability);
  ck_assert_str_eq (viol, viol2);
  /* A file that is not a saved manifest is refused, naming it. */
  ck_assert_int_eq (fd_manifest_write (&t.m, path, &err), 0);
  ck_assert_int_eq (fd_manifest_load (path, &back, &err), -1);
  ck_assert_ptr_nonnull (strstr (err.msg, "not a saved manifest"));
  unlink (path);
  fell (&t);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"patterns", test_every_pattern},
      {"violations", test_broken_and_allowed},
      {"rename", test_rename_old_or_new},
      {"deterministic", test_same_seed_same_workload},
      {"crash-point", test_promises_at_a_crash_point},
      {"link-lost", test_link_lost_or_file_lost},
      {"lost-found", test_lost_found_says_where},
      {"fifo", test_fifo_is_not_opened},
      {"saved", test_saved_manifest_is_the_same},
  };

  return fd_check_main ("populate", cases, sizeof cases / sizeof cases[0]);
}
