/*
 * check_store.c — the SQLite run store: recording, queries, tags, schema
 * migration; concurrent writers, a writer killed inside its transaction,
 * allocation failures; foreign, corrupt and newer files with their exact
 * messages.  Every test works on real SQLite files in a mkdtemp() folder.
 */
#include "store/store.h"
#include "util/alloc.h"
#include "util/units.h"

#include <check.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SIM72 "tests/data/good/report-sim-qwen72b-sft.json"
#define SIM7 "tests/data/good/report-sim-qwen7b-lora-8proc.json"
#define SIM34 "tests/data/good/report-sim-yi34b-sp4.json"
#define PLAN72 "tests/data/good/report-plan-72b-8xh100.json"

static char g_dir[64];
static char g_db[128];

static void setup(void)
{
    strcpy(g_dir, "/tmp/zsim-store-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(g_dir));
    snprintf(g_db, sizeof g_db, "%s/runs.db", g_dir);
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", g_dir);
}

/* Whole file into a NUL-terminated heap string (test helper: plain malloc is
 * fine here, it is not zsim's allocation). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    ck_assert_int_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fwrite(data, 1, n, f), n);
    fclose(f);
}

static struct zs_run_meta meta(const char *kind, const char *scenario)
{
    struct zs_run_meta m = {
        kind,    scenario,       "zsim simulate x.json --db runs.db",
        "0.1.0", "abc123def456", 1700000000};
    return m;
}

static int64_t sql_int(const char *path, const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *s;
    int64_t v = -1;
    ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
    if (sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return v;
}

static void record_file(zs_store *st, const char *kind, const char *scenario,
                        const char *path)
{
    struct zs_err err = {0, ""};
    char *doc = slurp(path);
    struct zs_run_meta m = meta(kind, scenario);
    int rc = zs_store_record(st, &m, doc, &err);
    ck_assert_msg(rc == 0, "record %s: %s", path, err.msg);
    free(doc);
}

START_TEST(test_record_and_read)
{
    struct zs_err err = {0, ""};
    struct zs_run_list l;
    zs_store *st;
    int64_t n, id;
    double v;
    int found;
    char *doc = slurp(SIM72);
    struct zs_run_meta m = meta("simulate", "qwen72b-sft");

    ck_assert_int_eq(zs_store_open(g_db, &st, &err), 0);
    ck_assert_int_eq(zs_store_record_id(st, &m, doc, &id, &err), 0);
    ck_assert_int_eq(id, 1);
    record_file(st, "simulate", "qwen7b-lora-8proc", SIM7);
    record_file(st, "plan", "72b-8xh100", PLAN72);
    ck_assert_int_eq(zs_store_count(st, &n, &err), 0);
    ck_assert_int_eq(n, 3);

    /* Every figure of the document, by dotted name, and the compared
     * metrics: peaks are the max over first and steady step and the run. */
    ck_assert_int_eq(
        zs_store_figure(st, 1, "steady_step.time_s", &v, &found, &err), 0);
    ck_assert(found && v == 47.12);
    ck_assert_int_eq(zs_store_figure(st, 1, "steady_step.breakdown_s.compute",
                                     &v, &found, &err),
                     0);
    ck_assert(found && v == 31.95);
    ck_assert_int_eq(zs_store_figure(st, 1, "estimators.deepspeed.gpu_bytes",
                                     &v, &found, &err),
                     0);
    ck_assert(found && v == (double)(int64_t)(33.5 * ZS_GiB));
    ck_assert_int_eq(zs_store_figure(st, 1, "compare.peak_gpu_allocated_bytes",
                                     &v, &found, &err),
                     0);
    ck_assert(found &&
              v == (double)(int64_t)(53.1 * ZS_GiB)); /* first step's */
    ck_assert_int_eq(
        zs_store_figure(st, 1, "compare.step_time_s", &v, &found, &err), 0);
    ck_assert(found && v == 47.12);
    ck_assert_int_eq(zs_store_figure(st, 1, "timeline.gpu", &v, &found, &err),
                     0);
    ck_assert(!found);
    /* The OOM run has no step figures, only its verdict and oom record. */
    ck_assert_int_eq(
        zs_store_figure(st, 2, "compare.step_time_s", &v, &found, &err), 0);
    ck_assert(!found);
    ck_assert_int_eq(
        zs_store_figure(st, 2, "oom.needed_bytes", &v, &found, &err), 0);
    ck_assert(found && v == 1535115264.0);
    /* A plan's compared metrics are its best candidate's (index 2). */
    ck_assert_int_eq(zs_store_figure(st, 3, "compare.tokens_per_s_per_gpu", &v,
                                     &found, &err),
                     0);
    ck_assert(found && v == 820.2);
    ck_assert_int_eq(zs_store_figure(st, 3, "searched", &v, &found, &err), 0);
    ck_assert(found && v == 8);

    ck_assert_int_eq(zs_store_latest(st, &l, &err), 0);
    ck_assert_int_eq(l.n, 3);
    ck_assert_str_eq(l.runs[0].scenario, "72b-8xh100");
    ck_assert_str_eq(l.runs[0].kind, "plan");
    ck_assert_str_eq(l.runs[0].verdict, "fits");
    ck_assert_str_eq(l.runs[1].scenario, "qwen72b-sft");
    ck_assert_str_eq(l.runs[1].doc, doc);
    ck_assert_str_eq(l.runs[1].git_commit, "abc123def456");
    ck_assert_str_eq(l.runs[1].version, "0.1.0");
    ck_assert_int_eq(l.runs[1].unix_time, 1700000000);
    ck_assert_str_eq(l.runs[2].verdict, "gpu_oom");
    zs_run_list_release(&l);
    zs_store_close(st);
    free(doc);

    /* The file is a WAL-mode zsim store at the latest schema version. */
    ck_assert_int_eq(sql_int(g_db, "PRAGMA application_id"), ZS_STORE_APP_ID);
    ck_assert_int_eq(sql_int(g_db, "PRAGMA user_version"),
                     ZS_STORE_SCHEMA_VERSION);
    ck_assert_int_eq(sql_int(g_db, "SELECT count(*) FROM pragma_journal_mode "
                                   "WHERE journal_mode = 'wal'"),
                     1);
}
END_TEST

