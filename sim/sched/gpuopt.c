/*
 * gpuopt.c — the optimizer stepped on the GPU, per parameter tensor: the
 * bytes of its states, the HBM bytes one step moves per element, the kernels
 * it launches and whether it blocks the host (sched.h).
 *
 * torch.optim.AdamW (foreach, the default on CUDA): exp_avg and exp_avg_sq
 * zeros_like(param), so 2 x the param dtype per element (torch/optim/
 * adamw.py init_state_per_param, pytorch 002d2f0bb40c).
 * bitsandbytes AdamW8bit / PagedAdamW8bit (0.44.1, 263af70b7bb0,
 * bitsandbytes/optim/optimizer.py Optimizer2State.init_state:445-491): a
 * tensor of fewer than min_8bit_size = 4096 elements keeps two fp32 states
 * (8 B per element); a larger one two uint8 states (2 B) plus, block-wise
 * (block_wise=True is the default), an fp32 absmax per state per 256
 * elements (blocks = n // 256 + (n % 256 > 0)).  The dynamic quantile maps
 * (qmap1/qmap2, 256 fp32 each) are shared by every tensor and not counted.
 * Paged states (get_state_buffer:326-333: numel >= 1e5 under is_paged; the
 * rest torch.zeros_like) come from F.get_paged, cudaMallocManaged memory
 * (bitsandbytes/functional.py get_paged, csrc cget_managed_ptr): outside
 * PyTorch's caching allocator, so absent from its allocated and reserved
 * peaks, and never an OOM: under pressure the driver evicts pages to host
 * memory.  zsim counts them apart (zs_bctx paged_bytes) and says how much
 * of them the GPU cannot hold beside the allocator's peak; the page
 * migration that then costs time is not modelled.
 */
#include "sched/sched_int.h"

#define BNB_MIN_8BIT_SIZE 4096 /* Optimizer2State min_8bit_size default */
#define BNB_BLOCK 256          /* init_state: blocks = n // 256 (+1) */

static bool is_bnb(const struct zs_cfg *c)
{
    return c->optimizer == ZS_OPT_ADAMW_8BIT ||
           c->optimizer == ZS_OPT_PAGED_ADAMW_8BIT;
}

int64_t zs_gpu_opt_state_bytes(const struct zs_cfg *c, int64_t elems, int pb)
{
    if (!is_bnb(c))
        return elems * 2 * pb;
    if (elems < BNB_MIN_8BIT_SIZE)
        return elems * 8;
    /* two uint8 states + two fp32 absmax per 256-element block */
    return elems * 2 + (elems + BNB_BLOCK - 1) / BNB_BLOCK * 2 * 4;
}

double zs_gpu_opt_elem_bytes(const struct zs_cfg *c, int64_t elems, int pb)
{
    if (!is_bnb(c))
        /* read param, grad, exp_avg, exp_avg_sq, write param, exp_avg,
         * exp_avg_sq, each in the param dtype (the charge the whole-model
         * step has always used; the foreach kernels' own passes and the
         * exp_avg_sq_sqrt temporary are not counted) */
        return 7.0 * pb;
    /* kOptimizer32bit2State / kOptimizerStatic8bit2StateBlockwise: read
     * param and grad and write param (3 x pb), read and write both states
     * (fp32: 16 B; uint8: 4 B, the absmax reads and writes 0.06 B) */
    return elems < BNB_MIN_8BIT_SIZE ? 3.0 * pb + 16 : 3.0 * pb + 4;
}

int zs_gpu_opt_kernels(const struct zs_cfg *c)
{
    /* _multi_tensor_adamw without capturable (torch/optim/adamw.py,
     * pytorch 002d2f0bb40c): _foreach_mul_ (weight decay), _foreach_lerp_,
     * _foreach_mul_, _foreach_addcmul_, _foreach_sqrt, _foreach_div_,
     * _foreach_add_, _foreach_addcdiv_ (the step count is a CPU tensor);
     * bitsandbytes: one optimizer_update_*bit* kernel per tensor */
    return is_bnb(c) ? 1 : 8;
}

bool zs_gpu_opt_paged(const struct zs_cfg *c, int64_t elems)
{
    return c->optimizer == ZS_OPT_PAGED_ADAMW_8BIT && elems >= 100000;
}

bool zs_gpu_opt_syncs(const struct zs_cfg *c)
{
    /* Optimizer8bit.step calls torch.cuda.synchronize() after each
     * parameter's update_step (bitsandbytes 0.44.1 optimizer.py:292) */
    return is_bnb(c);
}
