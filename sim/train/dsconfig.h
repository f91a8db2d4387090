/*
 * dsconfig.h — reading a real DeepSpeed JSON config, with "auto" values
 * resolved the way Hugging Face Transformers/Accelerate/TRL resolve them.
 *
 * Every knob zsim models is a small value record: the resolved value, where
 * it came from (set in the file, "auto" resolved, "auto" left unresolved, or
 * DeepSpeed's default for the given version) and the line:column of its key
 * (0:0 when absent).  Sizes are in elements, as DeepSpeed means them.
 *
 * Defaults are DeepSpeed's own code defaults (deepspeed/runtime/zero/config.py,
 * offload_config.py; reference/zero3-offload-mechanics.md §0), which differ
 * from the docs table in places (stage3_prefetch_bucket_size 5e7, not 5e8;
 * overlap_comm True for stage 3).  Version-dependent: offload pin_memory is
 * False up to 0.19.4 and True from 0.19.5 (PR #8207).
 *
 * Unknown keys are not fatal: each one becomes a note (file:line:col with a
 * did-you-mean) in the caller's list, so `zsim lint` can report it.  Type and
 * range errors are fatal (ZS_EINPUT) with one located line.
 *
 * The loader allocates only through zs_malloc (cJSON hooks) and frees
 * everything before it returns; struct zs_dsconfig owns no heap memory.
 */
#ifndef ZS_DSCONFIG_H
#define ZS_DSCONFIG_H

#include "train/ds_version.h"
#include "util/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- Trainer arguments (HF TrainingArguments-like JSON) -------------------
 */

struct zs_trainer_args {
    bool present; /* a file was read */
    char path[256];
    int64_t per_device_train_batch_size; /* HF default 8 */
    int64_t gradient_accumulation_steps; /* default 1 */
    double max_grad_norm;                /* default 1.0; 0 disables clipping */
    char optim[48];                      /* default "adamw_torch" */
    double num_train_epochs; /* default 3 (also read as "max_epochs") */
    int64_t max_steps;       /* -1: none (also read as "max_iters") */
    char max_steps_key[16];  /* which key set it: "max_steps" or "max_iters" */
    bool bf16, fp16, gradient_checkpointing;
    int64_t dataset_samples; /* 0: unknown */
    double learning_rate, weight_decay, adam_beta1, adam_beta2, adam_epsilon;
};

/* Fills HF TrainingArguments defaults (transformers training_args.py). */
void zs_trainer_args_defaults(struct zs_trainer_args *t);
/* Reads a JSON object of TrainingArguments; unknown keys are ignored (a dump
 * of the full TrainingArguments is fine).  Errors: ZS_EINPUT, located. */
int zs_trainer_args_load(const char *path, struct zs_trainer_args *out,
                         struct zs_err *err);

/* ---- The config -----------------------------------------------------------
 */

enum zs_ds_origin {
    ZS_DS_DEFAULT = 0,    /* absent: DeepSpeed's default for the version */
    ZS_DS_SET,            /* given explicitly */
    ZS_DS_AUTO,           /* "auto", resolved as HF/Accelerate/TRL would */
    ZS_DS_AUTO_UNRESOLVED /* "auto" without the input to resolve it: DeepSpeed
                             then drops the key (config_utils.py filters
                             "auto"), so v is DeepSpeed's default */
};

struct zs_ds_int {
    int64_t v;
    enum zs_ds_origin from;
    int line, col; /* of the key; 0 when absent */
};
struct zs_ds_num {
    double v;
    enum zs_ds_origin from;
    int line, col;
};
struct zs_ds_bool {
    bool v;
    enum zs_ds_origin from;
    int line, col;
};

enum zs_ds_device { ZS_DS_DEV_NONE, ZS_DS_DEV_CPU, ZS_DS_DEV_NVME };
#define ZS_DS_PATH_MAX 256
/* communication_data_type: DEFAULT means "follows the precision" (engine.py:
 * fp16 -> fp16, bf16 -> bf16, else fp32). */
enum zs_ds_dtype {
    ZS_DS_DT_DEFAULT,
    ZS_DS_DT_FP16,
    ZS_DS_DT_BF16,
    ZS_DS_DT_FP32
};

struct zs_ds_offload {
    bool present;                  /* the block is in the file */
    int line, col;                 /* of the block's key */
    struct zs_ds_int device;       /* enum zs_ds_device */
    struct zs_ds_bool pin_memory;  /* version-dependent default */
    struct zs_ds_num ratio;        /* offload_optimizer only, default 1.0 */
    struct zs_ds_int buffer_count; /* NVMe: param 5, optimizer 4 */
    /* offload_param, NVMe: buffer_size 1e8, max_in_cpu 1e9 elements */
    struct zs_ds_int buffer_size, max_in_cpu;
    char nvme_path[ZS_DS_PATH_MAX]; /* NVMe: "" when unset (None) */
    /* offload_optimizer, NVMe: PipelinedOptimizerSwapper (default false) */
    struct zs_ds_bool pipeline_read, pipeline_write;
    /* offload_optimizer: SuperOffload (PR #7559, from 0.18.0; default
     * false), not modelled: setup.c refuses it */
    struct zs_ds_bool super_offload;
};

