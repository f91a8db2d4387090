/*
 * cli_setup.c — see cli_setup.h and cmd.h.
 */
#include "cli/cli_setup.h"
#include "store/store.h"
#include "util/strutil.h"

#include <string.h>
#include <unistd.h>

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

int zs_stderr_is_tty(void)
{
    return isatty(STDERR_FILENO);
}
