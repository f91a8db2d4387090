/*
 * cmd_validate.c — `zsim validate`: predicted vs measured for one measured
 * file (written by the CUDA harness or the FSDP2 reference script).
 *
 * Prints per task class the summed predicted and measured durations, then
 * peak device memory (allocated, reserved), peak host and pinned memory, the
 * steady step time, copy bandwidths and GEMM throughput, each with its error
 * in percent ((predicted - measured) / measured).  With --max-mem-err /
 * --max-time-err it gates: exit 4 when a gated error exceeds its limit, so CI
 * can run it on every committed measurement.
 */
#include "cli/cmd.h"
#include "formats/measured_io.h"
#include "validate/published_io.h"
#include "formats/schedule_io.h"
#include "util/afile.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/strutil.h"
#include "util/table.h"
#include "util/units.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char g_usage[] =
    "usage: zsim validate --measured FILE [--schedule FILE] [--json]\n"
    "                     [--max-mem-err PCT] [--max-time-err PCT]\n"
    "       zsim validate --published DIR [--json] [--accuracy FILE]\n"
    "                     [--margin PCT] [--write-accuracy FILE]\n"
    "\n"
    "Compares zsim's predictions with a measurement taken on a real GPU by "
    "the\n"
    "CUDA harness (harness/) or the FSDP2 reference script: per task class\n"
    "(gemm, h2d, d2h, collective, cpu_adam, elementwise) the summed task\n"
    "times, then peak device memory (allocated, reserved), peak host memory,\n"
    "step time, copy bandwidths and GEMM throughput, with errors in percent\n"
    "((predicted - measured) / measured; positive means zsim over-predicts).\n"
    "\n"
    "options:\n"
    "  --measured FILE      a zsim.measured/1 file "
    "(validation/*.measured.json)\n"
    "  --schedule FILE      take predictions from this zsim.schedule/1 file\n"
    "                       (needed when the measured file has none, e.g. the\n"
    "                       FSDP2 reference); its header must match\n"
    "  --json               print one JSON document (schema zsim.validate/1)\n"
    "  --max-mem-err PCT    gate on peak device allocated/reserved and peak\n"
    "                       host memory (default 5)\n"
    "  --max-time-err PCT   gate on the step time (default 10)\n"
    "  --published DIR      compare with every public measured run in DIR\n"
    "                       (zsim.published/1, validation/published/): per\n"
    "                       run and quantity predicted, measured and error,\n"
    "                       then median and p90 |error| per quantity and\n"
    "                       framework, and the runs not modelled\n"
    "  --accuracy FILE      with --published: exit 4 when an error's\n"
    "                       magnitude exceeds the committed one in FILE\n"
    "                       (zsim.accuracy/1) by more than --margin\n"
    "  --margin PCT         percentage points allowed (default 2)\n"
    "  --write-accuracy FILE  with --published: write the current errors\n"
    "                       to FILE and print which moved\n"
    "\n"
    "examples:\n"
    "  zsim validate --measured tests/data/good/sched-meas-tiny.json\n"
    "  zsim validate --published validation/published\n"
    "\n"
    "exit codes: 0 within limits, 1 i/o failure, 2 usage error,\n"
    "            3 invalid input file, 4 an error exceeds its limit\n";

static const struct zs_opt g_opts[] = {
    {"measured", 1},    {"schedule", 1},     {"json", 0},
    {"max-mem-err", 1}, {"max-time-err", 1}, {"published", 1},
    {"accuracy", 1},    {"margin", 1},       {"write-accuracy", 1},
};
#define NOPTS (sizeof g_opts / sizeof g_opts[0])

static int parse_pct(const char *opt, const char *text, double *out,
                     struct zs_err *err)
{
    char *end = NULL;
    double v;
    if (!text)
        return 0;
    v = strtod(text, &end);
    if (!text[0] || !end || *end || !isfinite(v) || v <= 0 || v > 1000)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid value for '--%s': must be a percentage in "
                          "(0, 1000] (got '%s')",
                          opt, text);
    *out = v;
    return 0;
}

/* Predictions from a schedule of the same run (header must match). */
static int take_predictions(struct zs_measured *m, const char *mpath,
                            const char *spath, struct zs_err *err)
{
    struct zs_schedule s;
    int rc = zs_schedule_read(spath, &s, err);
    if (rc)
        return rc;
    if (strcmp(s.header.model, m->header.model) != 0 ||
        s.header.world != m->header.world || s.header.rank != m->header.rank) {
        rc = zs_err_set(err, ZS_EINPUT,
                        "schedule '%s' does not match '%s': it is for model "
                        "'%s', rank %lld of %lld (measured: '%s', rank %lld of "
                        "%lld)",
                        spath, mpath, s.header.model, (long long)s.header.rank,
                        (long long)s.header.world, m->header.model,
                        (long long)m->header.rank, (long long)m->header.world);
        goto out;
    }
    m->pred = s.pred;
    m->has_pred = true;
    for (int32_t i = 0; i < m->ntasks; i++) {
        struct zs_meas_task *t = &m->tasks[i];
        if (t->id < s.ntasks && s.tasks[t->id].kind == t->kind) {
            t->pred_start_ns = s.tasks[t->id].pred_start_ns;
            t->pred_end_ns = s.tasks[t->id].pred_end_ns;
        }
    }
out:
    zs_schedule_release(&s);
    return rc;
}

