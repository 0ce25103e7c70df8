/* chunkfs — inodes, their block maps, and files continued across chunks
 * (fs-internal.h).
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "fs-internal.h"

static int
slot_of (struct cfs_fs *fs, uint32_t c, uint32_t i, struct cblk **blk)
{
  if (c >= fs->sb.chunks || i == 0 || i >= fs->g.inodes)
    return cfs_fs_eio (fs, "inode (%u, %u) out of range", c, i);
  if (fs->chunks[c].bad || fs->chunks[c].h.state == CFS_UNINIT)
    return cfs_fs_eio (fs, "inode (%u, %u): chunk not in use", c, i);
  *blk = cfs_cache_get (fs, c, fs->g.inode_table + i / CFS_INODES_PER_BLOCK,
                        CBLK_INODES, NULL, false);
  return *blk ? 0 : -EIO;
}

int
cfs_iget (struct cfs_fs *fs, uint64_t ref, struct ino *n)
{
  struct cfs_err err;
  struct cblk *blk;
  int r;

  n->c = ref_chunk (ref);
  n->i = ref_ino (ref);
  if ((r = slot_of (fs, n->c, n->i, &blk)) < 0)
    return r;
  if (cfs_inode_decode (blk->d + n->i % CFS_INODES_PER_BLOCK * CFS_INODE_SIZE,
                        fs->sb.uuid, n->c, &n->in, &err) == -1) {
    /* A never-used slot decodes as zeros with chunk 0: fine. */
    cfs_damaged (fs, n->c);
    return cfs_fs_eio (fs, "inode (%u, %u): %s", n->c, n->i, err.msg);
  }
  return 0;
}

int
cfs_iput (struct cfs_fs *fs, struct ino *n)
{
  struct cblk *blk;
  int r;

  if ((r = cfs_touch (fs, n->c)) < 0 ||
      (r = slot_of (fs, n->c, n->i, &blk)) < 0)
    return r;
  n->in.chunk = n->c;
  cfs_inode_encode (fs->sb.uuid, &n->in,
                    blk->d + n->i % CFS_INODES_PER_BLOCK * CFS_INODE_SIZE);
  cfs_cache_dirty (fs, blk);
  return 0;
}

/* Pointer slot `idx` of indirect block `local` of chunk c. */
static int
ind_get (struct cfs_fs *fs, uint32_t c, uint32_t local, uint32_t idx,
         uint32_t *v)
{
  struct cblk *b;

  *v = 0;
  if (local < fs->g.first_data || local >= fs->g.chunk_blocks)
    return cfs_fs_eio (fs, "chunk %u: indirect block %u outside its data", c,
                       local);
  if ((b = cfs_cache_get (fs, c, local, CBLK_META, CFS_MAGIC_INDIRECT,
                          false)) == NULL)
    return -EIO;
  *v = cfs_get32 (b->d + CFS_HEADER_SIZE + 4 * idx);
  return 0;
}

static int
ind_put (struct cfs_fs *fs, uint32_t c, uint32_t local, uint32_t idx,
         uint32_t v)
{
  struct cblk *b;
  int r;

  if ((r = cfs_touch (fs, c)) < 0)
    return r;
  if ((b = cfs_cache_get (fs, c, local, CBLK_META, CFS_MAGIC_INDIRECT,
                          false)) == NULL)
    return -EIO;
  cfs_put32 (b->d + CFS_HEADER_SIZE + 4 * idx, v);
  cfs_cache_dirty (fs, b);
  return 0;
}

static int
new_indirect (struct cfs_fs *fs, uint32_t c, uint32_t goal, bool meta,
              uint32_t *local)
{
  struct cblk *b;
  int r;

  if ((r = cfs_alloc_block (fs, c, goal, meta, local)) < 0)
    return r;
  if (*local == 0)
    return -ENOSPC;
  if ((b = cfs_cache_get (fs, c, *local, CBLK_META, CFS_MAGIC_INDIRECT,
                          true)) == NULL)
    return -EIO;
  cfs_cache_dirty (fs, b);
  return 0;
}

static bool
valid_data (const struct cfs_fs *fs, uint32_t local)
{
  return local >= fs->g.first_data && local < fs->g.chunk_blocks;
}

/* A block for a pointer that is 0: an indirect block, or a data block
 * (then *fresh).  No block left in the chunk: -ENOSPC with *full.
 */
static int
new_block (struct cfs_fs *fs, const struct ino *n, uint32_t goal, bool indirect,
           uint32_t *v, bool *full, bool *fresh)
{
  bool meta = S_ISDIR (n->in.mode); /* directories may use the reserve */
  int r;

  if (indirect) {
    if ((r = new_indirect (fs, n->c, goal, meta, v)) < 0)
      *full = r == -ENOSPC;
    return r;
  }
  if ((r = cfs_alloc_block (fs, n->c, goal, meta, v)) < 0)
    return r;
  if (*v == 0) {
    *full = true;
    return -ENOSPC;
  }
  *fresh = true;
  return 0;
}

