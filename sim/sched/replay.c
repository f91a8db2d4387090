/*
 * replay.c — micro-step replay: a segment of a micro-step (the whole
 * micro-step, or DeepSpeed's forward or backward, struct zs_micro_ops) about
 * to be built in the state in which the same segment of an earlier
 * micro-step of the same build was built gets that one's tasks again,
 * without running the builder (docs/engine.md "Replaying a micro-step").
 *
 * Why the tasks are the ones the builder would emit.  A builder's segment
 * (zs_micro_ops.build) is a deterministic function of its state: its
 * context struct and arrays (visited by ops.state), b's fields visited here
 * (visit_bctx) and constants of the build (config, units, the trace).  Task
 * ids enter that state only as values the emits returned, and the builders
 * only pass them on (as dependencies, a FREE's ALLOC, into the state) and
 * compare them with -1; emit.c compares them with each other only for
 * equality (pack_deps).  So if the state before segment T equals the state
 * before a recorded segment S in every byte that is not a task id, and the
 * task ids of the two states correspond one to one (phi: the id in a field
 * of S's state to the id in the same field of T's, a function and
 * injective, -1 exactly where -1), then building T emits S's tasks with
 * every id mapped: S's own tasks to T's at one offset (emits return
 * consecutive ids), earlier ones through phi.  Their tags carry the step
 * (zs_tag_now): the step bits become T's; nothing else of a builder reads
 * the step or the micro-step number but through ops.begin, which writes
 * what the segment reads into the state before it is compared.  The state
 * after T is S's after, mapped the same way.  A recording that names an id
 * outside S's own tasks and outside phi's domain (found somewhere not
 * visited) is not replayed.  A field the visitor misses is compared as bytes
 * when it is in a visited struct (zs_rv_struct), so that a task id there
 * only stops replays; tests/check_replay.c builds both ways.
 *
 * What the replayed tasks go through.  Submitted, they are copied by the
 * engine from S's (zs_sim_resubmit: the same fields, ids mapped); the
 * prefix cut sees them as zs_t_emit would show them: the prefix runs when
 * cut_at tasks are submitted (the copy stops there), an ALLOC or FREE on
 * the GPU pool is added to the need's bound (zs_cut_mem_add), each queue's
 * last task is kept.  Counted after the prefix, each goes through the same
 * count as a built one (zs_cut_emit_n), from a compact record of S's tasks
 * (struct zs_ctask: what counting reads) kept whenever the build has a
 * prefix cut.  A segment S that was counted in part cannot be submitted
 * again; a T that may be counted needs S's compact records.
 *
 * Cost: recording keeps the states (O(units)) and, with a prefix cut, 32 B
 * per task; a replay compares the states, maps phi through a hash table
 * (O(ids in the state)) and copies the tasks (zs_sim_resubmit, about 130
 * instructions a task) or counts them, without the builder's work.
 */
#include "sched/sched_int.h"
#include "util/alloc.h"

#include <string.h>

/* A capture of a builder's micro-step state. */
struct rstate {
    int32_t *ids;
    size_t nids, ids_cap;
    unsigned char *val;
    size_t nval, val_cap;
};

struct recording {
    bool valid;
    bool compact;   /* ct[] holds every task (the build has a prefix cut) */
    bool submitted; /* every task was submitted (none counted) */
    int32_t first;  /* id of its first task */
    int32_t n;      /* its tasks */
    int seg;        /* the micro-step's segment it is (zs_micro_ops) */
    int step;       /* b->step when built */
    uint64_t used;  /* last recorded or replayed (least used is replaced) */
    struct zs_ctask *ct;
    size_t nct, ct_cap;
    struct rstate before, after;
    /* b->adam_alloc's entries it appended, from adam0 on */
    int32_t *adam;
    size_t nadam, adam_cap, adam0;
    /* the ids before `first` it names, ascending, and their images in the
     * replay being made (map_ids) */
    int32_t *ext, *ext_to;
    size_t next, ext_cap, ext_to_cap;
};

