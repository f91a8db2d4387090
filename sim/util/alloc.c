/*
 * alloc.c — counted allocation with failure injection; see alloc.h.
 * Thread-safe: plan simulates candidates on several threads (plan.c run_all),
 * all allocating through here, so the counter and the injected failure are
 * C11 atomics (relaxed: they order nothing else, and each allocation takes
 * one fetch-add).  Exactly one allocation sees count == fail_at, so an
 * injected failure fires once even under threads.
 */
#include "util/alloc.h"
#include "util/err.h"

#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static atomic_long g_count;
static atomic_long g_fail_at;
static atomic_int g_failed;

static int should_fail(void)
{
    long n = atomic_fetch_add_explicit(&g_count, 1, memory_order_relaxed) + 1;
    long at = atomic_load_explicit(&g_fail_at, memory_order_relaxed);
    if (at > 0 && n == at) {
        atomic_store_explicit(&g_failed, 1, memory_order_relaxed);
        return 1;
    }
    return 0;
}

void *zs_malloc(size_t bytes)
{
    if (should_fail())
        return NULL;
    return malloc(bytes ? bytes : 1);
}

void *zs_calloc(size_t n, size_t bytes)
{
    if (bytes && n > SIZE_MAX / bytes)
        return NULL;
    if (should_fail())
        return NULL;
    return calloc(n ? n : 1, bytes ? bytes : 1);
}

void *zs_realloc(void *p, size_t bytes)
{
    if (should_fail())
        return NULL;
    return realloc(p, bytes ? bytes : 1);
}

void zs_free(void *p)
{
    free(p);
}

char *zs_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = zs_malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

int zs_grow(void **p, size_t *cap, size_t need, size_t elem_bytes)
{
    size_t ncap;
    void *np;
    if (need <= *cap)
        return 0;
    ncap = *cap ? *cap : 8;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return ZS_ENOMEM;
        ncap *= 2;
    }
    if (elem_bytes && ncap > SIZE_MAX / elem_bytes)
        return ZS_ENOMEM;
    np = zs_realloc(*p, ncap * elem_bytes);
    if (!np)
        return ZS_ENOMEM;
    *p = np;
    *cap = ncap;
    return 0;
}

static void *cjson_malloc(size_t bytes)
{
    return zs_malloc(bytes);
}

void zs_alloc_init(void)
{
    static int done;
    cJSON_Hooks hooks = {cjson_malloc, zs_free};
    if (done)
        return;
    cJSON_InitHooks(&hooks);
    done = 1;
}

void zs_alloc_fail_at(long n)
{
    atomic_store(&g_count, 0);
    atomic_store(&g_fail_at, n);
    atomic_store(&g_failed, 0);
}

long zs_alloc_count(void)
{
    return atomic_load(&g_count);
}
int zs_alloc_failed(void)
{
    return atomic_load(&g_failed);
}
