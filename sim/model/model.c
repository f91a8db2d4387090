/*
 * model.c — model accounting: builds the module tree (leaves) from a model's
 * dimensions and derives parameters, FLOPs, activation and loss bytes.
 *
 * Everything here is pure arithmetic on a filled struct zs_model: no I/O, no
 * allocation.  Parameter counts are exact int64 (the loaders bound every
 * dimension so that no product overflows: hidden <= 65536, intermediate <=
 * 262144, experts <= 512, layers <= 1024).  Activation bytes are computed in
 * double (s^2 terms can be large) and saturated to INT64_MAX on conversion;
 * they are exact below 2^53 bytes.
 *
 * Conventions (the sources are cited where each is used):
 *   - bf16 activations and weights, 2 bytes per element; RMSNorm statistics
 *     and the loss in fp32, 4 bytes.
 *   - t = micro_batch * seq / sp tokens per rank (Ulysses sequence parallel
 *     splits the sequence for everything outside attention and the heads
 *     inside it, so every term divides by sp).
 *   - FLOPs count a multiply-add as 2.
 */
#include "model/model.h"
#include "util/strutil.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Index = enum value; NULL-terminated for zs_field choices (model_load.c). */
const char *const zs_family_names[ZS_FAM_COUNT + 1] = {
    "llama",        "qwen2", "qwen3", "mistral",  "mixtral", "qwen3_moe",
    "qwen2_5_omni", "gpt2",  "opt",   "gpt_neox", "falcon",  "mpt",
    "bloom",        "phi",   "phi3",  "gemma",    "gemma2",  NULL};
const char *const zs_norm_names[] = {"rmsnorm", "layernorm", NULL};
const char *const zs_mlp_names[] = {"gated", "plain", NULL};
const char *const zs_act_names[ZS_ACT_COUNT + 1] = {
    "silu", "gelu", "gelu_pytorch_tanh", "gelu_new", "gelu_fast", "relu", NULL};
const char *const zs_pos_names[] = {"rope", "alibi", "learned", NULL};
const char *const zs_placement_names[] = {"sharded", "cpu", "gpu_full",
                                          "disabled", NULL};
const char *const zs_block_names[] = {"sequential", "parallel",
                                      "parallel_2norm", NULL};

const char *zs_norm_name(enum zs_norm_kind n)
{
    return n == ZS_NORM_LAYER ? "layernorm" : "rmsnorm";
}

const char *zs_mlp_name(enum zs_mlp_kind k)
{
    return k == ZS_MLP_PLAIN ? "plain" : "gated";
}

const char *zs_act_name(enum zs_act a)
{
    return (a >= 0 && a < ZS_ACT_COUNT) ? zs_act_names[a] : "?";
}

/* Any other value is named as the first member (rope, sequential). */
const char *zs_pos_name(enum zs_pos_kind p)
{
    return zs_pos_names[p == ZS_POS_ALIBI || p == ZS_POS_LEARNED ? p : 0];
}

const char *zs_block_name(enum zs_block_kind b)
{
    int known = b == ZS_BLOCK_PARALLEL || b == ZS_BLOCK_PARALLEL_2NORM;
    return zs_block_names[known ? b : 0];
}

int zs_model_check_attention(const struct zs_model *m, enum zs_attn_impl a,
                             struct zs_err *err)
{
    /* SDPA's flash backend takes no attention bias either; AUTO resolves
     * to FLASH or SDPA */
    if (a == ZS_ATTN_EAGER || a == ZS_ATTN_TRITON ||
        !m->flash_forbidden_at[0])
        return 0;
    return zs_err_set(err, ZS_EINPUT,
                      "%s: %s; use --attention eager (got "
                      "--attention %s)",
                      m->flash_forbidden_at, m->flash_forbidden_why,
                      zs_attn_name(a));
}

const char *zs_family_name(enum zs_family f)
{
    return (f >= 0 && f < ZS_FAM_COUNT) ? zs_family_names[f] : "?";
}

const char *zs_leaf_kind_name(enum zs_leaf_kind k)
{
    static const char *const names[] = {"embed",  "norm",    "linear",
                                        "router", "experts", "lm_head"};
    return k >= 0 && k <= ZS_LEAF_LM_HEAD ? names[k] : "?";
}

const char *zs_placement_name(enum zs_placement p)
{
    return p >= 0 && p <= ZS_PLACE_DISABLED ? zs_placement_names[p] : "?";
}

const char *zs_method_name(enum zs_method m)
{
    return m == ZS_METHOD_LORA    ? "lora"
           : m == ZS_METHOD_QLORA ? "qlora"
                                  : "full";
}

const char *zs_ckpt_name(enum zs_ckpt c)
{
    return c == ZS_CKPT_SELECTIVE ? "selective"
           : c == ZS_CKPT_FULL    ? "full"
           : c == ZS_CKPT_OP      ? "op"
           : c == ZS_CKPT_LAYER   ? "layer"
                                  : "none";
}

/* torchtitan parallelize_llama.py at 041336434916bdc0f88c1f89fda176fd3c2092e4
 * (the commit of docs/performance.md's "selective layer" rows),
 * checkpoint_wrapper: the blocks are wrapped in order (enumerate
 * model.layers), a counter `checkpoint_wrapper._count` is incremented
 * before each test, and the block gets the full-AC wrapper when
 * `_count % every_x_layer == 0`, else it is returned unwrapped ("store
 * activations for this layer").  The first block tested has _count 1, so
 * with N = 2 the blocks with 0-based ids 1, 3, 5, ... are checkpointed:
 * (layer + 1) % N == 0. */
enum zs_ckpt zs_ckpt_of_layer(enum zs_ckpt c, int64_t every, int64_t layer)
{
    if (c != ZS_CKPT_LAYER)
        return c;
    if (every < 1)
        every = 1;
    return (layer + 1) % every == 0 ? ZS_CKPT_FULL : ZS_CKPT_NONE;
}

const char *zs_attn_name(enum zs_attn_impl a)
{
    return a == ZS_ATTN_EAGER    ? "eager"
           : a == ZS_ATTN_TRITON ? "triton"
           : a == ZS_ATTN_SDPA   ? "sdpa"
           : a == ZS_ATTN_AUTO   ? "auto"
                                 : "flash";
}

static int is_moe(const struct zs_model *m)
{
    return m->n_experts > 0;
}

/* ---- Building the module tree -------------------------------------------- */

static struct zs_leaf *add_leaf(struct zs_leaf *arr, int *n, int cap,
                                const char *name, enum zs_leaf_kind kind,
                                unsigned role, int64_t in, int64_t out,
                                int64_t bias)
{
    struct zs_leaf *l;
    if (*n >= cap)
        return NULL;
    l = &arr[(*n)++];
    memset(l, 0, sizeof *l);
    zs_strlcpy(l->name, name, sizeof l->name);
    l->kind = kind;
    l->role = role;
    l->in_features = in;
    l->out_features = out;
    switch (kind) {
    case ZS_LEAF_NORM:
        /* RMSNorm: one weight vector of `out` elements, no bias
         * (transformers LlamaRMSNorm / Qwen2RMSNorm); nn.LayerNorm adds a
         * bias vector of the same width (`bias` = out) unless bias=False
         * (MPT no_bias). */
        l->params = out + bias;
        l->n_tensors = bias ? 2 : 1;
        l->gemms = 0;
        break;
    case ZS_LEAF_EMBED:
        /* nn.Embedding(vocab, hidden): in = hidden, out = vocab; a lookup,
         * no GEMM. */
        l->params = in * out;
        l->n_tensors = 1;
        l->gemms = 0;
        break;
    default:
        l->params = in * out + bias;
        l->n_tensors = bias ? 2 : 1;
        l->gemms = 1;
        break;
    }
    l->params_active = l->params;
    return l;
}

/* State-dict names per family (transformers modeling_<family>.py module
 * attribute names), so that leaves match DeepSpeed's module hooks.  For a
 * plain MLP `up` is the input projection (fc1, c_fc, dense_h_to_4h) and
 * `down` the output one.  NULL: the family has no such module. */
struct leaf_names {
    const char *embed, *pos, *embed_norm, *layers, *in_norm, *q, *k, *v, *qkv,
        *o, *post_attn_norm, *mlp_norm, *post_mlp_norm, *gate, *up, *gate_up,
        *down, *final_norm, *lm_head;
};

static const struct leaf_names g_names_llama = {
    "model.embed_tokens", NULL, NULL, "model.layers.", "input_layernorm",
    "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", NULL,
    "self_attn.o_proj", NULL, "post_attention_layernorm", NULL,
    "mlp.gate_proj", "mlp.up_proj", NULL, "mlp.down_proj", "model.norm",
    "lm_head"};
/* Gemma-2 (modeling_gemma2.py Gemma2DecoderLayer): input_layernorm,
 * post_attention_layernorm (on the attention output), then
 * pre_feedforward_layernorm and post_feedforward_layernorm around the MLP. */
static const struct leaf_names g_names_gemma2 = {
    "model.embed_tokens", NULL, NULL, "model.layers.", "input_layernorm",
    "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", NULL,
    "self_attn.o_proj", "post_attention_layernorm",
    "pre_feedforward_layernorm", "post_feedforward_layernorm",
    "mlp.gate_proj", "mlp.up_proj", NULL, "mlp.down_proj", "model.norm",
    "lm_head"};
/* modeling_gpt2.py: wte, wpe, h.N.{ln_1, attn.c_attn, attn.c_proj, ln_2,
 * mlp.c_fc, mlp.c_proj}, ln_f (Conv1D layers: same element counts). */
static const struct leaf_names g_names_gpt2 = {
    "transformer.wte", "transformer.wpe", NULL, "transformer.h.", "ln_1",
    NULL, NULL, NULL, "attn.c_attn", "attn.c_proj", NULL, "ln_2", NULL, NULL,
    "mlp.c_fc", NULL, "mlp.c_proj", "transformer.ln_f", "lm_head"};
/* modeling_opt.py OPTDecoderLayer (do_layer_norm_before). */
static const struct leaf_names g_names_opt = {
    "model.decoder.embed_tokens", "model.decoder.embed_positions", NULL,
    "model.decoder.layers.", "self_attn_layer_norm", "self_attn.q_proj",
    "self_attn.k_proj", "self_attn.v_proj", NULL, "self_attn.out_proj", NULL,
    "final_layer_norm", NULL, NULL, "fc1", NULL, "fc2",
    "model.decoder.final_layer_norm", "lm_head"};
/* modeling_gpt_neox.py GPTNeoXLayer. */
static const struct leaf_names g_names_neox = {
    "gpt_neox.embed_in", NULL, NULL, "gpt_neox.layers.", "input_layernorm",
    NULL, NULL, NULL, "attention.query_key_value", "attention.dense", NULL,
    "post_attention_layernorm", NULL, NULL, "mlp.dense_h_to_4h", NULL,
    "mlp.dense_4h_to_h", "gpt_neox.final_layer_norm", "embed_out"};
