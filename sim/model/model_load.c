/*
 * model_load.c — finding and reading models: the library and its aliases,
 * zsim model JSON (strict: unknown keys are errors with a did-you-mean), and
 * Hugging Face config.json (lenient about keys zsim does not use, strict
 * about the types and ranges of the keys it does).
 *
 * Every loader parses with zs_json_parse_file, copies fields through
 * zs_json_read tables, deletes the cJSON tree and the source text before
 * returning (STYLE 16) and calls zs_model_finish.  The only allocations are
 * the parser's, so an injected allocation failure surfaces as ZS_ENOMEM with
 * nothing leaked.  Ranges bound every dimension so that parameter products
 * fit in int64 (see model.c).
 */
#include "model/model.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/strutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef ZS_SOURCE_DIR
#define ZS_SOURCE_DIR "."
#endif

/* Dimension limits shared by both formats: generous for real models
 * (Llama-3.1-405B: hidden 16384, intermediate 53248, 126 layers; Qwen3 MoE:
 * 128 experts) and small enough that 512 experts x 3 x hidden x
 * intermediate x 1024 layers stays below 2^63. */
#define LIM_HIDDEN 65536
#define LIM_INTER 262144
#define LIM_LAYERS 1024
#define LIM_HEADS 1024
#define LIM_HEAD_DIM 1024
#define LIM_VOCAB 4194304
#define LIM_POS 16777216
#define LIM_EXPERTS 512
#define LIM_EXTRA_PARAMS 1e13

/* The four dimension keys zsim's model JSON and the Llama-style config
 * classes spell alike, with their limits, as table rows made by ROW (ZF, HF
 * or HX below, whose structs name the members alike); the flags and each
 * format's or config class's defaults are the arguments. */
#define DIM_ROWS(ROW, flags, hidden_def, inter_def, layers_def, heads_def)     \
    ROW("hidden_size", ZS_F_INT, hidden, 1, LIM_HIDDEN, hidden_def, flags),    \
        ROW("intermediate_size", ZS_F_INT, inter, 1, LIM_INTER, inter_def,     \
            flags),                                                            \
        ROW("num_hidden_layers", ZS_F_INT, layers, 1, LIM_LAYERS, layers_def,  \
            flags),                                                            \
        ROW("num_attention_heads", ZS_F_INT, heads, 1, LIM_HEADS, heads_def,   \
            flags)

/* ---- The library --------------------------------------------------------- */

static const char *const g_library[] = {
    "qwen2.5-7b",     "qwen2.5-14b",   "qwen2.5-32b",  "qwen2.5-72b",
    "qwen3-32b",      "qwen3-30b-a3b", "yi-34b",       "llama-2-7b",
    "llama-2-13b",    "llama-2-70b",   "llama-3-8b",   "llama-3-70b",
    "llama-3.1-405b", "mistral-7b",    "mixtral-8x7b", "qwen2.5-omni-7b",
    "gpt2",           "opt-6.7b",      "opt-30b",      "gpt-neox-20b",
    "falcon-7b",      "falcon-40b",    "mpt-7b",       "bloom-7b1",
    "phi-2",          "gemma-2b",      "gemma-7b",     "gemma-2-9b",
};

/* Aliases: the size alone names the model people mean most often with it in
 * the issues behind DESIGN §1 (Qwen2.5 for 7b/14b/32b/72b, Yi for 34b, Llama 3
 * for 8b/70b/405b). */
static const struct zs_model_alias g_aliases[] = {
    {"7b", "qwen2.5-7b"},
    {"14b", "qwen2.5-14b"},
    {"32b", "qwen2.5-32b"},
    {"72b", "qwen2.5-72b"},
    {"34b", "yi-34b"},
    {"8b", "llama-3-8b"},
    {"70b", "llama-3-70b"},
    {"405b", "llama-3.1-405b"},
    {"30b-a3b", "qwen3-30b-a3b"},
    {"8x7b", "mixtral-8x7b"},
    {"omni", "qwen2.5-omni-7b"},
    {"mistral", "mistral-7b"},
    {"mixtral", "mixtral-8x7b"},
    {"yi", "yi-34b"},
    {"llama2-7b", "llama-2-7b"},
    {"llama2-13b", "llama-2-13b"},
    {"llama2-70b", "llama-2-70b"},
    /* The architectures of issue 11: the family name alone names its
     * best-known size. */
    {"falcon", "falcon-7b"},
    {"mpt", "mpt-7b"},
    {"bloom", "bloom-7b1"},
    {"neox", "gpt-neox-20b"},
    {"phi2", "phi-2"},
    {"gemma", "gemma-7b"},
    {"gemma2", "gemma-2-9b"},
};

int zs_model_library(const char *const **names, int *n)
{
    *names = g_library;
    *n = (int)(sizeof g_library / sizeof g_library[0]);
    return 0;
}

int zs_model_aliases(const struct zs_model_alias **aliases, int *n)
{
    *aliases = g_aliases;
    *n = (int)(sizeof g_aliases / sizeof g_aliases[0]);
    return 0;
}

const char *zs_model_library_dir(void)
{
    const char *e = getenv("ZSIM_MODELS");
    return (e && *e) ? e : ZS_SOURCE_DIR "/models";
}

/* ---- Shared helpers ------------------------------------------------------ */

static int has_key(const cJSON *obj, const char *key)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(obj, key);
    return n && !cJSON_IsNull(n);
}

/* The file's stem ("Qwen2.5-7B" for ".../Qwen2.5-7B.json"), or its folder's
 * name for ".../Qwen2.5-7B/config.json". */
static void stem_name(const char *path, char *buf, size_t cap)
{
    const char *base = strrchr(path, '/');
    char tmp[256];
    size_t n;
    base = base ? base + 1 : path;
    zs_strlcpy(tmp, base, sizeof tmp);
    n = strlen(tmp);
    if (n > 5 && strcmp(tmp + n - 5, ".json") == 0)
        tmp[n - 5] = '\0';
    if (strcmp(tmp, "config") == 0 && base != path) {
        const char *end = base - 1, *start = end;
        while (start > path && start[-1] != '/')
            start--;
        n = (size_t)(end - start);
        if (n > 0 && n < sizeof tmp) {
            memcpy(tmp, start, n);
            tmp[n] = '\0';
        }
    }
    zs_strlcpy(buf, tmp, cap);
}

/* Checks shared by both formats, each at the key's position. */
static int check_shape(const struct zs_json_src *src, const cJSON *root,
                       const char *k_heads, const char *k_kv,
                       const struct zs_model *m, struct zs_err *err)
{
    if (m->n_heads % m->n_kv_heads)
        return zs_json_bad_at(src, "", has_key(root, k_kv) ? k_kv : k_heads,
                              err, "must divide %s (%lld) (got %lld)", k_heads,
                              (long long)m->n_heads, (long long)m->n_kv_heads);
    if (m->head_dim == 0 && m->hidden % m->n_heads)
        return zs_json_bad_at(
            src, "", k_heads, err,
            "must divide hidden_size (%lld) when head_dim is absent "
            "(got %lld)",
            (long long)m->hidden, (long long)m->n_heads);
    return 0;
}

/* ---- zsim model JSON ----------------------------------------------------- */

static const char *const g_schema_choices[] = {"zsim.model/1", NULL};
/* family, norm, mlp, hidden_act, position_embedding, block and an extra
 * module's placement: model.c's zs_*_names. */

struct zjson {
    int schema;
    char name[64];
    int family;
    char source[512];
    int64_t hidden, inter, layers, heads, kv, head_dim, vocab, maxpos;
    bool tie, qkv_bias, o_bias, qk_norm;
    int64_t experts, topk, moe_inter, sliding;
    int norm, mlp, act, pos, block;
    bool norm_bias, qkv_fused, gate_up_fused, mlp_bias, lm_head_bias,
        embed_norm, sandwich_norm;
    int64_t pos_rows, sliding_layers;
    double attn_drop, resid_drop;
};

#define ZF(key, type, field, lo, hi, def, flags)                               \
    ZS_FIELD(key, type, offsetof(struct zjson, field), lo, hi, def, flags)

