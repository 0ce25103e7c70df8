/* chunkfs — the checker's core, under the driver (check.c) and the
 * passes: pass timing, the work list of chunks, the dirty and
 * initialised-chunks maps, remote chunk headers, inodes and directory
 * entries anywhere on the disk, back-references added or waiting (other
 * chunks' tables are check-backref.c's), lost+found, and the inode slots
 * of the chunk being checked (check-internal.h, check-passes.h).  It reads and
 * writes through check-io.c and reports through ck_fix (problem.c); it never
 * calls a pass.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "check-passes.h"
#include "problem.h"

static double
now_s (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void
ck_pass (struct ck *k, int pass)
{
  double t = now_s ();

  if (k->pass >= 0)
    k->res->pass_s[k->pass] += t - k->pass_t0;
  k->pass = pass;
  k->pass_t0 = t;
}

void
ck_queue (struct ck *k, uint32_t c)
{
  if (c >= k->sb.chunks || (k->queued[c] & 0x80) || (k->queued[c] & 0x7f) >= 4)
    return;
  if (k->nwork == k->awork) {
    size_t na = k->awork ? 2 * k->awork : 64;
    uint32_t *nw = realloc (k->work, na * sizeof *nw);
    if (nw == NULL)
      return;
    k->work = nw;
    k->awork = na;
  }
  k->queued[c] |= 0x80;
  k->work[k->nwork++] = c;
}

void
ck_map_set (struct ck *k, uint32_t c, bool on)
{
  unsigned char *m = k->map[c / CFS_BITS_PER_BITMAP];
  uint32_t bit = c % CFS_BITS_PER_BITMAP;
  unsigned char mask = (unsigned char)(1u << bit % 8);

  if (on == ck_map_bit (k, c))
    return;
  if (on)
    m[CFS_HEADER_SIZE + bit / 8] |= mask;
  else
    m[CFS_HEADER_SIZE + bit / 8] &= (unsigned char)~mask;
  k->map_dirty[c / CFS_BITS_PER_BITMAP] = true;
}

void
ck_in_use (struct ck *k, uint32_t c, bool queue)
{
  uint32_t j = c / CFS_BITS_PER_BITMAP, bit = c % CFS_BITS_PER_BITMAP;
  bool fix = true;

  if (c >= k->sb.chunks || ck_imap_bit (k, c))
    return;
  /* A block being rebuilt was reported once, as a whole. */
  if (k->imap_ok[j])
    fix = ck_fix (k, PR_0_INITMAP_STALE, c);
  /* Set in memory either way, so it is reported once. */
  k->imap[j][CFS_HEADER_SIZE + bit / 8] |= (unsigned char)(1u << bit % 8);
  k->imap_dirty[j] |= fix;
  if (queue && k->o->full)
    ck_queue (k, c); /* -f skipped it: check it now */
}

int
ck_header (struct ck *k, uint32_t c, struct cfs_chunk_header *h)
{
  struct hcache *e = &k->hc[c % CK_HCACHE];
  unsigned char blk[CFS_BLOCK];
  struct cfs_err err;

  if (c >= k->sb.chunks)
    return -1;
  if (c == k->c && k->ino) {
    *h = k->h;
    return 0;
  }
  if (!e->valid || e->chunk != c) {
    e->chunk = c;
    e->valid = true;
    e->br_bad = false;
    e->ok = ck_read (k, cfs_block (&k->sb, c, 0), blk) == 0 &&
            cfs_header_decode (blk, k->sb.uuid, c, &e->h, &err) == 0 &&
            e->h.state != CFS_UNINIT;
    /* A reference led here: a chunk in use -f would have skipped. */
    if (e->ok)
      ck_in_use (k, c, true);
  }
  *h = e->h;
  return e->ok ? 0 : -1;
}

void
ck_header_forget (struct ck *k, uint32_t c)
{
  k->hc[c % CK_HCACHE].valid = false;
}

