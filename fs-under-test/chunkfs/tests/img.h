/* chunkfs unit tests — a small chunkfs in an image file: made and
 * mounted, unmounted, mounted again, checked, removed (check-special,
 * check-xattr, check-extents; check-fsck builds its own tree and checks
 * it the same way).  Each suite says its size, inode ratio and UUID.
 */
#ifndef CHUNKFS_TESTS_IMG_H
#define CHUNKFS_TESTS_IMG_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include "check-main.h"
#include "img-check.h"
#include "chunkfs/fs.h"
#include "chunkfs/io.h"
#include "chunkfs/mkfs.h"

struct img {
  char dir[64], path[96];
  struct cfs_io *io;
  struct cfs_fs *fs;
};

struct img_spec {
  const char *suite; /* names the temporary directory */
  off_t bytes;
  uint32_t bytes_per_inode;
  const uint8_t *uuid; /* 16 bytes */
};

/* A fresh chunkfs of 16 MiB chunks, mounted read-write. */
static inline void
img_create (struct img *m, const struct img_spec *sp)
{
  struct cfs_mkfs_opts o = {.chunk_bytes = 16 << 20,
                            .bytes_per_inode = sp->bytes_per_inode,
                            .uuid = sp->uuid,
                            .time_ns = 1};
  struct cfs_super s;
  struct cfs_err err;
  int fd;

  fd_check_tmpdir (sp->suite, m->dir, sizeof m->dir);
  snprintf (m->path, sizeof m->path, "%s/img", m->dir);
  fd = open (m->path, O_CREAT | O_RDWR, 0600);
  ck_assert_int_ge (fd, 0);
  ck_assert_int_eq (ftruncate (fd, sp->bytes), 0);
  close (fd);
  m->io = cfs_open (m->path, true, &err);
  ck_assert_msg (m->io != NULL, "%s", err.msg);
  ck_assert_msg (cfs_mkfs (m->io, &o, &s, &err) == 0, "%s", err.msg);
  m->fs = cfs_fs_open (m->io, CFS_OPEN_WRITE, &err);
  ck_assert_msg (m->fs != NULL, "%s", err.msg);
}

static inline void
img_unmount (struct img *m)
{
  struct cfs_err err;

  if (m->fs)
    ck_assert_msg (cfs_fs_close (m->fs, &err) == 0, "%s", err.msg);
  if (m->io)
    ck_assert_int_eq (cfs_close (m->io, &err), 0);
  m->fs = NULL;
  m->io = NULL;
}

static inline void
img_mount (struct img *m)
{
  struct cfs_err err;

  m->io = cfs_open (m->path, true, &err);
  ck_assert_msg (m->io != NULL, "%s", err.msg);
  m->fs = cfs_fs_open (m->io, CFS_OPEN_WRITE, &err);
  ck_assert_msg (m->fs != NULL, "%s", err.msg);
}

static inline void
img_cleanup (struct img *m)
{
  img_unmount (m);
  unlink (m->path);
  rmdir (m->dir);
}

#endif
