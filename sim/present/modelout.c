/*
 * modelout.c — see modelout.h.  `zsim model show`: the text (module tree,
 * parameters, FLOPs, activations, loss buffers) and the zsim.model/1
 * document.
 */
#include "present/modelout.h"
#include "present/emit.h"
#include "util/json.h"
#include "util/table.h"
#include "util/units.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const enum zs_ckpt g_ckpts[] = {ZS_CKPT_NONE, ZS_CKPT_SELECTIVE,
                                       ZS_CKPT_FULL, ZS_CKPT_OP};
static const enum zs_attn_impl g_attns[] = {ZS_ATTN_FLASH, ZS_ATTN_EAGER};
#define N_CKPTS ((int)(sizeof g_ckpts / sizeof g_ckpts[0]))

static void act_opts(const struct zs_model_show *c, enum zs_ckpt ck,
                     enum zs_attn_impl at, struct zs_act_opts *o)
{
    memset(o, 0, sizeof *o);
    o->seq = c->seq;
    o->micro_batch = 1;
    o->ckpt = ck;
    o->attn = at;
    o->sp = 1;
    o->method = c->mo.method;
    o->lora_rank = c->mo.lora_rank;
}

static void shape_text(const struct zs_leaf *l, char *buf, size_t cap)
{
    switch (l->kind) {
    case ZS_LEAF_NORM:
        snprintf(buf, cap, "%" PRId64 "%s", l->out_features,
                 l->n_tensors > 1 ? " +bias" : "");
        break;
    case ZS_LEAF_EMBED:
        snprintf(buf, cap, "%" PRId64 " x %" PRId64, l->out_features,
                 l->in_features);
        break;
    case ZS_LEAF_EXPERTS: {
        int64_t e = l->params / (3 * l->in_features * l->out_features);
        snprintf(buf, cap,
                 "%" PRId64 " x 3 x %" PRId64 " x %" PRId64 " (top %d)", e,
                 l->in_features, l->out_features, l->gemms / 3);
        break;
    }
    default:
        snprintf(buf, cap, "%" PRId64 " -> %" PRId64 "%s%s", l->in_features,
                 l->out_features, l->n_tensors > 1 ? " +bias" : "",
                 l->tied_params ? " (tied)" : "");
        break;
    }
}

static int leaf_row(struct zs_table *t, const struct zs_model_show *c,
                    const char *indent, const struct zs_leaf *l)
{
    char shape[96], p[32], tr[32];
    shape_text(l, shape, sizeof shape);
    zs_fmt_count(p, sizeof p, (double)l->params);
    zs_fmt_count(tr, sizeof tr, (double)zs_leaf_trainable(l, &c->mo));
    return zs_table_rowf(t, "%s%s\t%s\t%s\t%s\t%" PRId64 "\t%s", indent,
                         l->name, zs_leaf_kind_name(l->kind), shape, p,
                         l->params, tr);
}

/* One line naming the architecture variants (model.h). */
static void arch_line(const struct zs_model *m)
{
    printf("architecture: %s%s, %s MLP (%s%s), ", zs_norm_name(m->norm),
           m->norm == ZS_NORM_LAYER ? (m->norm_bias ? " with bias" : " no bias")
                                    : "",
           zs_mlp_name(m->mlp), zs_act_name(m->act),
           m->gate_up_fused ? ", fused gate_up" : "");
    if (m->pos == ZS_POS_LEARNED)
        printf("learned positions (%" PRId64 " rows)", m->pos_rows);
    else
        printf("%s positions", zs_pos_name(m->pos));
    printf(", %s block%s%s%s%s%s%s\n",
           m->block == ZS_BLOCK_PARALLEL         ? "parallel (one norm)"
           : m->block == ZS_BLOCK_PARALLEL_2NORM ? "parallel (two norms)"
                                                 : "sequential",
           m->qkv_fused ? ", fused qkv" : "", m->o_bias ? ", o bias" : "",
           m->mlp_bias ? ", mlp bias" : "",
           m->lm_head_bias ? ", lm_head bias" : "",
           m->embed_norm ? ", embedding norm" : "",
           m->sandwich_norm ? ", post-attention/post-MLP norms" : "");
    if (m->flash_forbidden_at[0])
        printf("flash attention: not available (%s)\n", m->flash_forbidden_why);
}

