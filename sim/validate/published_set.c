/*
 * published_set.c — the published corpus of a directory, read and predicted;
 * see published_set.h.  Reading is separate from predicting so that
 * `zsim calibrate --published` reads the files once and re-predicts a part
 * of them for every trial of its constants.
 */
#include "validate/published_set.h"
#include "engine/engine.h"
#include "sched/sched.h"
#include "util/alloc.h"
#include "util/strutil.h"

#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void zs_pub_set_release(struct zs_pub_set *s)
{
    zs_free(s->runs);
    zs_free(s->pred);
    zs_free(s->rows);
    zs_sim_free(s->sim);
    zs_build_cache_free(s->cache);
    memset(s, 0, sizeof *s);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int zs_pub_set_read(const char *dir, struct zs_pub_set *s, struct zs_err *err)
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
    }
out:
    globfree(&gl);
    if (rc)
        zs_pub_set_release(s);
    return rc;
}

int zs_pub_set_predict(struct zs_pub_set *s, const bool *only,
                       zs_pub_tune_fn tune, void *ctx, struct zs_err *err)
{
    s->nrows = 0;
    /* one engine for every prediction [our measurement: a fresh one per
     * corpus run spent 55 % of 'zsim validate --published' growing and
     * faulting in its arrays, docs/validation.md "One engine for the
     * corpus"] */
    if (!s->sim)
        s->sim = zs_sim_new();
    if (!s->cache)
        s->cache = zs_build_cache_new();
    for (int k = 0; k < s->n; k++) {
        const struct zs_published *p = &s->runs[k];
        struct zs_pub_pred *q = &s->pred[k];
        int rc;
        if (p->nneeds || (only && !only[k]))
            continue; /* not modelled, or not asked for */
        rc = zs_published_predict_on(p, tune, ctx, s->sim, s->cache, q, err);
        if (rc)
            return rc;
        for (int i = 0; i < p->nmeas; i++) {
            struct zs_pub_row *r = &s->rows[s->nrows++];
            zs_strlcpy(r->run, p->name, sizeof r->run);
            zs_strlcpy(r->framework, q->framework, sizeof r->framework);
            r->qty = p->meas[i].qty;
            r->run_index = k;
            r->meas = p->meas[i].base;
            r->pred = q->oom ? -1
                      : p->meas[i].when == ZS_PW_STEADY ? q->steady[r->qty]
                                                        : q->v[r->qty];
            r->err_pct = zs_pub_err_pct(r->pred, r->meas);
            r->missing = p->meas[i].missing[0] ? p->meas[i].missing : NULL;
        }
    }
    return 0;
}

enum zs_pub_band zs_pub_band_of(double err_pct)
{
    double e = fabs(err_pct);
    if (!isfinite(e))
        return ZS_PUB_NO_BAND;
    return e > ZS_PUB_BAND_HI   ? ZS_PUB_OVER
           : e >= ZS_PUB_BAND_LO ? ZS_PUB_MID
                                 : ZS_PUB_WITHIN;
}

int zs_pub_set_load(const char *dir, struct zs_pub_set *s, struct zs_err *err)
{
    int rc = zs_pub_set_read(dir, s, err);
    if (!rc && (rc = zs_pub_set_predict(s, NULL, NULL, NULL, err)) != 0)
        zs_pub_set_release(s);
    return rc;
}
