/* fsck.chunkfs — check and repair a chunkfs, incrementally by default
 * (FORMAT.md; the engine is src/check.c).  Options and exit codes follow
 * e2fsck(8).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chunkfs/check.h"
#include "chunkfs/io.h"

static const char *const pass_names[CFS_CHECK_PASSES] = {
    "superblock, dirty map and chunk headers",
    "inodes, blocks and continuations",
    "directory entries and back-references",
    "directory connectivity",
    "reference counts",
    "bitmaps, free counts and chunk states",
};

static void
usage (FILE *fp)
{
  fprintf (fp,
           "Usage: fsck.chunkfs [-n|-y|-p] [-f] [-t] [-C FD] [-q] "
           "DEVICE|URI\n"
           "Check a chunkfs: only the chunks that are dirty or damaged (and "
           "what their\nrepairs touch) unless -f.\n"
           "\n"
           "  -n     open read-only, answer no to every question\n"
           "  -y     answer yes to every question\n"
           "  -p     preen: fix what is safe, stop at the rest (-a: the "
           "same)\n"
           "  -f     check every chunk, clean or not\n"
           "  -t     print the time each pass took\n"
           "  -C FD  progress lines \"PASS DONE TOTAL DEVICE\" on file "
           "descriptor FD\n"
           "  -q     no messages, only the exit code\n"
           "Without -n, -y or -p, questions are asked on the terminal.\n"
           "DEVICE is a file or block device; URI an NBD export "
           "(nbd://HOST/EXPORT,\nnbd+unix:///EXPORT?socket=PATH).\n"
           "Exit code: the sum of 1 errors corrected, 4 errors left "
           "uncorrected,\n8 operational error, 16 usage error.\n");
}

/* The command line into o, timing and quiet: -1 to go on, else the exit
 * code to stop with.
 */
static int
parse_args (int argc, char **argv, struct cfs_check_opts *o, int *timing,
            int *quiet)
{
  static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  int c, modes = 0;
  char *end;

  while ((c = getopt_long (argc, argv, "nypafktC:qh", longopts, NULL)) != -1)
    switch (c) {
      case 'n':
        o->mode = CFS_CHECK_NO, modes++;
        break;
      case 'y':
        o->mode = CFS_CHECK_YES, modes++;
        break;
      case 'p':
      case 'a':
        o->mode = CFS_CHECK_PREEN, modes++;
        break;
      case 'f':
        o->full = true;
        break;
      case 't':
        *timing = 1;
        break;
      case 'C':
        o->progress_fd = (int)strtol (optarg, &end, 10);
        if (end == optarg || *end || o->progress_fd < 0) {
          fprintf (stderr, "fsck.chunkfs: -C %s: not a file descriptor\n",
                   optarg);
          return CFS_EXIT_USAGE;
        }
        break;
      case 'q':
        *quiet = 1;
        break;
      case 'h':
        usage (stdout);
        return 0;
      default:
        usage (stderr);
        return CFS_EXIT_USAGE;
    }
  if (optind + 1 != argc) {
    fprintf (stderr, "fsck.chunkfs: %s\n",
             optind == argc ? "no device given" : "one device at a time");
    usage (stderr);
    return CFS_EXIT_USAGE;
  }
  if (modes > 1) {
    fprintf (stderr, "fsck.chunkfs: -n, -y and -p exclude each other\n");
    return CFS_EXIT_USAGE;
  }
  if (o->mode == CFS_CHECK_ASK && !isatty (0)) {
    fprintf (stderr, "fsck.chunkfs: need a terminal to ask about repairs; "
                     "give -n, -y or -p\n");
    return CFS_EXIT_USAGE;
  }
  o->name = argv[optind];
  return -1;
}

static void
print_summary (const char *name, const struct cfs_check_result *res)
{
  if (res->exit & CFS_EXIT_CORRECTED)
    printf ("\n%s: ***** FILE SYSTEM WAS MODIFIED *****\n", name);
  printf ("%s: %llu files, %llu blocks in %u checked of %u chunks; %llu "
          "problem%s, %llu fixed\n",
          name, (unsigned long long)res->files,
          (unsigned long long)res->blocks_used, res->checked, res->chunks,
          (unsigned long long)res->problems, res->problems == 1 ? "" : "s",
          (unsigned long long)res->fixed);
}

/* -t: "Pass N: time S s (what)", as e2fsck -t prints its passes. */
static void
print_times (const struct cfs_check_result *res)
{
  double total = 0;
  int i;

  for (i = 0; i < CFS_CHECK_PASSES; i++) {
    printf ("Pass %d: time %.6f s (%s)\n", i, res->pass_s[i], pass_names[i]);
    total += res->pass_s[i];
  }
  printf ("Total: time %.6f s\n", total);
}

int
main (int argc, char **argv)
{
  struct cfs_check_opts o = {
      .mode = CFS_CHECK_ASK, .out = stdout, .progress_fd = -1};
  struct cfs_check_result res;
  struct cfs_io *io;
  struct cfs_err err;
  int timing = 0, quiet = 0, stop;

  if ((stop = parse_args (argc, argv, &o, &timing, &quiet)) != -1)
    return stop;
  if (quiet)
    o.out = NULL;
  if ((io = cfs_open (o.name, o.mode != CFS_CHECK_NO, &err)) == NULL) {
    fprintf (stderr, "fsck.chunkfs: %s\n", err.msg);
    return CFS_EXIT_ERROR;
  }
  cfs_check (io, &o, &res);
  if (cfs_close (io, &err) == -1) {
    fprintf (stderr, "fsck.chunkfs: %s\n", err.msg);
    res.exit |= CFS_EXIT_ERROR;
  }
  if (!quiet && !(res.exit & CFS_EXIT_ERROR && res.chunks == 0))
    print_summary (o.name, &res);
  if (timing)
    print_times (&res);
  return (int)res.exit;
}
