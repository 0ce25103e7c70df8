/* futuredisk — harness: an emulated disk attached as a block device.
 *
 * Attaching starts nbdkit with the plugin on a private unix socket (with
 * a control socket, stats and fault log beside it), makes the disk a
 * block device — /dev/nbdN where the kernel has nbd, else nbdfuse's file
 * behind `losetup --direct-io=on` — and optionally makes and mounts a
 * file system on it.  Detaching undoes exactly what was done, newest
 * first, and is safe to call after any failure: nothing is left behind
 * (no mount, loop device, FUSE mount or process).
 *
 * The state of an attached disk can be saved to a file and loaded by
 * another process (`futuredisk attach`, then `futuredisk detach`).
 */
#ifndef FUTUREDISK_ATTACH_H
#define FUTUREDISK_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "faultmodels/error.h"

struct fd_disk;

struct fd_attach_opts {
  const char *dir;     /* private directory (exists); sockets, logs */
  const char *profile; /* profile=; NULL: the plugin's default */
  const char *size;    /* size=; NULL: the profile's */
  uint64_t seed;
  const char *store;        /* store=FILE, or NULL for RAM */
  const char *base;         /* base=FILE (store a clone of it), or NULL */
  const char *const *extra; /* more KEY=VALUE plugin parameters */
  size_t n_extra;
  const char *fs;       /* adapter name, or NULL */
  bool mkfs;            /* make the file system first */
  const char *mount;    /* mount point, or NULL */
  bool defer_mount;     /* remember the mount point; fd_disk_mount later */
  const char *faultlog; /* the fault log; NULL: DIR/faults.jsonl */
  const char *via;      /* "nbd", "loop", or NULL/"auto": see below */
  /* Append what the kernel says of the device, from the attach to the
   * detach, to DIR/kernel.log (a trial's evidence).
   */
  bool kernel_log;
};

/* How the disk becomes a block device: "nbd" (/dev/nbdN by nbd-client),
 * "loop" (nbdfuse's file behind losetup --direct-io=on), "serial" (loop,
 * with nbdfuse on one thread and one connection: the requests reach the
 * drive one at a time in the kernel's order) or "auto" (nbd where the
 * kernel has it — loading the module if it can — and nbd-client is
 * installed, else loop).  -1 with err naming a bad value after label
 * ("--attach", or "attach" in a campaign file).
 */
extern int fd_attach_via_check (const char *label, const char *via,
                                struct fm_err *err);

/* The static string fd_disk_via gives for `via` ("nbd", "loop",
 * "serial"), or NULL if it names none of them.
 */
extern const char *fd_attach_via_name (const char *via);

/* "nbd", "loop" or "serial": the way an attached disk was made a block
 * device.
 */
extern const char *fd_disk_via (const struct fd_disk *d);

extern struct fd_disk *fd_disk_attach (const struct fd_attach_opts *o,
                                       struct fm_err *err);

/* Undo everything and free d (NULL is fine).  Returns -1 with err if a
 * step failed (the others still ran).
 */
extern int fd_disk_detach (struct fd_disk *d, struct fm_err *err);

/* Are d's servers still running?  -1 with err naming the one that died
 * under the disk ("during PHASE" when during is not NULL) and the last
 * line of its log: whatever the disk's user saw after that was the
 * attach failing, not the file system.  (An
 * nbdfuse whose server vanishes may abort, leaving its mount unreachable;
 * a file system mounted over it then makes mkfs.btrfs fail anywhere on
 * the machine until it is unmounted.)
 */
extern int fd_disk_check (const struct fd_disk *d, const char *during,
                          struct fm_err *err);

/* Unmount / mount the file system again (trial phases). */
extern int fd_disk_unmount (struct fd_disk *d, struct fm_err *err);
extern int fd_disk_mount (struct fd_disk *d, struct fm_err *err);

/* Why d's last mount failed: the kernel's last word on its device
 * ("EXT4-fs (loop1): unable to read superblock"), else mount(8)'s; ""
 * after a mount that worked.
 */
extern const char *fd_disk_mount_reason (const struct fd_disk *d);

extern const char *fd_disk_device (const struct fd_disk *d);
extern const char *fd_disk_control (const struct fd_disk *d);
extern const char *fd_disk_socket (const struct fd_disk *d);

/* Save the state to a file; load it in another process. */
extern int fd_disk_save (const struct fd_disk *d, const char *path,
                         struct fm_err *err);
extern struct fd_disk *fd_disk_load (const char *path, struct fm_err *err);

/* How many extra plugin parameters (fault keys, clock keys) one disk
 * takes: every array of them is this long, and a longer --faults SPEC is
 * refused, never cut short.
 */
#define FD_FAULT_KEYS_MAX 64

/* A --faults SPEC ("harsh,age=2y": comma-separated fault keys, a word
 * without '=' a preset) as plugin parameters ("faults=harsh", "age=2y"),
 * appended to out[*n] (at most max <= FD_FAULT_KEYS_MAX; they point into
 * static storage and into spec, which is split in place).  -1 with err if
 * too many.
 */
extern int fd_fault_spec (char *spec, const char **out, size_t max, size_t *n,
                          struct fm_err *err);

/* Is every key of a --faults SPEC a fault key with a good value?  -1 with
 * err "KEY: problem".
 */
extern int fd_fault_spec_check (const char *spec, struct fm_err *err);

/* The faults of a --faults SPEC that strike writes as they are made
 * (lost-write=, misdirected-write=, torn=), as plugin parameters for
 * the disk a file system is populated on: into keys (at most 3), their
 * count into *n (0: none).  -1 with err for a bad spec.
 */
#define FD_WRITE_FAULT_KEYS 3
extern int fd_fault_spec_writes (const char *spec,
                                 char keys[FD_WRITE_FAULT_KEYS][48], size_t *n,
                                 struct fm_err *err);

/* The plugin to load: $FUTUREDISK_PLUGIN, else the build tree's, else
 * nbdkit's installed "futuredisk".
 */
extern const char *fd_plugin_path (void);

#endif
