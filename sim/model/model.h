/*
 * model.h — model accounting: the module tree, parameters, FLOPs and
 * activation bytes that the schedule builders consume.
 *
 * A model is a list of *leaves*: modules with direct parameters, the unit that
 * DeepSpeed ZeRO-3 gathers and releases (its fetch/release hooks fire per
 * submodule that owns parameters; partitioned_param_coordinator.py) and FSDP2
 * wraps per decoder layer.  Decoder layers are identical, so one layer's
 * leaves are stored once (`layer`, in execution order) and repeated
 * `n_layers` times; the embedding precedes them and the final norm and LM
 * head follow.  MoE expert blocks are one leaf (DeepSpeed's
 * set_z3_leaf_modules on the sparse block: all experts gathered at once).
 * Extra modules (vision/audio towers, a talker) have their own placement.
 *
 * All counts are elements; all bytes are bytes; FLOPs count a multiply-add
 * as 2. Invariant: params_total == Σ leaves (layer leaves × n_layers) + extras.
 */
#ifndef ZS_MODEL_H
#define ZS_MODEL_H

#include "util/err.h"

#include <stdbool.h>
#include <stdint.h>

enum zs_family {
    ZS_FAM_LLAMA,
    ZS_FAM_QWEN2,
    ZS_FAM_QWEN3,
    ZS_FAM_MISTRAL,
    ZS_FAM_MIXTRAL,
    ZS_FAM_QWEN3_MOE,
    ZS_FAM_QWEN2_5_OMNI, /* thinker = qwen2 text model + towers + talker */
    ZS_FAM_GPT2,         /* GPT2LMHeadModel: learned positions, fused c_attn */
    ZS_FAM_OPT,          /* OPTForCausalLM: learned positions (offset 2) */
    ZS_FAM_GPT_NEOX,     /* GPTNeoXForCausalLM: parallel residual, 2 norms */
    ZS_FAM_FALCON,       /* FalconForCausalLM: MQA/GQA, parallel attn + MLP */
    ZS_FAM_MPT,          /* MptForCausalLM: ALiBi, bias-free LayerNorm */
    ZS_FAM_BLOOM,        /* BloomForCausalLM: ALiBi, embedding LayerNorm */
    ZS_FAM_PHI,          /* PhiForCausalLM (phi-2): parallel, one norm */
    ZS_FAM_PHI3,         /* Phi3ForCausalLM: fused qkv and gate_up */
    ZS_FAM_GEMMA,        /* GemmaForCausalLM: head_dim apart, GeGLU, tied */
    ZS_FAM_GEMMA2,       /* Gemma2ForCausalLM: + sandwich norms, local/global */
    ZS_FAM_COUNT
};

/* Architecture variants (docs/model.md "Architectures").  The zero value of
 * each is the Llama layout, so a zeroed model is a Llama. */
enum zs_norm_kind {
    ZS_NORM_RMS,  /* RMSNorm: weight only (LlamaRMSNorm) */
    ZS_NORM_LAYER /* nn.LayerNorm: weight and (norm_bias) bias */
};
enum zs_mlp_kind {
    ZS_MLP_GATED, /* down(act(gate(x)) * up(x)): 3 GEMMs (or gate_up fused) */
    ZS_MLP_PLAIN  /* fc_out(act(fc_in(x))): 2 GEMMs (GPT-2, OPT, Falcon...) */
};
/* The MLP activation as transformers implements it (activations.py ACT2CLS):
 * what autograd keeps differs (python-expression GELUs keep every
 * intermediate; model.c). */
enum zs_act {
    ZS_ACT_SILU,      /* nn.SiLU: saves its input */
    ZS_ACT_GELU,      /* F.gelu / nn.GELU / BLOOM's GeLUFunction: input */
    ZS_ACT_GELU_TANH, /* gelu_pytorch_tanh: F.gelu(approximate="tanh") */
    ZS_ACT_GELU_NEW,  /* gelu_new: NewGELUActivation, a python expression */
    ZS_ACT_GELU_FAST, /* gelu_fast: FastGELUActivation, a python expression */
    ZS_ACT_RELU,      /* nn.ReLU: saves its output */
    ZS_ACT_COUNT
};
enum zs_pos_kind {
    ZS_POS_ROPE,   /* rotary, applied to q and k: no parameters */
    ZS_POS_ALIBI,  /* linear biases added to the scores: no parameters */
    ZS_POS_LEARNED /* a learned position table (pos_rows x hidden) */
};
enum zs_block_kind {
    ZS_BLOCK_SEQUENTIAL, /* x + attn(norm1(x)), then + mlp(norm2(.)) */
    ZS_BLOCK_PARALLEL,   /* x + attn(n(x)) + mlp(n(x)), one shared norm (GPT-J,
                            Phi-2, Falcon-7B) */
    ZS_BLOCK_PARALLEL_2NORM /* x + attn(n1(x)) + mlp(n2(x)) (GPT-NeoX
                               use_parallel_residual, Falcon-40B ln_attn /
                               ln_mlp) */
};

