/*
 * lint.c — the rules; see lint.h and docs/lint.md.
 *
 * Each rule is one static function that looks at the input and adds at most
 * a few findings.  Every figure, formula and version range carries its
 * source beside it; where the source is our own reading it says
 * "[assumption]" with the reasoning.  Rules run in a fixed order, so the
 * report is deterministic.  No allocation anywhere in this file.
 */
#include "train/lint.h"
#include "train/config.h"
#include "util/strutil.h"
#include "util/units.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *zs_lint_sev_name(enum zs_lint_sev s)
{
    switch (s) {
    case ZS_LINT_ERROR:
        return "error";
    case ZS_LINT_WARNING:
        return "warning";
    default:
        return "info";
    }
}

/* ---- building findings -----------------------------------------------------
 */

static struct zs_lint_finding g_overflow; /* sink when the report is full */

static struct zs_lint_finding *add(struct zs_lint_report *r, const char *id,
                                   enum zs_lint_sev sev, const char *title)
{
    struct zs_lint_finding *f;
    if (sev == ZS_LINT_ERROR)
        r->n_error++;
    else if (sev == ZS_LINT_WARNING)
        r->n_warning++;
    else
        r->n_info++;
    if (r->n >= ZS_LINT_MAX_FINDINGS) {
        r->dropped++;
        f = &g_overflow;
    } else {
        f = &r->finding[r->n++];
    }
    memset(f, 0, sizeof *f);
    zs_strlcpy(f->id, id, sizeof f->id);
    f->severity = sev;
    zs_strlcpy(f->title, title, sizeof f->title);
    return f;
}

static void setf(char *dst, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void setf(char *dst, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, cap, fmt, ap);
    va_end(ap);
}
#define EXPLAIN(f, ...)                                                        \
    setf((f)->explanation, sizeof(f)->explanation, __VA_ARGS__)
#define SOURCE(f, ...) setf((f)->source, sizeof(f)->source, __VA_ARGS__)
#define FIX(f, ...) setf((f)->fix, sizeof(f)->fix, __VA_ARGS__)

static void num(struct zs_lint_finding *f, const char *name, double v)
{
    /* each rule records a fixed handful of numbers (lint.c's rules) */
    assert(f->n_numbers < ZS_LINT_MAX_NUMBERS);
    if (f->n_numbers >= ZS_LINT_MAX_NUMBERS)
        return;
    zs_strlcpy(f->numbers[f->n_numbers].name, name, sizeof f->numbers[0].name);
    f->numbers[f->n_numbers].value = v;
    f->n_numbers++;
}

static void where(struct zs_lint_finding *f, const struct zs_dsconfig *ds,
                  int line, int col)
{
    if (line > 0)
        setf(f->where, sizeof f->where, "%s:%d:%d", ds->path, line, col);
    else
        setf(f->where, sizeof f->where, "%s", ds->path);
}

/* The finding every rule emits: id, severity and title, its place in the
 * DeepSpeed config (line 0: the file), its sources and its fix (NULL: the
 * rule formats it with FIX).  The rule adds the explanation (EXPLAIN) and
 * the numbers (num). */
static struct zs_lint_finding *emit(struct zs_lint_report *r, const char *id,
                                    enum zs_lint_sev sev, const char *title,
                                    const struct zs_dsconfig *ds, int line,
                                    int col, const char *source,
                                    const char *fix)
{
    struct zs_lint_finding *f = add(r, id, sev, title);
    where(f, ds, line, col);
    SOURCE(f, "%s", source);
    if (fix)
        FIX(f, "%s", fix);
    return f;
}

/* An error: size key k (named key) of offload block o is below need.  It
 * is placed at the key, or at its block when the key was not written (its
 * DeepSpeed default applies); the fix names the size needed. */
static struct zs_lint_finding *
emit_too_small(struct zs_lint_report *r, const struct zs_dsconfig *ds,
               const char *id, const char *title, const char *key,
               const struct zs_ds_int *k, const struct zs_ds_offload *o,
               int64_t need, const char *source)
{
    struct zs_lint_finding *f =
        emit(r, id, ZS_LINT_ERROR, title, ds, k->line ? k->line : o->line,
             k->line ? k->col : o->col, source, NULL);
    FIX(f, "set %s to %lld or more", key, (long long)need);
    return f;
}

/* "79.1 GiB" */
static const char *gib(char *buf, int64_t bytes)
{
    return zs_fmt_bytes(buf, 24, bytes);
}

/* ---- host buffers -----------------------------------------------------------
 */

int64_t zs_lint_pow2_ceil(int64_t bytes)
{
    int64_t p = 1;
    if (bytes <= 0)
        return 0;
    if (bytes > ((int64_t)1 << 62))
        return bytes;
    while (p < bytes)
        p <<= 1;
    return p;
}

/* The elements of a ZeRO-3 optimizer sub-group for a partition of P:
 * sub_group_size, or the whole partition when it is larger (one
 * sub-group); the last sub-group holds what is left. */
static int64_t subgroup_elems(const struct zs_dsconfig *ds, int64_t P)
{
    return ds->sub_group_size.v > 0 && ds->sub_group_size.v < P
               ? ds->sub_group_size.v
               : P;
}

int zs_lint_host_offload_bytes(int64_t params, int world, int local_ranks,
                               const struct zs_dsconfig *ds,
                               struct zs_lint_host_terms *out,
                               struct zs_err *err)
{
    int64_t P, cpu, sub, nsub;
    bool opt, prm, pin_opt;
    int pb;

    memset(out, 0, sizeof *out);
    if (params < 1 || params > (int64_t)1e15)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid params %lld: must be in [1, 1e15]",
                          (long long)params);
    if (world < 1 || world > 1000000)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid world size %d: must be in [1, 1000000]",
                          world);
    if (local_ranks < 1 || local_ranks > world)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid local ranks %d: must be in [1, %d]",
                          local_ranks, world);

    /* partition_numel = ceil(numel / world) (reference §2). */
    P = (params + world - 1) / world;
    pb = zs_dsconfig_param_bytes(ds);
    opt = ds->offload_optimizer.device.v == ZS_DS_DEV_CPU;
    prm = ds->offload_param.device.v == ZS_DS_DEV_CPU && ds->zero_stage.v == 3;
    pin_opt = ds->offload_optimizer.pin_memory.v;
    out->partition_elems = P;
    out->param_bytes = pb;
    out->local_ranks = local_ranks;

    /* offload_param: param_groups_fp16_flat_cpu_memory, 16-bit, always pinned
     * (stage3.py, independent of pin_memory), one allocation per param group
     * [assumption: one trainable group]. */
    if (prm) {
        out->flat16 = P * pb;
        out->flat16_alloc = zs_lint_pow2_ceil(out->flat16);
    }
    if (opt) {
        /* Twin-Flow: only the sub-groups DeepSpeed maps to the CPU keep
         * their fp32 master, gradient and Adam states on the host (config.c
         * zs_twin_gpu_groups: the first n - k on the GPU from 0.18.0, the
         * last n - k before);
         * ratio < 1 outside ZeRO-3 is not read (offload-ratio-ignored).
         * [simplification] the GPU sub-groups' pinned gradient zeros,
         * dropped once moved, are left to the host cache (or reused by the
         * next sub-group's) and not counted.  Sub-groups are
         * sub_group_size-element slices of P, the last one shorter. */
        int64_t g0 = 0, g1 = 0; /* the GPU sub-groups [g0, g1) */
        sub = subgroup_elems(ds, P);
        nsub = (P + sub - 1) / sub;
        if (ds->zero_stage.v == 3)
            zs_twin_gpu_groups(nsub, ds->offload_optimizer.ratio.v,
                               &ds->version, &g0, &g1);
        cpu = 0;
        out->grad32_alloc = 0;
        for (int64_t i = 0; i < nsub; i++) {
            int64_t e = i == nsub - 1 ? P - i * sub : sub;
            if (i >= g0 && i < g1)
                continue;
            cpu += e;
            out->grad32_alloc += pin_opt ? zs_lint_pow2_ceil(e * 4) : e * 4;
        }
        out->cpu_elems = cpu;
        /* fp32 master: never pinned in ZeRO-3 (reference §2). */
        out->master32 = cpu * 4;
        /* fp32 grad per sub-group: pinned iff pin_memory; one allocation per
         * sub-group, so the rounding applies per sub-group. */
        out->grad32 = cpu * 4;
        /* grad_partitions_flat_buffer: grad_accum_dtype = model dtype under
         * ZeRO, pinned iff pin_memory, allocated whatever the accumulation. */
        out->accum16 = P * pb;
        out->accum16_alloc =
            pin_opt ? zs_lint_pow2_ceil(out->accum16) : out->accum16;
        /* Adam exp_avg + exp_avg_sq: 8 B, pageable, lazily at first step. */
        out->adam = cpu * 8;
    }
    out->pinned_nominal =
        out->flat16 + (pin_opt ? out->grad32 + out->accum16 : 0);
    out->pinned_alloc = out->flat16_alloc +
                        (pin_opt ? out->grad32_alloc + out->accum16_alloc : 0);
    out->rank_nominal =
        out->flat16 + out->master32 + out->grad32 + out->accum16 + out->adam;
    out->rank_alloc = out->flat16_alloc + out->master32 + out->grad32_alloc +
                      out->accum16_alloc + out->adam;
    out->node_nominal = out->rank_nominal * local_ranks;
    out->node_alloc = out->rank_alloc * local_ranks;
    /* Load without zero.Init: each rank materialises the model in fp32 on
     * the CPU; DeepSpeed's estimator charges 4 B × params per local rank
     * (estimate_zero3_model_states_mem_needs, memory.rst; reference §2). */
    out->load_copy_rank = params * 4;
    out->node_load = out->load_copy_rank * local_ranks;
    return 0;
}

