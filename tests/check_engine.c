/*
 * check_engine.c — the discrete-event engine on hand-solvable schedules:
 * fluid flows (sharing, joining, caps, weights), queues, dependencies,
 * the core pool, zero-duration chains, the memory pools (PyTorch caching
 * allocator rules, pinned power-of-two rounding), live-at-peak, OOM and
 * deadlock reports, the heap against a sorted-array oracle, and the
 * allocation-failure loop.  Every expected time is worked out in a comment.
 */
#include "engine/engine.h"
#include "engine/heap.h"
#include "util/alloc.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#define MiB ((int64_t)1 << 20)
#define GiB ((int64_t)1 << 30)
#define MS 1000000LL /* ns */

static zs_sim *mk(void)
{
    zs_sim *s = zs_sim_new();
    ck_assert_ptr_nonnull(s);
    return s;
}

/* A sim with one CUDA caching pool "gpu" of capacity cap (0: none) in *p
 * and one queue "a" in *q: the allocator tests' set-up. */
static zs_sim *mk_cuda(int64_t cap, int *p, int *q)
{
    zs_sim *s = mk();
    *p = zs_sim_add_pool(s, "gpu", ZS_POOL_CUDA_CACHING, cap);
    *q = zs_sim_add_queue(s, "a");
    ck_assert_int_ge(*p, 0);
    ck_assert_int_ge(*q, 0);
    return s;
}

static int32_t sub(zs_sim *s, struct zs_task_desc d)
{
    int32_t id = zs_sim_submit(s, &d);
    ck_assert_msg(id >= 0, "submit: %s", zs_sim_errmsg(s));
    return id;
}

static int32_t delay(zs_sim *s, int q, int64_t dur, const int32_t *deps,
                     int ndeps)
{
    return sub(s, (struct zs_task_desc){.kind = ZS_TASK_DELAY,
                                        .queue = q,
                                        .dur_ns = dur,
                                        .deps = deps,
                                        .ndeps = ndeps,
                                        .name = "delay"});
}

static int32_t flow1(zs_sim *s, int q, double bytes, int link, double cap,
                     const int32_t *deps, int ndeps)
{
    return sub(s, (struct zs_task_desc){.kind = ZS_TASK_FLOW,
                                        .queue = q,
                                        .bytes = bytes,
                                        .nlinks = 1,
                                        .links = {link},
                                        .rate_cap = cap,
                                        .deps = deps,
                                        .ndeps = ndeps,
                                        .name = "flow"});
}

static int32_t alloc(zs_sim *s, int q, int pool, int64_t bytes, unsigned fl)
{
    return sub(s, (struct zs_task_desc){.kind = ZS_TASK_ALLOC,
                                        .queue = q,
                                        .pool = pool,
                                        .alloc_bytes = bytes,
                                        .alloc_flags = fl,
                                        .name = "buf"});
}

static int32_t release(zs_sim *s, int q, int32_t a)
{
    return sub(s, (struct zs_task_desc){.kind = ZS_TASK_FREE,
                                        .queue = q,
                                        .alloc_task = a,
                                        .name = "free"});
}

static void run_ok(zs_sim *s)
{
    struct zs_err err = {0, ""};
    int rc = zs_sim_run(s, &err);
    ck_assert_msg(rc == ZS_SIM_DONE, "run: %d %s", rc, err.msg);
}

#define START(s, id) (zs_sim_task(s, id)->start_ns)
#define END(s, id) (zs_sim_task(s, id)->end_ns)
#define BY(s, id) (zs_sim_task(s, id)->blocked_by)

/* ---- flows -------------------------------------------------------------- */

/* Two 1 GB flows on one 10 GB/s link get 5 GB/s each: 1e9 / 5e9 = 200 ms. */
START_TEST(test_flow_share)
{
    zs_sim *s = mk();
    int l = zs_sim_add_link(s, "pcie", 10e9);
    int q0 = zs_sim_add_queue(s, "a"), q1 = zs_sim_add_queue(s, "b");
    int32_t a = flow1(s, q0, 1e9, l, 0, NULL, 0);
    int32_t b = flow1(s, q1, 1e9, l, 0, NULL, 0);
    run_ok(s);
    ck_assert_int_eq(START(s, a), 0);
    ck_assert_int_eq(END(s, a), 200 * MS);
    ck_assert_int_eq(END(s, b), 200 * MS);
    ck_assert(zs_sim_link_bytes(s, l) == 2e9);
    ck_assert_int_eq(zs_sim_now(s), 200 * MS);
    ck_assert_int_eq(zs_sim_events(s), 4);
    zs_sim_free(s);
}
END_TEST

/* A (1 GB) starts at 0 alone at 10 GB/s; B (1 GB) joins at 50 ms.
 *   0-50 ms:   A moves 10e9 * 0.05 = 0.5 GB, 0.5 GB left.
 *   from 50:   both at 5 GB/s; A's 0.5 GB takes 100 ms -> A ends at 150 ms,
 *              by then B moved 0.5 GB.
 *   from 150:  B alone at 10 GB/s, 0.5 GB takes 50 ms -> B ends at 200 ms. */
START_TEST(test_flow_join)
{
    zs_sim *s = mk();
    int l = zs_sim_add_link(s, "pcie", 10e9);
    int q0 = zs_sim_add_queue(s, "a"), q1 = zs_sim_add_queue(s, "b");
    int32_t a = flow1(s, q0, 1e9, l, 0, NULL, 0);
    int32_t w = delay(s, q1, 50 * MS, NULL, 0);
    int32_t b = flow1(s, q1, 1e9, l, 0, NULL, 0);
    run_ok(s);
    ck_assert_int_eq(END(s, a), 150 * MS);
    ck_assert_int_eq(START(s, b), 50 * MS);
    ck_assert_int_eq(BY(s, b), w);
    ck_assert_int_eq(END(s, b), 200 * MS);
    zs_sim_free(s);
}
END_TEST

/* Link 10 GB/s; A (1 GB, cap 2 GB/s) and B (1 GB, no cap).  Progressive
 * filling: both rise to 2 GB/s, A freezes at its cap; the link has 6 GB/s
 * left for B alone -> B at 8 GB/s ends at 1e9/8e9 = 125 ms.  A stays capped
 * at 2 GB/s: 1e9/2e9 = 500 ms. */
START_TEST(test_flow_cap)
{
    zs_sim *s = mk();
    int l = zs_sim_add_link(s, "pcie", 10e9);
    int q0 = zs_sim_add_queue(s, "a"), q1 = zs_sim_add_queue(s, "b");
    int32_t a = flow1(s, q0, 1e9, l, 2e9, NULL, 0);
    int32_t b = flow1(s, q1, 1e9, l, 0, NULL, 0);
    /* a flow with no link, only a cap: 3e6 B at 1e9 B/s = 3 ms */
    int32_t c = sub(s, (struct zs_task_desc){.kind = ZS_TASK_FLOW,
                                             .queue = q1,
                                             .bytes = 3e6,
                                             .rate_cap = 1e9});
    run_ok(s);
    ck_assert_int_eq(END(s, a), 500 * MS);
    ck_assert_int_eq(END(s, b), 125 * MS);
    ck_assert_int_eq(START(s, c), 125 * MS);
    ck_assert_int_eq(END(s, c), 128 * MS);
    zs_sim_free(s);
}
END_TEST

/* X = 10 GB/s, Y = 4 GB/s.  F1 crosses X (weight 1) and Y (weight 2), F2
 * crosses X only; both 1 GB.  Common rate x: Y binds at 2x = 4e9 -> x = 2e9,
 * F1 frozen at 2 GB/s.  X has 10e9 - 2e9 - 2e9 = 6e9 left for F2 -> 8 GB/s,
 * F2 ends at 125 ms.  F1 then alone: Y still allows 2 GB/s -> 1 GB in 500 ms.
 * Bytes carried: X 1e9 + 1e9 = 2e9, Y 2 * 1e9 = 2e9 (weight applied). */
START_TEST(test_flow_two_links)
{
    zs_sim *s = mk();
    int x = zs_sim_add_link(s, "x", 10e9), y = zs_sim_add_link(s, "y", 4e9);
    int q0 = zs_sim_add_queue(s, "a"), q1 = zs_sim_add_queue(s, "b");
    int32_t f1 = sub(s, (struct zs_task_desc){.kind = ZS_TASK_FLOW,
                                              .queue = q0,
                                              .bytes = 1e9,
                                              .nlinks = 2,
                                              .links = {x, y},
                                              .weight = {0, 2}});
    int32_t f2 = flow1(s, q1, 1e9, x, 0, NULL, 0);
    run_ok(s);
    ck_assert_int_eq(END(s, f2), 125 * MS);
    ck_assert_int_eq(END(s, f1), 500 * MS);
    ck_assert(zs_sim_link_bytes(s, x) == 2e9);
    ck_assert(zs_sim_link_bytes(s, y) == 2e9);
    ck_assert_str_eq(zs_sim_link_name(s, y), "y");
    zs_sim_free(s);
}
END_TEST

/* Rates change transitively.  X = 10 GB/s, Y = 4 GB/s; F1 on X, F2 on X and
 * Y, F3 on Y joining at 100 ms; all 1 GB.  Flow D on an unrelated link Z
 * (1 GB/s, 0.5 GB) ends at 500 ms whatever happens elsewhere.
 *   0-100:   x rises to 4 (Y binds): F2 = 4; X has 2 left: F1 = 6 GB/s.
 *            At 100: F1 rem 0.4 GB, F2 rem 0.6 GB.
 *   100-150: F3 joins Y: F2 = F3 = 2; X now leaves 8 for F1 (F1 changes
 *            though F3 never touches X).  F1: 0.4 / 8 = 50 ms -> ends 150.
 *   150-400: F2, F3 at 2 each; F2 rem 0.5 -> ends 400 (250 ms).
 *   400-500: F3 rem 0.9 - 0.5 = 0.4 alone on Y at 4 -> ends 500. */
START_TEST(test_flow_transitive)
{
    zs_sim *s = mk();
    int x = zs_sim_add_link(s, "x", 10e9), y = zs_sim_add_link(s, "y", 4e9);
    int z = zs_sim_add_link(s, "z", 1e9);
    int q0 = zs_sim_add_queue(s, "a"), q1 = zs_sim_add_queue(s, "b");
    int q2 = zs_sim_add_queue(s, "c"), q3 = zs_sim_add_queue(s, "d");
    int32_t f1 = flow1(s, q0, 1e9, x, 0, NULL, 0);
    int32_t f2 = sub(s, (struct zs_task_desc){.kind = ZS_TASK_FLOW,
                                              .queue = q1,
                                              .bytes = 1e9,
                                              .nlinks = 2,
                                              .links = {x, y}});
    int32_t f3, d;
    delay(s, q2, 100 * MS, NULL, 0);
    f3 = flow1(s, q2, 1e9, y, 0, NULL, 0);
    d = flow1(s, q3, 5e8, z, 0, NULL, 0);
    run_ok(s);
    ck_assert_int_eq(END(s, f1), 150 * MS);
    ck_assert_int_eq(END(s, f2), 400 * MS);
    ck_assert_int_eq(END(s, f3), 500 * MS);
    ck_assert_int_eq(END(s, d), 500 * MS);
    zs_sim_free(s);
}
END_TEST

/* Rounding up to the next ns: 1000 B over 3e9 B/s = 333.33 ns -> 334 ns. */
START_TEST(test_flow_ceil)
{
    zs_sim *s = mk();
    int l = zs_sim_add_link(s, "l", 3e9);
    int q = zs_sim_add_queue(s, "a");
    int32_t a = flow1(s, q, 1000, l, 0, NULL, 0);
    int32_t b = flow1(s, q, 0.5, l, 0, NULL, 0); /* < 1 B: instant */
    run_ok(s);
    ck_assert_int_eq(END(s, a), 334);
    ck_assert_int_eq(START(s, b), 334);
    ck_assert_int_eq(END(s, b), 334);
    zs_sim_free(s);
}
END_TEST

/* ---- queues, deps, cores ------------------------------------------------ */

