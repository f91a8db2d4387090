/*
 * profile.c — loads GPU and node profiles (hwprofiles/gpus/<name>.json,
 * hwprofiles/nodes/<name>.json) into struct zs_gpu / struct zs_node.
 *
 * A profile is a small object of groups; each group holds a few figures and
 * one required "source" string saying where they come from (STYLE 22), e.g.
 *   "pcie": {"h2d_bytes_per_s": 57.0e9, ..., "source": "nvbandwidth #6 ..."}
 * Curves are groups too: {"x": [...], "y": [...], "source": "..."} with x
 * strictly increasing (sizes may be written "16MiB").  Every field is checked
 * against a table (util/json.h), unknown keys get a did-you-mean, and the cJSON
 * tree never leaves this file (STYLE 16).  Outputs are written only on
 * success.
 *
 * Cost: one small file parse per profile; only at start-up.
 */
#include "hw/hw.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/strutil.h"
#include "util/units.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define REQ ZS_F_REQUIRED
/* A required figure of a profile: key, type, offset and range. */
#define FIGURE(key, type, off, lo, hi) ZS_FIELD(key, type, off, lo, hi, 0, REQ)
#define SRC_FIELD(T)                                                           \
    {                                                                          \
        "source", ZS_F_STRING, offsetof(T, src), 0, 0, 0, REQ, NULL,           \
            ZS_HW_SOURCE_CAP, NULL                                             \
    }

static void join_path(char *buf, size_t cap, const char *parent,
                      const char *key)
{
    if (parent && *parent)
        snprintf(buf, cap, "%s.%s", parent, key);
    else
        snprintf(buf, cap, "%s", key);
}

static int add_source(struct zs_hw_sources *s, const char *what,
                      const char *text)
{
    if (s->n >= ZS_HW_SOURCES_MAX)
        return ZS_ELIMIT;
    zs_strlcpy(s->item[s->n].what, what, sizeof s->item[s->n].what);
    zs_strlcpy(s->item[s->n].text, text, sizeof s->item[s->n].text);
    s->n++;
    return 0;
}

/* A required sub-object of obj: its absence names the file and what was
 * expected. */
static int need_group(const struct zs_json_src *src, const cJSON *obj,
                      const char *key, const char *want, const cJSON **out,
                      struct zs_err *err)
{
    *out = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!*out)
        return zs_err_set(err, ZS_EINPUT, "missing '%s' in %s: required, %s",
                          key, src->path, want);
    return 0;
}

/* ---- curves ---------------------------------------------------------- */

struct curve_file {
    char src[ZS_HW_SOURCE_CAP];
};

static const struct zs_field curve_fields[] = {
    {"x", ZS_F_CUSTOM, 0, 0, 0, 0, 0, NULL, 0, NULL},
    {"y", ZS_F_CUSTOM, 0, 0, 0, 0, 0, NULL, 0, NULL},
    SRC_FIELD(struct curve_file),
};

struct curve_spec {
    const char *key;
    double xmin, xmax; /* allowed x */
    int x_sizes;       /* x may be a size string ("16MiB") */
    double ymin, ymax; /* allowed y */
};

