/* futuredisk — harness: control-socket client (see ctlclient.h). */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctlclient.h"
#include "errmsg.h"

#define LINE_MAX_  4096
#define REPLY_MAX  (1 << 20)
#define TIMEOUT_MS 30000

int
fd_ctl (const char *sock, const char *line, char **reply, struct fm_err *err)
{
  struct sockaddr_un sun = {.sun_family = AF_UNIX};
  size_t len = strlen (line), rlen = 0;
  char *buf, *msg;
  int fd;

  *reply = NULL;
  if (strlen (sock) >= sizeof sun.sun_path) {
    return fm_fail (err, "socket path '%s' is too long", sock);
  }
  if (len > LINE_MAX_ || strchr (line, '\n')) {
    return fm_fail (err, "the command must be one line of at most %d bytes",
                    LINE_MAX_);
  }
  strcpy (sun.sun_path, sock);
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd == -1 || connect (fd, (struct sockaddr *)&sun, sizeof sun) == -1) {
    fm_fail (err, "%s: %s", sock, fd_strerror (errno));
    if (fd != -1)
      close (fd);
    return -1;
  }
  if ((msg = malloc (len + 1)) == NULL || (buf = malloc (REPLY_MAX)) == NULL) {
    free (msg);
    close (fd);
    return fm_fail (err, "out of memory");
  }
  memcpy (msg, line, len);
  msg[len] = '\n';
  if (send (fd, msg, len + 1, MSG_NOSIGNAL) != (ssize_t)(len + 1)) {
    fm_fail (err, "%s: send: %s", sock, fd_strerror (errno));
    goto fail;
  }
  while (rlen < REPLY_MAX - 1) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    ssize_t n;

    if (poll (&p, 1, TIMEOUT_MS) <= 0) {
      fm_fail (err, "%s: no reply within %d s", sock, TIMEOUT_MS / 1000);
      goto fail;
    }
    n = recv (fd, buf + rlen, REPLY_MAX - 1 - rlen, 0);
    if (n <= 0) {
      fm_fail (err, "%s: connection closed before a reply", sock);
      goto fail;
    }
    rlen += (size_t)n;
    if (memchr (buf, '\n', rlen))
      break;
  }
  close (fd);
  free (msg);
  buf[rlen] = '\0';
  *strchrnul (buf, '\n') = '\0';
  *reply = buf;
  return 0;

fail:
  close (fd);
  free (msg);
  free (buf);
  return -1;
}

int
fd_ctl_ok (const char *sock, const char *line, char **reply, struct fm_err *err)
{
  char *r;

  if (fd_ctl (sock, line, &r, err) == -1)
    return -1;
  if (strncmp (r, "{\"ok\": true", 11) != 0) {
    fm_fail (err, "control '%s': %s", line, r);
    free (r);
    return -1;
  }
  if (reply)
    *reply = r;
  else
    free (r);
  return 0;
}

bool
fd_json_u64 (const char *json, const char *key, uint64_t *out)
{
  char pat[128];
  const char *p;

  snprintf (pat, sizeof pat, "\"%s\": ", key);
  p = strstr (json, pat);
  if (p == NULL)
    return false;
  p += strlen (pat);
  if (*p < '0' || *p > '9')
    return false;
  *out = strtoull (p, NULL, 10);
  return true;
}
