/*
 * ds_version.h — a DeepSpeed release number and the one predicate every
 * version-dependent rule asks ("is it at least X.Y.Z?").  DeepSpeed changes
 * defaults and behaviour between patch releases (offload pin_memory and the
 * non-blocking grad copy from 0.19.5, PR #8207; bf16 master weights from
 * 0.18.3, PR #7700; aio "intra_op_parallelism" from 0.16.4, PR #7056), so the
 * simulator, the DeepSpeed JSON reader and lint each ask this type instead
 * of comparing parts by hand.  A plain value; nothing is allocated.
 */
#ifndef ZS_DS_VERSION_H
#define ZS_DS_VERSION_H

#include "util/err.h"

#include <stdbool.h>
#include <stddef.h>

struct zs_ds_version {
    int major, minor, patch; /* all 0: unknown */
};

/* The version assumed when none is given: the newest release whose source the
 * reference was read from (v0.19.6, reference §0 snapshot B). */
#define ZS_DS_VERSION_ASSUMED "0.19.6"

/* Parses "X.Y.Z" (each part 0..999; a leading 'v' and a trailing local/pre-
 * release part such as "+cu121" or "rc1" after Z are accepted).  Errors are
 * ZS_EUSAGE: "invalid DeepSpeed version 'x': must be X.Y.Z, e.g. 0.14.2". */
int zs_ds_version_parse(const char *text, struct zs_ds_version *out,
                        struct zs_err *err);
/* The same grammar for a flag's value: "invalid value for '--FLAG': must be
 * X.Y.Z with each part in [0, 999], e.g. 0.14.2 (got 'x')" (ZS_EUSAGE). */
int zs_ds_version_parse_flag(const char *text, const char *flag,
                             struct zs_ds_version *out, struct zs_err *err);
/* <0, 0, >0 like strcmp. */
int zs_ds_version_cmp(const struct zs_ds_version *a,
                      const struct zs_ds_version *b);
/* Whether v is major.minor.patch or later. */
bool zs_ds_at_least(const struct zs_ds_version *v, int major, int minor,
                    int patch);
/* "0.14.2" into buf (>= 16 bytes). */
char *zs_ds_version_fmt(const struct zs_ds_version *v, char *buf, size_t cap);

#endif
