/* chunkfs — the checker: the driver (pass 0: superblock, dirty map,
 * which chunks to check), raw block access, the problem reporter, and the
 * repairs that reach into chunks other than the one being checked
 * (check.h, FORMAT.md).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check-internal.h"
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

static bool
ask (const char *prompt)
{
  char line[64];

  fprintf (stderr, "%s<y>? ", prompt);
  fflush (stderr);
  if (fgets (line, sizeof line, stdin) == NULL)
    return false;
  return line[0] == 'y' || line[0] == 'Y' || line[0] == '\n';
}

bool
ck_fix (struct ck *k, uint32_t code, ...)
{
  const struct cfs_problem *p = cfs_problem (code);
  FILE *out = k->o->out;
  bool yes;
  va_list ap;

  if (p == NULL)
    abort (); /* a code missing from the table is a bug */
  k->res->problems++;
  if (out) {
    fprintf (out, "[%06X] ", p->code);
    va_start (ap, code);
    vfprintf (out, p->msg, ap);
    va_end (ap);
  }
  switch (k->o->mode) {
    case CFS_CHECK_YES:
      yes = true;
      break;
    case CFS_CHECK_PREEN:
      yes = p->flags & PR_PREEN_OK;
      break;
    case CFS_CHECK_ASK:
      if (out)
        fprintf (out, "  ");
      yes = ask (p->prompt);
      break;
    default:
      yes = false;
  }
  if (out) {
    if (k->o->mode == CFS_CHECK_PREEN && !yes)
      fprintf (out, "\n\tUNEXPECTED INCONSISTENCY; RUN fsck.chunkfs "
                    "MANUALLY (without -p).\n");
    else if (k->o->mode != CFS_CHECK_ASK)
      fprintf (out, "  %s? %s\n", p->prompt, yes ? "yes" : "no");
  }
  if (yes) {
    k->res->fixed++;
    k->res->exit |= CFS_EXIT_CORRECTED;
  } else {
    k->left = true;
    k->res->exit |= CFS_EXIT_UNCORRECTED;
  }
  return yes;
}

static const unsigned char *bc_get (const struct ck *k, uint64_t abs);

/* Blocks [abs, abs + n) into dst from the cache, or from the disk in one
 * request when any of them is not there: 0, or -1.
 */
static int
read_run (struct ck *k, uint64_t abs, uint32_t n, unsigned char *dst)
{
  struct cfs_err err;
  uint32_t i;

  for (i = 0; i < n; i++)
    if (ck_is_bad (k, abs + i))
      return -1; /* read block by block, the bad one not at all */
  for (i = 0; i < n; i++) {
    const unsigned char *p = bc_get (k, abs + i);
    if (p == NULL)
      return cfs_read (k->io, abs, n, dst, &err);
    memcpy (dst + (size_t)i * CFS_BLOCK, p, CFS_BLOCK);
  }
  return 0;
}

void
ck_prefetch (struct ck *k, uint64_t abs, uint32_t n)
{
  free (k->pf);
  k->pf = NULL;
  k->pf_n = 0;
  if (n == 0 || abs >= k->sb.device_blocks || n > k->sb.device_blocks - abs ||
      (k->pf = malloc ((size_t)n * CFS_BLOCK)) == NULL)
    return;
  if (read_run (k, abs, n, k->pf) == -1) {
    free (k->pf);
    k->pf = NULL;
    return;
  }
  k->pf_abs = abs;
  k->pf_n = n;
}

void
ck_prefetch_more (struct ck *k, uint32_t n)
{
  unsigned char *more;

  if (k->pf == NULL || n <= k->pf_n || k->pf_abs + n > k->sb.device_blocks ||
      (more = realloc (k->pf, (size_t)n * CFS_BLOCK)) == NULL)
    return;
  k->pf = more;
  if (read_run (k, k->pf_abs + k->pf_n, n - k->pf_n,
                k->pf + (size_t)k->pf_n * CFS_BLOCK) == 0)
    k->pf_n = n;
}

/* The first hash slot of block abs: hashed, since chunks are aligned to
 * powers of two and their blocks of one kind would crowd together.
 */
static size_t
bc_hash (uint64_t abs)
{
  return (size_t)((abs * 0x9E3779B97F4A7C15ull) >> 32) & (CK_BSLOTS - 1);
}

/* The hash slot of block abs: its own, or the empty one it would take
 * (past forgotten ones).
 */
static size_t
bc_slot (const struct ck *k, uint64_t abs)
{
  size_t s;

  for (s = bc_hash (abs); k->bc_key[s] && k->bc_key[s] != abs + 1;
       s = (s + 1) & (CK_BSLOTS - 1))
    ;
  return s;
}

