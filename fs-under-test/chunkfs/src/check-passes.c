/* chunkfs — the checker's five passes over one chunk (check-internal.h):
 *
 *   1  inodes, their blocks and continuation links (I1, I5, I6)
 *   2  directory entries and back-references (I2, I3)
 *   3  directory connectivity
 *   4  link counts and orphans (I4)
 *   5  bitmaps, free counts, the back-reference table, the header
 *
 * Everything read is checked before it is used; a chunk's state goes
 * clean only when nothing in it was left unfixed.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "check-internal.h"
#include "problem.h"

static bool
is_used (const struct ck *k, uint32_t b)
{
  return k->used[b / 8] >> b % 8 & 1;
}

static void
set_used (struct ck *k, uint32_t b, bool on)
{
  if (on)
    k->used[b / 8] |= (uint8_t)(1u << b % 8);
  else
    k->used[b / 8] &= (uint8_t) ~(1u << b % 8);
}

static uint64_t
abs_of (const struct ck *k, uint32_t local)
{
  return cfs_block (&k->sb, k->c, local);
}

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
  return false;
}

static void
inode_changed (struct ck *k, uint32_t i)
{
  cfs_inode_encode (k->sb.uuid, &k->ino[i].in,
                    k->itab + (size_t)i * CFS_INODE_SIZE);
  k->itab_dirty[i / CFS_INODES_PER_BLOCK] = 1;
}

static void
free_slot (struct ck *k, uint32_t i)
{
  uint32_t gen = k->ino[i].in.generation;

  memset (&k->ino[i].in, 0, sizeof k->ino[i].in);
  k->ino[i].in.generation = gen;
  k->ino[i].in.chunk = k->c;
  k->ino[i].used = false;
  inode_changed (k, i);
}

/* ---- pass 1 ---- */

static void
read_inodes (struct ck *k)
{
  uint32_t t, s;

  for (t = 0; t < k->g.inode_table_blocks; t++) {
    unsigned char *blk = k->itab + (size_t)t * CFS_BLOCK;
    if (ck_read (k, abs_of (k, k->g.inode_table + t), blk) == -1) {
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
          free_slot (k, i);
        continue;
      }
      if (n->in.mode == 0)
        continue;
      if (!valid_type (&n->in)) {
        if (ck_fix (k, PR_1_INODE_BAD, k->c, i, "bad type or flags"))
          free_slot (k, i);
        continue;
      }
      n->used = true;
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
          free_slot (k, i);
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
  if (is_used (k, b)) {
    if (ck_fix (k, PR_1_BLOCK_DUP, k->c, i, b))
      return -1;
    return 0;
  }
  set_used (k, b, true);
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

  if (ck_read (k, abs_of (k, b), blk) == -1)
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
        set_used (k, v, false);
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
      if (ck_read (k, abs_of (k, v), sub) == -1 ||
          cfs_meta_check (sub, k->sb.uuid, CFS_MAGIC_INDIRECT, k->c,
                          k->h.generation, &err) == -1) {
        if (ck_fix (k, PR_1_INDIRECT_BAD, k->c, i, v,
                    k->errmsg[0] ? k->errmsg : err.msg)) {
          set_used (k, v, false);
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
    ck_write (k, abs_of (k, b), blk);
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
      set_used (k, *p, false);
    }
    return;
  }
  if (claim (k, i, *p) == -1) {
    *p = 0;
    inode_changed (k, i);
    return;
  }
  k->errmsg[0] = '\0';
  if (ck_read (k, abs_of (k, *p), blk) == -1 ||
      cfs_meta_check (blk, k->sb.uuid, CFS_MAGIC_INDIRECT, k->c,
                      k->h.generation, &err) == -1) {
    if (ck_fix (k, PR_1_INDIRECT_BAD, k->c, i, *p,
                k->errmsg[0] ? k->errmsg : err.msg)) {
      set_used (k, *p, false);
      *p = 0;
      inode_changed (k, i);
    }
    return;
  }
  walk_indirect (k, i, *p, level, base, hi, false);
}

/* Claim (or, with unclaim, release) every block inode i maps. */
static void
walk_blocks (struct ck *k, uint32_t i, bool unclaim)
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
        set_used (k, b, false);
      continue;
    }
    if (claim (k, i, b) == -1) {
      n->in.direct[d] = 0;
      inode_changed (k, i);
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
    inode_changed (k, i);
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
      inode_changed (k, i);
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
      if (ptr == 0 || ck_read (k, abs_of (k, ptr), blk) == -1)
        continue;
      ptr = cfs_get32 (blk + CFS_HEADER_SIZE + 4 * (rel / P));
      rel %= P;
    }
    if (ptr < k->g.first_data || ptr >= k->g.chunk_blocks ||
        ck_read (k, abs_of (k, ptr), blk) == -1)
      continue;
    n->dblocks[idx] = cfs_get32 (blk + CFS_HEADER_SIZE + 4 * rel);
  }
}

