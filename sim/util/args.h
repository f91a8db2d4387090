/*
 * args.h — the long-option parser every subcommand shares (the readers of
 * option values with the CLI's messages live in the CLI, beside the
 * commands).  It sits in util/ because the published-run checks (validate/)
 * read a run's flags with it too, below the CLI.
 *
 * Options are long only (--name V, --name=V, or a --flag); "--" ends them;
 * an unknown option is a usage error with a did-you-mean.  Values are
 * pointers into argv: the parse allocates nothing.
 */
#ifndef ZS_ARGS_H
#define ZS_ARGS_H

#include "util/err.h"

#include <stddef.h>

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

#endif
