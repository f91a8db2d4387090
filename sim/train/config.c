/*
 * config.c — the one table of training-configuration fields, read from
 * scenario JSON and from flags alike (DESIGN §4), and the cross-field rules.
 *
 * Defaults are DeepSpeed's code defaults (deepspeed/runtime/zero/config.py,
 * reference zero3-offload-mechanics.md §0) unless a comment says otherwise.
 */
#include "train/config.h"
#include "train/ds_keys.h"
#include "util/json.h"
#include "util/strutil.h"
#include "util/units.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OFF(f) offsetof(struct zs_cfg, f)
#define BIG 1e12

static const char *const k_methods[] = {"full", "lora", "qlora", NULL};
static const char *const k_frameworks[] = {"deepspeed", "fsdp2", NULL};
static const char *const k_offloads[] = {"none", "cpu", "nvme", NULL};
static const char *const k_ckpts[] = {"none", "selective", "full", "op", NULL};
/* in enum zs_attn_impl's order (model.h) */
static const char *const k_attns[] = {"flash", "eager", "triton", "sdpa",
                                      "auto", NULL};
static const char *const k_losses[] = {
    "auto", "full", "chunked", "fp32-output", "flash-xentropy", "half",
    "fp32-logits", NULL};
static const char *const k_kernels[] = {"hf", "fused", "compiled", NULL};
static const char *const k_alloc_confs[] = {"default", "expandable_segments",
                                            NULL};
static const char *const k_tri[] = {"no", "yes", "auto", NULL};
static const char *const k_optims[] = {"adamw", "adamw_8bit",
                                       "paged_adamw_8bit", NULL};
static const char *const k_load_dtypes[] = {"fp32", "bf16", NULL};
static const char *const k_trainers[] = {"hf", "torchtitan", "torchtune",
                                         NULL};
static const char *const k_cpu_opts[] = {"auto", "ds-cpu-adam", "torch-fused",
                                         "torch-loop", NULL};
static const char *const k_launchers[] = {
    "auto", "deepspeed", "deepspeed-bind", "torchrun", "accelerate", NULL};
static const char *const k_dtypes[] = {"auto", "fp32", "bf16", NULL};
static const char *const k_shardings[] = {"auto", "none", "no-shard", NULL};

const char *zs_sharding_name(int sharding)
{
    return sharding >= ZS_SHARD_AUTO && sharding <= ZS_SHARD_NO_SHARD
               ? k_shardings[sharding]
               : "?";
}
static const char *const k_fp8s[] = {"none", "tensorwise", NULL};

/* Knobs that accept "auto" (resolved like Accelerate/TRL) are ZS_F_CUSTOM and
 * read by read_auto_knob; their min/max still state the range. */
static const struct zs_field k_fields[] = {
    {"name", ZS_F_STRING, OFF(name), 0, 0, 0, 0, NULL,
     sizeof(((struct zs_cfg *)0)->name), ""},
    {"model", ZS_F_STRING, OFF(model), 0, 0, 0, 0, NULL,
     sizeof(((struct zs_cfg *)0)->model), "72b"},
    {"gpus", ZS_F_STRING, OFF(gpus), 0, 0, 0, 0, NULL,
     sizeof(((struct zs_cfg *)0)->gpus), "8xH100"},
    {"nodes", ZS_F_INT, OFF(nodes), 0, 4096, 0, 0, NULL, 0, NULL},
    {"host_ram", ZS_F_BYTES, OFF(host_ram_bytes), 0, 1e15, 0, 0, NULL, 0, NULL},
    /* host RAM kept from training for the OS and other processes; 0: the
     * node profile's (hw.c zs_hw_set_host) */
    {"host_reserved", ZS_F_BYTES, OFF(host_reserved_bytes), 0, 1e15, 0, 0, NULL,
     0, NULL},
    {"seq_len", ZS_F_INT, OFF(seq_len), 1, 4194304, 4096, 0, NULL, 0, NULL},
    {"micro_batch", ZS_F_INT, OFF(micro_batch), 1, 4096, 1, 0, NULL, 0, NULL},
    {"grad_accum", ZS_F_INT, OFF(grad_accum), 0, 65536, 0, 0, NULL, 0, NULL},
    {"global_batch", ZS_F_INT, OFF(global_batch), 0, 16777216, 0, 0, NULL, 0,
     NULL},
    {"method", ZS_F_ENUM, OFF(method), 0, 0, ZS_METHOD_FULL, 0, k_methods, 0,
     NULL},
    {"lora_rank", ZS_F_INT, OFF(lora_rank), 1, 65536, 16, 0, NULL, 0, NULL},
    /* PEFT LoraConfig lora_dropout: 0.0 is PEFT's default (nn.Identity);
     * the saved dropout output and mask it adds are in model.c */
    {"lora_dropout", ZS_F_DOUBLE, OFF(lora_dropout), 0, 0.99, 0, 0, NULL, 0,
     NULL},
    /* PEFT's target_modules="all-linear" (every linear but the head) is the
     * default; torchtune's LoRA recipes name theirs (lora_attn_modules,
     * apply_lora_to_mlp), e.g. llama3_1/8B_lora_single_device.yaml at
     * 0031bfb080bd35ec533c412df883cf2bf7bf7fe4: q_proj and v_proj only =
     * "q,v".  Resolved into lora_target_mask by zs_cfg_resolve. */
    {"lora_targets", ZS_F_STRING, OFF(lora_targets), 0, 0, 0, 0, NULL,
     sizeof(((struct zs_cfg *)0)->lora_targets), "all"},
    {"framework", ZS_F_ENUM, OFF(framework), 0, 0, ZS_FW_DEEPSPEED, 0,
     k_frameworks, 0, NULL},
    {"zero", ZS_F_INT, OFF(zero), 2, 3, 3, 0, NULL, 0, NULL},
    {"offload_optimizer", ZS_F_ENUM, OFF(offload_optimizer), 0, 0, ZS_OFF_NONE,
     0, k_offloads, 0, NULL},
    {"offload_param", ZS_F_ENUM, OFF(offload_param), 0, 0, ZS_OFF_NONE, 0,
     k_offloads, 0, NULL},
    {"checkpointing", ZS_F_ENUM, OFF(checkpointing), 0, 0, ZS_CKPT_FULL, 0,
     k_ckpts, 0, NULL},
    /* auto: sdpa under --trainer torchtitan, flash otherwise
     * (zs_cfg_resolve) */
    {"attention", ZS_F_ENUM, OFF(attention), 0, 0, ZS_ATTN_AUTO, 0, k_attns, 0,
     NULL},
    /* auto: chunked under --trainer torchtune (78 of the recipe YAMLs at
     * torchtune 0031bfb080bd35ec533c412df883cf2bf7bf7fe4 set loss
     * _component_ CEWithChunkedOutputLoss, 4 torch.nn.CrossEntropyLoss),
     * full otherwise (zs_cfg_resolve) */
    {"loss", ZS_F_ENUM, OFF(loss), 0, 0, ZS_LOSS_AUTO, 0, k_losses, 0, NULL},
    {"kernels", ZS_F_ENUM, OFF(kernels), 0, 0, ZS_KERNELS_HF, 0, k_kernels, 0,
     NULL},
    /* auto: yes under --kernels compiled (HF Trainer's torch_compile
     * compiles the model with its loss, torchtune's recipes call
     * training.compile_loss); torchtitan compiled its loss_fn except between
     * PR #755 (e8977b0, 2024-12-18: "compiling loss function causes CUDA
     * errors, turning off for now") and PR #1033 (bbb1b61, 2025-04-02),
     * so its December 2024 benchmark ran the loss eager: --compile-loss no */
    {"compile_loss", ZS_F_ENUM, OFF(compile_loss), 0, 0, ZS_AUTO, 0, k_tri, 0,
     NULL},
    {"alloc_conf", ZS_F_ENUM, OFF(alloc_conf), 0, 0, ZS_ALLOC_DEFAULT, 0,
     k_alloc_confs, 0, NULL},
    /* PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:N; absent: unset (0).
     * PyTorch refuses 20 and below ("CachingAllocator option
     * max_split_size_mb too small, must be > 20": parseMaxSplitSize in
     * c10/cuda/CUDAAllocatorConfig.cpp, PyTorch 2.1-2.8; the newest
     * c10/core/AllocatorConfig.cpp accepts 20 too), so 21 is the least that
     * every version takes; the upper end (1 TiB) is above any GPU. */
    {"max_split_size_mb", ZS_F_INT, OFF(max_split_size_mb), 21, 1048576, 0, 0,
     NULL, 0, NULL},
    {"procs", ZS_F_INT, OFF(procs), 0, 64, 0, 0, NULL, 0, NULL},
    {"sp", ZS_F_INT, OFF(sp), 1, 1024, 1, 0, NULL, 0, NULL},
    {"cp", ZS_F_INT, OFF(cp), 1, 1024, 1, 0, NULL, 0, NULL},
    {"ds_config", ZS_F_STRING, OFF(ds_config), 0, 0, 0, 0, NULL,
     sizeof(((struct zs_cfg *)0)->ds_config), ""},
    {"dataset_samples", ZS_F_INT, OFF(dataset_samples), 0, 1e13, 0, 0, NULL, 0,
     NULL},
    {"epochs", ZS_F_INT, OFF(epochs), 1, 10000, 1, 0, NULL, 0, NULL},
    {"gpu_reserved", ZS_F_BYTES, OFF(gpu_reserved_bytes), 0, 1e13, 0, 0, NULL,
     0, NULL},
    {"gpu_reserved_gpus", ZS_F_INT, OFF(gpu_reserved_gpus), 0, 64, 0, 0, NULL,
     0, NULL},
    {"deepspeed_version", ZS_F_STRING, OFF(deepspeed_version), 0, 0, 0, 0, NULL,
     sizeof(((struct zs_cfg *)0)->deepspeed_version), "0.19.6"},
    /* the PyTorch release: what its torch.optim.AdamW for-loop runs on the
     * CPU (sched/cpuopt.c); checked by torch_version_check */
    {"torch_version", ZS_F_STRING, OFF(torch_version), 0, 0, 0, 0, NULL,
     sizeof(((struct zs_cfg *)0)->torch_version), ZS_TORCH_VERSION_DEFAULT},
    {"optimizer", ZS_F_ENUM, OFF(optimizer), 0, 0, ZS_OPT_ADAMW, 0, k_optims, 0,
     NULL},
    {"zero_init", ZS_F_ENUM, OFF(zero_init), 0, 0, ZS_YES, 0, k_tri, 0, NULL},
    {"pin_memory", ZS_F_ENUM, OFF(pin_memory), 0, 0, ZS_AUTO, 0, k_tri, 0,
     NULL},
    {"steps", ZS_F_INT, OFF(steps), 1, 1000, 1, 0, NULL, 0, NULL},
    {"reduce_bucket_size", ZS_F_CUSTOM, OFF(reduce_bucket_size), 1, BIG, 5e8, 0,
     NULL, 0, NULL},
    {"prefetch_bucket_size", ZS_F_CUSTOM, OFF(prefetch_bucket_size), 0, BIG,
     5e7, 0, NULL, 0, NULL},
    {"param_persistence_threshold", ZS_F_CUSTOM,
     OFF(param_persistence_threshold), 0, BIG, 1e5, 0, NULL, 0, NULL},
    {"max_live_parameters", ZS_F_INT, OFF(max_live_parameters), 0, BIG, 1e9, 0,
     NULL, 0, NULL},
    /* DeepSpeed's default is sys.maxsize (zero/config.py at edaa722:26 and
     * :245, pp_int(sys.maxsize)); 1e18 stands for it */
    {"model_persistence_threshold", ZS_F_INT,
     OFF(model_persistence_threshold), 0, 1e18, 1e18, 0, NULL, 0, NULL},
    {"max_reuse_distance", ZS_F_INT, OFF(max_reuse_distance), 0, BIG, 1e9, 0,
     NULL, 0, NULL},
    {"sub_group_size", ZS_F_INT, OFF(sub_group_size), 1, BIG, 1e9, 0, NULL, 0,
     NULL},
    /* DeepSpeedZeroOffloadOptimizerConfig ratio: Field(1.0, ge=0.0,
     * le=1.0) (offload_config.py, v0.12.3 and edaa722) */
    {"offload_ratio", ZS_F_DOUBLE, OFF(offload_ratio), 0, 1, 1.0, 0, NULL, 0,
     NULL},
    {"overlap_comm", ZS_F_ENUM, OFF(overlap_comm), 0, 0, ZS_AUTO, 0, k_tri, 0,
     NULL},
    {"contiguous_gradients", ZS_F_BOOL, OFF(contiguous_gradients), 0, 0, 1, 0,
     NULL, 0, NULL},
    /* default -1: by trainer (zs_cfg_resolve) */
    {"gradient_clipping", ZS_F_DOUBLE, OFF(gradient_clipping), 0, 1e6, -1, 0,
     NULL, 0, NULL},
    /* Trainer, CPU optimizer, launcher and precision policy (issue 10);
     * the defaults and what "auto" resolves to are in zs_cfg_resolve. */
    {"trainer", ZS_F_ENUM, OFF(trainer), 0, 0, ZS_TRAINER_HF, 0, k_trainers, 0,
     NULL},
    {"cpu_optimizer", ZS_F_ENUM, OFF(cpu_optimizer), 0, 0, ZS_CPUOPT_AUTO, 0,
     k_cpu_opts, 0, NULL},
    {"launcher", ZS_F_ENUM, OFF(launcher), 0, 0, ZS_LAUNCH_AUTO, 0,
     k_launchers, 0, NULL},
    {"cpu_threads", ZS_F_INT, OFF(cpu_threads), 0, 1024, 0, 0, NULL, 0, NULL},
    {"param_dtype", ZS_F_ENUM, OFF(param_dtype), 0, 0, ZS_DT_AUTO, 0, k_dtypes,
     0, NULL},
    {"reduce_dtype", ZS_F_ENUM, OFF(reduce_dtype), 0, 0, ZS_DT_AUTO, 0,
     k_dtypes, 0, NULL},
    {"opt_state_dtype", ZS_F_ENUM, OFF(opt_state_dtype), 0, 0, ZS_DT_AUTO, 0,
     k_dtypes, 0, NULL},
    /* Whole run (issue 4, sim/run/run.c).  Defaults: torch DataLoader
     * num_workers=0 and persistent_workers=False; save_last as mmengine's
     * CheckpointHook (save_last=True); load_dtype fp32 as HF from_pretrained
     * without torch_dtype (the model is built in torch's default float32). */
    {"max_steps", ZS_F_INT, OFF(max_steps), 0, 1e13, 0, 0, NULL, 0, NULL},
    {"eval_every", ZS_F_INT, OFF(eval_every), 0, 1e13, 0, 0, NULL, 0, NULL},
    {"eval_samples", ZS_F_INT, OFF(eval_samples), 0, 1e13, 0, 0, NULL, 0, NULL},
    {"save_every", ZS_F_INT, OFF(save_every), 0, 1e13, 0, 0, NULL, 0, NULL},
    {"save_epoch_end", ZS_F_BOOL, OFF(save_epoch_end), 0, 0, 0, 0, NULL, 0,
     NULL},
    {"save_last", ZS_F_BOOL, OFF(save_last), 0, 0, 1, 0, NULL, 0, NULL},
    {"dataloader_workers", ZS_F_INT, OFF(dataloader_workers), 0, 256, 0, 0,
     NULL, 0, NULL},
    {"persistent_workers", ZS_F_BOOL, OFF(persistent_workers), 0, 0, 0, 0, NULL,
     0, NULL},
    {"dataset_bytes", ZS_F_BYTES, OFF(dataset_bytes), 0, 1e15, 0, 0, NULL, 0,
     NULL},
    {"leak", ZS_F_STRING, OFF(leak), 0, 0, 0, 0, NULL,
     sizeof(((struct zs_cfg *)0)->leak), "none"},
    {"load_dtype", ZS_F_ENUM, OFF(load_dtype), 0, 0, ZS_LOAD_FP32, 0,
     k_load_dtypes, 0, NULL},
    {"gpu_hour_price", ZS_F_DOUBLE, OFF(gpu_hour_price), 0, 1e6, 0, 0, NULL, 0,
     NULL},
    /* Activation offload (issue 14 §3; sched/actoff.c): both off by default,
     * as in DeepSpeed (activation_checkpointing.cpu_checkpointing false) and
     * torchtune (enable_activation_offloading False). */
    {"cpu_checkpointing", ZS_F_BOOL, OFF(cpu_checkpointing), 0, 0, 0, 0, NULL,
     0, NULL},
    {"offload_activations", ZS_F_BOOL, OFF(offload_activations), 0, 0, 0, 0,
     NULL, 0, NULL},
    /* auto: as --zero says; none: a single-device run without FSDP;
     * no-shard: FSDP1 NO_SHARD (enum zs_sharding, config.h) */
    {"sharding", ZS_F_ENUM, OFF(sharding), 0, 0, ZS_SHARD_AUTO, 0, k_shardings,
     0, NULL},
    /* torchtune's optimizer_in_bwd: off unless asked, as the recipes read it
     * (full_finetune_distributed.py at 1814feb17a90: cfg.get(
     * "optimizer_in_bwd", False)); check_optim_in_bwd has its rules */
    {"optimizer_in_bwd", ZS_F_BOOL, OFF(optimizer_in_bwd), 0, 0, 0, 0, NULL, 0,
     NULL},
    /* 2: fully_shard (FSDP2); 1: FullyShardedDataParallel (FSDP1), as
     * Answer.AI's fsdp_qlora train.py and accelerate's FSDP plugin before
     * fsdp_version 2 (sched/fsdp2.c) */
    {"fsdp_version", ZS_F_INT, OFF(fsdp_version), 1, 2, 2, 0, NULL, 0, NULL},
    /* NVMe offload (issue 14, docs/nvme.md).  nvme_read/nvme_write: the
     * node's sequential NVMe rates in GB/s, all drives together, replacing
     * the profile's "storage"; 0 keeps the profile's.  nvme_buffer_count,
     * pipeline_read, pipeline_write: offload_optimizer's buffer_count (4),
     * pipeline_read (false), pipeline_write (false), DeepSpeed
     * deepspeed/runtime/zero/offload_config.py:67,84,90 (0.19.6 edaa7221). */
    {"nvme_read", ZS_F_DOUBLE, OFF(nvme_read_gbps), 0.1, 1000, 0, 0, NULL, 0,
     NULL},
    {"nvme_write", ZS_F_DOUBLE, OFF(nvme_write_gbps), 0.1, 1000, 0, 0, NULL,
     0, NULL},
    {"nvme_buffer_count", ZS_F_INT, OFF(nvme_buffer_count), 1, 1024, 4, 0, NULL,
     0, NULL},
    {"pipeline_read", ZS_F_BOOL, OFF(pipeline_read), 0, 0, 0, 0, NULL, 0,
     NULL},
    {"pipeline_write", ZS_F_BOOL, OFF(pipeline_write), 0, 0, 0, 0, NULL, 0,
     NULL},
    /* offload_param nvme: buffer_count (5), buffer_size (1e8 elements),
     * max_in_cpu (1e9 elements), DeepSpeedZeroOffloadParamConfig,
     * deepspeed/runtime/zero/offload_config.py:33,36,39 (0.19.6 edaa7221);
     * DeepSpeed allows ge=0, but 0 buffers or 0 elements cannot hold a
     * swapped partition (partitioned_param_swapper.py:333,357), so 1. */
    {"param_buffer_count", ZS_F_INT, OFF(param_buffer_count), 1, 1e6, 5, 0,
     NULL, 0, NULL},
    {"param_buffer_size", ZS_F_INT, OFF(param_buffer_size), 1, 1e13, 1e8, 0,
     NULL, 0, NULL},
    {"param_max_in_cpu", ZS_F_INT, OFF(param_max_in_cpu), 0, 1e15, 1e9, 0,
     NULL, 0, NULL},
    /* off unless asked: torchtitan's float8 converter is opt-in
     * (model.converters = ["float8"]; [float8]
     * enable_fsdp_float8_all_gather = false in llama3_8b.toml at e7c0cae) */
    {"fp8", ZS_F_ENUM, OFF(fp8), 0, 0, ZS_FP8_NONE, 0, k_fp8s, 0, NULL},
    {"fp8_all_gather", ZS_F_BOOL, OFF(fp8_all_gather), 0, 0, 0, 0, NULL, 0,
     NULL},
};
#define NFIELDS (sizeof k_fields / sizeof k_fields[0])

