/* futuredisk — harness: the client side of the plugin's control socket.
 *
 * One command line out, one JSON reply line back (protocol in
 * nbdkit-futuredisk-plugin(1)).  `futuredisk ctl` prints the reply; a
 * trial reads marks, stats and inject results from it.
 */
#ifndef FUTUREDISK_CTLCLIENT_H
#define FUTUREDISK_CTLCLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "faultmodels/error.h"

/* Send `line` (without its newline) to the socket and return the reply
 * line, malloc'd, in *reply.  0 when a reply came (whatever it says), -1
 * with err for a connection, size or timeout problem.
 */
extern int fd_ctl (const char *sock, const char *line, char **reply,
                   struct fm_err *err);

/* Whether a reply is a JSON object whose "ok" is true. */
extern bool fd_reply_ok (const char *reply);

/* A JSON object read from a reply, the stats file or a fault log line
 * (jansson underneath, so key order, white space and nesting are
 * JSON's, not a pattern's).
 */
struct fd_json;

/* Parse text, which must be one JSON object; `what` names it in every
 * error message ("stats reply").  NULL with err if it is not.  An
 * integer above INT64_MAX (a seed) is held as its value - 2^64, as the
 * database stores it; fd_json_u64 gives it back as it was written.
 */
extern struct fd_json *fd_json_parse (const char *text, const char *what,
                                      struct fm_err *err);
extern void fd_json_free (struct fd_json *j);

/* The parsed object itself (jansson's), for a caller that keeps it whole
 * (the trial record): borrowed, valid until fd_json_free.
 */
struct json_t;
extern struct json_t *fd_json_root (const struct fd_json *j);

/* A field by its path from the top object, keys joined by dots
 * ("stats.faults.ure").  -1 with err naming the field when it is missing
 * or of another type; counts must be non-negative integers.
 */
extern int fd_json_u64 (const struct fd_json *j, const char *path,
                        uint64_t *out, struct fm_err *err);
extern int fd_json_str (const struct fd_json *j, const char *path, char *buf,
                        size_t len, struct fm_err *err);
extern int fd_json_bool (const struct fd_json *j, const char *path, bool *out,
                         struct fm_err *err);

/* Send a command and require "ok": true.  The reply, parsed and named
 * after the command ("stats reply"), goes to *reply if not NULL (free it
 * with fd_json_free).  A reply that is not a JSON object with a boolean
 * "ok" is an error that says so.
 */
extern int fd_ctl_ok (const char *sock, const char *line,
                      struct fd_json **reply, struct fm_err *err);

/* A mark reply for people, in buf: "NAME: 12.345 virtual s since SINCE"
 * (ms under a second), or for the first mark "NAME: ... since the disk
 * started".  -1 with err when the reply is not an ok mark reply.
 */
extern int fd_mark_text (const char *reply, char *buf, size_t len,
                         struct fm_err *err);

/* The counters a trial takes from a stats reply. */
struct fd_stats {
  uint64_t reads, writes, bytes_read, bytes_written;
  uint64_t ure, lse; /* reads the disk failed: unrecoverable, latent */
  /* Virtual time's picks, and those taken once the client was seen
   * waiting or its clock had passed the decision (the rest took a
   * grace of wall time).
   */
  uint64_t picks, watched, ahead;
};

/* Read them from a stats reply; -1 with err naming a missing or bad one. */
extern int fd_stats_read (const struct fd_json *j, struct fd_stats *s,
                          struct fm_err *err);

#endif
