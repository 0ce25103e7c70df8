/* futuredisk — the command's name (see progname.h). */
#include "progname.h"

const char *const fd_progname = "futuredisk";
