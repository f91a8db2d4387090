/*
 * ds_keys.c — see ds_keys.h.  The tables follow DeepSpeed's own config
 * classes at v0.19.6 (edaa72212): deepspeed/runtime/config.py (top level,
 * read with dict.get), runtime/zero/config.py (DeepSpeedZeroConfig),
 * runtime/zero/offload_config.py, runtime/swap_tensor/aio_config.py and
 * constants.py, runtime/precision_config.py, runtime/activation_checkpointing/
 * config.py; reference/zero3-offload-mechanics.md §0 has the defaults with
 * their lines.  Where the code default and the docs table disagree, the code
 * wins (stage3_prefetch_bucket_size is 5e7 in config.py, 5e8 in the docs).
 */
#include "train/ds_keys.h"

#include <stdint.h>
#include <string.h>

const char *const zs_ds_device_names[] = {"none", "cpu", "nvme", NULL};
/* Index 0 stands for null ("follow the precision"). */
const char *const zs_ds_dtype_names[] = {"", "fp16", "bf16", "fp32", NULL};

#define O(m) offsetof(struct zs_dsconfig, m)
#define C(m, t) {offsetof(struct zs_cfg, m), ZS_DKC_##t}
#define BIG 1e15
#define SKIP(k) {.key = k, .kind = ZS_DK_SKIP}
#define TAB(rows) {rows, sizeof rows / sizeof rows[0]}

/* offload_config.py DeepSpeedZeroOffloadParamConfig: device none,
 * buffer_count 5, buffer_size 1e8, max_in_cpu 1e9 (:36,39); pin_memory False
 * up to 0.19.4, True from 0.19.5 (PR #8207). */
static const struct zs_dkey k_offload_param[] = {
    {.key = "device", .kind = ZS_DK_ENUM, .off = O(offload_param.device),
     .flags = ZS_DK_IN_BLOCK, .choices = zs_ds_device_names,
     .def = ZS_DS_DEV_NONE, .flag = "offload-param",
     .in = C(offload_param, INT), .out = C(offload_param, INT)},
    {.key = "pin_memory", .kind = ZS_DK_BOOL, .off = O(offload_param.pin_memory),
     .def = 0, .def2_from = {0, 19, 5}, .def2 = 1, .out = C(pin_param, BOOL)},
    {.key = "buffer_count", .kind = ZS_DK_INT, .off = O(offload_param.buffer_count),
     .max = 1e6, .flags = ZS_DK_IN_BLOCK, .def = 5, .flag = "param-buffer-count",
     .in = C(param_buffer_count, I64), .out = C(param_buffer_count, I64)},
    {.key = "nvme_path", .kind = ZS_DK_PATH, .off = O(offload_param.nvme_path)},
    {.key = "buffer_size", .kind = ZS_DK_INT, .off = O(offload_param.buffer_size),
     .max = BIG, .flags = ZS_DK_IN_BLOCK, .def = 1e8, .flag = "param-buffer-size",
     .in = C(param_buffer_size, I64), .out = C(param_buffer_size, I64)},
    {.key = "max_in_cpu", .kind = ZS_DK_INT, .off = O(offload_param.max_in_cpu),
     .max = BIG, .flags = ZS_DK_IN_BLOCK, .def = 1e9, .flag = "param-max-in-cpu",
     .in = C(param_max_in_cpu, I64), .out = C(param_max_in_cpu, I64)},
};
static const struct zs_dtab t_offload_param = TAB(k_offload_param);

/* DeepSpeedZeroOffloadOptimizerConfig: device none, ratio 1.0, buffer_count
 * 4, pipeline_read/write False; pin_memory as offload_param. */
static const struct zs_dkey k_offload_opt[] = {
    {.key = "device", .kind = ZS_DK_ENUM, .off = O(offload_optimizer.device),
     .flags = ZS_DK_IN_BLOCK, .choices = zs_ds_device_names,
     .def = ZS_DS_DEV_NONE, .flag = "offload-optimizer",
     .in = C(offload_optimizer, INT), .out = C(offload_optimizer, INT)},
    {.key = "pin_memory", .kind = ZS_DK_BOOL,
     .off = O(offload_optimizer.pin_memory), .def = 0, .def2_from = {0, 19, 5},
     .def2 = 1, .out = C(pin_optimizer, BOOL)},
    /* Twin-Flow, PR #4636 (b1cb0dfc4), first in v0.12.3 */
    {.key = "ratio", .kind = ZS_DK_NUM, .off = O(offload_optimizer.ratio),
     .max = 1, .def = 1.0, .since = {0, 12, 3}, .flag = "offload-ratio",
     .in = C(offload_ratio, DOUBLE), .out = C(offload_ratio, DOUBLE)},
    {.key = "buffer_count", .kind = ZS_DK_INT,
     .off = O(offload_optimizer.buffer_count), .max = 1e6,
     .flags = ZS_DK_IN_BLOCK, .def = 4, .flag = "nvme-buffer-count",
     .in = C(nvme_buffer_count, I64), .out = C(nvme_buffer_count, I64)},
    {.key = "nvme_path", .kind = ZS_DK_PATH,
     .off = O(offload_optimizer.nvme_path)},
    {.key = "pipeline_read", .kind = ZS_DK_BOOL,
     .off = O(offload_optimizer.pipeline_read), .flags = ZS_DK_IN_BLOCK,
     .flag = "pipeline-read", .in = C(pipeline_read, BOOL),
     .out = C(pipeline_read, BOOL)},
    {.key = "pipeline_write", .kind = ZS_DK_BOOL,
     .off = O(offload_optimizer.pipeline_write), .flags = ZS_DK_IN_BLOCK,
     .flag = "pipeline-write", .in = C(pipeline_write, BOOL),
     .out = C(pipeline_write, BOOL)},
    SKIP("fast_init"),
    {.key = "super_offload", .kind = ZS_DK_BOOL,
     .off = O(offload_optimizer.super_offload), .since = {0, 18, 0}},
    SKIP("cpuadam_cores_perc"),
};
static const struct zs_dtab t_offload_opt = TAB(k_offload_opt);

