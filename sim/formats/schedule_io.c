/*
 * schedule_io.c — reader, checker and writer of "zsim.schedule/1"; see
 * schedule_io.h and harness/SCHEDULE.md.
 *
 * Reading is table-driven (STYLE 12): a common table for every task plus one
 * table per kind, so a field that a kind does not use is an unknown key with a
 * did-you-mean.  Checks that span tasks (deps, buffer references, step marks)
 * run incrementally as each task is appended, so the first problem in file
 * order is the one reported, with its line:column.
 */
#include "formats/schedule_io.h"
#include "formats/schedule_io_int.h"
#include "util/afile.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/strutil.h"
#include "util/units.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* ---- names ------------------------------------------------------------- */

static const char *const g_kind_names[] = {
    "alloc",      "free",     "h2d",       "d2h",  "gemm", "elementwise",
    "collective", "cpu_adam", "host_wait", "mark", NULL};
static const char *const g_pool_names[] = {"device", "host", NULL};
static const char *const g_coll_names[] = {
    "allgather", "reducescatter", "allreduce", "alltoall", "broadcast",
    "reduce",    NULL};
static const char *const g_local_names[] = {"copy", "skip", NULL};
static const char *const g_adam_names[] = {"deepspeed", "torch", NULL};

const char *zs_sched_kind_name(enum zs_sched_kind k)
{
    return (unsigned)k < ZS_SK_COUNT ? g_kind_names[k] : "?";
}

const char *zs_sched_coll_name(int coll)
{
    return coll >= 0 && coll <= ZS_SC_REDUCE ? g_coll_names[coll] : "?";
}

bool zs_sched_kind_on_gpu(enum zs_sched_kind k)
{
    return k == ZS_SK_H2D || k == ZS_SK_D2H || k == ZS_SK_GEMM ||
           k == ZS_SK_ELEMENTWISE || k == ZS_SK_COLLECTIVE;
}

double zs_sched_gemm_flops(const struct zs_sched_task *t)
{
    return 2.0 * (double)t->m * (double)t->n * (double)t->k * (double)t->count;
}

/* ---- building ------------------------------------------------------------ */

void zs_sched_io_pred_init(struct zs_sched_pred *p)
{
    p->peak_device_allocated_bytes = -1;
    p->peak_device_reserved_bytes = -1;
    p->peak_host_bytes = -1;
    p->peak_pinned_bytes = -1;
    p->step_time_ns = -1;
}

void zs_schedule_init(struct zs_schedule *s)
{
    memset(s, 0, sizeof *s);
    zs_sched_io_pred_init(&s->pred);
}

void zs_schedule_release(struct zs_schedule *s)
{
    if (!s)
        return;
    zs_free(s->tasks);
    zs_free(s->deps);
    zs_schedule_init(s);
}

void zs_sched_task_init(struct zs_sched_task *t, enum zs_sched_kind kind,
                        int queue, const char *name)
{
    memset(t, 0, sizeof *t);
    t->kind = kind;
    t->queue = queue;
    zs_strlcpy(t->name, name ? name : "", sizeof t->name);
    t->buffer = -1;
    t->host_buf = t->dev_buf = -1;
    for (int i = 0; i < 4; i++)
        t->adam_bufs[i] = -1;
    t->count = 1;
    t->pred_start_ns = t->pred_end_ns = -1;
}

int zs_schedule_find_queue(const struct zs_schedule *s, const char *name)
{
    for (int i = 0; i < s->nqueues; i++)
        if (strcmp(s->queues[i].name, name) == 0)
            return i;
    return -1;
}

int zs_schedule_add_queue(struct zs_schedule *s, const char *name, bool host,
                          struct zs_err *err)
{
    if (!name || !name[0] || strlen(name) >= ZS_SCHED_QNAME_CAP)
        return zs_err_set(err, ZS_ERUNTIME,
                          "invalid queue name: must be 1 to %d characters",
                          ZS_SCHED_QNAME_CAP - 1);
    if (zs_schedule_find_queue(s, name) >= 0)
        return zs_err_set(err, ZS_ERUNTIME, "duplicate queue '%s'", name);
    if (s->nqueues >= ZS_SCHED_MAX_QUEUES)
        return zs_err_set(err, ZS_ELIMIT, "too many queues: at most %d",
                          ZS_SCHED_MAX_QUEUES);
    zs_strlcpy(s->queues[s->nqueues].name, name, ZS_SCHED_QNAME_CAP);
    s->queues[s->nqueues].host = host;
    return s->nqueues++;
}

int32_t zs_schedule_add(struct zs_schedule *s, const struct zs_sched_task *t,
                        const int32_t *deps, int ndeps, struct zs_err *err)
{
    struct zs_sched_task *nt;
    if (s->ntasks >= ZS_SCHED_MAX_TASKS)
        return zs_err_set(err, ZS_ELIMIT, "too many tasks: at most %d",
                          ZS_SCHED_MAX_TASKS);
    if (ndeps < 0 || ndeps > ZS_SCHED_MAX_DEPS)
        return zs_err_set(err, ZS_ELIMIT,
                          "too many deps for task %d: at most %d (got %d)",
                          (int)s->ntasks, ZS_SCHED_MAX_DEPS, ndeps);
    if (zs_grow((void **)&s->tasks, &s->tasks_cap, (size_t)s->ntasks + 1,
                sizeof *s->tasks))
        return zs_err_set(err, ZS_ENOMEM, "out of memory adding a task");
    if (ndeps && zs_grow((void **)&s->deps, &s->deps_cap,
                         s->ndeps + (size_t)ndeps, sizeof *s->deps))
        return zs_err_set(err, ZS_ENOMEM, "out of memory adding a task");
    nt = &s->tasks[s->ntasks];
    *nt = *t;
    nt->id = s->ntasks;
    nt->dep_off = (int32_t)s->ndeps;
    nt->ndeps = ndeps;
    if (ndeps)
        memcpy(s->deps + s->ndeps, deps, (size_t)ndeps * sizeof *deps);
    s->ndeps += (size_t)ndeps;
    return s->ntasks++;
}

/* ---- field tables -------------------------------------------------------- */

/* What the reader fills per task: the task itself plus the fields whose file
 * type differs from the struct's (ids are int64 in JSON tables). */
struct raw_task {
    struct zs_sched_task t;
    int64_t id, buffer, host_buf, dev_buf;
    int kind;
    char queue[ZS_SCHED_QNAME_CAP];
};

#define RT(f) offsetof(struct raw_task, f)
#define TT(f) (offsetof(struct raw_task, t) + offsetof(struct zs_sched_task, f))
#define NS_MAX 1e18 /* 31 years in ns: any finite prediction */
#define ID_MAX ((double)ZS_SCHED_MAX_TASKS - 1)
#define DIM_MAX                                                                \
    67108864.0 /* 2^26: tokens x vocab still fits; larger is a typo */

