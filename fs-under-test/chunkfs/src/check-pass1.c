/* chunkfs — the checker's pass 1 over one chunk (check-passes.h):
 * the back-reference table loaded, then every inode read and checked,
 * with its continuation links (I5, I6) and the blocks it maps (I1), each
 * claimed once in the rebuilt block bitmap; directories' blocks listed
 * for pass 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check-passes.h"
#include "problem.h"

static bool
valid_type (const struct cfs_inode *in)
{
  if (S_ISDIR (in->mode))
    return !(in->flags & ~0u);
  if (S_ISLNK (in->mode))
    return !(in->flags & (CFS_INODE_CONT | CFS_INODE_HAS_CONT)) &&
           (!(in->flags & CFS_INODE_INLINE) || in->size < sizeof in->symlink) &&
           in->size < CFS_BLOCK;
  if (S_ISREG (in->mode))
    return !(in->flags & CFS_INODE_INLINE);
  return cfs_mode_special (in->mode); /* the rest: ck_special */
}

static void
read_inodes (struct ck *k)
{
  uint32_t t, s;

  for (t = 0; t < k->nino / CFS_INODES_PER_BLOCK; t++) {
    unsigned char *blk = k->itab + (size_t)t * CFS_BLOCK;
    if (ck_read (k, ck_abs (k, k->g.inode_table + t), blk) == -1) {
      if (ck_fix (k, PR_1_ITABLE_BAD, k->c, t, k->errmsg,
                  t * CFS_INODES_PER_BLOCK, (t + 1) * CFS_INODES_PER_BLOCK - 1))
        k->itab_dirty[t] = 1;
      memset (blk, 0, CFS_BLOCK);
      continue;
    }
    for (s = 0; s < CFS_INODES_PER_BLOCK; s++) {
      uint32_t i = t * CFS_INODES_PER_BLOCK + s;
      struct cino *n = &k->ino[i];
      struct cfs_err err;
      if (i == 0)
        continue;
      if (cfs_inode_decode (blk + s * CFS_INODE_SIZE, k->sb.uuid, k->c, &n->in,
                            &err) == -1) {
        if (ck_fix (k, PR_1_INODE_BAD, k->c, i, err.msg))
          ck_free_slot (k, i);
        continue;
      }
      if (n->in.mode == 0)
        continue;
      if (!valid_type (&n->in)) {
        if (ck_fix (k, PR_1_INODE_BAD, k->c, i, "bad type or flags"))
          ck_free_slot (k, i);
        continue;
      }
      n->used = true;
      if (cfs_mode_special (n->in.mode))
        ck_special (k, i, blk + s * CFS_INODE_SIZE);
    }
  }
}

/* One past the highest inode the inode bitmap says is in use at or past
 * slot `from`; `from` if none, UINT32_MAX if the bitmap is unreadable.
 */
static uint32_t
bitmap_high (struct ck *k, uint32_t from)
{
  unsigned char blk[CFS_BLOCK];
  struct cfs_err err;
  uint32_t b, high = from;

  for (b = 0; b < k->g.inode_bitmap_blocks; b++) {
    uint32_t first = b * CFS_BITS_PER_BITMAP, o;
    if (ck_read (k, ck_abs (k, k->g.inode_bitmap + b), blk) == -1 ||
        cfs_meta_check (blk, k->sb.uuid, CFS_MAGIC_BITMAP, k->c,
                        k->h.generation, &err) == -1)
      return UINT32_MAX;
    for (o = 0; o < CFS_BITS_PER_BITMAP && first + o < k->g.inodes; o++)
      if (first + o >= from && blk[CFS_HEADER_SIZE + o / 8] >> o % 8 & 1)
        high = first + o + 1;
  }
  return high;
}

/* How much of the inode table to read (k->nino): up to the header's
 * mark, as e2fsck stops at bg_itable_unused, unless the mark is past
 * the table, the inode bitmap says an inode past it is in use, or cannot
 * say (then all).  What the bitmap says: bitmap_high's.
 */
static uint32_t
choose_slots (struct ck *k)
{
  uint32_t mark = k->h.itable_mark, high;
  bool all = k->mark_unknown;

  if (mark > k->g.inodes) {
    if (ck_fix (k, PR_1_ITABLE_MARK_BIG, k->c, mark, k->g.inodes))
      k->h.itable_mark = k->g.inodes;
    mark = k->g.inodes;
  }
  high = bitmap_high (k, mark);
  if (high > mark)
    all = true;
  k->nino = all ? k->g.inodes
                : (mark + CFS_INODES_PER_BLOCK - 1) / CFS_INODES_PER_BLOCK *
                      CFS_INODES_PER_BLOCK;
  ck_prefetch_more (k, k->g.inode_table + k->nino / CFS_INODES_PER_BLOCK);
  return high == UINT32_MAX ? mark : high;
}

