/*
 * published_io.c — reader of "zsim.published/1" and the predictions for one
 * published run; see published_io.h and docs/validation.md.
 *
 * Table-driven like measured_io.c: every key has a type and a range, unknown
 * keys are errors, and each message names file:line:column and the field.
 */
#include "validate/published_io.h"
#include "formats/schedule_io.h"
#include "formats/schedule_io_int.h"
#include "run/run.h"
#include "sched/sched.h"
#include "train/cfg_args.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/strutil.h"
#include "util/units.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define NF(a) (sizeof(a) / sizeof((a)[0]))

static const char *const g_qty_names[] = {"step_time",
                                          "tokens_per_s_per_gpu",
                                          "peak_gpu_allocated",
                                          "peak_gpu_reserved",
                                          "peak_gpu_used",
                                          "peak_host_per_node",
                                          NULL};
static const char *const g_when_names[] = {"peak", "steady", NULL};
static const char *const g_unit_names[] = {"s",  "ms",  "tokens/s", "GiB",
                                           "GB", "MiB", "MB",       NULL};
/* Multiplier from each unit to the base unit (s, tokens/s, bytes). */
static const double g_unit_scale[] = {1.0, 1e-3,      1.0, 1073741824.0,
                                      1e9, 1048576.0, 1e6};

static const char *const g_oom_where_names[] = {"host", "gpu", NULL};
static const char *const g_oom_phase_names[] = {"any",  "load", "init",  "step",
                                                "eval", "save", "epoch", NULL};

const char *zs_pub_oom_where_name(int where)
{
    return where >= 0 && where < ZS_POW_COUNT ? g_oom_where_names[where] : "?";
}

const char *zs_pub_oom_phase_name(int phase)
{
    return phase >= 0 && phase < ZS_POP_COUNT ? g_oom_phase_names[phase] : "?";
}

const char *zs_pub_qty_name(int qty)
{
    return qty >= 0 && qty < ZS_PQ_COUNT ? g_qty_names[qty] : "?";
}

const char *zs_pub_unit_name(int unit)
{
    return unit >= 0 && unit < ZS_PU_COUNT ? g_unit_names[unit] : "?";
}

/* The units a quantity may be written in. */
static bool unit_fits(int qty, int unit)
{
    switch (qty) {
    case ZS_PQ_STEP_TIME:
        return unit == ZS_PU_S || unit == ZS_PU_MS;
    case ZS_PQ_TOKENS:
        return unit == ZS_PU_TOKENS_PER_S;
    default:
        return unit >= ZS_PU_GIB;
    }
}

static const char *unit_choices(int qty)
{
    switch (qty) {
    case ZS_PQ_STEP_TIME:
        return "one of s, ms";
    case ZS_PQ_TOKENS:
        return "tokens/s";
    default:
        return "one of GiB, GB, MiB, MB";
    }
}

/* ---- tables -------------------------------------------------------------- */

struct raw_top {
    char schema[32];
};
static const struct zs_field f_top[] = {
    {"schema", ZS_F_STRING, offsetof(struct raw_top, schema), 0, 0, 0,
     ZS_F_REQUIRED, NULL, 32, NULL},
    {"name", ZS_F_CUSTOM, 0, 0, 0, 0, 0, NULL, 0, NULL},
    {"source", ZS_F_CUSTOM, 0, 0, 0, 0, 0, NULL, 0, NULL},
    {"hardware", ZS_F_CUSTOM, 0, 0, 0, 0, 0, NULL, 0, NULL},
    {"args", ZS_F_CUSTOM, 0, 0, 0, 0, 0, NULL, 0, NULL},
    {"needs", ZS_F_CUSTOM, 0, 0, 0, 0, 0, NULL, 0, NULL},
    {"measured", ZS_F_CUSTOM, 0, 0, 0, 0, 0, NULL, 0, NULL},
    {"oom", ZS_F_CUSTOM, 0, 0, 0, 0, 0, NULL, 0, NULL},
};

