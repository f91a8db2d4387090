/*
 * hwout.h — what `zsim hw` prints: the GPU and node profiles zsim knows, and
 * one resolved cluster with every figure and its source, as text or JSON.
 */
#ifndef ZS_HWOUT_H
#define ZS_HWOUT_H

#include "hw/hw.h"
#include "util/err.h"

#include <stdint.h>

/* `hw list`: nodes[i] is the loaded profile of zs_hw_node_entries()'s i-th
 * entry.  Returns 0 or a negative ZS_E* code with err set. */
int zs_hwout_list(const struct zs_node *nodes, struct zs_err *err);
/* `hw show`: host_ram_override is the --host-ram given (0: none).  Returns 0
 * or ZS_ENOMEM. */
int zs_hwout_text(const struct zs_cluster *c, int64_t host_ram_override);
void zs_hwout_json(const struct zs_cluster *c);

#endif
