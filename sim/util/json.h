/*
 * json.h — table-driven JSON loading with exact, located error messages.
 *
 * Loaders parse a file with zs_json_parse_file, then copy fields into zsim
 * structs with zs_json_read against a table of struct zs_field (key, type,
 * range, default, offset).  cJSON trees never leave the loaders: the caller
 * deletes the tree and releases the source before returning (STYLE 16).
 *
 * Positions: cJSON keeps none, so a field's line:column is found by locating
 * its quoted key in the source text under its parent's path (first match).
 * Messages follow STYLE 11, e.g.
 *   invalid 'hidden_size' in models/x.json:3:5: must be in [1, 1048576] (got
 * -5)
 */
#ifndef ZS_JSON_H
#define ZS_JSON_H

#include "util/err.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The text a tree was parsed from, for locating keys in messages. */
struct zs_json_src {
    char path[256]; /* as given by the user */
    char *text;     /* owned, NUL-terminated */
    size_t len;
};

enum zs_ftype {
    ZS_F_INT,    /* int64_t; integral number in [min, max] */
    ZS_F_DOUBLE, /* double; finite number in [min, max] */
    ZS_F_BOOL,   /* bool */
    ZS_F_STRING, /* char[str_cap]; length 1..str_cap-1 */
    ZS_F_BYTES,  /* int64_t; number of bytes or a size string "80GiB" */
    ZS_F_ENUM,   /* int; index into choices */
    ZS_F_SKIP,   /* accepted and ignored (documented keys we do not use) */
    ZS_F_CUSTOM  /* present keys are left to the caller (objects, arrays) */
};

#define ZS_F_REQUIRED 1u /* absent key is an error */
#define ZS_F_NULLABLE 2u /* null means "use the default" */

struct zs_field {
    const char *key;
    enum zs_ftype type;
    size_t offset;   /* into the destination struct */
    double min, max; /* numeric range (inclusive) */
    double def;      /* default when absent (numbers, bools, enums) */
    unsigned flags;  /* ZS_F_REQUIRED, ZS_F_NULLABLE */
    const char *const *choices; /* ZS_F_ENUM: NULL-terminated */
    size_t str_cap;             /* ZS_F_STRING: capacity at offset */
    const char *def_str;        /* ZS_F_STRING: default when absent */
};

/* Table rows without the members their type does not use: a number, size
 * or bool (ZS_FIELD), a key left to the caller (ZS_FIELD_CUSTOM). */
#define ZS_FIELD(key, type, off, lo, hi, def, flags)                           \
    {                                                                          \
        key, type, off, lo, hi, def, flags, NULL, 0, NULL                      \
    }
#define ZS_FIELD_CUSTOM(key)                                                   \
    {                                                                          \
        key, ZS_F_CUSTOM, 0, 0, 0, 0, 0, NULL, 0, NULL                         \
    }

/* zs_json_read options */
#define ZS_JSON_ALLOW_UNKNOWN                                                  \
    1u /* unknown keys are ignored (foreign formats) */

#define ZS_JSON_MAX_FILE_BYTES (64u << 20)

/* Reads and parses a file.  On success *root is an owned tree and src holds
 * the owned text; release both with cJSON_Delete and zs_json_src_release.
 * Errors (ZS_EINPUT unless I/O): missing/unreadable file, empty file, binary
 * file, over ZS_JSON_MAX_FILE_BYTES, malformed JSON with line:column. */
int zs_json_parse_file(const char *path, cJSON **root, struct zs_json_src *src,
                       struct zs_err *err);
/* Same from memory; name is used in messages.  text is copied. */
int zs_json_parse_text(const char *name, const char *text, size_t len,
                       cJSON **root, struct zs_json_src *src,
                       struct zs_err *err);
void zs_json_src_release(struct zs_json_src *src);
/* zs_json_parse_file, then from_tree(src, root, ctx, err), then the tree
 * deleted and the text released whatever from_tree returned (STYLE 16). */