/* Block abs in the cache, or NULL.  An all-zero block (most of a new
 * chunk's inode table) is kept as a mark, not a copy.
 */
static const unsigned char *
bc_get (const struct ck *k, uint64_t abs)
{
  static const unsigned char zero[CFS_BLOCK];
  size_t s;

  if (k->bc_key == NULL || k->bc_key[s = bc_slot (k, abs)] == 0)
    return NULL;
  if (k->bc_at[s] == CK_BZERO)
    return zero;
  return k->bc_slab[k->bc_at[s] / CK_BSLAB] +
         (size_t)(k->bc_at[s] % CK_BSLAB) * CFS_BLOCK;
}

static bool
bc_alloc (struct ck *k)
{
  if (k->bc_key == NULL) {
    k->bc_key = calloc (CK_BSLOTS, sizeof *k->bc_key);
    k->bc_at = calloc (CK_BSLOTS, sizeof *k->bc_at);
    if (k->bc_key == NULL || k->bc_at == NULL) {
      free (k->bc_key);
      free (k->bc_at);
      k->bc_key = NULL;
      k->bc_at = NULL;
      return false; /* no cache: every read goes to the disk */
    }
  }
  return true;
}

bool
ck_cache_full (const struct ck *k)
{
  return k->bc_n >= CK_BCACHE || k->bc_keys >= CK_BSLOTS / 2;
}

/* Block abs (buf) kept in the cache while it has room. */
static void
bc_keep (struct ck *k, uint64_t abs, const void *buf)
{
  bool zero = cfs_all_zero (buf, CFS_BLOCK);
  size_t s;

  if (!bc_alloc (k))
    return;
  s = bc_slot (k, abs);
  if (k->bc_key[s] == 0) {
    if (ck_cache_full (k))
      return; /* full: what is not kept is read again */
    k->bc_key[s] = abs + 1;
    k->bc_at[s] = CK_BZERO;
    k->bc_keys++;
  }
  if (k->bc_at[s] == CK_BZERO) {
    if (zero)
      return;
    if (k->bc_n == CK_BCACHE || (k->bc_n % CK_BSLAB == 0 &&
                                 (k->bc_slab[k->bc_n / CK_BSLAB] =
                                      malloc (CK_BSLAB * CFS_BLOCK)) == NULL)) {
      k->bc_key[s] = CK_BGONE; /* forgotten: never read as zeros */
      return;
    }
    k->bc_at[s] = k->bc_n++;
  }
  memcpy (k->bc_slab[k->bc_at[s] / CK_BSLAB] +
              (size_t)(k->bc_at[s] % CK_BSLAB) * CFS_BLOCK,
          buf, CFS_BLOCK);
}

void
ck_remember (struct ck *k, uint64_t abs)
{
  if (k->pf && abs >= k->pf_abs && abs - k->pf_abs < k->pf_n)
    ck_keep (k, abs, k->pf + (abs - k->pf_abs) * CFS_BLOCK);
}

/* The recent-blocks cache's slot of block abs. */
static size_t
rc_slot (uint64_t abs)
{
  return (size_t)((abs * 0x9E3779B97F4A7C15ull) >> 40) % CK_RCACHE;
}

/* Block abs read: kept for good while there is room, else in the
 * recent-blocks cache (where another block may push it out).
 */
void
ck_keep (struct ck *k, uint64_t abs, const void *buf)
{
  size_t s = rc_slot (abs);

  if (!ck_cache_full (k) && bc_alloc (k)) {
    bc_keep (k, abs, buf);
    return;
  }
  if (k->rc == NULL) {
    k->rc = malloc ((size_t)CK_RCACHE * CFS_BLOCK);
    k->rc_abs = calloc (CK_RCACHE, sizeof *k->rc_abs);
    if (k->rc == NULL || k->rc_abs == NULL) {
      free (k->rc);
      free (k->rc_abs);
      k->rc = NULL;
      k->rc_abs = NULL;
      return;
    }
  }
  memcpy (k->rc[s], buf, CFS_BLOCK);
  k->rc_abs[s] = abs + 1;
}

bool
ck_held (const struct ck *k, uint64_t abs)
{
  return (k->pf && abs >= k->pf_abs && abs - k->pf_abs < k->pf_n) ||
         bc_get (k, abs) != NULL ||
         (k->rc && k->rc_abs[rc_slot (abs)] == abs + 1);
}

bool
ck_is_bad (const struct ck *k, uint64_t abs)
{
  for (size_t i = 0; i < k->nbad; i++)
    if (k->bad[i].abs == abs)
      return true;
  return false;
}

