/*
 * check_hw.c — hardware profiles: the shipped profiles load, SPECs resolve,
 * curves interpolate in log2(x), kernel and collective times follow their
 * formulas (expectations computed by hand below), every bad SPEC, flag and
 * profile file gives its exact message, and the loaders survive an
 * allocation-failure loop.
 */
#include "hw/hw.h"
#include "sched/kernels.h"
#include "util/alloc.h"
#include "util/units.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEAR(a, b, rel) (fabs((a) - (b)) <= (rel)*fabs(b))

/* A resolved cluster is ~11 KiB: keep them off the test stack. */
static struct zs_cluster *resolve_ok(const char *spec, int64_t ram, int nodes)
{
    static struct zs_cluster c;
    struct zs_err err = {0, ""};
    int rc = zs_hw_resolve(spec, ram, nodes, &c, &err);
    ck_assert_msg(rc == 0, "%s: %s", spec, err.msg);
    return &c;
}

START_TEST(test_shipped_profiles_load)
{
    const struct zs_hw_gpu_entry *ge;
    const struct zs_hw_node_entry *ne;
    const char *const *gn, *const *nn;
    int ng = zs_hw_gpu_entries(&ge), nnodes = zs_hw_node_entries(&ne), a, b;
    static struct zs_node n;

    ck_assert_int_eq(zs_hw_list(&gn, &a, &nn, &b), 0);
    ck_assert_int_eq(a, 11);
    ck_assert_int_eq(b, 11);
    ck_assert_int_eq(ng, 11);
    ck_assert_int_eq(nnodes, 11);
    /* zs_hw_list names every registry entry, in order */
    for (int i = 0; i < ng; i++)
        ck_assert_str_eq(gn[i], ge[i].name);
    for (int i = 0; i < nnodes; i++)
        ck_assert_str_eq(nn[i], ne[i].name);
    for (int i = 0; i < nnodes; i++) {
        struct zs_err err = {0, ""};
        int rc = zs_hw_load_node_named(ne[i].file, &n, &err);
        ck_assert_msg(rc == 0, "%s: %s", ne[i].file, err.msg);
        ck_assert_str_eq(n.name, ne[i].name);
        /* 8-GPU servers, but the 2x RTX 3090 workstation and the 4x A10G
         * g5.12xlarge of the published runs */
        ck_assert_int_eq(n.gpus_installed,
                         !strcmp(ne[i].file, "ws-rtx3090")        ? 2
                         : !strcmp(ne[i].file, "aws-g5-12xlarge") ? 4
                                                                  : 8);
        /* Every group carries a source. */
        ck_assert_int_ge(n.sources.n, 10);
        /* six groups, attn_eff_by_seq where measured (A100, H100 and the
         * H100-based parts, RTX 4090; RTX A6000 from an A5000),
         * attn_triton_eff_by_seq only with it (A100, H100 measured; H200 as
         * H100; not the RTX cards), overlap where given (A100, H100
         * measured; H200 as H100), fp8 where given (H100 SXM, H200) and
         * sustained where measured (A100 SXM, H100 SXM, H200), never above
         * the burst MAMF */
        ck_assert(n.gpu.attn_triton_eff_by_seq.n == 0 ||
                  n.gpu.attn_eff_by_seq.n > 0);
        ck_assert_int_eq(n.gpu.sources.n,
                         6 + (n.gpu.attn_eff_by_seq.n > 0) +
                             (n.gpu.attn_triton_eff_by_seq.n > 0) +
                             (n.gpu.overlap_compute_factor < 1) +
                             (n.gpu.peak_fp8_flops > 0) +
                             (n.gpu.gemm_sustained > 0));
        ck_assert(n.gpu.gemm_sustained <=
                  n.gpu.gemm_eff.y[n.gpu.gemm_eff.n - 1]);
        ck_assert(n.gpu.fp8_sustained <= n.gpu.fp8_mamf);
        ck_assert(n.gpu.sustained_node == ZS_SUSTAINED_NODE);
        ck_assert(n.gpu.peak_fp8_flops == 0 ||
                  (n.gpu.peak_fp8_flops == 1979e12 && n.gpu.fp8_mamf > 0.7 &&
                   n.gpu.fp8_mamf < 0.8));
        /* arXiv 2507.03114: 18.9 % slower on A100 and H100 -> 1/1.189 */
        if (!strncmp(n.gpu.name, "A100", 4) || !strncmp(n.gpu.name, "H100", 4) ||
            !strncmp(n.gpu.name, "H200", 4))
            ck_assert_double_eq(n.gpu.overlap_compute_factor, 0.841);
        else /* not measured: no interference modelled */
            ck_assert_double_eq(n.gpu.overlap_compute_factor, 1.0);
        ck_assert_int_eq(n.gpu.sms > 0, 1);
        for (int k = 0; k < n.gpu.sources.n; k++)
            ck_assert_int_gt((int)strlen(n.gpu.sources.item[k].text), 10);
        for (int k = 0; k < n.sources.n; k++)
            ck_assert_int_gt((int)strlen(n.sources.item[k].text), 10);
    }
    /* "storage" (optional): DGX H100 8 drives x 2.5 / 1.25 GB/s = 20 / 10
     * GB/s per node; the PCIe H100 server has none in its profile. */
    struct zs_err err0 = {0, ""};
    ck_assert_int_eq(zs_hw_load_node_named("dgx-h100", &n, &err0), 0);
    ck_assert_int_eq(n.nvme_drives, 8);
    ck_assert_double_eq_tol(n.nvme_read_bytes_per_s, 20e9, 1);
    ck_assert_double_eq_tol(n.nvme_write_bytes_per_s, 10e9, 1);
    ck_assert_int_eq(zs_hw_load_node_named("pcie-h100", &n, &err0), 0);
    ck_assert_int_eq(n.nvme_drives, 0);
    ck_assert_double_eq(n.nvme_read_bytes_per_s, 0);
    /* Each GPU's default node holds that GPU. */
    for (int i = 0; i < ng; i++) {
        char spec[64];
        snprintf(spec, sizeof spec, "1x%s", ge[i].name);
        ck_assert_str_eq(resolve_ok(spec, 0, 0)->node.gpu.name, ge[i].name);
    }
}
END_TEST

START_TEST(test_resolve)
{
    struct zs_cluster *c = resolve_ok("8xH100", 0, 0);
    ck_assert_str_eq(c->spec, "8xH100");
    ck_assert_str_eq(c->node.name, "DGX H100");
    ck_assert_str_eq(c->node.gpu.name, "H100-SXM-80GB");
    ck_assert_int_eq(c->nodes, 1);
    ck_assert_int_eq(c->node.gpus_per_node, 8);
    ck_assert_int_eq(c->node.gpu.hbm_bytes, 81039 * ZS_MiB); /* 79.14 GiB */
    /* 81039 - 332 (context) - 700 (NCCL) MiB */
    ck_assert_int_eq(zs_gpu_usable_bytes(&c->node.gpu), 80007 * ZS_MiB);
    ck_assert_int_eq(c->node.host_ram_bytes, 2 * ZS_TiB);
    ck_assert_int_eq(c->node.cpu_cores, 112);
    ck_assert_int_eq(c->node.nics, 8);
    ck_assert(c->node.gpu.nvlink_bytes_per_s == 450e9);
    ck_assert(c->node.gpu.pcie_h2d_bytes_per_s == 57e9);

    c = resolve_ok("2x8xH100", 0, 0);
    ck_assert_int_eq(c->nodes, 2);
    ck_assert_int_eq(c->node.gpus_per_node, 8);
    c = resolve_ok("2x8xH100", 0, 3); /* --nodes wins */
    ck_assert_int_eq(c->nodes, 3);

    c = resolve_ok("4xA100-80GB", 0, 0);
    ck_assert_str_eq(c->node.gpu.name, "A100-SXM-80GB");
    ck_assert_str_eq(c->node.name, "DGX A100 640GB");
    ck_assert_int_eq(c->node.gpus_per_node, 4);
    ck_assert_int_eq(c->node.gpus_installed, 8);
    ck_assert_int_eq(c->node.cpu_cores, 128); /* the node's, not half */

    c = resolve_ok("8xh200", 0, 0); /* case-insensitive alias */
    ck_assert_str_eq(c->node.gpu.name, "H200-SXM-141GB");
    c = resolve_ok("8XL40S", 0, 0);
    ck_assert_str_eq(c->node.name, "PCIe server, 8x L40S");
    ck_assert(c->node.gpu.nvlink_bytes_per_s == 0);
    /* MAMF: 269.15 TF bf16 torch.mm measured on an L40S (zzc0721/torch-
     * performance-test-data database.md @0785868) / 362.05 TF = 0.7434 */
    ck_assert(NEAR(269.15 / 362.05, 0.7434, 5e-5));
    ck_assert(c->node.gpu.gemm_eff.y[c->node.gpu.gemm_eff.n - 1] == 0.7434);
    /* H100 PCIe: 495.93 TF bf16 torch.mm on one card (torch-performance-
     * test-data issue #95) / 756 TF = 0.6560 */
    c = resolve_ok("8xH100-PCIe", 0, 0);
    ck_assert(NEAR(495.93 / 756, 0.6560, 5e-5));
    ck_assert(c->node.gpu.gemm_eff.y[c->node.gpu.gemm_eff.n - 1] == 0.656);

    c = resolve_ok("8xH100", 512 * ZS_GiB, 0);
    ck_assert_int_eq(c->node.host_ram_bytes, 512 * ZS_GiB);

    /* A node file as SPEC: its GPU named by a path beside it. */
    c = resolve_ok("tests/data/good/hw-node.json", 0, 2);
    ck_assert_str_eq(c->node.gpu.name, "TEST-GPU");
    ck_assert_int_eq(c->node.gpus_per_node, 4);
    ck_assert_int_eq(c->nodes, 2);
    ck_assert_int_eq(c->node.host_reserved_bytes, 16 * ZS_GiB);
    ck_assert_int_eq(zs_gpu_usable_bytes(&c->node.gpu), 15 * ZS_GiB);
}
END_TEST