static const struct zs_field g_zsim_fields[] = {
    {"schema", ZS_F_ENUM, offsetof(struct zjson, schema), 0, 0, 0,
     ZS_F_REQUIRED, g_schema_choices, 0, NULL},
    {"name", ZS_F_STRING, offsetof(struct zjson, name), 0, 0, 0, ZS_F_REQUIRED,
     NULL, 64, NULL},
    {"family", ZS_F_ENUM, offsetof(struct zjson, family), 0, 0, 0,
     ZS_F_REQUIRED, zs_family_names, 0, NULL},
    {"source", ZS_F_STRING, offsetof(struct zjson, source), 0, 0, 0, 0, NULL,
     512, ""},
    DIM_ROWS(ZF, ZS_F_REQUIRED, 0, 0, 0, 0),
    ZF("num_key_value_heads", ZS_F_INT, kv, 1, LIM_HEADS, 0, ZS_F_REQUIRED),
    ZF("head_dim", ZS_F_INT, head_dim, 1, LIM_HEAD_DIM, 0, 0),
    ZF("vocab_size", ZS_F_INT, vocab, 1, LIM_VOCAB, 0, ZS_F_REQUIRED),
    ZF("max_position_embeddings", ZS_F_INT, maxpos, 1, LIM_POS, 0,
       ZS_F_REQUIRED),
    ZF("tie_word_embeddings", ZS_F_BOOL, tie, 0, 0, 0, 0),
    ZF("qkv_bias", ZS_F_BOOL, qkv_bias, 0, 0, 0, 0),
    ZF("o_bias", ZS_F_BOOL, o_bias, 0, 0, 0, 0),
    ZF("qk_norm", ZS_F_BOOL, qk_norm, 0, 0, 0, 0),
    ZF("num_experts", ZS_F_INT, experts, 0, LIM_EXPERTS, 0, 0),
    ZF("experts_per_token", ZS_F_INT, topk, 0, LIM_EXPERTS, 0, 0),
    ZF("moe_intermediate_size", ZS_F_INT, moe_inter, 0, LIM_INTER, 0, 0),
    ZF("sliding_window", ZS_F_INT, sliding, 0, LIM_POS, 0, 0),
    ZF("sliding_window_layers", ZS_F_INT, sliding_layers, 0, LIM_LAYERS, 0, 0),
    {"norm", ZS_F_ENUM, offsetof(struct zjson, norm), 0, 0, 0, 0, zs_norm_names,
     0, NULL},
    ZF("norm_bias", ZS_F_BOOL, norm_bias, 0, 0, 1, 0),
    {"mlp", ZS_F_ENUM, offsetof(struct zjson, mlp), 0, 0, 0, 0, zs_mlp_names, 0,
     NULL},
    {"hidden_act", ZS_F_ENUM, offsetof(struct zjson, act), 0, 0, 0, 0,
     zs_act_names, 0, NULL},
    {"position_embedding", ZS_F_ENUM, offsetof(struct zjson, pos), 0, 0, 0, 0,
     zs_pos_names, 0, NULL},
    ZF("position_rows", ZS_F_INT, pos_rows, 0, LIM_POS, 0, 0),
    {"block", ZS_F_ENUM, offsetof(struct zjson, block), 0, 0, 0, 0,
     zs_block_names, 0, NULL},
    ZF("qkv_fused", ZS_F_BOOL, qkv_fused, 0, 0, 0, 0),
    ZF("gate_up_fused", ZS_F_BOOL, gate_up_fused, 0, 0, 0, 0),
    ZF("mlp_bias", ZS_F_BOOL, mlp_bias, 0, 0, 0, 0),
    ZF("lm_head_bias", ZS_F_BOOL, lm_head_bias, 0, 0, 0, 0),
    ZF("embed_norm", ZS_F_BOOL, embed_norm, 0, 0, 0, 0),
    ZF("sandwich_norm", ZS_F_BOOL, sandwich_norm, 0, 0, 0, 0),
    ZF("attention_dropout", ZS_F_DOUBLE, attn_drop, 0, 0.99, 0, 0),
    ZF("residual_dropout", ZS_F_DOUBLE, resid_drop, 0, 0.99, 0, 0),
    {"extra", ZS_F_CUSTOM, 0, 0, 0, 0, 0, NULL, 0, NULL},
};

struct zextra {
    int64_t params;
    bool trainable;
    int placement;
    double flops;
    char source[512];
};

static const struct zs_field g_extra_fields[] = {
    {"params", ZS_F_INT, offsetof(struct zextra, params), 0, LIM_EXTRA_PARAMS,
     0, ZS_F_REQUIRED, NULL, 0, NULL},
    {"trainable", ZS_F_BOOL, offsetof(struct zextra, trainable), 0, 0, 0, 0,
     NULL, 0, NULL},
    {"placement", ZS_F_ENUM, offsetof(struct zextra, placement), 0, 0, 0, 0,
     zs_placement_names, 0, NULL},
    {"flops_per_token_fwd", ZS_F_DOUBLE, offsetof(struct zextra, flops), 0,
     1e15, 0, 0, NULL, 0, NULL},
    {"source", ZS_F_STRING, offsetof(struct zextra, source), 0, 0, 0, 0, NULL,
     512, ""},
};

#define NF(t) (sizeof(t) / sizeof((t)[0]))

static void forbid_flash(const struct zs_json_src *src, const char *objpath,
                         const char *key, const char *why, struct zs_model *m);
static void alibi_eager_only(const struct zs_json_src *src, const char *objpath,
                             const char *key, const char *who, const char *how,
                             struct zs_model *m);

static int is_moe_family(int fam)
{
    return fam == ZS_FAM_MIXTRAL || fam == ZS_FAM_QWEN3_MOE;
}

/* The zsim.model/1 fields into *m, with the family defaults for absent
 * flags. */
static void zsim_copy(const struct zs_json_src *src, const cJSON *root,
                      const struct zjson *z, struct zs_model *m)
{
    memset(m, 0, sizeof *m);
    zs_strlcpy(m->name, z->name, sizeof m->name);
    zs_strlcpy(m->source, src->path, sizeof m->source);
    zs_strlcpy(m->provenance, z->source, sizeof m->provenance);
    m->family = (enum zs_family)z->family;
    m->hidden = z->hidden;
    m->intermediate = z->inter;
    m->n_layers = z->layers;
    m->n_heads = z->heads;
    m->n_kv_heads = z->kv;
    m->head_dim = z->head_dim;
    m->vocab = z->vocab;
    m->max_position = z->maxpos;
    m->tie_embeddings = z->tie;
    m->o_bias = z->o_bias;
    /* Family defaults for absent flags: Qwen2 has q/k/v biases
     * (Qwen2Attention: bias=True), Qwen3 has q/k norms. */
    m->qkv_bias =
        has_key(root, "qkv_bias")
            ? z->qkv_bias
            : (m->family == ZS_FAM_QWEN2 || m->family == ZS_FAM_QWEN2_5_OMNI);
    m->qk_norm = has_key(root, "qk_norm") ? z->qk_norm
                                          : (m->family == ZS_FAM_QWEN3 ||
                                             m->family == ZS_FAM_QWEN3_MOE);
    m->sliding_window = z->sliding;
    m->sliding_layers = z->sliding_layers;
    m->norm = (enum zs_norm_kind)z->norm;
    m->norm_bias = z->norm == ZS_NORM_LAYER && z->norm_bias;
    m->mlp = (enum zs_mlp_kind)z->mlp;
    /* hidden_act absent: SiLU for a gated MLP (Llama), GELU for a plain one
     * (the GPT-2 / Falcon / BLOOM default family). */
    m->act = has_key(root, "hidden_act")
                 ? (enum zs_act)z->act
                 : (z->mlp == ZS_MLP_PLAIN ? ZS_ACT_GELU : ZS_ACT_SILU);
    m->pos = (enum zs_pos_kind)z->pos;
    m->block = (enum zs_block_kind)z->block;
    m->qkv_fused = z->qkv_fused;
    m->gate_up_fused = z->gate_up_fused;
    m->mlp_bias = z->mlp_bias;
    m->lm_head_bias = z->lm_head_bias;
    m->embed_norm = z->embed_norm;
    m->sandwich_norm = z->sandwich_norm;
    m->attn_dropout = z->attn_drop;
    m->resid_dropout = z->resid_drop;
}

/* Position rows, fused gate/up, sliding layers, and ALiBi's missing flash
 * path. */
static int zsim_check_layout(const struct zs_json_src *src,
                             const struct zjson *z, struct zs_model *m,
                             struct zs_err *err)
{
    if (z->pos == ZS_POS_LEARNED) {
        if (z->pos_rows < 1)
            return zs_err_set(err, ZS_EINPUT,
                              "missing 'position_rows' in %s: required for "
                              "position_embedding learned, an integer in "
                              "[1, %d]",
                              src->path, LIM_POS);
        m->pos_rows = z->pos_rows;
    } else if (z->pos_rows)
        return zs_json_bad_at(
            src, "", "position_rows", err,
            "must be absent or 0 unless position_embedding is "
            "learned (got %lld)",
            (long long)z->pos_rows);
    if (z->gate_up_fused && z->mlp != ZS_MLP_GATED)
        return zs_json_bad_at(src, "", "gate_up_fused", err,
                              "must be false for a plain MLP (got true)");
    if (z->sliding_layers > z->layers)
        return zs_json_bad_at(
            src, "", "sliding_window_layers", err,
            "must be in [0, num_hidden_layers = %lld] (got %lld)",
            (long long)z->layers, (long long)z->sliding_layers);
    /* ALiBi models whose transformers attention has no flash path:
     * BloomAttention and MptAttention add the bias to eager scores
     * (modeling_bloom.py / modeling_mpt.py: no flash-attention support),
     * FalconFlashAttention2 raises on alibi. */
    if (z->pos == ZS_POS_ALIBI &&
        (z->family == ZS_FAM_BLOOM || z->family == ZS_FAM_MPT ||
         z->family == ZS_FAM_FALCON)) {
        alibi_eager_only(src, "", "position_embedding",
                         zs_family_names[z->family], "", m);
    }
    return 0;
}

