/* futuredisk — harness: the keys of a trial's inputs (see spec.h). */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faultmodels/profile.h"
#include "faultmodels/units.h"
#include "attach.h"
#include "fsadapter.h"
#include "hostrun.h"
#include "load-profile.h"
#include "spec.h"
#include "target.h"
#include "trial.h"

typedef int set_fn (struct trial_spec *s, const char *label, const char *v,
                    struct fm_err *err);

static set_fn set_fs, set_profile, set_size, set_fill, set_meta, set_tree,
    set_crash, set_escalate, set_faults, set_target, set_timeout, set_time,
    set_think, set_repair_cut, set_crash_points, set_host, set_attach;

/* opt + 2 is the campaign key.  none: the value that means "not given";
 * single: one value per matrix; flag: yes/no, "--opt" alone in run.
 */
static const struct {
  const char *opt, *dflt, *none;
  bool flag, single;
  set_fn *set;
} keys[FD_NKEYS] = {
    [FD_KEY_FS] = {"--fs", NULL, NULL, false, false, set_fs},
    [FD_KEY_PROFILE] = {"--profile", "roadmap-2006", NULL, false, false,
                        set_profile},
    [FD_KEY_SIZE] = {"--size", "1G", NULL, false, false, set_size},
    [FD_KEY_FILL] = {"--fill", "30", NULL, false, false, set_fill},
    [FD_KEY_META_ONLY] = {"--meta-only", NULL, "0", false, false, set_meta},
    [FD_KEY_TREE] = {"--tree", "mixed", NULL, false, false, set_tree},
    [FD_KEY_CRASH] = {"--crash", NULL, "no", true, false, set_crash},
    [FD_KEY_ESCALATE] = {"--escalate", NULL, "no", true, false, set_escalate},
    [FD_KEY_FAULTS] = {"--faults", NULL, "", false, false, set_faults},
    [FD_KEY_TARGET] = {"--target", NULL, "none", false, false, set_target},
    [FD_KEY_TIMEOUT] = {"--timeout", "3600", NULL, false, true, set_timeout},
    [FD_KEY_TIME] = {"--time", "virtual", NULL, false, false, set_time},
    [FD_KEY_THINK] = {"--think", "auto", NULL, false, false, set_think},
    [FD_KEY_REPAIR_CUT] = {"--repair-cut", NULL, "0", false, false,
                           set_repair_cut},
    [FD_KEY_CRASH_POINTS] = {"--crash-points", NULL, "0", false, false,
                             set_crash_points},
    [FD_KEY_HOST] = {"--host", NULL, "", false, false, set_host},
    [FD_KEY_ATTACH] = {"--attach", NULL, "auto", false, false, set_attach},
};

const char *
fd_key_name (enum fd_key k)
{
  return keys[k].opt + 2;
}

const char *
fd_key_option (enum fd_key k)
{
  return keys[k].opt;
}

enum fd_key
fd_key_find (const char *name)
{
  size_t k;

  for (k = 0; k < FD_NKEYS; k++)
    if (strcmp (name, keys[k].opt + 2) == 0)
      break;
  return (enum fd_key)k;
}

const char *
fd_key_default (enum fd_key k)
{
  return keys[k].dflt ? keys[k].dflt : keys[k].none;
}

bool
fd_key_none (enum fd_key k, const char *v)
{
  return keys[k].none && strcmp (v, keys[k].none) == 0;
}

bool
fd_key_flag (enum fd_key k)
{
  return keys[k].flag;
}

bool
fd_key_single (enum fd_key k)
{
  return keys[k].single;
}

int
fd_spec_set (struct trial_spec *s, enum fd_key k, const char *v, bool dashes,
             struct fm_err *err)
{
  return keys[k].set (s, dashes ? keys[k].opt : keys[k].opt + 2, v, err);
}

void
fd_spec_defaults (struct trial_spec *s)
{
  struct fm_err err;
  size_t k;

  /* The defaults are valid: a failure here is a bug in the table. */
  for (k = 0; k < FD_NKEYS; k++)
    if (keys[k].dflt && fd_spec_set (s, k, keys[k].dflt, true, &err) == -1) {
      fprintf (stderr, "futuredisk: default of %s: %s\n", keys[k].opt, err.msg);
      abort ();
    }
}

