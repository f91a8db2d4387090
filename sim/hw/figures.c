/*
 * figures.c — the figures the engine asks for in its hot path: curves
 * (interpolated in log2 of the size), GEMM and memory-bound kernel times,
 * flash-attention efficiency, collective bus bandwidth and time.
 *
 * The bottom of hw/: it calls nothing else in the folder.  The profile
 * loader (profile.c) prepares curves through it, and the registry and SPEC
 * resolution (hw.c) call the loader, so the order is
 * figures <- profile <- hw.  Declared in hw.h.
 *
 * Invariants: every curve has 0 <= n <= ZS_CURVE_MAX points (the loaders
 * accept 1..ZS_CURVE_MAX, x strictly increasing, y > 0).
 *
 * Cost: zs_curve_eval is allocation free and O(log n) (a binary search
 * inside GSL's linear interpolation over the cached log2 x); the time
 * functions are a few flops on top of it.
 */
#include "hw/hw.h"

#include <assert.h>
#include <gsl/gsl_interp.h>
#include <math.h>
#include <string.h>

void zs_curve_prepare(struct zs_curve *c)
{
    int n = c->n;
    /* the loaders accept 1..ZS_CURVE_MAX points (profile.c); a curve built
     * in code holds the same */
    assert(n >= 0 && n <= ZS_CURVE_MAX);
    for (int i = 0; i < n; i++)
        c->lx[i] = log2(c->x[i]);
    c->lx_n = c->n;
}

double zs_curve_eval(const struct zs_curve *c, double x)
{
    double lx[ZS_CURVE_MAX], y = 0;
    const double *px = c->lx;
    int n = c->n;

    if (n <= 0)
        return 0;
    assert(n <= ZS_CURVE_MAX);
    if (n == 1 || !(x > c->x[0]))
        return c->y[0]; /* clamped below; NaN and x <= 0 land here too */
    if (x >= c->x[n - 1])
        return c->y[n - 1];
    if (c->lx_n != c->n) {
        /* Not prepared (built by hand): only the bracketing points are
         * needed, but GSL wants the whole array; n is tiny. */
        for (int i = 0; i < n; i++)
            lx[i] = log2(c->x[i]);
        px = lx;
    }
    /* GSL's linear interpolation has no state: call the type's evaluator
     * directly, so nothing is allocated per call (NULL accel = binary
     * search, gsl_interp_bsearch). */
    if (gsl_interp_linear->eval(NULL, px, c->y, (size_t)n, log2(x), NULL, &y))
        return c->y[n - 1]; /* cannot happen inside the clamped range */
    return y;
}

int64_t zs_gpu_usable_bytes(const struct zs_gpu *g)
{
    int64_t u = g->hbm_bytes - g->cuda_context_bytes - g->nccl_bytes;
    return u > 0 ? u : 0;
}

