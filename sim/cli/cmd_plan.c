/*
 * cmd_plan.c — `zsim plan`: which configuration fits, and how fast.
 */
#include "cli/cli_setup.h"
#include "present/simout.h"
#include "plan/plan.h"
#include "sched/sched.h"
#include "util/alloc.h"
#include "util/table.h"
#include "util/units.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: zsim plan --model M --gpus SPEC [--host-ram SIZE] [--seq-len N]\n"
    "                 [--global-batch N] [--method full|lora|qlora]\n"
    "                 [--framework deepspeed|fsdp2|any] [--gpu-reserved SIZE]\n"
    "                 [--objective throughput|cost|memory] [--top N]\n"
    "                 [--emit-ds-config FILE] [--json] [--db FILE]\n"
    "                 [--act-offload yes|no] [--allow-nvme yes|no]\n"
    "                 [configuration flags]\n"
    "\n"
    "Searches processes per node, micro-batch, accumulation (to reach the "
    "global batch;\n"
    "64 sequences when none is given), checkpointing, ZeRO stage, offload and "
    "framework,\n"
    "simulates every candidate with the engine, and prints the feasible ones "
    "ranked, the\n"
    "best in one line, and the rejected ones grouped by reason with their "
    "numbers.  When\n"
    "nothing fits it says what would: more host RAM, LoRA or QLoRA, more "
    "nodes, shorter\n"
    "sequences.  --emit-ds-config writes a DeepSpeed JSON for the best plan "
    "and prints the\n"
    "launch command.  Every 'zsim simulate' configuration flag fixes that "
    "dimension\n"
    "(e.g. --procs 4 searches only 4 processes per node).  --db FILE records "
    "the\n"
    "plan in a SQLite run store (see 'zsim report').  Candidates out of GPU "
    "memory with\n"
    "full checkpointing are tried again with activation offload (DeepSpeed\n"
    "cpu_checkpointing; torchtune's under --trainer torchtune) unless "
    "--act-offload no.\n"
    "--allow-nvme searches DeepSpeed ZeRO-3 with the optimizer states on NVMe "
    "(default\n"
    "yes when the node profile has drives or --nvme-read/--nvme-write are "
    "given;\n"
    "docs/nvme.md).\n"
    "\n"
    "Objectives: throughput (default) ranks by the job's tokens/s; cost by the\n"
    "fewest GPU-hours per token counting only the GPUs used (per-GPU rental);\n"
    "memory by the largest GPU headroom.\n"
    "\n"
    "examples:\n"
    "  zsim plan --model 7b --gpus 8xH100 --top 5\n"
    "  zsim plan --model 72b --gpus 8xH100 --host-ram 512GiB\n"
    "  zsim plan --model 72b --gpus 8xH100 --framework deepspeed \\\n"
    "      --emit-ds-config ds_config.json\n"
    "\n"
    "Exit: 0 ok (also when nothing fits), 1 runtime failure, 2 usage, 3 "
    "invalid input,\n"
    "4 nothing fits with --fail-on-oom.\n";

static const struct zs_opt own[] = {
    {"json", 0},        {"top", 1},     {"objective", 1}, {"emit-ds-config", 1},
    {"fail-on-oom", 0}, {"threads", 1}, {"db", 1},        {"act-offload", 1},
    {"allow-nvme", 1},
};

