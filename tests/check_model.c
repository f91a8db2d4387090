/*
 * check_model.c — model accounting against hand-computed figures and
 * published parameter totals, the loaders' exact messages for bad inputs,
 * resolution of aliases and library names, and the allocation-failure loop
 * over every loader.
 */
#include "model/model.h"
#include "util/alloc.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GOOD "tests/data/good/"
#define BAD "tests/data/bad/"

static void load_ok(const char *path, struct zs_model *m)
{
    struct zs_err err = {0, ""};
    int rc = zs_model_resolve(path, m, &err);
    ck_assert_msg(rc == 0, "%s: rc %d: %s", path, rc, err.msg);
}

/* ---- core: hand-computed figures on a tiny model ------------------------ */

/* tiny: llama, h 64, i 176, 2 layers, 4 heads, 2 kv heads (head_dim 16),
 * vocab 1000, untied. */
START_TEST(test_tiny_params)
{
    struct zs_model m;
    load_ok(GOOD "model-tiny.json", &m);
    ck_assert_str_eq(m.name, "tiny");
    ck_assert_str_eq(m.resolved_from, GOOD "model-tiny.json (zsim model)");
    ck_assert_int_eq(m.head_dim, 16);
    /* embed 1000*64; layer: norms 2*64, q 64*64, k 64*32, v 64*32, o 64*64,
     * mlp 3*64*176 = 128+4096+2048+2048+4096+33792 = 46208; final norm 64;
     * lm_head 64000. */
    ck_assert_int_eq(m.params_layer, 46208);
    ck_assert_int_eq(m.params_total, 64000 + 2 * 46208 + 64 + 64000);
    ck_assert_int_eq(m.params_total, 220480);
    ck_assert_int_eq(m.params_active, 220480);
    ck_assert_int_eq(m.params_embedding, 128000);
    ck_assert_int_eq(m.params_lm, 220480);
    ck_assert_int_eq(zs_model_leaf_sum(&m), 220480);
    ck_assert_str_eq(m.largest_leaf_name, "model.embed_tokens");
    ck_assert_int_eq(m.largest_leaf_params, 64000);
    ck_assert_int_eq(m.n_pre, 1);
    ck_assert_int_eq(m.n_layer_leaves, 9);
    ck_assert_int_eq(m.n_post, 2);
    ck_assert_str_eq(m.layer[1].name, "self_attn.q_proj");
    ck_assert_int_eq(m.layer[1].role, ZS_ROLE_Q);
    ck_assert_int_eq(m.layer[2].out_features, 32);
    ck_assert_str_eq(m.post[1].name, "lm_head");
    ck_assert_int_eq(zs_model_hidden_bytes_per_token(&m), 128);
}
END_TEST

START_TEST(test_tiny_flops)
{
    struct zs_model m;
    load_ok(GOOD "model-tiny.json", &m);
    /* 2 * matmul params per layer (12288 attention + 33792 mlp) * 2 layers
     * = 184320, lm_head 2*64000 = 128000, attention 2 layers * 4 * 128 *
     * 4 heads * 16 = 65536. */
    ck_assert(zs_model_flops_per_token_fwd(&m, 128) ==
              184320.0 + 128000.0 + 65536.0);
    /* Causal core: 4 * head_dim * heads * seq^2/2 = 256 * 8192. */
    ck_assert(zs_model_attn_core_flops(&m, 128) == 2097152.0);
}
END_TEST

static struct zs_act_opts aopts(int64_t seq, enum zs_ckpt c,
                                enum zs_attn_impl a)
{
    struct zs_act_opts o;
    memset(&o, 0, sizeof o);
    o.seq = seq;
    o.micro_batch = 1;
    o.ckpt = c;
    o.attn = a;
    o.sp = 1;
    o.method = ZS_METHOD_FULL;
    o.lora_rank = 16;
    return o;
}

