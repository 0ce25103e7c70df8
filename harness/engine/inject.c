/* futuredisk — harness: a --target's faults put on the broken disk (see
 * trial-int.h).
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach.h"
#include "ctlclient.h"
#include "faultmodels/rng.h"
#include "faultmodels/units.h"
#include "fsadapter.h"
#include "storefault.h"
#include "target.h"
#include "trial-int.h"

/* The stripe around byte off of the disk garbled (place `done` of
 * count): seeded bytes, or with copy the bytes of the stripe before it.
 */
static int
garble_stripe (struct trial *t, uint64_t off, uint64_t stripe, bool copy,
               uint64_t done, uint64_t count, struct fm_err *err)
{
  uint64_t at = off - off % stripe;
  char detail[200];

  if (copy && at < stripe)
    at = stripe; /* the disk's first stripe has none before it */
  snprintf (detail, sizeof detail,
            "harness: stripe of %" PRIu64 " bytes %s (RAID-level "
            "corruption), place %" PRIu64 " of %" PRIu64,
            stripe, copy ? "overwritten with the stripe before it" : "garbled",
            done + 1, count);
  return fd_garble (t->s, at, stripe,
                    fm_hash (t->s->seed, FM_STREAM_WRITE, done, 79),
                    copy ? at - stripe : FD_GARBLE_SEEDED, detail, err);
}

/* A block a --target hits: where, and in which file. */
struct place {
  uint64_t off, n;
  const char *path;
};

/* One place hit with kind (the done'th of count).  A write fault undoes
 * a write the log has, a stripe is garbled in the store; the rest the
 * disk does through its control socket: an unreadable stripe is the
 * disk's unreadable sectors over the whole stripe, which only a rewrite
 * mends, as a degraded array's lost stripe is until written again.
 */
static int
hit (struct trial *t, struct fd_disk *d, const char *kind, uint64_t stripe,
     enum fd_stripe_fault how, const struct place *p, uint64_t done,
     uint64_t count, struct fm_err *err)
{
  char line[128];

  if (stripe && how != FD_STRIPE_URE)
    return garble_stripe (t, p->off, stripe, how == FD_STRIPE_COPY, done, count,
                          err);
  if (fd_write_fault_kind (kind))
    return fd_write_fault (t->s, kind, p->off, p->n, t->s->seed + done, err);
  if (stripe)
    snprintf (line, sizeof line, "inject ure %" PRIu64 " %" PRIu64,
              p->off - p->off % stripe, stripe);
  else
    snprintf (line, sizeof line, "inject %s %" PRIu64 " %" PRIu64, kind, p->off,
              p->n);
  return fd_ctl_ok (fd_disk_control (d), line, NULL, err);
}

/* One part of a --target, TYPE[:COUNT[:KIND]]: what it hits, and
 * where (the places found, `done` of `count`).
 */
struct part {
  char type[32], kind[32];
  uint64_t count, done, stripe;
  enum fd_stripe_fault how;
  struct place *p;
};

/* Part n of the target (item): choose its COUNT regular files by the
 * seed, each part drawing its own (99 for the first, as before parts
 * were), and find their blocks of TYPE.
 */
static int
locate_part (struct trial *t, struct fd_disk *d, const char *item, unsigned n,
             struct part *pt, struct fm_err *err)
{
  char count_s[32] = "1";
  uint64_t tries;

  snprintf (pt->kind, sizeof pt->kind, "ure");
  sscanf (item, "%31[^:]:%31[^:]:%31s", pt->type, count_s, pt->kind);
  if (fm_parse_uint ("--target count", count_s, 1, 1000, &pt->count, err) ==
          -1 ||
      fd_target_stripe (pt->kind, &pt->stripe, &pt->how, err) == -1)
    return -1;
  if ((pt->p = calloc (pt->count, sizeof *pt->p)) == NULL)
    return fm_fail (err, "out of memory");
  for (tries = 0; pt->done < pt->count && tries < 100 * pt->count && t->r->m.n;
       tries++) {
    const struct fd_entry *e = &t->r->m.v[fm_below (
        fm_hash (t->s->seed, FM_STREAM_POPULATE, tries, 99 + n), t->r->m.n)];
    struct place *p = &pt->p[pt->done];
    if (e->type != FD_FILE || e->size < FD_BLOCK)
      continue;
    p->path = e->path;
    if (t->s->fs->locate (fd_disk_device (d), pt->type, e->path, &p->off, &p->n,
                          err) == -1)
      return -1;
    pt->done++;
  }
  if (pt->done < pt->count)
    return fm_fail (err, "--target %s: found only %" PRIu64 " files to hit",
                    item, pt->done);
  return 0;
}

/* --target: every part's places found first (a fault may hit what the
 * search reads, as a stripe does), then each part's faulted with its
 * KIND in turn.
 */
int
fd_trial_inject (struct trial *t, struct fd_disk *d, struct fm_err *err)
{
  struct part parts[FD_TARGET_MAX] = {0};
  const char *s = t->s->target;
  char item[128], one[PATH_MAX + 128];
  unsigned n = 0, i;
  uint64_t k, unlisted = 0;
  size_t room = sizeof t->r->targets - 48; /* for "; and N more" */
  int rc = 0;

  while (rc == 0 && n < FD_TARGET_MAX &&
         fd_target_next (&s, item, sizeof item)) {
    rc = locate_part (t, d, item, n, &parts[n], err);
    n++;
  }
  for (i = 0; rc == 0 && i < n; i++)
    for (k = 0; rc == 0 && k < parts[i].done; k++) {
      const struct part *pt = &parts[i];
      if ((rc = hit (t, d, pt->kind, pt->stripe, pt->how, &pt->p[k], k,
                     pt->count, err)) == -1)
        break;
      snprintf (one, sizeof one, "%s%s %s %s %" PRIu64,
                *t->r->targets ? "; " : "", pt->kind, pt->type, pt->p[k].path,
                pt->p[k].off);
      /* A list too long for the record ends with how many it left out:
       * every place is in the fault logs.
       */
      if (unlisted || strlen (t->r->targets) + strlen (one) >= room)
        unlisted++;
      else
        strcat (t->r->targets, one);
    }
  if (unlisted)
    snprintf (t->r->targets + strlen (t->r->targets),
              sizeof t->r->targets - strlen (t->r->targets),
              "; and %" PRIu64 " more", unlisted);
  for (i = 0; i < n; i++)
    free (parts[i].p);
  return rc;
}
