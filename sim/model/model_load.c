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

#include <stdarg.h>
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

/* ---- The library ----------------------------------------------------------
 */

static const char *const g_library[] = {
    "qwen2.5-7b",  "qwen2.5-14b",   "qwen2.5-32b",     "qwen2.5-72b",
    "qwen3-32b",   "qwen3-30b-a3b", "yi-34b",          "llama-2-7b",
    "llama-2-70b", "llama-3-8b",    "llama-3-70b",     "llama-3.1-405b",
    "mistral-7b",  "mixtral-8x7b",  "qwen2.5-omni-7b",
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
    {"llama2-70b", "llama-2-70b"},
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

/* ---- Shared helpers ---------------------------------------------------------
 */

/* "invalid 'key' in file:line:col: <what>" at key's position. */
static int bad_at(const struct zs_json_src *src, const char *objpath,
                  const char *key, struct zs_err *err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int bad_at(const struct zs_json_src *src, const char *objpath,
                  const char *key, struct zs_err *err, const char *fmt, ...)
{
    char where[300], what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    zs_json_where(src, objpath, key, where, sizeof where);
    if (objpath && *objpath)
        return zs_err_set(err, ZS_EINPUT, "invalid '%s.%s' in %s: %s", objpath,
                          key, where, what);
    return zs_err_set(err, ZS_EINPUT, "invalid '%s' in %s: %s", key, where,
                      what);
}

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
        return bad_at(src, "", has_key(root, k_kv) ? k_kv : k_heads, err,
                      "must divide %s (%lld) (got %lld)", k_heads,
                      (long long)m->n_heads, (long long)m->n_kv_heads);
    if (m->head_dim == 0 && m->hidden % m->n_heads)
        return bad_at(src, "", k_heads, err,
                      "must divide hidden_size (%lld) when head_dim is absent "
                      "(got %lld)",
                      (long long)m->hidden, (long long)m->n_heads);
    return 0;
}

/* ---- zsim model JSON ------------------------------------------------------
 */

static const char *const g_schema_choices[] = {"zsim.model/1", NULL};
static const char *const g_family_choices[] = {
    "llama",   "qwen2",     "qwen3",        "mistral",
    "mixtral", "qwen3_moe", "qwen2_5_omni", NULL};
static const char *const g_place_choices[] = {"sharded", "cpu", "gpu_full",
                                              "disabled", NULL};

struct zjson {
    int schema;
    char name[64];
    int family;
    char source[512];
    int64_t hidden, inter, layers, heads, kv, head_dim, vocab, maxpos;
    bool tie, qkv_bias, o_bias, qk_norm;
    int64_t experts, topk, moe_inter, sliding;
};

#define ZF(key, type, field, lo, hi, def, flags)                               \
    {                                                                          \
        key, type, offsetof(struct zjson, field), lo, hi, def, flags, NULL, 0, \
            NULL                                                               \
    }

static const struct zs_field g_zsim_fields[] = {
    {"schema", ZS_F_ENUM, offsetof(struct zjson, schema), 0, 0, 0,
     ZS_F_REQUIRED, g_schema_choices, 0, NULL},
    {"name", ZS_F_STRING, offsetof(struct zjson, name), 0, 0, 0, ZS_F_REQUIRED,
     NULL, 64, NULL},
    {"family", ZS_F_ENUM, offsetof(struct zjson, family), 0, 0, 0,
     ZS_F_REQUIRED, g_family_choices, 0, NULL},
    {"source", ZS_F_STRING, offsetof(struct zjson, source), 0, 0, 0, 0, NULL,
     512, ""},
    ZF("hidden_size", ZS_F_INT, hidden, 1, LIM_HIDDEN, 0, ZS_F_REQUIRED),
    ZF("intermediate_size", ZS_F_INT, inter, 1, LIM_INTER, 0, ZS_F_REQUIRED),
    ZF("num_hidden_layers", ZS_F_INT, layers, 1, LIM_LAYERS, 0, ZS_F_REQUIRED),
    ZF("num_attention_heads", ZS_F_INT, heads, 1, LIM_HEADS, 0, ZS_F_REQUIRED),
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
     g_place_choices, 0, NULL},
    {"flops_per_token_fwd", ZS_F_DOUBLE, offsetof(struct zextra, flops), 0,
     1e15, 0, 0, NULL, 0, NULL},
    {"source", ZS_F_STRING, offsetof(struct zextra, source), 0, 0, 0, 0, NULL,
     512, ""},
};

