/*
 * cmd_report.c — `zsim report`: records documents into the run store, tags
 * runs, writes baseline files, renders reports, and gates CI on drift
 * against a baseline (exit 4).  The work is in store/store.h and store/report.h;
 * this file parses options and orders the actions:
 *   --add, --tag, --write-baseline, --out (render), --baseline (compare).
 */
#include "cli/cli_setup.h"
#include "store/report.h"
#include "store/store.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/strutil.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const char g_usage[] =
    "usage: zsim report --db FILE [--out DIR [--format html|md|both] "
    "[--no-charts]]\n"
    "                   [--baseline REF [--tolerance SPEC] [--strict] [--junit "
    "FILE.xml]]\n"
    "                   [--add DOC.json [--scenario NAME]] [--tag NAME]\n"
    "                   [--write-baseline DIR]\n"
    "\n"
    "Reports on the runs recorded in a run store (an SQLite file written by\n"
    "'zsim simulate --db FILE' and 'zsim plan --db FILE').\n"
    "\n"
    "  --db FILE            the run store (required)\n"
    "  --out DIR            write a report of the latest run of each "
    "scenario:\n"
    "                       index.html, report.md, summary.csv and gnuplot "
    "charts\n"
    "                       (NAME.gp + NAME.dat, drawn to NAME.png and "
    "NAME.svg)\n"
    "  --format F           html, md or both (default both)\n"
    "  --no-charts          write chart scripts and data but do not run "
    "gnuplot\n"
    "  --validation DIR     measured files (NAME.measured.json) to show "
    "predicted vs\n"
    "                       measured (default: validation)\n"
    "  --baseline REF       compare the latest runs with REF: a baseline file, "
    "a\n"
    "                       folder of them (reports/baseline), or a tag in the "
    "store;\n"
    "                       exits 4 on a regression beyond tolerance, a "
    "scenario\n"
    "                       that no longer fits, or a baseline scenario with "
    "no run\n"
    "  --tolerance SPEC     relative tolerance per metric (default 2%): '2%', "
    "or\n"
    "                       '2%,step_time_s=5%,peak_host_bytes_per_node=1%'\n"
    "  --strict             also fail on improvements and other drift (CI: "
    "the\n"
    "                       baseline must be updated with every change of "
    "results)\n"
    "  --junit FILE.xml     write the comparison as JUnit XML (one testcase "
    "per\n"
    "                       scenario and metric)\n"
    "  --add DOC.json       record a document printed by 'zsim simulate "
    "--json' or\n"
    "                       'zsim plan --json'\n"
    "  --scenario NAME      the scenario name for --add (default: the file's "
    "stem)\n"
    "  --tag NAME           mark the latest run of each scenario as NAME\n"
    "  --write-baseline DIR write DIR/<scenario>.json from the latest runs\n"
    "\n"
    "Metrics compared: verdict, peak_gpu_allocated_bytes, "
    "peak_gpu_reserved_bytes,\n"
    "peak_host_bytes_per_node, step_time_s, tokens_per_s_per_gpu.\n"
    "Charts need gnuplot on PATH (or $ZSIM_GNUPLOT); without it the tables "
    "are\n"
    "still written and the report says so.\n"
    "\n"
    "examples:\n"
    "  zsim simulate scenarios/yi34b-sp-8gpu.json --db runs.db\n"
    "  zsim report --db runs.db --out report\n"
    "\n"
    "exit codes: 0 ok, 1 runtime or I/O failure, 2 usage error, 3 invalid or\n"
    "corrupt input (run store, document, baseline file), 4 regression found.\n";

static const struct zs_opt g_opts[] = {
    {"db", 1},         {"out", 1},       {"format", 1}, {"no-charts", 0},
    {"baseline", 1},   {"tolerance", 1}, {"strict", 0}, {"junit", 1},
    {"add", 1},        {"scenario", 1},  {"tag", 1},    {"write-baseline", 1},
    {"validation", 1},
};
#define NOPTS (sizeof g_opts / sizeof g_opts[0])