static void fmt_cand_row(struct zs_table *t, int rank,
                         const struct zs_candidate *c)
{
    const struct zs_cfg *f = &c->cfg;
    const struct zs_step_result *s = &c->res.steady;
    char g[32], h[32], st[32], hd[32];
    const char *off =
        f->offload_optimizer == ZS_OFF_NVME
            ? (f->offload_param == ZS_OFF_NVME   ? "opt+param nvme"
               : f->offload_param != ZS_OFF_NONE ? "nvme+param"
                                                 : "nvme")
        : f->offload_param == ZS_OFF_NVME     ? "opt, param nvme"
        : f->offload_param != ZS_OFF_NONE     ? "opt+param"
        : f->offload_optimizer != ZS_OFF_NONE ? "opt"
                                              : "none";
    zs_table_rowf(
        t, "%d\t%s\t%lld\t%lld\t%lld\t%s\t%s\t%s\t%s\t%s\t%.0f\t%.1f%%\t%s",
        rank,
        f->framework == ZS_FW_FSDP2 ? (f->zero == 3 ? "fsdp2" : "fsdp2-nrs")
                                    : (f->zero == 3 ? "zero3" : "zero2"),
        (long long)f->procs_per_node, (long long)f->micro_batch,
        (long long)f->accum, zs_ckpt_name((enum zs_ckpt)f->checkpointing), off,
        zs_fmt_bytes(g, sizeof g, s->peak_gpu_reserved),
        zs_fmt_bytes(h, sizeof h, s->peak_host_per_node),
        zs_fmt_seconds(st, sizeof st, s->time_s), s->tokens_per_s_per_gpu,
        s->mfu * 100,
        zs_fmt_bytes(hd, sizeof hd,
                     c->res.gpu_capacity_bytes - s->peak_gpu_reserved));
}

