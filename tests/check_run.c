/*
 * check_run.c — the whole run (sim/run/run.c, sim/present/runout.c) on
 * hand-built step results, so that every expected figure below can be
 * computed by hand from the formulas in run.c's header: steps per epoch with
 * drop_last and --max-steps, the load spike as the host peak, a leak preset
 * failing in epoch 2 at a stated step, a checkpoint-save spike, an epoch
 * leak, dataloader copy-on-write, exact bad-input messages, and the timeline
 * writer under an allocation-failure loop.
 */
#include "present/runout.h"
#include "run/run.h"
#include "util/alloc.h"
#include "util/units.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fx {
    struct zs_model m;
    struct zs_cluster cl;
    struct zs_cfg c;
    struct zs_setup su;
    struct zs_sim_result res;
    struct zs_run_levels lv;
    struct zs_run run;
};

/* A DeepSpeed ZeRO-3 offload job on one node of `procs` ranks; step peaks
 * are per node as zs_sim_result gives them. */
static void fx_init(struct fx *f, int64_t params, int procs, int nodes, int sp)
{
    memset(f, 0, sizeof *f);
    zs_cfg_defaults(&f->c);
    f->m.params_total = params;
    f->m.largest_leaf_params = params / 100;
    f->c.procs_per_node = procs;
    f->c.world = (int64_t)procs * nodes;
    f->c.sp = sp;
    f->c.dp = f->c.world / sp;
    f->c.accum = 1;
    f->c.micro_batch = 1;
    f->c.offload_optimizer = ZS_OFF_CPU;
    f->c.offload_param = ZS_OFF_CPU;
    f->c.epochs = 1;
    f->res.host_runtime_per_rank = 4 * ZS_GiB;
    f->res.host_capacity_per_node = ZS_TiB;
    f->res.gpu_capacity_bytes = 70 * ZS_GiB;
    f->res.first.time_s = 10;
    f->res.steady.time_s = 8;
    f->res.first.peak_gpu_allocated = 30 * ZS_GiB;
    f->res.steady.peak_gpu_allocated = 31 * ZS_GiB;
    f->lv.gpu_resident_rank = ZS_GiB;
    f->su.model = &f->m;
    f->su.cluster = &f->cl;
    f->su.cfg = &f->c;
}

static void host(struct fx *f, int64_t first_node, int64_t steady_node,
                 int64_t resident_rank, int64_t init_rank)
{
    f->res.first.peak_host_per_node = first_node;
    f->res.steady.peak_host_per_node = steady_node;
    f->lv.host_resident_rank = resident_rank;
    f->lv.host_init_peak_rank = init_rank;
}

