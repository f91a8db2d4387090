/*
 * cmd_plan.c — `zsim plan`: which configuration fits, and how fast.
 */
#include "cli/cli_setup.h"
#include "present/planout.h"
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
    size_t nopts = zs_cfg_args_opts(own, sizeof own / sizeof own[0], opts);
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
    rc = zs_cfg_args_apply(&a, opts, nopts, a.npos ? a.pos[0] : NULL, &base, NULL,
                       err);
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
    /* JSON lists every candidate's need and steady step */
    if (zs_args_get(&a, opts, nopts, "json") ||
        zs_args_get(&a, opts, nopts, "db"))
        po.complete = ZS_PLAN_COMPLETE_ALL;
    rc = zs_plan_run(&m, &cl, &base, &po, &p, err);
    if (rc)
        return rc;
    if (zs_args_get(&a, opts, nopts, "json") ||
        zs_args_get(&a, opts, nopts, "db")) {
        char *doc = zs_planout_json(&p, &m, &cl);
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
        zs_planout_print(&p, &m, &cl, &base, top, po.framework_any,
                         stdout);
    if ((v = zs_args_get(&a, opts, nopts, "emit-ds-config"))) {
        if (p.best < 0) {
            fprintf(stderr,
                    "zsim: nothing fits: no DeepSpeed config written\n");
        } else if (p.cand[p.best].cfg.framework != ZS_FW_DEEPSPEED) {
            fprintf(stderr, "zsim: the best plan uses FSDP2, not DeepSpeed: no "
                            "DeepSpeed config written\n");
            zs_planout_launch(&p.cand[p.best].cfg, &cl, NULL, stdout);
        } else {
            rc = zs_plan_emit_ds(&p.cand[p.best], v, err);
            if (!rc)
                zs_planout_launch(&p.cand[p.best].cfg, &cl, v, stdout);
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
