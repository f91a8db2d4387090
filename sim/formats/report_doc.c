/*
 * report_doc.c — reads simulate/plan JSON documents; see report_doc.h.
 *
 * Tables of struct zs_field check every figure's type and range, so a
 * malformed document is reported with its location like any input file.
 * Unknown keys are accepted (ZS_JSON_ALLOW_UNKNOWN): the documents grow
 * under a fixed schema name, and the store must keep recording them.
 * Cost: one cJSON parse, linear in the document.
 */
#include "formats/report_doc.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/strutil.h"
#include "util/units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const zs_verdict_names[] = {"fits",      "gpu_oom", "host_oom",
                                        "none_fits", "unknown", NULL};
/* What a simulate document or a plan candidate may say. */
static const char *const g_doc_verdicts[] = {"fits", "gpu_oom", "host_oom",
                                             NULL};
static const char *const g_schemas[] = {"zsim.simulate/1", "zsim.plan/1", NULL};

const struct zs_metric_info zs_metric_infos[ZS_M_COUNT] = {
    {"peak_gpu_allocated_bytes", "peak GPU allocated", 0, 1},
    {"peak_gpu_reserved_bytes", "peak GPU reserved", 0, 1},
    {"peak_host_bytes_per_node", "peak host per node", 0, 1},
    {"step_time_s", "step time", 0, 0},
    {"tokens_per_s_per_gpu", "tokens/s per GPU", 1, 0},
};

int zs_metric_find(const char *name)
{
    for (int i = 0; i < ZS_M_COUNT; i++)
        if (strcmp(zs_metric_infos[i].name, name) == 0)
            return i;
    return -1;
}

#define BYTES_MAX ((double)ZS_BYTES_MAX) /* 1 PiB: zsim's largest size */
#define SECONDS_MAX 1e12
#define F_OPT (ZS_F_NULLABLE)

/* An optional figure whose key is its member's name: a size in bytes
 * (ZS_F_BYTES, -1 when absent) or a duration in seconds (0 when absent). */
#define OPT_BYTES(type, member)                                                \
    ZS_FIELD(#member, ZS_F_BYTES, offsetof(type, member), 0, BYTES_MAX, -1,    \
             F_OPT)
#define OPT_SECONDS(type, member)                                              \
    ZS_FIELD(#member, ZS_F_DOUBLE, offsetof(type, member), 0, SECONDS_MAX, 0,  \
             F_OPT)

static const struct zs_field g_step_fields[] = {
    {"time_s", ZS_F_DOUBLE, offsetof(struct zs_rstep, time_s), 0, SECONDS_MAX,
     NAN, F_OPT, NULL, 0, NULL},
    {"tokens_per_s_per_gpu", ZS_F_DOUBLE,
     offsetof(struct zs_rstep, tokens_per_s_per_gpu), 0, 1e15, NAN, F_OPT, NULL,
     0, NULL},
    {"mfu", ZS_F_DOUBLE, offsetof(struct zs_rstep, mfu), 0, 10, NAN, F_OPT,
     NULL, 0, NULL},
    OPT_BYTES(struct zs_rstep, peak_gpu_allocated_bytes),
    OPT_BYTES(struct zs_rstep, peak_gpu_reserved_bytes),
    OPT_BYTES(struct zs_rstep, peak_host_bytes_per_node),
    OPT_BYTES(struct zs_rstep, pinned_host_bytes_per_node),
    ZS_FIELD_CUSTOM("bottleneck"),
    ZS_FIELD_CUSTOM("breakdown_s"),
};

static const struct zs_field g_breakdown_fields[] = {
    OPT_SECONDS(struct zs_rbreakdown, compute),
    OPT_SECONDS(struct zs_rbreakdown, exposed_collective),
    OPT_SECONDS(struct zs_rbreakdown, exposed_pcie),
    OPT_SECONDS(struct zs_rbreakdown, optimizer),
    OPT_SECONDS(struct zs_rbreakdown, other),
    /* simulate writes it only under NVMe optimizer offload (simout.c) */
    OPT_SECONDS(struct zs_rbreakdown, exposed_nvme),
};

static const struct zs_field g_oom_fields[] = {
    ZS_FIELD_CUSTOM("where"),
    ZS_FIELD_CUSTOM("phase"),
    ZS_FIELD_CUSTOM("module"),
    {"step", ZS_F_INT, offsetof(struct zs_room, step), -1, 1e15, -1, F_OPT,
     NULL, 0, NULL},
    OPT_BYTES(struct zs_room, needed_bytes),
    {"available_bytes", ZS_F_INT, offsetof(struct zs_room, available_bytes),
     -BYTES_MAX, BYTES_MAX, -1, F_OPT, NULL, 0, NULL},
};

