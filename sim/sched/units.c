/*
 * units.c — the units a framework fetches, in forward order, with their GPU
 * times.  Times come from the hardware profile: GEMMs at the profile's
 * efficiency for their size, attention at the flash-attention efficiency,
 * everything else memory-bound at HBM bandwidth (hw.h).
 *
 * Backward costs (sources): a linear's backward is two GEMMs of the forward's
 * size (dgrad and wgrad), one when its weight is frozen (LoRA/QLoRA base);
 * flash attention's backward is 2.5x its forward FLOPs (Dao, FlashAttention-2,
 * 2023, §3: the backward recomputes S and P: 5 matmuls vs 2); element-wise
 * work moves about twice the bytes backward [assumption].
 */
#include "sched/sched_int.h"
#include "util/alloc.h"

#include <stdio.h>
#include <string.h>

/* Host-side cost of one fetched module's hooks in DeepSpeed ZeRO-3 (pre/post
 * forward and backward hooks in Python, the coordinator's bookkeeping):
 * [assumption] 40 us per module per pass, to be calibrated by the harness;
 * the order of magnitude follows from DeepSpeed issue #1635-style profiles
 * where ZeRO-3 hook overhead dominates small models. */
#define DS_HOOK_NS 40000
/* FSDP2 per-group host cost (pre/post forward hooks, foreach copies):
 * [assumption] 60 us per group per pass. */
#define FSDP2_HOOK_NS 60000

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

/* Attention core of one layer for this rank's micro-batch, forward. */
static double attn_fwd_ns(const struct zs_bctx *b)
{
    const struct zs_model *m = b->m;
    const struct zs_gpu *g = &b->node->gpu;
    double s = (double)b->c->seq_len, mb = (double)b->c->micro_batch;
    double sp = (double)b->c->sp;
    double heads = (double)m->n_heads / sp;
    if (b->c->attention == ZS_ATTN_FLASH) {
        double fl = zs_model_attn_core_flops(m, b->c->seq_len) * mb / sp;
        return fl / (g->peak_bf16_flops * g->attn_eff) * 1e9;
    }
    /* Eager: QK^T and PV as batched GEMMs over the full square, softmax in
     * fp32 (read bf16 scores, write fp32, read, write bf16 probs). */
    return mb * heads *
               (gemm_ns(b, s, s, (double)m->head_dim) +
                gemm_ns(b, s, (double)m->head_dim, s)) +
           mem_ns(b, mb * heads * s * s * (2 + 4 + 4 + 2));
}

static void leaf_times(const struct zs_bctx *b, const struct zs_leaf *l,
                       double *fwd, double *bwd, int *kf, int *kb)
{
    const struct zs_model *m = b->m;
    double t = (double)b->tokens;
    bool frozen = b->mo.method != ZS_METHOD_FULL;
    double f = 0, w = 0; /* forward ns; weight-gradient ns */
    int kernels = 1;
    switch (l->kind) {
    case ZS_LEAF_LINEAR:
        f = gemm_ns(b, t, (double)l->out_features, (double)l->in_features);
        w = f;
        if (b->mo.method == ZS_METHOD_QLORA) /* NF4 -> bf16 dequantise: read 0.5 B, write 2 B */
            f += mem_ns(b, (double)l->params * 2.5);
        if (frozen && (l->role & b->mo.lora_targets)) {
            double r = (double)b->mo.lora_rank;
            f += gemm_ns(b, t, r, (double)l->in_features) +
                 gemm_ns(b, t, (double)l->out_features, r);
            kernels += 2;
        }
        break;
    case ZS_LEAF_EXPERTS: {
        double e = (double)m->n_experts;
        double me = t * (double)m->experts_per_token / (e > 0 ? e : 1);
        f = e * (2 * gemm_ns(b, me, (double)l->out_features, (double)l->in_features) +
                 gemm_ns(b, me, (double)l->in_features, (double)l->out_features));
        w = f;
        kernels = (int)(3 * e);
        break;
    }
    case ZS_LEAF_ROUTER:
        f = gemm_ns(b, t, (double)l->out_features, (double)l->in_features) +
            mem_ns(b, t * (double)l->out_features * 4 * 2);
        w = f;
        kernels = 3;
        break;
    case ZS_LEAF_EMBED:
        f = mem_ns(b, t * (double)m->hidden * 2 * 2);
        w = f;
        break;
    case ZS_LEAF_NORM:
        f = mem_ns(b, t * (double)(l->params) * 2 * 3);
        w = f;
        kernels = 2;
        break;
    case ZS_LEAF_LM_HEAD:
        f = gemm_ns(b, t, (double)m->vocab, (double)m->hidden);
        w = f;
        /* cross-entropy over fp32 logits: upcast, log_softmax, gather
         * (reads/writes ~14 B per logit) */
        f += mem_ns(b, t * (double)m->vocab * 14);
        kernels = 4;
        break;
    }
    *fwd = f;
    /* dgrad costs what the forward did; wgrad only for trained weights */
    *bwd = f + ((frozen || l->kind == ZS_LEAF_NORM) ? 0 : w);
    *kf = kernels;
    *kb = 2 * kernels;
}

