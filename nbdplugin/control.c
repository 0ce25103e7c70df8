/* futuredisk — nbdplugin: the control socket (see control.h).
 *
 * One thread polls the listening socket and up to MAX_CLIENTS connections.
 * Each connection has a line buffer; a line longer than CONTROL_LINE_MAX
 * gets one error reply and the rest of it, up to the next newline, is
 * thrown away, so no input can grow memory or wedge the thread.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "errmsg.h"
#include "control.h"
#include "faultmodels/units.h"
#include "json.h"

#define MAX_CLIENTS 16

struct client {
  int fd;
  size_t len;
  bool discarding; /* inside an over-long line */
  char buf[CONTROL_LINE_MAX + 1];
};

struct control {
  int listen_fd;
  int wake[2]; /* pipe: a byte here stops the thread */
  char path[108];
  struct emu *emu;
  struct marks marks; /* only the control thread touches them */
  const char *stats_path;
  pthread_t thread;
  bool running;
  struct client clients[MAX_CLIENTS];
};

static void
reply_error (FILE *out, const char *fmt, const char *arg)
{
  char msg[512];

  snprintf (msg, sizeof msg, fmt, arg);
  fputs ("{\"ok\": false, \"error\": ", out);
  fd_json_string (out, msg);
  fputs ("}\n", out);
}

/* A mark name: printable, no spaces, not empty, not too long. */
static bool
good_name (const char *s)
{
  size_t n = 0;

  for (; s[n]; n++)
    if (!isgraph ((unsigned char)s[n]) || n >= MARK_MAX)
      return false;
  return n > 0;
}

/* One control command: what it does with its argument (NULL or empty
 * when none was given), replying one JSON line to out.
 */
struct command {
  const char *name;
  bool takes_arg;
  void (*run) (struct emu *e, struct marks *ms, const char *stats_path,
               char *arg, FILE *out);
};

static ssize_t
marks_find (const struct marks *ms, const char *name)
{
  size_t i;

  for (i = 0; i < ms->n; i++)
    if (strcmp (ms->m[i].name, name) == 0)
      return (ssize_t)i;
  return -1;
}

/* Remember name at ns: its own slot, a free one, or the oldest one's. */
static void
marks_set (struct marks *ms, const char *name, uint64_t ns)
{
  ssize_t at = marks_find (ms, name);
  size_t i;

  if (at == -1 && ms->n < MARKS_KEPT)
    at = (ssize_t)ms->n++;
  else if (at == -1)
    for (at = 0, i = 1; i < ms->n; i++)
      if (ms->m[i].order < ms->m[at].order)
        at = (ssize_t)i;
  snprintf (ms->m[at].name, sizeof ms->m[at].name, "%s", name);
  ms->m[at].ns = ns;
  ms->m[at].order = ++ms->set;
  ms->newest = (size_t)at;
}

static void
ctl_stats (struct emu *e, struct marks *ms, const char *stats_path, char *arg,
           FILE *out)
{
  struct fm_err err;

  if (stats_path && emu_write_stats (e, stats_path, &err) == -1) {
    reply_error (out, "%s", err.msg);
    return;
  }
  fputs ("{\"ok\": true, \"stats\": ", out);
  emu_stats_json (e, out);
  fputs ("}\n", out);
}

/* mark NAME [SINCE]: SINCE, when given, must be remembered; checked
 * before anything is marked, so a refused mark changes nothing.
 */
static void
ctl_mark (struct emu *e, struct marks *ms, const char *stats_path, char *arg,
          FILE *out)
{
  char *since = arg ? strchr (arg, ' ') : NULL;
  uint64_t now, then = 0;
  ssize_t from = -1;
  struct fm_err err;

  if (since) {
    *since = '\0';
    since = fm_trim (since + 1);
  }
  if (arg == NULL || !good_name (arg) || (since && !good_name (since))) {
    reply_error (out, "%s",
                 "usage: mark NAME [SINCE] (names of 1-128 printable "
                 "characters, no spaces)");
    return;
  }
  if (since && (from = marks_find (ms, since)) == -1) {
    reply_error (out, "no mark named '%s' (or not among the newest 64)", since);
    return;
  }
  if (!since && ms->set > 0)
    from = (ssize_t)ms->newest;
  if (from != -1) {
    since = ms->m[from].name;
    then = ms->m[from].ns;
  }
  if (emu_mark (e, arg, &err) == -1) {
    reply_error (out, "%s", err.msg);
    return;
  }
  now = emu_virtual_now (e);
  fputs ("{\"ok\": true, \"mark\": ", out);
  fd_json_string (out, arg);
  fprintf (out, ", \"virtual_ns\": %" PRIu64, now);
  if (from != -1) {
    fputs (", \"since\": ", out);
    fd_json_string (out, since);
    fprintf (out, ", \"elapsed_ns\": %" PRIu64, now > then ? now - then : 0);
  }
  fputs ("}\n", out);
  marks_set (ms, arg, now);
}