/*
 * GEMM time by shape (M, N, K), for profiles that give their SM count.
 *
 * cuBLAS splits the output C = A x B [m x n] into CTA tiles of tm x tn, each
 * computed by one SM walking K, and runs them in waves of `sms` tiles
 * (NVIDIA, "Matrix Multiplication Background User's Guide", DU-09799-001_v001,
 * Feb 2023, 3.1 tile and 3.2 wave quantization; stas00/ml-engineering
 * training/performance/README.md "Tile and wave quantization", commit
 * 744d01e18b79512572f64a6bbd8b5f4a725203a7):
 *
 *   tiles   = ceil(m / tm) x ceil(n / tn)
 *   split   = when tiles < sms, K is split s = min(floor(sms / tiles),
 *             floor(k / SPLITK_MIN_K)) ways (split-K), partial sums in fp32
 *             written and read back once (tiles x s x tm x tn x 8 B)
 *   waves   = ceil(tiles x split / sms)
 *   compute = waves x 2 tm tn (k / split + TILE_K_OVERHEAD)
 *             / (peak / sms x MAIN_LOOP_EFF)          (+ the split-K reduce)
 *   memory  = 2 B x (mk + kn + mn) / (HBM bw x hbm_eff)   (each operand once)
 *   ceiling = 2mnk / (peak x MAMF)   MAMF = the gemm_eff curve's top point
 *   time    = max(FLOOR, OVERHEAD + max(compute, memory, ceiling),
 *                 2mnk / (peak x sustained))
 *
 * MAMF is a burst at the boost clock.  `sustained` (profile group
 * "sustained", hw.h gemm_sustained; absent: no such term) is the rate
 * GEMMs hold back to back at the board's power limit, over the whole
 * kernel: a GEMM whose burst time, tail and overhead included, already
 * averages under it (short K, one wave) keeps its burst time, as measured:
 * on an H200 (stas00/ml-engineering mamf-finder v4, benchmarks/README.md)
 * 2816x1536 held 749 TF at K=6144 and 722 at K=4096 (the clock at its
 * 1980 MHz ceiling, under the power limit), where the model gives 749 and
 * 729, and 741 at K=10240, 728-739 at K=20480, 722.5 for 3072x2816x8192,
 * where the burst model gives 767, 780 and 777 and the sustained term 745.
 * Inside a training step the term is that rate times sustained_node (hw.h
 * ZS_SUSTAINED_NODE, fitted on the published corpus).
 *
 * The tile is the fastest of 128x256, 256x128 and 128x128, the largest
 * cuBLAS tiles ("Typical Tile Dimensions In cuBLAS", same guide, 2.3)
 * [assumption: cuBLAS's heuristic picks the fastest of these; smaller tiles
 * and stream-K are not modelled, split-K stands for them].
 *
 * The constants come from OpenXLA's measured H100 (sm_90) table (the floor
 * is its smallest time, 256^3 at 4.99 us; the other four are fitted),
 * xla/service/gpu/model/default_matmul_perf_table.txtpb at openxla/xla
 * commit ad6eaee1b2f13931e3ceb26dc50bf3ac6b425496 (read in the ROCm/xla
 * fork, which carries the upstream commit): 375 bf16 GEMMs,
 * b in {1,2,4}, m, n, k in {256, ..., 4096}, kernel times from XLA's
 * profiler (5 runs after a warm-up).  Fitted by grid search on the even
 * entries, checked on the odd ones (docs/kernels.md "GEMM efficiency by
 * shape"): absolute time error median 10.7 %, p90 23.5 % on the held-out
 * half, where the FLOP curve alone is off by 34 % / 55 %; 2.0 % median on
 * the 15 entries of 1e11 FLOP or more.  The fitted main-loop efficiency is
 * a ratio to the profile's MAMF so other GPUs scale with their own
 * measured ceiling [assumption: the ratio carries over from H100].  The
 * model reproduces the MAMF search's best H100 shape, 2048x2048x13312 at
 * 794.5 TFLOPS (stas00/ml-engineering compute/accelerator/README.md at
 * 744d01e18b79512572f64a6bbd8b5f4a725203a7), at
 * 78.1 % of peak against the measured 80.3 %.
 */
#define GEMM_FLOOR_S 5e-6       /* smallest kernel time in the table: 256^3 */
#define GEMM_OVERHEAD_S 4e-6    /* fitted: per kernel (fill, tail, launch) */
#define GEMM_TILE_K_OVERHEAD 64 /* fitted: per tile, in K elements */
#define GEMM_SPLITK_MIN_K 1024  /* fitted: smallest K slice under split-K */
#define GEMM_MAIN_LOOP_X_MAMF 1.0959 /* fitted: 0.88 of peak / H100's 0.803 */

/* A profile's sustained fraction as a GEMM of a training step holds it
 * (hw.h sustained_node); 0: none. */
static double held_frac(const struct zs_gpu *g, double sustained)
{
    return sustained * (g->sustained_node > 0 ? g->sustained_node : 1);
}

