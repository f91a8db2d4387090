/*
 * check_accum.c — the accumulation shortcut against the full simulation
 * (sched.h, docs/engine.md "Accumulation"): for accumulation 1..64, a step
 * whose first, one steady and boundary micro-steps are simulated (the
 * steady one standing for the rest) gives the same result as the step with
 * every micro-step simulated (zs_setup.all_micro_steps): every step's time
 * to the nanosecond, its breakdown, peak GPU allocated and reserved, peak
 * host and pinned per node, cache flushes, where the GPU and host peaks
 * were and what was live at them.  Both frameworks and their variants, with
 * and without checkpointing, in `zsim simulate`'s setup and the planner's.
 */
#include "sched/sched.h"
#include "train/setup.h"
#include "util/alloc.h"

#include "testutil.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

/* How a comparison simulates: `zsim simulate`'s setup, the planner's, and
 * the planner's for candidates it only needs a verdict of (a GPU OOM stops
 * there; the prefix cut; one engine reused). */
enum mode { M_SIMULATE, M_PLAN, M_VERDICT, M_COUNT };
static const char *const mode_name[M_COUNT] = {"simulate", "plan",
                                               "plan verdict-only"};

/* Simulates r's configuration in mode m with and without the shortcut on
 * sim; whether the results differ (printed with name and what). */
static bool differs(struct zt_run *r, zs_sim *sim, enum mode m,
                    const char *name, const char *what)
{
    struct zs_sim_result full;
    struct zs_setup su = {0};
    struct zs_err err = {0, ""};
    char why[1024];
    su.model = &r->m;
    su.cluster = &r->cl;
    su.cfg = &r->cfg;
    su.plan_mode = m != M_SIMULATE;
    su.verdict_only = su.prefix_cut = m == M_VERDICT;
    ck_assert_msg(zs_simulate(&su, sim, &r->res, &err) == 0, "%s: %s", name,
                  err.msg);
    su.all_micro_steps = true;
    ck_assert_msg(zs_simulate(&su, sim, &full, &err) == 0, "%s: %s", name,
                  err.msg);
    if (!zt_result_differs(&r->res, &full, why, sizeof why))
        return false;
    fprintf(stderr, "%s (%s) %s: %s\n", name, mode_name[m], what, why);
    return true;
}

/* One configuration ("k=v;k=v" flags) at accumulation 1..amax in modes
 * M_SIMULATE .. last: the number of accumulations whose shortcut differs
 * (printed). */
static int compare_accum(const char *name, const char *flags, int amax,
                         enum mode last)
{
    int bad = 0;
    zs_sim *sim = zs_sim_new();
    ck_assert_ptr_nonnull(sim);
    for (int a = 1; a <= amax; a++)
        for (int m = 0; m <= (int)last; m++) {
            struct zt_run r;
            char f[400], what[32];
            snprintf(f, sizeof f, "%s;grad-accum=%d", flags, a);
            snprintf(what, sizeof what, "accum %d", a);
            zt_resolve(&r, NULL, f);
            bad += differs(&r, sim, (enum mode)m, name, what);
        }
    zs_sim_free(sim);
    return bad;
}

/* The configurations (testutil.h), each with full checkpointing and none. */
static const char *const configs[][2] = {ZT_FRAMEWORK_CONFIGS};
#define NCONFIGS (sizeof configs / sizeof configs[0])

/* Configuration i of `configs` on `base` (flags), with checkpointing full
 * and none, at accumulation 1..64, in modes M_SIMULATE .. last. */
static void sweep(const char *base, int i, enum mode last)
{
    int bad = 0;
    for (int ck = 0; ck < 2; ck++) {
        char f[400], name[300];
        snprintf(f, sizeof f, "%s;%s;checkpointing=%s", base, configs[i][1],
                 ck ? "full" : "none");
        snprintf(name, sizeof name, "%s, ckpt %s [%s]", configs[i][0],
                 ck ? "full" : "none", base);
        bad += compare_accum(name, f, 64, last);
    }
    ck_assert_msg(bad == 0, "%s: %d results differ (printed above)",
                  configs[i][0], bad);
}

/* tests/data/good/model-tiny.json (2 layers, hidden 64) on 8 ranks, in
 * every mode */
START_TEST(test_tiny)
{
    sweep("model=tests/data/good/model-tiny.json;gpus=8xH100;seq-len=512", _i,
          M_VERDICT);
}
END_TEST

/* Llama-2-7B's HF config.json with 2 of its 32 layers, on 8 ranks: the
 * real widths (hidden 4096, vocab 32000), so that GPU memory, PCIe and the
 * CPU optimizer weigh as they do in the full model.  In simulate's setup:
 * what fits, the planner simulates alike (its two steps are simulate's
 * first and one steady step; test_tiny and test_oom_verdicts run its
 * modes) */
START_TEST(test_llama2_7b_2_layers)
{
    sweep("model=tests/data/good/model-hf-Llama-2-7b-2l.json;gpus=8xH100", _i,
          M_SIMULATE);
}
END_TEST

