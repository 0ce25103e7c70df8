/* futuredisk — common: growing an array by one element.
 *
 * Reports, comparisons and parsers collect rows whose number they learn
 * only at the end; this is the one way they grow their arrays.
 */
#ifndef FUTUREDISK_APPEND_H
#define FUTUREDISK_APPEND_H

#include <stdlib.h>
#include <string.h>

/* vp points at an array pointer (T **) holding *n elements of `size`
 * bytes.  Returns the new last element, zeroed, and counts it in *n; NULL
 * (array and count unchanged) when out of memory.
 */
static inline void *
fd_append (void *vp, size_t *n, size_t size)
{
  void **v = (void **)vp;
  char *nv = (char *)realloc (*v, (*n + 1) * size);

  if (nv == NULL)
    return NULL;
  *v = nv;
  memset (nv + *n * size, 0, size);
  return nv + (*n)++ * size;
}

#endif