#define SLOTS 4

/* phi as a hash table: keys with an epoch stamp, so that it is cleared by
 * incrementing the epoch. */
struct hslot {
    int32_t key, val;
    uint32_t epoch;
};

struct zs_replay {
    struct recording rec[SLOTS];
    struct recording *cur; /* being recorded */
    uint64_t clock;
    struct rstate now;       /* the state before the micro-step being decided */
    bool now_ok;             /* `now` holds it */
    struct hslot *fwd, *inv; /* phi and its inverse */
    size_t hcap;             /* slots of each, a power of two */
    uint32_t epoch;
    int32_t *ids_to; /* a recording's state after, mapped */
    size_t ids_to_cap;
    int32_t *scratch; /* zs_sim_deps_before's output */
    size_t scratch_cap;
    int64_t replayed, built; /* segments, for zs_build_cache_stats */
};

enum { RV_CAPTURE, RV_RESTORE };

struct zs_rvisit {
    int op;
    struct rstate *st;     /* capture: appended to; restore: the values */
    const int32_t *ids_to; /* restore: the ids to write */
    size_t ipos, vpos;
    bool oom;
};

void zs_rv_ids(struct zs_rvisit *v, int32_t *p, size_t n)
{
    struct rstate *st = v->st;
    if (!n)
        return;
    if (v->op == RV_RESTORE) {
        memcpy(p, v->ids_to + v->ipos, n * sizeof *p);
    } else if (st->nids + n > st->ids_cap &&
               zs_grow((void **)&st->ids, &st->ids_cap, st->nids + n,
                       sizeof *st->ids)) {
        v->oom = true;
    } else {
        memcpy(st->ids + st->nids, p, n * sizeof *p);
        st->nids += n;
    }
    v->ipos += n;
}

void zs_rv_val(struct zs_rvisit *v, void *p, size_t nbytes)
{
    struct rstate *st = v->st;
    if (!nbytes)
        return;
    if (v->op == RV_RESTORE) {
        memcpy(p, st->val + v->vpos, nbytes);
    } else if (st->nval + nbytes > st->val_cap &&
               zs_grow((void **)&st->val, &st->val_cap, st->nval + nbytes, 1)) {
        v->oom = true;
    } else {
        memcpy(st->val + st->nval, p, nbytes);
        st->nval += nbytes;
    }
    v->vpos += nbytes;
}

void zs_rv_struct(struct zs_rvisit *v, void *p, size_t nbytes,
                  const struct zs_rfield *ids, int nids)
{
    unsigned char *base = p;
    size_t at = v->st->nval;
    zs_rv_val(v, p, nbytes);
    if (v->op == RV_CAPTURE && !v->oom) /* ids compare through phi */
        for (int i = 0; i < nids; i++)
            memset(v->st->val + at + ids[i].off, 0,
                   (size_t)ids[i].n * sizeof(int32_t));
    for (int i = 0; i < nids; i++)
        zs_rv_ids(v, (int32_t *)(base + ids[i].off), (size_t)ids[i].n);
}

/* What every builder's micro-step reads and writes of b (sched_int.h):
 * the host thread's last task, the phase, the ZeRO-3 coordinator's arrays,
 * the paged optimizer states' bytes and the activation offload state.  The
 * lazily made optimizer states (b->adam_alloc) are only appended to, never
 * read: a recording keeps what its micro-step appended.  The emit layer's
 * own state (the prefix cut's, the queues' last tasks) follows the tasks
 * (replay).  galloc2, fetch_ring and nfetch are not used by the builders. */
