/*
 * hooks.c — host (CPU) time of the framework's per-module hooks on the
 * launching thread, per unit and pass.  The schedules put it on the host
 * queue before the unit's kernel launches (zero.c, fsdp2.c `launch`), so it
 * delays the GPU only when the host is not ahead of it: with the GPU the
 * bottleneck it is hidden, with small per-module work it sets the pace.
 *
 * What runs, by framework (code read at the commits named):
 *
 * DeepSpeed ZeRO-3 (deepspeedai/DeepSpeed edaa7221, 0.19.6):
 * DeepSpeedZeRoOffload.setup_zero_stage3_hooks registers four hooks on every
 * module of the model, recursing into children unless a module is a z3 leaf
 * (runtime/zero/parameter_offload.py:293-305 and _register_deepspeed_module
 * :331-522): forward pre (fetch_sub_module: trace bookkeeping, gathers and
 * prefetch), forward post (release_sub_module, plus the backward functions
 * applied to the outputs), and pre/post backward (the same fetch and
 * release).  Modules without direct parameters — the decoder layer, its
 * attention and MLP, the activation module — are hooked as well and run the
 * coordinator with an empty parameter set.  Trained parameters also carry a
 * grad-accumulation hook (stage3.py:1437 create_reduce_and_remove_grad_hooks).
 *
 * DeepSpeed ZeRO-2 (stage_1_and_2.py:1152-1181 create_gradient_handling_
 * hooks): no module hooks; one grad-accumulation hook per trained parameter
 * tensor, in backward (process_gradients -> reduce_independent_p_g_buckets_
 * and_remove_grads :1193: the copy into the IPG bucket, bucket bookkeeping).
 *
 * FSDP2: per fully_shard group, pre/post forward and pre/post backward hooks
 * (torch/distributed/fsdp/_fully_shard/_fsdp_state.py, _fsdp_param_group.py
 * at 010ae4a89516).  The unshard (all-gather) part of pre_forward and
 * pre_backward is charged where it runs (fsdp2.c unshard,
 * zs_fsdp2_unshard_host_ns below); the rest here.
 */
#include "sched/sched_int.h"

/* DeepSpeed ZeRO-3: host time of one hooked module's hooks in one pass
 * (forward, recompute or backward), lumping its pre and post hooks and its
 * parameters' grad hooks.  [assumption] 40 us, carried over: no primary
 * source gives a per-module figure.  What the sources measure are whole-run
 * ratios on their own setups: DeepSpeed #1069 (RoBERTa-10B, 16 p3dn hosts:
 * ZeRO-2 44.7 vs ZeRO-3 19.5 TFLOPS/GPU, a prefetch bug later fixed by PR
 * #1453, after which RoBERTa-10B/50B on 64 A100s reached "roughly parity
 * with ZeRO stage 2"), PR #3622 (BERT 1.5B, 8 x A100, micro-batch 32: 42 ->
 * 56 per step after several host-side changes), PR #6649 (40 % on Gaudi for a
 * 64-expert MoE by coalescing the experts' fetches), none of which isolates
 * the hook time per module. */
#define DS_HOOK_NS 40000
/* Hooked modules without parameters, per decoder layer: the decoder layer,
 * its attention, its MLP and the MLP's activation module — HF
 * modeling_llama.py (transformers 002272831f): LlamaDecoderLayer,
 * LlamaAttention, LlamaMLP with act_fn = ACT2FN[...], an nn.Module.  (That
 * version also keeps a rotary_emb module inside the attention; later
 * versions hold one per model [not verified at a commit], so it is not
 * counted.)  A MoE layer counts the decoder layer and the attention only:
 * zsim fetches a layer's experts as one unit, which is DeepSpeed's
 * set_z3_leaf_modules on the sparse MoE block (the documented recipe for
 * MoE under ZeRO-3, PR #4966), and a z3 leaf's children get no hooks
 * (_register_deepspeed_module recurses only into non-leaf modules). */
