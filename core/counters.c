// SPDX-License-Identifier: BSD-2-Clause
/*
 * The counter sweep (counters.h), the top of its stack: each node's job
 * (ClassPortInfo asked ahead, then its ports' reads, ctr_read.c), the
 * feed and the pace that start them, silence learned per node, and the
 * sweep's end and figures. Below it, one way: the reads (ctr_read.c,
 * ctr_tick.c), the PerfMgt requests and the PMAs' capabilities
 * (ctr_pma.c), the port records (ctr_store.c). The layers below tell
 * it of an answer through c->answered, set here.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "counters_int.h"
#include "hash.h"
#include "log.h"
#include "loop.h"

static void cap_set(struct ibw_counters *c, uint64_t guid, uint32_t mask,
		    uint32_t mask2)
{
	struct node_cap *nc = ibw_ctr_cap_get(c, guid);

	if (!nc)
		return;
	nc->capmask = mask;
	nc->capmask2 = mask2;
	nc->have_mask = 1;
	nc->cpi_lost = 0;
}

struct cpi_op {
	struct ibw_counters *c;
	uint64_t sweep;
	unsigned job;
	uint8_t early; /* counted in early_out */
};

/* None of @j's ports can be read this sweep, for @why. */
static void fail_job_ports(struct ibw_counters *c, const struct job *j,
			   enum ibw_ctr_fail why)
{
	unsigned i;

	for (i = 0; i < j->nports; i++) {
		struct port_op po;

		memset(&po, 0, sizeof(po));
		po.guid = j->guid;
		po.port = j->port_list[i];
		po.is_switch = j->is_switch;
		po.fail = (uint8_t)why;
		ibw_ctr_port_failed(c, &po);
	}
}

static void start_cpi(struct ibw_counters *c, unsigned idx);
static void sweep_done_if_idle(struct ibw_counters *c);

/* @j's ClassPortInfo is answered or failed: its ports' MADs are now
 * pending themselves, or never will be. */
static void unreserve(struct ibw_counters *c, struct job *j)
{
	c->reserved -= j->reserved;
	j->reserved = 0;
}

const char *ibw_redirect_refusal_str(int why)
{
	switch (why) {
	case IBW_REDIRECT_PARTITION:
		return "partition";
	case IBW_REDIRECT_QKEY:
		return "q_key";
	case IBW_REDIRECT_GID:
		return "gid";
	default:
		return "none";
	}
}

/* Why the redirect in @nc cannot be followed from a umad port, or
 * IBW_REDIRECT_OK. */
static int redirect_refusal(const struct node_cap *nc)
{
	if ((nc->rpkey & 0x7fff) != 0x7fff && nc->rpkey != 0)
		return IBW_REDIRECT_PARTITION;
	if (nc->rqkey && nc->rqkey != IBW_QP1_QKEY)
		return IBW_REDIRECT_QKEY;
	if (!nc->rlid)
		return IBW_REDIRECT_GID;
	return IBW_REDIRECT_OK;
}

/*
 * The PMA answered ClassPortInfo with "redirect required": its counters
 * are served at RedirectLID, RedirectQP with RedirectQ_Key. We follow
 * what a umad port can reach: the default partition (our MADs go out on
 * P_Key index 0), the GSI Q_Key (the kernel sends with QP1's whatever we
 * set) and a LID (RedirectLID 0 means RedirectGID alone, as libibmad
 * reads it). Anything else is reported, with the reason, and the node's
 * counters stay unread. Returns 1 when a ClassPortInfo to the new place
 * is under way.
 */
