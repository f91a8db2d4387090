/*
 * fsdp2.c — PyTorch FSDP2 (fully_shard, optionally with CPUOffloadPolicy),
 * one rank's step, after reference/zero3-offload-mechanics.md §6 (read from
 * torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py, _fsdp_param.py,
 * _fsdp_collectives.py).
 *
 * Groups: one per decoder layer plus the root (embedding, final norm,
 * lm_head), which stays unsharded for the whole micro-step (the root is not
 * resharded after forward: its backward starts at once).
 * Precision policy (zs_cfg_param_bytes / zs_cfg_reduce_bytes, config.h):
 * pb = bytes of the sharded params (fp32 masters 4, pure bf16 2), rb = bytes
 * of the reduce dtype; compute is bf16.  PyTorch source read at
 * 010ae4a89516 (torch/distributed/fsdp/_fully_shard/).
 * Unshard (§6 steps 1-2): on the copy-in stream, offloaded shards are copied
 * H2D asynchronously from pinned memory (pb B/element) and, when pb is fp32,
 * cast to bf16 on the GPU (FSDPParam.all_gather_inputs:
 * _to_dtype_if_needed(sharded_param_data, param_dtype); pure bf16 has no
 * param_dtype, so no cast); the all-gather output (group x 2 B) is allocated
 * and all-gathered on the all-gather stream; the compute stream copies it out
 * into per-parameter storages.  Implicit prefetch: the host never blocks, so
 * the next group's all-gather runs while the current group computes; a
 * group's all-gather may start only after the previous group's copy-out
 * (≤ 2 all-gather buffers live).
 * Reduce (§6 step 5, _fsdp_collectives.py foreach_reduce): the unsharded bf16
 * grads are copied into a reduce-scatter input of the reduce dtype
 * (chunk_cat widens bf16 -> fp32 itself), reduce-scattered (one in flight)
 * into an output of the reduce dtype, cast to the sharded params' dtype
 * (_to_dtype_if_needed(reduce_output, orig_dtype)) and, with offload, copied
 * D2H into newly allocated pinned CPU tensors (one per parameter; PyTorch's
 * host allocator rounds each to a power of two and caches it after
 * zero_grad).  When a sharded grad already exists (accumulation) the copy is
 * blocking and the add runs on the CPU.
 * Accumulation under the HF Trainer (zs_cfg_grads_held_unsharded): the
 * micro-steps before the last run with set_requires_gradient_sync(False):
 * post_backward reshards and keeps every parameter's unsharded grad on the
 * GPU (FSDPParam.to_accumulated_grad_if_needed: the bf16 grad itself when the
 * reduce dtype is bf16, else a copy in the reduce dtype in
 * unsharded_accumulated_grad); later micro-steps add their grads into it
 * (AccumulateGrad, or accumulate_unsharded_grad_if_needed); the last one
 * reduce-scatters the accumulated grads once.
 * Step: the user's optimizer (torch AdamW) on the CPU shards with offload,
 * on the GPU without; states (pb B each) allocated lazily at the first step.
 * --fsdp-version 1 (FullyShardedDataParallel, FSDP1): the same step with
 * FSDP1's FlatParameter unshard (unshard_v1), reduce-scatter input
 * (rs_input_v1) and initialisation (init_unit_v1), per-stream allocator
 * pools (simulate.c), and on one process NO_SHARD (fs_modes).
 * --sharding none (one process, no fully_shard: torchtune's single-device
 * recipes, config.h enum zs_sharding): the parameters are the module's own
 * tensors, used in place (no all-gather buffers, no unsharded copies, no
 * hooks), and the grads are autograd's param.grad (local_grads).
 * --fsdp-version 1 (FullyShardedDataParallel, HF accelerate's FSDP before
 * fsdp_version 2) with CPU offload keeps one FlatParameter per group on the
 * host, with a pinned _cpu_grad of the same size beside it, and copies the
 * reduced grads into that _cpu_grad (flat_param_host; the GPU side is run
 * as FSDP2's [simplification]).
 */
#include "sched/sched_int.h"
#include "util/alloc.h"

#include <assert.h>
#include <stddef.h>
#include <string.h>

struct fs {
    struct zs_bctx *b;
    bool off, reshard;
    int32_t prev_copyout; /* copy-out of the previous unshard */
    int32_t
        prev_agbuf;  /* its all-gather output, freed after the next copy-out */
    int32_t prev_rs; /* previous reduce-scatter (one in flight) */
    int32_t *saved,
        *ungathered;    /* per unit: saved activations, unsharded params */
    int32_t *grad_host; /* per unit: its first pinned grad (offload), -1 */
    /* Per-parameter shards (offload): unit g's parameter tensors are
     * shard_elems[shard_off[g] .. shard_off[g + 1] - 1]; grad_ids holds
     * the pinned grad allocation of each (see param_shards). */
    int64_t *shard_elems;
    int *shard_off;
    int32_t *grad_ids;
    int32_t *grad_gpu;  /* per unit: sharded grads on GPU (no offload) */
    int32_t *held;      /* per unit: unsharded grads held across no_sync */
    int pb, rb;         /* bytes: sharded params, reduce dtype (see top) */
    bool nosync;        /* zs_cfg_grads_held_unsharded */
    bool noshard;       /* --sharding none: the plain module (see top) */
    bool replicas;      /* FSDP1 NO_SHARD on several ranks (allreduce_grads) */
    bool v1ns;          /* FSDP1 NO_SHARD, any world (init_unit_v1) */
    bool inbwd;         /* --optimizer-in-bwd (see steps_in_bwd) */
    int root_pre;       /* tensors of the root's pre leaves (embedding) */
    int32_t tied_grad;  /* tied embedding's grad held through backward */
    bool v1;            /* --fsdp-version 1: FullyShardedDataParallel */
    /* FSDP1 limit_all_gathers: the free events of resharded units, oldest
     * first (ring of nunits + 1 entries, see unshard_v1) */
    int32_t *free_ev;
    int nfree_ev, free_ev_head;
    bool v1off;         /* FSDP1 with CPU offload (flat_param_host) */
    bool bnb_qs;        /* FSDP1 QLoRA: bitsandbytes quant_state (shard_bytes) */
    int32_t *pageable;  /* per unit (v1off): the constructor's pageable shard */
    int32_t logits, logprobs[ZS_LOSS_PIECES_MAX], act_bwd;
    int32_t out_fp32; /* --loss fp32-output: the held fp32 logits, -1 */
    /* what the micro-step being built reads of its position (fs_begin):
     * the accumulation boundary, whether it is its step's first, whether
     * the step is the first (--optimizer-in-bwd's lazy states) */
    bool boundary, first_micro, first_step;
};

/* Padded shard elements of each parameter tensor of one leaf on `w` ranks:
 * FSDP2 chunks dim 0 and pads every rank's chunk to chunks[0]
 * (FSDPParam._init_sharded_param: padded_sharded_size = chunks[0].size()),
 * so a [d0, d1] tensor's shard is ceil(d0 / w) x d1.  Shapes as
 * model.c builds the leaves: nn.Linear weight [out, in] (+ bias [out]),
 * nn.Embedding [vocab, hidden], RMSNorm [out]; experts as n_experts gated
 * MLPs of w1/w3 [moe_i, h] and w2 [h, moe_i] (ModuleList of nn.Linear, as
 * MixtralSparseMoeBlock).  Appends to out[*n] (cap entries). */
static void leaf_shards(const struct zs_model *m, const struct zs_leaf *l,
                        int64_t w, int64_t *out, int *n, int cap)
{
#define ADD(d0, d1)                                                                do {                                                                               if (*n < cap)                                                                      out[(*n)++] = ((d0) + w - 1) / w * (d1);                               } while (0)
    /* one entry per tensor the leaf owns (n_tensors): a tied lm_head owns
     * none, a LayerNorm its weight and bias, a linear its weight and an
     * optional bias */
    if (l->params == 0 || l->n_tensors == 0)
        return;
    switch (l->kind) {
    case ZS_LEAF_NORM:
        for (int t = 0; t < l->n_tensors; t++)
            ADD(l->out_features, 1);
        break;
    case ZS_LEAF_EMBED:
        ADD(l->out_features, l->in_features);
        break;
    case ZS_LEAF_EXPERTS:
        for (int64_t e = 0; e < m->n_experts; e++) {
            ADD(m->moe_intermediate, m->hidden);
            ADD(m->moe_intermediate, m->hidden);
            ADD(m->hidden, m->moe_intermediate);
        }
        break;
    default:
        ADD(l->out_features, l->in_features);
        for (int t = 1; t < l->n_tensors; t++)
            ADD(l->out_features, 1);
        break;
    }
#undef ADD
}

/* Fills s->shard_elems/shard_off: per parameter for a full fine-tune with
 * offload (_init_sharded_param pins each parameter; foreach_reduce copies
 * each parameter's grad into its own new pinned tensor), each of which the
 * host allocator rounds to a power of two.  Under LoRA/QLoRA the frozen base
 * and the adapters are one block per group [assumption: adapter shapes are
 * not tracked; the adapters are small], and the grads one block of the
 * adapters' shard (reduce_grads). */
