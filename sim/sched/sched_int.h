/*
 * sched_int.h — private to sim/sched/: the build context shared by the
 * framework schedules (zero.c, fsdp2.c) and the result reduction (result.c).
 *
 * A build replays one rank's host program (the Python thread of DeepSpeed or
 * FSDP2) in program order, emitting tasks onto the engine's queues: the host
 * thread, the compute (default) stream, the all-gather stream, the
 * reduce-scatter stream and FSDP2's copy-in stream.  A "blocking" host call is
 * a host task that depends on the GPU task it waits for; a kernel launch is a
 * host task that the GPU task depends on.  That is how host stalls (DeepSpeed's
 * blocking H2D copies) starve the compute stream in the simulation, as they do
 * in reality (zero3-offload-mechanics.md §1).
 */
#ifndef ZS_SCHED_INT_H
#define ZS_SCHED_INT_H

#include "sched/hooks.h"
#include "sched/sched.h"

#include <assert.h>
#include <stdbool.h>

/* Task tag layout (the engine's int32 tag): unit index (16 bits, 0xFFFF =
 * none), phase (2), two unused bits, step (11: first + up to 1000 steady
 * steps, the config's limit).  The micro-step a task belongs to is not in
 * the tag: with every micro-step simulated (zs_setup.all_micro_steps) there
 * are as many as the accumulation; it follows from the task's id and the
 * micro-step start marks (result.c micro_of_task), tasks being built in
 * program order.
 * zs_simulate refuses a model or step count that does not fit
 * (ZS_MAX_UNITS, ZS_MAX_SIM_STEPS) before building, so nothing is clamped;
 * the asserts state it. */
#define ZS_NO_UNIT 0xFFFF
#define ZS_MAX_UNITS ZS_NO_UNIT /* units 0 .. 0xFFFE */
#define ZS_MAX_SIM_STEPS 2047
static inline int32_t zs_tag(int unit, int ph, int step)
{
    assert(unit >= 0 && unit <= ZS_NO_UNIT);
    assert(ph >= 0 && ph <= 3);
    assert(step >= 0 && step <= ZS_MAX_SIM_STEPS);
    return (int32_t)((unit & 0xFFFF) | ((ph & 3) << 16) |
                     ((step & 0x7FF) << 20));
}
#define ZS_TAG(unit, ph, step) zs_tag((unit), (ph), (step))
#define ZS_TAG_UNIT(t) ((t)&0xFFFF)
#define ZS_TAG_PHASE(t) (((t) >> 16) & 3)
#define ZS_TAG_STEP(t) (((t) >> 20) & 0x7FF)

/* One piece of a unit's GPU work, kept so `zsim schedule export` can hand
 * the harness the same GEMM shapes and memory-bound bytes the simulation
 * timed.  kind: 0 = GEMM [m x k] x [k x n], `count` of them; 1 = memory-bound
 * kernel moving `bytes` through HBM. */
struct zs_piece {
    int kind;
    int64_t m, n, k, count;
    double bytes;
    double ns;
};

/* A unit: what the framework fetches as one piece.  DeepSpeed: one leaf
 * module in one layer; FSDP2: one fully_shard group (a decoder layer, or the
 * root's modules). */
struct zs_unit {
    const struct zs_leaf *leaf; /* DeepSpeed: the leaf; FSDP2: NULL */
    int layer;                  /* decoder layer, -1 outside */
    int first_leaf, n_leaves;   /* FSDP2: range in the layer/outer arrays */
    int64_t params;             /* elements gathered */
    int64_t gather_bytes;       /* bytes gathered (bf16, or 4-bit for QLoRA) */
    int64_t part_elems;         /* this rank's partition, elements */
    /* QLoRA: elements held as NF4 (the quantised linears' weights) and their
     * bytes with the quantisation constants (zs_leaf_weight_bytes); 0 when
     * nothing is quantised */
    int64_t nf4_elems, nf4_bytes;
    /* --fp8-all-gather: elements all-gathered in fp8 (the Float8Linear
     * weights, fetch_units.c); 0 otherwise */
    int64_t fp8_elems;
    int64_t trainable; /* trainable elements (full: params; LoRA: adapters) */
    int n_tensors;
    bool persistent;         /* DeepSpeed: below the persistence threshold */
    double fwd_ns, bwd_ns;   /* GPU time of this unit's forward / backward */
    int piece_off, npf, npb; /* forward then backward pieces in b->pieces */
    bool has_attn;           /* runs the layer's attention core */
    int kernels_fwd, kernels_bwd;
    bool last_of_layer, first_of_layer;
};

