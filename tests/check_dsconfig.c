/*
 * check_dsconfig.c — the DeepSpeed config reader: defaults per version,
 * "auto" resolution (HF formulas computed by hand), unknown-key notes,
 * writing and re-reading, exact bad-input messages, allocation failures.
 */
#include "train/ds_keys.h"
#include "train/dsconfig.h"
#include "util/alloc.h"
#include "testutil.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int load(const char *text, const struct zs_dsconfig_ctx *ctx,
                struct zs_dsconfig *c, struct zs_err *err)
{
    return zs_dsconfig_load_text("ds.json", text, strlen(text), ctx, c, err);
}

/* HF-style auto resolution with h = 8192 (Qwen2.5-72B), 8 ranks, trainer
 * micro-batch 1 and accumulation 8. */
START_TEST(test_auto_resolution)
{
    struct zs_trainer_args t;
    struct zs_dsconfig_ctx ctx = {0};
    struct zs_dsconfig c;
    struct zs_ds_notes notes = {0};
    struct zs_err err = {0, ""};

    zs_trainer_args_defaults(&t);
    t.present = true;
    t.per_device_train_batch_size = 1;
    t.gradient_accumulation_steps = 8;
    t.max_grad_norm = 0.5;
    t.bf16 = true;
    ctx.hidden_size = 8192;
    ctx.world_size = 8;
    ctx.trainer = &t;
    ctx.notes = &notes;
    ck_assert_int_eq(zs_ds_version_parse("0.16.5", &ctx.version, &err), 0);
    ck_assert_int_eq(
        zs_dsconfig_load("tests/data/good/ds-zero3-offload-auto.json", &ctx, &c,
                         &err),
        0);
    ck_assert_int_eq(c.zero_stage.v, 3);
    ck_assert_int_eq(c.zero_stage.from, ZS_DS_SET);
    ck_assert_int_eq(c.zero_stage.line, 23);
    ck_assert_int_eq(c.zero_stage.col, 5);
    /* h*h = 67108864; int(0.9*h*h) = int(60397977.6) = 60397977; 10*h. */
    ck_assert_int_eq(c.reduce_bucket_size.v, 67108864);
    ck_assert_int_eq(c.reduce_bucket_size.from, ZS_DS_AUTO);
    ck_assert_int_eq(c.stage3_prefetch_bucket_size.v, 60397977);
    ck_assert_int_eq(c.stage3_param_persistence_threshold.v, 81920);
    ck_assert_int_eq(c.train_micro_batch_size_per_gpu.v, 1);
    ck_assert_int_eq(c.gradient_accumulation_steps.v, 8);
    ck_assert_int_eq(c.train_batch_size.v, 64); /* 1 x 8 x 8 */
    ck_assert_int_eq(c.train_batch_size.from, ZS_DS_AUTO);
    ck_assert(c.gradient_clipping.v == 0.5);
    ck_assert(c.bf16_enabled.v);
    ck_assert_int_eq(c.communication_data_type.v, ZS_DS_DT_BF16);
    ck_assert_int_eq(c.communication_data_type.from, ZS_DS_DEFAULT);
    ck_assert_int_eq(c.offload_optimizer.device.v, ZS_DS_DEV_CPU);
    ck_assert(c.offload_optimizer.pin_memory.v);
    ck_assert_int_eq(c.offload_optimizer.pin_memory.from, ZS_DS_SET);
    ck_assert_int_eq(c.sub_group_size.v, 1000000000);
    ck_assert_int_eq(c.stage3_max_live_parameters.v, 1000000000);
    ck_assert(c.stage3_gather_16bit_weights_on_model_save.v);
    ck_assert(c.optimizer.present);
    ck_assert_str_eq(c.optimizer.type, "AdamW");
    ck_assert(c.optimizer.lr.v == 5e-5); /* HF default learning_rate */
    ck_assert(c.optimizer.beta2.v == 0.999);
    ck_assert(c.scheduler.present);
    ck_assert_str_eq(c.scheduler.type, "WarmupLR");
    ck_assert_int_eq(notes.n, 0);
    ck_assert_int_eq(c.n_unknown, 0);
    ck_assert_int_eq(zs_dsconfig_param_bytes(&c), 2);
}
END_TEST

/* Without a model or trainer, "auto" keeps DeepSpeed's default. */
START_TEST(test_auto_unresolved)
{
    struct zs_dsconfig c;
    struct zs_err err = {0, ""};
    ck_assert_int_eq(
        zs_dsconfig_load("tests/data/good/ds-zero3-offload-auto.json", NULL, &c,
                         &err),
        0);
    ck_assert_int_eq(c.reduce_bucket_size.v, 500000000);
    ck_assert_int_eq(c.reduce_bucket_size.from, ZS_DS_AUTO_UNRESOLVED);
    ck_assert_int_eq(c.stage3_prefetch_bucket_size.v, 50000000);
    ck_assert_int_eq(c.stage3_param_persistence_threshold.v, 100000);
    ck_assert_int_eq(c.train_micro_batch_size_per_gpu.from,
                     ZS_DS_AUTO_UNRESOLVED);
    ck_assert_int_eq(c.train_batch_size.from, ZS_DS_AUTO_UNRESOLVED);
    ck_assert_int_eq(c.gradient_clipping.from, ZS_DS_AUTO_UNRESOLVED);
    ck_assert(!c.bf16_enabled.v);
    ck_assert_int_eq(zs_dsconfig_param_bytes(&c), 4);
    ck_assert_str_eq(zs_ds_origin_name(c.reduce_bucket_size.from),
                     "auto-unresolved");
}
END_TEST

