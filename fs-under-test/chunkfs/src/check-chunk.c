/* chunkfs — the checker over one chunk (check-passes.h): its header,
 * read or rebuilt, then passes 1 to 5 in order over the chunk's inodes,
 * inode table and rebuilt block bitmap (check-core.c holds what the
 * passes share).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check-passes.h"
#include "problem.h"

/* The header: read, or rebuilt from the bitmaps' block headers.  0 to go
 * on, -1 if the chunk is not in use (or lost).
 */
static int
read_header (struct ck *k)
{
  unsigned char blk[CFS_BLOCK];
  struct cfs_err err;
  char why[256];

  /* One read: every read of an unreadable block costs the drive's error
   * recovery again.
   */
  if (ck_read (k, ck_abs (k, 0), blk) == -1)
    snprintf (why, sizeof why, "%s", k->errmsg);
  else if (cfs_header_decode (blk, k->sb.uuid, k->c, &k->h, &err) == 0)
    return k->h.state == CFS_UNINIT ? -1 : 0;
  else
    snprintf (why, sizeof why, "%s", err.msg);
  /* Initialised?  Its first bitmap block says, with its generation. */
  if (ck_read (k, ck_abs (k, k->g.block_bitmap), blk) == 0 &&
      cfs_meta_check (blk, k->sb.uuid, CFS_MAGIC_BITMAP, k->c, UINT64_MAX,
                      &err) == 0) {
    if (!ck_fix (k, PR_0_HEADER_BAD, k->c, why))
      return -1;
    memset (&k->h, 0, sizeof k->h);
    k->h.index = k->c;
    k->h.state = CFS_DAMAGED;
    k->h.generation = cfs_get64 (blk + 16) + 1;
    k->h.super = k->sb;
    k->h.itable_mark = k->g.inodes; /* all read; pass 1 sets it */
    k->mark_unknown = true;
    k->br_changed = true; /* the table's place was in the header */
    ck_lose_backrefs (k);
    return 0;
  }
  if (ck_fix (k, PR_0_CHUNK_LOST, k->c)) {
    memset (blk, 0, CFS_BLOCK);
    ck_write (k, ck_abs (k, 0), blk);
  }
  return -1;
}

/* The chunk's inodes, inode table and block bitmap: 0, or -1 when
 * memory runs out.
 */
static int
chunk_alloc (struct ck *k)
{
  /* Made once, zeroed, and after each chunk zeroed again only as far as
   * it was used (the slots read): a 4 GiB chunk's are 36 MiB, and its
   * check may use 16 KiB of them.
   */
  if (k->ino_buf == NULL) {
    k->ino_buf = calloc (k->g.inodes, sizeof *k->ino);
    k->itab_buf = calloc (k->g.inode_table_blocks, CFS_BLOCK);
    k->itab_dirty_buf = calloc (k->g.inode_table_blocks, 1);
    k->used_buf = calloc (k->g.chunk_blocks / 8 + 1, 1);
    if (!k->ino_buf || !k->itab_buf || !k->itab_dirty_buf || !k->used_buf) {
      ck_chunk_release (k);
      return -1;
    }
  }
  k->ino = k->ino_buf;
  k->itab = k->itab_buf;
  k->itab_dirty = k->itab_dirty_buf;
  k->used = k->used_buf;
  return 0;
}

void
ck_chunk_release (struct ck *k)
{
  free (k->ino_buf);
  free (k->itab_buf);
  free (k->itab_dirty_buf);
  free (k->used_buf);
  k->ino_buf = NULL;
  k->itab_buf = NULL;
  k->itab_dirty_buf = NULL;
  k->used_buf = NULL;
}

static void
chunk_free (struct ck *k)
{
  uint32_t i;

  if (k->ino) {
    for (i = 0; i < k->nino; i++)
      free (k->ino[i].dblocks);
    /* Nothing past the slots read was written. */
    memset (k->ino, 0, (size_t)k->nino * sizeof *k->ino);
    memset (k->itab, 0, (size_t)k->nino * CFS_INODE_SIZE);
    memset (k->itab_dirty, 0, k->nino / CFS_INODES_PER_BLOCK);
    memset (k->used, 0, k->g.chunk_blocks / 8 + 1);
  }
  free (k->br);
  k->ino = NULL;
  k->itab = NULL;
  k->itab_dirty = NULL;
  k->used = NULL;
  k->br = NULL;
  k->abr = k->nbr = 0;
}

/* What references from other chunks will read here: the header and the
 * inode-table blocks in use (ck_read serves them from then on).
 */
static void
remember_in_use (struct ck *k)
{
  uint32_t t, s;

  ck_remember (k, ck_abs (k, 0));
  for (t = 0; k->ino && t < k->nino / CFS_INODES_PER_BLOCK; t++)
    for (s = 0; s < CFS_INODES_PER_BLOCK; s++)
      if (k->ino[t * CFS_INODES_PER_BLOCK + s].used) {
        ck_remember (k, ck_abs (k, k->g.inode_table + t));
        break;
      }
}

bool
ck_chunk (struct ck *k, uint32_t c)
{
  uint64_t fixed_before = k->res->fixed;

  k->c = c;
  k->left = false;
  k->incomplete = false;
  k->nbr = 0;
  k->br_changed = false;
  k->nino = 0;
  k->mark_unknown = false;
  ck_pass (k, 1);
  /* Header, bitmaps and the inode table up to a new chunk's mark lie
   * together: one request, and another if the mark is further.
   */
  ck_prefetch (k, ck_abs (k, 0),
               k->g.inode_table +
                   (cfs_mark_start (&k->sb) + CFS_INODES_PER_BLOCK - 1) /
                       CFS_INODES_PER_BLOCK);
  if (read_header (k) == -1) {
    ck_prefetch (k, 0, 0);
    ck_map_set (k, c, false);
    return false;
  }
  ck_in_use (k, c, false);
  if (chunk_alloc (k) == -1)
    k->res->exit |= CFS_EXIT_ERROR;
  else {
    ck_pass1 (k);
    ck_pass (k, 2);
    ck_pass2 (k);
    ck_pass (k, 3);
    ck_pass3 (k);
    ck_pass (k, 4);
    ck_pass4 (k);
    ck_pass (k, 5);
    ck_pass5 (k, fixed_before);
  }
  ck_header_forget (k, c); /* it may have been rewritten */
  remember_in_use (k);
  ck_prefetch (k, 0, 0);
  chunk_free (k);
  return true;
}