/* ---- inputs
 * ------------------------------------------------------------------ */

bool zs_lint_is_bnb_optimizer(const char *name)
{
    /* HF TrainingArguments.optim names backed by bitsandbytes
     * (transformers training_args.py OptimizerNames): every *_8bit, *bnb*,
     * and paged_* variant. */
    char low[64];
    size_t i;
    if (!name || !*name)
        return false;
    for (i = 0; name[i] && i + 1 < sizeof low; i++)
        low[i] =
            (char)((name[i] >= 'A' && name[i] <= 'Z') ? name[i] + 32 : name[i]);
    low[i] = '\0';
    return strstr(low, "8bit") || strstr(low, "bnb") ||
           strncmp(low, "paged_", 6) == 0;
}

static int world_size(const struct zs_lint_input *in)
{
    const struct zs_dsconfig *ds = in->ds;
    if (in->cluster && in->cluster->nodes > 0 &&
        in->cluster->node.gpus_per_node > 0)
        return in->cluster->nodes * in->cluster->node.gpus_per_node;
    /* From an explicit train_batch_size = micro × GA × world. */
    if (ds->train_batch_size.from == ZS_DS_SET &&
        ds->train_micro_batch_size_per_gpu.from == ZS_DS_SET &&
        ds->gradient_accumulation_steps.from == ZS_DS_SET) {
        int64_t d = ds->train_micro_batch_size_per_gpu.v *
                    ds->gradient_accumulation_steps.v;
        if (d > 0 && ds->train_batch_size.v % d == 0)
            return (int)(ds->train_batch_size.v / d);
    }
    return 0;
}

static int64_t host_usable(const struct zs_cluster *c)
{
    int64_t u = c->node.host_ram_bytes - c->node.host_reserved_bytes;
    return u > 0 ? u : 0;
}

static bool offloads_optimizer(const struct zs_dsconfig *ds)
{
    return ds->zero_stage.v >= 1 &&
           ds->offload_optimizer.device.v != ZS_DS_DEV_NONE;
}

/* Gradient clipping in effect: a resolved value > 0, or an unresolved "auto"
 * that HF fills with max_grad_norm, whose default is 1.0 (training_args.py). */
static bool clipping_on(const struct zs_dsconfig *ds)
{
    if (ds->gradient_clipping.from == ZS_DS_AUTO_UNRESOLVED)
        return true;
    return ds->gradient_clipping.v > 0;
}

/* ---- rules
 * --------------------------------------------------------------------- */

/* DeepSpeed 0.14.1–0.14.2: with offload_optimizer and gradient clipping,
 * unscale_and_clip_grads multiplies a CPU fp32 grad by a CUDA 0-dim tensor
 * (reference §4: PR #5256 in 0.14.1/0.14.2; reverted by PR #5461, first
 * released in 0.14.3). */
static void rule_unscale_clip(const struct zs_lint_input *in,
                              struct zs_lint_report *r)
{
    static const struct zs_ds_version lo = {0, 14, 1}, hi = {0, 14, 2};
    const struct zs_dsconfig *ds = in->ds;
    struct zs_lint_finding *f;
    char v[16];

    if (zs_ds_version_cmp(&ds->version, &lo) < 0 ||
        zs_ds_version_cmp(&ds->version, &hi) > 0)
        return;
    if (ds->zero_stage.v != 3 || !offloads_optimizer(ds) || !clipping_on(ds))
        return;
    f = emit(r, "unscale-clip-device", ZS_LINT_ERROR,
             "DeepSpeed 0.14.1-0.14.2 fails in unscale_and_clip_grads with "
             "optimizer offload and clipping",
             ds, ds->gradient_clipping.line, ds->gradient_clipping.col,
             "DeepSpeed #5422, #5469, #5538, #5634; cause PR #5256 "
             "(v0.14.1); fix PR #5461, released in v0.14.3 "
             "(reference zero3-offload-mechanics.md §4)",
             "upgrade to deepspeed>=0.14.3 (or pin 0.14.0); or set "
             "\"gradient_clipping\": 0 (max_grad_norm 0) if you can train "
             "without clipping");
    EXPLAIN(f,
            "with DeepSpeed %s, ZeRO-3, offload_optimizer.device=%s and "
            "gradient_clipping=%g%s, the first optimizer step raises "
            "\"Expected all tensors to be on the same device ... cuda:N and "
            "cpu\": the global grad norm is computed as a CUDA tensor (PR "
            "#5256), so the clip factor is on the GPU while the offloaded fp32 "
            "gradient it multiplies (stage3.py unscale_and_clip_grads) is on "
            "the CPU",
            zs_ds_version_fmt(&ds->version, v, sizeof v),
            zs_ds_device_name((int)ds->offload_optimizer.device.v),
            ds->gradient_clipping.from == ZS_DS_AUTO_UNRESOLVED
                ? 1.0
                : ds->gradient_clipping.v,
            ds->gradient_clipping.from == ZS_DS_AUTO_UNRESOLVED
                ? " (\"auto\" = HF's default max_grad_norm)"
                : "");
    num(f, "gradient_clipping",
        clipping_on(ds) && ds->gradient_clipping.v > 0 ? ds->gradient_clipping.v
                                                       : 1.0);
}

/* bitsandbytes 8-bit / paged optimizers keep their state on CUDA and reject
 * CPU tensors, so under offload_optimizer they fail with "Expected a cuda
 * device, but got: cpu". */
static void rule_bnb(const struct zs_lint_input *in, struct zs_lint_report *r)
{
    const struct zs_dsconfig *ds = in->ds;
    const char *name = in->optimizer;
    const char *from = "--optimizer";
    struct zs_lint_finding *f;

    if (!name && in->trainer && in->trainer->present) {
        name = in->trainer->optim;
        from = "TrainingArguments.optim";
    }
    if (!zs_lint_is_bnb_optimizer(name) || !offloads_optimizer(ds))
        return;
    if (ds->optimizer.present) {
        /* HF Trainer: an "optimizer" block in the DeepSpeed config wins over
         * TrainingArguments.optim (transformers integrations/deepspeed.py
         * deepspeed_optim_sched: "optimizer" in config -> DeepSpeed's). */
        f = emit(r, "bnb-optimizer-ignored", ZS_LINT_INFO,
                 "8-bit/paged optimizer is ignored: the DeepSpeed config "
                 "names its own optimizer",
                 ds, ds->optimizer.line, ds->optimizer.col,
                 "transformers integrations/deepspeed.py "
                 "(deepspeed_optim_sched); accelerate PR #1208 "
                 "(DeepSpeedCPUAdam under offload)",
                 "nothing fails; drop the optim setting to avoid confusion");
        EXPLAIN(f,
                "%s is '%s', but the DeepSpeed config has an \"optimizer\" "
                "block (type '%s'), which the HF Trainer uses instead; with "
                "offload_optimizer.device=%s DeepSpeed runs it as "
                "DeepSpeedCPUAdam, so the 8-bit optimizer's memory saving "
                "does not happen",
                from, name, ds->optimizer.type[0] ? ds->optimizer.type : "?",
                zs_ds_device_name((int)ds->offload_optimizer.device.v));
        return;
    }
    f = emit(r, "bnb-optimizer-offload", ZS_LINT_ERROR,
             "bitsandbytes 8-bit/paged optimizer under CPU offload: \"Expected "
             "a cuda device, but got: cpu\"",
             ds, ds->offload_optimizer.device.line,
             ds->offload_optimizer.device.col,
             "bitsandbytes #1402 (no CPU support for 8-bit optimizers; "
             "added only by bitsandbytes PR #1901, 2026), DeepSpeed #6666 "
             "(no 8-bit CPU Adam), axolotl #1705 (the same error under "
             "ZeRO-3), bitsandbytes #596 (ZeRORuntimeException for a client "
             "optimizer under offload)",
             "use optim adamw_torch and add \"optimizer\": {\"type\": "
             "\"AdamW\", \"params\": {\"lr\": \"auto\", \"betas\": \"auto\", "
             "\"eps\": \"auto\", \"weight_decay\": \"auto\"}} so DeepSpeed "
             "runs DeepSpeedCPUAdam on the CPU; or keep the 8-bit optimizer "
             "and set offload_optimizer.device to \"none\"");
    EXPLAIN(f,
            "%s is '%s', a bitsandbytes optimizer, and "
            "offload_optimizer.device=%s moves the fp32 master weights and "
            "gradients it updates to the CPU; bitsandbytes' optimizer "
            "kernels accept only CUDA tensors, so the first step fails with "
            "\"ValueError: Expected a cuda device, but got: cpu\" (and "
            "DeepSpeed refuses a client optimizer under offload unless "
            "zero_force_ds_cpu_optimizer is false)",
            from, name, zs_ds_device_name((int)ds->offload_optimizer.device.v));
}

/* Modules created outside zero.Init stay whole on the CPU (not partitioned):
 * Qwen2.5-Omni's talker/token2wav when audio output is enabled. */
static void rule_outside_zero_init(const struct zs_lint_input *in,
                                   struct zs_lint_report *r)
{
    const struct zs_model *m = in->model;
    const struct zs_dsconfig *ds = in->ds;
    char b1[24], b2[24];

