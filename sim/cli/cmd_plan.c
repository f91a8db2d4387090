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
    "nothing fits it says what would: more host RAM, LoRA or QLoRA, NVMe, "
    "Liger's fused\n"
    "kernels, Ulysses sequence parallelism (DeepSpeed), context parallelism "
    "(FSDP2 on SDPA),\n"
    "more nodes, shorter sequences.  --emit-ds-config writes a DeepSpeed JSON "
    "for the best\n"
    "plan and prints the launch command.\n"
    "Every 'zsim simulate' configuration flag fixes that dimension (e.g. "
    "--procs 4\n"
    "searches only 4 processes per node).  --db FILE records the\n"
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

#define NOWN (sizeof own / sizeof own[0])

/* A plan command line, resolved. */
struct plan_line {
    struct zs_cli_line l;
    struct zs_cfg base; /* the configuration the flags fix */
    struct zs_plan_opts po;
    long top; /* candidates printed */
    struct zs_model m;
    struct zs_cluster cl;
};

/* The options of the search itself: --top, --threads and --objective. */
static int plan_search_opts(struct plan_line *pl, struct zs_err *err)
{
    static const struct {
        const char *name;
        enum zs_objective obj;
    } objs[] = {{"throughput", ZS_OBJ_THROUGHPUT},
                {"cost", ZS_OBJ_COST},
                {"memory", ZS_OBJ_MEMORY}};
    const char *v;
    long threads = pl->po.threads;
    size_t k;
    int rc;

    if ((rc = zs_cli_int("top", zs_cli_get(&pl->l, "top"), 1, 10000,
                         &pl->top, err)) ||
        (rc = zs_cli_int("threads", zs_cli_get(&pl->l, "threads"), 1, 8,
                         &threads, err)))
        return rc;
    pl->po.threads = (int)threads;
    if (!(v = zs_cli_get(&pl->l, "objective")))
        return 0;
    for (k = 0; k < sizeof objs / sizeof objs[0]; k++)
        if (!strcmp(v, objs[k].name)) {
            pl->po.objective = objs[k].obj;
            return 0;
        }
    return zs_err_set(err, ZS_EUSAGE,
                      "invalid value for '--objective': must be one of "
                      "throughput, cost, memory (got '%s')",
                      v);
}

/* The search space: the configuration flags given fix their dimensions;
 * --framework any (the default) searches DeepSpeed and FSDP2. */
static int plan_parse(int argc, char **argv, struct plan_line *pl,
                      struct zs_err *err)
{
    struct zs_cli_line *l = &pl->l;
    const char *scenario, *fw;
    int rc = zs_cli_parse(argc, argv, own, NOWN, "plan", l, err);
    if (!rc)
        rc = zs_cli_scenario(l, "plan", &scenario, err);
    if (rc)
        return rc;
    zs_plan_opts_defaults(&pl->po);
    pl->po.progress = zs_stderr_is_tty();
    pl->top = 10;
    zs_cfg_defaults(&pl->base);
    /* --framework any is the planner's default and its own value */
    fw = zs_cli_get(l, "framework");
    pl->po.framework_any = !fw || !strcmp(fw, "any");
    if (pl->po.framework_any) {
        for (size_t k = 0; k < l->nopts; k++)
            if (!strcmp(l->opts[k].name, "framework"))
                l->a.val[k] = NULL;
    }
    rc = zs_cfg_args_apply(&l->a, l->opts, l->nopts, scenario, &pl->base,
                           NULL, err);
    if (rc)
        return rc;
    /* a configuration flag fixes its dimension of the search */
    pl->po.fix_micro = zs_cli_get(l, "micro-batch") != NULL;
    pl->po.fix_ckpt = zs_cli_get(l, "checkpointing") != NULL;
    pl->po.fix_zero = zs_cli_get(l, "zero") != NULL;
    pl->po.fix_offload_opt = zs_cli_get(l, "offload-optimizer") != NULL;
    pl->po.fix_offload_param = zs_cli_get(l, "offload-param") != NULL;
    pl->po.fix_param_buffer_size =
        zs_cli_get(l, "param-buffer-size") != NULL;
    /* activation offload is searched unless --act-offload no (plan.c) */
    rc = zs_cli_yesno("act-offload", zs_cli_get(l, "act-offload"),
                      &pl->po.act_offload, err);
    /* the search runs under the trainer: torchtitan and torchtune have no
     * DeepSpeed candidates (plan.c), and asking for DeepSpeed is an error */
    if (!rc && !pl->po.framework_any)
        rc = zs_cfg_check_trainer(&pl->base, err);
    return rc ? rc : plan_search_opts(pl, err);
}

