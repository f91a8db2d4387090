/*
 * result.c — from engine records to per-step results: step time (with the
 * accumulation extrapolation of sched.h), memory peaks inside each step's
 * window with what was live at them, the step-time breakdown and the
 * bottleneck in words.
 *
 * Breakdown: the compute stream's busy time is "compute" (optimizer kernels
 * on it count as optimizer); each idle gap before a compute-stream task is
 * charged to what that task waited for, found by walking `blocked_by`
 * through host launches, marks and allocations that themselves started
 * inside the gap, until a collective, a PCIe copy or optimizer work is
 * found; a gap whose chain ends at host work is host overhead ("other").
 */
#include "sched/sched_int.h"
#include "util/alloc.h"
#include "util/units.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

const char *zs_cls_name(int cls)
{
    static const char *const n[] = {"compute",   "collective", "pcie",
                                    "optimizer", "host",       "memory",
                                    "sync",      "copy",       "nvme"};
    return cls >= 0 && cls < ZS_CLS_COUNT ? n[cls] : "?";
}

bool zs_tag_is_init(int32_t tag)
{
    return tag >= 0 && ZS_TAG_PHASE(tag) == ZS_PH_INIT &&
           ZS_TAG_STEP(tag) == 0;
}

const char *zs_phase_name(int ph)
{
    static const char *const n[] = {"init", "forward", "backward",
                                    "optimizer step"};
    return ph >= 0 && ph < ZS_PH_COUNT ? n[ph] : "?";
}

static int64_t tend(const struct zs_bctx *b, int32_t id)
{
    const struct zs_task_rec *r = id >= 0 ? zs_sim_task(b->sim, id) : NULL;
    return r ? r->end_ns : -1;
}

enum { BR_COMPUTE, BR_COLL, BR_PCIE, BR_OPT, BR_OTHER, BR_NVME, BR_N };

static int cls_bucket(int cls)
{
    switch (cls) {
    case ZS_CLS_COLL:
        return BR_COLL;
    case ZS_CLS_PCIE:
        return BR_PCIE;
    case ZS_CLS_OPT:
        return BR_OPT;
    case ZS_CLS_NVME:
        return BR_NVME;
    default:
        return BR_OTHER;
    }
}

/* Charges the idle gap [gap_start, gap_end) of the compute stream before
 * `task` along its chain of `blocked_by`: each task on the chain takes the
 * part of the gap it ran in (a reduce-scatter, then the blocking D2H copy,
 * then the CPU add that held the host, then the all-gather the host issued
 * late: each is charged its own time, issue 10 item 6), marks and
 * allocations pass through; what the chain does not cover is host time. */
static void charge_gap(const struct zs_bctx *b, int32_t task, int64_t gap_start,
                       int64_t gap_end, int64_t br[BR_N])
{
    int32_t t = zs_sim_task(b->sim, task)->blocked_by;
    int64_t cur = gap_end;
    for (int hops = 0; t >= 0 && cur > gap_start && hops < 4096; hops++) {
        const struct zs_task_rec *r = zs_sim_task(b->sim, t);
        int64_t s = r->start_ns > gap_start ? r->start_ns : gap_start;
        int64_t e = r->end_ns < cur ? r->end_ns : cur;
        if (r->kind != ZS_TASK_MARK && r->kind != ZS_TASK_ALLOC &&
            r->kind != ZS_TASK_FREE && e > s) {
            br[BR_OTHER] += cur - e; /* host in between */
            br[cls_bucket(r->cls)] += e - s;
            cur = s;
        }
        if (r->start_ns <= gap_start && r->kind != ZS_TASK_MARK &&
            r->kind != ZS_TASK_ALLOC && r->kind != ZS_TASK_FREE)
            break;
        t = r->blocked_by;
    }
    if (cur > gap_start)
        br[BR_OTHER] += cur - gap_start;
}

