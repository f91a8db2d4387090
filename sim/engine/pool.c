/*
 * pool.c — memory pools of the engine: exact (PLAIN), PyTorch's CUDA caching
 * allocator (CUDA_CACHING) and host memory with PyTorch's pinned caching
 * host allocator (HOST); the allocation log, peaks and live-at-peak.
 *
 * CUDA_CACHING follows c10/cuda/CUDACachingAllocator.cpp (PyTorch 2.x,
 * DeviceCachingAllocator), in its default configuration first (no
 * max_split_size_mb, no roundup_power2_divisions, no expandable segments,
 * no garbage-collection threshold; the first and the third are below, the
 * others not modelled):
 *  - streams: a block belongs to the stream whose allocation made its
 *    segment (Block::stream); the free sets are ordered by (stream, size,
 *    address) as BlockComparatorSize orders them, and get_free_block takes
 *    a cached block only of the allocating stream ("(*it)->stream !=
 *    p.stream()" returns false; pytorch/pytorch v2.5
 *    c10/cuda/CUDACachingAllocator.cpp).  A queue's stream is set with
 *    zs_sim_set_queue_stream (all queues share stream 0 until set);
 *  - round_size: requests below kMinBlockSize = 512 B become 512 B, others
 *    are rounded up to a multiple of 512 B;
 *  - get_pool: rounded sizes <= kSmallSize = 1 MiB use the small pool,
 *    larger ones the large pool; a block never changes pool;
 *  - get_free_block: the smallest cached free block of that pool with
 *    size >= the rounded size (best fit; ties by address);
 *  - get_allocation_size: a new segment ("cudaMalloc") is kSmallBuffer = 2 MiB
 *    for small requests, kLargeBuffer = 20 MiB for requests < kMinLargeAlloc
 *    = 10 MiB, else the size rounded up to kRoundLarge = 2 MiB;
 *  - should_split: a small-pool block is split when the remainder is
 *    >= kMinBlockSize, a large-pool block when the remainder is > kSmallSize
 *    (otherwise the whole block is handed out and counted as allocated,
 *    as PyTorch's allocated_bytes counts block->size); under expandable
 *    segments every block splits from kMinBlockSize (below);
 *  - free_block: a freed block merges with free neighbours of its segment;
 *  - when the new segment does not fit (our capacity plays the role of a
 *    failing cudaMalloc / the memory-fraction limit), release_cached_blocks
 *    frees every cached segment that is entirely free, of every stream
 *    ("cache flush") and
 *    the segment allocation is retried once; then OOM.  With max_split_size
 *    unlimited, release_available_cached_blocks does nothing, so the flush
 *    is the only reclaim step (with it: below).
 * With max_split_size_mb:N (zs_sim_set_pool_max_split; max_split = N MiB;
 * pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp at 001074d2,
 * get_free_block, should_split, release_available_cached_blocks):
 *  - get_free_block refuses the best-fit block when it is oversize (>=
 *    max_split) and the request is not ("Do not return an oversized block
 *    for a large request"), or when the request is oversize and the block
 *    is kLargeBuffer or more larger ("Allow oversized block size to be
 *    rounded up but within a limit"); the search stops there, as the
 *    larger blocks after it fail the same test;
 *  - should_split: a default-mode large block is split only for a request
 *    below max_split, so an oversize segment is handed out whole;
 *  - when a new segment does not fit, release_available_cached_blocks runs
 *    before the flush: it frees the smallest cached block of the stream
 *    that is at least max(request, max_split), or else the stream's
 *    oversize blocks from the largest down until their sizes reach that
 *    figure (what it freed stays freed even when they do not), and the
 *    segment is retried; then the flush as above.  Oversize free blocks are
 *    whole segments (a segment made for a request below max_split exceeds
 *    it by less than the split threshold).  Not under expandable segments,
 *    whose blocks PyTorch does not release that way.
 * With expandable_segments:True (zs_sim_set_pool_expandable; PyTorch
 * CUDACachingAllocator.cpp, ExpandableSegment and find_expandable_block, as
 * in pytorch/pytorch v2.5: "auto segment_size = pool->is_small ?
 * kSmallBuffer : kLargeBuffer"; one segment per stream and pool reserving a
 * virtual range and mapping physical pages of segment_size on demand):
 *  - the large pool is one segment per stream (each reserving its own
 *    virtual range); when no cached free block of the stream fits, the
 *    segment grows at its end by whole kLargeBuffer (20 MiB) pages, using a
 *    free block at its end first (find_expandable_block starts from the
 *    allocatable block before the unmapped range), so blocks of successive
 *    allocations are neighbours and coalesce when freed: the per-cudaMalloc
 *    fragmentation of the default mode disappears;
 *  - when the growth does not fit, release_cached_blocks unmaps every whole
 *    page inside a cached free block (release_expandable_segment /
 *    unmap_block); partial pages shared with a live block stay mapped; the
 *    unmapped range splits the block's neighbours apart;
 *  - [simplification] new pages are always mapped at the segment's end, not
 *    into an unmapped hole of sufficient size: the physical (reserved) bytes
 *    are the same, only coalescing across a re-mapped hole is lost;
 *  - should_split: a large-pool block too is split when the remainder is
 *    >= kMinBlockSize ("if (block->pool->is_small ||
 *    CUDAAllocatorConfig::expandable_segments()) return remaining >=
 *    kMinBlockSize;"), so a block's spare tail of up to 1 MiB is not handed
 *    out with it as in the default mode;
 *  - the small pool (<= 1 MiB requests, 2 MiB pages) keeps the default
 *    behaviour [simplification: a few hundred MiB at most in a step].
 * HOST follows aten/src/ATen/core/CachingHostAllocator.h: a pinned request
 * is rounded up to c10::llvm::PowerOf2Ceil(size) and, once freed, cached on
 * the free list of its size class for the next request of that class; the
 * cache is never returned (DeepSpeed never empties it; reference
 * zero3-offload-mechanics.md §2).  Pageable host memory is exact.
 *
 * Cost: PLAIN and HOST O(1) per operation.  CUDA_CACHING keeps the free
 * blocks of each pool in an array sorted by (size, addr): O(log B) search,
 * O(B) memmove on insert/remove with B cached free blocks (tens to hundreds
 * in a training step), which beats a tree at that size.  A flush is O(B).
 * All arrays are sized by zs_pool_prepare before the run, so no operation
 * allocates.
 */
