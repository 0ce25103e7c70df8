/* futuredisk — faultmodels tests: a built-in profile and a disk of it,
 * failing the test (with the model's message) when either cannot be had.
 */
#ifndef FUTUREDISK_MODEL_TESTS_H
#define FUTUREDISK_MODEL_TESTS_H

#include <check.h>
#include <stdbool.h>
#include <stdint.h>

#include "faultmodels/disk.h"
#include "faultmodels/profile.h"

static inline struct fm_profile
profile (const char *name)
{
  struct fm_profile p;
  struct fm_err err;

  ck_assert_msg (fm_profile_builtin (name, &p, &err) == 0, "%s", err.msg);
  return p;
}

/* A disk of p with that seed, read-ahead and write cache, SPTF queue. */
static inline struct fm_disk *
open_disk (const struct fm_profile *p, uint64_t seed, bool read_ahead,
           bool write_cache)
{
  struct fm_disk_options o = {read_ahead, write_cache, FM_QUEUE_SPTF};
  struct fm_err err;
  struct fm_disk *d = fm_disk_new (p, seed, &o, &err);

  ck_assert_msg (d != NULL, "%s", err.msg);
  return d;
}

#endif
