/*
 * planout.c — see planout.h.  The text of `zsim plan` (header, best plan,
 * ranking, rejected candidates grouped by reason, what would fit) and its
 * JSON document, zsim.plan/1, which out/report_doc.c reads back.
 */
#include "present/planout.h"
#include "present/emit.h"
#include "present/simout.h"
#include "util/alloc.h"
#include "util/table.h"
#include "util/units.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

static void fmt_cand_row(struct zs_table *t, int rank,
                         const struct zs_candidate *c)
{
    const struct zs_cfg *f = &c->cfg;
    const struct zs_step_result *s = &c->res.steady;
    char g[32], h[32], st[32], hd[32];
    const char *off = f->offload_optimizer == ZS_OFF_NVME
                          ? (f->offload_param == ZS_OFF_NVME ? "opt+param nvme"
                             : f->offload_param != ZS_OFF_NONE ? "nvme+param"
                                                               : "nvme")
                      : f->offload_param == ZS_OFF_NVME     ? "opt, param nvme"
                      : f->offload_param != ZS_OFF_NONE     ? "opt+param"
                      : f->offload_optimizer != ZS_OFF_NONE ? "opt"
                                                            : "none";
    zs_table_rowf(
        t, "%d\t%s\t%lld\t%lld\t%lld\t%s\t%s\t%s\t%s\t%s\t%.0f\t%.1f%%\t%s",
        rank,
        f->framework != ZS_FW_FSDP2 ? (f->zero == 3 ? "zero3" : "zero2")
        : f->zero == 3              ? zs_cfg_framework_label(f)
        : f->fsdp_version == 1      ? "fsdp1-nrs"
                                    : "fsdp2-nrs",
        (long long)f->procs_per_node, (long long)f->micro_batch,
        (long long)f->accum, zs_ckpt_name((enum zs_ckpt)f->checkpointing), off,
        zs_fmt_bytes(g, sizeof g, s->peak_gpu_reserved),
        zs_fmt_bytes(h, sizeof h, s->peak_host_per_node),
        zs_fmt_seconds(st, sizeof st, s->time_s), s->tokens_per_s_per_gpu,
        s->mfu * 100,
        zs_fmt_bytes(hd, sizeof hd,
                     c->res.gpu_capacity_bytes - s->peak_gpu_reserved));
}

/* The CPU optimizer and threads the offload candidates assume, per
 * framework (docs/cpu-optimizer.md). */
static void offload_lines(const struct zs_plan *p, const struct zs_model *m,
                          const struct zs_cluster *cl,
                          const struct zs_cfg *base, int framework_any,
                          FILE *out)
{
    for (int fw = ZS_FW_DEEPSPEED; fw <= ZS_FW_FSDP2; fw++) {
        struct zs_cfg f = *base;
        struct zs_err e = {0, ""};
        int thr;
        double eff;
        const char *why;
        if (!framework_any && base->framework != fw)
            continue;
        f.framework = fw;
        f.offload_optimizer = f.offload_param = ZS_OFF_CPU;
        f.zero = 3;
        f.grad_accum = 0;
        f.global_batch = p->global_batch;
        if (fw != ZS_FW_DEEPSPEED) /* plan.c: DeepSpeed ZeRO-3's only */
            f.offload_ratio = 1.0;
        if (zs_cfg_resolve(&f, m, cl, &e))
            continue;
        zs_cpu_threads(&f, &cl->node, &thr, &eff, &why);
        fprintf(out,
                "          %s offload: %s, %d CPU thread%s per rank (%s), "
                "trainer %s",
                zs_cfg_framework_label(&f),
                zs_cpu_opt_label(f.cpu_opt_impl), thr, thr == 1 ? "" : "s", why,
                zs_trainer_name(f.trainer));
        if (f.offload_ratio < 1.0)
            fprintf(out, ", Twin-Flow offload_optimizer.ratio %g (ZeRO-3, "
                         "optimizer on the CPU)",
                    f.offload_ratio);
        fputc('\n', out);
    }
}

