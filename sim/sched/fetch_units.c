/*
 * fetch_units.c — the units a framework fetches, in forward order, with
 * their GPU times.  (Not util/units.c, which parses sizes.)  Times come from
 * the hardware profile: GEMMs at the profile's efficiency for their size,
 * attention at the flash-attention efficiency, everything else memory-bound
 * at HBM bandwidth (hw.h).
 *
 * Backward costs (sources): a linear's backward is two GEMMs of the forward's
 * size (dgrad and wgrad), one when its weight is frozen (LoRA/QLoRA base);
 * flash attention's backward is 2.5x its forward FLOPs (Dao, FlashAttention-2,
 * 2023, §3: the backward recomputes S and P: 5 matmuls vs 2); element-wise
 * work moves about twice the bytes backward [assumption].
 */
#include "sched/kernels.h"
#include "sched/sched_int.h"
#include "util/alloc.h"

#include <stdio.h>
#include <string.h>

static double gemm_ns(const struct zs_bctx *b, double m, double n, double k)
{
    if (m <= 0 || n <= 0 || k <= 0)
        return 0;
    return zs_gpu_gemm_s(&b->node->gpu, m, n, k) * 1e9;
}

static double mem_ns(const struct zs_bctx *b, double bytes)
{
    return zs_gpu_membound_s(&b->node->gpu, bytes) * 1e9;
}

/* Attention core of one layer for this rank's micro-batch, forward, for
 * flash-attn 2, SDPA's flash backend and flash-attn 1's Triton kernel. */
static double attn_fwd_ns(const struct zs_bctx *b)
{
    const struct zs_model *m = b->m;
    const struct zs_gpu *g = &b->node->gpu;
    double s = (double)b->c->seq_len, mb = (double)b->c->micro_batch;
    double sp = (double)b->c->sp, cp = (double)b->c->cp;
    /* flash-attn 2: the fraction of peak measured for this sequence
     * length (the profile's attn_eff_by_seq, forward+backward, causal;
     * hw.h); SDPA's flash backend, which runs FlashAttention-2's kernels
     * since PyTorch 2.2 (PyTorch 2.2 release blog: "scaled_dot_product_
     * attention (SDPA) now supports FlashAttention-2"), at its measured
     * ratio to the package; flash-attn 1's Triton kernel:
     * attn_triton_eff_by_seq (figures.c), flash-attn 1.x CUDA's measured
     * rate.  Before 2.2 SDPA's flash backend is flash-attn 1.x's CUDA
     * kernel (zs_cfg_attention_fa1), charged that rate too. */
    double fl = zs_model_attn_core_flops(m, b->c->seq_len) * mb / sp;
    double eff;
    /* Context parallelism (PyTorch's _templated_ring_attention, load
     * balanced): each rank's two chunks of s / (2 cp) queries meet every
     * key chunk once, a causal diagonal step and cp - 1 non-causal half
     * blocks, so the rank does 1/cp of the causal work, in SDPA calls over
     * s / cp queries; charged the rate measured at that length
     * [assumption: the curves are causal whole-sequence runs]. */
    if (cp > 1) {
        fl /= cp;
        s /= cp;
    }
    eff = zs_cfg_attention_fa1(b->c) ? zs_gpu_attn_triton_eff(g, s)
                 : b->c->attention == ZS_ATTN_SDPA ? zs_gpu_attn_sdpa_eff(g, s)
                                                   : zs_gpu_attn_eff(g, s);
    return fl / (g->peak_bf16_flops * eff) * 1e9;
}

/* HBM bytes of context parallelism's eager tensor ops around the SDPA
 * calls of one layer, forward (fwd) and backward (bwd), t local tokens,
 * C ranks (torch/distributed/tensor/experimental/_attention.py read at
 * 0123248; fp32 merging and load balancing on, _ContextParallelOptions).
 * Charged for the rank that does the most, the last (every step i <= rank:
 * whole-row merges), since each layer's collectives wait for it.  Per
 * element of t x hq (q, out) or t x hkv (one of k, v):
 *  forward: K, V made contiguous (the (b, h, s, d) views are transposes)
 *    2+2 each; torch.cat of K and V for the exchange at each of C - 1
 *    steps, 2+2 each; _SDPAMerger: the first output cast to fp32 2+4, then
 *    per step the block's cast 2+4, out - block_out 4+4+4, the sigmoid
 *    weight times it 4+4, out minus that 4+4+4 (38 B), and the final cast
 *    back 4+2;
 *  backward: fp32 zeros for dq, dk, dv (4 each), K and V contiguous again
 *    and concatenated at C - 1 steps (2+2 each), dk, dv += the step's bf16
 *    gradients (4+2+4) at step 0, at later steps a partial update of the
 *    first chunk (10 B over half the rows) and its torch.cat (4+4), the
 *    fp32 dK dV concatenated for the next rank at every step (4+4), dq +=
 *    the step's gradient (10) at every step, and the final casts of dq and
 *    of dK dV to bf16 (4+2 each).
 * [inference from the code, not measured: under torch.compile these ops
 * are charged as eager too] */
