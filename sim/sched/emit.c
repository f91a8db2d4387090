/*
 * emit.c — small constructors for engine tasks used by the schedules.
 * An emit failure (out of memory) is remembered in b->failed and later emits
 * become no-ops returning -1, so builders need no error check per call.
 */
#include "sched/sched_int.h"
#include "util/alloc.h"

#include <assert.h>
#include <string.h>

int zs_tag_now(const struct zs_bctx *b, int unit)
{
    return ZS_TAG(unit < 0 ? ZS_NO_UNIT : unit, b->phase, b->step);
}

/* The planner's prefix cut (sched_int.h; docs/engine.md "The prefix
 * cut"): runs the b->cut_at tasks submitted so far.  A GPU OOM turns the
 * rest of the build into counting; anything else (it finished, an error)
 * leaves the build as it was: the whole schedule is submitted and run from
 * the start. */
void zs_cut_run(struct zs_bctx *b)
{
    struct zs_err e = {0, ""};
    int run = zs_sim_nqueues(b->sim) <= ZS_CUT_QUEUES
                  ? zs_sim_run(b->sim, &e)
                  : ZS_SIM_DONE; /* b->qlast cannot follow every queue */
    const struct zs_oom *o = zs_sim_oom(b->sim);
    if (run != ZS_SIM_OOM || !o || o->pool != b->p_gpu) {
        b->cut_at = 0;
        return;
    }
    b->cut = ZS_CUT_COUNTING;
    b->cut_rec = zs_sim_tasks(b->sim);
}

/* Whether task x waits past the prefix run's OOM: a prefix task that had
 * not finished when the run stopped, or a counted task that waits for one.
 * In the run of the whole schedule nothing differs from the prefix run
 * before that OOM (only prefix tasks can have started), so such a task
 * cannot start before it either. */
static bool cut_waits(const struct zs_bctx *b, int32_t x)
{
    if (x < 0)
        return false;
    if (x < b->cut_at)
        return b->cut_rec[x].end_ns < 0;
    return b->cut_wait[x - b->cut_at] != 0;
}

/* Counts task d (deps[0..n)) instead of submitting it: its id, and whether
 * it waits past the OOM through a dependency or its queue predecessor.  One
 * that may not sets ZS_CUT_FAILED and stops the build (zs_simulate then
 * simulates the candidate whole). */
static inline int32_t cut_count(struct zs_bctx *b, int kind, int queue,
                                int cores, const int32_t *deps, int n)
{
    int32_t id = b->cut_at + b->ncounted;
    bool waits = cut_waits(b, b->qlast[queue]);
    /* a MARK without cores that may run before the OOM changes nothing there
     * but the engine's event count: its successors are checked for waiting
     * without it */
    bool mark = kind == ZS_TASK_MARK && cores == 0;
    for (int i = 0; i < n && !waits; i++)
        waits = cut_waits(b, deps[i]);
    if ((!waits && !mark) ||
        ((size_t)b->ncounted >= b->cut_wait_cap &&
         zs_grow((void **)&b->cut_wait, &b->cut_wait_cap,
                 (size_t)b->ncounted + 1, sizeof *b->cut_wait))) {
        b->cut = ZS_CUT_FAILED;
        b->failed = ZS_ERUNTIME;
        return -1;
    }
    b->cut_wait[b->ncounted++] = waits;
    if (cores > b->cut_cores)
        b->cut_cores = cores;
    b->qlast[queue] = id;
    return id;
}

/* Whether cut_mem_add may record task d (the others it leaves alone:
 * tested by the callers, so most tasks skip the call) */
static inline bool is_mem(const struct zs_task_desc *d)
{
    return d->kind == ZS_TASK_ALLOC || d->kind == ZS_TASK_FREE;
}

/* Records task id (description d) in b->cut_mem when it allocates or frees
 * on the GPU pool; b->cut_idx[id] is an ALLOC's record, -1 none (only an
 * ALLOC's entry is ever read: by its FREE).  False when out of memory. */
bool zs_cut_mem_add(struct zs_bctx *b, const struct zs_task_desc *d,
                    int32_t id)
{
    struct zs_cut_mem *r;
    int32_t a = -1;
    if (d->kind == ZS_TASK_FREE) {
        a = b->cut_idx[d->alloc_task]; /* its ALLOC's record */
        if (a < 0)
            return true;
    } else if (d->kind != ZS_TASK_ALLOC) {
        return true;
    } else {
        if ((size_t)id >= b->cut_idx_cap &&
            zs_grow((void **)&b->cut_idx, &b->cut_idx_cap, (size_t)id + 1,
                    sizeof *b->cut_idx))
            return false;
        b->cut_idx[id] = -1;
        if (d->pool != b->p_gpu)
            return true;
    }
    if (b->ncut_mem >= b->cut_mem_cap &&
        zs_grow((void **)&b->cut_mem, &b->cut_mem_cap, b->ncut_mem + 1,
                sizeof *b->cut_mem))
        return false;
    if (a < 0)
        b->cut_idx[id] = (int32_t)b->ncut_mem;
    r = &b->cut_mem[b->ncut_mem++];
    r->id = id;
    r->q = (int16_t)d->queue;
    if (a >= 0) {
        r->alloc = d->alloc_task;
        r->bytes = b->cut_mem[a].bytes;
        r->fq = b->cut_mem[a].q;
        b->cut_mem[a].fq = r->q;
    } else {
        r->alloc = -1;
        r->bytes = d->alloc_bytes;
        r->fq = -1;
    }
    return true;
}

