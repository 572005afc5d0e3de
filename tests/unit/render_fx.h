/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the renderers' unit tests (test_render.c, test_render_exporter.c)
 * share beside the fixture snapshot (snapfixture.h): a file read whole,
 * lines looked for in a rendered text, the writer's output against
 * jansson's. The tests are in test_render.c, test_render_writer.c and
 * test_render_exporter.c.
 */
#ifndef IBW_RENDER_FX_H
#define IBW_RENDER_FX_H

#include <jansson.h>

#include "json.h"

/* @path's bytes with a NUL after them (malloc'd), NULL if unreadable. */
char *slurp(const char *path);
/* @text has a line that starts with @prefix and holds @sub. */
int has_line_with(const char *text, const char *prefix, const char *sub);
/* @text has a line that starts with @prefix. */
int has_line(const char *text, const char *prefix);

/* @j written as jansson writes it (indent 2, sorted keys) with a
 * newline; @j is released. */
char *dump(json_t *j);
/* The writer's document with the newline --once and the fixtures add. */
char *written(struct ibw_jw *w);
/* What the writer wrote, @t, is what jansson writes for the tree of the
 * same document (parsed and dumped again). */
void same_as_tree(const char *t);

/* test_render_writer.c: the JSON writer against jansson */
void test_writer_many_keys(void **state);
void test_writer_scalars(void **state);
void test_writer_refuses(void **state);

/* test_render_exporter.c: infiniband_exporter's series and rows */
void test_exporter_series(void **state);
void test_exporter_rows(void **state);
void test_exporter_dual_port(void **state);
void test_hca_counters_join_uplink(void **state);
void test_fabric_label(void **state);

#endif
