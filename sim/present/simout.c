/*
 * simout.c — see simout.h.  Everything a person reads about one simulation
 * comes from here, so simulate, plan and the whole-run report say things the
 * same way.
 */
#include "present/simout.h"
#include "present/emit.h"
#include "util/alloc.h"
#include "util/table.h"
#include "util/units.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

const char *zs_verdict_key(const struct zs_sim_result *res)
{
    switch (res->oom.where) {
    case ZS_OOM_GPU:
        return "gpu_oom";
    case ZS_OOM_HOST:
        return "host_oom";
    default:
        return "fits";
    }
}

/* "GPU OOM in <phase> of <module> (step s, micro-step m): needs N of C",
 * or, when it would fit by count but not by blocks, what PyTorch's OOM
 * message says (tried to allocate, allocated, reserved). */
static void gpu_oom_verdict(const struct zs_oom_info *o, char *buf, size_t cap)
{
    char a[32], b[32];
    if (o->needed_bytes <= o->available_bytes) {
        char q[32], rs[32];
        snprintf(buf, cap,
                 "GPU OOM in %s of %s (step %d, micro-step %d): fragmentation: "
                 "tried to allocate %s with %s allocated and %s reserved of %s",
                 o->phase, o->module, o->step, o->micro,
                 zs_fmt_bytes(q, sizeof q, o->request_bytes),
                 zs_fmt_bytes(a, sizeof a, o->allocated_at_oom),
                 zs_fmt_bytes(rs, sizeof rs, o->reserved_at_oom),
                 zs_fmt_bytes(b, sizeof b, o->available_bytes));
        return;
    }
    snprintf(buf, cap,
             "GPU OOM in %s of %s (step %d, micro-step %d): needs %s of %s",
             o->phase, o->module, o->step, o->micro,
             zs_fmt_bytes(a, sizeof a, o->needed_bytes),
             zs_fmt_bytes(b, sizeof b, o->available_bytes));
}

/* "host OOM in <phase> (step s, <module>): needs N of C host RAM per
 * node". */
static void host_oom_verdict(const struct zs_oom_info *o, char *buf,
                             size_t cap)
{
    char a[32], b[32];
    snprintf(buf, cap,
             "host OOM in %s (step %d, %s): needs %s of %s host RAM per node",
             o->phase, o->step, o->module,
             zs_fmt_bytes(a, sizeof a, o->needed_bytes),
             zs_fmt_bytes(b, sizeof b, o->available_bytes));
}

/* An OOM verdict, then "; then <the other memory's OOM>" where the run hit
 * one after it (zs_sim_result.then): fixing one memory alone would not
 * make it fit. */
static void oom_verdict(const struct zs_sim_result *r, char *buf, size_t cap)
{
    char t[400];
    size_t len;
    if (r->oom.where == ZS_OOM_GPU)
        gpu_oom_verdict(&r->oom, buf, cap);
    else
        host_oom_verdict(&r->oom, buf, cap);
    if (r->then.where == ZS_OOM_NONE)
        return;
    if (r->then.where == ZS_OOM_GPU)
        gpu_oom_verdict(&r->then, t, sizeof t);
    else
        host_oom_verdict(&r->then, t, sizeof t);
    len = strlen(buf);
    if (len < cap)
        snprintf(buf + len, cap - len, "; then %s", t);
}

void zs_simout_verdict(const struct zs_simout *o, char *buf, size_t cap)
{
    const struct zs_sim_result *r = o->res;
    char t[32], h1[32], h2[32];
    if (r->oom.where != ZS_OOM_NONE) {
        oom_verdict(r, buf, cap);
        return;
    }
    {
        const struct zs_step_result *s = &r->steady;
        int64_t gpu_peak = s->peak_gpu_reserved > r->first.peak_gpu_reserved
                               ? s->peak_gpu_reserved
                               : r->first.peak_gpu_reserved;
        int64_t host_peak = s->peak_host_per_node > r->first.peak_host_per_node
                                ? s->peak_host_per_node
                                : r->first.peak_host_per_node;
        snprintf(
            buf, cap,
            "fits: steady step %s, %.0f tok/s per GPU, MFU %.1f%%; headroom %s "
            "GPU, %s "
            "host per node",
            zs_fmt_seconds(t, sizeof t, s->time_s), s->tokens_per_s_per_gpu,
            s->mfu * 100,
            zs_fmt_bytes(h1, sizeof h1, r->gpu_capacity_bytes - gpu_peak),
            zs_fmt_bytes(h2, sizeof h2, r->host_capacity_per_node - host_peak));
    }
}

