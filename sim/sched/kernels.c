/*
 * kernels.c — the element-wise and norm kernels of one decoder layer and of
 * the loss, per kernel mode (--kernels hf|fused|compiled): HBM bytes moved
 * per element, kernel launches, forward and backward, and the measured
 * fraction of the HBM bandwidth each kernel class reaches ("Achieved
 * bandwidth" below).
 *
 * HF eager counts are read from transformers at commit
 * 63bb723747035466e5339aea864b133f709b067d,
 * src/transformers/models/qwen2/modeling_qwen2.py (Llama, Qwen2, Qwen3 and
 * Mistral share these functions):
 *   Qwen2RMSNorm.forward: x.to(float32); pow(2); mean(-1); + eps; rsqrt;
 *     x * rsqrt; .to(input_dtype); weight * x            (8 launches)
 *   apply_rotary_pos_emb: q * cos + rotate_half(q) * sin, same for k, with
 *     rotate_half = cat(-x2, x1)                         (5 launches each)
 *   Qwen2MLP.forward: down_proj(act_fn(gate) * up)       (silu, mul)
 *   Qwen2DecoderLayer.forward: two residual adds.
 * q/k/v ".view(...).transpose(1, 2)" are views; flash-attn 2 and SDPA take
 * them without a copy (the rotated q/k come out contiguous in the
 * transposed layout, whose last dim has stride 1), so no transpose kernel
 * is charged.
 *
 * Bytes per element, bf16 activations (2 B), fp32 temporaries (4 B); a
 * kernel reading n inputs and writing one output moves the sum of their
 * sizes.  Per-row scalars (mean, rsqrt) and broadcast operands that stay in
 * L2 (the RMSNorm weight; cos/sin of [b, 1, s, d], 1 MiB at s=4096, d=128,
 * re-read per head from a 50 MB L2) are not charged [assumption: L2 hits].
 *
 *  RMSNorm fwd, HF: to-fp32 2+4, pow 4+4, mean 4, x*rsqrt 4+4, to-bf16 4+2,
 *    weight* 2+2 = 36 B.
 *  RMSNorm bwd, HF (autograd of those ops): weight-mul dgrad 2+2 and wgrad
 *    product 2+2(bf16 then summed); to-bf16 bwd 2+4; x*r: dx 4+4, dr =
 *    sum(g*x) 4+4+4+4; pow bwd 4+4+4; sum of the two dx 4+4+4; to-fp32 bwd
 *    4+2 = 70 B (12 launches).
 *  RoPE fwd, HF, per element of q and k: neg of half 0.5*(2+2), cat 2+2,
 *    *cos 2+2, *sin 2+2, add 2+2+2 = 20 B.
 *  RoPE bwd, HF: *cos and *sin dgrads 2+2 each, neg bwd 0.5*(2+2), two
 *    slice_backward (zero-filled full tensor, half copied in) 2+2 each, two
 *    adds of the three incoming grads 2+2+2 each = 30 B (8 launches per
 *    tensor).
 *  SwiGLU fwd, HF, per intermediate element: silu 2+2, mul 2+2+2 = 10 B;
 *    bwd: mul dgrads (g*u, g*silu(a)) 2+2+2 each, silu bwd 2+2+2 = 18 B.
 *  Residual adds: fwd 2+2+2 each; bwd the two branch gradients summed
 *    2+2+2 each = 12 B per hidden element both ways, every mode.
 * Fused (Liger-Kernel, linkedin/Liger-Kernel src/liger_kernel/ops/
 * rms_norm.py, rope.py, swiglu.py; Apex FusedRMSNorm the same traffic): one
 *   kernel reads its inputs once and writes its outputs once:
 *   RMSNorm fwd 2+2 = 4 B, bwd dy, x, dx 2+2+2 = 6 B; RoPE in place on q and
 *   k, 2+2 fwd and bwd, one launch for both; SwiGLU fwd a, u, out 6 B, bwd
 *   dc, a, u, da, du 10 B (silu recomputed in backward).
 * Compiled (torch.compile, inductor): each element-wise region becomes one
 *   generated kernel with the same once-in once-out traffic as the fused
 *   kernels [assumption: inductor fuses each norm, the RoPE of q and k and
 *   the SiLU*mul into one pointwise/reduction kernel each; it does not fuse
 *   across the GEMMs, which stay cuBLAS calls].  What the count misses (the
 *   norm backward's second kernel for the weight gradient) is in the
 *   measured fraction below.  In a whole compiled block inductor may also
 *   fuse a residual add into the next norm, saving about 2 B forward and
 *   6 B backward per hidden element; not modelled (8 ms of a 2.2 s
 *   Llama-3-8B step on 8 H100, docs/kernels.md).
 * Loss, per logit (tokens x vocab):
 *   HF: ForCausalLMLoss upcast 2+4 and log_softmax 4+4 = 14 B fwd (model.c
 *   zs_model_loss_bytes lists the buffers); bwd nll grad fill 4,
 *   log_softmax bwd 4+4+4, cast to bf16 4+2 = 22 B.
 *   Fused (Liger fused linear cross-entropy, ops/fused_linear_cross_entropy
 *   .py): logits are produced chunk by chunk in bf16, the CE kernel reads a
 *   chunk and writes its gradient in place 2+2 = 4 B fwd, 0 bwd (the
 *   gradient is computed during forward); the full logits never exist.
 *   Compiled: inductor fuses upcast, log_softmax and gather into one
 *   reduction over bf16 logits (two passes, 2+2 = 4 B) and the backward into
 *   one kernel (read 2, write 2) [assumption: same fusion as above].
 * torchtitan's RoPE (rope_complex), torchtitan/models/llama/model.py:87-113
 *   at 9dec370ad26b5f8e9a7333a0e36165018262644b: xq_ = view_as_complex(
 *   xq.float().reshape(..., -1, 2)); view_as_real(xq_ * freqs_cis)
 *   .flatten(3).type_as(xq), the same for xk.  Per element of q and k,
 *   forward: float() 2+4, the complex64 multiply 4+4 (freqs_cis broadcast,
 *   L2), type_as 4+2 = 20 B, 3 launches per tensor; backward: type_as's
 *   grad 2+4, grad * conj(freqs) 4+4 (freqs_cis is a buffer: no grad, and
 *   the multiply saves only freqs), float()'s grad 4+2 = 20 B, 3 launches.
 *   torch.compile does not fuse it: inductor has no code generation for
 *   complex operators and falls back to the eager kernels ("Torchinductor
 *   does not support code generation for complex operators. Performance
 *   may be worse than eager." from torch/_inductor/lowering.py, reported on
 *   this very RoPE in pytorch/torchtitan issue #15, open; PyTorch's complex
 *   compilation is an opt-in experiment from 2.14, after these runs), and
 *   the casts around it border the extern GEMMs and that fallback, so they
 *   stay separate kernels: 20 / 20 B in every mode [assumption: inductor
 *   keeps each cast as one kernel; Liger does not patch torchtitan].
 * LoRA adapter (zs_kernels_lora), per token, from torchtune's
 *   LoRALinear.forward (torchtune/modules/peft/lora.py:112-131 at
 *   1814feb17a9038e1a8053ce93111bd26774a8db6, the same at 0031bfb):
 *     out = F.linear(x, weight); lora_out = lora_a(dropout(x));
 *     lora_out = (alpha / rank) * lora_b(lora_out); return out + lora_out
 *   (PEFT's lora.Linear.forward is the same sum: result + lora_B(lora_A(
 *   dropout(x))) * scaling; dropout 0 is nn.Identity, no kernel; p > 0 is
 *   one native_dropout per adapted linear, on its own copy of the input,
 *   5 B per input element each way).  All of it runs at the contiguous
 *   element-wise class's fraction below.
 *   Forward, per output element: HF/fused (Liger has no LoRA kernel) the
 *   scale 2+2 and the add 2+2+2 = 10 B, 2 launches; compiled one pointwise
 *   kernel reading both GEMM outputs and writing the sum, 2+2+2 = 6 B.
 *   Backward: the scale's gradient 2+2 = 4 B per output element (the add
 *   passes its gradient through), and x's gradient gets one more addend
 *   (the adapter's dgrad beside the base's): eager one more accumulate,
 *   2+2+2 = 6 B per input element (autograd's InputBuffer sums each
 *   arriving gradient); compiled one more operand read by the fused sum,
 *   2 B [assumption: inductor sums the dgrads in one pointwise kernel and
 *   cannot fold the scale into the cuBLAS GEMMs]; 2 launches either way.
 *   Compiled, the sum is a pointwise node that inductor's scheduler fuses
 *   into its pointwise consumer when there is one (torch/_inductor/
 *   scheduler.py, Scheduler.fuse_nodes / score_fusion: producer-consumer
 *   fusions ranked by the memory operations they save; PyTorch 2, Ansel et
 *   al., ASPLOS 2024, "TorchInductor"), so it costs no kernel of its own:
 *   Q and K feed RoPE, O and DOWN the residual add, which read lora_b's
 *   output as one more operand (2 B per output element); GATE and UP feed
 *   the MLP activation, whose backward needs the summed input, so the
 *   fused kernel also writes the sum (2 + 2 = 4 B); V (and Q, K without
 *   RoPE) feeds attention, an extern kernel, and keeps its own 6 B kernel.
 *   In backward the scale of the output gradient becomes one more output
 *   of the kernel producing that gradient (2 B, one launch fewer).
 *   [assumption: the fusions are inductor's rule applied to torchtune's
 *   and PEFT's graphs, not read off a generated kernel trace]
 */
