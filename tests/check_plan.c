/*
 * check_plan.c — planner outcomes that follow from first principles (the
 * plan issue's acceptance 2 and 3) and the emitted DeepSpeed config's round
 * trip through lint and simulate (acceptance 4).
 */
#include "plan/plan.h"
#include "present/planout.h"
#include "train/dsconfig.h"
#include "train/lint.h"
#include "train/setup.h"
#include "util/alloc.h"
#include "util/units.h"

#include "testutil.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pl {
    struct zs_cfg base;
    struct zs_model m;
    struct zs_cluster cl;
    struct zs_plan p;
};

static void plan_obj(struct pl *x, const char *model, const char *gpus,
                     const char *flags, int objective)
{
    struct zs_err err = {0, ""};
    struct zs_plan_opts po;
    zs_cfg_defaults(&x->base);
    zt_apply_flags(&x->base, flags);
    ck_assert_int_eq(zs_model_resolve(model, &x->m, &err), 0);
    ck_assert_msg(
        zs_hw_resolve(gpus, x->base.host_ram_bytes, 0, &x->cl, &err) == 0, "%s",
        err.msg);
    memset(&po, 0, sizeof po);
    po.framework_any = 1;
    po.suggest = true;
    po.objective = objective;
    ck_assert_msg(zs_plan_run(&x->m, &x->cl, &x->base, &po, &x->p, &err) == 0,
                  "%s", err.msg);
}

static void plan(struct pl *x, const char *model, const char *gpus,
                 const char *flags)
{
    plan_obj(x, model, gpus, flags, ZS_OBJ_THROUGHPUT);
}

static bool any_fits(const struct zs_plan *p,
                     bool (*pred)(const struct zs_cfg *))
{
    for (int i = 0; i < p->n; i++)
        if (p->cand[i].status == ZS_CAND_FITS && pred(&p->cand[i].cfg))
            return true;
    return false;
}

static bool no_offload(const struct zs_cfg *c)
{
    return c->offload_optimizer == ZS_OFF_NONE &&
           c->offload_param == ZS_OFF_NONE;
}
static bool eight_procs(const struct zs_cfg *c)
{
    return c->procs_per_node == 8;
}
static bool four_procs(const struct zs_cfg *c)
{
    return c->procs_per_node == 4;
}

START_TEST(test_72b_full_needs_offload)
{
    struct pl x;
    plan(&x, "72b", "8xH100", "seq-len=4096");
    ck_assert_int_ge(x.p.n, 300);
    ck_assert_int_ge(x.p.best, 0);
    ck_assert(!any_fits(&x.p, no_offload));
    ck_assert(!no_offload(&x.p.cand[x.p.best].cfg));
    zs_plan_release(&x.p);
}
END_TEST

START_TEST(test_72b_512g_nothing_fits)
{
    struct pl x;
    bool ram = false, lora = false;
    plan(&x, "72b", "8xH100", "host-ram=512GiB");
    ck_assert_int_eq(x.p.best, -1);
    for (int i = 0; i < x.p.nsuggest; i++) {
        ram |= strncmp(x.p.suggestion[i], "more host RAM", 13) == 0;
        lora |= strstr(x.p.suggestion[i], "LoRA") != NULL;
    }
    ck_assert_msg(ram && lora, "suggestions: %d", x.p.nsuggest);
    /* the DGX H100 profile has drives, and NVMe was not searched
     * (allow_nvme off): "what would fit" names it (plan.c nvme_suggestion) */
    {
        bool nvme = false;
        for (int i = 0; i < x.p.nsuggest; i++)
            nvme |= strncmp(x.p.suggestion[i], "NVMe offload (--allow-nvme "
                                               "yes) fits: best 'deepspeed "
                                               "zero3, offload opt nvme",
                            71) == 0;
        ck_assert(nvme);
    }
    zs_plan_release(&x.p);
}
END_TEST

/* The same 72B case with NVMe allowed, the search narrowed to 4 processes,
 * micro-batch 2 and full checkpointing: one candidate per mode (5 DeepSpeed,
 * 4 FSDP2, 2 DeepSpeed NVMe), and only NVMe ones fit 448 GiB of host
 * (CPU offload needs 898 GiB, README "plan"). */
START_TEST(test_72b_512g_nvme_fits)
{
    struct pl x;
    struct zs_err err = {0, ""};
    struct zs_plan_opts po;
    int nvme = 0;
    zs_cfg_defaults(&x.base);
    zt_apply_flags(&x.base, "host-ram=512GiB;procs=4;micro-batch=2;"
                            "checkpointing=full");
    ck_assert_int_eq(zs_model_resolve("72b", &x.m, &err), 0);
    ck_assert_int_eq(
        zs_hw_resolve("8xH100", x.base.host_ram_bytes, 0, &x.cl, &err), 0);
    memset(&po, 0, sizeof po);
    po.framework_any = 1;
    po.fix_micro = po.fix_ckpt = true;
    po.allow_nvme = true;
    ck_assert_int_eq(zs_plan_run(&x.m, &x.cl, &x.base, &po, &x.p, &err), 0);
    ck_assert_int_ge(x.p.best, 0);
    ck_assert_int_eq(x.p.cand[x.p.best].cfg.offload_optimizer, ZS_OFF_NVME);
    for (int i = 0; i < x.p.n; i++) {
        const struct zs_candidate *c = &x.p.cand[i];
        nvme += c->cfg.offload_optimizer == ZS_OFF_NVME;
        if (c->status == ZS_CAND_FITS)
            ck_assert_int_eq(c->cfg.offload_optimizer, ZS_OFF_NVME);
    }
    /* params on the GPU, on the CPU, on NVMe */
    ck_assert_int_eq(nvme, 3);
    /* it fits the host: at most 448 GiB per node */
    ck_assert_int_le(x.p.cand[x.p.best].res.steady.peak_host_per_node,
                     448 * ZS_GiB);
    zs_plan_release(&x.p);
}
END_TEST

/* Qwen2.5-7B at 131072 tokens on 8 H100, DeepSpeed ZeRO-3, micro-batch 1,
 * full checkpointing (and FSDP2 under torchtitan, below): every candidate
 * is out of GPU memory at lm_head (the
 * fp32 logits of 131072 x 152064 alone are 74 GiB).  "What would fit"
 * names Liger's kernels, whose fused loss holds no logits, and Ulysses at
 * the smallest degree that fits: not 2, and not 8, which Qwen2.5-7B's 28
 * attention heads refuse (ulysses_sp.py), so 4.  Under --kernels fused
 * the Liger line is not offered. */
static void long_seq_plan(struct pl *x, const char *flags)
{
    struct zs_err err = {0, ""};
    struct zs_plan_opts po;
    zs_cfg_defaults(&x->base);
    zt_apply_flags(&x->base, flags);
    ck_assert_int_eq(zs_model_resolve("7b", &x->m, &err), 0);
    ck_assert_int_eq(
        zs_hw_resolve("8xH100", x->base.host_ram_bytes, 0, &x->cl, &err), 0);
    memset(&po, 0, sizeof po);
    po.fix_micro = po.fix_ckpt = po.fix_zero = true;
    po.suggest = true;
    ck_assert_msg(zs_plan_run(&x->m, &x->cl, &x->base, &po, &x->p, &err) == 0,
                  "%s", err.msg);
}

