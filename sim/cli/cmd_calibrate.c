/*
 * cmd_calibrate.c — `zsim calibrate`: reads measured files, hands their
 * timed tasks to the calibration layer (hw/calibrate.c: the least-squares
 * fits, the calibrated GPU profile and the fit report) and prints a summary
 * of the fits.
 *
 * Outputs: --out NAME.json, the calibrated GPU profile, and NAME.fit.json,
 * the fit report (schema zsim.calibrate/1), both written by zs_cal_write.
 *
 * `--published DIR` instead fits the global mechanism constants of
 * validate/pubcal.c to a part of the published corpus and checks them on
 * the rest; --out then writes zsim.calibration/1 (zs_pubcal_write).
 */
#include "cli/cmd.h"
#include "formats/measured_io.h"
#include "hw/calibrate.h"
#include "util/strutil.h"
#include "util/table.h"
#include "validate/pubcal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define MAX_FILES 16

static const char g_usage[] =
    "usage: zsim calibrate --measured FILE [--measured FILE ...] --out "
    "NAME.json\n"
    "                      [--base GPU_PROFILE.json]\n"
    "       zsim calibrate --published DIR [--split source|hash]\n"
    "                      [--fit-sources OWNER/REPO,...]\n"
    "                      [--constants NAME,...] [--exclude REGEX]\n"
    "                      [--out FILE.json]\n"
    "\n"
    "Fits hardware-profile coefficients from harness measurements by least\n"
    "squares: the GEMM efficiency curve (one point per FLOPs decade), PCIe\n"
    "rates and latency per direction (pinned h2d, pinned d2h, pageable), and\n"
    "the CPU Adam rate per core.  Writes NAME.json, a GPU profile (the base\n"
    "profile with 'gemm_eff' and 'pcie' replaced), and NAME.fit.json with the\n"
    "fit quality (r2, rms residual, points) of every group and the CPU Adam\n"
    "rates for the node profile.\n"
    "\n"
    "With --published, fits global mechanism constants (by default the HBM\n"
    "efficiency of memory-bound kernels) to the step times and tokens/s of\n"
    "one part of the published corpus (GSL nonlinear least squares on\n"
    "ln(predicted/measured)), and prints their current and fitted values and\n"
    "the errors of both parts with each.\n"
    "\n"
    "options:\n"
    "  --measured FILE   a zsim.measured/1 file; repeat for more (at most 16)\n"
    "  --out FILE        the profile to write; the report goes beside it\n"
    "  --base FILE       GPU profile to start from (default: hwprofiles/gpus/\n"
    "                    <the measured header's gpu, lowercase>.json)\n"
    "  --published DIR   fit on a corpus of zsim.published/1 files\n"
    "                    (validation/published/)\n"
    "  --split source|hash  how DIR is split into the fit and the check\n"
    "                    part: whole source repositories, balanced by\n"
    "                    their timed figures (default), or a hash of the\n"
    "                    run name\n"
    "  --fit-sources A,B with --published: the source repositories of the\n"
    "                    fit part (as the split prints them), the rest\n"
    "                    checking; a recorded fit re-run on its sources\n"
    "  --constants A,B   with --published: the constants to fit (default\n"
    "                    membound_eff; also compute_sustained,\n"
    "                    sustained_node, overlap_compute_factor,\n"
    "                    hook_call_ns, host_stream_eff)\n"
    "  --exclude REGEX   with --published: leave the runs whose name matches\n"
    "                    this POSIX extended regex out of both parts (a\n"
    "                    known gap that must not bend the fit; say so)\n"
    "  --out FILE        with --published: write the fit (zsim.calibration/1)\n"
    "\n"
    "examples:\n"
    "  zsim calibrate --measured tests/data/good/sched-meas-tiny.json \\\n"
    "      --out h100-calibrated.json\n"
    "  zsim calibrate --published validation/published\n"
    "\n"
    "exit codes: 0 ok, 1 i/o failure, 2 usage error, 3 invalid input file\n";

