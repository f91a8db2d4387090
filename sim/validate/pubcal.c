/*
 * pubcal.c — the global mechanism constants fitted to the published corpus;
 * see pubcal.h and docs/validation.md ("Calibrating on the published
 * corpus").
 *
 * Model: for every timed row i of the fit part (step_time or
 * tokens_per_s_per_gpu of a modelled run that zsim predicts to fit),
 * r_i(v) = ln(predicted_i(v) / measured_i), where predicted_i(v) is the
 * simulation with the constants set to v.  The fit minimises sum r_i^2 over
 * x = ln v with GSL's trust-region nonlinear least squares
 * (gsl_multifit_nlinear_trust, finite-difference Jacobian); the logarithm
 * makes an over- and an under-prediction by the same factor weigh the same
 * and keeps v positive.  Uncertainty: the covariance (J^T J)^-1 at the
 * solution scaled by s^2 = sum r_i^2 / (n - p) (GSL's
 * gsl_multifit_nlinear_covar), mapped to v by sigma_v = v sigma_x.
 */
#include "validate/pubcal.h"
#include "hw/hw.h"
#include "train/config.h"
#include "util/afile.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/strutil.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- the constants ------------------------------------------------------- */

/* Scales every tensor-core rate of the run's GPU (the GEMM shape model's
 * main loop and MAMF ceiling, the FLOP curve, flash attention's curve): all
 * of them are peak_bf16_flops times an efficiency (hw/figures.c,
 * sched/fetch_units.c).  MFU is not compared, so scaling the peak is
 * exactly scaling those rates here. */
static void set_compute_sustained(struct zs_cfg *cfg, struct zs_cluster *cl,
                                  double v)
{
    (void)cfg;
    cl->node.gpu.peak_bf16_flops *= v;
}

/* The fraction of the profile's sustained GEMM rates (hw.h
 * gemm_sustained, fp8_sustained: matmul-only measurements on one GPU) that
 * a training step on a node holds: GEMMs only, attention's measured curves
 * are untouched; a profile without a sustained group is not affected. */
static void set_sustained_node(struct zs_cfg *cfg, struct zs_cluster *cl,
                               double v)
{
    (void)cfg;
    cl->node.gpu.sustained_node = v;
}

/* Memory-bound kernels only: the GEMM shape model's HBM roofline keeps the
 * profile's hbm_eff, so the constants fitted on OpenXLA's GEMM table
 * (hw/figures.c) are not disturbed. */
static void set_membound_eff(struct zs_cfg *cfg, struct zs_cluster *cl,
                             double v)
{
    (void)cfg;
    cl->node.gpu.membound_eff = v;
}

/* Replaces the profile's fraction of its alone rate that compute keeps while
 * an NCCL collective runs (hw.h overlap_compute_factor). */
static void set_overlap(struct zs_cfg *cfg, struct zs_cluster *cl, double v)
{
    (void)cfg;
    cl->node.gpu.overlap_compute_factor = v;
}

/* Host time of one counted call of DeepSpeed ZeRO-3's hooks into PyTorch
 * (hw.h hook_call_ns; sched/hooks.c counts the calls from DeepSpeed's
 * code).  Only ZeRO-3 runs use it. */
static void set_hook_call(struct zs_cfg *cfg, struct zs_cluster *cl, double v)
{
    (void)cfg;
    cl->node.gpu.hook_call_ns = v;
}

/* The fraction of the node's host memory bandwidth share that the CPU
 * passes of the optimizer step stream at (hw.h host_stream_eff,
 * ZS_HOST_STREAM_EFF; sched/emit.c zs_t_cpu). */
static void set_host_stream(struct zs_cfg *cfg, struct zs_cluster *cl,
                            double v)
{
    (void)cfg;
    cl->node.host_stream_eff = v;
}