static const struct zs_field g_run_fields[] = {
    {"steps_per_epoch", ZS_F_INT, offsetof(struct zs_rrun, steps_per_epoch), 0,
     1e15, -1, F_OPT, NULL, 0, NULL},
    {"steps_total", ZS_F_INT, offsetof(struct zs_rrun, steps_total), 0, 1e15,
     -1, F_OPT, NULL, 0, NULL},
    {"wall_s", ZS_F_DOUBLE, offsetof(struct zs_rrun, wall_s), 0, 1e15, NAN,
     F_OPT, NULL, 0, NULL},
    {"gpu_hours", ZS_F_DOUBLE, offsetof(struct zs_rrun, gpu_hours), 0, 1e15,
     NAN, F_OPT, NULL, 0, NULL},
    OPT_BYTES(struct zs_rrun, peak_host_bytes_per_node),
    OPT_BYTES(struct zs_rrun, peak_gpu_allocated_bytes),
    ZS_FIELD_CUSTOM("host_oom"),
};

struct host_oom {
    int64_t epoch, step;
    char phase[64];
};
static const struct zs_field g_host_oom_fields[] = {
    {"epoch", ZS_F_INT, offsetof(struct host_oom, epoch), 0, 1e15, -1, F_OPT,
     NULL, 0, NULL},
    {"step", ZS_F_INT, offsetof(struct host_oom, step), -1, 1e15, -1, F_OPT,
     NULL, 0, NULL},
    {"phase", ZS_F_CUSTOM, 0, 0, 0, 0, 0, NULL, 0, NULL},
};

struct ds_est {
    int64_t gpu_bytes, host_bytes_per_node;
};
static const struct zs_field g_ds_fields[] = {
    OPT_BYTES(struct ds_est, gpu_bytes),
    OPT_BYTES(struct ds_est, host_bytes_per_node),
};

struct top {
    int schema, verdict;
    int64_t searched;
    double elapsed_s;
};
static const struct zs_field g_top_fields[] = {
    {"schema", ZS_F_ENUM, offsetof(struct top, schema), 0, 0, 0, ZS_F_REQUIRED,
     g_schemas, 0, NULL},
    {"verdict", ZS_F_ENUM, offsetof(struct top, verdict), 0, 0,
     ZS_VERDICT_UNKNOWN, F_OPT, g_doc_verdicts, 0, NULL},
    {"searched", ZS_F_INT, offsetof(struct top, searched), 0, 1e12, -1, F_OPT,
     NULL, 0, NULL},
    {"elapsed_s", ZS_F_DOUBLE, offsetof(struct top, elapsed_s), 0, SECONDS_MAX,
     NAN, F_OPT, NULL, 0, NULL},
};

struct cand_top {
    int verdict;
    char reason[160];
};
static const struct zs_field g_cand_fields[] = {
    {"verdict", ZS_F_ENUM, offsetof(struct cand_top, verdict), 0, 0,
     ZS_VERDICT_UNKNOWN, F_OPT, g_doc_verdicts, 0, NULL},
    /* Reasons are free text; longer ones are cut rather than refused. */
    {"reason", ZS_F_CUSTOM, 0, 0, 0, 0, 0, NULL, 0, NULL},
};

#define NF(t) (sizeof(t) / sizeof((t)[0]))

/* Free-text members (names, phases, reasons) are copied when they are
 * strings, cut to the buffer, and otherwise left empty: they label figures
 * and are never worth refusing a run over. */
static void copy_str(const cJSON *obj, const char *key, char *buf, size_t cap)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(obj, key);
    buf[0] = '\0';
    if (cJSON_IsString(o))
        zs_strlcpy(buf, o->valuestring, cap);
}

/* Reads an optional object member; absent or null leaves *present false. */
static int read_obj(const struct zs_json_src *src, const cJSON *parent,
                    const char *key, const char *path,
                    const struct zs_field *fields, size_t n, void *dst,
                    bool *present, struct zs_err *err)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(parent, key);
    zs_json_defaults(fields, n, dst);
    if (present)
        *present = false;
    if (!o || cJSON_IsNull(o))
        return 0;
    if (zs_json_read(src, o, path, fields, n, dst, ZS_JSON_ALLOW_UNKNOWN, err))
        return err->code;
    if (present)
        *present = true;
    return 0;
}

