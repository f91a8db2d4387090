/*
 * calibrate.c — fits hardware-profile coefficients from measured task times
 * by least squares (GSL), and writes the calibrated GPU profile and its fit
 * report.
 *
 * Fits (each over every timed, non-skipped task of all the files):
 *   GEMM efficiency: tasks grouped by FLOPs decade [10^d, 10^(d+1)); per
 *     group t = a * flops through the origin, efficiency = 1 / (a * peak),
 *     placed at the group's geometric-mean FLOPs.  Points of the base curve
 *     outside the measured decades are kept, so the curve still covers sizes
 *     nobody measured (their sources say so).
 *   PCIe: per direction (pinned h2d, pinned d2h, pageable both ways)
 *     t = latency + bytes / bw with gsl_multifit_linear; plus the effective
 *     rate per size bucket (powers of 16 from 64 KiB) in the report.
 *   CPU Adam: per implementation, t = a * (28 B * elements / threads) through
 *     the origin; rate per core = 1 / a.  28 B per element = read p, g, m, v
 *     (16 B) + write p, m, v (12 B): zero3-offload-mechanics.md §5 [derived].
 * Every fit reports r2, the rms residual (s) and its number of points.
 *
 * Outputs: a GPU profile in the format of hwprofiles/gpus/<gpu>.json (the
 * base profile with "gemm_eff" and "pcie" replaced; checked by loading it
 * with zs_hw_load_gpu before it is renamed into place), and the fit report
 * (schema zsim.calibrate/1): the profile loader is strict about keys, so the
 * report cannot live inside the profile.  CPU Adam rates belong to node
 * profiles ("optimizer" group) and are in the report only.
 *
 * The base profile is edited as a cJSON tree, which never leaves this file
 * (STYLE 16): it keeps every figure and source the fit does not replace, in
 * the base's own order.
 *
 * Cost: linear in the tasks; one 2-parameter GSL fit per copy direction.
 */
#include "hw/calibrate.h"
#include "hw/hw.h"
#include "util/afile.h"
#include "util/alloc.h"
#include "util/json.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define NDEC ZS_CAL_NDEC
#define NDIR ZS_CAL_NDIR
#define NBUCKET ZS_CAL_NBUCKET
/* The profile loader accepts "source" strings of at most 239 characters
 * (ZS_HW_SOURCE_CAP - 1 in hw.h); ours are cut there. */
#define ZS_CAL_SOURCE_MAX 239

static const char *const g_dir_names[NDIR] = {"h2d", "d2h", "pageable"};

const char *zs_cal_dir_name(enum zs_cal_dir dir)
{
    return dir >= 0 && dir < NDIR ? g_dir_names[dir] : "?";
}

/* ---- points and fits ---------------------------------------------------- */

static int pts_add(struct zs_cal_pts *p, double x, double t)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        double *nx = zs_realloc(p->x, cap * sizeof *nx), *nt;
        if (!nx)
            return ZS_ENOMEM;
        p->x = nx;
        nt = zs_realloc(p->t, cap * sizeof *nt);
        if (!nt)
            return ZS_ENOMEM;
        p->t = nt;
        p->cap = cap;
    }
    p->x[p->n] = x;
    p->t[p->n] = t;
    p->n++;
    return 0;
}

static void pts_release(struct zs_cal_pts *p)
{
    zs_free(p->x);
    zs_free(p->t);
    memset(p, 0, sizeof *p);
}

static void fit_quality(const struct zs_cal_pts *p, struct zs_cal_fit *f)
{
    double mean = 0, ss_tot = 0, ss_res = 0;
    for (size_t i = 0; i < p->n; i++)
        mean += p->t[i];
    mean /= (double)p->n;
    for (size_t i = 0; i < p->n; i++) {
        double r = p->t[i] - (f->icept + f->slope * p->x[i]);
        ss_res += r * r;
        ss_tot += (p->t[i] - mean) * (p->t[i] - mean);
    }
    f->n = (int)p->n;
    f->rms_s = sqrt(ss_res / (double)p->n);
    /* All points equal: a perfect fit explains nothing and misses nothing. */
    f->r2 = ss_tot > 0 ? 1.0 - ss_res / ss_tot : (ss_res == 0 ? 1.0 : 0.0);
}