START_TEST(test_curve_eval)
{
    /* y is linear in log2 x: x = 1, 4, 16 are log2 0, 2, 4. */
    struct zs_curve c = {3, {1, 4, 16}, {0, 2, 4}, 0, {0}};
    struct zs_curve one = {1, {8}, {5}, 0, {0}};
    struct zs_curve none = {0, {0}, {0}, 0, {0}};
    for (int pass = 0; pass < 2; pass++) {
        ck_assert(NEAR(zs_curve_eval(&c, 2), 1.0, 1e-12)); /* log2 1 */
        ck_assert(NEAR(zs_curve_eval(&c, 8), 3.0, 1e-12)); /* log2 3 */
        ck_assert(NEAR(zs_curve_eval(&c, 4), 2.0, 1e-12)); /* a point */
        ck_assert(NEAR(zs_curve_eval(&c, 5.656854249), 2.5, 1e-9)); /* 2^2.5 */
        ck_assert(zs_curve_eval(&c, 0.5) == 0); /* clamped below */
        ck_assert(zs_curve_eval(&c, 0) == 0);
        ck_assert(zs_curve_eval(&c, -3) == 0);
        ck_assert(zs_curve_eval(&c, 100) == 4); /* clamped above */
        ck_assert(zs_curve_eval(&c, NAN) == 0);
        zs_curve_prepare(&c); /* second pass: cached log2 */
        ck_assert_int_eq(c.lx_n, 3);
    }
    ck_assert(zs_curve_eval(&one, 1) == 5);
    ck_assert(zs_curve_eval(&one, 1e9) == 5);
    ck_assert(zs_curve_eval(&none, 1) == 0);
}
END_TEST

START_TEST(test_kernel_times)
{
    const struct zs_gpu *g = &resolve_ok("8xH100", 0, 0)->node.gpu;
    struct zs_gemm_shape sh;
    /* 1 GB through a memory-bound kernel: 1e9 / (3.35e12 x membound_eff
     * 0.39, hw.h ZS_MEMBOUND_EFF) = 7.654037e-4 s; hbm_eff stays 0.85. */
    ck_assert(NEAR(zs_gpu_membound_s(g, 1e9), 7.654037e-4, 1e-6));
    ck_assert(g->hbm_eff == 0.85 && g->membound_eff == ZS_MEMBOUND_EFF);
    ck_assert(zs_gpu_gemm_s(g, 0, 10, 10) == 0);
    ck_assert(zs_gpu_membound_s(g, 0) == 0);

    /* The Grand Teton H100 (torchtitan's benchmark): 96 GB HBM2e at 2.4 TB/s:
     * 1e9 / (2.4e12 * 0.39) = 1.068376e-3 s; torch total 98304 - 881 =
     * 97423 MiB; 8 NICs of 400 Gb/s = 50e9 B/s. */
    const struct zs_cluster *gt = resolve_ok("2x8xH100-96GB", 0, 0);
    ck_assert(NEAR(zs_gpu_membound_s(&gt->node.gpu, 1e9), 1.068376e-3, 1e-6));
    ck_assert_int_eq(gt->node.gpu.hbm_bytes, 97423LL * 1048576);
    ck_assert_str_eq(gt->node.name, "Grand Teton H100");
    ck_assert_int_eq(gt->node.nics, 8);
    ck_assert(gt->node.nic_bytes_per_s == 50e9);
    /* RTX 4090 (torchtune's README): 1e9 / (1008e9 * 0.39) = 2.543752e-3 s;
     * torch total 23.65 GiB = 24217 MiB; one GPU of its 8-GPU server. */
    const struct zs_cluster *r = resolve_ok("1xRTX4090", 0, 0);
    ck_assert(NEAR(zs_gpu_membound_s(&r->node.gpu, 1e9), 2.543752e-3, 1e-6));
    ck_assert_int_eq(r->node.gpu.hbm_bytes, 24217LL * 1048576);
    ck_assert_int_eq(r->node.gpus_per_node, 1);

    /* The test GPU has no "sms": the curve by FLOPs, 1e9 -> 0.1, 1e12 ->
     * 0.8; peak 100 TFLOP/s.  2*1000^3 = 2e9 FLOP: eff = 0.1 + 0.7 *
     * log2(2)/log2(1000) = 0.1 + 0.7 * 0.1003433 = 0.1702403; t = 2e9 /
     * (1e14 * 0.1702403) = 1.174810e-4 s. */
    g = &resolve_ok("tests/data/good/hw-node.json", 0, 0)->node.gpu;
    ck_assert(g->sms == 0);
    ck_assert(NEAR(zs_gpu_gemm_s(g, 1000, 1000, 1000), 1.174810e-4, 1e-5));
    ck_assert(zs_gpu_gemm_shape(g, 1000, 1000, 1000, &sh) == 0);
    /* batched without the shape model: batch x one GEMM */
    ck_assert(NEAR(zs_gpu_gemm_batched_s(g, 3, 1000, 1000, 1000),
                   3 * 1.174810e-4, 1e-5));
}
END_TEST

/* The GA102 cards of the published runs (validation/published), by hand.
 * GeForce-rate tensor math with FP32 accumulate: 4 tensor cores x 64 dense
 * FMA/clk x 2 = 512 FLOP/clk per SM (NVIDIA GA102 whitepaper: RTX 3090
 * 71/142 TF dense/sparse).  RTX 3090: the measured median bf16
 * torch.mm rate of three rows (76.34, 76.68, 76.58 TF; zzc0721/torch-
 * performance-test-data database.md @9d82827) = 82 SMs x 512 x 1.824 GHz,
 * above the 71.16 TF of the 1695 MHz rated boost, MAMF 1.0 on it; A10G:
 * 80 SMs x 512 x 1.71 GHz = 70.0416e12. */