static const char *opt(const struct zs_args *a, const char *name)
{
    return zs_args_get(a, g_opts, NOPTS, name);
}

/* A run document read by --add: at most 256 MiB. */
#define DOC_MAX_BYTES (256u << 20)

/* A document to record, read and checked before the store is opened so
 * that a bad file creates nothing. */
struct pending_add {
    char *text; /* owned */
    size_t len;
    struct zs_rdoc doc;
    char scenario[256];
};

static int read_add(const char *path, const char *scenario,
                    struct pending_add *pa, struct zs_err *err)
{
    int rc;
    memset(pa, 0, sizeof *pa);
    if ((rc = zs_read_file(path, DOC_MAX_BYTES, &pa->text, &pa->len, err)))
        return rc;
    /* Checked here first so that messages name the file. */
    if ((rc = zs_rdoc_parse(path, pa->text, pa->len, &pa->doc, err))) {
        zs_free(pa->text);
        pa->text = NULL;
        return rc;
    }
    if (scenario) {
        zs_strlcpy(pa->scenario, scenario, sizeof pa->scenario);
    } else {
        const char *base = strrchr(path, '/');
        char *dot;
        zs_strlcpy(pa->scenario, base ? base + 1 : path, sizeof pa->scenario);
        dot = strrchr(pa->scenario, '.');
        if (dot && dot != pa->scenario)
            *dot = '\0';
    }
    return 0;
}

static void release_add(struct pending_add *pa)
{
    if (pa->text)
        zs_rdoc_release(&pa->doc);
    zs_free(pa->text);
    pa->text = NULL;
}

static int do_add(zs_store *st, struct pending_add *pa, int argc, char **argv,
                  struct zs_err *err)
{
    struct zs_run_meta m;
    char line[1024];
    int64_t id;
    int rc;

    zs_cli_run_meta(&m, pa->doc.kind == ZS_RDOC_PLAN ? "plan" : "simulate",
                    pa->scenario, argc, argv, line, sizeof line);
    rc = zs_store_record_id(st, &m, pa->text, &id, err);
    if (!rc)
        printf("recorded run %lld (%s '%s', verdict %s) in %s\n", (long long)id,
               m.kind, pa->scenario, zs_verdict_names[pa->doc.verdict],
               zs_store_path(st));
    return rc;
}

static int do_render(zs_store *st, const char *out, const char *format,
                     int charts, const char *validation, struct zs_err *err)
{
    struct zs_report_opts o = {out, ZS_REPORT_HTML | ZS_REPORT_MD, charts,
                               validation};
    struct zs_report_stats s;
    int rc;

    if (format && strcmp(format, "both") != 0) {
        if (strcmp(format, "html") == 0)
            o.formats = ZS_REPORT_HTML;
        else if (strcmp(format, "md") == 0)
            o.formats = ZS_REPORT_MD;
        else
            return zs_err_set(err, ZS_EUSAGE,
                              "invalid --format '%s': must be html, md or both",
                              format);
    }
    if ((rc = zs_report_render(st, &o, &s, err)))
        return rc;
    printf(
        "wrote %s: %s%ssummary.csv for %zu scenario%s and %zu measured file%s, "
        "%zu chart%s (%zu drawn)\n",
        out, (o.formats & ZS_REPORT_HTML) ? "index.html, " : "",
        (o.formats & ZS_REPORT_MD) ? "report.md, " : "", s.nscenarios,
        s.nscenarios == 1 ? "" : "s", s.nmeasured, s.nmeasured == 1 ? "" : "s",
        s.ncharts, s.ncharts == 1 ? "" : "s", s.ndrawn);
    fflush(stdout);
    if (charts && s.gnuplot_missing && s.ncharts)
        fprintf(
            stderr,
            "zsim: warning: gnuplot not found on PATH: %zu chart%s not drawn "
            "(their .gp scripts and .dat data are in %s; install "
            "gnuplot-nox)\n",
            s.ncharts, s.ncharts == 1 ? "" : "s", out);
    else if (s.chart_problem[0])
        fprintf(stderr, "zsim: warning: %zu of %zu charts not drawn: %s\n",
                s.ncharts - s.ndrawn, s.ncharts, s.chart_problem);
    return 0;
}

