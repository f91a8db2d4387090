/*
 * hw.h — hardware profiles: GPUs, nodes, clusters, and the figures the
 * engine turns into link capacities and task times.
 *
 * Profiles are JSON files under ZS_SOURCE_DIR "/hwprofiles" (or
 * $ZSIM_HWPROFILES): gpus/<name>.json and nodes/<name>.json.  Every figure in
 * them carries its source in a "source" string beside it (reference-data.md §C,
 * or our own measurements under validation/).  A SPEC names a cluster:
 * "8xH100", "2x8xH100" (nodes x GPUs-per-node x GPU), "4xA100-80GB", "8xH200",
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

/* The fraction of HBM bandwidth that the memory-bound kernels of a training
 * step without a measured rate reach (FSDP and ZeRO copies, the optimizer,
 * eager attention's kernels over the scores, LoRA's sums, the embedding) on
 * every GPU whose profile gives no hbm.membound_eff.  The element-wise,
 * norm, RoPE and loss kernels run at their measured fractions instead
 * (sched/kernels.c "Achieved bandwidth", from Liger-Kernel's benchmarks).
 * Fitted, not measured: `zsim calibrate --published validation/published
 * --out validation/calibration/published.json` (GSL least squares on the
 * step times and tokens/s of llm-foundry, the fit part) gave 0.390 +- 0.070
 * against the 0.85 [assumption] used before, when it covered the
 * element-wise kernels too, and cut the check part's (torchtitan,
 * torchtune, DeepSpeed) tokens/s error from median 17.0 % / p90 43.0 % to
 * 3.4 % / 22.9 % (docs/validation.md, "Calibrating on the published
 * corpus").  Re-fitted on the kernels that still use it it gives 0.234 +-
 * 0.033, not adopted: this project's harness, replaying a step on an H100
 * with one contiguous memory pass per such piece, measured them at 2.0-2.85
 * TB/s, 0.60-0.85 of the bandwidth (validation/h100-*.measured.json), so
 * the fit would be absorbing time missing elsewhere (docs/kernels.md).  It stands for what the byte counts
 * miss, not for a bandwidth; [assumption] carried to GPUs outside the
 * corpus (H200, L40S). */
#define ZS_MEMBOUND_EFF 0.39

/* Host time of one counted call of DeepSpeed ZeRO-3's hooks into PyTorch,
 * with its Python (zs_gpu.hook_call_ns; sched/hooks.c counts the calls from
 * DeepSpeed's code).  Fitted, not measured: `zsim calibrate --published
 * validation/published --constants hook_call_ns` (split by source) gave
 * 6661 +- 611 ns on the fit part, whose host-bound rows are Qwen's README
 * (DeepSpeed 0.12.3 [assumption], A100 hosts); with the calls counted and
 * this value the fit part's step time went from median 23.0 % / p90 43.6 %
 * (at a 10 us start) to 8.0 % / 24.1 %, and on the check part FlagPerf's
 * ChatGLM3-6B H100 row (DeepSpeed 0.11.1, the one check row the host
 * reaches) from +13.9 % (the 40 us per module before) to -0.0 % without
 * moving the others by more than 0.1 point.  Fitted on Qwen-7B alone it is
 * 7052 +- 151 ns, on Qwen-72B LoRA alone 6180 +- 846, on FlagPerf alone
 * 6722 +- 2663, split by hash 6918 +- 577 (docs/validation.md,
 * "Calibrating on the published corpus").  In range of what is measured
 * per call elsewhere:
 * PyTorch PR #133369 saves 0.09 ms by replacing 9 per-parameter .to(bf16)
 * dispatches with 3 (15 us per dispatch that allocates and launches a
 * kernel), pytorch #41383 measures 2-7 us for a plain op from Python. */
#define ZS_HOOK_CALL_NS 6660.0

