/*
 * sched.h — schedule builders and one simulated training step.
 *
 * zs_simulate builds, for one representative rank, the task graph of model
 * init, a first step (DeepSpeed: trace RECORD, no prefetch, lazy Adam state
 * allocation) and `steps` steady steps, runs it on the engine and reduces
 * the records to per-step results.  Ranks of a pure data-parallel job are
 * symmetric, so one rank stands for all (DESIGN §6: simulate distinct roles):
 * resources a rank shares with its node (host memory bandwidth, CPU cores,
 * a PCIe switch uplink) are scaled to that rank's share, and per-node host
 * memory is the rank's times the local ranks.  Work that is not symmetric
 * (rank 0 saving a checkpoint) belongs to the whole-run phases.
 *
 * Gradient accumulation: every micro-step between the first and the
 * boundary is built alike, so by default a step simulates its first
 * micro-step, K steady ones and the boundary, and the last steady one
 * stands for the accum - K - 2 not simulated (the shortcut).  It is used
 * only where the run proves it exact (the engine's state at the start of
 * the last steady micro-step and at the boundary's are the same); else K
 * doubles and the step is simulated again, up to every micro-step
 * (docs/engine.md "Accumulation: the shortcut and its proof").
 * zs_setup.all_micro_steps simulates every one.
 */
#ifndef ZS_SCHED_H
#define ZS_SCHED_H

#include "engine/engine.h"
#include "hw/hw.h"
#include "model/model.h"
#include "train/config.h"
#include "util/err.h"

#include <stdint.h>

/* Task classes (engine `cls`), for the step-time breakdown and traces. */
enum zs_cls {
    ZS_CLS_COMPUTE, /* GPU kernels of the model */
    ZS_CLS_COLL,    /* NCCL collectives */
    ZS_CLS_PCIE,    /* host<->device copies */
    ZS_CLS_OPT,     /* optimizer: CPU Adam, GPU Adam, grad unscale */
    ZS_CLS_HOST,    /* host-side work: kernel launches, hooks */
    ZS_CLS_MEM,     /* allocations and frees */
    ZS_CLS_SYNC,    /* joins and host waits */
    ZS_CLS_COPY,    /* on-GPU copies (cat, cast, bucket copies) */
    ZS_CLS_NVME,    /* NVMe swap reads and writes (aio, docs/nvme.md) */
    ZS_CLS_COUNT
};
const char *zs_cls_name(int cls);

/* Phases, carried in the task tag's high bits for "where" messages. */
enum zs_phase {
    ZS_PH_INIT,
    ZS_PH_FORWARD,
    ZS_PH_BACKWARD,
    ZS_PH_OPTIMIZER,
    ZS_PH_COUNT
};
const char *zs_phase_name(int ph);
/* Whether a task's tag (zs_task_rec.tag) is the engine init's, before the
 * first step: the buffers allocated once, and without zero.Init the whole
 * model (zero.c init_whole_model), all at the timeline's start. */
bool zs_tag_is_init(int32_t tag);

/* Export sidecar (for `zsim schedule export`): per engine task, what the
 * CUDA harness should run in its place.  Filled only when zs_setup.ex is set.
 */
enum zs_xkind {
    ZS_X_NONE = -1,
    ZS_X_ALLOC, /* bytes, pool (0 GPU, 1 host), pinned */
    ZS_X_FREE,  /* buffer = the ALLOC task */
    ZS_X_H2D,   /* bytes, pinned */
    ZS_X_D2H,
    ZS_X_GEMM, /* count x [m x k] x [k x n] */
    ZS_X_MEM,  /* memory-bound kernel moving bytes */
    ZS_X_COLL, /* coll (enum zs_coll), bytes = the full tensor */
    ZS_X_CPU,  /* CPU optimizer work over elements */
    ZS_X_WAIT  /* host-side work or wait */
};

struct zs_xtask {
    int kind;
    int64_t m, n, k, count, bytes, elements;
    int coll, pool;
    bool pinned;
    bool empty_cache; /* FREE: torch.cuda.empty_cache() after it */
    int32_t buffer;
    int32_t deps[3];
    int ndeps;
};

