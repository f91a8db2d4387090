/*
 * check_replay.c — micro-step replay (sched/replay.c, docs/engine.md
 * "Replaying a micro-step"): a build that gives a micro-step (or its
 * forward, or its backward) the tasks of one built before in the same state
 * submits exactly the tasks of a build that builds every micro-step, compared field by field from the engine
 * (zs_sim_task_desc: kind, queue, dependencies, name, class, tag, cores,
 * duration, a flow's bytes, cap, links and weights, an ALLOC's pool, bytes
 * and flags, a FREE's ALLOC, snapshots), counts the same tasks after the
 * prefix cut (what the count reads of each, in order), and gives the same
 * result, byte for byte.  Every configuration of the accum suite, and
 * activation offload, NVMe offload, LoRA and QLoRA, sequence parallel and
 * the optimizer in backward; in `zsim simulate`'s setup (three steps, and
 * with every micro-step simulated), the planner's, and the planner's
 * verdict-only one with the prefix cut on GPUs squeezed until it counts.
 * The replays must have happened: the segments replayed and the tasks
 * counted by a replay are checked to be positive.
 */
#include "sched/sched.h"
#include "train/setup.h"
#include "util/alloc.h"

#include "testutil.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

/* The tasks a build counted after the prefix cut (zs_setup.count_log). */
struct clog {
    struct zs_counted *e;
    size_t n, cap;
    size_t replayed; /* of them, counted by a replay */
};

static void log_counted(void *arg, const struct zs_counted *c)
{
    struct clog *l = arg;
    ck_assert_int_eq(zs_grow((void **)&l->e, &l->cap, l->n + 1, sizeof *l->e),
                     0);
    l->e[l->n++] = *c;
    l->replayed += c->replayed;
}

