/*
 * cli_setup.c — see cli_setup.h and cmd.h.
 */
#include "cli/cli_setup.h"
#include "store/store.h"
#include "util/strutil.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void zs_cli_run_meta(struct zs_run_meta *m, const char *kind,
                     const char *scenario, int argc, char **argv, char *line,
                     size_t cap)
{
    size_t len = 0;
    line[0] = '\0';
    for (int i = 0; i < argc && len < cap; i++) {
        int w = snprintf(line + len, cap - len, "%s%s", i ? " " : "zsim ",
                         argv[i]);
        if (w > 0)
            len += (size_t)w;
    }
    memset(m, 0, sizeof *m);
    m->kind = kind;
    m->scenario = scenario;
    m->argv_joined = line;
    m->version = ZS_VERSION;
    m->git_commit = strcmp(ZS_GIT_COMMIT, "unknown") ? ZS_GIT_COMMIT : NULL;
    m->unix_time = zs_store_now();
}

int zs_cli_record(const char *db, const char *kind, const char *scenario,
                  int argc, char **argv, const char *doc, struct zs_err *err)
{
    char line[2048];
    zs_store *st = NULL;
    struct zs_run_meta meta;
    int rc = zs_store_open(db, &st, err);
    if (rc)
        return rc;
    zs_cli_run_meta(&meta, kind, scenario, argc, argv, line, sizeof line);
    rc = zs_store_record(st, &meta, doc, err);
    zs_store_close(st);
    return rc;
}

int zs_stderr_is_tty(void)
{
    return isatty(STDERR_FILENO);
}

int zs_cli_parse(int argc, char **argv, const struct zs_opt *own, size_t nown,
                 const char *cmdname, struct zs_cli_line *l, struct zs_err *err)
{
    l->nopts = zs_cfg_args_opts(own, nown, l->opts);
    return zs_args_parse(argc, argv, l->opts, l->nopts, cmdname, &l->a, err);
}

const char *zs_cli_get(const struct zs_cli_line *l, const char *name)
{
    return zs_args_get(&l->a, l->opts, l->nopts, name);
}

int zs_cli_scenario(const struct zs_cli_line *l, const char *cmdname,
                    const char **scenario, struct zs_err *err)
{
    if (l->a.npos > 1)
        return zs_err_set(err, ZS_EUSAGE,
                          "'%s' takes at most one scenario file (got %d)",
                          cmdname, l->a.npos);
    *scenario = l->a.npos ? l->a.pos[0] : NULL;
    return 0;
}

int zs_cli_int(const char *opt, const char *v, long lo, long hi, long *out,
               struct zs_err *err)
{
    char *end;
    long x;
    if (!v)
        return 0;
    x = strtol(v, &end, 10);
    if (*end || x < lo || x > hi)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid value for '--%s': must be an integer in "
                          "[%ld, %ld] (got '%s')",
                          opt, lo, hi, v);
    *out = x;
    return 0;
}

int zs_cli_yesno(const char *opt, const char *v, bool *out,
                 struct zs_err *err)
{
    if (!v)
        return 0;
    if (strcmp(v, "yes") && strcmp(v, "no"))
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid value for '--%s': must be yes or no (got "
                          "'%s')",
                          opt, v);
    *out = !strcmp(v, "yes");
    return 0;
}

int zs_cli_run_list_show(int argc, char **argv, const struct zs_opt *opts,
                         size_t nopts, const char *cmd,
                         const struct zs_cli_list_show *subs,
                         struct zs_err *err)
{
    struct zs_args a;
    int rc = zs_args_parse(argc, argv, opts, nopts, cmd, &a, err);
    if (rc)
        return rc;
    if (a.npos < 1)
        return zs_err_set(err, ZS_EUSAGE,
                          "'%s' needs a subcommand: list or show (see 'zsim "
                          "%s --help')",
                          cmd, cmd);
    if (strcmp(a.pos[0], "list") == 0) {
        if (a.npos > 1)
            return zs_err_set(err, ZS_EUSAGE, "'%s list' takes no arguments",
                              cmd);
        return subs->list(err);
    }
    if (strcmp(a.pos[0], "show") == 0)
        return subs->show(&a, err);
    if (subs->did_you_mean) {
        static const char *const names[] = {"list", "show"};
        int best = zs_str_closest(a.pos[0], names, 2);
        if (best >= 0)
            return zs_err_set(err, ZS_EUSAGE, subs->did_you_mean, a.pos[0],
                              names[best]);
    }
    return zs_err_set(err, ZS_EUSAGE, subs->unknown, a.pos[0]);
}