static const struct zs_opt g_opts[] = {
    {"measured", 1},  {"out", 1},   {"base", 1},
    {"published", 1}, {"split", 1}, {"constants", 1}, {"exclude", 1},
    {"fit-sources", 1},
};
#define NOPTS (sizeof g_opts / sizeof g_opts[0])

/* The --measured values: zs_args keeps the last, so collect them here. */
static int measured_paths(int argc, char **argv, const char **paths, int *n,
                          struct zs_err *err)
{
    *n = 0;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "--measured") == 0 && i + 1 < argc)
            v = argv[++i];
        else if (strncmp(argv[i], "--measured=", 11) == 0)
            v = argv[i] + 11;
        else if ((strcmp(argv[i], "--out") == 0 ||
                  strcmp(argv[i], "--base") == 0) &&
                 i + 1 < argc)
            i++;
        if (!v)
            continue;
        if (*n >= MAX_FILES)
            return zs_err_set(err, ZS_EUSAGE,
                              "too many --measured files: at most %d",
                              MAX_FILES);
        paths[(*n)++] = v;
    }
    return 0;
}

/* The command line, checked. */
struct cal_args {
    const char *paths[MAX_FILES], *out, *base, *published, *split, *constants,
        *exclude, *fit_sources;
    int npaths;
    char fit_path[4096];
};

static int parse(int argc, char **argv, struct cal_args *ca, struct zs_err *err)
{
    struct zs_args a;
    int rc = zs_args_parse(argc, argv, g_opts, NOPTS, "calibrate", &a, err);
    if (!rc)
        rc = measured_paths(argc, argv, ca->paths, &ca->npaths, err);
    if (rc)
        return rc;
    ca->out = zs_args_get(&a, g_opts, NOPTS, "out");
    ca->base = zs_args_get(&a, g_opts, NOPTS, "base");
    ca->published = zs_args_get(&a, g_opts, NOPTS, "published");
    ca->split = zs_args_get(&a, g_opts, NOPTS, "split");
    ca->constants = zs_args_get(&a, g_opts, NOPTS, "constants");
    ca->exclude = zs_args_get(&a, g_opts, NOPTS, "exclude");
    ca->fit_sources = zs_args_get(&a, g_opts, NOPTS, "fit-sources");
    if (ca->published && (ca->npaths || ca->base))
        return zs_err_set(err, ZS_EUSAGE,
                          "'--published' fits the corpus: it takes no "
                          "--measured or --base");
    if ((ca->split || ca->constants || ca->exclude || ca->fit_sources) &&
        !ca->published)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--split', '--fit-sources', '--constants' and "
                          "'--exclude' need '--published DIR'");
    if (ca->fit_sources && ca->split && strcmp(ca->split, "source") != 0)
        return zs_err_set(err, ZS_EUSAGE,
                          "'--fit-sources' names the fit part of '--split "
                          "source' (got '--split %s')",
                          ca->split);
    if (ca->fit_sources && !ca->fit_sources[0])
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid value for '--fit-sources': empty");
    if (ca->published && !a.npos)
        return 0;
    if (a.npos)
        return zs_err_set(err, ZS_EUSAGE,
                          "unexpected argument '%s' for 'calibrate' (files go "
                          "after --measured)",
                          a.pos[0]);
    if (!ca->npaths || !ca->out)
        return zs_err_set(err, ZS_EUSAGE,
                          "'calibrate' needs --measured FILE and --out FILE "
                          "(see 'zsim calibrate --help')");
    if (!zs_str_endswith(ca->out, ".json"))
        return zs_err_set(
            err, ZS_EUSAGE,
            "invalid value for '--out': must end in .json (got '%s')", ca->out);
    snprintf(ca->fit_path, sizeof ca->fit_path, "%.*s.fit.json",
             (int)(strlen(ca->out) - 5), ca->out);
    return 0;
}

