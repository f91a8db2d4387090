/*
 * actoff.c — activation offload (issue 14 §3): the inputs of checkpointed
 * decoder layers copied to host memory in the forward and brought back for
 * the recompute, as three implementations do it.  The ZeRO builder (zero.c)
 * and the FSDP2 builder (fsdp2.c) call the four hooks below at the same
 * points of their layer loops; everything about when a copy starts, which
 * stream it runs on, what the compute stream waits for and when the GPU and
 * host buffers are released lives here.
 *
 * What is offloaded: under full checkpointing the only tensor a layer keeps
 * is its input, tokens x hidden x 2 B (model.c saved(), ZS_CKPT_FULL); that
 * is what all three move.  Tensors outside the checkpointed layers (final
 * norm, loss) are not offloaded here: zsim's schedules do not allocate them
 * per layer [simplification].
 *
 * 1. ZS_AO_DS_SYNC — DeepSpeed cpu_checkpointing before 0.19.6, or with
 *    partition_activations at any version.  CheckpointFunction.forward copies
 *    the checkpointed inputs with copy_to_device(args, torch.device('cpu'))
 *    before running the layer (DeepSpeed v0.19.5 runtime/activation_
 *    checkpointing/checkpointing.py:530-531; edaa7221 :614-615), which is
 *    item.to(device) (runtime/utils.py:176-177, v0.19.5): a synchronous D2H
 *    into pageable memory on the current (compute) stream, so the host waits
 *    for it and the layer's kernels are launched after it.  After the layer
 *    ran, get_cpu_activations_for_backward sets arg.data to an empty tensor
 *    (v0.19.5 :474-485): the GPU input is released.  In backward
 *    t.saved_data.to(t.device) (v0.19.5 :615-618) is again a blocking
 *    pageable copy, H2D, before the recompute; saved_data = None drops the
 *    host copy.  Every layer is offloaded.
 * 2. ZS_AO_DS_ASYNC — DeepSpeed 0.19.6 (PR #8282, 858e91eea; edaa7221):
 *    _ActivationOffloadEngine(keep_last_count=1, min_offload_bytes=0)
 *    (checkpointing.py:498-511).  offload_input is called after the layer's
 *    forward was launched (:637-639); the newest input stays on the GPU
 *    (keep-last), the previous one starts a D2H on the side stream s1 after
 *    s1.wait_stream(compute) into a buffer pinned through tensor.pin_memory()
 *    (offload_activations.py:168-193, accelerator/abstract_accelerator.py:
 *    268-282), and stays referenced in the forward stash until
 *    max_fwd_stash_count = 2 ids later (:132-138, :183-207); record_stream
 *    holds the GPU memory until the copy ends, so compute never waits in the
 *    forward.  In backward restore_input (:236-285): the kept-last input is
 *    used as is; an input still in the stash makes the compute stream wait
 *    for its D2H event; any other is copied H2D on s1 and the compute stream
 *    waits for it (no prefetch: the copy starts when the recompute asks).
 * 3. ZS_AO_TORCHTUNE — torchtune OffloadActivations, read at 1814feb17a
 *    (the commit of the README table the corpus runs quote; bd2a0fc7c
 *    changes only the device API) torchtune/training/_activation_offloading
 *    .py, use_streams=True, max_fwd_stash_size=5, min_offload_size=1024 B
 *    (:67-72).  With non-reentrant checkpointing the saved tensors the hook
 *    sees inside the decoder are the checkpoint's inputs, saved by
 *    torch.utils.checkpoint's _NoopSaveInputs (ctx.save_for_backward(dummy,
 *    *args), torch 2.5+; mask and input_pos are keyword arguments, kept on
 *    ctx, not saved): per layer two tensor ids, the empty dummy (0 B, kept)
 *    and the hidden state (offloaded).  Every packed tensor takes an id, the
 *    small ones too (:146-147).
 *    Forward, pack_tensor (:134-201): the compute stream waits for the D2H
 *    event of every stashed tensor with id <= new id - 5 and drops it
 *    (:156-164) — with two ids per layer the input of the layer three back
 *    —, then s1.wait_stream(s0) and a D2H into torch.empty_like(...,
 *    pin_memory=True) (PyTorch's CachingHostAllocator).  After the last
 *    layer the final norm packs on: torchtune's RMSNorm is eager (only the
 *    decoder layers are compiled, training/_compile.py:51-55) and saves
 *    x_fp32 for pow, the rsqrt result, x_fp32 and the rsqrt result again for
 *    the mul (modules/rms_norm.py:40-44; the rsqrt result, tokens x 4 B, is
 *    counted as heavy: it is under 1024 B only below 256 tokens
 *    [simplification]), and, when its scale trains (full fine-tuning),
 *    x_normed for the scale's grad.  Those 4 (5) ids evict every layer input
 *    but the last one's (every one), before the logits exist.  The output
 *    head runs under NoOpManager (:397-419) and is not offloaded; the loss
 *    runs outside the context (lora_finetune_single_device.py:636-637).
 *    Backward, unpack_tensor_with_streams (:228-347): the first backward
 *    node that unpacks an offloaded tensor is the final norm's mul; its
 *    tensors are in the stash and used as they are, and its node hook waits
 *    for and drops the whole forward stash (:329-333).  So every layer's
 *    input, the last one's too, comes back from the host: when backward
 *    reaches the layer (its checkpoint's recompute unpacks it) the host
 *    issues an H2D on s1 and s0.wait_stream(s1) (:274-280).  There is no
 *    prefetch in the code: the copy overlaps compute only because the host
 *    runs ahead of the GPU.  zsim's host queue has no bound on how far it
 *    runs ahead, so the restore is gated on the GPU's progress: layer j's
 *    buffer is taken when the GPU ends the backward of the unit two after
 *    it (j + 2, or the root tail for the last two layers) — the host one
 *    layer ahead [assumption]: the least lead that hides the copy, which
 *    the same README table measures as hidden (+ Activation Offloading:
 *    7309 -> 7301 tokens/s, -0.11 %).  The tensor is referenced by the
 *    recompute's saved tensors, so the node hook calls record_stream(s0)
 *    (:316-324): it is freed when the layer's backward ends on the GPU.
 *    The caching allocator counts memory at the host's calls, so the
 *    logits, freed in the host's order before the last layer's unpack, are
 *    not live beside its restored input.
 *
 * Cost: O(1) per hook; arrays of n_layers entries, made by zs_actoff_init.
 */