void zs_simout_reserved_line(FILE *out, const struct zs_cfg *c,
                             const char *on_every, const char *tail)
{
    char a[32];
    if (!c->gpu_reserved_bytes)
        return;
    zs_fmt_bytes(a, sizeof a, c->gpu_reserved_bytes);
    if (!c->gpu_reserved_gpus)
        fprintf(out, "          %s %s\n", a, on_every);
    else
        fprintf(out,
                "          %s held by another process on the last %lld GPUs of "
                "each node%s\n",
                a, (long long)c->gpu_reserved_gpus, tail);
}

static void pct(char *buf, size_t cap, double part, double whole)
{
    char s[32];
    zs_fmt_seconds(s, sizeof s, part);
    snprintf(buf, cap, "%s (%.0f%%)", s, whole > 0 ? 100 * part / whole : 0);
}

static void live_table(FILE *out, const char *title, const char *where,
                       const struct zs_live_buf *live, int n, int64_t total)
{
    struct zs_table *t;
    char b[32];
    if (!n)
        return;
    fprintf(out, "%s: %s at %s\n", title, zs_fmt_bytes(b, sizeof b, total),
            where);
    t = zs_table_new(2, "lr");
    if (!t)
        return;
    for (int i = 0; i < n; i++)
        zs_table_rowf(t, "%s\t%s", live[i].name,
                      zs_fmt_bytes(b, sizeof b, live[i].bytes));
    zs_table_print(t, out, 2);
    zs_table_free(t);
}

/* How an FSDP2-path run reduces its gradients, for the setup block. */
static const char *grads_text(const struct zs_cfg *c, char *buf, size_t cap)
{
    if (c->sharding == ZS_SHARD_NONE)
        return c->optimizer_in_bwd
                   ? "one device: each grad stepped and freed in backward "
                     "(optimizer_in_bwd), no collectives"
                   : "one device: grads accumulated in place "
                     "(AccumulateGrad), no collectives";
    if (c->sharding == ZS_SHARD_NO_SHARD) {
        snprintf(buf, cap, "reduce %s, FSDP1 NO_SHARD: each flat grad "
                 "all-reduced in place%s",
                 zs_dtype_name(c->reduce_dtype_resolved),
                 zs_cfg_grads_held_unsharded(c)
                     ? " on the last micro-step (no_sync)"
                     : " every micro-step");
        return buf;
    }
    snprintf(buf, cap, "reduce %s, %s",
             zs_dtype_name(c->reduce_dtype_resolved),
             zs_cfg_grads_held_unsharded(c)
                 ? "unsharded grads held across accumulation (no_sync), "
                   "one reduce-scatter per step"
                 : "reduce-scatter every micro-step");
    return buf;
}

/* Model, hardware, configuration, launch line and reserved memory. */
static void print_setup(const struct zs_simout *o, FILE *out)
{
    const struct zs_setup *su = o->su;
    const struct zs_cluster *cl = su->cluster;
    const struct zs_model *m = su->model;
    const struct zs_cfg *c = su->cfg;
    char buf[512], a[32];

    fprintf(out, "model:    %s (%s params) <- %s\n", m->name,
            zs_fmt_count(a, sizeof a, (double)m->params_total),
            m->resolved_from);
    fprintf(
        out,
        "hardware: %s: %d x %d %s, %s host RAM per node, %d cores per node\n",
        cl->spec, cl->nodes, (int)c->procs_per_node, cl->node.gpu.name,
        zs_fmt_bytes(a, sizeof a, cl->node.host_ram_bytes), cl->node.cpu_cores);
    zs_cfg_summary(c, buf, sizeof buf);
    fprintf(out, "config:   %s\n", buf);
    fprintf(out, "          global batch %lld sequences (%lld tokens)",
            (long long)(c->micro_batch * c->accum * c->dp),
            (long long)c->tokens_per_step);
    /* the DeepSpeed release, its pinning and zero.Init mean nothing to a
     * PyTorch FSDP2 or single-device run */
    if (c->framework == ZS_FW_DEEPSPEED)
        fprintf(out, ", DeepSpeed %s, pin_memory %s, zero.Init %s",
                c->deepspeed_version, c->pin_optimizer ? "yes" : "no",
                c->zero_init == ZS_NO ? "no" : "yes");
    if (c->framework == ZS_FW_DEEPSPEED &&
        c->param_dtype_resolved == ZS_DT_BF16)
        fputs(c->opt_state_dtype_resolved == ZS_DT_BF16
                  ? ", bf16 master weights + optimizer states"
                  : ", bf16 master weights, fp32 optimizer states",
              out);
    fputc('\n', out);
    if (c->framework == ZS_FW_FSDP2)
        fprintf(out, "          trainer %s: params %s, %s\n",
                zs_trainer_name(c->trainer),
                zs_dtype_name(c->param_dtype_resolved),
                grads_text(c, buf, sizeof buf));
    zs_cfg_kernels_text(c, buf, sizeof buf);
    fprintf(out, "          %s\n", buf);
    if (c->offload_optimizer != ZS_OFF_NONE ||
        c->offload_param != ZS_OFF_NONE) {
        /* what the CPU optimizer phase assumed, as the command to run */
        zs_launch_line(c, &cl->node, cl->nodes,
                       c->framework == ZS_FW_DEEPSPEED && c->ds_config[0]
                           ? c->ds_config
                           : NULL,
                       buf, sizeof buf);
        fprintf(out, "launch:   %s\n", buf);
    }
    zs_simout_reserved_line(
        out, c, "held on every GPU by another process",
        !c->gpu_reserved_gpus ? ""
        : zs_reserved_on_rank(c, &su->cluster->node)
            ? ": training shares them (the worst rank is simulated)"
            : ": training does not use them");
}

