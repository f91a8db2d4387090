/*
 * main.c — zsim's entry point and its one dispatch table.
 *
 * The table is built from the generated zs_cmds.inc (one ZS_CMD(name) per
 * sim/cli/cmd_<name>.c).  Only this file exits: commands return ZS_E* codes,
 * mapped to the documented exit statuses by zs_err_exit_code.
 */
#include "cli/cmd.h"
#include "util/alloc.h"
#include "util/strutil.h"

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

#define ZS_CMD(n) extern const struct zs_cmd zs_cmd_##n;
#include "zs_cmds.inc"
#undef ZS_CMD

static const struct zs_cmd *const g_commands[] = {
#define ZS_CMD(n) &zs_cmd_##n,
#include "zs_cmds.inc"
#undef ZS_CMD
    NULL};

/* Every write to stdout is checked here, once, at exit: stdio's error flag is
 * sticky, so a failed printf anywhere (a full disk, /dev/full, a closed pipe
 * without SIGPIPE) shows at the final flush.  An output that was lost is an
 * I/O failure (exit 1) with one line on stderr, never a silent exit 0 -- the
 * approach of gnulib's close_stdout.  A command that already failed keeps its
 * own exit status; one that failed with exit 1 has said why already (lint
 * checks its own report), so the line is not repeated. */
static int finish(int status)
{
    int failed = ferror(stdout), saved = 0;
    errno = 0;
    if (fflush(stdout) != 0)
        failed = 1;
    saved = errno;
    /* A write that failed before the last one left no errno: when the
     * buffer was empty at this flush (the output's length decides), write
     * one more byte to the lost output to learn why, so the line does not
     * depend on how long the output was. */
    if (failed && !saved) {
        clearerr(stdout);
        errno = 0;
        if (fputc('\n', stdout) == EOF || fflush(stdout) != 0)
            saved = errno;
    }
    if (fclose(stdout) != 0 && !failed) {
        failed = 1;
        saved = errno;
    }
    if (!failed || status == 1)
        return status;
    if (saved)
        fprintf(stderr, "zsim: cannot write to standard output: %s\n",
                strerror(saved));
    else
        fprintf(stderr, "zsim: cannot write to standard output\n");
    return status ? status : 1;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: zsim <command> [options]\n"
                 "\n"
                 "zsim simulates sharded data-parallel training with offload\n"
                 "(DeepSpeed ZeRO-3, PyTorch FSDP2) and plans what fits.\n"
                 "\n"
                 "commands:\n");
    for (size_t i = 0; g_commands[i]; i++)
        fprintf(out, "  %-10s %s\n", g_commands[i]->name,
                g_commands[i]->summary);
    fprintf(out, "\n"
                 "'zsim <command> --help' describes a command.\n"
                 "\n"
                 "exit codes:\n"
                 "  0  ok\n"
                 "  1  runtime or I/O failure\n"
                 "  2  usage error\n"
                 "  3  invalid input file\n"
                 "  4  the prediction or check failed where asked to gate\n"
                 "     (--fail-on-oom, lint errors, report regressions)\n");
}

int main(int argc, char **argv)
{
    struct zs_err err = {0, ""};
    const char *name;
    int rc;

    /* Numbers are printed and parsed in the C locale whatever the user's
     * environment says (STYLE 26). */
    setlocale(LC_ALL, "C");
    zs_alloc_init();

    if (argc < 2) {
        usage(stderr);
        return finish(2);
    }
    name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 ||
        strcmp(name, "help") == 0) {
        if (argc > 2) {
            for (size_t i = 0; g_commands[i]; i++)
                if (strcmp(g_commands[i]->name, argv[2]) == 0) {
                    fputs(g_commands[i]->usage, stdout);
                    return finish(0);
                }
        }
        usage(stdout);
        return finish(0);
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("zsim %s (commit %s)\n", ZS_VERSION, ZS_GIT_COMMIT);
        return finish(0);
    }
    for (size_t i = 0; g_commands[i]; i++) {
        const struct zs_cmd *c = g_commands[i];
        if (strcmp(c->name, name) != 0)
            continue;
        for (int k = 2; k < argc; k++) {
            if (strcmp(argv[k], "--") == 0)
                break;
            if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0) {
                fputs(c->usage, stdout);
                return finish(0);
            }
        }
        rc = c->run(argc - 1, argv + 1, &err);
        if (rc && err.msg[0])
            fprintf(stderr, "zsim: %s\n", err.msg);
        return finish(rc ? zs_err_exit_code(rc) : 0);
    }
    {
        /* every command's name; the table is fixed at build time */
        const char *names[sizeof g_commands / sizeof g_commands[0]];
        size_t n = 0;
        int best;
        for (; g_commands[n]; n++)
            names[n] = g_commands[n]->name;
        best = zs_str_closest(name, names, n);
        if (best >= 0)
            fprintf(stderr, "zsim: unknown command '%s': did you mean '%s'?\n",
                    name, names[best]);
        else
            fprintf(stderr, "zsim: unknown command '%s' (see 'zsim --help')\n",
                    name);
    }
    return finish(2);
}
