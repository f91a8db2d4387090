/*
 * halloc.c — see halloc.h.  Blocks live in one array; each segment's blocks
 * form an address-ordered doubly linked list so neighbours can merge.
 * The harness is a program of its own: it allocates with malloc, not
 * zs_malloc (no failure injection is wanted while measuring).
 */
#include "halloc.h"

#include <stdlib.h>
#include <string.h>

#define KB 1024ull
#define MB (1024ull * 1024)
#define ROUND 512ull         /* kMinBlockSize */
#define SMALL_MAX (1 * MB)   /* kSmallSize */
#define SMALL_SEG (2 * MB)   /* kSmallBuffer */
#define LARGE_SEG (20 * MB)  /* kLargeBuffer */
#define MIN_LARGE (10 * MB)  /* kMinLargeAlloc */
#define ROUND_LARGE (2 * MB) /* kRoundLarge */

struct blk {
    char *ptr;
    size_t size;
    int seg;        /* index into segs */
    int prev, next; /* neighbours in the segment, -1 none */
    int state;      /* 0 free, 1 in use, 2 pending free, -1 unused slot */
    int32_t token;
};

struct seg {
    char *ptr;
    size_t size;
    int small;
    int first; /* first block, -1 when released */
};

struct halloc {
    struct halloc_backend be;
    struct blk *b;
    int nb, capb;
    struct seg *s;
    int ns, caps;
    struct halloc_stats st;
};

size_t halloc_round(size_t bytes)
{
    if (bytes < ROUND)
        return ROUND;
    return (bytes + ROUND - 1) / ROUND * ROUND;
}

size_t halloc_segment_size(size_t rounded)
{
    if (rounded <= SMALL_MAX)
        return SMALL_SEG;
    if (rounded < MIN_LARGE)
        return LARGE_SEG;
    return (rounded + ROUND_LARGE - 1) / ROUND_LARGE * ROUND_LARGE;
}

struct halloc *halloc_new(const struct halloc_backend *be)
{
    struct halloc *a = calloc(1, sizeof *a);
    if (a)
        a->be = *be;
    return a;
}

static int new_blk(struct halloc *a)
{
    for (int i = 0; i < a->nb; i++)
        if (a->b[i].state < 0)
            return i;
    if (a->nb == a->capb) {
        int cap = a->capb ? a->capb * 2 : 256;
        struct blk *nb = realloc(a->b, (size_t)cap * sizeof *nb);
        if (!nb)
            return -1;
        a->b = nb;
        a->capb = cap;
    }
    return a->nb++;
}

static void merge_free(struct halloc *a, int i)
{
    struct blk *b = &a->b[i];
    int n = b->next, p = b->prev;
    if (n >= 0 && a->b[n].state == 0) {
        b->size += a->b[n].size;
        b->next = a->b[n].next;
        if (b->next >= 0)
            a->b[b->next].prev = i;
        a->b[n].state = -1;
    }
    if (p >= 0 && a->b[p].state == 0) {
        a->b[p].size += b->size;
        a->b[p].next = b->next;
        if (b->next >= 0)
            a->b[b->next].prev = p;
        b->state = -1;
    }
}

/* Pending frees whose work has finished become free (process_events). */
static void process_pending(struct halloc *a, int wait)
{
    for (int i = 0; i < a->nb; i++) {
        if (a->b[i].state != 2)
            continue;
        if (wait)
            a->be.wait(a->be.ctx, a->b[i].token);
        else if (!a->be.ready(a->be.ctx, a->b[i].token))
            continue;
        a->b[i].state = 0;
        merge_free(a, i);
    }
}

static int take(struct halloc *a, int i, size_t size)
{
    struct blk *b = &a->b[i];
    size_t rest = b->size - size;
    int small = a->s[b->seg].small;
    if ((small && rest >= ROUND) || (!small && rest > SMALL_MAX)) {
        int j = new_blk(a);
        if (j >= 0) {
            b = &a->b[i]; /* the array may have moved */
            a->b[j] = *b;
            a->b[j].ptr = b->ptr + size;
            a->b[j].size = rest;
            a->b[j].prev = i;
            a->b[j].state = 0;
            if (b->next >= 0)
                a->b[b->next].prev = j;
            b->next = j;
            b->size = size;
        }
    }
    b->state = 1;
    a->st.allocated += (int64_t)b->size;
    if (a->st.allocated > a->st.peak_allocated)
        a->st.peak_allocated = a->st.allocated;
    return i;
}

