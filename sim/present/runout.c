/*
 * runout.c — see runout.h.  Figures are those of sim/run/run.c; this file
 * only words, tabulates and draws them.
 */
#include "present/runout.h"
#include "present/emit.h"
#include "store/gnuplot.h"
#include "store/report_int.h"
#include "util/alloc.h"
#include "util/table.h"
#include "util/units.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int zs_runout_compose(struct zs_runout *ro, const struct zs_setup *su,
                      const struct zs_sim_result *res, zs_sim *sim,
                      struct zs_err *err)
{
    memset(ro, 0, sizeof *ro);
    ro->su = su;
    ro->res = res;
    zs_run_levels_from_sim(sim, res, &ro->lv);
    return zs_run_compose(su, res, &ro->lv, &ro->run, err);
}

/* "epoch 2, step 1137" / "before step 1" */
static void where(char *buf, size_t cap, int64_t epoch, int64_t step)
{
    if (step <= 0)
        snprintf(buf, cap, "before step 1");
    else
        snprintf(buf, cap, "epoch %lld, step %lld", (long long)epoch,
                 (long long)step);
}

void zs_runout_verdict(const struct zs_runout *ro, char *buf, size_t cap)
{
    const struct zs_run *r = &ro->run;
    char w[64], a[32], b[32], c[32];
    if (r->oom.where != ZS_OOM_NONE) {
        where(w, sizeof w, r->oom.epoch, r->oom.step);
        snprintf(
            buf, cap, "%s OOM %s%s (%s): needs %s of %s%s",
            r->oom.where == ZS_OOM_GPU ? "GPU" : "host",
            r->oom.step > 0 ? "at " : "", w, zs_run_phase_name(r->oom.phase),
            zs_fmt_bytes(a, sizeof a, r->oom.needed_bytes),
            zs_fmt_bytes(b, sizeof b, r->oom.available_bytes),
            r->oom.where == ZS_OOM_GPU ? " per GPU" : " host RAM per node");
        return;
    }
    where(w, sizeof w, r->peak_epoch, r->peak_step);
    snprintf(
        buf, cap,
        "fits: worst moment %s %s%s, %s of %s host RAM per node; headroom %s",
        zs_run_phase_name(r->peak_phase), r->peak_step > 0 ? "at " : "", w,
        zs_fmt_bytes(a, sizeof a, r->peak_host_node),
        zs_fmt_bytes(b, sizeof b, r->host_capacity_node),
        zs_fmt_bytes(c, sizeof c, r->host_capacity_node - r->peak_host_node));
}

static void money(char *buf, size_t cap, double v)
{
    snprintf(buf, cap, "%.2f", v);
}

/* What --max-steps cuts, when it does. */
static void max_steps_line(const struct zs_run *r, const struct zs_cfg *c,
                           FILE *out)
{
    int64_t e = (r->steps_total - 1) / r->steps_per_epoch + 1;
    if (r->steps_total < r->steps_per_epoch)
        fprintf(out,
                "  --max-steps %lld ends the run before one epoch: %lld of "
                "%lld steps of "
                "epoch 1 (%.1f%% of the data; max_iters vs max_epochs, "
                "xtuner #589)\n",
                (long long)c->max_steps, (long long)r->steps_total,
                (long long)r->steps_per_epoch,
                100.0 * (double)r->steps_total / (double)r->steps_per_epoch);
    else
        fprintf(out, "  --max-steps %lld ends the run in epoch %lld of %lld\n",
                (long long)c->max_steps, (long long)e, (long long)c->epochs);
}

