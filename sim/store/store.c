/*
 * store.c — the SQLite run store; see store.h for the guarantees.
 *
 * Schema (PRAGMA user_version), brought up by g_migrations in order, each
 * migration and the version bump in the same transaction:
 *   1  runs(id, kind, scenario, argv, version, git_commit, unix_time,
 *           doc_schema, verdict, doc) and metrics(run_id, name, value):
 *           every number of the document by dotted name, plus the compared
 *           metrics as "compare.<name>";
 *   2  tags(name, scenario, run_id, unix_time): named baselines.
 * Latest means highest id (AUTOINCREMENT ids only grow), not newest clock.
 *
 * Opening never writes to a file that is not already a zsim store: the
 * application_id and the schema are read first, and a foreign file is
 * refused before the journal mode is touched.
 */
#include "store/store.h"
#include "formats/report_doc.h"
#include "util/alloc.h"
#include "util/strutil.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

struct zs_store {
    sqlite3 *db;
    char path[512];
};

static const char *const g_migrations[ZS_STORE_SCHEMA_VERSION] = {
    /* 1: runs and their figures */
    "CREATE TABLE runs("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " kind TEXT NOT NULL CHECK (kind IN ('simulate', 'plan')),"
    " scenario TEXT NOT NULL,"
    " argv TEXT NOT NULL DEFAULT '',"
    " version TEXT NOT NULL,"
    " git_commit TEXT,"
    " unix_time INTEGER NOT NULL,"
    " doc_schema TEXT NOT NULL,"
    " verdict TEXT NOT NULL,"
    " doc TEXT NOT NULL);"
    "CREATE INDEX runs_by_scenario ON runs(scenario, id);"
    "CREATE TABLE metrics("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " name TEXT NOT NULL,"
    " value REAL NOT NULL,"
    " PRIMARY KEY (run_id, name)) WITHOUT ROWID;",
    /* 2: named baselines */
    "CREATE TABLE tags("
    " name TEXT NOT NULL,"
    " scenario TEXT NOT NULL,"
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " unix_time INTEGER NOT NULL,"
    " PRIMARY KEY (name, scenario)) WITHOUT ROWID;",
};

static void (*g_hook)(void *);
static void *g_hook_arg;

int64_t zs_store_now(void)
{
    const char *e = getenv("SOURCE_DATE_EPOCH");
    if (e && *e) {
        char *end;
        long long v = strtoll(e, &end, 10);
        if (!*end && v >= 0)
            return v;
    }
    return (int64_t)time(NULL);
}

void zs_store_set_test_hook(void (*hook)(void *arg), void *arg)
{
    g_hook = hook;
    g_hook_arg = arg;
}

/* SQLite's allocator routed through zs_malloc (STYLE 17).  SQLite needs the
 * size of an allocation back, so each block carries it in a 16-byte header
 * (16 keeps the 8-byte alignment SQLite requires). */
#define HDR 16
static void *sq_malloc(int n)
{
    char *p = zs_malloc((size_t)n + HDR);
    if (!p)
        return NULL;
    *(size_t *)p = (size_t)n;
    return p + HDR;
}
static void sq_free(void *p)
{
    if (p)
        zs_free((char *)p - HDR);
}
static void *sq_realloc(void *p, int n)
{
    char *q;
    if (!p)
        return sq_malloc(n);
    q = zs_realloc((char *)p - HDR, (size_t)n + HDR);
    if (!q)
        return NULL;
    *(size_t *)q = (size_t)n;
    return q + HDR;
}
static int sq_size(void *p)
{
    return p ? (int)*(size_t *)((char *)p - HDR) : 0;
}
static int sq_roundup(int n)
{
    return (n + 7) & ~7;
}
static int sq_init(void *arg)
{
    return SQLITE_OK;
}
static void sq_shutdown(void *arg) {}

static void sqlite_setup(void)
{
    static int done;
    static const sqlite3_mem_methods mem = {sq_malloc,   sq_free,    sq_realloc,
                                            sq_size,     sq_roundup, sq_init,
                                            sq_shutdown, NULL};
    if (done)
        return;
    zs_alloc_init();
    /* Fails only when SQLite is already initialised (then it keeps its own
     * allocator, which is correct, just not counted). */
    sqlite3_config(SQLITE_CONFIG_MALLOC, &mem);
    done = 1;
}