/* Every timed, non-skipped task of one measured file. */
static int collect(struct zs_cal *c, const struct zs_measured *m,
                   struct zs_err *err)
{
    for (int32_t i = 0; i < m->ntasks; i++) {
        const struct zs_meas_task *t = &m->tasks[i];
        double s;
        int rc = 0;
        if (t->skipped || t->start_ns < 0 || t->end_ns <= t->start_ns)
            continue;
        s = (double)(t->end_ns - t->start_ns) / 1e9;
        if (t->kind == ZS_SK_GEMM) {
            rc = zs_cal_add_gemm(c,
                                 2.0 * (double)t->m * (double)t->n *
                                     (double)t->k * (double)t->count,
                                 s);
        } else if (t->kind == ZS_SK_H2D || t->kind == ZS_SK_D2H) {
            enum zs_cal_dir dir = !t->pinned             ? ZS_CAL_PAGEABLE
                                  : t->kind == ZS_SK_H2D ? ZS_CAL_H2D
                                                         : ZS_CAL_D2H;
            rc = zs_cal_add_copy(c, dir, (double)t->bytes, s);
        } else if (t->kind == ZS_SK_CPU_ADAM) {
            double threads =
                (double)(t->threads > 0 ? t->threads : m->env.cpu_threads);
            if (threads < 1)
                threads = 1;
            rc = zs_cal_add_adam(c,
                                 t->adam_impl == ZS_SA_TORCH
                                     ? ZS_CAL_ADAM_TORCH
                                     : ZS_CAL_ADAM_DEEPSPEED,
                                 (double)t->elements, threads, s);
        }
        if (rc)
            return zs_err_set(err, ZS_ENOMEM, "out of memory");
    }
    return 0;
}

/* Reads every file into c: one GPU, harness measurements only.  Names the
 * GPU and the first file's environment. */
static int read_all(const struct cal_args *ca, struct zs_cal *c, char *gpu,
                    size_t gpu_cap, char *env, size_t env_cap,
                    struct zs_err *err)
{
    struct zs_measured m;
    int rc = 0;
    zs_measured_init(&m);
    for (int i = 0; i < ca->npaths && !rc; i++) {
        rc = zs_measured_read(ca->paths[i], &m, err);
        if (rc)
            break;
        if (m.kind != ZS_MK_HARNESS) {
            rc = zs_err_set(err, ZS_EINPUT,
                            "invalid 'kind' in %s: calibrate needs per-task "
                            "measurements from the harness (got '%s')",
                            ca->paths[i], zs_meas_kind_name(m.kind));
        } else if (i == 0) {
            zs_strlcpy(gpu, m.header.gpu, gpu_cap);
            snprintf(env, env_cap, "%s, driver %s, %s", m.env.gpu,
                     m.env.driver[0] ? m.env.driver : "?", m.env.date);
        } else if (strcmp(gpu, m.header.gpu) != 0) {
            rc = zs_err_set(err, ZS_EINPUT,
                            "'%s' is for GPU '%s', but '%s' is for '%s': "
                            "calibrate one GPU at a time",
                            ca->paths[i], m.header.gpu, ca->paths[0], gpu);
        }
        if (!rc)
            rc = collect(c, &m, err);
        zs_measured_release(&m);
    }
    zs_measured_release(&m);
    return rc;
}

/* Default --base: hwprofiles/gpus/<the header's GPU, lowercase>.json. */
static int default_base(const char *gpu, const char *first, char *buf,
                        size_t cap, struct zs_err *err)
{
    size_t k;
    if (!gpu[0])
        return zs_err_set(err, ZS_EUSAGE,
                          "'%s' names no GPU in 'header.gpu': pass --base "
                          "GPU_PROFILE.json",
                          first);
    k = (size_t)snprintf(buf, cap, "%s/hwprofiles/gpus/", ZS_SOURCE_DIR);
    for (const char *p = gpu; *p && k + 6 < cap; p++)
        buf[k++] = (char)tolower((unsigned char)*p);
    snprintf(buf + k, cap - k, ".json");
    return 0;
}

