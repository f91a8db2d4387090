/*
 * validateout.c — see validateout.h.  `zsim validate`: predicted against
 * measured for one measured file (text and zsim.validate/1), and for the
 * published corpus (text and zsim.validate-published/1).
 */
#include "present/validateout.h"
#include "present/emit.h"
#include "util/alloc.h"
#include "util/table.h"
#include "util/units.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* What was measured, on what, with which software. */
static void measured_header(const char *path, const struct zs_measured *m)
{
    const struct zs_sched_header *h = &m->header;
    const struct zs_meas_env *e = &m->env;

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
}

/* One task class (or the total): tasks, predicted and measured seconds
 * ("-" when it has no tasks), error. */
static void class_row(struct zs_table *t, const char *label,
                      const struct zs_vclass_row *r)
{
    char a[48] = "-", b[48] = "-", c[48];
    if (r->tasks) {
        fmt_secs(a, sizeof a, r->pred_s);
        fmt_secs(b, sizeof b, r->meas_s);
    }
    fmt_err(c, sizeof c, r->err_pct);
    zs_table_rowf(t, "%s\t%lld\t%s\t%s\t%s", label, (long long)r->tasks, a, b,
                  c);
}

static int class_table(const struct zs_validation *v)
{
    struct zs_table *t = zs_emit_table(
        5, "lrrrr", "task class\ttasks\tpredicted\tmeasured\terror");
    if (!t)
        return ZS_ENOMEM;
    for (int k = 0; k < ZS_VC_COUNT; k++)
        class_row(t, zs_vclass_name(k), &v->cls[k]);
    class_row(t, "all timed tasks", &v->total);
    zs_table_print(t, stdout, 2);
    zs_table_free(t);
    if (v->skipped || v->unpredicted)
        printf(
            "  (%lld task%s skipped on one GPU, %lld without a prediction)\n",
            (long long)v->skipped, v->skipped == 1 ? "" : "s",
            (long long)v->unpredicted);
    printf("\n");
    return 0;
}

static int quantity_table(const struct zs_validation *v)
{
    struct zs_table *t = zs_emit_table(
        5, "lrrrr", "quantity\tpredicted\tmeasured\terror\tlimit");
    char a[48], b[48], c[48], d[48];
    if (!t)
        return ZS_ENOMEM;
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
    return 0;
}

int zs_validateout_text(const char *path, const struct zs_measured *m,
                        const struct zs_validation *v, double mem_lim,
                        double time_lim)
{
    int rc;
    measured_header(path, m);
    rc = class_table(v);
    if (!rc)
        rc = quantity_table(v);
    if (rc)
        return rc;
    printf("\n%s: memory within %g %%, step time within %g %%\n",
           v->ok ? "ok" : "FAIL", mem_lim, time_lim);
    return 0;
}

double zs_validateout_round2(double x)
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
    add_num_or_null(o, "error_pct", zs_validateout_round2(r->err_pct), 1);
    cJSON_AddNumberToObject(o, "bytes", r->bytes);
    cJSON_AddNumberToObject(o, "flops", r->flops);
    return o;
}

/* The measured file's header and environment, as measured_header words
 * them. */
static void measured_json(cJSON *doc, const char *path,
                          const struct zs_measured *m)
{
    const struct zs_sched_header *h = &m->header;
    const struct zs_meas_env *e = &m->env;
    const struct zs_emit_field head[] = {
        ZS_JSTR("schema", "zsim.validate/1"),
        ZS_JSTR("measured_file", path),
        ZS_JSTR("kind", zs_meas_kind_name(m->kind)),
        ZS_JSTR("model", h->model),
        ZS_JSTR("hardware", h->hardware),
        ZS_JSTR("gpu", h->gpu),
        ZS_JSTR("framework", h->framework),
        ZS_JSTR("config", h->config),
        ZS_JNUM("rank", h->rank),
        ZS_JNUM("world", h->world),
        ZS_JNUM("steps", h->steps),
    };
    const struct zs_emit_field env[] = {
        ZS_JSTR("gpu", e->gpu),
        ZS_JSTR("driver", e->driver),
        ZS_JSTR("cuda", e->cuda),
        ZS_JNUM("sm_clock_mhz", e->sm_clock_mhz),
        ZS_JNUM("mem_clock_mhz", e->mem_clock_mhz),
        ZS_JSTR("date", e->date),
        ZS_JSTR("allocator", e->allocator),
        ZS_JSTR("tool", e->tool),
    };
    zs_emit_fields(doc, head, ZS_EMIT_COUNT(head));
    zs_emit_fields(cJSON_AddObjectToObject(doc, "environment"), env,
                   ZS_EMIT_COUNT(env));
}