/* Reads one array of a curve into v[]; *n gets its length. */
static int read_points(const struct zs_json_src *src, const cJSON *curve,
                       const char *path, const char *key, double lo, double hi,
                       int sizes, double *v, int *n, struct zs_err *err)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(curve, key);
    const cJSON *it;
    char where[300], name[160], los[40], his[40];
    int i = 0;

    join_path(name, sizeof name, path, key);
    if (sizes) {
        zs_fmt_bytes(los, sizeof los, (int64_t)lo);
        zs_fmt_bytes(his, sizeof his, (int64_t)hi);
    } else {
        zs_json_fmt_num(los, sizeof los, lo);
        zs_json_fmt_num(his, sizeof his, hi);
    }
    if (!arr)
        return zs_err_set(err, ZS_EINPUT,
                          "missing '%s' in %s: required, an array of 1 to %d "
                          "numbers in [%s, %s]",
                          name, src->path, ZS_CURVE_MAX, los, his);
    zs_json_where(src, path, key, where, sizeof where);
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) < 1 ||
        cJSON_GetArraySize(arr) > ZS_CURVE_MAX) {
        char got[48];
        if (cJSON_IsArray(arr))
            snprintf(got, sizeof got, "%d points", cJSON_GetArraySize(arr));
        else
            snprintf(got, sizeof got, "%s", zs_json_type_name(arr));
        return zs_err_set(err, ZS_EINPUT,
                          "invalid '%s' in %s: must be an array of 1 to %d "
                          "numbers (got %s)",
                          name, where, ZS_CURVE_MAX, got);
    }
    cJSON_ArrayForEach(it, arr)
    {
        double x = NAN;
        int64_t b;
        if (cJSON_IsNumber(it))
            x = it->valuedouble;
        else if (sizes && cJSON_IsString(it) &&
                 zs_parse_bytes(it->valuestring, &b) == 0)
            x = (double)b;
        if (!isfinite(x) || x < lo || x > hi) {
            char got[64];
            if (cJSON_IsNumber(it))
                zs_json_fmt_num(got, sizeof got, it->valuedouble);
            else if (cJSON_IsString(it))
                snprintf(got, sizeof got, "'%.40s'", it->valuestring);
            else
                snprintf(got, sizeof got, "%s", zs_json_type_name(it));
            return zs_err_set(err, ZS_EINPUT,
                              "invalid '%s[%d]' in %s: must be %s in [%s, %s] "
                              "(got %s)",
                              name, i, where,
                              sizes ? "a number or a size" : "a number", los,
                              his, got);
        }
        v[i++] = x;
    }
    *n = i;
    return 0;
}

/* Reads curve `key` of obj (path objpath) into *out; adds its source. */
static int read_curve(const struct zs_json_src *src, const cJSON *obj,
                      const char *objpath, const struct curve_spec *cs,
                      int required, struct zs_curve *out,
                      struct zs_hw_sources *srcs, struct zs_err *err)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(obj, cs->key);
    struct curve_file cf;
    struct zs_curve cv;
    char path[160], where[300];
    int nx = 0, ny = 0, rc;

    memset(&cv, 0, sizeof cv);
    join_path(path, sizeof path, objpath, cs->key);
    if (!c) {
        if (required)
            return zs_err_set(err, ZS_EINPUT,
                              "missing '%s' in %s: required, an object with "
                              "\"x\", \"y\" and \"source\"",
                              path, src->path);
        *out = cv;
        return 0;
    }
    rc =
        zs_json_read(src, c, path, curve_fields,
                     sizeof curve_fields / sizeof curve_fields[0], &cf, 0, err);
    if (rc)
        return rc;
    rc = read_points(src, c, path, "x", cs->xmin, cs->xmax, cs->x_sizes, cv.x,
                     &nx, err);
    if (rc)
        return rc;
    rc = read_points(src, c, path, "y", cs->ymin, cs->ymax, 0, cv.y, &ny, err);
    if (rc)
        return rc;
    if (ny != nx) {
        zs_json_where(src, path, "y", where, sizeof where);
        return zs_err_set(err, ZS_EINPUT,
                          "invalid '%s.y' in %s: must have as many points as "
                          "'x' (%d) (got %d)",
                          path, where, nx, ny);
    }
    for (int i = 1; i < nx; i++) {
        if (!(cv.x[i] > cv.x[i - 1])) {
            char a[40], b[40];
            zs_json_fmt_num(a, sizeof a, cv.x[i]);
            zs_json_fmt_num(b, sizeof b, cv.x[i - 1]);
            zs_json_where(src, path, "x", where, sizeof where);
            return zs_err_set(err, ZS_EINPUT,
                              "invalid '%s.x' in %s: must be strictly "
                              "increasing (x[%d] = %s after x[%d] = %s)",
                              path, where, i, a, i - 1, b);
        }
    }
    cv.n = nx;
    zs_curve_prepare(&cv);
    rc = add_source(srcs, path, cf.src);
    if (rc)
        return zs_err_set(err, rc, "too many sources in %s: at most %d",
                          src->path, ZS_HW_SOURCES_MAX);
    *out = cv;
    return 0;
}