static const char *g_flag_names[NFIELDS + 1];

/* NVMe offload's rules (DeepSpeed side only; FSDP2 has no NVMe path).
 * Optimizer NVMe needs stage 3: only stage3.py builds an optimizer swapper
 * (_configure_tensor_swapping, deepspeed/runtime/zero/stage3.py:792-806,
 * 0.19.6 edaa7221); stage_1_and_2.py has none.  Parameter NVMe needs stage 3
 * too (the caller checks it) and, in zsim, an offloaded optimizer (cpu or
 * nvme), as for offload_param cpu. */
int zs_cfg_check_nvme(const struct zs_cfg *c, struct zs_err *err)
{
    if (c->offload_optimizer == ZS_OFF_NVME && c->zero != 3)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--offload-optimizer nvme' needs '--zero 3' "
                          "(only DeepSpeed stage 3 swaps optimizer states)");
    if (c->offload_optimizer == ZS_OFF_NVME) {
        /* Each read or write in flight holds num_tensors + 1 = 4 swap
         * buffers (fp32 param, exp_avg, exp_avg_sq, gradient:
         * partitioned_optimizer_swapper.py:79-83); pipeline_read keeps the
         * next sub-group's read in flight beside the current one, and
         * pipeline_write one swap-out (pipelined_optimizer_swapper.py
         * :102-152).  Fewer buffers fail DeepSpeed's assert
         * "PipelinedOptimizerSwapper ran out of swap buffers, try increasing
         * 'buffer_count'" (:215-216, 0.19.6 edaa7221). */
        int64_t need = 4 * (1 + (c->pipeline_read ? 1 : 0) +
                            (c->pipeline_write ? 1 : 0));
        if (c->nvme_buffer_count < need)
            return zs_err_set(
                err, ZS_EUSAGE,
                "offload_optimizer buffer_count %lld is too small: nvme "
                "offload%s%s needs at least %lld swap buffers (4 per "
                "sub-group in flight); DeepSpeed fails with \"ran out of "
                "swap buffers\"",
                (long long)c->nvme_buffer_count,
                c->pipeline_read ? " with pipeline_read" : "",
                c->pipeline_write ? (c->pipeline_read ? " and pipeline_write"
                                                      : " with pipeline_write")
                                  : "",
                (long long)need);
    }
    return 0;
}

const char *const *zs_cfg_flag_names(void)
{
    static char spelled[NFIELDS][40];
    if (!g_flag_names[0]) {
        for (size_t i = 0; i < NFIELDS; i++) {
            zs_strlcpy(spelled[i], k_fields[i].key, sizeof spelled[i]);
            for (char *p = spelled[i]; *p; p++)
                if (*p == '_')
                    *p = '-';
            g_flag_names[i] = spelled[i];
        }
        g_flag_names[NFIELDS] = NULL;
    }
    return g_flag_names;
}

/* "micro-batch" -> "micro_batch" */
static void key_of_flag(const char *flag, char *buf, size_t cap)
{
    zs_strlcpy(buf, flag, cap);
    for (char *p = buf; *p; p++)
        if (*p == '-')
            *p = '_';
}

bool zs_cfg_is_flag(const char *flag)
{
    char key[64];
    key_of_flag(flag, key, sizeof key);
    return zs_field_find(k_fields, NFIELDS, key) != NULL;
}

_Static_assert(NFIELDS <= ZS_CFG_FIELDS_MAX, "grow ZS_CFG_FIELDS_MAX");

void zs_cfg_given_add(struct zs_cfg_given *g, const char *flag)
{
    char key[64];
    const struct zs_field *f;
    key_of_flag(flag, key, sizeof key);
    f = zs_field_find(k_fields, NFIELDS, key);
    if (f)
        g->field[f - k_fields] = true;
}