/* Module tree rows: the outer leaves, one decoder layer in full (its
 * leaves indented under a row for the layer), the extras.  Adds the weight
 * bytes of everything to *wbytes. */
static int layer_rows(struct zs_table *tree, const struct zs_model_show *c,
                      int64_t *wbytes)
{
    const struct zs_model *m = c->m;
    int64_t lt = 0, lw = 0;
    char rng[64], a[32], b[32];
    int rc;

    for (int i = 0; i < m->n_layer_leaves; i++) {
        lt += zs_leaf_trainable(&m->layer[i], &c->mo);
        lw += zs_leaf_weight_bytes(&m->layer[i], &c->mo);
    }
    *wbytes += lw * m->n_layers;
    snprintf(rng, sizeof rng, "%.31s0-%" PRId64 " (x%" PRId64 ")",
             m->layer_prefix, m->n_layers - 1, m->n_layers);
    zs_fmt_count(a, sizeof a, (double)m->params_layer);
    zs_fmt_count(b, sizeof b, (double)lt);
    rc = zs_table_rowf(tree, "%s\tlayer\teach\t%s\t%" PRId64 "\t%s", rng, a,
                       m->params_layer, b);
    for (int i = 0; i < m->n_layer_leaves; i++)
        rc |= leaf_row(tree, c, "  ", &m->layer[i]);
    return rc;
}

static int extra_rows(struct zs_table *tree, const struct zs_model_show *c,
                      int64_t *wbytes)
{
    const struct zs_model *m = c->m;
    char a[32], b[32];
    int rc = 0;

    for (int i = 0; i < m->n_extra; i++) {
        const struct zs_extra *x = &m->extra[i];
        int tr = c->mo.method == ZS_METHOD_FULL && x->trainable_default &&
                 x->placement_default != ZS_PLACE_DISABLED;
        zs_fmt_count(a, sizeof a, (double)x->params);
        zs_fmt_count(b, sizeof b, tr ? (double)x->params : 0);
        rc |= zs_table_rowf(
            tree, "%s\textra\tplacement %s\t%s\t%" PRId64 "\t%s", x->name,
            zs_placement_name(x->placement_default), a, x->params, b);
        *wbytes += 2 * x->params;
    }
    return rc;
}

static int tree_rows(struct zs_table *tree, const struct zs_model_show *c,
                     int64_t *wbytes)
{
    const struct zs_model *m = c->m;
    int rc = 0;

    for (int i = 0; i < m->n_pre; i++) {
        rc |= leaf_row(tree, c, "", &m->pre[i]);
        *wbytes += zs_leaf_weight_bytes(&m->pre[i], &c->mo);
    }
    rc |= layer_rows(tree, c, wbytes);
    for (int i = 0; i < m->n_post; i++) {
        rc |= leaf_row(tree, c, "", &m->post[i]);
        *wbytes += zs_leaf_weight_bytes(&m->post[i], &c->mo);
    }
    return rc | extra_rows(tree, c, wbytes);
}

/* Activations at micro-batch 1, per checkpointing mode and attention. */
static int act_rows(struct zs_table *acts, const struct zs_model_show *c)
{
    const struct zs_model *m = c->m;
    char a[32], b[32], d[32], e[32], f[32];
    int rc = 0;

    for (int i = 0; i < N_CKPTS; i++)
        for (int j = 0; j < 2; j++) {
            struct zs_act_opts o;
            int64_t s;
            act_opts(c, g_ckpts[i], g_attns[j], &o);
            s = zs_model_act_saved_per_layer(m, &o);
            snprintf(a, sizeof a, "%" PRId64 " B", s / c->seq);
            zs_fmt_bytes(b, sizeof b, s);
            zs_fmt_bytes(d, sizeof d, s * m->n_layers);
            zs_fmt_bytes(e, sizeof e, zs_model_act_work_fwd(m, &o));
            zs_fmt_bytes(f, sizeof f, zs_model_act_work_bwd(m, &o));
            rc |= zs_table_rowf(acts, "%s\t%s\t%s\t%s\t%s\t%s\t%s",
                                zs_ckpt_name(g_ckpts[i]),
                                zs_attn_name(g_attns[j]), a, b, d, e, f);
        }
    return rc;
}

