/*
 * hw.c — the profile registry and cluster SPECs ("2x8xH100"): names a
 * profile, loads it through profile.c and applies the command line's
 * overrides.  The figures (curves, kernel and collective times) are in
 * figures.c, below the loader: figures <- profile <- hw.
 *
 * Invariants: a resolved cluster has 1 <= gpus_per_node <= gpus_installed,
 * 1 <= nodes <= ZS_HW_NODES_MAX, every curve has n >= 1 with x strictly
 * increasing and y > 0 (the loader checks), and host RAM exceeds the OS
 * reserve.
 *
 * Cost: resolving reads two small JSON files.
 */
#include "hw/hw.h"
#include "util/strutil.h"
#include "util/units.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- registry ---------------------------------------------------------- */

/* Default node per GPU (documented in docs/hw.md): the DGX/HGX system the
 * SXM parts are usually rented in, a generic 8-GPU PCIe server for PCIe
 * cards, and the machine of the published runs where the card is only known
 * there (RTX 3090: a 2-GPU workstation; A10G: AWS g5.12xlarge, 4 GPUs).
 * "A100" means the 80GB SXM part (the DGX A100 640GB). */
static const struct zs_hw_gpu_entry g_gpus[] = {
    {"H100-SXM-80GB",
     "h100-sxm-80gb",
     "dgx-h100",
     {"H100", "H100-SXM", "H100-80GB", "H100-SXM5-80GB", NULL}},
    {"H100-PCIe-80GB",
     "h100-pcie-80gb",
     "pcie-h100",
     {"H100-PCIe", "H100-PCIE-80GB", NULL}},
    {"H200-SXM-141GB",
     "h200-sxm-141gb",
     "hgx-h200",
     {"H200", "H200-SXM", "H200-141GB", NULL}},
    {"A100-SXM-80GB",
     "a100-sxm-80gb",
     "dgx-a100",
     {"A100", "A100-80GB", "A100-SXM4-80GB", NULL}},
    {"A100-SXM-40GB",
     "a100-sxm-40gb",
     "dgx-a100-320gb",
     {"A100-40GB", "A100-SXM4-40GB", NULL}},
    {"L40S", "l40s", "pcie-l40s", {"L40S-48GB", NULL}},
    /* The 96 GB HBM2e, 500 W H100 of Meta's Grand Teton hosts, where
     * torchtitan's H100 benchmark ran (validation/published). */
    {"H100-SXM-96GB",
     "h100-sxm-96gb",
     "grand-teton-h100",
     {"H100-96GB", "H100-HBM2e-96GB", NULL}},
    /* The single-GPU cards of torchtune's README table. */
    {"RTX-4090", "rtx-4090", "pcie-rtx4090", {"RTX4090", NULL}},
    {"RTX-A6000", "rtx-a6000", "pcie-rtxa6000", {"A6000", "RTXA6000", NULL}},
    /* Answer.AI's dual RTX 3090 workstation and philschmid's AWS g5.12xlarge
     * (validation/published). */
    {"RTX-3090", "rtx-3090", "ws-rtx3090", {"RTX3090", NULL}},
    {"A10G", "a10g", "aws-g5-12xlarge", {"A10G-24GB", NULL}},
};
#define NGPUS ((int)(sizeof g_gpus / sizeof g_gpus[0]))

static const struct zs_hw_node_entry g_nodes[] = {
    {"DGX H100", "dgx-h100"},
    {"HGX H200", "hgx-h200"},
    {"DGX A100 640GB", "dgx-a100"},
    {"DGX A100 320GB", "dgx-a100-320gb"},
    {"PCIe server, 8x H100 PCIe", "pcie-h100"},
    {"PCIe server, 8x L40S", "pcie-l40s"},
    {"Grand Teton H100", "grand-teton-h100"},
    {"PCIe server, 8x RTX 4090", "pcie-rtx4090"},
    {"PCIe server, 8x RTX A6000", "pcie-rtxa6000"},
    {"Workstation, 2x RTX 3090", "ws-rtx3090"},
    {"AWS g5.12xlarge", "aws-g5-12xlarge"},
};
#define NNODES ((int)(sizeof g_nodes / sizeof g_nodes[0]))

