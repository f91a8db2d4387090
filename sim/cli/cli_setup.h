/*
 * cli_setup.h — turning a command line (defaults < scenario file < flags)
 * into a configuration and the set of flags given, which train/setup.h then
 * resolves.  Shared by simulate, plan, bench and schedule export, so that
 * every configuration flag works the same way everywhere (DESIGN §4).
 */
#ifndef ZS_CLI_SETUP_H
#define ZS_CLI_SETUP_H

#include "cli/cmd.h"
#include "hw/hw.h"
#include "model/model.h"
#include "train/config.h"
#include "train/setup.h"

/* Options of a command: its own, followed by every configuration flag.
 * Returns the count (<= ZS_ARGS_MAXOPTS); opts has room for that many. */
size_t zs_cli_opts(const struct zs_opt *own, size_t nown, struct zs_opt *opts);

/* Applies a scenario file (positional pos, may be NULL) and then every
 * configuration flag present in a, over cfg's current values; given (may be
 * NULL) is cleared and then names every flag applied, for
 * zs_setup_resolve. */
int zs_cli_config(const struct zs_args *a, const struct zs_opt *opts,
                  size_t nopts, const char *scenario, struct zs_cfg *cfg,
                  struct zs_cfg_given *given, struct zs_err *err);

/* Records a run document in the SQLite store at db (the --db flag):
 * kind "simulate" or "plan", scenario the configuration's name, the command
 * line, zsim's version and commit, and the time. */
int zs_cli_record(const char *db, const char *kind, const char *scenario,
                  int argc, char **argv, const char *doc, struct zs_err *err);

#endif
