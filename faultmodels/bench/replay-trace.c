/* futuredisk — faultmodels: a recorded request stream, replayed.
 *
 * Reads the plugin's request trace (nbdkit -D futuredisk.trace=1: lines
 * "trace: OP offset=N count=N arrival_ns=N done_ns=N ...") of a client
 * that had one request in flight at a time, and serves it again through
 * a fresh drive model, each request arriving the recorded time after the
 * previous one's reply: the think time the plugin charged.  With
 * --jitter F each think time is scaled by (1 + F u), u uniform in
 * [-1, 1] and drawn from the run's seed, so a set of runs shows how far
 * the total moves when the host's time between requests moves that much
 * and nothing else does.  With --think NS every think time is NS instead:
 * what the same requests cost behind a host that takes that long.
 *
 * The output is virtual time: the same on every machine.
 *
 * Usage: replay-trace [--profile NAME] [--seed N] [--think NS] [--jitter F]
 *                     [--runs N] [TRACE]
 *        (defaults roadmap-2006, 1, the recorded think times, 0, 1; stdin)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faultmodels/disk.h"
#include "faultmodels/error.h"
#include "faultmodels/profile.h"
#include "faultmodels/rng.h"
#include "faultmodels/units.h"

struct step {
  enum fm_op op;
  uint64_t offset, length, think_ns;
};

struct trace {
  struct step *v;
  size_t n, cap;
};

static void
usage (FILE *f)
{
  fputs ("Usage: replay-trace [--profile NAME] [--seed N] [--think NS] "
         "[--jitter F]\n"
         "                    [--runs N] [TRACE]\n"
         "Replay a plugin request trace (nbdkit -D futuredisk.trace=1) at "
         "queue depth 1\n"
         "through a fresh drive model, with the recorded think times.\n\n"
         "  --profile NAME  built-in profile (default roadmap-2006)\n"
         "  --seed N        the drive's platter phase (default 1, the "
         "harness's)\n"
         "  --think NS      every think time NS instead of the recorded "
         "ones\n"
         "  --jitter F      scale each think time by 1 + F*u, u uniform in "
         "[-1, 1]\n"
         "                  (default 0)\n"
         "  --runs N        replays, run i drawing u from seed i (default "
         "1)\n"
         "  TRACE           the trace (default stdin); other lines are "
         "skipped\n",
         f);
}

static int
op_of (const char *name, enum fm_op *op)
{
  static const struct {
    const char *name;
    enum fm_op op;
  } ops[] = {{"pread", FM_OP_READ},  {"pwrite", FM_OP_WRITE},
             {"zero", FM_OP_ZERO},   {"trim", FM_OP_TRIM},
             {"flush", FM_OP_FLUSH}, {"cache", FM_OP_READ}};
  size_t i;

  for (i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp (name, ops[i].name) == 0) {
      *op = ops[i].op;
      return 0;
    }
  return -1;
}

/* One trace line into a step; the think time is this arrival less the
 * previous reply.  0 if the line is not a request, -1 if it is a bad one.
 */
static int
parse_line (const char *line, uint64_t *prev_done, struct step *s)
{
  const char *p = strstr (line, "trace: ");
  char name[16];
  uint64_t arrival, done;

  if (p == NULL)
    return 0;
  if (sscanf (p,
              "trace: %15s offset=%" SCNu64 " count=%" SCNu64
              " arrival_ns=%" SCNu64 " done_ns=%" SCNu64,
              name, &s->offset, &s->length, &arrival, &done) != 5 ||
      op_of (name, &s->op) == -1 || done < arrival || arrival < *prev_done)
    return -1;
  s->think_ns = arrival - *prev_done;
  *prev_done = done;
  return 1;
}

static int
read_trace (FILE *f, const char *name, struct trace *t)
{
  char line[1024];
  uint64_t prev_done = 0, lineno = 0;

  while (fgets (line, sizeof line, f)) {
    struct step s;
    int r;

    lineno++;
    r = parse_line (line, &prev_done, &s);
    if (r == -1) {
      fprintf (stderr,
               "replay-trace: %s:%" PRIu64 ": not a request of a client "
               "with one in flight: %s",
               name, lineno, line);
      return -1;
    }
    if (r == 0)
      continue;
    if (t->n == t->cap) {
      size_t cap = t->cap ? 2 * t->cap : 1024;
      struct step *v = realloc (t->v, cap * sizeof *v);

      if (v == NULL) {
        fprintf (stderr, "replay-trace: out of memory\n");
        return -1;
      }
      t->v = v;
      t->cap = cap;
    }
    t->v[t->n++] = s;
  }
  if (t->n == 0) {
    fprintf (stderr, "replay-trace: %s: no trace lines\n", name);
    return -1;
  }
  return 0;
}