/* Maps a SQLite failure to a zsim error.  what: "open", "record a run in". */
static int sql_fail(const char *path, sqlite3 *db, int rc, const char *what,
                    struct zs_err *err)
{
    const char *msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    switch (rc & 0xff) {
    case SQLITE_NOMEM:
        return zs_err_set(err, ZS_ENOMEM, "out of memory in run store '%s'",
                          path);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        return zs_err_set(err, ZS_EINPUT, "corrupt run store '%s': %s", path,
                          msg);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return zs_err_set(err, ZS_EIO,
                          "run store '%s' is busy: locked by another process "
                          "for over %d s",
                          path, ZS_STORE_BUSY_TIMEOUT_MS / 1000);
    default:
        return zs_err_set(err, ZS_EIO, "cannot %s run store '%s': %s", what,
                          path, msg);
    }
}

static int exec(zs_store *st, const char *sql, const char *what,
                struct zs_err *err)
{
    int rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : sql_fail(st->path, st->db, rc, what, err);
}

/* Switches the store to WAL.  Changing the journal mode needs an exclusive
 * lock, and SQLite answers SQLITE_BUSY at once when another connection holds
 * any lock, without calling the busy handler: two processes opening a new
 * store together failed here (test_concurrent_writers, 2 runs in 6).  So it
 * retries every 10 ms for up to the busy timeout before it says busy. */
static int exec_wal(zs_store *st, struct zs_err *err)
{
    const struct timespec pause = {0, 10 * 1000 * 1000};
    int rc = SQLITE_OK;
    for (int waited_ms = 0; waited_ms <= ZS_STORE_BUSY_TIMEOUT_MS;
         waited_ms += 10) {
        rc = sqlite3_exec(st->db, "PRAGMA journal_mode = WAL", NULL, NULL,
                          NULL);
        if ((rc & 0xff) != SQLITE_BUSY)
            break;
        nanosleep(&pause, NULL);
    }
    return rc == SQLITE_OK ? 0 : sql_fail(st->path, st->db, rc, "open", err);
}

static int query_int(zs_store *st, const char *sql, int64_t *v,
                     struct zs_err *err)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(s);
        if (rc == SQLITE_ROW) {
            *v = sqlite3_column_int64(s, 0);
            rc = SQLITE_OK;
        } else if (rc == SQLITE_DONE) {
            *v = 0;
            rc = SQLITE_OK;
        }
    }
    sqlite3_finalize(s);
    return rc == SQLITE_OK ? 0 : sql_fail(st->path, st->db, rc, "read", err);
}

