/* futuredisk — harness: the --target grammar (see target.h). */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "faultmodels/units.h"
#include "populate.h" /* FD_BLOCK */
#include "target.h"

bool
fd_target_next (const char **s, char *item, size_t size)
{
  size_t len = strcspn (*s, "+");

  if (**s == '\0')
    return false;
  snprintf (item, size, "%.*s", (int)len, *s);
  *s += len + ((*s)[len] == '+');
  return true;
}

bool
fd_target_any (const char *target, bool (*is) (const char *kind))
{
  char item[128];

  while (fd_target_next (&target, item, sizeof item))
    if (is (fd_target_kind_of (item)))
      return true;
  return false;
}

int
fd_target_check (const char *target, struct fm_err *err)
{
  char item[128];
  const char *s = target;
  unsigned parts = 0;

  if (*target == '\0' || target[strlen (target) - 1] == '+')
    return fm_fail (err, "target '%.64s': TYPE[:N[:KIND]][+...]", target);
  while (fd_target_next (&s, item, sizeof item)) {
    char type[32] = "", count[32] = "1", kind[32] = "ure", extra[8] = "";
    uint64_t n;
    if (++parts > FD_TARGET_MAX)
      return fm_fail (err, "target '%.64s': at most %d parts joined by '+'",
                      target, FD_TARGET_MAX);
    if (sscanf (item, "%31[^:]:%31[^:]:%31[^:]:%7s", type, count, kind,
                extra) == 4 ||
        !type[0]) {
      return fm_fail (err, "target '%.64s': TYPE[:N[:KIND]][+...]", target);
    }
    if (fm_parse_uint ("target count", count, 1, 1000, &n, err) == -1 ||
        fd_trial_target_kind (kind, err) == -1)
      return -1;
  }
  return 0;
}

bool
fd_target_types_known (const char *target, const char *types, char *bad,
                       size_t size)
{
  char want[72], known[320], item[128];

  /* " data inode ... " contains " TYPE " exactly when it is known. */
  snprintf (known, sizeof known, " %s ", types);
  while (fd_target_next (&target, item, sizeof item)) {
    int len = (int)strcspn (item, ":");
    snprintf (want, sizeof want, " %.*s ", len, item);
    if (len == 0 || strstr (known, want) == NULL) {
      snprintf (bad, size, "%.*s", len, item);
      return false;
    }
  }
  return true;
}

const char *
fd_target_kind_of (const char *target)
{
  const char *n = strchr (target, ':'), *k = n ? strchr (n + 1, ':') : NULL;

  return k ? k + 1 : "ure";
}

int
fd_target_stripe (const char *kind, uint64_t *bytes, enum fd_stripe_fault *how,
                  struct fm_err *err)
{
  static const struct {
    const char *name;
    enum fd_stripe_fault how;
  } kinds[] = {
      {"stripe-copy", FD_STRIPE_COPY},
      {"stripe-ure", FD_STRIPE_URE},
      {"stripe", FD_STRIPE_GARBLE},
  };
  const char *size = NULL;
  size_t i;

  *bytes = 0;
  *how = FD_STRIPE_GARBLE;
  for (i = 0; size == NULL && i < sizeof kinds / sizeof kinds[0]; i++) {
    size_t len = strlen (kinds[i].name);
    if (strncmp (kind, kinds[i].name, len) == 0 &&
        (kind[len] == '\0' || kind[len] == '=')) {
      size = kind + len;
      *how = kinds[i].how;
    }
  }
  if (size == NULL)
    return 0;
  if (*size == '\0') {
    *bytes = FD_STRIPE_DEFAULT;
    return 0;
  }
  if (fm_parse_size ("target stripe", size + 1, bytes, err) == -1)
    return -1;
  if (*bytes < FD_BLOCK || *bytes > (64 << 20) || *bytes % FD_BLOCK) {
    return fm_fail (err,
                    "target stripe '%.32s': a multiple of 4K from 4K to 64M",
                    size + 1);
  }
  return 0;
}

int
fd_trial_target_kind (const char *kind, struct fm_err *err)
{
  uint64_t stripe;
  enum fd_stripe_fault how;

  if (fd_target_stripe (kind, &stripe, &how, err) == -1)
    return -1;
  if (strcmp (kind, "ure") && strcmp (kind, "lse") && strcmp (kind, "rot") &&
      !fd_write_fault_kind (kind) && stripe == 0)
    return fm_fail (err,
                    "target kind '%.32s' is not ure, lse, rot, lost-write, "
                    "misdirected-write, torn-write, stripe[=SIZE], "
                    "stripe-copy[=SIZE] or stripe-ure[=SIZE]",
                    kind);
  return 0;
}

bool
fd_write_fault_kind (const char *kind)
{
  return strcmp (kind, "lost-write") == 0 ||
         strcmp (kind, "misdirected-write") == 0 ||
         strcmp (kind, "torn-write") == 0;
}

bool
fd_target_edits_store (const char *kind)
{
  uint64_t stripe;
  enum fd_stripe_fault how;
  struct fm_err e;

  /* An unreadable stripe is the disk's to keep, as any ure. */
  return fd_write_fault_kind (kind) ||
         (fd_target_stripe (kind, &stripe, &how, &e) == 0 && stripe &&
          how != FD_STRIPE_URE);
}