struct zs_export {
    struct zs_xtask *t; /* by engine task id; owned, zs_free */
    size_t n, cap;
    struct zs_xtask cur;
};

/* A build context kept across zs_simulate calls on one thread (a planner
 * worker's): the arrays a build grows (units, pieces, the prefix cut's, the
 * micro-step recordings) keep their room, so that a build of the same size
 * allocates nothing.  Not shared between threads.  zs_build_cache_new:
 * NULL when out of memory. */
struct zs_build_cache;
struct zs_build_cache *zs_build_cache_new(void);
void zs_build_cache_free(struct zs_build_cache *bc);
/* Micro-steps built and replayed (docs/engine.md "Replaying a
 * micro-step") by the builds that used the cache. */
void zs_build_cache_stats(const struct zs_build_cache *bc, int64_t *built,
                          int64_t *replayed);

/* A task the build counted after the prefix cut instead of submitting it
 * (zs_setup.count_log): what the count reads of it.  kind: ZS_TASK_DELAY
 * stands for a DELAY or a FLOW; pool, alloc_bytes: an ALLOC's (else -1, 0);
 * alloc_task: a FREE's (else -1). */
struct zs_counted {
    int32_t id;
    int kind, queue, cores, pool;
    int64_t alloc_bytes;
    int32_t alloc_task;
    int32_t deps[3];
    int ndeps;
    bool replayed; /* by a micro-step replay */
};

struct zs_setup {
    const struct zs_model *model;
    const struct zs_cluster *cluster;
    const struct zs_cfg *cfg;
    /* Planner mode: the first and one steady step (whatever cfg->steps
     * says). */
    bool plan_mode;
    /* Every micro-step of every simulated step is built and simulated, and
     * the results come from them directly (`zsim simulate
     * --all-micro-steps`); otherwise the shortcut (sched.h). */
    bool all_micro_steps;
    /* Planner, verdict only: a GPU OOM is not run again without the limit
     * (zs_simulate), so the result says where and why it failed but not what
     * it would need: oom.needed_bytes is then a lower bound (allocated +
     * request at the OOM), first/steady are empty and `partial` is set. */
    bool verdict_only;
    /* With verdict_only: build and run a prefix of the schedule first, and
     * when it stops at a GPU OOM that the rest cannot change, count the
     * rest instead of building it (docs/engine.md "The prefix cut").  The
     * result is the one without it. */
    bool prefix_cut;
    struct zs_export *ex; /* NULL, or filled for `schedule export` */
    /* NULL, or this thread's build context (zs_build_cache_new; borrowed
     * for the call): results do not depend on it */
    struct zs_build_cache *cache;
    /* Build every micro-step: none is replayed from an earlier one in the
     * same state (docs/engine.md "Replaying a micro-step"), which gives the
     * same tasks; for comparison.  The environment variable ZSIM_NO_REPLAY
     * does the same. */
    bool no_replay;
    /* Tests: called for every task a build counts after the prefix cut,
     * in id order (the submitted ones are in the sim: zs_sim_task_desc).
     * NULL: none. */
    void (*count_log)(void *arg, const struct zs_counted *c);
    void *count_log_arg;
};

#define ZS_LIVE_MAX 8

struct zs_live_buf {
    char name[112];
    int64_t bytes;
};

struct zs_step_result {
    double time_s;
    int64_t time_ns; /* the same, exact: what time_s is made from */
    double tokens_per_s_per_gpu;
    double mfu;
    int64_t peak_gpu_allocated, peak_gpu_reserved;
    int64_t peak_host_per_node, pinned_host_per_node;
    int64_t peak_host_per_rank, pinned_host_per_rank;
    double br_compute, br_coll, br_pcie, br_opt, br_other;
    double br_nvme; /* exposed NVMe swap time (0 without NVMe offload) */
    char bottleneck[200];
    char gpu_peak_where[160], host_peak_where[160];
    struct zs_live_buf gpu_live[ZS_LIVE_MAX], host_live[ZS_LIVE_MAX];
    int n_gpu_live, n_host_live;
    int64_t cache_flushes;
    int64_t t0_ns, t1_ns; /* the step's window in the simulated timeline */
};