/* Epochs and steps, load, saves, evaluations, workers and the leak. */
static void run_summary(const struct zs_run *r, const struct zs_cfg *c,
                        FILE *out)
{
    fprintf(out, "\nwhole run\n");
    fprintf(out,
            "  %lld epoch%s x %lld optimizer steps = %lld steps (%lld samples; "
            "%lld per step = "
            "micro %lld x data-parallel %lld x accumulation %lld; drop_last "
            "drops %lld per "
            "epoch)\n",
            (long long)c->epochs, c->epochs == 1 ? "" : "s",
            (long long)r->steps_per_epoch,
            (long long)(r->steps_per_epoch * c->epochs),
            (long long)c->dataset_samples, (long long)r->samples_per_step,
            (long long)c->micro_batch, (long long)c->dp, (long long)c->accum,
            (long long)r->dropped_samples);
    if (r->max_steps_cut)
        max_steps_line(r, c, out);
    fprintf(out,
            "  load: %s%s; saves: %lld; evaluations: %lld; dataloader workers: "
            "%lld per rank%s\n",
            c->zero_init == ZS_NO ? "each local rank materialises the model in "
                                  : "zero.Init",
            c->zero_init == ZS_NO
                ? (c->load_dtype == ZS_LOAD_BF16 ? "bf16" : "fp32")
                : "",
            (long long)r->nsaves, (long long)r->nevals,
            (long long)c->dataloader_workers,
            c->dataloader_workers
                ? (c->persistent_workers ? " (persistent)"
                                         : " (re-forked each epoch)")
                : "");
    fprintf(out, "  leak: %s (%s)\n\n", r->leak.name,
            r->leak.source ? r->leak.source : "-");
}

/* One row per phase that happened.  -1 when out of memory. */
static int phase_table(const struct zs_run *r, FILE *out)
{
    struct zs_table *t = zs_emit_table(
        6, "lrrlrr", "phase\tcount\tpeak host/node\tat\tGPU alloc/rank\ttime");
    char a[32], b[32], d[32], w[64];
    if (!t)
        return -1;
    for (int i = 0; i < ZS_RP_COUNT; i++) {
        const struct zs_run_row *row = &r->row[i];
        if (!row->count)
            continue;
        where(w, sizeof w, row->epoch, row->step);
        zs_table_rowf(t, "%s\t%lld\t%s\t%s\t%s\t%s", zs_run_phase_name(i),
                      (long long)row->count,
                      zs_fmt_bytes(a, sizeof a, row->host_node),
                      i <= ZS_RP_INIT ? "before step 1" : w,
                      zs_fmt_bytes(b, sizeof b, row->gpu_rank),
                      zs_fmt_seconds(d, sizeof d, row->time_s));
    }
    zs_table_print(t, out, 2);
    zs_table_free(t);
    fprintf(out,
            "  host figures are rank 0's node (%lld ranks; it gathers the "
            "16-bit weights "
            "at a save); RAM for training %s per node\n",
            (long long)r->procs,
            zs_fmt_bytes(a, sizeof a, r->host_capacity_node));
    return 0;
}

/* After an OOM: the worst moment and the GPU-hours lost. */
static void oom_lines(const struct zs_run *r, const struct zs_cfg *c, FILE *out)
{
    char a[32], b[32], d[32], w[64];
    where(w, sizeof w, r->peak_epoch, r->peak_step);
    fprintf(out,
            "  the whole run needs %s host RAM per node at its worst "
            "moment (%s, %s)\n",
            zs_fmt_bytes(a, sizeof a, r->peak_host_node),
            zs_run_phase_name(r->peak_phase), w);
    fprintf(out, "  it fails after %s: %.1f GPU-hours lost",
            zs_fmt_seconds(b, sizeof b, r->oom.after_s),
            r->oom.after_s * (double)r->world / 3600.0);
    if (c->gpu_hour_price > 0) {
        money(d, sizeof d,
              r->oom.after_s * (double)r->world / 3600.0 * c->gpu_hour_price);
        fprintf(out, " (%s)", d);
    }
    fputc('\n', out);
}

