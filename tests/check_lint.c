/*
 * check_lint.c — every lint rule fires on a config with the problem and is
 * silent on the fixed one; host-buffer arithmetic against hand-computed
 * values (reference §2).  Models and clusters are built by hand here, so
 * the suite needs neither the model library nor hardware profiles.
 */
#include "train/dsconfig.h"
#include "train/lint.h"
#include "util/alloc.h"
#include "util/units.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

/* A dense model of `params` parameters with hidden size h: one layer leaf
 * per projection is enough for the rules (they read totals, hidden and the
 * leaf sizes). */
static void mk_model(struct zs_model *m, const char *name, int64_t params,
                     int64_t h, int64_t layers)
{
    memset(m, 0, sizeof *m);
    strcpy(m->name, name);
    strcpy(m->resolved_from, name);
    m->hidden = h;
    m->n_layers = layers;
    m->params_total = params;
    m->params_lm = params;
    m->n_layer_leaves = 2;
    strcpy(m->layer[0].name, "input_layernorm");
    m->layer[0].kind = ZS_LEAF_NORM;
    m->layer[0].params = h;
    m->layer[0].n_tensors = 1;
    strcpy(m->layer[1].name, "mlp");
    m->layer[1].kind = ZS_LEAF_LINEAR;
    m->layer[1].params = (params - h * layers) / layers;
    m->layer[1].n_tensors = 1;
}

/* One DGX-class node: 8 GPUs of 80 GiB (1 GiB context + 1 GiB NCCL). */
static void mk_cluster(struct zs_cluster *c, int64_t host_ram, int64_t reserved)
{
    memset(c, 0, sizeof *c);
    strcpy(c->spec, "8xH100");
    c->nodes = 1;
    c->node.gpus_per_node = 8;
    c->node.host_ram_bytes = host_ram;
    c->node.host_reserved_bytes = reserved;
    strcpy(c->node.gpu.name, "H100-SXM-80GB");
    c->node.gpu.hbm_bytes = 80 * ZS_GiB;
    c->node.gpu.cuda_context_bytes = ZS_GiB;
    c->node.gpu.nccl_bytes = ZS_GiB;
}

struct fixture {
    struct zs_dsconfig ds;
    struct zs_ds_notes notes;
    struct zs_lint_input in;
    struct zs_lint_report rep;
};

static void load_ds(struct fixture *fx, const char *text, const char *version,
                    const struct zs_trainer_args *t, int64_t hidden, int world)
{
    struct zs_dsconfig_ctx ctx = {0};
    struct zs_err err = {0, ""};
    memset(fx, 0, sizeof *fx);
    if (version)
        ck_assert_int_eq(zs_ds_version_parse(version, &ctx.version, &err), 0);
    ctx.notes = &fx->notes;
    ctx.trainer = t;
    ctx.hidden_size = hidden;
    ctx.world_size = world;
    ck_assert_int_eq(zs_dsconfig_load_text("ds.json", text, strlen(text), &ctx,
                                           &fx->ds, &err),
                     0);
    fx->in.ds = &fx->ds;
    fx->in.notes = &fx->notes;
    fx->in.trainer = t;
    fx->in.version_given = version != NULL;
    fx->in.zero_init = true;
    fx->in.audio_output = -1;
}

static const struct zs_lint_finding *run(struct fixture *fx, const char *id)
{
    struct zs_err err = {0, ""};
    ck_assert_int_eq(zs_lint_run(&fx->in, &fx->rep, &err), 0);
    for (int i = 0; i < fx->rep.n; i++)
        if (strcmp(fx->rep.finding[i].id, id) == 0)
            return &fx->rep.finding[i];
    return NULL;
}

static double number(const struct zs_lint_finding *f, const char *name)
{
    for (int i = 0; i < f->n_numbers; i++)
        if (strcmp(f->numbers[i].name, name) == 0)
            return f->numbers[i].value;
    ck_abort_msg("no number '%s' in %s", name, f->id);
    return 0;
}

static const char *Z3_OFFLOAD =
    "{\"bf16\": {\"enabled\": true},\n"
    " \"zero_optimization\": {\"stage\": 3,\n"
    "   \"offload_optimizer\": {\"device\": \"cpu\", \"pin_memory\": true},\n"
    "   \"offload_param\": {\"device\": \"cpu\", \"pin_memory\": true}},\n"
    " \"gradient_clipping\": 1.0}";

/* ---- host buffers
 * ------------------------------------------------------------ */

/* 7B on 8 ranks of one node, offload both, pinned, bf16 (reference §2's
 * illustrative case): P = 875,000,000. */
START_TEST(test_host_bytes_7b)
{
    struct fixture fx;
    struct zs_lint_host_terms h;
    struct zs_err err = {0, ""};
    load_ds(&fx, Z3_OFFLOAD, NULL, NULL, 0, 0);
    ck_assert_int_eq(
        zs_lint_host_offload_bytes(7000000000LL, 8, 8, &fx.ds, &h, &err), 0);
    ck_assert_int_eq(h.partition_elems, 875000000LL);
    ck_assert_int_eq(h.flat16, 1750000000LL);
    ck_assert_int_eq(h.flat16_alloc, 2147483648LL); /* 2^31 */
    ck_assert_int_eq(h.master32, 3500000000LL);
    ck_assert_int_eq(h.grad32, 3500000000LL);
    ck_assert_int_eq(h.grad32_alloc, 4294967296LL); /* one sub-group: 2^32 */
    ck_assert_int_eq(h.accum16, 1750000000LL);
    ck_assert_int_eq(h.accum16_alloc, 2147483648LL);
    ck_assert_int_eq(h.adam, 7000000000LL);
    ck_assert_int_eq(h.rank_nominal, 17500000000LL); /* 20 B x P */
    ck_assert_int_eq(h.rank_alloc, 19089934592LL);
    ck_assert_int_eq(h.pinned_nominal, 7000000000LL);
    ck_assert_int_eq(h.pinned_alloc, 8589934592LL);
    ck_assert_int_eq(h.node_nominal, 140000000000LL);
    ck_assert_int_eq(h.node_alloc, 152719476736LL);
    ck_assert_int_eq(h.load_copy_rank, 28000000000LL);
    ck_assert_int_eq(h.node_load, 224000000000LL);
}
END_TEST

/* lint's host terms for a ZeRO-3 config with the optimizer on the CPU
 * (offload_optimizer keys `opt`, zero_optimization keys `zero` before it),
 * DeepSpeed `version`, params on 8 ranks of one node. */
static struct zs_lint_host_terms twin_host(const char *opt, const char *zero,
                                           const char *version, int64_t params)
{
    static struct fixture fx;
    struct zs_lint_host_terms h;
    struct zs_err err = {0, ""};
    char text[400];
    snprintf(text, sizeof text,
             "{\"bf16\": {\"enabled\": true}, \"zero_optimization\": "
             "{\"stage\": 3, %s\"offload_optimizer\": {\"device\": \"cpu\", "
             "%s}}}",
             zero, opt);
    load_ds(&fx, text, version, NULL, 0, 0);
    ck_assert_int_eq(zs_lint_host_offload_bytes(params, 8, 8, &fx.ds, &h, &err),
                     0);
    return h;
}