/* Three significant digits with a unit. */
static void fmt_secs(char *buf, size_t cap, double s)
{
    double a = fabs(s);
    if (a < 1e-3)
        snprintf(buf, cap, "%.3g us", s * 1e6);
    else if (a < 1)
        snprintf(buf, cap, "%.3g ms", s * 1e3);
    else
        snprintf(buf, cap, "%.3g s", s);
}

static void fmt_val(char *buf, size_t cap, int unit, double v)
{
    if (v < 0 || !isfinite(v)) {
        snprintf(buf, cap, "-");
        return;
    }
    switch (unit) {
    case 0:
        zs_fmt_bytes(buf, cap, (int64_t)v);
        break;
    case 1:
        fmt_secs(buf, cap, v / 1e9);
        break;
    case 2:
        snprintf(buf, cap, "%.1f GB/s", v / 1e9);
        break;
    default:
        snprintf(buf, cap, "%.1f TFLOP/s", v / 1e12);
        break;
    }
}

static void fmt_err(char *buf, size_t cap, double e)
{
    if (!isfinite(e))
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%+.1f %%", e);
}

static int print_text(const char *path, const struct zs_measured *m,
                      const struct zs_validation *v, double mem_lim,
                      double time_lim)
{
    const struct zs_sched_header *h = &m->header;
    const struct zs_meas_env *e = &m->env;
    struct zs_table *t;
    char a[48], b[48], c[48], d[48];

    printf("validate %s (%s)\n", path, zs_meas_kind_name(m->kind));
    printf("  model %s on %s%s%s%s, rank %lld of %lld, %lld step%s%s%s\n",
           h->model, h->hardware, h->gpu[0] ? " (" : "", h->gpu,
           h->gpu[0] ? ")" : "", (long long)h->rank, (long long)h->world,
           (long long)h->steps, h->steps == 1 ? "" : "s",
           h->framework[0] ? ", " : "", h->framework);
    if (h->config[0])
        printf("  config: %s\n", h->config);
    printf("  measured on %s", e->gpu);
    if (e->driver[0])
        printf(", driver %s", e->driver);
    if (e->cuda[0])
        printf(", CUDA %s", e->cuda);
    if (e->sm_clock_mhz > 0)
        printf(", SM %lld MHz", (long long)e->sm_clock_mhz);
    if (e->allocator[0])
        printf(", allocator %s", e->allocator);
    printf(", %s\n", e->date);
    if (e->tool[0])
        printf("  tool: %s\n", e->tool);
    printf("\n");

    t = zs_table_new(5, "lrrrr");
    if (!t)
        return ZS_ENOMEM;
    zs_table_header(t);
    zs_table_rowf(t, "task class\ttasks\tpredicted\tmeasured\terror");
    for (int k = 0; k < ZS_VC_COUNT; k++) {
        const struct zs_vclass_row *r = &v->cls[k];
        if (r->tasks) {
            fmt_secs(a, sizeof a, r->pred_s);
            fmt_secs(b, sizeof b, r->meas_s);
        } else {
            snprintf(a, sizeof a, "-");
            snprintf(b, sizeof b, "-");
        }
        fmt_err(c, sizeof c, r->err_pct);
        zs_table_rowf(t, "%s\t%lld\t%s\t%s\t%s", zs_vclass_name(k),
                      (long long)r->tasks, a, b, c);
    }
    if (v->total.tasks) {
        fmt_secs(a, sizeof a, v->total.pred_s);
        fmt_secs(b, sizeof b, v->total.meas_s);
    } else {
        snprintf(a, sizeof a, "-");
        snprintf(b, sizeof b, "-");
    }
    fmt_err(c, sizeof c, v->total.err_pct);
    zs_table_rowf(t, "all timed tasks\t%lld\t%s\t%s\t%s",
                  (long long)v->total.tasks, a, b, c);
    zs_table_print(t, stdout, 2);
    zs_table_free(t);
    if (v->skipped || v->unpredicted)
        printf(
            "  (%lld task%s skipped on one GPU, %lld without a prediction)\n",
            (long long)v->skipped, v->skipped == 1 ? "" : "s",
            (long long)v->unpredicted);
    printf("\n");

    t = zs_table_new(5, "lrrrr");
    if (!t)
        return ZS_ENOMEM;
    zs_table_header(t);
    zs_table_rowf(t, "quantity\tpredicted\tmeasured\terror\tlimit");
    for (int k = 0; k < v->nq; k++) {
        const struct zs_vquant *q = &v->q[k];
        fmt_val(a, sizeof a, q->unit, q->pred);
        fmt_val(b, sizeof b, q->unit, q->meas);
        fmt_err(c, sizeof c, q->err_pct);
        if (q->limit_pct > 0)
            snprintf(d, sizeof d, "%g %%%s", q->limit_pct,
                     q->ok ? "" : " FAIL");
        else
            snprintf(d, sizeof d, "-");
        zs_table_rowf(t, "%s\t%s\t%s\t%s\t%s", q->label, a, b, c, d);
    }
    zs_table_print(t, stdout, 2);
    zs_table_free(t);
    printf("\n%s: memory within %g %%, step time within %g %%\n",
           v->ok ? "ok" : "FAIL", mem_lim, time_lim);
    return 0;
}