/* The fraction of the node profile's host memory bandwidth (cpu
 * mem_bytes_per_s, STREAM-like) that the CPU passes of an optimizer step
 * stream at, every local rank stepping at once: DeepSpeedCPUAdam or torch's
 * AdamW on the CPU and the torch ops around them (sched/emit.c zs_t_cpu:
 * each byte such a pass moves holds 1/eff bytes of the rank's share of the
 * host memory bus, so a copy beside it contends the same way).  Fitted, not
 * measured: `zsim calibrate --published validation/published --constants
 * host_stream_eff --out validation/calibration/host-stream-eff.json`
 * (split by source; the fit part's host-bound rows are DeepSpeed's
 * ZenFlow/core-binding blog, ZeRO-Offload with DeepSpeedCPUAdam on 2x EPYC
 * 7742) gives 0.298 +- 0.032; the check part's OPT-Benchmark rows (DeepSpeed
 * 0.6.5, torch 1.11's for-loop AdamW on the CPU, another host) go from
 * median 18.8 % / p90 20.1 % to 8.3 % / 23.3 %.  Fitted on OPT-Benchmark
 * alone it is 0.350 +- 0.036, split by hash 0.401 +- 0.055.  Before it the
 * CPU passes ran at the whole STREAM-like figure (1.0), and the ZeRO-Offload
 * rows were 32-41 % short.  What takes the difference is not known.  Not
 * Adam's access pattern alone: on this project's harness host (a 16-vCPU
 * Xeon guest, validation/host/README.md) fused AdamW at 16 threads streamed
 * at 0.91 of what g.mul_ did (135 against 149 GB/s) and the for-loop at
 * 0.68.  The candidates, none measured on the corpus's hosts: their real
 * bandwidth below the profiles' 0.75 of peak, pages placed by first touch
 * with no NUMA binding (DeepSpeed's core binding does not pass numactl -m,
 * its blog says), the fp32 grads in pinned pages allocated by one thread.
 * In range of DeepSpeed issue #6834
 * (Qwen-72B ZeRO-3 offload on 4 nodes of 8 A100: "~10s" in the engine's
 * step() with CPU Adam, 2.3e9 elements per rank at 42 B each is 76 GB/s
 * per node, 0.19 of a DGX A100's peak [assumption: DGX A100 hosts, not
 * stated]).  [assumption] carried to the Xeon nodes (DGX H100, HGX H200),
 * where no run of the corpus is host-bound. */
#define ZS_HOST_STREAM_EFF 0.30

/* The fraction of a profile's sustained GEMM rates (group "sustained":
 * matmul-only measurements, one GPU) that its GEMMs hold inside a training
 * step on a node: what runs beside the GEMMs under the same board power
 * limit (the HBM traffic of the kernels between them, NCCL's kernels and
 * NVLink during overlap), clocks settling past the benchmarks' windows (on
 * an H200, 745-752 TF over 0.3 s against 728-735 over 4 s), the slowest
 * GPU of a synchronous node (a node's GPUs spread 3.4-4.9 % in MSMF), real
 * tensors' bit patterns against randn; stas00/ml-engineering mamf-finder
 * v4, benchmarks/README.md.  Fitted, not measured: `zsim calibrate
 * --published validation/published --constants sustained_node --exclude
 * 'llmfoundry-.*-seq(16384|32768|65536)'` (the long-sequence rows' known
 * attention gap, flash-attn 1.x's Triton kernel charged slower than those
 * runs imply, left out so that it does not bend a GEMM constant) gives
 * 0.950 +- 0.025 and cuts the check part's (FlagPerf, OPT-Benchmark,
 * Qwen, torchtitan) tokens/s error from median 4.8 % / p90 13.1 % to
 * 2.3 % / 9.2 %, step time 9.9 % / 21.0 % to 8.6 % / 20.0 %; with those
 * rows it gives 0.975 +- 0.028 (docs/validation.md, "Calibrating on the
 * published corpus").  Applies only where a profile has a sustained
 * group. */
#define ZS_SUSTAINED_NODE 0.95

struct zs_curve {
    int n;                  /* points, x strictly increasing, n >= 1 */
    double x[ZS_CURVE_MAX]; /* size: bytes, or FLOPs for GEMM efficiency */
    double y[ZS_CURVE_MAX]; /* rate (bytes/s) or efficiency (0..1] */
    /* Private cache, filled by zs_curve_prepare (the loaders call it):
     * lx[i] = log2(x[i]) when lx_n == n.  A curve built by hand with
     * lx_n == 0 still evaluates correctly, only a little slower. */
    int lx_n;
    double lx[ZS_CURVE_MAX];
};

/* Linear interpolation in log2(x), clamped to the end points.  No
 * allocation; O(log n).  n <= 0 gives 0. */
double zs_curve_eval(const struct zs_curve *c, double x);
/* Fills the log2 cache after x[] or n changed. */
void zs_curve_prepare(struct zs_curve *c);

