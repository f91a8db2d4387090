/*
 * config.h — the resolved training configuration: what one simulation runs.
 *
 * Every scenario field has a CLI flag and every flag a scenario field
 * (DESIGN §4): both are read through one table (config.c), keyed by the
 * scenario name ("micro_batch") whose flag is the same with dashes
 * ("--micro-batch").  zs_cfg_resolve then checks cross-field rules (FSDP2's
 * offload is all-or-nothing, accumulation reaching the global batch, sp
 * dividing the world) and fills the derived fields.
 */
#ifndef ZS_CONFIG_H
#define ZS_CONFIG_H

#include "hw/hw.h"
#include "model/model.h"
#include "train/ds_version.h"
#include "util/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum zs_framework { ZS_FW_DEEPSPEED, ZS_FW_FSDP2 };
enum zs_offload { ZS_OFF_NONE, ZS_OFF_CPU, ZS_OFF_NVME };
enum zs_tristate { ZS_NO = 0, ZS_YES = 1, ZS_AUTO = 2 };
/* Element-wise/norm kernels the training code runs (sched/kernels.c). */
enum zs_kernels { ZS_KERNELS_HF, ZS_KERNELS_FUSED, ZS_KERNELS_COMPILED };
/* PYTORCH_CUDA_ALLOC_CONF of the GPU caching allocator (engine/pool.c). */
enum zs_alloc_conf { ZS_ALLOC_DEFAULT, ZS_ALLOC_EXPANDABLE };
/* Float8 training of the linears (--fp8): none, or torchao's Float8Linear
 * with dynamic tensorwise scaling (sched/fetch_units.c). */
enum zs_fp8 { ZS_FP8_NONE, ZS_FP8_TENSORWISE };
enum zs_optim { ZS_OPT_ADAMW, ZS_OPT_ADAMW_8BIT, ZS_OPT_PAGED_ADAMW_8BIT };
/* The training loop around the framework (issue 10 §2): it decides FSDP2's
 * accumulation semantics, the precision policy and the CPU optimizer users
 * get by default. */
enum zs_trainer { ZS_TRAINER_HF, ZS_TRAINER_TORCHTITAN, ZS_TRAINER_TORCHTUNE };
/* The loss over the logits: whole (HF ForCausalLMLoss, torchtitan),
 * torchtune's CEWithChunkedOutputLoss, or FP32_OUTPUT: the model's forward
 * returns fp32 logits and computes the loss on a contiguous shifted copy
 * (transformers before ForCausalLMLoss) and the training loop holds the
 * output until after backward, as Answer.AI's train.py (model.c
 * zs_model_loss_bytes), or FLASH_XENTROPY: flash-attn's fused
 * cross-entropy over the bf16 logits (llm-foundry's default
 * loss_fn: fused_crossentropy; model.c loss_fused_whole). */
enum zs_loss {
    ZS_LOSS_AUTO,
    ZS_LOSS_FULL,
    ZS_LOSS_CHUNKED,
    ZS_LOSS_FP32_OUTPUT,
    ZS_LOSS_FLASH_XENTROPY,
    ZS_LOSS_HALF, /* the loss on the 16-bit logits, no upcast: 2022
                     transformers' GPT-2/OPT loss, ColossalAI's GPTLMLoss */
    /* transformers' fp32 logits as ZS_LOSS_FP32_OUTPUT, but the output is
     * dropped before backward (the HF Trainer's compute_loss returns only
     * the loss) */
    ZS_LOSS_FP32_LOGITS
};
/* torchtune CEWithChunkedOutputLoss.__init__ num_output_chunks default 8
 * (torchtune/modules/loss/ce_chunked_output_loss.py at
 * 0031bfb080bd35ec533c412df883cf2bf7bf7fe4); no recipe at that commit
 * overrides it. */
#define ZS_TORCHTUNE_LOSS_CHUNKS 8
/* The CPU optimizer implementation (issue 10 §1); AUTO resolves from the
 * framework and trainer in zs_cfg_resolve. */
