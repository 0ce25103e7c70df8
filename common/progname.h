/* futuredisk — the command's name, as its messages begin ("futuredisk
 * run: ..."): one spelling for every layer that speaks to the user.
 */
#ifndef FUTUREDISK_PROGNAME_H
#define FUTUREDISK_PROGNAME_H

extern const char *const fd_progname;

#endif
