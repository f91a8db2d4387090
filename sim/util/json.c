/*
 * json.c — see json.h.
 *
 * Cost: parsing is cJSON's (linear); locating a key for a message scans the
 * text once per path component, and only on the error path.
 */
#include "util/json.h"
#include "util/alloc.h"
#include "util/strutil.h"
#include "util/units.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

void zs_json_src_release(struct zs_json_src *src)
{
    if (!src)
        return;
    zs_free(src->text);
    src->text = NULL;
    src->len = 0;
}

int zs_json_load_file(const char *path,
                      int (*from_tree)(const struct zs_json_src *src,
                                       const cJSON *root, void *ctx,
                                       struct zs_err *err),
                      void *ctx, struct zs_err *err)
{
    cJSON *root = NULL;
    struct zs_json_src src;
    int rc = zs_json_parse_file(path, &root, &src, err);
    if (rc)
        return rc;
    rc = from_tree(&src, root, ctx, err);
    cJSON_Delete(root);
    zs_json_src_release(&src);
    return rc;
}

int zs_json_bad_at(const struct zs_json_src *src, const char *objpath,
                   const char *key, struct zs_err *err, const char *fmt, ...)
{
    char where[300], what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    zs_json_where(src, objpath, key, where, sizeof where);
    if (objpath && *objpath)
        return zs_err_set(err, ZS_EINPUT, "invalid '%s.%s' in %s: %s", objpath,
                          key, where, what);
    return zs_err_set(err, ZS_EINPUT, "invalid '%s' in %s: %s", key, where,
                      what);
}

/* 1-based line and column of byte offset off in text. */
static void line_col(const char *text, size_t off, int *line, int *col)
{
    int l = 1, c = 1;
    for (size_t i = 0; i < off && text[i]; i++) {
        if (text[i] == '\n') {
            l++;
            c = 1;
        } else {
            c++;
        }
    }
    *line = l;
    *col = c;
}

int zs_json_in_string(char c, int *in_str, int *esc)
{
    if (!*in_str)
        return 0;
    if (*esc)
        *esc = 0;
    else if (c == '\\')
        *esc = 1;
    else if (c == '"')
        *in_str = 0;
    return 1;
}

/* Whether text ends inside a string or an open object/array: cJSON then
 * points at the last value it tried, but the honest message is "unexpected
 * end of input" at the end. */
static int truncated(const char *text, size_t len)
{
    long depth = 0;
    int in_str = 0, esc = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (zs_json_in_string(c, &in_str, &esc))
            continue;
        if (c == '"')
            in_str = 1;
        else if (c == '{' || c == '[')
            depth++;
        else if (c == '}' || c == ']') {
            if (--depth < 0)
                return 0;
        }
    }
    return in_str || depth > 0;
}

int zs_json_parse_text(const char *name, const char *text, size_t len,
                       cJSON **root, struct zs_json_src *src,
                       struct zs_err *err)
{
    const char *end = NULL;
    cJSON *tree;
    size_t i, nonspace = 0;

    zs_alloc_init();
    *root = NULL;
    memset(src, 0, sizeof *src);
    zs_strlcpy(src->path, name, sizeof src->path);

