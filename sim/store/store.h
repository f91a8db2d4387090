/*
 * store.h — the SQLite run store behind `--db FILE` and `zsim report`.
 *
 * A run record is the JSON document that `zsim simulate --json` or
 * `zsim plan --json` prints, plus metadata (struct zs_run_meta).  The store
 * keeps the document verbatim (inputs and resolved config are inside it),
 * every numeric figure of it in a `metrics` table, and the five compared
 * metrics and the verdict (report_doc.h) for regression reports.
 *
 * Guarantees: WAL journal, synchronous=FULL, a 10 s busy timeout, and each
 * run inserted in one BEGIN IMMEDIATE transaction, so concurrent writers
 * (several `zsim simulate --db` at once) lose nothing and a writer killed at
 * any point leaves every committed run readable.  The schema version is
 * PRAGMA user_version, brought up to date by ordered migrations on open;
 * PRAGMA application_id = ZS_STORE_APP_ID tells a zsim store from any other
 * SQLite file.  Errors: a foreign SQLite file, a non-SQLite or corrupted
 * file, or a store from a newer zsim are ZS_EINPUT (exit 3).
 *
 * SQLite never leaves sim/store/ (DESIGN §2): callers see only these types.
 * SQLite's memory goes through zs_malloc, so allocation-failure tests cover
 * it too.
 */
#ifndef ZS_STORE_H
#define ZS_STORE_H

#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

#define ZS_STORE_APP_ID 0x7A73696D /* "zsim" in ASCII */
#define ZS_STORE_SCHEMA_VERSION 2
#define ZS_STORE_BUSY_TIMEOUT_MS 10000

typedef struct zs_store zs_store;

struct zs_run_meta {
    const char *kind;        /* "simulate" | "plan" (must match the document) */
    const char *scenario;    /* e.g. the scenario file's stem; 1..200 bytes */
    const char *argv_joined; /* the command line; NULL = "" */
    const char *version;     /* zsim version; NULL = ZS_VERSION */
    const char *git_commit;  /* NULL when unknown */
    int64_t unix_time;       /* seconds since the epoch */
};

/* Opens path, creating the store when the file is missing or empty and
 * migrating an older one.  *out is owned by the caller (zs_store_close). */
int zs_store_open(const char *path, zs_store **out, struct zs_err *err);
/* Same, but a missing file is an error (ZS_EINPUT "cannot open ..."): for
 * readers such as `zsim report`. */
int zs_store_open_existing(const char *path, zs_store **out,
                           struct zs_err *err);
void zs_store_close(zs_store *st); /* NULL is fine */
const char *zs_store_path(const zs_store *st);

/* Records one run: checks json_doc (report_doc.h; ZS_EINPUT with its
 * location when malformed, or when meta->kind disagrees with its schema),
 * then inserts it with its figures in one transaction.  *run_id (may be
 * NULL) receives the new run's id. */
int zs_store_record(zs_store *st, const struct zs_run_meta *meta,
                    const char *json_doc, struct zs_err *err);
int zs_store_record_id(zs_store *st, const struct zs_run_meta *meta,
                       const char *json_doc, int64_t *run_id,
                       struct zs_err *err);

/* One stored run; every pointer is owned by the list it came in. */
struct zs_run {
    int64_t id;
    char kind[16];
    char verdict[16];
    char *scenario, *argv_joined, *version,
        *git_commit; /* git_commit: "" when unknown */
    char *doc;       /* the JSON document */
    size_t doc_len;
    int64_t unix_time;
};

struct zs_run_list {
    struct zs_run *runs; /* owned */
    size_t n;
};

/* The latest run (highest id) of each scenario, ordered by scenario name. */
int zs_store_latest(zs_store *st, struct zs_run_list *out, struct zs_err *err);
/* Every run of one scenario, oldest first (for trends). */
int zs_store_history(zs_store *st, const char *scenario,
                     struct zs_run_list *out, struct zs_err *err);
void zs_run_list_release(struct zs_run_list *l);

/* Tags: a named set of runs (one per scenario) to compare against later.
 * zs_store_tag marks the latest run of each scenario with tag (replacing an
 * earlier tag of that name) and returns how many were marked.  Tag names are
 * 1..64 of [A-Za-z0-9._-] (ZS_EUSAGE otherwise). */
int zs_store_tag(zs_store *st, const char *tag, int64_t unix_time,
                 size_t *ntagged, struct zs_err *err);
/* *found = 0 when no such tag; else out holds its runs by scenario. */
int zs_store_tagged(zs_store *st, const char *tag, int *found,
                    struct zs_run_list *out, struct zs_err *err);
/* Comma-separated tag names into buf ("" when none). */
int zs_store_tag_names(zs_store *st, char *buf, size_t cap, struct zs_err *err);

int zs_store_count(zs_store *st, int64_t *nruns, struct zs_err *err);
/* Value of a stored figure of a run (*found = 0 when absent). */
int zs_store_figure(zs_store *st, int64_t run_id, const char *name,
                    double *value, int *found, struct zs_err *err);
/* PRAGMA integrity_check; ZS_EINPUT "corrupt run store ..." when not ok. */
int zs_store_check(zs_store *st, struct zs_err *err);

/* The time to record: $SOURCE_DATE_EPOCH when set to a number (reproducible
 * builds' convention, used by tests), else the clock. */
int64_t zs_store_now(void);

/* Test hook: called inside zs_store_record's transaction after the inserts
 * and before COMMIT (to kill a writer there).  NULL to remove. */
void zs_store_set_test_hook(void (*hook)(void *arg), void *arg);

#endif