#include "sched/kernels.h"

#include <stdbool.h>
#include <string.h>

/*
 * Achieved bandwidth, measured.  Each kernel class runs at a fraction of the
 * profile's datasheet HBM bandwidth, per --kernels mode and pass, on the
 * bytes counted above; the fraction so also carries what the count misses
 * (a second pass over a row, the weight gradient's reduction over the
 * rows, strided or broadcast reads).  Measured by Liger-Kernel's benchmarks
 * (linkedin/Liger-Kernel benchmark/data/: h100_all_benchmark_data.csv at
 * 3534d4461ca8, "NVIDIA H100 NVL", and a100_all_benchmark_data.csv at
 * bdbfeadf9987, "NVIDIA A100 80GB PCIe", both Liger 0.5.2, January 2025;
 * all_benchmark_data.csv at 2120862ba532, the "NVIDIA A100-SXM4-80GB" rows
 * of 0.2.1 and "NVIDIA H100 80GB HBM3" rows; benchmark/scripts/ at those
 * commits): provider huggingface (transformers' eager module) is hf,
 * liger is fused, torchcompile (the module alone under torch.compile) is
 * compiled; the median of triton.testing.do_bench (L2 flushed before each
 * call) at a step's per-GPU sizes (33.5M elements for the norms, RoPE over
 * 8192 tokens of hidden 8192, 16384 x 131072 logits), divided by the GPU's
 * datasheet bandwidth (H100 NVL 3.9 TB/s, A100 80GB PCIe 1.935 TB/s, A100
 * SXM 2.039, H100 SXM 3.35); the mean over the GPUs measured
 * (scripts/liger-fractions.py; each GPU's in docs/kernels.md, where the
 * H100 NVL's eager classes sit 10-20 % below the A100s').  Where the
 * benchmark's code moves other bytes than a bf16 model's (its RMSNorm
 * weight is fp32, so the output is fp32 and autograd casts dy; the compiled
 * module's tangents are made contiguous at the graph boundary; fp32 logits
 * and LayerNorm inputs), the measured time is scaled by the ratio of the
 * bytes the two move, counted op by op (docs/kernels.md).
 *   contiguous element-wise: relu(x)**2 eager, bf16, 4096 x 16384, H100
 *     SXM: 0.86 forward (8 B), 0.89 backward (20 B); Liger's 0.85.  Used
 *     for residual adds, casts, a plain activation and HF's SwiGLU (gate
 *     and up are two contiguous GEMM outputs) in every mode, and for the
 *     compiled SwiGLU [assumption: no isolated measurement of it].
 *   SwiGLU fused: Liger's kernel (its Megatron wrapper, 8192 tokens x
 *     32768, H100 SXM) 0.91 / 0.69; eager on Megatron's chunked halves, a
 *     strided layout, runs at 0.54.
 *   RMSNorm: hf 0.61 / 0.53 (its backward moves 92 B against the 70
 *     counted: pow's backward is three kernels, x.pow(1) being a copy, and
 *     mean's backward expands and divides); fused 0.65 / 0.44 (one program
 *     per SM walking its rows); compiled 0.71 / 0.40 (inductor's backward
 *     is a row reduction for dx and a split column reduction for the
 *     weight gradient that reads dy and x again: 10 B against the 6
 *     counted).
 *   LayerNorm (nn.LayerNorm: native under hf and fused, generated under
 *     compiled): 0.52 / 0.35, compiled 0.78 / 0.42 (the backward includes
 *     the gamma and beta reduction's second pass).
 *   RoPE: hf 0.40 / 0.50 (q and k are transposed views, cos and sin are
 *     broadcast over the heads), fused 0.82 / 0.82 (in place, in the
 *     physical layout), compiled 0.40 / 0.35.
 *   loss: hf 0.54 / 0.71 (log_softmax over rows of 128k reads them three
 *     times; the casts at the contiguous rate), fused 0.58 (two passes and
 *     the gradient written in place: 6 B against the 4 counted), compiled
 *     0.81 / 0.46.
 * torchtitan's complex RoPE: its casts at the contiguous rate, the complex
 * multiply by the broadcast freqs_cis at the eager RoPE's [assumption].
 * LoRA's scale, sums and dropout are contiguous element-wise kernels too.
 * The rest of the memory-bound work (FSDP and ZeRO copies, the optimizer,
 * eager attention's kernels over the scores, the embedding) keeps the
 * fitted membound_eff (hw.h ZS_MEMBOUND_EFF).
 *
 * Rows are the classes, columns hf, fused, compiled; forward then backward.
 */
