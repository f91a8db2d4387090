/*
 * runout.h — outputs of the whole run (sim/run/run.h): the "whole run"
 * section of `zsim simulate`, its "run" object in the JSON document, the
 * whole-run timeline CSV and its gnuplot chart.
 *
 * The timeline is a list of moments (load, init, step 1, each epoch's first
 * and last step, every evaluation and save, each boundary, the failure);
 * with more than ZS_RUNOUT_MAX_EVENTS evaluations and saves, every k-th is
 * listed, always including the worst and the failing one.
 */
#ifndef ZS_RUNOUT_H
#define ZS_RUNOUT_H

#include "run/run.h"

#include <stdio.h>

#define ZS_RUNOUT_MAX_EVENTS 4000

struct zs_runout {
    const struct zs_setup *su;
    const struct zs_sim_result *res;
    struct zs_run_levels lv;
    struct zs_run run;
};

/* Reads the levels from sim (the one zs_simulate just ran) and composes the
 * run into ro.  su and res must outlive ro. */
int zs_runout_compose(struct zs_runout *ro, const struct zs_setup *su,
                      const struct zs_sim_result *res, zs_sim *sim,
                      struct zs_err *err);

/* "host OOM at epoch 2, step 1137 (checkpoint save): needs ... of ..." or
 * "fits: worst moment ...". */
void zs_runout_verdict(const struct zs_runout *ro, char *buf, size_t cap);
void zs_runout_print(const struct zs_runout *ro, FILE *out);
/* The "run" object (a cJSON * as void *), or NULL on allocation failure. */
void *zs_runout_json(const struct zs_runout *ro);
/* CSV: t_s,epoch,step,phase,host_bytes_per_node,gpu_allocated_bytes_per_rank.
 * Written through a temporary file and rename. */
int zs_runout_write_timeline(const struct zs_runout *ro, const char *path,
                             struct zs_err *err);
/* PNG (and an SVG beside it) drawn by gnuplot; path must end in ".png". */
int zs_runout_plot(const struct zs_runout *ro, const char *path,
                   struct zs_err *err);

#endif
