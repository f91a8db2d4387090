/*
 * simulate.c — zs_simulate: one rank's topology, the framework's schedule,
 * the engine run, and the results (sched.h).
 *
 * Topology of one rank (all capacities in bytes/s):
 *   h2d, d2h   this GPU's PCIe lanes per direction: min(the GPU's pinned rate,
 *              its share of the PCIe switch uplink), hw profile §C4/§C5.
 *              One direction alone runs at that rate.  While the opposite
 *              direction carries a copy, each offers its bidir factor of it
 *              (engine link coupling): nvbandwidth #53 (8x A100-SXM4-80GB,
 *              PCIe 4.0, nvbandwidth v0.8) measures H2D ~25 GB/s alone and
 *              ~11 GB/s while a D2H copy runs (x0.44), D2H ~25 GB/s either
 *              way (x1.0); nvbandwidth #11 (A100) the same shape, H2D
 *              12-13 GB/s under D2H, D2H 24 of 25-26 GB/s; on an H100 SXM
 *              (Gen5) our measurement gives x0.80 and x0.95
 *              (validation/pcie-bidir); the factors are the GPU profile's;
 *   bus        the rank's share of host memory bandwidth (node / local ranks):
 *              CPU Adam and every host-side copy draw from it;
 *   fabric     the collective fabric at its largest-message bus bandwidth;
 *              each collective flow is also capped at its own size's busbw.
 * Pools: the GPU's caching allocator with what is left after the CUDA
 * context, NCCL buffers and another tenant's memory; the host pool is
 * unlimited and compared with the node's RAM afterwards, so that the report
 * says how much a run *needs*, not only that it failed.
 */
#include "sched/sched_int.h"
#include "util/alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Memory another process holds on the GPU of the representative rank.  A
 * colocated server on the last `gpu_reserved_gpus` GPUs of a node shares a GPU
 * with training only when the processes spill onto those GPUs (ranks take
 * GPUs 0..procs-1); then the worst rank — the one sharing — is simulated
 * (the DESIGN §1 TRL case: 8 processes OOM where 4 fit). */
int64_t zs_reserved_on_rank(const struct zs_cfg *c, const struct zs_node *nd)
{
    if (!c->gpu_reserved_bytes)
        return 0;
    if (c->gpu_reserved_gpus == 0 ||
        c->procs_per_node > nd->gpus_per_node - c->gpu_reserved_gpus)
        return c->gpu_reserved_bytes;
    return 0;
}

void zs_nvme_node_rates(const struct zs_cfg *c, const struct zs_node *nd,
                        double *read_bps, double *write_bps)
{
    *read_bps = c->nvme_read_gbps > 0 ? c->nvme_read_gbps * 1e9
                                      : nd->nvme_read_bytes_per_s;
    *write_bps = c->nvme_write_gbps > 0 ? c->nvme_write_gbps * 1e9
                                        : nd->nvme_write_bytes_per_s;
}

/* NVMe offload: two aio queues (PipelinedOptimizerSwapper keeps a read and a
 * write aio_handle, deepspeed/runtime/swap_tensor/
 * pipelined_optimizer_swapper.py:55-66, 0.19.6 edaa7221) and one link, the
 * rank's share of the node's drives (node rate / local ranks: every rank
 * swaps at the same time, in the optimizer step after the same backward).
 * Added after the five queues and four links, only for a run that uses
 * NVMe, so that other runs' traces keep their layout; a planner sim keeps
 * them once added (unused by later candidates). */
/* The queue called NAME, added when the sim does not have it yet (a sim
 * reused across planner candidates keeps the optional queues it was given).
 * Negative on allocation failure. */
static int queue_named(zs_sim *sim, const char *name)
{
    for (int q = 0; q < zs_sim_nqueues(sim); q++)
        if (!strcmp(zs_sim_queue_name(sim, q), name))
            return q;
    return zs_sim_add_queue(sim, name);
}

static int nvme_topology(struct zs_bctx *b)
{
    const struct zs_cfg *c = b->c;
    double r, w;
    b->q_aio_r = b->q_aio_w = b->l_nvme = -1;
    if (c->offload_optimizer != ZS_OFF_NVME && c->offload_param != ZS_OFF_NVME)
        return 0;
    zs_nvme_node_rates(c, b->node, &r, &w);
    if (r <= 0 || w <= 0)
        return ZS_EUSAGE; /* zs_simulate checks first, with a message */
    b->nvme_read_bps = r / (double)c->procs_per_node;
    b->nvme_write_bps = w / (double)c->procs_per_node;
    /* a sim reused by the planner may hold them from an earlier candidate,
     * next to other optional queues (activation offload): found by name */
    b->q_aio_r = queue_named(b->sim, "aio read (NVMe swap-in)");
    b->q_aio_w = queue_named(b->sim, "aio write (NVMe swap-out)");
    b->l_nvme = -1;
    for (int l = 0; l < zs_sim_nlinks(b->sim); l++)
        if (!strcmp(zs_sim_link_name(b->sim, l), "NVMe (rank share)"))
            b->l_nvme = l;
    if (b->l_nvme >= 0)
        zs_sim_set_link_capacity(b->sim, b->l_nvme, b->nvme_read_bps);
    else
        b->l_nvme =
            zs_sim_add_link(b->sim, "NVMe (rank share)", b->nvme_read_bps);
    if (b->q_aio_r < 0 || b->q_aio_w < 0 || b->l_nvme < 0)
        return ZS_ENOMEM;
    return 0;
}