/* The rows of the first-step / steady-step table: how a cell is worded
 * and the zs_step_result field it shows. */
enum step_cell {
    SC_SECONDS,  /* double, seconds */
    SC_TOKENS,   /* double, "%.0f" */
    SC_PERCENT,  /* double fraction, "%.1f%%" */
    SC_BYTES,    /* int64_t bytes */
    SC_PAGEABLE, /* peak host per node less its pinned part */
    SC_SHARE,    /* double seconds, with its share of the step time */
    SC_COUNT     /* int64_t */
};

#define SR(label, cell, field)                                                 \
    {                                                                          \
        label, cell, offsetof(struct zs_step_result, field)                    \
    }
static const struct {
    const char *label;
    enum step_cell cell;
    size_t off;
} k_step_rows[] = {
    SR("step time", SC_SECONDS, time_s),
    SR("tokens/s per GPU", SC_TOKENS, tokens_per_s_per_gpu),
    SR("MFU", SC_PERCENT, mfu),
    SR("peak GPU allocated", SC_BYTES, peak_gpu_allocated),
    SR("peak GPU reserved", SC_BYTES, peak_gpu_reserved),
    SR("peak host per node", SC_BYTES, peak_host_per_node),
    SR("  pinned", SC_BYTES, pinned_host_per_node),
    SR("  pageable", SC_PAGEABLE, peak_host_per_node),
    SR("  per rank", SC_BYTES, peak_host_per_rank),
    SR("compute", SC_SHARE, br_compute),
    SR("exposed collectives", SC_SHARE, br_coll),
    SR("exposed PCIe", SC_SHARE, br_pcie),
    SR("exposed NVMe swap", SC_SHARE, br_nvme), /* when either step swaps */
    SR("optimizer", SC_SHARE, br_opt),
    SR("other (host)", SC_SHARE, br_other),
    SR("allocator cache flushes", SC_COUNT, cache_flushes),
};
#undef SR

static void step_cell(char *b, size_t cap, enum step_cell k, size_t off,
                      const struct zs_step_result *s)
{
    const char *field = (const char *)s + off;
    double d = 0;
    int64_t n = 0;
    if (k == SC_BYTES || k == SC_PAGEABLE || k == SC_COUNT)
        memcpy(&n, field, sizeof n);
    else
        memcpy(&d, field, sizeof d);
    switch (k) {
    case SC_SECONDS:
        zs_fmt_seconds(b, cap, d);
        break;
    case SC_TOKENS:
        snprintf(b, cap, "%.0f", d);
        break;
    case SC_PERCENT:
        snprintf(b, cap, "%.1f%%", d * 100);
        break;
    case SC_BYTES:
        zs_fmt_bytes(b, cap, n);
        break;
    case SC_PAGEABLE:
        zs_fmt_bytes(b, cap, n - s->pinned_host_per_node);
        break;
    case SC_SHARE:
        pct(b, cap, d, s->time_s);
        break;
    default:
        snprintf(b, cap, "%lld", (long long)n);
        break;
    }
}

/* -1 when out of memory (the report stops there). */
static int step_table(const struct zs_sim_result *r, FILE *out)
{
    struct zs_table *t = zs_emit_table(3, "lrr", "\tfirst step\tsteady step");
    bool nvme = r->first.br_nvme > 0 || r->steady.br_nvme > 0;
    if (!t)
        return -1;
    for (size_t i = 0; i < ZS_EMIT_COUNT(k_step_rows); i++) {
        char c0[48], c1[48];
        if (k_step_rows[i].off == offsetof(struct zs_step_result, br_nvme) &&
            !nvme)
            continue;
        step_cell(c0, sizeof c0, k_step_rows[i].cell, k_step_rows[i].off,
                  &r->first);
        step_cell(c1, sizeof c1, k_step_rows[i].cell, k_step_rows[i].off,
                  &r->steady);
        zs_table_rowf(t, "%s\t%s\t%s", k_step_rows[i].label, c0, c1);
    }
    zs_table_print(t, out, 2);
    zs_table_free(t);
    return 0;
}