static int param_shards(struct fs *s)
{
    struct zs_bctx *b = s->b;
    const struct zs_model *m = b->m;
    int64_t w = zs_cfg_shard_world(b->c);
    int total = 0, n = 0;
    bool full = b->mo.method == ZS_METHOD_FULL;
    for (int g = 0; g < b->nunits; g++)
        total += full ? b->units[g].n_tensors : 1;
    s->shard_elems = zs_calloc((size_t)(total ? total : 1),
                               sizeof *s->shard_elems);
    s->grad_ids = zs_calloc((size_t)(total ? total : 1), sizeof *s->grad_ids);
    s->shard_off = zs_calloc((size_t)b->nunits + 1, sizeof *s->shard_off);
    if (!s->shard_elems || !s->grad_ids || !s->shard_off)
        return ZS_ENOMEM;
    for (int g = 0; g < b->nunits; g++) {
        const struct zs_unit *u = &b->units[g];
        s->shard_off[g] = n;
        if (!full) {
            s->shard_elems[n++] = u->part_elems;
            continue;
        }
        if (u->layer < 0) {
            for (int i = 0; i < m->n_pre; i++)
                leaf_shards(m, &m->pre[i], w, s->shard_elems, &n, total);
            s->root_pre = n - s->shard_off[g];
            for (int i = 0; i < m->n_post; i++)
                leaf_shards(m, &m->post[i], w, s->shard_elems, &n, total);
        } else {
            for (int i = 0; i < m->n_layer_leaves; i++)
                leaf_shards(m, &m->layer[i], w, s->shard_elems, &n, total);
        }
        if (n - s->shard_off[g] != u->n_tensors)
            return ZS_ERUNTIME; /* the shapes disagree with n_tensors */
    }
    s->shard_off[b->nunits] = n;
    return 0;
}

/* FSDP1 QLoRA is bitsandbytes' Linear4bit (transformers' BitsAndBytesConfig
 * in PEFT's and philschmid's scripts, Params4bit in Answer.AI's train.py).
 * Params4bit's data is only the packed 4-bit weight, n/2 bytes held in the
 * quant_storage dtype (bitsandbytes 0.43.1, 4a6fb352, nn/modules.py
 * Params4bit._quantize: self.data = w_4bit; functional.py quantize_4bit);
 * the absmax (uint8 per 64 with compress_statistics, and the nested fp32
 * absmax per 256) lives in the QuantState object, which is no Parameter or
 * buffer: FSDP1 neither flattens, shards, offloads nor syncs it.  Returns
 * the NF4 bytes in unit u's flat param: the packed weights under FSDP1,
 * the whole NF4 layout (torchao's NF4Tensor shards its scalers, see
 * shard_bytes) otherwise. */
static int64_t qlora_flat_bytes(const struct fs *s, const struct zs_unit *u)
{
    return s->bnb_qs ? (u->nf4_elems + 1) / 2 : u->nf4_bytes;
}

/* The quant_state of every quantised linear stays whole on each rank's GPU
 * for the run: transformers' from_pretrained quantises on the GPU of every
 * rank (modeling_utils.py _load_state_dict_into_meta_model after
 * huggingface/transformers PR #29587, v4.39.0: create_quantized_param, then
 * "type(value)(value.data.to(param_to), **value.__dict__)" moves only the
 * data to "cpu" on local rank 0 and "meta" elsewhere, the quant_state in
 * __dict__ stays on the device; the PR drops the old non-rank-0 path with
 * "and not is_quantized"), and Answer.AI's train.py does the same on purpose
 * (AnswerDotAI/fsdp_qlora 05ed9f2 train.py:235-246: "FSDP only syncs
 * parameters and buffers, so the quant_state isn't copied. This workaround
 * quantizes Params4bit to initialize quant_state on all ranks");
 * Linear4bit.forward re-attaches the module's copy to FSDP's flat-param
 * view (bitsandbytes 0.43.1 nn/modules.py:447-454).  Allocated before FSDP
 * wraps the model, one block per unit [simplification: bitsandbytes makes
 * an absmax, a nested absmax, an offset and a code tensor per linear]. */
static void quant_state_gpu(struct fs *s)
{
    struct zs_bctx *b = s->b;
    int32_t t = -1;
    for (int g = 0; g < b->nunits; g++) {
        const struct zs_unit *u = &b->units[g];
        if (u->nf4_elems <= 0)
            continue;
        t = zs_t_alloc(b, b->q_comp, b->p_gpu,
                       u->nf4_bytes - (u->nf4_elems + 1) / 2, 0,
                       "bitsandbytes quant_state (absmax, whole per rank)",
                       g, t);
    }
}

/* Bytes of group g's shard on this rank as stored (*store) and as the
 * all-gather moves it (*ag, per rank; the group's all-gather output and its
 * unsharded parameters are world x *ag).  Without QLoRA every element is
 * stored in the param dtype (pb) and gathered in bf16.  Under QLoRA the
 * quantised linears are torchao NF4Tensors (torchtune's QLoRA recipes,
 * lora_fsdp_wrap + fully_shard): torchao/dtypes/nf4tensor.py (pytorch/ao at
 * 0598012907d6) shards quantized_data (4 bits/element), quantized_scalers
 * (int8 per block of 64) and quantization_factor (one per 256 blocks) along
 * dim 0; fsdp_pre_all_gather hands those three tensors to the all-gather and
 * fsdp_post_all_gather builds the unsharded NF4Tensor on the all-gather
 * outputs, which LinearNF4 dequantises per op (fetch_units.c).  So the NF4 bytes
 * are stored, moved and held as NF4 (zs_leaf_weight_bytes, the bitsandbytes
 * double-quantisation layout; torchao's quantization_factor is in the input
 * dtype, 2 B instead of 4 B per 16,384 elements, a difference of 1e-4 B per
 * element that is not modelled); the rest (norms, embedding, biases,
 * adapters) as without QLoRA. */
static void shard_bytes(const struct fs *s, const struct zs_unit *u,
                        int64_t *store, int64_t *ag)
{
    int64_t w = zs_cfg_shard_world(s->b->c);
    int64_t q = (qlora_flat_bytes(s, u) + w - 1) / w;
    int64_t rest = (u->params - u->nf4_elems + w - 1) / w;
    /* --fp8-all-gather: torchao's WeightWithDynamicFloat8CastTensor
     * (torchao/float8/fsdp_utils.py at v0.7.0) casts its shard to fp8 in
     * fsdp_pre_all_gather and hands the all-gather its 1 B elements;
     * fsdp_post_all_gather wraps the gathered bytes as the unsharded
     * Float8Tensor the linear uses as it is (fetch_units.c) */
    int64_t f8 = (u->fp8_elems + w - 1) / w;
    if (u->nf4_elems <= 0) {
        *store = u->part_elems * s->pb;
        *ag = (u->part_elems - f8) * 2 + f8;
        return;
    }
    *store = q + rest * s->pb;
    *ag = q + rest * 2;
}

/* FSDP1 (--fsdp-version 1), PyTorch torch/distributed/fsdp/ at v2.2
 * (_runtime_utils.py _unshard/_reshard, _flat_param.py, _limiter_utils.py),
 * the unshard of unit g:
 *  - limit_all_gathers (Answer.AI's train.py passes True): _unshard calls
 *    _free_event_queue.dequeue_if_needed(), which pops the oldest free event
 *    once two are queued (_limiter_utils.py: _max_num_inflight_all_gathers
 *    = 2) and the host synchronizes on it; _reshard enqueues an event per
 *    freed unsharded flat parameter;
 *  - pre_unshard on the pre-unshard stream (q_cpy): with CPUOffload the
 *    sharded flat parameter is copied H2D (flat_param_to(device,
 *    non_blocking=True): "created on the pre-unshard stream"); with fp32
 *    masters the low-precision _mp_shard is allocated and cast there;
 *  - unshard on the unshard stream (q_ag): _alloc_padded_unsharded_flat_param
 *    allocates world x shard elements (padded to the world size), and
 *    all_gather_into_tensor writes into it: the all-gather output is the
 *    unsharded parameter (no copy-out, unlike FSDP2); the on-device shard
 *    is record_stream'ed on the unshard stream and freed.
 * The blocks stay with the stream that allocated them (per-stream pools,
 * engine/pool.c).  [simplification] Answer.AI's policy wraps every LoRA
 * A/B linear as its own unit (lambda_policy_fn: leaf, weight requires
 * grad); here the adapters (about 9 MB per Llama-2-7B layer) are
 * all-gathered with their decoder layer. */
static void unshard_v1(struct fs *s, int g)
{
    struct zs_bctx *b = s->b;
    const struct zs_unit *u = &b->units[g];
    int64_t store, shard_ag, full;
    int32_t t, dev = -1, dq = -1;
    shard_bytes(s, u, &store, &shard_ag);
    full = shard_ag * b->c->world;
    if (s->nfree_ev >= 2) { /* dequeue_if_needed + event.synchronize() */
        dq = s->free_ev[s->free_ev_head];
        s->free_ev_head = (s->free_ev_head + 1) % (b->nunits + 1);
        s->nfree_ev--;
    }
    t = zs_t_delay(b, b->q_host, zs_fsdp2_unshard_host_ns(s->off),
                   ZS_CLS_HOST, "unshard (FSDP1 _unshard)", g, b->last_host,
                   dq);
    if (s->off) {
        dev = zs_t_alloc(b, b->q_cpy, b->p_gpu, store, 0,
                         "sharded flat param (H2D, pre-unshard stream)", g, t);
        /* FSDP1 pins _local_shard itself (no option); the first
         * pre_unshard copies the constructor's pageable shard and rebinds
         * flat_param.data, which frees it (flat_param_host) */
        bool pinned = s->pageable[g] < 0;
        t = zs_t_pcie(b, b->q_cpy, 0, (double)store, pinned,
                      "H2D sharded flat param", g, dev, -1);
        if (!pinned) {
            zs_t_free(b, b->q_cpy, s->pageable[g], t);
            s->pageable[g] = -1;
        }
    }
    if (s->pb == 4) { /* _use_low_precision_shard: _mp_shard, cast */
        int32_t mp = zs_t_alloc(b, b->q_cpy, b->p_gpu, shard_ag, 0,
                                "low-precision shard (_mp_shard)", g, t);
        t = zs_t_gpu_mem(b, b->q_cpy, (double)(store + shard_ag), ZS_CLS_COPY,
                         "cast shard to bf16", g, mp, -1);
        if (dev >= 0)
            zs_t_free(b, b->q_cpy, dev, t);
        dev = mp;
    }
    s->ungathered[g] =
        zs_t_alloc(b, b->q_ag, b->p_gpu, full, 0,
                   u->nf4_elems > 0 ? "unsharded flat param (padded, NF4 base)"
                                    : "unsharded flat param (padded)",
                   g, t);
    t = zs_t_coll(b, b->q_ag, ZS_COLL_ALLGATHER, (double)full,
                  "all-gather flat param", g, s->ungathered[g], -1);
    if (dev >= 0)
        zs_t_free(b, b->q_ag, dev, t);
}