/* Compute/collective interference (docs/engine.md).  While an NCCL
 * collective runs, the kernels on the compute stream progress at the GPU
 * profile's overlap_compute_factor of their alone rate: NCCL's kernels hold
 * SMs (a CTA per channel) and HBM bandwidth.  The compute stream's kernels
 * are flows of their ns of work over the link "GPU SMs (compute)" (capacity
 * 1e9 ns of work per s: alone a kernel takes exactly its ns), coupled to the
 * collective fabric, which carries every collective and nothing else.  Only
 * the compute side is slowed: the collective's own slowdown under compute
 * is not in the sources we found.  Added after the other links, only when
 * modelled (factor < 1 and more than one rank), so that other runs' traces
 * keep their layout; a reused planner sim finds it by name. */
static int sm_topology(struct zs_bctx *b)
{
    double f = b->node->gpu.overlap_compute_factor;
    b->l_sm = -1;
    for (int l = 0; l < zs_sim_nlinks(b->sim); l++)
        if (!strcmp(zs_sim_link_name(b->sim, l), "GPU SMs (compute)"))
            b->l_sm = l;
    if (b->c->world <= 1 || !(f > 0 && f < 1)) {
        if (b->l_sm >= 0 && zs_sim_set_link_coupling(b->sim, b->l_sm, -1, 1))
            return ZS_ERUNTIME;
        b->l_sm = -1;
        return 0;
    }
    if (b->l_sm < 0)
        b->l_sm = zs_sim_add_link(b->sim, "GPU SMs (compute)", 1e9);
    if (b->l_sm < 0)
        return ZS_ENOMEM;
    if (zs_sim_set_link_coupling(b->sim, b->l_sm, b->l_fab, f))
        return ZS_ERUNTIME;
    return 0;
}

/* One rank's link capacities (bytes/s) and GPU pool, from the node. */
struct rank_rates {
    double h2d, d2h, bus, fab;
    int64_t gpu_cap;
};

/* The rates of the rank's links and pools (the file's opening comment), and
 * the per-rank figures b keeps: pinned and pageable PCIe, cores, CPU Adam
 * threads. */
static void rank_rates(struct zs_bctx *b, struct rank_rates *r)
{
    const struct zs_node *nd = b->node;
    const struct zs_cfg *c = b->c;
    int share = nd->gpus_per_pcie_switch < (int)c->procs_per_node
                    ? nd->gpus_per_pcie_switch
                    : (int)c->procs_per_node;
    double up = share > 0 && nd->pcie_switch_uplink_bytes_per_s > 0
                    ? nd->pcie_switch_uplink_bytes_per_s / share
                    : 0;
    double fab2 = zs_cluster_busbw(b->su->cluster, ZS_COLL_REDUCESCATTER,
                                   16.0 * (1 << 30), (int)c->world,
                                   b->su->cluster->nodes);
    int thr;
    const char *why;
    r->h2d = nd->gpu.pcie_h2d_bytes_per_s;
    r->d2h = nd->gpu.pcie_d2h_bytes_per_s;
    r->bus = nd->host_mem_bytes_per_s / (double)c->procs_per_node;
    r->fab = zs_cluster_busbw(b->su->cluster, ZS_COLL_ALLGATHER,
                              16.0 * (1 << 30), (int)c->world,
                              b->su->cluster->nodes);
    if (up > 0 && up < r->h2d)
        r->h2d = up;
    if (up > 0 && up < r->d2h)
        r->d2h = up;
    if (fab2 > r->fab)
        r->fab = fab2;
    if (r->fab <= 0)
        r->fab = 1e12;
    b->h2d_pinned = r->h2d;
    b->d2h_pinned = r->d2h;
    b->pageable = nd->gpu.pcie_pageable_bytes_per_s < r->h2d
                      ? nd->gpu.pcie_pageable_bytes_per_s
                      : r->h2d;
    b->cores = nd->cpu_cores / (int)c->procs_per_node;
    if (b->cores < 1)
        b->cores = 1;
    zs_cpu_threads(c, nd, &thr, &b->cpu_threads_eff, &why);
    r->gpu_cap = zs_gpu_usable_bytes(&nd->gpu) - zs_reserved_on_rank(c, nd);
    if (r->gpu_cap < 1)
        r->gpu_cap = 1;
}

/* The five queues, four links and two pools every run has, in this order.
 * A new sim gets them added; a sim reused across planner candidates has
 * them at these indices, and is reset with new capacities. */
static int base_topology(struct zs_bctx *b, const struct rank_rates *r)
{
    static const char *const qname[] = {
        "host thread", "compute stream", "all-gather stream",
        "reduce-scatter stream", "copy-in stream"};
    static const char *const lname[] = {"PCIe H2D", "PCIe D2H",
                                        "host memory bus (rank share)",
                                        "collective fabric"};
    int *q[] = {&b->q_host, &b->q_comp, &b->q_ag, &b->q_rs, &b->q_cpy};
    int *l[] = {&b->l_h2d, &b->l_d2h, &b->l_bus, &b->l_fab};
    const double cap[] = {r->h2d, r->d2h, r->bus, r->fab};
    bool fresh = zs_sim_nqueues(b->sim) == 0;
    bool bad = false;
    if (!fresh)
        zs_sim_reset(b->sim);
    for (int i = 0; i < 5; i++) {
        *q[i] = fresh ? zs_sim_add_queue(b->sim, qname[i]) : i;
        bad |= *q[i] < 0;
    }
    for (int i = 0; i < 4; i++) {
        *l[i] = fresh ? zs_sim_add_link(b->sim, lname[i], cap[i]) : i;
        if (!fresh)
            zs_sim_set_link_capacity(b->sim, i, cap[i]);
        bad |= *l[i] < 0;
    }
    if (fresh) {
        b->p_gpu =
            zs_sim_add_pool(b->sim, "GPU", ZS_POOL_CUDA_CACHING, r->gpu_cap);
        b->p_host = zs_sim_add_pool(b->sim, "host (rank)", ZS_POOL_HOST, 0);
    } else {
        b->p_gpu = 0;
        b->p_host = 1;
        zs_sim_set_pool_capacity(b->sim, b->p_gpu, r->gpu_cap);
        zs_sim_set_pool_capacity(b->sim, b->p_host, 0);
    }
    return bad || b->p_gpu < 0 || b->p_host < 0 ? ZS_ENOMEM : 0;
}

