/*
 * cmd_lint.c — `zsim lint`: known-bad combinations in a DeepSpeed config.
 *
 * Reads the DeepSpeed JSON (resolving "auto" like HF/Accelerate/TRL), the
 * optional model, cluster and TrainingArguments, runs the rules of
 * train/lint.c and prints a table of findings, each finding in full, and a
 * one-line verdict (or one JSON document, schema "zsim.lint/1").  Exit 4
 * (ZS_EGATE) when any finding is an error; 3 for unreadable or malformed
 * input files; 2 for usage errors.
 *
 * Built with -DZS_LINT_STANDALONE (a partial build without the model and hw
 * parts), --model and --gpus are usage errors.
 */
#include "cli/cmd.h"
#include "present/lintout.h"
#include "train/dsconfig.h"
#include "train/lint.h"
#include "util/alloc.h"
#include "util/strutil.h"
#include "util/table.h"
#include "util/units.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

static const struct zs_opt g_opts[] = {
    {"ds-config", 1},
    {"model", 1},
    {"gpus", 1},
    {"host-ram", 1},
    {"deepspeed-version", 1},
    {"optimizer", 1},
    {"trainer-args", 1},
    {"json", 0},
    {"no-zero-init", 0},
    {"audio-output", 1},
};
#define NOPTS (sizeof g_opts / sizeof g_opts[0])

static const char g_usage[] =
    "usage: zsim lint [--ds-config] FILE [--model M --gpus SPEC --host-ram "
    "SIZE]\n"
    "                 [--deepspeed-version X.Y.Z] [--optimizer NAME]\n"
    "                 [--trainer-args FILE.json] [--no-zero-init]\n"
    "                 [--audio-output on|off] [--json]\n"
    "\n"
    "Checks a DeepSpeed JSON config (with \"auto\" values, resolved as the HF\n"
    "Trainer/Accelerate/TRL resolve them) for known-bad combinations and\n"
    "reports each finding with its severity, explanation, source and fix.\n"
    "\n"
    "options:\n"
    "  --ds-config FILE          the DeepSpeed JSON (required; the flag may\n"
    "                            be left out: zsim lint ds_config.json)\n"
    "  --model M                 alias, library name, zsim model JSON or HF\n"
    "                            config.json: enables the model rules and\n"
    "                            resolves \"auto\" bucket sizes\n"
    "  --gpus SPEC               cluster, e.g. 8xH100 or 2x8xH100: enables\n"
    "                            the host-RAM and GPU rules\n"
    "  --host-ram SIZE           host RAM per node, e.g. 2TiB (with --gpus)\n"
    "  --deepspeed-version X.Y.Z version-dependent defaults and bugs\n"
    "                            (default: assume " ZS_DS_VERSION_ASSUMED ")\n"
    "  --optimizer NAME          the trainer's optimizer (HF optim name, e.g.\n"
    "                            adamw_bnb_8bit); default: the trainer args'\n"
    "  --trainer-args FILE.json  HF TrainingArguments as JSON\n"
    "                            (per_device_train_batch_size, max_steps,\n"
    "                            dataset_samples, ...)\n"
    "  --no-zero-init            the model is loaded without\n"
    "                            deepspeed.zero.Init (each rank loads it all)\n"
    "  --audio-output on|off     Qwen-Omni talker (ENABLE_AUDIO_OUTPUT)\n"
    "  --json                    one JSON document, schema \"zsim.lint/1\"\n"
    "\n"
    "examples:\n"
    "  zsim lint ds_config.json --model 72b --gpus 8xH100\n"
    "  zsim lint tests/data/good/ds-zero3-offload-clip.json \\\n"
    "      --deepspeed-version 0.14.2\n"
    "\n"
    "exit codes: 0 no errors, 2 usage error, 3 invalid input file,\n"
    "4 at least one error-severity finding\n";