    if (!m || ds->zero_stage.v != 3)
        return;
    for (int i = 0; i < m->n_extra && i < ZS_MODEL_MAX_EXTRA; i++) {
        const struct zs_extra *x = &m->extra[i];
        enum zs_placement p = x->placement_default;
        struct zs_lint_finding *f;
        int ranks;
        bool talker = strstr(x->name, "talker") || strstr(x->name, "token2wav");

        if (talker && in->audio_output == 0)
            p = ZS_PLACE_DISABLED;
        else if (talker && in->audio_output == 1)
            p = ZS_PLACE_CPU;
        if (p != ZS_PLACE_CPU)
            continue;
        ranks = in->cluster ? in->cluster->node.gpus_per_node : 1;
        f = emit(r, "module-outside-zero-init", ZS_LINT_ERROR,
                 "module built outside zero.Init is left whole on the CPU", ds,
                 0, 0,
                 "LlamaFactory PR #7537 (ZeRO-3 partitioning error in "
                 "Qwen2_5Omni enable_talker/token2wav); ms-swift Qwen-Omni "
                 "training guidance (ENABLE_AUDIO_OUTPUT=0); DESIGN §1",
                 "disable the talker for text training: ENABLE_AUDIO_OUTPUT=0 "
                 "(ms-swift) or enable_audio_output=False / "
                 "model.disable_talker() before deepspeed.initialize; zsim: "
                 "--audio-output off");
        EXPLAIN(f,
                "%s's '%s' (%lld parameters) is constructed outside "
                "deepspeed.zero.Init, so ZeRO-3 never partitions it: each of "
                "%d local rank(s) keeps a full fp32 copy on the CPU (%s per "
                "rank, %s per node) and the first forward through it mixes "
                "CPU weights with CUDA activations",
                m->name, x->name, (long long)x->params, ranks,
                gib(b1, x->params * 4), gib(b2, x->params * 4 * ranks));
        num(f, "module_params", (double)x->params);
        num(f, "host_bytes_per_node", (double)(x->params * 4 * ranks));
    }
}

/* What the host RAM rules look at: the input, its offload buffer terms,
 * the world, the local ranks and the node's usable host RAM. */
struct host_ctx {
    const struct zs_lint_input *in;
    const struct zs_lint_host_terms *h;
    int world, local;
    int64_t usable;
};

/* Load-time copies without zero.Init (ZeRO-3 without it, or ZeRO < 3,
 * where every rank builds the whole model before deepspeed.initialize). */
static void host_load_copies(const struct host_ctx *x, struct zs_lint_report *r)
{
    const struct zs_dsconfig *ds = x->in->ds;
    const struct zs_model *m = x->in->model;
    const struct zs_lint_host_terms *h = x->h;
    int local = x->local;
    int64_t usable = x->usable;
    const struct zs_cluster *c = x->in->cluster;
    struct zs_lint_finding *f;
    char b[5][24];
    bool over = h->node_load > usable;
    if (over || (ds->zero_stage.v == 3 && local > 1)) {
        f = emit(r, "no-zero-init-host-copies",
                 over ? ZS_LINT_ERROR : ZS_LINT_WARNING,
                 "no zero.Init: every local rank loads the full model into "
                 "host RAM",
                 ds, ds->zero_stage.line, ds->zero_stage.col,
                 "DeepSpeedExamples #498 (13B, 8 ranks x 60 GB host), "
                 "DeepSpeed #5290, #2841, Roblox/FAI-RL PR #68; "
                 "DeepSpeed estimator memory.rst (4 B x params per "
                 "local rank without zero_init)",
                 NULL);
        EXPLAIN(f,
                "without deepspeed.zero.Init each of the %d local ranks "
                "materialises all %lld parameters on the CPU before "
                "partitioning: %s per rank (4 B x params, fp32) x %d = "
                "%s per node at load, against %s usable host RAM (%s "
                "installed - %s reserved)%s",
                local, (long long)m->params_total, gib(b[0], h->load_copy_rank),
                local, gib(b[1], h->node_load), gib(b[2], usable),
                gib(b[3], c->node.host_ram_bytes),
                gib(b[4], c->node.host_reserved_bytes),
                over ? ": the node runs out of memory while loading" : "");
        FIX(f, "%s",
            ds->zero_stage.v == 3
                ? "build the model under zero.Init: create "
                  "TrainingArguments(deepspeed=...) or "
                  "HfDeepSpeedConfig before from_pretrained "
                  "(zsim: drop --no-zero-init); or run fewer "
                  "ranks per node"
                : "use ZeRO-3 with zero.Init, or fewer ranks "
                  "per node, or load with low_cpu_mem_usage and "
                  "a 16-bit torch_dtype");
        num(f, "local_ranks", local);
        num(f, "load_bytes_per_rank", (double)h->load_copy_rank);
        num(f, "load_bytes_per_node", (double)h->node_load);
        num(f, "host_ram_usable_bytes", (double)usable);
    }
}

/* The offload buffers alone exceed host RAM. */
static struct zs_lint_finding *host_offload_over(const struct host_ctx *x,
                                                 struct zs_lint_report *r)
{
    const struct zs_dsconfig *ds = x->in->ds;
    const struct zs_model *m = x->in->model;
    const struct zs_lint_host_terms *h = x->h;
    int local = x->local;
    int64_t usable = x->usable;
    int world = x->world;
    struct zs_lint_finding *f;
    char b[10][24];
    f = emit(r, "host-ram-offload", ZS_LINT_ERROR,
             "host RAM is too small for the offload buffers", ds,
             ds->offload_optimizer.line, ds->offload_optimizer.col,
             "DeepSpeed stage3.py buffers (reference "
             "zero3-offload-mechanics.md §2); host OOM reports "
             "DeepSpeed #2984, #3448, OpenRLHF #632",
             "use more nodes (the per-rank partition shrinks with the "
             "world size), more host RAM, offload_optimizer.ratio < 1 "
             "(part of the optimizer stays on the GPU), or NVMe offload");
    EXPLAIN(f,
            "per rank (P = %lld partition elements of %lld params / %d "
            "ranks): bf16 flat params %s (pinned) + fp32 master %s + fp32 "
            "grads %s%s + grad accumulation %s%s + Adam states %s (at the "
            "first step) = %s nominal, %s as allocated with pinned "
            "power-of-two rounding; x %d local ranks = %s per node "
            "(%s allocated), against %s usable host RAM",
            (long long)h->partition_elems, (long long)m->params_total, world,
            gib(b[0], h->flat16), gib(b[1], h->master32), gib(b[2], h->grad32),
            ds->offload_optimizer.pin_memory.v ? " (pinned)" : "",
            gib(b[3], h->accum16),
            ds->offload_optimizer.pin_memory.v ? " (pinned)" : "",
            gib(b[4], h->adam), gib(b[5], h->rank_nominal),
            gib(b[6], h->rank_alloc), local, gib(b[7], h->node_nominal),
            gib(b[8], h->node_alloc), gib(b[9], usable));
    return f;
}

/* The buffers fit nominally, but not with pinned power-of-two rounding. */
static struct zs_lint_finding *host_pinned_over(const struct host_ctx *x,
                                                struct zs_lint_report *r)
{
    const struct zs_dsconfig *ds = x->in->ds;
    const struct zs_lint_host_terms *h = x->h;
    int local = x->local;
    int64_t usable = x->usable;
    struct zs_lint_finding *f;
    char b[9][24];
    f = emit(r, "pinned-rounding", ZS_LINT_ERROR,
             "pinned-memory power-of-two rounding pushes host RAM over", ds,
             ds->offload_optimizer.pin_memory.line,
             ds->offload_optimizer.pin_memory.col,
             "PyTorch CachingHostAllocator.h (PowerOf2Ceil), pytorch "
             "#95823, #150517, PR #171662; DeepSpeed #3481, #2977, "
             "OpenRLHF #632 (workaround pin_memory false)",
             "set offload_optimizer.pin_memory false (the 16-bit flat "
             "buffer stays pinned regardless), or "
             "DS_PIN_MEMORY_BACKEND=native on DeepSpeed >= 0.19.6 (PR "
             "#8211, exact-size pinning), or fewer ranks per node");
    EXPLAIN(f,
            "the offload buffers need %s per node nominally, which fits "
            "in %s usable host RAM, but PyTorch's pinned host allocator "
            "rounds each pinned allocation up to a power of two: per "
            "rank bf16 flat %s -> %s, fp32 grads %s -> %s, grad "
            "accumulation %s -> %s; x %d local ranks = %s per node",
            gib(b[0], h->node_nominal), gib(b[1], usable), gib(b[2], h->flat16),
            gib(b[3], h->flat16_alloc), gib(b[4], h->grad32),
            gib(b[5], h->grad32_alloc), gib(b[6], h->accum16),
            gib(b[7], h->accum16_alloc), local, gib(b[8], h->node_alloc));
    return f;
}

/* The numbers of a host RAM finding: every buffer term. */
static void host_numbers(struct zs_lint_finding *f, const struct host_ctx *x)
{
    static const struct {
        const char *name;
        size_t off;
    } terms[] = {
#define TERM(name, field) {name, offsetof(struct zs_lint_host_terms, field)}
        TERM("partition_elems", partition_elems),
        TERM("flat16_bytes", flat16),
        TERM("master32_bytes", master32),
        TERM("grad32_bytes", grad32),
        TERM("accum16_bytes", accum16),
        TERM("adam_bytes", adam),
        TERM("rank_nominal_bytes", rank_nominal),
        TERM("rank_alloc_bytes", rank_alloc),
        TERM("node_nominal_bytes", node_nominal),
        TERM("node_alloc_bytes", node_alloc),
#undef TERM
    };
    for (size_t i = 0; i < sizeof terms / sizeof terms[0]; i++) {
        const char *p = (const char *)x->h + terms[i].off;
        num(f, terms[i].name, (double)*(const int64_t *)p);
    }
    num(f, "host_ram_usable_bytes", (double)x->usable);
    num(f, "local_ranks", x->local);
}

