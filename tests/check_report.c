/*
 * check_report.c — `zsim report`: rendered files against goldens
 * (tests/golden/report-render/, regenerate with UPDATE_GOLDEN=1 and review),
 * idempotence, charts drawn by gnuplot or reported missing, the baseline
 * comparison (hand-computed deltas, exit gate, JUnit XML), tolerances and
 * baselines with their exact bad-input messages, and the allocation-failure
 * loop over rendering and comparing.  Files go to a mkdtemp() folder.
 */
#include "cli/cmd.h"
#include "store/report.h"
#include "store/store.h"
#include "util/alloc.h"

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern const struct zs_cmd zs_cmd_report;

#define GOOD "tests/data/good/"
#define BAD "tests/data/bad/"
#define GOLDEN "tests/golden/report-render/"

static char g_dir[64], g_db[128], g_out[128];

static void setup(void)
{
    strcpy(g_dir, "/tmp/zsim-report-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(g_dir));
    snprintf(g_db, sizeof g_db, "%s/runs.db", g_dir);
    snprintf(g_out, sizeof g_out, "%s/out", g_dir);
}

static void teardown(void)
{
    char cmd[128];
    unsetenv("ZSIM_GNUPLOT");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", g_dir);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    ck_assert_int_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    if (len)
        *len = (size_t)n;
    return buf;
}

static void spit(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* text with the first `from` replaced by `to` (test helper, plain malloc). */
static char *replaced(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    char *out;
    ck_assert_msg(at != NULL, "'%s' not in document", from);
    out = malloc(strlen(text) + strlen(to) + 1);
    memcpy(out, text, (size_t)(at - text));
    strcpy(out + (at - text), to);
    strcat(out, at + strlen(from));
    return out;
}

static void record_text(zs_store *st, const char *scenario, const char *doc)
{
    struct zs_err err = {0, ""};
    struct zs_run_meta m = {
        strstr(doc, "zsim.plan/1") ? "plan" : "simulate",
        scenario,
        "zsim simulate scenarios/x.json --json --db runs.db",
        "0.1.0",
        "abc123def456",
        1700000000};
    int rc = zs_store_record(st, &m, doc, &err);
    ck_assert_msg(rc == 0, "record %s: %s", scenario, err.msg);
}

static void record_file(zs_store *st, const char *scenario, const char *path)
{
    char *doc = slurp(path, NULL);
    ck_assert_ptr_nonnull(doc);
    record_text(st, scenario, doc);
    free(doc);
}

/* The four sample documents under the names the committed baseline uses. */
static zs_store *sample_store(void)
{
    struct zs_err err = {0, ""};
    zs_store *st;
    ck_assert_int_eq(zs_store_open(g_db, &st, &err), 0);
    record_file(st, "qwen72b-sft", GOOD "report-sim-qwen72b-sft.json");
    record_file(st, "qwen7b-lora-8proc",
                GOOD "report-sim-qwen7b-lora-8proc.json");
    record_file(st, "yi34b-sp4", GOOD "report-sim-yi34b-sp4.json");
    record_file(st, "plan-72b-8xh100", GOOD "report-plan-72b-8xh100.json");
    return st;
}

static const char *const g_render_files[] = {
    "index.html",
    "report.md",
    "summary.csv",
    "breakdown.gp",
    "breakdown.dat",
    "memory-qwen72b-sft.gp",
    "memory-qwen72b-sft.dat",
    "memory-yi34b-sp4.gp",
    "memory-yi34b-sp4.dat",
    "frontier-plan-72b-8xh100.gp",
    "frontier-plan-72b-8xh100.dat",
    "validation.gp",
    "validation.dat",
};
#define NRENDER (sizeof g_render_files / sizeof g_render_files[0])

static void render(zs_store *st, int charts, struct zs_report_stats *s)
{
    struct zs_err err = {0, ""};
    struct zs_report_opts o = {g_out, ZS_REPORT_HTML | ZS_REPORT_MD, charts,
                               GOOD "report-validation"};
    int rc = zs_report_render(st, &o, s, &err);
    ck_assert_msg(rc == 0, "render: %s", err.msg);
}

/* Golden tests on the generated gnuplot scripts, data files and documents. */
START_TEST(test_render_golden)
{
    struct zs_report_stats s;
    zs_store *st = sample_store();
    int update =
        getenv("UPDATE_GOLDEN") && strcmp(getenv("UPDATE_GOLDEN"), "1") == 0;

    render(st, 0, &s);
    zs_store_close(st);
    ck_assert_int_eq(s.nscenarios, 4);
    ck_assert_int_eq(s.ncharts,
                     5); /* breakdown, 2 memory, 1 frontier, validation */
    ck_assert_int_eq(s.ndrawn, 0);
    ck_assert_int_eq(s.nmeasured, 1);
    if (update)
        mkdir(GOLDEN, 0755);
    for (size_t i = 0; i < NRENDER; i++) {
        char got_path[256], want_path[256];
        char *got, *want;
        snprintf(got_path, sizeof got_path, "%s/%s", g_out, g_render_files[i]);
        snprintf(want_path, sizeof want_path, GOLDEN "%s", g_render_files[i]);
        got = slurp(got_path, NULL);
        ck_assert_msg(got != NULL, "%s not written", g_render_files[i]);
        if (update)
            spit(want_path, got);
        want = slurp(want_path, NULL);
        ck_assert_msg(want != NULL, "no golden %s (run with UPDATE_GOLDEN=1)",
                      want_path);
        ck_assert_msg(strcmp(got, want) == 0, "%s differs from %s", got_path,
                      want_path);
        free(got);
        free(want);
    }
}
END_TEST

/* An NVMe run (zsim simulate --model 7b --gpus 8xH100 --offload-optimizer
 * nvme --sub-group-size 300000000 --json, events and timeline dropped): its
 * steps' tables carry an exposed NVMe column and the breakdown chart's data a
 * seventh column, so the parts add up to the step (steady: 0.436 + 0.00838 +
 * 0.185 + 17.959 + 0.694 + 0.00370 = 19.286 s, the document's time_s).  The
 * four CPU-offload samples keep their 14-column table (the golden above). */
START_TEST(test_render_nvme_breakdown)
{
    struct zs_report_stats s;
    struct zs_err err = {0, ""};
    zs_store *st;
    char p[256], *md, *dat, *gp, *doc;
    const struct zs_rbreakdown *b;
    ck_assert_int_eq(zs_store_open(g_db, &st, &err), 0);
    record_file(st, "7b-nvme", GOOD "report-sim-7b-nvme.json");
    record_file(st, "yi34b-sp4", GOOD "report-sim-yi34b-sp4.json");
    render(st, 0, &s);
    zs_store_close(st);
    ck_assert_int_eq(s.nscenarios, 2);

    /* the parsed breakdown sums to the step time */
    {
        struct zs_rdoc d;
        size_t len;
        doc = slurp(GOOD "report-sim-7b-nvme.json", &len);
        ck_assert_int_eq(zs_rdoc_parse("7b-nvme", doc, len, &d, &err), 0);
        b = &d.steady.breakdown;
        ck_assert_double_eq_tol(b->exposed_nvme, 17.958652463, 1e-9);
        ck_assert_double_eq_tol(b->compute + b->exposed_collective +
                                    b->exposed_pcie + b->exposed_nvme +
                                    b->optimizer + b->other,
                                d.steady.time_s, 1e-6);
        zs_rdoc_release(&d);
        free(doc);
    }

    snprintf(p, sizeof p, "%s/report.md", g_out);
    md = slurp(p, NULL);
    ck_assert_ptr_nonnull(md);
    ck_assert_ptr_nonnull(
        strstr(md, "| exposed PCIe | exposed NVMe | optimizer |"));
    ck_assert_ptr_nonnull(strstr(md, "| 185 ms | 17.96 s | 694 ms |"));
    /* the run without NVMe keeps its columns */
    ck_assert_int_eq(
        strstr(strstr(md, "### yi34b-sp4"), "exposed NVMe") == NULL, 1);
    free(md);

    snprintf(p, sizeof p, "%s/breakdown.dat", g_out);
    dat = slurp(p, NULL);
    ck_assert_ptr_nonnull(strstr(
        dat, "# scenario compute exposed_collective exposed_pcie optimizer "
             "other exposed_nvme\n"));
    ck_assert_ptr_nonnull(
        strstr(dat, "\"7b-nvme\" 0.436004 0.00838103 0.185393 0.694132 "
                    "0.00369656 17.9587\n"));
    free(dat);
    snprintf(p, sizeof p, "%s/breakdown.gp", g_out);
    gp = slurp(p, NULL);
    ck_assert_ptr_nonnull(
        strstr(gp, "using 7 lc rgb \"#8c564b\" title \"exposed NVMe\""));
    free(gp);
}
END_TEST

/* Rerunning over the same store rewrites the same files and leaves no
 * temporaries. */
START_TEST(test_render_idempotent)
{
    struct zs_report_stats s;
    zs_store *st = sample_store();
    char *first[NRENDER];
    DIR *d;
    struct dirent *de;
    size_t nfiles = 0;

    render(st, 0, &s);
    for (size_t i = 0; i < NRENDER; i++) {
        char p[256];
        snprintf(p, sizeof p, "%s/%s", g_out, g_render_files[i]);
        first[i] = slurp(p, NULL);
        ck_assert_ptr_nonnull(first[i]);
    }
    render(st, 0, &s);
    zs_store_close(st);
    for (size_t i = 0; i < NRENDER; i++) {
        char p[256];
        char *again;
        snprintf(p, sizeof p, "%s/%s", g_out, g_render_files[i]);
        again = slurp(p, NULL);
        ck_assert_str_eq(again, first[i]);
        free(again);
        free(first[i]);
    }
    d = opendir(g_out);
    ck_assert_ptr_nonnull(d);
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' &&
            (!de->d_name[1] || strcmp(de->d_name, "..") == 0))
            continue;
        ck_assert_msg(strstr(de->d_name, ".tmp") == NULL, "temporary left: %s",
                      de->d_name);
        nfiles++;
    }
    closedir(d);
    ck_assert_int_eq(nfiles, NRENDER);
}
END_TEST