#define COMMON_FIELDS                                                          \
    {"id", ZS_F_INT, RT(id), 0, ID_MAX, 0, ZS_F_REQUIRED, NULL, 0, NULL},      \
        {"kind", ZS_F_ENUM,     RT(kind),     0, 0,                            \
         0,      ZS_F_REQUIRED, g_kind_names, 0, NULL},                        \
        {"queue",       ZS_F_STRING, RT(queue),          0,   0, 0,            \
         ZS_F_REQUIRED, NULL,        ZS_SCHED_QNAME_CAP, NULL},                \
        {"deps", ZS_F_CUSTOM, 0, 0, 0, 0, 0, NULL, 0, NULL},                   \
        {"name",        ZS_F_STRING, TT(name),          0,   0, 0,             \
         ZS_F_REQUIRED, NULL,        ZS_SCHED_NAME_CAP, NULL},                 \
        {"owner", ZS_F_STRING, TT(owner),         0, 0, 0,                     \
         0,       NULL,        ZS_SCHED_NAME_CAP, ""},                         \
        {"pred_start_ns",                                                      \
         ZS_F_INT,                                                             \
         TT(pred_start_ns),                                                    \
         -1,                                                                   \
         NS_MAX,                                                               \
         -1,                                                                   \
         0,                                                                    \
         NULL,                                                                 \
         0,                                                                    \
         NULL},                                                                \
    {                                                                          \
        "pred_end_ns", ZS_F_INT, TT(pred_end_ns), -1, NS_MAX, -1, 0, NULL, 0,  \
            NULL                                                               \
    }

#define BYTES_FIELD                                                            \
    {                                                                          \
        "bytes", ZS_F_INT, TT(bytes), 1, (double)ZS_BYTES_MAX, 0,              \
            ZS_F_REQUIRED, NULL, 0, NULL                                       \
    }

static const struct zs_field f_alloc[] = {
    COMMON_FIELDS,
    BYTES_FIELD,
    {"pool", ZS_F_ENUM, TT(pool), 0, 0, 0, ZS_F_REQUIRED, g_pool_names, 0,
     NULL},
    {"pinned", ZS_F_BOOL, TT(pinned), 0, 0, 0, 0, NULL, 0, NULL},
};
static const struct zs_field f_free[] = {
    COMMON_FIELDS,
    {"buffer", ZS_F_INT, RT(buffer), 0, ID_MAX, 0, ZS_F_REQUIRED, NULL, 0,
     NULL},
    {"empty_cache", ZS_F_BOOL, TT(empty_cache), 0, 0, 0, 0, NULL, 0, NULL},
};
static const struct zs_field f_copy[] = {
    COMMON_FIELDS,
    BYTES_FIELD,
    {"pinned", ZS_F_BOOL, TT(pinned), 0, 0, 0, 0, NULL, 0, NULL},
    {"host_buf", ZS_F_INT, RT(host_buf), -1, ID_MAX, -1, 0, NULL, 0, NULL},
    {"dev_buf", ZS_F_INT, RT(dev_buf), -1, ID_MAX, -1, 0, NULL, 0, NULL},
};
static const struct zs_field f_gemm[] = {
    COMMON_FIELDS,
    {"m", ZS_F_INT, TT(m), 1, DIM_MAX, 0, ZS_F_REQUIRED, NULL, 0, NULL},
    {"n", ZS_F_INT, TT(n), 1, DIM_MAX, 0, ZS_F_REQUIRED, NULL, 0, NULL},
    {"k", ZS_F_INT, TT(k), 1, DIM_MAX, 0, ZS_F_REQUIRED, NULL, 0, NULL},
    {"count", ZS_F_INT, TT(count), 1, 1048576, 1, 0, NULL, 0, NULL},
};
static const struct zs_field f_elementwise[] = {
    COMMON_FIELDS,
    BYTES_FIELD,
};
static const struct zs_field f_collective[] = {
    COMMON_FIELDS,
    BYTES_FIELD,
    {"op", ZS_F_ENUM, TT(coll), 0, 0, 0, ZS_F_REQUIRED, g_coll_names, 0, NULL},
    {"ranks", ZS_F_INT, TT(ranks), 1, 65536, 0, ZS_F_REQUIRED, NULL, 0, NULL},
    {"local", ZS_F_ENUM, TT(local), 0, 0, 0, 0, g_local_names, 0, NULL},
};
static const struct zs_field f_cpu_adam[] = {
    COMMON_FIELDS,
    /* 2^40 elements = 4 TiB of fp32 master weights: beyond any host. */
    {"elements", ZS_F_INT, TT(elements), 1, 1099511627776.0, 0, ZS_F_REQUIRED,
     NULL, 0, NULL},
    {"threads", ZS_F_INT, TT(threads), 0, 4096, 0, 0, NULL, 0, NULL},
    {"impl", ZS_F_ENUM, TT(adam_impl), 0, 0, 0, 0, g_adam_names, 0, NULL},
    {"bufs", ZS_F_CUSTOM, 0, 0, 0, 0, 0, NULL, 0, NULL},
};
static const struct zs_field f_host_wait[] = {
    COMMON_FIELDS,
};
static const struct zs_field f_mark[] = {
    COMMON_FIELDS,
    /* first step + up to 1000 steady steps (the config's "steps" limit) */
    {"step_end", ZS_F_INT, TT(step_end), 0, 1001, 0, 0, NULL, 0, NULL},
};
static const struct zs_field f_kind_only[] = {
    {"kind", ZS_F_ENUM, RT(kind), 0, 0, 0, ZS_F_REQUIRED, g_kind_names, 0,
     NULL},
};

#define NF(a) (sizeof(a) / sizeof((a)[0]))
static const struct {
    const struct zs_field *f;
    size_t n;
} g_kind_tables[ZS_SK_COUNT] = {
    {f_alloc, NF(f_alloc)},
    {f_free, NF(f_free)},
    {f_copy, NF(f_copy)},
    {f_copy, NF(f_copy)},
    {f_gemm, NF(f_gemm)},
    {f_elementwise, NF(f_elementwise)},
    {f_collective, NF(f_collective)},
    {f_cpu_adam, NF(f_cpu_adam)},
    {f_host_wait, NF(f_host_wait)},
    {f_mark, NF(f_mark)},
};

#define HT(f) offsetof(struct zs_sched_header, f)
const struct zs_field zs_sched_io_f_header[] = {
    {"zsim_version", ZS_F_STRING, HT(zsim_version), 0, 0, 0, ZS_F_REQUIRED,
     NULL, 32, NULL},
    {"model", ZS_F_STRING, HT(model), 0, 0, 0, ZS_F_REQUIRED, NULL, 64, NULL},
    {"hardware", ZS_F_STRING, HT(hardware), 0, 0, 0, ZS_F_REQUIRED, NULL, 64,
     NULL},
    {"gpu", ZS_F_STRING, HT(gpu), 0, 0, 0, 0, NULL, 32, ""},
    {"framework", ZS_F_STRING, HT(framework), 0, 0, 0, 0, NULL, 16, ""},
    {"config", ZS_F_STRING, HT(config), 0, 0, 0, 0, NULL, 256, ""},
    {"rank", ZS_F_INT, HT(rank), 0, 65535, 0, ZS_F_REQUIRED, NULL, 0, NULL},
    {"world", ZS_F_INT, HT(world), 1, 65536, 0, ZS_F_REQUIRED, NULL, 0, NULL},
    {"steps", ZS_F_INT, HT(steps), 1, 1001, 0, ZS_F_REQUIRED, NULL, 0, NULL},
};
const size_t zs_sched_io_n_header = NF(zs_sched_io_f_header);

