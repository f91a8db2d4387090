/*
 * plan.h — the planner: enumerate configurations, simulate every one with the
 * engine (planner mode of zs_simulate), rank the feasible ones, and explain
 * the rest.
 *
 * Search space (per the plan issue): processes per node (1, 2, 4, ... up to the
 * node's GPUs), micro-batch (1, 2, 4, 8), accumulation (derived from the
 * global batch), checkpointing (none, selective, full), framework and ZeRO
 * stage (DeepSpeed ZeRO-3 and ZeRO-2, FSDP2 full and no-reshard) and offload
 * (none, optimizer, optimizer+params; FSDP2: none or both).  Candidates run
 * on two threads, each with its own engine.
 */
#ifndef ZS_PLAN_H
#define ZS_PLAN_H

#include "sched/sched.h"

enum zs_objective { ZS_OBJ_THROUGHPUT, ZS_OBJ_COST, ZS_OBJ_MEMORY };

enum zs_cand_status {
    ZS_CAND_FITS,
    ZS_CAND_GPU_OOM,
    ZS_CAND_HOST_OOM,
    ZS_CAND_INVALID, /* e.g. the global batch does not divide */
    ZS_CAND_ERROR
};

struct zs_candidate {
    struct zs_cfg cfg;
    int status;       /* enum zs_cand_status */
    char reason[384]; /* for rejected candidates, with the numbers */
    struct zs_sim_result res;
    double score; /* higher is better, by objective */
};

struct zs_plan {
    struct zs_candidate *cand;
    int n, cap;
    int best;   /* index or -1 */
    int *order; /* feasible candidates, best first */
    int nfeasible;
    double elapsed_s;
    int64_t events; /* of the candidates' results (zs_sim_result.events) */
    /* what the search ran: the engine's events over every run of every
     * candidate (partial ones stop at their OOM, completed ones ran twice),
     * and the candidates simulated whole */
    int64_t events_run;
    int nwhole;
    int64_t global_batch; /* sequences per optimizer step */
    bool global_batch_default;
    char suggestion[6][256]; /* when nothing fits: what would */
    int nsuggest;
    /* default allocator only: the candidates rejected for fragmentation
     * that fit with expandable_segments ("" none) */
    char alloc_note[512];
    /* GPU-OOM candidates that fit with activation offload (issue 14 §3;
     * plan.c act_offload_search), "" none */
    char act_note[512];
    /* fitting DeepSpeed ZeRO-3 CPU-offload candidates that run faster with
     * Twin-Flow (plan.c twin_note), "" none */
    char twin_note[1024]; /* three entries of ~170 characters */
    /* the host-RAM rejections that fit with DeepSpeed's bf16 master weights
     * + optimizer states (plan.c bf16_note), "" none */
    char bf16_note[1024];
    /* the three best fitting DeepSpeed optimizer-offload runs that go faster
     * with them (plan.c bf16_faster), "" none */
    char bf16_faster_note[1024];
    /* the three best fitting HF-eager runs that go faster with Liger's
     * fused kernels (plan.c liger_faster_cand), "" none */
    char liger_faster_note[1024];
};

/* Which GPU-OOM candidates are simulated whole (their need without the
 * limit and their steady step); the others stop at their OOM, which gives
 * the verdict and the reason's phase and module (zs_setup.verdict_only) and
 * leave cand.res.partial set, oom.needed_bytes a lower bound.  Every choice
 * prints the same: the environment variable ZSIM_PLAN_FULL forces ALL. */
enum zs_plan_complete {
    ZS_PLAN_COMPLETE_ALL,   /* every candidate (--json, --db) */
    ZS_PLAN_COMPLETE_SHOWN, /* those the text output shows or re-simulates */
    ZS_PLAN_COMPLETE_FEASIBLE /* none: only the feasible ones are used */
};

struct zs_plan_opts {
    int framework_any; /* 1: search DeepSpeed and FSDP2 */
    int objective;     /* enum zs_objective */
    int threads;       /* 0: 2 */
    bool progress;     /* progress on stderr (terminal only) */
    bool suggest;      /* when nothing fits, search what would */
    /* dimensions the user fixed (their values are in base) */
    bool fix_micro, fix_ckpt, fix_zero, fix_offload_opt, fix_offload_param;
    bool fix_param_buffer_size; /* --param-buffer-size given */
    /* search activation offload for the GPU-OOM candidates (plan
     * --act-offload yes, the default) */
    bool act_offload;
    /* search DeepSpeed ZeRO-3 with the optimizer on NVMe (docs/nvme.md);
     * needs the node's NVMe rates (profile "storage" or --nvme-read/-write) */
    bool allow_nvme;
    int complete; /* enum zs_plan_complete; 0 (ALL) in a zeroed struct */
    /* verdict-only candidates without zs_setup.prefix_cut (the same result,
     * slower; set by the environment variable ZSIM_PLAN_NOCUT too) */
    bool no_prefix_cut;
};

/* base: model/gpus/seq/method/... as given (framework fixed unless
 * framework_any).  Returns 0 or a negative ZS_E*. */
int zs_plan_run(const struct zs_model *m, const struct zs_cluster *cl,
                const struct zs_cfg *base, const struct zs_plan_opts *po,
                struct zs_plan *out, struct zs_err *err);
void zs_plan_release(struct zs_plan *p);

/* The options `zsim plan` starts from before its flags: both frameworks,
 * "what would fit" suggestions, activation offload searched, the text
 * output's completions (ZS_PLAN_COMPLETE_SHOWN).  cmd_plan and
 * `zsim bench` share them, so the benchmark times the search the command
 * runs. */
void zs_plan_opts_defaults(struct zs_plan_opts *po);
/* --allow-nvme's default: the node's NVMe rates are known (profile "storage"
 * or --nvme-read/--nvme-write in base). */
bool zs_plan_nvme_default(const struct zs_cfg *base,
                          const struct zs_cluster *cl);

/* "deepspeed zero3 offload opt+param, 8 procs, micro 1 x accum 8, ckpt full" */
void zs_plan_cand_label(const struct zs_candidate *c, char *buf, size_t cap);

/* Writes a DeepSpeed JSON for candidate c (atomically): what
 * `plan --emit-ds-config` writes; it lints clean and `simulate --ds-config`
 * reads it back to the same configuration. */
int zs_plan_emit_ds(const struct zs_candidate *c, const char *path,
                    struct zs_err *err);

#endif
