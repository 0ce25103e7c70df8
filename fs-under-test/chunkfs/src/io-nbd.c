/* chunkfs — the nbd I/O manager: an NBD export through libnbd, so the
 * tools work on an emulated disk without privileges or a kernel module.
 *
 * Synchronous until cfs_write_behind: then one I/O thread owns the
 * libnbd handle and serves a FIFO of requests.  A write is copied into
 * the queue and returns at once (up to a bound of queued bytes), so the
 * caller's next request overlaps the server's work on this one, and
 * queued writes over distinct blocks are sent several at a time, for
 * the server's threads to share.  A read, a zero, a flush, a FUA write
 * and a write over blocks still in flight wait until every write before
 * them is answered: a read sees every earlier write and a flush covers
 * every earlier write, which is all the order chunkfs's crash safety
 * rests on (FORMAT.md, "Clean and dirty"; unflushed writes are unordered
 * on any disk with a volatile cache).
 *
 * A queued write that fails can no longer fail its caller; as a kernel
 * reports a write-back error at fsync, it is remembered and returned by
 * the next flush, FUA write, zero and write, and nothing still queued
 * once it is known is sent.
 */
#include <errno.h>
#include <libnbd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io-internal.h"

enum nbd_op {
  OP_READ,
  OP_WRITE,
  OP_ZERO,
  OP_FLUSH,
  OP_STOP
};

struct nbd_req {
  struct nbd_req *next;
  enum nbd_op op;
  uint64_t block;
  uint32_t count;
  bool fua;
  bool queued; /* a write nobody waits for: the thread frees it */
  bool done;
  int rc;
  void *buf; /* a queued write's copy follows the request */
  struct nbd_io *n;
  struct cfs_err err;
};

/* Queued writes sent without waiting, at most this many at a time: the
 * server works on them in parallel (nbdkit's threads), as it does for a
 * kernel's queue of requests.
 */
#define IN_FLIGHT 8

/* A queued write of up to 1 MiB (the FUSE mount's largest) takes a slot
 * of this size, reused: a fresh allocation that large is fresh pages
 * from the kernel each time, faulted in and zeroed, which costs more
 * than the copy.
 */
#define SLOT (sizeof (struct nbd_req) + (1u << 20))

struct nbd_io {
  struct cfs_io io;
  struct nbd_handle *nbd;
  uint64_t blocks;
  bool fua; /* the server takes FUA */
  /* Write-behind (behind_max > 0): all below under lock. */
  size_t behind_max; /* queued write bytes before a writer waits */
  size_t behind;     /* queued write bytes now */
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t work; /* the thread: something queued */
  pthread_cond_t done; /* callers: a request done, or room made */
  struct nbd_req *head, **tail;
  bool failed; /* a queued write failed: failure says what */
  struct cfs_err failure;
  struct nbd_req *spare; /* freed write slots of SLOT bytes, to reuse */
  unsigned inflight;     /* queued writes sent, not yet answered: */
  struct nbd_req *sent[IN_FLIGHT];
  /* Read-ahead, the I/O thread's alone: the blocks after a sequential
   * read, fetched while the caller uses it.
   */
  uint64_t seq_end;  /* where the last large read ended */
  uint64_t ra_block; /* next to fetch (ra_count > 0) or fetched */
  uint32_t ra_count; /* blocks to fetch, or held in ra_buf */
  bool ra_held;      /* ra_buf holds them */
  unsigned char *ra_buf;
};

/* A read this large that starts where the last ended is sequential:
 * the next as many blocks (up to RA_MAX) are fetched after it.
 */
#define RA_MIN (64u * 1024 / CFS_BLOCK)
#define RA_MAX (1024u * 1024 / CFS_BLOCK)

static void
nbd_fail (struct cfs_err *err, const char *what, unsigned long long block)
{
  cfs_fail (err, "%s block %llu: %s", what, block,
            nbd_get_error () ? nbd_get_error () : "unknown error");
}

