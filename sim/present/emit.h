/*
 * emit.h — the small writers every presenter in present/ shares, so a table
 * opens and a JSON field is written one way: a text table that starts with
 * its underlined header row, cJSON objects filled from a {key, value} list,
 * and streamed JSON fields at two spaces' indent (for the documents written
 * without a tree: zsim.hw/1, zsim.model/1).
 *
 * Output only: nothing here computes a figure.  Byte-for-byte what the
 * presenters printed before they shared it (tests/golden).
 */
#ifndef ZS_EMIT_H
#define ZS_EMIT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct zs_table;

/* A table (util/table.h) whose first row is the underlined header: header
 * names the columns separated by '\t'.  NULL when out of memory (nothing to
 * free then).  The caller owns the table (zs_table_free). */
struct zs_table *zs_emit_table(int ncols, const char *align,
                               const char *header);

/* One field of a cJSON object: a number, a string (NULL adds JSON null), a
 * boolean, or null. */
enum zs_emit_kind { ZS_EMIT_NUM, ZS_EMIT_STR, ZS_EMIT_BOOL, ZS_EMIT_NULL };
struct zs_emit_field {
    const char *key;
    enum zs_emit_kind kind;
    double num;      /* ZS_EMIT_NUM; ZS_EMIT_BOOL: 0 false, else true */
    const char *str; /* ZS_EMIT_STR */
};
#define ZS_JNUM(k, v)                                                          \
    {                                                                          \
        (k), ZS_EMIT_NUM, (double)(v), NULL                                    \
    }
#define ZS_JSTR(k, v)                                                          \
    {                                                                          \
        (k), ZS_EMIT_STR, 0, (v)                                               \
    }
#define ZS_JBOOL(k, v)                                                         \
    {                                                                          \
        (k), ZS_EMIT_BOOL, (v) ? 1 : 0, NULL                                   \
    }
#define ZS_JNULL(k)                                                            \
    {                                                                          \
        (k), ZS_EMIT_NULL, 0, NULL                                             \
    }
#define ZS_EMIT_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Adds the fields to o in their order; o NULL adds nothing (a failed
 * allocation upstream, as cJSON's own Add functions treat it). */
void zs_emit_fields(cJSON *o, const struct zs_emit_field *f, size_t n);

/* Streamed JSON: `  "key": value,\n` (the string escaped by
 * zs_json_put_str; int64 exact; bool true/false). */
void zs_emit_jstr(FILE *out, const char *key, const char *v);
void zs_emit_jint(FILE *out, const char *key, int64_t v);
void zs_emit_jbool(FILE *out, const char *key, bool v);

#endif