#define PT(f) offsetof(struct zs_sched_pred, f)
const struct zs_field zs_sched_io_f_pred[] = {
    {"peak_device_allocated_bytes", ZS_F_INT, PT(peak_device_allocated_bytes),
     -1, (double)ZS_BYTES_MAX, -1, ZS_F_NULLABLE, NULL, 0, NULL},
    {"peak_device_reserved_bytes", ZS_F_INT, PT(peak_device_reserved_bytes), -1,
     (double)ZS_BYTES_MAX, -1, ZS_F_NULLABLE, NULL, 0, NULL},
    {"peak_host_bytes", ZS_F_INT, PT(peak_host_bytes), -1, (double)ZS_BYTES_MAX,
     -1, ZS_F_NULLABLE, NULL, 0, NULL},
    {"peak_pinned_bytes", ZS_F_INT, PT(peak_pinned_bytes), -1,
     (double)ZS_BYTES_MAX, -1, ZS_F_NULLABLE, NULL, 0, NULL},
    {"step_time_ns", ZS_F_INT, PT(step_time_ns), -1, NS_MAX, -1, ZS_F_NULLABLE,
     NULL, 0, NULL},
};
const size_t zs_sched_io_n_pred = NF(zs_sched_io_f_pred);

struct raw_queue {
    char name[ZS_SCHED_QNAME_CAP];
    bool host;
};
static const struct zs_field f_queue[] = {
    {"name", ZS_F_STRING, offsetof(struct raw_queue, name), 0, 0, 0,
     ZS_F_REQUIRED, NULL, ZS_SCHED_QNAME_CAP, NULL},
    {"host", ZS_F_BOOL, offsetof(struct raw_queue, host), 0, 0, 0, 0, NULL, 0,
     NULL},
};

struct raw_top {
    char schema[32];
};
static const struct zs_field f_top[] = {
    {"schema", ZS_F_STRING, offsetof(struct raw_top, schema), 0, 0, 0,
     ZS_F_REQUIRED, NULL, 32, NULL},
    ZS_FIELD_CUSTOM("header"),
    ZS_FIELD_CUSTOM("predicted"),
    ZS_FIELD_CUSTOM("queues"),
    ZS_FIELD_CUSTOM("tasks"),
};

/* ---- shared helpers (schedule_io_int.h) --------------------------------- */

/* Offset of the '[' of top-level array `key`, or -1. */
static long find_array(const char *text, const char *key)
{
    size_t klen = strlen(key);
    const char *p = text;
    while ((p = strchr(p, '"')) != NULL) {
        if (strncmp(p + 1, key, klen) == 0 && p[1 + klen] == '"') {
            const char *q = p + 2 + klen;
            while (isspace((unsigned char)*q))
                q++;
            if (*q == ':') {
                q++;
                while (isspace((unsigned char)*q))
                    q++;
                if (*q == '[')
                    return (long)(q - text);
            }
        }
        p++;
    }
    return -1;
}

/* [a, b) of element idx of the array opening at text[open]. */
static int elem_span(const char *text, size_t open, long idx, size_t *a,
                     size_t *b)
{
    long cur = 0;
    int in_str = 0, esc = 0;
    long depth = 0;
    size_t start = (size_t)-1;
    for (size_t i = open + 1; text[i]; i++) {
        char c = text[i];
        if (zs_json_in_string(c, &in_str, &esc))
            continue;
        if (depth == 0 && start == (size_t)-1 && !isspace((unsigned char)c)) {
            if (c == ']')
                return -1;
            start = i;
        }
        if (c == '"') {
            in_str = 1;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (depth == 0) {
                if (cur == idx && start != (size_t)-1) {
                    *a = start;
                    *b = i;
                    return 0;
                }
                return -1;
            }
            depth--;
        } else if (c == ',' && depth == 0) {
            if (cur == idx) {
                *a = start;
                *b = i;
                return 0;
            }
            cur++;
            start = (size_t)-1;
        }
    }
    return -1;
}

int zs_sched_io_mask_elem(struct zs_json_src *src, const char *arr, long idx)
{
    long open;
    size_t a, b;
    if (!src->text)
        return -1;
    open = find_array(src->text, arr);
    if (open < 0 || elem_span(src->text, (size_t)open, idx, &a, &b))
        return -1;
    for (size_t i = 0; i < src->len; i++)
        if ((i < a || i >= b) && src->text[i] != '\n')
            src->text[i] = ' ';
    return 0;
}

int zs_sched_io_read_elem(struct zs_json_src *src, const char *arr, long idx,
                          const cJSON *node, const struct zs_field *fields,
                          size_t nfields, void *dst, unsigned opts,
                          struct zs_err *err)
{
    char path[64];
    int rc;
    snprintf(path, sizeof path, "%s[%ld]", arr, idx);
    rc = zs_json_read(src, node, path, fields, nfields, dst, opts, err);
    if (rc == ZS_EINPUT && zs_sched_io_mask_elem(src, arr, idx) == 0)
        rc = zs_json_read(src, node, path, fields, nfields, dst, opts, err);
    return rc;
}