static void unshard(struct fs *s, int g)
{
    struct zs_bctx *b = s->b;
    const struct zs_unit *u = &b->units[g];
    int64_t store, shard_ag, full;
    int32_t t, ag, launch;
    bool nf4 = u->nf4_elems > 0;
    if (s->ungathered[g] >= 0 || s->noshard)
        return;
    if (s->v1) {
        unshard_v1(s, g);
        return;
    }
    shard_bytes(s, u, &store, &shard_ag);
    full = shard_ag * b->c->world;
    /* the all-gather's host side (foreach_all_gather: all-gather inputs,
     * copy-in, the collective's launch), hooks.c */
    launch = zs_t_delay(b, b->q_host, zs_fsdp2_unshard_host_ns(s->off),
                        ZS_CLS_HOST, "unshard (foreach copy-in)", g,
                        b->last_host, -1);
    t = launch;
    if (s->off) {
        int32_t dev = zs_t_alloc(b, b->q_cpy, b->p_gpu, store, 0,
                                 nf4          ? "NF4 + bf16 shard (H2D)"
                                 : s->pb == 4 ? "fp32 shard (H2D)"
                                              : "bf16 shard (H2D)",
                                 g, t);
        t = zs_t_pcie(b, b->q_cpy, 0, (double)store, b->c->pin_param,
                      nf4          ? "H2D NF4 + bf16 shard (async)"
                      : s->pb == 4 ? "H2D fp32 shard (async)"
                                   : "H2D bf16 shard (async)",
                      g, dev, s->prev_copyout);
        if (s->pb == 4) {
            /* the cast allocates the bf16 all-gather input (read pb, write
             * 2 B per element; NF4 bytes are copied as they are) */
            int32_t in = zs_t_alloc(b, b->q_cpy, b->p_gpu, shard_ag, 0,
                                    "bf16 all-gather input (cast)", g, t);
            t = zs_t_gpu_mem(b, b->q_cpy, (double)(store + shard_ag),
                             ZS_CLS_COPY, "cast to bf16", g, in, -1);
            zs_t_free(b, b->q_cpy, dev, t);
            dev = in;
        }
        ag = zs_t_alloc(b, b->q_cpy, b->p_gpu, full, 0, "all-gather output", g,
                        t);
        /* copy-in: read the bf16 input, write the all-gather buffer */
        t = zs_t_gpu_mem(b, b->q_cpy, (double)shard_ag * 2, ZS_CLS_COPY,
                         "all-gather copy-in", g, ag, s->prev_copyout);
        zs_t_free(b, b->q_cpy, dev, t);
    } else {
        ag = zs_t_alloc(b, b->q_cpy, b->p_gpu, full, 0, "all-gather output", g,
                        t);
        /* resident shards: the foreach copy-in casts while it copies (read
         * pb, write 2 B; foreach_all_gather's _foreach_copy_ fast path) */
        t = zs_t_gpu_mem(b, b->q_cpy, (double)(store + shard_ag), ZS_CLS_COPY,
                         "all-gather copy-in", g, ag, s->prev_copyout);
    }
    t = zs_t_coll(b, b->q_ag, ZS_COLL_ALLGATHER, (double)full,
                  "all-gather params", g, t, -1);
    /* copy-out on the compute stream into per-parameter storages (read and
     * write the gathered bytes) */
    s->ungathered[g] = zs_t_alloc(
        b, b->q_comp, b->p_gpu, full, 0,
        nf4 ? "unsharded params (NF4 base + bf16)" : "unsharded params", g, t);
    t = zs_t_gpu_mem(b, b->q_comp, (double)full * 2, ZS_CLS_COPY,
                     "all-gather copy-out", g, s->ungathered[g], t);
    if (s->prev_agbuf >= 0)
        zs_t_free(b, b->q_comp, s->prev_agbuf, t);
    s->prev_agbuf = ag;
    s->prev_copyout = t;
}

static void reshard(struct fs *s, int g, int32_t after)
{
    struct zs_bctx *b = s->b;
    int32_t f;
    if (s->ungathered[g] < 0)
        return;
    f = zs_t_free(b, b->q_comp, s->ungathered[g], after);
    s->ungathered[g] = -1;
    if (s->v1 && s->nfree_ev <= b->nunits) { /* FSDP1 free event */
        s->free_ev[(s->free_ev_head + s->nfree_ev) % (b->nunits + 1)] = f;
        s->nfree_ev++;
    }
}

/* The host runs group g's hooks (hooks.c), then launches its kernels. */
static int32_t launch(struct zs_bctx *b, int g, int kernels, bool backward)
{
    return zs_t_delay(b, b->q_host,
                      zs_hook_ns(b, g, backward) +
                          (int64_t)kernels * b->node->gpu.launch_overhead_ns,
                      ZS_CLS_HOST, "hooks + kernel launches", g, b->last_host,
                      -1);
}

/* Micro-steps before the last under no_sync: post_backward keeps the
 * group's unsharded grads (see the top of the file).  Returns the task after
 * which they are held. */
static int32_t hold_grads(struct fs *s, int g, int32_t bwd)
{
    struct zs_bctx *b = s->b;
    int64_t n = b->units[g].trainable;
    int32_t grads, t;
    if (n <= 0)
        return bwd;
    /* autograd's bf16 grads of this micro-step */
    grads = zs_t_alloc(b, b->q_comp, b->p_gpu, n * 2, 0,
                       s->held[g] < 0 && s->rb == 2
                           ? "unsharded grads held across accumulation (HF "
                             "no_sync)"
                           : "unsharded grads",
                       g, bwd);
    if (s->held[g] < 0) {
        if (s->rb == 2) { /* grad dtype == reduce dtype: kept as it is */
            s->held[g] = grads;
            return grads;
        }
        /* to_accumulated_grad_if_needed: .to(reduce_dtype) */
        s->held[g] = zs_t_alloc(b, b->q_comp, b->p_gpu, n * s->rb, 0,
                                "unsharded grads held across accumulation "
                                "(HF no_sync)",
                                g, grads);
        t = zs_t_gpu_mem(b, b->q_comp, (double)n * (2 + s->rb), ZS_CLS_COPY,
                         "grads to reduce dtype", g, s->held[g], -1);
    } else {
        /* AccumulateGrad / accumulate_unsharded_grad_if_needed: held += new
         * (read both, write the held one) */
        t = zs_t_gpu_mem(b, b->q_comp, (double)n * (2 + 2 * s->rb),
                         ZS_CLS_COPY, "accumulate unsharded grads", g, grads,
                         -1);
    }
    return zs_t_free(b, b->q_comp, grads, t);
}

/* FSDP1 (_runtime_utils.py _reduce_grad at v2.2): autograd leaves the
 * FlatParameter's unsharded gradient (bf16, n elements) on the compute
 * stream; on the post-backward stream it is cast to the reduce dtype when
 * that differs (_cast_grad_to_param_dtype's counterpart: unsharded_grad.to(
 * reduce_dtype) under MixedPrecision) and padded to world x shard elements
 * (_get_reduce_scatter_tensors: F.pad when numel_to_pad > 0, a new tensor);
 * otherwise the gradient itself is the reduce-scatter input.  Returns the
 * task after the input is ready; *in is its allocation, freed by the caller
 * after the reduce-scatter (the unsharded gradient is record_stream'ed on
 * the post-backward stream and freed with it). */
static int32_t rs_input_v1(struct fs *s, int g, int32_t bwd, int32_t *in)
{
    struct zs_bctx *b = s->b;
    int64_t n = b->units[g].trainable;
    int64_t padded = (n + b->c->world - 1) / b->c->world * b->c->world;
    int rb = s->rb;
    int32_t grads, t;
    grads = zs_t_alloc(b, b->q_comp, b->p_gpu, n * 2, 0,
                       "unsharded flat grad", g, bwd);
    if (rb == 2 && padded == n) {
        *in = grads;
        return grads;
    }
    *in = zs_t_alloc(b, b->q_rs, b->p_gpu, padded * rb, 0,
                     rb == 4 ? "padded reduce-scatter input (fp32)"
                             : "padded reduce-scatter input (bf16)",
                     g, grads);
    t = zs_t_gpu_mem(b, b->q_rs, (double)n * (2 + rb), ZS_CLS_COPY,
                     "pad / cast grad", g, *in, -1);
    zs_t_free(b, b->q_rs, grads, t);
    return t;
}

/* The reduce-scatter input of group g (reduce dtype), filled by chunk_cat
 * from this micro-step's bf16 grads, or on the last micro-step under no_sync
 * from the held ones (already in the reduce dtype).  Returns the task after
 * the copy-in; *in is the input's allocation. */
