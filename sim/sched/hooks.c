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
 * Their host time is counted in calls into PyTorch per module, per tensor,
 * per all-gather launch and per gradient bucket flush (below), times the
 * GPU profile's hook_call_ns; the launches and flushes are charged where
 * zero.c issues them (gather, flush).

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
#include "sched/hooks.h"
#include "sched/sched_int.h"

/* ---- DeepSpeed ZeRO-3: the hooks counted in calls -------------------------
 *
 * No primary source times ZeRO-3's hooks per module (docs/kernels.md "Host
 * time of the frameworks' hooks" lists what was searched), so their host
 * time is the number of calls they make from Python into PyTorch, read from
 * the code, times one host time per call, hook_call_ns (hw.h
 * ZS_HOOK_CALL_NS).  A call is an ATen operator dispatch (torch.empty,
 * narrow, view, cat, copy_, .to, detach, record_stream, the .data getter and
 * setter), a CUDA stream or event call through torch.cuda (current_stream,
 * set_stream, wait_stream, Event record / query / destroy), a grad-mode
 * switch, an autograd Function application or its backward entered from
 * the engine, or a collective's launch; the Python around them (hook
 * dispatch in nn.Module._call_impl, iter_params, set and deque work) is not
 * counted separately and is inside the per-call time.  NVTX ranges
 * (instrument_w_nvtx) cost nothing without a profiler attached and are not
 * counted.  Read at v0.12.3 (6ea44d0; line numbers below) and checked at
 * v0.6.5 (8164ea9), v0.11.1 (e9503fe) and 0.19.6 (edaa722): the same calls
 * from 0.9.4 on, and the debug strings and inf/nan checks listed last
 * before it.
 *
 * Per hooked module and forward (or recompute) pass, 21:
 *  - pre-forward hook, pre_sub_module_forward_function (parameter_offload.py
 *    :493-507): is_grad_enabled, set_grad_enabled(False) and back (3);
 *    fetch_sub_module's @torch.no_grad() enter and exit (3: is_grad_enabled,
 *    two set_grad_enabled); after the wait, current_stream().wait_stream(
 *    allgather_stream) (partitioned_param_coordinator.py:311-312):
 *    current_stream, and wait_stream's Event, record and wait, and the
 *    event's destruction (5);
 *  - the second pre-forward hook, _post_backward_module_hook (:471-479,
 *    PostBackwardFunction :173-198): one Function.apply and its detach per
 *    input tensor (2; one tensor input [assumption: HF modules take the
 *    hidden states as their one positional tensor]);
 *  - post-forward hook: post_sub_module_forward_function and
 *    release_sub_module, each under @torch.no_grad() (6);
 *  - the second post-forward hook, _pre_backward_module_hook (:436-449,
 *    PreBackwardFunction :153-170): apply and detach per output tensor (2;
 *    one tensor [assumption]).
 * Per hooked module and backward pass, 19: PreBackwardFunction.backward
 * entered from the engine (1), pre_sub_module_backward_function and
 * fetch_sub_module under @torch.no_grad() (6), wait_stream (5);
 * PostBackwardFunction.backward (1), post_sub_module_backward_function and
 * release_sub_module under @torch.no_grad() (6).
 * Parameterless modules (the decoder layer, its attention and MLP) run the
 * same hooks with an empty parameter set.
 *
 * Per parameter tensor waited for (prefetched, in the in-flight registry),
 * 9 (coordinator :291-310): the all-gather stream context (torch.cuda.
 * stream: two current_stream, two set_stream), the fetch events' query,
 * the handle's wait (Work.wait: the stream waits on NCCL's), the fetch
 * event's creation, record and later destruction.  Per tensor released, 7
 * (partition_parameters.py partition :1269-1275, free_param :282-293): the
 * debug string's param.data (evaluated although not printed), on_accelerator
 * (param.data), param.data.record_stream(current_stream()) (3), torch.empty
 * (0) and the .data setter (2).
 *
 * Per all-gather launch (coordinator __all_gather_params_ :430-460,
 * all_gather_coalesced :1100-1168): the all-gather stream context (4),
 * torch.empty of the flat buffer (1), the collective (5 [assumption]:
 * deepspeed.comm's dispatch and ProcessGroupNCCL's stream sync with an event
 * record and wait, the NCCL launch and the work's end event); one tensor:
 * ds_tensor.to(device) and narrow, view, to, .data setter (5), 15 in all;
 * k > 1 tensors (_all_gather_dtype :1064-1098 and AllGatherCoalescedHandle.
 * wait :617-656): w narrows of the flat buffer, k .to, the cat into this
 * rank's slice, then at the first wait the handle's wait and per tensor w
 * narrows, the cat, view, .data setter and w record_stream: 12 + w +
 * k (2 w + 4).
 *
 * Per trained tensor, backward (stage3.py __add_grad_to_ipg_bucket
 * :1158-1177), 24: the grad-accumulation hook entered (1), @torch.no_grad()
 * (3), reduce stream.wait_stream(default_stream()) (5), param.grad.numel
 * (1), the reduce stream context (4), narrow, view_as and its grad getter
 * (3), copy_ and its grad getter (2), grad.record_stream(current_stream())
 * (3), param.grad.data = (2).
 * Per bucket flush (__reduce_and_partition_ipg_grads :1179-1215,
 * reduce_scatter_coalesced coalesced_collectives.py:73-, partition_grads
 * :1344-1407), 16 + k (12 + w): the reduce events' query (1), the stream
 * context (4), the interleaving cat, the pre-divide, chunk and the
 * collective (8), the reduce event's creation, record and destruction (3);
 * per tensor the size check's grad getter (1), the grad list (1), view, w
 * slices and the output narrow (2 + w), then the partition's narrow, an
 * accumulate (.to, view, add_) or copy, grad.record_stream (3) and grad =
 * None (1) (8).  With offload_optimizer one more copy per tensor (the CPU
 * buffer's round trip) and, at the accumulation boundary, the buffered norm
 * (view, split, double, norm, pow) and the fp32 gradient's narrow and copy_
 * (9).
 *
 * Before 0.9.4 (PR #3622, 0977106, "Prevent evaluation of debug strings"):
 * fetch_sub_module's module debug string (coordinator v0.6.5:245-251: the
 * parameter and in-flight id lists and dist.get_rank, 2), and per tensor
 * the "-fetch" and "-wait" strings (v0.6.5:257, 263), "-prefetch" (:348)
 * and "-release" (:408), each a ds_summary() (partition_parameters.py
 * v0.6.5:947-959: numel, shape, ds_shape, requires_grad, grad; formatted)
 * and dist.get_rank: 6 each [assumption: the dict's formatting counted as
 * one call]; all_gather_coalesced's "-allgather_coalesced" string (1); and
 * in __partition_grads the per-tensor inf/nan tracking (stage3.py
 * v0.6.5:1729-1736: isinf, any, logical_or_, isnan, any, logical_or_, 6),
 * which #3622 moved to one check of the flat buffer at the step. */