#include "engine/engine_int.h"

#include "util/alloc.h"
#include "util/err.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* Constants of c10/cuda/CUDACachingAllocator.cpp (PyTorch 2.x). */
#define K_MIN_BLOCK_SIZE ((int64_t)512)       /* kMinBlockSize */
#define K_SMALL_SIZE ((int64_t)1 << 20)       /* kSmallSize, 1 MiB */
#define K_SMALL_BUFFER ((int64_t)2 << 20)     /* kSmallBuffer, 2 MiB */
#define K_LARGE_BUFFER ((int64_t)20 << 20)    /* kLargeBuffer, 20 MiB */
#define K_MIN_LARGE_ALLOC ((int64_t)10 << 20) /* kMinLargeAlloc, 10 MiB */
#define K_ROUND_LARGE ((int64_t)2 << 20)      /* kRoundLarge, 2 MiB */

/* Expandable segment: page size of the large pool (kLargeBuffer) and the
 * base of its virtual range (apart from the default-mode segments). */
#define ES_PAGE K_LARGE_BUFFER
#define ES_BASE ((int64_t)1 << 50)
/* each stream's expandable segment reserves its own virtual range */
#define ES_SPAN ((int64_t)1 << 44)

/* Simulated segment addresses start here (any non-zero base will do; it only
 * orders blocks of equal size, as PyTorch compares pointers). */
#define SEG_BASE ((int64_t)1 << 40)

void zs_pool_clear_run(struct pool *p)
{
    p->allocated = p->reserved = p->pinned = 0;
    memset(&p->st, 0, sizeof p->st);
    p->st.seq_peak_allocated = p->st.seq_peak_reserved = -1;
    p->st.t_peak_allocated_ns = p->st.t_peak_reserved_ns = -1;
    p->nlog = 0;
    p->nblk = 0;
    p->blk_free = -1;
    p->nfset[0] = p->nfset[1] = 0;
    p->next_addr = SEG_BASE;
    for (int i = 0; i < ZS_ALLOC_STREAMS; i++) {
        p->es_tail[i] = -1;
        p->es_next[i] = ES_BASE + i * ES_SPAN;
    }
    memset(p->cached, 0, sizeof p->cached);
}

void zs_pool_release(struct pool *p)
{
    zs_free(p->name);
    zs_free(p->log);
    zs_free(p->blk);
    zs_free(p->fset[0]);
    zs_free(p->fset[1]);
}

int zs_pool_prepare(struct pool *p, struct zs_err *err)
{
    size_t n = (size_t)p->nallocs;
    if (zs_grow((void **)&p->log, &p->log_cap, 2 * n + 1, sizeof *p->log))
        goto nomem;
    if (p->kind == ZS_POOL_CUDA_CACHING) {
        /* Each allocation creates at most a segment block and a split
         * remainder; frees and flushes only recycle blocks. */
        size_t nb = 2 * n + 1;
        if (zs_grow((void **)&p->blk, &p->blk_cap, nb, sizeof *p->blk) ||
            zs_grow((void **)&p->fset[0], &p->fset_cap[0], nb,
                    sizeof *p->fset[0]) ||
            zs_grow((void **)&p->fset[1], &p->fset_cap[1], nb,
                    sizeof *p->fset[1]))
            goto nomem;
    }
    return 0;
nomem:
    return zs_err_set(err, ZS_ENOMEM,
                      "out of memory preparing pool '%s' for %lld "
                      "allocations",
                      p->name, (long long)p->nallocs);
}