static double round2(double x)
{
    return round(x * 100.0) / 100.0;
}

static void add_num_or_null(cJSON *o, const char *key, double v, int valid)
{
    if (valid && isfinite(v))
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

static cJSON *class_json(const char *name, const struct zs_vclass_row *r)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "class", name);
    cJSON_AddNumberToObject(o, "tasks", (double)r->tasks);
    cJSON_AddNumberToObject(o, "predicted_s", r->pred_s);
    cJSON_AddNumberToObject(o, "measured_s", r->meas_s);
    add_num_or_null(o, "error_pct", round2(r->err_pct), 1);
    cJSON_AddNumberToObject(o, "bytes", r->bytes);
    cJSON_AddNumberToObject(o, "flops", r->flops);
    return o;
}

static int print_json(const char *path, const struct zs_measured *m,
                      const struct zs_validation *v, double mem_lim,
                      double time_lim, struct zs_err *err)
{
    static const char *const units[] = {"bytes", "s", "bytes_per_s",
                                        "flops_per_s"};
    const struct zs_sched_header *h = &m->header;
    const struct zs_meas_env *e = &m->env;
    cJSON *doc = cJSON_CreateObject(), *o, *arr;
    char *text;

    if (!doc)
        return zs_err_set(err, ZS_ENOMEM, "out of memory");
    cJSON_AddStringToObject(doc, "schema", "zsim.validate/1");
    cJSON_AddStringToObject(doc, "measured_file", path);
    cJSON_AddStringToObject(doc, "kind", zs_meas_kind_name(m->kind));
    cJSON_AddStringToObject(doc, "model", h->model);
    cJSON_AddStringToObject(doc, "hardware", h->hardware);
    cJSON_AddStringToObject(doc, "gpu", h->gpu);
    cJSON_AddStringToObject(doc, "framework", h->framework);
    cJSON_AddStringToObject(doc, "config", h->config);
    cJSON_AddNumberToObject(doc, "rank", (double)h->rank);
    cJSON_AddNumberToObject(doc, "world", (double)h->world);
    cJSON_AddNumberToObject(doc, "steps", (double)h->steps);
    o = cJSON_AddObjectToObject(doc, "environment");
    if (o) {
        cJSON_AddStringToObject(o, "gpu", e->gpu);
        cJSON_AddStringToObject(o, "driver", e->driver);
        cJSON_AddStringToObject(o, "cuda", e->cuda);
        cJSON_AddNumberToObject(o, "sm_clock_mhz", (double)e->sm_clock_mhz);
        cJSON_AddNumberToObject(o, "mem_clock_mhz", (double)e->mem_clock_mhz);
        cJSON_AddStringToObject(o, "date", e->date);
        cJSON_AddStringToObject(o, "allocator", e->allocator);
        cJSON_AddStringToObject(o, "tool", e->tool);
    }
    arr = cJSON_AddArrayToObject(doc, "classes");
    for (int k = 0; arr && k < ZS_VC_COUNT; k++)
        cJSON_AddItemToArray(arr, class_json(zs_vclass_name(k), &v->cls[k]));
    cJSON_AddItemToObject(doc, "total", class_json("all", &v->total));
    cJSON_AddNumberToObject(doc, "skipped_tasks", (double)v->skipped);
    cJSON_AddNumberToObject(doc, "unpredicted_tasks", (double)v->unpredicted);
    arr = cJSON_AddArrayToObject(doc, "quantities");
    for (int k = 0; arr && k < v->nq; k++) {
        const struct zs_vquant *q = &v->q[k];
        double scale = q->unit == 1 ? 1e-9 : 1.0; /* ns -> s */
        cJSON *qo = cJSON_CreateObject();
        if (!qo)
            break;
        cJSON_AddStringToObject(qo, "name",
                                q->unit == 1 ? "step_time_s" : q->key);
        cJSON_AddStringToObject(qo, "unit", units[q->unit]);
        add_num_or_null(qo, "predicted", q->pred * scale, q->pred >= 0);
        add_num_or_null(qo, "measured", q->meas * scale, q->meas >= 0);
        add_num_or_null(qo, "error_pct", round2(q->err_pct), 1);
        add_num_or_null(qo, "limit_pct", q->limit_pct, q->limit_pct > 0);
        cJSON_AddBoolToObject(qo, "ok", q->ok);
        cJSON_AddItemToArray(arr, qo);
    }
    o = cJSON_AddObjectToObject(doc, "limits");
    if (o) {
        cJSON_AddNumberToObject(o, "max_mem_err_pct", mem_lim);
        cJSON_AddNumberToObject(o, "max_time_err_pct", time_lim);
    }
    cJSON_AddBoolToObject(doc, "ok", v->ok);
    text = cJSON_Print(doc);
    cJSON_Delete(doc);
    if (!text)
        return zs_err_set(err, ZS_ENOMEM, "out of memory");
    fputs(text, stdout);
    fputc('\n', stdout);
    cJSON_free(text);
    return 0;
}