bool zs_cfg_given_has(const struct zs_cfg_given *g, const char *flag)
{
    char key[64];
    const struct zs_field *f;
    if (!g)
        return false;
    key_of_flag(flag, key, sizeof key);
    f = zs_field_find(k_fields, NFIELDS, key);
    return f && g->field[f - k_fields];
}

void zs_cfg_defaults(struct zs_cfg *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    zs_json_defaults(k_fields, NFIELDS, cfg);
    for (size_t i = 0; i < NFIELDS; i++)
        if (k_fields[i].type == ZS_F_CUSTOM)
            *(int64_t *)((char *)cfg + k_fields[i].offset) =
                (int64_t)k_fields[i].def;
}

/* "--checkpointing layer:N" / "checkpointing": "layer:N": torchtitan's
 * selective layer AC (activation_checkpoint.mode "selective" with
 * selective_ac_option an integer; parallelize_llama.py checkpoint_wrapper at
 * 041336434916bdc0f88c1f89fda176fd3c2092e4: every Nth block in full AC).
 * torchtitan also takes 0 ("not every_x_layer": every block); here N >= 1,
 * where 1 is the same as "full".  Returns 1 when text is not "layer...",
 * 0 when parsed, -1 when N is not an integer in [1, CKPT_EVERY_MAX]. */
#define CKPT_EVERY_MAX 1000000
#define CKPT_WANT                                                              \
    "one of none, selective, full, op, or layer:N with N an integer from 1 " \
    "to 1000000"
static int parse_ckpt_layer(const char *text, struct zs_cfg *cfg)
{
    int64_t n = 0;
    const char *p;
    if (strncmp(text, "layer", 5) != 0)
        return 1;
    if (text[5] != ':' || !isdigit((unsigned char)text[6]))
        return -1;
    for (p = text + 6; isdigit((unsigned char)*p); p++) {
        n = n * 10 + (*p - '0');
        if (n > CKPT_EVERY_MAX)
            return -1;
    }
    if (*p || n < 1)
        return -1;
    cfg->checkpointing = ZS_CKPT_LAYER;
    cfg->ckpt_every = n;
    return 0;
}

static int parse_auto_text(const struct zs_field *f, const char *text,
                           struct zs_cfg *cfg)
{
    int64_t *dst = (int64_t *)((char *)cfg + f->offset);
    struct zs_field as_int = *f;
    if (!strcmp(text, "auto")) {
        *dst = -1;
        return 0;
    }
    as_int.type = ZS_F_INT;
    return zs_field_parse_text(&as_int, text, cfg);
}

/* PYTORCH_CUDA_ALLOC_CONF as PyTorch spells it, e.g.
 * "expandable_segments:True,max_split_size_mb:128": comma-separated
 * key:value pairs (c10/cuda/CUDAAllocatorConfig.cpp parseArgs; a later key
 * overrides an earlier one, as there).  The keys zsim models set the
 * configuration; the others are refused by name, never ignored.  Returns 1
 * for the enum's names (for the table), 0 when parsed, -1 with
 * why[] filled (the message after "invalid ...: ").  PyTorch's own refusals:
 * expandable_segments "Expected a single True/False argument for
 * expandable_segments", max_split_size_mb "too small, must be > 20" (the
 * field's note). */
#define ALLOC_CONF_WANT                                                        \
    "default, expandable_segments or a PYTORCH_CUDA_ALLOC_CONF key:value "     \
    "list such as expandable_segments:True,max_split_size_mb:128"
#define ALLOC_CONF_KEYS "expandable_segments, max_split_size_mb, backend"

static int parse_alloc_conf(const char *text, struct zs_cfg *cfg, char *why,
                            size_t cap)
{
    static const char *const unmodelled[] = {
        "roundup_power2_divisions", "garbage_collection_threshold",
        "max_non_split_rounding_mb", "pinned_use_cuda_host_register",
        "pinned_num_register_threads", "release_lock_on_cudamalloc",
        "pinned_reserve_segment_size_mb", "graph_capture_record_stream_reuse"};
    int conf = cfg->alloc_conf;
    int64_t split = cfg->max_split_size_mb;
    const char *p = text;
    if (!strchr(text, ':')) {
        if (!strcmp(text, "default") || !strcmp(text, "expandable_segments"))
            return 1;
        snprintf(why, cap, "must be " ALLOC_CONF_WANT " (got '%s')", text);
        return -1;
    }
    while (*p) {
        char key[64], val[64];
        size_t nk = strcspn(p, ":,"), nv;
        if (p[nk] != ':' || nk == 0 || nk >= sizeof key) {
            snprintf(why, cap, "must be " ALLOC_CONF_WANT " (got '%s')",
                     text);
            return -1;
        }
        memcpy(key, p, nk);
        key[nk] = 0;
        p += nk + 1;
        nv = strcspn(p, ",");
        if (nv == 0 || nv >= sizeof val) {
            snprintf(why, cap, "must be " ALLOC_CONF_WANT " (got '%s')",
                     text);
            return -1;
        }
        memcpy(val, p, nv);
        val[nv] = 0;
        p += nv;
        if (*p == ',' && !*++p) {
            snprintf(why, cap, "must be " ALLOC_CONF_WANT " (got '%s')",
                     text);
            return -1;
        }
        if (!strcmp(key, "expandable_segments")) {
            /* CUDAAllocatorConfig: "Expected a single True/False argument
             * for expandable_segments" */
            if (strcmp(val, "True") && strcmp(val, "False")) {
                snprintf(why, cap,
                         "expandable_segments must be True or False (got "
                         "'%s')",
                         val);
                return -1;
            }
            conf = !strcmp(val, "True") ? ZS_ALLOC_EXPANDABLE
                                        : ZS_ALLOC_DEFAULT;
        } else if (!strcmp(key, "max_split_size_mb")) {
            char *end;
            long long v = strtoll(val, &end, 10);
            if (*end || !isdigit((unsigned char)val[0]) || v < 21 ||
                v > 1048576) {
                snprintf(why, cap,
                         "max_split_size_mb must be an integer in [21, "
                         "1048576] (got '%s')",
                         val);
                return -1;
            }
            split = v;
        } else if (!strcmp(key, "backend")) {
            if (strcmp(val, "native")) {
                snprintf(why, cap,
                         "backend:%s is not modelled, only PyTorch's "
                         "native caching allocator (backend:native)",
                         val);
                return -1;
            }
        } else {
            for (size_t i = 0; i < sizeof unmodelled / sizeof *unmodelled; i++)
                if (!strcmp(key, unmodelled[i])) {
                    snprintf(why, cap,
                             "%s is not modelled (the keys zsim models: "
                             ALLOC_CONF_KEYS ")",
                             key);
                    return -1;
                }
            snprintf(why, cap,
                     "unknown key '%s' (the keys zsim models: "
                     ALLOC_CONF_KEYS ")",
                     key);
            return -1;
        }
    }
    cfg->alloc_conf = conf;
    cfg->max_split_size_mb = split;
    return 0;
}

/* A scenario's "checkpointing": "layer:N" is not one of the enum's names, so
 * it is read here and the key taken out before the table reads the rest. */
static int scenario_ckpt(const struct zs_json_src *src, cJSON *root,
                         struct zs_cfg *cfg, struct zs_cfg *tmp,
                         struct zs_err *err)
{
    const cJSON *ck = cJSON_GetObjectItemCaseSensitive(root, "checkpointing");
    char where[300];
    if (!cJSON_IsString(ck) || parse_ckpt_layer(ck->valuestring, tmp) == 1)
        return 0;
    if (parse_ckpt_layer(ck->valuestring, tmp) != 0) {
        zs_json_where(src, "", "checkpointing", where, sizeof where);
        return zs_err_set(err, ZS_EINPUT,
                          "invalid 'checkpointing' in %s: must be " CKPT_WANT
                          " (got '%s')",
                          where, ck->valuestring);
    }
    cfg->checkpointing = tmp->checkpointing;
    cfg->ckpt_every = tmp->ckpt_every;
    cJSON_Delete(cJSON_DetachItemFromObjectCaseSensitive(root, "checkpointing"));
    return 0;
}

/* A scenario's "alloc_conf" in PYTORCH_CUDA_ALLOC_CONF's spelling
 * (parse_alloc_conf), read here and taken out before the table reads the
 * enum names.  With max_split_size_mb in it, the key "max_split_size_mb"
 * may not be given too. */
static int scenario_alloc(const struct zs_json_src *src, cJSON *root,
                          struct zs_cfg *cfg, struct zs_err *err)
{
    const cJSON *ac = cJSON_GetObjectItemCaseSensitive(root, "alloc_conf");
    struct zs_cfg tmp = *cfg;
    char where[300], why[320];
    int rc;
    if (!cJSON_IsString(ac))
        return 0;
    rc = parse_alloc_conf(ac->valuestring, &tmp, why, sizeof why);
    if (rc == 1)
        return 0;
    zs_json_where(src, "", "alloc_conf", where, sizeof where);
    if (rc < 0)
        return zs_err_set(err, ZS_EINPUT, "invalid 'alloc_conf' in %s: %s",
                          where, why);
    if (strstr(ac->valuestring, "max_split_size_mb") &&
        cJSON_GetObjectItemCaseSensitive(root, "max_split_size_mb"))
        return zs_err_set(err, ZS_EINPUT,
                          "invalid 'alloc_conf' in %s: it sets "
                          "max_split_size_mb, which the key "
                          "'max_split_size_mb' sets too: give it once",
                          where);
    cfg->alloc_conf = tmp.alloc_conf;
    cfg->max_split_size_mb = tmp.max_split_size_mb;
    cJSON_Delete(cJSON_DetachItemFromObjectCaseSensitive(root, "alloc_conf"));
    return 0;
}

/* One part of a version: 1-2 digits into *v (<= 99); the text after it. */
static const char *version_part(const char *s, int *v)
{
    int n = 0, digits = 0;
    while (isdigit((unsigned char)*s) && digits < 3) {
        n = n * 10 + (*s++ - '0');
        digits++;
    }
    if (digits == 0 || digits > 2)
        return NULL;
    *v = n;
    return s;
}

int zs_torch_version_parse(const char *text, int *major, int *minor)
{
    int a, b, c;
    const char *s = text ? version_part(text, &a) : NULL;
    if (!s || *s++ != '.' || !(s = version_part(s, &b)))
        return -1;
    if (*s == '.' && !(s = version_part(s + 1, &c)))
        return -1;
    if (*s || a < 1)
        return -1;
    *major = a;
    *minor = b;
    return 0;
}

bool zs_cfg_torch_at_least(const struct zs_cfg *cfg, int major, int minor)
{
    return cfg->torch_major > major ||
           (cfg->torch_major == major && cfg->torch_minor >= minor);
}

#define TORCH_WANT                                                             \
    "X.Y or X.Y.Z with X in [1, 99] and Y, Z in [0, 99], e.g. 1.11"

/* A bad --torch-version (ZS_EUSAGE). */
static int torch_flag_error(const char *flag, const char *value,
                            struct zs_err *err)
{
    return zs_err_set(err, ZS_EUSAGE,
                      "invalid value for '--%s': must be " TORCH_WANT
                      " (got '%s')",
                      flag, value);
}

/* A scenario's torch_version, checked where the file is read (exit 3). */
static int torch_version_check(const struct zs_json_src *src,
                               const cJSON *root, struct zs_err *err)
{
    const cJSON *node = cJSON_GetObjectItemCaseSensitive(root, "torch_version");
    char where[300];
    int a, b;
    if (!node || (cJSON_IsString(node) &&
                  !zs_torch_version_parse(node->valuestring, &a, &b)))
        return 0;
    zs_json_where(src, "", "torch_version", where, sizeof where);
    return zs_err_set(err, ZS_EINPUT,
                      "invalid 'torch_version' in %s: must be a string, "
                      TORCH_WANT " (got %s%s%s)",
                      where, cJSON_IsString(node) ? "'" : "",
                      cJSON_IsString(node) ? node->valuestring
                                           : zs_json_type_name(node),
                      cJSON_IsString(node) ? "'" : "");
}

/* A scenario's "auto"-or-integer field (the bucket sizes), straight into
 * cfg. */
