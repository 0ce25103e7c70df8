/* futuredisk — harness: control-socket client (see ctlclient.h). */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
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

/* reply parsed, named after the command's first word ("stats reply"),
 * with its "ok" in *ok; NULL with why if it is not a JSON object with a
 * boolean "ok".
 */
static struct fd_json *
parse_reply (const char *line, const char *reply, bool *ok, struct fm_err *why)
{
  struct fd_json *j;
  char what[64];

  snprintf (what, sizeof what, "%.*s reply", (int)strcspn (line, " "), line);
  *ok = false;
  j = fd_json_parse (reply, what, why);
  if (j && fd_json_bool (j, "ok", ok, why) == -1) {
    fd_json_free (j);
    return NULL;
  }
  return j;
}

int
fd_ctl_ok (const char *sock, const char *line, struct fd_json **reply,
           struct fm_err *err)
{
  struct fm_err why;
  struct fd_json *j;
  bool ok;
  char *r;

  if (fd_ctl (sock, line, &r, err) == -1)
    return -1;
  j = parse_reply (line, r, &ok, &why);
  if (j == NULL)
    fm_fail (err, "control '%s': %s: %s", line, why.msg, r);
  else if (!ok)
    fm_fail (err, "control '%s': %s", line, r);
  free (r);
  if (!ok || reply == NULL) {
    fd_json_free (j);
    return ok ? 0 : -1;
  }
  *reply = j;
  return 0;
}

/* Virtual nanoseconds as people read them: seconds, or ms under one. */
static void
format_virtual (uint64_t ns, char *buf, size_t len)
{
  if (ns >= 1000000000)
    snprintf (buf, len, "%.3f virtual s", (double)ns / 1e9);
  else
    snprintf (buf, len, "%.3f virtual ms", (double)ns / 1e6);
}

int
fd_mark_text (const char *reply, char *buf, size_t len, struct fm_err *err)
{
  char name[256], since[256], t[64];
  uint64_t now, elapsed;
  struct fm_err none;
  struct fd_json *j;
  bool ok;
  int r = -1;

  if ((j = parse_reply ("mark", reply, &ok, err)) == NULL)
    return -1;
  if (!ok)
    fm_fail (err, "mark reply: not ok");
  else if (fd_json_str (j, "mark", name, sizeof name, err) == 0 &&
           fd_json_u64 (j, "virtual_ns", &now, err) == 0) {
    /* The first mark has nothing before it: since the clock's zero. */
    if (fd_json_str (j, "since", since, sizeof since, &none) == -1 ||
        fd_json_u64 (j, "elapsed_ns", &elapsed, &none) == -1) {
      snprintf (since, sizeof since, "the disk started");
      elapsed = now;
    }
    format_virtual (elapsed, t, sizeof t);
    snprintf (buf, len, "%s: %s since %s", name, t, since);
    r = 0;
  }
  fd_json_free (j);
  return r;
}

bool
fd_reply_ok (const char *reply)
{
  bool ok;

  fd_json_free (parse_reply ("ctl", reply, &ok, NULL));
  return ok;
}

struct fd_json {
  json_t *root;
  /* The text's integers above INT64_MAX, as root holds them (value -
   * 2^64): the only negatives fd_json_u64 takes.
   */
  int64_t *wide;
  size_t nwide;
  char what[]; /* for error messages */
};

/* text with each integer above INT64_MAX written as its value - 2^64,
 * which jansson reads (it reads no larger integer) and the database
 * stores; each such value also goes to wide[], which has room for one
 * per 19 characters of text (a larger integer has 19 digits or more).
 * malloc'd, NULL: out of memory.  Never longer than text: such a number
 * has 19 or 20 digits, its negative at most 20 characters.
 */
static char *
signed_text (const char *text, int64_t *wide, size_t *nwide)
{
  char *out = malloc (strlen (text) + 1), *o = out;
  const char *p = text;
  bool quoted = false;
  uint64_t v;
  size_t n;

  while (out && *p) {
    n = quoted ? 0 : strspn (p, "0123456789");
    if (n == 0) {
      if (quoted && *p == '\\' && p[1])
        *o++ = *p++;
      else if (*p == '"')
        quoted = !quoted;
      *o++ = *p++;
      continue;
    }
    /* A whole number: not a fraction's or an exponent's digits. */
    errno = 0;
    v = strtoull (p, NULL, 10);
    if ((p == text || !strchr ("-+.eE", p[-1])) &&
        !(p[n] && strchr (".eE", p[n])) && errno == 0 && v > INT64_MAX) {
      wide[(*nwide)++] = (int64_t)v;
      o += sprintf (o, "%" PRId64, (int64_t)v);
    } else {
      memcpy (o, p, n);
      o += n;
    }
    p += n;
  }
  if (out)
    *o = '\0';
  return out;
}

