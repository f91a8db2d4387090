/*
 * check_util.c — sizes, distances, the table-driven JSON loader and its
 * messages, and the allocation-failure loop over the loader.
 */
#include "util/afile.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/strutil.h"
#include "util/table.h"
#include "util/units.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <stddef.h>
#include <locale.h>
#include <string.h>

START_TEST(test_parse_bytes)
{
    static const struct {
        const char *text;
        int rc;
        int64_t bytes;
    } cases[] = {
        {"80GiB", 0, 80LL * ZS_GiB},
        {"2TB", 0, 2000000000000LL},
        {"1.5TiB", 0, 3LL * ZS_TiB / 2},
        {"512 MiB", 0, 512LL * ZS_MiB},
        {"123", 0, 123},
        {"0.5GB", 0, 500000000LL},
        {"1gib", 0, ZS_GiB},
        {"-1", -2, 0},
        {"-1GiB", -2, 0},
        {"", -1, 0},
        {"GiB", -1, 0},
        {"12XB", -1, 0},
        {"1e9", -1, 0},
        {"2000PiB", -3, 0},
        {"99999999999999999999999999999999999", -3, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t b = 0;
        int rc = zs_parse_bytes(cases[i].text, &b);
        ck_assert_msg(rc == cases[i].rc, "'%s': rc %d", cases[i].text, rc);
        if (rc == 0)
            ck_assert_int_eq(b, cases[i].bytes);
    }
}
END_TEST

START_TEST(test_fmt_bytes)
{
    char buf[32];
    ck_assert_str_eq(zs_fmt_bytes(buf, sizeof buf, 0), "0 B");
    ck_assert_str_eq(
        zs_fmt_bytes(buf, sizeof buf, 79LL * ZS_GiB + ZS_GiB / 10 + 1),
        "79.1 GiB");
    ck_assert_str_eq(zs_fmt_bytes(buf, sizeof buf, 3 * ZS_TiB / 2), "1.50 TiB");
    ck_assert_str_eq(zs_fmt_bytes(buf, sizeof buf, 512 * ZS_MiB), "512 MiB");
    ck_assert_str_eq(zs_fmt_seconds(buf, sizeof buf, 3.4149), "3.41 s");
    ck_assert_str_eq(zs_fmt_seconds(buf, sizeof buf, 0.812), "812 ms");
    ck_assert_str_eq(zs_fmt_count(buf, sizeof buf, 72.7e9), "72.70B");
}
END_TEST

START_TEST(test_distance)
{
    static const char *const names[] = {"qwen2.5-72b", "qwen2.5-7b",
                                        "llama-3-70b", "yi-34b"};
    char buf[128];
    ck_assert_int_eq(zs_str_distance("kitten", "sitting"), 3);
    ck_assert_int_eq(zs_str_distance("", "abc"), 3);
    ck_assert_int_eq(zs_str_distance("ABC", "abc"), 0);
    ck_assert_int_eq(
        zs_str_closest("hiden_size",
                       (const char *const[]){"hidden_size", "vocab_size"}, 2),
        0);
    ck_assert_int_eq(zs_str_closest("zzzzzzzz", names, 4), -1);
    zs_str_closest_list("qwen-72b", names, 4, 2, buf, sizeof buf);
    ck_assert_str_eq(buf, "qwen2.5-72b, qwen2.5-7b");
}
END_TEST

/* No fixed-size candidate arrays: a table of structs searched in place, and
 * a ranked list over 700 candidates (the old used[512] marks cut the list at
 * 512).  names[i] = "n%03d" of i mod 600, so "n050" sits at 50 and at 650.
 * Ranking is by (distance, index): both exact matches first (50, then 650,
 * the second beyond 512), then the lowest index at one edit: "n000". */
START_TEST(test_closest_large)
{
    struct rec {
        int pad;
        const char *key;
    } recs[] = {{0, "alpha"}, {0, "beta"}, {0, "gamma"}};
    static char names_buf[700][8];
    const char *names[700];
    char buf[64];
    ck_assert_int_eq(zs_str_closest_key("bata", recs, 3, sizeof recs[0],
                                        offsetof(struct rec, key)),
                     1);
    ck_assert_int_eq(zs_str_closest_key("zzzzzz", recs, 3, sizeof recs[0],
                                        offsetof(struct rec, key)),
                     -1);
    for (int i = 0; i < 700; i++) {
        snprintf(names_buf[i], sizeof names_buf[i], "n%03d", i % 600);
        names[i] = names_buf[i];
    }
    /* "n650"..: indices 600-699 hold n000-n099 again; "n599" is at 599 only,
     * beyond nothing; "n050" exists at 50 and 650: both listed, 50 first,
     * then the one-edit neighbours by index (n051 ... at 51 before n150). */
    zs_str_closest_list("n050", names, 700, 3, buf, sizeof buf);
    ck_assert_str_eq(buf, "n050, n050, n000");
    ck_assert_int_eq(zs_str_closest("n599", names, 700), 599);
}
END_TEST

struct demo {
    int64_t layers;
    double ratio;
    bool tie;
    char name[16];
    int64_t ram;
    int kind;
};

static const char *const demo_kinds[] = {"dense", "moe", NULL};
static const struct zs_field demo_fields[] = {
    {"layers", ZS_F_INT, offsetof(struct demo, layers), 1, 1000, 0,
     ZS_F_REQUIRED, NULL, 0, NULL},
    {"ratio", ZS_F_DOUBLE, offsetof(struct demo, ratio), 0, 1, 0.5, 0, NULL, 0,
     NULL},
    {"tie", ZS_F_BOOL, offsetof(struct demo, tie), 0, 0, 0, 0, NULL, 0, NULL},
    {"name", ZS_F_STRING, offsetof(struct demo, name), 0, 0, 0, 0, NULL, 16,
     "anon"},
    {"ram", ZS_F_BYTES, offsetof(struct demo, ram), 1, (double)ZS_TiB,
     (double)ZS_GiB, 0, NULL, 0, NULL},
    {"kind", ZS_F_ENUM, offsetof(struct demo, kind), 0, 0, 0, 0, demo_kinds, 0,
     NULL},
    {"comment", ZS_F_SKIP, 0, 0, 0, 0, 0, NULL, 0, NULL},
};

static int load_demo(const char *text, struct demo *d, struct zs_err *err)
{
    cJSON *root;
    struct zs_json_src src;
    int rc =
        zs_json_parse_text("demo.json", text, strlen(text), &root, &src, err);
    if (rc)
        return rc;
    rc = zs_json_read(&src, root, "", demo_fields,
                      sizeof demo_fields / sizeof demo_fields[0], d, 0, err);
    cJSON_Delete(root);
    zs_json_src_release(&src);
    return rc;
}

START_TEST(test_json_good)
{
    struct demo d;
    struct zs_err err = {0, ""};
    ck_assert_int_eq(
        load_demo("{\"layers\": 80, \"ram\": \"2TiB\", \"kind\": \"moe\"}", &d,
                  &err),
        ZS_EINPUT);
    ck_assert_str_eq(err.msg,
                     "invalid 'ram' in demo.json:1:16: must be a size in [1 B, "
                     "1.00 TiB] (bytes or e.g. \"80GiB\") (got '2TiB')");
    ck_assert_int_eq(load_demo("{\"layers\": 80, \"ram\": \"512GiB\", "
                               "\"kind\": \"moe\", \"comment\": [1]}",
                               &d, &err),
                     0);
    ck_assert_int_eq(d.layers, 80);
    ck_assert_int_eq(d.ram, 512 * ZS_GiB);
    ck_assert_int_eq(d.kind, 1);
    ck_assert(d.ratio == 0.5);
    ck_assert_str_eq(d.name, "anon");
}
END_TEST

/* Every bad input paired with its exact message (STYLE 24). */
START_TEST(test_json_bad)
{
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"", "empty file 'demo.json': expected a JSON object"},
        {"  \n ", "empty file 'demo.json': expected a JSON object"},
        {"{\"layers\": 1,\n \"x\": \x01}",
         "binary file 'demo.json' (byte 0x01 at offset 20): expected a JSON "
         "object"},
        {"{\"layers\": 1,\n  \"tie\": tru}",
         "malformed JSON in demo.json:2:10: unexpected 't'"},
        {"{\"layers\": 1",
         "malformed JSON in demo.json:1:13: unexpected end of input"},
        {"[1, 2]",
         "invalid top level in demo.json: must be an object (got array)"},
        {"{}",
         "missing 'layers' in demo.json: required, an integer in [1, 1000]"},
        {"{\"layers\": -3}", "invalid 'layers' in demo.json:1:2: must be an "
                             "integer in [1, 1000] (got -3)"},
        {"{\"layers\": 2.5}", "invalid 'layers' in demo.json:1:2: must be an "
                              "integer in [1, 1000] (got 2.5)"},
        {"{\"layers\": \"80\"}", "invalid 'layers' in demo.json:1:2: must be "
                                 "an integer in [1, 1000] (got '80')"},
        {"{\"layers\": 1e400}", "invalid 'layers' in demo.json:1:2: must be an "
                                "integer in [1, 1000] (got inf)"},
        {"{\"layers\": 1, \"lyers\": 2}",
         "unknown key 'lyers' in demo.json:1:15: did you mean 'layers'?"},
        {"{\"layers\": 1, \"qqqqqqqq\": 2}",
         "unknown key 'qqqqqqqq' in demo.json:1:15"},
        {"{\"layers\": 1, \"kind\": \"sparse\"}",
         "invalid 'kind' in demo.json:1:15: must be one of dense, moe (got "
         "'sparse')"},
        {"{\"layers\": 1, \"tie\": 1}",
         "invalid 'tie' in demo.json:1:15: must be true or false (got 1)"},
        {"{\"layers\": 1, \"name\": \"a-very-long-name-indeed\"}",
         "invalid 'name' in demo.json:1:15: must be a string of 1 to 15 "
         "characters (got 'a-very-long-name-indeed')"},
        {"{\"layers\": 1, \"ratio\": 1.5}",
         "invalid 'ratio' in demo.json:1:15: must be a number in [0, 1] (got "
         "1.5)"},
        {"{\"layers\": 1, \"ram\": -1}",
         "invalid 'ram' in demo.json:1:15: must be a size in [1 B, 1.00 TiB] "
         "(bytes or e.g. \"80GiB\") (got -1)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct demo d;
        struct zs_err err = {0, ""};
        int rc = load_demo(cases[i].text, &d, &err);
        ck_assert_msg(rc == ZS_EINPUT, "case %zu: rc %d", i, rc);
        ck_assert_str_eq(err.msg, cases[i].msg);
    }
}
END_TEST