enum zs_cpu_opt {
    ZS_CPUOPT_AUTO,
    ZS_CPUOPT_DS_CPU_ADAM,
    ZS_CPUOPT_TORCH_FUSED,
    ZS_CPUOPT_TORCH_LOOP
};
/* How the processes were launched: it sets OMP_NUM_THREADS (issue 10 §1). */
enum zs_launcher {
    ZS_LAUNCH_AUTO,
    ZS_LAUNCH_DEEPSPEED,
    ZS_LAUNCH_DEEPSPEED_BIND,
    ZS_LAUNCH_TORCHRUN,
    ZS_LAUNCH_ACCELERATE
};
/* Element dtypes of FSDP2's precision policy (issue 10 §3). */
enum zs_dtype { ZS_DT_AUTO, ZS_DT_FP32, ZS_DT_BF16 };
/* Activation offload (issue 14 §3; sim/sched/actoff.c has the sources):
 * DeepSpeed's cpu_checkpointing as a blocking pageable copy (before 0.19.6,
 * or with partition_activations) or as the asynchronous pinned side-stream
 * engine (0.19.6, PR #8282); torchtune's OffloadActivations. */
/* Parameter sharding (--sharding): AUTO shards as --zero says (FSDP2
 * fully_shard: FULL_SHARD at 3, SHARD_GRAD_OP at 2); NONE runs without any
 * sharding: one process training the plain module, as torchtune's
 * single-device recipes (recipes/lora_finetune_single_device.py and
 * full_finetune_single_device.py at 1814feb17a90 build the model on the
 * device and never wrap it) (sched/fsdp2.c); NO_SHARD is FSDP1's
 * ShardingStrategy.NO_SHARD on any number of processes (full replicas, grads
 * all-reduced per FlatParameter: torch/distributed/fsdp/api.py at v2.2,
 * "similar to PyTorch's DistributedDataParallel API"; Answer.AI's fsdp_qlora
 * train.py at 4cd69234 maps --sharding_strategy ddp to it) (sched/fsdp2.c).
 * The names come from zs_sharding_name. */
enum zs_sharding { ZS_SHARD_AUTO, ZS_SHARD_NONE, ZS_SHARD_NO_SHARD };
const char *zs_sharding_name(int sharding);
enum zs_act_offload {
    ZS_AO_NONE,
    ZS_AO_DS_SYNC,
    ZS_AO_DS_ASYNC,
    ZS_AO_TORCHTUNE
};

struct zs_cfg {
    /* ---- inputs (scenario fields / flags) ---- */
    char name[128];         /* scenario name (file stem) */
    char model[256];        /* alias, library name or path */
    char gpus[64];          /* SPEC */
    int64_t nodes;          /* 0: from SPEC */
    int64_t host_ram_bytes; /* 0: the node's */
    int64_t host_reserved_bytes; /* --host-reserved; 0: the node's */
    int64_t seq_len;
    int64_t micro_batch;
    int64_t grad_accum;   /* 0: from global_batch, else 1 */
    int64_t global_batch; /* sequences per optimizer step; 0: micro*accum*dp */
    int method;           /* enum zs_method */
    int64_t lora_rank;
    double lora_dropout;    /* PEFT LoraConfig lora_dropout (model.c) */
    char lora_targets[64];  /* "all" or a comma list of q,k,v,o,gate,up,down */
    unsigned lora_target_mask; /* resolved: enum zs_role mask (model.h) */
    int framework;         /* enum zs_framework */
    int64_t zero;          /* 2 or 3 */
    int offload_optimizer; /* enum zs_offload */
    int offload_param;     /* enum zs_offload */
    int checkpointing;     /* enum zs_ckpt */
    int loss;              /* enum zs_loss (AUTO resolved by zs_cfg_resolve) */
    int64_t ckpt_every;    /* ZS_CKPT_LAYER: every Nth block ("layer:N") */
    int attention;         /* enum zs_attn_impl (AUTO resolved by
                              zs_cfg_resolve) */
    int kernels;           /* enum zs_kernels */
    int compile_loss;      /* enum zs_tristate: torch.compile covers the loss
                              (--compile-loss; AUTO resolved by
                              zs_cfg_resolve: YES under --kernels compiled) */
    int alloc_conf;        /* enum zs_alloc_conf */
    /* PYTORCH_CUDA_ALLOC_CONF max_split_size_mb (engine/pool.c); 0: unset,
     * PyTorch's default (no limit) */
    int64_t max_split_size_mb;
    int64_t procs;         /* processes (GPUs used) per node; 0: all */
    int64_t sp;            /* Ulysses sequence-parallel degree */
    int64_t cp;            /* context-parallel degree: PyTorch's
                              context_parallel (ring attention over SDPA),
                              FSDP2 */
    char ds_config[256];   /* DeepSpeed JSON to read knobs from ("" none) */
    int64_t dataset_samples;
    int64_t epochs;
    int64_t
        gpu_reserved_bytes; /* held by another process (a colocated server) */
    int64_t gpu_reserved_gpus; /* on how many GPUs per node, counted from the
                                  last one (vLLM on GPUs 4-7); 0: on all */
    char deepspeed_version[16];
    char torch_version[16]; /* PyTorch release "X.Y" (ZS_TORCH_VERSION_DEFAULT) */
    int optimizer;  /* enum zs_optim */
    int zero_init;  /* enum zs_tristate: model built under zero.Init */
    int pin_memory; /* enum zs_tristate: offload_*.pin_memory; AUTO = version
                       default */
    int64_t steps;  /* steady steps to simulate (>= 1) */