/* modeling_falcon.py FalconDecoderLayer: input_layernorm (+
 * post_attention_layernorm when not parallel_attn); with
 * new_decoder_architecture and two norms, ln_attn and ln_mlp (build_leaves
 * renames). */
static const struct leaf_names g_names_falcon = {
    "transformer.word_embeddings", NULL, NULL, "transformer.h.",
    "input_layernorm", NULL, NULL, NULL, "self_attention.query_key_value",
    "self_attention.dense", NULL, "post_attention_layernorm", NULL, NULL,
    "mlp.dense_h_to_4h", NULL, "mlp.dense_4h_to_h", "transformer.ln_f",
    "lm_head"};
/* modeling_mpt.py MptBlock. */
static const struct leaf_names g_names_mpt = {
    "transformer.wte", NULL, NULL, "transformer.blocks.", "norm_1", NULL,
    NULL, NULL, "attn.Wqkv", "attn.out_proj", NULL, "norm_2", NULL, NULL,
    "ffn.up_proj", NULL, "ffn.down_proj", "transformer.norm_f", "lm_head"};
/* modeling_bloom.py BloomBlock (word_embeddings_layernorm after the
 * embedding). */
static const struct leaf_names g_names_bloom = {
    "transformer.word_embeddings", NULL, "transformer.word_embeddings_layernorm",
    "transformer.h.", "input_layernorm", NULL, NULL, NULL,
    "self_attention.query_key_value", "self_attention.dense", NULL,
    "post_attention_layernorm", NULL, NULL, "mlp.dense_h_to_4h", NULL,
    "mlp.dense_4h_to_h", "transformer.ln_f", "lm_head"};
/* modeling_phi.py PhiDecoderLayer (one input_layernorm, parallel). */
static const struct leaf_names g_names_phi = {
    "model.embed_tokens", NULL, NULL, "model.layers.", "input_layernorm",
    "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", NULL,
    "self_attn.dense", NULL, NULL, NULL, NULL, "mlp.fc1", NULL, "mlp.fc2",
    "model.final_layernorm", "lm_head"};
/* modeling_phi3.py Phi3DecoderLayer. */
static const struct leaf_names g_names_phi3 = {
    "model.embed_tokens", NULL, NULL, "model.layers.", "input_layernorm",
    NULL, NULL, NULL, "self_attn.qkv_proj", "self_attn.o_proj", NULL,
    "post_attention_layernorm", NULL, NULL, NULL, "mlp.gate_up_proj",
    "mlp.down_proj", "model.norm", "lm_head"};

static const struct leaf_names *family_names(enum zs_family f)
{
    switch (f) {
    case ZS_FAM_GPT2:
        return &g_names_gpt2;
    case ZS_FAM_OPT:
        return &g_names_opt;
    case ZS_FAM_GPT_NEOX:
        return &g_names_neox;
    case ZS_FAM_FALCON:
        return &g_names_falcon;
    case ZS_FAM_MPT:
        return &g_names_mpt;
    case ZS_FAM_BLOOM:
        return &g_names_bloom;
    case ZS_FAM_PHI:
        return &g_names_phi;
    case ZS_FAM_PHI3:
        return &g_names_phi3;
    case ZS_FAM_GEMMA2:
        return &g_names_gemma2;
    default:
        return &g_names_llama;
    }
}

/* Builds the leaves of one decoder (transformers modeling_llama.py and the
 * siblings named in family_names): embedding (+ learned positions, +
 * embedding norm), per layer the norms, attention projections and MLP in
 * execution order, then the final norm and an untied lm_head.  Norm leaves
 * carry weight (+ bias for LayerNorm with norm_bias). */
/* Leaves are appended through these; each clears `ok` when a table is
 * full. */
#define PRE(...)                                                               \
    ok &= add_leaf(m->pre, &m->n_pre, ZS_MODEL_MAX_OUTER, __VA_ARGS__) != NULL
#define LAY(...)                                                               \
    ok &= add_leaf(m->layer, &m->n_layer_leaves, ZS_MODEL_MAX_LAYER_LEAVES,    \
                   __VA_ARGS__) != NULL
#define POST(...)                                                              \
    ok &= add_leaf(m->post, &m->n_post, ZS_MODEL_MAX_OUTER, __VA_ARGS__) != NULL

/* The layer's MLP leaves: MoE router and experts, a plain MLP, fused or
 * separate gate/up.  Returns 0 when a table is full. */
static int build_mlp(struct zs_model *m, const struct leaf_names *nm_)
{
    int64_t h = m->hidden;
    int64_t ib = m->mlp_bias ? m->intermediate : 0, hb = m->mlp_bias ? h : 0;
    const char *moe_prefix =
        m->family == ZS_FAM_MIXTRAL ? "block_sparse_moe" : "mlp";
    char nm[64];
    int ok = 1;

    if (is_moe(m)) {
        struct zs_leaf *x;
        /* Router: nn.Linear(hidden, experts, bias=False)
         * (MixtralSparseMoeBlock.gate, Qwen3MoeSparseMoeBlock.gate). */
        snprintf(nm, sizeof nm, "%s.gate", moe_prefix);
        LAY(nm, ZS_LEAF_ROUTER, 0, h, m->n_experts, 0);
        /* Experts: each a gated MLP of 3 x hidden x moe_intermediate, no
         * bias; top_k of them run per token.  One leaf for the block
         * (model.h: DeepSpeed set_z3_leaf_modules on the sparse block). */
        snprintf(nm, sizeof nm, "%s.experts", moe_prefix);
        LAY(nm, ZS_LEAF_EXPERTS, ZS_ROLE_GATE | ZS_ROLE_UP | ZS_ROLE_DOWN, h,
            m->moe_intermediate, 0);
        if (ok) {
            x = &m->layer[m->n_layer_leaves - 1];
            x->params = m->n_experts * 3 * h * m->moe_intermediate;
            x->params_active =
                m->experts_per_token * 3 * h * m->moe_intermediate;
            x->n_tensors = (int)(m->n_experts * 3);
            x->gemms = (int)(3 * m->experts_per_token);
        }
    } else if (m->mlp == ZS_MLP_PLAIN) {
        /* fc_in hidden -> intermediate, activation, fc_out back: 2 GEMMs. */
        LAY(nm_->up, ZS_LEAF_LINEAR, ZS_ROLE_UP, h, m->intermediate, ib);
        LAY(nm_->down, ZS_LEAF_LINEAR, ZS_ROLE_DOWN, m->intermediate, h, hb);
    } else if (m->gate_up_fused) {
        /* Phi3MLP: gate_up_proj hidden -> 2 x intermediate, chunked. */
        LAY(nm_->gate_up, ZS_LEAF_LINEAR, ZS_ROLE_GATE | ZS_ROLE_UP, h,
            2 * m->intermediate, 2 * ib);
        LAY(nm_->down, ZS_LEAF_LINEAR, ZS_ROLE_DOWN, m->intermediate, h, hb);
    } else {
        LAY(nm_->gate, ZS_LEAF_LINEAR, ZS_ROLE_GATE, h, m->intermediate, ib);
        LAY(nm_->up, ZS_LEAF_LINEAR, ZS_ROLE_UP, h, m->intermediate, ib);
        LAY(nm_->down, ZS_LEAF_LINEAR, ZS_ROLE_DOWN, m->intermediate, h, hb);
    }
    return ok;
}

static int build_leaves(struct zs_model *m, struct zs_err *err)
{
    const struct leaf_names *nm_ = family_names(m->family);
    int64_t h = m->hidden, d = m->head_dim;
    int64_t hq = m->n_heads * d, hkv = m->n_kv_heads * d;
    int64_t qb = m->qkv_bias ? hq : 0, kvb = m->qkv_bias ? hkv : 0;
    int64_t nb = m->norm == ZS_NORM_LAYER && m->norm_bias; /* bias vector */
    int ok = 1;
    const char *in_norm = nm_->in_norm, *mlp_norm = nm_->mlp_norm;

    m->n_pre = m->n_layer_leaves = m->n_post = 0;

    zs_strlcpy(m->layer_prefix, nm_->layers, sizeof m->layer_prefix);
    PRE(nm_->embed, ZS_LEAF_EMBED, 0, h, m->vocab, 0);
    /* Learned absolute positions: nn.Embedding(pos_rows, hidden) (GPT-2 wpe
     * n_positions rows; OPTLearnedPositionalEmbedding max + 2 rows). */
    if (m->pos == ZS_POS_LEARNED)
        PRE(nm_->pos ? nm_->pos : "embed_positions", ZS_LEAF_EMBED, 0, h,
            m->pos_rows, 0);
    if (m->embed_norm)
        PRE(nm_->embed_norm ? nm_->embed_norm : "embed_norm", ZS_LEAF_NORM, 0,
            h, h, nb * h);

    /* Falcon new_decoder_architecture with two norms: ln_attn / ln_mlp. */
    if (m->family == ZS_FAM_FALCON && m->block == ZS_BLOCK_PARALLEL_2NORM) {
        in_norm = "ln_attn";
        mlp_norm = "ln_mlp";
    }
    LAY(in_norm, ZS_LEAF_NORM, 0, h, h, nb * h);
    if (m->qkv_fused) {
        /* One projection hidden -> (heads + 2 kv heads) x head_dim: Falcon
         * FalconAttention (multi_query: hidden + 2 head_dim), GPT-NeoX,
         * BLOOM, GPT-2 c_attn, MPT Wqkv, Phi-3 qkv_proj. */
        LAY(nm_->qkv, ZS_LEAF_LINEAR, ZS_ROLE_Q | ZS_ROLE_K | ZS_ROLE_V, h,
            hq + 2 * hkv, qb + 2 * kvb);
    } else {
        /* Qwen3 normalises q and k per head before RoPE (Qwen3Attention:
         * q_norm/k_norm = Qwen3RMSNorm(head_dim)), in this order. */
        LAY(nm_->q, ZS_LEAF_LINEAR, ZS_ROLE_Q, h, hq, qb);
        if (m->qk_norm)
            LAY("self_attn.q_norm", ZS_LEAF_NORM, 0, d, d, 0);
        LAY(nm_->k, ZS_LEAF_LINEAR, ZS_ROLE_K, h, hkv, kvb);
        if (m->qk_norm)
            LAY("self_attn.k_norm", ZS_LEAF_NORM, 0, d, d, 0);
        LAY(nm_->v, ZS_LEAF_LINEAR, ZS_ROLE_V, h, hkv, kvb);
    }
    LAY(nm_->o, ZS_LEAF_LINEAR, ZS_ROLE_O, hq, h, m->o_bias ? h : 0);
    if (m->sandwich_norm)
        LAY(nm_->post_attn_norm, ZS_LEAF_NORM, 0, h, h, nb * h);
    /* A parallel block with one shared norm has no second norm. */
    if (m->block != ZS_BLOCK_PARALLEL && mlp_norm)
        LAY(mlp_norm, ZS_LEAF_NORM, 0, h, h, nb * h);
    ok &= build_mlp(m, nm_);
    if (m->sandwich_norm)
        LAY(nm_->post_mlp_norm, ZS_LEAF_NORM, 0, h, h, nb * h);

    POST(nm_->final_norm, ZS_LEAF_NORM, 0, h, h, nb * h);
    /* An untied LM head is its own hidden x vocab matrix (+ a bias for
     * phi-2's lm_head).  A tied one (PreTrainedModel.tie_weights:
     * lm_head.weight = embed_tokens.weight) still runs the hidden x vocab
     * GEMM and the loss; its weight is counted once, at the embedding, so
     * the leaf owns no parameters and records the shared ones. */
    POST(nm_->lm_head, ZS_LEAF_LM_HEAD, 0, h, m->vocab,
         m->lm_head_bias ? m->vocab : 0);
    if (ok && m->tie_embeddings) {
        struct zs_leaf *lh = &m->post[m->n_post - 1];
        lh->tied_params = h * m->vocab;
        lh->params -= h * m->vocab;
        lh->params_active = lh->params;
        lh->n_tensors = lh->params ? 1 : 0;
    }
#undef PRE
#undef LAY
#undef POST
    if (!ok)
        return zs_err_set(err, ZS_ELIMIT,
                          "internal: too many modules in model '%s'", m->name);
    return 0;
}

