// SPDX-License-Identifier: BSD-2-Clause
/*
 * A port record's counter values (counters.h): the detail counters' block,
 * made by their first reading and copied on write while a snapshot's
 * chunk shares it; the references a record holds, taken and dropped. A
 * leaf: the store, the state file and the journal call it, it calls none
 * of them.
 */
#include <stdlib.h>
#include <string.h>

#include "counters.h"

const struct ibw_ctr_val ibw_ctr_val_none;

void ibw_ctr_details_ref(struct ibw_ctr_details *d)
{
	if (d)
		__atomic_add_fetch(&d->refs, 1, __ATOMIC_RELAXED);
}

void ibw_ctr_details_unref(struct ibw_ctr_details *d)
{
	if (d && !__atomic_sub_fetch(&d->refs, 1, __ATOMIC_ACQ_REL))
		free(d);
}

struct ibw_ctr_val *ibw_ctr_val_w(struct ibw_port_ctrs *p, enum ibw_ctr c)
{
	struct ibw_ctr_details *d;

	if ((unsigned)c < IBW_CTR_NBASE)
		return &p->v[c];
	if ((unsigned)c >= IBW_CTR_MAX)
		return NULL;
	/* as own_record(): a count of 1 is ours alone */
	if (!p->det || __atomic_load_n(&p->det->refs, __ATOMIC_ACQUIRE) > 1) {
		d = malloc(sizeof(*d));
		if (!d)
			return NULL;
		if (p->det)
			memcpy(d->v, p->det->v, sizeof(d->v));
		else
			memset(d->v, 0, sizeof(d->v));
		d->refs = 1;
		ibw_ctr_details_unref(p->det);
		p->det = d;
	}
	return &p->det->v[c - IBW_CTR_NBASE];
}

void ibw_ctr_port_share(const struct ibw_port_ctrs *p)
{
	ibw_fec_ref(p->fec);
	ibw_cong_ref(p->cong);
	ibw_ctr_details_ref(p->det);
}

void ibw_ctr_port_release(struct ibw_port_ctrs *p)
{
	ibw_fec_unref(p->fec);
	ibw_cong_unref(p->cong);
	ibw_ctr_details_unref(p->det);
	p->fec = NULL;
	p->cong = NULL;
	p->det = NULL;
}