    /* DeepSpeed knobs, elements (defaults: config.py, mechanics §0); -1 =
     * "auto" resolved as Accelerate/TRL do from the hidden size. */
    int64_t reduce_bucket_size;
    int64_t prefetch_bucket_size;
    int64_t param_persistence_threshold;
    int64_t max_live_parameters;
    /* stage3_model_persistence_threshold: the most persistent elements in
     * all (parameter_offload.py mark_persistent_parameters); DeepSpeed's
     * default sys.maxsize is held as 1e18, no cap for any model */
    int64_t model_persistence_threshold;
    int64_t max_reuse_distance;
    int64_t sub_group_size;
    /* offload_optimizer.ratio (Twin-Flow, ZeRO-3 with the optimizer on the
     * CPU): the share of sub-groups stepped by DeepSpeedCPUAdam, the rest
     * by torch.optim.AdamW on the GPU (zs_twin_cpu_groups); 1: all */
    double offload_ratio;
    /* enum zs_tristate: zero_optimization.overlap_comm; AUTO is DeepSpeed's
     * None, True for stage 3 only (zero/config.py overlap_comm_valid at
     * edaa722; v0.6.5 constants.py ZERO_OPTIMIZATION_OVERLAP_COMM_DEFAULT
     * False, ZERO3_..._DEFAULT True), resolved into overlap_comm_on */
    int overlap_comm;
    bool overlap_comm_on;
    bool contiguous_gradients;
    double gradient_clipping;

    /* Trainer, CPU optimizer and precision policy (issue 10).  AUTO values
     * are resolved by zs_cfg_resolve into the fields below them. */
    int trainer;           /* enum zs_trainer */
    int cpu_optimizer;     /* enum zs_cpu_opt */
    int launcher;          /* enum zs_launcher */
    int64_t cpu_threads;   /* threads per rank for CPU work; 0: launcher's */
    int param_dtype;       /* enum zs_dtype: sharded/master params + states */
    int reduce_dtype;      /* enum zs_dtype: gradient reduction */
    /* enum zs_dtype: the optimizer's states; auto: the param dtype (torch's
     * optimizers, DeepSpeed's '--param-dtype bf16' = bf16_optimizer_states
     * too); fp32 under bf16 params: DeepSpeed's bf16 master weights alone,
     * DeepSpeedCPUAdam's default fp32_optimizer_states */
    int opt_state_dtype;

    /* ---- derived by zs_cfg_resolve (read-only) ---- */
    int64_t procs_per_node; /* resolved procs */
    int64_t world;          /* procs_per_node * nodes */
    int64_t dp;    /* world / sp: data-parallel replicas of the batch */
    int64_t accum; /* resolved accumulation */
    int64_t tokens_per_step;       /* global tokens per optimizer step */
    bool pin_param, pin_optimizer; /* resolved pin_memory for each offload */
    struct zs_ds_version ds_version; /* parsed deepspeed_version */
    int torch_major, torch_minor;    /* parsed torch_version */
    int cpu_opt_impl;          /* resolved enum zs_cpu_opt (never AUTO) */
    int launcher_resolved;     /* resolved enum zs_launcher (never AUTO) */
    int param_dtype_resolved;  /* resolved enum zs_dtype (never AUTO) */
    int reduce_dtype_resolved; /* resolved enum zs_dtype (never AUTO) */
    int opt_state_dtype_resolved; /* resolved enum zs_dtype (never AUTO) */