static int64_t sum_leaves(const struct zs_leaf *l, int n, int active)
{
    int64_t s = 0;
    for (int i = 0; i < n; i++)
        s += active ? l[i].params_active : l[i].params;
    return s;
}

int64_t zs_model_leaf_sum(const struct zs_model *m)
{
    return sum_leaves(m->pre, m->n_pre, 0) +
           m->n_layers * sum_leaves(m->layer, m->n_layer_leaves, 0) +
           sum_leaves(m->post, m->n_post, 0);
}

/* The shape's invariants, and the figures derived from them (head_dim,
 * sliding layers, dropout sites). */
/* "invalid model 'm': a (av) must be a multiple of b (bv)". */
static int not_multiple(const struct zs_model *m, const char *a, int64_t av,
                        const char *b, int64_t bv, struct zs_err *err)
{
    return zs_err_set(err, ZS_EINPUT,
                      "invalid model '%s': %s (%lld) must be a multiple of %s "
                      "(%lld)",
                      m->name, a, (long long)av, b, (long long)bv);
}

static int finish_check(struct zs_model *m, struct zs_err *err)
{
    /* The loaders check these with file positions; this is the backstop for
     * callers that fill the struct by hand (STYLE 13). */
    if (m->hidden < 1 || m->n_layers < 1 || m->n_heads < 1 ||
        m->n_kv_heads < 1 || m->vocab < 1 || m->intermediate < 0)
        return zs_err_set(err, ZS_EINPUT,
                          "invalid model '%s': hidden, layers, heads, kv heads "
                          "and vocab must be >= 1",
                          m->name);
    if (m->n_heads % m->n_kv_heads)
        return not_multiple(m, "num_attention_heads", m->n_heads,
                            "num_key_value_heads", m->n_kv_heads, err);
    if (m->head_dim < 1) {
        if (m->hidden % m->n_heads)
            return not_multiple(m, "hidden_size", m->hidden,
                                "num_attention_heads", m->n_heads, err);
        m->head_dim = m->hidden / m->n_heads;
    }
    if (m->n_experts > 0 &&
        (m->experts_per_token < 1 || m->experts_per_token > m->n_experts ||
         m->moe_intermediate < 1))
        return zs_err_set(err, ZS_EINPUT,
                          "invalid model '%s': experts_per_token must be in "
                          "[1, %lld] and moe_intermediate_size >= 1",
                          m->name, (long long)m->n_experts);
    if (m->n_extra < 0 || m->n_extra > ZS_MODEL_MAX_EXTRA)
        return zs_err_set(err, ZS_ELIMIT, "internal: bad extra count");
    if (m->pos == ZS_POS_LEARNED && m->pos_rows < 1)
        return zs_err_set(err, ZS_EINPUT,
                          "invalid model '%s': learned positions need a "
                          "position table of >= 1 rows",
                          m->name);
    if (m->n_experts > 0 && m->mlp != ZS_MLP_GATED)
        return zs_err_set(err, ZS_EINPUT,
                          "invalid model '%s': MoE experts are gated MLPs",
                          m->name);
    if (m->sliding_layers <= 0 || m->sliding_layers > m->n_layers)
        m->sliding_layers = m->n_layers;
    if (!(m->attn_dropout >= 0 && m->attn_dropout < 1) ||
        !(m->resid_dropout >= 0 && m->resid_dropout < 1))
        return zs_err_set(err, ZS_EINPUT,
                          "invalid model '%s': dropout probabilities must be "
                          "in [0, 1)",
                          m->name);
    /* FalconDecoderLayer, parallel: one dropout_add of (mlp + attention)
     * output; every other family drops the attention and the MLP outputs
     * apart (GPT2Block, OPTDecoderLayer, GPTNeoXLayer, BloomBlock, MptBlock,
     * PhiDecoderLayer resid_dropout twice, Phi3DecoderLayer). */
    m->resid_dropout_sites =
        m->resid_dropout > 0
            ? (m->family == ZS_FAM_FALCON && m->block != ZS_BLOCK_SEQUENTIAL
                   ? 1
                   : 2)
            : 0;
    return 0;
}

/* Parameter counts: per layer, language model, total, active, embedding. */
static void finish_counts(struct zs_model *m)
{
    m->params_layer = sum_leaves(m->layer, m->n_layer_leaves, 0);
    m->params_lm = zs_model_leaf_sum(m);
    m->params_total = m->params_lm;
    m->params_active =
        sum_leaves(m->pre, m->n_pre, 1) +
        m->n_layers * sum_leaves(m->layer, m->n_layer_leaves, 1) +
        sum_leaves(m->post, m->n_post, 1);
    /* model.h: params_active includes the extras (towers, talker). */
    for (int i = 0; i < m->n_extra; i++) {
        m->params_total += m->extra[i].params;
        m->params_active += m->extra[i].params;
    }
    m->params_embedding = 0;
    for (int i = 0; i < m->n_pre; i++)
        if (m->pre[i].kind == ZS_LEAF_EMBED)
            m->params_embedding += m->pre[i].params;
    for (int i = 0; i < m->n_post; i++)
        if (m->post[i].kind == ZS_LEAF_LM_HEAD)
            m->params_embedding += m->post[i].params;
}

static void finish_largest(struct zs_model *m)
{
    int64_t best = -1;

    /* Largest single module's direct parameters: DeepSpeed's
     * largest_layer_params (max over model.modules() of
     * sum(p.numel() for p in m.parameters(recurse=False)); peer-tools.md),
     * except that an MoE expert block counts as one (set_z3_leaf_modules). */
    m->largest_leaf_name[0] = '\0';
    m->largest_leaf_params = 0;
    for (int i = 0; i < m->n_pre; i++)
        if (m->pre[i].params > best) {
            best = m->pre[i].params;
            zs_strlcpy(m->largest_leaf_name, m->pre[i].name,
                       sizeof m->largest_leaf_name);
        }
    for (int i = 0; i < m->n_layer_leaves; i++)
        if (m->layer[i].params > best) {
            best = m->layer[i].params;
            snprintf(m->largest_leaf_name, sizeof m->largest_leaf_name,
                     "%.31s*.%.60s", m->layer_prefix,
                     m->layer[i].name);
        }
    for (int i = 0; i < m->n_post; i++)
        if (m->post[i].params > best) {
            best = m->post[i].params;
            zs_strlcpy(m->largest_leaf_name, m->post[i].name,
                       sizeof m->largest_leaf_name);
        }
    m->largest_leaf_params = best;
}

int zs_model_finish(struct zs_model *m, struct zs_err *err)
{
    int rc = finish_check(m, err);
    if (!rc)
        rc = build_leaves(m, err);
    if (rc)
        return rc;
    finish_counts(m);
    finish_largest(m);
    return 0;
}

/* ---- Training method ----------------------------------------------------- */

static unsigned popcount3(unsigned x)
{
    return ((x & ZS_ROLE_GATE) != 0) + ((x & ZS_ROLE_UP) != 0) +
           ((x & ZS_ROLE_DOWN) != 0);
}

int64_t zs_leaf_trainable(const struct zs_leaf *l,
                          const struct zs_method_opts *mo)
{
    unsigned targets;
    int64_t r;
    if (!mo || mo->method == ZS_METHOD_FULL)
        return l->params;
    r = mo->lora_rank > 0 ? mo->lora_rank : 16;
    targets = mo->lora_targets ? mo->lora_targets : ZS_ROLE_ALL_LINEAR;
    /* PEFT LoRA: lora_A (in x r) and lora_B (r x out), no bias; the base
     * layer is frozen (peft/tuners/lora/layer.py Linear.update_layer). */
    if (l->kind == ZS_LEAF_LINEAR && (l->role & targets))
        return r * (l->in_features + l->out_features);
    if (l->kind == ZS_LEAF_EXPERTS && (l->role & targets)) {
        /* Per expert and per targeted projection: gate and up are
         * hidden -> moe_intermediate, down the reverse; all r*(h+mi). */
        int64_t per = l->in_features * l->out_features * 3;
        int64_t n_experts = per ? l->params / per : 0;
        return n_experts * (int64_t)popcount3(l->role & targets) * r *
               (l->in_features + l->out_features);
    }
    return 0;
}

int64_t zs_model_trainable(const struct zs_model *m,
                           const struct zs_method_opts *mo)
{
    int64_t s = 0, layer = 0;
    for (int i = 0; i < m->n_pre; i++)
        s += zs_leaf_trainable(&m->pre[i], mo);
    for (int i = 0; i < m->n_layer_leaves; i++)
        layer += zs_leaf_trainable(&m->layer[i], mo);
    s += m->n_layers * layer;
    for (int i = 0; i < m->n_post; i++)
        s += zs_leaf_trainable(&m->post[i], mo);
    /* Extras train in a full fine-tune when their default says so; under
     * LoRA they stay frozen ([assumption]: adapters are put on the language
     * model's projections only, the default target list). */
    for (int i = 0; i < m->n_extra; i++)
        if ((!mo || mo->method == ZS_METHOD_FULL) &&
            m->extra[i].trainable_default &&
            m->extra[i].placement_default != ZS_PLACE_DISABLED)
            s += m->extra[i].params;
    return s;
}

