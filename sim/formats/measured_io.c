/*
 * measured_io.c — reader and writer of "zsim.measured/1" and the comparison
 * of measurements with predictions; see measured_io.h.
 *
 * The header and predicted blocks use the schedule's tables' rules (same
 * keys, same ranges) so a measured file is a schedule's header plus what was
 * measured.  Tasks use one table for every kind: a measured task is a record,
 * not an instruction, and its kind-specific fields are checked only where the
 * comparison needs them (gemm shape, copy bytes).
 */
#include "formats/measured_io.h"
#include "formats/schedule_io_int.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/strutil.h"
#include "util/units.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

static const char *const g_mkind_names[] = {"harness", "fsdp2_reference", NULL};
static const char *const g_kind_names[] = {
    "alloc",      "free",     "h2d",       "d2h",  "gemm", "elementwise",
    "collective", "cpu_adam", "host_wait", "mark", NULL};
static const char *const g_adam_names[] = {"deepspeed", "torch", NULL};
static const char *const g_vclass_names[] = {
    "gemm", "h2d", "d2h", "collective", "cpu_adam", "elementwise", NULL};

const char *zs_meas_kind_name(int kind)
{
    return kind >= 0 && kind <= ZS_MK_FSDP2_REFERENCE ? g_mkind_names[kind]
                                                      : "?";
}

const char *zs_vclass_name(int cls)
{
    return cls >= 0 && cls < ZS_VC_COUNT ? g_vclass_names[cls] : "?";
}

int zs_vclass_of(enum zs_sched_kind k)
{
    switch (k) {
    case ZS_SK_GEMM:
        return ZS_VC_GEMM;
    case ZS_SK_H2D:
        return ZS_VC_H2D;
    case ZS_SK_D2H:
        return ZS_VC_D2H;
    case ZS_SK_COLLECTIVE:
        return ZS_VC_COLLECTIVE;
    case ZS_SK_CPU_ADAM:
        return ZS_VC_CPU_ADAM;
    case ZS_SK_ELEMENTWISE:
        return ZS_VC_ELEMENTWISE;
    default:
        return -1;
    }
}

void zs_measured_init(struct zs_measured *m)
{
    memset(m, 0, sizeof *m);
    zs_sched_io_pred_init(&m->pred);
    m->meas.peak_device_allocated_bytes = -1;
    m->meas.peak_device_reserved_bytes = -1;
    m->meas.peak_device_used_bytes = -1;
    m->meas.peak_host_bytes = -1;
    m->meas.peak_pinned_bytes = -1;
    m->meas.step_time_ns = -1;
    m->meas.scratch_device_bytes = -1;
}

void zs_measured_release(struct zs_measured *m)
{
    if (!m)
        return;
    zs_free(m->tasks);
    zs_measured_init(m);
}

int zs_measured_add(struct zs_measured *m, const struct zs_meas_task *t,
                    struct zs_err *err)
{
    if (m->ntasks >= ZS_SCHED_MAX_TASKS)
        return zs_err_set(err, ZS_ELIMIT, "too many tasks: at most %d",
                          ZS_SCHED_MAX_TASKS);
    if (zs_grow((void **)&m->tasks, &m->tasks_cap, (size_t)m->ntasks + 1,
                sizeof *m->tasks))
        return zs_err_set(err, ZS_ENOMEM, "out of memory adding a task");
    m->tasks[m->ntasks++] = *t;
    return 0;
}

void zs_meas_task_from_sched(struct zs_meas_task *mt,
                             const struct zs_sched_task *t)
{
    memset(mt, 0, sizeof *mt);
    mt->id = t->id;
    mt->kind = t->kind;
    zs_strlcpy(mt->name, t->name, sizeof mt->name);
    mt->bytes = t->bytes;
    mt->pinned = t->pinned;
    mt->m = t->m;
    mt->n = t->n;
    mt->k = t->k;
    mt->count = t->kind == ZS_SK_GEMM ? t->count : 0;
    mt->elements = t->elements;
    mt->threads = t->threads;
    mt->adam_impl = t->adam_impl;
    mt->step_end = t->step_end;
    mt->pred_start_ns = t->pred_start_ns;
    mt->pred_end_ns = t->pred_end_ns;
    mt->start_ns = mt->end_ns = -1;
}

/* ---- tables -------------------------------------------------------------- */

#define NF(a) (sizeof(a) / sizeof((a)[0]))
#define NS_MAX 1e18
#define ID_MAX ((double)ZS_SCHED_MAX_TASKS - 1)
#define BMAX ((double)ZS_BYTES_MAX)