    /* ---- whole run (issue 4; sim/run/run.h), inputs appended here ---- */
    int64_t max_steps; /* optimizer steps in all; 0: epochs x steps per epoch */
    int64_t eval_every; /* evaluation pass every K optimizer steps; 0: none */
    int64_t
        eval_samples;    /* samples per evaluation pass; 0: 1% of the dataset */
    int64_t save_every;  /* checkpoint every K optimizer steps; 0: none */
    bool save_epoch_end; /* checkpoint at the end of every epoch */
    bool save_last;      /* checkpoint when training ends */
    int64_t dataloader_workers; /* DataLoader num_workers per rank */
    bool persistent_workers;    /* DataLoader persistent_workers */
    int64_t dataset_bytes;      /* the dataset's in-memory size in each rank */
    char leak[64];         /* "none", a preset, "BYTES/step" or "BYTES/epoch" */
    int load_dtype;        /* enum zs_load_dtype: model materialised at load */
    double gpu_hour_price; /* currency per GPU-hour; 0: no cost line */

    /* ---- activation offload (issue 14 §3; sched/actoff.c) ---- */
    bool cpu_checkpointing;   /* DeepSpeed activation_checkpointing.
                                 cpu_checkpointing (--cpu-checkpointing) */
    bool offload_activations; /* torchtune enable_activation_offloading
                                 (--offload-activations) */
    /* From the DeepSpeed JSON only (activation_checkpointing.
     * partition_activations): keeps cpu_checkpointing on the blocking path
     * (checkpointing.py _get_cpu_offload_engine). */
    bool ds_partition_activations;
    int act_offload; /* derived: enum zs_act_offload */
    int sharding;    /* enum zs_sharding (--sharding) */
    /* torchtune's optimizer_in_bwd (--optimizer-in-bwd): one optimizer per
     * parameter, stepped by a post-accumulate-grad hook the moment its grad
     * is ready, then zero_grad (sched/fsdp2.c, config.c check_optim_in_bwd) */
    bool optimizer_in_bwd;
    /* PyTorch FSDP API (--fsdp-version) of --framework fsdp2: 2 fully_shard,
     * 1 FullyShardedDataParallel (FlatParameter per wrapped unit; HF
     * accelerate before fsdp_version 2, Answer.AI's fsdp_qlora).  With CPU
     * offload FSDP1 keeps a pinned _cpu_grad of every flat parameter, frozen
     * or not (fsdp2.c flat_param_host) */
    int64_t fsdp_version;
    /* NVMe offload (docs/nvme.md): node rates in GB/s (0: the profile's),
     * offload_optimizer buffer_count and pipeline flags */
    double nvme_read_gbps, nvme_write_gbps;
    int64_t nvme_buffer_count;
    bool pipeline_read, pipeline_write;
    /* offload_param nvme (AsyncPartitionedParameterSwapper): buffer_count,
     * buffer_size (elements) and max_in_cpu (elements) */
    int64_t param_buffer_count, param_buffer_size, param_max_in_cpu;
    /* Float8 training (torchao.float8 through torchtitan's float8
     * converter): fp8 = enum zs_fp8; fp8_all_gather: Float8LinearConfig
     * enable_fsdp_float8_all_gather, FSDP2 all-gathers the converted
     * weights in fp8 (fsdp2.c shard_bytes) */
    int fp8;
    bool fp8_all_gather;
};

enum zs_load_dtype { ZS_LOAD_FP32, ZS_LOAD_BF16 };

/* Writes every default (the table's) into cfg. */
void zs_cfg_defaults(struct zs_cfg *cfg);
/* Reads a scenario JSON (strict; unknown keys are errors with did-you-mean)
 * over the current values of cfg. */
int zs_cfg_load_scenario(const char *path, struct zs_cfg *cfg,
                         struct zs_err *err);
/* Applies one flag: key is the flag without dashes ("micro-batch"), value its
 * text.  Unknown key -> ZS_EUSAGE with did-you-mean; bad value -> ZS_EUSAGE
 * "invalid value for '--micro-batch': must be an integer in [1, 4096] (got
 * '0')". */
