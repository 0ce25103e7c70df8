/* futuredisk — harness: the subcommands of the `futuredisk` command.
 *
 * Each subcommand lives in cmd-NAME.c with one entry point that takes its
 * own argv (argv[0] is the subcommand name) and returns the exit code.
 */
#ifndef FUTUREDISK_COMMANDS_H
#define FUTUREDISK_COMMANDS_H

extern int cmd_attach (int argc, char **argv);
extern int cmd_campaign (int argc, char **argv);
extern int cmd_compare (int argc, char **argv);
extern int cmd_ctl (int argc, char **argv);
extern int cmd_detach (int argc, char **argv);
extern int cmd_merge (int argc, char **argv);
extern int cmd_model (int argc, char **argv);
extern int cmd_predict (int argc, char **argv);
extern int cmd_report (int argc, char **argv);
extern int cmd_run (int argc, char **argv);
extern int cmd_show (int argc, char **argv);
extern int cmd_demo (int argc, char **argv);

#include "progname.h" /* fd_progname */

#endif
