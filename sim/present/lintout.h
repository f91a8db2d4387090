/*
 * lintout.h — what `zsim lint` prints: the configuration read, a table of
 * findings, each finding in full (where, why, source, fix) and a one-line
 * verdict; or one JSON document (schema "zsim.lint/1").
 */
#ifndef ZS_LINTOUT_H
#define ZS_LINTOUT_H

#include "train/dsconfig.h"
#include "train/lint.h"
#include "util/err.h"

#include <stdio.h>

void zs_lintout_text(const struct zs_dsconfig *ds,
                     const struct zs_lint_report *r,
                     const struct zs_lint_input *in, FILE *out);
/* Returns 0, or ZS_ENOMEM with err set (nothing printed). */
int zs_lintout_json(const struct zs_dsconfig *ds,
                    const struct zs_lint_report *r,
                    const struct zs_lint_input *in, FILE *out,
                    struct zs_err *err);

#endif
