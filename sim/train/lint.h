/*
 * lint.h — known-bad combinations of a DeepSpeed config, a model, a cluster
 * and the trainer's arguments, each reported with its severity, the numbers
 * behind it, the source (issue or PR) and the fix.
 *
 * Rules that need a model or hardware take them as parameters and stay
 * silent when they are NULL, so `zsim lint --ds-config F` alone runs the
 * config-only rules.  zs_lint_run never allocates: the report is a fixed
 * array in caller memory (ZS_LINT_MAX_FINDINGS; beyond it findings are
 * counted in `dropped`).
 *
 * The host-buffer arithmetic used by the host-RAM rules is exported as
 * zs_lint_host_offload_bytes so the simulator can be checked against it.
 */
#ifndef ZS_LINT_H
#define ZS_LINT_H

#include "hw/hw.h"
#include "model/model.h"
#include "train/dsconfig.h"
#include "util/err.h"

#include <stdbool.h>
#include <stdint.h>

enum zs_lint_sev { ZS_LINT_INFO, ZS_LINT_WARNING, ZS_LINT_ERROR };

#define ZS_LINT_MAX_FINDINGS 48
#define ZS_LINT_MAX_NUMBERS 12

struct zs_lint_number {
    char name[40]; /* "host_ram_usable_bytes" */
    double value;  /* integral for bytes, elements, steps */
};

struct zs_lint_finding {
    char id[40]; /* stable rule id: "unscale-clip-device" */
    enum zs_lint_sev severity;
    char title[128];        /* one line */
    char where[300];        /* "ds.json:12:7" of the key at fault, or "" */
    char explanation[1200]; /* what happens and why, with the numbers */
    char source[400];       /* issues/PRs/files the rule rests on */
    char fix[600];          /* what to change */
    struct zs_lint_number numbers[ZS_LINT_MAX_NUMBERS];
    int n_numbers;
};

struct zs_lint_report {
    struct zs_lint_finding finding[ZS_LINT_MAX_FINDINGS];
    int n;
    int dropped;                    /* findings beyond ZS_LINT_MAX_FINDINGS */
    int n_error, n_warning, n_info; /* all findings, dropped included */
};

struct zs_lint_input {
    const struct zs_dsconfig *ds; /* required */
    const struct zs_ds_notes
        *notes; /* unknown keys from loading; may be NULL */
    const struct zs_trainer_args *trainer; /* may be NULL or !present */
    const struct zs_model *model;          /* NULL: model rules are skipped */
    const struct zs_cluster *cluster; /* NULL: hardware rules are skipped */
    const char *optimizer; /* --optimizer NAME (HF `optim` spelling); NULL: the
                              trainer's optim, else none */
    bool version_given;    /* ds->version came from the user, not assumed */
    bool zero_init;        /* model built under deepspeed.zero.Init (HF does it
                              when the DeepSpeed config exists before
                              from_pretrained); only meaningful for ZeRO-3 */
    int audio_output;      /* Qwen-Omni talker: -1 model default, 0 off, 1 on */
};

/* Host buffers of DeepSpeed ZeRO-3 offload, per rank and per node
 * (reference/zero3-offload-mechanics.md §2).  Nominal sizes are elements ×
 * bytes; "alloc" sizes apply PyTorch's pinned host allocator, which rounds
 * every pinned allocation up to a power of two (CachingHostAllocator.h
 * PowerOf2Ceil; pytorch #95823, #150517).  All in bytes. */
struct zs_lint_host_terms {
    int64_t partition_elems; /* P = ceil(params / world) */
    int64_t
        cpu_elems; /* elements whose optimizer lives on the CPU (ratio × P) */
    int param_bytes; /* 2 (bf16/fp16) or 4 (fp32) */
    /* per rank, nominal */
    int64_t flat16;   /* offload_param: 16-bit flat partition, always pinned */
    int64_t master32; /* offload_optimizer: fp32 master, pageable */
    int64_t grad32;   /* fp32 grad per sub-group, pinned iff pin_memory */
    int64_t accum16;  /* grad accumulation buffer (model dtype), pinned iff
                         pin_memory */
    int64_t adam;     /* exp_avg + exp_avg_sq, 8 B, pageable, at first step */
    /* per rank, as allocated (pinned ones rounded up to a power of two) */
    int64_t flat16_alloc, grad32_alloc, accum16_alloc;
    int64_t pinned_nominal, pinned_alloc; /* per rank */
    int64_t rank_nominal, rank_alloc;     /* per rank, steady after step 1 */
    int local_ranks;
    int64_t node_nominal, node_alloc; /* × local ranks */
    int64_t load_copy_rank; /* without zero.Init: the full model in fp32 per
                               rank at load (DeepSpeed's estimator: 4 B × params
                               per local rank) */
    int64_t node_load;      /* load_copy_rank × local ranks */
};

/* params: trainable elements sharded by ZeRO; world: data-parallel ranks (>=
 * 1); local_ranks: ranks per node (>= 1).  Returns 0 or ZS_EUSAGE for values
 * out of range ("params must be in [1, 1e15]"). */
int zs_lint_host_offload_bytes(int64_t params, int world, int local_ranks,
                               const struct zs_dsconfig *ds,
                               struct zs_lint_host_terms *out,
                               struct zs_err *err);

/* Smallest power of two >= bytes (bytes <= 2^62); 0 stays 0. */
int64_t zs_lint_pow2_ceil(int64_t bytes);

/* Runs every rule.  out is cleared first.  Errors: ZS_EUSAGE when in->ds is
 * NULL.  The findings themselves are not errors: callers gate on n_error. */
int zs_lint_run(const struct zs_lint_input *in, struct zs_lint_report *out,
                struct zs_err *err);

const char *
zs_lint_sev_name(enum zs_lint_sev s); /* "error", "warning", "info" */

/* Whether an HF `optim` name is a bitsandbytes 8-bit or paged optimizer
 * (adamw_bnb_8bit, adamw_8bit, paged_adamw_32bit, lion_8bit, ...). */
bool zs_lint_is_bnb_optimizer(const char *name);

#endif