/* Breakdown of [t0, t1] into br[BR_N] nanoseconds (integers: a sum of
 * windows is exact, result.c step_result): the compute stream's DELAY and
 * FLOW tasks that ran in it, in id order.  The stream runs its tasks in
 * submission order (engine.h: a task starts after its queue predecessor
 * finished), so their start and end times grow with their ids and those
 * that overlap [t0, t1] are consecutive among the stream's: the scan starts
 * at the last stream task before `from` (the window's opening mark) that
 * ended by t0, and stops at the first that starts at t1 or later or never
 * started; the tasks it passes by would all be skipped. */
static void breakdown(const struct zs_bctx *b, int64_t t0, int64_t t1,
                      int32_t from, int32_t end_task, int64_t br[BR_N])
{
    int32_t n = zs_sim_ntasks(b->sim), i;
    const struct zs_task_rec *recs = zs_sim_tasks(b->sim);
    int64_t prev_end = t0;
    memset(br, 0, sizeof(int64_t) * BR_N);
    for (i = from < n ? from : n; i > 0; i--)
        if (recs[i - 1].queue == b->q_comp && recs[i - 1].end_ns >= 0 &&
            recs[i - 1].end_ns <= t0)
            break;
    for (; i < n; i++) {
        const struct zs_task_rec *r = &recs[i];
        int64_t s, e;
        if (r->queue != b->q_comp)
            continue;
        s = r->start_ns;
        e = r->end_ns;
        if (s < 0 || s >= t1)
            break;
        if ((r->kind != ZS_TASK_DELAY && r->kind != ZS_TASK_FLOW) || e <= t0)
            continue;
        if (s < t0)
            s = t0;
        if (e > t1)
            e = t1;
        if (s > prev_end)
            charge_gap(b, i, prev_end, s, br);
        if (r->cls == ZS_CLS_OPT)
            br[BR_OPT] += e - s;
        else if (r->cls == ZS_CLS_COLL)
            br[BR_COLL] += e - s;
        else if (r->cls == ZS_CLS_PCIE)
            br[BR_PCIE] += e - s;
        else
            br[BR_COMPUTE] += e - s;
        if (e > prev_end)
            prev_end = e;
    }
    if (t1 > prev_end && end_task >= 0)
        charge_gap(b, end_task, prev_end, t1, br);
}

/* Peak of a pool within [t0, t1]: the log index of the maximum. */
static int64_t window_peak(const struct zs_bctx *b, int pool, int64_t t0,
                           int64_t t1, bool reserved, int64_t *value)
{
    int64_t n, best = -1, bestv = -1, before = 0;
    const struct zs_mem_event *log = zs_sim_pool_log(b->sim, pool, &n);
    for (int64_t i = 0; i < n; i++) {
        int64_t v = reserved ? log[i].reserved : log[i].allocated;
        if (log[i].t_ns < t0) {
            before = v;
            continue;
        }
        if (log[i].t_ns > t1)
            break;
        if (v > bestv) {
            bestv = v;
            best = i;
        }
    }
    if (bestv < before) {
        bestv = before;
        best = -1;
    }
    *value = bestv;
    return best;
}

/* The micro-step (1-based, of its step) task `task` of step `step` (its
 * tag's; 0: init) belongs to: the last simulated micro-step whose start
 * mark precedes it in id order (tasks are built in program order; the
 * optimizer step counts with the last micro-step, init with the first). */
static int64_t micro_of_task(const struct zs_bctx *b, int step, int32_t task)
{
    int st = step - 1, lo = 0, hi;
    if (st < 0 || st >= b->nsteps || b->nmicro_sim[st] < 1)
        return 1;
    hi = b->nmicro_sim[st] - 1;
    while (lo < hi) { /* the largest mi with micro_start <= task */
        int mid = (lo + hi + 1) / 2;
        int32_t m = b->micro_start[zs_micro_at(b, st, mid)];
        if (m >= 0 && m <= task)
            lo = mid;
        else
            hi = mid - 1;
    }
    return zs_micro_number(b, st, lo);
}