/* "aio" (get_aio_config, swap_tensor/aio_config.py; AIO_*_DEFAULT in
 * constants.py): block_size 1048576, queue_depth 8, intra_op_parallelism 1,
 * single_submit false, overlap_events true, use_gds false.
 * "intra_op_parallelism" is read from 0.16.4; before, the same setting was
 * "thread_count" (PR #7056, commit c9da4892). */
static const struct zs_dkey k_aio[] = {
    {.key = "block_size", .kind = ZS_DK_INT, .off = O(aio.block_size),
     .min = 1, .max = 1e10, .def = 1048576},
    {.key = "queue_depth", .kind = ZS_DK_INT, .off = O(aio.queue_depth),
     .min = 1, .max = 65536, .def = 8},
    {.key = "intra_op_parallelism", .kind = ZS_DK_INT,
     .off = O(aio.intra_op_parallelism), .min = 1, .max = 1024, .def = 1,
     .since = {0, 16, 4}},
    {.key = "thread_count", .kind = ZS_DK_INT, .off = O(aio.thread_count),
     .min = 1, .max = 1024, .def = 1, .until = {0, 16, 4}},
    {.key = "single_submit", .kind = ZS_DK_BOOL, .off = O(aio.single_submit)},
    {.key = "overlap_events", .kind = ZS_DK_BOOL, .off = O(aio.overlap_events),
     .def = 1},
    {.key = "use_gds", .kind = ZS_DK_BOOL, .off = O(aio.use_gds)},
};
static const struct zs_dtab t_aio = TAB(k_aio);

/* "auto" bucket sizes from the hidden size h under ZeRO-3, as HF
 * Transformers fills them (integrations/deepspeed.py, HfTrainerDeepSpeedConfig
 * .trainer_config_finalize: reduce_bucket_size = h*h,
 * stage3_prefetch_bucket_size = int(0.9*h*h), stage3_param_persistence_
 * threshold = 10*h; TRL's prepare_deepspeed uses the same three; mechanics
 * §0). */
static int64_t auto_h2(int64_t h)
{
    return h * h;
}
static int64_t auto_09h2(int64_t h)
{
    return (int64_t)(0.9 * (double)h * (double)h);
}
static int64_t auto_10h(int64_t h)
{
    return 10 * h;
}

#define ZI(k, m, lo, hi, fl, d, flg, field, ...)                               \
    {.key = k, .kind = ZS_DK_INT, .off = O(m), .min = lo, .max = hi,           \
     .flags = (fl), .def = d, .flag = flg, .in = C(field, I64),                \
     .out = C(field, I64), .auto_of_hidden = __VA_ARGS__}
#define ZALIAS(k, kind_, m, lo, hi, fl)                                        \
    {.key = k, .kind = kind_, .off = O(m), .min = lo, .max = hi,               \
     .flags = (fl) | ZS_DK_ALIAS}

/* zero_optimization (zero/config.py DeepSpeedZeroConfig).  The stage3_*
 * names are pydantic aliases of the short field names; both are read
 * (populate_by_name=True, config_utils.py).  The ZS_DK_WRITE rows are in the
 * order `plan --emit-ds-config` prints them.  overlap_comm's default None
 * becomes True for stage 3 (overlap_comm_valid), which dsconfig.c's resolve()
 * applies; its row holds False. */
/* zero_optimization.zenflow (ZenFlowConfig, runtime/zenflow/zenflow_config.py
 * at edaa722; extra="forbid" as every DeepSpeedConfigModel): known, not
 * modelled (setup.c refuses the block). */
