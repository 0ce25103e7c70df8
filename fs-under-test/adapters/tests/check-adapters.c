/* futuredisk — fs-under-test: unit tests for what each adapter reads in
 * its checker's output (the lines that begin a pass, the words for a
 * checksum that failed) and for mkfs's command line.
 */
#include <stdio.h>
#include <string.h>

#include "check-main.h"
#include "fsadapter.h"

/* The adapter called name. */
static const struct fd_fs *
fs (const char *name)
{
  struct fm_err err;
  const struct fd_fs *f = fd_fs_find (name, &err);

  ck_assert_msg (f != NULL, "%s", err.msg);
  return f;
}

/* The pass line l begins for fs, "" when none. */
static const char *
heading (const struct fd_fs *f, const char *l, int *num)
{
  static char name[32];

  *num = -1;
  if (!f->pass_heading (l, num, name, sizeof name))
    return "";
  return name;
}

START_TEST (test_headings)
{
  int n;

  ck_assert_str_eq (heading (fs ("ext4"), "Pass 1: Checking inodes", &n),
                    "pass 1");
  ck_assert_int_eq (n, 1);
  ck_assert_str_eq (heading (fs ("ext4"), "Pass 1B: Rescanning", &n),
                    "pass 1b");
  ck_assert_int_eq (n, 1);
  /* e2fsck -tt's timing lines close a pass, they begin none. */
  ck_assert_str_eq (heading (fs ("ext4"), "Pass 2: Memory used: 1k", &n), "");
  ck_assert_str_eq (heading (fs ("ext3"), "Pass 5: I/O read: 1MB", &n), "");
  ck_assert_str_eq (heading (fs ("chunkfs"), "Pass 3: time 0.1", &n), "");
  ck_assert_str_eq (heading (fs ("chunkfs"), "Pass 4: Checking", &n), "pass 4");
  ck_assert_str_eq (heading (fs ("xfs"), "Phase 3 - for each AG...", &n),
                    "phase 3");
  ck_assert_int_eq (n, 3);
  ck_assert_str_eq (heading (fs ("btrfs"), "[2/7] checking extents", &n),
                    "step 2/7");
  ck_assert_int_eq (n, 2);
  /* Each checker's headings are its own. */
  ck_assert_str_eq (heading (fs ("ext4"), "Phase 3 - for each AG...", &n), "");
  ck_assert_str_eq (heading (fs ("xfs"), "Pass 1: Checking inodes", &n), "");
  ck_assert_str_eq (heading (fs ("btrfs"), "Pass 1: Checking inodes", &n), "");
  ck_assert_str_eq (heading (fs ("btrfs"), "[0/7] nothing", &n), "");
}
END_TEST

/* Does one of fs's phrases occur in line, in any case? */
static bool
says (const struct fd_fs *f, const char *line)
{
  size_t k;

  for (k = 0; f->checksum_failed[k]; k++)
    if (strcasestr (line, f->checksum_failed[k]))
      return true;
  return false;
}

/* Would the harness keep line l of f's checker output (kept_lines)? */
static bool
kept (const struct fd_fs *f, const char *l)
{
  const char *const *k;

  ck_assert_ptr_nonnull (f->kept_lines);
  l += strspn (l, " \t");
  for (k = f->kept_lines; *k; k++)
    if (strncmp (l, *k, strlen (*k)) == 0)
      return true;
  return false;
}

/* Each checker's pass headings and pass times survive an output too
 * long to hold: what pass_heading and passes read is kept.
 */
