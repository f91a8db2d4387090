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
#include "out/measured_io.h"
#include "out/schedule_io.h"
#include "util/alloc.h"
#include "util/table.h"
#include "util/units.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char g_usage[] =
    "usage: zsim validate --measured FILE [--schedule FILE] [--json]\n"
    "                     [--max-mem-err PCT] [--max-time-err PCT]\n"
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
    "\n"
    "exit codes: 0 within limits, 1 i/o failure, 2 usage error,\n"
    "            3 invalid input file, 4 an error exceeds its limit\n";

static const struct zs_opt g_opts[] = {
    {"measured", 1},    {"schedule", 1},     {"json", 0},
    {"max-mem-err", 1}, {"max-time-err", 1},
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
