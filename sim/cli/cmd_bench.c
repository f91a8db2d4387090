/*
 * cmd_bench.c — `zsim bench`: the performance figures zsim promises, measured
 * (DESIGN §6; never a timed test).  Each figure is the median of --repeat
 * runs, wall clock (CLOCK_MONOTONIC), on this machine as it is.
 */
#include "cli/cli_setup.h"
#include "plan/plan.h"
#include "sched/sched.h"
#include "util/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
    "usage: zsim bench [--repeat N] [--json]\n"
    "\n"
    "Measures, on this machine:\n"
    "  engine       events/s of the engine on a synthetic schedule (1M tasks)\n"
    "  step 8       one steady step of Qwen2.5-72B on 8xH100 (ZeRO-3 offload, "
    "accum 8):\n"
    "               wall time to build and simulate it, events, events/s\n"
    "  step 1024    the same model on 128x8xH100 (1024 GPUs): one "
    "representative rank\n"
    "  plan         'zsim plan --model 72b --gpus 8xH100' and 'zsim plan --model\n"
    "               405b --gpus 128x8xH100 --global-batch 1024' (the search and\n"
    "               the expandable-segments note as the command runs them),\n"
    "               on 1 thread and on all threads"
    " (the CPUs online, at most 8):\n"
    "               candidates (and how many simulated whole: the others\n"
    "               stop at their GPU OOM, plan.h), the engine's events,\n"
    "               latency min and median, candidates/s and events/s at\n"
    "               the median\n"
    "Figures are medians of --repeat runs (default 5); plan latency also\n"
    "gives the minimum.\n"
    "\n"
    "examples:\n"
    "  zsim bench\n"
    "  zsim bench --repeat 3 --json\n";

static const struct zs_opt opts[] = {{"repeat", 1}, {"json", 0}};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int step_bench(const char *gpus, int repeat, double *secs,
                      int64_t *events, struct zs_err *err)
{
    struct zs_cfg cfg;
    struct zs_model m;
    struct zs_cluster cl;
    struct zs_setup su = {0};
    struct zs_sim_result res;
    double t[64];
    int rc;
    zs_cfg_defaults(&cfg);
    snprintf(cfg.model, sizeof cfg.model, "qwen2.5-72b");
    snprintf(cfg.gpus, sizeof cfg.gpus, "%s", gpus);
    cfg.offload_optimizer = ZS_OFF_CPU;
    cfg.offload_param = ZS_OFF_CPU;
    cfg.grad_accum = 8;
    rc = zs_setup_resolve(&cfg, NULL, &m, &cl, err);
    if (rc)
        return rc;
    su.model = &m;
    su.cluster = &cl;
    su.cfg = &cfg;
    su.plan_mode = true; /* the planner's simulation: first + one steady step */
    {
        zs_sim *sim = zs_sim_new();
        if (!sim)
            return zs_err_set(err, ZS_ENOMEM, "out of memory");
        for (int i = 0; i < repeat; i++) {
            double t0 = now_s();
            rc = zs_simulate(&su, sim, &res, err);
            t[i] = now_s() - t0;
            if (rc) {
                zs_sim_free(sim);
                return rc;
            }
        }
        zs_sim_free(sim);
    }
    *secs = median(t, repeat);
    *events = res.events;
    return 0;
}

/* One plan case: `zsim plan --model MODEL --gpus GPUS` as cmd_plan runs it
 * (framework any, the expandable-segments note), on `threads` threads. */
struct plan_fig {
    const char *model, *gpus;
    int64_t global_batch; /* 0: the planner's default */
    int threads;
    int n;          /* candidates */
    int nwhole;     /* of them simulated whole (plan.h nwhole) */
    int64_t events; /* events of one plan, as `zsim plan` prints them */
    int64_t events_run; /* events the engine ran for them */
    double min_s, med_s;
};

static int plan_bench(struct plan_fig *f, int repeat, struct zs_err *err)
{
    struct zs_cfg base;
    struct zs_model m;
    struct zs_cluster cl;
    struct zs_plan_opts po;
    double t[64];
    int rc;
    zs_cfg_defaults(&base);
    zs_plan_opts_defaults(&po);
    po.threads = f->threads;
    base.global_batch = f->global_batch;
    if ((rc = zs_model_resolve(f->model, &m, err)) ||
        (rc = zs_hw_resolve(f->gpus, 0, 0, &cl, err)))
        return rc;
    po.allow_nvme = zs_plan_nvme_default(&base, &cl);
    for (int i = 0; i < repeat; i++) {
        struct zs_plan p;
        double t0 = now_s();
        rc = zs_plan_run(&m, &cl, &base, &po, &p, err);
        t[i] = now_s() - t0;
        if (rc)
            return rc;
        f->n = p.n;
        f->nwhole = p.nwhole;
        f->events = p.events;
        f->events_run = p.events_run;
        zs_plan_release(&p);
    }
    f->med_s = median(t, repeat); /* sorts t */
    f->min_s = t[0];
    return 0;
}

/* Every figure of one `zsim bench`. */
struct bench_figs {
    int repeat;
    double eng_eps, s8, s1024; /* engine events/s; step seconds */
    int64_t eng_events, e8, e1024;
    struct plan_fig plan[4];
    int nplan;
};

/* The engine on a synthetic schedule, and one 72B step on 8 and on 1024
 * GPUs. */
static int bench_steps(struct bench_figs *b, struct zs_err *err)
{
    double ev_s[64];
    int rc;
    for (int i = 0; i < b->repeat; i++) {
        rc = zs_engine_bench(1000000, &ev_s[i], &b->eng_events, err);
        if (rc)
            return rc;
    }
    b->eng_eps = median(ev_s, b->repeat);
    if ((rc = step_bench("8xH100", b->repeat, &b->s8, &b->e8, err)))
        return rc;
    return step_bench("128x8xH100", b->repeat, &b->s1024, &b->e1024, err);
}