static const struct zs_dkey k_zenflow[] = {
    SKIP("topk_ratio"),         SKIP("select_strategy"),
    SKIP("select_interval"),    SKIP("update_interval"),
    SKIP("overlap_step"),       SKIP("offload"),
    SKIP("auto_ratio"),         SKIP("full_warm_up_rounds"),
    SKIP("pt_reserved_cores_perc"), SKIP("steps_per_epoch"),
};
static const struct zs_dtab t_zenflow = TAB(k_zenflow);

static const struct zs_dkey k_zero[] = {
    {.key = "stage", .kind = ZS_DK_INT, .off = O(zero_stage), .max = 3,
     .flags = ZS_DK_AUTO, .out = C(zero, I64)},
    {.key = "offload_param", .kind = ZS_DK_OBJ, .off = O(offload_param.present),
     .flags = ZS_DK_FORBID | ZS_DK_PRESENT, .sub = &t_offload_param,
     .loc_off = O(offload_param.line)},
    {.key = "offload_optimizer", .kind = ZS_DK_OBJ,
     .off = O(offload_optimizer.present), .flags = ZS_DK_FORBID | ZS_DK_PRESENT,
     .sub = &t_offload_opt, .loc_off = O(offload_optimizer.line)},
    {.key = "zenflow", .kind = ZS_DK_OBJ, .off = O(zenflow.present),
     .flags = ZS_DK_FORBID | ZS_DK_PRESENT, .sub = &t_zenflow,
     .loc_off = O(zenflow.line), .since = {0, 17, 5}},
    {.key = "overlap_comm", .kind = ZS_DK_BOOL, .off = O(overlap_comm),
     .flags = ZS_DK_WRITE, .flag = "overlap-comm", .in = C(overlap_comm, INT),
     .out = C(overlap_comm_on, BOOL)},
    {.key = "contiguous_gradients", .kind = ZS_DK_BOOL,
     .off = O(contiguous_gradients), .flags = ZS_DK_WRITE, .def = 1,
     .flag = "contiguous-gradients", .in = C(contiguous_gradients, BOOL),
     .out = C(contiguous_gradients, BOOL)},
    {.key = "reduce_scatter", .kind = ZS_DK_BOOL, .off = O(reduce_scatter),
     .flags = ZS_DK_WRITE, .def = 1},
    ZI("reduce_bucket_size", reduce_bucket_size, 0, BIG,
       ZS_DK_AUTO | ZS_DK_WRITE, 5e8, "reduce-bucket-size", reduce_bucket_size,
       auto_h2),
    /* stage 1/2 only */
    {.key = "allgather_bucket_size", .kind = ZS_DK_INT,
     .off = O(allgather_bucket_size), .max = BIG, .flags = ZS_DK_WRITE,
     .def = 5e8},
    ZI("sub_group_size", sub_group_size, 1, BIG, ZS_DK_WRITE, 1e9,
       "sub-group-size", sub_group_size, NULL),
    ZI("stage3_prefetch_bucket_size", stage3_prefetch_bucket_size, 0, BIG,
       ZS_DK_AUTO | ZS_DK_WRITE, 5e7, "prefetch-bucket-size",
       prefetch_bucket_size, auto_09h2),
    ZALIAS("prefetch_bucket_size", ZS_DK_INT, stage3_prefetch_bucket_size, 0,
           BIG, ZS_DK_AUTO),
    ZI("stage3_param_persistence_threshold", stage3_param_persistence_threshold,
       0, BIG, ZS_DK_AUTO | ZS_DK_WRITE, 1e5, "param-persistence-threshold",
       param_persistence_threshold, auto_10h),
    ZALIAS("param_persistence_threshold", ZS_DK_INT,
           stage3_param_persistence_threshold, 0, BIG, ZS_DK_AUTO),
    ZI("stage3_max_live_parameters", stage3_max_live_parameters, 0, BIG,
       ZS_DK_WRITE, 1e9, "max-live-parameters", max_live_parameters, NULL),
    ZALIAS("max_live_parameters", ZS_DK_INT, stage3_max_live_parameters, 0,
           BIG, 0),
    ZI("stage3_max_reuse_distance", stage3_max_reuse_distance, 0, BIG,
       ZS_DK_WRITE, 1e9, "max-reuse-distance", max_reuse_distance, NULL),
    ZALIAS("max_reuse_distance", ZS_DK_INT, stage3_max_reuse_distance, 0, BIG,
           0),
    {.key = "stage3_gather_16bit_weights_on_model_save", .kind = ZS_DK_BOOL,
     .off = O(stage3_gather_16bit_weights_on_model_save),
     .flags = ZS_DK_AUTO | ZS_DK_WRITE},
    ZALIAS("gather_16bit_weights_on_model_save", ZS_DK_BOOL,
           stage3_gather_16bit_weights_on_model_save, 0, 0, ZS_DK_AUTO),
    ZALIAS("stage3_gather_fp16_weights_on_model_save", ZS_DK_BOOL,
           stage3_gather_16bit_weights_on_model_save, 0, 0, ZS_DK_AUTO),
    {.key = "stage3_use_all_reduce_for_fetch_params", .kind = ZS_DK_BOOL,
     .off = O(stage3_use_all_reduce_for_fetch_params), .flags = ZS_DK_WRITE},
    ZALIAS("use_all_reduce_for_fetch_params", ZS_DK_BOOL,
           stage3_use_all_reduce_for_fetch_params, 0, 0, 0),
    /* Field(1, ge=0) */
    {.key = "zero_hpz_partition_size", .kind = ZS_DK_INT,
     .off = O(zero_hpz_partition_size), .min = 0, .max = 1e6,
     .flags = ZS_DK_WRITE, .def = 1},
    ZI("stage3_model_persistence_threshold",
       stage3_model_persistence_threshold, 0, 1e18, 0, 1e18,
       "model-persistence-threshold", model_persistence_threshold, NULL),
    ZALIAS("model_persistence_threshold", ZS_DK_INT,
           stage3_model_persistence_threshold, 0, 1e18, 0),
    SKIP("stage3_module_granularity_threshold"),
    SKIP("module_granularity_threshold"),
    SKIP("stage3_allgather_sequential"),
    SKIP("allgather_partitions"),
    SKIP("load_from_fp32_weights"),
    SKIP("elastic_checkpoint"),
    {.key = "cpu_offload", .kind = ZS_DK_BOOL, .off = O(cpu_offload)},
    {.key = "cpu_offload_param", .kind = ZS_DK_BOOL,
     .off = O(cpu_offload_param)},
    SKIP("cpu_offload_use_pin_memory"),
    SKIP("ignore_unused_parameters"),
    SKIP("legacy_stage1"),
    SKIP("round_robin_gradients"),
    {.key = "zero_quantized_weights", .kind = ZS_DK_BOOL,
     .off = O(zero_quantized_weights)},
    {.key = "zero_quantized_nontrainable_weights", .kind = ZS_DK_BOOL,
     .off = O(zero_quantized_nontrainable_weights)},
    {.key = "zero_quantized_gradients", .kind = ZS_DK_BOOL,
     .off = O(zero_quantized_gradients)},
    {.key = "mics_shard_size", .kind = ZS_DK_INT, .off = O(mics_shard_size),
     .min = -1, .max = 1e6, .def = -1},
    SKIP("mics_hierarchical_params_gather"),
    SKIP("memory_efficient_linear"),
    SKIP("pipeline_loading_checkpoint"),
    SKIP("override_module_apply"),
    SKIP("log_trace_cache_warnings"),
};
static const struct zs_dtab t_zero = TAB(k_zero);

