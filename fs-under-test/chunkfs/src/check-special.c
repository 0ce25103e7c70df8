/* chunkfs — the checker's look at special files (fifos, sockets, device
 * nodes; check-passes.h), called by pass 1 for each one it reads: they
 * have size 0, map nothing and never continue, and only a device has a
 * device number (FORMAT.md "Special files").
 */
#include <string.h>
#include <sys/stat.h>

#include "check-passes.h"
#include "problem.h"

/* What of a special file's map and links is not empty (NULL: none);
 * slot is its inode as read, whose mapping area past rdev the decoder
 * does not look at.
 */
static const char *
special_map (const struct cfs_inode *in, const unsigned char *slot)
{
  static const unsigned char zero[CFS_INODE_SIZE];

  if (in->flags)
    return "inode flags";
  if (in->head || in->next || in->offset)
    return "continuation links";
  if (in->mapped)
    return "mapped bytes";
  if (memcmp (slot + 96, zero, 144 - 96))
    return "block map";
  return NULL;
}

void
ck_special (struct ck *k, uint32_t i, const unsigned char *slot)
{
  struct cfs_inode *in = &k->ino[i].in;
  const char *what = special_map (in, slot);

  if (what && ck_fix (k, PR_1_SPECIAL_MAP, k->c, i, what)) {
    /* Re-encoding writes its mapping area as rdev and zeros. */
    in->flags = 0;
    in->head = in->next = in->offset = in->mapped = 0;
    ck_inode_changed (k, i);
  }
  if (in->size &&
      ck_fix (k, PR_1_SPECIAL_SIZE, k->c, i, (unsigned long long)in->size)) {
    in->size = 0;
    ck_inode_changed (k, i);
  }
  if (!S_ISCHR (in->mode) && !S_ISBLK (in->mode) && in->rdev &&
      ck_fix (k, PR_1_SPECIAL_RDEV, k->c, i, (unsigned long long)in->rdev)) {
    in->rdev = 0;
    ck_inode_changed (k, i);
  }
}
