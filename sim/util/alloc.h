/*
 * alloc.h — every heap allocation in zsim goes through these functions.
 *
 * Tests fail the Nth allocation (zs_alloc_fail_at) to prove that every loader
 * and builder survives an out-of-memory at any point: it must return ZS_ENOMEM
 * with its outputs untouched or released, never crash or leak.  cJSON is routed
 * here too (zs_alloc_init installs cJSON_InitHooks).
 */
#ifndef ZS_ALLOC_H
#define ZS_ALLOC_H

#include <stddef.h>

void zs_alloc_init(void); /* installs the cJSON hooks; idempotent */

void *zs_malloc(size_t bytes);           /* NULL on failure */
void *zs_calloc(size_t n, size_t bytes); /* NULL on failure or overflow */
void *zs_realloc(void *p, size_t bytes); /* NULL on failure, p untouched */
void zs_free(void *p);                   /* NULL is fine */
char *zs_strdup(const char *s);          /* NULL on failure */

/* Grows *p (an array of *cap elements of elem_bytes) to hold at least need
 * elements, doubling.  Returns 0 or ZS_ENOMEM (then *p and *cap unchanged). */
int zs_grow(void **p, size_t *cap, size_t need, size_t elem_bytes);

/* Test hooks: make the Nth allocation from now fail (n >= 1), or 0 to disable.
 * zs_alloc_count() is the number of allocations since the last reset. */
void zs_alloc_fail_at(long n);
long zs_alloc_count(void);
int zs_alloc_failed(void); /* 1 once the injected failure has fired */

#endif