START_TEST(test_tiny_activations)
{
    struct zs_model m;
    struct zs_act_opts o;
    struct zs_loss_bytes lb;
    load_ok(GOOD "model-tiny.json", &m);
    /* t = 128, h 64, hq 64, hkv 32, i 176, a 4, HF eager kernels:
     * norm1 fp32 copy 4*128*64 + rstd 4*128 = 33280; qkv input 16384;
     * q,k,v 2*128*128 = 32768; lse 4*128*4 = 2048; attention out 16384;
     * norm2 33280; mlp input 16384; mlp 8*128*176 = 180224: 330752. */
    o = aopts(128, ZS_CKPT_NONE, ZS_ATTN_FLASH);
    ck_assert_int_eq(zs_model_act_saved_per_layer(&m, &o), 330752);
    /* fused (Liger): norms keep the bf16 input, 2*128*64 + 512 = 16896
     * each (-32768); SwiGLU keeps gate, up, product 6*128*176 = 135168
     * (-45056): 330752 - 32768 - 45056 = 252928. */
    o.kernels = 1;
    ck_assert_int_eq(zs_model_act_saved_per_layer(&m, &o), 252928);
    /* fused backward: Liger writes dX over dY and da, db over the saved a,
     * b, so the norm adds nothing and the MLP only dc, 2*128*176 = 45056;
     * attention's dq, dk, dv and fp32 dq accumulator, 2*128*(64 + 2*32) +
     * 4*128*64 = 65536, is the largest: 4*t*h + 65536. */
    ck_assert_int_eq(zs_model_act_work_bwd(&m, &o), 32768 + 65536);
    o.kernels = 0;
    /* work fwd: the fp32 norm temporaries 8*128*64; bwd: 4*t*h + 6*t*i. */
    ck_assert_int_eq(zs_model_act_work_fwd(&m, &o), 65536);
    ck_assert_int_eq(zs_model_act_work_bwd(&m, &o), 32768 + 135168);
    /* (below, HF eager kernels: the two norms' fp32 copies add 2 x
     * 2*128*64 = 32768 to every uncheckpointed figure of the fused view)
     * eager: lse out; 6*t*a*s = 393216 and repeated k, v 4*128*32 = 16384 in.
     */
    o = aopts(128, ZS_CKPT_NONE, ZS_ATTN_EAGER);
    ck_assert_int_eq(zs_model_act_saved_per_layer(&m, &o),
                     330752 - 2048 + 409600);
    /* OPT 4.21's clamp (torch.max at finfo.min) saves its input, the
     * masked 16-bit scores: 2 x t x a x s = 131072 more; selective
     * checkpointing recomputes it with the rest of the core. */
    m.family = ZS_FAM_OPT;
    ck_assert_int_eq(zs_model_act_saved_per_layer(&m, &o),
                     330752 - 2048 + 409600 + 131072);
    o = aopts(128, ZS_CKPT_SELECTIVE, ZS_ATTN_EAGER);
    ck_assert_int_eq(zs_model_act_saved_per_layer(&m, &o), 295936 + 32768);
    m.family = ZS_FAM_LLAMA;
    o = aopts(128, ZS_CKPT_SELECTIVE, ZS_ATTN_FLASH);
    ck_assert_int_eq(zs_model_act_saved_per_layer(&m, &o), 295936 + 32768);
    o = aopts(128, ZS_CKPT_SELECTIVE, ZS_ATTN_EAGER);
    ck_assert_int_eq(zs_model_act_saved_per_layer(&m, &o), 295936 + 32768);
    o = aopts(128, ZS_CKPT_FULL, ZS_ATTN_FLASH);
    ck_assert_int_eq(zs_model_act_saved_per_layer(&m, &o), 16384);
    /* Full: the recomputed layer (330752 - 16384) on top of the bwd set. */
    ck_assert_int_eq(zs_model_act_work_bwd(&m, &o), 32768 + 135168 + 314368);
    /* Sequence parallel 2 and micro-batch 2 cancel. */
    o = aopts(128, ZS_CKPT_NONE, ZS_ATTN_FLASH);
    o.sp = 2;
    o.micro_batch = 2;
    ck_assert_int_eq(zs_model_act_saved_per_layer(&m, &o), 330752);
    o.sp = 4;
    o.micro_batch = 1;
    ck_assert_int_eq(zs_model_act_saved_per_layer(&m, &o), 330752 / 4);
    /* Context parallel 4 over seq 512: t = 128 again, the same saved set;
     * the ring adds its transients (model.c cp_work_*; kv = 2 x 32 = 64
     * wide, hq 64).  Forward: gathered K, V 2*4*128*64 = 65536, local
     * copies and cat 4*128*64 = 32768, merge 18*128*64 = 147456: 245760,
     * above the norm's 65536.  Backward: 65536 + 32768 + dq fp32 4*128*64
     * = 32768 + dk, dv fp32 4*128*64 = 32768 + dK dV sent and received
     * 8*128*64 = 65536 + the partial update's cat 32768 = 262144 on top of
     * the flash set (65536), above the MLP's 135168. */
    o = aopts(512, ZS_CKPT_NONE, ZS_ATTN_SDPA);
    o.sp = 4;
    o.cp = 4;
    ck_assert_int_eq(zs_model_act_saved_per_layer(&m, &o), 330752);
    ck_assert_int_eq(zs_model_act_work_fwd(&m, &o), 245760);
    ck_assert_int_eq(zs_model_act_work_bwd(&m, &o), 32768 + 65536 + 262144);
    /* LoRA r 8: + 2*t*r per adapter, 7 adapters = 14336. */
    o = aopts(128, ZS_CKPT_NONE, ZS_ATTN_FLASH);
    o.method = ZS_METHOD_LORA;
    o.lora_rank = 8;
    ck_assert_int_eq(zs_model_act_saved_per_layer(&m, &o), 330752 + 14336);
    /* torchtune's q_proj/v_proj only (--lora-targets q,v): 2 adapters,
     * 2 x 2*128*8 = 4096. */
    o.lora_targets = ZS_ROLE_Q | ZS_ROLE_V;
    ck_assert_int_eq(zs_model_act_saved_per_layer(&m, &o), 330752 + 4096);
    /* MLP only: gate, up, down = 3 x 2048 */
    o.lora_targets = ZS_ROLE_GATE | ZS_ROLE_UP | ZS_ROLE_DOWN;
    ck_assert_int_eq(zs_model_act_saved_per_layer(&m, &o), 330752 + 6144);
    /* PEFT lora_dropout > 0 on q, v: dropout's bf16 output and bool mask
     * of each adapted linear's input, 3 B x t x h = 3 x 128 x 64 each. */
    o.lora_targets = ZS_ROLE_Q | ZS_ROLE_V;
    o.lora_dropout = 0.1;
    ck_assert_int_eq(zs_model_act_saved_per_layer(&m, &o),
                     330752 + 4096 + 2 * 3 * 128 * 64);
    o.method = ZS_METHOD_FULL; /* no adapters, no adapter dropout */
    ck_assert_int_eq(zs_model_act_saved_per_layer(&m, &o), 330752);
    /* Loss: t*V = 128000. */
    o = aopts(128, ZS_CKPT_NONE, ZS_ATTN_FLASH);
    zs_model_loss_bytes(&m, &o, &lb);
    ck_assert_int_eq(lb.logits_bf16, 256000);
    ck_assert_int_eq(lb.logits_fp32, 512000);
    ck_assert_int_eq(lb.logprobs_fp32, 512000);
    ck_assert_int_eq(lb.grad_fp32, 512000);
    ck_assert_int_eq(lb.grad_bf16, 256000);
    ck_assert_int_eq(lb.peak, 12 * 128000);
    ck_assert_int_eq(lb.pieces, 1);
    ck_assert(!lb.logits_freed_in_fwd);
    ck_assert(!lb.fp32_held);
    /* --loss fp32-output (model.c loss_fp32_output): the fp32 logits held
     * through backward, a contiguous fp32 shifted copy 4 tV in forward;
     * backward peak held 4 + log-softmax 4 + two fp32 grads 8 = 16 tV. */
    o.loss_fp32_output = true;
    zs_model_loss_bytes(&m, &o, &lb);
    ck_assert(lb.fp32_held);
    ck_assert(lb.logits_freed_in_fwd);
    ck_assert_int_eq(lb.logits_bf16, 256000);
    ck_assert_int_eq(lb.logits_fp32, 512000);
    ck_assert_int_eq(lb.shift_fp32, 512000);
    ck_assert_int_eq(lb.logprobs_fp32, 512000);
    ck_assert_int_eq(lb.grad_fp32, 512000);
    ck_assert_int_eq(lb.grad_bf16, 256000);
    ck_assert_int_eq(lb.peak, 16 * 128000);
    ck_assert(!lb.output_dropped);
    /* --loss fp32-logits: the HF Trainer drops the output before backward:
     * forward 4 + 4 + 4 = 12 tV, the same tensors otherwise. */
    o.loss_output_dropped = true;
    zs_model_loss_bytes(&m, &o, &lb);
    ck_assert(lb.fp32_held);
    ck_assert(lb.output_dropped);
    ck_assert_int_eq(lb.shift_fp32, 512000);
    ck_assert_int_eq(lb.peak, 12 * 128000);
    o.loss_output_dropped = false;
    /* --loss half (model.c loss_half): every tensor 16-bit, the logits
     * dropped after forward: logits 2 + shifted copy 2 + log-softmax 2 =
     * 6 tV forward, saved 2 + two grads 4 = 6 tV backward. */
    o.loss_fp32_output = false;
    o.loss_half = true;
    zs_model_loss_bytes(&m, &o, &lb);
    ck_assert(lb.half && lb.logits_freed_in_fwd && !lb.fp32_held);
    {
        const int64_t want[6] = {256000, 256000, 256000,
                                 512000, 256000, 6 * 128000};
        const int64_t got[6] = {lb.logits_bf16, lb.logits_fp32,
                                lb.logprobs_fp32, lb.grad_fp32,
                                lb.grad_bf16, lb.peak};
        for (int k = 0; k < 6; k++)
            ck_assert_int_eq(got[k], want[k]);
    }
}
END_TEST

/* torchtitan selective layer AC (checkpointing "layer:N"): at torchtitan
 * 041336434916bdc0f88c1f89fda176fd3c2092e4 parallelize_llama.py the k-th
 * block wrapped (k counted from 1) is checkpointed when k % N == 0. */
START_TEST(test_layer_checkpointing)
{
    struct zs_model m;
    struct zs_act_opts o;
    int64_t total = 0;
    /* N = 2 over 4 blocks: ids 1 and 3 full, 0 and 2 keep everything */
    ck_assert_int_eq(zs_ckpt_of_layer(ZS_CKPT_LAYER, 2, 0), ZS_CKPT_NONE);
    ck_assert_int_eq(zs_ckpt_of_layer(ZS_CKPT_LAYER, 2, 1), ZS_CKPT_FULL);
    ck_assert_int_eq(zs_ckpt_of_layer(ZS_CKPT_LAYER, 2, 2), ZS_CKPT_NONE);
    ck_assert_int_eq(zs_ckpt_of_layer(ZS_CKPT_LAYER, 2, 3), ZS_CKPT_FULL);
    /* N = 3: ids 2, 5; N = 1: every block */
    ck_assert_int_eq(zs_ckpt_of_layer(ZS_CKPT_LAYER, 3, 1), ZS_CKPT_NONE);
    ck_assert_int_eq(zs_ckpt_of_layer(ZS_CKPT_LAYER, 3, 2), ZS_CKPT_FULL);
    ck_assert_int_eq(zs_ckpt_of_layer(ZS_CKPT_LAYER, 3, 5), ZS_CKPT_FULL);
    ck_assert_int_eq(zs_ckpt_of_layer(ZS_CKPT_LAYER, 1, 0), ZS_CKPT_FULL);
    /* the other modes are the same on every block */
    ck_assert_int_eq(zs_ckpt_of_layer(ZS_CKPT_OP, 2, 1), ZS_CKPT_OP);
    ck_assert_int_eq(zs_ckpt_of_layer(ZS_CKPT_NONE, 2, 1), ZS_CKPT_NONE);
    ck_assert_str_eq(zs_ckpt_name(ZS_CKPT_LAYER), "layer");
    /* tiny (2 blocks), t = 128, flash, HF eager, layer:2: block 0 keeps
     * all it saves, 330752 B (test_tiny_activations: norm1 33280, qkv input
     * 16384, q/k/v 32768, lse 2048, attention out 16384, norm2 33280, mlp
     * input 16384, mlp 180224); block 1 keeps its input only, 2*128*64 =
     * 16384 B: 347136 B for the two. */
    load_ok(GOOD "model-tiny.json", &m);
    o = aopts(128, ZS_CKPT_LAYER, ZS_ATTN_FLASH);
    for (int64_t L = 0; L < m.n_layers; L++) {
        struct zs_act_opts l = o;
        l.ckpt = zs_ckpt_of_layer(o.ckpt, 2, L);
        total += zs_model_act_saved_per_layer(&m, &l);
    }
    ck_assert_int_eq(m.n_layers, 2);
    ck_assert_int_eq(total, 347136);
}
END_TEST