/* The MoE fields: required for an MoE family, absent or 0 for a dense one. */
static int zsim_moe(const struct zs_json_src *src, const cJSON *root,
                    struct zjson *z, struct zs_model *m, struct zs_err *err)
{
    if (is_moe_family(z->family)) {
        if (z->experts < 1)
            return has_key(root, "num_experts")
                       ? zs_json_bad_at(
                             src, "", "num_experts", err,
                             "must be in [1, %d] for family %s (got %lld)",
                             LIM_EXPERTS, zs_family_names[z->family],
                             (long long)z->experts)
                       : zs_err_set(err, ZS_EINPUT,
                                    "missing 'num_experts' in %s: required "
                                    "for family %s, an integer in [1, %d]",
                                    src->path, zs_family_names[z->family],
                                    LIM_EXPERTS);
        if (z->topk < 1 || z->topk > z->experts)
            return has_key(root, "experts_per_token")
                       ? zs_json_bad_at(
                             src, "", "experts_per_token", err,
                             "must be in [1, num_experts = %lld] (got %lld)",
                             (long long)z->experts, (long long)z->topk)
                       : zs_err_set(err, ZS_EINPUT,
                                    "missing 'experts_per_token' in %s: "
                                    "required for family %s, an integer in "
                                    "[1, num_experts = %lld]",
                                    src->path, zs_family_names[z->family],
                                    (long long)z->experts);
        /* Mixtral's experts are intermediate_size wide (MixtralConfig has
         * no separate expert width). */
        if (z->moe_inter == 0 && z->family == ZS_FAM_MIXTRAL)
            z->moe_inter = z->inter;
        if (z->moe_inter < 1)
            return zs_err_set(err, ZS_EINPUT,
                              "missing 'moe_intermediate_size' in %s: "
                              "required for family %s, an integer in [1, %d]",
                              src->path, zs_family_names[z->family], LIM_INTER);
        m->n_experts = z->experts;
        m->experts_per_token = z->topk;
        m->moe_intermediate = z->moe_inter;
    } else {
        const char *k = z->experts     ? "num_experts"
                        : z->topk      ? "experts_per_token"
                        : z->moe_inter ? "moe_intermediate_size"
                                       : NULL;
        if (k)
            return zs_json_bad_at(
                src, "", k, err, "must be 0 for the dense family %s (got %lld)",
                zs_family_names[z->family],
                (long long)(z->experts ? z->experts
                            : z->topk  ? z->topk
                                       : z->moe_inter));
    }
    return 0;
}

/* "extra": modules beside the transformer (vision/audio towers, a talker),
 * by name. */
static int zsim_extra(const struct zs_json_src *src, const cJSON *root,
                      struct zs_model *m, struct zs_err *err)
{
    const cJSON *extra, *it;
    int rc;

    extra = cJSON_GetObjectItemCaseSensitive(root, "extra");
    if (extra) {
        rc = zs_json_expect_object(src, extra, "extra", err);
        if (rc)
            return rc;
        cJSON_ArrayForEach(it, extra)
        {
            struct zextra x;
            struct zs_extra *e;
            char path[96];
            if (m->n_extra >= ZS_MODEL_MAX_EXTRA)
                return zs_json_bad_at(src, "extra", it->string, err,
                                      "at most %d extra modules",
                                      ZS_MODEL_MAX_EXTRA);
            if (!it->string[0] || strlen(it->string) >= sizeof e->name)
                return zs_json_bad_at(
                    src, "extra", it->string, err,
                    "a module name must have 1 to %zu characters",
                    sizeof e->name - 1);
            snprintf(path, sizeof path, "extra.%s", it->string);
            memset(&x, 0, sizeof x);
            rc = zs_json_read(src, it, path, g_extra_fields, NF(g_extra_fields),
                              &x, 0, err);
            if (rc)
                return rc;
            e = &m->extra[m->n_extra++];
            zs_strlcpy(e->name, it->string, sizeof e->name);
            e->params = x.params;
            e->trainable_default = x.trainable;
            e->placement_default = (enum zs_placement)x.placement;
            e->flops_per_token_fwd = x.flops;
        }
    }
    return 0;
}

static int zsim_from_tree(const struct zs_json_src *src, const cJSON *root,
                          struct zs_model *m, struct zs_err *err)
{
    struct zjson z;
    int rc;

    memset(&z, 0, sizeof z);
    rc = zs_json_read(src, root, "", g_zsim_fields, NF(g_zsim_fields), &z, 0,
                      err);
    if (rc)
        return rc;
    zsim_copy(src, root, &z, m);
    rc = zsim_check_layout(src, &z, m, err);
    if (!rc)
        rc = check_shape(src, root, "num_attention_heads",
                         "num_key_value_heads", m, err);
    if (!rc)
        rc = zsim_moe(src, root, &z, m, err);
    if (!rc)
        rc = zsim_extra(src, root, m, err);
    if (rc)
        return rc;
    return zs_model_finish(m, err);
}

/* ---- Hugging Face config.json ------------------------------------------- */

/* Families zsim reads from a config.json, by model_type. */
static const char *const g_hf_types[] = {
    "llama", "qwen2", "qwen3",    "mistral", "mixtral", "qwen3_moe",
    "gpt2",  "opt",   "gpt_neox", "falcon",  "mpt",     "bloom",
    "phi",   "phi3",  "gemma",    "gemma2",  NULL};
/* The first six are read by the Llama-style table below; the rest by
 * hf_other. */
#define HF_LLAMA_TYPES 6
enum {
    HF_GPT2 = 6,
    HF_OPT,
    HF_NEOX,
    HF_FALCON,
    HF_MPT,
    HF_BLOOM,
    HF_PHI,
    HF_PHI3,
    HF_GEMMA,
    HF_GEMMA2
};

struct hfc {
    int model_type;
    int64_t hidden, inter, layers, heads, kv, head_dim, vocab, maxpos, sliding;
    bool tie, use_sw, attn_bias;
    int64_t experts, topk, moe_inter, sparse_step;
};

#define HF(key, type, field, lo, hi, def, flags)                               \
    ZS_FIELD(key, type, offsetof(struct hfc, field), lo, hi, def, flags)

/* Keys every supported family uses (transformers configuration_llama.py and
 * siblings).  num_key_value_heads / head_dim / sliding_window may be null
 * (= the class default). */
static const struct zs_field g_hf_type[] = {
    {"model_type", ZS_F_ENUM, offsetof(struct hfc, model_type), 0, 0, 0,
     ZS_F_REQUIRED, g_hf_types, 0, NULL},
};
static const struct zs_field g_hf_common[] = {
    DIM_ROWS(HF, ZS_F_REQUIRED, 0, 0, 0, 0),
    HF("num_key_value_heads", ZS_F_INT, kv, 1, LIM_HEADS, 0, ZS_F_NULLABLE),
    HF("head_dim", ZS_F_INT, head_dim, 1, LIM_HEAD_DIM, 0, ZS_F_NULLABLE),
    HF("vocab_size", ZS_F_INT, vocab, 1, LIM_VOCAB, 0, ZS_F_REQUIRED),
    HF("tie_word_embeddings", ZS_F_BOOL, tie, 0, 0, 0, 0),
    HF("max_position_embeddings", ZS_F_INT, maxpos, 1, LIM_POS, 0, 0),
    HF("sliding_window", ZS_F_INT, sliding, 0, LIM_POS, 0, ZS_F_NULLABLE),
};

/* attention_bias: LlamaConfig / Qwen3Config (q,k,v and o biases);
 * use_sliding_window: Qwen2/Qwen3 (sliding_window applies only when true). */
static const struct zs_field g_hf_llama[] = {
    HF("attention_bias", ZS_F_BOOL, attn_bias, 0, 0, 0, 0),
};
static const struct zs_field g_hf_qwen2[] = {
    HF("use_sliding_window", ZS_F_BOOL, use_sw, 0, 0, 0, 0),
};
static const struct zs_field g_hf_qwen3[] = {
    HF("attention_bias", ZS_F_BOOL, attn_bias, 0, 0, 0, 0),
    HF("use_sliding_window", ZS_F_BOOL, use_sw, 0, 0, 0, 0),
};
/* MixtralConfig defaults: num_local_experts 8, num_experts_per_tok 2. */
static const struct zs_field g_hf_mixtral[] = {
    HF("num_local_experts", ZS_F_INT, experts, 1, LIM_EXPERTS, 8, 0),
    HF("num_experts_per_tok", ZS_F_INT, topk, 1, LIM_EXPERTS, 2, 0),
};
/* Qwen3MoeConfig defaults: num_experts 128, top 8, moe_intermediate 768,
 * decoder_sparse_step 1, mlp_only_layers []. */