/* ---- log and peaks ----------------------------------------------------- */

static int64_t log_event(struct pool *p, int64_t t_ns, int32_t task,
                         int64_t bytes)
{
    struct zs_mem_event *e = &p->log[p->nlog];
    int64_t seq = (int64_t)p->nlog++;
    e->t_ns = t_ns;
    e->task = task;
    e->bytes = bytes;
    e->allocated = p->allocated;
    e->reserved = p->reserved;
    if (p->allocated > p->st.peak_allocated) {
        p->st.peak_allocated = p->allocated;
        p->st.t_peak_allocated_ns = t_ns;
        p->st.seq_peak_allocated = seq;
    }
    if (p->reserved > p->st.peak_reserved) {
        p->st.peak_reserved = p->reserved;
        p->st.t_peak_reserved_ns = t_ns;
        p->st.seq_peak_reserved = seq;
    }
    if (p->pinned > p->st.peak_pinned)
        p->st.peak_pinned = p->pinned;
    return seq;
}

static int oom(zs_sim *s, int pool, int32_t id, int64_t t_ns, int64_t req)
{
    const struct pool *p = &s->pools[pool];
    s->oom.pool = pool;
    s->oom.task = id;
    s->oom.t_ns = t_ns;
    s->oom.requested = req;
    s->oom.allocated = p->allocated;
    s->oom.reserved = p->reserved;
    s->oom.capacity = p->capacity;
    s->oom_set = 1;
    return ZS_SIM_OOM;
}

/* ---- CUDA caching allocator -------------------------------------------- */

static int64_t round_size(int64_t bytes)
{
    if (bytes < K_MIN_BLOCK_SIZE)
        return K_MIN_BLOCK_SIZE;
    return K_MIN_BLOCK_SIZE *
           ((bytes + K_MIN_BLOCK_SIZE - 1) / K_MIN_BLOCK_SIZE);
}

static int64_t allocation_size(int64_t size)
{
    if (size <= K_SMALL_SIZE)
        return K_SMALL_BUFFER;
    if (size < K_MIN_LARGE_ALLOC)
        return K_LARGE_BUFFER;
    return K_ROUND_LARGE * ((size + K_ROUND_LARGE - 1) / K_ROUND_LARGE);
}

static int32_t blk_new(struct pool *p)
{
    int32_t b;
    if (p->blk_free >= 0) {
        b = p->blk_free;
        p->blk_free = p->blk[b].next;
    } else {
        b = (int32_t)p->nblk++; /* within blk_cap by zs_pool_prepare */
    }
    return b;
}

static void blk_recycle(struct pool *p, int32_t b)
{
    p->blk[b].next = p->blk_free;
    p->blk[b].size = 0; /* not a block now (zs_pool_fingerprint) */
    p->blk_free = b;
}

/* BlockComparatorSize: by stream, then size, then address. */
static inline int blk_less(const struct blk *x, const struct blk *y)
{
    if (x->stream != y->stream)
        return x->stream < y->stream;
    return x->size < y->size || (x->size == y->size && x->addr < y->addr);
}