#define DS3_MOD_FWD 21
#define DS3_MOD_BWD 19
#define DS3_TENSOR_WAIT 9
#define DS3_TENSOR_FREE 7
#define DS3_LAUNCH_BASE 10
#define DS3_LAUNCH_ONE 5
#define DS3_GRAD_HOOK 24
#define DS3_FLUSH_BASE 16
#define DS3_FLUSH_TENSOR 12
#define DS3_FLUSH_OFFLOAD 1
#define DS3_FLUSH_OFFLOAD_BOUNDARY 9
#define DS3_OLD_MODULE_DEBUG 2
#define DS3_OLD_SUMMARY 6
#define DS3_OLD_INF_NAN 6

/* Debug strings evaluated and per-tensor inf/nan checks: before 0.9.4. */
static bool old_hooks(const struct zs_ds_version *v)
{
    return !zs_ds_at_least(v, 0, 9, 4);
}

int64_t zs_ds3_module_calls(const struct zs_ds_version *v, int modules,
                            int trained, bool backward)
{
    int64_t per = backward ? DS3_MOD_BWD : DS3_MOD_FWD;
    int64_t n;
    if (old_hooks(v))
        per += DS3_OLD_MODULE_DEBUG;
    n = (int64_t)modules * per;
    if (backward)
        n += (int64_t)trained * DS3_GRAD_HOOK;
    return n;
}

