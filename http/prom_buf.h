/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The Prometheus renderers' output buffer (http/prom.c, prom_exporter.c):
 * text appended, grown as needed or handed to a sink in pieces; a failed
 * allocation sets oom and every later write does nothing. Internal to
 * http/.
 */
#ifndef IBW_PROM_BUF_H
#define IBW_PROM_BUF_H

#include <stddef.h>
#include <stdint.h>

struct ibw_pb {
	char *p;
	size_t len, cap;
	int oom;
	int om; /* OpenMetrics */
	/* Given what was written whenever @hold bytes would be passed. */
	int (*sink)(void *arg, const char *p, size_t n);
	void *sink_arg;
	size_t hold;
	/*
	 * A label put first into every sample of the text written, as
	 * `name{LABEL,...}` (docs/api.md, "The fabric label"): of every
	 * family with @xall, else of the ibwatch_* ones; none while
	 * @xlabel is "". Applied as the text is handed on (the sink, or
	 * ibw_pb_finish()), so the renderers know nothing of it.
	 */
	char xlabel[64];
	int xall;
	/* private: where in a line the text handed on so far ends */
	int xst, xpm;
	char *x;
	size_t xlen, xcap;
};

/* Set the label @b puts into every sample: `fabric="@id"` (NULL or ""
 * for none), of every family with @all, else of the ibwatch_* ones. */
void ibw_pb_fabric_label(struct ibw_pb *b, const char *id, int all);
/* Hand on what was written to the sink: 0, or -1 (and b->oom). */
int ibw_pb_flush(struct ibw_pb *b);

void ibw_pb_put(struct ibw_pb *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Append @n bytes as they are: the hot path of a large scrape. */
void ibw_pb_mem(struct ibw_pb *b, const char *s, size_t n);
void ibw_pb_u64(struct ibw_pb *b, uint64_t v);
/* A label value: backslash, double quote and newline escaped. */
void ibw_pb_label(struct ibw_pb *b, const char *s);
/* A family's HELP and TYPE lines (OpenMetrics: a counter named without
 * its _total). */
void ibw_pb_family(struct ibw_pb *b, const char *name, const char *type,
		   const char *help);
/* The text written, NUL-terminated (its length in *@len), for the
 * caller to free; NULL when out of memory. */
char *ibw_pb_finish(struct ibw_pb *b, size_t *len);

/* "switch" or "hca", as the exporter's series name them. */
static inline const char *ibw_pb_kind(int is_switch)
{
	return is_switch ? "switch" : "hca";
}

struct ibw_link;
struct ibw_snapshot_port;

/* A cable's series name and labels, up to the closing brace: its lower
 * end (guid, port) and the other (remote_guid, remote_port). */
void ibw_prom_link_labels(struct ibw_pb *b, const char *name,
			  const struct ibw_link *k);

#endif