static void cp_merge_bytes(const struct zs_bctx *b, double *fwd, double *bwd)
{
    const struct zs_model *m = b->m;
    double t = (double)b->tokens, C = (double)b->c->cp;
    double hq = (double)(m->n_heads * m->head_dim);
    double kv = (double)(m->n_kv_heads * m->head_dim); /* one of K, V */
    *fwd = *bwd = 0;
    if (C <= 1)
        return;
    *fwd = t * kv * (8 + 8 * (C - 1)) + t * hq * (6 + 38 * (C - 1) + 6);
    *bwd = t * hq * (4 + 10 * C + 6) +
           t * kv * (8 + 8 + 8 * (C - 1) + 20 + 26 * (C - 1) + 16 * C + 12);
}

/* Eager attention of one layer for this rank's micro-batch: QK^T and PV as
 * batched GEMMs over the full square (one torch.matmul each over [b, h, s,
 * d]: one cuBLAS batched kernel, all heads sharing its waves), and the
 * element-wise kernels over the scores that the model's eager code runs
 * (kernels.c zs_kernels_eager_attn: scale, mask, softmax and casts, by
 * family).  Backward: the gradients of PV, dP = dO V^T (the QK^T shape)
 * and dV = P^T dO, then of QK^T, dQ = dS K and dK = dS^T Q (three GEMMs of
 * the PV shape), i.e. twice the forward's FLOPs with nothing recomputed.
 * The GEMM model against flash-attention's "Pytorch" bars: docs/kernels.md
 * "Attention by implementation". */
static void attn_eager(const struct zs_bctx *b, double *fwd_gemm_ns,
                       double *bwd_gemm_ns, struct zs_ew_cost *ew)
{
    const struct zs_model *m = b->m;
    const struct zs_gpu *g = &b->node->gpu;
    double s = (double)b->c->seq_len, mb = (double)b->c->micro_batch;
    double heads = (double)m->n_heads / (double)b->c->sp;
    double hd = (double)m->head_dim;
    double qk = zs_gpu_gemm_batched_s(g, mb * heads, s, s, hd) * 1e9;
    double pv = zs_gpu_gemm_batched_s(g, mb * heads, s, hd, s) * 1e9;
    struct zs_act_opts ao;
    zs_act_opts_of(b, &ao);
    *fwd_gemm_ns = qk + pv;
    *bwd_gemm_ns = qk + 3 * pv;
    zs_kernels_eager_attn(zs_model_eager_code(m), ao.softmax_half,
                          m->attn_dropout > 0, mb * heads * s * s, ew);
}

/* Launches of the attention core, per pass: eager, its GEMMs (2 forward,
 * 4 backward) and element-wise kernels; flash, its kernels (2 forward, 3
 * backward). */
static void attn_launches(const struct zs_bctx *b, int *kf, int *kb)
{
    struct zs_ew_cost ew;
    struct zs_act_opts ao;
    if (b->c->attention != ZS_ATTN_EAGER) {
        *kf = 2;
        *kb = 3;
        return;
    }
    zs_act_opts_of(b, &ao);
    zs_kernels_eager_attn(zs_model_eager_code(b->m), ao.softmax_half,
                          b->m->attn_dropout > 0, 1, &ew);
    *kf = 2 + ew.fwd_launches;
    *kb = 4 + ew.bwd_launches;
}

/* Pieces of a unit's forward or backward, growing as needed (an FSDP2
 * group collects every leaf of a layer).  An allocation failure is kept in
 * err and reported by add_unit; later puts are no-ops. */
struct plist {
    struct zs_piece *p; /* owned, zs_free (plist_release) */
    size_t n, cap;
    int err;
};

static void put(struct plist *l, const struct zs_piece *pc)
{
    if (l->err)
        return;
    if (zs_grow((void **)&l->p, &l->cap, l->n + 1, sizeof *l->p)) {
        l->err = ZS_ENOMEM;
        return;
    }
    l->p[l->n++] = *pc;
}

/* Appends every piece of `from` (the attention core's) to l. */
static void put_all(struct plist *l, const struct plist *from)
{
    for (size_t i = 0; i < from->n; i++)
        put(l, &from->p[i]);
}

static void plist_release(struct plist *l)
{
    zs_free(l->p);
    memset(l, 0, sizeof *l);
}

/* The six lists both unit builders use: a unit's forward and backward
 * pieces, the layer's attention core and its element-wise extras. */
static void plists_release(struct plist *f, struct plist *bw, struct plist *af,
                           struct plist *ab, struct plist *ef,
                           struct plist *eb)
{
    plist_release(f);
    plist_release(bw);
    plist_release(af);
    plist_release(ab);
    plist_release(ef);
    plist_release(eb);
}

/* A GEMM piece of `count` [m x k] x [k x n] products taking `ns` in all. */
static void put_gemm(struct plist *l, double m, double n, double k,
                     double count, double ns)
{
    struct zs_piece p;
    memset(&p, 0, sizeof p);
    p.kind = 0;
    p.m = (int64_t)m;
    p.n = (int64_t)n;
    p.k = (int64_t)k;
    p.count = (int64_t)count;
    p.ns = ns;
    put(l, &p);
}

