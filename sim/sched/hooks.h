/*
 * hooks.h — DeepSpeed ZeRO-3's and ZeRO-1/2's host work counted in calls
 * into PyTorch (hooks.c has the derivation, the code read and the sources).  The
 * schedules turn the counts into host time with the GPU profile's
 * hook_call_ns (zs_gpu_hook_call_ns); the counts alone are pure functions so
 * that they can be checked by hand.
 */
#ifndef ZS_SCHED_HOOKS_H
#define ZS_SCHED_HOOKS_H

#include "train/ds_version.h"

#include <stdbool.h>
#include <stdint.h>

/* What one schedule unit stands for in ZeRO-3's hooks. */
struct zs_ds3_unit_calls {
    int modules; /* hooked modules whose hooks run: the leaf, its LoRA
                    modules, the containers charged to it */
    int fetched; /* parameter tensors gathered, waited for and released (not
                    persistent) */
    int trained; /* trained parameter tensors: grad hooks, backward only */
};

/* Calls of the module hooks of `modules` modules in one pass: forward or
 * recompute (backward false), or backward with the grad hooks of `trained`
 * tensors. */
int64_t zs_ds3_module_calls(const struct zs_ds_version *v, int modules,
                            int trained, bool backward);
/* Calls of waiting for `tensors` gathered tensors (fetch_sub_module's wait
 * loop), and of releasing them (release_sub_module, free_param). */
int64_t zs_ds3_wait_calls(const struct zs_ds_version *v, int tensors);
int64_t zs_ds3_release_calls(const struct zs_ds_version *v, int tensors);
/* Calls of one all-gather launch of `tensors` parameter tensors over
 * `world` ranks (all_gather_coalesced, its handle's copy-out included). */
int64_t zs_ds3_gather_calls(const struct zs_ds_version *v, int tensors,
                            int world);
/* Calls of one IPG bucket flush of `tensors` gradients over `world` ranks;
 * off_opt: the partitions go to the CPU (offload_optimizer); boundary: the
 * accumulation boundary (norms and the fp32 copy with offload_optimizer). */
int64_t zs_ds3_flush_calls(const struct zs_ds_version *v, int tensors,
                           int world, bool off_opt, bool boundary);

/* DeepSpeed ZeRO-1/2: calls of one trained tensor's grad hook (its copy
 * into the bucket), and of one bucket flush of `tensors` gradients whose
 * elements belong to `slices` ranks' partitions, over `world` ranks, with
 * or without overlap_comm; off_opt: the optimizer is offloaded, and this
 * rank's tensors' calls are zs_ds2_offload_tensor_calls' instead. */
int64_t zs_ds2_grad_hook_calls(void);
int64_t zs_ds2_flush_calls(const struct zs_ds_version *v, int tensors,
                           int slices, int world, bool overlap, bool off_opt);
/* With the optimizer offloaded, one tensor of this rank's partition in
 * copy_grads_in_partition: the CPU accumulation round trip when it runs
 * (accumulate), the norm, inf/nan check and fp32 copy at the boundary. */
int64_t zs_ds2_offload_tensor_calls(bool accumulate, bool boundary);

#endif
