/* chunkfs — the checker's pass 4 over one chunk (check-passes.h): link
 * counts against the names found (I4); unnamed files go to lost+found,
 * or are freed when nothing links them.
 */
#include <sys/stat.h>

#include "check-passes.h"
#include "problem.h"

void
ck_pass4 (struct ck *k)
{
  uint32_t i;

  for (i = 1; i < k->nino; i++) {
    struct cino *n = &k->ino[i];
    uint64_t me = cfs_ref (k->c, i);
    uint32_t want;
    if (!n->used)
      continue;
    if (n->in.flags & CFS_INODE_CONT)
      want = 0;
    else if (S_ISDIR (n->in.mode))
      want = 2 + n->subdirs;
    else {
      if (n->found == 0 && k->incomplete)
        continue; /* its names may be in chunks not checked yet */
      if (n->found == 0) {
        if (n->in.links == 0) {
          if (ck_fix (k, PR_4_UNLINKED, k->c, i)) {
            ck_walk_blocks (k, i, true);
            ck_xattr_release (k, i);
            if (n->in.flags & CFS_INODE_HAS_CONT)
              ck_touch_other (k, ref_chunk (n->in.next));
            ck_free_slot (k, i);
          }
          continue;
        }
        if (ck_fix (k, PR_4_ORPHAN, k->c, i, (unsigned long long)n->in.size) &&
            ck_lost_found (k, me, n->in.generation,
                           (uint8_t)(n->in.mode >> 12)) == 0)
          n->found = 1;
      }
      want = n->found;
    }
    if (k->incomplete)
      continue; /* counts wait for the check again */
    if (n->in.links != want &&
        ck_fix (k, PR_4_LINK_COUNT, k->c, i, n->in.links, want)) {
      n->in.links = want;
      ck_inode_changed (k, i);
    }
  }
}
