/*
 * check_cpuopt.c — the CPU optimizer model (sim/sched/cpuopt.c): threads per
 * launcher, bytes per implementation, the DRAM-share cap with every rank
 * stepping, the clip pass, the launch-line text, and bad flags.
 * Node: DGX H100 profile, 112 cores, 460.8 GB/s host memory, per-thread
 * rates 20.5 GB/s (fused Adam) and 17.8 GB/s (torch op), oversubscription
 * 1.64 (measured, validation/host).
 */
#include "sched/sched.h"
#include "train/setup.h"

#include "testutil.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static void setup(struct zt_run *r, const char *flags, bool simulate)
{
    if (simulate)
        zt_simulate(r, NULL, flags, NULL, false);
    else
        zt_resolve(r, NULL, flags);
}

#define BASE                                                                   \
    "model=7b;gpus=8xH100;framework=fsdp2;offload-optimizer=cpu;"              \
    "offload-param=cpu;micro-batch=1;grad-accum=1"

START_TEST(test_threads_per_launcher)
{
    static const struct {
        const char *flags;
        int threads;
        double eff;
    } cases[] = {
        /* torch/distributed/run.py: OMP_NUM_THREADS=1 with nproc > 1 */
        {BASE ";launcher=torchrun", 1, 1.0},
        /* accelerate: num_cpu_threads_per_process defaults to 1 */
        {BASE ";launcher=accelerate", 1, 1.0},
        /* --bind_cores_to_rank: 112 physical cores / 8 ranks = 14 */
        {BASE ";launcher=deepspeed-bind", 14, 14.0},
        /* unbound: 2 x 112 hardware threads each; 14 cores / 1.64 */
        {BASE ";launcher=deepspeed", 224, 14.0 / 1.64},
        /* --cpu-threads 4 within the 14-core share: 4 bound threads */
        {BASE ";launcher=torchrun;cpu-threads=4", 4, 4.0},
        /* --cpu-threads 20 over the 14-core share: 14 / 1.64 */
        {BASE ";launcher=torchrun;cpu-threads=20", 20, 14.0 / 1.64},
        /* torchtune sets cores // world when offloading */
        {BASE ";trainer=torchtune", 14, 14.0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct zt_run r;
        int thr;
        double eff;
        const char *why;
        setup(&r, cases[i].flags, false);
        zs_cpu_threads(&r.cfg, &r.cl.node, &thr, &eff, &why);
        ck_assert_msg(thr == cases[i].threads, "%s: %d", cases[i].flags, thr);
        ck_assert_msg(fabs(eff - cases[i].eff) < 1e-9, "%s: %g", cases[i].flags,
                      eff);
    }
}
END_TEST

START_TEST(test_bytes_per_implementation)
{
    static const struct {
        const char *flags;
        double fused, op;
    } cases[] = {
        /* DeepSpeed: Step_AVX 7 x 4 B; unscale mul_ 8 + bf16 copy_ 6 */
        {"model=7b;gpus=8xH100;framework=deepspeed;offload-optimizer=cpu", 28,
         14},
        /* FSDP2 fused: 28; clip 1.0: norm 4 + clip mul_ 8 = 12 */
        {BASE ";cpu-optimizer=torch-fused", 28, 12},
        /* FSDP2 for-loop, no clip: (20 + 2 fresh x 6.7) x 4 B = 133.6 */
        {BASE ";cpu-optimizer=torch-loop;gradient-clipping=0", 0, 133.6},
        /* pure bf16 (torchtune): fused 7 x 2 B; torchtune's recipes do not
         * clip unless clip_grad_norm is set: 0, with clipping 3 x 2 B */
        {BASE ";trainer=torchtune;param-dtype=bf16", 14, 0},
        {BASE ";trainer=torchtune;param-dtype=bf16;gradient-clipping=1", 14, 6},
        /* DeepSpeed with torch_adam (for-loop): 133.6 + 14 */
        {"model=7b;gpus=8xH100;framework=deepspeed;offload-optimizer=cpu;"
         "cpu-optimizer=torch-loop",
         0, 147.6},
        /* before PyTorch 2.1 exp_avg.mul_(b1).add_(g) is 5 elements where
         * lerp_ is 3: (22 + 13.4) x 4 = 141.6; 2.1 and later 133.6; a patch
         * part is read and ignored */
        {BASE ";cpu-optimizer=torch-loop;gradient-clipping=0;"
         "torch-version=1.11",
         0, 141.6},
        {BASE ";cpu-optimizer=torch-loop;gradient-clipping=0;"
         "torch-version=2.0.1",
         0, 141.6},
        {BASE ";cpu-optimizer=torch-loop;gradient-clipping=0;"
         "torch-version=2.1",
         0, 133.6},
        /* OPT-Benchmark's setup: DeepSpeed, torch.optim.AdamW, torch 1.11:
         * 141.6 + 14 */
        {"model=7b;gpus=8xH100;framework=deepspeed;offload-optimizer=cpu;"
         "cpu-optimizer=torch-loop;torch-version=1.11",
         0, 155.6},
        /* the fused kernels do not depend on it */
        {BASE ";cpu-optimizer=torch-fused;torch-version=1.11", 28, 12},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct zt_run r;
        double f, o;
        setup(&r, cases[i].flags, false);
        zs_cpu_opt_bytes(&r.cfg, &f, &o);
        ck_assert_msg(fabs(f - cases[i].fused) < 1e-9 &&
                          fabs(o - cases[i].op) < 1e-9,
                      "%s: fused %g op %g", cases[i].flags, f, o);
    }
}
END_TEST

/* The optimizer phase of FSDP2 7B, accumulation 1 (no CPU adds): T = the
 * rank's trainable elements, bytes 133.6 (for-loop) + 12 (clip) = 145.6 at
 * the torch op rate 17.8 GB/s per thread, capped by the rank's share of
 * the DGX H100's 460.8e9 B/s streamed at host_stream_eff 0.30 (hw.h):
 *  2 ranks, 1 thread:   share 460.8e9 / 2 x 0.30 = 69.12 GB/s > 17.8,
 *                       so 145.6 T / 17.8e9 (thread-bound);
 *  2 ranks, 14 threads: 14 x 17.8e9 = 249 GB/s > 69.12, so
 *                       145.6 T / 69.12e9 (every rank steps at once);
 *  8 ranks, 1 thread:   share 460.8e9 / 8 x 0.30 = 17.28 GB/s < 17.8,
 *                       so 145.6 T / 17.28e9 (the share binds already). */
START_TEST(test_dram_share_cap)
{
    static const struct {
        const char *flags;
        int ranks;
        double rate;
    } cases[] = {
        {"gpus=2xH100;launcher=torchrun", 2, 17.8e9},
        {"gpus=2xH100;launcher=torchrun;cpu-threads=14", 2, 69.12e9},
        {"gpus=8xH100;launcher=torchrun", 8, 17.28e9},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct zt_run r;
        char flags[300];
        double want;
        snprintf(flags, sizeof flags, "%s;%s;cpu-optimizer=torch-loop",
                 BASE, cases[i].flags);
        setup(&r, flags, true);
        want = 145.6 * ((double)r.m.params_total / cases[i].ranks) /
               cases[i].rate;
        ck_assert_msg(fabs(r.res.steady.br_opt - want) < 0.01 * want + 0.01,
                      "%s: %g s, want %g", cases[i].flags,
                      r.res.steady.br_opt, want);
    }
}
END_TEST

START_TEST(test_launch_lines)
{
    static const struct {
        const char *flags, *ds, *line;
    } cases[] = {
        {BASE ";launcher=torchrun;cpu-optimizer=torch-loop", NULL,
         "OMP_NUM_THREADS=1 torchrun --nnodes 1 --nproc-per-node 8 train.py  "
         "# torch.optim.AdamW() (for-loop on CPU), PyTorch 2.11, 1 CPU thread "
         "per rank (torchrun (OMP_NUM_THREADS=1))"},
        {BASE ";launcher=torchrun;cpu-optimizer=torch-loop;torch-version=1.11",
         NULL,
         "OMP_NUM_THREADS=1 torchrun --nnodes 1 --nproc-per-node 8 train.py  "
         "# torch.optim.AdamW() (for-loop on CPU), PyTorch 1.11, 1 CPU thread "
         "per rank (torchrun (OMP_NUM_THREADS=1))"},
        {BASE ";launcher=torchrun;cpu-optimizer=torch-fused;cpu-threads=14",
         NULL,
         "OMP_NUM_THREADS=14 torchrun --nnodes 1 --nproc-per-node 8 train.py  "
         "# torch.optim.AdamW(fused=True), 14 CPU threads per rank "
         "(--cpu-threads)"},
        {"model=7b;gpus=8xH100;framework=deepspeed;offload-optimizer=cpu;"
         "launcher=deepspeed-bind",
         "ds.json",
         "deepspeed --bind_cores_to_rank --num_gpus 8 train.py --deepspeed "
         "ds.json  # DeepSpeedCPUAdam, 14 CPU threads per rank (deepspeed "
         "--bind_cores_to_rank)"},
        {"model=7b;gpus=8xH100;framework=deepspeed;offload-optimizer=cpu", NULL,
         "deepspeed --num_gpus 8 train.py  # DeepSpeedCPUAdam, 224 CPU "
         "threads per rank (deepspeed launcher, unbound)"},
        {BASE, NULL,
         "accelerate launch --num_machines 1 --num_processes 8 "
         "--num_cpu_threads_per_process 1 train.py  # torch.optim.AdamW() "
         "(for-loop on CPU), PyTorch 2.11, 1 CPU thread per rank (accelerate "
         "launch (OMP_NUM_THREADS=1))"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct zt_run r;
        char buf[700];
        setup(&r, cases[i].flags, false);
        zs_launch_line(&r.cfg, &r.cl.node, r.cl.nodes, cases[i].ds, buf,
                       sizeof buf);
        ck_assert_str_eq(buf, cases[i].line);
    }
}
END_TEST

/* A DeepSpeed config with "torch_adam": true steps torch's AdamW for-loop
 * (engine.py:2096-2106): 133.6 + 14 B per element (a --cpu-optimizer flag
 * wins: golden simulate-ds-torch-adam-flag). */
START_TEST(test_ds_config_torch_adam)
{
    struct zt_run r;
    double f, o;
    setup(&r,
          "model=7b;gpus=8xH100;ds-config=tests/data/good/ds-torch-adam.json",
          false);
    ck_assert_int_eq(r.cfg.cpu_opt_impl, ZS_CPUOPT_TORCH_LOOP);
    zs_cpu_opt_bytes(&r.cfg, &f, &o);
    ck_assert(f == 0 && fabs(o - 147.6) < 1e-9);
}
END_TEST

START_TEST(test_bad_flags)
{
    static const struct {
        const char *flag, *value, *msg;
    } cases[] = {
        {"launcher", "mpirun",
         "invalid value for '--launcher': must be one of auto, deepspeed, "
         "deepspeed-bind, torchrun, accelerate (got 'mpirun')"},
        {"cpu-optimizer", "adam",
         "invalid value for '--cpu-optimizer': must be one of auto, "
         "ds-cpu-adam, torch-fused, torch-loop (got 'adam')"},
        {"cpu-threads", "2000",
         "invalid value for '--cpu-threads': must be an integer in [0, 1024] "
         "(got '2000')"},
        {"torch-version", "2",
         "invalid value for '--torch-version': must be X.Y or X.Y.Z with X in "
         "[1, 99] and Y, Z in [0, 99], e.g. 1.11 (got '2')"},
        {"torch-version", "0.4",
         "invalid value for '--torch-version': must be X.Y or X.Y.Z with X in "
         "[1, 99] and Y, Z in [0, 99], e.g. 1.11 (got '0.4')"},
        {"torch-version", "2.100",
         "invalid value for '--torch-version': must be X.Y or X.Y.Z with X in "
         "[1, 99] and Y, Z in [0, 99], e.g. 1.11 (got '2.100')"},
        {"torch-version", "2.1+cu121",
         "invalid value for '--torch-version': must be X.Y or X.Y.Z with X in "
         "[1, 99] and Y, Z in [0, 99], e.g. 1.11 (got '2.1+cu121')"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        zt_expect_bad_flag(cases[i].flag, cases[i].value, cases[i].msg);
}
END_TEST

Suite *suite_cpuopt(void);
Suite *suite_cpuopt(void)
{
    Suite *s = suite_create("cpuopt");
    TCase *core = tcase_create("core"), *bad = tcase_create("bad input");
    tcase_set_timeout(core, 300);
    tcase_add_test(core, test_threads_per_launcher);
    tcase_add_test(core, test_bytes_per_implementation);
    tcase_add_test(core, test_dram_share_cap);
    tcase_add_test(core, test_launch_lines);
    tcase_add_test(core, test_ds_config_torch_adam);
    tcase_add_test(bad, test_bad_flags);
    suite_add_tcase(s, core);
    suite_add_tcase(s, bad);
    return s;
}