int
fd_spec_from (struct trial_spec *s, const char *const *value,
              struct fm_err *err)
{
  size_t k;

  fd_spec_defaults (s);
  for (k = 0; k < FD_NKEYS; k++)
    if (value[k] && fd_spec_set (s, k, value[k], false, err) == -1)
      return -1;
  return 0;
}

static int
set_fs (struct trial_spec *s, const char *label, const char *v,
        struct fm_err *err)
{
  return (s->fs = fd_fs_find (v, err)) ? 0 : -1;
}

/* Loaded here, once: its capacity (--size full) and host key are kept. */
static int
set_profile (struct trial_spec *s, const char *label, const char *v,
             struct fm_err *err)
{
  struct fm_profile p;

  if (fd_load_profile (v, &p, err) == -1)
    return -1;
  s->profile = v;
  s->profile_capacity = p.capacity;
  snprintf (s->profile_host, sizeof s->profile_host, "%s", p.host);
  return 0;
}

/* SIZE, or full: the profile's own capacity. */
static int
set_size (struct trial_spec *s, const char *label, const char *v,
          struct fm_err *err)
{
  uint64_t bytes;

  if (strcmp (v, "full") && fm_parse_size (label, v, &bytes, err) == -1)
    return -1;
  s->size = v;
  return 0;
}

static int
set_fill (struct trial_spec *s, const char *label, const char *v,
          struct fm_err *err)
{
  return fm_parse_double (label, v, 0, 95, &s->fill, err);
}

static int
set_meta (struct trial_spec *s, const char *label, const char *v,
          struct fm_err *err)
{
  s->populate.meta_only = true;
  return fm_parse_uint (label, v, 1, 100000000, &s->populate.files, err);
}

static int
set_tree (struct trial_spec *s, const char *label, const char *v,
          struct fm_err *err)
{
  return fd_tree_parse (label, v, &s->populate.tree, err);
}

/* yes or no into *b ("yes" is what run's bare --crash stands for). */
static int
set_yes_no (bool *b, const char *label, const char *v, struct fm_err *err)
{
  if (strcmp (v, "yes") && strcmp (v, "no"))
    return fm_fail (err, "%s '%.32s': no or yes", label, v);
  *b = strcmp (v, "yes") == 0;
  return 0;
}

static int
set_crash (struct trial_spec *s, const char *label, const char *v,
           struct fm_err *err)
{
  return set_yes_no (&s->crash, label, v, err);
}

static int
set_escalate (struct trial_spec *s, const char *label, const char *v,
              struct fm_err *err)
{
  return set_yes_no (&s->escalate, label, v, err);
}

/* Checked here; split into the plugin's keys by whoever starts it. */
static int
set_faults (struct trial_spec *s, const char *label, const char *v,
            struct fm_err *err)
{
  if (fd_fault_spec_check (v, err) == -1)
    return -1;
  s->faults_spec = v;
  return 0;
}

static int
set_target (struct trial_spec *s, const char *label, const char *v,
            struct fm_err *err)
{
  char msg[sizeof err->msg];

  if (fd_target_check (v, err) == -1) {
    snprintf (msg, sizeof msg, "%s", err->msg);
    return fm_fail (err, "%s%s", label[0] == '-' ? "--" : "", msg);
  }
  s->target = v;
  return 0;
}

static int
set_timeout (struct trial_spec *s, const char *label, const char *v,
             struct fm_err *err)
{
  return fm_parse_double (label, v, 1, 1e7, &s->timeout, err);
}

/* What the plugin's time= takes: virtual, real, scale:F. */
static int
set_time (struct trial_spec *s, const char *label, const char *v,
          struct fm_err *err)
{
  char what[48];
  double f;

  s->time_mode = v;
  if (strcmp (v, "virtual") == 0 || strcmp (v, "real") == 0)
    return 0;
  snprintf (what, sizeof what, "%s scale", label);
  if (strncmp (v, "scale:", 6) == 0)
    return fm_parse_double (what, v + 6, 1e-6, 1e6, &f, err);
  return fm_fail (err, "%s: '%.64s' is not virtual, real or scale:F", label, v);
}

