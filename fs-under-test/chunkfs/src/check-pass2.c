/* chunkfs — the checker's pass 2 over one chunk (check-passes.h): every
 * directory block and entry (I2), and the back-references of other
 * chunks' entries naming inodes here (I3), confirmed and counted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check-passes.h"
#include "problem.h"

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
  cfs_dir_block_empty (blk, dir, idx);
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

/* One entry naming `target`: 0 keep, 1 clear, 2 fix its type. */
static int
check_entry (struct ck *k, uint32_t dir, const unsigned char *e,
             const char *name)
{
  uint32_t tc = cfs_get32 (e), ti = cfs_get32 (e + 4), gen = cfs_get32 (e + 8);
  uint8_t type = e[15];
  uint64_t target = cfs_ref (tc, ti);
  struct cfs_inode in;
  bool fix_type;

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
  /* A wrong type is fixed in place: the entry still names the inode. */
  fix_type = type != in.mode >> 12 &&
             ck_fix (k, PR_2_ENTRY_TYPE, name, k->c, dir, type, in.mode >> 12);
  if (tc == k->c)
    k->ino[ti].found++;
  else {
    struct backref b = {ti, k->c, dir, cfs_name_hash (name, strlen (name))};
    int has = ck_has_backref (k, tc, &b);
    if (has == 0 && ck_fix (k, PR_2_BACKREF_MISSING, name, k->c, dir, tc, ti)) {
      ck_add_pending (k, tc, &b);
      ck_touch_other (k, tc);
    }
  }
  return fix_type ? 2 : 0;
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
    else if (ck_read (k, ck_abs (k, local), blk) == -1)
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
        ck_write (k, ck_abs (k, local), blk);
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
      ck_write (k, ck_abs (k, local), blk);
    }
  }
}

/* Back-references: each confirmed by its entry in the source directory,
 * and counted as a name of its inode.
 */
static void
check_backrefs (struct ck *k)
{
  struct ck_brset *kept = ck_brset_new ();
  uint32_t i, out = 0;

  for (i = 0; i < k->nbr; i++) {
    struct backref *b = &k->br[i];
    bool dup = false;
    int named = 0;
    if (kept)
      dup = ck_brset_has (kept, b);
    else /* no memory for the set: the ones kept are scanned instead */
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
    if (kept && ck_brset_add (kept, b) == -1) {
      ck_brset_free (kept);
      kept = NULL;
    }
    k->br[out++] = *b;
  }
  k->nbr = out;
  ck_brset_free (kept);
}

/* Every directory block of the chunk read ahead, in block order: read
 * as the entries are walked, one request each (a rotation each), they
 * were most of a full check's requests wherever the preload's cache did
 * not reach.
 */
static void
read_dirs_ahead (struct ck *k)
{
  uint32_t *v, i;
  size_t n = 0;

  for (i = 1; i < k->nino; i++)
    if (k->ino[i].used && S_ISDIR (k->ino[i].in.mode))
      n += k->ino[i].ndblocks;
  if (n == 0 || (v = malloc (n * sizeof *v)) == NULL)
    return; /* not read ahead: read as walked */
  n = 0;
  for (i = 1; i < k->nino; i++)
    if (k->ino[i].used && S_ISDIR (k->ino[i].in.mode)) {
      memcpy (v + n, k->ino[i].dblocks, k->ino[i].ndblocks * sizeof *v);
      n += k->ino[i].ndblocks;
    }
  ck_read_ahead (k, k->c, v, n);
  free (v);
}

void
ck_pass2 (struct ck *k)
{
  uint32_t i;

  read_dirs_ahead (k);
  for (i = 1; i < k->nino; i++)
    if (k->ino[i].used && S_ISDIR (k->ino[i].in.mode))
      check_dir (k, i);
  check_backrefs (k);
}