/* The loader under an allocation-failure loop: fail the Nth allocation for
 * every N until a run completes without hitting the failure. */
START_TEST(test_json_alloc_failures)
{
    const char *text = "{\"layers\": 80, \"ram\": \"512GiB\", \"kind\": "
                       "\"moe\", \"comment\": [1, {\"a\": 2}]}";
    for (long n = 1; n < 10000; n++) {
        struct demo d;
        struct zs_err err = {0, ""};
        int rc;
        zs_alloc_fail_at(n);
        rc = load_demo(text, &d, &err);
        if (!zs_alloc_failed()) {
            ck_assert_int_eq(rc, 0);
            zs_alloc_fail_at(0);
            return;
        }
        ck_assert_msg(rc == ZS_ENOMEM, "n=%ld rc=%d msg=%s", n, rc, err.msg);
    }
    zs_alloc_fail_at(0);
    ck_abort_msg("allocation loop did not terminate");
}
END_TEST

/* Prints t with a 2-space indent, checks the text is exactly want, frees
 * t. */
static void expect_table(struct zs_table *t, const char *want)
{
    char buf[512];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    ck_assert_ptr_nonnull(f);
    zs_table_print(t, f, 2);
    fclose(f);
    ck_assert_str_eq(buf, want);
    zs_table_free(t);
}