void zs_sched_io_elem_where(struct zs_json_src *src, const char *arr, long idx,
                            const char *key, char *buf, size_t cap)
{
    long open;
    size_t a = 0, b = 0;
    int line = 1, col = 1;
    if (!src->text || (open = find_array(src->text, arr)) < 0 ||
        elem_span(src->text, (size_t)open, idx, &a, &b)) {
        snprintf(buf, cap, "%s", src->path);
        return;
    }
    zs_sched_io_mask_elem(src, arr, idx);
    zs_json_where(src, "", key, buf, cap);
    if (strcmp(buf, src->path) != 0)
        return;
    /* The key is absent (a default was used): point at the element. */
    for (size_t i = 0; i < a; i++) {
        if (src->text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    snprintf(buf, cap, "%s:%d:%d", src->path, line, col);
}

int zs_sched_io_check_fields(const struct zs_field *fields, size_t n,
                             const void *src, size_t base_off,
                             size_t span_bytes, const char **key, char *why,
                             size_t cap)
{
    const char *base = (const char *)src - base_off;
    for (size_t i = 0; i < n; i++) {
        const struct zs_field *f = &fields[i];
        char lo[40], hi[40], got[40];
        /* Only fields stored inside the checked struct. */
        if (f->offset < base_off || f->offset >= base_off + span_bytes)
            continue;
        zs_json_fmt_num(lo, sizeof lo, f->min);
        zs_json_fmt_num(hi, sizeof hi, f->max);
        if (f->type == ZS_F_INT) {
            int64_t v = *(const int64_t *)(base + f->offset);
            if ((double)v < f->min || (double)v > f->max) {
                zs_json_fmt_num(got, sizeof got, (double)v);
                *key = f->key;
                snprintf(why, cap, "must be an integer in [%s, %s] (got %s)",
                         lo, hi, got);
                return 1;
            }
        } else if (f->type == ZS_F_DOUBLE) {
            double v = *(const double *)(base + f->offset);
            if (!isfinite(v) || v < f->min || v > f->max) {
                zs_json_fmt_num(got, sizeof got, v);
                *key = f->key;
                snprintf(why, cap, "must be a number in [%s, %s] (got %s)", lo,
                         hi, got);
                return 1;
            }
        } else if (f->type == ZS_F_STRING && (f->flags & ZS_F_REQUIRED)) {
            const char *v = base + f->offset;
            if (!v[0]) {
                *key = f->key;
                snprintf(why, cap,
                         "must be a string of 1 to %zu characters (got '')",
                         f->str_cap - 1);
                return 1;
            }
        } else if (f->type == ZS_F_ENUM) {
            int v = *(const int *)(base + f->offset);
            int nch = 0;
            while (f->choices[nch])
                nch++;
            if (v < 0 || v >= nch) {
                *key = f->key;
                snprintf(why, cap, "must be one of %d choices (got index %d)",
                         nch, v);
                return 1;
            }
        }
    }
    return 0;
}

int zs_sched_io_read_top(const struct zs_json_src *src, const cJSON *root,
                         const struct zs_field *fields, size_t n, void *top,
                         size_t schema_off, const char *want,
                         struct zs_err *err)
{
    const char *schema = (const char *)top + schema_off;
    char where[300];
    int rc = zs_json_read(src, root, "", fields, n, top, 0, err);
    if (rc || strcmp(schema, want) == 0)
        return rc;
    zs_json_where(src, "", "schema", where, sizeof where);
    return zs_err_set(err, ZS_EINPUT,
                      "invalid 'schema' in %s: must be \"%s\" (got '%s')",
                      where, want, schema);
}

int zs_sched_io_require(const struct zs_json_src *src, const cJSON *root,
                        const char *const *keys, size_t n, struct zs_err *err)
{
    for (size_t k = 0; k < n; k++)
        if (!cJSON_GetObjectItemCaseSensitive(root, keys[k]))
            return zs_err_set(err, ZS_EINPUT, "missing '%s' in %s: required",
                              keys[k], src->path);
    return 0;
}

int zs_sched_io_array_size(const struct zs_json_src *src, const cJSON *arr,
                           const char *key, int min_n, int max_n, int *n,
                           struct zs_err *err)
{
    char where[300];
    *n = 0;
    if (!cJSON_IsArray(arr)) {
        zs_json_where(src, "", key, where, sizeof where);
        return zs_err_set(err, ZS_EINPUT,
                          "invalid '%s' in %s: must be an array of %s (got %s)",
                          key, where, key, zs_json_type_name(arr));
    }
    *n = cJSON_GetArraySize(arr);
    if (*n >= min_n && *n <= max_n)
        return 0;
    zs_json_where(src, "", key, where, sizeof where);
    if (min_n == 0)
        return zs_err_set(
            err, ZS_EINPUT,
            "invalid '%s' in %s: must list at most %d %s (got %d)", key, where,
            max_n, key, *n);
    return zs_err_set(err, ZS_EINPUT,
                      "invalid '%s' in %s: must list %d to %d %s (got %d)", key,
                      where, min_n, max_n, key, *n);
}

int zs_sched_io_each(const struct zs_json_src *src, const cJSON *arr,
                     const char *key, int min_n, int max_n,
                     int (*fn)(void *ctx, long i, const cJSON *it), void *ctx,
                     struct zs_err *err)
{
    const cJSON *it;
    long i = 0;
    int n, rc = zs_sched_io_array_size(src, arr, key, min_n, max_n, &n, err);
    if (rc)
        return rc;
    cJSON_ArrayForEach(it, arr)
    {
        rc = fn(ctx, i++, it);
        if (rc)
            return rc;
    }
    return 0;
}

int zs_sched_io_read_head(const struct zs_json_src *src, const cJSON *root,
                          const char *const *keys, size_t n,
                          struct zs_sched_header *h, struct zs_err *err)
{
    int rc = zs_sched_io_require(src, root, keys, n, err);
    if (rc)
        return rc;
    return zs_json_read(src, cJSON_GetObjectItemCaseSensitive(root, "header"),
                        "header", zs_sched_io_f_header, zs_sched_io_n_header, h,
                        0, err);
}

int zs_sched_io_read_pred(const struct zs_json_src *src, const cJSON *root,
                          struct zs_sched_pred *p, bool *present,
                          struct zs_err *err)
{
    const cJSON *node = cJSON_GetObjectItemCaseSensitive(root, "predicted");
    *present = node && !cJSON_IsNull(node);
    if (!*present)
        return 0;
    return zs_json_read(src, node, "predicted", zs_sched_io_f_pred,
                        zs_sched_io_n_pred, p, 0, err);
}

int zs_sched_io_read(const char *name, const char *text, size_t len,
                     struct zs_json_src *src,
                     int (*fill)(void *ctx, const cJSON *root),
                     void (*undo)(void *ctx), void *ctx, struct zs_err *err)
{
    char *owned = NULL;
    cJSON *root;
    int rc;
    if (!text) {
        rc = zs_read_file(name, ZS_JSON_MAX_FILE_BYTES, &owned, &len, err);
        if (rc)
            return rc;
        text = owned;
    }
    rc = zs_json_parse_text(name, text, len, &root, src, err);
    zs_free(owned);
    if (rc)
        return rc;
    rc = fill(ctx, root);
    if (rc)
        undo(ctx);
    cJSON_Delete(root);
    zs_json_src_release(src);
    return rc;
}

int zs_sched_io_write(const char *path,
                      int (*put)(const void *doc, FILE *f, struct zs_err *err),
                      const void *doc, struct zs_err *err)
{
    struct zs_afile a;
    int rc = zs_afile_open(&a, NULL, path, err);
    if (rc)
        return rc;
    rc = put(doc, a.f, err);
    if (rc) {
        zs_afile_abort(&a);
        if (rc == ZS_EIO)
            zs_err_prefix(err, "cannot write '%s'", path);
        return rc;
    }
    return zs_afile_commit(&a, err);
}

/* ---- checking ------------------------------------------------------------ */

struct chk {
    int32_t *freed_by; /* per task: the task that freed this alloc, or -1 */
    int64_t step_marks;
};

/* Whether ref names an earlier, live allocation of `pool`; writes why. */
static int bad_ref(const struct zs_schedule *s, const struct chk *c, int32_t i,
                   int64_t ref, int pool, int64_t need_bytes, char *why,
                   size_t cap)
{
    const struct zs_sched_task *b;
    if (ref < 0 || ref >= i) {
        snprintf(why, cap,
                 "must name an earlier alloc task, in [0, %d] (got %lld)",
                 (int)i - 1, (long long)ref);
        return 1;
    }
    b = &s->tasks[ref];
    if (b->kind != ZS_SK_ALLOC) {
        snprintf(why, cap, "must name an alloc task (task %lld is a %s)",
                 (long long)ref, zs_sched_kind_name(b->kind));
        return 1;
    }
    if (b->pool != pool) {
        snprintf(why, cap, "must name a %s buffer (task %lld is a %s buffer)",
                 g_pool_names[pool], (long long)ref, g_pool_names[b->pool]);
        return 1;
    }
    if (c->freed_by[ref] >= 0) {
        snprintf(why, cap, "buffer of task %lld is already freed by task %d",
                 (long long)ref, (int)c->freed_by[ref]);
        return 1;
    }
    if (b->bytes < need_bytes) {
        snprintf(why, cap,
                 "buffer of task %lld holds %lld bytes, fewer than the %lld "
                 "needed",
                 (long long)ref, (long long)b->bytes, (long long)need_bytes);
        return 1;
    }
    return 0;
}

/* The task's queue: one that exists, and of the kind (host or GPU) its kind runs on. */
static int chk_queue(const struct zs_schedule *s, int32_t i, const char **key,
                     char *why, size_t cap)
{
    const struct zs_sched_task *t = &s->tasks[i];
    if (t->queue < 0 || t->queue >= s->nqueues) {
        *key = "queue";
        snprintf(why, cap, "must name a queue (got index %d of %d)", t->queue,
                 s->nqueues);
        return 1;
    }
    if (zs_sched_kind_on_gpu(t->kind) && s->queues[t->queue].host) {
        *key = "queue";
        snprintf(why, cap,
                 "a %s task must run on a GPU stream ('%s' is a host queue)",
                 zs_sched_kind_name(t->kind), s->queues[t->queue].name);
        return 1;
    }
    if (t->kind == ZS_SK_CPU_ADAM && !s->queues[t->queue].host) {
        *key = "queue";
        snprintf(
            why, cap,
            "a cpu_adam task must run on a host queue ('%s' is a GPU stream)",
            s->queues[t->queue].name);
        return 1;
    }
    return 0;
}

/* The task's dependencies: earlier tasks, each once. */
static int chk_deps(const struct zs_schedule *s, int32_t i, const char **key,
                    char *why, size_t cap)
{
    const struct zs_sched_task *t = &s->tasks[i];
    const int32_t *deps = s->deps + t->dep_off;
    if (t->ndeps < 0 || t->ndeps > ZS_SCHED_MAX_DEPS) {
        *key = "deps";
        snprintf(why, cap, "must list at most %d tasks (got %d)",
                 ZS_SCHED_MAX_DEPS, (int)t->ndeps);
        return 1;
    }
    for (int32_t d = 0; d < t->ndeps; d++) {
        if (deps[d] < 0 || deps[d] >= i) {
            *key = "deps";
            if (i == 0)
                snprintf(why, cap, "must be empty for task 0 (got %d)",
                         (int)deps[d]);
            else
                snprintf(why, cap,
                         "must name earlier tasks, in [0, %d] (got %d)",
                         (int)i - 1, (int)deps[d]);
            return 1;
        }
        for (int32_t e = 0; e < d; e++)
            if (deps[e] == deps[d]) {
                *key = "deps";
                snprintf(why, cap, "lists task %d twice", (int)deps[d]);
                return 1;
            }
    }
    return 0;
}

/* The predicted times: both or neither, in order. */
int zs_sched_io_check_times(int64_t start, int64_t end, const char *k_start,
                            const char *k_end, const char **key, char *why,
                            size_t cap)
{
    if ((start < 0) != (end < 0)) {
        *key = start < 0 ? k_end : k_start;
        snprintf(why, cap, "must be -1 when '%s' is -1 (got %lld)",
                 start < 0 ? k_start : k_end,
                 (long long)(start < 0 ? end : start));
        return 1;
    }
    if (end < start) {
        *key = k_end;
        snprintf(why, cap, "must be >= '%s' (%lld) (got %lld)", k_start,
                 (long long)start, (long long)end);
        return 1;
    }
    return 0;
}

/* An alloc: only host buffers can be pinned. */
static int chk_alloc(const struct zs_schedule *s, int32_t i, const char **key,
                     char *why, size_t cap)
{
    const struct zs_sched_task *t = &s->tasks[i];
    if (t->pinned && t->pool != ZS_SP_HOST) {
        *key = "pinned";
        snprintf(why, cap,
                 "only host buffers can be pinned (got true for a device "
                 "buffer)");
        return 1;
    }
    return 0;
}

/* A free: of an earlier alloc, once; records who freed it. */
static int chk_free(const struct zs_schedule *s, struct chk *c, int32_t i,
                    const char **key, char *why, size_t cap)
{
    const struct zs_sched_task *t = &s->tasks[i];
    int32_t b = t->buffer;
    if (b < 0 || b >= i) {
        *key = "buffer";
        snprintf(why, cap,
                 "must name an earlier alloc task, in [0, %d] (got %d)",
                 (int)i - 1, (int)b);
        return 1;
    }
    if (s->tasks[b].kind != ZS_SK_ALLOC) {
        *key = "buffer";
        snprintf(why, cap, "must name an alloc task (task %d is a %s)", (int)b,
                 zs_sched_kind_name(s->tasks[b].kind));
        return 1;
    }
    if (t->empty_cache && s->tasks[b].pool != ZS_SP_DEVICE) {
        *key = "empty_cache";
        snprintf(why, cap, "only after the free of a device buffer (task %d "
                           "is a host alloc)",
                 (int)b);
        return 1;
    }
    if (c->freed_by[b] >= 0) {
        *key = "buffer";
        snprintf(why, cap, "buffer of task %d is already freed by task %d",
                 (int)b, (int)c->freed_by[b]);
        return 1;
    }
    c->freed_by[b] = i;
    return 0;
}

/* A copy (h2d, d2h): its buffers live, large enough, pinned as the host buffer is. */
static int chk_copy(const struct zs_schedule *s, struct chk *c, int32_t i,
                    const char **key, char *why, size_t cap)
{
    const struct zs_sched_task *t = &s->tasks[i];
    if (t->host_buf >= 0) {
        if (bad_ref(s, c, i, t->host_buf, ZS_SP_HOST, t->bytes, why, cap)) {
            *key = "host_buf";
            return 1;
        }
        if (s->tasks[t->host_buf].pinned != t->pinned) {
            *key = "pinned";
            snprintf(why, cap,
                     "must match host buffer task %d (pinned: %s) (got %s)",
                     (int)t->host_buf,
                     s->tasks[t->host_buf].pinned ? "true" : "false",
                     t->pinned ? "true" : "false");
            return 1;
        }
    }
    if (t->dev_buf >= 0 &&
        bad_ref(s, c, i, t->dev_buf, ZS_SP_DEVICE, t->bytes, why, cap)) {
        *key = "dev_buf";
        return 1;
    }
    return 0;
}

/* A CPU Adam step: its four host buffers live and large enough. */
static int chk_cpu_adam(const struct zs_schedule *s, struct chk *c, int32_t i,
                        const char **key, char *why, size_t cap)
{
    const struct zs_sched_task *t = &s->tasks[i];
    for (int j = 0; j < 4; j++)
        if (t->adam_bufs[j] >= 0 &&
            bad_ref(s, c, i, t->adam_bufs[j], ZS_SP_HOST, t->elements * 4, why,
                    cap)) {
            *key = "bufs";
            return 1;
        }
    return 0;
}

/* A mark: step ends in order from 1, at most header.steps. */
static int chk_mark(const struct zs_schedule *s, struct chk *c, int32_t i,
                    const char **key, char *why, size_t cap)
{
    const struct zs_sched_task *t = &s->tasks[i];
    if (t->step_end > 0) {
        if (t->step_end != c->step_marks + 1) {
            *key = "step_end";
            snprintf(why, cap,
                     "must be %lld (steps end in order from 1) (got %lld)",
                     (long long)c->step_marks + 1, (long long)t->step_end);
            return 1;
        }
        if (t->step_end > s->header.steps) {
            *key = "step_end";
            snprintf(why, cap,
                     "must be at most 'header.steps' (%lld) (got %lld)",
                     (long long)s->header.steps, (long long)t->step_end);
            return 1;
        }
        c->step_marks++;
    }
    return 0;
}

/* Checks task i given tasks 0..i-1 (and updates c).  Returns 0, or 1 with the
 * offending key and the reason. */
static int chk_task(const struct zs_schedule *s, struct chk *c, int32_t i,
                    const char **key, char *why, size_t cap)
{
    const struct zs_sched_task *t = &s->tasks[i];
    const struct zs_field *tab;
    size_t ntab;

    c->freed_by[i] = -1;
    if (t->id != i) {
        *key = "id";
        snprintf(why, cap,
                 "must be %d (tasks are numbered in order from 0) (got %d)",
                 (int)i, (int)t->id);
        return 1;
    }
    if ((unsigned)t->kind >= ZS_SK_COUNT) {
        *key = "kind";
        snprintf(why, cap, "must be a task kind (got index %d)", (int)t->kind);
        return 1;
    }
    tab = g_kind_tables[t->kind].f;
    ntab = g_kind_tables[t->kind].n;
    if (zs_sched_io_check_fields(tab, ntab, t, offsetof(struct raw_task, t),
                                 sizeof *t, key, why, cap) ||
        chk_queue(s, i, key, why, cap) || chk_deps(s, i, key, why, cap) ||
        zs_sched_io_check_times(s->tasks[i].pred_start_ns,
                                s->tasks[i].pred_end_ns, "pred_start_ns",
                                "pred_end_ns", key, why, cap))
        return 1;
    switch (t->kind) {
    case ZS_SK_ALLOC:
        return chk_alloc(s, i, key, why, cap);
    case ZS_SK_FREE:
        return chk_free(s, c, i, key, why, cap);
    case ZS_SK_H2D:
    case ZS_SK_D2H:
        return chk_copy(s, c, i, key, why, cap);
    case ZS_SK_CPU_ADAM:
        return chk_cpu_adam(s, c, i, key, why, cap);
    case ZS_SK_MARK:
        return chk_mark(s, c, i, key, why, cap);
    default:
        return 0;
    }
}

static int chk_header(const struct zs_schedule *s, const char **key, char *why,
                      size_t cap)
{
    if (zs_sched_io_check_fields(zs_sched_io_f_header, zs_sched_io_n_header,
                                 &s->header, 0, sizeof s->header, key, why,
                                 cap))
        return 1;
    if (s->header.rank >= s->header.world) {
        *key = "rank";
        snprintf(why, cap, "must be in [0, %lld] ('world' is %lld) (got %lld)",
                 (long long)s->header.world - 1, (long long)s->header.world,
                 (long long)s->header.rank);
        return 1;
    }
    return zs_sched_io_check_fields(zs_sched_io_f_pred, zs_sched_io_n_pred,
                                    &s->pred, 0, sizeof s->pred, key, why, cap)
               ? 2
               : 0;
}

int zs_schedule_check(const struct zs_schedule *s, struct zs_err *err)
{
    struct chk c = {NULL, 0};
    const char *key = "";
    char why[300];
    int rc = 0, h;

    h = chk_header(s, &key, why, sizeof why);
    if (h)
        return zs_err_set(err, ZS_EINPUT, "invalid '%s.%s': %s",
                          h == 1 ? "header" : "predicted", key, why);
    if (s->nqueues < 1)
        return zs_err_set(err, ZS_EINPUT,
                          "invalid 'queues': must list 1 to %d queues (got 0)",
                          ZS_SCHED_MAX_QUEUES);
    c.freed_by = zs_calloc((size_t)s->ntasks + 1, sizeof *c.freed_by);
    if (!c.freed_by)
        return zs_err_set(err, ZS_ENOMEM, "out of memory checking a schedule");
    for (int32_t i = 0; i < s->ntasks; i++) {
        if (chk_task(s, &c, i, &key, why, sizeof why)) {
            rc = zs_err_set(err, ZS_EINPUT, "invalid 'tasks[%d].%s': %s",
                            (int)i, key, why);
            goto out;
        }
    }
    if (c.step_marks && c.step_marks != s->header.steps)
        rc = zs_err_set(err, ZS_EINPUT,
                        "invalid 'tasks': marks end %lld step%s, but "
                        "'header.steps' is %lld",
                        (long long)c.step_marks, c.step_marks == 1 ? "" : "s",
                        (long long)s->header.steps);
out:
    zs_free(c.freed_by);
    return rc;
}

/* ---- reading ------------------------------------------------------------- */

struct rd {
    struct zs_json_src src;
    struct zs_schedule *s;
    struct zs_err *err;
};

/* Message for a problem found by chk_task / an array field, located inside
 * element idx of arr. */
static int elem_problem(struct rd *r, const char *arr, long idx,
                        const char *key, const char *why)
{
    char where[300];
    zs_sched_io_elem_where(&r->src, arr, idx, key, where, sizeof where);
    return zs_err_set(r->err, ZS_EINPUT, "invalid '%s[%ld].%s' in %s: %s", arr,
                      idx, key, where, why);
}

/* Reads an array of task ids (deps, bufs) of element idx. */
static int read_ids(struct rd *r, long idx, const cJSON *node, const char *key,
                    int min_n, int max_n, int32_t *out, int *n)
{
    const cJSON *it;
    char why[200];
    int cnt = 0;
    *n = 0;
    if (!node)
        return 0;
    if (!cJSON_IsArray(node)) {
        snprintf(why, sizeof why, "must be an array of task ids (got %s)",
                 zs_json_type_name(node));
        return elem_problem(r, "tasks", idx, key, why);
    }
    cnt = cJSON_GetArraySize(node);
    if (cnt < min_n || cnt > max_n) {
        if (min_n == max_n)
            snprintf(why, sizeof why, "must list exactly %d task ids (got %d)",
                     min_n, cnt);
        else
            snprintf(why, sizeof why, "must list at most %d tasks (got %d)",
                     max_n, cnt);
        return elem_problem(r, "tasks", idx, key, why);
    }
    cnt = 0;
    cJSON_ArrayForEach(it, node)
    {
        double v = cJSON_IsNumber(it) ? it->valuedouble : NAN;
        if (!isfinite(v) || v != floor(v) || v < -1 || v > ID_MAX) {
            char got[64];
            if (cJSON_IsNumber(it))
                zs_json_fmt_num(got, sizeof got, it->valuedouble);
            else
                snprintf(got, sizeof got, "%s", zs_json_type_name(it));
            snprintf(why, sizeof why,
                     "must be an array of task ids (integers) (got %s)", got);
            return elem_problem(r, "tasks", idx, key, why);
        }
        out[cnt++] = (int32_t)v;
    }
    *n = cnt;
    return 0;
}

/* zs_sched_io_each's fn: queue element i, appended (names unique). */
static int read_queue(void *ctx, long i, const cJSON *it)
{
    struct rd *r = ctx;
    struct raw_queue q;
    char where[300];
    int rc = zs_sched_io_read_elem(&r->src, "queues", i, it, f_queue,
                                   NF(f_queue), &q, 0, r->err);
    if (rc)
        return rc;
    if (zs_schedule_find_queue(r->s, q.name) >= 0) {
        zs_sched_io_elem_where(&r->src, "queues", i, "name", where,
                               sizeof where);
        return zs_err_set(r->err, ZS_EINPUT,
                          "invalid 'queues[%ld].name' in %s: must be "
                          "unique ('%s' is listed twice)",
                          i, where, q.name);
    }
    zs_strlcpy(r->s->queues[r->s->nqueues].name, q.name, ZS_SCHED_QNAME_CAP);
    r->s->queues[r->s->nqueues].host = q.host;
    r->s->nqueues++;
    return 0;
}

/* Element i's fields into *rt: its kind first, then the kind's table, then
 * the deps and (cpu_adam) bufs arrays. */
static int read_task_fields(struct rd *r, long i, const cJSON *it,
                            struct raw_task *rt, int32_t *deps, int *ndeps)
{
    int32_t bufs[4];
    int nbufs = 0, rc;

    memset(rt, 0, sizeof *rt);
    rt->buffer = rt->host_buf = rt->dev_buf = -1;
    rc = zs_sched_io_read_elem(&r->src, "tasks", i, it, f_kind_only,
                               NF(f_kind_only), rt, ZS_JSON_ALLOW_UNKNOWN,
                               r->err);
    if (rc)
        return rc;
    zs_sched_task_init(&rt->t, (enum zs_sched_kind)rt->kind, 0, "");
    rc = zs_sched_io_read_elem(&r->src, "tasks", i, it,
                               g_kind_tables[rt->kind].f,
                               g_kind_tables[rt->kind].n, rt, 0, r->err);
    if (rc)
        return rc;
    rt->t.kind = (enum zs_sched_kind)rt->kind;
    rt->t.id = (int32_t)rt->id;
    rt->t.buffer = (int32_t)rt->buffer;
    rt->t.host_buf = (int32_t)rt->host_buf;
    rt->t.dev_buf = (int32_t)rt->dev_buf;
    rc = read_ids(r, i, cJSON_GetObjectItemCaseSensitive(it, "deps"), "deps", 0,
                  ZS_SCHED_MAX_DEPS, deps, ndeps);
    if (rc || rt->kind != ZS_SK_CPU_ADAM)
        return rc;
    rc = read_ids(r, i, cJSON_GetObjectItemCaseSensitive(it, "bufs"), "bufs", 4,
                  4, bufs, &nbufs);
    if (rc)
        return rc;
    for (int j = 0; j < nbufs; j++)
        rt->t.adam_bufs[j] = bufs[j];
    return 0;
}

/* The queue element i names, as an index into 'queues' (did-you-mean when
 * there is none). */
static int task_queue(struct rd *r, long i, const char *name, int *q)
{
    const char *names[ZS_SCHED_MAX_QUEUES];
    char why[300];
    int best;

    *q = zs_schedule_find_queue(r->s, name);
    if (*q >= 0)
        return 0;
    for (int j = 0; j < r->s->nqueues; j++)
        names[j] = r->s->queues[j].name;
    best = zs_str_closest(name, names, (size_t)r->s->nqueues);
    if (best >= 0)
        snprintf(why, sizeof why, "no queue named '%s': did you mean '%s'?",
                 name, names[best]);
    else
        snprintf(why, sizeof why, "no queue named '%s' in 'queues'", name);
    return elem_problem(r, "tasks", i, "queue", why);
}

/* Element i as a task appended to the schedule and checked against the
 * tasks before it (chk_task). */
static int read_task(struct rd *r, struct chk *c, long i, const cJSON *it)
{
    struct raw_task rt;
    int32_t deps[ZS_SCHED_MAX_DEPS];
    int ndeps = 0, q;
    const char *key = "";
    char why[300];
    int32_t id;
    int rc;

    rc = read_task_fields(r, i, it, &rt, deps, &ndeps);
    if (!rc)
        rc = task_queue(r, i, rt.queue, &q);
    if (rc)
        return rc;
    rt.t.queue = q;
    id = zs_schedule_add(r->s, &rt.t, deps, ndeps, r->err);
    if (id < 0)
        return id;
    /* The file's id is checked, not the position we assigned. */
    r->s->tasks[id].id = rt.t.id;
    if (chk_task(r->s, c, id, &key, why, sizeof why))
        return elem_problem(r, "tasks", i, key, why);
    return 0;
}

static int read_tasks(struct rd *r, const cJSON *arr)
{
    const cJSON *it;
    struct chk c = {NULL, 0};
    char where[300];
    long i = 0;
    int n;
    int rc = zs_sched_io_array_size(&r->src, arr, "tasks", 0,
                                    ZS_SCHED_MAX_TASKS, &n, r->err);
    if (rc)
        return rc;
    c.freed_by = zs_calloc((size_t)n + 1, sizeof *c.freed_by);
    if (!c.freed_by)
        return zs_err_set(r->err, ZS_ENOMEM, "out of memory reading '%s'",
                          r->src.path);
    cJSON_ArrayForEach(it, arr)
    {
        rc = read_task(r, &c, i, it);
        if (rc)
            goto out;
        i++;
    }
    if (c.step_marks && c.step_marks != r->s->header.steps) {
        zs_json_where(&r->src, "", "tasks", where, sizeof where);
        rc = zs_err_set(r->err, ZS_EINPUT,
                        "invalid 'tasks' in %s: marks end %lld step%s, but "
                        "'header.steps' is %lld",
                        where, (long long)c.step_marks,
                        c.step_marks == 1 ? "" : "s",
                        (long long)r->s->header.steps);
    }
out:
    zs_free(c.freed_by);
    return rc;
}

/* zs_sched_io_read's fill. */
static int read_root(void *ctx, const cJSON *root)
{
    static const char *const required[] = {"header", "queues", "tasks"};
    struct rd *r = ctx;
    struct raw_top top;
    char where[300], why[300];
    const char *key = "";
    bool has_pred;
    int rc;

    rc = zs_sched_io_read_top(&r->src, root, f_top, NF(f_top), &top,
                              offsetof(struct raw_top, schema),
                              ZS_SCHEDULE_SCHEMA, r->err);
    if (!rc)
        rc = zs_sched_io_read_head(&r->src, root, required, NF(required),
                                   &r->s->header, r->err);
    if (rc)
        return rc;
    if (chk_header(r->s, &key, why, sizeof why) == 1) {
        zs_json_where(&r->src, "header", key, where, sizeof where);
        return zs_err_set(r->err, ZS_EINPUT, "invalid 'header.%s' in %s: %s",
                          key, where, why);
    }
    rc = zs_sched_io_read_pred(&r->src, root, &r->s->pred, &has_pred, r->err);
    if (!rc)
        rc = zs_sched_io_each(
            &r->src, cJSON_GetObjectItemCaseSensitive(root, "queues"), "queues",
            1, ZS_SCHED_MAX_QUEUES, read_queue, r, r->err);
    if (rc)
        return rc;
    return read_tasks(r, cJSON_GetObjectItemCaseSensitive(root, "tasks"));
}

/* zs_sched_io_read's undo: an empty schedule. */
static void undo(void *ctx)
{
    zs_schedule_release(((struct rd *)ctx)->s);
}

/* A schedule from text, or from the file at name when text is NULL. */
static int read_any(const char *name, const char *text, size_t len,
                    struct zs_schedule *out, struct zs_err *err)
{
    struct rd r = {.s = out, .err = err};
    zs_schedule_init(out);
    return zs_sched_io_read(name, text, len, &r.src, read_root, undo, &r, err);
}

int zs_schedule_read_text(const char *name, const char *text, size_t len,
                          struct zs_schedule *out, struct zs_err *err)
{
    return read_any(name, text, len, out, err);
}

int zs_schedule_read(const char *path, struct zs_schedule *out,
                     struct zs_err *err)
{
    return read_any(path, NULL, 0, out, err);
}

/* ---- writing ------------------------------------------------------------- */

void zs_sched_io_put_fields(FILE *f, const struct zs_field *fields, size_t n,
                            const void *obj)
{
    const char *base = obj;
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        const struct zs_field *fd = &fields[i];
        /* assert: the tables written this way hold strings and integers */
        assert(fd->type == ZS_F_STRING || fd->type == ZS_F_INT);
        if (fd->type == ZS_F_STRING)
            zs_sched_io_put_kv_str(f, fd->key, base + fd->offset, &first);
        else if (fd->type == ZS_F_INT)
            zs_sched_io_put_kv_int(
                f, fd->key, *(const int64_t *)(base + fd->offset), &first);
    }
}

void zs_sched_io_put_header(FILE *f, const struct zs_sched_header *h)
{
    zs_sched_io_put_fields(f, zs_sched_io_f_header, zs_sched_io_n_header, h);
}

void zs_sched_io_put_pred(FILE *f, const struct zs_sched_pred *p)
{
    zs_sched_io_put_fields(f, zs_sched_io_f_pred, zs_sched_io_n_pred, p);
}

void zs_sched_io_put_kv_str(FILE *f, const char *key, const char *v, int *first)
{
    if (!v[0])
        return;
    fprintf(f, "%s\"%s\": ", *first ? "" : ", ", key);
    zs_json_put_str(f, v);
    *first = 0;
}

void zs_sched_io_put_kv_int(FILE *f, const char *key, int64_t v, int *first)
{
    fprintf(f, "%s\"%s\": %lld", *first ? "" : ", ", key, (long long)v);
    *first = 0;
}

static void put_task(FILE *f, const struct zs_schedule *s,
                     const struct zs_sched_task *t)
{
    int first = 1;
    fputc('{', f);
    zs_sched_io_put_kv_int(f, "id", t->id, &first);
    zs_sched_io_put_kv_str(f, "kind", zs_sched_kind_name(t->kind), &first);
    zs_sched_io_put_kv_str(f, "queue", s->queues[t->queue].name, &first);
    fputs(", \"deps\": [", f);
    for (int32_t d = 0; d < t->ndeps; d++)
        fprintf(f, d ? ", %d" : "%d", (int)s->deps[t->dep_off + d]);
    fputc(']', f);
    zs_sched_io_put_kv_str(f, "name", t->name, &first);
    zs_sched_io_put_kv_str(f, "owner", t->owner, &first);
    switch (t->kind) {
    case ZS_SK_ALLOC:
        zs_sched_io_put_kv_str(f, "pool", g_pool_names[t->pool], &first);
        zs_sched_io_put_kv_int(f, "bytes", t->bytes, &first);
        if (t->pool == ZS_SP_HOST)
            fprintf(f, ", \"pinned\": %s", t->pinned ? "true" : "false");
        break;
    case ZS_SK_FREE:
        zs_sched_io_put_kv_int(f, "buffer", t->buffer, &first);
        if (t->empty_cache)
            fputs(", \"empty_cache\": true", f);
        break;
    case ZS_SK_H2D:
    case ZS_SK_D2H:
        zs_sched_io_put_kv_int(f, "bytes", t->bytes, &first);
        fprintf(f, ", \"pinned\": %s", t->pinned ? "true" : "false");
        if (t->host_buf >= 0)
            zs_sched_io_put_kv_int(f, "host_buf", t->host_buf, &first);
        if (t->dev_buf >= 0)
            zs_sched_io_put_kv_int(f, "dev_buf", t->dev_buf, &first);
        break;
    case ZS_SK_GEMM:
        zs_sched_io_put_kv_int(f, "m", t->m, &first);
        zs_sched_io_put_kv_int(f, "n", t->n, &first);
        zs_sched_io_put_kv_int(f, "k", t->k, &first);
        if (t->count != 1)
            zs_sched_io_put_kv_int(f, "count", t->count, &first);
        break;
    case ZS_SK_ELEMENTWISE:
        zs_sched_io_put_kv_int(f, "bytes", t->bytes, &first);
        break;
    case ZS_SK_COLLECTIVE:
        zs_sched_io_put_kv_str(f, "op", g_coll_names[t->coll], &first);
        zs_sched_io_put_kv_int(f, "bytes", t->bytes, &first);
        zs_sched_io_put_kv_int(f, "ranks", t->ranks, &first);
        zs_sched_io_put_kv_str(f, "local", g_local_names[t->local], &first);
        break;
    case ZS_SK_CPU_ADAM:
        zs_sched_io_put_kv_int(f, "elements", t->elements, &first);
        zs_sched_io_put_kv_int(f, "threads", t->threads, &first);
        zs_sched_io_put_kv_str(f, "impl", g_adam_names[t->adam_impl], &first);
        if (t->adam_bufs[0] >= 0 || t->adam_bufs[1] >= 0 ||
            t->adam_bufs[2] >= 0 || t->adam_bufs[3] >= 0)
            fprintf(f, ", \"bufs\": [%d, %d, %d, %d]", (int)t->adam_bufs[0],
                    (int)t->adam_bufs[1], (int)t->adam_bufs[2],
                    (int)t->adam_bufs[3]);
        break;
    case ZS_SK_MARK:
        if (t->step_end > 0)
            zs_sched_io_put_kv_int(f, "step_end", t->step_end, &first);
        break;
    default:
        break;
    }
    zs_sched_io_put_kv_int(f, "pred_start_ns", t->pred_start_ns, &first);
    zs_sched_io_put_kv_int(f, "pred_end_ns", t->pred_end_ns, &first);
    fputc('}', f);
}

int zs_schedule_write_stream(const struct zs_schedule *s, FILE *f,
                             struct zs_err *err)
{
    fprintf(f, "{\n  \"schema\": \"%s\",\n  \"header\": {", ZS_SCHEDULE_SCHEMA);
    zs_sched_io_put_header(f, &s->header);
    fprintf(f, "},\n  \"predicted\": {");
    zs_sched_io_put_pred(f, &s->pred);
    fprintf(f, "},\n  \"queues\": [\n");
    for (int q = 0; q < s->nqueues; q++) {
        fputs("    {\"name\": ", f);
        zs_json_put_str(f, s->queues[q].name);
        fprintf(f, ", \"host\": %s}%s\n", s->queues[q].host ? "true" : "false",
                q + 1 < s->nqueues ? "," : "");
    }
    fprintf(f, "  ],\n  \"tasks\": [\n");
    for (int32_t i = 0; i < s->ntasks; i++) {
        fputs("    ", f);
        put_task(f, s, &s->tasks[i]);
        fputs(i + 1 < s->ntasks ? ",\n" : "\n", f);
    }
    fprintf(f, "  ]\n}\n");
    if (ferror(f))
        return zs_err_set(err, ZS_EIO, "write error: %s", strerror(errno));
    return 0;
}

/* zs_sched_io_write's put. */
static int put_doc(const void *doc, FILE *f, struct zs_err *err)
{
    return zs_schedule_write_stream(doc, f, err);
}

int zs_schedule_write(const struct zs_schedule *s, const char *path,
                      struct zs_err *err)
{
    if (zs_schedule_check(s, err)) {
        err->code = ZS_ERUNTIME;
        zs_err_prefix(err, "internal: refusing to write an invalid schedule");
        return ZS_ERUNTIME;
    }
    return zs_sched_io_write(path, put_doc, s, err);
}

/* ---- steps --------------------------------------------------------------- */

int zs_schedule_step_ends(const struct zs_schedule *s,
                          const int64_t *measured_end_ns, int64_t *ends_ns,
                          int cap)
{
    int n = 0;
    for (int32_t i = 0; i < s->ntasks; i++) {
        const struct zs_sched_task *t = &s->tasks[i];
        int64_t v;
        if (t->kind != ZS_SK_MARK || t->step_end <= 0)
            continue;
        if (t->step_end != n + 1)
            return -1;
        v = measured_end_ns ? measured_end_ns[i] : t->pred_end_ns;
        if (v < 0)
            return -1;
        if (n < cap)
            ends_ns[n] = v;
        n++;
    }
    return n;
}

int64_t zs_sched_steady_step_ns(const int64_t *ends_ns, int n)
{
    if (n < 1)
        return -1;
    if (n == 1)
        return ends_ns[0];
    return (ends_ns[n - 1] - ends_ns[0]) / (n - 1);
}