/* The CUDA stream each queue allocates on, for the caching allocator's
 * per-stream blocks (engine/pool.c).  The host thread allocates on the
 * current stream, the default one, like the compute stream.  The side
 * streams each allocate what the framework allocates under its stream
 * context:
 * - FSDP2 foreach_all_gather allocates the all-gather input and output
 *   under all_gather_copy_in_stream, foreach_reduce the reduce-scatter
 *   input and output (the sharded grads are views of it) under
 *   reduce_scatter_stream (torch/distributed/_composable/fsdp/
 *   _fsdp_collectives.py, pytorch/pytorch v2.5);
 * - DeepSpeed ZeRO-3 gathers parameters under its __allgather_stream
 *   (runtime/zero/partitioned_param_coordinator.py __all_gather_params_)
 *   and reduces under reduce_and_partition_stream when overlap_comm
 *   (runtime/zero/stage3.py);
 * - FSDP1 (fsdp2.c unshard_v1) allocates the unsharded flat parameter
 *   under its unshard stream (q_ag), the H2D shard under the pre-unshard
 *   stream (q_cpy) and the padded flat gradient under the post-backward
 *   stream (q_rs) (torch/distributed/fsdp/_runtime_utils.py, v2.2);
 * - torchtune's offload restores under its s1 (actoff.c).
 * A queue of a run that does not use it keeps its stream. */
static int alloc_streams(struct zs_bctx *b)
{
    const int q[] = {b->q_host, b->q_comp, b->q_ag, b->q_rs, b->q_cpy};
    const int st[] = {0, 0, 1, 2, 3};
    for (int i = 0; i < 5; i++)
        if (q[i] >= 0 && zs_sim_set_queue_stream(b->sim, q[i], st[i]))
            return ZS_ERUNTIME;
    return 0;
}

static int topology(struct zs_bctx *b)
{
    const struct zs_node *nd = b->node;
    const struct zs_cfg *c = b->c;
    struct rank_rates r;
    int rc;
    rank_rates(b, &r);
    rc = base_topology(b, &r);
    if (rc)
        return rc;
    /* PYTORCH_CUDA_ALLOC_CONF (--alloc-conf; engine/pool.c), set on a
     * reused sim too: the planner's notes run expandable_segments variants
     * on the engines of its default-allocator search */
    zs_sim_set_pool_expandable(b->sim, b->p_gpu,
                               c->alloc_conf == ZS_ALLOC_EXPANDABLE);
    zs_sim_set_pool_max_split(b->sim, b->p_gpu,
                              c->max_split_size_mb * ((int64_t)1 << 20));
    /* the profile loader requires both factors in [0.01, 1] */
    if (zs_sim_set_link_coupling(b->sim, b->l_h2d, b->l_d2h,
                                 nd->gpu.pcie_bidir_factor) ||
        zs_sim_set_link_coupling(b->sim, b->l_d2h, b->l_h2d,
                                 nd->gpu.pcie_bidir_d2h_factor))
        return ZS_ERUNTIME;
    zs_sim_set_cores(b->sim, b->cores);
    if (c->framework != ZS_FW_FSDP2)
        b->q_cpy = -1;
    rc = alloc_streams(b);
    if (rc)
        return rc;
    /* activation offload's side stream (actoff.c): made only when used, so
     * traces of other runs keep their queues; a reused sim finds it by name */
    b->q_off = -1;
    if (c->act_offload != ZS_AO_NONE) {
        b->q_off = queue_named(b->sim, "activation offload stream");
        if (b->q_off < 0 || zs_sim_set_queue_stream(b->sim, b->q_off, 4))
            return ZS_ENOMEM;
    }
    rc = nvme_topology(b);
    if (rc)
        return rc;
    return sm_topology(b);
}

static int build(struct zs_bctx *b)
{
    int rc;
    const struct zs_model *m = b->m;
    int64_t W = zs_cfg_shard_world(b->c); /* 1 without sharding */
    b->failed = 0;
    b->last_host = -1;
    b->n_adam_alloc = 0;
    b->nfetch = 0;
    b->fetch_ring[0] = b->fetch_ring[1] = -1;
    b->n_avail = 0;
    for (int q = 0; q < ZS_CUT_QUEUES; q++)
        b->qlast[q] = -1;
    if (b->ex)
        b->ex->n = 0;
    /* tokens this rank processes per micro-step: Ulysses and context
     * parallelism split the sequence */
    b->tokens = b->c->micro_batch * b->c->seq_len / zs_cfg_seq_shards(b->c);
    rc = b->c->framework == ZS_FW_FSDP2 ? zs_units_build_groups(b)
                                        : zs_units_build_leaves(b);
    if (rc)
        return rc;
    if (b->nunits >= ZS_MAX_UNITS)
        return ZS_ELIMIT; /* zs_simulate names the limit */
    b->P = b->T = b->persistent_params = 0;
    for (int u = 0; u < b->nunits; u++) {
        struct zs_unit *un = &b->units[u];
        b->P += un->part_elems;
        b->T += (un->trainable + W - 1) / W;
        /* stage3_model_persistence_threshold caps the persistent elements
         * in all, in module order: a parameter that would pass it is
         * skipped, a smaller later one may still persist
         * (parameter_offload.py mark_persistent_parameters at edaa722
         * :311-323) */
        if (un->persistent &&
            b->persistent_params + un->params >
                b->c->model_persistence_threshold)
            un->persistent = false;
        if (un->persistent)
            b->persistent_params += un->params;
    }
    for (int i = 0; i < m->n_extra; i++) {
        const struct zs_extra *x = &m->extra[i];
        if (x->placement_default != ZS_PLACE_SHARDED)
            continue;
        b->P += (x->params + W - 1) / W;
        if (b->mo.method == ZS_METHOD_FULL && x->trainable_default)
            b->T += (x->params + W - 1) / W;
    }
    zs_free(b->ready);
    zs_free(b->galloc);
    zs_free(b->galloc2);
    zs_free(b->avail);
    b->ready = zs_calloc((size_t)b->nunits, sizeof *b->ready);
    b->galloc = zs_calloc((size_t)b->nunits, sizeof *b->galloc);
    b->galloc2 = zs_calloc((size_t)b->nunits, sizeof *b->galloc2);
    b->avail = zs_calloc((size_t)b->nunits, sizeof *b->avail);
    if (!b->ready || !b->galloc || !b->galloc2 || !b->avail)
        return ZS_ENOMEM;
    rc = zs_actoff_init(b);
    if (rc)
        return rc;
    return b->c->framework == ZS_FW_FSDP2 ? zs_build_fsdp2(b)
                                          : zs_build_deepspeed(b);
}