static void plan_header(const struct zs_plan *p, const struct zs_model *m,
                        const struct zs_cluster *cl, const struct zs_cfg *base,
                        int framework_any, FILE *out)
{
    char a[32], b[32];
    fprintf(out, "model:    %s (%s params) <- %s\n", m->name,
            zs_fmt_count(a, sizeof a, (double)m->params_total),
            m->resolved_from);
    fprintf(out, "hardware: %s: %d node(s) x %d %s, %s host RAM per node\n",
            cl->spec, cl->nodes, cl->node.gpus_per_node, cl->node.gpu.name,
            zs_fmt_bytes(b, sizeof b, cl->node.host_ram_bytes));
    fprintf(out,
            "search:   %s, seq %lld, global batch %lld sequences%s, trainer "
            "%s, %d candidates simulated in %.2f s (%lld events)\n",
            zs_method_name((enum zs_method)base->method),
            (long long)base->seq_len, (long long)p->global_batch,
            p->global_batch_default ? " (default)" : "",
            zs_trainer_name(base->trainer), p->n, p->elapsed_s,
            (long long)p->events);
    offload_lines(p, m, cl, base, framework_any, out);
    zs_simout_reserved_line(out, base, "of every GPU held by another process",
                            "");
    fputc('\n', out);
}

/* What the plan set that the label does not show, as 'zsim simulate'
 * flags, so that simulating the label with them gives the best's numbers:
 * overlap_comm on for DeepSpeed ZeRO-1/2 (plan.c add_mode; DeepSpeed's
 * default is off below stage 3) and the parameter swap buffer for NVMe
 * (plan.c: the largest partition, where DeepSpeed's 1e8 default can fail
 * its assert).  Nothing when neither applies. */
static void best_flags(const struct zs_cfg *f, FILE *out)
{
    bool overlap = f->framework == ZS_FW_DEEPSPEED && f->zero < 3 &&
                   f->overlap_comm == ZS_YES;
    bool nvme = f->offload_param == ZS_OFF_NVME;
    if (!overlap && !nvme)
        return;
    fprintf(out, "the plan also set:");
    if (overlap)
        fprintf(out, " --overlap-comm yes (DeepSpeed's default is off below "
                     "stage 3)");
    if (nvme)
        fprintf(out, "%s --param-buffer-size %lld (the largest partition)",
                overlap ? "," : "", (long long)f->param_buffer_size);
    fprintf(out, "\n\n");
}

/* The best plan, its launch line and the ranking table. */
static void best_block(const struct zs_plan *p, const struct zs_cluster *cl,
                       int top, FILE *out)
{
    const struct zs_candidate *c = &p->cand[p->best];
    char a[32], b[32], c32[32], lab[200];
    struct zs_table *t;

    zs_plan_cand_label(c, lab, sizeof lab);
    fprintf(out,
            "best: %s: %.0f tok/s per GPU, step %s, peak GPU %s, host %s per "
            "node\n\n",
            lab, c->res.steady.tokens_per_s_per_gpu,
            zs_fmt_seconds(a, sizeof a, c->res.steady.time_s),
            zs_fmt_bytes(b, sizeof b, c->res.steady.peak_gpu_reserved),
            zs_fmt_bytes(c32, sizeof c32, c->res.steady.peak_host_per_node));
    best_flags(&c->cfg, out);
    if (c->cfg.offload_optimizer != ZS_OFF_NONE ||
        c->cfg.offload_param != ZS_OFF_NONE) {
        char line[700];
        zs_launch_line(&c->cfg, &cl->node, cl->nodes, NULL, line, sizeof line);
        fprintf(out, "launch: %s\n\n", line);
    }
    t = zs_emit_table(13, "rlrrrllrrrrrr",
                      "#\tmode\tprocs\tmicro\taccum\tckpt\toffload\tpeak"
                      " GPU\thost/node\tstep\ttok/s/GPU\tMFU\theadroom");
    if (t) {
        for (int i = 0; i < p->nfeasible && i < top; i++)
            fmt_cand_row(t, i + 1, &p->cand[p->order[i]]);
        zs_table_print(t, out, 0);
        zs_table_free(t);
    }
    if (p->nfeasible > top)
        fprintf(out, "(%d more feasible; --top N shows more)\n",
                p->nfeasible - top);
}

