/* chunkfs — inodes, their extent maps, files continued across chunks
 * (fs-internal.h, FORMAT.md "Extents"), and an inode's attributes with
 * the atime waiting for the next sync.
 *
 * A map is read whole into an extent list, changed there and written
 * back whole: a change costs O(extents), never O(blocks).
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

static bool
valid_data (const struct cfs_fs *fs, uint32_t local)
{
  return local >= fs->g.first_data && local < fs->g.chunk_blocks;
}

/* An inode's map in memory: its extents and its leaf blocks. */
struct segmap {
  struct cfs_extlist l;
  uint32_t leaf[CFS_EXT_ROOT];
  uint32_t nleaf;
};

static int
map_bad (struct cfs_fs *fs, const struct ino *n, const char *what)
{
  cfs_damaged (fs, n->c);
  return cfs_fs_eio (fs, "inode (%u, %u): extent map: %s", n->c, n->i, what);
}

/* One leaf's extents (index entry ix) appended to m. */
static int
leaf_load (struct cfs_fs *fs, const struct ino *n, const struct cfs_extent *ix,
           struct segmap *m)
{
  struct cblk *b;

  if (!valid_data (fs, ix->start) || ix->len == 0 ||
      ix->len > CFS_EXT_PER_BLOCK)
    return map_bad (fs, n, "bad index entry");
  if ((b = cfs_cache_get (fs, n->c, ix->start, CBLK_META, CFS_MAGIC_EXTENT,
                          false)) == NULL)
    return -EIO;
  if (cfs_get16 (b->d + CFS_HEADER_SIZE) != ix->len ||
      cfs_get32 (b->d + CFS_HEADER_SIZE + 4) != n->i)
    return map_bad (fs, n, "a leaf that is not its own");
  m->leaf[m->nleaf++] = ix->start;
  for (uint32_t j = 0; j < ix->len; j++)
    cfs_ext_get (b->d + CFS_EXT_START + 12 * j, &m->l.v[m->l.n++]);
  return 0;
}

static int
map_load (struct cfs_fs *fs, struct ino *n, struct segmap *m)
{
  uint16_t count = cfs_map_count (&n->in), depth = cfs_map_depth (&n->in);
  uint64_t prev = 0;
  int r;

  memset (m, 0, sizeof *m);
  if (depth > 1 || count > CFS_EXT_ROOT)
    return map_bad (fs, n, "bad header");
  if (cfs_el_reserve (&m->l, depth ? count * CFS_EXT_PER_BLOCK : count) == -1)
    return -ENOMEM;
  for (unsigned k = 0; k < count; k++) {
    struct cfs_extent e;
    cfs_ext_get (cfs_map_entry (&n->in, k), &e);
    if (depth == 0)
      m->l.v[m->l.n++] = e;
    else if ((r = leaf_load (fs, n, &e, m)) < 0) {
      cfs_el_free (&m->l);
      return r;
    }
  }
  for (uint32_t k = 0; k < m->l.n; k++) {
    const struct cfs_extent *e = &m->l.v[k];
    if (e->len == 0 || e->lblk < prev || !valid_data (fs, e->start) ||
        e->len > fs->g.chunk_blocks - e->start) {
      cfs_el_free (&m->l);
      return map_bad (fs, n, "bad extent");
    }
    prev = (uint64_t)e->lblk + e->len;
  }
  return 0;
}

/* Leaf j of m: its extents from v[from], count of them. */
static int
leaf_store (struct cfs_fs *fs, const struct ino *n, uint32_t leaf,
            const struct cfs_extent *v, uint32_t count)
{
  struct cblk *b;

  if ((b = cfs_cache_get (fs, n->c, leaf, CBLK_META, CFS_MAGIC_EXTENT, true)) ==
      NULL)
    return -EIO;
  cfs_put16 (b->d + CFS_HEADER_SIZE, (uint16_t)count);
  cfs_put32 (b->d + CFS_HEADER_SIZE + 4, n->i);
  for (uint32_t j = 0; j < count; j++)
    cfs_ext_put (b->d + CFS_EXT_START + 12 * j, &v[j]);
  cfs_cache_dirty (fs, b);
  return 0;
}

/* Write m back as n's map (and n): in the inode when it fits, else in as
 * many leaves as it needs.  -ENOSPC when it needs more than the inode
 * indexes or no block is left for a leaf.
 */
