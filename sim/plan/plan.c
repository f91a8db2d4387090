/*
 * plan.c — see plan.h.
 *
 * Ranking: throughput = tokens/s of the whole job (per GPU x processes used);
 * cost = the fewest GPU-hours per token, counting only the GPUs the job uses
 * (per-GPU rental: 4 processes at 900 tok/s each cost less per token than 8
 * at 800); memory = the largest GPU headroom.  Ties go to the simpler configuration (no offload, less
 * checkpointing) because it has fewer ways to fail.
 */
#include "plan/plan.h"
#include "train/ds_keys.h"
#include "sched/sched.h"
#include "train/dsconfig.h"
#include "util/alloc.h"
#include "util/strutil.h"
#include "util/units.h"

#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Default global batch when none is given: 64 sequences [assumption: a
 * common SFT setting, e.g. TRL/Axolotl examples use 64-128 sequences of
 * 2-4k tokens per step]; stated in the output. */
#define DEFAULT_GLOBAL_BATCH 64

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void zs_plan_cand_label(const struct zs_candidate *c, char *buf, size_t cap)
{
    const struct zs_cfg *f = &c->cfg;
    const char *off =
        f->offload_optimizer == ZS_OFF_NVME
            ? (f->offload_param == ZS_OFF_NVME  ? "offload opt+param nvme"
               : f->offload_param != ZS_OFF_NONE ? "offload opt nvme+param cpu"
                                                 : "offload opt nvme")
        : f->offload_param != ZS_OFF_NONE     ? "offload opt+param"
        : f->offload_optimizer != ZS_OFF_NONE ? "offload opt"
                                              : "no offload";
    snprintf(buf, cap,
             "%s %s, %s, %lld procs, micro %lld x accum %lld, ckpt %s",
             zs_cfg_framework_label(f), f->framework == ZS_FW_FSDP2
                 ? (f->zero == 3 ? "full-shard" : "no-reshard")
                 : (f->zero == 3 ? "zero3" : "zero2"),
             off, (long long)f->procs_per_node, (long long)f->micro_batch,
             (long long)f->accum, zs_ckpt_name((enum zs_ckpt)f->checkpointing));
    if (f->cpu_checkpointing || f->offload_activations) {
        size_t len = strlen(buf);
        if (len < cap)
            snprintf(buf + len, cap - len, " + %s",
                     f->cpu_checkpointing ? "cpu_checkpointing"
                                          : "activation offload");
    }
}

static int add(struct zs_plan *p, const struct zs_cfg *c)
{
    size_t cap = (size_t)p->cap;
    if (zs_grow((void **)&p->cand, &cap, (size_t)p->n + 1, sizeof *p->cand))
        return ZS_ENOMEM;
    p->cap = (int)cap;
    memset(&p->cand[p->n], 0, sizeof p->cand[p->n]);
    p->cand[p->n].cfg = *c;
    p->n++;
    return 0;
}

static bool po_allows_nvme(const struct zs_plan_opts *po,
                           const struct zs_cfg *base)
{
    return po->allow_nvme ||
           (po->fix_offload_opt && base->offload_optimizer == ZS_OFF_NVME);
}

/* One point of the search's memory layouts: framework, ZeRO stage (FSDP2:
 * 3 full-shard, 2 no-reshard) and where optimizer and parameters live. */
struct search_mode {
    int fw, zero, oo, op;
};

static const int micros[] = {1, 2, 4, 8};

/* The processes per node searched: the one given, or the powers of two up
 * to the node's GPUs and the GPU count itself.  Returns how many. */
static int search_procs(const struct zs_cfg *base, int gpn, int procs[8])
{
    int nprocs = 0;
    if (base->procs) {
        procs[nprocs++] = (int)base->procs;
        return nprocs;
    }
    for (int q = 1; q <= gpn && nprocs < 7; q *= 2)
        procs[nprocs++] = q;
    if (procs[nprocs - 1] != gpn)
        procs[nprocs++] = gpn;
    return nprocs;
}

/* Whether the search covers mode md under the options po. */
static bool mode_searched(const struct search_mode *md,
                          const struct zs_cfg *base,
                          const struct zs_plan_opts *po)
{
    if (!po->framework_any && md->fw != base->framework)
        return false;
    if (md->oo == ZS_OFF_NVME && !po_allows_nvme(po, base))
        return false;
    if ((po->fix_zero && md->zero != base->zero) ||
        (po->fix_offload_opt && md->oo != base->offload_optimizer) ||
        (po->fix_offload_param && md->op != base->offload_param))
        return false;
    /* torchtitan and torchtune train with FSDP2 only (config.c
     * check_deepspeed_policy): their search has no DeepSpeed modes */
    return !(md->fw == ZS_FW_DEEPSPEED && base->trainer != ZS_TRAINER_HF);
}

/* Whether the search covers the mi-th micro-batch and checkpointing ck in
 * mode md. */
static bool point_searched(const struct search_mode *md,
                           const struct zs_cfg *base,
                           const struct zs_plan_opts *po, size_t mi, int ck)
{
    if ((po->fix_micro && mi > 0) || (po->fix_ckpt && ck > ZS_CKPT_NONE))
        return false; /* the fixed value, once (below) */
    /* --cpu-checkpointing / --offload-activations given: only what can run
     * them (config.c check_act_offload) */
    return !((base->cpu_checkpointing && md->fw != ZS_FW_DEEPSPEED) ||
             (base->offload_activations && md->fw != ZS_FW_FSDP2) ||
             ((base->cpu_checkpointing || base->offload_activations) &&
              !po->fix_ckpt && ck != ZS_CKPT_FULL));
}

/* Adds the candidates of mode md: processes x micro-batch x checkpointing. */
static int add_mode(struct zs_plan *p, const struct search_mode *md,
                    const struct zs_cfg *base, const struct zs_plan_opts *po,
                    const int *procs, int nprocs)
{
    for (int pi = 0; pi < nprocs; pi++)
        for (size_t mi = 0; mi < sizeof micros / sizeof micros[0]; mi++)
            for (int ck = ZS_CKPT_NONE; ck <= ZS_CKPT_FULL; ck++) {
                struct zs_cfg c = *base;
                if (!point_searched(md, base, po, mi, ck))
                    continue;
                c.framework = md->fw;
                /* --fsdp-version picks the FSDP candidates' API; DeepSpeed
                 * candidates have none */
                if (c.framework != ZS_FW_FSDP2)
                    c.fsdp_version = 2;
                c.zero = md->zero;
                /* ZeRO-1/2 candidates reduce on DeepSpeed's reduction
                 * stream, overlapped with the backward, unless
                 * --overlap-comm is given: DeepSpeed's default (off below
                 * stage 3) runs every bucket's reduction on the compute
                 * stream (zero.c flush_z12); `--emit-ds-config` writes the
                 * choice */
                if (c.framework == ZS_FW_DEEPSPEED && c.zero < 3 &&
                    base->overlap_comm == ZS_AUTO)
                    c.overlap_comm = ZS_YES;
                c.offload_optimizer = md->oo;
                c.offload_param = md->op;
                /* --offload-ratio (Twin-Flow) is DeepSpeed ZeRO-3's with
                 * the optimizer on the CPU: the other candidates run
                 * without it, as DeepSpeed ignores the key there */
                if (c.framework != ZS_FW_DEEPSPEED || c.zero != 3 ||
                    c.offload_optimizer != ZS_OFF_CPU)
                    c.offload_ratio = 1.0;
                c.procs = procs[pi];
                c.micro_batch = po->fix_micro ? base->micro_batch : micros[mi];
                c.checkpointing = po->fix_ckpt ? base->checkpointing : ck;
                c.grad_accum = 0;
                c.global_batch = p->global_batch;
                if (add(p, &c))
                    return ZS_ENOMEM;
            }
    return 0;
}

