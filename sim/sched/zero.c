/*
 * zero.c — DeepSpeed ZeRO-3 (offload none / optimizer / optimizer+params)
 * and ZeRO-2, one rank's step as DeepSpeed's host program runs it.
 *
 * Everything here follows reference/zero3-offload-mechanics.md (§1 the step,
 * §2 the buffers), which was read from DeepSpeed's stage3.py,
 * partitioned_param_coordinator.py, parameter_offload.py,
 * partition_parameters.py and cpu_adam.py.  Section numbers below refer to it.
 *
 * Coordinator (§1 "Trace / prefetch machinery"): the trace is the order of
 * module fetches (forward, recompute, backward).  The first micro-step
 * records it and does not prefetch; from the second on, every hooked
 * module's fetch (its parameterless containers and persistent modules too)
 * ends by prefetching upcoming params up to min(max_live_parameters -
 * available, prefetch_bucket_size) elements in one coalesced all-gather
 * (`prefetch`).  After a module runs its params are released unless the
 * module appears again within max_reuse_distance elements of trace.  Params
 * of at most param_persistence_threshold elements stay gathered
 * ("persistent").  The hooks' host work (waits, releases, launches, bucket
 * flushes, module hooks) is counted in calls (hooks.c).
 *
 * Gathers (§1 step 2a): with offload_param the partition is copied to the GPU
 * with a *blocking* .to(device) on the all-gather stream (the host waits for
 * that stream, including earlier queued all-gathers), then NCCL all-gathers
 * into a flat buffer; with more than one tensor in the group each param is
 * copied out of the flat buffer into its own full tensor (transient 2x).
 * The host waits for the oldest of two outstanding fetch events
 * (`fetch_event`: __max_ongoing_fetch_events = 2, held against the compute
 * stream).
 *
 * Gradients (§1 steps 6-10): each trained param's full gradient is copied
 * into the persistent IPG bucket (reduce_bucket_size elements) on the
 * reduce stream (q_red: the compute stream without overlap_comm); ZeRO-3
 * reduce-scatters a full bucket through a transient interleave buffer,
 * ZeRO-1/2 all-reduces a flat copy of it (flush_z12, with the releases'
 * differences); the rank's partition then travels to the CPU
 * accumulation buffer (offload_optimizer) — D2H 2 B, H2D back 2 B on the first
 * micro-step, H2D+add+D2H afterwards, and at the accumulation boundary an fp32
 * upcast on the GPU and a 4 B D2H, blocking the host before DeepSpeed 0.19.5
 * (non_blocking=True from PR #8207).
 *
 * Step (§1 steps 11-15): per sub-group (sub_group_size elements) unscale and
 * clip (a CPU pass over the fp32 grads), DeepSpeedCPUAdam (28 B/element,
 * memory-bandwidth bound, §5; exp_avg/exp_avg_sq allocated lazily at the
 * first step), then fp32 -> bf16 into the pinned flat buffer (offload_param)
 * or, without offload_param, converted on the CPU into a pageable temporary
 * and copied H2D (pageable, blocking).
 */
#include "sched/sched_int.h"
#include "util/alloc.h"

#include <stddef.h>
#include <string.h>

/* A trace entry: unit u in pass F (forward), R (recompute) or B (backward). */
enum { PASS_F, PASS_R, PASS_B };
struct tentry {
    int unit;
    int pass;
};

struct ds {
    struct zs_bctx *b;
    struct tentry *trace;
    int ntrace;
    int64_t *prefix; /* prefix[i] = Σ params of trace[0..i-1] */
    int *next_pos;   /* next position of the same unit, -1 */
    bool *chosen;    /* scratch for prefetch de-duplication */
    int *group;      /* scratch: one prefetch group, at most nunits units */
    bool *pending;   /* gathered (in flight), not yet waited for */
    struct zs_ds3_unit_calls *uc; /* per unit: what its hooks count */
    int64_t *hook_ns; /* per unit, forward then backward: zs_hook_ns */
    int cursor;      /* the trace position of the next fetch (the front of
                        the coordinator's parameter queue) */
    int pos; /* the trace position where the forward ended (micro_forward),
                0 outside a micro-step */
    /* the last two fetch events, oldest first (fetch_event) */
    int32_t fev[2];
    int nfev;
    /* host time of the hook calls not yet emitted (the releases since the
     * last fetch, this fetch's waits): one host task before the fetch
     * event's wait (host_pending) instead of one per release and wait keeps
     * the planner's event count */
    int64_t host_pending_ns;
    bool zero3, off_opt, off_param;
    /* bytes per element of the master params and their gradient: 4 (fp32,
     * bf16.enabled), or 2 under bf16 master weights (zs_cfg_param_bytes);
     * sb: of each optimizer state, 2 with bf16_optimizer_states, else 4
     * (config.c check_deepspeed_policy has the sources and what is
     * refused) */
    int mb, sb;
    /* reduce-scatter state */
    int64_t fill;
    int fill_tensors; /* gradient tensors in the bucket */
    int32_t flush_ring[2];
    int32_t last_rs;
    /* grads reduced where autograd left them (not copied into the bucket,
     * grad_ready): freed once the flush that takes them is done; at most
     * one per unit (nunits entries, -1 when free) */
    int32_t *held_grads;
    int n_held;
    /* the queue DeepSpeed reduces gradients on: its reduction stream with
     * overlap_comm, else the current (compute) stream (ZeRO-3: stage3.py
     * reduce_and_partition_stream is default_stream() without it, :336 at
     * edaa722; ZeRO-1/2: stage_1_and_2.py average_tensor and
     * reduce_ipg_grads) */
    int q_red;
    /* ZeRO-1/2: trainable elements reduced so far in this backward, where
     * the next bucket ends in the flat (forward-ordered) gradient space */
    int64_t red_off;
    /* per-layer activation allocations */
    int32_t act_saved, act_work, act_bwd;
    /* full checkpointing: the recomputed layer's allocations (emit.c
     * zs_t_recompute_begin) and its backward workspace, allocated once its
     * recompute forward has freed its own workspace */
    struct zs_recompute rc;
    int32_t act_bwd_ws;
    int32_t *layer_saved; /* per layer */
    /* loss buffers */
    int32_t logits_bf16, logprobs[ZS_LOSS_PIECES_MAX];
    /* what the micro-step being built reads of its position (ds_begin):
     * the accumulation boundary, whether it is its step's first, the
     * first step's first (the trace RECORD, no prefetch) */
    bool boundary;
    bool first_micro;
    bool record;
    /* NVMe optimizer offload (nvme_swap_in/out): the last gradient
     * swap-out of the step, the async swap-in of the next sub-group
     * (pipeline_read) and the async swap-out in flight (pipeline_write) */
    bool nvme;
    int32_t grad_swap, next_in, async_out;
    /* NVMe parameter offload (pnvme_*): per unit the partition elements in
     * the swap files, the prefetched swap-in not yet waited for, and the
     * swap buffers held; per sub-group whether it has a pinned CPU flat
     * buffer (max_in_cpu) */
    bool pnvme;
    int64_t *pn;
    int32_t *pread;
    int *pslot;
    bool *sg_cpu;
    int64_t *sg_nv; /* per sub-group: swapped trainable elements */
    int64_t nsub, slots_used;
    int32_t last_pread;
    /* Twin-Flow (offload_optimizer.ratio < 1, config.c zs_twin_*): the
     * sub-groups stepped on the GPU as the partition's element range
     * [tw_lo, tw_hi) in forward order; red_part: ZeRO-3 partition elements
     * reduced so far in this backward, which fills them from the end */
    bool twin;
    int64_t tw_lo, tw_hi, red_part;
};

static int build_trace(struct ds *s)
{
    struct zs_bctx *b = s->b;
    const struct zs_model *m = b->m;
    int n = 0, cap = b->nunits * 3 + 8;
    int per_layer = m->n_layer_leaves;
    int pre = m->n_pre;
    s->trace = zs_calloc((size_t)cap, sizeof *s->trace);
    s->prefix = zs_calloc((size_t)cap + 1, sizeof *s->prefix);
    s->next_pos = zs_calloc((size_t)cap, sizeof *s->next_pos);
    s->chosen = zs_calloc((size_t)b->nunits, sizeof *s->chosen);
    s->group = zs_calloc((size_t)b->nunits, sizeof *s->group);
    s->pending = zs_calloc((size_t)b->nunits, sizeof *s->pending);
    s->uc = zs_calloc((size_t)b->nunits, sizeof *s->uc);
    s->hook_ns = zs_calloc((size_t)b->nunits * 2, sizeof *s->hook_ns);
    s->layer_saved = zs_calloc((size_t)m->n_layers + 1, sizeof *s->layer_saved);
    if (!s->trace || !s->prefix || !s->next_pos || !s->chosen || !s->group ||
        !s->pending || !s->uc || !s->hook_ns || !s->layer_saved)
        return ZS_ENOMEM;
    for (int64_t L = 0; L <= m->n_layers; L++)
        s->layer_saved[L] = -1; /* -1: not allocated (yet) */
    for (int u = 0; u < b->nunits; u++) {
        zs_ds3_unit_calls_of(b, u, &s->uc[u]);
        /* the same every pass of every micro-step: computed once */
        s->hook_ns[2 * u] = zs_hook_ns(b, u, false);
        s->hook_ns[2 * u + 1] = zs_hook_ns(b, u, true);
    }
#define PUSH(u, p)                                                             \
    do {                                                                       \
        if (!b->units[(u)].persistent) {                                       \
            s->trace[n].unit = (u);                                            \
            s->trace[n].pass = (p);                                            \
            n++;                                                               \
        }                                                                      \
    } while (0)
    for (int u = 0; u < b->nunits; u++)
        PUSH(u, PASS_F);
    for (int u = b->nunits - 1; u >= pre + (int)m->n_layers * per_layer; u--)
        PUSH(u, PASS_B);
    for (int L = (int)m->n_layers - 1; L >= 0; L--) {
        int first = pre + L * per_layer;
        if (zs_full_ckpt_at(b, L))
            for (int i = 0; i < per_layer; i++)
                PUSH(first + i, PASS_R);
        for (int i = per_layer - 1; i >= 0; i--)
            PUSH(first + i, PASS_B);
    }
    for (int u = pre - 1; u >= 0; u--)
        PUSH(u, PASS_B);
#undef PUSH
    s->ntrace = n;
    s->prefix[0] = 0;
    for (int i = 0; i < n; i++)
        s->prefix[i + 1] = s->prefix[i] + b->units[s->trace[i].unit].params;
    {
        int *last = zs_calloc((size_t)b->nunits, sizeof *last);
        if (!last)
            return ZS_ENOMEM;
        for (int u = 0; u < b->nunits; u++)
            last[u] = -1;
        for (int i = n - 1; i >= 0; i--) {
            s->next_pos[i] = last[s->trace[i].unit];
            last[s->trace[i].unit] = i;
        }
        zs_free(last);
    }
    return 0;
}

static void ds_release_trace(struct ds *s)
{
    zs_free(s->trace);
    zs_free(s->prefix);
    zs_free(s->next_pos);
    zs_free(s->chosen);
    zs_free(s->group);
    zs_free(s->pending);
    zs_free(s->uc);
    zs_free(s->hook_ns);
    zs_free(s->layer_saved);
    zs_free(s->pn);
    zs_free(s->pread);
    zs_free(s->pslot);
    zs_free(s->sg_cpu);
    zs_free(s->sg_nv);
}

/* ---- NVMe parameter offload (docs/nvme.md) ---------------------------------
 *
 * DeepSpeed 0.19.6 (edaa7221), offload_param.device nvme
 * (AsyncPartitionedParameterSwapper, swap_tensor/partitioned_param_swapper.py):
 *  - zero.Init: a param whose partition is at least max(1 MiB, block_size)
 *    bytes (swappable_tensor, :136-142; MIN_AIO_BYTES constants.py) gets a
 *    swap buffer (get_buffer, :352-368) and is written to its swap file and
 *    the buffer released (swap_out_and_release, partition_parameters.py
 *    :1864-1866); smaller ones keep a CPU partition (:1802-1803).
 *  - max_in_cpu: the trainable params get one pinned flat CPU buffer of
 *    min(max_in_cpu, partition elements) (stage3.py:839-862); a sub-group
 *    whose elements still fit after the earlier fitting ones is copied into
 *    it and lives in host RAM from then on ('not-nvme', stage3.py:823-837,
 *    929-947); the others have no flat buffer and stay in the swap files.
 *    Frozen params are in no optimizer group: they stay in the swap files.
 *  - each fetch: _all_gather -> _ensure_availability_of_partitioned_params
 *    swaps the partitions in synchronously, or waits for every read in
 *    flight (partition_parameters.py:1679-1698), before the H2D copy and the
 *    all-gather; the swap buffer is released when the param is partitioned
 *    again after use (remove_partition_and_release_buffers, :1779-1781): so
 *    every forward, recompute and backward fetch reads the partition anew.
 *  - from the second step (complete trace) the coordinator, after its
 *    all-gather prefetch, swaps in the next params of the trace
 *    asynchronously while their count stays below the free swap buffers and
 *    the numel considered below 2 x the numel being all-gathered
 *    (__prefetch_nvme_param_partitions, partitioned_param_coordinator.py
 *    :487-488, 667-690).
 *  - step: a sub-group without a flat buffer has its updated fp32 params
 *    converted to bf16 into the reserved partitioned swap buffer and written
 *    synchronously (_partitioned_params_swap_out, stage3.py:1221-1240;
 *    swap_out_partitioned_params :400-420; SwapBufferPool.swap_out
 *    async_op=False, utils.py:153-161).
 * Per unit zsim takes the unit (a leaf module) as swappable when its
 * partition reaches 1 MiB (524,288 bf16 elements) [assumption: a leaf's
 * small bias is swapped with its weight; DeepSpeed keeps it on the CPU]. */

#define PNVME_MIN_ELEMS (1024 * 1024 / 2)

static int pnvme_init(struct ds *s)
{
    struct zs_bctx *b = s->b;
    int64_t T = b->T, sub = b->c->sub_group_size;
    int64_t cpu_cap = T < b->c->param_max_in_cpu ? T : b->c->param_max_in_cpu;
    int64_t flat = 0, off = 0;
    s->nsub = T > 0 ? (T + sub - 1) / sub : 0;
    s->pn = zs_calloc((size_t)b->nunits, sizeof *s->pn);
    s->pread = zs_calloc((size_t)b->nunits, sizeof *s->pread);
    s->pslot = zs_calloc((size_t)b->nunits, sizeof *s->pslot);
    s->sg_cpu = zs_calloc((size_t)(s->nsub + 1), sizeof *s->sg_cpu);
    s->sg_nv = zs_calloc((size_t)(s->nsub + 1), sizeof *s->sg_nv);
    if (!s->pn || !s->pread || !s->pslot || !s->sg_cpu || !s->sg_nv)
        return ZS_ENOMEM;
    /* stage3.py:929-947: flat_offset grows only by the sub-groups that fit */
    for (int64_t i = 0; i < s->nsub; i++) {
        int64_t e = (i == s->nsub - 1) ? T - i * sub : sub;
        if (flat + e <= cpu_cap) {
            s->sg_cpu[i] = true;
            flat += e;
        }
    }
    for (int u = 0; u < b->nunits; u++) {
        const struct zs_unit *un = &b->units[u];
        int64_t tr = un->params > 0
                         ? (int64_t)((double)un->part_elems *
                                     (double)un->trainable /
                                     (double)un->params)
                         : 0;
        s->pread[u] = -1;
        if (tr > un->part_elems)
            tr = un->part_elems;
        if (!un->persistent && un->part_elems >= PNVME_MIN_ELEMS) {
            s->pn[u] = un->part_elems - tr; /* frozen: in the swap files */
            for (int64_t k = off; k < off + tr;) {
                int64_t i = k / sub, end = (i + 1) * sub;
                if (end > off + tr)
                    end = off + tr;
                if (i >= s->nsub || !s->sg_cpu[i]) {
                    s->pn[u] += end - k;
                    if (i < s->nsub)
                        s->sg_nv[i] += end - k;
                }
                k = end;
            }
        }
        off += tr;
    }
    s->last_pread = -1;
    return 0;
}