static int
map_store (struct cfs_fs *fs, struct ino *n, struct segmap *m)
{
  uint32_t need = 0, per, k, had = m->nleaf;
  int r;

  if (m->l.n > CFS_EXT_MAX)
    return -ENOSPC;
  if (m->l.n > CFS_EXT_ROOT)
    need = (m->l.n + CFS_EXT_PER_BLOCK - 1) / CFS_EXT_PER_BLOCK;
  if ((r = cfs_touch (fs, n->c)) < 0)
    return r;
  while (m->nleaf < need) {
    uint32_t b;
    if ((r = cfs_alloc_block (fs, n->c, 0, true, &b)) < 0 ||
        (r = b ? 0 : -ENOSPC) < 0) {
      while (m->nleaf > had) /* the leaves it took go back */
        cfs_free_block (fs, n->c, m->leaf[--m->nleaf]);
      return r;
    }
    m->leaf[m->nleaf++] = b;
  }
  while (m->nleaf > need)
    if ((r = cfs_free_block (fs, n->c, m->leaf[--m->nleaf])) < 0)
      return r;
  memset (n->in.map, 0, sizeof n->in.map);
  if (need == 0) {
    cfs_put16 (n->in.map, (uint16_t)m->l.n);
    for (k = 0; k < m->l.n; k++)
      cfs_ext_put (cfs_map_entry (&n->in, k), &m->l.v[k]);
    return cfs_iput (fs, n);
  }
  per = (m->l.n + need - 1) / need; /* spread evenly: room in each */
  for (k = 0; k < need; k++) {
    uint32_t from = k * per, cnt = m->l.n - from < per ? m->l.n - from : per;
    struct cfs_extent ix = {m->l.v[from].lblk, m->leaf[k], cnt, false};
    if ((r = leaf_store (fs, n, m->leaf[k], &m->l.v[from], cnt)) < 0)
      return r;
    cfs_ext_put (cfs_map_entry (&n->in, k), &ix);
  }
  cfs_put16 (n->in.map, (uint16_t)need);
  cfs_put16 (n->in.map + 2, 1);
  return cfs_iput (fs, n);
}

/* What m maps at idx: *local (0: a hole), for *count blocks from idx
 * (a hole: up to the next extent, UINT64_MAX after the last).
 */
static void
map_lookup (const struct segmap *m, uint64_t idx, uint32_t *local,
            uint64_t *count, bool *unwritten)
{
  uint32_t k = cfs_el_search (&m->l, idx);
  const struct cfs_extent *e = k < m->l.n ? &m->l.v[k] : NULL;

  *unwritten = false;
  if (e && e->lblk <= idx) {
    *local = e->start + (uint32_t)(idx - e->lblk);
    *count = e->lblk + (uint64_t)e->len - idx;
    *unwritten = e->unwritten;
  } else {
    *local = 0;
    *count = e ? e->lblk - idx : UINT64_MAX;
  }
}

/* Allocate up to want blocks over the hole at idx of n (in n's chunk,
 * after the extent before it where it can) and map them: *local, *got.
 * The chunk or the map full: -ENOSPC with *full.
 */
static int
map_alloc (struct cfs_fs *fs, struct ino *n, struct segmap *m, uint64_t idx,
           uint64_t want, bool unwritten, uint32_t *local, uint32_t *got,
           bool *full)
{
  uint32_t k = cfs_el_search (&m->l, idx), goal = 0;
  bool meta = S_ISDIR (n->in.mode); /* directories may use the reserve */
  struct cfs_extent e;
  int r;

  *local = *got = 0;
  *full = false;
  if (idx >= UINT32_MAX)
    return -EFBIG;
  if (want > UINT32_MAX - idx)
    want = UINT32_MAX - idx;
  if (want > CFS_EXT_MAX_LEN)
    want = CFS_EXT_MAX_LEN;
  if (k > 0 && m->l.v[k - 1].lblk + (uint64_t)m->l.v[k - 1].len == idx)
    goal = m->l.v[k - 1].start + m->l.v[k - 1].len;
  if ((r = cfs_alloc_extent (fs, n->c, goal, (uint32_t)want, meta, local,
                             got)) < 0)
    return r;
  if (*got == 0) {
    *full = true;
    return -ENOSPC;
  }
  e = (struct cfs_extent){(uint32_t)idx, *local, *got, unwritten};
  if (cfs_el_insert (&m->l, &e) == -1)
    r = -ENOMEM;
  else
    r = map_store (fs, n, m);
  if (r < 0) {
    cfs_free_extent (fs, n->c, *local, *got);
    *full = r == -ENOSPC;
    *got = 0;
  }
  return r;
}

