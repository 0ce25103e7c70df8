/* futuredisk — common: the text of an errno value.
 *
 * strerror translates through glibc's locale machinery; in an nbdkit with
 * the ASan runtime preloaded (the sanitizer test build) a strerror call
 * before a failed start left nbdkit deadlocked on the locale lock at exit.
 * Our messages are English anyway, so use the untranslated text.
 */
#ifndef FUTUREDISK_ERRMSG_H
#define FUTUREDISK_ERRMSG_H

#include <string.h>

static inline const char *
fd_strerror (int e)
{
  const char *s = strerrordesc_np (e);
  return s ? s : "Unknown error";
}

#endif
