/* chunkfs — the I/O-manager table every chunkfs tool reaches storage
 * through, in the spirit of e2fsprogs' io_manager: a file or block
 * device, an NBD server (libnbd), and a fault-injecting manager for unit
 * tests (test_io's idea: fail chosen operations, flip bits, lose what was
 * not flushed).
 *
 * Block-granular on purpose: chunkfs reads and writes whole 4096-byte
 * blocks, so an error is always a whole block's, as a checksum is.
 */
#ifndef CHUNKFS_IO_H
#define CHUNKFS_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CFS_BLOCK 4096

/* An error: what failed, naming the device or block. */
struct cfs_err {
  char msg[256];
};

/* Fill err with a printf-style message and return -1, so that a failing
 * path reads `return cfs_fail (err, "...", ...);`.
 */
extern int cfs_fail (struct cfs_err *err, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

struct cfs_io;

struct cfs_io_manager {
  const char *name;
  /* Open `where` (a path, or a URI for the nbd manager) for reading, and
   * for writing if `writable`.  NULL with err.
   */
  struct cfs_io *(*open) (const char *where, bool writable,
                          struct cfs_err *err);
  /* count blocks at block; 0, or -1 with err (an I/O error is EIO). */
  int (*read) (struct cfs_io *io, uint64_t block, uint32_t count, void *buf,
               struct cfs_err *err);
  /* fua: durable before it returns. */
  int (*write) (struct cfs_io *io, uint64_t block, uint32_t count,
                const void *buf, bool fua, struct cfs_err *err);
  int (*flush) (struct cfs_io *io, struct cfs_err *err);
  /* count blocks read as zeros afterwards (punched, trimmed or written). */
  int (*zero) (struct cfs_io *io, uint64_t block, uint32_t count,
               struct cfs_err *err);
  /* The device's size in whole blocks. */
  uint64_t (*blocks) (struct cfs_io *io);
  /* Close; what was not flushed may be lost. */
  int (*close) (struct cfs_io *io, struct cfs_err *err);
  /* Let plain writes return before they reach the device, up to `bytes`
   * queued (cfs_write_behind); NULL where writes are already cheap to
   * issue (a file's land in the page cache).
   */
  int (*write_behind) (struct cfs_io *io, size_t bytes, struct cfs_err *err);
};

/* A file or block device (pread/pwrite; O_DIRECT is not used). */
extern const struct cfs_io_manager cfs_unix_io;

/* An NBD export through libnbd: nbd://HOST[:PORT][/EXPORT] or
 * nbd+unix:///EXPORT?socket=PATH (no privileges, no kernel module).
 */
extern const struct cfs_io_manager cfs_nbd_io;

/* The manager for `where`: nbd for "nbd://", "nbds://", "nbd+unix://",
 * else unix.
 */
extern const struct cfs_io_manager *cfs_io_for (const char *where);

/* Open with the manager cfs_io_for picks. */
extern struct cfs_io *cfs_open (const char *where, bool writable,
                                struct cfs_err *err);

/* The calls, through the channel's manager. */
extern int cfs_read (struct cfs_io *io, uint64_t block, uint32_t count,
                     void *buf, struct cfs_err *err);
extern int cfs_write (struct cfs_io *io, uint64_t block, uint32_t count,
                      const void *buf, bool fua, struct cfs_err *err);
extern int cfs_flush (struct cfs_io *io, struct cfs_err *err);
extern int cfs_zero (struct cfs_io *io, uint64_t block, uint32_t count,
                     struct cfs_err *err);
extern uint64_t cfs_blocks (struct cfs_io *io);
extern int cfs_close (struct cfs_io *io, struct cfs_err *err);

/* Write-behind, for a long-lived writer such as the FUSE mount: a plain
 * (non-FUA) write returns once queued, at most `bytes` of them, and an
 * error of one is returned by the next flush, FUA write, zero or write
 * (as a kernel reports a write-back error at fsync); reads, zeros,
 * flushes and FUA writes wait for every write before them.
 * The nbd manager runs an I/O thread for it (start it after any fork);
 * for the others this does nothing.  The checker and mkfs stay
 * synchronous, so each error names its own block.  0, or -1 with err
 * (the channel stays synchronous).
 */
extern int cfs_write_behind (struct cfs_io *io, size_t bytes,
                             struct cfs_err *err);

/* ---- the fault-injecting manager, for unit tests ----
 *
 * Wraps another open channel.  Counts reads and writes from 1; the
 * faults are set before or between operations.
 */
struct cfs_test_faults {
  uint64_t fail_read;   /* fail the Nth read (0: never) */
  uint64_t fail_write;  /* fail the Nth write (0: never) */
  uint64_t flip_block;  /* flip a bit of every read of this block... */
  uint32_t flip_bit;    /* ...this bit (0..32767) */
  bool flip;            /* ...when set */
  bool volatile_writes; /* writes stay in a cache until flush or FUA */
  uint64_t bad_block;   /* every read of this block fails... */
  bool bad;             /* ...when set, until the block is written */
};

/* A test channel over `inner` (it takes ownership). */
extern struct cfs_io *cfs_test_io (struct cfs_io *inner,
                                   const struct cfs_test_faults *f);

/* Change the faults; how many reads and writes were seen. */
extern void cfs_test_io_set (struct cfs_io *io,
                             const struct cfs_test_faults *f);
extern void cfs_test_io_counts (struct cfs_io *io, uint64_t *reads,
                                uint64_t *writes);
/* How many reads ran into the bad block. */
extern uint64_t cfs_test_io_bad_reads (struct cfs_io *io);

/* Power cut: drop every write not yet flushed, as a volatile cache
 * would (only with volatile_writes).
 */
extern void cfs_test_io_drop_unflushed (struct cfs_io *io);

#endif