int
cfs_bmap (struct cfs_fs *fs, struct ino *n, uint64_t idx, bool alloc,
          uint32_t goal, uint32_t *local, bool *full, bool *fresh)
{
  struct segmap m;
  uint64_t count;
  uint32_t got;
  bool unwritten;
  int r;

  (void)goal; /* the extent before idx is the goal */
  *local = 0;
  *full = *fresh = false;
  if ((r = map_load (fs, n, &m)) < 0)
    return r;
  map_lookup (&m, idx, local, &count, &unwritten);
  if (*local == 0 && alloc) {
    r = map_alloc (fs, n, &m, idx, 1, false, local, &got, full);
    *fresh = r == 0;
  }
  cfs_el_free (&m.l);
  return r;
}

/* Set the unwritten flag of n's mapped blocks in [idx, idx + count). */
static int
map_mark (struct cfs_fs *fs, struct ino *n, uint64_t idx, uint64_t count,
          bool unwritten)
{
  struct segmap m;
  struct cfs_extlist was = {0};
  uint32_t k;
  int r;

  if ((r = map_load (fs, n, &m)) < 0)
    return r;
  r = -ENOMEM;
  k = cfs_el_search (&m.l, idx);
  for (; k < m.l.n && m.l.v[k].lblk < idx + count; k++) {
    struct cfs_extent e = m.l.v[k];
    uint64_t from = idx > e.lblk ? idx : e.lblk;
    uint64_t to =
        idx + count < e.lblk + (uint64_t)e.len ? idx + count : e.lblk + e.len;
    if (e.unwritten == unwritten)
      continue;
    if (cfs_el_reserve (&was, 1) == -1)
      goto out;
    was.v[was.n++] =
        (struct cfs_extent){(uint32_t)from, e.start + (uint32_t)(from - e.lblk),
                            (uint32_t)(to - from), unwritten};
  }
  for (k = 0; k < was.n; k++)
    if (cfs_el_punch (&m.l, was.v[k].lblk, was.v[k].len, NULL, NULL) == -1 ||
        cfs_el_insert (&m.l, &was.v[k]) == -1)
      goto out;
  r = was.n ? map_store (fs, n, &m) : 0;
out:
  cfs_el_free (&was);
  cfs_el_free (&m.l);
  return r;
}

struct freeing {
  struct cfs_fs *fs;
  uint32_t c;
  int r;
};

static void
free_run (void *opaque, uint32_t start, uint32_t len, bool unwritten)
{
  struct freeing *f = opaque;
  int r;

  (void)unwritten;
  if ((r = cfs_free_extent (f->fs, f->c, start, len)) < 0 && f->r == 0)
    f->r = r;
}

/* Unmap and free n's blocks in [idx, idx + count). */
static int
map_punch (struct cfs_fs *fs, struct ino *n, uint64_t idx, uint64_t count)
{
  struct freeing f = {fs, n->c, 0};
  struct segmap m;
  int r;

  if ((r = map_load (fs, n, &m)) < 0)
    return r;
  if (cfs_el_punch (&m.l, idx, count, free_run, &f) == -1)
    r = -ENOMEM;
  else if ((r = f.r) == 0)
    r = map_store (fs, n, &m);
  cfs_el_free (&m.l);
  return r;
}

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

/* The segment of h's file whose range holds lblk, or the last. */
static int
find_seg (struct cfs_fs *fs, struct ino *h, uint64_t lblk, struct ino *seg)
{
  struct ino next;
  uint32_t steps = 0;
  int r;

  *seg = *h;
  while (lblk >= seg_start (seg) + seg->in.mapped / CFS_BLOCK &&
         (seg->in.flags & CFS_INODE_HAS_CONT)) {
    if (++steps > CFS_MAX_CHAIN)
      return cfs_fs_eio (fs, "inode (%u, %u): continuation chain loops", h->c,
                         h->i);
    if ((r = cfs_iget (fs, seg->in.next, &next)) < 0)
      return r;
    if (!(next.in.flags & CFS_INODE_CONT) ||
        next.in.head != cfs_ref (h->c, h->i) ||
        next.in.offset != seg_start (seg) * CFS_BLOCK + seg->in.mapped)
      return cfs_fs_eio (fs, "inode (%u, %u): broken continuation (%u, %u)",
                         h->c, h->i, next.c, next.i);
    *seg = next;
  }
  return 0;
}

int
cfs_file_map (struct cfs_fs *fs, struct ino *h, uint64_t lblk,
              struct cfs_fmap *out)
{
  struct ino seg;
  struct segmap m;
  uint64_t start, end;
  uint32_t local;
  int r;