/* Bytes of n elements in bitsandbytes NF4 with double quantisation
 * (bitsandbytes/functional.py quantize_4bit, blocksize 64,
 * compress_statistics=True; QLoRA paper, Dettmers et al. 2023, §2
 * "Double Quantization"): 4 bits per element, one 8-bit absmax per block of
 * 64, and the absmax values themselves quantised in blocks of 256 with one
 * fp32 scale each.  The 256-entry code table is shared and not counted. */
static int64_t nf4_bytes(int64_t n)
{
    int64_t blocks = (n + 63) / 64;
    return (n + 1) / 2 + blocks + 4 * ((blocks + 255) / 256);
}

int64_t zs_leaf_weight_bytes(const struct zs_leaf *l,
                             const struct zs_method_opts *mo)
{
    if (!mo || mo->method != ZS_METHOD_QLORA)
        return 2 * l->params; /* bf16 */
    /* transformers' bitsandbytes integration replaces every nn.Linear but
     * the output embedding (get_keys_to_not_convert keeps lm_head); norms and
     * the embedding stay bf16.  Biases of Linear4bit keep the compute dtype.
     * The MoE router is an nn.Linear and is quantised too. */
    switch (l->kind) {
    case ZS_LEAF_LINEAR:
    case ZS_LEAF_ROUTER: {
        int64_t w = l->in_features * l->out_features;
        return nf4_bytes(w) + 2 * (l->params - w);
    }
    case ZS_LEAF_EXPERTS:
        /* One quantised tensor per expert projection. */
        return (int64_t)l->n_tensors *
               nf4_bytes(l->in_features * l->out_features);
    default:
        return 2 * l->params;
    }
}

/* ---- FLOPs --------------------------------------------------------------- */

static double gemm_flops(const struct zs_leaf *l, int n)
{
    double f = 0;
    for (int i = 0; i < n; i++)
        f += 2.0 * (double)l[i].in_features * (double)l[i].out_features *
             (double)l[i].gemms;
    return f;
}

/* Keys a query attends to at sequence length seq: the whole sequence in the
 * PaLM convention, capped by a sliding window (Mistral-7B-v0.1:
 * sliding_window 4096, modeling_mistral.py). */
static double attended(const struct zs_model *m, int64_t seq)
{
    /* Gemma-2 windows every other layer (Gemma2DecoderLayer: is_sliding =
     * not bool(layer_idx % 2)): the mean over layers, so that n_layers x
     * this is exact. */
    double frac = m->n_layers > 0 && m->sliding_layers > 0
                      ? (double)m->sliding_layers / (double)m->n_layers
                      : 1.0;
    if (m->sliding_window > 0 && m->sliding_window < seq)
        return frac * (double)m->sliding_window + (1 - frac) * (double)seq;
    return (double)seq;
}

double zs_model_flops_per_token_fwd(const struct zs_model *m, int64_t seq)
{
    /* PaLM (Chowdhery et al. 2022) appendix B: forward FLOPs per token =
     * 2N (N: matmul parameters used per token, lm_head included, embedding
     * lookup excluded) + 2 * 2 * seq * n_heads * head_dim per layer for
     * QK^T and PV over the full (non-causal) square. */
    double f = gemm_flops(m->pre, m->n_pre) +
               (double)m->n_layers * gemm_flops(m->layer, m->n_layer_leaves) +
               gemm_flops(m->post, m->n_post);
    f += (double)m->n_layers * 4.0 * attended(m, seq) * (double)m->n_heads *
         (double)m->head_dim;
    for (int i = 0; i < m->n_extra; i++)
        if (m->extra[i].placement_default != ZS_PLACE_DISABLED)
            f += m->extra[i].flops_per_token_fwd;
    return f;
}

double zs_model_attn_core_flops(const struct zs_model *m, int64_t seq)
{
    /* QK^T and PV: 2 * 2 * head_dim FLOPs per (query, key) pair per head.
     * Causal: pairs = seq^2 / 2, the count flash-attention's own benchmark
     * uses (flash-attention benchmarks/benchmark_flash_attention.py
     * flops(): 4 * seq^2 * head_dim * heads, halved when causal).  With a
     * sliding window w < seq: seq*w - w^2/2 pairs. */
    double s = (double)seq, pairs;
    if (m->sliding_window > 0 && m->sliding_window < seq) {
        /* Mean over layers when only some use the window (Gemma-2). */
        double w = (double)m->sliding_window;
        double frac = m->n_layers > 0 && m->sliding_layers > 0
                          ? (double)m->sliding_layers / (double)m->n_layers
                          : 1.0;
        pairs = frac * (s * w - w * w / 2) + (1 - frac) * s * s / 2;
    } else {
        pairs = s * s / 2;
    }
    return 4.0 * (double)m->head_dim * (double)m->n_heads * pairs;
}

/* ---- Activations --------------------------------------------------------- */

static int64_t sat(double v)
{
    if (!(v > 0))
        return 0;
    if (v >= 9.2e18)
        return INT64_MAX;
    return (int64_t)llround(v);
}

/* Shapes of one layer's activation terms, in elements, for t tokens. */
struct act_dims {
    double t, h, hq, hkv, i, a, kv, s, r;
    double hkv_attn; /* width of the k and v the attention core keeps */
    double cp;       /* context-parallel degree (1: none) */
    double E, k, mi; /* MoE; k = 0 when dense */
    int qk_norm, lora;
    int hf; /* HF eager kernels (zs_act_opts.kernels == 0) */
    int compiled; /* torch.compile (zs_act_opts.kernels == 2) */
    double stats;    /* fp32 bytes per token a norm saves: RMSNorm rstd 4,
                        LayerNorm mean + rstd 8 */
    int rms;         /* RMSNorm (fp32 temporaries in HF's unfused forward) */
    enum zs_block_kind block;
    int sandwich;    /* Gemma-2's extra norms */
    int plain;       /* non-gated MLP */
    double mlp_ti;   /* dense MLP bytes saved per token x intermediate */
    double n_attn_lin, n_mlp_lin; /* linear leaves (LoRA adapters) */
    double n_exp_lin;             /* adapted expert projections, 0-3 */
    double lora_drop_in; /* lora_dropout > 0: summed input width of the
                            adapted dense linears */
    int attn_drop;   /* dropout on the attention probabilities */
    int sm_half;     /* eager softmax in the 16-bit compute dtype */
    int clamp;       /* eager scores clamped at finfo.min (OPT 4.21) */
    double resid_drop_sites;
};

/* Bytes per token and intermediate channel that a dense MLP keeps for
 * backward, by activation.  Each tensor is bf16 (2 B); autograd's saved
 * tensors per op follow torch's derivatives.yaml.
 *   gated (act(gate) * up): gate out (act input), act out, up out, product
 *     (down's input): 4 tensors = 8.  Phi-3's fused gate_up keeps the same
 *     storage (chunk views), Gemma's gelu_pytorch_tanh gate the same.
 *   plain, act saving its input (F.gelu, nn.GELU, gelu_pytorch_tanh, BLOOM's
 *     GeLUFunction, SiLU): fc_in out + act out (fc_out's input) = 4.
 *   plain ReLU (OPT): relu's backward uses its result, which is also fc2's
 *     input; fc1's output is freed: 2.
 *   plain gelu_new (NewGELUActivation: 0.5 * x * (1 + tanh(c * (x + 0.044715
 *     * x^3)))): pow keeps x, tanh its output T, the final product keeps
 *     0.5x and 1 + T; plus the output: x, T, 0.5x, 1+T, out = 10.
 *   plain gelu_fast (FastGELUActivation: 0.5 * x * (1 + tanh(x * c * (1 +
 *     0.044715 * x * x)))): x, 0.044715x (kept by * x), x*c and 1 + ... (kept
 *     by their product), T, 0.5x, 1+T, out = 16.
 * (transformers activations.py; a fused kernel keeps 4 for any GELU:
 * docs/model.md.) */
static double mlp_bytes_per_ti(const struct zs_model *m)
{
    if (m->mlp == ZS_MLP_GATED)
        return 8;
    switch (m->act) {
    case ZS_ACT_RELU:
        return 2;
    case ZS_ACT_GELU_NEW:
        return 10;
    case ZS_ACT_GELU_FAST:
        return 16;
    default:
        return 4;
    }
}

static void act_dims(const struct zs_model *m, const struct zs_act_opts *o,
                     struct act_dims *d)
{
    double sp = o->sp > 0 ? o->sp : 1;
    double b = o->micro_batch > 0 ? (double)o->micro_batch : 1;
    unsigned targets;
    d->s = (double)o->seq;
    d->t = b * d->s / sp;
    d->cp = o->cp > 1 ? o->cp : 1;
    d->h = (double)m->hidden;
    d->a = (double)m->n_heads;
    d->kv = (double)m->n_kv_heads;
    d->hq = d->a * (double)m->head_dim;
    d->hkv = d->kv * (double)m->head_dim;
    /* torchtune MultiHeadAttention.forward (torchtune/modules/attention.py
     * at 1814feb17a9038e1a8053ce93111bd26774a8db6, "if self.num_heads !=
     * self.num_kv_heads": k.unsqueeze(2).expand(...).flatten(1, 2), the
     * same for v) copies k and v to every query head before SDPA or flex
     * attention, which save those copies; the unexpanded k and v are
     * dropped (expand and the reshape save nothing).  Packed batches call
     * flex attention behind torch.compiler.disable (attention_utils.py
     * compile_friendly_flex_attention), a graph break, so a compiled layer
     * hands flex the expanded copies too; [assumption] the same for a
     * compiled layer calling SDPA. */
    d->hkv_attn = o->torchtune ? d->hq : d->hkv;
    d->i = (double)m->intermediate;
    d->E = (double)m->n_experts;
    d->k = m->n_experts ? (double)m->experts_per_token : 0;
    d->mi = (double)m->moe_intermediate;
    d->qk_norm = m->qk_norm;
    d->lora = o->method != ZS_METHOD_FULL;
    d->r = o->lora_rank > 0 ? o->lora_rank : 16;
    d->hf = o->kernels == 0;
    d->compiled = o->kernels == 2;
    d->rms = m->norm == ZS_NORM_RMS;
    /* nn.LayerNorm (native_layer_norm) saves input, mean and rstd (fp32 per
     * row); RMSNorm input and rstd. */
    d->stats = d->rms ? 4 : 8;
    d->block = m->block;
    d->sandwich = m->sandwich_norm;
    d->plain = m->mlp == ZS_MLP_PLAIN;
    d->mlp_ti = mlp_bytes_per_ti(m);
    d->attn_drop = m->attn_dropout > 0;
    d->sm_half = o->softmax_half;
    d->clamp = zs_model_eager_code(m) == ZS_EAGER_OPT;
    d->resid_drop_sites = m->resid_dropout_sites;
    d->n_attn_lin = d->n_mlp_lin = d->lora_drop_in = 0;
    /* Adapters only on the targeted linears (as zs_leaf_trainable); routed
     * experts: one per targeted projection (gate, up, down). */
    targets = o->lora_targets ? o->lora_targets : ZS_ROLE_ALL_LINEAR;
    d->n_exp_lin = popcount3(targets);
    for (int j = 0; j < m->n_layer_leaves; j++) {
        const struct zs_leaf *l = &m->layer[j];
        if (l->kind != ZS_LEAF_LINEAR || !(l->role & targets))
            continue;
        if (l->role & (ZS_ROLE_Q | ZS_ROLE_K | ZS_ROLE_V | ZS_ROLE_O))
            d->n_attn_lin += 1;
        else
            d->n_mlp_lin += 1;
        if (d->lora && o->lora_dropout > 0)
            d->lora_drop_in += (double)l->in_features;
    }
}