/* The header and "predicted" tables are the schedule's (schedule_io_int.h). */

#define MT(f) offsetof(struct zs_meas_totals, f)
static const struct zs_field f_meas[] = {
    {"peak_device_allocated_bytes", ZS_F_INT, MT(peak_device_allocated_bytes),
     -1, BMAX, -1, ZS_F_NULLABLE, NULL, 0, NULL},
    {"peak_device_reserved_bytes", ZS_F_INT, MT(peak_device_reserved_bytes), -1,
     BMAX, -1, ZS_F_NULLABLE, NULL, 0, NULL},
    {"peak_device_used_bytes", ZS_F_INT, MT(peak_device_used_bytes), -1, BMAX,
     -1, ZS_F_NULLABLE, NULL, 0, NULL},
    {"peak_host_bytes", ZS_F_INT, MT(peak_host_bytes), -1, BMAX, -1,
     ZS_F_NULLABLE, NULL, 0, NULL},
    {"peak_pinned_bytes", ZS_F_INT, MT(peak_pinned_bytes), -1, BMAX, -1,
     ZS_F_NULLABLE, NULL, 0, NULL},
    {"step_time_ns", ZS_F_INT, MT(step_time_ns), -1, NS_MAX, -1, ZS_F_NULLABLE,
     NULL, 0, NULL},
    {"scratch_device_bytes", ZS_F_INT, MT(scratch_device_bytes), -1, BMAX, -1,
     ZS_F_NULLABLE, NULL, 0, NULL},
};

#define ET(f) offsetof(struct zs_meas_env, f)
static const struct zs_field f_env[] = {
    {"gpu", ZS_F_STRING, ET(gpu), 0, 0, 0, ZS_F_REQUIRED, NULL, 64, NULL},
    {"driver", ZS_F_STRING, ET(driver), 0, 0, 0, 0, NULL, 32, ""},
    {"cuda", ZS_F_STRING, ET(cuda), 0, 0, 0, 0, NULL, 32, ""},
    {"sm_clock_mhz", ZS_F_INT, ET(sm_clock_mhz), 0, 10000, 0, 0, NULL, 0, NULL},
    {"mem_clock_mhz", ZS_F_INT, ET(mem_clock_mhz), 0, 100000, 0, 0, NULL, 0,
     NULL},
    {"host", ZS_F_STRING, ET(host), 0, 0, 0, 0, NULL, 64, ""},
    {"cpu", ZS_F_STRING, ET(cpu), 0, 0, 0, 0, NULL, 96, ""},
    {"cpu_threads", ZS_F_INT, ET(cpu_threads), 0, 65536, 0, 0, NULL, 0, NULL},
    {"date", ZS_F_STRING, ET(date), 0, 0, 0, ZS_F_REQUIRED, NULL, 32, NULL},
    {"allocator", ZS_F_STRING, ET(allocator), 0, 0, 0, 0, NULL, 16, ""},
    {"tool", ZS_F_STRING, ET(tool), 0, 0, 0, 0, NULL, 64, ""},
};

struct raw_mtask {
    struct zs_meas_task t;
    int64_t id;
    int kind;
};
#define RT(f) offsetof(struct raw_mtask, f)
#define TT(f) (offsetof(struct raw_mtask, t) + offsetof(struct zs_meas_task, f))
static const struct zs_field f_task[] = {
    ZS_FIELD("id", ZS_F_INT, RT(id), 0, ID_MAX, 0, ZS_F_REQUIRED),
    {"kind", ZS_F_ENUM, RT(kind), 0, 0, 0, ZS_F_REQUIRED, g_kind_names, 0,
     NULL},
    {"name", ZS_F_STRING, TT(name), 0, 0, 0, ZS_F_REQUIRED, NULL,
     ZS_SCHED_NAME_CAP, NULL},
    ZS_FIELD("bytes", ZS_F_INT, TT(bytes), 0, BMAX, 0, 0),
    ZS_FIELD("pinned", ZS_F_BOOL, TT(pinned), 0, 0, 0, 0),
    ZS_FIELD("m", ZS_F_INT, TT(m), 0, 67108864.0, 0, 0),
    ZS_FIELD("n", ZS_F_INT, TT(n), 0, 67108864.0, 0, 0),
    ZS_FIELD("k", ZS_F_INT, TT(k), 0, 67108864.0, 0, 0),
    ZS_FIELD("count", ZS_F_INT, TT(count), 0, 1048576, 0, 0),
    ZS_FIELD("elements", ZS_F_INT, TT(elements), 0, 1099511627776.0, 0, 0),
    ZS_FIELD("threads", ZS_F_INT, TT(threads), 0, 4096, 0, 0),
    {"impl", ZS_F_ENUM, TT(adam_impl), 0, 0, 0, 0, g_adam_names, 0, NULL},
    /* first step + up to 1000 steady steps (the config's "steps" limit) */
    ZS_FIELD("step_end", ZS_F_INT, TT(step_end), 0, 1001, 0, 0),
    ZS_FIELD("skipped", ZS_F_BOOL, TT(skipped), 0, 0, 0, 0),
    ZS_FIELD("pred_start_ns", ZS_F_INT, TT(pred_start_ns), -1, NS_MAX, -1, 0),
    ZS_FIELD("pred_end_ns", ZS_F_INT, TT(pred_end_ns), -1, NS_MAX, -1, 0),
    ZS_FIELD("start_ns", ZS_F_INT, TT(start_ns), -1, NS_MAX, -1, 0),
    ZS_FIELD("end_ns", ZS_F_INT, TT(end_ns), -1, NS_MAX, -1, 0),
};