/* The rejected candidate of `kind` (invalid takes errors too) closest to
 * fitting: the smallest need over capacity, not yet shown (score >= 0);
 * -1 when none is left. */
static int closest_miss(const struct zs_plan *p, int kind)
{
    double best = 1e300;
    int closest = -1;
    for (int i = 0; i < p->n; i++) {
        const struct zs_candidate *c = &p->cand[i];
        double ratio;
        bool match = c->status == kind ||
                     (kind == ZS_CAND_INVALID && c->status == ZS_CAND_ERROR);
        if (!match || c->score < 0)
            continue;
        ratio = c->res.oom.available_bytes > 0
                    ? (double)c->res.oom.needed_bytes /
                          (double)c->res.oom.available_bytes
                    : (double)i;
        if (ratio < best) {
            best = ratio;
            closest = i;
        }
    }
    return closest;
}

/* Whether a candidate already shown (score -2) gave the same reason. */
static bool reason_shown(const struct zs_plan *p, const char *reason)
{
    for (int j = 0; j < p->n; j++)
        if (p->cand[j].score == -2 && !strcmp(p->cand[j].reason, reason))
            return true;
    return false;
}

/* Up to three closest misses of one kind, each reason once.  Marks
 * candidates' scores: -2 shown, -1 passed over for a repeated reason. */
static void rejected_kind(const struct zs_plan *p, int kind, const char *title,
                          int count, FILE *out)
{
    int shown = 0;
    char lab[200];
    fprintf(out, "  %s: %d candidates\n", title, count);
    /* show the closest misses first: smallest need over capacity */
    for (int pass = 0; pass < 3; pass++) {
        int closest = closest_miss(p, kind);
        struct zs_candidate *c;
        if (closest < 0)
            break;
        c = (struct zs_candidate *)&p->cand[closest];
        /* the same reason for another candidate adds nothing */
        if (reason_shown(p, c->reason)) {
            c->score = -1;
            pass--;
            continue;
        }
        zs_plan_cand_label(c, lab, sizeof lab);
        fprintf(out, "    %s: %s\n", lab, c->reason);
        c->score = -2; /* shown */
        shown++;
    }
    if (count > shown)
        fprintf(out, "    ... and %d more\n", count - shown);
}

static void rejected_block(const struct zs_plan *p, FILE *out)
{
    static const int kinds[3] = {ZS_CAND_GPU_OOM, ZS_CAND_HOST_OOM,
                                 ZS_CAND_INVALID};
    static const char *const titles[3] = {"GPU out of memory", "host RAM",
                                          "invalid"};
    int counts[3] = {0, 0, 0};
    for (int i = 0; i < p->n; i++) {
        counts[0] += p->cand[i].status == ZS_CAND_GPU_OOM;
        counts[1] += p->cand[i].status == ZS_CAND_HOST_OOM;
        counts[2] += p->cand[i].status == ZS_CAND_INVALID ||
                     p->cand[i].status == ZS_CAND_ERROR;
    }
    fprintf(out, "\nrejected: %d of %d\n", counts[0] + counts[1] + counts[2],
            p->n);
    for (int k = 0; k < 3; k++)
        if (counts[k])
            rejected_kind(p, kinds[k], titles[k], counts[k], out);
}

/* What would fit with another setting: the allocator, activation offload,
 * and the suggestions when nothing fits. */
