/*
 * testutil.h — helpers shared by the Check suites: applying "k=v;k=v" flag
 * strings to a configuration the way the CLI does.  Header-only (static
 * functions): CMake builds every tests/check_*.c into one runner and this
 * file is not a suite.
 */
#ifndef ZS_TESTS_TESTUTIL_H
#define ZS_TESTS_TESTUTIL_H

#include "train/config.h"
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

#endif