/* What the GPU and host hold for training, activation offload, and the
 * steady step's bottleneck. */
/* bitsandbytes paged optimizer states (sched/gpuopt.c): outside PyTorch's
 * allocator, so in no peak above; the GPU holds what is free beside the
 * allocator's steady peak reserved, the driver evicts the rest to host. */
/* Twin-Flow (offload_optimizer.ratio < 1): which sub-groups DeepSpeed
 * steps where; it maps whole sub-groups, so a ratio can move none. */
static void twin_line(const struct zs_cfg *c, const struct zs_sim_result *r,
                      FILE *out)
{
    if (!(c->offload_ratio < 1.0) || r->opt_groups <= 0)
        return;
    if (r->opt_groups_gpu <= 0) {
        fprintf(out,
                "  Twin-Flow: offload_optimizer.ratio %g moves none of the "
                "%lld optimizer sub-group%s to the GPU (DeepSpeed maps whole "
                "sub-groups); a smaller --sub-group-size splits them\n",
                c->offload_ratio, (long long)r->opt_groups,
                r->opt_groups == 1 ? "" : "s");
        return;
    }
    fprintf(out,
            "  Twin-Flow: offload_optimizer.ratio %g: %lld of %lld optimizer "
            "sub-groups (%.3g G elements per rank) stepped on the GPU by "
            "torch.optim.AdamW, %lld by DeepSpeedCPUAdam\n",
            c->offload_ratio, (long long)r->opt_groups_gpu,
            (long long)r->opt_groups, (double)r->opt_gpu_elems / 1e9,
            (long long)(r->opt_groups - r->opt_groups_gpu));
}

static void paged_line(const struct zs_sim_result *r, FILE *out)
{
    char a[32], b[32];
    int64_t held = r->gpu_capacity_bytes - r->steady.peak_gpu_reserved;
    if (r->paged_state_bytes <= 0)
        return;
    if (held < 0)
        held = 0;
    fprintf(out,
            "  paged optimizer states %s (cudaMallocManaged, outside the "
            "allocator's peaks)",
            zs_fmt_bytes(a, sizeof a, r->paged_state_bytes));
    if (held >= r->paged_state_bytes)
        fprintf(out, ": they fit beside its peak reserved\n");
    else
        fprintf(out,
                ": %s do not fit beside its peak reserved and are paged to "
                "host\n    every step (page migration not modelled)\n",
                zs_fmt_bytes(b, sizeof b, r->paged_state_bytes - held));
}

static void capacity_lines(const struct zs_simout *o, FILE *out)
{
    const struct zs_sim_result *r = o->res;
    const struct zs_cluster *cl = o->su->cluster;
    char a[32], b[32], d[32], h[32];

    fprintf(out,
            "  GPU capacity for tensors %s (HBM %s less %s CUDA context + "
            "NCCL%s)\n",
            zs_fmt_bytes(a, sizeof a, r->gpu_capacity_bytes),
            zs_fmt_bytes(b, sizeof b, cl->node.gpu.hbm_bytes),
            zs_fmt_bytes(d, sizeof d, r->gpu_context_bytes),
            zs_reserved_on_rank(o->su->cfg, &cl->node)
                ? ", less the other process"
                : "");
    fprintf(out,
            "  host RAM per node for training %s (%s installed less %s for the "
            "OS)\n",
            zs_fmt_bytes(a, sizeof a, r->host_capacity_per_node),
            zs_fmt_bytes(b, sizeof b, cl->node.host_ram_bytes),
            zs_fmt_bytes(d, sizeof d, cl->node.host_reserved_bytes));
    if (r->act_offload != ZS_AO_NONE) {
        /* issue 14 §3 (sched/actoff.c): one micro-step of one rank */
        char d2[32];
        fprintf(out,
                "  activation offload: %s, %lld of %lld layer inputs x %s per "
                "micro-step\n"
                "    PCIe D2H %s, H2D %s (%s); host buffers %s per rank\n",
                zs_act_offload_name(r->act_offload),
                (long long)r->ao_layers_offloaded,
                (long long)o->su->model->n_layers,
                zs_fmt_bytes(a, sizeof a, r->ao_bytes_per_layer),
                zs_fmt_bytes(b, sizeof b, r->ao_d2h_bytes),
                zs_fmt_bytes(d2, sizeof d2, r->ao_h2d_bytes),
                r->act_offload == ZS_AO_DS_SYNC ? "pageable, blocking"
                                                : "pinned, side stream",
                zs_fmt_bytes(h, sizeof h, r->ao_host_bytes));
    }
    paged_line(r, out);
    twin_line(o->su->cfg, r, out);
    fprintf(out, "  bottleneck (steady): %s\n\n", r->steady.bottleneck);
}