static int32_t rs_input(struct fs *s, int g, int32_t bwd, int32_t *in)
{
    struct zs_bctx *b = s->b;
    int64_t n = b->units[g].trainable;
    int64_t shard = (n + b->c->world - 1) / b->c->world;
    int rb = s->rb;
    int32_t grads, t;
    if (s->v1 && s->held[g] < 0)
        return rs_input_v1(s, g, bwd, in);
    if (s->held[g] >= 0) {
        /* last micro-step: its grads join the held ones, which feed the
         * reduce-scatter (already in the reduce dtype) */
        t = hold_grads(s, g, bwd);
        grads = s->held[g];
        s->held[g] = -1;
        *in = zs_t_alloc(b, b->q_comp, b->p_gpu, shard * b->c->world * rb, 0,
                         rb == 4 ? "reduce-scatter input (fp32)"
                                 : "reduce-scatter input (bf16)",
                         g, t);
        t = zs_t_gpu_mem(b, b->q_comp, (double)n * 2 * rb, ZS_CLS_COPY,
                         "chunk_cat copy-in", g, *in, -1);
    } else {
        grads = zs_t_alloc(b, b->q_comp, b->p_gpu, n * 2, 0,
                           "unsharded grads", g, bwd);
        *in = zs_t_alloc(b, b->q_comp, b->p_gpu, shard * b->c->world * rb, 0,
                         rb == 4 ? "reduce-scatter input (fp32)"
                                 : "reduce-scatter input (bf16)",
                         g, grads);
        t = zs_t_gpu_mem(b, b->q_comp, (double)n * (2 + rb), ZS_CLS_COPY,
                         "chunk_cat copy-in", g, *in, -1);
    }
    zs_t_free(b, b->q_comp, grads, t);
    return t;
}

/* With offload: the reduced shard of group g (`shard` elements of the param
 * dtype) goes to the CPU after `t`.  The first reduce of a step copies it
 * non-blocking into new pinned tensors, one per parameter; later ones
 * (accumulation) copy it blocking and add on the CPU.  Returns the task
 * after the copy. */
static int32_t grads_to_host(struct fs *s, int g, int64_t shard, bool first,
                             int32_t t)
{
    struct zs_bctx *b = s->b;
    int pb = s->pb;
    if (first && s->v1off) {
        /* FSDP1 _offload_grad: _cpu_grad.copy_(grad, non_blocking=True)
         * into the pinned buffer of flat_param_host */
        return zs_t_pcie(b, b->q_rs, 1, (double)shard * pb, true,
                         "D2H sharded grads into _cpu_grad", g, t, -1);
    }
    if (first) {
        /* new pinned CPU tensor per parameter; non_blocking D2H */
        if (s->grad_host[g] < 0) {
            int32_t d = t;
            for (int k = s->shard_off[g]; k < s->shard_off[g + 1]; k++)
                d = s->grad_ids[k] = zs_t_alloc(
                    b, b->q_rs, b->p_host,
                    (b->mo.method == ZS_METHOD_FULL ? s->shard_elems[k]
                                                    : shard) * pb,
                    b->c->pin_optimizer ? ZS_ALLOC_PINNED : 0,
                    pb == 4 ? "sharded fp32 grads (pinned, per param)"
                            : "sharded bf16 grads (pinned, per param)",
                    g, d);
            s->grad_host[g] = s->grad_ids[s->shard_off[g]];
            t = d;
        }
        return zs_t_pcie(b, b->q_rs, 1, (double)shard * pb,
                         b->c->pin_optimizer, "D2H sharded grads", g, t, -1);
    }
    {
        /* accumulation: blocking copy, add on the CPU (read 2, write 1
         * elements) */
        int32_t tmp = zs_t_alloc(b, b->q_rs, b->p_host, shard * pb, 0,
                                 "grad copy (accumulate)", g, t);
        t = zs_t_pcie(b, b->q_rs, 1, (double)shard * pb, false,
                      "D2H grads (blocking)", g, tmp, -1);
        zs_t_mark(b, b->q_host, "host waits grad copy", t, b->last_host, -1);
        /* grad += copy: an eager torch add on the CPU (r 2 + w 1 elements
         * of the param dtype) */
        zs_t_cpu(b, (double)shard * 3 * s->pb,
                 b->node->torch_op_bytes_per_s_per_thread, ZS_CLS_HOST,
                 "accumulate grads on CPU", b->last_host);
        zs_t_free(b, b->q_host, tmp, b->last_host);
    }
    return t;
}

/* --optimizer-in-bwd: torchtune's optimizer_in_bwd (torchtune/training/
 * memory.py register_optim_in_bwd_hooks, 1814feb17a90:219-242) builds one
 * optimizer per parameter and registers on each a post-accumulate-grad hook
 * that calls its step() and zero_grad() (set_to_none: the grad is dropped).
 * Autograd runs the hook as soon as AccumulateGrad has stored param.grad
 * (Tensor.register_post_accumulate_grad_hook); FSDP2's foreach_reduce calls
 * the sharded parameter's hooks itself right after assigning its sharded
 * grad, on the reduce-scatter stream (_fsdp_collectives.py, see
 * reduce_grads).  So the set of all grads never exists: a tensor's grad
 * lives from its production to its step.  Per tensor: the host launches the
 * step's kernels (zs_gpu_opt_kernels x launch overhead, gpuopt.c); the
 * states are allocated at the first step (torch and bitsandbytes create
 * them lazily); the step moves zs_gpu_opt_elem_bytes per element;
 * bitsandbytes then synchronizes the device.  Steps tensors k0 .. k1-1 of
 * unit g on queue q after `after`; own_grads: each grad is its own
 * allocation (autograd's param.grad), else views of a buffer the caller
 * frees.  Returns the last step's task. */
static int32_t steps_in_bwd(struct fs *s, int q, int g, int k0, int k1,
                            bool own_grads, int32_t after)
{
    struct zs_bctx *b = s->b;
    const struct zs_cfg *c = b->c;
    int32_t t = after;
    for (int k = k0; k < k1; k++) {
        int64_t n = s->shard_elems[k];
        int32_t grad = -1, h, dep = t;
        if (own_grads)
            dep = grad = zs_t_alloc(b, q, b->p_gpu, n * s->pb, 0,
                                    s->pb == 4 ? "fp32 grad (one tensor)"
                                               : "bf16 grad (one tensor)",
                                    g, t);
        h = zs_t_delay(b, b->q_host,
                       zs_gpu_opt_kernels(c) *
                           b->node->gpu.launch_overhead_ns,
                       ZS_CLS_HOST, "optimizer step launch (in backward)", g,
                       b->last_host, -1);
        if (s->first_step && zs_gpu_opt_paged(c, n))
            b->paged_bytes += zs_gpu_opt_state_bytes(c, n, s->pb);
        else if (s->first_step)
            dep = zs_keep_alloc(
                b, zs_t_alloc(b, q, b->p_gpu,
                              zs_gpu_opt_state_bytes(c, n, s->pb), 0,
                              c->optimizer == ZS_OPT_ADAMW
                                  ? "AdamW exp_avg + exp_avg_sq (lazy)"
                                  : "AdamW 8-bit states (bitsandbytes, lazy)",
                              g, dep));
        t = zs_t_gpu_mem(b, q, (double)n * zs_gpu_opt_elem_bytes(c, n, s->pb),
                         ZS_CLS_OPT, "optimizer step in backward", g, dep, h);
        if (grad >= 0)
            zs_t_free(b, q, grad, t);
        if (zs_gpu_opt_syncs(c))
            zs_t_drain(b, "torch.cuda.synchronize (bitsandbytes step)");
    }
    return t;
}

/* --sharding none with --optimizer-in-bwd, the root's grads: the final norm
 * and an untied lm_head step right after the root's backward `c`
 * (root_tail = true); the embedding at the end of backward.  A tied
 * embedding's grad from lm_head waits in autograd's input buffer of its
 * AccumulateGrad until the embedding's own backward adds to it (the engine
 * runs AccumulateGrad once, when all its inputs are in), so it is held from
 * the root's backward to the end and then stepped in place. */
static void root_steps(struct fs *s, bool root_tail, int32_t c)
{
    struct zs_bctx *b = s->b;
    int k0 = s->shard_off[0], kp = k0 + s->root_pre, k1 = s->shard_off[1];
    assert(b->units[0].layer < 0);
    if (root_tail) { /* the tied grad: lm_head_weight_grad */
        steps_in_bwd(s, b->q_comp, 0, kp, k1, true, c);
        return;
    }
    if (s->tied_grad >= 0) {
        int32_t t = steps_in_bwd(s, b->q_comp, 0, k0, kp, false, c);
        zs_t_free(b, b->q_comp, s->tied_grad, t);
        s->tied_grad = -1;
        return;
    }
    steps_in_bwd(s, b->q_comp, 0, k0, kp, true, c);
}

static void reduce_grads(struct fs *s, int g, int32_t bwd)
{
    struct zs_bctx *b = s->b;
    const struct zs_unit *u = &b->units[g];
    int64_t n = u->trainable;
    int64_t shard = (n + b->c->world - 1) / b->c->world;
    int pb = s->pb, rb = s->rb;
    int32_t in, out, cast = -1, t;
    /* the first reduce of a step finds no sharded grad (zero_grad set them
     * to None): under no_sync that is the last micro-step's */
    bool first = s->nosync || s->first_micro;
    if (n <= 0)
        return;
    t = rs_input(s, g, bwd, &in);
    out = zs_t_alloc(b, b->q_rs, b->p_gpu, shard * rb, 0,
                     "reduce-scatter output", g, t);
    t = zs_t_coll(b, b->q_rs, ZS_COLL_REDUCESCATTER,
                  (double)shard * b->c->world * rb, "reduce-scatter grads", g,
                  out, s->prev_rs);
    t = zs_t_free(b, b->q_rs, in, t);
    if (rb != pb) {
        /* _to_dtype_if_needed(reduce_output, orig_dtype) */
        cast = zs_t_alloc(b, b->q_rs, b->p_gpu, shard * pb, 0,
                          "reduced grads (param dtype)", g, t);
        t = zs_t_gpu_mem(b, b->q_rs, (double)shard * (rb + pb), ZS_CLS_COPY,
                         "cast grads to param dtype", g, cast, -1);
        t = zs_t_free(b, b->q_rs, out, t);
    }
    if (s->off) {
        t = grads_to_host(s, g, shard, first, t);
    } else if (s->inbwd) {
        /* the sharded grads are views of the reduce output: each tensor's
         * hook steps it; the output goes with the last (steps_in_bwd) */
        t = steps_in_bwd(s, b->q_rs, g, s->shard_off[g], s->shard_off[g + 1],
                         false, t);
    } else {
        if (s->grad_gpu[g] < 0)
            s->grad_gpu[g] = zs_t_alloc(b, b->q_rs, b->p_gpu, shard * pb, 0,
                                        pb == 4 ? "sharded fp32 grads"
                                                : "sharded bf16 grads",
                                        g, t);
        t = zs_t_gpu_mem(b, b->q_rs, (double)shard * 3 * pb, ZS_CLS_COPY,
                         "accumulate sharded grads", g, t, -1);
    }
    t = zs_t_free(b, b->q_rs, cast >= 0 ? cast : out, t);
    s->prev_rs = t;
}

