/* chunkfs — the core of the mounted file system, below the block cache
 * (fs-internal.h): the error note, the chunk headers, and the dirty and
 * initialised-chunks maps, each written straight to the device.  It calls
 * only io.c and format.c, so the cache can mark a chunk damaged without
 * calling back up into the allocator.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs-internal.h"

int
cfs_fs_eio (struct cfs_fs *fs, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (fs->errmsg, sizeof fs->errmsg, fmt, ap);
  va_end (ap);
  return -EIO;
}

int
cfs_header_write (struct cfs_fs *fs, uint32_t c, bool fua)
{
  unsigned char blk[CFS_BLOCK];
  struct cfs_err err;

  fs->chunks[c].h.super = fs->sb;
  cfs_header_encode (&fs->chunks[c].h, blk);
  if (cfs_write (fs->io, cfs_block (&fs->sb, c, 0), 1, blk, fua, &err) == -1)
    return cfs_fs_eio (fs, "%s", err.msg);
  return 0;
}

static bool
map_bit (const struct cfs_fs *fs, uint32_t c)
{
  const unsigned char *m = fs->map[c / CFS_BITS_PER_BITMAP];
  uint32_t bit = c % CFS_BITS_PER_BITMAP;

  return m[CFS_HEADER_SIZE + bit / 8] >> bit % 8 & 1;
}

static void
set_map_bit (struct cfs_fs *fs, uint32_t c, bool on)
{
  unsigned char *m = fs->map[c / CFS_BITS_PER_BITMAP];
  uint32_t bit = c % CFS_BITS_PER_BITMAP;
  unsigned char mask = (unsigned char)(1u << bit % 8);

  if (on == (bool)(m[CFS_HEADER_SIZE + bit / 8] & mask))
    return;
  if (on)
    m[CFS_HEADER_SIZE + bit / 8] |= mask;
  else
    m[CFS_HEADER_SIZE + bit / 8] &= (unsigned char)~mask;
  fs->map_changed[c / CFS_BITS_PER_BITMAP] = true;
}

static int
write_map (struct cfs_fs *fs, uint32_t j, bool fua)
{
  struct cfs_err err;

  cfs_meta_seal (fs->sb.uuid, fs->map[j]);
  if (cfs_write (fs->io, CFS_MAP_BLOCK + j, 1, fs->map[j], fua, &err) == -1)
    return cfs_fs_eio (fs, "dirty map: %s", err.msg);
  fs->map_changed[j] = false;
  return 0;
}

static bool
imap_bit (const struct cfs_fs *fs, uint32_t c)
{
  uint32_t bit = c % CFS_BITS_PER_BITMAP;

  return fs->imap[c / CFS_BITS_PER_BITMAP][CFS_HEADER_SIZE + bit / 8] >>
             bit % 8 &
         1;
}

static void
set_imap_bit (struct cfs_fs *fs, uint32_t c)
{
  uint32_t bit = c % CFS_BITS_PER_BITMAP;

  if (imap_bit (fs, c))
    return;
  fs->imap[c / CFS_BITS_PER_BITMAP][CFS_HEADER_SIZE + bit / 8] |=
      (unsigned char)(1u << bit % 8);
  fs->imap_changed[c / CFS_BITS_PER_BITMAP] = true;
}

static int
write_imap (struct cfs_fs *fs, uint32_t j, bool fua)
{
  struct cfs_err err;

  if (!fs->writable)
    return 0;
  cfs_meta_seal (fs->sb.uuid, fs->imap[j]);
  if (cfs_write (fs->io, cfs_initmap_block (&fs->sb) + j, 1, fs->imap[j], fua,
                 &err) == -1)
    return cfs_fs_eio (fs, "initialised-chunks map: %s", err.msg);
  fs->imap_changed[j] = false;
  return 0;
}

/* The initialised-chunks map as on disk; a block that does not check is
 * rebuilt from the headers (cfs_chunks_load sets the bits of the chunks
 * in use) and written at the next sync.
 */
static void
imap_load (struct cfs_fs *fs)
{
  struct cfs_err e;
  uint32_t j;

  for (j = 0; j < cfs_map_blocks (&fs->sb); j++)
    if (cfs_read (fs->io, cfs_initmap_block (&fs->sb) + j, 1, fs->imap[j],
                  &e) == -1 ||
        cfs_meta_check (fs->imap[j], fs->sb.uuid, CFS_MAGIC_INITMAP,
                        CFS_NO_CHUNK, 0, &e) == -1) {
      cfs_meta_begin (fs->imap[j], CFS_MAGIC_INITMAP, 0, CFS_NO_CHUNK, 0);
      memset (fs->imap[j] + CFS_HEADER_SIZE, 0, CFS_BLOCK - CFS_HEADER_SIZE);
      fs->imap_changed[j] = true;
    }
}

