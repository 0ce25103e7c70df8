/* futuredisk — nbdplugin: what the file stores (store-file.c and the
 * copy-on-write overlay, store-cow.c) share about extents.  In a file of
 * its own, so that the overlay uses it without calling into the file
 * store, whose factory builds the overlay.
 */
#include <stdbool.h>
#include <stdint.h>

#include "store.h"

int
store_join_extent (void *opaque, uint64_t offset, uint64_t length, bool hole)
{
  struct store_join *j = opaque;

  if (j->have && j->hole == hole && j->offset + j->length == offset) {
    j->length += length;
    return 0;
  }
  if (j->have && (j->rc = j->fn (j->opaque, j->offset, j->length, j->hole)))
    return j->rc;
  j->offset = offset;
  j->length = length;
  j->hole = hole;
  j->have = true;
  return 0;
}

int
store_join_end (struct store_join *j)
{
  if (j->rc == 0 && j->have)
    j->rc = j->fn (j->opaque, j->offset, j->length, j->hole);
  return j->rc < 0 ? -1 : 0;
}

static int
add_data (void *opaque, uint64_t offset, uint64_t length, bool hole)
{
  (void)offset;
  if (!hole)
    *(uint64_t *)opaque += length;
  return 0;
}

uint64_t
store_data_bytes (struct store *s)
{
  uint64_t bytes = 0;

  if (s->ops->extents (s, s->size, 0, add_data, &bytes) == -1)
    return 0;
  return bytes;
}