enum zs_oom_where { ZS_OOM_NONE, ZS_OOM_GPU, ZS_OOM_HOST };

struct zs_oom_info {
    int where; /* enum zs_oom_where */
    char phase[24];
    int step;  /* 1-based; 0 = init */
    int micro; /* micro-step within the step */
    char module[112];
    int64_t needed_bytes, available_bytes; /* peak it would take vs capacity */
    int64_t request_bytes;
    /* GPU: what the caching allocator reserved without a limit */
    int64_t needed_reserved_bytes;
    /* GPU: allocated and reserved when the allocation failed (after the
     * allocator's cache flush and retry) */
    int64_t allocated_at_oom, reserved_at_oom;
};

struct zs_sim_result {
    struct zs_step_result first, steady;
    struct zs_oom_info oom;
    /* The other memory's OOM after the verdict's (where ZS_OOM_NONE: none),
     * which the verdict's alone would hide:
     *  - a host OOM whose run then ran out of GPU memory: that GPU OOM, with
     *    the need of the run without the GPU limit (a lower bound in a
     *    partial result); more host RAM alone would not make it fit;
     *  - a GPU OOM whose run without the GPU limit then crosses the host
     *    limit: that crossing, with that run's host peak; a GPU with more
     *    memory alone would not make it fit.  Unknown (none) in a partial
     *    result, which has no run without the limit. */
    struct zs_oom_info then;
    /* events of the run the result comes from (the run without the GPU limit
     * for a GPU OOM; for a partial result, the 2 x tasks that run would
     * have: engine.h zs_sim_max_task_cores).  A GPU OOM counts those of the
     * schedule whose run gave the verdict, also when its run without the
     * limit asked for more steady micro-steps (simulate.c zs_simulate). */
    int64_t events;
    bool partial; /* zs_setup.verdict_only stopped at a GPU OOM */
    int64_t events_run; /* events the engine ran: both runs of a GPU OOM */
    int64_t
        gpu_capacity_bytes; /* for tensors: HBM - context - NCCL - reserved */
    int64_t host_capacity_per_node;
    int64_t gpu_context_bytes; /* CUDA context + NCCL, outside the allocator */
    int64_t
        host_runtime_per_rank;    /* process runtime overhead counted in host */
    double model_flops_per_token; /* executed fwd+bwd FLOPs/token for MFU */
    /* Activation offload (issue 14 §3; actoff.c), one micro-step of this
     * rank: the mode (enum zs_act_offload), bytes per offloaded layer input,
     * layers offloaded, bytes copied each way over PCIe, and the host bytes
     * their buffers hold at the end of the forward (pinned: rounded to a
     * power of two by the CachingHostAllocator). */
    int act_offload;
    int64_t ao_bytes_per_layer, ao_layers_offloaded;
    int64_t ao_d2h_bytes, ao_h2d_bytes, ao_host_bytes;
    /* bitsandbytes paged optimizer states (cudaMallocManaged, outside
     * PyTorch's allocator and its peaks; gpuopt.c), bytes on this rank */
    int64_t paged_state_bytes;
    /* DeepSpeed ZeRO-3 with the optimizer on the CPU: the optimizer's
     * sub-groups on this rank and, under Twin-Flow (offload_optimizer.ratio
     * < 1), how many DeepSpeed steps on the GPU with torch.optim.AdamW and
     * their elements (zero.c twin_init); 0 otherwise */
    int64_t opt_groups, opt_groups_gpu, opt_gpu_elems;
};

/* Runs init + first step + cfg->steps steady steps.  `sim` may be NULL (a
 * private one is made) or a sim to reuse (it is reset).  On an OOM the result
 * has oom.where set and the step results measured so far.  Returns 0 or a
 * negative ZS_E*. */