START_TEST(test_table)
{
    struct zs_table *t = zs_table_new(3, "lrr");
    ck_assert_ptr_nonnull(t);
    zs_table_header(t);
    ck_assert_int_eq(zs_table_rowf(t, "name\tparams\tpeak"), 0);
    ck_assert_int_eq(zs_table_rowf(t, "qwen2.5-72b\t72.7B\t79.1 GiB"), 0);
    expect_table(t, "  name         params      peak\n"
                    "  -----------------------------\n"
                    "  qwen2.5-72b   72.7B  79.1 GiB\n");
}
END_TEST

/* A note row prints as it is after the indent, under its row, and does not
 * widen the columns: the rows are aligned as without it. */
START_TEST(test_table_note)
{
    struct zs_table *t = zs_table_new(2, "lr");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(zs_table_rowf(t, "a\t1 %%"), 0);
    ck_assert_int_eq(zs_table_note(t, "  a note wider than both columns"), 0);
    ck_assert_int_eq(zs_table_rowf(t, "bcd\t10 %%"), 0);
    expect_table(t, "  a     1 %\n"
                    "    a note wider than both columns\n"
                    "  bcd  10 %\n");
}
END_TEST

/* Under a locale with a decimal comma, messages still print a dot. */
START_TEST(test_locale_independent)
{
    struct demo d;
    struct zs_err err = {0, ""};
    if (!setlocale(LC_NUMERIC, "de_DE.UTF-8") &&
        !setlocale(LC_NUMERIC, "fr_FR.UTF-8"))
        setlocale(LC_NUMERIC, "C");
    ck_assert_int_eq(load_demo("{\"layers\": 1, \"ratio\": 1.5}", &d, &err),
                     ZS_EINPUT);
    ck_assert_str_eq(err.msg, "invalid 'ratio' in demo.json:1:15: must be a "
                              "number in [0, 1] (got 1.5)");
    setlocale(LC_NUMERIC, "C");
}
END_TEST