int
cfs_chunks_load (struct cfs_fs *fs, struct cfs_err *err)
{
  unsigned char blk[CFS_BLOCK];
  uint32_t c, j;

  for (j = 0; j < cfs_map_blocks (&fs->sb); j++) {
    struct cfs_err e;
    if (cfs_read (fs->io, CFS_MAP_BLOCK + j, 1, fs->map[j], err) == -1)
      return -1;
    if (cfs_meta_check (fs->map[j], fs->sb.uuid, CFS_MAGIC_MAP, CFS_NO_CHUNK, 0,
                        &e) == -1) {
      /* Rebuilt from the headers below, written at the first sync. */
      cfs_meta_begin (fs->map[j], CFS_MAGIC_MAP, 0, CFS_NO_CHUNK, 0);
      memset (fs->map[j] + CFS_HEADER_SIZE, 0, CFS_BLOCK - CFS_HEADER_SIZE);
      fs->map_changed[j] = true;
    }
  }
  imap_load (fs);
  for (c = 0; c < fs->sb.chunks; c++) {
    struct chunk *k = &fs->chunks[c];
    struct cfs_err e;

    if (cfs_read (fs->io, cfs_block (&fs->sb, c, 0), 1, blk, &e) == -1 ||
        cfs_header_decode (blk, fs->sb.uuid, c, &k->h, &e) == -1) {
      k->bad = true;
      k->h.index = c;
      k->h.state = CFS_DAMAGED;
      snprintf (fs->errmsg, sizeof fs->errmsg, "%s", e.msg);
    }
    if (k->h.state == CFS_DIRTY || k->h.state == CFS_DAMAGED)
      set_map_bit (fs, c, true);
    /* A chunk in use that the map calls uninitialised (a stale or
     * rebuilt map): its bit, written at the next sync.
     */
    if (k->h.state != CFS_UNINIT)
      set_imap_bit (fs, c);
    k->hint = 0;
  }
  return 0;
}

void
cfs_damaged (struct cfs_fs *fs, uint32_t c)
{
  struct chunk *k = &fs->chunks[c];

  if (k->h.state == CFS_DAMAGED || !fs->writable || k->bad)
    return;
  set_map_bit (fs, c, true);
  write_map (fs, c / CFS_BITS_PER_BITMAP, true);
  k->h.state = CFS_DAMAGED;
  cfs_header_write (fs, c, true);
}

int
cfs_maps_mark (struct cfs_fs *fs, uint32_t c, uint32_t n, bool imap)
{
  uint32_t i, j;

  for (i = 0; i < n; i++) {
    set_map_bit (fs, c + i, true);
    if (imap)
      set_imap_bit (fs, c + i);
  }
  for (j = c / CFS_BITS_PER_BITMAP; j <= (c + n - 1) / CFS_BITS_PER_BITMAP;
       j++) {
    if (fs->map_changed[j] && write_map (fs, j, true) < 0)
      return -EIO;
    if (imap && fs->imap_changed[j] && write_imap (fs, j, true) < 0)
      return -EIO;
  }
  return 0;
}

int
cfs_chunks_clean (struct cfs_fs *fs)
{
  struct cfs_err err;
  uint64_t now = cfs_now_ns ();
  uint32_t c, j;
  int r = 0;

  for (c = 0; c < fs->sb.chunks; c++) {
    struct chunk *k = &fs->chunks[c];
    if (!k->touched)
      continue;
    if (k->h.state == CFS_DIRTY) {
      k->h.state = CFS_CLEAN;
      k->h.cleaned = now;
    }
    if (cfs_header_write (fs, c, false) < 0)
      r = -EIO;
    k->touched = false;
  }
  if (cfs_flush (fs->io, &err) == -1)
    return cfs_fs_eio (fs, "%s", err.msg);
  for (c = 0; c < fs->sb.chunks; c++)
    if (map_bit (fs, c) && fs->chunks[c].h.state == CFS_CLEAN)
      set_map_bit (fs, c, false);
  for (j = 0; j < cfs_map_blocks (&fs->sb); j++) {
    if (fs->map_changed[j] && write_map (fs, j, false) < 0)
      r = -EIO;
    if (fs->imap_changed[j] && write_imap (fs, j, false) < 0)
      r = -EIO;
  }
  if (cfs_flush (fs->io, &err) == -1)
    return cfs_fs_eio (fs, "%s", err.msg);
  return r;
}