/* torchtune's CEWithChunkedOutputLoss, 8 chunks (model.c
 * zs_model_loss_bytes), tiny: V = 1000. */
START_TEST(test_chunked_loss)
{
    struct zs_model m;
    struct zs_act_opts o;
    struct zs_loss_bytes lb;
    load_ok(GOOD "model-tiny.json", &m);
    o = aopts(128, ZS_CKPT_FULL, ZS_ATTN_FLASH);
    o.loss_chunks = 8;
    zs_model_loss_bytes(&m, &o, &lb);
    /* t = 128, tV = 128000; a chunk is 16 tokens, 16000 elements. All bf16
     * chunks 2 tV = 256000; one fp32 upcast chunk 4 x 16000 = 64000; each
     * chunk's saved log-softmax 64000, 8 of them; backward per chunk two
     * fp32 gradients 128000, the bf16 cast 32000. */
    ck_assert_int_eq(lb.logits_bf16, 256000);
    ck_assert_int_eq(lb.logits_fp32, 64000);
    ck_assert_int_eq(lb.logprobs_fp32, 64000);
    ck_assert_int_eq(lb.pieces, 8);
    ck_assert_int_eq(lb.grad_fp32, 128000);
    ck_assert_int_eq(lb.grad_bf16, 32000);
    ck_assert(lb.logits_freed_in_fwd);
    /* forward at the last chunk: 256000 + 8 x 64000 + 64000 = 832000;
     * backward 512000 + 128000 = 640000.  Whole: 12 tV = 1536000. */
    ck_assert_int_eq(lb.peak, 832000);
    /* 100 tokens: torch.chunk gives chunks of ceil(100/8) = 13 tokens (the
     * last one 9); the largest is charged: 13000 elements.  Forward
     * 200000 + 8 x 52000 + 52000 = 668000 (the 8 saved pieces are charged
     * at the largest, 4 B x 104000 over the 4 x 100000 there are);
     * backward 8 x 52000 + 104000 = 520000. */
    o = aopts(100, ZS_CKPT_FULL, ZS_ATTN_FLASH);
    o.loss_chunks = 8;
    zs_model_loss_bytes(&m, &o, &lb);
    ck_assert_int_eq(lb.logits_fp32, 52000);
    ck_assert_int_eq(lb.logprobs_fp32, 52000);
    ck_assert_int_eq(lb.peak, 668000);
}
END_TEST

/* A loss whose upcast a kernel fused (zs_loss_bytes.fused_upcast): no fp32
 * logits or gradient, the bf16 logits kept to lm_head's backward, `stats`
 * bytes of saved row statistics per piece. */
static void check_fused_loss(const struct zs_loss_bytes *lb, int pieces,
                             int64_t bf16, int64_t stats, int64_t grad16)
{
    ck_assert(lb->fused_upcast);
    ck_assert(!lb->logits_freed_in_fwd);
    ck_assert_int_eq(lb->pieces, pieces);
    ck_assert_int_eq(lb->logits_bf16, bf16);
    ck_assert_int_eq(lb->logits_fp32, 0);
    ck_assert_int_eq(lb->logprobs_fp32, stats);
    ck_assert_int_eq(lb->grad_fp32, 0);
    ck_assert_int_eq(lb->grad_bf16, grad16);
}

START_TEST(test_chunked_loss_compiled)
{
    struct zs_model m;
    struct zs_act_opts o;
    struct zs_loss_bytes lb;
    load_ok(GOOD "model-tiny.json", &m);
    o = aopts(128, ZS_CKPT_FULL, ZS_ATTN_FLASH);
    o.loss_chunks = 8;
    o.kernels = 2; /* compiled: compute_cross_entropy under torch.compile */
    zs_model_loss_bytes(&m, &o, &lb);
    /* t = 128 tokens, V = 1000: tV = 128000.  The bf16 chunks, 2 tV =
     * 256000, are saved by the compiled graph (not freed at `del logits`);
     * no fp32 upcast and no fp32 gradient exist; each chunk saves its 16
     * rows' max and log-sum-exp in fp32: 16 x 8 = 128 B; the backward
     * writes one bf16 gradient chunk, 2 x 16000 = 32000. */
    check_fused_loss(&lb, 8, 256000, 128, 32000);
    /* 256000 + 8 x 128 + 32000 = 289024, against 832000 in eager mode */
    ck_assert_int_eq(lb.peak, 289024);
    /* 100 tokens: chunks of ceil(100/8) = 13 rows charged, 13 x 8 = 104 B
     * of statistics each; 200000 + 8 x 104 + 2 x 13000 = 226832 */
    o.seq = 100;
    zs_model_loss_bytes(&m, &o, &lb);
    ck_assert_int_eq(lb.logprobs_fp32, 104);
    ck_assert_int_eq(lb.peak, 226832);
    /* the eager path sets no flag */
    o.kernels = 0;
    zs_model_loss_bytes(&m, &o, &lb);
    ck_assert(!lb.fused_upcast);
    /* --loss flash-xentropy (model.c loss_fused_whole, 4 B a row), 128 tokens */
    o = aopts(128, ZS_CKPT_FULL, ZS_ATTN_FLASH);
    o.loss_xentropy = true;
    zs_model_loss_bytes(&m, &o, &lb);
    /* t = 128, tV = 128000: the bf16 logits 256000 are saved by the loss
     * and held by the loop; one fp32 log-sum-exp per row, 128 x 4 = 512;
     * no fp32 tensor; the backward's bf16 gradient 256000.  Peak 512512
     * (the eager whole loss: 12 tV = 1536000). */
    check_fused_loss(&lb, 1, 256000, 512, 256000);
    ck_assert_int_eq(lb.peak, 512512);
    /* the same under --kernels compiled with an eager loss: the kernel is
     * flash-attn's either way */
    o.kernels = 2;
    o.loss_eager = true;
    zs_model_loss_bytes(&m, &o, &lb);
    ck_assert_int_eq(lb.peak, 512512);
    /* The whole eager loss under torchtitan's `del pred` (model.c
     * zs_model_loss_bytes, zs_act_opts.logits_dropped). */
    o = aopts(128, ZS_CKPT_FULL, ZS_ATTN_FLASH);
    zs_model_loss_bytes(&m, &o, &lb);
    /* t = 128, tV = 128000: bf16 2 tV, fp32 upcast, log-softmax and each
     * fp32 gradient 4 tV; the bf16 logits stay to lm_head's backward */
    ck_assert_int_eq(lb.logits_bf16, 256000);
    ck_assert_int_eq(lb.grad_fp32, 512000);
    ck_assert(!lb.logits_freed_in_fwd);
    o.logits_dropped = true;
    zs_model_loss_bytes(&m, &o, &lb);
    ck_assert(lb.logits_freed_in_fwd);
    /* an eager loss under a compiled model (--compile-loss no) too */
    o.kernels = 2;
    o.loss_eager = true;
    zs_model_loss_bytes(&m, &o, &lb);
    ck_assert(lb.logits_freed_in_fwd);
    /* a compiled loss may keep them in its graph: not dropped */
    o.loss_eager = false;
    zs_model_loss_bytes(&m, &o, &lb);
    ck_assert(!lb.logits_freed_in_fwd);
    /* the compiled whole loss (model.c loss_fused_whole, 8 B a row): the graph
     * saves its bf16 input, 2 tV = 256000, and each of the 128 rows' max
     * and log-sum-exp in fp32, 128 x 8 = 1024; no fp32 tensor; the
     * backward writes the bf16 gradient, 256000.  Peak 513024, against
     * 12 tV = 1536000 for the eager whole loss. */
    check_fused_loss(&lb, 1, 256000, 1024, 256000);
    ck_assert_int_eq(lb.peak, 513024);
}
END_TEST