START_TEST(test_latest_history_tags)
{
    struct zs_err err = {0, ""};
    struct zs_run_list l;
    zs_store *st;
    size_t ntag;
    int found;
    char names[128];

    ck_assert_int_eq(zs_store_open(g_db, &st, &err), 0);
    record_file(st, "simulate", "a", SIM72); /* 1 */
    record_file(st, "simulate", "b", SIM34); /* 2 */
    record_file(st, "simulate", "a", SIM34); /* 3 */
    ck_assert_int_eq(zs_store_tag(st, "v1", 1700000100, &ntag, &err), 0);
    ck_assert_int_eq(ntag, 2);
    record_file(st, "simulate", "a", SIM7); /* 4: after the tag */

    ck_assert_int_eq(zs_store_latest(st, &l, &err), 0);
    ck_assert_int_eq(l.n, 2);
    ck_assert_int_eq(l.runs[0].id, 4);
    ck_assert_int_eq(l.runs[1].id, 2);
    zs_run_list_release(&l);

    ck_assert_int_eq(zs_store_tagged(st, "v1", &found, &l, &err), 0);
    ck_assert(found);
    ck_assert_int_eq(l.n, 2);
    ck_assert_int_eq(l.runs[0].id, 3);
    ck_assert_int_eq(l.runs[1].id, 2);
    zs_run_list_release(&l);

    ck_assert_int_eq(zs_store_tagged(st, "v2", &found, &l, &err), 0);
    ck_assert(!found);
    ck_assert_int_eq(l.n, 0);

    /* Re-tagging replaces. */
    ck_assert_int_eq(zs_store_tag(st, "v1", 1700000200, &ntag, &err), 0);
    ck_assert_int_eq(zs_store_tag(st, "base", 1700000200, &ntag, &err), 0);
    ck_assert_int_eq(zs_store_tagged(st, "v1", &found, &l, &err), 0);
    ck_assert_int_eq(l.runs[0].id, 4);
    zs_run_list_release(&l);
    ck_assert_int_eq(zs_store_tag_names(st, names, sizeof names, &err), 0);
    ck_assert_str_eq(names, "base, v1");

    ck_assert_int_eq(zs_store_history(st, "a", &l, &err), 0);
    ck_assert_int_eq(l.n, 3);
    ck_assert_int_eq(l.runs[0].id, 1);
    ck_assert_int_eq(l.runs[2].id, 4);
    zs_run_list_release(&l);

    ck_assert_int_eq(zs_store_tag(st, "no/slash", 0, &ntag, &err), ZS_EUSAGE);
    ck_assert_str_eq(err.msg, "invalid tag 'no/slash': must be 1 to 64 of "
                              "letters, digits, '.', '_' and '-'");
    ck_assert_int_eq(zs_store_check(st, &err), 0);
    zs_store_close(st);
}
END_TEST