/* 72B, 9e9 elements per rank: nine sub-groups of 1e9 elements, each fp32
 * grad rounded 4e9 -> 2^32. */
START_TEST(test_host_bytes_subgroups)
{
    struct fixture fx;
    struct zs_lint_host_terms h;
    struct zs_err err = {0, ""};
    load_ds(&fx, Z3_OFFLOAD, NULL, NULL, 0, 0);
    ck_assert_int_eq(
        zs_lint_host_offload_bytes(72000000000LL, 8, 8, &fx.ds, &h, &err), 0);
    ck_assert_int_eq(h.partition_elems, 9000000000LL);
    ck_assert_int_eq(h.grad32_alloc, 9 * 4294967296LL);
    ck_assert_int_eq(h.flat16_alloc, 34359738368LL); /* 18e9 -> 2^35 */
    ck_assert_int_eq(h.rank_nominal, 180000000000LL);
    /* offload optimizer only, not pinned: 4 + 4 + 2 + 8 = 18 B, no rounding. */
    load_ds(
        &fx,
        "{\"bf16\": {\"enabled\": true}, \"zero_optimization\": {\"stage\": 3, "
        "\"offload_optimizer\": {\"device\": \"cpu\", \"pin_memory\": false}}}",
        NULL, NULL, 0, 0);
    ck_assert_int_eq(
        zs_lint_host_offload_bytes(72000000000LL, 8, 8, &fx.ds, &h, &err), 0);
    ck_assert_int_eq(h.flat16, 0);
    ck_assert_int_eq(h.rank_nominal, 162000000000LL);
    ck_assert_int_eq(h.rank_alloc, h.rank_nominal);
    ck_assert_int_eq(h.pinned_alloc, 0);
    /* Twin-Flow ratio 0.5 on 1e9 elements per rank: one sub-group of 1e9,
     * and DeepSpeed maps whole sub-groups: from 0.18.0 the CPU takes
     * 1 - int((1 - 0.5) x 1) = 1 of 1, so the ratio changes nothing. */
    h = twin_host("\"ratio\": 0.5, \"pin_memory\": false", "", "0.19.6",
                  8000000000LL);
    ck_assert_int_eq(h.cpu_elems, 1000000000LL);
    /* sub-groups of 1e8: ten, the last five on the CPU: 5e8 elements at
     * 4 + 4 + 8 B, the bf16 accumulation buffer 2 B x 1e9 whole */
    h = twin_host("\"ratio\": 0.5, \"pin_memory\": false",
                  "\"sub_group_size\": 1e8, ", "0.19.6", 8000000000LL);
    ck_assert_int_eq(h.cpu_elems, 500000000LL);
    ck_assert_int_eq(h.rank_nominal, 500000000LL * 16 + 1000000000LL * 2);
    /* ratio 0.3 on 9.5e8 elements (nine of 1e8 and one of 5e7): 0.17.0
     * takes the first int(0.3 x 10) = 3 (3e8), 0.19.6 the last
     * 10 - int(0.7 x 10) = 10 - 7 = 3, the short one among them
     * (2e8 + 5e7) */
    h = twin_host("\"ratio\": 0.3, \"pin_memory\": true",
                  "\"sub_group_size\": 1e8, ", "0.17.0", 7600000000LL);
    ck_assert_int_eq(h.cpu_elems, 300000000LL);
    ck_assert_int_eq(h.grad32_alloc, 3 * 536870912LL); /* 4e8 B -> 2^29 */
    h = twin_host("\"ratio\": 0.3, \"pin_memory\": true",
                  "\"sub_group_size\": 1e8, ", "0.19.6", 7600000000LL);
    ck_assert_int_eq(h.cpu_elems, 250000000LL);
    ck_assert_int_eq(h.grad32_alloc, 2 * 536870912LL + 268435456LL);
}
END_TEST

START_TEST(test_pow2)
{
    ck_assert_int_eq(zs_lint_pow2_ceil(0), 0);
    ck_assert_int_eq(zs_lint_pow2_ceil(1), 1);
    ck_assert_int_eq(zs_lint_pow2_ceil(3), 4);
    ck_assert_int_eq(zs_lint_pow2_ceil(4096), 4096);
    ck_assert_int_eq(zs_lint_pow2_ceil(4097), 8192);
    ck_assert_int_eq(zs_lint_pow2_ceil(((int64_t)1 << 62) + 1),
                     ((int64_t)1 << 62) + 1);
    ck_assert(zs_lint_is_bnb_optimizer("adamw_bnb_8bit"));
    ck_assert(zs_lint_is_bnb_optimizer("paged_adamw_32bit"));
    ck_assert(zs_lint_is_bnb_optimizer("Lion_8bit"));
    ck_assert(!zs_lint_is_bnb_optimizer("adamw_torch"));
    ck_assert(!zs_lint_is_bnb_optimizer(NULL));
}
END_TEST

START_TEST(test_host_bytes_bad)
{
    struct fixture fx;
    struct zs_lint_host_terms h;
    struct zs_err err = {0, ""};
    load_ds(&fx, Z3_OFFLOAD, NULL, NULL, 0, 0);
    ck_assert_int_eq(zs_lint_host_offload_bytes(0, 8, 8, &fx.ds, &h, &err),
                     ZS_EUSAGE);
    ck_assert_str_eq(err.msg, "invalid params 0: must be in [1, 1e15]");
    ck_assert_int_eq(zs_lint_host_offload_bytes(100, 0, 1, &fx.ds, &h, &err),
                     ZS_EUSAGE);
    ck_assert_str_eq(err.msg, "invalid world size 0: must be in [1, 1000000]");
    ck_assert_int_eq(zs_lint_host_offload_bytes(100, 8, 9, &fx.ds, &h, &err),
                     ZS_EUSAGE);
    ck_assert_str_eq(err.msg, "invalid local ranks 9: must be in [1, 8]");
    ck_assert_int_eq(zs_lint_run(NULL, &fx.rep, &err), ZS_EUSAGE);
    ck_assert_str_eq(err.msg, "lint needs a DeepSpeed config");
}
END_TEST

/* ---- rules
 * --------------------------------------------------------------------- */