int
ck_touch_other (struct ck *k, uint32_t c)
{
  struct cfs_chunk_header h;
  unsigned char blk[CFS_BLOCK];

  if (k->ino && c == k->c)
    return 0;
  if (!k->write || ck_header (k, c, &h) == -1)
    return -1;
  if (!ck_map_bit (k, c)) {
    uint32_t j = c / CFS_BITS_PER_BITMAP;
    ck_map_set (k, c, true);
    cfs_meta_seal (k->sb.uuid, k->map[j]);
    if (ck_write (k, CFS_MAP_BLOCK + j, k->map[j]) == -1)
      return -1;
    k->map_dirty[j] = false;
  }
  if (h.state == CFS_CLEAN) {
    h.state = CFS_DIRTY;
    h.super = k->sb;
    cfs_header_encode (&h, blk);
    if (ck_write (k, cfs_block (&k->sb, c, 0), blk) == -1)
      return -1;
    ck_header_forget (k, c);
  }
  /* Checked (again, if it was already) with what changed in it. */
  ck_queue (k, c);
  return 0;
}

static int
inode_slot (struct ck *k, uint64_t ref, unsigned char *blk, uint64_t *abs)
{
  uint32_t c = ref_chunk (ref), i = ref_ino (ref);
  struct cfs_chunk_header h;

  if (c >= k->sb.chunks || i == 0 || i >= k->g.inodes ||
      ck_header (k, c, &h) == -1)
    return -1;
  *abs = cfs_block (&k->sb, c, k->g.inode_table + i / CFS_INODES_PER_BLOCK);
  return ck_read (k, *abs, blk);
}

int
ck_inode (struct ck *k, uint64_t ref, struct cfs_inode *in)
{
  uint32_t c = ref_chunk (ref), i = ref_ino (ref);
  unsigned char blk[CFS_BLOCK];
  struct cfs_err err;
  uint64_t abs;

  if (k->ino && c == k->c) {
    if (i == 0 || i >= k->g.inodes || !k->ino[i].used)
      return -1;
    *in = k->ino[i].in;
    return 0;
  }
  if (inode_slot (k, ref, blk, &abs) == -1 ||
      cfs_inode_decode (blk + i % CFS_INODES_PER_BLOCK * CFS_INODE_SIZE,
                        k->sb.uuid, c, in, &err) == -1 ||
      in->mode == 0)
    return -1;
  return 0;
}

int
ck_put_inode (struct ck *k, uint64_t ref, const struct cfs_inode *in)
{
  uint32_t c = ref_chunk (ref), i = ref_ino (ref);
  unsigned char blk[CFS_BLOCK];
  uint64_t abs;

  if (!k->write)
    return -1;
  if (k->ino && c == k->c) {
    k->ino[i].in = *in;
    cfs_inode_encode (k->sb.uuid, in, k->itab + (size_t)i * CFS_INODE_SIZE);
    k->itab_dirty[i / CFS_INODES_PER_BLOCK] = 1;
    return 0;
  }
  if (ck_touch_other (k, c) == -1 || inode_slot (k, ref, blk, &abs) == -1)
    return -1;
  cfs_inode_encode (k->sb.uuid, in,
                    blk + i % CFS_INODES_PER_BLOCK * CFS_INODE_SIZE);
  return ck_write (k, abs, blk);
}

int
ck_map_read (struct ck *k, uint32_t c, uint64_t gen, uint32_t ino,
             const struct cfs_inode *in, struct cfs_extlist *l)
{
  struct cfs_inode d = *in;
  unsigned char blk[CFS_BLOCK];
  struct cfs_err err;
  uint16_t count = cfs_map_count (&d);

  *l = (struct cfs_extlist){0};
  if (count > CFS_EXT_ROOT || cfs_map_depth (&d) > 1 ||
      cfs_el_reserve (l, CFS_EXT_ROOT) == -1)
    return -1;
  for (uint32_t j = 0; j < count; j++) {
    struct cfs_extent e;
    uint32_t n;
    cfs_ext_get (cfs_map_entry (&d, j), &e);
    if (cfs_map_depth (&d) == 0) {
      l->v[l->n++] = e;
      continue;
    }
    if (e.start < k->g.first_data || e.start >= k->g.chunk_blocks ||
        ck_read (k, cfs_block (&k->sb, c, e.start), blk) == -1 ||
        cfs_meta_check (blk, k->sb.uuid, CFS_MAGIC_EXTENT, c, gen, &err) ==
            -1 ||
        cfs_get32 (blk + CFS_HEADER_SIZE + 4) != ino ||
        (n = cfs_get16 (blk + CFS_HEADER_SIZE)) > CFS_EXT_PER_BLOCK ||
        cfs_el_reserve (l, n) == -1) {
      cfs_el_free (l);
      return -1;
    }
    for (uint32_t x = 0; x < n; x++)
      cfs_ext_get (blk + CFS_EXT_START + 12 * x, &l->v[l->n++]);
  }
  return 0;
}