/* optimizer.params is passed to the optimizer's constructor: an open dict.
 * DeepSpeedCPUAdam / FusedAdam defaults: lr 1e-3, betas (0.9, 0.999) (set in
 * zs_ds_keys_defaults), eps 1e-8, weight_decay 0.  torch_adam / fused:
 * engine.py:2096-2106 (0.19.6). */
static const struct zs_dkey k_opt_params[] = {
    {.key = "lr", .kind = ZS_DK_NUM, .off = O(optimizer.lr), .max = 1e6,
     .flags = ZS_DK_AUTO, .def = 1e-3},
    {.key = "weight_decay", .kind = ZS_DK_NUM, .off = O(optimizer.weight_decay),
     .max = 1e6, .flags = ZS_DK_AUTO},
    {.key = "eps", .kind = ZS_DK_NUM, .off = O(optimizer.eps), .max = 1,
     .flags = ZS_DK_AUTO, .def = 1e-8},
    {.key = "betas", .kind = ZS_DK_BETAS, .max = 1, .flags = ZS_DK_AUTO},
    {.key = "torch_adam", .kind = ZS_DK_BOOL, .off = O(optimizer.torch_adam)},
    {.key = "fused", .kind = ZS_DK_BOOL, .off = O(optimizer.fused)},
};
static const struct zs_dtab t_opt_params = TAB(k_opt_params);

static const struct zs_dkey k_optimizer[] = {
    {.key = "type", .kind = ZS_DK_STR, .off = O(optimizer.type)},
    {.key = "params", .kind = ZS_DK_OBJ, .flags = ZS_DK_OPEN,
     .sub = &t_opt_params},
    SKIP("legacy_fusion"),
};
static const struct zs_dtab t_optimizer = TAB(k_optimizer);

static const struct zs_dkey k_scheduler[] = {
    {.key = "type", .kind = ZS_DK_STR, .off = O(scheduler.type)},
    SKIP("params"),
};
static const struct zs_dtab t_scheduler = TAB(k_scheduler);

/* bf16 (precision_config.py): enabled False; bf16_master_weights_and_grads
 * and bf16_optimizer_states False, read from 0.18.3 (PR #7700). */