/* What was live at the GPU and the host peak (of the step that peaked). */
static void peak_tables(const struct zs_sim_result *r, FILE *out)
{
    const struct zs_step_result *g =
        r->steady.peak_gpu_allocated >= r->first.peak_gpu_allocated ? &r->steady
                                                                    : &r->first;
    const struct zs_step_result *h =
        r->steady.peak_host_per_rank >= r->first.peak_host_per_rank ? &r->steady
                                                                    : &r->first;
    live_table(out, "GPU peak (allocated, one rank)", g->gpu_peak_where,
               g->gpu_live, g->n_gpu_live, g->peak_gpu_allocated);
    fputc('\n', out);
    live_table(out, "host peak (one rank)", h->host_peak_where, h->host_live,
               h->n_host_live, h->peak_host_per_rank);
}

/* DeepSpeed's own estimator beside zsim's peaks (ZeRO-3 only). */
static void ds_estimate_lines(const struct zs_simout *o, FILE *out)
{
    const struct zs_sim_result *r = o->res;
    int64_t eg, eh;
    char a[32], b[32];

    zs_deepspeed_estimate(o->su, &eg, &eh);
    fprintf(out,
            "\nDeepSpeed's estimate_zero3_model_states_mem_needs (model "
            "states only, buffer "
            "factor 1.5): %s per GPU, %s host per node\n",
            zs_fmt_bytes(a, sizeof a, eg), zs_fmt_bytes(b, sizeof b, eh));
    if (eg > 0 && eh > 0)
        fprintf(
            out,
            "  zsim's peaks are %.1fx its GPU figure (activations, "
            "gathered params, "
            "buckets, allocator) and %.2fx its host figure\n",
            (double)r->steady.peak_gpu_reserved / (double)eg,
            (double)(r->steady.peak_host_per_node > r->first.peak_host_per_node
                         ? r->steady.peak_host_per_node
                         : r->first.peak_host_per_node) /
                (double)eh);
    /* the estimator (runtime/zero/stage3.py
     * estimate_zero3_model_states_mem_needs) knows only fp32 masters */
    if (o->su->cfg->param_dtype_resolved == ZS_DT_BF16)
        fprintf(out, "  it counts fp32 master weights and optimizer states; "
                     "this run keeps the masters in bf16 (--param-dtype "
                     "bf16)\n");
}

void zs_simout_print(const struct zs_simout *o, FILE *out)
{
    const struct zs_cfg *c = o->su->cfg;
    char buf[512];

    print_setup(o, out);
    zs_simout_verdict(o, buf, sizeof buf);
    fprintf(out, "\nverdict: %s\n\n", buf);
    if (step_table(o->res, out))
        return;
    capacity_lines(o, out);
    peak_tables(o->res, out);
    if (c->framework == ZS_FW_DEEPSPEED && c->zero == 3)
        ds_estimate_lines(o, out);
}

/* "gpu_live_at_peak" / "host_live_at_peak": {buffer, bytes_key} each. */
static void live_json(cJSON *o, const char *key, const char *bytes_key,
                      const struct zs_live_buf *live, int n)
{
    cJSON *lv = cJSON_AddArrayToObject(o, key);
    for (int i = 0; lv && i < n; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "buffer", live[i].name);
        cJSON_AddNumberToObject(e, bytes_key, (double)live[i].bytes);
        cJSON_AddItemToArray(lv, e);
    }
}

void *zs_simout_step_json(const struct zs_step_result *r)
{
    cJSON *o = cJSON_CreateObject(), *br;
    const struct zs_emit_field head[] = {
        ZS_JNUM("time_s", r->time_s),
        ZS_JNUM("tokens_per_s_per_gpu", r->tokens_per_s_per_gpu),
        ZS_JNUM("mfu", r->mfu),
        ZS_JNUM("peak_gpu_allocated_bytes", r->peak_gpu_allocated),
        ZS_JNUM("peak_gpu_reserved_bytes", r->peak_gpu_reserved),
        ZS_JNUM("peak_host_bytes_per_node", r->peak_host_per_node),
        ZS_JNUM("pinned_host_bytes_per_node", r->pinned_host_per_node),
    };
    const struct zs_emit_field breakdown[] = {
        ZS_JNUM("compute", r->br_compute),
        ZS_JNUM("exposed_collective", r->br_coll),
        ZS_JNUM("exposed_pcie", r->br_pcie),
        ZS_JNUM("optimizer", r->br_opt),
        ZS_JNUM("other", r->br_other),
        ZS_JNUM("exposed_nvme", r->br_nvme), /* only when it swapped */
    };
    const struct zs_emit_field peaks[] = {
        ZS_JSTR("bottleneck", r->bottleneck),
        ZS_JSTR("gpu_peak_at", r->gpu_peak_where),
        ZS_JSTR("host_peak_at", r->host_peak_where),
    };
    if (!o)
        return NULL;
    zs_emit_fields(o, head, ZS_EMIT_COUNT(head));
    br = cJSON_AddObjectToObject(o, "breakdown_s");
    zs_emit_fields(br, breakdown,
                   ZS_EMIT_COUNT(breakdown) - (r->br_nvme > 0 ? 0 : 1));
    zs_emit_fields(o, peaks, ZS_EMIT_COUNT(peaks));
    live_json(o, "gpu_live_at_peak", "bytes", r->gpu_live, r->n_gpu_live);
    live_json(o, "host_live_at_peak", "bytes_per_rank", r->host_live,
              r->n_host_live);
    cJSON_AddNumberToObject(o, "allocator_cache_flushes",
                            (double)r->cache_flushes);
    return o;
}