/* Activation offload state (actoff.c), by decoder layer; arrays owned,
 * zs_actoff_release. */
struct zs_actoff {
    int mode;      /* enum zs_act_offload */
    int nl;        /* decoder layers */
    int64_t bytes; /* offloaded per layer: its input, tokens x hidden x 2 */
    int32_t *d2h;  /* the layer's D2H task, -1: none (yet) */
    int32_t *host; /* its host buffer (ALLOC task), -1: none / released */
    int32_t *gpu;  /* its GPU input while actoff.c may release it, -1 */
    int32_t last_fwd; /* the last layer forward compute task */
    /* torchtune: the backward compute tasks of the last two units done
     * (the root tail counts for both at first), see zs_actoff_bwd_end */
    int32_t bwd_done1, bwd_done2;
    /* the micro-step being built: layers offloaded, bytes each way */
    int64_t n_offloaded, d2h_bytes, h2d_bytes;
};

/* queues the prefix cut tracks (more: no cut) */
#define ZS_CUT_QUEUES 16

/* Micro-step replay (replay.c, docs/engine.md "Replaying a micro-step"). */
struct zs_replay;
struct zs_rvisit;
/* An int32 task id field of a builder's context struct (offsetof), or n of
 * them in a row. */
struct zs_rfield {
    size_t off;
    int n;
};
/* A builder's micro-step state visitor (struct zs_micro_ops.state) reports
 * everything its micro-step reads and writes besides b's fields that
 * replay.c visits itself and the constants of the build:
 * - zs_rv_struct: the builder's context struct, whole (every byte is
 *   compared: a field added later is covered without a change here), its
 *   int32 task ids listed in ids[0..nids);
 * - zs_rv_ids: n task ids (an array; -1 for none);
 * - zs_rv_val: nbytes of anything else (an array of flags, counters).
 * Visits must be the same sequence, of the same sizes, whenever the same
 * build calls it; arrays that only the build's setup writes (sizes, the
 * trace) are constants and need no visit. */
void zs_rv_struct(struct zs_rvisit *v, void *p, size_t nbytes,
                  const struct zs_rfield *ids, int nids);
void zs_rv_ids(struct zs_rvisit *v, int32_t *p, size_t n);
void zs_rv_val(struct zs_rvisit *v, void *p, size_t nbytes);

struct zs_bctx {
    zs_sim *sim;
    const struct zs_setup *su;
    const struct zs_model *m;
    const struct zs_cfg *c;
    const struct zs_node *node;
    struct zs_method_opts mo;
    int failed; /* first emit error */

    /* topology */
    int q_host, q_comp, q_ag, q_rs, q_cpy;
    int q_off; /* activation offload side stream, -1 unless offloading */
    int l_h2d, l_d2h, l_bus, l_fab;
    /* NVMe offload (docs/nvme.md): the read and write aio handles' queues and
     * the rank's share of the node's drives; -1 when the run has no NVMe.
     * nvme_read/write_bps: per rank, bytes/s. */
    int q_aio_r, q_aio_w, l_nvme;
    /* Compute/collective interference (docs/engine.md): the compute stream's
     * kernels run as flows of `ns of work` over this link (capacity 1e9 per
     * s, so a kernel alone takes its own ns), coupled to the collective
     * fabric at the GPU's overlap_compute_factor.  -1 when not modelled
     * (factor 1, or a single rank: no collectives). */
    int l_sm;
    double nvme_read_bps, nvme_write_bps;
    int p_gpu, p_host;
    double h2d_pinned, d2h_pinned, pageable; /* per-flow caps, bytes/s */
    int cores;                               /* CPU cores of this rank */
    double cpu_threads_eff; /* bound-thread equivalents of this rank's CPU
                               work (zs_cpu_threads) */

    /* compute pieces of all units; export sidecar (NULL unless exporting) */
    struct zs_piece *pieces;
    size_t npieces, cap_pieces;
    struct zs_export *ex;
    double op_recompute_ns; /* per layer, checkpointing "op" (fetch_units.c) */

