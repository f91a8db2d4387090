/*
 * err.h — zsim's one list of error codes and the caller-owned error record.
 *
 * Every function that can fail returns int: 0 on success or a negative ZS_E*
 * code, and writes a one-line, lowercase message into a struct zs_err the
 * caller owns.  Nothing is allocated on the error path.  Only main.c turns a
 * code into a process exit status (zs_err_exit_code).
 */
#ifndef ZS_ERR_H
#define ZS_ERR_H

#include <stdarg.h>

/* X(name, value, exit status, description) */
#define ZS_ERRNO_MAP(X)                                                        \
    X(ZS_OK, 0, 0, "ok")                                                       \
    X(ZS_ENOMEM, -1, 1, "out of memory")                                       \
    X(ZS_EIO, -2, 1, "i/o failure")                                            \
    X(ZS_ERUNTIME, -3, 1, "runtime failure")                                   \
    X(ZS_EUSAGE, -4, 2, "usage error")                                         \
    X(ZS_EINPUT, -5, 3, "invalid input file")                                  \
    X(ZS_EGATE, -6, 4, "prediction or check failed")                           \
    X(ZS_ELIMIT, -7, 1, "internal limit reached")

enum zs_errno {
#define ZS_X_ENUM(name, val, exitc, desc) name = val,
    ZS_ERRNO_MAP(ZS_X_ENUM)
#undef ZS_X_ENUM
};

#define ZS_ERR_MSG_MAX 512

struct zs_err {
    int code;                 /* one of enum zs_errno */
    char msg[ZS_ERR_MSG_MAX]; /* one line, no trailing newline, no "zsim: " */
};

/* Sets code and formats msg; returns code so callers can `return
 * zs_err_set(...)`. */
int zs_err_set(struct zs_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int zs_err_vset(struct zs_err *err, int code, const char *fmt, va_list ap);
/* Prefixes an existing message: "ctx: old message". */
void zs_err_prefix(struct zs_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void zs_err_clear(struct zs_err *err);
int zs_err_exit_code(int code);
const char *zs_err_name(int code);

#endif
