/*
 * published_io.h — the corpus of public measured training runs
 * ("zsim.published/1", validation/published/NAME.json; docs/validation.md) and
 * its comparison with zsim's predictions, behind `zsim validate --published`.
 *
 * One file is one run somebody else measured and published: where (URL,
 * commit or date, the quoted text or table row), on what hardware, the zsim
 * arguments that describe the same setup, what was measured (with unit and
 * what exactly it is), and `needs`: setup features zsim does not model yet.
 * A run with needs is reported as not modelled and is not compared.
 *
 * A run that died of an out-of-memory error the source reports (the node's
 * RAM or the GPU named, with the setup) gives "oom" instead of figures:
 * zsim must predict the same OOM (host or GPU, and the phase where the
 * source names it).  With --dataset-samples in its args the whole run is
 * composed (run/run.h: model load, init, steps, saves), else the step
 * simulation alone.
 */
#ifndef ZS_PUBLISHED_IO_H
#define ZS_PUBLISHED_IO_H

#include "util/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ZS_PUBLISHED_SCHEMA "zsim.published/1"
#define ZS_ACCURACY_SCHEMA "zsim.accuracy/1"

#define ZS_PUB_NAME_CAP 96
#define ZS_PUB_TEXT_CAP 256
#define ZS_PUB_QUOTE_CAP 4096
#define ZS_PUB_ARG_CAP 128
#define ZS_PUB_MAX_ARGS 48  /* 24 flags with values */
#define ZS_PUB_MAX_NEEDS 16 /* features one run may lack */
#define ZS_PUB_MAX_MEAS 8   /* one per quantity, at most */

/* What a published figure is. */
enum zs_pub_qty {
    ZS_PQ_STEP_TIME,     /* optimizer step (all micro-batches), seconds */
    ZS_PQ_TOKENS,        /* tokens per second per GPU */
    ZS_PQ_GPU_ALLOCATED, /* torch.cuda.max_memory_allocated */
    ZS_PQ_GPU_RESERVED,  /* torch.cuda.max_memory_reserved */
    ZS_PQ_GPU_USED,      /* nvidia-smi: reserved + CUDA context + NCCL */
    ZS_PQ_HOST_PER_NODE, /* host RAM of one node (all its ranks) */
    ZS_PQ_COUNT
};

/* Units a file may give a figure in. */
enum zs_pub_unit {
    ZS_PU_S,
    ZS_PU_MS,
    ZS_PU_TOKENS_PER_S,
    ZS_PU_GIB,
    ZS_PU_GB,
    ZS_PU_MIB,
    ZS_PU_MB,
    ZS_PU_COUNT
};

/* When a figure was taken: the peak over the whole run (the default), or a
 * reading during the training steps ("steady": a monitor's usage figure,
 * which misses start-up transients such as FSDP1's lazy-init copies of
 * the flat params, sched/fsdp2.c flat_param_host). */
enum zs_pub_when { ZS_PW_PEAK, ZS_PW_STEADY };

struct zs_pub_meas {
    int qty;      /* enum zs_pub_qty */
    int when;     /* enum zs_pub_when */
    double value; /* as written, in unit */
    int unit;     /* enum zs_pub_unit */
    double base;  /* in s, tokens/s or bytes */
    char what[ZS_PUB_TEXT_CAP];
    /* optional "missing": the mechanism zsim lacks that explains why this
     * figure is off (required while it is off by more than 25 %, refused
     * once within 15 %: cmd_validate.c pub_gate); "" when not named */
    char missing[ZS_PUB_TEXT_CAP];
};

/* Where an observed OOM struck ("oom.where"), and when ("oom.phase"): the
 * moments of run/run.h, "step" for the first and steady steps alike, "any"
 * when the source does not say. */
enum zs_pub_oom_where { ZS_POW_HOST, ZS_POW_GPU, ZS_POW_COUNT };
enum zs_pub_oom_phase {
    ZS_POP_ANY,
    ZS_POP_LOAD,
    ZS_POP_INIT,
    ZS_POP_STEP,
    ZS_POP_EVAL,
    ZS_POP_SAVE,
    ZS_POP_EPOCH,
    ZS_POP_COUNT
};

/* An OOM the source observed (optional "oom"). */
struct zs_pub_oom {
    bool set;
    int where; /* enum zs_pub_oom_where */
    int phase; /* enum zs_pub_oom_phase */
    char what[ZS_PUB_TEXT_CAP];
};