/* One stream: 10, 20, 30 ns back to back -> ends 10, 30, 60. */
START_TEST(test_chain)
{
    zs_sim *s = mk();
    int q = zs_sim_add_queue(s, "compute");
    int32_t a = delay(s, q, 10, NULL, 0), b = delay(s, q, 20, NULL, 0);
    int32_t c = delay(s, q, 30, NULL, 0);
    run_ok(s);
    ck_assert_int_eq(START(s, b), 10);
    ck_assert_int_eq(END(s, c), 60);
    ck_assert_int_eq(BY(s, a), -1);
    ck_assert_int_eq(BY(s, b), a);
    ck_assert_int_eq(BY(s, c), b);
    ck_assert_int_eq(zs_sim_task(s, c)->queue, q);
    ck_assert_str_eq(zs_sim_queue_name(s, q), "compute");
    zs_sim_free(s);
}
END_TEST

/* q0: A (100).  q1: D (200) then B (50) depending on A.  B waits for both:
 * A ends at 100, D at 200 -> B runs 200..250, blocked by D (the later).
 * q2: C (10) depending on A -> 100..110, blocked by A. */
START_TEST(test_cross_stream)
{
    zs_sim *s = mk();
    int q0 = zs_sim_add_queue(s, "s0"), q1 = zs_sim_add_queue(s, "s1");
    int q2 = zs_sim_add_queue(s, "s2");
    int32_t a = delay(s, q0, 100, NULL, 0);
    int32_t d = delay(s, q1, 200, NULL, 0);
    int32_t b = delay(s, q1, 50, &a, 1);
    int32_t c = delay(s, q2, 10, &a, 1);
    run_ok(s);
    ck_assert_int_eq(START(s, b), 200);
    ck_assert_int_eq(END(s, b), 250);
    ck_assert_int_eq(BY(s, b), d);
    ck_assert_int_eq(START(s, c), 100);
    ck_assert_int_eq(BY(s, c), a);
    zs_sim_free(s);
}
END_TEST

/* 4 cores.  3 + 2 > 4: serialised, 0..100 then 100..200, the second blocked
 * by the first (it released the cores).  2 + 2 <= 4: both 0..100. */
START_TEST(test_cores)
{
    static const struct {
        int c1, c2;
        int64_t start2;
    } cases[] = {{3, 2, 100}, {2, 2, 0}};
    for (size_t i = 0; i < 2; i++) {
        zs_sim *s = mk();
        int q0 = zs_sim_add_queue(s, "cpu0"), q1 = zs_sim_add_queue(s, "cpu1");
        int32_t a, b;
        zs_sim_set_cores(s, 4);
        a = sub(s, (struct zs_task_desc){.kind = ZS_TASK_DELAY,
                                         .queue = q0,
                                         .dur_ns = 100,
                                         .cores = cases[i].c1});
        b = sub(s, (struct zs_task_desc){.kind = ZS_TASK_DELAY,
                                         .queue = q1,
                                         .dur_ns = 100,
                                         .cores = cases[i].c2});
        run_ok(s);
        ck_assert_int_eq(START(s, a), 0);
        ck_assert_int_eq(START(s, b), cases[i].start2);
        ck_assert_int_eq(END(s, b), cases[i].start2 + 100);
        ck_assert_int_eq(BY(s, b), cases[i].start2 ? a : -1);
        zs_sim_free(s);
    }
}
END_TEST

/* FIFO grant: 4 cores; T1 takes 3 (0..100); T2 needs 2 and waits; T3 needs
 * 1 and would fit, but may not overtake T2: both start at 100. */
START_TEST(test_cores_fifo)
{
    zs_sim *s = mk();
    int q[3];
    int32_t t[3];
    static const int need[3] = {3, 2, 1};
    zs_sim_set_cores(s, 4);
    for (int i = 0; i < 3; i++)
        q[i] = zs_sim_add_queue(s, "cpu");
    for (int i = 0; i < 3; i++)
        t[i] = sub(s, (struct zs_task_desc){.kind = ZS_TASK_DELAY,
                                            .queue = q[i],
                                            .dur_ns = 100,
                                            .cores = need[i]});
    run_ok(s);
    ck_assert_int_eq(START(s, t[1]), 100);
    ck_assert_int_eq(START(s, t[2]), 100);
    ck_assert_int_eq(BY(s, t[2]), t[0]);
    zs_sim_free(s);
}
END_TEST

/* Ties are FIFO: two 10 ns DELAYs end at the same instant; the one
 * scheduled first completes first, so its ALLOC is logged first.  Swapping
 * the submission order swaps the log. */
START_TEST(test_fifo_ties)
{
    for (int order = 0; order < 2; order++) {
        zs_sim *s = mk();
        int p = zs_sim_add_pool(s, "gpu", ZS_POOL_PLAIN, 0);
        int q0 = zs_sim_add_queue(s, "a"), q1 = zs_sim_add_queue(s, "b");
        int qa = order ? q1 : q0, qb = order ? q0 : q1;
        int32_t x, y;
        const struct zs_mem_event *log;
        int64_t n;
        delay(s, qa, 10, NULL, 0);
        delay(s, qb, 10, NULL, 0);
        x = alloc(s, qa, p, 1, 0);
        y = alloc(s, qb, p, 2, 0);
        run_ok(s);
        log = zs_sim_pool_log(s, p, &n);
        ck_assert_int_eq(n, 2);
        ck_assert_int_eq(log[0].task, x);
        ck_assert_int_eq(log[1].task, y);
        ck_assert_int_eq(log[1].t_ns, 10);
        zs_sim_free(s);
    }
}
END_TEST

/* 80000 zero-duration tasks (MARK, DELAY 0, ALLOC/FREE) in one chain with
 * cross-queue deps: all at t = 0, no recursion, 2 events per task. */
START_TEST(test_zero_chain)
{
    zs_sim *s = mk();
    int q0 = zs_sim_add_queue(s, "a"), q1 = zs_sim_add_queue(s, "b");
    int p = zs_sim_add_pool(s, "gpu", ZS_POOL_PLAIN, 0);
    int32_t prev = -1, last = -1;
    const int n = 20000;
    for (int i = 0; i < n; i++) {
        int32_t a;
        sub(s, (struct zs_task_desc){.kind = ZS_TASK_MARK,
                                     .queue = q0,
                                     .deps = prev >= 0 ? &prev : NULL,
                                     .ndeps = prev >= 0});
        prev = delay(s, q1, 0, NULL, 0);
        a = alloc(s, q0, p, 8, 0);
        last = release(s, q1, a);
    }
    run_ok(s);
    ck_assert_int_eq(zs_sim_now(s), 0);
    ck_assert_int_eq(END(s, last), 0);
    ck_assert_int_eq(zs_sim_events(s), 2 * 4 * n);
    zs_sim_free(s);
}
END_TEST

/* ---- pools ------------------------------------------------------------- */

/* PLAIN: a=100, b=300, free a, c=50.  Log: 100, 400, 300, 350 allocated.
 * Peak 400 at index 1; live there: b (300) then a (100). */
START_TEST(test_plain_live_at_peak)
{
    zs_sim *s = mk();
    int p = zs_sim_add_pool(s, "gpu", ZS_POOL_PLAIN, 0);
    int q = zs_sim_add_queue(s, "a");
    int32_t a = alloc(s, q, p, 100, 0), b = alloc(s, q, p, 300, 0);
    int32_t live[4] = {-1, -1, -1, -1}, c;
    struct zs_pool_stats st;
    const struct zs_mem_event *log;
    int64_t n;
    delay(s, q, 7, NULL, 0);
    release(s, q, a);
    c = alloc(s, q, p, 50, 0);
    run_ok(s);
    zs_sim_pool_stats(s, p, &st);
    ck_assert_int_eq(st.peak_allocated, 400);
    ck_assert_int_eq(st.peak_reserved, 400);
    ck_assert_int_eq(st.seq_peak_allocated, 1);
    ck_assert_int_eq(st.t_peak_allocated_ns, 0);
    ck_assert_int_eq(st.allocs, 3);
    ck_assert_int_eq(st.frees, 1);
    log = zs_sim_pool_log(s, p, &n);
    ck_assert_int_eq(n, 4);
    ck_assert_int_eq(log[2].bytes, -100);
    ck_assert_int_eq(log[2].t_ns, 7);
    ck_assert_int_eq(log[3].allocated, 350);
    ck_assert_int_eq(zs_sim_pool_live_at(s, p, st.seq_peak_allocated, live, 4),
                     2);
    ck_assert_int_eq(live[0], b);
    ck_assert_int_eq(live[1], a);
    ck_assert_int_eq(zs_sim_pool_live_at(s, p, 3, live, 1), 2);
    ck_assert_int_eq(live[0], b);
    ck_assert_int_eq(zs_sim_pool_live_at(s, p, 3, live, 4), 2);
    ck_assert_int_eq(live[1], c);
    zs_sim_free(s);
}
END_TEST

/* Live-at ordering with ties, both ways of filling: PLAIN allocations of
 * 3, 7, 3, 9, 7, 5 bytes (tasks in submission order), nothing freed.  At the
 * last log index all six are live; largest first, ties by lower task id:
 * 9 (4th), 7 (2nd), 7 (5th), 5 (6th), 3 (1st), 3 (3rd).  cap = 6 sorts the
 * whole list; cap = 4 and cap = 1 keep the first entries of the same order;
 * zs_sim_alloc_bytes gives the requested sizes back. */
START_TEST(test_live_at_order)
{
    zs_sim *s = mk();
    int p = zs_sim_add_pool(s, "gpu", ZS_POOL_PLAIN, 0);
    int q = zs_sim_add_queue(s, "a");
    const int64_t sz[6] = {3, 7, 3, 9, 7, 5};
    const int want[6] = {3, 1, 4, 5, 0, 2};
    int32_t id[6], live[6], d;
    for (int i = 0; i < 6; i++)
        id[i] = alloc(s, q, p, sz[i], 0);
    d = delay(s, q, 1, NULL, 0);
    run_ok(s);
    ck_assert_int_eq(zs_sim_pool_live_at(s, p, 5, live, 6), 6);
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(live[i], id[want[i]]);
    for (int cap = 4; cap >= 1; cap -= 3) {
        for (int i = 0; i < 6; i++)
            live[i] = -1;
        ck_assert_int_eq(zs_sim_pool_live_at(s, p, 5, live, cap), 6);
        for (int i = 0; i < cap; i++)
            ck_assert_int_eq(live[i], id[want[i]]);
        for (int i = cap; i < 6; i++)
            ck_assert_int_eq(live[i], -1);
    }
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(zs_sim_alloc_bytes(s, id[i]), sz[i]);
    ck_assert_int_eq(zs_sim_alloc_bytes(s, d), 0);
    ck_assert_int_eq(zs_sim_alloc_bytes(s, 99), 0);
    zs_sim_free(s);
}
END_TEST

/* Re-running the same tasks reuses the dependency index and restores the
 * run state.  Queue a: 10 ns delay, then a 1 GB flow on a 10 GB/s link
 * (100 ms); queue b: a 60-byte PLAIN allocation after the delay, freed after
 * the flow.  Run 1 with capacity 100: delay [0,10], flow [10, 10+1e8],
 * alloc at 10, free at 10+1e8; 8 events.  Run 2, capacity 50: the alloc
 * OOMs at t = 10, the flow still runs, the free never starts.  Run 3,
 * capacity 100 again: every record equals run 1's.  Then a 5 ns delay on
 * b after the free is added: run 4 ends at 10+1e8+5 ns with 10 events. */
