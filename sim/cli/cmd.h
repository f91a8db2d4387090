/*
 * cmd.h — the subcommand entry; the option parser is util/args.h.
 *
 * Each subcommand lives in sim/cli/cmd_<name>.c and defines
 *   const struct zs_cmd zs_cmd_<name>;
 * main.c's dispatch table is generated from those file names.  A command's
 * run() returns 0 or a negative ZS_E* code with err set; an empty message
 * means the command already reported (e.g. a gate that printed its verdict).
 */
#ifndef ZS_CMD_H
#define ZS_CMD_H

#include "util/args.h"
#include "util/err.h"

#include <stddef.h>
#include <stdio.h>

struct zs_cmd {
    const char *name;
    const char *summary; /* one line for `zsim --help` */
    const char *usage;   /* full text for `zsim NAME --help` */
    int (*run)(int argc, char **argv, struct zs_err *err); /* argv[0]=name */
};

/* Whether stderr is a terminal (progress is shown only then). */
int zs_stderr_is_tty(void);

#endif