  *out = (struct cfs_fmap){0};
  if ((r = find_seg (fs, h, lblk, &seg)) < 0)
    return r;
  start = seg_start (&seg);
  end = start + (seg.in.mapped + CFS_BLOCK - 1) / CFS_BLOCK;
  if (lblk < start || lblk >= end) {
    out->count = UINT64_MAX; /* past the end: a hole */
    return 0;
  }
  if ((r = map_load (fs, &seg, &m)) < 0)
    return r;
  map_lookup (&m, lblk - start, &local, &out->count, &out->unwritten);
  cfs_el_free (&m.l);
  if (out->count > end - lblk)
    out->count = end - lblk;
  if (local)
    out->abs = cfs_block (&fs->sb, seg.c, local);
  return 0;
}

/* Map [lblk, lblk + count) of h's file where it has holes (unwritten
 * or not), continuing the file in other chunks as they fill; the first
 * run allocated or found in *out (fresh: just allocated).
 */
int
cfs_file_alloc (struct cfs_fs *fs, struct ino *h, uint64_t lblk, uint64_t count,
                bool unwritten, struct cfs_fmap *out)
{
  struct ino seg, next;
  int r;

  *out = (struct cfs_fmap){0};
  if ((r = find_seg (fs, h, lblk, &seg)) < 0)
    return r;
  for (;;) {
    uint64_t start = seg_start (&seg), rel = lblk - start, have;
    uint64_t end = start + (seg.in.mapped + CFS_BLOCK - 1) / CFS_BLOCK;
    bool beyond = lblk >= end, full;
    struct segmap m;
    uint32_t local, got;

    if ((r = map_load (fs, &seg, &m)) < 0)
      return r;
    map_lookup (&m, rel, &local, &have, &out->unwritten);
    if (local) {
      cfs_el_free (&m.l);
      out->abs = cfs_block (&fs->sb, seg.c, local);
      out->count = have < count ? have : count;
      return 0;
    }
    if (!beyond && have > end - lblk)
      have = end - lblk;
    r = map_alloc (fs, &seg, &m, rel, have < count ? have : count, unwritten,
                   &local, &got, &full);
    cfs_el_free (&m.l);
    if (r == 0) {
      if (beyond || (rel + got) * CFS_BLOCK > seg.in.mapped) {
        seg.in.mapped = (rel + got) * CFS_BLOCK;
        if ((r = cfs_iput (fs, &seg)) < 0)
          return r;
      }
      if (seg.c == h->c && seg.i == h->i)
        h->in = seg.in;
      *out = (struct cfs_fmap){cfs_block (&fs->sb, seg.c, local), got,
                               unwritten, true};
      return 0;
    }
    if (!full || !beyond)
      return r; /* a hole in a full chunk, or an error */
    /* The chunk (or the map) is full: what this inode maps is all it
     * will map; the file goes on elsewhere.
     */
    if ((r = add_continuation (fs, h, &seg, &next)) < 0)
      return r;
    seg = next;
  }
}

int
cfs_file_block (struct cfs_fs *fs, struct ino *h, uint64_t lblk, bool alloc,
                uint64_t *abs, bool *fresh)
{
  struct cfs_fmap m;
  int r;

  *abs = 0;
  *fresh = false;
  if (!alloc) {
    if ((r = cfs_file_map (fs, h, lblk, &m)) < 0)
      return r;
    *abs = m.abs;
    return 0;
  }
  if ((r = cfs_file_alloc (fs, h, lblk, 1, false, &m)) < 0)
    return r;
  if (m.unwritten && !m.fresh) {
    /* Written from now on: the caller fills it (zeros around its data). */
    if ((r = cfs_file_mark (fs, h, lblk, 1, false)) < 0)
      return r;
    m.fresh = true;
  }
  *abs = m.abs;
  *fresh = m.fresh;
  return 0;
}

/* Each segment of h's file overlapping [lblk, lblk + count), with the
 * part of its own range it overlaps.
 */
typedef int (*seg_fn) (struct cfs_fs *fs, struct ino *seg, uint64_t idx,
                       uint64_t count, bool flag);