/* A version-1 store (before tags existed) is migrated on open, keeping its
 * runs. */
START_TEST(test_migration_from_v1)
{
    struct zs_err err = {0, ""};
    sqlite3 *db;
    zs_store *st;
    struct zs_run_list l;
    size_t ntag;
    int64_t n;

    ck_assert_int_eq(sqlite3_open(g_db, &db), SQLITE_OK);
    ck_assert_int_eq(
        sqlite3_exec(
            db,
            "CREATE TABLE runs(id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT "
            "NOT NULL CHECK (kind IN ('simulate', 'plan')),"
            " scenario TEXT NOT NULL, argv TEXT NOT NULL DEFAULT '', version "
            "TEXT NOT NULL, git_commit TEXT,"
            " unix_time INTEGER NOT NULL, doc_schema TEXT NOT NULL, verdict "
            "TEXT NOT NULL, doc TEXT NOT NULL);"
            "CREATE INDEX runs_by_scenario ON runs(scenario, id);"
            "CREATE TABLE metrics(run_id INTEGER NOT NULL REFERENCES runs(id) "
            "ON DELETE CASCADE, name TEXT NOT NULL,"
            " value REAL NOT NULL, PRIMARY KEY (run_id, name)) WITHOUT ROWID;"
            "INSERT INTO runs(kind, scenario, version, unix_time, doc_schema, "
            "verdict, doc)"
            " VALUES ('simulate', 'old', '0.0.9', 1600000000, "
            "'zsim.simulate/1', 'fits', '{\"schema\": \"zsim.simulate/1\"}');"
            "PRAGMA application_id = 2054383981; PRAGMA user_version = 1;",
            NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);

    ck_assert_int_eq(zs_store_open(g_db, &st, &err), 0);
    ck_assert_int_eq(zs_store_count(st, &n, &err), 0);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(zs_store_tag(st, "after-migration", 1, &ntag, &err), 0);
    ck_assert_int_eq(ntag, 1);
    ck_assert_int_eq(zs_store_latest(st, &l, &err), 0);
    ck_assert_str_eq(l.runs[0].version, "0.0.9");
    ck_assert_str_eq(l.runs[0].git_commit, "");
    zs_run_list_release(&l);
    zs_store_close(st);
    ck_assert_int_eq(sql_int(g_db, "PRAGMA user_version"), 2);
}
END_TEST

/* Two processes write N runs each into one file at the same time: 2N runs,
 * each with all of its figures. */
START_TEST(test_concurrent_writers)
{
    enum { N = 40 };
    struct zs_err err = {0, ""};
    pid_t pid[2];
    zs_store *st;
    int64_t n;
    char *doc = slurp(SIM72);

    for (int w = 0; w < 2; w++) {
        pid[w] = fork();
        ck_assert_int_ge(pid[w], 0);
        if (pid[w] == 0) {
            zs_store *cst;
            char scen[16];
            int rc = zs_store_open(g_db, &cst, &err);
            for (int i = 0; rc == 0 && i < N; i++) {
                struct zs_run_meta m = meta("simulate", scen);
                snprintf(scen, sizeof scen, "w%d-%02d", w, i % 4);
                m.scenario = scen;
                rc = zs_store_record(cst, &m, doc, &err);
            }
            if (rc)
                fprintf(stderr, "writer %d: %s\n", w, err.msg);
            zs_store_close(cst);
            _exit(rc ? 1 : 0);
        }
    }
    for (int w = 0; w < 2; w++) {
        int status;
        ck_assert_int_eq(waitpid(pid[w], &status, 0), pid[w]);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                      "writer %d failed", w);
    }
    ck_assert_int_eq(zs_store_open(g_db, &st, &err), 0);
    ck_assert_int_eq(zs_store_count(st, &n, &err), 0);
    ck_assert_int_eq(n, 2 * N);
    ck_assert_int_eq(zs_store_check(st, &err), 0);
    zs_store_close(st);
    ck_assert_int_eq(
        sql_int(
            g_db,
            "SELECT count(*) FROM metrics WHERE name = 'compare.step_time_s'"),
        2 * N);
    ck_assert_int_eq(sql_int(g_db, "SELECT count(DISTINCT scenario) FROM runs"),
                     8);
    free(doc);
}
END_TEST