/* Memory over time for charts: each pool's log thinned to at most ~400
 * points, keeping every point's running maximum inside its bucket so peaks
 * survive the thinning.  Pools 0 (GPU) and 1 (host rank) as simulate.c
 * creates them. */
static void add_timeline(cJSON *d, zs_sim *sim, int ranks_per_node)
{
    cJSON *tl = cJSON_AddObjectToObject(d, "timeline");
    for (int pool = 0; tl && pool < 2; pool++) {
        int64_t n;
        const struct zs_mem_event *log = zs_sim_pool_log(sim, pool, &n);
        cJSON *arr = cJSON_AddArrayToObject(tl, pool == 0 ? "gpu" : "host");
        int64_t step = n > 400 ? n / 400 : 1;
        for (int64_t i = 0; arr && i < n; i += step) {
            int64_t a = 0, rsv = 0, t = log[i].t_ns;
            cJSON *pt = cJSON_CreateArray();
            for (int64_t j = i; j < i + step && j < n; j++) {
                if (log[j].allocated > a)
                    a = log[j].allocated;
                if (log[j].reserved > rsv)
                    rsv = log[j].reserved;
            }
            cJSON_AddItemToArray(pt, cJSON_CreateNumber((double)t / 1e9));
            if (pool == 0) {
                cJSON_AddItemToArray(pt, cJSON_CreateNumber((double)a));
                cJSON_AddItemToArray(pt, cJSON_CreateNumber((double)rsv));
            } else {
                cJSON_AddItemToArray(
                    pt, cJSON_CreateNumber((double)rsv * ranks_per_node));
            }
            cJSON_AddItemToArray(arr, pt);
        }
    }
}

char *zs_simout_json(const struct zs_simout *o)
{
    return zs_simout_json_with(o, NULL, NULL);
}

static void json_model_hw(cJSON *d, const struct zs_setup *su)
{
    const struct zs_model *m = su->model;
    const struct zs_cluster *cl = su->cluster;
    const struct zs_emit_field model[] = {
        ZS_JSTR("name", m->name),
        ZS_JSTR("resolved_from", m->resolved_from),
        ZS_JNUM("params_total", m->params_total),
    };
    const struct zs_emit_field hw[] = {
        ZS_JSTR("spec", cl->spec),
        ZS_JSTR("gpu", cl->node.gpu.name),
        ZS_JNUM("nodes", cl->nodes),
        ZS_JNUM("gpus_per_node", su->cfg->procs_per_node),
        ZS_JNUM("host_ram_bytes_per_node", cl->node.host_ram_bytes),
    };
    zs_emit_fields(cJSON_AddObjectToObject(d, "model"), model,
                   ZS_EMIT_COUNT(model));
    zs_emit_fields(cJSON_AddObjectToObject(d, "hardware"), hw,
                   ZS_EMIT_COUNT(hw));
}

/* The NVMe swap settings and the node rates simulated (docs/nvme.md);
 * present only for NVMe runs. */
static void json_nvme(cJSON *x, const struct zs_setup *su)
{
    const struct zs_cfg *c = su->cfg;
    cJSON *nv = cJSON_AddObjectToObject(x, "nvme");
    double rd, wr;
    zs_nvme_node_rates(c, &su->cluster->node, &rd, &wr);
    {
        const struct zs_emit_field f[] = {
            ZS_JNUM("read_bytes_per_s_per_node", rd),
            ZS_JNUM("write_bytes_per_s_per_node", wr),
            ZS_JNUM("buffer_count", c->nvme_buffer_count),
            ZS_JBOOL("pipeline_read", c->pipeline_read),
            ZS_JBOOL("pipeline_write", c->pipeline_write),
        };
        const struct zs_emit_field param[] = {
            ZS_JNUM("param_buffer_count", c->param_buffer_count),
            ZS_JNUM("param_buffer_size", c->param_buffer_size),
            ZS_JNUM("param_max_in_cpu", c->param_max_in_cpu),
        };
        zs_emit_fields(nv, f, ZS_EMIT_COUNT(f));
        if (c->offload_param == ZS_OFF_NVME)
            zs_emit_fields(nv, param, ZS_EMIT_COUNT(param));
    }
}

