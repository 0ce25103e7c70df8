/* futuredisk — fs-under-test: a checker's output a line at a time
 * (passlines.h).
 */
#include <string.h>

#include "passlines.h"

size_t
fd_pass_lines (const char *out, fd_pass_line *one, struct fd_pass *p,
               size_t max)
{
  const char *line = out;
  size_t n = 0;

  while (line && *line && n < max) {
    const char *end = strchrnul (line, '\n');

    if (one (line, end, &p[n]))
      n++;
    line = *end ? end + 1 : NULL;
  }
  return n;
}
