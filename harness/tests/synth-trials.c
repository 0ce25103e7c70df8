/* futuredisk — harness: trials made up for the comparison's tests,
 * recorded through the real record and database code (fd_trial_record,
 * fd_db_add), so that `futuredisk compare` can be tested on nights of
 * chosen figures without running a disk.
 *
 *   synth-trials DB < LINES
 *
 * One trial per line of KEY=VALUE words; a key not given keeps its
 * default.  Inputs: campaign (t), run, fs (ext4), profile (roadmap-2006),
 * size (256M), fill (5), seed (1), rep (0), target, faults, crash (0),
 * think (zero), cloned (0).  Outcomes: check_s (virtual seconds; without
 * it no checker ran), check, repair, recheck (CLEAN), mount (MOUNTED,
 * UNMOUNTABLE, RECOVERED; "-" for none), files (100), error (a word),
 * each audit class (intact: files less the others) and each durability
 * class (counted only with crash=1).  Exit 1 naming the line on bad
 * input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "trial.h"

struct synth {
  struct trial_spec s;
  struct trial_result r;
  char campaign[64], run[96], fs[16], profile[64], size[16], target[64],
      faults[64], think[16], check[24], repair[24], recheck[24], mount[24];
  double check_s;
  unsigned long long files;
};

/* An audit or durability class's count named key: 0, or -1 if key is
 * neither.
 */
static int
class_count (struct synth *x, const char *key, unsigned long long v)
{
  size_t i;

  for (i = 0; i < FD_AUDIT_NCLASSES; i++)
    if (strcmp (key, fd_audit_class_name (i)) == 0) {
      x->r.audit.count[i] = v;
      return 0;
    }
  for (i = 0; i < FD_DURABILITY_NCLASSES; i++)
    if (strcmp (key, fd_durability_class_name (i)) == 0) {
      x->r.audit.durability[i] = v;
      return 0;
    }
  return -1;
}

/* One KEY=VALUE word into x: 0, or -1 if the key is unknown. */
static int
word (struct synth *x, const char *key, const char *v)
{
  const struct {
    const char *key;
    char *buf;
    size_t len;
  } strs[] = {
      {"campaign", x->campaign, sizeof x->campaign},
      {"run", x->run, sizeof x->run},
      {"fs", x->fs, sizeof x->fs},
      {"profile", x->profile, sizeof x->profile},
      {"size", x->size, sizeof x->size},
      {"target", x->target, sizeof x->target},
      {"faults", x->faults, sizeof x->faults},
      {"think", x->think, sizeof x->think},
      {"check", x->check, sizeof x->check},
      {"repair", x->repair, sizeof x->repair},
      {"recheck", x->recheck, sizeof x->recheck},
      {"mount", x->mount, sizeof x->mount},
      {"error", x->r.error, sizeof x->r.error},
  };
  size_t i;

  for (i = 0; i < sizeof strs / sizeof strs[0]; i++)
    if (strcmp (key, strs[i].key) == 0) {
      snprintf (strs[i].buf, strs[i].len, "%s", v);
      return 0;
    }
  if (strcmp (key, "seed") == 0)
    x->s.seed = strtoull (v, NULL, 10);
  else if (strcmp (key, "rep") == 0)
    x->s.rep = strtoull (v, NULL, 10);
  else if (strcmp (key, "fill") == 0)
    x->s.fill = strtod (v, NULL);
  else if (strcmp (key, "crash") == 0)
    x->s.crash = atoi (v);
  else if (strcmp (key, "cloned") == 0)
    x->r.cloned = atoi (v);
  else if (strcmp (key, "check_s") == 0)
    x->check_s = strtod (v, NULL);
  else if (strcmp (key, "files") == 0)
    x->files = strtoull (v, NULL, 10);
  else
    return class_count (x, key, strtoull (v, NULL, 10));
  return 0;
}

/* A checker phase of the trial. */
static void
checker (struct synth *x, const char *name, const char *outcome)
{
  struct phase *p = &x->r.ph[x->r.nph++];

  *p = (struct phase){.name = name,
                      .virtual_s = x->check_s,
                      .charged_s = -1,
                      .outcome = outcome,
                      .status = strcmp (outcome, "CLEAN") ? 1 : 0};
}