START_TEST(test_ga102_profiles)
{
    const struct zs_cluster *c = resolve_ok("2xRTX-3090", 0, 0);
    const struct zs_gpu *g = &c->node.gpu;
    ck_assert_int_eq(g->sms, 82);
    ck_assert(NEAR(g->peak_bf16_flops, 76.58e12, 1e-9));
    ck_assert(g->peak_bf16_flops > 82.0 * 512 * 1.695e9);
    ck_assert(g->gemm_eff.y[g->gemm_eff.n - 1] == 1.0);
    /* torch total 23.70 GiB = 24269 MiB (rounded up from 24268.8) */
    ck_assert_int_eq(g->hbm_bytes, 24269LL * 1048576);
    /* 19.5 Gb/s x 384 bit / 8 = 936 GB/s; 1e9 / (936e9 * 0.39) s, the
     * fitted membound_eff (hw.h ZS_MEMBOUND_EFF) */
    ck_assert(NEAR(zs_gpu_membound_s(g, 1e9), 2.7394258e-3, 1e-6));
    ck_assert(g->nvlink_bytes_per_s == 0);
    ck_assert_str_eq(c->node.name, "Workstation, 2x RTX 3090");
    ck_assert_int_eq(c->node.gpus_installed, 2);
    ck_assert_int_eq(c->node.host_ram_bytes, 128 * ZS_GiB);
    /* one GPU per Gen3 x8 link: 12 GB/s (Gen3 x16, BaM #54) / 2 */
    ck_assert_int_eq(c->node.gpus_per_pcie_switch, 1);
    ck_assert(c->node.pcie_switch_uplink_bytes_per_s == 6e9);
    ck_assert_int_eq(c->node.nics, 0);

    c = resolve_ok("4xA10G", 0, 0);
    g = &c->node.gpu;
    ck_assert_int_eq(g->sms, 80);
    ck_assert(NEAR(g->peak_bf16_flops, 80.0 * 512 * 1.71e9, 1e-9));
    /* MAMF: 69.47 TF bf16 torch.mm measured on an A10G (torch-performance-
     * test-data issue #126) / 70.0416 TF = 0.9918 */
    ck_assert(NEAR(69.47e12 / (80.0 * 512 * 1.71e9), 0.9918, 5e-5));
    ck_assert(g->gemm_eff.y[g->gemm_eff.n - 1] == 0.9918);
    ck_assert_int_eq(g->hbm_bytes, 22733LL * 1048576); /* 22.20 GiB */
    ck_assert(NEAR(zs_gpu_membound_s(g, 1e9), 1e9 / (600e9 * 0.39), 1e-9));
    ck_assert_str_eq(c->node.name, "AWS g5.12xlarge");
    ck_assert_int_eq(c->node.gpus_installed, 4);
    ck_assert_int_eq(c->node.host_ram_bytes, 192 * ZS_GiB);
    ck_assert_int_eq(c->node.cpu_cores, 24); /* 48 vCPUs */
    ck_assert_int_eq(c->node.nics, 1);
    ck_assert(c->node.nic_bytes_per_s == 5e9); /* 40 Gb/s */
}
END_TEST

/* The shape model on H100 SXM (hw.c), worked by hand.  132 SMs, peak
 * 989e12, MAMF 0.803 (the gemm_eff curve's top), main loop 0.803 x 1.0959
 * of peak: per SM 989e12 / 132 x 0.8800077 = 6.593391e12 FLOP/s.  HBM
 * 3.35e12 x 0.85 = 2.8475e12 B/s.  A tile of tm x tn costs
 * 2 tm tn (k/split + 64) / 6.593391e12 per wave; the result is
 * max(5 us, 4 us + max(compute, memory, 2mnk / (989e12 x 0.803))). */
START_TEST(test_gemm_shape)
{
    const struct zs_gpu *g = &resolve_ok("8xH100", 0, 0)->node.gpu;
    struct zs_gemm_shape sh;
    double t;
    ck_assert_int_eq(g->sms, 132);

    /* Wave quantisation.  896 x 4864 x 8192: 128x256 tiles 7 x 19 = 133,
     * one more than the SMs: 2 waves, 2 x 2*128*256*8256 / 6.593391e12 =
     * 164.12 us; 256x128: 4 x 38 = 152 tiles, 2 waves, the same; 128x128:
     * 7 x 38 = 266 tiles, 3 waves x 2*128*128*8256 / 6.593391e12 =
     * 123.0926 us, the fastest.  Ceiling 2*896*4864*8192 / (989e12 *
     * 0.803) = 89.91 us, memory 2*(896*8192 + 8192*4864 + 896*4864) /
     * 2.8475e12 = 36.2 us: compute binds, t = 127.0926 us. */
    t = zs_gpu_gemm_shape(g, 896, 4864, 8192, &sh);
    ck_assert(NEAR(t, 127.0926e-6, 1e-5));
    ck_assert_int_eq(sh.tile_m, 128);
    ck_assert_int_eq(sh.tile_n, 128);
    ck_assert(sh.tiles == 266 && sh.waves == 3 && sh.split_k == 1);
    ck_assert(NEAR(zs_gpu_gemm_s(g, 896, 4864, 8192), t, 1e-12));
    /* The profile's sustained rate (group "sustained", 0.7533 of peak, x
     * ZS_SUSTAINED_NODE 0.95 in a step: 989e12 x 0.715635 = 707.763e12
     * FLOP/s) is under both: 2*896*4864*8192 / 707.763e12 = 100.88 us. */
    ck_assert(NEAR(g->gemm_sustained * g->sustained_node, 0.715635, 1e-9));
    /* 256 columns fewer (5.3 % fewer FLOPs): 7 x 18 = 126 tiles of
     * 128x256, one wave, 2*128*256*8256 / 6.593391e12 = 82.06 us, under
     * the ceiling 2*896*4608*8192 / (989e12 * 0.803) = 85.18 us: 89.178
     * us in a burst, but 2*896*4608*8192 / 707.763e12 = 95.5767 us held
     * at the power limit: t = 95.5767 us, still 1.33x faster for 5 % less
     * work. */
    t = zs_gpu_gemm_shape(g, 896, 4608, 8192, &sh);
    ck_assert(NEAR(t, 95.5767e-6, 1e-5));
    ck_assert(sh.waves == 1);

    /* Large and square: 8192^3, 4096 tiles of 128x128 (32 waves) or 2048
     * of 128x256 (15.5 -> 16 waves): 16 x 2*32768*8256 / 6.593391e12 =
     * 1.312988 ms, under the MAMF ceiling 1.0995116e12 / (989e12 * 0.803) =
     * 1.384484 ms: 1.388484 ms in a burst, 79.1 % of peak; held at the
     * power limit 1.0995116e12 / 707.763e12 = 1.553502 ms, 71.6 %. */
    t = zs_gpu_gemm_s(g, 8192, 8192, 8192);
    ck_assert(NEAR(t, 1.553502e-3, 1e-5));

    /* Split-K.  256 x 256 x 8192: 128x128 gives 4 tiles, K split
     * min(floor(132/4) = 33, floor(8192/1024) = 8) = 8 ways, 32 CTAs in one
     * wave: 2*128*128*(1024 + 64) / 6.593391e12 = 5.4073 us plus the fp32
     * partials 4*8*128*128*8 B / 2.8475e12 = 1.4729 us = 6.8801 us; memory
     * 2*(2*256*8192 + 256*256) / 2.8475e12 = 2.99 us: t = 10.8801 us. */
    t = zs_gpu_gemm_shape(g, 256, 256, 8192, &sh);
    ck_assert(NEAR(t, 10.8801e-6, 1e-4));
    ck_assert(sh.split_k == 8 && sh.tiles == 4);

    /* Memory-bound: 4096 x 4096 x 64 reads 2*(4096*64*2) and writes
     * 2*4096^2 bytes: 34.6 MB / 2.8475e12 = 12.1521 us, over compute
     * (8 waves x 2*128*128*128 / 6.593391e12 = 5.09 us): t = 16.1521 us. */
    t = zs_gpu_gemm_shape(g, 4096, 4096, 64, &sh);
    ck_assert(NEAR(t, 16.1521e-6, 1e-4));
    ck_assert(sh.memory_s > sh.compute_s);

    /* Batched (eager attention's QK^T at seq 512, 32 x 16 heads): 512
     * GEMMs of 512 x 512 x 128 in one kernel.  Tiles 512 x 4 x 2 = 4096 of
     * 128x256 (32 waves, 61.07 us of compute); bytes 512 x 2 x (512*128*2 +
     * 512*512) = 402653184 / 2.8475e12 = 141.406 us: memory-bound, t =
     * 145.406 us.  One at a time (16 tiles of 128x128 each, one wave):
     * 4 us + 2*128*128*192 / 6.593391e12 = 4.954 us, under the 5 us
     * floor: 512 x 5 us = 2560 us, 17.6x the batched kernel. */
    t = zs_gpu_gemm_batched_s(g, 512, 512, 512, 128);
    ck_assert(NEAR(t, 145.406e-6, 1e-5));
    t = zs_gpu_gemm_shape(g, 512, 512, 128, &sh);
    ck_assert(NEAR(512 * t, 2560e-6, 1e-9));
    ck_assert(sh.tile_m == 128 && sh.tile_n == 128 && sh.split_k == 1);
    ck_assert(zs_gpu_gemm_batched_s(g, 0, 512, 512, 128) == 0);
    ck_assert(NEAR(zs_gpu_gemm_batched_s(g, 1, 896, 4864, 8192),
                   zs_gpu_gemm_s(g, 896, 4864, 8192), 1e-12));

    /* Tiny: 16^3 is one tile, 2*128*256*80 / 6.593391e12 = 0.8 us + 4 us
     * under the 5 us floor. */
    ck_assert(NEAR(zs_gpu_gemm_s(g, 16, 16, 16), 5e-6, 1e-12));
    ck_assert(zs_gpu_gemm_shape(g, 0, 16, 16, &sh) == 0);
}
END_TEST