static const struct zs_dkey k_bf16[] = {
    {.key = "enabled", .kind = ZS_DK_BOOL, .off = O(bf16_enabled),
     .flags = ZS_DK_AUTO},
    SKIP("immediate_grad_update"),
    SKIP("check_grad_overflow"),
    {.key = "bf16_master_weights_and_grads", .kind = ZS_DK_BOOL,
     .off = O(bf16_master_weights_and_grads), .since = {0, 18, 3}},
    {.key = "bf16_optimizer_states", .kind = ZS_DK_BOOL,
     .off = O(bf16_optimizer_states), .since = {0, 18, 3}},
};
static const struct zs_dtab t_bf16 = TAB(k_bf16);

static const struct zs_dkey k_fp16[] = {
    {.key = "enabled", .kind = ZS_DK_BOOL, .off = O(fp16_enabled),
     .flags = ZS_DK_AUTO},
    SKIP("auto_cast"),
    SKIP("loss_scale"),
    SKIP("initial_scale_power"),
    SKIP("loss_scale_window"),
    SKIP("hysteresis"),
    SKIP("consecutive_hysteresis"),
    SKIP("min_loss_scale"),
    SKIP("fp16_master_weights_and_grads"),
};
static const struct zs_dtab t_fp16 = TAB(k_fp16);

/* activation_checkpointing (activation_checkpointing/config.py): every flag
 * False, number_checkpoints None. */
static const struct zs_dkey k_actckpt[] = {
    {.key = "partition_activations", .kind = ZS_DK_BOOL,
     .off = O(activation_checkpointing.partition_activations)},
    {.key = "cpu_checkpointing", .kind = ZS_DK_BOOL,
     .off = O(activation_checkpointing.cpu_checkpointing)},
    {.key = "contiguous_memory_optimization", .kind = ZS_DK_BOOL,
     .off = O(activation_checkpointing.contiguous_memory_optimization)},
    {.key = "synchronize_checkpoint_boundary", .kind = ZS_DK_BOOL,
     .off = O(activation_checkpointing.synchronize_checkpoint_boundary)},
    {.key = "profile", .kind = ZS_DK_BOOL,
     .off = O(activation_checkpointing.profile)},
    {.key = "number_checkpoints", .kind = ZS_DK_INT,
     .off = O(activation_checkpointing.number_checkpoints), .max = 1e9},
};
static const struct zs_dtab t_actckpt = TAB(k_actckpt);

/* compile (compile/config.py CompileConfig at edaa722, extra="forbid"):
 * DeepCompile, from 0.16.6 (227a60c0c), is refused (setup.c); the other
 * fields only tune it.  0.14.0-0.14.3 read enabled / backend / kwargs
 * (runtime/compiler.py), torch.compile of the module: not modelled, read as
 * nothing, as 0.14.4-0.16.5 read no "compile" at all. */
static const struct zs_dkey k_compile[] = {
    {.key = "deepcompile", .kind = ZS_DK_BOOL,
     .off = O(compile.deepcompile), .since = {0, 16, 6}},
    {.key = "enabled", .kind = ZS_DK_SKIP, .since = {0, 14, 0},
     .until = {0, 14, 4}},
    {.key = "backend", .kind = ZS_DK_SKIP, .since = {0, 14, 0},
     .until = {0, 14, 4}},
    {.key = "kwargs", .kind = ZS_DK_SKIP, .since = {0, 14, 0},
     .until = {0, 14, 4}},
    SKIP("free_activation"),       SKIP("free_activation_threshold"),
    SKIP("offload_activation"),    SKIP("offload_activation_pin_memory"),
    SKIP("offload_opt_states"),    SKIP("double_buffer"),
    SKIP("symmetric_memory"),      SKIP("debug_log"),
    SKIP("offload_parameters"),    SKIP("sync_before_reduce"),
    SKIP("sync_after_reduce"),     SKIP("sync_before_allgather"),
    SKIP("sync_after_allgather"),  SKIP("keep_int_input_tensors"),
    SKIP("keep_all_input_tensors"), SKIP("passes"),
};
static const struct zs_dtab t_compile = TAB(k_compile);

/* tensor_parallel (runtime/tensor_parallel/config.py TPTrainingConfig at
 * edaa722, extra="forbid"): AutoTP training, from 0.16.4 (f04649d27), above
 * 1 is refused (setup.c). */
static const struct zs_dkey k_tp[] = {
    {.key = "autotp_size", .kind = ZS_DK_INT,
     .off = O(tensor_parallel.autotp_size), .max = 1e6, .since = {0, 16, 4}},
    SKIP("dtype"),
    SKIP("tp_overlap_comm"),
    SKIP("tensor_parallel"),
    SKIP("tp"),
    SKIP("injection_policy_tuple"),
    SKIP("partition_config"),
    SKIP("preset_model"),
    SKIP("keep_module_on_host"),
    SKIP("replace_with_kernel_inject"),
    SKIP("kernel_inject"),
};
static const struct zs_dtab t_tp = TAB(k_tp);

/* torch_autocast (runtime/constants.py:244-249, config.py:168-190 at
 * edaa722; from 0.17.2, ed5f73755): enabled is refused (setup.c). */
