/* futuredisk — faultmodels: per-sector counts (see counts.h).
 *
 * The counts are a step function of the sector: a sorted list of
 * changes, each "from this sector on, the count is c" (before the first,
 * 0), no change repeating the count before it.  The list is cut into
 * blocks of up to BLOCK changes, and an array of the blocks, in order,
 * with each one's first sector beside it (the binary search stays in
 * one array), leads to them: a B-tree of height two, whose top level
 * moves with memmove only when a block splits or goes (16 bytes per
 * block of 254 changes).
 */
#include <stdlib.h>
#include <string.h>

#include "faultmodels/counts.h"

#define BLOCK 254 /* changes per block: a block is 4 KiB */

struct change {
  uint64_t first; /* from this sector on... */
  uint64_t count; /* ...up to the next change, this count */
};

struct block {
  struct block *next_free; /* on the free list */
  uint32_t n;
  struct change v[BLOCK];
};

struct slot {
  uint64_t first; /* b->v[0].first */
  struct block *b;
};

struct fm_counts {
  struct slot *s; /* the blocks in sector order, none empty */
  size_t n, alloc;
  struct block *free; /* blocks kept for reuse */
  size_t nfree;
  size_t changes;
};

struct fm_counts *
fm_counts_new (void)
{
  return calloc (1, sizeof (struct fm_counts));
}

void
fm_counts_free (struct fm_counts *c)
{
  size_t i;

  if (c == NULL)
    return;
  for (i = 0; i < c->n; i++)
    free (c->s[i].b);
  while (c->free) {
    struct block *b = c->free;
    c->free = b->next_free;
    free (b);
  }
  free (c->s);
  free (c);
}

/* The block holding the last change at or before s; SIZE_MAX if s comes
 * before every change.
 */
static size_t
find_block (const struct fm_counts *c, uint64_t s)
{
  size_t lo = 0, hi = c->n;

  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (c->s[mid].first <= s)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo == 0 ? SIZE_MAX : lo - 1;
}

/* In b, whose first change is at or before s: the last change at or
 * before s.
 */
static uint32_t
find_in (const struct block *b, uint64_t s)
{
  uint32_t lo = 0, hi = b->n;

  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (b->v[mid].first <= s)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo - 1;
}

uint64_t
fm_counts_get (const struct fm_counts *c, uint64_t s, uint64_t *end)
{
  size_t i = find_block (c, s);
  const struct block *b;
  uint32_t j;

  if (i == SIZE_MAX) {
    if (end)
      *end = c->n ? c->s[0].first : UINT64_MAX;
    return 0;
  }
  b = c->s[i].b;
  j = find_in (b, s);
  if (end)
    *end = j + 1 < b->n   ? b->v[j + 1].first
           : i + 1 < c->n ? c->s[i + 1].first
                          : UINT64_MAX;
  return b->v[j].count;
}

/* Room for what one bump may need: two changes inserted, each of which
 * may split a block.  Taken before anything changes, so a bump is whole
 * or not at all.  Blocks come an eighth of those held at a time, and the
 * array of blocks has room for every block held: a workload that runs
 * again wanders a little above the blocks it needed the first time (a
 * B-tree's shape depends on its history), and that is slack, not an
 * allocation per request.
 */
static int
reserve (struct fm_counts *c)
{
  size_t held = c->n + c->nfree, more = held / 8 > 2 ? held / 8 : 2;

  if (c->nfree >= 2)
    return 0;
  if (held + more > c->alloc) {
    size_t na = 2 * c->alloc > held + more ? 2 * c->alloc : held + more;
    struct slot *ns = realloc (c->s, na * sizeof *ns);

    if (ns == NULL)
      return -1;
    c->s = ns;
    c->alloc = na;
  }
  while (more-- > 0) {
    struct block *b = malloc (sizeof *b);

    if (b == NULL)
      return c->nfree >= 2 ? 0 : -1;
    b->next_free = c->free;
    c->free = b;
    c->nfree++;
  }
  return 0;
}

static void
put_block (struct fm_counts *c, size_t i, struct block *b)
{
  memmove (&c->s[i + 1], &c->s[i], (c->n - i) * sizeof *c->s);
  c->s[i] = (struct slot){b->v[0].first, b};
  c->n++;
}

static void
drop_block (struct fm_counts *c, size_t i)
{
  struct block *b = c->s[i].b;

  memmove (&c->s[i], &c->s[i + 1], (c->n - i - 1) * sizeof *c->s);
  c->n--;
  b->next_free = c->free;
  c->free = b;
  c->nfree++;
}

/* A block from the free list (reserve saw to it), holding ch alone, as
 * block i.
 */