#include "sched/sched_int.h"
#include "util/alloc.h"

#include <string.h>

/* torchtune OffloadActivations defaults (1814feb17a _activation_offloading
 * .py:71-72) and ids per checkpointed layer (dummy + hidden,
 * _NoopSaveInputs): the input of layer j - TT_LAG is evicted when layer j
 * packs, TT_LAG = ceil(5 / 2) = 3. */
#define TT_MAX_FWD_STASH 5
#define TT_IDS_PER_LAYER 2
#define TT_LAG ((TT_MAX_FWD_STASH + TT_IDS_PER_LAYER - 1) / TT_IDS_PER_LAYER)
/* DeepSpeed's engine as checkpointing.py builds it: keep_last_count=1, the
 * default max_fwd_stash_count=2 (offload_activations.py:70-72). */
#define DS_KEEP_LAST 1
#define DS_FWD_STASH 2

int zs_actoff_init(struct zs_bctx *b)
{
    struct zs_actoff *a = &b->ao;
    int n = (int)b->m->n_layers;
    zs_actoff_release(b);
    a->mode = b->c->act_offload;
    if (a->mode == ZS_AO_NONE)
        return 0;
    a->nl = n;
    a->bytes = b->tokens * zs_model_hidden_bytes_per_token(b->m);
    a->d2h = zs_calloc((size_t)n + 1, sizeof *a->d2h);
    a->host = zs_calloc((size_t)n + 1, sizeof *a->host);
    a->gpu = zs_calloc((size_t)n + 1, sizeof *a->gpu);
    if (!a->d2h || !a->host || !a->gpu)
        return ZS_ENOMEM;
    return 0;
}

void zs_actoff_release(struct zs_bctx *b)
{
    struct zs_actoff *a = &b->ao;
    zs_free(a->d2h);
    zs_free(a->host);
    zs_free(a->gpu);
    memset(a, 0, sizeof *a);
}

