/*
 * harness.c — zsim-harness: runs one rank's zsim schedule (zsim.schedule/1,
 * harness/SCHEDULE.md) on one real GPU and writes what it measured
 * (zsim.measured/1) beside zsim's predictions.
 *
 * Execution model.  One host thread walks the tasks in id order (the
 * schedule's topological order), as the Python thread of DeepSpeed or FSDP2
 * does:
 *   - GPU tasks (h2d, d2h, gemm, elementwise, collective) are enqueued on
 *     their queue's CUDA stream after cudaStreamWaitEvent on every dependency
 *     that ran on another stream, bracketed by two timing events;
 *   - host tasks (alloc, free, cpu_adam, host_wait, mark) first wait for
 *     their GPU dependencies (cudaEventSynchronize), then run on the host and
 *     are timed with CLOCK_MONOTONIC.
 * Allocations are real: device memory through cudaMalloc directly
 * (--allocator cudamalloc) or through a PyTorch-like caching allocator
 * (--allocator caching, halloc.c; a free becomes reusable when its deps have
 * finished, like record_stream); pinned host buffers through cudaHostAlloc
 * (caching mode: rounded to a power of two and cached per size, as PyTorch's
 * CachingHostAllocator), pageable ones through malloc + first touch.
 * Copies use the schedule's buffers when it names them, else scratch buffers
 * of the right kind; GEMMs are cublasGemmEx in bf16 with fp32 accumulation;
 * collectives on one GPU are device-to-device copies of the same bytes or
 * skipped; CPU Adam is a fused multithreaded pass over fp32 p, g, m, v.
 * Scratch operands are allocated before the run and reported apart
 * (scratch_device_bytes), outside the allocator counters.
 *
 * --dry-run touches no GPU: it checks the schedule and replays its
 * allocations through the same caching rules, printing the peaks, so the
 * allocator model can be compared with zsim's on any machine.
 */
#include "halloc.h"
#include "formats/measured_io.h"
#include "formats/schedule_io.h"
#include "util/alloc.h"
#include "util/strutil.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef ZSH_DRY_ONLY
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
int zsh_elementwise(const void *in, void *out, size_t n, cudaStream_t s);
#endif

#define ZSH_VERSION "zsim-harness " ZS_VERSION
#define EW_SCRATCH (256ull << 20) /* elementwise: loops over 256 MiB */

static const char g_usage[] =
    "usage: zsim-harness --schedule FILE [--out FILE.measured.json]\n"
    "                    [--allocator caching|cudamalloc] [--device N]\n"
    "                    [--threads N] [--dry-run]\n"
    "\n"
    "Runs one rank's zsim schedule on one GPU and writes the measured file\n"
    "(zsim.measured/1) that 'zsim validate' and 'zsim calibrate' read.\n"
    "--dry-run checks the schedule and replays its allocations without a "
    "GPU.\n";

/* ---- small helpers --------------------------------------------------------
 */

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t rss_bytes(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return -1;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = -1;
    fclose(f);
    return resident < 0 ? -1 : (int64_t)resident * sysconf(_SC_PAGESIZE);
}

static size_t pow2_ceil(size_t v)
{
    size_t p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

static void read_line_after(const char *path, const char *key, char *out,
                            size_t cap)
{
    char line[512];
    FILE *f = fopen(path, "r");
    out[0] = '\0';
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        char *p = strstr(line, key);
        if (!p)
            continue;
        p += strlen(key);
        while (*p == ' ' || *p == '\t' || *p == ':')
            p++;
        p[strcspn(p, "\n")] = '\0';
        zs_strlcpy(out, p, cap);
        break;
    }
    fclose(f);
}

/* ---- CPU Adam
 * ------------------------------------------------------------------ */

/* One fused AdamW pass: reads p, g, m, v (16 B) and writes p, m, v (12 B)
 * per element, the 28 B of DeepSpeedCPUAdam (zero3-offload-mechanics.md §5).
 * Hyper-parameters are DeepSpeedCPUAdam's defaults (lr 1e-3, betas 0.9 /
 * 0.999, eps 1e-8, weight decay 0); the values do not matter for timing. */
struct adam_job {
    float *p, *g, *m, *v;
    size_t lo, hi;
};