void zs_runout_print(const struct zs_runout *ro, FILE *out)
{
    const struct zs_run *r = &ro->run;
    const struct zs_cfg *c = ro->su->cfg;
    char buf[512], a[32], d[32];

    run_summary(r, c, out);
    if (phase_table(r, out))
        return;
    zs_runout_verdict(ro, buf, sizeof buf);
    fprintf(out, "\nrun verdict: %s\n", buf);
    if (r->oom.where != ZS_OOM_NONE)
        oom_lines(r, c, out);
    fprintf(out, "  wall time %s, %.1f GPU-hours on %lld GPUs",
            zs_fmt_seconds(a, sizeof a, r->wall_s), r->gpu_hours,
            (long long)r->world);
    if (c->gpu_hour_price > 0) {
        money(d, sizeof d, r->cost);
        fprintf(out, ", cost %s at %g per GPU-hour", d, c->gpu_hour_price);
    }
    fputc('\n', out);
}

/* "host_oom" and "gpu_oom": the failing moment, or null. */
static void json_oom(cJSON *o, const struct zs_run *r)
{
    const char *phase = zs_run_phase_name(r->oom.phase);
    const struct zs_emit_field host[] = {
        ZS_JNUM("epoch", r->oom.epoch),
        ZS_JNUM("step", r->oom.step),
        ZS_JNUM("step_in_epoch", r->oom.step_in_epoch),
        ZS_JSTR("phase", phase),
        ZS_JNUM("needed_bytes", r->oom.needed_bytes),
        ZS_JNUM("available_bytes", r->oom.available_bytes),
        ZS_JNUM("after_s", r->oom.after_s),
    };
    const struct zs_emit_field gpu[] = {
        ZS_JNUM("epoch", r->oom.epoch),
        ZS_JNUM("step", r->oom.step),
        ZS_JSTR("phase", phase),
    };
    if (r->oom.where == ZS_OOM_HOST)
        zs_emit_fields(cJSON_AddObjectToObject(o, "host_oom"), host,
                       ZS_EMIT_COUNT(host));
    else
        cJSON_AddNullToObject(o, "host_oom");
    if (r->oom.where == ZS_OOM_GPU)
        zs_emit_fields(cJSON_AddObjectToObject(o, "gpu_oom"), gpu,
                       ZS_EMIT_COUNT(gpu));
    else
        cJSON_AddNullToObject(o, "gpu_oom");
}

/* "phases": one object per phase that happened. */
static void json_phases(cJSON *o, const struct zs_run *r)
{
    cJSON *arr = cJSON_AddArrayToObject(o, "phases");
    for (int i = 0; arr && i < ZS_RP_COUNT; i++) {
        const struct zs_run_row *row = &r->row[i];
        const struct zs_emit_field f[] = {
            ZS_JSTR("phase", zs_run_phase_name(i)),
            ZS_JNUM("count", row->count),
            ZS_JNUM("peak_host_bytes_per_node", row->host_node),
            ZS_JNUM("peak_epoch", row->epoch),
            ZS_JNUM("peak_step", row->step),
            ZS_JNUM("peak_gpu_allocated_bytes", row->gpu_rank),
            ZS_JNUM("time_s", row->time_s),
        };
        cJSON *e;
        if (!row->count)
            continue;
        e = cJSON_CreateObject();
        if (!e)
            break;
        zs_emit_fields(e, f, ZS_EMIT_COUNT(f));
        cJSON_AddItemToArray(arr, e);
    }
}

