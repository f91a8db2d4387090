/*
 * check_pubcal.c — `zsim calibrate --published` (validate/pubcal.c): the
 * fit finds a constant known by construction, the split rules, and the bad
 * inputs with their exact messages.
 *
 * The synthetic corpus: three GPT-2 runs on one H100 whose "measured"
 * tokens/s are zsim's own predictions with membound_eff = 0.5 (written to 17
 * digits), two from one source (the fit part: it has more timed figures)
 * and one from another (the check part).  Least squares on ln(predicted /
 * measured) then has its exact minimum, zero, at 0.5; the fit must find it
 * starting from the current 0.85, and leave no error on either part.
 */
#include "cli/cmd.h"
#include "hw/hw.h"
#include "validate/pubcal.h"

#include <check.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const struct zs_cmd zs_cmd_calibrate;

struct synth {
    const char *name, *repo, *seq, *mb;
};
static const struct synth g_runs[] = {
    {"a1", "a/x", "1024", "1"},
    {"a2", "a/x", "2048", "2"},
    {"b1", "b/y", "512", "4"},
};

static const struct zs_pubcal_const *find_const(const char *name)
{
    const struct zs_pubcal_const *t;
    int n = zs_pubcal_consts(&t);
    for (int j = 0; j < n; j++)
        if (strcmp(t[j].name, name) == 0)
            return &t[j];
    return NULL;
}

static void set_half(void *ctx, struct zs_cfg *cfg, struct zs_cluster *cl)
{
    (void)ctx;
    find_const("membound_eff")->set(cfg, cl, 0.5);
}

/* Writes run r into dir; measured = zsim's tokens/s with membound_eff 0.5 when
 * tokens_per_s <= 0, else tokens_per_s. */
static void write_run(const char *dir, const struct synth *r,
                      double tokens_per_s)
{
    char path[256], text[1024];
    struct zs_published p;
    struct zs_pub_pred q;
    struct zs_err err = {0, ""};
    FILE *f;
    int len = snprintf(
        text, sizeof text,
        "{\"schema\": \"zsim.published/1\", \"name\": \"%s\",\n"
        " \"source\": {\"url\": \"https://github.com/%s/blob/c/t.md\", "
        "\"commit\": \"c\", \"quote\": \"synthetic\"},\n"
        " \"hardware\": \"1x H100\",\n"
        " \"args\": [\"--model\", \"gpt2\", \"--gpus\", \"1xH100\", "
        "\"--framework\", \"fsdp2\", \"--seq-len\", \"%s\", \"--micro-batch\", "
        "\"%s\"],\n"
        " \"measured\": [{\"quantity\": \"tokens_per_s_per_gpu\", \"value\": "
        "%%.17g, \"unit\": \"tokens/s\", \"what\": \"synthetic\"}]}\n",
        r->name, r->repo, r->seq, r->mb);
    ck_assert(len > 0 && len < (int)sizeof text);
    if (!(tokens_per_s > 0)) {
        char probe[1024];
        snprintf(probe, sizeof probe, text, 1.0);
        ck_assert_int_eq(
            zs_published_read_text("p.json", probe, strlen(probe), &p, &err),
            0);
        ck_assert_msg(
            zs_published_predict_tuned(&p, set_half, NULL, &q, &err) == 0, "%s",
            err.msg);
        tokens_per_s = q.v[ZS_PQ_TOKENS];
    }
    snprintf(path, sizeof path, "%s/%s.json", dir, r->name);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, text, tokens_per_s);
    ck_assert_int_eq(fclose(f), 0);
}

/* A fresh directory (dir: a mkdtemp template) holding the three synthetic
 * runs, measured as write_run takes tokens_per_s. */
static void synth_corpus(char *dir, double tokens_per_s)
{
    ck_assert_ptr_nonnull(mkdtemp(dir));
    for (int i = 0; i < 3; i++)
        write_run(dir, &g_runs[i], tokens_per_s);
}