    for (i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)text[i];
        if (ch == 0 || (ch < 0x20 && ch != '\n' && ch != '\r' && ch != '\t'))
            return zs_err_set(err, ZS_EINPUT,
                              "binary file '%s' (byte 0x%02x at offset %zu): "
                              "expected a JSON object",
                              name, ch, i);
        if (ch != ' ' && ch != '\n' && ch != '\r' && ch != '\t')
            nonspace++;
    }
    if (!nonspace)
        return zs_err_set(err, ZS_EINPUT,
                          "empty file '%s': expected a JSON object", name);

    src->text = zs_malloc(len + 1);
    if (!src->text)
        return zs_err_set(err, ZS_ENOMEM, "out of memory reading '%s'", name);
    memcpy(src->text, text, len);
    src->text[len] = '\0';
    src->len = len;

    /* The length includes the terminating NUL: cJSON's "require null
     * terminated" check reads it. */
    tree = cJSON_ParseWithLengthOpts(src->text, len + 1, &end, 1);
    if (!tree) {
        int line, col;
        size_t off;
        /* cJSON reports no cause; an allocation failure looks the same, so
         * re-check: if the failure was injected, say so. */
        if (zs_alloc_failed()) {
            zs_json_src_release(src);
            return zs_err_set(err, ZS_ENOMEM, "out of memory parsing '%s'",
                              name);
        }
        off = end ? (size_t)(end - src->text) : 0;
        if (off > len || truncated(src->text, len))
            off = len;
        line_col(src->text, off, &line, &col);
        if (off >= len)
            zs_err_set(err, ZS_EINPUT,
                       "malformed JSON in %s:%d:%d: unexpected end of input",
                       name, line, col);
        else if (src->text[off] >= 0x21 && src->text[off] < 0x7f)
            zs_err_set(err, ZS_EINPUT,
                       "malformed JSON in %s:%d:%d: unexpected '%c'", name,
                       line, col, src->text[off]);
        else if (src->text[off] == '\n' || src->text[off] == '\r')
            zs_err_set(err, ZS_EINPUT,
                       "malformed JSON in %s:%d:%d: unexpected end of line",
                       name, line, col);
        else
            zs_err_set(err, ZS_EINPUT,
                       "malformed JSON in %s:%d:%d: unexpected byte 0x%02x",
                       name, line, col, (unsigned char)src->text[off]);
        zs_json_src_release(src);
        return ZS_EINPUT;
    }
    *root = tree;
    return 0;
}

int zs_read_file(const char *path, size_t max_bytes, char **text, size_t *len,
                 struct zs_err *err)
{
    FILE *f;
    char *buf = NULL;
    size_t n = 0, cap = 0;

    *text = NULL;
    *len = 0;
    f = fopen(path, "rb");
    if (!f)
        return zs_err_set(err, ZS_EINPUT, "cannot open '%s': %s", path,
                          strerror(errno));
    for (;;) {
        size_t got;
        if (zs_grow((void **)&buf, &cap, n + 65537, 1)) {
            fclose(f);
            zs_free(buf);
            return zs_err_set(err, ZS_ENOMEM, "out of memory reading '%s'",
                              path);
        }
        got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (n > max_bytes) {
            fclose(f);
            zs_free(buf);
            return zs_err_set(err, ZS_EINPUT,
                              "file '%s' is too large: at most %zu MiB", path,
                              max_bytes >> 20);
        }
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        fclose(f);
        zs_free(buf);
        return zs_err_set(err, ZS_EINPUT, "cannot read '%s': %s", path,
                          strerror(errno));
    }
    fclose(f);
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}

int zs_json_parse_file(const char *path, cJSON **root, struct zs_json_src *src,
                       struct zs_err *err)
{
    char *buf;
    size_t n;
    int rc;

    *root = NULL;
    memset(src, 0, sizeof *src);
    rc = zs_read_file(path, ZS_JSON_MAX_FILE_BYTES, &buf, &n, err);
    if (rc)
        return rc;
    rc = zs_json_parse_text(path, buf, n, root, src, err);
    zs_free(buf);
    return rc;
}

/* Finds `"key"` followed by optional space and ':' at or after from; returns
 * the offset of the opening quote or -1. */
static long find_key(const char *text, size_t from, const char *key)
{
    size_t klen = strlen(key);
    const char *p = text + from;
    while ((p = strchr(p, '"')) != NULL) {
        if (strncmp(p + 1, key, klen) == 0 && p[1 + klen] == '"') {
            const char *q = p + 2 + klen;
            while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
                q++;
            if (*q == ':')
                return (long)(p - text);
        }
        p++;
    }
    return -1;
}