static const double k_frac[ZS_EW_NCLASS][3][2] = {
    [ZS_EW_CONTIG] = {{0.86, 0.89}, {0.86, 0.89}, {0.86, 0.89}},
    [ZS_EW_SWIGLU] = {{0.86, 0.89}, {0.91, 0.69}, {0.86, 0.89}},
    [ZS_EW_RMSNORM] = {{0.61, 0.53}, {0.65, 0.44}, {0.71, 0.40}},
    [ZS_EW_LAYERNORM] = {{0.52, 0.35}, {0.52, 0.35}, {0.78, 0.42}},
    [ZS_EW_ROPE] = {{0.40, 0.50}, {0.82, 0.82}, {0.40, 0.35}},
    [ZS_EW_LOSS] = {{0.54, 0.71}, {0.58, 0.58}, {0.81, 0.46}},
};

double zs_kernels_hbm_frac(enum zs_ew_class k, int mode, bool bwd)
{
    if ((int)k < 0 || k >= ZS_EW_NCLASS || mode < 0 || mode > 2)
        return 0;
    return k_frac[k][mode][bwd ? 1 : 0];
}

/* Adds `bytes` of class k under `mode` to the forward or backward. */
static void add_part(struct zs_ew_cost *c, enum zs_ew_class k, int mode,
                     bool bwd, double bytes)
{
    double f = zs_kernels_hbm_frac(k, mode, bwd);
    if (!(bytes > 0))
        return;
    if (bwd) {
        c->bwd_bytes += bytes;
        c->bwd_bw_bytes += f > 0 ? bytes / f : 0;
    } else {
        c->fwd_bytes += bytes;
        c->fwd_bw_bytes += f > 0 ? bytes / f : 0;
    }
}

