/*
 * run.c — the whole run composed from one step simulation; see run.h.
 *
 * Levels of rank 0's node (bytes), with procs local ranks, global step g in
 * epoch e, i = g's position in its epoch (1..spe):
 *
 *   moment     host level of the node
 *   ---------  ---------------------------------------------------------------
 *   load       procs x (runtime + materialised model + one checkpoint shard)
 *   init       procs x max(engine init peak, the .clone().float() transient)
 *   step 1     first.peak_host_per_node   + leak(g) + workers(g)
 *   step g>1   steady.peak_host_per_node  + leak(g) + workers(g)
 *   eval g     resident + eval loader forks             + leak(g) + workers(g)
 *   save g     resident + 16-bit state dict on rank 0's host
 *                                                        + leak(g) + workers(g)
 *   boundary   resident + leak(first step of e, incl. e's epoch leak)
 *                       + new workers
 *
 *   leak(g)    = procs x (once + step x g + epoch x (e - 1))
 *   workers(g) = procs x W x (page tables + copy-on-write(i))
 *
 * Both leak(g) and workers(g) are nondecreasing in g within an epoch, which
 * makes the per-epoch binary searches exact.
 *
 * Cost: O(epochs x log(steps per epoch)); no step is simulated here.
 */
#include "run/run.h"
#include "util/units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- figures ------------------------------------------------------------ */

/* Checkpoint read and write bandwidth per node.  [assumption] 2 GB/s: one
 * NVMe drive or a parallel-filesystem client stream; local ranks reading the
 * same files share the page cache, so a node reads the checkpoint once.
 * Only wall time depends on it, never memory. */
#define DISK_BYTES_PER_S 2e9

/* Hugging Face checkpoints are written in shards of at most 5 GB
 * (transformers save_pretrained max_shard_size="5GB"; "10GB" before v4.35);
 * from_pretrained holds one shard's state dict at a time while copying it
 * into the model.  [assumption] the published checkpoint is 16-bit. */
#define SHARD_BYTES 5000000000LL

/* Linux x86-64 four-level paging: one 8-byte page-table entry per 4 KiB
 * page.  fork() copies the page tables of the parent's private anonymous
 * memory, so each forked DataLoader worker costs RSS / 512 before it touches
 * anything.  [assumption] pinned (cudaHostAlloc'd) memory is excluded: the
 * CUDA driver marks it MADV_DONTFORK. */
#define PTE_BYTES 8
#define PAGE_BYTES 4096

/* ---- leaks --------------------------------------------------------------- */

struct preset {
    const char *name;
    double once_per_elem, step_per_elem;
    const char *source;
};

/* Each preset is a real report, expressed per element of a rank's trainable
 * partition (the leaks sit in the optimizer, which owns that partition). */
static const struct preset k_presets[] = {
    /* DeepSpeed #7693 (stas00, 2025-11-14, ZeRO-2 + offload_optimizer cpu):
     * host ~ numel x 28 B observed against the ideal 16 B; the 12 B extra
     * were attributed to the first step (+4 B grad.mul_ in
     * unscale_and_clip_grads, more in adam_update) and init overheads (2 B
     * pinned, fixed in PR #7689).  A later comment (torch 2.12.1, DS 0.19.3,
     * Qwen2.5-1.5B) could NOT reproduce the two 4 B leaks: this preset is the
     * reported worst case.  Mechanics §3. */
    {"ds7693", 12.0, 0.0,
     "DeepSpeed #7693: +12 B per partition element at the first step (28 B "
     "observed vs 16 B "
     "ideal, ZeRO-2 offload; not reproduced on DS 0.19.3)"},
    /* DeepSpeed #2984 (CodeGen-16B, ZeRO-3, 8 x RTX 3090, 500 GB RAM): host
     * from ~350 GB to OOM inside engine.step() around step 20.  Read as linear
     * growth: (500 - 350) GB / 20 steps = 7.5 GB per step per node, / 8 ranks
     * = 0.9375 GB per rank, / (16e9 / 8 = 2e9 partition elements) = 0.46875 B
     * per partition element per step.  Mechanics §3; transformers #22112 is
     * the same user (step() slowing from ~100 ms to >10 s). */
    {"ds2984", 0.0, 0.46875,
     "DeepSpeed #2984: +0.469 B per partition element per step (CodeGen-16B "
     "ZeRO-3: 350 GB "
     "-> 500 GB OOM in ~20 steps on 8 ranks)"},
};
#define NPRESETS (sizeof k_presets / sizeof k_presets[0])

const char *zs_leak_preset_names(void)
{
    return "ds7693, ds2984";
}

int zs_leak_parse(const char *text, struct zs_leak *out)
{
    struct zs_leak l;
    const char *slash;
    memset(&l, 0, sizeof l);
    if (!text || !*text || strlen(text) >= sizeof l.name)
        return -1;
    snprintf(l.name, sizeof l.name, "%s", text);
    if (!strcmp(text, "none")) {
        l.source = "no leak";
        *out = l;
        return 0;
    }
    for (size_t i = 0; i < NPRESETS; i++)
        if (!strcmp(text, k_presets[i].name)) {
            l.once_bytes_per_elem = k_presets[i].once_per_elem;
            l.step_bytes_per_elem = k_presets[i].step_per_elem;
            l.source = k_presets[i].source;
            *out = l;
            return 0;
        }
    slash = strrchr(text, '/');
    if (slash && slash > text) {
        char num[64];
        int64_t bytes;
        size_t n = (size_t)(slash - text);
        if (n >= sizeof num)
            return -1;
        memcpy(num, text, n);
        num[n] = '\0';
        if (zs_parse_bytes(num, &bytes) != 0)
            return -1;
        if (!strcmp(slash + 1, "step")) {
            l.step_bytes = bytes;
            l.source = "given: bytes per rank per step";
        } else if (!strcmp(slash + 1, "epoch")) {
            l.epoch_bytes = bytes;
            l.source = "given: bytes per rank per epoch";
        } else {
            return -1;
        }
        *out = l;
        return 0;
    }
    return -1;
}

