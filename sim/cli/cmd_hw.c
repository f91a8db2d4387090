/*
 * cmd_hw.c — `zsim hw list` and `zsim hw show SPEC`: the hardware profiles
 * zsim knows, and one resolved cluster with every figure and its source.
 *
 * Exit statuses: a bad SPEC or flag value is a usage error (2); a profile
 * file that does not load is invalid input (3).
 */
#include "cli/cli_setup.h"
#include "hw/hw.h"
#include "present/hwout.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/strutil.h"
#include "util/table.h"
#include "util/units.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char hw_usage[] =
    "usage: zsim hw list\n"
    "       zsim hw show SPEC [--host-ram SIZE] [--nodes N] [--json]\n"
    "\n"
    "Hardware profiles: GPUs, nodes, and clusters built from them.\n"
    "\n"
    "SPEC names a cluster: [NODES x] GPUS x GPU, e.g. 8xH100, 2x8xH100,\n"
    "4xA100-80GB, 8xH200, 8xL40S.  GPUS is the number of GPUs used per node\n"
    "(at most what the GPU's default node has); GPU names are\n"
    "case-insensitive and have aliases ('zsim hw list').  A path ending in\n"
    ".json names a node profile file instead (all its GPUs, one node).\n"
    "\n"
    "options:\n"
    "  --host-ram SIZE  host RAM per node instead of the node's (e.g. 512GiB)\n"
    "  --nodes N        number of nodes (1 to 1024) instead of the SPEC's\n"
    "  --json           one JSON document (schema \"zsim.hw/1\")\n"
    "\n"
    "Profiles are read from $ZSIM_HWPROFILES, else the source tree's\n"
    "hwprofiles/.\n"
    "\n"
    "examples:\n"
    "  zsim hw list\n"
    "  zsim hw show 2x8xH100 --host-ram 1TiB\n"
    "\n"
    "exit codes: 0 ok, 2 usage error (bad SPEC or flag value), 3 invalid\n"
    "profile file.\n";

static const struct zs_opt hw_opts[] = {
    {"host-ram", 1},
    {"nodes", 1},
    {"json", 0},
};
#define NOPTS (sizeof hw_opts / sizeof hw_opts[0])

/* ---- hw list ------------------------------------------------------------ */

static int hw_list(struct zs_err *err)
{
    const struct zs_hw_node_entry *ne;
    int nn = zs_hw_node_entries(&ne), rc = 0;
    struct zs_node *nodes = zs_calloc((size_t)nn, sizeof *nodes);

    if (!nodes)
        return zs_err_set(err, ZS_ENOMEM, "out of memory");
    for (int i = 0; i < nn && !rc; i++)
        rc = zs_hw_load_node_named(ne[i].file, &nodes[i], err);
    if (!rc)
        rc = zs_hwout_list(nodes, err);
    zs_free(nodes);
    return rc;
}

static int hw_show(const struct zs_args *a, struct zs_err *err)
{
    const char *ram = zs_args_get(a, hw_opts, NOPTS, "host-ram");
    const char *nodes_s = zs_args_get(a, hw_opts, NOPTS, "nodes");
    int64_t host_ram = 0;
    int nodes = 0, rc;
    struct zs_cluster *c;

    if (a->npos != 2)
        return zs_err_set(err, ZS_EUSAGE,
                          a->npos < 2 ? "'hw show' needs a SPEC, e.g. "
                                        "'zsim hw show 8xH100'"
                                      : "'hw show' takes one SPEC");
    if (ram && (rc = zs_hw_parse_host_ram(ram, &host_ram, err)))
        return rc;
    if (nodes_s && (rc = zs_hw_parse_nodes(nodes_s, &nodes, err)))
        return rc;
    c = zs_calloc(1, sizeof *c);
    if (!c)
        return zs_err_set(err, ZS_ENOMEM, "out of memory");
    rc = zs_hw_resolve(a->pos[1], host_ram, nodes, c, err);
    if (!rc) {
        if (zs_args_get(a, hw_opts, NOPTS, "json"))
            zs_hwout_json(c);
        else if ((rc = zs_hwout_text(c, host_ram)))
            zs_err_set(err, rc, "out of memory");
    }
    zs_free(c);
    return rc;
}

static const struct zs_cli_list_show hw_subs = {
    hw_list, hw_show, "unknown 'hw' subcommand '%s': use list or show",
    "unknown 'hw' subcommand '%s': did you mean '%s'?"};

static int hw_run(int argc, char **argv, struct zs_err *err)
{
    return zs_cli_run_list_show(argc, argv, hw_opts, NOPTS, "hw", &hw_subs,
                                err);
}

const struct zs_cmd zs_cmd_hw = {
    "hw",
    "hardware profiles: list them, show one cluster with sources",
    hw_usage,
    hw_run,
};