static struct cfs_io *
nbd_open (const char *where, bool writable, struct cfs_err *err)
{
  struct nbd_io *n = calloc (1, sizeof *n);
  int64_t size;

  if (n == NULL) {
    cfs_errno (err, ENOMEM, "%s", where);
    return NULL;
  }
  n->io.m = &cfs_nbd_io;
  if ((n->nbd = nbd_create ()) == NULL ||
      nbd_connect_uri (n->nbd, where) == -1) {
    cfs_fail (err, "%s: %s", where, nbd_get_error ());
    nbd_close (n->nbd);
    free (n);
    return NULL;
  }
  if ((size = nbd_get_size (n->nbd)) < 0 ||
      (writable && nbd_is_read_only (n->nbd) == 1)) {
    cfs_fail (err, "%s: %s", where,
              size < 0 ? nbd_get_error () : "the export is read-only");
    nbd_close (n->nbd);
    free (n);
    return NULL;
  }
  n->blocks = (uint64_t)size / CFS_BLOCK;
  n->fua = nbd_can_fua (n->nbd) == 1;
  return &n->io;
}

/* The libnbd calls themselves, in the calling thread (libnbd's error is
 * the thread's own): 0, or -1 with err.
 */
static int
do_read (struct nbd_io *n, uint64_t block, uint32_t count, void *buf,
         struct cfs_err *err)
{
  if (nbd_pread (n->nbd, buf, (size_t)count * CFS_BLOCK, block * CFS_BLOCK,
                 0) == -1) {
    nbd_fail (err, "read", (unsigned long long)block);
    return -1;
  }
  return 0;
}

static int
do_write (struct nbd_io *n, uint64_t block, uint32_t count, const void *buf,
          bool fua, struct cfs_err *err)
{
  if (nbd_pwrite (n->nbd, buf, (size_t)count * CFS_BLOCK, block * CFS_BLOCK,
                  fua && n->fua ? LIBNBD_CMD_FLAG_FUA : 0) == -1 ||
      (fua && !n->fua && nbd_flush (n->nbd, 0) == -1)) {
    nbd_fail (err, "write", (unsigned long long)block);
    return -1;
  }
  return 0;
}

static int
do_flush (struct nbd_io *n, struct cfs_err *err)
{
  if (nbd_flush (n->nbd, 0) == -1) {
    nbd_fail (err, "flush", 0);
    return -1;
  }
  return 0;
}

static int
do_zero (struct nbd_io *n, uint64_t block, uint32_t count, struct cfs_err *err)
{
  if (nbd_zero (n->nbd, (uint64_t)count * CFS_BLOCK, block * CFS_BLOCK, 0) ==
      -1) {
    nbd_fail (err, "zero", (unsigned long long)block);
    return -1;
  }
  return 0;
}

/* A read in the I/O thread: from the read-ahead when it holds all of
 * it; a sequential one asks for the blocks after it.
 */
static int
thread_read (struct nbd_io *n, struct nbd_req *r)
{
  uint64_t end = r->block + r->count;
  int rc = 0;

  if (n->ra_held && r->block >= n->ra_block && end <= n->ra_block + n->ra_count)
    memcpy (r->buf, n->ra_buf + (r->block - n->ra_block) * CFS_BLOCK,
            (size_t)r->count * CFS_BLOCK);
  else
    rc = do_read (n, r->block, r->count, r->buf, &r->err);
  if (rc == 0 && r->count >= RA_MIN && r->block == n->seq_end &&
      end < n->blocks && !(n->ra_held && end < n->ra_block + n->ra_count)) {
    n->ra_held = false;
    n->ra_block = end;
    n->ra_count = r->count < RA_MAX ? r->count : RA_MAX;
    if (n->ra_count > n->blocks - end)
      n->ra_count = (uint32_t)(n->blocks - end);
  }
  if (r->count >= RA_MIN)
    n->seq_end = end;
  return rc;
}

/* The read-ahead asked for, when nothing else waits; a failure only
 * means it is not there (the read itself will say).
 */
static void
read_ahead (struct nbd_io *n)
{
  struct cfs_err err;

  if (n->ra_held || n->ra_count == 0)
    return;
  if (n->ra_buf == NULL && (n->ra_buf = malloc (RA_MAX * CFS_BLOCK)) == NULL)
    return;
  n->ra_held = do_read (n, n->ra_block, n->ra_count, n->ra_buf, &err) == 0;
  if (!n->ra_held)
    n->ra_count = 0;
}

/* A write or zero of [block, +count) makes a read-ahead over it stale. */
static void
ra_drop (struct nbd_io *n, uint64_t block, uint32_t count)
{
  if (n->ra_count && block < n->ra_block + n->ra_count &&
      n->ra_block < block + count)
    n->ra_held = false, n->ra_count = 0;
}