/* Parse text's signed form into j->root. */
static int
load (struct fd_json *j, const char *text, struct fm_err *err)
{
  char *signed_ = NULL;
  json_error_t jerr;

  j->wide = malloc ((strlen (text) / 19 + 1) * sizeof *j->wide);
  if (j->wide == NULL ||
      (signed_ = signed_text (text, j->wide, &j->nwide)) == NULL)
    return fm_fail (err, "out of memory");
  /* A repeated key would make "the" value a guess: refuse it. */
  j->root = json_loads (signed_, JSON_REJECT_DUPLICATES, &jerr);
  free (signed_);
  if (j->root == NULL)
    return fm_fail (err, "%s is not JSON: %s (column %d)", j->what, jerr.text,
                    jerr.column);
  if (!json_is_object (j->root))
    return fm_fail (err, "%s is not a JSON object", j->what);
  return 0;
}

struct fd_json *
fd_json_parse (const char *text, const char *what, struct fm_err *err)
{
  struct fd_json *j = calloc (1, sizeof *j + strlen (what) + 1);

  if (j == NULL) {
    fm_fail (err, "out of memory");
    return NULL;
  }
  strcpy (j->what, what);
  if (load (j, text, err) == -1) {
    fd_json_free (j);
    return NULL;
  }
  return j;
}

void
fd_json_free (struct fd_json *j)
{
  if (j == NULL)
    return;
  json_decref (j->root);
  free (j->wide);
  free (j);
}

/* The value at path, or NULL with err naming the first key not there. */
static json_t *
lookup (const struct fd_json *j, const char *path, struct fm_err *err)
{
  const json_t *o = j->root;
  const char *key = path;

  for (;;) {
    const char *dot = strchr (key, '.');
    size_t n = dot ? (size_t)(dot - key) : strlen (key);
    json_t *v = json_object_getn (o, key, n);

    if (v == NULL) {
      fm_fail (err, "%s: '%.*s' is missing", j->what, (int)(key - path + n),
               path);
      return NULL;
    }
    if (dot == NULL)
      return v;
    if (!json_is_object (v)) {
      fm_fail (err, "%s: '%.*s' is not an object", j->what,
               (int)(key - path + n), path);
      return NULL;
    }
    o = v;
    key = dot + 1;
  }
}

/* Whether v, a negative integer, stands for one above INT64_MAX. */
static bool
wide (const struct fd_json *j, const json_t *v)
{
  size_t i;

  for (i = 0; i < j->nwide; i++)
    if (j->wide[i] == json_integer_value (v))
      return true;
  return false;
}

int
fd_json_u64 (const struct fd_json *j, const char *path, uint64_t *out,
             struct fm_err *err)
{
  json_t *v = lookup (j, path, err);

  if (v == NULL)
    return -1;
  if (!json_is_integer (v) || (json_integer_value (v) < 0 && !wide (j, v)))
    return fm_fail (err, "%s: '%s' is not a non-negative integer", j->what,
                    path);
  *out = (uint64_t)json_integer_value (v);
  return 0;
}

json_t *
fd_json_root (const struct fd_json *j)
{
  return j->root;
}

int
fd_json_str (const struct fd_json *j, const char *path, char *buf, size_t len,
             struct fm_err *err)
{
  json_t *v = lookup (j, path, err);

  if (v == NULL)
    return -1;
  if (!json_is_string (v))
    return fm_fail (err, "%s: '%s' is not a string", j->what, path);
  if (json_string_length (v) >= len ||
      strlen (json_string_value (v)) != json_string_length (v))
    return fm_fail (err, "%s: '%s' is longer than %zu bytes or holds a NUL",
                    j->what, path, len - 1);
  memcpy (buf, json_string_value (v), json_string_length (v) + 1);
  return 0;
}

int
fd_json_bool (const struct fd_json *j, const char *path, bool *out,
              struct fm_err *err)
{
  json_t *v = lookup (j, path, err);

  if (v == NULL)
    return -1;
  if (!json_is_boolean (v))
    return fm_fail (err, "%s: '%s' is not true or false", j->what, path);
  *out = json_is_true (v);
  return 0;
}

int
fd_stats_read (const struct fd_json *j, struct fd_stats *s, struct fm_err *err)
{
  if (fd_json_u64 (j, "stats.reads", &s->reads, err) == -1 ||
      fd_json_u64 (j, "stats.writes", &s->writes, err) == -1 ||
      fd_json_u64 (j, "stats.bytes_read", &s->bytes_read, err) == -1 ||
      fd_json_u64 (j, "stats.bytes_written", &s->bytes_written, err) == -1 ||
      fd_json_u64 (j, "stats.faults.ure", &s->ure, err) == -1 ||
      fd_json_u64 (j, "stats.faults.lse", &s->lse, err) == -1 ||
      fd_json_u64 (j, "stats.decisions.picks", &s->picks, err) == -1 ||
      fd_json_u64 (j, "stats.decisions.watched", &s->watched, err) == -1 ||
      fd_json_u64 (j, "stats.decisions.ahead", &s->ahead, err) == -1)
    return -1;
  return 0;
}
