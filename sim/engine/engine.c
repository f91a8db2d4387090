/*
 * engine.c — the discrete-event core: topology, task submission, the event
 * loop, fluid flows and the CPU core pool (memory pools are in pool.c).
 *
 * Invariants.
 *  - Dependencies name earlier tasks and queues run in submission order, so
 *    the task graph is acyclic by construction; the only way a run can stall
 *    is a task that needs more cores than the pool has (reported as a
 *    deadlock naming that task).
 *  - pend[id] counts the unfinished queue predecessor and dependencies;
 *    it reaches 0 exactly once, and the task whose completion brought it
 *    there is its blocked_by.  pend == -1 marks a task that holds its
 *    cores (or needs none) and has started.
 *  - Ready tasks are started from a FIFO worklist at the current instant;
 *    zero-duration tasks complete inside that loop, so chains of any length
 *    need no recursion.
 *  - The heap holds one completion event per running DELAY/FLOW task.
 *  - Flow rates change only at instants when a flow starts or ends; the
 *    recomputation is deferred until every event of the instant has been
 *    handled (flows_dirty), so k simultaneous changes cost one recompute.
 *    A flow whose stale completion event falls at the current instant is
 *    complete regardless, since its old rate held until now.
 *  - A link coupled to another (zs_sim_set_link_coupling) offers its
 *    reduced capacity exactly while the other's nflows > 0; the other
 *    turning busy or idle marks it dirty like a flow start or end on it.
 *  - Only the flows connected (through shared links, transitively) to a
 *    flow that started or ended are recomputed; each flow keeps the time
 *    its remaining bytes refer to (flow.t_ns).
 *
 * Cost: O(log E) per DELAY; per instant with flow starts/ends one closure
 * pass O(F * L) and one progressive filling over the affected component,
 * O(F_c^2 * L) worst case, plus one heap update per flow whose completion
 * time moved.
 */
#include "engine/engine_int.h"

#include "util/alloc.h"
#include "util/err.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define NS_PER_S 1e9
/* Simulated time never passes 4e18 ns (~127 years), so now + any duration
 * checked against it cannot overflow int64. */
#define TIME_MAX_NS ((int64_t)4000000000000000000LL)

zs_sim *zs_sim_new(void)
{
    zs_sim *s = zs_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->cores = 1;
    zs_heap_init(&s->heap);
    return s;
}

void zs_sim_free(zs_sim *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nlinks; i++)
        zs_free(s->links[i].name);
    for (size_t i = 0; i < s->nqueues; i++)
        zs_free(s->queues[i].name);
    for (size_t i = 0; i < s->npools; i++)
        zs_pool_release(&s->pools[i]);
    zs_free(s->links);
    zs_free(s->queues);
    zs_free(s->pools);
    zs_free(s->tasks);
    zs_free(s->recs);
    zs_free(s->deps);
    zs_free(s->fdesc);
    zs_free(s->succ_off);
    zs_free(s->succ);
    zs_free(s->work);
    zs_free(s->pend);
    zs_free(s->pend0);
    zs_free(s->cwait);
    zs_free(s->touched);
    zs_free(s->act);
    zs_free(s->affl);
    zs_free(s->snaps);
    zs_free(s->seg_scratch);
    zs_heap_release(&s->heap);
    zs_free(s);
}

/* Clears run results that depend on the submitted tasks. */
static void clear_run(zs_sim *s)
{
    s->now_ns = 0;
    s->stamp = s->dstamp = 1;
    for (size_t i = 0; i < s->nlinks; i++)
        s->links[i].stamp = s->links[i].dirty = 0;
    s->flows_dirty = 0;
    s->events = 0;
    s->done = 0;
    s->nact = 0;
    s->work_head = s->work_tail = 0;
    s->cwait_head = s->cwait_tail = 0;
    s->oom_set = 0;
    memset(&s->oom, 0, sizeof s->oom);
    s->oom.pool = -1;
    s->oom.task = -1;
    s->heap.n = 0;
    for (size_t i = 0; i < s->nlinks; i++) {
        s->links[i].bytes_moved = 0;
        s->links[i].nflows = 0;
    }
    for (size_t i = 0; i < s->npools; i++)
        zs_pool_clear_run(&s->pools[i]);
    s->started_max = -1;
    s->unfinished = 0;
    for (size_t i = 0; i < s->nsnaps; i++) {
        memset(&s->snaps[i].at, 0, sizeof s->snaps[i].at);
        s->snaps[i].at.t_ns = -1;
    }
}

void zs_sim_reset(zs_sim *s)
{
    if (!s)
        return;
    clear_run(s);
    s->ntasks = 0;
    s->ndeps = 0;
    s->nfdesc = 0;
    s->nevtasks = 0;
    s->nsnaps = 0;
    s->max_task_cores = 0;
    s->csr_ok = 0;
    s->ran = 0;
    for (size_t i = 0; i < s->nqueues; i++)
        s->queues[i].last = -1;
    for (size_t i = 0; i < s->npools; i++)
        s->pools[i].nallocs = 0;
    zs_err_clear(&s->err);
}

const char *zs_sim_errmsg(const zs_sim *s)
{
    return s ? s->err.msg : "no sim";
}

/* ---- topology ---------------------------------------------------------- */

static int valid_rate(double v)
{
    return isfinite(v) && v > 0;
}

int zs_sim_add_link(zs_sim *s, const char *name, double capacity_bytes_per_s)
{
    struct link *l;
    char *nm;
    if (!s)
        return ZS_ERUNTIME;
    if (!valid_rate(capacity_bytes_per_s))
        return zs_err_set(&s->err, ZS_ERUNTIME,
                          "invalid capacity of link '%s': must be > 0 "
                          "bytes/s (got %g)",
                          name ? name : "?", capacity_bytes_per_s);
    if (s->nlinks >= INT16_MAX)
        return zs_err_set(&s->err, ZS_ELIMIT, "too many links (limit %d)",
                          INT16_MAX);
    if (zs_grow((void **)&s->links, &s->links_cap, s->nlinks + 1,
                sizeof *s->links))
        return zs_err_set(&s->err, ZS_ENOMEM, "out of memory adding a link");
    /* The touched list must hold every link; grow it now, not in run. */
    if (zs_grow((void **)&s->touched, &s->touched_cap, s->nlinks + 1,
                sizeof *s->touched))
        return zs_err_set(&s->err, ZS_ENOMEM, "out of memory adding a link");
    nm = zs_strdup(name ? name : "");
    if (!nm)
        return zs_err_set(&s->err, ZS_ENOMEM, "out of memory adding a link");
    l = &s->links[s->nlinks];
    memset(l, 0, sizeof *l);
    l->name = nm;
    l->cap = capacity_bytes_per_s;
    l->cpl_other = l->cpl_first = l->cpl_next = -1;
    l->cpl_factor = 1.0;
    return (int)s->nlinks++;
}

int zs_sim_add_queue(zs_sim *s, const char *name)
{
    char *nm;
    if (!s)
        return ZS_ERUNTIME;
    if (s->nqueues >= INT16_MAX)
        return zs_err_set(&s->err, ZS_ELIMIT, "too many queues (limit %d)",
                          INT16_MAX);
    if (zs_grow((void **)&s->queues, &s->queues_cap, s->nqueues + 1,
                sizeof *s->queues))
        return zs_err_set(&s->err, ZS_ENOMEM, "out of memory adding a queue");
    nm = zs_strdup(name ? name : "");
    if (!nm)
        return zs_err_set(&s->err, ZS_ENOMEM, "out of memory adding a queue");
    s->queues[s->nqueues].name = nm;
    s->queues[s->nqueues].last = -1;
    s->queues[s->nqueues].stream = 0;
    return (int)s->nqueues++;
}

