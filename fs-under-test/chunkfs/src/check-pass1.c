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

  for (t = 0; t < k->g.inode_table_blocks; t++) {
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

  for (i = 1; i < k->g.inodes; i++) {
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

/* Claim block b for inode i: 0, or -1 when the pointer must go. */
static int
claim (struct ck *k, uint32_t i, uint32_t b)
{
  if (b < k->g.first_data || b >= k->g.chunk_blocks) {
    if (ck_fix (k, PR_1_BLOCK_RANGE, k->c, i, b))
      return -1;
    return 0;
  }
  if (ck_is_used (k, b)) {
    if (ck_fix (k, PR_1_BLOCK_DUP, k->c, i, b))
      return -1;
    return 0;
  }
  ck_set_used (k, b, true);
  return 0;
}

/* The pointers of indirect block b (level 1: data, 2: indirect). */
static void
walk_indirect (struct ck *k, uint32_t i, uint32_t b, int level, uint64_t base,
               uint64_t *hi, bool unclaim)
{
  const uint64_t P = CFS_PTRS_PER_BLOCK;
  unsigned char blk[CFS_BLOCK];
  bool changed = false;
  uint32_t s;

  if (ck_read (k, ck_abs (k, b), blk) == -1)
    return;
  for (s = 0; s < P; s++) {
    uint32_t v = cfs_get32 (blk + CFS_HEADER_SIZE + 4 * s);
    uint64_t idx = base + s * (level == 2 ? P : 1);
    struct cfs_err err;
    if (v == 0)
      continue;
    if (unclaim) {
      if (v >= k->g.first_data && v < k->g.chunk_blocks) {
        if (level == 2)
          walk_indirect (k, i, v, 1, idx, hi, true);
        ck_set_used (k, v, false);
      }
      continue;
    }
    if (claim (k, i, v) == -1) {
      cfs_put32 (blk + CFS_HEADER_SIZE + 4 * s, 0);
      changed = true;
      continue;
    }
    if (level == 2) {
      unsigned char sub[CFS_BLOCK];
      if (ck_read (k, ck_abs (k, v), sub) == -1 ||
          cfs_meta_check (sub, k->sb.uuid, CFS_MAGIC_INDIRECT, k->c,
                          k->h.generation, &err) == -1) {
        if (ck_fix (k, PR_1_INDIRECT_BAD, k->c, i, v,
                    k->errmsg[0] ? k->errmsg : err.msg)) {
          ck_set_used (k, v, false);
          cfs_put32 (blk + CFS_HEADER_SIZE + 4 * s, 0);
          changed = true;
        }
        continue;
      }
      walk_indirect (k, i, v, 1, idx, hi, false);
    } else if (idx + 1 > *hi)
      *hi = idx + 1;
  }
  if (changed && k->write) {
    cfs_meta_seal (k->sb.uuid, blk);
    ck_write (k, ck_abs (k, b), blk);
  }
}

/* The indirect block at *p: checked and walked, or cleared. */
static void
walk_top (struct ck *k, uint32_t i, uint32_t *p, int level, uint64_t base,
          uint64_t *hi, bool unclaim)
{
  unsigned char blk[CFS_BLOCK];
  struct cfs_err err;

  if (*p == 0)
    return;
  if (unclaim) {
    if (*p >= k->g.first_data && *p < k->g.chunk_blocks) {
      walk_indirect (k, i, *p, level, base, hi, true);
      ck_set_used (k, *p, false);
    }
    return;
  }
  if (claim (k, i, *p) == -1) {
    *p = 0;
    ck_inode_changed (k, i);
    return;
  }
  k->errmsg[0] = '\0';
  if (ck_read (k, ck_abs (k, *p), blk) == -1 ||
      cfs_meta_check (blk, k->sb.uuid, CFS_MAGIC_INDIRECT, k->c,
                      k->h.generation, &err) == -1) {
    if (ck_fix (k, PR_1_INDIRECT_BAD, k->c, i, *p,
                k->errmsg[0] ? k->errmsg : err.msg)) {
      ck_set_used (k, *p, false);
      *p = 0;
      ck_inode_changed (k, i);
    }
    return;
  }
  walk_indirect (k, i, *p, level, base, hi, false);
}

/* Claim (or, with unclaim, release) every block inode i maps. */
void
ck_walk_blocks (struct ck *k, uint32_t i, bool unclaim)
{
  struct cino *n = &k->ino[i];
  uint64_t hi = 0;
  uint32_t d;

  for (d = 0; d < CFS_NDIRECT; d++) {
    uint32_t b = n->in.direct[d];
    if (b == 0)
      continue;
    if (unclaim) {
      if (b >= k->g.first_data && b < k->g.chunk_blocks)
        ck_set_used (k, b, false);
      continue;
    }
    if (claim (k, i, b) == -1) {
      n->in.direct[d] = 0;
      ck_inode_changed (k, i);
    } else if (d + 1 > hi)
      hi = d + 1;
  }
  walk_top (k, i, &n->in.indirect, 1, CFS_NDIRECT, &hi, unclaim);
  walk_top (k, i, &n->in.dindirect, 2, CFS_NDIRECT + CFS_PTRS_PER_BLOCK, &hi,
            unclaim);
  if (unclaim)
    return;
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
  uint64_t nb, idx;

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
  for (idx = 0; idx < nb && idx < CFS_NDIRECT; idx++)
    n->dblocks[idx] = n->in.direct[idx];
  /* Beyond the direct pointers: read through the (checked) indirect
   * blocks.
   */
  for (; idx < nb; idx++) {
    const uint64_t P = CFS_PTRS_PER_BLOCK;
    unsigned char blk[CFS_BLOCK];
    uint64_t rel = idx - CFS_NDIRECT;
    uint32_t ptr;
    if (rel < P)
      ptr = n->in.indirect;
    else {
      rel -= P;
      ptr = n->in.dindirect;
      if (ptr == 0 || ck_read (k, ck_abs (k, ptr), blk) == -1)
        continue;
      ptr = cfs_get32 (blk + CFS_HEADER_SIZE + 4 * (rel / P));
      rel %= P;
    }
    if (ptr < k->g.first_data || ptr >= k->g.chunk_blocks ||
        ck_read (k, ck_abs (k, ptr), blk) == -1)
      continue;
    n->dblocks[idx] = cfs_get32 (blk + CFS_HEADER_SIZE + 4 * rel);
  }
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
  uint32_t i;

  for (i = 0; i < k->g.first_data; i++)
    ck_set_used (k, i, true);
  load_backrefs (k);
  merge_pending (k);
  read_inodes (k);
  check_chains (k);
  for (i = 1; i < k->g.inodes; i++)
    if (k->ino[i].used) {
      ck_walk_blocks (k, i, false);
      ck_xattr (k, i);
      if (S_ISDIR (k->ino[i].in.mode))
        dir_layout (k, i);
      if (!(k->ino[i].in.flags & CFS_INODE_CONT))
        k->res->files++;
    }
}