int64_t zs_ds3_wait_calls(const struct zs_ds_version *v, int tensors)
{
    /* before 0.9.4 the "-fetch" and "-wait" strings */
    return (int64_t)tensors *
           (DS3_TENSOR_WAIT + (old_hooks(v) ? 2 * DS3_OLD_SUMMARY : 0));
}

int64_t zs_ds3_release_calls(const struct zs_ds_version *v, int tensors)
{
    /* before 0.9.4 the "-release" string */
    return (int64_t)tensors *
           (DS3_TENSOR_FREE + (old_hooks(v) ? DS3_OLD_SUMMARY : 0));
}

int64_t zs_ds3_gather_calls(const struct zs_ds_version *v, int tensors,
                            int world)
{
    int64_t k = tensors > 0 ? tensors : 1, w = world > 0 ? world : 1;
    int64_t n = k == 1 ? DS3_LAUNCH_BASE + DS3_LAUNCH_ONE
                       : DS3_LAUNCH_BASE + 2 + w + k * (2 * w + 4);
    if (old_hooks(v))
        n += 1 + k * DS3_OLD_SUMMARY; /* -allgather_coalesced, -prefetch */
    return n;
}

int64_t zs_ds3_flush_calls(const struct zs_ds_version *v, int tensors,
                           int world, bool off_opt, bool boundary)
{
    int64_t k = tensors > 0 ? tensors : 0, w = world > 0 ? world : 1;
    int64_t per = DS3_FLUSH_TENSOR + w;
    if (off_opt)
        per += DS3_FLUSH_OFFLOAD + (boundary ? DS3_FLUSH_OFFLOAD_BOUNDARY : 0);
    if (old_hooks(v))
        per += DS3_OLD_INF_NAN;
    return DS3_FLUSH_BASE + k * per;
}

/* ---- DeepSpeed ZeRO-1/2: the grad hooks counted in calls ------------------
 *
 * The same unit as ZeRO-3's above (one call into PyTorch at hook_call_ns),
 * read in stage_1_and_2.py at edaa722 (0.19.6) and checked at v0.12.3.
 *
 * Per trained tensor, 13: the post-accumulate-grad hook entered from the
 * engine (1; the hook-state bookkeeping around it, base_optimizer.py
 * :157-240, is Python, and its one graph-task callback per backward is not
 * counted); reduce_independent_p_g_buckets_and_remove_grads (:1193-1257):
 * param.numel five times (the empty check, the bucket check, the
 * extra-large check, the narrow, the count: 5; v0.12.3 has no empty check
 * [approximation: counted alike]), the grad getter (1), the bucket narrow,
 * view(-1), copy_, .data, view_as and the .data setter (6).
 *
 * Per bucket flush, reduce_ipg_grads (:1691-1756) and average_tensor
 * (:1350-1460): the bucket narrow (1); the stream: without overlap_comm
 * current_stream (1), with it reduction_stream.wait_stream(current_stream())
 * (5, as ZeRO-3's wait_stream) and from 0.14.3 current_stream().wait_stream(
 * reduction_stream) (5) and the flat tensor's and the copied slice's
 * record_stream (2); the stream context (4); div_ and get_world_size (2);
 * per tensor its numel in the offsets loop (1); per rank slice its narrow,
 * its numel in allreduce_and_scatter and its view out of the flat result
 * (3).  From 0.12.4 (use_multi_rank_bucket_allreduce) one flatten (1), one
 * all_reduce (5, as ZeRO-3's collective) and this rank's slice copied back
 * (1); before it, per rank slice (allreduce_and_copy), the synchronize with
 * overlap_comm (1), the stream context (4), the flatten (1), the reduce (5)
 * and the copy back (1).  Then, under the stream context again (4), per
 * tensor either grad = None (1, another rank's) or copy_grads_in_partition
 * (10: the grad getter, view, narrow, view(-1), copy_, .data, view_as, the
 * .data setter, two numel), this rank's one tensor in `world` on average:
 * 1 + 9 / world [approximation: zsim does not place tensors in
 * partitions].  With the optimizer offloaded (copy_grads_in_partition's
 * cpu_offload branch, :1650-1667) this rank's tensors instead make, when
 * the CPU accumulation runs, 12 (async_accumulate_grad_in_cpu_via_gpu
 * :1516-1559: the temporary buffer's view and narrow, the H2D copy_, the
 * grad getter, .data, view, add_; the D2H copy_ with its getter, .data and
 * view; the id and position lookups are Python), and at the boundary 24:
 * set_norm_for_param_grad_in_gpu (the grad getter, view, narrow, .data,
 * double, norm: 6), update_offload_overflow_tracker_for_param_grad (the
 * getter, .data, float, isnan, isinf, logical_or, float, max and the `if`
 * that reads the result back: 9) and async_inplace_copy_grad_to_fp32_
 * buffer_from_gpu (the fp32 grad's getter, view and narrow, the 16-bit
 * grad's getter, view and narrow, .to, copy_, the grad cleared: 9). */