START_TEST (test_kept_lines)
{
  static const struct {
    const char *fs, *line;
  } lines[] = {
      {"ext4", "Pass 1: Checking inodes"},
      {"ext4", "Pass 1: Memory used: 132k/0k (38k/95k), time:  0.00/ 0.00"},
      {"ext3", "Pass 5: Checking group summary information"},
      {"chunkfs", "Pass 4: Checking"},
      {"chunkfs", "Pass 3: time 0.1 s"},
      {"xfs", "Phase 3 - for each AG..."},
      {"xfs", "        XFS_REPAIR Summary    Sun Dec  6 13:01:32 2026"},
      {"xfs", "Phase 2:\t12/06 13:01:32\t12/06 13:01:33\t1 second"},
      {"btrfs", "[2/7] checking extents"},
  };
  struct fd_pass p[2];
  size_t i;
  int n;
  char line[128];

  for (i = 0; i < sizeof lines / sizeof lines[0]; i++) {
    const struct fd_fs *f = fs (lines[i].fs);
    ck_assert_msg (kept (f, lines[i].line), "%s drops '%s'", lines[i].fs,
                   lines[i].line);
    /* xfs_repair's phase times follow its summary's title. */
    snprintf (line, sizeof line, "XFS_REPAIR Summary\n%s\n", lines[i].line);
    ck_assert_msg (*heading (f, lines[i].line, &n) ||
                       f->passes (line, p, 2) > 0 ||
                       strstr (lines[i].line, "Summary"),
                   "%s reads nothing in '%s'", lines[i].fs, lines[i].line);
  }
  /* A checker's other lines are not kept: the point of the list. */
  ck_assert (!kept (fs ("ext4"), "Inode 12 has illegal block(s)."));
  ck_assert (!kept (fs ("xfs"), "        - agno = 0"));
  ck_assert (!kept (fs ("btrfs"), "Opening filesystem to check..."));
}
END_TEST

START_TEST (test_checksum_words)
{
  ck_assert (says (fs ("ext4"), "Inode 12 passes checks, but checksum does "
                                "not match inode.  Fix? no"));
  ck_assert (says (fs ("ext3"), "One or more block group descriptor "
                                "checksums are invalid.  Fix? no"));
  ck_assert (says (fs ("xfs"), "Metadata CRC error detected at 0x4d5a3"));
  ck_assert (says (fs ("xfs"), "bad CRC for inode 131"));
  ck_assert (says (fs ("btrfs"), "checksum verify failed on 30408704 wanted "
                                 "0x1 found 0x2 level 0"));
  ck_assert (says (fs ("chunkfs"), "inode 12: bad checksum"));
  /* A pass that checks checksums found none failed. */
  ck_assert (!says (fs ("btrfs"), "[5/7] checking csums against data"));
  ck_assert (!says (fs ("ext4"), "Pass 1: Checking inodes, blocks, and "
                                 "sizes"));
}
END_TEST

/* The token after opt in argv, or NULL. */
static const char *
after (char *const *argv, const char *opt)
{
  for (; *argv && argv[1]; argv++)
    if (strcmp (*argv, opt) == 0)
      return argv[1];
  return NULL;
}

/* s is a random (version 4, RFC 4122 variant) UUID. */
static bool
is_uuid4 (const char *s)
{
  size_t i;

  if (strlen (s) != 36 || s[14] != '4' || !strchr ("89ab", s[19]))
    return false;
  for (i = 0; i < 36; i++) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash != (s[i] == '-') || (!dash && !strchr ("0123456789abcdef", s[i])))
      return false;
  }
  return true;
}

/* What fd_fs_mkfs_argv gave ext4 for seed 5 before xfs, btrfs and
 * chunkfs took UUIDs from the seed too (a4de238): theirs must not move
 * ext4's, whose hash seed places its directories.
 */
#define EXT4_SEED5_UUID "6fa1158f-e8b8-44db-a98c-2f954890f4d0"

/* e2fsprogs' mkfs takes its UUID and hash seed from the trial's seed:
 * the same for the same seed, another for another, and UUIDs of the
 * random form mke2fs would have drawn.
 */