/* First index in the sorted free set whose block is not before key. */
static size_t fset_lower(const struct pool *p, int small, int stream,
                         int64_t size, int64_t addr)
{
    const int32_t *a = p->fset[small];
    size_t lo = 0, hi = p->nfset[small];
    struct blk key;
    key.stream = (uint8_t)stream;
    key.size = size;
    key.addr = addr;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (blk_less(&p->blk[a[mid]], &key))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void fset_insert(struct pool *p, int32_t b)
{
    int small = p->blk[b].small;
    size_t i = fset_lower(p, small, p->blk[b].stream, p->blk[b].size,
                          p->blk[b].addr);
    int32_t *a = p->fset[small];
    memmove(a + i + 1, a + i, (p->nfset[small] - i) * sizeof *a);
    a[i] = b;
    p->nfset[small]++;
}

static void fset_remove_at(struct pool *p, int small, size_t i)
{
    int32_t *a = p->fset[small];
    memmove(a + i, a + i + 1, (p->nfset[small] - i - 1) * sizeof *a);
    p->nfset[small]--;
}

static void fset_remove(struct pool *p, int32_t b)
{
    int small = p->blk[b].small;
    size_t i = fset_lower(p, small, p->blk[b].stream, p->blk[b].size,
                          p->blk[b].addr);
    fset_remove_at(p, small, i);
}

/* release_cached_blocks: frees every cached block that is a whole segment. */
static void release_cached(struct pool *p)
{
    /* an expandable large pool is released by es_release (its blocks cut
     * off by unmapped pages are not whole segments) */
    for (int small = p->expandable ? 1 : 0; small < 2; small++) {
        int32_t *a = p->fset[small];
        size_t k = 0;
        for (size_t i = 0; i < p->nfset[small]; i++) {
            struct blk *b = &p->blk[a[i]];
            if (b->prev < 0 && b->next < 0) {
                p->reserved -= b->size;
                blk_recycle(p, a[i]);
            } else {
                a[k++] = a[i];
            }
        }
        p->nfset[small] = k;
    }
}

/* es_release of block b, the segment's last: its pages from a0 on are
 * unmapped, so the segment's end shrinks to a0.  Appends to snap[k..) what
 * stays cached; returns the new k. */
static size_t es_unmap_tail(struct pool *p, int32_t b, int64_t a0,
                            int32_t *snap, size_t k)
{
    struct blk *B = &p->blk[b];
    int32_t pv = B->prev;
    p->es_next[B->stream] = a0;
    if (a0 > B->addr) {
        B->size = a0 - B->addr;
        snap[k++] = b;
    } else {
        p->es_tail[B->stream] = pv;
        if (pv >= 0)
            p->blk[pv].next = -1;
        blk_recycle(p, b);
    }
    return k;
}

/* A new free block [a1, end) that follows an unmapped range and precedes
 * block nx (-1 none). */
static int32_t es_piece(struct pool *p, int64_t a1, int64_t end, int32_t nx,
                        int stream)
{
    int32_t r = blk_new(p);
    struct blk *R = &p->blk[r];
    R->stream = (uint8_t)stream;
    R->addr = a1;
    R->size = end - a1;
    R->prev = -1;
    R->next = nx;
    R->small = 0;
    R->used = 0;
    R->task = -1;
    if (nx >= 0)
        p->blk[nx].prev = r;
    return r;
}

/* es_release of block b inside the segment: pages [a0, a1) are unmapped,
 * cutting the block's head (before a0) and tail (from a1) apart from each
 * other and from the neighbours across the hole.  Appends to snap[k..) the
 * pieces that stay cached; returns the new k. */
static size_t es_unmap_inner(struct pool *p, int32_t b, int64_t a0,
                             int64_t a1, int32_t *snap, size_t k)
{
    struct blk *B = &p->blk[b];
    int64_t a = B->addr, end = B->addr + B->size;
    int32_t pv = B->prev, nx = B->next;
    if (a0 > a) { /* head stays, cut off from what follows */
        B->size = a0 - a;
        B->next = -1;
        snap[k++] = b;
        if (end > a1)
            snap[k++] = es_piece(p, a1, end, nx, B->stream);
        else if (nx >= 0)
            p->blk[nx].prev = -1;
        return k;
    }
    /* no head */
    if (pv >= 0)
        p->blk[pv].next = -1;
    if (end > a1) {
        B->addr = a1;
        B->size = end - a1;
        B->prev = -1;
        snap[k++] = b;
    } else {
        if (nx >= 0)
            p->blk[nx].prev = -1;
        blk_recycle(p, b);
    }
    return k;
}

/* Expandable large pool, release_cached_blocks: unmaps the whole pages
 * inside every cached free block.  Returns 0 or ZS_ENOMEM (the block table
 * grows by at most one entry per free block). */
static int es_release(struct pool *p, struct zs_err *err)
{
    size_t n = p->nfset[0], k;
    int32_t *snap;
    if (n == 0)
        return 0;
    /* the release adds at most n block structs; the free set must hold as
     * many entries as there can be structs */
    if (zs_grow((void **)&p->blk, &p->blk_cap, p->nblk + n, sizeof *p->blk) ||
        zs_grow((void **)&p->fset[0], &p->fset_cap[0], p->blk_cap,
                sizeof *p->fset[0]))
        return zs_err_set(err, ZS_ENOMEM,
                          "out of memory growing pool '%s' blocks", p->name);
    /* snap[0, n): the free blocks before; snap[n, 3n): those after (a block
     * may leave two pieces) */
    snap = zs_malloc(3 * n * sizeof *snap);
    if (!snap)
        return zs_err_set(err, ZS_ENOMEM,
                          "out of memory releasing pool '%s' pages", p->name);
    memcpy(snap, p->fset[0], n * sizeof *snap);
    p->nfset[0] = 0;
    k = n;
    for (size_t i = 0; i < n; i++) {
        int32_t b = snap[i];
        const struct blk *B = &p->blk[b];
        int64_t a = B->addr, end = B->addr + B->size;
        int64_t base = ES_BASE + B->stream * ES_SPAN; /* its stream's range */
        int64_t a0 = base + (a - base + ES_PAGE - 1) / ES_PAGE * ES_PAGE;
        int64_t a1 = base + (end - base) / ES_PAGE * ES_PAGE;
        if (a1 <= a0) { /* no whole page inside: stays cached */
            snap[k++] = b;
            continue;
        }
        p->reserved -= a1 - a0;
        if (b == p->es_tail[B->stream])
            k = es_unmap_tail(p, b, a0, snap, k);
        else
            k = es_unmap_inner(p, b, a0, a1, snap, k);
    }
    for (size_t i = n; i < k; i++)
        fset_insert(p, snap[i]);
    zs_free(snap);
    return 0;
}

/* Expandable large pool: grows the segment's end for a `size` request and
 * returns the free block there, or -1 (OOM, after one release), or -2
 * (ZS_ENOMEM in err). */
static int32_t es_grow(struct pool *p, int st, int64_t size,
                       struct zs_err *err)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        int32_t tl = p->es_tail[st], b;
        int64_t have = tl >= 0 && !p->blk[tl].used ? p->blk[tl].size : 0;
        int64_t grow = (size - have + ES_PAGE - 1) / ES_PAGE * ES_PAGE;
        struct blk *B;
        if (p->capacity > 0 && p->reserved + grow > p->capacity) {
            if (attempt)
                return -1;
            if (es_release(p, err))
                return -2;
            release_cached(p); /* the small pool's whole segments */
            p->st.cache_flushes++;
            continue;
        }
        if (have > 0) {
            b = tl;
            fset_remove(p, b);
            p->blk[b].size += grow;
        } else {
            b = blk_new(p);
            B = &p->blk[b];
            B->addr = p->es_next[st];
            B->size = grow;
            B->prev = tl;
            B->next = -1;
            B->small = 0;
            B->stream = (uint8_t)st;
            if (tl >= 0)
                p->blk[tl].next = b;
            p->es_tail[st] = b;
        }
        p->es_next[st] += grow;
        p->reserved += grow;
        return b;
    }
    return -1;
}