static void *adam_worker(void *arg)
{
    struct adam_job *j = arg;
    const float lr = 1e-3f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    for (size_t i = j->lo; i < j->hi; i++) {
        float g = j->g[i];
        float m = b1 * j->m[i] + (1 - b1) * g;
        float v = b2 * j->v[i] + (1 - b2) * g * g;
        j->m[i] = m;
        j->v[i] = v;
        j->p[i] -= lr * m / (sqrtf(v) + eps);
    }
    return NULL;
}

static int run_adam(float *p, float *g, float *m, float *v, size_t n,
                    int threads)
{
    pthread_t tid[256];
    struct adam_job job[256];
    if (threads < 1)
        threads = 1;
    if (threads > 256)
        threads = 256;
    for (int t = 0; t < threads; t++) {
        job[t].p = p;
        job[t].g = g;
        job[t].m = m;
        job[t].v = v;
        job[t].lo = n * (size_t)t / (size_t)threads;
        job[t].hi = n * (size_t)(t + 1) / (size_t)threads;
        if (pthread_create(&tid[t], NULL, adam_worker, &job[t]) != 0)
            return -1;
    }
    for (int t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    return 0;
}

/* ---- dry run: allocator replay without a GPU
 * ----------------------------------- */

struct fake {
    uintptr_t next;
};

static int fake_alloc(void *ctx, size_t bytes, void **ptr)
{
    struct fake *f = ctx;
    *ptr = (void *)f->next;
    f->next += (bytes + 4095) & ~(uintptr_t)4095;
    return 0;
}
static void fake_free(void *ctx, void *ptr)
{
    (void)ctx, (void)ptr;
}
static int fake_ready(void *ctx, int32_t t)
{
    (void)ctx, (void)t;
    return 1;
}
static void fake_wait(void *ctx, int32_t t)
{
    (void)ctx, (void)t;
}

static int dry_run(const struct zs_schedule *s)
{
    struct fake fk = {4096};
    struct halloc_backend be = {&fk, fake_alloc, fake_free, fake_ready,
                                fake_wait};
    struct halloc *a = halloc_new(&be);
    struct halloc_stats st;
    void **ptr = calloc((size_t)s->ntasks + 1, sizeof *ptr);
    int64_t kinds[ZS_SK_COUNT] = {0};
    int64_t pinned = 0, pageable = 0, peak_pinned = 0, peak_host = 0;

    if (!a || !ptr) {
        fprintf(stderr, "zsim-harness: out of memory\n");
        free(ptr);
        halloc_free_all(a);
        return 1;
    }
    for (int32_t i = 0; i < s->ntasks; i++) {
        const struct zs_sched_task *t = &s->tasks[i];
        kinds[t->kind]++;
        if (t->kind == ZS_SK_ALLOC && t->pool == ZS_SP_DEVICE) {
            if (halloc_malloc(a, (size_t)t->bytes, &ptr[i]))
                break;
        } else if (t->kind == ZS_SK_ALLOC) {
            if (t->pinned)
                pinned += (int64_t)pow2_ceil((size_t)t->bytes);
            else
                pageable += t->bytes;
        } else if (t->kind == ZS_SK_FREE) {
            const struct zs_sched_task *b = &s->tasks[t->buffer];
            if (b->pool == ZS_SP_DEVICE)
                halloc_release(a, ptr[t->buffer], -1);
            else if (b->pinned)
                pinned -= (int64_t)pow2_ceil((size_t)b->bytes);
            else
                pageable -= b->bytes;
        }
        if (pinned > peak_pinned)
            peak_pinned = pinned;
        if (pinned + pageable > peak_host)
            peak_host = pinned + pageable;
    }
    halloc_get_stats(a, &st);
    printf("schedule: %s on %s, rank %lld of %lld, %lld step(s), %d tasks, %d "
           "queues\n",
           s->header.model, s->header.hardware, (long long)s->header.rank,
           (long long)s->header.world, (long long)s->header.steps,
           (int)s->ntasks, s->nqueues);
    for (int k = 0; k < ZS_SK_COUNT; k++)
        if (kinds[k])
            printf("  %-12s %lld\n", zs_sched_kind_name((enum zs_sched_kind)k),
                   (long long)kinds[k]);
    printf("allocator replay (caching rules, no reuse delay; pinned rounded to "
           "2^k):\n");
    printf("  peak device allocated %lld (predicted %lld)\n",
           (long long)st.peak_allocated,
           (long long)s->pred.peak_device_allocated_bytes);
    printf("  peak device reserved  %lld (predicted %lld)\n",
           (long long)st.peak_reserved,
           (long long)s->pred.peak_device_reserved_bytes);
    printf("  peak pinned           %lld (predicted %lld)\n",
           (long long)peak_pinned, (long long)s->pred.peak_pinned_bytes);
    printf("  peak host buffers     %lld (predicted %lld)\n",
           (long long)peak_host, (long long)s->pred.peak_host_bytes);
    free(ptr);
    halloc_free_all(a);
    return 0;
}

#ifndef ZSH_DRY_ONLY
/* ---- the GPU run
 * ------------------------------------------------------------------ */

#define CK(call)                                                               \
    do {                                                                       \
        cudaError_t e_ = (call);                                               \
        if (e_ != cudaSuccess) {                                               \
            fprintf(stderr, "zsim-harness: %s failed: %s (task %d)\n", #call,  \
                    cudaGetErrorString(e_), (int)cur_task);                    \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static int32_t cur_task = -1;

struct hostblk {
    void *ptr;
    size_t size;
    int used;
};

struct run {
    const struct zs_schedule *s;
    int caching, threads;
    cudaStream_t *stream;   /* per queue; NULL for host queues */
    cudaEvent_t *ev0, *ev1; /* per task (GPU tasks only) */
    cudaEvent_t t0_ev;
    int64_t t0_host;
    int64_t *hs, *he; /* host task times, ns from t0 */
    void **ptr;       /* per alloc task */
    struct halloc *dev;
    int64_t dev_alloc, dev_peak; /* cudamalloc mode counters */
    struct hostblk *hcache;      /* pinned host cache (caching mode) */
    int nh, caph;
    int64_t pinned, pinned_peak;
    int64_t rss0, rss_peak, used0, used_peak;
    /* scratch */
    void *ga, *gb, *gc, *ew_in, *ew_out, *dcopy, *dcopy2, *hpin, *hpage;
    float *adam[4];
    int64_t scratch_dev;
    cublasHandle_t blas;
};

static void sample(struct run *r)
{
    size_t fr = 0, tot = 0;
    int64_t rss = rss_bytes();
    if (rss > r->rss_peak)
        r->rss_peak = rss;
    if (cudaMemGetInfo(&fr, &tot) == cudaSuccess &&
        (int64_t)(tot - fr) > r->used_peak)
        r->used_peak = (int64_t)(tot - fr);
}

/* halloc backend over cudaMalloc; tokens are free-task ids whose deps'
 * end events guard the block. */
static int cu_seg_alloc(void *ctx, size_t bytes, void **ptr)
{
    (void)ctx;
    return cudaMalloc(ptr, bytes) != cudaSuccess;
}
static void cu_seg_free(void *ctx, void *ptr)
{
    (void)ctx;
    cudaFree(ptr);
}
static int cu_ready(void *ctx, int32_t tok)
{
    struct run *r = ctx;
    const struct zs_sched_task *t = &r->s->tasks[tok];
    for (int32_t d = 0; d < t->ndeps; d++) {
        int32_t dep = r->s->deps[t->dep_off + d];
        if (zs_sched_kind_on_gpu(r->s->tasks[dep].kind) &&
            cudaEventQuery(r->ev1[dep]) != cudaSuccess)
            return 0;
    }
    return 1;
}
static void cu_wait(void *ctx, int32_t tok)
{
    struct run *r = ctx;
    const struct zs_sched_task *t = &r->s->tasks[tok];
    for (int32_t d = 0; d < t->ndeps; d++) {
        int32_t dep = r->s->deps[t->dep_off + d];
        if (zs_sched_kind_on_gpu(r->s->tasks[dep].kind))
            cudaEventSynchronize(r->ev1[dep]);
    }
}

static void *host_pinned_alloc(struct run *r, size_t bytes)
{
    void *p = NULL;
    size_t sz = r->caching ? pow2_ceil(bytes) : bytes;
    if (r->caching)
        for (int i = 0; i < r->nh; i++)
            if (!r->hcache[i].used && r->hcache[i].size == sz) {
                r->hcache[i].used = 1;
                return r->hcache[i].ptr;
            }
    CK(cudaHostAlloc(&p, sz, cudaHostAllocDefault));
    memset(p, 0, sz);
    r->pinned += (int64_t)sz;
    if (r->pinned > r->pinned_peak)
        r->pinned_peak = r->pinned;
    if (r->caching) {
        if (r->nh == r->caph) {
            r->caph = r->caph ? r->caph * 2 : 64;
            r->hcache = realloc(r->hcache, (size_t)r->caph * sizeof *r->hcache);
            if (!r->hcache) {
                fprintf(stderr, "zsim-harness: out of memory\n");
                exit(1);
            }
        }
        r->hcache[r->nh].ptr = p;
        r->hcache[r->nh].size = sz;
        r->hcache[r->nh].used = 1;
        r->nh++;
    }
    return p;
}

static void host_pinned_free(struct run *r, void *p, size_t bytes)
{
    if (r->caching) {
        for (int i = 0; i < r->nh; i++)
            if (r->hcache[i].ptr == p)
                r->hcache[i].used = 0; /* cached, as PyTorch: never returned */
        return;
    }
    CK(cudaFreeHost(p));
    r->pinned -= (int64_t)bytes;
}

static void wait_deps_host(struct run *r, const struct zs_sched_task *t)
{
    for (int32_t d = 0; d < t->ndeps; d++) {
        int32_t dep = r->s->deps[t->dep_off + d];
        if (zs_sched_kind_on_gpu(r->s->tasks[dep].kind))
            CK(cudaEventSynchronize(r->ev1[dep]));
    }
}

static void host_task(struct run *r, int32_t i)
{
    const struct zs_schedule *s = r->s;
    const struct zs_sched_task *t = &s->tasks[i];
    wait_deps_host(r, t);
    r->hs[i] = now_ns() - r->t0_host;
    switch (t->kind) {
    case ZS_SK_ALLOC:
        if (t->pool == ZS_SP_DEVICE) {
            if (r->caching) {
                if (halloc_malloc(r->dev, (size_t)t->bytes, &r->ptr[i])) {
                    fprintf(stderr,
                            "zsim-harness: device out of memory at task %d "
                            "('%s', %lld bytes)\n",
                            (int)i, t->name, (long long)t->bytes);
                    exit(1);
                }
            } else {
                CK(cudaMalloc(&r->ptr[i], (size_t)t->bytes));
                r->dev_alloc += t->bytes;
                if (r->dev_alloc > r->dev_peak)
                    r->dev_peak = r->dev_alloc;
            }
        } else if (t->pinned) {
            r->ptr[i] = host_pinned_alloc(r, (size_t)t->bytes);
        } else {
            r->ptr[i] = malloc((size_t)t->bytes);
            if (!r->ptr[i]) {
                fprintf(stderr, "zsim-harness: host out of memory at task %d\n",
                        (int)i);
                exit(1);
            }
            memset(r->ptr[i], 0, (size_t)t->bytes); /* first touch: RSS */
        }
        sample(r);
        break;
    case ZS_SK_FREE: {
        const struct zs_sched_task *b = &s->tasks[t->buffer];
        void *p = r->ptr[t->buffer];
        if (b->pool == ZS_SP_DEVICE) {
            if (r->caching) {
                halloc_release(r->dev, p, i);
                if (t->empty_cache)
                    halloc_empty_cache(r->dev);
            } else {
                cu_wait(r, i);
                CK(cudaFree(p));
                r->dev_alloc -= b->bytes;
            }
        } else if (b->pinned) {
            host_pinned_free(r, p, (size_t)b->bytes);
        } else {
            free(p);
        }
        r->ptr[t->buffer] = NULL;
        sample(r);
        break;
    }
    case ZS_SK_CPU_ADAM: {
        float *v[4];
        for (int j = 0; j < 4; j++)
            v[j] = t->adam_bufs[j] >= 0 ? r->ptr[t->adam_bufs[j]] : r->adam[j];
        if (run_adam(v[0], v[1], v[2], v[3], (size_t)t->elements,
                     t->threads > 0 ? (int)t->threads : r->threads)) {
            fprintf(stderr, "zsim-harness: cannot start Adam threads\n");
            exit(1);
        }
        sample(r);
        break;
    }
    default: /* host_wait, mark: the wait above is the work */
        if (t->kind == ZS_SK_MARK)
            sample(r);
        break;
    }
    r->he[i] = now_ns() - r->t0_host;
}

static void gpu_task(struct run *r, int32_t i)
{
    const struct zs_schedule *s = r->s;
    const struct zs_sched_task *t = &s->tasks[i];
    cudaStream_t st = r->stream[t->queue];
    for (int32_t d = 0; d < t->ndeps; d++) {
        int32_t dep = s->deps[t->dep_off + d];
        const struct zs_sched_task *dt = &s->tasks[dep];
        if (zs_sched_kind_on_gpu(dt->kind) && dt->queue != t->queue)
            CK(cudaStreamWaitEvent(st, r->ev1[dep], 0));
    }
    CK(cudaEventRecord(r->ev0[i], st));
    switch (t->kind) {
    case ZS_SK_H2D:
    case ZS_SK_D2H: {
        void *h = t->host_buf >= 0 ? r->ptr[t->host_buf]
                                   : (t->pinned ? r->hpin : r->hpage);
        void *dv = t->dev_buf >= 0 ? r->ptr[t->dev_buf] : r->dcopy;
        if (t->kind == ZS_SK_H2D)
            CK(cudaMemcpyAsync(dv, h, (size_t)t->bytes, cudaMemcpyHostToDevice,
                               st));
        else
            CK(cudaMemcpyAsync(h, dv, (size_t)t->bytes, cudaMemcpyDeviceToHost,
                               st));
        break;
    }
    case ZS_SK_GEMM: {
        /* C[m x n] = A[m x k] B[k x n], bf16 in/out, fp32 accumulate;
         * column-major: C^T = B^T A^T, i.e. gemm(n, m, k). */
        const float alpha = 1.0f, beta = 0.0f;
        cublasSetStream(r->blas, st);
        for (int64_t c = 0; c < t->count; c++) {
            cublasStatus_t bs = cublasGemmEx(
                r->blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)t->n, (int)t->m,
                (int)t->k, &alpha, r->gb, CUDA_R_16BF, (int)t->n, r->ga,
                CUDA_R_16BF, (int)t->k, &beta, r->gc, CUDA_R_16BF, (int)t->n,
                CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
            if (bs != CUBLAS_STATUS_SUCCESS) {
                fprintf(stderr,
                        "zsim-harness: cublasGemmEx failed (%d) at task %d\n",
                        (int)bs, (int)i);
                exit(1);
            }
        }
        break;
    }
    case ZS_SK_ELEMENTWISE: {
        size_t left = (size_t)t->bytes / 2; /* half read, half written */
        while (left >= 16) {
            size_t chunk = left < EW_SCRATCH ? left : EW_SCRATCH;
            if (zsh_elementwise(r->ew_in, r->ew_out, chunk / 16, st)) {
                fprintf(stderr,
                        "zsim-harness: kernel launch failed at task %d\n",
                        (int)i);
                exit(1);
            }
            left -= chunk;
        }
        break;
    }
    case ZS_SK_COLLECTIVE:
        if (t->local == ZS_SL_COPY)
            CK(cudaMemcpyAsync(r->dcopy2, r->dcopy, (size_t)t->bytes,
                               cudaMemcpyDeviceToDevice, st));
        break;
    default:
        break;
    }
    CK(cudaEventRecord(r->ev1[i], st));
}

static void *dev_scratch(struct run *r, size_t bytes)
{
    void *p = NULL;
    if (!bytes)
        return NULL;
    CK(cudaMalloc(&p, bytes));
    CK(cudaMemset(p, 0, bytes));
    r->scratch_dev += (int64_t)bytes;
    return p;
}

static int gpu_run(const struct zs_schedule *s, const char *out, int caching,
                   int device, int threads, const char *schedule_path)
{
    struct run r;
    struct zs_measured m;
    struct zs_err err = {0, ""};
    struct cudaDeviceProp prop;
    size_t ga = 0, gb = 0, gc = 0, copy = 0, hcopy_pin = 0, hcopy_page = 0,
           coll = 0, adam = 0;
    int64_t ends[1000];
    int nsteps, drv = 0, rt = 0, clk = 0, mclk = 0;
    char name[200];

    memset(&r, 0, sizeof r);
    r.s = s;
    r.caching = caching;
    r.threads = threads;
    CK(cudaSetDevice(device));
    CK(cudaGetDeviceProperties(&prop, device));
    CK(cudaFree(0)); /* create the context before the baselines */

    /* Scratch sizes: the largest operand each kind needs. */
    for (int32_t i = 0; i < s->ntasks; i++) {
        const struct zs_sched_task *t = &s->tasks[i];
        size_t b = (size_t)t->bytes;
        if (t->kind == ZS_SK_GEMM) {
            size_t a_ = (size_t)(t->m * t->k * 2),
                   b_ = (size_t)(t->k * t->n * 2),
                   c_ = (size_t)(t->m * t->n * 2);
            ga = a_ > ga ? a_ : ga;
            gb = b_ > gb ? b_ : gb;
            gc = c_ > gc ? c_ : gc;
        } else if (t->kind == ZS_SK_H2D || t->kind == ZS_SK_D2H) {
            if (t->dev_buf < 0 && b > copy)
                copy = b;
            if (t->host_buf < 0 && t->pinned && b > hcopy_pin)
                hcopy_pin = b;
            if (t->host_buf < 0 && !t->pinned && b > hcopy_page)
                hcopy_page = b;
        } else if (t->kind == ZS_SK_COLLECTIVE && t->local == ZS_SL_COPY) {
            coll = b > coll ? b : coll;
        } else if (t->kind == ZS_SK_CPU_ADAM) {
            for (int j = 0; j < 4; j++)
                if (t->adam_bufs[j] < 0 && (size_t)t->elements > adam)
                    adam = (size_t)t->elements;
        }
    }
    copy = coll > copy ? coll : copy;
    r.ga = dev_scratch(&r, ga);
    r.gb = dev_scratch(&r, gb);
    r.gc = dev_scratch(&r, gc);
    r.ew_in = dev_scratch(&r, EW_SCRATCH);
    r.ew_out = dev_scratch(&r, EW_SCRATCH);
    r.dcopy = dev_scratch(&r, copy);
    r.dcopy2 = dev_scratch(&r, coll);
    if (hcopy_pin)
        CK(cudaHostAlloc(&r.hpin, hcopy_pin, cudaHostAllocDefault));
    if (hcopy_page && !(r.hpage = calloc(1, hcopy_page))) {
        fprintf(stderr, "zsim-harness: out of host memory for scratch\n");
        return 1;
    }
    for (int j = 0; j < 4 && adam; j++)
        if (!(r.adam[j] = calloc(adam, sizeof(float)))) {
            fprintf(stderr, "zsim-harness: out of host memory for scratch\n");
            return 1;
        }
    if (cublasCreate(&r.blas) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "zsim-harness: cublasCreate failed\n");
        return 1;
    }

    r.stream = calloc((size_t)s->nqueues, sizeof *r.stream);
    r.ev0 = calloc((size_t)s->ntasks + 1, sizeof *r.ev0);
    r.ev1 = calloc((size_t)s->ntasks + 1, sizeof *r.ev1);
    r.hs = calloc((size_t)s->ntasks + 1, sizeof *r.hs);
    r.he = calloc((size_t)s->ntasks + 1, sizeof *r.he);
    r.ptr = calloc((size_t)s->ntasks + 1, sizeof *r.ptr);
    if (!r.stream || !r.ev0 || !r.ev1 || !r.hs || !r.he || !r.ptr) {
        fprintf(stderr, "zsim-harness: out of memory\n");
        return 1;
    }
    for (int q = 0; q < s->nqueues; q++)
        if (!s->queues[q].host)
            CK(cudaStreamCreateWithFlags(&r.stream[q], cudaStreamNonBlocking));
    for (int32_t i = 0; i < s->ntasks; i++)
        if (zs_sched_kind_on_gpu(s->tasks[i].kind)) {
            CK(cudaEventCreate(&r.ev0[i]));
            CK(cudaEventCreate(&r.ev1[i]));
        }
    if (caching) {
        struct halloc_backend be = {&r, cu_seg_alloc, cu_seg_free, cu_ready,
                                    cu_wait};
        r.dev = halloc_new(&be);
        if (!r.dev) {
            fprintf(stderr, "zsim-harness: out of memory\n");
            return 1;
        }
    }

    /* Warm-up: one GEMM and one elementwise pass load the kernels. */
    if (ga) {
        const float alpha = 1.0f, beta = 0.0f;
        cublasGemmEx(r.blas, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &alpha, r.gb,
                     CUDA_R_16BF, 64, r.ga, CUDA_R_16BF, 64, &beta, r.gc,
                     CUDA_R_16BF, 64, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    }
    zsh_elementwise(r.ew_in, r.ew_out, 1024, 0);
    CK(cudaDeviceSynchronize());

    /* Baselines, then the time origin. */
    {
        size_t fr, tot;
        CK(cudaMemGetInfo(&fr, &tot));
        r.used0 = r.used_peak = (int64_t)(tot - fr);
        r.rss0 = r.rss_peak = rss_bytes();
    }
    CK(cudaEventCreate(&r.t0_ev));
    CK(cudaEventRecord(r.t0_ev, 0));
    CK(cudaEventSynchronize(r.t0_ev));
    r.t0_host = now_ns();

    for (int32_t i = 0; i < s->ntasks; i++) {
        cur_task = i;
        if (zs_sched_kind_on_gpu(s->tasks[i].kind))
            gpu_task(&r, i);
        else
            host_task(&r, i);
    }
    CK(cudaDeviceSynchronize());
    sample(&r);
    cur_task = -1;

    /* The measured file. */
    zs_measured_init(&m);
    m.kind = ZS_MK_HARNESS;
    m.header = s->header;
    m.has_pred = true;
    m.pred = s->pred;
    zs_strlcpy(m.env.gpu, prop.name, sizeof m.env.gpu);
    read_line_after("/proc/driver/nvidia/version", "Kernel Module", name,
                    sizeof name);
    {
        /* The first word of the form digits.digits[...]: the proprietary
         * module prints "Kernel Module  570.124.06  Release Build ...", the
         * open one "Kernel Module for x86_64  580.159.04  Release Build"
         * (the word after the key was recorded as "for" before). */
        char *p = name;
        while (*p) {
            size_t n;
            while (*p == ' ' || *p == '\t')
                p++;
            n = strcspn(p, " \t");
            if (n && p[0] >= '0' && p[0] <= '9' && memchr(p, '.', n)) {
                p[n] = '\0';
                zs_strlcpy(m.env.driver, p, sizeof m.env.driver);
                break;
            }
            p += n;
        }
    }
    if (!m.env.driver[0] && cudaDriverGetVersion(&drv) == cudaSuccess)
        snprintf(m.env.driver, sizeof m.env.driver, "cuda %d.%d", drv / 1000,
                 drv % 1000 / 10);
    if (cudaRuntimeGetVersion(&rt) == cudaSuccess)
        snprintf(m.env.cuda, sizeof m.env.cuda, "%d.%d", rt / 1000,
                 rt % 1000 / 10);
    /* Maximum clocks as the device reports them (kHz); the clocks during the
     * run are for nvidia-smi (validation/README.md records them). */
    if (cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, device) ==
        cudaSuccess)
        m.env.sm_clock_mhz = clk / 1000;
    if (cudaDeviceGetAttribute(&mclk, cudaDevAttrMemoryClockRate, device) ==
        cudaSuccess)
        m.env.mem_clock_mhz = mclk / 1000;
    gethostname(m.env.host, sizeof m.env.host - 1);
    read_line_after("/proc/cpuinfo", "model name", name, sizeof name);
    zs_strlcpy(m.env.cpu, name, sizeof m.env.cpu);
    m.env.cpu_threads = sysconf(_SC_NPROCESSORS_ONLN);
    {
        time_t tt = time(NULL);
        struct tm tm;
        gmtime_r(&tt, &tm);
        strftime(m.env.date, sizeof m.env.date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    }
    zs_strlcpy(m.env.allocator, caching ? "caching" : "cudamalloc",
               sizeof m.env.allocator);
    zs_strlcpy(m.env.tool, ZSH_VERSION, sizeof m.env.tool);

    for (int32_t i = 0; i < s->ntasks; i++) {
        const struct zs_sched_task *t = &s->tasks[i];
        struct zs_meas_task mt;
        zs_meas_task_from_sched(&mt, t);
        if (t->kind == ZS_SK_COLLECTIVE && t->local == ZS_SL_SKIP) {
            mt.skipped = true;
        } else if (zs_sched_kind_on_gpu(t->kind)) {
            float a = 0, b = 0;
            CK(cudaEventElapsedTime(&a, r.t0_ev, r.ev0[i]));
            CK(cudaEventElapsedTime(&b, r.t0_ev, r.ev1[i]));
            mt.start_ns = (int64_t)llround((double)a * 1e6);
            mt.end_ns = (int64_t)llround((double)b * 1e6);
            if (mt.end_ns < mt.start_ns)
                mt.end_ns = mt.start_ns;
        } else {
            mt.start_ns = r.hs[i];
            mt.end_ns = r.he[i];
        }
        if (zs_measured_add(&m, &mt, &err)) {
            fprintf(stderr, "zsim-harness: %s\n", err.msg);
            return 1;
        }
    }
    {
        struct halloc_stats st = {0};
        if (caching)
            halloc_get_stats(r.dev, &st);
        m.meas.peak_device_allocated_bytes =
            caching ? st.peak_allocated : r.dev_peak;
        m.meas.peak_device_reserved_bytes =
            caching ? st.peak_reserved : r.dev_peak;
    }
    m.meas.peak_device_used_bytes = r.used_peak - r.used0;
    m.meas.peak_host_bytes = r.rss0 >= 0 ? r.rss_peak - r.rss0 : -1;
    m.meas.peak_pinned_bytes = r.pinned_peak;
    m.meas.scratch_device_bytes = r.scratch_dev;
    {
        int64_t *end = calloc((size_t)s->ntasks + 1, sizeof *end);
        if (!end) {
            fprintf(stderr, "zsim-harness: out of memory\n");
            return 1;
        }
        for (int32_t i = 0; i < m.ntasks; i++)
            end[i] = m.tasks[i].end_ns;
        nsteps = zs_schedule_step_ends(s, end, ends, 1000);
        m.meas.step_time_ns =
            nsteps > 0 ? zs_sched_steady_step_ns(ends, nsteps) : -1;
        free(end);
    }
    if (zs_measured_write(&m, out, &err)) {
        fprintf(stderr, "zsim-harness: %s\n", err.msg);
        return 1;
    }
    printf("ran %s (%d tasks) on %s with the %s allocator: step %.3f ms, "
           "peak device allocated %lld, reserved %lld; wrote %s\n",
           schedule_path, (int)s->ntasks, m.env.gpu, m.env.allocator,
           (double)m.meas.step_time_ns / 1e6,
           (long long)m.meas.peak_device_allocated_bytes,
           (long long)m.meas.peak_device_reserved_bytes, out);
    zs_measured_release(&m);
    /* The process exits next; the driver releases device and pinned memory. */
    return 0;
}
#endif /* ZSH_DRY_ONLY */

int main(int argc, char **argv)
{
    const char *sched = NULL, *out = NULL, *alloc = "caching";
    int device = 0, threads = (int)sysconf(_SC_NPROCESSORS_ONLN), dry = 0, rc;
    struct zs_schedule s;
    struct zs_err err = {0, ""};

    zs_alloc_init();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(g_usage, stdout);
            return 0;
        } else if (strcmp(a, "--dry-run") == 0) {
            dry = 1;
            continue;
        } else if (!v) {
            fprintf(stderr,
                    "zsim-harness: unknown option or missing value '%s'\n%s", a,
                    g_usage);
            return 2;
        } else if (strcmp(a, "--schedule") == 0) {
            sched = v;
        } else if (strcmp(a, "--out") == 0) {
            out = v;
        } else if (strcmp(a, "--allocator") == 0) {
            alloc = v;
        } else if (strcmp(a, "--device") == 0) {
            device = atoi(v);
        } else if (strcmp(a, "--threads") == 0) {
            threads = atoi(v);
        } else {
            fprintf(stderr, "zsim-harness: unknown option '%s'\n%s", a,
                    g_usage);
            return 2;
        }
        i++;
    }
    if (!sched || (!dry && !out)) {
        fprintf(stderr, "zsim-harness: needs --schedule FILE and --out FILE "
                        "(or --dry-run)\n");
        return 2;
    }
    if (strcmp(alloc, "caching") != 0 && strcmp(alloc, "cudamalloc") != 0) {
        fprintf(stderr,
                "zsim-harness: invalid value for '--allocator': must be "
                "caching or cudamalloc (got '%s')\n",
                alloc);
        return 2;
    }
    if (threads < 1 || threads > 256) {
        fprintf(stderr, "zsim-harness: invalid value for '--threads': must be "
                        "in [1, 256]\n");
        return 2;
    }
    rc = zs_schedule_read(sched, &s, &err);
    if (rc) {
        fprintf(stderr, "zsim-harness: %s\n", err.msg);
        return 3;
    }
    if (dry) {
        rc = dry_run(&s);
    } else {
#ifndef ZSH_DRY_ONLY
        rc = gpu_run(&s, out, strcmp(alloc, "caching") == 0, device, threads,
                     sched);
#else
        fprintf(stderr, "zsim-harness: built without CUDA: only --dry-run\n");
        rc = 1;
#endif
    }
    zs_schedule_release(&s);
    return rc;
}
