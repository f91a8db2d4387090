/*
 * table.c — see table.h.  Width is counted in UTF-8 code points so that
 * "±" or "×" in a cell do not skew the columns.
 */
#include "util/table.h"
#include "util/alloc.h"
#include "util/err.h"

#include <stdarg.h>
#include <string.h>

#define ZS_TABLE_MAXCOLS 32

struct zs_table {
    int ncols;
    char align[ZS_TABLE_MAXCOLS];
    char **cells; /* nrows * ncols, owned */
    int *kind;    /* per row: ROW_CELLS, ROW_HEADER or ROW_NOTE */
    size_t nrows, cap;
    int next_header;
};

enum { ROW_CELLS, ROW_HEADER, ROW_NOTE };

static size_t u8len(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            n++;
    return n;
}

struct zs_table *zs_table_new(int ncols, const char *align)
{
    struct zs_table *t;
    if (ncols < 1 || ncols > ZS_TABLE_MAXCOLS)
        return NULL;
    t = zs_calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->ncols = ncols;
    for (int i = 0; i < ncols; i++)
        t->align[i] = (align && (int)strlen(align) > i) ? align[i] : 'l';
    return t;
}

void zs_table_free(struct zs_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nrows * (size_t)t->ncols; i++)
        zs_free(t->cells[i]);
    zs_free(t->cells);
    zs_free(t->kind);
    zs_free(t);
}

void zs_table_header(struct zs_table *t)
{
    t->next_header = 1;
}

/* A row of ncols cells of the given kind. */
static int add_row(struct zs_table *t, const char *const *cells, int kind)
{
    size_t cap_cells = t->cap * (size_t)t->ncols, cap_rows = t->cap;
    size_t base = t->nrows * (size_t)t->ncols;
    if (t->nrows + 1 > t->cap) {
        if (zs_grow((void **)&t->cells, &cap_cells,
                    (t->nrows + 1) * (size_t)t->ncols, sizeof(char *)))
            return ZS_ENOMEM;
        if (zs_grow((void **)&t->kind, &cap_rows, t->nrows + 1, sizeof(int)))
            return ZS_ENOMEM;
        t->cap = cap_rows < cap_cells / (size_t)t->ncols
                     ? cap_rows
                     : cap_cells / (size_t)t->ncols;
    }
    for (int c = 0; c < t->ncols; c++) {
        t->cells[base + (size_t)c] = zs_strdup(cells[c] ? cells[c] : "");
        if (!t->cells[base + (size_t)c]) {
            for (int k = 0; k < c; k++)
                zs_free(t->cells[base + (size_t)k]);
            return ZS_ENOMEM;
        }
    }
    t->kind[t->nrows] = kind;
    t->nrows++;
    return 0;
}

int zs_table_row(struct zs_table *t, const char *const *cells)
{
    int rc = add_row(t, cells, t->next_header ? ROW_HEADER : ROW_CELLS);
    if (!rc)
        t->next_header = 0;
    return rc;
}

int zs_table_note(struct zs_table *t, const char *text)
{
    const char *cells[ZS_TABLE_MAXCOLS] = {text};
    return add_row(t, cells, ROW_NOTE);
}

int zs_table_rowf(struct zs_table *t, const char *fmt, ...)
{
    char buf[2048];
    const char *cells[ZS_TABLE_MAXCOLS] = {0};
    va_list ap;
    char *p = buf;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (int c = 0; c < t->ncols; c++) {
        cells[c] = p;
        if (!p)
            continue;
        p = strchr(p, '\t');
        if (p)
            *p++ = '\0';
    }
    return zs_table_row(t, cells);
}

void zs_table_print(const struct zs_table *t, FILE *out, int indent)
{
    size_t w[ZS_TABLE_MAXCOLS] = {0};
    for (size_t r = 0; r < t->nrows; r++)
        for (int c = 0; c < t->ncols && t->kind[r] != ROW_NOTE; c++) {
            size_t l = u8len(t->cells[r * (size_t)t->ncols + (size_t)c]);
            if (l > w[c])
                w[c] = l;
        }
    for (size_t r = 0; r < t->nrows; r++) {
        size_t total = 0;
        fprintf(out, "%*s", indent, "");
        if (t->kind[r] == ROW_NOTE) {
            fprintf(out, "%s\n", t->cells[r * (size_t)t->ncols]);
            continue;
        }
        for (int c = 0; c < t->ncols; c++) {
            const char *s = t->cells[r * (size_t)t->ncols + (size_t)c];
            size_t pad = w[c] - u8len(s);
            int last = c == t->ncols - 1;
            if (t->align[c] == 'r')
                fprintf(out, "%*s%s", (int)pad, "", s);
            else
                fprintf(out, "%s%*s", s, last ? 0 : (int)pad, "");
            if (!last)
                fputs("  ", out);
            total += w[c] + (last ? 0 : 2);
        }
        fputc('\n', out);
        if (t->kind[r] == ROW_HEADER) {
            fprintf(out, "%*s", indent, "");
            for (size_t i = 0; i < total; i++)
                fputc('-', out);
            fputc('\n', out);
        }
    }
}
