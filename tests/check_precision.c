/*
 * check_precision.c — the trainer's accumulation semantics and the FSDP2
 * precision policy (issue 10 items 2-3), against hand-computed bytes.
 *
 * Qwen2.5-7B on 8 ranks as FSDP2 groups (fetch_units.c zs_units_build_groups): a
 * root group (embedding, final norm, lm_head; R elements) and 28 decoder
 * layers of L elements each; a rank's shard of a group is ceil(group / 8).
 * By hand from models/qwen2.5-7b.json (h 3584, i 18944, 28 q / 4 kv heads
 * of 128, vocab 152064, untied, q/k/v biases):
 *   L = q 3584*3584+3584 + k 3584*512+512 + v 3584*512+512 + o 3584*3584
 *       + gate, up, down 3 * 3584*18944 + 2 norms 2*3584 = 233,057,792
 *   R = embed 152064*3584 + lm_head 152064*3584 + norm 3584 = 1,089,998,336
 *   N = R + 28 L = 7,615,616,512 trainable elements (a full fine-tune)
 *   pL = ceil(L / 8) = 29,132,224        pR = ceil(R / 8) = 136,249,792
 *   T = pR + 28 pL = 951,952,064 (a rank's shard of everything)
 * The test recomputes R and L from the model tables and checks these.
 */
#include "plan/plan.h"
#include "sched/sched.h"
#include "train/setup.h"
#include "util/alloc.h"
#include "util/units.h"

#include "testutil.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Simulates flags "k=v;k=v" as `zsim simulate` would; with `ex` the tasks
 * are exported (their bytes by kind). */
static void sim(struct zt_run *r, const char *flags, bool ex)
{
    zt_simulate(r, NULL, flags, NULL, ex);
}

static int64_t pow2(int64_t x)
{
    int64_t p = 1;
    while (p < x)
        p <<= 1;
    return p;
}

/* R and L of the model (see the top), recomputed from its leaves. */
static void groups(const struct zs_model *m, int64_t *R, int64_t *L)
{
    *R = *L = 0;
    for (int i = 0; i < m->n_pre; i++)
        *R += m->pre[i].params;
    for (int i = 0; i < m->n_post; i++)
        *R += m->post[i].params;
    for (int i = 0; i < m->n_layer_leaves; i++)
        *L += m->layer[i].params;
}

/* Sum of exported task bytes of one kind (and collective, for ZS_X_COLL). */
static int64_t bytes_of(const struct zt_run *r, int kind, int coll)
{
    int64_t sum = 0;
    for (size_t i = 0; i < r->ex.n; i++)
        if (r->ex.t[i].kind == kind &&
            (kind != ZS_X_COLL || r->ex.t[i].coll == coll))
            sum += r->ex.t[i].bytes;
    return sum;
}

static int64_t live_bytes(const struct zs_step_result *s, const char *prefix)
{
    for (int i = 0; i < s->n_gpu_live; i++)
        if (!strncmp(s->gpu_live[i].name, prefix, strlen(prefix)))
            return s->gpu_live[i].bytes;
    return -1;
}

static int64_t host_live_bytes(const struct zs_step_result *s,
                               const char *prefix)
{
    for (int i = 0; i < s->n_host_live; i++)
        if (!strncmp(s->host_live[i].name, prefix, strlen(prefix)))
            return s->host_live[i].bytes;
    return -1;
}

#define QWEN7B_8 "model=qwen2.5-7b;gpus=8xH100;framework=fsdp2;"
#define OFFLOAD "offload-optimizer=cpu;offload-param=cpu;"
#define DS7B_8 "model=qwen2.5-7b;gpus=8xH100;framework=deepspeed;zero=3;"

START_TEST(test_model_groups_by_hand)
{
    struct zt_run r;
    int64_t R, L;
    sim(&r, QWEN7B_8 "micro-batch=1", false);
    groups(&r.m, &R, &L);
    ck_assert_int_eq(L, 233057792);
    ck_assert_int_eq(R, 1089998336);
    ck_assert_int_eq(R + 28 * L, 7615616512);
    ck_assert_int_eq(r.m.n_layers, 28);
}
END_TEST

/* HF Trainer (no_sync) against torchtitan, both reducing in bf16, offload
 * both (sharded grads live on the host, so the GPU differs only by the held
 * grads and logits), micro 1 x accum 2.  The GPU peak of both is in the
 * boundary micro-step's loss backward (fsdp2.c loss_backward_whole); under
 * HF every parameter's unsharded bf16 grad from micro-step 1 is live there:
 *   2 B x N = 2 x 7,615,616,512 = 15,231,233,024 B (14.2 GiB),
 * and the bf16 logits, which torchtitan's `del pred` has dropped: 2 B x
 * 4096 tokens x 152,064 = 1,245,708,288 B.
 * (up to a copy-stream transient of about 1 MiB, see the test).
 * Reduce-scatter bytes over the simulation (first + 1 steady step), each
 * reduce-scatter moving a group's padded shard x 8 ranks x 2 B:
 *   per reduce of all groups: T x 8 x 2 = 951,952,064 x 16 = 15,231,233,024 B
 *   HF: one reduce per step -> 2 x 15,231,233,024 = 30,462,466,048 B
 *   torchtitan: one per micro-step -> 4 x 15,231,233,024 = 60,924,932,096 B
 * and torchtitan's second micro-step copies grads D2H blocking to add them
 * on the CPU while HF copies once per step: D2H bytes (fp32 params, 4 B)
 *   HF 2 x T x 4 = 7,615,616,512 B, torchtitan twice that. */