static int scenario_custom(const struct zs_json_src *src, const cJSON *node,
                           const struct zs_field *f, struct zs_cfg *cfg,
                           struct zs_err *err)
{
    char where[300], want[160];
    int ok = 0;
    struct zs_field as_int = *f;
    if (cJSON_IsString(node))
        ok = parse_auto_text(f, node->valuestring, cfg) == 0 &&
             !strcmp(node->valuestring, "auto");
    else if (cJSON_IsNumber(node)) {
        char num[64];
        snprintf(num, sizeof num, "%.0f", node->valuedouble);
        ok = node->valuedouble == (double)(int64_t)node->valuedouble &&
             parse_auto_text(f, num, cfg) == 0;
    }
    if (ok)
        return 0;
    as_int.type = ZS_F_INT;
    zs_field_want_text(&as_int, want, sizeof want);
    zs_json_where(src, "", f->key, where, sizeof where);
    return zs_err_set(err, ZS_EINPUT,
                      "invalid '%s' in %s: must be \"auto\" or %s (got %s)",
                      f->key, where, want,
                      cJSON_IsString(node) ? node->valuestring
                                           : zs_json_type_name(node));
}

/* Bytes a field of type f->type occupies in struct zs_cfg. */
static size_t field_size(const struct zs_field *f)
{
    switch (f->type) {
    case ZS_F_INT:
    case ZS_F_BYTES:
        return sizeof(int64_t);
    case ZS_F_DOUBLE:
        return sizeof(double);
    case ZS_F_BOOL:
        return sizeof(bool);
    case ZS_F_ENUM:
        return sizeof(int);
    case ZS_F_STRING:
        return f->str_cap;
    default:
        return 0;
    }
}

/* The scenario's name when it gives none: the file name without ".json". */
static void scenario_name(const char *path, struct zs_cfg *cfg)
{
    const char *base = strrchr(path, '/');
    if (cfg->name[0])
        return;
    base = base ? base + 1 : path;
    zs_strlcpy(cfg->name, base, sizeof cfg->name);
    if (zs_str_endswith(cfg->name, ".json"))
        cfg->name[strlen(cfg->name) - 5] = '\0';
}

int zs_cfg_load_scenario(const char *path, struct zs_cfg *cfg,
                         struct zs_err *err)
{
    cJSON *root = NULL;
    struct zs_json_src src;
    struct zs_cfg tmp = *cfg;
    int rc = zs_json_parse_file(path, &root, &src, err);
    if (rc)
        return rc;
    rc = scenario_ckpt(&src, root, cfg, &tmp, err);
    if (!rc)
        rc = scenario_alloc(&src, root, cfg, err);
    if (!rc)
        rc = torch_version_check(&src, root, err);
    /* Absent keys keep the caller's values: read into tmp, then copy back
     * only the keys present. */
    if (!rc)
        rc = zs_json_read(&src, root, "", k_fields, NFIELDS, &tmp, 0, err);
    for (size_t i = 0; !rc && i < NFIELDS; i++) {
        const struct zs_field *f = &k_fields[i];
        const cJSON *node = cJSON_GetObjectItemCaseSensitive(root, f->key);
        if (!node)
            continue;
        if (f->type == ZS_F_CUSTOM)
            rc = scenario_custom(&src, node, f, cfg, err);
        else
            memcpy((char *)cfg + f->offset, (char *)&tmp + f->offset,
                   field_size(f));
    }
    if (!rc)
        scenario_name(path, cfg);
    cJSON_Delete(root);
    zs_json_src_release(&src);
    return rc;
}

int zs_cfg_apply_flag(struct zs_cfg *cfg, const char *flag, const char *value,
                      struct zs_err *err)
{
    char key[64], want[256];
    const struct zs_field *f;
    int rc;
    key_of_flag(flag, key, sizeof key);
    f = zs_field_find(k_fields, NFIELDS, key);
    if (!f) {
        const char *const *names = zs_cfg_flag_names();
        int best = zs_str_closest(flag, names, NFIELDS);
        if (best >= 0)
            return zs_err_set(err, ZS_EUSAGE,
                              "unknown option '--%s': did you mean '--%s'?",
                              flag, names[best]);
        return zs_err_set(err, ZS_EUSAGE, "unknown option '--%s'", flag);
    }
    if (!strcmp(f->key, "checkpointing")) {
        rc = parse_ckpt_layer(value, cfg);
        if (rc == -1)
            return zs_err_set(err, ZS_EUSAGE,
                              "invalid value for '--%s': must be " CKPT_WANT
                              " (got '%s')",
                              flag, value);
        if (rc == 0)
            return 0;
    }
    if (!strcmp(f->key, "alloc_conf")) {
        char why[320];
        rc = parse_alloc_conf(value, cfg, why, sizeof why);
        if (rc == -1)
            return zs_err_set(err, ZS_EUSAGE, "invalid value for '--%s': %s",
                              flag, why);
        if (rc == 0)
            return 0;
    }
    if (!strcmp(f->key, "torch_version")) {
        int a, b;
        if (zs_torch_version_parse(value, &a, &b))
            return torch_flag_error(flag, value, err);
    }
    if (f->type == ZS_F_CUSTOM)
        rc = parse_auto_text(f, value, cfg);
    else
        rc = zs_field_parse_text(f, value, cfg);
    if (rc == 0)
        return 0;
    if (f->type == ZS_F_CUSTOM) {
        struct zs_field as_int = *f;
        as_int.type = ZS_F_INT;
        zs_field_want_text(&as_int, want, sizeof want);
        return zs_err_set(
            err, ZS_EUSAGE,
            "invalid value for '--%s': must be \"auto\" or %s (got '%s')", flag,
            want, value);
    }
    if (f->type == ZS_F_BOOL)
        snprintf(want, sizeof want, "yes or no");
    else if (!strcmp(f->key, "checkpointing"))
        snprintf(want, sizeof want, CKPT_WANT);
    else
        zs_field_want_text(f, want, sizeof want);
    return zs_err_set(err, ZS_EUSAGE,
                      "invalid value for '--%s': must be %s (got '%s')", flag,
                      want, value);
}

/* What DeepSpeed's precision and training-loop knobs allow (DeepSpeed
 * 0.19.6 edaa72212), for the trainer and dtype flags:
 * - torchtitan and torchtune train with FSDP2 (fully_shard) only; DeepSpeed
 *   runs under the HF Trainer / Accelerate (or its own engine loop).
 * - Parameters: "bf16": {"enabled": true} keeps fp32 master weights, grads
 *   and optimizer states (runtime/zero/stage3.py: master_weights_and_grads_
 *   dtype = float32 unless bf16_master_weights_and_grads).  bf16 masters,
 *   grads and optimizer states are bf16.bf16_master_weights_and_grads +
 *   bf16_optimizer_states (runtime/precision_config.py, added by PR #7700,
 *   first released in 0.18.3; runtime/config.py asserts ZeRO stage 1-3 and
 *   that bf16_optimizer_states needs the master flag; base_optimizer.py
 *   _configure_master_weights requires ZeRO-Offload with DeepSpeedCPUAdam
 *   whenever states are offloaded).  '--param-dtype bf16' maps to both
 *   flags, '--opt-state-dtype fp32' drops the second; zero.c simulates them
 *   (a bf16 master copy, bf16 gradient, states of their own dtype, struct
 *   ds mb and sb) on the GPU, with ZeRO-3's and ZeRO-1/2's CPU offload
 *   (DeepSpeedCPUAdam with bf16 moments from 0.19.1, the 16-bit grads
 *   copied to the host uncast, stage_1_and_2.py's
 *   low_precision_master_weights_and_grads paths), on NVMe and with
 *   Twin-Flow.  What zs_cfg_ds_bf16_gap names (fp32 states on NVMe or with
 *   Twin-Flow) and another CPU optimizer than DeepSpeedCPUAdam (which
 *   DeepSpeed asserts) are refused rather than simulated wrong.
 * - Reduction: communication_data_type follows bf16.enabled (engine.py); an
 *   fp32 reduce-scatter ("communication_data_type": "fp32") is valid
 *   DeepSpeed but zero.c reduces in bf16, so it is refused likewise. */
int zs_cfg_check_trainer(const struct zs_cfg *c, struct zs_err *err)
{
    if (c->framework == ZS_FW_DEEPSPEED && c->trainer != ZS_TRAINER_HF)
        return zs_err_set(
            err, ZS_EUSAGE,
            "'--trainer %s' trains with FSDP2 (fully_shard) only: use "
            "'--framework fsdp2', or '--trainer hf' with DeepSpeed",
            zs_trainer_name(c->trainer));
    return 0;
}

/* Twin-Flow (offload_optimizer.ratio, PR #4636 b1cb0dfc4, first in
 * v0.12.3): DeepSpeedZeroOptimizer_Stage3.__init__ maps each of the n
 * sub-groups to a device.  v0.12.3 to 0.17.x: `if i < int(ratio * n)` on
 * the CPU, so the first sub-groups; from 0.18.0 (PR #7559 af56ed4d3,
 * SuperOffload): `if i >= int((1 - ratio) * n)` on the CPU, so the last
 * ones (stage3.py:1051-1058 at edaa722).  Python's int() truncates, as the
 * C cast does; the products are the same IEEE doubles. */
bool zs_twin_cpu_last(const struct zs_ds_version *v)
{
    return zs_ds_at_least(v, 0, 18, 0);
}

int64_t zs_twin_cpu_groups(int64_t nsub, double ratio,
                           const struct zs_ds_version *v)
{
    if (ratio >= 1.0)
        return nsub;
    if (zs_twin_cpu_last(v))
        return nsub - (int64_t)((1.0 - ratio) * (double)nsub);
    return (int64_t)(ratio * (double)nsub);
}

void zs_twin_gpu_groups(int64_t nsub, double ratio,
                        const struct zs_ds_version *v, int64_t *g0,
                        int64_t *g1)
{
    int64_t k = zs_twin_cpu_groups(nsub, ratio, v);
    *g0 = zs_twin_cpu_last(v) ? 0 : k;
    *g1 = zs_twin_cpu_last(v) ? nsub - k : nsub;
}

/* offload_optimizer.ratio below 1 is read by ZeRO-3 only ("Only valid with
 * ZeRO Stage 3", offload_config.py), with the optimizer on the CPU: with
 * NVMe every sub-group is swappable and the GPU ones would step CPU
 * tensors (not modelled); the backup optimizer needs DeepSpeedCPUAdam
 * (stage3.py:311 at edaa722: assert type(init_optimizer) ==
 * DeepSpeedCPUAdam, 'Hybrid Optimizer Only Supports DeepSpeedCPUAdam'). */
static int check_offload_ratio(const struct zs_cfg *c, struct zs_err *err)
{
    const struct zs_ds_version *v = &c->ds_version;
    if (!(c->offload_ratio < 1.0))
        return 0;
    if (c->framework != ZS_FW_DEEPSPEED || c->zero != 3 ||
        c->offload_optimizer != ZS_OFF_CPU)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--offload-ratio' (offload_optimizer.ratio, "
                          "Twin-Flow) needs '--framework deepspeed --zero 3 "
                          "--offload-optimizer cpu'");
    if (!zs_ds_at_least(v, 0, 12, 3))
        return zs_err_set(err, ZS_EUSAGE,
                          "'--offload-ratio' with DeepSpeed %d.%d.%d: "
                          "offload_optimizer.ratio exists from 0.12.3 "
                          "(PR #4636)",
                          v->major, v->minor, v->patch);
    if (c->cpu_opt_impl != ZS_CPUOPT_DS_CPU_ADAM)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--offload-ratio' needs DeepSpeedCPUAdam: "
                          "DeepSpeed asserts 'Hybrid Optimizer Only Supports "
                          "DeepSpeedCPUAdam' (got '--cpu-optimizer %s')",
                          zs_cfg_choice_name("cpu_optimizer", c->cpu_opt_impl));
    return 0;
}

/* NVMe: PartitionedOptimizerSwapper.swap_in_optimizer_state allocates the
 * param's, states' and gradient's buffers with dtype=parameter.dtype
 * (partitioned_optimizer_swapper.py :72-90 at edaa722) from a
 * SwapBufferManager that asserts that dtype (swap_tensor/utils.py :201-202);
 * with bf16 states zero.c swaps them all in bf16. */