/* Reads group `key` of root with its table into dst, then records the
 * group's source (read into src_field). */
static int read_group(const struct zs_json_src *src, const cJSON *root,
                      const char *key, const struct zs_field *fields,
                      size_t nfields, void *dst, const char *src_field,
                      struct zs_hw_sources *srcs, struct zs_err *err)
{
    const cJSON *g;
    int rc = need_group(src, root, key, "an object", &g, err);
    if (rc)
        return rc;
    rc = zs_json_read(src, g, key, fields, nfields, dst, 0, err);
    if (rc)
        return rc;
    rc = add_source(srcs, key, src_field);
    if (rc)
        return zs_err_set(err, rc, "too many sources in %s: at most %d",
                          src->path, ZS_HW_SOURCES_MAX);
    return 0;
}

/* ---- GPU profiles ------------------------------------------------------ */

struct gpu_file {
    struct zs_gpu g;
    char src[ZS_HW_SOURCE_CAP];
};

#define GF(m) offsetof(struct gpu_file, g.m)

static const struct zs_field gpu_top[] = {
    {"name", ZS_F_STRING, GF(name), 0, 0, 0, REQ, NULL, 32, NULL},
    {"comment", ZS_F_SKIP, 0, 0, 0, 0, 0, NULL, 0, NULL},
    ZS_FIELD_CUSTOM("memory"),
    ZS_FIELD_CUSTOM("compute"),
    ZS_FIELD_CUSTOM("gemm_eff"),
    ZS_FIELD_CUSTOM("attn_eff_by_seq"),
    ZS_FIELD_CUSTOM("attn_triton_eff_by_seq"),
    ZS_FIELD_CUSTOM("hbm"),
    ZS_FIELD_CUSTOM("nvlink"),
    ZS_FIELD_CUSTOM("pcie"),
    ZS_FIELD_CUSTOM("overlap"),
    ZS_FIELD_CUSTOM("fp8"),
    ZS_FIELD_CUSTOM("sustained"),
};

static const struct zs_field gpu_memory[] = {
    FIGURE("hbm_bytes", ZS_F_BYTES, GF(hbm_bytes), (double)ZS_GiB,
           (double)ZS_TiB),
    FIGURE("cuda_context_bytes", ZS_F_BYTES, GF(cuda_context_bytes), 0,
           16.0 * ZS_GiB),
    FIGURE("nccl_bytes", ZS_F_BYTES, GF(nccl_bytes), 0, 16.0 * ZS_GiB),
    SRC_FIELD(struct gpu_file),
};

static const struct zs_field gpu_compute[] = {
    FIGURE("peak_bf16_flops", ZS_F_DOUBLE, GF(peak_bf16_flops), 1e12, 1e17),
    FIGURE("attn_eff", ZS_F_DOUBLE, GF(attn_eff), 0.01, 1),
    FIGURE("launch_overhead_ns", ZS_F_INT, GF(launch_overhead_ns), 0, 1e6),
    {"sms", ZS_F_INT, GF(sms), 0, 1024, 0, 0, NULL, 0, NULL},
    SRC_FIELD(struct gpu_file),
};

static const struct zs_field gpu_hbm[] = {
    FIGURE("bytes_per_s", ZS_F_DOUBLE, GF(hbm_bytes_per_s), 1e9, 1e14),
    FIGURE("eff", ZS_F_DOUBLE, GF(hbm_eff), 0.01, 1),
    /* optional; 0 (absent): ZS_MEMBOUND_EFF, set in gpu_from_tree */
    ZS_FIELD("membound_eff", ZS_F_DOUBLE, GF(membound_eff), 0, 1, 0, 0),
    SRC_FIELD(struct gpu_file),
};