struct lint_job {
    struct zs_dsconfig ds;
    struct zs_ds_notes notes;
    struct zs_trainer_args trainer;
    struct zs_model model;
    struct zs_cluster cluster;
    struct zs_lint_report report;
};

#ifndef ZS_LINT_STANDALONE
static int load_model(const char *name, struct zs_model *m, struct zs_err *err)
{
    return zs_model_resolve(name, m, err);
}
static int load_cluster(const char *spec, int64_t host_ram,
                        struct zs_cluster *c, struct zs_err *err)
{
    return zs_hw_resolve(spec, host_ram, 0, c, err);
}
#else
static int load_model(const char *name, struct zs_model *m, struct zs_err *err)
{
    (void)m;
    return zs_err_set(err, ZS_EUSAGE,
                      "--model '%s' needs a build with the model part", name);
}
static int load_cluster(const char *spec, int64_t host_ram,
                        struct zs_cluster *c, struct zs_err *err)
{
    (void)host_ram;
    (void)c;
    return zs_err_set(err, ZS_EUSAGE,
                      "--gpus '%s' needs a build with the hw part", spec);
}
#endif

/* What the command line names: the files and the cluster to read. */
struct lint_line {
    struct zs_args a;
    const char *ds_path, *model, *gpus, *targs;
    int64_t host_ram; /* 0: not given */
};

/* The config, as a positional argument or with --ds-config, once. */
static int lint_ds_path(struct lint_line *l, struct zs_err *err)
{
    const struct zs_args *a = &l->a;
    l->ds_path = zs_args_get(a, g_opts, NOPTS, "ds-config");
    if (a->npos > 1 || (a->npos == 1 && l->ds_path))
        return zs_err_set(err, ZS_EUSAGE,
                          "unexpected argument '%s' for 'lint': it checks one "
                          "config, given as FILE or --ds-config FILE",
                          a->pos[a->npos - 1]);
    if (a->npos == 1)
        l->ds_path = a->pos[0];
    return 0;
}

/* --no-zero-init, --audio-output on|off and --deepspeed-version into the
 * rules' input and the DeepSpeed reader's context. */
static int lint_knobs(const struct zs_args *a, struct zs_lint_input *in,
                      struct zs_dsconfig_ctx *ctx, struct zs_err *err)
{
    const char *audio = zs_args_get(a, g_opts, NOPTS, "audio-output");
    const char *ver = zs_args_get(a, g_opts, NOPTS, "deepspeed-version");
    int rc;

    in->zero_init = zs_args_get(a, g_opts, NOPTS, "no-zero-init") == NULL;
    in->audio_output = -1;
    if (audio) {
        if (strcmp(audio, "on") == 0)
            in->audio_output = 1;
        else if (strcmp(audio, "off") == 0)
            in->audio_output = 0;
        else
            return zs_err_set(err, ZS_EUSAGE,
                              "invalid --audio-output '%s': must be on or off",
                              audio);
    }
    if (ver) {
        rc = zs_ds_version_parse(ver, &ctx->version, err);
        if (rc)
            return rc;
        in->version_given = true;
    }
    return 0;
}