/* The inode's own pointer *p (direct, indirect or double indirect),
 * given a block when it is 0 and alloc asks for one.
 */
static int
inode_ptr (struct cfs_fs *fs, struct ino *n, uint32_t *p, bool alloc,
           bool indirect, uint32_t goal, bool *full, bool *fresh)
{
  uint32_t v;
  int r;

  if (*p != 0 || !alloc)
    return 0;
  if ((r = new_block (fs, n, goal, indirect, &v, full, fresh)) < 0)
    return r;
  *p = v;
  return cfs_iput (fs, n);
}

/* Pointer slot `idx` of indirect block `local` in *v, given a block when
 * it is 0 and alloc asks for one.
 */
static int
ind_ptr (struct cfs_fs *fs, const struct ino *n, uint32_t local, uint32_t idx,
         bool alloc, bool indirect, uint32_t goal, uint32_t *v, bool *full,
         bool *fresh)
{
  uint32_t nv;
  int r;

  if ((r = ind_get (fs, n->c, local, idx, v)) < 0 || *v != 0 || !alloc)
    return r;
  if ((r = new_block (fs, n, goal, indirect, &nv, full, fresh)) < 0)
    return r;
  *v = nv;
  return ind_put (fs, n->c, local, idx, nv);
}

/* One level: *slot is a pointer (in the inode or an indirect block) to
 * what the next level reads; allocate it when asked.
 */
int
cfs_bmap (struct cfs_fs *fs, struct ino *n, uint64_t idx, bool alloc,
          uint32_t goal, uint32_t *local, bool *full, bool *fresh)
{
  const uint64_t P = CFS_PTRS_PER_BLOCK;
  uint32_t v, mid;
  int r;

  *local = 0;
  *full = *fresh = false;
  if (idx < CFS_NDIRECT) {
    if ((r = inode_ptr (fs, n, &n->in.direct[idx], alloc, false, goal, full,
                        fresh)) < 0)
      return r;
    v = n->in.direct[idx];
  } else if ((idx -= CFS_NDIRECT) < P) {
    if ((r = inode_ptr (fs, n, &n->in.indirect, alloc, true, goal, full,
                        fresh)) < 0 ||
        n->in.indirect == 0)
      return r;
    if ((r = ind_ptr (fs, n, n->in.indirect, (uint32_t)idx, alloc, false, goal,
                      &v, full, fresh)) < 0)
      return r;
  } else if ((idx -= P) < P * P) {
    if ((r = inode_ptr (fs, n, &n->in.dindirect, alloc, true, goal, full,
                        fresh)) < 0 ||
        n->in.dindirect == 0)
      return r;
    if ((r = ind_ptr (fs, n, n->in.dindirect, (uint32_t)(idx / P), alloc, true,
                      goal, &mid, full, fresh)) < 0 ||
        mid == 0)
      return r;
    if ((r = ind_ptr (fs, n, mid, (uint32_t)(idx % P), alloc, false, goal, &v,
                      full, fresh)) < 0)
      return r;
  } else
    return -EFBIG;
  *local = v;
  if (*local && !valid_data (fs, *local))
    return cfs_fs_eio (fs, "inode (%u, %u): block %u outside its chunk's data",
                       n->c, n->i, *local);
  return 0;
}

/* Blocks one inode can address. */
#define SEG_BLOCKS                                                             \
  ((uint64_t)CFS_NDIRECT + CFS_PTRS_PER_BLOCK +                                \
   (uint64_t)CFS_PTRS_PER_BLOCK * CFS_PTRS_PER_BLOCK)

static uint64_t
seg_start (const struct ino *n)
{
  return n->in.flags & CFS_INODE_CONT ? n->in.offset / CFS_BLOCK : 0;
}

/* Add a continuation after `last` (which now maps all it will), in a
 * chunk with room.
 */
static int
add_continuation (struct cfs_fs *fs, struct ino *h, struct ino *last,
                  struct ino *cont)
{
  uint32_t c, i;
  int r;

