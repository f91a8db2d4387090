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
#include "formats/schedule_io.h"
#include "present/validateout.h"
#include "validate/published_io.h"
#include "util/afile.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/strutil.h"
#include "util/table.h"
#include "util/units.h"

#include <cjson/cJSON.h>
#include <errno.h>
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
    "                       framework, the figures beyond 25 % |error|\n"
    "                       (largest first) and the count from 15 to 25 %,\n"
    "                       and the runs not modelled\n"
    "  --accuracy FILE      with --published: exit 4 when an error's\n"
    "                       magnitude exceeds the committed one in FILE\n"
    "                       (zsim.accuracy/1) by more than --margin, or a\n"
    "                       figure off by more than 25 % names no\n"
    "                       'missing' mechanism (one within 15 % may not)\n"
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

/* Option --opt of a (absent: *out untouched) as a percentage in
 * (0, 1000]. */
static int opt_pct(const struct zs_args *a, const char *opt, double *out,
                   struct zs_err *err)
{
    const char *text = zs_args_get(a, g_opts, NOPTS, opt);
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

/* ---- the published corpus (--published DIR) ------------------------------ */

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
 * the committed |error| + margin, or that now predicts OOM where it did not,
 * or whose observed OOM (quantity "oom") zsim no longer predicts; and, new
 * runs too, any figure off by more than ZS_PUB_BAND_HI whose file does not
 * name the mechanism zsim lacks ("missing"), or that names one while within
 * ZS_PUB_BAND_LO (stale).  Other rows missing from the committed file are new
 * runs: reported, not gated. */
static int pub_gate(const struct zs_pub_set *s, const char *accpath, double margin,
                    struct zs_err *err)
{
    struct acc_ent *a;
    int na, rc, bad = 0;
    char first[ZS_ERR_MSG_MAX] = "";

