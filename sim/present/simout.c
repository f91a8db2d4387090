/*
 * simout.c — see simout.h.  Everything a person reads about one simulation
 * comes from here, so simulate, plan and the whole-run report say things the
 * same way.
 */
#include "present/simout.h"
#include "util/alloc.h"
#include "util/table.h"
#include "util/units.h"

#include <cjson/cJSON.h>
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

void zs_simout_verdict(const struct zs_simout *o, char *buf, size_t cap)
{
    const struct zs_sim_result *r = o->res;
    char a[32], b[32], t[32], h1[32], h2[32];
    if (r->oom.where == ZS_OOM_GPU &&
        r->oom.needed_bytes <= r->oom.available_bytes) {
        /* it would fit by count but not by blocks: say what PyTorch's OOM
         * message says (tried to allocate, allocated, reserved) */
        char q[32], rs[32];
        snprintf(buf, cap,
                 "GPU OOM in %s of %s (step %d, micro-step %d): fragmentation: "
                 "tried to allocate %s with %s allocated and %s reserved of %s",
                 r->oom.phase, r->oom.module, r->oom.step, r->oom.micro,
                 zs_fmt_bytes(q, sizeof q, r->oom.request_bytes),
                 zs_fmt_bytes(a, sizeof a, r->oom.allocated_at_oom),
                 zs_fmt_bytes(rs, sizeof rs, r->oom.reserved_at_oom),
                 zs_fmt_bytes(b, sizeof b, r->oom.available_bytes));
        return;
    }
    if (r->oom.where == ZS_OOM_GPU) {
        snprintf(buf, cap,
                 "GPU OOM in %s of %s (step %d, micro-step %d): needs %s of %s",
                 r->oom.phase, r->oom.module, r->oom.step, r->oom.micro,
                 zs_fmt_bytes(a, sizeof a, r->oom.needed_bytes),
                 zs_fmt_bytes(b, sizeof b, r->oom.available_bytes));
        return;
    }
    if (r->oom.where == ZS_OOM_HOST) {
        snprintf(
            buf, cap,
            "host OOM in %s (step %d, %s): needs %s of %s host RAM per node",
            r->oom.phase, r->oom.step, r->oom.module,
            zs_fmt_bytes(a, sizeof a, r->oom.needed_bytes),
            zs_fmt_bytes(b, sizeof b, r->oom.available_bytes));
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

void zs_simout_print(const struct zs_simout *o, FILE *out)
{
    const struct zs_setup *su = o->su;
    const struct zs_sim_result *r = o->res;
    const struct zs_cluster *cl = su->cluster;
    const struct zs_model *m = su->model;
    const struct zs_cfg *c = su->cfg;
    const struct zs_step_result *st[2] = {&r->first, &r->steady};
    char buf[512], a[32], b[32];
    struct zs_table *t;

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
    fprintf(out,
            "          global batch %lld sequences (%lld tokens), DeepSpeed "
            "%s, pin_memory %s, "
            "zero.Init %s\n",
            (long long)(c->micro_batch * c->accum * c->dp),
            (long long)c->tokens_per_step, c->deepspeed_version,
            c->pin_optimizer ? "yes" : "no",
            c->zero_init == ZS_NO ? "no" : "yes");
    if (c->framework == ZS_FW_FSDP2)
        fprintf(out, "          trainer %s: params %s, reduce %s, %s\n",
                zs_trainer_name(c->trainer),
                zs_dtype_name(c->param_dtype_resolved),
                zs_dtype_name(c->reduce_dtype_resolved),
                zs_cfg_grads_held_unsharded(c)
                    ? "unsharded grads held across accumulation (no_sync), "
                      "one reduce-scatter per step"
                    : "reduce-scatter every micro-step");
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
    zs_simout_verdict(o, buf, sizeof buf);
    fprintf(out, "\nverdict: %s\n\n", buf);

    t = zs_table_new(3, "lrr");
    if (!t)
        return;
    zs_table_header(t);
    zs_table_rowf(t, "\tfirst step\tsteady step");
#define ROW2(label, expr)                                                      \
    do {                                                                       \
        char c0[48], c1[48];                                                   \
        const struct zs_step_result *s_ = st[0];                               \
        expr(c0, s_);                                                          \
        s_ = st[1];                                                            \
        expr(c1, s_);                                                          \
        zs_table_rowf(t, "%s\t%s\t%s", label, c0, c1);                         \
    } while (0)
#define F_TIME(buf_, s) zs_fmt_seconds(buf_, sizeof buf_, (s)->time_s)
#define F_TOK(buf_, s)                                                         \
    snprintf(buf_, sizeof buf_, "%.0f", (s)->tokens_per_s_per_gpu)
#define F_MFU(buf_, s) snprintf(buf_, sizeof buf_, "%.1f%%", (s)->mfu * 100)
#define F_GA(buf_, s) zs_fmt_bytes(buf_, sizeof buf_, (s)->peak_gpu_allocated)
#define F_GR(buf_, s) zs_fmt_bytes(buf_, sizeof buf_, (s)->peak_gpu_reserved)
#define F_HN(buf_, s) zs_fmt_bytes(buf_, sizeof buf_, (s)->peak_host_per_node)
#define F_HP(buf_, s) zs_fmt_bytes(buf_, sizeof buf_, (s)->pinned_host_per_node)
#define F_HR(buf_, s) zs_fmt_bytes(buf_, sizeof buf_, (s)->peak_host_per_rank)
#define F_HG(buf_, s)                                                          \
    zs_fmt_bytes(buf_, sizeof buf_,                                            \
                 (s)->peak_host_per_node - (s)->pinned_host_per_node)
#define F_BC(buf_, s) pct(buf_, sizeof buf_, (s)->br_compute, (s)->time_s)
#define F_BL(buf_, s) pct(buf_, sizeof buf_, (s)->br_coll, (s)->time_s)
#define F_BP(buf_, s) pct(buf_, sizeof buf_, (s)->br_pcie, (s)->time_s)
#define F_BO(buf_, s) pct(buf_, sizeof buf_, (s)->br_opt, (s)->time_s)
#define F_BX(buf_, s) pct(buf_, sizeof buf_, (s)->br_other, (s)->time_s)
#define F_BN(buf_, s) pct(buf_, sizeof buf_, (s)->br_nvme, (s)->time_s)
#define F_FL(buf_, s)                                                          \
    snprintf(buf_, sizeof buf_, "%lld", (long long)(s)->cache_flushes)
    ROW2("step time", F_TIME);
    ROW2("tokens/s per GPU", F_TOK);
    ROW2("MFU", F_MFU);
    ROW2("peak GPU allocated", F_GA);
    ROW2("peak GPU reserved", F_GR);
    ROW2("peak host per node", F_HN);
    ROW2("  pinned", F_HP);
    ROW2("  pageable", F_HG);
    ROW2("  per rank", F_HR);
    ROW2("compute", F_BC);
    ROW2("exposed collectives", F_BL);
    ROW2("exposed PCIe", F_BP);
    if (st[0]->br_nvme > 0 || st[1]->br_nvme > 0)
        ROW2("exposed NVMe swap", F_BN);
    ROW2("optimizer", F_BO);
    ROW2("other (host)", F_BX);
    ROW2("allocator cache flushes", F_FL);
    zs_table_print(t, out, 2);
    zs_table_free(t);
    fprintf(out,
            "  GPU capacity for tensors %s (HBM %s less %s CUDA context + "
            "NCCL%s)\n",
            zs_fmt_bytes(a, sizeof a, r->gpu_capacity_bytes),
            zs_fmt_bytes(b, sizeof b, cl->node.gpu.hbm_bytes),
            zs_fmt_bytes(buf, 32, r->gpu_context_bytes),
            zs_reserved_on_rank(c, &cl->node) ? ", less the other process"
                                              : "");
    fprintf(out,
            "  host RAM per node for training %s (%s installed less %s for the "
            "OS)\n",
            zs_fmt_bytes(a, sizeof a, r->host_capacity_per_node),
            zs_fmt_bytes(b, sizeof b, cl->node.host_ram_bytes),
            zs_fmt_bytes(buf, 32, cl->node.host_reserved_bytes));
    if (r->act_offload != ZS_AO_NONE) {
        /* issue 14 §3 (sched/actoff.c): one micro-step of one rank */
        char h[32], d[32];
        fprintf(out,
                "  activation offload: %s, %lld of %lld layer inputs x %s per "
                "micro-step\n"
                "    PCIe D2H %s, H2D %s (%s); host buffers %s per rank\n",
                zs_act_offload_name(r->act_offload),
                (long long)r->ao_layers_offloaded, (long long)m->n_layers,
                zs_fmt_bytes(a, sizeof a, r->ao_bytes_per_layer),
                zs_fmt_bytes(b, sizeof b, r->ao_d2h_bytes),
                zs_fmt_bytes(d, sizeof d, r->ao_h2d_bytes),
                r->act_offload == ZS_AO_DS_SYNC ? "pageable, blocking"
                                                : "pinned, side stream",
                zs_fmt_bytes(h, sizeof h, r->ao_host_bytes));
    }
    fprintf(out, "  bottleneck (steady): %s\n\n", r->steady.bottleneck);

    {
        const struct zs_step_result *g =
            r->steady.peak_gpu_allocated >= r->first.peak_gpu_allocated
                ? &r->steady
                : &r->first;
        const struct zs_step_result *h =
            r->steady.peak_host_per_rank >= r->first.peak_host_per_rank
                ? &r->steady
                : &r->first;
        live_table(out, "GPU peak (allocated, one rank)", g->gpu_peak_where,
                   g->gpu_live, g->n_gpu_live, g->peak_gpu_allocated);
        fputc('\n', out);
        live_table(out, "host peak (one rank)", h->host_peak_where,
                   h->host_live, h->n_host_live, h->peak_host_per_rank);
    }
    if (c->framework == ZS_FW_DEEPSPEED && c->zero == 3) {
        int64_t eg, eh;
        zs_deepspeed_estimate(su, &eg, &eh);
        fprintf(out,
                "\nDeepSpeed's estimate_zero3_model_states_mem_needs (model "
                "states only, buffer "
                "factor 1.5): %s per GPU, %s host per node\n",
                zs_fmt_bytes(a, sizeof a, eg), zs_fmt_bytes(b, sizeof b, eh));
        if (eg > 0 && eh > 0)
            fprintf(out,
                    "  zsim's peaks are %.1fx its GPU figure (activations, "
                    "gathered params, "
                    "buckets, allocator) and %.2fx its host figure\n",
                    (double)r->steady.peak_gpu_reserved / (double)eg,
                    (double)(r->steady.peak_host_per_node >
                                     r->first.peak_host_per_node
                                 ? r->steady.peak_host_per_node
                                 : r->first.peak_host_per_node) /
                        (double)eh);
    }
}

void *zs_simout_step_json(const struct zs_step_result *r)
{
    cJSON *o = cJSON_CreateObject(), *br;
    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "time_s", r->time_s);
    cJSON_AddNumberToObject(o, "tokens_per_s_per_gpu", r->tokens_per_s_per_gpu);
    cJSON_AddNumberToObject(o, "mfu", r->mfu);
    cJSON_AddNumberToObject(o, "peak_gpu_allocated_bytes",
                            (double)r->peak_gpu_allocated);
    cJSON_AddNumberToObject(o, "peak_gpu_reserved_bytes",
                            (double)r->peak_gpu_reserved);
    cJSON_AddNumberToObject(o, "peak_host_bytes_per_node",
                            (double)r->peak_host_per_node);
    cJSON_AddNumberToObject(o, "pinned_host_bytes_per_node",
                            (double)r->pinned_host_per_node);
    br = cJSON_AddObjectToObject(o, "breakdown_s");
    if (br) {
        cJSON_AddNumberToObject(br, "compute", r->br_compute);
        cJSON_AddNumberToObject(br, "exposed_collective", r->br_coll);
        cJSON_AddNumberToObject(br, "exposed_pcie", r->br_pcie);
        cJSON_AddNumberToObject(br, "optimizer", r->br_opt);
        cJSON_AddNumberToObject(br, "other", r->br_other);
        if (r->br_nvme > 0)
            cJSON_AddNumberToObject(br, "exposed_nvme", r->br_nvme);
    }
    cJSON_AddStringToObject(o, "bottleneck", r->bottleneck);
    cJSON_AddStringToObject(o, "gpu_peak_at", r->gpu_peak_where);
    cJSON_AddStringToObject(o, "host_peak_at", r->host_peak_where);
    {
        cJSON *lv = cJSON_AddArrayToObject(o, "gpu_live_at_peak");
        for (int i = 0; lv && i < r->n_gpu_live; i++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "buffer", r->gpu_live[i].name);
            cJSON_AddNumberToObject(e, "bytes", (double)r->gpu_live[i].bytes);
            cJSON_AddItemToArray(lv, e);
        }
        lv = cJSON_AddArrayToObject(o, "host_live_at_peak");
        for (int i = 0; lv && i < r->n_host_live; i++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "buffer", r->host_live[i].name);
            cJSON_AddNumberToObject(e, "bytes_per_rank",
                                    (double)r->host_live[i].bytes);
            cJSON_AddItemToArray(lv, e);
        }
    }
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

