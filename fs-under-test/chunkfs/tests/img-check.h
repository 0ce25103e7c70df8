/* chunkfs unit tests — one full check of an image file, its report
 * kept (img.h's suites and check-fsck).
 */
#ifndef CHUNKFS_TESTS_IMG_CHECK_H
#define CHUNKFS_TESTS_IMG_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "check-main.h"
#include "chunkfs/check.h"
#include "chunkfs/io.h"

/* A full check of the (unmounted) image at path; what it said in *said
 * (freed by the caller) when said is not NULL.  FSCK_VERBOSE=1 in the
 * environment echoes it to stderr.
 */
static inline struct cfs_check_result
img_check (const char *path, enum cfs_check_mode mode, char **said)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream (&buf, &len);
  struct cfs_check_opts o = {
      .mode = mode, .full = true, .out = out, .progress_fd = -1, .name = path};
  struct cfs_check_result r;
  struct cfs_err err;
  struct cfs_io *io = cfs_open (path, mode != CFS_CHECK_NO, &err);

  ck_assert_msg (io != NULL, "%s", err.msg);
  cfs_check (io, &o, &r);
  ck_assert_int_eq (cfs_close (io, &err), 0);
  fclose (out);
  if (getenv ("FSCK_VERBOSE"))
    fputs (buf, stderr);
  if (said)
    *said = buf;
  else
    free (buf);
  return r;
}

#endif