static void add_gemm(const struct zs_bctx *b, struct plist *l, double m,
                     double n, double k, double count)
{
    if (m <= 0 || n <= 0 || k <= 0 || count <= 0)
        return;
    put_gemm(l, m, n, k, count, count * gemm_ns(b, m, n, k));
}

/* A memory-bound piece moving `bytes` in `ns`. */
static void put_mem(struct plist *l, double bytes, double ns)
{
    struct zs_piece p;
    memset(&p, 0, sizeof p);
    p.kind = 1;
    p.bytes = bytes;
    p.ns = ns;
    put(l, &p);
}

static void add_mem(const struct zs_bctx *b, struct plist *l, double bytes)
{
    if (bytes <= 0)
        return;
    put_mem(l, bytes, mem_ns(b, bytes));
}

/* The forward (bwd false) or backward kernels of an element-wise cost
 * (kernels.c): measured classes at their fractions of the HBM bandwidth. */
static double ew_ns(const struct zs_bctx *b, const struct zs_ew_cost *c,
                    bool bwd)
{
    return zs_ew_time_s(&b->node->gpu, c, bwd) * 1e9;
}

static void add_ew(const struct zs_bctx *b, struct plist *l,
                   const struct zs_ew_cost *c, bool bwd)
{
    double bytes = bwd ? c->bwd_bytes : c->fwd_bytes;
    if (bytes <= 0)
        return;
    put_mem(l, bytes, ew_ns(b, c, bwd));
}

/*
 * Float8 linears (--fp8 tensorwise): torchao's Float8Linear with dynamic
 * tensorwise scaling, as torchtitan's float8 converter installs it
 * (torchtitan/float8.py at 9dec370: convert_to_float8_training with
 * module_filter_fn fqn != "output"; at e7c0cae the same through
 * [float8] filter_fqns = ["output"] and linears whose dims are multiples
 * of 16).  The lm_head is a ZS_LEAF_LM_HEAD and stays bf16.  Per linear
 * (torchao/float8/float8_linear.py at v0.7.0, the torchtitan H100
 * benchmark's eab345c being between v0.7.0 and the next change to it):
 *   forward   input and weight cast to e4m3 with a per-tensor scale from
 *             max(abs(x)) (hp_tensor_to_float8_dynamic), then
 *             torch._scaled_mm [t x in] x [in x out] -> bf16
 *   backward  grad_output cast to e5m2 (NoopFwToFloat8E5M2BwDynamic), then
 *             grad_input = go [t x out] x w [out x in] and
 *             grad_weight = go^T [out x t] x x [t x in], both fp8
 *             (manual_float8_matmul_with_args_in_float8.backward), on the
 *             fp8 input and weight saved by the forward.
 * Cast traffic under torch.compile as torchao's own roofline counts it
 * (torchao/testing/float8/roofline_utils.py at d00ee41ede28,
 * get_tensor_memory_traffic_bytes, dynamic scaling): a max-abs pass reading
 * the bf16 tensor (2 B per element; fused into the producing kernel for
 * the input and grad_output, fuse_with_prev=True, not for the weight),
 * then one cast kernel reading it (2 B) and writing fp8 twice, row- and
 * column-major for the two GEMMs that use it (2 x 1 B), plus one more fp8
 * read that inductor's cast-to-both-layouts kernel does
 * (model_torch_compile_limitations, pytorch/pytorch#130015).  Each max-abs
 * has a second reduction stage, one more small kernel.  With
 * --fp8-all-gather the weight arrives in fp8 from FSDP2's all-gather, cast
 * from the shard before it (fsdp2.c shard_bytes), so the forward casts
 * only the input.
 */
#define FP8_CAST_B (2.0 + 2 * 1.0 + 1.0) /* read bf16, write 2 layouts, #130015 */
#define FP8_AMAX_B 2.0                  /* unfused max(abs(w)) pass */
/* The casts are large single-pass Triton kernels (one per tensor of
 * t x in elements, millions of them), charged at the fraction of HBM
 * bandwidth torchao's roofline gives such kernels:
 * H100_PCT_ACHIEVABLE_MEM_BW = 0.92, "pointwise triton kernels with large
 * inputs, which would hit about 2.2k GBPS on Meta's H100 variant"
 * (roofline_utils.py at d00ee41ede28), not the fitted membound_eff of the
 * many small eager kernels (hw.h ZS_MEMBOUND_EFF) [assumption: 0.92 carried
 * to H100 SXM and H200]. */
#define FP8_CAST_HBM_EFF 0.92

static double cast_ns(const struct zs_bctx *b, double bytes)
{
    double bw = b->node->gpu.hbm_bytes_per_s * FP8_CAST_HBM_EFF;
    return bw > 0 ? bytes / bw * 1e9 : 0;
}

static void add_cast(const struct zs_bctx *b, struct plist *l, double bytes)
{
    if (bytes > 0)
        put_mem(l, bytes, cast_ns(b, bytes));
}

