/*
 * engine.h — the discrete-event engine: tasks on in-order queues, dependency
 * edges, fluid max-min bandwidth sharing on links, a CPU core pool, and
 * memory pools that log every allocation with its owner.
 *
 * Model.  A simulation is a set of tasks submitted before zs_sim_run.  Each
 * task belongs to one queue (a GPU stream, a host thread) and starts when
 *   (a) every earlier task of its queue has finished (queues are in-order), and
 *   (b) every task in its deps list has finished, and
 *   (c) for tasks that need cores, that many cores of the CPU pool are free
 *       (granted FIFO in the order tasks become otherwise ready).
 * Kinds:
 *   DELAY  occupies its queue for dur_ns.
 *   FLOW   moves `bytes` across up to ZS_FLOW_MAXLINKS links.  At every
 *          instant the active flows get max-min fair rates (progressive
 *          filling, SimGrid's LMM in its simplest form): a flow's use of link
 *          l is weight[l] * rate, Σ use ≤ capacity(l), and rate ≤ rate_cap.
 *          capacity(l) is the link's own, times its coupling factor while
 *          the link it is coupled to carries a flow (zs_sim_set_link_coupling).
 *          Rates are recomputed whenever a flow starts or ends; remainders
 *          below 1 byte are snapped to zero (STYLE 21).
 *   ALLOC  allocates `bytes` from a pool at its start (zero duration).  The
 *          task id is the buffer handle.  A failure (pool capacity exceeded
 *          after the pool's own reclaim) ends the run with ZS_SIM_OOM and the
 *          record in zs_sim_oom().
 *   FREE   frees the buffer of ALLOC task `alloc_task` (zero duration).
 *   MARK   zero duration: a join point / host event.
 * Time is int64 ns; the future-event set is an array binary heap ordered by
 * (t_ns, seq) with FIFO ties and the heap index stored in the event for
 * O(log n) cancel/update (STYLE 19-20).  Runs are deterministic.
 *
 * Pools.  PLAIN: exact sizes.  CUDA_CACHING: PyTorch's CUDA caching allocator
 * (c10/cuda/CUDACachingAllocator.cpp): requests rounded up to 512 B; requests
 * ≤ 1 MiB served from 2 MiB "small" segments, larger ones from segments of
 * 20 MiB (requests < 10 MiB) or the request rounded to 2 MiB; freed blocks stay
 * reserved and are reused best-fit with splitting; when a new segment does not
 * fit in capacity, all fully free cached segments are released (a "cache
 * flush", counted) and the allocation retried before failing.
 * HOST: allocations flagged ZS_ALLOC_PINNED are rounded to a power of two
 * and, when freed, kept cached for reuse by a request of the same rounded
 * size (PyTorch CachingHostAllocator); others are exact (pageable).
 *
 * Cost: O(log E) per event; a flow start/end recomputes rates over the
 * active flows (O(F * L) with F active flows, small in practice).
 */
#ifndef ZS_ENGINE_H
#define ZS_ENGINE_H

#include "util/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct zs_sim zs_sim;

#define ZS_FLOW_MAXLINKS 4

enum zs_task_kind {
    ZS_TASK_DELAY,
    ZS_TASK_FLOW,
    ZS_TASK_ALLOC,
    ZS_TASK_FREE,
    ZS_TASK_MARK
};

enum zs_pool_kind { ZS_POOL_PLAIN, ZS_POOL_CUDA_CACHING, ZS_POOL_HOST };

#define ZS_ALLOC_PINNED 1u /* HOST pools: page-locked, power-of-two rounded */
/* HOST pools: page-locked at its exact size, outside PyTorch's caching host
 * allocator (posix_memalign + mlock, e.g. DeepSpeed's aio
 * new_cpu_locked_tensor); counted as pinned while live. */
#define ZS_ALLOC_LOCKED 2u
/* FREE of a CUDA_CACHING pool's block: torch.cuda.empty_cache() right after
 * it (c10/cuda/CUDACachingAllocator.cpp emptyCache -> release_cached_blocks:
 * every cached segment that is wholly free goes back to the device, the
 * expandable segment's free pages are unmapped; not an allocation retry, so
 * no cache flush is counted). */
#define ZS_FREE_EMPTY_CACHE 4u

/* A task as submitted (copied by zs_sim_submit; strings must outlive the sim).
 */