/* ---- the published corpus (--published DIR) ------------------------------ */

struct pub_row {
    char run[ZS_PUB_NAME_CAP];
    char framework[16];
    int qty;
    double pred, meas, err_pct;
};

struct pub_set {
    struct zs_published *runs;
    struct zs_pub_pred *pred;
    int n;
    struct pub_row *rows;
    int nrows;
};

static void pub_set_free(struct pub_set *s)
{
    zs_free(s->runs);
    zs_free(s->pred);
    zs_free(s->rows);
    memset(s, 0, sizeof *s);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every DIR/NAME.json except accuracy.json, sorted by name, read and predicted.
 */
static int pub_load(const char *dir, struct pub_set *s, struct zs_err *err)
{
    char pat[4096];
    glob_t gl;
    int g, rc = 0;
    size_t k;

    memset(s, 0, sizeof *s);
    if ((size_t)snprintf(pat, sizeof pat, "%s/*.json", dir) >= sizeof pat)
        return zs_err_set(err, ZS_EUSAGE, "path too long: '%s'", dir);
    g = glob(pat, 0, NULL, &gl);
    if (g == GLOB_NOMATCH)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid value for '--published': no *.json in '%s'",
                          dir);
    if (g)
        return zs_err_set(err, ZS_EIO, "cannot list '%s'", dir);
    qsort(gl.gl_pathv, gl.gl_pathc, sizeof *gl.gl_pathv, cmp_str);
    s->runs = zs_calloc(gl.gl_pathc, sizeof *s->runs);
    s->pred = zs_calloc(gl.gl_pathc, sizeof *s->pred);
    s->rows = zs_calloc(gl.gl_pathc * ZS_PUB_MAX_MEAS, sizeof *s->rows);
    if (!s->runs || !s->pred || !s->rows) {
        rc = zs_err_set(err, ZS_ENOMEM, "out of memory");
        goto out;
    }
    for (k = 0; k < gl.gl_pathc; k++) {
        const char *base = strrchr(gl.gl_pathv[k], '/');
        struct zs_published *p = &s->runs[s->n];
        struct zs_pub_pred *q = &s->pred[s->n];
        base = base ? base + 1 : gl.gl_pathv[k];
        if (strcmp(base, "accuracy.json") == 0)
            continue;
        rc = zs_published_read(gl.gl_pathv[k], p, err);
        if (rc)
            goto out;
        for (int j = 0; j < s->n; j++)
            if (strcmp(s->runs[j].name, p->name) == 0) {
                rc = zs_err_set(err, ZS_EINPUT,
                                "invalid 'name' in %s: '%s' is already the "
                                "name of %s",
                                p->path, p->name, s->runs[j].path);
                goto out;
            }
        s->n++;
        if (p->nneeds)
            continue; /* not modelled: nothing to compare */
        rc = zs_published_predict(p, q, err);
        if (rc)
            goto out;
        for (int i = 0; i < p->nmeas; i++) {
            struct pub_row *r = &s->rows[s->nrows++];
            zs_strlcpy(r->run, p->name, sizeof r->run);
            zs_strlcpy(r->framework, q->framework, sizeof r->framework);
            r->qty = p->meas[i].qty;
            r->meas = p->meas[i].base;
            r->pred = q->oom ? -1 : q->v[r->qty];
            r->err_pct = zs_pub_err_pct(r->pred, r->meas);
        }
    }
out:
    globfree(&gl);
    if (rc)
        pub_set_free(s);
    return rc;
}

static void pub_fmt(char *buf, size_t cap, int qty, double v)
{
    if (!(v >= 0)) {
        snprintf(buf, cap, "-");
        return;
    }
    if (qty == ZS_PQ_STEP_TIME)
        fmt_secs(buf, cap, v);
    else if (qty == ZS_PQ_TOKENS)
        snprintf(buf, cap, "%.0f tok/s", v);
    else
        snprintf(buf, cap, "%.1f GiB", v / 1073741824.0);
}