/* ---- counts -------------------------------------------------------------- */

bool zs_run_wanted(const struct zs_cfg *c)
{
    return c->dataset_samples > 0;
}

int64_t zs_run_steps_per_epoch(const struct zs_cfg *c)
{
    /* drop_last: the last incomplete micro-batch per rank and the last
     * incomplete accumulation are dropped (HF Trainer's
     * num_update_steps_per_epoch = len(dataloader) // accumulation with a
     * drop_last sampler). */
    int64_t per_micro = c->micro_batch * c->dp;
    if (per_micro <= 0 || c->accum <= 0)
        return 0;
    return (c->dataset_samples / per_micro) / c->accum;
}

int zs_run_check(const struct zs_cfg *c, const char *leak_file,
                 const char *samples_file, struct zs_err *err)
{
    struct zs_leak l;
    if (zs_leak_parse(c->leak, &l) != 0) {
        if (leak_file)
            return zs_err_set(err, ZS_EINPUT,
                              "invalid 'leak' in %s: must be none, a preset "
                              "(%s), BYTES/step or "
                              "BYTES/epoch (got '%s')",
                              leak_file, zs_leak_preset_names(), c->leak);
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid value for '--leak': must be none, a preset "
                          "(%s), BYTES/step "
                          "or BYTES/epoch (got '%s')",
                          zs_leak_preset_names(), c->leak);
    }
    if (zs_run_wanted(c) && zs_run_steps_per_epoch(c) == 0) {
        long long need = (long long)(c->micro_batch * c->dp * c->accum);
        if (samples_file)
            return zs_err_set(
                err, ZS_EINPUT,
                "invalid 'dataset_samples' in %s: gives no optimizer step per "
                "epoch; must be at least micro-batch x data-parallel x "
                "accumulation = %lld x %lld x %lld = %lld (got %lld)",
                samples_file, (long long)c->micro_batch, (long long)c->dp,
                (long long)c->accum, need, (long long)c->dataset_samples);
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid value for '--dataset-samples': gives no "
                          "optimizer step per "
                          "epoch; must be at least micro-batch x data-parallel "
                          "x accumulation "
                          "= %lld x %lld x %lld = %lld (got %lld)",
                          (long long)c->micro_batch, (long long)c->dp,
                          (long long)c->accum, need,
                          (long long)c->dataset_samples);
    }
    return 0;
}

/* ---- levels from the engine's records ------------------------------------ */

/* One pool's level through the init (the peak before t0, when t0 > 0; on
 * the GPU also at the init's own allocations, which start at 0 with the
 * first step: the whole model without zero.Init) and at the end of the log
 * (resident): reserved bytes (host), or allocated ones (GPU). */
static void pool_levels(const zs_sim *sim, int pool, int64_t t0,
                        bool reserved, int64_t *init_peak, int64_t *resident)
{
    int64_t n = 0;
    const struct zs_mem_event *log = zs_sim_pool_log(sim, pool, &n);
    for (int64_t i = 0; log && i < n; i++) {
        int64_t v = reserved ? log[i].reserved : log[i].allocated;
        bool init = (t0 > 0 && log[i].t_ns < t0) ||
                    (!reserved &&
                     zs_tag_is_init(zs_sim_task(sim, log[i].task)->tag));
        if (init && v > *init_peak)
            *init_peak = v;
        *resident = v;
    }
}

void zs_run_levels_from_sim(zs_sim *sim, const struct zs_sim_result *res,
                            struct zs_run_levels *lv)
{
    int64_t t0 = res->first.t0_ns;
    memset(lv, 0, sizeof *lv);
    lv->init_s = t0 > 0 ? zs_ns_to_s(t0) : 0;
    if (!sim)
        return;
    /* pools 0 = GPU, 1 = host (rank), as simulate.c's topology() adds them */
    pool_levels(sim, 1, t0, true, &lv->host_init_peak_rank,
                &lv->host_resident_rank);
    pool_levels(sim, 0, t0, false, &lv->gpu_init_peak_rank,
                &lv->gpu_resident_rank);
}

/* ---- the composed levels ------------------------------------------------- */

/* Everything the level functions need, derived once from the inputs. */
struct k {
    const struct zs_cfg *c;
    const struct zs_run *r;
    int64_t procs, spe, N, W;
    int64_t first, steady, resident;   /* node */
    int64_t once, per_step, per_epoch; /* per rank */
    int64_t gpu_first, gpu_steady, gpu_resident, gpu_init, gpu_save, gpu_load;
    double t_first, t_steady;
};

