/*
 * modelout.h — what `zsim model show` prints: one model's module tree,
 * parameters, FLOPs per token, activations per checkpointing mode and loss
 * buffers, as text or as one JSON document (schema "zsim.model/1").
 */
#ifndef ZS_MODELOUT_H
#define ZS_MODELOUT_H

#include "model/model.h"
#include "util/err.h"

/* What to show: the model (borrowed), the training method and the sequence
 * length the activations and FLOPs are taken at (micro-batch 1). */
struct zs_model_show {
    const struct zs_model *m;
    struct zs_method_opts mo;
    int64_t seq;
};

/* Computes every table first and prints only when all succeeded, so an
 * error (out of memory) never leaves partial output. */
int zs_modelout_text(const struct zs_model_show *c, struct zs_err *err);
void zs_modelout_json(const struct zs_model_show *c);

#endif