static void visit_bctx(struct zs_bctx *b, struct zs_rvisit *v)
{
    static const struct zs_rfield ao_ids[] = {
        {offsetof(struct zs_actoff, last_fwd), 1},
        {offsetof(struct zs_actoff, bwd_done1), 1},
        {offsetof(struct zs_actoff, bwd_done2), 1},
    };
    size_t nu = (size_t)b->nunits;
    zs_rv_ids(v, &b->last_host, 1);
    zs_rv_val(v, &b->phase, sizeof b->phase);
    zs_rv_ids(v, b->ready, nu);
    zs_rv_ids(v, b->galloc, nu);
    zs_rv_val(v, b->avail, nu * sizeof *b->avail);
    zs_rv_val(v, &b->n_avail, sizeof b->n_avail);
    zs_rv_val(v, &b->paged_bytes, sizeof b->paged_bytes);
    zs_rv_struct(v, &b->ao, sizeof b->ao, ao_ids,
                 (int)(sizeof ao_ids / sizeof ao_ids[0]));
    if (b->ao.mode != ZS_AO_NONE) {
        size_t n = (size_t)b->ao.nl + 1; /* zs_actoff_init's arrays */
        zs_rv_ids(v, b->ao.d2h, n);
        zs_rv_ids(v, b->ao.host, n);
        zs_rv_ids(v, b->ao.gpu, n);
    }
}

static bool capture(struct zs_bctx *b, void *ctx,
                    const struct zs_micro_ops *ops, struct rstate *st)
{
    struct zs_rvisit v = {RV_CAPTURE, st, NULL, 0, 0, false};
    st->nids = st->nval = 0;
    visit_bctx(b, &v);
    ops->state(ctx, &v);
    return !v.oom;
}

static inline bool counting(const struct zs_bctx *b)
{
    return b->cut == ZS_CUT_COUNTING;
}

/* The id the next task emitted gets (zs_t_emit, emit.c cut_count). */
static int32_t next_id(const struct zs_bctx *b)
{
    return counting(b) ? b->cut_at + b->ncounted : zs_sim_ntasks(b->sim);
}

struct zs_replay *zs_replay_new(void)
{
    return zs_calloc(1, sizeof(struct zs_replay));
}

static void rstate_free(struct rstate *st)
{
    zs_free(st->ids);
    zs_free(st->val);
}

void zs_replay_free(struct zs_replay *rp)
{
    if (!rp)
        return;
    for (int i = 0; i < SLOTS; i++) {
        struct recording *r = &rp->rec[i];
        zs_free(r->ct);
        zs_free(r->adam);
        zs_free(r->ext);
        zs_free(r->ext_to);
        rstate_free(&r->before);
        rstate_free(&r->after);
    }
    rstate_free(&rp->now);
    zs_free(rp->fwd);
    zs_free(rp->inv);
    zs_free(rp->ids_to);
    zs_free(rp->scratch);
    zs_free(rp);
}

void zs_replay_reset(struct zs_replay *rp)
{
    if (!rp)
        return;
    for (int i = 0; i < SLOTS; i++)
        rp->rec[i].valid = false;
    rp->cur = NULL;
    rp->now_ok = false;
}

void zs_replay_stats(const struct zs_replay *rp, int64_t *built,
                     int64_t *replayed)
{
    *built = rp ? rp->built : 0;
    *replayed = rp ? rp->replayed : 0;
}

void zs_replay_record_begin(struct zs_bctx *b, void *ctx,
                            const struct zs_micro_ops *ops, int seg)
{
    struct zs_replay *rp = b->rp;
    struct recording *r = NULL;
    if (!rp || b->ex || b->failed)
        return;
    /* an empty slot, else the least used */
    for (int i = 0; i < SLOTS; i++)
        if (!r ||
            (r->valid && (!rp->rec[i].valid || rp->rec[i].used < r->used)))
            r = &rp->rec[i];
    r->valid = false;
    if (rp->now_ok) { /* zs_replay_micro captured it: take it */
        struct rstate t = r->before;
        r->before = rp->now;
        rp->now = t;
        rp->now_ok = false;
    } else if (!capture(b, ctx, ops, &r->before)) {
        return;
    }
    r->first = next_id(b);
    r->seg = seg;
    r->step = b->step;
    r->nct = 0;
    r->compact = b->cut_at != 0;
    r->adam0 = b->n_adam_alloc;
    rp->cur = r;
    b->recording = r->compact; /* zs_replay_note: only compact records */
}

