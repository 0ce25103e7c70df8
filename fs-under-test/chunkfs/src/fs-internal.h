/* chunkfs — the mounted file system's insides, shared by its parts, in
 * layers, each calling only those below it:
 *
 *   fs.c      mount, sync, the operations of fs.h: the entry points
 *   dir.c     directory entries, back-references
 *   xattr.c   extended attributes and ACLs (their operations of fs.h
 *             too, and what fs.c's chmod and unlink need of them)
 *   inode.c   inodes, a file's blocks, continuation chains, attributes
 *   chunk.c   a chunk going dirty, bitmaps, allocation
 *   cache.c   metadata blocks
 *   core.c    the error note, chunk headers, the dirty and
 *             initialised-chunks maps
 *
 * extent.c (extent maps in memory) calls nothing of these.
 */
#ifndef CHUNKFS_FS_INTERNAL_H
#define CHUNKFS_FS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "chunkfs/format.h"
#include "chunkfs/fs.h"
#include "chunkfs/io.h"

#define CFS_DIR_START    (CFS_HEADER_SIZE + 8)
#define CFS_DIR_END      (CFS_BLOCK - 4)
#define CFS_DIRENT_FIXED 16
#define CFS_BACKREFS_PER_BLOCK                                                 \
  ((CFS_BLOCK - CFS_HEADER_SIZE - 4 - 4) / 16) /* 254 */
#define CFS_MAX_CHAIN (1u << 20) /* continuation links followed at most */

/* Blocks of a chunk file data leaves free, for the metadata of what the
 * chunk holds (directory blocks, map leaves, back-references): these
 * cannot go on in another chunk.  A fixed count ran out on chunks of
 * 1 GiB and more, whose thousands of inodes share it (mkdir failed with
 * ENOSPC on a disk 11 % full): 1/64 of the chunk, at least 16 blocks.
 */
#define CFS_META_RESERVE_MIN   16
#define CFS_META_RESERVE_SHIFT 6

/* A cached metadata block.  META blocks carry a block header and are
 * sealed with their chunk's generation when written out; INODES blocks
 * are inode-table blocks (each inode sealed on its own).
 */
enum cblk_kind {
  CBLK_META,
  CBLK_INODES
};

struct cblk {
  uint64_t abs; /* absolute block number */
  uint32_t chunk;
  enum cblk_kind kind;
  bool dirty;
  struct cblk *next; /* hash chain */
  unsigned char d[CFS_BLOCK];
};

struct backref {
  uint32_t ino, src_chunk, src_dir, hash;
};

/* Room for one more in a growing array of back-references (*n used of
 * *alloc): 0, or -1 out of memory.
 */
static inline int
cfs_br_reserve (struct backref **br, uint32_t n, uint32_t *alloc)
{
  uint32_t na;
  struct backref *nb;

  if (n < *alloc)
    return 0;
  na = *alloc ? 2 * *alloc : 64;
  if ((nb = realloc (*br, na * sizeof *nb)) == NULL)
    return -1;
  *br = nb;
  *alloc = na;
  return 0;
}

/* Now, in nanoseconds since the epoch (inode times, header times). */
static inline uint64_t
cfs_now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One 16-byte record of a back-reference block. */
static inline struct backref
cfs_br_decode (const unsigned char *p)
{
  return (struct backref){cfs_get32 (p), cfs_get32 (p + 4), cfs_get32 (p + 8),
                          cfs_get32 (p + 12)};
}

/* Blocks a table of nbr back-references takes. */
static inline uint32_t
cfs_br_blocks (uint32_t nbr)
{
  return (nbr + CFS_BACKREFS_PER_BLOCK - 1) / CFS_BACKREFS_PER_BLOCK;
}

/* Block b of the table of br[nbr] (its block header begun): its record
 * count and records.
 */
