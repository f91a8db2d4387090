/*
 * hw.c — the profile registry, cluster SPECs ("2x8xH100"), and the figures
 * the engine asks for in its hot path (curves, GEMM and memory-bound kernel
 * times, collective bus bandwidth and time).
 *
 * Invariants: a resolved cluster has 1 <= gpus_per_node <= gpus_installed,
 * 1 <= nodes <= ZS_HW_NODES_MAX, every curve has n >= 1 with x strictly
 * increasing and y > 0 (the loader checks), and host RAM exceeds the OS
 * reserve.
 *
 * Cost: resolving reads two small JSON files.  zs_curve_eval is allocation
 * free and O(log n) (a binary search inside GSL's linear interpolation over
 * the cached log2 x); the time functions are a few flops on top of it.
 */
#include "hw/hw.h"
#include "util/strutil.h"
#include "util/units.h"

#include <assert.h>
#include <ctype.h>
#include <gsl/gsl_interp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- registry ---------------------------------------------------------- */

/* Default node per GPU (documented in docs/hw.md): the DGX/HGX system the
 * SXM parts are usually rented in, and a generic 8-GPU PCIe server for PCIe
 * cards.  "A100" means the 80GB SXM part (the DGX A100 640GB). */
static const struct zs_hw_gpu_entry g_gpus[] = {
    {"H100-SXM-80GB",
     "h100-sxm-80gb",
     "dgx-h100",
     {"H100", "H100-SXM", "H100-80GB", "H100-SXM5-80GB", NULL}},
    {"H100-PCIe-80GB",
     "h100-pcie-80gb",
     "pcie-h100",
     {"H100-PCIe", "H100-PCIE-80GB", NULL}},
    {"H200-SXM-141GB",
     "h200-sxm-141gb",
     "hgx-h200",
     {"H200", "H200-SXM", "H200-141GB", NULL}},
    {"A100-SXM-80GB",
     "a100-sxm-80gb",
     "dgx-a100",
     {"A100", "A100-80GB", "A100-SXM4-80GB", NULL}},
    {"A100-SXM-40GB",
     "a100-sxm-40gb",
     "dgx-a100-320gb",
     {"A100-40GB", "A100-SXM4-40GB", NULL}},
    {"L40S", "l40s", "pcie-l40s", {"L40S-48GB", NULL}},
    /* The 96 GB HBM2e, 500 W H100 of Meta's Grand Teton hosts, where
     * torchtitan's H100 benchmark ran (validation/published). */
    {"H100-SXM-96GB",
     "h100-sxm-96gb",
     "grand-teton-h100",
     {"H100-96GB", "H100-HBM2e-96GB", NULL}},
    /* The single-GPU cards of torchtune's README table. */
    {"RTX-4090", "rtx-4090", "pcie-rtx4090", {"RTX4090", NULL}},
    {"RTX-A6000", "rtx-a6000", "pcie-rtxa6000", {"A6000", "RTXA6000", NULL}},
};
#define NGPUS ((int)(sizeof g_gpus / sizeof g_gpus[0]))

static const struct zs_hw_node_entry g_nodes[] = {
    {"DGX H100", "dgx-h100"},
    {"HGX H200", "hgx-h200"},
    {"DGX A100 640GB", "dgx-a100"},
    {"DGX A100 320GB", "dgx-a100-320gb"},
    {"PCIe server, 8x H100 PCIe", "pcie-h100"},
    {"PCIe server, 8x L40S", "pcie-l40s"},
    {"Grand Teton H100", "grand-teton-h100"},
    {"PCIe server, 8x RTX 4090", "pcie-rtx4090"},
    {"PCIe server, 8x RTX A6000", "pcie-rtxa6000"},
};
#define NNODES ((int)(sizeof g_nodes / sizeof g_nodes[0]))

static const char *const g_gpu_names[NGPUS] = {
    "H100-SXM-80GB", "H100-PCIe-80GB", "H200-SXM-141GB", "A100-SXM-80GB",
    "A100-SXM-40GB", "L40S",           "H100-SXM-96GB"};
static const char *const g_node_names[NNODES] = {"DGX H100",
                                                 "HGX H200",
                                                 "DGX A100 640GB",
                                                 "DGX A100 320GB",
                                                 "PCIe server, 8x H100 PCIe",
                                                 "PCIe server, 8x L40S",
                                                 "Grand Teton H100",
                                                 "PCIe server, 8x RTX 4090",
                                                 "PCIe server, 8x RTX A6000"};