    /* units in forward order */
    struct zs_unit *units;
    int nunits, cap_units;
    int64_t tokens; /* tokens per micro-step on this rank */
    int64_t P, T;   /* partition elements (all params), trainable partition */
    int64_t persistent_params;
    /* bitsandbytes paged optimizer states, bytes: cudaMallocManaged, outside
     * PyTorch's caching allocator (gpuopt.c zs_gpu_opt_paged) */
    int64_t paged_bytes;
    /* Twin-Flow (zero.c twin_init): the optimizer's sub-groups, those
     * stepped on the GPU and their elements */
    int64_t opt_groups, opt_groups_gpu, opt_gpu_elems;

    /* current position, for tags */
    int step, micro, phase;
    int32_t last_host; /* last task on the host queue */

    /* step/micro windows (MARK task ids), nsteps of each (zs_simulate
     * allocates them; owned, zs_free).  Step st's simulated micro-step mi
     * starts at micro_start[zs_micro_at(b, st, mi)] and
     * is the step's micro-step number zs_micro_number(b, st, mi). */
    int32_t *step_start, *step_end;
    int32_t *micro_start, *micro_end;
    int micro_cap; /* micro-steps simulated per step at most */
    int *nmicro_sim;
    /* per step, the shortcut's steady micro-steps (sched.h; zs_simulate
     * owns it), and the same array to double where a run does not prove
     * the shortcut (simulate.c) */
    const int *steady;
    int *steady_next;
    int nsteps; /* simulated steps: 1 first + cfg->steps steady */

    /* optimizer-state allocations, live to the end of the run (torch keeps
     * optimizer state): grown by zs_keep_alloc; owned, zs_free */
    int32_t *adam_alloc;
    size_t n_adam_alloc, cap_adam_alloc;

    /* scratch deps */
    int32_t *scratch;
    size_t scratch_cap;

    /* DeepSpeed coordinator state, by unit */
    /* task after which the unit's gathered params are usable; -1 while
     * they are not available (read only while they are: replay.c compares
     * it) */
    int32_t *ready;
    int32_t *galloc;  /* ALLOC task of the unit's gathered params (-1 none) */
    int32_t *galloc2; /* a second buffer to free with it (flat buffer view) */
    bool *avail;
    int64_t n_avail;
    int32_t fetch_ring[2]; /* last two fetch events on the compute stream */
    int nfetch;

    struct zs_actoff ao; /* activation offload (actoff.c) */

    /* micro-step replay (replay.c); NULL: every micro-step is built.
     * recording: the micro-step being built is recorded (zs_replay_note) */
    struct zs_replay *rp;
    struct zs_build_cache *cache; /* NULL, or where b's arrays go back */
    bool recording;
    bool replaying; /* the micro-step's tasks come from a replay */

    /* The planner's verdict-only prefix (emit.c zs_t_emit, docs/engine.md
     * "The prefix cut"): when cut_at tasks are submitted, they are run alone;
     * if that run stops at a GPU OOM, the rest of the schedule is counted,
     * not submitted, each counted task checked to wait for a task that had
     * not finished at the OOM (so the whole schedule stops at the same OOM).
     * cut: 0 not yet or not used, ZS_CUT_COUNTING, ZS_CUT_FAILED (a counted
     * task could have started: the candidate is simulated again whole). */
    int32_t cut_at;
    int cut;
    int32_t ncounted;              /* tasks counted after the prefix */
    int cut_cores;                 /* the most cores a counted task needs */
    const struct zs_task_rec *cut_rec; /* the prefix run's records */
    uint8_t *cut_wait;             /* per counted task: waits past the OOM */
    size_t cut_wait_cap;
    int32_t qlast[ZS_CUT_QUEUES];  /* last task of each queue, -1 */
    /* the GPU pool's ALLOC and FREE tasks, in id order, for the need's lower
     * bound (zs_cut_peak_bound) */
    struct zs_cut_mem *cut_mem;
    size_t ncut_mem, cut_mem_cap;
    int32_t *cut_idx; /* by task id: its record in cut_mem, -1 none */
    size_t cut_idx_cap;
};

/* An ALLOC (alloc < 0) or FREE (alloc: its ALLOC's task id) on the GPU
 * pool; q its queue; fq: an ALLOC's FREE's queue (-1 never freed), a FREE's
 * ALLOC's queue. */
struct zs_cut_mem {
    int64_t bytes;
    int32_t id, alloc;
    int16_t q, fq;
};

#define ZS_CUT_COUNTING 1
#define ZS_CUT_FAILED 2

