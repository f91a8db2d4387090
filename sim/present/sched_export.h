/*
 * sched_export.h — one simulated rank's task list in the harness's schedule
 * format (zsim.schedule/1, harness/SCHEDULE.md), with zsim's predicted times
 * and peaks, for `zsim schedule export`.
 */
#ifndef ZS_SCHED_EXPORT_H
#define ZS_SCHED_EXPORT_H

#include "sched/sched.h"

/* sim holds the records of the run that filled ex (zs_simulate with
 * su->ex = ex).  rank is recorded in the header: ranks of a data-parallel job
 * run the same schedule. */
int zs_export_schedule(const struct zs_setup *su, zs_sim *sim,
                       const struct zs_export *ex,
                       const struct zs_sim_result *res, int64_t rank,
                       const char *path, struct zs_err *err);

#endif