/* With gnuplot: PNG and SVG for each chart (skipped where there is none);
 * without it: the tables are still written and the report says why. */
START_TEST(test_render_charts)
{
    struct zs_report_stats s;
    zs_store *st = sample_store();
    char *html;
    char p[256];

    if (access("/usr/bin/gnuplot", X_OK) == 0) {
        static const char *const charts[] = {
            "breakdown", "memory-qwen72b-sft", "memory-yi34b-sp4",
            "frontier-plan-72b-8xh100", "validation"};
        setenv("ZSIM_GNUPLOT", "/usr/bin/gnuplot", 1);
        render(st, 1, &s);
        ck_assert_msg(s.chart_problem[0] == '\0', "%s", s.chart_problem);
        ck_assert_int_eq(s.ndrawn, 5);
        for (size_t i = 0; i < sizeof charts / sizeof charts[0]; i++) {
            size_t n;
            char *png, *svg;
            snprintf(p, sizeof p, "%s/%s.png", g_out, charts[i]);
            png = slurp(p, &n);
            ck_assert_msg(png && n > 1000 && memcmp(png, "\x89PNG", 4) == 0,
                          "%s", p);
            snprintf(p, sizeof p, "%s/%s.svg", g_out, charts[i]);
            svg = slurp(p, NULL);
            ck_assert_msg(svg && strstr(svg, "<svg") != NULL, "%s", p);
            free(png);
            free(svg);
        }
        snprintf(p, sizeof p, "%s/index.html", g_out);
        html = slurp(p, NULL);
        ck_assert_ptr_nonnull(
            strstr(html, "<img src=\"memory-qwen72b-sft.svg\""));
        free(html);
    }
    setenv("ZSIM_GNUPLOT", "", 1); /* as if none were installed */
    render(st, 1, &s);
    zs_store_close(st);
    ck_assert_int_eq(s.gnuplot_missing, 1);
    ck_assert_int_eq(s.ndrawn, 0);
    ck_assert_int_eq(s.ncharts, 5);
    snprintf(p, sizeof p, "%s/index.html", g_out);
    html = slurp(p, NULL);
    ck_assert_ptr_nonnull(
        strstr(html, "chart not drawn: gnuplot was not found on PATH"));
    ck_assert_ptr_null(strstr(html, "<img "));
    ck_assert_ptr_nonnull(strstr(html, "<td class=\"l\">qwen72b-sft</td>"));
    free(html);
}
END_TEST

