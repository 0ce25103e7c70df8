/* futuredisk — harness: steps 2-4 of a trial on a disk already populated: it
 * comes back broken, is checked, repaired, mounted and audited (see
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
#include "crashpoints.h" /* FD_WRITELOG_NAME */
#include "ctlclient.h"
#include "fsadapter.h"
#include "json.h"
#include "proc.h"
#include "trial-int.h"

static int
write_probe (struct trial *t)
{
  char path[PATH_MAX + 32];
  static char buf[1 << 20];
  FILE *fp;
  int ok;

  snprintf (path, sizeof path, "%s/futuredisk-probe", t->s->mnt);
  memset (buf, 0x5a, sizeof buf);
  fp = fopen (path, "w");
  ok = fp && fwrite (buf, 1, sizeof buf, fp) == sizeof buf &&
       fflush (fp) == 0 && fsync (fileno (fp)) == 0;
  if (fp)
    ok = fclose (fp) == 0 && ok;
  unlink (path);
  return ok;
}

void
fd_trial_read_stats (const struct trial_spec *s, struct trial_result *r)
{
  char path[PATH_MAX + 32];
  FILE *fp;
  size_t n;

  snprintf (path, sizeof path, "%s/stats.json", s->dir);
  if ((fp = fopen (path, "r")) == NULL)
    return;
  n = fread (r->stats, 1, sizeof r->stats - 1, fp);
  r->stats[n] = '\0';
  while (n > 0 && (r->stats[n - 1] == '\n'))
    r->stats[--n] = '\0';
  fclose (fp);
}

/* A repair that refuses a dirty log (xfs_repair's exit 2): replay it by
 * mounting and unmounting, and repair again; if the mount fails too,
 * repair destroying the log (fstests' _repair_scratch_fs ladder).
 */
static int
replay_ladder (struct trial *t, struct fd_disk *d, struct fm_err *err)
{
  const struct phase *r = &t->r->ph[t->r->nph - 1];
  struct fd_clocks c;
  struct phase *p;
  struct fm_err e;
  bool mounted;

  if (t->s->fs->dirty_log_exit == 0 || r->status != t->s->fs->dirty_log_exit)
    return 0;
  if ((p = fd_phase_begin (t, d, "replay-mount", &c, err)) == NULL)
    return -1;
  mounted = fd_disk_mount (d, &e) == 0 && fd_disk_unmount (d, &e) == 0;
  p->status = mounted ? 0 : 1;
  p->outcome = mounted ? "CLEAN" : "CHECKER_ERROR";
  if (fd_phase_end (d, p, &c, err) == -1)
    return -1;
  return fd_trial_checker (t, d, mounted ? "repair" : "repair-zap-log", true,
                           err);
}

/* 2. The disk comes back broken: fault keys at start, targets now.  The
 * same server serves the checks and the mount after them: faults
 * injected through its control socket live in it.
 */
static struct fd_disk *
attach_broken (struct trial *t, struct fd_attach_opts *o, struct fm_err *err)
{
  struct fd_disk *d;
  struct fd_clocks c;
  struct phase *p;
  struct fm_err e;

  o->mkfs = false;
  o->defer_mount = true;
  o->extra = t->s->extra;
  o->n_extra = t->s->n_extra;
  if ((d = fd_disk_attach (o, err)) == NULL)
    return NULL;
  if ((p = fd_phase_begin (t, d, "inject", &c, err)) == NULL ||
      (t->s->target && fd_trial_inject (t, d, err) == -1) ||
      fd_phase_end (d, p, &c, err) == -1) {
    fd_disk_detach (d, &e);
    return NULL;
  }
  return d;
}

/* Is the last checker phase's outcome a checker that failed? */
static bool
checker_failed (const struct trial *t)
{
  const char *o = t->r->ph[t->r->nph - 1].outcome;

  return o && (strcmp (o, "CHECKER_ERROR") == 0 ||
               strcmp (o, "CHECKER_CRASH") == 0 || strcmp (o, "TIMEOUT") == 0 ||
               strcmp (o, "LOOPING") == 0 || strcmp (o, "OOM") == 0);
}