/* --sharding none: autograd's AccumulateGrad (PyTorch torch/csrc/autograd/
 * functions/accumulate_grad.h, AccumulateGrad::accumulateGrad) keeps the
 * first micro-step's grad as param.grad (stolen, in the param's dtype: pb B
 * per element) and, when one exists, adds the new grad into it
 * (variable_grad += new_grad) and drops the new one.  Nothing is reduced; param.grad stays until the optimizer's
 * zero_grad(set_to_none=True). */
static int32_t local_grads(struct fs *s, int g, int32_t bwd)
{
    struct zs_bctx *b = s->b;
    int64_t n = b->units[g].trainable;
    int32_t add, t;
    if (n <= 0)
        return bwd;
    if (s->inbwd) { /* the root's tail stepped in root_backward */
        if (g == 0)
            root_steps(s, false, bwd);
        else
            steps_in_bwd(s, b->q_comp, g, s->shard_off[g], s->shard_off[g + 1],
                         true, bwd);
        return bwd;
    }
    if (s->grad_gpu[g] < 0) {
        s->grad_gpu[g] =
            zs_t_alloc(b, b->q_comp, b->p_gpu, n * s->pb, 0,
                       s->pb == 4 ? "fp32 grads (param.grad)"
                                  : "bf16 grads (param.grad)",
                       g, bwd);
        /* the tied grad's buffer (lm_head_weight_grad) becomes the root's
         * param.grad: counted in the root's grads from here */
        if (g == 0) {
            zs_t_free(b, b->q_comp, s->tied_grad, s->grad_gpu[g]);
            s->tied_grad = -1;
        }
        return s->grad_gpu[g];
    }
    add = zs_t_alloc(b, b->q_comp, b->p_gpu, n * s->pb, 0,
                     "grads of this micro-step", g, bwd);
    /* grad += new: read both, write one */
    t = zs_t_gpu_mem(b, b->q_comp, (double)n * 3 * s->pb, ZS_CLS_COPY,
                     "accumulate grads", g, add, -1);
    t = zs_t_free(b, b->q_comp, add, t);
    if (g == 0) {
        zs_t_free(b, b->q_comp, s->tied_grad, t);
        s->tied_grad = -1;
    }
    return t;
}

/* FSDP1 NO_SHARD on several ranks (--sharding no-shard, or FSDP1's own
 * switch), PyTorch torch/distributed/fsdp/_runtime_utils.py at v2.2:
 * _post_backward_hook waits for the compute stream on the post-backward
 * stream and, the handle not using a sharded strategy, calls
 * _reduce_grad_no_shard: dist.all_reduce(flat_param.grad) in place (pre-
 * and post-divided), then the cast to the param dtype (none when the grad
 * is already in it) and _post_reduce_grad_callback; flat_param.grad stays
 * the whole unit's grad until zero_grad (local_grads).  Under no_sync the
 * hook skips the reduce (_should_free_in_backward / no_sync: grads
 * accumulate unreduced) and the last micro-step all-reduces the sum.
 * FlatParamHandle.needs_unshard is false for NO_SHARD without param mixed
 * precision, so nothing is all-gathered (unshard returns early).
 * [simplification] with fp32 params and a bf16 param_dtype FSDP1 NO_SHARD
 * still casts a low-precision copy per unit (_mp_shard); that copy and the
 * grad casts are not modelled.  One all-reduce in flight, on the
 * reduce-scatter stream (the post-backward stream). */
static void allreduce_grads(struct fs *s, int g, int32_t ready)
{
    struct zs_bctx *b = s->b;
    int64_t n = b->units[g].trainable;
    if (n <= 0)
        return;
    s->prev_rs = zs_t_coll(b, b->q_rs, ZS_COLL_ALLREDUCE, (double)n * s->rb,
                           "all-reduce flat grad (FSDP1 NO_SHARD)", g, ready,
                           s->prev_rs);
}

/* post_backward of group g after its backward finished at `bwd`. */
static void post_backward(struct fs *s, int g, int32_t bwd, bool boundary)
{
    if (s->noshard) {
        int32_t t = local_grads(s, g, bwd);
        if (s->replicas && (!s->nosync || boundary))
            allreduce_grads(s, g, t);
    }
    else if (s->nosync && !boundary)
        hold_grads(s, g, bwd);
    else
        reduce_grads(s, g, bwd);
}

/* --loss fp32-output (model.c loss_fp32_output): after lm_head (compute
 * task c) the fp32 upcast replaces the bf16 logits, the loss reads a
 * contiguous shifted fp32 copy and saves its log-softmax; the fp32 logits
 * stay in the output the loop holds (s->out_fp32), or, with --loss
 * fp32-logits, go with the output at the end of forward. */
static void loss_forward_fp32_output(struct fs *s,
                                     const struct zs_loss_bytes *lb,
                                     int32_t c)
{
    struct zs_bctx *b = s->b;
    int32_t sh, t;
    s->out_fp32 = zs_t_alloc(b, b->q_comp, b->p_gpu, lb->logits_fp32, 0,
                             "logits (fp32, held by the output)", 0, c);
    zs_t_free(b, b->q_comp, s->logits, s->out_fp32);
    s->logits = -1;
    sh = zs_t_alloc(b, b->q_comp, b->p_gpu, lb->shift_fp32, 0,
                    "shifted logits (fp32, contiguous)", 0, s->out_fp32);
    s->logprobs[0] = zs_t_alloc(b, b->q_comp, b->p_gpu, lb->logprobs_fp32, 0,
                                "log-softmax (fp32, saved)", 0, sh);
    t = zs_t_gpu_mem(b, b->q_comp, (double)lb->shift_fp32 * 2, ZS_CLS_COPY,
                     "shift_logits.contiguous()", 0, s->logprobs[0], -1);
    zs_t_free(b, b->q_comp, sh, t);
    if (lb->output_dropped) { /* --loss fp32-logits (model.c) */
        zs_t_free(b, b->q_comp, s->out_fp32, t);
        s->out_fp32 = -1;
    }
}

/* torchtune's whole-logits loss (model.c loss_torchtune_whole): the fp32
 * upcast replaces the bf16 logits inside the model, the log-softmax is
 * saved, and `del logits` drops the fp32 logits after the loss. */
static void loss_forward_upcast_in_model(struct fs *s,
                                         const struct zs_loss_bytes *lb,
                                         int32_t c)
{
    struct zs_bctx *b = s->b;
    int32_t f32 = zs_t_alloc(b, b->q_comp, b->p_gpu, lb->logits_fp32, 0,
                             "logits upcast (fp32)", 0, c);
    zs_t_free(b, b->q_comp, s->logits, f32);
    s->logits = -1;
    s->logprobs[0] = zs_t_alloc(b, b->q_comp, b->p_gpu, lb->logprobs_fp32, 0,
                                "log-softmax (fp32, saved)", 0, f32);
    zs_t_free(b, b->q_comp, f32, s->logprobs[0]);
}

/* Backward of a whole-logits eager loss (model.c loss_whole) as autograd
 * runs it: NllLossBackward0 writes a dense fp32 gradient (nll_loss_backward
 * zero-fills a tensor the size of its input, aten/src/ATen/native/cuda/
 * Loss.cu), LogSoftmaxBackward0 a second one (_log_softmax_backward_data,
 * derivatives.yaml) while the saved log-softmax is alive; then the first
 * and the saved output go.  With --loss fp32-output the shift slice's
 * backward writes a full-size fp32 gradient of the held logits; last
 * .float()'s backward casts to bf16 for lm_head.  Returns the task after
 * which the lm_head backward may start (its bf16 gradient allocated:
 * *g16). */
static int32_t loss_backward_whole(struct fs *s, const struct zs_loss_bytes *lb,
                                   int32_t l, int32_t *g16)
{
    struct zs_bctx *b = s->b;
    int32_t nll, gin, gl;
    nll = zs_t_alloc(b, b->q_comp, b->p_gpu, lb->grad_fp32, 0,
                     "nll_loss grad (fp32)", 0, l);
    gin = zs_t_alloc(b, b->q_comp, b->p_gpu, lb->grad_fp32, 0,
                     "log_softmax grad (fp32)", 0, nll);
    zs_t_free(b, b->q_comp, nll, gin);
    zs_t_loss_release(b, lb, s->logprobs, gin);
    if (lb->fp32_held) {
        gl = zs_t_alloc(b, b->q_comp, b->p_gpu, lb->logits_fp32, 0,
                        "logits grad (fp32)", 0, gin);
        zs_t_free(b, b->q_comp, gin, gl);
        gin = gl;
    }
    *g16 = zs_t_alloc(b, b->q_comp, b->p_gpu, lb->grad_bf16, 0,
                      "logits grad (bf16)", 0, gin);
    return zs_t_free(b, b->q_comp, gin, *g16);
}

