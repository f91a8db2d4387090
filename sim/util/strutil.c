/*
 * strutil.c — see strutil.h.  Distances are computed with a two-row dynamic
 * programme on stack buffers (no allocation), so they are safe on error paths.
 */
#include "util/strutil.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define ZS_DIST_MAX 63

int zs_str_distance(const char *a, const char *b)
{
    int prev[ZS_DIST_MAX + 1], cur[ZS_DIST_MAX + 1];
    size_t la = strlen(a), lb = strlen(b);
    if (la > ZS_DIST_MAX)
        la = ZS_DIST_MAX;
    if (lb > ZS_DIST_MAX)
        lb = ZS_DIST_MAX;
    for (size_t j = 0; j <= lb; j++)
        prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int cost = tolower((unsigned char)a[i - 1]) !=
                       tolower((unsigned char)b[j - 1]);
            int best = prev[j - 1] + cost;
            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            cur[j] = best;
        }
        memcpy(prev, cur, sizeof(int) * (lb + 1));
    }
    return prev[lb];
}

int zs_str_closest(const char *s, const char *const *cands, size_t n)
{
    return zs_str_closest_key(s, cands, n, sizeof *cands, 0);
}

int zs_str_closest_key(const char *s, const void *base, size_t n,
                       size_t stride, size_t key_off)
{
    int best = -1, bestd = 1 << 30;
    int limit = (int)strlen(s) / 3;
    if (limit < 2)
        limit = 2;
    for (size_t i = 0; i < n; i++) {
        const char *c = *(const char *const *)((const char *)base +
                                                i * stride + key_off);
        int d = c ? zs_str_distance(s, c) : 1 << 30;
        if (d < bestd) {
            bestd = d;
            best = (int)i;
        }
    }
    return bestd <= limit ? best : -1;
}

void zs_str_closest_list(const char *s, const char *const *cands, size_t n,
                         size_t most, char *buf, size_t cap)
{
    /* Selection by repeated minimum over (distance, index), each round taking
     * the smallest pair after the previous round's: no marks to keep, so no
     * limit on n; O(most * n), n is small (names in a library). */
    size_t len = 0;
    int prevd = -1, previ = -1;
    if (cap)
        buf[0] = '\0';
    for (size_t k = 0; k < most && k < n; k++) {
        int best = -1, bestd = 1 << 30;
        for (size_t i = 0; i < n; i++) {
            int d = zs_str_distance(s, cands[i]);
            /* A candidate that contains s (e.g. "72b" in "qwen2.5-72b")
             * is closer than its edit distance says. */
            if (strstr(cands[i], s))
                d = 0;
            if (d < prevd || (d == prevd && (int)i <= previ))
                continue; /* listed in an earlier round */
            if (d < bestd) {
                bestd = d;
                best = (int)i;
            }
        }
        if (best < 0)
            break;
        prevd = bestd;
        previ = best;
        if (len < cap) {
            int w =
                snprintf(buf + len, cap - len, k ? ", %s" : "%s", cands[best]);
            if (w > 0)
                len += (size_t)w;
        }
    }
}

int zs_strlcpy(char *dst, const char *src, size_t cap)
{
    size_t n = strlen(src);
    if (!cap)
        return 1;
    if (n >= cap) {
        memcpy(dst, src, cap - 1);
        dst[cap - 1] = '\0';
        return 1;
    }
    memcpy(dst, src, n + 1);
    return 0;
}

int zs_strcaseeq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

int zs_str_endswith(const char *s, const char *suffix)
{
    size_t ls = strlen(s), lx = strlen(suffix);
    return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}
