/*
 * report_compare.c — baselines (files and tags), tolerances, and the
 * comparison of the latest runs against a baseline; see report.h.
 *
 * Baseline file ("zsim.baseline/1", one per scenario, reports/baseline/):
 *   {"schema": "zsim.baseline/1", "scenario": "qwen72b-sft",
 *    "kind": "simulate", "verdict": "fits", "zsim_version": "0.1.0",
 *    "metrics": {"peak_gpu_allocated_bytes": 57016123801, ...,
 *                "step_time_s": 47.12, "tokens_per_s_per_gpu": 695.4}}
 * A metric is null when the run has no such figure (an OOM has no step).
 *
 * Deltas are relative to the baseline: (current - baseline) / baseline.
 * A metric is worse when it moves against its direction (memory and step
 * time up, tokens/s down) by more than its tolerance.
 */
#include "store/report.h"
#include "store/report_int.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/strutil.h"
#include "util/table.h"
#include "util/units.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NF(t) (sizeof(t) / sizeof((t)[0]))

/* ---- tolerances -----------------------------------------------------------
 */

void zs_tolerance_default(struct zs_tolerance *tol)
{
    for (int i = 0; i < ZS_M_COUNT; i++)
        tol->frac[i] = ZS_TOLERANCE_DEFAULT;
}

/* "2", "2.5", "0.25" followed by '%' and the end: a percentage in [0, 100].
 * Own digit loop: the user's LC_NUMERIC must not change what "2.5%" means. */
static int parse_pct(const char *s, size_t n, double *frac)
{
    double v = 0, scale = 0.1;
    size_t i = 0, digits = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        v = v * 10 + (s[i++] - '0');
        digits++;
    }
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            v += scale * (s[i++] - '0');
            scale /= 10;
            digits++;
        }
    }
    if (!digits || digits > 12 || i + 1 != n || s[i] != '%' || v > 100)
        return -1;
    *frac = v / 100;
    return 0;
}

static int tol_usage(const char *spec, struct zs_err *err)
{
    return zs_err_set(err, ZS_EUSAGE,
                      "invalid --tolerance '%s': must be a percentage in [0%%, "
                      "100%%] such as '2%%', optionally with per-metric "
                      "overrides such as '2%%,step_time_s=5%%'",
                      spec);
}

int zs_tolerance_parse(const char *spec, struct zs_tolerance *tol,
                       struct zs_err *err)
{
    struct zs_tolerance t;
    const char *p = spec;
    int have_default = 0;

    zs_tolerance_default(&t);
    if (!*spec)
        return tol_usage(spec, err);
    while (*p) {
        size_t n = strcspn(p, ",");
        const char *eq = memchr(p, '=', n);
        double frac;
        if (!eq) {
            if (have_default || parse_pct(p, n, &frac))
                return tol_usage(spec, err);
            for (int i = 0; i < ZS_M_COUNT; i++)
                if (t.frac[i] >= 0) /* not set per metric */
                    t.frac[i] = frac;
            have_default = 1;
        } else {
            char name[64];
            size_t kn = (size_t)(eq - p);
            int m;
            zs_strlcpy(name, p, kn + 1 < sizeof name ? kn + 1 : sizeof name);
            m = zs_metric_find(name);
            if (m < 0) {
                const char *names[ZS_M_COUNT];
                int best;
                for (int i = 0; i < ZS_M_COUNT; i++)
                    names[i] = zs_metric_infos[i].name;
                best = zs_str_closest(name, names, ZS_M_COUNT);
                if (best >= 0)
                    return zs_err_set(
                        err, ZS_EUSAGE,
                        "invalid --tolerance '%s': unknown metric "
                        "'%s': did you mean '%s'?",
                        spec, name, names[best]);
                return zs_err_set(err, ZS_EUSAGE,
                                  "invalid --tolerance '%s': unknown metric "
                                  "'%s' (metrics: peak_gpu_allocated_bytes, "
                                  "peak_gpu_reserved_bytes, "
                                  "peak_host_bytes_per_node, step_time_s, "
                                  "tokens_per_s_per_gpu)",
                                  spec, name);
            }
            if (parse_pct(eq + 1, n - kn - 1, &frac))
                return tol_usage(spec, err);
            /* A per-metric value wins over a default given after it. */
            t.frac[m] = -1 - frac;
        }
        p += n;
        if (*p == ',') {
            p++;
            if (!*p)
                return tol_usage(spec, err);
        }
    }
    for (int i = 0; i < ZS_M_COUNT; i++)
        if (t.frac[i] < 0)
            t.frac[i] = -1 - t.frac[i];
    *tol = t;
    return 0;
}