static void
ctl_set (struct emu *e, struct marks *ms, const char *stats_path, char *arg,
         FILE *out)
{
  struct fm_err err;
  char *eq;

  if (arg == NULL || (eq = strchr (arg, '=')) == NULL || eq == arg ||
      strchr (arg, ' ')) {
    reply_error (out, "%s", "usage: set KEY=VALUE");
    return;
  }
  *eq = '\0';
  if (emu_set (e, arg, eq + 1, &err) == -1) {
    reply_error (out, "%s", err.msg);
    return;
  }
  fputs ("{\"ok\": true, \"set\": ", out);
  fd_json_string (out, arg);
  fputs (", \"value\": ", out);
  fd_json_string (out, eq + 1);
  fputs ("}\n", out);
}

static void
ctl_inject (struct emu *e, struct marks *ms, const char *stats_path, char *arg,
            FILE *out)
{
  char kind_s[64], off_s[64], len_s[64], extra[2];
  enum fm_fault_kind kind;
  uint64_t off, length;
  struct fm_err err;

  if (arg == NULL ||
      sscanf (arg, "%63s %63s %63s %1s", kind_s, off_s, len_s, extra) != 3) {
    reply_error (out, "%s", "usage: inject KIND OFFSET LENGTH");
    return;
  }
  if (fm_fault_parse (kind_s, &kind, &err) == -1 ||
      fm_parse_size ("offset", off_s, &off, &err) == -1 ||
      fm_parse_size ("length", len_s, &length, &err) == -1 ||
      emu_inject (e, kind, off, length, "control", &err) == -1) {
    reply_error (out, "%s", err.msg);
    return;
  }
  fprintf (out,
           "{\"ok\": true, \"inject\": \"%s\", \"offset\": %" PRIu64
           ", \"length\": %" PRIu64 "}\n",
           fm_fault_name (kind), off, length);
}

static void
ctl_powercut (struct emu *e, struct marks *ms, const char *stats_path,
              char *arg, FILE *out)
{
  struct fm_err err;

  if (emu_powercut (e, "control", &err) == -1) {
    reply_error (out, "%s", err.msg);
    return;
  }
  fputs ("{\"ok\": true, \"powercut\": true}\n", out);
}

/* poweroff [N]: the machine dies now, or after the Nth write from now. */
static void
ctl_poweroff (struct emu *e, struct marks *ms, const char *stats_path,
              char *arg, FILE *out)
{
  struct fm_err err;
  uint64_t after = 0;

  if (arg && *arg &&
      fm_parse_uint ("poweroff", arg, 0, UINT64_MAX, &after, &err) == -1) {
    reply_error (out, "%s", err.msg);
    return;
  }
  if (emu_poweroff (e, after, "control poweroff", &err) == -1) {
    reply_error (out, "%s", err.msg);
    return;
  }
  fprintf (out, "{\"ok\": true, \"poweroff\": %" PRIu64 "}\n", after);
}

static void
ctl_poweron (struct emu *e, struct marks *ms, const char *stats_path, char *arg,
             FILE *out)
{
  fprintf (out, "{\"ok\": true, \"was_off\": %s}\n",
           emu_poweron (e) ? "true" : "false");
}

static void
ctl_clear (struct emu *e, struct marks *ms, const char *stats_path, char *arg,
           FILE *out)
{
  emu_stats_clear (e);
  fputs ("{\"ok\": true}\n", out);
}

static void
ctl_help (struct emu *e, struct marks *ms, const char *stats_path, char *arg,
          FILE *out)
{
  fputs ("{\"ok\": true, \"commands\": [\"stats\", \"mark NAME [SINCE]\", "
         "\"set KEY=VALUE\", \"inject KIND OFFSET LENGTH\", "
         "\"powercut\", \"poweroff [N]\", \"poweron\", \"clear\", "
         "\"help\"]}\n",
         out);
}