/* emit.c */
/* zs_sim_pool_peak_bound of the GPU pool over every task built, submitted
 * or counted (b->cut_mem). */
int64_t zs_cut_peak_bound(const struct zs_bctx *b);
int32_t zs_t_emit(struct zs_bctx *b, struct zs_task_desc *d, int32_t d0,
                  int32_t d1, int32_t d2);
int32_t zs_t_delay(struct zs_bctx *b, int q, int64_t ns, int cls,
                   const char *name, int unit, int32_t d0, int32_t d1);
int32_t zs_t_mark(struct zs_bctx *b, int q, const char *name, int32_t d0,
                  int32_t d1, int32_t d2);
/* A mark on the host queue after b->last_host whose run records the
 * engine's state (engine.h zs_sim_snapshot), allocations by tasks from
 * `from` on named relative to it (-1: from the mark itself). */
int32_t zs_t_snapshot(struct zs_bctx *b, int32_t from, const char *name);
int32_t zs_t_alloc(struct zs_bctx *b, int q, int pool, int64_t bytes,
                   unsigned flags, const char *name, int unit, int32_t d0);
int32_t zs_t_free(struct zs_bctx *b, int q, int32_t alloc, int32_t d0);
/* The same, then torch.cuda.empty_cache() (engine.h ZS_FREE_EMPTY_CACHE;
 * alloc in the GPU pool). */
int32_t zs_t_free_empty_cache(struct zs_bctx *b, int q, int32_t alloc,
                              int32_t d0);
/* Records an optimizer-state allocation (task id from zs_t_alloc) in
 * b->adam_alloc, growing it; returns the id.  Out of memory sets b->failed
 * like any emit. */
int32_t zs_keep_alloc(struct zs_bctx *b, int32_t alloc);
/* A copy over PCIe: dir 0 = H2D, 1 = D2H; pinned or pageable source.  Host
 * memory traffic is charged to the bus link (pageable copies stage through a
 * pinned bounce buffer: read + write + DMA = 3 x bytes; [assumption] from
 * CUDA's staged pageable memcpy, see docs). */
int32_t zs_t_pcie(struct zs_bctx *b, int q, int dir, double bytes, bool pinned,
                  const char *name, int unit, int32_t d0, int32_t d1);
/* A collective: bytes = the full gathered / reduced tensor. */
int32_t zs_t_coll(struct zs_bctx *b, int q, enum zs_coll kind, double bytes,
                  const char *name, int unit, int32_t d0, int32_t d1);
/* The same among `ranks` ranks of one node (sequence-parallel groups). */
int32_t zs_t_coll_group(struct zs_bctx *b, int q, enum zs_coll kind,
                        double bytes, int ranks, const char *name, int unit,
                        int32_t d0, int32_t d1);
/* CPU work moving `bytes` through host memory on this rank's threads:
 * capped at threads x bytes_per_s_per_thread and by the rank's share of host
 * memory bandwidth (the bus link), cpuopt.c. */
int32_t zs_t_cpu(struct zs_bctx *b, double bytes,
                 double bytes_per_s_per_thread, int cls, const char *name,
                 int32_t d0);
/* An on-GPU memory-bound kernel (copies, casts, adds). */
int32_t zs_t_gpu_mem(struct zs_bctx *b, int q, double bytes, int cls,
                     const char *name, int unit, int32_t d0, int32_t d1);
/* An aio transfer between the rank's NVMe share and pinned host memory:
 * write = false reads (swap-in) on the read handle's queue, true writes
 * (swap-out) on the write handle's; both draw drive time from the NVMe link
 * and DMA through the host bus.  Needs b->l_nvme >= 0. */
int32_t zs_t_nvme(struct zs_bctx *b, bool write, double bytes,
                  const char *name, int32_t d0, int32_t d1);
int zs_tag_now(const struct zs_bctx *b, int unit);
/* Host waits until every GPU queue has drained. */
int32_t zs_t_drain(struct zs_bctx *b, const char *name);
/* hooks.c — host time of the framework's hooks for unit `unit` in one pass
 * (forward and recompute: backward false), and of an FSDP2 unshard. */
int64_t zs_hook_ns(const struct zs_bctx *b, int unit, bool backward);
int64_t zs_fsdp2_unshard_host_ns(bool offload);
/* DeepSpeed (hooks.h): what unit `unit` stands for in ZeRO-3's counted
 * calls, and the host time of `calls` calls of ZeRO-1/2/3's hooks (the GPU
 * profile's hook_call_ns each). */
