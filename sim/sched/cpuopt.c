/*
 * cpuopt.c — the CPU optimizer as implementation x threads x host memory
 * bandwidth (docs/cpu-optimizer.md; issue 10 §1).
 *
 * time = bytes(implementation) / min(threads x per-thread rate, the rank's
 * share of node DRAM bandwidth).  The per-thread rates are the node
 * profile's ("optimizer" group); the DRAM share is the "host memory bus"
 * link of simulate.c (node bandwidth / ranks per node: every rank steps at
 * once after the same synchronous backward); the threads come from the
 * launcher, here.
 */
#include "sched/sched_int.h"

#include <stdio.h>
#include <string.h>

void zs_cpu_threads(const struct zs_cfg *c, const struct zs_node *nd,
                    int *threads, double *effective, const char **why)
{
    int procs = c->procs_per_node > 0 ? (int)c->procs_per_node : 1;
    int share = nd->cpu_cores / procs; /* physical cores per rank */
    double oversub = nd->cpu_oversubscription >= 1 ? nd->cpu_oversubscription
                                                   : 1.0;
    if (share < 1)
        share = 1;
    if (c->cpu_threads > 0) {
        /* --cpu-threads N: the user sets OMP_NUM_THREADS=N; more threads
         * than the rank's cores share them at the oversubscription cost */
        *threads = (int)c->cpu_threads;
        *effective = c->cpu_threads <= share ? (double)c->cpu_threads
                                             : (double)share / oversub;
        *why = "--cpu-threads";
        return;
    }
    if (c->trainer == ZS_TRAINER_TORCHTUNE && c->framework == ZS_FW_FSDP2 &&
        c->offload_param != ZS_OFF_NONE) {
        /* torchtune recipes call training.set_torch_num_threads() when
         * fsdp_cpu_offload is set: cores // world per rank ("~2x speed up
         * ... fused AdamW on CPU"), fidelity review item 3 */
        *threads = share;
        *effective = share;
        *why = "torchtune set_torch_num_threads";
        return;
    }
    switch (c->launcher_resolved) {
    case ZS_LAUNCH_DEEPSPEED_BIND:
        /* deepspeed/launcher/launch.py:246-248 (DeepSpeed 0.19.6, edaa7221):
         * with --bind_cores_to_rank, OMP_NUM_THREADS = cores_per_rank =
         * psutil.cpu_count(logical=False) // local ranks
         * (deepspeed/utils/numa.py get_numactl_cmd) */
        *threads = share;
        *effective = share;
        *why = "deepspeed --bind_cores_to_rank";
        return;
    case ZS_LAUNCH_DEEPSPEED:
        /* launch.py sets OMP_NUM_THREADS only with --bind_cores_to_rank:
         * every rank's OpenMP (DeepSpeedCPUAdam) and intra-op pool takes
         * every hardware thread; the ranks share the node's cores at the
         * profile's oversubscription slowdown (PR #7474: binding 1.3x) */
        *threads = 2 * nd->cpu_cores; /* [assumption] SMT 2 (Xeon, EPYC) */
        *effective = (double)share / oversub;
        *why = "deepspeed launcher, unbound";
        return;
    case ZS_LAUNCH_ACCELERATE:
        /* accelerate commands/launch.py:1358-1359 (16cb6eb8):
         * num_cpu_threads_per_process = OMP_NUM_THREADS or 1, exported as
         * OMP_NUM_THREADS (utils/launch.py:392); with DeepSpeed on one node
         * it runs torch.distributed.run, which sets 1 as well */
    case ZS_LAUNCH_TORCHRUN:
    default:
        /* torch/distributed/run.py config_from_args (pytorch f34fa151):
         * OMP_NUM_THREADS=1 when unset and nproc_per_node > 1 */
        *threads = procs > 1 ? 1 : 2 * nd->cpu_cores;
        *effective = procs > 1 ? 1.0 : (double)share;
        *why = c->launcher_resolved == ZS_LAUNCH_ACCELERATE
                   ? "accelerate launch (OMP_NUM_THREADS=1)"
                   : "torchrun (OMP_NUM_THREADS=1)";
        return;
    }
}