static int loss_row(struct zs_table *loss, const char *label, int64_t v,
                    int64_t seq)
{
    char a[32], b[32];
    zs_fmt_bytes(a, sizeof a, v);
    zs_fmt_bytes(b, sizeof b, v / seq);
    return zs_table_rowf(loss, "%s\t%s\t%s", label, a, b);
}

/* The loss buffers at micro-batch 1 (no checkpointing, flash). */
static int loss_rows(struct zs_table *loss, const struct zs_model_show *c)
{
    struct zs_act_opts o;
    struct zs_loss_bytes lb;
    int rc = 0;

    act_opts(c, ZS_CKPT_NONE, ZS_ATTN_FLASH, &o);
    zs_model_loss_bytes(c->m, &o, &lb);
    rc |=
        loss_row(loss, "logits bf16 (lm_head output)", lb.logits_bf16, c->seq);
    rc |=
        loss_row(loss, "logits fp32 (.float() upcast)", lb.logits_fp32, c->seq);
    rc |= loss_row(loss, "log_softmax fp32 (saved)", lb.logprobs_fp32, c->seq);
    rc |= loss_row(loss, "grad fp32", lb.grad_fp32, c->seq);
    rc |= loss_row(loss, "grad bf16 (into lm_head)", lb.grad_bf16, c->seq);
    rc |= loss_row(loss, "peak (largest simultaneous set)", lb.peak, c->seq);
    return rc;
}

/* "model: ...", the shape line, sliding window, architecture, source. */
static void model_header(const struct zs_model *m)
{
    printf("model: %s\n", m->resolved_from);
    printf("family %s: %" PRId64 " layers, hidden %" PRId64
           ", intermediate %" PRId64 ", %" PRId64 " heads (%" PRId64
           " kv, head_dim %" PRId64 "), vocab %" PRId64,
           zs_family_name(m->family), m->n_layers, m->hidden, m->intermediate,
           m->n_heads, m->n_kv_heads, m->head_dim, m->vocab);
    if (m->n_experts)
        printf(", %" PRId64 " experts (top %" PRId64 ", width %" PRId64 ")",
               m->n_experts, m->experts_per_token, m->moe_intermediate);
    printf("%s%s%s, %s lm_head, max positions %" PRId64 "\n",
           m->qkv_bias ? ", qkv bias" : "", m->qk_norm ? ", q/k norm" : "",
           m->sliding_window ? ", sliding window" : "",
           m->tie_embeddings ? "tied" : "untied", m->max_position);
    if (m->sliding_window) {
        printf("sliding window: %" PRId64 " tokens", m->sliding_window);
        if (m->sliding_layers < m->n_layers)
            printf(" on %" PRId64 " of %" PRId64 " layers", m->sliding_layers,
                   m->n_layers);
        printf("\n");
    }
    arch_line(m);
    if (m->provenance[0])
        printf("source: %s\n", m->provenance);
}

/* One "  label  1.2B  1234567890" line of the parameter block. */
static void count_line(const char *label, int64_t v, const char *tail)
{
    char a[32];
    zs_fmt_count(a, sizeof a, (double)v);
    printf("  %-15s %10s  %15" PRId64 "%s", label, a, v, tail);
}

static void param_lines(const struct zs_model_show *c, int64_t wbytes)
{
    const struct zs_model *m = c->m;
    int64_t trainable = zs_model_trainable(m, &c->mo);
    char a[32];

    printf("\nparameters\n");
    count_line("total", m->params_total, "\n");
    count_line("active/token", m->params_active, "\n");
    count_line("embedding", m->params_embedding, "  (embed_tokens");
    printf("%s)\n", m->tie_embeddings ? ", tied lm_head" : " + lm_head");
    count_line("non-embedding", m->params_total - m->params_embedding, "\n");
    count_line("trainable", trainable, "  (");
    printf("%s", zs_method_name(c->mo.method));
    if (c->mo.method != ZS_METHOD_FULL)
        printf(", rank %d on q,k,v,o,gate,up,down", c->mo.lora_rank);
    printf(", %.2f %%)\n", 100.0 * (double)trainable / (double)m->params_total);
    count_line("frozen", m->params_total - trainable, "\n");
    zs_fmt_bytes(a, sizeof a, wbytes);
    printf("  weights         %10s  %15" PRId64 " B  (%s)\n", a, wbytes,
           c->mo.method == ZS_METHOD_QLORA ? "NF4 linears + bf16 rest"
                                           : "bf16");
}