int zs_hw_gpu_entries(const struct zs_hw_gpu_entry **out)
{
    *out = g_gpus;
    return NGPUS;
}

int zs_hw_node_entries(const struct zs_hw_node_entry **out)
{
    *out = g_nodes;
    return NNODES;
}

int zs_hw_list(const char *const **gpus, int *ngpus, const char *const **nodes,
               int *nnodes)
{
    *gpus = g_gpu_names;
    *ngpus = NGPUS;
    *nodes = g_node_names;
    *nnodes = NNODES;
    return 0;
}

const struct zs_hw_gpu_entry *zs_hw_find_gpu(const char *name)
{
    for (int i = 0; i < NGPUS; i++) {
        if (zs_strcaseeq(name, g_gpus[i].name))
            return &g_gpus[i];
        for (int k = 0; g_gpus[i].aliases[k]; k++)
            if (zs_strcaseeq(name, g_gpus[i].aliases[k]))
                return &g_gpus[i];
    }
    return NULL;
}

const char *zs_hw_dir(void)
{
    const char *d = getenv("ZSIM_HWPROFILES");
    return d && *d ? d : ZS_SOURCE_DIR "/hwprofiles";
}

int zs_hw_load_node_named(const char *file, struct zs_node *out,
                          struct zs_err *err)
{
    char path[600];
    snprintf(path, sizeof path, "%s/nodes/%s.json", zs_hw_dir(), file);
    return zs_hw_load_node(path, out, err);
}

/* ---- flags ------------------------------------------------------------- */

int zs_hw_parse_host_ram(const char *text, int64_t *bytes, struct zs_err *err)
{
    int64_t b = 0;
    int rc = zs_parse_bytes(text, &b);
    if (rc == -1)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid --host-ram '%s': not a size (use e.g. "
                          "512GiB, 2TB, 1.5TiB)",
                          text);
    if (rc != 0 || b < ZS_GiB)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid --host-ram '%s': must be in [1 GiB, "
                          "1 PiB]",
                          text);
    *bytes = b;
    return 0;
}

int zs_hw_parse_nodes(const char *text, int *nodes, struct zs_err *err)
{
    long v = 0;
    const char *p = text;
    int digits = 0;
    while (isdigit((unsigned char)*p)) {
        if (v <= ZS_HW_NODES_MAX)
            v = v * 10 + (*p - '0');
        p++;
        digits++;
    }
    if (!digits || *p || v < 1 || v > ZS_HW_NODES_MAX)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid --nodes '%s': must be an integer in [1, "
                          "%d]",
                          text, ZS_HW_NODES_MAX);
    *nodes = (int)v;
    return 0;
}

/* ---- SPECs ------------------------------------------------------------- */

#define SPEC_EXAMPLE "(e.g. 8xH100, 2x8xH100, 4xA100-80GB)"

/* Reads a decimal count; values past 10^9 saturate (they are out of range
 * anyway and must not overflow). */
static const char *read_count(const char *p, long *v)
{
    *v = 0;
    while (isdigit((unsigned char)*p)) {
        if (*v < 1000000000L)
            *v = *v * 10 + (*p - '0');
        p++;
    }
    return p;
}

/* Whether hay contains needle, ignoring case. */
static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    if (!n)
        return 0;
    for (; *hay; hay++) {
        size_t k = 0;
        while (k < n && hay[k] &&
               tolower((unsigned char)hay[k]) ==
                   tolower((unsigned char)needle[k]))
            k++;
        if (k == n)
            return 1;
    }
    return 0;
}

/* Lists the 3 GPUs closest to name, each by its closest-matching name or
 * alias (a name containing what was typed counts as distance 0; ties go to
 * the shorter label). */
static int unknown_gpu(const char *name, const char *spec, struct zs_err *err)
{
    int dist[NGPUS], used[NGPUS] = {0};
    const char *label[NGPUS];
    char near[200] = "";
    size_t len = 0;

    for (int i = 0; i < NGPUS; i++) {
        dist[i] = 1 << 30;
        label[i] = g_gpus[i].name;
        for (int k = -1; k < 0 || g_gpus[i].aliases[k]; k++) {
            const char *cand = k < 0 ? g_gpus[i].name : g_gpus[i].aliases[k];
            int d = contains_ci(cand, name) ? 0 : zs_str_distance(name, cand);
            if (d < dist[i] ||
                (d == dist[i] && strlen(cand) < strlen(label[i]))) {
                dist[i] = d;
                label[i] = cand;
            }
        }
    }
    for (int r = 0; r < 3 && r < NGPUS; r++) {
        int best = -1;
        for (int i = 0; i < NGPUS; i++)
            if (!used[i] && (best < 0 || dist[i] < dist[best]))
                best = i;
        used[best] = 1;
        len += (size_t)snprintf(near + len, sizeof near - len,
                                r ? ", %s" : "%s", label[best]);
    }
    return zs_err_set(err, ZS_EUSAGE,
                      "unknown GPU '%s' in '%s': closest are %s (see 'zsim hw "
                      "list')",
                      name, spec, near);
}

