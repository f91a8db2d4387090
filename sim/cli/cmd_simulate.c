/*
 * cmd_simulate.c — `zsim simulate`: one configuration, step by step.
 */
#include "cli/cli_setup.h"
#include "present/runout.h"
#include "present/simout.h"
#include "sched/sched.h"
#include "util/alloc.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: zsim simulate [SCENARIO.json] [--model M] [--gpus SPEC] [flags] "
    "[--json]\n"
    "                     [--trace FILE.json] [--timeline FILE.csv] "
    "[--fail-on-oom]\n"
    "\n"
    "Simulates one configuration: model init, the first step (DeepSpeed "
    "records its\n"
    "prefetch trace and allocates Adam states lazily) and steady steps, for "
    "one\n"
    "representative rank.  Prints the verdict (fits / GPU OOM / host OOM), per "
    "step the\n"
    "peak GPU memory (allocated, reserved) and host memory per node (pinned), "
    "step time\n"
    "with its breakdown, tokens/s per GPU, MFU, the bottleneck, what was live "
    "at each\n"
    "peak, and what DeepSpeed's estimator would have said.\n"
    "\n"
    "Configuration (every flag is also a scenario field, with '_' for '-'):\n"
    "  --model M                 alias, library name, zsim model JSON or HF "
    "config.json (72b)\n"
    "  --gpus SPEC               8xH100, 2x8xH100, 4xA100-80GB, ... (8xH100)\n"
    "  --nodes N  --host-ram SIZE  --procs N (processes per node)\n"
    "  --gpu-reserved SIZE       memory another process (e.g. vLLM) holds on a GPU\n"
    "  --gpu-reserved-gpus N     ... on the last N GPUs of each node (0: on all)\n"
    "  --seq-len N (4096)  --micro-batch N (1)  --grad-accum N  --global-batch "
    "N\n"
    "  --method full|lora|qlora  --lora-rank R (16)  --sp N (Ulysses degree, "
    "1)\n"
    "  --lora-targets all|LIST   adapted projections, e.g. q,v (torchtune's "
    "LoRA recipes)\n"
    "  --framework deepspeed|fsdp2  --zero 2|3\n"
    "  --checkpointing none|selective|full|op|layer:N (full; op = torchtitan "
    "per-op AC;\n"
    "                 layer:N = torchtitan selective layer AC: full AC on "
    "every Nth block)\n"
    "  --offload-optimizer none|cpu  --offload-param none|cpu  --pin-memory "
    "yes|no|auto\n"
    "  --offload-optimizer nvme (ZeRO-3; docs/nvme.md): --nvme-read GB/s "
    "--nvme-write GB/s (per node;\n"
    "    default the node profile's drives)  --nvme-buffer-count N (4)  "
    "--pipeline-read yes|no\n"
    "    --pipeline-write yes|no\n"
    "  --offload-param nvme (ZeRO-3, optimizer cpu or nvme): "
    "--param-buffer-count N (5)\n"
    "    --param-buffer-size ELEMENTS (1e8)  --param-max-in-cpu ELEMENTS "
    "(1e9)\n"
    "  --attention flash|eager|triton  --optimizer "
    "adamw|adamw_8bit|paged_adamw_8bit\n"
    "  --cpu-checkpointing yes|no (DeepSpeed)  --offload-activations yes|no "
    "(torchtune)\n"
    "  --sharding auto|none  (none: one GPU, no FSDP: torchtune's "
    "*_single_device recipes)\n"
    "  --loss auto|full|chunked  (auto: chunked = torchtune's "
    "CEWithChunkedOutputLoss,\n"
    "                 8 chunks, under --trainer torchtune; full otherwise)\n"
    "  --deepspeed-version X.Y.Z (0.19.6)  --zero-init yes|no  --ds-config "
    "FILE\n"
    "  --reduce-bucket-size N|auto  --prefetch-bucket-size N|auto\n"
    "  --param-persistence-threshold N|auto  --max-live-parameters N\n"
    "  --max-reuse-distance N  --sub-group-size N  --overlap-comm yes|no\n"
    "  --contiguous-gradients yes|no  --gradient-clipping X  --steps N (steady "
    "steps, 1)\n"
    "  --name NAME\n"
    "Whole run (given --dataset-samples; docs/run.md): load, init, steps, "
    "evaluations,\n"
    "saves, epoch boundaries and leaks on rank 0's node, the OOM point or the "
    "headroom:\n"
    "  --dataset-samples N  --epochs N (1)  --max-steps S  --eval-every K  "
    "--eval-samples N\n"
    "  --save-every K  --save-epoch-end yes|no (no)  --save-last yes|no (yes)\n"
    "  --dataloader-workers W  --persistent-workers yes|no (no)  "
    "--dataset-bytes SIZE\n"
    "  --leak none|ds7693|ds2984|BYTES/step|BYTES/epoch (per rank)  "
    "--load-dtype fp32|bf16\n"
    "  --gpu-hour-price X\n"
    "Output:\n"
    "  --json                    one JSON document (schema zsim.simulate/1) on "
    "stdout\n"
    "  --trace FILE              Chrome trace (open in Perfetto): a track per "
    "stream and link\n"
    "  --timeline FILE           CSV of GPU and host memory over time (of the "
    "whole run\n"
    "                            when --dataset-samples is given)\n"
    "  --plot FILE.png           the whole run's memory drawn by gnuplot (and "
    "FILE.svg)\n"
    "  --fail-on-oom             exit 4 when the verdict is an OOM\n"
    "  --db FILE                 record the run (the --json document) in a "
    "SQLite store\n"
    "\n"
    "examples:\n"
    "  zsim simulate --model 7b --gpus 8xH100\n"
    "  zsim simulate scenarios/qwen72b-sft-offload-8xh100.json --host-ram 2TiB\n"
    "  zsim simulate --model 7b --framework fsdp2 --offload-optimizer cpu \\\n"
    "      --offload-param cpu --json\n"
    "\n"
    "Exit: 0 ok, 1 runtime failure, 2 usage, 3 invalid input file, 4 OOM with "
    "--fail-on-oom.\n";