struct zs_published {
    char path[ZS_PUB_TEXT_CAP];
    char name[ZS_PUB_NAME_CAP];
    char url[ZS_PUB_TEXT_CAP];
    char commit[48];
    char date[32];
    char quote[ZS_PUB_QUOTE_CAP];
    char hardware[ZS_PUB_TEXT_CAP];
    char args[ZS_PUB_MAX_ARGS][ZS_PUB_ARG_CAP];
    int nargs;
    char needs[ZS_PUB_MAX_NEEDS][ZS_PUB_NAME_CAP];
    int nneeds;
    struct zs_pub_meas meas[ZS_PUB_MAX_MEAS];
    int nmeas; /* 0 exactly when oom.set */
    struct zs_pub_oom oom;
};

/* Quantity key as written in files ("step_time", "peak_gpu_reserved", ...),
 * and its unit family in words for tables. */
const char *zs_pub_qty_name(int qty);
const char *zs_pub_unit_name(int unit);
/* "host" / "gpu"; "any", "load", "init", "step", "eval", "save", "epoch". */
const char *zs_pub_oom_where_name(int where);
const char *zs_pub_oom_phase_name(int phase);

/* Reads one file.  Bad input: ZS_EINPUT with one line naming file:line:col,
 * the field and what it accepts. */
int zs_published_read(const char *path, struct zs_published *out,
                      struct zs_err *err);
int zs_published_read_text(const char *name, const char *text, size_t len,
                           struct zs_published *out, struct zs_err *err);

/* One run's predictions (base units; -1 where zsim gives none). */
struct zs_pub_pred {
    bool oom; /* zsim predicts the run does not fit */
    char oom_text[160];
    char framework[16]; /* deepspeed | fsdp2, from the resolved config */
    double v[ZS_PQ_COUNT];
    double steady[ZS_PQ_COUNT]; /* the steady step's alone (ZS_PW_STEADY) */
    /* The OOM zsim predicts, for comparison with an observed one: of the
     * whole run when the args ask for one (--dataset-samples), else of the
     * step simulation (oom above).  where -1: none. */
    int oom_where; /* enum zs_pub_oom_where, or -1 */
    int oom_phase; /* enum zs_pub_oom_phase (never ZS_POP_ANY) */
    int64_t oom_needed_bytes, oom_available_bytes;
};

/* Whether the OOM zsim predicts is the one the source observed: the same
 * kind, at the same phase unless the source names none.  False for a run
 * without "oom". */
bool zs_pub_oom_agrees(const struct zs_published *p,
                       const struct zs_pub_pred *q);

/* Runs the simulation the run's args describe (the same flags as `zsim
 * simulate`, resolved from the current directory).  A bad argument is
 * ZS_EINPUT naming the file and 'args'. */
int zs_published_predict(const struct zs_published *p, struct zs_pub_pred *out,
                         struct zs_err *err);

struct zs_cfg;
struct zs_cluster;
/* Called on a run's resolved configuration and cluster before it is
 * simulated; ctx is the caller's.  `zsim calibrate --published` overrides
 * mechanism constants through it (validate/pubcal.c). */
typedef void (*zs_pub_tune_fn)(void *ctx, struct zs_cfg *cfg,
                               struct zs_cluster *cl);
/* zs_published_predict with tune (may be NULL) applied first. */
int zs_published_predict_tuned(const struct zs_published *p,
                               zs_pub_tune_fn tune, void *ctx,
                               struct zs_pub_pred *out, struct zs_err *err);

struct zs_sim;
struct zs_build_cache;
/* zs_published_predict_tuned on a caller's engine and build context, kept
 * across predictions (a set's: published_set.h) so that each does not grow
 * and touch new arrays again; either NULL: made for the call.  Results do
 * not depend on them (engine.h zs_sim_reset, sched.h zs_build_cache_new). */
int zs_published_predict_on(const struct zs_published *p, zs_pub_tune_fn tune,
                            void *ctx, struct zs_sim *sim,
                            struct zs_build_cache *cache,
                            struct zs_pub_pred *out, struct zs_err *err);

/* (predicted - measured) / measured in percent; NAN when either is unknown. */
double zs_pub_err_pct(double pred, double meas);

/* Median and 90th percentile (nearest rank: the ceil(0.9 n)-th smallest) of
 * n values; sorts v in place.  n must be >= 1. */
void zs_pub_median_p90(double *v, int n, double *median, double *p90);

#endif
