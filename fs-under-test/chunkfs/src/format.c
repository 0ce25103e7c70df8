/* chunkfs — encoding and verifying the on-disk structures (format.h). */
#include <stdio.h>
#include <string.h>

#include "chunkfs/format.h"

/* ---- crc32c ---- */

#if defined(__x86_64__)
/* The SSE4.2 instruction computes exactly this crc (Castagnoli,
 * reflected), eight bytes a step: every block is checksummed on every
 * read and write, and every inode read or written is checked or sealed
 * on the hot path of each file block, so the crc is much of the CPU time.
 * Without the instruction: slicing by 8 (eight bytes a step through
 * eight tables), which beats a byte at a time by about as much.
 */
__attribute__ ((target ("sse4.2"))) static uint32_t
crc32c_hw (uint32_t crc, const unsigned char *p, size_t len)
{
  uint64_t c = crc;

  for (; len >= 8; len -= 8, p += 8) {
    uint64_t v;
    memcpy (&v, p, 8);
    c = __builtin_ia32_crc32di (c, v);
  }
  for (; len; len--)
    c = __builtin_ia32_crc32qi ((uint32_t)c, *p++);
  return (uint32_t)c;
}
#endif

uint32_t
cfs_crc32c (uint32_t crc, const void *buf, size_t len)
{
  static uint32_t t[8][256];
  static int ready;
  const unsigned char *p = buf;

#if defined(__x86_64__)
  if (__builtin_cpu_supports ("sse4.2"))
    return crc32c_hw (crc, p, len);
#endif
  if (!ready) {
    /* The reflected Castagnoli polynomial 0x1EDC6F41. */
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++)
        c = c & 1 ? 0x82F63B78u ^ (c >> 1) : c >> 1;
      t[0][i] = c;
    }
    for (int k = 1; k < 8; k++)
      for (int i = 0; i < 256; i++)
        t[k][i] = t[0][t[k - 1][i] & 0xff] ^ (t[k - 1][i] >> 8);
    ready = 1;
  }
  for (; len >= 8; len -= 8, p += 8) {
    uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 |
                         (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
    crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^
          t[4][lo >> 24] ^ t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
  }
  while (len--)
    crc = t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

uint32_t
cfs_meta_crc (const uint8_t uuid[16], const void *buf, size_t len)
{
  return ~cfs_crc32c (cfs_crc32c (~0u, uuid, 16), buf, len);
}

/* ---- geometry ---- */

void
cfs_geometry (const struct cfs_super *s, struct cfs_geometry *g)
{
  memset (g, 0, sizeof *g);
  g->chunk_blocks = s->chunk_blocks;
  g->inodes = s->inodes_per_chunk;
  g->block_bitmap = 1;
  g->block_bitmap_blocks =
      (s->chunk_blocks + CFS_BITS_PER_BITMAP - 1) / CFS_BITS_PER_BITMAP;
  g->inode_bitmap = g->block_bitmap + g->block_bitmap_blocks;
  g->inode_bitmap_blocks =
      (s->inodes_per_chunk + CFS_BITS_PER_BITMAP - 1) / CFS_BITS_PER_BITMAP;
  g->inode_table = g->inode_bitmap + g->inode_bitmap_blocks;
  g->inode_table_blocks = s->inodes_per_chunk / CFS_INODES_PER_BLOCK;
  g->first_data = g->inode_table + g->inode_table_blocks;
}

uint64_t
cfs_block (const struct cfs_super *s, uint32_t c, uint32_t b)
{
  return CFS_FIRST_CHUNK + (uint64_t)c * s->chunk_blocks + b;
}

/* ---- superblock ---- */

static void
super_fields (const struct cfs_super *s, unsigned char *p)
{
  /* bytes 8..103 of the superblock, also the chunk header's copy */
  memcpy (p, s->uuid, 16);
  cfs_put64 (p + 16, s->device_blocks);
  cfs_put32 (p + 24, s->chunk_blocks);
  cfs_put32 (p + 28, s->chunks);
  cfs_put32 (p + 32, s->inodes_per_chunk);
  cfs_put32 (p + 36, s->root_chunk);
  cfs_put32 (p + 40, s->root_ino);
  cfs_put32 (p + 44, s->features);
  cfs_put64 (p + 48, s->mkfs_time);
  memcpy (p + 56, s->label, 32);
}

static void
super_read_fields (const unsigned char *p, struct cfs_super *s)
{
  memcpy (s->uuid, p, 16);
  s->device_blocks = cfs_get64 (p + 16);
  s->chunk_blocks = cfs_get32 (p + 24);
  s->chunks = cfs_get32 (p + 28);
  s->inodes_per_chunk = cfs_get32 (p + 32);
  s->root_chunk = cfs_get32 (p + 36);
  s->root_ino = cfs_get32 (p + 40);
  s->features = cfs_get32 (p + 44);
  s->mkfs_time = cfs_get64 (p + 48);
  memcpy (s->label, p + 56, 32);
  s->label[31] = '\0';
}

static void
tag (unsigned char *p, const char magic[4], uint16_t flags)
{
  memcpy (p, magic, 4);
  cfs_put16 (p + 4, CFS_VERSION);
  cfs_put16 (p + 6, flags);
}

static int
check_tag (const unsigned char *p, const char magic[4], const char *what,
           struct cfs_err *err)
{
  if (memcmp (p, magic, 4) != 0) {
    return cfs_fail (err, "%s: not a %.4s block (magic %02x%02x%02x%02x)", what,
                     magic, p[0], p[1], p[2], p[3]);
  }
  if (cfs_get16 (p + 4) != CFS_VERSION) {
    return cfs_fail (err, "%s: format version %u, this chunkfs knows %u", what,
                     cfs_get16 (p + 4), CFS_VERSION);
  }
  return 0;
}

static int
check_crc (const uint8_t uuid[16], const unsigned char *blk, size_t len,
           const char *what, struct cfs_err *err)
{
  uint32_t want = cfs_get32 (blk + len), got = cfs_meta_crc (uuid, blk, len);

  if (want != got) {
    return cfs_fail (err, "%s: bad checksum (stored %08x, computed %08x)", what,
                     want, got);
  }
  return 0;
}

/* The sanity of the geometry: what every tool relies on before sizing
 * anything by it.
 */
static int
check_geometry (const struct cfs_super *s, struct cfs_err *err)
{
  const char *bad = NULL;

  if (s->chunk_blocks < CFS_MIN_CHUNK_BLOCKS ||
      s->chunk_blocks > CFS_MAX_CHUNK_BLOCKS ||
      (s->chunk_blocks & (s->chunk_blocks - 1)))
    bad = "blocks per chunk";
  else if (s->chunks == 0 || s->chunks > CFS_MAX_CHUNKS ||
           CFS_FIRST_CHUNK + (uint64_t)s->chunks * s->chunk_blocks >
               s->device_blocks)
    bad = "chunk count";
  else if (s->inodes_per_chunk < CFS_INODES_PER_BLOCK ||
           s->inodes_per_chunk % CFS_INODES_PER_BLOCK ||
           s->inodes_per_chunk / CFS_INODES_PER_BLOCK >= s->chunk_blocks / 2)
    bad = "inodes per chunk";
  else if (s->root_chunk != 0 || s->root_ino != CFS_ROOT_INO)
    bad = "root directory";
  else if (s->features & ~CFS_FEATURES_KNOWN)
    bad = "feature flags (unknown)";
  if (bad) {
    return cfs_fail (err, "superblock: bad %s", bad);
  }
  return 0;
}

void
cfs_super_encode (const struct cfs_super *s, void *blk)
{
  unsigned char *p = blk;

  memset (p, 0, CFS_BLOCK);
  tag (p, CFS_MAGIC_SUPER, 0);
  super_fields (s, p + 8);
  cfs_put32 (p + CFS_BLOCK - 4, cfs_meta_crc (s->uuid, p, CFS_BLOCK - 4));
}

int
cfs_super_decode (const void *blk, struct cfs_super *s, struct cfs_err *err)
{
  const unsigned char *p = blk;

  if (check_tag (p, CFS_MAGIC_SUPER, "superblock", err) == -1 ||
      check_crc (p + 8, p, CFS_BLOCK - 4, "superblock", err) == -1)
    return -1;
  super_read_fields (p + 8, s);
  return check_geometry (s, err);
}

int
cfs_super_find (struct cfs_io *io, struct cfs_super *s, int *copy,
                struct cfs_err *err)
{
  unsigned char blk[CFS_BLOCK];
  struct cfs_chunk_header h;
  struct cfs_err e;
  uint64_t cb;

  *copy = -1;
  if (cfs_read (io, CFS_SUPER_BLOCK, 1, blk, err) == 0 &&
      cfs_super_decode (blk, s, err) == 0)
    return 0;
  for (cb = 0; cb <= CFS_MAX_CHUNK_BLOCKS;
       cb = cb ? cb * 2 : CFS_MIN_CHUNK_BLOCKS) {
    uint32_t c = cb ? 1 : 0;
    if (cfs_read (io, CFS_FIRST_CHUNK + cb, 1, blk, &e) == -1 ||
        memcmp (blk, CFS_MAGIC_HEADER, 4) != 0)
      continue;
    /* The UUID the checksum is seeded with is in the copy itself. */
    if (cfs_header_decode (blk, blk + 56, c, &h, &e) == 0 &&
        h.state != CFS_UNINIT && (c == 0 || h.super.chunk_blocks == cb) &&
        h.super.device_blocks <= cfs_blocks (io)) {
      *s = h.super;
      *copy = (int)c;
      return 0;
    }
  }
  return -1;
}

/* ---- chunk header ---- */

void
cfs_header_encode (const struct cfs_chunk_header *h, void *blk)
{
  unsigned char *p = blk;

  memset (p, 0, CFS_BLOCK);
  tag (p, CFS_MAGIC_HEADER, 0);
  cfs_put32 (p + 8, h->index);
  cfs_put32 (p + 12, (uint32_t)h->state);
  cfs_put64 (p + 16, h->generation);
  cfs_put32 (p + 24, h->free_blocks);
  cfs_put32 (p + 28, h->free_inodes);
  cfs_put64 (p + 32, h->checked);
  cfs_put64 (p + 40, h->cleaned);
  cfs_put32 (p + 48, h->backref_block);
  cfs_put32 (p + 52, h->backref_blocks);
  super_fields (&h->super, p + 56);
  if (h->super.features & CFS_FEATURE_ITABLE_MARK)
    cfs_put32 (p + 152, h->itable_mark);
  cfs_put32 (p + CFS_BLOCK - 4, cfs_meta_crc (h->super.uuid, p, CFS_BLOCK - 4));
}

int
cfs_header_decode (const void *blk, const uint8_t uuid[16], uint32_t index,
                   struct cfs_chunk_header *h, struct cfs_err *err)
{
  const unsigned char *p = blk;
  char what[48];

  memset (h, 0, sizeof *h);
  h->index = index;
  if (cfs_all_zero (p, CFS_BLOCK)) {
    h->state = CFS_UNINIT;
    return 0;
  }
  snprintf (what, sizeof what, "chunk %u header", index);
  if (check_tag (p, CFS_MAGIC_HEADER, what, err) == -1 ||
      check_crc (uuid, p, CFS_BLOCK - 4, what, err) == -1)
    return -1;
  if (cfs_get32 (p + 8) != index) {
    return cfs_fail (err, "%s: it is chunk %u's (a misdirected write)", what,
                     cfs_get32 (p + 8));
  }
  h->state = (enum cfs_chunk_state)cfs_get32 (p + 12);
  if (h->state > CFS_DAMAGED) {
    return cfs_fail (err, "%s: bad state %u", what, (unsigned)h->state);
  }
  h->generation = cfs_get64 (p + 16);
  h->free_blocks = cfs_get32 (p + 24);
  h->free_inodes = cfs_get32 (p + 28);
  h->checked = cfs_get64 (p + 32);
  h->cleaned = cfs_get64 (p + 40);
  h->backref_block = cfs_get32 (p + 48);
  h->backref_blocks = cfs_get32 (p + 52);
  super_read_fields (p + 56, &h->super);
  if (check_geometry (&h->super, err) == -1)
    return -1;
  /* Without the mark (or unknown yet: the superblock copy is read with
   * the header) every slot may have been used.
   */
  h->itable_mark = h->super.features & CFS_FEATURE_ITABLE_MARK
                       ? cfs_get32 (p + 152)
                       : h->super.inodes_per_chunk;
  /* Fields every reader sizes loops by: within the chunk. */
  if (h->free_blocks > h->super.chunk_blocks ||
      h->free_inodes > h->super.inodes_per_chunk ||
      (h->backref_block && (h->backref_blocks == 0 ||
                            (uint64_t)h->backref_block + h->backref_blocks >
                                h->super.chunk_blocks))) {
    return cfs_fail (
        err, "%s: free counts or back-reference table out of range", what);
  }
  return 0;
}

/* ---- inodes ---- */

void
cfs_inode_encode (const uint8_t uuid[16], const struct cfs_inode *in,
                  void *slot)
{
  unsigned char *p = slot;

  memset (p, 0, CFS_INODE_SIZE);
  cfs_put16 (p, in->mode);
  cfs_put16 (p + 2, in->flags);
  cfs_put32 (p + 4, in->links);
  cfs_put32 (p + 8, in->uid);
  cfs_put32 (p + 12, in->gid);
  cfs_put64 (p + 16, in->size);
  cfs_put64 (p + 24, in->atime);
  cfs_put64 (p + 32, in->mtime);
  cfs_put64 (p + 40, in->ctime);
  cfs_put32 (p + 48, in->generation);
  cfs_put32 (p + 52, in->chunk);
  cfs_put64 (p + 56, in->offset);
  cfs_put64 (p + 64, in->head);
  cfs_put64 (p + 72, in->next);
  cfs_put64 (p + 80, in->mapped);
  if (cfs_mode_special (in->mode))
    cfs_put64 (p + 88, in->rdev);
  else
    memcpy (p + 88, in->map, CFS_MAP_AREA);
  if (in->flags & CFS_INODE_INLINE)
    memcpy (p + 144, in->symlink, sizeof in->symlink);
  else
    memcpy (p + 144, in->xattr, sizeof in->xattr);
  cfs_put32 (p + 244, in->xattr_block);
  cfs_put32 (p + 252, cfs_meta_crc (uuid, p, 252));
}

int
cfs_inode_decode (const void *slot, const uint8_t uuid[16], uint32_t chunk,
                  struct cfs_inode *in, struct cfs_err *err)
{
  const unsigned char *p = slot;

  memset (in, 0, sizeof *in);
  if (cfs_all_zero (p, CFS_INODE_SIZE))
    return 0; /* free */
  if (check_crc (uuid, p, 252, "inode", err) == -1)
    return -1;
  in->mode = cfs_get16 (p);
  in->flags = cfs_get16 (p + 2);
  in->links = cfs_get32 (p + 4);
  in->uid = cfs_get32 (p + 8);
  in->gid = cfs_get32 (p + 12);
  in->size = cfs_get64 (p + 16);
  in->atime = cfs_get64 (p + 24);
  in->mtime = cfs_get64 (p + 32);
  in->ctime = cfs_get64 (p + 40);
  in->generation = cfs_get32 (p + 48);
  in->chunk = cfs_get32 (p + 52);
  in->offset = cfs_get64 (p + 56);
  in->head = cfs_get64 (p + 64);
  in->next = cfs_get64 (p + 72);
  in->mapped = cfs_get64 (p + 80);
  /* A special file maps nothing: the checker looks at the rest of its
   * mapping area itself (it must be zero).
   */
  if (cfs_mode_special (in->mode))
    in->rdev = cfs_get64 (p + 88);
  else
    memcpy (in->map, p + 88, CFS_MAP_AREA);
  if (in->flags & CFS_INODE_INLINE) {
    memcpy (in->symlink, p + 144, sizeof in->symlink);
    in->symlink[sizeof in->symlink - 1] = '\0';
  } else
    memcpy (in->xattr, p + 144, sizeof in->xattr);
  in->xattr_block = cfs_get32 (p + 244);
  if (in->chunk != chunk) {
    return cfs_fail (err, "inode: it is chunk %u's (a misdirected write)",
                     in->chunk);
  }
  return 0;
}

/* ---- other metadata blocks ---- */

void
cfs_meta_begin (void *blk, const char magic[4], uint16_t flags, uint32_t chunk,
                uint64_t generation)
{
  unsigned char *p = blk;

  memset (p, 0, CFS_HEADER_SIZE);
  tag (p, magic, flags);
  cfs_put32 (p + 8, chunk);
  cfs_put64 (p + 16, generation);
}

void
cfs_meta_seal (const uint8_t uuid[16], void *blk)
{
  unsigned char *p = blk;
  cfs_put32 (p + CFS_BLOCK - 4, cfs_meta_crc (uuid, p, CFS_BLOCK - 4));
}

int
cfs_meta_check (const void *blk, const uint8_t uuid[16], const char magic[4],
                uint32_t chunk, uint64_t max_generation, struct cfs_err *err)
{
  const unsigned char *p = blk;
  char what[48];

  snprintf (what, sizeof what, "chunk %u %.4s block", chunk, magic);
  if (check_tag (p, magic, what, err) == -1 ||
      check_crc (uuid, p, CFS_BLOCK - 4, what, err) == -1)
    return -1;
  if (cfs_get32 (p + 8) != chunk) {
    return cfs_fail (err, "%s: it is chunk %u's (a misdirected write)", what,
                     cfs_get32 (p + 8));
  }
  if (cfs_get64 (p + 16) > max_generation) {
    return cfs_fail (err, "%s: generation %llu is newer than its chunk's %llu",
                     what, (unsigned long long)cfs_get64 (p + 16),
                     (unsigned long long)max_generation);
  }
  return 0;
}

/* ---- directory entries ---- */

void
cfs_dirent_encode (unsigned char *e, const char *name, uint32_t chunk,
                   uint32_t ino, uint32_t gen, uint8_t type)
{
  size_t nlen = strlen (name);

  cfs_put32 (e, chunk);
  cfs_put32 (e + 4, ino);
  cfs_put32 (e + 8, gen);
  e[14] = (unsigned char)nlen;
  e[15] = type;
  memcpy (e + 16, name, nlen);
}