START_TEST(test_hf_no_sync_holds_unsharded_grads)
{
    struct zt_run hf, tt;
    const int64_t N = 7615616512, T = 951952064, per_reduce = T * 16;
    const int64_t logits = 1245708288;
    sim(&hf,
        QWEN7B_8 OFFLOAD "micro-batch=1;grad-accum=2;trainer=hf;"
                         "reduce-dtype=bf16",
        true);
    sim(&tt,
        QWEN7B_8 OFFLOAD "micro-batch=1;grad-accum=2;trainer=torchtitan;"
                         "reduce-dtype=bf16",
        true);
    ck_assert_int_eq(hf.res.oom.where, ZS_OOM_NONE);
    ck_assert_int_eq(tt.res.oom.where, ZS_OOM_NONE);
    /* the held grads exactly; the rest of the peak differs only by which
     * small copy-stream transient is in flight at that instant (measured:
     * -1.0 MiB steady, +1.9 MiB first step), so 4 MiB of slack */
    ck_assert_int_lt(llabs(hf.res.steady.peak_gpu_allocated -
                           tt.res.steady.peak_gpu_allocated - 2 * N - logits),
                     4LL << 20);
    ck_assert_int_lt(llabs(hf.res.first.peak_gpu_allocated -
                           tt.res.first.peak_gpu_allocated - 2 * N - logits),
                     4LL << 20);
    ck_assert_int_eq(live_bytes(&hf.res.steady, "unsharded grads held across "
                                                "accumulation (HF no_sync)"),
                     2 * N);
    ck_assert_int_eq(live_bytes(&tt.res.steady, "unsharded grads held"), -1);
    ck_assert_int_eq(bytes_of(&hf, ZS_X_COLL, ZS_COLL_REDUCESCATTER),
                     2 * per_reduce);
    ck_assert_int_eq(bytes_of(&tt, ZS_X_COLL, ZS_COLL_REDUCESCATTER),
                     4 * per_reduce);
    ck_assert_int_eq(bytes_of(&hf, ZS_X_D2H, 0), 2 * T * 4);
    ck_assert_int_eq(bytes_of(&tt, ZS_X_D2H, 0), 4 * T * 4);
    zs_free(hf.ex.t);
    zs_free(tt.ex.t);
}
END_TEST

/* With an fp32 reduce dtype under HF the held copy is fp32
 * (to_accumulated_grad_if_needed: unsharded_grad.to(reduce_dtype)):
 *   4 B x N = 30,462,466,048 B; and accum 1 holds nothing. */
START_TEST(test_hf_no_sync_fp32_reduce_and_accum_1)
{
    struct zt_run r, one;
    sim(&r,
        QWEN7B_8 OFFLOAD "micro-batch=1;grad-accum=2;trainer=hf;"
                         "reduce-dtype=fp32",
        false);
    ck_assert_int_eq(live_bytes(&r.res.steady, "unsharded grads held across "
                                               "accumulation (HF no_sync)"),
                     4LL * 7615616512);
    sim(&one, QWEN7B_8 OFFLOAD "micro-batch=1;grad-accum=1;trainer=hf", false);
    ck_assert_int_eq(live_bytes(&one.res.steady, "unsharded grads held"), -1);
}
END_TEST

/* Pure bf16 (torchtune) against fp32 masters on the host, offload both,
 * 8 ranks, accum 1.  Pinned per rank: one allocation per parameter for the
 * params (_init_sharded_param pins each) and one per parameter for the grads
 * (foreach_reduce copies each grad D2H into a new pinned tensor), each
 * rounded to a power of two by the host allocator.  Padded shards (dim 0
 * chunked, ceil(d0 / 8) x d1) of a layer's 12 tensors:
 *   q, o [3584, 3584] -> 1,605,632   q bias, 2 norms [3584] -> 448
 *   k, v [512, 3584] -> 229,376      k, v bias [512] -> 64
 *   gate, up [18944, 3584] and down [3584, 18944] -> 8,486,912
 * root: embed, lm_head [152064, 3584] -> 68,124,672; norm -> 448.
 *   fp32 (x 4 B, rounded): layer 2 x 8 MiB + 2 x 1 MiB + 3 x 64 MiB
 *     + 3 x 2 KiB + 2 x 256 B = 220,207,616;
 *     root 2 x pow2(272,498,688) + pow2(1,792) = 2 x 512 MiB + 2 KiB
 *          = 1,073,743,872
 *     params 1,073,743,872 + 28 x 220,207,616 = 7,239,557,120; grads the
 *     same -> 14,479,114,240 B
 *   bf16 (x 2 B): layer 110,103,808, root 536,871,936 -> params
 *     3,619,778,560, with grads 7,239,557,120 B
 * (one block per group, as zsim did before, would give 9.66 GB and 4.83 GB:
 * gate/up/down's 33.9 MB fp32 shards round to 64 MiB each).
 * AdamW states (pageable, first step): 2 x T x pb: fp32 7,615,616,512 B,
 * bf16 3,807,808,256 B.
 * Host peak per rank in the first step = pinned + states + the 4 GiB
 * process runtime (sched_int.h):
 *   fp32 14,479,114,240 + 7,615,616,512 + 4,294,967,296 = 26,389,698,048 B
 *   bf16  7,239,557,120 + 3,807,808,256 + 4,294,967,296 = 15,342,332,672 B
 * i.e. 8 B/element of the shard for pure bf16 against 16 B with fp32
 * masters, before rounding. */
