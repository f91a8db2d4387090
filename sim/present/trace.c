/*
 * trace.c — the Chrome trace-event JSON (opens in Perfetto or
 * chrome://tracing) and the memory timeline CSV of the last engine run.
 *
 * Trace: one track ("thread") per queue — host thread and each GPU stream —
 * with a complete event per task that takes time; flows appear a second time
 * on a track per link they cross; counters for the GPU pool (allocated,
 * reserved) and the host pool.  Times are microseconds as the format wants.
 * Both files are written atomically (util/afile.h).
 */
#include "present/simout.h"
#include "sched/sched.h"
#include "util/afile.h"
#include "util/units.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void esc(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        if ((unsigned char)*s >= 0x20)
            fputc(*s, f);
    }
}

/* Names of the tracks: pid 1 has a thread per queue, pid 2 one per link. */
static void trace_tracks(FILE *f, zs_sim *sim)
{
    int nq = zs_sim_nqueues(sim), nl = zs_sim_nlinks(sim);
    for (int q = 0; q < nq; q++) {
        fprintf(f,
                "%s{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":%d,"
                "\"args\":{\"name\":\"",
                q ? ",\n" : "", q);
        esc(f, zs_sim_queue_name(sim, q));
        fputs("\"}}", f);
    }
    for (int l = 0; l < nl; l++) {
        fprintf(f,
                ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":2,\"tid\":%"
                "d,\"args\":{\"name\":\"link: ",
                l);
        esc(f, zs_sim_link_name(sim, l));
        fputs("\"}}", f);
    }
    fputs(",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{"
          "\"name\":\"rank 0 (queues)\"}}",
          f);
    fputs(",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":2,\"args\":{"
          "\"name\":\"links\"}}",
          f);
}

/* A complete event ("X") of task r on track tid of process pid, without
 * its closing (the caller adds category and args). */
static void trace_span(FILE *f, int pid, int tid, const struct zs_task_rec *r)
{
    fprintf(f,
            ",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%."
            "3f,\"name\":\"",
            pid, tid, (double)r->start_ns / 1e3,
            (double)(r->end_ns - r->start_ns) / 1e3);
    esc(f, r->name);
}

/* Every task that takes time, on its queue's track. */
static void trace_tasks(FILE *f, zs_sim *sim)
{
    int32_t n = zs_sim_ntasks(sim);
    for (int32_t i = 0; i < n; i++) {
        const struct zs_task_rec *r = zs_sim_task(sim, i);
        if (r->start_ns < 0 || r->end_ns <= r->start_ns)
            continue;
        trace_span(f, 1, r->queue, r);
        fprintf(f, "\",\"cat\":\"%s\",\"args\":{\"task\":%d,\"tag\":%d}}",
                zs_cls_name(r->cls), i, r->tag);
    }
}

/* The link a flow loads most: PCIe copies on their direction, collectives
 * on the fabric, CPU passes on the host memory bus (link names as
 * simulate.c creates them); -1 when there is none. */
static int flow_link(zs_sim *sim, const struct zs_task_rec *r)
{
    const char *want;
    int link = -1, nl = zs_sim_nlinks(sim);
    if (r->cls == ZS_CLS_PCIE)
        want = r->name && strstr(r->name, "D2H") ? "PCIe D2H" : "PCIe H2D";
    else if (r->cls == ZS_CLS_COLL)
        want = "collective fabric";
    else
        want = "host memory bus";
    for (int l = 0; l < nl; l++)
        if (!strncmp(zs_sim_link_name(sim, l), want, strlen(want)))
            link = l;
    return link;
}

/* Flows again, on the track of the link they load most. */
static void trace_flows(FILE *f, zs_sim *sim)
{
    int32_t n = zs_sim_ntasks(sim);
    for (int32_t i = 0; i < n; i++) {
        const struct zs_task_rec *r = zs_sim_task(sim, i);
        int link;
        if (r->kind != ZS_TASK_FLOW || r->start_ns < 0 ||
            r->end_ns <= r->start_ns)
            continue;
        link = flow_link(sim, r);
        if (link < 0)
            continue;
        trace_span(f, 2, link, r);
        fprintf(f, "\",\"cat\":\"%s\"}", zs_cls_name(r->cls));
    }
}

/* Counters: the GPU pool (allocated, reserved) and the host pool of rank 0,
 * in GiB. */
static void trace_counters(FILE *f, zs_sim *sim)
{
    int64_t nev;
    const struct zs_mem_event *log = zs_sim_pool_log(sim, 0, &nev);
    for (int64_t i = 0; i < nev; i++)
        fprintf(f,
                ",\n{\"ph\":\"C\",\"pid\":1,\"name\":\"GPU memory "
                "(GiB)\",\"ts\":%.3f,\"args\":{\"allocated\":%.4f,"
                "\"reserved\":%.4f}}",
                (double)log[i].t_ns / 1e3, (double)log[i].allocated / ZS_GiB,
                (double)log[i].reserved / ZS_GiB);
    log = zs_sim_pool_log(sim, 1, &nev);
    for (int64_t i = 0; i < nev; i++)
        fprintf(f,
                ",\n{\"ph\":\"C\",\"pid\":1,\"name\":\"host memory, rank "
                "(GiB)\",\"ts\":%.3f,\"args\":{\"reserved\":%.4f}}",
                (double)log[i].t_ns / 1e3, (double)log[i].reserved / ZS_GiB);
}

int zs_write_trace(zs_sim *sim, const char *path, struct zs_err *err)
{
    struct zs_afile a;
    int rc = zs_afile_open(&a, NULL, path, err);
    if (rc)
        return rc;
    fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", a.f);
    trace_tracks(a.f, sim);
    trace_tasks(a.f, sim);
    trace_flows(a.f, sim);
    trace_counters(a.f, sim);
    fputs("\n]}\n", a.f);
    return zs_afile_commit(&a, err);
}

int zs_write_timeline(zs_sim *sim, int gpu_pool, int host_pool, int host_scale,
                      const char *path, struct zs_err *err)
{
    struct zs_afile a;
    FILE *f;
    int64_t ng, nh, i = 0, j = 0, ga = 0, gr = 0, hr = 0;
    const struct zs_mem_event *g = zs_sim_pool_log(sim, gpu_pool, &ng);
    const struct zs_mem_event *h = zs_sim_pool_log(sim, host_pool, &nh);
    int rc = zs_afile_open(&a, NULL, path, err);
    if (rc)
        return rc;
    f = a.f;
    fputs("t_s,gpu_allocated_bytes,gpu_reserved_bytes,host_bytes_per_node\n",
          f);
    /* merge the two logs by time; one row per event */
    while (i < ng || j < nh) {
        int64_t t;
        if (j >= nh || (i < ng && g[i].t_ns <= h[j].t_ns)) {
            t = g[i].t_ns;
            ga = g[i].allocated;
            gr = g[i].reserved;
            i++;
        } else {
            t = h[j].t_ns;
            hr = h[j].reserved * host_scale;
            j++;
        }
        fprintf(f, "%.9f,%lld,%lld,%lld\n", (double)t / 1e9, (long long)ga,
                (long long)gr, (long long)hr);
    }
    return zs_afile_commit(&a, err);
}