/* ---- baselines ------------------------------------------------------------
 */

static const char *const g_base_schemas[] = {"zsim.baseline/1", NULL};
static const char *const g_kinds[] = {"simulate", "plan", NULL};
/* zs_verdict_names without "unknown": a baseline always knows its verdict. */
static const char *const g_base_verdicts[] = {"fits", "gpu_oom", "host_oom",
                                              "none_fits", NULL};

struct base_top {
    int schema, kind, verdict;
    char scenario[208];
    char version[32];
};
static const struct zs_field g_base_fields[] = {
    {"schema", ZS_F_ENUM, offsetof(struct base_top, schema), 0, 0, 0,
     ZS_F_REQUIRED, g_base_schemas, 0, NULL},
    {"scenario", ZS_F_STRING, offsetof(struct base_top, scenario), 0, 0, 0,
     ZS_F_REQUIRED, NULL, sizeof(((struct base_top *)0)->scenario), NULL},
    {"kind", ZS_F_ENUM, offsetof(struct base_top, kind), 0, 0, 0, ZS_F_REQUIRED,
     g_kinds, 0, NULL},
    {"verdict", ZS_F_ENUM, offsetof(struct base_top, verdict), 0, 0, 0,
     ZS_F_REQUIRED, g_base_verdicts, 0, NULL},
    {"zsim_version", ZS_F_STRING, offsetof(struct base_top, version), 0, 0, 0,
     ZS_F_NULLABLE, NULL, sizeof(((struct base_top *)0)->version), ""},
    {"metrics", ZS_F_CUSTOM, 0, 0, 0, 0, 0, NULL, 0, NULL},
    {"comment", ZS_F_SKIP, 0, 0, 0, 0, 0, NULL, 0, NULL},
};

static const struct zs_field g_metric_fields[ZS_M_COUNT] = {
    {"peak_gpu_allocated_bytes", ZS_F_DOUBLE,
     ZS_M_PEAK_GPU_ALLOC * sizeof(double), 0, (double)ZS_BYTES_MAX, NAN,
     ZS_F_NULLABLE, NULL, 0, NULL},
    {"peak_gpu_reserved_bytes", ZS_F_DOUBLE,
     ZS_M_PEAK_GPU_RESERVED * sizeof(double), 0, (double)ZS_BYTES_MAX, NAN,
     ZS_F_NULLABLE, NULL, 0, NULL},
    {"peak_host_bytes_per_node", ZS_F_DOUBLE, ZS_M_PEAK_HOST * sizeof(double),
     0, (double)ZS_BYTES_MAX, NAN, ZS_F_NULLABLE, NULL, 0, NULL},
    {"step_time_s", ZS_F_DOUBLE, ZS_M_STEP_TIME * sizeof(double), 0, 1e12, NAN,
     ZS_F_NULLABLE, NULL, 0, NULL},
    {"tokens_per_s_per_gpu", ZS_F_DOUBLE, ZS_M_TOKENS * sizeof(double), 0, 1e15,
     NAN, ZS_F_NULLABLE, NULL, 0, NULL},
};

void zs_baseline_release(struct zs_baseline *b)
{
    zs_free(b->e);
    b->e = NULL;
    b->n = b->cap = 0;
}

static struct zs_baseline_entry *add_entry(struct zs_baseline *b)
{
    if (zs_grow((void **)&b->e, &b->cap, b->n + 1, sizeof *b->e))
        return NULL;
    memset(&b->e[b->n], 0, sizeof b->e[b->n]);
    return &b->e[b->n++];
}

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const struct zs_baseline_entry *)a)->scenario,
                  ((const struct zs_baseline_entry *)b)->scenario);
}

