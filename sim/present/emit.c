/*
 * emit.c — see emit.h.
 */
#include "present/emit.h"
#include "util/json.h"
#include "util/table.h"

#include <inttypes.h>

struct zs_table *zs_emit_table(int ncols, const char *align, const char *header)
{
    struct zs_table *t = zs_table_new(ncols, align);
    if (!t)
        return NULL;
    zs_table_header(t);
    if (zs_table_rowf(t, "%s", header)) {
        zs_table_free(t);
        return NULL;
    }
    return t;
}

void zs_emit_fields(cJSON *o, const struct zs_emit_field *f, size_t n)
{
    for (size_t i = 0; o && i < n; i++)
        switch (f[i].kind) {
        case ZS_EMIT_NUM:
            cJSON_AddNumberToObject(o, f[i].key, f[i].num);
            break;
        case ZS_EMIT_STR:
            if (f[i].str)
                cJSON_AddStringToObject(o, f[i].key, f[i].str);
            else
                cJSON_AddNullToObject(o, f[i].key);
            break;
        case ZS_EMIT_BOOL:
            cJSON_AddBoolToObject(o, f[i].key, f[i].num != 0);
            break;
        default:
            cJSON_AddNullToObject(o, f[i].key);
            break;
        }
}

void zs_emit_jstr(FILE *out, const char *key, const char *v)
{
    fprintf(out, "  \"%s\": ", key);
    zs_json_put_str(out, v);
    fputs(",\n", out);
}

void zs_emit_jint(FILE *out, const char *key, int64_t v)
{
    fprintf(out, "  \"%s\": %" PRId64 ",\n", key, v);
}

void zs_emit_jbool(FILE *out, const char *key, bool v)
{
    fprintf(out, "  \"%s\": %s,\n", key, v ? "true" : "false");
}