START_TEST(test_pure_bf16_host_bytes)
{
    struct zt_run f, b;
    sim(&f, QWEN7B_8 OFFLOAD "trainer=torchtitan;param-dtype=fp32", false);
    sim(&b, QWEN7B_8 OFFLOAD "trainer=torchtune", false);
    ck_assert_int_eq(b.cfg.param_dtype_resolved, ZS_DT_BF16);
    ck_assert_int_eq(pow2(8486912LL * 4), 64LL << 20);
    ck_assert_int_eq(pow2(68124672LL * 4), 512LL << 20);
    ck_assert_int_eq(f.res.first.pinned_host_per_rank, 14479114240);
    ck_assert_int_eq(b.res.first.pinned_host_per_rank, 7239557120);
    ck_assert_int_eq(f.res.first.peak_host_per_rank, 26389698048);
    ck_assert_int_eq(b.res.first.peak_host_per_rank, 15342332672);
}
END_TEST

/* PCIe and reduce-scatter bytes per step follow the dtypes (offload both,
 * accum 1, first + 1 steady step = 2 micro-steps).  Per micro-step every
 * layer is unsharded twice (forward, and again in backward after the
 * post-forward reshard) and the root once:
 *   H2D = 2 x (pR + 2 x 28 pL) x pb = 2 x 1,767,654,336 x pb
 *     fp32 masters 14,141,234,688 B, pure bf16 7,070,617,344 B
 *   D2H grads = 2 x T x pb: 7,615,616,512 / 3,807,808,256 B
 *   reduce-scatter = 2 x T x 8 x rb:
 *     torchtitan rb 4: 60,924,932,096 B; torchtune rb 2: 30,462,466,048 B */
START_TEST(test_pcie_and_reduce_bytes_follow_dtype)
{
    struct zt_run f, b;
    const int64_t unshard = 136249792LL + 2 * 28 * 29132224LL,
                  shard = 951952064;
    ck_assert_int_eq(unshard, 1767654336);
    ck_assert_int_eq(136249792LL + 28 * 29132224LL, shard);
    sim(&f, QWEN7B_8 OFFLOAD "trainer=torchtitan", true);
    sim(&b, QWEN7B_8 OFFLOAD "trainer=torchtune", true);
    ck_assert_int_eq(bytes_of(&f, ZS_X_H2D, 0), 2 * unshard * 4);
    ck_assert_int_eq(bytes_of(&b, ZS_X_H2D, 0), 2 * unshard * 2);
    ck_assert_int_eq(bytes_of(&f, ZS_X_D2H, 0), 2 * shard * 4);
    ck_assert_int_eq(bytes_of(&b, ZS_X_D2H, 0), 2 * shard * 2);
    ck_assert_int_eq(bytes_of(&f, ZS_X_COLL, ZS_COLL_REDUCESCATTER),
                     2 * shard * 8 * 4);
    ck_assert_int_eq(bytes_of(&b, ZS_X_COLL, ZS_COLL_REDUCESCATTER),
                     2 * shard * 8 * 2);
    zs_free(f.ex.t);
    zs_free(b.ex.t);
}
END_TEST

