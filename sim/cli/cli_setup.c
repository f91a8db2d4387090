/*
 * cli_setup.c — see cli_setup.h.  The resolution that follows (--ds-config
 * under the flags given) is train/setup.c's.
 */
#include "cli/cli_setup.h"
#include "store/store.h"
#include "util/strutil.h"

#include <string.h>

size_t zs_cli_opts(const struct zs_opt *own, size_t nown, struct zs_opt *opts)
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

int zs_cli_config(const struct zs_args *a, const struct zs_opt *opts,
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
    for (size_t k = 0; k < nopts; k++) {
        if (!a->val[k] || !zs_cfg_is_flag(opts[k].name))
            continue;
        rc = zs_cfg_apply_flag(cfg, opts[k].name, a->val[k], err);
        if (rc)
            return rc;
        if (given)
            zs_cfg_given_add(given, opts[k].name);
    }
    return 0;
}

int zs_cli_record(const char *db, const char *kind, const char *scenario,
                  int argc, char **argv, const char *doc, struct zs_err *err)
{
    char line[2048];
    size_t len = 0;
    zs_store *st = NULL;
    struct zs_run_meta meta;
    int rc;
    line[0] = '\0';
    for (int i = 0; i < argc && len < sizeof line; i++) {
        int w = snprintf(line + len, sizeof line - len, "%s%s",
                         i ? " " : "zsim ", argv[i]);
        if (w > 0)
            len += (size_t)w;
    }
    rc = zs_store_open(db, &st, err);
    if (rc)
        return rc;
    memset(&meta, 0, sizeof meta);
    meta.kind = kind;
    meta.scenario = scenario;
    meta.argv_joined = line;
    meta.version = ZS_VERSION;
    meta.git_commit = strcmp(ZS_GIT_COMMIT, "unknown") ? ZS_GIT_COMMIT : NULL;
    meta.unix_time = zs_store_now();
    rc = zs_store_record(st, &meta, doc, err);
    zs_store_close(st);
    return rc;
}