START_TEST(test_unscale_clip)
{
    struct fixture fx;
    const struct zs_lint_finding *f;
    load_ds(&fx, Z3_OFFLOAD, "0.14.2", NULL, 0, 0);
    f = run(&fx, "unscale-clip-device");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->severity, ZS_LINT_ERROR);
    ck_assert_str_eq(f->title,
                     "DeepSpeed 0.14.1-0.14.2 fails in unscale_and_clip_grads "
                     "with optimizer offload and clipping");
    ck_assert_str_eq(f->where, "ds.json:5:2");
    ck_assert_str_eq(f->source,
                     "DeepSpeed #5422, #5469, #5538, #5634; cause PR #5256 "
                     "(v0.14.1); fix PR #5461, released in v0.14.3 (reference "
                     "zero3-offload-mechanics.md §4)");
    ck_assert_int_eq(fx.rep.n_error, 1);
    /* 0.14.1 too; 0.14.0 and 0.14.3 are clean; no clipping is clean. */
    load_ds(&fx, Z3_OFFLOAD, "0.14.1", NULL, 0, 0);
    ck_assert_ptr_nonnull(run(&fx, "unscale-clip-device"));
    load_ds(&fx, Z3_OFFLOAD, "0.14.3", NULL, 0, 0);
    ck_assert_ptr_null(run(&fx, "unscale-clip-device"));
    ck_assert_int_eq(fx.rep.n_error, 0);
    load_ds(&fx, Z3_OFFLOAD, "0.14.0", NULL, 0, 0);
    ck_assert_ptr_null(run(&fx, "unscale-clip-device"));
    load_ds(&fx,
            "{\"zero_optimization\": {\"stage\": 3, \"offload_optimizer\": "
            "{\"device\": \"cpu\"}},"
            " \"gradient_clipping\": 0}",
            "0.14.2", NULL, 0, 0);
    ck_assert_ptr_null(run(&fx, "unscale-clip-device"));
    /* "auto" without trainer args: HF's max_grad_norm default is 1.0. */
    load_ds(&fx,
            "{\"zero_optimization\": {\"stage\": 3, \"offload_optimizer\": "
            "{\"device\": \"cpu\"}},"
            " \"gradient_clipping\": \"auto\"}",
            "0.14.2", NULL, 0, 0);
    ck_assert_ptr_nonnull(run(&fx, "unscale-clip-device"));
}
END_TEST

START_TEST(test_bnb)
{
    struct fixture fx;
    struct zs_trainer_args t;
    const struct zs_lint_finding *f;
    const char *noopt = "{\"zero_optimization\": {\"stage\": 3, "
                        "\"offload_optimizer\": {\"device\": \"cpu\"}}}";

    load_ds(&fx, noopt, NULL, NULL, 0, 0);
    fx.in.optimizer = "adamw_bnb_8bit";
    f = run(&fx, "bnb-optimizer-offload");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->severity, ZS_LINT_ERROR);
    ck_assert_str_eq(f->title,
                     "bitsandbytes 8-bit/paged optimizer under CPU offload: "
                     "\"Expected a cuda device, but got: cpu\"");
    ck_assert_str_eq(f->where, "ds.json:1:58");
    ck_assert_ptr_nonnull(
        strstr(f->explanation, "--optimizer is 'adamw_bnb_8bit'"));
    /* Fixed: a plain optimizer. */
    fx.in.optimizer = "adamw_torch";
    ck_assert_ptr_null(run(&fx, "bnb-optimizer-offload"));
    /* Fixed: no offload. */
    load_ds(&fx, "{\"zero_optimization\": {\"stage\": 3}}", NULL, NULL, 0, 0);
    fx.in.optimizer = "paged_adamw_8bit";
    ck_assert_ptr_null(run(&fx, "bnb-optimizer-offload"));
    /* From the trainer's optim; a DeepSpeed optimizer block overrides it. */
    zs_trainer_args_defaults(&t);
    t.present = true;
    strcpy(t.optim, "paged_adamw_32bit");
    load_ds(&fx, noopt, NULL, &t, 0, 0);
    ck_assert_ptr_nonnull(run(&fx, "bnb-optimizer-offload"));
    load_ds(&fx,
            "{\"optimizer\": {\"type\": \"AdamW\"}, \"zero_optimization\": "
            "{\"stage\": 3, "
            "\"offload_optimizer\": {\"device\": \"cpu\"}}}",
            NULL, &t, 0, 0);
    ck_assert_ptr_null(run(&fx, "bnb-optimizer-offload"));
    f = run(&fx, "bnb-optimizer-ignored");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->severity, ZS_LINT_INFO);
}
END_TEST

START_TEST(test_outside_zero_init)
{
    struct fixture fx;
    struct zs_model m;
    struct zs_cluster c;
    const struct zs_lint_finding *f;

    mk_model(&m, "qwen2.5-omni-7b", 7000000000LL, 3584, 28);
    m.n_extra = 1;
    strcpy(m.extra[0].name, "talker");
    m.extra[0].params = 1000000000LL;
    m.extra[0].placement_default = ZS_PLACE_CPU;
    mk_cluster(&c, 2 * ZS_TiB, 0);
    load_ds(&fx, "{\"zero_optimization\": {\"stage\": 3}}", NULL, NULL, 3584,
            8);
    fx.in.model = &m;
    fx.in.cluster = &c;
    f = run(&fx, "module-outside-zero-init");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->severity, ZS_LINT_ERROR);
    ck_assert_str_eq(
        f->explanation,
        "qwen2.5-omni-7b's 'talker' (1000000000 parameters) is constructed "
        "outside "
        "deepspeed.zero.Init, so ZeRO-3 never partitions it: each of 8 local "
        "rank(s) "
        "keeps a full fp32 copy on the CPU (3.73 GiB per rank, 29.8 GiB per "
        "node) and "
        "the first forward through it mixes CPU weights with CUDA activations");
    ck_assert(number(f, "host_bytes_per_node") == 32e9);
    /* Fixed: audio output off (ENABLE_AUDIO_OUTPUT=0). */
    fx.in.audio_output = 0;
    ck_assert_ptr_null(run(&fx, "module-outside-zero-init"));
    /* Sharded placement is fine. */
    fx.in.audio_output = -1;
    m.extra[0].placement_default = ZS_PLACE_SHARDED;
    ck_assert_ptr_null(run(&fx, "module-outside-zero-init"));
    fx.in.audio_output = 1;
    ck_assert_ptr_nonnull(run(&fx, "module-outside-zero-init"));
}
END_TEST

/* A bf16 ZeRO-3 config (`zero` the zero_optimization object's body) for a
 * model of `params` on one 8xH100 node with 2 TiB, loaded without
 * zero.Init. */
static void no_zero_init_case(struct fixture *fx, struct zs_model *m,
                              struct zs_cluster *c, const char *name,
                              int64_t params, int64_t hidden, int layers,
                              const char *zero)
{
    char text[256];
    snprintf(text, sizeof text,
             "{\"bf16\": {\"enabled\": true}, \"zero_optimization\": "
             "{\"stage\": 3%s}}",
             zero);
    mk_model(m, name, params, hidden, (int)layers);
    mk_cluster(c, 2 * ZS_TiB, 0);
    load_ds(fx, text, NULL, NULL, hidden, 8);
    fx->in.model = m;
    fx->in.cluster = c;
    fx->in.zero_init = false;
}