static void kinit(struct k *k, const struct zs_setup *su,
                  const struct zs_sim_result *res,
                  const struct zs_run_levels *lv, const struct zs_run *r)
{
    const struct zs_cfg *c = su->cfg;
    memset(k, 0, sizeof *k);
    k->c = c;
    k->r = r;
    k->procs = c->procs_per_node;
    k->spe = r->steps_per_epoch;
    k->N = r->steps_total;
    k->W = c->dataloader_workers;
    k->first = res->first.peak_host_per_node;
    k->steady = res->steady.peak_host_per_node ? res->steady.peak_host_per_node
                                               : k->first;
    k->resident = lv->host_resident_rank * k->procs;
    k->once = r->leak.once_bytes + (int64_t)(r->leak.once_bytes_per_elem *
                                             (double)r->trainable_part_rank);
    k->per_step =
        r->leak.step_bytes +
        (int64_t)(r->leak.step_bytes_per_elem * (double)r->trainable_part_rank);
    k->per_epoch = r->leak.epoch_bytes;
    k->gpu_first = res->first.peak_gpu_allocated;
    k->gpu_steady = res->steady.peak_gpu_allocated
                        ? res->steady.peak_gpu_allocated
                        : k->gpu_first;
    k->gpu_resident = lv->gpu_resident_rank;
    k->gpu_init = lv->gpu_init_peak_rank;
    /* A save gathers one module at a time on the GPU
     * (_zero3_consolidated_16bit_state_dict: GatheredParameters per module,
     * mechanics §3): resident + the largest leaf in bf16. */
    k->gpu_save = k->gpu_resident + 2 * su->model->largest_leaf_params;
    /* zero.Init with parameters on the GPU: the rank's bf16 partition. */
    k->gpu_load =
        c->zero_init != ZS_NO && c->offload_param == ZS_OFF_NONE && c->zero == 3
            ? 2 * (su->model->params_total / c->world)
            : 0;
    k->t_first = res->first.time_s;
    k->t_steady =
        res->steady.time_s > 0 ? res->steady.time_s : res->first.time_s;
}

static int64_t epoch_of(const struct k *k, int64_t g)
{
    return (g - 1) / k->spe + 1;
}
static int64_t pos_in_epoch(const struct k *k, int64_t g)
{
    return (g - 1) % k->spe + 1;
}

static int64_t leak_node(const struct k *k, int64_t g, int64_t e)
{
    double v = (double)k->once * (g >= 1) + (double)k->per_step * (double)g +
               (double)k->per_epoch * (double)(e - 1);
    v *= (double)k->procs;
    return v > 4e18 ? (int64_t)4e18 : (int64_t)v;
}

/* DataLoader workers of the node during step g (alive) — copy-on-write:
 * a forked worker shares the parent's pages until it writes them, and
 * CPython writes every object it touches (reference counts), so the pages
 * holding the dataset's objects are copied into each worker as it iterates
 * (pytorch/pytorch #13246).  [assumption] the objects a worker reads are
 * spread over all pages, so by the end of an epoch each worker holds a
 * private copy of the whole in-memory dataset, growing linearly with the
 * epoch.  Non-persistent workers exit when the epoch's iterator is exhausted
 * and are forked anew (copies gone); persistent workers keep their copies. */
static int64_t workers_node(const struct k *k, int64_t g, bool alive)
{
    const struct zs_run *r = k->r;
    int64_t e = epoch_of(k, g), i = pos_in_epoch(k, g);
    double cow;
    if (!k->W || !alive)
        return 0;
    if (k->c->persistent_workers && e > 1)
        cow = (double)r->worker_cow_rank;
    else
        cow = (double)r->worker_cow_rank * (double)i / (double)k->spe;
    return (int64_t)((double)(k->procs * k->W) *
                     ((double)r->worker_pt_rank + cow));
}

static bool is_periodic_save(const struct k *k, int64_t g)
{
    return k->c->save_every > 0 && g % k->c->save_every == 0;
}

static bool is_save(const struct k *k, int64_t g)
{
    if (g < 1 || g > k->N)
        return false;
    return is_periodic_save(k, g) ||
           (k->c->save_epoch_end && pos_in_epoch(k, g) == k->spe) ||
           (k->c->save_last && g == k->N);
}

static bool is_eval(const struct k *k, int64_t g)
{
    return k->c->eval_every > 0 && g >= 1 && g <= k->N &&
           g % k->c->eval_every == 0;
}

/* The step counts a finished run's save and eval questions need. */
static struct k counts_of(const struct zs_cfg *c, const struct zs_run *r)
{
    struct k k;
    memset(&k, 0, sizeof k);
    k.c = c;
    k.spe = r->steps_per_epoch;
    k.N = r->steps_total;
    return k;
}

bool zs_run_is_save(const struct zs_cfg *c, const struct zs_run *r,
                    int64_t step)
{
    struct k k = counts_of(c, r);
    return k.spe > 0 && is_save(&k, step);
}

bool zs_run_is_eval(const struct zs_cfg *c, const struct zs_run *r,
                    int64_t step)
{
    struct k k = counts_of(c, r);
    return is_eval(&k, step);
}

/* Host level of the node at an evaluation after step g, in epoch e.
 * Forward only: no gradients, no optimizer work, so the host holds what it
 * holds between steps; the evaluation DataLoader forks its own workers (page
 * tables; its dataset's copy-on-write is not modelled) while the training
 * workers live on mid-epoch. */
static int64_t host_at_eval(const struct k *k, int64_t g, int64_t e)
{
    return k->resident + leak_node(k, g, e) + workers_node(k, g, true) +
           k->procs * k->W * k->r->worker_pt_rank;
}