struct zs_task_desc {
    enum zs_task_kind kind;
    int queue;           /* from zs_sim_add_queue */
    const int32_t *deps; /* task ids that must finish first (copied) */
    int ndeps;
    const char *name; /* for traces and "live at peak" (static or sim-owned) */
    int cls;          /* caller's class (0..15) for accounting and traces */
    int32_t tag;      /* caller's data, e.g. layer index; returned in records */
    int cores;        /* CPU cores held while running (0: none) */
    /* DELAY */
    int64_t dur_ns;
    /* FLOW */
    double bytes;
    double rate_cap; /* bytes/s the flow may not exceed alone; 0: no cap */
    int nlinks;
    int links[ZS_FLOW_MAXLINKS];
    double weight[ZS_FLOW_MAXLINKS]; /* link use per byte moved; 0 means 1 */
    /* ALLOC */
    int pool;
    int64_t alloc_bytes;
    unsigned alloc_flags; /* ALLOC: ZS_ALLOC_PINNED or ZS_ALLOC_LOCKED;
                             FREE: ZS_FREE_EMPTY_CACHE */
    /* FREE */
    int32_t alloc_task;
    /* MARK: record the run's state when it runs (zs_sim_snapshot);
     * snapshot_from: allocations by tasks before it are named by their id
     * in the fingerprint, later ones by their distance to this mark */
    bool snapshot;
    int32_t snapshot_from;
};

/* Result of one task (read-only). */
struct zs_task_rec {
    int64_t start_ns, end_ns; /* -1 when it never ran */
    int32_t blocked_by;       /* the task whose completion let this one start
                                 (queue predecessor or dependency), -1 if none */
    int queue, cls;
    int32_t tag;
    enum zs_task_kind kind;
    const char *name;
};

/* An allocation event in a pool's log, in execution order. */
struct zs_mem_event {
    int64_t t_ns;
    int32_t task;  /* the ALLOC task (also for its free) */
    int64_t bytes; /* requested, + for alloc, - for free */
    int64_t
        allocated;    /* pool total allocated (rounded sizes) after the event */
    int64_t reserved; /* pool total reserved after the event */
};

struct zs_pool_stats {
    int64_t peak_allocated, peak_reserved, peak_pinned;
    int64_t t_peak_allocated_ns, t_peak_reserved_ns;
    int64_t seq_peak_allocated; /* log index of the peak, for live-at-peak */
    int64_t seq_peak_reserved;
    int64_t cache_flushes; /* CUDA_CACHING: reclaim-and-retry count */
    int64_t allocs, frees;
};

/* Out-of-memory record (valid after zs_sim_run returned ZS_SIM_OOM). */
struct zs_oom {
    int pool;
    int32_t task; /* the ALLOC that failed */
    int64_t t_ns;
    int64_t requested; /* bytes asked */
    int64_t allocated; /* pool allocated at that moment */
    int64_t reserved;  /* pool reserved at that moment */
    int64_t capacity;
};

#define ZS_SIM_DONE 0
#define ZS_SIM_OOM 1

zs_sim *zs_sim_new(void); /* NULL on allocation failure */
void zs_sim_free(zs_sim *s);
/* Clears tasks, records and pool logs but keeps links, queues, pools, cores:
 * a planner re-uses one sim across candidates. */
void zs_sim_reset(zs_sim *s);

/* Topology; ids are dense from 0.  Return the id or ZS_ENOMEM/ZS_EINVAL-like
 * negative codes (ZS_ERUNTIME for bad arguments). */
int zs_sim_add_link(zs_sim *s, const char *name, double capacity_bytes_per_s);
int zs_sim_add_queue(zs_sim *s, const char *name);
int zs_sim_add_pool(zs_sim *s, const char *name, enum zs_pool_kind kind,
                    int64_t capacity_bytes /* 0: unlimited */);
void zs_sim_set_cores(zs_sim *s, int cores); /* CPU pool size, default 1 */
void zs_sim_set_link_capacity(zs_sim *s, int link, double capacity_bytes_per_s);
void zs_sim_set_pool_capacity(zs_sim *s, int pool, int64_t capacity_bytes);
/* The three setters return nothing: an invalid value (cores < 0, capacity
 * <= 0 for a link, < 0 for a pool) is kept and zs_sim_run reports it. */

/* CUDA_CACHING pools: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
 * (pool.c); off by default, as in PyTorch. */
void zs_sim_set_pool_expandable(zs_sim *s, int pool, int on);
/* CUDA_CACHING pools: PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb, in bytes
 * (blocks of that size or more are never split, serve only requests within
 * kLargeBuffer of their size, and are the first released when a segment
 * does not fit: pool.c); 0, the default, is no limit. */