/* t = a x through the origin: a = Σxt / Σx². */
static void fit_origin(const struct zs_cal_pts *p, struct zs_cal_fit *f)
{
    double sxt = 0, sxx = 0;
    for (size_t i = 0; i < p->n; i++) {
        sxt += p->x[i] * p->t[i];
        sxx += p->x[i] * p->x[i];
    }
    f->icept = 0;
    f->slope = sxx > 0 ? sxt / sxx : 0;
    fit_quality(p, f);
}

/* t = c0 + c1 x by gsl_multifit_linear; falls back to the origin fit when
 * there are fewer than two distinct x or the latency comes out negative. */
static int fit_line(const struct zs_cal_pts *p, struct zs_cal_fit *f)
{
    gsl_matrix *X = NULL, *cov = NULL;
    gsl_vector *y = NULL, *c = NULL;
    gsl_multifit_linear_workspace *w = NULL;
    double chisq;
    int distinct = 0, rc = 0;

    for (size_t i = 1; i < p->n && !distinct; i++)
        distinct = p->x[i] != p->x[0];
    if (p->n < 3 || !distinct) {
        fit_origin(p, f);
        return 0;
    }
    X = gsl_matrix_alloc(p->n, 2);
    y = gsl_vector_alloc(p->n);
    c = gsl_vector_alloc(2);
    cov = gsl_matrix_alloc(2, 2);
    w = gsl_multifit_linear_alloc(p->n, 2);
    if (!X || !y || !c || !cov || !w) {
        rc = ZS_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < p->n; i++) {
        gsl_matrix_set(X, i, 0, 1.0);
        gsl_matrix_set(X, i, 1, p->x[i]);
        gsl_vector_set(y, i, p->t[i]);
    }
    if (gsl_multifit_linear(X, y, c, cov, &chisq, w) != 0) {
        rc = ZS_ERUNTIME;
        goto out;
    }
    f->icept = gsl_vector_get(c, 0);
    f->slope = gsl_vector_get(c, 1);
    if (f->icept < 0 || f->slope <= 0)
        fit_origin(p, f);
    else
        fit_quality(p, f);
out:
    gsl_multifit_linear_free(w);
    gsl_matrix_free(cov);
    gsl_vector_free(c);
    gsl_vector_free(y);
    gsl_matrix_free(X);
    return rc;
}

/* ---- collecting --------------------------------------------------------- */

void zs_cal_init(struct zs_cal *c)
{
    memset(c, 0, sizeof *c);
    /* GSL's default handler aborts; errors come back as return codes. */
    gsl_set_error_handler_off();
}

void zs_cal_release(struct zs_cal *c)
{
    for (int d = 0; d < NDEC; d++)
        pts_release(&c->gemm[d]);
    for (int d = 0; d < NDIR; d++)
        pts_release(&c->pcie[d]);
    for (int d = 0; d < ZS_CAL_NADAM; d++)
        pts_release(&c->adam[d]);
}

int zs_cal_add_gemm(struct zs_cal *c, double flops, double s)
{
    int d = (int)floor(log10(flops)), rc;
    if (d < 0 || d >= NDEC)
        return 0;
    rc = pts_add(&c->gemm[d], flops, s);
    c->gemm_lx[d] += log10(flops);
    return rc;
}

/* Size bucket: < 64 KiB, then powers of 16. */
static int bucket_of(double bytes)
{
    int b = 0;
    double lim = 65536;
    while (b < NBUCKET - 1 && bytes >= lim) {
        lim *= 16;
        b++;
    }
    return b;
}

int zs_cal_add_copy(struct zs_cal *c, enum zs_cal_dir dir, double bytes,
                    double s)
{
    int b = bucket_of(bytes);
    int rc = pts_add(&c->pcie[dir], bytes, s);
    c->bucket_bytes[dir][b] += bytes;
    c->bucket_s[dir][b] += s;
    c->bucket_n[dir][b]++;
    return rc;
}

int zs_cal_add_adam(struct zs_cal *c, enum zs_cal_adam impl, double elements,
                    double threads, double s)
{
    return pts_add(&c->adam[impl],
                   ZS_CAL_ADAM_BYTES_PER_ELEMENT * elements / threads, s);
}

