/* futuredisk — fs-under-test: a checker's output read a line at a time,
 * for the adapters' per-pass times (struct fd_fs's passes).
 */
#ifndef FUTUREDISK_PASSLINES_H
#define FUTUREDISK_PASSLINES_H

#include <stdbool.h>
#include <stddef.h>

#include "fsadapter.h"

/* One line, from `line` to `end` (its '\n' or the final '\0'): true
 * with a pass in *p, false if the line names none.
 */
typedef bool fd_pass_line (const char *line, const char *end,
                           struct fd_pass *p);

/* The passes `one` finds in the lines of out (none when out is NULL), at
 * most max: how many.
 */
extern size_t fd_pass_lines (const char *out, fd_pass_line *one,
                             struct fd_pass *p, size_t max);

#endif