static int enumerate(struct zs_plan *p, const struct zs_cluster *cl,
                     const struct zs_cfg *base, const struct zs_plan_opts *po)
{
    static const struct search_mode modes[] = {
        {ZS_FW_DEEPSPEED, 3, ZS_OFF_NONE, ZS_OFF_NONE},
        {ZS_FW_DEEPSPEED, 3, ZS_OFF_CPU, ZS_OFF_NONE},
        {ZS_FW_DEEPSPEED, 3, ZS_OFF_CPU, ZS_OFF_CPU},
        {ZS_FW_DEEPSPEED, 2, ZS_OFF_NONE, ZS_OFF_NONE},
        {ZS_FW_DEEPSPEED, 2, ZS_OFF_CPU, ZS_OFF_NONE},
        {ZS_FW_FSDP2, 3, ZS_OFF_NONE, ZS_OFF_NONE},
        {ZS_FW_FSDP2, 3, ZS_OFF_CPU, ZS_OFF_CPU},
        {ZS_FW_FSDP2, 2, ZS_OFF_NONE, ZS_OFF_NONE},
        {ZS_FW_FSDP2, 2, ZS_OFF_CPU, ZS_OFF_CPU},
        /* NVMe (ZeRO-Infinity), when allowed: optimizer states on NVMe,
         * parameters on the GPU or the CPU */
        {ZS_FW_DEEPSPEED, 3, ZS_OFF_NVME, ZS_OFF_NONE},
        {ZS_FW_DEEPSPEED, 3, ZS_OFF_NVME, ZS_OFF_CPU},
        /* and the parameters on NVMe too (AsyncPartitionedParameterSwapper,
         * its defaults: buffer_count 5, buffer_size 1e8, max_in_cpu 1e9) */
        {ZS_FW_DEEPSPEED, 3, ZS_OFF_NVME, ZS_OFF_NVME},
    };
    int procs[8];
    int nprocs = search_procs(base, cl->node.gpus_per_node, procs);
    for (size_t md = 0; md < sizeof modes / sizeof modes[0]; md++)
        if (mode_searched(&modes[md], base, po) &&
            add_mode(p, &modes[md], base, po, procs, nprocs))
            return ZS_ENOMEM;
    return 0;
}

/* The engines and build contexts of a search's threads: slot i is run_all's
 * i-th worker (0 the calling thread), made on its first candidate and kept
 * for every later run of the same search (the completions, the notes'
 * re-simulations, the "what would fit" sub-plans), which would otherwise
 * each start from an empty sim and cache and touch their arrays' pages
 * again [our measurement, docs/engine.md "Engines kept across a search's
 * runs": 'zsim plan --model 72b --gpus 8xH100' on 2 threads, 2.3-2.6 s
 * with a fresh worker engine per run, 1.5 s kept].  Results do not depend
 * on them (zs_sim_reset, zs_setup.cache). */
struct engines {
    zs_sim *sim[8];
    struct zs_build_cache *cache[8];
};

static void engines_free(struct engines *e)
{
    for (int i = 0; i < 8; i++) {
        zs_sim_free(e->sim[i]);
        zs_build_cache_free(e->cache[i]);
    }
}

struct worker {
    struct zs_plan *p;
    const struct zs_model *m;
    const struct zs_cluster *cl;
    const struct zs_plan_opts *po;
    int *next;
    int *done;
    pthread_mutex_t *mu;
    /* the candidates to run: idx[0..nidx) of p->cand (idx NULL: all) */
    const int *idx;
    int nidx;
    /* verdict only (zs_setup.verdict_only): a GPU OOM stops at the OOM */
    bool verdict_only;
    /* complete partial results: simulate resolved candidates again whole */
    bool complete;
    bool alloc_default; /* the search runs the default allocator */
    /* this thread's build context (work): the arrays a build grows */
    struct zs_build_cache *cache;
    struct engines *eng; /* the search's; this worker's are eng->*[slot] */
    int slot;
    int rc;
    struct zs_err err;
};

static void simulate_cand(struct worker *w, zs_sim *sim,
                          struct zs_candidate *c);

static void evaluate(struct worker *w, zs_sim *sim, struct zs_candidate *c)
{
    struct zs_err err = {0, ""};
    int rc = zs_cfg_resolve(&c->cfg, w->m, w->cl, &err);
    if (rc) {
        c->status = ZS_CAND_INVALID;
        zs_strlcpy(c->reason, err.msg, sizeof c->reason);
        return;
    }
    /* param NVMe: DeepSpeed asserts each swapped partition fits one swap
     * buffer (partitioned_param_swapper.py:357); a user sets buffer_size to
     * the largest partition, and so does the planner unless it was given
     * (its default 1e8 fails e.g. Qwen2.5-72B's 1.25e9-element embedding
     * on 8 ranks) */
    if (c->cfg.offload_param == ZS_OFF_NVME && !w->po->fix_param_buffer_size) {
        int64_t world = c->cfg.world > 0 ? c->cfg.world : 1;
        int64_t part = (w->m->largest_leaf_params + world - 1) / world;
        if (part > c->cfg.param_buffer_size)
            c->cfg.param_buffer_size = part;
    }
    simulate_cand(w, sim, c);
}

/* The reason of a GPU OOM: what it needs, or, when it would fit by count
 * but not by blocks, what PyTorch's OOM message says (tried to allocate,
 * allocated, reserved); and the HF Trainer's unsharded grads when held. */
/* The model's trained elements under f's method, LoRA rank and targets
 * (the targets from --lora-targets, zs_cfg_resolve), as the simulation
 * itself sizes them. */
static int64_t cfg_trainable(const struct zs_model *m, const struct zs_cfg *f)
{
    struct zs_method_opts mo = {(enum zs_method)f->method, (int)f->lora_rank,
                                f->lora_target_mask ? f->lora_target_mask
                                                    : ZS_ROLE_ALL_LINEAR};
    return zs_model_trainable(m, &mo);
}

/* "GPU OOM in <phase> of <module>: needs N of C", or, when it would fit
 * by count but not by blocks, what PyTorch's OOM message says. */
static void gpu_oom_text(const struct zs_oom_info *o, char *buf, size_t cap)
{
    char a[32], b[32], r[32], q[32];
    if (o->needed_bytes <= o->available_bytes)
        snprintf(buf, cap,
                 "GPU OOM in %s of %s: fragmentation: tried to allocate %s "
                 "with %s allocated and %s reserved of %s",
                 o->phase, o->module,
                 zs_fmt_bytes(q, sizeof q, o->request_bytes),
                 zs_fmt_bytes(a, sizeof a, o->allocated_at_oom),
                 zs_fmt_bytes(r, sizeof r, o->reserved_at_oom),
                 zs_fmt_bytes(b, sizeof b, o->available_bytes));
    else
        snprintf(buf, cap, "GPU OOM in %s of %s: needs %s of %s", o->phase,
                 o->module, zs_fmt_bytes(a, sizeof a, o->needed_bytes),
                 zs_fmt_bytes(b, sizeof b, o->available_bytes));
}

/* "host RAM: needs N of C per node already at init (<module>)", or "at
 * the first <phase> (<module>)". */
static void host_oom_text(const struct zs_oom_info *o, char *buf, size_t cap)
{
    char a[32], b[32];
    snprintf(buf, cap, "host RAM: needs %s of %s per node%s%s (%s)",
             zs_fmt_bytes(a, sizeof a, o->needed_bytes),
             zs_fmt_bytes(b, sizeof b, o->available_bytes),
             o->step == 0 ? " already at init" : " at the first ",
             o->step == 0 ? "" : o->phase, o->module);
}

/* Appends to c's reason "; then <the other memory's OOM>" where its run
 * hit one after the verdict's (zs_sim_result.then): fixing the one memory
 * alone would not make it fit. */
static void then_reason(struct zs_candidate *c)
{
    char t[300];
    size_t len = strlen(c->reason);
    if (c->res.then.where == ZS_OOM_GPU)
        gpu_oom_text(&c->res.then, t, sizeof t);
    else if (c->res.then.where == ZS_OOM_HOST)
        host_oom_text(&c->res.then, t, sizeof t);
    else
        return;
    snprintf(c->reason + len, sizeof c->reason - len, "; then %s", t);
}

static void gpu_oom_reason(const struct worker *w, struct zs_candidate *c)
{
    char a[32];
    gpu_oom_text(&c->res.oom, c->reason, sizeof c->reason);
    if (zs_cfg_grads_held_unsharded(&c->cfg)) {
        /* name the term the HF Trainer adds, whichever allocation hit the
         * limit: every trainable element's unsharded grad in the reduce
         * dtype (fsdp2.c hold_grads); the adapted projections as resolved
         * from --lora-targets (zs_cfg_resolve), as the simulation itself
         * sizes them */
        int64_t held = cfg_trainable(w->m, &c->cfg) *
                       zs_cfg_reduce_bytes(&c->cfg);
        size_t len = strlen(c->reason);
        snprintf(c->reason + len, sizeof c->reason - len,
                 "; %s of it are unsharded grads held across "
                 "accumulation (HF no_sync)",
                 zs_fmt_bytes(a, sizeof a, held));
    }
    then_reason(c);
}