static bool fp8_linear(const struct zs_bctx *b, const struct zs_leaf *l)
{
    return b->c->fp8 == ZS_FP8_TENSORWISE && l->kind == ZS_LEAF_LINEAR &&
           l->in_features % 16 == 0 && l->out_features % 16 == 0;
}

static double gemm_fp8_ns(const struct zs_bctx *b, double m, double n,
                          double k)
{
    return zs_gpu_gemm_fp8_s(&b->node->gpu, m, n, k) * 1e9;
}

/* An fp8 GEMM: its shape, timed at the fp8 ceiling (`schedule export`
 * refuses --fp8: the harness would run it in bf16, cmd_schedule.c). */
static void add_gemm_fp8(const struct zs_bctx *b, struct plist *l, double m,
                         double n, double k)
{
    put_gemm(l, m, n, k, 1, gemm_fp8_ns(b, m, n, k));
}

/* Bytes of the forward's casts of one Float8Linear: the input's, and the
 * weight's unless FSDP2 gathered it in fp8.  `recompute`: the per-op
 * policy's rerun, where the saved max(abs()) results (torchtitan's
 * _save_list keeps aten.max) spare the weight's max-abs pass. */
static double fp8_fwd_cast_bytes(const struct zs_bctx *b,
                                 const struct zs_leaf *l, bool recompute)
{
    double t = (double)b->tokens, w = (double)l->in_features *
                                      (double)l->out_features;
    double bytes = t * (double)l->in_features * FP8_CAST_B;
    if (!b->c->fp8_all_gather)
        bytes += w * (FP8_CAST_B + (recompute ? 0 : FP8_AMAX_B));
    return bytes;
}

static void fp8_linear_pieces(const struct zs_bctx *b, const struct zs_leaf *l,
                              struct plist *f, struct plist *bw, int *kf,
                              int *kb)
{
    double t = (double)b->tokens, in = (double)l->in_features;
    double out = (double)l->out_features;
    add_cast(b, f, fp8_fwd_cast_bytes(b, l, false));
    add_gemm_fp8(b, f, t, out, in);
    add_cast(b, bw, t * out * FP8_CAST_B);
    add_gemm_fp8(b, bw, t, in, out);  /* grad_input */
    add_gemm_fp8(b, bw, out, in, t);  /* grad_weight */
    /* GEMM + input cast and its second max stage; the weight's max, second
     * stage and cast */
    *kf = 3 + (b->c->fp8_all_gather ? 0 : 3);
    *kb = 2 + 2; /* two GEMMs, grad_output cast and its second max stage */
}

/* The model's norms (kernels.c zs_kernels_norm): HF's RMSNorm is unfused
 * eager code under --kernels hf; nn.LayerNorm is one native kernel in eager
 * code and a generated one under compiled. */
static void norm_cost(const struct zs_bctx *b, double elems,
                      struct zs_ew_cost *c)
{
    zs_kernels_norm(b->c->kernels, b->m->norm == ZS_NORM_LAYER, elems, c);
}

/* A LoRA adapter's work beyond the dgrad of its two GEMMs (which the
 * caller copies from forward): the trained adapters' weight gradients,
 * dB = g^T (x A) [out x r, K = tokens] and dA = (g B)^T x [r x in,
 * K = tokens], and its element-wise scale and sums (kernels.c). */
/* The kernel that consumes an adapted linear's output in a decoder layer
 * (kernels.c, "LoRA adapter"): V feeds attention (an extern kernel), as Q
 * and K do when the model has no RoPE; Q and K feed RoPE, O and DOWN the
 * residual add; GATE and UP the MLP activation. */
static enum zs_lora_consumer lora_consumer(const struct zs_bctx *b,
                                           const struct zs_leaf *l)
{
    bool rope = b->m->pos == ZS_POS_ROPE;
    if ((l->role & ZS_ROLE_V) ||
        (!rope && (l->role & (ZS_ROLE_Q | ZS_ROLE_K))))
        return ZS_LORA_TO_EXTERN;
    if (l->role & (ZS_ROLE_GATE | ZS_ROLE_UP))
        return ZS_LORA_TO_SAVED;
    return ZS_LORA_TO_POINTWISE;
}

static void lora_extras(const struct zs_bctx *b, const struct zs_leaf *l,
                        struct plist *f, struct plist *bw, int *kf, int *kb)
{
    double t = (double)b->tokens, r = (double)b->mo.lora_rank;
    double in = (double)l->in_features, out = (double)l->out_features;
    struct zs_ew_cost c;
    add_gemm(b, bw, out, r, t, 1);
    add_gemm(b, bw, r, in, t, 1);
    zs_kernels_lora(b->c->kernels, t, in, out, lora_consumer(b, l),
                    b->c->lora_dropout > 0, &c);
    add_ew(b, f, &c, false);
    add_ew(b, bw, &c, true);
    *kf += c.fwd_launches;
    *kb += 2 + c.bwd_launches;
}

