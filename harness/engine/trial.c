/* futuredisk — harness: the trial engine's sequence of phases (see trial.h). */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach.h"
#include "progname.h"
#include "crashpoints.h"
#include "ctlclient.h"
#include "fsadapter.h"
#include "populate.h"
#include "base.h"
#include "target.h"
#include "trial-int.h"

/* The machine dies with writes in flight: the drive loses what its cache
 * had not made durable, and the kernel never reaches the disk again (its
 * dirty pages are lost with it).  Unmounting then only takes the dead
 * file system out of the way.
 */
static int
power_cut (struct trial *t, struct fd_disk *d, struct fm_err *err)
{
  struct fd_clocks c;
  struct phase *p;
  struct fm_err e;

  if ((p = fd_phase_begin (t, d, "crash", &c, err)) == NULL ||
      fd_phase_end (d, p, &c, err) == -1 ||
      fd_ctl_ok (fd_disk_control (d), "poweroff", NULL, err) == -1)
    return -1;
  fd_disk_unmount (d, &e);
  return 0;
}

static int
unmount_phase (struct trial *t, struct fd_disk *d, struct fm_err *err)
{
  struct fd_clocks c;
  struct phase *p;

  if ((p = fd_phase_begin (t, d, "unmount", &c, err)) == NULL ||
      fd_disk_unmount (d, err) == -1 || fd_phase_end (d, p, &c, err) == -1)
    return -1;
  return 0;
}

/* Metadata-only files the file system could not allocate mounted get
 * their blocks on the unmounted disk (fd_fs.allocate).
 */
static int
allocate_phase (struct trial *t, struct fd_disk *d, struct fm_err *err)
{
  struct fd_clocks c;
  struct phase *p;

  if ((p = fd_phase_begin (t, d, "allocate", &c, err)) == NULL ||
      t->s->fs->allocate (fd_disk_device (d), t->r->m.unallocated,
                          t->r->m.nunallocated, err) == -1 ||
      fd_phase_end (d, p, &c, err) == -1)
    return -1;
  return 0;
}

/* Is the --target's kind a write fault (which needs the write log)? */
static bool
write_target (const struct trial *t)
{
  return t->s->target && fd_target_any (t->s->target, fd_write_fault_kind);
}

/* --crash-points: each promise marked in the write log as it is made. */
static int
mark_promise (void *opaque, uint64_t n, struct fm_err *err)
{
  char line[64];

  snprintf (line, sizeof line, "mark promise-%" PRIu64, n);
  return fd_ctl_ok (fd_disk_control (opaque), line, NULL, err);
}

/* 1. A clean disk, populated, then unmounted (or crashed) and detached.
 * Each server keeps its own ground truth: the populating one's (the
 * crash's power cut) and the broken disk's (faults.jsonl).
 */
static int
populate_disk (struct trial *t, struct fd_attach_opts *o, struct fm_err *err)
{
  char path[PATH_MAX + 32], wlog[PATH_MAX + 48];
  struct fd_populate_opts po;
  struct fd_disk *d;
  struct fd_clocks c;
  struct phase *p;
  struct fm_err e;
  char wkeys[FD_WRITE_FAULT_KEYS][48];
  const char *wextra[FD_WRITE_FAULT_KEYS + 1];
  size_t nw = 0, k;

  /* Writes meet their faults as the file system makes them: the spec's
   * lost, misdirected and (at a power cut) torn writes strike the
   * populate; the rest is the disk coming back broken (attach_broken).
   */
  if (t->s->faults_spec &&
      fd_fault_spec_writes (t->s->faults_spec, wkeys, &nw, err) == -1)
    return -1;
  for (k = 0; k < nw; k++)
    wextra[k] = wkeys[k];
  /* A sweep of crash points rebuilds the disk from its write log, and a
   * write fault undoes a write it has.
   */
  snprintf (wlog, sizeof wlog, "writelog=%s/" FD_WRITELOG_NAME, t->s->dir);
  if (t->s->crash_points || write_target (t))
    wextra[nw++] = wlog;
  snprintf (path, sizeof path, "%s/faults-populate.jsonl", t->s->dir);
  o->faultlog = path;
  o->extra = wextra;
  o->n_extra = nw;
  d = fd_disk_attach (o, err);
  o->faultlog = NULL;
  o->extra = NULL;
  o->n_extra = 0;
  if (d == NULL)
    return -1;
  t->r->attached = fd_disk_via (d); /* static: outlives d */
  po = t->s->populate;
  po.no_sync = t->s->crash; /* leave writes in flight */
  po.unallocated = t->s->fs->allocate != NULL;
  po.promised = t->s->crash_points ? mark_promise : NULL;
  po.opaque = d;
  if ((p = fd_phase_begin (t, d, "populate", &c, err)) == NULL ||
      fd_populate (t->s->mnt, &po, &t->r->m, err) == -1 ||
      fd_phase_end (d, p, &c, err) == -1)
    goto fail;
  snprintf (path, sizeof path, "%s/manifest.tsv", t->s->dir);
  if (fd_manifest_write (&t->r->m, path, err) == -1 ||
      (t->s->crash ? power_cut (t, d, err) : unmount_phase (t, d, err)) == -1 ||
      (t->r->m.nunallocated && allocate_phase (t, d, err) == -1))
    goto fail;
  return fd_trial_detach (d, err);

fail:
  fd_disk_detach (d, &e);
  return -1;
}

static int
trial_steps (struct trial *t, struct fm_err *err)
{
  struct fd_attach_opts o = fd_trial_attach_opts (t);
  char base[PATH_MAX + 16];

  if (t->s->base
          ? fd_base_clone (t, t->s->base, err) == -1
          : populate_disk (t, &o, err) == -1 ||
                (t->s->base_out && fd_base_save (t, t->s->base_out, err) == -1))
    return -1;
  if (t->s->crash_points)
    return fd_crash_points (t, err);
  /* The populated disk is in a base: break a clone of it. */
  if (t->s->base || t->s->base_out) {
    snprintf (base, sizeof base, "%s/disk.store",
              t->s->base ? t->s->base : t->s->base_out);
    o.base = base;
  }
  return fd_trial_broken_steps (t, &o, err);
}

int
fd_trial_run (const struct trial_spec *s, struct trial_result *r,
              struct fm_err *err)
{
  struct trial t = {s, r};
  int rc = trial_steps (&t, err);
  const struct phase *check;

  fd_trial_iron (&t);
  /* fsck or restore: only against a check that ran to its end. */
  if ((check = fd_trial_phase (r, "check")) && check->outcome)
    fd_trial_restore_estimate (&t);
  else
    r->restore_s = -1;
  return rc;
}