START_TEST(test_tiny_methods)
{
    struct zs_model m;
    struct zs_method_opts full = {ZS_METHOD_FULL, 16, ZS_ROLE_ALL_LINEAR};
    struct zs_method_opts lora = {ZS_METHOD_LORA, 8, ZS_ROLE_ALL_LINEAR};
    struct zs_method_opts qv = {ZS_METHOD_LORA, 8, ZS_ROLE_Q | ZS_ROLE_V};
    struct zs_method_opts qlora = {ZS_METHOD_QLORA, 8, ZS_ROLE_ALL_LINEAR};
    load_ok(GOOD "model-tiny.json", &m);
    ck_assert_int_eq(zs_model_trainable(&m, &full), 220480);
    /* r*(in+out): q 8*128, k 8*96, v 8*96, o 8*128, gate/up/down 8*240. */
    ck_assert_int_eq(zs_model_trainable(&m, &lora),
                     2 * (1024 + 768 + 768 + 1024 + 3 * 1920));
    ck_assert_int_eq(zs_model_trainable(&m, &qv), 2 * (1024 + 768));
    ck_assert_int_eq(zs_leaf_trainable(&m.pre[0], &lora), 0);
    /* Weights: bf16 2 B; NF4 q_proj (4096 elements) = 2048 + 64 block
     * absmax bytes + 4 (one fp32 second-level scale). */
    ck_assert_int_eq(zs_leaf_weight_bytes(&m.layer[1], &full), 8192);
    ck_assert_int_eq(zs_leaf_weight_bytes(&m.layer[1], &qlora), 2116);
    ck_assert_int_eq(zs_leaf_weight_bytes(&m.layer[0], &qlora), 128);
    ck_assert_int_eq(zs_leaf_weight_bytes(&m.post[1], &qlora), 128000);
    {
        /* QLoRA dequantises one frozen weight to bf16 per matmul: the
         * largest, gate/up/down 176 x 64, is 2 x 11264 = 22528 B; none
         * without NF4 */
        struct zs_act_opts o = {.seq = 128, .micro_batch = 1,
                                .method = ZS_METHOD_QLORA, .lora_rank = 8};
        ck_assert_int_eq(zs_model_dequant_bytes(&m, &o), 22528);
        o.method = ZS_METHOD_LORA;
        ck_assert_int_eq(zs_model_dequant_bytes(&m, &o), 0);
    }
    {
        /* Llama-2-70B: 28672 x 8192 x 2 B = 448 MiB (one MLP projection) */
        struct zs_model big;
        struct zs_act_opts o = {.seq = 2048, .micro_batch = 1,
                                .method = ZS_METHOD_QLORA, .lora_rank = 8};
        load_ok("llama-2-70b", &big);
        ck_assert_int_eq(zs_model_dequant_bytes(&big, &o), 448LL << 20);
    }
}
END_TEST

/* tiny-moe: mixtral, h 64, experts 4 x 3 x 64 x 128, top 2, 1 layer,
 * vocab 100, extras tower 1000 (trainable) and talker 500 (cpu). */
START_TEST(test_tiny_moe)
{
    struct zs_model m;
    struct zs_method_opts full = {ZS_METHOD_FULL, 16, ZS_ROLE_ALL_LINEAR};
    struct zs_method_opts lora = {ZS_METHOD_LORA, 4, ZS_ROLE_ALL_LINEAR};
    const struct zs_leaf *ex;
    load_ok(GOOD "model-tiny-moe.json", &m);
    /* layer: norms 128, q,k,v,o 4*4096, router 256, experts 98304 = 115072;
     * embed 6400, final norm 64, lm_head 6400; extras 1500. */
    ck_assert_int_eq(m.params_layer, 115072);
    ck_assert_int_eq(m.params_lm, 127936);
    ck_assert_int_eq(m.params_total, 129436);
    /* active: experts 2*3*64*128 = 49152 instead of 98304. */
    ck_assert_int_eq(m.params_active, 129436 - 49152);
    ck_assert_str_eq(m.largest_leaf_name,
                     "model.layers.*.block_sparse_moe.experts");
    ck_assert_int_eq(m.largest_leaf_params, 98304);
    ex = &m.layer[m.n_layer_leaves - 1];
    ck_assert_int_eq(ex->kind, ZS_LEAF_EXPERTS);
    ck_assert_int_eq(ex->gemms, 6);
    ck_assert_int_eq(ex->n_tensors, 12);
    ck_assert_int_eq(m.layer[m.n_layer_leaves - 2].kind, ZS_LEAF_ROUTER);
    ck_assert_str_eq(m.extra[1].name, "talker");
    ck_assert_int_eq(m.extra[1].placement_default, ZS_PLACE_CPU);
    ck_assert(m.extra[0].trainable_default);
    /* full: everything but the frozen-by-default talker. */
    ck_assert_int_eq(zs_model_trainable(&m, &full), 129436 - 500);
    /* LoRA r 4: attention 4 * 4*128 = 2048; experts 4 experts * 3 * 4*(64+128).
     */
    ck_assert_int_eq(zs_model_trainable(&m, &lora), 2048 + 4 * 3 * 4 * 192);
    /* Forward FLOPs at seq 16: 2*(16384 + 256 + 2*3*64*128) + 2*6400 +
     * 4*16*4*16 = 2*65792 + 12800 + 4096. */
    ck_assert(zs_model_flops_per_token_fwd(&m, 16) ==
              2.0 * 65792 + 12800 + 4096);
}
END_TEST

START_TEST(test_moe_activations)
{
    struct zs_model m;
    struct zs_act_opts o = aopts(16, ZS_CKPT_NONE, ZS_ATTN_FLASH);
    load_ok(GOOD "model-tiny-moe.json", &m);
    /* t 16, h 64, hq = hkv = 64, a 4, E 4, k 2, mi 128, HF eager:
     * norm1 fp32 copy 4*16*64 + 64 = 4160, qkv in 2048, q,k,v 6144, lse 256,
     * out 2048, norm2 4160, mlp in 2048, router 4*16*4 + 4*32 + 8*32 = 640,
     * experts 2*32*64 + 8*32*128 + 2*32*64 + 2*32 = 4096+32768+4096+64. */
    ck_assert_int_eq(zs_model_act_saved_per_layer(&m, &o),
                     4160 + 2048 + 6144 + 256 + 2048 + 4160 + 2048 + 640 +
                         41024);
}
END_TEST

/* Every config in shared/data/hf-configs (copied to tests/data/good) against
 * its published total.  Published figures are rounded to 3-4 significant
 * digits, so the check is 0.1 %; where the publisher truncated to fewer
 * digits (Qwen3-30B-A3B: "30.5B", "3.3B") the exact count is asserted
 * instead and the published figure must be its truncation. */
START_TEST(test_hf_published)
{
    static const struct {
        const char *file;
        double published, exact;
    } cases[] = {
        {"model-hf-Qwen2.5-72B.json", 72.7e9, 72706203648.0},
        {"model-hf-Qwen2.5-7B.json", 7.61e9, 7615616512.0},
        {"model-hf-Yi-34B.json", 34.389e9, 34388917248.0},
        {"model-hf-Llama-2-7b-hf.json", 6.74e9, 6738415616.0},
        {"model-hf-Meta-Llama-3-8B-Instruct.json", 8.03e9, 8030261248.0},
    };
    struct zs_model m;
    char path[256];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(path, sizeof path, GOOD "%s", cases[i].file);
        load_ok(path, &m);
        ck_assert_msg(fabs((double)m.params_total - cases[i].published) <=
                          0.001 * cases[i].published,
                      "%s: %lld", path, (long long)m.params_total);
        ck_assert_msg((double)m.params_total == cases[i].exact, "%s: %lld",
                      path, (long long)m.params_total);
    }
    load_ok(GOOD "model-hf-Qwen3-30B-A3B.json", &m);
    ck_assert_int_eq(m.family, ZS_FAM_QWEN3_MOE);
    ck_assert_int_eq(m.params_total, 30532122624LL);
    ck_assert_int_eq(m.params_active, 3353032704LL);
    ck_assert(floor((double)m.params_total / 1e8) / 10 == 30.5);
    ck_assert(floor((double)m.params_active / 1e8) / 10 == 3.3);
    ck_assert_int_eq(m.head_dim, 128);
    ck_assert(m.qk_norm);
    ck_assert_int_eq(m.n_experts, 128);
    ck_assert_int_eq(m.experts_per_token, 8);
    ck_assert_str_eq(m.largest_leaf_name, "model.layers.*.mlp.experts");
    load_ok(GOOD "model-hf-Qwen2.5-7B.json", &m);
    ck_assert(m.qkv_bias);
    ck_assert_int_eq(m.sliding_window, 0); /* use_sliding_window false */
    ck_assert_str_eq(m.name, "model-hf-Qwen2.5-7B");
    /* Published non-embedding 6.53B (model card). */
    ck_assert(fabs((double)(m.params_total - m.params_embedding) - 6.53e9) <
              0.001 * 6.53e9);
}
END_TEST

/* The library against reference-data.md §A's [computed] table (3 decimals
 * of a billion) and the published totals where there are any. */
