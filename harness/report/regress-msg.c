/* futuredisk — harness: what a scenario's comparisons say, gathered
 * (regress-int.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "append.h"
#include "regress-int.h"

void
rg_append (char *buf, size_t len, const char *text)
{
  size_t at = strlen (buf);

  if (at + 1 >= len)
    return;
  snprintf (buf + at, len - at, "%s%s", at ? "; " : "", text);
}

void
rg_say (struct rg_msgs *ms, enum rg_kind kind, const char *key,
        const char *after, const char *fmt, ...)
{
  struct rg_said s = {.kind = kind}, *m = NULL;
  va_list ap;
  size_t i;

  va_start (ap, fmt);
  vsnprintf (s.text, sizeof s.text, fmt, ap);
  va_end (ap);
  snprintf (s.after, sizeof s.after, "%s", after ? after : "");
  for (i = 0; i < ms->n && m == NULL; i++)
    if (ms->m[i].kind == kind && strcmp (ms->m[i].text, s.text) == 0 &&
        strcmp (ms->m[i].after, s.after) == 0)
      m = &ms->m[i];
  if (m == NULL) {
    if ((m = fd_append (&ms->m, &ms->n, sizeof *ms->m)) == NULL)
      return;
    *m = s;
  }
  if (key[0])
    rg_append (m->keys, sizeof m->keys, key);
}

/* "text (keys; after)", with ", " between the keys. */
static void
said (const struct rg_said *s, char *buf, size_t len)
{
  char keys[sizeof s->keys];
  size_t i, j;

  for (i = j = 0; s->keys[i] && j + 1 < sizeof keys; i++)
    if (s->keys[i] == ';')
      keys[j++] = ',';
    else
      keys[j++] = s->keys[i];
  keys[j] = '\0';
  if (keys[0] || s->after[0])
    snprintf (buf, len, "%s (%s%s%s)", s->text, keys,
              keys[0] && s->after[0] ? "; " : "", s->after);
  else
    snprintf (buf, len, "%s", s->text);
}

void
rg_flush (struct rg_msgs *ms, struct fd_finding *f)
{
  char buf[1400];
  size_t i;

  for (i = 0; i < ms->n; i++) {
    said (&ms->m[i], buf, sizeof buf);
    if (ms->m[i].kind == RG_WHY)
      rg_append (f->why, sizeof f->why, buf);
    else if (ms->m[i].kind == RG_CHANGED)
      rg_append (f->changed, sizeof f->changed, buf);
    else
      rg_append (f->note, sizeof f->note, buf);
  }
  free (ms->m);
  ms->m = NULL;
  ms->n = 0;
}