static void
alone (struct fm_counts *c, size_t i, struct change ch)
{
  struct block *b = c->free;

  c->free = b->next_free;
  c->nfree--;
  b->n = 1;
  b->v[0] = ch;
  put_block (c, i, b);
  c->changes++;
}

/* Insert ch as change j of block i.  Past the end of a full block it
 * goes to the front of the next, or alone into a new one, so that
 * changes appended in order (a disk read in order, block by block) fill
 * their blocks; elsewhere a full block splits in two.
 */
static void
insert (struct fm_counts *c, size_t i, uint32_t j, struct change ch)
{
  struct block *b;

  if (c->n == 0) {
    alone (c, 0, ch);
    return;
  }
  b = c->s[i].b;
  if (b->n == BLOCK && j == BLOCK) {
    if (i + 1 < c->n && c->s[i + 1].b->n < BLOCK)
      insert (c, i + 1, 0, ch);
    else
      alone (c, i + 1, ch);
    return;
  }
  if (b->n == BLOCK) {
    struct block *nb = c->free;

    c->free = nb->next_free;
    c->nfree--;
    nb->n = BLOCK / 2;
    memcpy (nb->v, &b->v[BLOCK / 2], (BLOCK / 2) * sizeof *b->v);
    b->n = BLOCK / 2;
    put_block (c, i + 1, nb);
    if (j > BLOCK / 2) {
      b = nb;
      j -= BLOCK / 2;
    }
  }
  memmove (&b->v[j + 1], &b->v[j], (b->n - j) * sizeof *b->v);
  b->v[j] = ch;
  b->n++;
  c->changes++;
  if (j == 0)
    c->s[i].first = ch.first;
}

/* A change at sector s, with the count s has now (a no-op if s has one). */
static void
change_at (struct fm_counts *c, uint64_t s)
{
  size_t i = find_block (c, s);
  uint32_t j;

  if (i == SIZE_MAX) {
    insert (c, 0, 0, (struct change){s, 0});
    return;
  }
  j = find_in (c->s[i].b, s);
  if (c->s[i].b->v[j].first != s)
    insert (c, i, j + 1, (struct change){s, c->s[i].b->v[j].count});
}

/* Blocks i and i+1 as one, if they fit in one.  At once, not at some
 * lower mark: a change that comes and goes in a full block (the moving
 * end of a sequential stream) then splits it and joins it again, and
 * the blocks a workload needs are the same each time it runs.
 */
static void
merge (struct fm_counts *c, size_t i)
{
  struct block *a, *b;

  if (i + 1 >= c->n || c->s[i].b->n + c->s[i + 1].b->n > BLOCK)
    return;
  a = c->s[i].b;
  b = c->s[i + 1].b;
  memcpy (&a->v[a->n], b->v, b->n * sizeof *b->v);
  a->n += b->n;
  drop_block (c, i + 1);
}

/* The change at sector s goes if it repeats the count before it. */
static void
drop_if_same (struct fm_counts *c, uint64_t s)
{
  size_t i = find_block (c, s);
  struct block *b = c->s[i].b;
  uint32_t j = find_in (b, s);
  uint64_t before = j > 0   ? b->v[j - 1].count
                    : i > 0 ? c->s[i - 1].b->v[c->s[i - 1].b->n - 1].count
                            : 0;

  if (b->v[j].count != before)
    return;
  memmove (&b->v[j], &b->v[j + 1], (b->n - j - 1) * sizeof *b->v);
  b->n--;
  c->changes--;
  if (b->n == 0) {
    drop_block (c, i);
    return;
  }
  c->s[i].first = b->v[0].first;
  merge (c, i);
  if (i > 0)
    merge (c, i - 1);
}

int
fm_counts_bump (struct fm_counts *c, uint64_t first, uint64_t n)
{
  uint64_t end;
  size_t i;
  uint32_t j;

  if (n == 0)
    return 0;
  if (n > UINT64_MAX - first)
    n = UINT64_MAX - first;
  end = first + n;
  if (reserve (c) == -1)
    return -1;
  /* Changes at both ends, so that everything between moves up. */
  change_at (c, end);
  change_at (c, first);
  i = find_block (c, first);
  j = find_in (c->s[i].b, first);
  for (;;) {
    struct block *b = c->s[i].b;

    for (; j < b->n && b->v[j].first < end; j++)
      b->v[j].count++;
    if (j < b->n || ++i == c->n)
      break;
    j = 0;
  }
  /* Inside, the steps stay steps; at the ends they may have gone. */
  drop_if_same (c, end);
  drop_if_same (c, first);
  return 0;
}

size_t
fm_counts_changes (const struct fm_counts *c)
{
  return c->changes;
}

size_t
fm_counts_bytes (const struct fm_counts *c)
{
  return sizeof *c + c->alloc * sizeof *c->s +
         (c->n + c->nfree) * sizeof (struct block);
}