static bool
last_clean (const struct trial *t)
{
  const char *o = t->r->ph[t->r->nph - 1].outcome;

  return o && strcmp (o, "CLEAN") == 0;
}

/* 3. Check, repair, check again.  With --repair-cut K the power goes
 * after the repair's Kth write (the machine dies with the checker: what
 * it writes after that never reaches the disk); when it comes back the
 * checker repairs again, and once more if the recheck is not clean
 * (Gatla et al., FAST'18).  t->r->cut_outcome says how that ended; a
 * file system left unmountable is decided at the mount.
 */
static int
check_and_repair (struct trial *t, struct fd_disk *d, struct fm_err *err)
{
  const char *ctl = fd_disk_control (d);
  char line[64];
  struct fd_json *j = NULL;
  bool failed = false;

  if (fd_trial_checker (t, d, "check", false, err) == -1)
    return -1;
  snprintf (line, sizeof line, "poweroff %" PRIu64, t->s->repair_cut);
  if (t->s->repair_cut && fd_ctl_ok (ctl, line, NULL, err) == -1)
    return -1;
  if (fd_trial_checker (t, d, "repair", true, err) == -1)
    return -1;
  if (t->s->repair_cut) {
    /* Power back on, whether or not it went: an armed cut is forgotten. */
    if (fd_ctl_ok (ctl, "poweron", &j, err) == -1 ||
        fd_json_bool (j, "was_off", &t->r->cut, err) == -1) {
      fd_json_free (j);
      return -1;
    }
    fd_json_free (j);
    t->r->cut_outcome = FD_CUT_NOT_REACHED;
    if (t->r->cut) {
      if (fd_trial_checker (t, d, "repair-after-cut", true, err) == -1)
        return -1;
      failed = checker_failed (t);
    }
  }
  if (replay_ladder (t, d, err) == -1 ||
      fd_trial_checker (t, d, "recheck", false, err) == -1)
    return -1;
  if (!t->r->cut)
    return 0;
  if (!failed && last_clean (t)) {
    t->r->cut_outcome = FD_CUT_RECOVERED;
    return 0;
  }
  if (fd_trial_checker (t, d, "repair-again", true, err) == -1)
    return -1;
  failed = failed || checker_failed (t);
  if (fd_trial_checker (t, d, "recheck-again", false, err) == -1)
    return -1;
  t->r->cut_outcome =
      !failed && last_clean (t) ? FD_CUT_ANOTHER : FD_CUT_UNRECOVERABLE;
  return 0;
}

/* How the trial's disk is attached (populate makes the file system). */
struct fd_attach_opts
fd_trial_attach_opts (struct trial *t)
{
  return (struct fd_attach_opts){
      .dir = t->s->dir,
      .profile = t->s->profile,
      /* "full": the profile's own capacity */
      .size = strcmp (t->s->size, "full") ? t->s->size : NULL,
      .seed = t->s->seed,
      .store = t->s->store,
      .fs = t->s->fs->name,
      .mkfs = true,
      .mount = t->s->mnt,
      .via = t->s->via,
      .kernel_log = true};
}

/* 4a. Mount after the repair.  A file system the repair left
 * unmountable is a finding (t->r->mount, with the kernel's reason), not an
 * error; a server that died under the disk is the rig's failure.  With
 * --escalate the adapter's next move runs as the phase "escalate" and
 * the mount is tried once more.
 */
static int
mount_repaired (struct trial *t, struct fd_disk *d, struct fm_err *err)
{
  struct fm_err e;

  if (fd_disk_mount (d, &e) == 0) {
    t->r->mount = FD_MOUNT_MOUNTED;
    return 0;
  }
  if (fd_disk_check (d, NULL, err) == -1)
    return -1;
  t->r->mount = FD_MOUNT_UNMOUNTABLE;
  snprintf (t->r->mount_reason, sizeof t->r->mount_reason, "%s",
            fd_disk_mount_reason (d));
  if (!t->s->escalate || t->s->fs->escalate[0][0] == NULL)
    return 0;
  if (fd_trial_checker (t, d, "escalate", true, err) == -1)
    return -1;
  if (fd_disk_mount (d, &e) == 0)
    t->r->mount = FD_MOUNT_RECOVERED;
  else if (fd_disk_check (d, NULL, err) == -1)
    return -1;
  return 0;
}

