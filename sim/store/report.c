/*
 * report.c — renders the latest run of each scenario in the store as
 * index.html and/or report.md, summary.csv, and gnuplot charts; see report.h.
 *
 * Charts (each NAME.gp + NAME.dat, drawn to NAME.png and NAME.svg):
 *   breakdown             steady step time split (compute, exposed
 *                         collective, exposed PCIe, optimizer, other), one
 *                         stacked bar per scenario;
 *   memory-<scenario>     GPU allocated/reserved per rank and host per node
 *                         over time, from a simulate document's timeline;
 *   frontier-<scenario>   a plan's feasible candidates, tokens/s per GPU
 *                         against peak GPU and peak host memory, with the
 *                         Pareto frontier (no other candidate is faster with
 *                         no more memory) and the best candidate;
 *   validation            error of zsim's predictions against each measured
 *                         file in validation/ (NAME.measured.json, read with
 *                         formats/measured_io.h), with the accuracy targets of
 *                         DESIGN §6: 5 % for peak memory, 10 % for step time.
 * Everything written depends only on the store, never on the clock, so a
 * rerun rewrites identical files (idempotent).  Cost: linear in the stored
 * documents of the latest runs, plus one gnuplot process per chart.
 */
#include "store/report.h"
#include "store/gnuplot.h"
#include "formats/measured_io.h"
#include "store/report_int.h"
#include "util/alloc.h"
#include "util/strutil.h"
#include "util/units.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GIB ((double)ZS_GiB)

struct scen {
    const struct zs_run *run;
    struct zs_rdoc doc;
    char stem[208];
    int mem_chart, mem_drawn;
    int front_chart, front_drawn;
    const struct zs_rstep *bd_step; /* steady step with a breakdown, or NULL */
};

#define MEM_TARGET_PCT 5.0   /* DESIGN §6: peak GPU memory within 5 % */
#define TIME_TARGET_PCT 10.0 /* DESIGN §6: step time within 10 % */

struct vfile {
    char name[256]; /* file name inside the validation folder */
    struct zs_meas_env env;
    struct zs_sched_header header;
    struct zs_validation v;
};

struct ctx {
    const struct zs_report_opts *o;
    struct vfile *vf;
    size_t nvf;
    int val_chart, val_drawn;
    struct zs_report_stats *s;
    const char *dbname; /* file name of the store, for titles */
    char gnuplot[1024];
    int have_gnuplot;
    struct scen *sc;
    size_t n;
    int bd_chart, bd_drawn;
};

/* ---- small formatting helpers ---------------------------------------------
 */

static char *fmt_b(char *buf, size_t cap, int64_t bytes)
{
    if (bytes < 0)
        snprintf(buf, cap, "-");
    else
        zs_fmt_bytes(buf, cap, bytes);
    return buf;
}

static char *fmt_s(char *buf, size_t cap, double s)
{
    if (isnan(s))
        snprintf(buf, cap, "-");
    else
        zs_fmt_seconds(buf, cap, s);
    return buf;
}

static char *fmt_f(char *buf, size_t cap, const char *fmt, double v)
{
    if (isnan(v))
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, fmt, v);
    return buf;
}

/* A configuration for people: {"procs":8,"offload":"cpu"} becomes
 * "procs=8 offload=cpu" (nested values keep their JSON). */
static char *config_text(char *buf, size_t cap, const char *json)
{
    size_t n = 0;
    int depth = 0, in_str = 0;
    if (!json || cap == 0) {
        snprintf(buf, cap, "-");
        return buf;
    }
    for (const char *p = json; *p && n + 1 < cap; p++) {
        char ch = *p;
        if (in_str) {
            if (ch == '\\' && p[1]) {
                buf[n++] = *++p;
                continue;
            }
            if (ch == '"') {
                in_str = 0;
                if (depth > 1)
                    buf[n++] = ch;
                continue;
            }
            buf[n++] = ch;
            continue;
        }
        if (ch == '"') {
            in_str = 1;
            if (depth > 1)
                buf[n++] = ch;
        } else if (ch == '{' || ch == '[') {
            if (depth++ > 0)
                buf[n++] = ch;
        } else if (ch == '}' || ch == ']') {
            if (--depth > 0)
                buf[n++] = ch;
        } else if (depth == 1 && ch == ':') {
            buf[n++] = '=';
        } else if (depth == 1 && ch == ',') {
            buf[n++] = ' ';
        } else {
            buf[n++] = ch;
        }
    }
    buf[n] = '\0';
    return buf;
}

static char *fmt_time(char *buf, size_t cap, int64_t unix_time)
{
    time_t t = (time_t)unix_time;
    struct tm tm;
    if (!gmtime_r(&t, &tm) || !strftime(buf, cap, "%Y-%m-%d %H:%M UTC", &tm))
        snprintf(buf, cap, "%lld", (long long)unix_time);
    return buf;
}

static const struct zs_rstep *main_step(const struct scen *s)
{
    if (s->doc.kind == ZS_RDOC_PLAN)
        return s->doc.best >= 0 ? &s->doc.cands[s->doc.best].steady : NULL;
    return s->doc.steady.present ? &s->doc.steady : NULL;
}

/* ---- tables, emitted both as HTML and Markdown ----------------------------
 */

#define TCOLS 16
#define TCELL 320

struct rtable {
    int ncols;
    const char *align; /* 'l' or 'r' per column */
    char (*cells)[TCOLS][TCELL];
    size_t n, cap; /* rows; row 0 is the header */
    int failed;
};

static void rt_init(struct rtable *t, int ncols, const char *align)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    t->align = align;
}

static void rt_release(struct rtable *t)
{
    zs_free(t->cells);
}