#define DS_LAYER_CONTAINERS_DENSE 4
#define DS_LAYER_CONTAINERS_MOE 2
/* Model-level modules, once per pass: the ForCausalLM wrapper and the base
 * model (LlamaForCausalLM, LlamaModel). */
#define DS_MODEL_CONTAINERS 2
/* DeepSpeed ZeRO-2: one grad-accumulation hook per trained tensor, backward
 * only.  [assumption] 40 us, the ZeRO-3 per-module figure carried over (the
 * hook does the bucket copy and its bookkeeping; no source times it alone;
 * PR #7886's 0.0505 s per iteration for a 147-tensor, 267M-parameter model on
 * 8 x H100 bounds it from above at 344 us). */
#define DS2_GRAD_HOOK_NS 40000
/* FSDP2, per group and pass, besides the unshard: [assumption] 60 us
 * (input casting, the post-backward autograd function over the inputs,
 * reshard, post_backward's foreach_reduce on the host). */
#define FSDP2_HOOK_NS 60000
/* FSDP2 unshard on the host, per group: PyTorch PR #133369 (awgu,
 * 2024-08-13), Llama3-8B under torchtitan, "CPU overhead for all-gather"
 * per transformer block: 0.46 ms with the per-parameter .to(bf16) casts,
 * 0.37 ms with the foreach fast path (torch.empty + split +
 * _foreach_copy_, torch >= 2.5).  The fast path is taken only with a
 * param_dtype and without CPU offload (_fsdp_collectives.py at 010ae4a89516,
 * _get_param_all_gather_inputs.use_foreach_copy); otherwise the per-
 * parameter path, charged at the 0.46 ms figure (with offload the
 * per-parameter non-blocking H2D .to(device) dispatches come on top and
 * are not in the figure).  Hardware is not stated in the PR; awgu's FSDP2
 * PRs of the time run on 8 x H100 (e.g. PR #132445). */
#define FSDP2_UNSHARD_FAST_NS 370000
#define FSDP2_UNSHARD_LOOP_NS 460000

/* Hooked modules unit u stands for in DeepSpeed ZeRO-3: itself, plus the
 * decoder layer's parameterless modules on the layer's first unit (their
 * pre-forward hooks run before it) and the model-level modules on the
 * first unit. */
static int ds_hooked_modules(const struct zs_bctx *b, int unit)
{
    const struct zs_unit *u = &b->units[unit];
    int n = 1;
    if (u->layer >= 0 && u->first_of_layer)
        n += b->m->n_experts ? DS_LAYER_CONTAINERS_MOE
                             : DS_LAYER_CONTAINERS_DENSE;
    if (unit == 0)
        n += DS_MODEL_CONTAINERS;
    return n;
}

/* Trained parameter tensors of unit u (their grad hooks): every tensor in a
 * full fine-tune, a LoRA pair where the unit has adapters. */
static int trained_tensors(const struct zs_bctx *b, const struct zs_unit *u)
{
    if (u->trainable <= 0)
        return 0;
    return b->mo.method == ZS_METHOD_FULL ? u->n_tensors : 2;
}

int64_t zs_hook_ns(const struct zs_bctx *b, int unit, bool backward)
{
    /* --sharding none: no fully_shard, so no FSDP hooks */
    if (b->c->sharding == ZS_SHARD_NONE)
        return 0;
    if (b->c->framework == ZS_FW_FSDP2)
        return FSDP2_HOOK_NS;
    if (b->c->zero == 3)
        return (int64_t)ds_hooked_modules(b, unit) * DS_HOOK_NS;
    return backward ? (int64_t)trained_tensors(b, &b->units[unit]) *
                          DS2_GRAD_HOOK_NS
                    : 0;
}

int64_t zs_fsdp2_unshard_host_ns(bool offload)
{
    /* without offload: the fast path with a param_dtype; pure bf16 has no
     * param_dtype and no cast at all, charged the same [assumption: at most
     * the fast path's three dispatches' worth] */
    return offload ? FSDP2_UNSHARD_LOOP_NS : FSDP2_UNSHARD_FAST_NS;
}
