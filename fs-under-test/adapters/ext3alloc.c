/* futuredisk — fs-under-test: ext3's files allocated without writing
 * them, on the unmounted file system (libext2fs, e2fsprogs).
 *
 * ext3 maps a file block by block (no extents), and the kernel cannot
 * allocate a block-mapped file without writing it: fallocate(2) fails
 * with EOPNOTSUPP, and glibc's posix_fallocate then writes every block.
 * So a metadata-only populate makes each file sparse at its size through
 * the kernel, and this gives it its blocks afterwards: a run of free
 * blocks at a time, the indirect blocks among the data as ext3 places
 * them, each indirect block written, the data blocks not (they read as
 * the new disk's zeros).  libext2fs does the bitmaps, counts and inodes;
 * the map is built here because ext2fs_fallocate maps a block-mapped
 * file one ext2fs_bmap2 call per block, hours at 2 TB.
 */
#include <errno.h>
#include <ext2fs/ext2fs.h>
#include <stdlib.h>
#include <string.h>

#include "fsadapter.h"

/* Entries of an indirect block (4-byte block numbers). */
#define PER(fs) ((blk64_t)(fs)->blocksize / 4)

/* The run of blocks a file draws from, and where the next run starts. */
struct runs {
  ext2_filsys fs;
  blk64_t at, left; /* the current run */
  blk64_t need;     /* blocks still to draw for this file */
  blk64_t goal;
};

static errcode_t
draw (struct runs *r, blk64_t *blk)
{
  if (r->left == 0) {
    blk64_t len;
    errcode_t e =
        ext2fs_new_range (r->fs, 0, r->goal, r->need, NULL, &r->at, &len);
    if (e)
      return e;
    ext2fs_block_alloc_stats_range (r->fs, r->at, len, +1);
    r->left = len;
  }
  *blk = r->at++;
  r->left--;
  r->need--;
  r->goal = r->at;
  return 0;
}

/* Indirect blocks a file of n data blocks needs. */
static blk64_t
indirect_blocks (blk64_t n, blk64_t per)
{
  blk64_t k, meta = 0;

  if (n <= EXT2_NDIR_BLOCKS)
    return 0;
  k = n - EXT2_NDIR_BLOCKS;
  meta += 1; /* the single indirect block */
  if (k <= per)
    return meta;
  k -= per;
  if (k <= per * per)
    return meta + 1 + (k + per - 1) / per;
  k -= per * per;
  return meta + 1 + per + 1 + (k + per * per - 1) / (per * per) +
         (k + per - 1) / per;
}

/* The indirect blocks of the tree being filled: level 0 the tree's top
 * (i_block[12], [13] or [14]), each with its block number, its entries
 * and the index in it of the block below.
 */
struct tree {
  int depth; /* 0: none open */
  blk64_t blk[3];
  uint32_t *buf[3];
  blk64_t idx[3];
};

static errcode_t
flush (ext2_filsys fs, struct tree *t, int from)
{
  int j;
  errcode_t e;

  for (j = t->depth - 1; j >= from; j--)
    if ((e = io_channel_write_blk64 (fs->io, t->blk[j], 1, t->buf[j])))
      return e;
  return 0;
}

/* Open the indirect blocks from level `from` down for index idx (the
 * caller records idx in t once the data block is placed).
 */
static errcode_t
open_levels (struct runs *r, struct tree *t, int from, const blk64_t *idx)
{
  int j;
  errcode_t e;

  for (j = from; j < t->depth; j++) {
    if ((e = draw (r, &t->blk[j])))
      return e;
    memset (t->buf[j], 0, r->fs->blocksize);
    if (j > 0)
      t->buf[j - 1][idx[j - 1]] = (uint32_t)t->blk[j];
  }
  return 0;
}

/* Map n data blocks into inode: i_block and its indirect blocks. */
static errcode_t
map_blocks (ext2_filsys fs, struct runs *r, struct ext2_inode *inode, blk64_t n,
            struct tree *t)
{
  const blk64_t per = PER (fs);
  blk64_t l, blk;
  errcode_t e;

