/* futuredisk — harness: `futuredisk ctl`, the control-socket client.
 *
 * Sends one command line to the plugin's control socket and prints the
 * one-line JSON reply.  Exit status 0 when the reply says "ok": true.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "errmsg.h"
#include "commands.h"

#define REPLY_MAX  (1 << 20)
#define TIMEOUT_MS 30000

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
  struct sockaddr_un sun = {.sun_family = AF_UNIX};
  char line[4098], *reply;
  size_t len = 0, rlen = 0;
  int fd, i;

  if (argc > 1 &&
      (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0)) {
    ctl_usage (stdout);
    return 0;
  }
  if (argc < 3) {
    ctl_usage (stderr);
    return 2;
  }
  if (strlen (argv[1]) >= sizeof sun.sun_path) {
    fprintf (stderr, "%s ctl: socket path '%s' is too long\n", fd_progname,
             argv[1]);
    return 2;
  }
  for (i = 2; i < argc; i++) {
    size_t n = strlen (argv[i]);
    if (len + n + 2 > sizeof line - 1 || strchr (argv[i], '\n')) {
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
  line[len++] = '\n';

  strcpy (sun.sun_path, argv[1]);
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd == -1 || connect (fd, (struct sockaddr *)&sun, sizeof sun) == -1) {
    fprintf (stderr, "%s ctl: %s: %s\n", fd_progname, argv[1],
             fd_strerror (errno));
    return 2;
  }
  if (send (fd, line, len, MSG_NOSIGNAL) != (ssize_t)len) {
    fprintf (stderr, "%s ctl: %s: send: %s\n", fd_progname, argv[1],
             fd_strerror (errno));
    close (fd);
    return 2;
  }
  reply = malloc (REPLY_MAX);
  if (reply == NULL) {
    close (fd);
    return 2;
  }
  while (rlen < REPLY_MAX - 1) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    ssize_t n;

    if (poll (&p, 1, TIMEOUT_MS) <= 0) {
      fprintf (stderr, "%s ctl: %s: no reply within %d s\n", fd_progname,
               argv[1], TIMEOUT_MS / 1000);
      goto fail;
    }
    n = recv (fd, reply + rlen, REPLY_MAX - 1 - rlen, 0);
    if (n <= 0) {
      fprintf (stderr, "%s ctl: %s: connection closed before a reply\n",
               fd_progname, argv[1]);
      goto fail;
    }
    rlen += n;
    if (memchr (reply, '\n', rlen))
      break;
  }
  close (fd);
  reply[rlen] = '\0';
  *strchrnul (reply, '\n') = '\0';
  puts (reply);
  i = strncmp (reply, "{\"ok\": true", 11) == 0 ? 0 : 1;
  free (reply);
  return i;

fail:
  close (fd);
  free (reply);
  return 2;
}
