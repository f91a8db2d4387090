/*
 * setup.c — see setup.h.
 */
#include "train/setup.h"
#include "train/ds_keys.h"
#include "train/dsconfig.h"

#include <stdio.h>
#include <string.h>

/* Copies what a DeepSpeed JSON says into cfg, except where a flag spoke. */
static int apply_ds(struct zs_cfg *cfg, const struct zs_cfg_given *given,
                    const struct zs_model *m, struct zs_err *err)
{
    struct zs_dsconfig ds;
    struct zs_dsconfig_ctx ctx;
    int rc;
    memset(&ctx, 0, sizeof ctx);
    ctx.hidden_size = m->hidden;
    ctx.world_size = (int)cfg->world;
    ctx.sp = zs_cfg_given_has(given, "sp") ? (int)cfg->sp : 0;
    ctx.version = cfg->ds_version; /* parsed by zs_cfg_resolve */
    rc = zs_dsconfig_load(cfg->ds_config, &ctx, &ds, err);
    if (rc)
        return rc;
    if (ds.have_zero_block && ds.zero_stage.from == ZS_DS_SET &&
        !zs_cfg_given_has(given, "zero")) {
        if (ds.zero_stage.v != 2 && ds.zero_stage.v != 3)
            return zs_err_set(
                err, ZS_EINPUT,
                "unsupported 'zero_optimization.stage' in %s: zsim models "
                "stages 2 and 3 (got %lld)",
                cfg->ds_config, (long long)ds.zero_stage.v);
        cfg->zero = ds.zero_stage.v;
    }
    /* optimizer-offload variants with a schedule of their own: simulated as
     * plain ZeRO-Offload they would be far off (the DeepSpeed blog's
     * Qwen2.5-3B ZeRO-2 step: 2.46 s offloaded, 1.12-1.42 s with ZenFlow) */
    if (ds.zenflow.present)
        return zs_err_set(
            err, ZS_EINPUT,
            "unsupported 'zero_optimization.zenflow' in %s:%d: zsim does not "
            "model ZenFlow (the top-k gradients stepped on the GPU, the rest "
            "on the CPU overlapped with the next steps); remove the block to "
            "simulate plain ZeRO-Offload",
            cfg->ds_config, ds.zenflow.line);
    /* ZeRO++ (hpZ's secondary partition, qwZ's and qgZ's quantised
     * collectives), MiCS's shard groups and the all-reduce parameter fetch
     * change what each rank holds and sends: none is simulated */
    {
        const char *k = NULL;
        if (ds.zero_hpz_partition_size.v > 1)
            k = "zero_hpz_partition_size";
        else if (ds.zero_quantized_weights.v)
            k = "zero_quantized_weights";
        else if (ds.zero_quantized_nontrainable_weights.v)
            k = "zero_quantized_nontrainable_weights";
        else if (ds.zero_quantized_gradients.v)
            k = "zero_quantized_gradients";
        else if (ds.mics_shard_size.v > 0)
            k = "mics_shard_size";
        else if (ds.stage3_use_all_reduce_for_fetch_params.v)
            k = "stage3_use_all_reduce_for_fetch_params";
        if (k)
            return zs_err_set(
                err, ZS_EINPUT,
                "unsupported 'zero_optimization.%s' in %s: zsim does not "
                "model ZeRO++, MiCS or the all-reduce parameter fetch; remove "
                "it to simulate plain ZeRO",
                k, cfg->ds_config);
    }
    if (ds.offload_optimizer.super_offload.v)
        return zs_err_set(
            err, ZS_EINPUT,
            "unsupported 'zero_optimization.offload_optimizer.super_offload' "
            "in %s: zsim does not model SuperOffload (its CPU step overlapped "
            "with the backward, for Superchips); set it false",
            cfg->ds_config);
    /* features that change what each rank holds, sends and computes, none
     * simulated: DeepCompile (ZeRO-3's fetches and releases scheduled by
     * the compiled graph, compile/), AutoTP training (tensor parallel),
     * torch autocast (parameters kept in their own dtype, the matmuls cast).
     * Top-level keys are read with dict.get: a release before the key's
     * ignores it, and so does zsim (ds_keys.c has the releases) */
    {
        const char *k = NULL, *what = NULL;
        int line = 0;
        if (ds.compile.deepcompile.v &&
            zs_ds_key_read_by("compile.deepcompile", &ds.version)) {
            k = "compile.deepcompile";
            line = ds.compile.line;
            what = "DeepCompile (ZeRO-3's fetches and releases scheduled by "
                   "the compiled graph)";
        } else if (ds.tensor_parallel.autotp_size.v > 1 &&
                   zs_ds_key_read_by("tensor_parallel.autotp_size",
                                     &ds.version)) {
            k = "tensor_parallel.autotp_size";
            line = ds.tensor_parallel.line;
            what = "tensor parallelism (AutoTP training)";
        } else if (ds.torch_autocast.enabled.v &&
                   zs_ds_key_read_by("torch_autocast.enabled",
                                     &ds.version)) {
            k = "torch_autocast.enabled";
            line = ds.torch_autocast.line;
            what = "DeepSpeed's torch autocast (parameters kept in their own "
                   "dtype, the matmuls cast)";
        }
        if (k)
            return zs_err_set(err, ZS_EINPUT,
                              "unsupported '%s' in %s:%d: zsim does not model "
                              "%s; remove it to simulate plain ZeRO",
                              k, cfg->ds_config, line, what);
    }
    /* the Ulysses degree: DeepSpeed's data-parallel world is the processes
     * over it (runtime/config.py:721-722 at edaa722); the flag wins */
    if (ds.sequence_parallel_size.from == ZS_DS_SET &&
        !zs_cfg_given_has(given, "sp")) {
        int64_t sp = ds.sequence_parallel_size.v;
        char what[320];
        if (cfg->world % sp)
            return zs_err_set(err, ZS_EINPUT,
                              "invalid 'sequence_parallel_size' in %s: must "
                              "divide the %lld processes (got %lld)",
                              cfg->ds_config, (long long)cfg->world,
                              (long long)sp);
        snprintf(what, sizeof what, "'sequence_parallel_size' in %s",
                 cfg->ds_config);
        rc = zs_cfg_check_sp(cfg, m, sp, what, ZS_EINPUT, err);
        if (rc)
            return rc;
        cfg->sp = sp;
    }
    if (ds.communication_data_type.from == ZS_DS_SET &&
        ds.communication_data_type.v == ZS_DS_DT_FP32)
        return zs_err_set(
            err, ZS_EINPUT,
            "unsupported 'communication_data_type' \"fp32\" in %s: zsim's "
            "DeepSpeed schedule reduce-scatters in bf16; use \"bf16\" or "
            "remove the key",
            cfg->ds_config);
    /* every knob with a zsim flag, through ds_keys.c's rows */
    zs_ds_keys_to_cfg(&ds, cfg, given);
    /* a micro-batch or accumulation DeepSpeed derives from train_batch_size
     * (dsconfig.c resolve_batch, runtime/config.py
     * _set_batch_related_parameters) is the run's, though the key is absent
     * (its origin stays "default", which the rows do not copy) */
    if (ds.train_batch_size.from == ZS_DS_SET) {
        if (ds.train_micro_batch_size_per_gpu.from == ZS_DS_DEFAULT &&
            !zs_cfg_given_has(given, "micro-batch"))
            cfg->micro_batch = ds.train_micro_batch_size_per_gpu.v;
        if (ds.gradient_accumulation_steps.from == ZS_DS_DEFAULT &&
            !zs_cfg_given_has(given, "grad-accum"))
            cfg->grad_accum = ds.gradient_accumulation_steps.v;
    }
    /* offload_optimizer.ratio outside ZeRO-3 with the optimizer on the CPU
     * is not read by DeepSpeed ("Only valid with ZeRO Stage 3",
     * offload_config.py): the run is the whole offload (zsim lint warns,
     * offload-ratio-ignored) */
    if (!zs_cfg_given_has(given, "offload-ratio") &&
        (cfg->zero != 3 || cfg->offload_optimizer != ZS_OFF_CPU))
        cfg->offload_ratio = 1.0;
    /* "optimizer": {"params": {"torch_adam": true}}: DeepSpeed steps
     * torch.optim.AdamW on the CPU (engine.py:2096-2106, 0.19.6), the
     * for-loop unless "fused": true is passed through to it */
    if (ds.optimizer.torch_adam.v && !zs_cfg_given_has(given, "cpu-optimizer"))
        cfg->cpu_optimizer =
            ds.optimizer.fused.v ? ZS_CPUOPT_TORCH_FUSED : ZS_CPUOPT_TORCH_LOOP;
    /* bf16 master weights (config.c check_deepspeed_policy has the
     * sources): both flags are '--param-dtype bf16' where zsim models them
     * (zs_cfg_ds_bf16_gap); the master flag alone keeps fp32 states
     * ('--opt-state-dtype fp32'), which DeepSpeed allows only with the
     * optimizer offloaded; the states flag alone DeepSpeed refuses
     * (runtime/config.py at edaa722 :1049).  After the offload ratio and
     * the CPU optimizer above, which it reads. */
    /* a release before 0.18.3 reads neither key (its bf16 section is read
     * key by key, runtime/config.py get_bfloat16_enabled at v0.16.0): the
     * run keeps fp32 masters, as zsim then does */
    if (!zs_ds_key_read_by("bf16.bf16_master_weights_and_grads",
                           &cfg->ds_version))
        ds.bf16_master_weights_and_grads.v = ds.bf16_optimizer_states.v =
            false;
    if (ds.bf16_optimizer_states.v && !ds.bf16_master_weights_and_grads.v)
        return zs_err_set(
            err, ZS_EINPUT,
            "invalid 'bf16.bf16_optimizer_states' in %s: DeepSpeed asserts "
            "\"bf16_optimizer_states requires bf16_master_weights_and_grads "
            "to be enabled.\"",
            cfg->ds_config);
    if (ds.bf16_master_weights_and_grads.v) {
        const char *gap;
        if (!ds.bf16_optimizer_states.v &&
            cfg->offload_optimizer == ZS_OFF_NONE)
            return zs_err_set(
                err, ZS_EINPUT,
                "invalid 'bf16.bf16_master_weights_and_grads' in %s: without "
                "'bf16_optimizer_states' the states stay fp32 and DeepSpeed "
                "asserts \"Master weights feature requires ZeRO-3 Offload "
                "with DeepSpeedCPUAdam.\"",
                cfg->ds_config);
        if (!zs_cfg_given_has(given, "param-dtype"))
            cfg->param_dtype = ZS_DT_BF16;
        /* bf16_optimizer_states is "auto": DeepSpeed's own choice of states
         * for the release and offload (zs_cfg_opt_state_auto: before 0.19.1
         * an offloaded DeepSpeedCPUAdam makes fp32 moments whatever it
         * says) */
        if (!zs_cfg_given_has(given, "opt-state-dtype"))
            cfg->opt_state_dtype =
                ds.bf16_optimizer_states.v ? ZS_DT_AUTO : ZS_DT_FP32;
        gap = zs_cfg_ds_bf16_gap(cfg);
        if (gap)
            return zs_err_set(err, ZS_EINPUT,
                              "unsupported "
                              "'bf16.bf16_master_weights_and_grads' in %s: %s",
                              cfg->ds_config, gap);
    }
    if ((ds.offload_optimizer.pin_memory.from == ZS_DS_SET ||
         ds.offload_param.pin_memory.from == ZS_DS_SET) &&
        !zs_cfg_given_has(given, "pin-memory"))
        cfg->pin_memory =
            (ds.offload_optimizer.present ? ds.offload_optimizer.pin_memory.v
                                          : ds.offload_param.pin_memory.v)
                ? ZS_YES
                : ZS_NO;
    /* activation_checkpointing (issue 14 §3): cpu_checkpointing is what
     * --cpu-checkpointing simulates; partition_activations keeps it on the
     * blocking copy (config.c check_act_offload). */
    if (ds.activation_checkpointing.cpu_checkpointing.v &&
        !zs_cfg_given_has(given, "cpu-checkpointing")) {
        if (cfg->checkpointing != ZS_CKPT_FULL)
            return zs_err_set(
                err, ZS_EINPUT,
                "unsupported 'activation_checkpointing.cpu_checkpointing' in "
                "%s:%d: it offloads the inputs of layers checkpointed by "
                "deepspeed.checkpointing.checkpoint, which needs "
                "'--checkpointing full' (got %s)",
                cfg->ds_config,
                ds.activation_checkpointing.cpu_checkpointing.line,
                zs_ckpt_name((enum zs_ckpt)cfg->checkpointing));
        cfg->cpu_checkpointing = true;
    }
    cfg->ds_partition_activations =
        ds.activation_checkpointing.partition_activations.v;
    cfg->framework = ZS_FW_DEEPSPEED;
    return 0;
}

int zs_setup_resolve(struct zs_cfg *cfg, const struct zs_cfg_given *given,
                     struct zs_model *m, struct zs_cluster *cl,
                     struct zs_err *err)
{
    int rc = zs_model_resolve(cfg->model, m, err);
    if (rc)
        return rc;
    rc = zs_hw_resolve(cfg->gpus, 0, (int)cfg->nodes, cl, err);
    if (!rc)
        rc = zs_hw_set_host(cl, cfg->host_ram_bytes, cfg->host_reserved_bytes,
                            err);
    if (rc)
        return rc;
    rc = zs_cfg_resolve(cfg, m, cl, err);
    if (!rc) /* ALiBi models without a flash-attention path (model.h) */
        rc =
            zs_model_check_attention(m, (enum zs_attn_impl)cfg->attention, err);
    if (rc || !cfg->ds_config[0])
        return rc;
    rc = apply_ds(cfg, given, m, err);
    if (rc)
        return rc;
    /* the DeepSpeed JSON may change micro-batch and accumulation */
    cfg->global_batch = 0;
    return zs_cfg_resolve(cfg, m, cl, err);
}