enum zs_leaf_kind {
    ZS_LEAF_EMBED,   /* token embedding (vocab x hidden) or a learned
                        position table (rows x hidden) */
    ZS_LEAF_NORM,    /* RMSNorm weight or LayerNorm weight + bias; its width
                        is out_features (q/k norms of qwen3: head_dim) */
    ZS_LEAF_LINEAR,  /* dense projection, in_features -> out_features */
    ZS_LEAF_ROUTER,  /* MoE gate, hidden -> experts */
    ZS_LEAF_EXPERTS, /* all experts of one MoE block (z3 leaf module) */
    ZS_LEAF_LM_HEAD  /* output projection hidden -> vocab (tied: 0 params of
                        its own, tied_params = the embedding's) */
};

/* Which projection a linear leaf is: LoRA targets are chosen by role. */
enum zs_role {
    ZS_ROLE_NONE = 0,
    ZS_ROLE_Q = 1 << 0,
    ZS_ROLE_K = 1 << 1,
    ZS_ROLE_V = 1 << 2,
    ZS_ROLE_O = 1 << 3,
    ZS_ROLE_GATE = 1 << 4,
    ZS_ROLE_UP = 1 << 5,
    ZS_ROLE_DOWN = 1 << 6,
    ZS_ROLE_ALL_LINEAR = 0x7f
};

struct zs_leaf {
    char name[64]; /* in a layer: "self_attn.q_proj"; else "model.embed_tokens"
                    */
    enum zs_leaf_kind kind;
    unsigned role;  /* enum zs_role for linears (and experts: GATE|UP|DOWN) */
    int64_t params; /* elements of all direct parameters (weight + bias) */
    int64_t
        params_active; /* elements used per token (experts: top_k experts) */
    int n_tensors;     /* parameter tensors (weight, bias): per-tensor costs */
    int64_t tied_params; /* elements it uses but another leaf owns: a tied
                            lm_head runs its GEMM with the embedding's
                            weight (params 0, counted once), and ZeRO-3
                            gathers that weight again for it */
    int64_t in_features; /* GEMM K (per expert for experts; hidden for embed) */
    int64_t out_features; /* GEMM N (per expert: intermediate) */
    int gemms;            /* GEMMs of [tokens x in] x [in x out] per token pass:
                             1 for a linear; experts: 3 per active expert
                             (gate, up, down) with top_k experts per token */
};

enum zs_placement {
    ZS_PLACE_SHARDED,  /* built under zero.Init / fully_shard: sharded like the
                          rest */
    ZS_PLACE_CPU,      /* built outside zero.Init and left on the CPU (Qwen-Omni
                          talker      when ENABLE_AUDIO_OUTPUT is on: DESIGN §1) */
    ZS_PLACE_GPU_FULL, /* replicated whole on every GPU, not sharded */
    ZS_PLACE_DISABLED  /* not instantiated */
};

struct zs_extra {
    char name[64]; /* "audio_tower", "visual", "talker", "token2wav" */
    int64_t params;
    bool trainable_default; /* trained in a full fine-tune by default */
    enum zs_placement placement_default;
    double flops_per_token_fwd; /* per input token routed through it (0: unused
                                   in LM SFT) */
};

#define ZS_MODEL_MAX_LAYER_LEAVES 16
#define ZS_MODEL_MAX_OUTER 4
#define ZS_MODEL_MAX_EXTRA 8

struct zs_model {
    char name[64];           /* library name, or the file's stem */
    char resolved_from[256]; /* what the user typed and what it resolved to */
    char source[256];        /* file read (library JSON or HF config.json) */
    enum zs_family family;

