/*
 * cmd.h — the subcommand entry and the shared option parser.
 *
 * Each subcommand lives in sim/cli/cmd_<name>.c and defines
 *   const struct zs_cmd zs_cmd_<name>;
 * main.c's dispatch table is generated from those file names.  A command's
 * run() returns 0 or a negative ZS_E* code with err set; an empty message
 * means the command already reported (e.g. a gate that printed its verdict).
 */
#ifndef ZS_CMD_H
#define ZS_CMD_H

#include "util/err.h"

#include <stddef.h>
#include <stdio.h>

struct zs_cmd {
    const char *name;
    const char *summary; /* one line for `zsim --help` */
    const char *usage;   /* full text for `zsim NAME --help` */
    int (*run)(int argc, char **argv, struct zs_err *err); /* argv[0]=name */
};

/* Option table for zs_args_parse. */
struct zs_opt {
    const char *name; /* long name without dashes: "model" */
    int has_arg;      /* 1: takes a value (--x V or --x=V); 0: a flag */
};

#define ZS_ARGS_MAXPOS 16
#define ZS_ARGS_MAXOPTS 128 /* options one command may declare */

struct zs_args {
    const char
        *val[ZS_ARGS_MAXOPTS]; /* per option: value, "" for a flag, or NULL */
    const char *pos[ZS_ARGS_MAXPOS]; /* positional arguments */
    int npos;
};

/* Parses argv[1..argc-1] against opts (at most ZS_ARGS_MAXOPTS).  Unknown
 * options are usage errors with a did-you-mean; a repeated option keeps the
 * last value.
 * "--" ends options.  Returns 0 or ZS_EUSAGE. */
int zs_args_parse(int argc, char **argv, const struct zs_opt *opts,
                  size_t nopts, const char *cmdname, struct zs_args *out,
                  struct zs_err *err);

/* Value of option `name` (NULL when absent). */
const char *zs_args_get(const struct zs_args *a, const struct zs_opt *opts,
                        size_t nopts, const char *name);

/* Whether stderr is a terminal (progress is shown only then). */
int zs_stderr_is_tty(void);

#endif