#define PB(f) offsetof(struct zs_published, f)
static const struct zs_field f_strings[] = {
    {"schema", ZS_F_SKIP, 0, 0, 0, 0, 0, NULL, 0, NULL},
    {"name", ZS_F_STRING, PB(name), 0, 0, 0, ZS_F_REQUIRED, NULL,
     ZS_PUB_NAME_CAP, NULL},
    {"source", ZS_F_CUSTOM, 0, 0, 0, 0, 0, NULL, 0, NULL},
    {"hardware", ZS_F_STRING, PB(hardware), 0, 0, 0, ZS_F_REQUIRED, NULL,
     ZS_PUB_TEXT_CAP, NULL},
    {"args", ZS_F_CUSTOM, 0, 0, 0, 0, 0, NULL, 0, NULL},
    {"needs", ZS_F_CUSTOM, 0, 0, 0, 0, 0, NULL, 0, NULL},
    {"measured", ZS_F_CUSTOM, 0, 0, 0, 0, 0, NULL, 0, NULL},
    {"oom", ZS_F_CUSTOM, 0, 0, 0, 0, 0, NULL, 0, NULL},
};

/* "oom": {"where": "host"|"gpu", "phase": (default "any"), "what": the
 * evidence, as the source states it}. */
static const struct zs_field f_oom[] = {
    {"where", ZS_F_ENUM, PB(oom.where), 0, 0, 0, ZS_F_REQUIRED,
     g_oom_where_names, 0, NULL},
    {"phase", ZS_F_ENUM, PB(oom.phase), 0, 0, ZS_POP_ANY, 0, g_oom_phase_names,
     0, NULL},
    {"what", ZS_F_STRING, PB(oom.what), 0, 0, 0, ZS_F_REQUIRED, NULL,
     ZS_PUB_TEXT_CAP, NULL},
};

static const struct zs_field f_source[] = {
    {"url", ZS_F_STRING, PB(url), 0, 0, 0, ZS_F_REQUIRED, NULL, ZS_PUB_TEXT_CAP,
     NULL},
    {"commit", ZS_F_STRING, PB(commit), 0, 0, 0, 0, NULL, 48, ""},
    {"date", ZS_F_STRING, PB(date), 0, 0, 0, 0, NULL, 32, ""},
    {"quote", ZS_F_STRING, PB(quote), 0, 0, 0, ZS_F_REQUIRED, NULL,
     ZS_PUB_QUOTE_CAP, NULL},
};

#define MS(f) offsetof(struct zs_pub_meas, f)
static const struct zs_field f_meas[] = {
    {"quantity", ZS_F_ENUM, MS(qty), 0, 0, 0, ZS_F_REQUIRED, g_qty_names, 0,
     NULL},
    {"value", ZS_F_DOUBLE, MS(value), 1e-6, 1e15, 0, ZS_F_REQUIRED, NULL, 0,
     NULL},
    {"unit", ZS_F_ENUM, MS(unit), 0, 0, 0, ZS_F_REQUIRED, g_unit_names, 0,
     NULL},
    {"what", ZS_F_STRING, MS(what), 0, 0, 0, ZS_F_REQUIRED, NULL,
     ZS_PUB_TEXT_CAP, NULL},
    /* optional: "peak" over the run (default) or "steady" (enum
     * zs_pub_when) */
    {"when", ZS_F_ENUM, MS(when), 0, 0, ZS_PW_PEAK, 0, g_when_names, 0, NULL},
    /* optional: the mechanism zsim lacks for this figure (published_io.h) */
    {"missing", ZS_F_STRING, MS(missing), 0, 0, 0, 0, NULL, ZS_PUB_TEXT_CAP,
     ""},
};

/* ---- reading ------------------------------------------------------------- */

struct rd {
    struct zs_json_src src;
    struct zs_published *p;
    struct zs_err *err;
};

