/*
 * cli_setup.h — what commands share above the option parser: the
 * configuration flags (train/cfg_args.h), recording a run in the store, and
 * small readers of option values with the CLI's messages.
 */
#ifndef ZS_CLI_SETUP_H
#define ZS_CLI_SETUP_H

#include "cli/cmd.h"
#include "train/cfg_args.h"

/* Records a run document in the SQLite store at db (the --db flag):
 * kind "simulate" or "plan", scenario the configuration's name, the command
 * line, zsim's version and commit, and the time. */
int zs_cli_record(const char *db, const char *kind, const char *scenario,
                  int argc, char **argv, const char *doc, struct zs_err *err);

#endif