/* Version-dependent and stage-dependent defaults (reference §0). */
START_TEST(test_defaults)
{
    struct zs_dsconfig_ctx ctx = {0};
    struct zs_dsconfig c;
    struct zs_err err = {0, ""};
    const char *z3 = "{\"zero_optimization\": {\"stage\": 3, "
                     "\"offload_optimizer\": {\"device\": \"cpu\"}}}";

    ck_assert_int_eq(zs_ds_version_parse("0.19.4", &ctx.version, &err), 0);
    ck_assert_int_eq(load(z3, &ctx, &c, &err), 0);
    ck_assert(!c.offload_optimizer.pin_memory.v);
    ck_assert_int_eq(c.offload_optimizer.pin_memory.from, ZS_DS_DEFAULT);
    ck_assert(c.overlap_comm.v); /* None -> True for stage 3 */
    ck_assert_int_eq(c.stage3_prefetch_bucket_size.v, 50000000);
    ck_assert_int_eq(c.reduce_bucket_size.v, 500000000);
    ck_assert_int_eq(c.offload_optimizer.buffer_count.v, 4);
    ck_assert(c.offload_optimizer.ratio.v == 1.0);
    ck_assert_int_eq(zs_ds_version_parse("0.19.5", &ctx.version, &err), 0);
    ck_assert_int_eq(load(z3, &ctx, &c, &err), 0);
    ck_assert(c.offload_optimizer.pin_memory.v);
    ck_assert(c.offload_param.pin_memory.v);
    /* No version: the assumed one (0.19.6). */
    ck_assert_int_eq(
        load("{\"zero_optimization\": {\"stage\": 2}}", NULL, &c, &err), 0);
    ck_assert_int_eq(c.version.minor, 19);
    ck_assert_int_eq(c.version.patch, 6);
    ck_assert(!c.overlap_comm.v);
    ck_assert_int_eq(c.zero_stage.v, 2);
    /* Empty object: ZeRO off, micro-batch 1, fp32. */
    ck_assert_int_eq(load("{}", NULL, &c, &err), 0);
    ck_assert_int_eq(c.zero_stage.v, 0);
    ck_assert(!c.have_zero_block);
    ck_assert_int_eq(c.communication_data_type.v, ZS_DS_DT_FP32);
    /* Batch derivation: train_batch_size 64, GA 4 on 8 ranks -> micro 2. */
    ctx.world_size = 8;
    ck_assert_int_eq(
        load("{\"train_batch_size\": 64, \"gradient_accumulation_steps\": 4}",
             &ctx, &c, &err),
        0);
    ck_assert_int_eq(c.train_micro_batch_size_per_gpu.v, 2);
    /* Aliases: prefetch_bucket_size, bfloat16, explicit comm dtype. */
    ck_assert_int_eq(
        load("{\"bfloat16\": {\"enabled\": true}, \"communication_data_type\": "
             "\"fp32\","
             " \"zero_optimization\": {\"prefetch_bucket_size\": 123}}",
             &ctx, &c, &err),
        0);
    ck_assert_int_eq(c.stage3_prefetch_bucket_size.v, 123);
    ck_assert(c.bf16_enabled.v);
    ck_assert_int_eq(c.communication_data_type.v, ZS_DS_DT_FP32);
    ck_assert_int_eq(c.communication_data_type.from, ZS_DS_SET);
    /* NVMe: offload_config.py (buffer_count 4, pipeline_* false) and
     * swap_tensor/constants.py (aio) defaults, then a set file. */
    ck_assert_int_eq(load(z3, &ctx, &c, &err), 0);
    ck_assert(!c.offload_optimizer.pipeline_read.v);
    ck_assert(!c.offload_optimizer.pipeline_write.v);
    /* offload_param: buffer_count 5, buffer_size 1e8, max_in_cpu 1e9
     * (offload_config.py:33,36,39) */
    ck_assert_int_eq(c.offload_param.buffer_count.v, 5);
    ck_assert_int_eq(c.offload_param.buffer_size.v, 100000000);
    ck_assert_int_eq(c.offload_param.max_in_cpu.v, 1000000000);
    ck_assert(!c.aio.present);
    ck_assert_int_eq(c.aio.block_size.v, 1048576);
    ck_assert_int_eq(c.aio.queue_depth.v, 8);
    ck_assert_int_eq(c.aio.intra_op_parallelism.v, 1);
    ck_assert(!c.aio.single_submit.v);
    ck_assert(c.aio.overlap_events.v);
    ck_assert_int_eq(zs_dsconfig_load("tests/data/good/ds-zero3-nvme.json",
                                     &ctx, &c, &err),
                     0);
    ck_assert_int_eq(c.offload_optimizer.device.v, ZS_DS_DEV_NVME);
    ck_assert_int_eq(c.offload_optimizer.buffer_count.v, 8);
    ck_assert(c.offload_optimizer.pipeline_read.v);
    ck_assert(!c.offload_optimizer.pipeline_write.v);
    ck_assert(c.aio.present);
    /* "thread_count": 1 is read into its own field (the name before 0.16.4,
     * PR #7056); 0.19.6 reads intra_op_parallelism, default 1 */
    ck_assert_int_eq(c.aio.thread_count.v, 1);
    ck_assert_int_eq(c.aio.thread_count.from, ZS_DS_SET);
    ck_assert_int_eq(zs_ds_aio_parallelism(&c), 1);
}
END_TEST

