/*
 * report.h — regression reports from the run store: rendering (HTML and
 * Markdown with gnuplot charts) and comparison against a baseline (a tag in
 * the store or committed baseline files), with JUnit XML for CI.
 *
 * Every output file is written to a temporary and renamed (STYLE 14), and
 * depends only on the store's contents, so rerunning a report over the same
 * store rewrites identical files.
 */
#ifndef ZS_REPORT_H
#define ZS_REPORT_H

#include "formats/report_doc.h"
#include "store/store.h"
#include "util/err.h"

#include <stdio.h>

/* ---- rendering ------------------------------------------------------------
 */

#define ZS_REPORT_HTML 1u
#define ZS_REPORT_MD 2u

struct zs_report_opts {
    const char *out_dir;        /* created when missing */
    unsigned formats;           /* ZS_REPORT_HTML | ZS_REPORT_MD */
    int draw_charts;            /* 0: write chart scripts and data only */
    const char *validation_dir; /* measured files; NULL: "validation" */
};

struct zs_report_stats {
    size_t nscenarios;                  /* latest runs reported */
    size_t ncharts;                     /* chart scripts written */
    size_t ndrawn;                      /* charts gnuplot drew */
    int gnuplot_missing;                /* 1: no gnuplot found */
    char chart_problem[ZS_ERR_MSG_MAX]; /* first gnuplot failure, or "" */
    size_t nmeasured;                   /* measured files compared */
    char validation_note[256]; /* why predicted-vs-measured is absent, or "" */
};

/* Renders the latest run of each scenario into opts->out_dir: index.html
 * and/or report.md, summary.csv, and per chart NAME.gp + NAME.dat (+ NAME.png
 * and NAME.svg when drawn).  Chart failures are not errors: they are
 * counted in *stats and named in the report.  Returns 0, ZS_EINPUT for a
 * stored document that cannot be read, ZS_EIO, ZS_ENOMEM. */
int zs_report_render(zs_store *st, const struct zs_report_opts *opts,
                     struct zs_report_stats *stats, struct zs_err *err);

/* ---- comparison -----------------------------------------------------------
 */

/* Relative tolerance per metric, as a fraction (0.02 = 2%). */
struct zs_tolerance {
    double frac[ZS_M_COUNT];
};

#define ZS_TOLERANCE_DEFAULT 0.02

/* "2%" for every metric, or a comma-separated list with per-metric
 * overrides: "2%,step_time_s=5%,peak_host_bytes_per_node=0.5%".
 * ZS_EUSAGE with the allowed forms otherwise. */
int zs_tolerance_parse(const char *spec, struct zs_tolerance *tol,
                       struct zs_err *err);
void zs_tolerance_default(struct zs_tolerance *tol);

/* What a baseline records for one scenario. */
struct zs_baseline_entry {
    char scenario[208];
    char kind[16];             /* "simulate" | "plan" */
    int verdict;               /* enum zs_verdict */
    double metric[ZS_M_COUNT]; /* NaN: not recorded */
    char version[32];          /* zsim version that produced it */
};

struct zs_baseline {
    struct zs_baseline_entry *e; /* owned, sorted by scenario */
    size_t n, cap;
    char ref[256]; /* what it was read from, for messages */
};

void zs_baseline_release(struct zs_baseline *b);
/* Reads a baseline file or a folder of them (every *.json; other files are
 * ignored).  Errors: ZS_EINPUT with file:line:column, field and range. */
int zs_baseline_read_path(const char *path, struct zs_baseline *b,
                          struct zs_err *err);
/* A baseline from stored runs (a tag).  ZS_EINPUT when a document cannot be
 * read. */
int zs_baseline_from_runs(const struct zs_run_list *runs, const char *ref,
                          struct zs_baseline *b, struct zs_err *err);
/* Writes DIR/<scenario stem>.json for each run (creating DIR), atomically.
 * *nwritten receives the count. */
int zs_baseline_write(const struct zs_run_list *runs, const char *dir,
                      size_t *nwritten, struct zs_err *err);

struct zs_compare_stats {
    size_t nscenarios, nchecks;
    size_t nok, nregressed, nimproved, nchanged, nmissing, nnew, nskipped;
    size_t nfailed; /* checks that make the comparison fail */
};

/* Compares the latest runs with the baseline, prints one row per scenario x
 * metric and a summary line to out, and writes JUnit XML to junit_path when
 * given.  A regression beyond tolerance, a newly infeasible scenario (fits
 * -> an OOM) or a baseline scenario without a run fails; with strict, so
 * does any other drift beyond tolerance (improvements, changed verdicts).
 * Returns 0 (the caller gates on stats->nfailed), ZS_EINPUT, ZS_EIO. */
int zs_report_compare(const struct zs_baseline *base,
                      const struct zs_run_list *latest,
                      const struct zs_tolerance *tol, int strict, FILE *out,
                      const char *junit_path, struct zs_compare_stats *stats,
                      struct zs_err *err);

#endif
