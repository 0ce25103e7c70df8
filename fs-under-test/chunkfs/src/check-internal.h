/* chunkfs — the checker's insides, in layers, each calling only those
 * below it (the shape of e2fsck):
 *
 *   check.c          the entry point, cfs_check: pass 0, the work list
 *   check-chunk.c    the check of one chunk: the passes in order
 *   check-pass1.c .. check-pass5.c, with check-special.c and
 *   check-xattr.c under pass 1 (check-passes.h)
 *   check-preload.c  -f's read of every chunk's metadata in disk order
 *   check-core.c     what the driver and the passes share: maps, remote
 *                    headers, inodes and entries, back-references,
 *                    lost+found
 *   check-io.c       block access (as e2fsck's io_channel)
 *   problem.c        the problem table and ck_fix (e2fsck's fix_problem)
 *
 * The device itself is reached through struct cfs_io (io.h), a table of
 * functions as e2fsprogs' io_manager is.
 */
#ifndef CHUNKFS_CHECK_INTERNAL_H
#define CHUNKFS_CHECK_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "chunkfs/check.h"
#include "chunkfs/format.h"
#include "fs-internal.h" /* struct backref, struct cfs_extlist, ... */

#define CK_MAX_DIR_BLOCKS (1u << 20) /* directory blocks followed at most */
#define CK_HCACHE         256        /* remote chunk headers remembered */
#define CK_BCACHE         262144     /* blocks remembered at most (1 GiB) */
#define CK_RCACHE         8192       /* recent blocks, when it is full */
#define CK_BSLAB          1024       /* blocks allocated at a time */
#define CK_BSLOTS         (4 * CK_BCACHE) /* hash slots: blocks and zeros */
#define CK_BZERO          UINT32_MAX /* bc_at: an all-zero block, no copy */
#define CK_BGONE          UINT64_MAX /* bc_key: a block forgotten */

/* An inode of the chunk being checked. */
struct cino {
  struct cfs_inode in;
  bool used;      /* in use (mode != 0) and valid */
  uint32_t found; /* entries naming it: local, and confirmed back-refs */
  uint32_t subdirs;
  uint64_t named_by; /* directories: the first directory naming it */
  uint32_t *dblocks; /* directories: chunk-local block of each index */
  uint32_t ndblocks;
};

struct brtab; /* check-backref.c */

struct pending {
  uint32_t chunk;
  struct backref br;
};

/* A block that could not be read, and why. */
struct badblock {
  uint64_t abs;
  char why[160];
};

struct hcache {
  uint32_t chunk;
  bool valid, ok;
  bool br_bad; /* its back-reference table could not be read */
  struct cfs_chunk_header h;
};

struct ck {
  struct cfs_io *io;
  const struct cfs_check_opts *o;
  struct cfs_check_result *res;
  struct cfs_super sb;
  struct cfs_geometry g;
  bool write; /* the mode may change the disk */
  unsigned char map[CFS_MAP_BLOCKS][CFS_BLOCK];
  bool map_dirty[CFS_MAP_BLOCKS];
  /* The initialised-chunks map (FORMAT.md): a clear bit lets -f skip the
   * chunk unread; a block that did not check is rebuilt from headers.
   */
  unsigned char imap[CFS_MAP_BLOCKS / 2][CFS_BLOCK];
  bool imap_ok[CFS_MAP_BLOCKS / 2], imap_dirty[CFS_MAP_BLOCKS / 2];
  uint8_t *queued; /* per chunk: 0x80 waiting on the work list; the low
                    * bits count the checks (a chunk is rechecked when a
                    * repair elsewhere changes it, four times at most)
                    */
  uint32_t *work;
  size_t nwork, awork, next;
  struct pending *pend;
  size_t npend, apend;
  struct hcache hc[CK_HCACHE];
  /* The metadata of the chunk being checked (header, bitmaps, inode
   * table: contiguous), read in one request; ck_read serves from it.
   */
  unsigned char *pf;
  uint64_t pf_abs;
  uint32_t pf_n;
  /* Blocks read before, by block number (open addressing, never
   * evicted; up to CK_BCACHE, then nothing more is kept): the inodes,
   * directory blocks and back-references that references into other
   * chunks name are read again and again (every chunk's back-references
   * name the root directory), each a seek.  A checked chunk leaves its
   * header and the inode-table blocks in use here; -f reads every chunk's
   * metadata into it first, in disk order (ck_preload).  Kept up to date
   * by ck_write, the checker's only write.
   */
  unsigned char *bc_slab[CK_BCACHE / CK_BSLAB];
  uint64_t *bc_key;     /* CK_BSLOTS slots: block + 1, 0 for empty */
  uint32_t *bc_at;      /* per slot: the block's place in the slabs */
  uint32_t bc_n;        /* blocks copied */
  uint32_t bc_keys;     /* slots taken */
  bool preload_bitmaps; /* ck_preload keeps bitmap blocks too */
  /* When it is full: the blocks read most recently (direct-mapped,
   * hashed; CK_RCACHE slots).
   */
  unsigned char (*rc)[CFS_BLOCK];
  uint64_t *rc_abs; /* per slot: block + 1, 0 for empty */
  /* Blocks that could not be read: not read again (each read of one
   * costs the drive's error recovery again, 2 minutes on a desktop
   * disk) until ck_write rewrites them.
   */
  struct badblock *bad;
  size_t nbad, abad;
  uint64_t writes; /* ck_write calls so far */
  /* Other chunks' back-reference tables as far as read, per chunk (NULL
   * until asked; check-backref.c).
   */
  struct brtab **brt;
  int pass;
  double pass_t0;
  char errmsg[256];

