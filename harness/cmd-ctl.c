/* futuredisk — harness: `futuredisk ctl`, the control-socket client.
 *
 * Sends one command line to the plugin's control socket and prints the
 * one-line JSON reply.  Exit status 0 when the reply says "ok": true.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "ctlclient.h"
#include "options.h"

static void
ctl_usage (FILE *fp)
{
  fprintf (fp,
           "Usage: %s ctl SOCKET COMMAND [ARG]...\n"
           "Send one command to a futuredisk plugin's control socket "
           "(control=SOCKET)\nand print its JSON reply.\n"
           "\n"
           "Commands: stats | mark NAME | set KEY=VALUE |\n"
           "          inject KIND OFFSET LENGTH | powercut | clear | help\n"
           "Exit status: 0 if the reply has \"ok\": true, 1 if not, 2 for a "
           "usage or\nconnection error.\n",
           fd_progname);
}

struct ctl_opts {
  const char *socket;
  char line[4098]; /* the command words, one space apart */
};

static const struct fd_cmd_opts ctl_cmd = {"ctl", NULL, ctl_usage, NULL};

static int
ctl_parse (int argc, char **argv, struct ctl_opts *o)
{
  size_t len = 0;
  int i, rc;

  rc = fd_operands_parse (&ctl_cmd, argc, argv, 2, INT_MAX);
  if (rc != FD_OPTS_RUN)
    return rc;
  o->socket = argv[1];
  for (i = 2; i < argc; i++) {
    size_t n = strlen (argv[i]);
    if (len + n + 2 > sizeof o->line - 1)
      return fd_usage_error ("ctl", "the command must be one line of at most "
                                    "4096 bytes");
    if (i > 2)
      o->line[len++] = ' ';
    memcpy (o->line + len, argv[i], n);
    len += n;
  }
  o->line[len] = '\0';
  return FD_OPTS_RUN;
}

static int
ctl_run (const struct ctl_opts *o)
{
  struct fm_err err;
  char *reply;
  int ret;

  if (fd_ctl (o->socket, o->line, &reply, &err) == -1) {
    fprintf (stderr, "%s ctl: %s\n", fd_progname, err.msg);
    return 2;
  }
  puts (reply);
  ret = fd_reply_ok (reply) ? 0 : 1;
  free (reply);
  return ret;
}

int
cmd_ctl (int argc, char **argv)
{
  struct ctl_opts o;
  int rc;

  rc = ctl_parse (argc, argv, &o);
  if (rc != FD_OPTS_RUN)
    return rc;
  return ctl_run (&o);
}