static int suggestion_at(const struct zs_plan *p, const char *prefix)
{
    for (int i = 0; i < p->nsuggest; i++)
        if (strncmp(p->suggestion[i], prefix, strlen(prefix)) == 0)
            return i;
    return -1;
}

START_TEST(test_long_seq_suggests_liger_and_ulysses)
{
    static const char flags[] = "framework=deepspeed;zero=3;micro-batch=1;"
                                "checkpointing=full;seq-len=131072";
    struct pl x;
    char f2[160];
    long_seq_plan(&x, flags);
    ck_assert_int_eq(x.p.best, -1);
    ck_assert_int_ge(suggestion_at(&x.p, "Liger's fused kernels (--kernels "
                                         "fused; the Trainer's "
                                         "use_liger_kernel) fit: best "
                                         "'deepspeed zero3, "),
                     0);
    ck_assert_int_ge(suggestion_at(&x.p, "Ulysses sequence parallelism (--sp "
                                         "4, DeepSpeed >= 0.17.0) fits: best "
                                         "'deepspeed zero3, "),
                     0);
    zs_plan_release(&x.p);
    snprintf(f2, sizeof f2, "%s;kernels=fused;sp=4", flags);
    long_seq_plan(&x, f2);
    ck_assert_int_ge(x.p.best, 0);
    /* the faster-runs note is for HF-eager runs only */
    ck_assert_str_eq(x.p.liger_faster_note, "");
    zs_plan_release(&x.p);
    snprintf(f2, sizeof f2, "%s;kernels=compiled", flags);
    long_seq_plan(&x, f2);
    ck_assert_int_eq(suggestion_at(&x.p, "Liger's"), -1);
    zs_plan_release(&x.p);
    /* FSDP2 under torchtitan (SDPA): no Liger line (not the HF Trainer),
     * no Ulysses (DeepSpeed), context parallelism at the smallest degree
     * that fits */
    long_seq_plan(&x, "framework=fsdp2;zero=3;micro-batch=1;"
                      "checkpointing=full;seq-len=131072;trainer=torchtitan");
    ck_assert_int_eq(x.p.best, -1);
    ck_assert_int_eq(suggestion_at(&x.p, "Liger's"), -1);
    ck_assert_int_eq(suggestion_at(&x.p, "Ulysses"), -1);
    ck_assert_int_ge(suggestion_at(&x.p, "context parallelism (--cp 4, "
                                         "PyTorch's context_parallel) fits: "
                                         "best 'fsdp2 "),
                     0);
    zs_plan_release(&x.p);
}
END_TEST

START_TEST(test_72b_lora_fits)
{
    struct pl x;
    plan(&x, "72b", "8xH100", "method=lora");
    ck_assert_int_ge(x.p.best, 0);
    zs_plan_release(&x.p);
}
END_TEST

/* The HF-eager 7B plan also says how much faster its best runs would go
 * with Liger's fused kernels: the note starts with the best run's label,
 * and its gain is the two simulations' ratio (plan.c faster_note). */
START_TEST(test_7b_prefers_no_offload)
{
    struct pl x;
    char lab[200], head[240];
    plan(&x, "7b", "8xH100", "seq-len=4096");
    ck_assert_int_ge(x.p.best, 0);
    ck_assert(no_offload(&x.p.cand[x.p.best].cfg));
    zs_plan_cand_label(&x.p.cand[x.p.best], lab, sizeof lab);
    snprintf(head, sizeof head, "'%s': ", lab);
    ck_assert_msg(strncmp(x.p.liger_faster_note, head, strlen(head)) == 0,
                  "%s", x.p.liger_faster_note);
    /* simulating the label with the flag the plan prints under it ("the
     * plan also set: --overlap-comm yes", planout.c best_flags) gives the
     * best's step to the nanosecond */
    {
        const struct zs_candidate *b = &x.p.cand[x.p.best];
        struct zt_run r;
        ck_assert_str_eq(lab, "deepspeed zero2, no offload, 8 procs, micro 1 "
                              "x accum 8, ckpt none");
        ck_assert_int_eq(b->cfg.overlap_comm, ZS_YES);
        zt_simulate(&r,
                    "model=7b;gpus=8xH100;framework=deepspeed;zero=2;procs=8;"
                    "micro-batch=1;global-batch=64;checkpointing=none;"
                    "offload-optimizer=none;offload-param=none",
                    "overlap-comm=yes", NULL, false);
        ck_assert(r.res.steady.time_s == b->res.steady.time_s);
    }
    zs_plan_release(&x.p);
}
END_TEST

/* The default allocator rejects ZeRO-3 with optimizer and parameters
 * offloaded, 1 proc, micro 8 x accum 8, full checkpointing, for
 * fragmentation in the first step, at the loss's backward (`zsim simulate`
 * of that configuration: 18.6 GiB asked for the log_softmax grad with 56.4
 * GiB allocated and 70.2 GiB reserved of 78.1); the plan re-simulates it
 * with expandable_segments, where it fits (105 MiB of headroom), and names
 * it.  With --alloc-conf expandable_segments given, no note.  (Until ZeRO-3
 * prefetched after every hooked module, 2 procs micro 2 x accum 16 without
 * offload was the example; its deeper prefetch now needs 78.4 of 78.1 GiB
 * outright.) */
START_TEST(test_7b_alloc_note)
{
    struct pl x;
    plan(&x, "7b", "8xH100", "seq-len=4096");
    ck_assert_ptr_nonnull(strstr(x.p.alloc_note,
                                 "'deepspeed zero3, offload opt+param, 1 "
                                 "procs, micro 8 x accum 8, ckpt full'"));
    zs_plan_release(&x.p);
    plan(&x, "7b", "8xH100", "seq-len=4096;alloc-conf=expandable_segments");
    ck_assert_str_eq(x.p.alloc_note, "");
    zs_plan_release(&x.p);
}
END_TEST

/* DESIGN §1 / TRL: Qwen2.5-7B LoRA on 8xH100 with a vLLM server holding
 * 70 GiB on GPUs 4-7 (gpu_memory_utilization 0.9 of 79.1 GiB [assumption]):
 * every 8-process configuration fails, 4 processes fit; checkpointing
 * decides which micro-batches fit. */