/* The swap-in before a gather: a unit not yet read is read now and the host
 * waits (swap_in async_op=False); one prefetched is waited for
 * (synchronize_reads).  Either wait covers every read in flight on the read
 * handle: the host waits for the last one issued. */
static void pnvme_swap_in(struct ds *s, const int *group, int ng)
{
    struct zs_bctx *b = s->b;
    bool any = false;
    for (int i = 0; i < ng; i++) {
        int u = group[i];
        if (s->pn[u] <= 0)
            continue;
        any = true;
        if (s->pread[u] < 0) {
            s->last_pread =
                zs_t_nvme(b, false, (double)s->pn[u] * 2,
                          "swap-in param partitions (NVMe)", b->last_host, -1);
            s->pslot[u] = b->units[u].n_tensors;
            s->slots_used += s->pslot[u];
        }
        s->pread[u] = -1;
    }
    if (any)
        zs_t_mark(b, b->q_host, "host waits param swap-in", s->last_pread,
                  b->last_host, -1);
}

/* __prefetch_nvme_param_partitions after the fetch at trace position pos;
 * inflight: the params being all-gathered by this fetch. */
static void pnvme_prefetch(struct ds *s, int pos, int64_t inflight)
{
    struct zs_bctx *b = s->b;
    int64_t considered = 0;
    for (int q = pos + 1; q < s->ntrace; q++) {
        int v = s->trace[q].unit;
        if (b->avail[v])
            continue;
        if (considered > 2 * inflight ||
            s->slots_used + b->units[v].n_tensors > b->c->param_buffer_count)
            break;
        if (s->pn[v] > 0 && s->pread[v] < 0 && s->pslot[v] == 0) {
            s->pread[v] = s->last_pread = zs_t_nvme(
                b, false, (double)s->pn[v] * 2,
                "swap-in next params (async, NVMe)", b->last_host, -1);
            s->pslot[v] = b->units[v].n_tensors;
            s->slots_used += s->pslot[v];
        }
        considered += b->units[v].params;
    }
}

static void pnvme_release(struct ds *s, int u)
{
    if (!s->pnvme)
        return;
    s->slots_used -= s->pslot[u];
    s->pslot[u] = 0;
}

/* ---- gathers ------------------------------------------------------------ */

static void gather(struct ds *s, const int *group, int ng)
{
    struct zs_bctx *b = s->b;
    int64_t full = 0, part_bytes = 0, tensors = 0;
    int fetched = 0;
    int32_t flat, t, launch;
    int64_t w = b->c->world;
    int unit0 = group[0];

    for (int i = 0; i < ng; i++) {
        const struct zs_unit *u = &b->units[group[i]];
        /* the flat buffer holds Σ partition_numel x world (padded) */
        int64_t bpe =
            u->params ? (u->gather_bytes + u->params - 1) / u->params : 2;
        full += u->part_elems * w * bpe;
        part_bytes += u->part_elems * bpe;
        tensors += u->n_tensors;
        fetched += s->uc[group[i]].fetched;
    }
    if (s->pnvme)
        pnvme_swap_in(s, group, ng);
    /* all_gather_coalesced on the host: the flat buffer, the copies into
     * this rank's slice, the collective's launch and the handle's copy-out
     * at the first wait, counted in calls (hooks.c) */
    launch =
        zs_t_delay(b, b->q_host,
                   zs_ds_calls_ns(b, zs_ds3_gather_calls(&b->c->ds_version,
                                                          fetched, (int)w)),
                   ZS_CLS_HOST, "launch all-gather", unit0, b->last_host, -1);
    flat = zs_t_alloc(b, b->q_ag, b->p_gpu, full, 0, "all-gather flat buffer",
                      unit0, launch);
    t = flat;
    if (s->off_param) {
        int32_t tmp = zs_t_alloc(b, b->q_ag, b->p_gpu, part_bytes, 0,
                                 "H2D partition copies", unit0, t);
        /* the trainable params' partitions live in the always-pinned flat
         * buffer (param_groups_fp16_flat_cpu_memory); frozen ones are pinned
         * iff offload_param.pin_memory (§2 Host) */
        bool pinned = b->mo.method == ZS_METHOD_FULL ? true : b->c->pin_param;
        /* partitions swapped in from NVMe are copied from the page-locked
         * swap buffers (new_cpu_locked_tensor,
         * partitioned_param_swapper.py:131) */
        bool all_nv = s->pnvme;
        for (int i = 0; i < ng && all_nv; i++)
            all_nv = s->pn[group[i]] >= b->units[group[i]].part_elems;
        pinned = pinned || all_nv;
        int32_t h2d =
            zs_t_pcie(b, b->q_ag, 0, (double)part_bytes, pinned,
                      "H2D param partitions (blocking)", unit0, tmp, -1);
        /* .to(device) blocks the host until the all-gather stream drains */
        zs_t_mark(b, b->q_host, "host waits H2D", h2d, b->last_host, -1);
        t = zs_t_gpu_mem(b, b->q_ag, (double)part_bytes * 2, ZS_CLS_COPY,
                         "cat into flat buffer", unit0, h2d, -1);
        t = zs_t_free(b, b->q_ag, tmp, t);
    }
    t = zs_t_coll(b, b->q_ag, ZS_COLL_ALLGATHER, (double)full,
                  "all-gather params", unit0, t, b->last_host);
    if (tensors > 1) {
        /* AllGatherCoalescedHandle.wait: a new full tensor per param */
        for (int i = 0; i < ng; i++) {
            const struct zs_unit *u = &b->units[group[i]];
            b->galloc[group[i]] =
                zs_t_alloc(b, b->q_ag, b->p_gpu, u->gather_bytes, 0,
                           "gathered params", group[i], t);
        }
        t = zs_t_gpu_mem(b, b->q_ag, (double)full * 2, ZS_CLS_COPY,
                         "copy-out of params", unit0, t, -1);
        t = zs_t_free(b, b->q_ag, flat, t);
    } else {
        b->galloc[group[0]] = flat;
    }
    for (int i = 0; i < ng; i++) {
        b->ready[group[i]] = t;
        b->avail[group[i]] = true;
        b->n_avail += b->units[group[i]].params;
        s->pending[group[i]] = true;
    }
}

/* The hook calls not yet emitted: DeepSpeed releases a module's params in
 * its post-forward (post-backward) hook and waits for the next module's in
 * its pre-forward hook, both before that hook's event synchronisation. */
static void host_pending(struct ds *s)
{
    if (s->host_pending_ns > 0)
        zs_t_delay(s->b, s->b->q_host, s->host_pending_ns, ZS_CLS_HOST,
                   "release and wait for params", -1, s->b->last_host, -1);
    s->host_pending_ns = 0;
}

/* The fetch events' back-pressure.  DeepSpeed records one event per tensor
 * waited for, inside `with stream(allgather_stream)`, so on the all-gather
 * stream, and with more than __max_ongoing_fetch_events = 2 outstanding
 * synchronizes the oldest (partitioned_param_coordinator.py v0.6.5:265-277,
 * v0.12.3:297-308, 0.19.6:400-411); nothing else in the forward holds the
 * host back from the compute stream but the CUDA launch queue.  There the
 * caching allocator counts a released parameter as freed when the host
 * frees it (record_stream defers only the block's reuse), whereas zsim's
 * pools free it when the compute stream passes the free, so a host running
 * far ahead would show every released gather as allocated.  zsim therefore
 * keeps its earlier rule, an event on the compute stream once the unit's
 * parameters are ready and at most two outstanding, which holds the host
 * within about two units of the compute stream [engine limit: no host-time
 * frees; docs/kernels.md]. */
static void fetch_event(struct ds *s, int u)
{
    struct zs_bctx *b = s->b;
    int32_t ev = zs_t_mark(b, b->q_comp, "fetch event", b->ready[u], -1, -1);
    if (s->nfev >= 2)
        zs_t_mark(b, b->q_host, "host waits oldest fetch event", s->fev[0],
                  b->last_host, -1);
    s->fev[0] = s->fev[1];
    s->fev[1] = ev;
    s->nfev++;
}

/* The prefetch that ends every fetch_sub_module call once the trace is
 * COMPLETE (partitioned_param_coordinator.py v0.12.3:317-383, the same in
 * v0.6.5 and 0.19.6): the parameters next in the trace that are not
 * available, from the front of the queue (trace position `from`), until
 * their elements reach min(max_live_parameters - available,
 * prefetch_bucket_size), in one coalesced all-gather.  Every hooked
 * module's pre-forward and pre-backward hook calls fetch_sub_module, the
 * parameterless and persistent ones too, so each of them advances the
 * prefetch by up to a bucket: the gathers run ahead of the compute until
 * max_live_parameters elements are available or in flight.  A parameter
 * still on NVMe stops the prefetch ("break here to preserve fetch order",
 * _is_currently_on_nvme).  inflight: the elements the caller's own fetch
 * just gathered (the NVMe read-ahead's measure). */
static void prefetch(struct ds *s, int from, int64_t inflight)
{
    struct zs_bctx *b = s->b;
    int *group = s->group;
    int ng = 0;
    int64_t budget, sum = 0;

    if (s->record || !s->zero3)
        return;
    budget = b->c->max_live_parameters - b->n_avail;
    if (budget > b->c->prefetch_bucket_size)
        budget = b->c->prefetch_bucket_size;
    /* the group holds distinct units (chosen de-duplicates): ng <= nunits */
    for (int q = from; q < s->ntrace && sum < budget; q++) {
        int v = s->trace[q].unit;
        if (b->avail[v] || s->chosen[v])
            continue;
        if (s->pnvme && s->pn[v] > 0 && s->pslot[v] == 0)
            break;
        assert(ng < b->nunits);
        s->chosen[v] = true;
        group[ng++] = v;
        sum += b->units[v].params;
    }
    for (int i = 0; i < ng; i++)
        s->chosen[group[i]] = false;
    if (ng)
        gather(s, group, ng);
    if (s->pnvme)
        pnvme_prefetch(s, from - 1, inflight + sum);
}

static void fetch(struct ds *s, int pos)
{
    struct zs_bctx *b = s->b;
    int u = s->trace[pos].unit;
    int64_t inflight = 0;

    if (!b->avail[u]) {
        gather(s, &u, 1);
        inflight += b->units[u].params;
    }
    /* the wait loop: per tensor in flight the stream context, the handle's
     * wait and a fetch event (hooks.c); a unit kept gathered since its
     * last use is not in the in-flight registry and is not waited for */
    if (s->pending[u]) {
        s->host_pending_ns += zs_ds_calls_ns(
            b, zs_ds3_wait_calls(&b->c->ds_version, s->uc[u].fetched));
        s->pending[u] = false;
    }
    host_pending(s);
    fetch_event(s, u);
    prefetch(s, pos + 1, inflight);
}

/* The prefetch steps of unit u's other hooked modules (its containers, its
 * LoRA modules; all of them when u itself is not fetched): each calls
 * fetch_sub_module with no parameter to gather, and ends in a prefetch. */
static void prefetch_more(struct ds *s, int u, bool fetched)
{
    if (!s->zero3 || s->record)
        return;
    for (int i = fetched ? 1 : 0; i < s->uc[u].modules; i++)
        prefetch(s, s->cursor, 0);
}

static void release(struct ds *s, int pos, int32_t after)
{
    struct zs_bctx *b = s->b;
    int u = s->trace[pos].unit;
    int q = s->next_pos[pos];
    /* kept if used again within max_reuse_distance elements of trace */
    if (q >= 0 && s->prefix[q] - s->prefix[pos + 1] < b->c->max_reuse_distance)
        return;
    if (!b->avail[u])
        return;
    s->host_pending_ns += zs_ds_calls_ns(
        b, zs_ds3_release_calls(&b->c->ds_version, s->uc[u].fetched));
    zs_t_free(b, b->q_comp, b->galloc[u], after);
    b->galloc[u] = -1;
    b->ready[u] = -1;
    b->avail[u] = false;
    b->n_avail -= b->units[u].params;
    pnvme_release(s, u);
}

static void release_all(struct ds *s)
{
    struct zs_bctx *b = s->b;
    for (int u = 0; u < b->nunits; u++) {
        if (b->avail[u] && !b->units[u].persistent) {
            zs_t_free(b, b->q_comp, b->galloc[u], b->ready[u]);
            b->galloc[u] = -1;
            b->ready[u] = -1;
            b->avail[u] = false;
            s->pending[u] = false;
            pnvme_release(s, u);
        }
    }
    b->n_avail = 0;
    s->nfev = 0;
}

/* ---- NVMe optimizer offload (docs/nvme.md) ---------------------------------
 *
 * DeepSpeed 0.19.6 (edaa7221), with offload_optimizer.device nvme, stage3.py
 * swaps every sub-group of at least max(1 MiB, aio block_size) bytes
 * (_swappable_optimizer_subgroup, stage3.py:1214-1219; optimizer_utils.py:
 * 180, 210-215):
 *  - at the accumulation boundary the fp32 gradients of each sub-group go to
 *    its swap files (_offload_grad_partition_at_boundary,
 *    _swap_out_offload_fp32_gradients, stage3.py:1393-1415): 4 B/element
 *    written, through the pinned swap buffers;
 *  - step(), per sub-group (stage3.py step loop: _prepare_sub_group,
 *    unscale_and_clip_grads, _optimizer_step,
 *    _reassign_or_swap_out_partitioned_parameters, _release_sub_group):
 *    swap_in_optimizer_state first waits for the gradient swapper
 *    (_flush_gradient_swapper), then reads the fp32 param, exp_avg and
 *    exp_avg_sq (swap_info.num_tensors()) and the gradient into
 *    num_tensors + 1 swap buffers and waits (partitioned_optimizer_swapper.py
 *    :72-98, 164-190); CPU Adam; swap_out_optimizer_state writes param,
 *    exp_avg, exp_avg_sq back and waits (partitioned_optimizer_swapper.py
 *    :100-118).  At the first step Adam's states do not exist yet (torch
 *    creates them lazily, stage3.py:1260-1261), so only param + gradient are
 *    read (8 B/element) and the new states are written from pageable memory
 *    through the swap buffers (12 B/element);
 *  - pipeline_read / pipeline_write (PipelinedOptimizerSwapper,
 *    pipelined_optimizer_swapper.py:102-152): after the wait for sub-group
 *    i's read, the read of i+1 is issued on the read handle; a swap-out
 *    whose next sub-group exists is left in flight and completed before the
 *    next swap-out starts.  Each in-flight read or write holds 4 swap
 *    buffers ("ran out of swap buffers, try increasing 'buffer_count'",
 *    :215-216).
 * So per step and element, steady: 16 B read, 12 + 4 B written.  Under bf16
 * master weights + states every one of them is in bf16 (the swapper is built
 * with dtype=master_weights_and_grads_dtype, stage3.py :794-805; the
 * gradients are grad_buffer.to(that dtype), :1403): 8 B read, 6 + 2 B
 * written (mb, sb). */

static void nvme_swap_grads(struct ds *s, int64_t part, int32_t after)
{
    s->grad_swap = zs_t_nvme(s->b, true, (double)part * s->mb,
                             s->mb == 4 ? "swap-out fp32 grads (NVMe)"
                                        : "swap-out bf16 grads (NVMe)",
                             after, -1);
}

/* param and gradient, and from the second step Adam's two states */
static double nvme_read_bytes(const struct ds *s, bool first, int64_t e)
{
    return (2.0 * s->mb + (first ? 0.0 : 2.0 * s->sb)) * (double)e;
}

/* _prepare_sub_group: the host waits for sub-group i's state and gradient in
 * the swap buffers, then (pipeline_read) starts reading i+1's. */