void *zs_runout_json(const struct zs_runout *ro)
{
    const struct zs_run *r = &ro->run;
    const struct zs_cfg *c = ro->su->cfg;
    cJSON *o = cJSON_CreateObject();
    char buf[512];
    const struct zs_emit_field steps[] = {
        ZS_JNUM("epochs", c->epochs),
        ZS_JNUM("samples_per_step", r->samples_per_step),
        ZS_JNUM("steps_per_epoch", r->steps_per_epoch),
        ZS_JNUM("dropped_samples_per_epoch", r->dropped_samples),
        ZS_JNUM("steps_total", r->steps_total),
        ZS_JBOOL("max_steps_cut", r->max_steps_cut),
        ZS_JNUM("wall_s", r->wall_s),
        ZS_JNUM("gpu_hours", r->gpu_hours),
    };
    const struct zs_emit_field peak[] = {
        ZS_JNUM("peak_host_bytes_per_node", r->peak_host_node),
        ZS_JSTR("peak_host_phase", zs_run_phase_name(r->peak_phase)),
        ZS_JNUM("peak_host_epoch", r->peak_epoch),
        ZS_JNUM("peak_host_step", r->peak_step),
        ZS_JNUM("peak_gpu_allocated_bytes", r->peak_gpu_rank),
        ZS_JNUM("host_capacity_bytes_per_node", r->host_capacity_node),
    };
    if (!o)
        return NULL;
    zs_emit_fields(o, steps, ZS_EMIT_COUNT(steps));
    if (c->gpu_hour_price > 0)
        cJSON_AddNumberToObject(o, "cost", r->cost);
    else
        cJSON_AddNullToObject(o, "cost");
    zs_emit_fields(o, peak, ZS_EMIT_COUNT(peak));
    json_oom(o, r);
    cJSON_AddStringToObject(o, "leak", r->leak.name);
    zs_runout_verdict(ro, buf, sizeof buf);
    cJSON_AddStringToObject(o, "verdict_text", buf);
    json_phases(o, r);
    return o;
}

/* ---- timeline ---------------------------------------------------------------
 */

struct pt {
    double t_s;
    int64_t epoch, step;
    int ph;
    int64_t host, gpu;
    size_t seq; /* order added, to keep spikes in order at equal times */
};

struct pts {
    struct pt *p;
    size_t n, cap;
    int failed;
};

static void add(struct pts *v, const struct zs_runout *ro, int ph, int64_t g,
                double t_s)
{
    struct zs_run_moment m;
    const struct zs_run *r = &ro->run;
    if (v->failed)
        return;
    if (zs_grow((void **)&v->p, &v->cap, v->n + 1, sizeof *v->p)) {
        v->failed = 1;
        return;
    }
    zs_run_moment_at(ro->su, ro->res, &ro->lv, r, ph, g, &m);
    v->p[v->n].t_s = t_s < 0 ? m.t_end_s : t_s;
    v->p[v->n].epoch = g >= 1 ? (g - 1) / r->steps_per_epoch + 1 : 1;
    v->p[v->n].step = g < 0 ? 0 : g;
    v->p[v->n].ph = ph;
    v->p[v->n].host = m.host_node;
    v->p[v->n].gpu = m.gpu_rank;
    v->p[v->n].seq = v->n;
    v->n++;
}

/* A spike after step g: the step's level, the event, the step's level again
 * (all at the event's end time, so the chart draws a needle). */
static void spike(struct pts *v, const struct zs_runout *ro, int ph, int64_t g)
{
    struct zs_run_moment m;
    zs_run_moment_at(ro->su, ro->res, &ro->lv, &ro->run, ph, g, &m);
    add(v, ro, g == 1 ? ZS_RP_FIRST : ZS_RP_STEADY, g, m.t_end_s);
    add(v, ro, ph, g, -1);
    add(v, ro, g == 1 ? ZS_RP_FIRST : ZS_RP_STEADY, g, m.t_end_s);
}

static void event(struct pts *v, const struct zs_runout *ro, int64_t g)
{
    if (zs_run_is_eval(ro->su->cfg, &ro->run, g))
        spike(v, ro, ZS_RP_EVAL, g);
    if (zs_run_is_save(ro->su->cfg, &ro->run, g))
        spike(v, ro, ZS_RP_SAVE, g);
}

