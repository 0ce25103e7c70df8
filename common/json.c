/* futuredisk — common: JSON string escaping. */
#include "json.h"

void
fd_json_string (FILE *fp, const char *s)
{
  const unsigned char *p = (const unsigned char *)s;

  putc ('"', fp);
  for (; *p; p++) {
    switch (*p) {
      case '"':
        fputs ("\\\"", fp);
        break;
      case '\\':
        fputs ("\\\\", fp);
        break;
      case '\n':
        fputs ("\\n", fp);
        break;
      case '\t':
        fputs ("\\t", fp);
        break;
      default:
        if (*p < 0x20)
          fprintf (fp, "\\u%04x", *p);
        else
          putc (*p, fp);
    }
  }
  putc ('"', fp);
}