/* Host level of the node at a checkpoint save after step g, in epoch e.
 * Workers are alive at a step-based save (inside the epoch loop); at an
 * epoch-end save non-persistent workers already exited when the epoch's
 * iterator was exhausted [inference: HF Trainer saves after the inner loop;
 * mmengine's after_train_epoch likewise]. */
static int64_t host_at_save(const struct k *k, int64_t g, int64_t e)
{
    bool alive = is_periodic_save(k, g) || k->c->persistent_workers ||
                 pos_in_epoch(k, g) != k->spe;
    return k->resident + leak_node(k, g, e) + workers_node(k, g, alive) +
           k->r->save_extra_node;
}

/* Host level of the node at the boundary into epoch e, where g is the new
 * epoch's first step: its epoch leak has happened, the step's own leak not
 * yet; new workers are forked (page tables), or the persistent ones live on
 * with their copy-on-write pages. */
static int64_t host_at_epoch_boundary(const struct k *k, int64_t g, int64_t e)
{
    const struct zs_run *r = k->r;
    int64_t w = 0;
    if (k->W)
        w = k->procs * k->W *
            (r->worker_pt_rank +
             (k->c->persistent_workers ? r->worker_cow_rank : 0));
    return k->resident + leak_node(k, g - 1, e) + w;
}

/* Host level of the node at moment ph of step g (the table at the top). */
static int64_t host_at(const struct k *k, int ph, int64_t g)
{
    int64_t e = g >= 1 ? epoch_of(k, g) : 1;
    switch (ph) {
    case ZS_RP_LOAD:
        return k->procs * k->r->load_bytes_rank;
    case ZS_RP_INIT:
        return -1; /* filled by the caller (needs lv) */
    case ZS_RP_FIRST:
        return k->first + leak_node(k, 1, 1) + workers_node(k, 1, true);
    case ZS_RP_STEADY:
        return k->steady + leak_node(k, g, e) + workers_node(k, g, true);
    case ZS_RP_EVAL:
        return host_at_eval(k, g, e);
    case ZS_RP_SAVE:
        return host_at_save(k, g, e);
    case ZS_RP_EPOCH:
        return host_at_epoch_boundary(k, g, e);
    default:
        return 0;
    }
}

static int64_t gpu_at(const struct k *k, int ph)
{
    switch (ph) {
    case ZS_RP_LOAD:
        return k->gpu_load;
    case ZS_RP_INIT:
        return k->gpu_init;
    case ZS_RP_FIRST:
        return k->gpu_first;
    case ZS_RP_STEADY:
        return k->gpu_steady;
    case ZS_RP_EVAL:
        /* [assumption] an upper bound: a forward pass without saved
         * activations or gradients needs no more than a training step */
        return k->gpu_steady;
    case ZS_RP_SAVE:
        return k->gpu_save;
    default:
        return k->gpu_resident;
    }
}