/* The same sum as zs_sim_pool_peak_bound (engine/pool.c), over the records:
 * the larger of what is never freed and the most any one queue holds of
 * what it allocates and frees itself. */
int64_t zs_cut_peak_bound(const struct zs_bctx *b)
{
    int64_t unfreed = 0, best = 0, live[ZS_CUT_QUEUES] = {0};
    for (size_t i = 0; i < b->ncut_mem; i++) {
        const struct zs_cut_mem *r = &b->cut_mem[i];
        if (r->alloc < 0 && r->fq < 0) {
            unfreed += r->bytes;
            live[r->q] += r->bytes;
        } else if (r->alloc < 0 && r->fq == r->q) {
            live[r->q] += r->bytes;
        } else if (r->alloc >= 0 && r->fq == r->q) {
            live[r->q] -= r->bytes;
        } else {
            continue;
        }
        if (live[r->q] > best)
            best = live[r->q];
    }
    return unfreed > best ? unfreed : best;
}

/* deps d0..d2 without the -1s and the repeats, in that order; their count */
static inline int pack_deps(int32_t deps[3], int32_t d0, int32_t d1,
                            int32_t d2)
{
    int n = 0;
    if (d0 >= 0)
        deps[n++] = d0;
    if (d1 >= 0 && d1 != d0)
        deps[n++] = d1;
    if (d2 >= 0 && d2 != d0 && d2 != d1)
        deps[n++] = d2;
    return n;
}

/* zs_setup.count_log's report of counted task id (description d,
 * deps[0..n)). */
static void log_counted(const struct zs_bctx *b, int32_t id,
                        const struct zs_task_desc *d, const int32_t *deps,
                        int n)
{
    struct zs_counted e;
    memset(&e, 0, sizeof e);
    e.id = id;
    e.kind = d->kind == ZS_TASK_FLOW ? ZS_TASK_DELAY : d->kind;
    e.queue = d->queue;
    e.cores = d->cores;
    e.pool = d->kind == ZS_TASK_ALLOC ? d->pool : -1;
    e.alloc_bytes = d->kind == ZS_TASK_ALLOC ? d->alloc_bytes : 0;
    e.alloc_task = d->kind == ZS_TASK_FREE ? d->alloc_task : -1;
    e.ndeps = n;
    for (int i = 0; i < 3; i++)
        e.deps[i] = i < n ? deps[i] : -1;
    e.replayed = b->replaying;
    b->su->count_log(b->su->count_log_arg, &e);
}

/* Counts task d (deps[0..n)) after the prefix: cut_count, and its GPU
 * ALLOC or FREE for the need's lower bound. */
int32_t zs_cut_emit(struct zs_bctx *b, const struct zs_task_desc *d,
                    const int32_t *deps, int n)
{
    int32_t id = cut_count(b, d->kind, d->queue, d->cores, deps, n);
    if (id >= 0 && is_mem(d) && !zs_cut_mem_add(b, d, id)) {
        b->failed = ZS_ENOMEM;
        return -1;
    }
    if (id >= 0 && d->queue == b->q_host)
        b->last_host = id;
    if (id >= 0 && b->su->count_log)
        log_counted(b, id, d, deps, n);
    return id;
}

void zs_cut_emit_n(struct zs_bctx *b, const struct zs_ctask *ct,
                   const int32_t *dep, const int32_t *alloc, size_t n)
{
    for (size_t k = 0; k < n && !b->failed; k++) {
        const struct zs_ctask *c = &ct[k];
        const int32_t *deps = dep + 3 * k;
        int32_t id = cut_count(b, c->kind, c->queue, c->cores, deps, c->ndeps);
        if (id < 0)
            return;
        if (c->kind == ZS_TASK_ALLOC || c->kind == ZS_TASK_FREE) {
            struct zs_task_desc d;
            d.kind = (enum zs_task_kind)c->kind;
            d.queue = c->queue;
            d.pool = c->pool;
            d.alloc_bytes = c->bytes;
            d.alloc_task = alloc[k];
            if (!zs_cut_mem_add(b, &d, id)) {
                b->failed = ZS_ENOMEM;
                return;
            }
        }
        if (c->queue == b->q_host)
            b->last_host = id;
        if (b->su->count_log) {
            struct zs_task_desc d;
            d.kind = (enum zs_task_kind)c->kind;
            d.queue = c->queue;
            d.cores = c->cores;
            d.pool = c->pool;
            d.alloc_bytes = c->bytes;
            d.alloc_task = alloc[k];
            log_counted(b, id, &d, deps, c->ndeps);
        }
    }
}

/* While the prefix cut counts (sched_int.h), a task is only counted: it
 * needs no duration, rate or name, only what cut_count and cut_mem_add
 * read (its kind, queue and cores; an ALLOC's pool and bytes, a FREE's
 * ALLOC).  The constructors below call this before working out the rest,
 * so a counted task costs no cost model and no full description.  kind:
 * ZS_TASK_DELAY stands for a DELAY or a FLOW (counting tells apart only
 * MARK, ALLOC and FREE). */