/* After a read past the mark: a slot there in use (the bitmap's `high`
 * or a slot not all zero) raises it.
 */
static void
check_mark (struct ck *k, uint32_t high)
{
  uint32_t mark = k->h.itable_mark, i, slot;

  if (mark > k->g.inodes)
    mark = k->g.inodes;
  if (k->nino <= mark)
    return;
  for (i = k->nino; i > mark && i > high; i--)
    if (!cfs_all_zero (k->itab + (size_t)(i - 1) * CFS_INODE_SIZE,
                       CFS_INODE_SIZE)) {
      high = i;
      break;
    }
  slot = high - 1;
  if (high < cfs_mark_start (&k->sb))
    high = cfs_mark_start (&k->sb);
  high = (high + CFS_MARK_STEP - 1) / CFS_MARK_STEP * CFS_MARK_STEP;
  if (high > k->g.inodes)
    high = k->g.inodes;
  if (k->mark_unknown)
    k->h.itable_mark = high; /* the header is being rebuilt */
  else if (high > mark && ck_fix (k, PR_1_ITABLE_MARK_LOW, k->c, slot, mark))
    k->h.itable_mark = high;
}

static uint64_t
seg_start (const struct cfs_inode *in)
{
  return in->flags & CFS_INODE_CONT ? in->offset / CFS_BLOCK : 0;
}

/* Cut the chain after segment `ref` (which keeps what it maps). */
static void
cut_after (struct ck *k, uint64_t ref, struct cfs_inode *seg, uint64_t head)
{
  struct cfs_inode h;

  seg->flags &= (uint16_t)~CFS_INODE_HAS_CONT;
  seg->next = 0;
  ck_put_inode (k, ref, seg);
  /* The file ends where its chain now ends. */
  if (ck_inode (k, head, &h) == 0) {
    uint64_t end = seg_start (seg) * CFS_BLOCK + seg->mapped;
    if (ref == head)
      h = *seg;
    if (h.size > end) {
      h.size = end;
      ck_put_inode (k, head, &h);
    }
  }
}

/* Follow the continuation chain from inode `from` (a head, or a
 * continuation of head) as far as it is sound, fixing the first broken
 * link.  With `until`, stop there (found: 1).
 */
static int
walk_chain (struct ck *k, uint64_t head, uint64_t from, uint64_t until,
            bool fix)
{
  struct cfs_inode seg, next;
  uint64_t ref = from;
  uint32_t steps;

  if (ck_inode (k, ref, &seg) == -1)
    return -1;
  for (steps = 0; steps < CFS_MAX_CHAIN; steps++) {
    if (ref == until)
      return 1;
    if (!(seg.flags & CFS_INODE_HAS_CONT))
      return 0;
    if (ck_inode (k, seg.next, &next) == -1 || !(next.flags & CFS_INODE_CONT) ||
        !S_ISREG (next.mode) || next.head != head ||
        next.offset != seg_start (&seg) * CFS_BLOCK + seg.mapped ||
        seg.next == head) {
      if (fix && ck_fix (k, PR_1_CHAIN_BROKEN, ref_chunk (head), ref_ino (head),
                         ref_chunk (seg.next), ref_ino (seg.next)))
        cut_after (k, ref, &seg, head);
      return 0;
    }
    ref = seg.next;
    seg = next;
  }
  if (fix && ck_fix (k, PR_1_CHAIN_BROKEN, ref_chunk (head), ref_ino (head),
                     ref_chunk (ref), ref_ino (ref)))
    cut_after (k, ref, &seg, head);
  return 0;
}