  if ((r = cfs_pick_chunk (fs, last->c + 1 < fs->sb.chunks ? last->c + 1 : 0,
                           false, &c)) < 0)
    return r;
  if ((r = cfs_touch (fs, c)) < 0 || (r = cfs_alloc_inode (fs, c, &i)) < 0)
    return r;
  cont->c = c;
  cont->i = i;
  {
    struct ino old;
    if ((r = cfs_iget (fs, cfs_ref (c, i), &old)) < 0)
      return r;
    memset (&cont->in, 0, sizeof cont->in);
    cont->in.generation = old.in.generation + 1;
  }
  cont->in.mode = h->in.mode;
  cont->in.flags = CFS_INODE_CONT;
  cont->in.uid = h->in.uid;
  cont->in.gid = h->in.gid;
  cont->in.offset = seg_start (last) * CFS_BLOCK + last->in.mapped;
  cont->in.head = cfs_ref (h->c, h->i);
  last->in.next = cfs_ref (c, i);
  last->in.flags |= CFS_INODE_HAS_CONT;
  if ((r = cfs_iput (fs, cont)) < 0 || (r = cfs_iput (fs, last)) < 0)
    return r;
  if (last->c == h->c && last->i == h->i)
    h->in = last->in;
  return 0;
}

int
cfs_file_block (struct cfs_fs *fs, struct ino *h, uint64_t lblk, bool alloc,
                uint64_t *abs, bool *fresh)
{
  struct ino seg = *h, next;
  uint32_t local = 0, steps = 0;
  bool full;
  int r;

  *abs = 0;
  *fresh = false;
  /* The segment whose range holds lblk, or the last one. */
  while (lblk >= seg_start (&seg) + seg.in.mapped / CFS_BLOCK &&
         (seg.in.flags & CFS_INODE_HAS_CONT)) {
    if (++steps > CFS_MAX_CHAIN)
      return cfs_fs_eio (fs, "inode (%u, %u): continuation chain loops", h->c,
                         h->i);
    if ((r = cfs_iget (fs, seg.in.next, &next)) < 0)
      return r;
    if (!(next.in.flags & CFS_INODE_CONT) ||
        next.in.head != cfs_ref (h->c, h->i) ||
        next.in.offset != seg_start (&seg) * CFS_BLOCK + seg.in.mapped)
      return cfs_fs_eio (fs, "inode (%u, %u): broken continuation (%u, %u)",
                         h->c, h->i, next.c, next.i);
    seg = next;
  }
  for (;;) {
    uint64_t start = seg_start (&seg), end = start + seg.in.mapped / CFS_BLOCK;
    bool beyond = lblk >= end;

    if (beyond && !alloc)
      return 0; /* past the end: a hole */
    if (lblk - start >= SEG_BLOCKS) {
      /* Out of this inode's reach: it maps all it can, the next goes on. */
      seg.in.mapped = SEG_BLOCKS * CFS_BLOCK;
    } else {
      /* Goal 0: the chunk's hint, just past its last allocation, so a
       * file written in order lies in order.
       */
      r = cfs_bmap (fs, &seg, lblk - start, alloc, 0, &local, &full, fresh);
      if (r == 0) {
        if (local && alloc && beyond) {
          seg.in.mapped = (lblk - start + 1) * CFS_BLOCK;
          if ((r = cfs_iput (fs, &seg)) < 0)
            return r;
        }
        if (seg.c == h->c && seg.i == h->i)
          h->in = seg.in;
        if (local)
          *abs = cfs_block (&fs->sb, seg.c, local);
        return 0;
      }
      if (!full || !beyond)
        return r; /* a hole in a full chunk, or an error */
      /* The chunk is full: what this inode maps is all it will map. */
    }
    if ((r = add_continuation (fs, h, &seg, &next)) < 0)
      return r;
    seg = next;
  }
}

/* Free the pointers of indirect block `local` from index `from` (of
 * `level`: 1 data pointers, 2 pointers to indirect blocks); *empty when
 * nothing is left in it.
 */
static int
free_indirect (struct cfs_fs *fs, uint32_t c, uint32_t local, int level,
               uint64_t from, bool *empty)
{
  const uint64_t P = CFS_PTRS_PER_BLOCK;
  uint64_t per = level == 2 ? P : 1;
  uint32_t k, v;
  int r;

  *empty = true;
  for (k = 0; k < P; k++) {
    if ((r = ind_get (fs, c, local, k, &v)) < 0)
      return r;
    if (v == 0)
      continue;
    if ((uint64_t)(k + 1) * per <= from) {
      *empty = false;
      continue;
    }
    if (level == 2) {
      bool sub;
      uint64_t f = from > (uint64_t)k * per ? from - (uint64_t)k * per : 0;
      if ((r = free_indirect (fs, c, v, 1, f, &sub)) < 0)
        return r;
      if (!sub) {
        *empty = false;
        continue;
      }
    }
    if ((r = cfs_free_block (fs, c, v)) < 0 ||
        (r = ind_put (fs, c, local, k, 0)) < 0)
      return r;
  }
  return 0;
}