/* One request, in the I/O thread, without the lock.  After a queued
 * write failed, no later write or zero reaches the device and every
 * request but a read reports that failure.
 */
static void
serve_one (struct nbd_io *n, struct nbd_req *r, bool failed)
{
  switch (r->op) {
    case OP_READ:
      r->rc = thread_read (n, r);
      return;
    case OP_WRITE:
      ra_drop (n, r->block, r->count);
      r->rc = failed
                  ? -1
                  : do_write (n, r->block, r->count, r->buf, r->fua, &r->err);
      break;
    case OP_ZERO:
      ra_drop (n, r->block, r->count);
      r->rc = failed ? -1 : do_zero (n, r->block, r->count, &r->err);
      break;
    case OP_FLUSH:
      r->rc = do_flush (n, &r->err) == -1 || failed ? -1 : 0;
      break;
    case OP_STOP:
      r->rc = 0;
      return;
  }
  if (failed)
    r->err = n->failure; /* read-only here: set before, under the lock */
}

/* A queued write failed: the first failure is the one reported (under
 * the lock).
 */
static void
write_failed (struct nbd_io *n, const struct cfs_err *err)
{
  if (!n->failed) {
    n->failed = true;
    n->failure = *err;
  }
}

/* A queued write's request with room for bytes: 0, or -1 (ENOMEM).
 * Under the lock.
 */
static struct nbd_req *
slot_get (struct nbd_io *n, size_t bytes)
{
  struct nbd_req *r;

  if (sizeof *r + bytes > SLOT)
    return malloc (sizeof *r + bytes);
  if ((r = n->spare) != NULL) {
    n->spare = r->next;
    return r;
  }
  return malloc (SLOT);
}

/* Done with a queued write's request (under the lock). */
static void
slot_put (struct nbd_io *n, struct nbd_req *r)
{
  if (sizeof *r + (size_t)r->count * CFS_BLOCK > SLOT) {
    free (r);
    return;
  }
  r->next = n->spare;
  n->spare = r;
}

/* A queued write is over: out of flight (if it was sent) and of the
 * queued bytes, freed (under the lock).
 */
static void
retire (struct nbd_io *n, struct nbd_req *r)
{
  unsigned i;

  for (i = 0; i < n->inflight && n->sent[i] != r; i++)
    ;
  if (i < n->inflight)
    n->sent[i] = n->sent[--n->inflight];
  n->behind -= (size_t)r->count * CFS_BLOCK;
  pthread_cond_broadcast (&n->done);
  slot_put (n, r);
}

/* A sent write answered (libnbd calls this in the I/O thread). */
static int
write_done (void *opaque, int *error)
{
  struct nbd_req *r = opaque;
  struct nbd_io *n = r->n;

  pthread_mutex_lock (&n->lock);
  if (*error) {
    cfs_errno (&r->err, *error, "write block %llu",
               (unsigned long long)r->block);
    write_failed (n, &r->err);
  }
  retire (n, r);
  pthread_mutex_unlock (&n->lock);
  return 1;
}

/* May r, at the head, be sent without waiting for those in flight?
 * Only a plain queued write over none of their blocks (two writes of
 * one block must stay in order); anything else waits for all of them,
 * so a read sees them and a flush covers them.  Under the lock.
 */
static bool
may_send (struct nbd_io *n, const struct nbd_req *r)
{
  unsigned i;

  if (!r->queued || n->failed || n->inflight == IN_FLIGHT)
    return false;
  for (i = 0; i < n->inflight; i++)
    if (r->block < n->sent[i]->block + n->sent[i]->count &&
        n->sent[i]->block < r->block + r->count)
      return false;
  return true;
}

/* Send the head r, a queued write, without waiting (the lock held on
 * entry and exit).
 */
static void
send_write (struct nbd_io *n, struct nbd_req *r)
{
  nbd_completion_callback done = {.callback = write_done, .user_data = r};
  struct cfs_err err;

  if ((n->head = r->next) == NULL)
    n->tail = &n->head;
  r->n = n;
  n->sent[n->inflight++] = r;
  pthread_mutex_unlock (&n->lock);
  ra_drop (n, r->block, r->count);
  if (nbd_aio_pwrite (n->nbd, r->buf, (size_t)r->count * CFS_BLOCK,
                      r->block * CFS_BLOCK, done, 0) == -1) {
    nbd_fail (&err, "write", (unsigned long long)r->block);
    pthread_mutex_lock (&n->lock);
    write_failed (n, &err);
    retire (n, r); /* never sent: libnbd will not call write_done */
    return;
  }
  pthread_mutex_lock (&n->lock);
}