static const struct zs_field g_hf_qwen3_moe[] = {
    HF("attention_bias", ZS_F_BOOL, attn_bias, 0, 0, 0, 0),
    HF("use_sliding_window", ZS_F_BOOL, use_sw, 0, 0, 0, 0),
    HF("num_experts", ZS_F_INT, experts, 1, LIM_EXPERTS, 128, 0),
    HF("num_experts_per_tok", ZS_F_INT, topk, 1, LIM_EXPERTS, 8, 0),
    HF("moe_intermediate_size", ZS_F_INT, moe_inter, 1, LIM_INTER, 768, 0),
    HF("decoder_sparse_step", ZS_F_INT, sparse_step, 1, LIM_LAYERS, 1, 0),
    {"mlp_only_layers", ZS_F_CUSTOM, 0, 0, 0, 0, 0, NULL, 0, NULL},
};

static const enum zs_family g_hf_family[] = {ZS_FAM_LLAMA,   ZS_FAM_QWEN2,
                                             ZS_FAM_QWEN3,   ZS_FAM_MISTRAL,
                                             ZS_FAM_MIXTRAL, ZS_FAM_QWEN3_MOE};

/* max_position_embeddings when absent: the config classes' defaults
 * (LlamaConfig 2048, Qwen2Config 32768, Qwen3Config 32768, MistralConfig
 * 4096*32, MixtralConfig 4096*32, Qwen3MoeConfig 32768). */
static const int64_t g_hf_maxpos[] = {2048,   32768,  32768,
                                      131072, 131072, 32768};

/* ---- Hugging Face config.json: the non-Llama families -------------------- */

/* Keys and defaults are the transformers config classes' (configuration_
 * <type>.py: GPT2Config, OPTConfig, GPTNeoXConfig, FalconConfig, MptConfig,
 * BloomConfig, PhiConfig, Phi3Config, GemmaConfig, Gemma2Config); module
 * shapes are the modeling_<type>.py constructors', as cited in model.c
 * build_leaves.  Values that change the module tree in ways zsim does not
 * model are refused with the key named, never approximated. */

struct hfx {
    int model_type;
    int64_t hidden, hidden_alt, inter, layers, layers_alt, heads, heads_alt, kv,
        head_dim, vocab, maxpos, sliding, n_inner, word_proj, num_ln, expansion;
    int act, act2, attn_type;
    double attn_drop, resid_drop, act_drop;
    bool tie, attn_bias, bias, parallel, multi_query, new_arch, alibi,
        ln_before, ln_affine, remove_final_ln, no_bias, qk_ln, cross;
};

#define HX(key, type, field, lo, hi, def, flags)                               \
    ZS_FIELD(key, type, offsetof(struct hfx, field), lo, hi, def, flags)
#define HACT(key, def, flags)                                                  \
    {                                                                          \
        key, ZS_F_ENUM, offsetof(struct hfx, act), 0, 0, def, flags,           \
            zs_act_names, 0, NULL                                              \
    }
/* Gemma's hidden_activation, read beside hidden_act. */
#define HACT2(key, def, flags)                                                 \
    {                                                                          \
        key, ZS_F_ENUM, offsetof(struct hfx, act2), 0, 0, def, flags,          \
            zs_act_names, 0, NULL                                              \
    }

/* GPT2Config: n_embd 768, n_layer 12, n_head 12, n_inner None (4 x n_embd),
 * n_positions 1024, vocab 50257, activation_function gelu_new, tied. */
static const struct zs_field g_hf_gpt2[] = {
    HX("n_embd", ZS_F_INT, hidden, 1, LIM_HIDDEN, 768, 0),
    HX("n_layer", ZS_F_INT, layers, 1, LIM_LAYERS, 12, 0),
    HX("n_head", ZS_F_INT, heads, 1, LIM_HEADS, 12, 0),
    HX("n_inner", ZS_F_INT, n_inner, 1, LIM_INTER, 0, ZS_F_NULLABLE),
    HX("n_positions", ZS_F_INT, maxpos, 1, LIM_POS, 1024, 0),
    HX("vocab_size", ZS_F_INT, vocab, 1, LIM_VOCAB, 50257, 0),
    HACT("activation_function", ZS_ACT_GELU_NEW, 0),
    HX("tie_word_embeddings", ZS_F_BOOL, tie, 0, 0, 1, 0),
    HX("add_cross_attention", ZS_F_BOOL, cross, 0, 0, 0, 0),
    HX("attn_pdrop", ZS_F_DOUBLE, attn_drop, 0, 0.99, 0.1, ZS_F_NULLABLE),
    HX("resid_pdrop", ZS_F_DOUBLE, resid_drop, 0, 0.99, 0.1, ZS_F_NULLABLE),
};
/* OPTConfig: hidden 768, ffn_dim 3072, 12 layers, 12 heads, vocab 50272,
 * max positions 2048, relu, do_layer_norm_before True, word_embed_proj_dim
 * = hidden, enable_bias True, layer_norm_elementwise_affine True,
 * _remove_final_layer_norm False, tied. */
static const struct zs_field g_hf_opt[] = {
    HX("hidden_size", ZS_F_INT, hidden, 1, LIM_HIDDEN, 768, 0),
    HX("ffn_dim", ZS_F_INT, inter, 1, LIM_INTER, 3072, 0),
    HX("num_hidden_layers", ZS_F_INT, layers, 1, LIM_LAYERS, 12, 0),
    HX("num_attention_heads", ZS_F_INT, heads, 1, LIM_HEADS, 12, 0),
    HX("vocab_size", ZS_F_INT, vocab, 1, LIM_VOCAB, 50272, 0),
    HX("max_position_embeddings", ZS_F_INT, maxpos, 1, LIM_POS, 2048, 0),
    HACT("activation_function", ZS_ACT_RELU, 0),
    HX("do_layer_norm_before", ZS_F_BOOL, ln_before, 0, 0, 1, 0),
    HX("word_embed_proj_dim", ZS_F_INT, word_proj, 1, LIM_HIDDEN, 0,
       ZS_F_NULLABLE),
    HX("enable_bias", ZS_F_BOOL, bias, 0, 0, 1, 0),
    HX("layer_norm_elementwise_affine", ZS_F_BOOL, ln_affine, 0, 0, 1, 0),
    HX("_remove_final_layer_norm", ZS_F_BOOL, remove_final_ln, 0, 0, 0, 0),
    HX("tie_word_embeddings", ZS_F_BOOL, tie, 0, 0, 1, 0),
    HX("attention_dropout", ZS_F_DOUBLE, attn_drop, 0, 0.99, 0, ZS_F_NULLABLE),
    HX("dropout", ZS_F_DOUBLE, resid_drop, 0, 0.99, 0.1, ZS_F_NULLABLE),
    HX("activation_dropout", ZS_F_DOUBLE, act_drop, 0, 0.99, 0, ZS_F_NULLABLE),
};
/* GPTNeoXConfig: hidden 6144, intermediate 24576, 44 layers, 64 heads, vocab
 * 50432, max positions 2048, gelu, use_parallel_residual True, untied,
 * attention_bias True. */
static const struct zs_field g_hf_neox[] = {
    DIM_ROWS(HX, 0, 6144, 24576, 44, 64),
    HX("vocab_size", ZS_F_INT, vocab, 1, LIM_VOCAB, 50432, 0),
    HX("max_position_embeddings", ZS_F_INT, maxpos, 1, LIM_POS, 2048, 0),
    HACT("hidden_act", ZS_ACT_GELU, 0),
    HX("use_parallel_residual", ZS_F_BOOL, parallel, 0, 0, 1, 0),
    HX("tie_word_embeddings", ZS_F_BOOL, tie, 0, 0, 0, 0),
    HX("attention_bias", ZS_F_BOOL, attn_bias, 0, 0, 1, 0),
    HX("attention_dropout", ZS_F_DOUBLE, attn_drop, 0, 0.99, 0, ZS_F_NULLABLE),
    HX("hidden_dropout", ZS_F_DOUBLE, resid_drop, 0, 0.99, 0, ZS_F_NULLABLE),
};
/* FalconConfig: hidden 4544, 32 layers, 71 heads, num_kv_heads None,
 * multi_query True, new_decoder_architecture False, parallel_attn True,
 * bias False, alibi False, vocab 65024, max positions 2048, ffn_hidden_size
 * None (4 x hidden), activation gelu, num_ln_in_parallel_attn None, tied. */
static const struct zs_field g_hf_falcon[] = {
    HX("hidden_size", ZS_F_INT, hidden, 1, LIM_HIDDEN, 4544, 0),
    HX("num_hidden_layers", ZS_F_INT, layers, 1, LIM_LAYERS, 32, 0),
    HX("num_attention_heads", ZS_F_INT, heads, 1, LIM_HEADS, 71, 0),
    HX("num_kv_heads", ZS_F_INT, kv, 1, LIM_HEADS, 0, ZS_F_NULLABLE),
    HX("multi_query", ZS_F_BOOL, multi_query, 0, 0, 1, 0),
    HX("new_decoder_architecture", ZS_F_BOOL, new_arch, 0, 0, 0, 0),
    HX("parallel_attn", ZS_F_BOOL, parallel, 0, 0, 1, 0),
    HX("bias", ZS_F_BOOL, bias, 0, 0, 0, 0),
    HX("alibi", ZS_F_BOOL, alibi, 0, 0, 0, 0),
    HX("vocab_size", ZS_F_INT, vocab, 1, LIM_VOCAB, 65024, 0),
    HX("max_position_embeddings", ZS_F_INT, maxpos, 1, LIM_POS, 2048, 0),
    HX("ffn_hidden_size", ZS_F_INT, inter, 1, LIM_INTER, 0, ZS_F_NULLABLE),
    HACT("activation", ZS_ACT_GELU, 0),
    HX("num_ln_in_parallel_attn", ZS_F_INT, num_ln, 1, 2, 0, ZS_F_NULLABLE),
    HX("tie_word_embeddings", ZS_F_BOOL, tie, 0, 0, 1, 0),
    HX("attention_dropout", ZS_F_DOUBLE, attn_drop, 0, 0.99, 0, ZS_F_NULLABLE),
    HX("hidden_dropout", ZS_F_DOUBLE, resid_drop, 0, 0.99, 0, ZS_F_NULLABLE),
};
/* MptConfig: d_model 2048, n_heads 16, n_layers 24, expansion_ratio 4,
 * max_seq_len 2048, vocab 50368, no_bias True, tied; attn_config below. */
