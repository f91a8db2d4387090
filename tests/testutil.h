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

#endif