/* DeepSpeed's optimizer offload made DeepSpeedCPUAdam with its default
 * fp32_optimizer_states=True whatever bf16_optimizer_states said until PR
 * #8010 (3c337b54, first in v0.19.1; engine.py at v0.19.0 :1677-1680 passes
 * no such argument, at edaa722 :2108-2135 it passes False with the flag). */
static bool ds_cpu_bf16_states(const struct zs_cfg *c)
{
    return c->framework != ZS_FW_DEEPSPEED ||
           c->offload_optimizer == ZS_OFF_NONE ||
           zs_ds_at_least(&c->ds_version, 0, 19, 1);
}

int64_t zs_cfg_seq_shards(const struct zs_cfg *c)
{
    return (c->sp > 0 ? c->sp : 1) * (c->cp > 0 ? c->cp : 1);
}

int zs_cfg_opt_state_auto(const struct zs_cfg *c)
{
    if (c->param_dtype_resolved == ZS_DT_BF16 && !ds_cpu_bf16_states(c))
        return ZS_DT_FP32;
    return c->param_dtype_resolved;
}

const char *zs_cfg_ds_bf16_gap(const struct zs_cfg *c)
{
    /* the states under a bf16 master: as asked, else as auto resolves */
    int st = c->opt_state_dtype != ZS_DT_AUTO ? c->opt_state_dtype
             : ds_cpu_bf16_states(c)          ? ZS_DT_BF16
                                              : ZS_DT_FP32;
    if (c->offload_optimizer == ZS_OFF_NVME && st != ZS_DT_BF16)
        return "with the optimizer on NVMe the swapper allocates every "
               "state's buffer in the master's dtype, so fp32 states under "
               "bf16 master weights are not modelled (bf16 states need "
               "bf16_optimizer_states and, offloaded, DeepSpeed 0.19.1)";
    if (c->offload_optimizer != ZS_OFF_NONE &&
        c->cpu_optimizer != ZS_CPUOPT_AUTO &&
        c->cpu_optimizer != ZS_CPUOPT_DS_CPU_ADAM)
        return "the offloaded optimizer must be DeepSpeedCPUAdam, DeepSpeed "
               "asserts \"Master weights feature requires ZeRO-3 Offload "
               "with DeepSpeedCPUAdam.\"";
    /* Twin-Flow's backup torch.optim.AdamW makes its states in the param's
     * dtype (zeros_like), the bf16 master's, whatever DeepSpeedCPUAdam's
     * are */
    if (c->offload_ratio < 1.0 && st != ZS_DT_BF16)
        return "with Twin-Flow (offload ratio below 1) the GPU sub-groups' "
               "torch AdamW keeps bf16 states beside DeepSpeedCPUAdam's fp32 "
               "ones, which is not modelled (bf16 states need "
               "bf16_optimizer_states and, offloaded, DeepSpeed 0.19.1)";
    return NULL;
}

static int check_deepspeed_policy(const struct zs_cfg *c, struct zs_err *err)
{
    const struct zs_ds_version *v = &c->ds_version;
    const char *gap;
    bool has_bf16_master = zs_ds_at_least(v, 0, 18, 3);
    int rc = zs_cfg_check_trainer(c, err);
    if (rc)
        return rc;
    if (c->param_dtype_resolved == ZS_DT_BF16 && !has_bf16_master)
        return zs_err_set(
            err, ZS_EUSAGE,
            "'--param-dtype bf16' with DeepSpeed %d.%d.%d: bf16 master "
            "weights (bf16.bf16_master_weights_and_grads) exist from 0.18.3 "
            "(PR #7700); use '--param-dtype fp32' (bf16.enabled keeps fp32 "
            "master weights and optimizer states)",
            v->major, v->minor, v->patch);
    if (c->param_dtype_resolved == ZS_DT_BF16 && (gap = zs_cfg_ds_bf16_gap(c)))
        return zs_err_set(err, ZS_EUSAGE,
                          "'--param-dtype bf16' with DeepSpeed (bf16 master "
                          "weights and optimizer states): %s; or use "
                          "'--param-dtype fp32'",
                          gap);
    /* bf16_optimizer_states needs the master flag (runtime/config.py :1049
     * at edaa722); the master flag alone keeps fp32 states, which
     * _configure_master_weights allows only with ZeRO-Offload and
     * DeepSpeedCPUAdam (base_optimizer.py, stage3.py :294-297) */
    if (c->opt_state_dtype_resolved == ZS_DT_BF16 && !ds_cpu_bf16_states(c))
        return zs_err_set(err, ZS_EUSAGE,
                          "'--opt-state-dtype bf16' with the optimizer "
                          "offloaded and DeepSpeed %d.%d.%d: DeepSpeedCPUAdam "
                          "keeps bf16 moments from 0.19.1 (PR #8010), before "
                          "it makes fp32 ones whatever bf16_optimizer_states "
                          "says; use '--opt-state-dtype auto' or a later "
                          "'--deepspeed-version'",
                          v->major, v->minor, v->patch);
    if (c->opt_state_dtype_resolved == ZS_DT_BF16 &&
        c->param_dtype_resolved != ZS_DT_BF16)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--opt-state-dtype bf16' with DeepSpeed needs "
                          "'--param-dtype bf16': DeepSpeed asserts "
                          "\"bf16_optimizer_states requires "
                          "bf16_master_weights_and_grads to be enabled.\"");
    if (c->opt_state_dtype_resolved == ZS_DT_FP32 &&
        c->param_dtype_resolved == ZS_DT_BF16 &&
        c->offload_optimizer == ZS_OFF_NONE)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--param-dtype bf16 --opt-state-dtype fp32' with "
                          "DeepSpeed needs '--offload-optimizer cpu': "
                          "DeepSpeed asserts \"Master weights feature "
                          "requires ZeRO-3 Offload with DeepSpeedCPUAdam.\"");
    if (c->reduce_dtype_resolved == ZS_DT_FP32)
        return zs_err_set(
            err, ZS_EUSAGE,
            "'--reduce-dtype fp32' with DeepSpeed maps to "
            "\"communication_data_type\": \"fp32\", which zsim does not "
            "model yet: use '--reduce-dtype bf16' (DeepSpeed's default with "
            "bf16.enabled)");
    return 0;
}

/* Activation offload (issue 14 §3), what each framework offers and needs:
 * - DeepSpeed's activation_checkpointing.cpu_checkpointing moves the inputs
 *   of layers checkpointed with deepspeed.checkpointing.checkpoint, i.e. full
 *   per-layer checkpointing (checkpointing.py CheckpointFunction.forward,
 *   DeepSpeed v0.19.5 :528-531, edaa7221 :607-615).
 * - torchtune's enable_activation_offloading needs activation checkpointing:
 *   the recipe raises "enable_activation_offloading should only be True when
 *   enable_activation_checkpointing is True" (torchtune bd2a0fc7c
 *   recipes/full_finetune_distributed.py:260-263); the HF Trainer (accelerate
 *   FSDP2) and torchtitan have no such option zsim models.
 * The mode: DeepSpeed's asynchronous engine exists from 0.19.6 (PR #8282,
 * 858e91eea, after the v0.19.5 tag) and is not used with
 * partition_activations (_get_cpu_offload_engine, edaa7221 :498-511). */
static int check_act_offload(struct zs_cfg *c, struct zs_err *err)
{
    bool async_engine = zs_ds_at_least(&c->ds_version, 0, 19, 6);
    c->act_offload = ZS_AO_NONE;
    if (c->cpu_checkpointing) {
        if (c->framework != ZS_FW_DEEPSPEED)
            return zs_err_set(
                err, ZS_EUSAGE,
                "'--cpu-checkpointing yes' is DeepSpeed's "
                "activation_checkpointing.cpu_checkpointing: with "
                "'--framework fsdp2' use '--offload-activations yes' "
                "(torchtune)");
        if (c->checkpointing != ZS_CKPT_FULL)
            return zs_err_set(
                err, ZS_EUSAGE,
                "'--cpu-checkpointing yes' offloads the inputs of layers "
                "checkpointed by deepspeed.checkpointing.checkpoint: it needs "
                "'--checkpointing full' (got %s)",
                zs_ckpt_name((enum zs_ckpt)c->checkpointing));
        c->act_offload = async_engine && !c->ds_partition_activations
                             ? ZS_AO_DS_ASYNC
                             : ZS_AO_DS_SYNC;
    }
    if (c->offload_activations) {
        if (c->framework != ZS_FW_FSDP2)
            return zs_err_set(
                err, ZS_EUSAGE,
                "'--offload-activations yes' is torchtune's "
                "enable_activation_offloading (FSDP2): with DeepSpeed use "
                "'--cpu-checkpointing yes'");
        if (c->trainer != ZS_TRAINER_TORCHTUNE)
            return zs_err_set(
                err, ZS_EUSAGE,
                "'--offload-activations yes' needs '--trainer torchtune': "
                "zsim models torchtune's OffloadActivations only (got "
                "'--trainer %s')",
                zs_trainer_name(c->trainer));
        if (c->checkpointing != ZS_CKPT_FULL)
            return zs_err_set(
                err, ZS_EUSAGE,
                "'--offload-activations yes' needs '--checkpointing full': "
                "torchtune raises \"enable_activation_offloading should only "
                "be True when enable_activation_checkpointing is True\" "
                "(got %s)",
                zs_ckpt_name((enum zs_ckpt)c->checkpointing));
        c->act_offload = ZS_AO_TORCHTUNE;
    }
    return 0;
}

/* --sharding no-shard: FSDP1's ShardingStrategy.NO_SHARD (config.h), so
 * FullyShardedDataParallel only.  Not modelled (refused): NO_SHARD with
 * CPUOffload (FSDP1 allows it: the whole flat parameters and grads on the
 * host), sequence parallelism and torchtune's optimizer_in_bwd. */
static int check_no_shard(const struct zs_cfg *c, struct zs_err *err)
{
    if (c->framework != ZS_FW_FSDP2 || c->fsdp_version != 1)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--sharding no-shard' is FSDP1's NO_SHARD: it "
                          "needs '--framework fsdp2 --fsdp-version 1'");
    if (c->offload_param != ZS_OFF_NONE)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--sharding no-shard' with '--offload-param %s' is "
                          "not modelled: use '--offload-param none'",
                          zs_offload_name(c->offload_param));
    if (c->sp > 1 || c->optimizer_in_bwd)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--sharding no-shard' is not modelled with %s",
                          c->sp > 1 ? "'--sp' above 1"
                                    : "'--optimizer-in-bwd yes'");
    return 0;
}

/* --sharding none: one process training the unwrapped module (torchtune's
 * single-device recipes), so FSDP2 only, one process, no parameter
 * offload (CPUOffloadPolicy is part of fully_shard). */
static int check_no_shard(const struct zs_cfg *c, struct zs_err *err);

static int check_sharding(const struct zs_cfg *c, struct zs_err *err)
{
    if (c->sharding == ZS_SHARD_NO_SHARD)
        return check_no_shard(c, err);
    if (c->sharding != ZS_SHARD_NONE)
        return 0;
    if (c->framework != ZS_FW_FSDP2)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--sharding none' needs '--framework fsdp2': "
                          "zsim models DeepSpeed with ZeRO stage 2 or 3 only");
    if (c->world != 1)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--sharding none' is a single-device run: it needs "
                          "one process (got %lld)",
                          (long long)c->world);
    if (c->offload_param != ZS_OFF_NONE)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--sharding none' cannot offload parameters: "
                          "CPUOffloadPolicy belongs to fully_shard (got "
                          "'--offload-param %s')",
                          zs_offload_name(c->offload_param));
    return 0;
}

