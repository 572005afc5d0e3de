// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "transport_pair.h"

struct pair {
	struct ibw_transport base;
	struct ibw_transport *t[2]; /* SMI, GSI */
	int epfd; /* both transports' fds: readable when either is */
	unsigned next; /* whose MADs are read first, for fairness */
	uint64_t sent[2], received[2];
};

static const struct ibw_transport_ops pair_ops;

static struct pair *pp(struct ibw_transport *t)
{
	return (struct pair *)t;
}

static int pair_send(struct ibw_transport *t, const struct ibw_mad_addr *to,
		     const uint8_t *mad, size_t len, unsigned timeout_ms)
{
	struct pair *p = pp(t);
	unsigned i = len >= 2 && (mad[1] == 0x01 || mad[1] == 0x81) ? 0 : 1;
	int rc = ibw_transport_send(p->t[i], to, mad, len, timeout_ms);

	if (rc == 0)
		p->sent[i]++;
	return rc;
}

/* One of the two in turn; 0 only when neither has anything. */
static int pair_recv(struct ibw_transport *t, struct ibw_rx *rx)
{
	struct pair *p = pp(t);
	unsigned k;

	for (k = 0; k < 2; k++) {
		unsigned i = (p->next + k) & 1;
		int rc = ibw_transport_recv(p->t[i], rx);

		if (rc != 0) {
			if (rc > 0) {
				p->received[i]++;
				p->next = i ^ 1;
			}
			return rc;
		}
	}
	return 0;
}

static int pair_fd(struct ibw_transport *t)
{
	return pp(t)->epfd;
}

static void pair_drained(struct ibw_transport *t)
{
	struct pair *p = pp(t);

	ibw_transport_drained(p->t[0]);
	ibw_transport_drained(p->t[1]);
}

static void pair_close(struct ibw_transport *t)
{
	struct pair *p = pp(t);

	ibw_transport_close(p->t[0]);
	ibw_transport_close(p->t[1]);
	if (p->epfd >= 0)
		close(p->epfd);
	free(p);
}

static const struct ibw_transport_ops pair_ops = {
	.send = pair_send,
	.recv = pair_recv,
	.fd = pair_fd,
	.drained = pair_drained,
	.close = pair_close,
};

int ibw_transport_pair(struct ibw_transport *smi, struct ibw_transport *gsi,
		       struct ibw_transport **out)
{
	struct pair *p = calloc(1, sizeof(*p));
	int i, rc = -ENOMEM;

	if (!p)
		goto fail;
	p->base.ops = &pair_ops;
	p->base.reports_timeouts = smi->reports_timeouts &&
				   gsi->reports_timeouts;
	p->t[0] = smi;
	p->t[1] = gsi;
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (p->epfd < 0) {
		rc = -errno;
		goto fail;
	}
	for (i = 0; i < 2; i++) {
		struct epoll_event ev = { .events = EPOLLIN };

		ev.data.u32 = (uint32_t)i;
		if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, ibw_transport_fd(p->t[i]),
			      &ev) < 0) {
			rc = -errno;
			goto fail;
		}
	}
	*out = &p->base;
	return 0;
fail:
	if (p) {
		p->t[0] = p->t[1] = NULL;
		if (p->epfd >= 0)
			close(p->epfd);
		free(p);
	}
	ibw_transport_close(smi);
	ibw_transport_close(gsi);
	return rc;
}

int ibw_transport_pair_counts(const struct ibw_transport *t, uint64_t sent[2],
			      uint64_t received[2])
{
	const struct pair *p = (const struct pair *)t;

	if (!t || t->ops != &pair_ops)
		return 0;
	sent[0] = p->sent[0];
	sent[1] = p->sent[1];
	received[0] = p->received[0];
	received[1] = p->received[1];
	return 1;
}