static int64_t pow2_ceil(int64_t v)
{
    int64_t p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

void zs_actoff_micro_begin(struct zs_bctx *b)
{
    struct zs_actoff *a = &b->ao;
    if (a->mode == ZS_AO_NONE)
        return;
    for (int i = 0; i < a->nl; i++)
        a->d2h[i] = a->host[i] = a->gpu[i] = -1;
    a->last_fwd = a->bwd_done1 = a->bwd_done2 = -1;
    a->n_offloaded = a->d2h_bytes = a->h2d_bytes = 0;
}

/* A D2H of layer j's input on the offload stream after `after` (the compute
 * that produced it), into a pinned host buffer. */
static void d2h_pinned(struct zs_bctx *b, int j, int unit, int32_t after)
{
    struct zs_actoff *a = &b->ao;
    a->host[j] =
        zs_t_alloc(b, b->q_host, b->p_host, a->bytes, ZS_ALLOC_PINNED,
                   "offloaded activation (pinned host)", unit, b->last_host);
    a->d2h[j] = zs_t_pcie(b, b->q_off, 1, (double)a->bytes, true,
                          "activation offload D2H", unit, after, a->host[j]);
    a->n_offloaded++;
    a->d2h_bytes += a->bytes;
}

/* Layer j's GPU input released once its D2H ended (record_stream / the
 * stash's event), and not before the host got here. */
static void release_gpu_after_d2h(struct zs_bctx *b, int j, int q, int32_t wait)
{
    struct zs_actoff *a = &b->ao;
    if (a->gpu[j] < 0)
        return;
    zs_t_free(b, q, a->gpu[j], wait >= 0 ? wait : a->d2h[j]);
    a->gpu[j] = -1;
}

/* Layer j's input leaves the forward stash: the compute stream waits for
 * its D2H event (s0.wait_event), then the GPU tensor is dropped. */
static void tt_evict(struct zs_bctx *b, int j, int32_t before)
{
    struct zs_actoff *a = &b->ao;
    int32_t w;
    if (a->gpu[j] < 0)
        return;
    w = zs_t_mark(b, b->q_comp, "compute waits offload D2H (stash)",
                  a->d2h[j], before, -1);
    release_gpu_after_d2h(b, j, b->q_comp, w);
}

int32_t zs_actoff_fwd_begin(struct zs_bctx *b, int j, int unit, int32_t saved,
                            int32_t before)
{
    struct zs_actoff *a = &b->ao;
    if (a->mode == ZS_AO_NONE || j < 0 || j >= a->nl)
        return -1;
    a->gpu[j] = saved;
    switch (a->mode) {
    case ZS_AO_DS_SYNC:
        /* .to('cpu') before the layer runs: pageable, on the compute
         * stream, the host blocks until it is done */
        a->host[j] = zs_t_alloc(b, b->q_host, b->p_host, a->bytes, 0,
                                "activation checkpoint (pageable host)", unit,
                                b->last_host);
        a->d2h[j] = zs_t_pcie(b, b->q_comp, 1, (double)a->bytes, false,
                              "cpu_checkpointing D2H (.to('cpu'))", unit,
                              before, a->host[j]);
        a->n_offloaded++;
        a->d2h_bytes += a->bytes;
        return zs_t_mark(b, b->q_host, "host waits cpu_checkpointing D2H",
                         a->d2h[j], b->last_host, -1);
    case ZS_AO_TORCHTUNE:
        /* evict the input TT_LAG layers back: s0.wait_event, then drop */
        if (j - TT_LAG >= 0)
            tt_evict(b, j - TT_LAG, before);
        d2h_pinned(b, j, unit, a->last_fwd);
        return -1;
    default:
        return -1;
    }
}

void zs_actoff_fwd_end(struct zs_bctx *b, int j, int unit, int32_t c)
{
    struct zs_actoff *a = &b->ao;
    if (a->mode == ZS_AO_NONE || j < 0 || j >= a->nl)
        return;
    a->last_fwd = c;
    switch (a->mode) {
    case ZS_AO_DS_SYNC:
        /* arg.data = torch.empty([]) after run_function */
        zs_t_free(b, b->q_comp, a->gpu[j], c);
        a->gpu[j] = -1;
        break;
    case ZS_AO_DS_ASYNC:
        /* offload_input(j): keep-last pushes j - 1 out; the stash reap drops
         * ids <= j - DS_FWD_STASH (freed once their D2H ended) */
        if (j - DS_FWD_STASH >= 0 && a->d2h[j - DS_FWD_STASH] >= 0) {
            /* _start_offload reaps before it copies: on the offload stream
             * the release follows the older D2H only */
            int32_t h = zs_t_mark(b, b->q_off, "stash reap", b->last_host,
                                  a->d2h[j - DS_FWD_STASH], -1);
            release_gpu_after_d2h(b, j - DS_FWD_STASH, b->q_off, h);
        }
        if (j - DS_KEEP_LAST >= 0)
            d2h_pinned(b, j - DS_KEEP_LAST, unit, c);
        break;
    default:
        break;
    }
}

void zs_actoff_tail_fwd(struct zs_bctx *b, int unit, int32_t before)
{
    struct zs_actoff *a = &b->ao;
    int keep;
    (void)unit;
    if (a->mode != ZS_AO_TORCHTUNE)
        return;
    /* the final norm's 4 heavy ids (5 when its scale trains) evict every
     * input but the last layer's (every one); see the top of the file */
    keep = b->c->method == ZS_METHOD_FULL ? 0 : 1;
    for (int j = 0; j < a->nl - keep; j++)
        tt_evict(b, j, before);
}

void zs_actoff_bwd_end(struct zs_bctx *b, int j, int32_t c)
{
    struct zs_actoff *a = &b->ao;
    if (a->mode != ZS_AO_TORCHTUNE)
        return;
    if (j >= a->nl) {
        /* the root tail's backward: the final norm's node hook waits for
         * and drops the whole forward stash */
        for (int i = 0; i < a->nl; i++)
            tt_evict(b, i, c);
        a->bwd_done1 = a->bwd_done2 = c;
        return;
    }
    a->bwd_done2 = a->bwd_done1;
    a->bwd_done1 = c;
}

/* Bring layer j's input back for its recompute: a GPU buffer, the H2D on
 * the offload stream, and the compute stream waiting for it.  The host
 * asks at `before`; `gate` (or -1) is the GPU progress it waits for. */
static int32_t restore(struct zs_bctx *b, int j, int unit, int32_t before,
                       int32_t gate, int32_t *saved)
{
    struct zs_actoff *a = &b->ao;
    int32_t g;
    if (gate >= 0)
        before = zs_t_mark(b, b->q_off, "host one layer ahead", before, gate,
                           -1);
    g = zs_t_alloc(b, b->q_off, b->p_gpu, a->bytes, 0, "restored activation",
                   unit, before);
    int32_t h = zs_t_pcie(b, b->q_off, 0, (double)a->bytes, true,
                          "activation offload H2D", unit, before, g);
    zs_t_mark(b, b->q_comp, "compute waits offload H2D", h, -1, -1);
    zs_t_free(b, b->q_off, a->host[j], h);
    a->host[j] = -1;
    a->h2d_bytes += a->bytes;
    *saved = g;
    return -1;
}

int32_t zs_actoff_bwd_begin(struct zs_bctx *b, int j, int unit, int32_t *saved,
                            int32_t before)
{
    struct zs_actoff *a = &b->ao;
    int32_t w;
    if (a->mode == ZS_AO_NONE || j < 0 || j >= a->nl)
        return -1;
    switch (a->mode) {
    case ZS_AO_DS_SYNC: {
        int32_t g = zs_t_alloc(b, b->q_comp, b->p_gpu, a->bytes, 0,
                               "restored activation checkpoint", unit, before);
        int32_t h =
            zs_t_pcie(b, b->q_comp, 0, (double)a->bytes, false,
                      "cpu_checkpointing H2D (.to(device))", unit, before, g);
        w = zs_t_mark(b, b->q_host, "host waits cpu_checkpointing H2D", h,
                      b->last_host, -1);
        zs_t_free(b, b->q_host, a->host[j], w);
        a->host[j] = -1;
        a->h2d_bytes += a->bytes;
        *saved = g;
        return w;
    }
    case ZS_AO_DS_ASYNC:
        if (a->d2h[j] < 0)
            return -1; /* kept-last: never left the GPU */
        if (a->gpu[j] >= 0) {
            /* still in the stash: wait for its D2H event, pool the buffer */
            w = zs_t_mark(b, b->q_comp, "compute waits offload D2H (stash)",
                          a->d2h[j], -1, -1);
            zs_t_free(b, b->q_comp, a->host[j], w);
            a->host[j] = -1;
            a->gpu[j] = -1; /* the caller frees it at the layer's end */
            return -1;
        }
        return restore(b, j, unit, before, -1, saved);
    case ZS_AO_TORCHTUNE:
        /* every input comes back from the host (the stash was dropped at
         * the root tail's backward), once the GPU ended unit j + 2 */
        return restore(b, j, unit, before, a->bwd_done2, saved);
    default:
        return -1;
    }
}

void zs_actoff_result(const struct zs_bctx *b, struct zs_sim_result *res)
{
    const struct zs_actoff *a = &b->ao;
    res->act_offload = a->mode;
    if (a->mode == ZS_AO_NONE)
        return;
    res->ao_bytes_per_layer = a->bytes;
    res->ao_layers_offloaded = a->n_offloaded;
    res->ao_d2h_bytes = a->d2h_bytes;
    res->ao_h2d_bytes = a->h2d_bytes;
    res->ao_host_bytes =
        a->n_offloaded *
        (a->mode == ZS_AO_DS_SYNC ? a->bytes : pow2_ceil(a->bytes));
}
