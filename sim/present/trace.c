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

int zs_write_trace(zs_sim *sim, const char *path, struct zs_err *err)
{
    struct zs_afile a;
    FILE *f;
    int32_t n = zs_sim_ntasks(sim);
    int nq = zs_sim_nqueues(sim), nl = zs_sim_nlinks(sim);
    int first = 1;
    int rc = zs_afile_open(&a, NULL, path, err);
    if (rc)
        return rc;
    f = a.f;
    fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", f);
    for (int q = 0; q < nq; q++) {
        fprintf(f,
                "%s{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":%d,"
                "\"args\":{\"name\":\"",
                first ? "" : ",\n", q);
        esc(f, zs_sim_queue_name(sim, q));
        fputs("\"}}", f);
        first = 0;
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
    for (int32_t i = 0; i < n; i++) {
        const struct zs_task_rec *r = zs_sim_task(sim, i);
        if (r->start_ns < 0 || r->end_ns <= r->start_ns)
            continue;
        fprintf(f,
                ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"dur\":%."
                "3f,\"name\":\"",
                r->queue, (double)r->start_ns / 1e3,
                (double)(r->end_ns - r->start_ns) / 1e3);
        esc(f, r->name);
        fprintf(f, "\",\"cat\":\"%s\",\"args\":{\"task\":%d,\"tag\":%d}}",
                zs_cls_name(r->cls), i, r->tag);
    }
    /* flows again on the track of the link they load most: PCIe copies on
     * their direction, collectives on the fabric, CPU passes on the host
     * memory bus (link names as simulate.c creates them) */
    for (int32_t i = 0; i < n; i++) {
        const struct zs_task_rec *r = zs_sim_task(sim, i);
        const char *want = NULL;
        int link = -1;
        if (r->kind != ZS_TASK_FLOW || r->start_ns < 0 ||
            r->end_ns <= r->start_ns)
            continue;
        if (r->cls == ZS_CLS_PCIE)
            want = r->name && strstr(r->name, "D2H") ? "PCIe D2H" : "PCIe H2D";
        else if (r->cls == ZS_CLS_COLL)
            want = "collective fabric";
        else
            want = "host memory bus";
        for (int l = 0; l < nl; l++)
            if (!strncmp(zs_sim_link_name(sim, l), want, strlen(want)))
                link = l;
        if (link < 0)
            continue;
        fprintf(f,
                ",\n{\"ph\":\"X\",\"pid\":2,\"tid\":%d,\"ts\":%.3f,\"dur\":%."
                "3f,\"name\":\"",
                link, (double)r->start_ns / 1e3,
                (double)(r->end_ns - r->start_ns) / 1e3);
        esc(f, r->name);
        fprintf(f, "\",\"cat\":\"%s\"}", zs_cls_name(r->cls));
    }
    {
        int64_t nev;
        const struct zs_mem_event *log = zs_sim_pool_log(sim, 0, &nev);
        for (int64_t i = 0; i < nev; i++)
            fprintf(f,
                    ",\n{\"ph\":\"C\",\"pid\":1,\"name\":\"GPU memory "
                    "(GiB)\",\"ts\":%.3f,\"args\":{\"allocated\":%.4f,"
                    "\"reserved\":%.4f}}",
                    (double)log[i].t_ns / 1e3,
                    (double)log[i].allocated / ZS_GiB,
                    (double)log[i].reserved / ZS_GiB);
        log = zs_sim_pool_log(sim, 1, &nev);
        for (int64_t i = 0; i < nev; i++)
            fprintf(f,
                    ",\n{\"ph\":\"C\",\"pid\":1,\"name\":\"host memory, rank "
                    "(GiB)\",\"ts\":%.3f,\"args\":{\"reserved\":%.4f}}",
                    (double)log[i].t_ns / 1e3,
                    (double)log[i].reserved / ZS_GiB);
    }
    fputs("\n]}\n", f);
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
