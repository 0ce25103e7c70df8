/* chunkfs — chunks going dirty (initialised first if new), their bitmaps
 * and allocation (fs-internal.h), over the block cache and the core
 * (core.c: headers and maps).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fs-internal.h"

/* Bitmap bit b of chunk c (block bitmap, or inode bitmap if inodes). */
static struct cblk *
bitmap_block (struct cfs_fs *fs, uint32_t c, bool inodes, uint32_t b)
{
  uint32_t first = inodes ? fs->g.inode_bitmap : fs->g.block_bitmap;

  return cfs_cache_get (fs, c, first + b / CFS_BITS_PER_BITMAP, CBLK_META,
                        CFS_MAGIC_BITMAP, false);
}

static int
put_bit (struct cfs_fs *fs, uint32_t c, bool inodes, uint32_t b, bool v)
{
  struct cblk *blk = bitmap_block (fs, c, inodes, b);
  uint32_t bit = b % CFS_BITS_PER_BITMAP;
  unsigned char mask = (unsigned char)(1u << bit % 8);

  if (blk == NULL)
    return -EIO;
  if (v)
    blk->d[CFS_HEADER_SIZE + bit / 8] |= mask;
  else
    blk->d[CFS_HEADER_SIZE + bit / 8] &= (unsigned char)~mask;
  cfs_cache_dirty (fs, blk);
  return 0;
}

static int put_range (struct cfs_fs *fs, uint32_t c, bool inodes, uint32_t b,
                      uint32_t n, bool v, uint32_t *changed);

/* An uninitialised chunk's header and bitmaps, its metadata marked, as
 * an empty chunk's, dirty; the header written (not yet durable).
 */
static int
init_body (struct cfs_fs *fs, uint32_t c)
{
  struct chunk *k = &fs->chunks[c];
  uint32_t b, i;

  memset (&k->h, 0, sizeof k->h);
  k->h.index = c;
  k->h.state = CFS_DIRTY;
  k->h.generation = 1;
  k->h.free_blocks = fs->g.chunk_blocks - fs->g.first_data;
  k->h.free_inodes = fs->g.inodes - 1; /* inode 0 is never used */
  k->h.itable_mark = cfs_mark_start (&fs->sb);
  for (i = 0; i < fs->g.block_bitmap_blocks; i++) {
    struct cblk *blk = cfs_cache_get (fs, c, fs->g.block_bitmap + i, CBLK_META,
                                      CFS_MAGIC_BITMAP, true);
    if (blk == NULL)
      return -EIO;
    cfs_cache_dirty (fs, blk);
  }
  for (i = 0; i < fs->g.inode_bitmap_blocks; i++) {
    struct cblk *blk = cfs_cache_get (fs, c, fs->g.inode_bitmap + i, CBLK_META,
                                      CFS_MAGIC_BITMAP, true);
    if (blk == NULL)
      return -EIO;
    cfs_put16 (blk->d + 6, 1); /* flag: the inode bitmap */
    cfs_cache_dirty (fs, blk);
  }
  if (put_range (fs, c, false, 0, fs->g.first_data, true, &b) < 0)
    return -EIO;
  if (put_bit (fs, c, true, 0, true) < 0)
    return -EIO;
  k->touched = true;
  return cfs_header_write (fs, c, false);
}

/* Uninitialised chunk c becomes an empty one, and when the allocator is
 * taking new chunks in order (c follows the last one initialised), the
 * uninitialised chunks after it too, up to INIT_BATCH: map bits first
 * (durable), inode tables zeroed (the device's zero request) and flushed
 * (so a crash never leaves a header over an old table), then bitmaps and
 * headers, dirty, flushed.  Three flushes a batch instead of three a
 * chunk is what makes filling a large disk quick; a chunk initialised
 * ahead and not used stays empty and is made clean at the next sync.
 */
#define INIT_BATCH 32

static int
init_chunks (struct cfs_fs *fs, uint32_t c)
{
  struct cfs_err err;
  uint32_t n = 1, i;
  int r;

  /* A batch is a sixty-fourth of the disk at most: on a small disk it
   * would start most chunks at once, each then read by every full check.
   */
  if (c == fs->last_init + 1)
    while (n < INIT_BATCH && n < fs->sb.chunks / 64 && c + n < fs->sb.chunks &&
           fs->chunks[c + n].h.state == CFS_UNINIT && !fs->chunks[c + n].bad)
      n++;
  /* Each chunk's bit in the initialised-chunks map too, durable before
   * the chunk is, so a full check never skips a chunk in use.
   */
  if (cfs_maps_mark (fs, c, n, true) < 0)
    return -EIO;
  for (i = 0; i < n; i++)
    if (cfs_zero (fs->io, cfs_block (&fs->sb, c + i, fs->g.inode_table),
                  fs->g.inode_table_blocks, &err) == -1)
      return cfs_fs_eio (fs, "%s", err.msg);
  if (cfs_flush (fs->io, &err) == -1)
    return cfs_fs_eio (fs, "%s", err.msg);
  for (i = 0; i < n; i++)
    if ((r = init_body (fs, c + i)) < 0)
      return r;
  if (cfs_flush (fs->io, &err) == -1)
    return cfs_fs_eio (fs, "%s", err.msg);
  fs->last_init = c + n - 1;
  return 0;
}