/* Median and p90 of |error| per quantity and framework ("all" too). */
struct pub_stat {
    int qty;
    const char *fw;
    int n;
    double median, p90;
};

static int pub_stats(const struct pub_set *s, struct pub_stat *out, int cap)
{
    static const char *const fws[] = {"all", "deepspeed", "fsdp2"};
    double *v = zs_calloc((size_t)s->nrows + 1, sizeof *v);
    int nout = 0;
    if (!v)
        return -1;
    for (int q = 0; q < ZS_PQ_COUNT; q++)
        for (int f = 0; f < 3; f++) {
            int n = 0;
            for (int i = 0; i < s->nrows; i++)
                if (s->rows[i].qty == q && isfinite(s->rows[i].err_pct) &&
                    (f == 0 || strcmp(s->rows[i].framework, fws[f]) == 0))
                    v[n++] = fabs(s->rows[i].err_pct);
            if (!n || nout >= cap)
                continue;
            out[nout].qty = q;
            out[nout].fw = fws[f];
            out[nout].n = n;
            zs_pub_median_p90(v, n, &out[nout].median, &out[nout].p90);
            nout++;
        }
    zs_free(v);
    return nout;
}

static int pub_print_text(const char *dir, const struct pub_set *s)
{
    struct zs_table *t = zs_table_new(6, "llrrrr");
    struct pub_stat st[ZS_PQ_COUNT * 3];
    char a[48], b[48], c[48];
    int nst, nnot = 0, noom = 0;

    if (!t)
        return ZS_ENOMEM;
    printf("published runs in %s: %d\n\n", dir, s->n);
    zs_table_header(t);
    zs_table_rowf(t, "run\tquantity\tframework\tpredicted\tmeasured\terror");
    for (int i = 0; i < s->nrows; i++) {
        const struct pub_row *r = &s->rows[i];
        pub_fmt(a, sizeof a, r->qty, r->pred);
        pub_fmt(b, sizeof b, r->qty, r->meas);
        fmt_err(c, sizeof c, r->err_pct);
        zs_table_rowf(t, "%s\t%s\t%s\t%s\t%s\t%s", r->run,
                      zs_pub_qty_name(r->qty), r->framework, a, b, c);
    }
    zs_table_print(t, stdout, 2);
    zs_table_free(t);

    nst = pub_stats(s, st, (int)(sizeof st / sizeof st[0]));
    if (nst < 0)
        return ZS_ENOMEM;
    printf("\nabsolute error per quantity and framework:\n");
    t = zs_table_new(5, "llrrr");
    if (!t)
        return ZS_ENOMEM;
    zs_table_header(t);
    zs_table_rowf(t, "quantity\tframework\tn\tmedian\tp90");
    for (int i = 0; i < nst; i++)
        zs_table_rowf(t, "%s\t%s\t%d\t%.1f %%\t%.1f %%",
                      zs_pub_qty_name(st[i].qty), st[i].fw, st[i].n,
                      st[i].median, st[i].p90);
    zs_table_print(t, stdout, 2);
    zs_table_free(t);

    for (int i = 0; i < s->n; i++) {
        nnot += s->runs[i].nneeds > 0;
        noom += s->pred[i].oom;
    }
    if (noom) {
        printf("\npredicted OOM although the run fitted: %d\n", noom);
        for (int i = 0; i < s->n; i++)
            if (s->pred[i].oom)
                printf("  %s: %s\n", s->runs[i].name, s->pred[i].oom_text);
    }
    printf("\nnot modelled: %d\n", nnot);
    for (int i = 0; i < s->n; i++) {
        const struct zs_published *p = &s->runs[i];
        if (!p->nneeds)
            continue;
        printf("  %s: needs", p->name);
        for (int j = 0; j < p->nneeds; j++)
            printf("%s %s", j ? "," : "", p->needs[j]);
        printf("\n");
    }
    return 0;
}