static void notes_block(const struct zs_plan *p, FILE *out)
{
    if (p->alloc_note[0] && p->n > 0 && p->cand[0].cfg.max_split_size_mb > 0)
        /* the re-simulation kept the user's max_split_size_mb, which may
         * have come inside --alloc-conf: the whole value, as PyTorch reads
         * it */
        fprintf(out,
                "\nwith PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,"
                "max_split_size_mb:%lld (--alloc-conf) these rejected for "
                "fragmentation fit too: %s\n",
                (long long)p->cand[0].cfg.max_split_size_mb, p->alloc_note);
    else if (p->alloc_note[0])
        fprintf(out,
                "\nwith --alloc-conf expandable_segments "
                "(PYTORCH_CUDA_ALLOC_CONF) these rejected for fragmentation "
                "fit too: %s\n",
                p->alloc_note);
    if (p->act_note[0])
        fprintf(out,
                "\nwith activation offload (docs/activation-offload.md) these "
                "rejected for GPU memory fit: %s\n",
                p->act_note);
    if (p->twin_note[0])
        fprintf(out,
                "\nwith part of the optimizer on the GPU (Twin-Flow, "
                "docs/cpu-optimizer.md) these run faster: %s\n",
                p->twin_note);
    if (p->bf16_note[0])
        fprintf(out,
                "\nwith DeepSpeed's bf16 master weights + optimizer states "
                "(--param-dtype bf16, DeepSpeed >= 0.19.1; the update rounds "
                "to bf16, docs/trainer.md) these rejected for host RAM fit: "
                "%s\n",
                p->bf16_note);
    if (p->bf16_faster_note[0])
        fprintf(out,
                "\nwith DeepSpeed's bf16 master weights + optimizer states "
                "(--param-dtype bf16, DeepSpeed >= 0.19.1; the update rounds "
                "to bf16, docs/trainer.md) these run faster: %s\n",
                p->bf16_faster_note);
    if (p->liger_faster_note[0])
        fprintf(out,
                "\nwith Liger's fused kernels (--kernels fused; the Trainer's "
                "use_liger_kernel, docs/kernels.md) these run faster: %s\n",
                p->liger_faster_note);
    if (p->best < 0 && p->nsuggest) {
        fprintf(out, "\nwhat would fit:\n");
        for (int i = 0; i < p->nsuggest; i++)
            fprintf(out, "  - %s\n", p->suggestion[i]);
    }
}

void zs_planout_print(const struct zs_plan *p, const struct zs_model *m,
                      const struct zs_cluster *cl, const struct zs_cfg *base,
                      int top, int framework_any, FILE *out)
{
    plan_header(p, m, cl, base, framework_any, out);
    if (p->best >= 0)
        best_block(p, cl, top, out);
    else
        fprintf(out, "best: nothing fits\n");
    rejected_block(p, out);
    notes_block(p, out);
}

/* One candidate's "config" object; cf NULL adds nothing. */
static void config_json(cJSON *cf, const struct zs_candidate *c)
{
    const struct zs_cfg *f = &c->cfg;
    char lab[200];
    zs_plan_cand_label(c, lab, sizeof lab);
    {
        const struct zs_emit_field fields[] = {
            ZS_JSTR("label", lab),
            ZS_JSTR("framework", zs_framework_name(f->framework)),
            ZS_JNUM("zero", f->zero),
            ZS_JNUM("procs_per_node", f->procs_per_node),
            ZS_JNUM("micro_batch", f->micro_batch),
            ZS_JNUM("grad_accum", f->accum),
            ZS_JSTR("checkpointing",
                    zs_ckpt_name((enum zs_ckpt)f->checkpointing)),
            ZS_JSTR("offload_optimizer", zs_offload_name(f->offload_optimizer)),
            ZS_JSTR("offload_param", zs_offload_name(f->offload_param)),
        };
        zs_emit_fields(cf, fields, ZS_EMIT_COUNT(fields));
    }
}