/* The module tree, FLOPs, activations and loss sections. */
static void sections(const struct zs_model_show *c, const struct zs_table *tree,
                     const struct zs_table *acts, const struct zs_table *loss)
{
    const struct zs_model *m = c->m;
    char a[32];

    printf("\nmodule tree (one decoder layer in full)\n");
    zs_table_print(tree, stdout, 2);
    zs_fmt_count(a, sizeof a, (double)m->largest_leaf_params);
    printf("  largest module: %s, %s params (%" PRId64
           "): ZeRO-3 gathers it at once\n",
           m->largest_leaf_name, a, m->largest_leaf_params);

    printf("\nflops (forward, PaLM convention) at seq %" PRId64 "\n", c->seq);
    printf("  per token          %.4g GFLOP (2 x active matmul params + "
           "attention 4 x seq x heads x head_dim per layer)\n",
           zs_model_flops_per_token_fwd(m, c->seq) / 1e9);
    printf("  attention core     %.4g GFLOP per layer per sequence (causal)\n",
           zs_model_attn_core_flops(m, c->seq) / 1e9);

    printf("\nactivations saved for backward at seq %" PRId64
           ", micro-batch 1, sp 1%s\n",
           c->seq,
           c->mo.method == ZS_METHOD_FULL ? "" : " (with LoRA adapters)");
    zs_table_print(acts, stdout, 2);

    printf("\nloss buffers at seq %" PRId64 ", micro-batch 1 (vocab %" PRId64
           ")\n",
           c->seq, m->vocab);
    zs_table_print(loss, stdout, 2);
}

int zs_modelout_text(const struct zs_model_show *c, struct zs_err *err)
{
    struct zs_table *tree, *acts, *loss;
    int64_t wbytes = 0;
    int rc = 0;

    tree = zs_emit_table(6, "lllrrr",
                         "module\tkind\tshape\tparams\texact\ttrainable");
    acts = zs_emit_table(7, "llrrrrr",
                         "checkpointing\tattention\tper token/layer\tper "
                         "layer\tall layers\twork fwd\twork bwd");
    loss = zs_emit_table(3, "lrr", "tensor\tbytes\tper token");
    if (!tree || !acts || !loss) {
        rc = zs_err_set(err, ZS_ENOMEM, "out of memory");
        goto out;
    }
    rc |= tree_rows(tree, c, &wbytes);
    rc |= act_rows(acts, c);
    rc |= loss_rows(loss, c);
    if (rc) {
        rc = zs_err_set(err, ZS_ENOMEM, "out of memory");
        goto out;
    }

    /* Everything is computed: print. */
    model_header(c->m);
    param_lines(c, wbytes);
    sections(c, tree, acts, loss);
out:
    zs_table_free(tree);
    zs_table_free(acts);
    zs_table_free(loss);
    return rc;
}

static void jleaf(const struct zs_model_show *c, const struct zs_leaf *l,
                  const char *prefix, int64_t repeat, int last)
{
    printf("    {\"name\": ");
    {
        char nm[128];
        snprintf(nm, sizeof nm, "%s%s", prefix, l->name);
        zs_json_put_str(stdout, nm);
    }
    printf(", \"kind\": \"%s\", \"repeat\": %" PRId64 ", \"params\": %" PRId64
           ", \"params_active\": %" PRId64 ", \"params_trainable\": %" PRId64
           ", \"weight_bytes\": %" PRId64 ", \"in_features\": %" PRId64
           ", \"out_features\": %" PRId64 ", \"gemms\": %d}%s\n",
           zs_leaf_kind_name(l->kind), repeat, l->params, l->params_active,
           zs_leaf_trainable(l, &c->mo), zs_leaf_weight_bytes(l, &c->mo),
           l->in_features, l->out_features, l->gemms, last ? "" : ",");
}