/* Count of multiples of K in [1, g]. */
static int64_t multiples(int64_t K, int64_t g)
{
    return K > 0 && g > 0 ? g / K : 0;
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Saves at steps <= g. */
static int64_t saves_upto(const struct k *k, int64_t g)
{
    int64_t n, Ks = k->c->save_every;
    if (g > k->N)
        g = k->N;
    if (g < 1)
        return 0;
    n = multiples(Ks, g);
    if (k->c->save_epoch_end) {
        int64_t ends = g / k->spe;
        n += ends;
        if (Ks > 0) {
            /* epoch ends that are also periodic saves: multiples of lcm */
            int64_t a = k->spe / gcd64(k->spe, Ks);
            if (a <= INT64_MAX / Ks)
                n -= g / (a * Ks);
        }
    }
    if (k->c->save_last && g == k->N && !is_periodic_save(k, g) &&
        !(k->c->save_epoch_end && pos_in_epoch(k, g) == k->spe))
        n++;
    return n;
}

/* Wall time at the end of a moment.  Within a step the order is: the
 * step, then its evaluation, then its save; an epoch boundary follows all
 * of the previous step's. */
static double time_end(const struct k *k, int ph, int64_t g)
{
    const struct zs_run *r = k->r;
    double t = r->load_s;
    if (ph == ZS_RP_LOAD)
        return t;
    t += r->row[ZS_RP_INIT].time_s;
    if (ph == ZS_RP_INIT || g < 1)
        return t;
    if (ph == ZS_RP_EPOCH) {
        g -= 1; /* everything of the previous step, then the boundary */
        ph = ZS_RP_SAVE;
        if (g < 1)
            return t;
    }
    t += k->t_first + k->t_steady * (double)(g - 1);
    t += r->eval_s * (double)multiples(k->c->eval_every, g - 1);
    t += r->save_s * (double)saves_upto(k, g - 1);
    if (ph == ZS_RP_EVAL)
        return t + r->eval_s;
    if (ph == ZS_RP_SAVE)
        return t + (is_eval(k, g) ? r->eval_s : 0) +
               (is_save(k, g) ? r->save_s : 0);
    return t;
}

void zs_run_moment_at(const struct zs_setup *su,
                      const struct zs_sim_result *res,
                      const struct zs_run_levels *lv, const struct zs_run *r,
                      int phase, int64_t step, struct zs_run_moment *out)
{
    struct k k;
    kinit(&k, su, res, lv, r);
    out->host_node = phase == ZS_RP_INIT ? r->row[ZS_RP_INIT].host_node
                                         : host_at(&k, phase, step);
    out->gpu_rank = gpu_at(&k, phase);
    out->t_end_s = k.spe > 0 ? time_end(&k, phase, step) : 0;
}

/* ---- composing ----------------------------------------------------------- */

static void note(struct zs_run *r, int ph, int64_t host, int64_t gpu, int64_t e,
                 int64_t g)
{
    struct zs_run_row *w = &r->row[ph];
    if (host > w->host_node || w->epoch == 0) { /* epoch 0: nothing noted yet */
        w->host_node = host;
        w->epoch = e;
        w->step = g;
    }
    if (gpu > w->gpu_rank)
        w->gpu_rank = gpu;
    if (host > r->peak_host_node) {
        r->peak_host_node = host;
        r->peak_phase = ph;
        r->peak_epoch = e;
        r->peak_step = g;
    }
    if (gpu > r->peak_gpu_rank)
        r->peak_gpu_rank = gpu;
}

/* First index j in [0, n) with f(j) > cap, f nondecreasing; n if none. */
struct seq {
    const struct k *k;
    int ph;
    int64_t g0, stride; /* occurrence j is step g0 + j x stride */
};

static int64_t seq_host(const struct seq *s, int64_t j)
{
    return host_at(s->k, s->ph, s->g0 + j * s->stride);
}

static int64_t first_over(const struct seq *s, int64_t n, int64_t cap)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (seq_host(s, mid) > cap)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* A candidate failure: earlier step wins; within a step, train < eval < save.
 */
struct cand {
    int64_t g;
    int order;
    int ph;
    int64_t host;
};

static void consider(struct cand *best, int64_t g, int order, int ph,
                     int64_t host)
{
    if (best->g < 0 || g < best->g || (g == best->g && order < best->order)) {
        best->g = g;
        best->order = order;
        best->ph = ph;
        best->host = host;
    }
}

static void set_oom(struct zs_run *r, const struct k *k, int ph, int64_t g,
                    int64_t need)
{
    r->oom.where = ZS_OOM_HOST;
    r->oom.phase = ph;
    r->oom.step = g;
    r->oom.epoch = g >= 1 ? epoch_of(k, g) : 1;
    r->oom.step_in_epoch = g >= 1 ? pos_in_epoch(k, g) : 0;
    r->oom.needed_bytes = need;
    r->oom.available_bytes = r->host_capacity_node;
    r->oom.after_s = time_end(k, ph, g);
}

/* One epoch's pass: its steps [g0, g1], the node's capacity, whether the
 * first failure is still to be found, and the earliest candidate so far. */
struct span {
    int64_t e, g0, g1, cap;
    bool find;
    struct cand best;
};

/* The boundary into epoch e (e > 1): a failure there comes before any
 * moment of the epoch, so it is set at once. */
static void pass_epoch_boundary(struct zs_run *r, const struct k *k,
                                struct span *sp)
{
    int64_t h = host_at(k, ZS_RP_EPOCH, sp->g0);
    note(r, ZS_RP_EPOCH, h, gpu_at(k, ZS_RP_EPOCH), sp->e, sp->g0);
    r->row[ZS_RP_EPOCH].count++;
    if (sp->find && h > sp->cap) {
        set_oom(r, k, ZS_RP_EPOCH, sp->g0, h);
        sp->find = false;
    }
}

/* Training steps: the first step once, then the steady steps (monotone in
 * g, so the first over the capacity is found by binary search). */
static void pass_steps(struct zs_run *r, const struct k *k, struct span *sp)
{
    int64_t a = sp->g0 == 1 ? 2 : sp->g0;
    if (sp->g0 == 1) {
        int64_t h = host_at(k, ZS_RP_FIRST, 1);
        note(r, ZS_RP_FIRST, h, gpu_at(k, ZS_RP_FIRST), 1, 1);
        r->row[ZS_RP_FIRST].count = 1;
        if (sp->find && h > sp->cap)
            consider(&sp->best, 1, 0, ZS_RP_FIRST, h);
    }
    if (a <= sp->g1) {
        struct seq s = {k, ZS_RP_STEADY, a, 1};
        note(r, ZS_RP_STEADY, host_at(k, ZS_RP_STEADY, sp->g1),
             gpu_at(k, ZS_RP_STEADY), sp->e, sp->g1);
        r->row[ZS_RP_STEADY].count += sp->g1 - a + 1;
        if (sp->find) {
            int64_t j = first_over(&s, sp->g1 - a + 1, sp->cap);
            if (j < sp->g1 - a + 1)
                consider(&sp->best, a + j, 0, ZS_RP_STEADY, seq_host(&s, j));
        }
    }
}

/* A moment that recurs every K steps (evaluations, periodic saves) in
 * [g0, g1]: fold its last occurrence, find its first over the capacity.
 * Returns how many occur. */
static int64_t pass_every(struct zs_run *r, const struct k *k, struct span *sp,
                          int ph, int64_t K, int order)
{
    int64_t a = (sp->g0 + K - 1) / K * K, n;
    struct seq s = {k, ph, a, K};
    if (a > sp->g1)
        return 0;
    n = (sp->g1 - a) / K + 1;
    note(r, ph, seq_host(&s, n - 1), gpu_at(k, ph), sp->e, a + (n - 1) * K);
    if (sp->find) {
        int64_t j = first_over(&s, n, sp->cap);
        if (j < n)
            consider(&sp->best, a + j * K, order, ph, seq_host(&s, j));
    }
    return n;
}

/* The saves that are not periodic: the epoch end and the last step, each
 * once (their workers may differ from a periodic save's). */
static void pass_end_saves(struct zs_run *r, const struct k *k, struct span *sp)
{
    for (int pass = 0; pass < 2; pass++) {
        int64_t g = pass == 0 ? sp->g1 : k->N, h;
        if (pass == 1 && (g < sp->g0 || g > sp->g1 || g == sp->g1))
            continue;
        if (!is_save(k, g) || is_periodic_save(k, g))
            continue;
        h = host_at(k, ZS_RP_SAVE, g);
        note(r, ZS_RP_SAVE, h, gpu_at(k, ZS_RP_SAVE), sp->e, g);
        if (sp->find && h > sp->cap)
            consider(&sp->best, g, 2, ZS_RP_SAVE, h);
    }
}

/* One epoch: fold its peaks into the rows (each kind peaks at its last
 * occurrence) and, when no failure was found yet, look for the first. */
static void epoch_pass(struct zs_run *r, const struct k *k, int64_t e,
                       bool find)
{
    struct span sp = {e,          (e - 1) * k->spe + 1,
                      e * k->spe, r->host_capacity_node,
                      find,       {-1, 0, 0, 0}};
    if (sp.g1 > k->N)
        sp.g1 = k->N;
    if (e > 1)
        pass_epoch_boundary(r, k, &sp);
    pass_steps(r, k, &sp);
    if (k->c->eval_every > 0)
        r->row[ZS_RP_EVAL].count +=
            pass_every(r, k, &sp, ZS_RP_EVAL, k->c->eval_every, 1);
    if (k->c->save_every > 0)
        pass_every(r, k, &sp, ZS_RP_SAVE, k->c->save_every, 2);
    pass_end_saves(r, k, &sp);
    if (sp.find && sp.best.g > 0)
        set_oom(r, k, sp.best.ph, sp.best.g, sp.best.host);
}

/* With the optimizer on NVMe the 12 B per element of fp32 param and Adam
 * states are in the swap files, not in the optimizer state dict: the save
 * copies each rank's swap folder (gradient files excluded) into the
 * checkpoint with shutil.copytree (engine.py:4817-4830, 0.19.6 edaa7221).
 * The write is the 12 B term above; this is the read from the node's
 * drives, [assumption] not overlapped with the write (copytree copies file
 * by file, reading then writing each chunk). */
static double nvme_save_read_s(const struct zs_setup *su, int64_t trainable,
                               int64_t nodes)
{
    double rd, wr;
    if (su->cfg->offload_optimizer != ZS_OFF_NVME || nodes < 1)
        return 0;
    zs_nvme_node_rates(su->cfg, &su->cluster->node, &rd, &wr);
    if (rd <= 0)
        return 0;
    return 12.0 * (double)trainable / (double)nodes / rd;
}

/* Steps, epochs and capacities of the run; 0, or a usage error. */
static int run_counts(const struct zs_cfg *c, const struct zs_sim_result *res,
                      struct zs_run *r, struct zs_err *err)
{
    int64_t full_steps;
    if (zs_leak_parse(c->leak, &r->leak) != 0)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid value for '--leak' (got '%s')", c->leak);
    r->procs = c->procs_per_node;
    r->world = c->world;
    r->nodes = c->procs_per_node > 0 ? c->world / c->procs_per_node : 1;
    r->samples_per_step = c->micro_batch * c->dp * c->accum;
    r->steps_per_epoch = zs_run_steps_per_epoch(c);
    if (r->steps_per_epoch <= 0)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid value for '--dataset-samples': gives no "
                          "optimizer step per "
                          "epoch (got %lld)",
                          (long long)c->dataset_samples);
    r->dropped_samples =
        c->dataset_samples - r->steps_per_epoch * r->samples_per_step;
    full_steps = r->steps_per_epoch * c->epochs;
    r->steps_total = full_steps;
    if (c->max_steps > 0 && c->max_steps < full_steps) {
        r->steps_total = c->max_steps;
        r->max_steps_cut = true;
    }
    r->epochs_run =
        (r->steps_total + r->steps_per_epoch - 1) / r->steps_per_epoch;
    r->host_capacity_node = res->host_capacity_per_node;
    r->gpu_capacity_rank = res->gpu_capacity_bytes;
    return 0;
}

