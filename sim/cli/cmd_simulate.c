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
    "  --host-reserved SIZE      host RAM kept for the OS (the node's: 32GiB on "
    "servers)\n"
    "  --gpu-reserved SIZE       memory another process (e.g. vLLM) holds on a GPU\n"
    "  --gpu-reserved-gpus N     ... on the last N GPUs of each node (0: on all)\n"
    "  --seq-len N (4096)  --micro-batch N (1)  --grad-accum N  --global-batch "
    "N\n"
    "  --method full|lora|qlora  --lora-rank R (16)  --sp N (Ulysses degree, "
    "1)\n"
    "  --cp N (1)                context parallel (PyTorch context_parallel, "
    "ring attention over\n"
    "                            SDPA): fsdp2, each rank holds seq / N "
    "tokens\n"
    "  --lora-targets all|LIST   adapted projections, e.g. q,v (torchtune's "
    "LoRA recipes)\n"
    "  --lora-dropout P (0)      PEFT lora_dropout: > 0 saves the dropped "
    "input and mask\n"
    "  --framework deepspeed|fsdp2  --zero 2|3\n"
    "  --checkpointing none|selective|full|op|layer:N (full; op = torchtitan "
    "per-op AC;\n"
    "                 layer:N = torchtitan selective layer AC: full AC on "
    "every Nth block)\n"
    "  --offload-optimizer none|cpu  --offload-param none|cpu  --pin-memory "
    "yes|no|auto\n"
    "  --offload-ratio R (1)     offload_optimizer.ratio, Twin-Flow (ZeRO-3, "
    "optimizer cpu,\n"
    "                 DeepSpeed >= 0.12.3): the share of sub-groups stepped "
    "on the CPU, the rest\n"
    "                 by torch AdamW on the GPU (whole sub-groups: "
    "docs/cpu-optimizer.md)\n"
    "  --offload-optimizer nvme (ZeRO-3; docs/nvme.md): --nvme-read GB/s "
    "--nvme-write GB/s (per node;\n"
    "    default the node profile's drives)  --nvme-buffer-count N (4)  "
    "--pipeline-read yes|no\n"
    "    --pipeline-write yes|no\n"
    "  --offload-param nvme (ZeRO-3, optimizer cpu or nvme): "
    "--param-buffer-count N (5)\n"
    "    --param-buffer-size ELEMENTS (1e8)  --param-max-in-cpu ELEMENTS "
    "(1e9)\n"
    "  --attention auto|flash|sdpa|eager|triton (auto: sdpa under "
    "torchtitan and torchtune,\n"
    "                 else flash)\n"
    "  --optimizer adamw|adamw_8bit|paged_adamw_8bit\n"
    "  --cpu-checkpointing yes|no (DeepSpeed)  --offload-activations yes|no "
    "(torchtune)\n"
    "  --sharding auto|none|no-shard  (none: one GPU, no FSDP: torchtune's "
    "*_single_device recipes;\n"
    "                 no-shard: FSDP1 NO_SHARD, full replicas, all-reduced "
    "grads)\n"
    "  --fsdp-version 1|2 (2: fully_shard; 1: FullyShardedDataParallel, "
    "with --framework fsdp2)\n"
    "  --trainer hf|torchtitan|torchtune  --param-dtype auto|fp32|bf16  "
    "--reduce-dtype auto|fp32|bf16\n"
    "  --opt-state-dtype auto|fp32|bf16  (auto: the param dtype; DeepSpeed "
    "--param-dtype bf16 =\n"
    "                 bf16 master weights + optimizer states, >= 0.18.3; fp32 "
    "states: the master\n"
    "                 flag alone, optimizer offloaded; docs/trainer.md)\n"
    "  --optimizer-in-bwd yes|no  (torchtune's optimizer_in_bwd: each "
    "parameter stepped\n"
    "                 in backward; fsdp2, trainer torchtune, full, accum 1)\n"
    "  --loss auto|full|chunked|fp32-output|fp32-logits|flash-xentropy|half  (auto: chunked = "
    "torchtune's\n"
    "                 CEWithChunkedOutputLoss, 8 chunks, under --trainer "
    "torchtune; full\n"
    "                 otherwise; fp32-output: fp32 logits held through "
    "backward;\n"
    "                 fp32-logits: the same, dropped before backward (HF "
    "Trainer);\n"
    "                 flash-xentropy: flash-attn's fused cross-entropy, "
    "llm-foundry's;\n"
    "                 half: 16-bit logits and log-softmax, no upcast, "
    "deepspeed)\n"
    "  --kernels hf|fused|compiled  --compile-loss auto|yes|no (auto: yes "
    "under compiled;\n"
    "                 no: the loss runs eager, torchtitan's December 2024 "
    "benchmark)\n"
    "  --fp8 none|tensorwise  (torchao Float8Linear, dynamic tensorwise "
    "scaling: fsdp2,\n"
    "                 full, --kernels compiled, a GPU with fp8 figures)\n"
    "  --fp8-all-gather yes|no  (FSDP2 all-gathers Float8Linear weights in "
    "fp8)\n"
    "  --alloc-conf default|expandable_segments|PYTORCH_CUDA_ALLOC_CONF\n"
    "                 (e.g. expandable_segments:True,max_split_size_mb:128;\n"
    "                 default)  --max-split-size-mb N (21+; unset): docs/engine.md\n"
    "  --deepspeed-version X.Y.Z (0.19.6)  --zero-init yes|no  --ds-config "
    "FILE\n"
    "  --torch-version X.Y (2.11: the CPU AdamW for-loop before 2.1 makes one "
    "more pass;\n"
    "                 SDPA's flash backend before 2.2 is flash-attn 1.x's)\n"
    "  --reduce-bucket-size N|auto  --prefetch-bucket-size N|auto\n"
    "  --param-persistence-threshold N|auto  --max-live-parameters N\n"
    "  --model-persistence-threshold N (no cap)  the most persistent "
    "elements in all\n"
    "  --max-reuse-distance N  --sub-group-size N\n"
    "  --overlap-comm yes|no|auto (auto: DeepSpeed's default, yes for ZeRO-3 "
    "only)\n"
    "  --contiguous-gradients yes|no  --gradient-clipping X  --steps N (steady "
    "steps, 1)\n"
    "  --all-micro-steps         simulate every micro-step of every step "
    "(default: the first,\n"
    "                            one steady one and the boundary, the steady "
    "one standing for\n"
    "                            the rest: the same results, docs/engine.md "
    "\"Accumulation\")\n"
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
    {"all-micro-steps", 0},
};