START_TEST(test_rerun_same_tasks)
{
    zs_sim *s = mk();
    int l = zs_sim_add_link(s, "pcie", 10e9);
    int p = zs_sim_add_pool(s, "gpu", ZS_POOL_PLAIN, 100);
    int qa = zs_sim_add_queue(s, "a"), qb = zs_sim_add_queue(s, "b");
    int32_t d = delay(s, qa, 10, NULL, 0);
    int32_t f = flow1(s, qa, 1e9, l, 0, NULL, 0);
    int32_t a = sub(s, (struct zs_task_desc){.kind = ZS_TASK_ALLOC,
                                            .queue = qb,
                                            .pool = p,
                                            .alloc_bytes = 60,
                                            .deps = &d,
                                            .ndeps = 1,
                                            .name = "buf"});
    int32_t fr = sub(s, (struct zs_task_desc){.kind = ZS_TASK_FREE,
                                             .queue = qb,
                                             .alloc_task = a,
                                             .deps = &f,
                                             .ndeps = 1,
                                             .name = "free"});
    struct zs_task_rec first[4];
    struct zs_err err = {0, ""};
    int32_t e;
    run_ok(s);
    ck_assert_int_eq(END(s, d), 10);
    ck_assert_int_eq(START(s, a), 10);
    ck_assert_int_eq(END(s, f), 10 + 100 * MS);
    ck_assert_int_eq(START(s, fr), 10 + 100 * MS);
    ck_assert_int_eq(BY(s, fr), f);
    ck_assert_int_eq(zs_sim_events(s), 8);
    for (int i = 0; i < 4; i++)
        first[i] = *zs_sim_task(s, i);
    zs_sim_set_pool_capacity(s, p, 50);
    ck_assert_int_eq(zs_sim_run(s, &err), ZS_SIM_OOM);
    ck_assert_int_eq(zs_sim_oom(s)->task, a);
    ck_assert_int_eq(START(s, fr), -1);
    zs_sim_set_pool_capacity(s, p, 100);
    run_ok(s);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(zs_sim_task(s, i)->start_ns, first[i].start_ns);
        ck_assert_int_eq(zs_sim_task(s, i)->end_ns, first[i].end_ns);
        ck_assert_int_eq(zs_sim_task(s, i)->blocked_by, first[i].blocked_by);
    }
    ck_assert_int_eq(zs_sim_events(s), 8);
    e = delay(s, qb, 5, NULL, 0);
    run_ok(s);
    ck_assert_int_eq(START(s, e), 10 + 100 * MS);
    ck_assert_int_eq(BY(s, e), fr);
    ck_assert_int_eq(zs_sim_now(s), 10 + 100 * MS + 5);
    ck_assert_int_eq(zs_sim_events(s), 10);
    zs_sim_free(s);
}
END_TEST

struct cstate {
    int64_t allocated, reserved;
};

static struct cstate cuda_after(zs_sim *s, int p)
{
    int64_t n;
    const struct zs_mem_event *log = zs_sim_pool_log(s, p, &n);
    struct cstate c = {log[n - 1].allocated, log[n - 1].reserved};
    return c;
}

/* 4 MiB (1-10 MiB) gets a 20 MiB segment, split 4 + 16.  Freed: merged back
 * into one 20 MiB cached block, reserved stays 20 MiB.  4 MiB again: reuses
 * it, reserved flat. */
START_TEST(test_cuda_reuse)
{
    int p, q;
    zs_sim *s = mk_cuda(0, &p, &q);
    int32_t a = alloc(s, q, p, 4 * MiB, 0);
    const struct zs_mem_event *log;
    int64_t n;
    struct zs_pool_stats st;
    release(s, q, a);
    alloc(s, q, p, 4 * MiB, 0);
    run_ok(s);
    log = zs_sim_pool_log(s, p, &n);
    ck_assert_int_eq(log[0].allocated, 4 * MiB);
    ck_assert_int_eq(log[0].reserved, 20 * MiB);
    ck_assert_int_eq(log[1].allocated, 0);
    ck_assert_int_eq(log[1].reserved, 20 * MiB);
    ck_assert_int_eq(log[2].allocated, 4 * MiB);
    ck_assert_int_eq(log[2].reserved, 20 * MiB);
    zs_sim_pool_stats(s, p, &st);
    ck_assert_int_eq(st.peak_reserved, 20 * MiB);
    ck_assert_int_eq(st.cache_flushes, 0);
    zs_sim_free(s);
}
END_TEST

/* Blocks belong to their stream (get_free_block): queue a (stream 0)
 * allocates 4 MiB (a 20 MiB segment) and frees it at t = 0; at t = 5 queue b
 * asks 4 MiB.  On another stream it cannot take the cached block: a second
 * 20 MiB segment, 40 MiB reserved; at t = 10 queue a asks 4 MiB again and
 * reuses its own.  With both queues on stream 0, b reuses a's block: 20 MiB.
 * With expandable segments each stream maps its own 20 MiB page: 40 MiB. */
static int64_t two_streams(int stream_b, int expandable)
{
    zs_sim *s = mk();
    int p = zs_sim_add_pool(s, "gpu", ZS_POOL_CUDA_CACHING, 0);
    int qa = zs_sim_add_queue(s, "a"), qb = zs_sim_add_queue(s, "b");
    struct zs_pool_stats st;
    ck_assert_int_eq(zs_sim_set_queue_stream(s, qb, stream_b), 0);
    zs_sim_set_pool_expandable(s, p, expandable);
    release(s, qa, alloc(s, qa, p, 4 * MiB, 0));
    delay(s, qb, 5, NULL, 0);
    alloc(s, qb, p, 4 * MiB, 0);
    delay(s, qa, 10, NULL, 0);
    alloc(s, qa, p, 4 * MiB, 0);
    run_ok(s);
    zs_sim_pool_stats(s, p, &st);
    zs_sim_free(s);
    return st.peak_reserved;
}

START_TEST(test_cuda_streams)
{
    zs_sim *s = mk();
    ck_assert_int_eq(two_streams(1, 0), 40 * MiB);
    ck_assert_int_eq(two_streams(0, 0), 20 * MiB);
    ck_assert_int_eq(two_streams(1, 1), 40 * MiB);
    ck_assert_int_eq(two_streams(0, 1), 20 * MiB);
    zs_sim_add_queue(s, "a");
    ck_assert_int_lt(zs_sim_set_queue_stream(s, 0, ZS_ALLOC_STREAMS), 0);
    ck_assert_int_lt(zs_sim_set_queue_stream(s, 1, 0), 0);
    zs_sim_free(s);
}
END_TEST

/* 512 B rounding in the small pool: 1000 -> 1024, 1 -> 512, 512 -> 512;
 * all three carved from one 2 MiB small segment. */
START_TEST(test_cuda_rounding)
{
    int p, q;
    zs_sim *s = mk_cuda(0, &p, &q);
    struct cstate c;
    alloc(s, q, p, 1000, 0);
    alloc(s, q, p, 1, 0);
    alloc(s, q, p, 512, 0);
    run_ok(s);
    c = cuda_after(s, p);
    ck_assert_int_eq(c.allocated, 1024 + 512 + 512);
    ck_assert_int_eq(c.reserved, 2 * MiB);
    zs_sim_free(s);
}
END_TEST

/* Small vs large pools: 1 MiB exactly is small (2 MiB segment); 2 MiB is
 * large (20 MiB segment, split 2 + 18).  A 4 KiB request then finds the
 * small segment's 1 MiB remainder; a second 1 MiB request does not fit there
 * (1 MiB - 4 KiB left) and, although 18 MiB sit free in the large pool,
 * takes a new 2 MiB small segment: reserved 2 + 20 + 2 = 24 MiB. */
START_TEST(test_cuda_pools)
{
    int p, q;
    zs_sim *s = mk_cuda(0, &p, &q);
    const struct zs_mem_event *log;
    int64_t n;
    alloc(s, q, p, 1 * MiB, 0);
    alloc(s, q, p, 2 * MiB, 0);
    alloc(s, q, p, 4096, 0);
    alloc(s, q, p, 1 * MiB, 0);
    run_ok(s);
    log = zs_sim_pool_log(s, p, &n);
    ck_assert_int_eq(log[0].reserved, 2 * MiB);
    ck_assert_int_eq(log[1].reserved, 22 * MiB);
    ck_assert_int_eq(log[2].reserved, 22 * MiB);
    ck_assert_int_eq(log[3].reserved, 24 * MiB);
    ck_assert_int_eq(log[3].allocated, 4 * MiB + 4096);
    zs_sim_free(s);
}
END_TEST

/* Large-pool split rule, default mode (remainder must exceed 1 MiB): 5 MiB
 * in a 20 MiB segment, freed -> one 20 MiB cached block.  19.5 MiB leaves
 * 0.5 MiB: not split, the whole 20 MiB block is allocated.  Freed again, 18
 * MiB leaves 2 MiB > 1 MiB: split, 18 MiB allocated.  Then 2.5 MiB: the 2
 * MiB left does not hold it, a new 20 MiB segment, split: 20.5 MiB
 * allocated, 40 reserved.
 * Under expandable segments (pool.c should_split: any remainder of 512 B or
 * more is split off) the 19.5 MiB request takes 19.5 MiB; the rest is the
 * same (the 2.5 MiB request extends the free 2 MiB at the segment's end by
 * one page: [18,40) 22 MiB, split). */
START_TEST(test_cuda_split_rule)
{
    for (int es = 0; es < 2; es++) {
        int p, q;
        zs_sim *s = mk_cuda(0, &p, &q);
        const struct zs_mem_event *log;
        int64_t n;
        int32_t a;
        zs_sim_set_pool_expandable(s, p, es);
        a = alloc(s, q, p, 5 * MiB, 0);
        release(s, q, a);
        a = alloc(s, q, p, 19 * MiB + MiB / 2, 0);
        release(s, q, a);
        alloc(s, q, p, 18 * MiB, 0);
        alloc(s, q, p, 2 * MiB + MiB / 2, 0);
        run_ok(s);
        log = zs_sim_pool_log(s, p, &n);
        ck_assert_int_eq(log[0].allocated, 5 * MiB);
        ck_assert_int_eq(log[2].allocated,
                         es ? 19 * MiB + MiB / 2 : 20 * MiB);
        ck_assert_int_eq(log[2].reserved, 20 * MiB);
        ck_assert_int_eq(log[4].allocated, 18 * MiB);
        ck_assert_int_eq(log[4].reserved, 20 * MiB);
        ck_assert_int_eq(log[5].allocated, 20 * MiB + MiB / 2);
        ck_assert_int_eq(log[5].reserved, 40 * MiB);
        zs_sim_free(s);
    }
}
END_TEST

/* max_split_size_mb:32 (pool.c, zs_sim_set_pool_max_split), no capacity:
 *   A 60 MiB -> segment 60, not split; freed -> a cached oversize block
 *   B 8 MiB  -> best fit the 60, but an oversize block does not serve a
 *               request below 32: new 20 MiB segment, split 8 | 12
 *                                               (reserved 80, allocated 8)
 *   C 34 MiB -> best fit the 60: 60 >= 34 + 20 (kLargeBuffer), refused:
 *               new 34 MiB segment              (reserved 114, allocated 42)
 *   D 45 MiB -> the 60: 60 < 45 + 20, taken whole (45 >= 32 is not split)
 *                                               (reserved 114, allocated 102)
 * Without the option B splits the 60 (8 | 52): reserved 60, allocated 8. */
START_TEST(test_cuda_max_split_rules)
{
    for (int on = 0; on < 2; on++) {
        int p, q;
        zs_sim *s = mk_cuda(0, &p, &q);
        const struct zs_mem_event *log;
        int64_t n;
        int32_t a;
        if (on)
            zs_sim_set_pool_max_split(s, p, 32 * MiB);
        a = alloc(s, q, p, 60 * MiB, 0);
        release(s, q, a);
        alloc(s, q, p, 8 * MiB, 0);
        if (on) {
            alloc(s, q, p, 34 * MiB, 0);
            alloc(s, q, p, 45 * MiB, 0);
        }
        run_ok(s);
        log = zs_sim_pool_log(s, p, &n);
        if (!on) {
            ck_assert_int_eq(log[2].reserved, 60 * MiB);
            ck_assert_int_eq(log[2].allocated, 8 * MiB);
        } else {
            ck_assert_int_eq(log[2].reserved, 80 * MiB);
            ck_assert_int_eq(log[2].allocated, 8 * MiB);
            ck_assert_int_eq(log[3].reserved, 114 * MiB);
            ck_assert_int_eq(log[3].allocated, 42 * MiB);
            ck_assert_int_eq(log[4].reserved, 114 * MiB);
            ck_assert_int_eq(log[4].allocated, 102 * MiB);
        }
        zs_sim_free(s);
    }
}
END_TEST