/* The two plan cases, each on one thread and on all (at most 8). */
static int bench_plans(struct bench_figs *b, struct zs_err *err)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int all = ncpu < 1 ? 1 : ncpu > 8 ? 8 : (int)ncpu;
    const char *cases[2][2] = {{"72b", "8xH100"}, {"405b", "128x8xH100"}};
    /* 1024 data-parallel ranks need a global batch of at least 1024
     * sequences (the default 64 leaves every candidate invalid) */
    const int64_t gb[2] = {0, 1024};
    int rc;
    for (int k = 0; k < 2; k++)
        for (int th = 0; th < 2; th++) {
            struct plan_fig *f = &b->plan[b->nplan++];
            f->model = cases[k][0];
            f->gpus = cases[k][1];
            f->global_batch = gb[k];
            f->threads = th ? all : 1;
            if ((rc = plan_bench(f, b->repeat, err)))
                return rc;
        }
    return 0;
}

/* One JSON document, schema zsim.bench/3. */
static void print_json(const struct bench_figs *b)
{
    printf("{\n  \"schema\": \"zsim.bench/3\",\n  \"repeat\": %d,\n  "
           "\"cpus\": %ld,\n"
           "  \"engine\": {\"events\": %lld, \"events_per_s\": %.0f},\n"
           "  \"step_72b_8xH100\": {\"seconds\": %.6f, \"events\": %lld, "
           "\"events_per_s\": %.0f},\n"
           "  \"step_72b_128x8xH100\": {\"seconds\": %.6f, \"events\": "
           "%lld, \"events_per_s\": %.0f},\n  \"plan\": [",
           b->repeat, sysconf(_SC_NPROCESSORS_ONLN),
           (long long)b->eng_events, b->eng_eps, b->s8, (long long)b->e8,
           (double)b->e8 / b->s8, b->s1024, (long long)b->e1024,
           (double)b->e1024 / b->s1024);
    for (int i = 0; i < b->nplan; i++) {
        const struct plan_fig *f = &b->plan[i];
        printf("%s\n    {\"model\": \"%s\", \"gpus\": \"%s\", "
               "\"threads\": %d, \"candidates\": %d, "
               "\"candidates_whole\": %d, \"events\": %lld, "
               "\"events_run\": %lld, "
               "\"seconds_min\": %.4f, \"seconds_median\": %.4f, "
               "\"candidates_per_s\": %.1f, \"events_per_s\": %.0f}",
               i ? "," : "", f->model, f->gpus, f->threads, f->n, f->nwhole,
               (long long)f->events, (long long)f->events_run, f->min_s,
               f->med_s, f->n / f->med_s, (double)f->events_run / f->med_s);
    }
    printf("\n  ]\n}\n");
}

/* The figures as a table, each beside its target. */
static void print_text(const struct bench_figs *b)
{
    printf("zsim bench (median of %d runs, %ld CPUs)\n\n", b->repeat,
           sysconf(_SC_NPROCESSORS_ONLN));
    printf("  engine, synthetic schedule    %lld events        %6.1f M "
           "events/s   (target >= 10)\n",
           (long long)b->eng_events, b->eng_eps / 1e6);
    printf("  72B step on 8xH100            %lld events %8.1f ms  %6.1f M "
           "events/s incl. building\n",
           (long long)b->e8, b->s8 * 1e3, (double)b->e8 / b->s8 / 1e6);
    printf("  72B step on 128x8xH100        %lld events %8.1f ms  (target < 50 "
           "ms for 1024 GPUs)\n",
           (long long)b->e1024, b->s1024 * 1e3);
    printf("\n  plan                      threads  candidates  whole  "
           "events run  latency min  median  candidates/s  events/s\n");
    for (int i = 0; i < b->nplan; i++) {
        const struct plan_fig *f = &b->plan[i];
        char lab[40];
        snprintf(lab, sizeof lab, "%s on %s", f->model, f->gpus);
        printf("  %-24s  %7d  %10d  %5d  %8.1f M  %9.3f s %6.3f s  %12.0f  "
               "%6.1f M\n",
               lab, f->threads, f->n, f->nwhole,
               (double)f->events_run / 1e6, f->min_s, f->med_s,
               f->n / f->med_s, (double)f->events_run / f->med_s / 1e6);
    }
    printf("  (target: 72b on 8xH100 in <= 0.1 s)\n");
}

static int run(int argc, char **argv, struct zs_err *err)
{
    struct zs_args a;
    struct bench_figs b = {.repeat = 5};
    long repeat = b.repeat;
    int rc = zs_args_parse(argc, argv, opts, 2, "bench", &a, err);

    if (rc)
        return rc;
    if (a.npos)
        return zs_err_set(err, ZS_EUSAGE,
                          "'bench' takes no arguments (got '%s')", a.pos[0]);
    if ((rc = zs_cli_int("repeat", zs_args_get(&a, opts, 2, "repeat"), 1, 64,
                         &repeat, err)))
        return rc;
    b.repeat = (int)repeat;
    if ((rc = bench_steps(&b, err)) || (rc = bench_plans(&b, err)))
        return rc;
    if (zs_args_get(&a, opts, 2, "json"))
        print_json(&b);
    else
        print_text(&b);
    return 0;
}

const struct zs_cmd zs_cmd_bench = {
    "bench",
    "measure engine events/s, step and plan latency on this machine",
    usage,
    run,
};