int zs_simulate(const struct zs_setup *su, zs_sim *sim,
                struct zs_sim_result *res, struct zs_err *err);

/* The sim of the last zs_simulate with a caller-provided sim keeps its
 * records until reset: callers write traces and timelines from it. */

/* Bytes another process holds on the simulated rank's GPU (--gpu-reserved on
 * --gpu-reserved-gpus of them). */
int64_t zs_reserved_on_rank(const struct zs_cfg *c, const struct zs_node *nd);

/* The node's NVMe sequential read and write rates in bytes/s, all drives
 * together: --nvme-read/--nvme-write (GB/s) where given, else the profile's
 * "storage"; 0 when neither knows (docs/nvme.md). */
void zs_nvme_node_rates(const struct zs_cfg *c, const struct zs_node *nd,
                        double *read_bps, double *write_bps);

/* CPU threads of one rank for its optimizer work (docs/cpu-optimizer.md):
 * *threads is what the launch sets (OMP_NUM_THREADS / torch.set_num_threads;
 * for the unbound deepspeed launcher every hardware thread), *effective the
 * bound-thread equivalents they deliver (unbound ranks share the node's
 * cores at the profile's oversubscription slowdown).  *why names the rule. */
void zs_cpu_threads(const struct zs_cfg *c, const struct zs_node *nd,
                    int *threads, double *effective, const char **why);

/* The CPU optimizer step's host-memory traffic per trainable element of this
 * rank (docs/cpu-optimizer.md): *fused_bytes run at the fused-Adam rate,
 * *op_bytes at the eager torch op rate.  Includes, for DeepSpeed, the unscale
 * mul_ and the fp32 -> bf16 copy_; for FSDP2 with clipping, the CPU norm and
 * clip passes. */
void zs_cpu_opt_bytes(const struct zs_cfg *c, double *fused_bytes,
                      double *op_bytes);

/* gpuopt.c — the optimizer on the GPU, per parameter tensor of `elems`
 * elements whose dtype is `pb` bytes: its states' bytes (torch AdamW 2 x pb;
 * bitsandbytes 8-bit: 2 B + block-wise absmax, fp32 states below 4096
 * elements), the HBM bytes one step moves per element, the kernels one
 * step() launches, and whether step() blocks the host
 * (torch.cuda.synchronize, bitsandbytes). */
int64_t zs_gpu_opt_state_bytes(const struct zs_cfg *c, int64_t elems, int pb);
double zs_gpu_opt_elem_bytes(const struct zs_cfg *c, int64_t elems, int pb);
int zs_gpu_opt_kernels(const struct zs_cfg *c);
bool zs_gpu_opt_syncs(const struct zs_cfg *c);
/* Whether a state tensor for `elems` elements is paged (bitsandbytes
 * paged_adamw_8bit, >= 1e5 elements): cudaMallocManaged memory the driver
 * pages between GPU and host, not PyTorch's allocator's. */
bool zs_gpu_opt_paged(const struct zs_cfg *c, int64_t elems);

/* "DeepSpeedCPUAdam", "torch.optim.AdamW(fused=True)", ... */
const char *zs_cpu_opt_label(int impl);

/* The command that launches what was simulated, with the threads and the
 * optimizer it assumes as a trailing comment ("OMP_NUM_THREADS=1 torchrun
 * ... # torch.optim.AdamW() (for-loop on CPU), 1 CPU thread per rank
 * (torchrun ...)"); ds_config: the DeepSpeed JSON path or NULL. */
void zs_launch_line(const struct zs_cfg *c, const struct zs_node *nd,
                    int nodes, const char *ds_config, char *buf, size_t cap);

/* DeepSpeed's estimate_zero3_model_states_mem_needs (peer-tools.md §1.2),
 * for printing beside our own numbers. */
void zs_deepspeed_estimate(const struct zs_setup *su, int64_t *gpu_bytes,
                           int64_t *host_bytes_per_node);

#endif