/* Wait for an answer to a sent write (the lock held on entry and
 * exit).  If libnbd can make no progress (the connection died) none
 * will come: they are failed and forgotten, left to libnbd, which
 * frees any it still answers through write_done.
 */
static void
await_sent (struct nbd_io *n)
{
  struct cfs_err err;

  pthread_mutex_unlock (&n->lock);
  if (nbd_poll (n->nbd, -1) == -1) {
    nbd_fail (&err, "write", 0);
    pthread_mutex_lock (&n->lock);
    write_failed (n, &err);
    n->inflight = 0;
    return;
  }
  pthread_mutex_lock (&n->lock);
}

static void *
io_thread (void *arg)
{
  struct nbd_io *n = arg;
  struct nbd_req *r;
  bool stop = false;

  pthread_mutex_lock (&n->lock);
  while (!stop) {
    bool failed;
    while ((r = n->head) == NULL && n->inflight == 0)
      pthread_cond_wait (&n->work, &n->lock);
    if (r && may_send (n, r)) {
      send_write (n, r);
      continue;
    }
    if (n->inflight > 0) {
      await_sent (n);
      continue;
    }
    failed = n->failed;
    pthread_mutex_unlock (&n->lock);
    serve_one (n, r, failed);
    pthread_mutex_lock (&n->lock);
    stop = r->op == OP_STOP;
    if ((n->head = r->next) == NULL)
      n->tail = &n->head;
    if (r->queued) {
      if (r->rc == -1)
        write_failed (n, &r->err);
      retire (n, r); /* served here, never in flight */
    } else {
      r->done = true;
      pthread_cond_broadcast (&n->done);
    }
    if (n->head == NULL && !stop) {
      pthread_mutex_unlock (&n->lock);
      read_ahead (n);
      pthread_mutex_lock (&n->lock);
    }
  }
  pthread_mutex_unlock (&n->lock);
  return NULL;
}

/* Append r (under the lock). */
static void
enqueue (struct nbd_io *n, struct nbd_req *r)
{
  r->next = NULL;
  *n->tail = r;
  n->tail = &r->next;
  pthread_cond_signal (&n->work);
}

/* r served in its turn, waited for: its rc, with r->err. */
static int
submit_wait (struct nbd_io *n, struct nbd_req *r)
{
  pthread_mutex_lock (&n->lock);
  enqueue (n, r);
  while (!r->done)
    pthread_cond_wait (&n->done, &n->lock);
  pthread_mutex_unlock (&n->lock);
  return r->rc;
}

/* A plain write queued: a copy, once the queue has room for it (an
 * empty queue always has).  -1 with err if an earlier one failed.
 */
static int
submit_behind (struct nbd_io *n, uint64_t block, uint32_t count,
               const void *buf, struct cfs_err *err)
{
  size_t bytes = (size_t)count * CFS_BLOCK;
  struct nbd_req *r;

  pthread_mutex_lock (&n->lock);
  while (!n->failed && n->behind > 0 && n->behind + bytes > n->behind_max)
    pthread_cond_wait (&n->done, &n->lock);
  if (n->failed || (r = slot_get (n, bytes)) == NULL) {
    if (n->failed)
      *err = n->failure;
    else
      cfs_errno (err, ENOMEM, "write block %llu", (unsigned long long)block);
    pthread_mutex_unlock (&n->lock);
    return -1;
  }
  n->behind += bytes;
  pthread_mutex_unlock (&n->lock);
  *r = (struct nbd_req){.op = OP_WRITE,
                        .block = block,
                        .count = count,
                        .queued = true,
                        .buf = r + 1};
  memcpy (r->buf, buf, bytes);
  pthread_mutex_lock (&n->lock);
  enqueue (n, r);
  pthread_mutex_unlock (&n->lock);
  return 0;
}

static int
nbd_io_read (struct cfs_io *io, uint64_t block, uint32_t count, void *buf,
             struct cfs_err *err)
{
  struct nbd_io *n = (struct nbd_io *)io;
  struct nbd_req r = {
      .op = OP_READ, .block = block, .count = count, .buf = buf};

