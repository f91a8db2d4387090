/*
 * check_gpuopt.c — the optimizer on the GPU per parameter tensor
 * (sim/sched/gpuopt.c) and torchtune's optimizer_in_bwd (--optimizer-in-bwd,
 * sched/fsdp2.c steps_in_bwd), worked out by hand on the tiny model
 * (tests/data/good/model-tiny.json: hidden 64, 2 layers, 4 heads of 16, 2 KV
 * heads, MLP 176, vocab 1000, untied: 220480 params).
 *
 * Its parameter tensors (elements): embedding and lm_head 64000 each, final
 * norm 64; per layer q 4096, k 2048, v 2048, o 4096, gate, up, down 11264
 * each, two norms 64 each.  The caching allocator rounds every allocation up
 * to 512 B.
 * torch AdamW, bf16 (2 x 2 B per element): per tensor 256000, 256000, 256
 * -> 512; per layer 16384 + 8192 + 8192 + 16384 + 3 x 45056 + 2 x 512 =
 * 185344; all 512512 + 2 x 185344 = 883200 B, 1024 B more than one
 * allocation of 220480 x 4 = 881920 -> 882176 B (the five 256-B norm states
 * each rounded up by 256 B, the single allocation by 256 B once).
 * bitsandbytes AdamW8bit: under 4096 elements two fp32 states (8 B), else
 * 2 B + 2 fp32 absmax per 256-element block: embedding 128000 + 250 x 8 =
 * 130000 -> 130048; norm 512; q and o 8192 + 16 x 8 = 8320 -> 8704; k and v
 * (2048 < 4096) 16384; gate, up, down 22528 + 44 x 8 = 22880 -> 23040; per
 * layer 8704 x 2 + 16384 x 2 + 23040 x 3 + 512 x 2 = 120320; all 2 x 130048
 * + 512 + 2 x 120320 = 501248 B.
 *
 * Single device (--sharding none), 1 x 128 tokens, full checkpointing,
 * chunked loss, no accumulation: without optimizer_in_bwd the steady peak is
 * at the loss, before any grad exists (check_sched.c test_sharding_none
 * lists it: 2630656 B less micro-step 1's grads 441856 B = 2188800 B), so
 * the in-backward step only changes the states there: 2188800 - 882176 +
 * 883200 = 2189824 B; with 8-bit states 2188800 - 882176 + 501248 =
 * 1807872 B.  The peak's list of live buffers gives the bytes requested,
 * before rounding: 220480 x 4 = 881920 B of AdamW states; 8-bit 2 x 130000
 * + 512 + 2 x (2 x 8320 + 2 x 16384 + 3 x 22880 + 2 x 512) = 498656 B.
 */
#include "sched/sched.h"
#include "train/setup.h"
#include "util/alloc.h"

#include "testutil.h"

#include <check.h>
#include <math.h>
#include <string.h>

#define TINY                                                                   \
    "model=tests/data/good/model-tiny.json;gpus=1xH100;framework=fsdp2;"       \
    "trainer=torchtune;micro-batch=1;seq-len=128;grad-accum=1;"                \
    "checkpointing=full;sharding=none"

static void sim(struct zt_run *r, const char *base, const char *flags)
{
    zt_simulate(r, base, flags, NULL, false);
    ck_assert_int_eq(r->res.oom.where, ZS_OOM_NONE);
}

/* Bytes of the live allocations named `name` at the step's GPU peak (one,
 * or several listed as "name (xN)"), -1 when none is live. */
static int64_t live_bytes(const struct zs_step_result *s, const char *name)
{
    size_t n = strlen(name);
    for (int i = 0; i < s->n_gpu_live; i++) {
        const char *got = s->gpu_live[i].name;
        if (!strncmp(got, name, n) &&
            (got[n] == '\0' || !strncmp(got + n, " (x", 3)))
            return s->gpu_live[i].bytes;
    }
    return -1;
}