static void leaf_pieces(const struct zs_bctx *b, const struct zs_leaf *l,
                        struct plist *f, struct plist *bw, int *kf, int *kb)
{
    const struct zs_model *m = b->m;
    double t = (double)b->tokens;
    bool frozen = b->mo.method != ZS_METHOD_FULL;
    size_t f0 = f->n;
    int kernels = 1;
    bool adapted = false;
    if (fp8_linear(b, l)) {
        fp8_linear_pieces(b, l, f, bw, kf, kb);
        return;
    }
    switch (l->kind) {
    case ZS_LEAF_LINEAR:
        add_gemm(b, f, t, (double)l->out_features, (double)l->in_features, 1);
        if (b->mo.method ==
            ZS_METHOD_QLORA) /* NF4 -> bf16 dequantise: read 0.5 B, write 2 B */
            add_mem(b, f, (double)l->params * 2.5);
        adapted = frozen && (l->role & b->mo.lora_targets);
        if (adapted) {
            double r = (double)b->mo.lora_rank;
            add_gemm(b, f, t, r, (double)l->in_features, 1);
            add_gemm(b, f, t, (double)l->out_features, r, 1);
            kernels += 2;
        }
        break;
    case ZS_LEAF_EXPERTS: {
        /* gate, up and down of every expert on its share of the tokens:
         * FLOP-equivalent to 3E GEMMs of [me x h] x [h x inter] */
        double e = (double)m->n_experts;
        double me = t * (double)m->experts_per_token / (e > 0 ? e : 1);
        add_gemm(b, f, me, (double)l->out_features, (double)l->in_features,
                 3 * e);
        kernels = (int)(3 * e);
        break;
    }
    case ZS_LEAF_ROUTER:
        add_gemm(b, f, t, (double)l->out_features, (double)l->in_features, 1);
        add_mem(b, f, t * (double)l->out_features * 4 * 2);
        kernels = 3;
        break;
    case ZS_LEAF_EMBED:
        add_mem(b, f, t * (double)m->hidden * 2 * 2);
        break;
    case ZS_LEAF_NORM: {
        /* per kernel mode (kernels.c): HF eager RMSNorm 36 B/elem fwd, 70
         * bwd; nn.LayerNorm one native kernel in every mode.  Per element
         * of its width (out_features): a LayerNorm's bias adds parameters,
         * not activation traffic */
        struct zs_ew_cost c;
        norm_cost(b, t * (double)l->out_features, &c);
        add_ew(b, f, &c, false);
        add_ew(b, bw, &c, true);
        *kf = c.fwd_launches;
        *kb = c.bwd_launches;
        return;
    }
    case ZS_LEAF_LM_HEAD: {
        /* cross-entropy per kernel mode (kernels.c); the lm_head GEMM's
         * dgrad and wgrad backward, then the loss's own backward */
        /* flash-attn's fused cross-entropy (--loss flash-xentropy, model.c
         * loss_fused_whole) is one kernel each way over the bf16 logits,
         * row statistics in registers: the traffic kernels.c charges a
         * compiled loss (reads 2 + 2 forward, reads 2 writes 2 backward)
         * [assumption: two passes over a row in forward, as inductor's] */
        struct zs_ew_cost c;
        zs_kernels_loss(b->c->loss == ZS_LOSS_FLASH_XENTROPY
                            ? ZS_KERNELS_COMPILED
                            : zs_cfg_loss_kernels(b->c),
                        t * (double)m->vocab, &c);
        add_gemm(b, f, t, (double)m->vocab, (double)m->hidden, 1);
        add_ew(b, f, &c, false);
        add_ew(b, bw, &c, true);
        add_gemm(b, bw, t, (double)m->vocab, (double)m->hidden, frozen ? 1 : 2);
        *kf = 1 + c.fwd_launches;
        *kb = (frozen ? 1 : 2) + c.bwd_launches;
        return;
    }
    }
    /* backward: dgrad costs what the forward did; wgrad only for trained
     * weights (the same pieces again) */
    for (size_t i = f0; i < f->n; i++)
        put(bw, &f->p[i]);
    if (!frozen) /* (norms returned above) */
        for (size_t i = f0; i < f->n; i++)
            put(bw, &f->p[i]);
    *kf = kernels;
    *kb = 2 * kernels;
    if (adapted)
        lora_extras(b, l, f, bw, kf, kb);
}

/* torchtitan's models apply RoPE in complex arithmetic (view_as_complex,
 * kernels.c), at the benchmarks' commit and still at its HEAD
 * (torchtitan/models/common/rope.py). */
static int rope_complex(const struct zs_bctx *b)
{
    return b->c->trainer == ZS_TRAINER_TORCHTITAN;
}

/* Per-layer work outside any leaf's GEMM: the attention core (charged to the
 * o_proj unit, which consumes its output; exported as the FLOP-equivalent
 * GEMMs [s x hd] x [hd x s/2] and [s x s/2] x [s/2 x hd] per head, causal,
 * and for eager attention a memory-bound piece for its kernels over the
 * scores) and element-wise kernels (RoPE, SiLU*mul, residual adds; charged
 * to the layer's last unit). */
