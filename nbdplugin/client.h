/* futuredisk — nbdplugin: watching the client, so that the drive knows
 * when no request can still join its decision.
 *
 * In virtual mode a decision is exact once every request the client has
 * issued has reached the plugin and the client cannot issue another
 * before a completion.  Two readings of the kernel show it, for a client
 * that reaches the disk through a block device (a loop device over
 * nbdfuse, or /dev/nbdN) from processes in a cgroup of its own:
 *
 * - the device's in-flight count (/sys/block/DEV/inflight), which holds
 *   a request from its submission to its completion: no more than the
 *   plugin holds undecided means none is on its way in through the
 *   loop device, FUSE, nbdfuse or nbdkit, and no reply is on its way
 *   back (one block request must be one NBD request: the harness caps
 *   the loop device's request size at what FUSE passes whole).  When
 *   the device holds more, the rest wait upstream (FUSE passes nbdfuse
 *   only as many as it has threads) or move: then the count must stand
 *   still while no thread of nbdkit, of the relay (nbdfuse) or of the
 *   client runs, and FUSE holds as many as the loop device;
 * - the state of every thread in the cgroup (cgroup.threads, then
 *   /proc/TID/stat): none runnable means none is about to submit.
 *
 * A client that reaches the plugin over libnbd has no device to read,
 * and a cgroup with no thread in it (between the checker's runs, while
 * the harness itself mounts or populates) has nobody to watch: then the
 * watch cannot tell, and the caller falls back to waiting a grace.
 */
#ifndef FUTUREDISK_CLIENT_H
#define FUTUREDISK_CLIENT_H

#include <stddef.h>

#include "faultmodels/error.h"

struct client;

/* The cgroup v2 directory of the client's processes, or NULL. */
extern struct client *client_new (const char *cgroup, struct fm_err *err);
extern void client_free (struct client *c);

/* The block device the client reaches the disk through: its name under
 * /sys/block ("loop3", "nbd0"), or "" for none.  -1 with err if there is
 * no such device.
 */
extern int client_set_device (struct client *c, const char *dev,
                              struct fm_err *err);

/* The process that relays the device's requests to the server (nbdfuse,
 * for a loop device over its FUSE file), as a decimal pid, or "" for
 * none.  -1 with err if there is no such process.
 */
extern int client_set_relay (struct client *c, const char *pid,
                             struct fm_err *err);

/* The device's name ("" for none), for the stats. */
extern const char *client_device (const struct client *c);

enum client_state {
  CLIENT_UNKNOWN, /* nothing to read: no device, no cgroup, no thread */
  CLIENT_BUSY,    /* a request or a reply in transit, or a thread runs */
  CLIENT_KERNEL,  /* nothing runs but the kernel holds a loop request that
                   * is not a FUSE request: its worker, which no reading
                   * shows, passes it on, or it waits for FUSE */
  CLIENT_QUIET    /* every request is here and the client is blocked */
};

/* Is the client quiet, with `held` requests in the plugin undecided?
 * The caller must take no decision between its call and the reading
 * (it holds the lock that decisions take), and must see no request
 * waiting for that lock before and after it (such a thread sleeps on
 * the lock, and no reading here can see it).
 */
extern enum client_state client_state (struct client *c, size_t held);

#endif
