/*
 * kernels.h — element-wise, norm and loss kernels per kernel mode
 * (--kernels hf|fused|compiled): HBM bytes and launches (kernels.c has the
 * derivation and sources).
 */
#ifndef ZS_SCHED_KERNELS_H
#define ZS_SCHED_KERNELS_H

#include "hw/hw.h"
#include "model/model.h"
#include "train/config.h"

#include <stdbool.h>

struct zs_ew_cost {
    double fwd_bytes, bwd_bytes; /* HBM traffic, forward and backward */
    int fwd_launches, bwd_launches;
    /* The time of kernels whose achieved fraction of the HBM bandwidth is
     * measured (kernels.c, "Achieved bandwidth"), as the bytes that would
     * take as long at the profile's full bandwidth: the sum of each
     * kernel's bytes over its fraction.  0: no measured kernel, the bytes
     * run at the fitted membound_eff (zs_gpu_membound_s). */
    double fwd_bw_bytes, bwd_bw_bytes;
};

/* Kernel classes whose achieved fraction of HBM bandwidth is measured, per
 * --kernels mode (kernels.c, "Achieved bandwidth"). */
enum zs_ew_class {
    ZS_EW_CONTIG,    /* contiguous element-wise (residual adds, casts, a
                        plain activation) */
    ZS_EW_SWIGLU,    /* SiLU(gate) * up */
    ZS_EW_RMSNORM,   /* RMSNorm */
    ZS_EW_LAYERNORM, /* nn.LayerNorm */
    ZS_EW_ROPE,      /* rotary embedding of q and k */
    ZS_EW_LOSS,      /* cross-entropy over the logits */
    ZS_EW_NCLASS
};

/* The measured fraction of the HBM bandwidth that class k reaches under
 * --kernels mode, forward or backward, on the bytes kernels.c counts. */
double zs_kernels_hbm_frac(enum zs_ew_class k, int mode, bool bwd);

/* GPU time of a cost's forward (bwd false) or backward on GPU g: measured
 * kernels at their fractions, the rest at membound_eff. */
double zs_ew_time_s(const struct zs_gpu *g, const struct zs_ew_cost *c,
                    bool bwd);

struct zs_kernel_dims {
    double tokens;       /* tokens of this rank's micro-batch */
    double hidden;       /* residual stream width */
    double q_dim, k_dim; /* heads x head_dim of q and of k */
    double inter;        /* active MLP intermediate (SwiGLU) */
    int rope;            /* 1: rotary embeddings applied */
    int plain_mlp;       /* 1: fc_out(act(fc_in(x))), no gate */
    int rope_complex;    /* 1: torchtitan's complex-valued RoPE, which no
                            kernel mode fuses (kernels.c) */
};

/* RoPE, the MLP activation (SwiGLU or a plain one) and residual adds of one
 * decoder layer (norms excluded). */
void zs_kernels_layer(int mode, const struct zs_kernel_dims *d,
                      struct zs_ew_cost *out);
/* One norm over `elems` elements (tokens x hidden): RMSNorm, or with
 * `layernorm` nn.LayerNorm. */
void zs_kernels_norm(int mode, bool layernorm, double elems,
                     struct zs_ew_cost *out);
/* Cross-entropy over `logits` elements (tokens x vocab). */
void zs_kernels_loss(int mode, double logits, struct zs_ew_cost *out);
/* What consumes an adapted linear's output (kernels.c, "LoRA adapter"):
 * under --kernels compiled it decides whether the adapter's sum fuses into
 * the consumer's kernel. */
enum zs_lora_consumer {
    ZS_LORA_TO_EXTERN = 0, /* attention (V; Q, K without RoPE): a kernel
                              inductor does not generate */
    ZS_LORA_TO_POINTWISE,  /* RoPE (Q, K) or the residual add (O, DOWN) */
    ZS_LORA_TO_SAVED       /* the MLP activation (GATE, UP), whose backward
                              keeps its input */
};
/* A LoRA adapter's element-wise work around its two GEMMs, on `tokens`
 * rows of a linear of in_dim -> out_dim: the scale, the sum with the base
 * output, and the extra input-gradient sum in backward; with dropout
 * (lora_dropout > 0) the adapter's own dropout of its input. */
void zs_kernels_lora(int mode, double tokens, double in_dim, double out_dim,
                     enum zs_lora_consumer to, bool dropout,
                     struct zs_ew_cost *out);

/* Eager attention's element-wise kernels over `scores` elements (this
 * rank's micro-batch x heads x seq x seq), by the code that runs them
 * (model.h zs_eager_code): half_softmax, the softmax stays in the 16-bit
 * dtype (GPT-2 on a model cast to 16 bits); dropout, attention dropout
 * p > 0 in training.  The batched GEMMs are not included. */
void zs_kernels_eager_attn(enum zs_eager_code code, bool half_softmax,
                           bool dropout, double scores, struct zs_ew_cost *out);

#endif
