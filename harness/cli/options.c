/* futuredisk — harness: the one way a subcommand reads its options. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "errmsg.h"
#include "faultmodels/units.h"
#include "options.h"

/* stdout as it was before --json moved the rest to stderr (see
 * fd_json_option): where the JSON goes.  One command runs per process.
 */
static FILE *json_stdout;
static bool json_stdout_wanted;

int
fd_json_option (const char *arg, const char **path, struct fm_err *err)
{
  if (arg && *arg == '\0')
    return fm_fail (err, "--json=: no file named (--json=FILE, or --json "
                         "for stdout)");
  *path = arg && strcmp (arg, "-") ? arg : "-";
  json_stdout_wanted = strcmp (*path, "-") == 0;
  return 0;
}

/* Keep stdout for the JSON and point fd 1 at stderr, so that everything
 * else the command (or a tool it runs) prints there stays out of it.
 */
static int
json_take_stdout (const char *cmd)
{
  int fd;

  if (json_stdout)
    return 0;
  fflush (stdout);
  if ((fd = dup (STDOUT_FILENO)) == -1 ||
      (json_stdout = fdopen (fd, "w")) == NULL ||
      dup2 (STDERR_FILENO, STDOUT_FILENO) == -1) {
    if (fd != -1 && json_stdout == NULL)
      close (fd);
    return fd_usage_error (cmd, "--json: %s", fd_strerror (errno));
  }
  /* A line at a time, as stderr's readers (and its other lines) expect. */
  setvbuf (stdout, NULL, _IOLBF, 0);
  return 0;
}

FILE *
fd_json_open (const char *path, const char *mode)
{
  if (strcmp (path, "-") == 0)
    return json_stdout ? json_stdout : stdout;
  return fopen (path, mode);
}

int
fd_json_close (FILE *fp)
{
  if (fp == json_stdout || fp == stdout)
    return fflush (fp) == 0 && !ferror (fp) ? 0 : -1;
  return fclose (fp) == 0 ? 0 : -1;
}

const char *
fd_json_hint (const char *json)
{
  return json && strcmp (json, "-") == 0 ? " (a file for JSON is --json=FILE)"
                                         : "";
}

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
  if (json_stdout_wanted && json_take_stdout (cmd->name) != 0)
    return FD_OPTS_BAD;
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