/* The chunk-local block at index idx of a directory whose extents are l:
 * 0 for none.
 */
static uint32_t
dir_bmap (const struct cfs_extlist *l, uint64_t idx)
{
  uint32_t x = cfs_el_search (l, idx);

  if (x < l->n && l->v[x].lblk <= idx)
    return l->v[x].start + (uint32_t)(idx - l->v[x].lblk);
  return 0;
}

/* Does directory block blk hold an entry naming target (with that name
 * hash, unless 0)?  1 (the hash in *found), or 0.
 */
static int
block_names (const unsigned char *blk, uint64_t target, uint32_t hash,
             uint32_t *found)
{
  uint32_t off;

  for (off = CFS_DIR_START; off + CFS_DIRENT_FIXED <= CFS_DIR_END;) {
    const unsigned char *e = blk + off;
    uint32_t len = cfs_get16 (e + 12);
    if (len < CFS_DIRENT_FIXED || len % 4 || off + len > CFS_DIR_END ||
        (uint32_t)CFS_DIRENT_FIXED + e[14] > len)
      break;
    if (cfs_get32 (e + 4) != 0 &&
        cfs_ref (cfs_get32 (e), cfs_get32 (e + 4)) == target) {
      uint32_t nh = cfs_name_hash ((const char *)e + 16, e[14]);
      if (hash == 0 || nh == hash) {
        if (found)
          *found = nh;
        return 1;
      }
    }
    off += len;
  }
  return 0;
}

int
ck_dir_names (struct ck *k, uint64_t dref, uint64_t target, uint32_t hash,
              uint32_t *found)
{
  uint32_t c = ref_chunk (dref);
  struct cfs_chunk_header h;
  struct cfs_inode d;
  struct cfs_extlist l;
  unsigned char blk[CFS_BLOCK];
  uint64_t idx, n;
  int r = 0;

  if (ck_inode (k, dref, &d) == -1 || !S_ISDIR (d.mode) ||
      ck_header (k, c, &h) == -1 ||
      ck_map_read (k, c, h.generation, ref_ino (dref), &d, &l) == -1)
    return -1;
  n = d.size / CFS_BLOCK;
  if (n > CK_MAX_DIR_BLOCKS)
    n = CK_MAX_DIR_BLOCKS;
  for (idx = 0; idx < n && r == 0; idx++) {
    uint32_t local = dir_bmap (&l, idx);
    struct cfs_err err;
    if (local < k->g.first_data || local >= k->g.chunk_blocks ||
        ck_read (k, cfs_block (&k->sb, c, local), blk) == -1 ||
        cfs_meta_check (blk, k->sb.uuid, CFS_MAGIC_DIR, c, h.generation,
                        &err) == -1)
      continue;
    r = block_names (blk, target, hash, found);
  }
  cfs_el_free (&l);
  return r;
}

int
ck_add_backref (struct ck *k, const struct backref *b)
{
  if (cfs_br_reserve (&k->br, k->nbr, &k->abr) == -1)
    return -1;
  k->br[k->nbr++] = *b;
  k->br_changed = true;
  return 0;
}

void
ck_add_pending (struct ck *k, uint32_t c, const struct backref *b)
{
  if (k->npend == k->apend) {
    size_t na = k->apend ? 2 * k->apend : 16;
    struct pending *np = realloc (k->pend, na * sizeof *np);
    if (np == NULL)
      return;
    k->pend = np;
    k->apend = na;
  }
  k->pend[k->npend++] = (struct pending){c, *b};
}

/* ---- lost+found ---- */

/* Room for an entry of `need` bytes in directory block blk: its offset,
 * after splitting an entry if needed; 0 if none.
 */