/* "aio" (deepspeed/runtime/swap_tensor/constants.py, aio_config.py,
 * 0.19.6 edaa7221): block_size 1048576, queue_depth 8,
 * intra_op_parallelism 1, single_submit false, overlap_events true,
 * use_gds false.  intra_op_parallelism was "thread_count" before 0.16.4
 * (PR #7056, commit c9da4892); each version reads only its own name. */
struct zs_ds_aio {
    bool present;
    int line, col;
    struct zs_ds_int block_size, queue_depth, intra_op_parallelism;
    struct zs_ds_int thread_count;
    struct zs_ds_bool single_submit, overlap_events, use_gds;
};

#define ZS_DS_NAME_MAX 48
/* DeepSpeed's documented nvme_path example (docs/_pages/config-json.md:643,
 * 0.19.6 edaa7221): what `plan --emit-ds-config` writes for the user to
 * edit */
#define ZS_DS_NVME_PATH_EXAMPLE "/local_nvme"

struct zs_dsconfig {
    char path[256];
    struct zs_ds_version version; /* the version defaults were taken for */
    bool have_zero_block;         /* "zero_optimization" present */

    struct zs_ds_int zero_stage; /* 0..3, default 0 */
    struct zs_ds_offload offload_param, offload_optimizer;
    struct zs_ds_aio aio;
    struct zs_ds_int reduce_bucket_size;                 /* default 5e8 */
    struct zs_ds_int stage3_prefetch_bucket_size;        /* default 5e7 */
    struct zs_ds_int stage3_param_persistence_threshold; /* default 1e5 */
    struct zs_ds_int stage3_model_persistence_threshold; /* sys.maxsize: 1e18 */
    struct zs_ds_int stage3_max_live_parameters;         /* default 1e9 */
    struct zs_ds_int stage3_max_reuse_distance;          /* default 1e9 */
    struct zs_ds_int sub_group_size;                     /* default 1e9 */
    struct zs_ds_int allgather_bucket_size;   /* default 5e8, stage 1/2 */
    struct zs_ds_int zero_hpz_partition_size; /* default 1 */
    struct zs_ds_bool overlap_comm;           /* default: stage == 3 */
    struct zs_ds_bool contiguous_gradients;   /* default true */
    struct zs_ds_bool reduce_scatter;         /* default true */
    struct zs_ds_bool stage3_gather_16bit_weights_on_model_save; /* false */
    struct zs_ds_bool stage3_use_all_reduce_for_fetch_params;    /* false */
    /* ZeRO++ qwZ / qgZ and MiCS (zero/config.py at edaa722 :313-343), not
     * modelled: setup.c refuses them when on */
    struct zs_ds_bool zero_quantized_weights, zero_quantized_nontrainable_weights,
        zero_quantized_gradients;
    struct zs_ds_int mics_shard_size; /* default -1: off */
    /* deprecated zero_optimization.cpu_offload / cpu_offload_param: true
     * means offload_optimizer / offload_param {"device": "cpu"}
     * (dsconfig.c legacy_offload) */
    struct zs_ds_bool cpu_offload, cpu_offload_param;

    struct zs_ds_int
        train_micro_batch_size_per_gpu;           /* default 1 when unknown */
    struct zs_ds_int gradient_accumulation_steps; /* default 1 */
    struct zs_ds_int train_batch_size;            /* 0 when not derivable */
    struct zs_ds_num gradient_clipping;           /* default 0 (off) */
    struct zs_ds_bool bf16_enabled, fp16_enabled; /* default false */
    /* bf16 master weights/grads and optimizer states (precision_config.py,
     * DeepSpeed >= 0.18.3, PR #7700); default false */
    struct zs_ds_bool bf16_master_weights_and_grads, bf16_optimizer_states;
    struct zs_ds_int communication_data_type;     /* enum zs_ds_dtype */