/* The byte helpers the CPU-optimizer model multiplies by. */
START_TEST(test_dtype_helpers)
{
    static const struct {
        int trainer, pd, rd, pb, rb;
    } cases[] = {
        {ZS_TRAINER_HF, ZS_DT_AUTO, ZS_DT_AUTO, 4, 2},
        {ZS_TRAINER_TORCHTITAN, ZS_DT_AUTO, ZS_DT_AUTO, 4, 4},
        {ZS_TRAINER_TORCHTUNE, ZS_DT_AUTO, ZS_DT_AUTO, 2, 2},
        {ZS_TRAINER_HF, ZS_DT_BF16, ZS_DT_FP32, 2, 4},
        {ZS_TRAINER_TORCHTUNE, ZS_DT_FP32, ZS_DT_AUTO, 4, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct zs_cfg c;
        struct zs_model m;
        struct zs_cluster cl;
        struct zs_err err = {0, ""};
        zs_cfg_defaults(&c);
        snprintf(c.model, sizeof c.model, "7b");
        c.framework = ZS_FW_FSDP2;
        c.trainer = cases[i].trainer;
        c.param_dtype = cases[i].pd;
        c.reduce_dtype = cases[i].rd;
        ck_assert_msg(zs_setup_resolve(&c, NULL, &m, &cl, &err) == 0, "%s",
                      err.msg);
        ck_assert_int_eq(zs_cfg_param_bytes(&c), cases[i].pb);
        ck_assert_int_eq(zs_cfg_reduce_bytes(&c), cases[i].rb);
        ck_assert(!zs_cfg_grads_held_unsharded(&c)); /* accum 1 */
    }
}
END_TEST

/* QLoRA under FSDP2 (torchtune) keeps the base linears in NF4: sharded,
 * all-gathered and unsharded as NF4 (fsdp2.c shard_bytes).  Llama-3-8B,
 * 8 GPUs, rank 8 on every linear, per decoder layer by hand: q and o
 * 4096 x 4096 = 16,777,216 elements -> 8,388,608 + 262,144 (int8 absmax per
 * 64) + 4 x 1,024 (fp32 per 256 blocks) = 8,654,848 B each; k and v
 * 4096 x 1024 -> 2,097,152 + 65,536 + 1,024 = 2,163,712 B each; gate, up,
 * down 4096 x 14336 -> 29,360,128 + 917,504 + 14,336 = 30,291,968 B each;
 * NF4 112,513,024 B per layer, 14,064,128 B per rank.  bf16: two norms
 * (8,192) and the adapters 8 x (8192 + 5120 + 5120 + 8192 + 3 x 18432) =
 * 655,360, 663,552 elements -> 82,944 per rank -> 165,888 B.  Shard
 * 14,230,016 B per layer per rank (bf16 would be 218,767,360 / 8 x 2 =
 * 54,691,840 B); the all-gather output 8 x that = 113,840,128 B. */
START_TEST(test_fsdp2_qlora_nf4_base)
{
    struct zt_run r;
    const int64_t shard = 14064128 + 165888;
    sim(&r,
        "model=llama-3-8b;gpus=8xH100;framework=fsdp2;trainer=torchtune;"
        "method=qlora;lora-rank=8;micro-batch=2;seq-len=2048;"
        "checkpointing=full",
        false);
    ck_assert_int_eq(r.res.oom.where, ZS_OOM_NONE);
    ck_assert_int_eq(
        live_bytes(&r.res.steady, "sharded NF4 base + bf16 params (x32)"),
        32 * shard);
    ck_assert_int_eq(live_bytes(&r.res.steady, "all-gather output (x3)"),
                     3 * 8 * shard);
}
END_TEST

/* FSDP1 QLoRA is bitsandbytes' Linear4bit: the flat param holds only the
 * packed 4-bit weights, the quant_state (uint8 absmax per 64, fp32 nested
 * absmax per 256) stays whole on every rank's GPU (fsdp2.c
 * quant_state_gpu).  Llama-3-8B layer, by hand: q and o 4096 x 4096 (262144
 * blocks + 1024 x 4 B = 266240 B each), k and v 4096 x 1024 (65536 + 256 x
 * 4 = 66560 B each), gate/up/down 4096 x 14336 (917504 + 3584 x 4 =
 * 931840 B each): 3,461,120 B per layer, not sharded; the 8-rank shard of
 * the NF4 weights shrinks from 112,513,024 / 8 (the FSDP2 test above) to
 * 109,051,904 / 8 B.  128 tokens keep both among the peak's largest
 * buffers (ZS_LIVE_MAX). */
START_TEST(test_fsdp1_qlora_bnb_quant_state)
{
    struct zt_run r;
    const int64_t qs = 3461120, drop = qs / 8;
    sim(&r,
        "model=llama-3-8b;gpus=8xH100;framework=fsdp2;trainer=torchtune;"
        "method=qlora;lora-rank=8;micro-batch=1;seq-len=128;"
        "checkpointing=full;fsdp-version=1",
        false);
    ck_assert_int_eq(r.res.oom.where, ZS_OOM_NONE);
    ck_assert_int_eq(
        live_bytes(&r.res.steady,
                   "bitsandbytes quant_state (absmax, whole per rank) (x32)"),
        32 * qs);
    ck_assert_int_eq(
        live_bytes(&r.res.steady, "sharded NF4 base + bf16 params (x32)"),
        32 * (14064128 + 165888 - drop));
}
END_TEST

/* The 72B plan for HF users on one 8xH100 node: FSDP2 with accumulation
 * holds 2 B x 72,706,203,648 trainable elements = 145,412,407,296 B
 * (135 GiB) of unsharded grads per GPU, more than the 78.1 GiB an H100 has
 * for tensors: the best FSDP2 candidate of the default plan (offload both,
 * micro 4 x accum 2, full checkpointing) is rejected and says why; under
 * torchtitan the same candidate fits. */
START_TEST(test_plan_72b_hf_rejects_fsdp2_accumulation)
{
    struct zs_model m;
    struct zs_cluster cl;
    struct zs_cfg base;
    struct zs_plan_opts po;
    struct zs_err err = {0, ""};
    const char *suffix = "; 135 GiB of it are unsharded grads held across "
                         "accumulation (HF no_sync)";
    ck_assert_int_eq(zs_model_resolve("72b", &m, &err), 0);
    ck_assert_int_eq(zs_hw_resolve("8xH100", 0, 0, &cl, &err), 0);
    ck_assert_int_eq(m.params_total, 72706203648);
    for (int trainer = ZS_TRAINER_HF; trainer <= ZS_TRAINER_TORCHTITAN;
         trainer++) {
        struct zs_plan p;
        int found = 0;
        zs_cfg_defaults(&base);
        base.framework = ZS_FW_FSDP2;
        base.trainer = trainer;
        base.procs = 8;
        base.micro_batch = 4;
        memset(&po, 0, sizeof po);
        ck_assert_int_eq(zs_plan_run(&m, &cl, &base, &po, &p, &err), 0);
        for (int i = 0; i < p.n; i++) {
            const struct zs_candidate *c = &p.cand[i];
            size_t n = strlen(c->reason), k = strlen(suffix);
            if (c->cfg.zero != 3 || c->cfg.offload_param != ZS_OFF_CPU ||
                c->cfg.micro_batch != 4 || c->cfg.checkpointing != ZS_CKPT_FULL)
                continue;
            found++;
            ck_assert_int_eq(c->cfg.accum, 2);
            if (trainer == ZS_TRAINER_HF) {
                ck_assert_int_eq(c->status, ZS_CAND_GPU_OOM);
                ck_assert_msg(n > k && !strcmp(c->reason + n - k, suffix), "%s",
                              c->reason);
            } else {
                ck_assert_msg(c->status == ZS_CAND_FITS, "%s", c->reason);
            }
        }
        ck_assert_int_eq(found, 1);
        zs_plan_release(&p);
    }
}
END_TEST

/* DeepSpeed's bf16 master weights + bf16 optimizer states without offload
 * (zero.c struct ds mb; '--param-dtype bf16'), Qwen2.5-7B ZeRO-3 on 8xH100:
 * T = 7,615,616,512 / 8 = 951,952,064 elements per rank.  The master is a
 * bf16 copy of its own (2T B beside the bf16 partition's 2T), Adam's
 * states 4T B where fp32 keeps 4T and 8T; both peaks fall in lm_head's
 * backward, so the bf16 one is 2T + 4T = 5,711,712,384 B lower. */
START_TEST(test_deepspeed_bf16_master_on_gpu)
{
    const int64_t T = 951952064;
    struct zt_run f, b;
    sim(&f, DS7B_8 "param-dtype=fp32", false);
    sim(&b, DS7B_8 "param-dtype=bf16", false);
    ck_assert_int_eq(live_bytes(&f.res.steady, "fp32 master params"), 4 * T);
    ck_assert_int_eq(live_bytes(&b.res.steady, "bf16 master params"), 2 * T);
    ck_assert_int_eq(live_bytes(&b.res.steady, "bf16 partition"), 2 * T);
    ck_assert_int_eq(live_bytes(&f.res.steady, "Adam exp_avg + exp_avg_sq (fp32"),
                     8 * T);
    ck_assert_int_eq(live_bytes(&b.res.steady, "Adam exp_avg + exp_avg_sq (bf16"),
                     4 * T);
    ck_assert_int_eq(live_bytes(&b.res.steady, "fp32 master params"), -1);
    ck_assert_str_eq(f.res.steady.gpu_peak_where, b.res.steady.gpu_peak_where);
    /* the rest of the live set differs only by the small buffers in
     * flight at that moment, which follow the streams' timing (the bf16
     * run holds 309,888 B more) */
    ck_assert_int_le(f.res.steady.peak_gpu_allocated -
                         b.res.steady.peak_gpu_allocated,
                     6 * T);
    ck_assert_int_gt(f.res.steady.peak_gpu_allocated -
                         b.res.steady.peak_gpu_allocated,
                     6 * T - (1 << 20));
    /* the step moves 4 (flatten) + 4 (unscale) + 18 (Adam) = 26 B per
     * element where fp32's moves 4 + 6 (the cast) + 8 + 34 = 52: shorter */
    ck_assert_int_lt(b.res.steady.time_ns, f.res.steady.time_ns);
}
END_TEST

/* The same with ZeRO-3's CPU offload of optimizer and parameters
 * (DeepSpeedCPUAdam with bf16 moments): per rank the host holds a bf16
 * master (2T B), bf16 states (4T) and bf16 sub-group grads (2T) where fp32
 * holds 4T, 8T and 4T; at each accumulation boundary the rank's gradient
 * crosses PCIe uncast (2T B) where fp32 upcasts it on the GPU and moves 4T:
 * over the first and one steady step (accumulation 1) 4T B fewer D2H. */
START_TEST(test_deepspeed_bf16_master_offload)
{
    const int64_t T = 951952064;
    static const struct {
        const char *name;
        int64_t f, b;
    } want[] = {
        {"fp32 master params", 4 * T, -1},
        {"bf16 master params", -1, 2 * T},
        {"Adam exp_avg + exp_avg_sq (fp32", 8 * T, -1},
        {"Adam exp_avg + exp_avg_sq (bf16", -1, 4 * T},
        {"fp32 grads (sub-group)", 4 * T, -1},
        {"bf16 grads (sub-group)", -1, 2 * T},
    };
    struct zt_run f, b;
    sim(&f, DS7B_8 OFFLOAD "param-dtype=fp32", true);
    sim(&b, DS7B_8 OFFLOAD "param-dtype=bf16", true);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        ck_assert_int_eq(host_live_bytes(&f.res.first, want[i].name),
                         want[i].f);
        ck_assert_int_eq(host_live_bytes(&b.res.first, want[i].name),
                         want[i].b);
    }
    ck_assert_int_eq(bytes_of(&f, ZS_X_D2H, 0) - bytes_of(&b, ZS_X_D2H, 0),
                     4 * T);
    /* DeepSpeedCPUAdam moves 14 B per element where fp32 moves 28 */
    ck_assert_int_lt(b.res.steady.time_ns, f.res.steady.time_ns);
    ck_assert_int_lt(b.res.first.peak_host_per_rank,
                     f.res.first.peak_host_per_rank);
    /* the master flag alone ('--opt-state-dtype fp32', DeepSpeedCPUAdam's
     * default fp32_optimizer_states): bf16 master and grads, fp32 states
     * (8T); the same uncast D2H; 22 B per element of CPU Adam, between */
    {
        struct zt_run o;
        sim(&o, DS7B_8 OFFLOAD "param-dtype=bf16;opt-state-dtype=fp32", true);
        ck_assert_int_eq(host_live_bytes(&o.res.first, "bf16 master params"),
                         2 * T);
        ck_assert_int_eq(
            host_live_bytes(&o.res.first, "Adam exp_avg + exp_avg_sq (fp32"),
            8 * T);
        ck_assert_int_eq(
            host_live_bytes(&o.res.first, "bf16 grads (sub-group)"), 2 * T);
        ck_assert_int_eq(bytes_of(&o, ZS_X_D2H, 0), bytes_of(&b, ZS_X_D2H, 0));
        ck_assert_int_lt(b.res.steady.time_ns, o.res.steady.time_ns);
        ck_assert_int_lt(o.res.steady.time_ns, f.res.steady.time_ns);
        zs_free(o.ex.t);
    }
    zs_free(f.ex.t);
    zs_free(b.ex.t);
}
END_TEST