static int cmp_pt(const void *a, const void *b)
{
    const struct pt *x = a, *y = b;
    if (x->t_s != y->t_s)
        return x->t_s < y->t_s ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int build_points(const struct zs_runout *ro, struct pts *v)
{
    const struct zs_run *r = &ro->run;
    const struct zs_cfg *c = ro->su->cfg;
    int64_t N = r->steps_total, spe = r->steps_per_epoch;
    int64_t kept = r->epochs_run < ZS_RUNOUT_MAX_EVENTS ? r->epochs_run
                                                        : ZS_RUNOUT_MAX_EVENTS;
    int64_t budget = ZS_RUNOUT_MAX_EVENTS / (kept > 0 ? kept : 1);
    int64_t estride = r->epochs_run > ZS_RUNOUT_MAX_EVENTS
                          ? r->epochs_run / ZS_RUNOUT_MAX_EVENTS + 1
                          : 1;
    memset(v, 0, sizeof *v);
    add(v, ro, ZS_RP_LOAD, 0, 0);
    add(v, ro, ZS_RP_LOAD, 0, -1);
    add(v, ro, ZS_RP_INIT, 0, r->load_s);
    add(v, ro, ZS_RP_INIT, 0, -1);
    add(v, ro, ZS_RP_FIRST, 1, r->load_s + r->row[ZS_RP_INIT].time_s);
    add(v, ro, ZS_RP_FIRST, 1, -1);
    for (int64_t e = 1; e <= r->epochs_run && !v->failed; e++) {
        int64_t g0 = (e - 1) * spe + 1, g1 = e * spe < N ? e * spe : N;
        bool keep = (e - 1) % estride == 0 || e == r->epochs_run ||
                    e == r->peak_epoch || e == r->oom.epoch;
        if (e > 1 && keep) {
            add(v, ro, ZS_RP_EPOCH, g0, -1);
            add(v, ro, ZS_RP_STEADY, g0, -1);
        } else if (g0 + 1 <= g1 && e == 1) {
            add(v, ro, ZS_RP_STEADY, 2, -1);
        }
        /* events inside the epoch: all of them when few, else `budget`
         * of them spread evenly, plus the failing and the worst step */
        if (keep) {
            int64_t Ke = c->eval_every, Ks = c->save_every;
            int64_t n = (Ke > 0 ? g1 / Ke - (g0 - 1) / Ke : 0) +
                        (Ks > 0 ? g1 / Ks - (g0 - 1) / Ks : 0);
            int64_t last = g0 - 1;
            for (int64_t j = 0; j < (n < budget ? n : budget) && !v->failed;
                 j++) {
                int64_t g;
                if (n <= budget) {
                    int64_t ne = Ke > 0 ? (last / Ke + 1) * Ke : INT64_MAX;
                    int64_t ns = Ks > 0 ? (last / Ks + 1) * Ks : INT64_MAX;
                    g = ne < ns ? ne : ns;
                } else {
                    int64_t at =
                        g0 + (int64_t)((double)(g1 - g0) * (double)(j + 1) /
                                       (double)budget);
                    int64_t ge = Ke > 0 ? at / Ke * Ke : 0,
                            gs = Ks > 0 ? at / Ks * Ks : 0;
                    g = ge > gs ? ge : gs;
                }
                if (g <= last || g > g1)
                    continue;
                last = g;
                event(v, ro, g);
            }
            /* when thinned, the failing and the worst step are added (the
             * epoch's last step is the block below) */
            if (n > budget && r->oom.step >= g0 && r->oom.step < g1 &&
                (r->oom.phase == ZS_RP_EVAL || r->oom.phase == ZS_RP_SAVE))
                event(v, ro, r->oom.step);
            if (n > budget && r->peak_step >= g0 && r->peak_step < g1 &&
                r->peak_step != r->oom.step)
                event(v, ro, r->peak_step);
        }
        if (keep || e == 1) {
            add(v, ro, g1 == 1 ? ZS_RP_FIRST : ZS_RP_STEADY, g1, -1);
            if (zs_run_is_save(c, r, g1) &&
                !(c->save_every > 0 && g1 % c->save_every == 0))
                spike(v, ro, ZS_RP_SAVE, g1);
        }
        if (r->oom.where != ZS_OOM_NONE && e == r->oom.epoch &&
            r->oom.step >= 1 && r->oom.step > g0 && r->oom.step < g1 &&
            r->oom.phase == ZS_RP_STEADY)
            add(v, ro, ZS_RP_STEADY, r->oom.step, -1);
    }
    if (v->failed)
        return ZS_ENOMEM;
    /* time order; equal times keep the order added (a spike's three points) */
    qsort(v->p, v->n, sizeof *v->p, cmp_pt);
    return 0;
}

static void csv(struct zs_rbuf *b, const struct pts *v)
{
    zs_rbuf_puts(b, "t_s,epoch,step,phase,host_bytes_per_node,gpu_allocated_"
                    "bytes_per_rank\n");
    for (size_t i = 0; i < v->n; i++)
        zs_rbuf_printf(b, "%.3f,%lld,%lld,%s,%lld,%lld\n", v->p[i].t_s,
                       (long long)v->p[i].epoch, (long long)v->p[i].step,
                       zs_run_phase_name(v->p[i].ph), (long long)v->p[i].host,
                       (long long)v->p[i].gpu);
}

int zs_runout_write_timeline(const struct zs_runout *ro, const char *path,
                             struct zs_err *err)
{
    struct pts v;
    struct zs_rbuf b;
    int rc = build_points(ro, &v);
    if (rc) {
        zs_free(v.p);
        return zs_err_set(err, rc, "out of memory building the run timeline");
    }
    zs_rbuf_init(&b);
    csv(&b, &v);
    if (b.failed)
        rc = zs_err_set(err, ZS_ENOMEM, "out of memory writing '%s'", path);
    else
        rc = zs_write_atomic(NULL, path, zs_rbuf_str(&b), b.len, err);
    zs_rbuf_release(&b);
    zs_free(v.p);
    return rc;
}

/* Splits --plot's FILE.png into its folder (dir, "." when none) and stem
 * (the name without ".png"); the usage errors name the flag. */
static int plot_paths(const char *path, char *dir, size_t dcap, char *stem,
                      size_t scap, struct zs_err *err)
{
    const char *slash = strrchr(path, '/');
    size_t n = strlen(path);

    if (n < 5 || strcmp(path + n - 4, ".png") != 0)
        return zs_err_set(
            err, ZS_EUSAGE,
            "invalid value for '--plot': must name a .png file (got '%s')",
            path);
    if (slash) {
        size_t dl = (size_t)(slash - path);
        if (dl >= dcap || strlen(slash + 1) - 4 >= scap)
            return zs_err_set(err, ZS_EUSAGE,
                              "invalid value for '--plot': path too long");
        memcpy(dir, path, dl);
        dir[dl] = '\0';
        if (!dl)
            snprintf(dir, dcap, "/");
        snprintf(stem, scap, "%.*s", (int)(strlen(slash + 1) - 4), slash + 1);
    } else {
        if (n - 4 >= scap)
            return zs_err_set(err, ZS_EUSAGE,
                              "invalid value for '--plot': path too long");
        snprintf(dir, dcap, ".");
        snprintf(stem, scap, "%.*s", (int)(n - 4), path);
    }
    if (!stem[0] || strpbrk(stem, "\"'\\\n"))
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid value for '--plot': the file name must not "
                          "be empty or hold "
                          "quotes (got '%s')",
                          path);
    return 0;
}