/* The sustained term (hw.h gemm_sustained, fp8_sustained, sustained_node)
 * on a GPU built here: 100 SMs, bf16 peak 100e12 at MAMF 0.8 (main loop
 * per SM 100e12 / 100 x 0.8 x 1.0959 = 0.87672e12 FLOP/s), fp8 peak
 * 200e12 at MAMF 0.8, HBM 1e12 B/s at eff 1.
 *  - 4096^3 (1.37439e11 FLOP): 128x128 tiles 32 x 32 = 1024, 11 waves x
 *    2*128*128*4160 / 0.87672e12 = 1.710309 ms (128x256: 6 waves, 1.86579
 *    ms), under the MAMF ceiling 1.37439e11 / 80e12 = 1.717987 ms; in a
 *    burst t = 1.721987 ms.  Held at 0.5 of peak: 1.37439e11 / 50e12 =
 *    2.748779 ms binds; x sustained_node 0.8: 1.37439e11 / 40e12 = 3.436
 *    ms.
 *  - 256 x 256 x 256 is a burst too short to feel it: 128x128 tiles, 4,
 *    one wave, 2*128*128*320 / 0.87672e12 = 11.96 us + 4 us = 15.96 us,
 *    over 3.355e7 / 40e12 = 0.84 us held.
 *  - without sms the curve's 0.8 is capped at the held 0.4: 3.436 ms.
 *  - fp8 at 0.3 held (x 0.8 = 0.24 of 200e12): 1.37439e11 / 48e12 =
 *    2.863 ms, over its burst (the fp8 ceiling 1.37439e11 / 160e12 =
 *    0.859 ms + 4 us). */
START_TEST(test_gemm_sustained)
{
    struct zs_gpu g;
    memset(&g, 0, sizeof g);
    g.sms = 100;
    g.peak_bf16_flops = 100e12;
    g.hbm_bytes_per_s = 1e12;
    g.hbm_eff = 1;
    g.gemm_eff.n = 1;
    g.gemm_eff.x[0] = 1e12;
    g.gemm_eff.y[0] = 0.8;
    ck_assert(NEAR(zs_gpu_gemm_s(&g, 4096, 4096, 4096), 1.721987e-3, 1e-5));
    g.gemm_sustained = 0.5; /* sustained_node 0 in a hand-built struct: 1 */
    ck_assert(NEAR(zs_gpu_gemm_s(&g, 4096, 4096, 4096), 2.748779e-3, 1e-5));
    g.sustained_node = 0.8;
    ck_assert(NEAR(zs_gpu_gemm_s(&g, 4096, 4096, 4096), 3.435974e-3, 1e-5));
    ck_assert(NEAR(zs_gpu_gemm_s(&g, 256, 256, 256), 15.96e-6, 1e-3));
    g.peak_fp8_flops = 200e12;
    g.fp8_mamf = 0.8;
    g.fp8_sustained = 0.3;
    ck_assert(NEAR(zs_gpu_gemm_fp8_s(&g, 4096, 4096, 4096), 2.863311e-3, 1e-5));
    g.sms = 0;
    ck_assert(NEAR(zs_gpu_gemm_s(&g, 4096, 4096, 4096), 3.435974e-3, 1e-6));
}
END_TEST

/* fp8 GEMMs (torch._scaled_mm) by the same shape model at the fp8 peak and
 * MAMF, worked by hand on a GPU built here: 132 SMs, fp8 peak 2000e12 at
 * MAMF 0.5, HBM 3e12 B/s at eff 1.  Main loop per SM: 2000e12 / 132 x 0.5
 * x 1.0959 = 8.30227e12 FLOP/s.
 *  - 8192^3: ceiling 2 x 8192^3 / (2000e12 x 0.5) = 1.099512 ms; compute
 *    16 waves x 2*128*256*8256 / 8.30227e12 = 1.042728 ms (128x128: 32
 *    waves, the same); memory (2 x 8192^2 x 1 B + 8192^2 x 2 B) /
 *    3e12 = 67.1 us: the ceiling binds, t = 1.103512 ms.
 *  - 65536 x 128 x 128: memory (65536*128 + 128*128) x 1 B + 65536*128
 *    x 2 B = 25,182,208 B / 3e12 = 8.394069 us over compute (256x128: 2
 *    waves x 2*256*128*192 / 8.30227e12 = 3.03 us) and the ceiling
 *    (2.1 us): t = 12.394069 us; in bf16 (2 B operands, 33,587,200 B)
 *    it would be 15.195733 us.
 * No fp8 figures: 0. */
START_TEST(test_gemm_fp8)
{
    struct zs_gpu g;
    memset(&g, 0, sizeof g);
    g.sms = 132;
    g.peak_fp8_flops = 2000e12;
    g.fp8_mamf = 0.5;
    g.peak_bf16_flops = 1000e12;
    g.hbm_bytes_per_s = 3e12;
    g.hbm_eff = 1;
    g.gemm_eff.n = 1;
    g.gemm_eff.x[0] = 1e12;
    g.gemm_eff.y[0] = 0.5;
    ck_assert(NEAR(zs_gpu_gemm_fp8_s(&g, 8192, 8192, 8192), 1.103512e-3,
                   1e-6));
    ck_assert(NEAR(zs_gpu_gemm_fp8_s(&g, 65536, 128, 128), 12.394069e-6,
                   1e-6));
    ck_assert(NEAR(zs_gpu_gemm_s(&g, 65536, 128, 128), 15.195733e-6, 1e-6));
    g.peak_fp8_flops = 0;
    ck_assert(zs_gpu_gemm_fp8_s(&g, 8192, 8192, 8192) == 0);
}
END_TEST

/* Flash-attention efficiency by sequence length: H100 SXM's curve from
 * the FA2 fwd+bwd causal head-dim-128 benchmark (163..328 TFLOPS / 989),
 * and beyond 16k the 16k point times SDPA flash's measured growth on an
 * H200 (cudnn-frontend b740542 and de355c7: 324.813 / 310.532 and 324.62
 * / 311.17 at 32k, mean 1.04461; 328.503 / 310.532 and 328.09 / 311.17 at
 * 64k, mean 1.05612): 328 x 1.04461 / 989 = 0.3464, 328 x 1.05612 / 989 =
 * 0.3503. */
