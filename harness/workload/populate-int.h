/* futuredisk — harness: what a populated file holds and how it is
 * written (populate-file.c), shared by the mixed tree and the crash
 * workload (populate.c), the other trees (trees.c) and the audit
 * (audit.c).  Not for other callers.
 */
#ifndef FUTUREDISK_POPULATE_INT_H
#define FUTUREDISK_POPULATE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "faultmodels/error.h"
#include "populate.h"

/* Every 4 KiB block of file data starts with these 8 bytes, then the
 * file id, the block index and the generation (8 bytes each).
 */
extern const char fd_block_magic[8];

/* Block blk of file id, as the populate writes it (FD_BLOCK bytes). */
extern void fd_block_fill (unsigned char *b, uint64_t seed, uint64_t id,
                           uint64_t blk);

/* h folded with n bytes at p: the content hash's step. */
extern uint64_t fd_populate_hash_bytes (uint64_t h, const unsigned char *p,
                                        size_t n);

/* Is byte offset off of e in the hole of a sparse file?  Its first half
 * is one: it reads as zeros.
 */
extern bool fd_populate_in_hole (const struct fd_entry *e, uint64_t off);

/* How a file's data is made durable before it is closed. */
enum fd_sync_how {
  FD_NO_SYNC,
  FD_FSYNC,
  FD_FDATASYNC
};

/* fsync, fdatasync or nothing; -1 with errno as they set it. */
extern int fd_populate_sync_fd (int fd, enum fd_sync_how how);

/* e's content from byte `from` to its end, into fd (named full in
 * errors): a write per run of blocks outside the hole.
 */
extern int fd_populate_write_range (int fd, const char *full, uint64_t seed,
                                    const struct fd_entry *e, uint64_t from,
                                    struct fm_err *err);

/* The hash of e's whole content, as the audit will read it. */
extern uint64_t fd_populate_content_hash (uint64_t seed,
                                          const struct fd_entry *e);

/* Create e's file at full (it must not exist), write it whole, make it
 * durable as `how` says; e->hash is set.
 */
extern int fd_populate_write (const char *full, uint64_t seed,
                              struct fd_entry *e, enum fd_sync_how how,
                              struct fm_err *err);

/* Allocate e's file without writing it (metadata only; see
 * fd_manifest.deferred); e->hash is 0.
 */
extern int fd_populate_allocate (const char *full, struct fd_entry *e,
                                 struct fd_manifest *m, struct fm_err *err);

/* Create e's file at full (it must not exist), empty, to be given its
 * blocks later by fd_populate_fallocate; e->hash is 0.
 */
extern int fd_populate_create (const char *full, struct fd_entry *e,
                               struct fm_err *err);

/* Give the existing file at full e->size bytes of blocks, unwritten. */
extern int fd_populate_fallocate (const char *full, const struct fd_entry *e,
                                  struct fm_err *err);

/* Append e to m; -1 when out of memory. */
extern int fd_manifest_push (struct fd_manifest *m, const struct fd_entry *e);

/* The mixed tree's size of file i: lognormal around 8 KiB, one in ten
 * from a Pareto tail above 256 KiB; at most cap.
 */
extern uint64_t fd_populate_size (uint64_t seed, uint64_t i, uint64_t cap);

/* Make e (e->type FD_FILE, e->size and e->id set) at full, without
 * syncing: written block by block, or with m->meta_only allocated
 * (fallocate, or sparse and listed in m->unallocated) and left
 * unwritten.  e->hash is set.
 */
extern int fd_populate_file (const char *full, uint64_t seed,
                             struct fd_entry *e, struct fd_manifest *m,
                             struct fm_err *err);

/* syncfs(2) of root's file system, and fsync of root (what reaches a FUSE
 * file system).
 */
extern void fd_populate_sync (const char *root);

/* Where the populate's own writeback has got to: manifest entries before
 * `from` are written back.
 */
struct fd_writeback {
  size_t from;
  uint64_t bytes; /* the manifest's bytes when it got there */
  uint64_t batch; /* fd_writeback_batch of the file system */
};

/* How much data the populate leaves to write back at once on a file
 * system of fs_bytes: a 64th of it, at most 256 MiB, at least 1 MiB.
 * Few enough dirty bytes that ext4 never finds them near its free space
 * (at two thirds of it, it starts the kernel's writeback itself).
 */
extern uint64_t fd_writeback_batch (uint64_t fs_bytes);

/* Start writeback (sync_file_range) of the data of the files from
 * wb->from on, in the manifest's order, from this thread, once they
 * hold wb->batch bytes (with all: whatever they hold); durable no
 * sooner.  Left to the kernel, a flusher thread on any CPU wrote the
 * data back and the file system gave it its blocks there (ext4's small
 * files take them from a preallocation per CPU), when its thresholds and
 * timers said: the layout, so the check's reads, differed between runs
 * of a seed.  In batches rather than each file as it is closed: the
 * kernel, too, places new inodes and directory blocks before the data
 * written around them.  -1 with err naming the file.
 */
extern int fd_populate_writeback (const char *root, const struct fd_manifest *m,
                                  struct fd_writeback *wb, bool all,
                                  struct fm_err *err);

/* The trees other than the mixed one (trees.c). */
extern int fd_populate_tree (const char *root, const struct fd_populate_opts *o,
                             struct fd_manifest *m, struct fm_err *err);

#endif