/* A gnuplot that fails: charts are skipped with its message, nothing half
 * written, the report still complete. */
START_TEST(test_render_gnuplot_fails)
{
    struct zs_report_stats s;
    zs_store *st = sample_store();
    char fake[128], p[256];
    snprintf(fake, sizeof fake, "%s/gnuplot", g_dir);
    spit(fake, "#!/bin/sh\necho 'line 1: no terminal here' >&2\nexit 1\n");
    ck_assert_int_eq(chmod(fake, 0755), 0);
    setenv("ZSIM_GNUPLOT", fake, 1);
    render(st, 1, &s);
    zs_store_close(st);
    ck_assert_int_eq(s.ndrawn, 0);
    snprintf(p, sizeof p,
             "gnuplot failed on '%s/breakdown.gp': line 1: no terminal here",
             g_out);
    ck_assert_str_eq(s.chart_problem, p);
    snprintf(p, sizeof p, "%s/breakdown.png", g_out);
    ck_assert_int_ne(access(p, F_OK), 0);
    snprintf(p, sizeof p, "%s/index.html", g_out);
    ck_assert_int_eq(access(p, F_OK), 0);
}
END_TEST

static char *compare_text(const struct zs_baseline *b, zs_store *st,
                          const struct zs_tolerance *tol, int strict,
                          const char *junit, struct zs_compare_stats *cs)
{
    struct zs_err err = {0, ""};
    struct zs_run_list latest;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc;
    ck_assert_int_eq(zs_store_latest(st, &latest, &err), 0);
    rc = zs_report_compare(b, &latest, tol, strict, f, junit, cs, &err);
    ck_assert_msg(rc == 0, "compare: %s", err.msg);
    fclose(f);
    zs_run_list_release(&latest);
    return buf;
}

