/*
 * gnuplot.h — charts are drawn by gnuplot run as an external program
 * (fork/exec, never linked), found on PATH or named by $ZSIM_GNUPLOT.
 *
 * A chart is a script and a data file written by the report into its output
 * folder; the script draws PNG (pngcairo when available, else png) and SVG
 * into hidden temporaries (".NAME.png.tmp") that zs_gnuplot_draw renames into
 * place only when gnuplot succeeded, so a chart file is whole or absent.
 */
#ifndef ZS_GNUPLOT_H
#define ZS_GNUPLOT_H

#include "store/report_int.h"
#include "util/err.h"

#include <stddef.h>

/* Finds gnuplot: $ZSIM_GNUPLOT when set (an empty value means "none"),
 * else the first executable "gnuplot" on $PATH.  Returns 0 with the path in
 * buf, or -1 when there is none. */
int zs_gnuplot_find(char *buf, size_t cap);

/* Opens a chart script: a header comment, then common settings. */
void zs_gnuplot_begin(struct zs_rbuf *gp, const char *title_comment);
/* Appends the terminal and output lines for output `stem` in format
 * 0 = PNG, 1 = SVG; the body that follows draws into it, then
 * zs_gnuplot_end_output closes the file. */
void zs_gnuplot_output(struct zs_rbuf *gp, const char *stem, int svg,
                       int width_px, int height_px);
void zs_gnuplot_end_output(struct zs_rbuf *gp);

/* Runs `gnuplot SCRIPT` in dir with stdin from /dev/null, then renames the
 * temporaries of stem.png and stem.svg into place.  On failure removes them
 * and returns ZS_ERUNTIME with gnuplot's first error line. */
int zs_gnuplot_draw(const char *gnuplot, const char *dir, const char *script,
                    const char *stem, struct zs_err *err);

#endif