/* Every group's fit; the copy fits can fail inside GSL. */
static int fit_all(struct zs_cal *c, struct zs_err *err)
{
    int rc;
    for (int d = 0; d < NDEC; d++)
        if (c->gemm[d].n)
            fit_origin(&c->gemm[d], &c->gemm_fit[d]);
    for (int d = 0; d < NDIR; d++)
        if (c->pcie[d].n && (rc = fit_line(&c->pcie[d], &c->pcie_fit[d])) != 0)
            return zs_err_set(err, rc, "least-squares fit of %s copies failed",
                              g_dir_names[d]);
    for (int d = 0; d < ZS_CAL_NADAM; d++)
        if (c->adam[d].n)
            fit_origin(&c->adam[d], &c->adam_fit[d]);
    return 0;
}

/* A decade's point: geometric-mean FLOPs, and efficiency 1 / (a * peak). */
static double gemm_x(const struct zs_cal *c, int d)
{
    return pow(10.0, c->gemm_lx[d] / (double)c->gemm[d].n);
}

static double gemm_eff(const struct zs_cal *c, int d)
{
    return c->gemm_fit[d].slope > 0
               ? 1.0 / (c->gemm_fit[d].slope * c->peak_flops)
               : 0;
}

/* ---- the profile -------------------------------------------------------- */

/* Replaces obj[key] with item (owned by obj afterwards). */
static void put(cJSON *obj, const char *key, cJSON *item)
{
    if (cJSON_GetObjectItemCaseSensitive(obj, key))
        cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item);
    else
        cJSON_AddItemToObject(obj, key, item);
}

/* The base profile's tree and its compute.peak_bf16_flops. */
static int read_base(const char *base, cJSON **prof, struct zs_json_src *src,
                     double *peak, struct zs_err *err)
{
    const cJSON *o;
    int rc = zs_json_parse_file(base, prof, src, err);
    if (rc)
        return rc;
    o = cJSON_GetObjectItemCaseSensitive(*prof, "compute");
    o = o ? cJSON_GetObjectItemCaseSensitive(o, "peak_bf16_flops") : NULL;
    if (!cJSON_IsNumber(o) || o->valuedouble <= 0)
        return zs_err_set(err, ZS_EINPUT,
                          "missing 'compute.peak_bf16_flops' in %s: required, "
                          "a GPU profile (hwprofiles/gpus/*.json)",
                          base);
    *peak = o->valuedouble;
    return 0;
}

/* The merged gemm_eff curve, in increasing x: base points below the
 * measured decades [lo, hi], the measured points, base points above. */
struct curve_merge {
    double px[ZS_CURVE_MAX], py[ZS_CURVE_MAX];
    int np, lo, hi, kept, over;
};

static void merge_add(struct curve_merge *m, double x, double y)
{
    if (m->np == ZS_CURVE_MAX) { /* reported by the caller */
        m->over++;
        return;
    }
    m->px[m->np] = x;
    m->py[m->np] = y;
    m->np++;
}

/* The base curve's points below 10^lo (above == 0) or from 10^(hi+1) on. */
static void merge_base(struct curve_merge *m, const cJSON *old, int above)
{
    const cJSON *ox = old ? cJSON_GetObjectItemCaseSensitive(old, "x") : NULL;
    const cJSON *oy = old ? cJSON_GetObjectItemCaseSensitive(old, "y") : NULL;
    for (int j = 0;
         cJSON_IsArray(ox) && cJSON_IsArray(oy) && j < cJSON_GetArraySize(ox);
         j++) {
        const cJSON *xj = cJSON_GetArrayItem(ox, j);
        const cJSON *yj = cJSON_GetArrayItem(oy, j);
        double xv;
        if (!cJSON_IsNumber(xj) || !cJSON_IsNumber(yj))
            continue;
        xv = xj->valuedouble;
        if ((!above && xv < pow(10.0, m->lo)) ||
            (above && xv >= pow(10.0, m->hi + 1))) {
            int over = m->over;
            merge_add(m, xv, yj->valuedouble);
            m->kept += m->over == over;
        }
    }
}