static void nvme_swap_in(struct ds *s, bool first, int64_t i, int64_t e,
                         int64_t e_next)
{
    struct zs_bctx *b = s->b;
    int32_t rd;
    if (i == 0 && s->grad_swap >= 0)
        zs_t_mark(b, b->q_host, "host waits gradient swap-out", s->grad_swap,
                  b->last_host, -1);
    if (i == 0) /* waited for: the next boundary swaps out anew */
        s->grad_swap = -1;
    rd = s->next_in >= 0
             ? s->next_in
             : zs_t_nvme(b, false, nvme_read_bytes(s, first, e),
                         "swap-in optimizer state + grads (NVMe)",
                         b->last_host, -1);
    zs_t_mark(b, b->q_host, "host waits swap-in", rd, b->last_host, -1);
    s->next_in = -1;
    if (b->c->pipeline_read && e_next > 0)
        s->next_in = zs_t_nvme(b, false, nvme_read_bytes(s, first, e_next),
                               "swap-in next sub-group (async, NVMe)",
                               b->last_host, -1);
}

/* _release_sub_group: the previous async swap-out completes, this one is
 * written and waited for unless pipeline_write and a next sub-group
 * exists. */
static void nvme_swap_out(struct ds *s, int64_t e, bool last)
{
    struct zs_bctx *b = s->b;
    int32_t w;
    if (s->async_out >= 0)
        zs_t_mark(b, b->q_host, "host waits previous swap-out", s->async_out,
                  b->last_host, -1);
    s->async_out = -1;
    w = zs_t_nvme(b, true, (double)(s->mb + 2 * s->sb) * (double)e,
                  "swap-out optimizer state (NVMe)", b->last_host, -1);
    if (b->c->pipeline_write && !last)
        s->async_out = w;
    else
        zs_t_mark(b, b->q_host, "host waits swap-out", w, b->last_host, -1);
}

/* ---- gradients ------------------------------------------------------------
 */

/* A blocking copy_ from a GPU tensor into a CPU tensor of another dtype:
 * PyTorch's copy_kernel_cuda (aten/src/ATen/native/cuda/Copy.cu,
 * copy_requires_temporaries branch: "For blocking transfers conversions are
 * performed on CPU") allocates a CPU temporary of the source dtype
 * (at::empty_like, pageable: never a pinned buffer), copies D2H into it and
 * converts on the CPU into the destination, all on the calling host thread.
 * Host cost per element: the temporary's first-touch faults
 * (ZS_FRESH_BYTE_EQ per byte) and the 16 <-> 32-bit conversion
 * (ZS_CAST_BYTES_EQ), at torch's per-thread op rate.  src_b: the source's
 * bytes per element; names: the temporary, the D2H, the host's wait, the
 * first touch, the conversion.  Returns the D2H. */
struct cpu_cast_names {
    const char *tmp, *d2h, *wait, *touch, *cast;
};

static int32_t d2h_converted_on_cpu(struct ds *s, int q, int64_t elems,
                                    int src_b,
                                    const struct cpu_cast_names *nm,
                                    int32_t t)
{
    struct zs_bctx *b = s->b;
    double rate = b->node->torch_op_bytes_per_s_per_thread;
    int32_t tmp = zs_t_alloc(b, b->q_host, b->p_host, elems * src_b, 0,
                             nm->tmp, -1, b->last_host);
    t = zs_t_pcie(b, q, 1, (double)elems * src_b, false, nm->d2h, -1, t, tmp);
    zs_t_mark(b, b->q_host, nm->wait, t, b->last_host, -1);
    /* the driver's staged pageable D2H writes the fresh temporary from the
     * calling thread: its first-touch faults run on one thread whatever
     * OMP_NUM_THREADS is [assumption: the staging copy is not threaded] */
    zs_t_cpu(b, (double)elems * src_b * ZS_FRESH_BYTE_EQ,
             rate / (b->cpu_threads_eff > 0 ? b->cpu_threads_eff : 1),
             ZS_CLS_HOST, nm->touch, b->last_host);
    /* the conversion is a TensorIterator copy on the intra-op threads */
    zs_t_cpu(b, (double)elems * ZS_CAST_BYTES_EQ, rate, ZS_CLS_HOST, nm->cast,
             b->last_host);
    zs_t_free(b, b->q_host, tmp, b->last_host);
    return t;
}

/* ZeRO-3's fp32 gradient copy at the accumulation boundary before DeepSpeed
 * 0.15.4: stage3.py __partition_grads (v0.6.5 ... v0.14.0)
 * "fp32_grad_tensor.copy_(grad_buffer)", a blocking copy of the 16-bit GPU
 * partition into the fp32 CPU gradient, converted on the CPU
 * (d2h_converted_on_cpu) inside the backward hook.  PR #6670 (v0.15.4)
 * replaced it with a GPU upcast into a pinned buffer, PR #6962 measured the
 * old path at 25603 ms of backward for a 3B model against 309 ms (mechanism
 * only: that setup's rates are not stated). */
static int32_t fp32_grads_cpu_cast(struct ds *s, int64_t part, int32_t t)
{
    static const struct cpu_cast_names nm = {
        "16-bit grad temporary (CPU copy_)", "D2H grads into CPU temporary",
        "host waits grad D2H", "first touch of the grad temporary",
        "16 -> 32-bit grads (CPU)"};
    return d2h_converted_on_cpu(s, s->q_red, part, 2, &nm, t);
}

/* ZeRO-3's fp32 gradient copy at the accumulation boundary from DeepSpeed
 * 0.15.4 to 0.16.2: PR #6670 (v0.15.4, commit ff1c543) added an always-
 * pinned fp32 staging buffer of the largest trainable parameter's partition
 * (stage3.py v0.15.4:547-549, `pinned_grad_buffer`, allocated whenever the
 * optimizer is offloaded) and copies through it in __partition_grads
 * (v0.15.4:1506-1511): `pinned_grad_buffer[:n].copy_(grad_buffer.to(
 * float32, non_blocking=True))` (a GPU upcast and a pinned D2H on the
 * current stream), `get_accelerator().synchronize()` (the host waits for
 * the whole device), then `fp32_grad_tensor.copy_(pinned_grad_buffer[:n])`,
 * a CPU fp32 -> fp32 copy on the intra-op threads.  PR #6962 (v0.16.3,
 * commit c17dc33) replaced it with fp32_grads_gpu_cast's path.  The CPU
 * copy streams 4 B read + 4 B written per element at torch's per-thread op
 * rate (the rate is `grad.mul_`'s, also 8 B per element: validation/host). */
static int32_t fp32_grads_pinned_buffer(struct ds *s, int64_t part, int32_t t)
{
    struct zs_bctx *b = s->b;
    int32_t f32 = zs_t_alloc(b, s->q_red, b->p_gpu, part * 4, 0,
                             "fp32 grad upcast", -1, t);
    t = zs_t_gpu_mem(b, s->q_red, (double)part * 6, ZS_CLS_COPY,
                     "upcast grads", -1, f32, -1);
    t = zs_t_pcie(b, s->q_red, 1, (double)part * 4, true,
                  "D2H fp32 grads into pinned buffer", -1, t, -1);
    t = zs_t_free(b, s->q_red, f32, t);
    zs_t_drain(b, "torch.cuda.synchronize (pinned grad buffer)");
    zs_t_cpu(b, (double)part * 8, b->node->torch_op_bytes_per_s_per_thread,
             ZS_CLS_HOST, "pinned buffer -> fp32 grads (CPU copy)",
             b->last_host);
    return t;
}

/* The fp32 gradient copy at the accumulation boundary of ZeRO-3 from
 * DeepSpeed 0.16.3 (PR #6962, explicit upcast) and of ZeRO-3 with NVMe
 * swap (grad_buffer.float()): an fp32 upcast on the GPU and a 4 B D2H (to
 * NVMe through the swapper with optimizer NVMe offload); ZeRO-1/2's is in
 * partition_grads_z12_offload. */
static int32_t fp32_grads_gpu_cast(struct ds *s, int64_t part, int32_t t,
                                   bool pin)
{
    struct zs_bctx *b = s->b;
    bool f32b = s->mb == 4;
    int32_t f32 = -1;
    /* bf16 master weights (0.18.3+): `fp32_grad_tensor.copy_(
     * grad_buffer.to(dtype=master_weights_and_grads_dtype))`
     * (_offload_grad_partition_at_boundary, stage3.py :1406-1407 at
     * edaa722): .to(bf16) of the bf16 partition is the partition itself, so
     * nothing is upcast and 2 B per element cross PCIe into the host's bf16
     * gradient */
    if (f32b) {
        f32 = zs_t_alloc(b, s->q_red, b->p_gpu, part * 4, 0,
                         "fp32 grad upcast", -1, t);
        t = zs_t_gpu_mem(b, s->q_red, (double)part * 6, ZS_CLS_COPY,
                         "upcast grads", -1, f32, -1);
    }
    t = zs_t_pcie(b, s->q_red, 1, (double)part * s->mb, pin || s->nvme,
                  f32b ? "D2H fp32 grads" : "D2H bf16 grads (master dtype)",
                  -1, t, -1);
    if (s->nvme)
        nvme_swap_grads(s, part, t);
    /* v0.16: .copy_(non_blocking=False) blocks the host inside the
     * backward hook; from 0.19.5 non_blocking=True (PR #8207) */
    if (!zs_ds_at_least(&b->c->ds_version, 0, 19, 5))
        zs_t_mark(b, b->q_host,
                  f32b ? "host waits fp32 grad D2H" : "host waits grad D2H", t,
                  b->last_host, -1);
    return f32b ? zs_t_free(b, s->q_red, f32, t) : t;
}

/* The largest trained tensor's elements, as a unit's trainable elements
 * (weight and bias together, so at most a bias above the largest tensor). */
static int64_t largest_trained_whole(const struct zs_bctx *b)
{
    int64_t big = 0;
    for (int u = 0; u < b->nunits; u++)
        if (b->units[u].trainable > big)
            big = b->units[u].trainable;
    return big;
}

/* The same, ZeRO-3's partition of it, at most the rank's trainable
 * partition: the largest gradient slice a rank holds. */
static int64_t largest_trained(const struct ds *s)
{
    const struct zs_bctx *b = s->b;
    int64_t big = largest_trained_whole(b),
            W = b->c->world > 0 ? b->c->world : 1;
    if (s->zero3)
        big = (big + W - 1) / W;
    return big < b->T ? big : b->T;
}

/* A memory-bound GPU pass of `bytes` on queue q after task t through a
 * transient of `live` bytes, freed when the pass ends; returns the free. */
static int32_t pass_through(struct zs_bctx *b, int q, int64_t live,
                            const char *live_name, double bytes,
                            const char *name, int32_t t)
{
    int32_t tmp = zs_t_alloc(b, q, b->p_gpu, live, 0, live_name, -1, t);
    t = zs_t_gpu_mem(b, q, bytes, ZS_CLS_COPY, name, -1, tmp, -1);
    return zs_t_free(b, q, tmp, t);
}

/* DeepSpeed's fp64 gradient norms (grad_norm_gpu, _constant_buffered_norm2,
 * set_norm_for_param_grad_in_gpu): x.double() (2 B read, 8 B written into
 * a new fp64 tensor) and its norm (8 B read), 18 B per element over
 * `elems`, `live` elements' fp64 copy live at a time. */
static int32_t fp64_norm(struct zs_bctx *b, int q, int64_t elems, int64_t live,
                         const char *live_name, const char *name, int32_t t)
{
    return pass_through(b, q, live * 8, live_name, (double)elems * 18, name,
                        t);
}

/* ZeRO-1/2 with the optimizer offloaded: copy_grads_in_partition's
 * cpu_offload branch (stage_1_and_2.py :1650-1667 at edaa722), per
 * parameter of this rank's partition [approximation: the partition's
 * elements as one; the per-parameter temporaries at the largest trained
 * tensor]:
 * - async_accumulate_grad_in_cpu_via_gpu (:1516-1559) unless the step has
 *   one micro-step (edaa722: micro_step_id > 0 or not the boundary, PR
 *   #8225, v0.19.5; before: gradient_accumulation_steps > 1): after the
 *   first micro-step the CPU accumulation comes back, H2D into
 *   temp_grad_buffer_for_gpu_offload (2 B), and is added in (6 B); then the
 *   grads go D2H (2 B) into accumulated_grads_in_cpu, at every micro-step
 *   from v0.15.2 (PR #6550, c85c870), before it at all but the boundary
 *   (v0.12.3 :1096-1143);
 * - at the boundary set_norm_for_param_grad_in_gpu (:1575-1588: .double()
 *   and its norm, 18 B, one tensor's fp64 copy live),
 *   update_offload_overflow_tracker_for_param_grad (:1498-1504: in bf16
 *   too, _has_inf_or_nan :2486-2491: .float(), isnan, isinf, logical_or,
 *   .float(), max, 28 B, an fp32 copy live, and `if` on the result: the
 *   host waits for the device, once per parameter [approximation: once
 *   per bucket]) and async_inplace_copy_grad_to_fp32_buffer_from_gpu
 *   (:1590-1604: .to(fp32) into a new tensor, 6 B, and a non-blocking 4 B
 *   D2H into the fp32 gradient), the same in v0.12.3 (:1234-1246). */
static int32_t partition_grads_z12_offload(struct ds *s, int64_t part,
                                           int32_t t)
{
    struct zs_bctx *b = s->b;
    const struct zs_ds_version *v = &b->c->ds_version;
    bool pin = b->c->pin_optimizer, lone = s->first_micro && s->boundary;
    int64_t big = largest_trained(s), W = b->c->world > 0 ? b->c->world : 1;
    /* this rank's tensors of the bucket [approximation: one in world] and
     * their calls (hooks.c zs_ds2_offload_tensor_calls) */
    int64_t own = (s->fill_tensors + W - 1) / W;
    if (big > part)
        big = part;
    if (!lone) {
        zs_t_delay(b, b->q_host,
                   zs_ds_calls_ns(b, own * zs_ds2_offload_tensor_calls(
                                               true, false)),
                   ZS_CLS_HOST, "CPU accumulation calls", -1, b->last_host,
                   -1);
        if (!s->first_micro) {
            t = zs_t_pcie(b, s->q_red, 0, (double)part * 2, pin,
                          "H2D accumulated grads", -1, t, b->last_host);
            t = zs_t_gpu_mem(b, s->q_red, (double)part * 6, ZS_CLS_COPY,
                             "accumulate grads", -1, t, -1);
        }
        if (!s->boundary || zs_ds_at_least(v, 0, 15, 2))
            t = zs_t_pcie(b, s->q_red, 1, (double)part * 2, pin,
                          "D2H accumulated grads", -1, t, b->last_host);
    }
    if (s->boundary) {
        int32_t tmp;
        t = fp64_norm(b, s->q_red, part, big,
                      "grad norm (fp64 copy of a tensor)",
                      "grad norm (per tensor, fp64)", t);
        t = pass_through(b, s->q_red, big * 4,
                         "inf/nan check (fp32 copy of a tensor)",
                         (double)part * 28, "inf/nan check (_has_inf_or_nan)",
                         t);
        zs_t_mark(b, b->q_host, "host waits inf/nan check", t, b->last_host,
                  -1);
        /* the boundary's calls, each tensor's after its check's read-back:
         * the device idles through them [approximation: the syncs as one] */
        zs_t_delay(b, b->q_host,
                   zs_ds_calls_ns(b, own * zs_ds2_offload_tensor_calls(
                                               false, true)),
                   ZS_CLS_HOST, "norm, check and fp32 copy calls", -1,
                   b->last_host, -1);
        if (s->mb == 2) {
            /* bf16 master weights: async_inplace_copy_grad_to_fp32_buffer_
             * from_gpu (stage_1_and_2.py :1590-1604 at edaa722) converts only
             * when the dtypes differ, so the bf16 slice goes D2H as it is */
            return zs_t_pcie(b, s->q_red, 1, (double)part * 2, pin,
                             "D2H bf16 grads (master dtype)", -1,
                             b->last_host, -1);
        }
        tmp = zs_t_alloc(b, s->q_red, b->p_gpu, big * 4, 0,
                         "fp32 grad upcast (a tensor)", -1, b->last_host);
        t = zs_t_gpu_mem(b, s->q_red, (double)part * 6, ZS_CLS_COPY,
                         "upcast grads", -1, tmp, -1);
        t = zs_t_pcie(b, s->q_red, 1, (double)part * 4, pin, "D2H fp32 grads",
                      -1, t, -1);
        t = zs_t_free(b, s->q_red, tmp, t);
    }
    return t;
}