int
cfs_touch (struct cfs_fs *fs, uint32_t c)
{
  struct chunk *k = &fs->chunks[c];

  if (!fs->writable)
    return -EROFS;
  if (k->bad)
    return cfs_fs_eio (fs, "chunk %u: its header is unreadable", c);
  if (k->touched)
    return 0;
  /* The map bit first: a checker must find every chunk that may be
   * dirty, so it is durable before the header says so.
   */
  if (k->h.state == CFS_UNINIT)
    return init_chunks (fs, c);
  if (cfs_maps_mark (fs, c, 1, false) < 0)
    return -EIO;
  if (k->h.state == CFS_CLEAN) {
    k->h.state = CFS_DIRTY;
    k->h.generation++;
    if (cfs_header_write (fs, c, true) < 0)
      return -EIO;
  }
  k->touched = true;
  return 0;
}

bool
cfs_has_room (struct cfs_fs *fs, uint32_t c, bool dir)
{
  const struct chunk *k = &fs->chunks[c];
  uint32_t reserve = fs->g.chunk_blocks / (dir ? 4 : 16);

  if (k->bad || k->h.state == CFS_DAMAGED)
    return false;
  if (k->h.state == CFS_UNINIT)
    return true;
  return k->h.free_inodes > 0 && k->h.free_blocks > reserve;
}

int
cfs_pick_chunk (struct cfs_fs *fs, uint32_t near, bool dir, uint32_t *out)
{
  uint32_t n = fs->sb.chunks, i;

  if (cfs_has_room (fs, near, dir)) {
    *out = near;
    return 0;
  }
  /* Initialised chunks with room first (no new chunk dirtied), then any
   * with a free inode at all.
   */
  for (i = 0; i < n; i++) {
    uint32_t c = (fs->rotor + i) % n;
    if (fs->chunks[c].h.state != CFS_UNINIT && cfs_has_room (fs, c, dir)) {
      fs->rotor = c;
      *out = c;
      return 0;
    }
  }
  for (i = 0; i < n; i++) {
    uint32_t c = (near + 1 + i) % n;
    if (cfs_has_room (fs, c, dir)) {
      fs->rotor = c;
      *out = c;
      return 0;
    }
  }
  for (i = 0; i < n; i++) {
    const struct chunk *k = &fs->chunks[i];
    if (!k->bad && k->h.state != CFS_DAMAGED && k->h.free_inodes > 0 &&
        k->h.free_blocks > 0) {
      *out = i;
      return 0;
    }
  }
  return -ENOSPC;
}

/* Bits [b, b + n) of chunk c's block bitmap (or inode bitmap) set to v,
 * a byte at a time where it can; *changed counts the bits that were not
 * v already.
 */
static int
put_range (struct cfs_fs *fs, uint32_t c, bool inodes, uint32_t b, uint32_t n,
           bool v, uint32_t *changed)
{
  uint32_t end = b + n;

  *changed = 0;
  while (b < end) {
    struct cblk *blk = bitmap_block (fs, c, inodes, b);
    uint32_t base = b - b % CFS_BITS_PER_BITMAP;
    uint32_t stop =
        end - base < CFS_BITS_PER_BITMAP ? end : base + CFS_BITS_PER_BITMAP;
    unsigned char *bits;

    if (blk == NULL)
      return -EIO;
    bits = blk->d + CFS_HEADER_SIZE;
    for (; b < stop; b++) {
      uint32_t bit = b - base;
      unsigned char *p = &bits[bit / 8];
      if (bit % 8 == 0 && b + 8 <= stop) {
        unsigned char want = v ? 0xff : 0x00;
        *changed += (uint32_t)__builtin_popcount ((unsigned)(*p ^ want));
        *p = want;
        b += 7;
        continue;
      }
      if ((bool)(*p >> bit % 8 & 1) != v) {
        *p ^= (unsigned char)(1u << bit % 8);
        ++*changed;
      }
    }
    cfs_cache_dirty (fs, blk);
  }
  return 0;
}

/* The first bit in [from, limit) that is `set`: 1 with *out, 0 none
 * (*out = limit).  Whole bytes of the other value are stepped over.
 */
