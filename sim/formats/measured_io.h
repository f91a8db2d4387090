/*
 * measured_io.h — measurements taken on a real GPU ("zsim.measured/1") and
 * their comparison with zsim's predictions.
 *
 * A measured file is written by the CUDA harness (kind "harness": it ran a
 * zsim schedule and copies the schedule's header, predicted totals and
 * per-task predictions beside what it measured) or by the PyTorch FSDP2
 * reference script (kind "fsdp2_reference": totals only; predictions may be
 * absent and then come from a schedule given to `zsim validate --schedule`).
 * The format is documented in harness/SCHEDULE.md and docs/validation.md.
 *
 * Comparison (zs_validation_compute): per task class (gemm, h2d, d2h,
 * collective, cpu_adam, elementwise) the summed predicted and measured task
 * durations; peak device memory (allocated, reserved), peak host memory,
 * pinned memory and the steady step time; copy bandwidths and GEMM
 * throughput.  Errors are (predicted - measured) / measured in percent:
 * positive means zsim over-predicts.
 *
 * Ownership: struct zs_measured owns its task array; release frees it.
 */
#ifndef ZS_MEASURED_IO_H
#define ZS_MEASURED_IO_H

#include "formats/schedule_io.h"
#include "util/err.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define ZS_MEASURED_SCHEMA "zsim.measured/1"

enum zs_meas_kind { ZS_MK_HARNESS, ZS_MK_FSDP2_REFERENCE };

/* Where and when it was measured (strings may be empty when unknown). */
struct zs_meas_env {
    char gpu[64];         /* cudaGetDeviceProperties name */
    char driver[32];      /* "570.124.06" */
    char cuda[32];        /* runtime version: "13.0" */
    int64_t sm_clock_mhz; /* at measurement (nvidia-smi / NVML); 0 unknown */
    int64_t mem_clock_mhz;
    char host[64];
    char cpu[96];
    int64_t cpu_threads; /* logical CPUs the process could use */
    char date[32];       /* ISO 8601 UTC: "2026-11-22T10:15:00Z" */
    char allocator[16];  /* "caching" or "cudamalloc" (harness), "torch" */
    char tool[64];       /* "zsim-harness 0.1.0", "torch 2.9.0" */
};

/* Measured totals; -1 when not measured. */
struct zs_meas_totals {
    int64_t peak_device_allocated_bytes; /* allocator: live requested (rounded)
                                            bytes */
    int64_t peak_device_reserved_bytes;  /* allocator: segments held */
    int64_t peak_device_used_bytes; /* cudaMemGetInfo used minus the baseline */
    int64_t peak_host_bytes;        /* RSS minus the baseline before the run */
    int64_t peak_pinned_bytes;
    int64_t step_time_ns;         /* steady: mean of steps 2..N (1 if N = 1) */
    int64_t scratch_device_bytes; /* harness operands outside the schedule */
};

/* One task as run (a copy of the schedule's fields that matter for the
 * comparison and the fits, and its measured times; -1 when skipped). */
struct zs_meas_task {
    int32_t id;
    enum zs_sched_kind kind;
    char name[ZS_SCHED_NAME_CAP];
    int64_t bytes;
    bool pinned;
    int64_t m, n, k, count;
    int64_t elements, threads;
    int adam_impl; /* cpu_adam: enum zs_sched_adam */
    int64_t step_end;
    bool skipped;
    int64_t pred_start_ns, pred_end_ns;
    int64_t start_ns, end_ns;
};

struct zs_measured {
    int kind; /* enum zs_meas_kind */
    struct zs_sched_header header;
    bool has_pred; /* "predicted" present and not null */
    struct zs_sched_pred pred;
    struct zs_meas_env env;
    struct zs_meas_totals meas;
    struct zs_meas_task *tasks; /* owned */
    int32_t ntasks;
    size_t tasks_cap;
};

void zs_measured_init(struct zs_measured *m);
void zs_measured_release(struct zs_measured *m);
/* Appends a copy of *t; returns 0 or ZS_ENOMEM / ZS_ELIMIT. */
int zs_measured_add(struct zs_measured *m, const struct zs_meas_task *t,
                    struct zs_err *err);
/* A measured task from a schedule task: fields copied, times -1. */
void zs_meas_task_from_sched(struct zs_meas_task *mt,
                             const struct zs_sched_task *t);

/* Reads a measured file; on error *out is left empty.  Errors: ZS_EINPUT
 * with file:line:col, field and range. */
int zs_measured_read(const char *path, struct zs_measured *out,
                     struct zs_err *err);
int zs_measured_read_text(const char *name, const char *text, size_t len,
                          struct zs_measured *out, struct zs_err *err);
/* Writes (temp file + rename); one task per line. */
int zs_measured_write(const struct zs_measured *m, const char *path,
                      struct zs_err *err);
int zs_measured_write_stream(const struct zs_measured *m, FILE *f,
                             struct zs_err *err);

const char *zs_meas_kind_name(int kind);

/* ---- comparison ---------------------------------------------------------- */

enum zs_vclass {
    ZS_VC_GEMM,
    ZS_VC_H2D,
    ZS_VC_D2H,
    ZS_VC_COLLECTIVE,
    ZS_VC_CPU_ADAM,
    ZS_VC_ELEMENTWISE,
    ZS_VC_COUNT
};

struct zs_vclass_row {
    int64_t tasks;         /* timed in both prediction and measurement */
    double pred_s, meas_s; /* summed durations */
    double bytes, flops;   /* summed over those tasks (copies, gemm) */
    double err_pct;        /* NAN when meas_s == 0 */
};

/* A compared quantity; a side is -1 when unknown, and err_pct is NAN then. */
struct zs_vquant {
    const char *key;   /* JSON key: "peak_device_allocated_bytes" */
    const char *label; /* "peak device allocated" */
    int unit;          /* 0 bytes, 1 ns, 2 bytes/s, 3 FLOP/s */
    double pred, meas;
    double err_pct;
    double limit_pct; /* gate; 0: not gated */
    bool ok;          /* within limit (true when not gated or unknown) */
};

#define ZS_VQ_MAX 10

struct zs_validation {
    struct zs_vclass_row cls[ZS_VC_COUNT];
    struct zs_vclass_row total;
    int64_t skipped;     /* tasks the harness listed as skipped */
    int64_t unpredicted; /* timed tasks without a prediction */
    struct zs_vquant q[ZS_VQ_MAX];
    int nq;
    bool ok; /* every gated quantity within its limit */
};

const char *zs_vclass_name(int cls);
/* Class of a task kind, or -1 for kinds with no time of their own. */
int zs_vclass_of(enum zs_sched_kind k);

/* Compares; max_mem_err_pct gates peak device allocated / reserved and peak
 * host memory, max_time_err_pct the step time.  Quantities with an unknown
 * side are shown but not gated.  Never fails. */
void zs_validation_compute(const struct zs_measured *m, double max_mem_err_pct,
                           double max_time_err_pct, struct zs_validation *v);

#endif