/* Twin-Flow: how many of the next `part` partition elements reduced in
 * this backward (the partition filled from its end, backward order) belong
 * to the sub-groups stepped on the GPU [simplification: zsim's sub-groups
 * are sub_group_size-element slices of the partition; DeepSpeed's gather
 * whole parameters up to that size, _create_fp16_sub_groups]. */
static int64_t twin_gpu_elems(const struct ds *s, int64_t part)
{
    int64_t hi = s->b->T - s->red_part, lo = hi - part;
    if (!s->twin)
        return 0;
    if (lo < s->tw_lo)
        lo = s->tw_lo;
    if (hi > s->tw_hi)
        hi = s->tw_hi;
    return hi > lo ? hi - lo : 0;
}

/* Twin-Flow's GPU sub-groups at the accumulation boundary: their fp32
 * gradient is a GPU tensor (initialize_optimizer_states, stage3.py
 * :1287-1292 at edaa722), so _offload_grad_partition_at_boundary's
 * `fp32_grad_tensor.copy_(grad_buffer.to(dtype=float32), non_blocking=True)`
 * (:1406-1407) is an upcast into a new fp32 tensor (2 B read, 4 B written)
 * and a device copy (4 + 4 B).  Before 0.15.4 the copy_ took the 16-bit
 * buffer directly, one cast (6 B) (v0.12.3 __partition_grads :1393-1395);
 * from 0.15.4 to 0.16.2 every gradient went through the pinned staging
 * buffer (v0.15.4 :1507-1512: the upcast, a 4 B D2H into it,
 * get_accelerator().synchronize(), then `fp32_grad_tensor.copy_(pinned,
 * non_blocking=True)`, for a GPU sub-group a 4 B H2D). */
static int32_t fp32_grads_twin_gpu(struct ds *s, int64_t part, int32_t t)
{
    struct zs_bctx *b = s->b;
    const struct zs_ds_version *v = &b->c->ds_version;
    int32_t f32;
    /* bf16 master weights: copy_(grad_buffer.to(bf16)) of a bf16 tensor
     * into the bf16 GPU gradient (stage3.py :1406-1407 at edaa722) */
    if (s->mb == 2)
        return zs_t_gpu_mem(b, s->q_red, (double)part * 4, ZS_CLS_COPY,
                            "bf16 grads into the GPU sub-groups (Twin-Flow)",
                            -1, t, -1);
    if (!zs_ds_at_least(v, 0, 15, 4))
        return zs_t_gpu_mem(b, s->q_red, (double)part * 6, ZS_CLS_COPY,
                            "grads to fp32 (Twin-Flow GPU sub-groups)", -1, t,
                            -1);
    f32 = zs_t_alloc(b, s->q_red, b->p_gpu, part * 4, 0, "fp32 grad upcast",
                     -1, t);
    t = zs_t_gpu_mem(b, s->q_red, (double)part * 6, ZS_CLS_COPY,
                     "upcast grads", -1, f32, -1);
    if (zs_ds_at_least(v, 0, 16, 3)) {
        t = zs_t_gpu_mem(b, s->q_red, (double)part * 8, ZS_CLS_COPY,
                         "fp32 grads into the GPU sub-groups (Twin-Flow)", -1,
                         t, -1);
    } else {
        t = zs_t_pcie(b, s->q_red, 1, (double)part * 4, true,
                      "D2H fp32 grads into pinned buffer", -1, t, -1);
        zs_t_drain(b, "torch.cuda.synchronize (pinned grad buffer)");
        t = zs_t_pcie(b, s->q_red, 0, (double)part * 4, true,
                      "H2D fp32 grads into the GPU sub-groups (Twin-Flow)", -1,
                      t, b->last_host);
    }
    return zs_t_free(b, s->q_red, f32, t);
}

/* The rank's reduced partition of a flushed bucket (part elements, after
 * task t): with the optimizer offloaded the CPU accumulation round trip and,
 * at the boundary, the norm and the fp32 copy (ZeRO-3 here, ZeRO-1/2 in
 * partition_grads_z12_offload); else the accumulation into the GPU
 * partition.  Returns the last task. */
static int32_t partition_grads(struct ds *s, int64_t part, int32_t t)
{
    struct zs_bctx *b = s->b;
    if (s->off_opt && !s->zero3)
        return partition_grads_z12_offload(s, part, t);
    if (s->off_opt) {
        bool pin = b->c->pin_optimizer;
        int32_t g = zs_t_alloc(b, s->q_red, b->p_gpu, part * 2, 0,
                               "grad partition (GPU copy)", -1, t);
        if (s->first_micro) {
            t = zs_t_pcie(b, s->q_red, 1, (double)part * 2, pin,
                          "D2H grad partition", -1, g, -1);
            t = zs_t_pcie(b, s->q_red, 0, (double)part * 2, pin,
                          "H2D grad partition back", -1, t, -1);
        } else {
            t = zs_t_pcie(b, s->q_red, 0, (double)part * 2, pin,
                          "H2D accumulated grads", -1, g, -1);
            t = zs_t_gpu_mem(b, s->q_red, (double)part * 6, ZS_CLS_COPY,
                             "accumulate grads", -1, t, -1);
            t = zs_t_pcie(b, s->q_red, 1, (double)part * 2, pin,
                          "D2H accumulated grads", -1, t, -1);
        }
        if (s->boundary) {
            /* _constant_buffered_norm2 (stage3.py :1842-1849 at edaa722):
             * per chunk of <= 250M elements, one chunk's fp64 copy live */
            int64_t chunk = part < 250000000 ? part : 250000000;
            t = fp64_norm(b, s->q_red, part, chunk, "grad norm (fp64 chunk)",
                          "grad norm", t);
            /* Twin-Flow: the GPU sub-groups' part stays on the device */
            int64_t gpu = twin_gpu_elems(s, part), cpu = part - gpu;
            if (gpu > 0)
                t = fp32_grads_twin_gpu(s, gpu, t);
            if (cpu > 0 && !s->nvme &&
                !zs_ds_at_least(&b->c->ds_version, 0, 15, 4))
                t = fp32_grads_cpu_cast(s, cpu, t);
            else if (cpu > 0 && !s->nvme &&
                     !zs_ds_at_least(&b->c->ds_version, 0, 16, 3))
                t = fp32_grads_pinned_buffer(s, cpu, t);
            else if (cpu > 0)
                t = fp32_grads_gpu_cast(s, cpu, t, pin);
        }
        return zs_t_free(b, s->q_red, g, t);
    }
    return zs_t_gpu_mem(b, s->q_red, (double)part * 6, ZS_CLS_COPY,
                        "accumulate grad partition", -1, t, -1);
}

/* ZeRO-3's bucket flush (stage3.py __reduce_and_partition_ipg_grads): the
 * interleaving copy and pre-divide into a transient buffer, one
 * reduce-scatter, the partition. */
static void flush_z3(struct ds *s)
{
    struct zs_bctx *b = s->b;
    int64_t fill = s->fill, part = (s->fill + b->c->world - 1) / b->c->world;
    int32_t inter, t;
    /* back-pressure: more than 2 reduce events -> sync the oldest
     * (max_param_reduce_events = 2, mechanics §0) */
    if (s->flush_ring[0] >= 0)
        zs_t_mark(b, b->q_host, "host waits reduce event", s->flush_ring[0],
                  b->last_host, -1);
    /* the flush on the host: the interleaving, the collective's launch and
     * the per-tensor partition bookkeeping, counted in calls (hooks.c) */
    zs_t_delay(b, b->q_host,
               zs_ds_calls_ns(b, zs_ds3_flush_calls(
                                      &b->c->ds_version, s->fill_tensors,
                                      (int)b->c->world, s->off_opt,
                                      s->boundary)),
               ZS_CLS_HOST, "flush gradient bucket", -1, b->last_host, -1);
    inter = zs_t_alloc(b, s->q_red, b->p_gpu, fill * 2, 0,
                       "reduce-scatter interleave buffer", -1, b->last_host);
    t = zs_t_gpu_mem(b, s->q_red, (double)fill * 4, ZS_CLS_COPY,
                     "interleave + pre-divide", -1, inter, -1);
    t = zs_t_coll(b, s->q_red, ZS_COLL_REDUCESCATTER, (double)fill * 2,
                  "reduce-scatter grads", -1, t, -1);
    t = partition_grads(s, part, t);
    s->red_part += part;
    t = zs_t_free(b, s->q_red, inter, t);
    s->flush_ring[0] = s->flush_ring[1];
    s->flush_ring[1] = t;
    s->last_rs = t;
}

/* ZeRO-1/2's bucket flush: stage_1_and_2.py reduce_ipg_grads ->
 * average_tensor with reduce_scatter True (the default), read at edaa722
 * (0.19.6) and at the releases named:
 * - the stream (q_red): reduction_stream with overlap_comm, else the
 *   current stream, in every release;
 * - with overlap_comm, average_tensor began with torch.cuda.synchronize()
 *   until PR #2500 (97deaae, v0.8.0) made the reduction stream wait for
 *   the current one; from PR #5606 (a41729f, v0.14.3) the current stream
 *   also waits for the reduction stream, so the backward's next kernels
 *   wait for the bucket reduced before;
 * - tensor.div_ by the world size, in place on the bucket;
 * - from PR #4695 (2afa1c7, v0.12.4; use_multi_rank_bucket_allreduce True
 *   by default) every rank's slices go to one all-reduce of a flat copy
 *   (allreduce_and_scatter -> allreduce_bucket: self.flatten, then
 *   dist.all_reduce) and this rank's slices are copied back
 *   (allreduce_and_copy_with_multiple_ranks, buf.copy_(synced)).  Before
 *   it allreduce_no_retain runs, for each rank whose partition the bucket
 *   spans, a flat copy of that rank's slices and a dist.reduce to it
 *   (allreduce_bucket with rank=dst), after get_accelerator().synchronize()
 *   when overlap_comm (allreduce_and_copy: v0.9.0 :1354, v0.12.3 :1432);
 *   the destination copies back.  The bucket's elements are split evenly
 *   among the ranks it spans [approximation: the slices' exact sizes
 *   follow the partition boundaries];
 * then reduce_ipg_grads puts this rank's slices into its partition on the
 * same stream (partition_grads).  The host work, counted in calls
 * (hooks.c zs_ds2_flush_calls), comes first. */
static void flush_z12(struct ds *s)
{
    struct zs_bctx *b = s->b;
    const struct zs_ds_version *v = &b->c->ds_version;
    int64_t fill = s->fill, W = b->c->world, part = (fill + W - 1) / W;
    bool ov = b->c->overlap_comm_on;
    int q = s->q_red;
    int32_t t = -1;
    /* the ranks whose partitions (T elements each, in forward order) the
     * bucket spans; backward fills buckets from the end */
    int64_t pp = b->T > 0 ? b->T : 1, hi = pp * W - s->red_off,
            lo = hi - fill > 0 ? hi - fill : 0;
    int64_t k = (hi - 1) / pp >= lo / pp ? (hi - 1) / pp - lo / pp + 1 : 1;
    /* the flush's host work, counted in calls (hooks.c) */
    zs_t_delay(b, b->q_host,
               zs_ds_calls_ns(b, zs_ds2_flush_calls(v, s->fill_tensors,
                                                     (int)k, (int)W, ov,
                                                     s->off_opt)),
               ZS_CLS_HOST, "flush gradient bucket", -1, b->last_host, -1);
    if (ov && !zs_ds_at_least(v, 0, 8, 0)) {
        zs_t_drain(b, "torch.cuda.synchronize (average_tensor)");
        t = b->last_host;
    } else if (ov) {
        /* reduction_stream.wait_stream(current_stream()) */
        t = zs_t_mark(b, b->q_comp, "reduction stream waits current stream",
                      -1, -1, -1);
        /* current_stream().wait_stream(reduction_stream) */
        if (zs_ds_at_least(v, 0, 14, 3))
            zs_t_mark(b, b->q_comp, "current stream waits reduction stream",
                      zs_t_mark(b, q, "reduction stream so far", -1, -1, -1),
                      -1, -1);
    }
    t = zs_t_gpu_mem(b, q, (double)fill * 4, ZS_CLS_COPY,
                     "divide bucket by world size", -1, t, b->last_host);
    if (zs_ds_at_least(v, 0, 12, 4)) {
        int32_t flat = zs_t_alloc(b, q, b->p_gpu, fill * 2, 0,
                                  "flattened bucket (allreduce_bucket)", -1,
                                  t);
        t = zs_t_gpu_mem(b, q, (double)fill * 4, ZS_CLS_COPY,
                         "flatten bucket", -1, flat, -1);
        t = zs_t_coll(b, q, ZS_COLL_ALLREDUCE, (double)fill * 2,
                      "all-reduce grads", -1, t, -1);
        t = zs_t_gpu_mem(b, q, (double)part * 4, ZS_CLS_COPY,
                         "copy this rank's slices back", -1, t, -1);
        t = zs_t_free(b, q, flat, t);
    } else {
        for (int64_t d = 0; d < k; d++) {
            int64_t m = fill / k + (d < fill % k);
            int32_t fl;
            if (ov) {
                zs_t_drain(b, "torch.cuda.synchronize (allreduce_and_copy)");
                t = zs_t_mark(b, q, "after synchronize", t, b->last_host,
                              -1);
            }
            fl = zs_t_alloc(b, q, b->p_gpu, m * 2, 0,
                            "flattened slices (allreduce_bucket)", -1, t);
            t = zs_t_gpu_mem(b, q, (double)m * 4, ZS_CLS_COPY,
                             "flatten slices", -1, fl, -1);
            t = zs_t_coll(b, q, ZS_COLL_REDUCE, (double)m * 2,
                          "reduce grads to their rank", -1, t, -1);
            t = zs_t_free(b, q, fl, t);
        }
        t = zs_t_gpu_mem(b, q, (double)part * 4, ZS_CLS_COPY,
                         "copy this rank's slices back", -1, t, -1);
    }
    s->last_rs = partition_grads(s, part, t);
    s->red_off += fill;
}

static void flush(struct ds *s)
{
    if (!s->fill)
        return;
    if (s->zero3)
        flush_z3(s);
    else
        flush_z12(s);
    /* the grads the flush reduced in place live until it is done */
    for (int i = 0; i < s->n_held; i++) {
        s->last_rs = zs_t_free(s->b, s->q_red, s->held_grads[i], s->last_rs);
        s->held_grads[i] = -1;
    }
    s->n_held = 0;
    s->fill = 0;
    s->fill_tensors = 0;
}

static void grad_ready(struct ds *s, int unit, int32_t grad_alloc, int32_t bwd)
{
    struct zs_bctx *b = s->b;
    int64_t n = b->units[unit].trainable;
    int32_t t;
    int q;
    if (n <= 0)
        return;
    if (s->fill > 0 && s->fill + n > b->c->reduce_bucket_size)
        flush(s);
    q = s->zero3 ? s->q_red : b->q_comp;
    if (b->c->contiguous_gradients && n <= b->c->reduce_bucket_size) {
        /* ZeRO-3 __add_grad_to_ipg_bucket: the reduce stream waits for
         * the default stream and copies the grad into the bucket; ZeRO-1/2
         * (reduce_independent_p_g_buckets_and_remove_grads) copies on the
         * current stream; the original grad is freed */
        t = zs_t_gpu_mem(b, q, (double)n * 4, ZS_CLS_COPY,
                         "copy grad into IPG bucket", unit, bwd, -1);
        t = zs_t_free(b, q, grad_alloc, t);
    } else {
        /* Without contiguous_gradients, or a grad larger than the bucket,
         * nothing is copied: the flush reduces the grad where autograd
         * left it.  ZeRO-3 copies only when "bucket.elements +
         * param.grad.numel() <= self.reduce_bucket_size" (stage3.py
         * __add_grad_to_ipg_bucket :1548 at edaa722; the bucket was
         * flushed first when it would overflow, :1533) and reduces the
         * list of grads (__avg_scatter_grads, :1599-1600, the path with
         * reduce_scatter on); ZeRO-1/2 keeps a grad above
         * reduce_bucket_size as extra_large_param_to_reduce and
         * average_tensor()s it in place (stage_1_and_2.py :1227, :1699-1713
         * at edaa722).  zsim's unit stands for its tensors (weight and
         * bias) [approximation].  The grad is freed after the flush. */
        t = zs_t_mark(b, q, "grad reduced in place (not copied)", bwd, -1,
                      -1);
        assert(s->n_held < b->nunits); /* one grad per unit per backward */
        s->held_grads[s->n_held++] = grad_alloc;
    }
    if (s->zero3)
        s->last_rs = t;
    s->fill += n;
    s->fill_tensors += s->uc[unit].trained;
    /* no flush here: the next grad flushes a bucket it would overflow, the
     * epilogue the last one (stage3.py :1533, stage_1_and_2.py
     * reduce_independent_p_g_buckets_and_remove_grads at edaa722), so a
     * full bucket or a held grad waits for the next grad's hook */
}