/* Host RAM: offload buffers (with pinned rounding) and load-time copies. */
static void rule_host_ram(const struct zs_lint_input *in,
                          struct zs_lint_report *r)
{
    const struct zs_dsconfig *ds = in->ds;
    const struct zs_cluster *c = in->cluster;
    const struct zs_model *m = in->model;
    struct zs_lint_host_terms h;
    struct zs_err e = {0, ""};
    struct host_ctx x = {in, &h, 0, 0, 0};

    if (!m || !c || m->params_total <= 0)
        return;
    x.world = world_size(in);
    x.local = c->node.gpus_per_node;
    if (x.world < 1 || x.local < 1 || x.local > x.world)
        return;
    if (zs_lint_host_offload_bytes(m->params_total, x.world, x.local, ds, &h,
                                   &e))
        return;
    x.usable = host_usable(c);
    if (ds->zero_stage.v < 3 || !in->zero_init)
        host_load_copies(&x, r);
    if (h.node_nominal <= 0)
        return;
    if (h.node_nominal > x.usable)
        host_numbers(host_offload_over(&x, r), &x);
    else if (h.node_alloc > x.usable)
        host_numbers(host_pinned_over(&x, r), &x);
}

/* Twin-Flow's ratio as DeepSpeed applies it: whole optimizer sub-groups
 * (config.c zs_twin_cpu_groups), so with few sub-groups per rank the share on
 * the CPU is not the ratio, and can be all of them.  Reported when the
 * effective share k / n differs from the ratio by more than 0.05 or nothing
 * moves.  Needs the model and the cluster (the partition per rank). */
static void rule_offload_ratio_rounded(const struct zs_lint_input *in,
                                       struct zs_lint_report *r)
{
    const struct zs_dsconfig *ds = in->ds;
    const struct zs_ds_offload *oo = &ds->offload_optimizer;
    struct zs_lint_finding *f;
    int64_t P, sub, n, k, want;
    int world;
    double eff;
    if (!in->model || !in->cluster || in->model->params_total <= 0 ||
        oo->ratio.from != ZS_DS_SET || !(oo->ratio.v < 1.0) ||
        oo->device.v != ZS_DS_DEV_CPU || ds->zero_stage.v != 3)
        return;
    world = world_size(in);
    if (world < 1)
        return;
    P = (in->model->params_total + world - 1) / world;
    sub = subgroup_elems(ds, P);
    n = (P + sub - 1) / sub;
    k = zs_twin_cpu_groups(n, oo->ratio.v, &ds->version);
    eff = (double)k / (double)n;
    if (k < n && fabs(eff - oo->ratio.v) <= 0.05)
        return;
    /* the sub_group_size that gives at least 20 sub-groups, for a share
     * within 0.05 of the ratio */
    want = (P + 19) / 20;
    f = emit(r, "offload-ratio-rounded", ZS_LINT_WARNING,
             k == n ? "offload_optimizer.ratio moves no optimizer state to "
                      "the GPU"
                    : "offload_optimizer.ratio is rounded to whole sub-groups",
             ds, oo->ratio.line, oo->ratio.col,
             "DeepSpeed stage3.py:1051-1058 at edaa722 (sub-groups mapped "
             "whole; v0.12.3-0.17: i < int(ratio * n) on the CPU); "
             "docs/cpu-optimizer.md",
             NULL);
    EXPLAIN(f,
            "each rank's partition of %lld elements (%lld params / %d ranks) "
            "makes %lld optimizer sub-group%s of sub_group_size %lld; DeepSpeed "
            "%d.%d.%d puts %lld of them on the CPU at ratio %g (%s), an "
            "effective ratio of %.3g",
            (long long)P, (long long)in->model->params_total, world,
            (long long)n, n == 1 ? "" : "s", (long long)sub,
            ds->version.major, ds->version.minor, ds->version.patch,
            (long long)k, oo->ratio.v,
            zs_twin_cpu_last(&ds->version) ? "the last n - int((1 - ratio) n)"
                                           : "the first int(ratio n)",
            eff);
    FIX(f,
        "set sub_group_size to %lld or less (20 sub-groups per rank) so the "
        "ratio is applied within 0.05, or pick the ratio from the %lld "
        "sub-groups",
        (long long)want, (long long)n);
    num(f, "subgroups", (double)n);
    num(f, "cpu_subgroups", (double)k);
    num(f, "effective_ratio", eff);
}

/* max_steps / max_iters shorter than one epoch. */
static void rule_max_steps(const struct zs_lint_input *in,
                           struct zs_lint_report *r)
{
    const struct zs_trainer_args *t = in->trainer;
    const struct zs_dsconfig *ds = in->ds;
    int64_t world, per_step, batches, steps_epoch;
    struct zs_lint_finding *f;

    if (!t || !t->present || t->max_steps <= 0 || t->dataset_samples <= 0)
        return;
    world = world_size(in);
    if (world < 1)
        return;
    per_step = ds->train_micro_batch_size_per_gpu.v * world;
    if (per_step < 1 || ds->gradient_accumulation_steps.v < 1)
        return;
    /* HF Trainer: len(dataloader) = ceil(samples / (micro × world)), and
     * num_update_steps_per_epoch = max(len // GA, 1) (trainer.py
     * _inner_training_loop) [assumption: no drop_last, no packing]. */
    batches = (t->dataset_samples + per_step - 1) / per_step;
    steps_epoch = batches / ds->gradient_accumulation_steps.v;
    if (steps_epoch < 1)
        steps_epoch = 1;
    if (t->max_steps >= steps_epoch)
        return;
    f = add(r, "max-steps-short", ZS_LINT_WARNING,
            "training stops before the end of the first epoch");
    setf(f->where, sizeof f->where, "%s", t->path);
    EXPLAIN(f,
            "%s=%lld overrides the epoch count: one epoch of %lld samples is "
            "%lld optimizer steps (micro-batch %lld x %lld ranks x "
            "accumulation %lld = %lld samples per step), so training ends "
            "after %.1f%% of one epoch instead of %g epoch(s)",
            t->max_steps_key, (long long)t->max_steps,
            (long long)t->dataset_samples, (long long)steps_epoch,
            (long long)ds->train_micro_batch_size_per_gpu.v, (long long)world,
            (long long)ds->gradient_accumulation_steps.v,
            (long long)(per_step * ds->gradient_accumulation_steps.v),
            100.0 * (double)t->max_steps / (double)steps_epoch,
            t->num_train_epochs);
    SOURCE(f, "xtuner #589 (a leftover train_cfg max_iters=32 ran 32 "
              "iterations); transformers TrainingArguments (max_steps > 0 "
              "overrides num_train_epochs)");
    FIX(f,
        "remove %s (or set it to -1) and bound training by epochs "
        "(num_train_epochs / max_epochs), or raise it to at least %lld",
        t->max_steps_key, (long long)steps_epoch);
    num(f, "max_steps", (double)t->max_steps);
    num(f, "steps_per_epoch", (double)steps_epoch);
    num(f, "dataset_samples", (double)t->dataset_samples);
}

/* offload_optimizer.ratio (Twin-Flow) where it does nothing. */
static void offload_ratio_ignored(const struct zs_dsconfig *ds,
                                  struct zs_lint_report *r)
{
    const struct zs_ds_offload *oo = &ds->offload_optimizer;
    long long st = (long long)ds->zero_stage.v;
    struct zs_lint_finding *f;
    if (oo->ratio.from == ZS_DS_SET && oo->ratio.v < 1.0 &&
        (oo->device.v == ZS_DS_DEV_NONE || ds->zero_stage.v != 3)) {
        f = emit(r, "offload-ratio-ignored", ZS_LINT_WARNING,
                 "offload_optimizer.ratio has no effect here", ds,
                 oo->ratio.line, oo->ratio.col,
                 "DeepSpeed offload_config.py (ratio, stage 3 only); "
                 "reference §0, §1 variants",
                 "remove ratio, or use stage 3 with offload_optimizer.device "
                 "\"cpu\"");
        EXPLAIN(f,
                "ratio=%g (partial \"Twin-Flow\" offload) applies only to "
                "ZeRO-3 with offload_optimizer.device cpu; here stage=%lld, "
                "device=%s",
                oo->ratio.v, st, zs_ds_device_name((int)oo->device.v));
    }
}

/* pin_memory set in offload block o (named blk) that offloads nothing. */
static void pin_memory_ignored(const struct zs_dsconfig *ds,
                               struct zs_lint_report *r,
                               const struct zs_ds_offload *o, const char *blk)
{
    struct zs_lint_finding *f;
    char title[96];
    if (!(o->pin_memory.from == ZS_DS_SET && o->pin_memory.v &&
          o->device.v == ZS_DS_DEV_NONE))
        return;
    setf(title, sizeof title, "%s.pin_memory is set but nothing is offloaded",
         blk);
    f = emit(r, "pin-memory-ignored", ZS_LINT_INFO, title, ds,
             o->pin_memory.line, o->pin_memory.col,
             "DeepSpeed offload_config.py",
             "remove pin_memory or set the device");
    EXPLAIN(f, "pin_memory=true with %s.device=none has no effect", blk);
}