  if (n->behind_max == 0)
    return do_read (n, block, count, buf, err);
  if (submit_wait (n, &r) == -1)
    *err = r.err;
  return r.rc;
}

static int
nbd_io_write (struct cfs_io *io, uint64_t block, uint32_t count,
              const void *buf, bool fua, struct cfs_err *err)
{
  struct nbd_io *n = (struct nbd_io *)io;
  struct nbd_req r = {.op = OP_WRITE,
                      .block = block,
                      .count = count,
                      .fua = true,
                      .buf = (void *)buf};

  if (n->behind_max == 0)
    return do_write (n, block, count, buf, fua, err);
  if (!fua)
    return submit_behind (n, block, count, buf, err);
  if (submit_wait (n, &r) == -1)
    *err = r.err;
  return r.rc;
}

static int
nbd_io_flush (struct cfs_io *io, struct cfs_err *err)
{
  struct nbd_io *n = (struct nbd_io *)io;
  struct nbd_req r = {.op = OP_FLUSH};

  if (n->behind_max == 0)
    return do_flush (n, err);
  if (submit_wait (n, &r) == -1)
    *err = r.err;
  return r.rc;
}

static int
nbd_io_zero (struct cfs_io *io, uint64_t block, uint32_t count,
             struct cfs_err *err)
{
  struct nbd_io *n = (struct nbd_io *)io;
  struct nbd_req r = {.op = OP_ZERO, .block = block, .count = count};

  if (n->behind_max == 0)
    return do_zero (n, block, count, err);
  if (submit_wait (n, &r) == -1)
    *err = r.err;
  return r.rc;
}

static int
nbd_io_write_behind (struct cfs_io *io, size_t bytes, struct cfs_err *err)
{
  struct nbd_io *n = (struct nbd_io *)io;
  int e;

  if (n->behind_max > 0 || bytes == 0)
    return cfs_fail (err, "write-behind: %s",
                     bytes ? "already on" : "a bound of 0 bytes");
  n->tail = &n->head;
  pthread_mutex_init (&n->lock, NULL);
  pthread_cond_init (&n->work, NULL);
  pthread_cond_init (&n->done, NULL);
  if ((e = pthread_create (&n->thread, NULL, io_thread, n)) != 0) {
    pthread_cond_destroy (&n->done);
    pthread_cond_destroy (&n->work);
    pthread_mutex_destroy (&n->lock);
    cfs_errno (err, e, "write-behind: the I/O thread");
    return -1;
  }
  n->behind_max = bytes;
  return 0;
}

static uint64_t
nbd_io_blocks (struct cfs_io *io)
{
  return ((struct nbd_io *)io)->blocks;
}

/* The queue drained and the thread gone: -1 with err if a queued write
 * failed.
 */
static int
stop_behind (struct nbd_io *n, struct cfs_err *err)
{
  struct nbd_req r = {.op = OP_STOP};
  int rc = 0;

  submit_wait (n, &r);
  pthread_join (n->thread, NULL);
  if (n->failed)
    *err = n->failure, rc = -1;
  pthread_cond_destroy (&n->done);
  pthread_cond_destroy (&n->work);
  pthread_mutex_destroy (&n->lock);
  free (n->ra_buf);
  while ((r.next = n->spare) != NULL) {
    n->spare = r.next->next;
    free (r.next);
  }
  n->behind_max = 0;
  return rc;
}

static int
nbd_io_close (struct cfs_io *io, struct cfs_err *err)
{
  struct nbd_io *n = (struct nbd_io *)io;
  int r = n->behind_max ? stop_behind (n, err) : 0;

  if (nbd_shutdown (n->nbd, 0) == -1 && r == 0)
    r = cfs_fail (err, "close: %s", nbd_get_error ());
  nbd_close (n->nbd);
  free (n);
  return r;
}

const struct cfs_io_manager cfs_nbd_io = {
    .name = "nbd",
    .open = nbd_open,
    .read = nbd_io_read,
    .write = nbd_io_write,
    .flush = nbd_io_flush,
    .zero = nbd_io_zero,
    .blocks = nbd_io_blocks,
    .close = nbd_io_close,
    .write_behind = nbd_io_write_behind,
};
