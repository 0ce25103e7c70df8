/* chunkfs — the checker's entry point, cfs_check (check.h, FORMAT.md):
 * pass 0 (the superblock, the dirty and initialised-chunks maps, which
 * chunks to check), then each chunk of the work list through
 * check-chunk.c, then the maps written.  Everything else is below it:
 * check-chunk.c and the passes, check-core.c, check-io.c, problem.c.
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
    if (!k->o->full && !covered_bad && k->imap_ok[j] && !ck_map_bit (k, c))
      continue;
    /* Never initialised (the bit is durable before the chunk is): -f
     * has nothing to read there.  Chunk 0 (the root's) always is.
     */
    if (k->o->full && c > 0 && !covered_bad && !ck_map_bit (k, c) &&
        k->imap_ok[j] && !ck_imap_bit (k, c))
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
    else if (ck_map_bit (k, c))
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
  ck_chunk_release (k);
  ck_backref_release (k);
  ck_io_release (k);
  free (k);
}