/* get_free_block's max_split_size tests: may a cached block of bsz bytes
 * serve a request of size? */
static int oversize_ok(const struct pool *p, int64_t size, int64_t bsz)
{
    if (!p->max_split)
        return 1;
    if (size < p->max_split && bsz >= p->max_split)
        return 0; /* an oversize block for a request that is not */
    if (size >= p->max_split && bsz >= size + K_LARGE_BUFFER)
        return 0; /* rounded up by kLargeBuffer or more */
    return 1;
}

/* release_available_cached_blocks for a large-pool request of size on
 * stream st (default mode, max_split set): frees the smallest cached block
 * of st of at least max(size, max_split), else st's oversize blocks from the
 * largest down until their sizes reach that; reserved drops by what was
 * freed. */
/* release_block of the large pool's free-set entry i, a whole segment:
 * returns its size. */
static int64_t release_segment_at(struct pool *p, size_t i)
{
    int32_t b = p->fset[0][i];
    int64_t size = p->blk[b].size;
    assert(p->blk[b].prev < 0 && p->blk[b].next < 0);
    fset_remove_at(p, 0, i);
    p->reserved -= size;
    blk_recycle(p, b);
    return size;
}

static void release_oversize(struct pool *p, int st, int64_t size)
{
    int64_t key = size < p->max_split ? p->max_split : size, total = 0;
    size_t i = fset_lower(p, 0, st, key, INT64_MIN);
    if (i < p->nfset[0] && p->blk[p->fset[0][i]].stream == st) {
        release_segment_at(p, i);
        return;
    }
    /* i - 1: the largest block of stream st below key, if st has one */
    while (i > 0 && total < key) {
        const struct blk *B = &p->blk[p->fset[0][i - 1]];
        if (B->stream != st || B->size < p->max_split)
            break;
        total += release_segment_at(p, --i);
    }
}

static int cuda_alloc(zs_sim *s, int pool, int32_t id, int64_t t_ns,
                      struct zs_err *err)
{
    struct pool *p = &s->pools[pool];
    struct task *t = &s->tasks[id];
    int st = s->queues[s->recs[id].queue].stream;
    int64_t size = round_size(t->alloc_bytes);
    int small = size <= K_SMALL_SIZE;
    size_t i = fset_lower(p, small, st, size, INT64_MIN);
    int32_t b;
    struct blk *B;
    int64_t rem;
    if (i < p->nfset[small] && p->blk[p->fset[small][i]].stream == st &&
        oversize_ok(p, size, p->blk[p->fset[small][i]].size)) {
        b = p->fset[small][i];
        fset_remove_at(p, small, i);
    } else if (p->expandable && !small) {
        b = es_grow(p, st, size, err);
        if (b == -2)
            return ZS_ENOMEM;
        if (b < 0)
            return oom(s, pool, id, t_ns, t->alloc_bytes);
    } else {
        int64_t seg = allocation_size(size);
        if (p->capacity > 0 && p->reserved + seg > p->capacity &&
            p->max_split && !small)
            release_oversize(p, st, size);
        if (p->capacity > 0 && p->reserved + seg > p->capacity) {
            release_cached(p);
            p->st.cache_flushes++;
            if (p->reserved + seg > p->capacity)
                return oom(s, pool, id, t_ns, t->alloc_bytes);
        }
        b = blk_new(p);
        B = &p->blk[b];
        B->addr = p->next_addr;
        B->size = seg;
        B->prev = B->next = -1;
        B->small = (uint8_t)small;
        B->stream = (uint8_t)st;
        p->next_addr += seg;
        p->reserved += seg;
    }
    B = &p->blk[b];
    rem = B->size - size;
    /* should_split: a small-pool block, or any block under expandable
     * segments, splits off a remainder of kMinBlockSize or more; a default
     * large-pool block one of more than kSmallSize, for a request below
     * max_split_size ("return (size < CUDAAllocatorConfig::max_split_size())
     * && (remaining > kSmallSize);") (pytorch/pytorch
     * c10/cuda/CUDACachingAllocator.cpp at 001074d2: "if
     * (block->pool->is_small || CUDAAllocatorConfig::expandable_segments())
     * return remaining >= kMinBlockSize;") */
    if (small || p->expandable
            ? rem >= K_MIN_BLOCK_SIZE
            : rem > K_SMALL_SIZE && (!p->max_split || size < p->max_split)) {
        int32_t r = blk_new(p);
        struct blk *R = &p->blk[r];
        R->addr = B->addr + size;
        R->size = rem;
        R->prev = b;
        R->next = B->next;
        R->small = B->small;
        R->stream = B->stream;
        R->used = 0;
        R->task = -1;
        if (B->next >= 0)
            p->blk[B->next].prev = r;
        B->next = r;
        B->size = size;
        if (b == p->es_tail[B->stream])
            p->es_tail[B->stream] = r;
        fset_insert(p, r);
    }
    B->used = 1;
    B->task = id;
    t->blk = b;
    t->held = B->size;
    p->allocated += B->size;
    return 0;
}