START_TEST(test_unknown_keys)
{
    struct zs_ds_notes notes = {0};
    struct zs_dsconfig_ctx ctx = {0};
    struct zs_dsconfig c;
    struct zs_err err = {0, ""};
    ctx.notes = &notes;
    ck_assert_int_eq(zs_dsconfig_load("tests/data/good/ds-unknown-keys.json",
                                      &ctx, &c, &err),
                     0);
    ck_assert_int_eq(c.n_unknown, 2);
    ck_assert_int_eq(notes.n, 2);
    ck_assert_str_eq(notes.item[0].key,
                     "zero_optimization.stage3_prefetch_bucket");
    ck_assert_str_eq(notes.item[0].where,
                     "tests/data/good/ds-unknown-keys.json:4:5");
    ck_assert_str_eq(notes.item[0].suggest, "stage3_prefetch_bucket_size");
    ck_assert(notes.item[0].rejected);
    ck_assert_str_eq(notes.item[1].key, "gradient_acumulation_steps");
    ck_assert_str_eq(notes.item[1].where,
                     "tests/data/good/ds-unknown-keys.json:7:3");
    ck_assert_str_eq(notes.item[1].suggest, "gradient_accumulation_steps");
    ck_assert(!notes.item[1].rejected);
    /* Open dicts (optimizer params) take any key without a note. */
    notes.n = 0;
    ck_assert_int_eq(
        load("{\"optimizer\": {\"type\": \"AdamW\", \"params\": "
             "{\"lr\": 1e-4, \"torch_adam\": true, \"betas\": [0.9, 0.95]}}}",
             &ctx, &c, &err),
        0);
    ck_assert_int_eq(notes.n, 0);
    ck_assert(c.optimizer.beta2.v == 0.95);
}
END_TEST

START_TEST(test_versions)
{
    struct zs_ds_version v, w;
    struct zs_err err = {0, ""};
    char buf[16];
    ck_assert_int_eq(zs_ds_version_parse("0.14.2", &v, &err), 0);
    ck_assert_str_eq(zs_ds_version_fmt(&v, buf, sizeof buf), "0.14.2");
    ck_assert_int_eq(zs_ds_version_parse("v0.14.3+cu121", &w, &err), 0);
    ck_assert_int_lt(zs_ds_version_cmp(&v, &w), 0);
    ck_assert_int_eq(zs_ds_version_parse("0.15.0rc1", &w, &err), 0);
    ck_assert_int_eq(w.minor, 15);
    ck_assert_int_eq(zs_ds_version_cmp(&w, &w), 0);
}
END_TEST

START_TEST(test_trainer_args)
{
    struct zs_trainer_args t;
    struct zs_err err = {0, ""};
    ck_assert_int_eq(
        zs_trainer_args_load("tests/data/good/ds-trainer-args.json", &t, &err),
        0);
    ck_assert(t.present);
    ck_assert_int_eq(t.per_device_train_batch_size, 1);
    ck_assert_int_eq(t.gradient_accumulation_steps, 8);
    ck_assert_str_eq(t.optim, "adamw_bnb_8bit");
    ck_assert_int_eq(t.max_steps, 32);
    ck_assert_str_eq(t.max_steps_key, "max_steps");
    ck_assert_int_eq(t.dataset_samples, 10000);
    ck_assert(t.bf16);
    ck_assert(t.learning_rate == 2e-5);
    zs_trainer_args_defaults(&t);
    ck_assert_int_eq(t.per_device_train_batch_size, 8);
    ck_assert(t.max_grad_norm == 1.0);
    ck_assert_int_eq(t.max_steps, -1);
    ck_assert_str_eq(t.optim, "adamw_torch");
}
END_TEST