static void check_golden_text(const char *name, const char *got)
{
    char path[256];
    char *want;
    snprintf(path, sizeof path, GOLDEN "%s", name);
    if (getenv("UPDATE_GOLDEN") && strcmp(getenv("UPDATE_GOLDEN"), "1") == 0)
        spit(path, got);
    want = slurp(path, NULL);
    ck_assert_msg(want != NULL, "no golden %s", path);
    ck_assert_msg(strcmp(got, want) == 0, "%s differs:\n%s", path, got);
    free(want);
}

/* The same runs as the committed baseline: every check passes. */
START_TEST(test_compare_clean)
{
    struct zs_err err = {0, ""};
    struct zs_baseline b;
    struct zs_tolerance tol;
    struct zs_compare_stats cs;
    zs_store *st = sample_store();
    char *text;

    zs_tolerance_default(&tol);
    ck_assert_int_eq(zs_baseline_read_path(GOOD "report-baseline", &b, &err),
                     0);
    ck_assert_int_eq(b.n, 4);
    ck_assert_str_eq(b.e[0].scenario, "plan-72b-8xh100");
    ck_assert(b.e[1].metric[ZS_M_STEP_TIME] == 47.12);
    ck_assert(isnan(b.e[2].metric[ZS_M_STEP_TIME]));
    ck_assert_int_eq(b.e[2].verdict, ZS_VERDICT_GPU_OOM);
    text = compare_text(&b, st, &tol, 1, NULL, &cs);
    ck_assert_int_eq(cs.nscenarios, 4);
    ck_assert_int_eq(cs.nchecks, 24);
    ck_assert_int_eq(cs.nok, 19);
    ck_assert_int_eq(cs.nskipped, 5); /* the GPU OOM has no figures */
    ck_assert_int_eq(cs.nfailed, 0);
    free(text);
    zs_baseline_release(&b);
    zs_store_close(st);
}
END_TEST

/* Drift of every kind against the committed baseline.  By hand:
 *   qwen72b-sft step time 47.12 -> 49.00 s: +3.99 % (worse);
 *   tokens/s 695.4 -> 668.7: -3.84 % (worse);  both beyond 2 %, within 5 %;
 *   plan best 2 -> null: fits -> none_fits, newly infeasible;
 *   yi34b-sp4 host_oom -> fits: improved (fails only with --strict);
 *   qwen7b-lora-8proc not run: missing;  "extra": new, never a failure. */