/* torchtune's optimizer_in_bwd (--optimizer-in-bwd yes), what the recipes
 * allow (torchtune 1814feb17a90):
 * - full_finetune_single_device.py:147-157 and full_finetune_distributed.py
 *   :157-167 raise RuntimeError "Gradient clipping is not supported with
 *   optimizer in bwd." when clip_grad_norm is set and "Gradient accumulation
 *   is not supported with optimizer in bwd." when
 *   gradient_accumulation_steps > 1 (both recipes, single device and FSDP2);
 * - the LoRA recipes (lora_finetune_*.py) never read optimizer_in_bwd;
 * - the HF Trainer and torchtitan have no such option zsim models.
 * With fsdp_cpu_offload torchtune does not refuse it, but the hook would
 * step CPU tensors behind a non-blocking D2H copy (FSDP2 foreach_reduce
 * runs the post-accumulate-grad hooks right after issuing it): zsim does
 * not model that path and says so. */
static int check_optim_in_bwd(const struct zs_cfg *c, struct zs_err *err)
{
    if (!c->optimizer_in_bwd)
        return 0;
    if (c->framework != ZS_FW_FSDP2 || c->trainer != ZS_TRAINER_TORCHTUNE)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--optimizer-in-bwd yes' is torchtune's "
                          "optimizer_in_bwd: it needs '--framework fsdp2' and "
                          "'--trainer torchtune' (got '--framework %s' and "
                          "'--trainer %s')",
                          zs_framework_name(c->framework),
                          zs_trainer_name(c->trainer));
    if (c->method != ZS_METHOD_FULL)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--optimizer-in-bwd yes' needs '--method full': "
                          "torchtune's LoRA recipes have no optimizer_in_bwd "
                          "(got '--method %s')",
                          zs_method_name((enum zs_method)c->method));
    if (c->accum > 1)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--optimizer-in-bwd yes' needs '--grad-accum 1': "
                          "torchtune raises \"Gradient accumulation is not "
                          "supported with optimizer in bwd.\" (got %lld)",
                          (long long)c->accum);
    if (c->gradient_clipping > 0)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--optimizer-in-bwd yes' needs '--gradient-clipping "
                          "0': torchtune raises \"Gradient clipping is not "
                          "supported with optimizer in bwd.\" (got %g)",
                          c->gradient_clipping);
    if (c->offload_param != ZS_OFF_NONE)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--optimizer-in-bwd yes' with '--offload-param %s' "
                          "is not modelled: zsim steps in-backward optimizers "
                          "on the GPU only",
                          zs_offload_name(c->offload_param));
    return 0;
}

/* --fsdp-version 1 picks PyTorch's FullyShardedDataParallel for the FSDP
 * schedule: there is none under DeepSpeed or without sharding. */
static int check_fsdp_version(const struct zs_cfg *c, struct zs_err *err)
{
    if (c->fsdp_version != 1)
        return 0;
    if (c->framework != ZS_FW_FSDP2)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--fsdp-version 1' needs '--framework fsdp2': "
                          "DeepSpeed shards with its own ZeRO engine");
    if (c->sharding == ZS_SHARD_NONE)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--fsdp-version 1' wraps the model in "
                          "FullyShardedDataParallel: it cannot run with "
                          "'--sharding none'");
    return 0;
}

int64_t zs_cfg_shard_world(const struct zs_cfg *c)
{
    return c->sharding == ZS_SHARD_AUTO && c->world > 1 ? c->world : 1;
}

/* --fp8 tensorwise models torchao's Float8Linear under FSDP2 (torchtitan),
 * full training only, on a GPU whose profile gives fp8 figures (hw.h);
 * --fp8-all-gather needs it and FSDP2's fully_shard (torchao's
 * WeightWithDynamicFloat8CastTensor implements fully_shard's
 * fsdp_pre_all_gather / fsdp_post_all_gather extensions). */
static int check_fp8(const struct zs_cfg *c, const struct zs_cluster *cl,
                     struct zs_err *err)
{
    if (c->fp8 == ZS_FP8_NONE) {
        if (c->fp8_all_gather)
            return zs_err_set(err, ZS_EUSAGE,
                              "'--fp8-all-gather yes' needs '--fp8 "
                              "tensorwise': only Float8Linear weights are "
                              "all-gathered in fp8");
        return 0;
    }
    if (c->framework != ZS_FW_FSDP2)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--fp8 tensorwise' needs '--framework fsdp2': zsim "
                          "models torchao's Float8Linear under FSDP2 "
                          "(torchtitan), not DeepSpeed");
    if (c->method != ZS_METHOD_FULL)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--fp8 tensorwise' needs '--method full': zsim "
                          "does not model Float8Linear under LoRA or QLoRA "
                          "adapters");
    if (c->kernels != ZS_KERNELS_COMPILED)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--fp8 tensorwise' needs '--kernels compiled': "
                          "zsim charges torchao's casts as torch.compile "
                          "fuses them (torchao float8 README: \"enable "
                          "torch.compile for competitive performance\")");
    if (!(cl->node.gpu.peak_fp8_flops > 0))
        return zs_err_set(err, ZS_EUSAGE,
                          "'--fp8 tensorwise' needs FP8 tensor cores: the "
                          "GPU profile %s has no fp8 figures (H100, H200 "
                          "have)",
                          cl->node.gpu.name);
    if (c->fp8_all_gather &&
        (c->fsdp_version == 1 || c->sharding == ZS_SHARD_NONE))
        return zs_err_set(err, ZS_EUSAGE,
                          "'--fp8-all-gather yes' needs FSDP2's fully_shard "
                          "('--fsdp-version 2', sharded): it is a fully_shard "
                          "all-gather extension");
    return 0;
}

int zs_cfg_param_bytes(const struct zs_cfg *c)
{
    return c->param_dtype_resolved == ZS_DT_BF16 ? 2 : 4;
}

int zs_cfg_reduce_bytes(const struct zs_cfg *c)
{
    return c->reduce_dtype_resolved == ZS_DT_FP32 ? 4 : 2;
}

/* HF Trainer (transformers PR #34645 and later, _inner_training_loop) runs
 * every micro-batch but the last of an accumulation inside
 * accelerator.no_sync(model) unless DeepSpeed runs or sync_each_batch is set;
 * accelerate's no_sync for FSDP2 is model.set_requires_gradient_sync(False)
 * (accelerate 16cb6eb8 accelerator.py:1165-1170).  FSDP2 then skips
 * foreach_reduce in post_backward and keeps each parameter's unsharded grad
 * (FSDPParamGroup.post_backward "if not self.reduce_grads"; FSDPParam.
 * to_accumulated_grad_if_needed).  torchtitan and torchtune call backward on
 * every micro-batch with gradient sync on (torchtitan b5bcd76c6
 * torchtitan/trainer.py train_step; torchtune full_finetune_distributed.py),
 * so they reduce-scatter every micro-step. */
bool zs_cfg_grads_held_unsharded(const struct zs_cfg *c)
{
    return c->framework == ZS_FW_FSDP2 && c->trainer == ZS_TRAINER_HF &&
           c->accum > 1;
}

/* Processes per node, world, sequence- and data-parallel degrees. */
static int resolve_topology(struct zs_cfg *c, const struct zs_cluster *cl,
                            struct zs_err *err)
{
    c->procs_per_node = c->procs ? c->procs : cl->node.gpus_per_node;
    if (c->procs_per_node > cl->node.gpus_per_node)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid value for '--procs': must be in [1, %d] for "
                          "'%s' (got %lld)",
                          cl->node.gpus_per_node, cl->spec,
                          (long long)c->procs_per_node);
    c->world = c->procs_per_node * cl->nodes;
    if (c->sp > c->world || c->world % c->sp)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid value for '--sp': must divide the %lld "
                          "processes (got %lld)",
                          (long long)c->world, (long long)c->sp);
    if (c->cp > c->world || c->world % c->cp)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid value for '--cp': must divide the %lld "
                          "processes (got %lld)",
                          (long long)c->world, (long long)c->cp);
    if (c->sp > 1 && c->cp > 1)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--sp' and '--cp' above 1 together are not "
                          "modelled: use one of them");
    c->dp = c->world / (c->sp * c->cp);
    return 0;
}

/* The Ulysses degree against the model and the sequence, as DeepSpeed
 * checks them (runtime/sequence_parallel/ulysses_sp.py at edaa722,
 * UlyssesSPAttentionHF.__init__: "Attention head count ... is not divisible
 * by SP size", "KV attention head count ... is not divisible by SP size ...
 * or vice versa" (fewer KV heads than the degree are replicated,
 * kv_replication_factor); forward: "batch's seqlen=... isn't divisible by
 * sp-size").  The older DistributedAttention (sequence/layer.py) asserts
 * the same head divisibility. */
int zs_cfg_check_sp(const struct zs_cfg *c, const struct zs_model *m,
                    int64_t sp, const char *what, int code, struct zs_err *err)
{
    if (sp <= 1)
        return 0;
    if (m->n_heads % sp)
        return zs_err_set(err, code,
                          "invalid %s: must divide %s's %lld attention heads, "
                          "which Ulysses shards (got %lld)",
                          what, m->name, (long long)m->n_heads, (long long)sp);
    if (m->n_kv_heads % sp && sp % m->n_kv_heads)
        return zs_err_set(err, code,
                          "invalid %s: must divide %s's %lld key-value heads "
                          "or be a multiple of them (got %lld)",
                          what, m->name, (long long)m->n_kv_heads,
                          (long long)sp);
    if (c->seq_len % sp)
        return zs_err_set(err, code,
                          "invalid %s: must divide the sequence length %lld "
                          "(got %lld)",
                          what, (long long)c->seq_len, (long long)sp);
    return 0;
}

/* Context parallelism as PyTorch runs it (torch/distributed/tensor/
 * experimental/_attention.py; torchtitan 9dec370 train.py calls
 * context_parallel(world_mesh["cp"], buffers=[input_ids, labels,
 * freqs_cis]) over FSDP2's mesh): it replaces the SDPA ops (flash,
 * efficient, cuDNN: _sdpa_handler's call_maps) and, with load balancing on
 * (_ContextParallelOptions.enable_load_balance = True), cuts each buffer's
 * sequence into 2 x cp chunks, two per rank. */
static int check_cp(const struct zs_cfg *c, struct zs_err *err)
{
    if (c->cp <= 1)
        return 0;
    if (c->framework != ZS_FW_FSDP2 || c->fsdp_version != 2)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--cp' needs '--framework fsdp2' with FSDP2 "
                          "(PyTorch's context_parallel shards attention over "
                          "a DTensor mesh; DeepSpeed's sequence parallelism "
                          "is Ulysses, '--sp')");
    if (zs_cfg_attention(c) != ZS_ATTN_SDPA)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--cp' needs '--attention sdpa' (context_parallel "
                          "replaces F.scaled_dot_product_attention's kernels; "
                          "sdpa is the default under '--trainer torchtitan')");
    if (c->seq_len % (2 * c->cp))
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid value for '--cp': load balancing cuts the "
                          "sequence into 2 x %lld chunks, which must divide "
                          "the sequence length %lld (got %lld)",
                          (long long)c->cp, (long long)c->seq_len,
                          (long long)c->cp);
    return 0;
}

/* Accumulation from --global-batch or --grad-accum, tokens per step. */
static int resolve_batch(struct zs_cfg *c, struct zs_err *err)
{
    if (c->global_batch) {
        int64_t per = c->micro_batch * c->dp;
        if (c->global_batch % per)
            return zs_err_set(err, ZS_EUSAGE,
                              "invalid value for '--global-batch': must be a "
                              "multiple of micro-batch x data-parallel degree "
                              "= %lld x %lld = %lld (got %lld)",
                              (long long)c->micro_batch, (long long)c->dp,
                              (long long)per, (long long)c->global_batch);
        if (c->grad_accum && c->grad_accum != c->global_batch / per)
            return zs_err_set(err, ZS_EUSAGE,
                              "'--grad-accum %lld' contradicts '--global-batch "
                              "%lld' (= %lld x %lld x %lld)",
                              (long long)c->grad_accum,
                              (long long)c->global_batch,
                              (long long)c->micro_batch, (long long)c->dp,
                              (long long)(c->global_batch / per));
        c->accum = c->global_batch / per;
    } else {
        c->accum = c->grad_accum ? c->grad_accum : 1;
    }
    c->tokens_per_step = c->micro_batch * c->accum * c->dp * c->seq_len;

    return 0;
}

/* Which offload combinations each framework (and bitsandbytes, and QLoRA
 * under ZeRO-3) can run. */