static void add_both(struct zs_ew_cost *c, enum zs_ew_class k, int mode,
                     double fwd, double bwd)
{
    add_part(c, k, mode, false, fwd);
    add_part(c, k, mode, true, bwd);
}

double zs_ew_time_s(const struct zs_gpu *g, const struct zs_ew_cost *c,
                    bool bwd)
{
    double bw_bytes = bwd ? c->bwd_bw_bytes : c->fwd_bw_bytes;
    double bytes = bwd ? c->bwd_bytes : c->fwd_bytes;
    if (!(bw_bytes > 0))
        return zs_gpu_membound_s(g, bytes);
    return g->hbm_bytes_per_s > 0 ? bw_bytes / g->hbm_bytes_per_s : 0;
}

void zs_kernels_layer(int mode, const struct zs_kernel_dims *d,
                      struct zs_ew_cost *out)
{
    double rope = d->rope ? d->tokens * (d->q_dim + d->k_dim) : 0;
    double mlp = d->tokens * d->inter;
    double res = d->tokens * d->hidden;
    memset(out, 0, sizeof *out);
    add_both(out, ZS_EW_CONTIG, mode, 12 * res, 12 * res);
    out->fwd_launches = 2;
    out->bwd_launches = 2;
    if (d->rope_complex) {
        /* the casts (2+4, 4+2) contiguous, the complex multiply by the
         * broadcast freqs_cis (4+4) at the eager RoPE's rate */
        add_both(out, ZS_EW_CONTIG, mode, 12 * rope, 12 * rope);
        add_both(out, ZS_EW_ROPE, ZS_KERNELS_HF, 8 * rope, 8 * rope);
        out->fwd_launches += d->rope ? 6 : 0;
        out->bwd_launches += d->rope ? 6 : 0;
    } else if (mode == ZS_KERNELS_HF) {
        add_both(out, ZS_EW_ROPE, mode, 20 * rope, 30 * rope);
        out->fwd_launches += d->rope ? 10 : 0;
        out->bwd_launches += d->rope ? 16 : 0;
    } else {
        add_both(out, ZS_EW_ROPE, mode, 4 * rope, 4 * rope);
        out->fwd_launches += d->rope ? 1 : 0;
        out->bwd_launches += d->rope ? 1 : 0;
    }
    if (d->plain_mlp) {
        /* one activation kernel (F.gelu / nn.GELU / ReLU) in every mode:
         * fwd read 2 + write 2, bwd dy, x, dx 2+2+2 [assumption: HF's
         * tanh-approximation GELU classes (NewGELUActivation), several eager
         * ops, are counted as one kernel] */
        add_both(out, ZS_EW_CONTIG, mode, 4 * mlp, 6 * mlp);
        out->fwd_launches += 1;
        out->bwd_launches += 1;
    } else if (mode == ZS_KERNELS_HF) {
        add_both(out, ZS_EW_SWIGLU, mode, 10 * mlp, 18 * mlp);
        out->fwd_launches += 2;
        out->bwd_launches += 3;
    } else {
        add_both(out, ZS_EW_SWIGLU, mode, 6 * mlp, 10 * mlp);
        out->fwd_launches += 1;
        out->bwd_launches += 1;
    }
}