int zs_cfg_apply_flag(struct zs_cfg *cfg, const char *key, const char *value,
                      struct zs_err *err);
/* Whether `key` (flag spelling) is a configuration flag. */
bool zs_cfg_is_flag(const char *key);
/* Names of every configuration flag (for option tables), NULL-terminated. */
const char *const *zs_cfg_flag_names(void);

/* The set of configuration fields given as flags on a command line, by field:
 * a value a DeepSpeed JSON holds never overrides one (train/setup.c).  A
 * plain value, all false when zeroed; the caller owns it.  Flags are named
 * with dashes ("micro-batch"); unknown names are ignored. */
#define ZS_CFG_FIELDS_MAX 128
struct zs_cfg_given {
    bool field[ZS_CFG_FIELDS_MAX];
};
void zs_cfg_given_add(struct zs_cfg_given *g, const char *flag);
/* g may be NULL: no flag given. */
bool zs_cfg_given_has(const struct zs_cfg_given *g, const char *flag);

/* The PyTorch release assumed when none is given: the one the CPU
 * optimizer's rates were measured with (validation/host/host_rates.json,
 * "torch 2.11.0+cu130"). */
#define ZS_TORCH_VERSION_DEFAULT "2.11"
/* Parses a PyTorch release, "X.Y" or "X.Y.Z" with X in [1, 99] and Y, Z in
 * [0, 99]; 0 or -1.  The patch part is read and ignored. */
int zs_torch_version_parse(const char *text, int *major, int *minor);
/* Whether cfg's PyTorch (after zs_cfg_resolve) is major.minor or later. */
bool zs_cfg_torch_at_least(const struct zs_cfg *cfg, int major, int minor);

/* Twin-Flow (offload_optimizer.ratio, config.c): how many of nsub
 * sub-groups DeepSpeed steps on the CPU at this ratio and release, whether
 * they are the last ones (0.18.0 on) or the first, and the sub-groups it
 * steps on the GPU, [*g0, *g1) (empty at ratio 1). */
int64_t zs_twin_cpu_groups(int64_t nsub, double ratio,
                           const struct zs_ds_version *v);
bool zs_twin_cpu_last(const struct zs_ds_version *v);
void zs_twin_gpu_groups(int64_t nsub, double ratio,
                        const struct zs_ds_version *v, int64_t *g0,
                        int64_t *g1);

/* Cross-field checks and derived fields, given the model and cluster. */
int zs_cfg_resolve(struct zs_cfg *cfg, const struct zs_model *m,
                   const struct zs_cluster *c, struct zs_err *err);

/* The checkpointing as flags spell it: "full", "none", or "layer:N"
 * (torchtitan selective layer AC keeps N). */
void zs_cfg_ckpt_text(const struct zs_cfg *c, char *buf, size_t cap);
/* One line: "zero3 offload opt=cpu param=cpu, 8 procs/node, micro 1 x accum 8,
 * ckpt full". */
void zs_cfg_summary(const struct zs_cfg *cfg, char *buf, size_t cap);

/* A choice field's value as its flag spells it ("?" when out of range). */
const char *zs_cfg_choice_name(const char *key, int value);
/* The attention implementation cfg runs (enum zs_attn_impl): its
 * `attention`, or for auto the trainer's (zs_cfg_resolve stores it). */
int zs_cfg_attention(const struct zs_cfg *cfg);
/* True when the attention cfg runs is flash-attn 1.x's kernel: the Triton
 * port (`triton`), or SDPA's flash backend before PyTorch 2.2. */
bool zs_cfg_attention_fa1(const struct zs_cfg *cfg);
/* The kernels cfg charges, for people: "attention flash-attn 2,
 * element-wise HF eager". */
void zs_cfg_kernels_text(const struct zs_cfg *cfg, char *buf, size_t cap);
/* PYTORCH_CUDA_ALLOC_CONF's value for cfg's allocator, as PyTorch spells it
 * ("expandable_segments:True,max_split_size_mb:128"); "" for PyTorch's
 * default. */