START_TEST(test_no_zero_init)
{
    struct fixture fx;
    struct zs_model m;
    struct zs_cluster c;
    const struct zs_lint_finding *f;

    no_zero_init_case(&fx, &m, &c, "qwen2.5-72b", 72000000000LL, 8192, 80, "");
    f = run(&fx, "no-zero-init-host-copies");
    ck_assert_ptr_nonnull(f);
    /* 72e9 x 4 B x 8 ranks = 2.304e12 B > 2 TiB (2.199e12). */
    ck_assert_int_eq(f->severity, ZS_LINT_ERROR);
    ck_assert(number(f, "load_bytes_per_node") == 2304e9);
    ck_assert_str_eq(f->explanation, "without deepspeed.zero.Init each of the "
                                     "8 local ranks materialises all "
                                     "72000000000 parameters on the CPU before "
                                     "partitioning: 268 GiB per rank "
                                     "(4 B x params, fp32) x 8 = 2.10 TiB per "
                                     "node at load, against 2.00 TiB usable "
                                     "host RAM (2.00 TiB installed - 0 B "
                                     "reserved): the node runs out of memory "
                                     "while loading");
    /* the GPU side: 72e9 x 2 B = 144e9 B on each GPU at initialize, above
     * the 78 GiB usable (80 less 1 + 1 GiB) */
    f = run(&fx, "no-zero-init-gpu-whole-model");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->severity, ZS_LINT_ERROR);
    ck_assert(number(f, "model_bytes") == 144e9);
    ck_assert(number(f, "gpu_usable_bytes") == 78.0 * ZS_GiB);
    ck_assert_str_eq(f->explanation,
                     "without deepspeed.zero.Init, deepspeed.initialize moves "
                     "all 72000000000 parameters to each GPU before ZeRO-3 "
                     "partitions them: 134 GiB at 2 B per parameter against "
                     "78.0 GiB usable on H100-SXM-80GB: out of memory at "
                     "initialize");
    /* Fixed: zero.Init on. */
    fx.in.zero_init = true;
    ck_assert_ptr_null(run(&fx, "no-zero-init-host-copies"));
    /* A 7B fits, but N copies without zero.Init is still worth a warning. */
    mk_model(&m, "qwen2.5-7b", 7000000000LL, 3584, 28);
    fx.in.zero_init = false;
    f = run(&fx, "no-zero-init-host-copies");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->severity, ZS_LINT_WARNING);
}
END_TEST

/* A 7B model without zero.Init fits on the GPU at initialize (7e9 x 2 B =
 * 14e9 B of 78 GiB): nothing to say with the parameters on the GPU (the
 * cache is emptied), a warning with offload_param (the blocks stay
 * reserved). */
START_TEST(test_no_zero_init_gpu_fits)
{
    struct fixture fx;
    struct zs_model m;
    struct zs_cluster c;
    const struct zs_lint_finding *f;

    no_zero_init_case(&fx, &m, &c, "qwen2.5-7b", 7000000000LL, 3584, 28, "");
    ck_assert_ptr_null(run(&fx, "no-zero-init-gpu-whole-model"));
    no_zero_init_case(&fx, &m, &c, "qwen2.5-7b", 7000000000LL, 3584, 28,
                      ", \"offload_param\": {\"device\": \"cpu\"}");
    f = run(&fx, "no-zero-init-gpu-whole-model");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->severity, ZS_LINT_WARNING);
    ck_assert(number(f, "model_bytes") == 14e9);
    fx.in.zero_init = true;
    ck_assert_ptr_null(run(&fx, "no-zero-init-gpu-whole-model"));
}
END_TEST

START_TEST(test_host_ram_offload)
{
    struct fixture fx;
    struct zs_model m;
    struct zs_cluster c;
    const struct zs_lint_finding *f;

    mk_model(&m, "qwen2.5-72b", 72000000000LL, 8192, 80);
    mk_cluster(&c, ZS_TiB, 0);
    load_ds(&fx, Z3_OFFLOAD, NULL, NULL, 8192, 8);
    fx.in.model = &m;
    fx.in.cluster = &c;
    f = run(&fx, "host-ram-offload");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->severity, ZS_LINT_ERROR);
    ck_assert_str_eq(f->title, "host RAM is too small for the offload buffers");
    /* 20 B x 9e9 x 8 = 1.44e12 > 1 TiB. */
    ck_assert(number(f, "node_nominal_bytes") == 1440e9);
    ck_assert(number(f, "rank_alloc_bytes") ==
              34359738368.0 + 36e9 + 9 * 4294967296.0 + 34359738368.0 + 72e9);
    ck_assert_str_eq(f->explanation,
                     "per rank (P = 9000000000 partition elements of "
                     "72000000000 params / 8 ranks): "
                     "bf16 flat params 16.8 GiB (pinned) + fp32 master 33.5 "
                     "GiB + fp32 grads 33.5 GiB "
                     "(pinned) + grad accumulation 16.8 GiB (pinned) + Adam "
                     "states 67.1 GiB (at the "
                     "first step) = 168 GiB nominal, 201 GiB as allocated with "
                     "pinned power-of-two "
                     "rounding; x 8 local ranks = 1.31 TiB per node (1.57 TiB "
                     "allocated), against "
                     "1.00 TiB usable host RAM");
    ck_assert_ptr_null(run(&fx, "pinned-rounding"));
    /* Fixed: 2 TiB per node. */
    mk_cluster(&c, 2 * ZS_TiB, 0);
    ck_assert_ptr_null(run(&fx, "host-ram-offload"));
    ck_assert_ptr_null(run(&fx, "pinned-rounding"));
}
END_TEST

/* The offload-ratio-rounded finding for a ZeRO-3 CPU-offload config with
 * zero_optimization keys `zero` and offload_optimizer.ratio `ratio`,
 * DeepSpeed 0.19.6, on model m (NULL: none) and cluster c; NULL when none. */
static const struct zs_lint_finding *ratio_rounded(const struct zs_model *m,
                                                   const struct zs_cluster *c,
                                                   const char *zero,
                                                   const char *ratio)
{
    static struct fixture fx;
    char text[400];
    snprintf(text, sizeof text,
             "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": "
             "true}, \"zero_optimization\": {\"stage\": 3, %s"
             "\"offload_optimizer\": {\"device\": \"cpu\", \"ratio\": %s}}}",
             zero, ratio);
    load_ds(&fx, text, "0.19.6", NULL, 8192, 8);
    fx.in.model = m;
    fx.in.cluster = c;
    return run(&fx, "offload-ratio-rounded");
}

