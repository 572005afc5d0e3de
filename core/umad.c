// SPDX-License-Identifier: BSD-2-Clause
/*
 * Transport over libibumad. The umad fd is non-blocking and, on real
 * hardware, watched by epoll directly. Under ibsim's umad2sim preload the
 * "fd" is a number umad2sim made up (>= 1024) that only its own poll()
 * wrapper understands; epoll refuses it. There a helper thread waits in
 * poll() and signals an eventfd; all reads stay on the loop's thread.
 */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <infiniband/umad.h>

#include "transport_pair.h"
#include "umad.h"

enum {
	MC_SMI = 0x01,
	MC_SA = 0x03,
	MC_PERF = 0x04,
	MC_VENDOR_ECHO = 0x32,
	MC_VENDOR_A = 0x0a, /* NVIDIA's access registers (core/hw.h) */
	MC_SMI_DR = 0x81,
};

#define IBW_ECHO_OUI 0x001405
#define BRIDGE_POLL_MS 200

struct umad_transport {
	struct ibw_transport base;
	int fd;
	int agents[256]; /* by management class; -1: not registered */
	uint8_t *sendbuf;
	uint8_t *recvbuf;
	size_t recvcap; /* MAD bytes recvbuf holds after the umad header */

	/* Simulator bridge (see the top of this file). */
	int evfd;
	pthread_t thread;
	int thread_running;
	pthread_mutex_t mtx;
	pthread_cond_t cond;
	int armed; /* the thread may poll again */
	int stop;
};

static struct umad_transport *ut(struct ibw_transport *t)
{
	return (struct umad_transport *)t;
}

static int umad_tx(struct ibw_transport *t, const struct ibw_mad_addr *to,
		   const uint8_t *mad, size_t len, unsigned timeout_ms)
{
	struct umad_transport *u = ut(t);
	unsigned mclass;
	int agent;

	if (len < 24 || len > IBW_MAD_SIZE)
		return -EINVAL;
	mclass = mad[1];
	agent = u->agents[mclass];
	if (agent < 0)
		return -EPROTONOSUPPORT;
	memset(u->sendbuf, 0, umad_size() + IBW_MAD_SIZE);
	umad_set_addr(u->sendbuf, to->lid, to->qpn, to->sl, to->qkey);
	umad_set_grh(u->sendbuf, NULL);
	umad_set_pkey(u->sendbuf, to->pkey_index);
	if (to->grh_present) {
		ib_mad_addr_t *a = umad_get_mad_addr(u->sendbuf);

		a->grh_present = 1;
		a->gid_index = to->gid_index;
		a->hop_limit = to->hop_limit;
		a->traffic_class = to->traffic_class;
		a->flow_label = htobe32(to->flow_label);
		memcpy(a->gid, to->gid, sizeof(a->gid));
	}
	memcpy(umad_get_mad(u->sendbuf), mad, len);
	/* A request waits in the kernel for its answer only if it has a
	 * timeout: with 0 the answer is dropped (mad.c, ib_find_send_mad).
	 * Retries 0: the engine's retries are fresh tries with fresh TIDs.
	 * An answer we send goes out with 0. */
	if (umad_send(u->fd, agent, u->sendbuf, IBW_MAD_SIZE, (int)timeout_ms,
		      0) < 0)
		return errno ? -errno : -EIO;
	return 0;
}