/* One norm's saved bytes beyond its output (which the next linear keeps):
 * its input and its fp32 statistics (d->stats).  HF eager Qwen2RMSNorm /
 * LlamaRMSNorm (transformers 63bb723, modeling_qwen2.py): x.to(float32) is
 * saved by pow and by x * rsqrt (one fp32 tensor, 4 B), rsqrt's output per
 * token (fp32); to(bf16) and the input cast save nothing; weight * x saves
 * x = the output.  Fused (Liger rms_norm.py, Apex FusedRMSNorm) and inductor
 * save the bf16 input (2 B) and rstd.  nn.LayerNorm is one native kernel in
 * every mode (native_layer_norm saves input, mean and rstd). */
static double norm_saved(const struct act_dims *d, double width)
{
    return (d->hf && d->rms ? 4 : 2) * d->t * width + d->stats * d->t;
}

/* Attention scores per rank: b * (heads / sp) * seq^2 elements = t * a * s
 * (Ulysses: full sequence, heads split); a sliding window caps the keys.
 * Eager attention materialises the full square (the causal mask is added,
 * not skipped). */
static double scores(const struct act_dims *d)
{
    return d->t * d->a * d->s;
}

/* The attention core's saved tensors (beyond its inputs q, k, v), by
 * implementation. */
static double attn_core_saved(const struct act_dims *d, enum zs_attn_impl attn)
{
    if (attn != ZS_ATTN_EAGER)
        /* flash_attn_func saves q, k, v, out and the fp32 logsumexp of
         * shape (b, heads, seq) (flash_attn_interface.py
         * FlashAttnFunc.forward: ctx.save_for_backward(q, k, v, out_padded,
         * softmax_lse, ...)).  out is o_proj's input, counted there. */
        return 4 * d->t * d->a;
    /* HF eager_attention_forward: matmul(q, repeat_kv(k)^T) * scaling +
     * mask; softmax(dtype=float32) saves its fp32 output (4 B) for its
     * backward; .to(bf16) then matmul(probs, repeat_kv(v)) saves the bf16
     * probabilities (2 B) and the repeated k and v (the GQA saving is lost:
     * repeat_kv materialises n_heads copies).  Dropout p=0 saves nothing.
     * Korthikanti et al. 2022 count 5as^2b for GPT (softmax 2, dropout mask
     * 1, dropout output 2); without dropout and with the fp32 softmax
     * output, HF's eager path keeps 6as^2b.  With attention dropout
     * (p > 0, train mode) native_dropout saves its bool mask (1 B) and PV
     * saves the dropped probabilities instead of the undropped ones: 7.
     * Flash attention drops inside the kernel and keeps only its RNG state
     * (FlashAttnFunc saves rng_state).
     * Softmax in the 16-bit dtype (d->sm_half: GPT-2's _attn on a model
     * cast to 16 bits): softmax saves its 16-bit output, the .type() is a
     * no-op returning the same tensor, which PV saves too: 2; with dropout
     * mask 1 and the dropped output 2: 5, Korthikanti's 5as^2b. */
    if (d->sm_half)
        return (d->attn_drop ? 5 : 2) * scores(d) +
               2 * d->t * (d->hq - d->hkv_attn) * 2;
    /* OPT 4.21's clamp, torch.max(scores, tensor) = maximum (aten
     * BinaryOps.cpp "binary max, alias for maximum"), saves its input, the
     * masked 16-bit scores, and the 0-dim bound for its backward
     * (derivatives.yaml maximum: "self: at::where(self == other, grad / 2,
     * grad).masked_fill_(self < other, 0)", read at d327a78 [assumption:
     * the same at v1.11, the formula dates from maximum's introduction]):
     * 2 more.  The mask add before it saves nothing (add's backward passes
     * the gradient through). */
    return ((d->attn_drop ? 7 : 6) + (d->clamp ? 2 : 0)) * scores(d) +
           2 * d->t * (d->hq - d->hkv_attn) * 2;
}

/* Saved bytes of one layer with no checkpointing. */
static double saved_none(const struct act_dims *d, enum zs_attn_impl attn)
{
    double t = d->t, v = 0;
    /* input norm: input (the layer input) and its fp32 statistics
     * (norm_saved: HF eager RMSNorm keeps an fp32 copy of its input). */
    v += norm_saved(d, d->h);
    /* q/k/v projections' shared input (the norm output), kept for their
     * weight gradients (Korthikanti: "QKV matrix multiplies ... 2sbh"); a
     * parallel block with one norm feeds the MLP the same tensor. */
    v += 2 * t * d->h;
    /* Qwen3 q_norm/k_norm: inputs and rstd per head. */
    if (d->qk_norm)
        v += (d->hf ? 4 : 2) * t * (d->hq + d->hkv) + 4 * t * (d->a + d->kv);
    /* q, k, v after RoPE (the attention core's inputs).  RoPE multiplies by
     * cos/sin that need no gradient, so its input is not kept; a fused qkv
     * output is split into views of the same size; ALiBi and learned
     * positions touch neither q nor k (torchtune: k and v expanded, see
     * act_dims). */
    v += 2 * t * (d->hq + 2 * d->hkv_attn);
    /* The core's own saved tensors, then its output = o_proj input. */
    v += attn_core_saved(d, attn);
    v += 2 * t * d->hq;
    /* Gemma-2's post_attention_layernorm on the attention output: input and
     * rstd. */
    if (d->sandwich)
        v += norm_saved(d, d->h);
    if (d->block == ZS_BLOCK_SEQUENTIAL)
        /* post-attention norm: input (the residual sum) and statistics,
         * then its output = the MLP input, shared by gate and up (and the
         * router). */
        v += norm_saved(d, d->h) + 2 * t * d->h;
    else if (d->block == ZS_BLOCK_PARALLEL_2NORM)
        /* A second norm of the same layer input (GPT-NeoX
         * post_attention_layernorm(hidden_states), Falcon ln_mlp): its
         * input is the tensor the first norm keeps; its own statistics and
         * output. */
        v += d->stats * t + 2 * t * d->h;
    if (d->k > 0) {
        double tk = t * d->k;
        /* Router (MixtralSparseMoeBlock / Qwen3MoeSparseMoeBlock.forward):
         * softmax(router_logits, dtype=float) saved (fp32, t x E); top-k
         * weights fp32 and int64 indices (t x k). */
        v += 4 * t * d->E + 4 * tk + 8 * tk;
        /* Each routed token: its gathered input (hidden_states[top_x],
         * saved by gate/up), gate out, SiLU out, up out, product (4 x mi),
         * the expert output kept by the multiply with its routing weight,
         * and that weight (bf16). */
        v += 2 * tk * d->h + 8 * tk * d->mi + 2 * tk * d->h + 2 * tk;
    } else {
        /* The MLP's intermediates (mlp_bytes_per_ti: HF eager keeps 4
         * tensors of a gated MLP).  Fused SwiGLU (Liger swiglu.py
         * LigerSiLUMulFunction saves a and b, recomputes silu in backward)
         * and inductor keep gate, up and the product: 3 x t x i.  Residual
         * adds save nothing. */
        v += (d->mlp_ti == 8 && !d->hf ? 6 : d->mlp_ti) * t * d->i;
    }
    /* Gemma-2's post_feedforward_layernorm on the MLP output. */
    if (d->sandwich)
        v += norm_saved(d, d->h);
    /* Residual dropout: native_dropout keeps its bool mask (1 B per
     * element); its output goes into the residual add, which saves
     * nothing. */
    v += d->resid_drop_sites * t * d->h;
    if (d->lora) {
        /* PEFT LoRA: lora_A's input is the base linear's input (shared,
         * lora_dropout 0 -> nn.Identity); lora_B keeps the r-dim
         * intermediate: 2*t*r per adapter (one per linear leaf; per
         * routed token and projection for experts). */
        v += 2 * t * d->r * d->n_attn_lin;
        v += d->k > 0 ? 2 * t * d->k * d->r * d->n_exp_lin
                      : 2 * t * d->r * d->n_mlp_lin;
        /* lora_dropout > 0: peft/tuners/lora/bnb.py and layer.py (v0.10.0,
         * 20beea81) compute lora_B(lora_A(dropout(x))) per adapted linear,
         * so nn.Dropout's output (a bf16 copy of the input, which lora_A
         * saves) and native_dropout's bool mask (1 B) are kept: 3 B per
         * input element of every adapted dense linear [routed experts:
         * not counted] */
        v += 3 * t * d->lora_drop_in;
    }
    return v;
}

/* torchtitan's per-op selective AC (torchtitan/distributed/
 * activation_checkpoint.py `_save_list` and `_custom_policy`, read via the
 * search tool; mode "selective", option "op"): within each TransformerBlock
 * the policy saves the outputs of aten.mm except every second one (a counter
 * per block: wq 1 save, wk 2 skip, wv 3 save, wo 4 skip, w1 5 save, w3 6 skip,
 * w2 7 save) and of SDPA (output + logsumexp); everything else is
 * PREFER_RECOMPUTE, and the block's input is kept by the checkpoint wrapper.
 * Kept per layer: input (2th), q (2t hq), v (2t hkv), SDPA output (2t hq) and
 * logsumexp (4 t a, fp32), gate/w1 output (2t i), down/w2 output (2t h).
 * MoE blocks: the routed experts' gate and down outputs over t*k tokens
 * [assumption: the same every-other-mm rule per expert].
 * Eager, SAC's _CachingTorchDispatchMode stores the output of every
 * MUST_SAVE op whether backward needs it or not (torch/utils/checkpoint.py,
 * `if policy in (MUST_SAVE, PREFER_SAVE) or is_compiling:
 * self.storage[func].append(...)`), so the w2 output, which only the
 * residual add reads, is kept too.  Under torch.compile (torchtitan
 * apply_compile: each checkpointed TransformerBlock, parallelize_llama.py
 * at 9dec370ad26b) the policy becomes node tags and AOTAutograd's min-cut
 * partitioner saves only what the backward graph reads: MUST_SAVE bans a
 * node from recomputation, PREFER_RECOMPUTE counts as must_recompute
 * (torch/_functorch/partitioners.py must_recompute), and nothing in a dense
 * block's backward reads w2's output (mm's backward needs its input and
 * weight, add's nothing): 2th less per layer.  A routed expert's output is
 * read (its product with the routing weight), so MoE keeps it. */