/* Where each figure of a profile comes from: one entry per JSON group
 * ("memory", "collectives.allreduce_busbw", ...), copied from its
 * "source" string. */
#define ZS_HW_SOURCES_MAX 12
#define ZS_HW_SOURCE_CAP 240
struct zs_hw_source {
    char what[40];               /* group path in the profile */
    char text[ZS_HW_SOURCE_CAP]; /* citation, or "[assumption] ..." */
};
struct zs_hw_sources {
    int n;
    struct zs_hw_source item[ZS_HW_SOURCES_MAX];
};

struct zs_gpu {
    char name[32];     /* canonical: "H100-SXM-80GB" */
    int64_t hbm_bytes; /* what torch.cuda.get_device_properties reports */
    int64_t
        cuda_context_bytes; /* CUDA context + cuBLAS workspace, per process */
    int64_t nccl_bytes;     /* NCCL communicator buffers, per process */
    double peak_bf16_flops; /* dense spec peak, FLOP/s */
    struct zs_curve
        gemm_eff;    /* achieved fraction of peak vs GEMM FLOPs (2mnk) */
    double attn_eff; /* flash-attention fraction of peak (fwd; bwd the same) */
    double hbm_bytes_per_s; /* spec */
    double hbm_eff;         /* achievable fraction for memory-bound kernels */
    double nvlink_bytes_per_s; /* per direction, per GPU; 0: none */
    double
        pcie_h2d_bytes_per_s; /* pinned host->device, measured, large copies */
    double pcie_d2h_bytes_per_s;      /* pinned device->host */
    double pcie_pageable_bytes_per_s; /* pageable copies (staged through a
                                         pinned bounce buffer) */
    double pcie_bidir_factor;   /* fraction of H2D's rate kept while a D2H copy
                                   runs (nvbandwidth #53); alone: all of it */
    int64_t launch_overhead_ns; /* per kernel launch on the host */
    /* Added after the first contract: */
    double
        pcie_bidir_d2h_factor; /* same for D2H (pcie_bidir_factor is H2D's) */
    /* Streaming multiprocessors (datasheet); 0: no shape model, GEMMs use
     * the gemm_eff curve by FLOPs alone (zs_gpu_gemm_s). */
    int64_t sms;
    /* Flash-attention (FA2, SDPA's flash backend) forward+backward fraction
     * of peak vs sequence length, causal; n == 0: attn_eff at every
     * length; flat beyond its last point. */
    struct zs_curve attn_eff_by_seq;
    /* Fraction of its alone rate that compute on the compute stream keeps
     * while an NCCL collective (all-gather, reduce-scatter, all-reduce) runs
     * on this GPU: NCCL's kernels hold SMs (one CTA per channel) and HBM
     * bandwidth.  1: no interference modelled.  docs/engine.md. */
    double overlap_compute_factor;
    /* Fraction of hbm_bytes_per_s that the memory-bound kernels of a step
     * without a measured rate reach (copies, the optimizer:
     * zs_gpu_membound_s; the element-wise, norm and loss kernels have
     * measured fractions, sched/kernels.c); the GEMM roofline keeps
     * hbm_eff.  Profile key hbm.membound_eff, absent:
     * ZS_MEMBOUND_EFF; 0 in a hand-built struct: hbm_eff. */
    double membound_eff;
    /* FP8 tensor cores (profile group "fp8", optional; 0: none, --fp8 is
     * refused): the dense e4m3/e5m2 peak (datasheet) and the fraction of it
     * that the largest GEMMs reach (measured, the fp8 counterpart of the
     * gemm_eff curve's top point, MAMF).  zs_gpu_gemm_fp8_s. */
    double peak_fp8_flops;
    double fp8_mamf;
    /* Host time of one call from a framework's Python hooks into PyTorch
     * (an operator dispatch, a stream or event call, an autograd Function,
     * a collective's launch), with the Python around it, on the thread that
     * launches this GPU's kernels: DeepSpeed ZeRO-3's hooks are counted in
     * such calls (sched/hooks.c).  Not a profile key: ZS_HOOK_CALL_NS; 0 in a
     * hand-built struct: the same. */
    double hook_call_ns;
    /* flash-attn 1.x's Triton kernel (llm-foundry's attn_impl: triton),
     * forward+backward fraction of peak vs sequence length, causal: profile
     * curve attn_triton_eff_by_seq (optional; flash-attn 1.x CUDA's measured
     * rate, figures.c); n == 0: zs_gpu_attn_triton_eff's fallback. */
    struct zs_curve attn_triton_eff_by_seq;
    /* Fractions of the bf16 and fp8 peaks that large GEMMs hold when they
     * run back to back at the board's power limit (profile group
     * "sustained", optional; 0: absent, the burst ceilings MAMF and
     * fp8_mamf stand).  The MAMF of a profile is a short burst at the boost
     * clock; a training step runs its GEMMs for seconds, long enough for the
     * power limit to lower the clock (stas00/ml-engineering, mamf-finder v4:
     * H200 bf16 MSMF 745 against MAMF 848 TF; Horace He, thonking.ai 2024:
     * A100 8192^3 257 TF on randn data, 295 on zeros).  The GEMM shape model
     * takes min(MAMF, sustained) as its ceiling (figures.c); the per-tile
     * main loop keeps the burst rate, so GEMMs too small or too short-K to
     * reach the power limit keep their speed.  docs/hw.md. */
    double gemm_sustained;
    double fp8_sustained;
    /* The fraction of those that GEMMs hold in a training step on a node
     * (not a profile key: ZS_SUSTAINED_NODE, fitted; 0 in a hand-built
     * struct: 1). */
    double sustained_node;
    struct zs_hw_sources sources; /* read-only */
};