START_TEST(test_state_bytes_by_hand)
{
    struct zs_cfg c;
    zs_cfg_defaults(&c);
    /* torch AdamW: exp_avg + exp_avg_sq in the param dtype */
    ck_assert_int_eq(zs_gpu_opt_state_bytes(&c, 64000, 2), 256000);
    ck_assert_int_eq(zs_gpu_opt_state_bytes(&c, 64000, 4), 512000);
    ck_assert_double_eq(zs_gpu_opt_elem_bytes(&c, 64000, 2), 14);
    ck_assert_int_eq(zs_gpu_opt_kernels(&c), 8);
    ck_assert(!zs_gpu_opt_syncs(&c));
    c.optimizer = ZS_OPT_ADAMW_8BIT;
    /* the boundary: 4095 elements keep fp32 states, 4096 go to 8 bits */
    ck_assert_int_eq(zs_gpu_opt_state_bytes(&c, 4095, 2), 32760);
    ck_assert_int_eq(zs_gpu_opt_state_bytes(&c, 4096, 2), 8192 + 16 * 8);
    /* a partial block counts whole: 4097 -> 17 blocks */
    ck_assert_int_eq(zs_gpu_opt_state_bytes(&c, 4097, 2), 8194 + 17 * 8);
    ck_assert_int_eq(zs_gpu_opt_state_bytes(&c, 64000, 2), 130000);
    /* r/w param + r grad (3 x 2 B) + r/w two uint8 (4 B) or fp32 (16 B) */
    ck_assert_double_eq(zs_gpu_opt_elem_bytes(&c, 64000, 2), 10);
    ck_assert_double_eq(zs_gpu_opt_elem_bytes(&c, 64, 2), 22);
    ck_assert_int_eq(zs_gpu_opt_kernels(&c), 1);
    ck_assert(zs_gpu_opt_syncs(&c));
    c.optimizer = ZS_OPT_PAGED_ADAMW_8BIT;
    ck_assert_int_eq(zs_gpu_opt_state_bytes(&c, 64000, 2), 130000);
}
END_TEST

START_TEST(test_in_bwd_single_device_by_hand)
{
    struct zt_run no, in, in8;
    sim(&no, TINY, "");
    sim(&in, TINY, "optimizer-in-bwd=yes");
    sim(&in8, TINY, "optimizer-in-bwd=yes;optimizer=adamw_8bit");
    ck_assert_int_eq(no.res.steady.peak_gpu_allocated, 2188800);
    ck_assert_int_eq(in.res.steady.peak_gpu_allocated, 2189824);
    ck_assert_int_eq(in8.res.steady.peak_gpu_allocated, 1807872);
    ck_assert_int_eq(
        live_bytes(&in.res.steady, "AdamW exp_avg + exp_avg_sq (lazy)"),
        881920);
    ck_assert_int_eq(
        live_bytes(&in8.res.steady, "AdamW 8-bit states (bitsandbytes, lazy)"),
        498656);
    /* the same bytes stepped, tensor by tensor instead of at once */
    ck_assert(fabs(in.res.steady.br_opt - no.res.steady.br_opt) <
              0.02 * no.res.steady.br_opt);
    /* 8 kernel launches per tensor on the host, 21 tensors: slower on a
     * model this small */
    ck_assert(in.res.steady.time_s > no.res.steady.time_s);
}
END_TEST

/* At the end of the backward no grad is left: without optimizer_in_bwd
 * every param.grad (441856 B, bf16, check_sched.c) is live when the step
 * runs; with it none is, so the peak of the first step (states growing
 * during backward) stays below params + all grads + all states. */
START_TEST(test_in_bwd_no_full_grads)
{
    struct zt_run no, in;
    sim(&no, TINY, "");
    sim(&in, TINY, "optimizer-in-bwd=yes");
    ck_assert_int_eq(no.res.first.peak_gpu_allocated, 441856 + 441856 + 882176);
    ck_assert_int_lt(in.res.first.peak_gpu_allocated, 441856 + 883200 + 441856);
    ck_assert_int_eq(live_bytes(&in.res.first, "bf16 grads (param.grad)"), -1);
}
END_TEST

/* FSDP2 on 2 GPUs, 16 tokens (the grads outweigh the activations): the
 * hooks run on the sharded grads inside foreach_reduce, so the layers'
 * "sharded bf16 grads" (23104 x 2 B = 46208 B each) are not live at the
 * steady peak (the root's backward), and the peak is lower. */