    int64_t hidden, intermediate, n_layers, n_heads, n_kv_heads, head_dim,
        vocab;
    int64_t max_position;
    bool tie_embeddings, qkv_bias, qk_norm;
    int64_t n_experts, experts_per_token, moe_intermediate; /* 0 when dense */
    int64_t sliding_window;                                 /* 0 when none */
    bool o_bias;          /* o_proj has a bias (llama-style attention_bias) */
    char provenance[512]; /* where the dimensions come from (zsim JSON "source")
                           */
    /* Architecture (zero values: Llama). */
    enum zs_norm_kind norm;
    bool norm_bias;          /* LayerNorm with a bias vector */
    enum zs_mlp_kind mlp;
    enum zs_act act;
    enum zs_pos_kind pos;
    int64_t pos_rows;        /* learned positions: table rows (OPT: max + 2) */
    enum zs_block_kind block;
    bool qkv_fused;          /* one q|k|v projection (query_key_value, c_attn,
                                Wqkv, qkv_proj) */
    bool gate_up_fused;      /* one gate|up projection (Phi-3 gate_up_proj) */
    bool mlp_bias;           /* MLP linears have biases */
    bool lm_head_bias;       /* lm_head has a bias (phi-2) */
    bool embed_norm;         /* a norm right after the embedding (BLOOM) */
    bool sandwich_norm;      /* norms after attention and after the MLP as
                                well (Gemma-2: 4 norms per layer) */
    /* Dropout probabilities the config trains with (HF modules apply them
     * in train mode): on the attention probabilities, and on the attention
     * and MLP outputs before the residual add (resid_dropout_sites of them
     * per layer, set by zs_model_finish: 1 for Falcon's parallel block's
     * single dropout_add, else 2). */
    double attn_dropout, resid_dropout;
    int resid_dropout_sites;
    int64_t sliding_layers;  /* layers that use sliding_window (Gemma-2:
                                every other one); n_layers when all */
    /* Flash attention is not available for this model in transformers
     * (ALiBi in BLOOM/MPT/Falcon): the file position and key that say so,
     * for zs_model_check_attention's message; "" when flash is fine. */
    char flash_forbidden_at[400];
    char flash_forbidden_why[160];
    char layer_prefix[32];   /* state-dict prefix of the decoder layers
                                ("model.layers.", "transformer.h.") */

    struct zs_leaf pre[ZS_MODEL_MAX_OUTER]; /* before the layers: embedding */
    int n_pre;
    struct zs_leaf layer[ZS_MODEL_MAX_LAYER_LEAVES]; /* one decoder layer,
                                                        execution order */
    int n_layer_leaves;
    struct zs_leaf post[ZS_MODEL_MAX_OUTER]; /* final norm, lm_head */
    int n_post;
    struct zs_extra extra[ZS_MODEL_MAX_EXTRA];
    int n_extra;

    /* Derived by zs_model_finish (read-only for users): */
    int64_t params_total; /* every parameter, tied ones once, extras included */
    int64_t params_active; /* per token (MoE: top_k experts), extras included */
    int64_t params_embedding; /* embedding + untied lm_head */
    int64_t params_layer;     /* one decoder layer */
    int64_t params_lm;        /* the language model alone (no extras) */
    char largest_leaf_name[96];
    int64_t largest_leaf_params;
};

/* ---- Loading ------------------------------------------------------------ */

/* Resolves MODEL as DESIGN §4 says: an alias ("72b"), a library name
 * ("qwen2.5-72b"), a path to a zsim model JSON, or a path to a Hugging Face
 * config.json (told apart by its "model_type"/"architectures" keys).
 * Library files live in ZS_SOURCE_DIR "/models" (or $ZSIM_MODELS).  Unknown
 * names: ZS_EINPUT "unknown model 'x': closest are a, b, c". */
int zs_model_resolve(const char *name, struct zs_model *out,
                     struct zs_err *err);
int zs_model_load_hf_config(const char *path, struct zs_model *out,
                            struct zs_err *err);
int zs_model_load_zsim_json(const char *path, struct zs_model *out,
                            struct zs_err *err);
/* Library listing: names and aliases (static storage). */
int zs_model_library(const char *const **names, int *n);
/* Aliases ("72b" -> "qwen2.5-72b"), static storage. */
struct zs_model_alias {
    const char *alias;
    const char *name;
};
int zs_model_aliases(const struct zs_model_alias **aliases, int *n);
/* Directory of the library: $ZSIM_MODELS or ZS_SOURCE_DIR "/models". */
const char *zs_model_library_dir(void);

