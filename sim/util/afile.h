/*
 * afile.h — the one way zsim writes an output file: into a temporary beside
 * the target, fsync(2), then rename(2) over it.
 *
 * Invariants: a reader sees the old file or the whole new one, never half of
 * it; a failure at any step (open, a write, the flush, fsync, close, rename)
 * removes the temporary and returns ZS_EIO with "cannot write 'PATH': why",
 * PATH being the target.  The temporary is PATH.tmp.PID: the same folder keeps
 * rename(2) within one file system, the pid keeps two concurrent writers
 * apart.  Cost: one fsync per file.
 *
 * Every file writer in sim/ goes through here (issue 13): the JSON documents
 * (schedule, measured, DeepSpeed config, accuracy, calibration), the trace
 * and timeline, the run plots' data and the reports.  The one exception is
 * gnuplot's PNG/SVG, which the gnuplot process writes itself (to hidden .tmp
 * names that gnuplot.c renames).
 */
#ifndef ZS_AFILE_H
#define ZS_AFILE_H

#include "util/err.h"

#include <stddef.h>
#include <stdio.h>

#define ZS_AFILE_PATH_MAX 4096

struct zs_afile {
    FILE *f; /* write through this (read-only pointer); NULL once closed */
    char path[ZS_AFILE_PATH_MAX];      /* private: the target */
    char tmp[ZS_AFILE_PATH_MAX + 32]; /* private: the temporary */
};

/* Opens a temporary for dir/name (dir NULL or "": name as is).  0, ZS_EUSAGE
 * for a path longer than ZS_AFILE_PATH_MAX - 1, or ZS_EIO. */
int zs_afile_open(struct zs_afile *a, const char *dir, const char *name,
                  struct zs_err *err);
/* Flushes, checks every earlier write (stdio's sticky error flag), fsyncs,
 * closes and renames onto the target.  The temporary is gone afterwards
 * whatever happened.  0 or ZS_EIO. */
int zs_afile_commit(struct zs_afile *a, struct zs_err *err);
/* Closes and removes the temporary, leaving the target as it was; for a
 * caller's own failure between open and commit.  Safe to call twice. */
void zs_afile_abort(struct zs_afile *a);

/* Writes len bytes of data to dir/name through the above.  0, ZS_EUSAGE or
 * ZS_EIO. */
int zs_write_atomic(const char *dir, const char *name, const char *data,
                    size_t len, struct zs_err *err);

#endif