static int umad_rx(struct ibw_transport *t, struct ibw_rx *rx)
{
	struct umad_transport *u = ut(t);
	int tries, len, rc;

	for (tries = 0; tries < 2; tries++) {
		len = (int)u->recvcap;
		rc = umad_recv(u->fd, u->recvbuf, &len, 0);
		if (rc >= 0)
			break;
		if (rc == -EWOULDBLOCK || rc == -EAGAIN || errno == EAGAIN)
			return 0;
		if (rc == -ENOSPC && len > (int)u->recvcap) {
			/* An RMPP-reassembled answer: the kernel keeps it
			 * queued and told us its size. */
			uint8_t *nb = realloc(u->recvbuf, umad_size() + len);

			if (!nb)
				return -ENOMEM;
			u->recvbuf = nb;
			u->recvcap = len;
			continue;
		}
		return rc;
	}
	if (rc < 0)
		return rc;
	{
		ib_mad_addr_t *a = umad_get_mad_addr(u->recvbuf);

		memset(&rx->from, 0, sizeof(rx->from));
		rx->from.lid = be16toh(a->lid);
		rx->from.qpn = be32toh(a->qpn);
		rx->from.qkey = be32toh(a->qkey);
		rx->from.sl = a->sl;
		rx->from.pkey_index = (uint16_t)umad_get_pkey(u->recvbuf);
		if (a->grh_present) {
			rx->from.grh_present = 1;
			rx->from.gid_index = a->gid_index;
			rx->from.hop_limit = a->hop_limit;
			rx->from.traffic_class = a->traffic_class;
			rx->from.flow_label = be32toh(a->flow_label);
			memcpy(rx->from.gid, a->gid, sizeof(rx->from.gid));
		}
	}
	rx->status = umad_status(u->recvbuf);
	rx->len = len > 0 ? (size_t)len : 0;
	rx->mad = umad_get_mad(u->recvbuf);
	return 1;
}

static int umad_fd(struct ibw_transport *t)
{
	struct umad_transport *u = ut(t);

	return u->evfd >= 0 ? u->evfd : u->fd;
}

static void *bridge_main(void *arg)
{
	struct umad_transport *u = arg;
	uint64_t one = 1;

	/* A name for top -H, perf and tests/bench/mad_cost.sh, which
	 * tell this thread from umad2sim's receiver by it. */
	prctl(PR_SET_NAME, "ibw-umad-bridge", 0, 0, 0);
	pthread_mutex_lock(&u->mtx);
	while (!u->stop) {
		int r;

		while (!u->armed && !u->stop)
			pthread_cond_wait(&u->cond, &u->mtx);
		if (u->stop)
			break;
		pthread_mutex_unlock(&u->mtx);
		r = umad_poll(u->fd, BRIDGE_POLL_MS);
		pthread_mutex_lock(&u->mtx);
		/* Readable, or an error (the device is gone, and polling
		 * again would return at once for good): either way the loop
		 * reads next, and this thread waits until it is re-armed,
		 * which it never is once a read failed for good. */
		if (r != -ETIMEDOUT && !u->stop) {
			u->armed = 0;
			if (write(u->evfd, &one, sizeof(one)) < 0) {
				/* eventfd counter full cannot happen at
				 * one write per drain; nothing to do. */
			}
		}
	}
	pthread_mutex_unlock(&u->mtx);
	return NULL;
}

