/* chunkfs — the metadata block cache (fs-internal.h).
 *
 * Write-back: a block is written when the file system syncs or the cache
 * grows past its limit, never before its chunk is dirty on disk (the
 * callers touch the chunk before changing a block).  Sealing happens at
 * write-out, with the chunk's generation then, so every written block
 * carries the generation of the dirty period that wrote it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fs-internal.h"

#define CACHE_LIMIT 16384 /* blocks: 64 MiB */

static size_t
slot (const struct cfs_fs *fs, uint64_t abs)
{
  return (size_t)((abs * 0x9E3779B97F4A7C15ull) >> 40) % fs->nhash;
}

static struct cblk *
find (struct cfs_fs *fs, uint64_t abs)
{
  struct cblk *b;

  for (b = fs->hash[slot (fs, abs)]; b; b = b->next)
    if (b->abs == abs)
      return b;
  return NULL;
}

struct cblk *
cfs_cache_get (struct cfs_fs *fs, uint32_t chunk, uint32_t local,
               enum cblk_kind kind, const char *magic, bool create)
{
  uint64_t abs = cfs_block (&fs->sb, chunk, local);
  struct cblk *b = find (fs, abs);
  struct cfs_err err;
  size_t s;

  if (b) {
    if (create) {
      memset (b->d, 0, CFS_BLOCK);
      if (kind == CBLK_META)
        cfs_meta_begin (b->d, magic, 0, chunk, 0);
    }
    return b;
  }
  if (fs->ncached >= CACHE_LIMIT && cfs_cache_trim (fs) < 0)
    return NULL;
  if ((b = calloc (1, sizeof *b)) == NULL) {
    cfs_fs_eio (fs, "out of memory");
    return NULL;
  }
  b->abs = abs;
  b->chunk = chunk;
  b->kind = kind;
  if (create) {
    if (kind == CBLK_META)
      cfs_meta_begin (b->d, magic, 0, chunk, 0);
  } else {
    if (cfs_read (fs->io, abs, 1, b->d, &err) == -1) {
      cfs_fs_eio (fs, "%s", err.msg);
      cfs_damaged (fs, chunk);
      free (b);
      return NULL;
    }
    if (kind == CBLK_META &&
        cfs_meta_check (b->d, fs->sb.uuid, magic, chunk,
                        fs->chunks[chunk].h.generation, &err) == -1) {
      cfs_fs_eio (fs, "block %llu: %s", (unsigned long long)abs, err.msg);
      cfs_damaged (fs, chunk);
      free (b);
      return NULL;
    }
  }
  s = slot (fs, abs);
  b->next = fs->hash[s];
  fs->hash[s] = b;
  fs->ncached++;
  return b;
}

void
cfs_cache_dirty (struct cfs_fs *fs, struct cblk *b)
{
  (void)fs;
  b->dirty = true;
}

void
cfs_cache_drop (struct cfs_fs *fs, uint64_t abs)
{
  struct cblk **pp = &fs->hash[slot (fs, abs)];

  for (; *pp; pp = &(*pp)->next)
    if ((*pp)->abs == abs) {
      struct cblk *b = *pp;
      *pp = b->next;
      free (b);
      fs->ncached--;
      return;
    }
}

void
cfs_cache_drop_range (struct cfs_fs *fs, uint64_t abs, uint64_t count)
{
  size_t s;

  if (count <= 64 || count < fs->nhash / 4) {
    for (uint64_t i = 0; i < count; i++)
      cfs_cache_drop (fs, abs + i);
    return;
  }
  /* A long run: fewer steps through the table than lookups. */
  for (s = 0; s < fs->nhash; s++) {
    struct cblk **pp = &fs->hash[s];
    while (*pp) {
      struct cblk *b = *pp;
      if (b->abs >= abs && b->abs - abs < count) {
        *pp = b->next;
        free (b);
        fs->ncached--;
      } else
        pp = &b->next;
    }
  }
}

static int
write_out (struct cfs_fs *fs, struct cblk *b)
{
  struct cfs_err err;

  if (b->kind == CBLK_META) {
    cfs_put64 (b->d + 16, fs->chunks[b->chunk].h.generation);
    cfs_meta_seal (fs->sb.uuid, b->d);
  }
  if (cfs_write (fs->io, b->abs, 1, b->d, false, &err) == -1) {
    cfs_damaged (fs, b->chunk);
    return cfs_fs_eio (fs, "%s", err.msg);
  }
  b->dirty = false;
  return 0;
}

int
cfs_cache_writeback (struct cfs_fs *fs)
{
  size_t i;
  int r = 0;

  for (i = 0; i < fs->nhash; i++)
    for (struct cblk *b = fs->hash[i]; b; b = b->next)
      if (b->dirty && write_out (fs, b) < 0)
        r = -EIO;
  return r;
}

int
cfs_cache_trim (struct cfs_fs *fs)
{
  size_t i;
  int r = cfs_cache_writeback (fs);

  for (i = 0; i < fs->nhash; i++) {
    struct cblk **pp = &fs->hash[i];
    while (*pp) {
      struct cblk *b = *pp;
      if (b->dirty) {
        pp = &b->next;
        continue;
      }
      *pp = b->next;
      free (b);
      fs->ncached--;
    }
  }
  return r;
}

void
cfs_cache_free (struct cfs_fs *fs)
{
  size_t i;

  for (i = 0; i < fs->nhash; i++)
    while (fs->hash[i]) {
      struct cblk *b = fs->hash[i];
      fs->hash[i] = b->next;
      free (b);
    }
  free (fs->hash);
  fs->hash = NULL;
  fs->ncached = 0;
}
