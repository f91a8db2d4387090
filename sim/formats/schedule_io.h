/*
 * schedule_io.h — the schedule of one rank as a file ("zsim.schedule/1"):
 * what `zsim schedule export` writes and what the CUDA harness (harness/)
 * executes on a real GPU.  The format is documented in harness/SCHEDULE.md.
 *
 * A schedule is a header (who made it, for which model, hardware and
 * configuration, which rank, how many steps), zsim's predicted totals, a list
 * of queues (GPU streams and host threads) and a list of tasks in a
 * topological order: task i has id i and depends only on tasks with smaller
 * ids.  Each task carries zsim's predicted start and end (ns, -1 when not
 * predicted), so a measured file that copies them is all `zsim validate`
 * needs.
 *
 * Invariants checked by zs_schedule_check (and so by the reader and the
 * writer): ids are dense and in order; deps name earlier tasks, without
 * repeats; a task's queue exists and suits its kind (GPU work on a stream,
 * CPU Adam on a host queue); a free names an earlier alloc that is not yet
 * freed; copy and Adam buffer references name live allocations of the right
 * pool and size; predicted times are -1 or 0 <= start <= end.
 *
 * Ownership: struct zs_schedule owns its task and dependency arrays;
 * zs_schedule_release frees them.  Strings are copied into fixed fields.
 * Cost: reading is linear in the file; locating an error scans the text once.
 */
#ifndef ZS_SCHEDULE_IO_H
#define ZS_SCHEDULE_IO_H

#include "util/err.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define ZS_SCHEDULE_SCHEMA "zsim.schedule/1"

#define ZS_SCHED_MAX_TASKS                                                     \
    (1 << 21)                /* 2,097,152: far above one rank x few steps */
#define ZS_SCHED_MAX_DEPS 64 /* per task */
#define ZS_SCHED_MAX_QUEUES 32
#define ZS_SCHED_NAME_CAP 64  /* task name and owner, NUL included */
#define ZS_SCHED_QNAME_CAP 32 /* queue name, NUL included */

enum zs_sched_kind {
    ZS_SK_ALLOC, /* a buffer appears: device or host (pinned / pageable) */
    ZS_SK_FREE,  /* the buffer of alloc task `buffer` is freed */
    ZS_SK_H2D,   /* host -> device copy of `bytes` */
    ZS_SK_D2H,   /* device -> host copy of `bytes` */
    ZS_SK_GEMM,  /* `count` bf16 GEMMs [m x k] x [k x n] */
    ZS_SK_ELEMENTWISE, /* memory-bound kernel moving `bytes` through HBM */
    ZS_SK_COLLECTIVE,  /* NCCL collective; one GPU: a local copy or skipped */
    ZS_SK_CPU_ADAM,  /* optimizer step over `elements` fp32 elements on the CPU
                      */
    ZS_SK_HOST_WAIT, /* the host blocks until its deps have finished */
    ZS_SK_MARK,      /* a named point (host); step_end > 0 ends that step */
    ZS_SK_COUNT
};

enum zs_sched_pool { ZS_SP_DEVICE, ZS_SP_HOST };

enum zs_sched_coll {
    ZS_SC_ALLGATHER,
    ZS_SC_REDUCESCATTER,
    ZS_SC_ALLREDUCE,
    ZS_SC_ALLTOALL,
    ZS_SC_BROADCAST,
    ZS_SC_REDUCE
};

/* How a collective runs on one GPU: a device-to-device copy of `bytes`, or
 * not at all (listed in the measured file as skipped). */
enum zs_sched_local { ZS_SL_COPY, ZS_SL_SKIP };

enum zs_sched_adam { ZS_SA_DEEPSPEED, ZS_SA_TORCH };

/* One task.  Fields not used by its kind are 0 (or -1 for references). */
struct zs_sched_task {
    int32_t id;
    enum zs_sched_kind kind;
    int queue;                     /* index into zs_schedule.queues */
    int32_t dep_off, ndeps;        /* deps are zs_schedule.deps[dep_off ..] */
    char name[ZS_SCHED_NAME_CAP];  /* what it is: "layers.3.mlp.up_proj fwd" */
    char owner[ZS_SCHED_NAME_CAP]; /* who it belongs to: "layers.3", "optimizer"
                                      ("" none) */
    int64_t bytes;  /* alloc, h2d, d2h, elementwise, collective */
    int pool;       /* alloc: enum zs_sched_pool */
    bool pinned;    /* alloc (host pool), h2d, d2h: page-locked host side */
    int32_t buffer; /* free: the alloc task's id */
    bool empty_cache; /* free: torch.cuda.empty_cache() after it (device) */
    int32_t host_buf,
        dev_buf;            /* h2d, d2h: alloc ids of the two sides, -1 none */
    int64_t m, n, k, count; /* gemm: shape and repeat count (count >= 1) */
    int coll;               /* collective: enum zs_sched_coll */
    int64_t ranks;          /* collective: ranks taking part */
    int local;              /* collective: enum zs_sched_local */
    int64_t elements;       /* cpu_adam */
    int64_t threads;        /* cpu_adam: 0 means all cores */
    int adam_impl;          /* cpu_adam: enum zs_sched_adam */
    int32_t adam_bufs[4];   /* cpu_adam: param, grad, exp_avg, exp_avg_sq allocs
                               or -1 */
    int64_t step_end;       /* mark: the step this mark ends (0: none) */
    int64_t pred_start_ns, pred_end_ns; /* zsim's prediction; -1 when none */
};