static double saved_op(const struct act_dims *d, enum zs_attn_impl attn)
{
    double t = d->t, v = 0;
    v += 2 * t * d->h;            /* block input */
    v += 2 * t * d->hq;           /* q = wq(x) */
    v += 2 * t * d->hkv;          /* v = wv(x) */
    v += 2 * t * d->hq;           /* SDPA output */
    if (attn != ZS_ATTN_EAGER)
        v += 4 * t * d->a;        /* logsumexp (fp32 per head and token) */
    else
        v += attn_core_saved(d, attn);
    if (d->k > 0)
        v += 2 * t * d->k * (d->mi + d->h);
    else
        v += 2 * t * d->i + (d->compiled ? 0 : 2 * t * d->h); /* w1, w2 out */
    return v;
}

static double saved(const struct act_dims *d, enum zs_ckpt ckpt,
                    enum zs_attn_impl attn)
{
    switch (ckpt) {
    case ZS_CKPT_FULL:
        /* Full recomputation keeps only the layer input (bf16 hidden). */
        return 2 * d->t * d->h;
    case ZS_CKPT_OP:
        return saved_op(d, attn);
    case ZS_CKPT_SELECTIVE:
        /* Korthikanti et al. 2022 §4.2: recompute the attention core only;
         * its inputs (q, k, v) and output stay.  With flash attention only
         * the logsumexp goes: selective is almost none. */
        return saved_none(d, attn) - attn_core_saved(d, attn);
    default:
        return saved_none(d, attn);
    }
}

int64_t zs_model_act_saved_per_layer(const struct zs_model *m,
                                     const struct zs_act_opts *o)
{
    struct act_dims d;
    act_dims(m, o, &d);
    return sat(saved(&d, o->ckpt, o->attn));
}

static double max2(double a, double b)
{
    return a > b ? a : b;
}

/* Context parallelism's transients in one layer's attention (PyTorch
 * torch/distributed/tensor/experimental/_attention.py, read at 0123248;
 * rotate method all-gather, torchtitan's default at 9dec370, load balance
 * and fp32 merging on: _ContextParallelOptions), with t local tokens, cp
 * ranks.  Forward (_templated_ring_attention): the all-gathered K and V of
 * every rank (cp x t x 2 hkv, bf16), the contiguous copies of the local K
 * and V and their concatenation for the exchange (2 + 2 t x 2 hkv x 2 B),
 * and _SDPAMerger's fp32 output with a step's merge temporaries (the
 * block's output in bf16 and in fp32, out - block_out, its weighted
 * product, the partial update's concatenation: 2 + 4 x 4 B per t x hq).
 * Backward (_templated_ring_attention_backward): the gathered K and V
 * again, the contiguous copies and concatenation, the fp32 gradient
 * accumulators of q, k and v (zeros_like(dtype=float32)), the
 * concatenated fp32 dK dV sent to the next rank and the one received
 * (_AllToAllRotater), and a partial update's concatenation of dq (4 t hq).
 * [inference from the code, not measured] */
static double cp_work_fwd(const struct act_dims *d)
{
    double t = d->t, kv = 2 * d->hkv_attn;
    if (d->cp <= 1)
        return 0;
    return 2 * d->cp * t * kv + 4 * t * kv + 18 * t * d->hq;
}

static double cp_work_bwd(const struct act_dims *d)
{
    double t = d->t, kv = 2 * d->hkv_attn;
    if (d->cp <= 1)
        return 0;
    return 2 * d->cp * t * kv + 4 * t * kv + 4 * t * d->hq + 4 * t * kv +
           8 * t * kv + 4 * t * d->hq;
}

/* Transient bytes of one layer's forward beyond what it saves. */
static double work_fwd(const struct act_dims *d, enum zs_ckpt ckpt,
                       enum zs_attn_impl attn)
{
    double t = d->t;
    /* HF RMSNorm upcasts to fp32 and normalises in fp32: two t x h fp32
     * temporaries (LlamaRMSNorm.forward); nn.LayerNorm is one kernel that
     * writes its bf16 output (statistics are saved, above). */
    double norm = d->rms ? 8 * t * d->h : 2 * t * d->h, at = 0, mlp;
    if (attn == ZS_ATTN_EAGER && d->sm_half)
        /* 16-bit softmax: the masked scores and the next op's output (2 +
         * 2), or under no-grad the softmax output with dropout's mask and
         * output (2 + 1 + 2) [assumption, as below]. */
        at = ckpt != ZS_CKPT_NONE && d->attn_drop ? 5 * scores(d)
                                                  : 4 * scores(d);
    else if (attn == ZS_ATTN_EAGER)
        /* Scores bf16 and their scaled/masked copy alive together; when the
         * softmax is not saved (checkpointed), the fp32 softmax output and
         * the bf16 probabilities are transient too [assumption]. */
        at = ckpt == ZS_CKPT_NONE ? 4 * scores(d) : 6 * scores(d);
    else
        at = cp_work_fwd(d);
    if (ckpt == ZS_CKPT_FULL) {
        /* No-grad forward: act(gate) * up keeps act, up and the product
         * alive together [assumption]; MoE runs experts one by one over
         * t*k/E tokens each on average, plus the output accumulator. */
        mlp = d->k > 0   ? 2 * t * d->h + 6 * (t * d->k / d->E) * d->mi
              : d->plain ? 4 * t * d->i /* fc_in out and act out */
                         : 6 * t * d->i;
    } else {
        mlp = 2 * t * d->h; /* down_proj output before the residual add */
    }
    return max2(norm, max2(at, mlp));
}

/* Transient bytes while one layer runs backward. */
static double work_bwd(const struct act_dims *d, enum zs_ckpt ckpt,
                       enum zs_attn_impl attn)
{
    double t = d->t;
    /* The gradient arriving at the layer output and the one being built for
     * its input (bf16 each). */
    double base = 4 * t * d->h;
    /* Liger's kernels (--kernels fused) write their input gradients over
     * tensors that already exist (linkedin/Liger-Kernel src/liger_kernel/
     * ops at 43c5fe1 / 06e2af7): LigerRMSNormFunction.backward stores dX
     * into dY ("Here we use dY to store the value of dX to save memory",
     * rms_norm.py rms_norm_backward; its only new buffer, _dW, is SM count
     * x h fp32), and LigerSiLUMulFunction.backward stores da and db into
     * the saved a and b (swiglu.py _swiglu_backward_kernel: "tl.store(a_ptr
     * + col_offsets, da_row ...)", "tl.store(b_ptr + col_offsets, db_row
     * ...)").  Apex-style fused norms allocate dX [assumption: the flag
     * follows Liger, as the corpus's fused runs use it].  Gemma-2's
     * sandwich norms are patched with in_place=False (LigerRMSNormForGemma2:
     * the residual still needs dY), so they allocate dX, 2 t h [assumption:
     * every sandwich-norm model patched so]. */
    bool liger = !d->hf && !d->compiled;
    double norm = !d->rms                   ? 2 * t * d->h
                  : liger && !d->sandwich ? 0
                  : liger                 ? 2 * t * d->h
                                          : 8 * t * d->h;
    /* MLP backward: grads of the product, SiLU output and up output alive
     * together, then the gate grad [assumption]; a plain MLP: the grads of
     * the activation's output and input [assumption]; Liger's gated MLP:
     * the product's gradient dc alone (da, db in place, above). */
    double mlp = d->k > 0   ? 6 * (t * d->k / d->E) * d->mi + 2 * t * d->h
                 : d->plain ? 4 * t * d->i
                 : liger    ? 2 * t * d->i
                            : 6 * t * d->i;
    double at;
    if (attn == ZS_ATTN_EAGER)
        /* grad of the bf16 probabilities upcast to fp32 and the fp32
         * softmax gradient, with the saved fp32 output [assumption]; a
         * 16-bit softmax: the probabilities' and the softmax's 16-bit
         * gradients (2 + 2) [assumption, the same pair]. */
        at = (d->sm_half ? 4 : 8) * scores(d) + 2 * t * 3 * d->hq;
    else
        /* dq, dk, dv plus flash-attention 2's fp32 dq accumulator
         * (flash_api.cpp mha_bwd: dq_accum float). */
        at = 2 * t * (d->hq + 2 * d->hkv_attn) + 4 * t * d->hq +
             cp_work_bwd(d);
    if (ckpt == ZS_CKPT_SELECTIVE)
        at += attn_core_saved(d, attn); /* recomputed core */
    double w = base + max2(norm, max2(mlp, at));
    if (ckpt == ZS_CKPT_FULL)
        /* The recomputed layer's saved set (minus the kept input). */
        w += saved_none(d, attn) - 2 * t * d->h;
    if (ckpt == ZS_CKPT_OP)
        /* What the per-op policy did not keep is rebuilt for the block's
         * backward (wk, wo, w3 outputs, norms, SiLU, product). */
        w += saved_none(d, attn) - saved_op(d, attn);
    return w;
}

int64_t zs_model_act_work_fwd(const struct zs_model *m,
                              const struct zs_act_opts *o)
{
    struct act_dims d;
    act_dims(m, o, &d);
    return sat(work_fwd(&d, o->ckpt, o->attn));
}

int64_t zs_model_act_work_bwd(const struct zs_model *m,
                              const struct zs_act_opts *o)
{
    struct act_dims d;
    act_dims(m, o, &d);
    return sat(work_bwd(&d, o->ckpt, o->attn));
}

/* QLoRA's dequantised weight: bitsandbytes' MatMul4Bit
 * (bitsandbytes/autograd/_functions.py at 60a0d8a5084f: forward
 * F.linear(A, F.dequantize_4bit(B, quant_state).to(A.dtype).t()), backward
 * grad_A = matmul(grad_output, F.dequantize_4bit(B, ctx.state).t())) and
 * torchao's LinearNF4 (torchao/dtypes/nf4tensor.py at 0598012907d6:
 * F.linear(input, weight.to(input.dtype)), backward grad_output @
 * weight.to(grad_output.dtype)) both build the whole frozen weight in bf16
 * for each matmul, forward and backward, and drop it after it; one is alive
 * at a time.  The largest of a layer is an MLP projection (i x h; one
 * expert's mi x h under MoE) or q/o (hq x h), 2 B per element. */
int64_t zs_model_dequant_bytes(const struct zs_model *m,
                               const struct zs_act_opts *o)
{
    struct act_dims d;
    if (o->method != ZS_METHOD_QLORA)
        return 0;
    act_dims(m, o, &d);
    return sat(2 * d.h * max2(max2(d.hq, d.hkv), d.k > 0 ? d.mi : d.i));
}