static int read_file(const char *path, struct zs_baseline *b,
                     struct zs_err *err)
{
    cJSON *root;
    struct zs_json_src src;
    struct base_top t;
    struct zs_baseline_entry *e;
    int rc = zs_json_parse_file(path, &root, &src, err);
    if (rc)
        return rc;
    zs_json_defaults(g_base_fields, NF(g_base_fields), &t);
    rc = zs_json_read(&src, root, "", g_base_fields, NF(g_base_fields), &t, 0,
                      err);
    if (rc)
        goto out;
    if (!(e = add_entry(b))) {
        rc = zs_err_set(err, ZS_ENOMEM, "out of memory reading '%s'", path);
        goto out;
    }
    zs_json_defaults(g_metric_fields, ZS_M_COUNT, e->metric);
    if (!cJSON_GetObjectItemCaseSensitive(root, "metrics")) {
        b->n--;
        rc = zs_err_set(
            err, ZS_EINPUT,
            "missing 'metrics' in %s: required, an object of "
            "peak_gpu_allocated_bytes, peak_gpu_reserved_bytes, "
            "peak_host_bytes_per_node, step_time_s, tokens_per_s_per_gpu",
            path);
        goto out;
    }
    rc =
        zs_json_read(&src, cJSON_GetObjectItemCaseSensitive(root, "metrics"),
                     "metrics", g_metric_fields, ZS_M_COUNT, e->metric, 0, err);
    if (rc) {
        b->n--;
        goto out;
    }
    zs_strlcpy(e->scenario, t.scenario, sizeof e->scenario);
    zs_strlcpy(e->kind, g_kinds[t.kind], sizeof e->kind);
    zs_strlcpy(e->version, t.version, sizeof e->version);
    e->verdict = t.verdict;
out:
    cJSON_Delete(root);
    zs_json_src_release(&src);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int read_dir(const char *dir, struct zs_baseline *b, struct zs_err *err)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;

    if (!d)
        return zs_err_set(err, ZS_EINPUT, "cannot open baseline folder '%s'",
                          dir);
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || !zs_str_endswith(de->d_name, ".json"))
            continue;
        if (zs_grow((void **)&names, &cap, n + 1, sizeof *names) ||
            !(names[n] = zs_strdup(de->d_name))) {
            rc = zs_err_set(err, ZS_ENOMEM, "out of memory reading '%s'", dir);
            break;
        }
        n++;
    }
    closedir(d);
    if (!rc && n == 0)
        rc = zs_err_set(err, ZS_EINPUT,
                        "baseline folder '%s' has no *.json files: write them "
                        "with 'zsim report --db FILE --write-baseline %s'",
                        dir, dir);
    if (!rc)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; !rc && i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        rc = read_file(path, b, err);
    }
    for (size_t i = 0; i < n; i++)
        zs_free(names[i]);
    zs_free(names);
    return rc;
}

static int check_unique(struct zs_baseline *b, struct zs_err *err)
{
    if (b->n)
        qsort(b->e, b->n, sizeof *b->e, cmp_entry);
    for (size_t i = 1; i < b->n; i++)
        if (strcmp(b->e[i - 1].scenario, b->e[i].scenario) == 0)
            return zs_err_set(err, ZS_EINPUT,
                              "duplicate scenario '%s' in baseline '%s'",
                              b->e[i].scenario, b->ref);
    return 0;
}

int zs_baseline_read_path(const char *path, struct zs_baseline *b,
                          struct zs_err *err)
{
    DIR *d;
    int rc;
    memset(b, 0, sizeof *b);
    zs_strlcpy(b->ref, path, sizeof b->ref);
    d = opendir(path);
    if (d) {
        closedir(d);
        rc = read_dir(path, b, err);
    } else {
        rc = read_file(path, b, err);
    }
    if (!rc)
        rc = check_unique(b, err);
    if (rc)
        zs_baseline_release(b);
    return rc;
}

static int entry_from_run(const struct zs_run *r, struct zs_baseline_entry *e,
                          struct zs_err *err)
{
    struct zs_rdoc doc;
    char name[64];
    int rc;
    snprintf(name, sizeof name, "stored run %lld", (long long)r->id);
    rc = zs_rdoc_parse(name, r->doc, r->doc_len, &doc, err);
    if (rc)
        return rc;
    zs_strlcpy(e->scenario, r->scenario, sizeof e->scenario);
    zs_strlcpy(e->kind, r->kind, sizeof e->kind);
    zs_strlcpy(e->version, r->version, sizeof e->version);
    e->verdict = doc.verdict;
    memcpy(e->metric, doc.metric, sizeof e->metric);
    zs_rdoc_release(&doc);
    return 0;
}