/* Twin-Flow's ratio applied to whole sub-groups (config.c
 * zs_twin_cpu_groups): 72e9 params on 8 ranks, 9e9 elements each, nine
 * sub-groups of 1e9.  At ratio 0.9 DeepSpeed 0.19.6 puts
 * 9 - int(0.09999999999999998 x 9) = 9 - 0 = 9 on the CPU: nothing moves.
 * At 0.5, 9 - int(4.5) = 5: an effective 0.556, more than 0.05 off.  With
 * sub_group_size 1e8 (90 sub-groups), 90 - 45 = 45: exact, no finding. */
START_TEST(test_offload_ratio_rounded)
{
    struct zs_model m;
    struct zs_cluster c;
    const struct zs_lint_finding *f;

    mk_model(&m, "qwen2.5-72b", 72000000000LL, 8192, 80);
    mk_cluster(&c, 2 * ZS_TiB, 0);
    f = ratio_rounded(&m, &c, "", "0.9");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->severity, ZS_LINT_WARNING);
    ck_assert_str_eq(f->title, "offload_optimizer.ratio moves no optimizer "
                               "state to the GPU");
    ck_assert_str_eq(f->explanation,
                     "each rank's partition of 9000000000 elements "
                     "(72000000000 params / 8 ranks) makes 9 optimizer "
                     "sub-groups of sub_group_size 1000000000; DeepSpeed "
                     "0.19.6 puts 9 of them on the CPU at ratio 0.9 (the last "
                     "n - int((1 - ratio) n)), an effective ratio of 1");
    ck_assert(number(f, "cpu_subgroups") == 9);
    f = ratio_rounded(&m, &c, "", "0.5");
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(f->title, "offload_optimizer.ratio is rounded to whole "
                               "sub-groups");
    ck_assert(number(f, "cpu_subgroups") == 5);
    ck_assert_double_eq_tol(number(f, "effective_ratio"), 5.0 / 9.0, 1e-12);
    ck_assert_ptr_null(
        ratio_rounded(&m, &c, "\"sub_group_size\": 1e8, ", "0.5"));
    /* without the model the partition is unknown: no finding */
    ck_assert_ptr_null(ratio_rounded(NULL, &c, "", "0.9"));
}
END_TEST

START_TEST(test_pinned_rounding)
{
    struct fixture fx;
    struct zs_model m;
    struct zs_cluster c;
    const struct zs_lint_finding *f;

    /* Nominal 1.44e12 fits in 1.5 TiB (1.649e12); allocated 1.723e12 does not.
     */
    mk_model(&m, "qwen2.5-72b", 72000000000LL, 8192, 80);
    mk_cluster(&c, 3 * ZS_TiB / 2, 0);
    load_ds(&fx, Z3_OFFLOAD, NULL, NULL, 8192, 8);
    fx.in.model = &m;
    fx.in.cluster = &c;
    f = run(&fx, "pinned-rounding");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->severity, ZS_LINT_ERROR);
    ck_assert_str_eq(f->where, "ds.json:3:43");
    ck_assert_ptr_null(run(&fx, "host-ram-offload"));
    /* Fixed: optimizer buffers not pinned (the bf16 flat stays pinned):
     * (34.36e9 + 36e9 + 36e9 + 18e9 + 72e9) x 8 = 1.571e12 fits. */
    load_ds(
        &fx,
        "{\"bf16\": {\"enabled\": true}, \"zero_optimization\": {\"stage\": 3, "
        "\"offload_optimizer\": {\"device\": \"cpu\", \"pin_memory\": false}, "
        "\"offload_param\": {\"device\": \"cpu\"}}}",
        "0.19.4", NULL, 8192, 8);
    fx.in.model = &m;
    fx.in.cluster = &c;
    ck_assert_ptr_null(run(&fx, "pinned-rounding"));
    ck_assert_ptr_null(run(&fx, "host-ram-offload"));
    ck_assert_int_eq(fx.rep.n_error, 0);
}
END_TEST

START_TEST(test_max_steps)
{
    struct fixture fx;
    struct zs_trainer_args t;
    struct zs_cluster c;
    const struct zs_lint_finding *f;

    zs_trainer_args_defaults(&t);
    t.present = true;
    strcpy(t.path, "args.json");
    t.per_device_train_batch_size = 1;
    t.gradient_accumulation_steps = 8;
    t.max_steps = 32;
    strcpy(t.max_steps_key, "max_iters");
    t.dataset_samples = 10000;
    mk_cluster(&c, 2 * ZS_TiB, 0);
    load_ds(&fx,
            "{\"train_micro_batch_size_per_gpu\": \"auto\", "
            "\"gradient_accumulation_steps\": \"auto\"}",
            NULL, &t, 0, 8);
    fx.in.cluster = &c;
    f = run(&fx, "max-steps-short");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->severity, ZS_LINT_WARNING);
    /* ceil(10000 / 8) = 1250 micro-batches per rank, / 8 = 156 steps. */
    ck_assert(number(f, "steps_per_epoch") == 156);
    ck_assert_str_eq(f->explanation, "max_iters=32 overrides the epoch count: "
                                     "one epoch of 10000 samples is 156 "
                                     "optimizer steps (micro-batch 1 x 8 ranks "
                                     "x accumulation 8 = 64 samples per "
                                     "step), so training ends after 20.5% of "
                                     "one epoch instead of 3 epoch(s)");
    /* Fixed: no step limit, or one beyond the epoch. */
    t.max_steps = -1;
    ck_assert_ptr_null(run(&fx, "max-steps-short"));
    t.max_steps = 156;
    ck_assert_ptr_null(run(&fx, "max-steps-short"));
}
END_TEST

START_TEST(test_offload_consistency)
{
    struct fixture fx;
    const struct zs_lint_finding *f;

    load_ds(&fx,
            "{\"zero_optimization\": {\"stage\": 2, \"offload_param\": "
            "{\"device\": \"cpu\"}}}",
            NULL, NULL, 0, 0);
    f = run(&fx, "offload-param-stage");
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(f->title, "offload_param needs ZeRO stage 3");
    load_ds(&fx,
            "{\"zero_optimization\": {\"stage\": 3, \"offload_param\": "
            "{\"device\": \"cpu\"}, "
            "\"offload_optimizer\": {\"device\": \"cpu\"}}}",
            NULL, NULL, 0, 0);
    ck_assert_ptr_null(run(&fx, "offload-param-stage"));
    ck_assert_ptr_null(run(&fx, "offload-param-only"));
    ck_assert_int_eq(fx.rep.n, 0);

    load_ds(&fx,
            "{\"zero_optimization\": {\"stage\": 3, \"offload_param\": "
            "{\"device\": \"cpu\"}}}",
            NULL, NULL, 0, 0);
    ck_assert_ptr_nonnull(run(&fx, "offload-param-only"));

    load_ds(&fx,
            "{\"zero_optimization\": {\"stage\": 0, \"offload_optimizer\": "
            "{\"device\": \"cpu\"}}}",
            NULL, NULL, 0, 0);
    ck_assert_ptr_nonnull(run(&fx, "offload-optimizer-stage"));

    load_ds(&fx,
            "{\"zero_optimization\": {\"stage\": 3, \"offload_optimizer\": "
            "{\"ratio\": 0.3}}}",
            NULL, NULL, 0, 0);
    f = run(&fx, "offload-ratio-ignored");
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(
        f->explanation,
        "ratio=0.3 (partial \"Twin-Flow\" offload) applies only to "
        "ZeRO-3 with offload_optimizer.device cpu; here stage=3, device=none");
    load_ds(&fx,
            "{\"zero_optimization\": {\"stage\": 3, \"offload_optimizer\": "
            "{\"device\": \"cpu\", "
            "\"ratio\": 0.3}}}",
            NULL, NULL, 0, 0);
    ck_assert_ptr_null(run(&fx, "offload-ratio-ignored"));

    load_ds(&fx,
            "{\"zero_optimization\": {\"stage\": 3, \"offload_optimizer\": "
            "{\"pin_memory\": true}}}",
            NULL, NULL, 0, 0);
    f = run(&fx, "pin-memory-ignored");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->severity, ZS_LINT_INFO);
}
END_TEST

