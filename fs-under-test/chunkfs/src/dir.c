/* chunkfs — directory entries and the back-references that pair entries
 * naming another chunk's inodes (fs-internal.h, FORMAT.md "Directories").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fs-internal.h"

static uint32_t
entry_size (size_t namelen)
{
  return (uint32_t)(CFS_DIRENT_FIXED + namelen + 3) & ~3u;
}

/* Directory block `idx` of dir, checked: its header names dir and idx,
 * its entries tile it exactly.
 */
static struct cblk *
dir_block (struct cfs_fs *fs, struct ino *dir, uint64_t idx, bool alloc, int *r)
{
  uint32_t local;
  struct cblk *b;
  bool full, fresh;
  uint32_t off;

  if ((*r = cfs_bmap (fs, dir, idx, alloc, 0, &local, &full, &fresh)) < 0)
    return NULL;
  if (local == 0) {
    *r = cfs_fs_eio (fs, "directory (%u, %u): block %llu missing", dir->c,
                     dir->i, (unsigned long long)idx);
    return NULL;
  }
  if (alloc) {
    if ((b = cfs_cache_get (fs, dir->c, local, CBLK_META, CFS_MAGIC_DIR,
                            true)) == NULL) {
      *r = -EIO;
      return NULL;
    }
    cfs_dir_block_empty (b->d, dir->i, (uint32_t)idx);
    cfs_cache_dirty (fs, b);
    return b;
  }
  if ((b = cfs_cache_get (fs, dir->c, local, CBLK_META, CFS_MAGIC_DIR,
                          false)) == NULL) {
    *r = -EIO;
    return NULL;
  }
  if (cfs_get32 (b->d + CFS_HEADER_SIZE) != dir->i ||
      cfs_get32 (b->d + CFS_HEADER_SIZE + 4) != (uint32_t)idx)
    goto bad;
  for (off = CFS_DIR_START; off < CFS_DIR_END;) {
    const unsigned char *e = b->d + off;
    uint32_t len = cfs_get16 (e + 12), nlen = e[14];
    if (len < CFS_DIRENT_FIXED || len % 4 || off + len > CFS_DIR_END ||
        (cfs_get32 (e + 4) != 0 &&
         (nlen == 0 || entry_size (nlen) > len || memchr (e + 16, '/', nlen) ||
          memchr (e + 16, '\0', nlen))))
      goto bad;
    off += len;
  }
  return b;
bad:
  cfs_damaged (fs, dir->c);
  *r = cfs_fs_eio (fs, "directory (%u, %u): block %llu is corrupt", dir->c,
                   dir->i, (unsigned long long)idx);
  return NULL;
}

static uint64_t
dir_blocks (const struct ino *dir)
{
  return dir->in.size / CFS_BLOCK;
}

int
cfs_dir_find (struct cfs_fs *fs, struct ino *dir, const char *name,
              struct dirent_loc *loc)
{
  size_t nlen = strlen (name);
  uint64_t idx;
  int r;

  for (idx = 0; idx < dir_blocks (dir); idx++) {
    struct cblk *b = dir_block (fs, dir, idx, false, &r);
    uint32_t off;
    if (b == NULL)
      return r;
    for (off = CFS_DIR_START; off < CFS_DIR_END;
         off += cfs_get16 (b->d + off + 12)) {
      const unsigned char *e = b->d + off;
      if (cfs_get32 (e + 4) == 0 || e[14] != nlen ||
          memcmp (e + 16, name, nlen) != 0)
        continue;
      loc->abs = b->abs;
      loc->off = off;
      loc->target = cfs_ref (cfs_get32 (e), cfs_get32 (e + 4));
      loc->generation = cfs_get32 (e + 8);
      loc->type = e[15];
      return 0;
    }
  }
  return -ENOENT;
}

/* ---- back-references ---- */