void zs_kernels_norm(int mode, bool layernorm, double elems,
                     struct zs_ew_cost *out)
{
    memset(out, 0, sizeof *out);
    if (layernorm) {
        /* nn.LayerNorm: one native kernel each way in eager code (hf and
         * fused), a generated one under compiled */
        add_both(out, ZS_EW_LAYERNORM, mode, 4 * elems, 6 * elems);
        out->fwd_launches = 1;
        out->bwd_launches = 1;
    } else if (mode == ZS_KERNELS_HF) {
        add_both(out, ZS_EW_RMSNORM, mode, 36 * elems, 70 * elems);
        out->fwd_launches = 8;
        out->bwd_launches = 12;
    } else {
        add_both(out, ZS_EW_RMSNORM, mode, 4 * elems, 6 * elems);
        out->fwd_launches = 1;
        out->bwd_launches = 1;
    }
}

void zs_kernels_loss(int mode, double logits, struct zs_ew_cost *out)
{
    memset(out, 0, sizeof *out);
    switch (mode) {
    case ZS_KERNELS_HF:
        add_both(out, ZS_EW_LOSS, mode, 14 * logits, 22 * logits);
        out->fwd_launches = 4;
        out->bwd_launches = 4;
        break;
    case ZS_KERNELS_FUSED:
        add_both(out, ZS_EW_LOSS, mode, 4 * logits, 0);
        out->fwd_launches = 1;
        out->bwd_launches = 0;
        break;
    default:
        add_both(out, ZS_EW_LOSS, mode, 4 * logits, 4 * logits);
        out->fwd_launches = 1;
        out->bwd_launches = 1;
        break;
    }
}

