/*
 * table.h — aligned text tables for people (STYLE: "aligned tables with
 * units").
 *
 * Cells are copied into the table; columns are sized to their widest cell;
 * a column is right-aligned when flagged numeric.  Printing is the only I/O.
 */
#ifndef ZS_TABLE_H
#define ZS_TABLE_H

#include <stdio.h>

struct zs_table;

/* ncols <= 32.  align: string of ncols chars, 'l' or 'r' (NULL = all 'l'). */
struct zs_table *zs_table_new(int ncols, const char *align);
void zs_table_free(struct zs_table *t);
/* Adds a row of ncols cells (NULL cell = empty).  Returns 0 or ZS_ENOMEM. */
int zs_table_row(struct zs_table *t, const char *const *cells);
/* printf-style convenience: fmt cells separated by '\t'. */
int zs_table_rowf(struct zs_table *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Marks the next row as a header (underlined when printed). */
void zs_table_header(struct zs_table *t);
/* Adds a line printed as it is after the indent, under the rows before it;
 * it does not size the columns.  Returns 0 or ZS_ENOMEM. */
int zs_table_note(struct zs_table *t, const char *text);
/* Prints with `indent` leading spaces and two spaces between columns. */
void zs_table_print(const struct zs_table *t, FILE *out, int indent);

#endif
