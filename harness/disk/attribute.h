/* futuredisk — harness: which logged faults explain which damaged files.
 *
 * While the file system is mounted, the physical extents of each damaged
 * file are read with FIEMAP (or, for a file system without it, from its
 * own map of the device: fd_fs.file_ranges); the fault log (the plugin's ground
 * truth) is then searched for faults overlapping them.  A file lost from
 * the tree (missing, in lost+found, a name lost) is also looked up in the
 * nearest directory above it that is still there, where its name was:
 * faults there are named "dir:KIND".  A file none of whose places can be
 * found stays unexplained, and the record says so with an empty cause.
 * btrfs's FIEMAP addresses are its own; its adapter maps them to the
 * device.
 */
#ifndef FUTUREDISK_ATTRIBUTE_H
#define FUTUREDISK_ATTRIBUTE_H

#include <stddef.h>
#include <stdint.h>

#include "faultmodels/error.h"
#include "fsadapter.h"

struct fd_extents;

/* The physical extents of root/path (NULL if it cannot be mapped). */
extern struct fd_extents *fd_extents_of (const char *root, const char *path);
extern void fd_extents_free (struct fd_extents *x);

/* The physical extents of the nearest directory above root/path that is
 * still there (root itself at the last): where the name of a file lost
 * from the tree was.  NULL if none can be mapped.
 */
extern struct fd_extents *fd_dir_extents_of (const char *root,
                                             const char *path);

/* The same from a file system's own map (fd_fs.file_ranges), read from
 * the disk's NBD server at socket, the file system mounted at root (NULL
 * if it cannot be mapped; the reason on stderr).
 */
extern struct fd_extents *fd_extents_from (const struct fd_fs *fs,
                                           const char *socket, const char *root,
                                           const char *path);

/* Translate each extent's start with map (a file system whose FIEMAP
 * addresses are its own); an extent it cannot map is dropped.
 */
extern void fd_extents_map (struct fd_extents *x,
                            int (*map) (const char *dev, uint64_t addr,
                                        uint64_t *offset, struct fm_err *err),
                            const char *dev);

/* The kinds of the faults in the fault log overlapping the extents,
 * appended to buf (a string) comma-separated, each kind once in buf.
 */
extern void fd_attribute (const struct fd_extents *x, const char *faultlog,
                          char *buf, size_t len);

#endif