static int32_t cut_quick(struct zs_bctx *b, enum zs_task_kind kind, int q,
                         int pool, int64_t bytes, int32_t alloc, int32_t d0,
                         int32_t d1, int32_t d2)
{
    struct zs_task_desc d;
    int32_t deps[3];
    int32_t id;
    int n;
    assert(!b->ex); /* no cut while exporting (simulate.c) */
    if (b->failed)
        return -1;
    n = pack_deps(deps, d0, d1, d2);
    d.kind = kind;
    d.queue = q;
    d.cores = 0; /* no constructor here asks for cores */
    d.pool = pool;
    d.alloc_bytes = bytes;
    d.alloc_task = alloc;
    id = zs_cut_emit(b, &d, deps, n);
    if (id >= 0 && b->recording)
        zs_replay_note(b, &d, deps, n);
    return id;
}

static inline bool counting(const struct zs_bctx *b)
{
    return b->cut == ZS_CUT_COUNTING;
}

int32_t zs_t_emit(struct zs_bctx *b, struct zs_task_desc *d, int32_t d0,
                  int32_t d1, int32_t d2)
{
    int32_t deps[3];
    int n;
    int32_t id;
    if (b->failed)
        return -1;
    n = pack_deps(deps, d0, d1, d2);
    d->deps = deps;
    d->ndeps = n;
    if (b->cut_at && !b->cut && zs_sim_ntasks(b->sim) == b->cut_at)
        zs_cut_run(b);
    if (counting(b)) {
        id = zs_cut_emit(b, d, deps, n);
        if (id >= 0 && b->recording)
            zs_replay_note(b, d, deps, n);
        return id;
    }
    id = zs_sim_submit(b->sim, d);
    if (id >= 0 && b->cut_at && is_mem(d) && !zs_cut_mem_add(b, d, id))
        id = ZS_ENOMEM;
    if (id < 0) {
        b->failed = id;
        return -1;
    }
    if (b->recording)
        zs_replay_note(b, d, deps, n);
    if (b->ex) {
        struct zs_export *x = b->ex;
        if (zs_grow((void **)&x->t, &x->cap, (size_t)id + 1, sizeof *x->t)) {
            b->failed = ZS_ENOMEM;
            return -1;
        }
        while (x->n < (size_t)id)
            x->t[x->n++].kind = -1; /* not described */
        x->t[id] = x->cur;
        x->t[id].ndeps = n;
        for (int i = 0; i < n; i++)
            x->t[id].deps[i] = deps[i];
        x->n = (size_t)id + 1;
        memset(&x->cur, 0, sizeof x->cur);
        x->cur.kind = -1;
    }
    if (d->queue == b->q_host)
        b->last_host = id;
    if (d->queue >= 0 && d->queue < ZS_CUT_QUEUES)
        b->qlast[d->queue] = id;
    return id;
}

int32_t zs_t_delay(struct zs_bctx *b, int q, int64_t ns, int cls,
                   const char *name, int unit, int32_t d0, int32_t d1)
{
    struct zs_task_desc d;
    /* a negative duration is a cost-model bug, not a zero-length task */
    assert(ns >= 0);
    if (counting(b))
        return cut_quick(b, ZS_TASK_DELAY, q, -1, 0, -1, d0, d1, -1);
    memset(&d, 0, sizeof d);
    if (q == b->q_comp && b->l_sm >= 0 && ns > 0) {
        /* compute-stream kernel: ns of work over the SM link, slowed while a
         * collective runs (simulate.c sm_topology); alone, exactly ns */
        d.kind = ZS_TASK_FLOW;
        d.bytes = (double)ns;
        d.nlinks = 1;
        d.links[0] = b->l_sm;
        d.weight[0] = 1;
    } else {
        d.kind = ZS_TASK_DELAY;
        d.dur_ns = ns > 0 ? ns : 0;
    }
    d.queue = q;
    d.cls = cls;
    d.name = name;
    d.tag = zs_tag_now(b, unit);
    return zs_t_emit(b, &d, d0, d1, -1);
}

int32_t zs_t_mark(struct zs_bctx *b, int q, const char *name, int32_t d0,
                  int32_t d1, int32_t d2)
{
    struct zs_task_desc d;
    if (counting(b))
        return cut_quick(b, ZS_TASK_MARK, q, -1, 0, -1, d0, d1, d2);
    memset(&d, 0, sizeof d);
    d.kind = ZS_TASK_MARK;
    d.queue = q;
    d.cls = ZS_CLS_SYNC;
    d.name = name;
    d.tag = zs_tag_now(b, -1);
    return zs_t_emit(b, &d, d0, d1, d2);
}

int32_t zs_t_snapshot(struct zs_bctx *b, int32_t from, const char *name)
{
    struct zs_task_desc d;
    if (counting(b))
        return cut_quick(b, ZS_TASK_MARK, b->q_host, -1, 0, -1, b->last_host,
                         -1, -1);
    memset(&d, 0, sizeof d);
    d.kind = ZS_TASK_MARK;
    d.queue = b->q_host;
    d.cls = ZS_CLS_SYNC;
    d.name = name;
    d.tag = zs_tag_now(b, -1);
    /* the mark itself when it is the first steady micro-step's start */
    d.snapshot = true;
    d.snapshot_from = from >= 0 ? from : zs_sim_ntasks(b->sim);
    return zs_t_emit(b, &d, b->last_host, -1, -1);
}