void zs_replay_note(struct zs_bctx *b, const struct zs_task_desc *d,
                    const int32_t *deps, int n)
{
    struct recording *r = b->rp->cur;
    struct zs_ctask *t;
    if (r->nct >= r->ct_cap &&
        zs_grow((void **)&r->ct, &r->ct_cap, r->nct + 1, sizeof *r->ct)) {
        r->compact = false; /* record_close refuses it */
        b->recording = false;
        return;
    }
    t = &r->ct[r->nct++];
    t->kind = (int8_t)d->kind;
    t->queue = (int16_t)d->queue;
    t->cores = (int16_t)d->cores;
    t->pool = (int16_t)d->pool;
    t->bytes = d->alloc_bytes;
    t->alloc = d->kind == ZS_TASK_FREE ? d->alloc_task : -1;
    t->ndeps = (int8_t)n;
    t->deps[0] = n > 0 ? deps[0] : -1;
    t->deps[1] = n > 1 ? deps[1] : -1;
    t->deps[2] = n > 2 ? deps[2] : -1;
}

/* Sorts a[0..n) ascending (LSD radix on the 32 bits, a few thousand
 * entries at most) and drops repeats; returns the count left.  tmp: room
 * for n. */
static size_t sort_unique(int32_t *a, size_t n, int32_t *tmp)
{
    size_t m = 0;
    for (int shift = 0; shift < 32; shift += 8) {
        size_t count[257] = {0};
        for (size_t i = 0; i < n; i++)
            count[(((uint32_t)a[i] ^ 0x80000000u) >> shift & 0xFF) + 1]++;
        for (int k = 0; k < 256; k++)
            count[k + 1] += count[k];
        for (size_t i = 0; i < n; i++)
            tmp[count[((uint32_t)a[i] ^ 0x80000000u) >> shift & 0xFF]++] = a[i];
        memcpy(a, tmp, n * sizeof *a);
    }
    for (size_t i = 0; i < n; i++)
        if (!m || a[m - 1] != a[i])
            a[m++] = a[i];
    return m;
}

static bool ext_add(struct recording *r, int32_t x)
{
    if (x < 0 || x >= r->first)
        return true;
    if (r->next >= r->ext_cap &&
        zs_grow((void **)&r->ext, &r->ext_cap, r->next + 1, sizeof *r->ext))
        return false;
    r->ext[r->next++] = x;
    return true;
}

/* Closes recording r: its tasks, its state after, what it appended to
 * b->adam_alloc and the earlier ids it names (r->ext, ascending). */