static void rollback(zs_store *st)
{
    if (!sqlite3_get_autocommit(st->db))
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

/* Refuses files that are not zsim stores, before anything is written. */
static int check_identity(zs_store *st, int64_t *version, struct zs_err *err)
{
    int64_t app = 0, ntables = 0;
    int rc;
    if ((rc = query_int(st, "PRAGMA application_id", &app, err)) ||
        (rc = query_int(st, "PRAGMA user_version", version, err)) ||
        (rc = query_int(st, "SELECT count(*) FROM sqlite_master", &ntables,
                        err)))
        return rc;
    if (app != ZS_STORE_APP_ID && (app != 0 || ntables > 0 || *version != 0))
        return zs_err_set(err, ZS_EINPUT,
                          "'%s' is not a zsim run store (application_id "
                          "0x%08llx, expected 0x%08x)",
                          st->path, (unsigned long long)(uint32_t)app,
                          ZS_STORE_APP_ID);
    if (*version > ZS_STORE_SCHEMA_VERSION)
        return zs_err_set(err, ZS_EINPUT,
                          "run store '%s' has schema version %lld, newer than "
                          "this zsim supports (%d): use a newer zsim",
                          st->path, (long long)*version,
                          ZS_STORE_SCHEMA_VERSION);
    return 0;
}

static int migrate(zs_store *st, struct zs_err *err)
{
    int64_t version;
    char sql[128];
    int rc;

    if ((rc = exec(st, "BEGIN IMMEDIATE", "open", err)))
        return rc;
    /* Another process may have migrated between our check and the lock. */
    if ((rc = check_identity(st, &version, err)))
        goto fail;
    for (int64_t v = version; v < ZS_STORE_SCHEMA_VERSION; v++)
        if ((rc = exec(st, g_migrations[v], "migrate", err)))
            goto fail;
    snprintf(sql, sizeof sql,
             "PRAGMA application_id = %d; PRAGMA user_version = %d",
             ZS_STORE_APP_ID, ZS_STORE_SCHEMA_VERSION);
    if ((rc = exec(st, sql, "migrate", err)) ||
        (rc = exec(st, "COMMIT", "migrate", err)))
        goto fail;
    return 0;
fail:
    rollback(st);
    return rc;
}

static int open_store(const char *path, int create, zs_store **out,
                      struct zs_err *err)
{
    zs_store *st;
    struct stat sb;
    int64_t version;
    int rc;

    *out = NULL;
    sqlite_setup();
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode))
            return zs_err_set(err, ZS_EINPUT,
                              "cannot open run store '%s': is a folder", path);
    } else if (!create || errno != ENOENT) {
        return zs_err_set(err, ZS_EINPUT, "cannot open run store '%s': %s",
                          path, strerror(errno));
    }
    st = zs_calloc(1, sizeof *st);
    if (!st)
        return zs_err_set(err, ZS_ENOMEM, "out of memory opening '%s'", path);
    zs_strlcpy(st->path, path, sizeof st->path);
    rc = sqlite3_open_v2(
        path, &st->db,
        SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0), NULL);
    if (rc != SQLITE_OK) {
        rc = sql_fail(path, st->db, rc, "open", err);
        goto fail;
    }
    sqlite3_extended_result_codes(st->db, 1);
    sqlite3_busy_timeout(st->db, ZS_STORE_BUSY_TIMEOUT_MS);
    /* The identity check's three reads share one snapshot: as separate
     * autocommit reads they could see another process's creation half-way
     * (application_id read before its commit, tables counted after) and
     * call a zsim store foreign. */
    if ((rc = exec(st, "BEGIN", "open", err)))
        goto fail;
    rc = check_identity(st, &version, err);
    if (rc) {
        rollback(st);
        goto fail;
    }
    if ((rc = exec(st, "COMMIT", "open", err)))
        goto fail;
    /* WAL: readers never block the writer and a killed writer's partial
     * transaction is simply not in the log's committed part.  FULL sync
     * makes each commit durable across power loss too. */
    if ((rc = exec_wal(st, err)) ||
        (rc = exec(st, "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON",
                   "open", err)))
        goto fail;
    if (version < ZS_STORE_SCHEMA_VERSION && (rc = migrate(st, err)))
        goto fail;
    *out = st;
    return 0;
fail:
    zs_store_close(st);
    return rc;
}

int zs_store_open(const char *path, zs_store **out, struct zs_err *err)
{
    return open_store(path, 1, out, err);
}

int zs_store_open_existing(const char *path, zs_store **out, struct zs_err *err)
{
    return open_store(path, 0, out, err);
}

void zs_store_close(zs_store *st)
{
    if (!st)
        return;
    if (st->db)
        sqlite3_close_v2(st->db);
    zs_free(st);
}

const char *zs_store_path(const zs_store *st)
{
    return st->path;
}

static int bind_text(sqlite3_stmt *s, int i, const char *v)
{
    if (!v)
        return sqlite3_bind_null(s, i);
    return sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
}

struct fig_ctx {
    sqlite3_stmt *ins;
    int64_t run_id;
    int rc; /* SQLite code of the first failure */
};

static int put_figure(const char *name, double value, void *arg)
{
    struct fig_ctx *c = arg;
    int rc;
    sqlite3_reset(c->ins);
    /* Binding a transient text copies it and can fail for memory. */
    if ((rc = sqlite3_bind_int64(c->ins, 1, c->run_id)) != SQLITE_OK ||
        (rc = sqlite3_bind_text(c->ins, 2, name, -1, SQLITE_TRANSIENT)) !=
            SQLITE_OK ||
        (rc = sqlite3_bind_double(c->ins, 3, value)) != SQLITE_OK) {
        c->rc = rc;
        return ZS_EIO;
    }
    rc = sqlite3_step(c->ins);
    if (rc != SQLITE_DONE) {
        c->rc = rc;
        return ZS_EIO;
    }
    return 0;
}

