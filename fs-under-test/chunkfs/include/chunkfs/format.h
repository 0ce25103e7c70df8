/* chunkfs — the on-disk format of FORMAT.md as C: the structures, the
 * geometry, and encoders and decoders that write and verify checksums.
 * Decoders never trust a block: tag, version, chunk index and crc32c are
 * checked before any field is used.
 */
#ifndef CHUNKFS_FORMAT_H
#define CHUNKFS_FORMAT_H

#include <stdbool.h>
#include <stdint.h>

#include "chunkfs/io.h"

#define CFS_VERSION          2
#define CFS_SUPER_BLOCK      0 /* the primary superblock */
#define CFS_MAP_BLOCK        1 /* the dirty map: blocks 1..15 */
#define CFS_MAP_BLOCKS       15
#define CFS_FIRST_CHUNK      16
#define CFS_INODE_SIZE       256
#define CFS_INODES_PER_BLOCK (CFS_BLOCK / CFS_INODE_SIZE)
#define CFS_HEADER_SIZE      24 /* the block header of most metadata blocks */
#define CFS_BITS_PER_BITMAP  ((CFS_BLOCK - CFS_HEADER_SIZE - 4) * 8)
#define CFS_ROOT_INO         1
#define CFS_LOST_FOUND_INO   2
#define CFS_MIN_CHUNK_BLOCKS 4096u    /* 16 MiB */
#define CFS_MAX_CHUNK_BLOCKS 1048576u /* 4 GiB */
/* Blocks 1..15 hold the dirty map and, after it, as many blocks of the
 * initialised-chunks map: at most 7 blocks of bits each.
 */
#define CFS_MAX_CHUNKS ((CFS_MAP_BLOCKS / 2) * CFS_BITS_PER_BITMAP)
#define CFS_NO_CHUNK   0xFFFFFFFFu /* the dirty map's chunk index */

/* Superblock feature flags (FORMAT.md "Superblock"): a tool refuses a
 * file system with a bit it does not know.  ITABLE_MARK: chunk headers
 * keep an inode-table mark.
 */
#define CFS_FEATURE_ITABLE_MARK 1u
#define CFS_FEATURES_KNOWN      CFS_FEATURE_ITABLE_MARK
/* The mount raises a chunk's inode-table mark this many slots at a time
 * (one durable header write each time), and starts a chunk with it.
 */
#define CFS_MARK_STEP 64u

/* Block kinds (the magic of their tag). */
#define CFS_MAGIC_SUPER   "CHKS"
#define CFS_MAGIC_HEADER  "CHKH"
#define CFS_MAGIC_BITMAP  "CHKM"
#define CFS_MAGIC_EXTENT  "CHKE"
#define CFS_MAGIC_DIR     "CHKD"
#define CFS_MAGIC_BACKREF "CHKB"
#define CFS_MAGIC_MAP     "CHKY"
#define CFS_MAGIC_XATTR   "CHKA"
#define CFS_MAGIC_INITMAP "CHKT"

enum cfs_chunk_state {
  CFS_UNINIT = 0,
  CFS_CLEAN = 1,
  CFS_DIRTY = 2,
  CFS_DAMAGED = 3,
};

struct cfs_super {
  uint8_t uuid[16];
  uint64_t device_blocks;
  uint32_t chunk_blocks, chunks, inodes_per_chunk;
  uint32_t root_chunk, root_ino, features;
  uint64_t mkfs_time;
  char label[32]; /* NUL-padded; 31 characters at most */
};

struct cfs_chunk_header {
  uint32_t index;
  enum cfs_chunk_state state;
  uint64_t generation;
  uint32_t free_blocks, free_inodes;
  uint64_t checked, cleaned;
  uint32_t backref_block, backref_blocks;
  /* Inode slots from this one on have never been used: all zero (with
   * CFS_FEATURE_ITABLE_MARK; without it, decoded as the whole table).
   * May exceed the table when damaged: the checker says so.
   */
  uint32_t itable_mark;
  struct cfs_super super; /* the copy */
};

/* The mark a chunk starts with (the whole table without the feature). */
static inline uint32_t
cfs_mark_start (const struct cfs_super *s)
{
  if (!(s->features & CFS_FEATURE_ITABLE_MARK) ||
      s->inodes_per_chunk < CFS_MARK_STEP)
    return s->inodes_per_chunk;
  return CFS_MARK_STEP;
}