/* What a build grows, kept across builds on one thread (sched.h). */
struct zs_build_cache {
    struct zs_replay *rp;
    struct zs_unit *units;
    int cap_units;
    struct zs_piece *pieces;
    size_t cap_pieces;
    uint8_t *cut_wait;
    size_t cut_wait_cap;
    struct zs_cut_mem *cut_mem;
    size_t cut_mem_cap;
    int32_t *cut_idx;
    size_t cut_idx_cap;
};

struct zs_build_cache *zs_build_cache_new(void)
{
    return zs_calloc(1, sizeof(struct zs_build_cache));
}

void zs_build_cache_stats(const struct zs_build_cache *bc, int64_t *built,
                          int64_t *replayed)
{
    zs_replay_stats(bc ? bc->rp : NULL, built, replayed);
}

void zs_build_cache_free(struct zs_build_cache *bc)
{
    if (!bc)
        return;
    zs_replay_free(bc->rp);
    zs_free(bc->units);
    zs_free(bc->pieces);
    zs_free(bc->cut_wait);
    zs_free(bc->cut_mem);
    zs_free(bc->cut_idx);
    zs_free(bc);
}

/* The arrays a build grows move to b before the build (their room: no
 * content is read) and back to the cache after it, so that each has one
 * owner at a time. */
static void cache_lend(struct zs_bctx *b, struct zs_build_cache *bc)
{
    b->units = bc->units;
    b->cap_units = bc->cap_units;
    b->pieces = bc->pieces;
    b->cap_pieces = bc->cap_pieces;
    b->cut_wait = bc->cut_wait;
    b->cut_wait_cap = bc->cut_wait_cap;
    b->cut_mem = bc->cut_mem;
    b->cut_mem_cap = bc->cut_mem_cap;
    b->cut_idx = bc->cut_idx;
    b->cut_idx_cap = bc->cut_idx_cap;
    b->rp = bc->rp;
    memset(bc, 0, sizeof *bc);
    zs_replay_reset(b->rp);
}

static void cache_return(struct zs_bctx *b, struct zs_build_cache *bc)
{
    bc->units = b->units;
    bc->cap_units = b->cap_units;
    bc->pieces = b->pieces;
    bc->cap_pieces = b->cap_pieces;
    bc->cut_wait = b->cut_wait;
    bc->cut_wait_cap = b->cut_wait_cap;
    bc->cut_mem = b->cut_mem;
    bc->cut_mem_cap = b->cut_mem_cap;
    bc->cut_idx = b->cut_idx;
    bc->cut_idx_cap = b->cut_idx_cap;
    bc->rp = b->rp;
    b->units = NULL;
    b->pieces = NULL;
    b->cut_wait = NULL;
    b->cut_mem = NULL;
    b->cut_idx = NULL;
    b->rp = NULL;
}

/* The build context of setup su, before any allocation. */
static void bctx_init(struct zs_bctx *b, const struct zs_setup *su)
{
    memset(b, 0, sizeof *b);
    b->su = su;
    b->m = su->model;
    b->c = su->cfg;
    b->node = &su->cluster->node;
    b->mo.method = (enum zs_method)su->cfg->method;
    b->mo.lora_rank = (int)su->cfg->lora_rank;
    b->mo.lora_targets = su->cfg->lora_target_mask ? su->cfg->lora_target_mask
                                                   : ZS_ROLE_ALL_LINEAR;
}

static void bctx_release(struct zs_bctx *b)
{
    if (b->cache)
        cache_return(b, b->cache);
    zs_replay_free(b->rp);
    zs_actoff_release(b);
    zs_free(b->units);
    zs_free(b->ready);
    zs_free(b->galloc);
    zs_free(b->galloc2);
    zs_free(b->avail);
    zs_free(b->scratch);
    zs_free(b->pieces);
    zs_free(b->adam_alloc);
    zs_free(b->step_start);
    zs_free(b->step_end);
    zs_free(b->micro_start);
    zs_free(b->micro_end);
    zs_free(b->nmicro_sim);
    zs_free(b->cut_wait);
    zs_free(b->cut_mem);
    zs_free(b->cut_idx);
}

/* The steps simulated: the planner's first and one steady step, else the
 * first and cfg->steps steady ones (checked by simulate_once). */
static int steps_of(const struct zs_setup *su)
{
    return su->plan_mode ? 2 : 1 + (int)su->cfg->steps;
}