static int follow_redirect(struct ibw_counters *c, unsigned idx,
			   const uint8_t *mad)
{
	const uint8_t *cpi = mad + IB_PC_DATA_OFFS;
	struct job *j = &c->jobs[idx];
	struct node_cap *nc;
	int was, why;

	if (!(nc = ibw_ctr_cap_get(c, j->guid)))
		return 0;
	nc->have_mask = 0;
	was = nc->redirect;
	nc->lid = j->lid;
	nc->rlid = (uint16_t)ibw_mad_get(cpi, IB_CPI_REDIRECT_LID_F);
	nc->rqp = ibw_mad_get(cpi, IB_CPI_REDIRECT_QP_F) & 0xffffff;
	nc->rqkey = ibw_mad_get(cpi, IB_CPI_REDIRECT_QKEY_F);
	nc->rsl = (uint8_t)ibw_mad_get(cpi, IB_CPI_REDIRECT_SL_F);
	nc->rpkey = (uint16_t)ibw_mad_get(cpi, IB_CPI_REDIRECT_PKEY_F);
	ibw_mad_decode(cpi, IB_CPI_REDIRECT_GID_F, nc->rgid);
	why = redirect_refusal(nc);
	if (why != IBW_REDIRECT_OK) {
		static const char *const what[] = {
			[IBW_REDIRECT_PARTITION] = "outside the default "
						   "partition, where our MADs "
						   "go",
			[IBW_REDIRECT_QKEY] =
				"with a Q_Key other than the "
				"GSI's, which the kernel does not "
				"send with",
			[IBW_REDIRECT_GID] = "to a GID alone (RedirectLID 0), "
					     "which needs a GRH route",
		};

		if (was != IBW_PMA_REDIRECT_REFUSED || nc->refusal != why)
			log_warn("counters",
				 "the PMA of node 0x%016" PRIx64 " (LID %u) "
				 "redirects to LID %u QP %u Q_Key 0x%08x "
				 "P_Key 0x%04x: not followed (%s); its "
				 "counters stay unread",
				 j->guid, j->lid, nc->rlid, nc->rqp, nc->rqkey,
				 nc->rpkey, what[why]);
		nc->redirect = IBW_PMA_REDIRECT_REFUSED;
		nc->refusal = (uint8_t)why;
		return 0;
	}
	nc->refusal = IBW_REDIRECT_OK;
	if (!nc->rqp)
		nc->rqp = 1;
	if (!nc->rqkey)
		nc->rqkey = IBW_QP1_QKEY;
	nc->redirect = IBW_PMA_REDIRECT_FOLLOWED;
	if (was != nc->redirect)
		log_info("counters",
			 "the PMA of node 0x%016" PRIx64 " (LID %u) redirects "
			 "to LID %u QP %u: following",
			 j->guid, j->lid, nc->rlid, nc->rqp);
	start_cpi(c, idx);
	return 1;
}

/* This answer came from where a redirect sent us: a second redirect is
 * not followed (no loops). */
static int redirected_here(struct ibw_counters *c, const struct job *j)
{
	const struct node_cap *nc = ibw_ctr_cap_find(c, j->guid);

	return nc && nc->redirect == IBW_PMA_REDIRECT_FOLLOWED &&
	       !nc->have_mask;
}

/* @j's ClassPortInfo came to nothing (@d): its ports stay unread this
 * sweep, told so now or, when it was sent ahead, at the job's turn. */
static void cpi_failed(struct ibw_counters *c, struct job *j,
		       const struct ibw_mad_done *d)
{
	enum ibw_ctr_fail why = d->result == IBW_MAD_TIMEOUT
					? IBW_CTR_FAIL_TIMEOUT
					: IBW_CTR_FAIL_ERROR;
	struct node_cap *nc;

	if (d->result == IBW_MAD_TIMEOUT) {
		c->cur.timeouts++;
		nc = ibw_ctr_cap_get(c, j->guid);
		if (nc && nc->cpi_lost < UINT8_MAX)
			nc->cpi_lost++;
	} else {
		c->cur.errors++;
	}
	if (j->early == EARLY_OUT && !j->turn) {
		j->early = EARLY_FAILED;
		j->early_fail = (uint8_t)why;
		return;
	}
	j->early = EARLY_NONE;
	fail_job_ports(c, j, why);
}