static const struct zs_field gpu_nvlink[] = {
    FIGURE("bytes_per_s", ZS_F_DOUBLE, GF(nvlink_bytes_per_s), 0, 1e13),
    SRC_FIELD(struct gpu_file),
};

static const struct zs_field gpu_pcie[] = {
    FIGURE("h2d_bytes_per_s", ZS_F_DOUBLE, GF(pcie_h2d_bytes_per_s), 1e8, 1e12),
    FIGURE("d2h_bytes_per_s", ZS_F_DOUBLE, GF(pcie_d2h_bytes_per_s), 1e8, 1e12),
    FIGURE("pageable_bytes_per_s", ZS_F_DOUBLE, GF(pcie_pageable_bytes_per_s),
           1e8, 1e12),
    FIGURE("bidir_h2d_factor", ZS_F_DOUBLE, GF(pcie_bidir_factor), 0.01, 1),
    FIGURE("bidir_d2h_factor", ZS_F_DOUBLE, GF(pcie_bidir_d2h_factor), 0.01, 1),
    SRC_FIELD(struct gpu_file),
};

/* Optional: compute slowed by a concurrent NCCL collective (simulate.c
 * sm_topology); absent, 1 (no interference modelled). */
static const struct zs_field gpu_overlap[] = {
    FIGURE("compute_factor", ZS_F_DOUBLE, GF(overlap_compute_factor), 0.01, 1),
    SRC_FIELD(struct gpu_file),
};

/* Optional: FP8 tensor cores (hw.h peak_fp8_flops, fp8_mamf); absent, the
 * GPU has none as far as zsim knows and --fp8 is refused. */
static const struct zs_field gpu_fp8[] = {
    FIGURE("peak_flops", ZS_F_DOUBLE, GF(peak_fp8_flops), 1e12, 1e17),
    FIGURE("mamf", ZS_F_DOUBLE, GF(fp8_mamf), 0.01, 1),
    SRC_FIELD(struct gpu_file),
};

/* Optional: the fractions of the bf16 (and fp8) peak that large GEMMs hold
 * at the board's power limit (hw.h gemm_sustained, fp8_sustained); absent,
 * the burst ceilings (the gemm_eff curve's top point, fp8.mamf) stand.
 * Each must not exceed its burst ceiling (checked in gpu_from_tree). */
static const struct zs_field gpu_sustained[] = {
    FIGURE("bf16", ZS_F_DOUBLE, GF(gemm_sustained), 0.01, 1),
    ZS_FIELD("fp8", ZS_F_DOUBLE, GF(fp8_sustained), 0.01, 1, 0, 0),
    SRC_FIELD(struct gpu_file),
};

#define NF(t) (sizeof(t) / sizeof((t)[0]))

static const struct curve_spec gemm_curve = {"gemm_eff", 1, 1e18, 0, 0.001, 1};
static const struct curve_spec attn_seq_curve = {
    "attn_eff_by_seq", 1, 1e8, 0, 0.001, 1};
static const struct curve_spec attn_triton_curve = {
    "attn_triton_eff_by_seq", 1, 1e8, 0, 0.001, 1};

static int gpu_from_tree(const struct zs_json_src *src, const cJSON *root,
                         struct gpu_file *gf, struct zs_err *err)
{
    struct zs_hw_sources *s = &gf->g.sources;
    int rc;