/* Whether the micro-steps to simulate cannot fit the engine's task ids
 * (INT32_MAX - 1, engine.c): each emits at least its two marks and a
 * forward and a backward task per decoder layer.  Only every micro-step of
 * a long accumulation comes near it (--all-micro-steps, or a shortcut
 * whose proof failed); it is refused with a message before anything is
 * allocated for it rather than found out of memory. */
static int check_micro_limit(const struct zs_bctx *b, struct zs_err *err)
{
    int64_t per = 2 + 2 * b->m->n_layers, micro = 0;
    for (int st = 0; st < steps_of(b->su); st++)
        micro += zs_micro_sim(b, st);
    if (micro * per < INT32_MAX - 1)
        return 0;
    return zs_err_set(
        err, ZS_ELIMIT,
        "too many micro-steps to simulate: %lld in %d steps x at least %lld "
        "tasks each exceed the engine's %d task ids; %s",
        (long long)micro, steps_of(b->su), (long long)per, INT32_MAX - 1,
        b->su->all_micro_steps
            ? "simulate without '--all-micro-steps', or fewer '--steps'"
            : "the accumulation shortcut could not be proved exact "
              "(docs/engine.md \"Accumulation\"): give fewer '--steps' or a "
              "smaller accumulation");
}

/* The per-step marks of the simulated steps.  False when out of memory. */
static bool alloc_steps(struct zs_bctx *b)
{
    const struct zs_setup *su = b->su;
    /* planner: the first step and one steady step.  One step is not enough:
     * GPU optimizer states are allocated lazily at the end of the first
     * step, so only the second step's forward holds them together with the
     * activations (a 7B ZeRO-3 candidate at micro 2 fit after one step and
     * failed for fragmentation in the second), and the caching allocator
     * enters it with the first step's cached blocks (FSDP2 7B offload at
     * micro 8 fails the same way, with no optimizer state on the GPU). */
    size_t nmicro;
    b->nsteps = steps_of(su);
    b->micro_cap = 0;
    for (int st = 0; st < b->nsteps; st++)
        if (zs_micro_sim(b, st) > b->micro_cap)
            b->micro_cap = zs_micro_sim(b, st);
    nmicro = (size_t)b->nsteps * (size_t)b->micro_cap;
    b->step_start = zs_calloc((size_t)b->nsteps, sizeof *b->step_start);
    b->step_end = zs_calloc((size_t)b->nsteps, sizeof *b->step_end);
    b->micro_start = zs_calloc(nmicro, sizeof *b->micro_start);
    b->micro_end = zs_calloc(nmicro, sizeof *b->micro_end);
    b->nmicro_sim = zs_calloc((size_t)b->nsteps, sizeof *b->nmicro_sim);
    return b->step_start && b->step_end && b->micro_start && b->micro_end &&
           b->nmicro_sim;
}

/* What the result says whatever the run: capacities, runtime, flops. */
static void result_fixed(const struct zs_bctx *b, struct zs_sim_result *res)
{
    const struct zs_setup *su = b->su;
    res->gpu_capacity_bytes = zs_gpu_usable_bytes(&b->node->gpu) -
                              zs_reserved_on_rank(su->cfg, b->node);
    res->gpu_context_bytes =
        b->node->gpu.cuda_context_bytes + b->node->gpu.nccl_bytes;
    res->host_capacity_per_node =
        b->node->host_ram_bytes - b->node->host_reserved_bytes;
    res->host_runtime_per_rank = ZS_HOST_RUNTIME_BYTES;
    res->model_flops_per_token =
        zs_model_flops_per_token_fwd(b->m, su->cfg->seq_len) *
        (b->mo.method == ZS_METHOD_FULL ? 3.0 : 2.0);
}

/* NVMe offload's inputs: the node's drive rates, and a param swap buffer
 * that holds the largest partition. */
static int check_nvme(const struct zs_bctx *b, struct zs_err *err)
{
    const struct zs_cfg *c = b->c;
    if (c->offload_optimizer == ZS_OFF_NVME ||
        c->offload_param == ZS_OFF_NVME) {
        double r, w;
        zs_nvme_node_rates(c, b->node, &r, &w);
        if (r <= 0 || w <= 0)
            return zs_err_set(err, ZS_EUSAGE,
                              "nvme offload needs the node's NVMe rates: "
                              "profile '%s' has no \"storage\"; give "
                              "'--nvme-read' and '--nvme-write' (GB/s per node)",
                              b->node->name);
    }
    if (c->offload_param == ZS_OFF_NVME) {
        /* zero.Init gives each swapped partition one swap buffer:
         * get_buffer asserts "More elements {numel} than buffer size
         * {elements_per_buffer}" (partitioned_param_swapper.py:357, called
         * from partition_parameters.py:1792-1795, 0.19.6 edaa7221).  The
         * partition of a param is its numel padded to a multiple of the world
         * divided by the world (_aligned_size, partition_parameters.py:1790).
         * zsim knows the largest leaf module's params (weight + bias): the
         * weight dominates, the bias (<= hidden) is counted too
         * [assumption: a leaf's bias never decides the check]. */
        int64_t w = c->world > 0 ? c->world : 1;
        int64_t part = (b->m->largest_leaf_params + w - 1) / w;
        if (part > c->param_buffer_size)
            return zs_err_set(
                err, ZS_EUSAGE,
                "offload_param buffer_size %lld is smaller than the largest "
                "parameter partition (%s: %lld elements / %lld ranks = %lld "
                "elements): DeepSpeed asserts \"More elements than buffer "
                "size\" (partitioned_param_swapper.py:357); give "
                "'--param-buffer-size' %lld or more",
                (long long)c->param_buffer_size, b->m->largest_leaf_name,
                (long long)b->m->largest_leaf_params, (long long)w,
                (long long)part, (long long)part);
    }
    return 0;
}

