/* futuredisk — fs-under-test: one adapter per file system the harness
 * tests.
 *
 * An adapter says how to make, mount, check (read-only), repair and time
 * its file system, and how to read its checker's exit code (each
 * checker's man page: e2fsck(8), xfs_repair(8), btrfs-check(8)).  Commands
 * are argv templates in which "{dev}" stands for the block device; the
 * harness runs them (common/proc.h).
 */
#ifndef FUTUREDISK_FSADAPTER_H
#define FUTUREDISK_FSADAPTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "faultmodels/error.h"

/* A checker's run, normalized: the trial record's `outcome`
 * (harness/futuredisk.pod, harness/SCHEMA.md).
 */
#define FD_OUTCOMES(X)                                                         \
  X (CLEAN, "CLEAN")                                                           \
  X (FIXED, "FIXED")                                                           \
  X (UNFIXED, "UNFIXED")                                                       \
  X (CHECKER_ERROR, "CHECKER_ERROR")                                           \
  X (CHECKER_CRASH, "CHECKER_CRASH")                                           \
  X (TIMEOUT, "TIMEOUT")                                                       \
  X (LOOPING, "LOOPING")                                                       \
  X (OOM, "OOM")

enum fd_outcome {
#define FD_OUTCOME_ENUM(id, name) FD_##id,
  FD_OUTCOMES (FD_OUTCOME_ENUM)
#undef FD_OUTCOME_ENUM
};

extern const char *fd_outcome_name (enum fd_outcome o);

/* e2fsck's exit code, a sum of bits (e2fsck(8)): 1 errors corrected, 2
 * corrected and the system should reboot, 4 errors left uncorrected, 8
 * operational error, 16 usage, 32 cancelled, 128 shared-library error;
 * with -n, problems found give 4.  fsck.chunkfs uses the same bits.
 */
extern enum fd_outcome fd_outcome_e2fsck (int status, int signal, bool repair);

#define FD_ARGV_MAX     16
#define FD_ESCALATE_MAX 3

/* For fd_fs.file_ranges: one byte range of a file's data on the device;
 * non-zero stops the walk.
 */
typedef int fd_range_fn (void *opaque, uint64_t offset, uint64_t length);

/* One pass of a checker and its elapsed seconds. */
struct fd_pass {
  char name[32];
  double seconds;
};

struct fd_fs {
  const char *name;
  const char *mount_type; /* mount -t */
  uint64_t min_size;      /* smallest disk its mkfs accepts */
  const char *mount_opts; /* mount -o, or NULL */
  /* Mount with this instead of mount(8) ("{dev}", "{mnt}"): a FUSE file
   * system's own command; unmounting is umount(8) for every file system.
   */
  const char *mount_cmd[FD_ARGV_MAX];
  /* Make the file system ("{uuid}", "{hash_seed}": fd_fs_mkfs_argv). */
  const char *mkfs[FD_ARGV_MAX];
  /* Which of the seed's identities mkfs takes: file systems of one seed
   * attached side by side must not share a UUID (mkfs.btrfs refuses one
   * another device has).  ext4 and ext3 share 0, the first there was.
   */
  unsigned identity;
  const char *check[FD_ARGV_MAX];  /* read-only check, forced */
  const char *repair[FD_ARGV_MAX]; /* repair, answering yes */
  /* The checker's option that writes e2fsck's progress lines ("PASS DONE
   * TOTAL DEVICE", e2fsck(8) -C) to file descriptor 3, or NULL: the
   * harness puts it after the program name when it shows progress.
   */
  const char *progress_opt;
  /* A repair exit code meaning "the log must be replayed first" (xfs: 2;
   * 0 = none), and the repair that destroys the log instead.
   */
  int dirty_log_exit;
  const char *repair_zap_log[FD_ARGV_MAX];
  /* What an administrator runs next when the repair left the file
   * system unmountable, in order (the tools' own documented last
   * resort: a backup superblock, a zeroed log); an empty template ends
   * the list, and a file system with none has no next move.  Their exit
   * codes are read as the repair's (outcome).
   */
  const char *escalate[FD_ESCALATE_MAX][FD_ARGV_MAX];
  /* Or 0: a checker that prints one line this many times in a row is in
   * a loop of its own, known to never end; it is stopped, its outcome
   * LOOPING, instead of running into the timeout.
   */
  unsigned loop_lines;
  /* What a checker run means: exit code (or -1 and the signal). */
  enum fd_outcome (*outcome) (int status, int signal, bool repair);
  /* Per-pass times from the checker's output; returns how many. */
  size_t (*passes) (const char *out, struct fd_pass *p, size_t max);
  /* Does line l (one whole line of the checker's output) begin a pass:
   * its number in *num and a short name in name (len bytes), such as
   * "pass 1b", "phase 3", "step 2/7"?  The harness times the passes on
   * the disk's clock from these and names the pass in progress lines.
   */
  bool (*pass_heading) (const char *l, int *num, char *name, size_t len);
  /* The phrases (NULL-ended, any case) with which the checker reports a
   * checksum that failed, not merely a pass that checks them: the IRON
   * fingerprint's detection by checksum.
   */
  const char *const *checksum_failed;
  /* How the checker's stdout lines that name or time a pass begin
   * (NULL-ended): what the harness keeps of an output too long to hold,
   * so that passes and pass_heading still find them.
   */
  const char *const *kept_lines;
  /* Where metadata or data of one kind lives, for targeted injection:
   * the byte range of the block of `type` belonging to `path` (a file
   * relative to the root) on the unmounted device.  Every adapter knows
   * "data" (the file's first data block) and "inode" (the block holding
   * its inode); some know more (target_types), such as the file's
   * directory, the journal or per-file-system metadata, for which `path`
   * does not matter.  -1 with err naming the type or the failing tool.
   */
  int (*locate) (const char *dev, const char *type, const char *path,
                 uint64_t *offset, uint64_t *length, struct fm_err *err);
  /* The types locate knows, space-separated (the block-type map). */
  const char *target_types;
  /* FIEMAP gives ext4's and xfs's device offsets, but btrfs's own
   * logical addresses: this maps one of those to a device offset (the
   * first copy; NULL where FIEMAP is physical already), so losses can be
   * matched to the fault log.
   */
  int (*fiemap_to_device) (const char *dev, uint64_t addr, uint64_t *offset,
                           struct fm_err *err);
  /* Where FIEMAP cannot say (a FUSE mount has no FIEMAP): the device byte
   * ranges of the data of `path` (relative to root, the mount point),
   * each given to fn in file order; -1 with err.  `uri` is the disk's
   * NBD server (nbd+unix://): it is read there, block by block, while
   * the file system is mounted and nothing writes (the audit's reads),
   * not through the block device, whose read-ahead around a bad sector
   * fails every block near it.  NULL: FIEMAP on the mounted file.
   */
  int (*file_ranges) (const char *uri, const char *root, const char *path,
                      fd_range_fn *fn, void *opaque, struct fm_err *err);
  /* Two copies of one file system (the same UUID) cannot be mounted at
   * once: xfs refuses the second, and btrfs before Linux 6.7 takes them
   * for one file system's two devices.  Crash points check such copies
   * one at a time.
   */
  bool copies_collide;
  /* Or NULL: fallocate(2) allocates a metadata-only file.  Set where
   * the file system cannot allocate without writing (ext3's block maps;
   * glibc's posix_fallocate would write every block): the populate makes
   * each such file sparse at its size, and this gives the inodes inos[]
   * (in any order; one deleted since, or listed twice, is passed over)
   * their blocks on the unmounted device, unwritten.  -1 with err.
   */
  int (*allocate) (const char *dev, uint64_t *inos, size_t n,
                   struct fm_err *err);
};

