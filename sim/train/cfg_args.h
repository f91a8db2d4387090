/*
 * cfg_args.h — a configuration from a command line: defaults < scenario
 * file < flags, and the set of flags given, which train/setup.h then
 * resolves.  Shared by simulate, plan, bench, schedule export and the
 * published-run checks (validate/), so that every configuration flag works
 * the same way everywhere (DESIGN §4).
 */
#ifndef ZS_CFG_ARGS_H
#define ZS_CFG_ARGS_H

#include "hw/hw.h"
#include "model/model.h"
#include "train/config.h"
#include "train/setup.h"
#include "util/args.h"

/* Options of a command: its own, followed by every configuration flag.
 * Returns the count (<= ZS_ARGS_MAXOPTS); opts has room for that many. */
size_t zs_cfg_args_opts(const struct zs_opt *own, size_t nown,
                        struct zs_opt *opts);

/* Applies a scenario file (may be NULL) and then every configuration flag
 * present in a, over cfg's current values; given (may be NULL) is cleared
 * and then names every flag applied, for zs_setup_resolve. */
int zs_cfg_args_apply(const struct zs_args *a, const struct zs_opt *opts,
                      size_t nopts, const char *scenario, struct zs_cfg *cfg,
                      struct zs_cfg_given *given, struct zs_err *err);

/* The whole step: cfg's defaults, then zs_cfg_args_apply, then
 * zs_setup_resolve with the flags given, filling m and cl. */
int zs_cfg_args_resolve(const struct zs_args *a, const struct zs_opt *opts,
                        size_t nopts, const char *scenario, struct zs_cfg *cfg,
                        struct zs_model *m, struct zs_cluster *cl,
                        struct zs_err *err);

#endif