static int
br_cmp (const struct backref *a, const struct backref *b)
{
  if (a->ino != b->ino)
    return a->ino < b->ino ? -1 : 1;
  if (a->src_chunk != b->src_chunk)
    return a->src_chunk < b->src_chunk ? -1 : 1;
  if (a->src_dir != b->src_dir)
    return a->src_dir < b->src_dir ? -1 : 1;
  if (a->hash != b->hash)
    return a->hash < b->hash ? -1 : 1;
  return 0;
}

int
cfs_backrefs_load (struct cfs_fs *fs, uint32_t c)
{
  struct chunk *k = &fs->chunks[c];
  uint32_t b, j;

  if (k->br_loaded)
    return 0;
  if (k->h.backref_block &&
      ((uint64_t)k->h.backref_block + k->h.backref_blocks >
           fs->g.chunk_blocks ||
       k->h.backref_block < fs->g.first_data))
    return cfs_fs_eio (fs, "chunk %u: back-reference table out of range", c);
  for (b = 0; k->h.backref_block && b < k->h.backref_blocks; b++) {
    struct cblk *blk = cfs_cache_get (fs, c, k->h.backref_block + b, CBLK_META,
                                      CFS_MAGIC_BACKREF, false);
    uint32_t n;
    if (blk == NULL)
      return -EIO;
    n = cfs_get32 (blk->d + CFS_HEADER_SIZE);
    if (n > CFS_BACKREFS_PER_BLOCK)
      return cfs_fs_eio (fs, "chunk %u: back-reference block %u is corrupt", c,
                         b);
    for (j = 0; j < n; j++) {
      const unsigned char *p = blk->d + CFS_HEADER_SIZE + 4 + 16 * j;
      if (cfs_br_reserve (&k->br, k->nbr, &k->abr) == -1)
        return cfs_fs_eio (fs, "out of memory");
      k->br[k->nbr++] = cfs_br_decode (p);
    }
  }
  k->br_loaded = true;
  return 0;
}

static int
backref_add (struct cfs_fs *fs, uint32_t c, const struct backref *r)
{
  struct chunk *k = &fs->chunks[c];
  uint32_t at;
  int e;

  if ((e = cfs_backrefs_load (fs, c)) < 0 || (e = cfs_touch (fs, c)) < 0)
    return e;
  if (cfs_br_reserve (&k->br, k->nbr, &k->abr) == -1)
    return -ENOMEM;
  for (at = k->nbr; at > 0 && br_cmp (&k->br[at - 1], r) > 0; at--)
    ;
  memmove (&k->br[at + 1], &k->br[at], (k->nbr - at) * sizeof *r);
  k->br[at] = *r;
  k->nbr++;
  k->br_changed = true;
  return 0;
}

static int
backref_remove (struct cfs_fs *fs, uint32_t c, const struct backref *r)
{
  struct chunk *k = &fs->chunks[c];
  uint32_t i;
  int e;

  if ((e = cfs_backrefs_load (fs, c)) < 0)
    return e;
  for (i = 0; i < k->nbr; i++)
    if (br_cmp (&k->br[i], r) == 0) {
      if ((e = cfs_touch (fs, c)) < 0)
        return e;
      memmove (&k->br[i], &k->br[i + 1], (k->nbr - i - 1) * sizeof *r);
      k->nbr--;
      k->br_changed = true;
      return 0;
    }
  /* Missing already: the checker's business, not a reason to fail. */
  return 0;
}

int
cfs_backrefs_write (struct cfs_fs *fs, uint32_t c)
{
  struct chunk *k = &fs->chunks[c];
  uint32_t nblocks = cfs_br_blocks (k->nbr), first = 0, b;
  int r;

  if (!k->br_changed)
    return 0;
  for (b = 0; k->h.backref_block && b < k->h.backref_blocks; b++)
    if ((r = cfs_free_block (fs, c, k->h.backref_block + b)) < 0)
      return r;
  k->h.backref_block = k->h.backref_blocks = 0;
  if (nblocks && (r = cfs_alloc_run (fs, c, nblocks, &first)) < 0)
    return r;
  for (b = 0; b < nblocks; b++) {
    struct cblk *blk =
        cfs_cache_get (fs, c, first + b, CBLK_META, CFS_MAGIC_BACKREF, true);
    if (blk == NULL)
      return -EIO;
    cfs_br_encode_block (blk->d, k->br, k->nbr, b);
    cfs_cache_dirty (fs, blk);
  }
  k->h.backref_block = first;
  k->h.backref_blocks = nblocks;
  k->br_changed = false;
  return 0;
}