char *zs_simout_json_with(const struct zs_simout *o, const char *key,
                          void *item)
{
    const struct zs_setup *su = o->su;
    const struct zs_sim_result *r = o->res;
    const struct zs_cfg *c = su->cfg;
    cJSON *d = cJSON_CreateObject(), *x;
    char buf[512];
    char *text;
    if (!d) {
        cJSON_Delete((cJSON *)item);
        return NULL;
    }
    cJSON_AddStringToObject(d, "schema", "zsim.simulate/1");
    x = cJSON_AddObjectToObject(d, "model");
    if (x) {
        cJSON_AddStringToObject(x, "name", su->model->name);
        cJSON_AddStringToObject(x, "resolved_from", su->model->resolved_from);
        cJSON_AddNumberToObject(x, "params_total",
                                (double)su->model->params_total);
    }
    x = cJSON_AddObjectToObject(d, "hardware");
    if (x) {
        cJSON_AddStringToObject(x, "spec", su->cluster->spec);
        cJSON_AddStringToObject(x, "gpu", su->cluster->node.gpu.name);
        cJSON_AddNumberToObject(x, "nodes", su->cluster->nodes);
        cJSON_AddNumberToObject(x, "gpus_per_node", (double)c->procs_per_node);
        cJSON_AddNumberToObject(x, "host_ram_bytes_per_node",
                                (double)su->cluster->node.host_ram_bytes);
    }
    x = cJSON_AddObjectToObject(d, "config");
    if (x) {
        cJSON_AddStringToObject(x, "name", c->name);
        cJSON_AddStringToObject(x, "framework",
                                zs_framework_name(c->framework));
        cJSON_AddNumberToObject(x, "zero", (double)c->zero);
        cJSON_AddStringToObject(x, "offload_optimizer",
                                zs_offload_name(c->offload_optimizer));
        cJSON_AddStringToObject(x, "offload_param",
                                zs_offload_name(c->offload_param));
        cJSON_AddNumberToObject(x, "procs_per_node", (double)c->procs_per_node);
        cJSON_AddNumberToObject(x, "world", (double)c->world);
        cJSON_AddNumberToObject(x, "sp", (double)c->sp);
        cJSON_AddNumberToObject(x, "micro_batch", (double)c->micro_batch);
        cJSON_AddNumberToObject(x, "grad_accum", (double)c->accum);
        cJSON_AddNumberToObject(x, "seq_len", (double)c->seq_len);
        cJSON_AddStringToObject(x, "method",
                                zs_method_name((enum zs_method)c->method));
        {
            /* "layer:N" keeps N (torchtitan selective layer AC) */
            char ck[32];
            if (c->checkpointing == ZS_CKPT_LAYER)
                snprintf(ck, sizeof ck, "layer:%lld", (long long)c->ckpt_every);
            else
                snprintf(ck, sizeof ck, "%s",
                         zs_ckpt_name((enum zs_ckpt)c->checkpointing));
            cJSON_AddStringToObject(x, "checkpointing", ck);
        }
        cJSON_AddNumberToObject(x, "gpu_reserved_bytes",
                                (double)c->gpu_reserved_bytes);
        cJSON_AddBoolToObject(x, "pin_memory", c->pin_optimizer);
        if (c->offload_optimizer == ZS_OFF_NVME ||
            c->offload_param == ZS_OFF_NVME) {
            /* the NVMe swap settings and the node rates simulated
             * (docs/nvme.md); present only for NVMe runs */
            cJSON *nv = cJSON_AddObjectToObject(x, "nvme");
            double rd, wr;
            zs_nvme_node_rates(c, &su->cluster->node, &rd, &wr);
            if (nv) {
                cJSON_AddNumberToObject(nv, "read_bytes_per_s_per_node", rd);
                cJSON_AddNumberToObject(nv, "write_bytes_per_s_per_node", wr);
                cJSON_AddNumberToObject(nv, "buffer_count",
                                        (double)c->nvme_buffer_count);
                cJSON_AddBoolToObject(nv, "pipeline_read", c->pipeline_read);
                cJSON_AddBoolToObject(nv, "pipeline_write", c->pipeline_write);
                if (c->offload_param == ZS_OFF_NVME) {
                    cJSON_AddNumberToObject(nv, "param_buffer_count",
                                            (double)c->param_buffer_count);
                    cJSON_AddNumberToObject(nv, "param_buffer_size",
                                            (double)c->param_buffer_size);
                    cJSON_AddNumberToObject(nv, "param_max_in_cpu",
                                            (double)c->param_max_in_cpu);
                }
            }
        }
        cJSON_AddStringToObject(x, "deepspeed_version", c->deepspeed_version);
        cJSON_AddStringToObject(x, "trainer", zs_trainer_name(c->trainer));
        cJSON_AddStringToObject(x, "param_dtype",
                                zs_dtype_name(c->param_dtype_resolved));
        cJSON_AddStringToObject(x, "reduce_dtype",
                                zs_dtype_name(c->reduce_dtype_resolved));
        cJSON_AddBoolToObject(x, "grads_held_unsharded",
                              zs_cfg_grads_held_unsharded(c));
        zs_cfg_summary(c, buf, sizeof buf);
        cJSON_AddStringToObject(x, "summary", buf);
    }
    cJSON_AddStringToObject(d, "verdict", zs_verdict_key(r));
    zs_simout_verdict(o, buf, sizeof buf);
    cJSON_AddStringToObject(d, "verdict_text", buf);
    if (r->oom.where == ZS_OOM_NONE) {
        cJSON_AddNullToObject(d, "oom");
    } else {
        x = cJSON_AddObjectToObject(d, "oom");
        if (x) {
            cJSON_AddStringToObject(
                x, "where", r->oom.where == ZS_OOM_GPU ? "gpu" : "host");
            cJSON_AddStringToObject(x, "phase", r->oom.phase);
            cJSON_AddNumberToObject(x, "step", r->oom.step);
            cJSON_AddNumberToObject(x, "micro_step", r->oom.micro);
            cJSON_AddStringToObject(x, "module", r->oom.module);
            cJSON_AddNumberToObject(x, "needed_bytes",
                                    (double)r->oom.needed_bytes);
            cJSON_AddNumberToObject(x, "available_bytes",
                                    (double)r->oom.available_bytes);
        }
    }
    cJSON_AddItemToObject(d, "first_step", zs_simout_step_json(&r->first));
    cJSON_AddItemToObject(d, "steady_step", zs_simout_step_json(&r->steady));
    x = cJSON_AddObjectToObject(d, "estimators");
    if (x) {
        int64_t eg, eh;
        cJSON *ds = cJSON_AddObjectToObject(x, "deepspeed");
        zs_deepspeed_estimate(su, &eg, &eh);
        if (ds) {
            cJSON_AddNumberToObject(ds, "gpu_bytes", (double)eg);
            cJSON_AddNumberToObject(ds, "host_bytes_per_node", (double)eh);
        }
    }
    if (r->act_offload != ZS_AO_NONE) {
        /* issue 14 §3: per micro-step of one rank (absent when off) */
        x = cJSON_AddObjectToObject(d, "activation_offload");
        if (x) {
            static const char *const k_modes[] = {"none", "ds_blocking",
                                                  "ds_async", "torchtune"};
            cJSON_AddStringToObject(x, "mode", k_modes[r->act_offload & 3]);
            cJSON_AddNumberToObject(x, "bytes_per_layer",
                                    (double)r->ao_bytes_per_layer);
            cJSON_AddNumberToObject(x, "layers_offloaded",
                                    (double)r->ao_layers_offloaded);
            cJSON_AddNumberToObject(x, "d2h_bytes", (double)r->ao_d2h_bytes);
            cJSON_AddNumberToObject(x, "h2d_bytes", (double)r->ao_h2d_bytes);
            cJSON_AddNumberToObject(x, "host_bytes_per_rank",
                                    (double)r->ao_host_bytes);
        }
    }
    cJSON_AddNumberToObject(d, "events", (double)r->events);
    if (o->sim)
        add_timeline(d, o->sim, (int)c->procs_per_node);
    if (key && item)
        cJSON_AddItemToObject(d, key, (cJSON *)item);
    else
        cJSON_Delete((cJSON *)item);
    text = cJSON_Print(d);
    cJSON_Delete(d);
    return text;
}