START_TEST(test_library_reference)
{
    static const struct {
        const char *name;
        double total_b, active_b, emb_b;
    } cases[] = {
        {"llama-2-7b", 6.738, 0, 0.262},
        {"llama-2-70b", 68.977, 0, 0.524},
        {"llama-3-8b", 8.030, 0, 1.051},
        {"llama-3-70b", 70.554, 0, 2.101},
        {"llama-3.1-405b", 405.853, 0, 4.203},
        {"mistral-7b", 7.242, 0, 0.262},
        {"mixtral-8x7b", 46.703, 12.880, 0.262},
        {"qwen2.5-72b", 72.706, 0, 2.491},
        {"qwen2.5-7b", 7.616, 0, 1.090},
        {"qwen3-32b", 32.762, 0, 1.556},
        {"qwen3-30b-a3b", 30.532, 3.353, 0.622},
        {"yi-34b", 34.389, 0, 0.918},
    };
    struct zs_model m;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        load_ok(cases[i].name, &m);
        ck_assert_msg(
            fabs((double)m.params_total / 1e9 - cases[i].total_b) < 0.0006,
            "%s total %lld", cases[i].name, (long long)m.params_total);
        if (cases[i].active_b > 0)
            ck_assert_msg(fabs((double)m.params_active / 1e9 -
                               cases[i].active_b) < 0.0006,
                          "%s active %lld", cases[i].name,
                          (long long)m.params_active);
        else
            ck_assert(m.params_active == m.params_total);
        ck_assert_msg(
            fabs((double)m.params_embedding / 1e9 - cases[i].emb_b) < 0.0006,
            "%s emb %lld", cases[i].name, (long long)m.params_embedding);
    }
    /* Published: Mixtral 46.7B / 12.9B, Qwen3-32B 32.8B, Qwen2.5-14B 14.7B. */
    load_ok("8x7b", &m);
    ck_assert(fabs((double)m.params_total - 46.7e9) < 0.001 * 46.7e9);
    ck_assert(fabs((double)m.params_active - 12.9e9) < 0.002 * 12.9e9);
    ck_assert_int_eq(m.largest_leaf_params, 8LL * 3 * 4096 * 14336);
    load_ok("qwen3-32b", &m);
    ck_assert(fabs((double)m.params_total - 32.8e9) < 0.002 * 32.8e9);
    load_ok("14b", &m);
    ck_assert(fabs((double)m.params_total - 14.7e9) < 0.005 * 14.7e9);
    load_ok("mistral-7b", &m);
    ck_assert_int_eq(m.sliding_window, 4096);
    /* Llama-2-13B (the card and paper say 13B), worked by hand: per layer
     * q,k,v,o 4*5120^2 = 104857600 + gate,up,down 3*5120*13824 = 212336640
     * + 2 norms 10240 = 317204480; x40 + final norm 5120 = 12688184320;
     * embed + untied lm_head 2*32000*5120 = 327680000. */
    load_ok("llama2-13b", &m);
    ck_assert_int_eq(m.params_total - m.params_embedding, 12688184320LL);
    ck_assert_int_eq(m.params_embedding, 327680000LL);
    ck_assert_int_eq(m.params_total, 13015864320LL);
    ck_assert(fabs((double)m.params_total - 13e9) < 0.002 * 13e9);
    /* Omni: thinker (= Qwen2.5-7B) + towers + talker + token2wav. */
    load_ok("omni", &m);
    ck_assert_int_eq(m.family, ZS_FAM_QWEN2_5_OMNI);
    ck_assert_int_eq(m.params_lm, 7615616512LL);
    ck_assert_int_eq(m.n_extra, 4);
    ck_assert_int_eq(m.params_total, 7615616512LL + 639647232LL + 676550144LL +
                                         1351360256LL + 390000000LL);
    ck_assert_str_eq(m.extra[2].name, "talker");
    ck_assert_int_eq(m.extra[2].placement_default, ZS_PLACE_CPU);
}
END_TEST


/* tiny-neox: gpt_neox, h 64, i 256, 1 layer, 4 heads (head_dim 16), vocab
 * 100, LayerNorm with bias, plain gelu_fast MLP, parallel residual with two
 * norms, fused qkv, biases everywhere, untied. */
START_TEST(test_tiny_neox)
{
    struct zs_model m;
    struct zs_act_opts o;
    struct zs_method_opts lora = {ZS_METHOD_LORA, 8, ZS_ROLE_ALL_LINEAR};
    load_ok(GOOD "model-tiny-neox.json", &m);
    /* layer: 2 LayerNorms 2*(64+64) = 256; query_key_value 64*192+192 =
     * 12480; dense 64*64+64 = 4160; dense_h_to_4h 64*256+256 = 16640;
     * dense_4h_to_h 256*64+64 = 16448: 49984.  embed_in 6400, final norm
     * 128, embed_out 6400. */
    ck_assert_int_eq(m.params_layer, 49984);
    ck_assert_int_eq(m.params_total, 6400 + 49984 + 128 + 6400);
    ck_assert_int_eq(m.n_layer_leaves, 6);
    ck_assert_str_eq(m.layer[1].name, "attention.query_key_value");
    ck_assert_int_eq(m.layer[1].out_features, 192);
    ck_assert_str_eq(m.layer[3].name, "post_attention_layernorm");
    ck_assert_int_eq(m.layer[3].n_tensors, 2);
    ck_assert_str_eq(m.largest_leaf_name,
                     "gpt_neox.layers.*.mlp.dense_h_to_4h");
    /* FLOPs at seq 128: 2 GEMMs in the MLP, not 3: 2*(12288 + 4096 +
     * 16384 + 16384) = 98304, embed_out 2*6400, attention 4*128*4*16. */
    ck_assert(zs_model_flops_per_token_fwd(&m, 128) ==
              98304.0 + 12800.0 + 32768.0);
    /* Saved at seq 128, flash: t 128, h 64, LayerNorm stats 8 B/token:
     * norm1 input + stats 16384 + 1024; its output 16384; q,k,v 2*128*192
     * = 49152; lse 2048; attention output 16384; second norm of the same
     * input: stats 1024 + output 16384; gelu_fast 16*128*256 = 524288. */
    o = aopts(128, ZS_CKPT_NONE, ZS_ATTN_FLASH);
    ck_assert_int_eq(zs_model_act_saved_per_layer(&m, &o),
                     17408 + 16384 + 49152 + 2048 + 16384 + 17408 + 524288);
    /* LoRA r 8: 4 adapters (query_key_value, dense, h_to_4h, 4h_to_h):
     * 8*(64+192) + 8*(64+64) + 8*(64+256) * 2 = 2048 + 1024 + 5120; saved
     * + 2*t*r per adapter = 4 * 2048. */
    ck_assert_int_eq(zs_model_trainable(&m, &lora), 2048 + 1024 + 5120);
    o.method = ZS_METHOD_LORA;
    o.lora_rank = 8;
    ck_assert_int_eq(zs_model_act_saved_per_layer(&m, &o),
                     643072 + 4 * 2048);
}
END_TEST

/* Parameter totals of the new architectures against their published
 * figures: exact where the publisher gives every digit, else within the
 * rounding of the published figure (docs/model.md has the table). */