#define NF(t) (sizeof(t) / sizeof((t)[0]))

static int is_moe_family(int fam)
{
    return fam == ZS_FAM_MIXTRAL || fam == ZS_FAM_QWEN3_MOE;
}

static int zsim_from_tree(const struct zs_json_src *src, const cJSON *root,
                          struct zs_model *m, struct zs_err *err)
{
    struct zjson z;
    const cJSON *extra, *it;
    int rc;

    memset(&z, 0, sizeof z);
    rc = zs_json_read(src, root, "", g_zsim_fields, NF(g_zsim_fields), &z, 0,
                      err);
    if (rc)
        return rc;

    memset(m, 0, sizeof *m);
    zs_strlcpy(m->name, z.name, sizeof m->name);
    zs_strlcpy(m->source, src->path, sizeof m->source);
    zs_strlcpy(m->provenance, z.source, sizeof m->provenance);
    m->family = (enum zs_family)z.family;
    m->hidden = z.hidden;
    m->intermediate = z.inter;
    m->n_layers = z.layers;
    m->n_heads = z.heads;
    m->n_kv_heads = z.kv;
    m->head_dim = z.head_dim;
    m->vocab = z.vocab;
    m->max_position = z.maxpos;
    m->tie_embeddings = z.tie;
    m->o_bias = z.o_bias;
    /* Family defaults for absent flags: Qwen2 has q/k/v biases
     * (Qwen2Attention: bias=True), Qwen3 has q/k norms. */
    m->qkv_bias =
        has_key(root, "qkv_bias")
            ? z.qkv_bias
            : (m->family == ZS_FAM_QWEN2 || m->family == ZS_FAM_QWEN2_5_OMNI);
    m->qk_norm = has_key(root, "qk_norm") ? z.qk_norm
                                          : (m->family == ZS_FAM_QWEN3 ||
                                             m->family == ZS_FAM_QWEN3_MOE);
    m->sliding_window = z.sliding;