int zs_sim_set_queue_stream(zs_sim *s, int queue, int stream)
{
    if (!s || !zs_index_ok(queue, s->nqueues))
        return ZS_ERUNTIME;
    if (stream < 0 || stream >= ZS_ALLOC_STREAMS)
        return zs_err_set(&s->err, ZS_ELIMIT,
                          "allocator stream %d out of range [0, %d)", stream,
                          ZS_ALLOC_STREAMS);
    s->queues[queue].stream = stream;
    return 0;
}

int zs_sim_add_pool(zs_sim *s, const char *name, enum zs_pool_kind kind,
                    int64_t capacity_bytes)
{
    struct pool *p;
    char *nm;
    if (!s)
        return ZS_ERUNTIME;
    if (kind != ZS_POOL_PLAIN && kind != ZS_POOL_CUDA_CACHING &&
        kind != ZS_POOL_HOST)
        return zs_err_set(&s->err, ZS_ERUNTIME,
                          "invalid kind of pool '%s': must be plain, "
                          "cuda_caching or host (got %d)",
                          name ? name : "?", (int)kind);
    if (capacity_bytes < 0)
        return zs_err_set(&s->err, ZS_ERUNTIME,
                          "invalid capacity of pool '%s': must be >= 0 "
                          "bytes, 0 for unlimited (got %lld)",
                          name ? name : "?", (long long)capacity_bytes);
    if (s->npools >= INT16_MAX)
        return zs_err_set(&s->err, ZS_ELIMIT, "too many pools (limit %d)",
                          INT16_MAX);
    if (zs_grow((void **)&s->pools, &s->pools_cap, s->npools + 1,
                sizeof *s->pools))
        return zs_err_set(&s->err, ZS_ENOMEM, "out of memory adding a pool");
    nm = zs_strdup(name ? name : "");
    if (!nm)
        return zs_err_set(&s->err, ZS_ENOMEM, "out of memory adding a pool");
    p = &s->pools[s->npools];
    memset(p, 0, sizeof *p);
    p->name = nm;
    p->kind = kind;
    p->capacity = capacity_bytes;
    zs_pool_clear_run(p);
    return (int)s->npools++;
}

void zs_sim_set_cores(zs_sim *s, int cores)
{
    /* Invalid values are kept and reported by zs_sim_run, like a link's
     * capacity (this returns nothing). */
    if (s)
        s->cores = cores;
}

void zs_sim_set_link_capacity(zs_sim *s, int link, double capacity_bytes_per_s)
{
    /* Invalid values are kept and reported by zs_sim_run (this returns
     * nothing, and silently ignoring a bad value would hide a bug). */
    if (s && zs_index_ok(link, s->nlinks))
        s->links[link].cap = capacity_bytes_per_s;
}

int zs_sim_set_link_coupling(zs_sim *s, int link, int other, double factor)
{
    struct link *l;
    int32_t *pp;
    if (!s)
        return ZS_ERUNTIME;
    if (link < 0 || (size_t)link >= s->nlinks)
        return zs_err_set(&s->err, ZS_ERUNTIME,
                          "invalid link of a coupling: must be in [0, %zu) "
                          "(got %d)",
                          s->nlinks, link);
    l = &s->links[link];
    if (other < -1 || other >= (int)s->nlinks || other == link)
        return zs_err_set(&s->err, ZS_ERUNTIME,
                          "invalid coupling of link '%s': the other link "
                          "must be another link in [0, %zu), or -1 for none "
                          "(got %d)",
                          l->name, s->nlinks, other);
    if (other >= 0 && !(isfinite(factor) && factor > 0 && factor <= 1))
        return zs_err_set(&s->err, ZS_ERUNTIME,
                          "invalid coupling factor of link '%s': must be in "
                          "(0, 1] (got %g)",
                          l->name, factor);
    /* Unlink from the old other's dependents list, then link to the new. */
    if (l->cpl_other >= 0) {
        pp = &s->links[l->cpl_other].cpl_first;
        while (*pp != link) {
            assert(*pp >= 0);
            pp = &s->links[*pp].cpl_next;
        }
        *pp = l->cpl_next;
        l->cpl_next = -1;
    }
    l->cpl_other = other;
    l->cpl_factor = other >= 0 ? factor : 1.0;
    if (other >= 0) {
        l->cpl_next = s->links[other].cpl_first;
        s->links[other].cpl_first = link;
    }
    return 0;
}

/* The capacity link l offers at this instant: its own, times its coupling
 * factor while the link it is coupled to carries an active flow. */
static double link_cap_now(const zs_sim *s, const struct link *l)
{
    if (l->cpl_other >= 0 && s->links[l->cpl_other].nflows > 0)
        return l->cap * l->cpl_factor;
    return l->cap;
}

double zs_sim_link_capacity_now(const zs_sim *s, int link)
{
    return s && zs_index_ok(link, s->nlinks) ? link_cap_now(s, &s->links[link])
                                             : 0;
}

void zs_sim_set_pool_expandable(zs_sim *s, int pool, int on)
{
    if (s && zs_index_ok(pool, s->npools) &&
        s->pools[pool].kind == ZS_POOL_CUDA_CACHING)
        s->pools[pool].expandable = on != 0;
}

void zs_sim_set_pool_max_split(zs_sim *s, int pool, int64_t bytes)
{
    if (s && zs_index_ok(pool, s->npools) &&
        s->pools[pool].kind == ZS_POOL_CUDA_CACHING)
        s->pools[pool].max_split = bytes > 0 ? bytes : 0;
}

void zs_sim_set_pool_capacity(zs_sim *s, int pool, int64_t capacity_bytes)
{
    /* kept and reported by zs_sim_run when negative (see set_cores) */
    if (s && zs_index_ok(pool, s->npools))
        s->pools[pool].capacity = capacity_bytes;
}

/* ---- submission -------------------------------------------------------- */

#define TNAME(d) ((d)->name ? (d)->name : "")

/* "invalid FIELD of KIND 'name' (id N): must be in [0, hi] (got v)", or
 * with index set "[0, hi)": the range error of a task description. */
static int bad_range(zs_sim *s, const char *field, const char *kind,
                     const struct zs_task_desc *d, int32_t id, long long hi,
                     int v, int index)
{
    return zs_err_set(&s->err, ZS_ERUNTIME,
                      "invalid %s of %s '%s' (id %d): must be in [0, %lld%c "
                      "(got %d)",
                      field, kind, TNAME(d), id, hi, index ? ')' : ']', v);
}

/* What every task kind must satisfy: kind, queue, dependencies, cls, cores. */
static int check_common(zs_sim *s, const struct zs_task_desc *d, int32_t id)
{
    struct zs_err *e = &s->err;
    if (d->kind < ZS_TASK_DELAY || d->kind > ZS_TASK_MARK)
        return zs_err_set(e, ZS_ERUNTIME,
                          "invalid kind of task '%s' (id %d): must be 0..4 "
                          "(got %d)",
                          TNAME(d), id, (int)d->kind);
    if (d->queue < 0 || (size_t)d->queue >= s->nqueues)
        return bad_range(s, "queue", "task", d, id, (long long)s->nqueues,
                         d->queue, 1);
    if (d->ndeps < 0 || (d->ndeps > 0 && !d->deps))
        return zs_err_set(e, ZS_ERUNTIME,
                          "invalid deps of task '%s' (id %d): ndeps %d with "
                          "%s list",
                          TNAME(d), id, d->ndeps, d->deps ? "a" : "no");
    for (int i = 0; i < d->ndeps; i++)
        if (d->deps[i] < 0 || d->deps[i] >= id)
            return zs_err_set(e, ZS_ERUNTIME,
                              "invalid dependency of task '%s' (id %d): must "
                              "name an earlier task in [0, %d) (got %d)",
                              TNAME(d), id, id, d->deps[i]);
    if (d->cls < 0 || d->cls > 15)
        return bad_range(s, "cls", "task", d, id, 15, d->cls, 0);
    if (d->cores < 0 || d->cores > INT16_MAX)
        return bad_range(s, "cores", "task", d, id, INT16_MAX, d->cores, 0);
    if (d->snapshot && d->kind != ZS_TASK_MARK)
        return zs_err_set(e, ZS_ERUNTIME,
                          "invalid snapshot on task '%s' (id %d): only a "
                          "MARK records one",
                          TNAME(d), id);
    if (d->snapshot && (d->snapshot_from < 0 || d->snapshot_from > id))
        return bad_range(s, "snapshot_from", "task", d, id, id,
                         d->snapshot_from, 0);
    return 0;
}