static int
pair (struct cfs_fs *fs, struct ino *dir, const char *name, uint64_t target,
      bool add)
{
  struct backref br = {ref_ino (target), dir->c, dir->i,
                       cfs_name_hash (name, strlen (name))};
  uint32_t tc = ref_chunk (target);

  if (tc == dir->c)
    return 0;
  return add ? backref_add (fs, tc, &br) : backref_remove (fs, tc, &br);
}

/* ---- changing entries ---- */

int
cfs_dir_add (struct cfs_fs *fs, struct ino *dir, const char *name,
             uint64_t target, uint32_t generation, uint8_t type)
{
  uint32_t need = entry_size (strlen (name));
  struct cblk *b;
  uint64_t idx;
  int r;

  if ((r = cfs_touch (fs, dir->c)) < 0)
    return r;
  for (idx = 0; idx < dir_blocks (dir); idx++) {
    uint32_t off;
    if ((b = dir_block (fs, dir, idx, false, &r)) == NULL)
      return r;
    for (off = CFS_DIR_START; off < CFS_DIR_END;
         off += cfs_get16 (b->d + off + 12)) {
      unsigned char *e = b->d + off;
      uint32_t len = cfs_get16 (e + 12);
      if (cfs_get32 (e + 4) == 0 && len >= need) {
        cfs_dirent_encode (e, name, ref_chunk (target), ref_ino (target),
                           generation, type);
        goto done;
      }
      if (cfs_get32 (e + 4) != 0 && len - entry_size (e[14]) >= need) {
        uint32_t used = entry_size (e[14]);
        unsigned char *n = e + used;
        cfs_put16 (e + 12, (uint16_t)used);
        memset (n, 0, len - used);
        cfs_put16 (n + 12, (uint16_t)(len - used));
        cfs_dirent_encode (n, name, ref_chunk (target), ref_ino (target),
                           generation, type);
        goto done;
      }
    }
  }
  /* No room: a new block, in the directory's own chunk. */
  if ((b = dir_block (fs, dir, idx, true, &r)) == NULL)
    return r;
  cfs_dirent_encode (b->d + CFS_DIR_START, name, ref_chunk (target),
                     ref_ino (target), generation, type);
  dir->in.size += CFS_BLOCK;
  dir->in.mapped = dir->in.size;
done:
  cfs_cache_dirty (fs, b);
  if ((r = cfs_iput (fs, dir)) < 0)
    return r;
  return pair (fs, dir, name, target, true);
}

int
cfs_dir_remove (struct cfs_fs *fs, struct ino *dir, const char *name)
{
  size_t nlen = strlen (name);
  struct cblk *b;
  uint64_t idx;
  int r;

  if ((r = cfs_touch (fs, dir->c)) < 0)
    return r;
  for (idx = 0; idx < dir_blocks (dir); idx++) {
    uint32_t off, prev = 0;
    if ((b = dir_block (fs, dir, idx, false, &r)) == NULL)
      return r;
    for (off = CFS_DIR_START; off < CFS_DIR_END;
         prev = off, off += cfs_get16 (b->d + off + 12)) {
      unsigned char *e = b->d + off;
      uint64_t target;
      if (cfs_get32 (e + 4) == 0 || e[14] != nlen ||
          memcmp (e + 16, name, nlen) != 0)
        continue;
      target = cfs_ref (cfs_get32 (e), cfs_get32 (e + 4));
      if (prev) {
        /* The previous entry takes the space (ext2's way). */
        unsigned char *p = b->d + prev;
        cfs_put16 (p + 12, (uint16_t)(cfs_get16 (p + 12) + cfs_get16 (e + 12)));
        memset (e, 0, (size_t)CFS_DIRENT_FIXED + e[14]); /* now slack */
      } else {
        uint16_t len = cfs_get16 (e + 12);
        memset (e, 0, len);
        cfs_put16 (e + 12, len);
      }
      cfs_cache_dirty (fs, b);
      return pair (fs, dir, name, target, false);
    }
  }
  return -ENOENT;
}