static const struct zs_dkey k_autocast[] = {
    {.key = "enabled", .kind = ZS_DK_BOOL, .off = O(torch_autocast.enabled),
     .since = {0, 17, 2}},
    SKIP("dtype"),
    SKIP("lower_precision_safe_modules"),
};
static const struct zs_dtab t_autocast = TAB(k_autocast);

/* Top level (runtime/config.py reads it with dict.get, so DeepSpeed ignores
 * unknown top-level keys).  Batch defaults: micro-batch 1 and accumulation 1
 * when nothing else derives them (_set_batch_related_parameters); clipping
 * 0.0; communication_data_type None (follows the precision, resolve()). */
static const struct zs_dkey k_top[] = {
    {.key = "train_batch_size", .kind = ZS_DK_INT, .off = O(train_batch_size),
     .min = 1, .max = 1e9, .flags = ZS_DK_AUTO},
    {.key = "train_micro_batch_size_per_gpu", .kind = ZS_DK_INT,
     .off = O(train_micro_batch_size_per_gpu), .min = 1, .max = 1e9,
     .flags = ZS_DK_AUTO, .def = 1, .flag = "micro-batch",
     .in = C(micro_batch, I64), .out = C(micro_batch, I64)},
    {.key = "gradient_accumulation_steps", .kind = ZS_DK_INT,
     .off = O(gradient_accumulation_steps), .min = 1, .max = 1e9,
     .flags = ZS_DK_AUTO, .def = 1, .flag = "grad-accum",
     .in = C(grad_accum, I64), .out = C(accum, I64)},
    {.key = "gradient_clipping", .kind = ZS_DK_NUM, .off = O(gradient_clipping),
     .max = 1e9, .flags = ZS_DK_AUTO, .flag = "gradient-clipping",
     .in = C(gradient_clipping, DOUBLE), .out = C(gradient_clipping, DOUBLE)},
    {.key = "communication_data_type", .kind = ZS_DK_ENUM,
     .off = O(communication_data_type), .choices = zs_ds_dtype_names,
     .def = ZS_DS_DT_FP32},
    {.key = "zero_optimization", .kind = ZS_DK_OBJ, .off = O(have_zero_block),
     .flags = ZS_DK_FORBID | ZS_DK_PRESENT, .sub = &t_zero},
    {.key = "optimizer", .kind = ZS_DK_OBJ, .off = O(optimizer.present),
     .flags = ZS_DK_PRESENT, .sub = &t_optimizer,
     .loc_off = O(optimizer.line)},
    {.key = "scheduler", .kind = ZS_DK_OBJ, .off = O(scheduler.present),
     .flags = ZS_DK_PRESENT, .sub = &t_scheduler},
    {.key = "bf16", .kind = ZS_DK_OBJ, .sub = &t_bf16},
    {.key = "bfloat16", .kind = ZS_DK_OBJ, .flags = ZS_DK_ALIAS,
     .sub = &t_bf16},
    {.key = "fp16", .kind = ZS_DK_OBJ, .sub = &t_fp16},
    {.key = "activation_checkpointing", .kind = ZS_DK_OBJ,
     .off = O(activation_checkpointing.present), .flags = ZS_DK_PRESENT,
     .sub = &t_actckpt, .loc_off = O(activation_checkpointing.line)},
    SKIP("steps_per_print"),
    SKIP("wall_clock_breakdown"),
    SKIP("dump_state"),
    SKIP("memory_breakdown"),
    SKIP("amp"),
    SKIP("prescale_gradients"),
    SKIP("gradient_predivide_factor"),
    SKIP("sparse_gradients"),
    SKIP("zero_allow_untested_optimizer"),
    SKIP("zero_force_ds_cpu_optimizer"),
    SKIP("flops_profiler"),
    SKIP("tensorboard"),
    SKIP("wandb"),
    SKIP("csv_monitor"),
    SKIP("comet"),
    SKIP("comms_logger"),
    {.key = "aio", .kind = ZS_DK_OBJ, .off = O(aio.present),
     .flags = ZS_DK_PRESENT, .sub = &t_aio, .loc_off = O(aio.line)},
    SKIP("checkpoint"),
    SKIP("data_types"),
    SKIP("elasticity"),
    SKIP("autotuning"),
    SKIP("compression_training"),
    SKIP("data_efficiency"),
    SKIP("curriculum_learning"),
    SKIP("sparse_attention"),
    SKIP("pipeline"),
    SKIP("seq_parallel_communication_data_type"),
    /* Ulysses: the group itself comes from the user's mpu; the key divides
     * the data-parallel world from 0.17.0 (4d00b38ad), and zsim takes it as
     * the run's degree in every release */
    {.key = "sequence_parallel_size", .kind = ZS_DK_INT,
     .off = O(sequence_parallel_size), .min = 1, .max = 1e6, .def = 1},
    SKIP("disable_allgather"),
    {.key = "compile", .kind = ZS_DK_OBJ, .off = O(compile.present),
     .flags = ZS_DK_FORBID | ZS_DK_PRESENT, .sub = &t_compile,
     .loc_off = O(compile.line)},
    {.key = "torch_autocast", .kind = ZS_DK_OBJ,
     .off = O(torch_autocast.present), .flags = ZS_DK_PRESENT,
     .sub = &t_autocast, .loc_off = O(torch_autocast.line)},
    {.key = "tensor_parallel", .kind = ZS_DK_OBJ,
     .off = O(tensor_parallel.present), .flags = ZS_DK_FORBID | ZS_DK_PRESENT,
     .sub = &t_tp, .loc_off = O(tensor_parallel.line)},
    SKIP("nebula"),
    SKIP("eigenvalue"),
    SKIP("progressive_layer_drop"),
    SKIP("quantize_training"),
    SKIP("gradient_accumulation_dtype"),
    SKIP("hybrid_engine"),
    SKIP("weight_quantization"),
    SKIP("use_node_local_storage"),
    SKIP("load_universal_checkpoint"),
};
static const struct zs_dtab t_top = TAB(k_top);