/* max_split_size_mb:32 at capacity 90 MiB: release_available_cached_blocks
 * before the flush.
 *   A, B 40 MiB each -> two 40 MiB segments; both freed: two cached
 *               oversize blocks                  (reserved 80)
 *   C 8 MiB  -> the 40s do not serve it; a 20 MiB segment: 100 > 90, so the
 *               smallest cached block >= max(8, 32) is released (one 40):
 *               40 + 20 fits, split 8 | 12       (reserved 60, no flush)
 *   D 70 MiB -> nothing cached fits; 60 + 70 > 90: no single block >= 70,
 *               so from the largest down while oversize: the other 40 (then
 *               the 12 is below 32: stop), 20 + 70 = 90 fits
 *                                                (reserved 90, allocated 78)
 * Without the option C splits a 40 (8 | 32, reserved 80); D's 70 does not
 * fit, the flush releases the other whole 40 (reserved 40), 40 + 70 > 90:
 * OOM. */
START_TEST(test_cuda_max_split_release)
{
    for (int on = 0; on < 2; on++) {
        int p, q;
        zs_sim *s = mk_cuda(90 * MiB, &p, &q);
        struct zs_err err = {0, ""};
        struct zs_pool_stats st;
        const struct zs_mem_event *log;
        int64_t n;
        int32_t a, b, d;
        if (on)
            zs_sim_set_pool_max_split(s, p, 32 * MiB);
        a = alloc(s, q, p, 40 * MiB, 0);
        b = alloc(s, q, p, 40 * MiB, 0);
        release(s, q, a);
        release(s, q, b);
        alloc(s, q, p, 8 * MiB, 0);
        d = alloc(s, q, p, 70 * MiB, 0);
        zs_sim_pool_stats(s, p, &st);
        if (!on) {
            ck_assert_int_eq(zs_sim_run(s, &err), ZS_SIM_OOM);
            ck_assert_int_eq(zs_sim_oom(s)->task, d);
            ck_assert_int_eq(zs_sim_oom(s)->reserved, 40 * MiB);
            zs_sim_pool_stats(s, p, &st);
            ck_assert_int_eq(st.cache_flushes, 1);
        } else {
            run_ok(s);
            log = zs_sim_pool_log(s, p, &n);
            ck_assert_int_eq(log[4].reserved, 60 * MiB);
            ck_assert_int_eq(log[4].allocated, 8 * MiB);
            ck_assert_int_eq(log[5].reserved, 90 * MiB);
            ck_assert_int_eq(log[5].allocated, 78 * MiB);
            zs_sim_pool_stats(s, p, &st);
            ck_assert_int_eq(st.cache_flushes, 0);
        }
        zs_sim_free(s);
    }
}
END_TEST

/* Fragmentation, capacity 40 MiB:
 *   A 8 MiB -> segment S1 (20 MiB) split A 8 | free 12
 *   B 8 MiB -> best fit the 12: B 8 | free 4        (reserved 20)
 *   C 8 MiB -> no free block >= 8: S2 (20 MiB): C 8 | free 12 (reserved 40)
 *   free A  -> S1: free 8 | B 8 | free 4
 *   D 16 MiB -> no cached block >= 16; a new 16 MiB segment would make 56 >
 *   40: flush (no segment is entirely free, nothing released), retry, OOM.
 * allocated 16 MiB + 16 MiB asked = 32 <= 40, yet it fails. */
START_TEST(test_cuda_fragmentation)
{
    int p, q;
    zs_sim *s = mk_cuda(40 * MiB, &p, &q);
    struct zs_err err = {0, ""};
    const struct zs_oom *o;
    struct zs_pool_stats st;
    int32_t a, d, after;
    a = alloc(s, q, p, 8 * MiB, 0);
    alloc(s, q, p, 8 * MiB, 0);
    alloc(s, q, p, 8 * MiB, 0);
    delay(s, q, 5, NULL, 0);
    release(s, q, a);
    d = alloc(s, q, p, 16 * MiB, 0);
    after = delay(s, q, 5, NULL, 0);
    ck_assert_int_eq(zs_sim_run(s, &err), ZS_SIM_OOM);
    o = zs_sim_oom(s);
    ck_assert_ptr_nonnull(o);
    ck_assert_int_eq(o->pool, p);
    ck_assert_int_eq(o->task, d);
    ck_assert_int_eq(o->t_ns, 5);
    ck_assert_int_eq(o->requested, 16 * MiB);
    ck_assert_int_eq(o->allocated, 16 * MiB);
    ck_assert_int_eq(o->reserved, 40 * MiB);
    ck_assert_int_eq(o->capacity, 40 * MiB);
    zs_sim_pool_stats(s, p, &st);
    ck_assert_int_eq(st.cache_flushes, 1);
    ck_assert_int_eq(START(s, d), -1);
    ck_assert_int_eq(START(s, after), -1);
    zs_sim_free(s);
}
END_TEST

/* The fragmentation case above with expandable_segments (pool.c): one
 * large segment grown in 20 MiB pages, capacity 40 MiB:
 *   A 8 MiB -> grow 20: A [0,8) | free [8,20)          (reserved 20)
 *   B 8 MiB -> best fit the 12: B [8,16) | free [16,20) 4
 *   C 8 MiB -> nothing >= 8 cached; the free 4 at the end is extended by
 *              ceil((8 - 4) / 20) = 1 page: [16,40) 24 -> C [16,24) |
 *              free [24,40) 16                           (reserved 40)
 *   free A  -> [0,8) free
 *   D 16 MiB -> best fit the 16 at the end: fits, no flush.
 * allocated B + C + D = 32 MiB, reserved 40; the default mode OOMs. */
START_TEST(test_cuda_expandable_no_fragmentation)
{
    int p, q;
    zs_sim *s = mk_cuda(40 * MiB, &p, &q);
    struct zs_pool_stats st;
    struct cstate c;
    int32_t a;
    zs_sim_set_pool_expandable(s, p, 1);
    a = alloc(s, q, p, 8 * MiB, 0);
    alloc(s, q, p, 8 * MiB, 0);
    alloc(s, q, p, 8 * MiB, 0);
    delay(s, q, 5, NULL, 0);
    release(s, q, a);
    alloc(s, q, p, 16 * MiB, 0);
    run_ok(s);
    c = cuda_after(s, p);
    ck_assert_int_eq(c.allocated, 32 * MiB);
    ck_assert_int_eq(c.reserved, 40 * MiB);
    zs_sim_pool_stats(s, p, &st);
    ck_assert_int_eq(st.cache_flushes, 0);
    zs_sim_free(s);
}
END_TEST

/* Expandable release unmaps whole pages inside free blocks, capacity 60:
 *   A 30 MiB -> grow 40: A [0,30) | free [30,40) 10     (reserved 40)
 *   B 8 MiB  -> best fit the 10: remainder 2 > 1 MiB, split:
 *               B [30,38) | free [38,40) 2
 *   free A   -> [0,30) free
 *   C 36 MiB -> nothing >= 36; end block free 2: grow ceil(34/20) = 2 pages
 *               = 40, 40 + 40 > 60 -> release: [0,30) holds page [0,20)
 *               -> unmapped (reserved 20), [20,30) stays cached; [38,40) has
 *               no whole page.  Retry: 20 + 40 = 60 fits: end [38,80) 42 ->
 *               C [38,74) | free [74,80) 6.
 * allocated B + C = 44 MiB, reserved 60, one flush. */
START_TEST(test_cuda_expandable_release)
{
    int p, q;
    zs_sim *s = mk_cuda(60 * MiB, &p, &q);
    struct zs_pool_stats st;
    const struct zs_mem_event *log;
    int64_t n;
    int32_t a;
    zs_sim_set_pool_expandable(s, p, 1);
    a = alloc(s, q, p, 30 * MiB, 0);
    alloc(s, q, p, 8 * MiB, 0);
    release(s, q, a);
    alloc(s, q, p, 36 * MiB, 0);
    run_ok(s);
    log = zs_sim_pool_log(s, p, &n);
    ck_assert_int_eq(log[0].reserved, 40 * MiB);
    ck_assert_int_eq(log[1].reserved, 40 * MiB);
    ck_assert_int_eq(log[1].allocated, 38 * MiB);
    ck_assert_int_eq(log[3].allocated, 44 * MiB);
    ck_assert_int_eq(log[3].reserved, 60 * MiB);
    zs_sim_pool_stats(s, p, &st);
    ck_assert_int_eq(st.cache_flushes, 1);
    ck_assert_int_eq(st.peak_reserved, 60 * MiB);
    zs_sim_free(s);
}
END_TEST

/* Per-stream pools (pool.c, BlockComparator orders by stream first).
 * Queue a: A 4 MiB at 0, freed at 5, C 4 MiB at 15; queue b: B 4 MiB at 10.
 *   A -> 20 MiB segment of stream a, split 4 + 16     (reserved 20)
 *   free A at 5 -> one free 20 MiB block of stream a
 *   B (stream b) finds no block of its stream -> new 20 MiB segment
 *                                                      (reserved 40)
 *   C (stream a) reuses A's block: reserved 40, allocated 8.
 * One shared stream (the default): B reuses A's block and C its 16 MiB
 * remainder, reserved 20.  With capacity 30, B's new segment does not fit
 * (20 + 20): the flush releases stream a's whole free segment (flushes
 * serve every stream), B fits at 20; C then needs a segment of stream a,
 * 20 + 20 > 30 with nothing to flush: OOM. */
static zs_sim *per_stream_case(int on, int64_t cap, int *p)
{
    zs_sim *s = mk();
    int qa, qb;
    int32_t a;
    *p = zs_sim_add_pool(s, "gpu", ZS_POOL_CUDA_CACHING, cap);
    qa = zs_sim_add_queue(s, "a");
    qb = zs_sim_add_queue(s, "b");
    if (on) /* b on a stream of its own; a stays on stream 0 */
        ck_assert_int_eq(zs_sim_set_queue_stream(s, qb, 1), 0);
    a = alloc(s, qa, *p, 4 * MiB, 0);
    delay(s, qa, 5, NULL, 0);
    release(s, qa, a);
    delay(s, qa, 10, NULL, 0);
    alloc(s, qa, *p, 4 * MiB, 0);
    delay(s, qb, 10, NULL, 0);
    alloc(s, qb, *p, 4 * MiB, 0);
    return s;
}

START_TEST(test_cuda_per_stream)
{
    int p;
    zs_sim *s = per_stream_case(1, 0, &p);
    struct zs_err err = {0, ""};
    struct zs_pool_stats st;
    const struct zs_mem_event *log;
    int64_t n;
    run_ok(s);
    log = zs_sim_pool_log(s, p, &n);
    ck_assert_int_eq(n, 4);
    ck_assert_int_eq(log[1].reserved, 20 * MiB);
    ck_assert_int_eq(log[2].reserved, 40 * MiB); /* B, t 10 */
    ck_assert_int_eq(log[3].reserved, 40 * MiB); /* C, t 15 */
    ck_assert_int_eq(log[3].allocated, 8 * MiB);
    zs_sim_free(s);
    s = per_stream_case(0, 0, &p);
    run_ok(s);
    zs_sim_pool_stats(s, p, &st);
    ck_assert_int_eq(st.peak_reserved, 20 * MiB);
    zs_sim_free(s);
    s = per_stream_case(1, 30 * MiB, &p);
    ck_assert_int_eq(zs_sim_run(s, &err), ZS_SIM_OOM);
    log = zs_sim_pool_log(s, p, &n);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(log[2].reserved, 20 * MiB);
    ck_assert_int_eq(zs_sim_oom(s)->t_ns, 15);
    zs_sim_pool_stats(s, p, &st);
    ck_assert_int_eq(st.cache_flushes, 2);
    zs_sim_free(s);
}
END_TEST

/* ---- snapshots ---------------------------------------------------------- */

static int32_t snap_mark(zs_sim *s, int q, int32_t from)
{
    return sub(s, (struct zs_task_desc){.kind = ZS_TASK_MARK,
                                        .queue = q,
                                        .snapshot = true,
                                        .snapshot_from = from,
                                        .name = "snap"});
}

static struct zs_snapshot snap_of(zs_sim *s, int32_t id)
{
    struct zs_snapshot x;
    ck_assert_int_eq(zs_sim_snapshot(s, id, &x), 0);
    return x;
}

