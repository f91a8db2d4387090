/*
 * report_int.h — helpers private to the run store and report modules
 * (sim/store/store.c, report*.c, gnuplot.c): a growable text buffer, atomic
 * file writes, escaping for HTML/XML, file-name sanitising.
 *
 * Invariants: a zs_rbuf's text is always NUL-terminated once anything has
 * been appended; an allocation failure is sticky (zs_rbuf_failed) so builders
 * append freely and check once at the end.
 */
#ifndef ZS_REPORT_INT_H
#define ZS_REPORT_INT_H

#include "util/afile.h"
#include "util/err.h"

#include <stddef.h>

struct zs_rbuf {
    char *text; /* owned; NULL until the first append */
    size_t len, cap;
    int failed; /* 1 after an allocation failure: later appends do nothing */
};

void zs_rbuf_init(struct zs_rbuf *b);
void zs_rbuf_release(struct zs_rbuf *b);
void zs_rbuf_puts(struct zs_rbuf *b, const char *s);
void zs_rbuf_putn(struct zs_rbuf *b, const char *s, size_t n);
void zs_rbuf_printf(struct zs_rbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends s with &, <, >, " and ' escaped (HTML text, attributes and XML). */
void zs_rbuf_escape(struct zs_rbuf *b, const char *s);
/* Appends s as a JSON string literal, quotes included. */
void zs_rbuf_json_str(struct zs_rbuf *b, const char *s);
/* "" when nothing was appended, never NULL. */
const char *zs_rbuf_str(const struct zs_rbuf *b);

/* zs_write_atomic (util/afile.h) for a buffer: dir/name (dir NULL or "":
 * name as is) through a temporary, fsync and rename(2); ZS_ENOMEM when the
 * buffer failed. */
int zs_rbuf_write_atomic(const struct zs_rbuf *b, const char *dir,
                         const char *name, struct zs_err *err);

/* Creates dir (one level, and its parents) when missing.  0 or ZS_EIO. */
int zs_mkdir_p(const char *dir, struct zs_err *err);

/* A file-name stem from a scenario name: [A-Za-z0-9._-] kept, anything else
 * '_', no leading '.' or '-', at most cap-1 bytes, never empty. */
void zs_file_stem(const char *name, char *buf, size_t cap);

/* Formats a double for data files and JSON: shortest "%.*g" of at most 12
 * significant digits that is locale-independent ("nan" for NaN). */
char *zs_fmt_num(char *buf, size_t cap, double v);

#endif