/* Adds a row of ncols cells separated by '\t' in the formatted text. */
__attribute__((format(printf, 2, 3))) static void rt_row(struct rtable *t,
                                                         const char *fmt, ...)
{
    char line[TCOLS * TCELL];
    char *p = line;
    va_list ap;
    if (t->failed ||
        zs_grow((void **)&t->cells, &t->cap, t->n + 1, sizeof *t->cells)) {
        t->failed = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    for (int c = 0; c < t->ncols; c++) {
        char *tab = p ? strchr(p, '\t') : NULL;
        if (tab)
            *tab = '\0';
        zs_strlcpy(t->cells[t->n][c], p ? p : "", TCELL);
        p = tab ? tab + 1 : NULL;
    }
    t->n++;
}

static void rt_html(const struct rtable *t, struct zs_rbuf *h, const char *cls)
{
    if (t->failed)
        h->failed = 1; /* a row was lost: the document must not be written */
    zs_rbuf_printf(h, "<div class=\"wide\"><table class=\"%s\">\n", cls);
    for (size_t r = 0; r < t->n; r++) {
        zs_rbuf_puts(h, "<tr>");
        for (int c = 0; c < t->ncols; c++) {
            const char *cell = t->cells[r][c];
            const char *tag = r == 0 ? "th" : "td";
            const char *vcls = "";
            if (r > 0 &&
                (strcmp(cell, "fits") == 0 || strncmp(cell, "fits ", 5) == 0))
                vcls = " fits";
            else if (r > 0 && (strcmp(cell, "gpu_oom") == 0 ||
                               strcmp(cell, "host_oom") == 0 ||
                               strcmp(cell, "none_fits") == 0))
                vcls = " oom";
            zs_rbuf_printf(h, "<%s class=\"%c%s\">", tag, t->align[c], vcls);
            zs_rbuf_escape(h, cell);
            zs_rbuf_printf(h, "</%s>", tag);
        }
        zs_rbuf_puts(h, "</tr>\n");
    }
    zs_rbuf_puts(h, "</table></div>\n");
}

static void md_cell(struct zs_rbuf *m, const char *s)
{
    for (const char *p = s; *p; p++) {
        if (*p == '|')
            zs_rbuf_puts(m, "\\|");
        else
            zs_rbuf_putn(m, p, 1);
    }
}

static void rt_md(const struct rtable *t, struct zs_rbuf *m)
{
    if (t->failed)
        m->failed = 1;
    for (size_t r = 0; r < t->n; r++) {
        zs_rbuf_puts(m, "|");
        for (int c = 0; c < t->ncols; c++) {
            zs_rbuf_puts(m, " ");
            md_cell(m, t->cells[r][c]);
            zs_rbuf_puts(m, " |");
        }
        zs_rbuf_puts(m, "\n");
        if (r == 0) {
            zs_rbuf_puts(m, "|");
            for (int c = 0; c < t->ncols; c++)
                zs_rbuf_puts(m, t->align[c] == 'r' ? " ---: |" : " --- |");
            zs_rbuf_puts(m, "\n");
        }
    }
    zs_rbuf_puts(m, "\n");
}

/* ---- charts -----------------------------------------------------------------
 */

static int write_chart(struct ctx *c, const char *stem,
                       const struct zs_rbuf *gp, const struct zs_rbuf *dat,
                       int *drawn, struct zs_err *err)
{
    char name[240];
    struct zs_err gerr = {0, ""};
    int rc;

    snprintf(name, sizeof name, "%s.dat", stem);
    if ((rc = zs_rbuf_write_atomic(dat, c->o->out_dir, name, err)))
        return rc;
    snprintf(name, sizeof name, "%s.gp", stem);
    if ((rc = zs_rbuf_write_atomic(gp, c->o->out_dir, name, err)))
        return rc;
    c->s->ncharts++;
    *drawn = 0;
    if (!c->o->draw_charts || !c->have_gnuplot)
        return 0;
    if (zs_gnuplot_draw(c->gnuplot, c->o->out_dir, name, stem, &gerr)) {
        if (!c->s->chart_problem[0])
            zs_strlcpy(c->s->chart_problem, gerr.msg,
                       sizeof c->s->chart_problem);
        return 0;
    }
    *drawn = 1;
    c->s->ndrawn++;
    return 0;
}

/* The end of every chart: writes its files (write_chart) unless building
 * them ran out of memory, sets *made to whether they were written, and
 * releases both buffers. */
static int finish_chart(struct ctx *c, const char *stem, struct zs_rbuf *gp,
                        struct zs_rbuf *dat, int *made, int *drawn,
                        struct zs_err *err)
{
    int rc = gp->failed || dat->failed
                 ? zs_err_set(err, ZS_ENOMEM, "out of memory writing a chart")
                 : write_chart(c, stem, gp, dat, drawn, err);
    *made = rc == 0;
    zs_rbuf_release(gp);
    zs_rbuf_release(dat);
    return rc;
}

static int chart_memory(struct ctx *c, struct scen *s, struct zs_err *err)
{
    const struct zs_rdoc *d = &s->doc;
    struct zs_rbuf gp, dat;
    char stem[240], title[400];

    if (d->n_gpu == 0 && d->n_host == 0)
        return 0;
    zs_rbuf_init(&gp);
    zs_rbuf_init(&dat);
    snprintf(stem, sizeof stem, "memory-%s", s->stem);
    zs_rbuf_printf(&dat,
                   "# zsim report: memory over time, scenario '%s' (run %lld)\n"
                   "# block 0: GPU per rank: t_s allocated_GiB reserved_GiB\n",
                   s->run->scenario, (long long)s->run->id);
    for (size_t i = 0; i < d->n_gpu; i++)
        zs_rbuf_printf(&dat, "%.9g %.6g %.6g\n", d->gpu_tl[3 * i],
                       d->gpu_tl[3 * i + 1] / GIB, d->gpu_tl[3 * i + 2] / GIB);
    zs_rbuf_puts(&dat, "\n\n# block 1: host per node: t_s GiB\n");
    for (size_t i = 0; i < d->n_host; i++)
        zs_rbuf_printf(&dat, "%.9g %.6g\n", d->host_tl[2 * i],
                       d->host_tl[2 * i + 1] / GIB);

    snprintf(title, sizeof title, "memory over time for '%s' (run %lld)",
             s->run->scenario, (long long)s->run->id);
    zs_gnuplot_begin(&gp, title);
    zs_rbuf_puts(&gp, "set key below horizontal\n"
                      "set xlabel \"time (s)\"\n"
                      "set ylabel \"GPU memory per rank (GiB)\"\n"
                      "set yrange [0:*]\n");
    if (d->n_host)
        zs_rbuf_puts(&gp, "set y2label \"host memory per node (GiB)\"\n"
                          "set ytics nomirror\n"
                          "set y2tics\n"
                          "set y2range [0:*]\n");
    zs_rbuf_puts(&gp, "set title ");
    zs_rbuf_json_str(&gp, s->run->scenario);
    zs_rbuf_puts(&gp, " . \": memory over time\"\n");
    for (int svg = 0; svg < 2; svg++) {
        const char *sep = "plot ";
        zs_gnuplot_output(&gp, stem, svg, 960, 480);
        if (d->n_gpu) {
            zs_rbuf_printf(&gp,
                           "%s\"%s.dat\" index 0 using 1:2 with steps lw 2 lc "
                           "rgb \"#1f77b4\" title \"GPU allocated\", \\\n"
                           "     \"\" index 0 using 1:3 with steps lw 2 dt 2 "
                           "lc rgb \"#6baed6\" title \"GPU reserved\"",
                           sep, stem);
            sep = ", \\\n     ";
        }
        if (d->n_host)
            zs_rbuf_printf(
                &gp,
                "%s\"%s.dat\" index 1 using 1:2 axes x1y%d with steps lw 2 lc "
                "rgb \"#d62728\" title \"host per node\"",
                sep, stem, d->n_gpu ? 2 : 1);
        zs_rbuf_puts(&gp, "\n");
        zs_gnuplot_end_output(&gp);
    }
    return finish_chart(c, stem, &gp, &dat, &s->mem_chart, &s->mem_drawn,
                        err);
}

struct fpt {
    double gpu, host, tok;
};

static int cmp_gpu(const void *a, const void *b)
{
    const struct fpt *x = a, *y = b;
    return x->gpu < y->gpu   ? -1
           : x->gpu > y->gpu ? 1
                             : (x->tok > y->tok ? -1 : x->tok < y->tok);
}

static int cmp_host(const void *a, const void *b)
{
    const struct fpt *x = a, *y = b;
    return x->host < y->host   ? -1
           : x->host > y->host ? 1
                               : (x->tok > y->tok ? -1 : x->tok < y->tok);
}

/* Frontier: sorted by memory, keep each point faster than all before it. */
static void frontier(struct zs_rbuf *dat, struct fpt *p, size_t n, int host)
{
    double best = -1;
    qsort(p, n, sizeof *p, host ? cmp_host : cmp_gpu);
    for (size_t i = 0; i < n; i++) {
        if (p[i].tok > best) {
            zs_rbuf_printf(dat, "%.6g %.6g\n", host ? p[i].host : p[i].gpu,
                           p[i].tok);
            best = p[i].tok;
        }
    }
}

/* Block 0 of frontier-*.dat: every feasible candidate's steady peaks and
 * tokens/s, also kept in pts (room for d->ncands); returns how many. */
static size_t frontier_points(const struct zs_rdoc *d, struct fpt *pts,
                              struct zs_rbuf *dat)
{
    size_t n = 0;
    for (size_t i = 0; i < d->ncands; i++) {
        const struct zs_rcand *k = &d->cands[i];
        if (k->verdict != ZS_VERDICT_FITS || !k->steady.present ||
            isnan(k->steady.tokens_per_s_per_gpu) ||
            k->steady.peak_gpu_allocated_bytes < 0 ||
            k->steady.peak_host_bytes_per_node < 0)
            continue;
        pts[n].gpu = (double)k->steady.peak_gpu_allocated_bytes / GIB;
        pts[n].host = (double)k->steady.peak_host_bytes_per_node / GIB;
        pts[n].tok = k->steady.tokens_per_s_per_gpu;
        zs_rbuf_printf(dat, "%.6g %.6g %.6g %zu\n", pts[n].gpu, pts[n].host,
                       pts[n].tok, i);
        n++;
    }
    return n;
}

/* Blocks 1 to 3: the frontiers over GPU and over host memory, and the best
 * candidate. */
static void frontier_blocks(const struct zs_rdoc *d, struct fpt *pts,
                            size_t n, struct zs_rbuf *dat)
{
    zs_rbuf_puts(dat, "\n\n# block 1: frontier over peak GPU memory: "
                      "peak_gpu_GiB tokens_per_s_per_gpu\n");
    frontier(dat, pts, n, 0);
    zs_rbuf_puts(dat, "\n\n# block 2: frontier over peak host memory: "
                      "peak_host_GiB tokens_per_s_per_gpu\n");
    frontier(dat, pts, n, 1);
    zs_rbuf_puts(dat, "\n\n# block 3: best candidate: peak_gpu_GiB "
                      "peak_host_GiB tokens_per_s_per_gpu candidate\n");
    if (d->best >= 0 && d->cands[d->best].steady.present) {
        const struct zs_rstep *b = &d->cands[d->best].steady;
        zs_rbuf_printf(dat, "%.6g %.6g %.6g %lld\n",
                       (double)b->peak_gpu_allocated_bytes / GIB,
                       (double)b->peak_host_bytes_per_node / GIB,
                       b->tokens_per_s_per_gpu, (long long)d->best);
    }
}

/* The script: two panels, tokens/s against peak GPU and against peak host
 * memory, each with the feasible points, the frontier and the best. */
static void frontier_script(const struct scen *s, const char *stem,
                            struct zs_rbuf *gp)
{
    char title[400];
    snprintf(title, sizeof title, "plan frontier for '%s' (run %lld)",
             s->run->scenario, (long long)s->run->id);
    zs_gnuplot_begin(gp, title);
    zs_rbuf_puts(gp, "set key bottom right\n"
                     "set ylabel \"tokens/s per GPU\"\n"
                     "set yrange [0:*]\n"
                     "set xrange [0:*]\n");
    for (int svg = 0; svg < 2; svg++) {
        zs_gnuplot_output(gp, stem, svg, 1100, 460);
        zs_rbuf_puts(gp, "set multiplot layout 1,2 title ");
        zs_rbuf_json_str(gp, s->run->scenario);
        zs_rbuf_puts(gp, " . \": throughput against memory (plan)\"\n");
        for (int host = 0; host < 2; host++) {
            int x = host ? 2 : 1;
            zs_rbuf_printf(
                gp,
                "set xlabel \"%s\"\n"
                "plot \"%s.dat\" index 0 using %d:3 with points pt 7 ps 1.2 lc "
                "rgb \"#7f7f7f\" title \"feasible\", \\\n"
                "     \"\" index %d using 1:2 with linespoints lw 2 pt 7 lc "
                "rgb \"#1f77b4\" title \"frontier\"%s",
                host ? "peak host memory per node (GiB)"
                     : "peak GPU allocated per rank (GiB)",
                stem, x, host ? 2 : 1,
                s->doc.best >= 0 ? ", \\\n     \"\" index 3 using " : "\n");
            if (s->doc.best >= 0)
                zs_rbuf_printf(gp,
                               "%d:3 with points pt 6 ps 3 lw 2 lc rgb "
                               "\"#d62728\" title \"best\"\n",
                               x);
        }
        zs_rbuf_puts(gp, "unset multiplot\n");
        zs_gnuplot_end_output(gp);
    }
}

static int chart_frontier(struct ctx *c, struct scen *s, struct zs_err *err)
{
    const struct zs_rdoc *d = &s->doc;
    struct zs_rbuf gp, dat;
    struct fpt *pts;
    size_t n;
    char stem[240];
    int rc = 0;

    if (d->ncands == 0)
        return 0;
    pts = zs_calloc(d->ncands, sizeof *pts);
    if (!pts)
        return zs_err_set(err, ZS_ENOMEM, "out of memory writing a chart");
    zs_rbuf_init(&gp);
    zs_rbuf_init(&dat);
    snprintf(stem, sizeof stem, "frontier-%s", s->stem);
    zs_rbuf_printf(&dat,
                   "# zsim report: plan frontier, scenario '%s' (run %lld)\n"
                   "# block 0: feasible candidates: peak_gpu_GiB peak_host_GiB "
                   "tokens_per_s_per_gpu candidate\n",
                   s->run->scenario, (long long)s->run->id);
    n = frontier_points(d, pts, &dat);
    if (n == 0) {
        zs_rbuf_release(&gp);
        zs_rbuf_release(&dat);
    } else {
        frontier_blocks(d, pts, n, &dat);
        frontier_script(s, stem, &gp);
        rc = finish_chart(c, stem, &gp, &dat, &s->front_chart,
                          &s->front_drawn, err);
    }
    zs_free(pts);
    return rc;
}

static int chart_breakdown(struct ctx *c, struct zs_err *err)
{
    struct zs_rbuf gp, dat;
    size_t n = 0;
    int rc;

    bool nvme = false; /* a column for exposed NVMe when any run has it */

    zs_rbuf_init(&gp);
    zs_rbuf_init(&dat);
    for (size_t i = 0; i < c->n; i++)
        nvme |=
            c->sc[i].bd_step && c->sc[i].bd_step->breakdown.exposed_nvme > 0;
    zs_rbuf_printf(
        &dat,
        "# zsim report: steady step time breakdown (s), latest run of each "
        "scenario\n"
        "# scenario compute exposed_collective exposed_pcie optimizer "
        "other%s\n",
        nvme ? " exposed_nvme" : "");
    for (size_t i = 0; i < c->n; i++) {
        const struct zs_rstep *st = c->sc[i].bd_step;
        if (!st)
            continue;
        zs_rbuf_json_str(&dat, c->sc[i].run->scenario);
        zs_rbuf_printf(&dat, " %.6g %.6g %.6g %.6g %.6g", st->breakdown.compute,
                       st->breakdown.exposed_collective,
                       st->breakdown.exposed_pcie, st->breakdown.optimizer,
                       st->breakdown.other);
        if (nvme)
            zs_rbuf_printf(&dat, " %.6g", st->breakdown.exposed_nvme);
        zs_rbuf_puts(&dat, "\n");
        n++;
    }
    if (n == 0) {
        rc = 0;
        goto out;
    }
    zs_gnuplot_begin(&gp,
                     "steady step time breakdown, latest run of each scenario");
    zs_rbuf_puts(&gp, "set style data histograms\n"
                      "set style histogram rowstacked\n"
                      "set style fill solid 0.85 border -1\n"
                      "set boxwidth 0.6\n"
                      "set key outside right top vertical\n"
                      "set ylabel \"steady step time (s)\"\n"
                      "set yrange [0:*]\n"
                      "set xtics rotate by -25 nomirror\n"
                      "set grid noxtics ytics\n"
                      "set title \"where the steady step's time goes\"\n");
    for (int svg = 0; svg < 2; svg++) {
        zs_gnuplot_output(&gp, "breakdown", svg, 960,
                          160 + 30 * (int)(n < 8    ? 8
                                           : n > 40 ? 40
                                                    : n));
        zs_rbuf_printf(
            &gp,
            "plot \"breakdown.dat\" using 2:xtic(1) lc rgb \"#1f77b4\" title "
            "\"compute\", \\\n"
            "     \"\" using 3 lc rgb \"#ff7f0e\" title \"exposed "
            "collective\", \\\n"
            "     \"\" using 4 lc rgb \"#d62728\" title \"exposed PCIe\", \\\n"
            "     \"\" using 5 lc rgb \"#2ca02c\" title \"optimizer\", \\\n"
            "     \"\" using 6 lc rgb \"#9467bd\" title \"other\"%s\n",
            nvme ? ", \\\n     \"\" using 7 lc rgb \"#8c564b\" title "
                   "\"exposed NVMe\""
                 : "");
        zs_gnuplot_end_output(&gp);
    }
    return finish_chart(c, "breakdown", &gp, &dat, &c->bd_chart, &c->bd_drawn,
                        err);
out:
    zs_rbuf_release(&gp);
    zs_rbuf_release(&dat);
    return rc;
}

/* ---- documents --------------------------------------------------------------
 */

static const char *not_drawn(const struct ctx *c)
{
    if (!c->o->draw_charts)
        return "chart not drawn (charts were turned off)";
    if (!c->have_gnuplot)
        return "chart not drawn: gnuplot was not found on PATH (install "
               "gnuplot-nox, "
               "or run the script beside this report with gnuplot)";
    return "chart not drawn: gnuplot failed on its script";
}

static void figure(const struct ctx *c, struct zs_rbuf *h, struct zs_rbuf *m,
                   const char *stem, int drawn, const char *caption)
{
    if (drawn) {
        zs_rbuf_printf(h, "<figure><img src=\"%s.svg\" alt=\"", stem);
        zs_rbuf_escape(h, caption);
        zs_rbuf_printf(h, "\"><figcaption>");
        zs_rbuf_escape(h, caption);
        zs_rbuf_printf(
            h,
            " (<a href=\"%s.png\">PNG</a>, <a href=\"%s.gp\">script</a>, "
            "<a href=\"%s.dat\">data</a>)</figcaption></figure>\n",
            stem, stem, stem);
        zs_rbuf_printf(m, "![");
        md_cell(m, caption);
        zs_rbuf_printf(m, "](%s.png)\n\n", stem);
    } else {
        zs_rbuf_puts(h, "<p class=\"note\">");
        zs_rbuf_escape(h, caption);
        zs_rbuf_printf(h,
                       ": %s; script <a href=\"%s.gp\">%s.gp</a>, data "
                       "<a href=\"%s.dat\">%s.dat</a>.</p>\n",
                       not_drawn(c), stem, stem, stem, stem);
        zs_rbuf_puts(m, "> ");
        md_cell(m, caption);
        zs_rbuf_printf(m, ": %s; script `%s.gp`, data `%s.dat`.\n\n",
                       not_drawn(c), stem, stem);
    }
}

static void para(struct zs_rbuf *h, struct zs_rbuf *m, const char *text)
{
    zs_rbuf_puts(h, "<p>");
    zs_rbuf_escape(h, text);
    zs_rbuf_puts(h, "</p>\n");
    zs_rbuf_puts(m, text);
    zs_rbuf_puts(m, "\n\n");
}

static void code_line(struct zs_rbuf *h, struct zs_rbuf *m, const char *label,
                      const char *code)
{
    zs_rbuf_printf(h, "<p>%s: <code>", label);
    zs_rbuf_escape(h, code);
    zs_rbuf_puts(h, "</code></p>\n");
    zs_rbuf_printf(m, "%s: `%s`\n\n", label, code);
}

static void heading(struct zs_rbuf *h, struct zs_rbuf *m, int level,
                    const char *id, const char *text)
{
    zs_rbuf_printf(h, "<h%d", level);
    if (id)
        zs_rbuf_printf(h, " id=\"%s\"", id);
    zs_rbuf_puts(h, ">");
    zs_rbuf_escape(h, text);
    zs_rbuf_printf(h, "</h%d>\n", level);
    for (int i = 0; i < level; i++)
        zs_rbuf_puts(m, "#");
    zs_rbuf_printf(m, " %s\n\n", text);
}

static void summary_table(const struct ctx *c, struct rtable *t)
{
    rt_init(t, 13, "lllrrrrrrllll");
    rt_row(t, "scenario\tkind\tverdict\tpeak GPU allocated\tpeak GPU reserved\t"
              "peak host / node\tstep "
              "time\ttokens/s/GPU\tMFU\tbottleneck\tzsim\tcommit\trecorded");
    for (size_t i = 0; i < c->n; i++) {
        const struct scen *s = &c->sc[i];
        const struct zs_rstep *st = main_step(s);
        char a[32], r[32], h[32], ts[32], tok[32], mfu[32], when[48];
        rt_row(t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s",
               s->run->scenario, s->run->kind, zs_verdict_names[s->doc.verdict],
               fmt_b(a, sizeof a,
                     isnan(s->doc.metric[ZS_M_PEAK_GPU_ALLOC])
                         ? -1
                         : (int64_t)s->doc.metric[ZS_M_PEAK_GPU_ALLOC]),
               fmt_b(r, sizeof r,
                     isnan(s->doc.metric[ZS_M_PEAK_GPU_RESERVED])
                         ? -1
                         : (int64_t)s->doc.metric[ZS_M_PEAK_GPU_RESERVED]),
               fmt_b(h, sizeof h,
                     isnan(s->doc.metric[ZS_M_PEAK_HOST])
                         ? -1
                         : (int64_t)s->doc.metric[ZS_M_PEAK_HOST]),
               fmt_s(ts, sizeof ts, s->doc.metric[ZS_M_STEP_TIME]),
               fmt_f(tok, sizeof tok, "%.1f", s->doc.metric[ZS_M_TOKENS]),
               fmt_f(mfu, sizeof mfu, "%.1f%%", st ? st->mfu * 100 : NAN),
               st && st->bottleneck[0] ? st->bottleneck : "-", s->run->version,
               s->run->git_commit[0] ? s->run->git_commit : "-",
               fmt_time(when, sizeof when, s->run->unix_time));
    }
}

/* One CSV field (RFC 4180 quoting when needed). */
static void csv_field(struct zs_rbuf *b, const char *v, int last)
{
    if (strpbrk(v, ",\"\n")) {
        zs_rbuf_puts(b, "\"");
        for (const char *p = v; *p; p++) {
            if (*p == '"')
                zs_rbuf_puts(b, "\"\"");
            else
                zs_rbuf_putn(b, p, 1);
        }
        zs_rbuf_puts(b, "\"");
    } else {
        zs_rbuf_puts(b, v);
    }
    zs_rbuf_puts(b, last ? "\n" : ",");
}

/* summary.csv: the summary for machines, in bytes and seconds. */
static void summary_csv(const struct ctx *c, struct zs_rbuf *b)
{
    zs_rbuf_puts(b, "scenario,kind,verdict,peak_gpu_allocated_bytes,peak_gpu_"
                    "reserved_bytes,"
                    "peak_host_bytes_per_node,step_time_s,tokens_per_s_per_gpu,"
                    "mfu,bottleneck,"
                    "run_id,zsim_version,git_commit,unix_time\n");
    for (size_t i = 0; i < c->n; i++) {
        const struct scen *s = &c->sc[i];
        const struct zs_rstep *st = main_step(s);
        char num[64];
        csv_field(b, s->run->scenario, 0);
        csv_field(b, s->run->kind, 0);
        csv_field(b, zs_verdict_names[s->doc.verdict], 0);
        for (int m = 0; m < ZS_M_COUNT; m++)
            csv_field(b,
                      isnan(s->doc.metric[m])
                          ? ""
                          : zs_fmt_num(num, sizeof num, s->doc.metric[m]),
                      0);
        csv_field(b,
                  st && !isnan(st->mfu) ? zs_fmt_num(num, sizeof num, st->mfu)
                                        : "",
                  0);
        csv_field(b, st ? st->bottleneck : "", 0);
        snprintf(num, sizeof num, "%lld", (long long)s->run->id);
        csv_field(b, num, 0);
        csv_field(b, s->run->version, 0);
        csv_field(b, s->run->git_commit, 0);
        snprintf(num, sizeof num, "%lld", (long long)s->run->unix_time);
        csv_field(b, num, 1);
    }
}

/* One step's row; the exposed NVMe column only when the table has it
 * (`nvme`: either step swapped optimizer states to NVMe), so that the parts
 * add up to the step time. */
static void step_row(struct rtable *t, const char *name,
                     const struct zs_rstep *st, bool nvme)
{
    char c[13][32];
    const struct zs_rbreakdown *b = &st->breakdown;
    const char *nv =
        st->has_breakdown ? fmt_s(c[12], 32, b->exposed_nvme) : "-";
    rt_row(t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s%s%s\t%s\t%s\t%s",
           name, fmt_s(c[0], 32, st->time_s),
           fmt_f(c[1], 32, "%.1f", st->tokens_per_s_per_gpu),
           fmt_f(c[2], 32, "%.1f%%", st->mfu * 100),
           fmt_b(c[3], 32, st->peak_gpu_allocated_bytes),
           fmt_b(c[4], 32, st->peak_gpu_reserved_bytes),
           fmt_b(c[5], 32, st->peak_host_bytes_per_node),
           fmt_b(c[6], 32, st->pinned_host_bytes_per_node),
           st->has_breakdown ? fmt_s(c[7], 32, b->compute) : "-",
           st->has_breakdown ? fmt_s(c[8], 32, b->exposed_collective) : "-",
           st->has_breakdown ? fmt_s(c[9], 32, b->exposed_pcie) : "-",
           nvme ? "\t" : "", nvme ? nv : "",
           st->has_breakdown ? fmt_s(c[10], 32, b->optimizer) : "-",
           st->has_breakdown ? fmt_s(c[11], 32, b->other) : "-",
           st->bottleneck[0] ? st->bottleneck : "-");
}

static void verdict_text(const struct scen *s, char *buf, size_t cap)
{
    const struct zs_rdoc *d = &s->doc;
    char a[32], b[32];
    size_t n;
    if (d->verdict_text[0]) {
        snprintf(buf, cap, "Verdict: %s.", d->verdict_text);
        return;
    }
    snprintf(buf, cap, "Verdict: %s", zs_verdict_names[d->verdict]);
    n = strlen(buf);
    if (d->oom.present && n < cap) {
        n += (size_t)snprintf(buf + n, cap - n, ": %s memory runs out",
                              d->oom.where[0] ? d->oom.where : "?");
        if (d->oom.phase[0] && n < cap)
            n += (size_t)snprintf(buf + n, cap - n, " in %s", d->oom.phase);
        if (d->oom.step >= 0 && n < cap)
            n += (size_t)snprintf(buf + n, cap - n, " at step %lld",
                                  (long long)d->oom.step);
        if (d->oom.module[0] && n < cap)
            n += (size_t)snprintf(buf + n, cap - n, " (module %s)",
                                  d->oom.module);
        if (d->oom.needed_bytes >= 0 && n < cap)
            n += (size_t)snprintf(
                buf + n, cap - n, ": needs %s, %s available",
                fmt_b(a, sizeof a, d->oom.needed_bytes),
                d->oom.available_bytes >= 0
                    ? fmt_b(b, sizeof b, d->oom.available_bytes)
                    : "none");
    }
    if (n < cap)
        snprintf(buf + n, cap - n, ".");
}

static void section_simulate(const struct ctx *c, const struct scen *s,
                             struct zs_rbuf *h, struct zs_rbuf *m)
{
    const struct zs_rdoc *d = &s->doc;
    char line[600], a[32], b[32], x[32], y[32];
    struct rtable t;

    verdict_text(s, line, sizeof line);
    para(h, m, line);
    if (d->run.present && d->run.host_oom) {
        snprintf(line, sizeof line,
                 "Over the whole run, host memory runs out at epoch %lld, step "
                 "%lld%s%s%s.",
                 (long long)d->run.host_oom_epoch,
                 (long long)d->run.host_oom_step,
                 d->run.host_oom_phase[0] ? " (" : "", d->run.host_oom_phase,
                 d->run.host_oom_phase[0] ? ")" : "");
        para(h, m, line);
    }
    if (d->first.present || d->steady.present) {
        bool nvme = (d->first.present && d->first.breakdown.exposed_nvme > 0) ||
                    (d->steady.present && d->steady.breakdown.exposed_nvme > 0);
        rt_init(&t, nvme ? 15 : 14,
                nvme ? "lrrrrrrrrrrrrrl" : "lrrrrrrrrrrrrl");
        rt_row(&t,
               "step\ttime\ttokens/s/GPU\tMFU\tpeak GPU allocated\tpeak "
               "GPU reserved\t"
               "peak host / node\tpinned host / node\tcompute\texposed "
               "collective\t"
               "exposed PCIe\t%soptimizer\tother\tbottleneck",
               nvme ? "exposed NVMe\t" : "");
        if (d->first.present)
            step_row(&t, "first", &d->first, nvme);
        if (d->steady.present)
            step_row(&t, "steady", &d->steady, nvme);
        rt_html(&t, h, "steps");
        rt_md(&t, m);
        rt_release(&t);
    }
    if (d->ds_gpu_bytes >= 0 || d->ds_host_bytes_per_node >= 0) {
        int known = !isnan(d->metric[ZS_M_PEAK_GPU_ALLOC]) &&
                    !isnan(d->metric[ZS_M_PEAK_HOST]);
        snprintf(
            line, sizeof line,
            "DeepSpeed's own estimator "
            "(estimate_zero3_model_states_mem_needs): GPU %s, "
            "host %s per node%s%s%s%s%s.",
            fmt_b(a, sizeof a, d->ds_gpu_bytes),
            fmt_b(b, sizeof b, d->ds_host_bytes_per_node),
            known ? "; zsim's peaks: GPU " : "",
            known ? fmt_b(x, sizeof x, (int64_t)d->metric[ZS_M_PEAK_GPU_ALLOC])
                  : "",
            known ? ", host " : "",
            known ? fmt_b(y, sizeof y, (int64_t)d->metric[ZS_M_PEAK_HOST]) : "",
            known ? " per node" : "");
        para(h, m, line);
    }
    if (d->run.present) {
        snprintf(line, sizeof line,
                 "Whole run: %lld steps (%lld per epoch), %s simulated wall "
                 "time, %s GPU-hours.",
                 (long long)d->run.steps_total,
                 (long long)d->run.steps_per_epoch,
                 fmt_s(a, sizeof a, d->run.wall_s),
                 fmt_f(b, sizeof b, "%.1f", d->run.gpu_hours));
        para(h, m, line);
    }
    if (s->mem_chart) {
        char stem[240], cap[300];
        snprintf(stem, sizeof stem, "memory-%s", s->stem);
        snprintf(cap, sizeof cap,
                 "%s: GPU memory per rank and host memory per node over time",
                 s->run->scenario);
        figure(c, h, m, stem, s->mem_drawn, cap);
    }
}

static void section_plan(const struct ctx *c, const struct scen *s,
                         struct zs_rbuf *h, struct zs_rbuf *m)
{
    const struct zs_rdoc *d = &s->doc;
    char line[400], e[32];
    struct rtable t;

    if (d->best >= 0)
        snprintf(line, sizeof line,
                 "Searched %lld configurations in %s; best: candidate %lld (%s "
                 "per GPU at %.1f tokens/s).",
                 (long long)d->searched, fmt_s(e, sizeof e, d->elapsed_s),
                 (long long)d->best,
                 d->cands[d->best].steady.present &&
                         d->cands[d->best].steady.peak_gpu_allocated_bytes >= 0
                     ? zs_fmt_bytes(
                           (char[32]){0}, 32,
                           d->cands[d->best].steady.peak_gpu_allocated_bytes)
                     : "-",
                 d->cands[d->best].steady.tokens_per_s_per_gpu);
    else
        snprintf(line, sizeof line,
                 "Searched %lld configurations in %s; none fits.",
                 (long long)d->searched, fmt_s(e, sizeof e, d->elapsed_s));
    para(h, m, line);
    rt_init(&t, 9, "rllrrrrrl");
    rt_row(&t, "#\tconfig\tverdict\tstep time\ttokens/s/GPU\tMFU\tpeak GPU "
               "allocated\tpeak host / node\treason");
    for (size_t i = 0; i < d->ncands; i++) {
        const struct zs_rcand *k = &d->cands[i];
        const struct zs_rstep *st = &k->steady;
        char a[32], b[32], ts[32], tok[32], mfu[32], cfg[TCELL];
        int p = st->present;
        rt_row(&t, "%zu%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", i,
               (int64_t)i == d->best ? " (best)" : "",
               config_text(cfg, sizeof cfg, k->config_json),
               zs_verdict_names[k->verdict],
               p ? fmt_s(ts, sizeof ts, st->time_s) : "-",
               p ? fmt_f(tok, sizeof tok, "%.1f", st->tokens_per_s_per_gpu)
                 : "-",
               p ? fmt_f(mfu, sizeof mfu, "%.1f%%", st->mfu * 100) : "-",
               p ? fmt_b(a, sizeof a, st->peak_gpu_allocated_bytes) : "-",
               p ? fmt_b(b, sizeof b, st->peak_host_bytes_per_node) : "-",
               k->reason[0] ? k->reason : "");
    }
    if (d->ncands) {
        rt_html(&t, h, "candidates");
        rt_md(&t, m);
    }
    rt_release(&t);
    if (s->front_chart) {
        char stem[240], cap[300];
        snprintf(stem, sizeof stem, "frontier-%s", s->stem);
        snprintf(cap, sizeof cap,
                 "%s: tokens/s per GPU against peak GPU and host memory, with "
                 "the frontier",
                 s->run->scenario);
        figure(c, h, m, stem, s->front_drawn, cap);
    }
}

static void section_validation(const struct ctx *c, const char *note,
                               struct zs_rbuf *h, struct zs_rbuf *m);

static const char g_css[] =
    "body{font-family:system-ui,-apple-system,'Segoe "
    "UI',Helvetica,Arial,sans-serif;"
    "margin:1.5em auto;max-width:1250px;padding:0 "
    "1em;color:#1d1d1f;line-height:1.4}\n"
    "h1{margin-bottom:0.2em}h2{border-bottom:1px solid "
    "#ddd;padding-bottom:0.2em;margin-top:1.6em}\n"
    "table{border-collapse:collapse;margin:0.8em 0;font-size:0.86em}\n"
    "th,td{border:1px solid #d0d0d0;padding:0.25em 0.5em;vertical-align:top}\n"
    "th{background:#f2f2f2}.r{text-align:right;white-space:nowrap}.l{text-"
    "align:left}\n"
    "td.fits{color:#11772d;font-weight:600;white-space:nowrap}"
    "td.oom{color:#b00020;font-weight:600;white-space:nowrap}\n"
    "table.summary td:first-child,table.summary "
    "td:last-child{white-space:nowrap}\n"
    "div.wide{overflow-x:auto}\n"
    "figure{margin:0.8em 0}figure img{max-width:100%;border:1px solid "
    "#e4e4e4}\n"
    "figcaption{font-size:0.85em;color:#555}\n"
    ".note{color:#6b4700;background:#fff6e0;padding:0.4em "
    "0.8em;border-left:4px solid #e0a800}\n"
    "code{font-size:0.88em;background:#f5f5f5;padding:0 "
    "0.2em;word-break:break-all}\n";

/* The HTML head, the title and the line that says what the report holds. */
static void doc_head(const struct ctx *c, struct zs_rbuf *h, struct zs_rbuf *m)
{
    char line[600], when[48];
    int64_t newest = 0;

    for (size_t i = 0; i < c->n; i++)
        if (c->sc[i].run->unix_time > newest)
            newest = c->sc[i].run->unix_time;
    zs_rbuf_puts(h, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
                    "charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, "
                    "initial-scale=1\">\n"
                    "<title>zsim report: ");
    zs_rbuf_escape(h, c->dbname);
    zs_rbuf_printf(h, "</title>\n<style>\n%s</style>\n</head>\n<body>\n",
                   g_css);
    heading(h, m, 1, NULL, "zsim report");
    snprintf(
        line, sizeof line,
        "%zu scenario%s, the latest run of each, from the run store %s%s%s.",
        c->n, c->n == 1 ? "" : "s", c->dbname, c->n ? "; newest record " : "",
        c->n ? fmt_time(when, sizeof when, newest) : "");
    para(h, m, line);
}

/* The summary table (HTML and Markdown; summary.csv into csv) and the
 * breakdown chart. */
static int doc_summary(const struct ctx *c, struct zs_rbuf *h,
                       struct zs_rbuf *m, struct zs_rbuf *csv,
                       struct zs_err *err)
{
    struct rtable t;
    int rc = 0;

    heading(h, m, 2, "summary", "Summary");
    summary_table(c, &t);
    rt_html(&t, h, "summary");
    rt_md(&t, m);
    summary_csv(c, csv);
    if (t.failed)
        rc = zs_err_set(err, ZS_ENOMEM, "out of memory writing the report");
    rt_release(&t);
    if (c->bd_chart) {
        heading(h, m, 2, "breakdown", "Step time breakdown");
        figure(c, h, m, "breakdown", c->bd_drawn,
               "Steady step time by component (compute, exposed collective, "
               "exposed PCIe, optimizer, other)");
    }
    return rc;
}

/* One scenario's section: its run, command and configuration, then the
 * plan's or the simulation's tables and charts. */
static void doc_scenario(const struct ctx *c, const struct scen *s,
                         struct zs_rbuf *h, struct zs_rbuf *m)
{
    char id[230], line[600], when[48];

    snprintf(id, sizeof id, "s-%s", s->stem);
    heading(h, m, 3, id, s->run->scenario);
    snprintf(line, sizeof line,
             "%s of %s on %s: run %lld, zsim %s%s%s%s, recorded %s.",
             s->doc.kind == ZS_RDOC_PLAN ? "Plan" : "Simulation",
             s->doc.model[0] ? s->doc.model : "?",
             s->doc.hardware[0] ? s->doc.hardware : "?", (long long)s->run->id,
             s->run->version, s->run->git_commit[0] ? " (commit " : "",
             s->run->git_commit, s->run->git_commit[0] ? ")" : "",
             fmt_time(when, sizeof when, s->run->unix_time));
    para(h, m, line);
    if (s->run->argv_joined[0])
        code_line(h, m, "Command", s->run->argv_joined);
    if (s->doc.config_summary[0])
        code_line(h, m, "Configuration", s->doc.config_summary);
    else if (s->doc.config_json) {
        char cfg[600];
        code_line(h, m, "Configuration",
                  config_text(cfg, sizeof cfg, s->doc.config_json));
    }
    if (s->doc.kind == ZS_RDOC_PLAN)
        section_plan(c, s, h, m);
    else
        section_simulate(c, s, h, m);
}

/* Writes summary.csv and the formats asked for, each atomically. */
static int doc_write(const struct ctx *c, const struct zs_rbuf *h,
                     const struct zs_rbuf *m, const struct zs_rbuf *csv,
                     struct zs_err *err)
{
    int rc;
    if (h->failed || m->failed || csv->failed)
        return zs_err_set(err, ZS_ENOMEM, "out of memory writing the report");
    rc = zs_rbuf_write_atomic(csv, c->o->out_dir, "summary.csv", err);
    if (!rc && (c->o->formats & ZS_REPORT_MD))
        rc = zs_rbuf_write_atomic(m, c->o->out_dir, "report.md", err);
    if (!rc && (c->o->formats & ZS_REPORT_HTML))
        rc = zs_rbuf_write_atomic(h, c->o->out_dir, "index.html", err);
    return rc;
}

static int write_docs(struct ctx *c, const char *validation, struct zs_err *err)
{
    struct zs_rbuf h, m, csv;
    int rc;

    zs_rbuf_init(&h);
    zs_rbuf_init(&m);
    zs_rbuf_init(&csv);
    doc_head(c, &h, &m);
    rc = doc_summary(c, &h, &m, &csv, err);
    heading(&h, &m, 2, "scenarios", "Scenarios");
    for (size_t i = 0; i < c->n; i++)
        doc_scenario(c, &c->sc[i], &h, &m);
    heading(&h, &m, 2, "validation", "Predicted vs measured");
    section_validation(c, validation, &h, &m);
    zs_rbuf_puts(&h, "</body>\n</html>\n");
    if (!rc)
        rc = doc_write(c, &h, &m, &csv, err);
    zs_rbuf_release(&h);
    zs_rbuf_release(&m);
    zs_rbuf_release(&csv);
    return rc;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(((const struct vfile *)a)->name,
                  ((const struct vfile *)b)->name);
}

/* Reads every NAME.measured.json of the validation folder (sorted) and
 * compares it; a missing folder is no error (nothing measured yet). */
static int read_validation(struct ctx *c, char *note, size_t cap,
                           struct zs_err *err)
{
    const char *dir =
        c->o->validation_dir ? c->o->validation_dir : "validation";
    DIR *d = opendir(dir);
    struct dirent *de;
    size_t vcap = 0;
    int rc = 0;

    note[0] = '\0';
    if (!d) {
        snprintf(note, cap,
                 "No measurements: there is no folder %s/ of "
                 "NAME.measured.json files "
                 "(see 'zsim validate --help').",
                 dir);
        return 0;
    }
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' ||
            !zs_str_endswith(de->d_name, ".measured.json") ||
            strlen(de->d_name) >= sizeof c->vf[0].name)
            continue;
        if (zs_grow((void **)&c->vf, &vcap, c->nvf + 1, sizeof *c->vf)) {
            rc = zs_err_set(err, ZS_ENOMEM, "out of memory reading '%s'", dir);
            break;
        }
        memset(&c->vf[c->nvf], 0, sizeof c->vf[c->nvf]);
        zs_strlcpy(c->vf[c->nvf].name, de->d_name, sizeof c->vf[c->nvf].name);
        c->nvf++;
    }
    closedir(d);
    if (rc)
        return rc;
    if (c->nvf)
        qsort(c->vf, c->nvf, sizeof *c->vf, cmp_name);
    for (size_t i = 0; i < c->nvf; i++) {
        struct zs_measured m;
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", dir, c->vf[i].name);
        zs_measured_init(&m);
        if ((rc = zs_measured_read(path, &m, err)))
            return rc;
        c->vf[i].env = m.env;
        c->vf[i].header = m.header;
        zs_validation_compute(&m, MEM_TARGET_PCT, TIME_TARGET_PCT, &c->vf[i].v);
        zs_measured_release(&m);
    }
    if (c->nvf == 0)
        snprintf(note, cap,
                 "No measurements: %s/ has no NAME.measured.json files.", dir);
    return 0;
}