/* `output = None` (Answer.AI's train.py, after backward and the optimizer
 * step): the held fp32 logits go. */
static void drop_output(struct fs *s)
{
    if (s->out_fp32 < 0)
        return;
    zs_t_free(s->b, s->b->q_host, s->out_fp32, s->b->last_host);
    s->out_fp32 = -1;
}

/* Forward of one micro-step: the root's unshard, every layer group's
 * unshard, hooks, compute and reshard, then the root's tail (final norm,
 * lm_head, loss). */
static void forward_pass(struct fs *s, const struct zs_loss_bytes *lb)
{
    struct zs_bctx *b = s->b;
    struct zs_act_opts la; /* group g's layer (checkpointing layer:N) */
    int n = b->nunits;
    int32_t l, c = -1, work, deq;
    b->phase = ZS_PH_FORWARD;
    unshard(s, 0); /* root */
    for (int g = 1; g < n; g++) {
        unshard(s, g);
        zs_act_opts_at(b, b->units[g].layer, &la);
        l = launch(b, g, b->units[g].kernels_fwd, false);
        s->saved[g] = zs_t_alloc(b, b->q_comp, b->p_gpu,
                                 zs_model_act_saved_per_layer(b->m, &la), 0,
                                 "saved activations", g, l);
        {
            /* activation offload (actoff.c) */
            int32_t h = zs_actoff_fwd_begin(b, b->units[g].layer, g,
                                            s->saved[g], l);
            if (h >= 0)
                l = h;
        }
        work =
            zs_t_alloc(b, b->q_comp, b->p_gpu, zs_model_act_work_fwd(b->m, &la),
                       0, "forward workspace", g, l);
        deq = zs_t_alloc(b, b->q_comp, b->p_gpu,
                         zs_model_dequant_bytes(b->m, &la), 0,
                         "dequantised NF4 weight (bf16, per matmul)", g, l);
        c = zs_t_compute(b, g, false, "forward", l, -1);
        zs_t_free(b, b->q_comp, work, c);
        zs_t_free(b, b->q_comp, deq, c);
        zs_actoff_fwd_end(b, b->units[g].layer, g, c);
        if (s->reshard)
            reshard(s, g, c);
    }
    /* root's tail: final norm, lm_head, loss */
    l = launch(b, 0, b->units[0].kernels_fwd, false);
    zs_actoff_tail_fwd(b, 0, l); /* the final norm's saved tensors */
    s->logits = zs_t_alloc(b, b->q_comp, b->p_gpu, lb->logits_bf16, 0,
                           "logits (bf16)", 0, l);
    c = zs_t_compute(b, 0, false, "lm_head + loss", l, -1);
    if (lb->fp32_held) {
        loss_forward_fp32_output(s, lb, c);
        return;
    }
    if (lb->upcast_in_model) {
        loss_forward_upcast_in_model(s, lb, c);
        return;
    }
    {
        int32_t t = zs_t_loss_forward(b, 0, lb, c, s->logprobs);
        if (lb->logits_freed_in_fwd) { /* torchtune's `del logits` */
            zs_t_free(b, b->q_comp, s->logits, t);
            s->logits = -1;
        }
    }
}

/* The tied embedding's weight grad from lm_head's backward, --sharding
 * none.  F.linear(h, embedding.weight) (torchtune TiedLinear, transformers'
 * tied lm_head) hands its weight grad to the embedding weight's
 * AccumulateGrad, whose input buffer (torch/csrc/autograd/input_buffer.cpp,
 * InputBuffer::add: the first grad is kept, later ones are added into it in
 * place) holds it until the embedding's backward, the last use, adds its
 * part; only then does the engine run AccumulateGrad (param.grad, or the
 * step under --optimizer-in-bwd: root_steps, local_grads).  So the buffer
 * is alive from lm_head's backward to the end of backward.  With a chunked
 * loss every chunk's F.linear adds a weight grad: the second chunk's is
 * allocated while the first is held (the engine runs the nodes by
 * decreasing sequence number: every chunk's cross-entropy backward, made
 * last in forward, before any chunk's projection, so the chunks' logits
 * grads are all alive then, less the first projection's).  `last` is the
 * bf16 grad of the chunk whose projection runs first, freed here.  Returns
 * the last task. */
static int32_t lm_head_weight_grad(struct fs *s, const struct zs_loss_bytes *lb,
                                   int32_t *last, int32_t after)
{
    struct zs_bctx *b = s->b;
    int64_t wb = s->shard_elems[s->shard_off[0]] * s->pb;
    int32_t nxt;
    if (!s->noshard || !b->m->tie_embeddings || s->root_pre <= 0)
        return after;
    s->tied_grad = zs_t_alloc(b, b->q_comp, b->p_gpu, wb, 0,
                              "tied embedding grad (lm_head's part, "
                              "held by autograd)",
                              0, after);
    if (lb->pieces <= 1 || *last < 0)
        return s->tied_grad;
    zs_t_free(b, b->q_comp, *last, s->tied_grad);
    *last = -1;
    nxt = zs_t_alloc(b, b->q_comp, b->p_gpu, wb, 0,
                     "next chunk's lm_head weight grad (added in place)", 0,
                     s->tied_grad);
    return zs_t_free(b, b->q_comp, nxt, nxt);
}

/* Backward of the root's tail (loss, lm_head, final norm): the logits'
 * grads in fp32 then bf16; a chunked loss's cross-entropy backward frees
 * each chunk's saved logits (the compiled graph's saved tensors) and
 * leaves its bf16 grad, so all chunks' grads are alive when the
 * projections' backward starts (lm_head_weight_grad).  Returns the
 * backward's compute task. */
static int32_t root_backward(struct fs *s, const struct zs_loss_bytes *lb)
{
    struct zs_bctx *b = s->b;
    int32_t l, c, g32, g16, rest = -1, t;
    l = launch(b, 0, b->units[0].kernels_bwd, true);
    if (lb->fp32_held || (lb->pieces == 1 && !lb->fused_upcast &&
                          lb->logprobs_fp32 > 0)) {
        g32 = loss_backward_whole(s, lb, l, &g16);
        t = lm_head_weight_grad(s, lb, &g16, g32);
        c = zs_t_compute(b, 0, true, "backward", t, -1);
        zs_t_free(b, b->q_comp, g16, c);
        zs_t_free(b, b->q_comp, s->logits, c);
        if (s->inbwd && s->noshard)
            root_steps(s, true, c);
        return c;
    }
    g32 = zs_t_alloc(b, b->q_comp, b->p_gpu, lb->grad_fp32, 0,
                     "logits grad (fp32)", 0, l);
    zs_t_loss_release(b, lb, s->logprobs, g32);
    g16 = zs_t_alloc(b, b->q_comp, b->p_gpu, lb->grad_bf16, 0,
                     "logits grad (bf16)", 0, g32);
    zs_t_free(b, b->q_comp, g32, g16);
    t = g16;
    if (lb->pieces > 1) {
        zs_t_free(b, b->q_comp, s->logits, g16);
        s->logits = -1;
        rest = zs_t_alloc(b, b->q_comp, b->p_gpu,
                          lb->grad_bf16 * (lb->pieces - 1), 0,
                          "logits grads of the other chunks (bf16)", 0, g16);
        if (rest >= 0)
            t = rest;
    }
    t = lm_head_weight_grad(s, lb, &g16, t);
    c = zs_t_compute(b, 0, true, "backward", t, -1);
    zs_t_free(b, b->q_comp, g16, c);
    zs_t_free(b, b->q_comp, rest, c);
    zs_t_free(b, b->q_comp, s->logits, c);
    if (s->inbwd && s->noshard)
        root_steps(s, true, c);
    return c;
}

/* Backward of one layer group g: unshard (and prefetch the next), the
 * offloaded activations back, recompute per the checkpointing mode,
 * backward, reshard and post_backward.  Returns the backward's compute
 * task. */
static int32_t group_backward(struct fs *s, int g, bool boundary)
{
    struct zs_bctx *b = s->b;
    struct zs_act_opts la;
    int32_t l, c, deq, ws = -1;
    struct zs_recompute rc;
    unshard(s, g);
    if (g > 1)
        unshard(s, g - 1); /* backward prefetch: one group ahead */
    bool full = zs_full_ckpt_at(b, b->units[g].layer);
    zs_act_opts_at(b, b->units[g].layer, &la);
    l = launch(b, g, b->units[g].kernels_bwd, true);
    {
        /* the offloaded input comes back before the recompute */
        int32_t h = zs_actoff_bwd_begin(b, b->units[g].layer, g,
                                        &s->saved[g], l);
        if (h >= 0)
            l = h;
    }
    /* full checkpointing: the recomputed saved set and the recompute
     * forward's workspace, whose blocks the backward workspace reuses
     * (emit.c zs_t_recompute_begin) */
    if (full) {
        zs_t_recompute_begin(b, g, &la, l, &rc);
        s->act_bwd = rc.layer;
    } else {
        s->act_bwd = zs_t_alloc(b, b->q_comp, b->p_gpu,
                                zs_model_act_work_bwd(b->m, &la), 0,
                                "backward workspace", g, l);
    }
    /* QLoRA: the weight each matmul dequantises (recompute and backward) */
    deq = zs_t_alloc(b, b->q_comp, b->p_gpu, zs_model_dequant_bytes(b->m, &la),
                     0, "dequantised NF4 weight (bf16, per matmul)", g, l);
    if (full) {
        c = zs_t_compute(b, g, false, "recompute forward",
                         rc.fwd_ws >= 0 ? rc.fwd_ws : l, -1);
        ws = zs_t_recompute_end(b, g, &rc, c);
    } else if (b->c->checkpointing == ZS_CKPT_OP) {
        c = zs_t_delay(b, b->q_comp, (int64_t)b->op_recompute_ns, ZS_CLS_COMPUTE,
                       "recompute (per-op AC)", g, s->act_bwd, -1);
    }
    c = zs_t_compute(b, g, true, "backward", l, -1);
    zs_actoff_bwd_end(b, b->units[g].layer, c);
    zs_t_free(b, b->q_comp, s->act_bwd, c);
    zs_t_free(b, b->q_comp, deq, c);
    zs_t_free(b, b->q_comp, s->saved[g], c);
    zs_t_free(b, b->q_comp, ws, c);
    reshard(s, g, c);
    post_backward(s, g, c, boundary);
    return c;
}

