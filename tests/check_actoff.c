/*
 * check_actoff.c — activation offload (issue 14 §3, sim/sched/actoff.c):
 * bytes moved per layer and per micro-step worked out by hand for GPT-2 small
 * (12 layers, hidden 768), the host memory the buffers add, the GPU memory
 * they save, the blocking copy's cost, the trace's offload stream, and the
 * refusals with their exact messages.
 *
 * The case: gpt2 on 8xH100, seq 1024, micro-batch 1, full checkpointing.
 * A layer's input is tokens x hidden x 2 B = 1024 x 768 x 2 = 1,572,864 B
 * (1.5 MiB); pinned through PyTorch's CachingHostAllocator it takes the next
 * power of two, 2 MiB.  Per micro-step:
 *   DeepSpeed 0.19.5 (blocking .to('cpu'), every layer): 12 D2H, 12 H2D,
 *     12 x 1.5 MiB pageable host = 18,874,368 B each.
 *   DeepSpeed 0.19.6 (async engine, keep_last_count 1, max_fwd_stash_count
 *     2): layers 0..10 offloaded (11 D2H = 17,301,504 B); layer 11 stays;
 *     layer 10 is still in the stash at backward (no H2D): 10 H2D =
 *     15,728,640 B; host 11 x 2 MiB = 23,068,672 B pinned.
 *   torchtune (stash of 5 ids, 2 ids per checkpointed layer, so the input
 *     3 layers back is evicted; the final norm's 5 saved tensors — full
 *     fine-tuning trains its scale — evict the last 3): 12 D2H =
 *     18,874,368 B; the stash is dropped at the final norm's backward, so
 *     every input comes back: 12 H2D = 18,874,368 B; host 12 x 2 MiB =
 *     25,165,824 B pinned; at the logits no input is on the GPU instead of
 *     12.
 *
 * test_torchtune_restore_timing works a 6-layer schedule out by hand.
 */
#include "engine/engine.h"
#include "plan/plan.h"
#include "sched/sched.h"
#include "train/dsconfig.h"
#include "train/lint.h"
#include "train/setup.h"

#include "testutil.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#define LAYER_B 1572864LL /* 1024 tokens x 768 x 2 B */
#define PIN_B 2097152LL   /* its power-of-two pinned block */
#define BASE                                                                   \
    "model=gpt2;gpus=8xH100;seq-len=1024;micro-batch=1;checkpointing=full"

static void sim_run(struct zt_run *r, const char *flags, zs_sim *sim)
{
    zt_simulate(r, BASE, flags, sim, false);
    ck_assert_int_eq(r->res.oom.where, ZS_OOM_NONE);
}

static int64_t peak_host_rank(const struct zt_run *r)
{
    return r->res.first.peak_host_per_rank > r->res.steady.peak_host_per_rank
               ? r->res.first.peak_host_per_rank
               : r->res.steady.peak_host_per_rank;
}

static int64_t live_bytes(const struct zs_step_result *s, const char *name)
{
    for (int i = 0; i < s->n_gpu_live; i++)
        if (!strcmp(s->gpu_live[i].name, name))
            return s->gpu_live[i].bytes;
    return -1;
}

