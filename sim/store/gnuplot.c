/*
 * gnuplot.c — finding and running gnuplot; see gnuplot.h.
 *
 * gnuplot's stderr is read through a pipe until it closes (so a chatty
 * gnuplot cannot block on a full pipe), keeping the first line for the
 * message.  The child gets stdin from /dev/null: a script error can never
 * leave gnuplot waiting for input.
 */
#include "store/gnuplot.h"
#include "util/strutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int executable(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
           access(path, X_OK) == 0;
}

int zs_gnuplot_find(char *buf, size_t cap)
{
    const char *env = getenv("ZSIM_GNUPLOT"), *p;
    if (env) {
        if (!*env || !executable(env))
            return -1;
        zs_strlcpy(buf, env, cap);
        return 0;
    }
    p = getenv("PATH");
    if (!p)
        p = "/usr/bin:/bin";
    while (*p) {
        size_t n = strcspn(p, ":");
        char cand[1024];
        if (n > 0 && n + 9 < sizeof cand) {
            memcpy(cand, p, n);
            memcpy(cand + n, "/gnuplot", 9);
            if (executable(cand)) {
                zs_strlcpy(buf, cand, cap);
                return 0;
            }
        }
        p += n;
        if (*p == ':')
            p++;
    }
    return -1;
}

void zs_gnuplot_begin(struct zs_rbuf *gp, const char *title_comment)
{
    zs_rbuf_printf(
        gp,
        "# %s\n"
        "# Written by zsim report; run from this folder: gnuplot FILE.gp\n"
        "# draws FILE.png and FILE.svg (through hidden .tmp files).\n"
        "set encoding utf8\n"
        "set datafile commentschars \"#\"\n"
        "set grid\n",
        title_comment);
}

void zs_gnuplot_output(struct zs_rbuf *gp, const char *stem, int svg,
                       int width_px, int height_px)
{
    if (svg)
        zs_rbuf_printf(gp,
                       "set terminal svg size %d,%d dynamic font \"sans,11\" "
                       "noenhanced background \"white\"\n",
                       width_px, height_px);
    else
        zs_rbuf_printf(
            gp,
            "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
            "  set terminal pngcairo size %d,%d font \"sans,10\" noenhanced\n"
            "} else {\n"
            "  set terminal png size %d,%d noenhanced\n"
            "}\n",
            width_px, height_px, width_px, height_px);
    zs_rbuf_printf(gp, "set output \".%s.%s.tmp\"\n", stem,
                   svg ? "svg" : "png");
}

void zs_gnuplot_end_output(struct zs_rbuf *gp)
{
    zs_rbuf_puts(gp, "set output\n");
}

static void remove_tmps(const char *dir, const char *stem)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/.%s.png.tmp", dir, stem);
    unlink(p);
    snprintf(p, sizeof p, "%s/.%s.svg.tmp", dir, stem);
    unlink(p);
}

/* Starts gnuplot on script in dir with its stderr on a pipe (stdin and
 * stdout on /dev/null); *rfd is the pipe's read end.  The child exits 126
 * when it cannot enter dir and 127 when gnuplot cannot be run. */
static int spawn(const char *gnuplot, const char *dir, const char *script,
                 pid_t *pid, int *rfd, struct zs_err *err)
{
    int fds[2];
    if (pipe(fds) != 0)
        return zs_err_set(err, ZS_ERUNTIME, "cannot run gnuplot: %s",
                          strerror(errno));
    *pid = fork();
    if (*pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return zs_err_set(err, ZS_ERUNTIME, "cannot run gnuplot: %s",
                          strerror(errno));
    }
    if (*pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        if (nul >= 0) {
            dup2(nul, STDIN_FILENO);
            dup2(nul, STDOUT_FILENO);
        }
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        close(fds[1]);
        if (chdir(dir) != 0)
            _exit(126);
        execl(gnuplot, "gnuplot", script, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    *rfd = fds[0];
    return 0;
}

/* Reads fd to its end and closes it, keeping the first non-blank line in
 * first (cap bytes, NUL-terminated): gnuplot's messages start with the
 * offending script line, then a caret line, then the reason.  Returns the
 * line's length. */
static size_t read_first_line(int fd, char *first, size_t cap)
{
    char buf[512];
    size_t nfirst = 0;
    int have_line = 0;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n && !have_line; i++) {
            char c = buf[i];
            if (c == '\n') {
                if (nfirst > 0)
                    have_line = 1;
                continue;
            }
            if (nfirst + 1 < cap)
                first[nfirst++] = c;
        }
    }
    close(fd);
    first[nfirst] = '\0';
    return nfirst;
}

/* Renames the hidden .STEM.png.tmp and .STEM.svg.tmp to STEM.png and
 * STEM.svg; on failure removes what is left. */
static int publish(const char *dir, const char *stem, struct zs_err *err)
{
    static const char *const ext[] = {"png", "svg"};
    for (int i = 0; i < 2; i++) {
        char from[1200], to[1200];
        snprintf(from, sizeof from, "%s/.%s.%s.tmp", dir, stem, ext[i]);
        snprintf(to, sizeof to, "%s/%s.%s", dir, stem, ext[i]);
        if (rename(from, to) != 0) {
            remove_tmps(dir, stem);
            return zs_err_set(err, ZS_ERUNTIME,
                              "gnuplot did not write '%s': %s", to,
                              strerror(errno));
        }
    }
    return 0;
}

int zs_gnuplot_draw(const char *gnuplot, const char *dir, const char *script,
                    const char *stem, struct zs_err *err)
{
    int fd = -1, status, rc;
    pid_t pid = -1;
    char first[256];
    size_t nfirst;

    if ((rc = spawn(gnuplot, dir, script, &pid, &fd, err)))
        return rc;
    nfirst = read_first_line(fd, first, sizeof first);
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            remove_tmps(dir, stem);
            return zs_err_set(err, ZS_ERUNTIME, "cannot run gnuplot: %s",
                              strerror(errno));
        }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        remove_tmps(dir, stem);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
            return zs_err_set(err, ZS_ERUNTIME, "cannot run gnuplot '%s'",
                              gnuplot);
        return zs_err_set(err, ZS_ERUNTIME, "gnuplot failed on '%s/%s'%s%s",
                          dir, script, nfirst ? ": " : "", first);
    }
    return publish(dir, stem, err);
}