int32_t zs_t_alloc(struct zs_bctx *b, int q, int pool, int64_t bytes,
                   unsigned flags, const char *name, int unit, int32_t d0)
{
    struct zs_task_desc d;
    assert(bytes >= 0); /* a negative size is a sizing bug */
    if (bytes <= 0)
        return -1;
    if (counting(b))
        return cut_quick(b, ZS_TASK_ALLOC, q, pool, bytes, -1, d0, -1, -1);
    if (b->ex) {
        b->ex->cur.kind = ZS_X_ALLOC;
        b->ex->cur.bytes = bytes;
        b->ex->cur.pool = pool == b->p_gpu ? 0 : 1;
        b->ex->cur.pinned = (flags & ZS_ALLOC_PINNED) != 0;
    }
    memset(&d, 0, sizeof d);
    d.kind = ZS_TASK_ALLOC;
    d.queue = q;
    d.pool = pool;
    d.alloc_bytes = bytes;
    d.alloc_flags = flags;
    d.cls = ZS_CLS_MEM;
    d.name = name;
    d.tag = zs_tag_now(b, unit);
    return zs_t_emit(b, &d, d0, -1, -1);
}

static int32_t free_flags(struct zs_bctx *b, int q, int32_t alloc, int32_t d0,
                          unsigned flags)
{
    struct zs_task_desc d;
    if (alloc < 0)
        return -1;
    if (counting(b))
        return cut_quick(b, ZS_TASK_FREE, q, -1, 0, alloc, d0, -1, -1);
    if (b->ex) {
        b->ex->cur.kind = ZS_X_FREE;
        b->ex->cur.buffer = alloc;
        b->ex->cur.empty_cache = (flags & ZS_FREE_EMPTY_CACHE) != 0;
    }
    memset(&d, 0, sizeof d);
    d.kind = ZS_TASK_FREE;
    d.queue = q;
    d.alloc_task = alloc;
    d.alloc_flags = flags;
    d.cls = ZS_CLS_MEM;
    d.name = flags & ZS_FREE_EMPTY_CACHE ? "free + torch.cuda.empty_cache()"
                                         : "free";
    d.tag = zs_tag_now(b, -1);
    return zs_t_emit(b, &d, d0, -1, -1);
}

int32_t zs_t_free(struct zs_bctx *b, int q, int32_t alloc, int32_t d0)
{
    return free_flags(b, q, alloc, d0, 0);
}

int32_t zs_t_free_empty_cache(struct zs_bctx *b, int q, int32_t alloc,
                              int32_t d0)
{
    return free_flags(b, q, alloc, d0, ZS_FREE_EMPTY_CACHE);
}

int32_t zs_keep_alloc(struct zs_bctx *b, int32_t alloc)
{
    if (b->failed || alloc < 0)
        return alloc;
    if (zs_grow((void **)&b->adam_alloc, &b->cap_adam_alloc,
                b->n_adam_alloc + 1, sizeof *b->adam_alloc)) {
        b->failed = ZS_ENOMEM;
        return -1;
    }
    b->adam_alloc[b->n_adam_alloc++] = alloc;
    return alloc;
}

int32_t zs_t_pcie(struct zs_bctx *b, int q, int dir, double bytes, bool pinned,
                  const char *name, int unit, int32_t d0, int32_t d1)
{
    struct zs_task_desc d;
    assert(bytes >= 0); /* a negative size is a sizing bug */
    if (bytes <= 0)
        return zs_t_mark(b, q, name, d0, d1, -1);
    if (counting(b))
        return cut_quick(b, ZS_TASK_DELAY, q, -1, 0, -1, d0, d1, -1);
    if (b->ex) {
        b->ex->cur.kind = dir ? ZS_X_D2H : ZS_X_H2D;
        b->ex->cur.bytes = (int64_t)bytes;
        b->ex->cur.pinned = pinned;
    }
    memset(&d, 0, sizeof d);
    d.kind = ZS_TASK_FLOW;
    d.queue = q;
    d.bytes = bytes;
    d.rate_cap = pinned ? (dir ? b->d2h_pinned : b->h2d_pinned) : b->pageable;
    /* Its direction's link (whose capacity drops while the opposite
     * direction is busy: the coupling set in simulate.c) and the host bus. */
    d.nlinks = 2;
    d.links[0] = dir ? b->l_d2h : b->l_h2d;
    d.weight[0] = 1;
    d.links[1] = b->l_bus;
    d.weight[1] = pinned ? 1.0 : 3.0;
    d.cls = ZS_CLS_PCIE;
    d.name = name;
    d.tag = zs_tag_now(b, unit);
    return zs_t_emit(b, &d, d0, d1, -1);
}

int32_t zs_t_nvme(struct zs_bctx *b, bool write, double bytes,
                  const char *name, int32_t d0, int32_t d1)
{
    struct zs_task_desc d;
    int q = write ? b->q_aio_w : b->q_aio_r;
    if (bytes <= 0)
        return zs_t_mark(b, q, name, d0, d1, -1);
    if (counting(b))
        return cut_quick(b, ZS_TASK_DELAY, q, -1, 0, -1, d0, d1, -1);
    if (b->ex)
        b->ex->cur.kind = ZS_X_WAIT;
    memset(&d, 0, sizeof d);
    d.kind = ZS_TASK_FLOW;
    d.queue = q;
    d.bytes = bytes;
    d.rate_cap = write ? b->nvme_write_bps : b->nvme_read_bps;
    /* The NVMe link's capacity is the read rate; a written byte uses
     * read/write of it, so reads and writes running together share the
     * drives' time (simulate.c).  Every byte is DMA'd to or from pinned host
     * memory (the bus). */
    d.nlinks = 2;
    d.links[0] = b->l_nvme;
    d.weight[0] = write ? b->nvme_read_bps / b->nvme_write_bps : 1.0;
    d.links[1] = b->l_bus;
    d.weight[1] = 1.0;
    d.cls = ZS_CLS_NVME;
    d.name = name;
    d.tag = zs_tag_now(b, -1);
    return zs_t_emit(b, &d, d0, d1, -1);
}