static int
find_bit (struct cfs_fs *fs, uint32_t c, bool inodes, bool set, uint32_t from,
          uint32_t limit, uint32_t *out)
{
  const unsigned char skip = set ? 0x00 : 0xff;
  uint32_t b = from;

  while (b < limit) {
    struct cblk *blk = bitmap_block (fs, c, inodes, b);
    uint32_t base = b - b % CFS_BITS_PER_BITMAP;
    uint32_t stop =
        limit - base < CFS_BITS_PER_BITMAP ? limit : base + CFS_BITS_PER_BITMAP;
    const unsigned char *bits;

    if (blk == NULL)
      return -EIO;
    bits = blk->d + CFS_HEADER_SIZE;
    while (b < stop) {
      uint32_t bit = b - base;
      if (bit % 8 == 0 && b + 8 <= stop && bits[bit / 8] == skip) {
        b += 8;
        continue;
      }
      if ((bool)(bits[bit / 8] >> bit % 8 & 1) == set) {
        *out = b;
        return 1;
      }
      b++;
    }
  }
  *out = limit;
  return 0;
}

static int
find_free (struct cfs_fs *fs, uint32_t c, bool inodes, uint32_t from,
           uint32_t limit, uint32_t *out)
{
  return find_bit (fs, c, inodes, false, from, limit, out);
}

/* The blocks file data leaves to metadata: the reserve a full chunk
 * keeps for directories, extent leaves and the back-reference table.
 */
static uint32_t
meta_reserve (const struct cfs_fs *fs)
{
  uint32_t reserve = fs->g.chunk_blocks >> CFS_META_RESERVE_SHIFT;

  return reserve < CFS_META_RESERVE_MIN ? CFS_META_RESERVE_MIN : reserve;
}

/* The end of the metadata zone: the data area's first blocks, as many as
 * the reserve.  Metadata is allocated there first and file data after
 * it, so a chunk's directory blocks, leaves and tables lie together near
 * its inode table: a full check reads them in a request or two, where
 * scattered among the file data they cost a seek and a rotation each
 * (fsck.chunkfs -f on 2 TB: nine of its ten requests a chunk).
 */
static uint32_t
zone_end (const struct cfs_fs *fs)
{
  uint32_t end = fs->g.first_data + meta_reserve (fs);

  return end < fs->g.chunk_blocks ? end : fs->g.chunk_blocks;
}

/* The first free block of [lo, hi) from goal on, wrapping to lo: 1 with
 * *out, 0 none, or -errno.
 */
static int
find_free_from (struct cfs_fs *fs, uint32_t c, uint32_t goal, uint32_t lo,
                uint32_t hi, uint32_t *out)
{
  int r;

  if (goal < lo || goal >= hi)
    goal = lo;
  if ((r = find_free (fs, c, false, goal, hi, out)) == 0 && goal > lo)
    r = find_free (fs, c, false, lo, goal, out);
  return r;
}

int
cfs_alloc_extent (struct cfs_fs *fs, uint32_t c, uint32_t goal, uint32_t want,
                  bool meta, uint32_t *first, uint32_t *got)
{
  struct chunk *k = &fs->chunks[c];
  uint32_t lo = fs->g.first_data, hi = fs->g.chunk_blocks, reserve, b = 0, e;
  uint32_t zend = zone_end (fs), changed;
  int r;

  *first = *got = 0;
  /* File data stops short of the last free blocks: directories and the
   * back-reference table must still find room in a full chunk.
   */
  reserve = meta ? 0 : meta_reserve (fs);
  if (k->h.state != CFS_UNINIT && k->h.free_blocks <= reserve)
    return 0;
  if ((r = cfs_touch (fs, c)) < 0)
    return r;
  if (want > k->h.free_blocks - reserve)
    want = k->h.free_blocks - reserve;
  /* Metadata: the zone first (after goal, a directory's last block, when
   * that is in it), then beside the data.  Data: after the zone from
   * goal or where the last search ended, the zone only when nothing else
   * is left.
   */
  if (meta) {
    if ((r = find_free_from (fs, c, goal, lo, zend, &b)) == 0)
      r = find_free_from (fs, c, goal >= zend ? goal : k->hint, zend, hi, &b);
  } else {
    if (goal < zend || goal >= hi)
      goal = k->hint;
    if ((r = find_free_from (fs, c, goal, zend, hi, &b)) == 0)
      r = find_free_from (fs, c, lo, lo, zend, &b);
  }
  if (r < 0)
    return r;
  if (r == 0 || want == 0) {
    k->h.free_blocks = 0; /* the count was wrong: trust the bitmap */
    return 0;
  }
  if ((r = find_bit (fs, c, false, true, b, hi - b < want ? hi : b + want,
                     &e)) < 0 ||
      (r = put_range (fs, c, false, b, e - b, true, &changed)) < 0)
    return r;
  k->h.free_blocks -= changed;
  if (b >= zend)
    k->hint = e; /* (a freed block left the cache when it was freed) */
  *first = b;
  *got = e - b;
  return 0;
}

