/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Discovery: a directed-route sweep from the local port, many SMPs in
 * flight. NodeInfo and NodeDescription of every node, PortInfo of every
 * port, SwitchInfo of switches; links from which port each NodeInfo came
 * in by. The result is a new, frozen struct ibw_fabric.
 */
#ifndef IBW_DISCOVER_H
#define IBW_DISCOVER_H

#include "engine.h"
#include "fabric.h"

struct ibw_discover;

struct ibw_discover_opts {
	unsigned timeout_ms; /* per try; 0: the engine's default */
	int retries; /* -1: the engine's default */
};

/* Called once with the new fabric (the callee owns the reference), or
 * NULL if the sweep could not run at all. */
typedef void (*ibw_discover_cb)(struct ibw_fabric *f, void *arg);

/* Start a sweep; 0 or -errno. At most one sweep per handle at a time. */
struct ibw_discover *ibw_discover_new(struct ibw_engine *e,
				      const struct ibw_discover_opts *o);
void ibw_discover_free(struct ibw_discover *d);
int ibw_discover_start(struct ibw_discover *d, ibw_discover_cb cb, void *arg);
/* The last sweep's picture (a reference is kept; NULL drops it): a node
 * that now refuses our SMPs (M_Key protection) is looked past through
 * the links it had then. */
void ibw_discover_set_prev(struct ibw_discover *d, struct ibw_fabric *f);

#endif
