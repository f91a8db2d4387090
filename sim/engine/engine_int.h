/*
 * engine_int.h — private structures of the engine (engine.c, pool.c).
 *
 * Ownership: everything hangs off struct zs_sim and is freed by
 * zs_sim_free.  Arrays grow with zs_grow and keep their capacity across
 * zs_sim_reset, so a planner re-using one sim allocates nothing once warm.
 * zs_sim_run sizes every run-time array before the first event, so the event
 * loop itself never allocates (an allocation failure can only happen before
 * simulated time starts, and leaves the sim valid).
 */
#ifndef ZS_ENGINE_INT_H
#define ZS_ENGINE_INT_H

#include "engine/engine.h"
#include "engine/heap.h"

#include <stddef.h>
#include <stdint.h>

/* Links of one FLOW task (kept out of struct task to keep that small). */
struct flowdesc {
    double bytes;
    double rate_cap;
    int nlinks;
    int links[ZS_FLOW_MAXLINKS];
    double weight[ZS_FLOW_MAXLINKS]; /* > 0 */
};

/* A submitted task: its description and its run state. */
struct task {
    int64_t dur_ns;      /* DELAY */
    int64_t alloc_bytes; /* ALLOC */
    int32_t dep_off;     /* deps are s->deps[dep_off .. dep_off+ndeps) */
    int32_t ndeps;
    int32_t qnext; /* next task of the same queue, -1 */
    int32_t aux;   /* FLOW: index in s->fdesc; FREE: alloc task */
    int16_t kind, cores;
    int16_t pool;
    uint16_t flags;
    int32_t qprev; /* 1 when a task precedes it on its queue */
    /* run state (the pending counts live in s->pend, packed for cache) */
    int32_t fslot; /* FLOW: index in s->act while active */
    int64_t held;  /* ALLOC: bytes charged to `allocated` (rounded) */
    int32_t blk;   /* ALLOC on CUDA_CACHING: block index; HOST pinned:
                      size class; else -1 */
    int32_t freed; /* ALLOC: set at submit when a FREE names it */
    int64_t log_alloc, log_free; /* ALLOC: pool log indices, -1 */
};

/* An active flow. */
struct flow {
    const struct flowdesc *fd; /* in s->fdesc, fixed while a run lasts */
    double rem;                /* bytes left as of t_ns */
    double rate;               /* bytes/s since t_ns */
    int64_t t_ns;
    int64_t t_end_ns;
    int32_t task;
    int16_t frozen; /* progressive-filling scratch */
    int16_t aff;    /* 1: started, rate to compute; 2: listed in s->affl */
};

struct link {
    char *name; /* owned */
    double cap; /* bytes/s */
    double bytes_moved;
    /* Capacity coupling (zs_sim_set_link_coupling): while link cpl_other
     * carries an active flow this link offers cap * cpl_factor.  The links
     * coupled to this one form a list: cpl_first (here) -> cpl_next (in
     * each dependent), -1 ended. */
    int32_t cpl_other;
    double cpl_factor;
    int32_t cpl_first, cpl_next;
    int32_t nflows; /* active flows crossing it (run state) */
    /* progressive-filling scratch */
    double resid, wsum;
    int32_t nunf; /* unfrozen flows crossing it */
    uint32_t stamp;
    uint32_t dirty; /* == s->dstamp: a flow on it started or ended now */
};

struct queue {
    char *name;   /* owned */
    int32_t last; /* last task submitted on it, -1 */
    int stream;   /* its CUDA stream for the caching allocator (pool.c), 0 */
};

/* A block of the CUDA caching allocator model: a range [addr, addr+size) of
 * one segment; blocks of a segment form a doubly linked list by address. */
struct blk {
    int64_t addr, size;
    int32_t prev, next; /* neighbours in the segment, -1 */
    int32_t task;       /* owning ALLOC task when used, -1 when free */
    uint8_t small;      /* belongs to the small (<= 1 MiB) pool */
    uint8_t used;
    uint8_t stream; /* the stream whose allocation made its segment */
};

#define ZS_HOST_CLASSES 64

struct pool {
    char *name; /* owned */
    enum zs_pool_kind kind;
    int64_t capacity; /* 0: unlimited */
    /* run state */
    int64_t allocated, reserved, pinned;
    struct zs_pool_stats st;
    struct zs_mem_event *log;
    size_t nlog, log_cap;
    int64_t nallocs; /* ALLOC tasks submitted on this pool (for sizing) */
    /* CUDA_CACHING */
    struct blk *blk;
    size_t nblk, blk_cap;
    int32_t blk_free; /* free list of unused blk structs (through .next) */
    int32_t
        *fset[2]; /* free blocks, sorted by (size, addr): 0 large, 1 small */
    size_t nfset[2], fset_cap[2];
    int64_t next_addr;
    /* expandable_segments (PYTORCH_CUDA_ALLOC_CONF): the large pool is one
     * segment grown at its end in kLargeBuffer pages; es_tail is its
     * highest-address block (-1 none) */
    int expandable;
    /* max_split_size_mb (PYTORCH_CUDA_ALLOC_CONF) in bytes; 0: no limit */
    int64_t max_split;
    int32_t es_tail[ZS_ALLOC_STREAMS]; /* one segment per stream */
    int64_t es_next[ZS_ALLOC_STREAMS]; /* first unmapped address after it */
    /* HOST pinned: cached free blocks per power-of-two class */
    int64_t cached[ZS_HOST_CLASSES];
};