/* Builds leaves from the dimension fields and computes the derived totals. */
int zs_model_finish(struct zs_model *m, struct zs_err *err);

/* ---- Training method ----------------------------------------------------- */

enum zs_method { ZS_METHOD_FULL, ZS_METHOD_LORA, ZS_METHOD_QLORA };

struct zs_method_opts {
    enum zs_method method;
    int lora_rank;         /* r, default 16 */
    unsigned lora_targets; /* enum zs_role mask, default ZS_ROLE_ALL_LINEAR */
};

/* Trainable parameters of one leaf (the adapter elements under LoRA: r*(in+out)
 * per targeted linear; experts: per expert; 0 for frozen leaves). */
int64_t zs_leaf_trainable(const struct zs_leaf *l,
                          const struct zs_method_opts *mo);
/* Whole model. */
int64_t zs_model_trainable(const struct zs_model *m,
                           const struct zs_method_opts *mo);
/* Bytes of the frozen/trained base weights as stored for compute, per leaf:
 * bf16 2 B/elem; QLoRA 4-bit NF4 0.5 B/elem + absmax (fp32 per 64, double-
 * quantised: 8-bit per 64 + fp32 per 256*64, bitsandbytes) for linears. */
int64_t zs_leaf_weight_bytes(const struct zs_leaf *l,
                             const struct zs_method_opts *mo);

/* ---- FLOPs --------------------------------------------------------------- */

/* Forward matmul FLOPs per token at sequence length seq: 2 * active GEMM
 * params + attention scores/values (2 * 2 * seq * n_heads * head_dim per layer,
 * full square, the convention of PaLM's MFU appendix).  Used for MFU. */
double zs_model_flops_per_token_fwd(const struct zs_model *m, int64_t seq);
/* Attention-core FLOPs per layer for one sequence of length seq, forward,
 * causal (half the square: what flash attention executes). */
double zs_model_attn_core_flops(const struct zs_model *m, int64_t seq);

/* ---- Activations --------------------------------------------------------- */

/* Activation checkpointing.  SELECTIVE: Korthikanti et al. 2022 §4.2 (the
 * attention core is recomputed).  FULL: per decoder layer, only its input
 * kept (HF gradient_checkpointing).  OP: torchtitan's per-op selective AC
 * (activation_checkpoint mode "selective", option "op"): inside each block
 * the outputs of SDPA and of every other matmul are saved, everything else
 * is recomputed in the block's backward.  LAYER: torchtitan's selective
 * layer AC (mode "selective", selective_ac_option an integer N): every Nth
 * block is checkpointed in full, the others keep all their activations;
 * zs_ckpt_of_layer says which. */
enum zs_ckpt {
    ZS_CKPT_NONE,
    ZS_CKPT_SELECTIVE,
    ZS_CKPT_FULL,
    ZS_CKPT_OP,
    ZS_CKPT_LAYER
};
/* FLASH: the flash-attn 2 package (flash_attn_func); EAGER: the unfused
 * matmul-softmax-matmul; TRITON: flash-attn 1.x's Triton kernel
 * (flash_attn/flash_attn_triton.py), which llm-foundry's attn_impl: triton
 * runs; SDPA: torch.nn.functional.scaled_dot_product_attention's flash
 * backend (PyTorch's own build of FlashAttention-2's kernels).  FLASH,
 * TRITON and SDPA keep the same tensors (q, k, v, out, logsumexp).  AUTO is
 * a configuration value only, resolved by the trainer (train/config.c
 * zs_cfg_resolve): SDPA under torchtitan, FLASH otherwise. */
enum zs_attn_impl {
    ZS_ATTN_FLASH,
    ZS_ATTN_EAGER,
    ZS_ATTN_TRITON,
    ZS_ATTN_SDPA,
    ZS_ATTN_AUTO
};

