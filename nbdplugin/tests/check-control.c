/* futuredisk — nbdplugin: the control protocol and its socket.
 *
 * The parser is attack surface: every reply to any input must be exactly
 * one line of JSON with "ok", and nothing but a well-formed command may
 * change anything.
 */
#include <check.h>
#include <poll.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "check-main.h"
#include "control.h"
#include "faultmodels/rng.h"

/* What `mark` remembers, fresh for each test (make). */
static struct marks marks;

static struct emu *
make (void)
{
  struct emu_config cfg = {.seed = 1};
  struct fm_err err;
  struct emu *e;

  ck_assert_int_eq (fm_profile_builtin ("ideal", &cfg.profile, &err), 0);
  ck_assert_int_eq (fm_profile_resize (&cfg.profile, 1 << 20, &err), 0);
  e = emu_new (&cfg, &err);
  ck_assert_ptr_nonnull (e);
  memset (&marks, 0, sizeof marks);
  return e;
}

/* Run one command; return the reply (caller frees). */
static char *
handle (struct emu *e, const char *line, size_t len)
{
  char *out = NULL;
  size_t olen = 0;
  FILE *fp = open_memstream (&out, &olen);

  control_handle (e, &marks, NULL, line, len, fp);
  fclose (fp);
  /* Exactly one line, one JSON object with "ok". */
  ck_assert_uint_gt (olen, 10);
  ck_assert_msg (strncmp (out, "{\"ok\": ", 7) == 0, "%s", out);
  ck_assert_int_eq (out[olen - 1], '\n');
  ck_assert_int_eq (out[olen - 2], '}');
  ck_assert_ptr_eq (strchr (out, '\n'), out + olen - 1);
  return out;
}

static void
expect (struct emu *e, const char *line, const char *want)
{
  char *r = handle (e, line, strlen (line));

  ck_assert_msg (strstr (r, want) != NULL, "'%s' -> %s (want %s)", line, r,
                 want);
  free (r);
}

START_TEST (test_commands)
{
  struct emu *e = make ();

  expect (e, "stats", "{\"ok\": true, \"stats\": {\"profile\": \"ideal\"");
  expect (e, "mark start",
          "{\"ok\": true, \"mark\": \"start\", "
          "\"virtual_ns\": ");
  expect (e, "mark   spaced", "\"mark\": \"spaced\"");
  expect (e, "set think=zero",
          "{\"ok\": true, \"set\": \"think\", "
          "\"value\": \"zero\"}");
  expect (e, "set time=scale:0.5", "\"value\": \"scale:0.5\"");
  expect (e, "inject ure 4096 512",
          "{\"ok\": true, \"inject\": \"ure\", "
          "\"offset\": 4096, \"length\": 512}");
  expect (e, "inject ure 8K 1K", "\"offset\": 8192, \"length\": 1024");
  expect (e, "clear", "{\"ok\": true}");
  expect (e, "help", "\"commands\"");
  expect (e, "stats\r", "\"ok\": true");
  emu_free (e);
}
END_TEST