/* The tensor-core rate a shape-model GEMM runs at: its peak, the measured
 * fraction of it the largest GEMMs reach in a burst (MAMF), the fraction
 * they hold at the power limit (sustained; 0: MAMF) and the bytes per
 * element of its two operands (the result is bf16, 2 B, in both cases). */
struct gemm_rate {
    double peak, mamf, sustained, in_bytes;
};

/* `batch` independent GEMMs of one shape in one kernel (cuBLAS strided
 * batched GEMM, what torch.matmul runs on [b, h, s, d] tensors): the tiles,
 * bytes and FLOPs of all of them share the waves and one kernel's
 * overhead. */
static double gemm_shape_rate(const struct zs_gpu *g, const struct gemm_rate *r,
                              double batch, double m, double n, double k,
                              struct zs_gemm_shape *out)
{
    static const int tiles_mn[3][2] = {{128, 256}, {256, 128}, {128, 128}};
    struct zs_gemm_shape best, c;
    double sms = (double)g->sms, peak = r->peak, flops;
    double mamf = r->mamf, per_sm, bw, ceiling, held;

    memset(&best, 0, sizeof best);
    if (out)
        *out = best;
    if (!(m >= 1 && n >= 1 && k >= 1 && batch >= 1) || !(sms > 0) ||
        !(peak > 0))
        return 0;
    flops = 2.0 * m * n * k * batch;
    per_sm = peak / sms * (mamf * GEMM_MAIN_LOOP_X_MAMF);
    bw = g->hbm_bytes_per_s * (g->hbm_eff > 0 ? g->hbm_eff : 1);
    ceiling = flops / (peak * mamf);
    held = r->sustained > 0 ? flops / (peak * r->sustained) : 0;
    best.time_s = -1;
    for (int i = 0; i < 3; i++) {
        double tm = tiles_mn[i][0], tn = tiles_mn[i][1], s = 1;
        memset(&c, 0, sizeof c);
        c.tile_m = tiles_mn[i][0];
        c.tile_n = tiles_mn[i][1];
        c.tiles = batch * ceil(m / tm) * ceil(n / tn);
        if (c.tiles < sms) {
            double by_sm = floor(sms / c.tiles);
            double by_k = floor(k / GEMM_SPLITK_MIN_K);
            s = by_sm < by_k ? by_sm : by_k;
            if (s < 1)
                s = 1;
        }
        c.split_k = (int)s;
        c.waves = ceil(c.tiles * s / sms);
        c.compute_s =
            c.waves * 2.0 * tm * tn * (k / s + GEMM_TILE_K_OVERHEAD) / per_sm;
        if (s > 1 && bw > 0)
            c.compute_s += c.tiles * s * tm * tn * 8.0 / bw;
        c.memory_s =
            bw > 0 ? batch * (r->in_bytes * (m * k + k * n) + 2.0 * m * n) / bw
                   : 0;
        c.time_s = c.compute_s;
        if (c.memory_s > c.time_s)
            c.time_s = c.memory_s;
        if (ceiling > c.time_s)
            c.time_s = ceiling;
        c.time_s += GEMM_OVERHEAD_S;
        if (c.time_s < GEMM_FLOOR_S)
            c.time_s = GEMM_FLOOR_S;
        if (held > c.time_s) /* the power limit's sustained rate */
            c.time_s = held;
        if (best.time_s < 0 || c.time_s < best.time_s)
            best = c;
    }
    if (out)
        *out = best;
    return best.time_s;
}

static double gemm_shape_batched(const struct zs_gpu *g, double batch, double m,
                                 double n, double k, struct zs_gemm_shape *out)
{
    struct gemm_rate r = {g->peak_bf16_flops,
                          g->gemm_eff.n > 0 ? g->gemm_eff.y[g->gemm_eff.n - 1]
                                            : 1,
                          held_frac(g, g->gemm_sustained), 2.0};
    return gemm_shape_rate(g, &r, batch, m, n, k, out);
}

double zs_gpu_gemm_shape(const struct zs_gpu *g, double m, double n, double k,
                         struct zs_gemm_shape *out)
{
    return gemm_shape_batched(g, 1, m, n, k, out);
}