static const struct zs_pubcal_const g_consts[] = {
    {"compute_sustained", "fraction",
     "of the isolated tensor-core rates (MAMF, FA2 curve) sustained in a "
     "training step",
     1.0,
     "none: isolated-kernel benchmarks taken as sustained (docs/kernels.md)",
     0.3, 1.0, false, set_compute_sustained},
    {"sustained_node", "fraction",
     "of the profiles' sustained GEMM rates (one GPU, matmul only) held in "
     "a training step on a node",
     ZS_SUSTAINED_NODE,
     "fitted: split by source, long-sequence rows excluded (hw.h "
     "ZS_SUSTAINED_NODE)",
     0.5, 1.0, false, set_sustained_node},
    {"membound_eff", "fraction",
     "of HBM bandwidth reached by memory-bound kernels without a measured "
     "rate (copies, optimizer)",
     ZS_MEMBOUND_EFF,
     "fitted: validation/calibration/published.json (hw.h ZS_MEMBOUND_EFF)",
     0.1, 1.0, true, set_membound_eff},
    {"overlap_compute_factor", "fraction",
     "of its alone rate that compute keeps while a collective runs", 0.841,
     "arXiv 2507.03114 (1/1.189), in the A100, H100 and H200 profiles", 0.3,
     1.0, false, set_overlap},
    {"hook_call_ns", "ns",
     "host time of one call of DeepSpeed ZeRO-3's hooks into PyTorch",
     ZS_HOOK_CALL_NS, "fitted: split by source (hw.h ZS_HOOK_CALL_NS)",
     1000.0, 30000.0, false, set_hook_call},
    {"host_stream_eff", "fraction",
     "of the node's host memory bandwidth share that the optimizer step's "
     "CPU passes stream at",
     ZS_HOST_STREAM_EFF, "fitted: split by source (hw.h ZS_HOST_STREAM_EFF)",
     0.05, 1.0, false, set_host_stream},
};
#define NCONSTS ((int)(sizeof g_consts / sizeof g_consts[0]))

int zs_pubcal_consts(const struct zs_pubcal_const **out)
{
    *out = g_consts;
    return NCONSTS;
}

/* Whether s is exactly the len characters at name. */
static bool same_name(const char *s, const char *name, size_t len)
{
    return strlen(s) == len && strncmp(s, name, len) == 0;
}

/* The next name of a comma-separated list at *p: *name and its length, *p
 * moved past it and its comma. */
static size_t next_name(const char **p, const char **name)
{
    size_t len = strcspn(*p, ",");
    *name = *p;
    *p += len + ((*p)[len] == ',');
    return len;
}

int zs_pubcal_choose(struct zs_pubcal *pc, const char *list, struct zs_err *err)
{
    const char *p = list, *name;
    char names[256] = "";
    for (int j = 0; j < NCONSTS; j++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                 j ? ", " : "", g_consts[j].name);
    pc->nconst = 0;
    while (*p) {
        size_t len = next_name(&p, &name);
        int j = 0;
        while (j < NCONSTS && !same_name(g_consts[j].name, name, len))
            j++;
        if (j == NCONSTS || pc->nconst >= ZS_PUBCAL_MAX_CONSTS)
            return zs_err_set(err, ZS_EINPUT,
                              "invalid value for '--constants': '%.*s' is not "
                              "a constant (one of %s)",
                              (int)len, name, names);
        for (int i = 0; i < pc->nconst; i++)
            if (pc->c[i] == &g_consts[j])
                return zs_err_set(err, ZS_EINPUT,
                                  "invalid value for '--constants': '%.*s' "
                                  "is named twice",
                                  (int)len, name);
        pc->c[pc->nconst++] = &g_consts[j];
    }
    if (!pc->nconst)
        return zs_err_set(err, ZS_EINPUT,
                          "invalid value for '--constants': must name at "
                          "least one of %s",
                          names);
    return 0;
}

/* ---- the split ----------------------------------------------------------- */

static const char *const g_split_names[] = {"source", "hash"};

int zs_pubcal_parse_split(const char *text, enum zs_pubcal_split *out,
                          struct zs_err *err)
{
    for (int i = 0; i < 2; i++)
        if (strcmp(text, g_split_names[i]) == 0) {
            *out = (enum zs_pubcal_split)i;
            return 0;
        }
    return zs_err_set(err, ZS_EINPUT,
                      "invalid value for '--split': must be one of source, "
                      "hash (got '%s')",
                      text);
}

const char *zs_pubcal_split_name(enum zs_pubcal_split split)
{
    return g_split_names[split == ZS_PUBCAL_SPLIT_HASH];
}

void zs_pubcal_source_key(const char *url, char *buf, size_t cap)
{
    const char *h = strstr(url, "://"), *e;
    int slashes = 0;
    h = h ? h + 3 : url;
    if (strncmp(h, "github.com/", 11) == 0) {
        h += 11;
        for (e = h; *e && !(*e == '/' && ++slashes == 2); e++)
            ;
    } else {
        e = strchr(h, '/');
        if (!e)
            e = h + strlen(h);
    }
    snprintf(buf, cap, "%.*s", (int)(e - h), h);
}