static int check_offload(const struct zs_cfg *c, struct zs_err *err)
{
    if (c->framework == ZS_FW_FSDP2) {
        /* CPUOffloadPolicy offloads parameters and optimizer together
         * (torch/distributed/fsdp/_fully_shard/_fsdp_api.py; DESIGN §4). */
        if (c->offload_optimizer != c->offload_param ||
            c->offload_optimizer == ZS_OFF_NVME)
            return zs_err_set(
                err, ZS_EUSAGE,
                "fsdp2 offloads parameters and optimizer together "
                "(CPUOffloadPolicy): use both '--offload-optimizer' "
                "and '--offload-param' none, or both cpu (got %s "
                "and %s)",
                zs_offload_name(c->offload_optimizer),
                zs_offload_name(c->offload_param));
    } else {
        if (c->offload_param != ZS_OFF_NONE && c->zero != 3)
            return zs_err_set(
                err, ZS_EUSAGE,
                "'--offload-param %s' needs '--zero 3' (DeepSpeed "
                "offloads parameters only in stage 3)",
                zs_offload_name(c->offload_param));
        if (c->offload_param != ZS_OFF_NONE &&
            c->offload_optimizer == ZS_OFF_NONE)
            return zs_err_set(
                err, ZS_EUSAGE,
                "'--offload-param %s' without '--offload-optimizer' "
                "is not a DeepSpeed configuration zsim models: "
                "offload the optimizer too",
                zs_offload_name(c->offload_param));
        int rc = zs_cfg_check_nvme(c, err);
        if (rc)
            return rc;
    }
    /* bitsandbytes optimizers keep their states on the GPU and fail on CPU
     * tensors: "Expected a cuda device, but got: cpu" (zsim lint rule
     * bnb-optimizer-offload; bitsandbytes #1402) */
    if (c->optimizer != ZS_OPT_ADAMW && c->offload_optimizer != ZS_OFF_NONE)
        return zs_err_set(
            err, ZS_EUSAGE,
            "'--optimizer %s' (bitsandbytes) cannot run with "
            "'--offload-optimizer "
            "%s': it fails with \"Expected a cuda device, but got: cpu\" "
            "(bitsandbytes #1402; see 'zsim lint')",
            k_optims[c->optimizer], zs_offload_name(c->offload_optimizer));
    if (c->method == ZS_METHOD_QLORA && c->framework == ZS_FW_DEEPSPEED &&
        c->zero == 3 && c->offload_param != ZS_OFF_NONE)
        return zs_err_set(
            err, ZS_EUSAGE,
            "qlora with '--offload-param cpu' is not supported by "
            "DeepSpeed ZeRO-3 (4-bit weights stay on the GPU)");

    return 0;
}

/* --lora-targets: "all" or projections by role (model.h zs_role). */
static int resolve_lora_targets(struct zs_cfg *c, struct zs_err *err)
{
    static const struct {
        const char *name;
        unsigned role;
    } roles[] = {{"q", ZS_ROLE_Q},       {"k", ZS_ROLE_K},
                 {"v", ZS_ROLE_V},       {"o", ZS_ROLE_O},
                 {"gate", ZS_ROLE_GATE}, {"up", ZS_ROLE_UP},
                 {"down", ZS_ROLE_DOWN}};
    const char *p = c->lora_targets;
    unsigned mask = 0;
    bool ok = *p != '\0';
    if (!strcmp(p, "all"))
        mask = ZS_ROLE_ALL_LINEAR;
    else
        while (ok && *p) {
            size_t n = strcspn(p, ","), k;
            for (k = 0; k < sizeof roles / sizeof roles[0]; k++)
                if (strlen(roles[k].name) == n &&
                    !strncmp(p, roles[k].name, n))
                    break;
            if (k == sizeof roles / sizeof roles[0] ||
                (mask & roles[k].role)) {
                ok = false;
                break;
            }
            mask |= roles[k].role;
            p += n;
            if (*p == ',' && *++p == '\0')
                ok = false;
        }
    if (!ok)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid value for '--lora-targets': must be "
                          "all, or q, k, v, o, gate, up, down joined by "
                          "commas, each at most once (got '%s')",
                          c->lora_targets);
    c->lora_target_mask = mask;
    return 0;
}

/* Trainer-dependent defaults (issue 10).
 * - CPU optimizer: DeepSpeed offload steps DeepSpeedCPUAdam
 *   (deepspeed/ops/adam/cpu_adam.py); FSDP2 steps whatever optimizer the
 *   user built: torch.optim.AdamW with defaults is the single-tensor
 *   for-loop on CPU (torch/optim/optimizer.py _default_to_fused_or_foreach:
 *   foreach only for CUDA-like devices, fused never defaulted); torchtune's
 *   recipes set fused=True with fsdp_cpu_offload.
 * - Launcher: HF Trainer users launch through accelerate (or torchrun);
 *   torchtitan and torchtune through torchrun (their run scripts).
 * - Precision (FSDP2's MixedPrecisionPolicy; compute is bf16 throughout):
 *   hf: accelerate's FSDP2 plugin with mixed_precision bf16 sets
 *   MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=bf16)
 *   (accelerate 16cb6eb8 utils/dataclasses.py set_mixed_precision) and
 *   upcasts trainable params to fp32 masters (utils/fsdp_utils.py "Upcast
 *   to fp32 master weights"): param fp32, reduce bf16.
 *   torchtitan: training.dtype float32 and mixed_precision_reduce float32
 *   (torchtitan b5bcd76c6 torchtitan/config/configs.py): fp32, fp32.
 *   torchtune: "dtype: bf16" loads the model in bf16 and shards it without
 *   a MixedPrecisionPolicy (torchtune bd2a0fc7c recipes/
 *   full_finetune_distributed.py, training/_distributed.py shard_model):
 *   params, grads and AdamW states all bf16, and foreach_reduce reduces in
 *   the grad dtype (reduce_dtype None -> bf16). */
static int resolve_trainer_defaults(struct zs_cfg *c, struct zs_err *err)
{
    /* Gradient clipping when not given: the HF Trainer's max_grad_norm 1.0
     * (transformers TrainingArguments), torchtitan's training.max_norm 1.0
     * (torchtitan/config/job_config.py), torchtune's recipes none
     * (recipes/full_finetune_distributed.py: self._clip_grad_norm =
     * cfg.get("clip_grad_norm", None)).  DeepSpeed takes it from its config
     * (train/setup.c) or, launched by the HF Trainer, max_grad_norm 1.0. */
    if (c->gradient_clipping < 0)
        c->gradient_clipping = c->trainer == ZS_TRAINER_TORCHTUNE ? 0 : 1.0;
    /* Liger's fused linear cross-entropy (--kernels fused) replaces the
     * loss, chunks and all: it and torchtune's chunked loss exclude each
     * other. */
    if ((c->loss == ZS_LOSS_CHUNKED || c->loss == ZS_LOSS_FP32_OUTPUT ||
         c->loss == ZS_LOSS_FLASH_XENTROPY || c->loss == ZS_LOSS_HALF ||
         c->loss == ZS_LOSS_FP32_LOGITS) &&
        c->kernels == ZS_KERNELS_FUSED)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--loss %s' contradicts '--kernels fused' "
                          "(Liger's fused linear cross-entropy never "
                          "materialises the logits): use one of them",
                          k_losses[c->loss]);
    /* F.scaled_dot_product_attention first shipped in PyTorch 2.0 (its
     * 2.0 release notes); before 2.2 its flash backend is flash-attn 1.x's
     * kernel (zs_cfg_attention_fa1) */
    if (zs_cfg_attention(c) == ZS_ATTN_SDPA && !zs_cfg_torch_at_least(c, 2, 0))
        return zs_err_set(err, ZS_EUSAGE,
                          "'--attention sdpa' needs '--torch-version' 2.0 "
                          "or later (F.scaled_dot_product_attention first "
                          "shipped in PyTorch 2.0); got %s",
                          c->torch_version);
    /* the fp32-output loss is scheduled by the FSDP schedule alone
     * (fsdp2.c loss_forward_fp32_output) */
    if ((c->loss == ZS_LOSS_FP32_OUTPUT || c->loss == ZS_LOSS_FP32_LOGITS) &&
        c->framework != ZS_FW_FSDP2)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--loss %s' needs '--framework fsdp2': "
                          "zsim schedules it in the FSDP step only",
                          k_losses[c->loss]);
    /* the half loss is scheduled by the DeepSpeed schedule alone (zero.c
     * with model.c loss_half) */
    if (c->loss == ZS_LOSS_HALF && c->framework != ZS_FW_DEEPSPEED)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--loss half' needs '--framework deepspeed': "
                          "zsim schedules it in the DeepSpeed step only");
    if (c->compile_loss == ZS_YES && c->kernels != ZS_KERNELS_COMPILED)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--compile-loss yes' needs '--kernels compiled' "
                          "(the loss is compiled along with the model)");
    if (c->compile_loss == ZS_AUTO)
        c->compile_loss = c->kernels == ZS_KERNELS_COMPILED ? ZS_YES : ZS_NO;
    /* Attention: torchtitan's Llama calls F.scaled_dot_product_attention(
     * xq, xk, xv, is_causal=True) (torchtitan 9dec370 models/llama/
     * model.py:209; from bcdeaa3 through models/attention.py
     * ScaledDotProductAttention with FLASH_ATTENTION first, cuDNN first on
     * sm100 only), which runs SDPA's flash backend on A100 and H100: cuDNN
     * ranks last by default from PyTorch 2.5.1 until 2.9 (pytorch PR
     * #162073 re-enabled it first for sm90 and sm100).  torchtune's
     * MultiHeadAttention calls it too (torchtune/modules/attention_utils.py
     * _sdpa_or_flex_attention at 1303695: nn.functional.scaled_dot_product_
     * attention unless a packed batch's BlockMask sends it to flex
     * attention, which is not modelled).  The HF Trainer keeps flash-attn
     * 2's rate [assumption: its attention implementation was not read per
     * run]. */
    c->attention = zs_cfg_attention(c);
    if (c->loss == ZS_LOSS_AUTO)
        c->loss = c->trainer == ZS_TRAINER_TORCHTUNE &&
                          c->kernels != ZS_KERNELS_FUSED
                      ? ZS_LOSS_CHUNKED
                      : ZS_LOSS_FULL;
    c->cpu_opt_impl = c->cpu_optimizer;
    if (c->cpu_opt_impl == ZS_CPUOPT_AUTO)
        c->cpu_opt_impl = c->framework == ZS_FW_DEEPSPEED
                              ? ZS_CPUOPT_DS_CPU_ADAM
                          : c->trainer == ZS_TRAINER_TORCHTUNE
                              ? ZS_CPUOPT_TORCH_FUSED
                              : ZS_CPUOPT_TORCH_LOOP;
    /* Launcher (docs/cpu-optimizer.md "Defaults"): DeepSpeed's own docs and
     * the HF Trainer DeepSpeed guide launch with `deepspeed` (no core
     * binding unless asked); HF Trainer + FSDP2 users launch through
     * `accelerate launch` (the Accelerate FSDP guide); torchtitan's and
     * torchtune's run scripts use torchrun / tune run (torchrun). */
    c->launcher_resolved = c->launcher;
    if (c->launcher_resolved == ZS_LAUNCH_AUTO)
        c->launcher_resolved = c->framework == ZS_FW_DEEPSPEED
                                   ? ZS_LAUNCH_DEEPSPEED
                               : c->trainer == ZS_TRAINER_HF
                                   ? ZS_LAUNCH_ACCELERATE
                                   : ZS_LAUNCH_TORCHRUN;
    c->param_dtype_resolved = c->param_dtype;
    if (c->param_dtype_resolved == ZS_DT_AUTO)
        c->param_dtype_resolved =
            c->trainer == ZS_TRAINER_TORCHTUNE ? ZS_DT_BF16 : ZS_DT_FP32;
    c->reduce_dtype_resolved = c->reduce_dtype;
    if (c->reduce_dtype_resolved == ZS_DT_AUTO)
        c->reduce_dtype_resolved =
            c->trainer == ZS_TRAINER_TORCHTITAN ? ZS_DT_FP32 : ZS_DT_BF16;
    c->opt_state_dtype_resolved = c->opt_state_dtype == ZS_DT_AUTO
                                      ? zs_cfg_opt_state_auto(c)
                                      : c->opt_state_dtype;
    /* torch's optimizers (FSDP2's trainers) keep their states in the
     * param's dtype: zeros_like(p) in torch/optim/adamw.py */
    if (c->framework != ZS_FW_DEEPSPEED &&
        c->opt_state_dtype_resolved != c->param_dtype_resolved)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--opt-state-dtype %s' needs DeepSpeed: torch's "
                          "optimizers keep their states in the param dtype "
                          "('--param-dtype %s')",
                          zs_dtype_name(c->opt_state_dtype_resolved),
                          zs_dtype_name(c->param_dtype_resolved));
    return 0;
}