struct zs_act_opts {
    int64_t seq;         /* tokens per sequence */
    int64_t micro_batch; /* sequences per micro-batch */
    enum zs_ckpt ckpt;
    enum zs_attn_impl attn;
    int sp; /* sequence shards (>= 1): seq / sp per rank (Ulysses or
               context parallel, zs_cfg_seq_shards) */
    int cp; /* of which context-parallel (ring attention; model.c
               cp_work_*) */
    enum zs_method method; /* LoRA saves adapter inputs/outputs too */
    int lora_rank;
    int kernels; /* enum zs_kernels (train/config.h): 0 HF eager, 1 fused
                    (Liger), 2 torch.compile: what norms, SwiGLU and the
                    loss keep */
    unsigned lora_targets; /* enum zs_role mask of the adapted projections;
                              0: every linear */
    double lora_dropout; /* PEFT LoraConfig lora_dropout; 0: nn.Identity */
    int loss_chunks; /* 0: the loss sees the whole logits; K > 0: torchtune's
                        CEWithChunkedOutputLoss over K token chunks */
    bool loss_eager; /* the model is compiled, the loss is not
                        (--compile-loss no): the loss keeps HF eager's
                        buffers */
    bool loss_fp32_output; /* fp32 logits returned by the model and held by
                              the loop through backward (--loss
                              fp32-output) */
    bool loss_half; /* the loss on the 16-bit logits, no fp32 upcast (--loss
                       half, model.c loss_half) */
    bool softmax_half; /* eager attention's softmax in the 16-bit compute
                          dtype, not fp32 (zs_model_eager_softmax_keeps_dtype
                          on a model cast to 16 bits, no autocast) */
    bool loss_output_dropped; /* with loss_fp32_output: the output goes
                                 before backward (--loss fp32-logits) */
    bool torchtune; /* torchtune's modules (--trainer torchtune): GQA k and v
                       expanded to every query head before attention, the
                       whole-logits upcast inside the model (model.c) */
    bool loss_xentropy; /* flash-attn's fused cross-entropy (--loss
                           flash-xentropy) */
    bool logits_dropped; /* the loop drops the model's output between the
                            loss and backward (torchtitan's `del pred`) */
};

/* Bytes one decoder layer keeps alive from its forward until its backward
 * (bf16 tensors saved by autograd, fp32 norm statistics). */
int64_t zs_model_act_saved_per_layer(const struct zs_model *m,
                                     const struct zs_act_opts *o);
/* Peak extra working bytes while one layer runs forward (or is recomputed),
 * beyond what it saves: e.g. eager attention's s x s scores in fp32, the MLP
 * intermediate. */
int64_t zs_model_act_work_fwd(const struct zs_model *m,
                              const struct zs_act_opts *o);
/* QLoRA: bytes of the one frozen weight dequantised to bf16 for a matmul
 * (the layer's largest), alive while the layer computes; 0 otherwise. */
int64_t zs_model_dequant_bytes(const struct zs_model *m,
                               const struct zs_act_opts *o);
/* Peak extra working bytes while one layer runs backward: its gradients of
 * activations, recomputed activations under full checkpointing. */
int64_t zs_model_act_work_bwd(const struct zs_model *m,
                              const struct zs_act_opts *o);

/* The loss: logits and their upcast, the single largest tensors of a step. */
struct zs_loss_bytes {
    int64_t logits_bf16; /* tokens x vocab x 2 (lm_head output) */
    int64_t
        logits_fp32; /* tokens x vocab x 4 (.float() before cross-entropy) */
    int64_t
        logprobs_fp32; /* log_softmax saved for backward, tokens x vocab x 4;
                          with a chunked loss: one chunk's, the largest */
    int pieces;        /* separate tensors logits_fp32 and logprobs_fp32 come
                          in, one after the other: 1, or the loss chunks
                          (at most ZS_LOSS_PIECES_MAX) */
    int64_t grad_fp32; /* d(loss)/d(logits) in fp32 */
    int64_t grad_bf16; /* cast back for lm_head backward */
    int64_t peak;      /* the largest simultaneous total of the above */
    /* the bf16 logits are dropped at the end of forward (nothing saves
     * them: torchtune's chunked loss in eager mode, torchtitan's whole
     * eager loss), not at lm_head's backward */
    bool logits_freed_in_fwd;
    /* torch.compile fused the upcast and log-softmax (torchtune's compiled
     * chunked loss) or a fused kernel did (--loss flash-xentropy):
     * logits_fp32 and grad_fp32 are 0 and logprobs_fp32 is one chunk's
     * saved row statistics (max and log-sum-exp, fp32) */
    bool fused_upcast;
    /* --loss fp32-output: the fp32 logits (logits_fp32) stay alive through
     * backward; shift_fp32 is the contiguous shifted copy the loss reads,
     * freed at the end of forward */
    bool fp32_held;
    int64_t shift_fp32;
    /* --loss fp32-logits: the HF Trainer's compute_loss returns only the
     * loss, so the output and its fp32 logits go at the end of forward */
    bool output_dropped;
    /* the model itself upcasts the whole logits (torchtune's
     * TransformerDecoder `.float()`): the bf16 logits go at the upcast,
     * before the log-softmax is allocated */
    bool upcast_in_model;
    /* --loss half: no fp32 tensor at all; logits_fp32 is the 16-bit
     * contiguous shifted copy, logprobs_fp32 the 16-bit log-softmax and
     * grad_fp32 / grad_bf16 16-bit gradients (the names keep their roles) */
    bool half;
};
void zs_model_loss_bytes(const struct zs_model *m, const struct zs_act_opts *o,
                         struct zs_loss_bytes *out);
