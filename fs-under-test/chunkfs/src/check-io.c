/* chunkfs — the checker's block access, below everything else of it as
 * e2fsck's io_channel is (check-internal.h): reads served from a
 * prefetched run, from the blocks kept (every one up to CK_BCACHE, then
 * the recent ones), or from the device through struct cfs_io; blocks
 * that could not be read, remembered; ck_write, the checker's only write,
 * keeping them all up to date.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check-internal.h"

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
  k->writes++; /* what was read before may be stale */
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
ck_io_release (struct ck *k)
{
  uint32_t j;

  for (j = 0; j < CK_BCACHE / CK_BSLAB; j++)
    free (k->bc_slab[j]);
  free (k->bc_key);
  free (k->bc_at);
  free (k->rc);
  free (k->rc_abs);
  free (k->bad);
  free (k->pf);
}