/* Offload settings that contradict each other or the stage. */
static void rule_offload_consistency(const struct zs_lint_input *in,
                                     struct zs_lint_report *r)
{
    const struct zs_dsconfig *ds = in->ds;
    const struct zs_ds_offload *op = &ds->offload_param,
                               *oo = &ds->offload_optimizer;
    struct zs_lint_finding *f;
    long long st = (long long)ds->zero_stage.v;

    if (op->device.v != ZS_DS_DEV_NONE && ds->zero_stage.v != 3) {
        f = emit(r, "offload-param-stage", ZS_LINT_WARNING,
                 "offload_param needs ZeRO stage 3", ds, op->device.line,
                 op->device.col,
                 "DeepSpeed docs config-json (offload_param: \"only valid "
                 "with stage 3\"); reference §0",
                 "set \"stage\": 3, or remove offload_param");
        EXPLAIN(f,
                "offload_param.device=%s with zero_optimization.stage=%lld: "
                "only stage 3 partitions parameters, so the parameters stay "
                "on the GPU and the setting does nothing",
                zs_ds_device_name((int)op->device.v), st);
    }
    if (oo->device.v != ZS_DS_DEV_NONE && ds->zero_stage.v == 0) {
        f = emit(r, "offload-optimizer-stage", ZS_LINT_WARNING,
                 "offload_optimizer needs ZeRO stage 1, 2 or 3", ds,
                 oo->device.line, oo->device.col,
                 "DeepSpeed docs config-json (ZeRO-Offload for stages 1-3)",
                 "set zero_optimization.stage to 2 or 3, or remove "
                 "offload_optimizer");
        EXPLAIN(f,
                "offload_optimizer.device=%s with ZeRO disabled (stage "
                "0): nothing is offloaded",
                zs_ds_device_name((int)oo->device.v));
    }
    if (ds->zero_stage.v == 3 && op->device.v != ZS_DS_DEV_NONE &&
        oo->device.v == ZS_DS_DEV_NONE) {
        f = emit(r, "offload-param-only", ZS_LINT_WARNING,
                 "parameters offloaded while the optimizer stays on the GPU",
                 ds, op->device.line, op->device.col,
                 "DeepSpeed estimate_zero3_model_states_mem_needs_all_cold "
                 "skips this combination (reference peer-tools.md); "
                 "reference §1 (blocking H2D in _all_gather_dtype)",
                 "offload the optimizer too (offload_optimizer.device "
                 "\"cpu\"), or neither");
        EXPLAIN(f,
                "offload_param.device=%s but offload_optimizer.device=none: "
                "the fp32 master weights, gradients and Adam states (16 B "
                "per partition element) stay on the GPU while only the "
                "2 B/element 16-bit parameters move to the CPU, and every "
                "gather pays a blocking host-to-device copy",
                zs_ds_device_name((int)op->device.v));
    }
    offload_ratio_ignored(ds, r);
    pin_memory_ignored(ds, r, oo, "offload_optimizer");
    pin_memory_ignored(ds, r, op, "offload_param");
}

/* ZeRO-1/2 without overlap_comm, DeepSpeed's default below stage 3
 * (zero/config.py overlap_comm_valid at edaa722): each gradient bucket's
 * divide, flat copy, collective and copy back run on the current stream
 * between the backward's kernels (stage_1_and_2.py average_tensor,
 * reduce_ipg_grads); with overlap_comm they run on DeepSpeed's reduction
 * stream and the bucket is double-buffered (setup_buckets buf_1).  zsim
 * simulates both (sched/zero.c flush_z12). */
static void rule_overlap_comm(const struct zs_lint_input *in,
                              struct zs_lint_report *r)
{
    const struct zs_dsconfig *ds = in->ds;
    const struct zs_ds_bool *oc = &ds->overlap_comm;
    long long st = (long long)ds->zero_stage.v;
    struct zs_lint_finding *f;
    char b[32];
    if ((st != 1 && st != 2) || oc->v)
        return;
    f = emit(r, "overlap-comm-off", ZS_LINT_INFO,
             "ZeRO-1/2 reduces gradients on the compute stream", ds,
             oc->from == ZS_DS_SET ? oc->line : ds->zero_stage.line,
             oc->from == ZS_DS_SET ? oc->col : ds->zero_stage.col,
             "DeepSpeed zero/config.py overlap_comm_valid, stage_1_and_2.py "
             "average_tensor and setup_buckets (edaa722)",
             "set zero_optimization.overlap_comm true, at the cost of a "
             "second gradient bucket on each GPU");
    num(f, "second_bucket_bytes", (double)ds->reduce_bucket_size.v * 2);
    EXPLAIN(f,
            "overlap_comm is %s with stage %lld: every gradient bucket's "
            "divide, flat copy, collective and copy back run on the current "
            "stream, so the backward waits for each; with overlap_comm true "
            "they run on DeepSpeed's reduction stream and a second bucket of "
            "%s is allocated (reduce_bucket_size x 2 B)",
            oc->from == ZS_DS_SET ? "false"
                                  : "unset (DeepSpeed's default: false "
                                    "below stage 3)",
            st, gib(b, ds->reduce_bucket_size.v * 2));
}

/* activation_checkpointing.cpu_checkpointing (issue 14 §3): the section
 * configures deepspeed.checkpointing only.  The engine never calls
 * deepspeed.checkpointing.configure (DeepSpeed edaa7221: its only callers are
 * in runtime/activation_checkpointing/checkpointing.py), and HF models
 * checkpoint with torch.utils.checkpoint (transformers modeling_utils.py
 * gradient_checkpointing_enable).  DeepSpeed 0.19.6 offers HF models the same
 * offload through get_checkpoint_hidden_states_offloading_ctx_manager
 * (offload_activations.py:507-521); zsim simulates it either way
 * (docs/activation-offload.md). */
static void rule_cpu_checkpointing(const struct zs_lint_input *in,
                                   struct zs_lint_report *r)
{
    const struct zs_dsconfig *ds = in->ds;
    const struct zs_trainer_args *t = in->trainer;
    bool hf_gc = t && t->present && t->gradient_checkpointing;
    struct zs_lint_finding *f;
    if (!ds->activation_checkpointing.cpu_checkpointing.v)
        return;
    f = emit(r, "cpu-checkpointing-needs-ds-checkpoint",
             hf_gc ? ZS_LINT_WARNING : ZS_LINT_INFO,
             hf_gc ? "cpu_checkpointing has no effect on the HF Trainer's "
                     "gradient checkpointing"
                   : "cpu_checkpointing acts only on "
                     "deepspeed.checkpointing.checkpoint",
             ds, ds->activation_checkpointing.cpu_checkpointing.line,
             ds->activation_checkpointing.cpu_checkpointing.col,
             "DeepSpeed edaa7221 runtime/activation_checkpointing/"
             "checkpointing.py (configure, CheckpointFunction); transformers "
             "modeling_utils.py gradient_checkpointing_enable",
             "checkpoint through deepspeed.checkpointing, or with DeepSpeed "
             "0.19.6 wrap forward and backward in "
             "get_checkpoint_hidden_states_offloading_ctx_manager()");
    EXPLAIN(f,
            "activation_checkpointing configures deepspeed.checkpointing, "
            "which the engine never sets up: the offload happens only when "
            "the model calls deepspeed.checkpointing.configure and "
            "checkpoints through deepspeed.checkpointing.checkpoint%s",
            hf_gc ? "; gradient_checkpointing in the Trainer arguments uses "
                    "torch.utils.checkpoint"
                  : "");
}

/* Parameters kept gathered on every GPU by the persistence threshold: every
 * parameter tensor with numel <= threshold stays gathered for the whole run
 * (reference §1 Persistence).  Per leaf we take params / n_tensors as the
 * tensor size [assumption: weight dominates; biases are tiny]. */
static int64_t persistent_elems(const struct zs_model *m,
                                const struct zs_dsconfig *ds)
{
    int64_t persist_elems = 0;
    for (int i = 0; i < m->n_layer_leaves && i < ZS_MODEL_MAX_LAYER_LEAVES;
         i++) {
        const struct zs_leaf *l = &m->layer[i];
        int nt = l->n_tensors > 0 ? l->n_tensors : 1;
        if (l->params / nt <= ds->stage3_param_persistence_threshold.v)
            persist_elems += l->params * m->n_layers;
    }
    for (int i = 0; i < m->n_pre && i < ZS_MODEL_MAX_OUTER; i++)
        if (m->pre[i].params <= ds->stage3_param_persistence_threshold.v)
            persist_elems += m->pre[i].params;
    for (int i = 0; i < m->n_post && i < ZS_MODEL_MAX_OUTER; i++)
        if (m->post[i].params <= ds->stage3_param_persistence_threshold.v)
            persist_elems += m->post[i].params;
    return persist_elems;
}

/* ZeRO-3 without zero.Init: deepspeed.initialize moves the whole module to
 * each GPU before partitioning it (engine.py _configure_distributed_model:
 * self.module.to(self.device), at edaa722 and v0.6.5), in its 16-bit
 * (or fp32) parameter dtype.  Above the GPU's usable memory that is an OOM at
 * initialize; under it, with offload_param the freed blocks stay cached for
 * the whole run (stage3.py empties the cache only on the path that keeps the
 * parameters on the GPU, defragment), which zsim simulate shows as reserved
 * memory (sched/zero.c init_whole_model). */
static void rule_no_zero_init_gpu(const struct zs_lint_input *in,
                                  struct zs_lint_report *r)
{
    const struct zs_dsconfig *ds = in->ds;
    const struct zs_cluster *c = in->cluster;
    const struct zs_model *m = in->model;
    int64_t usable, bytes;
    bool off_param;
    struct zs_lint_finding *f;
    char b[2][24];

