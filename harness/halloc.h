/*
 * halloc.h — a PyTorch-like caching allocator for the harness, over any
 * segment backend (cudaMalloc on a GPU, a counter in --dry-run).
 *
 * Rules (c10/cuda/CUDACachingAllocator.cpp, as zsim's engine models them in
 * sim/engine/engine.h): requests round up to 512 B; requests <= 1 MiB come
 * from 2 MiB "small" segments, larger ones from 20 MiB segments (requests
 * < 10 MiB) or the request rounded up to 2 MiB; the smallest free block that
 * fits is taken (best fit) and split when the rest is >= 512 B (small) or
 * > 1 MiB (large); freed blocks merge with free neighbours and stay reserved.
 * A free is stream-ordered: the block is "pending" until the backend says the
 * GPU work that used it has finished (ready()), exactly like PyTorch's
 * record_stream events; pending blocks are checked at every allocation.
 * When a new segment cannot be had, every pending block is waited for, all
 * fully free segments are released (a "cache flush", counted) and the
 * allocation retried.
 *
 * Counters: allocated = Σ block sizes in use (rounded, as PyTorch's
 * allocated_bytes), reserved = Σ segment sizes; peaks of both.
 * Cost: O(live blocks) per allocation (linear best-fit scan); fine for the
 * tens of thousands of blocks of one rank's schedule.
 */
#ifndef ZS_HALLOC_H
#define ZS_HALLOC_H

#include <stddef.h>
#include <stdint.h>

struct halloc_backend {
    void *ctx;
    /* Allocates a segment; 0 ok, nonzero out of memory. */
    int (*seg_alloc)(void *ctx, size_t bytes, void **ptr);
    void (*seg_free)(void *ctx, void *ptr);
    /* Whether the work guarded by token has finished; wait() blocks on it. */
    int (*ready)(void *ctx, int32_t token);
    void (*wait)(void *ctx, int32_t token);
};

struct halloc_stats {
    int64_t allocated, reserved;
    int64_t peak_allocated, peak_reserved;
    int64_t cache_flushes, segments;
};

struct halloc;

struct halloc *halloc_new(const struct halloc_backend *be);
void halloc_free_all(struct halloc *a); /* releases every segment and a */
/* Returns 0 and *ptr, or -1 when even after a flush nothing fits. */
int halloc_malloc(struct halloc *a, size_t bytes, void **ptr);
/* Frees ptr once `token` is ready (token < 0: at once). */
void halloc_release(struct halloc *a, void *ptr, int32_t token);
void halloc_get_stats(const struct halloc *a, struct halloc_stats *out);
/* torch.cuda.empty_cache(): waits for every pending free, then releases
 * every segment that is wholly free (not counted as a flush). */
void halloc_empty_cache(struct halloc *a);

/* The rounding rules on their own (for tests and the dry run). */
size_t halloc_round(size_t bytes);
size_t halloc_segment_size(size_t rounded);

#endif
