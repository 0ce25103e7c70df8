/* futuredisk — harness: `futuredisk ctl`, the control-socket client.
 *
 * Sends one command line to the plugin's control socket and prints the
 * one-line JSON reply, except for `mark`, whose reply is printed as the
 * virtual time since the mark before: two marks typed by hand should
 * answer "how long did that take on the emulated disk" without
 * arithmetic.  --json[=FILE|-] keeps every reply as it came.  Exit
 * status 0 when the reply says "ok": true.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "ctlclient.h"
#include "errmsg.h"
#include "options.h"

static void
ctl_usage (FILE *fp)
{
  fprintf (fp,
           "Usage: %s ctl [--json[=FILE|-]] SOCKET COMMAND [ARG]...\n"
           "Send one command to a futuredisk plugin's control socket "
           "(control=SOCKET)\nand print its reply: a mark's as a line for "
           "people, any other as its\nJSON line.\n"
           "\n"
           "Commands: stats | mark NAME [--since OTHER] | set KEY=VALUE |\n"
           "          inject KIND OFFSET LENGTH | powercut | poweroff [N] |\n"
           "          poweron | clear | help\n"
           "\n"
           "  mark NAME [--since OTHER]\n"
           "                   mark the disk's virtual clock and print the "
           "time since\n"
           "                   the mark OTHER (default: the mark before), "
           "e.g.\n"
           "                   'end: 12.345 virtual s since start'\n"
           "  --json, --json=-  print every reply as its JSON line (a mark's "
           "has\n"
           "                   virtual_ns, since and elapsed_ns)\n"
           "  --json=FILE      also append every reply to FILE\n"
           "Exit status: 0 if the reply has \"ok\": true, 1 if not, 2 for a "
           "usage or\nconnection error.\n",
           fd_progname);
}

struct ctl_opts {
  const char *socket, *json; /* json: --json's "-" or FILE, or NULL */
  bool mark;                 /* the command is `mark` */
  char line[4098];           /* the command words, one space apart */
};

static const struct fd_cmd_opts ctl_cmd = {"ctl", NULL, ctl_usage, NULL};

/* Append word to the command line; -1 when it would not fit. */
static int
add_word (struct ctl_opts *o, size_t *len, const char *word)
{
  size_t n = strlen (word);

  if (*len + n + 2 > sizeof o->line - 1)
    return -1;
  if (*len)
    o->line[(*len)++] = ' ';
  memcpy (o->line + *len, word, n);
  *len += n;
  o->line[*len] = '\0';
  return 0;
}

/* The command words as the plugin takes them: `mark NAME --since OTHER`
 * is the protocol's `mark NAME OTHER`; the rest pass as they are (they
 * may start with '-').
 */
static int
ctl_words (struct ctl_opts *o, int argc, char **argv)
{
  size_t len = 0;
  int i;

  o->mark = strcmp (argv[0], "mark") == 0;
  for (i = 0; i < argc; i++) {
    const char *w = argv[i];
    if (o->mark && i >= 2 && strncmp (w, "--since", 7) == 0) {
      if (w[7] == '=')
        w += 8;
      else if (w[7] == '\0' && i + 1 < argc)
        w = argv[++i];
      else
        return fd_usage_error ("ctl", "mark NAME --since OTHER");
    }
    if (add_word (o, &len, w) == -1)
      return fd_usage_error ("ctl", "the command must be one line of at "
                                    "most 4096 bytes");
  }
  return FD_OPTS_RUN;
}

static int
ctl_parse (int argc, char **argv, struct ctl_opts *o)
{
  struct fm_err err;
  int skip = 0, rc;

  *o = (struct ctl_opts){0};
  /* --json options come first: after SOCKET every word is the plugin's. */
  while (1 + skip < argc && strncmp (argv[1 + skip], "--json", 6) == 0 &&
         (argv[1 + skip][6] == '\0' || argv[1 + skip][6] == '=')) {
    const char *arg = argv[1 + skip][6] == '=' ? argv[1 + skip] + 7 : NULL;
    if (fd_json_option (arg, &o->json, &err) == -1)
      return fd_usage_error ("ctl", "%s", err.msg);
    skip++;
  }
  rc = fd_operands_parse (&ctl_cmd, argc - skip, argv + skip, 2, INT_MAX);
  if (rc != FD_OPTS_RUN)
    return rc;
  o->socket = argv[1 + skip];
  return ctl_words (o, argc - skip - 2, argv + skip + 2);
}

/* The reply as people read it: a mark's as a line, a refused mark's
 * error on stderr, any other as it came.
 */
static void
print_reply (const struct ctl_opts *o, const char *reply, bool ok)
{
  struct fm_err err;
  char text[600];

  if (!o->mark || (o->json && strcmp (o->json, "-") == 0)) {
    puts (reply);
    return;
  }
  if (ok && fd_mark_text (reply, text, sizeof text, &err) == 0) {
    puts (text);
  } else if (!ok) {
    struct fd_json *j = fd_json_parse (reply, "mark reply", &err);
    if (j && fd_json_str (j, "error", text, sizeof text, &err) == 0)
      fprintf (stderr, "%s ctl: mark: %s\n", fd_progname, text);
    else
      fprintf (stderr, "%s ctl: refused: %s\n", fd_progname, reply);
    fd_json_free (j);
  } else {
    puts (reply); /* a plugin without marks' times: as it came */
  }
}

static int
ctl_run (const struct ctl_opts *o)
{
  struct fm_err err;
  char *reply;
  bool ok;

  if (fd_ctl (o->socket, o->line, &reply, &err) == -1) {
    fprintf (stderr, "%s ctl: %s\n", fd_progname, err.msg);
    return 2;
  }
  ok = fd_reply_ok (reply);
  print_reply (o, reply, ok);
  if (o->json && strcmp (o->json, "-") != 0) {
    FILE *fp = fd_json_open (o->json, "a");
    if (fp)
      fprintf (fp, "%s\n", reply);
    if (fp == NULL || fd_json_close (fp) == -1) {
      fprintf (stderr, "%s ctl: %s: %s\n", fd_progname, o->json,
               fd_strerror (errno));
      free (reply);
      return 2;
    }
  }
  free (reply);
  return ok ? 0 : 1;
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