  /* The chunk being checked. */
  uint32_t c;
  struct cfs_chunk_header h;
  struct cino *ino;     /* g.inodes of them; those from nino on unused */
  struct cino *ino_buf; /* ino, itab, itab_dirty and used live here */
  unsigned char *itab_buf;
  uint8_t *itab_dirty_buf, *used_buf;
  uint32_t nino;       /* slots read: the mark, in whole table blocks */
  bool mark_unknown;   /* the header was rebuilt: the mark is found */
  unsigned char *itab; /* its inode table */
  uint8_t *itab_dirty; /* a byte per table block */
  uint8_t *used;       /* the block bitmap, rebuilt */
  struct backref *br;
  uint32_t nbr, abr;
  bool br_changed;
  bool left;       /* a problem here stays unfixed: write no bitmaps */
  bool incomplete; /* names of its inodes are not all known yet (its
                    * back-reference table is gone, or an entry names a
                    * chunk still to be rebuilt): no orphans, no link
                    * counts until it is checked again */
};

/* ---- problem.c ---- */
/* Problem `code` reported (its message formatted with the arguments)
 * and answered as the mode says: true to fix it.
 */
extern bool ck_fix (struct ck *k, uint32_t code, ...);

/* ---- check-io.c: block access ---- */
extern int ck_read (struct ck *k, uint64_t abs, void *buf);
/* Read blocks [abs, abs + n) in one request, for ck_read to serve; if
 * the request fails, ck_read reads them one by one (so one bad block
 * costs only itself).  n = 0 forgets them.
 */
extern void ck_prefetch (struct ck *k, uint64_t abs, uint32_t n);
/* Read further, to n blocks from the prefetch's first (one request). */
extern void ck_prefetch_more (struct ck *k, uint32_t n);
/* Keep block abs of the prefetched blocks for later ck_reads. */
extern void ck_remember (struct ck *k, uint64_t abs);
/* Keep block abs (buf) for later ck_reads: for good while the cache has
 * room, else among the recent blocks (where another may push it out).
 */
extern void ck_keep (struct ck *k, uint64_t abs, const void *buf);
/* Would ck_read serve block abs from memory? */
extern bool ck_held (const struct ck *k, uint64_t abs);
/* Is the cache full (nothing more kept)? */
extern bool ck_cache_full (const struct ck *k);
/* Is block abs one that could not be read? */
extern bool ck_is_bad (const struct ck *k, uint64_t abs);
extern int ck_write (struct ck *k, uint64_t abs, const void *buf);
/* The blocks kept, the bad-block list and the prefetch freed, at the end. */
extern void ck_io_release (struct ck *k);

/* ---- check-core.c ---- */
/* Pass `pass` begins (-1: none): the time of the one before counted. */
extern void ck_pass (struct ck *k, int pass);
extern void ck_queue (struct ck *k, uint32_t c);
extern void ck_map_set (struct ck *k, uint32_t c, bool on);
/* Chunk c is in use: its bit in the initialised-chunks map must be set
 * (a problem if the map was read and says otherwise).  With `queue`,
 * under -f, the chunk (skipped for it) is queued to be checked.
 */