static void json_config(cJSON *d, const struct zs_setup *su)
{
    const struct zs_cfg *c = su->cfg;
    cJSON *x = cJSON_AddObjectToObject(d, "config");
    char ck[32], sum[512];
    zs_cfg_ckpt_text(c, ck, sizeof ck);
    zs_cfg_summary(c, sum, sizeof sum);
    {
        const struct zs_emit_field f[] = {
            ZS_JSTR("name", c->name),
            ZS_JSTR("framework", zs_framework_name(c->framework)),
            ZS_JNUM("zero", c->zero),
            ZS_JSTR("offload_optimizer", zs_offload_name(c->offload_optimizer)),
            ZS_JSTR("offload_param", zs_offload_name(c->offload_param)),
            ZS_JNUM("procs_per_node", c->procs_per_node),
            ZS_JNUM("world", c->world),
            ZS_JNUM("sp", c->sp),
            ZS_JNUM("cp", c->cp),
            ZS_JNUM("micro_batch", c->micro_batch),
            ZS_JNUM("grad_accum", c->accum),
            ZS_JNUM("seq_len", c->seq_len),
            ZS_JSTR("method", zs_method_name((enum zs_method)c->method)),
            ZS_JSTR("checkpointing", ck),
            ZS_JNUM("gpu_reserved_bytes", c->gpu_reserved_bytes),
            ZS_JBOOL("pin_memory", c->pin_optimizer),
            ZS_JSTR("sharding", zs_sharding_name(c->sharding)),
            ZS_JNUM("fsdp_version", c->fsdp_version),
            ZS_JBOOL("optimizer_in_bwd", c->optimizer_in_bwd),
        };
        const struct zs_emit_field tail[] = {
            ZS_JSTR("deepspeed_version", c->deepspeed_version),
            ZS_JSTR("torch_version", c->torch_version),
            ZS_JSTR("trainer", zs_trainer_name(c->trainer)),
            ZS_JSTR("param_dtype", zs_dtype_name(c->param_dtype_resolved)),
            ZS_JSTR("reduce_dtype", zs_dtype_name(c->reduce_dtype_resolved)),
            ZS_JSTR("opt_state_dtype",
                    zs_dtype_name(c->opt_state_dtype_resolved)),
            ZS_JBOOL("grads_held_unsharded", zs_cfg_grads_held_unsharded(c)),
            ZS_JSTR("attention", zs_cfg_choice_name("attention", c->attention)),
            ZS_JSTR("kernels", zs_cfg_choice_name("kernels", c->kernels)),
            ZS_JSTR("loss", zs_cfg_choice_name("loss", c->loss)),
            ZS_JBOOL("compile_loss", c->compile_loss == ZS_YES),
            ZS_JSTR("alloc_conf", zs_cfg_choice_name("alloc_conf", c->alloc_conf)),
            ZS_JNUM("max_split_size_mb", (double)c->max_split_size_mb),
            ZS_JSTR("optimizer", zs_cfg_choice_name("optimizer", c->optimizer)),
            ZS_JSTR("fp8", zs_cfg_choice_name("fp8", c->fp8)),
            ZS_JBOOL("fp8_all_gather", c->fp8_all_gather),
            ZS_JSTR("summary", sum),
        };
        const struct zs_emit_field cpuopt[] = {
            ZS_JSTR("cpu_optimizer", zs_cpu_opt_name(c->cpu_opt_impl)),
        };
        const struct zs_emit_field lora[] = {
            ZS_JNUM("lora_rank", c->lora_rank),
            ZS_JSTR("lora_targets", c->lora_targets),
            ZS_JNUM("lora_dropout", c->lora_dropout),
        };
        if (!x)
            return;
        zs_emit_fields(x, f, ZS_EMIT_COUNT(f));
        if (c->method != ZS_METHOD_FULL)
            zs_emit_fields(x, lora, ZS_EMIT_COUNT(lora));
        if (c->offload_optimizer != ZS_OFF_NONE)
            zs_emit_fields(x, cpuopt, ZS_EMIT_COUNT(cpuopt));
        if (c->offload_optimizer == ZS_OFF_NVME ||
            c->offload_param == ZS_OFF_NVME)
            json_nvme(x, su);
        zs_emit_fields(x, tail, ZS_EMIT_COUNT(tail));
    }
}

/* An OOM's fields into obj: where, phase, step, micro_step, module,
 * needed_bytes, available_bytes. */