void zs_ds3_unit_calls_of(const struct zs_bctx *b, int unit,
                          struct zs_ds3_unit_calls *out);
int64_t zs_ds_calls_ns(const struct zs_bctx *b, int64_t calls);

/* fetch_units.c */
int zs_units_build_leaves(struct zs_bctx *b);
int zs_units_build_groups(struct zs_bctx *b);
const char *zs_unit_name(const struct zs_bctx *b, int unit, char *buf,
                         size_t cap);

/* Emits unit u's forward (bwd = false) or backward compute on the compute
 * stream after d0, d1: one task, or one per piece when exporting.  Returns
 * the last task. */
int32_t zs_t_compute(struct zs_bctx *b, int u, bool bwd, const char *name,
                     int32_t d0, int32_t d1);

/* The activation options of this configuration (model.h). */
void zs_act_opts_of(const struct zs_bctx *b, struct zs_act_opts *ao);
/* The same for decoder layer `layer` (>= 0): under checkpointing "layer:N"
 * its own mode, full or none (zs_ckpt_of_layer). */
void zs_act_opts_at(const struct zs_bctx *b, int layer, struct zs_act_opts *ao);
/* The loss's forward after lm_head's task c: per piece (lb->pieces, one or
 * the loss chunks) the fp32 upcast, then the saved log-softmax, then the
 * upcast freed; the saved pieces' allocations go to lp[0 .. pieces-1].
 * Returns the last task.  zs_t_loss_release frees them after d0. */
int32_t zs_t_loss_forward(struct zs_bctx *b, int unit,
                          const struct zs_loss_bytes *lb, int32_t c,
                          int32_t lp[ZS_LOSS_PIECES_MAX]);
void zs_t_loss_release(struct zs_bctx *b, const struct zs_loss_bytes *lb,
                       int32_t lp[ZS_LOSS_PIECES_MAX], int32_t d0);
/* Whether decoder layer `layer` is recomputed in full before its backward. */
bool zs_full_ckpt_at(const struct zs_bctx *b, int layer);

/* Full checkpointing's recompute of one decoder layer, as both builders run
 * it (emit.c: why the two workspaces are never alive together).
 * zs_t_recompute_begin, after host task `before`: allocates the recomputed
 * layer's saved set (r->layer, held to the end of the layer's backward)
 * and the recompute forward's workspace (r->fwd_ws).
 * zs_t_recompute_end, after the recompute forward's last compute `c`: frees
 * the forward workspace and allocates the backward's; returns that
 * allocation (freed by the builder at the backward's end), or -1 when it is
 * empty. */
struct zs_recompute {
    int32_t layer, fwd_ws;
    int64_t bwd_ws_bytes;
};
void zs_t_recompute_begin(struct zs_bctx *b, int unit,
                          const struct zs_act_opts *ao, int32_t before,
                          struct zs_recompute *r);
int32_t zs_t_recompute_end(struct zs_bctx *b, int unit,
                           const struct zs_recompute *r, int32_t c);

/* A framework's micro-step and optimizer step, for zs_run_steps.  A
 * micro-step is built in nseg segments (DeepSpeed: its forward, its
 * backward), each replayed or built on its own (replay.c):
 * - begin(ctx, seg, boundary): before segment seg, sets what it reads of
 *   the micro-step's position (the boundary, whether it is its step's
 *   first micro-step, the first step's) in the context, before state()
 *   visits it; emits nothing;
 * - build(ctx, seg): builds segment seg, reading only its context, b's
 *   fields that replay.c visits and the build's constants (b->micro and
 *   b->step only through begin: b->step is also in every task's tag);
 * - pos_reads[seg]: which of ZS_POS_* begin sets for segment seg (only
 *   segments alike in those can start in the same state: replay.c records
 *   a segment only when a later one is alike);
 * - state(ctx, v): visits the context's micro-step state (zs_rv_*);
 * - opt(ctx, first): the optimizer step. */
#define ZS_MAX_SEG 2
#define ZS_POS_FIRST 1u      /* the step's first micro-step */
#define ZS_POS_LAST 2u       /* the accumulation boundary */
#define ZS_POS_FIRST_STEP 4u /* the first step's first micro-step */
struct zs_micro_ops {
    int nseg;
    unsigned pos_reads[ZS_MAX_SEG];
    void (*begin)(void *ctx, int seg, bool boundary);
    void (*build)(void *ctx, int seg);
    void (*state)(void *ctx, struct zs_rvisit *v);
    void (*opt)(void *ctx, bool first);
};