struct zs_sched_queue {
    char name[ZS_SCHED_QNAME_CAP];
    bool host; /* a host thread; otherwise a GPU stream */
};

struct zs_sched_header {
    char zsim_version[32];
    char model[64];             /* resolved model name: "qwen2.5-7b" */
    char hardware[64];          /* spec as given: "1xH100" */
    char gpu[32];               /* canonical GPU: "H100-SXM-80GB" */
    char framework[16];         /* "deepspeed" or "fsdp2" */
    char config[256];           /* one-line configuration summary */
    int64_t rank, world, steps; /* rank in [0, world) */
};

/* zsim's predicted totals for this rank; -1 when not predicted. */
struct zs_sched_pred {
    int64_t peak_device_allocated_bytes;
    int64_t peak_device_reserved_bytes;
    int64_t peak_host_bytes; /* whole process: pinned + pageable */
    int64_t peak_pinned_bytes;
    int64_t
        step_time_ns; /* steady step: mean of steps 2..N (step 1 if N = 1) */
};

struct zs_schedule {
    struct zs_sched_header header;
    struct zs_sched_pred pred;
    struct zs_sched_queue queues[ZS_SCHED_MAX_QUEUES];
    int nqueues;
    struct zs_sched_task *tasks; /* owned */
    int32_t ntasks;
    size_t tasks_cap;
    int32_t *deps; /* owned, all tasks' deps back to back */
    size_t ndeps, deps_cap;
};

/* Empty schedule: no queues, no tasks, predictions -1. */
void zs_schedule_init(struct zs_schedule *s);
void zs_schedule_release(struct zs_schedule *s);

/* A task with its fields unused: references -1, count 1, predictions -1. */
void zs_sched_task_init(struct zs_sched_task *t, enum zs_sched_kind kind,
                        int queue, const char *name);

/* Adds a queue; returns its index or ZS_ELIMIT / ZS_ERUNTIME (duplicate or
 * bad name) with err set. */
int zs_schedule_add_queue(struct zs_schedule *s, const char *name, bool host,
                          struct zs_err *err);
/* Index of a queue by name, or -1. */
int zs_schedule_find_queue(const struct zs_schedule *s, const char *name);

/* Appends a copy of *t with id = ntasks and the given deps (copied); returns
 * the id or a negative code (ZS_ENOMEM, ZS_ELIMIT).  The task is not
 * checked here: zs_schedule_check does that for the whole schedule. */
int32_t zs_schedule_add(struct zs_schedule *s, const struct zs_sched_task *t,
                        const int32_t *deps, int ndeps, struct zs_err *err);

/* Checks every invariant listed at the top.  Returns 0 or ZS_EINPUT with a
 * message naming the task ("task 12 (h2d 'x'): ..."). */
int zs_schedule_check(const struct zs_schedule *s, struct zs_err *err);

/* Reads a schedule file; on error *out is left empty (released). */
int zs_schedule_read(const char *path, struct zs_schedule *out,
                     struct zs_err *err);
/* Same from memory; name is used in messages. */
int zs_schedule_read_text(const char *name, const char *text, size_t len,
                          struct zs_schedule *out, struct zs_err *err);

/* Writes the schedule to path (a temp file renamed into place), one task per
 * line.  Checks it first: an invalid schedule is ZS_ERUNTIME (a bug in the
 * exporter), nothing written. */
int zs_schedule_write(const struct zs_schedule *s, const char *path,
                      struct zs_err *err);
/* Writes to an open stream (no check, no rename); returns 0 or ZS_EIO. */
int zs_schedule_write_stream(const struct zs_schedule *s, FILE *f,
                             struct zs_err *err);

/* Names used in the file. */
const char *zs_sched_kind_name(enum zs_sched_kind k);
const char *zs_sched_coll_name(int coll);
/* Whether a kind runs on a GPU stream (h2d, d2h, gemm, elementwise,
 * collective), on a host queue (cpu_adam), or either (the rest). */
bool zs_sched_kind_on_gpu(enum zs_sched_kind k);

/* FLOPs of a gemm task: 2 m n k count. */
double zs_sched_gemm_flops(const struct zs_sched_task *t);

/* Step boundaries from the step_end marks: fills ends_ns[i] with the chosen
 * time (predicted when measured == NULL, else measured[id]) of the mark that
 * ends step i + 1, for up to cap steps; returns the number of steps found
 * (marks must be numbered 1, 2, ... in order), or -1 when the marks are
 * inconsistent or their times are missing. */
int zs_schedule_step_ends(const struct zs_schedule *s,
                          const int64_t *measured_end_ns, int64_t *ends_ns,
                          int cap);
/* Steady step time from step ends: mean of steps 2..N, or step 1 when N = 1
 * (ends_ns[0] measured from time 0).  -1 when n < 1. */
int64_t zs_sched_steady_step_ns(const int64_t *ends_ns, int n);

#endif