/* The gated quantities, in chart column order. */
static const char *const g_vkeys[] = {"peak_device_allocated_bytes",
                                      "peak_device_reserved_bytes",
                                      "peak_host_bytes", "step_time_ns"};

static const struct zs_vquant *vq(const struct zs_validation *v,
                                  const char *key)
{
    for (int i = 0; i < v->nq; i++)
        if (strcmp(v->q[i].key, key) == 0)
            return &v->q[i];
    return NULL;
}

static int chart_validation(struct ctx *c, struct zs_err *err)
{
    struct zs_rbuf gp, dat;
    size_t n = 0;
    int rc;

    zs_rbuf_init(&gp);
    zs_rbuf_init(&dat);
    zs_rbuf_puts(&dat, "# zsim report: prediction error (predicted - measured) "
                       "/ measured in %, per measured file\n"
                       "# file peak_device_allocated peak_device_reserved "
                       "peak_host step_time ('?' = not measured)\n");
    for (size_t i = 0; i < c->nvf; i++) {
        int any = 0;
        char label[300];
        snprintf(label, sizeof label, "%s", c->vf[i].name);
        label[strlen(label) - strlen(".measured.json")] = '\0';
        zs_rbuf_json_str(&dat, label);
        for (size_t k = 0; k < sizeof g_vkeys / sizeof g_vkeys[0]; k++) {
            const struct zs_vquant *q = vq(&c->vf[i].v, g_vkeys[k]);
            if (q && isfinite(q->err_pct)) {
                zs_rbuf_printf(&dat, " %.4f", q->err_pct);
                any = 1;
            } else {
                zs_rbuf_puts(&dat, " ?");
            }
        }
        zs_rbuf_puts(&dat, "\n");
        n += (size_t)any;
    }
    if (n == 0) {
        rc = 0;
        goto out;
    }
    zs_gnuplot_begin(&gp,
                     "prediction error against measurements (validation/)");
    zs_rbuf_printf(
        &gp,
        "set datafile missing \"?\"\n"
        "set style data histograms\n"
        "set style histogram clustered gap 1\n"
        "set style fill solid 0.85 border -1\n"
        "set key outside right top vertical\n"
        "set ylabel \"error: (predicted - measured) / measured (%%)\"\n"
        "set xtics rotate by -25 nomirror\n"
        "set grid noxtics ytics\n"
        "set xzeroaxis lt -1\n"
        "set title \"predicted vs measured (targets: memory within %.0f %%, "
        "step time within %.0f %%)\"\n",
        MEM_TARGET_PCT, TIME_TARGET_PCT);
    for (int svg = 0; svg < 2; svg++) {
        zs_gnuplot_output(&gp, "validation", svg, 960, 480);
        zs_rbuf_printf(
            &gp,
            "plot \"validation.dat\" using 2:xtic(1) lc rgb \"#1f77b4\" title "
            "\"peak device allocated\", \\\n"
            "     \"\" using 3 lc rgb \"#6baed6\" title \"peak device "
            "reserved\", \\\n"
            "     \"\" using 4 lc rgb \"#d62728\" title \"peak host\", \\\n"
            "     \"\" using 5 lc rgb \"#2ca02c\" title \"step time\", \\\n"
            "     %.0f with lines dt 2 lc rgb \"#888888\" title \"memory "
            "target\", \\\n"
            "     -%.0f with lines dt 2 lc rgb \"#888888\" notitle, \\\n"
            "     %.0f with lines dt 3 lc rgb \"#2ca02c\" title \"time "
            "target\", \\\n"
            "     -%.0f with lines dt 3 lc rgb \"#2ca02c\" notitle\n",
            MEM_TARGET_PCT, MEM_TARGET_PCT, TIME_TARGET_PCT, TIME_TARGET_PCT);
        zs_gnuplot_end_output(&gp);
    }
    return finish_chart(c, "validation", &gp, &dat, &c->val_chart,
                        &c->val_drawn, err);
out:
    zs_rbuf_release(&gp);
    zs_rbuf_release(&dat);
    return rc;
}

