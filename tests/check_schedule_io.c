/*
 * check_schedule_io.c — the schedule file format (zsim.schedule/1): reading
 * a hand-written schedule, the writer's round trip, building through the API,
 * step times, every bad input with its exact message, limits, and the reader
 * under an allocation-failure loop.
 */
#include "formats/schedule_io.h"
#include "util/alloc.h"
#include "util/units.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GOOD "tests/data/good/sched-tiny.json"

START_TEST(test_read_good)
{
    struct zs_schedule s;
    struct zs_err err = {0, ""};
    const struct zs_sched_task *t;
    int64_t ends[4];

    ck_assert_msg(zs_schedule_read(GOOD, &s, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(s.header.model, "llama-tiny");
    ck_assert_str_eq(s.header.gpu, "H100-SXM-80GB");
    ck_assert_str_eq(s.header.framework, "fsdp2");
    ck_assert_int_eq(s.header.world, 1);
    ck_assert_int_eq(s.header.steps, 1);
    ck_assert_int_eq(s.pred.peak_device_reserved_bytes, 4 * ZS_MiB);
    ck_assert_int_eq(s.pred.step_time_ns, 1000000);
    ck_assert_int_eq(s.nqueues, 3);
    ck_assert(s.queues[2].host && !s.queues[0].host);
    ck_assert_int_eq(s.ntasks, 14);

    t = &s.tasks[2]; /* h2d with both buffers and deps [0, 1] */
    ck_assert_int_eq(t->kind, ZS_SK_H2D);
    ck_assert_int_eq(t->queue, 1);
    ck_assert_int_eq(t->ndeps, 2);
    ck_assert_int_eq(s.deps[t->dep_off], 0);
    ck_assert_int_eq(s.deps[t->dep_off + 1], 1);
    ck_assert_int_eq(t->host_buf, 0);
    ck_assert_int_eq(t->dev_buf, 1);
    ck_assert(t->pinned);
    ck_assert_int_eq(t->bytes, 2 * ZS_MiB);

    t = &s.tasks[4]; /* gemm 512 x 1024 x 512, twice: 2*512*1024*512*2 FLOPs */
    ck_assert_int_eq(t->kind, ZS_SK_GEMM);
    ck_assert_int_eq(t->m, 512);
    ck_assert_int_eq(t->n, 1024);
    ck_assert_int_eq(t->k, 512);
    ck_assert_int_eq(t->count, 2);
    ck_assert(zs_sched_gemm_flops(t) == 1073741824.0);
    ck_assert_str_eq(t->owner, "layers.0");

    t = &s.tasks[3];
    ck_assert_int_eq(t->coll, ZS_SC_ALLGATHER);
    ck_assert_int_eq(t->local, ZS_SL_COPY);
    ck_assert_int_eq(t->ranks, 1);

    t = &s.tasks[11];
    ck_assert_int_eq(t->kind, ZS_SK_CPU_ADAM);
    ck_assert_int_eq(t->elements, 524288);
    ck_assert_int_eq(t->threads, 4);
    ck_assert_int_eq(t->adam_impl, ZS_SA_TORCH);
    ck_assert_int_eq(t->adam_bufs[0], 0);
    ck_assert_int_eq(t->adam_bufs[3], 9);

    ck_assert_int_eq(s.tasks[8].buffer, 1);
    ck_assert(!s.tasks[8].empty_cache);
    ck_assert(s.tasks[12].empty_cache); /* torch.cuda.empty_cache() after */
    ck_assert_int_eq(s.tasks[5].buffer, -1);
    ck_assert_int_eq(s.tasks[5].host_buf, -1);
    ck_assert_str_eq(s.tasks[5].owner, "");

    ck_assert_int_eq(zs_schedule_step_ends(&s, NULL, ends, 4), 1);
    ck_assert_int_eq(ends[0], 1000000);
    ck_assert_int_eq(zs_schedule_check(&s, &err), 0);
    zs_schedule_release(&s);
}
END_TEST

/* Writing what was read gives a file that reads back to the same schedule,
 * and writing that again gives the same bytes. */
START_TEST(test_round_trip)
{
    struct zs_schedule a, b;
    struct zs_err err = {0, ""};
    char path[] = "/tmp/zsim-sched-XXXXXX";
    char *t1 = NULL, *t2 = NULL;
    size_t n1 = 0, n2 = 0;
    FILE *f;
    int fd = mkstemp(path);

    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(zs_schedule_read(GOOD, &a, &err), 0);
    ck_assert_msg(zs_schedule_write(&a, path, &err) == 0, "%s", err.msg);
    ck_assert_msg(zs_schedule_read(path, &b, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(a.ntasks, b.ntasks);
    ck_assert_int_eq((long)a.ndeps, (long)b.ndeps);
    ck_assert_int_eq(
        memcmp(a.tasks, b.tasks, sizeof *a.tasks * (size_t)a.ntasks), 0);
    ck_assert_int_eq(memcmp(a.deps, b.deps, sizeof *a.deps * a.ndeps), 0);
    ck_assert_int_eq(memcmp(&a.header, &b.header, sizeof a.header), 0);
    ck_assert_int_eq(memcmp(&a.pred, &b.pred, sizeof a.pred), 0);

    f = open_memstream(&t1, &n1);
    ck_assert_int_eq(zs_schedule_write_stream(&a, f, &err), 0);
    fclose(f);
    f = open_memstream(&t2, &n2);
    ck_assert_int_eq(zs_schedule_write_stream(&b, f, &err), 0);
    fclose(f);
    ck_assert_int_eq((long)n1, (long)n2);
    ck_assert_int_eq(memcmp(t1, t2, n1), 0);
    /* One task per line: 14 tasks + 3 queues + 9 framing lines. */
    {
        int lines = 0;
        for (size_t i = 0; i < n1; i++)
            lines += t1[i] == '\n';
        ck_assert_int_eq(lines, 14 + 3 + 9);
    }
    free(t1);
    free(t2);
    zs_schedule_release(&a);
    zs_schedule_release(&b);
    unlink(path);
}
END_TEST

/* What the exporter will do: build through the API, check, write, read. */
START_TEST(test_build_api)
{
    struct zs_schedule s, r;
    struct zs_sched_task t;
    struct zs_err err = {0, ""};
    char path[] = "/tmp/zsim-sched-XXXXXX";
    int fd = mkstemp(path), qs, qh;
    int32_t a, h, g, deps[2];

    ck_assert_int_ge(fd, 0);
    close(fd);
    zs_schedule_init(&s);
    strcpy(s.header.zsim_version, "0.1.0");
    strcpy(s.header.model, "m");
    strcpy(s.header.hardware, "1xH100");
    s.header.world = 1;
    s.header.steps = 1;
    qs = zs_schedule_add_queue(&s, "compute", false, &err);
    qh = zs_schedule_add_queue(&s, "main", true, &err);
    ck_assert_int_eq(qs, 0);
    ck_assert_int_eq(qh, 1);
    ck_assert_int_eq(zs_schedule_add_queue(&s, "main", true, &err),
                     ZS_ERUNTIME);
    ck_assert_str_eq(err.msg, "duplicate queue 'main'");

    zs_sched_task_init(&t, ZS_SK_ALLOC, qs, "buf");
    t.pool = ZS_SP_DEVICE;
    t.bytes = 1 << 20;
    a = zs_schedule_add(&s, &t, NULL, 0, &err);
    zs_sched_task_init(&t, ZS_SK_ALLOC, qh, "host \"buf\"\n");
    t.pool = ZS_SP_HOST;
    t.pinned = true;
    t.bytes = 1 << 20;
    h = zs_schedule_add(&s, &t, NULL, 0, &err);
    zs_sched_task_init(&t, ZS_SK_H2D, qs, "copy");
    t.bytes = 1 << 20;
    t.pinned = true;
    t.host_buf = h;
    t.dev_buf = a;
    t.pred_start_ns = 0;
    t.pred_end_ns = 20000;
    deps[0] = a;
    deps[1] = h;
    g = zs_schedule_add(&s, &t, deps, 2, &err);
    ck_assert_int_eq(g, 2);
    zs_sched_task_init(&t, ZS_SK_MARK, qh, "end");
    t.step_end = 1;
    t.pred_start_ns = t.pred_end_ns = 20000;
    ck_assert_int_eq(zs_schedule_add(&s, &t, &g, 1, &err), 3);
    ck_assert_msg(zs_schedule_check(&s, &err) == 0, "%s", err.msg);
    ck_assert_msg(zs_schedule_write(&s, path, &err) == 0, "%s", err.msg);
    ck_assert_msg(zs_schedule_read(path, &r, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(r.tasks[1].name, "host \"buf\"\n");
    ck_assert_int_eq(r.tasks[2].host_buf, 1);
    zs_schedule_release(&r);

    /* An invalid schedule is refused by the writer (an exporter bug). */
    s.tasks[2].bytes = 4 << 20;
    ck_assert_int_eq(zs_schedule_write(&s, path, &err), ZS_ERUNTIME);
    ck_assert_str_eq(err.msg,
                     "internal: refusing to write an invalid schedule: "
                     "invalid 'tasks[2].host_buf': buffer of task 1 holds "
                     "1048576 bytes, fewer than the 4194304 needed");
    s.tasks[2].bytes = 1 << 20;
    s.tasks[0].pinned = true;
    ck_assert_int_eq(zs_schedule_check(&s, &err), ZS_EINPUT);
    ck_assert_str_eq(err.msg,
                     "invalid 'tasks[0].pinned': only host buffers can be "
                     "pinned (got true for a device buffer)");
    s.tasks[0].pinned = false;
    s.header.model[0] = '\0';
    ck_assert_int_eq(zs_schedule_check(&s, &err), ZS_EINPUT);
    ck_assert_str_eq(err.msg,
                     "invalid 'header.model': must be a string of 1 to 63 "
                     "characters (got '')");
    zs_schedule_release(&s);
    unlink(path);
}
END_TEST

START_TEST(test_steady_step)
{
    const int64_t ends[] = {400, 650, 900, 1150};
    /* Steps 2..4 take (1150 - 400) / 3 = 250 ns; one step is its end. */
    ck_assert_int_eq(zs_sched_steady_step_ns(ends, 4), 250);
    ck_assert_int_eq(zs_sched_steady_step_ns(ends, 1), 400);
    ck_assert_int_eq(zs_sched_steady_step_ns(ends, 0), -1);
    ck_assert_str_eq(zs_sched_kind_name(ZS_SK_CPU_ADAM), "cpu_adam");
    ck_assert_str_eq(zs_sched_coll_name(ZS_SC_REDUCESCATTER), "reducescatter");
    ck_assert(zs_sched_kind_on_gpu(ZS_SK_COLLECTIVE));
    ck_assert(!zs_sched_kind_on_gpu(ZS_SK_ALLOC));
}
END_TEST

/* Every bad file with its exact message (STYLE 24). */
START_TEST(test_bad_files)
{
    static const struct {
        const char *path, *msg;
    } cases[] = {
        {"tests/data/bad/sched-adam-buf-small.json",
         "invalid 'tasks[1].bufs' in "
         "tests/data/bad/sched-adam-buf-small.json:7:97: buffer of task 0 "
         "holds 4096 bytes, fewer than the 8192 needed"},
        {"tests/data/bad/sched-adam-bufs.json",
         "invalid 'tasks[1].bufs' in tests/data/bad/sched-adam-bufs.json:7:95: "
         "must list exactly 4 task ids (got 3)"},
        {"tests/data/bad/sched-adam-on-stream.json",
         "invalid 'tasks[1].queue' in "
         "tests/data/bad/sched-adam-on-stream.json:7:35: a cpu_adam task must "
         "run on a host queue ('s0' is a GPU stream)"},
        {"tests/data/bad/sched-collective-op.json",
         "invalid 'tasks[1].op' in "
         "tests/data/bad/sched-collective-op.json:7:78: must be one of "
         "allgather, reducescatter, allreduce, alltoall, broadcast, reduce "
         "(got 'allgathr')"},
        {"tests/data/bad/sched-copy-pinned.json",
         "invalid 'tasks[2].pinned' in "
         "tests/data/bad/sched-copy-pinned.json:8:5: must match host buffer "
         "task 1 (pinned: true) (got false)"},
        {"tests/data/bad/sched-dep-forward.json",
         "invalid 'tasks[1].deps' in "
         "tests/data/bad/sched-dep-forward.json:7:46: must name earlier tasks, "
         "in [0, 0] (got 5)"},
        {"tests/data/bad/sched-dep-twice.json",
         "invalid 'tasks[1].deps' in tests/data/bad/sched-dep-twice.json:7:46: "
         "lists task 0 twice"},
        {"tests/data/bad/sched-deps-type.json",
         "invalid 'tasks[1].deps' in tests/data/bad/sched-deps-type.json:7:46: "
         "must be an array of task ids (integers) (got string)"},
        {"tests/data/bad/sched-free-nonalloc.json",
         "invalid 'tasks[2].buffer' in "
         "tests/data/bad/sched-free-nonalloc.json:8:71: must name an alloc "
         "task (task 1 is a host_wait)"},
        {"tests/data/bad/sched-free-empty-cache-host.json",
         "invalid 'tasks[1].empty_cache' in "
         "tests/data/bad/sched-free-empty-cache-host.json:7:85: only after "
         "the free of a device buffer (task 0 is a host alloc)"},
        {"tests/data/bad/sched-free-twice.json",
         "invalid 'tasks[2].buffer' in "
         "tests/data/bad/sched-free-twice.json:8:72: buffer of task 0 is "
         "already freed by task 1"},
        {"tests/data/bad/sched-gemm-dim.json",
         "invalid 'tasks[1].m' in tests/data/bad/sched-gemm-dim.json:7:71: "
         "must be an integer in [1, 67108864] (got 0)"},
        {"tests/data/bad/sched-gpu-on-host.json",
         "invalid 'tasks[1].queue' in "
         "tests/data/bad/sched-gpu-on-host.json:7:31: a gemm task must run on "
         "a GPU stream ('cpu' is a host queue)"},
        {"tests/data/bad/sched-hostbuf-pool.json",
         "invalid 'tasks[2].host_buf' in "
         "tests/data/bad/sched-hostbuf-pool.json:8:100: must name a host "
         "buffer (task 0 is a device buffer)"},
        {"tests/data/bad/sched-hostbuf-small.json",
         "invalid 'tasks[2].host_buf' in "
         "tests/data/bad/sched-hostbuf-small.json:8:105: buffer of task 1 "
         "holds 4096 bytes, fewer than the 8192 needed"},
        {"tests/data/bad/sched-id.json",
         "invalid 'tasks[1].id' in tests/data/bad/sched-id.json:7:6: must be 1 "
         "(tasks are numbered in order from 0) (got 2)"},
        {"tests/data/bad/sched-kind.json",
         "invalid 'tasks[1].kind' in tests/data/bad/sched-kind.json:7:15: must "
         "be one of alloc, free, h2d, d2h, gemm, elementwise, collective, "
         "cpu_adam, host_wait, mark (got 'gem')"},
        {"tests/data/bad/sched-missing-tasks.json",
         "missing 'tasks' in tests/data/bad/sched-missing-tasks.json: "
         "required"},
        {"tests/data/bad/sched-pinned-device.json",
         "invalid 'tasks[0].pinned' in "
         "tests/data/bad/sched-pinned-device.json:6:105: only host buffers can "
         "be pinned (got true for a device buffer)"},
        {"tests/data/bad/sched-pred.json",
         "invalid 'tasks[1].pred_end_ns' in "
         "tests/data/bad/sched-pred.json:7:113: must be >= 'pred_start_ns' "
         "(500) (got 400)"},
        {"tests/data/bad/sched-queue-dup.json",
         "invalid 'queues[1].name' in "
         "tests/data/bad/sched-queue-dup.json:4:31: must be unique ('s0' is "
         "listed twice)"},
        {"tests/data/bad/sched-queue.json",
         "invalid 'tasks[1].queue' in tests/data/bad/sched-queue.json:7:31: no "
         "queue named 's1': did you mean 's0'?"},
        {"tests/data/bad/sched-rank.json",
         "invalid 'header.rank' in tests/data/bad/sched-rank.json:3:75: must "
         "be in [0, 0] ('world' is 1) (got 1)"},
        {"tests/data/bad/sched-schema.json",
         "invalid 'schema' in tests/data/bad/sched-schema.json:2:3: must be "
         "\"zsim.schedule/1\" (got 'zsim.schedule/2')"},
        {"tests/data/bad/sched-step.json",
         "invalid 'tasks[1].step_end' in tests/data/bad/sched-step.json:7:74: "
         "must be 1 (steps end in order from 1) (got 2)"},
        {"tests/data/bad/sched-steps-count.json",
         "invalid 'tasks' in tests/data/bad/sched-steps-count.json:5:3: marks "
         "end 1 step, but 'header.steps' is 2"},
        {"tests/data/bad/sched-truncated.json",
         "malformed JSON in tests/data/bad/sched-truncated.json:6:90: "
         "unexpected end of input"},
        {"tests/data/bad/sched-unknown-key.json",
         "unknown key 'tasks[1].byts' in "
         "tests/data/bad/sched-unknown-key.json:7:79: did you mean 'bytes'?"},
        {"tests/data/bad/sched-does-not-exist.json",
         "cannot open 'tests/data/bad/sched-does-not-exist.json': No such file "
         "or directory"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct zs_schedule s;
        struct zs_err err = {0, ""};
        int rc = zs_schedule_read(cases[i].path, &s, &err);
        ck_assert_msg(rc == ZS_EINPUT, "%s: rc %d", cases[i].path, rc);
        ck_assert_str_eq(err.msg, cases[i].msg);
        ck_assert_int_eq(s.ntasks, 0);
        ck_assert_ptr_null(s.tasks);
    }
}
END_TEST

static const char g_head[] =
    "{\"schema\": \"zsim.schedule/1\", \"header\": {\"zsim_version\": "
    "\"0.1.0\", "
    "\"model\": \"m\", \"hardware\": \"1xH100\", \"rank\": 0, \"world\": 1, "
    "\"steps\": 1}, \"queues\": [{\"name\": \"s0\"}],\n\"tasks\": [\n";

/* Inline cases: the header, predictions and arrays of the wrong type. */
START_TEST(test_bad_inline)
{
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"{\"schema\": \"zsim.schedule/1\", \"header\": {\"zsim_version\": "
         "\"0.1.0\", "
         "\"model\": \"m\", \"hardware\": \"h\", \"rank\": 0, \"world\": 0, "
         "\"steps\": 1}, "
         "\"queues\": [], \"tasks\": []}",
         "invalid 'header.world' in t.json:1:109: must be an integer in [1, "
         "65536] (got 0)"},
        {"{\"schema\": \"zsim.schedule/1\", \"header\": {\"zsim_version\": "
         "\"0.1.0\", "
         "\"model\": \"m\", \"hardware\": \"h\", \"rank\": 0, \"world\": 1, "
         "\"steps\": 1}, "
         "\"queues\": [], \"tasks\": []}",
         "invalid 'queues' in t.json:1:134: must list 1 to 32 queues (got 0)"},
        {"{\"schema\": \"zsim.schedule/1\", \"header\": {\"zsim_version\": "
         "\"0.1.0\", "
         "\"model\": \"m\", \"hardware\": \"h\", \"rank\": 0, \"world\": 1, "
         "\"steps\": 1}, "
         "\"predicted\": {\"step_time_ns\": -2}, \"queues\": [{\"name\": "
         "\"q\"}], \"tasks\": []}",
         "invalid 'predicted.step_time_ns' in t.json:1:148: must be an integer "
         "in [-1, 1e+18] (got -2)"},
        {"{\"schema\": \"zsim.schedule/1\", \"header\": {\"zsim_version\": "
         "\"0.1.0\", "
         "\"model\": \"m\", \"hardware\": \"h\", \"rank\": 0, \"world\": 1, "
         "\"steps\": 1}, "
         "\"queues\": [{\"name\": \"q\"}], \"tasks\": {}}",
         "invalid 'tasks' in t.json:1:161: must be an array of tasks (got "
         "object)"},
        {"{\"schema\": \"zsim.schedule/1\", \"header\": {\"zsim_version\": "
         "\"0.1.0\", "
         "\"model\": \"m\", \"hardware\": \"h\", \"rank\": 0, \"world\": 1, "
         "\"steps\": 1}, "
         "\"queues\": [{\"name\": \"q\", \"hots\": true}], \"tasks\": []}",
         "unknown key 'queues[0].hots' in t.json:1:159: did you mean 'host'?"},
        {"{\"schema\": \"zsim.schedule/1\", \"hedaer\": {}}",
         "unknown key 'hedaer' in t.json:1:31: did you mean 'header'?"},
        {"[]", "invalid top level in t.json: must be an object (got array)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct zs_schedule s;
        struct zs_err err = {0, ""};
        int rc = zs_schedule_read_text("t.json", cases[i].text,
                                       strlen(cases[i].text), &s, &err);
        ck_assert_msg(rc == ZS_EINPUT, "case %zu: rc %d", i, rc);
        ck_assert_str_eq(err.msg, cases[i].msg);
    }
}
END_TEST

/* Task 1 with 65 deps; a task 0 with a dep; the API's own limits. */
START_TEST(test_limits)
{
    char text[4096];
    size_t n;
    struct zs_schedule s;
    struct zs_sched_task t;
    struct zs_err err = {0, ""};
    int32_t deps[65] = {0};

    n = (size_t)snprintf(text, sizeof text, "%s", g_head);
    n += (size_t)snprintf(
        text + n, sizeof text - n,
        "{\"id\": 0, \"kind\": \"alloc\", \"queue\": \"s0\", "
        "\"name\": \"a\", \"pool\": \"device\", \"bytes\": 1},\n"
        "{\"id\": 1, \"kind\": \"host_wait\", \"queue\": \"s0\", "
        "\"name\": \"w\", \"deps\": [");
    for (int i = 0; i < 65; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, i ? ", 0" : "0");
    snprintf(text + n, sizeof text - n, "]}]}");
    ck_assert_int_eq(
        zs_schedule_read_text("t.json", text, strlen(text), &s, &err),
        ZS_EINPUT);
    ck_assert_str_eq(err.msg,
                     "invalid 'tasks[1].deps' in t.json:4:60: must list at "
                     "most 64 tasks (got 65)");

    snprintf(text, sizeof text,
             "%s{\"id\": 0, \"kind\": \"host_wait\", \"queue\": "
             "\"s0\", \"name\": \"w\", \"deps\": [0]}]}",
             g_head);
    ck_assert_int_eq(
        zs_schedule_read_text("t.json", text, strlen(text), &s, &err),
        ZS_EINPUT);
    ck_assert_str_eq(err.msg,
                     "invalid 'tasks[0].deps' in t.json:3:60: must be empty "
                     "for task 0 (got 0)");

    snprintf(text, sizeof text,
             "%s{\"id\": 0, \"kind\": \"alloc\", \"queue\": "
             "\"s0\", \"name\": \"a\", \"pool\": \"device\", \"bytes\": "
             "2000000000000000}]}",
             g_head);
    ck_assert_int_eq(
        zs_schedule_read_text("t.json", text, strlen(text), &s, &err),
        ZS_EINPUT);
    ck_assert_str_eq(err.msg,
                     "invalid 'tasks[0].bytes' in t.json:3:74: must be an "
                     "integer in [1, 1125899906842624] (got 2000000000000000)");

    /* Exactly at the limits reads fine: 1 PiB buffer, 64 deps. */
    snprintf(text, sizeof text,
             "%s{\"id\": 0, \"kind\": \"alloc\", \"queue\": "
             "\"s0\", \"name\": \"a\", \"pool\": \"device\", \"bytes\": "
             "1125899906842624}]}",
             g_head);
    ck_assert_msg(
        zs_schedule_read_text("t.json", text, strlen(text), &s, &err) == 0,
        "%s", err.msg);
    zs_schedule_release(&s);

    zs_schedule_init(&s);
    zs_sched_task_init(&t, ZS_SK_HOST_WAIT, 0, "w");
    ck_assert_int_eq(zs_schedule_add(&s, &t, deps, 65, &err), ZS_ELIMIT);
    ck_assert_str_eq(err.msg, "too many deps for task 0: at most 64 (got 65)");
    for (int q = 0; q < ZS_SCHED_MAX_QUEUES; q++) {
        char name[16];
        snprintf(name, sizeof name, "q%d", q);
        ck_assert_int_eq(zs_schedule_add_queue(&s, name, false, &err), q);
    }
    ck_assert_int_eq(zs_schedule_add_queue(&s, "one-more", false, &err),
                     ZS_ELIMIT);
    ck_assert_str_eq(err.msg, "too many queues: at most 32");
    zs_schedule_release(&s);
}
END_TEST

/* The reader under an allocation-failure loop (STYLE 25). */
START_TEST(test_alloc_failures)
{
    for (long n = 1; n < 100000; n++) {
        struct zs_schedule s;
        struct zs_err err = {0, ""};
        int rc;
        zs_alloc_fail_at(n);
        rc = zs_schedule_read(GOOD, &s, &err);
        if (!zs_alloc_failed()) {
            zs_alloc_fail_at(0);
            ck_assert_msg(rc == 0, "%s", err.msg);
            ck_assert_int_eq(s.ntasks, 14);
            zs_schedule_release(&s);
            return;
        }
        ck_assert_msg(rc == ZS_ENOMEM, "n=%ld rc=%d msg=%s", n, rc, err.msg);
        ck_assert_ptr_null(s.tasks);
    }
    zs_alloc_fail_at(0);
    ck_abort_msg("allocation loop did not terminate");
}
END_TEST

Suite *suite_schedule_io(void)
{
    Suite *s = suite_create("schedule_io");
    TCase *core = tcase_create("core");
    TCase *limits = tcase_create("limits");
    TCase *bad = tcase_create("bad input");
    tcase_add_test(core, test_read_good);
    tcase_add_test(core, test_round_trip);
    tcase_add_test(core, test_build_api);
    tcase_add_test(core, test_steady_step);
    tcase_add_test(limits, test_limits);
    tcase_add_test(limits, test_alloc_failures);
    tcase_add_test(bad, test_bad_files);
    tcase_add_test(bad, test_bad_inline);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    suite_add_tcase(s, bad);
    return s;
}