static void cpi_answer(const struct ibw_mad_done *d, void *arg)
{
	struct cpi_op *op = arg;
	struct ibw_counters *c = op->c;
	struct job *j;
	int ahead, waited;

	if (op->early && op->sweep == c->sweep_id && c->early_out)
		c->early_out--;
	if (!ibw_ctr_settle(c, op->sweep, d)) {
		free(op);
		return;
	}
	j = &c->jobs[op->job];
	/* sent at the sweep's start: the job's turn not come yet, or come
	 * and gone by (the job waits, holding nothing) */
	ahead = j->early == EARLY_OUT && !j->turn;
	waited = j->early == EARLY_OUT && j->turn;
	if (!ahead) {
		j->t_end = ibw_now_us();
		unreserve(c, j);
	}
	if (d->result == IBW_MAD_OK) {
		const uint8_t *cpi = d->mad + IB_PC_DATA_OFFS;

		cap_set(c, j->guid, ibw_mad_get(cpi, IB_CPI_CAPMASK_F),
			ibw_mad_get(cpi, IB_CPI_CAPMASK2_F));
		j->early = EARLY_NONE;
		if (waited && c->ready)
			c->ready[c->ready_tail++] = op->job;
		else if (!ahead)
			ibw_ctr_run_job(c, j);
	} else if (d->result == IBW_MAD_STATUS &&
		   (d->status & IB_MAD_STS_REDIRECT) && d->mad &&
		   d->len >= IBW_MAD_SIZE && !redirected_here(c, j) &&
		   follow_redirect(c, op->job, d->mad)) {
		/* asked again where it sent us */
	} else {
		cpi_failed(c, j, d);
	}
	free(op);
	sweep_done_if_idle(c);
}

static void start_job(struct ibw_counters *c, unsigned idx)
{
	struct job *j = &c->jobs[idx];
	struct node_cap *nc = ibw_ctr_cap_find(c, j->guid);

	j->t0 = j->t_end = ibw_now_us();
	if (nc && nc->have_mask) {
		ibw_ctr_run_job(c, j);
		return;
	}
	if (j->early == EARLY_FAILED) {
		/* counted when it failed */
		j->early = EARLY_NONE;
		fail_job_ports(c, j, (enum ibw_ctr_fail)j->early_fail);
		return;
	}
	if (nc && nc->redirect == IBW_PMA_REDIRECT_REFUSED &&
	    nc->lid == j->lid) {
		fail_job_ports(c, j, IBW_CTR_FAIL_ERROR);
		return;
	}
	if (j->early == EARLY_OUT) {
		/* Its answer puts the job in the ready queue, which the
		 * feed starts as room allows. Nothing is held for it
		 * meanwhile: a silent PMA's ClassPortInfo waits out its
		 * deadline, and the jobs of many such would hold the feed
		 * until then. */
		j->turn = 1;
		return;
	}
	/* Its ports' MADs follow the answer: PortCounters, the extended
	 * ones and the VL waits a port (at most: the answer may say there
	 * are none), the two details when asked for, and PortSamplesControl
	 * once. */
	j->reserved = (uint16_t)((3 + (c->o.details ? 2 : 0)) * j->nports + 1);
	c->reserved += j->reserved;
	start_cpi(c, idx);
}

/* ClassPortInfo first: its CapabilityMask says which counters the PMA
 * has, and its status whether it is served elsewhere. A node whose last
 * one went unanswered gets one try: it is asked again every sweep, and
 * a silent node costs one deadline, not the retries' too. */
static void start_cpi(struct ibw_counters *c, unsigned idx)
{
	struct job *j = &c->jobs[idx];
	const struct node_cap *nc = ibw_ctr_cap_find(c, j->guid);
	int ahead = j->early == EARLY_OUT && !j->turn;
	struct cpi_op *op;

	op = calloc(1, sizeof(*op));
	if (!op)
		goto fail;
	op->c = c;
	op->sweep = c->sweep_id;
	op->job = idx;
	op->early = (uint8_t)ahead;
	c->early_out += (unsigned)ahead;
	if (ibw_ctr_pma_submit_tries(c, j->guid, j->lid, IBW_METHOD_GET,
				     IBW_ATTR_CLASS_PORT_INFO, NULL,
				     nc && nc->cpi_lost ? 0 : c->o.retries,
				     cpi_answer, op) < 0) {
		c->early_out -= (unsigned)ahead;
		free(op);
		goto fail;
	}
	return;
fail:
	c->cur.errors++;
	if (ahead) {
		j->early = EARLY_FAILED;
		j->early_fail = IBW_CTR_FAIL_ERROR;
		return;
	}
	j->early = EARLY_NONE;
	unreserve(c, j);
	fail_job_ports(c, j, IBW_CTR_FAIL_ERROR);
}

/*
 * Every PMA whose ClassPortInfo is not known (a new node, one that never
 * answered, one whose reads all went unanswered) is asked for it at the
 * sweep's start, not at its node's turn: a PMA that does not answer then
 * waits out its deadline while the sweep reads the others, rather than
 * after them (in order, the last silent node's deadline would end the
 * sweep). Its answer waits for the node's turn.
 */
