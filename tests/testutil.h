/*
 * testutil.h — helpers shared by the Check suites: applying "k=v;k=v" flag
 * strings to a configuration the way the CLI does, and simulating one run.  Header-only (static
 * functions): CMake builds every tests/check_*.c into one runner and this
 * file is not a suite.
 */
#ifndef ZS_TESTS_TESTUTIL_H
#define ZS_TESTS_TESTUTIL_H

#include "sched/sched.h"
#include "train/config.h"
#include "train/setup.h"
#include "util/err.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

/* The framework configurations the accum and replay suites sweep, as
 * {name, "k=v;..."} initialisers: DeepSpeed ZeRO-3 (offload none,
 * optimizer, optimizer + params), ZeRO-2 (offload none, optimizer), FSDP2
 * under each trainer (HF's no_sync, torchtitan, torchtune) with offload
 * none and cpu, FSDP1 with offload none and cpu. */
/* clang-format off */
#define ZT_FRAMEWORK_CONFIGS \
    {"ds z3", "framework=deepspeed;zero=3"}, \
    {"ds z3 off-opt", "framework=deepspeed;zero=3;offload-optimizer=cpu"}, \
    {"ds z3 off-both", \
     "framework=deepspeed;zero=3;offload-optimizer=cpu;" \
     "offload-param=cpu"}, \
    {"ds z2", "framework=deepspeed;zero=2"}, \
    {"ds z2 off-opt", "framework=deepspeed;zero=2;offload-optimizer=cpu"}, \
    {"fsdp2 hf", "framework=fsdp2;trainer=hf"}, \
    {"fsdp2 hf off", \
     "framework=fsdp2;trainer=hf;offload-optimizer=cpu;" \
     "offload-param=cpu"}, \
    {"fsdp2 torchtitan", "framework=fsdp2;trainer=torchtitan"}, \
    {"fsdp2 torchtitan off", \
     "framework=fsdp2;trainer=torchtitan;offload-optimizer=cpu;" \
     "offload-param=cpu"}, \
    {"fsdp2 torchtune", "framework=fsdp2;trainer=torchtune"}, \
    {"fsdp2 torchtune off", \
     "framework=fsdp2;trainer=torchtune;offload-optimizer=cpu;" \
     "offload-param=cpu"}, \
    {"fsdp1", "framework=fsdp2;fsdp-version=1"}, \
    {"fsdp1 off", \
     "framework=fsdp2;fsdp-version=1;offload-optimizer=cpu;" \
     "offload-param=cpu"}
/* clang-format on */

/* Applies "k=v;k=v" (flag names without the dashes) to c; each must be
 * accepted. */
static inline void zt_apply_flags(struct zs_cfg *c, const char *flags)
{
    char buf[512], *save = NULL;
    struct zs_err err = {0, ""};
    ck_assert_msg(strlen(flags) < sizeof buf, "flags too long: %s", flags);
    snprintf(buf, sizeof buf, "%s", flags);
    for (char *kv = strtok_r(buf, ";", &save); kv;
         kv = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(kv, '=');
        ck_assert_msg(eq != NULL, "not k=v: %s", kv);
        *eq = '\0';
        ck_assert_msg(zs_cfg_apply_flag(c, kv, eq + 1, &err) == 0, "%s",
                      err.msg);
    }
}

/* One simulated run and what it keeps alive (model, cluster, result, the
 * exported tasks when asked). */
struct zt_run {
    struct zs_cfg cfg;
    struct zs_model m;
    struct zs_cluster cl;
    struct zs_sim_result res;
    struct zs_export ex;
};

/* Resolves the defaults, then `base` and `flags` ("k=v;k=v"; NULL for
 * none), as `zsim simulate` does; the setup must be accepted. */
static inline void zt_resolve(struct zt_run *r, const char *base,
                              const char *flags)
{
    struct zs_err err = {0, ""};
    zs_cfg_defaults(&r->cfg);
    if (base)
        zt_apply_flags(&r->cfg, base);
    if (flags)
        zt_apply_flags(&r->cfg, flags);
    ck_assert_msg(zs_setup_resolve(&r->cfg, NULL, &r->m, &r->cl, &err) == 0,
                  "%s", err.msg);
}

/* zt_resolve, then simulates the run (the engine `sim`, NULL for a fresh
 * one; with `export` the tasks' bytes by kind go to r->ex); it must
 * succeed. */
static inline void zt_simulate(struct zt_run *r, const char *base,
                               const char *flags, zs_sim *sim, bool export)
{
    struct zs_err err = {0, ""};
    struct zs_setup su = {0};
    zt_resolve(r, base, flags);
    su.model = &r->m;
    su.cluster = &r->cl;
    su.cfg = &r->cfg;
    memset(&r->ex, 0, sizeof r->ex);
    su.ex = export ? &r->ex : NULL;
    ck_assert_msg(zs_simulate(&su, sim, &r->res, &err) == 0, "%s", err.msg);
}

/* One bad flag value: zs_cfg_apply_flag refuses it (exit 2) with exactly
 * `msg`. */
static inline void zt_expect_bad_flag(const char *flag, const char *value,
                                      const char *msg)
{
    struct zs_cfg c;
    struct zs_err err = {0, ""};
    zs_cfg_defaults(&c);
    ck_assert_int_eq(zs_cfg_apply_flag(&c, flag, value, &err), ZS_EUSAGE);
    ck_assert_str_eq(err.msg, msg);
}