static cJSON *pub_json(const struct pub_set *s)
{
    struct pub_stat st[ZS_PQ_COUNT * 3];
    cJSON *doc = cJSON_CreateObject(), *arr, *o;
    int nst = pub_stats(s, st, (int)(sizeof st / sizeof st[0]));
    if (!doc || nst < 0) {
        cJSON_Delete(doc);
        return NULL;
    }
    cJSON_AddStringToObject(doc, "schema", "zsim.validate-published/1");
    cJSON_AddNumberToObject(doc, "runs_total", s->n);
    arr = cJSON_AddArrayToObject(doc, "rows");
    for (int i = 0; arr && i < s->nrows; i++) {
        const struct pub_row *r = &s->rows[i];
        o = cJSON_CreateObject();
        if (!o)
            break;
        cJSON_AddStringToObject(o, "run", r->run);
        cJSON_AddStringToObject(o, "quantity", zs_pub_qty_name(r->qty));
        cJSON_AddStringToObject(o, "framework", r->framework);
        cJSON_AddStringToObject(o, "unit",
                                r->qty == ZS_PQ_STEP_TIME ? "s"
                                : r->qty == ZS_PQ_TOKENS  ? "tokens/s"
                                                          : "bytes");
        add_num_or_null(o, "predicted", r->pred, r->pred >= 0);
        cJSON_AddNumberToObject(o, "measured", r->meas);
        add_num_or_null(o, "error_pct", round2(r->err_pct), 1);
        cJSON_AddItemToArray(arr, o);
    }
    arr = cJSON_AddArrayToObject(doc, "summary");
    for (int i = 0; arr && i < nst; i++) {
        o = cJSON_CreateObject();
        if (!o)
            break;
        cJSON_AddStringToObject(o, "quantity", zs_pub_qty_name(st[i].qty));
        cJSON_AddStringToObject(o, "framework", st[i].fw);
        cJSON_AddNumberToObject(o, "n", st[i].n);
        cJSON_AddNumberToObject(o, "median_abs_error_pct",
                                round2(st[i].median));
        cJSON_AddNumberToObject(o, "p90_abs_error_pct", round2(st[i].p90));
        cJSON_AddItemToArray(arr, o);
    }
    arr = cJSON_AddArrayToObject(doc, "predicted_oom");
    for (int i = 0; arr && i < s->n; i++)
        if (s->pred[i].oom) {
            o = cJSON_CreateObject();
            if (!o)
                break;
            cJSON_AddStringToObject(o, "run", s->runs[i].name);
            cJSON_AddStringToObject(o, "why", s->pred[i].oom_text);
            cJSON_AddItemToArray(arr, o);
        }
    arr = cJSON_AddArrayToObject(doc, "not_modelled");
    for (int i = 0; arr && i < s->n; i++)
        if (s->runs[i].nneeds) {
            cJSON *needs;
            o = cJSON_CreateObject();
            if (!o)
                break;
            cJSON_AddStringToObject(o, "run", s->runs[i].name);
            needs = cJSON_AddArrayToObject(o, "needs");
            for (int j = 0; needs && j < s->runs[i].nneeds; j++)
                cJSON_AddItemToArray(needs,
                                     cJSON_CreateString(s->runs[i].needs[j]));
            cJSON_AddItemToArray(arr, o);
        }
    return doc;
}

/* The committed errors (zsim.accuracy/1): {"schema", "margin_pct",
 * "errors": [{"run", "quantity", "error_pct" (null: predicted OOM)}]}. */
struct acc_ent {
    char run[ZS_PUB_NAME_CAP];
    char qty[32];
    double err_pct; /* NAN for null */
};

static int acc_read(const char *path, struct acc_ent **out, int *n,
                    struct zs_err *err)
{
    cJSON *root, *arr, *it;
    struct zs_json_src src;
    int rc, i = 0;

    *out = NULL;
    *n = 0;
    rc = zs_json_parse_file(path, &root, &src, err);
    if (rc)
        return rc;
    arr = cJSON_GetObjectItemCaseSensitive(root, "errors");
    {
        const cJSON *sc = cJSON_GetObjectItemCaseSensitive(root, "schema");
        if (!cJSON_IsString(sc) ||
            strcmp(sc->valuestring, ZS_ACCURACY_SCHEMA) != 0) {
            rc = zs_err_set(err, ZS_EINPUT,
                            "invalid 'schema' in %s: must be \"%s\"", path,
                            ZS_ACCURACY_SCHEMA);
            goto out;
        }
    }
    if (!cJSON_IsArray(arr)) {
        rc = zs_err_set(err, ZS_EINPUT,
                        "invalid 'errors' in %s: must be an array", path);
        goto out;
    }
    *out = zs_calloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof **out);
    if (!*out) {
        rc = zs_err_set(err, ZS_ENOMEM, "out of memory");
        goto out;
    }
    cJSON_ArrayForEach(it, arr)
    {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(it, "run"),
                    *q = cJSON_GetObjectItemCaseSensitive(it, "quantity"),
                    *e = cJSON_GetObjectItemCaseSensitive(it, "error_pct");
        if (!cJSON_IsString(r) || !cJSON_IsString(q) ||
            !(cJSON_IsNumber(e) || cJSON_IsNull(e))) {
            rc = zs_err_set(err, ZS_EINPUT,
                            "invalid 'errors[%d]' in %s: must be {\"run\": "
                            "string, \"quantity\": string, \"error_pct\": "
                            "number or null}",
                            i, path);
            goto out;
        }
        zs_strlcpy((*out)[i].run, r->valuestring, sizeof(*out)[i].run);
        zs_strlcpy((*out)[i].qty, q->valuestring, sizeof(*out)[i].qty);
        (*out)[i].err_pct = cJSON_IsNull(e) ? NAN : e->valuedouble;
        i++;
    }
    *n = i;