    struct {
        bool present;
        int line, col;
        char type[ZS_DS_NAME_MAX]; /* "AdamW", "Adam", ...; "" when absent */
        struct zs_ds_num lr, weight_decay, eps, beta1, beta2;
        /* params.torch_adam (DeepSpeed engine.py:2096-2106, 0.19.6): with
         * CPU offload, torch.optim.AdamW(**params) instead of
         * DeepSpeedCPUAdam; params.fused goes to it */
        struct zs_ds_bool torch_adam, fused;
    } optimizer;
    struct {
        bool present;
        char type[ZS_DS_NAME_MAX];
    } scheduler;
    /* zero_optimization.zenflow (PR #7391, from 0.17.5;
     * runtime/zenflow/zenflow_config.py), not modelled: setup.c refuses
     * it */
    struct {
        bool present;
        int line, col;
    } zenflow;
    /* Top-level features zsim does not simulate, read so that setup.c can
     * refuse them when on (DeepSpeed at edaa722): compile.deepcompile
     * (compile/config.py CompileConfig), tensor_parallel.autotp_size
     * (runtime/tensor_parallel/config.py TPTrainingConfig, default 0),
     * torch_autocast.enabled (runtime/config.py get_torch_autocast_enabled,
     * default false) */
    struct {
        bool present;
        int line, col;
        struct zs_ds_bool deepcompile;
    } compile;
    struct {
        bool present;
        int line, col;
        struct zs_ds_int autotp_size;
    } tensor_parallel;
    struct {
        bool present;
        int line, col;
        struct zs_ds_bool enabled;
    } torch_autocast;
    /* Ulysses degree (top-level "sequence_parallel_size", default 1):
     * DeepSpeed's data-parallel world is the processes over it
     * (runtime/config.py:721-722 at edaa722); --sp unless the flag spoke */
    struct zs_ds_int sequence_parallel_size;
    struct {
        bool present;
        int line, col;
        struct zs_ds_bool partition_activations, cpu_checkpointing,
            contiguous_memory_optimization, synchronize_checkpoint_boundary,
            profile;                         /* all default false */
        struct zs_ds_int number_checkpoints; /* 0: not given */
    } activation_checkpointing;

    int n_unknown; /* unknown keys seen (each noted when ctx->notes) */
};

/* Notes collected while loading (unknown keys).  Fixed storage: loading
 * allocates nothing for them; beyond ZS_DS_NOTES_MAX they are counted only. */
#define ZS_DS_NOTES_MAX 32
struct zs_ds_note {
    char key[128];   /* qualified: "zero_optimization.stage3_prefetch_bucket" */
    char where[300]; /* "ds.json:7:5" */
    char suggest[64]; /* did-you-mean, "" when none */
    bool rejected;    /* inside a block DeepSpeed validates with
                         extra="forbid": DeepSpeed refuses to start */
};
struct zs_ds_notes {
    struct zs_ds_note item[ZS_DS_NOTES_MAX];
    int n;       /* stored */
    int dropped; /* seen beyond ZS_DS_NOTES_MAX */
};

struct zs_dsconfig_ctx {
    int64_t hidden_size; /* 0: unknown ("auto" buckets stay unresolved) */
    int world_size;      /* processes; 0: unknown */
    int sp; /* the --sp flag's degree when given; 0: the JSON's
               sequence_parallel_size (data-parallel ranks: world_size / sp) */
    struct zs_ds_version version; /* 0.0.0: ZS_DS_VERSION_ASSUMED */
    const struct zs_trainer_args
        *trainer;              /* NULL or !present: no TrainingArguments */
    struct zs_ds_notes *notes; /* NULL: unknown keys are only counted */
};

/* Loads and resolves PATH.  *out is fully written on success; on failure its
 * contents are unspecified.  Errors: ZS_EINPUT (unreadable, malformed JSON
 * with file:line:column, wrong type or range, naming the field and the
 * allowed range), ZS_ENOMEM. */
int zs_dsconfig_load(const char *path, const struct zs_dsconfig_ctx *ctx,
                     struct zs_dsconfig *out, struct zs_err *err);
/* Same from memory; name is used in messages. */
int zs_dsconfig_load_text(const char *name, const char *text, size_t len,
                          const struct zs_dsconfig_ctx *ctx,
                          struct zs_dsconfig *out, struct zs_err *err);
/* A config with every value at its default for ctx (no file). */
void zs_dsconfig_defaults(const struct zs_dsconfig_ctx *ctx,
                          struct zs_dsconfig *out);

/* Writes c as a clean DeepSpeed JSON (every value explicit, no "auto"),
 * atomically: PATH.tmp.<pid> then rename.  Errors: ZS_EIO, ZS_ENOMEM. */
int zs_dsconfig_write(const struct zs_dsconfig *c, const char *path,
                      struct zs_err *err);
/* The same text into a zs_malloc'ed string (caller frees with zs_free). */
int zs_dsconfig_to_json(const struct zs_dsconfig *c, char **text,
                        struct zs_err *err);

/* Effective precision of parameters/gradients in bytes per element:
 * 2 for bf16/fp16, 4 for fp32. */
int zs_dsconfig_param_bytes(const struct zs_dsconfig *c);

const char *zs_ds_origin_name(enum zs_ds_origin o); /* "set", "auto", ... */
const char *zs_ds_device_name(int dev);             /* "none", "cpu", "nvme" */
/* The aio parallelism the config's DeepSpeed version reads: intra_op_parallelism
 * from 0.16.4, thread_count before (PR #7056). */
int64_t zs_ds_aio_parallelism(const struct zs_dsconfig *c);
bool zs_ds_aio_renamed(const struct zs_ds_version *v); /* >= 0.16.4 */

#endif