static void send_early_cpis(struct ibw_counters *c)
{
	unsigned i;

	c->early_out = 0;
	for (i = 0; i < c->njobs; i++) {
		struct job *j = &c->jobs[i];
		const struct node_cap *nc = ibw_ctr_cap_find(c, j->guid);

		if (nc && (nc->have_mask ||
			   (nc->redirect == IBW_PMA_REDIRECT_REFUSED &&
			    nc->lid == j->lid)))
			continue;
		j->early = EARLY_OUT;
		start_cpi(c, i);
	}
}

/* Whether none of @j's ports answered this sweep: each timed out. */
static int job_silent(const struct ibw_counters *c, const struct job *j)
{
	unsigned k;

	if (!j->t0 || !j->nports)
		return 0;
	for (k = 0; k < j->nports; k++) {
		/* read only: a record a snapshot shares is not copied */
		const struct ibw_port_ctrs *p =
			ibw_counters_find(c, j->guid, j->port_list[k]);

		if (!p || !p->stale || p->fail != IBW_CTR_FAIL_TIMEOUT)
			return 0;
	}
	return 1;
}

/* After a sweep: a node with a mask none of whose ports answered (at any
 * of its LIDs: a node's jobs are next to each other) is asked for its
 * ClassPortInfo again, at the next sweep's start and with one try,
 * rather than every port's reads waiting out their tries again. */
static void learn_silent_nodes(struct ibw_counters *c)
{
	unsigned i = 0, k;

	while (i < c->njobs) {
		uint64_t guid = c->jobs[i].guid;
		struct node_cap *nc;
		int silent = 1;

		for (k = i; k < c->njobs && c->jobs[k].guid == guid; k++)
			if (!job_silent(c, &c->jobs[k]))
				silent = 0;
		i = k;
		nc = ibw_ctr_cap_find(c, guid);
		if (silent && nc && nc->have_mask) {
			nc->have_mask = 0;
			nc->cpi_lost = 1;
		}
	}
}

/*
 * An unspread sweep keeps about this many MADs pending, not the whole
 * fabric: queued all at once, the engine's run queue goes round every
 * destination, so consecutive MADs touch nodes all over the fabric (in
 * our tables and in the SMAs' and switches' of a simulator), and the
 * queue holds a request per MAD of the sweep. Well above the engine's
 * window, so the wire never waits on us.
 */
#define IBW_CTR_FEED_MADS 1024u

/* The sweep's jobs, and any readings still held for a NodeInfo (none
 * when a sweep ends: a held reading keeps it pending). */
static void free_jobs(struct ibw_counters *c)
{
	unsigned i;

	for (i = 0; c->jobs && i < c->njobs; i++) {
		struct port_op *op;

		while ((op = c->jobs[i].held)) {
			c->jobs[i].held = op->next;
			free(op);
		}
	}
	free(c->jobs);
	c->jobs = NULL;
	c->njobs = 0;
	free(c->ready);
	c->ready = NULL;
	c->ready_head = c->ready_tail = 0;
}

/*
 * The sweep is over: each port's record gets the time its node's reads
 * took, and each kind of node the time some read of it was under way
 * (jobs start in their order, so the union of their spans is one pass).
 */
static void sweep_times(struct ibw_counters *c)
{
	uint64_t cover[2] = { 0, 0 };
	unsigned i, k;

	c->busy_last[0] = c->busy_last[1] = 0;
	for (i = 0; i < c->njobs; i++) {
		const struct job *j = &c->jobs[i];
		uint64_t dur = j->t_end - j->t0;
		int w = j->is_switch;

		if (!j->t0)
			continue; /* never started */
		for (k = 0; k < j->nports; k++) {
			struct ibw_port_ctrs *p = ibw_ctr_port_find_w(
				c, j->guid, j->port_list[k]);

			if (p)
				p->read_dur_us = dur > UINT32_MAX
							 ? UINT32_MAX
							 : (uint32_t)dur;
		}
		if (j->t_end <= cover[w])
			continue;
		c->busy_last[w] +=
			j->t_end - (j->t0 > cover[w] ? j->t0 : cover[w]);
		cover[w] = j->t_end;
	}
}

/* Every answer of a sweep ends here: the sweep is done, or, unspread,
 * room has been made for more jobs. Those start from the pace timer at
 * once, not from here, so that starting a job never runs inside the
 * answer of another (a callback path that could nest). */