START_TEST(test_fit_finds_known_constant)
{
    char dir[] = "/tmp/zsim-pubcal-XXXXXX", cmd[128];
    struct zs_pubcal pc;
    struct zs_err err = {0, ""};

    synth_corpus(dir, 0);
    zs_pubcal_init(&pc);
    ck_assert_int_eq(pc.nconst, 1);
    ck_assert_str_eq(pc.c[0]->name, "membound_eff");
    ck_assert_msg(zs_pubcal_run(&pc, dir, &err) == 0, "%s", err.msg);
    /* the split: a/x (2 timed figures) fits, b/y checks */
    ck_assert_int_eq(pc.nsources, 2);
    ck_assert_str_eq(pc.sources[0], "a/x");
    ck_assert_int_eq(pc.source_part[0], ZS_PUBCAL_FIT);
    ck_assert_int_eq(pc.source_part[1], ZS_PUBCAL_CHECK);
    ck_assert_int_eq(pc.timed_rows[ZS_PUBCAL_FIT], 2);
    ck_assert_int_eq(pc.timed_rows[ZS_PUBCAL_CHECK], 1);
    ck_assert_msg(fabs(pc.fitted[0] - 0.5) < 1e-3, "fitted %g", pc.fitted[0]);
    ck_assert(pc.rms_log_before > 0.01);
    ck_assert(pc.rms_log_after < 1e-3);
    ck_assert_int_eq(pc.nerrs, 2);
    for (int e = 0; e < pc.nerrs; e++) {
        ck_assert(pc.errs[e].med_before > 1);
        ck_assert_msg(pc.errs[e].med_after < 0.1, "%g", pc.errs[e].med_after);
    }
    zs_pubcal_release(&pc);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* --exclude leaves the matching runs out of both parts: a pattern that
 * matches nothing fits as before (0.5, nothing excluded); with a2 left out
 * the fit part (a/x) keeps one timed figure, too few for one constant. */
START_TEST(test_exclude)
{
    char dir[] = "/tmp/zsim-pubcal-XXXXXX", cmd[128], want[512];
    struct zs_pubcal pc;
    struct zs_err err = {0, ""};

    ck_assert_ptr_nonnull(mkdtemp(dir));
    for (int i = 0; i < 3; i++)
        write_run(dir, &g_runs[i], 0);
    zs_pubcal_init(&pc);
    pc.exclude = "^zz";
    ck_assert_msg(zs_pubcal_run(&pc, dir, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(pc.nexcluded, 0);
    ck_assert_int_eq(pc.set.n, 3);
    ck_assert_msg(fabs(pc.fitted[0] - 0.5) < 1e-3, "fitted %g", pc.fitted[0]);
    zs_pubcal_release(&pc);
    zs_pubcal_init(&pc);
    pc.exclude = "^a2$";
    ck_assert_int_eq(zs_pubcal_run(&pc, dir, &err), ZS_EINPUT);
    ck_assert_int_eq(pc.nexcluded, 1);
    ck_assert_int_eq(pc.set.n, 2);
    ck_assert_str_eq(pc.set.runs[0].name, "a1");
    ck_assert_str_eq(pc.set.runs[1].name, "b1");
    snprintf(want, sizeof want,
             "invalid corpus '%s' for '--split source': the fit part "
             "has 1 modelled step_time or tokens_per_s_per_gpu "
             "figure(s), at least 2 needed",
             dir);
    ck_assert_str_eq(err.msg, want);
    zs_pubcal_release(&pc);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* --fit-sources names the fit part: with a third source c/z, the balanced
 * split fits a/x (2 figures) and checks b/y and c/z; naming b/y and c/z
 * swaps them, and the fit still finds 0.5.  A name no run comes from is
 * refused. */
START_TEST(test_fit_sources)
{
    static const struct synth c1 = {"c1", "c/z", "1024", "2"};
    char dir[] = "/tmp/zsim-pubcal-XXXXXX", cmd[128];
    struct zs_pubcal pc;
    struct zs_err err = {0, ""};

    synth_corpus(dir, 0);
    write_run(dir, &c1, 0);
    zs_pubcal_init(&pc);
    pc.fit_sources = "b/y,c/z";
    ck_assert_msg(zs_pubcal_run(&pc, dir, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(pc.nsources, 3);
    for (int i = 0; i < pc.nsources; i++)
        ck_assert_int_eq(pc.source_part[i],
                         strcmp(pc.sources[i], "a/x") == 0 ? ZS_PUBCAL_CHECK
                                                           : ZS_PUBCAL_FIT);
    ck_assert_int_eq(pc.timed_rows[ZS_PUBCAL_FIT], 2);
    ck_assert_int_eq(pc.timed_rows[ZS_PUBCAL_CHECK], 2);
    ck_assert_msg(fabs(pc.fitted[0] - 0.5) < 1e-3, "fitted %g", pc.fitted[0]);
    zs_pubcal_release(&pc);
    zs_pubcal_init(&pc);
    pc.fit_sources = "b/y,d/w";
    ck_assert_int_eq(zs_pubcal_run(&pc, dir, &err), ZS_EINPUT);
    ck_assert_str_eq(err.msg, "invalid value for '--fit-sources': no run of "
                              "the corpus comes from 'd/w'");
    zs_pubcal_release(&pc);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(test_split_rules)
{
    char key[96];
    zs_pubcal_source_key(
        "https://github.com/pytorch/torchtitan/blob/0413364/docs/"
        "performance.md",
        key, sizeof key);
    ck_assert_str_eq(key, "pytorch/torchtitan");
    zs_pubcal_source_key("https://www.deepspeed.ai/2020/blog", key, sizeof key);
    ck_assert_str_eq(key, "www.deepspeed.ai");
    zs_pubcal_source_key("https://github.com/a/b", key, sizeof key);
    ck_assert_str_eq(key, "a/b");
}
END_TEST

static int run_quiet(int argc, char **argv, struct zs_err *err)
{
    int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY), rc;
    fflush(stdout);
    dup2(null, STDOUT_FILENO);
    rc = zs_cmd_calibrate.run(argc, argv, err);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    close(null);
    return rc;
}

START_TEST(test_bad_input)
{
    char dir[] = "/tmp/zsim-pubcal-XXXXXX", cmd[128], want[512];
    struct zs_err err = {0, ""};

    {
        char *av[] = {"calibrate", "--published", "/nonexistent/zsim-corpus",
                      NULL};
        ck_assert_int_eq(run_quiet(3, av, &err), ZS_EINPUT);
        ck_assert_str_eq(err.msg, "invalid value for '--published': "
                                  "'/nonexistent/zsim-corpus' is not a "
                                  "directory");
    }
    {
        char *av[] = {"calibrate", "--published", "validation/published",
                      "--split",   "repo",        NULL};
        ck_assert_int_eq(run_quiet(5, av, &err), ZS_EINPUT);
        ck_assert_str_eq(err.msg, "invalid value for '--split': must be one "
                                  "of source, hash (got 'repo')");
    }
    {
        char *av[] = {
            "calibrate",   "--published",         "validation/published",
            "--constants", "membound_eff,launch", NULL};
        ck_assert_int_eq(run_quiet(5, av, &err), ZS_EINPUT);
        ck_assert_str_eq(err.msg,
                         "invalid value for '--constants': 'launch' is not a "
                         "constant (one of compute_sustained, sustained_node, "
                         "membound_eff, overlap_compute_factor, "
                         "hook_call_ns, host_stream_eff)");
    }
    {
        char *av[] = {"calibrate", "--published", "validation/published",
                      "--exclude", "seq(16384",   NULL};
        ck_assert_int_eq(run_quiet(5, av, &err), ZS_EUSAGE);
        ck_assert_str_eq(err.msg, "invalid value for '--exclude': 'seq(16384' "
                                  "is not a POSIX extended regular expression "
                                  "(Unmatched ( or \\()");
    }
    {
        char *av[] = {"calibrate", "--exclude", "x", NULL};
        ck_assert_int_eq(run_quiet(3, av, &err), ZS_EUSAGE);
        ck_assert_str_eq(err.msg, "'--split', '--fit-sources', '--constants' "
                                  "and '--exclude' need '--published DIR'");
    }
    {
        char *av[] = {"calibrate", "--published", "validation/published",
                      "--split",   "hash",        "--fit-sources",
                      "a/b",       NULL};
        ck_assert_int_eq(run_quiet(7, av, &err), ZS_EUSAGE);
        ck_assert_str_eq(err.msg, "'--fit-sources' names the fit part of "
                                  "'--split source' (got '--split hash')");
    }
    {
        char *av[] = {"calibrate", "--published", "validation/published",
                      "--fit-sources", "", NULL};
        ck_assert_int_eq(run_quiet(5, av, &err), ZS_EUSAGE);
        ck_assert_str_eq(err.msg, "invalid value for '--fit-sources': empty");
    }
    /* one source only: the check part is empty */
    ck_assert_ptr_nonnull(mkdtemp(dir));
    write_run(dir, &g_runs[0], 1000);
    write_run(dir, &g_runs[1], 1000);
    {
        char *av[] = {"calibrate", "--published", dir, NULL};
        ck_assert_int_eq(run_quiet(3, av, &err), ZS_EINPUT);
        snprintf(want, sizeof want,
                 "invalid corpus '%s' for '--split source': the check part "
                 "has 0 modelled step_time or tokens_per_s_per_gpu "
                 "figure(s), at least 1 needed",
                 dir);
        ck_assert_str_eq(err.msg, want);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
    /* a constant the fit part does not depend on: GPT-2 with nothing
     * offloaded never runs a CPU pass, so host_stream_eff moves none of its
     * figures */
    synth_corpus(strcpy(dir, "/tmp/zsim-pubcal-XXXXXX"), 1000);
    {
        char *av[] = {"calibrate", "--published", dir, "--constants",
                      "host_stream_eff", NULL};
        ck_assert_int_eq(run_quiet(5, av, &err), ZS_EUSAGE);
        ck_assert_str_eq(err.msg, "invalid value for '--constants': no timed "
                                  "figure of the fit part (2) depends on "
                                  "'host_stream_eff'; try '--split hash'");
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
    /* an empty directory */
    ck_assert_ptr_nonnull(mkdtemp(strcpy(dir, "/tmp/zsim-pubcal-XXXXXX")));
    {
        char *av[] = {"calibrate", "--published", dir, NULL};
        ck_assert_int_eq(run_quiet(3, av, &err), ZS_EINPUT);
        snprintf(want, sizeof want,
                 "invalid value for '--published': no *.json in '%s'", dir);
        ck_assert_str_eq(err.msg, want);
    }
    rmdir(dir);
}
END_TEST

/* The table's current values are what zsim uses: every GPU profile holds
 * membound_eff's current value. */
START_TEST(test_current_values)
{
    const struct zs_hw_gpu_entry *e;
    int n = zs_hw_gpu_entries(&e);
    for (int i = 0; i < n; i++) {
        char path[512];
        struct zs_gpu g;
        struct zs_err err = {0, ""};
        snprintf(path, sizeof path, "%s/gpus/%s.json", zs_hw_dir(), e[i].file);
        ck_assert_msg(zs_hw_load_gpu(path, &g, &err) == 0, "%s", err.msg);
        ck_assert_msg(g.membound_eff == find_const("membound_eff")->current,
                      "%s", e[i].name);
        ck_assert_msg(g.sustained_node == find_const("sustained_node")->current,
                      "%s", e[i].name);
    }
    ck_assert(find_const("compute_sustained")->current == 1.0);
    ck_assert(find_const("sustained_node")->current == ZS_SUSTAINED_NODE);
}
END_TEST

Suite *suite_pubcal(void)
{
    Suite *s = suite_create("pubcal");
    TCase *core = tcase_create("core"), *bad = tcase_create("bad input");
    tcase_set_timeout(core, 120);
    tcase_add_test(core, test_fit_finds_known_constant);
    tcase_add_test(core, test_split_rules);
    tcase_add_test(core, test_fit_sources);
    tcase_add_test(core, test_exclude);
    tcase_add_test(core, test_current_values);
    tcase_add_test(bad, test_bad_input);
    suite_add_tcase(s, core);
    suite_add_tcase(s, bad);
    return s;
}
