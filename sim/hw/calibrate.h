/*
 * calibrate.h — fits hardware-profile coefficients from measured task times
 * by least squares (GSL) and writes a calibrated GPU profile plus its fit
 * report (schema zsim.calibrate/1).  `zsim calibrate` (cli/cmd_calibrate.c)
 * reads the measured files, feeds their tasks in with zs_cal_add_*, calls
 * zs_cal_write and prints the summary from the fits left in struct zs_cal.
 *
 * The formulas are in calibrate.c's opening comment and docs/validation.md.
 */
#ifndef ZS_HW_CALIBRATE_H
#define ZS_HW_CALIBRATE_H

#include "util/err.h"

#include <stddef.h>

#define ZS_CAL_NDEC 24   /* FLOPs decades 10^0 .. 10^23 */
#define ZS_CAL_NBUCKET 8 /* copy sizes: < 64 KiB, then powers of 16 */
/* Bytes one CPU Adam step moves per fp32 element (calibrate.c). */
#define ZS_CAL_ADAM_BYTES_PER_ELEMENT 28.0

enum zs_cal_dir { ZS_CAL_H2D, ZS_CAL_D2H, ZS_CAL_PAGEABLE, ZS_CAL_NDIR };
enum zs_cal_adam { ZS_CAL_ADAM_DEEPSPEED, ZS_CAL_ADAM_TORCH, ZS_CAL_NADAM };

/* One fitted group: t = icept + slope * x. */
struct zs_cal_fit {
    int n; /* points */
    double slope, icept;
    double r2, rms_s; /* coefficient of determination, rms residual (s) */
};

/* Points for one fit (x, t), growable; private. */
struct zs_cal_pts {
    double *x, *t;
    size_t n, cap;
};

/* The measurements, grouped, and (after zs_cal_write) their fits.  Caller
 * memory: zs_cal_init, then zs_cal_release. */
struct zs_cal {
    struct zs_cal_pts gemm[ZS_CAL_NDEC]; /* private */
    double gemm_lx[ZS_CAL_NDEC];         /* private: Σ log10(flops) */
    struct zs_cal_pts pcie[ZS_CAL_NDIR]; /* private */
    double bucket_bytes[ZS_CAL_NDIR][ZS_CAL_NBUCKET]; /* private */
    double bucket_s[ZS_CAL_NDIR][ZS_CAL_NBUCKET];     /* private */
    int bucket_n[ZS_CAL_NDIR][ZS_CAL_NBUCKET];        /* private */
    struct zs_cal_pts adam[ZS_CAL_NADAM];             /* private */
    /* Read-only after zs_cal_write; a group's fit is valid when its n > 0
     * (gemm, pcie, adam below). */
    struct zs_cal_fit gemm_fit[ZS_CAL_NDEC], pcie_fit[ZS_CAL_NDIR],
        adam_fit[ZS_CAL_NADAM];
    double peak_flops; /* the base profile's compute.peak_bf16_flops */
};

/* What zs_cal_write names in the files it writes (borrowed strings). */
struct zs_cal_run {
    const char *out;          /* the profile to write, NAME.json */
    const char *fit_path;     /* the report, NAME.fit.json */
    const char *base;         /* the GPU profile to start from */
    const char *gpu;          /* the measured header's GPU name */
    const char *env;          /* "GPU, driver D, DATE" of the first file */
    const char *const *files; /* the measured files */
    int nfiles;
};

/* Also turns GSL's aborting error handler off (errors come back as return
 * codes): call before any other GSL use in the process. */
void zs_cal_init(struct zs_cal *c);
void zs_cal_release(struct zs_cal *c);
/* One timed task each; ZS_ENOMEM on allocation failure.  A GEMM outside the
 * decades 10^0..10^23 FLOPs is ignored.  Adam: `threads` >= 1. */
int zs_cal_add_gemm(struct zs_cal *c, double flops, double s);
int zs_cal_add_copy(struct zs_cal *c, enum zs_cal_dir dir, double bytes,
                    double s);
int zs_cal_add_adam(struct zs_cal *c, enum zs_cal_adam impl, double elements,
                    double threads, double s);
/* Name of a copy direction: "h2d", "d2h", "pageable". */
const char *zs_cal_dir_name(enum zs_cal_dir dir);
/* Reads run->base, fits every group, writes run->out (checked by loading it
 * with zs_hw_load_gpu before it is renamed into place) and run->fit_path.
 * Errors: ZS_EINPUT for the base profile, ZS_ELIMIT when the merged curve
 * exceeds ZS_CURVE_MAX points, ZS_EIO, ZS_ENOMEM, ZS_ERUNTIME. */
int zs_cal_write(struct zs_cal *c, const struct zs_cal_run *run,
                 struct zs_err *err);

#endif