    if (in->zero_init || ds->zero_stage.v != 3 || !c || !m ||
        m->params_total <= 0)
        return;
    usable = c->node.gpu.hbm_bytes - c->node.gpu.cuda_context_bytes -
             c->node.gpu.nccl_bytes;
    bytes = m->params_total * zs_dsconfig_param_bytes(ds);
    off_param = ds->offload_param.device.v != ZS_DS_DEV_NONE;
    if (usable <= 0 || (bytes <= usable && !off_param))
        return;
    f = emit(r, "no-zero-init-gpu-whole-model",
             bytes > usable ? ZS_LINT_ERROR : ZS_LINT_WARNING,
             bytes > usable
                 ? "no zero.Init: deepspeed.initialize puts the whole model on "
                   "each GPU, more than it holds"
                 : "no zero.Init: the whole model's GPU blocks stay cached "
                   "under offload_param",
             ds, ds->zero_stage.line, ds->zero_stage.col,
             "DeepSpeed engine.py _configure_distributed_model "
             "(self.module.to(self.device) unless zero.Init built the model), "
             "stage3.py defragment's torch.cuda.empty_cache() only without "
             "offload_param (edaa722, v0.6.5); OPT-Benchmark's OPT-13B log: "
             "\"Max_MA 23.94 GB CA 25.84 GB\" after init",
             "build the model under deepspeed.zero.Init (HF: create "
             "HfDeepSpeedConfig, or use the Trainer / Accelerate, before "
             "from_pretrained)");
    EXPLAIN(f,
            "without deepspeed.zero.Init, deepspeed.initialize moves all %lld "
            "parameters to each GPU before ZeRO-3 partitions them: %s at %d B "
            "per parameter against %s usable on %s%s",
            (long long)m->params_total, gib(b[0], bytes),
            zs_dsconfig_param_bytes(ds), gib(b[1], usable), c->node.gpu.name,
            bytes > usable ? ": out of memory at initialize"
                           : "; with offload_param the freed blocks are not "
                             "returned, so that much stays reserved");
    num(f, "model_bytes", (double)bytes);
    num(f, "gpu_usable_bytes", (double)usable);
}

/* Buckets and persistence thresholds against the GPU's memory. */
static void rule_buckets(const struct zs_lint_input *in,
                         struct zs_lint_report *r)
{
    const struct zs_dsconfig *ds = in->ds;
    const struct zs_cluster *c = in->cluster;
    const struct zs_model *m = in->model;
    int64_t usable, comm_b, ipg, rs, prefetch, persist_elems = 0, total;
    int pb;
    struct zs_lint_finding *f;
    char b[8][24];

    if (!c || ds->zero_stage.v != 3)
        return;
    usable = c->node.gpu.hbm_bytes - c->node.gpu.cuda_context_bytes -
             c->node.gpu.nccl_bytes;
    if (usable <= 0)
        return;
    pb = zs_dsconfig_param_bytes(ds);
    comm_b = ds->communication_data_type.v == ZS_DS_DT_FP32 ? 4 : 2;
    /* IPG bucket, persistent with contiguous_gradients (reduce_bucket_size ×
     * dtype), plus the reduce-scatter interleave copy of the same size per
     * flush (reference §2 GPU table). */
    ipg = ds->reduce_bucket_size.v * pb;
    rs = ds->reduce_bucket_size.v * comm_b;
    /* Prefetch: up to stage3_prefetch_bucket_size elements gathered ahead,
     * each held twice while the flat all-gather buffer and the per-param
     * torch.cat copies coexist (reference §1 step 2b). */
    prefetch = 2 * ds->stage3_prefetch_bucket_size.v * pb;
    if (m)
        persist_elems = persistent_elems(m, ds);
    total = ipg + rs + prefetch + persist_elems * pb;
    /* [assumption] a quarter of usable HBM for fixed communication buffers
     * leaves the rest for activations, the loss and gathered layers; the
     * DeepSpeed defaults (5e8 bucket = 1 GB, 5e7 prefetch = 0.2 GB) are well
     * under it on any 16 GB+ GPU. */
    if (total * 4 <= usable)
        return;
    f = emit(r, "buckets-gpu-peak",
             total > usable ? ZS_LINT_ERROR : ZS_LINT_WARNING,
             "bucket sizes and persistence threshold take a large share of "
             "GPU memory",
             ds, ds->reduce_bucket_size.line, ds->reduce_bucket_size.col,
             "DeepSpeed stage3.py IPG bucket and reduce_scatter_coalesced, "
             "partitioned_param_coordinator.py prefetch, "
             "partition_parameters.py ds_persist (reference §1, §2); HF "
             "\"auto\": h*h, 0.9*h*h, 10*h (transformers "
             "integrations/deepspeed.py)",
             "use \"auto\" (HF sizes them from the hidden size: h*h, 0.9*h*h, "
             "10*h) or DeepSpeed's defaults (5e8, 5e7, 1e5)");
    EXPLAIN(f,
            "fixed GPU buffers: reduce bucket %lld elements -> %s IPG buffer "
            "+ %s reduce-scatter copy; prefetch %lld elements -> up to %s "
            "(gathered twice while copied out); %lld parameters persistent "
            "(tensors <= stage3_param_persistence_threshold %lld) -> %s; "
            "total %s of %s usable on %s (%.0f%%)",
            (long long)ds->reduce_bucket_size.v, gib(b[0], ipg), gib(b[1], rs),
            (long long)ds->stage3_prefetch_bucket_size.v, gib(b[2], prefetch),
            (long long)persist_elems,
            (long long)ds->stage3_param_persistence_threshold.v,
            gib(b[3], persist_elems * pb), gib(b[4], total), gib(b[5], usable),
            c->node.gpu.name, 100.0 * (double)total / (double)usable);
    num(f, "ipg_bytes", (double)ipg);
    num(f, "reduce_scatter_bytes", (double)rs);
    num(f, "prefetch_bytes", (double)prefetch);
    num(f, "persistent_params", (double)persist_elems);
    num(f, "total_bytes", (double)total);
    num(f, "gpu_usable_bytes", (double)usable);
}

/* Keys DeepSpeed does not know. */
static void rule_unknown_keys(const struct zs_lint_input *in,
                              struct zs_lint_report *r)
{
    const struct zs_ds_notes *n = in->notes;
    if (!n)
        return;
    for (int i = 0; i < n->n && i < ZS_DS_NOTES_MAX; i++) {
        const struct zs_ds_note *k = &n->item[i];
        char title[128];
        struct zs_lint_finding *f;
        setf(title, sizeof title, "unknown key '%s'", k->key);
        f = add(r, "ds-unknown-key",
                k->rejected ? ZS_LINT_ERROR : ZS_LINT_WARNING, title);
        setf(f->where, sizeof f->where, "%s", k->where);
        if (k->rejected)
            EXPLAIN(f,
                    "'%s' is not a DeepSpeed setting; this block is "
                    "validated with extra=\"forbid\", so DeepSpeed "
                    "refuses to start%s%s%s",
                    k->key, k->suggest[0] ? " (did you mean '" : "", k->suggest,
                    k->suggest[0] ? "'?)" : "");
        else
            EXPLAIN(f,
                    "'%s' is not a DeepSpeed setting; DeepSpeed ignores "
                    "unknown top-level keys, so it has no effect%s%s%s",
                    k->key, k->suggest[0] ? " (did you mean '" : "", k->suggest,
                    k->suggest[0] ? "'?)" : "");
        SOURCE(f, "deepspeed/runtime/config_utils.py DeepSpeedConfigModel "
                  "(extra=\"forbid\"); deepspeed/runtime/config.py "
                  "(top level read with dict.get)");
        if (k->suggest[0])
            FIX(f, "rename it to '%s'", k->suggest);
        else
            FIX(f, "remove it");
    }
    if (n->dropped > 0) {
        struct zs_lint_finding *f =
            add(r, "ds-unknown-key", ZS_LINT_WARNING, "more unknown keys");
        EXPLAIN(f, "%d more unknown keys were not listed", n->dropped);
        SOURCE(f, "deepspeed/runtime/config_utils.py");
        FIX(f, "remove them");
    }
}