/* An array of non-empty strings, each shorter than cap, at most max. */
static int read_strings(struct rd *r, const cJSON *root, const char *key,
                        bool required, int max, size_t cap, char *dst, int *n)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, key), *it;
    char where[300];
    long i = 0;

    *n = 0;
    if (!arr) {
        if (!required)
            return 0;
        return zs_err_set(r->err, ZS_EINPUT, "missing '%s' in %s: required",
                          key, r->src.path);
    }
    zs_json_where(&r->src, "", key, where, sizeof where);
    if (!cJSON_IsArray(arr))
        return zs_err_set(r->err, ZS_EINPUT,
                          "invalid '%s' in %s: must be an array of strings "
                          "(got %s)",
                          key, where, zs_json_type_name(arr));
    if (cJSON_GetArraySize(arr) > max)
        return zs_err_set(r->err, ZS_EINPUT,
                          "invalid '%s' in %s: must list at most %d strings "
                          "(got %d)",
                          key, where, max, cJSON_GetArraySize(arr));
    cJSON_ArrayForEach(it, arr)
    {
        if (!cJSON_IsString(it) || !it->valuestring[0] ||
            strlen(it->valuestring) >= cap) {
            char got[64];
            zs_json_got_text(got, sizeof got, it);
            return zs_err_set(r->err, ZS_EINPUT,
                              "invalid '%s[%ld]' in %s: must be a string of "
                              "1 to %zu characters (got %s)",
                              key, i, where, cap - 1, got);
        }
        zs_strlcpy(dst + (size_t)i * cap, it->valuestring, cap);
        i++;
    }
    *n = (int)i;
    return 0;
}

static int read_measured(struct rd *r, const cJSON *root)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "measured"), *it;
    char where[300];
    long i = 0;
    int rc;

    if (!arr && r->p->oom.set)
        return 0; /* the run died: its "oom" is what was observed */
    if (!arr)
        return zs_err_set(r->err, ZS_EINPUT,
                          "missing 'measured' in %s: required (or 'oom' for "
                          "a run that died of an OOM)",
                          r->src.path);
    zs_json_where(&r->src, "", "measured", where, sizeof where);
    if (r->p->oom.set)
        return zs_err_set(r->err, ZS_EINPUT,
                          "invalid 'measured' in %s: a run with 'oom' died, "
                          "so it has no figures to compare",
                          where);
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) < 1)
        return zs_err_set(r->err, ZS_EINPUT,
                          "invalid 'measured' in %s: must be a non-empty "
                          "array of figures (got %s)",
                          where,
                          cJSON_IsArray(arr) ? "[]" : zs_json_type_name(arr));
    if (cJSON_GetArraySize(arr) > ZS_PUB_MAX_MEAS)
        return zs_err_set(r->err, ZS_EINPUT,
                          "invalid 'measured' in %s: must list at most %d "
                          "figures (got %d)",
                          where, ZS_PUB_MAX_MEAS, cJSON_GetArraySize(arr));
    cJSON_ArrayForEach(it, arr)
    {
        struct zs_pub_meas *m = &r->p->meas[i];
        memset(m, 0, sizeof *m);
        rc = zs_sched_io_read_elem(&r->src, "measured", i, it, f_meas,
                                   NF(f_meas), m, 0, r->err);
        if (rc)
            return rc;
        if (!unit_fits(m->qty, m->unit)) {
            zs_sched_io_elem_where(&r->src, "measured", i, "unit", where,
                                   sizeof where);
            return zs_err_set(r->err, ZS_EINPUT,
                              "invalid 'measured[%ld].unit' in %s: must be "
                              "%s for '%s' (got '%s')",
                              i, where, unit_choices(m->qty),
                              g_qty_names[m->qty], g_unit_names[m->unit]);
        }
        for (long j = 0; j < i; j++)
            if (r->p->meas[j].qty == m->qty) {
                zs_sched_io_elem_where(&r->src, "measured", i, "quantity",
                                       where, sizeof where);
                return zs_err_set(r->err, ZS_EINPUT,
                                  "invalid 'measured[%ld].quantity' in %s: "
                                  "'%s' is already given by measured[%ld]",
                                  i, where, g_qty_names[m->qty], j);
            }
        m->base = m->value * g_unit_scale[m->unit];
        i++;
    }
    r->p->nmeas = (int)i;
    return 0;
}