static int add_unit(struct zs_bctx *b, const struct zs_unit *u)
{
    size_t cap = (size_t)b->cap_units;
    if (zs_grow((void **)&b->units, &cap, (size_t)b->nunits + 1,
                sizeof *b->units))
        return ZS_ENOMEM;
    b->cap_units = (int)cap;
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
    u->gather_bytes = zs_leaf_weight_bytes(l, &b->mo);
    u->trainable = zs_leaf_trainable(l, &b->mo);
    if (b->mo.method != ZS_METHOD_FULL) {
        /* LoRA adapters are gathered with their base module (they are its
         * children and fetched in the same hook sequence) */
        u->params += u->trainable;
        u->gather_bytes += u->trainable * 2;
    }
    u->part_elems = (u->params + w - 1) / w;
    u->n_tensors = l->n_tensors + (u->trainable && b->mo.method != ZS_METHOD_FULL ? 2 : 0);
    /* stage3_param_persistence_threshold: params with ds_numel <= threshold
     * stay gathered (partition_parameters.py; mechanics §1 "Persistence") */
    u->persistent = b->c->framework == ZS_FW_DEEPSPEED && b->c->zero == 3 &&
                    l->params <= b->c->param_persistence_threshold;
    leaf_times(b, l, &u->fwd_ns, &u->bwd_ns, &u->kernels_fwd, &u->kernels_bwd);
}

/* Per-layer work outside any leaf's GEMM: the attention core (charged to the
 * o_proj unit, which consumes its output) and element-wise kernels (RoPE,
 * SiLU*mul, residual adds; charged to the layer's last unit). */
static void add_layer_extras(struct zs_bctx *b, int first, int last)
{
    const struct zs_model *m = b->m;
    double t = (double)b->tokens;
    double hq = (double)(m->n_heads * m->head_dim);
    double hkv = (double)(m->n_kv_heads * m->head_dim);
    double inter = m->n_experts ? (double)(m->moe_intermediate * m->experts_per_token)
                                : (double)m->intermediate;
    double ew = mem_ns(b, t * 2 * (2 * (hq + hkv) + 3 * inter + 4 * (double)m->hidden));
    double af = attn_fwd_ns(b);
    int o = last;
    for (int i = first; i <= last; i++)
        if (b->units[i].leaf && (b->units[i].leaf->role & ZS_ROLE_O))
            o = i;
    b->units[o].fwd_ns += af;
    b->units[o].bwd_ns += 2.5 * af;
    b->units[o].kernels_fwd += 2;
    b->units[o].kernels_bwd += 3;
    b->units[last].fwd_ns += ew;
    b->units[last].bwd_ns += 2 * ew;
    b->units[last].kernels_fwd += 6;
    b->units[last].kernels_bwd += 10;
}