const struct zs_dtab *zs_ds_keys_top(void)
{
    return &t_top;
}

const struct zs_dtab *zs_ds_keys_zero(void)
{
    return &t_zero;
}

/* ---- walking the tables ---------------------------------------------------
 */

static bool version_set(const struct zs_ds_version *v)
{
    return v->major || v->minor || v->patch;
}

static bool row_has_value(const struct zs_dkey *k)
{
    return !(k->flags & ZS_DK_ALIAS) &&
           (k->kind == ZS_DK_INT || k->kind == ZS_DK_ENUM ||
            k->kind == ZS_DK_NUM || k->kind == ZS_DK_BOOL);
}

/* A row's value as a double, and back (ints up to 1e15 are exact). */
static double ds_get(const struct zs_dsconfig *c, const struct zs_dkey *k)
{
    const char *p = (const char *)c + k->off;
    switch (k->kind) {
    case ZS_DK_NUM:
        return ((const struct zs_ds_num *)p)->v;
    case ZS_DK_BOOL:
        return ((const struct zs_ds_bool *)p)->v;
    default:
        return (double)((const struct zs_ds_int *)p)->v;
    }
}

static enum zs_ds_origin ds_from(const struct zs_dsconfig *c,
                                 const struct zs_dkey *k)
{
    const char *p = (const char *)c + k->off;
    switch (k->kind) {
    case ZS_DK_NUM:
        return ((const struct zs_ds_num *)p)->from;
    case ZS_DK_BOOL:
        return ((const struct zs_ds_bool *)p)->from;
    default:
        return ((const struct zs_ds_int *)p)->from;
    }
}

void zs_ds_field_put(struct zs_dsconfig *c, const struct zs_dkey *k, double v,
                     enum zs_ds_origin from)
{
    char *p = (char *)c + k->off;
    switch (k->kind) {
    case ZS_DK_NUM:
        ((struct zs_ds_num *)p)->v = v;
        ((struct zs_ds_num *)p)->from = from;
        break;
    case ZS_DK_BOOL:
        ((struct zs_ds_bool *)p)->v = v != 0;
        ((struct zs_ds_bool *)p)->from = from;
        break;
    default:
        ((struct zs_ds_int *)p)->v = (int64_t)v;
        ((struct zs_ds_int *)p)->from = from;
        break;
    }
}

static double cfg_get(const void *cfg, struct zs_dk_cfg f)
{
    const char *p = (const char *)cfg + f.off;
    switch (f.type) {
    case ZS_DKC_I64:
        return (double)*(const int64_t *)p;
    case ZS_DKC_INT:
        return *(const int *)p;
    case ZS_DKC_BOOL:
        return *(const bool *)p;
    case ZS_DKC_DOUBLE:
        return *(const double *)p;
    default:
        return 0;
    }
}

static void cfg_put(void *cfg, struct zs_dk_cfg f, double v)
{
    char *p = (char *)cfg + f.off;
    switch (f.type) {
    case ZS_DKC_I64:
        *(int64_t *)p = (int64_t)v;
        break;
    case ZS_DKC_INT:
        *(int *)p = (int)v;
        break;
    case ZS_DKC_BOOL:
        *(bool *)p = v != 0;
        break;
    case ZS_DKC_DOUBLE:
        *(double *)p = v;
        break;
    default:
        break;
    }
}

static double row_default(const struct zs_dkey *k,
                          const struct zs_ds_version *v)
{
    bool later =
        version_set(&k->def2_from) && zs_ds_version_cmp(v, &k->def2_from) >= 0;
    return later ? k->def2 : k->def;
}

static void defaults_of(const struct zs_dtab *t, struct zs_dsconfig *c)
{
    for (size_t i = 0; i < t->n; i++) {
        const struct zs_dkey *k = &t->keys[i];
        if (k->kind == ZS_DK_OBJ && !(k->flags & ZS_DK_ALIAS))
            defaults_of(k->sub, c);
        else if (row_has_value(k))
            zs_ds_field_put(c, k, row_default(k, &c->version), ZS_DS_DEFAULT);
    }
}