static int read_oom(struct rd *r, const cJSON *root)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "oom");
    int rc;
    if (!o)
        return 0;
    rc = zs_json_expect_object(&r->src, o, "oom", r->err);
    if (!rc)
        rc = zs_json_read(&r->src, o, "oom", f_oom, NF(f_oom), r->p, 0, r->err);
    if (!rc)
        r->p->oom.set = true;
    return rc;
}

static int read_root(struct rd *r, const cJSON *root)
{
    struct raw_top top;
    const cJSON *src;
    char where[300];
    int rc;

    rc = zs_sched_io_read_top(&r->src, root, f_top, NF(f_top), &top,
                              offsetof(struct raw_top, schema),
                              ZS_PUBLISHED_SCHEMA, r->err);
    if (!rc)
        rc = zs_json_read(&r->src, root, "", f_strings, NF(f_strings), r->p, 0,
                          r->err);
    if (rc)
        return rc;
    src = cJSON_GetObjectItemCaseSensitive(root, "source");
    if (!src)
        return zs_err_set(r->err, ZS_EINPUT, "missing 'source' in %s: required",
                          r->src.path);
    rc = zs_json_expect_object(&r->src, src, "source", r->err);
    if (!rc)
        rc = zs_json_read(&r->src, src, "source", f_source, NF(f_source), r->p,
                          0, r->err);
    if (rc)
        return rc;
    if (!r->p->commit[0] && !r->p->date[0]) {
        zs_json_where(&r->src, "", "source", where, sizeof where);
        return zs_err_set(r->err, ZS_EINPUT,
                          "missing 'source.commit' or 'source.date' in %s: "
                          "one of them is required",
                          where);
    }
    rc = read_strings(r, root, "args", true, ZS_PUB_MAX_ARGS, ZS_PUB_ARG_CAP,
                      &r->p->args[0][0], &r->p->nargs);
    if (!rc && r->p->nargs < 1) {
        zs_json_where(&r->src, "", "args", where, sizeof where);
        rc = zs_err_set(r->err, ZS_EINPUT,
                        "invalid 'args' in %s: must list the zsim flags of "
                        "the run (got [])",
                        where);
    }
    if (!rc)
        rc = read_strings(r, root, "needs", false, ZS_PUB_MAX_NEEDS,
                          ZS_PUB_NAME_CAP, &r->p->needs[0][0], &r->p->nneeds);
    if (!rc)
        rc = read_oom(r, root);
    if (!rc)
        rc = read_measured(r, root);
    return rc;
}

int zs_published_read_text(const char *name, const char *text, size_t len,
                           struct zs_published *out, struct zs_err *err)
{
    struct rd r;
    cJSON *root;
    int rc;

    memset(out, 0, sizeof *out);
    memset(&r, 0, sizeof r);
    r.p = out;
    r.err = err;
    zs_strlcpy(out->path, name, sizeof out->path);
    rc = zs_json_parse_text(name, text, len, &root, &r.src, err);
    if (rc)
        return rc;
    rc = read_root(&r, root);
    cJSON_Delete(root);
    zs_json_src_release(&r.src);
    zs_strlcpy(out->path, name, sizeof out->path);
    return rc;
}

int zs_published_read(const char *path, struct zs_published *out,
                      struct zs_err *err)
{
    char *text;
    size_t len;
    int rc;

    memset(out, 0, sizeof *out);
    rc = zs_read_file(path, ZS_JSON_MAX_FILE_BYTES, &text, &len, err);
    if (rc)
        return rc;
    rc = zs_published_read_text(path, text, len, out, err);
    zs_free(text);
    return rc;
}

/* ---- predictions --------------------------------------------------------- */

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* The whole run's OOM (run/run.h zs_run_compose on the step simulation of
 * sim), its moment mapped to the phases a source can name. */