int zs_baseline_from_runs(const struct zs_run_list *runs, const char *ref,
                          struct zs_baseline *b, struct zs_err *err)
{
    int rc = 0;
    memset(b, 0, sizeof *b);
    zs_strlcpy(b->ref, ref, sizeof b->ref);
    for (size_t i = 0; !rc && i < runs->n; i++) {
        struct zs_baseline_entry *e = add_entry(b);
        if (!e)
            rc = zs_err_set(err, ZS_ENOMEM, "out of memory reading runs");
        else if ((rc = entry_from_run(&runs->runs[i], e, err)))
            b->n--;
    }
    if (!rc)
        rc = check_unique(b, err);
    if (rc)
        zs_baseline_release(b);
    return rc;
}

static void json_metric(struct zs_rbuf *o, const struct zs_baseline_entry *e,
                        int m)
{
    char num[64];
    zs_rbuf_printf(o, "    \"%s\": ", zs_metric_infos[m].name);
    if (isnan(e->metric[m]))
        zs_rbuf_puts(o, "null");
    else
        zs_rbuf_puts(o, zs_fmt_num(num, sizeof num, e->metric[m]));
    zs_rbuf_puts(o, m + 1 < ZS_M_COUNT ? ",\n" : "\n");
}

int zs_baseline_write(const struct zs_run_list *runs, const char *dir,
                      size_t *nwritten, struct zs_err *err)
{
    char(*stems)[216] = NULL;
    int rc;

    *nwritten = 0;
    if ((rc = zs_mkdir_p(dir, err)))
        return rc;
    if (runs->n && !(stems = zs_calloc(runs->n, sizeof *stems)))
        return zs_err_set(err, ZS_ENOMEM, "out of memory writing a baseline");
    for (size_t i = 0; !rc && i < runs->n; i++) {
        struct zs_baseline_entry e;
        struct zs_rbuf o;
        char name[232];
        memset(&e, 0, sizeof e);
        if ((rc = entry_from_run(&runs->runs[i], &e, err)))
            break;
        /* Scenario names that sanitise alike get numbered stems. */
        zs_file_stem(e.scenario, stems[i], 200);
        for (size_t j = 0, k = 2; j < i; j++)
            if (strcmp(stems[i], stems[j]) == 0) {
                char base[200];
                zs_file_stem(e.scenario, base, sizeof base);
                snprintf(stems[i], sizeof stems[i], "%s-%zu", base, k++);
                j = (size_t)-1; /* recheck against all */
            }
        zs_rbuf_init(&o);
        zs_rbuf_puts(&o,
                     "{\n  \"schema\": \"zsim.baseline/1\",\n  \"scenario\": ");
        zs_rbuf_json_str(&o, e.scenario);
        zs_rbuf_printf(&o,
                       ",\n  \"kind\": \"%s\",\n  \"verdict\": \"%s\",\n"
                       "  \"zsim_version\": ",
                       e.kind, zs_verdict_names[e.verdict]);
        zs_rbuf_json_str(&o, e.version);
        zs_rbuf_puts(&o, ",\n  \"metrics\": {\n");
        for (int m = 0; m < ZS_M_COUNT; m++)
            json_metric(&o, &e, m);
        zs_rbuf_puts(&o, "  }\n}\n");
        snprintf(name, sizeof name, "%s.json", stems[i]);
        rc = zs_rbuf_write_atomic(&o, dir, name, err);
        zs_rbuf_release(&o);
        if (!rc)
            (*nwritten)++;
    }
    zs_free(stems);
    return rc;
}

/* ---- comparison -----------------------------------------------------------
 */

enum cstatus {
    CS_OK,
    CS_REGRESSED,
    CS_IMPROVED,
    CS_CHANGED,
    CS_MISSING,
    CS_NEW,
    CS_SKIPPED
};
static const char *const g_cstatus[] = {
    "ok", "REGRESSED", "improved", "changed", "MISSING", "new", "n/a"};

struct check {
    const char *scenario;
    const char *metric;
    char base[48], cur[48], delta[24], tol[16];
    int status;
    int fails;
    char why[200];
};