START_TEST(test_in_bwd_fsdp2)
{
    const char *base = "model=tests/data/good/model-tiny.json;gpus=2xH100;"
                       "framework=fsdp2;trainer=torchtune;micro-batch=1;"
                       "seq-len=16;checkpointing=full";
    struct zt_run no, in;
    sim(&no, base, "");
    sim(&in, base, "optimizer-in-bwd=yes");
    ck_assert_int_ge(live_bytes(&no.res.steady, "sharded bf16 grads"), 46208);
    ck_assert_int_eq(live_bytes(&in.res.steady, "sharded bf16 grads"), -1);
    ck_assert_int_lt(in.res.steady.peak_gpu_allocated,
                     no.res.steady.peak_gpu_allocated);
}
END_TEST

/* PagedAdamW8bit: every state tensor of at least 1e5 elements is
 * cudaMallocManaged, outside the allocator.  Llama-3.2-3B (hidden 3072, MLP
 * 8192, 8 KV heads of 128, 28 layers, vocab 128256, tied), 8-bit states
 * 2 B + 8 B per 256 elements: embedding 394002432 elements -> 788004864 +
 * 1539072 x 8 = 800317440 B; per layer q and o 9437184 -> 19169280 B, k and
 * v 3145728 -> 6389760 B, gate, up, down 25165824 -> 51118080 B: 204472320
 * B; paged 800317440 + 28 x 204472320 = 6525542400 B.  The norms (3072
 * elements, fp32 states) stay in the allocator.  The steady peak (every
 * state live, same moment) drops by that and by the embedding states'
 * unsplit remainder: its own segment is rounded up to 2 MiB (kRoundLarge),
 * 801112064 B, and the 794624-B remainder is under kSmallSize (1 MiB), so
 * the whole block counts as allocated (engine/pool.c should_split). */
START_TEST(test_paged_states_by_hand)
{
    const char *base = "model=validation/models/llama-3.2-3b.json;"
                       "gpus=1xA100-80GB;framework=fsdp2;trainer=torchtune;"
                       "sharding=none;micro-batch=1;seq-len=1024;"
                       "checkpointing=full;optimizer-in-bwd=yes";
    struct zt_run q8, paged;
    sim(&q8, base, "optimizer=adamw_8bit");
    sim(&paged, base, "optimizer=paged_adamw_8bit");
    ck_assert_int_eq(q8.res.paged_state_bytes, 0);
    ck_assert_int_eq(paged.res.paged_state_bytes, 6525542400LL);
    ck_assert_int_eq(q8.res.steady.peak_gpu_allocated -
                         paged.res.steady.peak_gpu_allocated,
                     6525542400LL + 794624);
}
END_TEST