START_TEST(test_attn_eff)
{
    const struct zs_gpu *g = &resolve_ok("8xH100", 0, 0)->node.gpu;
    /* 308 / 989 at 8k */
    ck_assert(NEAR(zs_gpu_attn_eff(g, 8192), 0.3114, 1e-9));
    /* 3000 between 2k (0.2679) and 4k (0.2973): log2(3000/2048) =
     * 0.5507468; 0.2679 + 0.0294 x 0.5507468 = 0.2840920 */
    ck_assert(NEAR(zs_gpu_attn_eff(g, 3000), 0.2840920, 1e-6));
    ck_assert(NEAR(zs_gpu_attn_eff(g, 32768), 0.3464, 1e-9));
    /* halfway (in log2) between 16k and 32k: (0.3316 + 0.3464) / 2 */
    ck_assert(NEAR(zs_gpu_attn_eff(g, 16384 * sqrt(2.0)), 0.3390, 1e-9));
    /* clamped at both ends */
    ck_assert(NEAR(zs_gpu_attn_eff(g, 128), 0.1648, 1e-9));
    ck_assert(NEAR(zs_gpu_attn_eff(g, 131072), 0.3503, 1e-9));
    /* A100: 182 / 312 at 8k; 189 x 1.05612 / 312 = 0.6398 at 64k */
    g = &resolve_ok("8xA100", 0, 0)->node.gpu;
    ck_assert(NEAR(zs_gpu_attn_eff(g, 8192), 0.5833, 1e-9));
    ck_assert(NEAR(zs_gpu_attn_eff(g, 65536), 0.6398, 1e-9));
    /* RTX 4090 (hw.md): causal fwd 151.19 and bwd 99.23 TF at 2048, so
     * 3.5 / (1 / 151.19 + 2.5 / 99.23) = 110.03 TF / 165.2 = 0.6661; 4k is
     * the A100's 0.5545 x 0.6661 / 0.4968 = 0.7435; 64k the non-causal cap,
     * 3.5 / (1 / 169.28 + 2.5 / 124.57) = 134.74 TF / 165.2 = 0.8156 (the
     * scaled A100 point, 0.8578, is above it) */
    g = &resolve_ok("1xRTX-4090", 0, 0)->node.gpu;
    ck_assert(NEAR(3.5 / (1 / 151.19 + 2.5 / 99.23) / 165.2, 0.6661, 5e-5));
    ck_assert(NEAR(zs_gpu_attn_eff(g, 2048), 0.6661, 1e-9));
    ck_assert(NEAR(zs_gpu_attn_eff(g, 4096), 0.7435, 1e-9));
    ck_assert(NEAR(3.5 / (1 / 169.28 + 2.5 / 124.57) / 165.2, 0.8156, 5e-5));
    ck_assert(NEAR(zs_gpu_attn_eff(g, 65536), 0.8156, 1e-9));
    /* without a Triton curve: the FA2 rate x flash-attn 1.x / FA2 on the
     * A100 at 2048 (69 / 155) */
    ck_assert(NEAR(zs_gpu_attn_triton_eff(g, 2048), 0.6661 * 69 / 155, 1e-9));
    /* RTX A6000 (hw.md): an RTX A5000's (GA102) measured causal fwd+bwd
     * over its 111.1 TF peak: 57.96 / 111.1 = 0.5217 at 2048, 68.00 /
     * 111.1 = 0.6121 at 16k, held beyond */
    g = &resolve_ok("1xRTX-A6000", 0, 0)->node.gpu;
    ck_assert(NEAR(57.96 / 111.1, 0.5217, 5e-5));
    ck_assert(NEAR(zs_gpu_attn_eff(g, 2048), 0.5217, 1e-9));
    ck_assert(NEAR(zs_gpu_attn_eff(g, 65536), 0.6121, 1e-9));
    /* without the curve: attn_eff at every length */
    g = &resolve_ok("tests/data/good/hw-node.json", 0, 0)->node.gpu;
    ck_assert(g->attn_eff_by_seq.n == 0);
    ck_assert(zs_gpu_attn_eff(g, 4096) == g->attn_eff);
}
END_TEST

/* The RTX 4090 profile against a measurement of the kernels it prices:
 * transformers' eager LlamaMLP (gate and up projections, SiLU(gate) * up,
 * down projection; hidden 2048, intermediate 4096, batch 2, bf16) timed on
 * an RTX 4090 by Liger-Kernel's benchmark (linkedin/Liger-Kernel
 * benchmark/data/all_benchmark_data.csv, rows added in 4c32ab6 and present
 * at 2120862ba532, kernel tiled_swiglu, provider
 * huggingface, Liger 0.6.3, 2025-11-11; medians, ms).  zsim: three GEMMs
 * forward, six backward (input and weight gradients), by the shape model;
 * the SwiGLU's 10 B forward and 18 B backward per intermediate element at
 * the HF fractions of 1008 GB/s (kernels.c).  docs/validation.md tables the
 * errors (forward -0.6..+8.6 %, backward -4.9..-10.6 %); this gate holds
 * each within 12 % and forward + backward within 8 %. */
START_TEST(test_rtx4090_llama_mlp_vs_liger)
{
    static const double T[] = {1024, 2048, 4096, 8192, 16384};
    static const double fwd_ms[] = {0.6748160123825073, 1.4332799911499023,
                                    2.91212797164917, 5.658976078033447,
                                    11.341952323913574};
    static const double bwd_ms[] = {1.551360011100769, 3.1928319931030273,
                                    6.273248195648193, 12.058752059936523,
                                    23.853055953979492};
    const struct zs_gpu *g = &resolve_ok("1xRTX-4090", 0, 0)->node.gpu;
    const double H = 2048, I = 4096;
    /* SwiGLU bytes per second, forward and backward */
    const double sf = g->hbm_bytes_per_s *
                      zs_kernels_hbm_frac(ZS_EW_SWIGLU, ZS_KERNELS_HF, false);
    const double sb = g->hbm_bytes_per_s *
                      zs_kernels_hbm_frac(ZS_EW_SWIGLU, ZS_KERNELS_HF, true);
    for (int i = 0; i < 5; i++) {
        double t = 2 * T[i]; /* batch 2 */
        double f = 2 * zs_gpu_gemm_shape(g, t, I, H, NULL) +
                   zs_gpu_gemm_shape(g, t, H, I, NULL) + 10 * t * I / sf;
        double b = 2 * (zs_gpu_gemm_shape(g, t, H, I, NULL) +
                        zs_gpu_gemm_shape(g, I, H, t, NULL)) +
                   zs_gpu_gemm_shape(g, t, I, H, NULL) +
                   zs_gpu_gemm_shape(g, H, I, t, NULL) + 18 * t * I / sb;
        double ef = f * 1e3 / fwd_ms[i] - 1, eb = b * 1e3 / bwd_ms[i] - 1;
        double et = (f + b) * 1e3 / (fwd_ms[i] + bwd_ms[i]) - 1;
        ck_assert_msg(fabs(ef) < 0.12 && fabs(eb) < 0.12 && fabs(et) < 0.08,
                      "T %.0f: forward %+.1f %%, backward %+.1f %%, both "
                      "%+.1f %%",
                      T[i], 100 * ef, 100 * eb, 100 * et);
    }
}
END_TEST

START_TEST(test_collectives)
{
    struct zs_cluster *c = resolve_ok("8xH100", 0, 0);
    double gib = (double)ZS_GiB;
    /* On the measured points. */
    ck_assert(NEAR(zs_cluster_busbw(c, ZS_COLL_ALLREDUCE, gib, 8, 1), 463.6e9,
                   1e-12));
    ck_assert(NEAR(zs_cluster_busbw(c, ZS_COLL_ALLGATHER, 16 * gib, 8, 1),
                   350e9, 1e-12));
    ck_assert(NEAR(zs_cluster_busbw(c, ZS_COLL_REDUCESCATTER, 16 * gib, 8, 1),
                   360e9, 1e-12));
    /* Between 1 and 16 MiB (log2 0 and 4): at 4 MiB, halfway:
     * 39.9 + (219.9 - 39.9) / 2 = 129.9 GB/s. */
    ck_assert(NEAR(zs_cluster_busbw(c, ZS_COLL_ALLREDUCE, 4.0 * ZS_MiB, 8, 1),
                   129.9e9, 1e-12));
    /* 4 GPUs in the node: NVLS factor 0.768 -> 463.6 * 0.768 = 356.0448. */
    ck_assert(NEAR(zs_cluster_busbw(c, ZS_COLL_ALLREDUCE, gib, 4, 1),
                   356.0448e9, 1e-12));
    /* Across 2 nodes: min(482.3, 8 NICs x 50 GB/s x 0.9 = 360). */
    ck_assert(NEAR(zs_cluster_busbw(c, ZS_COLL_ALLREDUCE, 16 * gib, 16, 2),
                   360e9, 1e-12));
    /* Small messages stay on the in-node curve: 39.9 < 360. */
    ck_assert(NEAR(zs_cluster_busbw(c, ZS_COLL_ALLREDUCE, 1.0 * ZS_MiB, 16, 2),
                   39.9e9, 1e-12));
    /* 2 nodes with 2 GPUs each: 2 NICs carry rings: 2 x 50 x 0.9 = 90. */
    ck_assert(NEAR(zs_cluster_busbw(c, ZS_COLL_ALLGATHER, 16 * gib, 4, 2), 90e9,
                   1e-12));

    /* Times: all-gather of 1 GiB over 8: 8 us + 2^30 * 7/8 / 336.4e9
     * = 8e-6 + 939524096 / 336.4e9 = 8e-6 + 2.792878e-3 = 2.800878e-3 s;
     * all-reduce: 8e-6 + 2 * 939524096 / 463.6e9 = 8e-6 + 4.053167e-3
     * = 4.061167e-3 s. */
    ck_assert(NEAR(zs_cluster_collective_s(c, ZS_COLL_ALLGATHER, gib, 8, 1),
                   2.800878e-3, 1e-6));
    ck_assert(NEAR(zs_cluster_collective_s(c, ZS_COLL_ALLREDUCE, gib, 8, 1),
                   4.061167e-3, 1e-6));
    ck_assert(zs_cluster_collective_s(c, ZS_COLL_ALLREDUCE, gib, 1, 1) == 0);
    ck_assert(zs_cluster_collective_s(c, ZS_COLL_ALLGATHER, 0, 8, 1) == 0);

    /* PCIe H100: a bridged pair all-reduces 3x faster than the PCIe ring. */
    c = resolve_ok("8xH100-PCIe", 0, 0);
    ck_assert(NEAR(zs_cluster_busbw(c, ZS_COLL_ALLREDUCE, 16 * gib, 2, 1),
                   114e9, 1e-12));
    ck_assert(NEAR(zs_cluster_busbw(c, ZS_COLL_ALLREDUCE, 16 * gib, 8, 1), 38e9,
                   1e-12));
}
END_TEST

