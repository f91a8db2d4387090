/*
 * run.h — the whole run: model load, engine init, first step, steady steps,
 * evaluation, checkpoint saves, epoch boundaries and leaks, composed from one
 * step simulation (zs_simulate) into a per-node host-memory timeline and a
 * per-rank GPU timeline (issue 4; DESIGN §3 "The whole run").
 *
 * The engine simulates steps; the run composes them.  Nothing here simulates
 * a step again: a run of millions of steps costs O(epochs x log steps).  Yet
 * the OOM point is exact for the model below: every level is a nondecreasing
 * function of the step inside an epoch (leaks and copy-on-write only grow),
 * so the first step at which the node exceeds its RAM is found per epoch and
 * per kind of moment (training step, evaluation, save, epoch boundary) by
 * binary search, and the earliest wins.
 *
 * Host figures are those of the node holding rank 0 (it gathers the 16-bit
 * state dict at a save, so it is the worst node); GPU figures are per rank.
 */
#ifndef ZS_RUN_H
#define ZS_RUN_H

#include "sched/sched.h"

#include <stdbool.h>
#include <stdint.h>

/* Moments of a run, in the order they occur. */
enum zs_run_phase {
    ZS_RP_LOAD,   /* from_pretrained + deepspeed.initialize's partitioning */
    ZS_RP_INIT,   /* engine init: optimizer buffers and their transients */
    ZS_RP_FIRST,  /* step 1: trace recording, lazy Adam states */
    ZS_RP_STEADY, /* steps 2..N */
    ZS_RP_EVAL,   /* an evaluation pass after a step */
    ZS_RP_SAVE,   /* a checkpoint save after a step */
    ZS_RP_EPOCH,  /* the boundary between two epochs */
    ZS_RP_COUNT
};
const char *zs_run_phase_name(int ph);

/* A leak, per rank (a leak lives in a process). */
struct zs_leak {
    char name[64]; /* "none", the preset, or the text given */
    double
        once_bytes_per_elem; /* at step 1, x this rank's trainable partition */
    double
        step_bytes_per_elem; /* every step, x this rank's trainable partition */
    int64_t once_bytes;      /* at step 1 (absolute) */
    int64_t step_bytes;      /* every step (absolute) */
    int64_t epoch_bytes;     /* at every epoch boundary (absolute) */
    const char *source;      /* static: where the figure comes from */
};

/* Presets, for usage text and messages: "ds7693, ds2984". */
const char *zs_leak_preset_names(void);
/* Parses "none", a preset name, "BYTES/step" or "BYTES/epoch" (BYTES as
 * --host-ram: "2GiB", "500MB", "123").  Returns 0, or -1 (out untouched). */
int zs_leak_parse(const char *text, struct zs_leak *out);

/* What the run needs from the step simulation beyond zs_sim_result, read
 * from the engine's pool records by zs_run_levels_from_sim. */
struct zs_run_levels {
    int64_t
        host_init_peak_rank; /* host peak before step 1 (engine init buffers) */
    int64_t
        host_resident_rank; /* host held between steps (after the last step) */
    int64_t gpu_init_peak_rank; /* GPU allocated peak before step 1 */
    int64_t gpu_resident_rank;  /* GPU allocated between steps */
    double init_s;              /* simulated time before step 1 */
};

/* Reads the levels from the sim of the last zs_simulate (GPU pool 0, host
 * pool 1, as simulate.c creates them). */
void zs_run_levels_from_sim(zs_sim *sim, const struct zs_sim_result *res,
                            struct zs_run_levels *lv);

struct zs_run_row {
    int64_t host_node;   /* peak host bytes on rank 0's node */
    int64_t gpu_rank;    /* peak GPU allocated bytes per rank */
    double time_s;       /* time spent in this phase over the whole run */
    int64_t count;       /* occurrences */
    int64_t epoch, step; /* where its host peak is (step 0: before step 1) */
};

