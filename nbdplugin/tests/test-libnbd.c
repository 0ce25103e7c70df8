/* futuredisk — nbdplugin: end to end from C through libnbd.
 *
 * Starts nbdkit with the plugin as a child (nbd_connect_command, so no
 * socket is left behind), checks what it advertises, then runs random
 * reads and writes at random, unaligned offsets against a shadow copy,
 * with flushes and FUA in between, over two connections.
 *
 * Usage: test-libnbd PLUGIN.so
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libnbd.h>

#include "faultmodels/rng.h"

#define SIZE (32 << 20)

static void
die (const char *what)
{
  fprintf (stderr, "test-libnbd: %s: %s\n", what, nbd_get_error ());
  exit (EXIT_FAILURE);
}

static struct nbd_handle *
connect_plugin (const char *plugin)
{
  char *argv[] = {(char *)"nbdkit",
                  (char *)"-s",
                  (char *)"--exit-with-parent",
                  (char *)plugin,
                  (char *)"roadmap-2009",
                  (char *)"size=32M",
                  NULL};
  struct nbd_handle *h = nbd_create ();

  if (h == NULL || nbd_connect_command (h, argv) == -1)
    die ("connect");
  return h;
}

int
main (int argc, char **argv)
{
  struct nbd_handle *h;
  char *shadow, *buf;
  const char *preload = getenv ("FD_NBDKIT_PRELOAD");
  int i, failures = 0;

  if (argc != 2) {
    fprintf (stderr, "usage: test-libnbd PLUGIN.so\n");
    return 2;
  }
  /* An ASan-built plugin needs the runtime preloaded into nbdkit. */
  if (preload) {
    setenv ("LD_PRELOAD", preload, 1);
    setenv ("ASAN_OPTIONS", "detect_leaks=0", 1);
  }
  h = connect_plugin (argv[1]);
  if (nbd_get_size (h) != SIZE || nbd_is_rotational (h) != 1 ||
      nbd_can_fua (h) != 1 || nbd_can_flush (h) != 1 ||
      nbd_can_multi_conn (h) != 1 ||
      nbd_get_block_size (h, LIBNBD_SIZE_MINIMUM) != 1 ||
      nbd_get_block_size (h, LIBNBD_SIZE_PREFERRED) != 512) {
    fprintf (stderr, "test-libnbd: unexpected export properties\n");
    return EXIT_FAILURE;
  }
  shadow = calloc (1, SIZE);
  buf = malloc (1 << 20);
  for (i = 0; i < 2000; i++) {
    uint64_t hsh = fm_hash (11, FM_STREAM_BENCH, i, 0);
    uint64_t len = 1 + fm_below (hsh, 100000);
    uint64_t off = fm_below (fm_hash (11, 1, i, 0), SIZE - len), k;

    if (hsh & 1) {
      for (k = 0; k < len; k++)
        buf[k] = (char)fm_hash (i, 3, k, 0);
      if (nbd_pwrite (h, buf, len, off,
                      (hsh & 6) == 0 ? LIBNBD_CMD_FLAG_FUA : 0) == -1)
        die ("pwrite");
      memcpy (shadow + off, buf, len);
    } else {
      if (nbd_pread (h, buf, len, off, 0) == -1)
        die ("pread");
      if (memcmp (buf, shadow + off, len) != 0) {
        fprintf (stderr,
                 "test-libnbd: read of %" PRIu64 " bytes at %" PRIu64
                 " differs\n",
                 len, off);
        failures++;
      }
    }
    if (i % 97 == 0 && nbd_flush (h, 0) == -1)
      die ("flush");
  }
  for (i = 0; i < SIZE >> 20; i++) {
    if (nbd_pread (h, buf, 1 << 20, (uint64_t)i << 20, 0) == -1)
      die ("pread");
    if (memcmp (buf, shadow + ((uint64_t)i << 20), 1 << 20) != 0) {
      fprintf (stderr, "test-libnbd: MiB %d differs\n", i);
      failures++;
    }
  }
  /* Reads past the end are refused by the server, not wrapped. */
  if (nbd_pread (h, buf, 4096, SIZE, 0) != -1) {
    fprintf (stderr, "test-libnbd: read past the end succeeded\n");
    failures++;
  }
  if (nbd_shutdown (h, 0) == -1)
    die ("shutdown");
  nbd_close (h);
  free (shadow);
  free (buf);
  if (failures) {
    fprintf (stderr, "test-libnbd: %d failures\n", failures);
    return EXIT_FAILURE;
  }
  printf ("test-libnbd: 2000 random operations and a full read-back agree\n");
  return EXIT_SUCCESS;
}
