/* chunkfs — the checker's pass 5 over one chunk (check-passes.h): the
 * back-reference table and inode table written back, both bitmaps and
 * the free counts compared with what passes 1 to 4 found in use, and the
 * header's state and times.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check-passes.h"
#include "problem.h"

static uint32_t
alloc_run (struct ck *k, uint32_t count)
{
  uint32_t b, run = 0;

  for (b = k->g.first_data; b < k->g.chunk_blocks; b++) {
    run = ck_is_used (k, b) ? 0 : run + 1;
    if (run == count) {
      uint32_t first = b + 1 - count;
      for (b = first; b < first + count; b++)
        ck_set_used (k, b, true);
      return first;
    }
  }
  return 0;
}

static void
write_backrefs (struct ck *k)
{
  uint32_t nblocks, first, b, j, i;

  if (!k->br_changed)
    return;
  if (!ck_fix (k, PR_5_BACKREFS, k->c, k->nbr))
    return;
  for (b = 0; b < k->h.backref_blocks; b++)
    if (k->h.backref_block + b >= k->g.first_data &&
        k->h.backref_block + b < k->g.chunk_blocks)
      ck_set_used (k, k->h.backref_block + b, false);
  k->h.backref_block = k->h.backref_blocks = 0;
  nblocks = cfs_br_blocks (k->nbr);
  if (nblocks == 0)
    return;
  if ((first = alloc_run (k, nblocks)) == 0) {
    k->left = true;
    k->res->exit |= CFS_EXIT_UNCORRECTED;
    return;
  }
  /* Sorted by inode, as the table is. */
  for (i = 1; i < k->nbr; i++)
    for (j = i; j > 0 && k->br[j - 1].ino > k->br[j].ino; j--) {
      struct backref t = k->br[j];
      k->br[j] = k->br[j - 1];
      k->br[j - 1] = t;
    }
  for (b = 0; b < nblocks; b++) {
    unsigned char blk[CFS_BLOCK] = {0};
    cfs_meta_begin (blk, CFS_MAGIC_BACKREF, 0, k->c, k->h.generation);
    cfs_br_encode_block (blk, k->br, k->nbr, b);
    cfs_meta_seal (k->sb.uuid, blk);
    ck_write (k, ck_abs (k, first + b), blk);
  }
  k->h.backref_block = first;
  k->h.backref_blocks = nblocks;
}

/* Inode i in use (0 always is); none is past the slots read. */
static bool
in_use (const struct ck *k, uint32_t i)
{
  return i == 0 || (i < k->nino && k->ino[i].used);
}