/* Inode flags. */
#define CFS_INODE_CONT     1u  /* a continuation */
#define CFS_INODE_HAS_CONT 2u  /* continues in another chunk */
#define CFS_INODE_INLINE   4u  /* an inline symlink */
#define CFS_XATTR_INODE    100 /* bytes of in-inode extended attributes */

/* The extent map (FORMAT.md "Extents"): a header and four entries in
 * the inode; depth 0 entries are extents, depth 1 entries index CHKE
 * leaf blocks of extents.
 */
#define CFS_MAP_AREA      56
#define CFS_EXT_ROOT      4  /* entries in the inode */
#define CFS_EXT_START     32 /* the first entry of a CHKE block */
#define CFS_EXT_PER_BLOCK ((CFS_BLOCK - 4 - CFS_EXT_START) / 12) /* 338 */
#define CFS_EXT_MAX       (CFS_EXT_ROOT * CFS_EXT_PER_BLOCK)     /* 1352 */
#define CFS_EXT_MAX_LEN   0x7FFFFFFFu
#define CFS_EXT_UNWRITTEN 0x80000000u

/* An extent: `len` blocks of the inode's own range from `lblk` (counted
 * from its segment's first block) at chunk-local `start`; unwritten ones
 * are allocated but read as zeros.  An index entry: the first lblk its
 * leaf maps, the leaf's block (start) and its extents (len).
 */
struct cfs_extent {
  uint32_t lblk, start, len;
  bool unwritten;
};

static inline void
cfs_ext_get (const unsigned char *p, struct cfs_extent *e)
{
  uint32_t l = (uint32_t)(p[8] | p[9] << 8 | p[10] << 16) | (uint32_t)p[11]
                                                                << 24;

  e->lblk = (uint32_t)(p[0] | p[1] << 8 | p[2] << 16) | (uint32_t)p[3] << 24;
  e->start = (uint32_t)(p[4] | p[5] << 8 | p[6] << 16) | (uint32_t)p[7] << 24;
  e->len = l & CFS_EXT_MAX_LEN;
  e->unwritten = l & CFS_EXT_UNWRITTEN;
}

struct cfs_inode {
  uint16_t mode, flags;
  uint32_t links, uid, gid;
  uint64_t size, atime, mtime, ctime;
  uint32_t generation, chunk;
  uint64_t offset; /* continuation: file offset; directory: parent */
  uint64_t head, next, mapped;
  unsigned char map[CFS_MAP_AREA]; /* the extent map, bytes 88..143 */
  uint64_t rdev;     /* a special file's: its mapping area holds it instead */
  char symlink[100]; /* inline target, NUL-terminated (99 bytes at most) */
  /* Extended attributes in the inode (not an inline symlink's), as
   * entries (xattr.c), and the block holding them when they do not fit.
   */
  unsigned char xattr[CFS_XATTR_INODE];
  uint32_t xattr_block; /* chunk-local, 0: none */
};

/* A fifo, socket or device node: it has no blocks, size 0, and its
 * mapping area holds only rdev (zero for a fifo or socket).
 */
static inline bool
cfs_mode_special (uint16_t mode)
{
  uint16_t t = mode & 0170000;

  return t == 0010000 || t == 0020000 || t == 0060000 || t == 0140000;
}