/* GPU OOMs: configuration i of `configs` (checkpointing full) at
 * accumulation 8 on GPUs squeezed by another tenant (--gpu-reserved) to 16
 * capacities from the peak the unlimited run reserves down to 9/10 of the
 * peak it allocates, so that the allocator flushes its cache or the OOM
 * falls in different micro-steps and steps: the verdict (phase, step,
 * micro-step, module, bytes) and the unlimited run's steps agree in every
 * mode. */
START_TEST(test_oom_verdicts)
{
    const char *base = "model=tests/data/good/model-hf-Llama-2-7b-2l.json;"
                       "gpus=8xH100;checkpointing=full;grad-accum=8";
    struct zt_run r;
    char f[400], what[64];
    int64_t peak, low, cap;
    int bad = 0, ooms = 0;
    zs_sim *sim = zs_sim_new();
    ck_assert_ptr_nonnull(sim);
    snprintf(f, sizeof f, "%s;%s", base, configs[_i][1]);
    zt_simulate(&r, NULL, f, NULL, false);
    ck_assert_int_eq(r.res.oom.where, ZS_OOM_NONE);
    peak = zt_peak_reserved(&r.res);
    low = zt_peak_allocated(&r.res);
    low = low / 10 * 9;
    cap = r.res.gpu_capacity_bytes;
    for (int k = 1; k <= 16; k++)
        for (int m = 0; m < M_COUNT; m++) {
            zt_resolve(&r, NULL, f);
            r.cfg.gpu_reserved_bytes = cap - peak + k * ((peak - low) / 16);
            r.cfg.gpu_reserved_gpus = 0;
            snprintf(what, sizeof what, "accum 8, capacity %d/16 down", k);
            bad += differs(&r, sim, (enum mode)m, configs[_i][0], what);
            ooms += r.res.oom.where == ZS_OOM_GPU;
        }
    zs_sim_free(sim);
    ck_assert_msg(bad == 0, "%s: %d results differ (printed above)",
                  configs[_i][0], bad);
    ck_assert_int_gt(ooms, 0);
}
END_TEST

/* Qwen2.5-72B (80 layers) at accumulation 64 on 8xH100, ZeRO-3 with both
 * offloads (the configuration): every micro-step simulated is a
 * schedule of about 64 x 2 x 25 000 tasks, and the shortcut gives the same
 * result (in simulate's setup: for a configuration that fits, the
 * planner's simulates the same two steps). */
START_TEST(test_72b_accum_64)
{
    struct zt_run r;
    int bad = 0;
    zs_sim *sim = zs_sim_new();
    ck_assert_ptr_nonnull(sim);
    for (int m = 0; m < M_PLAN; m++) {
        zt_resolve(&r, NULL,
                   "model=72b;gpus=8xH100;framework=deepspeed;zero=3;"
                   "offload-optimizer=cpu;offload-param=cpu;procs=8;"
                   "micro-batch=1;grad-accum=64;checkpointing=full");
        bad += differs(&r, sim, (enum mode)m, "72b", "accum 64");
        ck_assert_int_eq(r.res.oom.where, ZS_OOM_NONE);
    }
    zs_sim_free(sim);
    ck_assert_int_eq(bad, 0);
}
END_TEST

/* Every micro-step of a long accumulation may not fit the engine's task
 * ids: tests/data/good/model-tiny.json (2 layers: at least 2 marks + 2 x 2
 * tasks = 6 per micro-step), 1000 steady steps of global batch 16777216 on
 * 8 ranks (accumulation 2097152): 1001 x 2097152 = 2099249152 micro-steps
 * x 6 > 2^31 - 2.  Refused before anything is built. */
START_TEST(test_too_many_micro_steps)
{
    struct zt_run r;
    struct zs_setup su = {0};
    struct zs_err err = {0, ""};
    zt_resolve(&r, NULL,
               "model=tests/data/good/model-tiny.json;gpus=8xH100;"
               "global-batch=16777216;steps=1000");
    ck_assert_int_eq(r.cfg.accum, 2097152);
    su.model = &r.m;
    su.cluster = &r.cl;
    su.cfg = &r.cfg;
    su.all_micro_steps = true;
    ck_assert_int_eq(zs_simulate(&su, NULL, &r.res, &err), ZS_ELIMIT);
    ck_assert_str_eq(err.msg,
                     "too many micro-steps to simulate: 2099249152 in 1001 "
                     "steps x at least 6 tasks each exceed the engine's "
                     "2147483646 task ids; simulate without "
                     "'--all-micro-steps', or fewer '--steps'");
}
END_TEST

Suite *suite_accum(void)
{
    Suite *s = suite_create("accum");
    TCase *core = tcase_create("core");
    TCase *limits = tcase_create("limits");
    tcase_add_loop_test(core, test_tiny, 0, (int)NCONFIGS);
    tcase_add_loop_test(core, test_llama2_7b_2_layers, 0, (int)NCONFIGS);
    tcase_add_loop_test(core, test_oom_verdicts, 0, (int)NCONFIGS);
    tcase_add_test(core, test_72b_accum_64);
    suite_add_tcase(s, core);
    tcase_add_test(limits, test_too_many_micro_steps);
    suite_add_tcase(s, limits);
    return s;
}