static int run_oom(const struct zs_setup *su, const struct zs_sim_result *res,
                   zs_sim *sim, struct zs_pub_pred *out, struct zs_err *err)
{
    static const int phase_of[ZS_RP_COUNT] = {
        [ZS_RP_LOAD] = ZS_POP_LOAD,  [ZS_RP_INIT] = ZS_POP_INIT,
        [ZS_RP_FIRST] = ZS_POP_STEP, [ZS_RP_STEADY] = ZS_POP_STEP,
        [ZS_RP_EVAL] = ZS_POP_EVAL,  [ZS_RP_SAVE] = ZS_POP_SAVE,
        [ZS_RP_EPOCH] = ZS_POP_EPOCH};
    struct zs_run_levels lv;
    struct zs_run *run = zs_calloc(1, sizeof *run);
    int rc;
    if (!run)
        return zs_err_set(err, ZS_ENOMEM, "out of memory");
    zs_run_levels_from_sim(sim, res, &lv);
    rc = zs_run_compose(su, res, &lv, run, err);
    if (!rc && run->oom.where != ZS_OOM_NONE && run->oom.phase >= 0 &&
        run->oom.phase < ZS_RP_COUNT) {
        out->oom_where =
            run->oom.where == ZS_OOM_GPU ? ZS_POW_GPU : ZS_POW_HOST;
        out->oom_phase = phase_of[run->oom.phase];
        out->oom_needed_bytes = run->oom.needed_bytes;
        out->oom_available_bytes = run->oom.available_bytes;
    }
    zs_free(run);
    return rc;
}

bool zs_pub_oom_agrees(const struct zs_published *p,
                       const struct zs_pub_pred *q)
{
    return p->oom.set && q->oom_where == p->oom.where &&
           (p->oom.phase == ZS_POP_ANY || q->oom_phase == p->oom.phase);
}

int zs_published_predict(const struct zs_published *p, struct zs_pub_pred *out,
                         struct zs_err *err)
{
    return zs_published_predict_tuned(p, NULL, NULL, out, err);
}

int zs_published_predict_tuned(const struct zs_published *p,
                               zs_pub_tune_fn tune, void *ctx,
                               struct zs_pub_pred *out, struct zs_err *err)
{
    return zs_published_predict_on(p, tune, ctx, NULL, NULL, out, err);
}

int zs_published_predict_on(const struct zs_published *p, zs_pub_tune_fn tune,
                            void *ctx, zs_sim *sim,
                            struct zs_build_cache *cache,
                            struct zs_pub_pred *out, struct zs_err *err)
{
    struct zs_opt opts[ZS_ARGS_MAXOPTS];
    size_t nopts = zs_cfg_args_opts(NULL, 0, opts);
    char *argv[ZS_PUB_MAX_ARGS + 1];
    struct zs_args a;
    struct zs_cfg cfg;
    struct zs_model m;
    struct zs_cluster cl;
    struct zs_setup su = {0};
    struct zs_sim_result res;
    const struct zs_step_result *f = &res.first, *s = &res.steady;
    int rc;