#define NOWN (sizeof own / sizeof own[0])

/* A simulate command line, resolved. */
struct sim_line {
    struct zs_cli_line l;
    const char *scenario; /* the positional scenario file, or NULL */
    struct zs_cfg cfg;
    struct zs_model m;
    struct zs_cluster cl;
    bool whole; /* --dataset-samples: the whole run too (run/run.h) */
};

static int sim_parse(int argc, char **argv, struct sim_line *s,
                     struct zs_err *err)
{
    const struct zs_cli_line *l = &s->l;
    int rc = zs_cli_parse(argc, argv, own, NOWN, "simulate", &s->l, err);
    if (!rc)
        rc = zs_cli_scenario(l, "simulate", &s->scenario, err);
    if (!rc)
        rc = zs_cfg_args_resolve(&l->a, l->opts, l->nopts, s->scenario,
                                 &s->cfg, &s->m, &s->cl, err);
    if (rc)
        return rc;
    s->whole = zs_run_wanted(&s->cfg);
    /* whole-run fields: a bad value names the flag, or the file it came from */
    rc = zs_run_check(&s->cfg, zs_cli_get(l, "leak") ? NULL : s->scenario,
                      zs_cli_get(l, "dataset-samples") ? NULL : s->scenario,
                      err);
    if (rc)
        return rc;
    if (zs_cli_get(l, "plot") && !s->whole)
        return zs_err_set(
            err, ZS_EUSAGE,
            "'--plot' draws the whole run: give '--dataset-samples N' too");
    return 0;
}