static bool record_close(struct zs_bctx *b, void *ctx,
                         const struct zs_micro_ops *ops, struct recording *r)
{
    struct zs_replay *rp = b->rp;
    int32_t end = next_id(b);
    if (b->failed || end < r->first || !capture(b, ctx, ops, &r->after) ||
        b->n_adam_alloc < r->adam0)
        return false;
    r->n = end - r->first;
    /* counting starts at cut_at and never stops (emit.c) */
    r->submitted = !counting(b) || end <= b->cut_at;
    if (r->compact && r->nct != (size_t)r->n)
        return false;
    if (!r->submitted && !r->compact)
        return false;
    r->nadam = b->n_adam_alloc - r->adam0;
    if (r->nadam > r->adam_cap &&
        zs_grow((void **)&r->adam, &r->adam_cap, r->nadam, sizeof *r->adam))
        return false;
    if (r->nadam)
        memcpy(r->adam, b->adam_alloc + r->adam0, r->nadam * sizeof *r->adam);
    /* the earlier ids named: by the tasks, the state after, the appends */
    r->next = 0;
    if (r->submitted) {
        size_t k = zs_sim_deps_before(b->sim, r->first, r->n, rp->scratch,
                                      rp->scratch_cap);
        if (k > rp->scratch_cap) {
            if (zs_grow((void **)&rp->scratch, &rp->scratch_cap, k,
                        sizeof *rp->scratch))
                return false;
            zs_sim_deps_before(b->sim, r->first, r->n, rp->scratch, k);
        }
        for (size_t i = 0; i < k; i++)
            if (!ext_add(r, rp->scratch[i]))
                return false;
    }
    for (size_t i = 0; i < r->nct; i++) {
        const struct zs_ctask *t = &r->ct[i];
        for (int j = 0; j < t->ndeps; j++)
            if (!ext_add(r, t->deps[j]))
                return false;
        if (!ext_add(r, t->alloc))
            return false;
    }
    for (size_t i = 0; i < r->after.nids; i++)
        if (!ext_add(r, r->after.ids[i]))
            return false;
    for (size_t i = 0; i < r->nadam; i++)
        if (!ext_add(r, r->adam[i]))
            return false;
    if (r->next > rp->scratch_cap &&
        zs_grow((void **)&rp->scratch, &rp->scratch_cap, r->next,
                sizeof *rp->scratch))
        return false;
    r->next = sort_unique(r->ext, r->next, rp->scratch);
    if (r->next > r->ext_to_cap && zs_grow((void **)&r->ext_to, &r->ext_to_cap,
                                           r->next, sizeof *r->ext_to))
        return false;
    /* ids of the state after: -1, an earlier task or one of its own */
    for (size_t i = 0; i < r->after.nids; i++)
        if (r->after.ids[i] < -1 || r->after.ids[i] >= end)
            return false;
    /* the state before: -1 for none, else an earlier task */
    for (size_t i = 0; i < r->before.nids; i++)
        if (r->before.ids[i] < -1 || r->before.ids[i] >= r->first)
            return false;
    return true;
}

void zs_replay_record_end(struct zs_bctx *b, void *ctx,
                          const struct zs_micro_ops *ops)
{
    struct zs_replay *rp = b->rp;
    struct recording *r;
    if (!rp || !rp->cur)
        return;
    r = rp->cur;
    rp->cur = NULL;
    b->recording = false;
    r->valid = record_close(b, ctx, ops, r);
    r->used = ++rp->clock;
}

/* Inserts key -> val into table h (hcap slots) at the current epoch; false
 * when key is there with another value. */
static bool hput(struct hslot *h, size_t hcap, uint32_t epoch, int32_t key,
                 int32_t val)
{
    size_t i = ((uint32_t)key * 2654435761u) & (hcap - 1);
    for (;; i = (i + 1) & (hcap - 1)) {
        if (h[i].epoch != epoch) {
            h[i].epoch = epoch;
            h[i].key = key;
            h[i].val = val;
            return true;
        }
        if (h[i].key == key)
            return h[i].val == val;
    }
}

static bool hget(const struct hslot *h, size_t hcap, uint32_t epoch,
                 int32_t key, int32_t *val)
{
    size_t i = ((uint32_t)key * 2654435761u) & (hcap - 1);
    for (;; i = (i + 1) & (hcap - 1)) {
        if (h[i].epoch != epoch)
            return false;
        if (h[i].key == key) {
            *val = h[i].val;
            return true;
        }
    }
}

/* phi from recording r's state before to `now` (the file's opening
 * comment), and r->ext_to, the image of each of r->ext.  False when the
 * states' ids do not correspond one to one, or an id r names is not in
 * phi's domain. */