static void fmt_vq(char *buf, size_t cap, int unit, double v)
{
    if (v < 0)
        snprintf(buf, cap, "-");
    else if (unit == 0)
        zs_fmt_bytes(buf, cap, (int64_t)v);
    else if (unit == 1)
        zs_fmt_seconds(buf, cap, v / 1e9);
    else if (unit == 2)
        snprintf(buf, cap, "%.1f GB/s", v / 1e9);
    else
        snprintf(buf, cap, "%.1f TFLOP/s", v / 1e12);
}

static void section_validation(const struct ctx *c, const char *note,
                               struct zs_rbuf *h, struct zs_rbuf *m)
{
    struct rtable t;
    if (note[0]) {
        para(h, m, note);
        return;
    }
    para(h, m,
         "zsim's predictions for the schedules run on real GPUs, against what "
         "was "
         "measured. Error = (predicted - measured) / measured; targets (DESIGN "
         "§6): "
         "peak memory within 5 %, step time within 10 %.");
    rt_init(&t, 8, "lllrrrrl");
    rt_row(&t, "file\tmeasured "
               "on\tquantity\tpredicted\tmeasured\terror\ttarget\tstatus");
    for (size_t i = 0; i < c->nvf; i++) {
        const struct vfile *f = &c->vf[i];
        char on[200];
        snprintf(on, sizeof on, "%s%s%s",
                 f->env.gpu[0] ? f->env.gpu : f->header.gpu,
                 f->env.date[0] ? ", " : "", f->env.date);
        for (int k = 0; k < f->v.nq; k++) {
            const struct zs_vquant *q = &f->v.q[k];
            char p[32], x[32], e[32], tg[32];
            fmt_vq(p, sizeof p, q->unit, q->pred);
            fmt_vq(x, sizeof x, q->unit, q->meas);
            fmt_f(e, sizeof e, "%+.1f%%", q->err_pct);
            if (q->limit_pct > 0)
                snprintf(tg, sizeof tg, "%.0f%%", q->limit_pct);
            else
                snprintf(tg, sizeof tg, "-");
            rt_row(&t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", k == 0 ? f->name : "",
                   k == 0 ? on : "", q->label, p, x, e, tg,
                   !isfinite(q->err_pct) ? "n/a"
                   : q->limit_pct <= 0   ? "-"
                   : q->ok               ? "ok"
                                         : "OUTSIDE");
        }
    }
    rt_html(&t, h, "validation");
    rt_md(&t, m);
    rt_release(&t);
    if (c->val_chart)
        figure(c, h, m, "validation", c->val_drawn,
               "Prediction error per measured file (peak device allocated and "
               "reserved, peak host, step time)");
}