static void
bad_add (struct ck *k, uint64_t abs, const char *why)
{
  if (k->nbad == k->abad) {
    size_t na = k->abad ? 2 * k->abad : 8;
    struct badblock *nb = realloc (k->bad, na * sizeof *nb);
    if (nb == NULL)
      return; /* not remembered: read again */
    k->bad = nb;
    k->abad = na;
  }
  k->bad[k->nbad].abs = abs;
  snprintf (k->bad[k->nbad++].why, sizeof k->bad[0].why, "%s", why);
}

int
ck_read (struct ck *k, uint64_t abs, void *buf)
{
  struct cfs_err err;
  const unsigned char *p;

  if (k->pf && abs >= k->pf_abs && abs - k->pf_abs < k->pf_n) {
    memcpy (buf, k->pf + (abs - k->pf_abs) * CFS_BLOCK, CFS_BLOCK);
    return 0;
  }
  if ((p = bc_get (k, abs)) != NULL) {
    memcpy (buf, p, CFS_BLOCK);
    return 0;
  }
  if (k->rc && k->rc_abs[rc_slot (abs)] == abs + 1) {
    memcpy (buf, k->rc[rc_slot (abs)], CFS_BLOCK);
    return 0;
  }

  if (abs >= k->sb.device_blocks) {
    snprintf (k->errmsg, sizeof k->errmsg, "block %llu past the end",
              (unsigned long long)abs);
    return -1;
  }
  for (size_t i = 0; i < k->nbad; i++)
    if (k->bad[i].abs == abs) {
      snprintf (k->errmsg, sizeof k->errmsg, "%s", k->bad[i].why);
      return -1;
    }
  if (cfs_read (k->io, abs, 1, buf, &err) == -1) {
    snprintf (k->errmsg, sizeof k->errmsg, "%s", err.msg);
    bad_add (k, abs, err.msg);
    return -1;
  }
  ck_keep (k, abs, buf);
  return 0;
}

