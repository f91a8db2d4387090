/*
 * simout.h — outputs of one simulation: the people's report, the JSON
 * document (schema "zsim.simulate/1", an interface: keys change only with a
 * schema bump), the Chrome/Perfetto trace and the memory timeline CSV.
 */
#ifndef ZS_SIMOUT_H
#define ZS_SIMOUT_H

#include "sched/sched.h"

#include <stdio.h>

struct zs_simout {
    const struct zs_setup *su;
    const struct zs_sim_result *res;
    const char *model_input; /* what the user typed */
    zs_sim *sim; /* optional: records of the run, for the timeline */
};

/* One-line verdict: "fits: ..." / "GPU OOM ..." / "host OOM ...". */
void zs_simout_verdict(const struct zs_simout *o, char *buf, size_t cap);
/* The "          SIZE ..." line for memory another process holds on the
 * GPUs (--gpu-reserved), nothing when none: on_every ends the line when it
 * is held on every GPU; tail follows "... the last N GPUs of each node"
 * otherwise.  simulate and plan word the first case each their own way. */
void zs_simout_reserved_line(FILE *out, const struct zs_cfg *c,
                             const char *on_every, const char *tail);
void zs_simout_print(const struct zs_simout *o, FILE *out);
/* Returns a heap string (zs_free) or NULL on allocation failure. */
char *zs_simout_json(const struct zs_simout *o);
/* The same document with `item` (a cJSON * as void *, ownership taken, may
 * be NULL) added under `key`: the whole run adds "run" (present/runout.h). */
char *zs_simout_json_with(const struct zs_simout *o, const char *key,
                          void *item);
/* The JSON object of one step result, for the planner's document
 * (a cJSON * as void *, to keep cJSON inside out/). */
void *zs_simout_step_json(const struct zs_step_result *r);
const char *zs_verdict_key(const struct zs_sim_result *res);

/* Trace and timeline from the engine's records of the last run. Written to a
 * temporary name and renamed (STYLE 14). */
int zs_write_trace(zs_sim *sim, const char *path, struct zs_err *err);
int zs_write_timeline(zs_sim *sim, int gpu_pool, int host_pool, int host_scale,
                      const char *path, struct zs_err *err);

#endif