int zs_validateout_json(const char *path, const struct zs_measured *m,
                        const struct zs_validation *v, double mem_lim,
                        double time_lim, struct zs_err *err)
{
    static const char *const units[] = {"bytes", "s", "bytes_per_s",
                                        "flops_per_s"};
    cJSON *doc = cJSON_CreateObject(), *o, *arr;
    char *text;

    if (!doc)
        return zs_err_set(err, ZS_ENOMEM, "out of memory");
    measured_json(doc, path, m);
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
        add_num_or_null(qo, "error_pct", zs_validateout_round2(q->err_pct), 1);
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

/* Median and p90 of |error| per quantity and framework ("all" too).  After
 * the three GPU memory quantities, their figures together
 * (PUB_QTY_GPU_MEMORY, "peak_gpu_memory"): the accuracy issue's target is
 * one for peak GPU memory, whichever counter a source reports. */
#define PUB_QTY_GPU_MEMORY (-1)

struct pub_stat {
    int qty; /* enum zs_pub_qty, or PUB_QTY_GPU_MEMORY */
    const char *fw;
    int n;
    double median, p90;
};

static const char *stat_qty_name(int qty)
{
    return qty == PUB_QTY_GPU_MEMORY ? "peak_gpu_memory" : zs_pub_qty_name(qty);
}

static bool stat_qty_has(int qty, int row_qty)
{
    if (qty == PUB_QTY_GPU_MEMORY)
        return row_qty == ZS_PQ_GPU_ALLOCATED || row_qty == ZS_PQ_GPU_RESERVED ||
               row_qty == ZS_PQ_GPU_USED;
    return qty == row_qty;
}

static int pub_stats(const struct zs_pub_set *s, struct pub_stat *out, int cap)
{
    static const char *const fws[] = {"all", "deepspeed", "fsdp2"};
    static const int order[] = {ZS_PQ_STEP_TIME,     ZS_PQ_TOKENS,
                                ZS_PQ_GPU_ALLOCATED, ZS_PQ_GPU_RESERVED,
                                ZS_PQ_GPU_USED,      PUB_QTY_GPU_MEMORY,
                                ZS_PQ_HOST_PER_NODE};
    double *v = zs_calloc((size_t)s->nrows + 1, sizeof *v);
    int nout = 0;
    _Static_assert(sizeof order / sizeof order[0] == ZS_PQ_COUNT + 1,
                   "every quantity has its place in the summary");
    if (!v)
        return -1;
    for (size_t o = 0; o < sizeof order / sizeof order[0]; o++)
        for (int f = 0; f < 3; f++) {
            int q = order[o], n = 0;
            for (int i = 0; i < s->nrows; i++)
                if (stat_qty_has(q, s->rows[i].qty) &&
                    isfinite(s->rows[i].err_pct) &&
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

/* The accuracy issue's bands of |error| (published_set.h; the README's "What
 * is left" lists the figures beyond 25 % and the ones from 15 %): the rows
 * beyond ZS_PUB_BAND_HI in order of |error|, largest first, each with the
 * mechanism its file names as missing, and how many lie in [ZS_PUB_BAND_LO,
 * ZS_PUB_BAND_HI]. */

struct pub_band_row {
    double abs_err;
    int row;
};

struct pub_bands {
    struct pub_band_row *over; /* beyond the upper band, largest first */
    int nover, nmid, nall;
};

static int band_cmp(const void *a, const void *b)
{
    const struct pub_band_row *x = a, *y = b;
    if (x->abs_err != y->abs_err)
        return x->abs_err > y->abs_err ? -1 : 1;
    return x->row - y->row; /* equal errors keep the corpus order */
}

/* 0, or -1 out of memory; release bd->over with zs_free. */
static int pub_bands(const struct zs_pub_set *s, struct pub_bands *bd)
{
    memset(bd, 0, sizeof *bd);
    bd->over = zs_calloc((size_t)s->nrows + 1, sizeof *bd->over);
    if (!bd->over)
        return -1;
    for (int i = 0; i < s->nrows; i++) {
        enum zs_pub_band band = zs_pub_band_of(s->rows[i].err_pct);
        bd->nall += band != ZS_PUB_NO_BAND;
        if (band == ZS_PUB_OVER) {
            bd->over[bd->nover].abs_err = fabs(s->rows[i].err_pct);
            bd->over[bd->nover++].row = i;
        } else if (band == ZS_PUB_MID)
            bd->nmid++;
    }
    qsort(bd->over, (size_t)bd->nover, sizeof *bd->over, band_cmp);
    return 0;
}

static void pub_bands_text(const struct zs_pub_set *s)
{
    struct pub_bands bd;
    char c[48];
    if (pub_bands(s, &bd))
        return;
    printf("\nbeyond %.0f %%: %d of %d figures%s\n", ZS_PUB_BAND_HI, bd.nover,
           bd.nall, bd.nover ? " (largest first)" : "");
    if (bd.nover) {
        struct zs_table *t = zs_table_new(3, "llr");
        char note[ZS_PUB_TEXT_CAP + 16];
        if (!t) {
            zs_free(bd.over);
            return;
        }
        for (int k = 0; k < bd.nover; k++) {
            const struct zs_pub_row *r = &s->rows[bd.over[k].row];
            fmt_err(c, sizeof c, r->err_pct);
            zs_table_rowf(t, "%s\t%s\t%s", r->run, zs_pub_qty_name(r->qty), c);
            /* each figure's missing mechanism on a line of its own */
            snprintf(note, sizeof note, "  missing: %s",
                     r->missing ? r->missing : "not named in its file");
            zs_table_note(t, note);
        }
        zs_table_print(t, stdout, 2);
        zs_table_free(t);
    }
    printf("%.0f to %.0f %%: %d figures\n", ZS_PUB_BAND_LO, ZS_PUB_BAND_HI,
           bd.nmid);
    zs_free(bd.over);
}

/* zsim's verdict on a run whose source observed an OOM: "host OOM at load:
 * needs 1.07 TiB of 774 GiB", or "fits". */
static void pub_oom_verdict(char *buf, size_t cap, const struct zs_pub_pred *q)
{
    char a[32], b[32];
    if (q->oom_where < 0) {
        snprintf(buf, cap, "fits");
        return;
    }
    zs_fmt_bytes(a, sizeof a, q->oom_needed_bytes);
    zs_fmt_bytes(b, sizeof b, q->oom_available_bytes);
    snprintf(buf, cap, "%s OOM at %s: needs %s of %s",
             zs_pub_oom_where_name(q->oom_where),
             zs_pub_oom_phase_name(q->oom_phase), a, b);
}

/* The runs that died of an OOM, observed against predicted. */
static void pub_observed_oom_text(const struct zs_pub_set *s)
{
    int nobs = 0, nok = 0;
    char v[160];
    for (int i = 0; i < s->n; i++)
        if (s->runs[i].oom.set && !s->runs[i].nneeds) {
            nobs++;
            nok += zs_pub_oom_agrees(&s->runs[i], &s->pred[i]);
        }
    if (!nobs)
        return;
    printf("\nobserved OOM: %d runs, zsim predicts %d of them\n", nobs, nok);
    for (int i = 0; i < s->n; i++) {
        const struct zs_published *p = &s->runs[i];
        if (!p->oom.set || p->nneeds)
            continue;
        pub_oom_verdict(v, sizeof v, &s->pred[i]);
        printf("  %s: %s OOM %s%s; zsim: %s (%s)\n", p->name,
               zs_pub_oom_where_name(p->oom.where),
               p->oom.phase == ZS_POP_ANY ? "(moment not stated)" : "at ",
               p->oom.phase == ZS_POP_ANY ? ""
                                          : zs_pub_oom_phase_name(p->oom.phase),
               v, zs_pub_oom_agrees(p, &s->pred[i]) ? "agrees" : "MISSED");
    }
}

int zs_validateout_pub_text(const char *dir, const struct zs_pub_set *s)
{
    struct zs_table *t = zs_table_new(6, "llrrrr");
    struct pub_stat st[(ZS_PQ_COUNT + 1) * 3];
    char a[48], b[48], c[48];
    int nst, nnot = 0, noom = 0;

    if (!t)
        return ZS_ENOMEM;
    printf("published runs in %s: %d\n\n", dir, s->n);
    zs_table_header(t);
    zs_table_rowf(t, "run\tquantity\tframework\tpredicted\tmeasured\terror");
    for (int i = 0; i < s->nrows; i++) {
        const struct zs_pub_row *r = &s->rows[i];
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
                      stat_qty_name(st[i].qty), st[i].fw, st[i].n,
                      st[i].median, st[i].p90);
    zs_table_print(t, stdout, 2);
    zs_table_free(t);
    printf("  (peak_gpu_memory: the allocated, reserved and used figures "
           "together)\n");
    pub_bands_text(s);

    for (int i = 0; i < s->n; i++) {
        nnot += s->runs[i].nneeds > 0;
        noom += s->pred[i].oom && !s->runs[i].oom.set;
    }
    if (noom) {
        printf("\npredicted OOM although the run fitted: %d\n", noom);
        for (int i = 0; i < s->n; i++)
            if (s->pred[i].oom && !s->runs[i].oom.set)
                printf("  %s: %s\n", s->runs[i].name, s->pred[i].oom_text);
    }
    pub_observed_oom_text(s);
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

void *zs_validateout_pub_json(const struct zs_pub_set *s)
{
    struct pub_stat st[(ZS_PQ_COUNT + 1) * 3];
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
        const struct zs_pub_row *r = &s->rows[i];
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
        add_num_or_null(o, "error_pct", zs_validateout_round2(r->err_pct), 1);
        cJSON_AddItemToArray(arr, o);
    }
    arr = cJSON_AddArrayToObject(doc, "summary");
    for (int i = 0; arr && i < nst; i++) {
        o = cJSON_CreateObject();
        if (!o)
            break;
        cJSON_AddStringToObject(o, "quantity", stat_qty_name(st[i].qty));
        cJSON_AddStringToObject(o, "framework", st[i].fw);
        cJSON_AddNumberToObject(o, "n", st[i].n);
        cJSON_AddNumberToObject(o, "median_abs_error_pct",
                                zs_validateout_round2(st[i].median));
        cJSON_AddNumberToObject(o, "p90_abs_error_pct",
                                zs_validateout_round2(st[i].p90));
        cJSON_AddItemToArray(arr, o);
    }
    {
        struct pub_bands bd;
        if (pub_bands(s, &bd)) {
            cJSON_Delete(doc);
            return NULL;
        }
        o = cJSON_AddObjectToObject(doc, "error_bands");
        if (o) {
            cJSON_AddNumberToObject(o, "figures", bd.nall);
            cJSON_AddNumberToObject(o, "over_pct", ZS_PUB_BAND_HI);
            arr = cJSON_AddArrayToObject(o, "over");
            for (int k = 0; arr && k < bd.nover; k++) {
                const struct zs_pub_row *r = &s->rows[bd.over[k].row];
                cJSON *e = cJSON_CreateObject();
                if (!e)
                    break;
                cJSON_AddStringToObject(e, "run", r->run);
                cJSON_AddStringToObject(e, "quantity", zs_pub_qty_name(r->qty));
                cJSON_AddNumberToObject(e, "error_pct",
                                        zs_validateout_round2(r->err_pct));
                if (r->missing)
                    cJSON_AddStringToObject(e, "missing", r->missing);
                else
                    cJSON_AddNullToObject(e, "missing");
                cJSON_AddItemToArray(arr, e);
            }
            cJSON_AddNumberToObject(o, "from_pct", ZS_PUB_BAND_LO);
            cJSON_AddNumberToObject(o, "between", bd.nmid);
        }
        zs_free(bd.over);
    }
    arr = cJSON_AddArrayToObject(doc, "predicted_oom");
    for (int i = 0; arr && i < s->n; i++)
        if (s->pred[i].oom && !s->runs[i].oom.set) {
            o = cJSON_CreateObject();
            if (!o)
                break;
            cJSON_AddStringToObject(o, "run", s->runs[i].name);
            cJSON_AddStringToObject(o, "why", s->pred[i].oom_text);
            cJSON_AddItemToArray(arr, o);
        }
    arr = cJSON_AddArrayToObject(doc, "observed_oom");
    for (int i = 0; arr && i < s->n; i++) {
        const struct zs_published *p = &s->runs[i];
        const struct zs_pub_pred *q = &s->pred[i];
        if (!p->oom.set || p->nneeds)
            continue;
        o = cJSON_CreateObject();
        if (!o)
            break;
        cJSON_AddStringToObject(o, "run", p->name);
        cJSON_AddStringToObject(o, "where",
                                zs_pub_oom_where_name(p->oom.where));
        cJSON_AddStringToObject(o, "phase",
                                zs_pub_oom_phase_name(p->oom.phase));
        if (q->oom_where >= 0) {
            cJSON_AddStringToObject(o, "predicted_where",
                                    zs_pub_oom_where_name(q->oom_where));
            cJSON_AddStringToObject(o, "predicted_phase",
                                    zs_pub_oom_phase_name(q->oom_phase));
            cJSON_AddNumberToObject(o, "needed_bytes",
                                    (double)q->oom_needed_bytes);
            cJSON_AddNumberToObject(o, "available_bytes",
                                    (double)q->oom_available_bytes);
        } else {
            cJSON_AddNullToObject(o, "predicted_where");
            cJSON_AddNullToObject(o, "predicted_phase");
            cJSON_AddNullToObject(o, "needed_bytes");
            cJSON_AddNullToObject(o, "available_bytes");
        }
        cJSON_AddBoolToObject(o, "agrees", zs_pub_oom_agrees(p, q));
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
