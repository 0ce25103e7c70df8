/* chunkfs — making a file system (mkfs.chunkfs's engine, also used by
 * tests).  Lazy: only the superblock and chunk 0 are written, and every
 * other chunk's header zeroed, so 8 TB is made in seconds.
 */
#ifndef CHUNKFS_MKFS_H
#define CHUNKFS_MKFS_H

#include <stdint.h>

#include "chunkfs/format.h"
#include "chunkfs/io.h"

struct cfs_mkfs_opts {
  uint64_t chunk_bytes;     /* power of two, 16 MiB..4 GiB (0: the default) */
  uint64_t bytes_per_inode; /* inode ratio (0: 64 KiB) */
  const char *label;        /* NULL: none */
  const uint8_t *uuid;      /* 16 bytes, or NULL for a random one */
  uint64_t time_ns;         /* mkfs and root times (0: now) */
};

/* The default chunk size: 128 MiB, doubled (up to 4 GiB) while a device
 * of `blocks` would have more than CFS_DEFAULT_CHUNKS chunks.  A full
 * check reads every chunk in use with a seek each, so their number, not
 * the capacity, sets its time; a larger chunk costs a chunk check only
 * its larger bitmaps (the inode table is read up to its mark).
 */
#define CFS_DEFAULT_CHUNKS 2048u
extern uint64_t cfs_default_chunk_bytes (uint64_t blocks);

/* Make a chunkfs on io; the superblock written (with its fields) in *s.
 * -1 with err naming the bad option or the failing block.
 */
extern int cfs_mkfs (struct cfs_io *io, const struct cfs_mkfs_opts *o,
                     struct cfs_super *s, struct cfs_err *err);

#endif
