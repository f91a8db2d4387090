/*
 * cmd_schedule.c — `zsim schedule export`: one rank's task list for the
 * CUDA harness (harness/SCHEDULE.md).
 */
#include "cli/cli_setup.h"
#include "present/sched_export.h"
#include "sched/sched.h"
#include "util/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: zsim schedule export [SCENARIO.json] [configuration flags] --rank "
    "R --out FILE\n"
    "                            [--steps N]\n"
    "\n"
    "Simulates the configuration (init, a first step and N steady steps) and "
    "writes one\n"
    "rank's task list in the harness's format (zsim.schedule/1): every "
    "allocation and\n"
    "free with its size and owner, pinned and pageable host buffers, H2D/D2H "
    "copies,\n"
    "GEMMs with their shapes, memory-bound kernels with their bytes, "
    "collectives (one\n"
    "GPU runs them as local copies of the same bytes), CPU optimizer work in "
    "elements,\n"
    "with dependencies and zsim's predicted start/end times and peaks.  Ranks "
    "of a\n"
    "data-parallel job run the same schedule; R is recorded in the header.\n"
    "Run it on a GPU with (the harness is built where nvcc is found, next to\n"
    "zsim in the build folder): zsim-harness --schedule FILE --out "
    "FILE.measured.json\n"
    "\n"
    "examples:\n"
    "  zsim schedule export --model 7b --gpus 1xH100 --framework fsdp2 \\\n"
    "      --offload-optimizer cpu --offload-param cpu --steps 2 --rank 0 \\\n"
    "      --out fsdp2-7b.schedule.json\n"
    "\n"
    "Exit: 0 ok, 1 runtime failure, 2 usage, 3 invalid input file.\n";

static const struct zs_opt own[] = {{"rank", 1}, {"out", 1}};

/* `schedule export [SCENARIO] --out FILE [--rank R]`, resolved. */
static int sched_parse(int argc, char **argv, struct zs_cli_line *l,
                       struct zs_cfg *cfg, struct zs_model *m,
                       struct zs_cluster *cl, long *rank, const char **out,
                       struct zs_err *err)
{
    int rc = zs_cli_parse(argc, argv, own, sizeof own / sizeof own[0],
                          "schedule", l, err);
    if (rc)
        return rc;
    if (l->a.npos < 1 || strcmp(l->a.pos[0], "export") != 0)
        return zs_err_set(err, ZS_EUSAGE,
                          "usage: zsim schedule export [SCENARIO.json] [flags] "
                          "--rank R --out FILE");
    if (l->a.npos > 2)
        return zs_err_set(err, ZS_EUSAGE,
                          "'schedule export' takes at most one scenario file");
    *out = zs_cli_get(l, "out");
    if (!*out)
        return zs_err_set(err, ZS_EUSAGE,
                          "'schedule export' needs '--out FILE'");
    rc = zs_cfg_args_resolve(&l->a, l->opts, l->nopts,
                             l->a.npos == 2 ? l->a.pos[1] : NULL, cfg, m, cl,
                             err);
    if (rc)
        return rc;
    /* zsim.schedule/1 GEMMs carry a shape only and the harness runs each as
     * cublasGemmEx in bf16 (harness/harness.c), so a replay of Float8
     * linears would time bf16 GEMMs against zsim's fp8 ones. */
    if (cfg->fp8 != ZS_FP8_NONE)
        return zs_err_set(err, ZS_EUSAGE,
                          "'schedule export' cannot write '--fp8 %s': the "
                          "harness runs every GEMM in bf16 (zsim.schedule/1 "
                          "has no GEMM dtype)",
                          zs_cfg_choice_name("fp8", cfg->fp8));
    *rank = 0;
    return zs_cli_int("rank", zs_cli_get(l, "rank"), 0, (long)cfg->world - 1,
                      rank, err);
}

static int run(int argc, char **argv, struct zs_err *err)
{
    struct zs_cli_line l;
    struct zs_cfg cfg;
    struct zs_model m;
    struct zs_cluster cl;
    struct zs_setup su = {0};
    struct zs_sim_result res;
    struct zs_export ex;
    zs_sim *sim;
    const char *out = NULL;
    long rank = 0;
    int rc;

    rc = sched_parse(argc, argv, &l, &cfg, &m, &cl, &rank, &out, err);
    if (rc)
        return rc;
    memset(&ex, 0, sizeof ex);
    su.model = &m;
    su.cluster = &cl;
    su.cfg = &cfg;
    su.ex = &ex;
    sim = zs_sim_new();
    if (!sim)
        return zs_err_set(err, ZS_ENOMEM, "out of memory");
    rc = zs_simulate(&su, sim, &res, err);
    if (!rc)
        rc = zs_export_schedule(&su, sim, &ex, &res, rank, out, err);
    if (!rc)
        fprintf(stdout, "wrote %s: %d tasks, %s rank %ld of %lld (%s)\n", out,
                zs_sim_ntasks(sim), m.name, rank, (long long)cfg.world,
                cl.spec);
    zs_free(ex.t);
    zs_sim_free(sim);
    return rc;
}

const struct zs_cmd zs_cmd_schedule = {
    "schedule",
    "export one rank's task list for the CUDA harness",
    usage,
    run,
};