/* zs_hw_list's names, in registry order (tests check every entry). */
static const char *const g_gpu_names[NGPUS] = {
    "H100-SXM-80GB", "H100-PCIe-80GB", "H200-SXM-141GB", "A100-SXM-80GB",
    "A100-SXM-40GB", "L40S",           "H100-SXM-96GB",  "RTX-4090",
    "RTX-A6000",     "RTX-3090",       "A10G"};
static const char *const g_node_names[NNODES] = {"DGX H100",
                                                 "HGX H200",
                                                 "DGX A100 640GB",
                                                 "DGX A100 320GB",
                                                 "PCIe server, 8x H100 PCIe",
                                                 "PCIe server, 8x L40S",
                                                 "Grand Teton H100",
                                                 "PCIe server, 8x RTX 4090",
                                                 "PCIe server, 8x RTX A6000",
                                                 "Workstation, 2x RTX 3090",
                                                 "AWS g5.12xlarge"};

int zs_hw_gpu_entries(const struct zs_hw_gpu_entry **out)
{
    *out = g_gpus;
    return NGPUS;
}

int zs_hw_node_entries(const struct zs_hw_node_entry **out)
{
    *out = g_nodes;
    return NNODES;
}

int zs_hw_list(const char *const **gpus, int *ngpus, const char *const **nodes,
               int *nnodes)
{
    *gpus = g_gpu_names;
    *ngpus = NGPUS;
    *nodes = g_node_names;
    *nnodes = NNODES;
    return 0;
}

const struct zs_hw_gpu_entry *zs_hw_find_gpu(const char *name)
{
    for (int i = 0; i < NGPUS; i++) {
        if (zs_strcaseeq(name, g_gpus[i].name))
            return &g_gpus[i];
        for (int k = 0; g_gpus[i].aliases[k]; k++)
            if (zs_strcaseeq(name, g_gpus[i].aliases[k]))
                return &g_gpus[i];
    }
    return NULL;
}

const char *zs_hw_dir(void)
{
    const char *d = getenv("ZSIM_HWPROFILES");
    return d && *d ? d : ZS_SOURCE_DIR "/hwprofiles";
}

int zs_hw_load_node_named(const char *file, struct zs_node *out,
                          struct zs_err *err)
{
    char path[600];
    snprintf(path, sizeof path, "%s/nodes/%s.json", zs_hw_dir(), file);
    return zs_hw_load_node(path, out, err);
}

/* ---- flags ------------------------------------------------------------- */

int zs_hw_parse_host_ram(const char *text, int64_t *bytes, struct zs_err *err)
{
    int64_t b = 0;
    int rc = zs_parse_bytes(text, &b);
    if (rc == -1)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid --host-ram '%s': not a size (use e.g. "
                          "512GiB, 2TB, 1.5TiB)",
                          text);
    if (rc != 0 || b < ZS_GiB)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid --host-ram '%s': must be in [1 GiB, "
                          "1 PiB]",
                          text);
    *bytes = b;
    return 0;
}

int zs_hw_parse_nodes(const char *text, int *nodes, struct zs_err *err)
{
    long v = 0;
    const char *p = text;
    int digits = 0;
    while (isdigit((unsigned char)*p)) {
        if (v <= ZS_HW_NODES_MAX)
            v = v * 10 + (*p - '0');
        p++;
        digits++;
    }
    if (!digits || *p || v < 1 || v > ZS_HW_NODES_MAX)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid --nodes '%s': must be an integer in [1, "
                          "%d]",
                          text, ZS_HW_NODES_MAX);
    *nodes = (int)v;
    return 0;
}

/* ---- SPECs ------------------------------------------------------------- */

#define SPEC_EXAMPLE "(e.g. 8xH100, 2x8xH100, 4xA100-80GB)"

/* Reads a decimal count; values past 10^9 saturate (they are out of range
 * anyway and must not overflow). */
static const char *read_count(const char *p, long *v)
{
    *v = 0;
    while (isdigit((unsigned char)*p)) {
        if (*v < 1000000000L)
            *v = *v * 10 + (*p - '0');
        p++;
    }
    return p;
}

/* A count and the 'x' after it at *p: its value, its text (*txt, *len) and
 * *p moved past the 'x'. */