static int merge_curve(const struct zs_cal *c, const cJSON *old,
                       struct curve_merge *m, struct zs_err *err)
{
    memset(m, 0, sizeof *m);
    m->lo = NDEC;
    m->hi = -1;
    for (int d = 0; d < NDEC; d++)
        if (c->gemm[d].n) {
            m->lo = d < m->lo ? d : m->lo;
            m->hi = d;
        }
    merge_base(m, old, 0);
    for (int d = m->lo; d <= m->hi; d++)
        if (c->gemm[d].n && c->gemm_fit[d].slope > 0) {
            double y = gemm_eff(c, d);
            merge_add(m, gemm_x(c, d), y > 1 ? 1 : y);
        }
    merge_base(m, old, 1);
    if (m->over)
        return zs_err_set(err, ZS_ELIMIT,
                          "calibrated 'gemm_eff' curve needs %d points "
                          "(measured decades and base points kept "
                          "outside them); a profile curve holds at most %d",
                          m->np + m->over, ZS_CURVE_MAX);
    return 0;
}

static const char *fit_base_name(const struct zs_cal_run *r)
{
    const char *s = strrchr(r->fit_path, '/');
    return s ? s + 1 : r->fit_path;
}

/* gemm_eff from the measured decades plus the base's points outside them. */
static int put_gemm(const struct zs_cal *c, const struct zs_cal_run *r,
                    cJSON *prof, struct zs_err *err)
{
    struct curve_merge m;
    char src[1024];
    cJSON *gx, *gy, *o, *cmp;
    int rc = merge_curve(c, cJSON_GetObjectItemCaseSensitive(prof, "gemm_eff"),
                         &m, err);
    if (rc)
        return rc;
    gx = cJSON_CreateDoubleArray(m.px, m.np);
    gy = cJSON_CreateDoubleArray(m.py, m.np);
    o = cJSON_CreateObject();
    if (!gx || !gy || !o) {
        cJSON_Delete(gx);
        cJSON_Delete(gy);
        cJSON_Delete(o);
        return zs_err_set(err, ZS_ENOMEM, "out of memory");
    }
    cJSON_AddItemToObject(o, "x", gx);
    cJSON_AddItemToObject(o, "y", gy);
    snprintf(src, sizeof src,
             "zsim calibrate: FLOPs 1e%d..1e%d fitted (least squares) from "
             "%d file(s), %.60s; %d base point(s) kept outside; fit in "
             "%.60s",
             m.lo, m.hi + 1, r->nfiles, r->env, m.kept, fit_base_name(r));
    src[ZS_CAL_SOURCE_MAX] = '\0';
    cJSON_AddStringToObject(o, "source", src);
    put(prof, "gemm_eff", o);
    /* The fitted curve is this machine's measurement: drop compute.sms so
     * GEMMs follow it instead of the shape model, which would keep only its
     * top point (figures.c zs_gpu_gemm_s). */
    cmp = cJSON_GetObjectItemCaseSensitive(prof, "compute");
    if (cJSON_IsObject(cmp))
        cJSON_DeleteItemFromObjectCaseSensitive(cmp, "sms");
    /* ... and the base's sustained ceilings (hw.h gemm_sustained): they are
     * another GPU's matmul-only figures, and the fitted curve is what this
     * one ran; a sustained rate above the new curve's top would not load */
    cJSON_DeleteItemFromObjectCaseSensitive(prof, "sustained");
    return 0;
}

/* pcie rates replaced where measured. */
static void put_pcie(const struct zs_cal *c, const struct zs_cal_run *r,
                     cJSON *pcie)
{
    static const char *const keys[NDIR] = {"h2d_bytes_per_s", "d2h_bytes_per_s",
                                           "pageable_bytes_per_s"};
    char which[64] = "", src[1024];
    for (int d = 0; d < NDIR; d++)
        if (c->pcie[d].n && c->pcie_fit[d].slope > 0) {
            put(pcie, keys[d], cJSON_CreateNumber(1.0 / c->pcie_fit[d].slope));
            snprintf(which + strlen(which), sizeof which - strlen(which),
                     "%s%s", which[0] ? ", " : "", g_dir_names[d]);
        }
    snprintf(src, sizeof src,
             "zsim calibrate: %s fitted as t = latency + bytes/rate from "
             "%d file(s), %.60s; other figures from the base profile; "
             "fit in %.40s",
             which, r->nfiles, r->env, fit_base_name(r));
    src[ZS_CAL_SOURCE_MAX] = '\0';
    put(pcie, "source", cJSON_CreateString(src));
}