#define DS2_GRAD_HOOK 13
#define DS2_FLUSH_BASE 11
#define DS2_FLUSH_TENSOR 2
#define DS2_FLUSH_IN_PARTITION 9
#define DS2_FLUSH_SLICE 3
#define DS2_WAIT_STREAM 5
#define DS2_ALLREDUCE 7
#define DS2_REDUCE_PER_SLICE 11
#define DS2_OFFLOAD_ACCUMULATE 12
#define DS2_OFFLOAD_BOUNDARY 24

int64_t zs_ds2_grad_hook_calls(void)
{
    return DS2_GRAD_HOOK;
}

int64_t zs_ds2_offload_tensor_calls(bool accumulate, bool boundary)
{
    return (accumulate ? DS2_OFFLOAD_ACCUMULATE : 0) +
           (boundary ? DS2_OFFLOAD_BOUNDARY : 0);
}

int64_t zs_ds2_flush_calls(const struct zs_ds_version *v, int tensors,
                           int slices, int world, bool overlap, bool off_opt)
{
    int64_t n = tensors > 0 ? tensors : 0, k = slices > 0 ? slices : 1;
    int64_t w = world > 0 ? world : 1;
    int64_t c = DS2_FLUSH_BASE + n * DS2_FLUSH_TENSOR +
                (off_opt ? 0 : (n * DS2_FLUSH_IN_PARTITION) / w) +
                k * DS2_FLUSH_SLICE;
    if (!overlap)
        c += 1;
    else
        c += DS2_WAIT_STREAM + 2 +
             (zs_ds_at_least(v, 0, 14, 3) ? DS2_WAIT_STREAM : 0);
    if (zs_ds_at_least(v, 0, 12, 4))
        c += DS2_ALLREDUCE;
    else
        c += k * (DS2_REDUCE_PER_SLICE + (overlap ? 1 : 0));
    return c;
}

/* Host time of `calls` hook calls on this rank's GPU's launching thread. */
int64_t zs_ds_calls_ns(const struct zs_bctx *b, int64_t calls)
{
    double t = b->node->gpu.hook_call_ns > 0 ? b->node->gpu.hook_call_ns
                                             : ZS_HOOK_CALL_NS;
    return (int64_t)((double)calls * t + 0.5);
}

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
/* PEFT LoRA on a linear: the adapted layer calls lora_dropout[name]
 * (nn.Dropout, or nn.Identity at p = 0), lora_A[name] and lora_B[name],
 * three more modules that DeepSpeed hooks (peft v0.6.2, 32357c2,
 * tuners/lora/layer.py Linear.forward :300-322; the ModuleDicts holding
 * them are never called).  From PEFT 0.7.0 (2665f80, PR #1106) the adapted
 * layer wraps the original as base_layer, one more hooked module, not
 * counted (zsim has no PEFT version) [assumption: PEFT <= 0.6]. */