static void json_params(const struct zs_model_show *c)
{
    const struct zs_model *m = c->m;
    int64_t trainable = zs_model_trainable(m, &c->mo);

    zs_emit_jint(stdout, "params_total", m->params_total);
    zs_emit_jint(stdout, "params_active", m->params_active);
    zs_emit_jint(stdout, "params_embedding", m->params_embedding);
    zs_emit_jint(stdout, "params_non_embedding",
                 m->params_total - m->params_embedding);
    zs_emit_jint(stdout, "params_trainable", trainable);
    zs_emit_jint(stdout, "params_frozen", m->params_total - trainable);
    zs_emit_jint(stdout, "params_layer", m->params_layer);
}

/* The config.json-like sizes. */
static void json_shape(const struct zs_model *m)
{
    zs_emit_jint(stdout, "layers", m->n_layers);
    zs_emit_jint(stdout, "hidden_size", m->hidden);
    zs_emit_jint(stdout, "intermediate_size", m->intermediate);
    zs_emit_jint(stdout, "num_heads", m->n_heads);
    zs_emit_jint(stdout, "num_kv_heads", m->n_kv_heads);
    zs_emit_jint(stdout, "head_dim", m->head_dim);
    zs_emit_jint(stdout, "vocab_size", m->vocab);
    zs_emit_jint(stdout, "max_position_embeddings", m->max_position);
    zs_emit_jbool(stdout, "tie_word_embeddings", m->tie_embeddings);
    zs_emit_jint(stdout, "num_experts", m->n_experts);
    zs_emit_jint(stdout, "experts_per_token", m->experts_per_token);
    zs_emit_jint(stdout, "moe_intermediate_size", m->moe_intermediate);
    zs_emit_jint(stdout, "sliding_window", m->sliding_window);
    zs_emit_jint(stdout, "sliding_window_layers", m->sliding_layers);
}

/* The architecture variants (model.h), as arch_line words them. */
static void json_arch(const struct zs_model *m)
{
    zs_emit_jstr(stdout, "norm", zs_norm_name(m->norm));
    zs_emit_jbool(stdout, "norm_bias", m->norm_bias);
    zs_emit_jstr(stdout, "mlp", zs_mlp_name(m->mlp));
    zs_emit_jstr(stdout, "hidden_act", zs_act_name(m->act));
    zs_emit_jstr(stdout, "position_embedding", zs_pos_name(m->pos));
    zs_emit_jint(stdout, "position_rows", m->pos_rows);
    zs_emit_jstr(stdout, "block", zs_block_name(m->block));
    zs_emit_jbool(stdout, "qkv_fused", m->qkv_fused);
    zs_emit_jbool(stdout, "gate_up_fused", m->gate_up_fused);
    zs_emit_jbool(stdout, "qkv_bias", m->qkv_bias);
    zs_emit_jbool(stdout, "o_bias", m->o_bias);
    zs_emit_jbool(stdout, "mlp_bias", m->mlp_bias);
    zs_emit_jbool(stdout, "lm_head_bias", m->lm_head_bias);
    zs_emit_jbool(stdout, "embed_norm", m->embed_norm);
    zs_emit_jbool(stdout, "sandwich_norm", m->sandwich_norm);
    zs_emit_jbool(stdout, "flash_attention_available",
                  !m->flash_forbidden_at[0]);
}