START_TEST(test_in_bwd_refused)
{
    static const struct {
        const char *flags, *msg;
    } cases[] = {
        {"optimizer-in-bwd=yes",
         "'--optimizer-in-bwd yes' is torchtune's optimizer_in_bwd: it needs "
         "'--framework fsdp2' and '--trainer torchtune' (got '--framework "
         "deepspeed' and '--trainer hf')"},
        {"framework=fsdp2;optimizer-in-bwd=yes",
         "'--optimizer-in-bwd yes' is torchtune's optimizer_in_bwd: it needs "
         "'--framework fsdp2' and '--trainer torchtune' (got '--framework "
         "fsdp2' and '--trainer hf')"},
        {"framework=fsdp2;trainer=torchtune;method=lora;optimizer-in-bwd=yes",
         "'--optimizer-in-bwd yes' needs '--method full': torchtune's LoRA "
         "recipes have no optimizer_in_bwd (got '--method lora')"},
        {"framework=fsdp2;trainer=torchtune;grad-accum=4;"
         "optimizer-in-bwd=yes",
         "'--optimizer-in-bwd yes' needs '--grad-accum 1': torchtune raises "
         "\"Gradient accumulation is not supported with optimizer in bwd.\" "
         "(got 4)"},
        {"framework=fsdp2;trainer=torchtune;gradient-clipping=1;"
         "optimizer-in-bwd=yes",
         "'--optimizer-in-bwd yes' needs '--gradient-clipping 0': torchtune "
         "raises \"Gradient clipping is not supported with optimizer in "
         "bwd.\" (got 1)"},
        {"framework=fsdp2;trainer=torchtune;offload-optimizer=cpu;"
         "offload-param=cpu;optimizer-in-bwd=yes",
         "'--optimizer-in-bwd yes' with '--offload-param cpu' is not "
         "modelled: zsim steps in-backward optimizers on the GPU only"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        zt_expect_resolve_error(cases[i].flags, cases[i].msg);
    zt_expect_bad_flag("optimizer-in-bwd", "maybe",
                       "invalid value for '--optimizer-in-bwd': must be yes "
                       "or no (got 'maybe')");
}
END_TEST

/* DeepSpeed without optimizer offload, the tiny model on 2 GPUs: this
 * rank's partition is 220480 / 2 = 110240 elements (every tensor has an
 * even count), and each optimizer step runs (stage_1_and_2.py step(),
 * stage3.py step(); sched/zero.c grad_norm_gpu and step_gpu) the
 * per-tensor fp64 norm, 18 B per element = 1984320 B; the flatten into a
 * bf16 partition, 4 B = 440960 B; the fp32 upcast, 6 B = 661440 B; the
 * unscale, 8 B = 881920 B; and the fused Adam, 34 B = 3748160 B, in that
 * order on the compute stream.  The norm's fp64 copy is of the largest
 * tensor: ZeRO-2 the whole embedding, 64000 x 8 = 512000 B; ZeRO-3 its
 * partition, 32000 x 8 = 256000 B.  ZeRO-2 does all of it on the whole
 * partition whatever sub_group_size says (stage_1_and_2.py has no
 * sub-groups). */
static void zero_step_by_hand(const char *zero, const char *extra,
                              int64_t temp_bytes)
{
    static const char *const names[] = {
        "grad norm (per tensor, fp64)", "flatten grad partition",
        "grads to fp32", "unscale and clip fp32 grads", "GPU Adam"};
    static const int64_t bytes[] = {1984320, 440960, 661440, 881920, 3748160};
    static struct zt_run r;
    char flags[256];
    int32_t last[5] = {-1, -1, -1, -1, -1};
    int count[5] = {0}, temps = 0;
    zs_sim *s = zs_sim_new();
    ck_assert_ptr_nonnull(s);
    snprintf(flags, sizeof flags,
             "model=tests/data/good/model-tiny.json;gpus=2xH100;"
             "framework=deepspeed;zero=%s;micro-batch=1;seq-len=128;"
             "grad-accum=1%s",
             zero, extra);
    zt_simulate(&r, NULL, flags, s, true);
    for (int32_t i = 0; i < zs_sim_ntasks(s); i++) {
        const struct zs_task_rec *t = zs_sim_task(s, i);
        if (!t->name)
            continue;
        if (!strcmp(t->name, "grad norm (fp64 copy of a tensor)") &&
            t->kind == ZS_TASK_ALLOC) {
            ck_assert_int_eq(r.ex.t[i].bytes, temp_bytes);
            temps++;
        }
        for (int k = 0; k < 5; k++)
            if (!strcmp(t->name, names[k])) {
                ck_assert_msg(r.ex.t[i].bytes == bytes[k], "%s: %lld B",
                              names[k], (long long)r.ex.t[i].bytes);
                /* in order, after the previous one of the same step */
                if (k > 0)
                    ck_assert_int_gt(i, last[k - 1]);
                last[k] = i;
                count[k]++;
            }
    }
    for (int k = 0; k < 5; k++)
        ck_assert_int_eq(count[k], count[0]);
    ck_assert_int_gt(count[0], 0);
    ck_assert_int_eq(temps, count[0]);
    zs_free(r.ex.t);
    zs_sim_free(s);
}

START_TEST(test_zero_step_by_hand)
{
    zero_step_by_hand("2", "", 512000);
    /* sub_group_size is ZeRO-3's: ZeRO-2 steps its partition whole */
    zero_step_by_hand("2", ";sub-group-size=50000", 512000);
    zero_step_by_hand("3", "", 256000);
}
END_TEST

Suite *suite_gpuopt(void)
{
    Suite *s = suite_create("gpuopt");
    TCase *core = tcase_create("core");
    TCase *bad = tcase_create("bad input");
    tcase_set_timeout(core, 60);
    tcase_add_test(core, test_state_bytes_by_hand);
    tcase_add_test(core, test_in_bwd_single_device_by_hand);
    tcase_add_test(core, test_in_bwd_no_full_grads);
    tcase_add_test(core, test_in_bwd_fsdp2);
    tcase_add_test(core, test_paged_states_by_hand);
    tcase_add_test(core, test_zero_step_by_hand);
    tcase_add_test(bad, test_in_bwd_refused);
    suite_add_tcase(s, core);
    suite_add_tcase(s, bad);
    return s;
}
