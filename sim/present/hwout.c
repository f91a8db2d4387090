/*
 * hwout.c — see hwout.h.  `zsim hw list` and `zsim hw show`: the profile
 * tables, one cluster's figures with their sources, and zsim.hw/1.
 */
#include "present/hwout.h"
#include "present/emit.h"
#include "util/json.h"
#include "util/table.h"
#include "util/units.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* "57.0 GB/s" (decimal units, as the sources quote them). */
static char *fmt_rate(char *buf, size_t cap, double bytes_per_s)
{
    double g = bytes_per_s / 1e9;
    if (g >= 100)
        snprintf(buf, cap, "%.0f GB/s", g);
    else
        snprintf(buf, cap, "%.1f GB/s", g);
    return buf;
}

static char *fmt_gb(char *buf, size_t cap, double bytes_per_s)
{
    snprintf(buf, cap, "%.1f", bytes_per_s / 1e9);
    return buf;
}

/* ---- hw list ------------------------------------------------------------ */

/* "a, b, c" into buf. */
static void join_aliases(char *buf, size_t cap, const char *const *aliases)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; aliases[k]; k++)
        len += (size_t)snprintf(buf + len, cap - len, k ? ", %s" : "%s",
                                aliases[k]);
}

/* The loaded profile of the GPU's default node, or NULL. */
static const struct zs_node *default_node(const struct zs_node *nodes,
                                          const struct zs_hw_gpu_entry *ge)
{
    const struct zs_hw_node_entry *ne;
    const struct zs_node *dn = NULL;
    int nn = zs_hw_node_entries(&ne);
    for (int j = 0; j < nn; j++)
        if (strcmp(ne[j].file, ge->node_file) == 0)
            dn = &nodes[j];
    return dn;
}

static int gpu_list(const struct zs_node *nodes, struct zs_err *err)
{
    const struct zs_hw_gpu_entry *ge;
    int ng = zs_hw_gpu_entries(&ge), rc = 0;
    struct zs_table *t = zs_emit_table(
        6, "llrrrl",
        "name\taliases\tHBM (torch)\tbf16 dense\tHBM bw\tdefault node");

    if (!t)
        return zs_err_set(err, ZS_ENOMEM, "out of memory");
    printf("GPUs:\n");
    for (int i = 0; i < ng && !rc; i++) {
        char aliases[160], hbm[24], bw[24];
        const struct zs_node *dn = default_node(nodes, &ge[i]);
        join_aliases(aliases, sizeof aliases, ge[i].aliases);
        if (!dn) {
            rc = zs_err_set(err, ZS_ERUNTIME,
                            "internal: no node '%s' for GPU %s",
                            ge[i].node_file, ge[i].name);
            break;
        }
        rc = zs_table_rowf(
            t, "%s\t%s\t%s\t%.0f TFLOP/s\t%s\t%s", ge[i].name, aliases,
            zs_fmt_bytes(hbm, sizeof hbm, dn->gpu.hbm_bytes),
            dn->gpu.peak_bf16_flops / 1e12,
            fmt_rate(bw, sizeof bw, dn->gpu.hbm_bytes_per_s), dn->name);
    }
    if (rc == ZS_ENOMEM)
        zs_err_set(err, rc, "out of memory");
    if (!rc)
        zs_table_print(t, stdout, 2);
    zs_table_free(t);
    return rc;
}

static int node_list(const struct zs_node *nodes, struct zs_err *err)
{
    const struct zs_hw_node_entry *ne;
    int nn = zs_hw_node_entries(&ne), rc = 0;
    struct zs_table *t =
        zs_emit_table(8, "llrrrrrl",
                      "name\tGPU\tGPUs\thost RAM\tCPU cores\tNICs\t"
                      "NVLink/dir\tfile");

    if (!t)
        return zs_err_set(err, ZS_ENOMEM, "out of memory");
    printf("\nnodes:\n");
    for (int i = 0; i < nn && !rc; i++) {
        const struct zs_node *n = &nodes[i];
        char ram[24], nic[24], nvl[24];
        fmt_rate(nic, sizeof nic, n->nic_bytes_per_s);
        if (n->gpu.nvlink_bytes_per_s > 0)
            fmt_rate(nvl, sizeof nvl, n->gpu.nvlink_bytes_per_s);
        else
            snprintf(nvl, sizeof nvl, "none");
        rc = zs_table_rowf(t, "%s\t%s\t%d\t%s\t%d\t%d x %s\t%s\tnodes/%s.json",
                           n->name, n->gpu.name, n->gpus_installed,
                           zs_fmt_bytes(ram, sizeof ram, n->host_ram_bytes),
                           n->cpu_cores, n->nics, nic, nvl, ne[i].file);
    }
    if (rc)
        zs_err_set(err, rc, "out of memory");
    else
        zs_table_print(t, stdout, 2);
    zs_table_free(t);
    return rc;
}