/* ext3's allocate (ext3alloc.c). */
extern int fd_ext3_allocate (const char *dev, uint64_t *inos, size_t n,
                             struct fm_err *err);

/* The adapter for `name`; NULL with err listing the known ones. */
extern const struct fd_fs *fd_fs_find (const char *name, struct fm_err *err);

/* Fill argv from a template, "{dev}" replaced by dev; fd_fs_argv_at also
 * replaces "{mnt}" by the mount point.
 */
extern void fd_fs_argv_at (const char *const tmpl[FD_ARGV_MAX], const char *dev,
                           const char *mnt, char *argv[FD_ARGV_MAX + 1]);
extern void fd_fs_argv (const char *const tmpl[FD_ARGV_MAX], const char *dev,
                        char *argv[FD_ARGV_MAX + 1]);

/* mkfs's command line, from fs->mkfs: "{dev}" replaced by dev, and
 * "{uuid}" and "{hash_seed}" in a token ("hash_seed={hash_seed}") by two
 * UUIDs derived from seed and fs->identity.  mkfs would draw them at
 * random; they shape the layout (ext4 places directories and orders
 * their entries by the hash seed), so a checker's reads would differ
 * from one trial of a seed to the next, and the bytes of every metadata
 * block that carries them (xfs, btrfs, chunkfs) would too.  `attempt`
 * 0 gives the seed's own; 1, 2, ... others, as reproducible, for when a
 * disk of the same seed is attached beside (FD_MKFS_UUID_TAKEN).
 */
struct fd_mkfs_argv {
  char *argv[FD_ARGV_MAX + 1];
  char text[FD_ARGV_MAX][64]; /* the tokens with a UUID in */
};
extern void fd_fs_mkfs_argv (const struct fd_fs *fs, const char *dev,
                             uint64_t seed, unsigned attempt,
                             struct fd_mkfs_argv *out);

/* What mkfs.btrfs says when the UUID it is given is another device's. */
#define FD_MKFS_UUID_TAKEN "non-unique UUID"

/* For an adapter's passes: one line of a checker's output, from `line`
 * to `end` (a copy, NUL-ended at end, cut at 511 bytes): true with a
 * pass in *p, false if the line names none.
 */
typedef bool fd_pass_line (const char *line, const char *end,
                           struct fd_pass *p);

/* pass_heading for e2fsck's and fsck.chunkfs's "Pass 2: Checking ..."
 * and "Pass 1B: ..." (not their timing lines, "Pass 2: Memory used",
 * "Pass 5: I/O read", "Pass 2: time").
 */
extern bool fd_pass_heading_e2fsck (const char *l, int *num, char *name,
                                    size_t len);

/* The passes `one` finds in the lines of out (none when out is NULL), at
 * most max: how many.
 */
extern size_t fd_pass_lines (const char *out, fd_pass_line *one,
                             struct fd_pass *p, size_t max);

#endif
