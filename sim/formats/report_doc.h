/*
 * report_doc.h — a "zsim.simulate/1" or "zsim.plan/1" JSON document (what
 * `zsim simulate --json` / `zsim plan --json` print) read into plain C
 * structs for the run store and the reports.  cJSON stays inside
 * report_doc.c (STYLE 16).
 *
 * Optional keys may be absent: absent doubles read as NaN, absent byte counts
 * as -1, absent objects leave `present` false.  Present keys of the wrong type
 * or out of range are errors with file:line:column (ZS_EINPUT).
 *
 * The compared metrics (zs_metric) are derived here once so the store, the
 * baseline files and the reports agree on their definition:
 *   simulate: peaks are the maximum over first_step, steady_step and run;
 *             step time and tokens/s are the steady step's;
 *   plan:     all five are the best candidate's steady step; the verdict is
 *             "fits" when a best candidate exists, else "none_fits".
 */
#ifndef ZS_REPORT_DOC_H
#define ZS_REPORT_DOC_H

#include "util/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum zs_rdoc_kind { ZS_RDOC_SIMULATE, ZS_RDOC_PLAN };

/* Verdicts, in the document's spelling; NONE_FITS is a plan's "no candidate
 * fits" and UNKNOWN a document without one. */
enum zs_verdict {
    ZS_VERDICT_FITS,
    ZS_VERDICT_GPU_OOM,
    ZS_VERDICT_HOST_OOM,
    ZS_VERDICT_NONE_FITS,
    ZS_VERDICT_UNKNOWN,
    ZS_VERDICT_COUNT
};
extern const char *const zs_verdict_names[]; /* NULL-terminated */

enum zs_metric {
    ZS_M_PEAK_GPU_ALLOC,
    ZS_M_PEAK_GPU_RESERVED,
    ZS_M_PEAK_HOST,
    ZS_M_STEP_TIME,
    ZS_M_TOKENS,
    ZS_M_COUNT
};

struct zs_metric_info {
    const char *name;  /* key in baseline files and the store */
    const char *label; /* for people */
    int higher_is_better;
    int is_bytes; /* else seconds (STEP_TIME) or a rate */
};
extern const struct zs_metric_info zs_metric_infos[ZS_M_COUNT];

/* Index of a metric by name, or -1. */
int zs_metric_find(const char *name);

struct zs_rbreakdown {
    double compute, exposed_collective, exposed_pcie, optimizer, other;
    double exposed_nvme; /* 0 when the document has none (no NVMe offload) */
};

struct zs_rstep {
    bool present;
    double time_s, tokens_per_s_per_gpu, mfu;
    int64_t peak_gpu_allocated_bytes, peak_gpu_reserved_bytes;
    int64_t peak_host_bytes_per_node, pinned_host_bytes_per_node;
    bool has_breakdown;
    struct zs_rbreakdown breakdown;
    char bottleneck[64];
};

struct zs_rcand {
    int verdict;       /* enum zs_verdict */
    char *config_json; /* owned: compact JSON of "config", or NULL */
    char reason[160];  /* truncated */
    struct zs_rstep steady;
};

struct zs_room {
    bool present;
    char where[32], phase[64], module[96];
    int64_t step, needed_bytes, available_bytes;
};

struct zs_rrun {
    bool present;
    int64_t steps_per_epoch, steps_total;
    double wall_s, gpu_hours;
    int64_t peak_host_bytes_per_node, peak_gpu_allocated_bytes;
    bool host_oom;
    int64_t host_oom_epoch, host_oom_step;
    char host_oom_phase[64];
};

struct zs_rdoc {
    int kind;                     /* enum zs_rdoc_kind */
    int verdict;                  /* enum zs_verdict */
    char model[96], hardware[96]; /* "" when absent */
    char verdict_text[200];       /* "" when absent */
    char config_summary[200];     /* config.summary, "" when absent */
    char *config_json;            /* owned, or NULL */
    struct zs_room oom;
    struct zs_rstep first, steady;
    struct zs_rrun run;
    int64_t ds_gpu_bytes,
        ds_host_bytes_per_node; /* estimators.deepspeed; -1 absent */
    /* timeline.gpu as n_gpu triples (t_s, allocated, reserved) and
     * timeline.host as n_host pairs (t_s, bytes); owned, may be NULL. */
    double *gpu_tl, *host_tl;
    size_t n_gpu, n_host;
    /* plan */
    int64_t searched, best; /* best: index or -1 */
    double elapsed_s;
    struct zs_rcand *cands; /* owned */
    size_t ncands;
    /* derived (see the top of this file); NaN when unknown */
    double metric[ZS_M_COUNT];
};

/* Reads a document from text; name is used in messages.  On success *doc is
 * owned by the caller (zs_rdoc_release).  On failure nothing is left to
 * release.  Returns 0, ZS_EINPUT or ZS_ENOMEM. */
int zs_rdoc_parse(const char *name, const char *text, size_t len,
                  struct zs_rdoc *doc, struct zs_err *err);
void zs_rdoc_release(struct zs_rdoc *doc);

/* Calls fn(name, value, arg) for every number and boolean of the document
 * outside "timeline" and "candidates" (those are series, not figures), with
 * dotted names ("steady_step.breakdown_s.compute"), then for each derived
 * metric that is known.  Stops at the first non-zero return and returns it.
 * Returns ZS_EINPUT for text that is not a JSON object. */
int zs_rdoc_figures(const char *text, size_t len,
                    int (*fn)(const char *name, double value, void *arg),
                    void *arg, struct zs_err *err);

#endif