struct zs_node {
    char name[48]; /* "DGX H100" */
    struct zs_gpu gpu;
    int gpus_per_node;      /* GPUs used per node (a SPEC like 4xA100 uses 4) */
    int64_t host_ram_bytes; /* installed (or --host-ram) */
    int64_t host_reserved_bytes; /* OS, page cache floor, daemons: not usable */
    int cpu_cores;               /* physical cores, all sockets */
    double host_mem_bytes_per_s; /* achievable memory bandwidth (STREAM-like),
                                    all sockets */
    /* The fraction of that bandwidth the CPU passes of an optimizer step
     * (zs_t_cpu: CPU Adam, the torch ops around it) stream at; hw.h
     * ZS_HOST_STREAM_EFF, set at load; 0 in a hand-built struct: 1. */
    double host_stream_eff;
    /* CPU optimizer rates per thread (docs/cpu-optimizer.md): a single-pass
     * vectorised Adam (DeepSpeedCPUAdam Step_AVX, torch AdamW(fused=True)),
     * counted at 28 B per fp32 element, and one eager torch element-wise op
     * (mul_, add_, copy_, the for-loop AdamW's passes), per byte it moves. */
    double cpu_adam_fused_bytes_per_s_per_thread;
    double torch_op_bytes_per_s_per_thread;
    double cpu_oversubscription; /* slowdown of unbound ranks sharing all
                                    hardware threads (>= 1) */
    int gpus_per_pcie_switch; /* GPUs behind one switch uplink (1: direct) */
    double pcie_switch_uplink_bytes_per_s; /* per direction */
    int nics;                              /* compute NICs per node */
    double nic_bytes_per_s;                /* per NIC per direction */
    /* Measured bus bandwidth (nccl-tests busbw) within one node, vs message
     * bytes. */
    struct zs_curve allgather_busbw, reducescatter_busbw, allreduce_busbw,
        alltoall_busbw;
    double inter_node_eff; /* fraction of NIC bandwidth achieved as busbw */
    int64_t collective_latency_ns; /* per collective call, base */
    /* Added after the first contract: */
    int gpus_installed; /* GPUs the node has (>= gpus_per_node) */
    /* All-reduce busbw factor vs GPUs taking part within the node (NVLS
     * gains with more GPUs); n == 0: factor 1. */
    struct zs_curve allreduce_rank_scale;
    /* Local NVMe for DeepSpeed swap files (profile "storage", optional):
     * drives and the node's sequential rates at aio's 1 MiB blocks, all
     * drives together; 0 drives: none known (--nvme-read/--nvme-write
     * supply them).  Shared by the node's ranks. */
    int nvme_drives;
    double nvme_read_bytes_per_s, nvme_write_bytes_per_s;
    char file[256];               /* profile path it was loaded from */
    struct zs_hw_sources sources; /* read-only */
};

struct zs_cluster {
    char spec[64]; /* as given, e.g. "2x8xH100" */
    struct zs_node node;
    int nodes;
};