/* Four periods on one queue, CUDA caching pool: each starts with a
 * snapshot mark M_i, frees the buffer B_{i-1} of the period before, then
 * allocates B_i (64 MiB) and waits 10 ms.  At M_0 nothing is allocated; at
 * M_1 B_0 holds a 64 MiB segment; at M_2 and M_3 B_1 and B_2 hold that same
 * segment (freed, then reused best-fit).  With `from` = M_1 (M_0 names
 * itself), B_0 (task 2, before M_1) is named by its id, 2, and B_1, B_2
 * (tasks 6 and 10) by their distance to M_2, M_3 (tasks 8 and 12): -2.  So
 * the fingerprints of M_2 and M_3 agree, those of M_1 and M_2 do not (B_0
 * named absolutely), nor M_0's (nothing allocated).  One queue: every mark
 * is quiet.  A snapshot exists only for the marks: another task has none. */
START_TEST(test_snapshot_periodic)
{
    zs_sim *s = mk();
    int q = zs_sim_add_queue(s, "host");
    int p = zs_sim_add_pool(s, "gpu", ZS_POOL_CUDA_CACHING, 0);
    int32_t m[4], bprev = -1, d = -1;
    struct zs_snapshot x[4], y;
    for (int i = 0; i < 4; i++) {
        /* `from` is M_1 (task 4) for every mark; M_0 and M_1 name it
         * before it exists */
        m[i] = snap_mark(s, q, i < 2 ? zs_sim_ntasks(s) : m[1]);
        ck_assert_int_eq(m[i], 4 * i);
        if (bprev >= 0)
            release(s, q, bprev);
        else
            delay(s, q, 0, NULL, 0); /* keeps the period at 4 tasks */
        bprev = alloc(s, q, p, 64 * MiB, 0);
        d = delay(s, q, 10 * MS, NULL, 0);
    }
    run_ok(s);
    for (int i = 0; i < 4; i++) {
        x[i] = snap_of(s, m[i]);
        ck_assert_int_eq(x[i].t_ns, 10 * MS * i);
        ck_assert(x[i].quiet);
        ck_assert_int_eq(x[i].cache_flushes, 0);
    }
    ck_assert(x[2].state == x[3].state);
    ck_assert(x[1].state != x[2].state);
    ck_assert(x[0].state != x[1].state);
    ck_assert_int_eq(zs_sim_snapshot(s, d, &y), -1);
    ck_assert_int_eq(zs_sim_snapshot(s, 1000, &y), -1);
    zs_sim_free(s);
}
END_TEST

/* Quiet or not.  (1) A 1 GB flow at 10 GB/s (0-100 ms) on the copy queue;
 * on the host queue a 50 ms delay, then mark A: the flow is still running
 * at A (50 ms): not quiet.  Mark B waits for the flow (100 ms): quiet,
 * though a MARK submitted after it on an idle queue ran at 0 (a join point
 * without cores holds nothing).  (2) A 10 ms delay, then mark C on the host
 * queue; a 1 ms DELAY submitted after C on an idle queue runs at 0, before
 * C: C is not quiet. */
START_TEST(test_snapshot_quiet)
{
    zs_sim *s = mk();
    int l = zs_sim_add_link(s, "pcie", 10e9);
    int h = zs_sim_add_queue(s, "host"), c = zs_sim_add_queue(s, "copy");
    int q2 = zs_sim_add_queue(s, "idle");
    int32_t f = flow1(s, c, 1e9, l, 0, NULL, 0), a, b, im, cm, early;
    delay(s, h, 50 * MS, NULL, 0);
    a = snap_mark(s, h, 0);
    b = sub(s, (struct zs_task_desc){.kind = ZS_TASK_MARK,
                                     .queue = h,
                                     .deps = &f,
                                     .ndeps = 1,
                                     .snapshot = true,
                                     .name = "after the flow"});
    im = sub(s, (struct zs_task_desc){
                    .kind = ZS_TASK_MARK, .queue = q2, .name = "idle"});
    run_ok(s);
    ck_assert_int_eq(START(s, im), 0);
    ck_assert_int_eq(snap_of(s, a).t_ns, 50 * MS);
    ck_assert(!snap_of(s, a).quiet);
    ck_assert_int_eq(snap_of(s, b).t_ns, 100 * MS);
    ck_assert(snap_of(s, b).quiet);
    zs_sim_free(s);

    s = mk();
    h = zs_sim_add_queue(s, "host");
    q2 = zs_sim_add_queue(s, "idle");
    delay(s, h, 10 * MS, NULL, 0);
    cm = snap_mark(s, h, 0);
    early = delay(s, q2, 1 * MS, NULL, 0);
    run_ok(s);
    ck_assert_int_eq(START(s, early), 0);
    ck_assert_int_eq(snap_of(s, cm).t_ns, 10 * MS);
    ck_assert(!snap_of(s, cm).quiet);
    zs_sim_free(s);
}
END_TEST

/* A flush that succeeds, capacity 40 MiB: 30 MiB (segment of 30), freed and
 * cached; 32 MiB does not fit the cached block, 30 + 32 > 40 -> flush
 * releases the free 30 MiB segment, then 32 fits: reserved 32 MiB. */
START_TEST(test_cuda_flush)
{
    int p, q;
    zs_sim *s = mk_cuda(40 * MiB, &p, &q);
    struct zs_pool_stats st;
    struct cstate c;
    int32_t a = alloc(s, q, p, 30 * MiB, 0);
    release(s, q, a);
    alloc(s, q, p, 32 * MiB, 0);
    run_ok(s);
    c = cuda_after(s, p);
    ck_assert_int_eq(c.reserved, 32 * MiB);
    ck_assert_int_eq(c.allocated, 32 * MiB);
    zs_sim_pool_stats(s, p, &st);
    ck_assert_int_eq(st.cache_flushes, 1);
    ck_assert_int_eq(st.peak_reserved, 32 * MiB);
    zs_sim_free(s);
}
END_TEST

/* torch.cuda.empty_cache() after a free (ZS_FREE_EMPTY_CACHE): only
 * wholly free segments go.
 *   A 30 MiB -> its own 30 MiB segment              (reserved 30)
 *   B 5 MiB  -> a 20 MiB segment (under 10 MiB)      (reserved 50)
 *   C 4 MiB  -> B's segment's 15 MiB remainder       (reserved 50)
 *   free C, free A + empty_cache -> A's segment goes; B's stays, in use
 *                                                    (reserved 20)
 *   D 40 MiB -> a new segment                        (reserved 60)
 * (without the release: 90) peak reserved 60 MiB, no cache flush counted.  The flag is refused on
 * another pool kind and with other bits. */
START_TEST(test_cuda_empty_cache)
{
    zs_sim *s = mk();
    int p = zs_sim_add_pool(s, "gpu", ZS_POOL_CUDA_CACHING, 0);
    int h = zs_sim_add_pool(s, "host", ZS_POOL_HOST, 0);
    int q = zs_sim_add_queue(s, "a");
    struct zs_pool_stats st;
    struct zs_task_desc bad;
    struct cstate c;
    int32_t a = alloc(s, q, p, 30 * MiB, 0), x, hb;
    alloc(s, q, p, 5 * MiB, 0);
    x = alloc(s, q, p, 4 * MiB, 0);
    release(s, q, x);
    sub(s, (struct zs_task_desc){.kind = ZS_TASK_FREE,
                                 .queue = q,
                                 .alloc_task = a,
                                 .alloc_flags = ZS_FREE_EMPTY_CACHE,
                                 .name = "free + empty_cache"});
    alloc(s, q, p, 40 * MiB, 0);
    hb = alloc(s, q, h, 1000, 0);
    bad = (struct zs_task_desc){.kind = ZS_TASK_FREE,
                                .queue = q,
                                .alloc_task = hb,
                                .alloc_flags = ZS_FREE_EMPTY_CACHE,
                                .name = "bad"};
    ck_assert_int_lt(zs_sim_submit(s, &bad), 0);
    ck_assert_str_eq(zs_sim_errmsg(s),
                     "invalid alloc_flags of free 'bad' (id 7): "
                     "ZS_FREE_EMPTY_CACHE, on a CUDA caching pool (got 0x4)");
    run_ok(s);
    c = cuda_after(s, p);
    ck_assert_int_eq(c.reserved, 60 * MiB);
    ck_assert_int_eq(c.allocated, 45 * MiB);
    zs_sim_pool_stats(s, p, &st);
    ck_assert_int_eq(st.peak_reserved, 60 * MiB);
    ck_assert_int_eq(st.cache_flushes, 0);
    {
        const struct zs_mem_event *log;
        int64_t n;
        log = zs_sim_pool_log(s, p, &n);
        ck_assert_int_eq(n, 6);
        /* the free of A logs 50 (the release logs nothing); D's event
         * 20 + 40 */
        ck_assert_int_eq(log[4].reserved, 50 * MiB);
        ck_assert_int_eq(log[5].reserved, 60 * MiB);
    }
    zs_sim_free(s);
}
END_TEST

/* Pinned host memory rounds to a power of two (reference
 * zero3-offload-mechanics.md §2: a 1.63 GiB buffer occupies 2 GiB).
 *   pinned 1.63 GiB -> 2 GiB reserved and allocated
 *   free            -> cached: allocated 0, reserved 2 GiB
 *   pinned 1.5 GiB  -> same class: reuses the cached block, reserved flat
 *   pageable 1000   -> exact: reserved 2 GiB + 1000
 *   pinned 1 GiB    -> a new 1 GiB block: reserved 3 GiB + 1000,
 *                      peak_pinned 3 GiB. */
START_TEST(test_host_pinned)
{
    zs_sim *s = mk();
    int p = zs_sim_add_pool(s, "host", ZS_POOL_HOST, 0);
    int q = zs_sim_add_queue(s, "a");
    int64_t b163 = 1750199173; /* 1.63 * 2^30, truncated */
    const struct zs_mem_event *log;
    struct zs_pool_stats st;
    int64_t n;
    int32_t a = alloc(s, q, p, b163, ZS_ALLOC_PINNED);
    release(s, q, a);
    alloc(s, q, p, 3 * GiB / 2, ZS_ALLOC_PINNED);
    alloc(s, q, p, 1000, 0);
    alloc(s, q, p, GiB, ZS_ALLOC_PINNED);
    run_ok(s);
    log = zs_sim_pool_log(s, p, &n);
    ck_assert_int_eq(log[0].bytes, b163);
    ck_assert_int_eq(log[0].allocated, 2 * GiB);
    ck_assert_int_eq(log[0].reserved, 2 * GiB);
    ck_assert_int_eq(log[1].allocated, 0);
    ck_assert_int_eq(log[1].reserved, 2 * GiB);
    ck_assert_int_eq(log[2].reserved, 2 * GiB);
    ck_assert_int_eq(log[3].reserved, 2 * GiB + 1000);
    ck_assert_int_eq(log[4].reserved, 3 * GiB + 1000);
    ck_assert_int_eq(log[4].allocated, 3 * GiB + 1000);
    zs_sim_pool_stats(s, p, &st);
    ck_assert_int_eq(st.peak_pinned, 3 * GiB);
    zs_sim_free(s);
}
END_TEST

/* ZS_ALLOC_LOCKED (DeepSpeed's aio new_cpu_locked_tensor): exact size,
 * counted as pinned while live, released on free (not cached):
 *   locked 1000     -> allocated = reserved = 1000, pinned 1000
 *   pinned 1000     -> a 1024 B class block: 2024, pinned 2024
 *   free the locked -> 1024 reserved, pinned 1024; peak_pinned 2024.
 * Both flags at once are refused at submit. */
START_TEST(test_host_locked)
{
    zs_sim *s = mk();
    int p = zs_sim_add_pool(s, "host", ZS_POOL_HOST, 0);
    int q = zs_sim_add_queue(s, "a");
    const struct zs_mem_event *log;
    struct zs_pool_stats st;
    struct zs_task_desc d = {.kind = ZS_TASK_ALLOC,
                             .queue = q,
                             .pool = p,
                             .alloc_bytes = 10,
                             .alloc_flags = ZS_ALLOC_PINNED | ZS_ALLOC_LOCKED};
    int64_t n;
    int32_t a = alloc(s, q, p, 1000, ZS_ALLOC_LOCKED);
    alloc(s, q, p, 1000, ZS_ALLOC_PINNED);
    release(s, q, a);
    ck_assert_int_lt(zs_sim_submit(s, &d), 0);
    ck_assert_str_eq(zs_sim_errmsg(s),
                     "invalid alloc_flags of alloc '' (id 3): "
                     "ZS_ALLOC_PINNED or ZS_ALLOC_LOCKED (got 0x3)");
    run_ok(s);
    log = zs_sim_pool_log(s, p, &n);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(log[0].allocated, 1000);
    ck_assert_int_eq(log[0].reserved, 1000);
    ck_assert_int_eq(log[1].reserved, 2024);
    ck_assert_int_eq(log[2].allocated, 1024);
    ck_assert_int_eq(log[2].reserved, 1024);
    zs_sim_pool_stats(s, p, &st);
    ck_assert_int_eq(st.peak_pinned, 2024);
    zs_sim_free(s);
}
END_TEST