static void host_oom_reason(struct zs_candidate *c)
{
    host_oom_text(&c->res.oom, c->reason, sizeof c->reason);
    then_reason(c);
}

/* The score of a fitting candidate under the search's objective. */
static double fit_score(const struct worker *w, const struct zs_candidate *c)
{
    double tput = c->res.steady.tokens_per_s_per_gpu * (double)c->cfg.world;
    int64_t gpu_peak = c->res.steady.peak_gpu_reserved;
    switch (w->po->objective) {
    case ZS_OBJ_MEMORY:
        return (double)(c->res.gpu_capacity_bytes - gpu_peak) + tput * 1e-6;
    case ZS_OBJ_COST:
        /* GPU-hours per token = 1 / (3600 x tokens/s per GPU used) */
        return c->res.steady.tokens_per_s_per_gpu;
    default:
        return tput;
    }
}

/* Simulates the resolved candidate c and gives its verdict, reason and
 * score. */
static void simulate_cand(struct worker *w, zs_sim *sim,
                          struct zs_candidate *c)
{
    struct zs_err err = {0, ""};
    struct zs_setup su = {0};
    su.model = w->m;
    su.cluster = w->cl;
    su.cfg = &c->cfg;
    su.plan_mode = true;
    su.cache = w->cache;
    su.verdict_only = w->verdict_only;
    su.prefix_cut = !w->po->no_prefix_cut;
    if (zs_simulate(&su, sim, &c->res, &err)) {
        c->status = ZS_CAND_ERROR;
        zs_strlcpy(c->reason, err.msg, sizeof c->reason);
        return;
    }
    switch (c->res.oom.where) {
    case ZS_OOM_GPU:
        c->status = ZS_CAND_GPU_OOM;
        gpu_oom_reason(w, c);
        break;
    case ZS_OOM_HOST:
        c->status = ZS_CAND_HOST_OOM;
        host_oom_reason(c);
        break;
    default:
        c->status = ZS_CAND_FITS;
        c->score = fit_score(w, c);
        break;
    }
}

/* Runs the k-th candidate of w's list. */
static void run_one(struct worker *w, zs_sim *sim, int k)
{
    struct zs_candidate *c = &w->p->cand[w->idx ? w->idx[k] : k];
    if (w->complete)
        simulate_cand(w, sim, c);
    else
        evaluate(w, sim, c);
}

/* w's engine, made on first use, and its build context in w->cache (NULL
 * when none could be made: each build then allocates).  NULL when out of
 * memory. */
static zs_sim *worker_engine(struct worker *w)
{
    struct engines *e = w->eng;
    if (!e->sim[w->slot])
        e->sim[w->slot] = zs_sim_new();
    if (!e->cache[w->slot])
        e->cache[w->slot] = zs_build_cache_new();
    w->cache = e->cache[w->slot];
    return e->sim[w->slot];
}

static void *work(void *arg)
{
    struct worker *w = arg;
    zs_sim *sim = worker_engine(w);
    if (!sim) {
        w->rc = ZS_ENOMEM;
        return NULL;
    }
    for (;;) {
        int i;
        pthread_mutex_lock(w->mu);
        i = (*w->next)++;
        pthread_mutex_unlock(w->mu);
        if (i >= w->nidx)
            break;
        run_one(w, sim, i);
        pthread_mutex_lock(w->mu);
        (*w->done)++;
        pthread_mutex_unlock(w->mu);
    }
    return NULL;
}

/* Runs the candidates proto names (proto->idx, or all) on po->threads
 * threads, each worker a copy of proto with its own engine. */
static int run_all(struct zs_plan *p, const struct worker *proto)
{
    const struct zs_plan_opts *po = proto->po;
    int nt = po->threads > 0 ? po->threads : 2;
    int n = proto->idx ? proto->nidx : p->n;
    bool progress = po->progress && !proto->complete;
    pthread_t th[8];
    int started[8] = {0};
    struct worker w[8];
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    int next = 0, done = 0, rc = 0;
    double t0 = now_s(), last = t0;
    /* cmd_plan accepts --threads in [1, 8]; more is a caller's bug */
    assert(nt <= 8);
    if (nt > 8)
        return ZS_ERUNTIME;
    for (int i = 0; i < nt; i++) {
        w[i] = *proto;
        w[i].p = p;
        w[i].nidx = n;
        w[i].next = &next;
        w[i].done = &done;
        w[i].mu = &mu;
        w[i].slot = i;
        if (i > 0 && pthread_create(&th[i], NULL, work, &w[i]) == 0)
            started[i] = 1;
    }
    /* the calling thread works too, and reports progress between candidates */
    for (;;) {
        int i, ndone;
        double t;
        pthread_mutex_lock(&mu);
        i = next++;
        pthread_mutex_unlock(&mu);
        if (i >= n)
            break;
        {
            zs_sim *sim0 = worker_engine(&w[0]);
            if (!sim0) {
                /* stop handing out candidates, then join the workers below
                 * before reporting: none may outlive p */
                pthread_mutex_lock(&mu);
                next = n;
                pthread_mutex_unlock(&mu);
                rc = ZS_ENOMEM;
                break;
            }
            run_one(&w[0], sim0, i);
        }
        pthread_mutex_lock(&mu);
        ndone = ++done;
        pthread_mutex_unlock(&mu);
        t = now_s();
        if (progress && t - t0 > 1.0 && t - last > 0.2) {
            fprintf(stderr, "\rzsim plan: %d/%d candidates simulated", ndone,
                    n);
            last = t;
        }
    }
    for (int i = 1; i < nt; i++)
        if (started[i])
            pthread_join(th[i], NULL);
    if (rc)
        return rc;
    if (progress && now_s() - t0 > 1.0)
        fprintf(stderr, "\rzsim plan: %d/%d candidates simulated\n", n,
                n);
    for (int i = 0; i < nt; i++)
        if (w[i].rc)
            return w[i].rc;
    return 0;
}

static int simpler(const struct zs_cfg *a, const struct zs_cfg *b)
{
    int sa = a->offload_optimizer + a->offload_param + a->checkpointing;
    int sb = b->offload_optimizer + b->offload_param + b->checkpointing;
    return sa < sb;
}

static void rank(struct zs_plan *p)
{
    p->nfeasible = 0;
    for (int i = 0; i < p->n; i++)
        if (p->cand[i].status == ZS_CAND_FITS)
            p->order[p->nfeasible++] = i;
    /* insertion sort: a few hundred entries */
    for (int i = 1; i < p->nfeasible; i++) {
        int k = p->order[i], j = i - 1;
        while (j >= 0) {
            const struct zs_candidate *a = &p->cand[k],
                                      *b = &p->cand[p->order[j]];
            bool better = a->score > b->score * (1 + 1e-9) ||
                          (a->score >= b->score * (1 - 1e-9) &&
                           simpler(&a->cfg, &b->cfg));
            if (!better)
                break;
            p->order[j + 1] = p->order[j];
            j--;
        }
        p->order[j + 1] = k;
    }
    p->best = p->nfeasible ? p->order[0] : -1;
}

/* What the "what would fit" searches start from: the plan that found
 * nothing, its model, cluster and base configuration, and the options of
 * their sub-searches. */
struct suggest_ctx {
    struct zs_plan *p;
    const struct zs_model *m;
    const struct zs_cluster *cl;
    const struct zs_cfg *base;
    const struct zs_plan_opts *q;
    struct engines *eng; /* the search's, lent to its sub-plans */
};