/* Trainable elements of the run (all parameters, or the adapters). */
static int64_t run_trainable(const struct zs_cfg *c, const struct zs_model *m)
{
    struct zs_method_opts mo;
    mo.method = (enum zs_method)c->method;
    mo.lora_rank = (int)c->lora_rank;
    mo.lora_targets =
        c->lora_target_mask ? c->lora_target_mask : ZS_ROLE_ALL_LINEAR;
    return c->method == ZS_METHOD_FULL ? m->params_total
                                       : zs_model_trainable(m, &mo);
}

/* Load.  Without zero.Init every local rank materialises the whole model
 * in host RAM before deepspeed.initialize partitions it: DeepSpeed's own
 * estimator charges "4 B per param per local rank" for it
 * (estimate_zero3_model_states_mem_needs, zero_init=0: params x
 * max(4 x gpus_per_node, ...) per node; result.c), fp32 because
 * from_pretrained without torch_dtype builds the model in float32; bf16
 * with torch_dtype=bfloat16 (--load-dtype).  Reports: DeepSpeed #2841
 * (bloomz-7b1 fits on 1/2/4 GPUs, host OOM on 8), #5290 (Llama-2-70B,
 * 4 x A100, 1 TiB host OOM before any GPU OOM; fixed by zero.Init),
 * DeepSpeedExamples #498 (13B: ~60 GB host per rank, 8 ranks killed on
 * 500 GB: 13e9 x 4 B + a shard + runtime = 61 GB), Roblox/FAI-RL PR #68
 * (Qwen3-VL-30B-A3B: ~230 GB per rank, 95% of RAM on 2 and 8 GPUs; that
 * is ~7 B/param, above this model: a lower bound there).  With zero.Init
 * (HfDeepSpeedConfig before from_pretrained) each rank holds its
 * partition (on the host only with offload_param) and one checkpoint
 * shard at a time [inference: transformers' zero3 loading path]. */