static void layer_extras(const struct zs_bctx *b, struct plist *af,
                         struct plist *ab, struct plist *ef, struct plist *eb)
{
    const struct zs_model *m = b->m;
    double t = (double)b->tokens;
    double hq = (double)(m->n_heads * m->head_dim);
    double hkv = (double)(m->n_kv_heads * m->head_dim);
    double inter = m->n_experts
                       ? (double)(m->moe_intermediate * m->experts_per_token)
                       : (double)m->intermediate;
    struct zs_kernel_dims kd = {t, (double)m->hidden, hq, hkv, inter,
                                m->pos == ZS_POS_ROPE,
                                m->mlp == ZS_MLP_PLAIN, rope_complex(b)};
    struct zs_ew_cost ew;
    double s = (double)b->c->seq_len, mb = (double)b->c->micro_batch;
    double heads = (double)m->n_heads / (double)b->c->sp;
    bool eager = b->c->attention == ZS_ATTN_EAGER;
    double afn = 0, abn = 0;
    struct zs_ew_cost ea;
    struct zs_piece p;
    memset(&ea, 0, sizeof ea);
    if (eager) {
        attn_eager(b, &afn, &abn, &ea);
    } else {
        /* flash: FA2's backward is 2.5x its forward (file comment) */
        afn = attn_fwd_ns(b);
        abn = 2.5 * afn;
    }
    memset(&p, 0, sizeof p);
    p.kind = 0;
    /* context parallel: s / cp queries per rank against every key */
    p.m = (int64_t)(s / (b->c->cp > 1 ? (double)b->c->cp : 1));
    p.n = (int64_t)(s / 2 > 1 ? s / 2 : 1);
    p.k = m->head_dim;
    p.count = (int64_t)(2 * mb * heads);
    p.ns = afn;
    put(af, &p);
    p.count = (int64_t)((eager ? 4 : 5) * mb * heads);
    p.ns = abn;
    put(ab, &p);
    add_mem(b, af, ea.fwd_bytes);
    add_mem(b, ab, ea.bwd_bytes);
    {
        double cf, cb;
        cp_merge_bytes(b, &cf, &cb);
        add_mem(b, af, cf);
        add_mem(b, ab, cb);
    }
    zs_kernels_layer(b->c->kernels, &kd, &ew);
    add_ew(b, ef, &ew, false);
    add_ew(b, eb, &ew, true);
}

/* Launches of layer_extras' element-wise kernels, per pass. */
static void layer_extra_launches(const struct zs_bctx *b, int *kf, int *kb)
{
    struct zs_kernel_dims kd = {1, 1, 1, 1, 1, b->m->pos == ZS_POS_ROPE,
                                b->m->mlp == ZS_MLP_PLAIN, rope_complex(b)};
    struct zs_ew_cost ew;
    zs_kernels_layer(b->c->kernels, &kd, &ew);
    *kf = ew.fwd_launches;
    *kb = ew.bwd_launches;
}

static int add_unit(struct zs_bctx *b, struct zs_unit *u, const struct plist *f,
                    const struct plist *bw)
{
    size_t cap = (size_t)b->cap_units, pcap = b->cap_pieces;
    if (f->err || bw->err)
        return f->err ? f->err : bw->err;
    if (b->npieces + f->n + bw->n > INT32_MAX)
        return ZS_ELIMIT;
    if (zs_grow((void **)&b->units, &cap, (size_t)b->nunits + 1,
                sizeof *b->units))
        return ZS_ENOMEM;
    b->cap_units = (int)cap;
    if (zs_grow((void **)&b->pieces, &pcap, b->npieces + f->n + bw->n,
                sizeof *b->pieces))
        return ZS_ENOMEM;
    b->cap_pieces = pcap;
    u->piece_off = (int)b->npieces;
    u->npf = (int)f->n;
    u->npb = (int)bw->n;
    u->fwd_ns = u->bwd_ns = 0;
    for (size_t i = 0; i < f->n; i++) {
        b->pieces[b->npieces++] = f->p[i];
        u->fwd_ns += f->p[i].ns;
    }
    for (size_t i = 0; i < bw->n; i++) {
        b->pieces[b->npieces++] = bw->p[i];
        u->bwd_ns += bw->p[i].ns;
    }
    b->units[b->nunits++] = *u;
    return 0;
}