int zs_hw_resolve(const char *spec, int64_t host_ram_bytes, int nodes,
                  struct zs_cluster *out, struct zs_err *err)
{
    struct zs_cluster c;
    const struct zs_hw_gpu_entry *ge = NULL;
    long a = 0, b = -1, nnodes = 1, ngpus;
    const char *p, *name, *a_txt = NULL, *b_txt = NULL;
    int a_len = 0, b_len = 0;
    int rc;

    memset(&c, 0, sizeof c);
    if (strlen(spec) >= sizeof c.spec)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid cluster spec '%.40s...': longer than %zu "
                          "characters",
                          spec, sizeof c.spec - 1);
    zs_strlcpy(c.spec, spec, sizeof c.spec);

    if (zs_str_endswith(spec, ".json")) {
        /* A node profile file: all its GPUs, one node unless --nodes. */
        rc = zs_hw_load_node(spec, &c.node, err);
        if (rc)
            return rc;
        ngpus = c.node.gpus_installed;
    } else {
        /* [NODES x] GPUS x NAME */
        p = spec;
        if (!isdigit((unsigned char)*p))
            return zs_err_set(err, ZS_EUSAGE,
                              "invalid cluster spec '%s': must start with a "
                              "GPU count " SPEC_EXAMPLE,
                              spec);
        a_txt = p;
        p = read_count(p, &a);
        a_len = (int)(p - a_txt);
        if (*p != 'x' && *p != 'X')
            return zs_err_set(err, ZS_EUSAGE,
                              "invalid cluster spec '%s': expected 'x' after "
                              "the count " SPEC_EXAMPLE,
                              spec);
        p++;
        if (isdigit((unsigned char)*p)) {
            b_txt = p;
            p = read_count(p, &b);
            b_len = (int)(p - b_txt);
            if (*p != 'x' && *p != 'X')
                return zs_err_set(err, ZS_EUSAGE,
                                  "invalid cluster spec '%s': expected 'x' "
                                  "after the count " SPEC_EXAMPLE,
                                  spec);
            p++;
        }
        name = p;
        if (!*name)
            return zs_err_set(err, ZS_EUSAGE,
                              "invalid cluster spec '%s': missing the GPU "
                              "name " SPEC_EXAMPLE,
                              spec);
        if (b >= 0) {
            nnodes = a;
            ngpus = b;
        } else {
            ngpus = a;
            b_txt = a_txt;
            b_len = a_len;
        }
        /* Counts are quoted as typed: saturated values must not show. */
        if (nnodes < 1 || nnodes > ZS_HW_NODES_MAX)
            return zs_err_set(err, ZS_EUSAGE,
                              "invalid node count %.*s in '%s': must be in "
                              "[1, %d]",
                              a_len, a_txt, spec, ZS_HW_NODES_MAX);
        ge = zs_hw_find_gpu(name);
        if (!ge)
            return unknown_gpu(name, spec, err);
        rc = zs_hw_load_node_named(ge->node_file, &c.node, err);
        if (rc)
            return rc;
        /* The node's file names its own GPU; a SPEC naming another part
         * of the same node type (none today) would need its own file. */
        if (!zs_strcaseeq(c.node.gpu.name, ge->name))
            return zs_err_set(err, ZS_EINPUT,
                              "invalid 'gpu' in %s: the default node for %s "
                              "must hold %s (got %s)",
                              c.node.file, ge->name, ge->name, c.node.gpu.name);
        if (ngpus < 1 || ngpus > c.node.gpus_installed)
            return zs_err_set(err, ZS_EUSAGE,
                              "invalid GPU count %.*s in '%s': must be in [1, "
                              "%d], the GPUs of one %s node (for more, give "
                              "nodes: 2x%dx%s)",
                              b_len, b_txt, spec, c.node.gpus_installed,
                              c.node.name, c.node.gpus_installed, name);
    }
    c.nodes = (int)nnodes;
    c.node.gpus_per_node = (int)ngpus;

    if (nodes > 0) {
        if (nodes > ZS_HW_NODES_MAX)
            return zs_err_set(err, ZS_EUSAGE,
                              "invalid node count %d: must be in [1, %d]",
                              nodes, ZS_HW_NODES_MAX);
        c.nodes = nodes;
    }
    if (c.nodes > 1 && (c.node.nics < 1 || c.node.nic_bytes_per_s <= 0))
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid node count %d for '%s': %s has no compute "
                          "network",
                          c.nodes, spec, c.node.name);
    if (host_ram_bytes > 0) {
        if (host_ram_bytes <= c.node.host_reserved_bytes) {
            char got[24], res[24];
            zs_fmt_bytes(got, sizeof got, host_ram_bytes);
            zs_fmt_bytes(res, sizeof res, c.node.host_reserved_bytes);
            return zs_err_set(err, ZS_EUSAGE,
                              "invalid host RAM %s for %s: must be more than "
                              "the %s reserved for the OS",
                              got, c.node.name, res);
        }
        c.node.host_ram_bytes = host_ram_bytes;
    }
    *out = c;
    return 0;
}