START_TEST(test_trl_colocated)
{
    struct pl x;
    int fit_none = 0, fit_full = 0;
    plan(&x, "7b", "8xH100",
         "method=lora;gpu-reserved=70GiB;gpu-reserved-gpus=4");
    ck_assert(!any_fits(&x.p, eight_procs));
    ck_assert(any_fits(&x.p, four_procs));
    for (int i = 0; i < x.p.n; i++) {
        const struct zs_candidate *c = &x.p.cand[i];
        if (c->cfg.procs_per_node != 4 || c->status != ZS_CAND_FITS)
            continue;
        fit_none += c->cfg.checkpointing == ZS_CKPT_NONE;
        fit_full += c->cfg.checkpointing == ZS_CKPT_FULL;
    }
    ck_assert_int_gt(fit_full, fit_none);
    zs_plan_release(&x.p);
}
END_TEST

/* c's DeepSpeed JSON (zs_plan_emit_ds) written into a fresh temporary
 * directory: dir is its mkdtemp template, path receives dir/ds.json;
 * emit_tmp_remove deletes both. */
static void emit_tmp(const struct zs_candidate *c, char *dir, char *path,
                     size_t cap)
{
    struct zs_err err = {0, ""};
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, cap, "%s/ds.json", dir);
    ck_assert_msg(zs_plan_emit_ds(c, path, &err) == 0, "%s", err.msg);
}

static void emit_tmp_remove(const char *dir, const char *path)
{
    unlink(path);
    rmdir(dir);
}

/* A candidate resolved from `flags` ("k=v;..."), its DeepSpeed JSON written
 * under dir (emit_tmp) and read back into ds as the candidate's release
 * reads it. */
static void emit_flags_load(const char *flags, struct zs_candidate *cand,
                            struct zs_model *m, struct zs_cluster *cl,
                            char *dir, char *path, size_t cap,
                            struct zs_dsconfig *ds)
{
    struct zs_err err = {0, ""};
    struct zs_dsconfig_ctx ctx;
    memset(cand, 0, sizeof *cand);
    zs_cfg_defaults(&cand->cfg);
    zt_apply_flags(&cand->cfg, flags);
    ck_assert_msg(zs_setup_resolve(&cand->cfg, NULL, m, cl, &err) == 0, "%s",
                  err.msg);
    emit_tmp(cand, dir, path, cap);
    memset(&ctx, 0, sizeof ctx);
    ctx.hidden_size = m->hidden;
    ctx.world_size = (int)cand->cfg.world;
    ctx.version = cand->cfg.ds_version;
    ck_assert_msg(zs_dsconfig_load(path, &ctx, ds, &err) == 0, "%s", err.msg);
}

/* The emitted DeepSpeed JSON lints clean and simulates to the same result. */
START_TEST(test_emit_roundtrip)
{
    struct pl x;
    struct zs_err err = {0, ""};
    char dir[] = "/tmp/zsim-plan-XXXXXX", path[128];
    struct zs_cfg c;
    struct zs_model m;
    struct zs_cluster cl;
    struct zs_setup su = {0};
    struct zs_sim_result r;
    const struct zs_candidate *best;
    plan(&x, "7b", "8xH100", "framework=deepspeed;offload-optimizer=cpu");
    ck_assert_int_ge(x.p.best, 0);
    best = &x.p.cand[x.p.best];
    emit_tmp(best, dir, path, sizeof path);
    zs_cfg_defaults(&c);
    snprintf(c.model, sizeof c.model, "7b");
    snprintf(c.ds_config, sizeof c.ds_config, "%s", path);
    c.procs = best->cfg.procs_per_node;
    c.checkpointing = best->cfg.checkpointing;
    ck_assert_msg(zs_setup_resolve(&c, NULL, &m, &cl, &err) == 0, "%s",
                  err.msg);
    ck_assert_int_eq(c.zero, best->cfg.zero);
    ck_assert_int_eq(c.offload_optimizer, best->cfg.offload_optimizer);
    ck_assert_int_eq(c.micro_batch, best->cfg.micro_batch);
    ck_assert_int_eq(c.accum, best->cfg.accum);
    su.model = &m;
    su.cluster = &cl;
    su.cfg = &c;
    su.plan_mode = true;
    ck_assert_int_eq(zs_simulate(&su, NULL, &r, &err), 0);
    ck_assert_int_eq(r.steady.peak_gpu_allocated,
                     best->res.steady.peak_gpu_allocated);
    ck_assert(r.steady.time_s == best->res.steady.time_s);
    {
        struct zs_dsconfig ds;
        struct zs_dsconfig_ctx ctx;
        struct zs_lint_input in;
        struct zs_lint_report rep;
        memset(&ctx, 0, sizeof ctx);
        ctx.hidden_size = m.hidden;
        ctx.world_size = (int)c.world;
        zs_ds_version_parse("0.19.6", &ctx.version, &err);
        ck_assert_int_eq(zs_dsconfig_load(path, &ctx, &ds, &err), 0);
        memset(&in, 0, sizeof in);
        in.ds = &ds;
        in.model = &m;
        in.cluster = &cl;
        in.zero_init = true;
        in.audio_output = -1;
        ck_assert_msg(zs_lint_run(&in, &rep, &err) == 0, "%s", err.msg);
        ck_assert_int_eq(rep.n_error, 0);
    }
    emit_tmp_remove(dir, path);
    zs_plan_release(&x.p);
}
END_TEST

/* An NVMe candidate's DeepSpeed JSON: offload_optimizer nvme with its
 * buffer_count and pipeline flags, nvme_path (DeepSpeed's example, which
 * lint warns about but does not fail), and the aio section at DeepSpeed's
 * defaults; read back it resolves to the same NVMe configuration. */