int
cfs_alloc_block (struct cfs_fs *fs, uint32_t c, uint32_t goal, bool meta,
                 uint32_t *local)
{
  uint32_t got;

  return cfs_alloc_extent (fs, c, goal, 1, meta, local, &got);
}

/* A run of count free blocks, in the metadata zone where it fits (the
 * back-reference table is read with the chunk's other metadata).
 */
static int
find_run (struct cfs_fs *fs, uint32_t c, uint32_t b, uint32_t hi,
          uint32_t count, uint32_t *first)
{
  uint32_t e;
  int r;

  /* Free run after free run, by the byte, until one is long enough. */
  for (;;) {
    if ((r = find_free (fs, c, false, b, hi, &b)) <= 0)
      return r;
    if ((r = find_bit (fs, c, false, true, b, hi - b < count ? hi : b + count,
                       &e)) < 0)
      return r;
    if (e - b == count) {
      *first = b;
      return 1;
    }
    b = e;
  }
}

int
cfs_alloc_run (struct cfs_fs *fs, uint32_t c, uint32_t count, uint32_t *first)
{
  uint32_t zend = zone_end (fs), changed;
  int r;

  if ((r = cfs_touch (fs, c)) < 0)
    return r;
  if ((r = find_run (fs, c, fs->g.first_data, zend, count, first)) == 0)
    r = find_run (fs, c, zend, fs->g.chunk_blocks, count, first);
  if (r <= 0)
    return r ? r : -ENOSPC;
  if ((r = put_range (fs, c, false, *first, count, true, &changed)) < 0)
    return r;
  fs->chunks[c].h.free_blocks -= changed;
  return 0;
}

int
cfs_free_extent (struct cfs_fs *fs, uint32_t c, uint32_t local, uint32_t count)
{
  int r;

  if (count == 0)
    return 0;
  if (local < fs->g.first_data || local >= fs->g.chunk_blocks ||
      count > fs->g.chunk_blocks - local)
    return cfs_fs_eio (fs, "chunk %u: freeing blocks %u+%u outside its data", c,
                       local, count);
  if ((r = cfs_touch (fs, c)) < 0)
    return r;
  cfs_cache_drop_range (fs, cfs_block (&fs->sb, c, local), count);
  if (fs->nfreed == fs->afreed) {
    size_t na = fs->afreed ? 2 * fs->afreed : 256;
    struct freed *nf = realloc (fs->freed, na * sizeof *nf);
    if (nf == NULL)
      return -ENOMEM;
    fs->freed = nf;
    fs->afreed = na;
  }
  fs->freed[fs->nfreed++] = (struct freed){c, local, count};
  return 0;
}

int
cfs_free_block (struct cfs_fs *fs, uint32_t c, uint32_t local)
{
  return cfs_free_extent (fs, c, local, 1);
}

int
cfs_release_freed (struct cfs_fs *fs)
{
  size_t i;
  int r;

  for (i = 0; i < fs->nfreed; i++) {
    const struct freed *f = &fs->freed[i];
    uint32_t changed; /* bits freed twice change nothing */
    if ((r = put_range (fs, f->c, false, f->local, f->count, false, &changed)) <
        0)
      return r;
    fs->chunks[f->c].h.free_blocks += changed;
    if (f->local < fs->chunks[f->c].hint)
      fs->chunks[f->c].hint = f->local;
  }
  fs->nfreed = 0;
  return 0;
}

int
cfs_alloc_inode (struct cfs_fs *fs, uint32_t c, uint32_t *i)
{
  int r;

  if ((r = cfs_touch (fs, c)) < 0)
    return r;
  if ((r = find_free (fs, c, true, 1, fs->g.inodes, i)) < 0)
    return r;
  if (r == 0) {
    fs->chunks[c].h.free_inodes = 0;
    return -ENOSPC;
  }
  /* A checker reads the inode table only up to the mark, even in a dirty
   * chunk: raised, and durable, before the slot can be written.
   */
  if (*i >= fs->chunks[c].h.itable_mark) {
    uint32_t mark = (*i / CFS_MARK_STEP + 1) * CFS_MARK_STEP;
    fs->chunks[c].h.itable_mark = mark < fs->g.inodes ? mark : fs->g.inodes;
    if (cfs_header_write (fs, c, true) < 0)
      return -EIO;
  }
  if ((r = put_bit (fs, c, true, *i, true)) < 0)
    return r;
  fs->chunks[c].h.free_inodes--;
  return 0;
}

int
cfs_free_inode (struct cfs_fs *fs, uint32_t c, uint32_t i)
{
  int r;

  if ((r = cfs_touch (fs, c)) < 0 || (r = put_bit (fs, c, true, i, false)) < 0)
    return r;
  fs->chunks[c].h.free_inodes++;
  return 0;
}