void zs_cfg_alloc_conf_text(const struct zs_cfg *cfg, char *buf, size_t cap);
const char *zs_offload_name(int off);
const char *zs_framework_name(int fw);
/* "deepspeed", "fsdp1" or "fsdp2": the framework with FSDP's API version. */
const char *zs_cfg_framework_label(const struct zs_cfg *c);
/* enum zs_act_offload: "none", "cpu_checkpointing (blocking)", ... */
const char *zs_act_offload_name(int ao);
/* The kernel mode the loss runs in: --kernels, except eager (HF) when the
 * model is compiled and the loss is not (--compile-loss no). */
int zs_cfg_loss_kernels(const struct zs_cfg *c);
const char *zs_trainer_name(int t);     /* "hf", "torchtitan", "torchtune" */
const char *zs_cpu_opt_name(int o);     /* "ds-cpu-adam", ... ("auto") */
const char *zs_launcher_name(int l);    /* "accelerate", ... ("auto") */
const char *zs_dtype_name(int d);       /* "fp32", "bf16" ("auto") */

/* Precision policy in bytes per element (issue 10 §3), after zs_cfg_resolve.
 * zs_cfg_param_bytes: the sharded (master) parameters and everything that
 * takes their dtype: FSDP2's sharded grads (foreach_reduce casts the reduced
 * grads to the original dtype), AdamW's exp_avg and exp_avg_sq
 * (torch.optim.AdamW allocates them zeros_like(param)), the H2D copy of an
 * offloaded shard and the elements the CPU optimizer reads and writes:
 * 4 for fp32, 2 for pure bf16.  DeepSpeed: the master weights, 4 (bf16.enabled
 * keeps fp32 masters; bf16 masters are rejected in zs_cfg_resolve).
 * zs_cfg_reduce_bytes: the reduce-scatter's element (FSDP2 reduce_dtype,
 * DeepSpeed communication_data_type). */
/* Ranks the parameters, grads and optimizer states are split over: the
 * world, or 1 when nothing is sharded (--sharding none, FSDP1 NO_SHARD:
 * every rank holds the whole model, config.h enum zs_sharding). */
int64_t zs_cfg_shard_world(const struct zs_cfg *c);
int zs_cfg_param_bytes(const struct zs_cfg *cfg);
/* Why DeepSpeed's bf16 master weights + bf16 optimizer states cannot be
 * simulated with cfg's offload, optimizer and ratio (a phrase for an error
 * message), or NULL when they can (config.c check_deepspeed_policy has the
 * sources; setup.c words it for a --ds-config). */
const char *zs_cfg_ds_bf16_gap(const struct zs_cfg *cfg);
/* What opt_state_dtype "auto" resolves to: the param dtype, but fp32 under
 * DeepSpeed's bf16 master weights with the optimizer offloaded before 0.19.1
 * (DeepSpeedCPUAdam's default fp32 moments; config.c has the source). */
/* A Ulysses degree sp against the model's heads and the sequence, as
 * DeepSpeed checks it; `what` names where it came from in the one-line
 * error ("value for '--sp'", "'sequence_parallel_size' in FILE"), `code`
 * its exit (ZS_EUSAGE, ZS_EINPUT). */
int zs_cfg_check_sp(const struct zs_cfg *c, const struct zs_model *m,
                    int64_t sp, const char *what, int code, struct zs_err *err);

/* The ranks one sequence is cut over: the Ulysses degree times the
 * context-parallel degree (at most one of them is above 1).  Each rank
 * holds seq / this many tokens of every per-token tensor. */
int64_t zs_cfg_seq_shards(const struct zs_cfg *c);

int zs_cfg_opt_state_auto(const struct zs_cfg *cfg);
int zs_cfg_reduce_bytes(const struct zs_cfg *cfg);
/* Whether FSDP2 keeps every parameter's unsharded gradient on the GPU across
 * the micro-steps of an accumulation and reduce-scatters once per step: the
 * HF Trainer runs all micro-batches but the last under accelerate's no_sync,
 * which for FSDP2 is set_requires_gradient_sync(False) (config.c). */
bool zs_cfg_grads_held_unsharded(const struct zs_cfg *cfg);
/* torchtitan and torchtune train with FSDP2 only: ZS_EUSAGE for DeepSpeed
 * under them (also checked by zs_cfg_resolve). */
int zs_cfg_check_trainer(const struct zs_cfg *cfg, struct zs_err *err);
/* NVMe offload's combination rules (config.c). */
int zs_cfg_check_nvme(const struct zs_cfg *cfg, struct zs_err *err);

#endif
