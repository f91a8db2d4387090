/*
 * cfg_args.c — see cfg_args.h.  The resolution that follows (--ds-config
 * under the flags given) is setup.c's.
 */
#include "train/cfg_args.h"

#include <string.h>

size_t zs_cfg_args_opts(const struct zs_opt *own, size_t nown,
                        struct zs_opt *opts)
{
    const char *const *names = zs_cfg_flag_names();
    size_t n = 0;
    for (size_t i = 0; i < nown && n < ZS_ARGS_MAXOPTS; i++)
        opts[n++] = own[i];
    for (size_t i = 0; names[i] && n < ZS_ARGS_MAXOPTS; i++) {
        opts[n].name = names[i];
        opts[n].has_arg = 1;
        n++;
    }
    return n;
}

int zs_cfg_args_apply(const struct zs_args *a, const struct zs_opt *opts,
                      size_t nopts, const char *scenario, struct zs_cfg *cfg,
                      struct zs_cfg_given *given, struct zs_err *err)
{
    int rc;
    if (given)
        memset(given, 0, sizeof *given);
    if (scenario) {
        rc = zs_cfg_load_scenario(scenario, cfg, err);
        if (rc)
            return rc;
    }
    const char *alloc = NULL, *split = NULL;
    for (size_t k = 0; k < nopts; k++) {
        if (!a->val[k] || !zs_cfg_is_flag(opts[k].name))
            continue;
        rc = zs_cfg_apply_flag(cfg, opts[k].name, a->val[k], err);
        if (rc)
            return rc;
        if (given)
            zs_cfg_given_add(given, opts[k].name);
        if (!strcmp(opts[k].name, "alloc-conf"))
            alloc = a->val[k];
        else if (!strcmp(opts[k].name, "max-split-size-mb"))
            split = a->val[k];
    }
    /* one value per knob: PYTORCH_CUDA_ALLOC_CONF's max_split_size_mb may
     * come in '--alloc-conf' or as its own flag, not both */
    if (alloc && split && strstr(alloc, "max_split_size_mb"))
        return zs_err_set(err, ZS_EUSAGE,
                          "'--alloc-conf %s' sets max_split_size_mb, which "
                          "'--max-split-size-mb %s' sets too: give it once",
                          alloc, split);
    return 0;
}

int zs_cfg_args_resolve(const struct zs_args *a, const struct zs_opt *opts,
                        size_t nopts, const char *scenario, struct zs_cfg *cfg,
                        struct zs_model *m, struct zs_cluster *cl,
                        struct zs_err *err)
{
    struct zs_cfg_given given;
    int rc;
    zs_cfg_defaults(cfg);
    rc = zs_cfg_args_apply(a, opts, nopts, scenario, cfg, &given, err);
    if (rc)
        return rc;
    return zs_setup_resolve(cfg, &given, m, cl, err);
}