void zs_sim_set_pool_max_split(zs_sim *s, int pool, int64_t bytes);
/* CUDA_CACHING pools: the CUDA stream of `queue`'s allocations, in [0,
 * ZS_ALLOC_STREAMS); cached blocks serve only allocations of the stream
 * whose allocation made their segment (pool.c).  Every queue is on stream 0
 * until set.  Returns 0 or a negative code. */
#define ZS_ALLOC_STREAMS 8
int zs_sim_set_queue_stream(zs_sim *s, int queue, int stream);

/* Submits a task; returns its id (>= 0, dense, in submission order) or a
 * negative code.  Dependencies must name earlier tasks. */
int32_t zs_sim_submit(zs_sim *s, const struct zs_task_desc *t);

/* Runs to completion.  Returns ZS_SIM_DONE, ZS_SIM_OOM, or a negative ZS_E*
 * (e.g. a deadlock: tasks left that can never start — message names one). */
int zs_sim_run(zs_sim *s, struct zs_err *err);

/* Results. */
int64_t zs_sim_now(const zs_sim *s); /* time of the last event */
int32_t zs_sim_ntasks(const zs_sim *s);
/* How many tasks the sim has room for without growing (kept across
 * zs_sim_reset: a caller re-using the sim can size its own arrays). */
size_t zs_sim_task_room(const zs_sim *s);
const struct zs_task_rec *zs_sim_task(const zs_sim *s, int32_t id);
/* All records, indexed by task id (zs_sim_ntasks of them; NULL when none):
 * for loops over every task, without a call per task. */
const struct zs_task_rec *zs_sim_tasks(const zs_sim *s);
const struct zs_oom *zs_sim_oom(const zs_sim *s);
void zs_sim_pool_stats(const zs_sim *s, int pool, struct zs_pool_stats *out);
/* The pool's log (owned by the sim, valid until reset/free). */
const struct zs_mem_event *zs_sim_pool_log(const zs_sim *s, int pool,
                                           int64_t *n);
/* Bytes requested by ALLOC task id (what its log event records); 0 for any
 * other task or a bad id. */
int64_t zs_sim_alloc_bytes(const zs_sim *s, int32_t id);
/* Allocations live just after log index seq: fills up to cap task ids,
 * largest first; returns how many were live in total. */
int64_t zs_sim_pool_live_at(const zs_sim *s, int pool, int64_t seq,
                            int32_t *tasks, int64_t cap);
/* Events processed by the last run.  An event is one task state change:
 * each task start and each task completion counts one (so a run that
 * finishes has exactly 2 * ntasks events), whatever the kind; flow rate
 * recomputations and heap re-timings are work inside those events. */
int64_t zs_sim_events(const zs_sim *s);
/* The most cores any submitted task needs (0: none needs cores).  When it is
 * at most the CPU pool's size no run can deadlock (a run stalls only on a
 * task that needs more cores than the pool has), so a run that does not stop
 * at an OOM or at the time limit finishes with 2 * ntasks events. */
int zs_sim_max_task_cores(const zs_sim *s);
/* A lower bound of `pool`'s peak allocated in any run of the submitted
 * tasks that finishes, from their order alone (no run; O(tasks)): the larger
 * of
 *  - the requests of the ALLOCs without a FREE (all live at the end), and
 *  - for each queue, the most requested at once by the ALLOCs on it whose
 *    FREE is on the same queue, counted in submission order: a queue runs
 *    its tasks in that order, so an ALLOC before position i whose FREE
 *    comes after it is live when i runs.
 * An allocation holds at least its request.  0 when the scratch array
 * cannot be allocated (still a bound). */
int64_t zs_sim_pool_peak_bound(const zs_sim *s, int pool);
int zs_sim_nqueues(const zs_sim *s);
const char *zs_sim_queue_name(const zs_sim *s, int q);
int zs_sim_nlinks(const zs_sim *s);
const char *zs_sim_link_name(const zs_sim *s, int l);
/* Bytes moved over a link in total by the last run. */
double zs_sim_link_bytes(const zs_sim *s, int l);

/* ---- additions (after the first contract; nothing above changed) ---- */

/* Message of the last failed topology call or zs_sim_submit (those return
 * only a code): one line, "" when none.  Owned by the sim. */
const char *zs_sim_errmsg(const zs_sim *s);
int zs_sim_npools(const zs_sim *s);
const char *zs_sim_pool_name(const zs_sim *s, int p);