/* "modules" (the layer's leaves once, with their repeat) and "extras". */
static void json_modules(const struct zs_model_show *c)
{
    const struct zs_model *m = c->m;
    int nleaf = m->n_pre + m->n_layer_leaves + m->n_post, k = 0;
    char lpfx[40];

    snprintf(lpfx, sizeof lpfx, "%.31s*.", m->layer_prefix);
    printf("  \"modules\": [\n");
    for (int i = 0; i < m->n_pre; i++)
        jleaf(c, &m->pre[i], "", 1, ++k == nleaf);
    for (int i = 0; i < m->n_layer_leaves; i++)
        jleaf(c, &m->layer[i], lpfx, m->n_layers, ++k == nleaf);
    for (int i = 0; i < m->n_post; i++)
        jleaf(c, &m->post[i], "", 1, ++k == nleaf);
    printf("  ],\n  \"extras\": [\n");
    for (int i = 0; i < m->n_extra; i++) {
        const struct zs_extra *x = &m->extra[i];
        printf("    {\"name\": ");
        zs_json_put_str(stdout, x->name);
        printf(", \"params\": %" PRId64
               ", \"trainable\": %s, \"placement\": \"%s\""
               ", \"flops_per_token_fwd\": %.0f}%s\n",
               x->params, x->trainable_default ? "true" : "false",
               zs_placement_name(x->placement_default), x->flops_per_token_fwd,
               i + 1 == m->n_extra ? "" : ",");
    }
    printf("  ],\n");
}

/* "activations" per checkpointing mode and attention, then "loss". */
static void json_acts_loss(const struct zs_model_show *c)
{
    const struct zs_model *m = c->m;
    struct zs_act_opts o;
    struct zs_loss_bytes lb;

    printf("  \"activations\": [\n");
    for (int i = 0; i < N_CKPTS; i++)
        for (int j = 0; j < 2; j++) {
            int64_t s;
            act_opts(c, g_ckpts[i], g_attns[j], &o);
            s = zs_model_act_saved_per_layer(m, &o);
            printf("    {\"checkpointing\": \"%s\", \"attention\": \"%s\", "
                   "\"micro_batch\": 1, \"bytes_per_layer\": %" PRId64
                   ", \"bytes_all_layers\": %" PRId64
                   ", \"work_fwd_bytes\": %" PRId64
                   ", \"work_bwd_bytes\": %" PRId64 "}%s\n",
                   zs_ckpt_name(g_ckpts[i]), zs_attn_name(g_attns[j]), s,
                   s * m->n_layers, zs_model_act_work_fwd(m, &o),
                   zs_model_act_work_bwd(m, &o),
                   (i == N_CKPTS - 1 && j == 1) ? "" : ",");
        }
    act_opts(c, ZS_CKPT_NONE, ZS_ATTN_FLASH, &o);
    zs_model_loss_bytes(m, &o, &lb);
    printf("  ],\n  \"loss\": {\"micro_batch\": 1, \"logits_bf16\": %" PRId64
           ", \"logits_fp32\": %" PRId64 ", \"logprobs_fp32\": %" PRId64
           ", \"grad_fp32\": %" PRId64 ", \"grad_bf16\": %" PRId64
           ", \"peak\": %" PRId64 "}\n",
           lb.logits_bf16, lb.logits_fp32, lb.logprobs_fp32, lb.grad_fp32,
           lb.grad_bf16, lb.peak);
}

void zs_modelout_json(const struct zs_model_show *c)
{
    const struct zs_model *m = c->m;

    printf("{\n  \"schema\": \"zsim.model/1\",\n");
    zs_emit_jstr(stdout, "name", m->name);
    zs_emit_jstr(stdout, "resolved_from", m->resolved_from);
    zs_emit_jstr(stdout, "source", m->source);
    zs_emit_jstr(stdout, "family", zs_family_name(m->family));
    zs_emit_jstr(stdout, "method", zs_method_name(c->mo.method));
    zs_emit_jint(stdout, "lora_rank",
                 c->mo.method == ZS_METHOD_FULL ? 0 : c->mo.lora_rank);
    json_params(c);
    json_shape(m);
    json_arch(m);
    zs_emit_jstr(stdout, "largest_module_name", m->largest_leaf_name);
    zs_emit_jint(stdout, "largest_module_params", m->largest_leaf_params);
    zs_emit_jint(stdout, "seq_len", c->seq);
    printf("  \"flops_per_token_fwd\": %.0f,\n",
           zs_model_flops_per_token_fwd(m, c->seq));
    printf("  \"attn_core_flops_per_layer\": %.0f,\n",
           zs_model_attn_core_flops(m, c->seq));
    json_modules(c);
    json_acts_loss(c);
    printf("}\n");
}