void zs_json_where(const struct zs_json_src *src, const char *objpath,
                   const char *key, char *buf, size_t cap)
{
    size_t from = 0;
    char part[128];
    const char *p = objpath ? objpath : "";
    long off;
    int line, col;

    if (!src || !src->text) {
        snprintf(buf, cap, "%s", src ? src->path : "?");
        return;
    }
    /* Walk down the parent path: each component narrows the search. */
    while (*p) {
        size_t n = strcspn(p, ".");
        if (n >= sizeof part)
            n = sizeof part - 1;
        memcpy(part, p, n);
        part[n] = '\0';
        off = find_key(src->text, from, part);
        if (off < 0)
            break;
        from = (size_t)off + 1;
        p += n;
        if (*p == '.')
            p++;
    }
    off = key ? find_key(src->text, from, key) : -1;
    if (off < 0) {
        snprintf(buf, cap, "%s", src->path);
        return;
    }
    line_col(src->text, (size_t)off, &line, &col);
    snprintf(buf, cap, "%s:%d:%d", src->path, line, col);
}

const char *zs_json_type_name(const cJSON *node)
{
    if (!node)
        return "nothing";
    switch (node->type & 0xFF) { /* as cJSON_Is* test it */
    case cJSON_NULL:
        return "null";
    case cJSON_False:
    case cJSON_True:
        return "boolean";
    case cJSON_Number:
        return "number";
    case cJSON_String:
        return "string";
    case cJSON_Array:
        return "array";
    case cJSON_Object:
        return "object";
    default:
        return "invalid value";
    }
}

int zs_json_expect_object(const struct zs_json_src *src, const cJSON *obj,
                          const char *objpath, struct zs_err *err)
{
    char where[300];
    if (cJSON_IsObject(obj))
        return 0;
    if (!objpath || !*objpath) {
        return zs_err_set(err, ZS_EINPUT,
                          "invalid top level in %s: must be an object (got %s)",
                          src->path, zs_json_type_name(obj));
    }
    {
        const char *leaf = strrchr(objpath, '.');
        char parent[128] = "";
        if (leaf) {
            size_t n = (size_t)(leaf - objpath);
            if (n >= sizeof parent)
                n = sizeof parent - 1;
            memcpy(parent, objpath, n);
            parent[n] = '\0';
            leaf++;
        } else {
            leaf = objpath;
        }
        zs_json_where(src, parent, leaf, where, sizeof where);
    }
    return zs_err_set(err, ZS_EINPUT,
                      "invalid '%s' in %s: must be an object (got %s)", objpath,
                      where, zs_json_type_name(obj));
}

/* Qualified name for messages: "text_config.hidden_size" or "hidden_size". */
static void qual(char *buf, size_t cap, const char *objpath, const char *key)
{
    if (objpath && *objpath)
        snprintf(buf, cap, "%s.%s", objpath, key);
    else
        snprintf(buf, cap, "%s", key);
}

/* "%g" is locale-dependent for the decimal point; format through a buffer
 * and repair it so messages are identical under any LC_NUMERIC. */
void zs_json_fmt_num_whole(char *buf, size_t cap, double v,
                           double whole_below)
{
    if (fabs(v) < whole_below && v == floor(v))
        snprintf(buf, cap, "%.0f", v);
    else
        snprintf(buf, cap, "%g", v);
    for (char *p = buf; *p; p++)
        if (*p == ',')
            *p = '.';
}

void zs_json_fmt_num(char *buf, size_t cap, double v)
{
    /* integers are exact up to 2^53 in a double: print them whole */
    zs_json_fmt_num_whole(buf, cap, v, 9007199254740992.0);
}

static void range_text(char *buf, size_t cap, const struct zs_field *f)
{
    char lo[40], hi[40];
    zs_json_fmt_num(lo, sizeof lo, f->min);
    zs_json_fmt_num(hi, sizeof hi, f->max);
    snprintf(buf, cap, "[%s, %s]", lo, hi);
}

