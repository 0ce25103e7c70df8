/* chunkfs — extent lists in memory (fs-internal.h): the sorted,
 * non-overlapping extents of one inode's map, as the mount changes them
 * and the checker reads them.  Pure: no I/O.
 */
#include <stdlib.h>
#include <string.h>

#include "fs-internal.h"

static uint64_t
ext_end (const struct cfs_extent *e)
{
  return (uint64_t)e->lblk + e->len;
}

int
cfs_el_reserve (struct cfs_extlist *l, uint32_t more)
{
  uint32_t na;
  struct cfs_extent *nv;

  if (l->n + more <= l->a)
    return 0;
  na = l->a ? l->a : 8;
  while (na < l->n + more)
    na *= 2;
  if ((nv = realloc (l->v, na * sizeof *nv)) == NULL)
    return -1;
  l->v = nv;
  l->a = na;
  return 0;
}

void
cfs_el_free (struct cfs_extlist *l)
{
  free (l->v);
  *l = (struct cfs_extlist){0};
}

uint32_t
cfs_el_search (const struct cfs_extlist *l, uint64_t lblk)
{
  uint32_t lo = 0, hi = l->n;

  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (ext_end (&l->v[mid]) <= lblk)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static void
el_remove_at (struct cfs_extlist *l, uint32_t k)
{
  memmove (&l->v[k], &l->v[k + 1], (l->n - k - 1) * sizeof l->v[0]);
  l->n--;
}

static void
el_insert_at (struct cfs_extlist *l, uint32_t k, const struct cfs_extent *e)
{
  memmove (&l->v[k + 1], &l->v[k], (l->n - k) * sizeof l->v[0]);
  l->v[k] = *e;
  l->n++;
}

int
cfs_el_punch (struct cfs_extlist *l, uint64_t lblk, uint64_t len, cfs_el_fn fn,
              void *opaque)
{
  uint64_t end = lblk + len;
  uint32_t k;

  if (cfs_el_reserve (l, 1) == -1)
    return -1;
  for (k = cfs_el_search (l, lblk); k < l->n && l->v[k].lblk < end;) {
    struct cfs_extent *e = &l->v[k];
    uint64_t from = lblk > e->lblk ? lblk : e->lblk;
    uint64_t to = end < ext_end (e) ? end : ext_end (e);
    uint32_t cut0 = (uint32_t)(from - e->lblk), cutn = (uint32_t)(to - from);

    if (fn)
      fn (opaque, e->start + cut0, cutn, e->unwritten);
    if (cut0 == 0 && cutn == e->len) {
      el_remove_at (l, k);
      continue;
    }
    if (cut0 == 0) { /* the front goes */
      e->lblk += cutn;
      e->start += cutn;
      e->len -= cutn;
    } else if (cut0 + cutn == e->len) /* the back goes */
      e->len = cut0;
    else { /* the middle goes: two extents */
      struct cfs_extent tail = *e;
      tail.lblk = (uint32_t)to;
      tail.start = e->start + cut0 + cutn;
      tail.len = e->len - cut0 - cutn;
      e->len = cut0;
      el_insert_at (l, k + 1, &tail);
      return 0;
    }
    k++;
  }
  return 0;
}

static bool
joins (const struct cfs_extent *a, const struct cfs_extent *b)
{
  return ext_end (a) == b->lblk && a->start + a->len == b->start &&
         a->unwritten == b->unwritten &&
         (uint64_t)a->len + b->len <= CFS_EXT_MAX_LEN;
}

int
cfs_el_insert (struct cfs_extlist *l, const struct cfs_extent *e)
{
  uint32_t k = cfs_el_search (l, e->lblk);

  if (cfs_el_reserve (l, 1) == -1)
    return -1;
  el_insert_at (l, k, e);
  if (k + 1 < l->n && joins (&l->v[k], &l->v[k + 1])) {
    l->v[k].len += l->v[k + 1].len;
    el_remove_at (l, k + 1);
  }
  if (k > 0 && joins (&l->v[k - 1], &l->v[k])) {
    l->v[k - 1].len += l->v[k].len;
    el_remove_at (l, k);
  }
  return 0;
}