int zs_report_render(zs_store *st, const struct zs_report_opts *o,
                     struct zs_report_stats *s, struct zs_err *err)
{
    struct zs_run_list runs = {NULL, 0};
    struct ctx c;
    char note[400];
    const char *slash;
    int rc;

    memset(s, 0, sizeof *s);
    memset(&c, 0, sizeof c);
    c.o = o;
    c.s = s;
    slash = strrchr(zs_store_path(st), '/');
    c.dbname = slash ? slash + 1 : zs_store_path(st);
    if ((rc = zs_store_latest(st, &runs, err)))
        return rc;
    if (runs.n && !(c.sc = zs_calloc(runs.n, sizeof *c.sc))) {
        rc = zs_err_set(err, ZS_ENOMEM, "out of memory reading runs");
        goto out;
    }
    for (size_t i = 0; i < runs.n; i++) {
        struct scen *sc = &c.sc[i];
        char name[64];
        sc->run = &runs.runs[i];
        snprintf(name, sizeof name, "stored run %lld", (long long)sc->run->id);
        if ((rc = zs_rdoc_parse(name, sc->run->doc, sc->run->doc_len, &sc->doc,
                                err))) {
            zs_err_prefix(err, "in run store '%s'", zs_store_path(st));
            goto out;
        }
        c.n++;
        /* Unique file stems: names that sanitise alike are numbered. */
        zs_file_stem(sc->run->scenario, sc->stem, 200);
        for (size_t j = 0, k = 2; j < i; j++)
            if (strcmp(c.sc[j].stem, sc->stem) == 0) {
                char base[200];
                zs_file_stem(sc->run->scenario, base, sizeof base);
                snprintf(sc->stem, sizeof sc->stem, "%s-%zu", base, k++);
                j = (size_t)-1;
            }
        {
            const struct zs_rstep *ms = main_step(sc);
            sc->bd_step = ms && ms->present && ms->has_breakdown ? ms : NULL;
        }
    }
    s->nscenarios = c.n;
    if ((rc = zs_mkdir_p(o->out_dir, err)))
        goto out;
    if (o->draw_charts) {
        c.have_gnuplot = zs_gnuplot_find(c.gnuplot, sizeof c.gnuplot) == 0;
        s->gnuplot_missing = !c.have_gnuplot;
    }
    if ((rc = chart_breakdown(&c, err)))
        goto out;
    for (size_t i = 0; i < c.n; i++) {
        rc = c.sc[i].doc.kind == ZS_RDOC_PLAN
                 ? chart_frontier(&c, &c.sc[i], err)
                 : chart_memory(&c, &c.sc[i], err);
        if (rc)
            goto out;
    }
    if ((rc = read_validation(&c, note, sizeof note, err)) ||
        (rc = chart_validation(&c, err)))
        goto out;
    zs_strlcpy(s->validation_note, note, sizeof s->validation_note);
    s->nmeasured = c.nvf;
    rc = write_docs(&c, note, err);
out:
    zs_free(c.vf);
    for (size_t i = 0; i < c.n; i++)
        zs_rdoc_release(&c.sc[i].doc);
    zs_free(c.sc);
    zs_run_list_release(&runs);
    return rc;
}
