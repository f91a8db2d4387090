/*
 * hw.h — hardware profiles: GPUs, nodes, clusters, and the figures the
 * engine turns into link capacities and task times.
 *
 * Profiles are JSON files under ZS_SOURCE_DIR "/hwprofiles" (or $ZSIM_HWPROFILES):
 * gpus/<name>.json and nodes/<name>.json.  Every figure in them carries its
 * source in a "source" string beside it (reference-data.md §C, or our own
 * measurements under validation/).  A SPEC names a cluster: "8xH100",
 * "2x8xH100" (nodes x GPUs-per-node x GPU), "4xA100-80GB", "8xH200",
 * "8xL40S".  GPU names are case-insensitive and have aliases (H100 =
 * H100-SXM-80GB).
 *
 * Curves map a size to a rate or efficiency and are interpolated linearly in
 * log2(size) (GSL), clamped at the ends.
 */
#ifndef ZS_HW_H
#define ZS_HW_H

#include "util/err.h"

#include <stdint.h>

#define ZS_CURVE_MAX 24

struct zs_curve {
    int n;                  /* points, x strictly increasing, n >= 1 */
    double x[ZS_CURVE_MAX]; /* size: bytes, or FLOPs for GEMM efficiency */
    double y[ZS_CURVE_MAX]; /* rate (bytes/s) or efficiency (0..1] */
};

/* Linear interpolation in log2(x), clamped to the end points. */
double zs_curve_eval(const struct zs_curve *c, double x);

struct zs_gpu {
    char name[32];                  /* canonical: "H100-SXM-80GB" */
    int64_t hbm_bytes;              /* what torch.cuda.get_device_properties reports */
    int64_t cuda_context_bytes;     /* CUDA context + cuBLAS workspace, per process */
    int64_t nccl_bytes;             /* NCCL communicator buffers, per process */
    double peak_bf16_flops;         /* dense spec peak, FLOP/s */
    struct zs_curve gemm_eff;       /* achieved fraction of peak vs GEMM FLOPs (2mnk) */
    double attn_eff;                /* flash-attention fraction of peak (fwd; bwd the same) */
    double hbm_bytes_per_s;         /* spec */
    double hbm_eff;                 /* achievable fraction for memory-bound kernels */
    double nvlink_bytes_per_s;      /* per direction, per GPU; 0: none */
    double pcie_h2d_bytes_per_s;    /* pinned host->device, measured, large copies */
    double pcie_d2h_bytes_per_s;    /* pinned device->host */
    double pcie_pageable_bytes_per_s;/* pageable copies (staged through a pinned bounce buffer) */
    double pcie_bidir_factor;       /* fraction of each direction kept when both are busy */
    int64_t launch_overhead_ns;     /* per kernel launch on the host */
};

struct zs_node {
    char name[48];                 /* "DGX H100" */
    struct zs_gpu gpu;
    int gpus_per_node;
    int64_t host_ram_bytes;        /* installed */
    int64_t host_reserved_bytes;   /* OS, page cache floor, daemons: not usable */
    int cpu_cores;                 /* physical cores, all sockets */
    double host_mem_bytes_per_s;   /* achievable memory bandwidth (STREAM-like), all sockets */
    double cpu_adam_bytes_per_s_per_core; /* DeepSpeedCPUAdam traffic one core sustains */
    double torch_adam_bytes_per_s_per_core; /* torch CPU AdamW (FSDP2) per core */
    int gpus_per_pcie_switch;      /* GPUs behind one switch uplink (1: direct) */
    double pcie_switch_uplink_bytes_per_s; /* per direction */
    int nics;                      /* compute NICs per node */
    double nic_bytes_per_s;        /* per NIC per direction */
    /* Measured bus bandwidth (nccl-tests busbw) within one node, vs message bytes. */
    struct zs_curve allgather_busbw, reducescatter_busbw, allreduce_busbw, alltoall_busbw;
    double inter_node_eff;         /* fraction of NIC bandwidth achieved as busbw */
    int64_t collective_latency_ns; /* per collective call, base */
};

struct zs_cluster {
    char spec[64];   /* as given, e.g. "2x8xH100" */
    struct zs_node node;
    int nodes;
};

/* Resolves SPEC, then applies overrides: host_ram_bytes > 0 replaces the
 * node's RAM; nodes > 0 replaces the node count.  Errors are ZS_EINPUT or
 * ZS_EUSAGE with exact one-line messages (e.g. "invalid GPU count 0 in
 * '0x8xH100': must be in [1, 64]"). */
int zs_hw_resolve(const char *spec, int64_t host_ram_bytes, int nodes,
                  struct zs_cluster *out, struct zs_err *err);
int zs_hw_load_gpu(const char *path, struct zs_gpu *out, struct zs_err *err);
int zs_hw_load_node(const char *path, struct zs_node *out, struct zs_err *err);
/* Names of GPU and node profiles (static storage). */
int zs_hw_list(const char *const **gpus, int *ngpus, const char *const **nodes,
               int *nnodes);

/* Usable HBM for tensors after the CUDA context and NCCL buffers. */
int64_t zs_gpu_usable_bytes(const struct zs_gpu *g);

/* Time of one GEMM [m x k] x [k x n] in bf16 on this GPU. */
double zs_gpu_gemm_s(const struct zs_gpu *g, double m, double n, double k);
/* Time of a memory-bound kernel moving `bytes` through HBM. */
double zs_gpu_membound_s(const struct zs_gpu *g, double bytes);

enum zs_coll { ZS_COLL_ALLGATHER, ZS_COLL_REDUCESCATTER, ZS_COLL_ALLREDUCE, ZS_COLL_ALLTOALL };

/* Bus bandwidth (bytes/s) of a collective over `ranks` GPUs spanning `nodes`
 * nodes with total message `bytes` (the full gathered/reduced tensor), per
 * nccl-tests' definition: time = bytes * (ranks-1)/ranks / busbw for
 * all-gather and reduce-scatter, 2x that for all-reduce. */
double zs_cluster_busbw(const struct zs_cluster *c, enum zs_coll kind,
                        double bytes, int ranks, int nodes);
/* Time of that collective, latency included. */
double zs_cluster_collective_s(const struct zs_cluster *c, enum zs_coll kind,
                               double bytes, int ranks, int nodes);

#endif