void zs_cpu_opt_bytes(const struct zs_cfg *c, double *fused_bytes,
                      double *op_bytes)
{
    /* element size of master params, grads and states on the CPU: pure bf16
     * keeps all of them in bf16 (FSDP2's param_dtype bf16; DeepSpeed's bf16
     * master weights + bf16_optimizer_states, whose DeepSpeedCPUAdam is built
     * with fp32_optimizer_states=False, engine.py :2108-2135 at edaa722, and
     * steps bf16 params and states through the same Step_8 template,
     * csrc/adam/cpu_adam_impl.cpp :147-180) */
    double es = c->param_dtype_resolved == ZS_DT_BF16 ? 2.0 : 4.0;
    /* the states' (DeepSpeed's bf16 master weights alone keep them fp32:
     * DeepSpeedCPUAdam's fp32_optimizer_states default) */
    double ss = c->opt_state_dtype_resolved == ZS_DT_BF16 ? 2.0 : 4.0;
    *fused_bytes = 0;
    *op_bytes = 0;
    switch (c->cpu_opt_impl) {
    case ZS_CPUOPT_DS_CPU_ADAM:
    case ZS_CPUOPT_TORCH_FUSED:
        /* One pass: read p, g, m, v, write p, m, v = 7 elements.
         * DeepSpeed csrc/includes/cpu_adam.h Step_AVX (0.19.6 edaa7221,
         * lines 159-198: simd_load grad, exp_avg, exp_avg_sq, param;
         * simd_store param, exp_avg, exp_avg_sq); torch
         * aten/src/ATen/native/cpu/FusedAdamKernel.cpp (PR #123074) the
         * same per element.  p and g in the param dtype, m and v in the
         * states' (equal but under DeepSpeed's bf16 master weights alone:
         * 3 x 2 + 4 x 4 = 22 B). */
        *fused_bytes = 3 * es + 4 * ss;
        break;
    case ZS_CPUOPT_TORCH_LOOP:
    default:
        /* torch.optim.AdamW default on CPU = _single_tensor_adam
         * (torch/optim/adam.py; foreach only on CUDA-like devices,
         * torch/utils/_foreach_utils.py): per element
         *   param.mul_(1 - lr*wd)            r p, w p        2
         *   exp_avg.lerp_(grad, 1-b1)        r m g, w m      3
         *   exp_avg_sq.mul_(b2)              r v, w v        2
         *     .addcmul_(grad, grad, 1-b2)    r v g, w v      3
         *   exp_avg_sq.sqrt()                r v, w t1 (new) 2
         *   t1 / bias_correction2_sqrt       r t1, w t2(new) 2
         *   .add_(eps)                       r t2, w t2      2
         *   param.addcdiv_(exp_avg, t2)      r p m t2, w p   4
         * = 20 elements (80 B fp32) in 8 passes, plus the two fresh
         * temporaries (sqrt, div): page faults and zero-fill on first touch.
         * Measured (validation/host/host_rates.json, torch 2.11, 1 thread,
         * 268M fp32 elements): for-loop 7.493 ns/element, mul_ 0.450 ns per
         * 8 B = 17.8 GB/s, so 7.493 x 17.8 = 133.4 B-equivalent; less the
         * 80 B of passes, 53.4 B for 2 fresh elements (8 B): each fresh
         * element costs 6.7 elements of streaming.
         * Before PyTorch 2.1 the first moment is two passes,
         * "exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)": mul_ r m, w m
         * (2) and add_ r m g, w m (3), 5 elements where lerp_ moves 3, so
         * 22 elements; the rest is the same (torch/optim/adamw.py
         * _single_tensor_adamw of 1.13.1, read in Debian's python3-torch
         * 1.13.1+dfsg-4, whose AdamW defaults to it, foreach=None -> False;
         * 1.11's AdamW calls the same loop in torch/optim/_functional.py
         * adamw [assumption: not read at v1.11.0]).  lerp_ came with
         * pytorch/pytorch PR #104796 "[optim] use lerp whenever possible",
         * merged 2023-07-11, after 2.0 (2023-03) and before 2.1 ("to not
         * dispatch as many kernels (2 from an add and mul)"). */
        *op_bytes = ((zs_cfg_torch_at_least(c, 2, 1) ? 20 : 22) +
                     2 * ZS_FRESH_BYTE_EQ) *
                    es;
        break;
    }
    if (c->framework == ZS_FW_DEEPSPEED) {
        /* stage3.py step (0.19.6): unscale_and_clip_grads fp32 grad.mul_
         * (r 4, w 4) and fp16_partitioned_groups_flat[i].data.copy_(fp32)
         * (r 4, w 2): torch ops at torch's rate (fidelity review item 11) */
        *op_bytes += 8 + 6;
    } else if (c->gradient_clipping > 0) {
        /* FSDP2 + CPUOffloadPolicy: clip_grad_norm_ on CPU DTensors per
         * tensor (foreach is CUDA-only): the norm reads each grad (1
         * element), the clip mul_ reads and writes it (2 elements);
         * fidelity review item 10.  HF Trainer clips at 1.0 by default. */
        *op_bytes += 3 * es;
    }
}

const char *zs_cpu_opt_label(int impl)
{
    switch (impl) {
    case ZS_CPUOPT_DS_CPU_ADAM:
        return "DeepSpeedCPUAdam";
    case ZS_CPUOPT_TORCH_FUSED:
        return "torch.optim.AdamW(fused=True)";
    default:
        return "torch.optim.AdamW() (for-loop on CPU)";
    }
}

/* The `accelerate launch` line of zs_launch_line: nodes machines of procs
 * processes each, thr CPU threads per process when --cpu-threads is given. */