struct zs_run_oom {
    int where;     /* enum zs_oom_where */
    int phase;     /* enum zs_run_phase */
    int64_t epoch; /* 1-based */
    int64_t step;  /* global optimizer step, 1-based; 0 = before step 1 */
    int64_t step_in_epoch;
    int64_t needed_bytes, available_bytes;
    double after_s; /* wall time from launch to the failure */
};

struct zs_run {
    /* counts */
    int64_t samples_per_step; /* micro x dp x accum */
    int64_t
        steps_per_epoch; /* floor(samples / (micro x dp)) / accum, drop_last */
    int64_t dropped_samples; /* per epoch, by drop_last */
    int64_t steps_total;     /* epochs x steps_per_epoch, capped by max_steps */
    int64_t epochs_run;      /* epochs the run enters */
    bool max_steps_cut;      /* max_steps ended the run early */
    int64_t nevals, nsaves;
    /* model inputs, as used */
    struct zs_leak leak;
    int64_t trainable_part_rank; /* trainable partition elements per rank */
    int64_t load_bytes_rank;     /* host per rank at load */
    int64_t save_extra_node; /* rank 0's node at a save: gathered state dict +
                                buffer */
    int64_t worker_cow_rank; /* per worker at most: dataset copy-on-write */
    int64_t worker_pt_rank;  /* per worker: page-table copy of the parent */
    int64_t
        init_transient_rank; /* .clone().float() transient not in the engine */
    double eval_s, save_s, load_s, epoch_s;
    /* results */
    struct zs_run_row row[ZS_RP_COUNT];
    int64_t peak_host_node; /* worst moment, rank 0's node */
    int peak_phase;
    int64_t peak_epoch, peak_step;
    int64_t peak_gpu_rank; /* GPU allocated per rank, whole run */
    int64_t host_capacity_node, gpu_capacity_rank;
    struct zs_run_oom oom;
    double wall_s, gpu_hours, cost;
    int64_t world, nodes, procs;
};

/* Whether cfg asks for a whole run (dataset_samples > 0). */
bool zs_run_wanted(const struct zs_cfg *c);

/* Checks the whole-run fields that the table cannot: the leak text, and a
 * dataset giving at least one optimizer step per epoch.  leak_file and
 * samples_file name the scenario file a field came from (ZS_EINPUT naming
 * it), or are NULL when it came from a flag (ZS_EUSAGE naming the flag). */
int zs_run_check(const struct zs_cfg *c, const char *leak_file,
                 const char *samples_file, struct zs_err *err);

/* Steps per epoch with drop_last (HF Trainer: num_update_steps_per_epoch =
 * len(dataloader) // gradient_accumulation_steps). */
int64_t zs_run_steps_per_epoch(const struct zs_cfg *c);

/* Composes the run.  res and lv come from one zs_simulate of su. */
int zs_run_compose(const struct zs_setup *su, const struct zs_sim_result *res,
                   const struct zs_run_levels *lv, struct zs_run *out,
                   struct zs_err *err);

/* A moment of the run: its host bytes on rank 0's node, GPU allocated bytes
 * per rank, and the wall time at which it ends.  `step` is the global step
 * the moment is (FIRST, STEADY) or follows (EVAL, SAVE); for EPOCH the first
 * step of the new epoch; ignored for LOAD and INIT.  For tests and the
 * timeline; r must come from zs_run_compose with the same inputs. */
struct zs_run_moment {
    int64_t host_node, gpu_rank;
    double t_end_s;
};
void zs_run_moment_at(const struct zs_setup *su,
                      const struct zs_sim_result *res,
                      const struct zs_run_levels *lv, const struct zs_run *r,
                      int phase, int64_t step, struct zs_run_moment *out);
/* Whether step is a save / an evaluation step of the run. */
bool zs_run_is_save(const struct zs_cfg *c, const struct zs_run *r,
                    int64_t step);
bool zs_run_is_eval(const struct zs_cfg *c, const struct zs_run *r,
                    int64_t step);

#endif