static int g_hook_calls, g_hook_fd, g_kill_at;

static void hook_signal_and_wait(void *arg)
{
    if (++g_hook_calls == g_kill_at) {
        char c = 'k';
        if (write(g_hook_fd, &c, 1) != 1)
            _exit(3);
        for (;;)
            pause(); /* killed here, inside the transaction */
    }
}

/* A writer commits K runs and is SIGKILLed inside run K+1's transaction:
 * exactly K runs remain, the file passes integrity_check, and the store
 * takes new runs. */
START_TEST(test_killed_writer)
{
    enum { K = 3 };
    struct zs_err err = {0, ""};
    int fds[2], status;
    pid_t pid;
    char c;
    zs_store *st;
    int64_t n;
    char *doc = slurp(SIM34);

    ck_assert_int_eq(pipe(fds), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        zs_store *cst;
        struct zs_run_meta m = meta("simulate", "yi34b");
        close(fds[0]);
        g_hook_fd = fds[1];
        g_kill_at = K + 1;
        zs_store_set_test_hook(hook_signal_and_wait, NULL);
        if (zs_store_open(g_db, &cst, &err))
            _exit(1);
        for (int i = 0; i < K + 1; i++)
            if (zs_store_record(cst, &m, doc, &err))
                _exit(2);
        _exit(4); /* not reached */
    }
    close(fds[1]);
    ck_assert_int_eq(read(fds[0], &c, 1), 1);
    close(fds[0]);
    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    ck_assert_int_eq(zs_store_open(g_db, &st, &err), 0);
    ck_assert_int_eq(zs_store_check(st, &err), 0);
    ck_assert_int_eq(zs_store_count(st, &n, &err), 0);
    ck_assert_int_eq(n, K);
    record_file(st, "simulate", "after", SIM72);
    ck_assert_int_eq(zs_store_count(st, &n, &err), 0);
    ck_assert_int_eq(n, K + 1);
    zs_store_close(st);
    ck_assert_int_eq(
        sql_int(
            g_db,
            "SELECT count(*) FROM metrics WHERE name = 'compare.step_time_s'"),
        K + 1);
    free(doc);
}
END_TEST

/* Open + record + read under a failure of every allocation in turn (SQLite's
 * own included): each attempt fails cleanly with ZS_ENOMEM or succeeds, and
 * a run is either stored whole or not at all. */