/* --allow-nvme yes|no; by default on when the node's NVMe rates are known
 * (profile "storage" or --nvme-read/--nvme-write). */
static int plan_nvme_opt(struct plan_line *pl, struct zs_err *err)
{
    bool known = zs_plan_nvme_default(&pl->base, &pl->cl), want = known;
    int rc = zs_cli_yesno("allow-nvme", zs_cli_get(&pl->l, "allow-nvme"),
                          &want, err);
    if (rc)
        return rc;
    if (want && !known)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--allow-nvme yes' needs the node's NVMe rates: "
                          "profile '%s' has no \"storage\"; give "
                          "'--nvme-read' and '--nvme-write' (GB/s per node)",
                          pl->cl.node.name);
    pl->po.allow_nvme = want;
    return 0;
}

/* The model and cluster the search runs on, and the NVMe choice. */
static int plan_resolve(struct plan_line *pl, struct zs_err *err)
{
    int rc = zs_model_resolve(pl->base.model, &pl->m, err);
    if (!rc) /* ALiBi models without a flash-attention path (model.h) */
        rc = zs_model_check_attention(
            &pl->m, (enum zs_attn_impl)zs_cfg_attention(&pl->base), err);
    if (!rc)
        rc = zs_hw_resolve(pl->base.gpus, 0, (int)pl->base.nodes, &pl->cl,
                           err);
    if (!rc)
        rc = zs_hw_set_host(&pl->cl, pl->base.host_ram_bytes,
                            pl->base.host_reserved_bytes, err);
    if (!rc)
        rc = plan_nvme_opt(pl, err);
    return rc;
}

/* The zsim.plan/1 document for --json (printed) and --db (recorded); the
 * ranked text unless --json. */
static int plan_print(const struct plan_line *pl, const struct zs_plan *p,
                      int argc, char **argv, struct zs_err *err)
{
    const char *db = zs_cli_get(&pl->l, "db");
    bool json = zs_cli_get(&pl->l, "json") != NULL;
    if (json || db) {
        char *doc = zs_planout_json(p, &pl->m, &pl->cl);
        int rc = 0;
        if (!doc)
            return zs_err_set(err, ZS_ENOMEM, "out of memory writing JSON");
        if (db) {
            char scen[160];
            snprintf(scen, sizeof scen, "plan-%s-%s", pl->m.name,
                     pl->cl.spec);
            rc = zs_cli_record(db, "plan",
                               pl->base.name[0] ? pl->base.name : scen, argc,
                               argv, doc, err);
        }
        if (json) {
            fputs(doc, stdout);
            fputc('\n', stdout);
        }
        zs_free(doc);
        if (rc)
            return rc;
    }
    if (!json)
        zs_planout_print(p, &pl->m, &pl->cl, &pl->base, (int)pl->top,
                         pl->po.framework_any, stdout);
    return 0;
}

/* --emit-ds-config FILE: the best plan's DeepSpeed JSON, and its launch
 * command. */
static int plan_emit(const struct plan_line *pl, const struct zs_plan *p,
                     const char *v, struct zs_err *err)
{
    int rc;
    if (p->best < 0) {
        fprintf(stderr, "zsim: nothing fits: no DeepSpeed config written\n");
        return 0;
    }
    if (p->cand[p->best].cfg.framework != ZS_FW_DEEPSPEED) {
        fprintf(stderr, "zsim: the best plan uses FSDP2, not DeepSpeed: no "
                        "DeepSpeed config written\n");
        zs_planout_launch(&p->cand[p->best].cfg, &pl->cl, NULL, stdout);
        return 0;
    }
    rc = zs_plan_emit_ds(&p->cand[p->best], v, err);
    if (!rc)
        zs_planout_launch(&p->cand[p->best].cfg, &pl->cl, v, stdout);
    return rc;
}

static int run(int argc, char **argv, struct zs_err *err)
{
    struct plan_line pl;
    struct zs_plan p;
    const char *v;
    int rc = plan_parse(argc, argv, &pl, err);

    if (!rc)
        rc = plan_resolve(&pl, err);
    if (rc)
        return rc;
    /* JSON lists every candidate's need and steady step */
    if (zs_cli_get(&pl.l, "json") || zs_cli_get(&pl.l, "db"))
        pl.po.complete = ZS_PLAN_COMPLETE_ALL;
    rc = zs_plan_run(&pl.m, &pl.cl, &pl.base, &pl.po, &p, err);
    if (rc)
        return rc;
    rc = plan_print(&pl, &p, argc, argv, err);
    if (!rc && (v = zs_cli_get(&pl.l, "emit-ds-config")))
        rc = plan_emit(&pl, &p, v, err);
    if (!rc && p.best < 0 && zs_cli_get(&pl.l, "fail-on-oom"))
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