static void describe_task(const struct zs_bctx *b, int32_t task, char *buf,
                          size_t cap)
{
    const struct zs_task_rec *r = zs_sim_task(b->sim, task);
    char unit[96];
    int tag = r->tag;
    int u = ZS_TAG_UNIT(tag);
    long long micro = (long long)micro_of_task(b, ZS_TAG_STEP(tag), task);
    if (u == ZS_NO_UNIT)
        snprintf(buf, cap, "%s, step %d micro-step %lld",
                 zs_phase_name(ZS_TAG_PHASE(tag)), ZS_TAG_STEP(tag), micro);
    else
        snprintf(buf, cap, "%s of %s, step %d micro-step %lld",
                 zs_phase_name(ZS_TAG_PHASE(tag)),
                 zs_unit_name(b, u, unit, sizeof unit), ZS_TAG_STEP(tag),
                 micro);
}

/* What was live just after log index seq, grouped by buffer name.  0 or
 * ZS_ENOMEM (never an empty list in place of a failure). */
static int live_set(const struct zs_bctx *b, int pool, int64_t seq,
                    struct zs_live_buf *out, int *nout)
{
    int64_t n, total;
    int32_t *tasks;
    struct agg {
        const char *name;
        int64_t bytes;
        int count;
    } *g = NULL;
    int ng = 0, rc = ZS_ENOMEM;
    *nout = 0;
    zs_sim_pool_log(b->sim, pool, &n);
    if (seq < 0 || n == 0)
        return 0;
    total = zs_sim_pool_live_at(b->sim, pool, seq, NULL, 0);
    if (total <= 0)
        return 0;
    tasks = zs_calloc((size_t)total, sizeof *tasks);
    g = zs_calloc((size_t)total, sizeof *g);
    if (!tasks || !g)
        goto out;
    zs_sim_pool_live_at(b->sim, pool, seq, tasks, total);
    /* sizes are the requested bytes, as the log's alloc events record them */
    for (int64_t i = 0; i < total; i++) {
        const char *name = zs_sim_task(b->sim, tasks[i])->name;
        int k;
        for (k = 0; k < ng; k++)
            if (g[k].name == name || !strcmp(g[k].name, name))
                break;
        if (k == ng) {
            g[ng].name = name;
            g[ng].bytes = 0;
            g[ng].count = 0;
            ng++;
        }
        g[k].bytes += zs_sim_alloc_bytes(b->sim, tasks[i]);
        g[k].count++;
    }
    for (int k = 0; k < ZS_LIVE_MAX && k < ng; k++) {
        int best = -1;
        for (int j = 0; j < ng; j++)
            if (g[j].count && (best < 0 || g[j].bytes > g[best].bytes))
                best = j;
        if (best < 0)
            break;
        if (g[best].count > 1)
            snprintf(out[k].name, sizeof out[k].name, "%s (x%d)", g[best].name,
                     g[best].count);
        else
            snprintf(out[k].name, sizeof out[k].name, "%s", g[best].name);
        out[k].bytes = g[best].bytes;
        g[best].count = 0;
        (*nout)++;
    }
    rc = 0;
out:
    zs_free(tasks);
    zs_free(g);
    return rc;
}

/* What was live at a pool's peak (event seq; < 0: none): the task that made
 * it and the largest buffers.  Errors: ZS_ENOMEM. */
static int peak_what(const struct zs_bctx *b, int pool, int64_t seq,
                     char *where, size_t cap, struct zs_live_buf *live,
                     int *nlive)
{
    int64_t n;
    const struct zs_mem_event *log;
    if (seq < 0)
        return 0;
    log = zs_sim_pool_log(b->sim, pool, &n);
    describe_task(b, log[seq].task, where, cap);
    return live_set(b, pool, seq, live, nlive);
}

