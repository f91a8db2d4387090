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

static int build(zs_sim *s, int64_t ntasks, struct zs_err *err)
{
    enum {
        COMP,
        H2D,
        D2H = H2D + 2,
        COMM = D2H + 2,
        CPU = COMM + 2,
        NQ = CPU + 4
    };
    static const char *const qnames[NQ] = {"compute", "h2d0", "h2d1", "d2h0",
                                           "d2h1",    "ag0",  "ag1",  "cpu0",
                                           "cpu1",    "cpu2", "cpu3"};
    int q[NQ], lh2d, ld2h, lnv, lmem, gpu, host;
    int32_t act_ring[4] = {-1, -1, -1, -1};
    int32_t fp_ring[4] = {-1, -1, -1, -1};  /* free_param, last 4 layers */
    int32_t opt_ring[4] = {-1, -1, -1, -1}; /* optimizer, last 4 layers */
    uint64_t rng = 42;
    int64_t layers = ntasks / TASKS_PER_LAYER;
    if (layers < 1)
        layers = 1;
    /* Link figures are round numbers of the right order (PCIe Gen5 x16
     * ~25 GB/s per direction achieved, NVLink 4 ~150 GB/s bus bandwidth,
     * host DRAM ~100 GB/s); they only shape the overlap. */
    lh2d = zs_sim_add_link(s, "pcie_h2d", 25e9);
    ld2h = zs_sim_add_link(s, "pcie_d2h", 25e9);
    lnv = zs_sim_add_link(s, "nvlink", 150e9);
    lmem = zs_sim_add_link(s, "host_mem", 100e9);
    gpu = zs_sim_add_pool(s, "gpu", ZS_POOL_CUDA_CACHING, (int64_t)80 << 30);
    host = zs_sim_add_pool(s, "host", ZS_POOL_HOST, 0);
    if (lh2d < 0 || ld2h < 0 || lnv < 0 || lmem < 0 || gpu < 0 || host < 0)
        return zs_err_set(err, lh2d < 0 ? lh2d : ZS_ENOMEM, "bench: %s",
                          zs_sim_errmsg(s));
    for (int i = 0; i < NQ; i++) {
        q[i] = zs_sim_add_queue(s, qnames[i]);
        if (q[i] < 0)
            return zs_err_set(err, q[i], "bench: %s", zs_sim_errmsg(s));
    }
    zs_sim_set_cores(s, 8);
    for (int64_t i = 0; i < layers; i++) {
        struct zs_task_desc d = {0};
        int32_t pa, h2d, ag, comp, act, hb, d2h, id;
        int32_t dep[2];
        int side = (int)(i & 1);
#define SUBMIT(var)                                                            \
    do {                                                                       \
        var = zs_sim_submit(s, &d);                                            \
        if (var < 0)                                                           \
            return zs_err_set(err, var, "bench: %s", zs_sim_errmsg(s));        \
    } while (0)
        /* gathered parameters: 4-68 MiB on the GPU */
        /* prefetch depth 4: layer i gathers once layer i-4 is released */
        d = (struct zs_task_desc){.kind = ZS_TASK_ALLOC,
                                  .queue = q[H2D + side],
                                  .name = "param",
                                  .pool = gpu,
                                  .deps = &fp_ring[i & 3],
                                  .ndeps = fp_ring[i & 3] >= 0};
        d.alloc_bytes = (int64_t)(4 + lcg(&rng) % 64) << 20;
        SUBMIT(pa);
        dep[0] = pa;
        d = (struct zs_task_desc){.kind = ZS_TASK_FLOW,
                                  .queue = q[H2D + side],
                                  .name = "h2d",
                                  .deps = dep,
                                  .ndeps = 1,
                                  .nlinks = 2,
                                  .links = {lh2d, lmem}};
        d.bytes = (double)(40 + lcg(&rng) % 60) * 1e6;
        SUBMIT(h2d);
        dep[0] = h2d;
        d = (struct zs_task_desc){.kind = ZS_TASK_FLOW,
                                  .queue = q[COMM + side],
                                  .name = "allgather",
                                  .deps = dep,
                                  .ndeps = 1,
                                  .nlinks = 1,
                                  .links = {lnv},
                                  .rate_cap = 100e9};
        d.bytes = (double)(200 + lcg(&rng) % 200) * 1e6;
        SUBMIT(ag);
        dep[0] = ag;
        d = (struct zs_task_desc){.kind = ZS_TASK_DELAY,
                                  .queue = q[COMP],
                                  .name = "fwd",
                                  .deps = dep,
                                  .ndeps = 1};
        d.dur_ns = 500000 + (int64_t)(lcg(&rng) % 500000);
        SUBMIT(comp);
        d = (struct zs_task_desc){.kind = ZS_TASK_ALLOC,
                                  .queue = q[COMP],
                                  .name = "act",
                                  .pool = gpu};
        d.alloc_bytes = (int64_t)(256 + lcg(&rng) % 4096) << 10;
        SUBMIT(act);
        d = (struct zs_task_desc){.kind = ZS_TASK_FREE,
                                  .queue = q[COMP],
                                  .name = "free_param",
                                  .alloc_task = pa};
        SUBMIT(id);
        fp_ring[i & 3] = id;
        if (act_ring[i & 3] >= 0) {
            d = (struct zs_task_desc){.kind = ZS_TASK_FREE,
                                      .queue = q[COMP],
                                      .name = "free_act",
                                      .alloc_task = act_ring[i & 3]};
            SUBMIT(id);
        } else {
            d = (struct zs_task_desc){
                .kind = ZS_TASK_MARK, .queue = q[COMP], .name = "mark"};
            SUBMIT(id);
        }
        act_ring[i & 3] = act;
        dep[0] = comp;
        d = (struct zs_task_desc){.kind = ZS_TASK_ALLOC,
                                  .queue = q[D2H + side],
                                  .name = "grad_host",
                                  .pool = host,
                                  .alloc_flags = ZS_ALLOC_PINNED,
                                  .deps = dep,
                                  .ndeps = 1};
        d.alloc_bytes = (int64_t)(1 + lcg(&rng) % 64) << 20;
        SUBMIT(hb);
        d = (struct zs_task_desc){.kind = ZS_TASK_FLOW,
                                  .queue = q[D2H + side],
                                  .name = "d2h",
                                  .nlinks = 2,
                                  .links = {ld2h, lmem}};
        d.bytes = (double)(40 + lcg(&rng) % 60) * 1e6;
        SUBMIT(d2h);
        dep[0] = d2h;
        d = (struct zs_task_desc){.kind = ZS_TASK_DELAY,
                                  .queue = q[CPU + (int)(i & 3)],
                                  .name = "adam",
                                  .deps = dep,
                                  .ndeps = 1,
                                  .cores = 2};
        d.dur_ns = 1000000 + (int64_t)(lcg(&rng) % 2000000);
        SUBMIT(id);
        d = (struct zs_task_desc){.kind = ZS_TASK_FREE,
                                  .queue = q[CPU + (int)(i & 3)],
                                  .name = "free_grad_host",
                                  .alloc_task = hb};
        SUBMIT(id);
        /* a zero-duration join of compute and the optimizer of layer i-4
         * (bounded optimizer lag), and a short kernel launch gap */
        dep[0] = comp;
        dep[1] = opt_ring[i & 3] >= 0 ? opt_ring[i & 3] : comp;
        opt_ring[i & 3] = id;
        d = (struct zs_task_desc){.kind = ZS_TASK_MARK,
                                  .queue = q[COMP],
                                  .name = "join",
                                  .deps = dep,
                                  .ndeps = 2};
        SUBMIT(id);
        d = (struct zs_task_desc){.kind = ZS_TASK_DELAY,
                                  .queue = q[COMP],
                                  .name = "gap",
                                  .dur_ns = 5000};
        SUBMIT(id);
#undef SUBMIT
    }
    return 0;
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
