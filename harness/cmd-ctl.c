/* futuredisk — harness: `futuredisk ctl`, the control-socket client.
 *
 * Sends one command line to the plugin's control socket and prints the
 * one-line JSON reply.  Exit status 0 when the reply says "ok": true.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "ctlclient.h"

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

int
cmd_ctl (int argc, char **argv)
{
  char line[4098], *reply;
  struct fm_err err;
  size_t len = 0;
  int i;

  if (argc > 1 &&
      (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0)) {
    ctl_usage (stdout);
    return 0;
  }
  if (argc < 3) {
    ctl_usage (stderr);
    return 2;
  }
  for (i = 2; i < argc; i++) {
    size_t n = strlen (argv[i]);
    if (len + n + 2 > sizeof line - 1) {
      fprintf (stderr,
               "%s ctl: the command must be one line of at most "
               "4096 bytes\n",
               fd_progname);
      return 2;
    }
    if (i > 2)
      line[len++] = ' ';
    memcpy (line + len, argv[i], n);
    len += n;
  }
  line[len] = '\0';
  if (fd_ctl (argv[1], line, &reply, &err) == -1) {
    fprintf (stderr, "%s ctl: %s\n", fd_progname, err.msg);
    return 2;
  }
  puts (reply);
  i = fd_reply_ok (reply) ? 0 : 1;
  free (reply);
  return i;
}