static uint32_t
make_room (unsigned char *blk, uint32_t need)
{
  uint32_t off;

  for (off = CFS_DIR_START; off + CFS_DIRENT_FIXED <= CFS_DIR_END;) {
    unsigned char *e = blk + off;
    uint32_t len = cfs_get16 (e + 12);
    uint32_t used = (uint32_t)(CFS_DIRENT_FIXED + e[14] + 3) & ~3u;
    if (len < CFS_DIRENT_FIXED || off + len > CFS_DIR_END)
      return 0;
    if (cfs_get32 (e + 4) == 0 && len >= need)
      return off;
    if (cfs_get32 (e + 4) != 0 && len >= used + need) {
      cfs_put16 (e + 12, (uint16_t)used);
      memset (e + used, 0, len - used);
      cfs_put16 (e + used + 12, (uint16_t)(len - used));
      return off + used;
    }
    off += len;
  }
  return 0;
}

/* A free block of chunk 0 from its on-disk bitmap (or, when chunk 0 is
 * the one being checked, from the rebuilt one): allocated, 0 if none.
 */
static uint32_t
alloc_in_chunk0 (struct ck *k)
{
  unsigned char blk[CFS_BLOCK];
  uint32_t b, i;
  struct cfs_chunk_header h;
  struct cfs_err err;

  if (k->ino && k->c == 0) {
    for (b = k->g.first_data; b < k->g.chunk_blocks; b++)
      if (!(k->used[b / 8] >> b % 8 & 1)) {
        k->used[b / 8] |= (uint8_t)(1u << b % 8);
        return b;
      }
    return 0;
  }
  if (ck_header (k, 0, &h) == -1)
    return 0;
  for (i = 0; i < k->g.block_bitmap_blocks; i++) {
    uint64_t abs = cfs_block (&k->sb, 0, k->g.block_bitmap + i);
    if (ck_read (k, abs, blk) == -1 ||
        cfs_meta_check (blk, k->sb.uuid, CFS_MAGIC_BITMAP, 0, h.generation,
                        &err) == -1)
      return 0;
    for (b = 0; b < CFS_BITS_PER_BITMAP; b++) {
      uint32_t local = i * CFS_BITS_PER_BITMAP + b;
      if (local < k->g.first_data)
        continue;
      if (local >= k->g.chunk_blocks)
        return 0;
      if (!(blk[CFS_HEADER_SIZE + b / 8] >> b % 8 & 1)) {
        blk[CFS_HEADER_SIZE + b / 8] |= (uint8_t)(1u << b % 8);
        cfs_meta_seal (k->sb.uuid, blk);
        if (ck_write (k, abs, blk) == -1)
          return 0;
        /* The free count is put right when chunk 0 is checked (it is
         * queued by the touch).
         */
        return local;
      }
    }
  }
  return 0;
}

/* Can lost+found (d) take block idx in its map without a leaf block?
 * (The checker allocates only the directory block itself.)
 */
static bool
lf_can_grow (const struct cfs_inode *d, uint32_t idx)
{
  uint16_t n = cfs_map_count (d);
  struct cfs_extent last;

  if (cfs_map_depth (d) != 0)
    return false;
  if (n < CFS_EXT_ROOT)
    return true;
  cfs_ext_get (d->map + 8 + 12 * (n - 1), &last);
  return last.lblk + last.len == idx; /* only if it joins the last */
}

/* Map block idx of lost+found (d) at local: the last extent grown when
 * it joins, else a new one.
 */
static void
lf_grow (struct cfs_inode *d, uint32_t idx, uint32_t local)
{
  uint16_t n = cfs_map_count (d);
  struct cfs_extent last = {0}, e = {idx, local, 1, false};

  if (n > 0)
    cfs_ext_get (cfs_map_entry (d, n - 1u), &last);
  if (n > 0 && last.lblk + last.len == idx && last.start + last.len == local) {
    last.len++;
    cfs_ext_put (cfs_map_entry (d, n - 1u), &last);
    return;
  }
  cfs_ext_put (cfs_map_entry (d, n), &e);
  cfs_put16 (d->map, (uint16_t)(n + 1));
}