static void fmt_value(char *buf, size_t cap, int m, double v)
{
    if (isnan(v))
        snprintf(buf, cap, "-");
    else if (zs_metric_infos[m].is_bytes)
        zs_fmt_bytes(buf, cap, (int64_t)v);
    else if (m == ZS_M_STEP_TIME)
        snprintf(buf, cap, "%.4g s", v);
    else
        snprintf(buf, cap, "%.1f", v);
}

static void fmt_pct(char *buf, size_t cap, double frac)
{
    snprintf(buf, cap, "%.2f%%", frac * 100);
}

static int is_oom(int v)
{
    return v == ZS_VERDICT_GPU_OOM || v == ZS_VERDICT_HOST_OOM ||
           v == ZS_VERDICT_NONE_FITS;
}

static void verdict_check(const struct zs_baseline_entry *b,
                          const struct zs_baseline_entry *c, int strict,
                          struct check *k)
{
    snprintf(k->base, sizeof k->base, "%s", zs_verdict_names[b->verdict]);
    snprintf(k->cur, sizeof k->cur, "%s", zs_verdict_names[c->verdict]);
    snprintf(k->delta, sizeof k->delta, "-");
    snprintf(k->tol, sizeof k->tol, "-");
    if (strcmp(b->kind, c->kind) != 0) {
        k->status = CS_CHANGED;
        k->fails = 1;
        snprintf(k->why, sizeof k->why, "kind changed from %s to %s", b->kind,
                 c->kind);
        snprintf(k->base, sizeof k->base, "%s", b->kind);
        snprintf(k->cur, sizeof k->cur, "%s", c->kind);
    } else if (b->verdict == c->verdict) {
        k->status = CS_OK;
    } else if (b->verdict == ZS_VERDICT_FITS && is_oom(c->verdict)) {
        k->status = CS_REGRESSED;
        k->fails = 1;
        snprintf(k->why, sizeof k->why, "newly infeasible: %s, was fits",
                 zs_verdict_names[c->verdict]);
    } else if (c->verdict == ZS_VERDICT_FITS) {
        k->status = CS_IMPROVED;
        k->fails = strict;
        snprintf(k->why, sizeof k->why, "now fits, was %s",
                 zs_verdict_names[b->verdict]);
    } else {
        k->status = CS_CHANGED;
        k->fails = strict;
        snprintf(k->why, sizeof k->why, "verdict %s, was %s",
                 zs_verdict_names[c->verdict], zs_verdict_names[b->verdict]);
    }
}

static void metric_check(const struct zs_baseline_entry *b,
                         const struct zs_baseline_entry *c, int m, double tol,
                         int strict, struct check *k)
{
    double bv = b->metric[m], cv = c->metric[m], d;
    const struct zs_metric_info *mi = &zs_metric_infos[m];

    fmt_value(k->base, sizeof k->base, m, bv);
    fmt_value(k->cur, sizeof k->cur, m, cv);
    fmt_pct(k->tol, sizeof k->tol, tol);
    snprintf(k->delta, sizeof k->delta, "-");
    if (isnan(bv) && isnan(cv)) {
        k->status = CS_SKIPPED;
        snprintf(k->why, sizeof k->why, "no such figure in baseline or run");
        return;
    }
    if (isnan(bv) || isnan(cv)) {
        /* A figure appears or vanishes with a verdict change, which the
         * verdict check already judges. */
        k->status = CS_CHANGED;
        k->fails = strict && b->verdict == c->verdict;
        snprintf(k->why, sizeof k->why, "%s",
                 isnan(bv) ? "figure new in this run"
                           : "figure absent from this run");
        return;
    }
    d = bv != 0 ? (cv - bv) / bv : (cv == 0 ? 0 : INFINITY);
    if (isinf(d))
        snprintf(k->delta, sizeof k->delta, "+inf");
    else
        snprintf(k->delta, sizeof k->delta, "%+.2f%%", d * 100);
    if ((mi->higher_is_better ? -d : d) > tol) {
        k->status = CS_REGRESSED;
        k->fails = 1;
    } else if ((mi->higher_is_better ? d : -d) > tol) {
        k->status = CS_IMPROVED;
        k->fails = strict;
    } else {
        k->status = CS_OK;
        return;
    }
    snprintf(k->why, sizeof k->why, "%s %s -> %s (%s, tolerance %s)", mi->name,
             k->base, k->cur, k->delta, k->tol);
}