START_TEST(test_arch_published)
{
    static const struct {
        const char *name;
        long long exact;
        double published, tol;
    } cases[] = {
        /* openai-community/gpt2 card: "124M parameters". */
        {"tests/data/hf-configs/gpt2.json", 124439808LL, 124e6, 0.005},
        /* facebook/opt-125m card / OPT paper Table 1: 125M. */
        {"tests/data/hf-configs/opt-125m.json", 125239296LL, 125e6, 0.005},
        /* Black et al. 2022 Table 1: 20,554,567,680. */
        {"gpt-neox-20b", 20554567680LL, 20554567680.0, 0},
        /* bigscience/bloom-7b1 card: 7,069,016,064 parameters. */
        {"bloom-7b1", 7069016064LL, 7069016064.0, 0},
        /* OPT paper Table 1: 6.7B, 30B. */
        {"opt-6.7b", 6658473984LL, 6.7e9, 0.01},
        {"opt-30b", 29974540288LL, 30e9, 0.01},
        /* mosaicml/mpt-7b card: n_parameters 6.7B. */
        {"mpt-7b", 6649286656LL, 6.7e9, 0.01},
        /* tiiuae/falcon-7b card: 7B; falcon-40b card: 40B (rounded: the
         * tied count is 1.1 % and 3.3 % under; see docs/model.md). */
        {"falcon-7b", 6921720704LL, 7e9, 0.015},
        {"falcon-40b", 41303293952LL, 40e9, 0.035},
        /* Gemma papers: embedding + non-embedding (Table 2). */
        {"gemma-2-9b", 917504000LL + 8324201984LL,
         917504000.0 + 8324201984.0, 0},
    };
    struct zs_model m;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        load_ok(cases[i].name, &m);
        ck_assert_msg(m.params_total == cases[i].exact, "%s: %lld",
                      cases[i].name, (long long)m.params_total);
        ck_assert_msg(fabs((double)m.params_total - cases[i].published) <=
                          cases[i].tol * cases[i].published,
                      "%s vs published", cases[i].name);
    }
    /* Gemma Team 2024 Table 2 non-embedding counts, exact (the paper's
     * embedding rows are 256,128 x d, the HF checkpoints' 256,000 x d). */
    load_ok("gemma-7b", &m);
    ck_assert_int_eq(m.params_total - m.params_embedding, 7751248896LL);
    ck_assert_int_eq(m.head_dim, 256);
    ck_assert(m.tie_embeddings);
    load_ok("gemma-2b", &m);
    ck_assert_int_eq(m.params_total - m.params_embedding, 1981884416LL);
    ck_assert_int_eq(m.n_kv_heads, 1);
    load_ok("gemma-2-9b", &m);
    ck_assert_int_eq(m.params_embedding, 917504000LL);
    ck_assert_int_eq(m.n_layer_leaves, 11); /* 4 norms + 4 attn + 3 mlp */
    ck_assert_int_eq(m.sliding_layers, 21);
    /* phi-2 card: "2.7 billion parameters", a truncation of 2.78B. */
    load_ok("tests/data/hf-configs/phi-2.json", &m);
    ck_assert_int_eq(m.params_total, 2779683840LL);
    ck_assert(floor((double)m.params_total / 1e8) / 10 == 2.7);
    ck_assert(m.lm_head_bias);
    ck_assert_int_eq(m.block, ZS_BLOCK_PARALLEL);
    ck_assert_int_eq(m.act, ZS_ACT_GELU_NEW);
    /* Phi3Config defaults are Phi-3-mini-4k-instruct's (the class
     * docstring); card: 3.8B.  qkv_proj 3072 -> 9216, gate_up_proj 3072 ->
     * 16384, down 8192 -> 3072, o 3072^2, 2 norms: 113,252,352 per layer;
     * embed and lm_head 32064 x 3072 each; final norm. */
    load_ok(GOOD "model-hf-phi3-defaults.json", &m);
    ck_assert_int_eq(m.params_layer, 113252352LL);
    ck_assert_int_eq(m.params_total,
                     32 * 113252352LL + 2 * 98500608LL + 3072);
    ck_assert(floor((double)m.params_total / 1e8) / 10 == 3.8);
    ck_assert(m.gate_up_fused && m.qkv_fused);
    ck_assert_int_eq(m.n_layer_leaves, 6);
    /* The library copy of a vendored config counts the same. */
    load_ok("phi-2", &m);
    ck_assert_int_eq(m.params_total, 2779683840LL);
    load_ok("gpt2", &m);
    ck_assert_int_eq(m.params_total, 124439808LL);
    /* Falcon-7B: multi-query (1 kv head): query_key_value 4544 -> 4672. */
    load_ok("falcon", &m);
    ck_assert_int_eq(m.n_kv_heads, 1);
    ck_assert_int_eq(m.layer[1].out_features, 4672);
    ck_assert_int_eq(m.n_layer_leaves, 5); /* one norm, qkv, dense, 2 fc */
}
END_TEST

/* GPT-2 as its config.json trains: gelu_new in python, LayerNorm, dropout
 * 0.1 on the attention probabilities and on both residual branches. */
START_TEST(test_gpt2_activations)
{
    struct zs_model m;
    struct zs_act_opts o;
    load_ok("tests/data/hf-configs/gpt2.json", &m);
    ck_assert_int_eq(m.resid_dropout_sites, 2);
    /* Per token at seq 1024, h 768, i 3072, 12 heads: ln_1 input + mean,
     * rstd 1536 + 8; its output 1536; q,k,v 2*2304 = 4608; flash lse 4*12
     * = 48; attention output 1536; ln_2 input, stats, output 1536 + 8 +
     * 1536; gelu_new 10*3072 = 30720; two dropout masks 2*768. */
    o = aopts(1024, ZS_CKPT_NONE, ZS_ATTN_FLASH);
    ck_assert_int_eq(zs_model_act_saved_per_layer(&m, &o),
                     1024LL * (1544 + 1536 + 4608 + 48 + 1536 + 3080 + 30720 +
                               1536));
    /* Eager with attention dropout: 7 B per score (fp32 softmax, mask,
     * dropped bf16 probabilities) = 7*12*1024 per token instead of lse. */
    o = aopts(1024, ZS_CKPT_NONE, ZS_ATTN_EAGER);
    ck_assert_int_eq(zs_model_act_saved_per_layer(&m, &o),
                     1024LL * (44608 - 48 + 7 * 12 * 1024));
    /* GPT-2's softmax without a dtype on a 16-bit model (DeepSpeed's
     * cast, model.c zs_model_eager_softmax_keeps_dtype): 16-bit softmax
     * output, mask, dropped probabilities = 5 B per score.  Transients:
     * 4 S with grad (ckpt none), 5 S in the no-grad forward of a
     * checkpointed layer (softmax out, dropout mask and output); backward
     * 4 S + 3 x 2 t hq instead of 8 S. */
    ck_assert(zs_model_eager_softmax_keeps_dtype(&m));
    o.softmax_half = true;
    ck_assert_int_eq(zs_model_act_saved_per_layer(&m, &o),
                     1024LL * (44608 - 48 + 5 * 12 * 1024));
    ck_assert_int_eq(zs_model_act_work_fwd(&m, &o), 4LL * 1024 * 12 * 1024);
    o.ckpt = ZS_CKPT_FULL;
    ck_assert_int_eq(zs_model_act_work_fwd(&m, &o), 5LL * 1024 * 12 * 1024);
    o.softmax_half = false;
    ck_assert_int_eq(zs_model_act_work_fwd(&m, &o), 6LL * 1024 * 12 * 1024);
    /* FLOPs at seq 1024: 2 x (c_attn 768*2304 + c_proj 768^2 + c_fc and
     * mlp c_proj 2*768*3072) per layer x 12, tied head 2*768*50257, and
     * attention 4*1024*768 per layer x 12. */
    ck_assert(zs_model_flops_per_token_fwd(&m, 1024) ==
              12.0 * 2 * (768.0 * 2304 + 768.0 * 768 + 2 * 768.0 * 3072) +
                  2.0 * 768 * 50257 + 12.0 * 4 * 1024 * 768);
}
END_TEST

/* ALiBi without a flash path: the check names the file's key. */
START_TEST(test_attention_check)
{
    struct zs_model m;
    struct zs_err err = {0, ""};
    load_ok(GOOD "model-hf-tiny-falcon-alibi.json", &m);
    ck_assert_int_eq(m.pos, ZS_POS_ALIBI);
    ck_assert_int_eq(m.block, ZS_BLOCK_SEQUENTIAL);
    ck_assert_int_eq(zs_model_check_attention(&m, ZS_ATTN_EAGER, &err), 0);
    ck_assert_int_eq(zs_model_check_attention(&m, ZS_ATTN_FLASH, &err),
                     ZS_EINPUT);
    ck_assert_str_eq(
        err.msg,
        "invalid 'alibi' in tests/data/good/model-hf-tiny-falcon-alibi.json:"
        "10:3: transformers' FalconFlashAttention2 raises on ALiBi (it has no "
        "bias path); only eager attention adds it; use --attention eager "
        "(got --attention flash)");
    load_ok(GOOD "model-tiny-neox.json", &m);
    ck_assert_int_eq(zs_model_check_attention(&m, ZS_ATTN_FLASH, &err), 0);
    /* A library model is named as shown (relative to the source tree). */
    unsetenv("ZSIM_MODELS");
    load_ok("bloom", &m);
    ck_assert_int_eq(zs_model_check_attention(&m, ZS_ATTN_FLASH, &err),
                     ZS_EINPUT);
    ck_assert_str_eq(err.msg,
                     "invalid 'position_embedding' in models/bloom-7b1.json:"
                     "17:3: transformers' bloom attention adds the ALiBi bias "
                     "to eager scores and has no flash-attention path; use "
                     "--attention eager (got --attention flash)");
    load_ok("mpt", &m);
    ck_assert(m.flash_forbidden_at[0]);
    load_ok("falcon", &m); /* rotary Falcon-7B: flash is fine */
    ck_assert_int_eq(zs_model_check_attention(&m, ZS_ATTN_FLASH, &err), 0);
}
END_TEST