static int do_compare(zs_store *st, const char *ref, const char *tolspec,
                      int strict, const char *junit, struct zs_err *err)
{
    struct zs_tolerance tol;
    struct zs_baseline base;
    struct zs_run_list latest = {NULL, 0};
    struct zs_compare_stats cs;
    struct stat sb;
    int rc;

    zs_tolerance_default(&tol);
    if (tolspec && (rc = zs_tolerance_parse(tolspec, &tol, err)))
        return rc;
    if (stat(ref, &sb) == 0) {
        if ((rc = zs_baseline_read_path(ref, &base, err)))
            return rc;
    } else {
        struct zs_run_list tagged;
        int found;
        char tags[256], desc[300];
        if ((rc = zs_store_tagged(st, ref, &found, &tagged, err)))
            return rc;
        if (!found) {
            if ((rc = zs_store_tag_names(st, tags, sizeof tags, err)))
                return rc;
            return zs_err_set(
                err, ZS_EUSAGE,
                "unknown baseline '%s': no such file or folder, and "
                "no such tag in '%s' (%s%s)",
                ref, zs_store_path(st), tags[0] ? "tags: " : "no tags", tags);
        }
        snprintf(desc, sizeof desc, "tag '%s'", ref);
        rc = zs_baseline_from_runs(&tagged, desc, &base, err);
        zs_run_list_release(&tagged);
        if (rc)
            return rc;
    }
    rc = zs_store_latest(st, &latest, err);
    if (!rc)
        rc = zs_report_compare(&base, &latest, &tol, strict, stdout, junit, &cs,
                               err);
    zs_run_list_release(&latest);
    zs_baseline_release(&base);
    if (rc)
        return rc;
    if (junit)
        printf("wrote %s\n", junit);
    if (cs.nfailed) {
        zs_err_clear(err);
        return ZS_EGATE; /* reported above */
    }
    return 0;
}

/* What `zsim report` was asked to do: an action is named when not NULL. */
struct report_line {
    struct zs_args a;
    const char *db, *out, *base, *add, *tag, *wb;
};

/* Options that only mean something beside another, checked in this order:
 * "--OPTION needs WHAT" when `needs` is absent. */
static const struct {
    const char *needs, *what;
    const char *opts[4];
} g_deps[] = {
    {"out", "--out DIR", {"format", "no-charts", "validation", NULL}},
    {"baseline", "--baseline REF", {"tolerance", "strict", "junit", NULL}},
    {"add", "--add DOC.json", {"scenario", NULL}},
};

static int check_deps(const struct zs_args *a, struct zs_err *err)
{
    for (size_t i = 0; i < sizeof g_deps / sizeof g_deps[0]; i++) {
        if (opt(a, g_deps[i].needs))
            continue;
        for (size_t k = 0; g_deps[i].opts[k]; k++)
            if (opt(a, g_deps[i].opts[k]))
                return zs_err_set(err, ZS_EUSAGE, "--%s needs %s",
                                  g_deps[i].opts[k], g_deps[i].what);
    }
    return 0;
}

/* The options, checked before anything is opened. */
static int report_parse(int argc, char **argv, struct report_line *r,
                        struct zs_err *err)
{
    const struct zs_args *a = &r->a;
    const char *format;
    int rc;