/* ZeRO-2 with the optimizer offloaded (stage_1_and_2.py's
 * low_precision_master_weights_and_grads paths), accumulation 4: the host
 * holds the bf16 master (2T), bf16 states (4T) and the master's bf16
 * gradient (2T), and no accumulated_grads_in_cpu buffer of its own (they
 * are views of that gradient; fp32 keeps 2T more); each boundary's D2H is
 * the uncast 2T where fp32 moves 4T: over the first and one steady step 4T
 * fewer bytes. */
START_TEST(test_deepspeed_bf16_master_zero2_offload)
{
    const int64_t T = 951952064;
    struct zt_run f, b;
    sim(&f, DS7B_8 "zero=2;offload-optimizer=cpu;grad-accum=4;"
                   "param-dtype=fp32",
        true);
    sim(&b, DS7B_8 "zero=2;offload-optimizer=cpu;grad-accum=4;"
                   "param-dtype=bf16",
        true);
    ck_assert_int_eq(host_live_bytes(&f.res.first, "accumulated grads"), 2 * T);
    ck_assert_int_eq(host_live_bytes(&b.res.first, "accumulated grads"), -1);
    ck_assert_int_eq(host_live_bytes(&b.res.first, "bf16 master params"),
                     2 * T);
    ck_assert_int_eq(
        host_live_bytes(&b.res.first, "Adam exp_avg + exp_avg_sq (bf16"),
        4 * T);
    ck_assert_int_eq(host_live_bytes(&b.res.first, "bf16 grads (sub-group)"),
                     2 * T);
    ck_assert_int_eq(bytes_of(&f, ZS_X_D2H, 0) - bytes_of(&b, ZS_X_D2H, 0),
                     4 * T);
    ck_assert_int_lt(b.res.steady.time_ns, f.res.steady.time_ns);
    zs_free(f.ex.t);
    zs_free(b.ex.t);
}
END_TEST