static int print_summary(const struct zs_cal *c, struct zs_err *err)
{
    struct zs_table *t = zs_table_new(5, "lrrrr");
    if (!t)
        return zs_err_set(err, ZS_ENOMEM, "out of memory");
    zs_table_header(t);
    zs_table_rowf(t, "group\tpoints\tfitted\tr2\trms residual");
    for (int d = 0; d < ZS_CAL_NDEC; d++) {
        const struct zs_cal_fit *f = &c->gemm_fit[d];
        if (f->n)
            zs_table_rowf(t, "gemm 1e%d..1e%d FLOP\t%d\teff %.3f\t%.4f\t%.3g s",
                          d, d + 1, f->n, 1.0 / (f->slope * c->peak_flops),
                          f->r2, f->rms_s);
    }
    for (int d = 0; d < ZS_CAL_NDIR; d++) {
        const struct zs_cal_fit *f = &c->pcie_fit[d];
        if (f->n)
            zs_table_rowf(t, "pcie %s\t%d\t%.2f GB/s + %.3g us\t%.4f\t%.3g s",
                          zs_cal_dir_name(d), f->n, 1e-9 / f->slope,
                          f->icept * 1e6, f->r2, f->rms_s);
    }
    for (int d = 0; d < ZS_CAL_NADAM; d++) {
        const struct zs_cal_fit *f = &c->adam_fit[d];
        if (f->n)
            zs_table_rowf(t, "cpu_adam %s\t%d\t%.3g GB/s/core\t%.4f\t%.3g s",
                          d ? "torch" : "deepspeed", f->n, 1e-9 / f->slope,
                          f->r2, f->rms_s);
    }
    zs_table_print(t, stdout, 2);
    zs_table_free(t);
    return 0;
}

/* ---- --published --------------------------------------------------------- */

static void print_parts(const struct zs_pubcal *pc)
{
    static const char *const names[] = {"fit part:  ", "check part:"};
    for (int part = 0; part < ZS_PUBCAL_NPARTS; part++) {
        int first = 1;
        printf("  %s ", names[part]);
        for (int i = 0; pc->split == ZS_PUBCAL_SPLIT_SOURCE && i < pc->nsources;
             i++)
            if (pc->source_part[i] == part) {
                printf("%s%s", first ? "" : ", ", pc->sources[i]);
                first = 0;
            }
        if (pc->split == ZS_PUBCAL_SPLIT_HASH)
            printf("runs whose FNV-1a name hash is %s", part ? "odd" : "even");
        printf(" (%d timed figures of %d runs)\n", pc->timed_rows[part],
               pc->timed_runs[part]);
    }
}

static int print_pubcal(const struct zs_pubcal *pc, const char *dir,
                        struct zs_err *err)
{
    struct zs_table *t = zs_table_new(6, "llrrrl");
    if (!t)
        return zs_err_set(err, ZS_ENOMEM, "out of memory");
    printf("calibrate %d constant(s) on %s: %d runs, split by %s\n", pc->nconst,
           dir, pc->set.n, zs_pubcal_split_name(pc->split));
    if (pc->exclude)
        printf("  excluded: %d run(s) matching '%s', in neither part\n",
               pc->nexcluded, pc->exclude);
    print_parts(pc);
    printf("  fit: GSL trust region on ln(predicted / measured), %d "
           "iterations, %d evaluations; rms %.3f -> %.3f\n\n",
           pc->iterations, pc->evaluations, pc->rms_log_before,
           pc->rms_log_after);
    zs_table_header(t);
    zs_table_rowf(t, "constant\tunit\tcurrent\tfitted\tstd. error\tsource "
                     "of current");
    for (int j = 0; j < pc->nconst; j++) {
        const struct zs_pubcal_const *c = pc->c[j];
        bool in = pc->fitted[j] >= c->lo && pc->fitted[j] <= c->hi;
        zs_table_rowf(t, "%s\t%s\t%.3f\t%.3f\t%.3f%s\t%s", c->name, c->unit,
                      c->current, pc->fitted[j], pc->stderr_[j],
                      in ? "" : " (out of range)", c->source);
    }
    zs_table_print(t, stdout, 2);
    zs_table_free(t);
    t = zs_table_new(7, "llrrrrr");
    if (!t)
        return zs_err_set(err, ZS_ENOMEM, "out of memory");
    printf("\nabsolute error per quantity and part, with the current and the "
           "fitted constants:\n");
    zs_table_header(t);
    zs_table_rowf(t, "quantity\tpart\tn\tmedian now\tfitted\tp90 now\tfitted");
    for (int e = 0; e < pc->nerrs; e++) {
        const struct zs_pubcal_err *o = &pc->errs[e];
        zs_table_rowf(t, "%s\t%s\t%d\t%.1f %%\t%.1f %%\t%.1f %%\t%.1f %%",
                      zs_pub_qty_name(o->qty), o->part ? "check" : "fit", o->n,
                      o->med_before, o->med_after, o->p90_before, o->p90_after);
    }
    zs_table_print(t, stdout, 2);
    zs_table_free(t);
    return 0;
}