static bool is_timed(int qty)
{
    return qty == ZS_PQ_STEP_TIME || qty == ZS_PQ_TOKENS;
}

/* Timed figures of a run that is modelled. */
static int timed_meas(const struct zs_published *p)
{
    int n = 0;
    for (int i = 0; i < p->nmeas && !p->nneeds; i++)
        n += is_timed(p->meas[i].qty);
    return n;
}

static uint32_t fnv1a(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static int source_index(struct zs_pubcal *pc, const char *key)
{
    for (int i = 0; i < pc->nsources; i++)
        if (strcmp(pc->sources[i], key) == 0)
            return i;
    if (pc->nsources >= ZS_PUBCAL_MAX_SOURCES)
        return -1;
    zs_strlcpy(pc->sources[pc->nsources], key, ZS_PUB_NAME_CAP);
    return pc->nsources++;
}

/* Whether `key` is one of the comma-separated names of `list`. */
static bool listed(const char *list, const char *key)
{
    for (const char *p = list, *name; *p;) {
        size_t len = next_name(&p, &name);
        if (same_name(key, name, len))
            return true;
    }
    return false;
}

/* --fit-sources: every name must be a source of the corpus. */
static int check_fit_sources(const struct zs_pubcal *pc, struct zs_err *err)
{
    for (const char *p = pc->fit_sources, *name; *p;) {
        size_t len = next_name(&p, &name);
        int i = 0;
        while (i < pc->nsources && !same_name(pc->sources[i], name, len))
            i++;
        if (i == pc->nsources)
            return zs_err_set(err, ZS_EINPUT,
                              "invalid value for '--fit-sources': no run of "
                              "the corpus comes from '%.*s'",
                              (int)len, name);
    }
    return 0;
}

/* By source: the sources named by --fit-sources fit and the rest check;
 * without it, the sources in falling order of their timed figures (ties by
 * name), each to the part that holds fewer so far, the fit part first. */
static int split_by_source(struct zs_pubcal *pc, struct zs_err *err)
{
    int rows[ZS_PUBCAL_MAX_SOURCES] = {0}, order[ZS_PUBCAL_MAX_SOURCES];
    int *src = zs_calloc((size_t)pc->set.n + 1, sizeof *src), tot[2] = {0, 0};
    if (!src)
        return zs_err_set(err, ZS_ENOMEM, "out of memory");
    for (int k = 0; k < pc->set.n; k++) {
        char key[ZS_PUB_NAME_CAP];
        zs_pubcal_source_key(pc->set.runs[k].url, key, sizeof key);
        src[k] = source_index(pc, key);
        if (src[k] < 0) {
            zs_free(src);
            return zs_err_set(err, ZS_ELIMIT, "more than %d sources",
                              ZS_PUBCAL_MAX_SOURCES);
        }
        rows[src[k]] += timed_meas(&pc->set.runs[k]);
    }
    for (int i = 0; i < pc->nsources; i++) {
        int j = i;
        for (;
             j > 0 && (rows[order[j - 1]] < rows[i] ||
                       (rows[order[j - 1]] == rows[i] &&
                        strcmp(pc->sources[order[j - 1]], pc->sources[i]) > 0));
             j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    for (int i = 0; i < pc->nsources; i++) {
        int s = order[i], part = tot[ZS_PUBCAL_CHECK] < tot[ZS_PUBCAL_FIT];
        if (pc->fit_sources)
            part = listed(pc->fit_sources, pc->sources[s]) ? ZS_PUBCAL_FIT
                                                           : ZS_PUBCAL_CHECK;
        pc->source_part[s] = part;
        tot[part] += rows[s];
    }
    if (pc->fit_sources) {
        int rc = check_fit_sources(pc, err);
        if (rc) {
            zs_free(src);
            return rc;
        }
    }
    for (int k = 0; k < pc->set.n; k++)
        pc->part[k] = pc->source_part[src[k]];
    zs_free(src);
    return 0;
}

static int split(struct zs_pubcal *pc, struct zs_err *err)
{
    pc->part = zs_calloc((size_t)pc->set.n + 1, sizeof *pc->part);
    if (!pc->part)
        return zs_err_set(err, ZS_ENOMEM, "out of memory");
    if (pc->split == ZS_PUBCAL_SPLIT_SOURCE)
        return split_by_source(pc, err);
    for (int k = 0; k < pc->set.n; k++)
        pc->part[k] = (int)(fnv1a(pc->set.runs[k].name) & 1u);
    return 0;
}

/* ---- the fit ------------------------------------------------------------- */

/* What one evaluation needs: the values to apply and which runs to
 * simulate. */
struct fit_ctx {
    struct zs_pubcal *pc;
    const double *v; /* NULL: the current values (nothing applied) */
    bool *only;      /* the fit part's timed runs */
    int n;           /* residuals: timed rows of the fit part, at the start */
    int lost;        /* rows that became OOM during the fit */
    struct zs_err *err;
};

static void tune(void *ctx, struct zs_cfg *cfg, struct zs_cluster *cl)
{
    const struct fit_ctx *f = ctx;
    for (int j = 0; f->v && j < f->pc->nconst; j++)
        f->pc->c[j]->set(cfg, cl, f->v[j]);
}

static int residuals(const gsl_vector *x, void *data, gsl_vector *fv)
{
    struct fit_ctx *f = data;
    double v[ZS_PUBCAL_MAX_CONSTS];
    int i = 0;
    for (int j = 0; j < f->pc->nconst; j++)
        v[j] = exp(gsl_vector_get(x, (size_t)j));
    f->v = v;
    f->pc->evaluations++;
    if (zs_pub_set_predict(&f->pc->set, f->only, tune, f, f->err))
        return GSL_EFAILED;
    for (int r = 0; r < f->pc->set.nrows; r++) {
        const struct zs_pub_row *w = &f->pc->set.rows[r];
        if (!is_timed(w->qty))
            continue;
        if (i >= f->n || !(w->pred > 0)) {
            f->lost++;
            return GSL_EDOM;
        }
        gsl_vector_set(fv, (size_t)i++, log(w->pred / w->meas));
    }
    return i == f->n ? GSL_SUCCESS : GSL_EDOM;
}

/* The fit part's timed runs that zsim predicts to fit at the current values
 * (set.rows must hold the current predictions). */
static int choose_fit_runs(struct fit_ctx *f)
{
    struct zs_pubcal *pc = f->pc;
    for (int k = 0; k < pc->set.n; k++) {
        f->only[k] =
            pc->part[k] == ZS_PUBCAL_FIT && timed_meas(&pc->set.runs[k]);
        if (timed_meas(&pc->set.runs[k]))
            pc->timed_runs[pc->part[k]]++;
    }
    for (int r = 0; r < pc->set.nrows; r++) {
        const struct zs_pub_row *w = &pc->set.rows[r];
        if (!is_timed(w->qty))
            continue;
        if (!(w->pred > 0)) {
            f->only[w->run_index] = false; /* predicted OOM */
            continue;
        }
        pc->timed_rows[pc->part[w->run_index]]++;
    }
    f->n = pc->timed_rows[ZS_PUBCAL_FIT];
    return f->n;
}

static double sum_sq(const gsl_vector *v)
{
    double s = 0;
    for (size_t i = 0; i < v->size; i++)
        s += gsl_vector_get(v, i) * gsl_vector_get(v, i);
    return s;
}

/* Trust-region least squares from x = ln(current); fills fitted, stderr_
 * and the rms of the log residuals before and after. */
static int fit(struct fit_ctx *f, struct zs_err *err)
{
    struct zs_pubcal *pc = f->pc;
    size_t n = (size_t)f->n, p = (size_t)pc->nconst;
    gsl_multifit_nlinear_parameters fp =
        gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_fdf fdf;
    gsl_multifit_nlinear_workspace *w;
    gsl_vector *x = gsl_vector_alloc(p);
    gsl_matrix *cov = gsl_matrix_alloc(p, p);
    int info = 0, st, rc = 0;

    /* Forward differences of 0.1 % in v: the simulated times are integer
     * nanoseconds, so GSL's default step (sqrt(DBL_EPSILON)) would
     * difference rounding. */
    fp.h_df = 1e-3;
    memset(&fdf, 0, sizeof fdf);
    fdf.f = residuals;
    fdf.n = n;
    fdf.p = p;
    fdf.params = f;
    w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, n, p);
    if (!w || !x || !cov) {
        rc = zs_err_set(err, ZS_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t j = 0; j < p; j++)
        gsl_vector_set(x, j, log(pc->c[j]->current));
    st = gsl_multifit_nlinear_init(x, &fdf, w);
    if (!st)
        pc->rms_log_before =
            sqrt(sum_sq(gsl_multifit_nlinear_residual(w)) / (double)n);
    /* A constant that no fit-part figure depends on has a zero Jacobian
     * column (init evaluates it): the trust region would only run out of
     * iterations, so say which constant and why. */
    for (size_t j = 0; !st && j < p; j++) {
        const gsl_matrix *jac = gsl_multifit_nlinear_jac(w);
        size_t i = 0;
        while (i < n && gsl_matrix_get(jac, i, j) == 0.0)
            i++;
        if (i == n) {
            rc = zs_err_set(err, ZS_EUSAGE,
                            "invalid value for '--constants': no timed "
                            "figure of the fit part (%d) depends on '%s'; "
                            "try '--split hash'",
                            f->n, pc->c[j]->name);
            goto out;
        }
    }
    if (!st)
        st = gsl_multifit_nlinear_driver(100, 1e-6, 1e-8, 1e-8, NULL, NULL,
                                         &info, w);
    if (!st)
        st = gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(w), 0.0, cov);
    if (st) {
        if (!err->msg[0])
            rc = zs_err_set(err, ZS_ERUNTIME, "calibration fit failed: %s%s",
                            gsl_strerror(st),
                            f->lost ? " (a run became OOM at trial values)"
                                    : "");
        else
            rc = err->code;
        goto out;
    }
    {
        double chi2 = sum_sq(gsl_multifit_nlinear_residual(w));
        double s2 = n > p ? chi2 / (double)(n - p) : 0;
        pc->rms_log_after = sqrt(chi2 / (double)n);
        pc->iterations = (int)gsl_multifit_nlinear_niter(w);
        for (size_t j = 0; j < p; j++) {
            pc->fitted[j] = exp(gsl_vector_get(w->x, j));
            pc->stderr_[j] =
                pc->fitted[j] * sqrt(gsl_matrix_get(cov, j, j) * s2);
        }
    }
out:
    if (w)
        gsl_multifit_nlinear_free(w);
    gsl_vector_free(x);
    gsl_matrix_free(cov);
    return rc;
}

/* ---- the errors ---------------------------------------------------------- */

/* The entry of one quantity and part, made when after = 0 (NULL when the
 * table is full), found when after = 1 (NULL when the current values had no
 * rows there). */
static struct zs_pubcal_err *err_entry(struct zs_pubcal *pc, int q, int part,
                                       int after)
{
    for (int e = 0; e < pc->nerrs; e++)
        if (pc->errs[e].qty == q && pc->errs[e].part == part)
            return &pc->errs[e];
    if (after || pc->nerrs >= (int)(sizeof pc->errs / sizeof pc->errs[0]))
        return NULL;
    pc->errs[pc->nerrs].qty = q;
    pc->errs[pc->nerrs].part = part;
    return &pc->errs[pc->nerrs++];
}

/* Median and p90 |error| per quantity and part of set.rows into the
 * before (after = 0) or after fields. */
static int collect_errs(struct zs_pubcal *pc, int after, struct zs_err *err)
{
    double *v = zs_calloc((size_t)pc->set.nrows + 1, sizeof *v);
    if (!v)
        return zs_err_set(err, ZS_ENOMEM, "out of memory");
    for (int q = 0; q < ZS_PQ_COUNT; q++)
        for (int part = 0; part < ZS_PUBCAL_NPARTS; part++) {
            struct zs_pubcal_err *o;
            int n = 0;
            for (int r = 0; r < pc->set.nrows; r++) {
                const struct zs_pub_row *w = &pc->set.rows[r];
                if (w->qty == q && pc->part[w->run_index] == part &&
                    isfinite(w->err_pct))
                    v[n++] = fabs(w->err_pct);
            }
            if (!n || !(o = err_entry(pc, q, part, after)))
                continue;
            o->n = n;
            if (after)
                zs_pub_median_p90(v, n, &o->med_after, &o->p90_after);
            else
                zs_pub_median_p90(v, n, &o->med_before, &o->p90_before);
        }
    zs_free(v);
    return 0;
}

/* ---- the whole run -------------------------------------------------------- */

void zs_pubcal_init(struct zs_pubcal *pc)
{
    const struct zs_pubcal_const *t;
    int n = zs_pubcal_consts(&t);
    memset(pc, 0, sizeof *pc);
    for (int j = 0; j < n; j++)
        if (t[j].by_default)
            pc->c[pc->nconst++] = &t[j];
    /* GSL's default handler aborts; errors come back as return codes. */
    gsl_set_error_handler_off();
}

void zs_pubcal_release(struct zs_pubcal *pc)
{
    zs_pub_set_release(&pc->set);
    zs_free(pc->part);
    pc->part = NULL;
}

static int check_dir(const char *dir, struct zs_err *err)
{
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return zs_err_set(err, ZS_EINPUT,
                          "invalid value for '--published': '%s' is not a "
                          "directory",
                          dir);
    return 0;
}

/* Each part needs timed rows: the fit one more than the constants. */
static int check_parts(const struct zs_pubcal *pc, const char *dir,
                       struct zs_err *err)
{
    static const char *const names[] = {"fit", "check"};
    for (int part = 0; part < ZS_PUBCAL_NPARTS; part++) {
        int need = part == ZS_PUBCAL_FIT ? pc->nconst + 1 : 1;
        if (pc->timed_rows[part] < need)
            return zs_err_set(
                err, ZS_EINPUT,
                "invalid corpus '%s' for '--split %s': the %s part has %d "
                "modelled step_time or tokens_per_s_per_gpu figure(s), at "
                "least %d needed",
                dir, zs_pubcal_split_name(pc->split), names[part],
                pc->timed_rows[part], need);
    }
    return 0;
}

/* Leaves the runs whose name matches pc->exclude out of the set (both
 * parts), keeping the others in order. */
static int exclude_runs(struct zs_pubcal *pc, struct zs_err *err)
{
    regex_t re;
    int k = 0, rc;
    char why[128];
    pc->nexcluded = 0;
    if (!pc->exclude)
        return 0;
    rc = regcomp(&re, pc->exclude, REG_EXTENDED | REG_NOSUB);
    if (rc) {
        regerror(rc, &re, why, sizeof why);
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid value for '--exclude': '%s' is not a "
                          "POSIX extended regular expression (%s)",
                          pc->exclude, why);
    }
    for (int i = 0; i < pc->set.n; i++) {
        if (regexec(&re, pc->set.runs[i].name, 0, NULL, 0) == 0) {
            pc->nexcluded++;
            continue;
        }
        if (k != i) {
            pc->set.runs[k] = pc->set.runs[i];
            if (pc->set.pred)
                pc->set.pred[k] = pc->set.pred[i];
        }
        k++;
    }
    pc->set.n = k;
    regfree(&re);
    return 0;
}

int zs_pubcal_run(struct zs_pubcal *pc, const char *dir, struct zs_err *err)
{
    struct fit_ctx f;
    int rc;

    memset(&f, 0, sizeof f);
    f.pc = pc;
    f.err = err;
    rc = check_dir(dir, err);
    if (!rc)
        rc = zs_pub_set_read(dir, &pc->set, err);
    if (rc == ZS_EUSAGE)
        err->code = rc = ZS_EINPUT; /* no *.json: bad input here */
    if (!rc)
        rc = exclude_runs(pc, err);
    if (!rc)
        rc = split(pc, err);
    if (!rc)
        rc = zs_pub_set_predict(&pc->set, NULL, NULL, NULL, err);
    if (!rc)
        rc = collect_errs(pc, 0, err);
    if (rc)
        return rc;
    f.only = zs_calloc((size_t)pc->set.n + 1, sizeof *f.only);
    if (!f.only)
        return zs_err_set(err, ZS_ENOMEM, "out of memory");
    choose_fit_runs(&f);
    rc = check_parts(pc, dir, err);
    if (!rc)
        rc = fit(&f, err);
    f.v = pc->fitted;
    if (!rc)
        rc = zs_pub_set_predict(&pc->set, NULL, tune, &f, err);
    if (!rc)
        rc = collect_errs(pc, 1, err);
    zs_free(f.only);
    return rc;
}

/* ---- the file ------------------------------------------------------------ */

static void write_consts(const struct zs_pubcal *pc, FILE *f)
{
    fputs("  \"constants\": [\n", f);
    for (int j = 0; j < pc->nconst; j++) {
        const struct zs_pubcal_const *c = pc->c[j];
        fputs("    {\"name\": ", f);
        zs_json_put_str(f, c->name);
        fputs(", \"unit\": ", f);
        zs_json_put_str(f, c->unit);
        fprintf(f, ", \"current\": %.6g, \"current_source\": ", c->current);
        zs_json_put_str(f, c->source);
        fprintf(f,
                ",\n     \"fitted\": %.6g, \"stderr\": %.6g, \"range\": [%g, "
                "%g], \"in_range\": %s}%s\n",
                pc->fitted[j], pc->stderr_[j], c->lo, c->hi,
                pc->fitted[j] >= c->lo && pc->fitted[j] <= c->hi ? "true"
                                                                 : "false",
                j + 1 < pc->nconst ? "," : "");
    }
    fputs("  ],\n", f);
}

static void write_parts(const struct zs_pubcal *pc, FILE *f)
{
    static const char *const names[] = {"fit", "check"};
    fputs("  \"parts\": {\n", f);
    for (int part = 0; part < ZS_PUBCAL_NPARTS; part++) {
        int first = 1;
        fprintf(f, "    \"%s\": {\"timed_runs\": %d, \"timed_figures\": %d, ",
                names[part], pc->timed_runs[part], pc->timed_rows[part]);
        fputs(pc->split == ZS_PUBCAL_SPLIT_SOURCE ? "\"sources\": ["
                                                  : "\"runs\": [",
              f);
        for (int i = 0; pc->split == ZS_PUBCAL_SPLIT_SOURCE && i < pc->nsources;
             i++)
            if (pc->source_part[i] == part) {
                fputs(first ? "" : ", ", f);
                zs_json_put_str(f, pc->sources[i]);
                first = 0;
            }
        for (int k = 0; pc->split == ZS_PUBCAL_SPLIT_HASH && k < pc->set.n; k++)
            if (pc->part[k] == part && !pc->set.runs[k].nneeds) {
                fputs(first ? "" : ", ", f);
                zs_json_put_str(f, pc->set.runs[k].name);
                first = 0;
            }
        fprintf(f, "]}%s\n", part ? "" : ",");
    }
    fputs("  },\n", f);
}

int zs_pubcal_write(const struct zs_pubcal *pc, const char *dir,
                    const char *command, const char *path, struct zs_err *err)
{
    struct zs_afile af;
    FILE *f;
    int rc = zs_afile_open(&af, NULL, path, err);
    if (rc)
        return rc;
    f = af.f;
    fprintf(f, "{\n  \"schema\": \"%s\",\n  \"corpus\": ", ZS_PUBCAL_SCHEMA);
    zs_json_put_str(f, dir);
    fputs(",\n  \"command\": ", f);
    zs_json_put_str(f, command);
    fputs(",\n  \"exclude\": ", f);
    if (pc->exclude)
        zs_json_put_str(f, pc->exclude);
    else
        fputs("null", f);
    fprintf(f, ", \"excluded_runs\": %d", pc->nexcluded);
    fprintf(f,
            ",\n  \"split\": \"%s\",\n  \"residual\": \"ln(predicted / "
            "measured) of step_time and tokens_per_s_per_gpu\",\n"
            "  \"iterations\": %d, \"evaluations\": %d,\n"
            "  \"rms_log_residual\": {\"before\": %.4f, \"after\": %.4f},\n",
            zs_pubcal_split_name(pc->split), pc->iterations, pc->evaluations,
            pc->rms_log_before, pc->rms_log_after);
    write_consts(pc, f);
    write_parts(pc, f);
    fputs("  \"errors\": [\n", f);
    for (int e = 0; e < pc->nerrs; e++) {
        const struct zs_pubcal_err *o = &pc->errs[e];
        fprintf(f,
                "    {\"quantity\": \"%s\", \"part\": \"%s\", \"n\": %d, "
                "\"median_abs_error_pct\": {\"before\": %.2f, \"after\": "
                "%.2f}, \"p90_abs_error_pct\": {\"before\": %.2f, \"after\": "
                "%.2f}}%s\n",
                zs_pub_qty_name(o->qty), o->part ? "check" : "fit", o->n,
                o->med_before, o->med_after, o->p90_before, o->p90_after,
                e + 1 < pc->nerrs ? "," : "");
    }
    fputs("  ]\n}\n", f);
    return zs_afile_commit(&af, err);
}