/* torch._scaled_mm on fp8 operands: the same tiles, waves and overheads as
 * bf16 (cuBLASLt's fp8 kernels use CTA tiles of the same sizes [assumption])
 * with the main loop at the fp8 peak x the fp8 MAMF (both from the profile,
 * hw.h) and 1 B per operand element on the HBM roofline.  The fitted ratio
 * of the main loop's rate to MAMF (GEMM_MAIN_LOOP_X_MAMF) is carried over
 * from bf16 [assumption]. */
double zs_gpu_gemm_fp8_s(const struct zs_gpu *g, double m, double n, double k)
{
    struct gemm_rate r = {g->peak_fp8_flops, g->fp8_mamf,
                          held_frac(g, g->fp8_sustained), 1.0};
    double flops = 2.0 * m * n * k, mamf, eff;
    if (!(flops > 0) || !(r.peak > 0) || !(r.mamf > 0))
        return 0;
    if (g->sms > 0)
        return gemm_shape_rate(g, &r, 1, m, n, k, NULL);
    mamf = g->gemm_eff.n > 0 ? g->gemm_eff.y[g->gemm_eff.n - 1] : 1;
    eff = zs_curve_eval(&g->gemm_eff, flops) / (mamf > 0 ? mamf : 1) * r.mamf;
    if (!(eff > 0))
        eff = r.mamf;
    if (r.sustained > 0 && eff > r.sustained)
        eff = r.sustained; /* the power limit's sustained rate (hw.h) */
    return flops / (r.peak * eff);
}

double zs_gpu_gemm_batched_s(const struct zs_gpu *g, double batch, double m,
                             double n, double k)
{
    if (!(batch >= 1))
        return 0;
    if (g->sms > 0)
        return gemm_shape_batched(g, floor(batch), m, n, k, NULL);
    return floor(batch) * zs_gpu_gemm_s(g, m, n, k);
}

double zs_gpu_gemm_s(const struct zs_gpu *g, double m, double n, double k)
{
    double flops = 2.0 * m * n * k, eff;
    if (!(flops > 0) || !(g->peak_bf16_flops > 0))
        return 0;
    if (g->sms > 0)
        return zs_gpu_gemm_shape(g, m, n, k, NULL);
    eff = zs_curve_eval(&g->gemm_eff, flops);
    if (!(eff > 0))
        eff = 1;
    if (g->gemm_sustained > 0 && eff > held_frac(g, g->gemm_sustained))
        eff = held_frac(g, g->gemm_sustained); /* the power limit (hw.h) */
    return flops / (g->peak_bf16_flops * eff);
}

double zs_gpu_attn_eff(const struct zs_gpu *g, double seq)
{
    if (g->attn_eff_by_seq.n > 0)
        return zs_curve_eval(&g->attn_eff_by_seq, seq);
    return g->attn_eff;
}

/*
 * flash-attn 1.x's Triton kernel (flash_attn/flash_attn_triton.py, which
 * llm-foundry vendors as llmfoundry/models/layers/flash_attn_triton.py on
 * triton-pre-mlir and runs for attn_impl: triton).  No benchmark of that
 * kernel by sequence length was found; its own header (flash-attention
 * v1.0.9) says "Overall Triton forward + backward is slightly slower than
 * CUDA forward + backward" (flash-attn 1.x's CUDA kernel), and llm-foundry's
 * TUTORIAL.md at b2a43a1 says "In our experiance, `triton` is slightly faster
 * than `flash`" (flash-attn 1.x CUDA then).  So it is charged flash-attn
 * 1.x CUDA's measured rate: the "FlashAttention" bars of the FA2 release's
 * figures (flash-attention 4f285b35, assets/flash2_{a100,h100}_fwd_bwd_
 * benchmark.png, panel (d), causal, head dim 128, hidden 2048, batch 16k /
 * seqlen), profile curve attn_triton_eff_by_seq.  The figure's
 * "FlashAttention Triton" bars are a different kernel: OpenAI Triton's
 * triton.ops.flash_attention (the generating script at that commit,
 * benchmarks/benchmark_causal.py, times it as "Triton", commented out there
 * for the H100 run; benchmark_flash_attention.py of 60499ab the same).
 *
 * Without the curve (GPUs where flash-attn 1.x was not measured) the
 * profile's FA2 rate is scaled by flash-attn 1.x CUDA / FA2 on the A100
 * (panel (d): 55 / 62 / 69 / 76 / 80 / 83 against 99 / 133 / 155 / 173 /
 * 182 / 189 TFLOP/s at 512 .. 16k), linear in log2(seq), flat outside
 * 512..16k [assumption: carried to that GPU].
 */
