/* chunkfs — the checker: does another chunk's back-reference table
 * (FORMAT.md) hold a given back-reference?
 *
 * Pass 2 asks once for every directory entry that names an inode in
 * another chunk, and a chunk that many names point into has a table of
 * many blocks.  Scanned from its first block for every entry, each block
 * copied and its checksum verified again, the tables took most of a full
 * check's CPU on a disk of many files.  Each table is read once instead,
 * only as far as the questions need, into a hash set; the answers are
 * the scan's: a back-reference in a block before the first bad one is
 * there, one not before it is unknown.  A table is read again after the
 * checker writes anything, or when its chunk's header changes.  The set
 * serves pass 2's duplicate check of the chunk's own table too.
 */
#include <stdlib.h>
#include <string.h>

#include "check-internal.h"

/* A set of back-references: open addressing over an array. */
struct ck_brset {
  struct backref *v;
  uint32_t n, cap;
  uint32_t *slot; /* index in v + 1, 0 for empty */
  uint32_t nslots;
};

/* The blocks of one chunk's table read so far, and what they hold. */
struct brtab {
  /* the header the table was read under, and the writes before it */
  uint64_t generation, writes;
  uint32_t block, blocks;
  uint32_t read; /* blocks read into the set */
  bool bad;      /* block `read` could not be read or did not check */
  struct ck_brset set;
};

static uint32_t
br_hash (const struct backref *b)
{
  uint32_t h = b->ino * 0x9e3779b1u ^ b->src_chunk * 0x85ebca77u ^
               b->src_dir * 0xc2b2ae3du ^ b->hash * 0x27d4eb2fu;

  h ^= h >> 16;
  h *= 0x7feb352du;
  h ^= h >> 15;
  return h;
}

/* The slot holding b, or the empty one where it would go. */
static uint32_t *
find_slot (const struct ck_brset *t, const struct backref *b)
{
  uint32_t i = br_hash (b) & (t->nslots - 1);

  while (t->slot[i] && memcmp (&t->v[t->slot[i] - 1], b, sizeof *b))
    i = (i + 1) & (t->nslots - 1);
  return &t->slot[i];
}

bool
ck_brset_has (const struct ck_brset *t, const struct backref *b)
{
  return t->n && *find_slot (t, b) != 0;
}

/* Room for more: the set at most half full.  0, or -1 out of memory. */
static int
grow (struct ck_brset *t)
{
  uint32_t i, ns;
  uint32_t *slot;

  if (t->n == t->cap) {
    uint32_t nc = t->cap ? 2 * t->cap : 256;
    struct backref *nv = realloc (t->v, nc * sizeof *nv);
    if (nv == NULL)
      return -1;
    t->v = nv;
    t->cap = nc;
  }
  if (2 * (t->n + 1) <= t->nslots)
    return 0;
  ns = t->nslots ? 2 * t->nslots : 512;
  slot = calloc (ns, sizeof *slot);
  if (slot == NULL)
    return -1;
  free (t->slot);
  t->slot = slot;
  t->nslots = ns;
  for (i = 0; i < t->n; i++)
    *find_slot (t, &t->v[i]) = i + 1;
  return 0;
}

int
ck_brset_add (struct ck_brset *t, const struct backref *b)
{
  uint32_t *s;

  if (grow (t) == -1)
    return -1;
  s = find_slot (t, b);
  if (*s)
    return 0;
  t->v[t->n] = *b;
  *s = ++t->n;
  return 1;
}

static void
brset_clear (struct ck_brset *t)
{
  t->n = 0;
  if (t->slot)
    memset (t->slot, 0, t->nslots * sizeof *t->slot);
}

static void
brset_release (struct ck_brset *t)
{
  free (t->v);
  free (t->slot);
}

struct ck_brset *
ck_brset_new (void)
{
  return calloc (1, sizeof (struct ck_brset));
}