/* ---- curves and times -------------------------------------------------- */

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
 *   time    = max(FLOOR, OVERHEAD + max(compute, memory, ceiling))
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

/* `batch` independent GEMMs of one shape in one kernel (cuBLAS strided
 * batched GEMM, what torch.matmul runs on [b, h, s, d] tensors): the tiles,
 * bytes and FLOPs of all of them share the waves and one kernel's
 * overhead. */
static double gemm_shape_batched(const struct zs_gpu *g, double batch, double m,
                                 double n, double k, struct zs_gemm_shape *out)
{
    static const int tiles_mn[3][2] = {{128, 256}, {256, 128}, {128, 128}};
    struct zs_gemm_shape best, c;
    double sms = (double)g->sms, peak = g->peak_bf16_flops, flops;
    double mamf, per_sm, bw, ceiling;

    memset(&best, 0, sizeof best);
    if (out)
        *out = best;
    if (!(m >= 1 && n >= 1 && k >= 1 && batch >= 1) || !(sms > 0) ||
        !(peak > 0))
        return 0;
    flops = 2.0 * m * n * k * batch;
    mamf = g->gemm_eff.n > 0 ? g->gemm_eff.y[g->gemm_eff.n - 1] : 1;
    per_sm = peak / sms * (mamf * GEMM_MAIN_LOOP_X_MAMF);
    bw = g->hbm_bytes_per_s * (g->hbm_eff > 0 ? g->hbm_eff : 1);
    ceiling = flops / (peak * mamf);
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
        c.memory_s = bw > 0 ? batch * 2.0 * (m * k + k * n + m * n) / bw : 0;
        c.time_s = c.compute_s;
        if (c.memory_s > c.time_s)
            c.time_s = c.memory_s;
        if (ceiling > c.time_s)
            c.time_s = ceiling;
        c.time_s += GEMM_OVERHEAD_S;
        if (c.time_s < GEMM_FLOOR_S)
            c.time_s = GEMM_FLOOR_S;
        if (best.time_s < 0 || c.time_s < best.time_s)
            best = c;
    }
    if (out)
        *out = best;
    return best.time_s;
}

double zs_gpu_gemm_shape(const struct zs_gpu *g, double m, double n, double k,
                         struct zs_gemm_shape *out)
{
    return gemm_shape_batched(g, 1, m, n, k, out);
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
    return flops / (g->peak_bf16_flops * eff);
}

double zs_gpu_attn_eff(const struct zs_gpu *g, double seq)
{
    if (g->attn_eff_by_seq.n > 0)
        return zs_curve_eval(&g->attn_eff_by_seq, seq);
    return g->attn_eff;
}

double zs_gpu_membound_s(const struct zs_gpu *g, double bytes)
{
    double bw = g->hbm_bytes_per_s * (g->hbm_eff > 0 ? g->hbm_eff : 1);
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

double zs_cluster_collective_s(const struct zs_cluster *c, enum zs_coll kind,
                               double bytes, int ranks, int nodes)
{
    double bw, t;
    if (ranks <= 1 || !(bytes > 0))
        return 0;
    bw = zs_cluster_busbw(c, kind, bytes, ranks, nodes);
    if (!(bw > 0))
        return 0;
    t = bytes * (double)(ranks - 1) / (double)ranks / bw;
    if (kind == ZS_COLL_ALLREDUCE)
        t *= 2;
    return (double)c->node.collective_latency_ns / 1e9 + t;
}
