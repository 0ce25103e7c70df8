/* chunkfs — what the checker's passes over one chunk share (the chunk's
 * state is struct ck, check-internal.h).  One file a pass, as e2fsck
 * keeps them (pass1.c ... pass5.c); check-chunk.c reads the chunk's
 * header and runs them in order:
 *
 *   1  check-pass1.c  inodes, their blocks and continuation links
 *                     (I1, I5, I6); check-special.c special files
 *   2  check-pass2.c  directory entries and back-references (I2, I3)
 *   3  check-pass3.c  directory connectivity
 *   4  check-pass4.c  link counts and orphans (I4)
 *   5  check-pass5.c  bitmaps, free counts, the back-reference table,
 *                     the header
 *
 * Everything read is checked before it is used; a chunk's state goes
 * clean only when nothing in it was left unfixed.
 */
#ifndef CHUNKFS_CHECK_PASSES_H
#define CHUNKFS_CHECK_PASSES_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "check-internal.h"

/* The block bitmap being rebuilt: is chunk-local block b in use? */
static inline bool
ck_is_used (const struct ck *k, uint32_t b)
{
  return k->used[b / 8] >> b % 8 & 1;
}

static inline void
ck_set_used (struct ck *k, uint32_t b, bool on)
{
  if (on)
    k->used[b / 8] |= (uint8_t)(1u << b % 8);
  else
    k->used[b / 8] &= (uint8_t) ~(1u << b % 8);
}

/* Is any of blocks [b, b + n) in use?  Whole bytes at a time: a 4 GiB
 * chunk's files map a million blocks.
 */
static inline bool
ck_any_used (const struct ck *k, uint32_t b, uint32_t n)
{
  uint32_t end = b + n;

  for (; b < end && b % 8; b++)
    if (ck_is_used (k, b))
      return true;
  for (; b + 8 <= end; b += 8)
    if (k->used[b / 8])
      return true;
  for (; b < end; b++)
    if (ck_is_used (k, b))
      return true;
  return false;
}

/* Blocks [b, b + n) in use. */
static inline void
ck_set_range (struct ck *k, uint32_t b, uint32_t n)
{
  uint32_t end = b + n;

  for (; b < end && b % 8; b++)
    ck_set_used (k, b, true);
  if (b + 8 <= end) {
    memset (k->used + b / 8, 0xff, (end - b) / 8);
    b += (end - b) / 8 * 8;
  }
  for (; b < end; b++)
    ck_set_used (k, b, true);
}

/* The device block of chunk-local block `local`. */
static inline uint64_t
ck_abs (const struct ck *k, uint32_t local)
{
  return cfs_block (&k->sb, k->c, local);
}

/* ---- check-core.c: the slots of the chunk being checked ---- */
/* Inode i's table slot re-encoded from k->ino[i], its block dirty. */
extern void ck_inode_changed (struct ck *k, uint32_t i);
/* Inode i freed; its generation stays, so old names of it stay stale. */
extern void ck_free_slot (struct ck *k, uint32_t i);
/* The back-reference table is gone: every chunk checked, then this one
 * again.
 */
extern void ck_lose_backrefs (struct ck *k);

/* ---- the passes ---- */
extern void ck_pass1 (struct ck *k);
/* Claim (or, with unclaim, release) every block inode i maps. */
extern void ck_walk_blocks (struct ck *k, uint32_t i, bool unclaim);
/* check-special.c: special file i (slot: its inode as read) checked. */
extern void ck_special (struct ck *k, uint32_t i, const unsigned char *slot);
/* check-xattr.c: inode i's extended attributes checked (and repaired),
 * its xattr block claimed; or that block released.
 */
extern void ck_xattr (struct ck *k, uint32_t i);
extern void ck_xattr_release (struct ck *k, uint32_t i);
extern void ck_pass2 (struct ck *k);
extern void ck_pass3 (struct ck *k);
extern void ck_pass4 (struct ck *k);
/* fixed_before: the problems fixed before this chunk's check began. */
extern void ck_pass5 (struct ck *k, uint64_t fixed_before);

#endif