START_TEST (test_malformed)
{
  static const struct {
    const char *line;
    const char *error;
  } bad[] = {
      {"", "empty command"},
      {"   ", "empty command"},
      {"STATS", "unknown command 'STATS'"},
      {"frobnicate now", "unknown command 'frobnicate'"},
      {"stats please", "stats takes no argument"},
      {"clear all", "clear takes no argument"},
      {"mark", "usage: mark NAME"},
      {"mark two words", "no mark named 'words'"},
      {"mark a b c", "usage: mark NAME [SINCE]"},
      {"mark a \x01", "usage: mark NAME [SINCE]"},
      {"mark \x01", "usage: mark NAME"},
      {"set", "usage: set KEY=VALUE"},
      {"set think", "usage: set KEY=VALUE"},
      {"set =zero", "usage: set KEY=VALUE"},
      {"set think=zero extra", "usage: set KEY=VALUE"},
      {"set think=maybe", "think: 'maybe' is not real, zero or cpu"},
      {"set time=", "time: '' is not virtual, real or scale:F"},
      {"set time=scale:-1", "time: 'scale:-1'"},
      {"set time=scale:nan", "time: 'scale:nan'"},
      {"set seed=5", "unknown setting 'seed'"},
      {"inject", "usage: inject KIND OFFSET LENGTH"},
      {"inject ure 0", "usage: inject KIND OFFSET LENGTH"},
      {"inject ure 0 1 2", "usage: inject KIND OFFSET LENGTH"},
      {"inject gremlin 0 1", "unknown fault kind 'gremlin'"},
      {"inject ure -1 1", "offset: '-1' is not a size"},
      {"inject ure 0 lots", "length: 'lots' is not a size"},
      {"inject ure 2M 1", "is outside the 1048576-byte disk"},
      {"inject ure 0 0", "inject ure: length is 0"},
      /* Faults of a write or a power cut: refused, never logged. */
      {"inject flip 0 512", "inject flip: not a fault of whole sectors"},
      {"inject powercut 0 512", "inject powercut: not a fault of whole"},
      {"inject torn-write 0 512", "inject torn-write: not a fault of"},
      {"inject lost-write 0 512", "inject lost-write: not a fault of"},
      {"inject misdirected-write 0 512", "inject misdirected-write: not a"},
      {"\"quoted\\\"", "unknown command '\\\"quoted\\\\\\\"'"},
      {"\xff\xfe binary", "unknown command '?"
                          "?'"},
  };
  struct emu *e = make ();
  char mark[200];
  size_t i;

  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char *r = handle (e, bad[i].line, strlen (bad[i].line));
    ck_assert_msg (strncmp (r, "{\"ok\": false, \"error\": ", 23) == 0,
                   "'%s' -> %s", bad[i].line, r);
    ck_assert_msg (strstr (r, bad[i].error) != NULL, "'%s' -> %s (want %s)",
                   bad[i].line, r, bad[i].error);
    free (r);
  }
  /* NUL inside a line, an over-long line, an over-long mark. */
  expect (e, "mark a", "\"ok\": true");
  {
    char *r = handle (e, "stats\0x", 7);
    ck_assert_ptr_nonnull (strstr (r, "NUL byte"));
    free (r);
  }
  {
    char *big = malloc (CONTROL_LINE_MAX + 2);
    memset (big, 'a', CONTROL_LINE_MAX + 1);
    big[CONTROL_LINE_MAX + 1] = '\0';
    char *r = handle (e, big, CONTROL_LINE_MAX + 1);
    ck_assert_ptr_nonnull (strstr (r, "line longer than 4096 bytes"));
    free (r);
    free (big);
  }
  memset (mark, 'm', sizeof mark);
  memcpy (mark, "mark ", 5);
  mark[sizeof mark - 1] = '\0';
  expect (e, mark, "usage: mark NAME");
  /* A refused set changed nothing: think is still real. */
  expect (e, "set think=real", "\"ok\": true");
  emu_free (e);
}
END_TEST

/* A reply's number after key, which must be there. */
static uint64_t
reply_u64 (const char *r, const char *key)
{
  const char *at = strstr (r, key);
  unsigned long long v;

  ck_assert_msg (at != NULL, "%s lacks %s", r, key);
  ck_assert_int_eq (sscanf (at + strlen (key), "%llu", &v), 1);
  return v;
}

/* Marks remembered between commands: since the one before by default,
 * since a named one when asked; a refused mark sets nothing; past
 * MARKS_KEPT names the one set longest ago is forgotten.
 */
START_TEST (test_marks)
{
  struct emu *e = make ();
  char *r, line[64];
  uint64_t a, b;
  int i;

  r = handle (e, "mark a", 6);
  ck_assert_ptr_null (strstr (r, "since")); /* the first has none */
  a = reply_u64 (r, "\"virtual_ns\": ");
  free (r);
  usleep (2000); /* think=real: the clock moves with the wall's */
  r = handle (e, "mark b", 6);
  ck_assert_ptr_nonnull (strstr (r, "\"since\": \"a\", \"elapsed_ns\": "));
  b = reply_u64 (r, "\"virtual_ns\": ");
  ck_assert_uint_gt (b, a);
  ck_assert_uint_eq (reply_u64 (r, "\"elapsed_ns\": "), b - a);
  free (r);
  r = handle (e, "mark c  a", 9);
  ck_assert_ptr_nonnull (strstr (r, "\"since\": \"a\""));
  ck_assert_uint_eq (reply_u64 (r, "\"elapsed_ns\": "),
                     reply_u64 (r, "\"virtual_ns\": ") - a);
  free (r);
  expect (e, "mark d nope", "no mark named 'nope'");
  expect (e, "mark e", "\"since\": \"c\""); /* d was not set */
  expect (e, "mark e", "\"since\": \"e\""); /* a lap */
  for (i = 0; i < MARKS_KEPT; i++) {
    snprintf (line, sizeof line, "mark m%d", i);
    expect (e, line, "\"ok\": true");
  }
  expect (e, "mark x a", "no mark named 'a'");
  expect (e, "mark x m0", "\"since\": \"m0\"");
  emu_free (e);
}
END_TEST

/* Random bytes, many lines: always one well-formed reply, never a crash. */
START_TEST (test_fuzz)
{
  struct emu *e = make ();
  static const char *const seeds[] = {"mark ",       "set ",      "stats",
                                      "clear",       "set time=", "set think=",
                                      "inject ure ", "inject ",   "powercut"};
  char line[300];
  uint64_t i;

  for (i = 0; i < 20000; i++) {
    uint64_t h = fm_hash (77, FM_STREAM_BENCH, i, 0);
    size_t len = fm_below (h, sizeof line), k = 0;

    if (h & 1) { /* start from a real command half the time */
      const char *s =
          seeds[fm_below (fm_hash (77, 2, i, 0), sizeof seeds / sizeof *seeds)];
      k = strlen (s) < len ? strlen (s) : len;
      memcpy (line, s, k);
    }
    for (; k < len; k++)
      line[k] = (char)fm_hash (77, i, k, 1);
    free (handle (e, line, len));
  }
  emu_free (e);
}
END_TEST