static void micro_step(struct fs *s)
{
    bool boundary = s->boundary;
    struct zs_bctx *b = s->b;
    struct zs_act_opts ao;
    struct zs_loss_bytes lb;
    int32_t c;
    zs_act_opts_of(b, &ao);
    zs_model_loss_bytes(b->m, &ao, &lb);
    s->prev_copyout = s->prev_agbuf = -1;
    zs_actoff_micro_begin(b);

    forward_pass(s, &lb);

    b->phase = ZS_PH_BACKWARD;
    c = root_backward(s, &lb);
    zs_actoff_bwd_end(b, (int)b->m->n_layers, c);
    s->prev_copyout = -1;
    for (int g = b->nunits - 1; g >= 1; g--)
        c = group_backward(s, g, boundary);
    post_backward(s, 0, c, boundary); /* the root's grads reduce last */
    reshard(s, 0, c);
    if (s->prev_agbuf >= 0)
        zs_t_free(b, b->q_comp, s->prev_agbuf, c);
    s->prev_agbuf = -1;
    /* finalize_backward: the host waits for every grad copy */
    zs_t_drain(b, "finalize_backward");
    if (!boundary)
        drop_output(s);
}

static void optimizer_step(struct fs *s, bool first)
{
    struct zs_bctx *b = s->b;
    int64_t T = b->T;
    b->phase = ZS_PH_OPTIMIZER;
    if (s->inbwd) /* every tensor stepped in backward, no clipping */
        return;
    zs_t_coll(b, b->q_comp, ZS_COLL_ALLREDUCE, 8, "grad-norm all-reduce", -1,
              b->last_host, -1);
    if (s->off) {
        if (first)
            zs_keep_alloc(b, zs_t_alloc(
                b, b->q_host, b->p_host, T * 2 * s->pb, 0,
                "AdamW exp_avg + exp_avg_sq (lazy)", -1, b->last_host));
        /* CPU clip pass (when clipping) and the user's AdamW, by
         * implementation (cpuopt.c) */
        double fb, ob;
        zs_cpu_opt_bytes(b->c, &fb, &ob);
        zs_t_cpu(b, (double)T * fb,
                 b->node->cpu_adam_fused_bytes_per_s_per_thread, ZS_CLS_OPT,
                 "AdamW(fused=True) (CPU)", b->last_host);
        zs_t_cpu(b, (double)T * ob, b->node->torch_op_bytes_per_s_per_thread,
                 ZS_CLS_OPT,
                 b->c->cpu_opt_impl == ZS_CPUOPT_TORCH_LOOP
                     ? "clip + AdamW for-loop (CPU)"
                     : "clip_grad_norm_ (CPU)",
                 b->last_host);
        /* zero_grad(set_to_none): pinned grads return to the host cache */
        for (int g = 0; g < b->nunits; g++) {
            if (s->grad_host[g] < 0)
                continue;
            for (int k = s->shard_off[g]; k < s->shard_off[g + 1]; k++)
                zs_t_free(b, b->q_host, s->grad_ids[k], b->last_host);
            s->grad_host[g] = -1;
        }
    } else {
        int32_t a;
        bool q8 = b->c->optimizer != ZS_OPT_ADAMW;
        /* the states and the bytes per element of the whole trainable set
         * as one tensor (gpuopt.c: bitsandbytes 2 B + block-wise absmax;
         * its fp32 states for tensors under 4096 elements are not split
         * out here) */
        if (first && zs_gpu_opt_paged(b->c, T))
            b->paged_bytes += zs_gpu_opt_state_bytes(b->c, T, s->pb);
        else if (first)
            zs_keep_alloc(b,
                zs_t_alloc(b, b->q_comp, b->p_gpu,
                           zs_gpu_opt_state_bytes(b->c, T, s->pb), 0,
                           q8 ? "AdamW 8-bit states (bitsandbytes, lazy)"
                              : "AdamW exp_avg + exp_avg_sq (lazy)",
                           -1, b->last_host));
        a = zs_t_gpu_mem(b, b->q_comp,
                         (double)T * zs_gpu_opt_elem_bytes(b->c, T, s->pb),
                         ZS_CLS_OPT,
                         q8 ? "AdamW 8-bit (GPU, bitsandbytes)"
                            : "AdamW (GPU, foreach)",
                         -1, b->last_host, -1);
        for (int g = 0; g < b->nunits; g++) {
            zs_t_free(b, b->q_comp, s->grad_gpu[g], a);
            s->grad_gpu[g] = -1;
        }
    }
    drop_output(s);
}

static void fs_begin(void *ctx, int seg, bool boundary)
{
    struct fs *s = ctx;
    (void)seg; /* one segment */
    s->boundary = boundary;
    s->first_micro = s->b->micro == 0;
    /* read only by --optimizer-in-bwd (steps_in_bwd): otherwise the
     * micro-steps of every step are built alike */
    s->first_step = s->inbwd && s->b->step == 1;
}

static void fs_build(void *ctx, int seg)
{
    (void)seg;
    micro_step(ctx);
}

/* The micro-step's state (replay.c): struct fs whole, its task ids named,
 * and its per-unit and per-tensor arrays of task ids.  The shards' sizes
 * and offsets are the build's constants. */
static void fs_state(void *ctx, struct zs_rvisit *v)
{
    static const struct zs_rfield ids[] = {
        {offsetof(struct fs, prev_copyout), 1},
        {offsetof(struct fs, prev_agbuf), 1},
        {offsetof(struct fs, prev_rs), 1},
        {offsetof(struct fs, tied_grad), 1},
        {offsetof(struct fs, logits), 1},
        {offsetof(struct fs, logprobs), ZS_LOSS_PIECES_MAX},
        {offsetof(struct fs, act_bwd), 1},
        {offsetof(struct fs, out_fp32), 1},
    };
    struct fs *s = ctx;
    size_t n = (size_t)s->b->nunits;
    zs_rv_struct(v, s, sizeof *s, ids, (int)(sizeof ids / sizeof ids[0]));
    zs_rv_ids(v, s->saved, n);
    zs_rv_ids(v, s->ungathered, n);
    zs_rv_ids(v, s->grad_host, n);
    zs_rv_ids(v, s->grad_gpu, n);
    zs_rv_ids(v, s->held, n);
    zs_rv_ids(v, s->free_ev, n + 1);
    zs_rv_ids(v, s->pageable, n);
    zs_rv_ids(v, s->grad_ids, (size_t)s->shard_off[n]);
}

static void fs_opt(void *ctx, bool first)
{
    optimizer_step(ctx, first);
}

/* FSDP1's initialisation of unit g on the logging rank, whose module is on
 * the CPU (Answer.AI's train.py: low_memory loads rank 0's model on the CPU
 * and passes device_id and sync_module_states): _init_utils.py at v2.2,
 * _init_param_handle_from_module -> _move_module_to_device moves the unit's
 * parameter tensors to the GPU one by one; FlatParamHandle flattens them
 * (torch.cat into one new flat parameter; the originals become views and
 * are freed); shard() clones this rank's chunk (_get_shard: chunk.clone())
 * and frees the flat parameter.  With CPUOffload the shard then moves to the
 * CPU.  train.py calls torch.cuda.empty_cache() only before wrapping and
 * reset_peak_memory_stats() before training, so the segments this leaves
 * cached (default stream) count in the measured peak reserved.  Tensor
 * sizes: the unit's leaves (leaf_shards at world 1), scaled to the unit's
 * stored bytes (QLoRA's NF4 weights).  Returns the resident shard's
 * allocation (-1 with offload); under NO_SHARD (v1ns: world 1, or
 * --sharding no-shard) the whole flat parameter, never cloned. */
static int32_t init_unit_v1(struct fs *s, int g)
{
    struct zs_bctx *b = s->b;
    const struct zs_model *m = b->m;
    const struct zs_unit *u = &b->units[g];
    int64_t el[512], store, ag, sum = 0, w;
    int32_t id[512], flat, shard, t = -1;
    int n = 0;
    double scale;
    const struct zs_leaf *lv = u->layer < 0 ? m->pre : m->layer;
    int nl = u->layer < 0 ? m->n_pre : m->n_layer_leaves;
    for (int i = 0; i < nl; i++)
        leaf_shards(m, &lv[i], 1, el, &n, 512);
    for (int i = 0; u->layer < 0 && i < m->n_post; i++)
        leaf_shards(m, &m->post[i], 1, el, &n, 512);
    shard_bytes(s, u, &store, &ag);
    for (int i = 0; i < n; i++)
        sum += el[i];
    w = zs_cfg_shard_world(b->c);
    scale = sum > 0 ? (double)store * (double)w / (double)sum : 0;
    for (int i = 0; i < n; i++)
        t = id[i] = zs_t_alloc(b, b->q_comp, b->p_gpu,
                               (int64_t)((double)el[i] * scale), 0,
                               "param moved to GPU (FSDP1 init)", g, t);
    flat = zs_t_alloc(b, b->q_comp, b->p_gpu, store * w, 0,
                      s->v1ns ? "flat param (FSDP1 NO_SHARD, whole)"
                              : "flat param (FSDP1 init, torch.cat)",
                      g, t);
    for (int i = 0; i < n; i++)
        zs_t_free(b, b->q_comp, id[i], flat);
    /* NO_SHARD: FlatParamHandle.shard() only records the shard metadata
     * when not uses_sharded_strategy (_flat_param.py at v2.2): the flat
     * parameter stays whole and is the unit's resident storage */
    if (s->v1ns)
        return flat;
    shard = zs_t_alloc(b, b->q_comp, b->p_gpu, store, 0,
                       u->nf4_elems > 0 ? "sharded NF4 base + bf16 params"
                       : s->pb == 4     ? "sharded fp32 params"
                                        : "sharded bf16 params",
                       g, flat);
    zs_t_free(b, b->q_comp, flat, shard);
    if (!s->off)
        return shard;
    zs_t_free(b, b->q_comp, shard, shard);
    return -1;
}

