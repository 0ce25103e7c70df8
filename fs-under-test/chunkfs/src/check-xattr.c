/* chunkfs — the checker's look at extended attributes, part of pass 1
 * (check-passes.h): an inode's in-inode area and its xattr block are
 * checked as FORMAT.md says ("Extended attributes"), and the block, when
 * sound, claimed in the rebuilt block bitmap like any block the inode
 * maps (I1).  What cannot be trusted is cleared: the attributes are lost,
 * the block goes back to the free space when pass 5 writes the bitmap.
 */
#include <string.h>

#include "check-passes.h"
#include "problem.h"

/* What is wrong with inode i's in-inode area, or NULL. */
static const char *
area_problem (const struct cfs_inode *in)
{
  struct cfs_xent ents[CFS_XATTR_INODE / 5];
  const char *why;
  size_t n;

  if (in->flags & CFS_INODE_INLINE ||
      cfs_all_zero (in->xattr, sizeof in->xattr))
    return NULL;
  if (in->flags & CFS_INODE_CONT)
    return "a continuation has none";
  if (in->xattr_block)
    return "its xattr block holds them";
  if (cfs_xattr_scan (in->xattr, sizeof in->xattr, ents,
                      sizeof ents / sizeof ents[0], &n, &why) == -1)
    return why;
  return NULL;
}

/* What is wrong with inode i's xattr block b (read into blk), or NULL;
 * *claimable when b is in the data area and nobody claimed it yet.
 */
static const char *
block_problem (struct ck *k, uint32_t i, uint32_t b, unsigned char *blk,
               struct cfs_err *err, bool *claimable)
{
  struct cfs_xent ents[CFS_XATTR_MAX_ENTRIES];
  const struct cfs_inode *in = &k->ino[i].in;
  const char *why;
  size_t n;

  *claimable = false;
  if (b < k->g.first_data || b >= k->g.chunk_blocks)
    return "outside the chunk's data";
  if (ck_is_used (k, b))
    return "another inode's block";
  *claimable = true;
  if (in->flags & CFS_INODE_CONT)
    return "a continuation has none";
  if (ck_read (k, ck_abs (k, b), blk) == -1)
    return k->errmsg;
  if (cfs_meta_check (blk, k->sb.uuid, CFS_MAGIC_XATTR, k->c, k->h.generation,
                      err) == -1)
    return err->msg;
  if (cfs_get32 (blk + CFS_HEADER_SIZE) != i ||
      cfs_get32 (blk + CFS_HEADER_SIZE + 4) != in->generation)
    return "it names another owner";
  if (cfs_xattr_scan (blk + CFS_XATTR_START, CFS_XATTR_END - CFS_XATTR_START,
                      ents, CFS_XATTR_MAX_ENTRIES, &n, &why) == -1)
    return why;
  if (n == 0)
    return "it holds no attributes";
  return NULL;
}

void
ck_xattr (struct ck *k, uint32_t i)
{
  struct cfs_inode *in = &k->ino[i].in;
  unsigned char blk[CFS_BLOCK];
  struct cfs_err err;
  const char *why;
  bool claimable;

  if ((why = area_problem (in)) != NULL &&
      ck_fix (k, PR_1_XATTR_AREA_BAD, k->c, i, why)) {
    memset (in->xattr, 0, sizeof in->xattr);
    ck_inode_changed (k, i);
  }
  if (in->xattr_block == 0)
    return;
  why = block_problem (k, i, in->xattr_block, blk, &err, &claimable);
  /* Claimed even when the fix is declined: the bitmap then differs only
   * by what is wrong.
   */
  if (claimable)
    ck_set_used (k, in->xattr_block, true);
  if (why && ck_fix (k, PR_1_XATTR_BLOCK_BAD, k->c, i, in->xattr_block, why)) {
    if (claimable)
      ck_set_used (k, in->xattr_block, false);
    in->xattr_block = 0;
    ck_inode_changed (k, i);
  }
}

void
ck_xattr_release (struct ck *k, uint32_t i)
{
  uint32_t b = k->ino[i].in.xattr_block;

  if (b >= k->g.first_data && b < k->g.chunk_blocks)
    ck_set_used (k, b, false);
}