/* u uniform in [-1, 1], from (seed, i). */
static double
unit (uint64_t seed, uint64_t i)
{
  return (double)fm_hash (seed, 7, i, 0) / (double)UINT64_MAX * 2 - 1;
}

/* The replay's inputs. */
struct how {
  uint64_t seed;  /* the drive's */
  uint64_t think; /* UINT64_MAX: as recorded */
  double jitter;
};

static int
replay (const struct fm_profile *p, const struct how *h, const struct trace *t,
        uint64_t run)
{
  struct fm_err err;
  struct fm_disk *d = fm_disk_new (p, h->seed, NULL, &err);
  uint64_t now = 0, think = 0, hits = 0;
  size_t i;

  if (d == NULL) {
    fprintf (stderr, "replay-trace: %s\n", err.msg);
    return -1;
  }
  for (i = 0; i < t->n; i++) {
    const struct step *s = &t->v[i];
    uint64_t base = h->think == UINT64_MAX ? s->think_ns : h->think;
    double g = (double)base * (1 + h->jitter * unit (run, i));
    struct fm_request rq = {s->op, 0, s->offset, s->length, 0};
    struct fm_timing tm;

    rq.arrival_ns = now + (uint64_t)(g + 0.5);
    think += rq.arrival_ns - now;
    fm_disk_submit (d, &rq, &tm);
    hits += tm.cache_hit;
    now = tm.done_ns;
  }
  printf ("%" PRIu64 " %.6f %.6f %" PRIu64 "\n", run, now / 1e9, think / 1e9,
          hits);
  fm_disk_free (d);
  return 0;
}

int
main (int argc, char **argv)
{
  const char *profile = "roadmap-2006", *path = NULL;
  struct how h = {1, UINT64_MAX, 0};
  uint64_t runs = 1, r;
  struct fm_profile p;
  struct fm_err err;
  struct trace t = {NULL, 0, 0};
  FILE *f = stdin;
  int i, rc, ret = 0;

  for (i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    char *end;

    if (strcmp (a, "-h") == 0 || strcmp (a, "--help") == 0) {
      usage (stdout);
      return 0;
    }
    if (a[0] != '-') {
      path = a;
      continue;
    }
    if (strcmp (a, "--profile") && strcmp (a, "--seed") &&
        strcmp (a, "--runs") && strcmp (a, "--jitter") &&
        strcmp (a, "--think")) {
      fprintf (stderr, "replay-trace: unknown option %s\n", a);
      usage (stderr);
      return 1;
    }
    if (v == NULL) {
      fprintf (stderr, "replay-trace: %s needs a value\n", a);
      return 1;
    }
    i++;
    rc = 0;
    if (strcmp (a, "--profile") == 0)
      profile = v;
    else if (strcmp (a, "--seed") == 0)
      rc = fm_parse_uint (a, v, 0, UINT64_MAX, &h.seed, &err);
    else if (strcmp (a, "--runs") == 0)
      rc = fm_parse_uint (a, v, 1, 1000000, &runs, &err);
    else if (strcmp (a, "--think") == 0)
      rc = fm_parse_uint (a, v, 0, 3600000000000, &h.think, &err);
    else {
      errno = 0;
      h.jitter = strtod (v, &end);
      if (errno || *end || end == v || !(h.jitter >= 0 && h.jitter <= 1))
        rc = fm_fail (&err, "--jitter: '%s' is not in [0, 1]", v);
    }
    if (rc == -1) {
      fprintf (stderr, "replay-trace: %s\n", err.msg);
      return 1;
    }
  }
  if (fm_profile_builtin (profile, &p, &err) == -1) {
    fprintf (stderr, "replay-trace: %s\n", err.msg);
    return 1;
  }
  if (path && (f = fopen (path, "r")) == NULL) {
    fprintf (stderr, "replay-trace: %s: %s\n", path, strerror (errno));
    return 1;
  }
  if (read_trace (f, path ? path : "stdin", &t) == -1)
    ret = 1;
  for (r = 1; ret == 0 && r <= runs; r++)
    if (replay (&p, &h, &t, r) == -1)
      ret = 1;
  if (f != stdin)
    fclose (f);
  free (t.v);
  return ret;
}