  t->depth = 0;
  for (l = 0; l < n; l++) {
    blk64_t k = l - EXT2_NDIR_BLOCKS, idx[3];
    int d, j;
    if (l < EXT2_NDIR_BLOCKS) {
      if ((e = draw (r, &blk)))
        return e;
      inode->i_block[l] = (uint32_t)blk;
      continue;
    }
    if (k < per) {
      d = 1, idx[0] = k;
    } else if ((k -= per) < per * per) {
      d = 2, idx[0] = k / per, idx[1] = k % per;
    } else {
      k -= per * per;
      d = 3, idx[0] = k / (per * per), idx[1] = k / per % per, idx[2] = k % per;
    }
    if (d != t->depth) { /* a new tree: the last one is complete */
      if ((e = flush (fs, t, 0)))
        return e;
      t->depth = d;
      if ((e = open_levels (r, t, 0, idx)))
        return e;
      inode->i_block[EXT2_NDIR_BLOCKS + d - 1] = (uint32_t)t->blk[0];
    } else {
      for (j = 0; j < d - 1 && idx[j] == t->idx[j]; j++)
        ;
      if (j < d - 1) { /* the blocks below level j are complete */
        if ((e = flush (fs, t, j + 1)) || (e = open_levels (r, t, j + 1, idx)))
          return e;
      }
    }
    if ((e = draw (r, &blk)))
      return e;
    t->buf[d - 1][idx[d - 1]] = (uint32_t)blk;
    memcpy (t->idx, idx, (size_t)d * sizeof idx[0]);
  }
  return flush (fs, t, 0);
}

/* Inode ino's blocks, if it is a regular file with a size and none. */
static errcode_t
allocate_one (ext2_filsys fs, ext2_ino_t ino, struct runs *r, struct tree *t)
{
  struct ext2_inode inode;
  blk64_t n, total;
  errcode_t e;

  if ((e = ext2fs_read_inode (fs, ino, &inode)))
    return e;
  /* Deleted since, or already given its blocks (a number listed twice). */
  if (!LINUX_S_ISREG (inode.i_mode) || inode.i_links_count == 0 ||
      ext2fs_inode_data_blocks2 (fs, &inode) != 0 || EXT2_I_SIZE (&inode) == 0)
    return 0;
  n = (EXT2_I_SIZE (&inode) + fs->blocksize - 1) / fs->blocksize;
  total = n + indirect_blocks (n, PER (fs));
  r->need = total;
  r->left = 0;
  memset (inode.i_block, 0, sizeof inode.i_block);
  if ((e = map_blocks (fs, r, &inode, n, t)))
    return e;
  if ((e = ext2fs_iblk_set (fs, &inode, total)))
    return e;
  return ext2fs_write_inode (fs, ino, &inode);
}

static int
cmp_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

  return x < y ? -1 : x > y;
}

int
fd_ext3_allocate (const char *dev, uint64_t *inos, size_t n, struct fm_err *err)
{
  ext2_filsys fs;
  struct runs r = {0};
  static bool once;
  struct tree t = {0};
  uint32_t *bufs;
  errcode_t e;
  size_t i;
  int j;

  if (!once) { /* error_message's words for libext2fs's codes */
    add_error_table (&et_ext2_error_table);
    once = true;
  }
  if ((e = ext2fs_open (dev, EXT2_FLAG_RW | EXT2_FLAG_64BITS, 0, 0,
                        unix_io_manager, &fs)))
    return fm_fail (err, "%s: %s", dev, error_message (e));
  if ((e = ext2fs_read_bitmaps (fs))) {
    ext2fs_close_free (&fs);
    return fm_fail (err, "%s: bitmaps: %s", dev, error_message (e));
  }
  r.fs = fs;
  /* One block for each level of the tree being filled. */
  if ((bufs = malloc (3 * (size_t)fs->blocksize)) == NULL) {
    ext2fs_close_free (&fs);
    return fm_fail (err, "%s: %s", dev, error_message (EXT2_ET_NO_MEMORY));
  }
  for (j = 0; j < 3; j++)
    t.buf[j] = bufs + (size_t)j * (fs->blocksize / sizeof *bufs);
  /* In inode order, the files of a group next to each other. */
  qsort (inos, n, sizeof *inos, cmp_u64);
  for (i = 0; e == 0 && i < n; i++) {
    if (inos[i] == 0 || inos[i] > fs->super->s_inodes_count)
      e = EXT2_ET_BAD_INODE_NUM;
    else
      e = allocate_one (fs, (ext2_ino_t)inos[i], &r, &t);
    if (e)
      break;
  }
  free (bufs);
  if (e) {
    ext2fs_close_free (&fs); /* unflushed: the disk is abandoned */
    return fm_fail (err, "%s: allocating inode %llu: %s", dev,
                    (unsigned long long)inos[i], error_message (e));
  }
  ext2fs_mark_bb_dirty (fs);
  ext2fs_mark_super_dirty (fs);
  if ((e = ext2fs_close_free (&fs)))
    return fm_fail (err, "%s: %s", dev, error_message (e));
  return 0;
}