START_TEST(test_compare_drift)
{
    struct zs_err err = {0, ""};
    struct zs_baseline b;
    struct zs_tolerance tol;
    struct zs_compare_stats cs;
    zs_store *st;
    char *sim72 = slurp(GOOD "report-sim-qwen72b-sft.json", NULL);
    char *t1 = replaced(sim72, "\"time_s\": 47.12", "\"time_s\": 49.0");
    char *t2 = replaced(t1, "\"tokens_per_s_per_gpu\": 695.4",
                        "\"tokens_per_s_per_gpu\": 668.7");
    char *yi = slurp(GOOD "report-sim-yi34b-sp4.json", NULL);
    char *yi2 =
        replaced(yi, "\"verdict\": \"host_oom\"", "\"verdict\": \"fits\"");
    char *plan = slurp(GOOD "report-plan-72b-8xh100.json", NULL);
    char *plan2 = replaced(plan, "\"best\": 2", "\"best\": null");
    char junit[160], *text, *xml;

    ck_assert_int_eq(zs_store_open(g_db, &st, &err), 0);
    record_text(st, "qwen72b-sft", t2);
    record_text(st, "yi34b-sp4", yi2);
    record_text(st, "plan-72b-8xh100", plan2);
    record_text(st, "extra", sim72);
    ck_assert_int_eq(zs_baseline_read_path(GOOD "report-baseline", &b, &err),
                     0);
    snprintf(junit, sizeof junit, "%s/junit.xml", g_dir);

    zs_tolerance_default(&tol);
    text = compare_text(&b, st, &tol, 0, junit, &cs);
    check_golden_text("compare-drift.txt", text);
    ck_assert_int_eq(cs.nscenarios, 5);
    ck_assert_int_eq(cs.nregressed, 3);
    ck_assert_int_eq(cs.nimproved, 1);
    ck_assert_int_eq(cs.nmissing, 1);
    ck_assert_int_eq(cs.nnew, 1);
    ck_assert_int_eq(cs.nfailed, 4);
    ck_assert_ptr_nonnull(strstr(
        text,
        "REGRESSED: step_time_s 47.12 s -> 49 s (+3.99%, tolerance 2.00%)"));
    ck_assert_ptr_nonnull(strstr(text, "REGRESSED: tokens_per_s_per_gpu 695.4 "
                                       "-> 668.7 (-3.84%, tolerance 2.00%)"));
    ck_assert_ptr_nonnull(
        strstr(text, "REGRESSED: newly infeasible: none_fits, was fits"));
    free(text);
    xml = slurp(junit, NULL);
    check_golden_text("compare-drift.junit.xml", xml);
    free(xml);

    /* --strict: the improvement fails too. */
    text = compare_text(&b, st, &tol, 1, NULL, &cs);
    ck_assert_int_eq(cs.nfailed, 5);
    free(text);

    /* 5 % on step time and tokens/s: those two pass. */
    ck_assert_int_eq(
        zs_tolerance_parse("2%,step_time_s=5%,tokens_per_s_per_gpu=5%", &tol,
                           &err),
        0);
    text = compare_text(&b, st, &tol, 0, NULL, &cs);
    ck_assert_int_eq(cs.nfailed, 2);
    free(text);

    zs_baseline_release(&b);
    zs_store_close(st);
    free(sim72), free(t1), free(t2), free(yi), free(yi2), free(plan),
        free(plan2);
}
END_TEST

/* Baselines written from runs read back the same. */
START_TEST(test_baseline_roundtrip)
{
    struct zs_err err = {0, ""};
    struct zs_run_list latest;
    struct zs_baseline a, b;
    char dir[160], path[200];
    size_t n;
    char *written, *committed;
    zs_store *st = sample_store();

    snprintf(dir, sizeof dir, "%s/baseline", g_dir);
    ck_assert_int_eq(zs_store_latest(st, &latest, &err), 0);
    ck_assert_int_eq(zs_baseline_write(&latest, dir, &n, &err), 0);
    ck_assert_int_eq(n, 4);
    ck_assert_int_eq(zs_baseline_from_runs(&latest, "store", &a, &err), 0);
    ck_assert_int_eq(zs_baseline_read_path(dir, &b, &err), 0);
    ck_assert_int_eq(a.n, b.n);
    for (size_t i = 0; i < a.n; i++) {
        ck_assert_str_eq(a.e[i].scenario, b.e[i].scenario);
        ck_assert_int_eq(a.e[i].verdict, b.e[i].verdict);
        for (int m = 0; m < ZS_M_COUNT; m++)
            ck_assert((isnan(a.e[i].metric[m]) && isnan(b.e[i].metric[m])) ||
                      a.e[i].metric[m] == b.e[i].metric[m]);
    }
    /* The committed baseline is exactly what these runs write. */
    snprintf(path, sizeof path, "%s/qwen72b-sft.json", dir);
    written = slurp(path, NULL);
    committed = slurp(GOOD "report-baseline/qwen72b-sft.json", NULL);
    ck_assert_str_eq(written, committed);
    free(written);
    free(committed);
    zs_baseline_release(&a);
    zs_baseline_release(&b);
    zs_run_list_release(&latest);
    zs_store_close(st);
}
END_TEST

