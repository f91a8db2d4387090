/*
 * published_set.h — the published corpus read from a directory and predicted
 * (validation/published/; docs/validation.md): every DIR/NAME.json except
 * accuracy.json, sorted by name, and one row per predicted/measured pair of
 * the runs that are modelled.  Shared by `zsim validate --published` (which
 * prints and gates the rows) and `zsim calibrate --published` (which
 * re-predicts a part of the corpus with mechanism constants overridden).
 */
#ifndef ZS_PUBLISHED_SET_H
#define ZS_PUBLISHED_SET_H

#include "validate/published_io.h"

#include <stdbool.h>

/* One predicted/measured pair of the published corpus. */
struct zs_pub_row {
    char run[ZS_PUB_NAME_CAP];
    char framework[16];
    int qty;
    double pred, meas, err_pct;
    int run_index; /* into zs_pub_set.runs */
    /* the figure's "missing" mechanism (published_io.h), or NULL when its
     * file names none; points into zs_pub_set.runs */
    const char *missing;
};

/* The accuracy issue's bands of |error| (issue 11's done-when: no run off by
 * more than 25 %, or the mechanism zsim lacks named): a figure beyond
 * ZS_PUB_BAND_HI must name its "missing" mechanism, one within
 * ZS_PUB_BAND_LO may not (cmd_validate.c pub_gate); validate lists the first
 * and counts those in between. */
#define ZS_PUB_BAND_HI 25.0
#define ZS_PUB_BAND_LO 15.0

/* The band of a signed error in percent: beyond ZS_PUB_BAND_HI, from
 * ZS_PUB_BAND_LO to it (inclusive), within ZS_PUB_BAND_LO, or none (not
 * finite: a predicted OOM). */
enum zs_pub_band { ZS_PUB_NO_BAND, ZS_PUB_WITHIN, ZS_PUB_MID, ZS_PUB_OVER };
enum zs_pub_band zs_pub_band_of(double err_pct);

/* The corpus: n runs (runs[i], pred[i]) and nrows rows.  Caller memory:
 * zs_pub_set_read or zs_pub_set_load, then zs_pub_set_release. */
struct zs_pub_set {
    struct zs_published *runs;
    struct zs_pub_pred *pred;
    int n;
    struct zs_pub_row *rows;
    int nrows;
    /* the engine and build context every prediction of the set reuses
     * (zs_published_predict_on), made on the first; NULL until then, or
     * when they could not be made (each prediction then makes its own) */
    struct zs_sim *sim;
    struct zs_build_cache *cache;
};

/* Reads every DIR/NAME.json except accuracy.json, sorted by name; names must
 * be unique.  Predicts nothing (nrows = 0).  No *.json: ZS_EUSAGE naming
 * '--published'. */
int zs_pub_set_read(const char *dir, struct zs_pub_set *s, struct zs_err *err);

/* Predicts the runs that are modelled (no needs) and, where `only` is not
 * NULL, have only[i] set; rebuilds the rows from them, in run order.  tune
 * may be NULL. */
int zs_pub_set_predict(struct zs_pub_set *s, const bool *only,
                       zs_pub_tune_fn tune, void *ctx, struct zs_err *err);

/* zs_pub_set_read, then zs_pub_set_predict of every modelled run. */
int zs_pub_set_load(const char *dir, struct zs_pub_set *s, struct zs_err *err);
void zs_pub_set_release(struct zs_pub_set *s);

#endif
