/*
 * strutil.h — small string helpers: edit distance for did-you-mean messages,
 * bounded copies, case-insensitive comparisons.
 */
#ifndef ZS_STRUTIL_H
#define ZS_STRUTIL_H

#include <stddef.h>

/* Levenshtein distance, case-insensitive; strings longer than 63 bytes are
 * compared on their first 63. */
int zs_str_distance(const char *a, const char *b);

/* Index of the candidate closest to s (n candidates), or -1 when none is
 * within max(2, strlen(s)/3) edits. */
int zs_str_closest(const char *s, const char *const *cands, size_t n);

/* The same over n records of `stride` bytes from base, each holding its
 * candidate as a `const char *` at byte offset key_off (a table of structs:
 * no copy into a fixed-size array, so no limit on n). */
int zs_str_closest_key(const char *s, const void *base, size_t n,
                       size_t stride, size_t key_off);

/* Writes up to `most` closest candidates, comma-separated, into buf. */
void zs_str_closest_list(const char *s, const char *const *cands, size_t n,
                         size_t most, char *buf, size_t cap);

/* Copies src into dst[cap], always NUL-terminated; returns 1 if truncated. */
int zs_strlcpy(char *dst, const char *src, size_t cap);

int zs_strcaseeq(const char *a, const char *b);
int zs_str_endswith(const char *s, const char *suffix);

#endif
