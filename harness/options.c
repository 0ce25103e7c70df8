/* futuredisk — harness: the one way a subcommand reads its options. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "options.h"

int
fd_options_parse (const struct fd_cmd_opts *cmd, int argc, char **argv, void *o,
                  int *first)
{
  return fd_options_parse_short (cmd, "h", argc, argv, o, first);
}

int
fd_options_parse_short (const struct fd_cmd_opts *cmd, const char *shortopts,
                        int argc, char **argv, void *o, int *first)
{
  struct fm_err err;
  int c;

  optind = 1;
  while ((c = getopt_long (argc, argv, shortopts, cmd->opts, NULL)) != -1) {
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
fd_operands_parse (const struct fd_cmd_opts *cmd, int argc, char **argv,
                   int min, int max)
{
  int n = argc - 1;

  if (n >= 1 && n <= max &&
      (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0)) {
    cmd->usage (stdout);
    return FD_OPTS_HELP;
  }
  if (n < min || n > max) {
    cmd->usage (stderr);
    return FD_OPTS_BAD;
  }
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