/* PLAIN with capacity 1000: 600 fits, a second 600 does not (1200 > 1000):
 * the run stops at t=3 with the record filled. */
START_TEST(test_plain_oom)
{
    zs_sim *s = mk();
    int p = zs_sim_add_pool(s, "gpu", ZS_POOL_PLAIN, 1000);
    int q = zs_sim_add_queue(s, "a");
    struct zs_err err = {0, ""};
    const struct zs_oom *o;
    int32_t b;
    alloc(s, q, p, 600, 0);
    delay(s, q, 3, NULL, 0);
    b = alloc(s, q, p, 600, 0);
    ck_assert_ptr_null(zs_sim_oom(s));
    ck_assert_int_eq(zs_sim_run(s, &err), ZS_SIM_OOM);
    o = zs_sim_oom(s);
    ck_assert_ptr_nonnull(o);
    ck_assert_int_eq(o->task, b);
    ck_assert_int_eq(o->t_ns, 3);
    ck_assert_int_eq(o->requested, 600);
    ck_assert_int_eq(o->allocated, 600);
    ck_assert_int_eq(o->reserved, 600);
    ck_assert_int_eq(o->capacity, 1000);
    /* a larger capacity and the same tasks: the run completes */
    zs_sim_set_pool_capacity(s, p, 2000);
    run_ok(s);
    ck_assert_ptr_null(zs_sim_oom(s));
    zs_sim_free(s);
}
END_TEST

/* ---- limits -------------------------------------------------------------- */

struct oracle_ent {
    int64_t t;
    uint64_t seq;
    int32_t id;
};

static int oracle_min(const struct oracle_ent *o, int n)
{
    int m = 0;
    for (int i = 1; i < n; i++)
        if (o[i].t < o[m].t || (o[i].t == o[m].t && o[i].seq < o[m].seq))
            m = i;
    return m;
}

/* The heap against an unsorted-array oracle with linear min search: random
 * sets (insert or re-time), cancels and pops over a small time range so that
 * ties are frequent; every pop must agree on id and time. */
START_TEST(test_heap_fuzz)
{
    enum { NID = 256 };
    static const unsigned seeds[] = {1, 42, 99991};
    for (size_t si = 0; si < sizeof seeds / sizeof seeds[0]; si++) {
        struct zs_heap h;
        struct oracle_ent o[NID];
        int n = 0;
        int where[NID];
        uint64_t seq = 0;
        unsigned st = seeds[si];
        zs_heap_init(&h);
        ck_assert_int_eq(zs_heap_reserve(&h, NID, 4), 0);
        for (int i = 0; i < NID; i++)
            where[i] = -1;
        for (int op = 0; op < 10000; op++) {
            int r = (int)(rand_r(&st) % 10);
            if (r < 5) { /* set */
                int32_t id = (int32_t)(rand_r(&st) % NID);
                int64_t t = rand_r(&st) % 50;
                ck_assert_int_eq(zs_heap_set(&h, id, t), 0);
                if (where[id] < 0) {
                    where[id] = n;
                    o[n].id = id;
                    n++;
                }
                o[where[id]].t = t;
                o[where[id]].seq = seq++;
            } else if (r < 7) { /* cancel */
                int32_t id = (int32_t)(rand_r(&st) % NID);
                ck_assert_int_eq(zs_heap_cancel(&h, id), where[id] >= 0);
                if (where[id] >= 0) {
                    int k = where[id];
                    o[k] = o[--n];
                    where[o[k].id] = k;
                    where[id] = -1;
                }
            } else { /* pop */
                struct zs_heap_ent e;
                int got = zs_heap_pop(&h, &e);
                ck_assert_int_eq(got, n > 0);
                if (got) {
                    int k = oracle_min(o, n);
                    ck_assert_int_eq(e.id, o[k].id);
                    ck_assert_int_eq(e.t_ns, o[k].t);
                    where[e.id] = -1;
                    o[k] = o[--n];
                    if (k < n)
                        where[o[k].id] = k;
                }
            }
            ck_assert_uint_eq(h.n, (size_t)n);
        }
        zs_heap_release(&h);
    }
}
END_TEST

/* zs_heap_reserve clears only the ids of the run: after a run of 1000 ids
 * one of 10 has ids 0..9 (all absent, 10 refused), and a later one of
 * 1000 again finds id 500, set in the first, absent. */
START_TEST(test_heap_reserve_shrink)
{
    struct zs_heap h;
    struct zs_heap_ent e;
    zs_heap_init(&h);
    ck_assert_int_eq(zs_heap_reserve(&h, 1000, 4), 0);
    ck_assert_int_eq(zs_heap_set(&h, 500, 7), 0);
    ck_assert_int_eq(zs_heap_set(&h, 3, 9), 0);
    ck_assert_int_eq(zs_heap_reserve(&h, 10, 4), 0);
    ck_assert_uint_eq(h.npos, 10);
    ck_assert_int_eq(zs_heap_contains(&h, 3), 0);
    ck_assert_int_eq(zs_heap_set(&h, 10, 1), ZS_ERUNTIME);
    ck_assert_int_eq(zs_heap_pop(&h, &e), 0);
    ck_assert_int_eq(zs_heap_reserve(&h, 1000, 4), 0);
    ck_assert_int_eq(zs_heap_contains(&h, 500), 0);
    ck_assert_int_eq(zs_heap_cancel(&h, 500), 0);
    ck_assert_int_eq(zs_heap_set(&h, 500, 2), 0);
    ck_assert_int_eq(zs_heap_pop(&h, &e), 1);
    ck_assert_int_eq(e.id, 500);
    zs_heap_release(&h);
}
END_TEST

/* A whole topology and a mixed schedule; returns 0, ZS_ENOMEM or ZS_SIM_*. */
static int build_and_run(zs_sim **out, struct zs_err *err)
{
    zs_sim *s = zs_sim_new();
    int l, q0, q1, gpu, host, rc;
    int32_t a, f, h, id;
    *out = s;
    if (!s)
        return ZS_ENOMEM;
    if ((l = zs_sim_add_link(s, "pcie", 10e9)) < 0)
        return l;
    if ((q0 = zs_sim_add_queue(s, "compute")) < 0)
        return q0;
    if ((q1 = zs_sim_add_queue(s, "copy")) < 0)
        return q1;
    if ((gpu = zs_sim_add_pool(s, "gpu", ZS_POOL_CUDA_CACHING, 0)) < 0)
        return gpu;
    if ((host = zs_sim_add_pool(s, "host", ZS_POOL_HOST, 0)) < 0)
        return host;
    for (int i = 0; i < 20; i++) {
        struct zs_task_desc d = {.kind = ZS_TASK_ALLOC,
                                 .queue = q1,
                                 .pool = gpu,
                                 .alloc_bytes = (i + 1) * MiB};
        if ((a = zs_sim_submit(s, &d)) < 0)
            return a;
        d = (struct zs_task_desc){.kind = ZS_TASK_ALLOC,
                                  .queue = q1,
                                  .pool = host,
                                  .alloc_bytes = 3000,
                                  .alloc_flags = ZS_ALLOC_PINNED};
        if ((h = zs_sim_submit(s, &d)) < 0)
            return h;
        d = (struct zs_task_desc){.kind = ZS_TASK_FLOW,
                                  .queue = q1,
                                  .bytes = 1e6,
                                  .nlinks = 1,
                                  .links = {l}};
        if ((f = zs_sim_submit(s, &d)) < 0)
            return f;
        d = (struct zs_task_desc){.kind = ZS_TASK_DELAY,
                                  .queue = q0,
                                  .dur_ns = 50000,
                                  .deps = &f,
                                  .ndeps = 1,
                                  .cores = 1};
        if ((id = zs_sim_submit(s, &d)) < 0)
            return id;
        d = (struct zs_task_desc){
            .kind = ZS_TASK_FREE, .queue = q0, .alloc_task = a};
        if ((id = zs_sim_submit(s, &d)) < 0)
            return id;
        d = (struct zs_task_desc){
            .kind = ZS_TASK_FREE, .queue = q0, .alloc_task = h};
        if ((id = zs_sim_submit(s, &d)) < 0)
            return id;
    }
    rc = zs_sim_run(s, err);
    return rc;
}

/* Fail the Nth allocation for every N: each step reports ZS_ENOMEM, nothing
 * leaks (ASan), and once no failure fires the run completes. */
START_TEST(test_alloc_failures)
{
    for (long n = 1; n < 10000; n++) {
        zs_sim *s = NULL;
        struct zs_err err = {0, ""};
        int rc;
        zs_alloc_fail_at(n);
        rc = build_and_run(&s, &err);
        if (!zs_alloc_failed()) {
            zs_alloc_fail_at(0);
            ck_assert_int_eq(rc, ZS_SIM_DONE);
            ck_assert_int_eq(zs_sim_events(s), 2 * 120);
            /* every growth step of every array was failed once */
            ck_assert_int_gt(n, 40);
            zs_sim_free(s);
            return;
        }
        zs_alloc_fail_at(0);
        ck_assert_msg(rc == ZS_ENOMEM, "n=%ld rc=%d msg=%s", n, rc, err.msg);
        zs_sim_free(s);
    }
    ck_abort_msg("allocation loop did not terminate");
}
END_TEST

/* Reset keeps topology and capacities: once warm, rebuilding and running the
 * same schedule allocates nothing and gives the same results. */
START_TEST(test_reset_reuse)
{
    zs_sim *s = NULL;
    struct zs_err err = {0, ""};
    int64_t end1, ev1;
    ck_assert_int_eq(build_and_run(&s, &err), 0);
    end1 = zs_sim_now(s);
    ev1 = zs_sim_events(s);
    for (int round = 0; round < 3; round++) {
        int q0, q1, l, gpu;
        long before;
        zs_sim_reset(s);
        ck_assert_int_eq(zs_sim_ntasks(s), 0);
        ck_assert_int_eq(zs_sim_nqueues(s), 2);
        zs_alloc_fail_at(0);
        before = zs_alloc_count();
        l = 0, q0 = 0, q1 = 1, gpu = 0;
        for (int i = 0; i < 20; i++) {
            int32_t a = alloc(s, q1, gpu, (i + 1) * MiB, 0);
            int32_t h = alloc(s, q1, 1, 3000, ZS_ALLOC_PINNED);
            int32_t f = flow1(s, q1, 1e6, l, 0, NULL, 0);
            sub(s, (struct zs_task_desc){.kind = ZS_TASK_DELAY,
                                         .queue = q0,
                                         .dur_ns = 50000,
                                         .deps = &f,
                                         .ndeps = 1,
                                         .cores = 1});
            release(s, q0, a);
            release(s, q0, h);
        }
        run_ok(s);
        ck_assert_int_eq(zs_sim_now(s), end1);
        ck_assert_int_eq(zs_sim_events(s), ev1);
        ck_assert_int_eq(zs_alloc_count() - before, 0);
    }
    zs_sim_free(s);
}
END_TEST

START_TEST(test_bench_small)
{
    double eps = 0;
    int64_t ev = 0;
    struct zs_err err = {0, ""};
    ck_assert_int_eq(zs_engine_bench(2000, &eps, &ev, &err), 0);
    ck_assert_int_gt(ev, 0);
    ck_assert(eps > 0);
    ck_assert_int_eq(zs_engine_bench(0, &eps, &ev, &err), ZS_EUSAGE);
}
END_TEST

/* ---- bad input ---------------------------------------------------------- */

