/*
 * schedule_io_int.h — helpers shared by schedule_io.c and measured_io.c only:
 * locating an element of a top-level array in the source text (cJSON keeps
 * no positions) and writing JSON strings.
 *
 * Locating works by blanking the source text outside the element (newlines
 * kept, so line:column stay true) and asking zs_json_where for the key: the
 * only match left is the one inside the element.  It is done only on the
 * error path, after which the text is no longer needed, so it allocates
 * nothing.
 */
#ifndef ZS_SCHEDULE_IO_INT_H
#define ZS_SCHEDULE_IO_INT_H

#include "util/json.h"

#include <stdio.h>

/* Blanks src->text outside element idx of the top-level array `arr`.
 * Returns 0, or -1 when the element is not found (text untouched). */
int zs_sched_io_mask_elem(struct zs_json_src *src, const char *arr, long idx);

/* zs_json_read on element idx of array `arr` (named "arr[idx]" in
 * messages); on ZS_EINPUT the text is masked to the element and the read
 * repeated so the message carries the element's line:column. */
int zs_sched_io_read_elem(struct zs_json_src *src, const char *arr, long idx,
                          const cJSON *node, const struct zs_field *fields,
                          size_t nfields, void *dst, unsigned opts,
                          struct zs_err *err);

/* "path:line:col" of key inside element idx of `arr` (masks the text). */
void zs_sched_io_elem_where(struct zs_json_src *src, const char *arr, long idx,
                            const char *key, char *buf, size_t cap);

/* `"key": "value"` (skipped when value is empty) and `"key": 123`, with a
 * leading ", " unless *first; both formats' writers use them. */
void zs_sched_io_put_kv_str(FILE *f, const char *key, const char *v,
                            int *first);
void zs_sched_io_put_kv_int(FILE *f, const char *key, int64_t v, int *first);
/* The header object's members (the schedule's and the measured file's). */
void zs_sched_io_put_header(FILE *f, const struct zs_sched_header *h);

/* A start/end pair of a task (measured or predicted, ns): both -1 or neither,
 * and end >= start.  Returns 0, or 1 with the offending key (k_start or
 * k_end) and the reason in why. */
int zs_sched_io_check_times(int64_t start, int64_t end, const char *k_start,
                            const char *k_end, const char **key, char *why,
                            size_t cap);

/* Checks a header-like table against a filled struct: required strings
 * non-empty, integers and doubles in range.  On a problem writes the key into
 * *key and the reason ("must be ...(got ...)") into why; returns 1. */
int zs_sched_io_check_fields(const struct zs_field *fields, size_t n,
                             const void *src, size_t base_off,
                             size_t span_bytes, const char **key, char *why,
                             size_t cap);

#endif