static int read_step(const struct zs_json_src *src, const cJSON *parent,
                     const char *key, const char *path, struct zs_rstep *st,
                     struct zs_err *err)
{
    char sub[160];
    const cJSON *o;
    int rc;

    memset(st, 0, sizeof *st);
    rc = read_obj(src, parent, key, path, g_step_fields, NF(g_step_fields), st,
                  &st->present, err);
    if (rc || !st->present)
        return rc;
    o = cJSON_GetObjectItemCaseSensitive(parent, key);
    copy_str(o, "bottleneck", st->bottleneck, sizeof st->bottleneck);
    snprintf(sub, sizeof sub, "%s.breakdown_s", path);
    return read_obj(src, o, "breakdown_s", sub, g_breakdown_fields,
                    NF(g_breakdown_fields), &st->breakdown, &st->has_breakdown,
                    err);
}

/* "model" and "hardware" may be a name or an object with a "name" (or,
 * for hardware, the "spec" it was resolved from). */
static void read_name(const cJSON *root, const char *key, char *buf, size_t cap)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, key);
    buf[0] = '\0';
    if (cJSON_IsString(o)) {
        zs_strlcpy(buf, o->valuestring, cap);
    } else if (cJSON_IsObject(o)) {
        copy_str(o, "name", buf, cap);
        if (!buf[0])
            copy_str(o, "spec", buf, cap);
    }
}

static int dup_json(const cJSON *o, char **out, struct zs_err *err)
{
    *out = NULL;
    if (!o || cJSON_IsNull(o))
        return 0;
    *out = cJSON_PrintUnformatted(o);
    if (!*out)
        return zs_err_set(err, ZS_ENOMEM, "out of memory copying a document");
    return 0;
}

/* timeline.gpu / timeline.host: arrays of [t_s, bytes...] rows of width w. */
static int read_series(const struct zs_json_src *src, const cJSON *tl,
                       const char *key, int w, const char *shape, double **out,
                       size_t *n, struct zs_err *err)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(tl, key), *row;
    char where[300];
    size_t i = 0, cnt;

    *out = NULL;
    *n = 0;
    if (!a || cJSON_IsNull(a))
        return 0;
    zs_json_where(src, "timeline", key, where, sizeof where);
    if (!cJSON_IsArray(a))
        return zs_err_set(err, ZS_EINPUT,
                          "invalid 'timeline.%s' in %s: must be an array of "
                          "%s (got %s)",
                          key, where, shape, zs_json_type_name(a));
    cnt = (size_t)cJSON_GetArraySize(a);
    if (cnt == 0)
        return 0;
    *out = zs_calloc(cnt * (size_t)w, sizeof(double));
    if (!*out)
        return zs_err_set(err, ZS_ENOMEM, "out of memory reading '%s'",
                          src->path);
    cJSON_ArrayForEach(row, a)
    {
        const cJSON *x;
        int k = 0, ok = cJSON_IsArray(row) && cJSON_GetArraySize(row) == w;
        if (ok) {
            cJSON_ArrayForEach(x, row)
            {
                if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) ||
                    x->valuedouble < 0) {
                    ok = 0;
                    break;
                }
                (*out)[i * (size_t)w + (size_t)k++] = x->valuedouble;
            }
        }
        if (!ok) {
            zs_free(*out);
            *out = NULL;
            return zs_err_set(err, ZS_EINPUT,
                              "invalid 'timeline.%s' in %s: element %zu must "
                              "be %s with numbers >= 0",
                              key, where, i, shape);
        }
        i++;
    }
    *n = cnt;
    return 0;
}