static const struct zs_field g_hf_mpt[] = {
    HX("d_model", ZS_F_INT, hidden, 1, LIM_HIDDEN, 2048, 0),
    HX("n_heads", ZS_F_INT, heads, 1, LIM_HEADS, 16, 0),
    HX("n_layers", ZS_F_INT, layers, 1, LIM_LAYERS, 24, 0),
    HX("expansion_ratio", ZS_F_INT, expansion, 1, 64, 4, 0),
    HX("max_seq_len", ZS_F_INT, maxpos, 1, LIM_POS, 2048, 0),
    HX("vocab_size", ZS_F_INT, vocab, 1, LIM_VOCAB, 50368, 0),
    HX("no_bias", ZS_F_BOOL, no_bias, 0, 0, 1, 0),
    HX("tie_word_embeddings", ZS_F_BOOL, tie, 0, 0, 1, 0),
    {"attn_config", ZS_F_CUSTOM, 0, 0, 0, 0, 0, NULL, 0, NULL},
    HX("resid_pdrop", ZS_F_DOUBLE, resid_drop, 0, 0.99, 0, ZS_F_NULLABLE),
};
/* MptAttentionConfig: attn_type multihead_attention, qk_ln False, alibi
 * True (transformers' MptAttention implements only these). */
static const char *const g_mpt_attn_types[] = {"multihead_attention", NULL};
static const struct zs_field g_hf_mpt_attn[] = {
    {"attn_type", ZS_F_ENUM, offsetof(struct hfx, attn_type), 0, 0, 0, 0,
     g_mpt_attn_types, 0, NULL},
    HX("qk_ln", ZS_F_BOOL, qk_ln, 0, 0, 0, 0),
    HX("alibi", ZS_F_BOOL, alibi, 0, 0, 1, 0),
    HX("attn_pdrop", ZS_F_DOUBLE, attn_drop, 0, 0.99, 0, ZS_F_NULLABLE),
};
/* BloomConfig: hidden_size 64 (n_embed overrides it), n_layer 2, n_head 8
 * (attribute_map: num_hidden_layers, num_attention_heads), vocab 250880,
 * tied; 4 x hidden MLP (BloomMLP). */
static const struct zs_field g_hf_bloom[] = {
    HX("hidden_size", ZS_F_INT, hidden, 1, LIM_HIDDEN, 64, 0),
    HX("n_embed", ZS_F_INT, hidden_alt, 1, LIM_HIDDEN, 0, ZS_F_NULLABLE),
    HX("num_hidden_layers", ZS_F_INT, layers, 1, LIM_LAYERS, 2, 0),
    HX("n_layer", ZS_F_INT, layers_alt, 1, LIM_LAYERS, 0, ZS_F_NULLABLE),
    HX("num_attention_heads", ZS_F_INT, heads, 1, LIM_HEADS, 8, 0),
    HX("n_head", ZS_F_INT, heads_alt, 1, LIM_HEADS, 0, ZS_F_NULLABLE),
    HX("vocab_size", ZS_F_INT, vocab, 1, LIM_VOCAB, 250880, 0),
    HX("seq_length", ZS_F_INT, maxpos, 1, LIM_POS, 2048, 0),
    HX("tie_word_embeddings", ZS_F_BOOL, tie, 0, 0, 1, 0),
    HX("attention_dropout", ZS_F_DOUBLE, attn_drop, 0, 0.99, 0, ZS_F_NULLABLE),
    HX("hidden_dropout", ZS_F_DOUBLE, resid_drop, 0, 0.99, 0, ZS_F_NULLABLE),
};
/* PhiConfig: hidden 2048, intermediate 8192, 24 layers, 32 heads, kv None,
 * vocab 51200, gelu_new, max positions 2048, qk_layernorm False, untied. */
static const struct zs_field g_hf_phi[] = {
    DIM_ROWS(HX, 0, 2048, 8192, 24, 32),
    HX("num_key_value_heads", ZS_F_INT, kv, 1, LIM_HEADS, 0, ZS_F_NULLABLE),
    HX("vocab_size", ZS_F_INT, vocab, 1, LIM_VOCAB, 51200, 0),
    HACT("hidden_act", ZS_ACT_GELU_NEW, 0),
    HX("max_position_embeddings", ZS_F_INT, maxpos, 1, LIM_POS, 2048, 0),
    HX("qk_layernorm", ZS_F_BOOL, qk_ln, 0, 0, 0, 0),
    HX("tie_word_embeddings", ZS_F_BOOL, tie, 0, 0, 0, 0),
    HX("attention_dropout", ZS_F_DOUBLE, attn_drop, 0, 0.99, 0, ZS_F_NULLABLE),
    HX("resid_pdrop", ZS_F_DOUBLE, resid_drop, 0, 0.99, 0, ZS_F_NULLABLE),
};
/* Phi3Config: hidden 3072, intermediate 8192, 32 layers, 32 heads, kv None,
 * vocab 32064, silu, max positions 4096, untied, sliding_window None. */
static const struct zs_field g_hf_phi3[] = {
    DIM_ROWS(HX, 0, 3072, 8192, 32, 32),
    HX("num_key_value_heads", ZS_F_INT, kv, 1, LIM_HEADS, 0, ZS_F_NULLABLE),
    HX("vocab_size", ZS_F_INT, vocab, 1, LIM_VOCAB, 32064, 0),
    HACT("hidden_act", ZS_ACT_SILU, 0),
    HX("max_position_embeddings", ZS_F_INT, maxpos, 1, LIM_POS, 4096, 0),
    HX("tie_word_embeddings", ZS_F_BOOL, tie, 0, 0, 0, 0),
    HX("sliding_window", ZS_F_INT, sliding, 0, LIM_POS, 0, ZS_F_NULLABLE),
    HX("attention_dropout", ZS_F_DOUBLE, attn_drop, 0, 0.99, 0, ZS_F_NULLABLE),
    HX("resid_pdrop", ZS_F_DOUBLE, resid_drop, 0, 0.99, 0, ZS_F_NULLABLE),
};
/* GemmaConfig's keys after the dimensions and num_key_value_heads, which
 * Gemma2Config repeats with the same defaults: head_dim 256, vocab 256000,
 * gelu_pytorch_tanh (hidden_activation wins over hidden_act), max positions
 * 8192, tied, attention_bias False. */
#define GEMMA_ROWS                                                             \
    HX("head_dim", ZS_F_INT, head_dim, 1, LIM_HEAD_DIM, 256, ZS_F_NULLABLE),   \
        HX("vocab_size", ZS_F_INT, vocab, 1, LIM_VOCAB, 256000, 0),            \
        HACT("hidden_act", ZS_ACT_GELU_TANH, ZS_F_NULLABLE),                   \
        HACT2("hidden_activation", ZS_ACT_GELU_TANH, ZS_F_NULLABLE),           \
        HX("max_position_embeddings", ZS_F_INT, maxpos, 1, LIM_POS, 8192, 0),  \
        HX("tie_word_embeddings", ZS_F_BOOL, tie, 0, 0, 1, 0),                 \
        HX("attention_bias", ZS_F_BOOL, attn_bias, 0, 0, 0, 0)
/* GemmaConfig: hidden 3072, intermediate 24576, 28 layers, 16 heads, 16 kv,
 * head_dim 256, vocab 256000, gelu_pytorch_tanh (hidden_activation wins
 * over hidden_act), max positions 8192, tied, attention_bias False. */
static const struct zs_field g_hf_gemma[] = {
    DIM_ROWS(HX, 0, 3072, 24576, 28, 16),
    HX("num_key_value_heads", ZS_F_INT, kv, 1, LIM_HEADS, 16, ZS_F_NULLABLE),
    GEMMA_ROWS,
    HX("attention_dropout", ZS_F_DOUBLE, attn_drop, 0, 0.99, 0, ZS_F_NULLABLE),
};
/* Gemma2Config: hidden 2304, intermediate 9216, 26 layers, 8 heads, 4 kv,
 * head_dim 256, vocab 256000, gelu_pytorch_tanh, max positions 8192, tied,
 * sliding_window 4096 on every other layer. */