static int check_meta(const struct zs_run_meta *meta, const struct zs_rdoc *doc,
                      struct zs_err *err)
{
    const char *want = doc->kind == ZS_RDOC_PLAN ? "plan" : "simulate";
    size_t n;
    if (!meta->kind ||
        (strcmp(meta->kind, "simulate") && strcmp(meta->kind, "plan")))
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid run kind '%s': must be simulate or plan",
                          meta->kind ? meta->kind : "(null)");
    if (strcmp(meta->kind, want) != 0)
        return zs_err_set(err, ZS_EINPUT,
                          "run document of kind '%s' recorded as '%s'", want,
                          meta->kind);
    n = meta->scenario ? strlen(meta->scenario) : 0;
    if (n == 0 || n > 200)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid scenario name: must be 1 to 200 characters "
                          "(got %zu)",
                          n);
    for (const char *p = meta->scenario; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return zs_err_set(err, ZS_EUSAGE,
                              "invalid scenario name: control character 0x%02x",
                              (unsigned char)*p);
    return 0;
}

int zs_store_record_id(zs_store *st, const struct zs_run_meta *meta,
                       const char *json_doc, int64_t *run_id,
                       struct zs_err *err)
{
    static const char ins_run[] =
        "INSERT INTO runs(kind, scenario, argv, version, git_commit, "
        "unix_time, doc_schema, verdict, doc) VALUES (?,?,?,?,?,?,?,?,?)";
    static const char ins_fig[] =
        "INSERT OR REPLACE INTO metrics(run_id, name, value) VALUES (?,?,?)";
    struct zs_rdoc doc;
    sqlite3_stmt *s = NULL;
    struct fig_ctx fc = {NULL, 0, SQLITE_OK};
    size_t len = json_doc ? strlen(json_doc) : 0;
    int rc;

    rc =
        zs_rdoc_parse("run document", json_doc ? json_doc : "", len, &doc, err);
    if (rc)
        return rc;
    if ((rc = check_meta(meta, &doc, err)))
        goto out;
    if ((rc = exec(st, "BEGIN IMMEDIATE", "record a run in", err)))
        goto out;
    rc = sqlite3_prepare_v2(st->db, ins_run, -1, &s, NULL);
    if (rc == SQLITE_OK) {
        bind_text(s, 1, meta->kind);
        bind_text(s, 2, meta->scenario);
        bind_text(s, 3, meta->argv_joined ? meta->argv_joined : "");
        bind_text(s, 4, meta->version ? meta->version : ZS_VERSION);
        bind_text(s, 5, meta->git_commit);
        sqlite3_bind_int64(s, 6, meta->unix_time);
        bind_text(s, 7,
                  doc.kind == ZS_RDOC_PLAN ? "zsim.plan/1" : "zsim.simulate/1");
        bind_text(s, 8, zs_verdict_names[doc.verdict]);
        sqlite3_bind_text(s, 9, json_doc, (int)len, SQLITE_STATIC);
        rc = sqlite3_step(s);
        rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
    }
    sqlite3_finalize(s);
    if (rc == SQLITE_OK) {
        fc.run_id = sqlite3_last_insert_rowid(st->db);
        rc = sqlite3_prepare_v2(st->db, ins_fig, -1, &fc.ins, NULL);
    }
    if (rc != SQLITE_OK) {
        rc = sql_fail(st->path, st->db, rc, "record a run in", err);
        goto fail;
    }
    rc = zs_rdoc_figures(json_doc, len, put_figure, &fc, err);
    for (int m = 0; rc == 0 && m < ZS_M_COUNT; m++) {
        char name[64];
        if (doc.metric[m] != doc.metric[m]) /* NaN: unknown */
            continue;
        snprintf(name, sizeof name, "compare.%s", zs_metric_infos[m].name);
        rc = put_figure(name, doc.metric[m], &fc);
    }
    if (rc) {
        if (fc.rc != SQLITE_OK)
            rc = sql_fail(st->path, st->db, fc.rc, "record a run in", err);
        goto fail;
    }
    sqlite3_finalize(fc.ins);
    fc.ins = NULL;
    if (g_hook)
        g_hook(g_hook_arg);
    if ((rc = exec(st, "COMMIT", "record a run in", err)))
        goto fail;
    if (run_id)
        *run_id = fc.run_id;
    goto out;
fail:
    sqlite3_finalize(fc.ins);
    rollback(st);
out:
    zs_rdoc_release(&doc);
    return rc;
}

