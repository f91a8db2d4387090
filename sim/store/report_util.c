/*
 * report_util.c — text buffers, buffer writes and escaping for the run store
 * and reports; see report_int.h.  No global state.
 */
#include "store/report_int.h"
#include "util/alloc.h"
#include "util/strutil.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void zs_rbuf_init(struct zs_rbuf *b)
{
    memset(b, 0, sizeof *b);
}

void zs_rbuf_release(struct zs_rbuf *b)
{
    zs_free(b->text);
    memset(b, 0, sizeof *b);
}

static int reserve(struct zs_rbuf *b, size_t more)
{
    if (b->failed)
        return -1;
    if (more > ((size_t)-1) / 2 - b->len ||
        zs_grow((void **)&b->text, &b->cap, b->len + more + 1, 1)) {
        b->failed = 1;
        return -1;
    }
    return 0;
}

void zs_rbuf_putn(struct zs_rbuf *b, const char *s, size_t n)
{
    if (reserve(b, n))
        return;
    memcpy(b->text + b->len, s, n);
    b->len += n;
    b->text[b->len] = '\0';
}

void zs_rbuf_puts(struct zs_rbuf *b, const char *s)
{
    zs_rbuf_putn(b, s, strlen(s));
}

void zs_rbuf_printf(struct zs_rbuf *b, const char *fmt, ...)
{
    va_list ap;
    int n;
    char small[256];

    va_start(ap, fmt);
    n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        zs_rbuf_putn(b, small, (size_t)n);
        return;
    }
    if (reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->text + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void zs_rbuf_escape(struct zs_rbuf *b, const char *s)
{
    /* The five characters HTML and XML reserve, as entities. */
    static const struct {
        char c;
        const char *entity;
    } ents[] = {{'&', "&amp;"},
                {'<', "&lt;"},
                {'>', "&gt;"},
                {'"', "&quot;"},
                {'\'', "&#39;"}};
    const size_t nents = sizeof ents / sizeof ents[0];
    for (const char *p = s; *p; p++) {
        size_t k = 0;
        while (k < nents && ents[k].c != *p)
            k++;
        if (k < nents)
            zs_rbuf_puts(b, ents[k].entity);
        /* XML 1.0 forbids most control characters even escaped. */
        else if ((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t')
            zs_rbuf_putn(b, "?", 1);
        else
            zs_rbuf_putn(b, p, 1);
    }
}

void zs_rbuf_json_str(struct zs_rbuf *b, const char *s)
{
    zs_rbuf_putn(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            zs_rbuf_printf(b, "\\%c", *p);
        else if (*p < 0x20)
            zs_rbuf_printf(b, "\\u%04x", *p);
        else
            zs_rbuf_putn(b, (const char *)p, 1);
    }
    zs_rbuf_putn(b, "\"", 1);
}

const char *zs_rbuf_str(const struct zs_rbuf *b)
{
    return b->text ? b->text : "";
}

int zs_rbuf_write_atomic(const struct zs_rbuf *b, const char *dir,
                         const char *name, struct zs_err *err)
{
    if (b->failed)
        return zs_err_set(err, ZS_ENOMEM, "out of memory writing '%s'", name);
    return zs_write_atomic(dir, name, zs_rbuf_str(b), b->len, err);
}

int zs_mkdir_p(const char *dir, struct zs_err *err)
{
    char path[1024];
    struct stat stt;
    size_t n = strlen(dir);

    if (n == 0 || n >= sizeof path)
        return zs_err_set(err, ZS_EIO, "invalid folder name '%s'", dir);
    memcpy(path, dir, n + 1);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST) {
            zs_err_set(err, ZS_EIO, "cannot create folder '%s': %s", path,
                       strerror(errno));
            return ZS_EIO;
        }
        *p = '/';
    }
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        return zs_err_set(err, ZS_EIO, "cannot create folder '%s': %s", dir,
                          strerror(errno));
    if (stat(path, &stt) != 0 || !S_ISDIR(stt.st_mode))
        return zs_err_set(err, ZS_EIO,
                          "cannot create folder '%s': not a folder", dir);
    return 0;
}

void zs_file_stem(const char *name, char *buf, size_t cap)
{
    size_t n = 0;
    if (cap == 0)
        return;
    for (const char *p = name; *p && n + 1 < cap; p++) {
        char c = *p;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || c == '_' ||
                 ((c == '.' || c == '-') && n > 0);
        buf[n++] = ok ? c : '_';
    }
    if (n == 0 && cap > 1)
        buf[n++] = '_';
    buf[n] = '\0';
}

char *zs_fmt_num(char *buf, size_t cap, double v)
{
    if (isnan(v))
        snprintf(buf, cap, "nan");
    else if (v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, cap, "%.0f", v);
    else
        snprintf(buf, cap, "%.12g", v);
    return buf;
}