static int
each_seg (struct cfs_fs *fs, struct ino *h, uint64_t lblk, uint64_t count,
          seg_fn fn, bool flag)
{
  uint64_t end = lblk + count;
  struct ino seg;
  int r;

  while (lblk < end) {
    uint64_t start, send;
    if ((r = find_seg (fs, h, lblk, &seg)) < 0)
      return r;
    start = seg_start (&seg);
    send = start + (seg.in.mapped + CFS_BLOCK - 1) / CFS_BLOCK;
    if (lblk >= send)
      return 0; /* past the end of the file's map */
    if ((r = fn (fs, &seg, lblk - start, (send < end ? send : end) - lblk,
                 flag)) < 0)
      return r;
    if (seg.c == h->c && seg.i == h->i)
      h->in = seg.in;
    lblk = send;
  }
  return 0;
}

static int
seg_mark (struct cfs_fs *fs, struct ino *seg, uint64_t idx, uint64_t count,
          bool unwritten)
{
  return map_mark (fs, seg, idx, count, unwritten);
}

static int
seg_punch (struct cfs_fs *fs, struct ino *seg, uint64_t idx, uint64_t count,
           bool unused)
{
  (void)unused;
  return map_punch (fs, seg, idx, count);
}

int
cfs_file_mark (struct cfs_fs *fs, struct ino *h, uint64_t lblk, uint64_t count,
               bool unwritten)
{
  return each_seg (fs, h, lblk, count, seg_mark, unwritten);
}

int
cfs_file_punch (struct cfs_fs *fs, struct ino *h, uint64_t lblk, uint64_t count)
{
  return each_seg (fs, h, lblk, count, seg_punch, false);
}

/* Free n's blocks from index `from` of its own range on. */
static int
free_from (struct cfs_fs *fs, struct ino *n, uint64_t from)
{
  return map_punch (fs, n, from, UINT64_MAX - from);
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

int
cfs_count_blocks (struct cfs_fs *fs, struct ino *h, uint64_t *blocks)
{
  struct ino seg = *h;
  uint32_t steps = 0;
  int r;

  *blocks = 0;
  for (;;) {
    struct segmap m;
    if ((r = map_load (fs, &seg, &m)) < 0)
      return r;
    *blocks += m.nleaf;
    for (uint32_t k = 0; k < m.l.n; k++)
      *blocks += m.l.v[k].len;
    cfs_el_free (&m.l);
    if (!(seg.in.flags & CFS_INODE_HAS_CONT) || ++steps > CFS_MAX_CHAIN)
      return 0;
    if ((r = cfs_iget (fs, seg.in.next, &seg)) < 0)
      return r;
  }
}

int
cfs_first_leaf (struct cfs_fs *fs, struct ino *n, uint64_t *abs)
{
  struct cfs_extent ix;

  if (cfs_map_depth (&n->in) != 1 || cfs_map_count (&n->in) == 0)
    return -ENOENT;
  cfs_ext_get (cfs_map_entry (&n->in, 0), &ix);
  *abs = cfs_block (&fs->sb, n->c, ix.start);
  return 0;
}

int
cfs_iget_file (struct cfs_fs *fs, uint64_t ref, struct ino *n)
{
  int r;

  if ((r = cfs_iget (fs, ref, n)) < 0)
    return r;
  if (n->in.mode == 0 || (n->in.flags & CFS_INODE_CONT))
    return -ESTALE;
  return 0;
}

struct lazy_atime *
cfs_lazy_find (struct cfs_fs *fs, const struct ino *n)
{
  uint64_t ino = cfs_ref (n->c, n->i);
  size_t i;

  for (i = 0; i < fs->nlazy; i++)
    if (fs->lazy[i].ino == ino && fs->lazy[i].generation == n->in.generation)
      return &fs->lazy[i];
  return NULL;
}

/* n's atime, one waiting for the sync included. */
uint64_t
cfs_atime (struct cfs_fs *fs, const struct ino *n)
{
  const struct lazy_atime *l = cfs_lazy_find (fs, n);

  return l && l->atime > n->in.atime ? l->atime : n->in.atime;
}

int
cfs_inode_attr (struct cfs_fs *fs, struct ino *n, struct cfs_attr *a)
{
  int r;

  memset (a, 0, sizeof *a);
  a->ino = cfs_ref (n->c, n->i);
  a->generation = n->in.generation;
  a->mode = n->in.mode;
  a->links = n->in.links;
  a->uid = n->in.uid;
  a->gid = n->in.gid;
  a->size = n->in.size;
  a->atime = cfs_atime (fs, n);
  a->mtime = n->in.mtime;
  a->ctime = n->in.ctime;
  a->rdev = n->in.rdev;
  if ((r = cfs_count_blocks (fs, n, &a->blocks)) < 0)
    return r;
  a->blocks += n->in.xattr_block != 0;
  return 0;
}