/* A task needing more cores than the pool has can never start. */
START_TEST(test_deadlock)
{
    zs_sim *s = mk();
    int q = zs_sim_add_queue(s, "cpu0");
    struct zs_err err = {0, ""};
    zs_sim_set_cores(s, 2);
    delay(s, q, 40, NULL, 0);
    sub(s, (struct zs_task_desc){.kind = ZS_TASK_DELAY,
                                 .queue = q,
                                 .dur_ns = 10,
                                 .cores = 4,
                                 .name = "adam"});
    delay(s, q, 10, NULL, 0);
    ck_assert_int_eq(zs_sim_run(s, &err), ZS_ERUNTIME);
    ck_assert_str_eq(err.msg, "deadlock at t=40 ns: task 'adam' (id 1, queue "
                              "'cpu0') waits for 4 cores; the cpu pool has 2 "
                              "(2 free)");
    zs_sim_free(s);
}
END_TEST

/* Simulated time is bounded (4e18 ns): a DELAY past it, or a flow so slow
 * that it would end past it, stops the run with ZS_ELIMIT. */
START_TEST(test_time_overflow)
{
    zs_sim *s = mk();
    int q = zs_sim_add_queue(s, "a");
    int l = zs_sim_add_link(s, "slow", 1e-3);
    struct zs_err err = {0, ""};
    delay(s, q, 3000000000000000000LL, NULL, 0);
    sub(s, (struct zs_task_desc){.kind = ZS_TASK_DELAY,
                                 .queue = q,
                                 .dur_ns = 3000000000000000000LL,
                                 .name = "long"});
    ck_assert_int_eq(zs_sim_run(s, &err), ZS_ELIMIT);
    ck_assert_str_eq(err.msg, "simulated time overflow: task 'long' (id 1) "
                              "would end after 4000000000000000000 ns (limit "
                              "of the engine)");
    zs_sim_reset(s);
    sub(s, (struct zs_task_desc){.kind = ZS_TASK_FLOW,
                                 .queue = q,
                                 .bytes = 1e18,
                                 .nlinks = 1,
                                 .links = {l},
                                 .name = "trickle"});
    ck_assert_int_eq(zs_sim_run(s, &err), ZS_ELIMIT);
    ck_assert_str_eq(err.msg, "simulated time overflow: task 'trickle' (id 0) "
                              "would end after 4000000000000000000 ns (limit "
                              "of the engine)");
    zs_sim_free(s);
}
END_TEST