/* The back-reference table is gone: which entries in other chunks name
 * this chunk's inodes is known only by reading every directory.  Every
 * chunk is checked (each entry naming an inode here brings its back-
 * reference back), then this one again; until then no file here is
 * called an orphan.
 */
static void
lose_backrefs (struct ck *k)
{
  uint32_t c;

  k->incomplete = true;
  for (c = 0; c < k->sb.chunks; c++)
    if (c != k->c)
      ck_queue (k, c);
  ck_queue (k, k->c);
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
    if (ck_read (k, abs_of (k, local), blk) == -1) {
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
    set_used (k, local, true);
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
      set_used (k, k->h.backref_block + j, false);
    k->h.backref_block = k->h.backref_blocks = 0;
    k->nbr = 0;
    if (ck_fix (k, PR_1_BACKREFS_BAD, k->c, why)) {
      k->br_changed = true;
      lose_backrefs (k);
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
  if (ck_read (k, abs_of (k, 0), blk) == -1)
    snprintf (why, sizeof why, "%s", k->errmsg);
  else if (cfs_header_decode (blk, k->sb.uuid, k->c, &k->h, &err) == 0)
    return k->h.state == CFS_UNINIT ? -1 : 0;
  else
    snprintf (why, sizeof why, "%s", err.msg);
  /* Initialised?  Its first bitmap block says, with its generation. */
  if (ck_read (k, abs_of (k, k->g.block_bitmap), blk) == 0 &&
      cfs_meta_check (blk, k->sb.uuid, CFS_MAGIC_BITMAP, k->c, UINT64_MAX,
                      &err) == 0) {
    if (!ck_fix (k, PR_0_HEADER_BAD, k->c, why))
      return -1;
    memset (&k->h, 0, sizeof k->h);
    k->h.index = k->c;
    k->h.state = CFS_DAMAGED;
    k->h.generation = cfs_get64 (blk + 16) + 1;
    k->h.super = k->sb;
    k->br_changed = true; /* the table's place was in the header */
    lose_backrefs (k);
    return 0;
  }
  if (ck_fix (k, PR_0_CHUNK_LOST, k->c)) {
    memset (blk, 0, CFS_BLOCK);
    ck_write (k, abs_of (k, 0), blk);
  }
  return -1;
}

/* ---- pass 2 ---- */

static void
clear_entry (unsigned char *blk, uint32_t off, uint32_t prev)
{
  unsigned char *e = blk + off;
  uint16_t len = cfs_get16 (e + 12);

  if (prev) {
    unsigned char *p = blk + prev;
    cfs_put16 (p + 12, (uint16_t)(cfs_get16 (p + 12) + len));
    memset (e, 0, (size_t)CFS_DIRENT_FIXED + e[14]);
  } else {
    memset (e, 0, len);
    cfs_put16 (e + 12, len);
  }
}

static void
empty_dir_block (struct ck *k, unsigned char *blk, uint32_t dir, uint32_t idx)
{
  memset (blk, 0, CFS_BLOCK);
  cfs_meta_begin (blk, CFS_MAGIC_DIR, 0, k->c, k->h.generation);
  cfs_put32 (blk + CFS_HEADER_SIZE, dir);
  cfs_put32 (blk + CFS_HEADER_SIZE + 4, idx);
  cfs_put16 (blk + CFS_DIR_START + 12, CFS_DIR_END - CFS_DIR_START);
}

static bool
tiles (const unsigned char *blk)
{
  uint32_t off = CFS_DIR_START;

  while (off < CFS_DIR_END) {
    const unsigned char *e = blk + off;
    uint32_t len = cfs_get16 (e + 12), nlen = e[14];
    if (off + CFS_DIRENT_FIXED > CFS_DIR_END || len < CFS_DIRENT_FIXED ||
        len % 4 || off + len > CFS_DIR_END)
      return false;
    if (cfs_get32 (e + 4) != 0 && (CFS_DIRENT_FIXED + nlen > len))
      return false;
    off += len;
  }
  return off == CFS_DIR_END;
}

static bool
bad_name (const unsigned char *name, size_t len)
{
  return len == 0 || memchr (name, '/', len) || memchr (name, '\0', len) ||
         (len == 1 && name[0] == '.') ||
         (len == 2 && name[0] == '.' && name[1] == '.');
}

/* One entry naming `target`: 0 keep, 1 clear. */
static int
check_entry (struct ck *k, uint32_t dir, const unsigned char *e,
             const char *name)
{
  uint32_t tc = cfs_get32 (e), ti = cfs_get32 (e + 4), gen = cfs_get32 (e + 8);
  uint8_t type = e[15];
  uint64_t target = cfs_ref (tc, ti);
  struct cfs_inode in;

  /* A target in a chunk whose header cannot be read yet: that chunk is
   * checked (its header rebuilt) first, then this one again.
   */
  if (tc < k->sb.chunks && tc != k->c && !(k->queued[tc] & 0x7f)) {
    struct cfs_chunk_header th;
    if (ck_header (k, tc, &th) == -1) {
      ck_queue (k, tc);
      ck_queue (k, k->c);
      k->incomplete = true;
      return 0;
    }
  }
  if (tc >= k->sb.chunks || ti >= k->g.inodes || bad_name (e + 16, e[14]) ||
      ck_inode (k, target, &in) == -1 || (in.flags & CFS_INODE_CONT)) {
    if (ck_fix (k, PR_2_ENTRY_TARGET, name, k->c, dir, tc, ti)) {
      if (tc != k->c && tc < k->sb.chunks)
        ck_touch_other (k, tc); /* its count, or its stale back-ref */
      return 1;
    }
    return 0;
  }
  if (in.generation != gen) {
    if (ck_fix (k, PR_2_ENTRY_GEN, name, k->c, dir, gen, tc, ti,
                in.generation)) {
      if (tc != k->c)
        ck_touch_other (k, tc);
      return 1;
    }
    return 0;
  }
  if (S_ISDIR (in.mode)) {
    if (tc == k->c) {
      struct cino *t = &k->ino[ti];
      if (t->named_by && t->named_by != cfs_ref (k->c, dir)) {
        if (ck_fix (k, PR_2_DIR_LINKED, name, k->c, dir, tc, ti))
          return 1;
      } else if (t->named_by == 0)
        t->named_by = cfs_ref (k->c, dir);
    }
    k->ino[dir].subdirs++;
  }
  if (type != in.mode >> 12 &&
      ck_fix (k, PR_2_ENTRY_TYPE, name, k->c, dir, type, in.mode >> 12))
    return 2; /* fix the type */
  if (tc == k->c)
    k->ino[ti].found++;
  else {
    struct backref b = {ti, k->c, dir, ck_name_hash (name, strlen (name))};
    int has = ck_has_backref (k, tc, &b);
    if (has == 0 && ck_fix (k, PR_2_BACKREF_MISSING, name, k->c, dir, tc, ti)) {
      ck_add_pending (k, tc, &b);
      ck_touch_other (k, tc);
    }
  }
  return 0;
}

static void
check_dir (struct ck *k, uint32_t dir)
{
  struct cino *d = &k->ino[dir];
  unsigned char blk[CFS_BLOCK];
  uint32_t idx;

  for (idx = 0; idx < d->ndblocks; idx++) {
    uint32_t local = d->dblocks[idx], off, prev = 0;
    bool changed = false;
    struct cfs_err err;
    const char *why = NULL;

    k->errmsg[0] = '\0';
    if (local < k->g.first_data || local >= k->g.chunk_blocks)
      why = "no block";
    else if (ck_read (k, abs_of (k, local), blk) == -1)
      why = k->errmsg;
    else if (cfs_meta_check (blk, k->sb.uuid, CFS_MAGIC_DIR, k->c,
                             k->h.generation, &err) == -1)
      why = err.msg;
    else if (cfs_get32 (blk + CFS_HEADER_SIZE) != dir ||
             cfs_get32 (blk + CFS_HEADER_SIZE + 4) != idx)
      why = "it belongs elsewhere";
    else if (!tiles (blk))
      why = "entries overlap";
    if (why) {
      char w[256];
      snprintf (w, sizeof w, "%s", why);
      if (local >= k->g.first_data && local < k->g.chunk_blocks &&
          ck_fix (k, PR_2_DIR_BLOCK_BAD, k->c, dir, idx, w)) {
        empty_dir_block (k, blk, dir, idx);
        cfs_meta_seal (k->sb.uuid, blk);
        ck_write (k, abs_of (k, local), blk);
      }
      continue;
    }
    for (off = CFS_DIR_START; off < CFS_DIR_END;) {
      unsigned char *e = blk + off;
      uint32_t len = cfs_get16 (e + 12);
      char name[256];
      int r;
      if (cfs_get32 (e + 4) == 0) {
        prev = off;
        off += len;
        continue;
      }
      memcpy (name, e + 16, e[14]);
      name[e[14]] = '\0';
      r = check_entry (k, dir, e, name);
      if (r == 1) {
        clear_entry (blk, off, prev);
        changed = true;
        if (prev) {
          off = prev + cfs_get16 (blk + prev + 12);
          continue;
        }
      } else if (r == 2) {
        struct cfs_inode in;
        if (ck_inode (k, cfs_ref (cfs_get32 (e), cfs_get32 (e + 4)), &in) == 0)
          e[15] = (uint8_t)(in.mode >> 12);
        changed = true;
      }
      prev = off;
      off += len;
    }
    if (changed && k->write) {
      cfs_put64 (blk + 16, k->h.generation);
      cfs_meta_seal (k->sb.uuid, blk);
      ck_write (k, abs_of (k, local), blk);
    }
  }
}

/* Back-references: each confirmed by its entry in the source directory,
 * and counted as a name of its inode.
 */
static void
check_backrefs (struct ck *k)
{
  uint32_t i, out = 0;

  for (i = 0; i < k->nbr; i++) {
    struct backref *b = &k->br[i];
    bool dup = false;
    int named = 0;
    for (uint32_t j = 0; j < out && !dup; j++)
      dup = !memcmp (&k->br[j], b, sizeof *b);
    if (!dup && b->src_chunk != k->c && b->ino > 0 && b->ino < k->g.inodes &&
        k->ino[b->ino].used && !(k->ino[b->ino].in.flags & CFS_INODE_CONT))
      named = ck_dir_names (k, cfs_ref (b->src_chunk, b->src_dir),
                            cfs_ref (k->c, b->ino), b->hash, NULL);
    if (named != 1) {
      if (ck_fix (k, PR_4_BACKREF_STALE, k->c, b->ino, b->src_chunk,
                  b->src_dir)) {
        k->br_changed = true;
        continue;
      }
    } else {
      struct cino *t = &k->ino[b->ino];
      t->found++;
      if (S_ISDIR (t->in.mode) && t->named_by == 0)
        t->named_by = cfs_ref (b->src_chunk, b->src_dir);
    }
    k->br[out++] = *b;
  }
  k->nbr = out;
}

/* ---- pass 3 ---- */

static void
check_parents (struct ck *k)
{
  uint32_t i;

  for (i = 1; i < k->g.inodes; i++) {
    struct cino *n = &k->ino[i];
    uint64_t me = cfs_ref (k->c, i), parent = n->in.offset;
    if (!n->used || !S_ISDIR (n->in.mode) || me == cfs_ref (0, CFS_ROOT_INO))
      continue;
    if (n->named_by) {
      if (n->named_by != parent &&
          ck_fix (k, PR_3_PARENT_WRONG, k->c, i, ref_chunk (parent),
                  ref_ino (parent), ref_chunk (n->named_by),
                  ref_ino (n->named_by))) {
        n->in.offset = n->named_by;
        inode_changed (k, i);
      }
      continue;
    }
    /* Named by the parent it records, in another chunk, whose
     * back-reference went missing: the name is good, the back-reference
     * comes back.
     */
    if (ref_chunk (parent) != k->c) {
      uint32_t hash;
      if (ck_dir_names (k, parent, me, 0, &hash) == 1) {
        struct backref b = {i, ref_chunk (parent), ref_ino (parent), hash};
        char name[32];
        snprintf (name, sizeof name, "(a name of %u.%u)", k->c, i);
        if (ck_fix (k, PR_2_BACKREF_MISSING, name, ref_chunk (parent),
                    ref_ino (parent), k->c, i) &&
            ck_add_backref (k, &b) == 0) {
          n->named_by = parent;
          n->found++;
        }
        continue;
      }
    }
    if (k->incomplete)
      continue; /* a name elsewhere may yet turn up: checked again later */
    if (ck_fix (k, PR_3_DIR_UNCONNECTED, k->c, i, ref_chunk (parent),
                ref_ino (parent)) &&
        ck_lost_found (k, me, n->in.generation, S_IFDIR >> 12) == 0) {
      n->in.offset = cfs_ref (0, CFS_LOST_FOUND_INO);
      n->named_by = n->in.offset;
      n->found = 1;
      inode_changed (k, i);
      if (k->c == 0)
        k->ino[CFS_LOST_FOUND_INO].subdirs++;
    }
  }
}

/* ---- pass 4 ---- */

static void
check_counts (struct ck *k)
{
  uint32_t i;

  for (i = 1; i < k->g.inodes; i++) {
    struct cino *n = &k->ino[i];
    uint64_t me = cfs_ref (k->c, i);
    uint32_t want;
    if (!n->used)
      continue;
    if (n->in.flags & CFS_INODE_CONT)
      want = 0;
    else if (S_ISDIR (n->in.mode))
      want = 2 + n->subdirs;
    else {
      if (n->found == 0 && k->incomplete)
        continue; /* its names may be in chunks not checked yet */
      if (n->found == 0) {
        if (n->in.links == 0) {
          if (ck_fix (k, PR_4_UNLINKED, k->c, i)) {
            walk_blocks (k, i, true);
            if (n->in.flags & CFS_INODE_HAS_CONT)
              ck_touch_other (k, ref_chunk (n->in.next));
            free_slot (k, i);
          }
          continue;
        }
        if (ck_fix (k, PR_4_ORPHAN, k->c, i, (unsigned long long)n->in.size) &&
            ck_lost_found (k, me, n->in.generation,
                           (uint8_t)(n->in.mode >> 12)) == 0)
          n->found = 1;
      }
      want = n->found;
    }
    if (k->incomplete)
      continue; /* counts wait for the check again */
    if (n->in.links != want &&
        ck_fix (k, PR_4_LINK_COUNT, k->c, i, n->in.links, want)) {
      n->in.links = want;
      inode_changed (k, i);
    }
  }
}

/* ---- pass 5 ---- */

static uint32_t
alloc_run (struct ck *k, uint32_t count)
{
  uint32_t b, run = 0;

  for (b = k->g.first_data; b < k->g.chunk_blocks; b++) {
    run = is_used (k, b) ? 0 : run + 1;
    if (run == count) {
      uint32_t first = b + 1 - count;
      for (b = first; b < first + count; b++)
        set_used (k, b, true);
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
      set_used (k, k->h.backref_block + b, false);
  k->h.backref_block = k->h.backref_blocks = 0;
  nblocks = (k->nbr + CFS_BACKREFS_PER_BLOCK - 1) / CFS_BACKREFS_PER_BLOCK;
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
    uint32_t n = k->nbr - b * CFS_BACKREFS_PER_BLOCK;
    if (n > CFS_BACKREFS_PER_BLOCK)
      n = CFS_BACKREFS_PER_BLOCK;
    cfs_meta_begin (blk, CFS_MAGIC_BACKREF, 0, k->c, k->h.generation);
    cfs_put32 (blk + CFS_HEADER_SIZE, n);
    for (j = 0; j < n; j++) {
      const struct backref *r = &k->br[b * CFS_BACKREFS_PER_BLOCK + j];
      unsigned char *p = blk + CFS_HEADER_SIZE + 4 + 16 * j;
      cfs_put32 (p, r->ino);
      cfs_put32 (p + 4, r->src_chunk);
      cfs_put32 (p + 8, r->src_dir);
      cfs_put32 (p + 12, r->hash);
    }
    cfs_meta_seal (k->sb.uuid, blk);
    ck_write (k, abs_of (k, first + b), blk);
  }
  k->h.backref_block = first;
  k->h.backref_blocks = nblocks;
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
    if (ck_read (k, abs_of (k, first + b), blk) == -1 ||
        cfs_meta_check (blk, k->sb.uuid, CFS_MAGIC_BITMAP, k->c,
                        k->h.generation, &err) == -1)
      memset (blk, 0xff, CFS_BLOCK), set++; /* rewritten whole */
  }
  for (bit = 0; bit < limit; bit++) {
    unsigned char *blk = blks + (size_t)(bit / CFS_BITS_PER_BITMAP) * CFS_BLOCK;
    uint32_t o = bit % CFS_BITS_PER_BITMAP;
    bool disk = blk[CFS_HEADER_SIZE + o / 8] >> o % 8 & 1;
    bool want = inodes ? (bit == 0 || k->ino[bit].used) : is_used (k, bit);
    if (disk != want)
      want ? set++ : clear++;
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
        if (inodes ? (bit == 0 || k->ino[bit].used) : is_used (k, bit))
          blk[CFS_HEADER_SIZE + o / 8] |= (uint8_t)(1u << o % 8);
      }
      cfs_meta_seal (k->sb.uuid, blk);
      ck_write (k, abs_of (k, first + b), blk);
    }
  }
  free (blks);
}