static const struct command commands[] = {
    {"stats", false, ctl_stats},
    {"mark", true, ctl_mark},
    {"set", true, ctl_set},
    {"inject", true, ctl_inject},
    {"powercut", false, ctl_powercut},
    {"poweroff", true, ctl_poweroff},
    {"poweron", false, ctl_poweron},
    {"clear", false, ctl_clear},
    {"help", false, ctl_help},
};

static void
reply_unknown (const char *cmd, FILE *out)
{
  char shown[64];

  /* Quote at most a little of what we were sent. */
  snprintf (shown, sizeof shown, "%.40s", cmd);
  for (char *p = shown; *p; p++)
    if (!isprint ((unsigned char)*p))
      *p = '?';
  reply_error (out,
               "unknown command '%s' (commands: stats, mark, set, inject, "
               "powercut, poweroff, poweron, clear, help)",
               shown);
}

void
control_handle (struct emu *e, struct marks *marks, const char *stats_path,
                const char *line, size_t len, FILE *out)
{
  char cmd[CONTROL_LINE_MAX + 1], *arg;
  size_t i;

  if (len > CONTROL_LINE_MAX) {
    reply_error (out, "line longer than %s bytes", "4096");
    return;
  }
  if (memchr (line, '\0', len)) {
    reply_error (out, "%s", "NUL byte in command");
    return;
  }
  memcpy (cmd, line, len);
  cmd[len] = '\0';
  if (len > 0 && cmd[len - 1] == '\r') /* tolerate CRLF clients */
    cmd[--len] = '\0';
  arg = strchr (cmd, ' ');
  if (arg) {
    *arg++ = '\0';
    while (*arg == ' ')
      arg++;
  }
  if (cmd[0] == '\0') {
    reply_error (out, "%s", "empty command");
    return;
  }
  for (i = 0; i < sizeof commands / sizeof commands[0]; i++) {
    if (strcmp (cmd, commands[i].name) != 0)
      continue;
    if (!commands[i].takes_arg && arg && *arg)
      reply_error (out, "%.100s takes no argument", cmd);
    else
      commands[i].run (e, marks, stats_path, arg, out);
    return;
  }
  reply_unknown (cmd, out);
}

struct control *
control_open (const char *path, struct fm_err *err)
{
  struct control *c;
  struct sockaddr_un sun = {.sun_family = AF_UNIX};
  struct stat st;
  mode_t old;
  int i;

  if (strlen (path) >= sizeof sun.sun_path) {
    fm_fail (err, "control: '%s': a socket path must be under %zu bytes", path,
             sizeof sun.sun_path);
    return NULL;
  }
  if (lstat (path, &st) == 0) {
    if (!S_ISSOCK (st.st_mode)) {
      fm_fail (err, "control: '%s' exists and is not a socket", path);
      return NULL;
    }
    unlink (path);
  }
  c = calloc (1, sizeof *c);
  if (c == NULL) {
    fm_fail (err, "out of memory");
    return NULL;
  }
  c->wake[0] = c->wake[1] = c->listen_fd = -1;
  for (i = 0; i < MAX_CLIENTS; i++)
    c->clients[i].fd = -1;
  snprintf (c->path, sizeof c->path, "%s", path);
  strcpy (sun.sun_path, path);
  c->listen_fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (c->listen_fd == -1)
    goto fail;
  /* get_ready runs single-threaded, so the umask dance is safe here. */
  old = umask (0077);
  if (bind (c->listen_fd, (struct sockaddr *)&sun, sizeof sun) == -1) {
    umask (old);
    goto fail;
  }
  umask (old);
  /* The umask kept it private from the start; 0600 is the contract. */
  if (chmod (path, 0600) == -1 || listen (c->listen_fd, 8) == -1 ||
      pipe2 (c->wake, O_CLOEXEC | O_NONBLOCK) == -1)
    goto fail;
  return c;

fail:
  fm_fail (err, "control: %s: %s", path, fd_strerror (errno));
  control_close (c);
  return NULL;
}

static void
drop_client (struct client *cl)
{
  close (cl->fd);
  cl->fd = -1;
  cl->len = 0;
  cl->discarding = false;
}

static void
send_reply (struct client *cl, const char *buf, size_t len)
{
  while (len > 0) {
    ssize_t w = send (cl->fd, buf, len, MSG_NOSIGNAL);
    if (w == -1 && errno == EINTR)
      continue;
    if (w <= 0) {
      drop_client (cl);
      return;
    }
    buf += w;
    len -= w;
  }
}