/* Block hi, the free neighbour after lo in its segment, joins lo (free_block's
 * merge); hi's struct is recycled.  The caller took the free one of the two
 * out of the free set first (its key changes). */
static void blk_merge(struct pool *p, int32_t lo, int32_t hi)
{
    struct blk *L = &p->blk[lo], *H = &p->blk[hi];
    L->size += H->size;
    L->next = H->next;
    if (H->next >= 0)
        p->blk[H->next].prev = lo;
    if (hi == p->es_tail[H->stream])
        p->es_tail[H->stream] = lo;
    blk_recycle(p, hi);
}

static void cuda_free(struct pool *p, struct task *t)
{
    int32_t b = t->blk;
    struct blk *B = &p->blk[b];
    p->allocated -= B->size;
    B->used = 0;
    B->task = -1;
    if (B->prev >= 0 && !p->blk[B->prev].used) {
        int32_t pv = B->prev;
        fset_remove(p, pv);
        blk_merge(p, pv, b);
        b = pv;
        B = &p->blk[b];
    }
    if (B->next >= 0 && !p->blk[B->next].used) {
        fset_remove(p, B->next);
        blk_merge(p, b, B->next);
    }
    fset_insert(p, b);
    t->blk = -1;
}

/* ---- host -------------------------------------------------------------- */

/* c10::llvm::PowerOf2Ceil: the class k with 2^k >= bytes (bytes >= 1). */
static int pow2_class(int64_t bytes)
{
    int k = 0;
    while (((int64_t)1 << k) < bytes)
        k++;
    return k;
}

/* ---- entry points ------------------------------------------------------ */

int zs_pool_alloc(zs_sim *s, int pool, int32_t id, int64_t t_ns,
                  struct zs_err *err)
{
    struct pool *p = &s->pools[pool];
    struct task *t = &s->tasks[id];
    int64_t req = t->alloc_bytes;
    if (req > 0) {
        switch (p->kind) {
        case ZS_POOL_CUDA_CACHING: {
            int rc = cuda_alloc(s, pool, id, t_ns, err);
            if (rc)
                return rc;
            break;
        }
        case ZS_POOL_HOST:
            if (t->flags & ZS_ALLOC_PINNED) {
                int k = pow2_class(req);
                int64_t sz = (int64_t)1 << k;
                if (p->cached[k] > 0) {
                    p->cached[k]--;
                } else {
                    if (p->capacity > 0 && p->reserved + sz > p->capacity)
                        return oom(s, pool, id, t_ns, req);
                    p->pinned += sz;
                    p->reserved += sz;
                }
                t->blk = k;
                t->held = sz;
                p->allocated += sz;
                break;
            }
            /* pageable host memory is exact, as PLAIN */
            if (p->capacity > 0 && p->reserved + req > p->capacity)
                return oom(s, pool, id, t_ns, req);
            t->held = req;
            p->allocated += req;
            p->reserved += req;
            if (t->flags & ZS_ALLOC_LOCKED)
                p->pinned += req;
            break;
        default:
            if (p->capacity > 0 && p->reserved + req > p->capacity)
                return oom(s, pool, id, t_ns, req);
            t->held = req;
            p->allocated += req;
            p->reserved += req;
            break;
        }
    }
    /* sizes never go negative; what is allocated is reserved; a pool with
     * a capacity never reserves past it (the OOM checks above) */
    assert(req >= 0 && p->allocated >= 0 && p->reserved >= p->allocated);
    assert(p->capacity <= 0 || p->reserved <= p->capacity);
    p->st.allocs++;
    t->log_alloc = log_event(p, t_ns, id, req);
    return 0;
}