static int read_candidates(const struct zs_json_src *src, const cJSON *root,
                           struct zs_rdoc *doc, struct zs_err *err)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "candidates"), *c;
    struct zs_json_src nowhere;
    char where[300];
    size_t i = 0, cnt;

    if (!a || cJSON_IsNull(a))
        return 0;
    zs_json_where(src, "", "candidates", where, sizeof where);
    if (!cJSON_IsArray(a))
        return zs_err_set(err, ZS_EINPUT,
                          "invalid 'candidates' in %s: must be an array of "
                          "objects (got %s)",
                          where, zs_json_type_name(a));
    cnt = (size_t)cJSON_GetArraySize(a);
    if (cnt == 0)
        return 0;
    doc->cands = zs_calloc(cnt, sizeof *doc->cands);
    if (!doc->cands)
        return zs_err_set(err, ZS_ENOMEM, "out of memory reading '%s'",
                          src->path);
    doc->ncands = cnt;
    /* Elements have no key to locate, so messages name the element by index
     * and the file without a line (a source without text). */
    nowhere = *src;
    nowhere.text = NULL;
    cJSON_ArrayForEach(c, a)
    {
        struct zs_rcand *k = &doc->cands[i];
        struct cand_top ct;
        char path[64];
        int rc;

        snprintf(path, sizeof path, "candidates[%zu]", i);
        if (!cJSON_IsObject(c))
            return zs_err_set(err, ZS_EINPUT,
                              "invalid 'candidates' in %s: element %zu must be "
                              "an object (got %s)",
                              where, i, zs_json_type_name(c));
        zs_json_defaults(g_cand_fields, NF(g_cand_fields), &ct);
        rc = zs_json_read(&nowhere, c, path, g_cand_fields, NF(g_cand_fields),
                          &ct, ZS_JSON_ALLOW_UNKNOWN, err);
        if (rc)
            return rc;
        k->verdict = ct.verdict;
        copy_str(c, "reason", k->reason, sizeof k->reason);
        snprintf(path, sizeof path, "candidates[%zu].steady_step", i);
        rc = read_step(&nowhere, c, "steady_step", path, &k->steady, err);
        if (rc)
            return rc;
        rc = dup_json(cJSON_GetObjectItemCaseSensitive(c, "config"),
                      &k->config_json, err);
        if (rc)
            return rc;
        i++;
    }
    return 0;
}

static double max_known(double a, double b)
{
    if (b < 0 || isnan(b))
        return a;
    if (isnan(a) || b > a)
        return b;
    return a;
}

/* A figure of a block that may be absent: -1 (unknown to max_known) then. */
static double known(bool present, int64_t v)
{
    return present ? (double)v : -1;
}

static void derive(struct zs_rdoc *doc)
{
    const struct zs_rstep *st = &doc->steady;
    double *m = doc->metric;
    for (int i = 0; i < ZS_M_COUNT; i++)
        m[i] = NAN;
    if (doc->kind == ZS_RDOC_PLAN) {
        if (doc->best < 0) {
            doc->verdict = ZS_VERDICT_NONE_FITS;
            return;
        }
        doc->verdict = ZS_VERDICT_FITS;
        st = &doc->cands[doc->best].steady;
        if (!st->present)
            return;
        m[ZS_M_PEAK_GPU_ALLOC] =
            max_known(NAN, (double)st->peak_gpu_allocated_bytes);
        m[ZS_M_PEAK_GPU_RESERVED] =
            max_known(NAN, (double)st->peak_gpu_reserved_bytes);
        m[ZS_M_PEAK_HOST] =
            max_known(NAN, (double)st->peak_host_bytes_per_node);
    } else {
        const struct zs_rstep *f = &doc->first;
        const struct zs_rrun *run = &doc->run;
        m[ZS_M_PEAK_GPU_ALLOC] = max_known(
            max_known(
                max_known(NAN, known(f->present, f->peak_gpu_allocated_bytes)),
                known(st->present, st->peak_gpu_allocated_bytes)),
            known(run->present, run->peak_gpu_allocated_bytes));
        m[ZS_M_PEAK_GPU_RESERVED] = max_known(
            max_known(NAN, known(f->present, f->peak_gpu_reserved_bytes)),
            known(st->present, st->peak_gpu_reserved_bytes));
        m[ZS_M_PEAK_HOST] = max_known(
            max_known(
                max_known(NAN, known(f->present, f->peak_host_bytes_per_node)),
                known(st->present, st->peak_host_bytes_per_node)),
            known(run->present, run->peak_host_bytes_per_node));
        if (!st->present)
            return;
    }
    m[ZS_M_STEP_TIME] = st->time_s;
    m[ZS_M_TOKENS] = st->tokens_per_s_per_gpu;
}

/* The top-level figures, names, verdict text and config. */
static int read_head(const struct zs_json_src *src, const cJSON *root,
                     struct zs_rdoc *doc, struct zs_err *err)
{
    struct top t;
    const cJSON *o;
    int rc;