int zs_store_record(zs_store *st, const struct zs_run_meta *meta,
                    const char *json_doc, struct zs_err *err)
{
    return zs_store_record_id(st, meta, json_doc, NULL, err);
}

void zs_run_list_release(struct zs_run_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        struct zs_run *r = &l->runs[i];
        zs_free(r->scenario);
        zs_free(r->argv_joined);
        zs_free(r->version);
        zs_free(r->git_commit);
        zs_free(r->doc);
    }
    zs_free(l->runs);
    l->runs = NULL;
    l->n = 0;
}

static char *col_dup(sqlite3_stmt *s, int i, size_t *len)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    size_t n = t ? (size_t)sqlite3_column_bytes(s, i) : 0;
    char *d = zs_malloc(n + 1);
    if (!d)
        return NULL;
    if (n)
        memcpy(d, t, n);
    d[n] = '\0';
    if (len)
        *len = n;
    return d;
}

#define RUN_COLS                                                               \
    "r.id, r.kind, r.verdict, r.scenario, r.argv, r.version, "                 \
    "r.git_commit, r.unix_time, r.doc"

/* Runs the prepared statement s (selecting RUN_COLS) into out. */
static int fill_list(zs_store *st, sqlite3_stmt *s, struct zs_run_list *out,
                     struct zs_err *err)
{
    size_t cap = 0;
    int rc;
    out->runs = NULL;
    out->n = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct zs_run *r;
        const unsigned char *t;
        if (zs_grow((void **)&out->runs, &cap, out->n + 1, sizeof *out->runs))
            goto nomem;
        r = &out->runs[out->n];
        memset(r, 0, sizeof *r);
        out->n++;
        r->id = sqlite3_column_int64(s, 0);
        t = sqlite3_column_text(s, 1);
        zs_strlcpy(r->kind, t ? (const char *)t : "", sizeof r->kind);
        t = sqlite3_column_text(s, 2);
        zs_strlcpy(r->verdict, t ? (const char *)t : "", sizeof r->verdict);
        r->unix_time = sqlite3_column_int64(s, 7);
        if (!(r->scenario = col_dup(s, 3, NULL)) ||
            !(r->argv_joined = col_dup(s, 4, NULL)) ||
            !(r->version = col_dup(s, 5, NULL)) ||
            !(r->git_commit = col_dup(s, 6, NULL)) ||
            !(r->doc = col_dup(s, 8, &r->doc_len)))
            goto nomem;
    }
    if (rc != SQLITE_DONE) {
        zs_run_list_release(out);
        return sql_fail(st->path, st->db, rc, "read", err);
    }
    return 0;
nomem:
    zs_run_list_release(out);
    return zs_err_set(err, ZS_ENOMEM, "out of memory reading run store '%s'",
                      st->path);
}

static int select_runs(zs_store *st, const char *sql, const char *arg,
                       struct zs_run_list *out, struct zs_err *err)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
    out->runs = NULL;
    out->n = 0;
    if (rc != SQLITE_OK) {
        rc = sql_fail(st->path, st->db, rc, "read", err);
        sqlite3_finalize(s);
        return rc;
    }
    if (arg)
        bind_text(s, 1, arg);
    rc = fill_list(st, s, out, err);
    sqlite3_finalize(s);
    return rc;
}

int zs_store_latest(zs_store *st, struct zs_run_list *out, struct zs_err *err)
{
    return select_runs(st,
                       "SELECT " RUN_COLS " FROM runs r WHERE r.id IN "
                       "(SELECT max(id) FROM runs GROUP BY scenario) "
                       "ORDER BY r.scenario",
                       NULL, out, err);
}

int zs_store_history(zs_store *st, const char *scenario,
                     struct zs_run_list *out, struct zs_err *err)
{
    return select_runs(st,
                       "SELECT " RUN_COLS " FROM runs r WHERE r.scenario = ? "
                       "ORDER BY r.id",
                       scenario, out, err);
}

static int check_tag_name(const char *tag, struct zs_err *err)
{
    size_t n = strlen(tag);
    int ok = n >= 1 && n <= 64;
    for (const char *p = tag; ok && *p; p++)
        ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
             (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-';
    if (!ok)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid tag '%s': must be 1 to 64 of letters, "
                          "digits, '.', '_' and '-'",
                          tag);
    return 0;
}