/* Adds a "what would fit" line while there is room (6 lines). */
static void suggest_add(struct zs_plan *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void suggest_add(struct zs_plan *p, const char *fmt, ...)
{
    va_list ap;
    if (p->nsuggest >= 6)
        return;
    va_start(ap, fmt);
    vsnprintf(p->suggestion[p->nsuggest++], 256, fmt, ap);
    va_end(ap);
}

/* Searches again with model m, cluster cl, base c and options q, and labels
 * the best in lab (*tput its tok/s per GPU).  Returns -1 when the search
 * failed, 0 when nothing fits, 1 when it found a best. */
static int plan_run(const struct zs_model *m, const struct zs_cluster *cl,
                    const struct zs_cfg *base, const struct zs_plan_opts *po_in,
                    struct engines *eng, struct zs_plan *p,
                    struct zs_err *err);

static int sub_plan_best(const struct suggest_ctx *x, const struct zs_cluster *cl,
                         const struct zs_cfg *c, const struct zs_plan_opts *q,
                         char *lab, size_t cap, double *tput)
{
    const struct zs_model *m = x->m;
    struct zs_plan sub;
    struct zs_err e;
    int found;
    if (plan_run(m, cl, c, q, x->eng, &sub, &e) != 0)
        return -1;
    found = sub.best >= 0;
    if (found) {
        zs_plan_cand_label(&sub.cand[sub.best], lab, cap);
        *tput = sub.cand[sub.best].res.steady.tokens_per_s_per_gpu;
    }
    zs_plan_release(&sub);
    return found;
}

/* Nothing fits: what would?  More host RAM, LoRA/QLoRA, NVMe, Liger's
 * kernels, Ulysses, context parallelism, more nodes, shorter sequences —
 * each checked by simulating the candidates again. */
/* "What would fit": NVMe offload of the optimizer when the search left it
 * out (--allow-nvme no: searched now; no NVMe rates known: named, with the
 * flags that give them). */
static void nvme_suggestion(const struct suggest_ctx *x)
{
    struct zs_plan_opts o = *x->q;
    char lab[160];
    double r, w, tput;
    if (po_allows_nvme(x->q, x->base) || x->p->nsuggest >= 6 ||
        (x->q->fix_offload_opt && x->base->offload_optimizer != ZS_OFF_NVME) ||
        (!x->q->framework_any && x->base->framework != ZS_FW_DEEPSPEED))
        return;
    zs_nvme_node_rates(x->base, &x->cl->node, &r, &w);
    if (r <= 0 || w <= 0) {
        suggest_add(x->p,
                    "NVMe offload of the optimizer (DeepSpeed ZeRO-3): '%s' "
                    "has no NVMe drives in its profile; give --nvme-read and "
                    "--nvme-write (GB/s per node) to search it",
                    x->cl->node.name);
        return;
    }
    o.allow_nvme = true;
    if (sub_plan_best(x, x->cl, x->base, &o, lab, sizeof lab, &tput) > 0)
        suggest_add(x->p,
                    "NVMe offload (--allow-nvme yes) fits: best '%s', %.0f "
                    "tok/s per GPU",
                    lab, tput);
}

static void host_ram_suggestion(struct zs_plan *p, const struct zs_cluster *cl)
{
    char a[32], b[32], lab[160];
    int64_t best_host = -1;
    int hi = -1;
    for (int i = 0; i < p->n; i++) {
        const struct zs_candidate *c = &p->cand[i];
        /* one that runs out of GPU memory too would not fit with more
         * host RAM alone */
        if (c->status == ZS_CAND_HOST_OOM &&
            c->res.then.where != ZS_OOM_GPU &&
            (best_host < 0 || c->res.oom.needed_bytes < best_host)) {
            best_host = c->res.oom.needed_bytes;
            hi = i;
        }
    }
    if (hi < 0)
        return;
    zs_plan_cand_label(&p->cand[hi], lab, sizeof lab);
    suggest_add(
        p,
        "more host RAM: %s per node (have %s) lets '%s' fit the GPUs and "
        "the host",
        zs_fmt_bytes(a, sizeof a, best_host + cl->node.host_reserved_bytes),
        zs_fmt_bytes(b, sizeof b, cl->node.host_ram_bytes), lab);
}

/* LoRA, then QLoRA, for a full fine-tune: the first that fits. */
static void method_suggestion(const struct suggest_ctx *x)
{
    static const int methods[] = {ZS_METHOD_LORA, ZS_METHOD_QLORA};
    for (int k = 0; k < 2 && x->base->method == ZS_METHOD_FULL; k++) {
        struct zs_cfg c = *x->base;
        char lab[160];
        double tput;
        int found;
        c.method = methods[k];
        found = sub_plan_best(x, x->cl, &c, x->q, lab, sizeof lab, &tput);
        if (found < 0)
            continue;
        if (found)
            suggest_add(
                x->p, "%s (rank %lld) fits: best '%s', %.0f tok/s per GPU",
                k ? "QLoRA" : "LoRA", (long long)c.lora_rank, lab, tput);
        if (x->p->nsuggest &&
            strstr(x->p->suggestion[x->p->nsuggest - 1], "LoRA"))
            break;
    }
}

/* Where Liger's kernels (--kernels fused) apply: HF Trainer code on
 * transformers' eager kernels, with a loss the fused linear cross-entropy
 * replaces (config.c refuses the others with --kernels fused).  They save
 * HBM traffic in every norm, RoPE, SwiGLU and the loss (docs/kernels.md).
 * The faster-runs note re-simulates the three best fitting runs with them;
 * a micro-batch that fits only with them is not searched there. */
static bool liger_applies(const struct zs_cfg *f)
{
    return f->kernels == ZS_KERNELS_HF && f->trainer == ZS_TRAINER_HF &&
           (f->loss == ZS_LOSS_AUTO || f->loss == ZS_LOSS_FULL);
}

static void liger_cfg(struct zs_cfg *f)
{
    f->kernels = ZS_KERNELS_FUSED;
}

/* Liger's kernels when nothing fits: its fused linear cross-entropy never
 * holds the logits (at long sequences the GPU peak: the fp32 log-softmax of
 * seq x vocab), and its RMSNorm, RoPE and SwiGLU save less. */
static void kernels_suggestion(const struct suggest_ctx *x)
{
    struct zs_cfg c = *x->base;
    char lab[160];
    double tput;
    if (!liger_applies(&c) || x->p->nsuggest >= 6)
        return;
    liger_cfg(&c);
    if (sub_plan_best(x, x->cl, &c, x->q, lab, sizeof lab, &tput) > 0)
        suggest_add(x->p,
                    "Liger's fused kernels (--kernels fused; the Trainer's "
                    "use_liger_kernel) fit: best '%s', %.0f tok/s per GPU",
                    lab, tput);
}

/* Sequence sharding when nothing fits: the smallest degree within a node
 * that fits.  Ulysses (--sp, cp false): DeepSpeed's UlyssesSPAttentionHF
 * (DeepSpeed >= 0.17.0, PR #7268); context parallelism (--cp): PyTorch's
 * context_parallel, FSDP2 on SDPA attention (torchtitan's default).  Both
 * shard every per-token tensor by the degree.  A degree the framework
 * refuses for the model or the sequence (config.c zs_cfg_check_sp, check_cp)
 * leaves every candidate of its sub-plan invalid. */
static void shard_suggestion(const struct suggest_ctx *x, bool cp)
{
    struct zs_plan_opts o = *x->q;
    int fw = cp ? ZS_FW_FSDP2 : ZS_FW_DEEPSPEED;
    if (x->base->sp > 1 || x->base->cp > 1 || x->p->nsuggest >= 6 ||
        (!x->q->framework_any && x->base->framework != fw) ||
        (cp && (x->base->fsdp_version != 2 ||
                zs_cfg_attention(x->base) != ZS_ATTN_SDPA)))
        return;
    o.framework_any = 0;
    for (int d = 2; d <= x->cl->node.gpus_per_node; d *= 2) {
        struct zs_cfg c = *x->base;
        char lab[160];
        double tput;
        if (cp)
            c.cp = d;
        else
            c.sp = d;
        c.framework = fw;
        if (sub_plan_best(x, x->cl, &c, &o, lab, sizeof lab, &tput) <= 0)
            continue;
        if (cp)
            suggest_add(x->p,
                        "context parallelism (--cp %d, PyTorch's "
                        "context_parallel) fits: best '%s', %.0f tok/s per GPU",
                        d, lab, tput);
        else
            suggest_add(x->p,
                        "Ulysses sequence parallelism (--sp %d, DeepSpeed >= "
                        "0.17.0) fits: best '%s', %.0f tok/s per GPU",
                        d, lab, tput);
        return;
    }
}

/* More nodes: 2x, 4x, then 8x the nodes given, the first that fits. */
static void nodes_suggestion(const struct suggest_ctx *x)
{
    for (int mult = 2, found = 0; mult <= 8 && !found; mult *= 2) {
        struct zs_cluster more = *x->cl;
        char lab[160];
        double tput;
        more.nodes = x->cl->nodes * mult;
        snprintf(more.spec, sizeof more.spec, "%dx%s", more.nodes,
                 x->cl->node.gpu.name);
        found = sub_plan_best(x, &more, x->base, x->q, lab, sizeof lab,
                              &tput) > 0;
        if (found)
            suggest_add(x->p,
                        "more nodes: %d nodes fit with '%s', %.0f tok/s per "
                        "GPU",
                        more.nodes, lab, tput);
    }
}

/* Shorter sequences: half the length, from 1024 tokens up. */
static void seq_suggestion(const struct suggest_ctx *x)
{
    struct zs_cfg c = *x->base;
    char lab[160];
    double tput;
    if (x->base->seq_len < 1024)
        return;
    c.seq_len = x->base->seq_len / 2;
    if (sub_plan_best(x, x->cl, &c, x->q, lab, sizeof lab, &tput) > 0)
        suggest_add(x->p, "shorter sequences: seq %lld fits with '%s'",
                    (long long)c.seq_len, lab);
}

static void suggest(struct zs_plan *p, const struct zs_model *m,
                    const struct zs_cluster *cl, const struct zs_cfg *base,
                    const struct zs_plan_opts *po, struct engines *eng)
{
    struct zs_plan_opts q = *po;
    struct suggest_ctx x;
    q.suggest = false;
    q.progress = false;
    /* only each sub-plan's best is used */
    q.complete = ZS_PLAN_COMPLETE_FEASIBLE;
    x = (struct suggest_ctx){p, m, cl, base, &q, eng};
    host_ram_suggestion(p, cl);
    method_suggestion(&x);
    nvme_suggestion(&x);
    kernels_suggestion(&x);
    shard_suggestion(&x, false);
    shard_suggestion(&x, true);
    nodes_suggestion(&x);
    seq_suggestion(&x);
}

/* Whether alloc_note re-simulates GPU-OOM candidate c, were its need
 * `needed` bytes: only a fragmentation OOM (needed within the capacity).
 * Monotone in needed, so a lower bound that fails it settles it. */
static bool alloc_note_cand(const struct zs_candidate *c, int64_t needed)
{
    return c->status == ZS_CAND_GPU_OOM &&
           c->cfg.alloc_conf == ZS_ALLOC_DEFAULT &&
           needed <= c->res.oom.available_bytes;
}

/* Whether act_offload_search re-simulates GPU-OOM candidate c, were its need
 * `needed` bytes: full checkpointing not offloaded yet, a trainer that can
 * offload, and a shortfall its offloaded layer inputs could cover (at most
 * n_layers x tokens x hidden x 2 B).  Monotone in needed, like the above. */
static bool act_note_cand(const struct zs_model *m,
                          const struct zs_candidate *c, int64_t needed)
{
    const struct zs_cfg *f = &c->cfg;
    bool fsdp2 = f->framework == ZS_FW_FSDP2;
    int64_t tokens = f->micro_batch * f->seq_len / zs_cfg_seq_shards(f);
    int64_t bound = m->n_layers * tokens * zs_model_hidden_bytes_per_token(m);
    return c->status == ZS_CAND_GPU_OOM && f->checkpointing == ZS_CKPT_FULL &&
           !f->cpu_checkpointing && !f->offload_activations &&
           !(fsdp2 && f->trainer != ZS_TRAINER_TORCHTUNE) &&
           needed - c->res.oom.available_bytes <= bound;
}

/* alt becomes a variant of candidate c for a note to simulate again: c's
 * configuration, no verdict or score yet. */
static void variant(struct zs_candidate *alt, const struct zs_candidate *c)
{
    *alt = *c;
    alt->reason[0] = '\0';
    alt->score = 0;
}

/* Evaluates alts[0..n) (the notes' variants of rejected candidates) on the
 * search's threads, verdicts only unless the slow path runs: only a fit is
 * used. */
static int eval_alts(const struct worker *proto, struct zs_candidate *alts,
                     int n)
{
    struct zs_plan tmp;
    struct zs_plan_opts q = *proto->po;
    struct worker w = *proto;
    q.progress = false;
    memset(&tmp, 0, sizeof tmp);
    tmp.cand = alts;
    tmp.n = n;
    w.po = &q;
    w.idx = NULL;
    w.complete = false;
    w.verdict_only = q.complete != ZS_PLAN_COMPLETE_ALL;
    return n ? run_all(&tmp, &w) : 0;
}

/* Appends "'label'" (", " before all but the first) for the first three
 * fits, then " and N more" (nfit < 0: the end). */
static void note_add(char *note, size_t cap, size_t *len, int nfit,
                     const char *text)
{
    if (*len >= cap - 1)
        return;
    if (nfit < 0) {
        snprintf(note + *len, cap - *len, "%s", text);
        return;
    }
    *len += (size_t)snprintf(note + *len, cap - *len, "%s%s",
                             nfit ? ", " : "", text);
    if (*len >= cap)
        *len = cap - 1;
}

/* Writes into note the fits among alts[0..n): the first three labelled
 * "'label'", then " and N more".  With cand and from, alts[k] is named by
 * its searched candidate cand[from[k]]; without, by its own label and its
 * tok/s per GPU. */
static void note_fits(char *note, size_t cap, const struct zs_candidate *alts,
                      int n, const struct zs_candidate *cand, const int *from)
{
    size_t len = 0;
    int nfit = 0;
    for (int k = 0; k < n; k++) {
        char lab[200], q[240];
        if (alts[k].status != ZS_CAND_FITS)
            continue;
        if (nfit < 3) {
            zs_plan_cand_label(from ? &cand[from[k]] : &alts[k], lab,
                               sizeof lab);
            if (from)
                snprintf(q, sizeof q, "'%s'", lab);
            else
                snprintf(q, sizeof q, "'%s' (%.0f tok/s per GPU)", lab,
                         alts[k].res.steady.tokens_per_s_per_gpu);
            note_add(note, cap, &len, nfit, q);
        }
        nfit++;
    }
    if (nfit > 3) {
        char more[32];
        snprintf(more, sizeof more, " and %d more", nfit - 3);
        note_add(note, cap, &len, -1, more);
    }
}

/* Evaluates alts[0..n) (variants of rejected candidates: activation
 * offload, bf16 master weights), writes their fits into note (note_fits)
 * and, when nothing in the search fits, the best of them into "what would
 * fit" as "<what>: 'label' fits, N tok/s per GPU, H host per node". */
static int note_alt_fits(struct zs_plan *p, const struct worker *proto,
                         struct zs_candidate *alt, int n, char *note,
                         size_t cap, const char *what)
{
    const struct zs_candidate *best = NULL;
    int rc = eval_alts(proto, alt, n);
    if (rc)
        return rc;
    note_fits(note, cap, alt, n, NULL, NULL);
    for (int k = 0; k < n; k++)
        if (alt[k].status == ZS_CAND_FITS &&
            (!best || alt[k].score > best->score))
            best = &alt[k];
    if (p->best < 0 && best && p->nsuggest < 6) {
        char lab[200], h[32];
        int64_t host = best->res.steady.peak_host_per_node >
                               best->res.first.peak_host_per_node
                           ? best->res.steady.peak_host_per_node
                           : best->res.first.peak_host_per_node;
        zs_plan_cand_label(best, lab, sizeof lab);
        snprintf(p->suggestion[p->nsuggest++], 256,
                 "%.60s: '%.140s' fits, %.0f tok/s per GPU, %s host per node",
                 what, lab, best->res.steady.tokens_per_s_per_gpu,
                 zs_fmt_bytes(h, sizeof h, host));
    }
    return 0;
}

/* --alloc-conf default: re-simulates the candidates rejected for
 * fragmentation (enough free memory by count, not by blocks) with
 * expandable_segments and names those that then fit (engine/pool.c). */
static int alloc_note(struct zs_plan *p, const struct worker *proto)
{
    struct zs_candidate *alt = zs_calloc((size_t)p->n + 1, sizeof *alt);
    int *from = zs_calloc((size_t)p->n + 1, sizeof *from);
    int n = 0, rc = ZS_ENOMEM;
    p->alloc_note[0] = '\0';
    if (!alt || !from)
        goto out;
    for (int i = 0; i < p->n; i++) {
        const struct zs_candidate *c = &p->cand[i];
        if (!alloc_note_cand(c, c->res.oom.needed_bytes))
            continue;
        alt[n] = *c;
        alt[n].cfg.alloc_conf = ZS_ALLOC_EXPANDABLE;
        from[n++] = i;
    }
    rc = eval_alts(proto, alt, n);
    if (!rc)
        note_fits(p->alloc_note, sizeof p->alloc_note, alt, n, p->cand, from);
out:
    zs_free(alt);
    zs_free(from);
    return rc;
}

/* The rejected candidates that `eligible` admits, simulated again as
 * `apply` changes them; those that fit go into note (cap bytes), labelled
 * `what` in "what would fit" (note_alt_fits). */
static int rejected_note(struct zs_plan *p, const struct worker *proto,
                         char *note, size_t cap, const char *what,
                         bool (*eligible)(const struct zs_model *,
                                          const struct zs_candidate *),
                         void (*apply)(struct zs_cfg *))
{
    struct zs_candidate *alt = zs_calloc((size_t)p->n + 1, sizeof *alt);
    int n = 0, rc = ZS_ENOMEM;
    note[0] = '\0';
    if (!alt)
        goto out;
    for (int i = 0; i < p->n; i++) {
        if (!eligible(proto->m, &p->cand[i]))
            continue;
        variant(&alt[n], &p->cand[i]);
        apply(&alt[n].cfg);
        n++;
    }
    rc = note_alt_fits(p, proto, alt, n, note, cap, what);
out:
    zs_free(alt);
    return rc;
}

static bool act_note_eligible(const struct zs_model *m,
                              const struct zs_candidate *c)
{
    return act_note_cand(m, c, c->res.oom.needed_bytes);
}

static void act_offload_cfg(struct zs_cfg *f)
{
    if (f->framework == ZS_FW_FSDP2)
        f->offload_activations = true;
    else
        f->cpu_checkpointing = true;
}

/* Activation offload (issue 14 §3, sched/actoff.c): the GPU-OOM candidates
 * with full checkpointing whose shortfall their offloaded layer inputs
 * could cover (at most n_layers x tokens x hidden x 2 B) are simulated again
 * with DeepSpeed's cpu_checkpointing, or torchtune's OffloadActivations
 * under --trainer torchtune (the only FSDP2 trainer that has it); those that
 * fit go into p->act_note, and into "what would fit" when nothing else
 * does.  They are not ranked with the rest: the option changes the training
 * script (docs/activation-offload.md). */
static int act_offload_search(struct zs_plan *p, const struct worker *proto)
{
    return rejected_note(p, proto, p->act_note, sizeof p->act_note,
                         "activation offload", act_note_eligible,
                         act_offload_cfg);
}

/* DeepSpeed's bf16 master weights + optimizer states (--param-dtype bf16,
 * docs/trainer.md): the candidates with the optimizer on the CPU rejected
 * for host RAM that zsim can simulate with them (a release that keeps
 * offloaded states in bf16, 0.19.1 / PR #8010, and an offload
 * zs_cfg_ds_bf16_gap accepts) are simulated again in bf16; those that fit
 * go into p->bf16_note, and into "what would fit" when nothing else
 * does.  They are not ranked with the rest: the master weights and
 * Adam's moments then round to bf16 at every step, a numerical choice the
 * user makes. */
/* f with DeepSpeed's bf16 master weights + bf16 optimizer states, as
 * '--param-dtype bf16' resolves (zs_cfg_resolve). */
static void bf16_cfg(struct zs_cfg *f)
{
    f->param_dtype = f->param_dtype_resolved = ZS_DT_BF16;
    f->opt_state_dtype = ZS_DT_AUTO;
    f->opt_state_dtype_resolved = zs_cfg_opt_state_auto(f);
}

static bool bf16_note_cand(const struct zs_model *m,
                           const struct zs_candidate *c)
{
    const struct zs_cfg *f = &c->cfg;
    int64_t t;
    if (c->status != ZS_CAND_HOST_OOM || f->framework != ZS_FW_DEEPSPEED ||
        f->param_dtype_resolved == ZS_DT_BF16 ||
        !zs_ds_at_least(&f->ds_version, 0, 19, 1) || zs_cfg_ds_bf16_gap(f))
        return false;
    /* a lower bound of the bf16 run's host peak per node, to skip what
     * cannot fit: by the end of its first step every rank holds, for the
     * rest of the run, its bf16 master (2 B per trained element of its
     * partition, at least trainable / world), Adam's bf16 states (4 B), the
     * master's gradient (2 B) and, ZeRO-3, the bf16 grad accumulation
     * buffer (2 B) or, ZeRO-1/2 from 0.17, the 16-bit param buffer (2 B)
     * (zero.c init_host_optimizer, alloc_states).  With the optimizer on
     * NVMe they live in the swap files and no such bound prunes: those
     * rejections, often at the first step's swap-out after a whole
     * backward, are not tried (+24 % of the 72B plan's instructions on
     * 512 GiB); the faster-runs note covers NVMe runs that fit */
    if (f->offload_optimizer != ZS_OFF_CPU)
        return false;
    t = cfg_trainable(m, f) / f->world;
    return f->procs_per_node * 10 * t <= c->res.oom.available_bytes;
}

static int bf16_note(struct zs_plan *p, const struct worker *proto)
{
    return rejected_note(p, proto, p->bf16_note, sizeof p->bf16_note,
                         "bf16 master weights + optimizer states (--param-dtype "
                         "bf16)",
                         bf16_note_cand, bf16_cfg);
}

/* The least gain in tokens/s per GPU that a "these run faster" note lists
 * (faster_note, twin_note): 1 %.  Below it the note would advise a
 * configuration change for less than zsim resolves: the published corpus's
 * median tokens/s error was 4.5 % on 2026-11-29 (docs/validation.md), and
 * bf16 master weights also round every update.  Before 2026-11-29 any gain
 * was listed, down to "+0.0 %" for a LoRA run whose masters are a few MB. */
#define ZS_FASTER_NOTE_MIN_GAIN 0.01

static bool worth_noting(double base, double got)
{
    return base > 0 && got >= base * (1.0 + ZS_FASTER_NOTE_MIN_GAIN);
}

/* The three best fitting candidates that `eligible` admits are simulated
 * again as `apply` changes them; those that go at least
 * ZS_FASTER_NOTE_MIN_GAIN faster go into note (cap bytes) with their gain.
 * Not under the memory objective. */
static int faster_note(struct zs_plan *p, const struct worker *proto,
                       char *note, size_t cap,
                       bool (*eligible)(const struct zs_cfg *),
                       void (*apply)(struct zs_cfg *))
{
    struct zs_candidate alt[3];
    int from[3], n = 0, rc, nnote = 0;
    size_t len = 0;
    note[0] = '\0';
    if (proto->po->objective == ZS_OBJ_MEMORY)
        return 0;
    for (int i = 0; i < p->nfeasible && n < 3; i++) {
        const struct zs_candidate *c = &p->cand[p->order[i]];
        if (!eligible(&c->cfg))
            continue;
        variant(&alt[n], c);
        apply(&alt[n].cfg);
        from[n++] = p->order[i];
    }
    rc = eval_alts(proto, alt, n);
    for (int k = 0; !rc && k < n; k++) {
        const struct zs_candidate *c = &p->cand[from[k]];
        double base = c->res.steady.tokens_per_s_per_gpu,
               got = alt[k].res.steady.tokens_per_s_per_gpu;
        char lab[200], q[320];
        if (alt[k].status != ZS_CAND_FITS || !worth_noting(base, got))
            continue;
        zs_plan_cand_label(c, lab, sizeof lab);
        snprintf(q, sizeof q, "'%s': %.0f tok/s per GPU (+%.1f %%)", lab, got,
                 (got / base - 1) * 100);
        note_add(note, cap, &len, nnote++, q);
    }
    return rc;
}

/* bf16 master weights and optimizer states for runs that fit: DeepSpeed
 * candidates with the optimizer offloaded (CPU or NVMe), where they halve
 * what DeepSpeedCPUAdam streams and what the swapper moves. */
static bool bf16_faster_cand(const struct zs_cfg *f)
{
    return f->framework == ZS_FW_DEEPSPEED &&
           f->offload_optimizer != ZS_OFF_NONE &&
           f->param_dtype_resolved != ZS_DT_BF16 &&
           zs_ds_at_least(&f->ds_version, 0, 19, 1) && !zs_cfg_ds_bf16_gap(f);
}

/* Twin-Flow (offload_optimizer.ratio, docs/cpu-optimizer.md): the ratio
 * that puts m of n sub-groups on the GPU in cfg's DeepSpeed release, as the
 * shortest decimal that does (config.c zs_twin_cpu_groups truncates, so
 * aim half a sub-group inside); 0 when none does. */
static double twin_ratio(const struct zs_cfg *c, int64_t n, int64_t m)
{
    char buf[32];
    double r = zs_twin_cpu_last(&c->ds_version)
                   ? 1.0 - ((double)m + 0.5) / (double)n
                   : ((double)(n - m) + 0.5) / (double)n;
    snprintf(buf, sizeof buf, "%.3g", r);
    r = strtod(buf, NULL);
    return r > 0 && r < 1 &&
                   zs_twin_cpu_groups(n, r, &c->ds_version) == n - m
               ? r
               : 0;
}

/* Twin-Flow for the plan (objective throughput or cost): the three best
 * fitting DeepSpeed ZeRO-3 candidates with the optimizer (not the params) on
 * the CPU under DeepSpeedCPUAdam, no ratio and room for a sub-group are
 * simulated again with the ratio that moves as many whole sub-groups to the
 * GPU as their GPU headroom holds (16 B per element: fp32 master and
 * gradient, the backup AdamW's two states; 8 B under bf16 master weights;
 * zero.c init_twin_gpu) and with one
 * fewer; the faster of the two, where it beats its candidate by
 * ZS_FASTER_NOTE_MIN_GAIN, goes into p->twin_note (one entry per candidate,
 * three at most).  They are not
 * ranked with the rest: the search does not sweep the ratio. */
static int twin_note(struct zs_plan *p, const struct worker *proto)
{
    struct zs_candidate alt[6];
    int from[6], n = 0, rc, done = 0, nnote = 0;
    size_t len = 0;
    p->twin_note[0] = '\0';
    if (proto->po->objective == ZS_OBJ_MEMORY)
        return 0;
    for (int i = 0; i < p->nfeasible && done < 3; i++) {
        const struct zs_candidate *c = &p->cand[p->order[i]];
        const struct zs_cfg *f = &c->cfg;
        int64_t ng = c->res.opt_groups, sub = f->sub_group_size, room, m;
        int64_t peak = c->res.first.peak_gpu_reserved >
                               c->res.steady.peak_gpu_reserved
                           ? c->res.first.peak_gpu_reserved
                           : c->res.steady.peak_gpu_reserved;
        /* with offload_param the GPU sub-groups' update goes back to the
         * pinned bf16 partition through a blocking copy converted on the
         * CPU (zero.c step_twin_gpu), about what DeepSpeedCPUAdam takes for
         * the same elements: not tried */
        if (f->framework != ZS_FW_DEEPSPEED || f->zero != 3 ||
            f->offload_optimizer != ZS_OFF_CPU ||
            f->offload_param != ZS_OFF_NONE || f->offload_ratio < 1.0 ||
            f->cpu_opt_impl != ZS_CPUOPT_DS_CPU_ADAM ||
            !zs_ds_at_least(&f->ds_version, 0, 12, 3) || ng < 2)
            continue;
        room = c->res.gpu_capacity_bytes - peak;
        m = room > 0 ? room / (4 * zs_cfg_param_bytes(f) * sub) : 0;
        if (m > ng - 1)
            m = ng - 1;
        if (m < 1)
            continue;
        done++;
        for (int64_t k = m; k >= 1 && k > m - 2; k--) {
            double r = twin_ratio(f, ng, k);
            if (!(r > 0))
                continue;
            variant(&alt[n], c);
            alt[n].cfg.offload_ratio = r;
            from[n++] = p->order[i];
        }
    }
    rc = eval_alts(proto, alt, n);
    for (int k = 0; !rc && k < n; k++) {
        const struct zs_candidate *c = &p->cand[from[k]];
        double base = c->res.steady.tokens_per_s_per_gpu,
               got = alt[k].res.steady.tokens_per_s_per_gpu;
        char lab[200], q[320];
        if (alt[k].status != ZS_CAND_FITS || !worth_noting(base, got) ||
            (k > 0 && from[k - 1] == from[k] &&
             alt[k - 1].status == ZS_CAND_FITS &&
             alt[k - 1].res.steady.tokens_per_s_per_gpu >= got) ||
            (k + 1 < n && from[k + 1] == from[k] &&
             alt[k + 1].status == ZS_CAND_FITS &&
             alt[k + 1].res.steady.tokens_per_s_per_gpu > got))
            continue;
        zs_plan_cand_label(c, lab, sizeof lab);
        snprintf(q, sizeof q,
                 "'%s' with --offload-ratio %g (%lld of %lld sub-groups on "
                 "the GPU): %.0f tok/s per GPU (+%.1f %%)",
                 lab, alt[k].cfg.offload_ratio,
                 (long long)alt[k].res.opt_groups_gpu,
                 (long long)alt[k].res.opt_groups, got,
                 (got / base - 1) * 100);
        note_add(p->twin_note, sizeof p->twin_note, &len, nnote++, q);
    }
    return rc;
}

/* The ratio cmd_plan ranks a rejected candidate's miss by (its "closest
 * misses": need over capacity); for a partial result a lower bound. */
static double miss_ratio(const struct zs_candidate *c)
{
    return (double)c->res.oom.needed_bytes /
           (double)c->res.oom.available_bytes;
}

/* The misses of one kind (ZS_CAND_GPU_OOM or ZS_CAND_HOST_OOM) cmd_plan's
 * text output lists, picked as it picks them (smallest miss_ratio first,
 * the lower index on a tie, a reason already shown skipped, three shown;
 * planout.c rejected_kind) but among the complete results only.  Returns
 * the ratio of the third one shown, or INFINITY when fewer than three are.
 * mark: p->n bytes of scratch. */
static double shown_threshold(const struct zs_plan *p, char *mark, int kind)
{
    int shown = 0;
    memset(mark, 0, (size_t)p->n);
    for (;;) {
        double best = 1e300;
        int k = -1;
        bool dup = false;
        for (int i = 0; i < p->n; i++) {
            const struct zs_candidate *c = &p->cand[i];
            double r;
            if (c->status != kind || c->res.partial || mark[i] ||
                c->score < 0)
                continue;
            /* cmd_plan ranks a miss without a capacity by its index */
            r = c->res.oom.available_bytes > 0 ? miss_ratio(c) : (double)i;
            if (r < best) {
                best = r;
                k = i;
            }
        }
        if (k < 0)
            return INFINITY;
        for (int j = 0; j < p->n && !dup; j++)
            dup = mark[j] == 2 && !strcmp(p->cand[j].reason, p->cand[k].reason);
        mark[k] = dup ? 1 : 2;
        if (!dup && ++shown == 3)
            return best;
    }
}

/* Completes (simulates whole) the partial candidates listed in idx[0..n). */
static int complete_some(struct zs_plan *p, const struct worker *proto,
                         const int *idx, int n)
{
    struct worker w = *proto;
    for (int k = 0; k < n; k++) /* the run that stopped at the OOM */
        p->events_run += p->cand[idx[k]].res.events_run;
    w.idx = idx;
    w.nidx = n;
    w.complete = true;
    w.verdict_only = false;
    return n ? run_all(p, &w) : 0;
}

/* Moves the k candidates of idx[0..n) (ascending) with the smallest
 * miss_ratio to its front, and returns k. */
static int smallest_misses(const struct zs_plan *p, int *idx, int n, int k)
{
    for (int a = 0; a < k; a++) {
        int m = a, t;
        for (int b = a + 1; b < n; b++)
            if (miss_ratio(&p->cand[idx[b]]) < miss_ratio(&p->cand[idx[m]]))
                m = b;
        t = idx[a];
        idx[a] = idx[m];
        idx[m] = t;
    }
    return k;
}

/* ZS_PLAN_COMPLETE_SHOWN: completes every partial result the text output
 * can show, so that it is the one the complete search gives:
 *  - those the notes re-simulate (alloc_note_cand, act_note_cand: both hold
 *    for the need's lower bound whenever they hold for the need);
 *  - the closest misses of each kind (GPU, host): by ascending lower bound,
 *    until every partial one left has a lower bound above the third miss of
 *    its kind shown among the complete ones (its need can only be larger,
 *    so it is never picked, and a reason is compared only with those picked
 *    before it).  A partial host miss is one whose run then stopped at a
 *    GPU OOM (zs_sim_result.then): its host need is a lower bound. */
static int complete_shown(struct zs_plan *p, const struct worker *proto)
{
    const struct zs_plan_opts *po = proto->po;
    int *idx = zs_calloc((size_t)p->n + 1, sizeof *idx);
    char *mark = zs_calloc((size_t)p->n + 1, 1);
    int n = 0, rc = ZS_ENOMEM, batch = 2 * (po->threads > 0 ? po->threads : 2);
    if (!idx || !mark)
        goto out;
    for (int i = 0; i < p->n; i++) {
        const struct zs_candidate *c = &p->cand[i];
        int64_t lb = c->res.oom.needed_bytes;
        if (c->res.partial &&
            (c->res.oom.available_bytes <= 0 ||
             (po->suggest && proto->alloc_default && alloc_note_cand(c, lb)) ||
             (po->suggest && po->act_offload && act_note_cand(proto->m, c, lb))))
            idx[n++] = i;
    }
    rc = complete_some(p, proto, idx, n);
    for (;;) {
        double t_gpu, t_host;
        if (rc)
            goto out;
        t_gpu = shown_threshold(p, mark, ZS_CAND_GPU_OOM);
        t_host = shown_threshold(p, mark, ZS_CAND_HOST_OOM);
        n = 0;
        for (int i = 0; i < p->n; i++) {
            const struct zs_candidate *c = &p->cand[i];
            if (c->res.partial &&
                miss_ratio(c) <=
                    (c->status == ZS_CAND_HOST_OOM ? t_host : t_gpu))
                idx[n++] = i;
        }
        if (!n)
            break;
        if (n > batch)
            n = smallest_misses(p, idx, n, batch);
        rc = complete_some(p, proto, idx, n);
    }
out:
    zs_free(idx);
    zs_free(mark);
    return rc;
}

int zs_plan_run(const struct zs_model *m, const struct zs_cluster *cl,
                const struct zs_cfg *base, const struct zs_plan_opts *po,
                struct zs_plan *p, struct zs_err *err)
{
    struct engines eng = {0};
    int rc = plan_run(m, cl, base, po, &eng, p, err);
    engines_free(&eng);
    return rc;
}

/* zs_plan_run on the engines eng (a sub-plan's are its search's). */
static int plan_run(const struct zs_model *m, const struct zs_cluster *cl,
                    const struct zs_cfg *base, const struct zs_plan_opts *po_in,
                    struct engines *eng, struct zs_plan *p,
                    struct zs_err *err)
{
    double t0 = now_s();
    struct zs_plan_opts opts = *po_in;
    const struct zs_plan_opts *po = &opts;
    struct worker w = {.m = m, .cl = cl, .po = po, .eng = eng};
    int rc;
    /* the slow path, every candidate simulated whole: what the fast one is
     * compared with (scripts/plan-identity.sh, tests/check_plan.c) */
    if (getenv("ZSIM_PLAN_FULL"))
        opts.complete = ZS_PLAN_COMPLETE_ALL;
    if (getenv("ZSIM_PLAN_NOCUT"))
        opts.no_prefix_cut = true;
    w.verdict_only = po->complete != ZS_PLAN_COMPLETE_ALL;
    w.alloc_default = base->alloc_conf == ZS_ALLOC_DEFAULT;
    memset(p, 0, sizeof *p);
    p->best = -1;
    p->global_batch = base->global_batch;
    if (!p->global_batch) {
        p->global_batch = DEFAULT_GLOBAL_BATCH;
        p->global_batch_default = true;
    }
    rc = enumerate(p, cl, base, po);
    if (rc)
        goto fail;
    p->order = zs_calloc((size_t)(p->n ? p->n : 1), sizeof *p->order);
    if (!p->order) {
        rc = ZS_ENOMEM;
        goto fail;
    }
    rc = run_all(p, &w);
    if (!rc && po->complete == ZS_PLAN_COMPLETE_SHOWN)
        rc = complete_shown(p, &w);
    if (rc)
        goto fail;
    for (int i = 0; i < p->n; i++) {
        p->events += p->cand[i].res.events;
        p->events_run += p->cand[i].res.events_run;
        p->nwhole += !p->cand[i].res.partial &&
                     p->cand[i].status != ZS_CAND_INVALID &&
                     p->cand[i].status != ZS_CAND_ERROR;
    }
    rank(p);
    if (po->suggest && base->alloc_conf == ZS_ALLOC_DEFAULT) {
        rc = alloc_note(p, &w);
        if (rc)
            goto fail;
    }
    if (po->suggest && po->act_offload) {
        rc = act_offload_search(p, &w);
        if (rc)
            goto fail;
    }
    if (po->suggest) {
        rc = twin_note(p, &w);
        if (!rc)
            rc = bf16_note(p, &w);
        if (!rc)
            rc = faster_note(p, &w, p->bf16_faster_note,
                             sizeof p->bf16_faster_note, bf16_faster_cand,
                             bf16_cfg);
        if (!rc)
            rc = faster_note(p, &w, p->liger_faster_note,
                             sizeof p->liger_faster_note, liger_applies,
                             liger_cfg);
        if (rc)
            goto fail;
    }
    if (p->best < 0 && po->suggest)
        suggest(p, m, cl, base, po, eng);
    p->elapsed_s = now_s() - t0;
    /* golden tests compare whole outputs: the one wall-clock figure is
     * reported as 0 under ZSIM_GOLDEN (tests/cli/run.sh sets it) */
    if (getenv("ZSIM_GOLDEN"))
        p->elapsed_s = 0;
    return 0;
fail:
    zs_plan_release(p);
    return zs_err_set(err, rc, "out of memory planning");
}

void zs_plan_release(struct zs_plan *p)
{
    zs_free(p->cand);
    zs_free(p->order);
    p->cand = NULL;
    p->order = NULL;
    p->n = p->cap = 0;
}

/* DeepSpeed JSON for the best plan (the lint module writes it atomically):
 * DeepSpeed's defaults for the simulated version, every knob the plan chose
 * through ds_keys.c's rows, and the choices below. */
int zs_plan_emit_ds(const struct zs_candidate *c, const char *path,
                    struct zs_err *err)
{
    const struct zs_cfg *f = &c->cfg;
    struct zs_dsconfig_ctx ctx;
    struct zs_dsconfig ds;
    memset(&ctx, 0, sizeof ctx);
    ctx.version = f->ds_version;
    zs_dsconfig_defaults(&ctx, &ds);
    zs_ds_keys_from_cfg(f, &ds);
    ds.have_zero_block = true;
    ds.offload_optimizer.present = f->offload_optimizer != ZS_OFF_NONE;
    ds.offload_param.present = f->offload_param != ZS_OFF_NONE;
    ds.train_batch_size.v = f->micro_batch * f->accum * f->dp;
    ds.train_batch_size.from = ZS_DS_SET;
    /* a 16-bit model file at save, as HF's Trainer needs to write
     * model.safetensors under ZeRO-3 (its default is false) */
    ds.stage3_gather_16bit_weights_on_model_save.v = true;
    ds.stage3_gather_16bit_weights_on_model_save.from = ZS_DS_SET;
    /* the CPU optimizer the plan simulated: DeepSpeedCPUAdam is DeepSpeed's
     * default; torch's AdamW needs "torch_adam" (and "fused") */
    if (f->offload_optimizer != ZS_OFF_NONE &&
        f->cpu_opt_impl != ZS_CPUOPT_DS_CPU_ADAM) {
        ds.optimizer.torch_adam.v = true;
        ds.optimizer.torch_adam.from = ZS_DS_SET;
        ds.optimizer.fused.v = f->cpu_opt_impl == ZS_CPUOPT_TORCH_FUSED;
        ds.optimizer.fused.from = ZS_DS_SET;
    }
    /* zsim simulates bf16 mixed precision */
    ds.bf16_enabled.v = true;
    ds.bf16_enabled.from = ZS_DS_SET;
    /* '--param-dtype bf16' (setup.c apply_ds reads the pair back) */
    if (f->param_dtype_resolved == ZS_DT_BF16) {
        ds.bf16_master_weights_and_grads.v = true;
        ds.bf16_master_weights_and_grads.from = ZS_DS_SET;
        ds.bf16_optimizer_states.v = f->opt_state_dtype_resolved == ZS_DT_BF16;
        ds.bf16_optimizer_states.from = ZS_DS_SET;
    }
    /* the plan's activation offload (issue 14 §3) */
    if (f->cpu_checkpointing) {
        ds.activation_checkpointing.present = true;
        ds.activation_checkpointing.cpu_checkpointing.v = true;
        ds.activation_checkpointing.cpu_checkpointing.from = ZS_DS_SET;
    }
    return zs_dsconfig_write(&ds, path, err);
}

void zs_plan_opts_defaults(struct zs_plan_opts *po)
{
    memset(po, 0, sizeof *po);
    po->framework_any = 1;
    po->suggest = true;
    po->act_offload = true;
    po->complete = ZS_PLAN_COMPLETE_SHOWN;
}

bool zs_plan_nvme_default(const struct zs_cfg *base,
                          const struct zs_cluster *cl)
{
    double r, w;
    zs_nvme_node_rates(base, &cl->node, &r, &w);
    return r > 0 && w > 0;
}