    zs_json_defaults(g_top_fields, NF(g_top_fields), &t);
    rc = zs_json_read(src, root, "", g_top_fields, NF(g_top_fields), &t,
                      ZS_JSON_ALLOW_UNKNOWN, err);
    if (rc)
        return rc;
    doc->kind = t.schema == 0 ? ZS_RDOC_SIMULATE : ZS_RDOC_PLAN;
    doc->verdict = t.verdict;
    doc->searched = t.searched;
    doc->elapsed_s = t.elapsed_s;
    doc->best = -1;
    read_name(root, "model", doc->model, sizeof doc->model);
    read_name(root, "hardware", doc->hardware, sizeof doc->hardware);
    if ((rc = dup_json(cJSON_GetObjectItemCaseSensitive(root, "config"),
                       &doc->config_json, err)))
        return rc;
    if ((rc = read_obj(src, root, "oom", "oom", g_oom_fields, NF(g_oom_fields),
                       &doc->oom, &doc->oom.present, err)))
        return rc;
    if (doc->oom.present) {
        o = cJSON_GetObjectItemCaseSensitive(root, "oom");
        copy_str(o, "where", doc->oom.where, sizeof doc->oom.where);
        copy_str(o, "phase", doc->oom.phase, sizeof doc->oom.phase);
        copy_str(o, "module", doc->oom.module, sizeof doc->oom.module);
    }
    copy_str(root, "verdict_text", doc->verdict_text, sizeof doc->verdict_text);
    o = cJSON_GetObjectItemCaseSensitive(root, "config");
    if (cJSON_IsObject(o))
        copy_str(o, "summary", doc->config_summary, sizeof doc->config_summary);
    return 0;
}

/* "run": the whole run's figures and where the host ran out, if it did. */
static int read_run(const struct zs_json_src *src, const cJSON *root,
                    struct zs_rdoc *doc, struct zs_err *err)
{
    int rc = read_obj(src, root, "run", "run", g_run_fields, NF(g_run_fields),
                      &doc->run, &doc->run.present, err);
    struct host_oom ho;
    const cJSON *o;
    bool have;

    if (rc || !doc->run.present)
        return rc;
    o = cJSON_GetObjectItemCaseSensitive(root, "run");
    if ((rc = read_obj(src, o, "host_oom", "run.host_oom", g_host_oom_fields,
                       NF(g_host_oom_fields), &ho, &have, err)))
        return rc;
    doc->run.host_oom = have;
    if (have)
        copy_str(cJSON_GetObjectItemCaseSensitive(o, "host_oom"), "phase",
                 doc->run.host_oom_phase, sizeof doc->run.host_oom_phase);
    doc->run.host_oom_epoch = have ? ho.epoch : -1;
    doc->run.host_oom_step = have ? ho.step : -1;
    return 0;
}

/* "estimators.deepspeed" and the "timeline" series. */
static int read_extras(const struct zs_json_src *src, const cJSON *root,
                       struct zs_rdoc *doc, struct zs_err *err)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "estimators");
    struct ds_est ds;
    int rc;

    zs_json_defaults(g_ds_fields, NF(g_ds_fields), &ds);
    if (cJSON_IsObject(o) &&
        (rc = read_obj(src, o, "deepspeed", "estimators.deepspeed", g_ds_fields,
                       NF(g_ds_fields), &ds, NULL, err)))
        return rc;
    doc->ds_gpu_bytes = ds.gpu_bytes;
    doc->ds_host_bytes_per_node = ds.host_bytes_per_node;
    o = cJSON_GetObjectItemCaseSensitive(root, "timeline");
    if (!o || cJSON_IsNull(o))
        return 0;
    if ((rc = zs_json_expect_object(src, o, "timeline", err)))
        return rc;
    if ((rc = read_series(src, o, "gpu", 3,
                          "[t_s, allocated_bytes, reserved_bytes]",
                          &doc->gpu_tl, &doc->n_gpu, err)))
        return rc;
    return read_series(src, o, "host", 2, "[t_s, bytes]", &doc->host_tl,
                       &doc->n_host, err);
}

/* A plan's candidates and "best", an index into them or null. */
static int read_plan(const struct zs_json_src *src, const cJSON *root,
                     struct zs_rdoc *doc, struct zs_err *err)
{
    const cJSON *o;
    char where[300];
    double v;
    int rc;