/* Runs one statement of zs_store_tag that returns no rows: tag bound to ?1
 * and, where the statement has a ?2, unix_time to it.  Returns an SQLite
 * code (SQLITE_OK when done). */
static int run_tag_sql(zs_store *st, const char *sql, const char *tag,
                       int64_t unix_time)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
    if (rc == SQLITE_OK) {
        bind_text(s, 1, tag);
        if (sqlite3_bind_parameter_count(s) > 1)
            sqlite3_bind_int64(s, 2, unix_time);
        rc = sqlite3_step(s);
        rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
    }
    sqlite3_finalize(s);
    return rc;
}

int zs_store_tag(zs_store *st, const char *tag, int64_t unix_time,
                 size_t *ntagged, struct zs_err *err)
{
    int rc;

    *ntagged = 0;
    if ((rc = check_tag_name(tag, err)))
        return rc;
    if ((rc = exec(st, "BEGIN IMMEDIATE", "tag runs in", err)))
        return rc;
    rc = run_tag_sql(st, "DELETE FROM tags WHERE name = ?", tag, 0);
    if (rc == SQLITE_OK) {
        rc = run_tag_sql(st,
                         "INSERT INTO tags(name, scenario, run_id, unix_time) "
                         "SELECT ?, scenario, max(id), ? FROM runs "
                         "GROUP BY scenario",
                         tag, unix_time);
        *ntagged = (size_t)sqlite3_changes(st->db);
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        rc = sql_fail(st->path, st->db, rc, "tag runs in", err);
        rollback(st);
        *ntagged = 0;
        return rc;
    }
    return 0;
}

int zs_store_tagged(zs_store *st, const char *tag, int *found,
                    struct zs_run_list *out, struct zs_err *err)
{
    int rc = select_runs(st,
                         "SELECT " RUN_COLS " FROM tags t JOIN runs r ON "
                         "r.id = t.run_id WHERE t.name = ? ORDER BY r.scenario",
                         tag, out, err);
    *found = rc == 0 && out->n > 0;
    return rc;
}

int zs_store_tag_names(zs_store *st, char *buf, size_t cap, struct zs_err *err)
{
    sqlite3_stmt *s = NULL;
    size_t n = 0;
    int rc = sqlite3_prepare_v2(
        st->db, "SELECT DISTINCT name FROM tags ORDER BY name", -1, &s, NULL);
    if (cap)
        buf[0] = '\0';
    while (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(s, 0);
        int w = snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", t ? t : "");
        if (w < 0 || (size_t)w >= cap - n) {
            rc = SQLITE_DONE; /* full: the list is only for a message */
            break;
        }
        n += (size_t)w;
        rc = SQLITE_OK;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE && rc != SQLITE_OK)
        return sql_fail(st->path, st->db, rc, "read", err);
    return 0;
}

int zs_store_count(zs_store *st, int64_t *nruns, struct zs_err *err)
{
    return query_int(st, "SELECT count(*) FROM runs", nruns, err);
}

int zs_store_figure(zs_store *st, int64_t run_id, const char *name,
                    double *value, int *found, struct zs_err *err)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db,
                                "SELECT value FROM metrics WHERE run_id = ? "
                                "AND name = ?",
                                -1, &s, NULL);
    *found = 0;
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(s, 1, run_id);
        bind_text(s, 2, name);
        rc = sqlite3_step(s);
        if (rc == SQLITE_ROW) {
            *value = sqlite3_column_double(s, 0);
            *found = 1;
            rc = SQLITE_DONE;
        }
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : sql_fail(st->path, st->db, rc, "read", err);
}

int zs_store_check(zs_store *st, struct zs_err *err)
{
    sqlite3_stmt *s = NULL;
    char first[200] = "";
    int rc =
        sqlite3_prepare_v2(st->db, "PRAGMA integrity_check(1)", -1, &s, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(s, 0);
        zs_strlcpy(first, t ? t : "", sizeof first);
        rc = SQLITE_DONE;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return sql_fail(st->path, st->db, rc, "check", err);
    if (strcmp(first, "ok") != 0)
        return zs_err_set(err, ZS_EINPUT, "corrupt run store '%s': %s",
                          st->path, first);
    return 0;
}