static void accelerate_line(const struct zs_cfg *c, int nodes, long long procs,
                            int thr, const char *ds_config, char *buf,
                            size_t cap)
{
    snprintf(buf, cap,
             "accelerate launch%s%s --num_machines %d --num_processes %lld "
             "--num_cpu_threads_per_process %d train.py",
             c->framework == ZS_FW_DEEPSPEED ? " --use_deepspeed" : "",
             ds_config ? " --deepspeed_config_file " : "", nodes,
             procs * nodes, c->cpu_threads > 0 ? thr : 1);
    if (ds_config) { /* the path goes after the flag */
        char tmp[600];
        snprintf(tmp, sizeof tmp,
                 "accelerate launch --use_deepspeed "
                 "--deepspeed_config_file %s --num_machines %d "
                 "--num_processes %lld --num_cpu_threads_per_process %d "
                 "train.py",
                 ds_config, nodes, procs * nodes,
                 c->cpu_threads > 0 ? thr : 1);
        snprintf(buf, cap, "%s", tmp);
    }
}

void zs_launch_line(const struct zs_cfg *c, const struct zs_node *nd,
                    int nodes, const char *ds_config, char *buf, size_t cap)
{
    int thr;
    double eff;
    const char *why;
    char env[48] = "", ds[300] = "";
    long long procs = (long long)c->procs_per_node;
    zs_cpu_threads(c, nd, &thr, &eff, &why);
    if (c->cpu_threads > 0 || (c->trainer == ZS_TRAINER_TORCHTUNE &&
                               c->framework == ZS_FW_FSDP2 &&
                               c->offload_param != ZS_OFF_NONE))
        snprintf(env, sizeof env, "OMP_NUM_THREADS=%d ", thr);
    else if (c->launcher_resolved == ZS_LAUNCH_TORCHRUN && procs > 1)
        snprintf(env, sizeof env, "OMP_NUM_THREADS=1 ");
    if (ds_config)
        snprintf(ds, sizeof ds, " --deepspeed %s", ds_config);
    switch (c->launcher_resolved) {
    case ZS_LAUNCH_DEEPSPEED:
    case ZS_LAUNCH_DEEPSPEED_BIND:
        if (nodes > 1)
            snprintf(buf, cap,
                     "%sdeepspeed%s --hostfile hostfile --num_nodes %d "
                     "--num_gpus %lld train.py%s",
                     env,
                     c->launcher_resolved == ZS_LAUNCH_DEEPSPEED_BIND
                         ? " --bind_cores_to_rank"
                         : "",
                     nodes, procs, ds);
        else
            snprintf(buf, cap, "%sdeepspeed%s --num_gpus %lld train.py%s", env,
                     c->launcher_resolved == ZS_LAUNCH_DEEPSPEED_BIND
                         ? " --bind_cores_to_rank"
                         : "",
                     procs, ds);
        break;
    case ZS_LAUNCH_ACCELERATE:
        accelerate_line(c, nodes, procs, thr, ds_config, buf, cap);
        break;
    default:
        if (c->trainer == ZS_TRAINER_TORCHTUNE)
            /* torchtune's launcher wraps torchrun (torchtune/_cli/run.py);
             * its distributed recipes by method */
            snprintf(buf, cap,
                     "%stune run --nnodes %d --nproc_per_node %lld %s "
                     "--config CONFIG",
                     env, nodes, procs,
                     c->method == ZS_METHOD_FULL ? "full_finetune_distributed"
                                                 : "lora_finetune_distributed");
        else
            snprintf(buf, cap,
                     "%storchrun --nnodes %d --nproc-per-node %lld "
                     "train.py%s",
                     env, nodes, procs, ds);
        break;
    }
    {
        /* the allocator the run was simulated with, as the environment the
         * command needs (PyTorch reads it at its first CUDA allocation) */
        char alloc[96];
        zs_cfg_alloc_conf_text(c, alloc, sizeof alloc);
        char pre[128];
        int np = alloc[0] ? snprintf(pre, sizeof pre,
                                     "PYTORCH_CUDA_ALLOC_CONF=%s ", alloc)
                          : 0;
        size_t n = strlen(buf);
        if (np > 0 && (size_t)np < sizeof pre && n + (size_t)np < cap) {
            memmove(buf + np, buf, n + 1);
            memcpy(buf, pre, (size_t)np);
        }
    }
    {
        size_t n = strlen(buf);
        char torch[32] = "";
        if (c->cpu_opt_impl == ZS_CPUOPT_TORCH_LOOP) /* what it runs: cpuopt */
            snprintf(torch, sizeof torch, ", PyTorch %d.%d", c->torch_major,
                     c->torch_minor);
        snprintf(buf + n, cap > n ? cap - n : 0,
                 "  # %s%s%s, %d CPU thread%s per rank (%s)",
                 zs_cpu_opt_label(c->cpu_opt_impl), torch,
                 c->framework == ZS_FW_DEEPSPEED &&
                         c->cpu_opt_impl != ZS_CPUOPT_DS_CPU_ADAM
                     ? " (DeepSpeed optimizer params \"torch_adam\": true)"
                     : "",
                 thr, thr == 1 ? "" : "s", why);
    }
}