    rc = zs_json_read(src, root, "", gpu_top, NF(gpu_top), gf, 0, err);
    if (!rc)
        rc = read_group(src, root, "memory", gpu_memory, NF(gpu_memory), gf,
                        gf->src, s, err);
    if (!rc)
        rc = read_group(src, root, "compute", gpu_compute, NF(gpu_compute), gf,
                        gf->src, s, err);
    if (!rc)
        rc = read_curve(src, root, "", &gemm_curve, 1, &gf->g.gemm_eff, s, err);
    if (!rc)
        rc = read_curve(src, root, "", &attn_seq_curve, 0,
                        &gf->g.attn_eff_by_seq, s, err);
    if (!rc)
        rc = read_curve(src, root, "", &attn_triton_curve, 0,
                        &gf->g.attn_triton_eff_by_seq, s, err);
    if (!rc)
        rc = read_group(src, root, "hbm", gpu_hbm, NF(gpu_hbm), gf, gf->src, s,
                        err);
    if (!rc)
        rc = read_group(src, root, "nvlink", gpu_nvlink, NF(gpu_nvlink), gf,
                        gf->src, s, err);
    if (!rc)
        rc = read_group(src, root, "pcie", gpu_pcie, NF(gpu_pcie), gf, gf->src,
                        s, err);
    if (!rc && !(gf->g.membound_eff > 0))
        gf->g.membound_eff = ZS_MEMBOUND_EFF; /* hw.h: fitted */
    gf->g.hook_call_ns = ZS_HOOK_CALL_NS;     /* hw.h */
    gf->g.sustained_node = ZS_SUSTAINED_NODE; /* hw.h: fitted */
    gf->g.overlap_compute_factor = 1.0;
    if (!rc && cJSON_GetObjectItemCaseSensitive(root, "overlap"))
        rc = read_group(src, root, "overlap", gpu_overlap, NF(gpu_overlap), gf,
                        gf->src, s, err);
    if (!rc && cJSON_GetObjectItemCaseSensitive(root, "fp8"))
        rc = read_group(src, root, "fp8", gpu_fp8, NF(gpu_fp8), gf, gf->src, s,
                        err);
    if (!rc && cJSON_GetObjectItemCaseSensitive(root, "sustained"))
        rc = read_group(src, root, "sustained", gpu_sustained,
                        NF(gpu_sustained), gf, gf->src, s, err);
    if (rc)
        return rc;
    /* a rate held at the power limit cannot exceed the burst it comes
     * down from */
    if (gf->g.gemm_sustained > gf->g.gemm_eff.y[gf->g.gemm_eff.n - 1])
        return zs_json_bad_at(src, "sustained", "bf16", err,
                              "must not exceed gemm_eff's top point (%g, the "
                              "burst MAMF)",
                              gf->g.gemm_eff.y[gf->g.gemm_eff.n - 1]);
    if (gf->g.fp8_sustained > 0 && !(gf->g.peak_fp8_flops > 0))
        return zs_json_bad_at(src, "sustained", "fp8", err,
                              "needs the group 'fp8' (an fp8 peak and MAMF)");
    if (gf->g.fp8_sustained > gf->g.fp8_mamf && gf->g.peak_fp8_flops > 0)
        return zs_json_bad_at(src, "sustained", "fp8", err,
                              "must not exceed fp8.mamf (%g, the burst MAMF)",
                              gf->g.fp8_mamf);
    if (gf->g.cuda_context_bytes + gf->g.nccl_bytes >= gf->g.hbm_bytes)
        return zs_json_bad_at(src, "memory", "hbm_bytes", err,
                              "must exceed cuda_context_bytes + nccl_bytes");
    return 0;
}

/* zs_json_load_file's from_tree for a GPU profile. */
static int gpu_tree(const struct zs_json_src *src, const cJSON *root, void *ctx,
                    struct zs_err *err)
{
    return gpu_from_tree(src, root, ctx, err);
}

int zs_hw_load_gpu(const char *path, struct zs_gpu *out, struct zs_err *err)
{
    struct gpu_file *gf;
    int rc;

    gf = zs_calloc(1, sizeof *gf);
    if (!gf)
        return zs_err_set(err, ZS_ENOMEM, "out of memory loading '%s'", path);
    rc = zs_json_load_file(path, gpu_tree, gf, err);
    if (!rc)
        *out = gf->g;
    zs_free(gf);
    return rc;
}

/* ---- node profiles ----------------------------------------------------- */