static inline void
cfs_br_encode_block (unsigned char *blk, const struct backref *br, uint32_t nbr,
                     uint32_t b)
{
  uint32_t j, n = nbr - b * CFS_BACKREFS_PER_BLOCK;

  if (n > CFS_BACKREFS_PER_BLOCK)
    n = CFS_BACKREFS_PER_BLOCK;
  cfs_put32 (blk + CFS_HEADER_SIZE, n);
  for (j = 0; j < n; j++) {
    const struct backref *r = &br[b * CFS_BACKREFS_PER_BLOCK + j];
    unsigned char *p = blk + CFS_HEADER_SIZE + 4 + 16 * j;
    cfs_put32 (p, r->ino);
    cfs_put32 (p + 4, r->src_chunk);
    cfs_put32 (p + 8, r->src_dir);
    cfs_put32 (p + 12, r->hash);
  }
}

/* Block idx of directory dir, empty (its block header begun on zeros):
 * whose it is, and one unused entry spanning it.
 */
static inline void
cfs_dir_block_empty (unsigned char *blk, uint32_t dir, uint32_t idx)
{
  cfs_put32 (blk + CFS_HEADER_SIZE, dir);
  cfs_put32 (blk + CFS_HEADER_SIZE + 4, idx);
  cfs_put16 (blk + CFS_DIR_START + 12, CFS_DIR_END - CFS_DIR_START);
}

/* A name's hash: what a back-reference keeps of the entry's name, and
 * where a top-level directory goes.
 */
static inline uint32_t
cfs_name_hash (const char *name, size_t len)
{
  return ~cfs_crc32c (~0u, name, len);
}

struct chunk {
  struct cfs_chunk_header h;
  bool bad;      /* header unreadable: nothing in it is used */
  bool touched;  /* made dirty by this mount; cleaned at sync */
  uint32_t hint; /* where the next block search starts */
  struct backref *br;
  uint32_t nbr, abr;
  bool br_loaded, br_changed;
};

struct open_file {
  uint64_t ino;
  uint32_t count;
  bool unlinked;
};

struct cfs_fs {
  struct cfs_io *io;
  struct cfs_super sb;
  struct cfs_geometry g;
  bool writable;
  struct chunk *chunks;
  unsigned char map[CFS_MAP_BLOCKS][CFS_BLOCK]; /* the dirty map */
  bool map_changed[CFS_MAP_BLOCKS];
  /* The initialised-chunks map: a bit set (durably) before its chunk is
   * initialised, never cleared, so the checker skips the chunks whose bit
   * is clear without reading them.
   */
  unsigned char imap[CFS_MAP_BLOCKS / 2][CFS_BLOCK];
  bool imap_changed[CFS_MAP_BLOCKS / 2];
  uint32_t rotor;     /* where the search for a chunk with room goes on */
  uint32_t last_init; /* the chunk initialised last */
  struct cblk **hash;
  size_t nhash, ncached;
  struct open_file *open;
  size_t nopen, aopen;
  /* Data blocks freed since the last sync: not reused before it, so a
   * crash never finds a file's durable block map pointing at another
   * file's newer data.
   */
  struct freed {
    uint32_t c, local, count;
  } * freed;
  size_t nfreed, afreed;
  /* Atimes reads changed in chunks nothing else made dirty: written at
   * the next sync (as lazytime does), so a read never leaves a clean
   * chunk dirty for a crash to find.
   */
  struct lazy_atime {
    uint64_t ino, atime;
    uint32_t generation;
  } * lazy;
  size_t nlazy, alazy;
  char errmsg[256];
};

/* An inode and where it lives. */
struct ino {
  uint32_t c, i;
  struct cfs_inode in;
};

static inline uint32_t
ref_chunk (uint64_t ref)
{
  return (uint32_t)(ref >> 32);
}
static inline uint32_t
ref_ino (uint64_t ref)
{
  return (uint32_t)ref;
}

