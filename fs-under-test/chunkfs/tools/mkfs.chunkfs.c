/* mkfs.chunkfs — make a chunkfs on a file, a block device or an NBD
 * export (FORMAT.md).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunkfs/mkfs.h"

static void
usage (FILE *fp)
{
  fprintf (fp, "Usage: mkfs.chunkfs [-c CHUNK-SIZE] [-i BYTES-PER-INODE] "
               "[-L LABEL] [-U UUID] [-q] DEVICE|URI\n"
               "Make a chunkfs: the disk divided into chunks that are each "
               "checked on their\nown.  Only the superblock and the first "
               "chunk are written; the others are\ninitialised when first "
               "used.\n"
               "\n"
               "  -c SIZE   bytes per chunk, a power of two from 16M to 4G "
               "(default 128M,\n"
               "            doubled while the device would have more than "
               "2,048 chunks)\n"
               "  -i BYTES  bytes per inode (default 64K)\n"
               "  -L LABEL  up to 31 bytes\n"
               "  -U UUID   the file system's UUID (default: random)\n"
               "  -q        quiet\n"
               "DEVICE is a file or block device; URI an NBD export "
               "(nbd://HOST/EXPORT,\nnbd+unix:///EXPORT?socket=PATH).\n");
}

/* "128M", "4G", "65536": bytes. */
static int
parse_size (const char *opt, const char *s, uint64_t *out)
{
  char *end;
  unsigned long long v = strtoull (s, &end, 10);
  int shift = 0;

  if (end == s || *s == '-')
    goto bad;
  switch (*end) {
    case 'K':
    case 'k':
      shift = 10;
      end++;
      break;
    case 'M':
    case 'm':
      shift = 20;
      end++;
      break;
    case 'G':
    case 'g':
      shift = 30;
      end++;
      break;
    case 'T':
    case 't':
      shift = 40;
      end++;
      break;
    default:
      break;
  }
  if (*end || v > (UINT64_MAX >> shift))
    goto bad;
  *out = (uint64_t)v << shift;
  return 0;
bad:
  fprintf (stderr, "mkfs.chunkfs: %s: '%s' is not a size (e.g. 128M)\n", opt,
           s);
  return -1;
}

static int
parse_uuid (const char *s, uint8_t uuid[16])
{
  int i = 0;

  for (; *s && i < 16; s++) {
    unsigned v;
    if (*s == '-')
      continue;
    if (sscanf (s, "%2x", &v) != 1 || !s[1] || s[1] == '-')
      break;
    uuid[i++] = (uint8_t)v;
    s++;
  }
  return i == 16 && *s == '\0' ? 0 : -1;
}

int
main (int argc, char **argv)
{
  static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  struct cfs_mkfs_opts o;
  struct cfs_super s;
  struct cfs_err err;
  struct cfs_io *io;
  uint8_t uuid[16];
  bool quiet = false;
  int c;

  memset (&o, 0, sizeof o);
  while ((c = getopt_long (argc, argv, "c:i:L:U:qh", opts, NULL)) != -1) {
    switch (c) {
      case 'c':
        if (parse_size ("-c", optarg, &o.chunk_bytes) == -1)
          return 2;
        break;
      case 'i':
        if (parse_size ("-i", optarg, &o.bytes_per_inode) == -1)
          return 2;
        break;
      case 'L':
        o.label = optarg;
        break;
      case 'U':
        if (parse_uuid (optarg, uuid) == -1) {
          fprintf (stderr, "mkfs.chunkfs: -U: '%s' is not a UUID\n", optarg);
          return 2;
        }
        o.uuid = uuid;
        break;
      case 'q':
        quiet = true;
        break;
      case 'h':
        usage (stdout);
        return 0;
      default:
        usage (stderr);
        return 2;
    }
  }
  if (optind + 1 != argc) {
    fprintf (stderr, "mkfs.chunkfs: %s\n",
             optind == argc ? "a DEVICE is required" : "one DEVICE only");
    usage (stderr);
    return 2;
  }
  if ((io = cfs_open (argv[optind], true, &err)) == NULL) {
    fprintf (stderr, "mkfs.chunkfs: %s\n", err.msg);
    return 1;
  }
  if (cfs_mkfs (io, &o, &s, &err) == -1) {
    fprintf (stderr, "mkfs.chunkfs: %s: %s\n", argv[optind], err.msg);
    cfs_close (io, &err);
    return 1;
  }
  if (cfs_close (io, &err) == -1) {
    fprintf (stderr, "mkfs.chunkfs: %s: %s\n", argv[optind], err.msg);
    return 1;
  }
  if (!quiet)
    printf ("%s: chunkfs, %" PRIu32 " chunks of %" PRIu32 " MiB, %" PRIu32
            " inodes each\n",
            argv[optind], s.chunks, s.chunk_blocks / 256, s.inodes_per_chunk);
  return 0;
}