struct node_file {
    char name[48];
    char gpu[200];
    int64_t gpus_per_node;
    int64_t ram_bytes, reserved_bytes;
    int64_t cores;
    double mem_bytes_per_s;
    double fused_adam, torch_op, oversub;
    int64_t gpus_per_switch;
    double uplink;
    int64_t nics;
    double nic_bytes_per_s, inter_node_eff;
    int64_t latency_ns;
    int64_t nvme_drives;
    double nvme_read, nvme_write;
    char src[ZS_HW_SOURCE_CAP];
};

#define NFO(m) offsetof(struct node_file, m)

static const struct zs_field node_top[] = {
    {"name", ZS_F_STRING, NFO(name), 0, 0, 0, REQ, NULL, 48, NULL},
    {"gpu", ZS_F_STRING, NFO(gpu), 0, 0, 0, REQ, NULL, 200, NULL},
    FIGURE("gpus_per_node", ZS_F_INT, NFO(gpus_per_node), 1, 64),
    {"comment", ZS_F_SKIP, 0, 0, 0, 0, 0, NULL, 0, NULL},
    ZS_FIELD_CUSTOM("host"),
    ZS_FIELD_CUSTOM("cpu"),
    ZS_FIELD_CUSTOM("optimizer"),
    ZS_FIELD_CUSTOM("pcie"),
    ZS_FIELD_CUSTOM("network"),
    ZS_FIELD_CUSTOM("collectives"),
    ZS_FIELD_CUSTOM("storage"),
};

/* Optional: local NVMe drives for DeepSpeed's swap files (docs/nvme.md).
 * Rates are per drive, sequential, at aio's 1 MiB blocks; the node's figure
 * is drives x rate (RAID-0 or one nvme_path per drive), shared by its
 * ranks. */
static const struct zs_field node_storage[] = {
    FIGURE("nvme_drives", ZS_F_INT, NFO(nvme_drives), 0, 64),
    FIGURE("drive_read_bytes_per_s", ZS_F_DOUBLE, NFO(nvme_read), 1e8, 1e11),
    FIGURE("drive_write_bytes_per_s", ZS_F_DOUBLE, NFO(nvme_write), 1e8, 1e11),
    SRC_FIELD(struct node_file),
};

static const struct zs_field node_host[] = {
    FIGURE("ram_bytes", ZS_F_BYTES, NFO(ram_bytes), (double)ZS_GiB,
           (double)ZS_BYTES_MAX),
    FIGURE("reserved_bytes", ZS_F_BYTES, NFO(reserved_bytes), 0,
           (double)ZS_TiB),
    SRC_FIELD(struct node_file),
};

static const struct zs_field node_cpu[] = {
    FIGURE("cores", ZS_F_INT, NFO(cores), 1, 4096),
    FIGURE("mem_bytes_per_s", ZS_F_DOUBLE, NFO(mem_bytes_per_s), 1e9, 1e13),
    SRC_FIELD(struct node_file),
};

static const struct zs_field node_opt[] = {
    FIGURE("fused_adam_bytes_per_s_per_thread", ZS_F_DOUBLE, NFO(fused_adam),
           1e7, 1e11),
    FIGURE("torch_op_bytes_per_s_per_thread", ZS_F_DOUBLE, NFO(torch_op), 1e7,
           1e11),
    FIGURE("oversubscription", ZS_F_DOUBLE, NFO(oversub), 1, 100),
    SRC_FIELD(struct node_file),
};

static const struct zs_field node_pcie[] = {
    FIGURE("gpus_per_switch", ZS_F_INT, NFO(gpus_per_switch), 1, 64),
    FIGURE("switch_uplink_bytes_per_s", ZS_F_DOUBLE, NFO(uplink), 1e8, 1e12),
    SRC_FIELD(struct node_file),
};

static const struct zs_field node_net[] = {
    FIGURE("nics", ZS_F_INT, NFO(nics), 0, 64),
    FIGURE("nic_bytes_per_s", ZS_F_DOUBLE, NFO(nic_bytes_per_s), 0, 1e12),
    FIGURE("inter_node_eff", ZS_F_DOUBLE, NFO(inter_node_eff), 0.01, 1),
    SRC_FIELD(struct node_file),
};

