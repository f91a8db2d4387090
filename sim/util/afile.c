/*
 * afile.c — atomic output files (temporary, fsync, rename); see afile.h.
 * No global state.
 */
#include "util/afile.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

int zs_afile_open(struct zs_afile *a, const char *dir, const char *name,
                  struct zs_err *err)
{
    int n;

    a->f = NULL;
    a->tmp[0] = '\0';
    if (dir && *dir)
        n = snprintf(a->path, sizeof a->path, "%s/%s", dir, name);
    else
        n = snprintf(a->path, sizeof a->path, "%s", name);
    if (n < 0 || (size_t)n >= sizeof a->path)
        return zs_err_set(err, ZS_EUSAGE, "output path too long: '%s%s%s'",
                          dir && *dir ? dir : "", dir && *dir ? "/" : "",
                          name);
    snprintf(a->tmp, sizeof a->tmp, "%s.tmp.%ld", a->path, (long)getpid());
    a->f = fopen(a->tmp, "wb");
    if (!a->f) {
        int e = errno;
        a->tmp[0] = '\0';
        return zs_err_set(err, ZS_EIO, "cannot write '%s': %s", a->path,
                          strerror(e));
    }
    return 0;
}

void zs_afile_abort(struct zs_afile *a)
{
    if (a->f)
        fclose(a->f);
    a->f = NULL;
    if (a->tmp[0])
        remove(a->tmp);
    a->tmp[0] = '\0';
}

int zs_afile_commit(struct zs_afile *a, struct zs_err *err)
{
    int e = 0;

    if (!a->f)
        return zs_err_set(err, ZS_EIO, "cannot write '%s': not open", a->path);
    /* ferror() first: a failed fprintf long ago leaves the flag set even when
     * the final flush succeeds. */
    errno = 0;
    if (ferror(a->f) || fflush(a->f) != 0 || fsync(fileno(a->f)) != 0)
        e = errno ? errno : EIO;
    if (fclose(a->f) != 0 && !e)
        e = errno ? errno : EIO;
    a->f = NULL;
    if (!e && rename(a->tmp, a->path) != 0)
        e = errno ? errno : EIO;
    if (e) {
        remove(a->tmp);
        a->tmp[0] = '\0';
        return zs_err_set(err, ZS_EIO, "cannot write '%s': %s", a->path,
                          strerror(e));
    }
    a->tmp[0] = '\0';
    return 0;
}

int zs_write_atomic(const char *dir, const char *name, const char *data,
                    size_t len, struct zs_err *err)
{
    struct zs_afile a;
    int rc = zs_afile_open(&a, dir, name, err);
    if (rc)
        return rc;
    if (len && fwrite(data, 1, len, a.f) != len) {
        int e = errno ? errno : EIO;
        zs_afile_abort(&a);
        return zs_err_set(err, ZS_EIO, "cannot write '%s': %s", a.path,
                          strerror(e));
    }
    return zs_afile_commit(&a, err);
}