/* Every bad submission with its exact message (STYLE 24). */
START_TEST(test_bad_submit)
{
    static const int32_t later = 5, neg = -1;
    static const struct {
        struct zs_task_desc d;
        const char *msg;
    } cases[] = {
        {{.kind = ZS_TASK_DELAY,
          .queue = 0,
          .deps = &later,
          .ndeps = 1,
          .name = "fwd"},
         "invalid dependency of task 'fwd' (id 2): must name an earlier task "
         "in [0, 2) (got 5)"},
        {{.kind = ZS_TASK_DELAY,
          .queue = 0,
          .deps = &neg,
          .ndeps = 1,
          .name = "fwd"},
         "invalid dependency of task 'fwd' (id 2): must name an earlier task "
         "in [0, 2) (got -1)"},
        {{.kind = ZS_TASK_DELAY, .queue = 3, .name = "fwd"},
         "invalid queue of task 'fwd' (id 2): must be in [0, 1) (got 3)"},
        {{.kind = ZS_TASK_DELAY, .queue = 0, .dur_ns = -5, .name = "fwd"},
         "invalid dur_ns of task 'fwd' (id 2): must be >= 0 (got -5)"},
        {{.kind = ZS_TASK_FLOW, .queue = 0, .bytes = 10, .name = "h2d"},
         "unbounded flow 'h2d' (id 2): needs at least one link or a rate_cap "
         "> 0"},
        {{.kind = ZS_TASK_FLOW,
          .queue = 0,
          .bytes = 10,
          .nlinks = 1,
          .links = {4},
          .name = "h2d"},
         "invalid link of flow 'h2d' (id 2): must be in [0, 1) (got 4)"},
        {{.kind = ZS_TASK_FLOW,
          .queue = 0,
          .bytes = -1,
          .nlinks = 1,
          .name = "h2d"},
         "invalid bytes of flow 'h2d' (id 2): must be in [0, 1e18] (got -1)"},
        {{.kind = ZS_TASK_FLOW,
          .queue = 0,
          .bytes = 1,
          .nlinks = 5,
          .name = "h2d"},
         "invalid nlinks of flow 'h2d' (id 2): must be in [0, 4] (got 5)"},
        {{.kind = ZS_TASK_FLOW,
          .queue = 0,
          .bytes = 1,
          .nlinks = 1,
          .weight = {-2},
          .name = "h2d"},
         "invalid weight of flow 'h2d' (id 2) on link 0: must be in [0, "
         "1e6], 0 meaning 1 (got -2)"},
        {{.kind = ZS_TASK_ALLOC, .queue = 0, .pool = 2, .name = "buf"},
         "invalid pool of alloc 'buf' (id 2): must be in [0, 1) (got 2)"},
        {{.kind = ZS_TASK_FREE, .queue = 0, .alloc_task = 1, .name = "f"},
         "invalid alloc_task of free 'f' (id 2): must name an earlier alloc "
         "task (got 1)"},
        {{.kind = ZS_TASK_FREE, .queue = 0, .alloc_task = 0, .name = "f2"},
         "double free in task 'f2' (id 2): buffer of task 0 is already freed "
         "by task 1"},
        {{.kind = ZS_TASK_DELAY, .queue = 0, .cores = -1, .name = "x"},
         "invalid cores of task 'x' (id 2): must be in [0, 32767] (got -1)"},
        {{.kind = ZS_TASK_DELAY, .queue = 0, .cls = 16, .name = "x"},
         "invalid cls of task 'x' (id 2): must be in [0, 15] (got 16)"},
        {{.kind = 9, .queue = 0, .name = "x"},
         "invalid kind of task 'x' (id 2): must be 0..4 (got 9)"},
        {{.kind = ZS_TASK_DELAY, .queue = 0, .snapshot = true, .name = "x"},
         "invalid snapshot on task 'x' (id 2): only a MARK records one"},
        {{.kind = ZS_TASK_MARK,
          .queue = 0,
          .snapshot = true,
          .snapshot_from = 3,
          .name = "m"},
         "invalid snapshot_from of task 'm' (id 2): must be in [0, 2] (got "
         "3)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        zs_sim *s = mk();
        int q = zs_sim_add_queue(s, "q");
        int p = zs_sim_add_pool(s, "gpu", ZS_POOL_PLAIN, 0);
        int32_t a;
        zs_sim_add_link(s, "pcie", 1e9);
        a = alloc(s, q, p, 10, 0);
        release(s, q, a);
        ck_assert_int_eq(zs_sim_submit(s, &cases[i].d), ZS_ERUNTIME);
        ck_assert_str_eq(zs_sim_errmsg(s), cases[i].msg);
        ck_assert_int_eq(zs_sim_ntasks(s), 2);
        zs_sim_free(s);
    }
}
END_TEST

START_TEST(test_bad_topology)
{
    zs_sim *s = mk();
    struct zs_err err = {0, ""};
    int l;
    ck_assert_int_eq(zs_sim_add_link(s, "pcie", 0), ZS_ERUNTIME);
    ck_assert_str_eq(zs_sim_errmsg(s), "invalid capacity of link 'pcie': must "
                                       "be > 0 bytes/s (got 0)");
    ck_assert_int_eq(zs_sim_add_pool(s, "gpu", ZS_POOL_PLAIN, -1), ZS_ERUNTIME);
    ck_assert_str_eq(zs_sim_errmsg(s), "invalid capacity of pool 'gpu': must "
                                       "be >= 0 bytes, 0 for unlimited (got "
                                       "-1)");
    l = zs_sim_add_link(s, "pcie", 1e9);
    zs_sim_add_queue(s, "q");
    flow1(s, 0, 100, l, 0, NULL, 0);
    zs_sim_set_link_capacity(s, l, -3);
    ck_assert_int_eq(zs_sim_run(s, &err), ZS_ERUNTIME);
    ck_assert_str_eq(err.msg, "invalid capacity of link 'pcie': must be > 0 "
                              "bytes/s (got -3)");
    /* set_pool_capacity / set_cores keep a bad value for the run to report */
    zs_sim_set_link_capacity(s, l, 1e9);
    zs_sim_add_pool(s, "gpu", ZS_POOL_PLAIN, 0);
    zs_sim_set_pool_capacity(s, 0, -5);
    ck_assert_int_eq(zs_sim_run(s, &err), ZS_ERUNTIME);
    ck_assert_str_eq(err.msg, "invalid capacity of pool 'gpu': must be >= 0 "
                              "bytes, 0 for unlimited (got -5)");
    zs_sim_set_pool_capacity(s, 0, 0);
    zs_sim_set_cores(s, -1);
    ck_assert_int_eq(zs_sim_run(s, &err), ZS_ERUNTIME);
    ck_assert_str_eq(err.msg,
                     "invalid cores of the cpu pool: must be >= 0 (got -1)");
    zs_sim_set_cores(s, 1);
    ck_assert_int_eq(zs_sim_run(s, &err), ZS_SIM_DONE);
    ck_assert_ptr_null(zs_sim_task(s, 5));
    ck_assert_ptr_null(zs_sim_queue_name(s, 9));
    zs_sim_free(s);
}
END_TEST

/* ---- coupled links (zs_sim_set_link_coupling) --------------------------- */

/* PCIe-like pair: H (H2D) and D (D2H), 1 GB/s each; H offers x0.44 while D
 * is busy, D x1.0 while H is busy (the nvbandwidth #53 shape).  h = 1 GB on
 * H, d = 0.5 GB on D, both from t = 0.
 *   0-500 ms:  d at 1 GB/s ends at 0.5e9 / 1e9 = 500 ms; h at 0.44 GB/s
 *              moves 0.22 GB, 0.78 GB left.
 *   from 500:  D idle: h back to 1 GB/s, 0.78 GB in 780 ms -> ends 1280 ms.
 * Alone h would end at 1000 ms (second run, d removed by making it < 1 B). */
START_TEST(test_coupled_overlap)
{
    zs_sim *s = mk();
    int h = zs_sim_add_link(s, "H", 1e9), d = zs_sim_add_link(s, "D", 1e9);
    int q0 = zs_sim_add_queue(s, "a"), q1 = zs_sim_add_queue(s, "b");
    int32_t fh, fd;
    ck_assert_int_eq(zs_sim_set_link_coupling(s, h, d, 0.44), 0);
    ck_assert_int_eq(zs_sim_set_link_coupling(s, d, h, 1.0), 0);
    fh = flow1(s, q0, 1e9, h, 0, NULL, 0);
    fd = flow1(s, q1, 0.5e9, d, 0, NULL, 0);
    run_ok(s);
    ck_assert_int_eq(END(s, fd), 500 * MS);
    ck_assert_int_eq(END(s, fh), 1280 * MS);
    /* after the run nothing is active: full capacity again */
    ck_assert(zs_sim_link_capacity_now(s, h) == 1e9);
    /* a flow below 1 byte never becomes active (STYLE 21), so it does not
     * turn D busy: h alone, 1e9 / 1e9 = 1000 ms */
    zs_sim_reset(s);
    fh = flow1(s, q0, 1e9, h, 0, NULL, 0);
    fd = flow1(s, q1, 0.5, d, 0, NULL, 0);
    run_ok(s);
    ck_assert_int_eq(END(s, fd), 0);
    ck_assert_int_eq(END(s, fh), 1000 * MS);
    zs_sim_free(s);
}
END_TEST

/* Compute slowed by a concurrent collective, as sched/simulate.c builds it
 * (sm_topology): a compute-stream kernel is a flow of its ns of work over an
 * "SM" link of 1e9 work-ns per s, coupled to the collective fabric at the
 * GPU's overlap_compute_factor (0.841, H100/A100 profiles: arXiv 2507.03114,
 * 18.9 % average slowdown).  Kernel k1 = 1 ms of work from t = 0; on the
 * all-gather stream a 200 us DELAY, then a collective of 5e8 B on a 1e12 B/s
 * fabric (500 us alone); then kernel k2 = 100 us of work after k1.
 *   0-200 us:    k1 alone at 1e9: 200,000 work-ns done, 800,000 left.
 *   200-700 us:  collective runs (not slowed: ends at 700 us); k1 at
 *                0.841e9: 0.841 x 500,000 = 420,500 done, 379,500 left.
 *   from 700 us: k1 alone again: ends 700,000 + 379,500 = 1,079,500 ns
 *                (alone it would end at 1,000,000: +79,500 = 0.159 x 500 us).
 *   k2:          no collective: 1,079,500 + 100,000 = 1,179,500 ns. */
START_TEST(test_coupled_compute_collective)
{
    zs_sim *s = mk();
    int sm = zs_sim_add_link(s, "GPU SMs (compute)", 1e9);
    int fab = zs_sim_add_link(s, "collective fabric", 1e12);
    int qc = zs_sim_add_queue(s, "compute stream");
    int qa = zs_sim_add_queue(s, "all-gather stream");
    int32_t k1, k2, pre, ag;
    ck_assert_int_eq(zs_sim_set_link_coupling(s, sm, fab, 0.841), 0);
    k1 = flow1(s, qc, 1e6, sm, 0, NULL, 0);
    pre = delay(s, qa, 200000, NULL, 0);
    ag = flow1(s, qa, 5e8, fab, 0, NULL, 0);
    k2 = flow1(s, qc, 1e5, sm, 0, NULL, 0);
    run_ok(s);
    ck_assert_int_eq(END(s, pre), 200000);
    ck_assert_int_eq(START(s, ag), 200000);
    ck_assert_int_eq(END(s, ag), 700000);
    ck_assert_int_le(llabs(END(s, k1) - 1079500), 1);
    ck_assert_int_eq(START(s, k2), END(s, k1));
    ck_assert_int_eq(END(s, k2) - START(s, k2), 100000);
    zs_sim_free(s);
}
END_TEST

/* The penalty starts when the other direction turns busy mid-flow and the
 * coupling survives zs_sim_reset (it is topology).  H, D 1 GB/s, H x0.44
 * while D busy.  h = 1 GB from 0; d = 0.25 GB after a 500 ms delay.
 *   0-500:     h alone at 1 GB/s: 0.5 GB moved, 0.5 GB left.
 *   500-750:   d at 1 GB/s ends at 750; h at 0.44: 0.11 GB, 0.39 GB left.
 *   from 750:  h at 1 GB/s: 390 ms -> ends 1140 ms. */
START_TEST(test_coupled_join)
{
    zs_sim *s = mk();
    int h = zs_sim_add_link(s, "H", 1e9), d = zs_sim_add_link(s, "D", 1e9);
    int q0 = zs_sim_add_queue(s, "a"), q1 = zs_sim_add_queue(s, "b");
    int32_t fh, fd;
    ck_assert_int_eq(zs_sim_set_link_coupling(s, h, d, 0.44), 0);
    for (int round = 0; round < 2; round++) {
        zs_sim_reset(s);
        fh = flow1(s, q0, 1e9, h, 0, NULL, 0);
        delay(s, q1, 500 * MS, NULL, 0);
        fd = flow1(s, q1, 0.25e9, d, 0, NULL, 0);
        run_ok(s);
        ck_assert_int_eq(START(s, fd), 500 * MS);
        ck_assert_int_eq(END(s, fd), 750 * MS);
        ck_assert_int_eq(END(s, fh), 1140 * MS);
    }
    /* cleared: h is never penalised -> 1000 ms */
    ck_assert_int_eq(zs_sim_set_link_coupling(s, h, -1, 0), 0);
    zs_sim_reset(s);
    fh = flow1(s, q0, 1e9, h, 0, NULL, 0);
    fd = flow1(s, q1, 0.25e9, d, 0, NULL, 0);
    run_ok(s);
    ck_assert_int_eq(END(s, fh), 1000 * MS);
    zs_sim_free(s);
}
END_TEST

/* The reduced capacity takes part in max-min sharing with other links.
 * H, D 1 GB/s, H x0.44 while D busy; both flows also cross a host bus B of
 * 1 GB/s.  h = 1 GB (H, B), d = 1 GB (D, B).
 *   while both run: the common rate x meets H's 0.44 GB/s before B's 0.5,
 *     so h freezes at 0.44; B leaves 1 - 0.44 = 0.56 GB/s for d.
 *     d ends at 1e9 / 0.56e9 s = 1785714285.7 ns, ceil -> 1785714286 ns;
 *     h has moved 0.44 * 1.7857 = 0.7857 GB, 0.2143 GB left.
 *   then h alone at min(H, B) = 1 GB/s: 214.29 ms more.
 *   h ends at t_d + (1 - 0.44 t_d) = 1 + 0.56 t_d = 1 + 1 = 2 s exactly
 *   (within 1 ns of ceil rounding). */
START_TEST(test_coupled_shared_bus)
{
    zs_sim *s = mk();
    int h = zs_sim_add_link(s, "H", 1e9), d = zs_sim_add_link(s, "D", 1e9);
    int b = zs_sim_add_link(s, "B", 1e9);
    int q0 = zs_sim_add_queue(s, "a"), q1 = zs_sim_add_queue(s, "b");
    int32_t fh, fd;
    ck_assert_int_eq(zs_sim_set_link_coupling(s, h, d, 0.44), 0);
    fh = sub(s, (struct zs_task_desc){.kind = ZS_TASK_FLOW,
                                      .queue = q0,
                                      .bytes = 1e9,
                                      .nlinks = 2,
                                      .links = {h, b}});
    fd = sub(s, (struct zs_task_desc){.kind = ZS_TASK_FLOW,
                                      .queue = q1,
                                      .bytes = 1e9,
                                      .nlinks = 2,
                                      .links = {d, b}});
    run_ok(s);
    ck_assert_int_eq(END(s, fd), 1785714286LL);
    ck_assert(llabs(END(s, fh) - 2000 * MS) <= 1);
    zs_sim_free(s);
}
END_TEST

/* Symmetric coupling, both x0.5: two 1 GB flows, one per direction, each at
 * 0.5 GB/s -> both end at 2000 ms; a third link coupled to nothing stays at
 * full rate (1 GB on 1 GB/s: 1000 ms). */
START_TEST(test_coupled_symmetric)
{
    zs_sim *s = mk();
    int h = zs_sim_add_link(s, "H", 1e9), d = zs_sim_add_link(s, "D", 1e9);
    int z = zs_sim_add_link(s, "Z", 1e9);
    int q0 = zs_sim_add_queue(s, "a"), q1 = zs_sim_add_queue(s, "b");
    int q2 = zs_sim_add_queue(s, "c");
    int32_t fh, fd, fz;
    ck_assert_int_eq(zs_sim_set_link_coupling(s, h, d, 0.5), 0);
    ck_assert_int_eq(zs_sim_set_link_coupling(s, d, h, 0.5), 0);
    fh = flow1(s, q0, 1e9, h, 0, NULL, 0);
    fd = flow1(s, q1, 1e9, d, 0, NULL, 0);
    fz = flow1(s, q2, 1e9, z, 0, NULL, 0);
    run_ok(s);
    ck_assert_int_eq(END(s, fh), 2000 * MS);
    ck_assert_int_eq(END(s, fd), 2000 * MS);
    ck_assert_int_eq(END(s, fz), 1000 * MS);
    zs_sim_free(s);
}
END_TEST

/* Coupling arguments: exact messages. */
START_TEST(test_bad_coupling)
{
    zs_sim *s = mk();
    int h = zs_sim_add_link(s, "H", 1e9);
    int d = zs_sim_add_link(s, "D", 1e9);
    ck_assert_int_eq(zs_sim_set_link_coupling(s, 7, d, 0.5), ZS_ERUNTIME);
    ck_assert_str_eq(zs_sim_errmsg(s), "invalid link of a coupling: must be "
                                       "in [0, 2) (got 7)");
    ck_assert_int_eq(zs_sim_set_link_coupling(s, h, h, 0.5), ZS_ERUNTIME);
    ck_assert_str_eq(zs_sim_errmsg(s),
                     "invalid coupling of link 'H': the other link must be "
                     "another link in [0, 2), or -1 for none (got 0)");
    ck_assert_int_eq(zs_sim_set_link_coupling(s, h, d, 0), ZS_ERUNTIME);
    ck_assert_str_eq(zs_sim_errmsg(s), "invalid coupling factor of link 'H': "
                                       "must be in (0, 1] (got 0)");
    ck_assert_int_eq(zs_sim_set_link_coupling(s, h, d, 1.5), ZS_ERUNTIME);
    ck_assert_str_eq(zs_sim_errmsg(s), "invalid coupling factor of link 'H': "
                                       "must be in (0, 1] (got 1.5)");
    /* replacing a coupling re-links the dependents list */
    ck_assert_int_eq(zs_sim_set_link_coupling(s, h, d, 0.5), 0);
    ck_assert_int_eq(zs_sim_set_link_coupling(s, h, d, 0.25), 0);
    ck_assert_int_eq(zs_sim_set_link_coupling(s, d, h, 0.5), 0);
    ck_assert_int_eq(zs_sim_set_link_coupling(s, h, -1, 0), 0);
    ck_assert(zs_sim_link_capacity_now(s, h) == 1e9);
    ck_assert(zs_sim_link_capacity_now(s, 9) == 0);
    zs_sim_free(s);
}
END_TEST

Suite *suite_engine(void)
{
    Suite *s = suite_create("engine");
    TCase *core = tcase_create("core");
    TCase *limits = tcase_create("limits");
    TCase *bad = tcase_create("bad input");
    tcase_add_test(core, test_flow_share);
    tcase_add_test(core, test_cuda_streams);
    tcase_add_test(core, test_flow_join);
    tcase_add_test(core, test_flow_cap);
    tcase_add_test(core, test_flow_two_links);
    tcase_add_test(core, test_flow_transitive);
    tcase_add_test(core, test_flow_ceil);
    tcase_add_test(core, test_coupled_overlap);
    tcase_add_test(core, test_coupled_join);
    tcase_add_test(core, test_coupled_shared_bus);
    tcase_add_test(core, test_coupled_symmetric);
    tcase_add_test(core, test_coupled_compute_collective);
    tcase_add_test(core, test_chain);
    tcase_add_test(core, test_cross_stream);
    tcase_add_test(core, test_cores);
    tcase_add_test(core, test_cores_fifo);
    tcase_add_test(core, test_fifo_ties);
    tcase_add_test(core, test_plain_live_at_peak);
    tcase_add_test(core, test_live_at_order);
    tcase_add_test(core, test_rerun_same_tasks);
    tcase_add_test(core, test_cuda_reuse);
    tcase_add_test(core, test_cuda_rounding);
    tcase_add_test(core, test_cuda_pools);
    tcase_add_test(core, test_cuda_split_rule);
    tcase_add_test(core, test_cuda_fragmentation);
    tcase_add_test(core, test_cuda_expandable_no_fragmentation);
    tcase_add_test(core, test_cuda_expandable_release);
    tcase_add_test(core, test_cuda_max_split_rules);
    tcase_add_test(core, test_cuda_max_split_release);
    tcase_add_test(core, test_cuda_per_stream);
    tcase_add_test(core, test_cuda_flush);
    tcase_add_test(core, test_cuda_empty_cache);
    tcase_add_test(core, test_snapshot_periodic);
    tcase_add_test(core, test_snapshot_quiet);
    tcase_add_test(core, test_host_pinned);
    tcase_add_test(core, test_host_locked);
    tcase_add_test(core, test_plain_oom);
    tcase_add_test(limits, test_zero_chain);
    tcase_add_test(limits, test_heap_fuzz);
    tcase_add_test(limits, test_heap_reserve_shrink);
    tcase_add_test(limits, test_alloc_failures);
    tcase_add_test(limits, test_reset_reuse);
    tcase_add_test(limits, test_bench_small);
    tcase_add_test(bad, test_deadlock);
    tcase_add_test(bad, test_time_overflow);
    tcase_add_test(bad, test_bad_submit);
    tcase_add_test(bad, test_bad_topology);
    tcase_add_test(bad, test_bad_coupling);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    suite_add_tcase(s, bad);
    return s;
}