double zs_attn_triton_ratio(double seq)
{
    static const double fa1[] = {55, 62, 69, 76, 80, 83};
    static const double fa2[] = {99, 133, 155, 173, 182, 189};
    double x = seq > 0 ? log2(seq) - 9 : 0; /* 512 -> 0, 16k -> 5 */
    int i;
    if (x <= 0)
        return fa1[0] / fa2[0];
    if (x >= 5)
        return fa1[5] / fa2[5];
    i = (int)x;
    return fa1[i] / fa2[i] +
           (x - i) * (fa1[i + 1] / fa2[i + 1] - fa1[i] / fa2[i]);
}

double zs_gpu_attn_triton_eff(const struct zs_gpu *g, double seq)
{
    if (g->attn_triton_eff_by_seq.n > 0)
        return zs_curve_eval(&g->attn_triton_eff_by_seq, seq);
    return zs_gpu_attn_eff(g, seq) * zs_attn_triton_ratio(seq);
}

/*
 * SDPA's flash backend (PyTorch's build of FlashAttention-2's kernels) against
 * the flash-attn 2 package on the same GPU: cudnn-frontend f937055,
 * benchmark/sdpa_benchmark_bf16_training/artifacts/
 * sdpa_benchmark_results_NVIDIA_B200.csv (PyTorch 2.8.0a0 nv25.05 against
 * flash-attn 2.7.3, bf16, causal, 128 query / 8 key-value heads, head dim
 * 128, batch 1): forward+backward time of flash_attention over
 * pyt_flash_attention, 0.989 / 1.001, 2.165 / 2.313, 6.303 / 6.837, 21.845
 * / 23.629, 82.523 / 88.589, 322.011 / 343.757, 1276.083 / 1358.071 ms at
 * 1k .. 64k (0.943 at 128k).  Linear in log2(seq), flat outside 1k..64k
 * (at 512 the package's call is the slower, 0.776 against 0.656 ms: host
 * overhead of a 0.15 ms kernel, not carried below 1k [assumption]).
 * Carried to every GPU [assumption]; on Hopper the same backend measured
 * on an H200 (cudnn-frontend b740542, de355c7: 258-264 / 287-290 / 311
 * TFLOP/s at 4k / 8k / 16k, causal hd128, 16 heads) sits 0.89 / 0.94 /
 * 0.95 of the flash-attn 2 figure on the H100 (hw profiles), the same
 * order.
 */
double zs_attn_sdpa_ratio(double seq)
{
    static const double fa2_ms[] = {0.989,  2.165,   6.303,   21.845,
                                    82.523, 322.011, 1276.083};
    static const double sdpa_ms[] = {1.001,  2.313,   6.837,   23.629,
                                     88.589, 343.757, 1358.071};
    double x = seq > 0 ? log2(seq) - 10 : 0; /* 1k -> 0, 64k -> 6 */
    int i;
    if (x <= 0)
        return fa2_ms[0] / sdpa_ms[0];
    if (x >= 6)
        return fa2_ms[6] / sdpa_ms[6];
    i = (int)x;
    return fa2_ms[i] / sdpa_ms[i] +
           (x - i) * (fa2_ms[i + 1] / sdpa_ms[i + 1] - fa2_ms[i] / sdpa_ms[i]);
}