static const struct zs_field node_coll[] = {
    FIGURE("latency_ns", ZS_F_INT, NFO(latency_ns), 0, 1e8),
    ZS_FIELD_CUSTOM("allgather_busbw"),
    ZS_FIELD_CUSTOM("reducescatter_busbw"),
    ZS_FIELD_CUSTOM("allreduce_busbw"),
    ZS_FIELD_CUSTOM("alltoall_busbw"),
    ZS_FIELD_CUSTOM("allreduce_rank_scale"),
    SRC_FIELD(struct node_file),
};

static const struct curve_spec busbw_curves[4] = {
    {"allgather_busbw", 1, (double)ZS_BYTES_MAX, 1, 1e6, 1e13},
    {"reducescatter_busbw", 1, (double)ZS_BYTES_MAX, 1, 1e6, 1e13},
    {"allreduce_busbw", 1, (double)ZS_BYTES_MAX, 1, 1e6, 1e13},
    {"alltoall_busbw", 1, (double)ZS_BYTES_MAX, 1, 1e6, 1e13},
};
static const struct curve_spec rank_scale_curve = {
    "allreduce_rank_scale", 1, 64, 0, 0.01, 4};

/* Directory part of path ("a/b/c.json" -> "a/b", "c.json" -> "."). */
static void dir_of(const char *path, char *buf, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(buf, cap, ".");
        return;
    }
    snprintf(buf, cap, "%.*s", (int)(slash - path), path);
}

/* The node profile's groups, in file order; "storage" is optional. */
static int node_groups(const struct zs_json_src *src, const cJSON *root,
                       struct node_file *nf, struct zs_node *n,
                       struct zs_err *err)
{
    static const struct {
        const char *key;
        const struct zs_field *f;
        size_t n;
    } groups[] = {
        {"host", node_host, NF(node_host)},
        {"cpu", node_cpu, NF(node_cpu)},
        {"optimizer", node_opt, NF(node_opt)},
        {"pcie", node_pcie, NF(node_pcie)},
        {"network", node_net, NF(node_net)},
        {"collectives", node_coll, NF(node_coll)},
        {"storage", node_storage, NF(node_storage)},
    };
    struct zs_hw_sources *s = &n->sources;
    struct zs_curve *curves[4];
    const cJSON *coll;
    int rc = zs_json_read(src, root, "", node_top, NF(node_top), nf, 0, err);

    for (size_t i = 0; i < NF(groups) && !rc; i++)
        if (strcmp(groups[i].key, "storage") != 0 ||
            cJSON_GetObjectItemCaseSensitive(root, "storage"))
            rc = read_group(src, root, groups[i].key, groups[i].f, groups[i].n,
                            nf, nf->src, s, err);
    if (rc)
        return rc;
    coll = cJSON_GetObjectItemCaseSensitive(root, "collectives");
    curves[0] = &n->allgather_busbw;
    curves[1] = &n->reducescatter_busbw;
    curves[2] = &n->allreduce_busbw;
    curves[3] = &n->alltoall_busbw;
    for (int i = 0; i < 4 && !rc; i++)
        rc = read_curve(src, coll, "collectives", &busbw_curves[i], 1,
                        curves[i], s, err);
    if (!rc)
        rc = read_curve(src, coll, "collectives", &rank_scale_curve, 0,
                        &n->allreduce_rank_scale, s, err);
    if (rc)
        return rc;
    if (nf->reserved_bytes >= nf->ram_bytes)
        return zs_json_bad_at(src, "host", "reserved_bytes", err,
                              "must be less than host.ram_bytes");
    return 0;
}

/* The path of the node's GPU profile. */
static int node_gpu_path(const char *path, const struct zs_json_src *src,
                         const struct node_file *nf, char *gpath, size_t cap,
                         struct zs_err *err)
{
    const struct zs_hw_gpu_entry *ge;
    char dir[300];