/* The gnuplot script: title with the verdict, axes, the OOM point, the
 * host, capacity and GPU lines; a PNG, then the same as SVG. */
static void plot_script(struct zs_rbuf *s, const struct zs_runout *ro,
                        const char *stem, const char *dat, double unit)
{
    const struct zs_run *r = &ro->run;
    char verdict[512];

    zs_gnuplot_begin(s,
                     "zsim simulate: host and GPU memory over the whole run");
    zs_gnuplot_output(s, stem, 0, 1100, 560);
    zs_runout_verdict(ro, verdict, sizeof verdict);
    for (char *p = verdict; *p; p++)
        if (*p == '"' || *p == '\\')
            *p = '\'';
    zs_rbuf_printf(s, "set title \"%s: %s\"\n", ro->su->cfg->name, verdict);
    zs_rbuf_printf(s,
                   "set xlabel \"wall time (%s)\"\n"
                   "set ylabel \"host GiB per node (rank 0's)\"\n"
                   "set y2label \"GPU GiB allocated per rank\"\n"
                   "set ytics nomirror\nset y2tics\nset key bottom right\n"
                   "set yrange [0:*]\nset y2range [0:*]\n",
                   unit == 3600.0 ? "hours" : "minutes");
    if (r->oom.where == ZS_OOM_HOST)
        zs_rbuf_printf(
            s,
            "set label 1 \"host OOM\" at %.6f,%.4f point pt 7 ps 1.8 lc rgb "
            "\"red\" offset 1,0.5\n",
            r->oom.after_s / unit, (double)r->oom.needed_bytes / ZS_GiB);
    zs_rbuf_printf(
        s,
        "plot \"%s\" using 1:2 with lines lw 2 title \"host per node\", \\\n"
        "     %.4f with lines dt 2 lw 2 title \"host RAM for training\", \\\n"
        "     \"%s\" using 1:3 axes x1y2 with lines lw 1 title \"GPU allocated "
        "per rank\"",
        dat, (double)r->host_capacity_node / ZS_GiB, dat);
    zs_rbuf_puts(s, "\n");
    zs_gnuplot_end_output(s);
    /* SVG beside the PNG (zs_gnuplot_draw renames both) */
    zs_gnuplot_output(s, stem, 1, 1100, 560);
    zs_rbuf_puts(s, "replot\n");
    zs_gnuplot_end_output(s);
}