static void umad_drained(struct ibw_transport *t)
{
	struct umad_transport *u = ut(t);
	uint64_t v;

	if (u->evfd < 0)
		return;
	if (read(u->evfd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing signalled; still re-arm below. */
	}
	pthread_mutex_lock(&u->mtx);
	u->armed = 1;
	pthread_cond_signal(&u->cond);
	pthread_mutex_unlock(&u->mtx);
}

static void umad_tclose(struct ibw_transport *t)
{
	struct umad_transport *u = ut(t);
	int i;

	if (u->thread_running) {
		pthread_mutex_lock(&u->mtx);
		u->stop = 1;
		pthread_cond_signal(&u->cond);
		pthread_mutex_unlock(&u->mtx);
		pthread_join(u->thread, NULL);
	}
	if (u->evfd >= 0)
		close(u->evfd);
	if (u->fd >= 0) {
		for (i = 0; i < 256; i++)
			if (u->agents[i] >= 0)
				umad_unregister(u->fd, u->agents[i]);
		umad_close_port(u->fd);
	}
	pthread_mutex_destroy(&u->mtx);
	pthread_cond_destroy(&u->cond);
	free(u->sendbuf);
	free(u->recvbuf);
	free(u);
}

static const struct ibw_transport_ops umad_ops = {
	.send = umad_tx,
	.recv = umad_rx,
	.fd = umad_fd,
	.drained = umad_drained,
	.close = umad_tclose,
};

static void fill_info(const umad_port_t *p, struct ibw_local_port *info)
{
	umad_ca_t ca;

	memset(info, 0, sizeof(*info));
	snprintf(info->ca_name, sizeof(info->ca_name), "%s", p->ca_name);
	info->portnum = p->portnum;
	info->lid = p->base_lid;
	info->lmc = p->lmc;
	info->sm_lid = p->sm_lid;
	info->sm_sl = (uint8_t)p->sm_sl;
	info->state = p->state;
	info->phys_state = p->phys_state;
	info->rate = p->rate;
	info->capmask = be32toh(p->capmask);
	info->gid_prefix = be64toh(p->gid_prefix);
	info->port_guid = be64toh(p->port_guid);
	snprintf(info->link_layer, sizeof(info->link_layer), "%s",
		 p->link_layer);
	if (umad_get_ca(p->ca_name, &ca) == 0) {
		info->node_guid = be64toh(ca.node_guid);
		umad_release_ca(&ca);
	}
}

static int reg(struct umad_transport *u, int mclass, int version, int rmpp)
{
	int id = umad_register(u->fd, mclass, version, rmpp, NULL);

	if (id < 0)
		return id;
	u->agents[mclass] = id;
	return 0;
}

int ibw_umad_dev_path(const char *ca, int port, char *path, size_t len)
{
	char f[128], dev[IBW_CA_NAME_LEN];
	int id;

	for (id = 0; id < 256; id++) {
		FILE *fp;
		int p = -1, ok;

		snprintf(f, sizeof(f), "/sys/class/infiniband_mad/umad%d/ibdev",
			 id);
		if (!(fp = fopen(f, "r")))
			continue;
		ok = fscanf(fp, "%63s", dev) == 1;
		fclose(fp);
		snprintf(f, sizeof(f), "/sys/class/infiniband_mad/umad%d/port",
			 id);
		if (!ok || !(fp = fopen(f, "r")))
			continue;
		ok = fscanf(fp, "%d", &p) == 1;
		fclose(fp);
		if (ok && p == port && !strcmp(dev, ca)) {
			snprintf(path, len, "/dev/infiniband/umad%d", id);
			return 0;
		}
	}
	return -1;
}

/* Why umad_open_port() failed, for the operator: libibumad turns every
 * failure of open(2) into EIO. */
static void explain_open(const struct ibw_local_port *info, int rc, char *err,
			 size_t errlen)
{
	char dev[64];

	if (ibw_umad_dev_path(info->ca_name, info->portnum, dev, sizeof(dev)) <
	    0) {
		snprintf(err, errlen,
			 "cannot open %s port %d: no umad device for it in "
			 "/sys/class/infiniband_mad (is the ib_umad module "
			 "loaded?)",
			 info->ca_name, info->portnum);
		return;
	}
	if (access(dev, F_OK) < 0) {
		snprintf(err, errlen,
			 "cannot open %s port %d: %s does not exist (is "
			 "ib_umad loaded, and udev running?)",
			 info->ca_name, info->portnum, dev);
		return;
	}
	if (access(dev, R_OK | W_OK) < 0 && errno == EACCES) {
		snprintf(err, errlen,
			 "cannot open %s port %d: no permission on %s (run "
			 "as root, or install the udev rule and group of "
			 "docs/operations.md)",
			 info->ca_name, info->portnum, dev);
		return;
	}
	snprintf(err, errlen, "cannot open %s port %d (%s): %s", info->ca_name,
		 info->portnum, dev, strerror(-rc));
}

static int is_ib_link(const char *ll)
{
	return !ll[0] || !strcmp(ll, "InfiniBand") || !strcmp(ll, "IB");
}

static int start_bridge(struct umad_transport *u)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN };
	int rc;

	if (ep < 0)
		return -errno;
	rc = epoll_ctl(ep, EPOLL_CTL_ADD, u->fd, &ev);
	close(ep);
	if (rc == 0)
		return 0; /* a kernel fd: epoll it directly */
	u->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (u->evfd < 0)
		return -errno;
	u->armed = 1;
	rc = pthread_create(&u->thread, NULL, bridge_main, u);
	if (rc)
		return -rc;
	u->thread_running = 1;
	return 0;
}