START_TEST(test_bytes_per_layer_by_hand)
{
    static struct zt_run off, sync, as, tt_off, tt;
    sim_run(&off, "", NULL);
    sim_run(&sync, "cpu-checkpointing=yes;deepspeed-version=0.19.5", NULL);
    sim_run(&as, "cpu-checkpointing=yes", NULL);
    sim_run(&tt_off, "framework=fsdp2;trainer=torchtune", NULL);
    sim_run(&tt, "framework=fsdp2;trainer=torchtune;offload-activations=yes",
            NULL);

    ck_assert_int_eq(off.res.act_offload, ZS_AO_NONE);
    ck_assert_int_eq(sync.res.act_offload, ZS_AO_DS_SYNC);
    ck_assert_int_eq(sync.res.ao_bytes_per_layer, LAYER_B);
    ck_assert_int_eq(sync.res.ao_layers_offloaded, 12);
    ck_assert_int_eq(sync.res.ao_d2h_bytes, 12 * LAYER_B);
    ck_assert_int_eq(sync.res.ao_h2d_bytes, 12 * LAYER_B);
    ck_assert_int_eq(sync.res.ao_host_bytes, 12 * LAYER_B);

    ck_assert_int_eq(as.res.act_offload, ZS_AO_DS_ASYNC);
    ck_assert_int_eq(as.res.ao_layers_offloaded, 11);
    ck_assert_int_eq(as.res.ao_d2h_bytes, 11 * LAYER_B);
    ck_assert_int_eq(as.res.ao_h2d_bytes, 10 * LAYER_B);
    ck_assert_int_eq(as.res.ao_host_bytes, 11 * PIN_B);

    ck_assert_int_eq(tt.res.act_offload, ZS_AO_TORCHTUNE);
    ck_assert_int_eq(tt.res.ao_layers_offloaded, 12);
    ck_assert_int_eq(tt.res.ao_d2h_bytes, 12 * LAYER_B);
    ck_assert_int_eq(tt.res.ao_h2d_bytes, 12 * LAYER_B);
    ck_assert_int_eq(tt.res.ao_host_bytes, 12 * PIN_B);

    /* Host memory: the pinned buffers stay cached in the host allocator,
     * the pageable ones all live at the end of the forward. */
    ck_assert_int_eq(off.res.steady.pinned_host_per_rank, 0);
    ck_assert_int_eq(as.res.steady.pinned_host_per_rank, 11 * PIN_B);
    ck_assert_int_eq(tt.res.steady.pinned_host_per_rank, 12 * PIN_B);
    ck_assert_int_eq(sync.res.steady.pinned_host_per_rank, 0);
    ck_assert_int_eq(peak_host_rank(&sync) - peak_host_rank(&off),
                     12 * LAYER_B);
    ck_assert_int_eq(peak_host_rank(&as) - peak_host_rank(&off), 11 * PIN_B);
    ck_assert_int_eq(peak_host_rank(&tt) - peak_host_rank(&tt_off), 12 * PIN_B);

    /* GPU: torchtune keeps no input at the logits peak instead of 12 */
    ck_assert_int_eq(live_bytes(&tt_off.res.steady, "saved activations (x12)"),
                     12 * LAYER_B);
    ck_assert_int_eq(live_bytes(&tt.res.steady, "saved activations"), -1);
    /* The peak itself falls by 11.8 layers, not the full 12: since the
     * memory-bound kernels run at membound_eff 0.39 (hw.h ZS_MEMBOUND_EFF)
     * 0.3 MiB of other, smaller buffers are live at the same logits peak
     * with offloading on (timing of frees); the 12 layers are asserted on
     * the saved activations just above. */
    ck_assert_int_le(tt.res.steady.peak_gpu_allocated,
                     tt_off.res.steady.peak_gpu_allocated - 11 * LAYER_B);
    /* DeepSpeed: all 12 (blocking) or 10 of 12 (async) inputs leave */
    ck_assert_int_le(sync.res.steady.peak_gpu_allocated,
                     off.res.steady.peak_gpu_allocated - 12 * LAYER_B);
    ck_assert_int_le(as.res.steady.peak_gpu_allocated,
                     off.res.steady.peak_gpu_allocated - 10 * LAYER_B);

    /* Time: the blocking pageable copies run on the compute stream, so the
     * step grows by at least their bytes at the pageable rate; the async
     * engine's copies overlap (a GPT-2 layer computes longer than 1.5 MiB
     * crosses PCIe). */
    {
        double copy_s =
            (double)(24 * LAYER_B) / off.cl.node.gpu.pcie_pageable_bytes_per_s;
        ck_assert_double_ge(sync.res.steady.time_s - off.res.steady.time_s,
                            copy_s);
        ck_assert_double_le(as.res.steady.time_s, off.res.steady.time_s * 1.01);
    }
}
END_TEST

/* partition_activations in the DeepSpeed JSON keeps the blocking copy at
 * 0.19.6 (_get_cpu_offload_engine returns None). */
START_TEST(test_ds_config_partition_is_blocking)
{
    static struct zt_run r;
    sim_run(&r, "ds-config=tests/data/good/ds-cpu-checkpointing-partition.json",
            NULL);
    ck_assert(r.cfg.cpu_checkpointing);
    ck_assert_int_eq(r.res.act_offload, ZS_AO_DS_SYNC);
    ck_assert_int_eq(r.res.ao_layers_offloaded, 12);
}
END_TEST

/* The trace: an "activation offload stream" carries the D2H and H2D tasks,
 * 11 and 10 per micro-step for the async engine, two micro-steps (first and
 * steady step). */