#define DS_LORA_MODULES 3

/* Hooked modules unit u stands for in DeepSpeed ZeRO-3: itself and its LoRA
 * modules, plus the decoder layer's parameterless modules on the layer's
 * first unit (their pre-forward hooks run before it) and the model-level
 * modules on the first unit. */
static int ds_hooked_modules(const struct zs_bctx *b, int unit)
{
    const struct zs_unit *u = &b->units[unit];
    int n = 1;
    if (u->leaf && u->leaf->kind == ZS_LEAF_LINEAR && u->trainable > 0 &&
        b->mo.method != ZS_METHOD_FULL)
        n += DS_LORA_MODULES;
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

/* Parameter tensors of unit u that ZeRO-3 gathers, waits for and releases:
 * none when the unit is persistent; else each tensor above
 * stage3_param_persistence_threshold (a persistent tensor stays gathered:
 * partition_parameters.py _partition_param, ds_persist), the linear's bias
 * (out_features elements) judged on its own, and LoRA's A (r x in) and B
 * (out x r) where the unit has adapters. */
static int fetched_tensors(const struct zs_bctx *b, const struct zs_unit *u)
{
    const struct zs_leaf *l = u->leaf;
    int64_t thr = b->c->param_persistence_threshold;
    int n;
    if (u->persistent || !l)
        return 0;
    n = l->n_tensors;
    if ((l->kind == ZS_LEAF_LINEAR || l->kind == ZS_LEAF_ROUTER) &&
        l->n_tensors == 2 &&
        l->params - l->in_features * l->out_features <= thr)
        n--; /* a persistent bias */
    if (u->trainable > 0 && b->mo.method != ZS_METHOD_FULL) {
        if (l->kind == ZS_LEAF_LINEAR) {
            int64_t r = b->mo.lora_rank > 0 ? b->mo.lora_rank : 16;
            n += (r * l->in_features > thr) + (r * l->out_features > thr);
        } else {
            n += 2;
        }
    }
    return n;
}

void zs_ds3_unit_calls_of(const struct zs_bctx *b, int unit,
                          struct zs_ds3_unit_calls *out)
{
    const struct zs_unit *u = &b->units[unit];
    out->modules = ds_hooked_modules(b, unit);
    out->fetched = fetched_tensors(b, u);
    out->trained = trained_tensors(b, u);
}

int64_t zs_hook_ns(const struct zs_bctx *b, int unit, bool backward)
{
    /* --sharding none: no fully_shard, so no FSDP hooks */
    if (b->c->sharding == ZS_SHARD_NONE)
        return 0;
    if (b->c->framework == ZS_FW_FSDP2)
        return FSDP2_HOOK_NS;
    if (b->c->zero == 3) {
        /* the module hooks and grad hooks; the waits, releases, launches
         * and flushes where zero.c issues them */
        struct zs_ds3_unit_calls uc;
        zs_ds3_unit_calls_of(b, unit, &uc);
        return zs_ds_calls_ns(b, zs_ds3_module_calls(&b->c->ds_version,
                                                      uc.modules, uc.trained,
                                                      backward));
    }
    /* ZeRO-1/2: the trained tensors' grad hooks, backward only; the flushes
     * where zero.c issues them */
    return backward ? zs_ds_calls_ns(b, (int64_t)trained_tensors(
                                             b, &b->units[unit]) *
                                             zs_ds2_grad_hook_calls())
                    : 0;
}

int64_t zs_fsdp2_unshard_host_ns(bool offload)
{
    /* without offload: the fast path with a param_dtype; pure bf16 has no
     * param_dtype and no cast at all, charged the same [assumption: at most
     * the fast path's three dispatches' worth] */
    return offload ? FSDP2_UNSHARD_LOOP_NS : FSDP2_UNSHARD_FAST_NS;
}