int32_t zs_t_coll(struct zs_bctx *b, int q, enum zs_coll kind, double bytes,
                  const char *name, int unit, int32_t d0, int32_t d1)
{
    return zs_t_coll_group(b, q, kind, bytes, (int)b->c->world, name, unit, d0,
                           d1);
}

int32_t zs_t_coll_group(struct zs_bctx *b, int q, enum zs_coll kind,
                        double bytes, int ranks, const char *name, int unit,
                        int32_t d0, int32_t d1)
{
    struct zs_task_desc d;
    const struct zs_cluster *cl = b->su->cluster;
    /* a group larger than a node spans nodes; sequence-parallel groups are
     * placed within a node when they fit (consecutive ranks) */
    int gpn = (int)b->c->procs_per_node;
    int nodes = ranks <= gpn ? 1 : (ranks + gpn - 1) / gpn;
    double busbw, moved;
    assert(bytes >= 0); /* a negative size is a sizing bug */
    if (ranks <= 1 || bytes <= 0)
        return zs_t_mark(b, q, name, d0, d1, -1);
    if (counting(b))
        return cut_quick(b, ZS_TASK_DELAY, q, -1, 0, -1, d0, d1, -1);
    if (nodes > cl->nodes)
        nodes = cl->nodes;
    busbw = zs_cluster_busbw(cl, kind, bytes, ranks, nodes);
    /* nccl-tests' time at busbw (zs_coll_bus_bytes).  The per-call latency
     * is folded into the bytes so one flow carries it (latency * cap bytes
     * more). */
    moved = zs_coll_bus_bytes(kind, bytes, ranks);
    moved += (double)cl->node.collective_latency_ns * 1e-9 * busbw;
    if (b->ex) {
        b->ex->cur.kind = ZS_X_COLL;
        b->ex->cur.bytes = (int64_t)bytes;
        b->ex->cur.coll = kind;
    }
    memset(&d, 0, sizeof d);
    d.kind = ZS_TASK_FLOW;
    d.queue = q;
    d.bytes = moved;
    d.rate_cap = busbw;
    d.nlinks = 1;
    d.links[0] = b->l_fab;
    d.weight[0] = 1;
    d.cls = ZS_CLS_COLL;
    d.name = name;
    d.tag = zs_tag_now(b, unit);
    return zs_t_emit(b, &d, d0, d1, -1);
}

int32_t zs_t_cpu(struct zs_bctx *b, double bytes,
                 double bytes_per_s_per_thread, int cls, const char *name,
                 int32_t d0)
{
    struct zs_task_desc d;
    assert(bytes >= 0); /* a negative size is a sizing bug */
    if (bytes <= 0)
        return zs_t_mark(b, b->q_host, name, d0, -1, -1);
    if (counting(b))
        return cut_quick(b, ZS_TASK_DELAY, b->q_host, -1, 0, -1, d0, -1, -1);
    if (b->ex) {
        /* CPU passes over fp32 state: exported as Adam work over the same
         * bytes (28 B per element, mechanics §5) */
        b->ex->cur.kind = cls == ZS_CLS_OPT ? ZS_X_CPU : ZS_X_WAIT;
        b->ex->cur.elements = (int64_t)(bytes / 28);
    }
    memset(&d, 0, sizeof d);
    d.kind = ZS_TASK_FLOW;
    d.queue = b->q_host;
    d.bytes = bytes;
    d.rate_cap = bytes_per_s_per_thread * b->cpu_threads_eff;
    d.nlinks = 1;
    d.links[0] = b->l_bus;
    /* each byte the pass moves holds 1/eff bytes of the bus: the CPU
     * optimizer streams at that fraction of the node's bandwidth share
     * (hw.h ZS_HOST_STREAM_EFF) */
    d.weight[0] = b->node->host_stream_eff > 0 ? 1.0 / b->node->host_stream_eff
                                               : 1.0;
    d.cls = cls;
    d.name = name;
    d.tag = zs_tag_now(b, -1);
    return zs_t_emit(b, &d, d0, -1, -1);
}

int32_t zs_t_gpu_mem(struct zs_bctx *b, int q, double bytes, int cls,
                     const char *name, int unit, int32_t d0, int32_t d1)
{
    const struct zs_gpu *g = &b->node->gpu;
    if (counting(b))
        return cut_quick(b, ZS_TASK_DELAY, q, -1, 0, -1, d0, d1, -1);
    if (b->ex) {
        b->ex->cur.kind = ZS_X_MEM;
        b->ex->cur.bytes = (int64_t)bytes;
    }
    return zs_t_delay(b, q, (int64_t)(zs_gpu_membound_s(g, bytes) * 1e9), cls,
                      name, unit, d0, d1);
}