static int
connect_to (const char *path)
{
  struct sockaddr_un sun = {.sun_family = AF_UNIX};
  int fd = socket (AF_UNIX, SOCK_STREAM, 0);

  strcpy (sun.sun_path, path);
  ck_assert_int_eq (connect (fd, (struct sockaddr *)&sun, sizeof sun), 0);
  return fd;
}

static void
read_line (int fd, char *buf, size_t size)
{
  size_t n = 0;

  while (n < size - 1) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    ck_assert_int_eq (poll (&p, 1, 10000), 1);
    ck_assert_int_eq (read (fd, buf + n, 1), 1);
    if (buf[n++] == '\n')
      break;
  }
  buf[n] = '\0';
}

/* Through a real socket: mode 0600, over-long lines, pipelined commands,
 * clients that vanish, and a clean shutdown that removes the socket.
 */
START_TEST (test_socket)
{
  char dir[64], path[256], reply[8192];
  struct emu *e = make ();
  struct fm_err err;
  struct control *c;
  struct stat st;
  char *big;
  int fd, i, fds[20];

  fd_check_tmpdir ("control", dir, sizeof dir);
  snprintf (path, sizeof path, "%s/ctl", dir);
  c = control_open (path, &err);
  ck_assert_msg (c != NULL, "%s", err.msg);
  ck_assert_int_eq (stat (path, &st), 0);
  ck_assert_uint_eq (st.st_mode & 0777, 0600);
  ck_assert_int_eq (control_serve (c, e, NULL, &err), 0);

  fd = connect_to (path);
  ck_assert_int_eq (write (fd, "mark a\nstats\nbogus\n", 19), 19);
  read_line (fd, reply, sizeof reply);
  ck_assert_ptr_nonnull (strstr (reply, "\"mark\": \"a\""));
  read_line (fd, reply, sizeof reply);
  ck_assert_ptr_nonnull (strstr (reply, "\"stats\""));
  read_line (fd, reply, sizeof reply);
  ck_assert_ptr_nonnull (strstr (reply, "unknown command 'bogus'"));

  /* 100 KB without a newline: one error, then the next line works. */
  big = malloc (100000);
  memset (big, 'x', 100000);
  ck_assert_int_eq (write (fd, big, 100000), 100000);
  ck_assert_int_eq (write (fd, "\nmark b\n", 8), 8);
  read_line (fd, reply, sizeof reply);
  ck_assert_ptr_nonnull (strstr (reply, "line longer than 4096 bytes"));
  read_line (fd, reply, sizeof reply);
  ck_assert_ptr_nonnull (strstr (reply, "\"mark\": \"b\""));
  ck_assert_ptr_nonnull (strstr (reply, "\"since\": \"a\""));
  free (big);

  /* More clients than slots (fd holds one): the extra ones are told and
   * closed at once, before they send anything.
   */
  for (i = 0; i < 20; i++)
    fds[i] = connect_to (path);
  read_line (fds[19], reply, sizeof reply);
  ck_assert_ptr_nonnull (strstr (reply, "too many control clients"));
  for (i = 0; i < 20; i++)
    close (fds[i]);
  /* A client that hangs up mid-line does not disturb the next.  (The
   * server may still be counting the twenty just closed and turn it away
   * at once: then the write meets a closed socket, which is fine too.)
   */
  signal (SIGPIPE, SIG_IGN);
  i = connect_to (path);
  ck_assert (write (i, "mark half", 9) == 9 || errno == EPIPE ||
             errno == ECONNRESET);
  close (i);
  ck_assert_int_eq (write (fd, "help\n", 5), 5);
  read_line (fd, reply, sizeof reply);
  ck_assert_ptr_nonnull (strstr (reply, "\"commands\""));
  close (fd);

  control_close (c);
  ck_assert_int_eq (access (path, F_OK), -1);
  /* Refuses to replace a file that is not a socket. */
  fd = open (path, O_CREAT | O_WRONLY, 0600);
  close (fd);
  ck_assert_ptr_null (control_open (path, &err));
  ck_assert_ptr_nonnull (strstr (err.msg, "exists and is not a socket"));
  unlink (path);
  rmdir (dir);
  emu_free (e);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"commands", test_commands}, {"malformed", test_malformed},
      {"marks", test_marks},       {"fuzz", test_fuzz},
      {"socket", test_socket},
  };

  return fd_check_main ("control", cases, sizeof cases / sizeof cases[0]);
}
