/*
 * sched_export.c — engine records + export sidecar -> zsim.schedule/1.
 *
 * Task ids are kept: engine task i becomes schedule task i, so dependencies
 * carry over unchanged.  Mapping: ALLOC/FREE as they are; PCIe flows ->
 * h2d/d2h; collective flows -> collective (one GPU: a local copy of the same
 * bytes); GEMM and memory-bound pieces -> gemm/elementwise; CPU optimizer
 * flows -> cpu_adam over the same elements; host hooks and waits ->
 * host_wait; joins -> mark, the host's "step end" marks numbered 1..N.
 */
#include "present/sched_export.h"
#include "formats/schedule_io.h"
#include "util/alloc.h"
#include "util/strutil.h"

#include <stdio.h>
#include <string.h>

static int map_coll(int c)
{
    switch (c) {
    case ZS_COLL_ALLGATHER:
        return ZS_SC_ALLGATHER;
    case ZS_COLL_REDUCESCATTER:
        return ZS_SC_REDUCESCATTER;
    case ZS_COLL_ALLREDUCE:
        return ZS_SC_ALLREDUCE;
    case ZS_COLL_REDUCE:
        return ZS_SC_REDUCE;
    default:
        return ZS_SC_ALLTOALL;
    }
}

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

static bool is_step_end(const struct zs_task_rec *r)
{
    return r->kind == ZS_TASK_MARK && r->name && !strcmp(r->name, "step end");
}

/* The header (what was simulated, rank, steps) and zsim's predicted peaks
 * and steady step time. */
static void export_header(struct zs_schedule *s, const struct zs_setup *su,
                          zs_sim *sim, const struct zs_sim_result *res,
                          int64_t rank)
{
    const struct zs_step_result *st = &res->steady;
    int32_t n = zs_sim_ntasks(sim);
    int64_t steps = 0;

    snprintf(s->header.zsim_version, sizeof s->header.zsim_version, "%s",
             ZS_VERSION);
    zs_strlcpy(s->header.model, su->model->name, sizeof s->header.model);
    zs_strlcpy(s->header.hardware, su->cluster->spec,
               sizeof s->header.hardware);
    zs_strlcpy(s->header.gpu, su->cluster->node.gpu.name, sizeof s->header.gpu);
    zs_strlcpy(s->header.framework, zs_framework_name(su->cfg->framework),
               sizeof s->header.framework);
    zs_cfg_summary(su->cfg, s->header.config, sizeof s->header.config);
    s->header.rank = rank;
    s->header.world = su->cfg->world;
    for (int32_t i = 0; i < n; i++)
        steps += is_step_end(zs_sim_task(sim, i));
    s->header.steps = steps;
    s->pred.peak_device_allocated_bytes =
        max64(res->first.peak_gpu_allocated, st->peak_gpu_allocated);
    s->pred.peak_device_reserved_bytes =
        max64(res->first.peak_gpu_reserved, st->peak_gpu_reserved);
    s->pred.peak_host_bytes =
        max64(res->first.peak_host_per_rank, st->peak_host_per_rank);
    s->pred.peak_pinned_bytes = st->pinned_host_per_rank;
    s->pred.step_time_ns = (int64_t)(st->time_s * 1e9);
}

/* One schedule queue per engine queue (queue 0, the host thread, first);
 * qmap[q] is its schedule index. */
static int export_queues(struct zs_schedule *s, zs_sim *sim, int *qmap,
                         struct zs_err *err)
{
    for (int q = 0; q < zs_sim_nqueues(sim); q++) {
        char shortn[32];
        zs_strlcpy(shortn, zs_sim_queue_name(sim, q), sizeof shortn);
        qmap[q] = zs_schedule_add_queue(s, shortn, q == 0, err);
        if (qmap[q] < 0)
            return qmap[q];
    }
    return 0;
}

/* The schedule kind of engine task r with its export sidecar x (NULL when
 * none): the mapping in this file's opening comment. */
static int task_kind(const struct zs_task_rec *r, const struct zs_xtask *x)
{
    bool host_q = r->queue == 0;
    if (!x || x->kind == ZS_X_NONE)
        return r->kind == ZS_TASK_DELAY && host_q ? ZS_SK_HOST_WAIT
                                                  : ZS_SK_MARK;
    switch (x->kind) {
    case ZS_X_ALLOC:
        return ZS_SK_ALLOC;
    case ZS_X_FREE:
        return ZS_SK_FREE;
    case ZS_X_H2D:
        return ZS_SK_H2D;
    case ZS_X_D2H:
        return ZS_SK_D2H;
    case ZS_X_GEMM:
        return ZS_SK_GEMM;
    case ZS_X_MEM:
        return x->bytes > 0 ? ZS_SK_ELEMENTWISE : ZS_SK_MARK;
    case ZS_X_COLL:
        return ZS_SK_COLLECTIVE;
    case ZS_X_CPU:
        return host_q && x->elements > 0 ? ZS_SK_CPU_ADAM : ZS_SK_HOST_WAIT;
    default:
        return ZS_SK_HOST_WAIT;
    }
}