double zs_gpu_attn_sdpa_eff(const struct zs_gpu *g, double seq)
{
    return zs_gpu_attn_eff(g, seq) * zs_attn_sdpa_ratio(seq);
}

double zs_gpu_membound_s(const struct zs_gpu *g, double bytes)
{
    double eff = g->membound_eff > 0 ? g->membound_eff
                 : g->hbm_eff > 0    ? g->hbm_eff
                                     : 1;
    double bw = g->hbm_bytes_per_s * eff;
    if (!(bytes > 0) || !(bw > 0))
        return 0;
    return bytes / bw;
}

/*
 * Bus bandwidth of a collective (nccl-tests' busbw):
 *
 *   intra = curve_kind(bytes)                         measured in one node
 *           x allreduce_rank_scale(ranks per node)    all-reduce only (NVLS
 *                                                     gains with more GPUs,
 *                                                     reference-data §C3)
 *   inter = min(nics, ranks per node) x nic_bytes_per_s x inter_node_eff
 *   busbw = intra                 (nodes == 1)
 *           min(intra, inter)     (nodes > 1)
 *
 * Why the node's NIC total and not one NIC: NCCL runs one ring (channel) per
 * NIC, each crossing the node boundary through its own NIC, so a ring
 * collective's busbw across nodes approaches the node's aggregate NIC
 * bandwidth: 4x p5en (8x H200, 400 GB/s EFA per node) all-reduce 364.87 GB/s
 * busbw; 4x P6-B200 (8x 50 GB/s) 381.80 GB/s (reference-data §C3, stas00
 * network/README.md).  With fewer GPUs than NICs per node only as many NICs
 * carry rings [assumption: one NIC per GPU, as on DGX].
 */
double zs_cluster_busbw(const struct zs_cluster *c, enum zs_coll kind,
                        double bytes, int ranks, int nodes)
{
    const struct zs_node *n = &c->node;
    const struct zs_curve *cv;
    double intra, inter;
    int per_node, nics;

    switch (kind) {
    case ZS_COLL_ALLGATHER:
        cv = &n->allgather_busbw;
        break;
    case ZS_COLL_REDUCESCATTER:
    case ZS_COLL_REDUCE:
        cv = &n->reducescatter_busbw;
        break;
    case ZS_COLL_ALLREDUCE:
        cv = &n->allreduce_busbw;
        break;
    case ZS_COLL_ALLTOALL:
    default:
        cv = &n->alltoall_busbw;
        break;
    }
    if (nodes < 1)
        nodes = 1;
    if (ranks < 1)
        ranks = 1;
    per_node = (ranks + nodes - 1) / nodes;
    intra = zs_curve_eval(cv, bytes);
    if (kind == ZS_COLL_ALLREDUCE && n->allreduce_rank_scale.n > 0)
        intra *= zs_curve_eval(&n->allreduce_rank_scale, (double)per_node);
    if (nodes == 1)
        return intra;
    nics = n->nics < per_node ? n->nics : per_node;
    inter = nics * n->nic_bytes_per_s * n->inter_node_eff;
    if (!(inter > 0))
        return intra;
    return inter < intra ? inter : intra;
}

double zs_coll_bus_bytes(enum zs_coll kind, double bytes, int ranks)
{
    if (ranks <= 1)
        return 0;
    if (kind == ZS_COLL_REDUCE)
        return bytes;
    return bytes * (double)(ranks - 1) / (double)ranks *
           (kind == ZS_COLL_ALLREDUCE ? 2 : 1);
}

double zs_cluster_collective_s(const struct zs_cluster *c, enum zs_coll kind,
                               double bytes, int ranks, int nodes)
{
    double bw, t;
    if (ranks <= 1 || !(bytes > 0))
        return 0;
    bw = zs_cluster_busbw(c, kind, bytes, ranks, nodes);
    if (!(bw > 0))
        return 0;
    t = zs_coll_bus_bytes(kind, bytes, ranks) / bw;
    return (double)c->node.collective_latency_ns / 1e9 + t;
}
