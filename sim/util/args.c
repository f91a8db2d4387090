/*
 * args.c — the option parser shared by all subcommands; see args.h.
 */
#include "util/args.h"
#include "util/strutil.h"

#include <string.h>

int zs_args_parse(int argc, char **argv, const struct zs_opt *opts,
                  size_t nopts, const char *cmdname, struct zs_args *out,
                  struct zs_err *err)
{
    int only_pos = 0;
    memset(out, 0, sizeof *out);
    if (nopts > ZS_ARGS_MAXOPTS)
        return zs_err_set(err, ZS_EUSAGE, "internal: too many options");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!only_pos && strcmp(a, "--") == 0) {
            only_pos = 1;
            continue;
        }
        if (!only_pos && a[0] == '-' && a[1] == '-' && a[2]) {
            const char *name = a + 2, *eq = strchr(name, '=');
            size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
            size_t k;
            for (k = 0; k < nopts; k++)
                if (strlen(opts[k].name) == nlen &&
                    strncmp(opts[k].name, name, nlen) == 0)
                    break;
            if (k == nopts) {
                const char *names[ZS_ARGS_MAXOPTS];
                char bare[64];
                int best;
                for (size_t j = 0; j < nopts; j++)
                    names[j] = opts[j].name;
                zs_strlcpy(bare, name,
                           nlen + 1 < sizeof bare ? nlen + 1 : sizeof bare);
                best = zs_str_closest(bare, names, nopts);
                if (best >= 0)
                    return zs_err_set(err, ZS_EUSAGE,
                                      "unknown option '--%s' for '%s': did you "
                                      "mean '--%s'?",
                                      bare, cmdname, names[best]);
                return zs_err_set(err, ZS_EUSAGE,
                                  "unknown option '--%s' for '%s' (see 'zsim "
                                  "%s --help')",
                                  bare, cmdname, cmdname);
            }
            if (opts[k].has_arg) {
                if (eq)
                    out->val[k] = eq + 1;
                else if (i + 1 < argc)
                    out->val[k] = argv[++i];
                else
                    return zs_err_set(err, ZS_EUSAGE,
                                      "option '--%s' needs a value",
                                      opts[k].name);
            } else {
                if (eq)
                    return zs_err_set(err, ZS_EUSAGE,
                                      "option '--%s' takes no value",
                                      opts[k].name);
                out->val[k] = "";
            }
            continue;
        }
        if (!only_pos && a[0] == '-' && a[1] && a[1] != '-' &&
            strcmp(a, "-") != 0)
            return zs_err_set(err, ZS_EUSAGE,
                              "unknown option '%s' for '%s' (options are "
                              "long: see 'zsim %s --help')",
                              a, cmdname, cmdname);
        if (out->npos >= ZS_ARGS_MAXPOS)
            return zs_err_set(err, ZS_EUSAGE, "too many arguments for '%s'",
                              cmdname);
        out->pos[out->npos++] = a;
    }
    return 0;
}

const char *zs_args_get(const struct zs_args *a, const struct zs_opt *opts,
                        size_t nopts, const char *name)
{
    for (size_t k = 0; k < nopts; k++)
        if (strcmp(opts[k].name, name) == 0)
            return a->val[k];
    return NULL;
}