START_TEST(test_resolve)
{
    struct zs_model m;
    const char *const *names;
    const struct zs_model_alias *al;
    int n, na;
    unsetenv("ZSIM_MODELS");
    load_ok("72b", &m);
    ck_assert_str_eq(m.name, "qwen2.5-72b");
    ck_assert_str_eq(m.resolved_from,
                     "72b -> qwen2.5-72b (models/qwen2.5-72b.json)");
    ck_assert_str_eq(m.source, "models/qwen2.5-72b.json");
    load_ok("Qwen2.5-72B", &m);
    ck_assert_str_eq(m.resolved_from,
                     "Qwen2.5-72B -> qwen2.5-72b (models/qwen2.5-72b.json)");
    load_ok("qwen2.5-72b", &m);
    ck_assert_str_eq(m.resolved_from, "qwen2.5-72b (models/qwen2.5-72b.json)");
    load_ok(GOOD "model-hf-Yi-34B.json", &m);
    ck_assert_str_eq(m.resolved_from,
                     GOOD "model-hf-Yi-34B.json (hugging face config)");
    /* Every library entry and alias loads. */
    zs_model_library(&names, &n);
    ck_assert_int_eq(n, 28);
    for (int i = 0; i < n; i++) {
        load_ok(names[i], &m);
        ck_assert_str_eq(m.name, names[i]);
    }
    zs_model_aliases(&al, &na);
    for (int i = 0; i < na; i++) {
        load_ok(al[i].alias, &m);
        ck_assert_str_eq(m.name, al[i].name);
    }
    /* $ZSIM_MODELS moves the library; a user's file there is found by name. */
    setenv("ZSIM_MODELS", "tests/data/good", 1);
    load_ok("model-tiny", &m);
    ck_assert_str_eq(m.resolved_from,
                     "model-tiny (tests/data/good/model-tiny.json)");
    unsetenv("ZSIM_MODELS");
}
END_TEST

/* ---- bad input ---------------------------------------------------------- */

START_TEST(test_bad_inputs)
{
    static const struct {
        const char *name, *msg;
    } cases[] = {
        {BAD "model-empty.json",
         "empty file 'tests/data/bad/model-empty.json': expected a JSON "
         "object"},
        {BAD "model-binary.json",
         "binary file 'tests/data/bad/model-binary.json' (byte 0x01 at offset "
         "42): expected a JSON object"},
        {BAD "model-elf.json",
         "binary file 'tests/data/bad/model-elf.json' (byte 0x02 at offset 4): "
         "expected a JSON object"},
        {BAD "model-truncated.json",
         "malformed JSON in tests/data/bad/model-truncated.json:5:1: "
         "unexpected end of input"},
        {BAD "model-malformed.json",
         "malformed JSON in tests/data/bad/model-malformed.json:4:26: "
         "unexpected 't'"},
        {BAD "model-array.json",
         "invalid top level in tests/data/bad/model-array.json: must be an "
         "object (got array)"},
        {BAD "model-unknown-key.json",
         "unknown key 'hiden_size' in "
         "tests/data/bad/model-unknown-key.json:5:3: did you mean "
         "'hidden_size'?"},
        {BAD "model-wrong-type.json",
         "invalid 'hidden_size' in tests/data/bad/model-wrong-type.json:5:3: "
         "must be an integer in [1, 65536] (got '64')"},
        {BAD "model-negative.json",
         "invalid 'hidden_size' in tests/data/bad/model-negative.json:5:3: "
         "must be an integer in [1, 65536] (got -64)"},
        {BAD "model-huge.json",
         "invalid 'hidden_size' in tests/data/bad/model-huge.json:5:3: must be "
         "an integer in [1, 65536] (got 1e+300)"},
        {BAD "model-fraction.json",
         "invalid 'hidden_size' in tests/data/bad/model-fraction.json:5:3: "
         "must be an integer in [1, 65536] (got 64.5)"},
        {BAD "model-missing.json",
         "missing 'vocab_size' in tests/data/bad/model-missing.json: required, "
         "an integer in [1, 4194304]"},
        {BAD "model-heads-hidden.json",
         "invalid 'num_attention_heads' in "
         "tests/data/bad/model-heads-hidden.json:8:3: must divide hidden_size "
         "(64) when head_dim is absent (got 6)"},
        {BAD "model-kv-heads.json",
         "invalid 'num_key_value_heads' in "
         "tests/data/bad/model-kv-heads.json:9:3: must divide "
         "num_attention_heads (4) (got 3)"},
        {BAD "model-dense-experts.json",
         "invalid 'num_experts' in "
         "tests/data/bad/model-dense-experts.json:12:3: must be 0 for the "
         "dense family llama (got 8)"},
        {BAD "model-schema.json",
         "invalid 'schema' in tests/data/bad/model-schema.json:2:3: must be "
         "one of zsim.model/1 (got 'zsim.model/2')"},
        {BAD "model-family.json",
         "invalid 'family' in tests/data/bad/model-family.json:4:3: must be "
         "one of llama, qwen2, qwen3, mistral, mixtral, qwen3_moe, "
         "qwen2_5_omni, gpt2, opt, gpt_neox, falcon, mpt, bloom, phi, phi3, "
         "gemma, gemma2 (got 'gpt')"},
        {BAD "model-moe-missing.json",
         "missing 'num_experts' in tests/data/bad/model-moe-missing.json: "
         "required for family mixtral, an integer in [1, 512]"},
        {BAD "model-moe-topk.json", "invalid 'experts_per_token' in "
                                    "tests/data/bad/model-moe-topk.json:13:3: "
                                    "must be in [1, num_experts = 4] (got 6)"},
        {BAD "model-extra-placement.json",
         "invalid 'extra.talker.placement' in "
         "tests/data/bad/model-extra-placement.json:14:30: must be one of "
         "sharded, cpu, gpu_full, disabled (got 'gpu')"},
        {BAD "model-extra-type.json",
         "invalid 'extra' in tests/data/bad/model-extra-type.json:12:3: must "
         "be an object (got array)"},
        {BAD "model-hf-unknown-type.json",
         "invalid 'model_type' in "
         "tests/data/bad/model-hf-unknown-type.json:3:3: must be one of llama, "
         "qwen2, qwen3, mistral, mixtral, qwen3_moe, gpt2, opt, gpt_neox, "
         "falcon, mpt, bloom, phi, phi3, gemma, gemma2 (got 'gpt_bigcode')"},
        {BAD "model-hf-string.json",
         "invalid 'num_attention_heads' in "
         "tests/data/bad/model-hf-string.json:7:3: must be an integer in [1, "
         "1024] (got '32')"},
        {BAD "model-hf-missing.json",
         "missing 'hidden_size' in tests/data/bad/model-hf-missing.json: "
         "required, an integer in [1, 65536]"},
        {BAD "model-hf-absurd.json", "invalid 'num_key_value_heads' in "
                                     "tests/data/bad/model-hf-absurd.json:9:3: "
                                     "must be an integer in [1, 1024] (got 0)"},
        {BAD "model-hf-tie.json", "invalid 'tie_word_embeddings' in "
                                  "tests/data/bad/model-hf-tie.json:9:3: must "
                                  "be true or false (got 'no')"},
        {BAD "model-hf-topk.json",
         "invalid 'num_experts_per_tok' in "
         "tests/data/bad/model-hf-topk.json:10:3: must be in [1, "
         "num_local_experts = 8] (got 9)"},
        {BAD "model-hf-sparse-step.json",
         "invalid 'decoder_sparse_step' in "
         "tests/data/bad/model-hf-sparse-step.json:9:3: only 1 is supported "
         "(every layer sparse; zsim models identical layers) (got 2)"},
        {BAD "model-hf-mlp-only.json",
         "invalid 'mlp_only_layers' in "
         "tests/data/bad/model-hf-mlp-only.json:9:3: must be an empty array "
         "(zsim models identical layers) (got a non-empty array)"},
        {BAD "model-hf-kv.json", "invalid 'num_key_value_heads' in "
                                 "tests/data/bad/model-hf-kv.json:9:3: must "
                                 "divide num_attention_heads (32) (got 5)"},
        {BAD "model-hf-act.json",
         "invalid 'hidden_act' in tests/data/bad/model-hf-act.json:7:3: must "
         "be one of silu, gelu, gelu_pytorch_tanh, gelu_new, gelu_fast, relu "
         "(got 'quick_gelu')"},
        {BAD "model-hf-opt-postnorm.json",
         "invalid 'do_layer_norm_before' in "
         "tests/data/bad/model-hf-opt-postnorm.json:4:3: must be true "
         "(post-norm OPT layers, as in opt-350m, are not modelled) (got "
         "false)"},
        {BAD "model-hf-opt-actdrop.json",
         "invalid 'activation_dropout' in "
         "tests/data/bad/model-hf-opt-actdrop.json:3:3: must be 0 (dropout on "
         "the MLP activation is not modelled) (got 0.1)"},
        {BAD "model-hf-opt-proj.json",
         "invalid 'word_embed_proj_dim' in "
         "tests/data/bad/model-hf-opt-proj.json:5:3: must equal hidden_size "
         "(1024): project_in / project_out are not modelled (got 512)"},
        {BAD "model-hf-mpt-attn-type.json",
         "invalid 'attn_config.attn_type' in "
         "tests/data/bad/model-hf-mpt-attn-type.json:6:34: must be one of "
         "multihead_attention (got 'multiquery_attention')"},
        {BAD "model-hf-mpt-bias.json",
         "invalid 'no_bias' in tests/data/bad/model-hf-mpt-bias.json:5:3: "
         "must be true (transformers' MPT builds no biases) (got false)"},
        {BAD "model-hf-phi-qkln.json",
         "invalid 'qk_layernorm' in tests/data/bad/model-hf-phi-qkln.json:5:3: "
         "must be false (per-head q/k LayerNorm is not modelled) (got true)"},
        {BAD "model-hf-gpt2-cross.json",
         "invalid 'add_cross_attention' in "
         "tests/data/bad/model-hf-gpt2-cross.json:3:3: must be false "
         "(cross-attention is not modelled) (got true)"},
        {BAD "model-hf-moe-type.json",
         "invalid 'model_type' in tests/data/bad/model-hf-moe-type.json:2:3: "
         "must be one of llama, qwen2, qwen3, mistral, mixtral, qwen3_moe, "
         "gpt2, opt, gpt_neox, falcon, mpt, bloom, phi, phi3, gemma, gemma2 "
         "(got 'deepseek_v3')"},
        {BAD "model-learned-rows.json",
         "missing 'position_rows' in tests/data/bad/model-learned-rows.json: "
         "required for position_embedding learned, an integer in [1, "
         "16777216]"},
        {BAD "model-nonexistent.json",
         "cannot open 'tests/data/bad/model-nonexistent.json': No such file or "
         "directory"},
        {"qwen-72", "unknown model 'qwen-72' (closest: qwen3-32b, qwen2.5-7b, "
                    "qwen2.5-72b; see 'zsim model list')"},
        {"llama-3-7b", "unknown model 'llama-3-7b' (closest: llama-2-7b, "
                       "llama-3-8b, llama-3-70b; see 'zsim model list')"},
    };
    unsetenv("ZSIM_MODELS");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct zs_model m;
        struct zs_err err = {0, ""};
        int rc = zs_model_resolve(cases[i].name, &m, &err);
        ck_assert_msg(rc == ZS_EINPUT, "%s: rc %d (%s)", cases[i].name, rc,
                      err.msg);
        ck_assert_str_eq(err.msg, cases[i].msg);
    }
}
END_TEST

