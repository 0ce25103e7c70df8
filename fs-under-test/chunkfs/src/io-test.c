/* chunkfs — the fault-injecting I/O manager for unit tests (io.h): fail
 * the Nth read or write, flip a bit of a block on every read, fail every
 * read of a block until it is written (as a drive's unreadable sector),
 * and keep
 * writes in a volatile cache that a power cut drops.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io-internal.h"

/* One cached (unflushed) block. */
struct pending {
  uint64_t block;
  unsigned char data[CFS_BLOCK];
};

struct test_io {
  struct cfs_io io;
  struct cfs_io *inner;
  struct cfs_test_faults f;
  uint64_t reads, writes, bad_reads;
  struct pending *cache;
  size_t ncache, cap;
};

static struct pending *
cached (struct test_io *t, uint64_t block)
{
  size_t i;

  for (i = t->ncache; i-- > 0;)
    if (t->cache[i].block == block)
      return &t->cache[i];
  return NULL;
}

static int
test_read (struct cfs_io *io, uint64_t block, uint32_t count, void *buf,
           struct cfs_err *err)
{
  struct test_io *t = (struct test_io *)io;
  uint32_t i;

  if (++t->reads == t->f.fail_read) {
    cfs_errno (err, EIO, "read block %llu (injected)",
               (unsigned long long)block);
    return -1;
  }
  if (t->f.bad && t->f.bad_block >= block && t->f.bad_block - block < count) {
    t->bad_reads++;
    cfs_errno (err, EIO, "read block %llu (unreadable)",
               (unsigned long long)t->f.bad_block);
    return -1;
  }
  if (t->inner->m->read (t->inner, block, count, buf, err) == -1)
    return -1;
  for (i = 0; i < count; i++) {
    unsigned char *b = (unsigned char *)buf + (size_t)i * CFS_BLOCK;
    struct pending *p = cached (t, block + i);
    if (p)
      memcpy (b, p->data, CFS_BLOCK);
    if (t->f.flip && block + i == t->f.flip_block)
      b[(t->f.flip_bit / 8) % CFS_BLOCK] ^= 1 << (t->f.flip_bit % 8);
  }
  return 0;
}

static int
test_flush (struct cfs_io *io, struct cfs_err *err)
{
  struct test_io *t = (struct test_io *)io;
  size_t i;

  for (i = 0; i < t->ncache; i++)
    if (t->inner->m->write (t->inner, t->cache[i].block, 1, t->cache[i].data,
                            false, err) == -1)
      return -1;
  t->ncache = 0;
  return t->inner->m->flush (t->inner, err);
}

static int
test_write (struct cfs_io *io, uint64_t block, uint32_t count, const void *buf,
            bool fua, struct cfs_err *err)
{
  struct test_io *t = (struct test_io *)io;
  uint32_t i;

  if (++t->writes == t->f.fail_write) {
    cfs_errno (err, EIO, "write block %llu (injected)",
               (unsigned long long)block);
    return -1;
  }
  if (t->f.bad_block >= block && t->f.bad_block - block < count)
    t->f.bad = false; /* rewritten: readable again */
  if (!t->f.volatile_writes || fua) {
    /* Through, and no cached copy may later overwrite it. */
    for (i = 0; i < count; i++) {
      struct pending *p = cached (t, block + i);
      if (p)
        memcpy (p->data, (const char *)buf + (size_t)i * CFS_BLOCK, CFS_BLOCK);
    }
    return t->inner->m->write (t->inner, block, count, buf, fua, err);
  }
  for (i = 0; i < count; i++) {
    struct pending *p = cached (t, block + i);
    if (p == NULL) {
      if (t->ncache == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        struct pending *nc = realloc (t->cache, cap * sizeof *nc);
        if (nc == NULL) {
          cfs_errno (err, ENOMEM, "write block %llu",
                     (unsigned long long)(block + i));
          return -1;
        }
        t->cache = nc, t->cap = cap;
      }
      p = &t->cache[t->ncache++];
      p->block = block + i;
    }
    memcpy (p->data, (const char *)buf + (size_t)i * CFS_BLOCK, CFS_BLOCK);
  }
  return 0;
}

static int
test_zero (struct cfs_io *io, uint64_t block, uint32_t count,
           struct cfs_err *err)
{
  static const unsigned char zeros[CFS_BLOCK];
  uint32_t i;

  /* As writes, so the faults and the cache see them. */
  for (i = 0; i < count; i++)
    if (test_write (io, block + i, 1, zeros, false, err) == -1)
      return -1;
  return 0;
}

static uint64_t
test_blocks (struct cfs_io *io)
{
  struct test_io *t = (struct test_io *)io;
  return t->inner->m->blocks (t->inner);
}

static int
test_close (struct cfs_io *io, struct cfs_err *err)
{
  struct test_io *t = (struct test_io *)io;
  int r = t->inner->m->close (t->inner, err);

  free (t->cache);
  free (t);
  return r;
}

static struct cfs_io *
test_open (const char *where, bool writable, struct cfs_err *err)
{
  cfs_fail (err, "%s: the test manager wraps an open channel (cfs_test_io)",
            where);
  (void)writable;
  return NULL;
}

static const struct cfs_io_manager test_io_manager = {
    .name = "test",
    .open = test_open,
    .read = test_read,
    .write = test_write,
    .flush = test_flush,
    .zero = test_zero,
    .blocks = test_blocks,
    .close = test_close,
};

struct cfs_io *
cfs_test_io (struct cfs_io *inner, const struct cfs_test_faults *f)
{
  struct test_io *t = calloc (1, sizeof *t);

  if (t == NULL)
    return NULL;
  t->io.m = &test_io_manager;
  t->inner = inner;
  if (f)
    t->f = *f;
  return &t->io;
}

void
cfs_test_io_set (struct cfs_io *io, const struct cfs_test_faults *f)
{
  ((struct test_io *)io)->f = *f;
}

void
cfs_test_io_counts (struct cfs_io *io, uint64_t *reads, uint64_t *writes)
{
  struct test_io *t = (struct test_io *)io;
  *reads = t->reads;
  *writes = t->writes;
}

uint64_t
cfs_test_io_bad_reads (struct cfs_io *io)
{
  return ((struct test_io *)io)->bad_reads;
}

void
cfs_test_io_drop_unflushed (struct cfs_io *io)
{
  ((struct test_io *)io)->ncache = 0;
}