int zs_hwout_list(const struct zs_node *nodes, struct zs_err *err)
{
    int rc = gpu_list(nodes, err);
    if (rc)
        return rc;
    rc = node_list(nodes, err);
    if (!rc)
        printf("\nA SPEC such as 8xH100 or 2x8xH100 uses the GPU's default "
               "node; 'zsim hw show SPEC' shows every figure and its "
               "source.\n");
    return rc;
}

/* ---- hw show: text ------------------------------------------------------ */

static int row(struct zs_table *t, const char *label, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int row(struct zs_table *t, const char *label, const char *fmt, ...)
{
    char val[256];
    const char *cells[2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(val, sizeof val, fmt, ap);
    va_end(ap);
    cells[0] = label;
    cells[1] = val;
    return zs_table_row(t, cells);
}

static int print_sources(const char *prefix, const struct zs_hw_sources *s)
{
    for (int i = 0; i < s->n; i++)
        printf("  %s.%s: %s\n", prefix, s->item[i].what, s->item[i].text);
    return 0;
}

/* Prints a finished two-column table and frees it; ZS_ENOMEM when a row
 * failed (nothing printed then). */
static int finish(struct zs_table *t, int rc)
{
    if (!rc)
        zs_table_print(t, stdout, 2);
    zs_table_free(t);
    return rc ? ZS_ENOMEM : 0;
}

static void cluster_header(const struct zs_cluster *c,
                           int64_t host_ram_override)
{
    const struct zs_node *n = &c->node;
    int total = c->nodes * n->gpus_per_node;
    char a[32];

    printf("cluster %s: %d node%s x %d GPU%s = %d x %s\n", c->spec, c->nodes,
           c->nodes == 1 ? "" : "s", n->gpus_per_node,
           n->gpus_per_node == 1 ? "" : "s", total, n->gpu.name);
    printf("node type %s", n->name);
    if (n->gpus_per_node < n->gpus_installed)
        printf(": the node has %d GPUs, %d used; host RAM and CPU are the "
               "node's\n",
               n->gpus_installed, n->gpus_per_node);
    else
        printf(", all %d GPUs used\n", n->gpus_installed);
    if (host_ram_override > 0)
        printf("host RAM %s per node from --host-ram\n",
               zs_fmt_bytes(a, sizeof a, host_ram_override));
}

/* The GPU's memory and compute rows. */
static int gpu_compute_rows(struct zs_table *t, const struct zs_gpu *g)
{
    const struct zs_curve *ge = &g->gemm_eff;
    char a[32];
    int rc = 0;

    rc |= row(t, "HBM (torch total_memory)", "%s",
              zs_fmt_bytes(a, sizeof a, g->hbm_bytes));
    rc |= row(t, "CUDA context + cuBLAS", "%s per process",
              zs_fmt_bytes(a, sizeof a, g->cuda_context_bytes));
    rc |= row(t, "NCCL buffers", "%s per process",
              zs_fmt_bytes(a, sizeof a, g->nccl_bytes));
    rc |= row(t, "usable for tensors", "%s",
              zs_fmt_bytes(a, sizeof a, zs_gpu_usable_bytes(g)));
    rc |=
        row(t, "peak bf16 (dense)", "%.0f TFLOP/s", g->peak_bf16_flops / 1e12);
    if (g->sms > 0)
        rc |= row(t, "GEMM efficiency",
                  "by shape: tiles in waves over %d SMs, at most %.1f%% "
                  "(MAMF)",
                  (int)g->sms, 100 * ge->y[ge->n - 1]);
    else
        rc |= row(t, "GEMM efficiency",
                  "%.1f%% at 1e%d FLOP ... %.1f%% at 1e%d FLOP", 100 * ge->y[0],
                  (int)lround(log10(ge->x[0])), 100 * ge->y[ge->n - 1],
                  (int)lround(log10(ge->x[ge->n - 1])));
    if (g->peak_fp8_flops > 0) /* profile group "fp8" (hw.h) */
        rc |= row(t, "peak fp8 (dense)",
                  "%.0f TFLOP/s, GEMMs at most %.1f%% (fp8 MAMF)",
                  g->peak_fp8_flops / 1e12, 100 * g->fp8_mamf);
    if (g->gemm_sustained > 0) { /* profile group "sustained" (hw.h) */
        char f8[64] = "";
        if (g->fp8_sustained > 0)
            snprintf(f8, sizeof f8, ", fp8 %.1f%%", 100 * g->fp8_sustained);
        rc |= row(t, "GEMMs at the power limit",
                  "bf16 %.1f%%%s of peak sustained (measured), x %.3f in a "
                  "training step (fitted)",
                  100 * g->gemm_sustained, f8,
                  g->sustained_node > 0 ? g->sustained_node : 1);
    }
    if (g->attn_eff_by_seq.n > 0) {
        const struct zs_curve *ac = &g->attn_eff_by_seq;
        rc |= row(t, "flash-attention efficiency",
                  "%.0f%% at seq %.0f ... %.0f%% at seq %.0f (fwd+bwd, "
                  "causal)",
                  100 * ac->y[0], ac->x[0], 100 * ac->y[ac->n - 1],
                  ac->x[ac->n - 1]);
    } else
        rc |= row(t, "flash-attention efficiency", "%.0f%%", 100 * g->attn_eff);
    if (g->attn_triton_eff_by_seq.n > 0) { /* --attention triton (hw.h) */
        const struct zs_curve *tc = &g->attn_triton_eff_by_seq;
        rc |= row(t, "flash-attn 1 Triton",
                  "%.0f%% at seq %.0f ... %.0f%% at seq %.0f (fwd+bwd, "
                  "causal; --attention triton)",
                  100 * tc->y[0], tc->x[0], 100 * tc->y[tc->n - 1],
                  tc->x[tc->n - 1]);
    }
    return rc;
}

/* The GPU's links and overheads rows. */
static int gpu_transfer_rows(struct zs_table *t, const struct zs_gpu *g)
{
    char a[32], b[32];
    int rc = 0;

    rc |= row(t, "HBM bandwidth", "%s (%.0f%% achievable)",
              fmt_rate(a, sizeof a, g->hbm_bytes_per_s), 100 * g->hbm_eff);
    rc |= row(t, "memory-bound kernels", "%.0f%% of HBM bandwidth",
              100 * g->membound_eff);
    if (g->nvlink_bytes_per_s > 0)
        rc |= row(t, "NVLink per direction", "%s",
                  fmt_rate(a, sizeof a, g->nvlink_bytes_per_s));
    else
        rc |= row(t, "NVLink per direction", "none");
    rc |= row(t, "PCIe pinned H2D / D2H", "%s / %s",
              fmt_rate(a, sizeof a, g->pcie_h2d_bytes_per_s),
              fmt_rate(b, sizeof b, g->pcie_d2h_bytes_per_s));
    rc |= row(t, "PCIe pageable", "%s",
              fmt_rate(a, sizeof a, g->pcie_pageable_bytes_per_s));
    rc |= row(t, "PCIe both directions busy", "H2D x%.2f, D2H x%.2f",
              g->pcie_bidir_factor, g->pcie_bidir_d2h_factor);
    if (g->overlap_compute_factor < 1)
        rc |= row(t, "compute under a collective", "x%.3f",
                  g->overlap_compute_factor);
    else
        rc |= row(t, "compute under a collective", "x1 (not modelled)");
    rc |= row(t, "kernel launch overhead", "%s",
              zs_fmt_seconds(a, sizeof a, zs_ns_to_s(g->launch_overhead_ns)));
    return rc;
}

static int gpu_block(const struct zs_gpu *g)
{
    struct zs_table *t = zs_table_new(2, "ll");
    int rc;
    if (!t)
        return ZS_ENOMEM;
    printf("\ngpu %s\n", g->name);
    rc = gpu_compute_rows(t, g);
    rc |= gpu_transfer_rows(t, g);
    return finish(t, rc);
}

static int node_block(const struct zs_node *n)
{
    struct zs_table *t = zs_table_new(2, "ll");
    char a[32], b[32];
    int rc = 0;

    if (!t)
        return ZS_ENOMEM;
    printf("\nnode %s\n", n->name);
    rc |= row(t, "GPUs", "%d of %d used", n->gpus_per_node, n->gpus_installed);
    rc |= row(t, "host RAM", "%s (%s reserved for the OS)",
              zs_fmt_bytes(a, sizeof a, n->host_ram_bytes),
              zs_fmt_bytes(b, sizeof b, n->host_reserved_bytes));
    rc |= row(t, "CPU cores", "%d", n->cpu_cores);
    rc |= row(t, "host memory bandwidth", "%s",
              fmt_rate(a, sizeof a, n->host_mem_bytes_per_s));
    /* hw.h ZS_HOST_STREAM_EFF: what the optimizer's CPU passes reach */
    rc |= row(t, "CPU optimizer streams at", "%.2f of it, %s (fitted)",
              n->host_stream_eff,
              fmt_rate(b, sizeof b,
                       n->host_mem_bytes_per_s * n->host_stream_eff));
    rc |= row(t, "fused CPU Adam per thread", "%.2f GB/s (28 B per element)",
              n->cpu_adam_fused_bytes_per_s_per_thread / 1e9);
    rc |= row(t, "torch CPU op per thread", "%.2f GB/s",
              n->torch_op_bytes_per_s_per_thread / 1e9);
    rc |= row(t, "unbound ranks' slowdown", "%.2fx", n->cpu_oversubscription);
    rc |= row(t, "GPUs per PCIe switch", "%d (uplink %s per direction)",
              n->gpus_per_pcie_switch,
              fmt_rate(a, sizeof a, n->pcie_switch_uplink_bytes_per_s));
    rc |=
        row(t, "compute NICs", "%d x %s (inter-node efficiency %.2f)", n->nics,
            fmt_rate(a, sizeof a, n->nic_bytes_per_s), n->inter_node_eff);
    rc |=
        row(t, "collective latency", "%s per call",
            zs_fmt_seconds(a, sizeof a, zs_ns_to_s(n->collective_latency_ns)));
    if (n->nvme_drives > 0)
        rc |=
            row(t, "local NVMe (swap files)",
                "%d drives, %s read, %s write (node, 1 MiB aio)",
                n->nvme_drives, fmt_rate(a, sizeof a, n->nvme_read_bytes_per_s),
                fmt_rate(b, sizeof b, n->nvme_write_bytes_per_s));
    return finish(t, rc);
}

/* nccl-tests busbw of the four collectives at a few message sizes. */
static int busbw_block(const struct zs_cluster *c)
{
    static const double sizes[] = {1.0 * ZS_MiB,  16.0 * ZS_MiB,
                                   64.0 * ZS_MiB, 256.0 * ZS_MiB,
                                   1.0 * ZS_GiB,  16.0 * ZS_GiB};
    static const enum zs_coll colls[] = {ZS_COLL_ALLGATHER,
                                         ZS_COLL_REDUCESCATTER,
                                         ZS_COLL_ALLREDUCE, ZS_COLL_ALLTOALL};
    int total = c->nodes * c->node.gpus_per_node, rc = 0;
    struct zs_table *t = zs_table_new(5, "lrrrr");

    if (!t)
        return ZS_ENOMEM;
    printf("\ncollective bus bandwidth, GB/s (nccl-tests busbw), %d GPU%s "
           "over %d node%s:\n",
           total, total == 1 ? "" : "s", c->nodes, c->nodes == 1 ? "" : "s");
    zs_table_header(t);
    rc |= zs_table_rowf(t, "size\tall-gather\treduce-scatter\tall-reduce\t"
                           "all-to-all");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char v[4][32], sz[32];
        for (int k = 0; k < 4; k++)
            fmt_gb(v[k], sizeof v[k],
                   zs_cluster_busbw(c, colls[k], sizes[i], total, c->nodes));
        rc |= zs_table_rowf(t, "%s\t%s\t%s\t%s\t%s",
                            zs_fmt_bytes(sz, sizeof sz, (int64_t)sizes[i]),
                            v[0], v[1], v[2], v[3]);
    }
    return finish(t, rc);
}

int zs_hwout_text(const struct zs_cluster *c, int64_t host_ram_override)
{
    const struct zs_node *n = &c->node;
    char a[32], b[32];
    int rc;

    cluster_header(c, host_ram_override);
    rc = gpu_block(&n->gpu);
    if (!rc)
        rc = node_block(n);
    if (!rc)
        rc = busbw_block(c);
    if (rc)
        return rc;
    if (c->nodes > 1) {
        int per = n->nics < n->gpus_per_node ? n->nics : n->gpus_per_node;
        printf("  across nodes: min(in-node curve, %d NICs x %s x %.2f = %s)\n",
               per, fmt_rate(a, sizeof a, n->nic_bytes_per_s),
               n->inter_node_eff,
               fmt_rate(b, sizeof b,
                        per * n->nic_bytes_per_s * n->inter_node_eff));
    }

    printf("\nsources:\n");
    print_sources("gpu", &n->gpu.sources);
    print_sources("node", &n->sources);
    return 0;
}

/* ---- hw show: JSON ------------------------------------------------------ */

/* Numbers: integers exactly, others with 6 significant digits ('.' always:
 * main runs in the C locale). */
static void jnum(double v)
{
    if (!isfinite(v))
        printf("null");
    else if (fabs(v) < 9e15 && v == floor(v))
        printf("%.0f", v);
    else
        printf("%.6g", v);
}

static void jcurve(const char *key, const char *xname, const char *yname,
                   const struct zs_curve *cv, int last)
{
    printf("    \"%s\": {\"%s\": [", key, xname);
    for (int i = 0; i < cv->n; i++) {
        if (i)
            printf(", ");
        jnum(cv->x[i]);
    }
    printf("], \"%s\": [", yname);
    for (int i = 0; i < cv->n; i++) {
        if (i)
            printf(", ");
        jnum(cv->y[i]);
    }
    printf("]}%s\n", last ? "" : ",");
}

/* Every scalar figure, one `  "key": number,` line each. */
static void json_numbers(const struct zs_cluster *c)
{
    const struct zs_node *n = &c->node;
    const struct zs_gpu *g = &n->gpu;
    const struct {
        const char *key;
        double v;
    } nums[] = {
        {"gpus_per_node", n->gpus_per_node},
        {"node_gpus_installed", n->gpus_installed},
        {"nodes", c->nodes},
        {"hbm_bytes", (double)g->hbm_bytes},
        {"usable_hbm_bytes", (double)zs_gpu_usable_bytes(g)},
        {"cuda_context_bytes", (double)g->cuda_context_bytes},
        {"nccl_bytes", (double)g->nccl_bytes},
        {"peak_bf16_flops", g->peak_bf16_flops},
        {"attn_eff", g->attn_eff},
        {"sms", (double)g->sms},
        {"hbm_bytes_per_s", g->hbm_bytes_per_s},
        {"hbm_eff", g->hbm_eff},
        {"membound_eff", g->membound_eff},
        {"nvlink_bytes_per_s", g->nvlink_bytes_per_s},
        {"pcie_h2d_bytes_per_s", g->pcie_h2d_bytes_per_s},
        {"pcie_d2h_bytes_per_s", g->pcie_d2h_bytes_per_s},
        {"pcie_pageable_bytes_per_s", g->pcie_pageable_bytes_per_s},
        {"pcie_bidir_factor", g->pcie_bidir_factor},
        {"pcie_bidir_d2h_factor", g->pcie_bidir_d2h_factor},
        {"overlap_compute_factor", g->overlap_compute_factor},
        {"launch_overhead_s", zs_ns_to_s(g->launch_overhead_ns)},
        {"host_ram_bytes_per_node", (double)n->host_ram_bytes},
        {"host_reserved_bytes_per_node", (double)n->host_reserved_bytes},
        {"cpu_cores_per_node", n->cpu_cores},
        {"host_mem_bw_bytes_per_s", n->host_mem_bytes_per_s},
        {"host_stream_eff", n->host_stream_eff},
        {"cpu_adam_fused_bytes_per_s_per_thread",
         n->cpu_adam_fused_bytes_per_s_per_thread},
        {"torch_op_bytes_per_s_per_thread", n->torch_op_bytes_per_s_per_thread},
        {"cpu_oversubscription", n->cpu_oversubscription},
        {"gpus_per_pcie_switch", n->gpus_per_pcie_switch},
        {"pcie_switch_uplink_bytes_per_s", n->pcie_switch_uplink_bytes_per_s},
        {"nics_per_node", n->nics},
        {"nic_bytes_per_s", n->nic_bytes_per_s},
        {"inter_node_eff", n->inter_node_eff},
        {"collective_latency_s", zs_ns_to_s(n->collective_latency_ns)},
        {"nvme_drives_per_node", n->nvme_drives},
        {"nvme_read_bytes_per_s_per_node", n->nvme_read_bytes_per_s},
        {"nvme_write_bytes_per_s_per_node", n->nvme_write_bytes_per_s},
        {"peak_fp8_flops", g->peak_fp8_flops}, /* 0: no fp8 figures */
        {"fp8_mamf", g->fp8_mamf},
        {"gemm_sustained", g->gemm_sustained}, /* 0: the burst MAMF */
        {"fp8_sustained", g->fp8_sustained},
        {"sustained_node", g->sustained_node},
    };

    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        printf("  \"%s\": ", nums[i].key);
        jnum(nums[i].v);
        printf(",\n");
    }
}