struct cmp_ctx {
    struct check *k;
    size_t n, cap;
};

static struct check *add_check(struct cmp_ctx *c, const char *scenario,
                               const char *metric)
{
    struct check *k;
    if (zs_grow((void **)&c->k, &c->cap, c->n + 1, sizeof *c->k))
        return NULL;
    k = &c->k[c->n++];
    memset(k, 0, sizeof *k);
    k->scenario = scenario;
    k->metric = metric;
    return k;
}

static int write_junit(const struct cmp_ctx *c,
                       const struct zs_compare_stats *s, const char *path,
                       struct zs_err *err)
{
    struct zs_rbuf x;
    size_t nskipped = 0;
    int rc;
    for (size_t q = 0; q < c->n; q++)
        nskipped += !c->k[q].fails &&
                    (c->k[q].status == CS_SKIPPED || c->k[q].status == CS_NEW);
    zs_rbuf_init(&x);
    zs_rbuf_printf(&x,
                   "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                   "<testsuites name=\"zsim regression\" tests=\"%zu\" "
                   "failures=\"%zu\" skipped=\"%zu\">\n",
                   c->n, s->nfailed, nskipped);
    for (size_t i = 0; i < c->n;) {
        size_t j = i, nf = 0, ns = 0;
        for (; j < c->n && strcmp(c->k[j].scenario, c->k[i].scenario) == 0;
             j++) {
            nf += c->k[j].fails;
            ns += !c->k[j].fails &&
                  (c->k[j].status == CS_SKIPPED || c->k[j].status == CS_NEW);
        }
        zs_rbuf_puts(&x, "  <testsuite name=\"");
        zs_rbuf_escape(&x, c->k[i].scenario);
        zs_rbuf_printf(&x,
                       "\" tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\">\n",
                       j - i, nf, ns);
        for (size_t q = i; q < j; q++) {
            const struct check *k = &c->k[q];
            zs_rbuf_puts(&x, "    <testcase classname=\"zsim.regression.");
            zs_rbuf_escape(&x, k->scenario);
            zs_rbuf_puts(&x, "\" name=\"");
            zs_rbuf_escape(&x, k->metric);
            zs_rbuf_puts(&x, "\" time=\"0\"");
            if (k->fails) {
                zs_rbuf_printf(&x, "><failure type=\"%s\" message=\"",
                               g_cstatus[k->status]);
                zs_rbuf_escape(&x, k->why);
                zs_rbuf_puts(&x, "\">baseline ");
                zs_rbuf_escape(&x, k->base);
                zs_rbuf_puts(&x, ", current ");
                zs_rbuf_escape(&x, k->cur);
                zs_rbuf_puts(&x, "</failure></testcase>\n");
            } else if (k->status == CS_SKIPPED || k->status == CS_NEW) {
                zs_rbuf_puts(&x, "><skipped message=\"");
                zs_rbuf_escape(&x, k->why);
                zs_rbuf_puts(&x, "\"/></testcase>\n");
            } else if (k->why[0]) {
                zs_rbuf_puts(&x, "><system-out>");
                zs_rbuf_escape(&x, k->why);
                zs_rbuf_puts(&x, "</system-out></testcase>\n");
            } else {
                zs_rbuf_puts(&x, "/>\n");
            }
        }
        zs_rbuf_puts(&x, "  </testsuite>\n");
        i = j;
    }
    zs_rbuf_puts(&x, "</testsuites>\n");
    rc = zs_rbuf_write_atomic(&x, NULL, path, err);
    zs_rbuf_release(&x);
    return rc;
}