/* Written configs read back to the same values and contain no "auto". */
START_TEST(test_write_roundtrip)
{
    struct zs_trainer_args t;
    struct zs_dsconfig_ctx ctx = {0};
    struct zs_dsconfig a, b;
    struct zs_ds_notes notes = {0};
    struct zs_err err = {0, ""};
    char path[] = "/tmp/zsim-ds-XXXXXX";
    char *text = NULL;
    int fd = mkstemp(path);

    ck_assert_int_ge(fd, 0);
    close(fd);
    zs_trainer_args_defaults(&t);
    t.present = true;
    t.per_device_train_batch_size = 2;
    t.bf16 = true;
    ctx.hidden_size = 4096;
    ctx.world_size = 8;
    ctx.trainer = &t;
    ctx.notes = &notes;
    ck_assert_int_eq(
        zs_dsconfig_load("tests/data/good/ds-zero3-offload-auto.json", &ctx, &a,
                         &err),
        0);
    ck_assert_int_eq(zs_dsconfig_write(&a, path, &err), 0);
    ck_assert_int_eq(zs_dsconfig_to_json(&a, &text, &err), 0);
    ck_assert_ptr_null(strstr(text, "auto"));
    zs_free(text);
    ck_assert_int_eq(zs_dsconfig_load(path, &ctx, &b, &err), 0);
    ck_assert_int_eq(notes.n, 0);
    ck_assert_int_eq(b.zero_stage.v, 3);
    ck_assert_int_eq(b.reduce_bucket_size.v, 16777216);
    ck_assert_int_eq(b.reduce_bucket_size.from, ZS_DS_SET);
    ck_assert_int_eq(b.stage3_prefetch_bucket_size.v,
                     a.stage3_prefetch_bucket_size.v);
    ck_assert_int_eq(b.stage3_param_persistence_threshold.v, 40960);
    ck_assert_int_eq(b.train_micro_batch_size_per_gpu.v, 2);
    ck_assert_int_eq(b.train_batch_size.v, 16);
    ck_assert(b.gradient_clipping.v == 1.0);
    ck_assert(b.bf16_enabled.v && !b.fp16_enabled.v);
    ck_assert_int_eq(b.offload_param.device.v, ZS_DS_DEV_CPU);
    ck_assert(b.offload_param.pin_memory.v);
    ck_assert(b.optimizer.lr.v == a.optimizer.lr.v);
    ck_assert(b.optimizer.eps.v == 1e-8);
    ck_assert(b.overlap_comm.v);
    unlink(path);
    /* Unwritable place: an i/o error naming the target (util/afile.h). */
    ck_assert_int_eq(zs_dsconfig_write(&a, "/nonexistent-dir/x.json", &err),
                     ZS_EIO);
    ck_assert_str_eq(err.msg, "cannot write '/nonexistent-dir/x.json': No "
                              "such file or directory");
}
END_TEST

/* Every bad input paired with its exact message (STYLE 24). */
/* The deprecated cpu_offload / cpu_offload_param (zero/config.py at edaa722
 * :181-212): true builds the offload block with device cpu; false builds
 * none; beside the new block DeepSpeed's assert refuses it (from 0.7.0;
 * before it the old key won). */
START_TEST(test_legacy_cpu_offload)
{
    /* the old key beside the new block */
    static const char *const both =
        "{\"zero_optimization\": {\"stage\": 2, \"cpu_offload\": %s, "
        "\"offload_optimizer\": {\"device\": \"%s\"}}}";
    char text[200];
    struct zs_dsconfig_ctx ctx = {0};
    struct zs_dsconfig c;
    struct zs_err err = {0, ""};
    ck_assert_int_eq(load("{\"zero_optimization\": {\"stage\": 3, "
                          "\"cpu_offload\": true, \"cpu_offload_param\": "
                          "true}}",
                          &ctx, &c, &err),
                     0);
    ck_assert(c.offload_optimizer.present && c.offload_param.present);
    ck_assert_int_eq(c.offload_optimizer.device.v, ZS_DS_DEV_CPU);
    ck_assert_int_eq(c.offload_param.device.v, ZS_DS_DEV_CPU);
    ck_assert_int_eq(c.offload_optimizer.line, 1);
    ck_assert_int_eq(load("{\"zero_optimization\": {\"stage\": 2, "
                          "\"cpu_offload\": false}}",
                          &ctx, &c, &err),
                     0);
    ck_assert(!c.offload_optimizer.present);
    ck_assert_int_eq(c.offload_optimizer.device.v, ZS_DS_DEV_NONE);
    snprintf(text, sizeof text, both, "true", "cpu");
    ck_assert_int_eq(load(text, &ctx, &c, &err), ZS_EINPUT);
    ck_assert_str_eq(err.msg,
                     "invalid 'zero_optimization.cpu_offload' in ds.json:1: "
                     "DeepSpeed refuses the deprecated key beside "
                     "'zero_optimization.offload_optimizer' (\"Cannot provide "
                     "deprecated parameter 'cpu_offload' and replacing "
                     "parameter 'offload_optimizer' together\")");
    /* 0.6.5: the old key wins over the block, either way */
    ck_assert_int_eq(zs_ds_version_parse("0.6.5", &ctx.version, &err), 0);
    snprintf(text, sizeof text, both, "false", "cpu");
    ck_assert_int_eq(load(text, &ctx, &c, &err), 0);
    ck_assert(!c.offload_optimizer.present);
    ck_assert_int_eq(c.offload_optimizer.device.v, ZS_DS_DEV_NONE);
    snprintf(text, sizeof text, both, "true", "none");
    ck_assert_int_eq(load(text, &ctx, &c, &err), 0);
    ck_assert_int_eq(c.offload_optimizer.device.v, ZS_DS_DEV_CPU);
}
END_TEST