/* --trace, --timeline (of the step, or of the whole run) and --plot. */
static int sim_files(const struct sim_line *s, zs_sim *sim,
                     const struct zs_runout *ro, struct zs_err *err)
{
    const char *trace = zs_cli_get(&s->l, "trace");
    const char *timeline = zs_cli_get(&s->l, "timeline");
    const char *plot = zs_cli_get(&s->l, "plot");
    int rc = 0;

    if (trace && (rc = zs_write_trace(sim, trace, err)))
        return rc;
    if (timeline && !s->whole &&
        (rc = zs_write_timeline(sim, 0, 1, (int)s->cfg.procs_per_node,
                                timeline, err)))
        return rc;
    if (timeline && s->whole &&
        (rc = zs_runout_write_timeline(ro, timeline, err)))
        return rc;
    if (s->whole && plot)
        rc = zs_runout_plot(ro, plot, err);
    return rc;
}

/* The zsim.simulate/1 document for --json (printed) and --db (recorded);
 * the text unless --json. */
static int sim_print(const struct sim_line *s, const struct zs_simout *o,
                     const struct zs_runout *ro, int argc, char **argv,
                     struct zs_err *err)
{
    bool want_json = zs_cli_get(&s->l, "json") != NULL;
    const char *db = zs_cli_get(&s->l, "db");
    if (want_json || db) {
        char *doc = s->whole
                        ? zs_simout_json_with(o, "run", zs_runout_json(ro))
                        : zs_simout_json(o);
        int rc = 0;
        if (!doc)
            return zs_err_set(err, ZS_ENOMEM, "out of memory writing JSON");
        /* --db records the same document --json prints */
        if (db)
            rc = zs_cli_record(db, "simulate", s->cfg.name, argc, argv, doc,
                               err);
        if (!rc && want_json) {
            fputs(doc, stdout);
            fputc('\n', stdout);
        }
        zs_free(doc);
        if (rc)
            return rc;
    }
    if (!want_json) {
        zs_simout_print(o, stdout);
        if (s->whole)
            zs_runout_print(ro, stdout);
    }
    return 0;
}

static int run(int argc, char **argv, struct zs_err *err)
{
    struct sim_line s;
    struct zs_setup su = {0};
    struct zs_sim_result res;
    struct zs_runout ro;
    struct zs_simout o;
    zs_sim *sim;
    int rc = sim_parse(argc, argv, &s, err);

    if (rc)
        return rc;
    su.model = &s.m;
    su.cluster = &s.cl;
    su.cfg = &s.cfg;
    su.all_micro_steps = zs_cli_get(&s.l, "all-micro-steps") != NULL;
    sim = zs_sim_new();
    if (!sim)
        return zs_err_set(err, ZS_ENOMEM, "out of memory");
    rc = zs_simulate(&su, sim, &res, err);
    if (!rc && s.whole)
        rc = zs_runout_compose(&ro, &su, &res, sim, err);
    o.su = &su;
    o.res = &res;
    o.model_input = s.cfg.model;
    o.sim = sim;
    if (!rc)
        rc = sim_files(&s, sim, &ro, err);
    if (!rc)
        rc = sim_print(&s, &o, &ro, argc, argv, err);
    if (!rc &&
        (res.oom.where != ZS_OOM_NONE ||
         (s.whole && ro.run.oom.where != ZS_OOM_NONE)) &&
        zs_cli_get(&s.l, "fail-on-oom"))
        rc = zs_err_set(err, ZS_EGATE, "%s", "");
    zs_sim_free(sim);
    return rc;
}

const struct zs_cmd zs_cmd_simulate = {
    "simulate",
    "simulate one configuration step by step (memory, time, OOM)",
    usage,
    run,
};