/* The explicit loaders refuse the other format with the strict reader's
 * message. */
START_TEST(test_loader_kinds)
{
    struct zs_model m;
    struct zs_err err = {0, ""};
    ck_assert_int_eq(
        zs_model_load_zsim_json(GOOD "model-hf-Yi-34B.json", &m, &err),
        ZS_EINPUT);
    ck_assert_str_eq(err.msg, "unknown key '_name_or_path' in "
                              "tests/data/good/model-hf-Yi-34B.json:2:3");
    ck_assert_int_eq(
        zs_model_load_hf_config(GOOD "model-hf-Yi-34B.json", &m, &err), 0);
    ck_assert_int_eq(m.params_total, 34388917248LL);
    ck_assert_int_eq(zs_model_load_hf_config(GOOD "model-tiny.json", &m, &err),
                     ZS_EINPUT);
    ck_assert_str_eq(
        err.msg,
        "missing 'model_type' in tests/data/good/model-tiny.json: required, "
        "one of llama, qwen2, qwen3, mistral, mixtral, qwen3_moe, gpt2, opt, "
        "gpt_neox, falcon, mpt, bloom, phi, phi3, gemma, gemma2");
    ck_assert_int_eq(zs_model_resolve("", &m, &err), ZS_EUSAGE);
}
END_TEST

/* ---- limits ------------------------------------------------------------- */

START_TEST(test_limits)
{
    struct zs_model m;
    struct zs_act_opts o;
    struct zs_loss_bytes lb;
    load_ok("405b", &m);
    /* Largest sequence the CLI accepts, eager: s^2 terms stay finite and
     * saturate instead of overflowing. */
    o = aopts(16777216, ZS_CKPT_NONE, ZS_ATTN_EAGER);
    o.micro_batch = 1024;
    ck_assert(zs_model_act_saved_per_layer(&m, &o) == INT64_MAX);
    ck_assert(zs_model_act_work_bwd(&m, &o) == INT64_MAX);
    zs_model_loss_bytes(&m, &o, &lb);
    ck_assert(lb.peak > 0);
    o = aopts(1, ZS_CKPT_FULL, ZS_ATTN_FLASH);
    ck_assert_int_eq(zs_model_act_saved_per_layer(&m, &o), 2 * 16384);
    ck_assert(zs_model_flops_per_token_fwd(&m, 1) > 2 * 4.0e11);
}
END_TEST

/* Every loader under an allocation-failure loop (STYLE 25). */
START_TEST(test_alloc_failures)
{
    static const char *const inputs[] = {GOOD "model-tiny.json",
                                         GOOD "model-tiny-moe.json",
                                         GOOD "model-hf-Qwen3-30B-A3B.json",
                                         "omni", BAD "model-unknown-key.json",
                                         "tests/data/hf-configs/phi-2.json",
                                         "bloom",
                                         BAD "model-hf-mpt-attn-type.json"};
    unsetenv("ZSIM_MODELS");
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        struct zs_model ref;
        struct zs_err err = {0, ""};
        int want = zs_model_resolve(inputs[i], &ref, &err);
        long n;
        for (n = 1; n < 100000; n++) {
            struct zs_model m;
            int rc;
            zs_alloc_fail_at(n);
            rc = zs_model_resolve(inputs[i], &m, &err);
            if (!zs_alloc_failed()) {
                zs_alloc_fail_at(0);
                ck_assert_int_eq(rc, want);
                if (!rc)
                    ck_assert_int_eq(m.params_total, ref.params_total);
                break;
            }
            ck_assert_msg(rc == ZS_ENOMEM, "%s n=%ld rc=%d msg=%s", inputs[i],
                          n, rc, err.msg);
        }
        zs_alloc_fail_at(0);
        ck_assert_msg(n < 100000, "allocation loop did not terminate");
        ck_assert_msg(n > 1, "%s: no allocation at all?", inputs[i]);
    }
}
END_TEST

Suite *suite_model(void)
{
    Suite *s = suite_create("model");
    TCase *core = tcase_create("core");
    TCase *limits = tcase_create("limits");
    TCase *bad = tcase_create("bad input");
    tcase_add_test(core, test_tiny_params);
    tcase_add_test(core, test_tiny_flops);
    tcase_add_test(core, test_tiny_activations);
    tcase_add_test(core, test_layer_checkpointing);
    tcase_add_test(core, test_chunked_loss);
    tcase_add_test(core, test_chunked_loss_compiled);
    tcase_add_test(core, test_tiny_methods);
    tcase_add_test(core, test_tiny_moe);
    tcase_add_test(core, test_moe_activations);
    tcase_add_test(core, test_hf_published);
    tcase_add_test(core, test_library_reference);
    tcase_add_test(core, test_tiny_neox);
    tcase_add_test(core, test_arch_published);
    tcase_add_test(core, test_attention_check);
    tcase_add_test(core, test_gpt2_activations);
    tcase_add_test(core, test_resolve);
    tcase_add_test(limits, test_limits);
    tcase_add_test(limits, test_alloc_failures);
    tcase_set_timeout(limits, 60);
    tcase_add_test(bad, test_bad_inputs);
    tcase_add_test(bad, test_loader_kinds);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    suite_add_tcase(s, bad);
    return s;
}