/* ZeRO-1/2 without overlap_comm reduces on the compute stream; the second
 * bucket overlap_comm costs is reduce_bucket_size x 2 B: 2e8 x 2 B =
 * 400000000 B = 381 MiB.  Stage 3 defaults it on, so no finding. */
START_TEST(test_overlap_comm)
{
    struct fixture fx;
    const struct zs_lint_finding *f;
    load_ds(&fx,
            "{\"zero_optimization\": {\"stage\": 2, "
            "\"reduce_bucket_size\": 2e8}}",
            NULL, NULL, 0, 0);
    f = run(&fx, "overlap-comm-off");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->severity, ZS_LINT_INFO);
    ck_assert_str_eq(f->explanation,
                     "overlap_comm is unset (DeepSpeed's default: false below "
                     "stage 3) with stage 2: every gradient bucket's divide, "
                     "flat copy, collective and copy back run on the current "
                     "stream, so the backward waits for each; with "
                     "overlap_comm true they run on DeepSpeed's reduction "
                     "stream and a second bucket of 381 MiB is allocated "
                     "(reduce_bucket_size x 2 B)");
    load_ds(&fx,
            "{\"zero_optimization\": {\"stage\": 1, \"overlap_comm\": "
            "false}}",
            NULL, NULL, 0, 0);
    f = run(&fx, "overlap-comm-off");
    ck_assert_ptr_nonnull(f);
    ck_assert(strncmp(f->explanation, "overlap_comm is false with stage 1",
                      34) == 0);
    load_ds(&fx,
            "{\"zero_optimization\": {\"stage\": 2, \"overlap_comm\": "
            "true}}",
            NULL, NULL, 0, 0);
    ck_assert_ptr_null(run(&fx, "overlap-comm-off"));
    load_ds(&fx, "{\"zero_optimization\": {\"stage\": 3}}", NULL, NULL, 0,
            0);
    ck_assert_ptr_null(run(&fx, "overlap-comm-off"));
}
END_TEST

START_TEST(test_buckets)
{
    struct fixture fx;
    struct zs_cluster c;
    struct zs_model m;
    const struct zs_lint_finding *f;

    mk_cluster(&c, 2 * ZS_TiB, 0);
    /* 6e9-element bucket: 12 GB IPG + 12 GB reduce-scatter copy + 0.2 GB
     * prefetch = 24.2e9 B > 78 GiB / 4 (20.9e9). */
    load_ds(
        &fx,
        "{\"bf16\": {\"enabled\": true}, \"zero_optimization\": {\"stage\": 3, "
        "\"reduce_bucket_size\": 6e9}}",
        NULL, NULL, 0, 8);
    fx.in.cluster = &c;
    f = run(&fx, "buckets-gpu-peak");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->severity, ZS_LINT_WARNING);
    ck_assert(number(f, "total_bytes") == 24.2e9);
    ck_assert(number(f, "gpu_usable_bytes") == 78.0 * ZS_GiB);
    ck_assert_str_eq(f->where, "ds.json:1:63");
    /* Fixed: "auto" for h = 8192 -> 67108864 elements. */
    load_ds(
        &fx,
        "{\"bf16\": {\"enabled\": true}, \"zero_optimization\": {\"stage\": 3, "
        "\"reduce_bucket_size\": \"auto\"}}",
        NULL, NULL, 8192, 8);
    fx.in.cluster = &c;
    ck_assert_ptr_null(run(&fx, "buckets-gpu-peak"));
    /* A persistence threshold above every tensor keeps the whole 72B model
     * gathered on every GPU: an error. */
    mk_model(&m, "qwen2.5-72b", 72000000000LL, 8192, 80);
    load_ds(
        &fx,
        "{\"bf16\": {\"enabled\": true}, \"zero_optimization\": {\"stage\": 3, "
        "\"stage3_param_persistence_threshold\": 1e12}}",
        NULL, NULL, 8192, 8);
    fx.in.cluster = &c;
    fx.in.model = &m;
    f = run(&fx, "buckets-gpu-peak");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->severity, ZS_LINT_ERROR);
    ck_assert(number(f, "persistent_params") == 72e9);
}
END_TEST