static int edit_profile(const struct zs_cal *c, const struct zs_cal_run *r,
                        cJSON *prof, struct zs_err *err)
{
    cJSON *pcie = cJSON_GetObjectItemCaseSensitive(prof, "pcie");
    int ngroups = 0, rc;
    for (int d = 0; d < NDEC; d++)
        ngroups += c->gemm[d].n > 0;
    if (ngroups && (rc = put_gemm(c, r, prof, err)) != 0)
        return rc;
    if (pcie && (c->pcie[0].n || c->pcie[1].n || c->pcie[2].n))
        put_pcie(c, r, pcie);
    put(prof, "comment",
        cJSON_CreateString("calibrated by zsim calibrate from measurements: "
                           "review the diff against the base profile before "
                           "replacing it"));
    return 0;
}

/* ---- the fit report (zsim.calibrate/1) ---------------------------------- */

static cJSON *fit_json(const struct zs_cal_fit *f)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "r2", f->r2);
    cJSON_AddNumberToObject(o, "rms_residual_s", f->rms_s);
    cJSON_AddNumberToObject(o, "n", f->n);
    return o;
}

static void report_gemm(const struct zs_cal *c, cJSON *rep)
{
    cJSON *o = cJSON_AddObjectToObject(rep, "gemm"), *arr;
    if (!o)
        return;
    cJSON_AddNumberToObject(o, "peak_bf16_flops", c->peak_flops);
    arr = cJSON_AddArrayToObject(o, "groups");
    for (int d = 0; arr && d < NDEC; d++) {
        cJSON *g;
        if (!c->gemm[d].n)
            continue;
        g = cJSON_CreateObject();
        if (!g)
            break;
        cJSON_AddNumberToObject(g, "flops_lo", pow(10.0, d));
        cJSON_AddNumberToObject(g, "flops_hi", pow(10.0, d + 1));
        cJSON_AddNumberToObject(g, "x_flops", gemm_x(c, d));
        cJSON_AddNumberToObject(g, "efficiency", gemm_eff(c, d));
        cJSON_AddItemToObject(g, "fit", fit_json(&c->gemm_fit[d]));
        cJSON_AddItemToArray(arr, g);
    }
}

/* Effective rate per size bucket of one copy direction. */
static void report_buckets(const struct zs_cal *c, int d, cJSON *g)
{
    cJSON *b = cJSON_AddArrayToObject(g, "buckets");
    for (int k = 0; b && k < NBUCKET; k++) {
        cJSON *e;
        if (!c->bucket_n[d][k])
            continue;
        e = cJSON_CreateObject();
        if (!e)
            break;
        cJSON_AddNumberToObject(e, "bytes_lo",
                                k ? 65536.0 * pow(16, k - 1) : 0);
        cJSON_AddNumberToObject(e, "bytes_hi", 65536.0 * pow(16, k));
        cJSON_AddNumberToObject(e, "n", c->bucket_n[d][k]);
        cJSON_AddNumberToObject(e, "bytes_per_s",
                                c->bucket_bytes[d][k] / c->bucket_s[d][k]);
        cJSON_AddItemToArray(b, e);
    }
}

static void report_pcie(const struct zs_cal *c, cJSON *rep)
{
    cJSON *o = cJSON_AddObjectToObject(rep, "pcie");
    for (int d = 0; o && d < NDIR; d++) {
        const struct zs_cal_fit *f = &c->pcie_fit[d];
        cJSON *g;
        if (!c->pcie[d].n)
            continue;
        g = cJSON_AddObjectToObject(o, g_dir_names[d]);
        if (!g)
            break;
        cJSON_AddNumberToObject(g, "bytes_per_s",
                                f->slope > 0 ? 1.0 / f->slope : 0);
        cJSON_AddNumberToObject(g, "latency_s", f->icept);
        cJSON_AddItemToObject(g, "fit", fit_json(f));
        report_buckets(c, d, g);
    }
}