/* A config that gives only train_batch_size (and the accumulation): DeepSpeed
 * derives the micro-batch, train_batch_size / (world x accumulation) =
 * 8 / (2 x 1) = 4 (runtime/config.py _set_batch_related_parameters), and the
 * run uses it (the DeepSpeed blog's zo_config.json on 2 GPUs; it was 1). */
START_TEST(test_derived_micro_batch)
{
    static struct zt_run r;
    zt_resolve(&r, "model=7b;gpus=2xA100-40GB;framework=deepspeed",
               "ds-config=tests/data/good/ds-train-batch-only.json");
    ck_assert_int_eq(r.cfg.micro_batch, 4);
    ck_assert_int_eq(r.cfg.accum, 1);
    ck_assert_int_eq(r.cfg.micro_batch * r.cfg.accum * r.cfg.dp, 8);
}
END_TEST

/* Ulysses: DeepSpeed's batch is per data-parallel rank, the processes over
 * the sequence-parallel degree (runtime/config.py:711-722 at edaa722).
 * train_batch_size 16, accumulation 2 on 8 processes: the JSON's degree 4
 * leaves 2 data-parallel ranks, micro-batch 16 / (2 x 2) = 4; a --sp 2
 * (ctx.sp) leaves 4, micro-batch 2; without either, 8 ranks and 1. */
