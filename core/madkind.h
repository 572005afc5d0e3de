/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Kinds of MAD request (management class, method, attribute) and what
 * each kind's requests came to: the engine keeps a small table of them
 * in its stats, so that a timeout is explained by what was asked
 * (/api/v1/status, /metrics). Names are the IBA's, as perfquery and
 * libibmad spell them.
 */
#ifndef IBW_MADKIND_H
#define IBW_MADKIND_H

#include <stddef.h>
#include <stdint.h>

/* The kinds kept; once they are all taken, one slot counts the rest. */
#define IBW_MAD_KINDS 32

struct ibw_mad_kind {
	uint8_t mgmt_class; /* 0: the slot of every other kind */
	uint8_t method;
	uint16_t attr;
	uint64_t requests; /* ended, whatever the result */
	uint64_t timeouts; /* of them, out of tries */
	uint64_t errors; /* of them, answered with an error status */
	uint64_t answered; /* of them, answered (well or with an error) */
	/* of them, ended at once unsent: the kind is silent (engine.h,
	 * IBW_MAD_F_OPTIONAL), or the destination's PMA is (engine.c,
	 * dest_silent()) */
	uint64_t skipped;
	uint64_t try_timeouts; /* tries of the kind that went unanswered */
};

struct ibw_mad_kinds {
	struct ibw_mad_kind k[IBW_MAD_KINDS]; /* in the order first seen */
	unsigned n;
};

/* The slot of @mad's kind (its MAD header), taken if new; once the
 * table is full, the slot of every other kind (mgmt_class 0). */
struct ibw_mad_kind *ibw_mad_kinds_get(struct ibw_mad_kinds *t,
				       const uint8_t *mad);

/* Tries of a kind that went unanswered before it may be silent. */
#define IBW_MAD_SILENT_TRIES 16

/* Silent: a kind no node has ever answered, well or with an error, of
 * which IBW_MAD_SILENT_TRIES tries went unanswered (never the slot of
 * every other kind). The engine sends one of it at a time then. */
static inline int ibw_mad_kind_silent(const struct ibw_mad_kind *k)
{
	return k->mgmt_class && !k->answered &&
	       k->try_timeouts >= IBW_MAD_SILENT_TRIES;
}

/* A request of @mad's kind ended: @timeout if it ran out of tries,
 * @error if it was answered with an error status, else answered. */
void ibw_mad_kinds_count(struct ibw_mad_kinds *t, const uint8_t *mad,
			 int timeout, int error);

/* "PerfMgt" ... or NULL for a class, method or attribute without a name
 * here (a renderer shows its number). */
const char *ibw_mad_class_str(uint8_t mgmt_class);
const char *ibw_mad_method_str(uint8_t method);
const char *ibw_mad_attr_str(uint8_t mgmt_class, uint16_t attr);

/* @k's class, method and attribute as text into the three buffers
 * (names, else "0x.." numbers; "other" for the slot of the rest). */
void ibw_mad_kind_names(const struct ibw_mad_kind *k, char cls[16],
			char method[16], char attr[32]);

#endif