void
ck_brset_free (struct ck_brset *t)
{
  if (t) {
    brset_release (t);
    free (t);
  }
}

/* Chunk c's table, emptied if it was read under another header or before
 * a write; NULL out of memory.
 */
static struct brtab *
table_of (struct ck *k, uint32_t c, const struct cfs_chunk_header *h)
{
  struct brtab *t;

  if (k->brt == NULL) {
    k->brt = calloc (k->sb.chunks, sizeof *k->brt);
    if (k->brt == NULL)
      return NULL;
  }
  t = k->brt[c];
  if (t == NULL) {
    t = k->brt[c] = calloc (1, sizeof *t);
    if (t == NULL)
      return NULL;
  } else if (t->generation == h->generation && t->writes == k->writes &&
             t->block == h->backref_block && t->blocks == h->backref_blocks)
    return t;
  t->generation = h->generation;
  t->writes = k->writes;
  t->block = h->backref_block;
  t->blocks = h->backref_blocks;
  t->read = 0;
  t->bad = false;
  brset_clear (&t->set);
  return t;
}

/* The table's next block into its set: 1 if b is in it, 0 if not, -1 if
 * the block is bad (or memory ran out).
 */
static int
read_next (struct ck *k, uint32_t c, const struct cfs_chunk_header *h,
           struct brtab *t, const struct backref *b)
{
  unsigned char blk[CFS_BLOCK];
  struct cfs_err err;
  uint32_t i, n;
  int found = 0;

  if (ck_read (k, cfs_block (&k->sb, c, h->backref_block + t->read), blk) ==
          -1 ||
      cfs_meta_check (blk, k->sb.uuid, CFS_MAGIC_BACKREF, c, h->generation,
                      &err) == -1) {
    t->bad = true;
    return -1;
  }
  n = cfs_get32 (blk + CFS_HEADER_SIZE);
  for (i = 0; i < n && i < CFS_BACKREFS_PER_BLOCK; i++) {
    struct backref r = cfs_br_decode (blk + CFS_HEADER_SIZE + 4 + 16 * i);
    if (ck_brset_add (&t->set, &r) == -1)
      return -1; /* t->read not advanced: the block is read again */
    found |= !memcmp (&r, b, sizeof r);
  }
  t->read++;
  return found;
}

int
ck_has_backref (struct ck *k, uint32_t c, const struct backref *b)
{
  struct cfs_chunk_header h;
  struct brtab *t;
  uint32_t i;
  int r = 0;

  for (i = 0; i < k->npend; i++)
    if (k->pend[i].chunk == c && !memcmp (&k->pend[i].br, b, sizeof *b))
      return 1;
  if (k->ino && c == k->c) {
    for (i = 0; i < k->nbr; i++)
      if (!memcmp (&k->br[i], b, sizeof *b))
        return 1;
    return 0;
  }
  if (ck_header (k, c, &h) == -1 || k->hc[c % CK_HCACHE].br_bad)
    return -1;
  if (h.backref_block == 0)
    return 0;
  if (h.backref_block < k->g.first_data ||
      (uint64_t)h.backref_block + h.backref_blocks > k->g.chunk_blocks)
    return -1;
  t = table_of (k, c, &h);
  if (t == NULL)
    return -1;
  if (ck_brset_has (&t->set, b))
    return 1;
  while (r == 0 && !t->bad && t->read < h.backref_blocks)
    r = read_next (k, c, &h, t, b);
  if (t->bad) {
    /* Not read again for every entry naming this chunk. */
    k->hc[c % CK_HCACHE].br_bad = true;
    return -1;
  }
  return r;
}

void
ck_backref_release (struct ck *k)
{
  uint32_t c;

  if (k->brt == NULL)
    return;
  for (c = 0; c < k->sb.chunks; c++)
    if (k->brt[c]) {
      brset_release (&k->brt[c]->set);
      free (k->brt[c]);
    }
  free (k->brt);
  k->brt = NULL;
}