static int compose(struct fx *f)
{
    struct zs_err err;
    int rc = zs_run_compose(&f->su, &f->res, &f->lv, &f->run, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    return rc;
}

/* ---- core ------------------------------------------------------------------
 */

START_TEST(test_steps_per_epoch)
{
    struct fx f;
    fx_init(&f, 1000000000, 8, 1, 2); /* dp 4 */
    f.c.micro_batch = 2;
    f.c.accum = 3;
    f.c.dataset_samples = 1000;
    f.c.epochs = 3;
    host(&f, 100 * ZS_GiB, 100 * ZS_GiB, 10 * ZS_GiB, 10 * ZS_GiB);
    /* floor(1000 / (2 x 4)) = 125 micro-batches per rank; 125 // 3 = 41
     * steps; 41 x 24 = 984 samples used, 16 dropped */
    ck_assert_int_eq(zs_run_steps_per_epoch(&f.c), 41);
    ck_assert_int_eq(compose(&f), 0);
    ck_assert_int_eq(f.run.samples_per_step, 24);
    ck_assert_int_eq(f.run.steps_per_epoch, 41);
    ck_assert_int_eq(f.run.dropped_samples, 16);
    ck_assert_int_eq(f.run.steps_total, 123);
    ck_assert_int_eq(f.run.epochs_run, 3);
    ck_assert(!f.run.max_steps_cut);
    /* the XTuner case: max_iters ends the run before one epoch */
    f.c.max_steps = 10;
    ck_assert_int_eq(compose(&f), 0);
    ck_assert_int_eq(f.run.steps_total, 10);
    ck_assert(f.run.max_steps_cut);
    ck_assert_int_eq(f.run.epochs_run, 1);
    /* a max_steps past the end changes nothing */
    f.c.max_steps = 1000;
    ck_assert_int_eq(compose(&f), 0);
    ck_assert_int_eq(f.run.steps_total, 123);
    ck_assert(!f.run.max_steps_cut);
    /* exactly divisible: 2 x 4 x 3 = 24 samples -> 1 step, nothing dropped */
    f.c.dataset_samples = 24;
    f.c.max_steps = 0;
    ck_assert_int_eq(zs_run_steps_per_epoch(&f.c), 1);
    f.c.dataset_samples = 23;
    ck_assert_int_eq(zs_run_steps_per_epoch(&f.c), 0);
}
END_TEST

START_TEST(test_load_spike_is_peak)
{
    struct fx f;
    const int64_t rt = 4 * ZS_GiB;
    fx_init(&f, 10000000000LL, 8, 1, 1);
    f.c.dataset_samples = 800; /* 100 steps */
    f.c.zero_init = ZS_NO;
    f.c.load_dtype = ZS_LOAD_FP32;
    host(&f, 200 * ZS_GiB, 200 * ZS_GiB, 24 * ZS_GiB, 20 * ZS_GiB);
    ck_assert_int_eq(compose(&f), 0);
    /* each rank: runtime + 10e9 x 4 B (fp32 model) + one 5 GB shard */
    ck_assert_int_eq(f.run.load_bytes_rank, rt + 40000000000LL + 5000000000LL);
    ck_assert_int_eq(f.run.row[ZS_RP_LOAD].host_node, 8 * (rt + 45000000000LL));
    ck_assert_int_eq(f.run.peak_phase, ZS_RP_LOAD);
    ck_assert_int_eq(f.run.peak_host_node, 8 * (rt + 45000000000LL));
    ck_assert_int_eq(f.run.oom.where, ZS_OOM_NONE);
    /* init: max(engine 20 GiB, runtime + 2 x P + 6 x T = rt + 10e9) */
    ck_assert_int_eq(f.run.init_transient_rank, rt + 10000000000LL);
    ck_assert_int_eq(f.run.row[ZS_RP_INIT].host_node, 8 * 20 * ZS_GiB);
    /* save (save_last): resident + 2 x 10e9 + 2 x 1e8 on rank 0's node */
    ck_assert_int_eq(f.run.save_extra_node, 20200000000LL);
    ck_assert_int_eq(f.run.row[ZS_RP_SAVE].host_node,
                     8 * 24 * ZS_GiB + 20200000000LL);
    ck_assert_int_eq(f.run.nsaves, 1);
    /* bf16: half the model bytes */
    f.c.load_dtype = ZS_LOAD_BF16;
    ck_assert_int_eq(compose(&f), 0);
    ck_assert_int_eq(f.run.load_bytes_rank, rt + 20000000000LL + 5000000000LL);
    /* with zero.Init the load is small and the save is the worst moment */
    f.c.zero_init = ZS_YES;
    ck_assert_int_eq(compose(&f), 0);
    ck_assert_int_eq(f.run.load_bytes_rank,
                     rt + 5000000000LL + 2 * 1250000000LL);
    ck_assert_int_eq(f.run.peak_phase, ZS_RP_SAVE);
    ck_assert_int_eq(f.run.peak_step, 100);
    /* the same load on a node too small for it: OOM before step 1 */
    f.c.zero_init = ZS_NO;
    f.c.load_dtype = ZS_LOAD_FP32;
    f.res.host_capacity_per_node = 300 * ZS_GiB;
    ck_assert_int_eq(compose(&f), 0);
    ck_assert_int_eq(f.run.oom.where, ZS_OOM_HOST);
    ck_assert_int_eq(f.run.oom.phase, ZS_RP_LOAD);
    ck_assert_int_eq(f.run.oom.step, 0);
    ck_assert_int_eq(f.run.oom.needed_bytes, 8 * (rt + 45000000000LL));
}
END_TEST

START_TEST(test_leak_preset_epoch2)
{
    struct fx f;
    struct zs_run_moment mo;
    fx_init(&f, 16000000000LL, 8, 1, 1); /* partition 2e9 per rank */
    f.c.dataset_samples = 120;           /* 120 / 8 = 15 steps per epoch */
    f.c.epochs = 3;
    snprintf(f.c.leak, sizeof f.c.leak, "ds2984");
    f.res.host_capacity_per_node = 500000000000LL;
    host(&f, 350000000000LL, 350000000000LL, 40000000000LL, 10000000000LL);
    ck_assert_int_eq(compose(&f), 0);
    /* 0.46875 B x 2e9 = 937.5 MB per rank per step, 7.5 GB per node:
     * 350 GB + 7.5 GB x g > 500 GB first at g = 21 = epoch 2, its step 6 */
    ck_assert_int_eq(f.run.steps_per_epoch, 15);
    ck_assert_int_eq(f.run.oom.where, ZS_OOM_HOST);
    ck_assert_int_eq(f.run.oom.phase, ZS_RP_STEADY);
    ck_assert_int_eq(f.run.oom.epoch, 2);
    ck_assert_int_eq(f.run.oom.step, 21);
    ck_assert_int_eq(f.run.oom.step_in_epoch, 6);
    ck_assert_int_eq(f.run.oom.needed_bytes,
                     350000000000LL + 21 * 7500000000LL);
    /* load 2 x 16e9 B / 2 GB/s = 16 s, step 1 10 s, steps 2..21 8 s each */
    ck_assert(f.run.oom.after_s > 186 - 1e-9 && f.run.oom.after_s < 186 + 1e-9);
    /* step 20 still fits, exactly */
    zs_run_moment_at(&f.su, &f.res, &f.lv, &f.run, ZS_RP_STEADY, 20, &mo);
    ck_assert_int_eq(mo.host_node, 500000000000LL);
    /* the run would need, at its worst, the last save (save_last) after
     * step 45: resident 8 x 40 GB + 45 x 7.5 GB + 2 x 16e9 + 2 x 1.6e8 */
    ck_assert_int_eq(f.run.peak_phase, ZS_RP_SAVE);
    ck_assert_int_eq(f.run.peak_step, 45);
    ck_assert_int_eq(f.run.peak_host_node,
                     320000000000LL + 45 * 7500000000LL + 32320000000LL);

    /* #7693: +12 B per partition element once, at step 1 */
    snprintf(f.c.leak, sizeof f.c.leak, "ds7693");
    f.res.host_capacity_per_node = 600000000000LL;
    ck_assert_int_eq(compose(&f), 0);
    ck_assert_int_eq(f.run.row[ZS_RP_FIRST].host_node,
                     350000000000LL + 8 * 24000000000LL);
    ck_assert_int_eq(f.run.oom.where, ZS_OOM_NONE);
}
END_TEST

START_TEST(test_save_spike)
{
    struct fx f;
    fx_init(&f, 10000000000LL, 8, 1, 1);
    f.c.dataset_samples = 800; /* 100 steps */
    f.c.save_every = 30;
    f.c.save_last = false;
    f.res.host_capacity_per_node = 810000000000LL;
    host(&f, 800000000000LL, 800000000000LL, 99000000000LL, 10000000000LL);
    ck_assert_int_eq(compose(&f), 0);
    /* steps need 800 GB (fit 810 GB); a save needs 8 x 99 GB + 20.2 GB */
    ck_assert_int_eq(f.run.nsaves, 3);
    ck_assert_int_eq(f.run.oom.where, ZS_OOM_HOST);
    ck_assert_int_eq(f.run.oom.phase, ZS_RP_SAVE);
    ck_assert_int_eq(f.run.oom.step, 30);
    ck_assert_int_eq(f.run.oom.needed_bytes, 792000000000LL + 20200000000LL);
    /* save time: (2 x 10e9 + 12 x 10e9) / 2 GB/s = 70 s; after_s =
     * load 10 s + step 1 10 s + 29 x 8 s + 70 s */
    ck_assert(f.run.save_s > 70 - 1e-9 && f.run.save_s < 70 + 1e-9);
    ck_assert(f.run.oom.after_s > 322 - 1e-9 && f.run.oom.after_s < 322 + 1e-9);
    /* wall time of the planned run: 10 + 10 + 99 x 8 + 3 x 70 = 1022 s */
    ck_assert(f.run.wall_s > 1022 - 1e-9 && f.run.wall_s < 1022 + 1e-9);
    ck_assert(f.run.gpu_hours > 1022.0 * 8 / 3600 - 1e-9 &&
              f.run.gpu_hours < 1022.0 * 8 / 3600 + 1e-9);
    /* NVMe optimizer offload: the save also reads the swap files, 12 x
     * 10e9 B from the node's drives at 20 GB/s = 6 s more (run.c
     * nvme_save_read_s) */
    f.c.offload_optimizer = ZS_OFF_NVME;
    f.c.nvme_read_gbps = 20;
    f.c.nvme_write_gbps = 10;
    ck_assert_int_eq(compose(&f), 0);
    ck_assert(f.run.save_s > 76 - 1e-9 && f.run.save_s < 76 + 1e-9);
    f.c.offload_optimizer = ZS_OFF_CPU;
    f.c.nvme_read_gbps = f.c.nvme_write_gbps = 0;
    /* epoch-end and last saves counted once each with periodic ones */
    f.c.save_every = 50;
    f.c.save_epoch_end = true;
    f.c.save_last = true;
    f.c.epochs = 2;
    f.res.host_capacity_per_node = ZS_TiB;
    ck_assert_int_eq(compose(&f), 0);
    ck_assert_int_eq(f.run.nsaves, 4); /* 50, 100, 150, 200 */
    f.c.save_every = 30;
    ck_assert_int_eq(compose(&f), 0);
    ck_assert_int_eq(f.run.nsaves, 8); /* 30 60 90 100 120 150 180 200 */
}
END_TEST

START_TEST(test_epoch_leak_and_eval)
{
    struct fx f;
    fx_init(&f, 10000000000LL, 8, 1, 1);
    f.c.dataset_samples = 80; /* 10 steps per epoch */
    f.c.epochs = 5;
    f.c.save_last = false;
    f.c.eval_every = 5;
    f.c.eval_samples = 160; /* 20 micro-batches x (8 s / 3) */
    snprintf(f.c.leak, sizeof f.c.leak, "8GiB/epoch");
    f.res.host_capacity_per_node = 800000000000LL;
    host(&f, 700000000000LL, 700000000000LL, 650000000000LL / 8, 10000000000LL);
    ck_assert_int_eq(compose(&f), 0);
    /* 700 GB + 64 GiB x (e - 1) > 800 GB first in epoch 3 (step 21) */
    ck_assert_int_eq(f.run.oom.where, ZS_OOM_HOST);
    ck_assert_int_eq(f.run.oom.epoch, 3);
    ck_assert_int_eq(f.run.oom.step, 21);
    ck_assert_int_eq(f.run.oom.needed_bytes, 700000000000LL + 2 * 64 * ZS_GiB);
    ck_assert_int_eq(f.run.nevals, 10);
    ck_assert(f.run.eval_s > 20 * 8.0 / 3 - 1e-9 &&
              f.run.eval_s < 20 * 8.0 / 3 + 1e-9);
    ck_assert_int_eq(f.run.row[ZS_RP_EPOCH].count, 4);
}
END_TEST

START_TEST(test_workers_cow)
{
    struct fx f;
    struct zs_run_moment mo;
    const int64_t pt = 32 * ZS_GiB / 4096 * 8; /* 64 MiB */
    fx_init(&f, 10000000000LL, 8, 1, 1);
    f.c.dataset_samples = 80; /* 10 steps */
    f.c.epochs = 2;
    f.c.dataloader_workers = 2;
    f.c.dataset_bytes = ZS_GiB;
    f.res.steady.pinned_host_per_rank = 8 * ZS_GiB;
    host(&f, 300 * ZS_GiB, 300 * ZS_GiB, 40 * ZS_GiB, 10 * ZS_GiB);
    ck_assert_int_eq(compose(&f), 0);
    ck_assert_int_eq(f.run.worker_pt_rank, pt);
    /* end of epoch 1: 8 ranks x 2 workers x (page tables + the dataset) */
    zs_run_moment_at(&f.su, &f.res, &f.lv, &f.run, ZS_RP_STEADY, 10, &mo);
    ck_assert_int_eq(mo.host_node, 300 * ZS_GiB + 16 * (pt + ZS_GiB));
    /* re-forked: step 1 of epoch 2 holds a tenth */
    zs_run_moment_at(&f.su, &f.res, &f.lv, &f.run, ZS_RP_STEADY, 11, &mo);
    ck_assert_int_eq(mo.host_node,
                     300 * ZS_GiB +
                         (int64_t)(16.0 * ((double)pt + ZS_GiB / 10.0)));
    /* persistent: the copies stay */
    f.c.persistent_workers = true;
    ck_assert_int_eq(compose(&f), 0);
    zs_run_moment_at(&f.su, &f.res, &f.lv, &f.run, ZS_RP_STEADY, 11, &mo);
    ck_assert_int_eq(mo.host_node, 300 * ZS_GiB + 16 * (pt + ZS_GiB));
    ck_assert_int_eq(f.run.peak_step, 20);
}
END_TEST

START_TEST(test_json_and_verdict)
{
    struct fx f;
    struct zs_runout ro;
    struct zs_err err;
    char buf[512], *doc;
    cJSON *o;
    fx_init(&f, 16000000000LL, 8, 1, 1);
    f.c.dataset_samples = 120;
    f.c.epochs = 3;
    snprintf(f.c.leak, sizeof f.c.leak, "ds2984");
    f.res.host_capacity_per_node = 500000000000LL;
    host(&f, 350000000000LL, 350000000000LL, 40000000000LL, 10000000000LL);
    memset(&ro, 0, sizeof ro);
    ro.su = &f.su;
    ro.res = &f.res;
    ro.lv = f.lv;
    ck_assert_int_eq(zs_run_compose(&f.su, &f.res, &ro.lv, &ro.run, &err), 0);
    zs_runout_verdict(&ro, buf, sizeof buf);
    ck_assert_str_eq(
        buf,
        "host OOM at epoch 2, step 21 (steady steps): needs 473 GiB of 466 GiB "
        "host RAM per node");
    o = zs_runout_json(&ro);
    ck_assert_ptr_nonnull(o);
    doc = cJSON_PrintUnformatted(o);
    ck_assert_ptr_nonnull(strstr(doc, "\"steps_per_epoch\":15"));
    ck_assert_ptr_nonnull(strstr(doc, "\"steps_total\":45"));
    ck_assert_ptr_nonnull(strstr(doc, "\"host_oom\":{\"epoch\":2,\"step\":21,"
                                      "\"step_in_epoch\":6,\"phase\":\"steady "
                                      "steps\""));
    zs_free(doc);
    cJSON_Delete(o);
}
END_TEST

/* ---- bad input
 * ----------------------------------------------------------------- */

START_TEST(test_leak_parse)
{
    struct zs_leak l;
    ck_assert_int_eq(zs_leak_parse("none", &l), 0);
    ck_assert_int_eq(zs_leak_parse("2GiB/step", &l), 0);
    ck_assert_int_eq(l.step_bytes, 2 * ZS_GiB);
    ck_assert_int_eq(zs_leak_parse("500MB/epoch", &l), 0);
    ck_assert_int_eq(l.epoch_bytes, 500000000);
    ck_assert_int_eq(zs_leak_parse("ds7693", &l), 0);
    ck_assert(l.once_bytes_per_elem == 12.0);
    {
        static const char *const bad[] = {"",         "ds",         "2GiB",
                                          "2GiB/day", "/step",      "-1GB/step",
                                          "x/step",   "2GiB/step/", "DS2984"};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
            ck_assert_msg(zs_leak_parse(bad[i], &l) == -1, "accepted '%s'",
                          bad[i]);
    }
}
END_TEST

START_TEST(test_check_messages)
{
    struct fx f;
    struct zs_err err;
    fx_init(&f, 1000000000, 8, 1, 2);
    f.c.accum = 16;
    snprintf(f.c.leak, sizeof f.c.leak, "lots");
    ck_assert_int_eq(zs_run_check(&f.c, NULL, NULL, &err), ZS_EUSAGE);
    ck_assert_str_eq(
        err.msg, "invalid value for '--leak': must be none, a preset (ds7693, "
                 "ds2984), BYTES/step or BYTES/epoch (got 'lots')");
    ck_assert_int_eq(zs_run_check(&f.c, "scenarios/x.json", NULL, &err),
                     ZS_EINPUT);
    ck_assert_str_eq(
        err.msg, "invalid 'leak' in scenarios/x.json: must be none, a preset "
                 "(ds7693, ds2984), BYTES/step or BYTES/epoch (got 'lots')");
    snprintf(f.c.leak, sizeof f.c.leak, "none");
    f.c.dataset_samples = 63;
    ck_assert_int_eq(zs_run_check(&f.c, NULL, NULL, &err), ZS_EUSAGE);
    ck_assert_str_eq(
        err.msg,
        "invalid value for '--dataset-samples': gives no optimizer step "
        "per epoch; must be at least micro-batch x data-parallel x "
        "accumulation = 1 x 4 x 16 = 64 (got 63)");
    ck_assert_int_eq(zs_run_check(&f.c, NULL, "s.json", &err), ZS_EINPUT);
    ck_assert_str_eq(
        err.msg,
        "invalid 'dataset_samples' in s.json: gives no optimizer step per "
        "epoch; must be at least micro-batch x data-parallel x "
        "accumulation = 1 x 4 x 16 = 64 (got 63)");
    f.c.dataset_samples = 64;
    ck_assert_int_eq(zs_run_check(&f.c, NULL, NULL, &err), 0);
}
END_TEST

/* ---- limits
 * ---------------------------------------------------------------------- */

START_TEST(test_huge_run_and_alloc_failures)
{
    struct fx f;
    struct zs_runout ro;
    struct zs_err err;
    char path[] = "/tmp/zsim-check-run-XXXXXX";
    int fd = mkstemp(path), rc;
    FILE *fp;
    char line[256];
    ck_assert_int_ge(fd, 0);
    close(fd);
    fx_init(&f, 70000000000LL, 8, 1, 1);
    f.c.dataset_samples = 10000000000000LL; /* 1.25e12 steps per epoch */
    f.c.epochs = 10000;
    f.c.save_every = 1;
    f.c.eval_every = 1;
    snprintf(f.c.leak, sizeof f.c.leak, "1/step");
    host(&f, 500 * ZS_GiB, 500 * ZS_GiB, 50 * ZS_GiB, 10 * ZS_GiB);
    memset(&ro, 0, sizeof ro);
    ro.su = &f.su;
    ro.res = &f.res;
    ro.lv = f.lv;
    ck_assert_int_eq(zs_run_compose(&f.su, &f.res, &ro.lv, &ro.run, &err), 0);
    ck_assert_int_eq(ro.run.steps_total, 12500000000000000LL);
    ck_assert_int_eq(ro.run.oom.where, ZS_OOM_HOST);
    /* the timeline stays bounded, and survives any allocation failure */
    for (long n = 1;; n++) {
        zs_alloc_fail_at(n);
        rc = zs_runout_write_timeline(&ro, path, &err);
        zs_alloc_fail_at(0);
        if (rc == 0)
            break;
        ck_assert_int_eq(rc, ZS_ENOMEM);
        ck_assert(n < 200);
    }
    fp = fopen(path, "r");
    ck_assert_ptr_nonnull(fp);
    ck_assert_ptr_nonnull(fgets(line, sizeof line, fp));
    ck_assert_str_eq(line, "t_s,epoch,step,phase,host_bytes_per_node,gpu_"
                           "allocated_bytes_per_rank\n");
    {
        long rows = 0;
        double prev = -1, t;
        while (fgets(line, sizeof line, fp)) {
            ck_assert_int_eq(sscanf(line, "%lf,", &t), 1);
            ck_assert(t >= prev);
            prev = t;
            rows++;
        }
        ck_assert(rows > 10 && rows < 40000);
    }
    fclose(fp);
    unlink(path);
}
END_TEST

Suite *suite_run(void)
{
    Suite *s = suite_create("run");
    TCase *core = tcase_create("core"), *limits = tcase_create("limits"),
          *bad = tcase_create("bad input");
    tcase_add_test(core, test_steps_per_epoch);
    tcase_add_test(core, test_load_spike_is_peak);
    tcase_add_test(core, test_leak_preset_epoch2);
    tcase_add_test(core, test_save_spike);
    tcase_add_test(core, test_epoch_leak_and_eval);
    tcase_add_test(core, test_workers_cow);
    tcase_add_test(core, test_json_and_verdict);
    tcase_add_test(bad, test_leak_parse);
    tcase_add_test(bad, test_check_messages);
    tcase_add_test(limits, test_huge_run_and_alloc_failures);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    suite_add_tcase(s, bad);
    return s;
}