START_TEST(test_unknown_and_batch)
{
    struct fixture fx;
    struct zs_trainer_args t;
    struct zs_cluster c;
    const struct zs_lint_finding *f;

    load_ds(&fx,
            "{\"zero_optimization\": {\"stage\": 3, "
            "\"stage3_prefetch_bucket\": 1},\n"
            " \"gradient_acumulation_steps\": 4}",
            NULL, NULL, 0, 0);
    f = run(&fx, "ds-unknown-key");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->severity, ZS_LINT_ERROR);
    ck_assert_str_eq(f->title,
                     "unknown key 'zero_optimization.stage3_prefetch_bucket'");
    ck_assert_str_eq(f->where, "ds.json:1:36");
    ck_assert_str_eq(
        f->explanation,
        "'zero_optimization.stage3_prefetch_bucket' is not a DeepSpeed "
        "setting; this block is validated with extra=\"forbid\", so "
        "DeepSpeed refuses to start (did you mean "
        "'stage3_prefetch_bucket_size'?)");
    ck_assert_str_eq(f->fix, "rename it to 'stage3_prefetch_bucket_size'");
    ck_assert_int_eq(fx.rep.n_error, 1);
    ck_assert_int_eq(fx.rep.n_warning, 1);
    ck_assert_str_eq(fx.rep.finding[1].title,
                     "unknown key 'gradient_acumulation_steps'");

    mk_cluster(&c, 2 * ZS_TiB, 0);
    load_ds(&fx,
            "{\"train_batch_size\": 32, \"train_micro_batch_size_per_gpu\": 2, "
            "\"gradient_accumulation_steps\": 4}",
            NULL, NULL, 0, 8);
    fx.in.cluster = &c;
    f = run(&fx, "batch-size-mismatch");
    ck_assert_ptr_nonnull(f);
    ck_assert(number(f, "expected") == 64);
    load_ds(&fx,
            "{\"train_batch_size\": 64, \"train_micro_batch_size_per_gpu\": 2, "
            "\"gradient_accumulation_steps\": 4}",
            NULL, NULL, 0, 8);
    fx.in.cluster = &c;
    ck_assert_ptr_null(run(&fx, "batch-size-mismatch"));

    zs_trainer_args_defaults(&t);
    t.present = true;
    t.per_device_train_batch_size = 4;
    load_ds(
        &fx,
        "{\"train_micro_batch_size_per_gpu\": 2, \"gradient_clipping\": 1.0}",
        NULL, &t, 0, 0);
    f = run(&fx, "trainer-mismatch");
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(
        f->explanation,
        "the HF Trainer stops with \"Please correct the following DeepSpeed "
        "config values that mismatch TrainingArguments values\": "
        "train_micro_batch_size_per_gpu=2 vs per_device_train_batch_size=4");
    load_ds(&fx,
            "{\"train_micro_batch_size_per_gpu\": \"auto\", "
            "\"gradient_clipping\": 1.0}",
            NULL, &t, 0, 0);
    ck_assert_ptr_null(run(&fx, "trainer-mismatch"));

    load_ds(&fx,
            "{\"bf16\": {\"enabled\": true}, \"fp16\": {\"enabled\": true}}",
            NULL, NULL, 0, 0);
    ck_assert_ptr_nonnull(run(&fx, "fp16-and-bf16"));
    load_ds(&fx,
            "{\"bf16\": {\"enabled\": true}, \"fp16\": {\"enabled\": false}}",
            NULL, NULL, 0, 0);
    ck_assert_ptr_null(run(&fx, "fp16-and-bf16"));

    load_ds(&fx,
            "{\"zero_optimization\": {\"stage\": 3, \"reduce_bucket_size\": "
            "\"auto\"}}",
            NULL, NULL, 0, 0);
    f = run(&fx, "auto-unresolved");
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(
        f->explanation,
        "1 \"auto\" value(s) could not be resolved the way the HF Trainer "
        "would: zero_optimization.reduce_bucket_size (needs --model "
        "(hidden size)); the rules used DeepSpeed's defaults for them");
    load_ds(&fx,
            "{\"zero_optimization\": {\"stage\": 3, \"reduce_bucket_size\": "
            "\"auto\"}}",
            NULL, NULL, 4096, 0);
    ck_assert_ptr_null(run(&fx, "auto-unresolved"));
}
END_TEST

/* What the planner writes must lint clean. */
/* NVMe offload rules (lint.c rule_nvme).  72B on 8 ranks: P = 9e9, so the
 * largest sub-group is sub_group_size 1e9 (already 256-aligned); buffer_count
 * 8 x 1e9 x 4 B = 32e9 B per rank, x 8 = 256e9 B per node: over 200 GiB
 * usable, under 512 GiB.  pipeline_read + pipeline_write need 4 x 3 = 12
 * buffers. */
START_TEST(test_nvme)
{
    struct fixture fx;
    struct zs_model m;
    struct zs_cluster c;
    const struct zs_lint_finding *f;
    const char *nvme =
        "{\"bf16\": {\"enabled\": true},\n"
        " \"zero_optimization\": {\"stage\": 3, \"sub_group_size\": 1e9,\n"
        "   \"offload_optimizer\": {\"device\": \"nvme\", \"buffer_count\": 8,"
        " \"pipeline_read\": true, \"pipeline_write\": true}}}";
    const char *ok =
        "{\"bf16\": {\"enabled\": true}, \"aio\": {\"queue_depth\": 8},\n"
        " \"zero_optimization\": {\"stage\": 3,\n"
        "   \"offload_optimizer\": {\"device\": \"nvme\", \"nvme_path\": "
        "\"/mnt/nvme0/ds\"}}}";

    mk_model(&m, "qwen2.5-72b", 72000000000LL, 8192, 80);
    mk_cluster(&c, 200 * ZS_GiB, 0);
    load_ds(&fx, nvme, NULL, NULL, 8192, 8);
    fx.in.model = &m;
    fx.in.cluster = &c;
    ck_assert_ptr_nonnull(run(&fx, "nvme-async-io"));
    f = run(&fx, "nvme-path-unset");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->severity, ZS_LINT_ERROR);
    f = run(&fx, "nvme-buffer-count");
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(f->explanation,
                     "each sub-group read or written holds 4 swap buffers "
                     "(fp32 param, exp_avg, exp_avg_sq, gradient); "
                     "pipeline_read keeps the next sub-group's read in "
                     "flight; pipeline_write keeps one swap-out in flight: 12 "
                     "needed, buffer_count is 8");
    f = run(&fx, "nvme-swap-buffers-host");
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(f->explanation,
                     "buffer_count 8 x the largest sub-group (1000000000 fp32 "
                     "elements, 1 KiB-aligned) = 29.8 GiB page-locked per "
                     "rank, x 8 local ranks = 238 GiB per node, against 200 "
                     "GiB usable host RAM");
    /* no CPU-offload host rule for NVMe: nothing of it is on the host */
    ck_assert_ptr_null(run(&fx, "host-ram-offload"));
    mk_cluster(&c, 512 * ZS_GiB, 0);
    ck_assert_ptr_null(run(&fx, "nvme-swap-buffers-host"));
    /* a set path, default buffers and no pipeline: only the reminder */
    load_ds(&fx, ok, NULL, NULL, 8192, 8);
    fx.in.model = &m;
    fx.in.cluster = &c;
    ck_assert_ptr_nonnull(run(&fx, "nvme-async-io"));
    ck_assert_ptr_null(run(&fx, "nvme-path-unset"));
    ck_assert_ptr_null(run(&fx, "nvme-path-not-nvme"));
    ck_assert_ptr_null(run(&fx, "nvme-buffer-count"));
    ck_assert_ptr_null(run(&fx, "nvme-swap-buffers-host"));
    ck_assert_ptr_null(run(&fx, "aio-key-ignored"));
    /* aio.thread_count: read before 0.16.4, ignored from it (PR #7056) */
    {
        const char *tc =
            "{\"aio\": {\"thread_count\": 4},\n"
            " \"zero_optimization\": {\"stage\": 3,\n"
            "   \"offload_optimizer\": {\"device\": \"nvme\", "
            "\"nvme_path\": \"/mnt/nvme0/ds\"}}}";
        load_ds(&fx, tc, "0.19.6", NULL, 8192, 8);
        f = run(&fx, "aio-key-ignored");
        ck_assert_ptr_nonnull(f);
        ck_assert_str_eq(f->explanation,
                         "DeepSpeed 0.19.6 reads aio.intra_op_parallelism "
                         "only; thread_count = 4 has no effect and the aio "
                         "handles run with intra_op_parallelism = 1");
        load_ds(&fx, tc, "0.16.3", NULL, 8192, 8);
        ck_assert_ptr_null(run(&fx, "aio-key-ignored"));
        ck_assert_int_eq(zs_ds_aio_parallelism(&fx.ds), 4);
    }
}
END_TEST


