/* chunkfs — the checker's problem table and ck_fix, which reports a
 * problem and decides whether to fix it, as e2fsck's fix_problem does
 * (problem.h, check-internal.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "check-internal.h"
#include "problem.h"

/* Preen fixes what loses nothing a user made, or only what a crash was
 * already going to lose (counts, bitmaps, stale references, unfinished
 * unlinks); damage that drops files or names waits for -y.
 */
const struct cfs_problem cfs_problems[] = {
    {PR_0_SUPER_BAD,
     "The superblock is unreadable (%s); using the copy "
     "in chunk %u's header.",
     "Rewrite it", PR_PREEN_OK},
    {PR_0_MAP_BAD,
     "Dirty-map block %u is unreadable (%s); reading the "
     "headers of the chunks it covers.",
     "Rewrite it", PR_PREEN_OK},
    {PR_0_HEADER_BAD, "Chunk %u's header is unreadable (%s).", "Rebuild it", 0},
    {PR_0_CHUNK_LOST,
     "Chunk %u has no readable header or bitmap: its "
     "files cannot be recovered.",
     "Mark it unused", 0},
    {PR_0_INITMAP_BAD,
     "Initialised-chunks map block %u is unreadable (%s); reading the "
     "headers of the chunks it covers.",
     "Rewrite it", PR_PREEN_OK},
    {PR_0_INITMAP_STALE,
     "Chunk %u is in use, but the initialised-chunks map says it is not "
     "(a full check would skip it).",
     "Set its bit", PR_PREEN_OK},
    {PR_1_ITABLE_BAD,
     "Chunk %u: inode-table block %u is unreadable (%s): "
     "inodes %u..%u are lost.",
     "Clear them", 0},
    {PR_1_INODE_BAD, "Inode (%u, %u) is corrupt (%s).", "Clear", 0},
    {PR_1_ITABLE_MARK_BIG,
     "Chunk %u: its inode-table mark %u is past the table's %u inodes; "
     "reading all of them.",
     "Fix the mark", PR_PREEN_OK},
    {PR_1_ITABLE_MARK_LOW,
     "Chunk %u: inode %u is in use past the inode-table mark %u (a full "
     "check would not read it).",
     "Raise the mark", PR_PREEN_OK},
    {PR_1_MAPPED_SHORT,
     "Inode (%u, %u) maps blocks past the range it "
     "says it covers.",
     "Fix", PR_PREEN_OK},
    {PR_1_CHAIN_BROKEN,
     "File (%u, %u): its continuation link to (%u, %u) "
     "is broken.",
     "Truncate the file there", 0},
    {PR_1_CONT_ORPHAN, "Continuation inode (%u, %u) belongs to no file.",
     "Free it", PR_PREEN_OK},
    {PR_1_BACKREFS_BAD,
     "Chunk %u: the back-reference table is unreadable "
     "(%s).",
     "Drop it", 0},
    {PR_1_DIR_SIZE, "Directory (%u, %u) has size %llu, not whole blocks.",
     "Fix", PR_PREEN_OK},
    {PR_1_EXTENT_BAD,
     "Inode (%u, %u): its extent at block %u (chunk block %u, %u blocks) "
     "is %s.",
     "Truncate the map there", 0},
    {PR_1_LEAF_BAD,
     "Inode (%u, %u): extent block %u is unreadable or corrupt (%s).",
     "Truncate the map there", 0},
    {PR_1_EXTMAP_HEADER,
     "Inode (%u, %u): its extent map says %u entries at depth %u.",
     "Clear the map", 0},
    {PR_1_SPECIAL_MAP,
     "Special file (%u, %u) has %s, but a fifo, socket or "
     "device maps nothing.",
     "Clear them", PR_PREEN_OK},
    {PR_1_SPECIAL_SIZE, "Special file (%u, %u) has size %llu, not 0.", "Fix",
     PR_PREEN_OK},
    {PR_1_SPECIAL_RDEV, "Fifo or socket (%u, %u) has device number %#llx.",
     "Clear it", PR_PREEN_OK},
    {PR_1_XATTR_AREA_BAD,
     "Inode (%u, %u): its in-inode extended attributes are "
     "corrupt (%s).",
     "Clear them", 0},
    {PR_1_XATTR_BLOCK_BAD,
     "Inode (%u, %u): xattr block %u is unusable (%s): its "
     "extended attributes are lost.",
     "Clear the pointer", 0},
    {PR_2_DIR_BLOCK_BAD,
     "Directory (%u, %u): block %u is unreadable or "
     "corrupt (%s).",
     "Clear its entries", 0},
    {PR_2_ENTRY_TARGET,
     "Entry '%s' in directory (%u, %u) names (%u, %u), "
     "which is not a file in use.",
     "Clear", 0},
    {PR_2_ENTRY_GEN,
     "Entry '%s' in directory (%u, %u) names generation %u "
     "of (%u, %u), which is now %u.",
     "Clear", PR_PREEN_OK},
    {PR_2_ENTRY_TYPE,
     "Entry '%s' in directory (%u, %u) has type %u, its "
     "inode %u.",
     "Fix", PR_PREEN_OK},
    {PR_2_DIR_LINKED,
     "Entry '%s' in directory (%u, %u) is a second name of "
     "directory (%u, %u).",
     "Clear", 0},
    {PR_2_BACKREF_MISSING,
     "Entry '%s' in directory (%u, %u) names (%u, %u) "
     "without a back-reference.",
     "Add it", PR_PREEN_OK},
    {PR_3_DIR_UNCONNECTED,
     "Directory (%u, %u) is not named by its parent "
     "(%u, %u).",
     "Connect it to lost+found", 0},
    {PR_3_PARENT_WRONG,
     "Directory (%u, %u) says its parent is (%u, %u), "
     "but (%u, %u) names it.",
     "Fix", PR_PREEN_OK},
    {PR_4_BACKREF_STALE,
     "Chunk %u: back-reference for inode %u from "
     "directory (%u, %u) has no entry.",
     "Remove it", PR_PREEN_OK},
    {PR_4_ORPHAN, "File (%u, %u) (%llu bytes) has no name.",
     "Connect it to lost+found", 0},
    {PR_4_UNLINKED,
     "File (%u, %u) has no name and no links (an unfinished "
     "unlink).",
     "Free it", PR_PREEN_OK},
    {PR_4_LINK_COUNT, "Inode (%u, %u) has link count %u, should be %u.", "Fix",
     PR_PREEN_OK},
    {PR_4_NO_LOST_FOUND,
     "lost+found is unusable (%s): (%u, %u) stays "
     "unnamed.",
     "Ignore", 0},
    {PR_5_BLOCK_BITMAP,
     "Chunk %u: the block bitmap differs from the blocks "
     "in use (%u to set, %u to clear).",
     "Fix", PR_PREEN_OK},
    {PR_5_INODE_BITMAP,
     "Chunk %u: the inode bitmap differs from the inodes "
     "in use (%u to set, %u to clear).",
     "Fix", PR_PREEN_OK},
    {PR_5_COUNTS,
     "Chunk %u: free counts are %u blocks and %u inodes, "
     "should be %u and %u.",
     "Fix", PR_PREEN_OK},
    {PR_5_BACKREFS,
     "Chunk %u: the back-reference table changed (%u "
     "entries).",
     "Rewrite it", PR_PREEN_OK},
};