/* Whether the architecture's HF eager attention calls softmax without a
 * dtype, so that a model cast to 16 bits (no autocast) keeps its softmax in
 * 16 bits (model.c). */
bool zs_model_eager_softmax_keeps_dtype(const struct zs_model *m);
/* Which code runs a family's eager attention over the score square
 * (model.c zs_model_eager_code; its kernels: sched/kernels.c
 * zs_kernels_eager_attn). */
enum zs_eager_code {
    ZS_EAGER_HF,   /* transformers' eager_attention_forward: scale, mask add,
                      softmax(dtype=float32), cast back */
    ZS_EAGER_GPT2, /* GPT2Attention._attn: divide, causal where, mask add,
                      softmax in the input dtype, dropout */
    ZS_EAGER_OPT   /* OPTAttention of transformers 4.21: mask add, clamp at
                      finfo.min, fp16 softmax upcast to fp32, cast back */
};
enum zs_eager_code zs_model_eager_code(const struct zs_model *m);
/* The most loss chunks a schedule tracks (torchtune's default is 8). */
#define ZS_LOSS_PIECES_MAX 64

/* Per-token bytes of the hidden state (2 * hidden): layer inputs under full
 * checkpointing, sequence-parallel all-to-all payloads. */
int64_t zs_model_hidden_bytes_per_token(const struct zs_model *m);

/* 0 when attention implementation a is available for m in transformers;
 * otherwise ZS_EINPUT naming the model file's key that rules it out, e.g.
 * "invalid 'alibi' in f.json:5:3: transformers' Falcon ALiBi attention has
 * no flash-attention path (FalconFlashAttention2 raises); use --attention
 * eager (got flash)".  flash and sdpa (whose flash backend takes no bias)
 * are ruled out alike; eager and triton (which adds a bias) are not. */
int zs_model_check_attention(const struct zs_model *m, enum zs_attn_impl a,
                             struct zs_err *err);

/* The names of each enum's values as zsim model JSON spells them, index =
 * value, NULL-terminated (the loader's zs_field choices; extra modules'
 * placement for zs_placement_names). */
extern const char *const zs_family_names[];
extern const char *const zs_norm_names[];
extern const char *const zs_mlp_names[];
extern const char *const zs_act_names[];
extern const char *const zs_pos_names[];
extern const char *const zs_block_names[];
extern const char *const zs_placement_names[];
const char *zs_family_name(enum zs_family f);
const char *zs_norm_name(enum zs_norm_kind n);
const char *zs_mlp_name(enum zs_mlp_kind k);
const char *zs_act_name(enum zs_act a);
const char *zs_pos_name(enum zs_pos_kind p);
const char *zs_block_name(enum zs_block_kind b);
const char *zs_leaf_kind_name(enum zs_leaf_kind k);
const char *zs_placement_name(enum zs_placement p);
const char *zs_method_name(enum zs_method m);
const char *zs_ckpt_name(enum zs_ckpt c);
/* The checkpointing decoder layer `layer` (0-based) runs under: c itself,
 * except for ZS_CKPT_LAYER, where it is FULL on every `every`-th block and
 * NONE on the others (every >= 1). */
enum zs_ckpt zs_ckpt_of_layer(enum zs_ckpt c, int64_t every, int64_t layer);
const char *zs_attn_name(enum zs_attn_impl a);
/* Parameter-tensor elements of all leaves (pre + layer x n_layers + post),
 * without extras. */
int64_t zs_model_leaf_sum(const struct zs_model *m);

#endif