/* zs_model_loss_bytes with Liger's fused linear cross-entropy: b
 * sequences of seq / sp tokens. */
static void loss_liger(const struct zs_model *m, const struct zs_act_opts *o,
                       double b, double sp, struct zs_loss_bytes *out)
{
    /* Liger fused linear cross-entropy (linkedin/Liger-Kernel
     * ops/fused_linear_cross_entropy.py, fused_linear_cross_entropy_
     * forward): chunk = next_pow2(ceil(BT / ceil(V / H))) tokens; per
     * chunk logits = x_chunk @ W^T in bf16, the CE kernel writes their
     * gradient in place; grad_input = zeros_like(x) (BT x H bf16) and
     * grad_weight = zeros_like(W) (V x H bf16) are filled during forward
     * and kept for backward; loss_1d fp32 per token.  The full logits
     * never exist.  All of it is reported as one buffer alive from the
     * loss to lm_head's backward. */
    double bt = b * (double)o->seq / sp, h = (double)m->hidden;
    double v = (double)m->vocab;
    double inc = ceil(v / h), cs = 1;
    while (cs < ceil(bt / inc))
        cs *= 2;
    if (cs > bt)
        cs = bt;
    memset(out, 0, sizeof *out);
    out->pieces = 1;
    out->logits_bf16 = sat(2 * cs * v + 2 * bt * h + 2 * v * h + 4 * bt);
    out->peak = out->logits_bf16;
}

/* loss_chunked when the recipe compiles the loss (compile=True:
 * training.compile_loss wraps CEWithChunkedOutputLoss.compute_cross_entropy
 * alone in torch.compile, torchtune/training/_compile.py:74-77 at
 * 1814feb17a9038e1a8053ce93111bd26774a8db6; recipes/lora_finetune_single_
 * device.py:295-296).  Inductor fuses `logits.float()` and cross_entropy of
 * one chunk into reductions over the bf16 chunk: neither the fp32 upcast nor
 * the log-softmax is a tensor.  What the compiled chunk saves for backward is
 * chosen by AOTAutograd's min-cut partitioner (torch/_functorch/
 * partitioners.py, should_ban_recomputation: an op whose output is over 4x
 * smaller than its inputs, a row reduction here, is saved rather than
 * recomputed; the elementwise rest is recomputed from the cheapest saved
 * inputs): the bf16 chunk itself (already alive, and now kept by the graph,
 * so `del logits` frees nothing) and per row the fp32 max and log-sum-exp
 * (8 B per token).  Its backward writes d(chunk) in bf16 directly (the
 * .float() cast's backward fused in): 2 tV/K per chunk.  Peak: all bf16
 * chunks + the row statistics + one bf16 gradient chunk, at the first
 * chunk's backward.  [inference from the compiler's rules, not measured;
 * the README table's LoRA/QLoRA rows (4.6 and 8.5 GiB peak active) leave no
 * room for a saved fp32 log-softmax of 3.9 GiB.] */
static void loss_chunked_compiled(const struct zs_act_opts *o, double rows,
                                  double tv, double tcv,
                                  struct zs_loss_bytes *out)
{
    out->fused_upcast = true;
    out->logits_bf16 = sat(2 * tv);
    out->logprobs_fp32 = sat(8 * rows);
    out->grad_bf16 = sat(2 * tcv);
    out->logits_freed_in_fwd = false;
    out->peak = sat(2 * tv + (double)o->loss_chunks * 8 * rows + 2 * tcv);
}

/* zs_model_loss_bytes with torchtune's chunked output loss: tv = tokens x
 * vocab of the whole micro-batch. */
static void loss_chunked(const struct zs_model *m, const struct zs_act_opts *o,
                         double b, double tv, struct zs_loss_bytes *out)
{
    /* torchtune CEWithChunkedOutputLoss with TransformerDecoder.
     * chunked_output (torchtune/modules/loss/ce_chunked_output_loss.py,
     * modules/transformer.py, recipes/lora_finetune_single_device.py
     * _loss_step, all at 0031bfb080bd35ec533c412df883cf2bf7bf7fe4):
     *   output = [self.output(c) for c in h.chunk(K, dim=1)]
     *                                   K bf16 chunks of ceil(s/K)
     *                                   tokens: 2 tV in all
     *   for each chunk: F.cross_entropy(chunk.float(), ...)
     *                                   one fp32 upcast chunk alive at a
     *                                   time (4 tV/K); log_softmax saves
     *                                   its fp32 output of every chunk
     *                                   (4 tV in all)
     *   del logits                      the recipe drops the list, and
     *                                   nothing saves the bf16 chunks
     *                                   (to-copy keeps no input): they go
     *                                   at the end of forward
     * Forward peak at the last chunk: 2 tV + 4 tV + 4 tV/K.  Backward,
     * per chunk: nll_loss_backward's dense fp32 gradient and
     * log_softmax_backward's (8 tV/K), then the bf16 cast for the
     * chunk's projection backward (2 tV/K); the saved log-softmax
     * outputs are all alive at the first chunk's backward: 4 tV +
     * 8 tV/K.  [inference from the code, not measured.]  The recipes
     * compile compute_cross_entropy when compile is on (--kernels
     * compiled): loss_chunked_compiled. */
    double sp_ = o->sp > 0 ? o->sp : 1;
    double per = ceil((double)o->seq / sp_ / (double)o->loss_chunks);
    double tcv = b * per * (double)m->vocab;
    memset(out, 0, sizeof *out);
    out->pieces = o->loss_chunks;
    if (o->kernels == 2) {
        loss_chunked_compiled(o, b * per, tv, tcv, out);
        return;
    }
    out->logits_bf16 = sat(2 * tv);
    out->logits_fp32 = sat(4 * tcv);
    out->logprobs_fp32 = sat(4 * tcv);
    out->grad_fp32 = sat(8 * tcv);
    out->grad_bf16 = sat(2 * tcv);
    out->logits_freed_in_fwd = true;
    /* the schedules allocate every saved piece at the largest chunk's
     * size (torch.chunk: all but the last have ceil(s/K) tokens) */
    out->peak = sat(max2(2 * tv + (o->loss_chunks + 1) * 4 * tcv,
                         (o->loss_chunks + 2) * 4 * tcv));
}

/* zs_model_loss_bytes with --loss flash-xentropy: flash-attn's fused
 * cross-entropy, llm-foundry's default (llmfoundry/models/mpt/
 * modeling_mpt.py at b2a43a1477a4: loss_fn_config defaults to
 * 'fused_crossentropy' = flash_attn.losses.cross_entropy.CrossEntropyLoss;
 * setup.py pins flash-attn==1.0.9 and its csrc/xentropy).  Its
 * SoftmaxCrossEntropyLossFn (flash_attn/losses/cross_entropy.py, read via
 * the search tool) runs xentropy_cuda_lib.forward on the bf16 logits as
 * they are (the kernel accumulates in fp32 registers: no upcast tensor),
 * saves (logits, lse, labels): the bf16 logits and one fp32 log-sum-exp
 * per row; its backward, inplace_backward False by default, writes a new
 * gradient of the logits' dtype (bf16).  Composer keeps the model output
 * in state.outputs through backward, so the logits stay until lm_head's
 * backward.  Peak 2 tV + 2 tV + 4 rows (row_bytes 4).
 *
 * A whole-logits cross-entropy under torch.compile (torchtitan compiles its
 * loss_fn with the model since components/loss.py build_cross_entropy_loss
 * at e7c0cae / bcdeaa37: "loss_fn = torch.compile(loss_fn)"; the model's
 * compiled forward with HF's loss inside): AOTAutograd's min-cut partitioner
 * (torch/_functorch/partitioners.py, min_cut_rematerialization_partition,
 * should_ban_recomputation: an op whose output is 4x smaller than its
 * inputs, a reduction, is saved, not recomputed; pointwise ops are
 * recomputed) saves the graph's bf16 input and the row max and
 * log-sum-exp (fp32), and the backward graph recomputes the softmax from
 * them into one fused kernel whose output is the bf16 gradient of the
 * logits.  No full-size fp32 tensor is materialised: the same bytes as
 * the fused cross-entropy kernel, with two row statistics (row_bytes 8). */
static void loss_fused_whole(double rows, double tv, double row_bytes,
                             struct zs_loss_bytes *out)
{
    memset(out, 0, sizeof *out);
    out->pieces = 1;
    out->fused_upcast = true;
    out->logits_bf16 = sat(2 * tv);
    out->logprobs_fp32 = sat(row_bytes * rows);
    out->grad_bf16 = sat(2 * tv);
    out->peak = sat(4 * tv + row_bytes * rows);
}

/* zs_model_loss_bytes with --loss fp32-output.  transformers'
 * LlamaForCausalLM.forward before ForCausalLMLoss (read at 002272831fba,
 * src/transformers/models/llama/modeling_llama.py; Answer.AI's README pins
 * "transformers!=4.38.*,!=4.39.*" for its March 2024 runs):
 *   logits = self.lm_head(hidden_states)   bf16 2 tV, dropped by the next
 *   logits = logits.float()                fp32 4 tV, returned in the output
 *   shift_logits = logits[..., :-1, :].contiguous()
 *                                          fp32 copy 4 tV, freed after the
 *                                          loss (nothing saves it)
 *   loss_fct(shift_logits, ...)            log_softmax saves its fp32 output
 * Forward peak 12 tV.  Answer.AI's train.py keeps `output` (so the fp32
 * logits) until `output = None` after backward and the optimizer step.
 * Backward: nll_loss_backward's dense fp32 gradient and
 * log_softmax_backward's (4 tV each) while the saved output and the held
 * logits are alive: 16 tV; then the slice's backward writes a full-size
 * fp32 gradient of the logits (4 tV) and .float()'s backward the bf16 one
 * (2 tV).  [inference from the code, not measured.] */
/* The whole-logits loss tensors (tV = tokens x vocab): bf16 logits, their
 * fp32 upcast, the saved fp32 log-softmax, an fp32 and a bf16 gradient. */
static void loss_whole(double tv, struct zs_loss_bytes *out)
{
    memset(out, 0, sizeof *out);
    out->pieces = 1;
    out->logits_bf16 = sat(2 * tv);
    out->logits_fp32 = sat(4 * tv);
    out->logprobs_fp32 = sat(4 * tv);
    out->grad_fp32 = sat(4 * tv);
    out->grad_bf16 = sat(2 * tv);
}

/* With `dropped` (--loss fp32-logits) the loop keeps no output: the HF
 * Trainer's compute_loss (transformers 4.38-4.40 trainer.py) returns
 * `(loss, outputs) if return_outputs else loss`, and training_step calls it
 * without return_outputs, so the fp32 logits go before backward: the peak
 * is the forward's 12 tV (backward: the saved log-softmax and two fp32
 * gradients, 12 tV as well). */