/* "auto" values lint could not resolve. */
static void rule_auto_unresolved(const struct zs_lint_input *in,
                                 struct zs_lint_report *r)
{
    const struct zs_dsconfig *ds = in->ds;
    static const struct {
        const char *name;
        size_t off;
        int kind; /* 0 int, 1 num, 2 bool */
        const char *needs;
    } keys[] = {
        {"zero_optimization.reduce_bucket_size",
         offsetof(struct zs_dsconfig, reduce_bucket_size), 0,
         "--model (hidden size)"},
        {"zero_optimization.stage3_prefetch_bucket_size",
         offsetof(struct zs_dsconfig, stage3_prefetch_bucket_size), 0,
         "--model (hidden size)"},
        {"zero_optimization.stage3_param_persistence_threshold",
         offsetof(struct zs_dsconfig, stage3_param_persistence_threshold), 0,
         "--model (hidden size)"},
        {"train_micro_batch_size_per_gpu",
         offsetof(struct zs_dsconfig, train_micro_batch_size_per_gpu), 0,
         "--trainer-args"},
        {"gradient_accumulation_steps",
         offsetof(struct zs_dsconfig, gradient_accumulation_steps), 0,
         "--trainer-args"},
        {"train_batch_size", offsetof(struct zs_dsconfig, train_batch_size), 0,
         "--trainer-args and --gpus"},
        {"gradient_clipping", offsetof(struct zs_dsconfig, gradient_clipping),
         1, "--trainer-args"},
        {"bf16.enabled", offsetof(struct zs_dsconfig, bf16_enabled), 2,
         "--trainer-args"},
        {"fp16.enabled", offsetof(struct zs_dsconfig, fp16_enabled), 2,
         "--trainer-args"},
    };
    char list[600] = "";
    size_t len = 0;
    int count = 0;
    struct zs_lint_finding *f;

    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *p = (const char *)ds + keys[i].off;
        enum zs_ds_origin from =
            keys[i].kind == 0   ? ((const struct zs_ds_int *)p)->from
            : keys[i].kind == 1 ? ((const struct zs_ds_num *)p)->from
                                : ((const struct zs_ds_bool *)p)->from;
        if (from != ZS_DS_AUTO_UNRESOLVED)
            continue;
        if (len < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len,
                                    "%s%s (needs %s)", count ? ", " : "",
                                    keys[i].name, keys[i].needs);
        count++;
    }
    if (!count)
        return;
    f = emit(r, "auto-unresolved", ZS_LINT_INFO,
             "\"auto\" values not resolved; DeepSpeed defaults were used", ds,
             0, 0,
             "transformers integrations/deepspeed.py "
             "(trainer_config_process, trainer_config_finalize); "
             "deepspeed/runtime/config_utils.py (drops \"auto\")",
             "pass the inputs named above so lint checks the values your run "
             "will really use");
    EXPLAIN(f,
            "%d \"auto\" value(s) could not be resolved the way the HF "
            "Trainer would: %s; the rules used DeepSpeed's defaults for "
            "them",
            count, list);
}

/* HF's check of the DeepSpeed config against the TrainingArguments t. */
static void trainer_mismatch(const struct zs_dsconfig *ds,
                             const struct zs_trainer_args *t,
                             struct zs_lint_report *r)
{
    struct zs_lint_finding *f;

    char list[600] = "";
    size_t len = 0;
    int count = 0;
#define MISMATCH(cond, ...)                                                    \
    do {                                                                       \
        if ((cond) && len < sizeof list) {                                     \
            len += (size_t)snprintf(list + len, sizeof list - len,             \
                                    count ? "; " : "");                        \
            if (len < sizeof list)                                             \
                len += (size_t)snprintf(list + len, sizeof list - len,         \
                                        __VA_ARGS__);                          \
            count++;                                                           \
        }                                                                      \
    } while (0)
    MISMATCH(ds->train_micro_batch_size_per_gpu.from == ZS_DS_SET &&
                 ds->train_micro_batch_size_per_gpu.v !=
                     t->per_device_train_batch_size,
             "train_micro_batch_size_per_gpu=%lld vs "
             "per_device_train_batch_size=%lld",
             (long long)ds->train_micro_batch_size_per_gpu.v,
             (long long)t->per_device_train_batch_size);
    MISMATCH(ds->gradient_accumulation_steps.from == ZS_DS_SET &&
                 ds->gradient_accumulation_steps.v !=
                     t->gradient_accumulation_steps,
             "gradient_accumulation_steps=%lld vs %lld",
             (long long)ds->gradient_accumulation_steps.v,
             (long long)t->gradient_accumulation_steps);
    MISMATCH(ds->gradient_clipping.from == ZS_DS_SET &&
                 ds->gradient_clipping.v != t->max_grad_norm,
             "gradient_clipping=%g vs max_grad_norm=%g",
             ds->gradient_clipping.v, t->max_grad_norm);
    MISMATCH(ds->bf16_enabled.from == ZS_DS_SET &&
                 ds->bf16_enabled.v != t->bf16,
             "bf16.enabled=%s vs bf16=%s",
             ds->bf16_enabled.v ? "true" : "false", t->bf16 ? "true" : "false");
    MISMATCH(ds->fp16_enabled.from == ZS_DS_SET &&
                 ds->fp16_enabled.v != t->fp16,
             "fp16.enabled=%s vs fp16=%s",
             ds->fp16_enabled.v ? "true" : "false", t->fp16 ? "true" : "false");
#undef MISMATCH
    if (!count)
        return;
    f = emit(r, "trainer-mismatch", ZS_LINT_ERROR,
             "DeepSpeed config contradicts the TrainingArguments", ds, 0, 0,
             "transformers integrations/deepspeed.py "
             "(HfTrainerDeepSpeedConfig.trainer_config_finalize)",
             "set these keys to \"auto\" so the Trainer fills them, or "
             "make both sides equal");
    EXPLAIN(f,
            "the HF Trainer stops with \"Please correct the following "
            "DeepSpeed config values that mismatch TrainingArguments "
            "values\": %s",
            list);
}

/* DeepSpeed's batch assertion and HF's mismatch check. */
static void rule_batch(const struct zs_lint_input *in, struct zs_lint_report *r)
{
    const struct zs_dsconfig *ds = in->ds;
    const struct zs_trainer_args *t = in->trainer;
    int world = in->cluster ? world_size(in) : 0;
    struct zs_lint_finding *f;

    if (ds->bf16_enabled.v && ds->fp16_enabled.v) {
        f = emit(r, "fp16-and-bf16", ZS_LINT_ERROR,
                 "fp16 and bf16 are both enabled", ds, ds->fp16_enabled.line,
                 ds->fp16_enabled.col,
                 "deepspeed/runtime/config.py (\"bfloat16 and fp16 modes "
                 "cannot be simultaneously enabled\")",
                 "enable only one of them (bf16 on Ampere and newer)");
        EXPLAIN(f, "DeepSpeed refuses to start when fp16.enabled and "
                   "bf16.enabled are both true");
    }
    if (world > 0 && ds->train_batch_size.from == ZS_DS_SET &&
        ds->train_batch_size.v != ds->train_micro_batch_size_per_gpu.v *
                                      ds->gradient_accumulation_steps.v *
                                      world) {
        f = emit(r, "batch-size-mismatch", ZS_LINT_ERROR,
                 "train_batch_size is not micro-batch x accumulation x ranks",
                 ds, ds->train_batch_size.line, ds->train_batch_size.col,
                 "deepspeed/runtime/config.py _batch_assertion", NULL);
        EXPLAIN(f,
                "train_batch_size=%lld but train_micro_batch_size_per_gpu %lld "
                "x gradient_accumulation_steps %lld x %d ranks = %lld; "
                "DeepSpeed asserts they are equal at start-up",
                (long long)ds->train_batch_size.v,
                (long long)ds->train_micro_batch_size_per_gpu.v,
                (long long)ds->gradient_accumulation_steps.v, world,
                (long long)(ds->train_micro_batch_size_per_gpu.v *
                            ds->gradient_accumulation_steps.v * world));
        FIX(f, "set \"train_batch_size\": \"auto\" (HF fills it) or to %lld",
            (long long)(ds->train_micro_batch_size_per_gpu.v *
                        ds->gradient_accumulation_steps.v * world));
        num(f, "train_batch_size", (double)ds->train_batch_size.v);
        num(f, "expected",
            (double)(ds->train_micro_batch_size_per_gpu.v *
                     ds->gradient_accumulation_steps.v * world));
    }
    if (t && t->present)
        trainer_mismatch(ds, t, r);
}

/* NVMe offload (ZeRO-Infinity, docs/nvme.md): what can be checked from the
 * config and the profile.  DeepSpeed 0.19.6 (edaa7221) sources in each. */

/* Each NVMe block's nvme_path: unset, or not on the local drives. */
static void nvme_paths(const struct zs_dsconfig *ds, struct zs_lint_report *r,
                       bool opt, bool prm)
{
    const struct zs_ds_offload *oo = &ds->offload_optimizer;
    const struct zs_ds_offload *op = &ds->offload_param;
    struct zs_lint_finding *f;
    for (int k = 0; k < 2; k++) {
        const struct zs_ds_offload *o = k ? op : oo;
        const char *blk = k ? "offload_param" : "offload_optimizer";
        if (!(k ? prm : opt))
            continue;
        if (!o->nvme_path[0]) {
            f = emit(r, "nvme-path-unset", ZS_LINT_ERROR,
                     "nvme offload without nvme_path", ds, o->line, o->col,
                     "DeepSpeed runtime/zero/offload_config.py:30,64 "
                     "(nvme_path: Optional[Path] = None); stage3.py:793 "
                     "_configure_tensor_swapping",
                     NULL);
            EXPLAIN(f,
                    "%s.device is nvme but nvme_path is unset (None): "
                    "DeepSpeed builds the swap folder with "
                    "os.path.join(nvme_path, 'zero_stage_3') and fails",
                    blk);
            FIX(f,
                "set %s.nvme_path to a directory on the node's local "
                "NVMe drives",
                blk);
        } else if (!strcmp(o->nvme_path, ZS_DS_NVME_PATH_EXAMPLE) ||
                   !strncmp(o->nvme_path, "/dev/shm", 8)) {
            bool shm = !strncmp(o->nvme_path, "/dev/shm", 8);
            f = emit(r, "nvme-path-not-nvme", ZS_LINT_WARNING,
                     shm ? "nvme_path is on tmpfs (host RAM), not NVMe"
                         : "nvme_path is DeepSpeed's example path",
                     ds, o->line, o->col,
                     "DeepSpeed docs/_pages/config-json.md:643 "
                     "(\"nvme_path\": \"/local_nvme\"); DeepNVMe blog "
                     "08-2024 (rates of local NVMe in RAID-0)",
                     "point nvme_path at the mount of the local NVMe drives "
                     "(one per node, e.g. a RAID-0 of them)");
            EXPLAIN(f,
                    shm ? "%s.nvme_path '%s' is tmpfs: the swap files live "
                          "in host RAM, which NVMe offload is meant to spare"
                        : "%s.nvme_path '%s' is the example of DeepSpeed's "
                          "config docs; the swap files must be on a "
                          "filesystem of the local NVMe drives to swap at "
                          "their rate",
                    blk, o->nvme_path);
        }
    }
}