static void print_plan(const struct zs_plan *p, const struct zs_model *m,
                       const struct zs_cluster *cl, const struct zs_cfg *base,
                       int top, int framework_any)
{
    char a[32], b[32], c32[32], lab[200];
    int ngpu = 0, nhost = 0, ninv = 0;
    struct zs_table *t;
    fprintf(stdout, "model:    %s (%s params) <- %s\n", m->name,
            zs_fmt_count(a, sizeof a, (double)m->params_total),
            m->resolved_from);
    fprintf(stdout, "hardware: %s: %d node(s) x %d %s, %s host RAM per node\n",
            cl->spec, cl->nodes, cl->node.gpus_per_node, cl->node.gpu.name,
            zs_fmt_bytes(b, sizeof b, cl->node.host_ram_bytes));
    fprintf(stdout,
            "search:   %s, seq %lld, global batch %lld sequences%s, trainer "
            "%s, %d candidates simulated in %.2f s (%lld events)\n",
            zs_method_name((enum zs_method)base->method),
            (long long)base->seq_len, (long long)p->global_batch,
            p->global_batch_default ? " (default)" : "",
            zs_trainer_name(base->trainer), p->n, p->elapsed_s,
            (long long)p->events);
    /* the CPU optimizer and threads the offload candidates assume, per
     * framework (docs/cpu-optimizer.md) */
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
        if (zs_cfg_resolve(&f, m, cl, &e))
            continue;
        zs_cpu_threads(&f, &cl->node, &thr, &eff, &why);
        fprintf(stdout,
                "          %s offload: %s, %d CPU thread%s per rank (%s), "
                "trainer %s\n",
                fw == ZS_FW_FSDP2 ? "fsdp2" : "deepspeed",
                zs_cpu_opt_label(f.cpu_opt_impl), thr, thr == 1 ? "" : "s",
                why, zs_trainer_name(f.trainer));
    }
    if (base->gpu_reserved_bytes && !base->gpu_reserved_gpus)
        fprintf(stdout, "          %s of every GPU held by another process\n",
                zs_fmt_bytes(a, sizeof a, base->gpu_reserved_bytes));
    else if (base->gpu_reserved_bytes)
        fprintf(stdout,
                "          %s held by another process on the last %lld GPUs of "
                "each node\n",
                zs_fmt_bytes(a, sizeof a, base->gpu_reserved_bytes),
                (long long)base->gpu_reserved_gpus);
    fputc('\n', stdout);
    if (p->best >= 0) {
        const struct zs_candidate *c = &p->cand[p->best];
        zs_plan_cand_label(c, lab, sizeof lab);
        fprintf(
            stdout,
            "best: %s: %.0f tok/s per GPU, step %s, peak GPU %s, host %s per "
            "node\n\n",
            lab, c->res.steady.tokens_per_s_per_gpu,
            zs_fmt_seconds(a, sizeof a, c->res.steady.time_s),
            zs_fmt_bytes(b, sizeof b, c->res.steady.peak_gpu_reserved),
            zs_fmt_bytes(c32, sizeof c32, c->res.steady.peak_host_per_node));
        if (c->cfg.offload_optimizer != ZS_OFF_NONE ||
            c->cfg.offload_param != ZS_OFF_NONE) {
            char line[700];
            zs_launch_line(&c->cfg, &cl->node, cl->nodes, NULL, line,
                           sizeof line);
            fprintf(stdout, "launch: %s\n\n", line);
        }
        t = zs_table_new(13, "rlrrrllrrrrrr");
        if (t) {
            zs_table_header(t);
            zs_table_rowf(t, "#\tmode\tprocs\tmicro\taccum\tckpt\toffload\tpeak"
                             " GPU\thost/node\tstep\ttok/s/GPU\tMFU\theadroom");
            for (int i = 0; i < p->nfeasible && i < top; i++)
                fmt_cand_row(t, i + 1, &p->cand[p->order[i]]);
            zs_table_print(t, stdout, 0);
            zs_table_free(t);
        }
        if (p->nfeasible > top)
            fprintf(stdout, "(%d more feasible; --top N shows more)\n",
                    p->nfeasible - top);
    } else {
        fprintf(stdout, "best: nothing fits\n");
    }
    for (int i = 0; i < p->n; i++) {
        ngpu += p->cand[i].status == ZS_CAND_GPU_OOM;
        nhost += p->cand[i].status == ZS_CAND_HOST_OOM;
        ninv += p->cand[i].status == ZS_CAND_INVALID ||
                p->cand[i].status == ZS_CAND_ERROR;
    }
    fprintf(stdout, "\nrejected: %d of %d\n", ngpu + nhost + ninv, p->n);
    {
        const int kinds[3] = {ZS_CAND_GPU_OOM, ZS_CAND_HOST_OOM,
                              ZS_CAND_INVALID};
        const char *titles[3] = {"GPU out of memory", "host RAM", "invalid"};
        const int counts[3] = {ngpu, nhost, ninv};
        for (int k = 0; k < 3; k++) {
            int shown = 0, closest = -1;
            if (!counts[k])
                continue;
            fprintf(stdout, "  %s: %d candidates\n", titles[k], counts[k]);
            /* show the closest misses first: smallest need over capacity */
            for (int pass = 0; pass < 3; pass++) {
                double best = 1e300;
                closest = -1;
                for (int i = 0; i < p->n; i++) {
                    const struct zs_candidate *c = &p->cand[i];
                    double ratio;
                    bool match =
                        c->status == kinds[k] || (kinds[k] == ZS_CAND_INVALID &&
                                                  c->status == ZS_CAND_ERROR);
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
                if (closest < 0)
                    break;
                /* the same reason for another candidate adds nothing */
                {
                    bool dup = false;
                    for (int j = 0; j < p->n && !dup; j++)
                        dup =
                            p->cand[j].score == -2 &&
                            !strcmp(p->cand[j].reason, p->cand[closest].reason);
                    if (dup) {
                        ((struct zs_candidate *)&p->cand[closest])->score = -1;
                        pass--;
                        continue;
                    }
                }
                zs_plan_cand_label(&p->cand[closest], lab, sizeof lab);
                fprintf(stdout, "    %s: %s\n", lab, p->cand[closest].reason);
                ((struct zs_candidate *)&p->cand[closest])->score =
                    -2; /* shown */
                shown++;
            }
            if (counts[k] > shown)
                fprintf(stdout, "    ... and %d more\n", counts[k] - shown);
        }
    }
    if (p->alloc_note[0])
        fprintf(stdout,
                "\nwith --alloc-conf expandable_segments "
                "(PYTORCH_CUDA_ALLOC_CONF) these rejected for fragmentation "
                "fit too: %s\n",
                p->alloc_note);
    if (p->act_note[0])
        fprintf(stdout,
                "\nwith activation offload (docs/activation-offload.md) these "
                "rejected for GPU memory fit: %s\n",
                p->act_note);
    if (p->best < 0 && p->nsuggest) {
        fprintf(stdout, "\nwhat would fit:\n");
        for (int i = 0; i < p->nsuggest; i++)
            fprintf(stdout, "  - %s\n", p->suggestion[i]);
    }
}