/* 2-4 on the disk in t->s->store: it comes back broken, is checked and
 * repaired, mounted and audited.
 */
int
fd_trial_broken_steps (struct trial *t, struct fd_attach_opts *o,
                       struct fm_err *err)
{
  struct fd_disk *d;
  struct fm_err e;

  if ((d = attach_broken (t, o, err)) == NULL)
    return -1;

  /* 3. Check, repair, check again. */
  if (t->s->check_only) {
    if (fd_trial_checker (t, d, "check", false, err) == -1)
      goto fail;
    if (fd_trial_detach (d, err) == -1)
      return -1;
    fd_trial_read_stats (t->s, t->r);
    return 0;
  }
  if (check_and_repair (t, d, err) == -1)
    goto fail;

  /* 4. Mount, audit every file, prove the file system takes writes. */
  if (mount_repaired (t, d, err) == -1)
    goto fail;
  if (strcmp (t->r->mount, FD_MOUNT_UNMOUNTABLE) == 0) {
    if (t->r->cut)
      t->r->cut_outcome = FD_CUT_UNRECOVERABLE;
    fd_disk_detach (d, &e);
    fd_trial_read_stats (t->s, t->r);
    return 0;
  }
  if (fd_trial_audit (t, d, err) == -1)
    goto fail;
  fd_trial_map_damaged (t, d);
  t->r->probe_ok = write_probe (t);
  if (fd_trial_detach (d, err) == -1)
    return -1;
  fd_trial_explain_damaged (t);
  fd_trial_read_stats (t->s, t->r);
  return 0;

fail:
  fd_disk_detach (d, &e);
  return -1;
}

int
fd_trial_run_disk (const struct trial_spec *s, struct trial_result *r,
                   struct fm_err *err)
{
  struct trial t = {s, r};
  struct fd_attach_opts o = fd_trial_attach_opts (&t);

  return fd_trial_broken_steps (&t, &o, err);
}

void
fd_trial_clean (const struct trial_spec *s, bool remove_dir)
{
  static const char *const files[] = {"disk.store",
                                      "manifest.tsv",
                                      "stats.json",
                                      "faults.jsonl",
                                      "faults-populate.jsonl",
                                      FD_WRITELOG_NAME,
                                      "nbd.sock",
                                      "control.sock",
                                      "nbdkit.log",
                                      "nbdfuse.log",
                                      "check.out",
                                      "repair.out",
                                      "recheck.out",
                                      "repair-after-cut.out",
                                      "repair-again.out",
                                      "recheck-again.out",
                                      "repair-zap-log.out",
                                      "escalate.out",
                                      "kernel.log",
                                      NULL};
  char path[PATH_MAX + 32];
  size_t i;

  /* A store of more than 8 TiB continues in disk.store.1, .2, ... */
  for (i = 1; i < 64; i++) {
    snprintf (path, sizeof path, "%s/disk.store.%zu", s->dir, i);
    if (unlink (path) == -1)
      break;
  }
  for (i = 0; files[i]; i++) {
    const char *out = strstr (files[i], ".out");
    size_t k;
    snprintf (path, sizeof path, "%s/%s", s->dir, files[i]);
    unlink (path);
    /* A phase run again saved its output as NAME-K.out
     * (fd_evidence_output_name).
     */
    for (k = 2; out && k <= MAX_PHASES; k++) {
      snprintf (path, sizeof path, "%s/%.*s-%zu.out", s->dir,
                (int)(out - files[i]), files[i], k);
      unlink (path);
    }
  }
  rmdir (s->mnt);
  if (remove_dir)
    rmdir (s->dir);
}

void
fd_scratch_template (const char *what, char *buf, size_t len)
{
  const char *dir = getenv ("TMPDIR");

  snprintf (buf, len, "%s/futuredisk-%s.XXXXXX", dir && *dir ? dir : "/var/tmp",
            what);
}