/* The schedule's modes from the configuration (see the top of the file). */
static void fs_modes(struct fs *s, struct zs_bctx *b)
{
    memset(s, 0, sizeof *s);
    s->b = b;
    s->off = b->c->offload_param != ZS_OFF_NONE;
    s->reshard = b->c->zero == 3;
    s->prev_rs = -1;
    s->out_fp32 = -1;
    s->pb = zs_cfg_param_bytes(b->c);
    s->rb = zs_cfg_reduce_bytes(b->c);
    s->nosync = zs_cfg_grads_held_unsharded(b->c);
    s->v1 = b->c->fsdp_version == 1 && b->c->sharding != ZS_SHARD_NONE;
    /* FSDP1 on one process switches FULL_SHARD to NO_SHARD (_init_utils.py
     * _init_core_state at v2.2: "FSDP is switching to use `NO_SHARD`
     * instead of ... since the world size is 1"): the flat parameters stay
     * whole on the device and the grads accumulate in place, as without
     * sharding */
    s->noshard = b->c->sharding == ZS_SHARD_NONE ||
                 b->c->sharding == ZS_SHARD_NO_SHARD ||
                 (s->v1 && b->c->world == 1);
    s->replicas = s->noshard && b->c->world > 1;
    /* with CPUOffload(offload_params) the flat param is moved to the host
     * after shard() (_init_param_handle_from_params) and copied in per unit
     * by pre_unshard's flat_param_to(device) (_flat_param.py at v2.2), as
     * the offload path below does: not a resident whole flat param */
    s->v1ns = s->v1 && s->noshard && !s->off;
    s->v1 = s->v1 && !s->noshard;
    s->inbwd = b->c->optimizer_in_bwd;
    s->tied_grad = -1;
    s->v1off = s->v1 && s->off;
    s->bnb_qs = b->c->fsdp_version == 1 && b->mo.method == ZS_METHOD_QLORA;
}

/* FSDP1 (--fsdp-version 1) with CPUOffload(offload_params=True): each
 * group's FlatParameter on the host, its shard_bytes `store`.  PyTorch
 * torch/distributed/fsdp at 01caf79e047f:
 *  - _init_utils.py _init_param_handle_from_params: after handle.shard(),
 *    handle.flat_param_to(cpu): the sharded flat param, pageable;
 *  - _flat_param.py _init_flat_param_attributes (lazy init, before the
 *    first forward): _local_shard = flat_param.data.pin_memory(), a pinned
 *    copy, and _cpu_grad = torch.zeros_like(_local_shard).pin_memory()
 *    (pageable zeros, then their pinned copy), for every flat param whether
 *    or not it requires grad: under QLoRA the frozen NF4 base holds a
 *    _cpu_grad as large as itself for the whole run;
 *  - pre_unshard: flat_param_to(device) (or _use_low_precision_shard)
 *    rebinds flat_param.data, so the pageable shard lives until the group's
 *    first unshard (unshard above); later unshards copy from _local_shard.
 * Each pin_memory() goes through the CachingHostAllocator, which rounds it to
 * a power of two (engine/pool.c).  [simplification] Under LoRA/QLoRA the
 * adapters are separate FSDP1 units (PEFT fsdp_auto_wrap_policy wraps every
 * leaf module whose weight requires grad); they are counted in the group's
 * block, as in param_shards. */
static void flat_param_host(struct fs *s)
{
    struct zs_bctx *b = s->b;
    unsigned pin = ZS_ALLOC_PINNED; /* FSDP1 always pins (no option) */
    int64_t store, ag;
    int32_t z;
    for (int g = 0; g < b->nunits; g++) { /* the constructor */
        shard_bytes(s, &b->units[g], &store, &ag);
        s->pageable[g] = zs_t_alloc(b, b->q_host, b->p_host, store, 0,
                                    "sharded flat param (FSDP1, pageable "
                                    "until its first unshard)",
                                    g, -1);
    }
    for (int g = 0; g < b->nunits; g++) { /* lazy init, root first */
        shard_bytes(s, &b->units[g], &store, &ag);
        zs_t_alloc(b, b->q_host, b->p_host, store, pin,
                   "sharded flat param (FSDP1 _local_shard, pinned)", g, -1);
        z = zs_t_alloc(b, b->q_host, b->p_host, store, 0,
                       "zeros for _cpu_grad (FSDP1, pageable)", g, -1);
        zs_t_alloc(b, b->q_host, b->p_host, store, pin,
                   "sharded grads (FSDP1 _cpu_grad, pinned)", g, z);
        zs_t_free(b, b->q_host, z, b->last_host);
    }
}

int zs_build_fsdp2(struct zs_bctx *b)
{
    static const struct zs_micro_ops ops = {
        1,
        {ZS_POS_FIRST | ZS_POS_LAST | ZS_POS_FIRST_STEP},
        fs_begin,
        fs_build,
        fs_state,
        fs_opt};
    struct fs s;
    int n = b->nunits, rc = 0;
    fs_modes(&s, b);
    s.saved = zs_calloc((size_t)n, sizeof *s.saved);
    s.ungathered = zs_calloc((size_t)n, sizeof *s.ungathered);
    s.grad_host = zs_calloc((size_t)n, sizeof *s.grad_host);
    s.grad_gpu = zs_calloc((size_t)n, sizeof *s.grad_gpu);
    s.held = zs_calloc((size_t)n, sizeof *s.held);
    s.free_ev = zs_calloc((size_t)n + 1, sizeof *s.free_ev);
    s.pageable = zs_calloc((size_t)n, sizeof *s.pageable);
    if (!s.saved || !s.ungathered || !s.grad_host || !s.grad_gpu || !s.held ||
        !s.free_ev || !s.pageable) {
        rc = ZS_ENOMEM;
        goto out;
    }
    for (int g = 0; g < n; g++)
        s.saved[g] = s.ungathered[g] = s.grad_host[g] = s.grad_gpu[g] =
            s.held[g] = s.pageable[g] = -1;

    b->phase = ZS_PH_INIT;
    b->step = 0;
    zs_t_alloc(b, b->q_host, b->p_host, ZS_HOST_RUNTIME_BYTES, 0,
               "process runtime (python, torch, CUDA host side)", -1, -1);
    rc = param_shards(&s);
    if (rc)
        goto out;
    if (s.bnb_qs)
        quant_state_gpu(&s);
    /* FSDP1 wraps the children before the root (auto_wrap post-order) */
    for (int k = 1; (s.v1 || s.v1ns) && k <= n; k++)
        init_unit_v1(&s, k % n);
    if (s.v1off)
        flat_param_host(&s);
    for (int g = 0; g < n; g++) {
        const struct zs_unit *u = &b->units[g];
        int64_t store, ag;
        bool nf4 = u->nf4_elems > 0;
        shard_bytes(&s, u, &store, &ag);
        if (s.v1off) /* FSDP1's flat params: flat_param_host */
            continue;
        if (s.off && nf4) /* QLoRA: one block per group (param_shards) */
            zs_t_alloc(b, b->q_host, b->p_host, store,
                       b->c->pin_param ? ZS_ALLOC_PINNED : 0,
                       "sharded NF4 base + bf16 params (pinned)", g, -1);
        else if (s.off) /* _init_sharded_param: .cpu().pin_memory() per
                         * parameter */
            for (int k = s.shard_off[g]; k < s.shard_off[g + 1]; k++)
                zs_t_alloc(b, b->q_host, b->p_host, s.shard_elems[k] * s.pb,
                           b->c->pin_param ? ZS_ALLOC_PINNED : 0,
                           s.pb == 4 ? "sharded fp32 params (pinned)"
                                     : "sharded bf16 params (pinned)",
                           g, -1);
        else if (s.noshard && !s.v1ns) /* --sharding none: store is the
                                        * whole group */
            zs_t_alloc(b, b->q_comp, b->p_gpu, store, 0,
                       nf4         ? "params (NF4 base + bf16, no sharding)"
                       : s.pb == 4 ? "fp32 params (no sharding)"
                                   : "bf16 params (no sharding)",
                       g, -1);
        else if (!s.v1 && !s.v1ns) /* FSDP1: init_unit_v1 */
            zs_t_alloc(b, b->q_comp, b->p_gpu, store, 0,
                       nf4         ? "sharded NF4 base + bf16 params"
                       : s.pb == 4 ? "sharded fp32 params"
                                   : "sharded bf16 params",
                       g, -1);
    }

    zs_run_steps(b, &s, &ops);
    rc = b->failed;
out:
    zs_free(s.saved);
    zs_free(s.ungathered);
    zs_free(s.grad_host);
    zs_free(s.grad_gpu);
    zs_free(s.held);
    zs_free(s.free_ev);
    zs_free(s.pageable);
    zs_free(s.shard_elems);
    zs_free(s.shard_off);
    zs_free(s.grad_ids);
    return rc;
}