/* Free n's blocks from index `from` of its own range on. */
static int
free_from (struct cfs_fs *fs, struct ino *n, uint64_t from)
{
  const uint64_t P = CFS_PTRS_PER_BLOCK;
  bool empty;
  int r;

  for (uint64_t k = from; k < CFS_NDIRECT; k++)
    if (n->in.direct[k]) {
      if ((r = cfs_free_block (fs, n->c, n->in.direct[k])) < 0)
        return r;
      n->in.direct[k] = 0;
    }
  if (n->in.indirect) {
    uint64_t f = from > CFS_NDIRECT ? from - CFS_NDIRECT : 0;
    if ((r = free_indirect (fs, n->c, n->in.indirect, 1, f, &empty)) < 0)
      return r;
    if (empty) {
      if ((r = cfs_free_block (fs, n->c, n->in.indirect)) < 0)
        return r;
      n->in.indirect = 0;
    }
  }
  if (n->in.dindirect) {
    uint64_t f = from > CFS_NDIRECT + P ? from - CFS_NDIRECT - P : 0;
    if ((r = free_indirect (fs, n->c, n->in.dindirect, 2, f, &empty)) < 0)
      return r;
    if (empty) {
      if ((r = cfs_free_block (fs, n->c, n->in.dindirect)) < 0)
        return r;
      n->in.dindirect = 0;
    }
  }
  return 0;
}

int
cfs_truncate_blocks (struct cfs_fs *fs, struct ino *h, uint64_t size)
{
  uint64_t keep = (size + CFS_BLOCK - 1) / CFS_BLOCK; /* blocks kept */
  struct ino seg = *h, next;
  bool cut = false; /* seg is past the new end: free it whole */
  uint32_t steps = 0;
  int r;

  for (;;) {
    uint64_t start = seg_start (&seg);
    bool more = seg.in.flags & CFS_INODE_HAS_CONT;
    uint64_t nref = seg.in.next;
    bool is_head = seg.c == h->c && seg.i == h->i;

    if (++steps > CFS_MAX_CHAIN)
      return cfs_fs_eio (fs, "inode (%u, %u): continuation chain loops", h->c,
                         h->i);
    if (more && (r = cfs_iget (fs, nref, &next)) < 0)
      return r;
    if (cut) {
      if ((r = free_from (fs, &seg, 0)) < 0)
        return r;
      {
        uint32_t gen = seg.in.generation; /* a freed slot keeps it */
        memset (&seg.in, 0, sizeof seg.in);
        seg.in.generation = gen;
      }
      if ((r = cfs_iput (fs, &seg)) < 0 ||
          (r = cfs_free_inode (fs, seg.c, seg.i)) < 0)
        return r;
    } else {
      uint64_t from = keep > start ? keep - start : 0;
      if ((r = free_from (fs, &seg, from)) < 0)
        return r;
      if (seg.in.mapped / CFS_BLOCK > from)
        seg.in.mapped = from * CFS_BLOCK;
      if (keep <= start + seg.in.mapped / CFS_BLOCK || !more) {
        /* The new end is here: what follows goes. */
        cut = more;
        seg.in.flags &= (uint16_t)~CFS_INODE_HAS_CONT;
        seg.in.next = 0;
      }
      if (is_head)
        seg.in.size = size;
      if ((r = cfs_iput (fs, &seg)) < 0)
        return r;
      if (is_head)
        h->in = seg.in;
    }
    if (!more)
      return 0;
    seg = next;
  }
}

static int
count_indirect (struct cfs_fs *fs, uint32_t c, uint32_t local, int level,
                uint64_t *blocks)
{
  uint32_t k, v;
  int r;

  ++*blocks;
  for (k = 0; k < CFS_PTRS_PER_BLOCK; k++) {
    if ((r = ind_get (fs, c, local, k, &v)) < 0)
      return r;
    if (v == 0)
      continue;
    if (level == 2) {
      if ((r = count_indirect (fs, c, v, 1, blocks)) < 0)
        return r;
    } else
      ++*blocks;
  }
  return 0;
}

int
cfs_count_blocks (struct cfs_fs *fs, struct ino *h, uint64_t *blocks)
{
  struct ino seg = *h;
  uint32_t steps = 0;
  int r;

  *blocks = 0;
  for (;;) {
    for (int k = 0; k < CFS_NDIRECT; k++)
      *blocks += seg.in.direct[k] != 0;
    if (seg.in.indirect &&
        (r = count_indirect (fs, seg.c, seg.in.indirect, 1, blocks)) < 0)
      return r;
    if (seg.in.dindirect &&
        (r = count_indirect (fs, seg.c, seg.in.dindirect, 2, blocks)) < 0)
      return r;
    if (!(seg.in.flags & CFS_INODE_HAS_CONT) || ++steps > CFS_MAX_CHAIN)
      return 0;
    if ((r = cfs_iget (fs, seg.in.next, &seg)) < 0)
      return r;
  }
}