static void
handle_line (struct control *c, struct client *cl, const char *line, size_t len)
{
  char *reply = NULL;
  size_t rlen = 0;
  FILE *out = open_memstream (&reply, &rlen);

  if (out == NULL)
    return;
  control_handle (c->emu, &c->marks, c->stats_path, line, len, out);
  fclose (out);
  send_reply (cl, reply, rlen);
  free (reply);
}

/* Read what a client sent; act on each complete line. */
static void
serve_client (struct control *c, struct client *cl)
{
  char in[1024];
  ssize_t n = recv (cl->fd, in, sizeof in, 0);
  ssize_t i;

  if (n <= 0) {
    if (n == -1 && (errno == EINTR || errno == EAGAIN))
      return;
    drop_client (cl);
    return;
  }
  for (i = 0; i < n && cl->fd != -1; i++) {
    if (in[i] == '\n') {
      if (!cl->discarding)
        handle_line (c, cl, cl->buf, cl->len);
      cl->len = 0;
      cl->discarding = false;
    } else if (cl->discarding) {
      continue;
    } else if (cl->len == CONTROL_LINE_MAX) {
      /* One reply for the whole over-long line, then skip to its end. */
      handle_line (c, cl, cl->buf, CONTROL_LINE_MAX + 1);
      cl->discarding = true;
      cl->len = 0;
    } else {
      cl->buf[cl->len++] = in[i];
    }
  }
}

static void *
control_thread (void *arg)
{
  struct control *c = arg;

  for (;;) {
    struct pollfd pfd[MAX_CLIENTS + 2];
    int map[MAX_CLIENTS + 2], n = 0, i;

    pfd[n].fd = c->wake[0];
    pfd[n++].events = POLLIN;
    pfd[n].fd = c->listen_fd;
    pfd[n++].events = POLLIN;
    for (i = 0; i < MAX_CLIENTS; i++) {
      if (c->clients[i].fd >= 0) {
        map[n] = i;
        pfd[n].fd = c->clients[i].fd;
        pfd[n++].events = POLLIN;
      }
    }
    if (poll (pfd, n, -1) == -1) {
      if (errno == EINTR)
        continue;
      return NULL;
    }
    if (pfd[0].revents)
      return NULL;
    if (pfd[1].revents & POLLIN) {
      int fd = accept4 (c->listen_fd, NULL, NULL, SOCK_CLOEXEC);
      if (fd >= 0) {
        for (i = 0; i < MAX_CLIENTS && c->clients[i].fd >= 0; i++)
          ;
        if (i == MAX_CLIENTS) {
          static const char busy[] =
              "{\"ok\": false, \"error\": \"too many control clients\"}\n";
          if (send (fd, busy, sizeof busy - 1, MSG_NOSIGNAL) < 0) {
            /* the client is gone already: nothing to tell it */
          }
          close (fd);
        } else {
          c->clients[i].fd = fd;
          c->clients[i].len = 0;
          c->clients[i].discarding = false;
        }
      }
    }
    for (i = 2; i < n; i++)
      if (pfd[i].revents)
        serve_client (c, &c->clients[map[i]]);
  }
}

int
control_serve (struct control *c, struct emu *e, const char *stats_path,
               struct fm_err *err)
{
  int r;

  c->emu = e;
  c->stats_path = stats_path;
  r = pthread_create (&c->thread, NULL, control_thread, c);
  if (r != 0) {
    return fm_fail (err, "control: starting thread: %s", fd_strerror (r));
  }
  c->running = true;
  return 0;
}

void
control_close (struct control *c)
{
  int i;

  if (c == NULL)
    return;
  if (c->running) {
    char b = 0;
    if (write (c->wake[1], &b, 1) != 1) {
      /* the pipe is ours and empty: a write cannot fail here */
    }
    pthread_join (c->thread, NULL);
  }
  for (i = 0; i < MAX_CLIENTS; i++)
    if (c->clients[i].fd >= 0)
      close (c->clients[i].fd);
  if (c->wake[0] >= 0)
    close (c->wake[0]);
  if (c->wake[1] >= 0)
    close (c->wake[1]);
  if (c->listen_fd >= 0) {
    close (c->listen_fd);
    unlink (c->path);
  }
  free (c);
}