/* The optimizer on NVMe: the swapper's four pinned buffers hold the
 * largest sub-group (here the whole T = 951,952,064) in the master's dtype,
 * aligned to 1024 B: fp32 256 elements, 951,952,128 x 4 B each, bf16 512
 * elements, 951,952,384 x 2 B each; everything swapped is half as big, so
 * the step is shorter. */
START_TEST(test_deepspeed_bf16_master_nvme)
{
    struct zt_run f, b;
    sim(&f, DS7B_8 "offload-optimizer=nvme;param-dtype=fp32", false);
    sim(&b, DS7B_8 "offload-optimizer=nvme;param-dtype=bf16", false);
    ck_assert_int_eq(host_live_bytes(&f.res.first, "NVMe swap buffer"),
                     4 * 951952128LL * 4);
    ck_assert_int_eq(host_live_bytes(&b.res.first, "NVMe swap buffer"),
                     4 * 951952384LL * 2);
    ck_assert_int_lt(b.res.steady.time_ns, f.res.steady.time_ns);
}
END_TEST

/* Before 0.19.1 (PR #8010) DeepSpeed's offloaded DeepSpeedCPUAdam makes
 * fp32 moments whatever bf16_optimizer_states says: '--param-dtype bf16'
 * with the optimizer on the CPU resolves to fp32 states there (host 8T,
 * as the master flag alone), to bf16 from 0.19.1 (4T); without offload bf16
 * either way. */
START_TEST(test_deepspeed_bf16_states_offload_version)
{
    const int64_t T = 951952064;
    struct zt_run o, n, g;
    sim(&o, DS7B_8 "offload-optimizer=cpu;param-dtype=bf16;"
                   "deepspeed-version=0.19.0",
        false);
    sim(&n, DS7B_8 "offload-optimizer=cpu;param-dtype=bf16;"
                   "deepspeed-version=0.19.1",
        false);
    ck_assert_int_eq(o.cfg.opt_state_dtype_resolved, ZS_DT_FP32);
    ck_assert_int_eq(n.cfg.opt_state_dtype_resolved, ZS_DT_BF16);
    ck_assert_int_eq(
        host_live_bytes(&o.res.first, "Adam exp_avg + exp_avg_sq (fp32"),
        8 * T);
    ck_assert_int_eq(
        host_live_bytes(&n.res.first, "Adam exp_avg + exp_avg_sq (bf16"),
        4 * T);
    zt_resolve(&g, NULL, DS7B_8 "param-dtype=bf16;deepspeed-version=0.19.0");
    ck_assert_int_eq(g.cfg.opt_state_dtype_resolved, ZS_DT_BF16);
}
END_TEST

