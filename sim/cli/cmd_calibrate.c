/*
 * cmd_calibrate.c — `zsim calibrate`: fits hardware-profile coefficients from
 * measured files by least squares (GSL) and writes a GPU profile plus a fit
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
 * Outputs: --out NAME.json, a GPU profile in the format of
 * hwprofiles/gpus/<gpu>.json (the base profile with "gemm_eff" and "pcie"
 * replaced; checked by loading it with zs_hw_load_gpu before it is renamed
 * into place), and NAME.fit.json, the fit report (schema zsim.calibrate/1):
 * the profile loader is strict about keys, so the report cannot live inside
 * the profile.  CPU Adam rates belong to node profiles ("optimizer" group) and
 * are in the report only.
 */
#include "cli/cmd.h"
#include "hw/hw.h"
#include "formats/measured_io.h"
#include "util/afile.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/strutil.h"
#include "util/table.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define ADAM_BYTES_PER_ELEMENT 28.0 /* see the top of this file */
#define MAX_FILES 16
#define NDEC 24 /* FLOPs decades 10^0 .. 10^23 */
#define NBUCKET 8
/* The profile loader accepts "source" strings of at most 239 characters
 * (ZS_HW_SOURCE_CAP - 1 in sim/hw); ours are cut there. */
#define ZS_CAL_SOURCE_MAX 239

static const char g_usage[] =
    "usage: zsim calibrate --measured FILE [--measured FILE ...] --out "
    "NAME.json\n"
    "                      [--base GPU_PROFILE.json]\n"
    "\n"
    "Fits hardware-profile coefficients from harness measurements by least\n"
    "squares: the GEMM efficiency curve (one point per FLOPs decade), PCIe\n"
    "rates and latency per direction (pinned h2d, pinned d2h, pageable), and\n"
    "the CPU Adam rate per core.  Writes NAME.json, a GPU profile (the base\n"
    "profile with 'gemm_eff' and 'pcie' replaced), and NAME.fit.json with the\n"
    "fit quality (r2, rms residual, points) of every group and the CPU Adam\n"
    "rates for the node profile.\n"
    "\n"
    "options:\n"
    "  --measured FILE   a zsim.measured/1 file; repeat for more (at most 16)\n"
    "  --out FILE        the profile to write; the report goes beside it\n"
    "  --base FILE       GPU profile to start from (default: hwprofiles/gpus/\n"
    "                    <the measured header's gpu, lowercase>.json)\n"
    "\n"
    "examples:\n"
    "  zsim calibrate --measured tests/data/good/sched-meas-tiny.json \\\n"
    "      --out h100-calibrated.json\n"
    "\n"
    "exit codes: 0 ok, 1 i/o failure, 2 usage error, 3 invalid input file\n";

/* One fitted group: a through-origin slope or a line. */
struct fit {
    int n;
    double slope, icept; /* t = icept + slope * x */
    double r2, rms_s;
};

/* Points for one fit (x, t), growable. */
struct pts {
    double *x, *t;
    size_t n, cap;
};

static int pts_add(struct pts *p, double x, double t)
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

static void pts_release(struct pts *p)
{
    zs_free(p->x);
    zs_free(p->t);
    memset(p, 0, sizeof *p);
}

static void fit_quality(const struct pts *p, struct fit *f)
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
static void fit_origin(const struct pts *p, struct fit *f)
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
static int fit_line(const struct pts *p, struct fit *f)
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

static cJSON *fit_json(const struct fit *f)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "r2", f->r2);
    cJSON_AddNumberToObject(o, "rms_residual_s", f->rms_s);
    cJSON_AddNumberToObject(o, "n", f->n);
    return o;
}

enum { DIR_H2D, DIR_D2H, DIR_PAGEABLE, NDIR };
static const char *const g_dir_names[NDIR] = {"h2d", "d2h", "pageable"};

struct cal {
    struct pts gemm[NDEC];
    double gemm_lx[NDEC]; /* Σ log10(flops) for the geometric mean */
    struct pts pcie[NDIR];
    double bucket_bytes[NDIR][NBUCKET], bucket_s[NDIR][NBUCKET];
    int bucket_n[NDIR][NBUCKET];
    struct pts adam[2];
};

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

