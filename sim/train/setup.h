/*
 * setup.h — turning a configuration into the resolved model, cluster and
 * configuration one simulation runs: the step every command (simulate, plan,
 * bench, schedule export, the published-run checks) and the tests share.
 *
 * Precedence: defaults < scenario file < --ds-config values < flags given.
 * A DeepSpeed JSON can only be read once the model (hidden size, for "auto")
 * and the world size are known, so it is applied after resolving them, and
 * only to fields no flag set (the caller passes which flags it was given).
 */
#ifndef ZS_SETUP_H
#define ZS_SETUP_H

#include "hw/hw.h"
#include "model/model.h"
#include "train/config.h"

/* Resolves the model and cluster named by cfg, then cfg itself, then applies
 * cfg->ds_config (if any) to the fields not in given (NULL: no flag given)
 * and resolves again.  Errors: those of the model, cluster, configuration
 * and DeepSpeed JSON readers, one located line each. */
int zs_setup_resolve(struct zs_cfg *cfg, const struct zs_cfg_given *given,
                     struct zs_model *m, struct zs_cluster *cl,
                     struct zs_err *err);

#endif