START_TEST(test_ulysses_batch)
{
    static const char *const text =
        "{\"train_batch_size\": 16, \"gradient_accumulation_steps\": 2, "
        "\"sequence_parallel_size\": 4, \"zero_optimization\": "
        "{\"stage\": 3}}";
    struct zs_dsconfig_ctx ctx = {0};
    struct zs_dsconfig c;
    struct zs_err err = {0, ""};
    static struct zt_run r;
    ctx.world_size = 8;
    ck_assert_msg(load(text, &ctx, &c, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(c.sequence_parallel_size.v, 4);
    ck_assert_int_eq(c.train_micro_batch_size_per_gpu.v, 4);
    ctx.sp = 2;
    ck_assert_msg(load(text, &ctx, &c, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(c.train_micro_batch_size_per_gpu.v, 2);
    ctx.sp = 0;
    ck_assert_msg(load("{\"train_batch_size\": 16, "
                       "\"gradient_accumulation_steps\": 2}",
                       &ctx, &c, &err) == 0,
                  "%s", err.msg);
    ck_assert_int_eq(c.sequence_parallel_size.v, 1);
    ck_assert_int_eq(c.train_micro_batch_size_per_gpu.v, 1);
    /* the run takes the JSON's degree */
    zt_resolve(&r, "model=7b;gpus=8xH100;framework=deepspeed;seq-len=16384",
               "ds-config=tests/data/good/ds-ulysses.json");
    ck_assert_int_eq(r.cfg.sp, 4);
    ck_assert_int_eq(r.cfg.dp, 2);
    ck_assert_int_eq(r.cfg.micro_batch, 4);
    ck_assert_int_eq(r.cfg.accum, 2);
}
END_TEST

/* DeepCompile is read from 0.16.6 (227a60c0c); before, the top-level
 * "compile" is not DeepSpeed's (0.14.4-0.16.5 read none), so the run is
 * plain ZeRO-3 */
START_TEST(test_deepcompile_by_version)
{
    static struct zt_run r;
    struct zs_err err = {0, ""};
    zt_resolve(&r,
               "model=7b;gpus=8xH100;framework=deepspeed;"
               "deepspeed-version=0.16.5",
               "ds-config=tests/data/good/ds-deepcompile.json");
    ck_assert_int_eq(r.cfg.zero, 3);
    zs_cfg_defaults(&r.cfg);
    zt_apply_flags(&r.cfg, "model=7b;gpus=8xH100;framework=deepspeed;"
                           "deepspeed-version=0.16.6;"
                           "ds-config=tests/data/good/ds-deepcompile.json");
    ck_assert_int_eq(zs_setup_resolve(&r.cfg, NULL, &r.m, &r.cl, &err),
                     ZS_EINPUT);
    ck_assert_str_eq(err.msg,
                     "unsupported 'compile.deepcompile' in "
                     "tests/data/good/ds-deepcompile.json:5: zsim does not "
                     "model DeepCompile (ZeRO-3's fetches and releases "
                     "scheduled by the compiled graph); remove it to "
                     "simulate plain ZeRO");
}
END_TEST

START_TEST(test_bad_input)
{
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"", "empty file 'ds.json': expected a JSON object"},
        {"[1]", "invalid top level in ds.json: must be an object (got array)"},
        {"{\"zero_optimization\": {\n  \"stage\": 3\n  \"x\": 1}}",
         "malformed JSON in ds.json:3:3: unexpected '\"'"},
        {"{\"zero_optimization\": {\"stage\": 4}}",
         "invalid 'zero_optimization.stage' in ds.json:1:24: must be an "
         "integer in [0, 3] or \"auto\" (got 4)"},
        {"{\"zero_optimization\": {\"stage\": 2.5}}",
         "invalid 'zero_optimization.stage' in ds.json:1:24: must be an "
         "integer in [0, 3] or \"auto\" (got 2.5)"},
        {"{\"zero_optimization\": {\"stage3_max_live_parameters\": \"auto\"}}",
         "invalid 'zero_optimization.stage3_max_live_parameters' in "
         "ds.json:1:24: must be an integer in [0, 1e+15] (got 'auto')"},
        {"{\"zero_optimization\": {\"offload_param\": {\"device\": \"gpu\"}}}",
         "invalid 'zero_optimization.offload_param.device' in ds.json:1:42: "
         "must be one of none, cpu, nvme (got 'gpu')"},
        {"{\"zero_optimization\": {\"offload_optimizer\": {\"pin_memory\": "
         "\"yes\"}}}",
         "invalid 'zero_optimization.offload_optimizer.pin_memory' in "
         "ds.json:1:46: must be true or false (got 'yes')"},
        {"{\"zero_optimization\": {\"offload_optimizer\": {\"ratio\": 1.5}}}",
         "invalid 'zero_optimization.offload_optimizer.ratio' in ds.json:1:46: "
         "must be a number in [0, 1] (got 1.5)"},
        {"{\"zero_optimization\": {\"offload_param\": \"cpu\"}}",
         "invalid 'zero_optimization.offload_param' in ds.json:1:24: must be "
         "an object (got 'cpu')"},
        {"{\"train_micro_batch_size_per_gpu\": 0}",
         "invalid 'train_micro_batch_size_per_gpu' in ds.json:1:2: must be an "
         "integer in [1, 1e+09] or \"auto\" (got 0)"},
        {"{\"gradient_clipping\": -1}",
         "invalid 'gradient_clipping' in ds.json:1:2: must be a number in [0, "
         "1e+09] or \"auto\" (got -1)"},
        {"{\"communication_data_type\": \"int8\"}",
         "invalid 'communication_data_type' in ds.json:1:2: must be one of "
         "fp16, bf16, fp32 or null (got 'int8')"},
        {"{\"bf16\": {\"enabled\": 1}}",
         "invalid 'bf16.enabled' in ds.json:1:11: must be true or false or "
         "\"auto\" (got 1)"},
        {"{\"optimizer\": {\"type\": \"AdamW\", \"params\": {\"betas\": "
         "[0.9]}}}",
         "invalid 'optimizer.params.betas' in ds.json:1:44: must be two "
         "numbers in [0, 1] or \"auto\" (got array)"},
        {"{\"optimizer\": {\"type\": 3}}",
         "invalid 'optimizer.type' in ds.json:1:16: must be a string of 1 to "
         "47 characters (got 3)"},
        {"{\"zero_optimization\": {\"stage\": 3, \"stage\": 2}}",
         "duplicate key 'zero_optimization.stage' in ds.json:1:24: DeepSpeed "
         "rejects repeated keys"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct zs_dsconfig c;
        struct zs_err err = {0, ""};
        int rc = load(cases[i].text, NULL, &c, &err);
        ck_assert_msg(rc == ZS_EINPUT, "case %zu: rc %d", i, rc);
        ck_assert_str_eq(err.msg, cases[i].msg);
    }
}
END_TEST

START_TEST(test_bad_files)
{
    struct zs_dsconfig c;
    struct zs_trainer_args t;
    struct zs_ds_version v;
    struct zs_err err = {0, ""};
    static const char *const bad_versions[] = {"0.14",     "x.y.z", "0.14.2.1",
                                               "1000.0.0", "",      "0..1"};

    ck_assert_int_eq(
        zs_dsconfig_load("tests/data/bad/ds-malformed.json", NULL, &c, &err),
        ZS_EINPUT);
    ck_assert_str_eq(err.msg,
                     "malformed JSON in tests/data/bad/ds-malformed.json:4:5: "
                     "unexpected '\"'");
    ck_assert_int_eq(
        zs_dsconfig_load("tests/data/bad/ds-no-such-file.json", NULL, &c, &err),
        ZS_EINPUT);
    ck_assert_str_eq(err.msg,
                     "cannot open 'tests/data/bad/ds-no-such-file.json': No "
                     "such file or directory");
    ck_assert_int_eq(zs_trainer_args_load(
                         "tests/data/bad/ds-trainer-args-bad.json", &t, &err),
                     ZS_EINPUT);
    ck_assert_str_eq(err.msg, "invalid 'per_device_train_batch_size' in "
                              "tests/data/bad/ds-trainer-args-bad.json:2:3: "
                              "must be an integer in [1, 1000000] (got 0)");
    for (size_t i = 0; i < sizeof bad_versions / sizeof bad_versions[0]; i++) {
        char want[160];
        snprintf(want, sizeof want,
                 "invalid DeepSpeed version '%s': must be X.Y.Z with each part "
                 "in [0, 999], e.g. 0.14.2",
                 bad_versions[i]);
        ck_assert_int_eq(zs_ds_version_parse(bad_versions[i], &v, &err),
                         ZS_EUSAGE);
        ck_assert_str_eq(err.msg, want);
    }
}
END_TEST

/* Loader and writer under an allocation-failure loop. */
START_TEST(test_alloc_failures)
{
    const char *text = "{\"bf16\": {\"enabled\": \"auto\"}, \"optimizer\": "
                       "{\"type\": \"AdamW\", \"params\": "
                       "{\"lr\": \"auto\", \"betas\": [0.9, 0.95]}}, "
                       "\"zero_optimization\": {\"stage\": 3, "
                       "\"offload_optimizer\": {\"device\": \"cpu\", "
                       "\"pin_memory\": true}, \"bogus\": 1, "
                       "\"reduce_bucket_size\": \"auto\"}, "
                       "\"train_micro_batch_size_per_gpu\": 1}";
    for (long n = 1; n < 10000; n++) {
        struct zs_dsconfig c;
        struct zs_ds_notes notes = {0};
        struct zs_dsconfig_ctx ctx = {0};
        struct zs_err err = {0, ""};
        char *out = NULL;
        int rc;
        ctx.hidden_size = 1024;
        ctx.notes = &notes;
        zs_alloc_fail_at(n);
        rc = load(text, &ctx, &c, &err);
        if (rc == 0)
            rc = zs_dsconfig_to_json(&c, &out, &err);
        zs_free(out);
        if (!zs_alloc_failed()) {
            ck_assert_int_eq(rc, 0);
            zs_alloc_fail_at(0);
            return;
        }
        ck_assert_msg(rc == ZS_ENOMEM, "n=%ld rc=%d msg=%s", n, rc, err.msg);
    }
    zs_alloc_fail_at(0);
    ck_abort_msg("allocation loop did not terminate");
}
END_TEST

/* More unknown keys than the note list holds: counted, not stored. */
START_TEST(test_many_unknown)
{
    char text[4096];
    size_t len = 0;
    struct zs_ds_notes notes = {0};
    struct zs_dsconfig_ctx ctx = {0};
    struct zs_dsconfig c;
    struct zs_err err = {0, ""};
    len += (size_t)snprintf(text + len, sizeof text - len, "{");
    for (int i = 0; i < 40; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%s\"k%d\": %d",
                                i ? ", " : "", i, i);
    snprintf(text + len, sizeof text - len, "}");
    ctx.notes = &notes;
    ck_assert_int_eq(load(text, &ctx, &c, &err), 0);
    ck_assert_int_eq(c.n_unknown, 40);
    ck_assert_int_eq(notes.n, ZS_DS_NOTES_MAX);
    ck_assert_int_eq(notes.dropped, 40 - ZS_DS_NOTES_MAX);
}
END_TEST

/* The key table read both ways: every zsim setting a DeepSpeed key maps to,
 * set to a value unlike its default, written as JSON through the table
 * (zs_ds_keys_from_cfg + zs_dsconfig_to_json), read back and copied into a
 * fresh configuration (zs_ds_keys_to_cfg) comes back unchanged.  A flag that
 * was given wins over the file. */
START_TEST(test_keys_both_ways)
{
    struct zs_cfg a, b;
    struct zs_dsconfig_ctx ctx = {0};
    struct zs_dsconfig ds, back;
    struct zs_cfg_given given = {0};
    struct zs_err err = {0, ""};
    char *text = NULL;

    zs_cfg_defaults(&a);
    a.zero = 3;
    a.offload_optimizer = ZS_OFF_NVME;
    a.offload_param = ZS_OFF_NVME; /* the writer prints NVMe keys only for nvme */
    a.pin_optimizer = true;
    a.pin_param = false;
    a.nvme_buffer_count = 6;
    a.pipeline_read = true;
    a.pipeline_write = true;
    a.param_buffer_count = 7;
    a.param_buffer_size = 123456789;
    a.param_max_in_cpu = 2000000000;
    a.reduce_bucket_size = 67108864;       /* 8192^2 */
    a.prefetch_bucket_size = 60397977;     /* 0.9 * 8192^2 */
    a.param_persistence_threshold = 81920; /* 10 * 8192 */
    a.max_live_parameters = 300000000;
    a.max_reuse_distance = 400000000;
    a.sub_group_size = 500000000;
    a.overlap_comm_on = false; /* what is written: the resolved value */
    a.contiguous_gradients = false;
    a.micro_batch = 3;
    a.accum = 5;
    a.gradient_clipping = 0.25;

    ctx.version.minor = 19;
    ctx.version.patch = 6;
    zs_dsconfig_defaults(&ctx, &ds);
    zs_ds_keys_from_cfg(&a, &ds);
    ds.have_zero_block = true;
    ds.offload_optimizer.present = ds.offload_param.present = true;
    ck_assert_int_eq(zs_dsconfig_to_json(&ds, &text, &err), 0);
    ck_assert_int_eq(load(text, &ctx, &back, &err), 0);
    zs_free(text);
    ck_assert_int_eq(back.zero_stage.v, 3);
    ck_assert(back.offload_optimizer.pin_memory.v);
    ck_assert(!back.offload_param.pin_memory.v);

    zs_cfg_defaults(&b);
    zs_ds_keys_to_cfg(&back, &b, &given);
    ck_assert_int_eq(b.offload_optimizer, ZS_OFF_NVME);
    ck_assert_int_eq(b.offload_param, ZS_OFF_NVME);
    ck_assert_int_eq(b.nvme_buffer_count, 6);
    ck_assert(b.pipeline_read && b.pipeline_write);
    ck_assert_int_eq(b.param_buffer_count, 7);
    ck_assert_int_eq(b.param_buffer_size, 123456789);
    ck_assert_int_eq(b.param_max_in_cpu, 2000000000);
    ck_assert_int_eq(b.reduce_bucket_size, 67108864);
    ck_assert_int_eq(b.prefetch_bucket_size, 60397977);
    ck_assert_int_eq(b.param_persistence_threshold, 81920);
    ck_assert_int_eq(b.max_live_parameters, 300000000);
    ck_assert_int_eq(b.max_reuse_distance, 400000000);
    ck_assert_int_eq(b.sub_group_size, 500000000);
    ck_assert(!b.overlap_comm && !b.contiguous_gradients);
    ck_assert_int_eq(b.micro_batch, 3);
    ck_assert_int_eq(b.grad_accum, 5); /* written from accum, read as the
                                          --grad-accum request */
    ck_assert(b.gradient_clipping == 0.25);

    /* a flag given on the command line keeps its value */
    zs_cfg_defaults(&b);
    b.micro_batch = 9;
    zs_cfg_given_add(&given, "micro-batch");
    zs_ds_keys_to_cfg(&back, &b, &given);
    ck_assert_int_eq(b.micro_batch, 9);
    ck_assert_int_eq(b.sub_group_size, 500000000);
}
END_TEST

/* Releases that read a key: aio's parallelism was "thread_count" before
 * 0.16.4 (PR #7056); bf16 master weights are read from 0.18.3 (PR #7700). */
START_TEST(test_key_versions)
{
    struct zs_ds_version v0163 = {0, 16, 3}, v0164 = {0, 16, 4},
                         v0182 = {0, 18, 2}, v0183 = {0, 18, 3};
    ck_assert(zs_ds_key_read_by("aio.thread_count", &v0163));
    ck_assert(!zs_ds_key_read_by("aio.thread_count", &v0164));
    ck_assert(!zs_ds_key_read_by("aio.intra_op_parallelism", &v0163));
    ck_assert(zs_ds_key_read_by("aio.intra_op_parallelism", &v0164));
    ck_assert(!zs_ds_key_read_by("bf16.bf16_master_weights_and_grads", &v0182));
    ck_assert(zs_ds_key_read_by("bf16.bf16_master_weights_and_grads", &v0183));
    ck_assert(zs_ds_key_read_by("zero_optimization.reduce_bucket_size",
                                &v0163));
}
END_TEST

Suite *suite_dsconfig(void)
{
    Suite *s = suite_create("dsconfig");
    TCase *core = tcase_create("core");
    TCase *limits = tcase_create("limits");
    TCase *bad = tcase_create("bad input");
    tcase_add_test(core, test_auto_resolution);
    tcase_add_test(core, test_auto_unresolved);
    tcase_add_test(core, test_defaults);
    tcase_add_test(core, test_unknown_keys);
    tcase_add_test(core, test_versions);
    tcase_add_test(core, test_trainer_args);
    tcase_add_test(core, test_write_roundtrip);
    tcase_add_test(core, test_keys_both_ways);
    tcase_add_test(core, test_key_versions);
    tcase_add_test(limits, test_alloc_failures);
    tcase_add_test(limits, test_many_unknown);
    tcase_add_test(core, test_derived_micro_batch);
    tcase_add_test(core, test_ulysses_batch);
    tcase_add_test(core, test_deepcompile_by_version);
    tcase_add_test(core, test_legacy_cpu_offload);
    tcase_add_test(bad, test_bad_input);
    tcase_add_test(bad, test_bad_files);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    suite_add_tcase(s, bad);
    return s;
}