/* The command line as one string, for the file's "command". */
static void command_line(int argc, char **argv, char *buf, size_t cap)
{
    size_t k = (size_t)snprintf(buf, cap, "zsim");
    for (int i = 0; i < argc && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, " %s", argv[i]);
}

static int run_published(int argc, char **argv, const struct cal_args *ca,
                         struct zs_err *err)
{
    struct zs_pubcal pc;
    char cmd[1024];
    int rc;

    if (ca->out && !zs_str_endswith(ca->out, ".json"))
        return zs_err_set(
            err, ZS_EUSAGE,
            "invalid value for '--out': must end in .json (got '%s')", ca->out);
    zs_pubcal_init(&pc);
    pc.exclude = ca->exclude;
    pc.fit_sources = ca->fit_sources;
    rc = ca->split ? zs_pubcal_parse_split(ca->split, &pc.split, err) : 0;
    if (!rc && ca->constants)
        rc = zs_pubcal_choose(&pc, ca->constants, err);
    if (!rc)
        rc = zs_pubcal_run(&pc, ca->published, err);
    if (!rc)
        rc = print_pubcal(&pc, ca->published, err);
    if (!rc && ca->out) {
        command_line(argc, argv, cmd, sizeof cmd);
        rc = zs_pubcal_write(&pc, ca->published, cmd, ca->out, err);
        if (!rc)
            printf("wrote %s\n", ca->out);
    }
    zs_pubcal_release(&pc);
    return rc;
}

static int run(int argc, char **argv, struct zs_err *err)
{
    struct cal_args ca;
    struct zs_cal c;
    struct zs_cal_run r;
    char base_buf[512], gpu[64] = "", env[200] = "";
    int rc;

    memset(&ca, 0, sizeof ca);
    zs_cal_init(&c);
    rc = parse(argc, argv, &ca, err);
    if (rc)
        return rc;
    if (ca.published)
        return run_published(argc, argv, &ca, err);
    rc = read_all(&ca, &c, gpu, sizeof gpu, env, sizeof env, err);
    if (!rc && !ca.base &&
        !(rc = default_base(gpu, ca.paths[0], base_buf, sizeof base_buf, err)))
        ca.base = base_buf;
    r = (struct zs_cal_run){ca.out, ca.fit_path, ca.base,  gpu,
                            env,    ca.paths,    ca.npaths};
    if (!rc)
        rc = zs_cal_write(&c, &r, err);
    if (!rc) {
        printf("calibrated %s from %d measured file(s) (%s)\n", gpu, ca.npaths,
               env);
        rc = print_summary(&c, err);
    }
    if (!rc)
        printf("wrote %s and %s\n", ca.out, ca.fit_path);
    zs_cal_release(&c);
    return rc;
}

const struct zs_cmd zs_cmd_calibrate = {
    "calibrate",
    "fit hardware-profile coefficients from harness measurements (GSL)",
    g_usage,
    run,
};
