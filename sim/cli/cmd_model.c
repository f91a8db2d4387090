/*
 * cmd_model.c — `zsim model list` and `zsim model show MODEL`: the model
 * library, and one model's module tree, parameters, FLOPs, activations and
 * loss buffers (docs/model.md).
 *
 * Output goes to stdout only after the model resolved and every number was
 * computed, so an error never leaves partial output.
 */
#include "cli/cli_setup.h"
#include "model/model.h"
#include "present/modelout.h"
#include "util/json.h"
#include "util/strutil.h"
#include "util/table.h"
#include "util/units.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SEQ 4096 /* [assumption] a common SFT sequence length */

static const char g_usage[] =
    "usage: zsim model list\n"
    "       zsim model show MODEL [--method full|lora|qlora] [--lora-rank R]\n"
    "                             [--seq-len N] [--json]\n"
    "\n"
    "list: the model library and its aliases.\n"
    "show: one model's module tree (one decoder layer in full), parameters\n"
    "(embedding vs non-embedding, trainable vs frozen), the largest module\n"
    "(what ZeRO-3 gathers at once), forward FLOPs per token, activation bytes\n"
    "saved per layer for checkpointing none / selective / full / op with flash "
    "and\n"
    "eager attention, and the loss's logits buffers, at micro-batch 1.\n"
    "\n"
    "MODEL is an alias (72b, 7b, 14b, 32b, 34b, 8b, 70b, 405b, 30b-a3b, 8x7b,\n"
    "omni, ...), a library name (qwen2.5-72b), a zsim model JSON path, or a\n"
    "Hugging Face config.json path.\n"
    "\n"
    "options:\n"
    "  --method M      full (default), lora or qlora\n"
    "  --lora-rank R   LoRA rank, 1..4096 (default 16)\n"
    "  --seq-len N     sequence length for activations and FLOPs, 1..16777216\n"
    "                  (default 4096)\n"
    "  --json          one JSON document (schema zsim.model/1)\n"
    "\n"
    "examples:\n"
    "  zsim model list\n"
    "  zsim model show 7b --method lora --lora-rank 16\n"
    "  zsim model show tests/data/hf-configs/phi-2.json --json\n"
    "\n"
    "exit codes: 0 ok, 2 usage error, 3 invalid or unknown model.\n";

static const struct zs_opt g_opts[] = {
    {"method", 1}, {"lora-rank", 1}, {"seq-len", 1}, {"json", 0}};
#define NOPTS (sizeof g_opts / sizeof g_opts[0])

static int parse_int(const char *opt, const char *text, long long lo,
                     long long hi, long long *out, struct zs_err *err)
{
    char *end;
    long long v = 0;
    if (!text || !*text || !((*text >= '0' && *text <= '9') || *text == '-'))
        goto bad;
    v = strtoll(text, &end, 10);
    if (*end || v < lo || v > hi)
        goto bad;
    *out = v;
    return 0;
bad:
    return zs_err_set(err, ZS_EUSAGE,
                      "invalid '--%s': must be an integer in [%lld, %lld] "
                      "(got '%s')",
                      opt, lo, hi, text ? text : "");
}

/* ---- list
 * -------------------------------------------------------------------- */

static int cmd_list(struct zs_err *err)
{
    const char *const *names;
    const struct zs_model_alias *al;
    int n, na, rc = 0;
    struct zs_table *t = zs_table_new(7, "llrrrrl");
    if (!t)
        return zs_err_set(err, ZS_ENOMEM, "out of memory");
    zs_model_library(&names, &n);
    zs_model_aliases(&al, &na);
    zs_table_header(t);
    rc = zs_table_rowf(t,
                       "name\tfamily\tparams\tactive\tlayers\thidden\taliases");
    for (int i = 0; i < n && !rc; i++) {
        struct zs_model m;
        char p[32], a[32], aliases[128] = "";
        size_t len = 0;
        rc = zs_model_resolve(names[i], &m, err);
        if (rc)
            break;
        for (int k = 0; k < na; k++)
            if (strcmp(al[k].name, names[i]) == 0 && len < sizeof aliases)
                len += (size_t)snprintf(aliases + len, sizeof aliases - len,
                                        len ? ", %s" : "%s", al[k].alias);
        zs_fmt_count(p, sizeof p, (double)m.params_total);
        zs_fmt_count(a, sizeof a, (double)m.params_active);
        rc = zs_table_rowf(t, "%s\t%s\t%s\t%s\t%" PRId64 "\t%" PRId64 "\t%s",
                           m.name, zs_family_name(m.family), p, a, m.n_layers,
                           m.hidden, aliases);
        if (rc)
            zs_err_set(err, rc, "out of memory");
    }
    if (!rc) {
        zs_table_print(t, stdout, 0);
        printf("\nlibrary: models/ (or $ZSIM_MODELS); a path to a zsim model "
               "JSON or a Hugging Face config.json works too.\n");
    }
    zs_table_free(t);
    return rc;
}


static int cmd_show(const struct zs_args *args, struct zs_err *err)
{
    struct zs_model m;
    struct zs_model_show c;
    const char *method = zs_args_get(args, g_opts, NOPTS, "method");
    const char *rank = zs_args_get(args, g_opts, NOPTS, "lora-rank");
    const char *seq = zs_args_get(args, g_opts, NOPTS, "seq-len");
    long long v = 0;
    int rc;

    if (args->npos != 2)
        return zs_err_set(err, ZS_EUSAGE,
                          args->npos < 2 ? "'model show' needs a MODEL (see "
                                           "'zsim model --help')"
                                         : "'model show' takes one MODEL");
    memset(&c, 0, sizeof c);
    c.mo.method = ZS_METHOD_FULL;
    c.mo.lora_rank = 16; /* PEFT LoraConfig default r is 8; 16 is the common
                            SFT choice and model.h's default */
    c.mo.lora_targets = ZS_ROLE_ALL_LINEAR;
    c.seq = DEFAULT_SEQ;
    if (method) {
        if (strcmp(method, "full") == 0)
            c.mo.method = ZS_METHOD_FULL;
        else if (strcmp(method, "lora") == 0)
            c.mo.method = ZS_METHOD_LORA;
        else if (strcmp(method, "qlora") == 0)
            c.mo.method = ZS_METHOD_QLORA;
        else
            return zs_err_set(err, ZS_EUSAGE,
                              "invalid '--method': must be one of full, lora, "
                              "qlora (got '%s')",
                              method);
    }
    if (rank) {
        rc = parse_int("lora-rank", rank, 1, 4096, &v, err);
        if (rc)
            return rc;
        c.mo.lora_rank = (int)v;
    }
    if (seq) {
        rc = parse_int("seq-len", seq, 1, 16777216, &v, err);
        if (rc)
            return rc;
        c.seq = v;
    }
    rc = zs_model_resolve(args->pos[1], &m, err);
    if (rc)
        return rc;
    c.m = &m;
    if (zs_args_get(args, g_opts, NOPTS, "json")) {
        zs_modelout_json(&c);
        return 0;
    }
    return zs_modelout_text(&c, err);
}

static const struct zs_cli_list_show g_subs = {
    cmd_list, cmd_show, "unknown subcommand 'model %s': must be list or show",
    NULL};

static int run(int argc, char **argv, struct zs_err *err)
{
    return zs_cli_run_list_show(argc, argv, g_opts, NOPTS, "model", &g_subs,
                                err);
}

const struct zs_cmd zs_cmd_model = {
    "model", "the model library; one model's parameters, FLOPs and activations",
    g_usage, run};