static void json_oom(cJSON *obj, const struct zs_oom_info *o)
{
    const struct zs_emit_field f[] = {
        ZS_JSTR("where", o->where == ZS_OOM_GPU ? "gpu" : "host"),
        ZS_JSTR("phase", o->phase),
        ZS_JNUM("step", o->step),
        ZS_JNUM("micro_step", o->micro),
        ZS_JSTR("module", o->module),
        ZS_JNUM("needed_bytes", o->needed_bytes),
        ZS_JNUM("available_bytes", o->available_bytes),
    };
    zs_emit_fields(obj, f, ZS_EMIT_COUNT(f));
}

/* "verdict", "verdict_text" and "oom" (null when it fits). */
static void json_verdict(cJSON *d, const struct zs_simout *o)
{
    const struct zs_sim_result *r = o->res;
    char buf[512];
    cJSON *jo;
    cJSON_AddStringToObject(d, "verdict", zs_verdict_key(r));
    zs_simout_verdict(o, buf, sizeof buf);
    cJSON_AddStringToObject(d, "verdict_text", buf);
    if (r->oom.where == ZS_OOM_NONE) {
        cJSON_AddNullToObject(d, "oom");
        return;
    }
    jo = cJSON_AddObjectToObject(d, "oom");
    json_oom(jo, &r->oom);
    /* the other memory's OOM after this one: null, or like this one */
    if (r->then.where == ZS_OOM_NONE)
        cJSON_AddNullToObject(jo, "then");
    else
        json_oom(cJSON_AddObjectToObject(jo, "then"), &r->then);
}

/* DeepSpeed's estimator, and activation offload per micro-step of one rank
 * (issue 14 §3; absent when off). */
static void json_estimators(cJSON *d, const struct zs_simout *o)
{
    static const char *const k_modes[] = {"none", "ds_blocking", "ds_async",
                                          "torchtune"};
    const struct zs_sim_result *r = o->res;
    cJSON *x = cJSON_AddObjectToObject(d, "estimators");
    int64_t eg, eh;
    if (x) {
        cJSON *ds = cJSON_AddObjectToObject(x, "deepspeed");
        zs_deepspeed_estimate(o->su, &eg, &eh);
        if (ds) {
            cJSON_AddNumberToObject(ds, "gpu_bytes", (double)eg);
            cJSON_AddNumberToObject(ds, "host_bytes_per_node", (double)eh);
        }
    }
    if (r->act_offload != ZS_AO_NONE) {
        const struct zs_emit_field ao[] = {
            ZS_JSTR("mode", k_modes[r->act_offload & 3]),
            ZS_JNUM("bytes_per_layer", r->ao_bytes_per_layer),
            ZS_JNUM("layers_offloaded", r->ao_layers_offloaded),
            ZS_JNUM("d2h_bytes", r->ao_d2h_bytes),
            ZS_JNUM("h2d_bytes", r->ao_h2d_bytes),
            ZS_JNUM("host_bytes_per_rank", r->ao_host_bytes),
        };
        zs_emit_fields(cJSON_AddObjectToObject(d, "activation_offload"), ao,
                       ZS_EMIT_COUNT(ao));
    }
    if (o->su->cfg->offload_ratio < 1.0 && r->opt_groups > 0) {
        const struct zs_emit_field tw[] = {
            ZS_JNUM("ratio", o->su->cfg->offload_ratio),
            ZS_JNUM("subgroups", r->opt_groups),
            ZS_JNUM("gpu_subgroups", r->opt_groups_gpu),
            ZS_JNUM("gpu_elements_per_rank", r->opt_gpu_elems),
        };
        zs_emit_fields(cJSON_AddObjectToObject(d, "twin_flow"), tw,
                       ZS_EMIT_COUNT(tw));
    }
}

char *zs_simout_json_with(const struct zs_simout *o, const char *key,
                          void *item)
{
    const struct zs_sim_result *r = o->res;
    cJSON *d = cJSON_CreateObject();
    char *text;
    if (!d) {
        cJSON_Delete((cJSON *)item);
        return NULL;
    }
    cJSON_AddStringToObject(d, "schema", "zsim.simulate/1");
    json_model_hw(d, o->su);
    json_config(d, o->su);
    json_verdict(d, o);
    cJSON_AddItemToObject(d, "first_step", zs_simout_step_json(&r->first));
    cJSON_AddItemToObject(d, "steady_step", zs_simout_step_json(&r->steady));
    json_estimators(d, o);
    cJSON_AddNumberToObject(d, "events", (double)r->events);
    if (o->sim)
        add_timeline(d, o->sim, (int)o->su->cfg->procs_per_node);
    if (key && item)
        cJSON_AddItemToObject(d, key, (cJSON *)item);
    else
        cJSON_Delete((cJSON *)item);
    text = cJSON_Print(d);
    cJSON_Delete(d);
    return text;
}