START_TEST(test_tolerance)
{
    struct zs_err err = {0, ""};
    struct zs_tolerance t;
    static const struct {
        const char *spec, *msg;
    } bad[] = {
        {"2", "invalid --tolerance '2': must be a percentage in [0%, 100%] "
              "such as '2%', optionally with per-metric overrides such as "
              "'2%,step_time_s=5%'"},
        {"", "invalid --tolerance '': must be a percentage in [0%, 100%] such "
             "as '2%', optionally with per-metric overrides such as "
             "'2%,step_time_s=5%'"},
        {"150%", "invalid --tolerance '150%': must be a percentage in [0%, "
                 "100%] such as '2%', optionally with per-metric overrides "
                 "such as '2%,step_time_s=5%'"},
        {"2%,", "invalid --tolerance '2%,': must be a percentage in [0%, 100%] "
                "such as '2%', optionally with per-metric overrides such as "
                "'2%,step_time_s=5%'"},
        {"2%,3%", "invalid --tolerance '2%,3%': must be a percentage in [0%, "
                  "100%] such as '2%', optionally with per-metric overrides "
                  "such as '2%,step_time_s=5%'"},
        {"-1%", "invalid --tolerance '-1%': must be a percentage in [0%, 100%] "
                "such as '2%', optionally with per-metric overrides such as "
                "'2%,step_time_s=5%'"},
        {"step_time=5%", "invalid --tolerance 'step_time=5%': unknown metric "
                         "'step_time': did you mean 'step_time_s'?"},
        {"zzzz=5%",
         "invalid --tolerance 'zzzz=5%': unknown metric 'zzzz' (metrics: "
         "peak_gpu_allocated_bytes, peak_gpu_reserved_bytes, "
         "peak_host_bytes_per_node, step_time_s, tokens_per_s_per_gpu)"},
        {"step_time_s=5",
         "invalid --tolerance 'step_time_s=5': must be a percentage in [0%, "
         "100%] such as '2%', optionally with per-metric overrides such as "
         "'2%,step_time_s=5%'"},
    };
    ck_assert_int_eq(zs_tolerance_parse("2.5%", &t, &err), 0);
    for (int m = 0; m < ZS_M_COUNT; m++)
        ck_assert(fabs(t.frac[m] - 0.025) < 1e-15);
    /* A per-metric value wins over a default given before or after it. */
    ck_assert_int_eq(zs_tolerance_parse("step_time_s=5%,0.5%", &t, &err), 0);
    ck_assert(fabs(t.frac[ZS_M_STEP_TIME] - 0.05) < 1e-15);
    ck_assert(fabs(t.frac[ZS_M_PEAK_HOST] - 0.005) < 1e-15);
    ck_assert_int_eq(
        zs_tolerance_parse("peak_host_bytes_per_node=0%", &t, &err), 0);
    ck_assert(t.frac[ZS_M_PEAK_HOST] == 0);
    ck_assert(t.frac[ZS_M_TOKENS] == ZS_TOLERANCE_DEFAULT);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(zs_tolerance_parse(bad[i].spec, &t, &err), ZS_EUSAGE);
        ck_assert_str_eq(err.msg, bad[i].msg);
    }
}
END_TEST

/* Every bad baseline with its exact message (exit 3). */
START_TEST(test_bad_baselines)
{
    static const struct {
        const char *file, *msg;
    } cases[] = {
        {BAD "report-baseline-malformed.json",
         "malformed JSON in tests/data/bad/report-baseline-malformed.json:4:3: "
         "unexpected '\"'"},
        {BAD "report-baseline-metrics-array.json",
         "invalid 'metrics' in "
         "tests/data/bad/report-baseline-metrics-array.json:6:3: must be an "
         "object (got array)"},
        {BAD "report-baseline-negative.json",
         "invalid 'metrics.tokens_per_s_per_gpu' in "
         "tests/data/bad/report-baseline-negative.json:7:5: must be a number "
         "in [0, 1000000000000000] (got -695.4)"},
        {BAD "report-baseline-no-metrics.json",
         "missing 'metrics' in tests/data/bad/report-baseline-no-metrics.json: "
         "required, an object of peak_gpu_allocated_bytes, "
         "peak_gpu_reserved_bytes, peak_host_bytes_per_node, step_time_s, "
         "tokens_per_s_per_gpu"},
        {BAD "report-baseline-schema.json",
         "invalid 'schema' in tests/data/bad/report-baseline-schema.json:2:3: "
         "must be one of zsim.baseline/1 (got 'zsim.baseline/2')"},
        {BAD "report-baseline-typo.json",
         "unknown key 'metrics.step_time' in "
         "tests/data/bad/report-baseline-typo.json:8:5: did you mean "
         "'step_time_s'?"},
        {BAD "report-baseline-verdict.json",
         "invalid 'verdict' in "
         "tests/data/bad/report-baseline-verdict.json:5:3: must be one of "
         "fits, gpu_oom, host_oom, none_fits (got 'oom')"},
        {BAD "report-missing-baseline.json",
         "cannot open 'tests/data/bad/report-missing-baseline.json': No such "
         "file or directory"},
    };
    struct zs_err err = {0, ""};
    struct zs_baseline b;
    char dir[128], want[400], p[200];

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_int_eq(zs_baseline_read_path(cases[i].file, &b, &err),
                         ZS_EINPUT);
        ck_assert_str_eq(err.msg, cases[i].msg);
        ck_assert_ptr_null(b.e);
    }
    /* An empty folder, and two files for one scenario. */
    snprintf(dir, sizeof dir, "%s/base", g_dir);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    snprintf(p, sizeof p, "%s/README.md", dir);
    spit(p, "not a baseline\n");
    ck_assert_int_eq(zs_baseline_read_path(dir, &b, &err), ZS_EINPUT);
    snprintf(want, sizeof want,
             "baseline folder '%s' has no *.json files: write them with 'zsim "
             "report --db FILE --write-baseline %s'",
             dir, dir);
    ck_assert_str_eq(err.msg, want);
    {
        char *one = slurp(GOOD "report-baseline/qwen72b-sft.json", NULL);
        snprintf(p, sizeof p, "%s/a.json", dir);
        spit(p, one);
        snprintf(p, sizeof p, "%s/b.json", dir);
        spit(p, one);
        free(one);
    }
    ck_assert_int_eq(zs_baseline_read_path(dir, &b, &err), ZS_EINPUT);
    snprintf(want, sizeof want,
             "duplicate scenario 'qwen72b-sft' in baseline '%s'", dir);
    ck_assert_str_eq(err.msg, want);
}
END_TEST