/* The fields of task t that its kind carries.  x is not NULL for every kind
 * but mark and host_wait (task_kind). */
static void task_fields(struct zs_sched_task *t, int kind,
                        const struct zs_task_rec *r, const struct zs_xtask *x,
                        const struct zs_setup *su, int64_t *step_no)
{
    switch (kind) {
    case ZS_SK_ALLOC:
        t->bytes = x->bytes;
        t->pool = x->pool ? ZS_SP_HOST : ZS_SP_DEVICE;
        t->pinned = x->pool && x->pinned;
        break;
    case ZS_SK_FREE:
        t->buffer = x->buffer;
        t->empty_cache = x->empty_cache;
        break;
    case ZS_SK_H2D:
    case ZS_SK_D2H:
        t->bytes = x->bytes;
        t->pinned = x->pinned;
        t->host_buf = t->dev_buf = -1;
        break;
    case ZS_SK_GEMM:
        t->m = x->m;
        t->n = x->n;
        t->k = x->k;
        t->count = x->count > 0 ? x->count : 1;
        break;
    case ZS_SK_ELEMENTWISE:
        t->bytes = x->bytes;
        break;
    case ZS_SK_COLLECTIVE:
        t->bytes = x->bytes > 0 ? x->bytes : 1;
        t->coll = map_coll(x->coll);
        t->ranks = su->cfg->world;
        t->local = ZS_SL_COPY;
        break;
    case ZS_SK_CPU_ADAM:
        t->elements = x->elements;
        t->threads = su->cluster->node.cpu_cores / su->cfg->procs_per_node;
        t->adam_impl =
            su->cfg->framework == ZS_FW_FSDP2 ? ZS_SA_TORCH : ZS_SA_DEEPSPEED;
        for (int k = 0; k < 4; k++)
            t->adam_bufs[k] = -1;
        break;
    case ZS_SK_MARK:
        if (r->queue == 0 && is_step_end(r))
            t->step_end = ++(*step_no);
        break;
    default:
        break;
    }
}

/* Engine task i as schedule task i, with its dependencies. */
static int export_task(struct zs_schedule *s, const struct zs_setup *su,
                       zs_sim *sim, const struct zs_export *ex, const int *qmap,
                       int32_t i, int64_t *step_no, struct zs_err *err)
{
    const struct zs_task_rec *r = zs_sim_task(sim, i);
    const struct zs_xtask *x = (size_t)i < ex->n ? &ex->t[i] : NULL;
    struct zs_sched_task t;
    int kind = task_kind(r, x);
    int32_t deps[3];
    int nd = 0;
    int u = r->tag & 0xFFFF;

    zs_sched_task_init(&t, kind, qmap[r->queue], r->name ? r->name : "task");
    if (u != 0xFFFF)
        snprintf(t.owner, sizeof t.owner, "unit %d", u);
    else
        t.owner[0] = '\0';
    t.pred_start_ns = r->start_ns;
    t.pred_end_ns = r->end_ns;
    task_fields(&t, kind, r, x, su, step_no);
    if (x)
        for (int k = 0; k < x->ndeps && k < 3; k++)
            deps[nd++] = x->deps[k];
    if (zs_schedule_add(s, &t, deps, nd, err) < 0)
        return err->code ? err->code : ZS_ERUNTIME;
    return 0;
}

int zs_export_schedule(const struct zs_setup *su, zs_sim *sim,
                       const struct zs_export *ex,
                       const struct zs_sim_result *res, int64_t rank,
                       const char *path, struct zs_err *err)
{
    struct zs_schedule s;
    int *qmap = NULL; /* engine queue -> schedule queue, one per queue */
    int32_t n = zs_sim_ntasks(sim);
    int64_t step_no = 0;
    int rc = 0;

    zs_schedule_init(&s);
    export_header(&s, su, sim, res, rank);
    qmap = zs_calloc((size_t)zs_sim_nqueues(sim) + 1, sizeof *qmap);
    if (!qmap) {
        rc = zs_err_set(err, ZS_ENOMEM, "out of memory exporting '%s'", path);
        goto out;
    }
    rc = export_queues(&s, sim, qmap, err);
    for (int32_t i = 0; i < n && !rc; i++)
        rc = export_task(&s, su, sim, ex, qmap, i, &step_no, err);
    if (!rc)
        rc = zs_schedule_write(&s, path, err);
out:
    zs_free(qmap);
    zs_schedule_release(&s);
    return rc;
}