/* The first field in which task id of sims a and b differ, into why. */
static bool task_differs(const zs_sim *a, const zs_sim *b, int32_t id,
                         char *why, size_t cap)
{
    struct zs_task_desc x, y;
    int32_t dx[8], dy[8];
    ck_assert_int_eq(zs_sim_task_desc(a, id, &x, dx, 8), 0);
    ck_assert_int_eq(zs_sim_task_desc(b, id, &y, dy, 8), 0);
#define F(f)                                                                   \
    if (x.f != y.f) {                                                          \
        snprintf(why, cap, "task %d: " #f " differs", id);                     \
        return true;                                                           \
    }
    F(kind)
    F(queue)
    F(ndeps)
    for (int i = 0; i < x.ndeps; i++)
        F(deps[i])
    F(name)
    F(cls)
    F(tag)
    F(cores)
    F(dur_ns)
    F(bytes)
    F(rate_cap)
    F(nlinks)
    for (int i = 0; i < x.nlinks; i++) {
        F(links[i])
        F(weight[i])
    }
    F(pool)
    F(alloc_bytes)
    F(alloc_flags)
    F(alloc_task)
    F(snapshot)
    F(snapshot_from)
#undef F
    return false;
}

/* The first counted task in which logs a and b differ (the replayed flag
 * aside), into why. */
static bool counted_differ(const struct clog *a, const struct clog *b,
                           char *why, size_t cap)
{
    if (a->n != b->n) {
        snprintf(why, cap, "%zu tasks counted vs %zu", a->n, b->n);
        return true;
    }
    for (size_t i = 0; i < a->n; i++) {
        const struct zs_counted *x = &a->e[i], *y = &b->e[i];
#define F(f)                                                                   \
    if (x->f != y->f) {                                                        \
        snprintf(why, cap, "counted task %d: " #f " %lld vs %lld", x->id,      \
                 (long long)x->f, (long long)y->f);                            \
        return true;                                                           \
    }
        F(id)
        F(kind)
        F(queue)
        F(cores)
        F(pool)
        F(alloc_bytes)
        F(alloc_task)
        F(ndeps)
        for (int k = 0; k < x->ndeps; k++)
            F(deps[k])
#undef F
    }
    return false;
}

/* How a comparison simulates: `zsim simulate`'s setup (its steps), the same
 * with every micro-step simulated, the planner's, and the planner's for a
 * verdict only (prefix cut) with every micro-step simulated. */
enum mode { M_SIMULATE, M_ALL, M_PLAN, M_VERDICT, M_COUNT };
static const char *const mode_name[M_COUNT] = {"simulate", "all micro-steps",
                                               "plan", "plan verdict-only"};

/* What the comparisons replayed, over a test. */
struct tally {
    int64_t micro_replayed;
    size_t counted_replayed;
    int runs, counting_runs;
};

/* r's configuration in mode m, built with every micro-step (no replay) on
 * sim a and with replays on sim b (the cache bc): whether the tasks, the
 * counts or the results differ (printed with name and what). */
static bool differs(struct zt_run *r, zs_sim *a, zs_sim *b,
                    struct zs_build_cache *bc, enum mode m, const char *name,
                    const char *what, struct tally *t)
{
    struct zs_sim_result ra, rb;
    struct zs_setup su = {0};
    struct zs_err err = {0, ""};
    struct clog la = {0}, lb = {0};
    int64_t built0, rep0, built1, rep1;
    char why[1024] = "";
    bool bad = false;
    su.model = &r->m;
    su.cluster = &r->cl;
    su.cfg = &r->cfg;
    su.plan_mode = m == M_PLAN || m == M_VERDICT;
    su.all_micro_steps = m == M_ALL || m == M_VERDICT;
    su.verdict_only = su.prefix_cut = m == M_VERDICT;
    su.count_log = log_counted;
    su.no_replay = true;
    su.count_log_arg = &la;
    ck_assert_msg(zs_simulate(&su, a, &ra, &err) == 0, "%s: %s", name, err.msg);
    su.no_replay = false;
    su.cache = bc;
    su.count_log_arg = &lb;
    zs_build_cache_stats(bc, &built0, &rep0);
    ck_assert_msg(zs_simulate(&su, b, &rb, &err) == 0, "%s: %s", name, err.msg);
    zs_build_cache_stats(bc, &built1, &rep1);
    if (zs_sim_ntasks(a) != zs_sim_ntasks(b)) {
        snprintf(why, sizeof why, "%d tasks vs %d", zs_sim_ntasks(a),
                 zs_sim_ntasks(b));
        bad = true;
    }
    for (int32_t id = 0; !bad && id < zs_sim_ntasks(a); id++)
        bad = task_differs(a, b, id, why, sizeof why);
    if (!bad)
        bad = counted_differ(&la, &lb, why, sizeof why);
    if (!bad && memcmp(&ra, &rb, sizeof ra)) {
        if (!zt_result_differs(&ra, &rb, why, sizeof why))
            snprintf(why, sizeof why, "results differ (a field not named)");
        bad = true;
    }
    if (bad)
        fprintf(stderr, "%s (%s) %s: %s\n", name, mode_name[m], what, why);
    t->micro_replayed += rep1 - rep0;
    t->counted_replayed += lb.replayed;
    t->runs++;
    t->counting_runs += lb.n > 0;
    zs_free(la.e);
    zs_free(lb.e);
    return bad;
}

/* The accum suite's configurations (testutil.h ZT_FRAMEWORK_CONFIGS), and
 * more state for the replay to carry: activation offload, NVMe offload,
 * LoRA and QLoRA, sequence parallel. */
static const char *const configs[][2] = {
    ZT_FRAMEWORK_CONFIGS,
    {"ds z3 nvme", "framework=deepspeed;zero=3;offload-optimizer=nvme;"
                   "offload-param=nvme"},
    {"ds z3 cpu-ckpt", "framework=deepspeed;zero=3;cpu-checkpointing=yes"},
    {"fsdp2 torchtune act-off", "framework=fsdp2;trainer=torchtune;"
                                "offload-activations=yes"},
    {"ds z3 lora", "framework=deepspeed;zero=3;method=lora"},
    {"fsdp1 qlora", "framework=fsdp2;fsdp-version=1;method=qlora"},
    {"ds z3 sp2", "framework=deepspeed;zero=3;sp=2"},
};
#define NCONFIGS (sizeof configs / sizeof configs[0])

/* Configuration i of `configs` on `base`, with checkpointing full and none,
 * at accumulations 1-5, 8 and 16, in every mode. */
static void sweep(const char *base, int i, struct tally *t)
{
    static const int accum[] = {1, 2, 3, 4, 5, 8, 16};
    int bad = 0;
    zs_sim *a = zs_sim_new(), *b = zs_sim_new();
    struct zs_build_cache *bc = zs_build_cache_new();
    ck_assert(a && b && bc);
    /* activation offload needs full checkpointing */
    bool full_only = strstr(configs[i][1], "cpu-checkpointing=yes") ||
                     strstr(configs[i][1], "offload-activations=yes");
    for (int ck = full_only; ck < 2; ck++)
        for (size_t k = 0; k < sizeof accum / sizeof accum[0]; k++)
            for (int m = 0; m < M_COUNT; m++) {
                struct zt_run r;
                char f[400], what[64];
                snprintf(f, sizeof f, "%s;%s;checkpointing=%s;grad-accum=%d%s",
                         base, configs[i][1], ck ? "full" : "none", accum[k],
                         m == M_SIMULATE ? ";steps=3" : "");
                snprintf(what, sizeof what, "ckpt %s, accum %d",
                         ck ? "full" : "none", accum[k]);
                zt_resolve(&r, NULL, f);
                bad +=
                    differs(&r, a, b, bc, (enum mode)m, configs[i][0], what, t);
            }
    zs_sim_free(a);
    zs_sim_free(b);
    zs_build_cache_free(bc);
    ck_assert_msg(bad == 0, "%s: %d builds differ (printed above)",
                  configs[i][0], bad);
}

/* tests/data/good/model-tiny.json on 8 ranks, every configuration */
START_TEST(test_tiny)
{
    struct tally t = {0};
    sweep("model=tests/data/good/model-tiny.json;gpus=8xH100;seq-len=512", _i,
          &t);
    /* accumulation 4 and more replays in every configuration */
    ck_assert_int_gt(t.micro_replayed, 0);
}
END_TEST

/* One configuration (flags) built both ways in every mode; every build
 * must agree.  Returns the tally. */
static struct tally every_mode(const char *flags, const char *name,
                               const char *what)
{
    struct tally t = {0};
    zs_sim *a = zs_sim_new(), *b = zs_sim_new();
    struct zs_build_cache *bc = zs_build_cache_new();
    int bad = 0;
    ck_assert(a && b && bc);
    for (int m = 0; m < M_COUNT; m++) {
        struct zt_run r;
        zt_resolve(&r, NULL, flags);
        bad += differs(&r, a, b, bc, (enum mode)m, name, what, &t);
    }
    zs_sim_free(a);
    zs_sim_free(b);
    zs_build_cache_free(bc);
    ck_assert_int_eq(bad, 0);
    return t;
}

/* The optimizer stepped in backward (torchtune, accumulation 1 only): the
 * lazily made states are appended to in the first step's micro-step; later
 * steps' first micro-steps replay each other. */
START_TEST(test_optimizer_in_bwd)
{
    struct tally t = every_mode(
        "model=tests/data/good/model-hf-Llama-2-7b-2l.json;gpus=8xH100;"
        "framework=fsdp2;trainer=torchtune;optimizer-in-bwd=yes;grad-accum=1;"
        "steps=3",
        "fsdp2 in-bwd", "accum 1");
    ck_assert_int_gt(t.micro_replayed, 0);
}
END_TEST

/* The prefix cut counting replayed micro-steps: every configuration on
 * Llama-2-7B's 2-layer config at accumulation 16, every micro-step
 * simulated, on GPUs squeezed by another tenant to 6 capacities from the
 * peak the run reserves down to 2/3 of what it allocates (the OOM in
 * different micro-steps; a prefix of 4096 tasks then counts the rest where
 * the build is longer). */
START_TEST(test_counting)
{
    const char *base = "model=tests/data/good/model-hf-Llama-2-7b-2l.json;"
                       "gpus=8xH100;checkpointing=full;grad-accum=16";
    struct tally t = {0};
    int bad = 0;
    zs_sim *a = zs_sim_new(), *b = zs_sim_new();
    struct zs_build_cache *bc = zs_build_cache_new();
    ck_assert(a && b && bc);
    for (size_t i = 0; i < NCONFIGS; i++) {
        struct zt_run r;
        char f[400], what[64];
        int64_t peak, low, cap;
        snprintf(f, sizeof f, "%s;%s", base, configs[i][1]);
        zt_simulate(&r, NULL, f, NULL, false);
        ck_assert_int_eq(r.res.oom.where, ZS_OOM_NONE);
        peak = zt_peak_reserved(&r.res);
        low = zt_peak_allocated(&r.res);
        low = low / 3 * 2;
        cap = r.res.gpu_capacity_bytes;
        for (int k = 1; k <= 6; k++) {
            zt_resolve(&r, NULL, f);
            r.cfg.gpu_reserved_bytes = cap - peak + k * ((peak - low) / 6);
            r.cfg.gpu_reserved_gpus = 0;
            snprintf(what, sizeof what, "accum 16, capacity %d/6 down", k);
            bad += differs(&r, a, b, bc, M_VERDICT, configs[i][0], what, &t);
        }
    }
    zs_sim_free(a);
    zs_sim_free(b);
    zs_build_cache_free(bc);
    ck_assert_msg(bad == 0, "%d builds differ (printed above)", bad);
    ck_assert_int_gt(t.counting_runs, 0);
    ck_assert_int_gt(t.counted_replayed, 0);
}
END_TEST

/* Qwen2.5-72B (80 layers, 8 ranks), ZeRO-3 with both offloads at micro 1 x
 * accumulation 8 (the 72B plan's largest kind of candidate), in every
 * mode: the states of hundreds of units, and the prefix cut. */
START_TEST(test_72b)
{
    struct tally t =
        every_mode("model=72b;gpus=8xH100;framework=deepspeed;zero=3;"
                   "offload-optimizer=cpu;offload-param=cpu;procs=8;"
                   "micro-batch=1;grad-accum=8;checkpointing=full",
                   "72b z3 off-both", "accum 8");
    ck_assert_int_gt(t.micro_replayed, 0);
}
END_TEST

Suite *suite_replay(void)
{
    Suite *s = suite_create("replay");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 3600);
    tcase_add_loop_test(tc, test_tiny, 0, NCONFIGS);
    tcase_add_test(tc, test_optimizer_in_bwd);
    tcase_add_test(tc, test_counting);
    tcase_add_test(tc, test_72b);
    suite_add_tcase(s, tc);
    return s;
}
