/* chunkfs — the full check's first sweep (check-internal.h, ck_preload):
 * every chunk to check has its metadata read in disk order and kept in
 * the checker's block cache before any is checked.
 *
 * Checking chunk k reads, besides k, the inodes, back-reference tables
 * and directory blocks that k's references name in other chunks; on a
 * full disk those lie all over it, and most in chunks not checked yet,
 * each a seek (40,000 requests for 1,900 chunks on 500 GB, where the
 * chunks themselves are 1,900).  Read ahead once, chunk by chunk and
 * ascending, they cost a few requests a chunk, each a short seek
 * forward; the checks then find them in memory.  Nothing read here is
 * trusted: the cache holds raw blocks, and the checks verify them as
 * they would verify a read from the disk.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check-internal.h"

/* Blocks closer than this are read in one request, with what lies
 * between: a few blocks more transfer cost less than a rotation.
 */
#define PRELOAD_GAP 16

struct blist {
  uint32_t *v;
  size_t n, a;
};

static void
blist_add (struct blist *l, uint32_t b)
{
  if (l->n == l->a) {
    size_t na = l->a ? 2 * l->a : 64;
    uint32_t *nv = realloc (l->v, na * sizeof *nv);
    if (nv == NULL)
      return; /* not read ahead: the check reads it */
    l->v = nv;
    l->a = na;
  }
  l->v[l->n++] = b;
}

static int
cmp_u32 (const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

  return x < y ? -1 : x > y;
}

/* Chunk-local blocks [first, first + n) of chunk c read in one request
 * and kept; buf holds n blocks.  0, or -1.
 */
static int
keep_run (struct ck *k, uint32_t c, uint32_t first, uint32_t n,
          unsigned char *buf)
{
  struct cfs_err err;
  uint64_t abs = cfs_block (&k->sb, c, first);
  uint32_t i, ok = 0;

  for (i = 0; i < n; i++)
    if (ck_is_bad (k, abs + i))
      return -1;
  /* A request that fails: block by block, so that the bad block is
   * known (and never read again) and the rest kept.
   */
  if (cfs_read (k->io, abs, n, buf, &err) == -1) {
    for (i = 0; i < n; i++)
      ok += ck_read (k, abs + i, buf + (size_t)i * CFS_BLOCK) == 0;
    return ok == n ? 0 : -1;
  }
  for (i = 0; i < n; i++)
    if (k->preload_bitmaps || first + i == 0 || first + i >= k->g.inode_table)
      ck_keep (k, abs + i, buf + (size_t)i * CFS_BLOCK);
  return 0;
}

/* The blocks inode in (number ino, of chunk c) names in its chunk: a
 * directory's blocks, extent leaves, its xattr block.  Leaves are read
 * (and kept) on the way, through ck_map_read.
 */
static void
inode_blocks (struct ck *k, uint32_t c, const struct cfs_chunk_header *h,
              uint32_t ino, const struct cfs_inode *in, struct blist *l)
{
  struct cfs_extlist el;
  uint64_t nb = in->size / CFS_BLOCK;

  if (in->xattr_block)
    blist_add (l, in->xattr_block);
  if (!S_ISDIR (in->mode) && cfs_map_depth (in) == 0)
    return;
  if (ck_map_read (k, c, h->generation, ino, in, &el) == -1)
    return;
  for (uint32_t x = 0; S_ISDIR (in->mode) && x < el.n; x++)
    for (uint32_t b = 0; b < el.v[x].len && el.v[x].lblk + (uint64_t)b < nb &&
                         b < CK_MAX_DIR_BLOCKS;
         b++)
      blist_add (l, el.v[x].start + b);
  cfs_el_free (&el);
}