void zs_field_want_text(const struct zs_field *f, char *buf, size_t cap)
{
    char r[96];
    switch (f->type) {
    case ZS_F_INT:
        range_text(r, sizeof r, f);
        snprintf(buf, cap, "an integer in %s", r);
        break;
    case ZS_F_DOUBLE:
        range_text(r, sizeof r, f);
        snprintf(buf, cap, "a number in %s", r);
        break;
    case ZS_F_BOOL:
        snprintf(buf, cap, "true or false");
        break;
    case ZS_F_STRING:
        snprintf(buf, cap, "a string of 1 to %zu characters",
                 f->str_cap ? f->str_cap - 1 : 0);
        break;
    case ZS_F_BYTES: {
        char lo[24], hi[24];
        zs_fmt_bytes(lo, sizeof lo, (int64_t)f->min);
        zs_fmt_bytes(hi, sizeof hi, (int64_t)f->max);
        snprintf(buf, cap, "a size in [%s, %s] (bytes or e.g. \"80GiB\")", lo,
                 hi);
        break;
    }
    case ZS_F_ENUM: {
        size_t len = 0;
        len += (size_t)snprintf(buf, cap, "one of ");
        for (size_t i = 0; f->choices && f->choices[i] && len < cap; i++)
            len += (size_t)snprintf(buf + len, cap - len, i ? ", %s" : "%s",
                                    f->choices[i]);
        break;
    }
    default:
        snprintf(buf, cap, "a value");
        break;
    }
}

void zs_json_got_text(char *buf, size_t cap, const cJSON *node)
{
    if (cJSON_IsNumber(node))
        zs_json_fmt_num(buf, cap, node->valuedouble);
    else if (cJSON_IsString(node)) {
        char s[40];
        zs_strlcpy(s, node->valuestring, sizeof s);
        if (strlen(node->valuestring) >= sizeof s)
            memcpy(s + sizeof s - 4, "...", 4);
        snprintf(buf, cap, "'%s'", s);
    } else
        snprintf(buf, cap, "%s", zs_json_type_name(node));
}

static int bad_value(const struct zs_json_src *src, const char *objpath,
                     const struct zs_field *f, const cJSON *node,
                     struct zs_err *err)
{
    char where[300], name[200], want[256], got[64];
    zs_json_where(src, objpath, f->key, where, sizeof where);
    qual(name, sizeof name, objpath, f->key);
    zs_field_want_text(f, want, sizeof want);
    zs_json_got_text(got, sizeof got, node);
    return zs_err_set(err, ZS_EINPUT, "invalid '%s' in %s: must be %s (got %s)",
                      name, where, want, got);
}

static void write_default(const struct zs_field *f, void *dst)
{
    char *base = dst;
    switch (f->type) {
    case ZS_F_INT:
    case ZS_F_BYTES:
        *(int64_t *)(base + f->offset) = (int64_t)f->def;
        break;
    case ZS_F_DOUBLE:
        *(double *)(base + f->offset) = f->def;
        break;
    case ZS_F_BOOL:
        *(bool *)(base + f->offset) = f->def != 0;
        break;
    case ZS_F_ENUM:
        *(int *)(base + f->offset) = (int)f->def;
        break;
    case ZS_F_STRING:
        if (f->str_cap)
            zs_strlcpy(base + f->offset, f->def_str ? f->def_str : "",
                       f->str_cap);
        break;
    default:
        break;
    }
}

void zs_json_defaults(const struct zs_field *fields, size_t nfields, void *dst)
{
    for (size_t i = 0; i < nfields; i++)
        write_default(&fields[i], dst);
}

static int read_one(const struct zs_json_src *src, const char *objpath,
                    const struct zs_field *f, const cJSON *node, void *dst,
                    struct zs_err *err)
{
    char *base = dst;
    double v;