static void sweep_done_if_idle(struct ibw_counters *c)
{
	if (!c->jobs)
		return;
	if (c->next_job < c->njobs || c->ready_head < c->ready_tail) {
		if ((!c->pace_interval_us || c->next_job >= c->njobs) &&
		    c->pending - c->early_out + c->reserved <
			    IBW_CTR_FEED_MADS &&
		    !ibw_timer_armed(c->pace))
			ibw_timer_arm(c->pace, 0);
		return;
	}
	if (c->pending)
		return;
	sweep_times(c);
	learn_silent_nodes(c);
	ibw_ctr_sort_ports(c);
	c->cur.duration_us = ibw_now_us() - c->t0_mono;
	c->last = c->cur;
	c->unreachable_last = c->unreachable_cur;
	c->prog.running = 0;
	c->prog.end_us = ibw_realtime_us();
	ibw_ctr_flux_sweep_end(c);
	free_jobs(c);
	if (c->cb)
		c->cb(c, c->arg);
}

/* Start @left jobs over @spread_us: ticks of at least 10 ms, each
 * starting its share. */
static void set_pace(struct ibw_counters *c, unsigned left, uint64_t spread_us)
{
	uint64_t ticks = spread_us / 10000u;

	if (!spread_us) {
		/* on_pace then feeds IBW_CTR_FEED_MADS at a time */
		c->pace_interval_us = 0;
		return;
	}
	if (ticks < 1)
		ticks = 1;
	if (ticks > left)
		ticks = left;
	c->pace_interval_us = spread_us / ticks;
	c->pace_batch = (unsigned)((left + ticks - 1) / ticks);
}

static void on_pace(struct ibw_timer *t, void *arg)
{
	struct ibw_counters *c = arg;
	unsigned n;

	if (!c->jobs)
		return;
	/* Jobs that waited for their ClassPortInfo first, as room allows */
	while (c->ready_head < c->ready_tail &&
	       c->pending - c->early_out + c->reserved < IBW_CTR_FEED_MADS)
		ibw_ctr_run_job(c, &c->jobs[c->ready[c->ready_head++]]);
	if (!c->pace_interval_us) {
		/* Unspread: start jobs while there is room; answers make
		 * more (sweep_done_if_idle). */
		while (c->next_job < c->njobs &&
		       c->pending - c->early_out + c->reserved <
			       IBW_CTR_FEED_MADS)
			start_job(c, c->next_job++);
		if (c->next_job >= c->njobs)
			sweep_done_if_idle(c);
		return;
	}
	for (n = 0; n < c->pace_batch && c->next_job < c->njobs; n++)
		start_job(c, c->next_job++);
	if (c->next_job < c->njobs)
		ibw_timer_arm(t, c->pace_interval_us);
	else
		sweep_done_if_idle(c);
}

static int in_scope(const struct ibw_counters *c, const struct ibw_fnode *n)
{
	unsigned i;

	if (c->o.targets) {
		for (i = 0; i < c->o.ntargets; i++)
			if (c->o.targets[i] == n->guid)
				return 1;
		return 0;
	}
	switch (c->o.scope) {
	case IBW_SCOPE_SWITCHES:
		return n->ni.node_type == IBW_NODE_SWITCH;
	case IBW_SCOPE_CAS:
		return n->ni.node_type != IBW_NODE_SWITCH;
	default:
		return 1;
	}
}

/* PortInfoExtended, by the capability masks of @pi (port 0's on a
 * switch), as perfquery checks them before asking. */
static uint8_t fec_pie(const struct ibw_portinfo *pi)
{
	return (pi->capmask & IBW_CAP_CAPMASK2) &&
	       (pi->capmask2 & IBW_CAP2_PORT_INFO_EXT);
}

/* PortExtendedSpeedsCounters are read for a port with its link up whose
 * capability mask (@mask: port 0's on a switch) says IsExtendedSpeeds
 * Supported: the IBA has ports that support FDR or faster keep them. */
static int fec_port(const struct ibw_portinfo *mask, const struct ibw_fport *fp)
{
	return (mask->capmask & IBW_CAP_EXT_SPEEDS) && fp->have_pi &&
	       fp->pi.state >= 2;
}