static int
set_think (struct trial_spec *s, const char *label, const char *v,
           struct fm_err *err)
{
  s->think = v;
  return fd_hostrun_check (label, v, NULL, NULL, err);
}

static int
set_repair_cut (struct trial_spec *s, const char *label, const char *v,
                struct fm_err *err)
{
  return fm_parse_uint (label, v, 1, UINT64_MAX, &s->repair_cut, err);
}

/* N, or all (every flush: UINT64_MAX): states of one crash workload. */
static int
set_crash_points (struct trial_spec *s, const char *label, const char *v,
                  struct fm_err *err)
{
  s->crash = true;
  if (strcmp (v, "all") == 0) {
    s->crash_points = UINT64_MAX;
    return 0;
  }
  return fm_parse_uint (label, v, 1, 1000000, &s->crash_points, err);
}

/* A host of host.h: its speed (think=cpu) and RAM. */
static int
set_host (struct trial_spec *s, const char *label, const char *v,
          struct fm_err *err)
{
  s->host = v;
  return fd_hostrun_check (NULL, NULL, label, v, err);
}

static int
set_attach (struct trial_spec *s, const char *label, const char *v,
            struct fm_err *err)
{
  s->via = v;
  return fd_attach_via_check (label, v, err);
}

const char *
fd_spec_host (const struct trial_spec *s)
{
  return s->host ? s->host : s->profile_host[0] ? s->profile_host : NULL;
}

/* The disk --size asks for must hold the file system. */
static int
check_size (const struct trial_spec *s, const char *label, struct fm_err *err)
{
  uint64_t bytes = s->profile_capacity;

  if (strcmp (s->size, "full"))
    fm_parse_size (label, s->size, &bytes, err); /* checked when set */
  if (bytes < s->fs->min_size)
    return fm_fail (err, "%s %s: %s needs a disk of at least %" PRIu64 " MiB",
                    label, s->size, s->fs->name, s->fs->min_size >> 20);
  return 0;
}

int
fd_spec_check (const struct trial_spec *s, bool dashes, enum fd_key *bad,
               struct fm_err *err)
{
  const char *l[FD_NKEYS];
  char type[64];
  size_t k;

  for (k = 0; k < FD_NKEYS; k++)
    l[k] = dashes ? keys[k].opt : keys[k].opt + 2;
  *bad = FD_KEY_SIZE;
  if (check_size (s, l[FD_KEY_SIZE], err) == -1)
    return -1;
  *bad = FD_KEY_TREE;
  if (s->crash && s->populate.tree != FD_TREE_MIXED)
    return fm_fail (err,
                    "%s %s has no crash workload (%s, %s): only the mixed "
                    "tree has one",
                    l[FD_KEY_TREE], fd_tree_name (s->populate.tree),
                    l[FD_KEY_CRASH], l[FD_KEY_CRASH_POINTS]);
  *bad = FD_KEY_CRASH_POINTS;
  if (s->crash_points && (s->repair_cut || s->target))
    return fm_fail (err, "%s goes with neither %s nor %s",
                    l[FD_KEY_CRASH_POINTS], l[FD_KEY_REPAIR_CUT],
                    l[FD_KEY_TARGET]);
  if (s->crash_points && s->populate.meta_only)
    return fm_fail (err, "%s needs written files, not %s",
                    l[FD_KEY_CRASH_POINTS], l[FD_KEY_META_ONLY]);
  *bad = FD_KEY_CRASH;
  if (s->crash && s->populate.meta_only && s->fs->allocate)
    return fm_fail (err,
                    "%s with %s: %s's files get their blocks after a clean "
                    "unmount",
                    l[FD_KEY_CRASH], l[FD_KEY_META_ONLY], s->fs->name);
  *bad = FD_KEY_TARGET;
  if (s->target && !fd_target_types_known (s->target, s->fs->target_types, type,
                                           sizeof type))
    return fm_fail (err, "%s: unknown type '%s' for %s (%s)", l[FD_KEY_TARGET],
                    type, s->fs->name, s->fs->target_types);
  return 0;
}