int
ck_lost_found (struct ck *k, uint64_t target, uint32_t gen, uint8_t type)
{
  const uint64_t lf = cfs_ref (0, CFS_LOST_FOUND_INO);
  struct cfs_chunk_header h;
  struct cfs_inode d;
  unsigned char blk[CFS_BLOCK];
  char name[32];
  uint32_t need, idx, off = 0, local = 0;
  struct cfs_extlist l;
  struct cfs_err err;

  snprintf (name, sizeof name, "#%u.%u", ref_chunk (target), ref_ino (target));
  need = (uint32_t)(CFS_DIRENT_FIXED + strlen (name) + 3) & ~3u;
  if (!k->write || ck_inode (k, lf, &d) == -1 || !S_ISDIR (d.mode) ||
      ck_header (k, 0, &h) == -1) {
    ck_fix (k, PR_4_NO_LOST_FOUND, "missing or corrupt", ref_chunk (target),
            ref_ino (target));
    return -1;
  }
  if (k->c != 0 && ck_touch_other (k, 0) == -1)
    return -1;
  if (ck_map_read (k, 0, h.generation, CFS_LOST_FOUND_INO, &d, &l) == -1)
    l.n = 0;
  for (idx = 0; idx < d.size / CFS_BLOCK && idx < CK_MAX_DIR_BLOCKS; idx++) {
    local = dir_bmap (&l, idx);
    if (local < k->g.first_data || local >= k->g.chunk_blocks ||
        ck_read (k, cfs_block (&k->sb, 0, local), blk) == -1 ||
        cfs_meta_check (blk, k->sb.uuid, CFS_MAGIC_DIR, 0, h.generation,
                        &err) == -1)
      continue;
    if ((off = make_room (blk, need)) != 0)
      break;
  }
  cfs_el_free (&l);
  if (off == 0) {
    if (idx >= CK_MAX_DIR_BLOCKS || !lf_can_grow (&d, idx) ||
        (local = alloc_in_chunk0 (k)) == 0) {
      ck_fix (k, PR_4_NO_LOST_FOUND, "full", ref_chunk (target),
              ref_ino (target));
      return -1;
    }
    memset (blk, 0, CFS_BLOCK);
    cfs_meta_begin (blk, CFS_MAGIC_DIR, 0, 0, h.generation);
    cfs_dir_block_empty (blk, CFS_LOST_FOUND_INO, idx);
    off = CFS_DIR_START;
    lf_grow (&d, idx, local);
    d.size += CFS_BLOCK;
    d.mapped = d.size;
  }
  cfs_dirent_encode (blk + off, name, ref_chunk (target), ref_ino (target), gen,
                     type);
  cfs_put64 (blk + 16, h.generation);
  cfs_meta_seal (k->sb.uuid, blk);
  if (ck_write (k, cfs_block (&k->sb, 0, local), blk) == -1)
    return -1;
  if (type == (S_IFDIR >> 12))
    d.links++;
  if (ck_put_inode (k, lf, &d) == -1)
    return -1;
  if (ref_chunk (target) != 0) {
    struct backref b = {ref_ino (target), 0, CFS_LOST_FOUND_INO,
                        cfs_name_hash (name, strlen (name))};
    if (k->ino && ref_chunk (target) == k->c) {
      if (ck_add_backref (k, &b) == -1)
        return -1;
    } else {
      ck_add_pending (k, ref_chunk (target), &b);
      ck_touch_other (k, ref_chunk (target));
    }
  }
  return 0;
}

void
ck_inode_changed (struct ck *k, uint32_t i)
{
  cfs_inode_encode (k->sb.uuid, &k->ino[i].in,
                    k->itab + (size_t)i * CFS_INODE_SIZE);
  k->itab_dirty[i / CFS_INODES_PER_BLOCK] = 1;
}

void
ck_free_slot (struct ck *k, uint32_t i)
{
  uint32_t gen = k->ino[i].in.generation;

  memset (&k->ino[i].in, 0, sizeof k->ino[i].in);
  k->ino[i].in.generation = gen;
  k->ino[i].in.chunk = k->c;
  k->ino[i].used = false;
  ck_inode_changed (k, i);
}

/* The back-reference table is gone: which entries in other chunks name
 * this chunk's inodes is known only by reading every directory.  Every
 * chunk is checked (each entry naming an inode here brings its back-
 * reference back), then this one again; until then no file here is
 * called an orphan.
 */
void
ck_lose_backrefs (struct ck *k)
{
  uint32_t c;

  k->incomplete = true;
  for (c = 0; c < k->sb.chunks; c++)
    if (c != k->c)
      ck_queue (k, c);
  ck_queue (k, k->c);
}