static bool map_ids(struct zs_replay *rp, struct recording *r,
                    const struct rstate *now)
{
    const int32_t *from = r->before.ids, *to = now->ids;
    size_t need = 16;
    while (need < 2 * now->nids)
        need *= 2;
    if (need > rp->hcap) {
        struct hslot *f = zs_calloc(need, sizeof *f);
        struct hslot *g = zs_calloc(need, sizeof *g);
        if (!f || !g) {
            zs_free(f);
            zs_free(g);
            return false;
        }
        zs_free(rp->fwd);
        zs_free(rp->inv);
        rp->fwd = f;
        rp->inv = g;
        rp->hcap = need;
        rp->epoch = 0;
    }
    if (++rp->epoch == 0) { /* wrapped: clear the stamps */
        memset(rp->fwd, 0, rp->hcap * sizeof *rp->fwd);
        memset(rp->inv, 0, rp->hcap * sizeof *rp->inv);
        rp->epoch = 1;
    }
    for (size_t i = 0; i < now->nids; i++) {
        if (from[i] < 0 || to[i] < 0) {
            if (from[i] != to[i])
                return false;
            continue;
        }
        /* a function, and injective */
        if (!hput(rp->fwd, rp->hcap, rp->epoch, from[i], to[i]) ||
            !hput(rp->inv, rp->hcap, rp->epoch, to[i], from[i]))
            return false;
    }
    for (size_t i = 0; i < r->next; i++)
        if (!hget(rp->fwd, rp->hcap, rp->epoch, r->ext[i], &r->ext_to[i]))
            return false;
    return true;
}

/* Recording r's id x in the micro-step starting at t0: one of r's tasks
 * at the same offset, -1 as is, an earlier one through phi (map_ids made
 * sure it is in its domain). */
static inline int32_t decode_id(const struct zs_replay *rp,
                                const struct recording *r, int32_t x,
                                int32_t t0)
{
    int32_t y = -1;
    if (x >= r->first)
        return x - r->first + t0;
    if (x >= 0)
        hget(rp->fwd, rp->hcap, rp->epoch, x, &y);
    return y;
}

/* Counts recording r's tasks i .. n - 1 as the micro-step's tasks t0 + i
 * on (emit.c zs_cut_emit_n, as zs_t_emit would count each): their ids
 * mapped into scratch first. */
static void count_rest(struct zs_bctx *b, struct recording *r, int32_t i,
                       int32_t t0)
{
    struct zs_replay *rp = b->rp;
    size_t n = (size_t)(r->n - i);
    int32_t *dep, *alloc;
    if (4 * n > rp->scratch_cap &&
        zs_grow((void **)&rp->scratch, &rp->scratch_cap, 4 * n,
                sizeof *rp->scratch)) {
        b->failed = ZS_ENOMEM;
        return;
    }
    dep = rp->scratch;
    alloc = rp->scratch + 3 * n;
    for (size_t k = 0; k < n; k++) {
        const struct zs_ctask *c = &r->ct[(size_t)i + k];
        for (int j = 0; j < c->ndeps; j++)
            dep[3 * k + (size_t)j] = decode_id(rp, r, c->deps[j], t0);
        alloc[k] = decode_id(rp, r, c->alloc, t0);
    }
    zs_cut_emit_n(b, r->ct + i, dep, alloc, n);
}

/* What zs_t_emit does after submitting each of tasks t0 + i .. t0 + end - 1
 * (recording r's i .. end - 1): each queue's last task and the host
 * thread's, and, with a prefix cut, the GPU ALLOCs and FREEs for the need's
 * bound (emit.c cut_mem_add), in id order. */
static void submitted(struct zs_bctx *b, const struct recording *r, int32_t t0,
                      int32_t i, int32_t end)
{
    const struct zs_task_rec *rec = zs_sim_tasks(b->sim);
    for (int32_t k = t0 + i; k < t0 + end && !b->failed; k++) {
        int q = rec[k].queue;
        if (q < ZS_CUT_QUEUES)
            b->qlast[q] = k;
        if (q == b->q_host)
            b->last_host = k;
        if (b->cut_at &&
            (rec[k].kind == ZS_TASK_ALLOC || rec[k].kind == ZS_TASK_FREE)) {
            const struct zs_ctask *c = &r->ct[k - t0];
            struct zs_task_desc d;
            d.kind = rec[k].kind;
            d.queue = q;
            d.pool = c->pool;
            d.alloc_bytes = c->bytes;
            d.alloc_task = decode_id(b->rp, r, c->alloc, t0);
            if (!zs_cut_mem_add(b, &d, k))
                b->failed = ZS_ENOMEM;
        }
    }
}

