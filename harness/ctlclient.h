/* futuredisk — harness: the client side of the plugin's control socket.
 *
 * One command line out, one JSON reply line back (protocol in
 * nbdkit-futuredisk-plugin(1)).  `futuredisk ctl` prints the reply; a
 * trial reads marks, stats and inject results from it.
 */
#ifndef FUTUREDISK_CTLCLIENT_H
#define FUTUREDISK_CTLCLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "faultmodels/error.h"

/* Send `line` (without its newline) to the socket and return the reply
 * line, malloc'd, in *reply.  0 when a reply came (whatever it says), -1
 * with err for a connection, size or timeout problem.
 */
extern int fd_ctl (const char *sock, const char *line, char **reply,
                   struct fm_err *err);

/* Send a command and require "ok": true; the reply goes to *reply if not
 * NULL (else it is freed).
 */
extern int fd_ctl_ok (const char *sock, const char *line, char **reply,
                      struct fm_err *err);

/* The first number after "KEY": in a JSON text (no nesting awareness:
 * keys the harness reads are unique in their replies).
 */
extern bool fd_json_u64 (const char *json, const char *key, uint64_t *out);

#endif