static const struct zs_opt own[] = {
    {"json", 0},        {"trace", 1}, {"timeline", 1},
    {"fail-on-oom", 0}, {"plot", 1},  {"db", 1},
};

static int run(int argc, char **argv, struct zs_err *err)
{
    struct zs_opt opts[ZS_ARGS_MAXOPTS];
    size_t nopts = zs_cli_opts(own, sizeof own / sizeof own[0], opts);
    struct zs_args a;
    struct zs_cfg cfg;
    struct zs_cfg_given given;
    struct zs_model m;
    struct zs_cluster cl;
    struct zs_setup su = {0};
    struct zs_runout ro;
    bool whole;
    struct zs_sim_result res;
    struct zs_simout o;
    zs_sim *sim = NULL;
    const char *trace, *timeline;
    int rc;

    rc = zs_args_parse(argc, argv, opts, nopts, "simulate", &a, err);
    if (rc)
        return rc;
    if (a.npos > 1)
        return zs_err_set(err, ZS_EUSAGE,
                          "'simulate' takes at most one scenario file (got %d)",
                          a.npos);
    zs_cfg_defaults(&cfg);
    rc = zs_cli_config(&a, opts, nopts, a.npos ? a.pos[0] : NULL, &cfg,
                       &given, err);
    if (!rc)
        rc = zs_setup_resolve(&cfg, &given, &m, &cl, err);
    if (rc)
        return rc;
    whole = zs_run_wanted(&cfg);
    /* whole-run fields: a bad value names the flag, or the file it came from */
    rc = zs_run_check(&cfg,
                      zs_args_get(&a, opts, nopts, "leak")
                          ? NULL
                          : (a.npos ? a.pos[0] : NULL),
                      zs_args_get(&a, opts, nopts, "dataset-samples")
                          ? NULL
                          : (a.npos ? a.pos[0] : NULL),
                      err);
    if (rc)
        return rc;
    if (zs_args_get(&a, opts, nopts, "plot") && !whole)
        return zs_err_set(
            err, ZS_EUSAGE,
            "'--plot' draws the whole run: give '--dataset-samples N' too");
    su.model = &m;
    su.cluster = &cl;
    su.cfg = &cfg;
    sim = zs_sim_new();
    if (!sim)
        return zs_err_set(err, ZS_ENOMEM, "out of memory");
    rc = zs_simulate(&su, sim, &res, err);
    if (rc)
        goto out;
    if (whole && (rc = zs_runout_compose(&ro, &su, &res, sim, err)))
        goto out;
    o.su = &su;
    o.res = &res;
    o.model_input = cfg.model;
    o.sim = sim;
    trace = zs_args_get(&a, opts, nopts, "trace");
    timeline = zs_args_get(&a, opts, nopts, "timeline");
    if (trace && (rc = zs_write_trace(sim, trace, err)))
        goto out;
    if (timeline && !whole &&
        (rc = zs_write_timeline(sim, 0, 1, (int)cfg.procs_per_node, timeline,
                                err)))
        goto out;
    if (timeline && whole &&
        (rc = zs_runout_write_timeline(&ro, timeline, err)))
        goto out;
    if (whole && zs_args_get(&a, opts, nopts, "plot") &&
        (rc = zs_runout_plot(&ro, zs_args_get(&a, opts, nopts, "plot"), err)))
        goto out;
    {
        bool want_json = zs_args_get(&a, opts, nopts, "json") != NULL;
        const char *db = zs_args_get(&a, opts, nopts, "db");
        if (want_json || db) {
            char *doc =
                whole ? zs_simout_json_with(&o, "run", zs_runout_json(&ro))
                      : zs_simout_json(&o);
            if (!doc) {
                rc = zs_err_set(err, ZS_ENOMEM, "out of memory writing JSON");
                goto out;
            }
            /* --db records the same document --json prints */
            if (db && (rc = zs_cli_record(db, "simulate", cfg.name, argc, argv,
                                          doc, err))) {
                zs_free(doc);
                goto out;
            }
            if (want_json) {
                fputs(doc, stdout);
                fputc('\n', stdout);
            }
            zs_free(doc);
        }
        if (!want_json) {
            zs_simout_print(&o, stdout);
            if (whole)
                zs_runout_print(&ro, stdout);
        }
    }
    if ((res.oom.where != ZS_OOM_NONE ||
         (whole && ro.run.oom.where != ZS_OOM_NONE)) &&
        zs_args_get(&a, opts, nopts, "fail-on-oom"))
        rc = zs_err_set(err, ZS_EGATE, "%s", "");
out:
    zs_sim_free(sim);
    return rc;
}

const struct zs_cmd zs_cmd_simulate = {
    "simulate",
    "simulate one configuration step by step (memory, time, OOM)",
    usage,
    run,
};
