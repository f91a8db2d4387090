/*
 * schedule_io_int.h — helpers shared by schedule_io.c and measured_io.c (and
 * validate/published_io.c): the header and predicted-totals tables both
 * formats hold, the read and write paths, locating an element of a top-level
 * array in the source text (cJSON keeps no positions) and writing JSON
 * strings.
 *
 * Locating works by blanking the source text outside the element (newlines
 * kept, so line:column stay true) and asking zs_json_where for the key: the
 * only match left is the one inside the element.  It is done only on the
 * error path, after which the text is no longer needed, so it allocates
 * nothing.
 */
#ifndef ZS_SCHEDULE_IO_INT_H
#define ZS_SCHEDULE_IO_INT_H

#include "formats/schedule_io.h"
#include "util/json.h"

#include <stdbool.h>

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

/* The header and predicted-totals tables: the measured file's header and
 * "predicted" block are the schedule's, key for key. */
extern const struct zs_field zs_sched_io_f_header[];
extern const size_t zs_sched_io_n_header;
extern const struct zs_field zs_sched_io_f_pred[];
extern const size_t zs_sched_io_n_pred;

/* Every predicted total unknown (-1). */
void zs_sched_io_pred_init(struct zs_sched_pred *p);

/* The read path both formats share: the text (or, when text is NULL, the
 * file at name, read with zs_read_file) is parsed into *src and its tree
 * handed to fill(ctx, root), and undo(ctx) called when fill fails; the tree
 * and the source are released whatever fill returns.  Returns the parse's or
 * fill's code. */
int zs_sched_io_read(const char *name, const char *text, size_t len,
                     struct zs_json_src *src,
                     int (*fill)(void *ctx, const cJSON *root),
                     void (*undo)(void *ctx), void *ctx, struct zs_err *err);

/* The write path both formats share: put(doc, f, err) into a temp file
 * renamed onto path (util/afile.h); a write error is prefixed with
 * "cannot write 'path'". */
int zs_sched_io_write(const char *path,
                      int (*put)(const void *doc, FILE *f, struct zs_err *err),
                      const void *doc, struct zs_err *err);

/* The top-level table into *top, then its "schema" string (the member
 * at schema_off) must be want: "invalid 'schema' in file:line:col: must
 * be "want" (got 'x')". */
int zs_sched_io_read_top(const struct zs_json_src *src, const cJSON *root,
                         const struct zs_field *fields, size_t n, void *top,
                         size_t schema_off, const char *want,
                         struct zs_err *err);
/* Each of keys[0..n) must be present at the top: "missing 'k' in file:
 * required". */
int zs_sched_io_require(const struct zs_json_src *src, const cJSON *root,
                        const char *const *keys, size_t n, struct zs_err *err);
/* Top-level array `key` holds min_n to max_n elements (min_n 0: "at most"),
 * each message naming `key` as what it lists; *n gets the count. */
int zs_sched_io_array_size(const struct zs_json_src *src, const cJSON *arr,
                           const char *key, int min_n, int max_n, int *n,
                           struct zs_err *err);
/* Checks the size of top-level array `key` (zs_sched_io_array_size), then
 * calls fn(ctx, i, element) for each element in order until one fails. */
int zs_sched_io_each(const struct zs_json_src *src, const cJSON *arr,
                     const char *key, int min_n, int max_n,
                     int (*fn)(void *ctx, long i, const cJSON *it), void *ctx,
                     struct zs_err *err);
/* The top-level keys both formats require (zs_sched_io_require), then the
 * "header" object into *h. */
int zs_sched_io_read_head(const struct zs_json_src *src, const cJSON *root,
                          const char *const *keys, size_t n,
                          struct zs_sched_header *h, struct zs_err *err);
/* The optional "predicted" object into *p (left as is when absent or
 * null); *present says which. */
int zs_sched_io_read_pred(const struct zs_json_src *src, const cJSON *root,
                          struct zs_sched_pred *p, bool *present,
                          struct zs_err *err);

/* `"key": "value"` (skipped when value is empty) and `"key": 123`, with a
 * leading ", " unless *first; both formats' writers use them. */
void zs_sched_io_put_kv_str(FILE *f, const char *key, const char *v,
                            int *first);
void zs_sched_io_put_kv_int(FILE *f, const char *key, int64_t v, int *first);
/* The members of obj that the table lists, in its order: strings (skipped
 * when empty) and integers; the writer's side of a reader's table. */
void zs_sched_io_put_fields(FILE *f, const struct zs_field *fields, size_t n,
                            const void *obj);
/* The header object's members (the schedule's and the measured file's). */
void zs_sched_io_put_header(FILE *f, const struct zs_sched_header *h);
/* The predicted totals' members (the schedule's and the measured file's). */
void zs_sched_io_put_pred(FILE *f, const struct zs_sched_pred *p);

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