/* aio's parallelism key under the other version's name. */
static void nvme_aio_key(const struct zs_dsconfig *ds, struct zs_lint_report *r)
{
    struct zs_lint_finding *f;

    /* aio's parallelism key was renamed in 0.16.4: each version reads
     * only its own name (aio_config.py get_aio_config) */
    bool renamed = zs_ds_aio_renamed(&ds->version);
    const struct zs_ds_int *other =
        renamed ? &ds->aio.thread_count : &ds->aio.intra_op_parallelism;
    if (other->from == ZS_DS_SET) {
        char v[16];
        snprintf(v, sizeof v, "%d.%d.%d", ds->version.major, ds->version.minor,
                 ds->version.patch);
        f = emit(r, "aio-key-ignored", ZS_LINT_WARNING,
                 renamed ? "aio.thread_count is ignored since 0.16.4"
                         : "aio.intra_op_parallelism is ignored before "
                           "0.16.4",
                 ds, other->line, other->col,
                 "DeepSpeed PR #7056 (commit c9da4892, 0.16.4: "
                 "\"Rename aio_thread_count to intra_op_parallelism\"); "
                 "runtime/swap_tensor/aio_config.py get_aio_config",
                 NULL);
        EXPLAIN(f,
                "DeepSpeed %s reads aio.%s only; %s = %lld has no "
                "effect and the aio handles run with %s = %lld",
                v, renamed ? "intra_op_parallelism" : "thread_count",
                renamed ? "thread_count" : "intra_op_parallelism",
                (long long)other->v,
                renamed ? "intra_op_parallelism" : "thread_count",
                (long long)zs_ds_aio_parallelism(ds));
        FIX(f, "rename the key to %s",
            renamed ? "intra_op_parallelism" : "thread_count");
    }
}

/* offload_optimizer.buffer_count against the swap pipeline's need. */
static void nvme_buffer_count(const struct zs_dsconfig *ds,
                              struct zs_lint_report *r)
{
    const struct zs_ds_offload *oo = &ds->offload_optimizer;
    int64_t need = 4 * (1 + (oo->pipeline_read.v ? 1 : 0) +
                        (oo->pipeline_write.v ? 1 : 0));
    struct zs_lint_finding *f;
    if (oo->buffer_count.v >= need)
        return;
    f = emit_too_small(r, ds, "nvme-buffer-count",
                       "offload_optimizer.buffer_count is too small for the "
                       "swap pipeline",
                       "offload_optimizer.buffer_count", &oo->buffer_count, oo,
                       need,
                       "DeepSpeed swap_tensor/partitioned_optimizer_swapper.py"
                       ":79-83; pipelined_optimizer_swapper.py:215-216 "
                       "(\"ran out of swap buffers, try increasing "
                       "'buffer_count'\")");
    EXPLAIN(f,
            "each sub-group read or written holds 4 swap buffers "
            "(fp32 param, exp_avg, exp_avg_sq, gradient)%s%s: %lld "
            "needed, buffer_count is %lld",
            oo->pipeline_read.v ? "; pipeline_read keeps the next "
                                  "sub-group's read in flight"
                                : "",
            oo->pipeline_write.v ? "; pipeline_write keeps one "
                                   "swap-out in flight"
                                 : "",
            (long long)need, (long long)oo->buffer_count.v);
}

/* The optimizer swapper's page-locked buffers against host RAM. */
static void nvme_swap_host(const struct zs_lint_input *in,
                           struct zs_lint_report *r)
{
    const struct zs_dsconfig *ds = in->ds;
    const struct zs_ds_offload *oo = &ds->offload_optimizer;
    struct zs_lint_finding *f;
    char b[4][24];
    int world, local;
    int64_t P, sub, aligned, rank, node, usable;
    if (!in->model || !in->cluster || in->model->params_total <= 0)
        return;
    world = world_size(in);
    local = in->cluster->node.gpus_per_node;
    if (world < 1 || local < 1 || local > world)
        return;
    P = (in->model->params_total + world - 1) / world;
    sub = subgroup_elems(ds, P);
    aligned = (sub + 255) / 256 * 256;
    rank = oo->buffer_count.v * aligned * 4;
    node = rank * local;
    usable = host_usable(in->cluster);
    if (node <= usable)
        return;
    f = emit(r, "nvme-swap-buffers-host", ZS_LINT_ERROR,
             "the NVMe swap buffers alone exceed host RAM", ds, oo->line,
             oo->col,
             "DeepSpeed swap_tensor/optimizer_utils.py"
             ":180-190 (largest_numel, SwapBufferManager); "
             "swap_tensor/utils.py:191 "
             "new_cpu_locked_tensor per buffer",
             "lower sub_group_size (the buffers scale with "
             "it) or buffer_count, or use more nodes");
    EXPLAIN(f,
            "buffer_count %lld x the largest sub-group "
            "(%lld fp32 elements, 1 KiB-aligned) = %s "
            "page-locked per rank, x %d local ranks = %s per "
            "node, against %s usable host RAM",
            (long long)oo->buffer_count.v, (long long)sub, gib(b[0], rank),
            local, gib(b[1], node), gib(b[2], usable));
}

/* offload_param.buffer_size against the largest parameter partition. */
static void nvme_param_buffer(const struct zs_lint_input *in,
                              struct zs_lint_report *r)
{
    const struct zs_dsconfig *ds = in->ds;
    const struct zs_ds_offload *op = &ds->offload_param;
    struct zs_lint_finding *f;
    int world = world_size(in);
    int64_t part;
    if (!in->model || !in->cluster || in->model->largest_leaf_params <= 0)
        return;
    /* zero.Init puts each swapped partition in one swap buffer and
     * asserts it fits: get_buffer, partitioned_param_swapper.py:357
     * (called from partition_parameters.py:1792-1795) */
    part =
        world >= 1 ? (in->model->largest_leaf_params + world - 1) / world : 0;
    if (part > op->buffer_size.v) {
        f = emit_too_small(r, ds, "nvme-param-buffer-size",
                           "offload_param.buffer_size is smaller than the "
                           "largest parameter partition",
                           "offload_param.buffer_size", &op->buffer_size, op,
                           part,
                           "DeepSpeed swap_tensor/partitioned_param_swapper"
                           ".py:357 (get_buffer assert); "
                           "zero/partition_parameters.py:1792-1795");
        EXPLAIN(f,
                "%s has %lld elements, %lld per rank over %d ranks; "
                "buffer_size is %lld: zero.Init fails with "
                "\"More elements %lld than buffer size %lld\"",
                in->model->largest_leaf_name,
                (long long)in->model->largest_leaf_params, (long long)part,
                world, (long long)op->buffer_size.v, (long long)part,
                (long long)op->buffer_size.v);
    }
}

static void rule_nvme(const struct zs_lint_input *in, struct zs_lint_report *r)
{
    const struct zs_dsconfig *ds = in->ds;
    const struct zs_ds_offload *oo = &ds->offload_optimizer;
    const struct zs_ds_offload *op = &ds->offload_param;
    bool opt = ds->zero_stage.v == 3 && oo->device.v == ZS_DS_DEV_NVME;
    bool prm = ds->zero_stage.v == 3 && op->device.v == ZS_DS_DEV_NVME;
    struct zs_lint_finding *f;

    if (!opt && !prm)
        return;
    f = emit(r, "nvme-async-io", ZS_LINT_INFO,
             "NVMe offload needs DeepSpeed's async_io op (libaio)", ds,
             opt ? oo->device.line : op->device.line,
             opt ? oo->device.col : op->device.col,
             "DeepSpeed op_builder/async_io.py:75-118 is_compatible, "
             "check_for_libaio_pkg; swap_tensor/"
             "partitioned_optimizer_swapper.py AsyncIOBuilder().load()",
             "install libaio-dev (apt) or libaio-devel (yum), then check that "
             "'ds_report' shows async_io [OKAY] (or DS_BUILD_AIO=1 pip install "
             "deepspeed)");
    EXPLAIN(f, "the swappers load AsyncIOBuilder().load() at start-up; "
               "without the libaio headers and .so the op is not compatible "
               "('async_io requires the dev libaio .so object and headers "
               "but these were not found') and start-up fails");
    nvme_paths(ds, r, opt, prm);
    nvme_aio_key(ds, r);
    if (opt) {
        nvme_buffer_count(ds, r);
        nvme_swap_host(in, r);
    }
    if (prm)
        nvme_param_buffer(in, r);
}

int zs_lint_run(const struct zs_lint_input *in, struct zs_lint_report *out,
                struct zs_err *err)
{
    memset(out, 0, sizeof *out);
    if (!in || !in->ds)
        return zs_err_set(err, ZS_EUSAGE, "lint needs a DeepSpeed config");
    rule_unknown_keys(in, out);
    rule_batch(in, out);
    rule_unscale_clip(in, out);
    rule_bnb(in, out);
    rule_offload_consistency(in, out);
    rule_overlap_comm(in, out);
    rule_cpu_checkpointing(in, out);
    rule_outside_zero_init(in, out);
    rule_no_zero_init_gpu(in, out);
    rule_host_ram(in, out);
    rule_offload_ratio_rounded(in, out);
    rule_nvme(in, out);
    rule_buckets(in, out);
    rule_max_steps(in, out);
    rule_auto_unresolved(in, out);
    return 0;
}