struct raw_top {
    char schema[32];
    int kind;
};
static const struct zs_field f_top[] = {
    {"schema", ZS_F_STRING, offsetof(struct raw_top, schema), 0, 0, 0,
     ZS_F_REQUIRED, NULL, 32, NULL},
    {"kind", ZS_F_ENUM, offsetof(struct raw_top, kind), 0, 0, 0, ZS_F_REQUIRED,
     g_mkind_names, 0, NULL},
    ZS_FIELD_CUSTOM("header"),
    ZS_FIELD_CUSTOM("environment"),
    ZS_FIELD_CUSTOM("predicted"),
    ZS_FIELD_CUSTOM("measured"),
    ZS_FIELD_CUSTOM("tasks"),
};

/* ---- reading ------------------------------------------------------------- */

struct rd {
    struct zs_json_src src;
    struct zs_measured *m;
    struct zs_err *err;
};

static int task_problem(struct rd *r, long idx, const char *key,
                        const char *why)
{
    char where[300];
    zs_sched_io_elem_where(&r->src, "tasks", idx, key, where, sizeof where);
    return zs_err_set(r->err, ZS_EINPUT, "invalid 'tasks[%ld].%s' in %s: %s",
                      idx, key, where, why);
}

/* The sizes a task of its kind needs: a GEMM's dimensions, a copy's,
 * element-wise kernel's or collective's bytes, a CPU Adam step's elements. */
static int check_task_sizes(struct rd *r, long i, const struct zs_meas_task *t)
{
    char why[200];
    if (t->kind == ZS_SK_GEMM) {
        static const char *const dims[] = {"m", "n", "k", "count"};
        const int64_t v[] = {t->m, t->n, t->k, t->count};
        for (int d = 0; d < 4; d++)
            if (v[d] < 1) {
                snprintf(why, sizeof why,
                         "must be >= 1 for a gemm task (got %lld)",
                         (long long)v[d]);
                return task_problem(r, i, dims[d], why);
            }
    }
    if ((t->kind == ZS_SK_H2D || t->kind == ZS_SK_D2H ||
         t->kind == ZS_SK_ELEMENTWISE || t->kind == ZS_SK_COLLECTIVE) &&
        t->bytes < 1) {
        snprintf(why, sizeof why, "must be >= 1 for a %s task (got %lld)",
                 zs_sched_kind_name(t->kind), (long long)t->bytes);
        return task_problem(r, i, "bytes", why);
    }
    if (t->kind == ZS_SK_CPU_ADAM && t->elements < 1) {
        snprintf(why, sizeof why, "must be >= 1 for a cpu_adam task (got %lld)",
                 (long long)t->elements);
        return task_problem(r, i, "elements", why);
    }
    return 0;
}

/* The measured and the predicted start/end pairs (zs_sched_io_check_times). */
static int check_task_times(struct rd *r, long i, const struct zs_meas_task *t)
{
    const char *key;
    char why[200];
    if (zs_sched_io_check_times(t->start_ns, t->end_ns, "start_ns", "end_ns",
                                &key, why, sizeof why) ||
        zs_sched_io_check_times(t->pred_start_ns, t->pred_end_ns,
                                "pred_start_ns", "pred_end_ns", &key, why,
                                sizeof why))
        return task_problem(r, i, key, why);
    return 0;
}

