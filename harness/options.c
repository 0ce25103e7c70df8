/* futuredisk — harness: the one way a subcommand reads its options. */
#include <stdarg.h>
#include <stdio.h>

#include "commands.h"
#include "options.h"

int
fd_options_parse (const struct fd_cmd_opts *cmd, int argc, char **argv, void *o,
                  int *first)
{
  struct fm_err err;
  int c;

  optind = 1;
  while ((c = getopt_long (argc, argv, "h", cmd->opts, NULL)) != -1) {
    if (c == 'h') {
      cmd->usage (stdout);
      return FD_OPTS_HELP;
    }
    /* getopt_long has named the unknown option or missing argument. */
    if (c == '?' || c == ':') {
      cmd->usage (stderr);
      return FD_OPTS_BAD;
    }
    if (cmd->set (o, c, optarg, &err) == -1)
      return fd_usage_error (cmd->name, "%s", err.msg);
  }
  *first = optind;
  return FD_OPTS_RUN;
}

int
fd_usage_error (const char *cmd, const char *fmt, ...)
{
  va_list ap;

  fprintf (stderr, "%s %s: ", fd_progname, cmd);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  return FD_OPTS_BAD;
}