/* overlap_comm's None: True for stage 3 only (config.h) */
static void resolve_overlap_comm(struct zs_cfg *c)
{
    c->overlap_comm_on = c->overlap_comm == ZS_AUTO ? c->zero == 3
                                                    : c->overlap_comm == ZS_YES;
}

static void resolve_pin(struct zs_cfg *c)
{
    /* offload_*.pin_memory default by DeepSpeed release (ds_keys.c's row,
     * PR #8207) */
    if (c->pin_memory == ZS_AUTO) {
        c->pin_param = c->pin_optimizer =
            zs_ds_key_default("zero_optimization.offload_param.pin_memory",
                              &c->ds_version) != 0;
    } else {
        c->pin_param = c->pin_optimizer = c->pin_memory == ZS_YES;
    }
    if (c->framework ==
        ZS_FW_FSDP2) /* CPUOffloadPolicy(pin_memory=True) default */
        c->pin_param = c->pin_optimizer = c->pin_memory != ZS_NO;
}

/* The phases, each in its own function above: topology, batch, what the
 * frameworks can offload, activation offload, "auto" buckets, LoRA targets,
 * the trainer's defaults, DeepSpeed's precision policy, pinning. */
int zs_cfg_loss_kernels(const struct zs_cfg *c)
{
    if (c->kernels == ZS_KERNELS_COMPILED && c->compile_loss == ZS_NO)
        return ZS_KERNELS_HF;
    return c->kernels;
}

int zs_cfg_resolve(struct zs_cfg *c, const struct zs_model *m,
                   const struct zs_cluster *cl, struct zs_err *err)
{
    int rc = zs_ds_version_parse_flag(c->deepspeed_version,
                                      "deepspeed-version", &c->ds_version, err);
    if (!rc && zs_torch_version_parse(c->torch_version, &c->torch_major,
                                      &c->torch_minor))
        rc = torch_flag_error("torch-version", c->torch_version, err);
    if (!rc)
        rc = resolve_topology(c, cl, err);
    if (!rc)
        rc = zs_cfg_check_sp(c, m, c->sp, "value for '--sp'", ZS_EUSAGE,
                             err);
    if (!rc)
        rc = check_cp(c, err);
    if (!rc)
        rc = resolve_batch(c, err);
    if (!rc)
        rc = check_offload(c, err);
    if (!rc)
        rc = check_act_offload(c, err);
    if (!rc)
        rc = check_sharding(c, err);
    if (!rc)
        rc = check_fsdp_version(c, err);
    if (!rc)
        rc = check_fp8(c, cl, err);
    if (rc)
        return rc;
    /* "auto" bucket knobs as HF/TRL resolve them (ds_keys.c) */
    zs_ds_keys_auto_hidden_cfg(c, m->hidden);
    rc = resolve_lora_targets(c, err);
    if (!rc)
        rc = resolve_trainer_defaults(c, err);
    if (!rc && c->framework == ZS_FW_DEEPSPEED)
        rc = check_deepspeed_policy(c, err);
    if (!rc)
        rc = check_offload_ratio(c, err);
    if (!rc)
        rc = check_optim_in_bwd(c, err);
    if (rc)
        return rc;
    resolve_pin(c);
    resolve_overlap_comm(c);
    if (!c->name[0])
        zs_strlcpy(c->name, "cli", sizeof c->name);
    return 0;
}

/* The name a choice field's value is spelled with in flags and scenario
 * files (the table's choices, indexed by the enum value), or "?" for a key
 * that is not a choice field or a value out of its range. */
int zs_cfg_attention(const struct zs_cfg *c)
{
    if (c->attention != ZS_ATTN_AUTO)
        return c->attention;
    /* resolve_trainer_defaults: torchtitan and torchtune call SDPA */
    return c->trainer == ZS_TRAINER_TORCHTITAN ||
                   c->trainer == ZS_TRAINER_TORCHTUNE
               ? ZS_ATTN_SDPA
               : ZS_ATTN_FLASH;
}

/* PyTorch 2.0 and 2.1 build SDPA's flash backend from flash-attn 1.x's CUDA
 * kernels (aten/src/ATen/native/transformers/cuda/flash_attn/fmha_api.cpp,
 * "Copyright (c) 2022, Tri Dao", the fmha kernels); 2.2 replaced them with
 * FlashAttention-2 (PyTorch 2.2 release notes; pytorch issue #125070: "In
 * PyTorch <2.2.0, SDPA supports Flash Attention v1"). */
bool zs_cfg_attention_fa1(const struct zs_cfg *c)
{
    int a = zs_cfg_attention(c);
    return a == ZS_ATTN_TRITON ||
           (a == ZS_ATTN_SDPA && !zs_cfg_torch_at_least(c, 2, 2));
}

void zs_cfg_alloc_conf_text(const struct zs_cfg *c, char *buf, size_t cap)
{
    size_t n;
    if (!cap)
        return;
    buf[0] = 0;
    if (c->alloc_conf == ZS_ALLOC_EXPANDABLE)
        zs_strlcpy(buf, "expandable_segments:True", cap);
    n = strlen(buf);
    if (c->max_split_size_mb > 0 && n < cap)
        snprintf(buf + n, cap - n, "%smax_split_size_mb:%lld", n ? "," : "",
                 (long long)c->max_split_size_mb);
}

void zs_cfg_kernels_text(const struct zs_cfg *c, char *buf, size_t cap)
{
    int a = zs_cfg_attention(c);
    const char *at = a == ZS_ATTN_EAGER    ? "eager (matmul, softmax, matmul)"
                     : a == ZS_ATTN_TRITON ? "flash-attn 1.x's Triton kernel"
                     : a == ZS_ATTN_FLASH  ? "flash-attn 2"
                     : zs_cfg_attention_fa1(c)
                         ? "SDPA's flash backend (flash-attn 1.x's kernel "
                           "before PyTorch 2.2)"
                         : "SDPA's flash backend (FlashAttention-2)";
    const char *ew = c->kernels == ZS_KERNELS_FUSED      ? "fused (Liger)"
                     : c->kernels == ZS_KERNELS_COMPILED ? "torch.compile"
                                                         : "HF eager";
    char alloc[96];
    zs_cfg_alloc_conf_text(c, alloc, sizeof alloc);
    /* the allocator only where it is not PyTorch's default */
    snprintf(buf, cap, "attention %s, element-wise %s%s%s", at, ew,
             alloc[0] ? ", PYTORCH_CUDA_ALLOC_CONF " : "", alloc);
}

const char *zs_cfg_choice_name(const char *key, int value)
{
    for (size_t i = 0; i < NFIELDS; i++) {
        const struct zs_field *f = &k_fields[i];
        if (f->type != ZS_F_ENUM || strcmp(f->key, key))
            continue;
        for (int j = 0; f->choices[j]; j++)
            if (j == value)
                return f->choices[j];
        break;
    }
    return "?";
}

const char *zs_offload_name(int off)
{
    return k_offloads[off < 0 || off > 2 ? 0 : off];
}
const char *zs_trainer_name(int t)
{
    return k_trainers[t < 0 || t > 2 ? 0 : t];
}
const char *zs_cpu_opt_name(int o)
{
    return k_cpu_opts[o < 0 || o > 3 ? 0 : o];
}
const char *zs_launcher_name(int l)
{
    return k_launchers[l < 0 || l > 4 ? 0 : l];
}
const char *zs_dtype_name(int d)
{
    return k_dtypes[d < 0 || d > 2 ? 0 : d];
}
const char *zs_act_offload_name(int ao)
{
    static const char *const k[] = {"none", "cpu_checkpointing (blocking)",
                                    "cpu_checkpointing (async)",
                                    "torchtune offload"};
    return k[ao < 0 || ao > 3 ? 0 : ao];
}
const char *zs_framework_name(int fw)
{
    return k_frameworks[fw ? 1 : 0];
}

const char *zs_cfg_framework_label(const struct zs_cfg *c)
{
    return c->framework != ZS_FW_FSDP2 ? "deepspeed"
           : c->fsdp_version == 1      ? "fsdp1"
                                       : "fsdp2";
}

void zs_cfg_ckpt_text(const struct zs_cfg *c, char *buf, size_t cap)
{
    if (c->checkpointing == ZS_CKPT_LAYER)
        snprintf(buf, cap, "layer:%lld", (long long)c->ckpt_every);
    else
        snprintf(buf, cap, "%s", zs_ckpt_name((enum zs_ckpt)c->checkpointing));
}

void zs_cfg_summary(const struct zs_cfg *c, char *buf, size_t cap)
{
    char off[96], ck[32];
    zs_cfg_ckpt_text(c, ck, sizeof ck);
    if (c->offload_optimizer == ZS_OFF_NONE && c->offload_param == ZS_OFF_NONE)
        snprintf(off, sizeof off, "no offload");
    else if (c->offload_optimizer == ZS_OFF_NVME)
        snprintf(off, sizeof off, "offload optimizer to nvme (buffer_count "
                 "%lld%s%s)%s", (long long)c->nvme_buffer_count,
                 c->pipeline_read ? ", pipeline_read" : "",
                 c->pipeline_write ? ", pipeline_write" : "",
                 c->offload_param == ZS_OFF_NVME ? ", params to nvme"
                 : c->offload_param == ZS_OFF_CPU ? ", params to cpu" : "");
    else if (c->offload_param == ZS_OFF_NVME)
        snprintf(off, sizeof off, "offload optimizer, params to nvme");
    else if (c->offload_param == ZS_OFF_NONE)
        snprintf(off, sizeof off, "offload optimizer");
    else
        snprintf(off, sizeof off, "offload optimizer+params");
    snprintf(
        buf, cap,
        "%s zero%lld, %s, %lld procs/node x %lld nodes, sp %lld, micro %lld "
        "x accum %lld, seq %lld, %s, ckpt %s",
        zs_cfg_framework_label(c), (long long)c->zero,
        off, (long long)c->procs_per_node,
        (long long)(c->world / (c->procs_per_node ? c->procs_per_node : 1)),
        (long long)c->sp, (long long)c->micro_batch, (long long)c->accum,
        (long long)c->seq_len, zs_method_name((enum zs_method)c->method),
        ck);
    if (c->cp > 1) {
        size_t len = strlen(buf);
        if (len < cap)
            snprintf(buf + len, cap - len, ", cp %lld", (long long)c->cp);
    }
    if (c->sharding != ZS_SHARD_AUTO) {
        size_t len = strlen(buf);
        if (len < cap)
            snprintf(buf + len, cap - len, "%s",
                     c->sharding == ZS_SHARD_NONE
                         ? ", no sharding (single device)"
                         : ", FSDP1 NO_SHARD (replicas, grads all-reduced)");
    }
    if (c->optimizer_in_bwd) {
        size_t len = strlen(buf);
        if (len < cap)
            snprintf(buf + len, cap - len, ", optimizer step in backward");
    }
    if (c->act_offload != ZS_AO_NONE) {
        size_t len = strlen(buf);
        if (len < cap)
            snprintf(buf + len, cap - len, ", activations offloaded (%s)",
                     zs_act_offload_name(c->act_offload));
    }
    if (c->fp8 == ZS_FP8_TENSORWISE) {
        size_t len = strlen(buf);
        if (len < cap)
            snprintf(buf + len, cap - len, ", fp8 linears (tensorwise%s)",
                     c->fp8_all_gather ? ", fp8 all-gather" : "");
    }
}