/* Runs `zsim report ARGS` in-process with stdout captured. */
static int run_cli(char *out, size_t cap, struct zs_err *err, int argc,
                   char **argv)
{
    char path[160];
    int fd, saved, rc;
    FILE *f;
    size_t n;
    snprintf(path, sizeof path, "%s/stdout.txt", g_dir);
    fflush(stdout);
    saved = dup(STDOUT_FILENO);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDOUT_FILENO);
    close(fd);
    rc = zs_cmd_report.run(argc, argv, err);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    f = fopen(path, "r");
    n = fread(out, 1, cap - 1, f);
    out[n] = '\0';
    fclose(f);
    return rc;
}

/* The command end to end: --add, --tag, then a regression against the tag
 * exits with the gate code; a corrupt store is exit 3 before any output. */
START_TEST(test_cli_flow)
{
    struct zs_err err = {0, ""};
    char out[8192], junit[160], want[600];
    char *sim72 = slurp(GOOD "report-sim-qwen72b-sft.json", NULL);
    char *slow = replaced(sim72, "\"time_s\": 47.12", "\"time_s\": 52.0");
    char slow_path[160];

    setenv("SOURCE_DATE_EPOCH", "1700000000", 1);
    snprintf(slow_path, sizeof slow_path, "%s/qwen72b-sft.json", g_dir);
    spit(slow_path, slow);
    snprintf(junit, sizeof junit, "%s/j.xml", g_dir);
    {
        char *a[] = {"report",
                     "--db",
                     g_db,
                     "--add",
                     GOOD "report-sim-qwen72b-sft.json",
                     "--scenario",
                     "qwen72b-sft",
                     "--tag",
                     "v1"};
        ck_assert_int_eq(run_cli(out, sizeof out, &err, 9, a), 0);
        snprintf(want, sizeof want,
                 "recorded run 1 (simulate 'qwen72b-sft', verdict fits) in %s\n"
                 "tagged 1 run as 'v1' in %s\n",
                 g_db, g_db);
        ck_assert_str_eq(out, want);
    }
    {
        char *a[] = {"report", "--db", g_db, "--add", slow_path};
        ck_assert_int_eq(run_cli(out, sizeof out, &err, 5, a), 0);
    }
    {
        char *a[] = {"report", "--db",    g_db, "--baseline",
                     "v1",     "--junit", junit};
        ck_assert_int_eq(run_cli(out, sizeof out, &err, 7, a), ZS_EGATE);
        ck_assert_str_eq(err.msg, "");
        ck_assert_ptr_nonnull(
            strstr(out, "regression check against tag 'v1' (1 scenarios)\n"));
        ck_assert_ptr_nonnull(strstr(out, "REGRESSED: step_time_s 47.12 s -> "
                                          "52 s (+10.36%, tolerance 2.00%)"));
        ck_assert_ptr_nonnull(
            strstr(out, "6 checks: 5 ok, 1 regressed, 0 improved"));
        ck_assert_int_eq(access(junit, F_OK), 0);
    }
    {
        char *a[] = {"report", "--db", g_db, "--baseline", "v2"};
        ck_assert_int_eq(run_cli(out, sizeof out, &err, 5, a), ZS_EUSAGE);
        snprintf(want, sizeof want,
                 "unknown baseline 'v2': no such file or folder, and no such "
                 "tag in '%s' (tags: v1)",
                 g_db);
        ck_assert_str_eq(err.msg, want);
    }
    {
        /* The store's run was recorded with its command line. */
        char *a[] = {"report", "--db",        g_db,       "--out",
                     g_out,    "--no-charts", "--format", "md"};
        char md[200], *text;
        ck_assert_int_eq(run_cli(out, sizeof out, &err, 8, a), 0);
        snprintf(md, sizeof md, "%s/report.md", g_out);
        text = slurp(md, NULL);
        snprintf(want, sizeof want, "Command: `zsim report --db %s --add %s`",
                 g_db, slow_path);
        ck_assert_ptr_nonnull(strstr(text, want));
        free(text);
        snprintf(md, sizeof md, "%s/index.html", g_out);
        ck_assert_int_ne(access(md, F_OK), 0);
    }
    {
        /* Garbage over the store: exit 3, and no report is written. */
        char *a[] = {"report", "--db", g_db, "--out", g_dir};
        char path[200];
        FILE *f = fopen(g_db, "r+b");
        static const char junk[4096] = {1, 2, 3};
        fseek(f, 0, SEEK_SET);
        fwrite(junk, 1, sizeof junk, f);
        fclose(f);
        snprintf(path, sizeof path, "%s-wal", g_db);
        unlink(path);
        ck_assert_int_eq(run_cli(out, sizeof out, &err, 5, a), ZS_EINPUT);
        snprintf(want, sizeof want,
                 "corrupt run store '%s': file is not a database", g_db);
        ck_assert_str_eq(err.msg, want);
        ck_assert_str_eq(out, "");
    }
    free(sim72);
    free(slow);
}
END_TEST

