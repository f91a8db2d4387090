/*
 * validateout.h — what `zsim validate` prints: per task class and per
 * quantity predicted, measured and error for one measured file (text, or
 * schema "zsim.validate/1"), and the published corpus's rows, error
 * statistics and runs not modelled (text, or "zsim.validate-published/1").
 */
#ifndef ZS_VALIDATEOUT_H
#define ZS_VALIDATEOUT_H

#include "formats/measured_io.h"
#include "validate/published_set.h"
#include "util/err.h"

/* Return 0, or ZS_ENOMEM (text) / a negative code with err set (JSON). */
int zs_validateout_text(const char *path, const struct zs_measured *m,
                        const struct zs_validation *v, double mem_lim,
                        double time_lim);
int zs_validateout_json(const char *path, const struct zs_measured *m,
                        const struct zs_validation *v, double mem_lim,
                        double time_lim, struct zs_err *err);
int zs_validateout_pub_text(const char *dir, const struct zs_pub_set *s);
/* A cJSON * as void * (cJSON stays inside present/); NULL when out of
 * memory.  The caller prints and deletes it. */
void *zs_validateout_pub_json(const struct zs_pub_set *s);
/* Errors are reported to two decimals, in the documents and in
 * zsim.accuracy/1. */
double zs_validateout_round2(double x);

#endif
