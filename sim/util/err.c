/*
 * err.c — formatting of zsim error records; see err.h.
 */
#include "util/err.h"
#include "util/strutil.h"

#include <stdio.h>
#include <string.h>

int zs_err_vset(struct zs_err *err, int code, const char *fmt, va_list ap)
{
    if (err) {
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        /* Messages are one line: fold any newline a caller let through. */
        for (char *p = err->msg; *p; p++)
            if (*p == '\n' || *p == '\r')
                *p = ' ';
    }
    return code;
}

int zs_err_set(struct zs_err *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    zs_err_vset(err, code, fmt, ap);
    va_end(ap);
    return code;
}

void zs_err_prefix(struct zs_err *err, const char *fmt, ...)
{
    char old[ZS_ERR_MSG_MAX];
    va_list ap;
    size_t n;
    if (!err)
        return;
    memcpy(old, err->msg, sizeof old);
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    n = strlen(err->msg);
    if (n + 2 < sizeof err->msg) {
        memcpy(err->msg + n, ": ", 3);
        n += 2;
        zs_strlcpy(err->msg + n, old, sizeof err->msg - n);
    }
}

void zs_err_clear(struct zs_err *err)
{
    if (err) {
        err->code = ZS_OK;
        err->msg[0] = '\0';
    }
}

int zs_err_exit_code(int code)
{
    switch (code) {
#define ZS_X_EXIT(name, val, exitc, desc)                                      \
    case name:                                                                 \
        return exitc;
        ZS_ERRNO_MAP(ZS_X_EXIT)
#undef ZS_X_EXIT
    }
    return 1;
}

const char *zs_err_name(int code)
{
    switch (code) {
#define ZS_X_NAME(name, val, exitc, desc)                                      \
    case name:                                                                 \
        return desc;
        ZS_ERRNO_MAP(ZS_X_NAME)
#undef ZS_X_NAME
    }
    return "unknown error";
}