/* A --ds-config's two bf16 keys: '--param-dtype bf16' from 0.18.3; a
 * release before it reads neither (fp32 masters), as setup.c takes it. */
START_TEST(test_deepspeed_bf16_keys_by_release)
{
    struct zt_run n, o;
    zt_resolve(&n, NULL,
               "model=7b;ds-config=tests/data/good/ds-bf16-master.json");
    zt_resolve(&o, NULL,
               "model=7b;ds-config=tests/data/good/ds-bf16-master.json;"
               "deepspeed-version=0.16.0");
    ck_assert_int_eq(n.cfg.param_dtype_resolved, ZS_DT_BF16);
    ck_assert_int_eq(n.cfg.opt_state_dtype_resolved, ZS_DT_BF16);
    ck_assert_int_eq(o.cfg.param_dtype_resolved, ZS_DT_FP32);
    ck_assert_int_eq(o.cfg.opt_state_dtype_resolved, ZS_DT_FP32);
}
END_TEST

/* Twin-Flow under bf16 master weights + states: Qwen2.5-72B on 8xH100, T =
 * 9.09 G elements per rank in ten 1e9-element sub-groups; ratio 0.7 puts
 * int(0.3 x 10) = 2 on the GPU (0.18.0 on: the first ones), 2e9 elements:
 * their bf16 master (.to() is the partition, only the clone is made) and
 * bf16 gradient take 4e9 B each, the backup AdamW's bf16 states 8e9 B;
 * fp32 takes twice as much, and the step is shorter. */
START_TEST(test_deepspeed_bf16_master_twin)
{
    struct zt_run f, b;
    sim(&f, "model=qwen2.5-72b;gpus=8xH100;framework=deepspeed;zero=3;"
            "offload-optimizer=cpu;grad-accum=8;offload-ratio=0.7",
        false);
    sim(&b, "model=qwen2.5-72b;gpus=8xH100;framework=deepspeed;zero=3;"
            "offload-optimizer=cpu;grad-accum=8;offload-ratio=0.7;"
            "param-dtype=bf16",
        false);
    ck_assert_int_eq(live_bytes(&b.res.steady, "bf16 master params (Twin-Flow"),
                     4000000000LL);
    ck_assert_int_eq(live_bytes(&b.res.steady, "bf16 grads (sub-group, Twin"),
                     4000000000LL);
    ck_assert_int_eq(live_bytes(&b.res.steady, "Adam exp_avg + exp_avg_sq (bf16"),
                     8000000000LL);
    ck_assert_int_lt(b.res.steady.time_ns, f.res.steady.time_ns);
}
END_TEST

/* What DeepSpeed's precision config allows (config.c
 * check_deepspeed_policy): each refusal names the flag and what works. */
