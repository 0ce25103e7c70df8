/* futuredisk — nbdplugin: the control socket (control=SOCKET).
 *
 * One text command per line, one JSON object per reply line, every reply
 * with "ok": true|false and a refusal with "error".  Commands:
 *
 *   stats             the stats object (and rewrite stats=FILE)
 *   mark NAME         {"ok": true, "mark": NAME, "virtual_ns": N}
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

#include <stdio.h>

#include "emu.h"
#include "faultmodels/error.h"

#define CONTROL_LINE_MAX 4096 /* bytes, newline excluded */

struct control;

/* Handle one command (no newline); write one reply line to out. */
extern void control_handle (struct emu *e, const char *stats_path,
                            const char *line, size_t len, FILE *out);

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