void zs_kernels_lora(int mode, double tokens, double in_dim, double out_dim,
                     enum zs_lora_consumer to, bool dropout,
                     struct zs_ew_cost *out)
{
    bool compiled = mode == ZS_KERNELS_COMPILED;
    bool fuses = compiled && to != ZS_LORA_TO_EXTERN;
    /* compiled, per output element: a kernel of its own 6 B; fused into a
     * pointwise consumer 2 B (lora_b's output read), 4 B where the sum is
     * also written for the consumer's backward; eager 10 B */
    double fwd = !compiled ? 10 : !fuses ? 6 : to == ZS_LORA_TO_SAVED ? 4 : 2;
    memset(out, 0, sizeof *out);
    /* contiguous element-wise kernels (the scale, the sum, autograd's
     * accumulate of the extra input gradient) at that class's measured
     * fraction, as the residual adds */
    add_both(out, ZS_EW_CONTIG, mode, fwd * tokens * out_dim,
             (fuses ? 2 : 4) * tokens * out_dim +
                 (compiled ? 2 : 6) * tokens * in_dim);
    out->fwd_launches = !compiled ? 2 : fuses ? 0 : 1;
    out->bwd_launches = fuses ? 1 : 2;
    if (dropout) {
        /* lora_dropout p > 0: native_dropout over the adapter's input,
         * 2 + 2 + its bool mask 1 = 5 B forward, grad * mask * scale
         * 2 + 1 + 2 = 5 B backward, one launch each way (as the attention
         * dropout below) [assumption: under compiled as eager, the
         * mask kept as model.c's saved-memory count keeps it] */
        add_both(out, ZS_EW_CONTIG, mode, 5 * tokens * in_dim,
                 5 * tokens * in_dim);
        out->fwd_launches += 1;
        out->bwd_launches += 1;
    }
}