static void phase_load(const struct zs_cfg *c, const struct zs_model *m,
                       int64_t rt, struct zs_run *r)
{
    int64_t shard =
        2 * m->params_total < SHARD_BYTES ? 2 * m->params_total : SHARD_BYTES;
    int dtype = c->load_dtype == ZS_LOAD_BF16 ? 2 : 4;
    if (c->zero_init == ZS_NO)
        r->load_bytes_rank = rt + m->params_total * dtype + shard;
    else
        r->load_bytes_rank =
            rt + shard +
            (c->offload_param != ZS_OFF_NONE
                 ? 2 * ((m->params_total + c->world - 1) / c->world)
                 : 0);
    /* the node reads the 16-bit checkpoint once (page cache) */
    r->load_s = 2.0 * (double)m->params_total / DISK_BYTES_PER_S;
}

/* Init.  The engine's init buffers are simulated (zero.c init_buffers);
 * DeepSpeed ZeRO-3 also creates the fp32 master with
 * fp16_partitioned_groups_flat.clone().float() (mechanics §2: transient
 * +2 B +4 B): at that moment runtime + the bf16 flat partition (2 B) +
 * the clone (2 B) + the fp32 master (4 B) are live per trainable
 * element.  The init level is the larger of the two. */
static void phase_init(const struct zs_cfg *c, const struct zs_model *m,
                       int64_t rt, const struct zs_run_levels *lv,
                       struct zs_run *r)
{
    int64_t init = lv->host_init_peak_rank;
    if (c->framework == ZS_FW_DEEPSPEED &&
        c->offload_optimizer != ZS_OFF_NONE) {
        int64_t t = rt + 2 * ((m->params_total + c->world - 1) / c->world) +
                    6 * r->trainable_part_rank;
        r->init_transient_rank = t;
        if (t > init)
            init = t;
    }
    r->row[ZS_RP_INIT].host_node = init * r->procs;
    r->row[ZS_RP_INIT].gpu_rank = lv->gpu_init_peak_rank;
    r->row[ZS_RP_INIT].time_s = lv->init_s;
    r->row[ZS_RP_INIT].count = 1;
}

/* Save.  _zero3_consolidated_16bit_state_dict (engine.py,
 * stage3_gather_16bit_weights_on_model_save): rank 0 does
 * param.detach().cpu() for every parameter, so rank 0's host holds 2 B x
 * the saved parameters (mechanics §3; FastChat PR #1457: "gathering the
 * whole 30B model needs at least 60GB"; DeepSpeed #3448: LLaMA-33B needs
 * 750-800 GB for training + saving where 600 GB OOMed; #4909: 34B QLoRA
 * killed at save with 32 GB, fine with 64 GB).  LoRA saves only the
 * adapters [inference: PEFT's state dict].  Plus torch.save buffering:
 * [assumption] its zip writer serialises one storage at a time, so one
 * extra copy of the largest tensor (2 B x the largest leaf).
 * Time: node 0 writes the 16-bit model and its ranks' optimizer
 * partitions (fp32 master + Adam m, v = 12 B per element,
 * zero_pp_rank_*_optim_states.pt) at DISK_BYTES_PER_S. */
static void phase_save(const struct zs_setup *su, int64_t trainable,
                       struct zs_run *r)
{
    const struct zs_cfg *c = su->cfg;
    const struct zs_model *m = su->model;
    int64_t saved = c->method == ZS_METHOD_FULL ? m->params_total : trainable;
    double ckpt_bytes =
        2.0 * (double)saved + 12.0 * (double)trainable / (double)r->nodes;
    r->save_extra_node = 2 * saved + 2 * m->largest_leaf_params;
    r->save_s = ckpt_bytes / DISK_BYTES_PER_S;
    r->save_s += nvme_save_read_s(su, trainable, r->nodes);
}

/* Evaluation: forward only, a third of a micro-step's fwd+bwd work
 * (backward is 2x forward, DESIGN §3) [assumption: offload gathers
 * scale the same way]; eval_samples 0 means 1% of the dataset
 * [assumption: a 1% held-out split], at least one micro-batch. */
static void phase_eval(const struct zs_cfg *c, const struct zs_sim_result *res,
                       struct zs_run *r)
{
    int64_t n = c->eval_samples ? c->eval_samples : c->dataset_samples / 100;
    int64_t per = c->micro_batch * c->dp, micro = (n + per - 1) / per;
    double t_micro =
        (res->steady.time_s > 0 ? res->steady.time_s : res->first.time_s) /
        (double)c->accum;
    if (micro < 1)
        micro = 1;
    r->eval_s = (double)micro * t_micro / 3.0;
}

/* DataLoader workers: each forked worker copies the page tables of the
 * rank's pageable memory and, as it reads, the dataset's pages. */