static int check_flow(zs_sim *s, const struct zs_task_desc *d, int32_t id)
{
    struct zs_err *e = &s->err;
    if (!isfinite(d->bytes) || d->bytes < 0 || d->bytes > 1e18)
        return zs_err_set(e, ZS_ERUNTIME,
                          "invalid bytes of flow '%s' (id %d): must be "
                          "in [0, 1e18] (got %g)",
                          TNAME(d), id, d->bytes);
    if (!isfinite(d->rate_cap) || d->rate_cap < 0)
        return zs_err_set(e, ZS_ERUNTIME,
                          "invalid rate_cap of flow '%s' (id %d): must "
                          "be >= 0 bytes/s, 0 for none (got %g)",
                          TNAME(d), id, d->rate_cap);
    if (d->nlinks < 0 || d->nlinks > ZS_FLOW_MAXLINKS)
        return bad_range(s, "nlinks", "flow", d, id, ZS_FLOW_MAXLINKS,
                         d->nlinks, 0);
    if (d->nlinks == 0 && d->rate_cap == 0)
        return zs_err_set(e, ZS_ERUNTIME,
                          "unbounded flow '%s' (id %d): needs at least "
                          "one link or a rate_cap > 0",
                          TNAME(d), id);
    for (int i = 0; i < d->nlinks; i++) {
        if (d->links[i] < 0 || (size_t)d->links[i] >= s->nlinks)
            return bad_range(s, "link", "flow", d, id, (long long)s->nlinks,
                             d->links[i], 1);
        if (!isfinite(d->weight[i]) || d->weight[i] < 0 || d->weight[i] > 1e6)
            return zs_err_set(e, ZS_ERUNTIME,
                              "invalid weight of flow '%s' (id %d) on "
                              "link %d: must be in [0, 1e6], 0 meaning "
                              "1 (got %g)",
                              TNAME(d), id, d->links[i], d->weight[i]);
    }
    return 0;
}

static int check_alloc(zs_sim *s, const struct zs_task_desc *d, int32_t id)
{
    struct zs_err *e = &s->err;
    if (d->pool < 0 || (size_t)d->pool >= s->npools)
        return bad_range(s, "pool", "alloc", d, id, (long long)s->npools,
                         d->pool, 1);
    if (d->alloc_bytes < 0 || d->alloc_bytes > ((int64_t)1 << 60))
        return zs_err_set(e, ZS_ERUNTIME,
                          "invalid alloc_bytes of alloc '%s' (id %d): "
                          "must be in [0, 2^60] (got %lld)",
                          TNAME(d), id, (long long)d->alloc_bytes);
    if ((d->alloc_flags & ~(ZS_ALLOC_PINNED | ZS_ALLOC_LOCKED)) ||
        (d->alloc_flags & ZS_ALLOC_PINNED && d->alloc_flags & ZS_ALLOC_LOCKED))
        return zs_err_set(e, ZS_ERUNTIME,
                          "invalid alloc_flags of alloc '%s' (id %d): "
                          "ZS_ALLOC_PINNED or ZS_ALLOC_LOCKED (got %#x)",
                          TNAME(d), id, d->alloc_flags);
    return 0;
}

static int check_free(zs_sim *s, const struct zs_task_desc *d, int32_t id)
{
    struct zs_err *e = &s->err;
    if (d->alloc_task < 0 || d->alloc_task >= id ||
        s->tasks[d->alloc_task].kind != ZS_TASK_ALLOC)
        return zs_err_set(e, ZS_ERUNTIME,
                          "invalid alloc_task of free '%s' (id %d): must "
                          "name an earlier alloc task (got %d)",
                          TNAME(d), id, d->alloc_task);
    if (s->tasks[d->alloc_task].freed >= 0)
        return zs_err_set(e, ZS_ERUNTIME,
                          "double free in task '%s' (id %d): buffer of "
                          "task %d is already freed by task %d",
                          TNAME(d), id, d->alloc_task,
                          s->tasks[d->alloc_task].freed);
    if ((d->alloc_flags & ~ZS_FREE_EMPTY_CACHE) ||
        (d->alloc_flags &&
         s->pools[s->tasks[d->alloc_task].pool].kind != ZS_POOL_CUDA_CACHING))
        return zs_err_set(e, ZS_ERUNTIME,
                          "invalid alloc_flags of free '%s' (id %d): "
                          "ZS_FREE_EMPTY_CACHE, on a CUDA caching pool "
                          "(got %#x)",
                          TNAME(d), id, d->alloc_flags);
    return 0;
}

static int check_delay(zs_sim *s, const struct zs_task_desc *d, int32_t id)
{
    if (d->dur_ns < 0)
        return zs_err_set(&s->err, ZS_ERUNTIME,
                          "invalid dur_ns of task '%s' (id %d): must be "
                          ">= 0 (got %lld)",
                          TNAME(d), id, (long long)d->dur_ns);
    return 0;
}

static int check_desc(zs_sim *s, const struct zs_task_desc *d, int32_t id)
{
    int rc = check_common(s, d, id);
    if (rc)
        return rc;
    switch (d->kind) {
    case ZS_TASK_DELAY:
        return check_delay(s, d, id);
    case ZS_TASK_FLOW:
        return check_flow(s, d, id);
    case ZS_TASK_ALLOC:
        return check_alloc(s, d, id);
    case ZS_TASK_FREE:
        return check_free(s, d, id);
    default:
        return 0; /* MARK: nothing of its own */
    }
}

/* Room for task id, its deps (extra: the FREE's implicit one) and a FLOW's
 * links.  zs_grow only when full: once warm (a planner thread re-using its
 * sim across candidates) a submission calls no allocator at all. */
static inline int submit_reserve(zs_sim *s, const struct zs_task_desc *d,
                                 size_t id, int extra)
{
    return (id + 1 > s->tasks_cap && zs_grow((void **)&s->tasks, &s->tasks_cap,
                                             id + 1, sizeof *s->tasks)) ||
           (id + 1 > s->recs_cap && zs_grow((void **)&s->recs, &s->recs_cap,
                                            id + 1, sizeof *s->recs)) ||
           (s->ndeps + (size_t)d->ndeps + (size_t)extra > s->deps_cap &&
            zs_grow((void **)&s->deps, &s->deps_cap,
                    s->ndeps + (size_t)d->ndeps + (size_t)extra,
                    sizeof *s->deps)) ||
           (d->kind == ZS_TASK_FLOW && s->nfdesc + 1 > s->fdesc_cap &&
            zs_grow((void **)&s->fdesc, &s->fdesc_cap, s->nfdesc + 1,
                    sizeof *s->fdesc)) ||
           (d->snapshot && s->nsnaps + 1 > s->snaps_cap &&
            zs_grow((void **)&s->snaps, &s->snaps_cap, s->nsnaps + 1,
                    sizeof *s->snaps));
}

