/* futuredisk — nbdplugin: the control socket (control=SOCKET).
 *
 * One text command per line, one JSON object per reply line, every reply
 * with "ok": true|false and a refusal with "error".  Commands:
 *
 *   stats             the stats object (and rewrite stats=FILE)
 *   mark NAME [SINCE] {"ok": true, "mark": NAME, "virtual_ns": N,
 *                      "since": SINCE, "elapsed_ns": D}: the virtual clock
 *                      now and since the mark SINCE (default: the mark
 *                      before; none for the first)
 *   set KEY=VALUE     change a setting at run time (see emu_set)
 *   inject KIND OFFSET LENGTH   fault the bytes' sectors (faults.h)
 *   powercut          cut the power (emu_powercut)
 *   clear             zero the counters
 *   help              the list of commands
 *
 * Anything else — unknown commands, bad arguments, over-long lines, binary
 * junk — gets an error reply and changes nothing.
 */
#ifndef FUTUREDISK_CONTROL_H
#define FUTUREDISK_CONTROL_H

#include <stdint.h>
#include <stdio.h>

#include "emu.h"
#include "faultmodels/error.h"

#define CONTROL_LINE_MAX 4096 /* bytes, newline excluded */
#define MARK_MAX         128  /* bytes of a mark's name */
#define MARKS_KEPT       64   /* names remembered, the newest set */

struct control;

/* The marks remembered between commands, so that `mark end start` can
 * say how long since `mark start` was sent, perhaps by another client
 * (two `futuredisk ctl` runs): each name's latest virtual time.  A trial
 * sets hundreds of names; past MARKS_KEPT the one set longest ago goes.
 * Zeroed: none yet.
 */
struct marks {
  struct {
    char name[MARK_MAX + 1];
    uint64_t ns;
    uint64_t order; /* when it was set, in marks: the newest is largest */
  } m[MARKS_KEPT];
  size_t n;
  uint64_t set;  /* marks set so far */
  size_t newest; /* index of the last one set, if set > 0 */
};

/* Handle one command (no newline); write one reply line to out.  marks:
 * what `mark` remembers.
 */
extern void control_handle (struct emu *e, struct marks *marks,
                            const char *stats_path, const char *line,
                            size_t len, FILE *out);

/* Listen on `path`: created mode 0600; an existing socket is replaced,
 * anything else at that path is an error.  (nbdkit's get_ready.)
 */
extern struct control *control_open (const char *path, struct fm_err *err);

/* Serve commands from a thread until control_close.  (after_fork.) */
extern int control_serve (struct control *c, struct emu *e,
                          const char *stats_path, struct fm_err *err);

/* Stop the thread, close the socket and remove its file. */
extern void control_close (struct control *c);

#endif
