/* futuredisk — common: find a profile by name or file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "host.h"
#include "load-profile.h"

/* Profile files are a few hundred bytes; anything this big is a mistake. */
#define MAX_PROFILE_FILE (1 << 20)

int
fd_load_profile (const char *arg, struct fm_profile *out, struct fm_err *err)
{
  struct fm_err builtin_err, host_err;
  FILE *fp;
  char *text;
  size_t len;
  int r;

  if (strchr (arg, '/') == NULL &&
      fm_profile_builtin (arg, out, &builtin_err) == 0)
    return 0;
  fp = fopen (arg, "r");
  if (fp == NULL) {
    if (errno == ENOENT && strchr (arg, '/') == NULL)
      fm_fail (err, "%.440s, and no profile file of that name exists",
               builtin_err.msg);
    else
      fm_fail (err, "profile file %s: %s", arg, fd_strerror (errno));
    return -1;
  }
  text = malloc (MAX_PROFILE_FILE + 1);
  if (text == NULL) {
    fclose (fp);
    return fm_fail (err, "out of memory");
  }
  len = fread (text, 1, MAX_PROFILE_FILE + 1, fp);
  if (ferror (fp) || len > MAX_PROFILE_FILE) {
    fm_fail (err, "profile file %s: %s", arg,
             ferror (fp) ? fd_strerror (errno) : "larger than 1 MiB");
    free (text);
    fclose (fp);
    return -1;
  }
  fclose (fp);
  r = fm_profile_parse (arg, text, len, out, err);
  free (text);
  /* The models know no hosts: the name is checked here, once loaded. */
  if (r == 0 && out->host[0] &&
      fd_host_find ("host", out->host, &host_err) == NULL)
    return fm_fail (err, "profile file %s: %s", arg, host_err.msg);
  return r;
}