/* The largest of the step's time shares, in words: "<part>: N% of the step". */
static void name_bottleneck(const int64_t br[BR_N], struct zs_step_result *r)
{
    const char *names[BR_N] = {"GPU compute", "exposed collectives",
                               "host<->GPU copies (PCIe)", "the optimizer",
                               "host overhead (hooks, launches, syncs)",
                               "NVMe swap (aio reads and writes)"};
    int best = 0;
    for (int i = 1; i < BR_N; i++)
        if (br[i] > br[best])
            best = i;
    snprintf(r->bottleneck, sizeof r->bottleneck, "%s: %.0f%% of the step",
             names[best],
             r->time_ns > 0 ? 100.0 * (double)br[best] / (double)r->time_ns
                            : 0);
}

/* The snapshots at the starts of step st's last steady micro-step (s0) and
 * of its boundary (s1), taken by the run (emit.c zs_run_steps).  False when
 * the step simulated every micro-step or the boundary did not start. */
static bool shortcut_marks(const struct zs_bctx *b, int st,
                           struct zs_snapshot *s0, struct zs_snapshot *s1)
{
    int nm = b->nmicro_sim[st];
    if (nm < 1 || nm >= b->c->accum)
        return false;
    return !zs_sim_snapshot(b->sim, b->micro_start[zs_micro_at(b, st, nm - 2)],
                            s0) &&
           !zs_sim_snapshot(b->sim, b->micro_start[zs_micro_at(b, st, nm - 1)],
                            s1) &&
           s1->t_ns >= 0;
}

bool zs_shortcut_proved(const struct zs_bctx *b, int st)
{
    struct zs_snapshot s0, s1;
    int nm = b->nmicro_sim[st];
    if (nm < 1 || nm >= b->c->accum)
        return true;
    if (!shortcut_marks(b, st, &s0, &s1)) {
        /* the boundary's mark did not run (the run stopped before it), or
         * it was never submitted (the prefix cut counted it) */
        struct zs_snapshot x;
        int32_t m = b->micro_start[zs_micro_at(b, st, nm - 1)];
        return m < 0 || m >= zs_sim_ntasks(b->sim) ||
               (!zs_sim_snapshot(b->sim, m, &x) && x.t_ns < 0);
    }
    return s0.t_ns >= 0 && s0.quiet && s1.quiet && s0.state == s1.state;
}

/* Cache flushes of the whole run with every micro-step simulated: the
 * run's, and for each step under the shortcut its last steady
 * micro-step's once for each micro-step not simulated (proved alike). */
static int64_t run_cache_flushes(const struct zs_bctx *b)
{
    struct zs_pool_stats ps;
    int64_t n;
    zs_sim_pool_stats(b->sim, b->p_gpu, &ps);
    n = ps.cache_flushes;
    for (int st = 0; st < b->nsteps; st++) {
        struct zs_snapshot s0, s1;
        if (shortcut_marks(b, st, &s0, &s1))
            n += (b->c->accum - b->nmicro_sim[st]) *
                 (s1.cache_flushes - s0.cache_flushes);
    }
    return n;
}

