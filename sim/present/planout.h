/*
 * planout.h — what `zsim plan` prints: the people's report of one search and
 * its JSON document (schema "zsim.plan/1", an interface: keys change only
 * with a schema bump; out/report_doc.c reads it).
 */
#ifndef ZS_PLANOUT_H
#define ZS_PLANOUT_H

#include "plan/plan.h"

#include <stdio.h>

/* The report: the search, the best plan and the `top` best ranked, then the
 * rejected ones grouped by reason (closest misses first).  Marks the
 * candidates it shows (their `score`), so it runs once per plan. */
void zs_planout_print(const struct zs_plan *p, const struct zs_model *m,
                      const struct zs_cluster *cl, const struct zs_cfg *base,
                      int top, int framework_any, FILE *out);
/* Returns a heap string (zs_free) or NULL on allocation failure. */
char *zs_planout_json(const struct zs_plan *p, const struct zs_model *m,
                      const struct zs_cluster *cl);
/* After --emit-ds-config: "wrote FILE" and the launch command that reads
 * it; with ds_config NULL (the best plan is FSDP2) the launch command and the
 * fully_shard settings instead. */
void zs_planout_launch(const struct zs_cfg *f, const struct zs_cluster *cl,
                       const char *ds_config, FILE *out);

#endif