/* Little-endian fields. */
static inline void
cfs_put16 (unsigned char *p, uint16_t v)
{
  p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8);
}
static inline void
cfs_put32 (unsigned char *p, uint32_t v)
{
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> 8 * i);
}
static inline void
cfs_put64 (unsigned char *p, uint64_t v)
{
  for (int i = 0; i < 8; i++)
    p[i] = (unsigned char)(v >> 8 * i);
}
static inline uint16_t
cfs_get16 (const unsigned char *p)
{
  return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t
cfs_get32 (const unsigned char *p)
{
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}
static inline uint64_t
cfs_get64 (const unsigned char *p)
{
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

static inline void
cfs_ext_put (unsigned char *p, const struct cfs_extent *e)
{
  cfs_put32 (p, e->lblk);
  cfs_put32 (p + 4, e->start);
  cfs_put32 (p + 8, e->len | (e->unwritten ? CFS_EXT_UNWRITTEN : 0));
}

/* The inode map's header: its entries and depth; entry k. */
static inline uint16_t
cfs_map_count (const struct cfs_inode *in)
{
  return cfs_get16 (in->map);
}
static inline uint16_t
cfs_map_depth (const struct cfs_inode *in)
{
  return cfs_get16 (in->map + 2);
}
static inline unsigned char *
cfs_map_entry (struct cfs_inode *in, unsigned k)
{
  return in->map + 8 + 12 * k;
}

/* Are len bytes at p all zero?  (An all-zero block or slot is valid:
 * an uninitialised header, a never-used inode, an empty attribute area.)
 */
static inline bool
cfs_all_zero (const unsigned char *p, size_t len)
{
  while (len--)
    if (*p++)
      return false;
  return true;
}

/* (chunk, inode) packed as in head, next and parent fields. */
static inline uint64_t
cfs_ref (uint32_t chunk, uint32_t ino)
{
  return (uint64_t)chunk << 32 | ino;
}

/* Where a chunk's parts are, in chunk-local blocks. */
struct cfs_geometry {
  uint32_t chunk_blocks, inodes;
  uint32_t block_bitmap, block_bitmap_blocks; /* from 1 */
  uint32_t inode_bitmap, inode_bitmap_blocks;
  uint32_t inode_table, inode_table_blocks;
  uint32_t first_data; /* the first block files may use */
};

extern void cfs_geometry (const struct cfs_super *s, struct cfs_geometry *g);

/* The absolute block of chunk-local block b of chunk c. */
extern uint64_t cfs_block (const struct cfs_super *s, uint32_t c, uint32_t b);

/* How many dirty-map blocks the file system uses (1..15). */
static inline uint32_t
cfs_map_blocks (const struct cfs_super *s)
{
  return (s->chunks + CFS_BITS_PER_BITMAP - 1) / CFS_BITS_PER_BITMAP;
}

/* The first block of the initialised-chunks map (as many blocks as the
 * dirty map, right after it).
 */
static inline uint64_t
cfs_initmap_block (const struct cfs_super *s)
{
  return CFS_MAP_BLOCK + cfs_map_blocks (s);
}

/* crc32c (Castagnoli), continuing from crc (start with ~0 and invert the
 * result, or use cfs_block_crc).
 */
extern uint32_t cfs_crc32c (uint32_t crc, const void *buf, size_t len);

/* The checksum of a metadata region seeded with the file system's UUID. */
extern uint32_t cfs_meta_crc (const uint8_t uuid[16], const void *buf,
                              size_t len);

extern void cfs_super_encode (const struct cfs_super *s, void *blk);
/* -1 with err unless blk is a valid superblock of this version. */
extern int cfs_super_decode (const void *blk, struct cfs_super *s,
                             struct cfs_err *err);

/* The superblock: block 0's, or when that cannot be used, the copy in
 * chunk 0's header, else in chunk 1's (tried for every chunk size).  0,
 * with *copy -1 for block 0 or the chunk whose copy it is; -1 with err
 * saying what was wrong with block 0.
 */
extern int cfs_super_find (struct cfs_io *io, struct cfs_super *s, int *copy,
                           struct cfs_err *err);

extern void cfs_header_encode (const struct cfs_chunk_header *h, void *blk);
/* 0 and h for a valid header of chunk `index` of the file system `uuid`;
 * an all-zero block is a valid uninitialised chunk.  -1 with err.
 */
extern int cfs_header_decode (const void *blk, const uint8_t uuid[16],
                              uint32_t index, struct cfs_chunk_header *h,
                              struct cfs_err *err);

/* Inode slots (256 bytes).  An all-zero slot decodes as a free inode. */
extern void cfs_inode_encode (const uint8_t uuid[16],
                              const struct cfs_inode *in, void *slot);
extern int cfs_inode_decode (const void *slot, const uint8_t uuid[16],
                             uint32_t chunk, struct cfs_inode *in,
                             struct cfs_err *err);

/* The block header of bitmap, extent, directory and back-reference
 * blocks: write it (and later the checksum), or check both.
 */
/* A directory entry at e naming (chunk, ino) of generation gen, of type
 * (the mode's file-type bits >> 12), with name; its length field is left
 * as it is.
 */
extern void cfs_dirent_encode (unsigned char *e, const char *name,
                               uint32_t chunk, uint32_t ino, uint32_t gen,
                               uint8_t type);

extern void cfs_meta_begin (void *blk, const char magic[4], uint16_t flags,
                            uint32_t chunk, uint64_t generation);
extern void cfs_meta_seal (const uint8_t uuid[16], void *blk);
extern int cfs_meta_check (const void *blk, const uint8_t uuid[16],
                           const char magic[4], uint32_t chunk,
                           uint64_t max_generation, struct cfs_err *err);

#endif