static int print_checks(const struct cmp_ctx *c,
                        const struct zs_compare_stats *s,
                        const struct zs_baseline *base, int strict, FILE *out,
                        struct zs_err *err)
{
    struct zs_table *t = zs_table_new(7, "llrrrrl");
    int rc = t ? 0 : ZS_ENOMEM;
    if (t)
        zs_table_header(t);
    if (!rc)
        rc = zs_table_rowf(
            t, "scenario\tcheck\tbaseline\tcurrent\tdelta\ttolerance\tstatus");
    for (size_t q = 0; !rc && q < c->n; q++) {
        const struct check *k = &c->k[q];
        int say = k->status != CS_OK && k->status != CS_SKIPPED && k->why[0];
        rc = zs_table_rowf(t, "%s\t%s\t%s\t%s\t%s\t%s\t%s%s%s", k->scenario,
                           k->metric, k->base, k->cur, k->delta, k->tol,
                           g_cstatus[k->status], say ? ": " : "",
                           say ? k->why : "");
    }
    if (rc) {
        zs_table_free(t);
        return zs_err_set(err, ZS_ENOMEM, "out of memory comparing runs");
    }
    fprintf(out, "regression check against %s (%zu scenarios)\n", base->ref,
            base->n);
    zs_table_print(t, out, 2);
    zs_table_free(t);
    fprintf(out,
            "%zu checks: %zu ok, %zu regressed, %zu improved, %zu changed, "
            "%zu missing, %zu new, %zu n/a%s: %s\n",
            s->nchecks, s->nok, s->nregressed, s->nimproved, s->nchanged,
            s->nmissing, s->nnew, s->nskipped, strict ? " (strict)" : "",
            s->nfailed ? "FAILED" : "passed");
    return 0;
}

int zs_report_compare(const struct zs_baseline *base,
                      const struct zs_run_list *latest,
                      const struct zs_tolerance *tol, int strict, FILE *out,
                      const char *junit_path, struct zs_compare_stats *s,
                      struct zs_err *err)
{
    struct zs_baseline cur;
    struct cmp_ctx c = {NULL, 0, 0};
    size_t i = 0, j = 0;
    int rc;

    memset(s, 0, sizeof *s);
    rc = zs_baseline_from_runs(latest, "store", &cur, err);
    if (rc)
        return rc;
    /* Merge the two sorted scenario lists. */
    while (i < base->n || j < cur.n) {
        int o = i >= base->n ? 1
                : j >= cur.n ? -1
                             : strcmp(base->e[i].scenario, cur.e[j].scenario);
        struct check *k;
        s->nscenarios++;
        if (o < 0) {
            if (!(k = add_check(&c, base->e[i].scenario, "run")))
                goto nomem;
            k->status = CS_MISSING;
            k->fails = 1;
            snprintf(k->base, sizeof k->base, "%s",
                     zs_verdict_names[base->e[i].verdict]);
            snprintf(k->cur, sizeof k->cur, "-");
            snprintf(k->delta, sizeof k->delta, "-");
            snprintf(k->tol, sizeof k->tol, "-");
            snprintf(k->why, sizeof k->why,
                     "no run of this scenario in the store");
            i++;
        } else if (o > 0) {
            if (!(k = add_check(&c, cur.e[j].scenario, "run")))
                goto nomem;
            k->status = CS_NEW;
            snprintf(k->base, sizeof k->base, "-");
            snprintf(k->cur, sizeof k->cur, "%s",
                     zs_verdict_names[cur.e[j].verdict]);
            snprintf(k->delta, sizeof k->delta, "-");
            snprintf(k->tol, sizeof k->tol, "-");
            snprintf(k->why, sizeof k->why, "not in the baseline");
            j++;
        } else {
            if (!(k = add_check(&c, cur.e[j].scenario, "verdict")))
                goto nomem;
            verdict_check(&base->e[i], &cur.e[j], strict, k);
            for (int m = 0; m < ZS_M_COUNT; m++) {
                if (!(k = add_check(&c, cur.e[j].scenario,
                                    zs_metric_infos[m].name)))
                    goto nomem;
                metric_check(&base->e[i], &cur.e[j], m, tol->frac[m], strict,
                             k);
            }
            i++;
            j++;
        }
    }
    for (size_t q = 0; q < c.n; q++) {
        const struct check *k = &c.k[q];
        size_t *cnt[] = {&s->nok,      &s->nregressed, &s->nimproved,
                         &s->nchanged, &s->nmissing,   &s->nnew,
                         &s->nskipped};
        (*cnt[k->status])++;
        s->nfailed += (size_t)k->fails;
    }
    s->nchecks = c.n;
    if (out && (rc = print_checks(&c, s, base, strict, out, err)))
        goto done;
    rc = junit_path ? write_junit(&c, s, junit_path, err) : 0;
done:
    zs_free(c.k);
    zs_baseline_release(&cur);
    return rc;
nomem:
    zs_free(c.k);
    zs_baseline_release(&cur);
    return zs_err_set(err, ZS_ENOMEM, "out of memory comparing runs");
}