out:
    cJSON_Delete(root);
    zs_json_src_release(&src);
    if (rc) {
        zs_free(*out);
        *out = NULL;
    }
    return rc;
}

static const struct acc_ent *acc_find(const struct acc_ent *a, int n,
                                      const char *run, const char *qty)
{
    for (int i = 0; i < n; i++)
        if (strcmp(a[i].run, run) == 0 && strcmp(a[i].qty, qty) == 0)
            return &a[i];
    return NULL;
}

/* Gate: exit 4 naming the first run and quantity whose |error| grew beyond
 * the committed |error| + margin, or that now predicts OOM where it did not.
 * Rows missing from the committed file are new runs: reported, not gated. */
static int pub_gate(const struct pub_set *s, const char *accpath, double margin,
                    struct zs_err *err)
{
    struct acc_ent *a;
    int na, rc, bad = 0;
    char first[ZS_ERR_MSG_MAX] = "";

    rc = acc_read(accpath, &a, &na, err);
    if (rc)
        return rc;
    for (int i = 0; i < s->nrows; i++) {
        const struct pub_row *r = &s->rows[i];
        const char *qn = zs_pub_qty_name(r->qty);
        const struct acc_ent *e = acc_find(a, na, r->run, qn);
        char line[ZS_ERR_MSG_MAX];
        if (!e) {
            printf("new (not in %s): %s %s error %+.1f %%\n", accpath, r->run,
                   qn, r->err_pct);
            continue;
        }
        if (isfinite(e->err_pct) && !isfinite(r->err_pct))
            snprintf(line, sizeof line,
                     "accuracy of '%s' %s regressed: zsim now predicts OOM "
                     "(committed error %+.1f %%)",
                     r->run, qn, e->err_pct);
        else if (isfinite(e->err_pct) &&
                 fabs(r->err_pct) > fabs(e->err_pct) + margin)
            snprintf(line, sizeof line,
                     "accuracy of '%s' %s regressed: error %+.1f %% exceeds "
                     "the committed %+.1f %% by more than %g points",
                     r->run, qn, r->err_pct, e->err_pct, margin);
        else
            continue;
        printf("REGRESSED: %s\n", line);
        if (!bad++)
            zs_strlcpy(first, line, sizeof first);
    }
    zs_free(a);
    if (bad)
        return zs_err_set(err, ZS_EGATE, "%s%s", first,
                          bad > 1 ? " (and more, listed above)" : "");
    printf("accuracy gate: no error grew by more than %g points over %s\n",
           margin, accpath);
    return 0;
}

/* Writes the current errors to path (temp file + rename) and prints which
 * moved against the previous contents, if any. */
static int pub_write_accuracy(const struct pub_set *s, const char *path,
                              double margin, struct zs_err *err)
{
    struct acc_ent *old = NULL;
    int nold = 0, moved = 0;
    struct zs_err e2 = {0, ""};
    struct zs_afile af;
    FILE *f;
    int rc;

    if (access(path, F_OK) == 0 && acc_read(path, &old, &nold, &e2) != 0)
        fprintf(stderr, "zsim: ignoring the previous '%s': %s\n", path, e2.msg);
    rc = zs_afile_open(&af, NULL, path, err);
    if (rc) {
        zs_free(old);
        return rc;
    }
    f = af.f;
    fprintf(f,
            "{\n  \"schema\": \"%s\",\n  \"margin_pct\": %g,\n"
            "  \"errors\": [\n",
            ZS_ACCURACY_SCHEMA, margin);
    for (int i = 0; i < s->nrows; i++) {
        const struct pub_row *r = &s->rows[i];
        const char *qn = zs_pub_qty_name(r->qty);
        const struct acc_ent *o = acc_find(old, nold, r->run, qn);
        fprintf(f, "    {\"run\": ");
        zs_json_put_str(f, r->run);
        fprintf(f, ", \"quantity\": \"%s\", \"error_pct\": ", qn);
        if (isfinite(r->err_pct))
            fprintf(f, "%.2f", round2(r->err_pct));
        else
            fputs("null", f);
        fputs(i + 1 < s->nrows ? "},\n" : "}\n", f);
        if (!o)
            printf("added  %-48s %-22s %+8.2f %%\n", r->run, qn, r->err_pct);
        else if (!(fabs(round2(r->err_pct) - o->err_pct) < 0.005) &&
                 (isfinite(r->err_pct) || isfinite(o->err_pct))) {
            printf("moved  %-48s %-22s %+8.2f %% -> %+8.2f %%\n", r->run, qn,
                   o->err_pct, r->err_pct);
            moved++;
        }
    }
    fputs("  ]\n}\n", f);
    zs_free(old);
    rc = zs_afile_commit(&af, err);
    if (rc)
        return rc;
    printf("wrote %s: %d errors, %d moved\n", path, s->nrows, moved);
    return 0;
}