int32_t zs_t_drain(struct zs_bctx *b, const char *name)
{
    /* A mark at the end of each GPU queue, then the host waits for all. */
    int32_t c = zs_t_mark(b, b->q_comp, name, -1, -1, -1);
    int32_t a = zs_t_mark(b, b->q_ag, name, -1, -1, -1);
    int32_t r = zs_t_mark(b, b->q_rs, name, -1, -1, -1);
    int32_t h = zs_t_mark(b, b->q_host, name, c, a, r);
    if (b->q_cpy >= 0) {
        int32_t k = zs_t_mark(b, b->q_cpy, name, -1, -1, -1);
        h = zs_t_mark(b, b->q_host, name, k, h, -1);
    }
    if (b->q_off >= 0) {
        int32_t k = zs_t_mark(b, b->q_off, name, -1, -1, -1);
        h = zs_t_mark(b, b->q_host, name, k, h, -1);
    }
    return h;
}

int32_t zs_t_compute(struct zs_bctx *b, int u, bool bwd, const char *name,
                     int32_t d0, int32_t d1)
{
    const struct zs_unit *un = &b->units[u];
    const struct zs_piece *p = b->pieces + un->piece_off + (bwd ? un->npf : 0);
    int n = bwd ? un->npb : un->npf;
    int32_t t = -1;
    int sp = (int)b->c->sp;
    double a2a_in = 0, a2a_out = 0;
    if (un->has_attn && sp > 1) {
        /* DeepSpeed-Ulysses (Jacobs et al. 2023, arXiv 2309.14509 §3): an
         * all-to-all of q, k, v before attention (sequence-sharded ->
         * head-sharded) and of the output after it, on the compute stream;
         * the backward runs the same two in reverse.  Bytes: this rank's
         * tokens x (h_q + 2 h_kv) x 2 B in, tokens x h_q x 2 B out.  With
         * fewer KV heads than the degree each is replicated to one per rank
         * before the all-to-all (ulysses_sp.py at edaa722:
         * kv_replication_factor = world_size // kv_head_count,
         * repeat_interleave on the head dimension), so h_kv counts as sp. */
        const struct zs_model *m = b->m;
        double t_loc = (double)b->tokens;
        int64_t kv = m->n_kv_heads < sp ? sp : m->n_kv_heads;
        a2a_in = t_loc * (double)((m->n_heads + 2 * kv) * m->head_dim) * 2 *
                 sp;
        a2a_out = t_loc * (double)(m->n_heads * m->head_dim) * 2 * sp;
        d0 = zs_t_coll_group(b, b->q_comp, ZS_COLL_ALLTOALL,
                             bwd ? a2a_out : a2a_in, sp, "Ulysses all-to-all",
                             u, d0, d1);
        d1 = -1;
    }
    if (un->has_attn && b->c->cp > 1) {
        /* Context parallelism (torch/distributed/tensor/experimental/
         * _attention.py at 0123248, rotate method all-gather, torchtitan's
         * default at 9dec370): the forward all-gathers every rank's K and V
         * once (_AllGatherRotater), the backward again, and passes the
         * fp32 dK dV to the next rank at each of its cp steps
         * (_AllToAllRotater, ft_c.permute_tensor: one buffer per rank and
         * step, bytes here scaled so the all-to-all moves that).  All on
         * the compute stream before the layer's compute [approximation:
         * the all-gather overlaps the diagonal step and each pass the next
         * step; serialised here, an upper bound]. */
        const struct zs_model *m = b->m;
        double cp = (double)b->c->cp, t_loc = (double)b->tokens;
        double kv = t_loc * (double)(2 * m->n_kv_heads * m->head_dim);
        d0 = zs_t_coll_group(b, b->q_comp, ZS_COLL_ALLGATHER, kv * 2 * cp,
                             (int)cp, "CP K/V all-gather", u, d0, d1);
        d1 = -1;
        if (bwd)
            d0 = zs_t_coll_group(b, b->q_comp, ZS_COLL_ALLTOALL,
                                 kv * 4 * cp * cp / (cp - 1), (int)cp,
                                 "CP dK/dV ring", u, d0, -1);
    }
    if (!b->ex) {
        t = zs_t_delay(b, b->q_comp, (int64_t)(bwd ? un->bwd_ns : un->fwd_ns),
                       ZS_CLS_COMPUTE, name, u, d0, d1);
        if (a2a_in > 0)
            t = zs_t_coll_group(b, b->q_comp, ZS_COLL_ALLTOALL,
                                bwd ? a2a_in : a2a_out, sp,
                                "Ulysses all-to-all", u, t, -1);
        return t;
    }
    /* exporting: one task per piece, so the harness runs the same shapes */
    for (int i = 0; i < n; i++) {
        struct zs_xtask *x = &b->ex->cur;
        x->kind = p[i].kind == 0 ? ZS_X_GEMM : ZS_X_MEM;
        x->m = p[i].m;
        x->n = p[i].n;
        x->k = p[i].k;
        x->count = p[i].count;
        x->bytes = (int64_t)p[i].bytes;
        t = zs_t_delay(b, b->q_comp, (int64_t)p[i].ns, ZS_CLS_COMPUTE, name, u,
                       i == 0 ? d0 : t, i == 0 ? d1 : -1);
    }
    if (n == 0)
        t = zs_t_mark(b, b->q_comp, name, d0, d1, -1);
    if (a2a_in > 0)
        t = zs_t_coll_group(b, b->q_comp, ZS_COLL_ALLTOALL,
                            bwd ? a2a_in : a2a_out, sp, "Ulysses all-to-all", u,
                            t, -1);
    return t;
}