START_TEST(test_trace_offload_stream)
{
    static struct zt_run r;
    zs_sim *sim = zs_sim_new();
    int q = -1, d2h = 0, h2d = 0;
    ck_assert_ptr_nonnull(sim);
    sim_run(&r, "cpu-checkpointing=yes", sim);
    for (int i = 0; i < zs_sim_nqueues(sim); i++)
        if (!strcmp(zs_sim_queue_name(sim, i), "activation offload stream"))
            q = i;
    ck_assert_int_ge(q, 0);
    for (int32_t i = 0; i < zs_sim_ntasks(sim); i++) {
        const struct zs_task_rec *t = zs_sim_task(sim, i);
        if (t->queue != q || !t->name)
            continue;
        d2h += !strcmp(t->name, "activation offload D2H");
        h2d += !strcmp(t->name, "activation offload H2D");
        if (t->kind == ZS_TASK_FLOW)
            ck_assert_int_ge(t->start_ns, 0);
    }
    ck_assert_int_eq(d2h, 2 * 11);
    ck_assert_int_eq(h2d, 2 * 10);
    zs_sim_free(sim);
}
END_TEST

START_TEST(test_bad_combinations)
{
    static const struct {
        const char *flags, *msg;
    } cases[] = {
        {"framework=fsdp2;cpu-checkpointing=yes",
         "'--cpu-checkpointing yes' is DeepSpeed's activation_checkpointing."
         "cpu_checkpointing: with '--framework fsdp2' use "
         "'--offload-activations yes' (torchtune)"},
        {"cpu-checkpointing=yes;checkpointing=selective",
         "'--cpu-checkpointing yes' offloads the inputs of layers checkpointed "
         "by deepspeed.checkpointing.checkpoint: it needs '--checkpointing "
         "full' (got selective)"},
        {"offload-activations=yes",
         "'--offload-activations yes' is torchtune's "
         "enable_activation_offloading (FSDP2): with DeepSpeed use "
         "'--cpu-checkpointing yes'"},
        {"framework=fsdp2;offload-activations=yes",
         "'--offload-activations yes' needs '--trainer torchtune': zsim "
         "models torchtune's OffloadActivations only (got '--trainer hf')"},
        {"framework=fsdp2;trainer=torchtune;offload-activations=yes;"
         "checkpointing=none",
         "'--offload-activations yes' needs '--checkpointing full': torchtune "
         "raises \"enable_activation_offloading should only be True when "
         "enable_activation_checkpointing is True\" (got none)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        zt_expect_resolve_error(cases[i].flags, cases[i].msg);
    zt_expect_bad_flag("offload-activations", "maybe",
                       "invalid value for '--offload-activations': must be "
                       "yes or no (got 'maybe')");
}
END_TEST

START_TEST(test_bad_ds_config)
{
    struct zs_cfg c;
    struct zs_model m;
    struct zs_cluster cl;
    struct zs_err err = {0, ""};
    zs_cfg_defaults(&c);
    zt_apply_flags(&c, "model=gpt2;checkpointing=selective;ds-config="
                       "tests/data/bad/ds-cpu-checkpointing-selective.json");
    ck_assert_int_eq(zs_setup_resolve(&c, NULL, &m, &cl, &err), ZS_EINPUT);
    ck_assert_str_eq(
        err.msg,
        "unsupported 'activation_checkpointing.cpu_checkpointing' in "
        "tests/data/bad/ds-cpu-checkpointing-selective.json:7: it offloads "
        "the inputs of layers checkpointed by "
        "deepspeed.checkpointing.checkpoint, which needs '--checkpointing "
        "full' (got selective)");
}
END_TEST

/* The planner (plan.c act_offload_search): Qwen2.5-7B, 2 processes, micro 8
 * (global batch 64: accumulation 4), full checkpointing, DeepSpeed: ZeRO-3
 * with optimizer and parameters offloaded runs out of GPU memory
 * (fragmentation: 18.6 GiB asked for the log_softmax grad with 56.4 GiB
 * allocated and 66.2 GiB reserved) and fits with cpu_checkpointing (1.25 GiB
 * of headroom in `zsim simulate`); with --act-offload no the note is empty.
 * (With 1 process it stays a fragmentation OOM with cpu_checkpointing too:
 * the allocator's state at the loss differs.) */
static void plan_7b(struct zs_plan *p, bool act, struct zs_cfg *base,
                    struct zs_model *m, struct zs_cluster *cl)
{
    struct zs_err err = {0, ""};
    struct zs_plan_opts po;
    zs_cfg_defaults(base);
    zt_apply_flags(base,
                   "procs=2;micro-batch=8;global-batch=64;checkpointing=full");
    ck_assert_int_eq(zs_model_resolve("7b", m, &err), 0);
    ck_assert_int_eq(zs_hw_resolve("8xH100", 0, 0, cl, &err), 0);
    memset(&po, 0, sizeof po);
    po.suggest = true;
    po.fix_micro = po.fix_ckpt = true;
    po.act_offload = act;
    ck_assert_msg(zs_plan_run(m, cl, base, &po, p, &err) == 0, "%s", err.msg);
}

START_TEST(test_plan_names_act_offload)
{
    static struct zs_cfg base;
    static struct zs_model m;
    static struct zs_cluster cl;
    static struct zs_plan p;
    const char *lab = "'deepspeed zero3, offload opt+param, 2 procs, micro 8 "
                      "x accum 4, ckpt full + cpu_checkpointing'";
    bool oom = false;
    plan_7b(&p, true, &base, &m, &cl);
    for (int i = 0; i < p.n; i++)
        oom |= p.cand[i].cfg.zero == 3 &&
               p.cand[i].cfg.offload_optimizer == ZS_OFF_CPU &&
               p.cand[i].cfg.offload_param == ZS_OFF_CPU &&
               p.cand[i].status == ZS_CAND_GPU_OOM;
    ck_assert(oom);
    ck_assert_msg(strstr(p.act_note, lab) != NULL, "%s", p.act_note);
    zs_plan_release(&p);
    plan_7b(&p, false, &base, &m, &cl);
    ck_assert_str_eq(p.act_note, "");
    zs_plan_release(&p);
}
END_TEST

/* lint rule cpu-checkpointing-needs-ds-checkpoint: info on its own, a
 * warning when the HF Trainer's gradient checkpointing is on (it uses
 * torch.utils.checkpoint), absent without cpu_checkpointing. */
static const struct zs_lint_finding *lint_ckpt(const char *text,
                                               const struct zs_trainer_args *t,
                                               struct zs_lint_report *rep)
{
    static struct zs_dsconfig ds;
    static struct zs_ds_notes notes;
    struct zs_dsconfig_ctx ctx = {0};
    struct zs_lint_input in;
    struct zs_err err = {0, ""};
    memset(&in, 0, sizeof in);
    ctx.notes = &notes;
    ctx.trainer = t;
    ck_assert_int_eq(
        zs_dsconfig_load_text("ds.json", text, strlen(text), &ctx, &ds, &err),
        0);
    in.ds = &ds;
    in.notes = &notes;
    in.trainer = t;
    in.zero_init = true;
    in.audio_output = -1;
    ck_assert_int_eq(zs_lint_run(&in, rep, &err), 0);
    for (int i = 0; i < rep->n; i++)
        if (!strcmp(rep->finding[i].id,
                    "cpu-checkpointing-needs-ds-checkpoint"))
            return &rep->finding[i];
    return NULL;
}

START_TEST(test_lint_cpu_checkpointing)
{
    static struct zs_lint_report rep;
    static struct zs_trainer_args t;
    const char *on = "{\"zero_optimization\": {\"stage\": 3},\n"
                     " \"activation_checkpointing\": {\"cpu_checkpointing\": "
                     "true}}";
    const struct zs_lint_finding *f;
    f = lint_ckpt(on, NULL, &rep);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->severity, ZS_LINT_INFO);
    ck_assert_str_eq(f->title, "cpu_checkpointing acts only on "
                               "deepspeed.checkpointing.checkpoint");
    zs_trainer_args_defaults(&t);
    t.present = true;
    t.gradient_checkpointing = true;
    f = lint_ckpt(on, &t, &rep);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->severity, ZS_LINT_WARNING);
    ck_assert_str_eq(f->title, "cpu_checkpointing has no effect on the HF "
                               "Trainer's gradient checkpointing");
    ck_assert_ptr_null(
        lint_ckpt("{\"zero_optimization\": {\"stage\": 3}}", NULL, &rep));
}
END_TEST

