/* futuredisk — nbdplugin: the sparse store behind the emulated disk.
 *
 * Bytes live here once the drive has them on its media: in RAM (default)
 * or in a sparse file that survives restarts (store=FILE).  Either way the
 * store keeps only what was written, at 4 KiB granularity, so an 8 TB disk
 * with 1 GiB written costs about 1 GiB.  Unwritten ranges read as zeros
 * and are holes in extents.
 *
 * A file store can be a copy-on-write overlay of another, its base
 * (store=FILE base=BASE): reads of pages the overlay has not written come
 * from the base, every write, zero and trim goes to the overlay, and the
 * base file is only ever opened read-only.  Many overlays share a base.
 *
 * Concurrency: read, write and extents may run in parallel with each other;
 * zero (which frees pages) excludes writes.  Requests on the same bytes at
 * once race as they would on a real disk: a read sees the old bytes, the
 * new ones or zeros, never another offset's.
 */
#ifndef FUTUREDISK_STORE_H
#define FUTUREDISK_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "faultmodels/error.h"

#define STORE_PAGE 4096

struct store;

/* extents callback: a run [offset, offset+length) that is all data or all
 * hole.  Return 0 to go on, 1 to stop early, -1 on error (which extents
 * then returns).
 */
typedef int store_extent_fn (void *opaque, uint64_t offset, uint64_t length,
                             bool hole);

struct store_ops {
  const char *name;
  int (*read) (struct store *s, void *buf, uint64_t count, uint64_t offset);
  int (*write) (struct store *s, const void *buf, uint64_t count,
                uint64_t offset);
  /* Make the range read as zeros.  With punch, whole pages become holes;
   * without (NBD's no-hole zeroing), they stay allocated.
   */
  int (*zero) (struct store *s, uint64_t count, uint64_t offset, bool punch);
  int (*flush) (struct store *s);
  int (*extents) (struct store *s, uint64_t count, uint64_t offset,
                  store_extent_fn *fn, void *opaque);
  uint64_t (*bytes_stored) (struct store *s);
  /* Optional (NULL: nothing to prepare).  Make memory ready for the
   * range to be written (the flat layout faults its own pages in, the
   * hashed one puts fresh pages on its free list), contents unchanged,
   * so that a write there later - a destage, under the drive's lock -
   * does not wait for the kernel to fault fresh pages in.  Called without
   * the drive's lock.
   */
  void (*prepare) (struct store *s, uint64_t count, uint64_t offset);
  /* Optional, both or neither (NULL: the store is written by copying).
   * A write cache that keeps its bytes in the store's own pages can hand
   * a whole page over at destage instead of copying it: one copy of
   * every overwritten byte fewer.
   * lend: n contiguous pages, resident, for the caller to use as it likes
   * until close, which frees them; NULL out of memory.
   * adopt: for each i, if the store holds a page at offsets[i] (page
   * aligned), pages[i] (lent, or handed back by an earlier adopt) holds
   * it from now on, and old[i] is the page it replaces, the caller's now;
   * old[i] is NULL, and nothing changed there, if the store holds none
   * (the caller writes instead).  All n under one exclusive hold: a
   * destage waits for readers' copies once, not once a page.
   * Both may run beside reads and writes of other pages.
   */
  char *(*lend) (struct store *s, size_t n);
  void (*adopt) (struct store *s, char *const *pages, const uint64_t *offsets,
                 char **old, size_t n);
  void (*close) (struct store *s);
};

struct store {
  const struct store_ops *ops;
  uint64_t size;
  struct fm_err err; /* the last failure, for the caller to report */
};

/* RAM store of `size` bytes.  NULL with err filled on failure.  Disks up
 * to STORE_FLAT_MAX get the flat layout where its address space can be
 * reserved; bigger ones, those where it cannot, and those for a write
 * cache (`for_cache`: the store must lend and adopt pages, which only a
 * layout holding pages by pointer can) the hashed one.
 */
extern struct store *store_ram_new (uint64_t size, bool for_cache,
                                    struct fm_err *err);

/* The RAM store's flat layout on its own (store-flat.c), for tests. */
#define STORE_FLAT_MAX (64ULL << 30)
extern struct store *store_flat_new (uint64_t size, struct fm_err *err);
/* How many bytes of a flat store's reserved range are resident, as the
 * kernel reports them (mincore), so tests see what the layout maps rather
 * than the process's RSS, which sanitizers and kernels inflate.  -1 with
 * errno set if the kernel cannot say.
 */
extern int64_t store_flat_resident (struct store *s);

/* Persistent store in `path`: created if missing; an existing file must
 * have been made for the same size and profile, or it is refused.
 */
extern struct store *store_file_open (const char *path, uint64_t size,
                                      const char *profile, struct fm_err *err);

/* Make `path` an overlay of the store `base` (an absolute path, a plain
 * store made for the same size and profile), so that store_file_open
 * opens the two as one disk.  An existing overlay of the same base is
 * kept as it is (a restart); any other existing file is refused.
 */
extern int store_file_make_overlay (const char *path, const char *base,
                                    uint64_t size, const char *profile,
                                    struct fm_err *err);

/* The bytes of the disk in data extents (what bytes_stored reports for
 * the file stores), whatever the layout.  0 if the extents fail.
 */
extern uint64_t store_data_bytes (struct store *s);

/* ---- shared by store-file.c and store-cow.c (store-extents.c) ---- */

/* Extents passed on with adjacent runs of one kind joined: what a store
 * reports must not depend on how its file or files are split up.  Give
 * store_join_extent (opaque: the struct) to ->extents, then call
 * store_join_end for the last run; it returns what extents returns.
 */
struct store_join {
  store_extent_fn *fn;
  void *opaque;
  uint64_t offset, length;
  bool hole, have;
  int rc; /* fn's last answer: 1 stop, -1 error */
};
extern int store_join_extent (void *opaque, uint64_t offset, uint64_t length,
                              bool hole);
extern int store_join_end (struct store_join *j);

/* A plain store opened read-only: an overlay's base. */
extern struct store *store_file_open_base (const char *path, uint64_t size,
                                           const char *profile,
                                           struct fm_err *err);
/* The length of an overlay's bitmap: one bit per page, set when the page
 * is the overlay's own.
 */
extern uint64_t store_cow_map_len (uint64_t size);
/* The overlay `over` (whose first file is fd, with the bitmap at map_at)
 * and its opened base as one store; takes over both (closed on failure).
 * The file store calls it when the file it opens is an overlay, so this
 * side knows nothing of files.
 */
extern struct store *store_cow_wrap (struct store *over, int fd,
                                     uint64_t map_at, struct store *base,
                                     struct fm_err *err);

#endif