static void
check_chains (struct ck *k)
{
  uint32_t i;

  for (i = 1; i < k->nino; i++) {
    struct cino *n = &k->ino[i];
    uint64_t me = cfs_ref (k->c, i);
    if (!n->used)
      continue;
    if (!(n->in.flags & CFS_INODE_CONT)) {
      if (n->in.flags & CFS_INODE_HAS_CONT)
        walk_chain (k, me, me, 0, true);
      continue;
    }
    /* A continuation: its head must reach it... */
    {
      struct cfs_inode h;
      if (ck_inode (k, n->in.head, &h) == -1 || (h.flags & CFS_INODE_CONT) ||
          !S_ISREG (h.mode) ||
          walk_chain (k, n->in.head, n->in.head, me, false) != 1) {
        if (ck_fix (k, PR_1_CONT_ORPHAN, k->c, i))
          ck_free_slot (k, i);
        continue;
      }
    }
    /* ...and its own link onwards must hold. */
    if (n->in.flags & CFS_INODE_HAS_CONT)
      walk_chain (k, n->in.head, me, 0, true);
  }
}

/* Extent e of inode i, after the extent ending at *prev: sound and
 * claimed (1), or the first bad one (0, its problem reported).
 */
static int
claim_extent (struct ck *k, uint32_t i, const struct cfs_extent *e,
              uint64_t *prev, bool *fix)
{
  const char *why = NULL;

  if (e->len == 0)
    why = "empty";
  else if (e->lblk < *prev)
    why = "out of order or overlapping";
  else if (e->start < k->g.first_data ||
           e->len > k->g.chunk_blocks - e->start ||
           e->start >= k->g.chunk_blocks)
    why = "outside its chunk's data";
  if (!why && ck_any_used (k, e->start, e->len))
    why = "claimed twice";
  if (why) {
    *fix = ck_fix (k, PR_1_EXTENT_BAD, k->c, i, e->lblk, e->start, e->len, why);
    return 0;
  }
  ck_set_range (k, e->start, e->len);
  *prev = (uint64_t)e->lblk + e->len;
  return 1;
}

/* Leaf block ix.start of inode i, read into blk and checked: NULL, or
 * what is wrong with it.
 */
static const char *
read_leaf (struct ck *k, uint32_t i, const struct cfs_extent *ix,
           unsigned char *blk)
{
  static char why[256];
  struct cfs_err err;

  if (ix->start < k->g.first_data || ix->start >= k->g.chunk_blocks)
    return "outside its chunk's data";
  if (ck_is_used (k, ix->start))
    return "claimed twice";
  if (ck_read (k, ck_abs (k, ix->start), blk) == -1) {
    snprintf (why, sizeof why, "%s", k->errmsg);
    return why;
  }
  if (cfs_meta_check (blk, k->sb.uuid, CFS_MAGIC_EXTENT, k->c, k->h.generation,
                      &err) == -1) {
    snprintf (why, sizeof why, "%s", err.msg);
    return why;
  }
  if (cfs_get32 (blk + CFS_HEADER_SIZE + 4) != i)
    return "another inode's";
  if (ix->len == 0 || ix->len > CFS_EXT_PER_BLOCK ||
      cfs_get16 (blk + CFS_HEADER_SIZE) != ix->len)
    return "its count differs from its index entry's";
  {
    struct cfs_extent first;
    cfs_ext_get (blk + CFS_EXT_START, &first);
    if (first.lblk != ix->lblk)
      return "its first extent differs from its index entry's";
  }
  return NULL;
}

/* The extents of leaf ix (checked) claimed; a bad one cuts the leaf
 * there (rewritten).  1 all sound, 0 cut (*keep: extents kept in it).
 */
static int
walk_leaf (struct ck *k, uint32_t i, struct cfs_extent *ix, unsigned char *blk,
           uint64_t *prev, uint32_t *keep)
{
  bool fix = false;
  uint32_t j;

  for (j = 0; j < ix->len; j++) {
    struct cfs_extent e;
    cfs_ext_get (blk + CFS_EXT_START + 12 * j, &e);
    if (!claim_extent (k, i, &e, prev, &fix))
      break;
  }
  *keep = j;
  if (j == ix->len)
    return 1;
  if (fix && j > 0 && k->write) {
    memset (blk + CFS_EXT_START + 12 * j, 0, 12 * (ix->len - j));
    cfs_put16 (blk + CFS_HEADER_SIZE, (uint16_t)j);
    cfs_meta_seal (k->sb.uuid, blk);
    ck_write (k, ck_abs (k, ix->start), blk);
  }
  if (!fix)
    *keep = ix->len; /* left as it is */
  return 0;
}

/* Inode i's map cut to its first `count` entries. */
static void
cut_map (struct ck *k, uint32_t i, uint32_t count)
{
  struct cino *n = &k->ino[i];

  for (uint32_t j = count; j < CFS_EXT_ROOT; j++)
    memset (cfs_map_entry (&n->in, j), 0, 12);
  cfs_put16 (n->in.map, (uint16_t)count);
  if (count == 0)
    cfs_put16 (n->in.map + 2, 0);
  ck_inode_changed (k, i);
}