void zs_act_opts_of(const struct zs_bctx *b, struct zs_act_opts *ao)
{
    memset(ao, 0, sizeof *ao);
    ao->seq = b->c->seq_len;
    ao->micro_batch = b->c->micro_batch;
    ao->ckpt = (enum zs_ckpt)b->c->checkpointing;
    ao->attn = (enum zs_attn_impl)b->c->attention;
    ao->sp = (int)zs_cfg_seq_shards(b->c);
    ao->cp = (int)b->c->cp;
    ao->method = b->mo.method;
    ao->lora_rank = b->mo.lora_rank;
    ao->lora_targets = b->mo.lora_targets;
    ao->lora_dropout = b->c->lora_dropout;
    ao->kernels = b->c->kernels;
    ao->loss_eager = zs_cfg_loss_kernels(b->c) != b->c->kernels;
    ao->loss_chunks =
        b->c->loss == ZS_LOSS_CHUNKED ? ZS_TORCHTUNE_LOSS_CHUNKS : 0;
    ao->loss_fp32_output = b->c->loss == ZS_LOSS_FP32_OUTPUT ||
                           b->c->loss == ZS_LOSS_FP32_LOGITS;
    ao->loss_output_dropped = b->c->loss == ZS_LOSS_FP32_LOGITS;
    ao->loss_half = b->c->loss == ZS_LOSS_HALF;
    /* DeepSpeed's engine casts the module itself to fp16/bf16 and runs no
     * autocast (deepspeed/runtime/engine.py _configure_distributed_model:
     * "self.module.half()" / "self.module.bfloat16()"), so a softmax
     * without a dtype runs in 16 bits; under autocast it would be fp32
     * (softmax is on autocast's fp32 list). */
    ao->softmax_half = b->c->framework == ZS_FW_DEEPSPEED &&
                       zs_model_eager_softmax_keeps_dtype(b->m);
    ao->torchtune = b->c->trainer == ZS_TRAINER_TORCHTUNE;
    ao->loss_xentropy = b->c->loss == ZS_LOSS_FLASH_XENTROPY;
    /* torchtitan's `del pred` before loss.backward() (model.c) */
    ao->logits_dropped = b->c->trainer == ZS_TRAINER_TORCHTITAN;
}

/* Full checkpointing: the layer's recompute rebuilds its saved set (held
 * from here to the end of its backward), then the backward runs in its own
 * workspace.  torch/utils/checkpoint.py (CheckpointFunction.backward, the
 * reentrant form HF uses; the non-reentrant form unpacks the same way) runs
 * the layer's forward to completion before torch.autograd.backward on its
 * outputs, and the caching allocator returns a freed block to its stream's
 * pool at once (c10/cuda/CUDACachingAllocator.cpp free(): stream-ordered
 * reuse, no event wait on the allocating stream), so the recompute forward's
 * transients are reused for the backward's and the two workspaces are never
 * alive together: the backward part (work_bwd with nothing recomputed) is
 * allocated when the recompute forward's workspace is freed.  Measured:
 * OPT-Benchmark's ZeRO-3 offload rows (validation/published/opt-benchmark-*),
 * allocated +9..+12 % -> -5..+1 % (DeepSpeed, commit dd4e150).
 * The recompute forward runs with grad enabled (torch/utils/checkpoint.py
 * CheckpointFunction.backward: "with torch.enable_grad(): outputs =
 * ctx.run_function(*detached_inputs)"; the non-reentrant form reruns the
 * forward under the same grad mode), so what it makes for backward is
 * saved, already in the recomputed layer: its transients are those of a
 * layer without checkpointing, not the no-grad forward's (where e.g. the
 * eager softmax output is a transient). */
void zs_t_recompute_begin(struct zs_bctx *b, int unit,
                          const struct zs_act_opts *ao, int32_t before,
                          struct zs_recompute *r)
{
    struct zs_act_opts none = *ao;
    int64_t all = zs_model_act_work_bwd(b->m, ao), ws;
    none.ckpt = ZS_CKPT_NONE;
    ws = zs_model_act_work_bwd(b->m, &none);
    if (ws > all)
        ws = all;
    r->bwd_ws_bytes = ws;
    r->layer = zs_t_alloc(b, b->q_comp, b->p_gpu, all - ws, 0,
                          "recomputed layer", unit, before);
    r->fwd_ws = zs_t_alloc(b, b->q_comp, b->p_gpu,
                           zs_model_act_work_fwd(b->m, &none), 0,
                           "forward workspace", unit, before);
}

int32_t zs_t_recompute_end(struct zs_bctx *b, int unit,
                           const struct zs_recompute *r, int32_t c)
{
    int32_t f = zs_t_free(b, b->q_comp, r->fwd_ws, c);
    return zs_t_alloc(b, b->q_comp, b->p_gpu, r->bwd_ws_bytes, 0,
                      "backward workspace", unit, f >= 0 ? f : c);
}

void zs_act_opts_at(const struct zs_bctx *b, int layer, struct zs_act_opts *ao)
{
    zs_act_opts_of(b, ao);
    if (layer >= 0)
        ao->ckpt = zs_ckpt_of_layer(ao->ckpt, b->c->ckpt_every, layer);
}