extern void ck_in_use (struct ck *k, uint32_t c, bool queue);
/* A chunk's header (cached); -1 if unreadable or uninitialised. */
extern int ck_header (struct ck *k, uint32_t c, struct cfs_chunk_header *h);
extern void ck_header_forget (struct ck *k, uint32_t c);
/* Before changing a chunk other than the one being checked: its header
 * dirty, its map bit set, and it queued to be checked itself.
 */
extern int ck_touch_other (struct ck *k, uint32_t c);
/* Any chunk's inode (the one being checked: from memory); -1 if out of
 * range, unreadable or corrupt.
 */
extern int ck_inode (struct ck *k, uint64_t ref, struct cfs_inode *in);
extern int ck_put_inode (struct ck *k, uint64_t ref,
                         const struct cfs_inode *in);
/* Does directory dref hold an entry naming target (with that name hash,
 * unless hash is 0)?  1 yes (and the name's hash in *found, if given),
 * 0 no, -1 unreadable.
 */
extern int ck_dir_names (struct ck *k, uint64_t dref, uint64_t target,
                         uint32_t hash, uint32_t *found);
/* The extents of inode ino (in) of chunk c, whose generation is gen,
 * read into l (empty first): 0, or -1 if a leaf is unreadable or out of
 * range.  Extents are not checked: pass 1 does that.
 */
extern int ck_map_read (struct ck *k, uint32_t c, uint64_t gen, uint32_t ino,
                        const struct cfs_inode *in, struct cfs_extlist *l);
/* A name for (target) in lost+found: "#chunk.inode".  0, or -1. */
extern int ck_lost_found (struct ck *k, uint64_t target, uint32_t gen,
                          uint8_t type);
/* One more back-reference in the table of the chunk being checked. */
extern int ck_add_backref (struct ck *k, const struct backref *b);
/* Back-references waiting to be added to chunk c. */
extern void ck_add_pending (struct ck *k, uint32_t c, const struct backref *b);

/* ---- check-backref.c ---- */
/* Does chunk c's table hold back-reference b (or a pending one)?  1 yes,
 * 0 no, -1 unknown (the table, or the block it would be in, unreadable).
 */
extern int ck_has_backref (struct ck *k, uint32_t c, const struct backref *b);
/* The tables read, freed at the end. */
extern void ck_backref_release (struct ck *k);
/* A set of back-references (for a table's duplicates): NULL out of
 * memory.  ck_brset_add: 1 added, 0 already there, -1 out of memory.
 */
struct ck_brset;
extern struct ck_brset *ck_brset_new (void);
extern bool ck_brset_has (const struct ck_brset *s, const struct backref *b);
extern int ck_brset_add (struct ck_brset *s, const struct backref *b);
extern void ck_brset_free (struct ck_brset *s);

/* Chunk c's bit in the dirty map. */
static inline bool
ck_map_bit (const struct ck *k, uint32_t c)
{
  uint32_t bit = c % CFS_BITS_PER_BITMAP;

  return k->map[c / CFS_BITS_PER_BITMAP][CFS_HEADER_SIZE + bit / 8] >> bit % 8 &
         1;
}

/* Chunk c's bit in the initialised-chunks map. */
static inline bool
ck_imap_bit (const struct ck *k, uint32_t c)
{
  uint32_t bit = c % CFS_BITS_PER_BITMAP;

  return k->imap[c / CFS_BITS_PER_BITMAP][CFS_HEADER_SIZE + bit / 8] >>
             bit % 8 &
         1;
}

/* ---- check-preload.c ---- */
/* -f: every queued chunk's metadata (header, bitmaps, inode table up to
 * its mark, back-reference table, directory blocks, extent leaves, xattr
 * blocks) read in disk order, a few requests a chunk, and kept, so that
 * references between chunks cost no seeks.
 */
extern void ck_preload (struct ck *k);
/* Chunk-local blocks v[0..n) of chunk c (sorted here) read ahead in runs,
 * those not held already, and kept: the few requests a chunk's
 * directory blocks cost where the preload did not reach them.
 */
extern void ck_read_ahead (struct ck *k, uint32_t c, uint32_t *v, size_t n);

/* ---- check-chunk.c ---- */
/* Check chunk c: false if it is not in use (nothing was checked). */
extern bool ck_chunk (struct ck *k, uint32_t c);
/* The chunk checks' memory freed, at the end. */
extern void ck_chunk_release (struct ck *k);

#endif