static char *plan_json(const struct zs_plan *p, const struct zs_model *m,
                       const struct zs_cluster *cl)
{
    cJSON *d = cJSON_CreateObject(), *arr;
    char *text;
    if (!d)
        return NULL;
    cJSON_AddStringToObject(d, "schema", "zsim.plan/1");
    cJSON_AddStringToObject(d, "model", m->name);
    cJSON_AddStringToObject(d, "hardware", cl->spec);
    cJSON_AddNumberToObject(d, "searched", p->n);
    cJSON_AddNumberToObject(d, "feasible", p->nfeasible);
    cJSON_AddNumberToObject(d, "elapsed_s", p->elapsed_s);
    cJSON_AddNumberToObject(d, "global_batch", (double)p->global_batch);
    cJSON_AddStringToObject(d, "trainer",
                            p->n ? zs_trainer_name(p->cand[0].cfg.trainer)
                                 : "");
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
        const struct zs_cfg *f = &c->cfg;
        cJSON *o = cJSON_CreateObject(), *cf;
        char lab[200];
        if (!o)
            break;
        cf = cJSON_AddObjectToObject(o, "config");
        if (cf) {
            zs_plan_cand_label(c, lab, sizeof lab);
            cJSON_AddStringToObject(cf, "label", lab);
            cJSON_AddStringToObject(cf, "framework",
                                    zs_framework_name(f->framework));
            cJSON_AddNumberToObject(cf, "zero", (double)f->zero);
            cJSON_AddNumberToObject(cf, "procs_per_node",
                                    (double)f->procs_per_node);
            cJSON_AddNumberToObject(cf, "micro_batch", (double)f->micro_batch);
            cJSON_AddNumberToObject(cf, "grad_accum", (double)f->accum);
            cJSON_AddStringToObject(
                cf, "checkpointing",
                zs_ckpt_name((enum zs_ckpt)f->checkpointing));
            cJSON_AddStringToObject(cf, "offload_optimizer",
                                    zs_offload_name(f->offload_optimizer));
            cJSON_AddStringToObject(cf, "offload_param",
                                    zs_offload_name(f->offload_param));
        }
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
    arr = cJSON_AddArrayToObject(d, "what_would_fit");
    for (int i = 0; arr && i < p->nsuggest; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(p->suggestion[i]));
    text = cJSON_Print(d);
    cJSON_Delete(d);
    return text;
}

/* --allow-nvme yes|no; by default on when the node's NVMe rates are known
 * (profile "storage" or --nvme-read/--nvme-write). */
static int plan_nvme_opt(const struct zs_args *a, const struct zs_opt *opts,
                         size_t nopts, const struct zs_cfg *base,
                         const struct zs_cluster *cl, struct zs_plan_opts *po,
                         struct zs_err *err)
{
    const char *v = zs_args_get(a, opts, nopts, "allow-nvme");
    po->allow_nvme = zs_plan_nvme_default(base, cl);
    if (!v)
        return 0;
    if (!strcmp(v, "no")) {
        po->allow_nvme = false;
        return 0;
    }
    if (strcmp(v, "yes"))
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid value for '--allow-nvme': must be yes or "
                          "no (got '%s')",
                          v);
    if (!po->allow_nvme)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--allow-nvme yes' needs the node's NVMe rates: "
                          "profile '%s' has no \"storage\"; give "
                          "'--nvme-read' and '--nvme-write' (GB/s per node)",
                          cl->node.name);
    return 0;
}