int zs_json_load_file(const char *path,
                      int (*from_tree)(const struct zs_json_src *src,
                                       const cJSON *root, void *ctx,
                                       struct zs_err *err),
                      void *ctx, struct zs_err *err);

/* Reads a whole file into a NUL-terminated heap buffer (zs_free).  Errors
 * (ZS_EINPUT unless memory): "cannot open 'p': ...", "cannot read 'p': ...",
 * "file 'p' is too large: at most N MiB". */
int zs_read_file(const char *path, size_t max_bytes, char **text, size_t *len,
                 struct zs_err *err);

/* A number for messages: integers up to 2^53 whole, others "%g", always with
 * a '.' whatever LC_NUMERIC says (STYLE 26). */
/* The same, integers printed whole only below whole_below ("%g" above). */
void zs_json_fmt_num_whole(char *buf, size_t cap, double v,
                           double whole_below);
void zs_json_fmt_num(char *buf, size_t cap, double v);
/* What a node holds, for "(got ...)": the number, the quoted string (cut at
 * 36 characters with "..."), or its type name. */
void zs_json_got_text(char *buf, size_t cap, const cJSON *node);

/* Copies obj's fields into dst per the table.  objpath names obj inside the
 * document ("" for the root, "text_config" or "a.b" for nested objects) and is
 * used to locate keys and to qualify names in messages.  Defaults are written
 * for absent keys.  Unknown keys are errors with a did-you-mean unless
 * ZS_JSON_ALLOW_UNKNOWN. */
int zs_json_read(const struct zs_json_src *src, const cJSON *obj,
                 const char *objpath, const struct zs_field *fields,
                 size_t nfields, void *dst, unsigned opts, struct zs_err *err);

/* Fills dst with every default of the table (no JSON involved). */
void zs_json_defaults(const struct zs_field *fields, size_t nfields, void *dst);

/* ZS_EINPUT "invalid 'objpath.key' in file:line:col: <what>" ("invalid
 * 'key' ..." at the root, objpath "" or NULL), at key's position. */
int zs_json_bad_at(const struct zs_json_src *src, const char *objpath,
                   const char *key, struct zs_err *err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Writes "path:line:col" (or just "path" when the key is not found) for key
 * under objpath into buf. */
void zs_json_where(const struct zs_json_src *src, const char *objpath,
                   const char *key, char *buf, size_t cap);

/* What a field accepts, in words: "an integer in [1, 4096]", "one of a, b". */
void zs_field_want_text(const struct zs_field *f, char *buf, size_t cap);
/* Parses a command-line text for field f into dst (the struct the table
 * describes), with the same types and ranges as JSON: integers and numbers in
 * C-locale syntax, booleans yes/no/true/false, sizes "80GiB", enum names.
 * Returns 0, or -1 when the text is not acceptable (dst untouched). */
int zs_field_parse_text(const struct zs_field *f, const char *text, void *dst);
/* The table entry for key, or NULL. */
const struct zs_field *zs_field_find(const struct zs_field *fields,
                                     size_t nfields, const char *key);

/* Writes s as a JSON string literal (quotes, backslashes and control bytes
 * escaped) to f: for writers that stream JSON without building a tree. */
void zs_json_put_str(FILE *f, const char *s);

/* For scanners of raw JSON text (error locating, truncation checks): when
 * *in_str, c is a character of an open string literal, and the escape and
 * string states are advanced past it (a closing '"' clears *in_str); returns
 * 1 then, 0 when c is outside any string (the caller sets *in_str at an
 * opening '"'). */
int zs_json_in_string(char c, int *in_str, int *esc);

/* Human name of a JSON node's type: "string", "number", "object", ... */
const char *zs_json_type_name(const cJSON *node);

/* Checks that obj is an object; message names objpath. */
int zs_json_expect_object(const struct zs_json_src *src, const cJSON *obj,
                          const char *objpath, struct zs_err *err);

#endif