/* zs_sched_io_each's fn: task element i, checked and appended (ids
 * increasing). */
static int read_task(void *ctx, long i, const cJSON *it)
{
    struct rd *r = ctx;
    struct raw_mtask rt;
    struct zs_meas_task *t = &rt.t;
    char why[200];
    int rc;

    memset(&rt, 0, sizeof rt);
    rc = zs_sched_io_read_elem(&r->src, "tasks", i, it, f_task, NF(f_task), &rt,
                               0, r->err);
    if (rc)
        return rc;
    t->id = (int32_t)rt.id;
    t->kind = (enum zs_sched_kind)rt.kind;
    if (i > 0 && t->id <= r->m->tasks[i - 1].id) {
        snprintf(why, sizeof why,
                 "must be greater than the previous task's (%d) (got %d)",
                 (int)r->m->tasks[i - 1].id, (int)t->id);
        return task_problem(r, i, "id", why);
    }
    rc = check_task_sizes(r, i, t);
    if (!rc)
        rc = check_task_times(r, i, t);
    if (rc)
        return rc;
    if (t->skipped && t->start_ns >= 0) {
        snprintf(why, sizeof why, "must be -1 for a skipped task (got %lld)",
                 (long long)t->start_ns);
        return task_problem(r, i, "start_ns", why);
    }
    return zs_measured_add(r->m, t, r->err);
}

/* The top level: schema and kind, then the header (rank below world). */
static int read_top(struct rd *r, const cJSON *root)
{
    static const char *const required[] = {"header", "environment", "measured",
                                           "tasks"};
    struct raw_top top;
    char where[300];
    int rc;

    rc = zs_sched_io_read_top(&r->src, root, f_top, NF(f_top), &top,
                              offsetof(struct raw_top, schema),
                              ZS_MEASURED_SCHEMA, r->err);
    if (rc)
        return rc;
    r->m->kind = top.kind;
    rc = zs_sched_io_read_head(&r->src, root, required, NF(required),
                               &r->m->header, r->err);
    if (rc)
        return rc;
    if (r->m->header.rank >= r->m->header.world) {
        zs_json_where(&r->src, "header", "rank", where, sizeof where);
        return zs_err_set(r->err, ZS_EINPUT,
                          "invalid 'header.rank' in %s: must be in [0, %lld] "
                          "('world' is %lld) (got %lld)",
                          where, (long long)r->m->header.world - 1,
                          (long long)r->m->header.world,
                          (long long)r->m->header.rank);
    }
    return 0;
}

/* zs_sched_io_read's fill. */
static int read_root(void *ctx, const cJSON *root)
{
    struct rd *r = ctx;
    int rc = read_top(r, root);
    if (!rc)
        rc = zs_json_read(
            &r->src, cJSON_GetObjectItemCaseSensitive(root, "environment"),
            "environment", f_env, NF(f_env), &r->m->env, 0, r->err);
    if (!rc)
        rc = zs_sched_io_read_pred(&r->src, root, &r->m->pred, &r->m->has_pred,
                                   r->err);
    if (!rc)
        rc = zs_json_read(
            &r->src, cJSON_GetObjectItemCaseSensitive(root, "measured"),
            "measured", f_meas, NF(f_meas), &r->m->meas, 0, r->err);
    if (rc)
        return rc;
    return zs_sched_io_each(
        &r->src, cJSON_GetObjectItemCaseSensitive(root, "tasks"), "tasks", 0,
        ZS_SCHED_MAX_TASKS, read_task, r, r->err);
}

/* zs_sched_io_read's undo: no measurements. */
static void undo(void *ctx)
{
    zs_measured_release(((struct rd *)ctx)->m);
}

/* A measured file from text, or from the file at name when text is NULL. */
static int read_any(const char *name, const char *text, size_t len,
                    struct zs_measured *out, struct zs_err *err)
{
    struct rd r = {.m = out, .err = err};
    zs_measured_init(out);
    return zs_sched_io_read(name, text, len, &r.src, read_root, undo, &r, err);
}

int zs_measured_read_text(const char *name, const char *text, size_t len,
                          struct zs_measured *out, struct zs_err *err)
{
    return read_any(name, text, len, out, err);
}

int zs_measured_read(const char *path, struct zs_measured *out,
                     struct zs_err *err)
{
    return read_any(path, NULL, 0, out, err);
}