/* ---- one unit -------------------------------------------------------------
 */

/* The host runs the unit's hooks (hooks.c: ZeRO-3 module hooks in every
 * pass, ZeRO-2 grad hooks in backward only), then launches its kernels. */
static int32_t launch(struct ds *s, int unit, int kernels, bool backward)
{
    struct zs_bctx *b = s->b;
    return zs_t_delay(b, b->q_host,
                      s->hook_ns[2 * unit + backward] +
                          (int64_t)kernels * b->node->gpu.launch_overhead_ns,
                      ZS_CLS_HOST, "hooks + kernel launches", unit,
                      b->last_host, -1);
}

/* A layer's saved activations (its input alone when fully checkpointed),
 * allocated on the compute stream by unit u after d0. */
static int32_t alloc_saved(struct ds *s, int layer, int u, int32_t d0)
{
    struct zs_bctx *b = s->b;
    struct zs_act_opts o = {0};
    zs_act_opts_at(b, layer, &o);
    return zs_t_alloc(b, b->q_comp, b->p_gpu,
                      zs_model_act_saved_per_layer(b->m, &o), 0,
                      "saved activations", u, d0);
}

static void run_forward_unit(struct ds *s, int u, int pos, bool recompute)
{
    struct zs_bctx *b = s->b;
    const struct zs_unit *un = &b->units[u];
    struct zs_act_opts ao = {0};
    int32_t l, c, dep_ready;
    /* read only by a layer's first unit and the LM head */
    if ((un->layer >= 0 && un->first_of_layer) ||
        (un->leaf && un->leaf->kind == ZS_LEAF_LM_HEAD))
        zs_act_opts_at(b, un->layer, &ao);

    if (pos >= 0)
        fetch(s, pos);
    prefetch_more(s, u, pos >= 0);
    dep_ready = un->persistent || !s->zero3 ? -1 : b->ready[u];
    l = launch(s, u, un->kernels_fwd, false);
    if (un->layer >= 0 && un->first_of_layer) {
        /* activation offload (actoff.c): the checkpoint's input leaves in
         * the forward and comes back before the recompute */
        int32_t h;
        if (!recompute) {
            /* a checkpointed layer's saved input was made by the previous
             * layer's last op (below) */
            if (s->layer_saved[un->layer] < 0)
                s->layer_saved[un->layer] = alloc_saved(s, un->layer, u, l);
            h = zs_actoff_fwd_begin(b, un->layer, u, s->layer_saved[un->layer],
                                    l);
        } else {
            h = zs_actoff_bwd_begin(b, un->layer, u,
                                    &s->layer_saved[un->layer], l);
        }
        if (h >= 0)
            l = h;
        if (recompute) { /* emit.c zs_t_recompute_begin */
            zs_t_recompute_begin(b, u, &ao, l, &s->rc);
            s->act_bwd = s->rc.layer;
            s->act_work = s->rc.fwd_ws;
        } else {
            s->act_work = zs_t_alloc(b, b->q_comp, b->p_gpu,
                                     zs_model_act_work_fwd(b->m, &ao), 0,
                                     "forward workspace", u, l);
        }
    }
    if (un->leaf && un->leaf->kind == ZS_LEAF_LM_HEAD && !recompute) {
        struct zs_loss_bytes lb;
        zs_model_loss_bytes(b->m, &ao, &lb);
        s->logits_bf16 = zs_t_alloc(b, b->q_comp, b->p_gpu, lb.logits_bf16, 0,
                                    "logits (bf16)", u, l);
        c = zs_t_compute(b, u, false, "lm_head + loss", l, dep_ready);
        c = zs_t_loss_forward(b, u, &lb, c, s->logprobs);
        if (lb.logits_freed_in_fwd) { /* torchtune's `del logits` */
            c = zs_t_free(b, b->q_comp, s->logits_bf16, c);
            s->logits_bf16 = -1;
        }
    } else {
        c = zs_t_compute(b, u, false,
                         recompute ? "recompute forward" : "forward", l,
                         dep_ready);
    }
    /* The input a fully checkpointed layer saves is the previous layer's
     * output, made by that layer's last op (HF's decoder layer returns
     * `residual + hidden_states`).  By then the layer has freed tensors of
     * exactly that size (its normed input, attention output, o_proj output:
     * tokens x hidden each), and the caching allocator's best fit puts the
     * output into one of them, not into the MLP's larger blocks
     * (c10/cuda/CUDACachingAllocator.cpp get_free_block: the smallest block
     * that fits).  zsim's layer workspace is one block with no such hole, so
     * the output is allocated before that block is freed [approximation];
     * carved out of it, it left the next layer's workspace no room and a new
     * segment every few layers (H200 long-context rows, docs/validation.md). */
    if (un->layer >= 0 && un->last_of_layer && !recompute &&
        un->layer + 1 < (int)b->m->n_layers &&
        zs_full_ckpt_at(b, un->layer + 1))
        s->layer_saved[un->layer + 1] = alloc_saved(s, un->layer + 1, u, c);
    if (un->layer >= 0 && un->last_of_layer && s->act_work >= 0) {
        if (recompute)
            s->act_bwd_ws = zs_t_recompute_end(b, u, &s->rc, c);
        else
            zs_t_free(b, b->q_comp, s->act_work, c);
        s->act_work = -1;
    }
    if (un->layer >= 0 && un->last_of_layer && !recompute)
        zs_actoff_fwd_end(b, un->layer, u, c);
    if (pos >= 0)
        release(s, pos, c);
}

/* A whole eager fp32 loss (model.c loss_whole): its backward makes two
 * full-size fp32 gradients one after the other.  The 16-bit loss (--loss
 * half) counts both in its grad_fp32; fused and chunked losses make none
 * or one chunk's. */
static bool whole_fp32_loss(const struct zs_loss_bytes *lb)
{
    return !lb->half && lb->pieces == 1 && !lb->fused_upcast &&
           lb->logprobs_fp32 > 0 && lb->grad_fp32 > 0;
}

static void run_backward_unit(struct ds *s, int u, int pos)
{
    struct zs_bctx *b = s->b;
    const struct zs_unit *un = &b->units[u];
    struct zs_act_opts ao = {0};
    int32_t l, c, g = -1, dep_ready;
    /* read only by a layer's last unit and the LM head */
    if ((un->layer >= 0 && un->last_of_layer) ||
        (un->leaf && un->leaf->kind == ZS_LEAF_LM_HEAD))
        zs_act_opts_at(b, un->layer, &ao);

    if (pos >= 0)
        fetch(s, pos);
    prefetch_more(s, u, pos >= 0);
    dep_ready = un->persistent || !s->zero3 ? -1 : b->ready[u];
    l = launch(s, u, un->kernels_bwd, true);
    if (un->layer >= 0 && un->last_of_layer && !zs_full_ckpt_at(b, un->layer)) {
        s->act_bwd =
            zs_t_alloc(b, b->q_comp, b->p_gpu, zs_model_act_work_bwd(b->m, &ao),
                       0, "backward workspace", u, l);
        /* checkpointing "op": the block's unsaved ops are rerun first */
        if (b->c->checkpointing == ZS_CKPT_OP)
            l = zs_t_delay(b, b->q_comp, (int64_t)b->op_recompute_ns,
                           ZS_CLS_COMPUTE, "recompute (per-op AC)", u,
                           s->act_bwd, l);
    }
    if (un->leaf && un->leaf->kind == ZS_LEAF_LM_HEAD) {
        struct zs_loss_bytes lb;
        int32_t g32, g16;
        zs_model_loss_bytes(b->m, &ao, &lb);
        g32 = zs_t_alloc(b, b->q_comp, b->p_gpu, lb.grad_fp32, 0,
                         lb.half               ? "loss grads (16-bit)"
                         : whole_fp32_loss(&lb) ? "nll_loss grad (fp32)"
                                                : "logits grad (fp32)",
                         u, l);
        if (whole_fp32_loss(&lb)) {
            /* NllLossBackward0's dense fp32 gradient, then
             * LogSoftmaxBackward0's while the saved log-softmax is alive
             * (as fsdp2.c loss_backward_whole; nll_loss_backward
             * zero-fills a tensor of its input's size, aten/src/ATen/
             * native/cuda/Loss.cu; _log_softmax_backward_data,
             * derivatives.yaml) */
            int32_t gin = zs_t_alloc(b, b->q_comp, b->p_gpu, lb.grad_fp32, 0,
                                     "log_softmax grad (fp32)", u, g32);
            zs_t_free(b, b->q_comp, g32, gin);
            g32 = gin;
        }
        zs_t_loss_release(b, &lb, s->logprobs, g32);
        g16 = zs_t_alloc(b, b->q_comp, b->p_gpu, lb.grad_bf16, 0,
                         "logits grad (bf16)", u, g32);
        zs_t_free(b, b->q_comp, g32, g16);
        if (un->trainable > 0)
            g = zs_t_alloc(b, b->q_comp, b->p_gpu, un->trainable * 2, 0,
                           "param grads", u, g16);
        c = zs_t_compute(b, u, true, "backward", l, dep_ready);
        zs_t_free(b, b->q_comp, g16, c);
        zs_t_free(b, b->q_comp, s->logits_bf16, c);
    } else {
        if (un->trainable > 0)
            g = zs_t_alloc(b, b->q_comp, b->p_gpu, un->trainable * 2, 0,
                           "param grads", u, l);
        c = zs_t_compute(b, u, true, "backward", l, dep_ready);
    }
    if (un->layer >= 0 && un->first_of_layer) {
        zs_t_free(b, b->q_comp, s->layer_saved[un->layer], c);
        s->layer_saved[un->layer] = -1;
        zs_t_free(b, b->q_comp, s->act_bwd, c);
        s->act_bwd = -1;
        if (s->act_bwd_ws >= 0)
            zs_t_free(b, b->q_comp, s->act_bwd_ws, c);
        s->act_bwd_ws = -1;
    }
    if (g >= 0)
        grad_ready(s, u, g, c);
    if (pos >= 0)
        release(s, pos, c);
}

/* ---- the micro-step and the optimizer ---------------------------------------
 */

/* A micro-step's forward (its first segment, ds_build) ... */
static void micro_forward(struct ds *s)
{
    struct zs_bctx *b = s->b;
    int pos = 0;
    /* root pre-forward: reset_step releases what is still gathered */
    release_all(s);
    s->act_work = s->act_bwd = s->act_bwd_ws = -1;
    zs_actoff_micro_begin(b);
    b->phase = ZS_PH_FORWARD;
    for (int u = 0; u < b->nunits; u++) {
        bool fetched = s->zero3 && !b->units[u].persistent;
        s->cursor = fetched ? pos + 1 : pos;
        run_forward_unit(s, u, fetched ? pos : -1, false);
        if (fetched)
            pos++;
    }
    s->pos = pos;
}

/* ... and its backward (the second), from trace position s->pos. */
static void micro_backward(struct ds *s)
{
    struct zs_bctx *b = s->b;
    int pos = s->pos;
    b->phase = ZS_PH_BACKWARD;
    /* backward: walk the trace from where forward ended; units that are not
     * fetched (persistent or ZeRO-2) still run in the same order */
    {
        const struct zs_model *m = b->m;
        int per = m->n_layer_leaves, pre = m->n_pre;
        int post0 = pre + (int)m->n_layers * per;
#define BWD(u)                                                                 \
    do {                                                                       \
        bool f_ = s->zero3 && !b->units[(u)].persistent;                       \
        s->cursor = f_ ? pos + 1 : pos;                                        \
        run_backward_unit(s, (u), f_ ? pos : -1);                              \
        if (f_)                                                                \
            pos++;                                                             \
    } while (0)
#define REC(u)                                                                 \
    do {                                                                       \
        bool f_ = s->zero3 && !b->units[(u)].persistent;                       \
        s->cursor = f_ ? pos + 1 : pos;                                        \
        run_forward_unit(s, (u), f_ ? pos : -1, true);                         \
        if (f_)                                                                \
            pos++;                                                             \
    } while (0)
        for (int u = b->nunits - 1; u >= post0; u--)
            BWD(u);
        for (int L = (int)m->n_layers - 1; L >= 0; L--) {
            int first = pre + L * per;
            if (zs_full_ckpt_at(b, L))
                for (int i = 0; i < per; i++)
                    REC(first + i);
            for (int i = per - 1; i >= 0; i--)
                BWD(first + i);
        }
        for (int u = pre - 1; u >= 0; u--)
            BWD(u);
#undef BWD
#undef REC
    }
    host_pending(s);
    /* independent_gradient_partition_epilogue: flush, then the host waits
     * for the reduce stream (ZeRO-3); ZeRO-1/2 synchronizes the device with
     * overlap_comm (stage_1_and_2.py :929-931 at edaa722), and without it
     * the host waits for the grads where the step reads them [assumption:
     * the step's norm .item() or the CPU optimizer's wait] */
    flush(s);
    s->red_off = s->red_part = 0;
    if (!s->zero3 && b->c->overlap_comm_on)
        zs_t_drain(b, "torch.cuda.synchronize (ipg epilogue)");
    else
        zs_t_mark(b, b->q_host, "host waits reduce stream", s->last_rs,
                  b->last_host, -1);
    release_all(s);
    s->pos = 0;
}

/* The updated sub-group's fp32 params back to bf16, where the params
 * live: the NVMe swap buffer, the pinned flat buffer, or the GPU. */