int zs_units_build_leaves(struct zs_bctx *b)
{
    const struct zs_model *m = b->m;
    struct zs_unit u;
    b->nunits = 0;
    for (int i = 0; i < m->n_pre; i++) {
        fill_leaf_unit(b, &u, &m->pre[i], -1);
        if (add_unit(b, &u))
            return ZS_ENOMEM;
    }
    for (int layer = 0; layer < m->n_layers; layer++) {
        int first = b->nunits;
        for (int i = 0; i < m->n_layer_leaves; i++) {
            fill_leaf_unit(b, &u, &m->layer[i], layer);
            u.first_of_layer = i == 0;
            u.last_of_layer = i == m->n_layer_leaves - 1;
            if (add_unit(b, &u))
                return ZS_ENOMEM;
        }
        add_layer_extras(b, first, b->nunits - 1);
    }
    for (int i = 0; i < m->n_post; i++) {
        fill_leaf_unit(b, &u, &m->post[i], -1);
        if (add_unit(b, &u))
            return ZS_ENOMEM;
    }
    return 0;
}

/* FSDP2: one group per decoder layer (fully_shard per block, the common
 * recipe: torchtitan, Accelerate's transformer auto-wrap) and the root group
 * (embedding, final norm, lm_head) split into its forward-first and last
 * parts for ordering; both parts belong to the root's one all-gather in
 * reality, so the root is gathered once before the embedding. */
int zs_units_build_groups(struct zs_bctx *b)
{
    const struct zs_model *m = b->m;
    int64_t w = b->c->world;
    struct zs_unit g, leafu;
    b->nunits = 0;
    /* root: pre + post leaves */
    memset(&g, 0, sizeof g);
    g.layer = -1;
    for (int i = 0; i < m->n_pre + m->n_post; i++) {
        const struct zs_leaf *l = i < m->n_pre ? &m->pre[i] : &m->post[i - m->n_pre];
        fill_leaf_unit(b, &leafu, l, -1);
        g.params += leafu.params;
        g.gather_bytes += leafu.gather_bytes;
        g.trainable += leafu.trainable;
        g.n_tensors += leafu.n_tensors;
        g.fwd_ns += leafu.fwd_ns;
        g.bwd_ns += leafu.bwd_ns;
        g.kernels_fwd += leafu.kernels_fwd;
        g.kernels_bwd += leafu.kernels_bwd;
    }
    g.part_elems = (g.params + w - 1) / w;
    if (add_unit(b, &g))
        return ZS_ENOMEM;
    for (int layer = 0; layer < m->n_layers; layer++) {
        int first;
        memset(&g, 0, sizeof g);
        g.layer = layer;
        first = b->nunits;
        for (int i = 0; i < m->n_layer_leaves; i++) {
            fill_leaf_unit(b, &leafu, &m->layer[i], layer);
            g.params += leafu.params;
            g.gather_bytes += leafu.gather_bytes;
            g.trainable += leafu.trainable;
            g.n_tensors += leafu.n_tensors;
            g.fwd_ns += leafu.fwd_ns;
            g.bwd_ns += leafu.bwd_ns;
            g.kernels_fwd += leafu.kernels_fwd;
            g.kernels_bwd += leafu.kernels_bwd;
        }
        g.part_elems = (g.params + w - 1) / w;
        g.first_of_layer = g.last_of_layer = true;
        if (add_unit(b, &g))
            return ZS_ENOMEM;
        add_layer_extras(b, first, first);
    }
    return 0;
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
        snprintf(buf, cap, u->layer < 0 ? "root (embed, norm, lm_head)" : "layers.%d", u->layer);
    else if (u->layer >= 0)
        snprintf(buf, cap, "layers.%d.%s", u->layer, u->leaf->name);
    else
        snprintf(buf, cap, "%s", u->leaf->name);
    return buf;
}

/* Host hook costs, used by the schedules. */
int64_t zs_hook_ns(const struct zs_bctx *b)
{
    return b->c->framework == ZS_FW_FSDP2 ? FSDP2_HOOK_NS : DS_HOOK_NS;
}
