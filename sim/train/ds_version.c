/*
 * ds_version.c — see ds_version.h.
 */
#include "train/ds_version.h"

#include <ctype.h>
#include <stdio.h>

/* The one grammar for a DeepSpeed release number, wherever it is given (a
 * flag, a scenario file, lint): "X.Y.Z", each part 0..999, with an optional
 * leading 'v' and a local/pre-release tag after Z ("+cu121", "rc1", ".dev0"),
 * as `pip show deepspeed` and deepspeed.__version__ print them. */
static bool parse(const char *text, struct zs_ds_version *out)
{
    const char *p = text;
    int part[3] = {0, 0, 0};

    if (*p == 'v' || *p == 'V')
        p++;
    for (int i = 0; i < 3; i++) {
        int digits = 0;
        long v = 0;
        while (isdigit((unsigned char)*p)) {
            v = v * 10 + (*p++ - '0');
            if (++digits > 3)
                break;
        }
        if (!digits || digits > 3 || (i < 2 && *p != '.'))
            return false;
        part[i] = (int)v;
        if (i < 2)
            p++;
    }
    /* After Z: nothing, or a local/pre-release tag. */
    if (*p && *p != '+' && *p != '-' && !isalpha((unsigned char)*p) &&
        !(*p == '.' && isalpha((unsigned char)p[1])))
        return false;
    out->major = part[0];
    out->minor = part[1];
    out->patch = part[2];
    return true;
}

int zs_ds_version_parse(const char *text, struct zs_ds_version *out,
                        struct zs_err *err)
{
    if (!text)
        return zs_err_set(err, ZS_EUSAGE, "missing DeepSpeed version");
    if (parse(text, out))
        return 0;
    return zs_err_set(err, ZS_EUSAGE,
                      "invalid DeepSpeed version '%s': must be X.Y.Z with "
                      "each part in [0, 999], e.g. 0.14.2",
                      text);
}

int zs_ds_version_parse_flag(const char *text, const char *flag,
                             struct zs_ds_version *out, struct zs_err *err)
{
    if (text && parse(text, out))
        return 0;
    return zs_err_set(err, ZS_EUSAGE,
                      "invalid value for '--%s': must be X.Y.Z with each "
                      "part in [0, 999], e.g. 0.14.2 (got '%s')",
                      flag, text ? text : "");
}

int zs_ds_version_cmp(const struct zs_ds_version *a,
                      const struct zs_ds_version *b)
{
    if (a->major != b->major)
        return a->major < b->major ? -1 : 1;
    if (a->minor != b->minor)
        return a->minor < b->minor ? -1 : 1;
    if (a->patch != b->patch)
        return a->patch < b->patch ? -1 : 1;
    return 0;
}

char *zs_ds_version_fmt(const struct zs_ds_version *v, char *buf, size_t cap)
{
    snprintf(buf, cap, "%d.%d.%d", v->major, v->minor, v->patch);
    return buf;
}

bool zs_ds_at_least(const struct zs_ds_version *v, int major, int minor,
                    int patch)
{
    const struct zs_ds_version at = {major, minor, patch};
    return zs_ds_version_cmp(v, &at) >= 0;
}