static void report_adam(const struct zs_cal *c, cJSON *rep)
{
    cJSON *o = cJSON_AddObjectToObject(rep, "cpu_adam");
    for (int d = 0; o && d < ZS_CAL_NADAM; d++) {
        const struct zs_cal_fit *f = &c->adam_fit[d];
        cJSON *g;
        if (!c->adam[d].n)
            continue;
        g = cJSON_AddObjectToObject(o, d ? "torch" : "deepspeed");
        if (!g)
            break;
        cJSON_AddStringToObject(g, "node_profile_key",
                                "optimizer.fused_adam_bytes_per_s_per_thread");
        cJSON_AddNumberToObject(g, "bytes_per_s_per_core",
                                f->slope > 0 ? 1.0 / f->slope : 0);
        cJSON_AddNumberToObject(g, "bytes_per_element",
                                ZS_CAL_ADAM_BYTES_PER_ELEMENT);
        cJSON_AddItemToObject(g, "fit", fit_json(f));
    }
}

static cJSON *report(const struct zs_cal *c, const struct zs_cal_run *r)
{
    cJSON *rep = cJSON_CreateObject(), *arr;
    if (!rep)
        return NULL;
    cJSON_AddStringToObject(rep, "schema", "zsim.calibrate/1");
    cJSON_AddStringToObject(rep, "profile", r->out);
    cJSON_AddStringToObject(rep, "base", r->base);
    cJSON_AddStringToObject(rep, "gpu", r->gpu);
    arr = cJSON_AddArrayToObject(rep, "measured_files");
    for (int i = 0; arr && i < r->nfiles; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(r->files[i]));
    report_gemm(c, rep);
    report_pcie(c, rep);
    report_adam(c, rep);
    return rep;
}

/* ---- writing ------------------------------------------------------------ */

/* The tree's text and a newline, atomically (util/afile.h). */
static int write_tree(const char *path, const cJSON *tree, struct zs_err *err)
{
    struct zs_afile a;
    char *text = cJSON_Print(tree);
    int rc;
    if (!text)
        return zs_err_set(err, ZS_ENOMEM, "out of memory");
    rc = zs_afile_open(&a, NULL, path, err);
    if (!rc) {
        fputs(text, a.f);
        fputc('\n', a.f);
        rc = zs_afile_commit(&a, err);
    }
    cJSON_free(text);
    return rc;
}

/* Writes the profile to a temp name, proves that the loader accepts it,
 * then renames it into place. */
static int write_profile(const cJSON *prof, const char *out, struct zs_err *err)
{
    char tmp[4200];
    struct zs_gpu g;
    int rc;
    snprintf(tmp, sizeof tmp, "%s.check.json", out);
    rc = write_tree(tmp, prof, err);
    if (rc)
        return rc;
    rc = zs_hw_load_gpu(tmp, &g, err);
    if (rc) {
        remove(tmp);
        zs_err_prefix(err, "internal: the calibrated profile does not load");
        err->code = ZS_ERUNTIME;
        return ZS_ERUNTIME;
    }
    if (rename(tmp, out) != 0) {
        rc = zs_err_set(err, ZS_EIO, "cannot rename '%s' to '%s': %s", tmp, out,
                        strerror(errno));
        remove(tmp);
    }
    return rc;
}

int zs_cal_write(struct zs_cal *c, const struct zs_cal_run *r,
                 struct zs_err *err)
{
    struct zs_json_src bsrc = {"", NULL, 0};
    cJSON *prof = NULL, *rep = NULL;
    int rc = read_base(r->base, &prof, &bsrc, &c->peak_flops, err);
    if (!rc)
        rc = fit_all(c, err);
    if (!rc)
        rc = edit_profile(c, r, prof, err);
    if (!rc && !(rep = report(c, r)))
        rc = zs_err_set(err, ZS_ENOMEM, "out of memory");
    if (!rc)
        rc = write_profile(prof, r->out, err);
    if (!rc)
        rc = write_tree(r->fit_path, rep, err);
    cJSON_Delete(prof);
    cJSON_Delete(rep);
    zs_json_src_release(&bsrc);
    return rc;
}