START_TEST(test_deepspeed_policy_rejections)
{
    static const struct {
        const char *flags, *msg;
    } cases[] = {
        {"trainer=torchtitan",
         "'--trainer torchtitan' trains with FSDP2 (fully_shard) only: use "
         "'--framework fsdp2', or '--trainer hf' with DeepSpeed"},
        {"trainer=torchtune;framework=deepspeed",
         "'--trainer torchtune' trains with FSDP2 (fully_shard) only: use "
         "'--framework fsdp2', or '--trainer hf' with DeepSpeed"},
        {"param-dtype=bf16;deepspeed-version=0.16.5",
         "'--param-dtype bf16' with DeepSpeed 0.16.5: bf16 master weights "
         "(bf16.bf16_master_weights_and_grads) exist from 0.18.3 (PR #7700); "
         "use '--param-dtype fp32' (bf16.enabled keeps fp32 master weights "
         "and optimizer states)"},
        {"param-dtype=bf16;opt-state-dtype=fp32;offload-optimizer=nvme",
         "'--param-dtype bf16' with DeepSpeed (bf16 master weights and "
         "optimizer states): with the optimizer on NVMe the swapper allocates "
         "every state's buffer in the master's dtype, so fp32 states under "
         "bf16 master weights are not modelled (bf16 states need "
         "bf16_optimizer_states and, offloaded, DeepSpeed 0.19.1); or use "
         "'--param-dtype fp32'"},
        {"param-dtype=bf16;opt-state-dtype=bf16;offload-optimizer=cpu;"
         "deepspeed-version=0.19.0",
         "'--opt-state-dtype bf16' with the optimizer offloaded and DeepSpeed "
         "0.19.0: DeepSpeedCPUAdam keeps bf16 moments from 0.19.1 (PR #8010), "
         "before it makes fp32 ones whatever bf16_optimizer_states says; use "
         "'--opt-state-dtype auto' or a later '--deepspeed-version'"},
        {"param-dtype=bf16;offload-optimizer=cpu;cpu-optimizer=torch-loop",
         "'--param-dtype bf16' with DeepSpeed (bf16 master weights and "
         "optimizer states): the offloaded optimizer must be "
         "DeepSpeedCPUAdam, DeepSpeed asserts \"Master weights feature "
         "requires ZeRO-3 Offload with DeepSpeedCPUAdam.\"; or use "
         "'--param-dtype fp32'"},
        {"param-dtype=bf16;opt-state-dtype=fp32;offload-optimizer=cpu;"
         "offload-ratio=0.5",
         "'--param-dtype bf16' with DeepSpeed (bf16 master weights and "
         "optimizer states): with Twin-Flow (offload ratio below 1) the GPU "
         "sub-groups' torch AdamW keeps bf16 states beside DeepSpeedCPUAdam's "
         "fp32 ones, which is not modelled (bf16 states need "
         "bf16_optimizer_states and, offloaded, DeepSpeed 0.19.1); or use "
         "'--param-dtype fp32'"},
        {"opt-state-dtype=bf16",
         "'--opt-state-dtype bf16' with DeepSpeed needs '--param-dtype bf16': "
         "DeepSpeed asserts \"bf16_optimizer_states requires "
         "bf16_master_weights_and_grads to be enabled.\""},
        {"param-dtype=bf16;opt-state-dtype=fp32",
         "'--param-dtype bf16 --opt-state-dtype fp32' with DeepSpeed needs "
         "'--offload-optimizer cpu': DeepSpeed asserts \"Master weights "
         "feature requires ZeRO-3 Offload with DeepSpeedCPUAdam.\""},
        {"framework=fsdp2;opt-state-dtype=bf16",
         "'--opt-state-dtype bf16' needs DeepSpeed: torch's optimizers keep "
         "their states in the param dtype ('--param-dtype fp32')"},
        {"reduce-dtype=fp32",
         "'--reduce-dtype fp32' with DeepSpeed maps to "
         "\"communication_data_type\": \"fp32\", which zsim does not model "
         "yet: use '--reduce-dtype bf16' (DeepSpeed's default with "
         "bf16.enabled)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        zt_expect_resolve_error(cases[i].flags, cases[i].msg);
}
END_TEST

START_TEST(test_bad_dtype_flags)
{
    static const struct {
        const char *flag, *value, *msg;
    } cases[] = {
        {"param-dtype", "fp16",
         "invalid value for '--param-dtype': must be one of auto, fp32, bf16 "
         "(got 'fp16')"},
        {"reduce-dtype", "float32",
         "invalid value for '--reduce-dtype': must be one of auto, fp32, bf16 "
         "(got 'float32')"},
        {"trainer", "axolotl",
         "invalid value for '--trainer': must be one of hf, torchtitan, "
         "torchtune (got 'axolotl')"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        zt_expect_bad_flag(cases[i].flag, cases[i].value, cases[i].msg);
}
END_TEST

/* Choice names are the flag spellings, indexed by the enum value: the
 * simulate --json config block prints them (simout.c json_config). */
START_TEST(test_choice_names)
{
    ck_assert_str_eq(zs_cfg_choice_name("loss", ZS_LOSS_FP32_LOGITS),
                     "fp32-logits");
    ck_assert_str_eq(zs_cfg_choice_name("loss", ZS_LOSS_HALF), "half");
    ck_assert_str_eq(zs_cfg_choice_name("kernels", ZS_KERNELS_COMPILED),
                     "compiled");
    ck_assert_str_eq(zs_cfg_choice_name("alloc_conf", ZS_ALLOC_EXPANDABLE),
                     "expandable_segments");
    ck_assert_str_eq(zs_cfg_choice_name("fp8", ZS_FP8_TENSORWISE),
                     "tensorwise");
    ck_assert_str_eq(zs_cfg_choice_name("optimizer", ZS_OPT_PAGED_ADAMW_8BIT),
                     "paged_adamw_8bit");
    /* out of range, not a choice field, no such key */
    ck_assert_str_eq(zs_cfg_choice_name("kernels", 3), "?");
    ck_assert_str_eq(zs_cfg_choice_name("kernels", -1), "?");
    ck_assert_str_eq(zs_cfg_choice_name("seq_len", 0), "?");
    ck_assert_str_eq(zs_cfg_choice_name("no_such_key", 0), "?");
}
END_TEST

Suite *suite_precision(void)
{
    Suite *s = suite_create("precision");
    TCase *core = tcase_create("core");
    TCase *bad = tcase_create("bad input");
    tcase_set_timeout(core, 300);
    tcase_add_test(core, test_model_groups_by_hand);
    tcase_add_test(core, test_hf_no_sync_holds_unsharded_grads);
    tcase_add_test(core, test_hf_no_sync_fp32_reduce_and_accum_1);
    tcase_add_test(core, test_pure_bf16_host_bytes);
    tcase_add_test(core, test_deepspeed_bf16_master_on_gpu);
    tcase_add_test(core, test_deepspeed_bf16_master_offload);
    tcase_add_test(core, test_deepspeed_bf16_master_zero2_offload);
    tcase_add_test(core, test_deepspeed_bf16_master_nvme);
    tcase_add_test(core, test_deepspeed_bf16_states_offload_version);
    tcase_add_test(core, test_deepspeed_bf16_keys_by_release);
    tcase_add_test(core, test_deepspeed_bf16_master_twin);
    tcase_add_test(core, test_pcie_and_reduce_bytes_follow_dtype);
    tcase_add_test(core, test_dtype_helpers);
    tcase_add_test(core, test_choice_names);
    tcase_add_test(core, test_plan_72b_hf_rejects_fsdp2_accumulation);
    tcase_add_test(core, test_fsdp2_qlora_nf4_base);
    tcase_add_test(core, test_fsdp1_qlora_bnb_quant_state);
    tcase_add_test(bad, test_deepspeed_policy_rejections);
    tcase_add_test(bad, test_bad_dtype_flags);
    suite_add_tcase(s, core);
    suite_add_tcase(s, bad);
    return s;
}