/* 0 or ZS_ENOMEM */
static int step_result(struct zs_bctx *b, int st, struct zs_sim_result *res,
                       struct zs_step_result *r)
{
    const struct zs_cfg *c = b->c;
    int64_t t0 = tend(b, b->step_start[st]), t1 = tend(b, b->step_end[st]);
    int64_t br[BR_N], brm[BR_N];
    int64_t v, seq;
    memset(r, 0, sizeof *r);
    if (t0 < 0 || t1 < 0)
        return 0;
    r->t0_ns = t0;
    r->t1_ns = t1;
    r->time_ns = t1 - t0;
    breakdown(b, t0, t1, b->step_start[st], b->step_end[st], br);
    if (c->accum > b->nmicro_sim[st]) {
        /* the shortcut (sched.h): the simulated steady micro-step, the one
         * before the boundary, stands for the ones not simulated */
        int nm = b->nmicro_sim[st];
        int k = nm - 2;
        int64_t m0 = tend(b, b->micro_start[zs_micro_at(b, st, k)]),
                m1 = tend(b, b->micro_start[zs_micro_at(b, st, k + 1)]);
        int64_t times = c->accum - nm;
        assert(nm >= 3);
        r->time_ns += times * (m1 - m0);
        breakdown(b, m0, m1, b->micro_start[zs_micro_at(b, st, k)],
                  b->micro_start[zs_micro_at(b, st, k + 1)], brm);
        for (int i = 0; i < BR_N; i++)
            br[i] += brm[i] * times;
    }
    r->time_s = (double)r->time_ns * 1e-9;
    r->br_compute = (double)br[BR_COMPUTE] * 1e-9;
    r->br_coll = (double)br[BR_COLL] * 1e-9;
    r->br_pcie = (double)br[BR_PCIE] * 1e-9;
    r->br_opt = (double)br[BR_OPT] * 1e-9;
    r->br_other = (double)br[BR_OTHER] * 1e-9;
    r->br_nvme = (double)br[BR_NVME] * 1e-9;
    name_bottleneck(br, r);
    r->tokens_per_s_per_gpu = r->time_s > 0 ? (double)c->tokens_per_step /
                                                  (double)c->world / r->time_s
                                            : 0;
    r->mfu = r->tokens_per_s_per_gpu * res->model_flops_per_token /
             b->node->gpu.peak_bf16_flops;

    seq = window_peak(b, b->p_gpu, t0, t1, false, &v);
    r->peak_gpu_allocated = v;
    if (peak_what(b, b->p_gpu, seq, r->gpu_peak_where,
                  sizeof r->gpu_peak_where, r->gpu_live, &r->n_gpu_live))
        return ZS_ENOMEM;
    window_peak(b, b->p_gpu, t0, t1, true, &v);
    r->peak_gpu_reserved = v;
    seq = window_peak(b, b->p_host, t0, t1, true, &v);
    r->peak_host_per_rank = v;
    r->peak_host_per_node = v * c->procs_per_node;
    if (peak_what(b, b->p_host, seq, r->host_peak_where,
                  sizeof r->host_peak_where, r->host_live, &r->n_host_live))
        return ZS_ENOMEM;
    {
        struct zs_pool_stats ps;
        zs_sim_pool_stats(b->sim, b->p_host, &ps);
        r->pinned_host_per_rank = ps.peak_pinned;
        r->pinned_host_per_node = ps.peak_pinned * c->procs_per_node;
        r->cache_flushes = run_cache_flushes(b);
    }
    return 0;
}

/* First log event where the node's host memory exceeds its capacity. */
static int64_t host_crossing(const struct zs_bctx *b, int64_t cap_per_node,
                             int64_t *peak)
{
    int64_t n, first = -1;
    const struct zs_mem_event *log = zs_sim_pool_log(b->sim, b->p_host, &n);
    *peak = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t node = log[i].reserved * b->c->procs_per_node;
        if (node > *peak)
            *peak = node;
        if (first < 0 && node > cap_per_node)
            first = i;
    }
    return first;
}

static void oom_from_task(const struct zs_bctx *b, int32_t task,
                          struct zs_oom_info *o)
{
    const struct zs_task_rec *r = zs_sim_task(b->sim, task);
    int u = ZS_TAG_UNIT(r->tag);
    snprintf(o->phase, sizeof o->phase, "%s",
             zs_phase_name(ZS_TAG_PHASE(r->tag)));
    o->step = ZS_TAG_STEP(r->tag);
    o->micro = (int)micro_of_task(b, o->step, task);
    if (u == ZS_NO_UNIT)
        snprintf(o->module, sizeof o->module, "%s", r->name ? r->name : "-");
    else {
        char un[96];
        snprintf(o->module, sizeof o->module, "%s (%s)",
                 zs_unit_name(b, u, un, sizeof un), r->name ? r->name : "-");
    }
}