START_TEST (test_mkfs_identity)
{
  const char *const names[] = {"ext4", "ext3"};
  struct fd_mkfs_argv a, b, c;
  size_t i;

  for (i = 0; i < 2; i++) {
    fd_fs_mkfs_argv (fs (names[i]), "/dev/x", 5, 0, &a);
    fd_fs_mkfs_argv (fs (names[i]), "/dev/x", 5, 0, &b);
    fd_fs_mkfs_argv (fs (names[i]), "/dev/x", 6, 0, &c);
    ck_assert_ptr_nonnull (after (a.argv, "-U"));
    ck_assert_ptr_nonnull (after (a.argv, "-E"));
    ck_assert_str_eq (after (a.argv, "-U"), after (b.argv, "-U"));
    ck_assert_str_eq (after (a.argv, "-E"), after (b.argv, "-E"));
    ck_assert_str_ne (after (a.argv, "-U"), after (c.argv, "-U"));
    ck_assert_str_ne (after (a.argv, "-E"), after (c.argv, "-E"));
    ck_assert_str_ne (after (a.argv, "-U"),
                      after (a.argv, "-E") + strlen ("hash_seed="));
    ck_assert (is_uuid4 (after (a.argv, "-U")));
    ck_assert (strncmp (after (a.argv, "-E"), "hash_seed=", 10) == 0);
    ck_assert (is_uuid4 (after (a.argv, "-E") + 10));
  }
  /* The UUID ext4 has had for seed 5 since seeds gave it one. */
  fd_fs_mkfs_argv (fs ("ext4"), "/dev/x", 5, 0, &a);
  ck_assert_str_eq (after (a.argv, "-U"), EXT4_SEED5_UUID);
  /* No placeholder left, and the device where "{dev}" was. */
  fd_fs_mkfs_argv (fs ("xfs"), "/dev/x", 5, 0, &a);
  for (i = 0; a.argv[i]; i++)
    ck_assert (strchr (a.argv[i], '{') == NULL);
  ck_assert_str_eq (a.argv[i - 1], "/dev/x");
}
END_TEST

/* The UUID a file system's mkfs line gives it (xfs: "-m uuid=U"). */
static const char *
uuid_of (struct fd_mkfs_argv *a)
{
  const char *m = after (a->argv, "-m");

  return m ? (strncmp (m, "uuid=", 5) == 0 ? m + 5 : NULL)
           : after (a->argv, "-U");
}

/* xfs, btrfs and chunkfs take theirs from the seed too: the same for
 * the same seed, and none shared between file systems of one seed (ext4
 * and ext3 share theirs) or between a seed's first UUID and the next
 * ones (a disk of the same seed attached beside).
 */
START_TEST (test_mkfs_uuids)
{
  const char *const names[] = {"ext4", "xfs", "btrfs", "chunkfs"};
  char seen[4 * 3][37];
  size_t i, j, n = 0;

  for (i = 0; i < 4; i++) {
    struct fd_mkfs_argv a, b;
    unsigned attempt;

    for (attempt = 0; attempt < 3; attempt++) {
      fd_fs_mkfs_argv (fs (names[i]), "/dev/x", 77, attempt, &a);
      fd_fs_mkfs_argv (fs (names[i]), "/dev/x", 77, attempt, &b);
      ck_assert_msg (uuid_of (&a) != NULL, "%s: no UUID", names[i]);
      ck_assert (is_uuid4 (uuid_of (&a)));
      ck_assert_str_eq (uuid_of (&a), uuid_of (&b));
      snprintf (seen[n++], sizeof seen[0], "%s", uuid_of (&a));
    }
    fd_fs_mkfs_argv (fs (names[i]), "/dev/x", 78, 0, &b);
    ck_assert_str_ne (seen[n - 3], uuid_of (&b));
  }
  for (i = 0; i < n; i++)
    for (j = i + 1; j < n; j++)
      ck_assert_msg (strcmp (seen[i], seen[j]) != 0, "%zu, %zu: %s", i, j,
                     seen[i]);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"headings", test_headings},     {"checksum-words", test_checksum_words},
      {"kept-lines", test_kept_lines}, {"mkfs-identity", test_mkfs_identity},
      {"mkfs-uuids", test_mkfs_uuids},
  };

  return fd_check_main ("adapters", cases, sizeof cases / sizeof cases[0]);
}