static void add_switch_job(struct ibw_counters *c, const struct ibw_fnode *n)
{
	struct job *j = &c->jobs[c->njobs];
	unsigned p;

	j->guid = n->guid;
	j->is_switch = 1;
	j->is_protected = n->is_protected;
	j->lid = n->lid;
	/* All ports, down ones too: LinkDowned lives there. */
	for (p = 1; p < n->nports; p++)
		j->port_list[j->nports++] = (uint8_t)p;
	/* port 0's capability mask speaks for every port of a switch */
	if (n->nports && n->ports[0].have_pi) {
		const struct ibw_portinfo *pi0 = &n->ports[0].pi;

		j->pie = fec_pie(pi0);
		for (p = 1; p < n->nports; p++)
			if (fec_port(pi0, &n->ports[p]))
				j->esc[p / 32] |= 1u << (p % 32);
	}
	if (j->lid && j->nports)
		c->njobs++;
	else
		memset(j, 0, sizeof(*j));
}

/*
 * A CA's PMA answers for the port a MAD came in by: each active port is
 * read through its own LID, one job per LID (ports that share one, as
 * some CAs' do, share its job and its NodeInfo).
 */
static void add_ca_jobs(struct ibw_counters *c, const struct ibw_fnode *n)
{
	unsigned first = c->njobs, p, k;

	for (p = 1; p < n->nports; p++) {
		const struct ibw_fport *fp = &n->ports[p];
		struct job *j = NULL;

		if (!fp->have_pi || fp->pi.state != 4 || !fp->pi.lid)
			continue;
		for (k = first; k < c->njobs; k++)
			if (c->jobs[k].lid == fp->pi.lid)
				j = &c->jobs[k];
		if (!j) {
			j = &c->jobs[c->njobs++];
			j->guid = n->guid;
			j->is_protected = n->is_protected;
			j->lid = fp->pi.lid;
		}
		j->port_list[j->nports++] = (uint8_t)p;
		/* a CA port's own mask; PortInfoExtended only where all the
		 * ports sharing the LID have it */
		if (fec_port(&fp->pi, fp))
			j->esc[p / 32] |= 1u << (p % 32);
		j->pie = (uint8_t)(j->nports == 1 ? fec_pie(&fp->pi)
						  : j->pie && fec_pie(&fp->pi));
	}
}

int ibw_counters_sweep(struct ibw_counters *c, const struct ibw_fabric *f,
		       uint64_t spread_us, ibw_counters_cb cb, void *arg)
{
	unsigned i, p;

	if (c->jobs)
		return -EBUSY;
	/* a job per switch, per CA LID (at most one a port): sized to
	 * that, not to every port (a job is 336 bytes; 57,024 ports) */
	for (i = 0, p = 0; i < f->nnodes; i++) {
		const struct ibw_fnode *n = &f->nodes[i];

		p += n->ni.node_type == IBW_NODE_SWITCH || !n->nports
			     ? 1
			     : n->nports;
	}
	c->jobs = calloc(p + 1, sizeof(*c->jobs));
	if (!c->jobs)
		return -ENOMEM;
	c->njobs = 0;
	for (i = 0; i < f->nnodes; i++) {
		const struct ibw_fnode *n = &f->nodes[i];

		if (n->gone || !in_scope(c, n))
			continue;
		if (n->ni.node_type == IBW_NODE_SWITCH)
			add_switch_job(c, n);
		else
			add_ca_jobs(c, n);
	}
	c->sweep_id++;
	c->psc_streak = 0;
	c->psc_quiet = 0;
	/* Only a sweep of the fabric of a settled discovery can end the
	 * LIDs' flux: one started before it read at the old LIDs. */
	c->closing = c->flux && c->settled;
	c->closing_signs = c->signs;
	c->next_job = 0;
	c->pending = 0;
	c->reserved = 0;
	c->cb = cb;
	c->arg = arg;
	memset(&c->cur, 0, sizeof(c->cur));
	c->cur.start_us = ibw_realtime_us();
	c->unreachable_cur = 0;
	c->t0_mono = ibw_now_us();
	memset(&c->prog, 0, sizeof(c->prog));
	c->prog.start_us = c->cur.start_us;
	c->prog.spread_us = spread_us;
	for (i = 0; i < c->njobs; i++)
		c->prog.ports += c->jobs[i].nports;
	if (!c->njobs) {
		free(c->jobs);
		c->jobs = NULL;
		c->last = c->cur;
		c->prog.end_us = c->prog.start_us;
		ibw_ctr_flux_sweep_end(c);
		return -ENOENT;
	}
	c->prog.running = 1;
	c->ready = calloc(c->njobs, sizeof(*c->ready));
	c->ready_head = c->ready_tail = 0;
	send_early_cpis(c);
	set_pace(c, c->njobs, spread_us);
	on_pace(c->pace, c);
	return 0;
}