/* ---- writing ------------------------------------------------------------- */

/* One task's members: the kind's sizes, then the four times. */
static void put_task(FILE *f, const struct zs_meas_task *t)
{
    int first = 1;
    zs_sched_io_put_kv_int(f, "id", t->id, &first);
    zs_sched_io_put_kv_str(f, "kind", zs_sched_kind_name(t->kind), &first);
    zs_sched_io_put_kv_str(f, "name", t->name, &first);
    if (t->bytes)
        zs_sched_io_put_kv_int(f, "bytes", t->bytes, &first);
    if (t->kind == ZS_SK_H2D || t->kind == ZS_SK_D2H ||
        (t->kind == ZS_SK_ALLOC && t->pinned))
        fprintf(f, ", \"pinned\": %s", t->pinned ? "true" : "false");
    if (t->kind == ZS_SK_GEMM) {
        zs_sched_io_put_kv_int(f, "m", t->m, &first);
        zs_sched_io_put_kv_int(f, "n", t->n, &first);
        zs_sched_io_put_kv_int(f, "k", t->k, &first);
        zs_sched_io_put_kv_int(f, "count", t->count, &first);
    }
    if (t->elements)
        zs_sched_io_put_kv_int(f, "elements", t->elements, &first);
    if (t->kind == ZS_SK_CPU_ADAM) {
        zs_sched_io_put_kv_int(f, "threads", t->threads, &first);
        zs_sched_io_put_kv_str(f, "impl", g_adam_names[t->adam_impl], &first);
    }
    if (t->step_end)
        zs_sched_io_put_kv_int(f, "step_end", t->step_end, &first);
    if (t->skipped)
        fputs(", \"skipped\": true", f);
    zs_sched_io_put_kv_int(f, "pred_start_ns", t->pred_start_ns, &first);
    zs_sched_io_put_kv_int(f, "pred_end_ns", t->pred_end_ns, &first);
    zs_sched_io_put_kv_int(f, "start_ns", t->start_ns, &first);
    zs_sched_io_put_kv_int(f, "end_ns", t->end_ns, &first);
}