/* Resolves SPEC, then applies overrides: host_ram_bytes > 0 replaces the
 * node's RAM; nodes > 0 replaces the node count.  Errors are ZS_EUSAGE for
 * the SPEC and overrides (e.g. "invalid node count 0 in '0x8xH100': must be
 * in [1, 1024]") and ZS_EINPUT for profile files, with exact one-line
 * messages (docs/hw.md).  A SPEC ending in ".json" is a node profile file.
 * *out is written only on success. */
int zs_hw_resolve(const char *spec, int64_t host_ram_bytes, int nodes,
                  struct zs_cluster *out, struct zs_err *err);
/* Host RAM per node (ram_bytes > 0 replaces the node's) and the part kept
 * from training for the OS (reserved_bytes > 0 replaces the profile's, e.g.
 * 32 GiB on a server, 8 GiB on a desktop); the RAM must exceed the reserve
 * in effect (ZS_EUSAGE otherwise, naming --host-reserved when it was
 * given).  zs_hw_resolve applies its host_ram_bytes through it. */
int zs_hw_set_host(struct zs_cluster *c, int64_t ram_bytes,
                   int64_t reserved_bytes, struct zs_err *err);
int zs_hw_load_gpu(const char *path, struct zs_gpu *out, struct zs_err *err);
int zs_hw_load_node(const char *path, struct zs_node *out, struct zs_err *err);
/* Names of GPU and node profiles (static storage). */
int zs_hw_list(const char *const **gpus, int *ngpus, const char *const **nodes,
               int *nnodes);

/* The profile registry (static storage): canonical GPU names, their file
 * stems under gpus/, aliases and default node; node names and files. */
struct zs_hw_gpu_entry {
    const char *name;       /* "H100-SXM-80GB" */
    const char *file;       /* "h100-sxm-80gb" -> gpus/h100-sxm-80gb.json */
    const char *node_file;  /* default node: "dgx-h100" */
    const char *aliases[6]; /* NULL-terminated */
};
struct zs_hw_node_entry {
    const char *name; /* "DGX H100" */
    const char *file; /* "dgx-h100" -> nodes/dgx-h100.json */
};
int zs_hw_gpu_entries(const struct zs_hw_gpu_entry **out);   /* returns count */
int zs_hw_node_entries(const struct zs_hw_node_entry **out); /* returns count */
/* Registry entry for a GPU name or alias (case-insensitive), or NULL. */
const struct zs_hw_gpu_entry *zs_hw_find_gpu(const char *name);
/* Profile directory: $ZSIM_HWPROFILES, else ZS_SOURCE_DIR "/hwprofiles". */
const char *zs_hw_dir(void);
/* Loads a registry node by file stem ("dgx-h100"). */
int zs_hw_load_node_named(const char *file, struct zs_node *out,
                          struct zs_err *err);

/* Parsers for the shared command-line flags, with exact messages
 * (ZS_EUSAGE): --host-ram SIZE in [1 GiB, 1 PiB], --nodes N in [1, 1024]. */
#define ZS_HW_NODES_MAX 1024
int zs_hw_parse_host_ram(const char *text, int64_t *bytes, struct zs_err *err);
int zs_hw_parse_nodes(const char *text, int *nodes, struct zs_err *err);

/* Usable HBM for tensors after the CUDA context and NCCL buffers. */
int64_t zs_gpu_usable_bytes(const struct zs_gpu *g);

/* Time of one GEMM [m x k] x [k x n] in bf16 on this GPU.  With g->sms > 0
 * the shape model below (figures.c: tiles, waves over the SMs, split-K, the
 * per-tile and per-kernel overheads, the HBM roofline) at the curve's
 * top efficiency (MAMF); without, the gemm_eff curve by FLOPs. */
double zs_gpu_gemm_s(const struct zs_gpu *g, double m, double n, double k);
/* `batch` GEMMs of one shape in one batched kernel (torch.matmul over
 * [b, h, s, d]); without sms, batch x zs_gpu_gemm_s. */
double zs_gpu_gemm_batched_s(const struct zs_gpu *g, double batch, double m,
                             double n, double k);