/* The step loop both frameworks share: for each simulated step a "step
 * start" mark, the simulated micro-steps (zs_micro_sim: every one, or the
 * shortcut's first, steady and boundary; sched.h) between "micro-step
 * start/end" marks, the optimizer step, a drain of every GPU queue and the
 * "step end" mark.  Each segment of a micro-step is built (ops->build), or
 * replayed from one built before in the same state (replay.c). */
void zs_run_steps(struct zs_bctx *b, void *ctx,
                  const struct zs_micro_ops *ops);

/* replay.c — micro-step replay (docs/engine.md "Replaying a micro-step").
 * zs_replay_new: NULL when out of memory (the build then replays nothing).
 * zs_replay_reset forgets every recording (a new build).
 * zs_replay_micro: after ops->begin, gives segment seg of the micro-step
 * about to be built the tasks of a recording of that segment whose state
 * before matches (replayed), and returns true; else false, and the caller
 * builds it, between zs_replay_record_begin and zs_replay_record_end when a
 * later segment may be built in the same state.  zs_replay_note: emit.c's
 * report of each task emitted while b->recording (submitted or counted), in
 * id order, deps[0..n) its dependencies.  zs_replay_built counts a segment
 * built; zs_replay_stats gives the counts (zs_build_cache_stats). */
struct zs_replay *zs_replay_new(void);
void zs_replay_free(struct zs_replay *rp);
void zs_replay_reset(struct zs_replay *rp);
bool zs_replay_micro(struct zs_bctx *b, void *ctx,
                     const struct zs_micro_ops *ops, int seg);
void zs_replay_record_begin(struct zs_bctx *b, void *ctx,
                            const struct zs_micro_ops *ops, int seg);
void zs_replay_record_end(struct zs_bctx *b, void *ctx,
                          const struct zs_micro_ops *ops);
void zs_replay_note(struct zs_bctx *b, const struct zs_task_desc *d,
                    const int32_t *deps, int n);
void zs_replay_built(struct zs_replay *rp);
void zs_replay_stats(const struct zs_replay *rp, int64_t *built,
                     int64_t *replayed);

/* A task as counting after the prefix cut reads it (emit.c cut_count,
 * zs_cut_mem_add): its kind (MARK, ALLOC, FREE or any other), queue,
 * cores, an ALLOC's pool and bytes, a FREE's ALLOC (else -1), its
 * dependencies (-1 past ndeps).  replay.c keeps micro-steps' tasks so. */
struct zs_ctask {
    int64_t bytes;
    int32_t deps[3];
    int32_t alloc;
    int16_t queue, cores, pool;
    int8_t kind, ndeps;
};

/* emit.c, for replay.c: the prefix cut's run (when cut_at tasks are
 * submitted), its count of task d (deps[0..n)) after the prefix, its record
 * of a submitted GPU ALLOC or FREE (false when out of memory), as zs_t_emit
 * does them; zs_cut_emit_n counts n tasks in turn as zs_cut_emit would,
 * task k being ct[k] with its dependencies dep[3k .. 3k + ct[k].ndeps) and
 * its FREE's ALLOC alloc[k] (ids of this build). */
void zs_cut_run(struct zs_bctx *b);
int32_t zs_cut_emit(struct zs_bctx *b, const struct zs_task_desc *d,
                    const int32_t *deps, int n);
void zs_cut_emit_n(struct zs_bctx *b, const struct zs_ctask *ct,
                   const int32_t *dep, const int32_t *alloc, size_t n);
bool zs_cut_mem_add(struct zs_bctx *b, const struct zs_task_desc *d,
                    int32_t id);

/* actoff.c — activation offload hooks, called by both builders at the same
 * points of a decoder layer j (unit: for tags):
 * - fwd_begin when layer j's input is registered, after the builder made its
 *   "saved activations" allocation `saved` and launched (host task `before`)
 *   and before its forward compute: returns a host task the compute must
 *   depend on (a blocking copy), or -1; waits of the compute stream are
 *   emitted on it here.
 * - fwd_end after layer j's (last) forward compute `c`.
 * - bwd_begin before layer j's recompute (host at `before`): brings the
 *   input back; *saved becomes the GPU buffer the builder frees at the
 *   layer's backward end.  Returns a host task the recompute depends on,
 *   or -1.
 * zs_actoff_init (per build) and zs_actoff_micro_begin (per micro-step)
 * reset the state; zs_actoff_result copies the last micro-step's counts. */