static int collect(struct cal *c, const struct zs_measured *m,
                   struct zs_err *err)
{
    for (int32_t i = 0; i < m->ntasks; i++) {
        const struct zs_meas_task *t = &m->tasks[i];
        double s;
        int rc = 0;
        if (t->skipped || t->start_ns < 0 || t->end_ns <= t->start_ns)
            continue;
        s = (double)(t->end_ns - t->start_ns) / 1e9;
        if (t->kind == ZS_SK_GEMM) {
            double fl = 2.0 * (double)t->m * (double)t->n * (double)t->k *
                        (double)t->count;
            int d = (int)floor(log10(fl));
            if (d < 0 || d >= NDEC)
                continue;
            rc = pts_add(&c->gemm[d], fl, s);
            c->gemm_lx[d] += log10(fl);
        } else if (t->kind == ZS_SK_H2D || t->kind == ZS_SK_D2H) {
            int dir = !t->pinned             ? DIR_PAGEABLE
                      : t->kind == ZS_SK_H2D ? DIR_H2D
                                             : DIR_D2H;
            int b = bucket_of((double)t->bytes);
            rc = pts_add(&c->pcie[dir], (double)t->bytes, s);
            c->bucket_bytes[dir][b] += (double)t->bytes;
            c->bucket_s[dir][b] += s;
            c->bucket_n[dir][b]++;
        } else if (t->kind == ZS_SK_CPU_ADAM) {
            double threads =
                (double)(t->threads > 0 ? t->threads : m->env.cpu_threads);
            if (threads < 1)
                threads = 1;
            rc = pts_add(&c->adam[t->adam_impl == ZS_SA_TORCH],
                         ADAM_BYTES_PER_ELEMENT * (double)t->elements / threads,
                         s);
        }
        if (rc)
            return zs_err_set(err, ZS_ENOMEM, "out of memory");
    }
    return 0;
}

static void cal_release(struct cal *c)
{
    for (int d = 0; d < NDEC; d++)
        pts_release(&c->gemm[d]);
    for (int d = 0; d < NDIR; d++)
        pts_release(&c->pcie[d]);
    pts_release(&c->adam[0]);
    pts_release(&c->adam[1]);
}

/* text and a newline, atomically (util/afile.h) */
static int write_text(const char *path, const char *text, struct zs_err *err)
{
    struct zs_afile a;
    int rc = zs_afile_open(&a, NULL, path, err);
    if (rc)
        return rc;
    fputs(text, a.f);
    fputc('\n', a.f);
    return zs_afile_commit(&a, err);
}

static const struct zs_opt g_opts[] = {
    {"measured", 1},
    {"out", 1},
    {"base", 1},
};
#define NOPTS (sizeof g_opts / sizeof g_opts[0])

/* The --measured values: zs_args keeps the last, so collect them here. */
static int measured_paths(int argc, char **argv, const char **paths, int *n,
                          struct zs_err *err)
{
    *n = 0;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "--measured") == 0 && i + 1 < argc)
            v = argv[++i];
        else if (strncmp(argv[i], "--measured=", 11) == 0)
            v = argv[i] + 11;
        else if ((strcmp(argv[i], "--out") == 0 ||
                  strcmp(argv[i], "--base") == 0) &&
                 i + 1 < argc)
            i++;
        if (!v)
            continue;
        if (*n >= MAX_FILES)
            return zs_err_set(err, ZS_EUSAGE,
                              "too many --measured files: at most %d",
                              MAX_FILES);
        paths[(*n)++] = v;
    }
    return 0;
}

/* Replaces obj[key] with item (owned by obj afterwards). */
static void put(cJSON *obj, const char *key, cJSON *item)
{
    if (cJSON_GetObjectItemCaseSensitive(obj, key))
        cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item);
    else
        cJSON_AddItemToObject(obj, key, item);
}