    if (cJSON_IsNull(node) && (f->flags & ZS_F_NULLABLE)) {
        write_default(f, dst);
        return 0;
    }
    switch (f->type) {
    case ZS_F_INT:
        if (!cJSON_IsNumber(node))
            return bad_value(src, objpath, f, node, err);
        v = node->valuedouble;
        if (!isfinite(v) || v != floor(v) || v < f->min || v > f->max)
            return bad_value(src, objpath, f, node, err);
        *(int64_t *)(base + f->offset) = (int64_t)v;
        return 0;
    case ZS_F_DOUBLE:
        if (!cJSON_IsNumber(node))
            return bad_value(src, objpath, f, node, err);
        v = node->valuedouble;
        if (!isfinite(v) || v < f->min || v > f->max)
            return bad_value(src, objpath, f, node, err);
        *(double *)(base + f->offset) = v;
        return 0;
    case ZS_F_BOOL:
        if (!cJSON_IsBool(node))
            return bad_value(src, objpath, f, node, err);
        *(bool *)(base + f->offset) = cJSON_IsTrue(node);
        return 0;
    case ZS_F_STRING:
        if (!cJSON_IsString(node) || !node->valuestring[0] ||
            strlen(node->valuestring) >= f->str_cap)
            return bad_value(src, objpath, f, node, err);
        zs_strlcpy(base + f->offset, node->valuestring, f->str_cap);
        return 0;
    case ZS_F_BYTES: {
        int64_t b;
        if (cJSON_IsNumber(node)) {
            v = node->valuedouble;
            if (!isfinite(v) || v != floor(v) || v < f->min || v > f->max)
                return bad_value(src, objpath, f, node, err);
            b = (int64_t)v;
        } else if (cJSON_IsString(node)) {
            if (zs_parse_bytes(node->valuestring, &b) != 0 ||
                (double)b < f->min || (double)b > f->max)
                return bad_value(src, objpath, f, node, err);
        } else {
            return bad_value(src, objpath, f, node, err);
        }
        *(int64_t *)(base + f->offset) = b;
        return 0;
    }
    case ZS_F_ENUM:
        /* a yes/no/auto field takes a JSON boolean too (false: no, true:
         * yes), as the boolean it may have been before (overlap_comm) */
        if (cJSON_IsBool(node) && f->choices && f->choices[0] &&
            !strcmp(f->choices[0], "no") && f->choices[1] &&
            !strcmp(f->choices[1], "yes")) {
            *(int *)(base + f->offset) = cJSON_IsTrue(node) ? 1 : 0;
            return 0;
        }
        if (cJSON_IsString(node) && f->choices) {
            for (int i = 0; f->choices[i]; i++) {
                if (strcmp(f->choices[i], node->valuestring) == 0) {
                    *(int *)(base + f->offset) = i;
                    return 0;
                }
            }
        }
        return bad_value(src, objpath, f, node, err);
    case ZS_F_SKIP:
    case ZS_F_CUSTOM:
        return 0;
    }
    return bad_value(src, objpath, f, node, err);
}

