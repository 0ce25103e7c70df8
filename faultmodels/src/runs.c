/* futuredisk — faultmodels: sorted runs of sectors (see runs.h). */
#include <stdlib.h>
#include <string.h>

#include "runs.h"

size_t
fm_runs_find (const struct fm_runs *r, uint64_t s)
{
  size_t lo = 0, hi = r->n;

  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (r->v[mid].first + r->v[mid].n <= s)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static int
reserve (struct fm_runs *r, size_t more)
{
  if (r->n + more > r->alloc) {
    size_t na = r->alloc ? 2 * r->alloc : 64;
    struct fm_run *nv;

    while (na < r->n + more)
      na *= 2;
    nv = realloc (r->v, na * sizeof *nv);
    if (nv == NULL)
      return -1;
    r->v = nv;
    r->alloc = na;
  }
  return 0;
}

int
fm_runs_remove (struct fm_runs *r, uint64_t first, uint64_t n)
{
  uint64_t end = first + n;
  size_t i;

  if (reserve (r, 1) == -1) /* a split needs one more run */
    return -1;
  i = fm_runs_find (r, first);
  while (i < r->n && r->v[i].first < end) {
    struct fm_run *e = &r->v[i];
    uint64_t e_end = e->first + e->n;

    if (e->first < first && e_end > end) { /* split around the range */
      memmove (e + 2, e + 1, (r->n - i - 1) * sizeof *e);
      e[1] = (struct fm_run){end, e_end - end, e->tag};
      e->n = first - e->first;
      r->n++;
      r->total -= n;
      return 0;
    }
    if (e->first < first) { /* keep the head */
      r->total -= e_end - first;
      e->n = first - e->first;
      i++;
    } else if (e_end > end) { /* keep the tail */
      r->total -= end - e->first;
      e->n = e_end - end;
      e->first = end;
      return 0;
    } else { /* inside: drop */
      r->total -= e->n;
      memmove (e, e + 1, (r->n - i - 1) * sizeof *e);
      r->n--;
    }
  }
  return 0;
}

int
fm_runs_add (struct fm_runs *r, uint64_t first, uint64_t n, int tag)
{
  size_t i;

  if (n == 0)
    return 0;
  if (fm_runs_remove (r, first, n) == -1 || reserve (r, 1) == -1)
    return -1;
  /* Nothing overlaps [first, first+n) now; i is the first run after it. */
  i = fm_runs_find (r, first);
  r->total += n;
  if (i > 0 && r->v[i - 1].tag == tag &&
      r->v[i - 1].first + r->v[i - 1].n == first) {
    r->v[i - 1].n += n;
    if (i < r->n && r->v[i].tag == tag && r->v[i].first == first + n) {
      r->v[i - 1].n += r->v[i].n;
      memmove (&r->v[i], &r->v[i + 1], (r->n - i - 1) * sizeof *r->v);
      r->n--;
    }
    return 0;
  }
  if (i < r->n && r->v[i].tag == tag && r->v[i].first == first + n) {
    r->v[i].first = first;
    r->v[i].n += n;
    return 0;
  }
  memmove (&r->v[i + 1], &r->v[i], (r->n - i) * sizeof *r->v);
  r->v[i] = (struct fm_run){first, n, tag};
  r->n++;
  return 0;
}

void
fm_runs_empty (struct fm_runs *r)
{
  r->n = 0;
  r->total = 0;
}

void
fm_runs_free (struct fm_runs *r)
{
  free (r->v);
  r->v = NULL;
  r->n = r->alloc = 0;
  r->total = 0;
}

void
fm_runs_add_or_abort (struct fm_runs *r, uint64_t first, uint64_t n, int tag)
{
  if (fm_runs_add (r, first, n, tag) == -1)
    abort ();
}

void
fm_runs_remove_or_abort (struct fm_runs *r, uint64_t first, uint64_t n)
{
  if (fm_runs_remove (r, first, n) == -1)
    abort ();
}