/* A segment's first block and its address (zs_pool_fingerprint's
 * scratch). */
struct seg_head {
    int64_t addr;
    int32_t blk;
};

/* A snapshot MARK (zs_sim_snapshot): its task, the first task whose
 * allocations it names relatively, and what the run found. */
struct snap {
    int32_t task, from;
    struct zs_snapshot at;
};

struct zs_sim {
    struct zs_err err; /* last submit/topology error (zs_sim_errmsg) */
    /* topology */
    struct link *links;
    size_t nlinks, links_cap;
    struct queue *queues;
    size_t nqueues, queues_cap;
    struct pool *pools;
    size_t npools, pools_cap;
    int cores;
    int max_task_cores; /* the most cores one submitted task needs */
    /* tasks */
    struct task *tasks;
    struct zs_task_rec *recs;
    size_t ntasks, tasks_cap, recs_cap;
    int32_t *deps;
    size_t ndeps, deps_cap;
    struct flowdesc *fdesc;
    size_t nfdesc, fdesc_cap;
    int64_t nevtasks; /* DELAY + FLOW tasks: heap slots needed */
    /* run scratch (sized by zs_sim_run) */
    int32_t *succ_off; /* CSR of reverse dependencies: ntasks + 1 */
    size_t succ_off_cap;
    int32_t *succ;
    size_t succ_cap;
    int32_t *pend; /* per task: unfinished queue predecessor + deps; 0 ready
                      and waiting for cores; -1 started */
    size_t pend_cap;
    int32_t *pend0; /* pend before the run: ndeps + qprev, with the CSR */
    size_t pend0_cap;
    int csr_ok; /* succ_off, succ and pend0 describe the submitted tasks (a
                   re-run of the same tasks skips building them) */
    int ran;    /* a run has touched the tasks' run state since the reset */
    int32_t *work; /* FIFO of tasks ready to start at `now` */
    size_t work_cap, work_head, work_tail;
    int32_t *cwait; /* FIFO of ready tasks waiting for cores */
    size_t cwait_cap, cwait_head, cwait_tail;
    int32_t *touched; /* links touched by progressive filling */
    size_t touched_cap;
    struct flow *act;
    size_t nact, act_cap;
    int32_t *affl; /* indices in act of the flows being recomputed */
    size_t affl_cap;
    struct zs_heap heap;
    /* run state */
    int64_t now_ns;
    int flows_dirty;
    uint32_t stamp;  /* progressive-filling link scratch epoch */
    uint32_t dstamp; /* dirty-link epoch of the current recompute */
    int cores_free;
    int64_t events;
    int64_t done;
    struct zs_oom oom;
    int oom_set;
    /* snapshot MARKs, in submission order (a MARK's task.aux indexes it) */
    struct snap *snaps;
    size_t nsnaps, snaps_cap;
    struct seg_head *seg_scratch; /* while fingerprinting a pool */
    size_t seg_scratch_cap;
    /* the highest id of a task started in this run, MARKs without cores
     * left out; the lowest id of a task not finished yet as the last
     * snapshot found it */
    int32_t started_max, unfinished;
};

/* Whether i indexes an array of n entries (the accessors' range check). */
static inline int zs_index_ok(int64_t i, size_t n)
{
    return i >= 0 && (uint64_t)i < n;
}

/* pool.c */
void zs_pool_clear_run(struct pool *p);
int zs_pool_prepare(struct pool *p, struct zs_err *err);
/* Allocates for ALLOC task id at time t; 0, ZS_SIM_OOM (s->oom filled). */
int zs_pool_alloc(zs_sim *s, int pool, int32_t id, int64_t t_ns,
                  struct zs_err *err);
void zs_pool_free(zs_sim *s, int pool, int32_t id, int64_t t_ns);
/* torch.cuda.empty_cache() on a CUDA caching pool (ZS_FREE_EMPTY_CACHE):
 * 0, or ZS_ENOMEM growing the expandable segment's block table.  It logs no
 * event: reserved only falls, and the next event records it. */
int zs_pool_empty_cache(zs_sim *s, int pool, struct zs_err *err);
void zs_pool_release(struct pool *p);
/* Folds pool p's state into the fingerprint h (zs_snapshot.state): the
 * owner of a used block is named by its id when below `from`, else by its
 * id less `mark`.  heads: scratch for p->nblk entries. */
uint64_t zs_pool_fingerprint(const struct pool *p, uint64_t h, int32_t from,
                             int32_t mark, struct seg_head *heads);

#endif