static int best_fit(struct halloc *a, size_t size, int small)
{
    int best = -1;
    for (int i = 0; i < a->nb; i++) {
        struct blk *b = &a->b[i];
        if (b->state != 0 || a->s[b->seg].small != small || b->size < size)
            continue;
        /* PyTorch does not split oversize cached large blocks for small
         * requests; pools are separate, which this check keeps. */
        if (best < 0 || b->size < a->b[best].size)
            best = i;
    }
    return best;
}

static int new_segment(struct halloc *a, size_t seg_size, int small)
{
    void *p;
    int bi, si;
    if (a->be.seg_alloc(a->be.ctx, seg_size, &p))
        return -1;
    if (a->ns == a->caps) {
        int cap = a->caps ? a->caps * 2 : 64;
        struct seg *ns = realloc(a->s, (size_t)cap * sizeof *ns);
        if (!ns) {
            a->be.seg_free(a->be.ctx, p);
            return -1;
        }
        a->s = ns;
        a->caps = cap;
    }
    bi = new_blk(a);
    if (bi < 0) {
        a->be.seg_free(a->be.ctx, p);
        return -1;
    }
    si = a->ns++;
    a->s[si].ptr = p;
    a->s[si].size = seg_size;
    a->s[si].small = small;
    a->s[si].first = bi;
    a->b[bi].ptr = p;
    a->b[bi].size = seg_size;
    a->b[bi].seg = si;
    a->b[bi].prev = a->b[bi].next = -1;
    a->b[bi].state = 0;
    a->st.reserved += (int64_t)seg_size;
    a->st.segments++;
    if (a->st.reserved > a->st.peak_reserved)
        a->st.peak_reserved = a->st.reserved;
    return bi;
}

/* Releases every segment that is one free block (release_cached_blocks). */
static void release_free_segments(struct halloc *a)
{
    for (int si = 0; si < a->ns; si++) {
        int f = a->s[si].first;
        if (f < 0 || a->b[f].state != 0 || a->b[f].next >= 0)
            continue;
        a->be.seg_free(a->be.ctx, a->s[si].ptr);
        a->b[f].state = -1;
        a->s[si].first = -1;
        a->st.reserved -= (int64_t)a->s[si].size;
        a->st.segments--;
    }
}

/* An allocation retry's flush: counted (num_alloc_retries). */
static void flush(struct halloc *a)
{
    release_free_segments(a);
    a->st.cache_flushes++;
}

void halloc_empty_cache(struct halloc *a)
{
    process_pending(a, 1);
    release_free_segments(a);
}

int halloc_malloc(struct halloc *a, size_t bytes, void **ptr)
{
    size_t size = halloc_round(bytes);
    int small = size <= SMALL_MAX, i;
    process_pending(a, 0);
    i = best_fit(a, size, small);
    if (i < 0)
        i = new_segment(a, halloc_segment_size(size), small);
    if (i < 0) {
        process_pending(a, 1);
        flush(a);
        i = best_fit(a, size, small);
        if (i < 0)
            i = new_segment(a, halloc_segment_size(size), small);
    }
    if (i < 0)
        return -1;
    i = take(a, i, size);
    *ptr = a->b[i].ptr;
    return 0;
}

void halloc_release(struct halloc *a, void *ptr, int32_t token)
{
    for (int i = 0; i < a->nb; i++) {
        if (a->b[i].state != 1 || a->b[i].ptr != ptr)
            continue;
        a->st.allocated -= (int64_t)a->b[i].size;
        if (token >= 0) {
            a->b[i].state = 2;
            a->b[i].token = token;
        } else {
            a->b[i].state = 0;
            merge_free(a, i);
        }
        return;
    }
}

void halloc_get_stats(const struct halloc *a, struct halloc_stats *out)
{
    *out = a->st;
}

void halloc_free_all(struct halloc *a)
{
    if (!a)
        return;
    for (int si = 0; si < a->ns; si++)
        if (a->s[si].first >= 0)
            a->be.seg_free(a->be.ctx, a->s[si].ptr);
    free(a->b);
    free(a->s);
    free(a);
}