int32_t zs_t_loss_forward(struct zs_bctx *b, int unit,
                          const struct zs_loss_bytes *lb, int32_t c,
                          int32_t lp[ZS_LOSS_PIECES_MAX])
{
    int n = lb->pieces > 0 ? lb->pieces : 1;
    int32_t t = c;
    assert(n <= ZS_LOSS_PIECES_MAX);
    for (int k = 0; k < n; k++) {
        int32_t f32 = zs_t_alloc(b, b->q_comp, b->p_gpu, lb->logits_fp32, 0,
                                 lb->half ? "shifted logits copy (16-bit)"
                                          : "logits upcast (fp32)",
                                 unit, t);
        lp[k] = zs_t_alloc(b, b->q_comp, b->p_gpu, lb->logprobs_fp32, 0,
                           lb->fused_upcast
                               ? "loss row max + log-sum-exp (fp32, saved)"
                           : lb->half ? "log-softmax (16-bit, saved)"
                                      : "log-softmax (fp32, saved)",
                           unit, f32 >= 0 ? f32 : t);
        if (f32 >= 0)
            t = zs_t_free(b, b->q_comp, f32, lp[k]);
        else if (lp[k] >= 0)
            t = lp[k];
    }
    return t;
}

void zs_t_loss_release(struct zs_bctx *b, const struct zs_loss_bytes *lb,
                       int32_t lp[ZS_LOSS_PIECES_MAX], int32_t d0)
{
    int n = lb->pieces > 0 ? lb->pieces : 1;
    for (int k = 0; k < n; k++) {
        zs_t_free(b, b->q_comp, lp[k], d0);
        lp[k] = -1;
    }
}

bool zs_full_ckpt_at(const struct zs_bctx *b, int layer)
{
    return zs_ckpt_of_layer((enum zs_ckpt)b->c->checkpointing,
                            b->c->ckpt_every, layer) == ZS_CKPT_FULL;
}

int zs_micro_sim(const struct zs_bctx *b, int st)
{
    int64_t accum = b->c->accum; /* at most 16777216 (config.c) */
    if (b->su->all_micro_steps || b->steady[st] + 2 >= accum)
        return (int)accum;
    return b->steady[st] + 2;
}

/* The position of step st's micro-step mi (of nm) as segment seg reads it
 * (zs_micro_ops.pos_reads), with the segment: its class.  Only segments of
 * one class can be built in the same state (replay.c compares the states),
 * so a segment is recorded only when a later one has its class. */
static unsigned position_class(const struct zs_micro_ops *ops, int seg,
                               int st, int mi, int nm)
{
    unsigned p = (mi == 0 ? ZS_POS_FIRST : 0) |
                 (mi == nm - 1 ? ZS_POS_LAST : 0) |
                 (st == 0 && mi == 0 ? ZS_POS_FIRST_STEP : 0);
    return (unsigned)seg << 3 | (p & ops->pos_reads[seg]);
}

#define POS_CLASSES (ZS_MAX_SEG << 3)

void zs_run_steps(struct zs_bctx *b, void *ctx,
                  const struct zs_micro_ops *ops)
{
    /* the last micro-step (counted over the build) of each position class */
    int64_t last[POS_CLASSES], k = 0;
    assert(ops->nseg >= 1 && ops->nseg <= ZS_MAX_SEG);
    for (int c = 0; c < POS_CLASSES; c++)
        last[c] = -1;
    for (int st = 0; st < b->nsteps; st++) {
        int nm = zs_micro_sim(b, st);
        for (int mi = 0; mi < nm; mi++, k++)
            for (int seg = 0; seg < ops->nseg; seg++)
                last[position_class(ops, seg, st, mi, nm)] = k;
    }
    k = 0;
    for (int st = 0; st < b->nsteps; st++) {
        int nm = zs_micro_sim(b, st);
        bool shortcut = nm < b->c->accum;
        assert(nm <= b->micro_cap);
        b->step = st + 1;
        b->step_start[st] =
            zs_t_mark(b, b->q_host, "step start", b->last_host, -1, -1);
        b->nmicro_sim[st] = nm;
        for (int mi = 0; mi < nm; mi++, k++) {
            int32_t *start = &b->micro_start[zs_micro_at(b, st, mi)];
            b->micro = mi;
            /* the shortcut's proof (result.c zs_shortcut_proved): the engine's
             * state at the start of the last steady micro-step and at the
             * boundary's, allocations from the first steady one on named
             * relative to each mark */
            if (shortcut && mi >= nm - 2)
                *start = zs_t_snapshot(
                    b, mi == 1 ? -1 : b->micro_start[zs_micro_at(b, st, 1)],
                    "micro-step start");
            else
                *start = zs_t_mark(b, b->q_host, "micro-step start",
                                   b->last_host, -1, -1);
            for (int seg = 0; seg < ops->nseg; seg++) {
                ops->begin(ctx, seg, mi == nm - 1);
                /* replay.c: the same tasks as building it, when a segment
                 * recorded before was built in the same state */
                b->replaying = zs_replay_micro(b, ctx, ops, seg);
                if (!b->replaying &&
                    k < last[position_class(ops, seg, st, mi, nm)]) {
                    zs_replay_record_begin(b, ctx, ops, seg);
                    ops->build(ctx, seg);
                    zs_replay_record_end(b, ctx, ops);
                } else if (!b->replaying) {
                    ops->build(ctx, seg);
                }
                if (!b->replaying)
                    zs_replay_built(b->rp);
                b->replaying = false;
            }
            b->micro_end[zs_micro_at(b, st, mi)] =
                zs_t_mark(b, b->q_host, "micro-step end", b->last_host, -1, -1);
        }
        ops->opt(ctx, st == 0);
        zs_t_drain(b, "step drain");
        b->step_end[st] =
            zs_t_mark(b, b->q_host, "step end", b->last_host, -1, -1);
    }
}