/* The spec and result x's words describe. */
static int
build (struct synth *x, struct fm_err *err)
{
  unsigned long long lost = 0;
  size_t i;

  if ((x->s.fs = fd_fs_find (x->fs, err)) == NULL)
    return -1;
  x->s.profile = x->profile, x->s.size = x->size;
  x->s.campaign = x->campaign, x->s.run_id = x->run, x->s.think = x->think;
  x->s.target = x->target, x->s.faults_spec = x->faults;
  x->s.time_mode = "virtual";
  x->r.ph[x->r.nph++] = (struct phase){.name = "populate", .virtual_s = 1};
  x->r.ph[x->r.nph++] =
      (struct phase){.name = x->s.crash ? "crash" : "unmount"};
  if (x->check_s >= 0) {
    checker (x, "check", x->check);
    checker (x, "repair", x->repair);
    checker (x, "recheck", x->recheck);
  }
  x->r.mount = strcmp (x->mount, "-") ? x->mount : NULL;
  x->r.audited = x->r.mount && strcmp (x->mount, FD_MOUNT_UNMOUNTABLE) != 0;
  for (i = 0; i < FD_AUDIT_NCLASSES; i++)
    if (i != FD_AUDIT_INTACT)
      lost += x->r.audit.count[i];
  x->r.audit.count[FD_AUDIT_INTACT] = x->files > lost ? x->files - lost : 0;
  x->r.m.n = x->files;
  x->r.probe_ok = x->r.audited;
  return 0;
}

/* Record one line's trial in db: 0, or -1 with err. */
static int
synth (const char *db, char *line, struct fm_err *err)
{
  static struct synth x;
  char *record = NULL, *tok, *save = NULL;
  size_t len = 0;
  FILE *fp;
  int rc;

  memset (&x, 0, sizeof x);
  snprintf (x.campaign, sizeof x.campaign, "t");
  snprintf (x.fs, sizeof x.fs, "ext4");
  snprintf (x.profile, sizeof x.profile, "roadmap-2006");
  snprintf (x.size, sizeof x.size, "256M");
  snprintf (x.think, sizeof x.think, "zero");
  snprintf (x.check, sizeof x.check, "CLEAN");
  snprintf (x.repair, sizeof x.repair, "CLEAN");
  snprintf (x.recheck, sizeof x.recheck, "CLEAN");
  snprintf (x.mount, sizeof x.mount, FD_MOUNT_MOUNTED);
  x.s.seed = 1, x.s.fill = 5, x.files = 100, x.check_s = -1;
  x.r.restore_s = -1;
  for (tok = strtok_r (line, " \t\n", &save); tok;
       tok = strtok_r (NULL, " \t\n", &save)) {
    char *eq = strchr (tok, '=');
    if (eq == NULL)
      return fm_fail (err, "'%s' is not KEY=VALUE", tok);
    *eq = '\0';
    if (word (&x, tok, eq + 1) == -1)
      return fm_fail (err, "unknown key '%s'", tok);
  }
  if (build (&x, err) == -1)
    return -1;
  if ((fp = open_memstream (&record, &len)) == NULL)
    return fm_fail (err, "out of memory");
  rc = fd_trial_record (&x.s, &x.r, fp, err);
  if (fclose (fp) != 0 && rc == 0)
    rc = fm_fail (err, "out of memory");
  if (rc == 0)
    rc = fd_db_add (db, &x.s, &x.r, record, NULL, err);
  free (record);
  return rc;
}

int
main (int argc, char **argv)
{
  char line[4096];
  struct fm_err err;
  int n = 0;

  if (argc != 2) {
    fprintf (stderr, "Usage: %s DB < LINES\n", argv[0]);
    return 2;
  }
  while (fgets (line, sizeof line, stdin)) {
    n++;
    if (strspn (line, " \t\n") == strlen (line))
      continue;
    if (synth (argv[1], line, &err) != 0) {
      fprintf (stderr, "%s: line %d: %s\n", argv[0], n, err.msg);
      return 1;
    }
  }
  return 0;
}
