/* futuredisk — harness: the one way a subcommand reads its options.
 *
 * Every cmd-NAME.c is shaped the same: a struct of its options, a parse
 * function that fills it through fd_options_parse (getopt_long underneath,
 * so `--opt=value`, `--opt value` and abbreviations all work as users of
 * GNU tools expect), and a run function that does the work.  --help,
 * an unknown option and a bad value end alike: the usage text on stdout
 * (exit 0) or one line naming the bad value on stderr (exit 2).
 */
#ifndef FUTUREDISK_OPTIONS_H
#define FUTUREDISK_OPTIONS_H

#include <getopt.h>
#include <stdio.h>

#include "faultmodels/error.h"

/* What a parse came to: go on and run, or exit with this code. */
enum {
  FD_OPTS_RUN = -1,
  FD_OPTS_HELP = 0,
  FD_OPTS_BAD = 2
};

struct fd_cmd_opts {
  const char *name;          /* the subcommand, for messages ("run") */
  const struct option *opts; /* getopt_long's table; 'h' is --help */
  /* Print the usage text to fp (stdout for --help, stderr on error). */
  void (*usage) (FILE *fp);
  /* Take one option: its getopt_long value and argument.  0, or -1 with
   * err naming the option and the bad value.
   */
  int (*set) (void *o, int c, const char *arg, struct fm_err *err);
};

/* Parse argv (argv[0] is the subcommand) into o.  On FD_OPTS_RUN,
 * *first is the index of the first operand.  Otherwise the return value
 * is the exit code, and what the user needs to know has been printed.
 */
extern int fd_options_parse (const struct fd_cmd_opts *cmd, int argc,
                             char **argv, void *o, int *first);

/* The same for a command that also takes short options: shortopts is
 * getopt's optstring ("p:s:jh"), and must hold the 'h'.
 */
extern int fd_options_parse_short (const struct fd_cmd_opts *cmd,
                                   const char *shortopts, int argc, char **argv,
                                   void *o, int *first);

/* For a command that takes operands only, which may start with '-' (ctl
 * passes its command words on as they are), so getopt must not see them:
 * --help or -h first among at most max operands prints the usage on
 * stdout (FD_OPTS_HELP); fewer than min or more than max print it on
 * stderr (FD_OPTS_BAD); else FD_OPTS_RUN, the operands from argv[1].
 * Only cmd->usage is used.
 */
extern int fd_operands_parse (const struct fd_cmd_opts *cmd, int argc,
                              char **argv, int min, int max);

/* "futuredisk CMD: message" on stderr; returns FD_OPTS_BAD, so that a
 * check after parsing reads `return fd_usage_error (...);`.
 */
extern int fd_usage_error (const char *cmd, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* --restore-rate: a size per second ("125MB", "1G/s": fm_parse_size's
 * suffixes, an optional "/s"), more than 0; its bytes per second in *out,
 * or -1 with err naming the value.
 */
extern int fd_parse_rate (const char *what, const char *arg, double *out,
                          struct fm_err *err);

/* --json[=FILE|-], the one way every command that writes JSON takes it
 * (getopt: optional_argument, so a file needs the '='):
 *
 *   --json, --json=-   the JSON on stdout, and stdout holds nothing else:
 *                      what the command prints beside it goes to stderr
 *   --json=FILE        the JSON to FILE; what the command prints is as
 *                      without --json
 *
 * fd_json_option takes the option's argument (NULL without one) and
 * sets *path to "-" or FILE; once the parse is done, fd_options_parse
 * moves the rest of stdout to stderr for "-".  An empty FILE is an
 * error.
 */
extern int fd_json_option (const char *arg, const char **path,
                           struct fm_err *err);

/* Where path's JSON goes: stdout for "-", else FILE opened with mode
 * ("a" for JSON lines that collect, "w" for one document).  NULL with
 * errno when FILE cannot be opened.  fd_json_close flushes stdout or
 * closes FILE; -1 with errno if writing failed.
 */
extern FILE *fd_json_open (const char *path, const char *mode);
extern int fd_json_close (FILE *fp);

/* After an unexpected operand: a hint for `--json FILE`, the form before
 * the '=' (json: the command's path, "-" when FILE became an operand).
 */
extern const char *fd_json_hint (const char *json);

#endif