static int read_count_x(const char *spec, const char **p, long *v,
                        const char **txt, int *len, struct zs_err *err)
{
    *txt = *p;
    *p = read_count(*p, v);
    *len = (int)(*p - *txt);
    if (**p != 'x' && **p != 'X')
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid cluster spec '%s': expected 'x' after "
                          "the count " SPEC_EXAMPLE,
                          spec);
    (*p)++;
    return 0;
}

/* Whether hay contains needle, ignoring case. */
static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    if (!n)
        return 0;
    for (; *hay; hay++) {
        size_t k = 0;
        while (k < n && hay[k] &&
               tolower((unsigned char)hay[k]) ==
                   tolower((unsigned char)needle[k]))
            k++;
        if (k == n)
            return 1;
    }
    return 0;
}

/* Lists the 3 GPUs closest to name, each by its closest-matching name or
 * alias (a name containing what was typed counts as distance 0; ties go to
 * the shorter label). */
static int unknown_gpu(const char *name, const char *spec, struct zs_err *err)
{
    int dist[NGPUS], used[NGPUS] = {0};
    const char *label[NGPUS];
    char near[200] = "";
    size_t len = 0;

    for (int i = 0; i < NGPUS; i++) {
        dist[i] = 1 << 30;
        label[i] = g_gpus[i].name;
        for (int k = -1; k < 0 || g_gpus[i].aliases[k]; k++) {
            const char *cand = k < 0 ? g_gpus[i].name : g_gpus[i].aliases[k];
            int d = contains_ci(cand, name) ? 0 : zs_str_distance(name, cand);
            if (d < dist[i] ||
                (d == dist[i] && strlen(cand) < strlen(label[i]))) {
                dist[i] = d;
                label[i] = cand;
            }
        }
    }
    for (int r = 0; r < 3 && r < NGPUS; r++) {
        int best = -1;
        for (int i = 0; i < NGPUS; i++)
            if (!used[i] && (best < 0 || dist[i] < dist[best]))
                best = i;
        used[best] = 1;
        len += (size_t)snprintf(near + len, sizeof near - len,
                                r ? ", %s" : "%s", label[best]);
    }
    return zs_err_set(err, ZS_EUSAGE,
                      "unknown GPU '%s' in '%s': closest are %s (see 'zsim hw "
                      "list')",
                      name, spec, near);
}

/* A GPU count beyond the node's: names the node, and how to ask for more
 * GPUs where the node has a network to join more nodes with. */
static int bad_gpu_count(const char *spec, const char *b_txt, int b_len,
                         const char *name, const struct zs_node *n,
                         struct zs_err *err)
{
    if (n->nics < 1 || n->nic_bytes_per_s <= 0)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid GPU count %.*s in '%s': must be in [1, "
                          "%d], the GPUs of one %s node (it has no compute "
                          "network to join more nodes)",
                          b_len, b_txt, spec, n->gpus_installed, n->name);
    return zs_err_set(err, ZS_EUSAGE,
                      "invalid GPU count %.*s in '%s': must be in [1, %d], "
                      "the GPUs of one %s node (for more, give nodes: "
                      "2x%dx%s)",
                      b_len, b_txt, spec, n->gpus_installed, n->name,
                      n->gpus_installed, name);
}

/* A SPEC "[NODES x] GPUS x NAME": the counts, and the GPU's default node
 * loaded into c->node. */