/* Claim the extents of a depth 1 map: every leaf checked, the first bad
 * leaf or extent cutting the map there.  *hi: the end of what it maps.
 */
static void
walk_index (struct ck *k, uint32_t i, uint64_t *hi)
{
  struct cino *n = &k->ino[i];
  unsigned char blk[CFS_BLOCK];
  uint16_t count = cfs_map_count (&n->in);

  for (uint32_t j = 0; j < count; j++) {
    struct cfs_extent ix;
    const char *why;
    uint32_t keep;
    cfs_ext_get (cfs_map_entry (&n->in, j), &ix);
    if ((why = read_leaf (k, i, &ix, blk)) != NULL) {
      if (ck_fix (k, PR_1_LEAF_BAD, k->c, i, ix.start, why))
        cut_map (k, i, j);
      return;
    }
    ck_set_used (k, ix.start, true);
    if (walk_leaf (k, i, &ix, blk, hi, &keep))
      continue;
    if (keep == ix.len)
      return; /* not fixed */
    if (keep == 0) {
      ck_set_used (k, ix.start, false);
      cut_map (k, i, j);
    } else {
      ix.len = keep;
      cfs_ext_put (cfs_map_entry (&n->in, j), &ix);
      cut_map (k, i, j + 1);
    }
    return;
  }
}

/* Release the blocks of inode i's (checked) map. */
static void
unclaim_map (struct ck *k, uint32_t i)
{
  struct cino *n = &k->ino[i];
  unsigned char blk[CFS_BLOCK];
  uint16_t count = cfs_map_count (&n->in);
  bool depth1 = cfs_map_depth (&n->in) == 1;

  for (uint32_t j = 0; j < count && j < CFS_EXT_ROOT; j++) {
    struct cfs_extent e;
    uint32_t nleaf = 1;
    cfs_ext_get (cfs_map_entry (&n->in, j), &e);
    if (depth1) {
      if (e.start < k->g.first_data || e.start >= k->g.chunk_blocks ||
          ck_read (k, ck_abs (k, e.start), blk) == -1)
        continue;
      ck_set_used (k, e.start, false);
      nleaf = e.len < CFS_EXT_PER_BLOCK ? e.len : CFS_EXT_PER_BLOCK;
    }
    for (uint32_t x = 0; x < nleaf; x++) {
      if (depth1)
        cfs_ext_get (blk + CFS_EXT_START + 12 * x, &e);
      for (uint32_t b = 0; b < e.len; b++)
        if (e.start + b >= k->g.first_data && e.start + b < k->g.chunk_blocks)
          ck_set_used (k, e.start + b, false);
    }
  }
}

/* Claim (or, with unclaim, release) every block inode i maps. */
void
ck_walk_blocks (struct ck *k, uint32_t i, bool unclaim)
{
  struct cino *n = &k->ino[i];
  uint16_t count = cfs_map_count (&n->in), depth = cfs_map_depth (&n->in);
  uint64_t hi = 0;

  if (unclaim) {
    unclaim_map (k, i);
    return;
  }
  if (depth > 1 || count > CFS_EXT_ROOT) {
    if (ck_fix (k, PR_1_EXTMAP_HEADER, k->c, i, count, depth))
      cut_map (k, i, 0);
    return;
  }
  if (depth == 1)
    walk_index (k, i, &hi);
  else
    for (uint32_t j = 0; j < count; j++) {
      struct cfs_extent e;
      bool fix = false;
      cfs_ext_get (cfs_map_entry (&n->in, j), &e);
      if (!claim_extent (k, i, &e, &hi, &fix)) {
        if (fix)
          cut_map (k, i, j);
        break;
      }
    }
  if (hi * CFS_BLOCK > n->in.mapped && !S_ISLNK (n->in.mode) &&
      ck_fix (k, PR_1_MAPPED_SHORT, k->c, i)) {
    n->in.mapped = hi * CFS_BLOCK;
    ck_inode_changed (k, i);
  }
}