static const struct zs_field g_hf_gemma2[] = {
    DIM_ROWS(HX, 0, 2304, 9216, 26, 8),
    HX("num_key_value_heads", ZS_F_INT, kv, 1, LIM_HEADS, 4, ZS_F_NULLABLE),
    GEMMA_ROWS,
    HX("sliding_window", ZS_F_INT, sliding, 0, LIM_POS, 4096, ZS_F_NULLABLE),
    HX("attention_dropout", ZS_F_DOUBLE, attn_drop, 0, 0.99, 0, ZS_F_NULLABLE),
};

/* Records that flash attention is unavailable, at key's position. */
static void forbid_flash(const struct zs_json_src *src, const char *objpath,
                         const char *key, const char *why, struct zs_model *m)
{
    char where[300];
    zs_json_where(src, objpath, key, where, sizeof where);
    if (objpath && *objpath)
        snprintf(m->flash_forbidden_at, sizeof m->flash_forbidden_at,
                 "invalid '%.40s.%.40s' in %.300s", objpath, key, where);
    else
        snprintf(m->flash_forbidden_at, sizeof m->flash_forbidden_at,
                 "invalid '%.40s' in %.300s", key, where);
    zs_strlcpy(m->flash_forbidden_why, why, sizeof m->flash_forbidden_why);
}

/* ALiBi positions and no flash attention, at key's position: transformers'
 * BLOOM and MPT attention (modeling_bloom.py / modeling_mpt.py) add the ALiBi
 * bias to eager scores (how: where, e.g. " (alibi.baddbmm)") and have no
 * flash-attention path. */
static void alibi_eager_only(const struct zs_json_src *src, const char *objpath,
                             const char *key, const char *who, const char *how,
                             struct zs_model *m)
{
    char why[200];
    snprintf(why, sizeof why,
             "transformers' %s attention adds the ALiBi bias to eager "
             "scores%s and has no flash-attention path",
             who, how);
    m->pos = ZS_POS_ALIBI;
    forbid_flash(src, objpath, key, why, m);
}

/* The layout of each family beyond the common fields (hf_other), from
 * transformers' modeling_<family>.py as each comment says. */
static int hf_gpt2(const struct zs_json_src *src, const cJSON *root, int type,
                   struct hfx *c, struct zs_model *m, struct zs_err *err)
{
    /* GPT2Block: ln_1, attn (c_attn fused, c_proj), ln_2, mlp (c_fc,
     * c_proj), every Conv1D with a bias; wpe n_positions rows. */
    if (c->cross)
        return zs_json_bad_at(src, "", "add_cross_attention", err,
                              "must be false (cross-attention is not modelled) "
                              "(got true)");
    m->intermediate = c->n_inner ? c->n_inner : 4 * c->hidden;
    m->pos = ZS_POS_LEARNED;
    m->pos_rows = c->maxpos;
    m->qkv_fused = m->qkv_bias = m->o_bias = m->mlp_bias = true;
    return 0;
}

static int hf_opt(const struct zs_json_src *src, const cJSON *root, int type,
                  struct hfx *c, struct zs_model *m, struct zs_err *err)
{
    /* OPTDecoderLayer with do_layer_norm_before: self_attn_layer_norm,
     * q/k/v/out_proj (bias=enable_bias), final_layer_norm, fc1/fc2;
     * OPTLearnedPositionalEmbedding has max_position_embeddings + 2
     * rows (offset 2). */
    if (!c->ln_before)
        return zs_json_bad_at(src, "", "do_layer_norm_before", err,
                              "must be true (post-norm OPT layers, as in "
                              "opt-350m, are not modelled) (got false)");
    if (c->word_proj && c->word_proj != c->hidden)
        return zs_json_bad_at(src, "", "word_embed_proj_dim", err,
                              "must equal hidden_size (%lld): project_in / "
                              "project_out are not modelled (got %lld)",
                              (long long)c->hidden, (long long)c->word_proj);
    if (!c->ln_affine)
        return zs_json_bad_at(src, "", "layer_norm_elementwise_affine", err,
                              "must be true (got false)");
    if (c->act_drop > 0)
        return zs_json_bad_at(src, "", "activation_dropout", err,
                              "must be 0 (dropout on the MLP activation is not "
                              "modelled) (got %g)",
                              c->act_drop);
    if (c->remove_final_ln)
        return zs_json_bad_at(src, "", "_remove_final_layer_norm", err,
                              "must be false (got true)");
    m->pos = ZS_POS_LEARNED;
    m->pos_rows = c->maxpos + 2;
    m->qkv_bias = m->o_bias = m->mlp_bias = c->bias;
    return 0;
}

static int hf_neox(const struct zs_json_src *src, const cJSON *root, int type,
                   struct hfx *c, struct zs_model *m, struct zs_err *err)
{
    /* GPTNeoXLayer: input_layernorm and post_attention_layernorm (both
     * of the layer input when use_parallel_residual), query_key_value
     * and dense with bias=attention_bias, MLP linears with bias. */
    m->block = c->parallel ? ZS_BLOCK_PARALLEL_2NORM : ZS_BLOCK_SEQUENTIAL;
    m->qkv_fused = m->mlp_bias = true;
    m->qkv_bias = m->o_bias = c->attn_bias;
    return 0;
}

static int hf_falcon(const struct zs_json_src *src, const cJSON *root, int type,
                     struct hfx *c, struct zs_model *m, struct zs_err *err)
{
    /* FalconAttention: new_decoder_architecture -> num_kv_heads groups,
     * else multi_query -> 1 kv head, else multi-head; one fused
     * query_key_value.  FalconDecoderLayer: ln_attn + ln_mlp when
     * new_decoder_architecture with num_ln_in_parallel_attn 2 (the
     * default), else input_layernorm (+ post_attention_layernorm when
     * not parallel_attn); the MLP and attention outputs are summed
     * (parallel) when new_decoder_architecture or parallel_attn. */
    if (c->new_arch)
        m->n_kv_heads = c->kv ? c->kv : c->heads;
    else
        m->n_kv_heads = c->multi_query ? 1 : c->heads;
    m->intermediate = c->inter ? c->inter : 4 * c->hidden;
    if (c->new_arch)
        m->block = (c->num_ln ? c->num_ln : 2) == 2 ? ZS_BLOCK_PARALLEL_2NORM
                                                    : ZS_BLOCK_PARALLEL;
    else
        m->block = c->parallel ? ZS_BLOCK_PARALLEL : ZS_BLOCK_SEQUENTIAL;
    m->qkv_fused = true;
    m->qkv_bias = m->o_bias = m->mlp_bias = c->bias;
    if (c->alibi) {
        m->pos = ZS_POS_ALIBI;
        forbid_flash(src, "", "alibi",
                     "transformers' FalconFlashAttention2 raises on "
                     "ALiBi (it has no bias path); only eager attention "
                     "adds it",
                     m);
    }
    return 0;
}

static int hf_mpt(const struct zs_json_src *src, const cJSON *root, int type,
                  struct hfx *c, struct zs_model *m, struct zs_err *err)
{
    /* MptBlock: norm_1, attn.Wqkv (3 x d_model), attn.out_proj, norm_2,
     * ffn up/down (expansion_ratio x d_model), LayerNorms and linears
     * without bias (modeling_mpt.py sets norm biases to None). */
    const cJSON *ac = cJSON_GetObjectItemCaseSensitive(root, "attn_config");
    int rc;
    if (!c->no_bias)
        return zs_json_bad_at(
            src, "", "no_bias", err,
            "must be true (transformers' MPT builds no biases) "
            "(got false)");
    c->alibi = true;
    if (ac && !cJSON_IsNull(ac)) {
        rc = zs_json_expect_object(src, ac, "attn_config", err);
        if (rc)
            return rc;
        rc = zs_json_read(src, ac, "attn_config", g_hf_mpt_attn,
                          NF(g_hf_mpt_attn), c, ZS_JSON_ALLOW_UNKNOWN, err);
        if (rc)
            return rc;
        if (c->qk_ln)
            return zs_json_bad_at(src, "attn_config", "qk_ln", err,
                                  "must be false (transformers' MPT has no q/k "
                                  "LayerNorm) (got true)");
        if (!c->alibi)
            return zs_json_bad_at(
                src, "attn_config", "alibi", err,
                "must be true (transformers' MPT always uses "
                "ALiBi, it has no position table) (got false)");
    }
    m->attn_dropout = c->attn_drop;
    m->intermediate = c->expansion * c->hidden;
    m->norm_bias = false;
    m->act = ZS_ACT_GELU; /* MptMLP: nn.GELU(approximate="none") */
    m->qkv_fused = true;
    alibi_eager_only(src, ac && !cJSON_IsNull(ac) ? "attn_config" : "",
                     ac && !cJSON_IsNull(ac) ? "alibi" : "model_type", "MPT",
                     "", m);
    return 0;
}

