/* futuredisk — harness: the `futuredisk` command and its dispatch table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "faultmodels/version.h"
#include "commands.h"

#ifndef FUTUREDISK_VERSION
#define FUTUREDISK_VERSION "unknown"
#endif

static const struct command {
  const char *name;
  int (*run) (int argc, char **argv);
  const char *summary;
} commands[] = {
    {"attach", cmd_attach, "attach an emulated disk and mount it"},
    {"campaign", cmd_campaign, "run a campaign's trials (a night)"},
    {"compare", cmd_compare, "find regressions against earlier nights"},
    {"ctl", cmd_ctl, "send a command to a plugin's control socket"},
    {"demo", cmd_demo, "run the demo campaign and write its report"},
    {"detach", cmd_detach, "take down a disk attach set up"},
    {"merge", cmd_merge, "combine the databases of a campaign's shards"},
    {"model", cmd_model, "print what the disk models predict per profile"},
    {"predict", cmd_predict, "predict fsck time per disk generation"},
    {"report", cmd_report, "render a campaign night as one HTML page"},
    {"run", cmd_run, "run one fault trial on a real file system"},
    {"show", cmd_show, "print a recorded trial and the evidence kept with it"},
};

#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void
usage (FILE *fp)
{
  size_t i;

  fprintf (fp,
           "Usage: %s COMMAND [OPTION]...\n"
           "Emulate tomorrow's disks, break them, and measure fsck.\n\n"
           "Commands:\n",
           fd_progname);
  for (i = 0; i < N_COMMANDS; i++)
    fprintf (fp, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf (fp,
           "\n'%s COMMAND --help' describes each command.\n"
           "From a source tree, './futuredisk test' runs the test suite.\n",
           fd_progname);
}

int
main (int argc, char **argv)
{
  size_t i;

  if (argc < 2) {
    usage (stderr);
    return 2;
  }
  if (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0 ||
      strcmp (argv[1], "help") == 0) {
    if (argc > 2 && strcmp (argv[1], "help") == 0) {
      char *sub[] = {argv[2], (char *)"--help", NULL};
      for (i = 0; i < N_COMMANDS; i++)
        if (strcmp (commands[i].name, argv[2]) == 0)
          return commands[i].run (2, sub);
    }
    usage (stdout);
    return 0;
  }
#ifdef FD_CHUNKFS_BUILD_DIR
  /* Run from the build tree: its chunkfs tools (mkfs.chunkfs,
   * fsck.chunkfs, chunkfs) come before any installed ones.
   */
  if (access (FD_CHUNKFS_BUILD_DIR "/fsck.chunkfs", X_OK) == 0) {
    const char *path = getenv ("PATH");
    size_t len = strlen (FD_CHUNKFS_BUILD_DIR) + (path ? strlen (path) : 0) + 2;
    char *p = malloc (len);
    if (p) {
      snprintf (p, len, "%s:%s", FD_CHUNKFS_BUILD_DIR, path ? path : "");
      setenv ("PATH", p, 1);
      free (p);
    }
  }
#endif
  if (strcmp (argv[1], "--version") == 0) {
    printf ("futuredisk %s (drive model %d)\n", FUTUREDISK_VERSION,
            FM_MODEL_VERSION);
    return 0;
  }
  for (i = 0; i < N_COMMANDS; i++)
    if (strcmp (commands[i].name, argv[1]) == 0)
      return commands[i].run (argc - 1, argv + 1);
  fprintf (stderr, "%s: unknown command '%s'\n", fd_progname, argv[1]);
  usage (stderr);
  return 2;
}