static void
finish_chunk (struct ck *k, uint64_t fixed_before)
{
  uint32_t t, b, free_b = 0, free_i = 0, i;
  unsigned char blk[CFS_BLOCK];
  struct timespec ts;

  write_backrefs (k);
  for (t = 0; t < k->g.inode_table_blocks; t++)
    if (k->itab_dirty[t] && k->write)
      ck_write (k, abs_of (k, k->g.inode_table + t),
                k->itab + (size_t)t * CFS_BLOCK);
  check_bitmap (k, true);
  check_bitmap (k, false);
  for (b = 0; b < k->g.chunk_blocks; b++)
    free_b += !is_used (k, b);
  for (i = 1; i < k->g.inodes; i++)
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
  if (ck_write (k, abs_of (k, 0), blk) == 0)
    ck_map_set (k, k->c, k->h.state != CFS_CLEAN);
}

void
ck_chunk (struct ck *k, uint32_t c)
{
  uint32_t i;
  uint64_t fixed_before = k->res->fixed;

  k->c = c;
  k->left = false;
  k->incomplete = false;
  k->nbr = 0;
  k->br_changed = false;
  ck_pass (k, 1);
  if (read_header (k) == -1) {
    ck_map_set (k, c, false);
    return;
  }
  k->ino = calloc (k->g.inodes, sizeof *k->ino);
  k->itab = malloc ((size_t)k->g.inode_table_blocks * CFS_BLOCK);
  k->itab_dirty = calloc (k->g.inode_table_blocks, 1);
  k->used = calloc (k->g.chunk_blocks / 8 + 1, 1);
  if (!k->ino || !k->itab || !k->itab_dirty || !k->used) {
    k->res->exit |= CFS_EXIT_ERROR;
    goto out;
  }
  for (i = 0; i < k->g.first_data; i++)
    set_used (k, i, true);
  load_backrefs (k);
  merge_pending (k);
  read_inodes (k);
  check_chains (k);
  for (i = 1; i < k->g.inodes; i++)
    if (k->ino[i].used) {
      walk_blocks (k, i, false);
      if (S_ISDIR (k->ino[i].in.mode))
        dir_layout (k, i);
      if (!(k->ino[i].in.flags & CFS_INODE_CONT))
        k->res->files++;
    }
  ck_pass (k, 2);
  for (i = 1; i < k->g.inodes; i++)
    if (k->ino[i].used && S_ISDIR (k->ino[i].in.mode))
      check_dir (k, i);
  check_backrefs (k);
  ck_pass (k, 3);
  check_parents (k);
  ck_pass (k, 4);
  check_counts (k);
  ck_pass (k, 5);
  finish_chunk (k, fixed_before);
out:
  ck_header_forget (k, c); /* it may have been rewritten */
  if (k->ino)
    for (i = 0; i < k->g.inodes; i++)
      free (k->ino[i].dblocks);
  free (k->ino);
  free (k->itab);
  free (k->itab_dirty);
  free (k->used);
  free (k->br);
  k->ino = NULL;
  k->itab = NULL;
  k->itab_dirty = NULL;
  k->used = NULL;
  k->br = NULL;
  k->abr = k->nbr = 0;
}
