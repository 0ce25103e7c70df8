/* futuredisk — common: the little JSON writing the project needs.
 *
 * Stats files, fault logs, control-socket replies and `--json` output are
 * all written by hand-rolled printf; this is the one place strings get
 * escaped, so none of them can emit invalid JSON.
 */
#ifndef FUTUREDISK_JSON_H
#define FUTUREDISK_JSON_H

#include <stdio.h>

/* Write s as a JSON string literal, quotes included. */
extern void fd_json_string (FILE *fp, const char *s);

#endif