/* offload_param nvme: Qwen2.5-72B's embedding, 152064 x 8192 = 1,245,708,288
 * elements, over 8 ranks = 155,713,536 per rank, against DeepSpeed's default
 * buffer_size 1e8 (offload_config.py:36) and against 2e8. */
START_TEST(test_nvme_param_buffer_size)
{
    struct fixture fx;
    struct zs_model m;
    struct zs_cluster c;
    const struct zs_lint_finding *f;
    const char *dflt =
        "{\"bf16\": {\"enabled\": true},\n"
        " \"zero_optimization\": {\"stage\": 3,\n"
        "   \"offload_param\": {\"device\": \"nvme\", \"nvme_path\": "
        "\"/mnt/nvme0/ds\"},\n"
        "   \"offload_optimizer\": {\"device\": \"cpu\"}}}";
    const char *big =
        "{\"bf16\": {\"enabled\": true},\n"
        " \"zero_optimization\": {\"stage\": 3,\n"
        "   \"offload_param\": {\"device\": \"nvme\", \"nvme_path\": "
        "\"/mnt/nvme0/ds\", \"buffer_size\": 2e8},\n"
        "   \"offload_optimizer\": {\"device\": \"cpu\"}}}";
    mk_model(&m, "qwen2.5-72b", 72000000000LL, 8192, 80);
    strcpy(m.largest_leaf_name, "model.embed_tokens");
    m.largest_leaf_params = 1245708288LL;
    mk_cluster(&c, 2048 * ZS_GiB, 0);
    load_ds(&fx, dflt, NULL, NULL, 8192, 8);
    fx.in.model = &m;
    fx.in.cluster = &c;
    f = run(&fx, "nvme-param-buffer-size");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->severity, ZS_LINT_ERROR);
    ck_assert_str_eq(f->explanation,
                     "model.embed_tokens has 1245708288 elements, 155713536 "
                     "per rank over 8 ranks; buffer_size is 100000000: "
                     "zero.Init fails with \"More elements 155713536 than "
                     "buffer size 100000000\"");
    load_ds(&fx, big, NULL, NULL, 8192, 8);
    fx.in.model = &m;
    fx.in.cluster = &c;
    ck_assert_ptr_null(run(&fx, "nvme-param-buffer-size"));
    ck_assert_ptr_nonnull(run(&fx, "nvme-async-io"));
    ck_assert_ptr_null(run(&fx, "nvme-path-unset"));
}
END_TEST

START_TEST(test_written_config_is_clean)
{
    struct fixture fx;
    struct zs_trainer_args t;
    struct zs_cluster c;
    struct zs_model m;
    struct zs_err err = {0, ""};
    char *text = NULL;
    struct zs_dsconfig_ctx ctx = {0};
    struct zs_dsconfig src;

    zs_trainer_args_defaults(&t);
    t.present = true;
    t.per_device_train_batch_size = 1;
    t.gradient_accumulation_steps = 8;
    t.bf16 = true;
    ctx.hidden_size = 8192;
    ctx.world_size = 8;
    ctx.trainer = &t;
    ck_assert_int_eq(
        zs_dsconfig_load("tests/data/good/ds-zero3-offload-auto.json", &ctx,
                         &src, &err),
        0);
    ck_assert_int_eq(zs_dsconfig_to_json(&src, &text, &err), 0);
    load_ds(&fx, text, "0.16.5", NULL, 8192, 8);
    zs_free(text);
    mk_model(&m, "qwen2.5-72b", 72000000000LL, 8192, 80);
    mk_cluster(&c, 2 * ZS_TiB, 0);
    fx.in.model = &m;
    fx.in.cluster = &c;
    ck_assert_ptr_null(run(&fx, "none"));
    ck_assert_msg(fx.rep.n == 0, "first finding: %s",
                  fx.rep.n ? fx.rep.finding[0].id : "");
}
END_TEST

/* Many unknown keys: the note list is bounded (32) and the rest is summed up
 * in one finding, so the report never overflows. */
START_TEST(test_report_overflow)
{
    char text[8192];
    size_t len = 0;
    struct fixture fx;
    len += (size_t)snprintf(text + len, sizeof text - len,
                            "{\"zero_optimization\": {");
    for (int i = 0; i < 30; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%s\"z%d\": 1",
                                i ? ", " : "", i);
    len += (size_t)snprintf(text + len, sizeof text - len, "}");
    for (int i = 0; i < 30; i++)
        len +=
            (size_t)snprintf(text + len, sizeof text - len, ", \"t%d\": 1", i);
    snprintf(text + len, sizeof text - len, "}");
    load_ds(&fx, text, NULL, NULL, 0, 0);
    run(&fx, "none");
    ck_assert_int_eq(fx.rep.n, ZS_DS_NOTES_MAX + 1);
    /* 32 notes stored (30 errors + 2 warnings) + 1 summary of 28 dropped notes.
     */
    ck_assert_int_eq(fx.rep.n_error, 30);
    ck_assert_int_eq(fx.rep.n_warning, 3);
    ck_assert_int_eq(fx.rep.dropped, 0);
}
END_TEST

Suite *suite_lint(void)
{
    Suite *s = suite_create("lint");
    TCase *core = tcase_create("core");
    TCase *limits = tcase_create("limits");
    TCase *bad = tcase_create("bad input");
    tcase_add_test(core, test_host_bytes_7b);
    tcase_add_test(core, test_host_bytes_subgroups);
    tcase_add_test(core, test_unscale_clip);
    tcase_add_test(core, test_bnb);
    tcase_add_test(core, test_outside_zero_init);
    tcase_add_test(core, test_no_zero_init);
    tcase_add_test(core, test_no_zero_init_gpu_fits);
    tcase_add_test(core, test_host_ram_offload);
    tcase_add_test(core, test_offload_ratio_rounded);
    tcase_add_test(core, test_nvme);
    tcase_add_test(core, test_nvme_param_buffer_size);
    tcase_add_test(core, test_pinned_rounding);
    tcase_add_test(core, test_max_steps);
    tcase_add_test(core, test_offload_consistency);
    tcase_add_test(core, test_overlap_comm);
    tcase_add_test(core, test_buckets);
    tcase_add_test(core, test_unknown_and_batch);
    tcase_add_test(core, test_written_config_is_clean);
    tcase_add_test(limits, test_pow2);
    tcase_add_test(limits, test_report_overflow);
    tcase_add_test(bad, test_host_bytes_bad);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    suite_add_tcase(s, bad);
    return s;
}