int zs_actoff_init(struct zs_bctx *b);
void zs_actoff_release(struct zs_bctx *b);
void zs_actoff_micro_begin(struct zs_bctx *b);
int32_t zs_actoff_fwd_begin(struct zs_bctx *b, int j, int unit, int32_t saved,
                            int32_t before);
void zs_actoff_fwd_end(struct zs_bctx *b, int j, int unit, int32_t c);
int32_t zs_actoff_bwd_begin(struct zs_bctx *b, int j, int unit,
                            int32_t *saved, int32_t before);
/* torchtune: the root's forward tail (final norm) starting at `before`,
 * before its logits; the backward of layer j (or of the root tail, j =
 * n_layers) ended at `c`.  No-ops for the other modes. */
void zs_actoff_tail_fwd(struct zs_bctx *b, int unit, int32_t before);
void zs_actoff_bwd_end(struct zs_bctx *b, int j, int32_t c);
void zs_actoff_result(const struct zs_bctx *b, struct zs_sim_result *res);

/* zero.c, fsdp2.c */
int zs_build_deepspeed(struct zs_bctx *b);
int zs_build_fsdp2(struct zs_bctx *b);

/* How many micro-steps of step st are simulated (sched.h): all of them
 * with su->all_micro_steps or when the shortcut would simulate as many,
 * else the first, b->steady[st] steady ones and the boundary. */
int zs_micro_sim(const struct zs_bctx *b, int st);
/* The index of step st's simulated micro-step mi in b->micro_start and
 * b->micro_end. */
static inline size_t zs_micro_at(const struct zs_bctx *b, int st, int mi)
{
    assert(st >= 0 && st < b->nsteps && mi >= 0 && mi < b->micro_cap);
    return (size_t)st * (size_t)b->micro_cap + (size_t)mi;
}
/* Which micro-step of its step (1-based) step st's simulated micro-step mi
 * is: all simulated, mi + 1; under the shortcut the last one simulated is
 * the boundary, micro-step accum. */
static inline int64_t zs_micro_number(const struct zs_bctx *b, int st, int mi)
{
    int nm = b->nmicro_sim[st];
    return nm < b->c->accum && mi == nm - 1 ? b->c->accum : mi + 1;
}

/* result.c */
/* Whether the last run proves step st's shortcut exact (docs/engine.md
 * "Accumulation"): every micro-step was simulated, or the run stopped
 * before the boundary started (what ran is the full simulation's own
 * beginning), or at the starts of the last steady micro-step and of the
 * boundary nothing was in flight and the engine's fingerprints agree
 * (zs_sim_snapshot). */
bool zs_shortcut_proved(const struct zs_bctx *b, int st);
/* 0 or ZS_ENOMEM */
int zs_reduce_results(struct zs_bctx *b, int run_rc, struct zs_sim_result *res);

/* Runtime host memory of one training process outside its tensors (Python,
 * torch/CUDA libraries, the CUDA context's host side).  [assumption] 4 GiB:
 * no source measured it; the harness's host RSS will replace it. */
#define ZS_HOST_RUNTIME_BYTES (4LL << 30)

/* CPU cost of a freshly allocated host tensor's first touch (page faults and
 * zero-fill), in bytes of streaming at torch's per-thread op rate per byte
 * touched: validation/host/host_rates.json (1 thread, 268M fp32 elements):
 * the AdamW for-loop, 7.493 ns/element at 17.8 GB/s = 133.4 B-equivalent,
 * less its 80 B of passes, leaves 53.4 B for its two fresh 4 B temporaries
 * (cpuopt.c). */
#define ZS_FRESH_BYTE_EQ 6.7
/* A 16 <-> 32-bit conversion copy on the CPU per element, in bytes of
 * streaming at torch's per-thread op rate: validation/host/host_rates.json,
 * bf16.copy_(fp32) 0.704 ns/element against g.mul_(s) 0.450 ns per 8 B
 * (17.8 GB/s) at 1 thread = 12.5 B; fp16 -> fp32 the same [assumption]. */
#define ZS_CAST_BYTES_EQ 12.5

#endif