int ibw_umad_open(const char *ca, int port, struct ibw_transport **out,
		  struct ibw_local_port *info, char *err, size_t errlen)
{
	return ibw_umad_open2(ca, port, 0, out, info, err, errlen);
}

enum { OPEN_SMI = 1, OPEN_GSI = 2 };

/* Open @info's CA port (filled in already) and register the SMP agents
 * (@what OPEN_SMI), the GSI ones (OPEN_GSI: PerfMgt, SA, the echo class)
 * or both. 0 and *out, or -errno with @err. */
static int open_port(struct ibw_local_port *info, unsigned what, int serve_echo,
		     struct umad_transport **out, char *err, size_t errlen)
{
	/* Method mask: bit N for method N; Get is 1. */
	long method_mask[16 / sizeof(long)] = { 0 };
	uint8_t echo_oui[3] = { (IBW_ECHO_OUI >> 16) & 0xff,
				(IBW_ECHO_OUI >> 8) & 0xff,
				IBW_ECHO_OUI & 0xff };
	struct umad_transport *u;
	int i, rc;

	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->base.ops = &umad_ops;
	u->evfd = -1;
	pthread_mutex_init(&u->mtx, NULL);
	pthread_cond_init(&u->cond, NULL);
	for (i = 0; i < 256; i++)
		u->agents[i] = -1;
	u->recvcap = IBW_MAD_SIZE;
	u->fd = umad_open_port(info->ca_name, info->portnum);
	/* umad_size() depends on the ABI found by umad_open_port(). */
	if (u->fd >= 0) {
		u->sendbuf = calloc(1, umad_size() + IBW_MAD_SIZE);
		u->recvbuf = calloc(1, umad_size() + u->recvcap);
	}
	if (u->fd < 0) {
		rc = u->fd;
		explain_open(info, rc, err, errlen);
		goto fail;
	}
	if (!u->sendbuf || !u->recvbuf) {
		rc = -ENOMEM;
		snprintf(err, errlen, "cannot open %s port %d: %s",
			 info->ca_name, info->portnum, strerror(-rc));
		goto fail;
	}
	/* Agents that only send (no method mask) never conflict with
	 * another process; libibumad reports every refusal as EPERM. */
	if ((what & OPEN_SMI) && ((rc = reg(u, MC_SMI, 1, 0)) < 0 ||
				  (rc = reg(u, MC_SMI_DR, 1, 0)) < 0)) {
		snprintf(err, errlen,
			 "the kernel refused a subnet management (SMP) agent "
			 "on %s port %d (%s): the port has no SMI (QP0), as on "
			 "RoCE or an SMI-less plane of a planarized HCA (whose "
			 "SMI device libibumad of rdma-core 56 or later pairs "
			 "with it; this build's %s), or the device is going "
			 "away",
			 info->ca_name, info->portnum, strerror(-rc),
			 ibw_umad_pairs_supported() ? "does"
						    : "cannot: name the SMI "
						      "port with --ca/--port");
		goto fail;
	}
	if (!(what & OPEN_GSI))
		goto done;
	if ((rc = reg(u, MC_PERF, 1, 0)) < 0 ||
	    (rc = reg(u, MC_SA, 2, 1)) < 0) {
		snprintf(err, errlen,
			 "the kernel refused a MAD agent (PerfMgt or SA) on %s "
			 "port %d: %s",
			 info->ca_name, info->portnum, strerror(-rc));
		goto fail;
	}
	method_mask[0] = 1L << 1;
	rc = -EPERM;
	if (serve_echo)
		rc = umad_register_oui(u->fd, MC_VENDOR_ECHO, 0, echo_oui,
				       method_mask);
	if (rc < 0 && serve_echo) {
		/* The kernel lets one agent per port serve a (class,
		 * version, OUI, method): another process (ibping -S, a
		 * second ibwatchd --responder) answers echo requests here
		 * already. Ping, but leave the answering to it. */
		info->echo_refused = 1;
	}
	if (rc < 0)
		rc = umad_register_oui(u->fd, MC_VENDOR_ECHO, 0, echo_oui,
				       NULL);
	if (rc < 0) {
		snprintf(err, errlen,
			 "the kernel refused the echo (vendor class 0x32) "
			 "agent on %s port %d: %s",
			 info->ca_name, info->portnum, strerror(-rc));
		goto fail;
	}
	u->agents[MC_VENDOR_ECHO] = rc;
	/* Hardware health asks devices over vendor class 0x0A (an agent
	 * without methods, which conflicts with none); should the kernel
	 * refuse it all the same, there is none (agent/main.c says so). */
	if (reg(u, MC_VENDOR_A, 1, 0) < 0)
		info->vendor_a_refused = 1;
done:
	u->base.reports_timeouts = 1;
	rc = start_bridge(u);
	if (rc < 0) {
		snprintf(err, errlen, "cannot start receive bridge: %s",
			 strerror(-rc));
		goto fail;
	}
	*out = u;
	return 0;
fail:
	umad_tclose(&u->base);
	return rc;
}