int zs_measured_write_stream(const struct zs_measured *m, FILE *f,
                             struct zs_err *err)
{
    fprintf(f, "{\n  \"schema\": \"%s\",\n  \"kind\": \"%s\",\n  \"header\": {",
            ZS_MEASURED_SCHEMA, zs_meas_kind_name(m->kind));
    zs_sched_io_put_header(f, &m->header);
    fputs("},\n  \"environment\": {", f);
    zs_sched_io_put_fields(f, f_env, NF(f_env), &m->env);
    fputs("},\n  \"predicted\": ", f);
    if (m->has_pred) {
        fputc('{', f);
        zs_sched_io_put_pred(f, &m->pred);
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    fputs(",\n  \"measured\": {", f);
    zs_sched_io_put_fields(f, f_meas, NF(f_meas), &m->meas);
    fputs("},\n  \"tasks\": [\n", f);
    for (int32_t i = 0; i < m->ntasks; i++) {
        fputs("    {", f);
        put_task(f, &m->tasks[i]);
        fputs(i + 1 < m->ntasks ? "},\n" : "}\n", f);
    }
    fputs("  ]\n}\n", f);
    if (ferror(f))
        return zs_err_set(err, ZS_EIO, "write error: %s", strerror(errno));
    return 0;
}

/* zs_sched_io_write's put. */
static int put_doc(const void *doc, FILE *f, struct zs_err *err)
{
    return zs_measured_write_stream(doc, f, err);
}

int zs_measured_write(const struct zs_measured *m, const char *path,
                      struct zs_err *err)
{
    return zs_sched_io_write(path, put_doc, m, err);
}

/* ---- comparison ---------------------------------------------------------- */

static double err_pct(double pred, double meas)
{
    if (pred < 0 || meas <= 0)
        return NAN;
    return (pred - meas) / meas * 100.0;
}

static void add_q(struct zs_validation *v, const char *key, const char *label,
                  int unit, double pred, double meas, double limit)
{
    struct zs_vquant *q;
    /* the quantities are a fixed list in zs_validate; ZS_VQ_MAX holds it */
    assert(v->nq < ZS_VQ_MAX);
    if (v->nq >= ZS_VQ_MAX)
        return;
    q = &v->q[v->nq++];
    q->key = key;
    q->label = label;
    q->unit = unit;
    q->pred = pred;
    q->meas = meas;
    q->err_pct = err_pct(pred, meas);
    q->limit_pct = limit;
    q->ok = !(limit > 0 && isfinite(q->err_pct) && fabs(q->err_pct) > limit);
    if (!q->ok)
        v->ok = false;
}

/* Per-class and total summed durations of the tasks timed on both sides;
 * skipped and unpredicted ones are counted apart. */
static void tally_tasks(const struct zs_measured *m, struct zs_validation *v)
{
    for (int32_t i = 0; i < m->ntasks; i++) {
        const struct zs_meas_task *t = &m->tasks[i];
        int c = zs_vclass_of(t->kind);
        struct zs_vclass_row *row;
        double ps, ms;
        if (c < 0)
            continue;
        if (t->skipped) {
            v->skipped++;
            continue;
        }
        if (t->start_ns < 0)
            continue;
        if (t->pred_start_ns < 0) {
            v->unpredicted++;
            continue;
        }
        ps = (double)(t->pred_end_ns - t->pred_start_ns) / 1e9;
        ms = (double)(t->end_ns - t->start_ns) / 1e9;
        row = &v->cls[c];
        row->tasks++;
        row->pred_s += ps;
        row->meas_s += ms;
        if (c == ZS_VC_GEMM)
            row->flops += 2.0 * (double)t->m * (double)t->n * (double)t->k *
                          (double)t->count;
        else
            row->bytes += (double)t->bytes;
        v->total.tasks++;
        v->total.pred_s += ps;
        v->total.meas_s += ms;
    }
    for (int c = 0; c < ZS_VC_COUNT; c++)
        v->cls[c].err_pct = err_pct(v->cls[c].pred_s, v->cls[c].meas_s);
    v->total.err_pct = err_pct(v->total.pred_s, v->total.meas_s);
}

/* A predicted total, or -1 (unknown) when the file has no predictions. */
static double pred_of(const struct zs_measured *m, int64_t v)
{
    return m->has_pred ? (double)v : -1;
}

/* The peaks and the step time, gated by the two limits. */
static void add_totals(const struct zs_measured *m, double max_mem_err_pct,
                       double max_time_err_pct, struct zs_validation *v)
{
    const struct zs_sched_pred *p = &m->pred;
    const struct zs_meas_totals *x = &m->meas;
    add_q(v, "peak_device_allocated_bytes", "peak device allocated", 0,
          pred_of(m, p->peak_device_allocated_bytes),
          (double)x->peak_device_allocated_bytes, max_mem_err_pct);
    add_q(v, "peak_device_reserved_bytes", "peak device reserved", 0,
          pred_of(m, p->peak_device_reserved_bytes),
          (double)x->peak_device_reserved_bytes, max_mem_err_pct);
    add_q(v, "peak_host_bytes", "peak host", 0, pred_of(m, p->peak_host_bytes),
          (double)x->peak_host_bytes, max_mem_err_pct);
    add_q(v, "peak_pinned_bytes", "peak pinned", 0,
          pred_of(m, p->peak_pinned_bytes), (double)x->peak_pinned_bytes, 0);
    add_q(v, "step_time_ns", "step time", 1, pred_of(m, p->step_time_ns),
          (double)x->step_time_ns, max_time_err_pct);
}

/* A rate of class c: bytes (FLOPs for gemm) over the summed durations of
 * the same tasks, when both sides timed some. */
static void add_rate(struct zs_validation *v, int c, const char *key,
                     const char *label, int unit)
{
    const struct zs_vclass_row *row = &v->cls[c];
    double amount = c == ZS_VC_GEMM ? row->flops : row->bytes;
    if (row->pred_s > 0 && row->meas_s > 0)
        add_q(v, key, label, unit, amount / row->pred_s, amount / row->meas_s,
              0);
}

void zs_validation_compute(const struct zs_measured *m, double max_mem_err_pct,
                           double max_time_err_pct, struct zs_validation *v)
{
    memset(v, 0, sizeof *v);
    v->ok = true;
    tally_tasks(m, v);
    add_totals(m, max_mem_err_pct, max_time_err_pct, v);
    add_rate(v, ZS_VC_H2D, "h2d_bytes_per_s", "h2d bandwidth", 2);
    add_rate(v, ZS_VC_D2H, "d2h_bytes_per_s", "d2h bandwidth", 2);
    add_rate(v, ZS_VC_GEMM, "gemm_flops_per_s", "gemm throughput", 3);
}