static int lint_parse(int argc, char **argv, struct lint_line *l,
                      struct zs_lint_input *in, struct zs_dsconfig_ctx *ctx,
                      struct zs_err *err)
{
    const char *ram;
    int rc = zs_args_parse(argc, argv, g_opts, NOPTS, "lint", &l->a, err);
    if (!rc)
        rc = lint_ds_path(l, err);
    if (rc)
        return rc;
    l->model = zs_args_get(&l->a, g_opts, NOPTS, "model");
    l->gpus = zs_args_get(&l->a, g_opts, NOPTS, "gpus");
    l->targs = zs_args_get(&l->a, g_opts, NOPTS, "trainer-args");
    ram = zs_args_get(&l->a, g_opts, NOPTS, "host-ram");
    l->host_ram = 0;
    if (!l->ds_path || !*l->ds_path)
        return zs_err_set(err, ZS_EUSAGE,
                          "missing --ds-config FILE (see 'zsim lint --help')");
    if (ram && !l->gpus)
        return zs_err_set(err, ZS_EUSAGE, "--host-ram needs --gpus SPEC");
    if (ram) {
        int prc = zs_parse_bytes(ram, &l->host_ram);
        if (prc != 0 || l->host_ram < ZS_GiB)
            return zs_err_set(err, ZS_EUSAGE,
                              "invalid --host-ram '%s': must be a size in "
                              "[1 GiB, 1 PiB], e.g. 2TiB",
                              ram);
    }
    memset(in, 0, sizeof *in);
    memset(ctx, 0, sizeof *ctx);
    return lint_knobs(&l->a, in, ctx, err);
}

/* Reads the TrainingArguments, model and cluster given, then the DeepSpeed
 * JSON under what they say ("auto" values, world size). */
static int lint_load(const struct lint_line *l, struct lint_job *j,
                     struct zs_lint_input *in, struct zs_dsconfig_ctx *ctx,
                     struct zs_err *err)
{
    int rc;
    if (l->targs) {
        if ((rc = zs_trainer_args_load(l->targs, &j->trainer, err)))
            return rc;
        ctx->trainer = &j->trainer;
        in->trainer = &j->trainer;
    }
    if (l->model) {
        if ((rc = load_model(l->model, &j->model, err)))
            return rc;
        in->model = &j->model;
        ctx->hidden_size = j->model.hidden;
    }
    if (l->gpus) {
        if ((rc = load_cluster(l->gpus, l->host_ram, &j->cluster, err)))
            return rc;
        in->cluster = &j->cluster;
        ctx->world_size = j->cluster.nodes * j->cluster.node.gpus_per_node;
    }
    ctx->notes = &j->notes;
    if ((rc = zs_dsconfig_load(l->ds_path, ctx, &j->ds, err)))
        return rc;
    in->ds = &j->ds;
    in->notes = &j->notes;
    return 0;
}

/* The findings as text or JSON; exit 4 (with no further message) when any
 * is an error. */
static int lint_print(const struct lint_line *l, const struct lint_job *j,
                      const struct zs_lint_input *in, struct zs_err *err)
{
    int rc = 0;
    if (zs_args_get(&l->a, g_opts, NOPTS, "json"))
        rc = zs_lintout_json(&j->ds, &j->report, in, stdout, err);
    else
        zs_lintout_text(&j->ds, &j->report, in, stdout);
    if (rc)
        return rc;
    if (fflush(stdout) != 0)
        return zs_err_set(err, ZS_EIO, "cannot write the report");
    if (j->report.n_error > 0) {
        /* The verdict is already printed: exit 4 with no extra message. */
        zs_err_set(err, ZS_EGATE, "%s", "");
        return ZS_EGATE;
    }
    return 0;
}

static int run(int argc, char **argv, struct zs_err *err)
{
    struct lint_line l;
    struct lint_job *j;
    struct zs_lint_input in;
    struct zs_dsconfig_ctx ctx;
    int rc = lint_parse(argc, argv, &l, &in, &ctx, err);

    if (rc)
        return rc;
    j = zs_calloc(1, sizeof *j);
    if (!j)
        return zs_err_set(err, ZS_ENOMEM, "out of memory");
    rc = lint_load(&l, j, &in, &ctx, err);
    if (!rc) {
        in.optimizer = zs_args_get(&l.a, g_opts, NOPTS, "optimizer");
        rc = zs_lint_run(&in, &j->report, err);
    }
    if (!rc)
        rc = lint_print(&l, j, &in, err);
    zs_free(j);
    return rc;
}

const struct zs_cmd zs_cmd_lint = {
    "lint",
    "check a DeepSpeed config for known-bad combinations",
    g_usage,
    run,
};