static void fill_leaf_unit(struct zs_bctx *b, struct zs_unit *u,
                           const struct zs_leaf *l, int layer)
{
    int64_t w = b->c->world;
    memset(u, 0, sizeof *u);
    u->leaf = l;
    u->layer = layer;
    u->params = l->params;
    /* a tied lm_head gathers the embedding's weight again (ZeRO-3 fetches
     * a module's parameters, shared ones included) */
    u->gather_bytes = zs_leaf_weight_bytes(l, &b->mo) + 2 * l->tied_params;
    u->trainable = zs_leaf_trainable(l, &b->mo);
    if (b->mo.method != ZS_METHOD_FULL) {
        /* LoRA adapters are gathered with their base module (they are its
         * children and fetched in the same hook sequence) */
        u->params += u->trainable;
        u->gather_bytes += u->trainable * 2;
    }
    if (b->mo.method == ZS_METHOD_QLORA &&
        (l->kind == ZS_LEAF_LINEAR || l->kind == ZS_LEAF_ROUTER ||
         l->kind == ZS_LEAF_EXPERTS)) {
        /* the weights zs_leaf_weight_bytes quantises; the rest of the leaf
         * (biases) stays bf16 */
        u->nf4_elems = l->in_features * l->out_features *
                       (l->kind == ZS_LEAF_EXPERTS ? l->n_tensors : 1);
        u->nf4_bytes =
            zs_leaf_weight_bytes(l, &b->mo) - 2 * (l->params - u->nf4_elems);
    }
    /* FSDP2 all-gathers a Float8Linear's weight in fp8 (fsdp2.c) */
    if (b->c->fp8_all_gather && fp8_linear(b, l))
        u->fp8_elems = l->in_features * l->out_features;
    u->part_elems = (u->params + w - 1) / w;
    u->n_tensors =
        l->n_tensors + (u->trainable && b->mo.method != ZS_METHOD_FULL ? 2 : 0);
    /* stage3_param_persistence_threshold: params with ds_numel <= threshold
     * stay gathered (partition_parameters.py; mechanics §1 "Persistence") */
    u->persistent = b->c->framework == ZS_FW_DEEPSPEED && b->c->zero == 3 &&
                    l->params + l->tied_params <=
                        b->c->param_persistence_threshold;
}

/* One linear's forward rerun by the per-op policy: its GEMM, and for a
 * Float8Linear the casts without the saved max-abs passes. */
static double linear_recompute_ns(const struct zs_bctx *b,
                                  const struct zs_leaf *l)
{
    double t = (double)b->tokens;
    double in = (double)l->in_features, out = (double)l->out_features;
    if (!fp8_linear(b, l))
        return gemm_ns(b, t, out, in);
    return gemm_fp8_ns(b, t, out, in) +
           cast_ns(b, fp8_fwd_cast_bytes(b, l, true));
}

/* Checkpointing "op" (model.h): a block's backward first recomputes what
 * the per-op policy did not save: the skipped matmuls (wk, wo, w3 = the K,
 * O and UP projections) and the element-wise kernels (norms, RoPE, SiLU,
 * product); attention and the other matmuls are not rerun. */
static double op_recompute_ns(const struct zs_bctx *b, const struct plist *ef)
{
    const struct zs_model *m = b->m;
    double t = (double)b->tokens, ns = ef->n ? ef->p[0].ns : 0;
    for (int i = 0; i < m->n_layer_leaves; i++) {
        const struct zs_leaf *l = &m->layer[i];
        if (l->kind == ZS_LEAF_LINEAR && (l->role & (ZS_ROLE_K | ZS_ROLE_O | ZS_ROLE_UP)))
            ns += linear_recompute_ns(b, l);
        else if (l->kind == ZS_LEAF_NORM) {
            struct zs_ew_cost c;
            norm_cost(b, t * (double)l->out_features, &c);
            ns += ew_ns(b, &c, false);
        }
    }
    return ns;
}

/* Starts a build: no units yet, the layer's extra pieces (activations,
 * element-wise kernels) and the per-op recompute time.  ZS_ENOMEM when a
 * list could not grow. */
static int build_begin(struct zs_bctx *b, struct plist *af, struct plist *ab,
                       struct plist *ef, struct plist *eb)
{
    b->nunits = 0;
    b->npieces = 0;
    layer_extras(b, af, ab, ef, eb);
    if (af->err || ab->err || ef->err || eb->err)
        return ZS_ENOMEM;
    b->op_recompute_ns = op_recompute_ns(b, ef);
    return 0;
}