/*
 * Eager attention over the score square, per score (b x heads x s x s
 * elements on this rank), by the code that runs it (model.c
 * zs_model_eager_code).  Each element-wise kernel is charged the bytes it
 * reads and writes, as above; the mask added to the scores is [b, 1, s, s]
 * (or [b, 1, 1, s]) broadcast over the heads, and the GPT-2 causal
 * mask [1, 1, s, s] bool, read per head from L2 [assumption: L2 hits, as
 * the broadcast operands above].  Dropout with p = 0 runs no kernel
 * (aten/src/ATen/native/Dropout.cpp _dropout_impl: "if (p == 0 || !train
 * || ...) return input;"); with p > 0 in training native_dropout reads 2 and
 * writes 2 + its bool mask 1 = 5 B, its backward grad * mask * scale 2 + 1
 * + 2 = 5 B, one launch each way.  A softmax with dtype=float32
 * (aten/src/ATen/native/SoftMax.cpp softmax(input, dim, dtype)) is one
 * fused kernel (half_to_float) only for an fp16 input on CUDA, 2 + 4 B;
 * a bf16 input is first converted, input.toType(Float) 2 + 4, then an fp32
 * _softmax 4 + 4.  Backward per derivatives.yaml: add passes its gradient
 * through (no kernel); a multiply or divide by a scalar scales it, 2 + 2.
 *
 * HF: eager_attention_forward (transformers 63bb723 modeling_qwen2.py,
 *   Llama's the same): "torch.matmul(query, key_states.transpose(2, 3)) *
 *   scaling" (the scale is a kernel over the scores, not folded into the
 *   matmul), "+ causal_mask" (always materialised for eager:
 *   masking_utils.py eager_mask calls sdpa_mask with
 *   allow_is_causal_skip=False, at 00c4411), "softmax(attn_weights,
 *   dim=-1, dtype=torch.float32).to(query.dtype)", dropout, matmul.  A
 *   bf16 model [assumption: the 16-bit dtype is bf16; under autocast with
 *   fp32 parameters the mask is fp32, the add writes fp32 and the
 *   conversion is a no-op: 24 B forward]:
 *     forward  scale 4, mask add 4, to-fp32 6, softmax 8, to-bf16 6 = 28 B,
 *              5 launches
 *     backward to-bf16's 2 + 4 = 6, softmax's (grad 4, output 4, grad in
 *              4) 12, to-fp32's 4 + 2 = 6, scale's 4 = 28 B, 4 launches.
 * OPT: OPTAttention of transformers 4.21 (model.c), fp16 [assumption:
 *   zsim has no 16-bit dtype switch; the 4.21 code upcasts only fp16, and
 *   OPT-Benchmark, the runs zsim checks, trained in fp16]:
 *     forward  "+ attention_mask" 4, "torch.max(attn_weights,
 *              torch.tensor(finfo.min))" 4 (maximum with a 0-dim bound,
 *              passed to the kernel as a scalar), softmax fp16 -> fp32
 *              fused 6, ".to(torch.float16)" 6 = 20 B, 4 launches
 *     backward .to's 2 + 4 = 6; softmax's grad 4 + output 4, its grad
 *              in fp16 2 = 10 (_softmax_backward_data writes the input's
 *              dtype); maximum's (derivatives.yaml at d327a78: "at::where(
 *              self == other, grad / 2, grad).masked_fill_(self < other,
 *              0)") eq 2 + 1, grad / 2 2 + 2, where 1 + 2 + 2 + 2, lt 2 + 1,
 *              masked_fill_ in place 1 + 2 + 2 = 22 in 5 launches; the mask
 *              add passes through: 38 B, 7 launches.
 * GPT2: GPT2Attention._attn (transformers 0010f602, model.c):
 *   "attn_weights / torch.full([], value.size(-1) ** 0.5, ...)" 4,
 *   "torch.where(causal_mask, attn_weights.to(attn_weights.dtype),
 *   mask_value)" 4 (.to of the same dtype copies nothing), "+
 *   attention_mask" 4 [assumption: the loop passes the 2D attention mask,
 *   as HF's collators and the Lightning GPT benchmark's GPTLMModel do],
 *   softmax with no dtype, ".type(value.dtype)", attn_dropout:
 *     half_softmax (a model cast to 16 bits): softmax 2 + 2, .type a no-op:
 *              forward 16 B, 4 launches; backward softmax's 2 + 2 + 2, where's
 *              "where(condition, grad, 0)" 2 + 2, the divide's 4 = 14 B,
 *              3 launches
 *     otherwise (autocast: softmax is on its fp32 list, the input cast
 *              first): cast 6, softmax 8, .type to bf16 6: forward 32 B,
 *              6 launches; backward .type's 6, softmax's 12, the cast's 6,
 *              where's 4, divide's 4 = 32 B, 5 launches.
 * Every --kernels mode: Liger patches no attention; under torch.compile
 * inductor would fuse the chain or replace the pattern with SDPA
 * (torch/_inductor/fx_passes/fuse_attention.py, at f05de74), not modelled
 * [assumption: eager attention keeps its eager kernels].
 */
void zs_kernels_eager_attn(enum zs_eager_code code, bool half_softmax,
                           bool dropout, double scores, struct zs_ew_cost *out)
{
    double f, bw;
    int lf, lb;
    switch (code) {
    case ZS_EAGER_OPT:
        f = 4 + 4 + 6 + 6;
        bw = 6 + 10 + 22;
        lf = 4;
        lb = 7;
        break;
    case ZS_EAGER_GPT2:
        if (half_softmax) {
            f = 4 + 4 + 4 + 4;
            bw = 6 + 4 + 4;
            lf = 4;
            lb = 3;
        } else {
            f = 4 + 4 + 4 + 6 + 8 + 6;
            bw = 6 + 12 + 6 + 4 + 4;
            lf = 6;
            lb = 5;
        }
        break;
    default:
        f = 4 + 4 + 6 + 8 + 6;
        bw = 6 + 12 + 6 + 4;
        lf = 5;
        lb = 4;
        break;
    }
    if (dropout) {
        f += 5;
        bw += 5;
        lf += 1;
        lb += 1;
    }
    memset(out, 0, sizeof *out);
    out->fwd_bytes = f * scores;
    out->bwd_bytes = bw * scores;
    out->fwd_launches = lf;
    out->bwd_launches = lb;
}