static void params_back(struct ds *s, int64_t i, int64_t e)
{
    struct zs_bctx *b = s->b;
    const struct zs_node *nd = b->node;

    if (s->pnvme && s->sg_nv[i] > 0) {
        /* _partitioned_params_swap_out: fp32 -> bf16 into the
         * partitioned swap buffer, written synchronously */
        zs_t_cpu(b, (double)e * (s->mb + 2),
                 nd->torch_op_bytes_per_s_per_thread, ZS_CLS_OPT,
                 s->mb == 4 ? "fp32 -> bf16 into param swap buffer"
                            : "bf16 master -> param swap buffer",
                 b->last_host);
        zs_t_mark(b, b->q_host, "host waits param swap-out",
                  zs_t_nvme(b, true, (double)s->sg_nv[i] * 2,
                            "swap-out bf16 params (NVMe)", b->last_host, -1),
                  b->last_host, -1);
    } else if (s->zero3 && s->off_param) {
        /* _reassign_or_swap_out_partitioned_parameters (stage3.py
         * :2585-2590 at edaa722): the master copy_()d into the pinned flat
         * buffer on the CPU, mb read and 2 B written (nothing converted
         * under bf16 master weights) */
        zs_t_cpu(b, (double)e * (s->mb + 2),
                 nd->torch_op_bytes_per_s_per_thread, ZS_CLS_OPT,
                 s->mb == 4 ? "fp32 -> bf16 into pinned buffer"
                            : "bf16 master -> pinned buffer (CPU copy)",
                 b->last_host);
    } else if (s->zero3 && s->mb == 2) {
        /* the same copy_ into the GPU partition: a blocking H2D from the
         * bf16 master, pageable (nothing pins it: .to('cpu').clone(),
         * :1107-1110) */
        int32_t h = zs_t_pcie(b, b->q_comp, 0, (double)e * 2, false,
                              "H2D updated bf16 master (pageable)", -1,
                              b->last_host, -1);
        zs_t_mark(b, b->q_host, "host waits H2D", h, b->last_host, -1);
    } else if (!s->zero3 && zs_ds_at_least(&b->c->ds_version, 0, 17, 0)) {
        /* ZeRO-1/2 from PR #7309 (17c8be0, v0.17.0; stage_1_and_2.py step()
         * :2337-2341 at edaa722): converted on the CPU into the persistent
         * 16-bit buffer (param_buffer_of_bit16_for_cpu_offload_groups,
         * pinned with pin_memory), then copy_(non_blocking=True) to the GPU
         * partition; from pageable memory the host waits for the copy */
        bool pin = b->c->pin_optimizer;
        int32_t h;
        /* bit16_partition_buffer.data.copy_(fp32_partition.data): mb read,
         * 2 B written (a plain copy under bf16 master weights) */
        zs_t_cpu(b, (double)e * (s->mb + 2),
                 nd->torch_op_bytes_per_s_per_thread, ZS_CLS_OPT,
                 s->mb == 4 ? "fp32 -> bf16 into the 16-bit CPU buffer"
                            : "bf16 master -> the 16-bit CPU buffer",
                 b->last_host);
        h = zs_t_pcie(b, b->q_comp, 0, (double)e * 2, pin,
                      "H2D updated bf16 params", -1, b->last_host, -1);
        if (!pin)
            zs_t_mark(b, b->q_host, "host waits H2D", h, b->last_host, -1);
    } else if (!s->zero3 && zs_ds_at_least(&b->c->ds_version, 0, 14, 1)) {
        /* ZeRO-1/2 from PR #5301 (7b5b066, v0.14.1) to 0.16 (v0.16.0
         * :1872-1873): bit16 partition.copy_(fp32_partition.to(device)): a
         * blocking 4 B H2D of the fp32 partition (pinned with pin_memory)
         * into a new GPU tensor, then the cast on the GPU (6 B); before it
         * the direct copy_ below, as ZeRO-3's */
        int32_t f32 = zs_t_alloc(b, b->q_comp, b->p_gpu, e * 4, 0,
                                 "fp32 partition on the GPU (.to(device))",
                                 -1, b->last_host);
        int32_t h = zs_t_pcie(b, b->q_comp, 0, (double)e * 4,
                              b->c->pin_optimizer,
                              "H2D updated fp32 params", -1, f32, -1);
        zs_t_mark(b, b->q_host, "host waits H2D", h, b->last_host, -1);
        h = zs_t_gpu_mem(b, b->q_comp, (double)e * 6, ZS_CLS_COPY,
                         "fp32 -> bf16 params (GPU)", -1, h, -1);
        zs_t_free(b, b->q_comp, f32, h);
    } else {
        /* CPU conversion into a pageable temporary, then a pageable
         * blocking H2D (mechanics §1 step 14, [inference]) */
        int32_t tmp = zs_t_alloc(b, b->q_host, b->p_host, e * 2, 0,
                                 "bf16 conversion temporary", -1, b->last_host);
        int32_t cv =
            zs_t_cpu(b, (double)e * 6, nd->torch_op_bytes_per_s_per_thread,
                     ZS_CLS_OPT, "fp32 -> bf16 (CPU)", tmp);
        int32_t h = zs_t_pcie(b, b->q_comp, 0, (double)e * 2, false,
                              "H2D updated bf16 params (pageable)", -1, cv, -1);
        zs_t_mark(b, b->q_host, "host waits H2D", h, b->last_host, -1);
        zs_t_free(b, b->q_host, tmp, b->last_host);
    }
}

/* Whether the optimizer's states are made at init rather than by the
 * first step: before PR #5104 (1817980, v0.13.2, "Remove optimizer step
 * on initialization") every ZeRO stage's initialize_optimizer_states ran
 * the optimizer's step() on zero gradients at init (stage3.py v0.7.0
 * :876-935, stage_1_and_2.py v0.13.0), so Adam's states exist from init.
 * Not with NVMe swapping (the swapper's own init path, kept lazy
 * [approximation]) nor with paged 8-bit states (outside the allocator). */
static bool eager_states(const struct ds *s)
{
    return !zs_ds_at_least(&s->b->c->ds_version, 0, 13, 2) && !s->nvme;
}

/* The optimizer states of one sub-group of e elements: on the host (CPU
 * optimizer) or the GPU, kept for the run.  label: "lazy" or "at init". */
static void alloc_states(struct ds *s, int64_t e, bool host, int32_t after)
{
    /* [fp32, 8-bit, bf16][at init] (bf16 states exist from 0.18.3, long
     * after states stopped being made at init) */
    static const char *const names[3][2] = {
        {"Adam exp_avg + exp_avg_sq (fp32, lazy)",
         "Adam exp_avg + exp_avg_sq (fp32, at init)"},
        {"Adam 8-bit states (bitsandbytes, lazy)",
         "Adam 8-bit states (bitsandbytes, at init)"},
        {"Adam exp_avg + exp_avg_sq (bf16, lazy)",
         "Adam exp_avg + exp_avg_sq (bf16, at init)"}};
    struct zs_bctx *b = s->b;
    int kind = !host && b->c->optimizer != ZS_OPT_ADAMW ? 1
               : s->sb == 2                              ? 2
                                                         : 0;
    const char *name = names[kind][eager_states(s)];
    if (host)
        zs_keep_alloc(b, zs_t_alloc(b, b->q_host, b->p_host, e * 2 * s->sb, 0,
                                    name, -1, after));
    else
        zs_keep_alloc(b, zs_t_alloc(b, b->q_comp, b->p_gpu,
                                    zs_gpu_opt_state_bytes(b->c, e, s->sb),
                                    0, name, -1, after));
}

/* Twin-Flow: whether the optimizer sub-group starting at element i * sub
 * steps on the GPU. */
static bool sg_on_gpu(const struct ds *s, int64_t i, int64_t sub)
{
    return s->twin && i * sub >= s->tw_lo && i * sub < s->tw_hi;
}

/* A Twin-Flow GPU sub-group's step (stage3.py step() at edaa722
 * :2604-2650): unscale_and_clip_grads multiplies its fp32 GPU gradient in
 * place (4 + 4 B per element); _optimizer_step steps it with the backup
 * torch.optim.AdamW (:1204-1208, built at :308-321; foreach on CUDA, its
 * states at its first step, gpuopt.c); _reassign_or_swap_out_partitioned_
 * parameters copies the fp32 params into the bf16 partition (:2585-2590): on
 * the GPU a cast (4 + 2 B); with offload_param the partition is the pinned
 * CPU flat buffer, so a blocking GPU -> CPU copy_ converted on the CPU
 * (d2h_converted_on_cpu, a 4 B D2H).  The kernels are launched, not waited
 * for: the host goes on to the next sub-group. */
static void step_twin_gpu(struct ds *s, bool first, int64_t e)
{
    static const struct cpu_cast_names nm = {
        "fp32 param temporary (CPU copy_)", "D2H updated fp32 params",
        "host waits updated params", "first touch of the param temporary",
        "fp32 -> bf16 into pinned buffer (CPU)"};
    struct zs_bctx *b = s->b;
    int32_t t = b->last_host;
    if (first && !eager_states(s))
        alloc_states(s, e, false, t);
    t = zs_t_gpu_mem(b, b->q_comp, (double)e * 2 * s->mb, ZS_CLS_COPY,
                     s->mb == 4 ? "unscale and clip fp32 grads"
                                : "unscale and clip bf16 grads",
                     -1, t, -1);
    t = zs_t_gpu_mem(b, b->q_comp,
                     (double)e * zs_gpu_opt_elem_bytes(b->c, e, s->mb),
                     ZS_CLS_OPT, "GPU AdamW (Twin-Flow)", -1, t, -1);
    /* under bf16 master weights the copy_ into the bf16 partition converts
     * nothing: on the GPU 2 + 2 B, into the pinned flat buffer a blocking
     * D2H of the bf16 master */
    if (s->off_param && s->mb == 2)
        zs_t_mark(b, b->q_host, "host waits updated params",
                  zs_t_pcie(b, b->q_comp, 1, (double)e * 2, true,
                            "D2H updated bf16 master into pinned buffer", -1,
                            t, -1),
                  b->last_host, -1);
    else if (s->off_param)
        d2h_converted_on_cpu(s, b->q_comp, e, 4, &nm, t);
    else
        zs_t_gpu_mem(b, b->q_comp, (double)e * (s->mb + 2), ZS_CLS_COPY,
                     s->mb == 4 ? "fp32 -> bf16 params (GPU)"
                                : "bf16 master -> bf16 params (GPU)",
                     -1, t, -1);
}

/* One sub-group's step on the CPU (optimizer offload), with its NVMe swaps;
 * e_next: the next sub-group's elements (0: none). */
static void step_cpu(struct ds *s, bool first, int64_t i, int64_t nsub,
                     int64_t e, int64_t e_next, double opt_fused, double opt_op)
{
    struct zs_bctx *b = s->b;
    const struct zs_node *nd = b->node;
    int32_t fresh = -1;
    if (s->nvme) {
        nvme_swap_in(s, first, i, e, e_next);
        /* the first step's new states: pageable until swapped out
         * (release_memory after the swap-out) */
        if (first)
            fresh = zs_t_alloc(b, b->q_host, b->p_host, e * 2 * s->sb, 0,
                               "Adam exp_avg + exp_avg_sq (new, "
                               "until swap-out)",
                               -1, b->last_host);
    } else if (first && !eager_states(s))
        alloc_states(s, e, true, b->last_host);
    /* unscale_and_clip_grads: fp32_grad.mul_ (read 4 + write 4 B; 2 + 2
     * under bf16 master weights), a torch op at torch's rate (fidelity
     * review item 11) */
    zs_t_cpu(b, (double)e * 2 * s->mb, nd->torch_op_bytes_per_s_per_thread,
             ZS_CLS_OPT, "unscale and clip grads", b->last_host);
    /* the optimizer (DeepSpeedCPUAdam by default, torch AdamW with
     * "torch_adam": true): its bytes less the unscale and copy
     * (cpuopt.c) */
    zs_t_cpu(b, (double)e * opt_fused,
             nd->cpu_adam_fused_bytes_per_s_per_thread, ZS_CLS_OPT,
             zs_cpu_opt_name(b->c->cpu_opt_impl), b->last_host);
    zs_t_cpu(b, (double)e * opt_op, nd->torch_op_bytes_per_s_per_thread,
             ZS_CLS_OPT, zs_cpu_opt_name(b->c->cpu_opt_impl), b->last_host);
    params_back(s, i, e);
    if (s->nvme) {
        nvme_swap_out(s, e, i == nsub - 1);
        if (fresh >= 0)
            zs_t_free(b, b->q_host, fresh, b->last_host);
    }
}

/* One sub-group's step on the GPU. */
static void step_gpu(struct ds *s, bool first, int64_t e)
{
    struct zs_bctx *b = s->b;
    int32_t f32, a, flat, t = b->last_host;
    /* bitsandbytes 8-bit Adam: one byte per state plus an fp32 absmax
     * per 256-element block and state (gpuopt.c, bitsandbytes 0.44.1
     * Optimizer2State.init_state) ≈ 2 B/element instead of 8 (fp32) */
    if (first && zs_gpu_opt_paged(b->c, e))
        b->paged_bytes += zs_gpu_opt_state_bytes(b->c, e, s->sb);
    else if (first && !eager_states(s))
        alloc_states(s, e, false, b->last_host);
    /* Without offload the fp32 gradient is built from the bf16
     * partition's grads: flatten(averaged_gradients), a torch.cat into a
     * new bf16 partition (2 B read + 2 B written per element), .to(fp32)
     * (2 + 4 B), the bf16 one dropped; then unscale_and_clip_grads
     * multiplies the fp32 partition in place by 1 / combined_scale, at
     * loss scale 1 too (4 + 4 B).  ZeRO-1/2: stage_1_and_2.py step() at
     * edaa722 (0.19.6) :2340-2369 and :2434-2449; ZeRO-3, per sub-group:
     * stage3.py at edaa722 _prepare_fp32_grad_for_sub_group :2398-2419 and
     * unscale_and_clip_grads :2696-2705; the same at v0.6.5, v0.12.3 and
     * v0.14.0.  Under bf16 master weights the .to() is to the master's
     * dtype, bf16: the flattened partition is the gradient, nothing is
     * converted, and the unscale moves 2 + 2 B. */
    flat = zs_t_alloc(b, b->q_comp, b->p_gpu, e * 2, 0,
                      "flattened grad partition (bf16)", -1, t);
    t = zs_t_gpu_mem(b, b->q_comp, (double)e * 4, ZS_CLS_COPY,
                     "flatten grad partition", -1, flat, -1);
    if (s->mb == 4) {
        f32 = zs_t_alloc(b, b->q_comp, b->p_gpu, e * 4, 0,
                         "fp32 grads (sub-group)", -1, t);
        t = zs_t_gpu_mem(b, b->q_comp, (double)e * 6, ZS_CLS_COPY,
                         "grads to fp32", -1, f32, -1);
        zs_t_free(b, b->q_comp, flat, t);
    } else {
        f32 = flat;
    }
    t = zs_t_gpu_mem(b, b->q_comp, (double)e * 2 * s->mb, ZS_CLS_COPY,
                     s->mb == 4 ? "unscale and clip fp32 grads"
                                : "unscale and clip bf16 grads",
                     -1, t, -1);
    /* a fused Adam: read p, g and write p in the master's dtype (3 x mb),
     * read and write m, v in the states' (4 x sb), then the master copied
     * into the bf16 partition (_reassign_or_swap_out_partitioned_parameters'
     * copy_: mb read, 2 B written): 34 B per element in fp32, 18 B under
     * bf16 master weights and states */
    a = zs_t_gpu_mem(b, b->q_comp, (double)e * (4 * s->mb + 4 * s->sb + 2),
                     ZS_CLS_OPT, "GPU Adam", -1, t, -1);
    zs_t_free(b, b->q_comp, f32, a);
}

/* After the step: ZeRO-2 gathers the updated params, ZeRO-3 its
 * persistent ones. */
static void gather_updated(struct ds *s)
{
    struct zs_bctx *b = s->b;

    if (!s->zero3) {
        /* ZeRO-2: all-gather the updated bf16 params (allgather_bucket_size
         * chunks, 5e8 elements); with the optimizer offloaded the updated
         * partition came back to the GPU in params_back */
        double total = (double)b->m->params_lm * 2;
        double chunk = 5e8 * 2;
        int32_t h = b->last_host;
        for (double done = 0; done < total; done += chunk)
            h = zs_t_coll(b, b->q_comp, ZS_COLL_ALLGATHER,
                          total - done < chunk ? total - done : chunk,
                          "all-gather updated params", -1, h, -1);
        zs_t_mark(b, b->q_host, "host waits params", h, b->last_host, -1);
    } else {
        /* _post_step: synchronous all-gather of persistent params */
        int32_t h = zs_t_coll(
            b, b->q_comp, ZS_COLL_ALLGATHER, (double)b->persistent_params * 2,
            "all-gather persistent params", -1, b->last_host, -1);
        zs_t_mark(b, b->q_host, "host waits persistent params", h, b->last_host,
                  -1);
    }
}

/* The gradient norm of DeepSpeed's step without optimizer offload:
 * get_grad_norm_direct runs, per gradient tensor of this rank's partition,
 * `g.double()` (2 B read, 8 B written into a new fp64 tensor) and its norm
 * (8 B read): 18 B per partition element, one tensor's fp64 copy live at
 * a time.  ZeRO-1/2: stage_1_and_2.py at edaa722 (0.19.6) :2054-2117, the
 * tensors whole (the largest is charged: a unit's trainable elements,
 * weight and bias together, so at most a bias above the largest tensor);
 * ZeRO-3: stage3.py at edaa722 :2249-2300 via _get_norm_groups :2388, each
 * parameter's partition.  The same double() and norm at v0.6.5, v0.9.5,
 * v0.12.3 and v0.14.0; ZeRO-1/2 up to 0.12 also reads each tensor's norm
 * back with .item() (a host sync per tensor, not charged: a few launches'
 * latency each). */