/* @ca port @port as libibumad (sysfs) sees it, into @info; refuses a
 * port whose link layer has no SMI. 0 or -errno with @err. */
static int port_info(const char *ca, int port, struct ibw_local_port *info,
		     char *err, size_t errlen)
{
	umad_port_t p;
	int rc;

	if (umad_init() < 0) {
		snprintf(err, errlen, "cannot initialise libibumad");
		return -ENODEV;
	}
	rc = umad_get_port(ca, port, &p);
	if (rc < 0) {
		snprintf(err, errlen, "no InfiniBand port %s%s port %d: %s",
			 ca ? "on CA " : "(default CA)", ca ? ca : "", port,
			 strerror(-rc));
		return rc;
	}
	fill_info(&p, info);
	umad_release_port(&p);
	if (!is_ib_link(info->link_layer)) {
		/* RoCE and the like: no subnet management interface, so
		 * the SMP agents cannot be registered. */
		snprintf(err, errlen,
			 "%s port %d has link layer %s: it has no subnet "
			 "management interface (QP0); ibwatchd needs an "
			 "InfiniBand port (--ca, --port)",
			 info->ca_name, info->portnum, info->link_layer);
		return -EPROTONOSUPPORT;
	}
	return 0;
}

int ibw_umad_pairs_supported(void)
{
#ifdef IBW_HAVE_SMI_GSI_PAIRS
	return 1;
#else
	return 0;
#endif
}

int ibw_umad_open_pair(const char *smi_ca, int smi_port, const char *gsi_ca,
		       int gsi_port, int serve_echo, struct ibw_transport **out,
		       struct ibw_local_port *info, char *err, size_t errlen)
{
	struct ibw_local_port smi_info;
	struct umad_transport *smi = NULL, *gsi = NULL;
	char dummy[1];
	int rc;