/* Capacity coupling between two links.  While link `other` carries at least
 * one active flow, link `link` offers factor x its capacity; when `other` is
 * idle, its full capacity.  The flows on `link` are re-rated at the instant
 * `other` turns busy or idle, like any flow start or end.  It models a
 * resource whose throughput in one direction drops only while the opposite
 * direction is in use (PCIe: nvbandwidth #53, see docs/engine.md).  Each
 * link has at most one coupling; setting one replaces it, other = -1 clears
 * it.  factor in (0, 1]; other != link.  Couplings are topology: they survive
 * zs_sim_reset.  Returns 0 or ZS_ERUNTIME (message in zs_sim_errmsg). */
int zs_sim_set_link_coupling(zs_sim *s, int link, int other, double factor);
/* The capacity a link offers now (its coupling applied): for tests and
 * traces, meaningful during and after a run. */
double zs_sim_link_capacity_now(const zs_sim *s, int link);

/* The state of a run at a MARK submitted with `snapshot` set, for a caller
 * that proves two points of a run alike (sched's accumulation shortcut,
 * docs/engine.md "Accumulation").  quiet: when the mark ran, every task
 * submitted before it had finished and none submitted after it had started
 * (nothing in flight: no flow, no delay, no core held).  state: a 64-bit
 * fingerprint of every pool as the mark found it: allocated, reserved and
 * pinned bytes; the host allocator's cached blocks by size class; the CUDA
 * caching allocator's segments in address order, each with its stream, its
 * pool (small or large) and its blocks in address order (size, free or
 * used, and a used block's owner: the ALLOC's id when it was submitted
 * before `snapshot_from`, else its id less the mark's), and the expandable
 * segments' mapped ends relative to their bases.  Two quiet marks whose
 * fingerprints agree, each followed by the same tasks (ids shifted alike),
 * run the same from there on, up to the hash's 2^-64 chance of a
 * collision.  cache_flushes: the pools' cache flushes so far. */
struct zs_snapshot {
    int64_t t_ns; /* when the mark ran; -1: it did not */
    bool quiet;
    uint64_t state;
    int64_t cache_flushes;
};
/* 0, or -1 when `task` is not a snapshot MARK (out untouched). */
int zs_sim_snapshot(const zs_sim *s, int32_t task, struct zs_snapshot *out);

/* Submits n tasks, copies of the submitted tasks src .. src + n - 1 (no
 * snapshot MARK among them), as zs_sim_submit would submit their
 * descriptions with every task id they name changed: an id x >= keep_from
 * (keep_from <= src) becomes x + (first new id - src), so that copies
 * depend on copies; an earlier one becomes to[k] where from[k] == x (from
 * ascending, nmap entries); and each tag becomes (tag & tag_keep) |
 * tag_set.  A dependency without an image, or a FREE whose image is not an
 * unfreed ALLOC, is an error (after the tasks before it were submitted).
 * For a caller that builds the same tasks again (sched's micro-step
 * replay): O(n + deps log nmap), no description is checked again.  Returns
 * the first new id or a negative code (message in zs_sim_errmsg). */
int32_t zs_sim_resubmit(zs_sim *s, int32_t src, int32_t n, int32_t keep_from,
                        const int32_t *from, const int32_t *to, size_t nmap,
                        int32_t tag_keep, int32_t tag_set);
/* The dependencies of tasks first .. first + n - 1 that name tasks before
 * `first` (a FREE's ALLOC among them), with repeats: writes the first cap
 * into out, returns how many there are (0 for a bad range). */
size_t zs_sim_deps_before(const zs_sim *s, int32_t first, int32_t n,
                          int32_t *out, size_t cap);
/* The description task id was submitted with: into *out, its dependencies
 * into deps[0 .. cap) (out->deps = deps, without a FREE's implicit one),
 * flow weights as used (0 given reads 1), fields of other kinds 0.  0, or -1
 * for a bad id or a deps array too small. */
int zs_sim_task_desc(const zs_sim *s, int32_t id, struct zs_task_desc *out,
                     int32_t *deps, int cap);

/* Builds a deterministic synthetic schedule of about ntasks tasks (streams
 * of DELAYs with cross-stream deps, 4-8 concurrent flows on 4 links, CUDA
 * caching and pinned host allocations, CPU tasks on a core pool), runs it
 * and reports the events (see zs_sim_events) and events per second of
 * zs_sim_run alone (wall clock, CLOCK_MONOTONIC).  0 or a negative ZS_E*. */
int zs_engine_bench(int64_t ntasks, double *events_per_s, int64_t *events,
                    struct zs_err *err);

#endif