static int resolve_spec(const char *spec, struct zs_cluster *c, long *nnodes,
                        long *ngpus, struct zs_err *err)
{
    const struct zs_hw_gpu_entry *ge = NULL;
    long a = 0, b = -1;
    const char *p, *name, *a_txt = NULL, *b_txt = NULL;
    int a_len = 0, b_len = 0;
    int rc;

    /* [NODES x] GPUS x NAME */
    p = spec;
    if (!isdigit((unsigned char)*p))
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid cluster spec '%s': must start with a "
                          "GPU count " SPEC_EXAMPLE,
                          spec);
    rc = read_count_x(spec, &p, &a, &a_txt, &a_len, err);
    if (!rc && isdigit((unsigned char)*p))
        rc = read_count_x(spec, &p, &b, &b_txt, &b_len, err);
    if (rc)
        return rc;
    name = p;
    if (!*name)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid cluster spec '%s': missing the GPU "
                          "name " SPEC_EXAMPLE,
                          spec);
    if (b >= 0) {
        *nnodes = a;
        *ngpus = b;
    } else {
        *ngpus = a;
        b_txt = a_txt;
        b_len = a_len;
    }
    /* Counts are quoted as typed: saturated values must not show. */
    if (*nnodes < 1 || *nnodes > ZS_HW_NODES_MAX)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid node count %.*s in '%s': must be in "
                          "[1, %d]",
                          a_len, a_txt, spec, ZS_HW_NODES_MAX);
    ge = zs_hw_find_gpu(name);
    if (!ge)
        return unknown_gpu(name, spec, err);
    rc = zs_hw_load_node_named(ge->node_file, &c->node, err);
    if (rc)
        return rc;
    /* The node's file names its own GPU; a SPEC naming another part
     * of the same node type (none today) would need its own file. */
    if (!zs_strcaseeq(c->node.gpu.name, ge->name))
        return zs_err_set(err, ZS_EINPUT,
                          "invalid 'gpu' in %s: the default node for %s "
                          "must hold %s (got %s)",
                          c->node.file, ge->name, ge->name, c->node.gpu.name);
    if (*ngpus < 1 || *ngpus > c->node.gpus_installed)
        return bad_gpu_count(spec, b_txt, b_len, name, &c->node, err);
    return 0;
}

/* --nodes and --host-ram, checked against the node. */
static int apply_overrides(const char *spec, int64_t host_ram_bytes, int nodes,
                           struct zs_cluster *c, struct zs_err *err)
{
    if (nodes > 0) {
        if (nodes > ZS_HW_NODES_MAX)
            return zs_err_set(err, ZS_EUSAGE,
                              "invalid node count %d: must be in [1, %d]",
                              nodes, ZS_HW_NODES_MAX);
        c->nodes = nodes;
    }
    if (c->nodes > 1 && (c->node.nics < 1 || c->node.nic_bytes_per_s <= 0))
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid node count %d for '%s': %s has no compute "
                          "network",
                          c->nodes, spec, c->node.name);
    return zs_hw_set_host(c, host_ram_bytes, 0, err);
}

int zs_hw_set_host(struct zs_cluster *c, int64_t ram_bytes,
                   int64_t reserved_bytes, struct zs_err *err)
{
    int64_t ram = ram_bytes > 0 ? ram_bytes : c->node.host_ram_bytes;
    int64_t res = reserved_bytes > 0 ? reserved_bytes
                                     : c->node.host_reserved_bytes;
    if (ram <= res) {
        char got[24], r[24];
        zs_fmt_bytes(got, sizeof got, ram);
        zs_fmt_bytes(r, sizeof r, res);
        return reserved_bytes > 0
                   ? zs_err_set(err, ZS_EUSAGE,
                                "invalid --host-reserved %s for %s: must be "
                                "less than its %s of host RAM",
                                r, c->node.name, got)
                   : zs_err_set(err, ZS_EUSAGE,
                                "invalid host RAM %s for %s: must be more "
                                "than the %s reserved for the OS",
                                got, c->node.name, r);
    }
    c->node.host_ram_bytes = ram;
    c->node.host_reserved_bytes = res;
    return 0;
}

int zs_hw_resolve(const char *spec, int64_t host_ram_bytes, int nodes,
                  struct zs_cluster *out, struct zs_err *err)
{
    struct zs_cluster c;
    long nnodes = 1, ngpus = 0;
    int rc;

    memset(&c, 0, sizeof c);
    if (strlen(spec) >= sizeof c.spec)
        return zs_err_set(err, ZS_EUSAGE,
                          "invalid cluster spec '%.40s...': longer than %zu "
                          "characters",
                          spec, sizeof c.spec - 1);
    zs_strlcpy(c.spec, spec, sizeof c.spec);

    if (zs_str_endswith(spec, ".json")) {
        /* A node profile file: all its GPUs, one node unless --nodes. */
        rc = zs_hw_load_node(spec, &c.node, err);
        if (rc)
            return rc;
        ngpus = c.node.gpus_installed;
    } else {
        rc = resolve_spec(spec, &c, &nnodes, &ngpus, err);
        if (rc)
            return rc;
    }
    c.nodes = (int)nnodes;
    c.node.gpus_per_node = (int)ngpus;
    rc = apply_overrides(spec, host_ram_bytes, nodes, &c, err);
    if (rc)
        return rc;
    *out = c;
    return 0;
}