int
cfs_dir_retarget (struct cfs_fs *fs, struct ino *dir, const char *name,
                  uint64_t target, uint32_t generation, uint8_t type)
{
  struct dirent_loc loc;
  struct cblk *b;
  int r;

  if ((r = cfs_dir_find (fs, dir, name, &loc)) < 0 ||
      (r = pair (fs, dir, name, loc.target, false)) < 0 ||
      (r = cfs_touch (fs, dir->c)) < 0)
    return r;
  /* The block is cached (cfs_dir_find just read it). */
  b = cfs_cache_get (fs, dir->c,
                     (uint32_t)(loc.abs - cfs_block (&fs->sb, dir->c, 0)),
                     CBLK_META, CFS_MAGIC_DIR, false);
  if (b == NULL)
    return -EIO;
  cfs_dirent_encode (b->d + loc.off, name, ref_chunk (target), ref_ino (target),
                     generation, type);
  cfs_cache_dirty (fs, b);
  return pair (fs, dir, name, target, true);
}

int
cfs_dir_is_empty (struct cfs_fs *fs, struct ino *dir)
{
  uint64_t idx;
  int r;

  for (idx = 0; idx < dir_blocks (dir); idx++) {
    struct cblk *b = dir_block (fs, dir, idx, false, &r);
    uint32_t off;
    if (b == NULL)
      return r;
    for (off = CFS_DIR_START; off < CFS_DIR_END;
         off += cfs_get16 (b->d + off + 12))
      if (cfs_get32 (b->d + off + 4) != 0)
        return 0;
  }
  return 1;
}

/* Cookies: 0 ".", 1 "..", then 2 + block * 4096 + offset of the entry. */
int
cfs_dir_iterate (struct cfs_fs *fs, struct ino *dir, uint64_t cookie,
                 cfs_dirent_fn fn, void *opaque)
{
  uint64_t idx;
  int r;

  if (cookie == 0) {
    if (fn (opaque, ".", cfs_ref (dir->c, dir->i), 040000, 1))
      return 0;
    cookie = 1;
  }
  if (cookie == 1) {
    if (fn (opaque, "..", dir->in.offset, 040000, 2))
      return 0;
    cookie = 2;
  }
  for (idx = (cookie - 2) / CFS_BLOCK; idx < dir_blocks (dir); idx++) {
    struct cblk *b = dir_block (fs, dir, idx, false, &r);
    uint32_t off, start = idx == (cookie - 2) / CFS_BLOCK
                              ? (uint32_t)((cookie - 2) % CFS_BLOCK)
                              : 0;
    if (b == NULL)
      return r;
    for (off = CFS_DIR_START; off < CFS_DIR_END;
         off += cfs_get16 (b->d + off + 12)) {
      const unsigned char *e = b->d + off;
      char name[256];
      uint32_t len = cfs_get16 (e + 12);
      if (off < start || cfs_get32 (e + 4) == 0)
        continue;
      memcpy (name, e + 16, e[14]);
      name[e[14]] = '\0';
      if (fn (opaque, name, cfs_ref (cfs_get32 (e), cfs_get32 (e + 4)),
              (uint16_t)(e[15] << 12), 2 + idx * CFS_BLOCK + off + len))
        return 0;
    }
  }
  return 0;
}