START_TEST(test_emit_nvme)
{
    struct zs_err err = {0, ""};
    char dir[] = "/tmp/zsim-plan-XXXXXX", path[128];
    struct zs_candidate cand;
    struct zs_cfg c;
    struct zs_model m;
    struct zs_cluster cl;
    struct zs_dsconfig ds;
    struct zs_lint_input in;
    struct zs_lint_report rep;
    bool path_warn = false;
    emit_flags_load("model=7b;offload-optimizer=nvme;pipeline-read=yes;"
                    "nvme-buffer-count=8;offload-param=nvme;"
                    "param-buffer-count=6;param-buffer-size=200000000;"
                    "param-max-in-cpu=0",
                    &cand, &m, &cl, dir, path, sizeof path, &ds);
    ck_assert_int_eq(ds.offload_optimizer.device.v, ZS_DS_DEV_NVME);
    ck_assert_str_eq(ds.offload_optimizer.nvme_path, "/local_nvme");
    ck_assert_int_eq(ds.offload_optimizer.buffer_count.v, 8);
    ck_assert(ds.offload_optimizer.pipeline_read.v);
    ck_assert(!ds.offload_optimizer.pipeline_write.v);
    ck_assert_int_eq(ds.offload_param.device.v, ZS_DS_DEV_NVME);
    ck_assert_str_eq(ds.offload_param.nvme_path, "/local_nvme");
    ck_assert_int_eq(ds.offload_param.buffer_count.v, 6);
    ck_assert_int_eq(ds.offload_param.buffer_size.v, 200000000);
    ck_assert_int_eq(ds.offload_param.max_in_cpu.v, 0);
    ck_assert(ds.aio.present);
    ck_assert_int_eq(ds.aio.block_size.v, 1048576);
    ck_assert_int_eq(ds.aio.queue_depth.v, 8);
    ck_assert_int_eq(zs_ds_aio_parallelism(&ds), 1);
    ck_assert(ds.aio.overlap_events.v && !ds.aio.single_submit.v);
    memset(&in, 0, sizeof in);
    in.ds = &ds;
    in.model = &m;
    in.cluster = &cl;
    in.zero_init = true;
    in.audio_output = -1;
    ck_assert_msg(zs_lint_run(&in, &rep, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(rep.n_error, 0);
    for (int i = 0; i < rep.n; i++)
        path_warn |= !strcmp(rep.finding[i].id, "nvme-path-not-nvme");
    ck_assert(path_warn);
    zs_cfg_defaults(&c);
    snprintf(c.model, sizeof c.model, "7b");
    snprintf(c.ds_config, sizeof c.ds_config, "%s", path);
    ck_assert_msg(zs_setup_resolve(&c, NULL, &m, &cl, &err) == 0, "%s",
                  err.msg);
    ck_assert_int_eq(c.offload_optimizer, ZS_OFF_NVME);
    ck_assert_int_eq(c.nvme_buffer_count, 8);
    ck_assert(c.pipeline_read && !c.pipeline_write);
    ck_assert_int_eq(c.offload_param, ZS_OFF_NVME);
    ck_assert_int_eq(c.param_buffer_count, 6);
    ck_assert_int_eq(c.param_buffer_size, 200000000);
    ck_assert_int_eq(c.param_max_in_cpu, 0);
    emit_tmp_remove(dir, path);
}
END_TEST

/* A plan simulated with DeepSpeed's bf16 master weights ('--param-dtype
 * bf16', and the master flag alone with '--opt-state-dtype fp32' and the
 * optimizer offloaded) emits the bf16 keys; read back they resolve to the
 * same dtypes, so what the user runs is what was simulated. */
START_TEST(test_emit_bf16_master)
{
    static const struct {
        const char *flags;
        bool states_bf16;
    } cases[] = {
        {"model=7b;framework=deepspeed;param-dtype=bf16", true},
        {"model=7b;framework=deepspeed;param-dtype=bf16;"
         "opt-state-dtype=fp32;offload-optimizer=cpu",
         false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct zs_err err = {0, ""};
        char dir[] = "/tmp/zsim-plan-XXXXXX", path[128];
        struct zs_candidate cand;
        struct zs_cfg c;
        struct zs_model m;
        struct zs_cluster cl;
        struct zs_dsconfig ds;
        emit_flags_load(cases[i].flags, &cand, &m, &cl, dir, path,
                        sizeof path, &ds);
        ck_assert(ds.bf16_enabled.v);
        ck_assert(ds.bf16_master_weights_and_grads.v);
        ck_assert(ds.bf16_optimizer_states.v == cases[i].states_bf16);
        zs_cfg_defaults(&c);
        snprintf(c.model, sizeof c.model, "7b");
        snprintf(c.ds_config, sizeof c.ds_config, "%s", path);
        ck_assert_msg(zs_setup_resolve(&c, NULL, &m, &cl, &err) == 0, "%s",
                      err.msg);
        ck_assert_int_eq(c.param_dtype_resolved, ZS_DT_BF16);
        ck_assert_int_eq(c.opt_state_dtype_resolved,
                         cases[i].states_bf16 ? ZS_DT_BF16 : ZS_DT_FP32);
        emit_tmp_remove(dir, path);
    }
}
END_TEST

/* A plan that simulated torch's AdamW under DeepSpeed emits it: the config
 * carries "torch_adam" (and "fused") and reads back to the same CPU
 * optimizer, so what the user runs is what was simulated. */
START_TEST(test_emit_torch_adam)
{
    static const int impls[] = {ZS_CPUOPT_TORCH_LOOP, ZS_CPUOPT_TORCH_FUSED,
                                ZS_CPUOPT_DS_CPU_ADAM};
    static const char *flags[] = {
        "framework=deepspeed;offload-optimizer=cpu;cpu-optimizer=torch-loop",
        "framework=deepspeed;offload-optimizer=cpu;cpu-optimizer=torch-fused",
        "framework=deepspeed;offload-optimizer=cpu;cpu-optimizer=ds-cpu-adam"};
    for (int k = 0; k < 3; k++) {
        struct pl x;
        struct zs_err err = {0, ""};
        char dir[] = "/tmp/zsim-plan-XXXXXX", path[128];
        struct zs_cfg c;
        struct zs_model m;
        struct zs_cluster cl;
        const struct zs_candidate *cd = NULL;
        plan(&x, "7b", "8xH100", flags[k]);
        /* the best candidate with optimizer offload */
        for (int i = 0; i < x.p.nfeasible && !cd; i++)
            if (x.p.cand[x.p.order[i]].cfg.offload_optimizer != ZS_OFF_NONE)
                cd = &x.p.cand[x.p.order[i]];
        ck_assert_ptr_nonnull(cd);
        ck_assert_int_eq(cd->cfg.cpu_opt_impl, impls[k]);
        emit_tmp(cd, dir, path, sizeof path);
        zs_cfg_defaults(&c);
        snprintf(c.model, sizeof c.model, "7b");
        snprintf(c.ds_config, sizeof c.ds_config, "%s", path);
        ck_assert_msg(zs_setup_resolve(&c, NULL, &m, &cl, &err) == 0, "%s",
                      err.msg);
        ck_assert_int_eq(c.cpu_opt_impl, impls[k]);
        emit_tmp_remove(dir, path);
        zs_plan_release(&x.p);
    }
}
END_TEST

/* What the plan says fits, `zsim simulate` (the first step and one steady
 * step) finds fitting too, with the same result: both simulate the first,
 * the steady and the boundary micro-steps of each step, proved to stand
 * for every micro-step (docs/engine.md "Accumulation"), so the planner's
 * table and `zsim simulate` report the same steady step to the nanosecond
 * (before, the planner extrapolated from the first micro-step: Qwen2.5-72B,
 * ZeRO-3 offload opt+param, 8 procs, micro 1 x accum 8 was 44.13 s in the
 * plan and 44.14 s in simulate).  The planner's shortened simulation must
 * not hide an OOM that only the second step meets either (GPU optimizer
 * states are allocated lazily at the end of the first step, and the
 * caching allocator enters the second step with the first one's cached
 * blocks: FSDP2 7B offload at micro 8 fits one step and fails for
 * fragmentation in the second).  The top 12 feasible 7B candidates (no
 * offload first) and the top 10 of 72B (offload, accumulation 2 to 16). */
static void agrees(const char *model, int top)
{
    struct pl x;
    struct zs_err err = {0, ""};
    plan(&x, model, "8xH100", "seq-len=4096");
    ck_assert_int_ge(x.p.nfeasible, top);
    for (int i = 0; i < top; i++) {
        const struct zs_candidate *cd = &x.p.cand[x.p.order[i]];
        struct zs_cfg c = cd->cfg;
        struct zs_setup su = {0};
        struct zs_sim_result r;
        char label[160], why[1024];
        zs_plan_cand_label(cd, label, sizeof label);
        c.steps = 1;
        su.model = &x.m;
        su.cluster = &x.cl;
        su.cfg = &c;
        su.plan_mode = false;
        ck_assert_msg(zs_simulate(&su, NULL, &r, &err) == 0, "%s", err.msg);
        ck_assert_msg(r.oom.where == ZS_OOM_NONE,
                      "%s: plan fits, simulate OOMs in %s of %s (step %d)",
                      label, r.oom.phase, r.oom.module, r.oom.step);
        ck_assert_msg(!zt_result_differs(&cd->res, &r, why, sizeof why),
                      "%s: plan vs simulate: %s", label, why);
    }
    zs_plan_release(&x.p);
}

START_TEST(test_plan_agrees_with_simulate)
{
    agrees("7b", 12);
    agrees("72b", 10);
}
END_TEST

/* The planner re-uses one engine per thread across candidates, and re-runs a
 * GPU OOM on the tasks it built (engine.md "Planner performance").  Each
 * candidate's whole result must equal a simulation on a fresh engine:
 * Qwen2.5-7B on 1xH100 (108 candidates, most of them GPU OOMs, some fit),
 * on two threads.  zs_simulate zeroes the result before filling it, so the
 * two compare byte for byte, padding included. */
START_TEST(test_plan_reuse_matches_fresh)
{
    struct pl x;
    struct zs_err err = {0, ""};
    int noom = 0, nfit = 0;
    plan(&x, "7b", "1xH100", "seq-len=4096");
    for (int i = 0; i < x.p.n; i++) {
        const struct zs_candidate *cd = &x.p.cand[i];
        struct zs_setup su = {0};
        struct zs_sim_result r;
        char label[160];
        if (cd->status != ZS_CAND_FITS && cd->status != ZS_CAND_GPU_OOM &&
            cd->status != ZS_CAND_HOST_OOM)
            continue;
        noom += cd->status == ZS_CAND_GPU_OOM;
        nfit += cd->status == ZS_CAND_FITS;
        zs_plan_cand_label(cd, label, sizeof label);
        su.model = &x.m;
        su.cluster = &x.cl;
        su.cfg = &cd->cfg;
        su.plan_mode = true;
        ck_assert_msg(zs_simulate(&su, NULL, &r, &err) == 0, "%s", err.msg);
        ck_assert_msg(memcmp(&r, &cd->res, sizeof r) == 0,
                      "%s: the plan's result differs from a fresh engine's "
                      "(steady %.9f s vs %.9f s, needs %lld vs %lld)",
                      label, cd->res.steady.time_s, r.steady.time_s,
                      (long long)cd->res.oom.needed_bytes,
                      (long long)r.oom.needed_bytes);
    }
    ck_assert_int_ge(noom, 20);
    ck_assert_int_ge(nfit, 1);
    zs_plan_release(&x.p);
}
END_TEST

/* cmd_plan's closest GPU-OOM misses: smallest need over capacity first, the
 * lower index on a tie, a reason already shown skipped, three shown.  Fills
 * shown[] and returns how many. */
static int closest_misses(const struct zs_plan *p, int shown[3])
{
    int n = 0;
    char *mark = calloc((size_t)p->n + 1, 1);
    ck_assert_ptr_nonnull(mark);
    while (n < 3) {
        double best = 1e300;
        int k = -1;
        bool dup = false;
        for (int i = 0; i < p->n; i++) {
            const struct zs_candidate *c = &p->cand[i];
            double r = (double)c->res.oom.needed_bytes /
                       (double)c->res.oom.available_bytes;
            if (c->status == ZS_CAND_GPU_OOM && !mark[i] && r < best) {
                best = r;
                k = i;
            }
        }
        if (k < 0)
            break;
        for (int j = 0; j < n && !dup; j++)
            dup = !strcmp(p->cand[shown[j]].reason, p->cand[k].reason);
        mark[k] = 1;
        if (!dup)
            shown[n++] = k;
    }
    free(mark);
    return n;
}

/* Whether x's plan --json has the key (a note's). */
static bool json_has(const struct pl *x, const char *key)
{
    char *js = zs_planout_json(&x->p, &x->m, &x->cl), want[64];
    bool has;
    ck_assert_ptr_nonnull(js);
    snprintf(want, sizeof want, "\"%s\"", key);
    has = strstr(js, want) != NULL;
    zs_free(js);
    return has;
}

/* The candidate of x's search whose label, quoted and followed by sep,
 * opens note (the first one a plan note names). */
static const struct zs_candidate *note_first(const struct pl *x,
                                             const char *note, const char *sep)
{
    char lab[200], want[260];
    for (int i = 0; i < x->p.n; i++) {
        zs_plan_cand_label(&x->p.cand[i], lab, sizeof lab);
        snprintf(want, sizeof want, "'%s'%s", lab, sep);
        if (!strncmp(note, want, strlen(want)))
            return &x->p.cand[i];
    }
    return NULL;
}

/* c's configuration simulated afresh with DeepSpeed's bf16 master weights +
 * bf16 optimizer states; it must fit. */
static void sim_bf16(const struct pl *x, const struct zs_candidate *c,
                     struct zs_sim_result *r)
{
    struct zs_err err = {0, ""};
    struct zs_cfg f = c->cfg;
    struct zs_setup su = {0};
    f.param_dtype = f.param_dtype_resolved = ZS_DT_BF16;
    f.opt_state_dtype = f.opt_state_dtype_resolved = ZS_DT_BF16;
    su.model = &x->m;
    su.cluster = &x->cl;
    su.cfg = &f;
    ck_assert_msg(zs_simulate(&su, NULL, r, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(r->oom.where, ZS_OOM_NONE);
}

/* The bf16 master-weights note (plan.c bf16_note): Qwen2.5-7B on 8xH100
 * with DeepSpeed and 200 GiB of host RAM rejects ZeRO-3 optimizer-offload
 * candidates for host RAM (fp32 masters, states and grads, 16 B per element
 * on the host); the note names the first that fit in bf16.  That one is a
 * host-RAM rejection of the search, its configuration simulated afresh in
 * bf16 fits at the tokens/s the note prints, and the JSON carries the note
 * as bf16_master_fits. */
START_TEST(test_plan_bf16_note)
{
    struct pl x;
    const struct zs_candidate *c;
    struct zs_sim_result r;
    char tok[64];
    plan(&x, "7b", "8xH100", "host-ram=200GiB;framework=deepspeed");
    ck_assert_msg(x.p.bf16_note[0] != '\0', "no bf16 note");
    c = note_first(&x, x.p.bf16_note, " (");
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(c->status, ZS_CAND_HOST_OOM);
    ck_assert_int_eq(c->cfg.param_dtype_resolved, ZS_DT_FP32);
    sim_bf16(&x, c, &r);
    snprintf(tok, sizeof tok, "' (%.0f tok/s per GPU)",
             r.steady.tokens_per_s_per_gpu);
    ck_assert_ptr_nonnull(strstr(x.p.bf16_note, tok));
    ck_assert(json_has(&x, "bf16_master_fits"));
    zs_plan_release(&x.p);
}
END_TEST

/* The bf16 "run faster" note (plan.c bf16_faster): Qwen2.5-7B on 8xH100,
 * DeepSpeed; its first run is one of the search's fitting CPU-offload runs,
 * simulated afresh with bf16 master weights + states it fits at the tokens/s
 * the note prints, and the printed gain is over the fp32 run's. */
START_TEST(test_plan_bf16_faster)
{
    struct pl x;
    const struct zs_candidate *c;
    struct zs_sim_result r;
    char tok[96];
    double base;
    plan(&x, "7b", "8xH100", "framework=deepspeed");
    ck_assert_msg(x.p.bf16_faster_note[0] != '\0', "no bf16 faster note");
    c = note_first(&x, x.p.bf16_faster_note, ": ");
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(c->status, ZS_CAND_FITS);
    ck_assert_int_eq(c->cfg.offload_optimizer, ZS_OFF_CPU);
    base = c->res.steady.tokens_per_s_per_gpu;
    sim_bf16(&x, c, &r);
    ck_assert(r.steady.tokens_per_s_per_gpu > base);
    snprintf(tok, sizeof tok, "': %.0f tok/s per GPU (+%.1f %%)",
             r.steady.tokens_per_s_per_gpu,
             (r.steady.tokens_per_s_per_gpu / base - 1) * 100);
    ck_assert_ptr_nonnull(strstr(x.p.bf16_faster_note, tok));
    ck_assert(json_has(&x, "bf16_master_faster"));
    zs_plan_release(&x.p);
}
END_TEST

/* The faster-runs notes list a run only when it gains at least 1 %
 * (plan.c ZS_FASTER_NOTE_MIN_GAIN).  Qwen2.5-7B LoRA on 8xH100 with 70 GiB of
 * four GPUs held by a colocated vLLM (the README's TRL example): its best
 * fitting DeepSpeed optimizer-offload run gains under 1 % from bf16 master
 * weights (the masters are the adapters', a few MB), so the bf16 note is
 * empty where it printed +0.1 % before the threshold; every gain the Liger
 * note prints is at least +1.0 %. */
START_TEST(test_plan_faster_notes_min_gain)
{
    struct pl x;
    const struct zs_candidate *c = NULL;
    struct zs_sim_result r;
    const char *g;
    double base;
    int nl = 0;
    plan(&x, "7b", "8xH100",
         "method=lora;gpu-reserved=70GiB;gpu-reserved-gpus=4");
    ck_assert_str_eq(x.p.bf16_faster_note, "");
    for (int i = 0; i < x.p.nfeasible && !c; i++) {
        const struct zs_candidate *k = &x.p.cand[x.p.order[i]];
        if (k->cfg.framework == ZS_FW_DEEPSPEED &&
            k->cfg.offload_optimizer == ZS_OFF_CPU)
            c = k;
    }
    ck_assert_ptr_nonnull(c);
    base = c->res.steady.tokens_per_s_per_gpu;
    sim_bf16(&x, c, &r);
    ck_assert(r.steady.tokens_per_s_per_gpu > base);
    ck_assert(r.steady.tokens_per_s_per_gpu < base * 1.01);
    ck_assert_msg(x.p.liger_faster_note[0] != '\0', "no Liger note");
    for (g = strstr(x.p.liger_faster_note, "(+"); g;
         g = strstr(g + 2, "(+"), nl++)
        ck_assert_msg(strtod(g + 2, NULL) >= 1.0, "%s", x.p.liger_faster_note);
    ck_assert_int_ge(nl, 1);
    zs_plan_release(&x.p);
}
END_TEST

/* The text output's search (ZS_PLAN_COMPLETE_SHOWN) stops most GPU OOMs at
 * their OOM; it must print what the complete search prints.  Against the
 * complete search, Qwen2.5-7B on 8xH100 (GPU OOMs, fragmentation OOMs for
 * the expandable-segments note, full-checkpointing OOMs for the
 * activation-offload note): the same verdict and event count for every
 * candidate; the same ranking, notes and suggestions; the same closest
 * misses, each complete with the same reason; each complete candidate's
 * result equal; each partial one's need a lower bound of its complete need.
 * scripts/plan-fast-identity.sh compares the printed outputs of 25 plans. */
START_TEST(test_plan_partial_matches_full)
{
    struct pl full, fast;
    struct zs_err err = {0, ""};
    struct zs_plan_opts po;
    int sf[3], sq[3], nf, nq, npartial = 0;
    for (int k = 0; k < 2; k++) {
        struct pl *x = k ? &fast : &full;
        zs_cfg_defaults(&x->base);
        zt_apply_flags(&x->base, "seq-len=4096");
        ck_assert_int_eq(zs_model_resolve("7b", &x->m, &err), 0);
        ck_assert_int_eq(
            zs_hw_resolve("8xH100", x->base.host_ram_bytes, 0, &x->cl, &err),
            0);
        zs_plan_opts_defaults(&po);
        po.complete = k ? ZS_PLAN_COMPLETE_SHOWN : ZS_PLAN_COMPLETE_ALL;
        ck_assert_msg(zs_plan_run(&x->m, &x->cl, &x->base, &po, &x->p,
                                  &err) == 0,
                      "%s", err.msg);
    }
    ck_assert_int_eq(fast.p.n, full.p.n);
    ck_assert_int_eq(fast.p.events, full.p.events);
    ck_assert_int_eq(fast.p.nfeasible, full.p.nfeasible);
    for (int i = 0; i < full.p.nfeasible; i++)
        ck_assert_int_eq(fast.p.order[i], full.p.order[i]);
    ck_assert_str_eq(fast.p.alloc_note, full.p.alloc_note);
    ck_assert_str_eq(fast.p.act_note, full.p.act_note);
    /* the Twin-Flow note (plan.c twin_note): 4 procs, micro 1 x accum 16,
     * one of two sub-groups on the GPU, in text and JSON alike */
    ck_assert_str_eq(fast.p.twin_note, full.p.twin_note);
    ck_assert_str_eq(fast.p.bf16_note, full.p.bf16_note);
    ck_assert_str_eq(fast.p.bf16_faster_note, full.p.bf16_faster_note);
    ck_assert_str_eq(fast.p.liger_faster_note, full.p.liger_faster_note);
    ck_assert_ptr_nonnull(strstr(fast.p.twin_note, "--offload-ratio 0.25 "
                                                   "(1 of 2 sub-groups on "
                                                   "the GPU)"));
    ck_assert(json_has(&fast, "twin_flow_faster"));
    ck_assert_int_eq(fast.p.nsuggest, full.p.nsuggest);
    for (int i = 0; i < full.p.n; i++) {
        const struct zs_candidate *a = &full.p.cand[i], *b = &fast.p.cand[i];
        ck_assert_int_eq(b->status, a->status);
        ck_assert_int_eq(b->res.events, a->res.events);
        ck_assert(!a->res.partial);
        if (b->res.partial) {
            npartial++;
            ck_assert_int_eq(b->status, ZS_CAND_GPU_OOM);
            ck_assert_int_le(b->res.oom.needed_bytes, a->res.oom.needed_bytes);
            ck_assert_str_eq(b->res.oom.phase, a->res.oom.phase);
            ck_assert_str_eq(b->res.oom.module, a->res.oom.module);
        } else {
            ck_assert_str_eq(b->reason, a->reason);
            ck_assert(memcmp(&b->res, &a->res, sizeof a->res) == 0);
        }
    }
    nf = closest_misses(&full.p, sf);
    nq = closest_misses(&fast.p, sq);
    ck_assert_int_eq(nq, nf);
    for (int j = 0; j < nf; j++) {
        ck_assert_int_eq(sq[j], sf[j]);
        ck_assert(!fast.p.cand[sq[j]].res.partial);
    }
    /* the shortcut is taken: most GPU OOMs stay partial */
    ck_assert_int_ge(npartial, 20);
    zs_plan_release(&full.p);
    zs_plan_release(&fast.p);
}
END_TEST

/* One plan as `zsim plan` prints it (zs_planout_print), under complete
 * (enum zs_plan_complete) with or without the prefix cut; the search itself
 * in *out (zs_plan_release). */
static char *plan_text(const char *model, const char *gpus, const char *flags,
                       bool any, int complete, bool no_cut,
                       struct zs_plan *out)
{
    struct zs_cfg base;
    struct zs_model m;
    struct zs_cluster cl;
    struct zs_plan_opts po;
    struct zs_err err = {0, ""};
    char *text = NULL;
    size_t len = 0;
    FILE *f;
    zs_cfg_defaults(&base);
    zt_apply_flags(&base, flags);
    ck_assert_int_eq(zs_model_resolve(model, &m, &err), 0);
    ck_assert_msg(zs_hw_resolve(gpus, base.host_ram_bytes, 0, &cl, &err) == 0,
                  "%s", err.msg);
    zs_plan_opts_defaults(&po);
    po.framework_any = any;
    po.allow_nvme = zs_plan_nvme_default(&base, &cl);
    po.complete = complete;
    po.no_prefix_cut = no_cut;
    ck_assert_msg(zs_plan_run(&m, &cl, &base, &po, out, &err) == 0, "%s",
                  err.msg);
    out->elapsed_s = 0; /* the one wall-clock figure */
    f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    zs_planout_print(out, &m, &cl, &base, 10, any, f);
    ck_assert_int_eq(fclose(f), 0);
    return text;
}

/* The 20 plans test_plan_fast_prints_slow compares (as the identity
 * scripts' list, smaller: a fixed process count keeps each short under the
 * sanitizers). */
static const struct {
    const char *model, *gpus, *flags;
    bool any;
} fast_plans[] = {
    {"7b", "8xH100", "procs=8", true},
    {"7b", "8xH100", "procs=8;method=lora", true},
    {"7b", "8xH100", "procs=4;seq-len=8192", true},
    {"7b", "4xH100", "framework=fsdp2", false},
    {"gpt2", "1xH100", "", true},
    {"phi-2", "4xA100-80GB", "procs=4", true},
    {"gemma-2b", "2xA100-80GB", "seq-len=2048", true},
    {"llama-3-8b", "8xH100", "procs=8", true},
    {"mistral-7b", "8xL40S", "procs=8", true},
    {"qwen2.5-14b", "8xH100", "framework=fsdp2", false},
    {"opt-6.7b", "4xH100", "global-batch=32;procs=4", true},
    {"llama-2-13b", "8xA100-80GB", "procs=8", true},
    {"7b", "1xH100", "", true},
    {"falcon-7b", "8xH100", "seq-len=16384;procs=8", true},
    {"llama-2-7b", "2xH100", "procs=2", true},
    {"7b", "8xH100", "alloc-conf=expandable_segments;procs=8", true},
    {"7b", "8xH100", "framework=fsdp2;trainer=torchtune", false},
    /* host OOMs whose runs then stop at a GPU OOM (partial in the fast
     * path: zs_sim_result.then), two of them among the misses shown */
    {"7b", "8xH100", "host-ram=128GiB;procs=8", true},
    {"qwen2.5-14b", "8xH100", "method=qlora;procs=8", true},
    {"7b", "2xH100", "procs=2;method=lora", true},
};

/* The fast path prints what the slow one prints (issue 15): each of the 20
 * plans (one per loop iteration) runs through the library three ways:
 * every candidate simulated whole (ZS_PLAN_COMPLETE_ALL, what
 * ZSIM_PLAN_FULL forces), the text output's search with the prefix cut (the
 * default, sched_int.h) and without it.  The reports zs_planout_print
 * writes are equal byte for byte; with and without the cut, every
 * candidate's reason and result are equal but for the engine's own event
 * count (the cut runs fewer). */
START_TEST(test_plan_fast_prints_slow)
{
    struct zs_plan slow, fast, nocut;
    const char *m = fast_plans[_i].model, *g = fast_plans[_i].gpus,
               *fl = fast_plans[_i].flags;
    bool any = fast_plans[_i].any;
    char *ts = plan_text(m, g, fl, any, ZS_PLAN_COMPLETE_ALL, false, &slow);
    char *tf = plan_text(m, g, fl, any, ZS_PLAN_COMPLETE_SHOWN, false, &fast);
    char *tn = plan_text(m, g, fl, any, ZS_PLAN_COMPLETE_SHOWN, true, &nocut);
    ck_assert_msg(!strcmp(ts, tf), "plan %d (%s %s %s) prints differently",
                  _i, m, g, fl);
    ck_assert_str_eq(tn, tf);
    ck_assert_int_eq(nocut.n, fast.n);
    for (int i = 0; i < fast.n; i++) {
        struct zs_candidate a = nocut.cand[i], b = fast.cand[i];
        a.res.events_run = b.res.events_run = 0;
        ck_assert_str_eq(a.reason, b.reason);
        ck_assert(memcmp(&a.res, &b.res, sizeof a.res) == 0);
    }
    free(ts);
    free(tf);
    free(tn);
    zs_plan_release(&slow);
    zs_plan_release(&fast);
    zs_plan_release(&nocut);
}
END_TEST

/* --objective cost ranks by GPU-hours per token over the GPUs used: the best
 * has the highest tokens/s per GPU of all feasible candidates, and
 * throughput's best the highest tokens/s of the job. */
START_TEST(test_objectives)
{
    struct pl x;
    const struct zs_candidate *b;
    plan_obj(&x, "7b", "8xH100", "method=lora", ZS_OBJ_COST);
    ck_assert_int_ge(x.p.best, 0);
    b = &x.p.cand[x.p.best];
    for (int i = 0; i < x.p.n; i++)
        if (x.p.cand[i].status == ZS_CAND_FITS)
            ck_assert(x.p.cand[i].res.steady.tokens_per_s_per_gpu <=
                      b->res.steady.tokens_per_s_per_gpu);
    zs_plan_release(&x.p);
    plan_obj(&x, "7b", "8xH100", "method=lora", ZS_OBJ_THROUGHPUT);
    b = &x.p.cand[x.p.best];
    for (int i = 0; i < x.p.n; i++)
        if (x.p.cand[i].status == ZS_CAND_FITS)
            ck_assert(x.p.cand[i].res.steady.tokens_per_s_per_gpu * (double)x.p.cand[i].cfg.world <=
                      b->res.steady.tokens_per_s_per_gpu * (double)b->cfg.world * (1 + 1e-9));
    zs_plan_release(&x.p);
}
END_TEST

/* Allocation failures while two threads simulate (issue 13): the shared
 * allocation counter is atomic, so an injected failure fires exactly once;
 * whatever it hits, zs_plan_run returns (after joining its worker) 0 or
 * ZS_ENOMEM and never crashes, and when it returns 0 exactly one candidate
 * reports the failure (none swallowed, none doubled).  Fail points are
 * spread over one plan's allocations (a full loop would take minutes). */
START_TEST(test_threads_alloc_failure)
{
    struct zs_cfg base;
    struct zs_model m;
    struct zs_cluster cl;
    struct zs_plan p;
    struct zs_plan_opts po;
    struct zs_err err = {0, ""};
    long total;
    zs_cfg_defaults(&base);
    zt_apply_flags(&base, "framework=fsdp2;method=lora");
    ck_assert_int_eq(zs_model_resolve("7b", &m, &err), 0);
    ck_assert_int_eq(zs_hw_resolve("8xH100", base.host_ram_bytes, 0, &cl, &err),
                     0);
    memset(&po, 0, sizeof po);
    po.threads = 2;
    zs_alloc_fail_at(0);
    ck_assert_msg(zs_plan_run(&m, &cl, &base, &po, &p, &err) == 0, "%s",
                  err.msg);
    total = zs_alloc_count();
    ck_assert_int_gt(p.n, 4);
    zs_plan_release(&p);
    for (int k = 1; k <= 9; k++) {
        long at = k < 9 ? total * k / 9 : 1;
        int rc, nerr = 0;
        zs_alloc_fail_at(at);
        rc = zs_plan_run(&m, &cl, &base, &po, &p, &err);
        ck_assert_msg(rc == 0 || rc == ZS_ENOMEM, "fail at %ld: rc %d (%s)",
                      at, rc, err.msg);
        ck_assert_int_eq(zs_alloc_failed(), 1);
        if (rc == 0) {
            for (int i = 0; i < p.n; i++)
                nerr += p.cand[i].status == ZS_CAND_ERROR;
            ck_assert_msg(nerr == 1, "fail at %ld: %d candidates failed", at,
                          nerr);
            zs_plan_release(&p);
        }
    }
    zs_alloc_fail_at(0);
}
END_TEST

/* --lora-targets q,v: a GPU-OOM candidate's note on the grads HF no_sync
 * holds sizes the adapters of q and v only, as simulate does.  Qwen2.5-72B
 * (hidden 8192, 64 heads and 8 KV heads of 128, 80 layers), rank 16:
 * q 16 x (8192 + 8192) = 262,144, v 16 x (8192 + 1024) = 147,456, so
 * 409,600 x 80 = 32,768,000 elements x 2 B (bf16 reduce) = 65,536,000 B
 * (62.5 MiB); with every linear (k 147,456, o 262,144, gate/up/down
 * 16 x (8192 + 29568) = 604,160 each) it would be 421,068,800 B
 * (402 MiB). */
START_TEST(test_plan_lora_targets_held_grads)
{
    struct zs_model m;
    struct zs_cluster cl;
    struct zs_cfg base;
    struct zs_plan_opts po;
    struct zs_plan p;
    struct zs_err err = {0, ""};
    const char *suffix = "; 62.5 MiB of it are unsharded grads held across "
                         "accumulation (HF no_sync)";
    int found = 0;
    ck_assert_int_eq(zs_model_resolve("72b", &m, &err), 0);
    ck_assert_int_eq(zs_hw_resolve("8xH100", 0, 0, &cl, &err), 0);
    zs_cfg_defaults(&base);
    zt_apply_flags(&base, "framework=fsdp2;method=lora;lora-targets=q,v;"
                          "procs=8;micro-batch=8;global-batch=128;"
                          "seq-len=8192;checkpointing=none");
    memset(&po, 0, sizeof po);
    ck_assert_int_eq(zs_plan_run(&m, &cl, &base, &po, &p, &err), 0);
    for (int i = 0; i < p.n; i++) {
        const struct zs_candidate *c = &p.cand[i];
        size_t n = strlen(c->reason), k = strlen(suffix);
        if (c->status != ZS_CAND_GPU_OOM)
            continue;
        found++;
        ck_assert_uint_eq(c->cfg.lora_target_mask, ZS_ROLE_Q | ZS_ROLE_V);
        ck_assert_msg(n > k && !strcmp(c->reason + n - k, suffix), "%s",
                      c->reason);
    }
    ck_assert_int_ge(found, 1);
    zs_plan_release(&p);
}
END_TEST

Suite *suite_plan(void)
{
    Suite *s = suite_create("plan");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 300);
    tcase_add_test(core, test_72b_full_needs_offload);
    tcase_add_test(core, test_72b_512g_nothing_fits);
    tcase_add_test(core, test_72b_512g_nvme_fits);
    tcase_add_test(core, test_long_seq_suggests_liger_and_ulysses);
    tcase_add_test(core, test_72b_lora_fits);
    tcase_add_test(core, test_7b_prefers_no_offload);
    tcase_add_test(core, test_7b_alloc_note);
    tcase_add_test(core, test_trl_colocated);
    tcase_add_test(core, test_emit_roundtrip);
    tcase_add_test(core, test_emit_nvme);
    tcase_add_test(core, test_emit_bf16_master);
    tcase_add_test(core, test_emit_torch_adam);
    tcase_add_test(core, test_plan_agrees_with_simulate);
    tcase_add_test(core, test_plan_reuse_matches_fresh);
    tcase_add_test(core, test_plan_partial_matches_full);
    tcase_add_test(core, test_plan_bf16_note);
    tcase_add_test(core, test_plan_bf16_faster);
    tcase_add_test(core, test_plan_faster_notes_min_gain);
    tcase_add_loop_test(core, test_plan_fast_prints_slow, 0,
                        (int)(sizeof fast_plans / sizeof fast_plans[0]));
    tcase_add_test(core, test_objectives);
    tcase_add_test(core, test_threads_alloc_failure);
    tcase_add_test(core, test_plan_lora_targets_held_grads);
    suite_add_tcase(s, core);
    return s;
}