int zs_units_build_leaves(struct zs_bctx *b)
{
    const struct zs_model *m = b->m;
    struct zs_unit u;
    struct plist f = {0}, bw = {0}, af = {0}, ab = {0}, ef = {0}, eb = {0};
    int rc = 0;
    rc = build_begin(b, &af, &ab, &ef, &eb);
    if (rc)
        goto out;
    for (int i = 0; i < m->n_pre; i++) {
        f.n = bw.n = 0;
        fill_leaf_unit(b, &u, &m->pre[i], -1);
        leaf_pieces(b, &m->pre[i], &f, &bw, &u.kernels_fwd, &u.kernels_bwd);
        if ((rc = add_unit(b, &u, &f, &bw)))
            goto out;
    }
    for (int layer = 0; layer < m->n_layers; layer++) {
        int o = m->n_layer_leaves - 1;
        for (int i = 0; i < m->n_layer_leaves; i++)
            if (m->layer[i].role & ZS_ROLE_O)
                o = i;
        for (int i = 0; i < m->n_layer_leaves; i++) {
            f.n = bw.n = 0;
            fill_leaf_unit(b, &u, &m->layer[i], layer);
            u.first_of_layer = i == 0;
            u.last_of_layer = i == m->n_layer_leaves - 1;
            if (i == o) { /* attention runs just before o_proj */
                u.has_attn = true;
                put_all(&f, &af);
                put_all(&bw, &ab);
            }
            leaf_pieces(b, &m->layer[i], &f, &bw, &u.kernels_fwd,
                        &u.kernels_bwd);
            if (i == o) {
                int akf, akb;
                attn_launches(b, &akf, &akb);
                u.kernels_fwd += akf;
                u.kernels_bwd += akb;
            }
            if (u.last_of_layer) {
                int ekf, ekb;
                layer_extra_launches(b, &ekf, &ekb);
                put(&f, &ef.p[0]);
                put(&bw, &eb.p[0]);
                u.kernels_fwd += ekf;
                u.kernels_bwd += ekb;
            }
            if ((rc = add_unit(b, &u, &f, &bw)))
                goto out;
        }
    }
    for (int i = 0; i < m->n_post; i++) {
        f.n = bw.n = 0;
        fill_leaf_unit(b, &u, &m->post[i], -1);
        leaf_pieces(b, &m->post[i], &f, &bw, &u.kernels_fwd, &u.kernels_bwd);
        if ((rc = add_unit(b, &u, &f, &bw)))
            goto out;
    }
out:
    plists_release(&f, &bw, &af, &ab, &ef, &eb);
    return rc;
}

/* FSDP2: one group per decoder layer (fully_shard per block, the common
 * recipe: torchtitan, Accelerate's transformer auto-wrap) and the root group
 * (embedding, final norm, lm_head), gathered once for the whole micro-step. */
static void group_add_leaf(struct zs_bctx *b, struct zs_unit *g,
                           const struct zs_leaf *l, int layer, struct plist *f,
                           struct plist *bw)
{
    struct zs_unit leafu;
    int kf, kb;
    fill_leaf_unit(b, &leafu, l, layer);
    leaf_pieces(b, l, f, bw, &kf, &kb);
    g->params += leafu.params;
    g->gather_bytes += leafu.gather_bytes;
    g->nf4_elems += leafu.nf4_elems;
    g->nf4_bytes += leafu.nf4_bytes;
    g->fp8_elems += leafu.fp8_elems;
    g->trainable += leafu.trainable;
    g->n_tensors += leafu.n_tensors;
    g->kernels_fwd += kf;
    g->kernels_bwd += kb;
}

int zs_units_build_groups(struct zs_bctx *b)
{
    const struct zs_model *m = b->m;
    int64_t w = zs_cfg_shard_world(b->c); /* 1 without sharding */
    struct zs_unit g;
    struct plist f = {0}, bw = {0}, af = {0}, ab = {0}, ef = {0}, eb = {0};
    int rc = 0;
    rc = build_begin(b, &af, &ab, &ef, &eb);
    if (rc)
        goto out;
    memset(&g, 0, sizeof g);
    g.layer = -1;
    for (int i = 0; i < m->n_pre + m->n_post; i++)
        group_add_leaf(b, &g,
                       i < m->n_pre ? &m->pre[i] : &m->post[i - m->n_pre], -1,
                       &f, &bw);
    g.part_elems = (g.params + w - 1) / w;
    if ((rc = add_unit(b, &g, &f, &bw)))
        goto out;
    for (int layer = 0; layer < m->n_layers; layer++) {
        memset(&g, 0, sizeof g);
        g.layer = layer;
        f.n = bw.n = 0;
        put_all(&f, &af);
        put_all(&bw, &ab);
        for (int i = 0; i < m->n_layer_leaves; i++)
            group_add_leaf(b, &g, &m->layer[i], layer, &f, &bw);
        put(&f, &ef.p[0]);
        put(&bw, &eb.p[0]);
        {
            int ekf, ekb, akf, akb;
            layer_extra_launches(b, &ekf, &ekb);
            attn_launches(b, &akf, &akb);
            g.kernels_fwd += akf + ekf;
            g.kernels_bwd += akb + ekb;
        }
        g.part_elems = (g.params + w - 1) / w;
        g.first_of_layer = g.last_of_layer = true;
        g.has_attn = true;
        if ((rc = add_unit(b, &g, &f, &bw)))
            goto out;
    }
out:
    plists_release(&f, &bw, &af, &ab, &ef, &eb);
    return rc;
}

const char *zs_unit_name(const struct zs_bctx *b, int unit, char *buf,
                         size_t cap)
{
    const struct zs_unit *u;
    if (unit < 0 || unit >= b->nunits) {
        snprintf(buf, cap, "-");
        return buf;
    }
    u = &b->units[unit];
    if (!u->leaf)
        snprintf(buf, cap,
                 u->layer < 0 ? "root (embed, norm, lm_head)" : "layers.%d",
                 u->layer);
    else if (u->layer >= 0)
        snprintf(buf, cap, "layers.%d.%s", u->layer, u->leaf->name);
    else
        snprintf(buf, cap, "%s", u->leaf->name);
    return buf;
}