void zs_pool_free(zs_sim *s, int pool, int32_t id, int64_t t_ns)
{
    struct pool *p = &s->pools[pool];
    struct task *t = &s->tasks[id];
    if (t->held > 0) {
        if (p->kind == ZS_POOL_CUDA_CACHING) {
            cuda_free(p, t);
        } else if (p->kind == ZS_POOL_HOST && t->blk >= 0) {
            p->cached[t->blk]++; /* stays reserved, cached for reuse */
            p->allocated -= t->held;
            t->blk = -1;
        } else {
            p->allocated -= t->held;
            p->reserved -= t->held;
            if (p->kind == ZS_POOL_HOST && (t->flags & ZS_ALLOC_LOCKED))
                p->pinned -= t->held;
        }
    }
    assert(p->allocated >= 0 && p->reserved >= p->allocated);
    p->st.frees++;
    t->log_free = log_event(p, t_ns, id, -t->alloc_bytes);
}

int zs_pool_empty_cache(zs_sim *s, int pool, struct zs_err *err)
{
    struct pool *p = &s->pools[pool];
    if (p->kind != ZS_POOL_CUDA_CACHING)
        return 0;
    if (p->expandable && es_release(p, err))
        return ZS_ENOMEM;
    release_cached(p);
    return 0;
}

/* ---- results ----------------------------------------------------------- */

void zs_sim_pool_stats(const zs_sim *s, int pool, struct zs_pool_stats *out)
{
    if (!out)
        return;
    if (!s || !zs_index_ok(pool, s->npools)) {
        memset(out, 0, sizeof *out);
        out->seq_peak_allocated = out->seq_peak_reserved = -1;
        return;
    }
    *out = s->pools[pool].st;
}

const struct zs_mem_event *zs_sim_pool_log(const zs_sim *s, int pool,
                                           int64_t *n)
{
    if (!s || !zs_index_ok(pool, s->npools)) {
        if (n)
            *n = 0;
        return NULL;
    }
    if (n)
        *n = (int64_t)s->pools[pool].nlog;
    return s->pools[pool].log;
}

int64_t zs_sim_pool_peak_bound(const zs_sim *s, int pool)
{
    int64_t unfreed = 0, best = 0, *live;
    if (!s || !zs_index_ok(pool, s->npools))
        return 0;
    live = zs_calloc(s->nqueues ? s->nqueues : 1, sizeof *live);
    if (!live)
        return 0;
    for (size_t i = 0; i < s->ntasks; i++) {
        const struct task *t = &s->tasks[i];
        int q = s->recs[i].queue;
        if (t->pool != pool)
            continue;
        if (t->kind == ZS_TASK_ALLOC && t->freed < 0) {
            unfreed += t->alloc_bytes;
            live[q] += t->alloc_bytes;
        } else if (t->kind == ZS_TASK_ALLOC &&
                   s->recs[t->freed].queue == q) {
            live[q] += t->alloc_bytes;
        } else if (t->kind == ZS_TASK_FREE &&
                   s->recs[t->aux].queue == q) {
            live[q] -= s->tasks[t->aux].alloc_bytes;
        } else {
            continue;
        }
        if (live[q] > best)
            best = live[q];
    }
    zs_free(live);
    return unfreed > best ? unfreed : best;
}

int64_t zs_sim_alloc_bytes(const zs_sim *s, int32_t id)
{
    if (!s || !zs_index_ok(id, s->ntasks) ||
        s->tasks[id].kind != ZS_TASK_ALLOC)
        return 0;
    return s->tasks[id].alloc_bytes;
}

/* Order of the live list: more held bytes first, then the lower task id.
 * A total order (ids are unique), so any correct sort gives one answer. */
static int live_before(const struct zs_sim *s, int32_t a, int32_t b)
{
    int64_t ha = s->tasks[a].held, hb = s->tasks[b].held;
    return ha > hb || (ha == hb && a < b);
}

/* Sift ids[r] down a heap of n ids whose root comes last by live_before. */
static void live_sift(const struct zs_sim *s, int32_t *ids, int64_t r,
                      int64_t n)
{
    for (;;) {
        int64_t c = 2 * r + 1, m = r;
        int32_t t;
        if (c < n && live_before(s, ids[m], ids[c]))
            m = c;
        if (c + 1 < n && live_before(s, ids[m], ids[c + 1]))
            m = c + 1;
        if (m == r)
            return;
        t = ids[r];
        ids[r] = ids[m];
        ids[m] = t;
        r = m;
    }
}

/* In-place heapsort of ids[0..n) into live_before order (largest first):
 * O(n log n), no allocation.  The peak of a 70B step holds thousands of
 * buffers, where an insertion sort is quadratic. */
