/*
 * pubcal.h — fitting a few global mechanism constants to the published
 * corpus (`zsim calibrate --published DIR`, docs/validation.md "Calibrating
 * on the published corpus").
 *
 * The corpus is split deterministically into a fit part and a check part
 * (by source repository, or by a hash of the run name).  The constants of the
 * table below are fitted by nonlinear least squares (GSL
 * gsl_multifit_nlinear, trust region) to the timed quantities (step_time,
 * tokens_per_s_per_gpu) of the fit part, each evaluation re-simulating the
 * fit part's runs with the trial values; then both parts are predicted with
 * the current and with the fitted values, and the absolute errors compared.
 *
 * Cost: one evaluation simulates the fit part's timed runs once (about 0.2 s
 * in a release build on the 96-run corpus); a fit takes a few dozen.
 */
#ifndef ZS_PUBCAL_H
#define ZS_PUBCAL_H

#include "validate/published_set.h"

#include <stdbool.h>

#define ZS_PUBCAL_MAX_CONSTS 8
#define ZS_PUBCAL_MAX_SOURCES 64
#define ZS_PUBCAL_SCHEMA "zsim.calibration/1"

/* A global mechanism constant a fit may set.  set() applies a value to one
 * run's resolved configuration and cluster (before it is simulated); a new
 * constant (a per-framework hook cost in sched/, say) is one more row of
 * the table in pubcal.c. */
struct zs_pubcal_const {
    const char *name;   /* "membound_eff" */
    const char *unit;   /* "fraction" */
    const char *what;   /* one line: what it scales */
    double current;     /* the value zsim uses today */
    const char *source; /* of the current value, short */
    double lo, hi;      /* physical range; a fit outside it is flagged */
    bool by_default;    /* fitted unless --constants names others */
    void (*set)(struct zs_cfg *cfg, struct zs_cluster *cl, double v);
};

/* The table (static storage); returns its length. */
int zs_pubcal_consts(const struct zs_pubcal_const **out);

struct zs_pubcal;
/* Sets pc's constants from a comma-separated list of names (--constants);
 * an unknown or repeated name is ZS_EINPUT naming --constants. */
int zs_pubcal_choose(struct zs_pubcal *pc, const char *list,
                     struct zs_err *err);

enum zs_pubcal_split { ZS_PUBCAL_SPLIT_SOURCE, ZS_PUBCAL_SPLIT_HASH };
enum zs_pubcal_part { ZS_PUBCAL_FIT, ZS_PUBCAL_CHECK, ZS_PUBCAL_NPARTS };

/* Parses "source" / "hash"; anything else is ZS_EINPUT naming --split. */
int zs_pubcal_parse_split(const char *text, enum zs_pubcal_split *out,
                          struct zs_err *err);
const char *zs_pubcal_split_name(enum zs_pubcal_split split);

/* A run's source key: "OWNER/REPO" of a github.com URL, else the host. */
void zs_pubcal_source_key(const char *url, char *buf, size_t cap);

/* Median and p90 |error| (%) of one quantity in one part, before (the
 * current constants) and after (the fitted ones). */
struct zs_pubcal_err {
    int qty, part, n;
    double med_before, p90_before, med_after, p90_after;
};

/* The fit's result.  Caller memory: zs_pubcal_init, zs_pubcal_run, then
 * zs_pubcal_release. */
struct zs_pubcal {
    /* inputs (set before zs_pubcal_run) */
    enum zs_pubcal_split split;
    /* POSIX extended regex on run names: matching runs are left out of both
     * parts (--exclude; NULL: none), borrowed */
    const char *exclude;
    /* comma-separated source keys ("owner/repo") that make the fit part of
     * the split by source, the rest checking (--fit-sources; NULL: the
     * balanced split), borrowed.  A fit recorded with it is re-run on the
     * same sources however the corpus grows. */
    const char *fit_sources;
    int nconst; /* constants fitted: the first */
    const struct zs_pubcal_const *c[ZS_PUBCAL_MAX_CONSTS]; /* borrowed */
    /* read-only after zs_pubcal_run */
    struct zs_pub_set set; /* the corpus (rows: after the fit) */
    int nexcluded;         /* runs of DIR left out by `exclude` */
    int *part;             /* per run: enum zs_pubcal_part */
    char sources[ZS_PUBCAL_MAX_SOURCES][ZS_PUB_NAME_CAP];
    int source_part[ZS_PUBCAL_MAX_SOURCES], nsources;
    int timed_runs[ZS_PUBCAL_NPARTS]; /* runs with a timed row, modelled */
    int timed_rows[ZS_PUBCAL_NPARTS]; /* their timed rows, not OOM */
    double fitted[ZS_PUBCAL_MAX_CONSTS], stderr_[ZS_PUBCAL_MAX_CONSTS];
    double rms_log_before, rms_log_after; /* fit part, ln(pred/meas) */
    int iterations, evaluations;
    struct zs_pubcal_err errs[2 * ZS_PQ_COUNT];
    int nerrs;
};

void zs_pubcal_init(struct zs_pubcal *pc);
void zs_pubcal_release(struct zs_pubcal *pc);

/* Reads DIR, leaves out the runs pc->exclude matches, splits the rest (a
 * --fit-sources name that no run comes from is ZS_EINPUT naming it), fits
 * pc->c[0..nconst) on the fit part and fills the errors.  A missing or
 * unreadable DIR, or a part without enough timed rows (the fit part needs
 * one more than the constants, the check part one), is ZS_EINPUT with one
 * line naming --published or --split; a bad regex is ZS_EUSAGE naming
 * --exclude. */
int zs_pubcal_run(struct zs_pubcal *pc, const char *dir, struct zs_err *err);

/* Writes the result as JSON (schema zsim.calibration/1), temp file + rename.
 * `command` is the command line that produced it. */
int zs_pubcal_write(const struct zs_pubcal *pc, const char *dir,
                    const char *command, const char *path, struct zs_err *err);

#endif