char *zs_planout_json(const struct zs_plan *p, const struct zs_model *m,
                      const struct zs_cluster *cl)
{
    cJSON *d = cJSON_CreateObject(), *arr;
    char *text;
    if (!d)
        return NULL;
    {
        const struct zs_emit_field top[] = {
            ZS_JSTR("schema", "zsim.plan/1"),
            ZS_JSTR("model", m->name),
            ZS_JSTR("hardware", cl->spec),
            ZS_JNUM("searched", p->n),
            ZS_JNUM("feasible", p->nfeasible),
            ZS_JNUM("elapsed_s", p->elapsed_s),
            ZS_JNUM("global_batch", p->global_batch),
            ZS_JSTR("trainer",
                    p->n ? zs_trainer_name(p->cand[0].cfg.trainer) : ""),
        };
        zs_emit_fields(d, top, ZS_EMIT_COUNT(top));
    }
    if (p->best >= 0)
        cJSON_AddNumberToObject(d, "best", p->best);
    else
        cJSON_AddNullToObject(d, "best");
    arr = cJSON_AddArrayToObject(d, "ranking");
    for (int i = 0; arr && i < p->nfeasible; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateNumber(p->order[i]));
    arr = cJSON_AddArrayToObject(d, "candidates");
    for (int i = 0; arr && i < p->n; i++) {
        const struct zs_candidate *c = &p->cand[i];
        cJSON *o = cJSON_CreateObject();
        if (!o)
            break;
        config_json(cJSON_AddObjectToObject(o, "config"), c);
        cJSON_AddStringToObject(o, "verdict",
                                c->status == ZS_CAND_FITS       ? "fits"
                                : c->status == ZS_CAND_GPU_OOM  ? "gpu_oom"
                                : c->status == ZS_CAND_HOST_OOM ? "host_oom"
                                                                : "invalid");
        if (c->status == ZS_CAND_FITS)
            cJSON_AddNullToObject(o, "reason");
        else
            cJSON_AddStringToObject(o, "reason", c->reason);
        if (c->status != ZS_CAND_INVALID && c->status != ZS_CAND_ERROR)
            cJSON_AddItemToObject(o, "steady_step",
                                  zs_simout_step_json(&c->res.steady));
        else
            cJSON_AddNullToObject(o, "steady_step");
        cJSON_AddItemToArray(arr, o);
    }
    if (p->act_note[0])
        cJSON_AddStringToObject(d, "activation_offload_fits", p->act_note);
    if (p->twin_note[0])
        cJSON_AddStringToObject(d, "twin_flow_faster", p->twin_note);
    if (p->bf16_note[0])
        cJSON_AddStringToObject(d, "bf16_master_fits", p->bf16_note);
    if (p->bf16_faster_note[0])
        cJSON_AddStringToObject(d, "bf16_master_faster", p->bf16_faster_note);
    if (p->liger_faster_note[0])
        cJSON_AddStringToObject(d, "liger_kernels_faster",
                                p->liger_faster_note);
    arr = cJSON_AddArrayToObject(d, "what_would_fit");
    for (int i = 0; arr && i < p->nsuggest; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(p->suggestion[i]));
    text = cJSON_Print(d);
    cJSON_Delete(d);
    return text;
}

void zs_planout_launch(const struct zs_cfg *f, const struct zs_cluster *cl,
                       const char *ds_config, FILE *out)
{
    char line[700];
    zs_launch_line(f, &cl->node, cl->nodes, ds_config, line, sizeof line);
    if (ds_config)
        fprintf(out, "\nwrote %s\nlaunch: %s\n", ds_config, line);
    else
        fprintf(out,
                "\nlaunch: %s\n        fully_shard%s, micro %lld, accum "
                "%lld\n",
                line, f->offload_param ? " + CPUOffloadPolicy()" : "",
                (long long)f->micro_batch, (long long)f->accum);
}