/* The topology and the schedule; on failure, err says why. */
static int build_all(struct zs_bctx *b, zs_sim *sim, struct zs_err *err)
{
    int rc = topology(b);
    if (!rc)
        rc = build(b);
    if (!rc || b->cut == ZS_CUT_FAILED)
        return rc;
    /* the engine says why (a limit, a bad task); else it is memory */
    if (rc == ZS_ELIMIT && b->nunits >= ZS_MAX_UNITS)
        zs_err_set(err, rc,
                   "model too large to schedule: %d units (modules "
                   "gathered as one), the limit is %d",
                   b->nunits, ZS_MAX_UNITS - 1);
    else if (rc != ZS_ENOMEM && zs_sim_errmsg(sim)[0])
        zs_err_set(err, rc, "cannot build the schedule: %s",
                   zs_sim_errmsg(sim));
    else if (rc == ZS_ENOMEM)
        zs_err_set(err, rc, "out of memory building the schedule");
    else
        zs_err_set(err, rc, "internal error building the schedule "
                            "(code %d): please report it with the "
                            "command line",
                   rc);
    return rc;
}

/* Reduces the first run (outcome run) into res. */
static int reduce_first(struct zs_bctx *b, zs_sim *sim, int run,
                        struct zs_sim_result *res)
{
    int rc, nsteps = b->nsteps;
    if (!(run == ZS_SIM_OOM && zs_sim_oom(sim) &&
          zs_sim_oom(sim)->pool == b->p_gpu))
        return zs_reduce_results(b, run, res);
    /* A GPU OOM is re-run without the limit, and that run's reduction
     * overwrites every step result: reduce this one for the verdict alone
     * (no steps).  A host limit crossed earlier makes the verdict a host
     * OOM: reduce it whole (it is re-run without the GPU limit too, for the
     * host need of the whole run: run_and_reduce). */
    b->nsteps = 0;
    rc = zs_reduce_results(b, run, res);
    b->nsteps = nsteps;
    if (!rc && res->oom.where != ZS_OOM_GPU)
        rc = zs_reduce_results(b, run, res);
    return rc;
}

/* A verdict-only GPU OOM: the verdict is this run's; the run without the
 * limit would only add what it needs.  That run cannot deadlock (no task
 * needs more cores than the pool) nor OOM, so it would end with every task
 * started and finished once: 2 x tasks events (engine.h), unless it passed
 * the engine's 4e18 ns time bound (127 simulated years).  oom.needed_bytes
 * stays a lower bound of the need that run gives (the larger of this OOM's
 * allocated + request and its peak).  A host OOM whose run stopped at a GPU
 * OOM (res->then) is partial alike: its host need (oom.needed_bytes) is
 * this run's host peak, a lower bound, and then's need a lower bound. */
static void oom_partial(const struct zs_bctx *b, zs_sim *sim,
                        struct zs_sim_result *res)
{
    int64_t bound = zs_sim_pool_peak_bound(sim, b->p_gpu);
    struct zs_oom_info *g =
        res->oom.where == ZS_OOM_GPU ? &res->oom : &res->then;
    res->partial = true;
    res->events = 2 * (int64_t)zs_sim_ntasks(sim);
    /* what it needs is at least what its task order implies */
    if (bound > g->needed_bytes)
        g->needed_bytes = bound;
}

/* How much would a GPU OOM need?  Run the same tasks again without a GPU
 * limit.  The schedule does not depend on the pool's capacity, and
 * zs_sim_run starts every run from a clean run state (engine.h), so the
 * tasks built are reused rather than built again.  A host OOM whose run
 * stopped at a GPU OOM (res->then) is run again alike: its host need is
 * the whole run's host peak, which the run cut short by the GPU did not
 * reach (the host pool has no limit in the engine: result.c
 * host_crossing), and res->then gets the GPU need.  A GPU OOM whose run
 * without the limit then crosses the host limit gets that crossing in
 * res->then. */
static int oom_rerun(struct zs_bctx *b, zs_sim *sim, struct zs_sim_result *res,
                     struct zs_err *err)
{
    struct zs_oom_info keep = res->oom, then = res->then;
    struct zs_oom_info *g = keep.where == ZS_OOM_GPU ? &keep : &then;
    struct zs_pool_stats ps;
    int rc, run;
    zs_sim_set_pool_capacity(sim, b->p_gpu, 0);
    /* the run ended at the OOM; what comes after it (a deadlock, a time
     * overflow) shows only now, and is an error like in any run */
    run = zs_sim_run(sim, err);
    if (run < 0)
        return run;
    res->events_run += zs_sim_events(sim);
    zs_sim_pool_stats(sim, b->p_gpu, &ps);
    if (ps.peak_allocated > g->needed_bytes)
        g->needed_bytes = ps.peak_allocated;
    g->needed_reserved_bytes = ps.peak_reserved;
    /* The records now belong to the unlimited run: peaks and times are
     * what the configuration would need; the OOM stays the verdict. */
    rc = zs_reduce_results(b, ZS_SIM_DONE, res);
    if (rc)
        return zs_err_set(err, rc, "out of memory reducing the results");
    zs_actoff_result(b, res);
    /* a host verdict needs the whole run's host peak (result.c); a GPU
     * verdict's run without the limit may cross the host limit after it */
    if (keep.where == ZS_OOM_HOST && res->oom.where == ZS_OOM_HOST &&
        res->oom.needed_bytes > keep.needed_bytes)
        keep.needed_bytes = res->oom.needed_bytes;
    if (keep.where == ZS_OOM_GPU && res->oom.where == ZS_OOM_HOST)
        then = res->oom;
    res->oom = keep;
    res->then = then;
    return 0;
}