static void phase_workers(const struct zs_cfg *c,
                          const struct zs_sim_result *res,
                          const struct zs_run_levels *lv, struct zs_run *r)
{
    int64_t pageable =
        lv->host_resident_rank - res->steady.pinned_host_per_rank;
    if (pageable < 0)
        pageable = 0;
    r->worker_cow_rank = c->dataset_bytes;
    r->worker_pt_rank = pageable / PAGE_BYTES * PTE_BYTES;
}

/* The rows of load and init, the peaks so far, and a host failure there. */
static void start_rows(struct zs_run *r, const struct k *k,
                       const struct zs_run_levels *lv)
{
    r->row[ZS_RP_LOAD].host_node = host_at(k, ZS_RP_LOAD, 0);
    r->row[ZS_RP_LOAD].gpu_rank = k->gpu_load;
    r->row[ZS_RP_LOAD].time_s = r->load_s;
    r->row[ZS_RP_LOAD].count = 1;
    r->peak_host_node = r->row[ZS_RP_LOAD].host_node;
    r->peak_phase = ZS_RP_LOAD;
    r->peak_epoch = 1;
    r->peak_gpu_rank = k->gpu_load;
    if (r->row[ZS_RP_INIT].host_node > r->peak_host_node) {
        r->peak_host_node = r->row[ZS_RP_INIT].host_node;
        r->peak_phase = ZS_RP_INIT;
    }
    if (lv->gpu_init_peak_rank > r->peak_gpu_rank)
        r->peak_gpu_rank = lv->gpu_init_peak_rank;
    if (r->row[ZS_RP_LOAD].host_node > r->host_capacity_node)
        set_oom(r, k, ZS_RP_LOAD, 0, r->row[ZS_RP_LOAD].host_node);
    else if (r->row[ZS_RP_INIT].host_node > r->host_capacity_node)
        set_oom(r, k, ZS_RP_INIT, 0, r->row[ZS_RP_INIT].host_node);
}

/* A GPU failure in the step simulation ends the run there. */
static void gpu_failure(struct zs_run *r, const struct k *k,
                        const struct zs_sim_result *res)
{
    int ph = res->oom.step <= 0   ? ZS_RP_INIT
             : res->oom.step == 1 ? ZS_RP_FIRST
                                  : ZS_RP_STEADY;
    int64_t g = res->oom.step <= 0 ? 0 : res->oom.step == 1 ? 1 : 2;
    if (res->oom.where != ZS_OOM_GPU || r->oom.where != ZS_OOM_NONE)
        return;
    if (g > r->steps_total)
        g = r->steps_total;
    set_oom(r, k, ph, g, res->oom.needed_bytes);
    r->oom.where = ZS_OOM_GPU;
    r->oom.available_bytes = res->oom.available_bytes;
}

/* The timeline: each moment's time x its count, the wall time and cost. */
static void timeline_totals(struct zs_run *r, const struct k *k,
                            const struct zs_cfg *c)
{
    r->row[ZS_RP_FIRST].time_s = k->t_first;
    r->row[ZS_RP_STEADY].time_s = k->t_steady * (double)(r->steps_total - 1);
    r->row[ZS_RP_EVAL].time_s = r->eval_s * (double)r->nevals;
    r->row[ZS_RP_SAVE].time_s = r->save_s * (double)r->nsaves;
    r->row[ZS_RP_EPOCH].time_s = r->epoch_s * (double)r->row[ZS_RP_EPOCH].count;
    r->wall_s = 0;
    for (int i = 0; i < ZS_RP_COUNT; i++)
        r->wall_s += r->row[i].time_s;
    r->gpu_hours = r->wall_s * (double)r->world / 3600.0;
    r->cost = r->gpu_hours * c->gpu_hour_price;
}

int zs_run_compose(const struct zs_setup *su, const struct zs_sim_result *res,
                   const struct zs_run_levels *lv, struct zs_run *out,
                   struct zs_err *err)
{
    const struct zs_cfg *c = su->cfg;
    struct zs_run *r = out;
    struct k k;
    int64_t trainable, rt = res->host_runtime_per_rank;
    int rc;

    memset(r, 0, sizeof *r);
    rc = run_counts(c, res, r, err);
    if (rc != 0)
        return rc;
    trainable = run_trainable(c, su->model);
    r->trainable_part_rank = (trainable + c->world - 1) / c->world;
    phase_load(c, su->model, rt, r);
    phase_init(c, su->model, rt, lv, r);
    phase_save(su, trainable, r);
    if (c->eval_every > 0)
        phase_eval(c, res, r);
    if (c->dataloader_workers > 0)
        phase_workers(c, res, lv, r);

    kinit(&k, su, res, lv, r);
    start_rows(r, &k, lv);
    gpu_failure(r, &k, res);
    for (int64_t e = 1; e <= r->epochs_run; e++)
        epoch_pass(r, &k, e, r->oom.where == ZS_OOM_NONE);
    r->row[ZS_RP_SAVE].count = r->nsaves = saves_upto(&k, r->steps_total);
    r->nevals = r->row[ZS_RP_EVAL].count;
    timeline_totals(r, &k, c);
    return 0;
}

const char *zs_run_phase_name(int ph)
{
    static const char *const n[] = {
        "model load", "engine init",     "first step",    "steady steps",
        "evaluation", "checkpoint save", "epoch boundary"};
    return ph >= 0 && ph < ZS_RP_COUNT ? n[ph] : "?";
}