/* Emits recording r's tasks as the micro-step's (ids mapped, this step's
 * tags), then sets the state to r's after, mapped. */
static void replay(struct zs_bctx *b, void *ctx, const struct zs_micro_ops *ops,
                   struct recording *r)
{
    struct zs_replay *rp = b->rp;
    int32_t t0 = next_id(b), i = 0;
    int32_t keep = ~(int32_t)(0x7FF << 20);
    int32_t step_bits = (int32_t)((unsigned)(b->step & 0x7FF) << 20);
    struct zs_rvisit v = {RV_RESTORE, &r->after, NULL, 0, 0, false};
    b->replaying = true; /* zs_run_steps clears it */
    while (i < r->n && !b->failed) {
        int32_t end = r->n, id;
        if (counting(b)) { /* to the end: counting never stops */
            count_rest(b, r, i, t0);
            break;
        }
        if (b->cut_at && !b->cut) { /* the copy stops at the prefix */
            int32_t room = b->cut_at - zs_sim_ntasks(b->sim);
            if (room <= 0) {
                zs_cut_run(b);
                continue;
            }
            if (room < end - i)
                end = i + room;
        }
        id = zs_sim_resubmit(b->sim, r->first + i, end - i, r->first, r->ext,
                             r->ext_to, r->next, keep, step_bits);
        if (id != t0 + i) {
            b->failed = id < 0 ? id : ZS_ERUNTIME;
            break;
        }
        submitted(b, r, t0, i, end);
        i = end;
    }
    if (r->after.nids > rp->ids_to_cap &&
        zs_grow((void **)&rp->ids_to, &rp->ids_to_cap, r->after.nids,
                sizeof *rp->ids_to)) {
        b->failed = ZS_ENOMEM;
        return;
    }
    for (size_t k = 0; k < r->after.nids; k++)
        rp->ids_to[k] = decode_id(b->rp, r, r->after.ids[k], t0);
    v.ids_to = rp->ids_to;
    visit_bctx(b, &v);
    ops->state(ctx, &v);
    for (size_t k = 0; k < r->nadam; k++)
        zs_keep_alloc(b, decode_id(b->rp, r, r->adam[k], t0));
}

bool zs_replay_micro(struct zs_bctx *b, void *ctx,
                     const struct zs_micro_ops *ops, int seg)
{
    struct zs_replay *rp = b->rp;
    bool tried[SLOTS] = {false}, any = false;
    if (!rp || b->ex || b->failed)
        return false;
    rp->now_ok = false;
    for (int i = 0; i < SLOTS; i++)
        any |= rp->rec[i].valid && rp->rec[i].seg == seg;
    if (!any || !capture(b, ctx, ops, &rp->now))
        return false;
    rp->now_ok = true;
    /* the most recently used recording first */
    for (;;) {
        struct recording *r = NULL;
        for (int i = 0; i < SLOTS; i++)
            if (rp->rec[i].valid && rp->rec[i].seg == seg && !tried[i] &&
                (!r || rp->rec[i].used > r->used))
                r = &rp->rec[i];
        if (!r)
            return false;
        tried[r - rp->rec] = true;
        /* the same state but its ids; the tasks can go where T's go: a
         * counted S is only counted again, and a T that may be counted (a
         * prefix cut) needs S's compact records */
        if (r->before.nids != rp->now.nids || r->before.nval != rp->now.nval ||
            memcmp(r->before.val, rp->now.val, rp->now.nval) ||
            (!r->submitted && !counting(b)) ||
            ((b->cut_at || counting(b)) && !r->compact) ||
            !map_ids(rp, r, &rp->now))
            continue;
        rp->now_ok = false;
        replay(b, ctx, ops, r);
        r->used = ++rp->clock;
        rp->replayed++;
        return true;
    }
}

void zs_replay_built(struct zs_replay *rp)
{
    if (rp)
        rp->built++;
}