/* The prefix cut's verdict (sched_int.h): the prefix run stopped at a GPU
 * OOM and every counted task waits past it, so the run of the whole
 * schedule stops at the same OOM, after the same events, with the same
 * records and pools: its verdict-only result is this one (oom_partial),
 * with 2 x every task's events and the lower bound of the need from the GPU
 * allocations and frees of every task (zs_cut_peak_bound).  Returns 1 when
 * the candidate must be simulated again without a cut: a host OOM first
 * (its result is the whole run's), or a task that needs more cores than the
 * rank has (the whole run is then needed, like in run_and_reduce). */
static int cut_reduce(struct zs_bctx *b, zs_sim *sim,
                      struct zs_sim_result *res, struct zs_err *err)
{
    int rc, nsteps = b->nsteps;
    int64_t bound;
    res->events_run = zs_sim_events(sim);
    b->nsteps = 0;
    rc = zs_reduce_results(b, ZS_SIM_OOM, res);
    b->nsteps = nsteps;
    if (rc)
        return zs_err_set(err, rc, "out of memory reducing the results");
    if (res->oom.where != ZS_OOM_GPU || b->cut_cores > b->cores ||
        zs_sim_max_task_cores(sim) > b->cores)
        return 1;
    zs_actoff_result(b, res);
    res->partial = true;
    res->events = 2 * ((int64_t)b->cut_at + b->ncounted);
    bound = zs_cut_peak_bound(b);
    if (bound > res->oom.needed_bytes)
        res->oom.needed_bytes = bound;
    return 0;
}

/* Whether res's first run stopped at a GPU OOM: its verdict, or a host OOM
 * before it (res->then).  Its need comes from a run without the GPU
 * limit (oom_rerun), or is a lower bound (oom_partial). */
static bool stopped_at_gpu_oom(const struct zs_sim_result *res)
{
    return res->oom.where == ZS_OOM_GPU || res->then.where == ZS_OOM_GPU;
}

/* Runs the built schedule and reduces it into res; a GPU OOM also gets what
 * it would need (oom_partial or oom_rerun). */
static bool shortcuts_proved(const struct zs_bctx *b, int *steady);

static int run_and_reduce(struct zs_bctx *b, zs_sim *sim,
                          struct zs_sim_result *res, struct zs_err *err)
{
    int rc, run;
    res->opt_groups = b->opt_groups;
    res->opt_groups_gpu = b->opt_groups_gpu;
    res->opt_gpu_elems = b->opt_gpu_elems;
    if (b->cut == ZS_CUT_COUNTING)
        return cut_reduce(b, sim, res, err);
    run = zs_sim_run(sim, err);
    if (run < 0)
        return run;
    res->events_run = zs_sim_events(sim);
    res->paged_state_bytes = b->paged_bytes;
    rc = reduce_first(b, sim, run, res);
    if (rc)
        return zs_err_set(err, rc, "out of memory reducing the results");
    zs_actoff_result(b, res);
    if (!stopped_at_gpu_oom(res))
        return 0;
    if (b->su->verdict_only && zs_sim_max_task_cores(sim) <= b->cores) {
        oom_partial(b, sim, res);
        return 0;
    }
    /* the verdict needs the shortcuts proved by the run to the OOM: the
     * run without the limit may differ before it (a limit makes the
     * allocator flush its cache where none does without) */
    if (!shortcuts_proved(b, b->steady_next))
        return 2;
    return oom_rerun(b, sim, res, err);
}

/* The prefix the planner's verdict-only candidates run first (emit.c
 * cut_run): 4096 tasks [our measurement: of the 534 verdict-only GPU OOMs
 * of 'zsim plan --model 72b --gpus 8xH100', about 115 000 tasks each, 302
 * OOM on one of their first 1 000 tasks and 447 within the first 4 000;
 * docs/engine.md "The prefix cut"]. */
#define CUT_AT 4096
/* the largest prefix tried after a first one could not decide */
#define CUT_AT_MAX 65536

/* Whether every step's shortcut is proved by the last run (result.c
 * zs_shortcut_proved); else, for each step whose shortcut is not and
 * steady given, steady[st] doubles (at accum - 2 or more every micro-step
 * is simulated: zs_micro_sim). */
static bool shortcuts_proved(const struct zs_bctx *b, int *steady)
{
    bool ok = true;
    for (int st = 0; st < b->nsteps; st++) {
        if (!zs_shortcut_proved(b, st)) {
            if (steady)
                steady[st] *= 2;
            ok = false;
        }
    }
    return ok;
}

/* zs_simulate once; *cut_at: the prefix a verdict-only planner candidate
 * runs first (0: none); steady: per step, the shortcut's steady
 * micro-steps.  Returns 1 when the prefix cut could not decide: *cut_at is
 * then the prefix to try next (0: none); 2 when a step's shortcut was not
 * proved: steady says what to simulate next, and *oom_events, when still
 * -1, becomes this result's events if it is a GPU OOM whose run to the OOM
 * proved its shortcuts and only its run without the limit did not
 * (zs_simulate). */
