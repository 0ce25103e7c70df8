/* chunkfs — the checker (fsck.chunkfs's engine, also the fuzz target's).
 *
 * Incremental by default: the chunks the dirty map and their headers say
 * are dirty or damaged, plus every chunk a repair touches (a chunk whose
 * inode lost a name, or gains a back-reference, is checked too).  With
 * `full`, every initialised chunk.  Each chunk goes through five passes
 * (FORMAT.md "What a chunk check reads"); a problem is found, reported
 * with its code from the problem table, and fixed or not by the mode.
 */
#ifndef CHUNKFS_CHECK_H
#define CHUNKFS_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "chunkfs/io.h"

/* e2fsck's exit-code bits. */
#define CFS_EXIT_CORRECTED   1
#define CFS_EXIT_UNCORRECTED 4
#define CFS_EXIT_ERROR       8
#define CFS_EXIT_USAGE       16

enum cfs_check_mode {
  CFS_CHECK_NO,    /* -n: change nothing, answer no */
  CFS_CHECK_YES,   /* -y: fix everything */
  CFS_CHECK_PREEN, /* -p: fix what is safe, stop at the rest */
  CFS_CHECK_ASK,   /* ask on the terminal */
};

#define CFS_CHECK_PASSES 6 /* pass 0 (superblock, map, headers) .. 5 */

struct cfs_check_opts {
  enum cfs_check_mode mode;
  bool full;         /* -f */
  FILE *out;         /* messages (NULL: none) */
  int progress_fd;   /* -C FD: "pass done total device" lines; -1 none */
  const char *name;  /* the device, for messages */
  uint32_t max_work; /* stop after checking this many chunks (0: all) */
};

struct cfs_check_result {
  unsigned exit;            /* CFS_EXIT_* bits */
  uint32_t chunks, checked; /* in the file system; checked this run */
  uint64_t problems, fixed;
  uint64_t files, blocks_used;     /* in the chunks checked */
  double pass_s[CFS_CHECK_PASSES]; /* wall seconds per pass */
};

/* Check (and repair, by the mode) the chunkfs on io.  Never crashes or
 * loops on any image: every pointer is checked before it is followed.
 */
extern void cfs_check (struct cfs_io *io, const struct cfs_check_opts *o,
                       struct cfs_check_result *res);

#endif
