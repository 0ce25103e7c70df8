/* futuredisk — harness: a trial's phases timed on the disk's clock (see
 * trial-int.h).
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include "attach.h"
#include "progname.h"
#include "ctlclient.h"
#include "json.h"
#include "proc.h"
#include "trial-int.h"

static double
self_cpu (void)
{
  struct rusage a, b;

  getrusage (RUSAGE_SELF, &a);
  getrusage (RUSAGE_CHILDREN, &b);
  return (double)(a.ru_utime.tv_sec + a.ru_stime.tv_sec + b.ru_utime.tv_sec +
                  b.ru_stime.tv_sec) +
         (double)(a.ru_utime.tv_usec + a.ru_stime.tv_usec + b.ru_utime.tv_usec +
                  b.ru_stime.tv_usec) /
             1e6;
}

static int
sample (struct fd_disk *d, const char *name, struct fd_clocks *c,
        struct fm_err *err)
{
  char line[128];
  struct fd_json *j;
  struct fd_stats s;
  int ret;

  snprintf (line, sizeof line, "mark %s", name);
  if (fd_ctl_ok (fd_disk_control (d), line, &j, err) == -1)
    return -1;
  ret = fd_json_u64 (j, "virtual_ns", &c->vns, err);
  fd_json_free (j);
  if (ret == -1 || fd_ctl_ok (fd_disk_control (d), "stats", &j, err) == -1)
    return -1;
  ret = fd_stats_read (j, &s, err);
  fd_json_free (j);
  if (ret == -1)
    return -1;
  c->reads = s.reads;
  c->writes = s.writes;
  c->br = s.bytes_read;
  c->bw = s.bytes_written;
  c->rerr = s.ure + s.lse;
  c->picks = s.picks;
  c->watched = s.watched;
  c->ahead = s.ahead;
  c->wall = fd_now_s ();
  c->cpu = self_cpu ();
  return 0;
}

struct phase *
fd_phase_begin (struct trial *t, struct fd_disk *d, const char *name,
                struct fd_clocks *c, struct fm_err *err)
{
  struct phase *p = &t->r->ph[t->r->nph];

  memset (p, 0, sizeof *p);
  p->name = name;
  if (sample (d, name, c, err) == -1)
    return NULL;
  t->r->nph++;
  fprintf (stderr, "%s: %s ...\n", fd_progname, name);
  return p;
}

/* The disk's counters could not be read: did a server of d die during
 * the phase?  One killed as the phase ends may still be exiting when its
 * control socket fails ("connection closed before a reply": a SIGKILLed
 * nbdkit's threads end one by one), so it is given SERVER_DEATH_S to be
 * seen dead; only this failure path waits.
 */
#define SERVER_DEATH_S 5
static bool
server_died (struct fd_disk *d, const char *phase, struct fm_err *err)
{
  double t0 = fd_now_s ();
  struct timespec ts = {0, 20000000};

  while (fd_disk_check (d, phase, err) == 0) {
    if (fd_now_s () - t0 > SERVER_DEATH_S)
      return false;
    nanosleep (&ts, NULL);
  }
  return true;
}

int
fd_phase_end (struct fd_disk *d, struct phase *p, const struct fd_clocks *c0,
              struct fm_err *err)
{
  struct fd_clocks c1;

  if (sample (d, p->name, &c1, err) == -1) {
    /* A dead server is the error, not its control socket's silence. */
    if (server_died (d, p->name, err)) {
      p->cut_short = true;
      p->wall_s = fd_now_s () - c0->wall;
      p->cpu_s = self_cpu () - c0->cpu;
    }
    return -1;
  }
  p->virtual_s = (double)(c1.vns - c0->vns) / 1e9;
  p->wall_s = c1.wall - c0->wall;
  p->cpu_s = c1.cpu - c0->cpu;
  p->reads = c1.reads - c0->reads;
  p->writes = c1.writes - c0->writes;
  p->bytes_read = c1.br - c0->br;
  p->bytes_written = c1.bw - c0->bw;
  p->read_errors = c1.rerr - c0->rerr;
  p->watched = c1.watched - c0->watched;
  p->ahead = c1.ahead - c0->ahead;
  p->unwatched = (c1.picks - c0->picks) - p->watched - p->ahead;
  return 0;
}

/* Detach d, failing if one of its servers died under the trial (the
 * teardown still runs).
 */
int
fd_trial_detach (struct fd_disk *d, struct fm_err *err)
{
  struct fm_err e;

  if (fd_disk_check (d, NULL, err) == -1) {
    fd_disk_detach (d, &e);
    return -1;
  }
  return fd_disk_detach (d, err);
}
