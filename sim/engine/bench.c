/*
 * bench.c — zs_engine_bench: a deterministic synthetic schedule shaped like
 * one rank of a ZeRO-3 offload step, for measuring the engine's speed
 * (`zsim bench`).  Per "layer": a CUDA-caching allocation of the gathered
 * parameters, an H2D flow (PCIe + host memory bandwidth), an all-gather flow
 * on NVLink with a rate cap, a compute DELAY, an activation allocation freed
 * four layers later, a pinned host buffer and a D2H flow for the gradients,
 * and a CPU optimizer DELAY holding 2 of 8 cores.  Transfers alternate over
 * two queues per direction so 4-8 flows are active at once on 4 links.
 * The figures are shapes, not measurements: this only exercises the engine.
 */
#include "engine/engine.h"

#include "util/err.h"

#include <time.h>

#define TASKS_PER_LAYER 13

static uint64_t lcg(uint64_t *st)
{
    /* Knuth's MMIX LCG; deterministic across platforms. */
    *st = *st * 6364136223846793005ULL + 1442695040888963407ULL;
    return *st >> 33;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

enum { COMP, H2D, D2H = H2D + 2, COMM = D2H + 2, CPU = COMM + 2, NQ = CPU + 4 };

/* The synthetic schedule being built: its topology and the rings of the
 * last four layers' tasks that later layers wait for or free. */
struct bench {
    zs_sim *s;
    struct zs_err *err;
    int q[NQ], lh2d, ld2h, lnv, lmem, gpu, host;
    int32_t act_ring[4]; /* activation allocs, last 4 layers */
    int32_t fp_ring[4];  /* free_param, last 4 layers */
    int32_t opt_ring[4]; /* optimizer, last 4 layers */
    uint64_t rng;
};

static int topology(struct bench *b)
{
    static const char *const qnames[NQ] = {"compute", "h2d0", "h2d1", "d2h0",
                                           "d2h1",    "ag0",  "ag1",  "cpu0",
                                           "cpu1",    "cpu2", "cpu3"};
    zs_sim *s = b->s;
    /* Link figures are round numbers of the right order (PCIe Gen5 x16
     * ~25 GB/s per direction achieved, NVLink 4 ~150 GB/s bus bandwidth,
     * host DRAM ~100 GB/s); they only shape the overlap. */
    b->lh2d = zs_sim_add_link(s, "pcie_h2d", 25e9);
    b->ld2h = zs_sim_add_link(s, "pcie_d2h", 25e9);
    b->lnv = zs_sim_add_link(s, "nvlink", 150e9);
    b->lmem = zs_sim_add_link(s, "host_mem", 100e9);
    b->gpu = zs_sim_add_pool(s, "gpu", ZS_POOL_CUDA_CACHING, (int64_t)80 << 30);
    b->host = zs_sim_add_pool(s, "host", ZS_POOL_HOST, 0);
    if (b->lh2d < 0 || b->ld2h < 0 || b->lnv < 0 || b->lmem < 0 || b->gpu < 0 ||
        b->host < 0)
        return zs_err_set(b->err, b->lh2d < 0 ? b->lh2d : ZS_ENOMEM,
                          "bench: %s", zs_sim_errmsg(s));
    for (int i = 0; i < NQ; i++) {
        b->q[i] = zs_sim_add_queue(s, qnames[i]);
        if (b->q[i] < 0)
            return zs_err_set(b->err, b->q[i], "bench: %s", zs_sim_errmsg(s));
    }
    zs_sim_set_cores(s, 8);
    for (int i = 0; i < 4; i++)
        b->act_ring[i] = b->fp_ring[i] = b->opt_ring[i] = -1;
    b->rng = 42;
    return 0;
}

/* Submits d; its id goes to *id.  0 or the engine's error, in b->err. */
static int submit(struct bench *b, const struct zs_task_desc *d, int32_t *id)
{
    *id = zs_sim_submit(b->s, d);
    if (*id < 0)
        return zs_err_set(b->err, *id, "bench: %s", zs_sim_errmsg(b->s));
    return 0;
}

/* A transfer of `bytes` on queue q over links l0 and l1 (-1: l0 alone),
 * after task *dep (NULL: none), capped at rate_cap (0: none). */
static int submit_flow(struct bench *b, int q, const char *name,
                       const int32_t *dep, int l0, int l1, double rate_cap,
                       double bytes, int32_t *id)
{
    struct zs_task_desc d = {.kind = ZS_TASK_FLOW,
                             .queue = q,
                             .name = name,
                             .deps = dep,
                             .ndeps = dep != NULL,
                             .nlinks = l1 >= 0 ? 2 : 1,
                             .links = {l0, l1},
                             .rate_cap = rate_cap,
                             .bytes = bytes};
    return submit(b, &d, id);
}

/* Layer i's parameters: a 4-68 MiB gathered buffer on the GPU (prefetch
 * depth 4: layer i gathers once layer i-4 is released), the H2D copy and
 * the all-gather; *ag is the all-gather. */
static int layer_gather(struct bench *b, int64_t i, int32_t *pa, int32_t *ag)
{
    int side = (int)(i & 1);
    int32_t h2d;
    struct zs_task_desc d = {.kind = ZS_TASK_ALLOC,
                             .queue = b->q[H2D + side],
                             .name = "param",
                             .pool = b->gpu,
                             .deps = &b->fp_ring[i & 3],
                             .ndeps = b->fp_ring[i & 3] >= 0};
    int rc;
    d.alloc_bytes = (int64_t)(4 + lcg(&b->rng) % 64) << 20;
    rc = submit(b, &d, pa);
    if (!rc)
        rc = submit_flow(b, b->q[H2D + side], "h2d", pa, b->lh2d, b->lmem, 0,
                         (double)(40 + lcg(&b->rng) % 60) * 1e6, &h2d);
    if (!rc)
        rc = submit_flow(b, b->q[COMM + side], "allgather", &h2d, b->lnv, -1,
                         100e9, (double)(200 + lcg(&b->rng) % 200) * 1e6, ag);
    return rc;
}

/* Layer i's compute after the all-gather ag, its activation buffer (freed
 * four layers later) and the release of its parameters pa; *comp is the
 * compute task. */
static int layer_compute(struct bench *b, int64_t i, int32_t pa, int32_t ag,
                         int32_t *comp)
{
    struct zs_task_desc d = {.kind = ZS_TASK_DELAY,
                             .queue = b->q[COMP],
                             .name = "fwd",
                             .deps = &ag,
                             .ndeps = 1};
    int32_t act, id;
    int rc;
    d.dur_ns = 500000 + (int64_t)(lcg(&b->rng) % 500000);
    if ((rc = submit(b, &d, comp)))
        return rc;
    d = (struct zs_task_desc){.kind = ZS_TASK_ALLOC,
                              .queue = b->q[COMP],
                              .name = "act",
                              .pool = b->gpu};
    d.alloc_bytes = (int64_t)(256 + lcg(&b->rng) % 4096) << 10;
    if ((rc = submit(b, &d, &act)))
        return rc;
    d = (struct zs_task_desc){.kind = ZS_TASK_FREE,
                              .queue = b->q[COMP],
                              .name = "free_param",
                              .alloc_task = pa};
    if ((rc = submit(b, &d, &id)))
        return rc;
    b->fp_ring[i & 3] = id;
    if (b->act_ring[i & 3] >= 0)
        d = (struct zs_task_desc){.kind = ZS_TASK_FREE,
                                  .queue = b->q[COMP],
                                  .name = "free_act",
                                  .alloc_task = b->act_ring[i & 3]};
    else
        d = (struct zs_task_desc){
            .kind = ZS_TASK_MARK, .queue = b->q[COMP], .name = "mark"};
    rc = submit(b, &d, &id);
    b->act_ring[i & 3] = act;
    return rc;
}

/* Layer i's gradients after compute comp: a pinned host buffer, the D2H
 * copy and a CPU optimizer step holding 2 of 8 cores; *opt is the last of
 * them, the buffer's release after the step. */
static int layer_offload(struct bench *b, int64_t i, int32_t comp, int32_t *opt)
{
    int side = (int)(i & 1);
    int32_t hb, d2h, adam;
    struct zs_task_desc d = {.kind = ZS_TASK_ALLOC,
                             .queue = b->q[D2H + side],
                             .name = "grad_host",
                             .pool = b->host,
                             .alloc_flags = ZS_ALLOC_PINNED,
                             .deps = &comp,
                             .ndeps = 1};
    int rc;
    d.alloc_bytes = (int64_t)(1 + lcg(&b->rng) % 64) << 20;
    if ((rc = submit(b, &d, &hb)) ||
        (rc = submit_flow(b, b->q[D2H + side], "d2h", NULL, b->ld2h, b->lmem, 0,
                          (double)(40 + lcg(&b->rng) % 60) * 1e6, &d2h)))
        return rc;
    d = (struct zs_task_desc){.kind = ZS_TASK_DELAY,
                              .queue = b->q[CPU + (int)(i & 3)],
                              .name = "adam",
                              .deps = &d2h,
                              .ndeps = 1,
                              .cores = 2};
    d.dur_ns = 1000000 + (int64_t)(lcg(&b->rng) % 2000000);
    if ((rc = submit(b, &d, &adam)))
        return rc;
    d = (struct zs_task_desc){.kind = ZS_TASK_FREE,
                              .queue = b->q[CPU + (int)(i & 3)],
                              .name = "free_grad_host",
                              .alloc_task = hb};
    return submit(b, &d, opt);
}

/* A zero-duration join of compute and the optimizer of layer i-4 (bounded
 * optimizer lag), and a short kernel launch gap. */
static int layer_join(struct bench *b, int64_t i, int32_t comp, int32_t opt)
{
    int32_t dep[2], id;
    struct zs_task_desc d = {.kind = ZS_TASK_MARK,
                             .queue = b->q[COMP],
                             .name = "join",
                             .deps = dep,
                             .ndeps = 2};
    int rc;
    dep[0] = comp;
    dep[1] = b->opt_ring[i & 3] >= 0 ? b->opt_ring[i & 3] : comp;
    b->opt_ring[i & 3] = opt;
    if ((rc = submit(b, &d, &id)))
        return rc;
    d = (struct zs_task_desc){.kind = ZS_TASK_DELAY,
                              .queue = b->q[COMP],
                              .name = "gap",
                              .dur_ns = 5000};
    return submit(b, &d, &id);
}

static int build(zs_sim *s, int64_t ntasks, struct zs_err *err)
{
    struct bench b = {.s = s, .err = err};
    int64_t layers = ntasks / TASKS_PER_LAYER;
    int rc = topology(&b);
    if (layers < 1)
        layers = 1;
    for (int64_t i = 0; rc == 0 && i < layers; i++) {
        int32_t pa, ag, comp, opt;
        rc = layer_gather(&b, i, &pa, &ag);
        if (!rc)
            rc = layer_compute(&b, i, pa, ag, &comp);
        if (!rc)
            rc = layer_offload(&b, i, comp, &opt);
        if (!rc)
            rc = layer_join(&b, i, comp, opt);
    }
    return rc;
}

int zs_engine_bench(int64_t ntasks, double *events_per_s, int64_t *events,
                    struct zs_err *err)
{
    zs_sim *s;
    int rc;
    double best = 0;
    zs_err_clear(err);
    if (ntasks < 1 || ntasks > 100000000)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid task count for bench: must be in [1, "
                          "100000000] (got %lld)",
                          (long long)ntasks);
    s = zs_sim_new();
    if (!s)
        return zs_err_set(err, ZS_ENOMEM, "out of memory creating a sim");
    rc = build(s, ntasks, err);
    /* One warm-up run sizes every array; then the best of three. */
    for (int r = 0; rc == 0 && r < 4; r++) {
        double t0 = now_s(), dt;
        rc = zs_sim_run(s, err);
        dt = now_s() - t0;
        if (rc == ZS_SIM_OOM) {
            rc = zs_err_set(err, ZS_ERUNTIME, "bench: unexpected oom");
            break;
        }
        if (rc == 0 && r > 0 && dt > 0) {
            double eps = (double)zs_sim_events(s) / dt;
            if (eps > best)
                best = eps;
        }
    }
    if (rc == 0) {
        if (events_per_s)
            *events_per_s = best;
        if (events)
            *events = zs_sim_events(s);
    }
    zs_sim_free(s);
    return rc;
}