void zs_ds_keys_defaults(struct zs_dsconfig *c)
{
    defaults_of(&t_top, c);
    /* fields without a key of their own */
    c->offload_param.ratio.v = 1.0;
    c->optimizer.beta1.v = 0.9;
    c->optimizer.beta2.v = 0.999;
}

static void to_cfg_of(const struct zs_dtab *t, bool block_present,
                      const struct zs_dsconfig *ds, struct zs_cfg *cfg,
                      const struct zs_cfg_given *given)
{
    for (size_t i = 0; i < t->n; i++) {
        const struct zs_dkey *k = &t->keys[i];
        enum zs_ds_origin from;
        if (k->kind == ZS_DK_OBJ && !(k->flags & ZS_DK_ALIAS)) {
            bool present = !(k->flags & ZS_DK_PRESENT) ||
                           *(const bool *)((const char *)ds + k->off);
            to_cfg_of(k->sub, present, ds, cfg, given);
            continue;
        }
        if (!k->in.type || (k->flag && zs_cfg_given_has(given, k->flag)))
            continue;
        from = ds_from(ds, k);
        if ((k->flags & ZS_DK_IN_BLOCK) ? block_present
                                        : from == ZS_DS_SET ||
                                              from == ZS_DS_AUTO)
            cfg_put(cfg, k->in, ds_get(ds, k));
    }
}

void zs_ds_keys_to_cfg(const struct zs_dsconfig *ds, struct zs_cfg *cfg,
                       const struct zs_cfg_given *given)
{
    to_cfg_of(&t_top, true, ds, cfg, given);
}

static void from_cfg_of(const struct zs_dtab *t, const struct zs_cfg *cfg,
                        struct zs_dsconfig *ds)
{
    for (size_t i = 0; i < t->n; i++) {
        const struct zs_dkey *k = &t->keys[i];
        if (k->kind == ZS_DK_OBJ && !(k->flags & ZS_DK_ALIAS))
            from_cfg_of(k->sub, cfg, ds);
        else if (k->out.type)
            zs_ds_field_put(ds, k, cfg_get(cfg, k->out), ZS_DS_SET);
    }
}

void zs_ds_keys_from_cfg(const struct zs_cfg *cfg, struct zs_dsconfig *ds)
{
    from_cfg_of(&t_top, cfg, ds);
}

static const struct zs_dkey *find(const struct zs_dtab *t, const char *q)
{
    const char *dot = strchr(q, '.');
    size_t len = dot ? (size_t)(dot - q) : strlen(q);
    for (size_t i = 0; i < t->n; i++) {
        const struct zs_dkey *k = &t->keys[i];
        if (strlen(k->key) != len || strncmp(k->key, q, len))
            continue;
        if (!dot)
            return k;
        return k->kind == ZS_DK_OBJ ? find(k->sub, dot + 1) : NULL;
    }
    return NULL;
}

bool zs_ds_auto_take(enum zs_ds_origin *from, bool can)
{
    if (*from != ZS_DS_AUTO)
        return false;
    if (!can)
        *from = ZS_DS_AUTO_UNRESOLVED;
    return can;
}

void zs_ds_keys_auto_hidden(struct zs_dsconfig *ds, bool can, int64_t h)
{
    for (size_t i = 0; i < t_zero.n; i++) {
        const struct zs_dkey *k = &t_zero.keys[i];
        struct zs_ds_int *d = (struct zs_ds_int *)((char *)ds + k->off);
        if (k->auto_of_hidden && !(k->flags & ZS_DK_ALIAS) &&
            zs_ds_auto_take(&d->from, can))
            d->v = k->auto_of_hidden(h);
    }
}

void zs_ds_keys_auto_hidden_cfg(struct zs_cfg *cfg, int64_t h)
{
    for (size_t i = 0; i < t_zero.n; i++) {
        const struct zs_dkey *k = &t_zero.keys[i];
        if (k->auto_of_hidden && !(k->flags & ZS_DK_ALIAS) &&
            cfg_get(cfg, k->in) < 0)
            cfg_put(cfg, k->in, (double)k->auto_of_hidden(h));
    }
}

double zs_ds_key_default(const char *qualified, const struct zs_ds_version *v)
{
    const struct zs_dkey *k = find(&t_top, qualified);
    return k && row_has_value(k) ? row_default(k, v) : 0;
}

bool zs_ds_key_read_by(const char *qualified, const struct zs_ds_version *v)
{
    const struct zs_dkey *k = find(&t_top, qualified);
    if (!k)
        return true;
    if (version_set(&k->since) && zs_ds_version_cmp(v, &k->since) < 0)
        return false;
    return !version_set(&k->until) || zs_ds_version_cmp(v, &k->until) < 0;
}