    if ((rc = read_candidates(src, root, doc, err)))
        return rc;
    o = cJSON_GetObjectItemCaseSensitive(root, "best");
    if (!o || cJSON_IsNull(o))
        return 0;
    v = cJSON_IsNumber(o) ? o->valuedouble : -1;
    if (v >= 0 && v == floor(v) && v < (double)doc->ncands) {
        doc->best = (int64_t)v;
        return 0;
    }
    zs_json_where(src, "", "best", where, sizeof where);
    if (doc->ncands == 0)
        return zs_err_set(err, ZS_EINPUT,
                          "invalid 'best' in %s: must be null when there are "
                          "no candidates",
                          where);
    return zs_err_set(err, ZS_EINPUT,
                      "invalid 'best' in %s: must be null or an index in "
                      "[0, %zu]",
                      where, doc->ncands - 1);
}

static int parse_tree(const struct zs_json_src *src, const cJSON *root,
                      struct zs_rdoc *doc, struct zs_err *err)
{
    int rc;
    if ((rc = read_head(src, root, doc, err)) ||
        (rc = read_step(src, root, "first_step", "first_step", &doc->first,
                        err)) ||
        (rc = read_step(src, root, "steady_step", "steady_step", &doc->steady,
                        err)) ||
        (rc = read_run(src, root, doc, err)) ||
        (rc = read_extras(src, root, doc, err)))
        return rc;
    if (doc->kind == ZS_RDOC_PLAN && (rc = read_plan(src, root, doc, err)))
        return rc;
    derive(doc);
    return 0;
}

int zs_rdoc_parse(const char *name, const char *text, size_t len,
                  struct zs_rdoc *doc, struct zs_err *err)
{
    cJSON *root;
    struct zs_json_src src;
    int rc;

    memset(doc, 0, sizeof *doc);
    rc = zs_json_parse_text(name, text, len, &root, &src, err);
    if (rc)
        return rc;
    rc = parse_tree(&src, root, doc, err);
    cJSON_Delete(root);
    zs_json_src_release(&src);
    /* cJSON and the table loader cannot tell an injected allocation failure
     * from bad input in every path; trust the allocator's record. */
    if (rc && zs_alloc_failed() && rc != ZS_ENOMEM)
        rc = zs_err_set(err, ZS_ENOMEM, "out of memory reading '%s'", name);
    if (rc)
        zs_rdoc_release(doc);
    return rc;
}

void zs_rdoc_release(struct zs_rdoc *doc)
{
    for (size_t i = 0; i < doc->ncands; i++)
        zs_free(doc->cands[i].config_json);
    zs_free(doc->cands);
    zs_free(doc->config_json);
    zs_free(doc->gpu_tl);
    zs_free(doc->host_tl);
    memset(doc, 0, sizeof *doc);
    doc->best = -1;
}

static int walk(const cJSON *o, char *path, size_t plen, size_t cap, int top,
                int (*fn)(const char *, double, void *), void *arg)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, o)
    {
        size_t klen;
        int rc = 0;
        if (!c->string)
            continue;
        if (top && (strcmp(c->string, "timeline") == 0 ||
                    strcmp(c->string, "candidates") == 0))
            continue;
        klen = strlen(c->string);
        if (plen + klen + 2 >= cap)
            continue; /* absurdly deep: not a figure anyone reads */
        if (plen)
            path[plen] = '.';
        memcpy(path + plen + (plen ? 1 : 0), c->string, klen + 1);
        if (cJSON_IsNumber(c))
            rc = fn(path, c->valuedouble, arg);
        else if (cJSON_IsBool(c))
            rc = fn(path, cJSON_IsTrue(c) ? 1 : 0, arg);
        else if (cJSON_IsObject(c))
            rc = walk(c, path, plen + klen + (plen ? 1 : 0), cap, 0, fn, arg);
        path[plen] = '\0';
        if (rc)
            return rc;
    }
    return 0;
}

int zs_rdoc_figures(const char *text, size_t len,
                    int (*fn)(const char *name, double value, void *arg),
                    void *arg, struct zs_err *err)
{
    cJSON *root;
    char path[256] = "";
    int rc;

    zs_alloc_init();
    root = cJSON_ParseWithLength(text, len);
    if (!root) {
        if (zs_alloc_failed())
            return zs_err_set(err, ZS_ENOMEM,
                              "out of memory reading a run document");
        return zs_err_set(err, ZS_EINPUT, "run document is not valid JSON");
    }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return zs_err_set(err, ZS_EINPUT, "run document is not a JSON object");
    }
    rc = walk(root, path, 0, sizeof path, 1, fn, arg);
    cJSON_Delete(root);
    return rc;
}