/* Flags "k=v;k=v" that each parse but together are refused when the
 * configuration is resolved (model 7b), with exactly `msg`. */
static inline void zt_expect_resolve_error(const char *flags, const char *msg)
{
    struct zs_cfg c;
    struct zs_model m;
    struct zs_cluster cl;
    struct zs_err err = {0, ""};
    zs_cfg_defaults(&c);
    snprintf(c.model, sizeof c.model, "7b");
    zt_apply_flags(&c, flags);
    ck_assert_int_eq(zs_setup_resolve(&c, NULL, &m, &cl, &err), ZS_EUSAGE);
    ck_assert_str_eq(err.msg, msg);
}

/* The larger of the first and steady steps' peak GPU reserved and
 * allocated bytes of a result. */
static inline int64_t zt_peak_reserved(const struct zs_sim_result *r)
{
    return r->first.peak_gpu_reserved > r->steady.peak_gpu_reserved
               ? r->first.peak_gpu_reserved
               : r->steady.peak_gpu_reserved;
}

static inline int64_t zt_peak_allocated(const struct zs_sim_result *r)
{
    return r->first.peak_gpu_allocated > r->steady.peak_gpu_allocated
               ? r->first.peak_gpu_allocated
               : r->steady.peak_gpu_allocated;
}

/* Comparing two results field by field (the accumulation shortcut against
 * the full simulation, the planner against `zsim simulate`): each writes
 * the first difference into why ("<field> <first> vs <second>") and
 * returns whether there is one.  Two step results: */
static inline bool zt_step_differs(const struct zs_step_result *a,
                                   const struct zs_step_result *b, char *why,
                                   size_t cap)
{
#define NUM(f)                                                                 \
    if (a->f != b->f) {                                                        \
        snprintf(why, cap, #f " %lld vs %lld", (long long)a->f,                \
                 (long long)b->f);                                             \
        return true;                                                           \
    }
#define DBL(f)                                                                 \
    if (a->f != b->f) {                                                        \
        snprintf(why, cap, #f " %.9f vs %.9f", a->f, b->f);                    \
        return true;                                                           \
    }
#define STR(f)                                                                 \
    if (strcmp(a->f, b->f)) {                                                  \
        snprintf(why, cap, #f " '%.200s' vs '%.200s'", a->f, b->f);            \
        return true;                                                           \
    }
    NUM(time_ns);
    DBL(time_s);
    DBL(br_compute);
    DBL(br_coll);
    DBL(br_pcie);
    DBL(br_opt);
    DBL(br_other);
    DBL(br_nvme);
    NUM(peak_gpu_allocated);
    NUM(peak_gpu_reserved);
    NUM(peak_host_per_node);
    NUM(pinned_host_per_node);
    NUM(peak_host_per_rank);
    NUM(pinned_host_per_rank);
    NUM(cache_flushes);
    DBL(tokens_per_s_per_gpu);
    DBL(mfu);
    STR(bottleneck);
    STR(gpu_peak_where);
    STR(host_peak_where);
    NUM(n_gpu_live);
    NUM(n_host_live);
    for (int i = 0; i < a->n_gpu_live; i++) {
        STR(gpu_live[i].name);
        NUM(gpu_live[i].bytes);
    }
    for (int i = 0; i < a->n_host_live; i++) {
        STR(host_live[i].name);
        NUM(host_live[i].bytes);
    }
#undef NUM
#undef DBL
#undef STR
    return false;
}

/* Two OOM verdicts: */
static inline bool zt_oom_differs(const struct zs_oom_info *a,
                                  const struct zs_oom_info *b, char *why,
                                  size_t cap)
{
#define NUM(f)                                                                 \
    if (a->f != b->f) {                                                        \
        snprintf(why, cap, "oom." #f " %lld vs %lld", (long long)a->f,         \
                 (long long)b->f);                                             \
        return true;                                                           \
    }
#define STR(f)                                                                 \
    if (strcmp(a->f, b->f)) {                                                  \
        snprintf(why, cap, "oom." #f " '%s' vs '%s'", a->f, b->f);             \
        return true;                                                           \
    }
    NUM(where);
    STR(phase);
    NUM(step);
    NUM(micro);
    STR(module);
    NUM(needed_bytes);
    NUM(available_bytes);
    NUM(request_bytes);
    NUM(needed_reserved_bytes);
    NUM(allocated_at_oom);
    NUM(reserved_at_oom);
#undef NUM
#undef STR
    return false;
}

/* Two results: the OOM verdict, both steps, and for a planner's
 * verdict-only result whether it is partial. */
static inline bool zt_result_differs(const struct zs_sim_result *a,
                                     const struct zs_sim_result *b, char *why,
                                     size_t cap)
{
    if (a->partial != b->partial) {
        snprintf(why, cap, "partial %d vs %d", a->partial, b->partial);
        return true;
    }
    return zt_oom_differs(&a->oom, &b->oom, why, cap) ||
           zt_step_differs(&a->first, &b->first, why, cap) ||
           zt_step_differs(&a->steady, &b->steady, why, cap);
}

#endif