static int32_t grad_norm_gpu(struct ds *s, int32_t t)
{
    struct zs_bctx *b = s->b;
    return fp64_norm(b, b->q_comp, b->T, largest_trained(s),
                     "grad norm (fp64 copy of a tensor)",
                     "grad norm (per tensor, fp64)", t);
}

/* The elements of the optimizer's sub-groups: sub_group_size is ZeRO-3's;
 * ZeRO-1/2 steps each param group whole, on the GPU or the CPU
 * (stage_1_and_2.py step() at edaa722 :2316-2375 loops over bit16_groups;
 * zsim has one group). */
static int64_t step_sub(const struct ds *s)
{
    int64_t T = s->b->T;
    return !s->zero3 && T > 0 ? T : s->b->c->sub_group_size;
}

static void optimizer_step(struct ds *s, bool first)
{
    struct zs_bctx *b = s->b;
    int64_t T = b->T, sub = step_sub(s);
    int64_t nsub = T > 0 ? (T + sub - 1) / sub : 0;
    int32_t t = zs_t_mark(b, b->q_host, "optimizer step", b->last_host, -1, -1);
    double opt_fused, opt_op;
    zs_cpu_opt_bytes(b->c, &opt_fused, &opt_op);
    opt_op -= 8 + 6; /* the unscale and the copy are emitted on their own */
    b->phase = ZS_PH_OPTIMIZER;
    if (!s->off_opt && T > 0)
        t = grad_norm_gpu(s, t);
    /* global grad norm: one small all-reduce (§1 step 13) */
    t = zs_t_coll(b, b->q_comp, ZS_COLL_ALLREDUCE, 8, "grad-norm all-reduce",
                  -1, t, -1);
    t = zs_t_mark(b, b->q_host, "norm to host", t, b->last_host, -1);
    for (int64_t i = 0; i < nsub; i++) {
        int64_t e = (i == nsub - 1) ? T - i * sub : sub;
        int64_t e_next =
            i + 1 < nsub ? (i + 1 == nsub - 1 ? T - (i + 1) * sub : sub) : 0;
        if (s->off_opt && sg_on_gpu(s, i, sub))
            step_twin_gpu(s, first, e);
        else if (s->off_opt)
            step_cpu(s, first, i, nsub, e, e_next, opt_fused, opt_op);
        else
            step_gpu(s, first, e);
    }
    gather_updated(s);
}

/* ---- init: the buffers that live through training (§2) --------------------
 */

/* The elements of a leaf's parameter tensor k of n_tensors: a linear's
 * weight (in x out) and bias, else equal shares (a LayerNorm's weight and
 * bias, the experts' gate/up/down of every expert). */
static int64_t leaf_tensor_elems(const struct zs_leaf *l, int k)
{
    int64_t w = l->in_features * l->out_features;
    bool lin = l->kind == ZS_LEAF_LINEAR || l->kind == ZS_LEAF_ROUTER ||
               l->kind == ZS_LEAF_LM_HEAD;
    if (lin && l->n_tensors == 2 && w > 0 && w < l->params)
        return k == 0 ? w : l->params - w;
    return l->params / l->n_tensors + (k == 0 ? l->params % l->n_tensors : 0);
}

/* ZeRO-3 without zero.Init (--zero-init no): the engine moves the whole
 * module to the device before the optimizer partitions it (engine.py
 * _configure_distributed_model at edaa722: "if not (self.dont_change_device
 * or is_zero_init_model): self.module.to(self.device)", after
 * _cast_module_mixed_precision, so in 16 bits, 2 B, as zsim's DeepSpeed
 * parameters are everywhere; v0.6.5 :1024-1025), one allocation per
 * parameter tensor in module order; DeepSpeedZeRoOffload's
 * _convert_to_zero_parameters then partitions each parameter and frees its
 * full tensor (partition_parameters.py free_param).  With the parameters
 * kept on the GPU, the optimizer then moves their partitions into one flat
 * buffer through the host and empties the cache first (stage3.py
 * _create_fp16_partitions_with_defragmentation -> defragment: "gc.collect();
 * torch.cuda.empty_cache()", in v0.6.5 stage3.py :607-632 and, from 0.19.0,
 * runtime/zero/utils.py defragment), so the whole model's blocks go back to
 * the device; with offload_param that path is not taken and they stay
 * cached.  Measured: OPT-Benchmark's OPT-13B log (DeepSpeed 0.6.5, fp16,
 * parameter offload) prints "After initializing ZeRO optimizer MA 0.93 GB
 * Max_MA 23.94 GB CA 25.84 GB": the whole model, 12.85e9 x 2 B = 23.94 GiB,
 * at once, and its blocks cached after.  The persistent parameters stay whole
 * (init_gpu's own block); each partition copy, 1/W of its parameter and
 * carved from the cached blocks, is not emitted [approximation: one
 * partition more at the peak]. */
static void init_whole_model(struct ds *s)
{
    struct zs_bctx *b = s->b;
    int32_t *full;
    int n = 0, cap = 0;
    for (int u = 0; u < b->nunits; u++)
        if (b->units[u].leaf && !b->units[u].persistent)
            cap += b->units[u].leaf->n_tensors;
    full = zs_calloc((size_t)cap + 1, sizeof *full);
    if (!full) {
        b->failed = ZS_ENOMEM;
        return;
    }
    for (int u = 0; u < b->nunits; u++) {
        const struct zs_leaf *l = b->units[u].leaf;
        for (int k = 0; l && !b->units[u].persistent && k < l->n_tensors; k++)
            full[n++] = zs_t_alloc(b, b->q_comp, b->p_gpu,
                                   leaf_tensor_elems(l, k) * 2, 0,
                                   "whole model on the GPU (no zero.Init)", u,
                                   -1);
    }
    for (int i = 0; i < n; i++) {
        if (i == n - 1 && !s->off_param)
            zs_t_free_empty_cache(b, b->q_comp, full[i], -1);
        else
            zs_t_free(b, b->q_comp, full[i], -1);
    }
    zs_free(full);
}

/* The GPU's resident buffers: parameters, the gradient bucket, the
 * optimizer's fp32 copies when not offloaded, GPU-placed extra modules. */
static void init_gpu(struct ds *s)
{
    struct zs_bctx *b = s->b;
    int64_t P = b->P, T = b->T, W = b->c->world;

    if (s->zero3 && b->c->zero_init == ZS_NO)
        init_whole_model(s);
    if (s->zero3) {
        if (b->persistent_params)
            zs_t_alloc(b, b->q_comp, b->p_gpu,
                       b->persistent_params * 2 +
                           (b->persistent_params / W + 1) * 2,
                       0, "persistent params (gathered + partition)", -1, -1);
        if (!s->off_param)
            zs_t_alloc(b, b->q_comp, b->p_gpu, P * 2, 0,
                       "bf16 partition (lp_param_buffer)", -1, -1);
    } else {
        zs_t_alloc(b, b->q_comp, b->p_gpu, b->m->params_lm * 2, 0,
                   "bf16 params (replicated)", -1, -1);
    }
    if (T > 0 && b->c->contiguous_gradients)
        zs_t_alloc(b, b->q_comp, b->p_gpu, b->c->reduce_bucket_size * 2, 0,
                   "IPG gradient bucket (reduce_bucket_size)", -1, -1);
    /* ZeRO-1/2 double-buffers the bucket with overlap_comm (stage_1_and_2.py
     * setup_buckets buf_1 at edaa722, backward() at v0.12.3) */
    if (T > 0 && b->c->contiguous_gradients && !s->zero3 &&
        b->c->overlap_comm_on)
        zs_t_alloc(b, b->q_comp, b->p_gpu, b->c->reduce_bucket_size * 2, 0,
                   "second IPG gradient bucket (overlap_comm)", -1, -1);
    /* ZeRO-1/2 with the optimizer offloaded: temp_grad_buffer_for_gpu_offload,
     * the largest trained tensor in 16 bits (init_host_optimizer) */
    if (s->off_opt && !s->zero3 && T > 0)
        zs_t_alloc(b, b->q_comp, b->p_gpu, largest_trained_whole(b) * 2, 0,
                   "temp_grad_buffer_for_gpu_offload", -1, -1);
    /* the master partition: under bf16 master weights a bf16 copy of its
     * own, not the bf16 partition itself (stage3.py at edaa722
     * _create_fp32_partitions :1112-1121: the alias branch compares the
     * partition's torch.device with self.device, the string 'cuda:N'
     * (accelerator current_device_name), which is never equal, so the
     * `.to(...).clone()` branch runs; stage_1_and_2.py :491-492 clones
     * likewise).  The DeepSpeedExamples bf16_master_weight run agrees: 16.17
     * GB allocated, 10 B per element of its 4-way partition, where an alias
     * would leave 8 */
    if (!s->off_opt && T > 0) {
        zs_t_alloc(b, b->q_comp, b->p_gpu, T * s->mb, 0,
                   s->mb == 4 ? "fp32 master params" : "bf16 master params",
                   -1, -1);
        zs_t_alloc(b, b->q_comp, b->p_gpu, T * 2, 0, "grad partition buffer",
                   -1, -1);
    }
    for (int i = 0; i < b->m->n_extra; i++)
        if (b->m->extra[i].placement_default == ZS_PLACE_GPU_FULL)
            zs_t_alloc(b, b->q_comp, b->p_gpu, b->m->extra[i].params * 2, 0,
                       b->m->extra[i].name, -1, -1);
}

/* ZeRO-Infinity parameter NVMe: the swapper's buffers. */
static void init_param_swap_buffers(struct ds *s)
{
    struct zs_bctx *b = s->b;
    int64_t T = b->T, W = b->c->world, sub = b->c->sub_group_size;
    int q = b->q_host;

    /* AsyncPartitionedParameterSwapper: buffer_count x buffer_size
     * bf16 elements, each rounded up to the aio alignment (1024 B x
     * intra_op_parallelism 1 / 2 B = 512 elements), one page-locked
     * tensor (new_cpu_locked_tensor, partitioned_param_swapper.py
     * :101-131) */
    int64_t al = (b->c->param_buffer_size + 511) / 512 * 512;
    int64_t emax = 0;
    bool any = false;
    zs_t_alloc(b, q, b->p_host, b->c->param_buffer_count * al * 2,
               ZS_ALLOC_LOCKED, "NVMe param swap buffers (bf16)", -1, -1);
    for (int64_t i = 0; i < s->nsub; i++) {
        int64_t e = (i == s->nsub - 1) ? T - i * sub : sub;
        if (e > emax)
            emax = e;
        any = any || !s->sg_cpu[i];
    }
    /* a sub-group without a flat buffer: stage3.py:957-969 reserves
     * a locked bf16 buffer for the params of the largest sub-group
     * (by partition numel), sized by their ds_numel — the full,
     * unpartitioned numel — so about world x its partition
     * (reserve_partitioned_swap_space, partitioned_param_swapper.py
     * :393-398) */
    if (any)
        zs_t_alloc(b, q, b->p_host, emax * W * 2, ZS_ALLOC_LOCKED,
                   "partitioned param swap-out buffer (bf16)", -1, -1);
}

/* ZeRO-3 parameter offload: zero.Init's per-parameter partitions, copied
 * into the flat buffer at optimizer init. */
static int init_host_params(struct ds *s)
{
    struct zs_bctx *b = s->b;
    int64_t P = b->P, T = b->T;
    int q = b->q_host;

    /* initial per-param ds_tensor partitions, pinned iff pin_memory; freed
     * into PyTorch's host cache when copied into the flat buffer */
    unsigned f = b->c->pin_param ? ZS_ALLOC_PINNED : 0;
    int32_t *init = zs_calloc((size_t)b->nunits, sizeof *init);
    if (!init) {
        b->failed = ZS_ENOMEM;
        return ZS_ENOMEM;
    }
    /* zero.Init creates every partition; at optimizer init they are
     * copied into the flat buffer and released together */
    for (int u = 0; u < b->nunits; u++) {
        const struct zs_unit *un = &b->units[u];
        init[u] = -1;
        if (un->persistent)
            continue;
        /* nvme: swappable partitions go to their swap files at
         * zero.Init (swap_out_and_release) */
        if (s->pnvme && un->part_elems >= PNVME_MIN_ELEMS)
            continue;
        init[u] =
            zs_t_alloc(b, q, b->p_host, un->part_elems * 2, f,
                       un->trainable ? "initial param partitions (ds_tensor)"
                                     : "frozen param partitions",
                       u, -1);
    }
    int64_t flat = b->mo.method == ZS_METHOD_FULL ? P : T;
    /* nvme: min(max_in_cpu, elements) (stage3.py:839-862) */
    if (s->pnvme && flat > b->c->param_max_in_cpu)
        flat = b->c->param_max_in_cpu;
    if (flat > 0)
        zs_t_alloc(b, q, b->p_host, flat * 2, ZS_ALLOC_PINNED,
                   s->pnvme ? "bf16 flat partition (max_in_cpu, pinned)"
                            : "bf16 flat partition (always pinned)",
                   -1, -1);
    if (s->pnvme)
        init_param_swap_buffers(s);
    for (int u = 0; u < b->nunits; u++)
        if (init[u] >= 0 &&
            (b->units[u].trainable || b->mo.method == ZS_METHOD_FULL))
            zs_t_free(b, q, init[u], -1);
    zs_free(init);
    return 0;
}

/* Optimizer offload: the host's fp32 states and gradients, or the NVMe
 * swap buffers. */