const size_t cfs_nproblems = sizeof cfs_problems / sizeof cfs_problems[0];

const struct cfs_problem *
cfs_problem (uint32_t code)
{
  size_t lo = 0, hi = cfs_nproblems;

  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (cfs_problems[mid].code == code)
      return &cfs_problems[mid];
    if (cfs_problems[mid].code < code)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

static bool
ask (const char *prompt)
{
  char line[64];

  fprintf (stderr, "%s<y>? ", prompt);
  fflush (stderr);
  if (fgets (line, sizeof line, stdin) == NULL)
    return false;
  return line[0] == 'y' || line[0] == 'Y' || line[0] == '\n';
}

bool
ck_fix (struct ck *k, uint32_t code, ...)
{
  const struct cfs_problem *p = cfs_problem (code);
  FILE *out = k->o->out;
  bool yes;
  va_list ap;

  if (p == NULL)
    abort (); /* a code missing from the table is a bug */
  k->res->problems++;
  if (out) {
    fprintf (out, "[%06X] ", p->code);
    va_start (ap, code);
    vfprintf (out, p->msg, ap);
    va_end (ap);
  }
  switch (k->o->mode) {
    case CFS_CHECK_YES:
      yes = true;
      break;
    case CFS_CHECK_PREEN:
      yes = p->flags & PR_PREEN_OK;
      break;
    case CFS_CHECK_ASK:
      if (out)
        fprintf (out, "  ");
      yes = ask (p->prompt);
      break;
    default:
      yes = false;
  }
  if (out) {
    if (k->o->mode == CFS_CHECK_PREEN && !yes)
      fprintf (out, "\n\tUNEXPECTED INCONSISTENCY; RUN fsck.chunkfs "
                    "MANUALLY (without -p).\n");
    else if (k->o->mode != CFS_CHECK_ASK)
      fprintf (out, "  %s? %s\n", p->prompt, yes ? "yes" : "no");
  }
  if (yes) {
    k->res->fixed++;
    k->res->exit |= CFS_EXIT_CORRECTED;
  } else {
    k->left = true;
    k->res->exit |= CFS_EXIT_UNCORRECTED;
  }
  return yes;
}