/* Time of one torch._scaled_mm [m x k] x [k x n] with both operands in
 * fp8 (1 B per element), scales per tensor and a bf16 result: the shape
 * model of zs_gpu_gemm_s at g->peak_fp8_flops and g->fp8_mamf.  Without a
 * shape model (sms == 0) the gemm_eff curve's fraction, rescaled from the
 * bf16 MAMF to the fp8 one.  0 when the GPU has no fp8 figures. */
double zs_gpu_gemm_fp8_s(const struct zs_gpu *g, double m, double n, double k);
/* The shape model's pieces, for reports and tests. */
struct zs_gemm_shape {
    int tile_m, tile_n; /* the CTA tile chosen (the fastest candidate) */
    double tiles;       /* [batch x] ceil(m/tile_m) x ceil(n/tile_n) */
    int split_k;        /* K split this many ways (1: none) */
    double waves;       /* ceil(tiles x split_k / sms) */
    double compute_s;   /* waves x one tile's main loop (+ split-K reduce) */
    double memory_s;    /* operands and result once through HBM */
    double time_s;      /* max(floor, overhead + max(compute, memory)) */
};
/* Fills *out (when not NULL) and returns the time; 0 for an empty GEMM or
 * a profile without sms. */
double zs_gpu_gemm_shape(const struct zs_gpu *g, double m, double n, double k,
                         struct zs_gemm_shape *out);
/* Flash-attention fraction of peak at sequence length seq: the
 * attn_eff_by_seq curve when the profile has one, else attn_eff. */
double zs_gpu_attn_eff(const struct zs_gpu *g, double seq);
/* flash-attn 1.x's CUDA kernel's rate as a fraction of FlashAttention-2's
 * on the A100 at sequence length seq (forward + backward, causal, head dim
 * 128): the fallback of zs_gpu_attn_triton_eff (figures.c). */
double zs_attn_triton_ratio(double seq);
/* flash-attn 1.x's Triton kernel (--attention triton) as a fraction of peak
 * at sequence length seq: the attn_triton_eff_by_seq curve when the profile
 * has one, else zs_gpu_attn_eff x zs_attn_triton_ratio. */
double zs_gpu_attn_triton_eff(const struct zs_gpu *g, double seq);
/* SDPA's flash backend against the flash-attn 2 package at sequence length
 * seq (forward + backward, causal, head dim 128; figures.c). */
double zs_attn_sdpa_ratio(double seq);
/* SDPA's flash backend (--attention sdpa) as a fraction of peak:
 * zs_gpu_attn_eff x zs_attn_sdpa_ratio. */
double zs_gpu_attn_sdpa_eff(const struct zs_gpu *g, double seq);
/* Time of a memory-bound kernel moving `bytes` through HBM. */
double zs_gpu_membound_s(const struct zs_gpu *g, double bytes);

enum zs_coll {
    ZS_COLL_ALLGATHER,
    ZS_COLL_REDUCESCATTER,
    ZS_COLL_ALLREDUCE,
    ZS_COLL_ALLTOALL,
    /* to one root rank (DeepSpeed ZeRO-1/2 before 0.12.4: one per
     * destination rank, stage_1_and_2.py allreduce_bucket); nccl-tests'
     * busbw of Reduce is its algbw, time = bytes / busbw
     * (NVIDIA/nccl-tests doc/PERFORMANCE.md at 03a204a, "Reduce": "all
     * data need to be sent to the root, hence t = S/B") */
    ZS_COLL_REDUCE
};

/* Bus bandwidth (bytes/s) of a collective over `ranks` GPUs spanning `nodes`
 * nodes with total message `bytes` (the full gathered/reduced tensor), per
 * nccl-tests' definition: time = bytes * (ranks-1)/ranks / busbw for
 * all-gather and reduce-scatter, 2x that for all-reduce, bytes / busbw for
 * reduce (the reduce-scatter curve: NCCL runs both as rings whose every link
 * carries the message once [assumption: no measured Reduce busbw in the
 * profiles]). */
double zs_cluster_busbw(const struct zs_cluster *c, enum zs_coll kind,
                        double bytes, int ranks, int nodes);
/* The bytes a collective of message `bytes` over `ranks` moves at busbw
 * (zs_cluster_busbw's definition, without the per-call latency). */
double zs_coll_bus_bytes(enum zs_coll kind, double bytes, int ranks);
/* Time of that collective, latency included. */
double zs_cluster_collective_s(const struct zs_cluster *c, enum zs_coll kind,
                               double bytes, int ranks, int nodes);

#endif