static int hf_bloom(const struct zs_json_src *src, const cJSON *root, int type,
                    struct hfx *c, struct zs_model *m, struct zs_err *err)
{
    /* BloomModel: word_embeddings, word_embeddings_layernorm; BloomBlock:
     * input_layernorm, query_key_value and dense with bias,
     * post_attention_layernorm, dense_h_to_4h / dense_4h_to_h with bias
     * (4 x hidden), BloomGelu (GeLUFunction saves its input). */
    if (c->hidden_alt)
        m->hidden = c->hidden_alt;
    if (c->layers_alt)
        m->n_layers = c->layers_alt;
    if (c->heads_alt)
        m->n_heads = m->n_kv_heads = c->heads_alt;
    m->intermediate = 4 * m->hidden;
    m->act = ZS_ACT_GELU;
    m->embed_norm = true;
    m->qkv_fused = m->qkv_bias = m->o_bias = m->mlp_bias = true;
    alibi_eager_only(src, "", "model_type", "BLOOM", " (alibi.baddbmm)", m);
    return 0;
}

static int hf_phi(const struct zs_json_src *src, const cJSON *root, int type,
                  struct hfx *c, struct zs_model *m, struct zs_err *err)
{
    /* PhiDecoderLayer: one input_layernorm feeding attention and MLP
     * (parallel), q/k/v/dense and fc1/fc2 with bias, lm_head with bias
     * (PhiForCausalLM), partial rotary (no parameters). */
    if (c->qk_ln)
        return zs_json_bad_at(src, "", "qk_layernorm", err,
                              "must be false (per-head q/k LayerNorm is not "
                              "modelled) (got true)");
    m->block = ZS_BLOCK_PARALLEL;
    m->qkv_bias = m->o_bias = m->mlp_bias = m->lm_head_bias = true;
    return 0;
}

static int hf_phi3(const struct zs_json_src *src, const cJSON *root, int type,
                   struct hfx *c, struct zs_model *m, struct zs_err *err)
{
    /* Phi3DecoderLayer: RMSNorms, qkv_proj and gate_up_proj fused, no
     * biases; sliding_window applies to every layer. */
    m->norm = ZS_NORM_RMS;
    m->norm_bias = false;
    m->mlp = ZS_MLP_GATED;
    m->qkv_fused = m->gate_up_fused = true;
    m->sliding_window = c->sliding;
    return 0;
}

static int hf_gemma(const struct zs_json_src *src, const cJSON *root, int type,
                    struct hfx *c, struct zs_model *m, struct zs_err *err)
{
    /* GemmaDecoderLayer: Llama layout with head_dim apart from
     * hidden/heads, GemmaRMSNorm (weight only), GeGLU, tied embedding
     * (the sqrt(hidden) embedding scale has no parameters).  Gemma-2
     * adds post_attention / pre- and post-feedforward norms and windows
     * the even layers (is_sliding = not layer_idx % 2). */
    m->norm = ZS_NORM_RMS;
    m->norm_bias = false;
    m->mlp = ZS_MLP_GATED;
    if (has_key(root, "hidden_activation"))
        m->act = (enum zs_act)c->act2;
    m->qkv_bias = m->o_bias = c->attn_bias;
    if (type == HF_GEMMA2) {
        m->sandwich_norm = true;
        m->sliding_window = c->sliding;
        m->sliding_layers = (c->layers + 1) / 2;
    }
    return 0;
}

static int hf_other(const struct zs_json_src *src, const cJSON *root, int type,
                    struct zs_model *m, struct zs_err *err)
{
    static const struct {
        const struct zs_field *f;
        size_t n;
        enum zs_family fam;
        int (*shape)(const struct zs_json_src *, const cJSON *, int,
                     struct hfx *, struct zs_model *, struct zs_err *);
    } tab[] = {
        {g_hf_gpt2, NF(g_hf_gpt2), ZS_FAM_GPT2, hf_gpt2},
        {g_hf_opt, NF(g_hf_opt), ZS_FAM_OPT, hf_opt},
        {g_hf_neox, NF(g_hf_neox), ZS_FAM_GPT_NEOX, hf_neox},
        {g_hf_falcon, NF(g_hf_falcon), ZS_FAM_FALCON, hf_falcon},
        {g_hf_mpt, NF(g_hf_mpt), ZS_FAM_MPT, hf_mpt},
        {g_hf_bloom, NF(g_hf_bloom), ZS_FAM_BLOOM, hf_bloom},
        {g_hf_phi, NF(g_hf_phi), ZS_FAM_PHI, hf_phi},
        {g_hf_phi3, NF(g_hf_phi3), ZS_FAM_PHI3, hf_phi3},
        {g_hf_gemma, NF(g_hf_gemma), ZS_FAM_GEMMA, hf_gemma},
        {g_hf_gemma2, NF(g_hf_gemma2), ZS_FAM_GEMMA2, hf_gemma},
    };
    const int i = type - HF_LLAMA_TYPES;
    struct hfx c;
    int rc;

    memset(&c, 0, sizeof c);
    rc = zs_json_read(src, root, "", tab[i].f, tab[i].n, &c,
                      ZS_JSON_ALLOW_UNKNOWN, err);
    if (rc)
        return rc;
    memset(m, 0, sizeof *m);
    stem_name(src->path, m->name, sizeof m->name);
    zs_strlcpy(m->source, src->path, sizeof m->source);
    snprintf(m->provenance, sizeof m->provenance,
             "hugging face config.json, model_type %s", g_hf_types[type]);
    m->family = tab[i].fam;
    m->hidden = c.hidden;
    m->n_layers = c.layers;
    m->n_heads = c.heads;
    m->n_kv_heads = c.kv ? c.kv : c.heads;
    m->head_dim = c.head_dim;
    m->vocab = c.vocab;
    m->max_position = c.maxpos;
    m->tie_embeddings = c.tie;
    m->intermediate = c.inter;
    m->act = (enum zs_act)c.act;
    /* Dropout as configured: transformers modules apply it in train mode
     * (GPT2 attn_pdrop/resid_pdrop, OPT attention_dropout/dropout,
     * attention_dropout/hidden_dropout of NeoX, Falcon and BLOOM, MPT
     * attn_config.attn_pdrop/resid_pdrop, Phi/Phi-3 resid_pdrop, Gemma
     * attention_dropout). */
    m->attn_dropout = c.attn_drop;
    m->resid_dropout = c.resid_drop;
    /* The GPT-style families: LayerNorm with bias, a plain MLP. */
    m->norm = ZS_NORM_LAYER;
    m->norm_bias = true;
    m->mlp = ZS_MLP_PLAIN;

    rc = tab[i].shape(src, root, type, &c, m, err);
    if (rc)
        return rc;
    rc = check_shape(src, root,
                     type == HF_GPT2  ? "n_head"
                     : type == HF_MPT ? "n_heads"
                                      : "num_attention_heads",
                     type == HF_FALCON ? "num_kv_heads" : "num_key_value_heads",
                     m, err);
    if (rc)
        return rc;
    return zs_model_finish(m, err);
}

/* The family's own keys, beyond g_hf_common (NULL: none). */
static void hf_llama_family(int type, const struct zs_field **fam, size_t *nfam)
{
    *fam = NULL;
    *nfam = 0;
    switch (type) {
    case 0:
        *fam = g_hf_llama;
        *nfam = NF(g_hf_llama);
        break;
    case 1:
        *fam = g_hf_qwen2;
        *nfam = NF(g_hf_qwen2);
        break;
    case 2:
        *fam = g_hf_qwen3;
        *nfam = NF(g_hf_qwen3);
        break;
    case 4:
        *fam = g_hf_mixtral;
        *nfam = NF(g_hf_mixtral);
        break;
    case 5:
        *fam = g_hf_qwen3_moe;
        *nfam = NF(g_hf_qwen3_moe);
        break;
    default:
        break; /* mistral: nothing beyond the common keys */
    }
}

/* The Llama-layout config's fields into *m, with each family's defaults. */
static void hf_llama_copy(const struct zs_json_src *src, const cJSON *root,
                          const struct hfc *c, struct zs_model *m)
{
    memset(m, 0, sizeof *m);
    stem_name(src->path, m->name, sizeof m->name);
    zs_strlcpy(m->source, src->path, sizeof m->source);
    snprintf(m->provenance, sizeof m->provenance,
             "hugging face config.json, model_type %s",
             g_hf_types[c->model_type]);
    m->family = g_hf_family[c->model_type];
    m->hidden = c->hidden;
    m->intermediate = c->inter;
    m->n_layers = c->layers;
    m->n_heads = c->heads;
    /* num_key_value_heads absent or null: multi-head attention (the config
     * classes set it to num_attention_heads). */
    m->n_kv_heads = c->kv ? c->kv : c->heads;
    m->head_dim = c->head_dim;
    /* Qwen3Config / Qwen3MoeConfig default head_dim to 128, not
     * hidden/heads. */
    if (!m->head_dim &&
        (m->family == ZS_FAM_QWEN3 || m->family == ZS_FAM_QWEN3_MOE))
        m->head_dim = 128;
    m->vocab = c->vocab;
    m->max_position = c->maxpos ? c->maxpos : g_hf_maxpos[c->model_type];
    m->tie_embeddings = c->tie;
    m->qkv_bias = m->family == ZS_FAM_QWEN2 || c->attn_bias;
    m->o_bias = c->attn_bias;
    m->qk_norm = m->family == ZS_FAM_QWEN3 || m->family == ZS_FAM_QWEN3_MOE;
    /* Sliding window: Mistral applies it whenever set (MistralConfig default
     * 4096 when the key is absent); Mixtral whenever set (default None);
     * Qwen2/Qwen3 only with use_sliding_window.  [assumption] all layers
     * (Qwen's max_window_layers split is not modelled). */
    if (m->family == ZS_FAM_MISTRAL)
        m->sliding_window =
            cJSON_GetObjectItemCaseSensitive(root, "sliding_window")
                ? c->sliding
                : 4096;
    else if (m->family == ZS_FAM_MIXTRAL || m->family == ZS_FAM_LLAMA)
        m->sliding_window = m->family == ZS_FAM_MIXTRAL ? c->sliding : 0;
    else
        m->sliding_window = c->use_sw ? c->sliding : 0;
}