static void live_sort(const struct zs_sim *s, int32_t *ids, int64_t n)
{
    for (int64_t i = n / 2; i > 0; i--)
        live_sift(s, ids, i - 1, n);
    for (int64_t end = n - 1; end > 0; end--) {
        int32_t t = ids[0];
        ids[0] = ids[end];
        ids[end] = t;
        live_sift(s, ids, 0, end);
    }
}

int64_t zs_sim_pool_live_at(const zs_sim *s, int pool, int64_t seq,
                            int32_t *tasks, int64_t cap)
{
    const struct pool *p;
    int64_t total = 0, filled = 0;
    if (!s || !zs_index_ok(pool, s->npools) || seq < 0)
        return 0;
    if (!tasks)
        cap = 0;
    p = &s->pools[pool];
    if (seq >= (int64_t)p->nlog)
        seq = (int64_t)p->nlog - 1;
    /* Pass 1: the live allocations in log order, as many as fit. */
    for (int64_t i = 0; i <= seq; i++) {
        int32_t id = p->log[i].task;
        const struct task *t = &s->tasks[id];
        if (t->log_alloc != i || t->held <= 0 ||
            (t->log_free >= 0 && t->log_free <= seq))
            continue;
        if (total < cap)
            tasks[total] = id;
        total++;
    }
    if (total <= cap) {
        live_sort(s, tasks, total);
        return total;
    }
    if (cap == 0)
        return total; /* the count alone */
    /* More live than cap: keep tasks[0..filled) sorted, largest first, by
     * insertion into at most cap entries (no allocation). */
    for (int64_t i = 0; i <= seq; i++) {
        int32_t id = p->log[i].task;
        const struct task *t = &s->tasks[id];
        int64_t j;
        if (t->log_alloc != i || t->held <= 0 ||
            (t->log_free >= 0 && t->log_free <= seq))
            continue;
        j = filled < cap ? filled++ : cap;
        while (j > 0) {
            if (!live_before(s, id, tasks[j - 1]))
                break;
            if (j < cap)
                tasks[j] = tasks[j - 1];
            j--;
        }
        if (j < cap)
            tasks[j] = id;
    }
    return total;
}

/* ---- fingerprint ------------------------------------------------------- */

/* FNV-1a over the 8 bytes of w (Fowler, Noll, Vo; the 64-bit prime). */
static uint64_t fp_word(uint64_t h, int64_t w)
{
    uint64_t u = (uint64_t)w;
    for (int i = 0; i < 8; i++) {
        h ^= (u >> (8 * i)) & 0xFF;
        h *= 0x100000001b3ULL;
    }
    return h;
}

static int head_addr_cmp(const void *x, const void *y)
{
    int64_t a0 = ((const struct seg_head *)x)->addr,
            a1 = ((const struct seg_head *)y)->addr;
    return (a0 > a1) - (a0 < a1);
}

/* The segments of a CUDA caching pool in address order, their blocks in
 * address order, each at its offset in the segment (an expandable
 * segment's blocks may have unmapped ranges between them).  Segment
 * addresses themselves only order them (a new segment always gets the
 * highest yet), so they enter as that order. */
static uint64_t fp_segments(const struct pool *p, uint64_t h, int32_t from,
                            int32_t mark, struct seg_head *heads)
{
    size_t nh = 0;
    for (size_t i = 0; i < p->nblk; i++)
        if (p->blk[i].size > 0 && p->blk[i].prev < 0) {
            heads[nh].addr = p->blk[i].addr;
            heads[nh++].blk = (int32_t)i;
        }
    qsort(heads, nh, sizeof *heads, head_addr_cmp);
    h = fp_word(h, (int64_t)nh);
    for (size_t k = 0; k < nh; k++) {
        const struct blk *b = &p->blk[heads[k].blk];
        h = fp_word(h, b->stream | (int64_t)b->small << 8);
        for (int32_t i = heads[k].blk; i >= 0; i = p->blk[i].next) {
            b = &p->blk[i];
            h = fp_word(h, b->addr - heads[k].addr);
            h = fp_word(h, b->size);
            if (!b->used)
                h = fp_word(h, INT64_MIN); /* free */
            else
                h = fp_word(h, b->task < from ? (int64_t)b->task
                                              : (int64_t)b->task - mark);
        }
    }
    if (p->expandable)
        for (int i = 0; i < ZS_ALLOC_STREAMS; i++)
            h = fp_word(h, p->es_next[i] - (ES_BASE + i * ES_SPAN));
    return h;
}

uint64_t zs_pool_fingerprint(const struct pool *p, uint64_t h, int32_t from,
                             int32_t mark, struct seg_head *heads)
{
    h = fp_word(h, p->kind);
    h = fp_word(h, p->allocated);
    h = fp_word(h, p->reserved);
    h = fp_word(h, p->pinned);
    if (p->kind == ZS_POOL_HOST)
        for (int i = 0; i < ZS_HOST_CLASSES; i++)
            h = fp_word(h, p->cached[i]);
    if (p->kind == ZS_POOL_CUDA_CACHING)
        h = fp_segments(p, h, from, mark, heads);
    return h;
}