int zs_reduce_results(struct zs_bctx *b, int run_rc, struct zs_sim_result *res)
{
    int64_t gpu_oom_t = -1, hpeak, hseq;
    const struct zs_oom *oo = zs_sim_oom(b->sim);
    res->events = zs_sim_events(b->sim);
    memset(&res->then, 0, sizeof res->then);
    if (run_rc == ZS_SIM_OOM && oo && oo->pool == b->p_gpu) {
        gpu_oom_t = oo->t_ns;
        res->oom.where = ZS_OOM_GPU;
        res->oom.request_bytes = oo->requested;
        res->oom.needed_bytes = oo->allocated + oo->requested;
        res->oom.allocated_at_oom = oo->allocated;
        res->oom.reserved_at_oom = oo->reserved;
        res->oom.available_bytes = oo->capacity;
        oom_from_task(b, oo->task, &res->oom);
    }
    hseq = host_crossing(b, res->host_capacity_per_node, &hpeak);
    if (hseq >= 0) {
        int64_t n;
        const struct zs_mem_event *log = zs_sim_pool_log(b->sim, b->p_host, &n);
        if (gpu_oom_t < 0 || log[hseq].t_ns <= gpu_oom_t) {
            /* the host ran out first; a GPU OOM after it stays known */
            if (gpu_oom_t >= 0)
                res->then = res->oom;
            memset(&res->oom, 0, sizeof res->oom);
            res->oom.where = ZS_OOM_HOST;
            res->oom.needed_bytes = hpeak;
            res->oom.available_bytes = res->host_capacity_per_node;
            res->oom.request_bytes = log[hseq].bytes * b->c->procs_per_node;
            oom_from_task(b, log[hseq].task, &res->oom);
        }
    }
    if (b->nsteps >= 1 && tend(b, b->step_end[0]) >= 0 &&
        step_result(b, 0, res, &res->first))
        return ZS_ENOMEM;
    if (b->nsteps >= 2 && tend(b, b->step_end[b->nsteps - 1]) >= 0) {
        if (step_result(b, b->nsteps - 1, res, &res->steady))
            return ZS_ENOMEM;
    } else if (b->nsteps == 1)
        res->steady = res->first;
    return 0;
}

/* estimate_zero3_model_states_mem_needs (deepspeed/runtime/zero/stage3.py;
 * peer-tools.md §1.2), with zero_init from the config and the default
 * additional_buffer_factor 1.5. */
void zs_deepspeed_estimate(const struct zs_setup *su, int64_t *gpu_bytes,
                           int64_t *host_bytes_per_node)
{
    const struct zs_cfg *c = su->cfg;
    double total = (double)su->model->params_total;
    double largest = (double)su->model->largest_leaf_params;
    double gpn = (double)c->procs_per_node,
           nodes = (double)(c->world / c->procs_per_node);
    double total_gpus = gpn * nodes, gpus_factor = 1.0 / nodes, abf = 1.5;
    bool zi = c->zero_init != ZS_NO;
    double largest_mem = 4 * largest, gpu, cpu;
    if (c->offload_optimizer != ZS_OFF_NONE) {
        /* host bytes per param: 18 offloading params too, else 16; without
         * zero.Init at least the 4 * gpn of the fp32 model per GPU */
        double per = c->offload_param != ZS_OFF_NONE ? 18 : 16;
        double need = per * gpus_factor;
        gpu = largest_mem + (c->offload_param != ZS_OFF_NONE
                                 ? 0
                                 : (double)(int64_t)(2 * total / total_gpus));
        cpu = total * (zi || 4 * gpn <= need ? need : 4 * gpn) * abf;
    } else {
        gpu = largest_mem + (double)(int64_t)(18 * total / total_gpus);
        cpu = (zi ? largest : total) * 4 * gpn * abf;
    }
    *gpu_bytes = (int64_t)gpu;
    *host_bytes_per_node = (int64_t)cpu;
}