START_TEST(test_alloc_failures)
{
    char *doc = slurp(SIM34);
    long n;
    for (n = 1; n < 100000; n++) {
        struct zs_err err = {0, ""};
        struct zs_run_list l = {NULL, 0};
        struct zs_run_meta m = meta("simulate", "yi34b");
        zs_store *st = NULL;
        int rc;

        zs_alloc_fail_at(n);
        rc = zs_store_open(g_db, &st, &err);
        if (rc == 0)
            rc = zs_store_record(st, &m, doc, &err);
        if (rc == 0)
            rc = zs_store_latest(st, &l, &err);
        zs_run_list_release(&l);
        zs_store_close(st);
        if (!zs_alloc_failed()) {
            zs_alloc_fail_at(0);
            ck_assert_msg(rc == 0, "n=%ld: %s", n, err.msg);
            break;
        }
        zs_alloc_fail_at(0);
        ck_assert_msg(rc == ZS_ENOMEM || rc == 0, "n=%ld rc=%d msg=%s", n, rc,
                      err.msg);
    }
    ck_assert_msg(n < 100000, "allocation loop did not terminate");
    /* Whole runs only: every stored run has its compared figures. */
    ck_assert_int_eq(
        sql_int(
            g_db,
            "SELECT count(*) FROM runs WHERE id NOT IN "
            "(SELECT run_id FROM metrics WHERE name = 'compare.step_time_s')"),
        0);
    ck_assert_int_ge(sql_int(g_db, "SELECT count(*) FROM runs"), 1);
    free(doc);
}
END_TEST

static void expect_open_error(const char *path, int existing, int code,
                              const char *want)
{
    struct zs_err err = {0, ""};
    zs_store *st = (zs_store *)1;
    int rc = existing ? zs_store_open_existing(path, &st, &err)
                      : zs_store_open(path, &st, &err);
    ck_assert_int_eq(rc, code);
    ck_assert_ptr_null(st);
    ck_assert_str_eq(err.msg, want);
}