static void loss_fp32_output(double tv, bool dropped, struct zs_loss_bytes *out)
{
    loss_whole(tv, out);
    out->shift_fp32 = sat(4 * tv);
    out->fp32_held = true;
    out->output_dropped = dropped;
    out->logits_freed_in_fwd = true;
    out->peak = sat((dropped ? 12 : 16) * tv);
}

/* zs_model_loss_bytes with torchtune's whole-logits loss (--trainer
 * torchtune, --loss full), read at 1814feb17a9038e1a8053ce93111bd26774a8db6:
 *   output = self.output(h).float()   TransformerDecoder.forward
 *                                     (torchtune/modules/transformer.py:652;
 *                                     TiedLinear is F.linear with the
 *                                     embedding, tied_linear.py:25): the
 *                                     bf16 logits (2 tV) are a temporary
 *                                     to-copy does not save, gone at the
 *                                     upcast
 *   logits = self._model(**batch)     the recipe holds the fp32 logits
 *   loss = self._loss_fn(...)         (4 tV) until `del logits` after the
 *   del logits                        loss (recipes/full_finetune_single_
 *                                     device.py:630-645); F.cross_entropy's
 *                                     log_softmax saves its fp32 output
 * Forward: 6 tV at the upcast, then 8 tV.  Backward: nll_loss_backward's
 * dense fp32 gradient and log_softmax_backward's (8 tV) while the saved
 * output is alive: 12 tV; then to-copy's bf16 gradient.  compile=True
 * leaves this loss eager: training.compile_loss returns torch.compile(loss)
 * for a loss that is not chunked (training/_compile.py:81) and the recipe
 * drops the return value (full_finetune_single_device.py:291-292).
 * [inference from the code, not measured] */
static void loss_torchtune_whole(double tv, struct zs_loss_bytes *out)
{
    /* the backward's two fp32 gradients (nll_loss's and log_softmax's,
     * 2 x 4 tV beside the saved log-softmax) are scheduled one by one by
     * fsdp2.c loss_backward_whole, from loss_whole's grad_fp32 (4 tV) */
    loss_whole(tv, out);
    out->upcast_in_model = true;
    out->logits_freed_in_fwd = true;
    out->peak = sat(12 * tv);
}

/* zs_model_loss_bytes with --loss half: the loss on the model's 16-bit
 * logits, no upcast anywhere.  ColossalAI-Pytorch-lightning
 * benchmark/gpt/model.py at 6a82b8015e06288da507d43f17cd40cc644bff03:
 *   logits = self.model(input_ids, attention_mask)   GPTLMModel.forward
 *       returns GPT2LMHeadModel(...)[0], the lm_head output (no labels
 *       given, so no loss inside the model); DeepSpeed's fp16 engine casts
 *       the module to fp16 (no autocast): 2 tV
 *   GPTLMLoss.forward: shift_logits = logits[..., :-1, :].contiguous()
 *       a 16-bit copy (2 tV), then nn.CrossEntropyLoss on it: log_softmax
 *       in fp16 saves its 16-bit output (2 tV)
 *   training_step returns the loss: `logits` and the copy go before
 *       backward (the slice and contiguous save nothing, lm_head saves
 *       its input)
 * Forward peak 6 tV.  Backward: nll_loss_backward's dense 16-bit gradient
 * and log_softmax_backward's (2 + 2 tV) while the saved output is alive:
 * 6 tV; then the slice's backward writes a full-size 16-bit gradient for
 * lm_head (2 tV).  transformers' own 2022 GPT2LMHeadModel / OPTForCausalLM
 * loss (labels given) does the same on fp16 logits: shift, .contiguous(),
 * CrossEntropyLoss, no .float().  [inference from the code, not
 * measured] */
static void loss_half(double tv, struct zs_loss_bytes *out)
{
    memset(out, 0, sizeof *out);
    out->pieces = 1;
    out->half = true;
    out->logits_bf16 = sat(2 * tv);
    out->logits_fp32 = sat(2 * tv);   /* the contiguous shifted copy */
    out->logprobs_fp32 = sat(2 * tv); /* 16-bit log-softmax, saved */
    out->grad_fp32 = sat(4 * tv);     /* nll's and log_softmax's grads */
    out->grad_bf16 = sat(2 * tv);     /* the slice's full-size grad */
    out->logits_freed_in_fwd = true;
    out->peak = sat(6 * tv);
}

/* GPT-2's eager attention (transformers modeling_gpt2.py GPT2Attention.
 * _attn, read at 0010f60284ab4b9d14b7df9c6525b1a2ad44e640; the runs of 2022
 * used 4.21 [assumption: the same lines, this method is unchanged since
 * reorder_and_upcast_attn was added in 4.12]): "attn_weights =
 * nn.functional.softmax(attn_weights, dim=-1)" with no dtype, then
 * "attn_weights.type(value.dtype)", a no-op on a 16-bit model.  Only
 * config.reorder_and_upcast_attn (default False, not in zsim's GPT-2
 * config) upcasts.  Llama's eager_attention_forward passes
 * dtype=torch.float32 and OPT's (4.21 OPTAttention.forward: "upcast to fp32
 * if the weights are in fp16", PR #17437) upcasts fp16: both stay fp32.
 * Other families are not checked and keep the fp32 softmax. */
bool zs_model_eager_softmax_keeps_dtype(const struct zs_model *m)
{
    return m->family == ZS_FAM_GPT2;
}

/* The eager attention code of a family (model.h; the kernels it runs:
 * sched/kernels.c zs_kernels_eager_attn).
 *   GPT-2: GPT2Attention._attn (read at 0010f602, above).
 *   OPT: OPTAttention.forward as transformers 4.21 ran it: "attn_weights =
 *     attn_weights.view(bsz, self.num_heads, tgt_len, src_len) +
 *     attention_mask", "attn_weights = torch.max(attn_weights,
 *     torch.tensor(torch.finfo(attn_weights.dtype).min))", then for fp16
 *     "nn.functional.softmax(attn_weights, dim=-1,
 *     dtype=torch.float32).to(torch.float16)" (PR #17437, merged 2022-06
 *     before v4.21.0); the lines read in PR #19243's diff of
 *     modeling_opt.py (at 34be08e, 2022-09, before it changed only the
 *     dtype test) [assumption: v4.21.0 itself not read, the same lines].
 *     The query is scaled before the bmm ("self.q_proj(hidden_states) *
 *     self.scaling"), so no scale runs over the scores.  Today's OPT runs
 *     eager_attention_forward with scaling=1.0 and no clamp (modeling_opt.py
 *     at 0184d20); zsim has no transformers-version switch and keeps the
 *     4.21 code, the one its OPT runs measured.
 *   Every other family: eager_attention_forward as Qwen2, Llama and Mistral
 *     share it (modeling_qwen2.py at 63bb723) [assumption for the families
 *     whose eager code was not read: GPT-NeoX, Falcon, MPT, BLOOM, Phi,
 *     Phi-3, Gemma-2, the MoE families]. */
enum zs_eager_code zs_model_eager_code(const struct zs_model *m)
{
    switch (m->family) {
    case ZS_FAM_GPT2:
        return ZS_EAGER_GPT2;
    case ZS_FAM_OPT:
        return ZS_EAGER_OPT;
    default:
        return ZS_EAGER_HF;
    }
}

void zs_model_loss_bytes(const struct zs_model *m, const struct zs_act_opts *o,
                         struct zs_loss_bytes *out)
{
    /* Reasoned from transformers v4.51 LlamaForCausalLM.forward and
     * loss/loss_utils.py ForCausalLMLoss (same in Qwen2/Qwen3/Mixtral):
     *   logits = lm_head(hidden)            bf16 t x V, kept by the output
     *                                        object until compute_loss returns
     *   logits = logits.float()             fp32 copy (to-copy saves nothing)
     *   labels padded and shifted (no logits copy since v4.50; 4.46-4.49
     *   made a contiguous fp32 copy of the shifted logits)
     *   cross_entropy -> log_softmax        saves its fp32 output
     * Forward peak: bf16 + fp32 + log_softmax = 10 tV bytes.  The Trainer
     * drops the outputs before backward, so in backward: nll_loss_backward
     * makes a dense fp32 gradient, log_softmax_backward a second one while
     * the saved output is alive (12 tV), then the cast to bf16 for lm_head's
     * backward (fp32 + bf16 = 6 tV).  [inference from the code, not
     * measured.]  Ulysses: each rank holds seq/sp tokens. */
    double sp = o->sp > 0 ? o->sp : 1;
    double b = o->micro_batch > 0 ? (double)o->micro_batch : 1;
    double tv = b * (double)o->seq / sp * (double)m->vocab;
    double fwd, bwd1, bwd2;
    struct zs_act_opts eager;
    if (o->loss_xentropy) {
        loss_fused_whole(b * (double)o->seq / sp, tv, 4, out);
        return;
    }
    if (o->loss_eager && o->kernels != 0) {
        eager = *o;
        eager.kernels = 0;
        eager.loss_eager = false;
        zs_model_loss_bytes(m, &eager, out);
        return;
    }
    if (o->kernels == 1) {
        loss_liger(m, o, b, sp, out);
        return;
    }
    if (o->loss_chunks > 0) {
        loss_chunked(m, o, b, tv, out);
        return;
    }
    if (o->loss_fp32_output) {
        loss_fp32_output(tv, o->loss_output_dropped, out);
        return;
    }
    if (o->loss_half) {
        loss_half(tv, out);
        return;
    }
    if (o->torchtune) {
        loss_torchtune_whole(tv, out);
        return;
    }
    if (o->kernels == 2) { /* a compiled whole loss */
        loss_fused_whole(b * (double)o->seq / sp, tv, 8, out);
        return;
    }
    loss_whole(tv, out);
    /* torchtitan's train loop: `pred = model(input_ids); loss =
     * loss_fn(pred, labels); del pred; loss.backward()` (train.py at
     * 9dec370ad26b, "need to free to before bwd to avoid peaking memory";
     * since PR #391, e29b6b4d4; torchtitan/trainer.py at b5bcd76c6 still):
     * nothing else holds the bf16 logits (ToCopyBackward0 keeps no input,
     * lm_head's mm keeps its input and weight), so they go before backward.
     * An eager loss only: a compiled one may keep them in its graph
     * (loss_chunked_compiled). */
    out->logits_freed_in_fwd = o->logits_dropped && o->kernels == 0;
    fwd = 2 * tv + 4 * tv + 4 * tv;
    bwd1 = 4 * tv + 2 * 4 * tv;
    bwd2 = 4 * tv + 2 * tv;
    out->peak = sat(max2(fwd, max2(bwd1, bwd2)));
}

int64_t zs_model_hidden_bytes_per_token(const struct zs_model *m)
{
    return 2 * m->hidden;
}