/* The part of task t (id) that depends on its kind. */
static inline void submit_kind(zs_sim *s, struct task *t,
                               const struct zs_task_desc *d, size_t id)
{
    switch (d->kind) {
    case ZS_TASK_DELAY:
        t->dur_ns = d->dur_ns;
        s->nevtasks++;
        break;
    case ZS_TASK_FLOW: {
        struct flowdesc *f = &s->fdesc[s->nfdesc];
        f->bytes = d->bytes;
        f->rate_cap = d->rate_cap;
        f->nlinks = d->nlinks;
        for (int i = 0; i < d->nlinks; i++) {
            f->links[i] = d->links[i];
            f->weight[i] = d->weight[i] > 0 ? d->weight[i] : 1.0;
        }
        t->aux = (int32_t)s->nfdesc++;
        s->nevtasks++;
        break;
    }
    case ZS_TASK_ALLOC:
        t->pool = (int16_t)d->pool;
        t->alloc_bytes = d->alloc_bytes;
        t->flags = (uint16_t)d->alloc_flags;
        s->pools[d->pool].nallocs++;
        break;
    case ZS_TASK_FREE:
        t->aux = d->alloc_task;
        t->pool = s->tasks[d->alloc_task].pool;
        t->flags = (uint16_t)d->alloc_flags;
        s->tasks[d->alloc_task].freed = (int32_t)id;
        break;
    default: /* MARK */
        if (d->snapshot) {
            struct snap *sn = &s->snaps[s->nsnaps];
            sn->task = (int32_t)id;
            sn->from = d->snapshot_from;
            memset(&sn->at, 0, sizeof sn->at);
            sn->at.t_ns = -1;
            t->aux = (int32_t)s->nsnaps++;
        }
        break;
    }
}

/* Task id joins the end of its queue, and its record starts unrun. */
static inline void submit_enqueue(zs_sim *s, struct task *t,
                                  const struct zs_task_desc *d, size_t id)
{
    struct zs_task_rec *r = &s->recs[id];
    if (s->queues[d->queue].last >= 0) {
        s->tasks[s->queues[d->queue].last].qnext = (int32_t)id;
        t->qprev = 1;
    }
    s->queues[d->queue].last = (int32_t)id;
    r->start_ns = r->end_ns = -1;
    r->blocked_by = -1;
    r->queue = d->queue;
    r->cls = d->cls;
    r->tag = d->tag;
    r->kind = d->kind;
    r->name = d->name;
}

int32_t zs_sim_submit(zs_sim *s, const struct zs_task_desc *d)
{
    struct task *t;
    size_t id;
    int extra;
    int rc;
    if (!s)
        return ZS_ERUNTIME;
    if (!d)
        return zs_err_set(&s->err, ZS_ERUNTIME, "no task description");
    id = s->ntasks;
    if (id >= INT32_MAX - 1)
        return zs_err_set(&s->err, ZS_ELIMIT, "too many tasks (limit %d)",
                          INT32_MAX - 1);
    rc = check_desc(s, d, (int32_t)id);
    if (rc)
        return rc;
    /* A FREE implicitly depends on its ALLOC, so it can never run first. */
    extra = d->kind == ZS_TASK_FREE;
    if ((size_t)d->ndeps + (size_t)extra > (size_t)INT32_MAX - s->ndeps)
        return zs_err_set(&s->err, ZS_ELIMIT, "too many dependencies");
    if (submit_reserve(s, d, id, extra))
        return zs_err_set(&s->err, ZS_ENOMEM,
                          "out of memory submitting task '%s'", TNAME(d));
    t = &s->tasks[id];
    memset(t, 0, sizeof *t);
    t->kind = (int16_t)d->kind;
    t->cores = (int16_t)d->cores;
    if (d->cores > s->max_task_cores)
        s->max_task_cores = d->cores;
    t->qnext = -1;
    t->aux = -1;
    t->freed = -1;
    /* run state as prepare() leaves it, so that the first run after
     * building skips re-initialising every task */
    t->blk = -1;
    t->fslot = -1;
    t->log_alloc = t->log_free = -1;
    t->dep_off = (int32_t)s->ndeps;
    t->ndeps = d->ndeps + extra;
    for (int i = 0; i < d->ndeps; i++) /* usually 1-3: no memcpy call */
        s->deps[s->ndeps + (size_t)i] = d->deps[i];
    if (extra)
        s->deps[s->ndeps + (size_t)d->ndeps] = d->alloc_task;
    s->ndeps += (size_t)t->ndeps;
    submit_kind(s, t, d, id);
    submit_enqueue(s, t, d, id);
    s->ntasks++;
    s->csr_ok = 0;
    return (int32_t)id;
}