/* Rendering and comparing under a failure of every allocation in turn. */
START_TEST(test_alloc_failures)
{
    struct zs_err err = {0, ""};
    struct zs_baseline b;
    struct zs_tolerance tol;
    zs_store *st = sample_store();
    char junit[160];
    long n;

    zs_tolerance_default(&tol);
    ck_assert_int_eq(zs_baseline_read_path(GOOD "report-baseline", &b, &err),
                     0);
    snprintf(junit, sizeof junit, "%s/j.xml", g_dir);
    for (n = 1; n < 200000; n++) {
        struct zs_report_opts o = {g_out, ZS_REPORT_HTML | ZS_REPORT_MD, 0,
                                   GOOD "report-validation"};
        struct zs_report_stats s;
        struct zs_run_list latest = {NULL, 0};
        struct zs_compare_stats cs;
        int rc;
        zs_alloc_fail_at(n);
        rc = zs_report_render(st, &o, &s, &err);
        if (!rc)
            rc = zs_store_latest(st, &latest, &err);
        if (!rc)
            rc =
                zs_report_compare(&b, &latest, &tol, 0, NULL, junit, &cs, &err);
        zs_run_list_release(&latest);
        if (!zs_alloc_failed()) {
            zs_alloc_fail_at(0);
            ck_assert_msg(rc == 0, "n=%ld: %s", n, err.msg);
            break;
        }
        zs_alloc_fail_at(0);
        /* SQLite survives some failures on its own (its "benign" ones):
         * then the result must be whole, the same as without failures. */
        ck_assert_msg(rc == ZS_ENOMEM || rc == 0, "n=%ld rc=%d msg=%s", n, rc,
                      err.msg);
        if (rc == 0) {
            char p[200];
            char *got, *want;
            snprintf(p, sizeof p, "%s/report.md", g_out);
            got = slurp(p, NULL);
            want = slurp(GOLDEN "report.md", NULL);
            ck_assert_msg(got && want && strcmp(got, want) == 0,
                          "n=%ld: report differs", n);
            free(got);
            free(want);
        }
    }
    ck_assert_msg(n < 200000, "allocation loop did not terminate");
    zs_baseline_release(&b);
    zs_store_close(st);
}
END_TEST

Suite *suite_report(void)
{
    Suite *s = suite_create("report");
    TCase *core = tcase_create("core");
    TCase *limits = tcase_create("limits");
    TCase *bad = tcase_create("bad input");
    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_checked_fixture(limits, setup, teardown);
    tcase_add_checked_fixture(bad, setup, teardown);
    tcase_set_timeout(core, 60);
    tcase_set_timeout(limits, 300);
    tcase_add_test(core, test_render_golden);
    tcase_add_test(core, test_render_nvme_breakdown);
    tcase_add_test(core, test_render_idempotent);
    tcase_add_test(core, test_render_charts);
    tcase_add_test(core, test_compare_clean);
    tcase_add_test(core, test_compare_drift);
    tcase_add_test(core, test_baseline_roundtrip);
    tcase_add_test(core, test_tolerance);
    tcase_add_test(core, test_cli_flow);
    tcase_add_test(limits, test_render_gnuplot_fails);
    tcase_add_test(limits, test_alloc_failures);
    tcase_add_test(bad, test_bad_baselines);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    suite_add_tcase(s, bad);
    return s;
}