/* The whole file, or "" when it does not exist. */
static void slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n = 0;
    if (f) {
        n = fread(buf, 1, cap - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
}

/* Entries in dir besides . and .. */
static int nentries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;
    ck_assert_ptr_nonnull(d);
    while ((de = readdir(d)))
        n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* Atomic writes (util/afile.h): the target holds the old text until commit,
 * the whole new text after it, and no temporary is ever left behind. */
START_TEST(test_afile)
{
    char dir[] = "/tmp/zsim-afile-XXXXXX", path[128], buf[64];
    struct zs_afile a;
    struct zs_err err = {0, ""};
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/x.txt", dir);

    ck_assert_int_eq(zs_write_atomic(dir, "x.txt", "old\n", 4, &err), 0);
    slurp(path, buf, sizeof buf);
    ck_assert_str_eq(buf, "old\n");
    ck_assert_int_eq(nentries(dir), 1);

    /* between open and commit the target is untouched */
    ck_assert_int_eq(zs_afile_open(&a, NULL, path, &err), 0);
    fputs("new text\n", a.f);
    fflush(a.f);
    slurp(path, buf, sizeof buf);
    ck_assert_str_eq(buf, "old\n");
    ck_assert_int_eq(nentries(dir), 2);
    ck_assert_int_eq(zs_afile_commit(&a, &err), 0);
    slurp(path, buf, sizeof buf);
    ck_assert_str_eq(buf, "new text\n");
    ck_assert_int_eq(nentries(dir), 1);

    /* abort: old text stays, temporary gone; a second abort is harmless */
    ck_assert_int_eq(zs_afile_open(&a, dir, "x.txt", &err), 0);
    fputs("lost", a.f);
    zs_afile_abort(&a);
    zs_afile_abort(&a);
    slurp(path, buf, sizeof buf);
    ck_assert_str_eq(buf, "new text\n");
    ck_assert_int_eq(nentries(dir), 1);

    /* a failed write (the stream swapped for /dev/full, where every flush
     * fails with ENOSPC) is caught at commit: target kept, temporary gone */
    if (access("/dev/full", W_OK) == 0) {
        ck_assert_int_eq(zs_afile_open(&a, NULL, path, &err), 0);
        fclose(a.f);
        a.f = fopen("/dev/full", "w");
        ck_assert_ptr_nonnull(a.f);
        fputs("lost", a.f);
        ck_assert_int_eq(zs_afile_commit(&a, &err), ZS_EIO);
        ck_assert_str_eq(err.msg + strlen(err.msg) -
                             strlen("': No space left on device"),
                         "': No space left on device");
        ck_assert_ptr_nonnull(strstr(err.msg, "cannot write '/tmp/zsim-afile-"));
        slurp(path, buf, sizeof buf);
        ck_assert_str_eq(buf, "new text\n");
        ck_assert_int_eq(nentries(dir), 1);
    }

    /* an unwritable place names the target */
    ck_assert_int_eq(
        zs_write_atomic("/nonexistent-dir", "y.json", "{}", 2, &err), ZS_EIO);
    ck_assert_str_eq(err.msg, "cannot write '/nonexistent-dir/y.json': No "
                              "such file or directory");

    unlink(path);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

Suite *suite_util(void)
{
    Suite *s = suite_create("util");
    TCase *core = tcase_create("core");
    TCase *bad = tcase_create("bad input");
    TCase *limits = tcase_create("limits");
    tcase_add_test(core, test_parse_bytes);
    tcase_add_test(core, test_fmt_bytes);
    tcase_add_test(core, test_distance);
    tcase_add_test(core, test_closest_large);
    tcase_add_test(core, test_json_good);
    tcase_add_test(core, test_table);
    tcase_add_test(core, test_table_note);
    tcase_add_test(core, test_afile);
    tcase_add_test(bad, test_json_bad);
    tcase_add_test(bad, test_locale_independent);
    tcase_add_test(limits, test_json_alloc_failures);
    suite_add_tcase(s, core);
    suite_add_tcase(s, bad);
    suite_add_tcase(s, limits);
    return s;
}