static int run(int argc, char **argv, struct zs_err *err)
{
    struct zs_opt opts[ZS_ARGS_MAXOPTS];
    size_t nopts = zs_cli_opts(own, sizeof own / sizeof own[0], opts);
    struct zs_args a;
    struct zs_cfg base;
    struct zs_model m;
    struct zs_cluster cl;
    struct zs_plan p;
    struct zs_plan_opts po;
    const char *v;
    int top = 10, rc;

    rc = zs_args_parse(argc, argv, opts, nopts, "plan", &a, err);
    if (rc)
        return rc;
    if (a.npos > 1)
        return zs_err_set(err, ZS_EUSAGE,
                          "'plan' takes at most one scenario file (got %d)",
                          a.npos);
    zs_plan_opts_defaults(&po);
    po.progress = zs_stderr_is_tty();
    zs_cfg_defaults(&base);
    /* --framework any is the planner's default and its own value */
    v = zs_args_get(&a, opts, nopts, "framework");
    po.framework_any = !v || !strcmp(v, "any");
    if (po.framework_any) {
        for (size_t k = 0; k < nopts; k++)
            if (!strcmp(opts[k].name, "framework"))
                a.val[k] = NULL;
    }
    rc = zs_cli_config(&a, opts, nopts, a.npos ? a.pos[0] : NULL, &base, err);
    if (rc)
        return rc;
    /* a configuration flag fixes its dimension of the search */
    po.fix_micro = zs_args_get(&a, opts, nopts, "micro-batch") != NULL;
    po.fix_ckpt = zs_args_get(&a, opts, nopts, "checkpointing") != NULL;
    /* activation offload is searched unless --act-offload no (plan.c) */
    if ((v = zs_args_get(&a, opts, nopts, "act-offload"))) {
        if (strcmp(v, "yes") && strcmp(v, "no"))
            return zs_err_set(err, ZS_EUSAGE,
                              "invalid value for '--act-offload': must be yes "
                              "or no (got '%s')",
                              v);
        po.act_offload = !strcmp(v, "yes");
    }
    po.fix_zero = zs_args_get(&a, opts, nopts, "zero") != NULL;
    po.fix_offload_opt =
        zs_args_get(&a, opts, nopts, "offload-optimizer") != NULL;
    po.fix_offload_param =
        zs_args_get(&a, opts, nopts, "offload-param") != NULL;
    po.fix_param_buffer_size =
        zs_args_get(&a, opts, nopts, "param-buffer-size") != NULL;
    /* the search runs under the trainer: torchtitan and torchtune have no
     * DeepSpeed candidates (plan.c), and asking for DeepSpeed is an error */
    if (!po.framework_any && (rc = zs_cfg_check_trainer(&base, err)))
        return rc;
    if ((v = zs_args_get(&a, opts, nopts, "top"))) {
        char *end;
        long t = strtol(v, &end, 10);
        if (*end || t < 1 || t > 10000)
            return zs_err_set(err, ZS_EUSAGE,
                              "invalid value for '--top': must be an integer "
                              "in [1, 10000] (got '%s')",
                              v);
        top = (int)t;
    }
    if ((v = zs_args_get(&a, opts, nopts, "threads"))) {
        char *end;
        long t = strtol(v, &end, 10);
        if (*end || t < 1 || t > 8)
            return zs_err_set(err, ZS_EUSAGE,
                              "invalid value for '--threads': must be an "
                              "integer in [1, 8] (got '%s')",
                              v);
        po.threads = (int)t;
    }
    if ((v = zs_args_get(&a, opts, nopts, "objective"))) {
        if (!strcmp(v, "throughput"))
            po.objective = ZS_OBJ_THROUGHPUT;
        else if (!strcmp(v, "cost"))
            po.objective = ZS_OBJ_COST;
        else if (!strcmp(v, "memory"))
            po.objective = ZS_OBJ_MEMORY;
        else
            return zs_err_set(err, ZS_EUSAGE,
                              "invalid value for '--objective': must be one of "
                              "throughput, cost, memory (got '%s')",
                              v);
    }
    rc = zs_model_resolve(base.model, &m, err);
    if (!rc) /* ALiBi models without a flash-attention path (model.h) */
        rc = zs_model_check_attention(&m, base.attention, err);
    if (!rc)
        rc = zs_hw_resolve(base.gpus, base.host_ram_bytes, (int)base.nodes, &cl,
                           err);
    if (rc)
        return rc;
    rc = plan_nvme_opt(&a, opts, nopts, &base, &cl, &po, err);
    if (rc)
        return rc;
    rc = zs_plan_run(&m, &cl, &base, &po, &p, err);
    if (rc)
        return rc;
    if (zs_args_get(&a, opts, nopts, "json") ||
        zs_args_get(&a, opts, nopts, "db")) {
        char *doc = plan_json(&p, &m, &cl);
        if (!doc) {
            zs_plan_release(&p);
            return zs_err_set(err, ZS_ENOMEM, "out of memory writing JSON");
        }
        if (zs_args_get(&a, opts, nopts, "db")) {
            char scen[160];
            snprintf(scen, sizeof scen, "plan-%s-%s", m.name, cl.spec);
            rc = zs_cli_record(zs_args_get(&a, opts, nopts, "db"), "plan",
                               base.name[0] ? base.name : scen, argc, argv, doc,
                               err);
        }
        if (zs_args_get(&a, opts, nopts, "json")) {
            fputs(doc, stdout);
            fputc('\n', stdout);
        }
        zs_free(doc);
        if (rc) {
            zs_plan_release(&p);
            return rc;
        }
    }
    if (!zs_args_get(&a, opts, nopts, "json"))
        print_plan(&p, &m, &cl, &base, top, po.framework_any);
    if ((v = zs_args_get(&a, opts, nopts, "emit-ds-config"))) {
        if (p.best < 0) {
            fprintf(stderr,
                    "zsim: nothing fits: no DeepSpeed config written\n");
        } else if (p.cand[p.best].cfg.framework != ZS_FW_DEEPSPEED) {
            const struct zs_cfg *f = &p.cand[p.best].cfg;
            fprintf(stderr, "zsim: the best plan uses FSDP2, not DeepSpeed: no "
                            "DeepSpeed config written\n");
            char line[700];
            zs_launch_line(f, &cl.node, cl.nodes, NULL, line, sizeof line);
            fprintf(stdout,
                    "\nlaunch: %s\n        fully_shard%s, micro %lld, accum "
                    "%lld\n",
                    line, f->offload_param ? " + CPUOffloadPolicy()" : "",
                    (long long)f->micro_batch, (long long)f->accum);
        } else {
            const struct zs_cfg *f = &p.cand[p.best].cfg;
            rc = zs_plan_emit_ds(&p.cand[p.best], v, err);
            if (!rc) {
                fprintf(stdout, "\nwrote %s\n", v);
                char line[700];
                zs_launch_line(f, &cl.node, cl.nodes, v, line, sizeof line);
                fprintf(stdout, "launch: %s\n", line);
            }
        }
    }
    if (!rc && p.best < 0 && zs_args_get(&a, opts, nopts, "fail-on-oom"))
        rc = zs_err_set(err, ZS_EGATE, "%s", "");
    zs_plan_release(&p);
    return rc;
}

const struct zs_cmd zs_cmd_plan = {
    "plan",
    "choose processes, micro-batch, accumulation, checkpointing and offload",
    usage,
    run,
};