int zs_json_read(const struct zs_json_src *src, const cJSON *obj,
                 const char *objpath, const struct zs_field *fields,
                 size_t nfields, void *dst, unsigned opts, struct zs_err *err)
{
    const cJSON *item;
    int rc;

    rc = zs_json_expect_object(src, obj, objpath, err);
    if (rc)
        return rc;

    /* Unknown keys first: a typo is the likeliest cause of what follows. */
    cJSON_ArrayForEach(item, obj)
    {
        size_t i;
        for (i = 0; i < nfields; i++)
            if (strcmp(fields[i].key, item->string) == 0)
                break;
        if (i < nfields)
            continue;
        if (opts & ZS_JSON_ALLOW_UNKNOWN)
            continue;
        {
            char where[300], name[200];
            int best = zs_str_closest_key(item->string, fields, nfields,
                                          sizeof *fields,
                                          offsetof(struct zs_field, key));
            zs_json_where(src, objpath, item->string, where, sizeof where);
            qual(name, sizeof name, objpath, item->string);
            if (best >= 0)
                return zs_err_set(err, ZS_EINPUT,
                                  "unknown key '%s' in %s: did you mean '%s'?",
                                  name, where, fields[best].key);
            return zs_err_set(err, ZS_EINPUT, "unknown key '%s' in %s", name,
                              where);
        }
    }

    for (size_t i = 0; i < nfields; i++) {
        const struct zs_field *f = &fields[i];
        const cJSON *node = cJSON_GetObjectItemCaseSensitive(obj, f->key);
        if (!node) {
            if (f->flags & ZS_F_REQUIRED) {
                char name[200], want[256];
                qual(name, sizeof name, objpath, f->key);
                zs_field_want_text(f, want, sizeof want);
                return zs_err_set(err, ZS_EINPUT,
                                  "missing '%s' in %s: required, %s", name,
                                  src->path, want);
            }
            write_default(f, dst);
            continue;
        }
        rc = read_one(src, objpath, f, node, dst, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* Strict C-locale number: optional sign, digits, optional fraction and
 * exponent, nothing else.  Returns 0 or -1. */
static int parse_number(const char *t, double *out)
{
    const char *p = t;
    double v = 0, scale = 1;
    int neg = 0, digits = 0, eneg = 0;
    long ex = 0;
    if (*p == '-' || *p == '+')
        neg = *p++ == '-';
    while (*p >= '0' && *p <= '9') {
        v = v * 10 + (*p++ - '0');
        digits++;
    }
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') {
            scale /= 10;
            v += (*p++ - '0') * scale;
            digits++;
        }
    }
    if (!digits)
        return -1;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '-' || *p == '+')
            eneg = *p++ == '-';
        if (!(*p >= '0' && *p <= '9'))
            return -1;
        while (*p >= '0' && *p <= '9') {
            if (ex < 100000)
                ex = ex * 10 + (*p - '0');
            p++;
        }
    }
    if (*p)
        return -1;
    v *= pow(10.0, (double)(eneg ? -ex : ex));
    *out = neg ? -v : v;
    return 0;
}

int zs_field_parse_text(const struct zs_field *f, const char *text, void *dst)
{
    char *base = dst;
    double v;
    switch (f->type) {
    case ZS_F_INT:
        if (parse_number(text, &v) || !isfinite(v) || v != floor(v) ||
            v < f->min || v > f->max)
            return -1;
        *(int64_t *)(base + f->offset) = (int64_t)v;
        return 0;
    case ZS_F_DOUBLE:
        if (parse_number(text, &v) || !isfinite(v) || v < f->min || v > f->max)
            return -1;
        *(double *)(base + f->offset) = v;
        return 0;
    case ZS_F_BOOL:
        if (!strcmp(text, "yes") || !strcmp(text, "true") ||
            !strcmp(text, "on"))
            *(bool *)(base + f->offset) = true;
        else if (!strcmp(text, "no") || !strcmp(text, "false") ||
                 !strcmp(text, "off"))
            *(bool *)(base + f->offset) = false;
        else
            return -1;
        return 0;
    case ZS_F_STRING:
        if (!text[0] || strlen(text) >= f->str_cap)
            return -1;
        zs_strlcpy(base + f->offset, text, f->str_cap);
        return 0;
    case ZS_F_BYTES: {
        int64_t b;
        if (zs_parse_bytes(text, &b) || (double)b < f->min ||
            (double)b > f->max)
            return -1;
        *(int64_t *)(base + f->offset) = b;
        return 0;
    }
    case ZS_F_ENUM:
        for (int i = 0; f->choices && f->choices[i]; i++)
            if (!strcmp(f->choices[i], text)) {
                *(int *)(base + f->offset) = i;
                return 0;
            }
        return -1;
    default:
        return -1;
    }
}

const struct zs_field *zs_field_find(const struct zs_field *fields,
                                     size_t nfields, const char *key)
{
    for (size_t i = 0; i < nfields; i++)
        if (!strcmp(fields[i].key, key))
            return &fields[i];
    return NULL;
}

void zs_json_put_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}