int
ck_write (struct ck *k, uint64_t abs, const void *buf)
{
  struct cfs_err err;

  if (!k->write)
    return -1;
  if (k->pf && abs >= k->pf_abs && abs - k->pf_abs < k->pf_n)
    memcpy (k->pf + (abs - k->pf_abs) * CFS_BLOCK, buf, CFS_BLOCK);
  if (bc_get (k, abs) != NULL)
    bc_keep (k, abs, buf);
  if (k->rc && k->rc_abs[rc_slot (abs)] == abs + 1)
    memcpy (k->rc[rc_slot (abs)], buf, CFS_BLOCK);
  if (cfs_write (k->io, abs, 1, buf, false, &err) == -1) {
    if (k->o->out)
      fprintf (k->o->out, "%s: %s\n", k->o->name, err.msg);
    k->res->exit |= CFS_EXIT_ERROR;
    k->left = true;
    return -1;
  }
  /* Rewritten: readable again (a drive remaps a sector it writes). */
  for (size_t i = 0; i < k->nbad; i++)
    if (k->bad[i].abs == abs)
      k->bad[i--] = k->bad[--k->nbad];
  return 0;
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

static bool
map_bit (const struct ck *k, uint32_t c)
{
  uint32_t bit = c % CFS_BITS_PER_BITMAP;

  return k->map[c / CFS_BITS_PER_BITMAP][CFS_HEADER_SIZE + bit / 8] >> bit % 8 &
         1;
}

void
ck_map_set (struct ck *k, uint32_t c, bool on)
{
  unsigned char *m = k->map[c / CFS_BITS_PER_BITMAP];
  uint32_t bit = c % CFS_BITS_PER_BITMAP;
  unsigned char mask = (unsigned char)(1u << bit % 8);

  if (on == map_bit (k, c))
    return;
  if (on)
    m[CFS_HEADER_SIZE + bit / 8] |= mask;
  else
    m[CFS_HEADER_SIZE + bit / 8] &= (unsigned char)~mask;
  k->map_dirty[c / CFS_BITS_PER_BITMAP] = true;
}

static bool
imap_bit (const struct ck *k, uint32_t c)
{
  uint32_t bit = c % CFS_BITS_PER_BITMAP;

  return k->imap[c / CFS_BITS_PER_BITMAP][CFS_HEADER_SIZE + bit / 8] >>
             bit % 8 &
         1;
}

void
ck_in_use (struct ck *k, uint32_t c, bool queue)
{
  uint32_t j = c / CFS_BITS_PER_BITMAP, bit = c % CFS_BITS_PER_BITMAP;
  bool fix = true;

  if (c >= k->sb.chunks || imap_bit (k, c))
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
  if (!map_bit (k, c)) {
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

int
ck_has_backref (struct ck *k, uint32_t c, const struct backref *b)
{
  struct cfs_chunk_header h;
  unsigned char blk[CFS_BLOCK];
  struct cfs_err err;
  uint32_t i, j, n;

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
  for (j = 0; j < h.backref_blocks; j++) {
    if (ck_read (k, cfs_block (&k->sb, c, h.backref_block + j), blk) == -1 ||
        cfs_meta_check (blk, k->sb.uuid, CFS_MAGIC_BACKREF, c, h.generation,
                        &err) == -1) {
      /* Not read again for every entry naming this chunk. */
      k->hc[c % CK_HCACHE].br_bad = true;
      return -1;
    }
    n = cfs_get32 (blk + CFS_HEADER_SIZE);
    for (i = 0; i < n && i < CFS_BACKREFS_PER_BLOCK; i++) {
      struct backref r = cfs_br_decode (blk + CFS_HEADER_SIZE + 4 + 16 * i);
      if (!memcmp (&r, b, sizeof r))
        return 1;
    }
  }
  return 0;
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

/* ---- pass 0 and the driver ---- */

static int
read_super (struct ck *k)
{
  unsigned char blk[CFS_BLOCK];
  struct cfs_err err;
  int copy;

  if (cfs_super_find (k->io, &k->sb, &copy, &err) == -1) {
    if (k->o->out)
      fprintf (k->o->out,
               "%s: no chunkfs superblock (%s), and no chunk header holds a "
               "copy\n",
               k->o->name, err.msg);
    return -1;
  }
  if (copy >= 0 && ck_fix (k, PR_0_SUPER_BAD, err.msg, (unsigned)copy)) {
    cfs_super_encode (&k->sb, blk);
    ck_write (k, CFS_SUPER_BLOCK, blk);
  }
  return 0;
}

/* The dirty map and the initialised-chunks map after it, in one read
 * (per block if that fails, so one bad block costs only itself); a block
 * that does not check is reported and rebuilt.
 */
static void
read_maps (struct ck *k, bool map_ok[])
{
  uint32_t j, nmap = cfs_map_blocks (&k->sb);
  unsigned char *buf = malloc ((size_t)2 * nmap * CFS_BLOCK);
  struct cfs_err err;
  bool all = buf && cfs_read (k->io, CFS_MAP_BLOCK, 2 * nmap, buf, &err) == 0;

  for (j = 0; j < 2 * nmap; j++) {
    unsigned char *b = j < nmap ? k->map[j] : k->imap[j - nmap];
    bool ok;
    k->errmsg[0] = '\0';
    if (all)
      memcpy (b, buf + (size_t)j * CFS_BLOCK, CFS_BLOCK);
    ok = (all || ck_read (k, CFS_MAP_BLOCK + j, b) == 0) &&
         cfs_meta_check (b, k->sb.uuid,
                         j < nmap ? CFS_MAGIC_MAP : CFS_MAGIC_INITMAP,
                         CFS_NO_CHUNK, 0, &err) == 0;
    if (j < nmap)
      map_ok[j] = ok;
    else
      k->imap_ok[j - nmap] = ok;
    if (ok)
      continue;
    ck_fix (k, j < nmap ? PR_0_MAP_BAD : PR_0_INITMAP_BAD, j % nmap,
            k->errmsg[0] ? k->errmsg : err.msg);
    cfs_meta_begin (b, j < nmap ? CFS_MAGIC_MAP : CFS_MAGIC_INITMAP, 0,
                    CFS_NO_CHUNK, 0);
    memset (b + CFS_HEADER_SIZE, 0, CFS_BLOCK - CFS_HEADER_SIZE);
    if (j < nmap)
      k->map_dirty[j] = true;
    else
      k->imap_dirty[j - nmap] = true;
  }
  free (buf);
}

static void
choose_chunks (struct ck *k)
{
  uint32_t c;
  struct cfs_err err;
  bool map_ok[CFS_MAP_BLOCKS];

  read_maps (k, map_ok);
  for (c = 0; c < k->sb.chunks; c++) {
    struct cfs_chunk_header h;
    unsigned char blk[CFS_BLOCK];
    uint32_t j = c / CFS_BITS_PER_BITMAP;
    bool covered_bad = !map_ok[j];

    /* An initialised-chunks map block being rebuilt needs the header of
     * every chunk it covers, or -y would write bits missing.
     */
    if (!k->o->full && !covered_bad && k->imap_ok[j] && !map_bit (k, c))
      continue;
    /* Never initialised (the bit is durable before the chunk is): -f
     * has nothing to read there.  Chunk 0 (the root's) always is.
     */
    if (k->o->full && c > 0 && !covered_bad && !map_bit (k, c) &&
        k->imap_ok[j] && !imap_bit (k, c))
      continue;
    /* Every chunk in use is checked: its header is read with the rest
     * of its metadata then, in one request (ck_chunk).
     */
    if (k->o->full) {
      if (c > 0)
        ck_queue (k, c);
      continue;
    }
    /* A header that cannot be read is checked (pass 1 says so). */
    if (ck_read (k, cfs_block (&k->sb, c, 0), blk) == -1 ||
        cfs_header_decode (blk, k->sb.uuid, c, &h, &err) == -1) {
      ck_queue (k, c);
      continue;
    }
    if (h.state != CFS_UNINIT)
      ck_in_use (k, c, true);
    if (h.state == CFS_DIRTY || h.state == CFS_DAMAGED ||
        (k->o->full && h.state == CFS_CLEAN))
      ck_queue (k, c);
    else if (map_bit (k, c))
      ck_map_set (k, c, false); /* a bit left over a clean chunk */
  }
  /* Chunk 0 last: its root directory names inodes all over the disk,
   * which by then were read with their chunks and remembered, while
   * the root's blocks, named by every chunk's back-references, are
   * remembered from the first of them.
   */
  if (k->o->full)
    ck_queue (k, 0);
}

void
cfs_check (struct cfs_io *io, const struct cfs_check_opts *o,
           struct cfs_check_result *res)
{
  struct ck *k = calloc (1, sizeof *k);
  struct cfs_err err;
  uint32_t j;
  size_t queued_at_start;

  memset (res, 0, sizeof *res);
  if (k == NULL) {
    res->exit = CFS_EXIT_ERROR;
    return;
  }
  k->io = io;
  k->o = o;
  k->res = res;
  k->write = o->mode != CFS_CHECK_NO;
  k->pass = -1;
  k->sb.device_blocks = cfs_blocks (io); /* until the superblock says */
  ck_pass (k, 0);
  if (read_super (k) == -1) {
    res->exit |= CFS_EXIT_ERROR;
    goto out;
  }
  cfs_geometry (&k->sb, &k->g);
  res->chunks = k->sb.chunks;
  k->queued = calloc (k->sb.chunks, 1);
  if (k->queued == NULL) {
    res->exit |= CFS_EXIT_ERROR;
    goto out;
  }
  choose_chunks (k);
  if (o->full)
    ck_preload (k);
  queued_at_start = k->nwork;
  if (o->out)
    fprintf (o->out, "%s: %zu of %u chunk%s to check (%s)\n", o->name,
             queued_at_start, k->sb.chunks, k->sb.chunks == 1 ? "" : "s",
             o->full ? "all: -f" : "dirty or damaged");
  while (k->next < k->nwork) {
    uint32_t c = k->work[k->next++];
    if (o->max_work && res->checked >= o->max_work)
      break;
    k->queued[c] = (uint8_t)((k->queued[c] & 0x7f) + 1);
    res->checked += ck_chunk (k, c);
    if (o->progress_fd >= 0)
      dprintf (o->progress_fd, "%d %zu %zu %s\n", 5, k->next, k->nwork,
               o->name);
  }
  ck_pass (k, 0);
  for (j = 0; j < cfs_map_blocks (&k->sb); j++) {
    if (k->map_dirty[j] && k->write) {
      cfs_meta_seal (k->sb.uuid, k->map[j]);
      ck_write (k, CFS_MAP_BLOCK + j, k->map[j]);
    }
    if (k->imap_dirty[j] && k->write) {
      cfs_meta_seal (k->sb.uuid, k->imap[j]);
      ck_write (k, cfs_initmap_block (&k->sb) + j, k->imap[j]);
    }
  }
  if (k->write && cfs_flush (io, &err) == -1) {
    if (o->out)
      fprintf (o->out, "%s: %s\n", o->name, err.msg);
    res->exit |= CFS_EXIT_ERROR;
  }
out:
  ck_pass (k, -1);
  free (k->queued);
  free (k->work);
  free (k->pend);
  for (j = 0; j < CK_BCACHE / CK_BSLAB; j++)
    free (k->bc_slab[j]);
  free (k->bc_key);
  free (k->bc_at);
  free (k->rc);
  free (k->rc_abs);
  free (k->bad);
  ck_chunk_release (k);
  free (k->pf);
  free (k);
}