/* Mixtral and Qwen3-MoE: the experts, and the all-sparse layout. */
static int hf_llama_moe(const struct zs_json_src *src, const cJSON *root,
                        const struct hfc *c, struct zs_model *m,
                        struct zs_err *err)
{
    if (m->family == ZS_FAM_MIXTRAL || m->family == ZS_FAM_QWEN3_MOE) {
        const char *k_e =
            m->family == ZS_FAM_MIXTRAL ? "num_local_experts" : "num_experts";
        if (c->topk > c->experts)
            return zs_json_bad_at(src, "", "num_experts_per_tok", err,
                                  "must be in [1, %s = %lld] (got %lld)", k_e,
                                  (long long)c->experts, (long long)c->topk);
        m->n_experts = c->experts;
        m->experts_per_token = c->topk;
        m->moe_intermediate =
            m->family == ZS_FAM_MIXTRAL ? c->inter : c->moe_inter;
    }
    if (m->family == ZS_FAM_QWEN3_MOE) {
        const cJSON *mlp_only =
            cJSON_GetObjectItemCaseSensitive(root, "mlp_only_layers");
        /* Qwen3MoeDecoderLayer: a layer is sparse when it is not in
         * mlp_only_layers and (idx + 1) % decoder_sparse_step == 0.  zsim
         * repeats one layer, so only the all-sparse layout is read. */
        if (c->sparse_step != 1)
            return zs_json_bad_at(
                src, "", "decoder_sparse_step", err,
                "only 1 is supported (every layer sparse; zsim "
                "models identical layers) (got %lld)",
                (long long)c->sparse_step);
        if (mlp_only && !cJSON_IsNull(mlp_only) &&
            (!cJSON_IsArray(mlp_only) || cJSON_GetArraySize(mlp_only) > 0))
            return zs_json_bad_at(
                src, "", "mlp_only_layers", err,
                "must be an empty array (zsim models identical "
                "layers) (got %s)",
                cJSON_IsArray(mlp_only) ? "a non-empty array"
                                        : zs_json_type_name(mlp_only));
    }
    return 0;
}

static int hf_from_tree(const struct zs_json_src *src, const cJSON *root,
                        struct zs_model *m, struct zs_err *err)
{
    struct hfc c;
    const struct zs_field *fam;
    size_t nfam;
    int rc;

    memset(&c, 0, sizeof c);
    rc = zs_json_read(src, root, "", g_hf_type, NF(g_hf_type), &c,
                      ZS_JSON_ALLOW_UNKNOWN, err);
    if (rc)
        return rc;
    if (c.model_type >= HF_LLAMA_TYPES)
        return hf_other(src, root, c.model_type, m, err);
    rc = zs_json_read(src, root, "", g_hf_common, NF(g_hf_common), &c,
                      ZS_JSON_ALLOW_UNKNOWN, err);
    if (rc)
        return rc;
    hf_llama_family(c.model_type, &fam, &nfam);
    if (fam) {
        rc = zs_json_read(src, root, "", fam, nfam, &c, ZS_JSON_ALLOW_UNKNOWN,
                          err);
        if (rc)
            return rc;
    }
    hf_llama_copy(src, root, &c, m);
    rc = check_shape(src, root, "num_attention_heads", "num_key_value_heads", m,
                     err);
    if (!rc)
        rc = hf_llama_moe(src, root, &c, m, err);
    if (rc)
        return rc;
    return zs_model_finish(m, err);
}

/* ---- Entry points -------------------------------------------------------- */

/* What load_file reads a model file as, and into. */
struct load {
    int want; /* 0 either (detect), 1 zsim, 2 HF */
    struct zs_model *out;
    int *was_hf; /* NULL, or set to the format read */
};

/* zs_json_load_file's from_tree. */
static int from_tree(const struct zs_json_src *src, const cJSON *root,
                     void *ctx, struct zs_err *err)
{
    const struct load *l = ctx;
    int hf, rc = zs_json_expect_object(src, root, "", err);
    if (rc)
        return rc;
    hf = l->want == 2 ||
         (l->want == 0 && !cJSON_GetObjectItemCaseSensitive(root, "schema") &&
          (cJSON_GetObjectItemCaseSensitive(root, "model_type") ||
           cJSON_GetObjectItemCaseSensitive(root, "architectures")));
    rc = hf ? hf_from_tree(src, root, l->out, err)
            : zsim_from_tree(src, root, l->out, err);
    if (l->was_hf)
        *l->was_hf = hf;
    return rc;
}

static int load_file(const char *path, int want, struct zs_model *out,
                     int *was_hf, struct zs_err *err)
{
    struct load l = {want, out, was_hf};
    return zs_json_load_file(path, from_tree, &l, err);
}

int zs_model_load_hf_config(const char *path, struct zs_model *out,
                            struct zs_err *err)
{
    return load_file(path, 2, out, NULL, err);
}

int zs_model_load_zsim_json(const char *path, struct zs_model *out,
                            struct zs_err *err)
{
    return load_file(path, 1, out, NULL, err);
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Loads library model `lib` and records how `typed` resolved to it. */
static int load_library(const char *typed, const char *lib,
                        struct zs_model *out, struct zs_err *err)
{
    char path[512], shown[512];
    const char *dir = zs_model_library_dir();
    int rc;
    snprintf(path, sizeof path, "%s/%s.json", dir, lib);
    /* Shown relative to the source tree when the library is the default
     * one, so outputs do not depend on where the tree lives. */
    if (strcmp(dir, ZS_SOURCE_DIR "/models") == 0)
        snprintf(shown, sizeof shown, "models/%s.json", lib);
    else
        zs_strlcpy(shown, path, sizeof shown);
    rc = zs_model_load_zsim_json(path, out, err);
    if (rc)
        return rc;
    zs_strlcpy(out->source, shown, sizeof out->source);
    /* The flash-attention refusal names the file as shown, too. */
    {
        char *at = strstr(out->flash_forbidden_at, path);
        if (at) {
            char tail[400], head[400];
            size_t n = (size_t)(at - out->flash_forbidden_at);
            zs_strlcpy(tail, at + strlen(path), sizeof tail);
            memcpy(head, out->flash_forbidden_at, n);
            head[n] = '\0';
            snprintf(out->flash_forbidden_at, sizeof out->flash_forbidden_at,
                     "%.80s%.180s%.130s", head, shown, tail);
        }
    }
    if (strcmp(typed, lib) == 0)
        snprintf(out->resolved_from, sizeof out->resolved_from,
                 "%.63s (%.180s)", lib, shown);
    else
        snprintf(out->resolved_from, sizeof out->resolved_from,
                 "%.60s -> %.63s (%.120s)", typed, lib, shown);
    return 0;
}

int zs_model_resolve(const char *name, struct zs_model *out, struct zs_err *err)
{
    size_t nl = sizeof g_library / sizeof g_library[0];
    char buf[512];
    int rc;

    if (!name || !*name)
        return zs_err_set(err, ZS_EUSAGE, "model name is empty");
    for (size_t i = 0; i < sizeof g_aliases / sizeof g_aliases[0]; i++)
        if (zs_strcaseeq(name, g_aliases[i].alias))
            return load_library(name, g_aliases[i].name, out, err);
    for (size_t i = 0; i < nl; i++)
        if (zs_strcaseeq(name, g_library[i]))
            return load_library(name, g_library[i], out, err);
    /* A user's own file dropped into the library folder. */
    if (!strchr(name, '/') && !zs_str_endswith(name, ".json") &&
        strlen(name) < 200) {
        snprintf(buf, sizeof buf, "%s/%s.json", zs_model_library_dir(), name);
        if (is_file(buf))
            return load_library(name, name, out, err);
    }
    if (is_file(name) || strchr(name, '/') || zs_str_endswith(name, ".json")) {
        int hf = 0;
        rc = load_file(name, 0, out, &hf, err);
        if (rc)
            return rc;
        snprintf(out->resolved_from, sizeof out->resolved_from, "%.200s (%s)",
                 name, hf ? "hugging face config" : "zsim model");
        return 0;
    }
    {
        zs_str_closest_list(name, g_library, nl, 3, buf, sizeof buf);
        return zs_err_set(err, ZS_EINPUT,
                          "unknown model '%s' (closest: %s; see 'zsim model "
                          "list')",
                          name, buf);
    }
}