static int simulate_once(const struct zs_setup *su, zs_sim *sim,
                         struct zs_sim_result *res, struct zs_err *err,
                         int32_t *cut_at, int *steady, int64_t *oom_events)
{
    struct zs_bctx b;
    int rc;
    bool own = sim == NULL;
    memset(res, 0, sizeof *res);
    bctx_init(&b, su);
    b.steady = steady;
    b.steady_next = steady;
    rc = check_micro_limit(&b, err);
    if (rc) {
        own = false;
        goto out;
    }
    if (!alloc_steps(&b) || (own && !(sim = zs_sim_new()))) {
        rc = zs_err_set(err, ZS_ENOMEM, "out of memory creating the "
                                        "simulation");
        own = false; /* nothing created yet */
        goto out;
    }
    b.sim = sim;
    b.ex = su->ex;
    if (su->cache) {
        b.cache = su->cache;
        cache_lend(&b, su->cache);
    }
    /* micro-step replay (replay.c): not while exporting (the export's
     * descriptions are the builders'), nor when asked to build every one */
    if (b.ex || su->no_replay || getenv("ZSIM_NO_REPLAY")) {
        zs_replay_free(b.rp);
        b.rp = NULL;
    } else if (!b.rp && !(b.rp = zs_replay_new())) {
        rc = zs_err_set(err, ZS_ENOMEM, "out of memory creating the "
                                        "simulation");
        goto out;
    }
    if (b.ex) {
        b.ex->n = 0;
        memset(&b.ex->cur, 0, sizeof b.ex->cur);
        b.ex->cur.kind = ZS_X_NONE;
    }
    result_fixed(&b, res);
    if (su->prefix_cut && su->plan_mode && su->verdict_only && !b.ex &&
        !own)
        b.cut_at = *cut_at;
    if (b.cut_at) { /* the last candidate's size: no regrowth per task */
        size_t room = zs_sim_task_room(sim);
        if (zs_grow((void **)&b.cut_idx, &b.cut_idx_cap, room,
                    sizeof *b.cut_idx) ||
            zs_grow((void **)&b.cut_mem, &b.cut_mem_cap, room / 2,
                    sizeof *b.cut_mem) ||
            zs_grow((void **)&b.cut_wait, &b.cut_wait_cap, room, 1))
            b.cut_at = 0; /* no cut: the build reports a lack of memory */
    }
    rc = check_nvme(&b, err);
    if (!rc)
        rc = build_all(&b, sim, err);
    if (b.cut == ZS_CUT_FAILED) {
        /* a task after the prefix may start before its OOM (the host thread
         * runs ahead of the GPU): a prefix past it may still decide */
        rc = 1;
        *cut_at = b.cut_at + b.ncounted < CUT_AT_MAX / 4
                      ? 4 * (b.cut_at + b.ncounted)
                      : 0;
    } else if (!rc && (rc = run_and_reduce(&b, sim, res, err)) == 1) {
        *cut_at = 0; /* the prefix's OOM is not the verdict */
    } else if (!rc && !shortcuts_proved(&b, steady)) {
        /* a GPU OOM's result whose run to the OOM was proved
         * (run_and_reduce) and its run without the limit was not */
        if (stopped_at_gpu_oom(res) && !res->partial && *oom_events < 0)
            *oom_events = res->events;
        rc = 2;
    }
out:
    bctx_release(&b);
    if (own)
        zs_sim_free(sim);
    return rc;
}

/* The steady micro-steps the shortcut simulates at first in each step
 * (sched.h; docs/engine.md "Accumulation"): one, or two where the first
 * micro-step allocates differently from the steady ones, so that the
 * second starts from a caching allocator the first left in another state
 * and the third is the first steady one after a steady one:
 * - FSDP under HF's no_sync (zs_cfg_grads_held_unsharded): the first
 *   micro-step keeps autograd's grads as the held unsharded grads, later
 *   ones allocate theirs and add them in (fsdp2.c);
 * - DeepSpeed ZeRO-3's first step: its first micro-step records the
 *   prefetch trace (zero.c ds_micro) and the second is the first to
 *   prefetch.
 * This only saves runs: the proof decides (shortcuts_proved). */
static void steady_start(const struct zs_setup *su, int nsteps, int *steady)
{
    const struct zs_cfg *c = su->cfg;
    for (int st = 0; st < nsteps; st++)
        steady[st] = zs_cfg_grads_held_unsharded(c) ? 2 : 1;
    if (c->framework == ZS_FW_DEEPSPEED && c->zero == 3)
        steady[0] = 2;
}

/* The result is that of the last simulate_once, whose shortcuts are all
 * proved.  For a GPU OOM its events are those of the schedule whose run
 * gave the verdict (its run without the limit finishes every task): when
 * only that run without the limit asked for more steady micro-steps, the
 * verdict and everything before it stay, and the events stay those of the
 * first schedule, as the planner's verdict-only result of the same
 * candidate counts them (oom_partial, cut_reduce), so that its fast path
 * prints what its slow path prints. */
int zs_simulate(const struct zs_setup *su, zs_sim *sim,
                struct zs_sim_result *res, struct zs_err *err)
{
    int32_t cut_at = CUT_AT;
    int64_t oom_events = -1;
    int rc, cuts = 0, nsteps;
    int *steady;
    /* the first step plus cfg->steps steady steps, all simulated */
    if (!su->plan_mode &&
        (su->cfg->steps < 1 || su->cfg->steps > ZS_MAX_SIM_STEPS - 1))
        return zs_err_set(err, ZS_ELIMIT,
                          "invalid steps: must be in [1, %d] (got %lld)",
                          ZS_MAX_SIM_STEPS - 1, (long long)su->cfg->steps);
    nsteps = steps_of(su);
    steady = zs_calloc((size_t)nsteps, sizeof *steady);
    if (!steady)
        return zs_err_set(err, ZS_ENOMEM,
                          "out of memory creating the simulation");
    steady_start(su, nsteps, steady);
    for (;;) {
        rc = simulate_once(su, sim, res, err, &cut_at, steady, &oom_events);
        if (rc == 1 && ++cuts == 2) /* a second prefix, then none */
            cut_at = 0;
        if (rc != 1 && rc != 2)
            break;
    }
    zs_free(steady);
    if (!rc && oom_events >= 0 && stopped_at_gpu_oom(res))
        res->events = oom_events;
    return rc;
}
