/*
 * lintout.c — see lintout.h.  `zsim lint`: the findings table, each finding
 * in full and the verdict, or the zsim.lint/1 document.
 */
#include "present/lintout.h"
#include "util/table.h"
#include "util/units.h"

#include <cjson/cJSON.h>
#include <stdio.h>

void zs_lintout_text(const struct zs_dsconfig *ds,
                     const struct zs_lint_report *r,
                     const struct zs_lint_input *in, FILE *out)
{
    char v[16];

    fprintf(out,
            "%s: DeepSpeed %s%s, ZeRO-%lld, offload_param=%s, "
            "offload_optimizer=%s\n",
            ds->path, zs_ds_version_fmt(&ds->version, v, sizeof v),
            in->version_given ? "" : " (assumed)", (long long)ds->zero_stage.v,
            zs_ds_device_name((int)ds->offload_param.device.v),
            zs_ds_device_name((int)ds->offload_optimizer.device.v));
    if (in->model)
        fprintf(out, "model: %s\n",
                in->model->resolved_from[0] ? in->model->resolved_from
                                            : in->model->name);
    if (in->cluster) {
        char b[24];
        fprintf(out,
                "cluster: %s (%d node(s) x %d GPUs, host RAM %s per node)\n",
                in->cluster->spec, in->cluster->nodes,
                in->cluster->node.gpus_per_node,
                zs_fmt_bytes(b, sizeof b, in->cluster->node.host_ram_bytes));
    }
    if (r->n > 0) {
        struct zs_table *t = zs_table_new(3, "lll");
        if (t) {
            fputc('\n', out);
            zs_table_header(t);
            zs_table_rowf(t, "severity\tid\ttitle");
            for (int i = 0; i < r->n; i++)
                zs_table_rowf(t, "%s\t%s\t%s",
                              zs_lint_sev_name(r->finding[i].severity),
                              r->finding[i].id, r->finding[i].title);
            zs_table_print(t, out, 2);
            zs_table_free(t);
        }
        for (int i = 0; i < r->n; i++) {
            const struct zs_lint_finding *f = &r->finding[i];
            fprintf(out, "\n%s %s: %s\n", zs_lint_sev_name(f->severity), f->id,
                    f->title);
            if (f->where[0])
                fprintf(out, "  where:  %s\n", f->where);
            fprintf(out, "  why:    %s\n", f->explanation);
            fprintf(out, "  source: %s\n", f->source);
            fprintf(out, "  fix:    %s\n", f->fix);
        }
        if (r->dropped)
            fprintf(out, "\n(%d more findings not shown)\n", r->dropped);
    }
    fprintf(out, "\n%s: %d error(s), %d warning(s), %d info\n",
            r->n_error ? "FAIL" : "ok", r->n_error, r->n_warning, r->n_info);
}

int zs_lintout_json(const struct zs_dsconfig *ds,
                    const struct zs_lint_report *r,
                    const struct zs_lint_input *in, FILE *out,
                    struct zs_err *err)
{
    cJSON *root = cJSON_CreateObject(), *arr, *o, *nums, *cnt;
    char v[16], *text;
    int ok = root != NULL;

#define CHK(x)                                                                 \
    do {                                                                       \
        if (!(x))                                                              \
            ok = 0;                                                            \
    } while (0)
    if (ok) {
        CHK(cJSON_AddStringToObject(root, "schema", "zsim.lint/1"));
        CHK(cJSON_AddStringToObject(root, "ds_config", ds->path));
        CHK(cJSON_AddStringToObject(
            root, "deepspeed_version",
            zs_ds_version_fmt(&ds->version, v, sizeof v)));
        CHK(cJSON_AddBoolToObject(root, "deepspeed_version_assumed",
                                  !in->version_given));
        CHK(cJSON_AddNumberToObject(root, "zero_stage",
                                    (double)ds->zero_stage.v));
        CHK(cJSON_AddStringToObject(
            root, "offload_param",
            zs_ds_device_name((int)ds->offload_param.device.v)));
        CHK(cJSON_AddStringToObject(
            root, "offload_optimizer",
            zs_ds_device_name((int)ds->offload_optimizer.device.v)));
        if (in->model)
            CHK(cJSON_AddStringToObject(root, "model", in->model->name));
        if (in->cluster)
            CHK(cJSON_AddStringToObject(root, "cluster", in->cluster->spec));
        CHK(cJSON_AddStringToObject(root, "verdict",
                                    r->n_error ? "fail" : "ok"));
        CHK(cnt = cJSON_AddObjectToObject(root, "counts"));
        if (cnt) {
            CHK(cJSON_AddNumberToObject(cnt, "error", r->n_error));
            CHK(cJSON_AddNumberToObject(cnt, "warning", r->n_warning));
            CHK(cJSON_AddNumberToObject(cnt, "info", r->n_info));
            CHK(cJSON_AddNumberToObject(cnt, "not_listed", r->dropped));
        }
        CHK(arr = cJSON_AddArrayToObject(root, "findings"));
        for (int i = 0; ok && arr && i < r->n; i++) {
            const struct zs_lint_finding *f = &r->finding[i];
            o = cJSON_CreateObject();
            if (!o || !cJSON_AddItemToArray(arr, o)) {
                cJSON_Delete(o);
                ok = 0;
                break;
            }
            CHK(cJSON_AddStringToObject(o, "id", f->id));
            CHK(cJSON_AddStringToObject(o, "severity",
                                        zs_lint_sev_name(f->severity)));
            CHK(cJSON_AddStringToObject(o, "title", f->title));
            CHK(cJSON_AddStringToObject(o, "where", f->where));
            CHK(cJSON_AddStringToObject(o, "explanation", f->explanation));
            CHK(cJSON_AddStringToObject(o, "source", f->source));
            CHK(cJSON_AddStringToObject(o, "fix", f->fix));
            CHK(nums = cJSON_AddObjectToObject(o, "numbers"));
            for (int k = 0; nums && k < f->n_numbers; k++)
                CHK(cJSON_AddNumberToObject(nums, f->numbers[k].name,
                                            f->numbers[k].value));
        }
    }
#undef CHK
    text = ok ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!text)
        return zs_err_set(err, ZS_ENOMEM, "out of memory printing JSON");
    fprintf(out, "%s\n", text);
    cJSON_free(text);
    return 0;
}