/* torchtune's restore timing on a schedule small enough to work by hand:
 * model-tiny-6l (6 layers, hidden 64), one A100, no sharding, seq 2048,
 * micro-batch 16 (GPU-bound: the host runs ahead), full checkpointing,
 * offload on.  A layer's input is 32768 x 64 x 2 = 4,194,304 B (4 MiB, a
 * power of two, so its pinned block too).
 * Ids, per _activation_offloading.py at 1814feb17a: layer k packs its
 * dummy (id 2k + 1, LoRA: the frozen embedding saves nothing) and input
 * (2k + 2); a heavy pack evicts ids <= new - 5.  Layer 5's input (id 12)
 * evicts up to id 7: layers 0..2 are gone before the tail.  The final
 * norm packs ids 13..16 (x_fp32, rsqrt, and both again for the mul) and,
 * scale frozen under LoRA, the parameter (17, not offloaded): id 16 evicts
 * up to 11, layers 3 and 4.  So at the logits one input is on the GPU,
 * layer 5's 4,194,304 B; under full fine-tuning id 17 is x_normed (heavy)
 * and evicts layer 5 too: none.  Backward: the stash is dropped at the
 * norm's backward, all 6 inputs come back (H2D 6 x 4,194,304 = 25,165,824 B),
 * each once the GPU ended the unit two after it, so at most 2 restored
 * inputs are live at once and none beside the logits. */