static void json_curves(const struct zs_node *n)
{
    const struct zs_gpu *g = &n->gpu;
    printf("  \"curves\": {\n");
    jcurve("gemm_eff", "flops", "eff", &g->gemm_eff, 0);
    if (g->attn_eff_by_seq.n > 0)
        jcurve("attn_eff_by_seq", "seq", "eff", &g->attn_eff_by_seq, 0);
    if (g->attn_triton_eff_by_seq.n > 0)
        jcurve("attn_triton_eff_by_seq", "seq", "eff",
               &g->attn_triton_eff_by_seq, 0);
    jcurve("allgather_busbw", "bytes", "bytes_per_s", &n->allgather_busbw, 0);
    jcurve("reducescatter_busbw", "bytes", "bytes_per_s",
           &n->reducescatter_busbw, 0);
    jcurve("allreduce_busbw", "bytes", "bytes_per_s", &n->allreduce_busbw, 0);
    jcurve("alltoall_busbw", "bytes", "bytes_per_s", &n->alltoall_busbw,
           n->allreduce_rank_scale.n == 0);
    if (n->allreduce_rank_scale.n > 0)
        jcurve("allreduce_rank_scale", "gpus", "factor",
               &n->allreduce_rank_scale, 1);
    printf("  },\n");
}

/* "gpu.<what>" then "node.<what>": the text of each figure's source. */
static void json_sources(const struct zs_node *n)
{
    printf("  \"sources\": {\n");
    for (int k = 0; k < 2; k++) {
        const struct zs_hw_sources *s = k ? &n->sources : &n->gpu.sources;
        for (int i = 0; i < s->n; i++) {
            char key[64];
            snprintf(key, sizeof key, "%s.%s", k ? "node" : "gpu",
                     s->item[i].what);
            printf("    ");
            zs_json_put_str(stdout, key);
            printf(": ");
            zs_json_put_str(stdout, s->item[i].text);
            printf("%s\n", (k == 1 && i == s->n - 1) ? "" : ",");
        }
    }
    printf("  }\n");
}

void zs_hwout_json(const struct zs_cluster *c)
{
    printf("{\n  \"schema\": \"zsim.hw/1\",\n");
    zs_emit_jstr(stdout, "spec", c->spec);
    zs_emit_jstr(stdout, "gpu", c->node.gpu.name);
    zs_emit_jstr(stdout, "node", c->node.name);
    json_numbers(c);
    json_curves(&c->node);
    json_sources(&c->node);
    printf("}\n");
}