START_TEST(test_flags_good)
{
    struct zs_err err = {0, ""};
    int64_t b = 0;
    int n = 0;
    ck_assert_int_eq(zs_hw_parse_host_ram("512GiB", &b, &err), 0);
    ck_assert_int_eq(b, 512 * ZS_GiB);
    ck_assert_int_eq(zs_hw_parse_host_ram("1.5TiB", &b, &err), 0);
    ck_assert_int_eq(b, 3 * ZS_TiB / 2);
    ck_assert_int_eq(zs_hw_parse_nodes("16", &n, &err), 0);
    ck_assert_int_eq(n, 16);
    ck_assert_int_eq(zs_hw_parse_nodes("1024", &n, &err), 0);
    ck_assert_ptr_nonnull(zs_hw_find_gpu("a100-sxm4-80gb"));
    ck_assert_ptr_null(zs_hw_find_gpu("B200"));
}
END_TEST

/* SPECs and flag values: usage errors (exit 2), exact text. */
START_TEST(test_bad_specs)
{
    static const struct {
        const char *spec;
        int64_t ram;
        int nodes;
        const char *msg;
    } cases[] = {
        {"0x8xH100", 0, 0,
         "invalid node count 0 in '0x8xH100': must be in [1, 1024]"},
        {"2000x8xH100", 0, 0,
         "invalid node count 2000 in '2000x8xH100': must be in [1, 1024]"},
        {"8xH999", 0, 0,
         "unknown GPU 'H999' in '8xH999': closest are H100, H200, A100 (see "
         "'zsim hw list')"},
        {"8xA10", 0, 0,
         "unknown GPU 'A10' in '8xA10': closest are A100, A100-40GB, A10G (see "
         "'zsim hw list')"},
        {"4xRTX-3090", 0, 0,
         "invalid GPU count 4 in '4xRTX-3090': must be in [1, 2], the GPUs of "
         "one Workstation, 2x RTX 3090 node (it has no compute network to "
         "join more nodes)"},
        {"2x2xRTX3090", 0, 0,
         "invalid node count 2 for '2x2xRTX3090': Workstation, 2x RTX 3090 "
         "has no compute network"},
        {"8xA10G", 0, 0,
         "invalid GPU count 8 in '8xA10G': must be in [1, 4], the GPUs of one "
         "AWS g5.12xlarge node (for more, give nodes: 2x4xA10G)"},
        {"x8", 0, 0,
         "invalid cluster spec 'x8': must start with a GPU count (e.g. 8xH100, "
         "2x8xH100, 4xA100-80GB)"},
        {"", 0, 0,
         "invalid cluster spec '': must start with a GPU count (e.g. 8xH100, "
         "2x8xH100, 4xA100-80GB)"},
        {"8x", 0, 0,
         "invalid cluster spec '8x': missing the GPU name (e.g. 8xH100, "
         "2x8xH100, 4xA100-80GB)"},
        {"2x8x", 0, 0,
         "invalid cluster spec '2x8x': missing the GPU name (e.g. 8xH100, "
         "2x8xH100, 4xA100-80GB)"},
        {"8H100", 0, 0,
         "invalid cluster spec '8H100': expected 'x' after the count (e.g. "
         "8xH100, 2x8xH100, 4xA100-80GB)"},
        {"2x8-H100", 0, 0,
         "invalid cluster spec '2x8-H100': expected 'x' after the count (e.g. "
         "8xH100, 2x8xH100, 4xA100-80GB)"},
        {"99999xH100", 0, 0,
         "invalid GPU count 99999 in '99999xH100': must be in [1, 8], the GPUs "
         "of one DGX H100 node (for more, give nodes: 2x8xH100)"},
        {"99999999999999999999xH100", 0, 0,
         "invalid GPU count 99999999999999999999 in "
         "'99999999999999999999xH100': must be in [1, 8], the GPUs of one DGX "
         "H100 node (for more, give nodes: 2x8xH100)"},
        {"16xH100", 0, 0,
         "invalid GPU count 16 in '16xH100': must be in [1, 8], the GPUs of "
         "one DGX H100 node (for more, give nodes: 2x8xH100)"},
        {"2x0xA100", 0, 0,
         "invalid GPU count 0 in '2x0xA100': must be in [1, 8], the GPUs of "
         "one DGX A100 640GB node (for more, give nodes: 2x8xA100)"},
        {"8xH100", 32 * ZS_GiB, 0,
         "invalid host RAM 32.0 GiB for DGX H100: must be more than the 64.0 "
         "GiB reserved for the OS"},
        {"8xH100", 0, 1025, "invalid node count 1025: must be in [1, 1024]"},
        {"8xH100-SXM-80GB-with-a-name-that-goes-on-and-on-and-on-and-on-"
         "forever",
         0, 0,
         "invalid cluster spec '8xH100-SXM-80GB-with-a-name-that-goes-on...': "
         "longer than 63 characters"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        static struct zs_cluster c;
        struct zs_err err = {0, ""};
        int rc = zs_hw_resolve(cases[i].spec, cases[i].ram, cases[i].nodes, &c,
                               &err);
        ck_assert_msg(rc == ZS_EUSAGE, "case %zu: rc %d (%s)", i, rc, err.msg);
        ck_assert_str_eq(err.msg, cases[i].msg);
    }
}
END_TEST

/* --host-reserved replaces the node's OS reserve: 8 GiB on a 128 GB
 * workstation leaves 128e9 - 8 GiB for training; 16 GiB of RAM, refused
 * against the server profile's 32 GiB reserve, fits an 8 GiB one; a reserve
 * as large as the RAM is refused. */
START_TEST(test_host_reserved)
{
    static struct zs_cluster c;
    struct zs_err err = {0, ""};
    ck_assert_int_eq(zs_hw_resolve("2xRTX-4090", 0, 0, &c, &err), 0);
    ck_assert_int_eq(c.node.host_reserved_bytes, 32 * ZS_GiB); /* profile */
    ck_assert_int_eq(zs_hw_set_host(&c, 128000000000LL, 0, &err), 0);
    ck_assert_int_eq(c.node.host_reserved_bytes, 32 * ZS_GiB); /* kept */
    ck_assert_int_eq(zs_hw_set_host(&c, 128000000000LL, 8 * ZS_GiB, &err), 0);
    ck_assert_int_eq(c.node.host_ram_bytes - c.node.host_reserved_bytes,
                     128000000000LL - 8 * ZS_GiB);
    ck_assert_int_eq(zs_hw_resolve("2xRTX-4090", 0, 0, &c, &err), 0);
    ck_assert_int_eq(zs_hw_set_host(&c, 16 * ZS_GiB, 0, &err), ZS_EUSAGE);
    ck_assert_str_eq(err.msg, "invalid host RAM 16.0 GiB for PCIe server, 8x "
                              "RTX 4090: must be more than the 32.0 GiB "
                              "reserved for the OS");
    ck_assert_int_eq(zs_hw_set_host(&c, 16 * ZS_GiB, 8 * ZS_GiB, &err), 0);
    ck_assert_int_eq(zs_hw_set_host(&c, 128000000000LL, 128000000000LL, &err),
                     ZS_EUSAGE);
    ck_assert_str_eq(err.msg, "invalid --host-reserved 119 GiB for PCIe "
                              "server, 8x RTX 4090: must be less than its "
                              "119 GiB of host RAM");
}
END_TEST

START_TEST(test_bad_flags)
{
    static const struct {
        const char *text, *msg;
        int nodes;
    } cases[] = {
        {"-1", "invalid --host-ram '-1': must be in [1 GiB, 1 PiB]", 0},
        {"12XB",
         "invalid --host-ram '12XB': not a size (use e.g. 512GiB, 2TB, 1.5TiB)",
         0},
        {"512MiB", "invalid --host-ram '512MiB': must be in [1 GiB, 1 PiB]", 0},
        {"2000PiB", "invalid --host-ram '2000PiB': must be in [1 GiB, 1 PiB]",
         0},
        {"", "invalid --host-ram '': not a size (use e.g. 512GiB, 2TB, 1.5TiB)",
         0},
        {"0", "invalid --nodes '0': must be an integer in [1, 1024]", 1},
        {"-2", "invalid --nodes '-2': must be an integer in [1, 1024]", 1},
        {"1.5", "invalid --nodes '1.5': must be an integer in [1, 1024]", 1},
        {"99999999999999999999",
         "invalid --nodes '99999999999999999999': must be an integer in [1, "
         "1024]",
         1},
        {"two", "invalid --nodes 'two': must be an integer in [1, 1024]", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct zs_err err = {0, ""};
        int64_t b = 7;
        int n = 7, rc;
        if (cases[i].nodes)
            rc = zs_hw_parse_nodes(cases[i].text, &n, &err);
        else
            rc = zs_hw_parse_host_ram(cases[i].text, &b, &err);
        ck_assert_msg(rc == ZS_EUSAGE, "case %zu: rc %d", i, rc);
        ck_assert_str_eq(err.msg, cases[i].msg);
        ck_assert(b == 7 && n == 7); /* outputs untouched */
    }
}
END_TEST

/* Profile files: invalid input (exit 3), exact text with file:line:col. */
START_TEST(test_bad_profiles)
{
    static const struct {
        const char *path;
        int node; /* load as a node profile */
        const char *msg;
    } cases[] = {
        {"tests/data/bad/hw-malformed.json", 0,
         "malformed JSON in tests/data/bad/hw-malformed.json:3:30: unexpected "
         "'G'"},
        {"tests/data/bad/hw-truncated.json", 0,
         "malformed JSON in tests/data/bad/hw-truncated.json:1:46: unexpected "
         "end of input"},
        {"tests/data/bad/hw-empty.json", 0,
         "empty file 'tests/data/bad/hw-empty.json': expected a JSON object"},
        {"tests/data/bad/hw-binary.json", 0,
         "binary file 'tests/data/bad/hw-binary.json' (byte 0x02 at offset 4): "
         "expected a JSON object"},
        {"tests/data/bad/hw-missing.json", 0,
         "cannot open 'tests/data/bad/hw-missing.json': No such file or "
         "directory"},
        {"tests/data/bad/hw-wrong-type.json", 0,
         "invalid 'memory.hbm_bytes' in tests/data/bad/hw-wrong-type.json:5:5: "
         "must be a size in [1.00 GiB, 1.00 TiB] (bytes or e.g. \"80GiB\") "
         "(got boolean)"},
        {"tests/data/bad/hw-neg-bw.json", 0,
         "invalid 'pcie.h2d_bytes_per_s' in "
         "tests/data/bad/hw-neg-bw.json:31:5: must be a number in [100000000, "
         "1000000000000] (got -50000000000)"},
        {"tests/data/bad/hw-missing-field.json", 0,
         "missing 'compute.peak_bf16_flops' in "
         "tests/data/bad/hw-missing-field.json: required, a number in "
         "[1000000000000, 1e+17]"},
        {"tests/data/bad/hw-missing-group.json", 0,
         "missing 'nvlink' in tests/data/bad/hw-missing-group.json: required, "
         "an object"},
        {"tests/data/bad/hw-missing-source.json", 0,
         "missing 'hbm.source' in tests/data/bad/hw-missing-source.json: "
         "required, a string of 1 to 239 characters"},
        {"tests/data/bad/hw-unknown-key.json", 0,
         "unknown key 'memory.hbm_byts' in "
         "tests/data/bad/hw-unknown-key.json:8:5: did you mean 'hbm_bytes'?"},
        {"tests/data/bad/hw-curve-order.json", 0,
         "invalid 'gemm_eff.x' in tests/data/bad/hw-curve-order.json:17:5: "
         "must be strictly increasing (x[2] = 100000000000 after x[1] = "
         "1000000000000)"},
        {"tests/data/bad/hw-curve-len.json", 0,
         "invalid 'gemm_eff.y' in tests/data/bad/hw-curve-len.json:18:5: must "
         "have as many points as 'x' (2) (got 1)"},
        {"tests/data/bad/hw-curve-eff.json", 0,
         "invalid 'gemm_eff.y[1]' in tests/data/bad/hw-curve-eff.json:18:5: "
         "must be a number in [0.001, 1] (got 1.5)"},
        {"tests/data/bad/hw-overlap.json", 0,
         "invalid 'overlap.compute_factor' in "
         "tests/data/bad/hw-overlap.json:39:5: must be a number in [0.01, 1] "
         "(got 1.2)"},
        {"tests/data/bad/hw-overlap-source.json", 0,
         "missing 'overlap.source' in tests/data/bad/hw-overlap-source.json: "
         "required, a string of 1 to 239 characters"},
        {"tests/data/bad/hw-sustained-above.json", 0,
         "invalid 'sustained.bf16' in "
         "tests/data/bad/hw-sustained-above.json:39:5: must not exceed "
         "gemm_eff's top point (0.8, the burst MAMF)"},
        {"tests/data/bad/hw-sustained-fp8.json", 0,
         "invalid 'sustained.fp8' in tests/data/bad/hw-sustained-fp8.json:40:5: "
         "needs the group 'fp8' (an fp8 peak and MAMF)"},
        {"tests/data/bad/hw-context-too-big.json", 0,
         "invalid 'memory.hbm_bytes' in "
         "tests/data/bad/hw-context-too-big.json:5:5: must exceed "
         "cuda_context_bytes + nccl_bytes"},
        {"tests/data/bad/hw-gpus.json", 1,
         "invalid 'gpus_per_node' in tests/data/bad/hw-gpus.json:4:3: must be "
         "an integer in [1, 64] (got 0)"},
        {"tests/data/bad/hw-reserved.json", 1,
         "invalid 'host.reserved_bytes' in "
         "tests/data/bad/hw-reserved.json:8:5: must be less than "
         "host.ram_bytes"},
        {"tests/data/bad/hw-unknown-gpu.json", 1,
         "unknown GPU 'H999' in tests/data/bad/hw-unknown-gpu.json:3:3 (see "
         "'zsim hw list')"},
        {"tests/data/bad/hw-curve-size.json", 1,
         "invalid 'collectives.allgather_busbw.x[1]' in "
         "tests/data/bad/hw-curve-size.json:37:7: must be a number or a size "
         "in [1 B, 1.00 PiB] (got '12XB')"},
        {"tests/data/bad/hw-missing-curve.json", 1,
         "missing 'collectives.allreduce_busbw' in "
         "tests/data/bad/hw-missing-curve.json: required, an object with "
         "\"x\", \"y\" and \"source\""},
        {"tests/data/bad/hw-storage.json", 1,
         "invalid 'storage.drive_write_bytes_per_s' in "
         "tests/data/bad/hw-storage.json:64:5: must be a number in "
         "[100000000, 100000000000] (got 0)"},
        /* A GPU profile is not a node profile. */
        {"tests/data/good/hw-gpu.json", 1,
         "unknown key 'memory' in tests/data/good/hw-gpu.json:4:3"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        static struct zs_node n;
        static struct zs_gpu g;
        struct zs_err err = {0, ""};
        int rc;
        memset(&g, 0x5a, sizeof g);
        rc = cases[i].node ? zs_hw_load_node(cases[i].path, &n, &err)
                           : zs_hw_load_gpu(cases[i].path, &g, &err);
        ck_assert_msg(rc == ZS_EINPUT, "case %zu: rc %d (%s)", i, rc, err.msg);
        ck_assert_str_eq(err.msg, cases[i].msg);
        if (!cases[i].node)
            ck_assert_int_eq(((unsigned char *)&g)[0], 0x5a); /* untouched */
    }
    /* Through a SPEC naming the file, a profile error stays ZS_EINPUT. */
    {
        static struct zs_cluster c;
        struct zs_err err = {0, ""};
        ck_assert_int_eq(
            zs_hw_resolve("tests/data/bad/hw-reserved.json", 0, 0, &c, &err),
            ZS_EINPUT);
    }
}
END_TEST

/* The loaders under an allocation-failure loop (STYLE 25). */
START_TEST(test_alloc_failures)
{
    for (long n = 1; n < 100000; n++) {
        static struct zs_cluster c;
        struct zs_err err = {0, ""};
        int rc;
        zs_alloc_fail_at(n);
        rc = zs_hw_resolve("2x8xH100", 0, 0, &c, &err);
        if (!zs_alloc_failed()) {
            zs_alloc_fail_at(0);
            ck_assert_msg(rc == 0, "n=%ld: %s", n, err.msg);
            ck_assert_int_eq(c.nodes, 2);
            ck_assert_int_gt(n, 3); /* node + its GPU: several allocations */
            return;
        }
        ck_assert_msg(rc == ZS_ENOMEM, "n=%ld rc=%d msg=%s", n, rc, err.msg);
    }
    zs_alloc_fail_at(0);
    ck_abort_msg("allocation loop did not terminate");
}
END_TEST

START_TEST(test_env_dir)
{
    static struct zs_cluster c;
    struct zs_err err = {0, ""};
    setenv("ZSIM_HWPROFILES", "tests/data/nonexistent-hwprofiles", 1);
    ck_assert_str_eq(zs_hw_dir(), "tests/data/nonexistent-hwprofiles");
    ck_assert_int_eq(zs_hw_resolve("8xH100", 0, 0, &c, &err), ZS_EINPUT);
    ck_assert_str_eq(
        err.msg,
        "cannot open 'tests/data/nonexistent-hwprofiles/nodes/dgx-h100.json': "
        "No such file or directory");
    unsetenv("ZSIM_HWPROFILES");
    ck_assert_int_eq(zs_hw_resolve("8xH100", 0, 0, &c, &err), 0);
}
END_TEST

/* flash-attn 1.x CUDA against FA2, read off the FA2 release's A100 figure
 * (figures.c, the fallback of --attention triton): 69/155 at 2k, 55/99 at
 * 512 and below, 83/189 at 16k and beyond, and halfway in log2(seq)
 * between 2k and 4k the mean of the two. */
START_TEST(test_attn_triton_ratio)
{
    ck_assert_double_eq_tol(zs_attn_triton_ratio(2048), 69.0 / 155, 1e-12);
    ck_assert_double_eq_tol(zs_attn_triton_ratio(128), 55.0 / 99, 1e-12);
    ck_assert_double_eq_tol(zs_attn_triton_ratio(512), 55.0 / 99, 1e-12);
    ck_assert_double_eq_tol(zs_attn_triton_ratio(16384), 83.0 / 189, 1e-12);
    ck_assert_double_eq_tol(zs_attn_triton_ratio(65536), 83.0 / 189, 1e-12);
    ck_assert_double_eq_tol(zs_attn_triton_ratio(sqrt(2048.0 * 4096.0)),
                            (69.0 / 155 + 76.0 / 173) / 2, 1e-12);
}
END_TEST

/* --attention triton: flash-attn 1.x CUDA's measured fractions where the
 * profile has them (H100 SXM: 135 / 989 = 0.1365 at 8k, 137 / 989 =
 * 0.1385 at 16k, the non-causal 16k 139 / 989 = 0.1405 from 32k on; A100:
 * 55 / 312 = 0.1763 at 512, 83 / 312 = 0.2660 at 16k and 32k), else the
 * FA2 rate times the A100 ratio above (L40S: flat 45 % x 83 / 189 =
 * 0.197619 at 16k). */
START_TEST(test_attn_triton_eff)
{
    const struct zs_gpu *g = &resolve_ok("8xH100", 0, 0)->node.gpu;
    ck_assert(NEAR(zs_gpu_attn_triton_eff(g, 8192), 0.1365, 1e-9));
    ck_assert(NEAR(zs_gpu_attn_triton_eff(g, 16384), 0.1385, 1e-9));
    ck_assert(NEAR(zs_gpu_attn_triton_eff(g, 65536), 0.1405, 1e-9));
    /* halfway (in log2) between 1k (0.1102) and 2k (0.1092): 0.1097 */
    ck_assert(NEAR(zs_gpu_attn_triton_eff(g, 1024 * sqrt(2.0)), 0.1097, 1e-9));
    g = &resolve_ok("8xA100", 0, 0)->node.gpu;
    ck_assert(NEAR(zs_gpu_attn_triton_eff(g, 256), 0.1763, 1e-9));
    ck_assert(NEAR(zs_gpu_attn_triton_eff(g, 32768), 0.2660, 1e-9));
    g = &resolve_ok("8xL40S", 0, 0)->node.gpu;
    ck_assert(g->attn_triton_eff_by_seq.n == 0);
    ck_assert(NEAR(zs_gpu_attn_triton_eff(g, 16384), 0.45 * 83.0 / 189, 1e-12));
}
END_TEST

/* SDPA's flash backend against the flash-attn 2 package, both on one B200
 * (figures.c): forward + backward 82.523 against 88.589 ms at 16k, 0.989
 * against 1.001 ms at 1k and below, 1276.083 against 1358.071 ms at 64k and
 * beyond, halfway (in log2) between 4k and 8k the mean of 6.303 / 6.837 and
 * 21.845 / 23.629; --attention sdpa is the profile's FA2 rate times it
 * (H100 SXM at 8k: 0.3114 x 21.845 / 23.629 = 0.287889). */
START_TEST(test_attn_sdpa)
{
    const struct zs_gpu *g = &resolve_ok("8xH100", 0, 0)->node.gpu;
    ck_assert_double_eq_tol(zs_attn_sdpa_ratio(16384), 82.523 / 88.589, 1e-12);
    ck_assert_double_eq_tol(zs_attn_sdpa_ratio(512), 0.989 / 1.001, 1e-12);
    ck_assert_double_eq_tol(zs_attn_sdpa_ratio(1024), 0.989 / 1.001, 1e-12);
    ck_assert_double_eq_tol(zs_attn_sdpa_ratio(131072), 1276.083 / 1358.071,
                            1e-12);
    ck_assert_double_eq_tol(zs_attn_sdpa_ratio(4096 * sqrt(2.0)),
                            (6.303 / 6.837 + 21.845 / 23.629) / 2, 1e-12);
    ck_assert(NEAR(zs_gpu_attn_sdpa_eff(g, 8192), 0.287889, 1e-6));
}
END_TEST

Suite *suite_hw(void)
{
    Suite *s = suite_create("hw");
    TCase *core = tcase_create("core");
    TCase *limits = tcase_create("limits");
    TCase *bad = tcase_create("bad input");
    tcase_add_test(core, test_shipped_profiles_load);
    tcase_add_test(core, test_attn_triton_ratio);
    tcase_add_test(core, test_attn_triton_eff);
    tcase_add_test(core, test_attn_sdpa);
    tcase_add_test(core, test_resolve);
    tcase_add_test(core, test_curve_eval);
    tcase_add_test(core, test_kernel_times);
    tcase_add_test(core, test_gemm_shape);
    tcase_add_test(core, test_gemm_fp8);
    tcase_add_test(core, test_gemm_sustained);
    tcase_add_test(core, test_ga102_profiles);
    tcase_add_test(core, test_attn_eff);
    tcase_add_test(core, test_rtx4090_llama_mlp_vs_liger);
    tcase_add_test(core, test_collectives);
    tcase_add_test(core, test_flags_good);
    tcase_add_test(limits, test_alloc_failures);
    tcase_add_test(limits, test_env_dir);
    tcase_add_test(bad, test_bad_specs);
    tcase_add_test(bad, test_host_reserved);
    tcase_add_test(bad, test_bad_flags);
    tcase_add_test(bad, test_bad_profiles);
    tcase_set_timeout(limits, 60);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    suite_add_tcase(s, bad);
    return s;
}