static int run(int argc, char **argv, struct zs_err *err)
{
    struct zs_args a;
    const char *paths[MAX_FILES], *out, *base, *fit_base;
    char base_buf[512], fit_path[4096], src_text[1024], tmp_prof[4200];
    struct zs_measured m;
    struct cal c;
    struct fit gfit[NDEC], pfit[NDIR], afit[2];
    struct zs_json_src bsrc = {"", NULL, 0};
    cJSON *prof = NULL, *rep = NULL, *arr, *o, *gx, *gy;
    char *text = NULL;
    char gpu_name[64] = "", first_env[200] = "";
    double peak = 0;
    int npaths, rc, ngroups = 0;

    memset(&c, 0, sizeof c);
    zs_measured_init(&m);
    /* GSL's default handler aborts; errors come back as return codes. */
    gsl_set_error_handler_off();
    rc = zs_args_parse(argc, argv, g_opts, NOPTS, "calibrate", &a, err);
    if (!rc)
        rc = measured_paths(argc, argv, paths, &npaths, err);
    if (rc)
        return rc;
    out = zs_args_get(&a, g_opts, NOPTS, "out");
    base = zs_args_get(&a, g_opts, NOPTS, "base");
    if (a.npos)
        return zs_err_set(err, ZS_EUSAGE,
                          "unexpected argument '%s' for 'calibrate' (files go "
                          "after --measured)",
                          a.pos[0]);
    if (!npaths || !out)
        return zs_err_set(err, ZS_EUSAGE,
                          "'calibrate' needs --measured FILE and --out FILE "
                          "(see 'zsim calibrate --help')");
    if (!zs_str_endswith(out, ".json"))
        return zs_err_set(
            err, ZS_EUSAGE,
            "invalid value for '--out': must end in .json (got '%s')", out);
    snprintf(fit_path, sizeof fit_path, "%.*s.fit.json", (int)(strlen(out) - 5),
             out);
    fit_base = strrchr(fit_path, '/') ? strrchr(fit_path, '/') + 1 : fit_path;

    for (int i = 0; i < npaths; i++) {
        rc = zs_measured_read(paths[i], &m, err);
        if (rc)
            goto out;
        if (m.kind != ZS_MK_HARNESS) {
            rc = zs_err_set(err, ZS_EINPUT,
                            "invalid 'kind' in %s: calibrate needs per-task "
                            "measurements from the harness (got '%s')",
                            paths[i], zs_meas_kind_name(m.kind));
            goto out;
        }
        if (i == 0) {
            zs_strlcpy(gpu_name, m.header.gpu, sizeof gpu_name);
            snprintf(first_env, sizeof first_env, "%s, driver %s, %s",
                     m.env.gpu, m.env.driver[0] ? m.env.driver : "?",
                     m.env.date);
        } else if (strcmp(gpu_name, m.header.gpu) != 0) {
            rc = zs_err_set(err, ZS_EINPUT,
                            "'%s' is for GPU '%s', but '%s' is for '%s': "
                            "calibrate one GPU at a time",
                            paths[i], m.header.gpu, paths[0], gpu_name);
            goto out;
        }
        rc = collect(&c, &m, err);
        zs_measured_release(&m);
        if (rc)
            goto out;
    }

    if (!base) {
        size_t k;
        if (!gpu_name[0]) {
            rc = zs_err_set(err, ZS_EUSAGE,
                            "'%s' names no GPU in 'header.gpu': pass --base "
                            "GPU_PROFILE.json",
                            paths[0]);
            goto out;
        }
        k = (size_t)snprintf(base_buf, sizeof base_buf, "%s/hwprofiles/gpus/",
                             ZS_SOURCE_DIR);
        for (const char *p = gpu_name; *p && k + 6 < sizeof base_buf; p++)
            base_buf[k++] = (char)tolower((unsigned char)*p);
        snprintf(base_buf + k, sizeof base_buf - k, ".json");
        base = base_buf;
    }
    rc = zs_json_parse_file(base, &prof, &bsrc, err);
    if (rc)
        goto out;
    o = cJSON_GetObjectItemCaseSensitive(prof, "compute");
    o = o ? cJSON_GetObjectItemCaseSensitive(o, "peak_bf16_flops") : NULL;
    if (!cJSON_IsNumber(o) || o->valuedouble <= 0) {
        rc = zs_err_set(err, ZS_EINPUT,
                        "missing 'compute.peak_bf16_flops' in %s: required, "
                        "a GPU profile (hwprofiles/gpus/*.json)",
                        base);
        goto out;
    }
    peak = o->valuedouble;

    /* Fits. */
    for (int d = 0; d < NDEC; d++)
        if (c.gemm[d].n) {
            fit_origin(&c.gemm[d], &gfit[d]);
            ngroups++;
        }
    for (int d = 0; d < NDIR; d++)
        if (c.pcie[d].n && (rc = fit_line(&c.pcie[d], &pfit[d])) != 0) {
            zs_err_set(err, rc, "least-squares fit of %s copies failed",
                       g_dir_names[d]);
            goto out;
        }
    for (int d = 0; d < 2; d++)
        if (c.adam[d].n)
            fit_origin(&c.adam[d], &afit[d]);

    /* The profile: gemm_eff from measured decades plus the base's points
     * outside them; pcie rates replaced where measured. */
    if (ngroups) {
        const cJSON *old = cJSON_GetObjectItemCaseSensitive(prof, "gemm_eff");
        const cJSON *ox =
            old ? cJSON_GetObjectItemCaseSensitive(old, "x") : NULL;
        const cJSON *oy =
            old ? cJSON_GetObjectItemCaseSensitive(old, "y") : NULL;
        double px[ZS_CURVE_MAX], py[ZS_CURVE_MAX];
        int np = 0, lo = NDEC, hi = -1, kept = 0, over = 0;
        for (int d = 0; d < NDEC; d++)
            if (c.gemm[d].n) {
                lo = d < lo ? d : lo;
                hi = d;
            }
        /* Merge in increasing x: base points below, measured, base above. */
        for (int pass = 0; pass < 3; pass++) {
            if (pass == 1) {
                for (int d = lo; d <= hi; d++)
                    if (c.gemm[d].n && gfit[d].slope > 0) {
                        if (np == ZS_CURVE_MAX) { /* reported below */
                            over++;
                            continue;
                        }
                        px[np] = pow(10.0, c.gemm_lx[d] / (double)c.gemm[d].n);
                        py[np] = 1.0 / (gfit[d].slope * peak);
                        if (py[np] > 1)
                            py[np] = 1;
                        np++;
                    }
                continue;
            }
            for (int j = 0; cJSON_IsArray(ox) && cJSON_IsArray(oy) &&
                            j < cJSON_GetArraySize(ox);
                 j++) {
                const cJSON *xj = cJSON_GetArrayItem(ox, j);
                const cJSON *yj = cJSON_GetArrayItem(oy, j);
                double xv;
                if (!cJSON_IsNumber(xj) || !cJSON_IsNumber(yj))
                    continue;
                xv = xj->valuedouble;
                if ((pass == 0 && xv < pow(10.0, lo)) ||
                    (pass == 2 && xv >= pow(10.0, hi + 1))) {
                    if (np == ZS_CURVE_MAX) { /* reported below */
                        over++;
                        continue;
                    }
                    px[np] = xv;
                    py[np] = yj->valuedouble;
                    np++;
                    kept++;
                }
            }
        }
        if (over) {
            rc = zs_err_set(err, ZS_ELIMIT,
                            "calibrated 'gemm_eff' curve needs %d points "
                            "(measured decades and base points kept "
                            "outside them); a profile curve holds at most %d",
                            np + over, ZS_CURVE_MAX);
            goto out;
        }
        gx = cJSON_CreateDoubleArray(px, np);
        gy = cJSON_CreateDoubleArray(py, np);
        o = cJSON_CreateObject();
        if (!gx || !gy || !o) {
            cJSON_Delete(gx);
            cJSON_Delete(gy);
            cJSON_Delete(o);
            rc = zs_err_set(err, ZS_ENOMEM, "out of memory");
            goto out;
        }
        cJSON_AddItemToObject(o, "x", gx);
        cJSON_AddItemToObject(o, "y", gy);
        snprintf(src_text, sizeof src_text,
                 "zsim calibrate: FLOPs 1e%d..1e%d fitted (least squares) from "
                 "%d file(s), %.60s; %d base point(s) kept outside; fit in "
                 "%.60s",
                 lo, hi + 1, npaths, first_env, kept, fit_base);
        src_text[ZS_CAL_SOURCE_MAX] = '\0';
        cJSON_AddStringToObject(o, "source", src_text);
        put(prof, "gemm_eff", o);
        /* The fitted curve is this machine's measurement: drop compute.sms
         * so GEMMs follow it instead of the shape model, which would keep
         * only its top point (hw.c zs_gpu_gemm_s). */
        {
            cJSON *cmp = cJSON_GetObjectItemCaseSensitive(prof, "compute");
            if (cJSON_IsObject(cmp))
                cJSON_DeleteItemFromObjectCaseSensitive(cmp, "sms");
        }
    }
    o = cJSON_GetObjectItemCaseSensitive(prof, "pcie");
    if (o && (c.pcie[0].n || c.pcie[1].n || c.pcie[2].n)) {
        static const char *const keys[NDIR] = {
            "h2d_bytes_per_s", "d2h_bytes_per_s", "pageable_bytes_per_s"};
        char which[64] = "";
        for (int d = 0; d < NDIR; d++)
            if (c.pcie[d].n && pfit[d].slope > 0) {
                put(o, keys[d], cJSON_CreateNumber(1.0 / pfit[d].slope));
                snprintf(which + strlen(which), sizeof which - strlen(which),
                         "%s%s", which[0] ? ", " : "", g_dir_names[d]);
            }
        snprintf(src_text, sizeof src_text,
                 "zsim calibrate: %s fitted as t = latency + bytes/rate from "
                 "%d file(s), %.60s; other figures from the base profile; "
                 "fit in %.40s",
                 which, npaths, first_env, fit_base);
        src_text[ZS_CAL_SOURCE_MAX] = '\0';
        put(o, "source", cJSON_CreateString(src_text));
    }
    put(prof, "comment",
        cJSON_CreateString("calibrated by zsim calibrate from measurements: "
                           "review the diff against the base profile before "
                           "replacing it"));

    /* The fit report. */
    rep = cJSON_CreateObject();
    if (!rep) {
        rc = zs_err_set(err, ZS_ENOMEM, "out of memory");
        goto out;
    }
    cJSON_AddStringToObject(rep, "schema", "zsim.calibrate/1");
    cJSON_AddStringToObject(rep, "profile", out);
    cJSON_AddStringToObject(rep, "base", base);
    cJSON_AddStringToObject(rep, "gpu", gpu_name);
    arr = cJSON_AddArrayToObject(rep, "measured_files");
    for (int i = 0; arr && i < npaths; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(paths[i]));
    o = cJSON_AddObjectToObject(rep, "gemm");
    if (o) {
        cJSON_AddNumberToObject(o, "peak_bf16_flops", peak);
        arr = cJSON_AddArrayToObject(o, "groups");
        for (int d = 0; arr && d < NDEC; d++) {
            cJSON *g;
            if (!c.gemm[d].n)
                continue;
            g = cJSON_CreateObject();
            if (!g)
                break;
            cJSON_AddNumberToObject(g, "flops_lo", pow(10.0, d));
            cJSON_AddNumberToObject(g, "flops_hi", pow(10.0, d + 1));
            cJSON_AddNumberToObject(
                g, "x_flops", pow(10.0, c.gemm_lx[d] / (double)c.gemm[d].n));
            cJSON_AddNumberToObject(
                g, "efficiency",
                gfit[d].slope > 0 ? 1.0 / (gfit[d].slope * peak) : 0);
            cJSON_AddItemToObject(g, "fit", fit_json(&gfit[d]));
            cJSON_AddItemToArray(arr, g);
        }
    }
    o = cJSON_AddObjectToObject(rep, "pcie");
    for (int d = 0; o && d < NDIR; d++) {
        cJSON *g, *b;
        if (!c.pcie[d].n)
            continue;
        g = cJSON_AddObjectToObject(o, g_dir_names[d]);
        if (!g)
            break;
        cJSON_AddNumberToObject(g, "bytes_per_s",
                                pfit[d].slope > 0 ? 1.0 / pfit[d].slope : 0);
        cJSON_AddNumberToObject(g, "latency_s", pfit[d].icept);
        cJSON_AddItemToObject(g, "fit", fit_json(&pfit[d]));
        b = cJSON_AddArrayToObject(g, "buckets");
        for (int k = 0; b && k < NBUCKET; k++) {
            cJSON *e;
            if (!c.bucket_n[d][k])
                continue;
            e = cJSON_CreateObject();
            if (!e)
                break;
            cJSON_AddNumberToObject(e, "bytes_lo",
                                    k ? 65536.0 * pow(16, k - 1) : 0);
            cJSON_AddNumberToObject(e, "bytes_hi", 65536.0 * pow(16, k));
            cJSON_AddNumberToObject(e, "n", c.bucket_n[d][k]);
            cJSON_AddNumberToObject(e, "bytes_per_s",
                                    c.bucket_bytes[d][k] / c.bucket_s[d][k]);
            cJSON_AddItemToArray(b, e);
        }
    }
    o = cJSON_AddObjectToObject(rep, "cpu_adam");
    for (int d = 0; o && d < 2; d++) {
        cJSON *g;
        if (!c.adam[d].n)
            continue;
        g = cJSON_AddObjectToObject(o, d ? "torch" : "deepspeed");
        if (!g)
            break;
        cJSON_AddStringToObject(
            g, "node_profile_key",
            "optimizer.fused_adam_bytes_per_s_per_thread");
        cJSON_AddNumberToObject(g, "bytes_per_s_per_core",
                                afit[d].slope > 0 ? 1.0 / afit[d].slope : 0);
        cJSON_AddNumberToObject(g, "bytes_per_element", ADAM_BYTES_PER_ELEMENT);
        cJSON_AddItemToObject(g, "fit", fit_json(&afit[d]));
    }

    /* Write the profile to a temp name, prove that the loader accepts it,
     * then rename; the report follows. */
    text = cJSON_Print(prof);
    if (!text) {
        rc = zs_err_set(err, ZS_ENOMEM, "out of memory");
        goto out;
    }
    snprintf(tmp_prof, sizeof tmp_prof, "%s.check.json", out);
    rc = write_text(tmp_prof, text, err);
    cJSON_free(text);
    text = NULL;
    if (rc)
        goto out;
    {
        struct zs_gpu g;
        rc = zs_hw_load_gpu(tmp_prof, &g, err);
        if (rc) {
            remove(tmp_prof);
            zs_err_prefix(err,
                          "internal: the calibrated profile does not load");
            rc = ZS_ERUNTIME;
            err->code = rc;
            goto out;
        }
    }
    if (rename(tmp_prof, out) != 0) {
        rc = zs_err_set(err, ZS_EIO, "cannot rename '%s' to '%s': %s", tmp_prof,
                        out, strerror(errno));
        remove(tmp_prof);
        goto out;
    }
    text = cJSON_Print(rep);
    if (!text) {
        rc = zs_err_set(err, ZS_ENOMEM, "out of memory");
        goto out;
    }
    rc = write_text(fit_path, text, err);
    if (rc)
        goto out;

    /* Summary for people. */
    printf("calibrated %s from %d measured file(s) (%s)\n", gpu_name, npaths,
           first_env);
    {
        struct zs_table *t = zs_table_new(5, "lrrrr");
        if (!t) {
            rc = zs_err_set(err, ZS_ENOMEM, "out of memory");
            goto out;
        }
        zs_table_header(t);
        zs_table_rowf(t, "group\tpoints\tfitted\tr2\trms residual");
        for (int d = 0; d < NDEC; d++)
            if (c.gemm[d].n)
                zs_table_rowf(
                    t, "gemm 1e%d..1e%d FLOP\t%d\teff %.3f\t%.4f\t%.3g s", d,
                    d + 1, gfit[d].n, 1.0 / (gfit[d].slope * peak), gfit[d].r2,
                    gfit[d].rms_s);
        for (int d = 0; d < NDIR; d++)
            if (c.pcie[d].n)
                zs_table_rowf(t,
                              "pcie %s\t%d\t%.2f GB/s + %.3g us\t%.4f\t%.3g s",
                              g_dir_names[d], pfit[d].n, 1e-9 / pfit[d].slope,
                              pfit[d].icept * 1e6, pfit[d].r2, pfit[d].rms_s);
        for (int d = 0; d < 2; d++)
            if (c.adam[d].n)
                zs_table_rowf(t,
                              "cpu_adam %s\t%d\t%.3g GB/s/core\t%.4f\t%.3g s",
                              d ? "torch" : "deepspeed", afit[d].n,
                              1e-9 / afit[d].slope, afit[d].r2, afit[d].rms_s);
        zs_table_print(t, stdout, 2);
        zs_table_free(t);
    }
    printf("wrote %s and %s\n", out, fit_path);
out:
    cJSON_free(text);
    cJSON_Delete(prof);
    cJSON_Delete(rep);
    zs_json_src_release(&bsrc);
    zs_measured_release(&m);
    cal_release(&c);
    return rc;
}

const struct zs_cmd zs_cmd_calibrate = {
    "calibrate",
    "fit hardware-profile coefficients from harness measurements (GSL)",
    g_usage,
    run,
};