/* x as zs_sim_resubmit maps it (engine.h), -1 when it has no image. */
static inline int32_t remap(int32_t x, int32_t keep_from, int32_t off,
                            const int32_t *from, const int32_t *to,
                            size_t nmap)
{
    size_t lo = 0, hi = nmap;
    if (x >= keep_from)
        return x + off;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (from[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < nmap && from[lo] == x ? to[lo] : -1;
}

int32_t zs_sim_resubmit(zs_sim *s, int32_t src, int32_t n, int32_t keep_from,
                        const int32_t *from, const int32_t *to, size_t nmap,
                        int32_t tag_keep, int32_t tag_set)
{
    size_t first, nd = 0, nf = 0;
    int32_t off;
    if (!s)
        return ZS_ERUNTIME;
    first = s->ntasks;
    if (n < 0 || src < 0 || keep_from < 0 || keep_from > src ||
        (size_t)src + (size_t)n > first)
        return zs_err_set(&s->err, ZS_ERUNTIME,
                          "invalid resubmission of tasks %d..%d (from %d) "
                          "of %zu",
                          src, src + n - 1, keep_from, first);
    if (first + (size_t)n >= (size_t)INT32_MAX - 1)
        return zs_err_set(&s->err, ZS_ELIMIT, "too many tasks (limit %d)",
                          INT32_MAX - 1);
    for (int32_t i = src; i < src + n; i++) {
        const struct task *o = &s->tasks[i];
        nd += (size_t)o->ndeps;
        nf += o->kind == ZS_TASK_FLOW;
        if (o->kind == ZS_TASK_MARK && o->aux >= 0)
            return zs_err_set(&s->err, ZS_ERUNTIME,
                              "cannot resubmit snapshot mark %d", i);
    }
    if ((first + (size_t)n > s->tasks_cap &&
         zs_grow((void **)&s->tasks, &s->tasks_cap, first + (size_t)n,
                 sizeof *s->tasks)) ||
        (first + (size_t)n > s->recs_cap &&
         zs_grow((void **)&s->recs, &s->recs_cap, first + (size_t)n,
                 sizeof *s->recs)) ||
        (s->ndeps + nd > s->deps_cap &&
         zs_grow((void **)&s->deps, &s->deps_cap, s->ndeps + nd,
                 sizeof *s->deps)) ||
        (s->nfdesc + nf > s->fdesc_cap &&
         zs_grow((void **)&s->fdesc, &s->fdesc_cap, s->nfdesc + nf,
                 sizeof *s->fdesc)))
        return zs_err_set(&s->err, ZS_ENOMEM, "out of memory resubmitting "
                                              "tasks");
    off = (int32_t)first - src;
    {
        /* locals: the arrays do not move from here on, and the counters
         * stay in registers */
        struct task *tasks = s->tasks;
        struct zs_task_rec *recs = s->recs;
        int32_t *deps = s->deps;
        size_t ndeps = s->ndeps, nfdesc = s->nfdesc;
        int64_t nevtasks = s->nevtasks;
        int rc = 0;
        int32_t i;
        for (i = 0; i < n; i++) {
            const struct task *o = &tasks[src + i];
            const struct zs_task_rec *orec = &recs[src + i];
            int32_t id = (int32_t)first + i;
            struct task *t = &tasks[id];
            struct zs_task_rec *r = &recs[id];
            struct queue *q = &s->queues[orec->queue];
            *t = *o;
            t->dep_off = (int32_t)ndeps;
            for (int32_t j = 0; j < o->ndeps; j++) {
                int32_t y = remap(deps[o->dep_off + j], keep_from, off, from,
                                  to, nmap);
                if (y < 0 || y >= id) {
                    rc = zs_err_set(&s->err, ZS_ERUNTIME,
                                    "resubmitted task %d: dependency %d has "
                                    "no image",
                                    id, deps[o->dep_off + j]);
                    break;
                }
                deps[ndeps + (size_t)j] = y;
            }
            if (rc)
                break;
            ndeps += (size_t)o->ndeps;
            t->qnext = -1;
            t->qprev = q->last >= 0;
            t->freed = -1;
            t->fslot = -1;
            t->held = 0;
            t->blk = -1;
            t->log_alloc = t->log_free = -1;
            switch (o->kind) {
            case ZS_TASK_DELAY:
                nevtasks++;
                break;
            case ZS_TASK_FLOW:
                s->fdesc[nfdesc] = s->fdesc[o->aux];
                t->aux = (int32_t)nfdesc++;
                nevtasks++;
                break;
            case ZS_TASK_ALLOC:
                s->pools[o->pool].nallocs++;
                break;
            case ZS_TASK_FREE: {
                /* its ALLOC is its last dependency, mapped above */
                int32_t a = deps[t->dep_off + t->ndeps - 1];
                if (tasks[a].kind != ZS_TASK_ALLOC || tasks[a].freed >= 0) {
                    rc = zs_err_set(&s->err, ZS_ERUNTIME,
                                    "resubmitted free %d: task %d is no "
                                    "live alloc",
                                    id, a);
                    break;
                }
                t->aux = a;
                tasks[a].freed = id;
                break;
            }
            default:
                break;
            }
            if (rc)
                break;
            if (q->last >= 0)
                tasks[q->last].qnext = id;
            q->last = id;
            r->start_ns = r->end_ns = -1;
            r->blocked_by = -1;
            r->queue = orec->queue;
            r->cls = orec->cls;
            r->tag = (orec->tag & tag_keep) | tag_set;
            r->kind = orec->kind;
            r->name = orec->name;
        }
        /* the tasks before a failure are submitted (engine.h) */
        s->ntasks = first + (size_t)i;
        s->ndeps = ndeps;
        s->nfdesc = nfdesc;
        s->nevtasks = nevtasks;
        s->csr_ok = 0;
        if (rc)
            return rc;
    }
    return (int32_t)first;
}

size_t zs_sim_deps_before(const zs_sim *s, int32_t first, int32_t n,
                          int32_t *out, size_t cap)
{
    size_t k = 0;
    if (!s || first < 0 || n < 0 || (size_t)first + (size_t)n > s->ntasks)
        return 0;
    for (int32_t i = first; i < first + n; i++) {
        const struct task *t = &s->tasks[i];
        for (int32_t j = 0; j < t->ndeps; j++) {
            int32_t x = s->deps[t->dep_off + j];
            if (x < first) {
                if (k < cap)
                    out[k] = x;
                k++;
            }
        }
    }
    return k;
}

int zs_sim_task_desc(const zs_sim *s, int32_t id, struct zs_task_desc *out,
                     int32_t *deps, int cap)
{
    const struct task *t;
    const struct zs_task_rec *r;
    int n;
    if (!s || !zs_index_ok(id, s->ntasks))
        return -1;
    t = &s->tasks[id];
    r = &s->recs[id];
    n = t->ndeps - (t->kind == ZS_TASK_FREE); /* less the implicit ALLOC */
    if (n > cap)
        return -1;
    memset(out, 0, sizeof *out);
    for (int i = 0; i < n; i++)
        deps[i] = s->deps[t->dep_off + i];
    out->kind = (enum zs_task_kind)t->kind;
    out->queue = r->queue;
    out->deps = deps;
    out->ndeps = n;
    out->name = r->name;
    out->cls = r->cls;
    out->tag = r->tag;
    out->cores = t->cores;
    switch (t->kind) {
    case ZS_TASK_DELAY:
        out->dur_ns = t->dur_ns;
        break;
    case ZS_TASK_FLOW: {
        const struct flowdesc *f = &s->fdesc[t->aux];
        out->bytes = f->bytes;
        out->rate_cap = f->rate_cap;
        out->nlinks = f->nlinks;
        for (int i = 0; i < f->nlinks; i++) {
            out->links[i] = f->links[i];
            out->weight[i] = f->weight[i];
        }
        break;
    }
    case ZS_TASK_ALLOC:
        out->pool = t->pool;
        out->alloc_bytes = t->alloc_bytes;
        out->alloc_flags = t->flags;
        break;
    case ZS_TASK_FREE:
        out->alloc_task = t->aux;
        out->alloc_flags = t->flags;
        break;
    default:
        if (t->aux >= 0) {
            out->snapshot = true;
            out->snapshot_from = s->snaps[t->aux].from;
        }
        break;
    }
    return 0;
}

/* ---- flows ------------------------------------------------------------- */

/* ns needed to move rem bytes at rate, rounded up to the next ns.  The small
 * tolerance keeps exact quotients (1e9 B at 5e9 B/s = 2e8 ns) from being
 * pushed one ns later by floating-point noise. */
static int64_t flow_ns(double rem, double rate)
{
    double d, tol;
    if (rem <= 0)
        return 0;
    d = rem * NS_PER_S / rate;
    tol = 1e-6 + d * 1e-15;
    d = ceil(d - tol);
    if (d < 0)
        return 0;
    if (d > (double)TIME_MAX_NS)
        return TIME_MAX_NS + 1; /* beyond the limit: reported when popped */
    return (int64_t)d;
}

/* Collects into s->affl the active flows whose rate may change: flows that
 * started at this instant (aff == 1) and, transitively, every flow sharing
 * a link with an affected flow or with a link freed by a flow that ended
 * (links marked dirty with the current epoch).  Flows outside that closure
 * share no link with it, so their max-min rates cannot change.  Each pass
 * is O(F * L); passes stop when no new link turns dirty. */
static size_t flows_affected(zs_sim *s)
{
    uint32_t ep = s->dstamp;
    size_t na = 0;
    int grew = 1;
    while (grew) {
        grew = 0;
        for (size_t i = 0; i < s->nact; i++) {
            struct flow *f = &s->act[i];
            const struct flowdesc *fd = f->fd;
            int hit = f->aff == 1;
            if (f->aff == 2)
                continue;
            for (int k = 0; k < fd->nlinks && !hit; k++)
                hit = s->links[fd->links[k]].dirty == ep;
            if (!hit)
                continue;
            f->aff = 2;
            s->affl[na++] = (int32_t)i;
            for (int k = 0; k < fd->nlinks; k++) {
                struct link *l = &s->links[fd->links[k]];
                if (l->dirty != ep) {
                    l->dirty = ep;
                    grew = 1;
                }
            }
        }
    }
    return na;
}

/* Brings each affected flow's rem to now under the rate that held since
 * its t_ns, unfreezes it, and resets the filling scratch of its links,
 * listing them in s->touched.  Returns how many links it listed. */
static inline size_t fill_start(zs_sim *s, size_t na)
{
    size_t nt = 0;
    if (++s->stamp == 0) { /* wrapped: clear stale stamps */
        for (size_t j = 0; j < s->nlinks; j++)
            s->links[j].stamp = 0;
        s->stamp = 1;
    }
    for (size_t a = 0; a < na; a++) {
        struct flow *f = &s->act[s->affl[a]];
        const struct flowdesc *fd = f->fd;
        int64_t dt = s->now_ns - f->t_ns;
        if (dt > 0 && f->rate > 0) {
            f->rem -= f->rate * (double)dt / NS_PER_S;
            if (f->rem < 1.0)
                f->rem = 0; /* STYLE 21: tiny remainders snap to zero */
        }
        f->t_ns = s->now_ns;
        f->frozen = 0;
        for (int k = 0; k < fd->nlinks; k++) {
            struct link *l = &s->links[fd->links[k]];
            if (l->stamp != s->stamp) {
                l->stamp = s->stamp;
                l->resid = link_cap_now(s, l);
                l->wsum = 0;
                l->nunf = 0;
                s->touched[nt++] = fd->links[k];
            }
            l->wsum += fd->weight[k];
            l->nunf++;
        }
    }
    return nt;
}

/* How far the common rate x can rise before the next constraint binds: an
 * unfrozen flow's rate_cap (*arg_flow) or a link's residual capacity shared
 * by its unfrozen weight (*arg_link); INFINITY when none binds. */
static inline double fill_delta(const zs_sim *s, size_t na, size_t nt,
                                double x, int *arg_link, size_t *arg_flow)
{
    double delta = INFINITY;
    *arg_link = -1;
    *arg_flow = (size_t)-1;
    for (size_t a = 0; a < na; a++) {
        const struct flow *f = &s->act[s->affl[a]];
        double cap = f->fd->rate_cap;
        if (!f->frozen && cap > 0 && cap - x < delta) {
            delta = cap - x;
            *arg_flow = a;
        }
    }
    for (size_t j = 0; j < nt; j++) {
        const struct link *l = &s->links[s->touched[j]];
        if (l->nunf > 0 && l->resid / l->wsum < delta) {
            delta = l->resid / l->wsum;
            *arg_link = s->touched[j];
            *arg_flow = (size_t)-1;
        }
    }
    return delta;
}

/* Whether unfrozen flow f (a-th affected) is held at x: pass 0, by its
 * rate_cap or a saturated link; pass 1 (rounding kept every pass-0 test
 * false), by the binding constraint fill_delta found, which is always some
 * flow's. */
static inline int fill_saturated(const zs_sim *s, const struct flow *f,
                                 size_t a, int pass, double x, int arg_link,
                                 size_t arg_flow)
{
    const struct flowdesc *fd = f->fd;
    int sat = 0;
    if (pass == 0) {
        sat = fd->rate_cap > 0 && fd->rate_cap - x <= 1e-12 * x;
        for (int k = 0; k < fd->nlinks && !sat; k++) {
            const struct link *l = &s->links[fd->links[k]];
            sat = l->resid <= 1e-12 * l->cap;
        }
    } else {
        sat = a == arg_flow;
        for (int k = 0; k < fd->nlinks && !sat; k++)
            sat = fd->links[k] == arg_link;
    }
    return sat;
}

/* Freezes at rate x every flow held at x, taking it out of its links'
 * unfrozen weight.  Returns how many it froze (>= 1). */
static inline size_t fill_freeze(zs_sim *s, size_t na, double x, int arg_link,
                                 size_t arg_flow)
{
    size_t froze = 0;
    for (int pass = 0; pass < 2 && !froze; pass++) {
        for (size_t a = 0; a < na; a++) {
            struct flow *f = &s->act[s->affl[a]];
            const struct flowdesc *fd = f->fd;
            if (f->frozen ||
                !fill_saturated(s, f, a, pass, x, arg_link, arg_flow))
                continue;
            f->frozen = 1;
            f->rate = x;
            froze++;
            for (int k = 0; k < fd->nlinks; k++) {
                struct link *l = &s->links[fd->links[k]];
                l->wsum -= fd->weight[k];
                l->nunf--;
            }
        }
    }
    return froze;
}

/* Moves the completion event of every affected flow whose end moved, and
 * closes the dirty-link epoch. */
static inline void fill_reschedule(zs_sim *s, size_t na)
{
    for (size_t a = 0; a < na; a++) {
        struct flow *f = &s->act[s->affl[a]];
        int64_t t_end = s->now_ns + flow_ns(f->rem, f->rate);
        f->aff = 0;
        if (t_end != f->t_end_ns || !zs_heap_contains(&s->heap, f->task)) {
            f->t_end_ns = t_end;
            /* Cannot fail: the heap was sized for every event task. */
            (void)zs_heap_set(&s->heap, f->task, t_end);
        }
    }
    if (++s->dstamp == 0) { /* wrapped: clear stale dirty marks */
        for (size_t j = 0; j < s->nlinks; j++)
            s->links[j].dirty = 0;
        s->dstamp = 1;
    }
    s->flows_dirty = 0;
}

/* Max-min fair rates by progressive filling (SimGrid's LMM with every flow
 * at priority 1) over the affected flows: all unfrozen flows rise at one
 * common rate x; a link saturates when Σ weight*rate reaches its capacity,
 * freezing its flows; a flow freezes at its rate_cap.  Each round freezes
 * at least one flow, so at most F rounds of O(F * L). */
static void flows_recompute(zs_sim *s)
{
    size_t na = flows_affected(s), unfrozen = na;
    size_t nt = fill_start(s, na);
    double x = 0;

    while (unfrozen > 0) {
        int arg_link;
        size_t arg_flow;
        double delta = fill_delta(s, na, nt, x, &arg_link, &arg_flow);
        if (delta < 0)
            delta = 0;
        x += delta;
        for (size_t j = 0; j < nt; j++) {
            struct link *l = &s->links[s->touched[j]];
            if (l->nunf > 0)
                l->resid -= delta * l->wsum;
        }
        unfrozen -= fill_freeze(s, na, x, arg_link, arg_flow);
    }
    fill_reschedule(s, na);
}

static void mark_links_dirty(zs_sim *s, const struct flowdesc *fd)
{
    for (int k = 0; k < fd->nlinks; k++)
        s->links[fd->links[k]].dirty = s->dstamp;
}

/* A flow enters (+1) or leaves (-1) its links.  A link turning busy or idle
 * changes the capacity of the links coupled to it: mark those dirty too, so
 * their flows are re-rated at this instant. */
static void flow_count(zs_sim *s, const struct flowdesc *fd, int d)
{
    for (int k = 0; k < fd->nlinks; k++) {
        struct link *l = &s->links[fd->links[k]];
        l->nflows += d;
        assert(l->nflows >= 0);
        if ((d > 0 && l->nflows == 1) || (d < 0 && l->nflows == 0))
            for (int32_t c = l->cpl_first; c >= 0; c = s->links[c].cpl_next)
                s->links[c].dirty = s->dstamp;
    }
}

static void flow_finish(zs_sim *s, int32_t id)
{
    struct task *t = &s->tasks[id];
    const struct flowdesc *fd = &s->fdesc[t->aux];
    size_t slot = (size_t)t->fslot, last = s->nact - 1;
    for (int k = 0; k < fd->nlinks; k++)
        s->links[fd->links[k]].bytes_moved += fd->bytes * fd->weight[k];
    mark_links_dirty(s, fd);
    flow_count(s, fd, -1);
    if (slot != last) {
        s->act[slot] = s->act[last];
        s->tasks[s->act[slot].task].fslot = (int32_t)slot;
    }
    s->nact--;
    t->fslot = -1;
    s->flows_dirty = 1;
}

/* ---- the event loop ---------------------------------------------------- */

static inline void make_ready(zs_sim *s, int32_t id, int32_t by)
{
    s->recs[id].blocked_by = by;
    s->work[s->work_tail++] = id;
}

static void complete(zs_sim *s, int32_t id)
{
    struct task *t = &s->tasks[id];
    int32_t q;
    s->recs[id].end_ns = s->now_ns;
    s->events++;
    s->done++;
    if (t->cores > 0) {
        s->cores_free += t->cores;
        /* FIFO grant: the head of the wait list first, no overtaking. */
        while (s->cwait_head < s->cwait_tail) {
            int32_t w = s->cwait[s->cwait_head];
            if (s->tasks[w].cores > s->cores_free)
                break;
            s->cwait_head++;
            s->cores_free -= s->tasks[w].cores;
            s->pend[w] = -1; /* holds its cores */
            make_ready(s, w, id);
        }
    }
    /* every task completes once, and releases each successor once: no
     * pending count goes below zero */
    assert((size_t)s->done <= s->ntasks);
    q = t->qnext;
    if (q >= 0 && --s->pend[q] == 0)
        make_ready(s, q, id);
    assert(q < 0 || s->pend[q] >= 0);
    for (int32_t i = s->succ_off[id]; i < s->succ_off[id + 1]; i++) {
        int32_t v = s->succ[i];
        if (--s->pend[v] == 0)
            make_ready(s, v, id);
        assert(s->pend[v] >= 0);
    }
}

static int time_overflow(zs_sim *s, int32_t id, struct zs_err *err)
{
    return zs_err_set(err, ZS_ELIMIT,
                      "simulated time overflow: task '%s' (id %d) would end "
                      "after %lld ns (limit of the engine)",
                      s->recs[id].name ? s->recs[id].name : "", id,
                      (long long)TIME_MAX_NS);
}

/* FNV-1a's offset basis (64-bit): the fingerprint's start. */
#define FP_BASIS 0xcbf29ce484222325ULL

/* Snapshot MARK id runs now (zs_sim_snapshot): quiet when every task
 * before it has finished and none after it has started but MARKs without
 * cores (a join point on an idle queue, e.g. a drain's mark on a stream
 * with nothing to wait for, runs at once: zero time, nothing held, and
 * its successors wait for their other predecessors as before). */
static void take_snapshot(zs_sim *s, int32_t id)
{
    struct snap *sn = &s->snaps[s->tasks[id].aux];
    uint64_t h = FP_BASIS;
    sn->at.t_ns = s->now_ns;
    /* the first unfinished task, from where the last snapshot left it
     * (snapshot marks run in id order on their queue; O(tasks) a run) */
    while (s->unfinished < id && s->recs[s->unfinished].end_ns >= 0)
        s->unfinished++;
    sn->at.quiet = s->unfinished == id && s->started_max == id;
    sn->at.cache_flushes = 0;
    for (size_t i = 0; i < s->npools; i++) {
        h = zs_pool_fingerprint(&s->pools[i], h, sn->from, id, s->seg_scratch);
        sn->at.cache_flushes += s->pools[i].st.cache_flushes;
    }
    sn->at.state = h;
}

/* Starts a ready task at now.  Returns 0, ZS_SIM_OOM, ZS_ENOMEM or
 * ZS_ELIMIT. */
static int start(zs_sim *s, int32_t id, struct zs_err *err)
{
    struct task *t = &s->tasks[id];
    if (t->cores > 0 && s->pend[id] == 0) {
        if (s->cwait_head < s->cwait_tail || t->cores > s->cores_free) {
            s->cwait[s->cwait_tail++] = id;
            return 0;
        }
        s->cores_free -= t->cores;
    }
    s->pend[id] = -1;
    if (id > s->started_max && (t->kind != ZS_TASK_MARK || t->cores > 0))
        s->started_max = id;
    switch (t->kind) {
    case ZS_TASK_DELAY:
        s->recs[id].start_ns = s->now_ns;
        s->events++;
        if (t->dur_ns > TIME_MAX_NS - s->now_ns)
            return time_overflow(s, id, err);
        if (t->dur_ns > 0) {
            (void)zs_heap_set(&s->heap, id, s->now_ns + t->dur_ns);
            return 0;
        }
        break;
    case ZS_TASK_FLOW: {
        const struct flowdesc *fd = &s->fdesc[t->aux];
        s->recs[id].start_ns = s->now_ns;
        s->events++;
        if (fd->bytes >= 1.0) {
            struct flow *f = &s->act[s->nact];
            f->fd = fd;
            f->t_ns = s->now_ns;
            f->aff = 1;
            mark_links_dirty(s, fd);
            flow_count(s, fd, +1);
            f->rem = fd->bytes;
            f->rate = 0;
            f->t_end_ns = -1;
            f->task = id;
            f->frozen = 0;
            t->fslot = (int32_t)s->nact++;
            s->flows_dirty = 1;
            return 0;
        }
        break; /* < 1 byte: nothing to move (STYLE 21) */
    }
    case ZS_TASK_ALLOC:
    {
        int rc = zs_pool_alloc(s, t->pool, id, s->now_ns, err);
        if (rc)
            return rc;
    }
        s->recs[id].start_ns = s->now_ns;
        s->events++;
        break;
    case ZS_TASK_FREE:
        s->recs[id].start_ns = s->now_ns;
        s->events++;
        zs_pool_free(s, t->pool, t->aux, s->now_ns);
        if (t->flags & ZS_FREE_EMPTY_CACHE) {
            int rc = zs_pool_empty_cache(s, t->pool, err);
            if (rc)
                return rc;
        }
        break;
    default:
        s->recs[id].start_ns = s->now_ns;
        s->events++;
        if (t->aux >= 0) { /* a snapshot MARK */
            if (id > s->started_max)
                s->started_max = id;
            take_snapshot(s, id);
        }
        break;
    }
    complete(s, id);
    return 0;
}

static int deadlock(zs_sim *s, struct zs_err *err)
{
    for (size_t i = 0; i < s->ntasks; i++) {
        const struct task *t = &s->tasks[i];
        const char *nm = s->recs[i].name ? s->recs[i].name : "";
        if (s->recs[i].end_ns >= 0)
            continue;
        if (s->pend[i] == 0 && t->cores > 0)
            return zs_err_set(
                err, ZS_ERUNTIME,
                "deadlock at t=%lld ns: task '%s' (id %zu, queue '%s') "
                "waits for %d cores; the cpu pool has %d (%d free)",
                (long long)s->now_ns, nm, i, s->queues[s->recs[i].queue].name,
                t->cores, s->cores, s->cores_free);
        /* Not reachable while the graph is acyclic by construction; still
         * name what it waits for. */
        for (int32_t k = 0; k < t->ndeps; k++) {
            int32_t d = s->deps[t->dep_off + k];
            if (s->recs[d].end_ns < 0)
                return zs_err_set(err, ZS_ERUNTIME,
                                  "deadlock at t=%lld ns: task '%s' (id %zu) "
                                  "waits for task '%s' (id %d)",
                                  (long long)s->now_ns, nm, i,
                                  s->recs[d].name ? s->recs[d].name : "", d);
        }
        return zs_err_set(err, ZS_ERUNTIME,
                          "deadlock at t=%lld ns: task '%s' (id %zu) never "
                          "became ready (queue '%s')",
                          (long long)s->now_ns, nm, i,
                          s->queues[s->recs[i].queue].name);
    }
    return zs_err_set(err, ZS_ERUNTIME, "deadlock: no stuck task found");
}

/* The capacities and core count the setters kept unchecked (they return
 * nothing), checked before a run. */
static int check_run_inputs(const zs_sim *s, struct zs_err *err)
{
    for (size_t i = 0; i < s->nlinks; i++)
        if (!valid_rate(s->links[i].cap))
            return zs_err_set(err, ZS_ERUNTIME,
                              "invalid capacity of link '%s': must be > 0 "
                              "bytes/s (got %g)",
                              s->links[i].name, s->links[i].cap);
    for (size_t i = 0; i < s->npools; i++)
        if (s->pools[i].capacity < 0)
            return zs_err_set(err, ZS_ERUNTIME,
                              "invalid capacity of pool '%s': must be >= 0 "
                              "bytes, 0 for unlimited (got %lld)",
                              s->pools[i].name,
                              (long long)s->pools[i].capacity);
    if (s->cores < 0)
        return zs_err_set(err, ZS_ERUNTIME,
                          "invalid cores of the cpu pool: must be >= 0 (got "
                          "%d)",
                          s->cores);
    return 0;
}

/* Sizes every run-time array for the submitted tasks, so that the event
 * loop never allocates. */
static int reserve_run(zs_sim *s, struct zs_err *err)
{
    size_t n = s->ntasks;
    if (zs_grow((void **)&s->succ_off, &s->succ_off_cap, n + 1,
                sizeof *s->succ_off) ||
        zs_grow((void **)&s->succ, &s->succ_cap, s->ndeps + 1,
                sizeof *s->succ) ||
        zs_grow((void **)&s->work, &s->work_cap, n + 1, sizeof *s->work) ||
        zs_grow((void **)&s->pend, &s->pend_cap, n + 1, sizeof *s->pend) ||
        zs_grow((void **)&s->pend0, &s->pend0_cap, n + 1, sizeof *s->pend0) ||
        zs_grow((void **)&s->cwait, &s->cwait_cap, n + 1, sizeof *s->cwait) ||
        zs_grow((void **)&s->act, &s->act_cap, s->nfdesc + 1, sizeof *s->act) ||
        zs_grow((void **)&s->affl, &s->affl_cap, s->nfdesc + 1,
                sizeof *s->affl) ||
        zs_heap_reserve(&s->heap, n, (size_t)s->nevtasks))
        return zs_err_set(err, ZS_ENOMEM,
                          "out of memory preparing a run of %zu tasks", n);
    for (size_t i = 0; i < s->npools; i++) {
        int rc = zs_pool_prepare(&s->pools[i], err);
        if (rc)
            return rc;
        /* a snapshot lists a pool's segment heads: at most its blocks */
        if (s->nsnaps &&
            zs_grow((void **)&s->seg_scratch, &s->seg_scratch_cap,
                    s->pools[i].blk_cap + 1, sizeof *s->seg_scratch))
            return zs_err_set(err, ZS_ENOMEM,
                              "out of memory preparing a run of %zu tasks", n);
    }
    return 0;
}

/* Counting sort of the dependency edges by source task; work[] serves as
 * the fill cursor before the run uses it.  pend0 is each task's count of
 * what it waits for.  Both depend on the tasks only, so a re-run (another
 * capacity, the planner's unlimited re-run of an OOM) reuses them. */
static void build_csr(zs_sim *s)
{
    size_t n = s->ntasks;
    int32_t *cur;
    memset(s->succ_off, 0, (n + 1) * sizeof *s->succ_off);
    for (size_t e = 0; e < s->ndeps; e++) {
        /* check_desc admitted only earlier tasks */
        assert(s->deps[e] >= 0 && (size_t)s->deps[e] < n);
        s->succ_off[s->deps[e] + 1]++;
    }
    for (size_t i = 0; i < n; i++)
        s->succ_off[i + 1] += s->succ_off[i];
    cur = s->work;
    memcpy(cur, s->succ_off, n * sizeof *cur);
    for (size_t i = 0; i < n; i++) {
        const struct task *t = &s->tasks[i];
        const int32_t *dp = s->deps + t->dep_off;
        for (int32_t k = 0; k < t->ndeps; k++)
            s->succ[cur[dp[k]]++] = (int32_t)i;
        s->pend0[i] = t->ndeps + t->qprev;
    }
    s->csr_ok = 1;
}

/* zs_sim_submit initialises the run state; only a re-run of the same tasks
 * needs it restored. */
static void restore_run_state(zs_sim *s)
{
    for (size_t i = 0; i < s->ntasks; i++) {
        struct task *t = &s->tasks[i];
        struct zs_task_rec *r = &s->recs[i];
        t->fslot = -1;
        t->held = 0;
        t->blk = -1;
        t->log_alloc = t->log_free = -1;
        r->start_ns = r->end_ns = -1;
        r->blocked_by = -1;
    }
}

/* Sizes the run arrays and builds the reverse-dependency CSR. */
static int prepare(zs_sim *s, struct zs_err *err)
{
    int rc = check_run_inputs(s, err);
    if (!rc)
        rc = reserve_run(s, err);
    if (rc)
        return rc;
    if (!s->csr_ok)
        build_csr(s);
    if (s->ntasks)
        memcpy(s->pend, s->pend0, s->ntasks * sizeof *s->pend);
    if (s->ran)
        restore_run_state(s);
    s->ran = 1;
    return 0;
}

int zs_sim_run(zs_sim *s, struct zs_err *err)
{
    int rc;
    struct zs_heap_ent e;
    zs_err_clear(err);
    if (!s)
        return zs_err_set(err, ZS_ERUNTIME, "no sim");
    clear_run(s);
    rc = prepare(s, err);
    if (rc)
        return rc;
    s->cores_free = s->cores;
    for (size_t i = 0; i < s->ntasks; i++)
        if (s->pend[i] == 0)
            s->work[s->work_tail++] = (int32_t)i;
    for (;;) {
        while (s->work_head < s->work_tail) {
            rc = start(s, s->work[s->work_head++], err);
            if (rc) {
                s->work_head = s->work_tail = 0;
                return rc;
            }
        }
        s->work_head = s->work_tail = 0;
        if (s->flows_dirty) {
            const struct zs_heap_ent *top = zs_heap_top(&s->heap);
            if (!top || top->t_ns > s->now_ns) {
                flows_recompute(s);
                continue;
            }
        }
        if (!zs_heap_pop(&s->heap, &e))
            break;
        if (e.t_ns > TIME_MAX_NS)
            return time_overflow(s, e.id, err);
        /* causality: the clock never runs backwards (ns-3, OMNeT++) */
        assert(e.t_ns >= s->now_ns);
        s->now_ns = e.t_ns;
        if (s->tasks[e.id].kind == ZS_TASK_FLOW)
            flow_finish(s, e.id);
        complete(s, e.id);
    }
    if ((size_t)s->done < s->ntasks)
        return deadlock(s, err);
    return ZS_SIM_DONE;
}

/* ---- results ----------------------------------------------------------- */

int zs_sim_snapshot(const zs_sim *s, int32_t task, struct zs_snapshot *out)
{
    const struct task *t;
    if (!s || !zs_index_ok(task, s->ntasks))
        return -1;
    t = &s->tasks[task];
    if (t->kind != ZS_TASK_MARK || t->aux < 0)
        return -1;
    *out = s->snaps[t->aux].at;
    return 0;
}

int64_t zs_sim_now(const zs_sim *s)
{
    return s ? s->now_ns : 0;
}

int32_t zs_sim_ntasks(const zs_sim *s)
{
    return s ? (int32_t)s->ntasks : 0;
}

size_t zs_sim_task_room(const zs_sim *s)
{
    return s ? s->tasks_cap : 0;
}

int zs_sim_max_task_cores(const zs_sim *s)
{
    return s ? s->max_task_cores : 0;
}

const struct zs_task_rec *zs_sim_task(const zs_sim *s, int32_t id)
{
    return s && zs_index_ok(id, s->ntasks) ? &s->recs[id] : NULL;
}

const struct zs_task_rec *zs_sim_tasks(const zs_sim *s)
{
    return s && s->ntasks ? s->recs : NULL;
}

const struct zs_oom *zs_sim_oom(const zs_sim *s)
{
    return s && s->oom_set ? &s->oom : NULL;
}

int64_t zs_sim_events(const zs_sim *s)
{
    return s ? s->events : 0;
}

int zs_sim_nqueues(const zs_sim *s)
{
    return s ? (int)s->nqueues : 0;
}

const char *zs_sim_queue_name(const zs_sim *s, int q)
{
    return s && zs_index_ok(q, s->nqueues) ? s->queues[q].name : NULL;
}

int zs_sim_nlinks(const zs_sim *s)
{
    return s ? (int)s->nlinks : 0;
}

const char *zs_sim_link_name(const zs_sim *s, int l)
{
    return s && zs_index_ok(l, s->nlinks) ? s->links[l].name : NULL;
}

double zs_sim_link_bytes(const zs_sim *s, int l)
{
    return s && zs_index_ok(l, s->nlinks) ? s->links[l].bytes_moved : 0;
}

int zs_sim_npools(const zs_sim *s)
{
    return s ? (int)s->npools : 0;
}

const char *zs_sim_pool_name(const zs_sim *s, int p)
{
    return s && zs_index_ok(p, s->npools) ? s->pools[p].name : NULL;
}