void ibw_counters_respread(struct ibw_counters *c, uint64_t spread_us)
{
	unsigned left;
	uint64_t batches;

	if (!c->jobs || c->next_job >= c->njobs)
		return;
	left = c->njobs - c->next_job;
	/* Only ever hurry a sweep: a full-speed one (the first after a
	 * start or the port's return) stays so, and a spread one is not
	 * stretched past what it has left (a SIGHUP that changes
	 * nothing, or lengthens the interval). */
	if (spread_us) {
		if (!c->pace_interval_us)
			return;
		batches = (left + c->pace_batch - 1) / c->pace_batch;
		if (spread_us >= batches * c->pace_interval_us)
			return;
	}
	set_pace(c, left, spread_us);
	if (ibw_timer_armed(c->pace) &&
	    ibw_timer_deadline(c->pace) > ibw_now_us() + c->pace_interval_us)
		ibw_timer_arm(c->pace, c->pace_interval_us);
	else if (!ibw_timer_armed(c->pace))
		/* Unspread until now, waiting for answers to make room:
		 * from now on the pace starts the rest. */
		ibw_timer_arm(c->pace, c->pace_interval_us);
}

int ibw_counters_running(const struct ibw_counters *c)
{
	return c->jobs != NULL;
}

struct ibw_counters_progress ibw_counters_progress(const struct ibw_counters *c)
{
	return c->prog;
}

struct ibw_counters_verify
ibw_counters_verify_stats(const struct ibw_counters *c)
{
	struct ibw_counters_verify v = c->vs;

	v.lids_in_flux = c->flux;
	return v;
}

struct ibw_sweep_stats ibw_counters_last_sweep(const struct ibw_counters *c)
{
	return c->last;
}

unsigned ibw_counters_redirects(const struct ibw_counters *c,
				struct ibw_pma_redirect *out, unsigned max)
{
	unsigned i, n = 0;

	for (i = 0; i < c->ncaps; i++) {
		const struct node_cap *nc = &c->caps[i];

		if (!nc->redirect)
			continue;
		if (out && n < max) {
			out[n].guid = nc->guid;
			out[n].lid = nc->lid;
			out[n].redirect_lid = nc->rlid;
			out[n].redirect_qp = nc->rqp;
			out[n].redirect_qkey = nc->rqkey;
			out[n].redirect_pkey = nc->rpkey;
			memcpy(out[n].redirect_gid, nc->rgid, 16);
			out[n].followed = nc->redirect ==
					  IBW_PMA_REDIRECT_FOLLOWED;
			out[n].refusal = nc->refusal;
		}
		n++;
	}
	return n;
}

void ibw_counters_last_busy(const struct ibw_counters *c, uint64_t busy_us[2])
{
	busy_us[0] = c->busy_last[0];
	busy_us[1] = c->busy_last[1];
}

struct ibw_counters_clears ibw_counters_clears(const struct ibw_counters *c)
{
	return c->clears;
}

unsigned ibw_counters_unreachable(const struct ibw_counters *c)
{
	return c->unreachable_last;
}

struct ibw_counters *ibw_counters_new(struct ibw_engine *e,
				      struct ibw_events *ev,
				      const struct ibw_counters_opts *o)
{
	struct ibw_counters *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->e = e;
	c->ev = ev;
	if (o)
		c->o = *o;
	else
		c->o.retries = -1;
	c->answered = sweep_done_if_idle;
	c->pace = ibw_timer_new(ibw_engine_loop(e), on_pace, c);
	if (!c->pace) {
		free(c);
		return NULL;
	}
	return c;
}

void ibw_counters_free(struct ibw_counters *c)
{
	if (!c)
		return;
	ibw_timer_free(c->pace);
	/* a sweep cut short by the engine's going holds readings still */
	free_jobs(c);
	free(c->index);
	ibw_ctr_table_unref(c->shared);
	ibw_ctr_chunks_free(c);
	free(c->order);
	free(c->caps);
	free(c);
}