    if ((rc = zs_args_parse(argc, argv, g_opts, NOPTS, "report", &r->a, err)))
        return rc;
    if (a->npos)
        return zs_err_set(
            err, ZS_EUSAGE,
            "unexpected argument '%s' for 'report' (see 'zsim report --help')",
            a->pos[0]);
    r->db = opt(a, "db");
    r->out = opt(a, "out");
    r->base = opt(a, "baseline");
    r->add = opt(a, "add");
    r->tag = opt(a, "tag");
    r->wb = opt(a, "write-baseline");
    if (!r->db)
        return zs_err_set(
            err, ZS_EUSAGE,
            "'report' needs --db FILE (see 'zsim report --help')");
    if (!r->out && !r->base && !r->add && !r->tag && !r->wb)
        return zs_err_set(
            err, ZS_EUSAGE,
            "nothing to do: give --out DIR, --baseline REF, --add DOC.json, "
            "--tag NAME or --write-baseline DIR");
    if ((rc = check_deps(a, err)))
        return rc;
    if (opt(a, "tolerance")) {
        struct zs_tolerance tol;
        if ((rc = zs_tolerance_parse(opt(a, "tolerance"), &tol, err)))
            return rc;
    }
    format = opt(a, "format");
    if (format && strcmp(format, "html") && strcmp(format, "md") &&
        strcmp(format, "both"))
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid --format '%s': must be html, md or both",
                          format);
    return 0;
}

static int do_tag(zs_store *st, const char *tag, const char *db,
                  struct zs_err *err)
{
    size_t n;
    int rc = zs_store_tag(st, tag, zs_store_now(), &n, err);
    if (!rc)
        printf("tagged %zu run%s as '%s' in %s\n", n, n == 1 ? "" : "s", tag,
               db);
    return rc;
}

static int do_write_baseline(zs_store *st, const char *dir,
                             struct zs_err *err)
{
    struct zs_run_list latest;
    size_t n = 0;
    int rc = zs_store_latest(st, &latest, err);
    if (rc)
        return rc;
    rc = zs_baseline_write(&latest, dir, &n, err);
    zs_run_list_release(&latest);
    if (!rc)
        printf("wrote %zu baseline file%s to %s\n", n, n == 1 ? "" : "s", dir);
    return rc;
}

/* The actions in their order: --add, --tag, --write-baseline, --out,
 * --baseline. */
static int report_actions(zs_store *st, const struct report_line *r,
                          struct pending_add *pa, int argc, char **argv,
                          struct zs_err *err)
{
    const struct zs_args *a = &r->a;
    int rc;
    /* Readers check the whole file first: a corrupt store is an input
     * error (exit 3), never a half-written report. */
    if (!r->add && (rc = zs_store_check(st, err)))
        return rc;
    if (r->add && (rc = do_add(st, pa, argc, argv, err)))
        return rc;
    if (r->tag && (rc = do_tag(st, r->tag, r->db, err)))
        return rc;
    if (r->wb && (rc = do_write_baseline(st, r->wb, err)))
        return rc;
    if (r->out &&
        (rc = do_render(st, r->out, opt(a, "format"), !opt(a, "no-charts"),
                        opt(a, "validation"), err)))
        return rc;
    if (r->base)
        return do_compare(st, r->base, opt(a, "tolerance"),
                          opt(a, "strict") != NULL, opt(a, "junit"), err);
    return 0;
}

static int run(int argc, char **argv, struct zs_err *err)
{
    struct report_line r;
    struct pending_add pa;
    zs_store *st = NULL;
    int rc;

    if ((rc = report_parse(argc, argv, &r, err)))
        return rc;
    memset(&pa, 0, sizeof pa);
    if (r.add && (rc = read_add(r.add, opt(&r.a, "scenario"), &pa, err)))
        return rc;
    rc = r.add ? zs_store_open(r.db, &st, err)
               : zs_store_open_existing(r.db, &st, err);
    if (!rc)
        rc = report_actions(st, &r, &pa, argc, argv, err);
    release_add(&pa);
    zs_store_close(st);
    fflush(stdout);
    return rc;
}

const struct zs_cmd zs_cmd_report = {
    "report",
    "regression reports from the run store (tables, gnuplot charts, CI gate)",
    g_usage,
    run,
};
