/*
 * cli_setup.h — what commands share above the option parser: the
 * configuration flags (train/cfg_args.h), recording a run in the store, and
 * small readers of option values with the CLI's messages.
 */
#ifndef ZS_CLI_SETUP_H
#define ZS_CLI_SETUP_H

#include "cli/cmd.h"
#include "train/cfg_args.h"

#include <stdbool.h>

/* A command line of a command that takes every configuration flag besides
 * its own options. */
struct zs_cli_line {
    struct zs_opt opts[ZS_ARGS_MAXOPTS];
    size_t nopts;
    struct zs_args a;
};

/* Parses argv (argv[0] the command's name) against own and every
 * configuration flag (zs_cfg_args_opts).  Returns 0 or ZS_EUSAGE. */
int zs_cli_parse(int argc, char **argv, const struct zs_opt *own, size_t nown,
                 const char *cmdname, struct zs_cli_line *l,
                 struct zs_err *err);

/* Value of option `name` in l (NULL when absent). */
const char *zs_cli_get(const struct zs_cli_line *l, const char *name);

/* The one optional scenario file of simulate and plan: *scenario is the
 * positional argument or NULL; more than one is a usage error. */
int zs_cli_scenario(const struct zs_cli_line *l, const char *cmdname,
                    const char **scenario, struct zs_err *err);

/* Reads option --opt's value v (NULL: absent, *out untouched) as a decimal
 * integer in [lo, hi]; anything else is a usage error naming the option. */
int zs_cli_int(const char *opt, const char *v, long lo, long hi, long *out,
               struct zs_err *err);

/* Reads option --opt's value v (NULL: absent, *out untouched) as yes or
 * no; anything else is a usage error naming the option. */
int zs_cli_yesno(const char *opt, const char *v, bool *out,
                 struct zs_err *err);

/* The subcommands of hw and model: list (no arguments) and show, and the
 * messages for any other word. */
struct zs_cli_list_show {
    int (*list)(struct zs_err *err);
    int (*show)(const struct zs_args *a, struct zs_err *err);
    const char *unknown; /* format, %s the word */
    /* NULL, or the format when the word is close to list or show: %s the
     * word, then %s the subcommand meant */
    const char *did_you_mean;
};

/* Parses argv against opts and runs the subcommand a->pos[0] names; no
 * subcommand, or arguments after list, are usage errors naming cmd. */
int zs_cli_run_list_show(int argc, char **argv, const struct zs_opt *opts,
                         size_t nopts, const char *cmd,
                         const struct zs_cli_list_show *subs,
                         struct zs_err *err);

struct zs_run_meta; /* store/store.h */

/* Fills m for a run recorded now by this zsim: kind, scenario, version,
 * commit, and the command line "zsim " + argv joined by spaces into line
 * (cap bytes, truncated), which m points to. */
void zs_cli_run_meta(struct zs_run_meta *m, const char *kind,
                     const char *scenario, int argc, char **argv, char *line,
                     size_t cap);

/* Records a run document in the SQLite store at db (the --db flag):
 * kind "simulate" or "plan", scenario the configuration's name, the command
 * line, zsim's version and commit, and the time. */
int zs_cli_record(const char *db, const char *kind, const char *scenario,
                  int argc, char **argv, const char *doc, struct zs_err *err);

#endif