static void init_host_optimizer(struct ds *s)
{
    struct zs_bctx *b = s->b;
    int64_t T = b->T;
    /* ZeRO-1/2 has no sub-groups (step_sub) */
    int64_t sub = step_sub(s), nsub = T > 0 ? (T + sub - 1) / sub : 0;
    int64_t largest = T < sub ? T : sub;
    bool pin_o = b->c->pin_optimizer;
    int q = b->q_host;

    if (s->nvme && T > 0) {
        /* SwapBufferManager: buffer_count pinned buffers of the largest
         * sub-group in the master's dtype, rounded up to the aio alignment
         * (1024 B x intra_op_parallelism 1 = 256 fp32 or 512 bf16 elements;
         * optimizer_utils.py:173-190, swap_tensor/utils.py
         * SwapBufferManager, 0.19.6 edaa7221).  The master params, grads and
         * Adam states live in the swap files, not in host RAM. */
        int64_t al = 1024 / s->mb;
        int64_t aligned = (largest + al - 1) / al * al;
        /* each buffer aio_handle.new_cpu_locked_tensor: posix_memalign +
         * mlock at its exact size (swap_tensor/utils.py:191) */
        for (int64_t k = 0; k < b->c->nvme_buffer_count; k++)
            zs_t_alloc(b, q, b->p_host, aligned * s->mb, ZS_ALLOC_LOCKED,
                       s->mb == 4
                           ? "NVMe swap buffer (largest sub-group, fp32)"
                           : "NVMe swap buffer (largest sub-group, bf16)",
                       -1, -1);
        if (s->zero3)
            zs_t_alloc(b, q, b->p_host, T * 2, pin_o ? ZS_ALLOC_PINNED : 0,
                       "bf16 grad accumulation buffer", -1, -1);
    } else if (s->off_opt && T > 0) {
        int32_t tmp;
        /* Twin-Flow: the CPU sub-groups' only (init_twin_gpu) */
        int64_t cpu = T - (s->twin ? s->tw_hi - s->tw_lo : 0);
        /* the master (bf16 under bf16 master weights; its states are
         * alloc_states') */
        if (cpu > 0)
            zs_t_alloc(b, q, b->p_host, cpu * s->mb, 0,
                       s->mb == 4 ? "fp32 master params" : "bf16 master params",
                       -1, -1);
        for (int64_t i = 0; i < nsub; i++) {
            int64_t e = (i == nsub - 1) ? T - i * sub : sub;
            if (sg_on_gpu(s, i, sub)) {
                /* the GPU gradient's CPU zeros and their pinned copy, both
                 * dropped once moved (init_twin_gpu) */
                int32_t z = zs_t_alloc(b, q, b->p_host, e * s->mb, 0,
                                       s->mb == 4 ? "fp32 grad zeros (transient)"
                                                  : "bf16 grad zeros (transient)",
                                       -1, -1);
                if (pin_o)
                    zs_t_free(b, q,
                              zs_t_alloc(b, q, b->p_host, e * s->mb,
                                         ZS_ALLOC_PINNED,
                                         s->mb == 4
                                             ? "fp32 grad zeros, pinned "
                                               "(transient)"
                                             : "bf16 grad zeros, pinned "
                                               "(transient)",
                                         -1, -1),
                              -1);
                zs_t_free(b, q, z, -1);
            } else if (pin_o) {
                /* torch.zeros then a pinned copy: transient 2x; in the
                 * master's dtype (initialize_optimizer_states gradient_dtype,
                 * stage3.py :1255 and :1287-1292 at edaa722) */
                int32_t z = zs_t_alloc(b, q, b->p_host, e * s->mb, 0,
                                       s->mb == 4 ? "fp32 grad zeros (transient)"
                                                  : "bf16 grad zeros (transient)",
                                       -1, -1);
                zs_t_alloc(b, q, b->p_host, e * s->mb, ZS_ALLOC_PINNED,
                           s->mb == 4 ? "fp32 grads (sub-group)"
                                      : "bf16 grads (sub-group)",
                           -1, -1);
                zs_t_free(b, q, z, -1);
            } else {
                zs_t_alloc(b, q, b->p_host, e * s->mb, 0,
                           s->mb == 4 ? "fp32 grads (sub-group)"
                                      : "bf16 grads (sub-group)",
                           -1, -1);
            }
        }
        if (s->zero3) {
            zs_t_alloc(b, q, b->p_host, T * 2, pin_o ? ZS_ALLOC_PINNED : 0,
                       "bf16 grad accumulation buffer", -1, -1);
            /* initialize_optimizer_states: the largest sub-group in the
             * master's dtype, transient (ZeRO-1/2's is the fp32 grads
             * above) */
            tmp = zs_t_alloc(b, q, b->p_host, largest * s->mb, 0,
                             "optimizer init gradient buffer", -1, -1);
            zs_t_free(b, q, tmp, -1);
        } else {
            /* ZeRO-1/2 (stage_1_and_2.py __init__ :585-593 at edaa722,
             * v0.12.3 :442-450): temp_grad_buffer_for_cpu_offload, the
             * largest trained tensor in 16 bits, pinned with pin_memory;
             * accumulated_grads_in_cpu, one 16-bit buffer per parameter of
             * the partition, when accumulating (partition_grads_z12_offload;
             * created at the first accumulation, charged here) */
            zs_t_alloc(b, q, b->p_host, largest_trained_whole(b) * 2,
                       pin_o ? ZS_ALLOC_PINNED : 0,
                       "temp_grad_buffer_for_cpu_offload", -1, -1);
            /* from 0.17.0 the 16-bit copy of the partition the updated
             * params go through (params_back) */
            if (zs_ds_at_least(&b->c->ds_version, 0, 17, 0))
                zs_t_alloc(b, q, b->p_host, T * 2, pin_o ? ZS_ALLOC_PINNED : 0,
                           "16-bit param buffer (cpu offload)", -1, -1);
            /* under bf16 master weights accumulated_grads_in_cpu are views
             * of the master's gradient (buffer_to_accumulate_to_in_cpu,
             * :1526-1532 at edaa722): no buffer of their own */
            if (b->c->accum > 1 && s->mb == 4)
                zs_t_alloc(b, q, b->p_host, T * 2,
                           pin_o ? ZS_ALLOC_PINNED : 0,
                           "accumulated grads (accumulated_grads_in_cpu)",
                           -1, -1);
        }
    }
}

/* DeepSpeed 0.15.4 to 0.16.2 with the optimizer offloaded (CPU or NVMe):
 * the always-pinned fp32 staging buffer of fp32_grads_pinned_buffer, sized
 * by the largest trainable parameter's partition (stage3.py v0.15.4:
 * 541-549, max over all_params of partition_numel).  A unit's trainable
 * elements are its leaf's weight and bias together (or a LoRA pair), so
 * this bounds the per-parameter maximum from above by at most a bias. */
static void init_pinned_grad_buffer(struct ds *s)
{
    struct zs_bctx *b = s->b;
    int64_t maxpart = 0;
    if (!s->zero3 || !s->off_opt ||
        !zs_ds_at_least(&b->c->ds_version, 0, 15, 4) ||
        zs_ds_at_least(&b->c->ds_version, 0, 16, 3))
        return;
    for (int u = 0; u < b->nunits; u++) {
        int64_t part = (b->units[u].trainable + b->c->world - 1) / b->c->world;
        if (part > maxpart)
            maxpart = part;
    }
    if (maxpart > 0)
        zs_t_alloc(b, b->q_host, b->p_host, maxpart * 4, ZS_ALLOC_PINNED,
                   "fp32 grad staging buffer (pinned_grad_buffer)", -1, -1);
}

/* Twin-Flow's GPU sub-groups at init (stage3.py at edaa722): the fp32
 * master, `.to(device, dtype=float32)` then `.clone().detach()`
 * (:1107-1110: the converted tensor dropped after the clone), and the fp32
 * gradient, initialize_optimizer_states' CPU zeros moved with
 * `.to(subgroup_to_device[i])` (:1287-1292; the host side in
 * init_host_optimizer). */
static void init_twin_gpu(struct ds *s)
{
    struct zs_bctx *b = s->b;
    int64_t T = b->T, sub = step_sub(s), nsub = T > 0 ? (T + sub - 1) / sub : 0;
    for (int64_t i = 0; s->twin && i < nsub; i++) {
        int64_t e = (i == nsub - 1) ? T - i * sub : sub;
        int32_t cv;
        if (!sg_on_gpu(s, i, sub))
            continue;
        /* under bf16 master weights .to(device, bf16) of the bf16 GPU
         * partition is the partition itself: only the clone is made */
        if (s->mb == 2) {
            zs_t_alloc(b, b->q_comp, b->p_gpu, e * 2, 0,
                       "bf16 master params (Twin-Flow GPU sub-group)", -1, -1);
            continue;
        }
        cv = zs_t_alloc(b, b->q_comp, b->p_gpu, e * 4, 0,
                        "fp32 master conversion (transient)", -1, -1);
        zs_t_alloc(b, b->q_comp, b->p_gpu, e * 4, 0,
                   "fp32 master params (Twin-Flow GPU sub-group)", -1, -1);
        zs_t_free(b, b->q_comp, cv, -1);
    }
    for (int64_t i = 0; s->twin && i < nsub; i++) {
        int64_t e = (i == nsub - 1) ? T - i * sub : sub;
        if (sg_on_gpu(s, i, sub))
            zs_t_alloc(b, b->q_comp, b->p_gpu, e * s->mb, 0,
                       s->mb == 4 ? "fp32 grads (sub-group, Twin-Flow GPU)"
                                  : "bf16 grads (sub-group, Twin-Flow GPU)",
                       -1, -1);
    }
}

static void init_buffers(struct ds *s)
{
    struct zs_bctx *b = s->b;
    int q = b->q_host;
    b->phase = ZS_PH_INIT;

    init_gpu(s);
    /* host, per rank */
    zs_t_alloc(b, q, b->p_host, ZS_HOST_RUNTIME_BYTES, 0,
               "process runtime (python, torch, CUDA host side)", -1, -1);
    for (int i = 0; i < b->m->n_extra; i++)
        if (b->m->extra[i].placement_default == ZS_PLACE_CPU)
            zs_t_alloc(b, q, b->p_host, b->m->extra[i].params * 2, 0,
                       b->m->extra[i].name, -1, -1);
    if (s->zero3 && s->off_param && init_host_params(s))
        return;
    init_host_optimizer(s);
    init_twin_gpu(s);
    init_pinned_grad_buffer(s);
    /* initialize_optimizer_states (stage3.py :1251-1320, stage_1_and_2.py
     * :837-855 at edaa722): zero fp32 gradients on the optimizer's device,
     * without offload a GPU transient (ZeRO-3: gradient_buffer, the largest
     * sub-group; ZeRO-1/2: the partition), with the CPU optimizer the kept
     * fp32 grads (init_host_optimizer); before 0.13.2 a step on them made
     * the optimizer's states (eager_states), per sub-group as the steps
     * allocate them */
    if (b->T > 0) {
        int64_t T = b->T, sub = step_sub(s), nsub = (T + sub - 1) / sub;
        int32_t z = -1;
        if (!s->off_opt)
            z = zs_t_alloc(b, b->q_comp, b->p_gpu, (T < sub ? T : sub) * 4, 0,
                           "optimizer init gradients (fp32 zeros)", -1, -1);
        for (int64_t i = 0; eager_states(s) && i < nsub; i++) {
            int64_t e = (i == nsub - 1) ? T - i * sub : sub;
            if (s->off_opt || !zs_gpu_opt_paged(b->c, e))
                alloc_states(s, e, s->off_opt && !sg_on_gpu(s, i, sub), -1);
        }
        if (z >= 0)
            zs_t_free(b, b->q_comp, z, -1);
    }
}

/* A micro-step is built in two segments, its forward and its backward
 * (replay.c replays each on its own): the forward reads only whether it is
 * the first step's first (the trace RECORD, no prefetch), the backward also
 * the boundary and, with the optimizer offloaded, whether it is its step's
 * first (flush).  What a segment does not read is cleared, so that it does
 * not tell alike segments apart. */
static void ds_begin(void *ctx, int seg, bool boundary)
{
    struct ds *s = ctx;
    struct zs_bctx *b = s->b;
    if (seg == 0) {
        bool released = false;
        /* the coordinator records its trace during the first forward and
         * backward and completes it in reset_step, which runs after every
         * backward (stage3.py backward: v0.6.5:2538, v0.12.3:2139; from
         * 0.15.4, PR #6662, at the root module's pre-forward,
         * parameter_offload.py 0.19.6:297-302): from the second micro-step
         * on the trace is COMPLETE and prefetches */
        s->record = b->step == 1 && b->micro == 0;
        s->boundary = s->first_micro = false;
        /* the phase the micro-step finds is read only by the frees of its
         * opening release_all (tags): when it frees nothing the forward
         * starts in its own phase */
        for (int u = 0; u < b->nunits && !released; u++)
            released = b->avail[u] && !b->units[u].persistent;
        if (!released)
            b->phase = ZS_PH_FORWARD;
        return;
    }
    s->boundary = boundary;
    s->first_micro = s->off_opt && b->micro == 0;
}

static void ds_build(void *ctx, int seg)
{
    if (seg == 0)
        micro_forward(ctx);
    else
        micro_backward(ctx);
}

/* The micro-step's state (replay.c): struct ds whole, its task ids named;
 * per layer the saved activations; per unit whether a gather is waited
 * for; with NVMe parameter offload the reads in flight and the swap
 * buffers held.  The trace, its prefix sums, the units' hook counts and
 * the NVMe partition sizes are the build's constants; `chosen` and `group`
 * are scratch, written before they are read. */
static void ds_state(void *ctx, struct zs_rvisit *v)
{
    static const struct zs_rfield ids[] = {
        {offsetof(struct ds, fev), 2},
        {offsetof(struct ds, flush_ring), 2},
        {offsetof(struct ds, last_rs), 1},
        {offsetof(struct ds, act_saved), 1},
        {offsetof(struct ds, act_work), 1},
        {offsetof(struct ds, act_bwd), 1},
        {offsetof(struct ds, rc.layer), 1},
        {offsetof(struct ds, rc.fwd_ws), 1},
        {offsetof(struct ds, act_bwd_ws), 1},
        {offsetof(struct ds, logits_bf16), 1},
        {offsetof(struct ds, logprobs), ZS_LOSS_PIECES_MAX},
        {offsetof(struct ds, grad_swap), 1},
        {offsetof(struct ds, next_in), 1},
        {offsetof(struct ds, async_out), 1},
        {offsetof(struct ds, last_pread), 1},
    };
    struct ds *s = ctx;
    const struct zs_bctx *b = s->b;
    zs_rv_struct(v, s, sizeof *s, ids, (int)(sizeof ids / sizeof ids[0]));
    zs_rv_ids(v, s->layer_saved, (size_t)b->m->n_layers + 1);
    zs_rv_val(v, s->pending, (size_t)b->nunits * sizeof *s->pending);
    zs_rv_ids(v, s->held_grads, (size_t)b->nunits);
    if (s->pnvme) {
        zs_rv_ids(v, s->pread, (size_t)b->nunits);
        zs_rv_val(v, s->pslot, (size_t)b->nunits * sizeof *s->pslot);
    }
}

static void ds_opt(void *ctx, bool first)
{
    optimizer_step(ctx, first);
}

/* Twin-Flow: the GPU sub-groups' element range (config.c
 * zs_twin_gpu_groups: the first n - k sub-groups from 0.18.0, the last n - k
 * before); none when every sub-group is on the CPU. */
static void twin_init(struct ds *s)
{
    struct zs_bctx *b = s->b;
    int64_t T = b->T, sub = b->c->sub_group_size;
    int64_t n = T > 0 ? (T + sub - 1) / sub : 0, g0, g1;
    b->opt_groups = b->opt_groups_gpu = b->opt_gpu_elems = 0;
    if (!s->zero3 || b->c->offload_optimizer != ZS_OFF_CPU || n == 0)
        return;
    /* the sub-groups are reported whatever the ratio (plan.c twin_note) */
    b->opt_groups = n;
    zs_twin_gpu_groups(n, b->c->offload_ratio, &b->c->ds_version, &g0, &g1);
    b->opt_groups_gpu = g1 - g0;
    if (g1 <= g0)
        return;
    s->twin = true;
    s->tw_lo = g0 * sub;
    s->tw_hi = g1 * sub < T ? g1 * sub : T;
    b->opt_gpu_elems = s->tw_hi - s->tw_lo;
}

int zs_build_deepspeed(struct zs_bctx *b)
{
    struct zs_micro_ops ops = {2, {0, 0}, ds_begin, ds_build, ds_state,
                               ds_opt};
    struct ds s;
    int rc;
    memset(&s, 0, sizeof s);
    s.b = b;
    s.zero3 = b->c->zero == 3;
    s.off_opt = b->c->offload_optimizer != ZS_OFF_NONE;
    s.off_param = b->c->offload_param != ZS_OFF_NONE;
    s.mb = zs_cfg_param_bytes(b->c);
    s.sb = b->c->opt_state_dtype_resolved == ZS_DT_BF16 ? 2 : 4;
    s.nvme = b->c->offload_optimizer == ZS_OFF_NVME && b->l_nvme >= 0;
    s.pnvme = s.zero3 && b->c->offload_param == ZS_OFF_NVME && b->l_nvme >= 0;
    s.grad_swap = s.next_in = s.async_out = -1;
    s.flush_ring[0] = s.flush_ring[1] = -1;
    s.last_rs = -1;
    s.q_red = b->c->overlap_comm_on ? b->q_rs : b->q_comp;
    twin_init(&s);
    s.act_saved = s.act_work = s.act_bwd = s.act_bwd_ws = -1;
    rc = build_trace(&s);
    if (!rc && s.pnvme)
        rc = pnvme_init(&s);
    if (!rc) {
        s.held_grads = zs_malloc((size_t)(b->nunits > 0 ? b->nunits : 1) *
                                 sizeof *s.held_grads);
        if (!s.held_grads)
            rc = ZS_ENOMEM;
        else
            for (int u = 0; u < b->nunits; u++)
                s.held_grads[u] = -1;
    }
    if (rc)
        goto out;
    for (int u = 0; u < b->nunits; u++) {
        b->galloc[u] = -1;
        b->ready[u] = -1;
        b->avail[u] = false;
    }
    b->step = 0;
    b->micro = 0;
    /* what ds_begin sets for each segment */
    ops.pos_reads[0] = ZS_POS_FIRST_STEP;
    ops.pos_reads[1] = ZS_POS_FIRST_STEP | ZS_POS_LAST |
                       (s.off_opt ? ZS_POS_FIRST : 0);
    init_buffers(&s);
    zs_run_steps(b, &s, &ops);
    rc = b->failed;
out:
    zs_free(s.held_grads);
    ds_release_trace(&s);
    return rc;
}