    rc = acc_read(accpath, &a, &na, err);
    if (rc)
        return rc;
    for (int i = 0; i < s->nrows; i++) {
        const struct zs_pub_row *r = &s->rows[i];
        const char *qn = zs_pub_qty_name(r->qty);
        const struct acc_ent *e = acc_find(a, na, r->run, qn);
        char line[ZS_ERR_MSG_MAX];
        enum zs_pub_band band = zs_pub_band_of(r->err_pct);
        if (band == ZS_PUB_OVER && !r->missing)
            snprintf(line, sizeof line,
                     "accuracy of '%s' %s: error %+.1f %% is beyond %.0f %% "
                     "and its file names no 'missing' mechanism",
                     r->run, qn, r->err_pct, ZS_PUB_BAND_HI);
        else if (band == ZS_PUB_WITHIN && r->missing)
            snprintf(line, sizeof line,
                     "accuracy of '%s' %s: error %+.1f %% is within %.0f %%, "
                     "so its file's 'missing' mechanism is stale",
                     r->run, qn, r->err_pct, ZS_PUB_BAND_LO);
        else if (!e) {
            printf("new (not in %s): %s %s error %+.1f %%\n", accpath, r->run,
                   qn, r->err_pct);
            continue;
        } else if (isfinite(e->err_pct) && !isfinite(r->err_pct))
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
    /* Runs that died of an OOM: committed as quantity "oom" with error 0
     * while zsim predicts it (null while it does not); losing it regresses. */
    for (int k = 0; k < s->n; k++) {
        const struct zs_published *p = &s->runs[k];
        const struct acc_ent *e;
        char line[ZS_ERR_MSG_MAX];
        if (!p->oom.set || p->nneeds)
            continue;
        e = acc_find(a, na, p->name, "oom");
        if (!e) {
            printf("new (not in %s): %s oom %s\n", accpath, p->name,
                   zs_pub_oom_agrees(p, &s->pred[k]) ? "predicted"
                                                     : "not predicted");
            continue;
        }
        if (!isfinite(e->err_pct) || zs_pub_oom_agrees(p, &s->pred[k]))
            continue;
        snprintf(line, sizeof line,
                 "accuracy of '%s' oom regressed: zsim no longer predicts "
                 "the %s OOM at %s the source observed",
                 p->name, zs_pub_oom_where_name(p->oom.where),
                 zs_pub_oom_phase_name(p->oom.phase));
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

/* An error of the accuracy file: signed percent, or the predicted OOM that
 * null stands for. */
static void print_err_pct(double v, const char *end)
{
    if (isfinite(v))
        printf("%+8.2f %%%s", v, end);
    else
        printf("predicted OOM%s", end);
}

/* Writes the current errors to path (temp file + rename) and prints which
 * moved against the previous contents, if any. */
static int pub_write_accuracy(const struct zs_pub_set *s, const char *path,
                              double margin, struct zs_err *err)
{
    struct acc_ent *old = NULL;
    int nold = 0, moved = 0;
    struct zs_err e2 = {0, ""};
    struct zs_afile af;
    FILE *f;
    int rc, nooms = 0;

    for (int k = 0; k < s->n; k++)
        nooms += s->runs[k].oom.set && !s->runs[k].nneeds;
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
        const struct zs_pub_row *r = &s->rows[i];
        const char *qn = zs_pub_qty_name(r->qty);
        const struct acc_ent *o = acc_find(old, nold, r->run, qn);
        fprintf(f, "    {\"run\": ");
        zs_json_put_str(f, r->run);
        fprintf(f, ", \"quantity\": \"%s\", \"error_pct\": ", qn);
        if (isfinite(r->err_pct))
            fprintf(f, "%.2f", zs_validateout_round2(r->err_pct));
        else
            fputs("null", f);
        fputs(i + 1 < s->nrows || nooms ? "},\n" : "}\n", f);
        if (!o) {
            printf("added  %-48s %-22s ", r->run, qn);
            print_err_pct(r->err_pct, "\n");
        } else if (!(fabs(zs_validateout_round2(r->err_pct) - o->err_pct) <
                     0.005) &&
                   (isfinite(r->err_pct) || isfinite(o->err_pct))) {
            printf("moved  %-48s %-22s ", r->run, qn);
            print_err_pct(o->err_pct, " -> ");
            print_err_pct(r->err_pct, "\n");
            moved++;
        }
    }
    /* observed OOMs: error 0 while zsim predicts them, null while not */
    for (int k = 0, left = nooms; k < s->n; k++) {
        const struct zs_published *p = &s->runs[k];
        const struct acc_ent *o;
        bool ok;
        if (!p->oom.set || p->nneeds)
            continue;
        ok = zs_pub_oom_agrees(p, &s->pred[k]);
        o = acc_find(old, nold, p->name, "oom");
        fprintf(f, "    {\"run\": ");
        zs_json_put_str(f, p->name);
        fprintf(f, ", \"quantity\": \"oom\", \"error_pct\": %s",
                ok ? "0" : "null");
        fputs(--left ? "},\n" : "}\n", f);
        if (!o)
            printf("added  %-48s %-22s %s\n", p->name, "oom",
                   ok ? "predicted" : "not predicted");
        else if (isfinite(o->err_pct) != ok) {
            printf("moved  %-48s %-22s %s -> %s\n", p->name, "oom",
                   isfinite(o->err_pct) ? "predicted" : "not predicted",
                   ok ? "predicted" : "not predicted");
            moved++;
        }
    }
    fputs("  ]\n}\n", f);
    zs_free(old);
    rc = zs_afile_commit(&af, err);
    if (rc)
        return rc;
    printf("wrote %s: %d errors, %d moved\n", path, s->nrows + nooms, moved);
    return 0;
}

static int run_published(const struct zs_args *a, const char *dir,
                         struct zs_err *err)
{
    struct zs_pub_set s;
    const char *acc = zs_args_get(a, g_opts, NOPTS, "accuracy");
    const char *wr = zs_args_get(a, g_opts, NOPTS, "write-accuracy");
    double margin = 2;
    int rc;

    if ((rc = opt_pct(a, "margin", &margin, err)) ||
        (rc = zs_pub_set_load(dir, &s, err)))
        return rc;
    if (wr) {
        rc = pub_write_accuracy(&s, wr, margin, err);
    } else if (zs_args_get(a, g_opts, NOPTS, "json")) {
        cJSON *doc = zs_validateout_pub_json(&s);
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
        rc = zs_validateout_pub_text(dir, &s);
        if (rc)
            zs_err_set(err, rc, "out of memory");
    }
    if (!rc && acc)
        rc = pub_gate(&s, acc, margin, err);
    zs_pub_set_release(&s);
    return rc;
}

/* One measured file against its predictions (its own, or those of
 * --schedule), gated by --max-mem-err and --max-time-err. */
static int run_measured(const struct zs_args *a, const char *mpath,
                        struct zs_err *err)
{
    const char *spath = zs_args_get(a, g_opts, NOPTS, "schedule");
    struct zs_measured m;
    struct zs_validation v;
    double mem_lim = 5, time_lim = 10;
    int rc;

    if ((rc = opt_pct(a, "max-mem-err", &mem_lim, err)) ||
        (rc = opt_pct(a, "max-time-err", &time_lim, err)))
        return rc;
    if ((rc = zs_measured_read(mpath, &m, err)))
        return rc;
    if (spath && (rc = take_predictions(&m, mpath, spath, err)))
        goto out;
    if (!m.has_pred) {
        rc =
            zs_err_set(err, ZS_EUSAGE,
                       "'%s' holds no predictions ('predicted' is null): "
                       "pass the schedule of the same run with --schedule FILE",
                       mpath);
        goto out;
    }
    zs_validation_compute(&m, mem_lim, time_lim, &v);
    if (zs_args_get(a, g_opts, NOPTS, "json"))
        rc = zs_validateout_json(mpath, &m, &v, mem_lim, time_lim, err);
    else
        rc = zs_validateout_text(mpath, &m, &v, mem_lim, time_lim);
    if (rc) {
        if (!err->msg[0])
            zs_err_set(err, rc, "out of memory");
        goto out;
    }
    for (int k = 0; !v.ok && k < v.nq; k++)
        if (!v.q[k].ok) {
            rc = zs_err_set(err, ZS_EGATE,
                            "validation failed for '%s': %s error %+.1f %% "
                            "exceeds %g %%",
                            mpath, v.q[k].label, v.q[k].err_pct,
                            v.q[k].limit_pct);
            break;
        }
out:
    zs_measured_release(&m);
    return rc;
}

static int run(int argc, char **argv, struct zs_err *err)
{
    struct zs_args a;
    const char *mpath, *pub;
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
    if ((pub = zs_args_get(&a, g_opts, NOPTS, "published"))) {
        if (mpath || zs_args_get(&a, g_opts, NOPTS, "schedule"))
            return zs_err_set(err, ZS_EUSAGE,
                              "'--published' compares the corpus: it takes "
                              "no --measured or --schedule");
        return run_published(&a, pub, err);
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
    return run_measured(&a, mpath, err);
}

const struct zs_cmd zs_cmd_validate = {
    "validate",
    "compare predictions with a measurement from a real GPU (harness/)",
    g_usage,
    run,
};