void
ck_read_ahead (struct ck *k, uint32_t c, uint32_t *v, size_t n)
{
  unsigned char *buf = NULL;
  size_t i = 0, j, m = 0;

  if (n == 0)
    return;
  qsort (v, n, sizeof *v, cmp_u32);
  for (i = 0; i < n; i++)
    if (v[i] >= k->g.first_data && v[i] < k->g.chunk_blocks &&
        !ck_held (k, cfs_block (&k->sb, c, v[i])))
      v[m++] = v[i];
  i = 0;
  while (i < m) {
    uint32_t first = v[i], last = first;
    unsigned char *nb;
    for (j = i + 1; j < m && v[j] - last <= PRELOAD_GAP && j - i < 256; j++)
      last = v[j];
    if ((nb = realloc (buf, (size_t)(last - first + 1) * CFS_BLOCK)) != NULL) {
      buf = nb;
      keep_run (k, c, first, last - first + 1, buf);
    }
    i = j;
  }
  free (buf);
}

/* Chunk c's header, bitmaps and inode table up to the mark (one request,
 * two if the mark is past a new chunk's), then its back-reference table
 * (one), then the blocks its inodes name (a request a run).
 */
static void
preload_chunk (struct ck *k, uint32_t c, unsigned char *buf)
{
  uint32_t n =
      k->g.inode_table + (cfs_mark_start (&k->sb) + CFS_INODES_PER_BLOCK - 1) /
                             CFS_INODES_PER_BLOCK;
  struct cfs_chunk_header h;
  struct cfs_err err;
  struct blist l = {0};
  uint32_t mark, i;

  if (keep_run (k, c, 0, n, buf) == -1 ||
      cfs_header_decode (buf, k->sb.uuid, c, &h, &err) == -1 ||
      h.state == CFS_UNINIT)
    return;
  mark = h.itable_mark < k->g.inodes ? h.itable_mark : k->g.inodes;
  mark = (mark + CFS_INODES_PER_BLOCK - 1) / CFS_INODES_PER_BLOCK;
  if (k->g.inode_table + mark > n &&
      keep_run (k, c, n, k->g.inode_table + mark - n,
                buf + (size_t)n * CFS_BLOCK) == -1)
    return;
  if (h.backref_block >= k->g.first_data && h.backref_blocks <= 256 &&
      (uint64_t)h.backref_block + h.backref_blocks <= k->g.chunk_blocks)
    for (i = 0; i < h.backref_blocks; i++)
      blist_add (&l, h.backref_block + i);
  for (i = 1; i < mark * CFS_INODES_PER_BLOCK; i++) {
    struct cfs_inode in;
    const unsigned char *slot = buf + (size_t)(k->g.inode_table) * CFS_BLOCK +
                                (size_t)i * CFS_INODE_SIZE;
    if (cfs_inode_decode (slot, k->sb.uuid, c, &in, &err) == 0 && in.mode)
      inode_blocks (k, c, &h, i, &in, &l);
  }
  ck_read_ahead (k, c, l.v, l.n);
  free (l.v);
}

void
ck_preload (struct ck *k)
{
  uint32_t *order = malloc (k->nwork * sizeof *order);
  unsigned char *buf = malloc ((size_t)k->g.first_data * CFS_BLOCK);
  size_t i;

  /* The bitmaps are kept too (so that the checks read nothing again)
   * when every chunk's fit in the three quarters of the cache the read-
   * ahead may fill; if not, each check reads
   * its chunk's again, in one request, and the references between
   * chunks, which cost more, are what is kept.
   */
  k->preload_bitmaps =
      (uint64_t)k->nwork * (k->g.inode_table + 8) <= CK_BCACHE / 4 * 3;
  if (order && buf && k->nwork) {
    memcpy (order, k->work, k->nwork * sizeof *order);
    qsort (order, k->nwork, sizeof *order, cmp_u32);
    /* A quarter of the cache stays for what the checks read. */
    for (i = 0;
         i < k->nwork && k->bc_n < CK_BCACHE / 4 * 3 && !ck_cache_full (k); i++)
      preload_chunk (k, order[i], buf);
  }
  free (order);
  free (buf);
}
