/*
 * ds_keys.h — the one description of DeepSpeed's JSON configuration.
 *
 * One table per JSON object DeepSpeed defines (top level, zero_optimization,
 * offload_param, offload_optimizer, aio, optimizer, bf16, fp16,
 * activation_checkpointing), one row per key.  A row says
 *   - how the key is read: type, allowed range, whether "auto" is accepted
 *     (dsconfig.c's reader turns a bad value into one located message);
 *   - DeepSpeed's code default, and the release from which it changed;
 *   - the releases that read the key at all (a renamed key has two rows);
 *   - which zsim setting and flag it is: `--ds-config` copies it into
 *     struct zs_cfg unless the flag was given (zs_ds_keys_to_cfg), and
 *     `plan --emit-ds-config` writes zs_cfg back through the same row
 *     (zs_ds_keys_from_cfg);
 *   - whether the writer prints it in zero_optimization (in table order).
 *
 * The tables are in ds_keys.c, each with its DeepSpeed source.  Only
 * train/dsconfig.c, train/setup.c and plan/plan.c need this header; the rest
 * of zsim uses struct zs_dsconfig (dsconfig.h).
 */
#ifndef ZS_DS_KEYS_H
#define ZS_DS_KEYS_H

#include "train/config.h"
#include "train/dsconfig.h"

#include <stdbool.h>
#include <stddef.h>

enum zs_dk_kind {
    ZS_DK_INT,   /* struct zs_ds_int */
    ZS_DK_NUM,   /* struct zs_ds_num */
    ZS_DK_BOOL,  /* struct zs_ds_bool */
    ZS_DK_ENUM,  /* struct zs_ds_int, index into choices */
    ZS_DK_STR,   /* char[ZS_DS_NAME_MAX] */
    ZS_DK_PATH,  /* char[ZS_DS_PATH_MAX] */
    ZS_DK_BETAS, /* [b1, b2] into optimizer.beta1/beta2 */
    ZS_DK_OBJ,   /* nested table */
    ZS_DK_SKIP   /* known to DeepSpeed, not modelled: any value */
};

#define ZS_DK_AUTO 1u    /* "auto" is filled by HF/Accelerate for this key */
#define ZS_DK_FORBID 2u  /* OBJ: DeepSpeed validates it with extra="forbid" */
#define ZS_DK_OPEN 4u    /* OBJ: open dict (optimizer params): no notes */
#define ZS_DK_PRESENT 8u /* OBJ: sets a `bool present` at off */
#define ZS_DK_ALIAS 16u  /* another name of the row before it: no default,
                            no zsim setting, not written */
#define ZS_DK_WRITE 32u  /* the writer prints it in its object, in table
                            order */
#define ZS_DK_IN_BLOCK 64u /* to zs_cfg whenever its object is present (its
                              default when the key is absent), not only when
                              the key is set */

/* The zsim side of a row: a field of struct zs_cfg and its C type. */
enum zs_dk_ctype { ZS_DKC_NONE = 0, ZS_DKC_I64, ZS_DKC_INT, ZS_DKC_BOOL,
                   ZS_DKC_DOUBLE };
struct zs_dk_cfg {
    size_t off;
    enum zs_dk_ctype type;
};

struct zs_dtab;
struct zs_dkey {
    const char *key;
    enum zs_dk_kind kind;
    size_t off; /* in struct zs_dsconfig */
    double min, max;
    unsigned flags;
    const char *const *choices;
    const struct zs_dtab *sub;
    size_t loc_off; /* OBJ with PRESENT: offset of int line (col follows) */
    /* DeepSpeed's default; from release def2_from on it is def2 */
    double def;
    struct zs_ds_version def2_from;
    double def2;
    /* the releases that read the key: [since, until); {0} is open */
    struct zs_ds_version since, until;
    /* zsim: the flag that sets the same thing ("micro-batch"), the field a
     * DeepSpeed JSON fills (in), and the field the emitted JSON is written
     * from (out: a resolved field where the flag's field is only a request,
     * e.g. grad_accum -> accum) */
    const char *flag;
    struct zs_dk_cfg in, out;
    /* "auto" from the model's hidden size h, as HF Transformers and TRL
     * fill it under ZeRO-3; NULL: not from h */
    int64_t (*auto_of_hidden)(int64_t h);
};
struct zs_dtab {
    const struct zs_dkey *keys;
    size_t n;
};

/* The top-level table (the reader's root) and zero_optimization's. */
const struct zs_dtab *zs_ds_keys_top(void);
const struct zs_dtab *zs_ds_keys_zero(void);
/* The choices of enum rows (index = enum value). */
extern const char *const zs_ds_device_names[];
extern const char *const zs_ds_dtype_names[]; /* [0] "" stands for null */

/* Stores v (an enum's index, a bool as 0/1) into a value row's field with
 * its origin. */
void zs_ds_field_put(struct zs_dsconfig *c, const struct zs_dkey *k, double v,
                     enum zs_ds_origin from);
/* Every row's default for c->version (c->version set, the rest zeroed). */
void zs_ds_keys_defaults(struct zs_dsconfig *c);
/* DeepSpeed JSON -> zs_cfg: each row with an `in` field whose key was set
 * (or "auto"-resolved), or whose object is present for IN_BLOCK rows, unless
 * its flag is in given. */
void zs_ds_keys_to_cfg(const struct zs_dsconfig *ds, struct zs_cfg *cfg,
                       const struct zs_cfg_given *given);
/* zs_cfg -> DeepSpeed JSON: each row with an `out` field, marked set. */
void zs_ds_keys_from_cfg(const struct zs_cfg *cfg, struct zs_dsconfig *ds);
/* Whether a field marked "auto" takes its resolved value: true when it is
 * ZS_DS_AUTO and can be resolved; when it cannot, it becomes
 * ZS_DS_AUTO_UNRESOLVED (DeepSpeed then drops the key and keeps its
 * default, config_utils.py). */
bool zs_ds_auto_take(enum zs_ds_origin *from, bool can);
/* "auto" of every ZeRO-3 row resolved from the hidden size h: into the
 * DeepSpeed config (rows still ZS_DS_AUTO; can: stage 3 and h known, else
 * they become ZS_DS_AUTO_UNRESOLVED) ... */
void zs_ds_keys_auto_hidden(struct zs_dsconfig *ds, bool can, int64_t h);
/* ... and into the zsim settings whose flag said "auto" (stored as < 0). */
void zs_ds_keys_auto_hidden_cfg(struct zs_cfg *cfg, int64_t h);
/* The key's DeepSpeed default for release v (0 for an unknown key). */
double zs_ds_key_default(const char *qualified, const struct zs_ds_version *v);
/* Whether release v reads the key ("aio.thread_count"); unknown keys: true. */
bool zs_ds_key_read_by(const char *qualified, const struct zs_ds_version *v);

#endif