static void
dir_layout (struct ck *k, uint32_t i)
{
  struct cino *n = &k->ino[i];
  struct cfs_extlist l = {0};
  uint64_t nb;

  if (n->in.size % CFS_BLOCK || n->in.size / CFS_BLOCK > CK_MAX_DIR_BLOCKS) {
    if (ck_fix (k, PR_1_DIR_SIZE, k->c, i, (unsigned long long)n->in.size)) {
      n->in.size -= n->in.size % CFS_BLOCK;
      if (n->in.size / CFS_BLOCK > CK_MAX_DIR_BLOCKS)
        n->in.size = (uint64_t)CK_MAX_DIR_BLOCKS * CFS_BLOCK;
      ck_inode_changed (k, i);
    }
  }
  nb = n->in.size / CFS_BLOCK;
  if (nb > CK_MAX_DIR_BLOCKS)
    nb = CK_MAX_DIR_BLOCKS;
  n->dblocks = calloc (nb ? nb : 1, sizeof *n->dblocks);
  if (n->dblocks == NULL)
    return;
  n->ndblocks = (uint32_t)nb;
  /* The map was checked above: read through it. */
  if (ck_map_read (k, k->c, k->h.generation, i, &n->in, &l) == -1)
    return;
  for (uint32_t x = 0; x < l.n; x++)
    for (uint32_t b = 0; b < l.v[x].len && l.v[x].lblk + (uint64_t)b < nb; b++)
      n->dblocks[l.v[x].lblk + b] = l.v[x].start + b;
  cfs_el_free (&l);
}

static void
load_backrefs (struct ck *k)
{
  unsigned char blk[CFS_BLOCK];
  struct cfs_err err;
  uint32_t b, j, n;
  const char *bad = NULL;

  if (k->h.backref_block == 0)
    return;
  if (k->h.backref_block < k->g.first_data ||
      (uint64_t)k->h.backref_block + k->h.backref_blocks > k->g.chunk_blocks)
    bad = "out of range";
  for (b = 0; !bad && b < k->h.backref_blocks; b++) {
    uint32_t local = k->h.backref_block + b;
    if (ck_read (k, ck_abs (k, local), blk) == -1) {
      bad = k->errmsg;
      break;
    }
    if (cfs_meta_check (blk, k->sb.uuid, CFS_MAGIC_BACKREF, k->c,
                        k->h.generation, &err) == -1) {
      bad = err.msg;
      break;
    }
    if ((n = cfs_get32 (blk + CFS_HEADER_SIZE)) > CFS_BACKREFS_PER_BLOCK) {
      bad = "record count";
      break;
    }
    ck_set_used (k, local, true);
    for (j = 0; j < n; j++) {
      const unsigned char *p = blk + CFS_HEADER_SIZE + 4 + 16 * j;
      if (cfs_br_reserve (&k->br, k->nbr, &k->abr) == -1)
        return;
      k->br[k->nbr++] = cfs_br_decode (p);
    }
  }
  if (bad) {
    char why[256];
    snprintf (why, sizeof why, "%s", bad);
    for (j = 0; j < b; j++) /* the blocks claimed before the bad one */
      ck_set_used (k, k->h.backref_block + j, false);
    k->h.backref_block = k->h.backref_blocks = 0;
    k->nbr = 0;
    if (ck_fix (k, PR_1_BACKREFS_BAD, k->c, why)) {
      k->br_changed = true;
      ck_lose_backrefs (k);
    }
  }
}

/* Back-references other chunks' checks found missing here: they join
 * the table before it is checked (and are confirmed like the rest).
 */
static void
merge_pending (struct ck *k)
{
  size_t i = 0;
  uint32_t j;

  while (i < k->npend) {
    if (k->pend[i].chunk != k->c) {
      i++;
      continue;
    }
    {
      bool have = false;
      for (j = 0; j < k->nbr && !have; j++)
        have = !memcmp (&k->br[j], &k->pend[i].br, sizeof k->br[j]);
      if (!have && ck_add_backref (k, &k->pend[i].br) == -1)
        return;
      k->pend[i] = k->pend[--k->npend];
    }
  }
}

void
ck_pass1 (struct ck *k)
{
  uint32_t i, high;

  for (i = 0; i < k->g.first_data; i++)
    ck_set_used (k, i, true);
  load_backrefs (k);
  merge_pending (k);
  high = choose_slots (k);
  read_inodes (k);
  check_mark (k, high);
  check_chains (k);
  for (i = 1; i < k->nino; i++)
    if (k->ino[i].used) {
      ck_walk_blocks (k, i, false);
      ck_xattr (k, i);
      if (S_ISDIR (k->ino[i].in.mode))
        dir_layout (k, i);
      if (!(k->ino[i].in.flags & CFS_INODE_CONT))
        k->res->files++;
    }
}