    rc = check_shape(src, root, "num_attention_heads", "num_key_value_heads", m,
                     err);
    if (rc)
        return rc;
    if (is_moe_family(z.family)) {
        if (z.experts < 1)
            return has_key(root, "num_experts")
                       ? bad_at(src, "", "num_experts", err,
                                "must be in [1, %d] for family %s (got %lld)",
                                LIM_EXPERTS, g_family_choices[z.family],
                                (long long)z.experts)
                       : zs_err_set(err, ZS_EINPUT,
                                    "missing 'num_experts' in %s: required "
                                    "for family %s, an integer in [1, %d]",
                                    src->path, g_family_choices[z.family],
                                    LIM_EXPERTS);
        if (z.topk < 1 || z.topk > z.experts)
            return has_key(root, "experts_per_token")
                       ? bad_at(src, "", "experts_per_token", err,
                                "must be in [1, num_experts = %lld] (got %lld)",
                                (long long)z.experts, (long long)z.topk)
                       : zs_err_set(err, ZS_EINPUT,
                                    "missing 'experts_per_token' in %s: "
                                    "required for family %s, an integer in "
                                    "[1, num_experts = %lld]",
                                    src->path, g_family_choices[z.family],
                                    (long long)z.experts);
        /* Mixtral's experts are intermediate_size wide (MixtralConfig has
         * no separate expert width). */
        if (z.moe_inter == 0 && z.family == ZS_FAM_MIXTRAL)
            z.moe_inter = z.inter;
        if (z.moe_inter < 1)
            return zs_err_set(err, ZS_EINPUT,
                              "missing 'moe_intermediate_size' in %s: "
                              "required for family %s, an integer in [1, %d]",
                              src->path, g_family_choices[z.family], LIM_INTER);
        m->n_experts = z.experts;
        m->experts_per_token = z.topk;
        m->moe_intermediate = z.moe_inter;
    } else {
        const char *k = z.experts     ? "num_experts"
                        : z.topk      ? "experts_per_token"
                        : z.moe_inter ? "moe_intermediate_size"
                                      : NULL;
        if (k)
            return bad_at(src, "", k, err,
                          "must be 0 for the dense family %s (got %lld)",
                          g_family_choices[z.family],
                          (long long)(z.experts ? z.experts
                                      : z.topk  ? z.topk
                                                : z.moe_inter));
    }

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
                return bad_at(src, "extra", it->string, err,
                              "at most %d extra modules", ZS_MODEL_MAX_EXTRA);
            if (!it->string[0] || strlen(it->string) >= sizeof e->name)
                return bad_at(src, "extra", it->string, err,
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
    return zs_model_finish(m, err);
}

/* ---- Hugging Face config.json ------------------------------------------- */

/* Families zsim reads from a config.json, by model_type. */
static const char *const g_hf_types[] = {
    "llama", "qwen2", "qwen3", "mistral", "mixtral", "qwen3_moe", NULL};

struct hfc {
    int model_type;
    int64_t hidden, inter, layers, heads, kv, head_dim, vocab, maxpos, sliding;
    bool tie, use_sw, attn_bias;
    int64_t experts, topk, moe_inter, sparse_step;
};

#define HF(key, type, field, lo, hi, def, flags)                               \
    {                                                                          \
        key, type, offsetof(struct hfc, field), lo, hi, def, flags, NULL, 0,   \
            NULL                                                               \
    }

/* Keys every supported family uses (transformers configuration_llama.py and
 * siblings).  num_key_value_heads / head_dim / sliding_window may be null
 * (= the class default). */
static const struct zs_field g_hf_common[] = {
    {"model_type", ZS_F_ENUM, offsetof(struct hfc, model_type), 0, 0, 0,
     ZS_F_REQUIRED, g_hf_types, 0, NULL},
    HF("hidden_size", ZS_F_INT, hidden, 1, LIM_HIDDEN, 0, ZS_F_REQUIRED),
    HF("intermediate_size", ZS_F_INT, inter, 1, LIM_INTER, 0, ZS_F_REQUIRED),
    HF("num_hidden_layers", ZS_F_INT, layers, 1, LIM_LAYERS, 0, ZS_F_REQUIRED),
    HF("num_attention_heads", ZS_F_INT, heads, 1, LIM_HEADS, 0, ZS_F_REQUIRED),
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

static int hf_from_tree(const struct zs_json_src *src, const cJSON *root,
                        struct zs_model *m, struct zs_err *err)
{
    struct hfc c;
    const struct zs_field *fam = NULL;
    size_t nfam = 0;
    int rc;

    memset(&c, 0, sizeof c);
    rc = zs_json_read(src, root, "", g_hf_common, NF(g_hf_common), &c,
                      ZS_JSON_ALLOW_UNKNOWN, err);
    if (rc)
        return rc;
    switch (c.model_type) {
    case 0:
        fam = g_hf_llama;
        nfam = NF(g_hf_llama);
        break;
    case 1:
        fam = g_hf_qwen2;
        nfam = NF(g_hf_qwen2);
        break;
    case 2:
        fam = g_hf_qwen3;
        nfam = NF(g_hf_qwen3);
        break;
    case 4:
        fam = g_hf_mixtral;
        nfam = NF(g_hf_mixtral);
        break;
    case 5:
        fam = g_hf_qwen3_moe;
        nfam = NF(g_hf_qwen3_moe);
        break;
    default:
        break; /* mistral: nothing beyond the common keys */
    }
    if (fam) {
        rc = zs_json_read(src, root, "", fam, nfam, &c, ZS_JSON_ALLOW_UNKNOWN,
                          err);
        if (rc)
            return rc;
    }

    memset(m, 0, sizeof *m);
    stem_name(src->path, m->name, sizeof m->name);
    zs_strlcpy(m->source, src->path, sizeof m->source);
    snprintf(m->provenance, sizeof m->provenance,
             "hugging face config.json, model_type %s",
             g_hf_types[c.model_type]);
    m->family = g_hf_family[c.model_type];
    m->hidden = c.hidden;
    m->intermediate = c.inter;
    m->n_layers = c.layers;
    m->n_heads = c.heads;
    /* num_key_value_heads absent or null: multi-head attention (the config
     * classes set it to num_attention_heads). */
    m->n_kv_heads = c.kv ? c.kv : c.heads;
    m->head_dim = c.head_dim;
    /* Qwen3Config / Qwen3MoeConfig default head_dim to 128, not
     * hidden/heads. */
    if (!m->head_dim &&
        (m->family == ZS_FAM_QWEN3 || m->family == ZS_FAM_QWEN3_MOE))
        m->head_dim = 128;
    m->vocab = c.vocab;
    m->max_position = c.maxpos ? c.maxpos : g_hf_maxpos[c.model_type];
    m->tie_embeddings = c.tie;
    m->qkv_bias = m->family == ZS_FAM_QWEN2 || c.attn_bias;
    m->o_bias = c.attn_bias;
    m->qk_norm = m->family == ZS_FAM_QWEN3 || m->family == ZS_FAM_QWEN3_MOE;
    /* Sliding window: Mistral applies it whenever set (MistralConfig default
     * 4096 when the key is absent); Mixtral whenever set (default None);
     * Qwen2/Qwen3 only with use_sliding_window.  [assumption] all layers
     * (Qwen's max_window_layers split is not modelled). */
    if (m->family == ZS_FAM_MISTRAL)
        m->sliding_window =
            cJSON_GetObjectItemCaseSensitive(root, "sliding_window") ? c.sliding
                                                                     : 4096;
    else if (m->family == ZS_FAM_MIXTRAL || m->family == ZS_FAM_LLAMA)
        m->sliding_window = m->family == ZS_FAM_MIXTRAL ? c.sliding : 0;
    else
        m->sliding_window = c.use_sw ? c.sliding : 0;

    rc = check_shape(src, root, "num_attention_heads", "num_key_value_heads", m,
                     err);
    if (rc)
        return rc;
    if (m->family == ZS_FAM_MIXTRAL || m->family == ZS_FAM_QWEN3_MOE) {
        const char *k_e =
            m->family == ZS_FAM_MIXTRAL ? "num_local_experts" : "num_experts";
        if (c.topk > c.experts)
            return bad_at(src, "", "num_experts_per_tok", err,
                          "must be in [1, %s = %lld] (got %lld)", k_e,
                          (long long)c.experts, (long long)c.topk);
        m->n_experts = c.experts;
        m->experts_per_token = c.topk;
        m->moe_intermediate =
            m->family == ZS_FAM_MIXTRAL ? c.inter : c.moe_inter;
    }
    if (m->family == ZS_FAM_QWEN3_MOE) {
        const cJSON *mlp_only =
            cJSON_GetObjectItemCaseSensitive(root, "mlp_only_layers");
        /* Qwen3MoeDecoderLayer: a layer is sparse when it is not in
         * mlp_only_layers and (idx + 1) % decoder_sparse_step == 0.  zsim
         * repeats one layer, so only the all-sparse layout is read. */
        if (c.sparse_step != 1)
            return bad_at(src, "", "decoder_sparse_step", err,
                          "only 1 is supported (every layer sparse; zsim "
                          "models identical layers) (got %lld)",
                          (long long)c.sparse_step);
        if (mlp_only && !cJSON_IsNull(mlp_only) &&
            (!cJSON_IsArray(mlp_only) || cJSON_GetArraySize(mlp_only) > 0))
            return bad_at(src, "", "mlp_only_layers", err,
                          "must be an empty array (zsim models identical "
                          "layers) (got %s)",
                          cJSON_IsArray(mlp_only)
                              ? "a non-empty array"
                              : zs_json_type_name(mlp_only));
    }
    return zs_model_finish(m, err);
}

/* ---- Entry points
 * ------------------------------------------------------------ */

static int load_file(const char *path, int want, struct zs_model *out,
                     int *was_hf, struct zs_err *err)
{
    /* want: 0 either (detect), 1 zsim, 2 HF. */
    cJSON *root = NULL;
    struct zs_json_src src;
    int rc = zs_json_parse_file(path, &root, &src, err);
    if (rc)
        return rc;
    rc = zs_json_expect_object(&src, root, "", err);
    if (!rc) {
        int hf =
            want == 2 ||
            (want == 0 && !cJSON_GetObjectItemCaseSensitive(root, "schema") &&
             (cJSON_GetObjectItemCaseSensitive(root, "model_type") ||
              cJSON_GetObjectItemCaseSensitive(root, "architectures")));
        rc = hf ? hf_from_tree(&src, root, out, err)
                : zsim_from_tree(&src, root, out, err);
        if (was_hf)
            *was_hf = hf;
    }
    cJSON_Delete(root);
    zs_json_src_release(&src);
    return rc;
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