    memset(out, 0, sizeof *out);
    for (int q = 0; q < ZS_PQ_COUNT; q++)
        out->v[q] = out->steady[q] = -1;
    out->oom_where = -1;
    argv[0] = (char *)"published";
    for (int i = 0; i < p->nargs; i++)
        argv[i + 1] = (char *)p->args[i];
    rc = zs_args_parse(p->nargs + 1, argv, opts, nopts, "simulate", &a, err);
    if (!rc && a.npos)
        rc = zs_err_set(err, ZS_EUSAGE, "unexpected argument '%s'", a.pos[0]);
    if (!rc)
        rc = zs_cfg_args_resolve(&a, opts, nopts, NULL, &cfg, &m, &cl, err);
    if (rc) {
        char msg[ZS_ERR_MSG_MAX];
        zs_strlcpy(msg, err->msg, sizeof msg);
        return zs_err_set(err, ZS_EINPUT, "invalid 'args' in %s: %s", p->path,
                          msg);
    }
    zs_strlcpy(out->framework, zs_framework_name(cfg.framework),
               sizeof out->framework);
    if (tune)
        tune(ctx, &cfg, &cl);
    su.model = &m;
    su.cluster = &cl;
    su.cfg = &cfg;
    su.cache = cache;
    if (zs_run_wanted(&cfg)) {
        /* the whole run (model load, init, steps, saves): the OOM an "oom"
         * run compares with may strike outside the steps */
        zs_sim *own = sim ? NULL : zs_sim_new(), *use = sim ? sim : own;
        if (!use)
            return zs_err_set(err, ZS_ENOMEM, "out of memory");
        rc = zs_simulate(&su, use, &res, err);
        if (!rc)
            rc = run_oom(&su, &res, use, out, err);
        zs_sim_free(own);
    } else {
        rc = zs_simulate(&su, sim, &res, err);
        if (!rc && res.oom.where != ZS_OOM_NONE) {
            out->oom_where =
                res.oom.where == ZS_OOM_GPU ? ZS_POW_GPU : ZS_POW_HOST;
            out->oom_phase = res.oom.step == 0 ? ZS_POP_INIT : ZS_POP_STEP;
            out->oom_needed_bytes = res.oom.needed_bytes;
            out->oom_available_bytes = res.oom.available_bytes;
        }
    }
    if (rc)
        return rc;
    if (res.oom.where != ZS_OOM_NONE) {
        out->oom = true;
        snprintf(out->oom_text, sizeof out->oom_text, "%s OOM in %s of %s",
                 res.oom.where == ZS_OOM_GPU ? "GPU" : "host", res.oom.phase,
                 res.oom.module);
        return 0;
    }
    /* Peaks over the whole run: the first step can be higher (DeepSpeed's
     * trace recording, lazy Adam states); times are the steady step's. */
    out->v[ZS_PQ_STEP_TIME] = s->time_s;
    out->v[ZS_PQ_TOKENS] = s->tokens_per_s_per_gpu;
    out->v[ZS_PQ_GPU_ALLOCATED] =
        (double)max64(f->peak_gpu_allocated, s->peak_gpu_allocated);
    out->v[ZS_PQ_GPU_RESERVED] =
        (double)max64(f->peak_gpu_reserved, s->peak_gpu_reserved);
    /* nvidia-smi also counts the CUDA context and NCCL's buffers, which live
     * outside the caching allocator (sched.h gpu_context_bytes). */
    out->v[ZS_PQ_GPU_USED] =
        out->v[ZS_PQ_GPU_RESERVED] + (double)res.gpu_context_bytes;
    out->v[ZS_PQ_HOST_PER_NODE] =
        (double)max64(f->peak_host_per_node, s->peak_host_per_node);
    /* the steady step's alone, for figures read during training */
    out->steady[ZS_PQ_STEP_TIME] = s->time_s;
    out->steady[ZS_PQ_TOKENS] = s->tokens_per_s_per_gpu;
    out->steady[ZS_PQ_GPU_ALLOCATED] = (double)s->peak_gpu_allocated;
    out->steady[ZS_PQ_GPU_RESERVED] = (double)s->peak_gpu_reserved;
    out->steady[ZS_PQ_GPU_USED] =
        (double)s->peak_gpu_reserved + (double)res.gpu_context_bytes;
    out->steady[ZS_PQ_HOST_PER_NODE] = (double)s->peak_host_per_node;
    return 0;
}

double zs_pub_err_pct(double pred, double meas)
{
    if (!(pred >= 0) || !(meas > 0))
        return NAN;
    return (pred - meas) / meas * 100.0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void zs_pub_median_p90(double *v, int n, double *median, double *p90)
{
    int k;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    *median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
    k = (9 * n + 9) / 10 - 1; /* ceil(0.9 n) - 1 in integers */
    *p90 = v[k < 0 ? 0 : k];
}
