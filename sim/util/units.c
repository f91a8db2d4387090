/*
 * units.c — see units.h.  Parsing is locale-independent: numbers are read
 * with our own digit loop, not strtod, so a user's LC_NUMERIC cannot change
 * what "1.5TiB" means (STYLE 26).
 */
#include "util/units.h"
#include "util/strutil.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const struct {
    const char *suffix;
    double mult;
} g_suffixes[] = {
    {"", 1},
    {"b", 1},
    {"kb", 1e3},
    {"mb", 1e6},
    {"gb", 1e9},
    {"tb", 1e12},
    {"pb", 1e15},
    {"kib", 1024.0},
    {"mib", 1024.0 * 1024},
    {"gib", 1024.0 * 1024 * 1024},
    {"tib", 1024.0 * 1024 * 1024 * 1024},
    {"pib", 1024.0 * 1024 * 1024 * 1024 * 1024},
};

int zs_parse_bytes(const char *text, int64_t *bytes)
{
    const char *p = text;
    double v = 0, frac = 0.1;
    int neg = 0, digits = 0;
    char suf[8];
    size_t n = 0;

    while (isspace((unsigned char)*p))
        p++;
    if (*p == '-' || *p == '+')
        neg = *p++ == '-';
    while (isdigit((unsigned char)*p)) {
        v = v * 10 + (*p++ - '0');
        digits++;
        if (v > 1e30)
            return -3;
    }
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p)) {
            v += frac * (*p++ - '0');
            frac /= 10;
            digits++;
        }
    }
    if (!digits)
        return -1;
    while (isspace((unsigned char)*p))
        p++;
    while (*p && !isspace((unsigned char)*p)) {
        if (n + 1 >= sizeof suf)
            return -1;
        suf[n++] = (char)tolower((unsigned char)*p++);
    }
    suf[n] = '\0';
    while (isspace((unsigned char)*p))
        p++;
    if (*p)
        return -1;
    for (size_t i = 0; i < sizeof g_suffixes / sizeof g_suffixes[0]; i++) {
        if (strcmp(suf, g_suffixes[i].suffix) == 0) {
            double b = v * g_suffixes[i].mult;
            if (neg && b > 0)
                return -2;
            if (b > (double)ZS_BYTES_MAX)
                return -3;
            *bytes = (int64_t)llround(b);
            return 0;
        }
    }
    return -1;
}

char *zs_fmt_bytes(char *buf, size_t cap, int64_t bytes)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)bytes;
    double a = fabs(v);
    int u = 0;
    while (a >= 1024.0 && u < 5) {
        a /= 1024.0;
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, cap, "%lld B", (long long)bytes);
    else if (a >= 100)
        snprintf(buf, cap, "%.0f %s", v, units[u]);
    else if (a >= 10)
        snprintf(buf, cap, "%.1f %s", v, units[u]);
    else
        snprintf(buf, cap, "%.2f %s", v, units[u]);
    return buf;
}

char *zs_fmt_seconds(char *buf, size_t cap, double s)
{
    double a = fabs(s);
    if (a < 1e-3)
        snprintf(buf, cap, "%.0f us", s * 1e6);
    else if (a < 1)
        snprintf(buf, cap, "%.0f ms", s * 1e3);
    else if (a < 100)
        snprintf(buf, cap, "%.2f s", s);
    else if (a < 3600)
        snprintf(buf, cap, "%.0f s", s);
    else
        snprintf(buf, cap, "%.2f h", s / 3600);
    return buf;
}

char *zs_fmt_count(char *buf, size_t cap, double n)
{
    double a = fabs(n);
    if (a >= 1e12)
        snprintf(buf, cap, "%.2fT", n / 1e12);
    else if (a >= 1e9)
        snprintf(buf, cap, "%.2fB", n / 1e9);
    else if (a >= 1e6)
        snprintf(buf, cap, "%.1fM", n / 1e6);
    else if (a >= 1e3)
        snprintf(buf, cap, "%.1fk", n / 1e3);
    else
        snprintf(buf, cap, "%.0f", n);
    return buf;
}
