/* futuredisk — harness: the one way a subcommand reads its options. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "faultmodels/units.h"
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

int
fd_parse_rate (const char *what, const char *arg, double *out,
               struct fm_err *err)
{
  char v[64];
  size_t n = strlen (arg);
  uint64_t bytes;

  if (n >= sizeof v)
    return fm_fail (err, "%s: '%.64s...' is too long", what, arg);
  memcpy (v, arg, n + 1);
  if (n > 2 && strcmp (v + n - 2, "/s") == 0)
    v[n - 2] = '\0';
  if (fm_parse_size (what, v, &bytes, err) == -1)
    return -1;
  if (bytes == 0)
    return fm_fail (err, "%s: '%s' is not more than 0", what, arg);
  *out = (double)bytes;
  return 0;
}