/* ---- core.c: the bottom layer (calls only io.c and format.c) ---- */
/* Note what went wrong (for cfs_fs_error) and return -EIO. */
extern int cfs_fs_eio (struct cfs_fs *fs, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
/* The dirty map and the initialised-chunks map read, the headers read
 * into fs->chunks (a map block that does not check rebuilt from them).
 */
extern int cfs_chunks_load (struct cfs_fs *fs, struct cfs_err *err);
/* Chunk c's header written (with the superblock's copy); -EIO. */
extern int cfs_header_write (struct cfs_fs *fs, uint32_t c, bool fua);
/* The dirty-map bits of chunks [c, c + n) set (and their bits in the
 * initialised-chunks map, with imap), the map blocks that changed
 * written durably; -EIO.
 */
extern int cfs_maps_mark (struct cfs_fs *fs, uint32_t c, uint32_t n, bool imap);
/* Mark chunk c damaged (best effort). */
extern void cfs_damaged (struct cfs_fs *fs, uint32_t c);
/* Sync's last steps: headers clean, map bits cleared. */
extern int cfs_chunks_clean (struct cfs_fs *fs);

/* ---- extent.c ---- */
/* An inode's extents, sorted by lblk, not overlapping. */
struct cfs_extlist {
  struct cfs_extent *v;
  uint32_t n, a;
};
/* Told of each physical run a punch removes. */
typedef void (*cfs_el_fn) (void *opaque, uint32_t start, uint32_t len,
                           bool unwritten);
/* Room for `more` extents: 0, or -1 out of memory. */
extern int cfs_el_reserve (struct cfs_extlist *l, uint32_t more);
extern void cfs_el_free (struct cfs_extlist *l);
/* The first extent ending after lblk (l->n if none). */
extern uint32_t cfs_el_search (const struct cfs_extlist *l, uint64_t lblk);
/* Unmap [lblk, lblk + len), splitting extents at its edges; fn (if
 * given) hears of every run unmapped.  0, or -1 out of memory.
 */
extern int cfs_el_punch (struct cfs_extlist *l, uint64_t lblk, uint64_t len,
                         cfs_el_fn fn, void *opaque);
/* Map e over a hole, merged with its neighbours where they join.  0, or
 * -1 out of memory.
 */
extern int cfs_el_insert (struct cfs_extlist *l, const struct cfs_extent *e);

/* ---- cache.c ---- */
/* The block, read and checked (magic for META) unless `create` (then
 * zeroed, with a block header of magic for META).  NULL with -EIO noted.
 */
extern struct cblk *cfs_cache_get (struct cfs_fs *fs, uint32_t chunk,
                                   uint32_t local, enum cblk_kind kind,
                                   const char *magic, bool create);
/* Mark modified (its chunk must be touched already). */
extern void cfs_cache_dirty (struct cfs_fs *fs, struct cblk *b);
/* Forget a block that was freed (it may become file data). */
extern void cfs_cache_drop (struct cfs_fs *fs, uint64_t abs);
extern void cfs_cache_drop_range (struct cfs_fs *fs, uint64_t abs,
                                  uint64_t count);
/* Write every modified block out; -EIO. */
extern int cfs_cache_writeback (struct cfs_fs *fs);
/* Write back when over the limit, then drop the clean blocks. */
extern int cfs_cache_trim (struct cfs_fs *fs);
extern void cfs_cache_free (struct cfs_fs *fs);

/* ---- chunk.c ---- */
/* Make chunk c dirty on disk before its first change (initialising an
 * uninitialised chunk); -EIO or -EROFS.
 */
extern int cfs_touch (struct cfs_fs *fs, uint32_t c);
/* Does chunk c have room for a new inode (and some blocks)? */
extern bool cfs_has_room (struct cfs_fs *fs, uint32_t c, bool dir);
/* A chunk with room: `near` if it has, else the next one that has. */
extern int cfs_pick_chunk (struct cfs_fs *fs, uint32_t near, bool dir,
                           uint32_t *c);
/* A free block of c at or after goal (chunk-local), allocated, c
 * touched: 0 with *local (0 when c is full), or -errno.
 */
extern int cfs_alloc_block (struct cfs_fs *fs, uint32_t c, uint32_t goal,
                            bool meta, uint32_t *local);
/* Up to `want` free blocks of c in one run, at or after goal if it can
 * (else anywhere), allocated, c touched: 0 with *first and *got (0 when
 * c is full), or -errno.
 */
extern int cfs_alloc_extent (struct cfs_fs *fs, uint32_t c, uint32_t goal,
                             uint32_t want, bool meta, uint32_t *first,
                             uint32_t *got);
/* count contiguous blocks (for back-reference tables). */
extern int cfs_alloc_run (struct cfs_fs *fs, uint32_t c, uint32_t count,
                          uint32_t *first);
extern int cfs_free_block (struct cfs_fs *fs, uint32_t c, uint32_t local);
/* Free count blocks from local (at the next sync, as cfs_free_block). */
extern int cfs_free_extent (struct cfs_fs *fs, uint32_t c, uint32_t local,
                            uint32_t count);
extern int cfs_alloc_inode (struct cfs_fs *fs, uint32_t c, uint32_t *i);
extern int cfs_free_inode (struct cfs_fs *fs, uint32_t c, uint32_t i);
/* The blocks freed since the last sync become free (sync calls it). */
extern int cfs_release_freed (struct cfs_fs *fs);

/* ---- inode.c ---- */
extern int cfs_iget (struct cfs_fs *fs, uint64_t ref, struct ino *n);
extern int cfs_iput (struct cfs_fs *fs, struct ino *n);
/* An inode a file operation may use: in use, not a continuation (else
 * -ESTALE: a handle naming a freed or reused slot).
 */
extern int cfs_iget_file (struct cfs_fs *fs, uint64_t ref, struct ino *n);
/* n's attributes, as cfs_getattr returns them. */
extern int cfs_inode_attr (struct cfs_fs *fs, struct ino *n,
                           struct cfs_attr *a);
/* n's atime waiting for the next sync (fs->lazy), or NULL. */
extern struct lazy_atime *cfs_lazy_find (struct cfs_fs *fs,
                                         const struct ino *n);
/* n's atime, one waiting for the sync included. */
extern uint64_t cfs_atime (struct cfs_fs *fs, const struct ino *n);
/* The chunk-local block at index idx of n's own range (0: a hole); with
 * alloc, allocated (*fresh: just now; ENOSPC when the chunk is full:
 * *full set).
 */
extern int cfs_bmap (struct cfs_fs *fs, struct ino *n, uint64_t idx, bool alloc,
                     uint32_t goal, uint32_t *local, bool *full, bool *fresh);
/* The absolute block of file block lblk of the file whose head is h (0:
 * a hole).  With alloc, allocated (an unwritten block becomes written),
 * the chain extended as needed; h is updated in memory and on disk.
 * *fresh says it was just allocated (or was unwritten): the caller
 * writes all of it.
 */
extern int cfs_file_block (struct cfs_fs *fs, struct ino *h, uint64_t lblk,
                           bool alloc, uint64_t *abs, bool *fresh);
/* A run of a file's blocks: count blocks from abs (0: a hole of count
 * blocks, UINT64_MAX past the end of the map), unwritten (read as
 * zeros), fresh (just allocated).
 */
struct cfs_fmap {
  uint64_t abs, count;
  bool unwritten, fresh;
};
/* What file block lblk of h's file maps to, as a run. */
extern int cfs_file_map (struct cfs_fs *fs, struct ino *h, uint64_t lblk,
                         struct cfs_fmap *m);
/* The run at lblk, allocated (as unwritten, if asked) where it was a
 * hole, at most count blocks; the chain extended as needed.
 */
extern int cfs_file_alloc (struct cfs_fs *fs, struct ino *h, uint64_t lblk,
                           uint64_t count, bool unwritten, struct cfs_fmap *m);
/* The mapped blocks of [lblk, lblk + count) made unwritten (read as
 * zeros from now on) or written.
 */
extern int cfs_file_mark (struct cfs_fs *fs, struct ino *h, uint64_t lblk,
                          uint64_t count, bool unwritten);
/* The blocks of [lblk, lblk + count) unmapped and freed (a hole). */
extern int cfs_file_punch (struct cfs_fs *fs, struct ino *h, uint64_t lblk,
                           uint64_t count);
/* The absolute block of n's first extent leaf; -ENOENT if it has none. */
extern int cfs_first_leaf (struct cfs_fs *fs, struct ino *n, uint64_t *abs);
/* Free the blocks of the file from byte `size` on (whole blocks), and
 * continuations past it.  h is written.
 */
extern int cfs_truncate_blocks (struct cfs_fs *fs, struct ino *h,
                                uint64_t size);
/* Blocks allocated to the file (data and extent leaves, all
 * continuations).
 */
extern int cfs_count_blocks (struct cfs_fs *fs, struct ino *h,
                             uint64_t *blocks);

/* ---- xattr.c ---- */
/* The namespaces of entries (FORMAT.md, "Extended attributes"). */
enum {
  CFS_XATTR_USER = 1,
  CFS_XATTR_TRUSTED = 2,
  CFS_XATTR_SECURITY = 3,
  CFS_XATTR_ACL_ACCESS = 4,
  CFS_XATTR_ACL_DEFAULT = 5,
};
#define CFS_XATTR_START       (CFS_HEADER_SIZE + 8) /* entries in an xattr block */
#define CFS_XATTR_END         (CFS_BLOCK - 4)
#define CFS_XATTR_MAX_ENTRIES ((CFS_XATTR_END - CFS_XATTR_START) / 5)

struct cfs_xent {
  uint8_t ns, nlen;
  uint16_t vlen;
  const unsigned char *name, *value;
};
/* The entries of an area (in-inode or an xattr block's), checked: well
 * formed, within it, names valid and unique, ACLs valid, zero after the
 * last.  0
 * with ents[*n], or -1 with why.
 */
extern int cfs_xattr_scan (const unsigned char *area, size_t len,
                           struct cfs_xent *ents, size_t max, size_t *n,
                           const char **why);
/* Bytes the entries of a (scanned) area take. */
extern size_t cfs_xattr_list_len (const unsigned char *area, size_t len);
/* n's access ACL (if any) rewritten to its mode after a chmod; the
 * caller writes n.
 */
extern int cfs_acl_chmod (struct cfs_fs *fs, struct ino *n);
/* n's attributes gone and its xattr block freed; the caller writes n. */
extern int cfs_xattr_free (struct cfs_fs *fs, struct ino *n);

/* ---- dir.c ---- */
struct dirent_loc {
  uint64_t abs; /* the directory block */
  uint32_t off; /* of the entry in it */
  uint64_t target;
  uint32_t generation;
  uint8_t type;
};
extern int cfs_dir_find (struct cfs_fs *fs, struct ino *dir, const char *name,
                         struct dirent_loc *loc);
/* Add an entry (and the back-reference when the target is elsewhere). */
extern int cfs_dir_add (struct cfs_fs *fs, struct ino *dir, const char *name,
                        uint64_t target, uint32_t generation, uint8_t type);
extern int cfs_dir_remove (struct cfs_fs *fs, struct ino *dir,
                           const char *name);
/* Point an existing entry at another target. */
extern int cfs_dir_retarget (struct cfs_fs *fs, struct ino *dir,
                             const char *name, uint64_t target,
                             uint32_t generation, uint8_t type);
extern int cfs_dir_is_empty (struct cfs_fs *fs, struct ino *dir);
extern int cfs_dir_iterate (struct cfs_fs *fs, struct ino *dir, uint64_t cookie,
                            cfs_dirent_fn fn, void *opaque);
extern int cfs_backrefs_load (struct cfs_fs *fs, uint32_t c);
extern int cfs_backrefs_write (struct cfs_fs *fs, uint32_t c);

#endif