/* Compare one bitmap (blocks or inodes) with what is in use. */
static void
check_bitmap (struct ck *k, bool inodes)
{
  uint32_t first = inodes ? k->g.inode_bitmap : k->g.block_bitmap;
  uint32_t nblk = inodes ? k->g.inode_bitmap_blocks : k->g.block_bitmap_blocks;
  uint32_t limit = inodes ? k->g.inodes : k->g.chunk_blocks;
  uint32_t set = 0, clear = 0, b, bit;
  unsigned char *blks = calloc (nblk, CFS_BLOCK);
  struct cfs_err err;

  if (blks == NULL)
    return;
  for (b = 0; b < nblk; b++) {
    unsigned char *blk = blks + (size_t)b * CFS_BLOCK;
    if (ck_read (k, ck_abs (k, first + b), blk) == -1 ||
        cfs_meta_check (blk, k->sb.uuid, CFS_MAGIC_BITMAP, k->c,
                        k->h.generation, &err) == -1)
      memset (blk, 0xff, CFS_BLOCK), set++; /* rewritten whole */
  }
  for (bit = 0; bit < limit;) {
    unsigned char *blk = blks + (size_t)(bit / CFS_BITS_PER_BITMAP) * CFS_BLOCK;
    uint32_t o = bit % CFS_BITS_PER_BITMAP;
    bool disk = blk[CFS_HEADER_SIZE + o / 8] >> o % 8 & 1;
    bool want;
    /* Block bitmaps a byte at a time (a bitmap block holds whole bytes
     * of bits, and a chunk whole bytes of blocks).
     */
    if (!inodes && bit % 8 == 0 && bit + 8 <= limit) {
      unsigned d = blk[CFS_HEADER_SIZE + o / 8], w = k->used[bit / 8];
      if (d != w) {
        set += (uint32_t)__builtin_popcount (w & ~d & 0xffu);
        clear += (uint32_t)__builtin_popcount (d & ~w & 0xffu);
      }
      bit += 8;
      continue;
    }
    want = inodes ? in_use (k, bit) : ck_is_used (k, bit);
    if (disk != want)
      want ? set++ : clear++;
    bit++;
  }
  if ((set || clear) &&
      ck_fix (k, inodes ? PR_5_INODE_BITMAP : PR_5_BLOCK_BITMAP, k->c, set,
              clear)) {
    for (b = 0; b < nblk; b++) {
      unsigned char *blk = blks + (size_t)b * CFS_BLOCK;
      cfs_meta_begin (blk, CFS_MAGIC_BITMAP, inodes ? 1 : 0, k->c,
                      k->h.generation);
      memset (blk + CFS_HEADER_SIZE, 0, CFS_BLOCK - CFS_HEADER_SIZE);
      for (bit = b * CFS_BITS_PER_BITMAP;
           bit < limit && bit < (b + 1) * CFS_BITS_PER_BITMAP; bit++) {
        uint32_t o = bit % CFS_BITS_PER_BITMAP;
        if (inodes ? in_use (k, bit) : ck_is_used (k, bit))
          blk[CFS_HEADER_SIZE + o / 8] |= (uint8_t)(1u << o % 8);
      }
      cfs_meta_seal (k->sb.uuid, blk);
      ck_write (k, ck_abs (k, first + b), blk);
    }
  }
  free (blks);
}

void
ck_pass5 (struct ck *k, uint64_t fixed_before)
{
  uint32_t t, b, free_b = 0, free_i = 0, i;
  unsigned char blk[CFS_BLOCK];
  struct timespec ts;

  write_backrefs (k);
  for (t = 0; t < k->nino / CFS_INODES_PER_BLOCK; t++)
    if (k->itab_dirty[t] && k->write)
      ck_write (k, ck_abs (k, k->g.inode_table + t),
                k->itab + (size_t)t * CFS_BLOCK);
  check_bitmap (k, true);
  check_bitmap (k, false);
  for (b = 0; b + 64 <= k->g.chunk_blocks; b += 64) {
    uint64_t w;
    memcpy (&w, k->used + b / 8, 8);
    free_b += w == UINT64_MAX ? 0 : 64 - (uint32_t)__builtin_popcountll (w);
  }
  for (; b < k->g.chunk_blocks; b++)
    free_b += !ck_is_used (k, b);
  free_i = k->g.inodes - k->nino; /* never used */
  for (i = 1; i < k->nino; i++)
    free_i += !k->ino[i].used;
  k->res->blocks_used += k->g.chunk_blocks - free_b;
  if ((k->h.free_blocks != free_b || k->h.free_inodes != free_i) &&
      ck_fix (k, PR_5_COUNTS, k->c, k->h.free_blocks, k->h.free_inodes, free_b,
              free_i)) {
    k->h.free_blocks = free_b;
    k->h.free_inodes = free_i;
  }
  if (!k->write)
    return;
  /* A clean chunk that needed nothing keeps its header as it is. */
  if (k->h.state == CFS_CLEAN && !k->left && k->res->fixed == fixed_before)
    return;
  clock_gettime (CLOCK_REALTIME, &ts);
  k->h.checked = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  if (!k->left && !k->incomplete) {
    k->h.state = CFS_CLEAN;
    k->h.cleaned = k->h.checked;
  } else if (k->h.state == CFS_CLEAN)
    k->h.state = CFS_DAMAGED;
  k->h.super = k->sb;
  cfs_header_encode (&k->h, blk);
  if (ck_write (k, ck_abs (k, 0), blk) == 0)
    ck_map_set (k, k->c, k->h.state != CFS_CLEAN);
}