/* Writes the data (as dat) and the script into dir, runs gnuplot, removes both. */
static int plot_draw(const char *gp, const char *dir, const char *stem,
                     const char *dat, const struct zs_rbuf *d,
                     const struct zs_rbuf *s, struct zs_err *err)
{
    char script[300], tmp[1400];
    int rc;

    snprintf(script, sizeof script, ".%s.run.gp", stem);
    rc = zs_write_atomic(dir, dat, zs_rbuf_str(d), d->len, err);
    if (!rc)
        rc = zs_write_atomic(dir, script, zs_rbuf_str(s), s->len, err);
    if (!rc)
        rc = zs_gnuplot_draw(gp, dir, script, stem, err);
    snprintf(tmp, sizeof tmp, "%s/%s", dir, dat);
    unlink(tmp);
    snprintf(tmp, sizeof tmp, "%s/%s", dir, script);
    unlink(tmp);
    return rc;
}

int zs_runout_plot(const struct zs_runout *ro, const char *path,
                   struct zs_err *err)
{
    const struct zs_run *r = &ro->run;
    char gp[1024], dir[1024], stem[256], dat[300];
    struct pts v;
    struct zs_rbuf d, s;
    double unit = r->wall_s > 7200 ? 3600.0 : 60.0;
    int rc = plot_paths(path, dir, sizeof dir, stem, sizeof stem, err);

    if (rc)
        return rc;
    if (zs_gnuplot_find(gp, sizeof gp) != 0)
        return zs_err_set(
            err, ZS_ERUNTIME,
            "cannot draw '%s': gnuplot not found on PATH (or set ZSIM_GNUPLOT)",
            path);
    rc = build_points(ro, &v);
    if (rc) {
        zs_free(v.p);
        return zs_err_set(err, rc, "out of memory building the run timeline");
    }
    snprintf(dat, sizeof dat, ".%s.run.dat", stem);
    zs_rbuf_init(&d);
    zs_rbuf_init(&s);
    zs_rbuf_puts(&d, "# time host_GiB_per_node gpu_GiB_per_rank\n");
    for (size_t i = 0; i < v.n; i++)
        zs_rbuf_printf(&d, "%.6f %.4f %.4f\n", v.p[i].t_s / unit,
                       (double)v.p[i].host / ZS_GiB,
                       (double)v.p[i].gpu / ZS_GiB);
    plot_script(&s, ro, stem, dat, unit);
    if (d.failed || s.failed)
        rc = zs_err_set(err, ZS_ENOMEM,
                        "out of memory writing the plot of '%s'", path);
    else
        rc = plot_draw(gp, dir, stem, dat, &d, &s, err);
    zs_rbuf_release(&d);
    zs_rbuf_release(&s);
    zs_free(v.p);
    return rc;
}