	if (!err) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	rc = port_info(gsi_ca, gsi_port, info, err, errlen);
	if (rc == 0)
		rc = port_info(smi_ca, smi_port, &smi_info, err, errlen);
	if (rc == 0)
		rc = open_port(&smi_info, OPEN_SMI, 0, &smi, err, errlen);
	if (rc == 0)
		rc = open_port(info, OPEN_GSI, serve_echo, &gsi, err, errlen);
	if (rc == 0)
		rc = ibw_transport_pair(&smi->base, &gsi->base, out);
	if (rc < 0) {
		if (smi)
			umad_tclose(&smi->base);
		if (gsi)
			umad_tclose(&gsi->base);
		if (!err[0] && errlen > 1)
			snprintf(err, errlen,
				 "cannot pair %s/%d with %s/%d: %s", smi_ca,
				 smi_port, gsi_ca, gsi_port, strerror(-rc));
		return rc;
	}
	snprintf(info->smi_ca_name, sizeof(info->smi_ca_name), "%s",
		 smi_info.ca_name);
	info->smi_portnum = smi_info.portnum;
	return 0;
}

int ibw_umad_open2(const char *ca, int port, int serve_echo,
		   struct ibw_transport **out, struct ibw_local_port *info,
		   char *err, size_t errlen)
{
	struct umad_transport *u;
	char dummy[1];
	int rc;

	if (!err) {
		err = dummy;
		errlen = sizeof(dummy);
	}
#ifdef IBW_HAVE_SMI_GSI_PAIRS
	{
		/* A planarized HCA: the port named may have no SMI, which
		 * another device of the same HCA has (libibumad pairs
		 * them, as libibmad's mad_rpc_open_port2 does). */
		struct umad_ca_pair pair;

		if (umad_init() == 0 &&
		    umad_get_smi_gsi_pair_by_ca_name(ca, (uint8_t)port, &pair,
						     1) == 0 &&
		    pair.smi_name[0] && pair.gsi_name[0] &&
		    strcmp(pair.smi_name, pair.gsi_name))
			return ibw_umad_open_pair(
				pair.smi_name, (int)pair.smi_preferred_port,
				pair.gsi_name, (int)pair.gsi_preferred_port,
				serve_echo, out, info, err, errlen);
	}
#endif
	rc = port_info(ca, port, info, err, errlen);
	if (rc < 0)
		return rc;
	rc = open_port(info, OPEN_SMI | OPEN_GSI, serve_echo, &u, err, errlen);
	if (rc < 0)
		return rc;
	*out = &u->base;
	return 0;
}

int ibw_umad_local_cas(struct ibw_local_ca *out, unsigned max)
{
	char names[16][UMAD_CA_NAME_LEN];
	int n, i, p;
	unsigned count = 0;

	if (umad_init() < 0)
		return -ENODEV;
	n = umad_get_cas_names(names, 16);
	if (n < 0)
		return n;
	for (i = 0; i < n && count < max; i++) {
		struct ibw_local_ca *lc = &out[count];
		umad_ca_t ca;

		if (umad_get_ca(names[i], &ca) < 0)
			continue;
		memset(lc, 0, sizeof(*lc));
		snprintf(lc->name, sizeof(lc->name), "%s", ca.ca_name);
		snprintf(lc->ca_type, sizeof(lc->ca_type), "%s", ca.ca_type);
		snprintf(lc->fw_ver, sizeof(lc->fw_ver), "%s", ca.fw_ver);
		lc->node_guid = be64toh(ca.node_guid);
		lc->system_guid = be64toh(ca.system_guid);
		for (p = 0; p < UMAD_CA_MAX_PORTS && lc->nports < 8; p++) {
			umad_port_t *up = ca.ports[p];
			unsigned k;

			if (!up)
				continue;
			fill_info(up, &lc->ports[lc->nports]);
			lc->ports[lc->nports].node_guid = lc->node_guid;
			for (k = 0; k < up->pkeys_size && k < 64; k++)
				if (up->pkeys[k])
					lc->pkeys[lc->nports]
						 [lc->npkeys[lc->nports]++] =
						be16toh(up->pkeys[k]);
			lc->nports++;
		}
		umad_release_ca(&ca);
		count++;
	}
	return (int)count;
}
