/* chunkfs — the checker's pass 3 over one chunk (check-passes.h): each
 * directory named by the parent it records, or reconnected in
 * lost+found.
 */
#include <stdio.h>
#include <sys/stat.h>

#include "check-passes.h"
#include "problem.h"

void
ck_pass3 (struct ck *k)
{
  uint32_t i;

  for (i = 1; i < k->nino; i++) {
    struct cino *n = &k->ino[i];
    uint64_t me = cfs_ref (k->c, i), parent = n->in.offset;
    if (!n->used || !S_ISDIR (n->in.mode) || me == cfs_ref (0, CFS_ROOT_INO))
      continue;
    if (n->named_by) {
      if (n->named_by != parent &&
          ck_fix (k, PR_3_PARENT_WRONG, k->c, i, ref_chunk (parent),
                  ref_ino (parent), ref_chunk (n->named_by),
                  ref_ino (n->named_by))) {
        n->in.offset = n->named_by;
        ck_inode_changed (k, i);
      }
      continue;
    }
    /* Named by the parent it records, in another chunk, whose
     * back-reference went missing: the name is good, the back-reference
     * comes back.
     */
    if (ref_chunk (parent) != k->c) {
      uint32_t hash;
      if (ck_dir_names (k, parent, me, 0, &hash) == 1) {
        struct backref b = {i, ref_chunk (parent), ref_ino (parent), hash};
        char name[32];
        snprintf (name, sizeof name, "(a name of %u.%u)", k->c, i);
        if (ck_fix (k, PR_2_BACKREF_MISSING, name, ref_chunk (parent),
                    ref_ino (parent), k->c, i) &&
            ck_add_backref (k, &b) == 0) {
          n->named_by = parent;
          n->found++;
        }
        continue;
      }
    }
    if (k->incomplete)
      continue; /* a name elsewhere may yet turn up: checked again later */
    if (ck_fix (k, PR_3_DIR_UNCONNECTED, k->c, i, ref_chunk (parent),
                ref_ino (parent)) &&
        ck_lost_found (k, me, n->in.generation, S_IFDIR >> 12) == 0) {
      n->in.offset = cfs_ref (0, CFS_LOST_FOUND_INO);
      n->named_by = n->in.offset;
      n->found = 1;
      ck_inode_changed (k, i);
      if (k->c == 0)
        k->ino[CFS_LOST_FOUND_INO].subdirs++;
    }
  }
}