static int run_published(const struct zs_args *a, const char *dir,
                         struct zs_err *err)
{
    struct pub_set s;
    const char *acc = zs_args_get(a, g_opts, NOPTS, "accuracy");
    const char *wr = zs_args_get(a, g_opts, NOPTS, "write-accuracy");
    double margin = 2;
    int rc;

    rc = parse_pct("margin", zs_args_get(a, g_opts, NOPTS, "margin"), &margin,
                   err);
    if (rc)
        return rc;
    rc = pub_load(dir, &s, err);
    if (rc)
        return rc;
    if (wr) {
        rc = pub_write_accuracy(&s, wr, margin, err);
    } else if (zs_args_get(a, g_opts, NOPTS, "json")) {
        cJSON *doc = pub_json(&s);
        char *text = doc ? cJSON_Print(doc) : NULL;
        cJSON_Delete(doc);
        if (!text) {
            rc = zs_err_set(err, ZS_ENOMEM, "out of memory");
        } else {
            fputs(text, stdout);
            fputc('\n', stdout);
            cJSON_free(text);
        }
    } else {
        rc = pub_print_text(dir, &s);
        if (rc)
            zs_err_set(err, rc, "out of memory");
    }
    if (!rc && acc)
        rc = pub_gate(&s, acc, margin, err);
    pub_set_free(&s);
    return rc;
}

static int run(int argc, char **argv, struct zs_err *err)
{
    struct zs_args a;
    struct zs_measured m;
    struct zs_validation v;
    const char *mpath, *spath;
    double mem_lim = 5, time_lim = 10;
    int rc;

    rc = zs_args_parse(argc, argv, g_opts, NOPTS, "validate", &a, err);
    if (rc)
        return rc;
    if (a.npos)
        return zs_err_set(err, ZS_EUSAGE,
                          "unexpected argument '%s' for 'validate' (the file "
                          "goes after --measured)",
                          a.pos[0]);
    mpath = zs_args_get(&a, g_opts, NOPTS, "measured");
    spath = zs_args_get(&a, g_opts, NOPTS, "schedule");
    if (zs_args_get(&a, g_opts, NOPTS, "published")) {
        if (mpath || spath)
            return zs_err_set(err, ZS_EUSAGE,
                              "'--published' compares the corpus: it takes "
                              "no --measured or --schedule");
        return run_published(&a, zs_args_get(&a, g_opts, NOPTS, "published"),
                             err);
    }
    if (zs_args_get(&a, g_opts, NOPTS, "accuracy") ||
        zs_args_get(&a, g_opts, NOPTS, "write-accuracy") ||
        zs_args_get(&a, g_opts, NOPTS, "margin"))
        return zs_err_set(err, ZS_EUSAGE,
                          "'--accuracy', '--write-accuracy' and '--margin' "
                          "need '--published DIR'");
    if (!mpath)
        return zs_err_set(err, ZS_EUSAGE,
                          "'validate' needs --measured FILE (see 'zsim "
                          "validate --help')");
    rc = parse_pct("max-mem-err", zs_args_get(&a, g_opts, NOPTS, "max-mem-err"),
                   &mem_lim, err);
    if (!rc)
        rc = parse_pct("max-time-err",
                       zs_args_get(&a, g_opts, NOPTS, "max-time-err"),
                       &time_lim, err);
    if (rc)
        return rc;

    rc = zs_measured_read(mpath, &m, err);
    if (rc)
        return rc;
    if (spath) {
        rc = take_predictions(&m, mpath, spath, err);
        if (rc)
            goto out;
    }
    if (!m.has_pred) {
        rc =
            zs_err_set(err, ZS_EUSAGE,
                       "'%s' holds no predictions ('predicted' is null): "
                       "pass the schedule of the same run with --schedule FILE",
                       mpath);
        goto out;
    }
    zs_validation_compute(&m, mem_lim, time_lim, &v);
    if (zs_args_get(&a, g_opts, NOPTS, "json"))
        rc = print_json(mpath, &m, &v, mem_lim, time_lim, err);
    else
        rc = print_text(mpath, &m, &v, mem_lim, time_lim);
    if (rc) {
        if (!err->msg[0])
            zs_err_set(err, rc, "out of memory");
        goto out;
    }
    if (!v.ok) {
        for (int k = 0; k < v.nq; k++)
            if (!v.q[k].ok) {
                rc = zs_err_set(err, ZS_EGATE,
                                "validation failed for '%s': %s error %+.1f %% "
                                "exceeds %g %%",
                                mpath, v.q[k].label, v.q[k].err_pct,
                                v.q[k].limit_pct);
                break;
            }
    }
out:
    zs_measured_release(&m);
    return rc;
}

const struct zs_cmd zs_cmd_validate = {
    "validate",
    "compare predictions with a measurement from a real GPU (harness/)",
    g_usage,
    run,
};