    /* The node's GPU: a registry name (loaded from the profile directory)
     * or a path ending in .json, relative to the node file. */
    if (zs_str_endswith(nf->gpu, ".json")) {
        if (nf->gpu[0] == '/')
            snprintf(gpath, cap, "%s", nf->gpu);
        else {
            dir_of(path, dir, sizeof dir);
            snprintf(gpath, cap, "%s/%s", dir, nf->gpu);
        }
    } else {
        ge = zs_hw_find_gpu(nf->gpu);
        if (!ge) {
            char where[300];
            zs_json_where(src, "", "gpu", where, sizeof where);
            return zs_err_set(err, ZS_EINPUT,
                              "unknown GPU '%s' in %s (see 'zsim hw list')",
                              nf->gpu, where);
        }
        snprintf(gpath, cap, "%s/gpus/%s.json", zs_hw_dir(), ge->file);
    }
    return 0;
}

/* The node file's figures into *n (the GPU is loaded apart). */
static void node_copy(const char *path, const struct node_file *nf,
                      struct zs_node *n)
{
    zs_strlcpy(n->name, nf->name, sizeof n->name);
    zs_strlcpy(n->file, path, sizeof n->file);
    n->gpus_per_node = (int)nf->gpus_per_node;
    n->gpus_installed = (int)nf->gpus_per_node;
    n->host_ram_bytes = nf->ram_bytes;
    n->host_reserved_bytes = nf->reserved_bytes;
    n->cpu_cores = (int)nf->cores;
    n->host_mem_bytes_per_s = nf->mem_bytes_per_s;
    n->host_stream_eff = ZS_HOST_STREAM_EFF; /* hw.h: fitted */
    n->cpu_adam_fused_bytes_per_s_per_thread = nf->fused_adam;
    n->torch_op_bytes_per_s_per_thread = nf->torch_op;
    n->cpu_oversubscription = nf->oversub;
    n->gpus_per_pcie_switch = (int)nf->gpus_per_switch;
    n->pcie_switch_uplink_bytes_per_s = nf->uplink;
    n->nics = (int)nf->nics;
    n->nic_bytes_per_s = nf->nic_bytes_per_s;
    n->inter_node_eff = nf->inter_node_eff;
    n->collective_latency_ns = nf->latency_ns;
    n->nvme_drives = (int)nf->nvme_drives;
    n->nvme_read_bytes_per_s = nf->nvme_drives * nf->nvme_read;
    n->nvme_write_bytes_per_s = nf->nvme_drives * nf->nvme_write;
}

/* What node_from_tree reads a node profile into. */
struct node_load {
    const char *path;
    struct node_file *nf;
    struct zs_node *n;
};

/* zs_json_load_file's from_tree for a node profile: its groups, then its GPU. */
static int node_from_tree(const struct zs_json_src *src, const cJSON *root,
                          void *ctx, struct zs_err *err)
{
    const struct node_load *l = ctx;
    const char *path = l->path;
    struct node_file *nf = l->nf;
    struct zs_node *n = l->n;
    char gpath[600];
    int rc = node_groups(src, root, nf, n, err);

    if (!rc)
        rc = node_gpu_path(path, src, nf, gpath, sizeof gpath, err);
    if (!rc)
        rc = zs_hw_load_gpu(gpath, &n->gpu, err);
    if (rc)
        return rc;
    node_copy(path, nf, n);
    return 0;
}

int zs_hw_load_node(const char *path, struct zs_node *out, struct zs_err *err)
{
    struct node_load l = {path, NULL, NULL};
    int rc;

    l.nf = zs_calloc(1, sizeof *l.nf);
    l.n = zs_calloc(1, sizeof *l.n);
    if (!l.nf || !l.n) {
        zs_free(l.nf);
        zs_free(l.n);
        return zs_err_set(err, ZS_ENOMEM, "out of memory loading '%s'", path);
    }
    rc = zs_json_load_file(path, node_from_tree, &l, err);
    if (!rc)
        *out = *l.n;
    zs_free(l.nf);
    zs_free(l.n);
    return rc;
}