START_TEST(test_bad_files)
{
    char path[160], want[400];
    sqlite3 *db;
    static const char text[] =
        "this is a plain text file and certainly not an SQLite database, "
        "but it is long enough to hold a header\n";

    /* Not SQLite at all. */
    snprintf(path, sizeof path, "%s/notes.txt", g_dir);
    write_file(path, text, sizeof text - 1);
    snprintf(want, sizeof want,
             "corrupt run store '%s': file is not a database", path);
    expect_open_error(path, 0, ZS_EINPUT, want);
    /* ... and left untouched. */
    {
        char *back = slurp(path);
        ck_assert_str_eq(back, text);
        free(back);
    }

    /* Somebody else's SQLite database. */
    snprintf(path, sizeof path, "%s/other.db", g_dir);
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    ck_assert_int_eq(
        sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1);", NULL,
                     NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    snprintf(want, sizeof want,
             "'%s' is not a zsim run store (application_id 0x00000000, "
             "expected 0x7a73696d)",
             path);
    expect_open_error(path, 0, ZS_EINPUT, want);
    ck_assert_int_eq(sql_int(path, "SELECT count(*) FROM pragma_journal_mode "
                                   "WHERE journal_mode = 'delete'"),
                     1);

    /* Another application's id (a Fossil repository's, 252006673). */
    snprintf(path, sizeof path, "%s/fossil.db", g_dir);
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(db, "PRAGMA application_id = 252006673;",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    snprintf(want, sizeof want,
             "'%s' is not a zsim run store (application_id 0x0f055111, "
             "expected 0x7a73696d)",
             path);
    expect_open_error(path, 1, ZS_EINPUT, want);

    /* A store from a newer zsim. */
    snprintf(path, sizeof path, "%s/newer.db", g_dir);
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    ck_assert_int_eq(
        sqlite3_exec(
            db, "PRAGMA application_id = 2054383981; PRAGMA user_version = 9;",
            NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    snprintf(want, sizeof want,
             "run store '%s' has schema version 9, newer than this zsim "
             "supports (2): use a newer zsim",
             path);
    expect_open_error(path, 0, ZS_EINPUT, want);

    /* Missing (for readers) and a folder. */
    snprintf(path, sizeof path, "%s/missing.db", g_dir);
    snprintf(want, sizeof want,
             "cannot open run store '%s': No such file or directory", path);
    expect_open_error(path, 1, ZS_EINPUT, want);
    snprintf(want, sizeof want, "cannot open run store '%s': is a folder",
             g_dir);
    expect_open_error(g_dir, 0, ZS_EINPUT, want);
}
END_TEST

/* A store whose pages were overwritten: open or the integrity check says
 * "corrupt run store", exit status 3. */
START_TEST(test_corrupt_pages)
{
    struct zs_err err = {0, ""};
    zs_store *st;
    FILE *f;
    char junk[2048], want[300];
    int rc;

    ck_assert_int_eq(zs_store_open(g_db, &st, &err), 0);
    for (int i = 0; i < 6; i++)
        record_file(st, "simulate", i % 2 ? "a" : "b", SIM72);
    zs_store_close(st); /* the last close checkpoints the WAL into the file */

    memset(junk, 0xA5, sizeof junk);
    f = fopen(g_db, "r+b");
    ck_assert_ptr_nonnull(f);
    /* Page headers of pages 2 and 4 (0xA5 is no b-tree page type). */
    ck_assert_int_eq(fseek(f, 4096, SEEK_SET), 0);
    ck_assert_int_eq(fwrite(junk, 1, sizeof junk, f), sizeof junk);
    ck_assert_int_eq(fseek(f, 3 * 4096, SEEK_SET), 0);
    ck_assert_int_eq(fwrite(junk, 1, sizeof junk, f), sizeof junk);
    fclose(f);

    rc = zs_store_open_existing(g_db, &st, &err);
    if (rc == 0) {
        rc = zs_store_check(st, &err);
        zs_store_close(st);
    }
    ck_assert_int_eq(rc, ZS_EINPUT);
    snprintf(want, sizeof want, "corrupt run store '%s': ", g_db);
    ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "got: %s",
                  err.msg);
}
END_TEST

/* Documents that cannot be recorded, with their exact messages. */
START_TEST(test_bad_documents)
{
    static const struct {
        const char *kind, *scenario, *doc;
        int rc;
        const char *msg;
    } cases[] = {
        {"simulate", "s", "", ZS_EINPUT,
         "empty file 'run document': expected a JSON object"},
        {"simulate", "s", "{\"schema\": \"zsim.simulate/1\",", ZS_EINPUT,
         "malformed JSON in run document:1:30: unexpected end of input"},
        {"simulate", "s", "[]", ZS_EINPUT,
         "invalid top level in run document: must be an object (got array)"},
        {"simulate", "s", "{\"verdict\": \"fits\"}", ZS_EINPUT,
         "missing 'schema' in run document: required, one of zsim.simulate/1, "
         "zsim.plan/1"},
        {"simulate", "s", "{\"schema\": \"zsim.simulate/2\"}", ZS_EINPUT,
         "invalid 'schema' in run document:1:2: must be one of "
         "zsim.simulate/1, zsim.plan/1 (got 'zsim.simulate/2')"},
        {"simulate", "s",
         "{\"schema\": \"zsim.simulate/1\", \"verdict\": \"oom\"}", ZS_EINPUT,
         "invalid 'verdict' in run document:1:31: must be one of fits, "
         "gpu_oom, host_oom (got 'oom')"},
        {"simulate", "s",
         "{\"schema\": \"zsim.simulate/1\",\n \"steady_step\": {\"time_s\": "
         "-1}}",
         ZS_EINPUT,
         "invalid 'steady_step.time_s' in run document:2:18: must be a number "
         "in [0, 1000000000000] (got -1)"},
        {"simulate", "s",
         "{\"schema\": \"zsim.simulate/1\", \"steady_step\": 5}", ZS_EINPUT,
         "invalid 'steady_step' in run document:1:31: must be an object (got "
         "number)"},
        {"simulate", "s",
         "{\"schema\": \"zsim.simulate/1\", \"steady_step\": {\"breakdown_s\": "
         "{\"compute\": \"1s\"}}}",
         ZS_EINPUT,
         "invalid 'steady_step.breakdown_s.compute' in run document:1:63: must "
         "be a number in [0, 1000000000000] (got '1s')"},
        {"simulate", "s",
         "{\"schema\": \"zsim.simulate/1\", \"timeline\": {\"gpu\": [[0, 1, "
         "2], [1, 2]]}}",
         ZS_EINPUT,
         "invalid 'timeline.gpu' in run document:1:44: element 1 must be [t_s, "
         "allocated_bytes, reserved_bytes] with numbers >= 0"},
        {"simulate", "s",
         "{\"schema\": \"zsim.simulate/1\", \"timeline\": {\"host\": 3}}",
         ZS_EINPUT,
         "invalid 'timeline.host' in run document:1:44: must be an array of "
         "[t_s, bytes] (got number)"},
        {"plan", "s", "{\"schema\": \"zsim.plan/1\", \"candidates\": [1]}",
         ZS_EINPUT,
         "invalid 'candidates' in run document:1:27: element 0 must be an "
         "object (got number)"},
        {"plan", "s",
         "{\"schema\": \"zsim.plan/1\", \"candidates\": [{}, {\"steady_step\": "
         "{\"mfu\": 12}}]}",
         ZS_EINPUT,
         "invalid 'candidates[1].steady_step.mfu' in run document: must be a "
         "number in [0, 10] (got 12)"},
        {"plan", "s",
         "{\"schema\": \"zsim.plan/1\", \"candidates\": [{}], \"best\": 1}",
         ZS_EINPUT,
         "invalid 'best' in run document:1:47: must be null or an index in [0, "
         "0]"},
        {"plan", "s", "{\"schema\": \"zsim.plan/1\", \"best\": 0}", ZS_EINPUT,
         "invalid 'best' in run document:1:27: must be null when there are no "
         "candidates"},
        {"plan", "s", "{\"schema\": \"zsim.simulate/1\"}", ZS_EINPUT,
         "run document of kind 'simulate' recorded as 'plan'"},
        {"train", "s", "{\"schema\": \"zsim.simulate/1\"}", ZS_EUSAGE,
         "invalid run kind 'train': must be simulate or plan"},
        {"simulate", "", "{\"schema\": \"zsim.simulate/1\"}", ZS_EUSAGE,
         "invalid scenario name: must be 1 to 200 characters (got 0)"},
        {"simulate", "a\nb", "{\"schema\": \"zsim.simulate/1\"}", ZS_EUSAGE,
         "invalid scenario name: control character 0x0a"},
    };
    struct zs_err err = {0, ""};
    zs_store *st;
    int64_t n;

    ck_assert_int_eq(zs_store_open(g_db, &st, &err), 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct zs_run_meta m = meta(cases[i].kind, cases[i].scenario);
        int rc = zs_store_record(st, &m, cases[i].doc, &err);
        ck_assert_msg(rc == cases[i].rc, "case %zu: rc %d (%s)", i, rc,
                      err.msg);
        ck_assert_str_eq(err.msg, cases[i].msg);
    }
    /* Minimal documents are fine: every figure is optional. */
    {
        struct zs_run_meta m = meta("plan", "empty-plan");
        ck_assert_int_eq(
            zs_store_record(
                st, &m, "{\"schema\": \"zsim.plan/1\", \"best\": null}", &err),
            0);
    }
    ck_assert_int_eq(zs_store_count(st, &n, &err), 0);
    ck_assert_int_eq(n, 1);
    zs_store_close(st);
}
END_TEST

Suite *suite_store(void)
{
    Suite *s = suite_create("store");
    TCase *core = tcase_create("core");
    TCase *limits = tcase_create("limits");
    TCase *bad = tcase_create("bad input");
    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_checked_fixture(limits, setup, teardown);
    tcase_add_checked_fixture(bad, setup, teardown);
    tcase_set_timeout(limits, 120);
    tcase_add_test(core, test_record_and_read);
    tcase_add_test(core, test_latest_history_tags);
    tcase_add_test(core, test_migration_from_v1);
    tcase_add_test(limits, test_concurrent_writers);
    tcase_add_test(limits, test_killed_writer);
    tcase_add_test(limits, test_alloc_failures);
    tcase_add_test(bad, test_bad_files);
    tcase_add_test(bad, test_corrupt_pages);
    tcase_add_test(bad, test_bad_documents);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    suite_add_tcase(s, bad);
    return s;
}
