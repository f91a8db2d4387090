/*
 * units.h — sizes and times at the edges of zsim.
 *
 * Inside, bytes are int64_t and time is int64_t nanoseconds (STYLE 18); these
 * functions parse user text ("80GiB", "2TB", "1.5TiB") and format results for
 * people ("79.1 GiB", "1.52 TiB", "3.41 s").  Decimal suffixes are powers of
 * 1000 (KB MB GB TB PB), binary ones powers of 1024 (KiB MiB GiB TiB PiB).
 */
#ifndef ZS_UNITS_H
#define ZS_UNITS_H

#include <stddef.h>
#include <stdint.h>

#define ZS_KiB (1024LL)
#define ZS_MiB (1024LL * 1024)
#define ZS_GiB (1024LL * 1024 * 1024)
#define ZS_TiB (1024LL * 1024 * 1024 * 1024)
#define ZS_NS_PER_S 1000000000LL

/* Largest size zsim accepts anywhere: 1 PiB (a node's RAM is < 100 TiB). */
#define ZS_BYTES_MAX (1024LL * ZS_TiB)

/* Parses "123", "80GiB", "2 TB", "1.5TiB", "512MiB", "0.5GB".  Returns 0, or
 * -1 for malformed text, -2 for a negative value, -3 for a value above
 * ZS_BYTES_MAX.  The result is rounded to whole bytes. */
int zs_parse_bytes(const char *text, int64_t *bytes);

/* "79.1 GiB" (binary units, 3 significant digits); buf >= 16 bytes. */
char *zs_fmt_bytes(char *buf, size_t cap, int64_t bytes);
/* Seconds with a unit: "812 ms", "3.41 s", "2.5 h".  buf >= 16 bytes. */
char *zs_fmt_seconds(char *buf, size_t cap, double s);
/* Count with a suffix: "72.7B", "875M", "12.3k". */
char *zs_fmt_count(char *buf, size_t cap, double n);

static inline double zs_ns_to_s(int64_t t_ns)
{
    return (double)t_ns / 1e9;
}
static inline int64_t zs_s_to_ns(double s)
{
    return (int64_t)(s * 1e9 + 0.5);
}

#endif