static void restored_live(zs_sim *sim, int *max_live, int *with_logits)
{
    int64_t n;
    const struct zs_mem_event *ev = zs_sim_pool_log(sim, 0, &n);
    int live = 0, logits = 0;
    ck_assert_str_eq(zs_sim_pool_name(sim, 0), "GPU");
    *max_live = *with_logits = 0;
    for (int64_t i = 0; i < n; i++) {
        const char *name = zs_sim_task(sim, ev[i].task)->name;
        int d = ev[i].bytes > 0 ? 1 : -1;
        if (!strcmp(name, "logits (bf16)"))
            logits += d;
        if (strcmp(name, "restored activation"))
            continue;
        live += d;
        ck_assert_int_eq(ev[i].bytes, d * (4 << 20));
        if (live > *max_live)
            *max_live = live;
        if (d > 0 && logits > 0)
            (*with_logits)++;
    }
    ck_assert_int_eq(live, 0);
}

START_TEST(test_torchtune_restore_timing)
{
    static struct zt_run lora, full;
    const char *f =
        "model=tests/data/good/model-tiny-6l.json;gpus=1xA100-80GB;"
        "seq-len=2048;micro-batch=16;framework=fsdp2;trainer=torchtune;"
        "sharding=none;offload-activations=yes;method=";
    char flags[256];
    int max_live, with_logits;
    zs_sim *sim = zs_sim_new();
    ck_assert_ptr_nonnull(sim);
    snprintf(flags, sizeof flags, "%slora", f);
    sim_run(&lora, flags, sim);
    ck_assert_int_eq(lora.res.ao_bytes_per_layer, 4 << 20);
    ck_assert_int_eq(lora.res.ao_d2h_bytes, 6 * (4 << 20));
    ck_assert_int_eq(lora.res.ao_h2d_bytes, 6 * (4 << 20));
    ck_assert_int_eq(lora.res.ao_host_bytes, 6 * (4 << 20));
    ck_assert_int_eq(live_bytes(&lora.res.steady, "saved activations"),
                     4 << 20);
    restored_live(sim, &max_live, &with_logits);
    ck_assert_int_eq(max_live, 2);
    ck_assert_int_eq(with_logits, 0);
    zs_sim_free(sim);

    snprintf(flags, sizeof flags, "%sfull", f);
    sim_run(&full, flags, NULL);
    ck_assert_int_eq(full.res.ao_h2d_bytes, 6 * (4 << 20));
    ck_assert_int_eq(live_bytes(&full.res.steady, "saved activations"), -1);
}
END_TEST

Suite *suite_actoff(void)
{
    Suite *s = suite_create("actoff");
    TCase *core = tcase_create("core");
    TCase *bad = tcase_create("bad input");
    tcase_set_timeout(core, 120);
    tcase_add_test(core, test_bytes_per_layer_by_hand);
    tcase_add_test(core, test_ds_config_partition_is_blocking);
    tcase_add_test(core, test_trace_offload_stream);
    tcase_add_test(core, test_torchtune_restore_timing);
    tcase_add_test(core, test_plan_names_act_offload);
    tcase_add_test(core, test_lint_cpu_checkpointing);
    tcase_add_test(bad, test_bad_combinations);
    tcase_add_test(bad, test_bad_ds_config);
    suite_add_tcase(s, core);
    suite_add_tcase(s, bad);
    return s;
}
