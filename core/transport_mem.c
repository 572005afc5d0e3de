// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <infiniband/mad.h>

#include "transport_mem.h"

struct pkt {
	uint8_t mad[IBW_MAD_SIZE * 2];
	size_t len;
	int status;
	unsigned timeout_ms;
	struct ibw_mad_addr addr;
	struct pkt *next;
};

struct mem_transport {
	struct ibw_transport base;
	int evfd;
	struct pkt *sent_head, *sent_tail;
	unsigned nsent;
	struct pkt *rx_head, *rx_tail;
	struct pkt *cur; /* last received, kept until the next recv */
	unsigned fail_sends;
	int fail_err;
	int fail_recv;
	int dead; /* every call fails with EIO; the fd stays readable */
	unsigned recv_calls;
	unsigned last_timeout_ms;
};

static struct mem_transport *mt(struct ibw_transport *t)
{
	return (struct mem_transport *)t;
}

static void push(struct pkt **head, struct pkt **tail, struct pkt *p)
{
	p->next = NULL;
	if (*tail)
		(*tail)->next = p;
	else
		*head = p;
	*tail = p;
}

static struct pkt *pop(struct pkt **head, struct pkt **tail)
{
	struct pkt *p = *head;

	if (p) {
		*head = p->next;
		if (!*head)
			*tail = NULL;
	}
	return p;
}

static int mem_send(struct ibw_transport *t, const struct ibw_mad_addr *to,
		    const uint8_t *mad, size_t len, unsigned timeout_ms)
{
	struct mem_transport *m = mt(t);
	struct pkt *p;

	if (m->dead)
		return -EIO;
	if (m->fail_sends) {
		m->fail_sends--;
		return -m->fail_err;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	memcpy(p->mad, mad, len);
	p->len = len;
	p->addr = *to;
	p->timeout_ms = timeout_ms;
	push(&m->sent_head, &m->sent_tail, p);
	m->nsent++;
	return 0;
}

static int mem_recv(struct ibw_transport *t, struct ibw_rx *rx)
{
	struct mem_transport *m = mt(t);
	struct pkt *p;

	free(m->cur);
	m->cur = NULL;
	m->recv_calls++;
	if (m->dead)
		return -EIO;
	if (m->fail_recv) {
		int err = m->fail_recv;

		m->fail_recv = 0;
		return -err;
	}
	p = pop(&m->rx_head, &m->rx_tail);
	if (!p)
		return 0;
	m->cur = p;
	memset(rx, 0, sizeof(*rx));
	rx->mad = p->mad;
	rx->len = p->len;
	rx->status = p->status;
	rx->from = p->addr;
	return 1;
}

static int mem_fd(struct ibw_transport *t)
{
	return mt(t)->evfd;
}

static void mem_drained(struct ibw_transport *t)
{
	uint64_t v;

	/* A dead device stays readable, as EPOLLERR does. */
	if (mt(t)->dead)
		return;
	if (read(mt(t)->evfd, &v, sizeof(v)) < 0) {
		/* nothing was signalled */
	}
}

static void free_list(struct pkt *p)
{
	while (p) {
		struct pkt *n = p->next;

		free(p);
		p = n;
	}
}

static void mem_close(struct ibw_transport *t)
{
	struct mem_transport *m = mt(t);

	free_list(m->sent_head);
	free_list(m->rx_head);
	free(m->cur);
	close(m->evfd);
	free(m);
}

static const struct ibw_transport_ops mem_ops = {
	.send = mem_send,
	.recv = mem_recv,
	.fd = mem_fd,
	.drained = mem_drained,
	.close = mem_close,
};

struct ibw_transport *ibw_mem_transport_new(void)
{
	struct mem_transport *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->base.ops = &mem_ops;
	m->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (m->evfd < 0) {
		free(m);
		return NULL;
	}
	return &m->base;
}

int ibw_mem_next_sent(struct ibw_transport *t, uint8_t mad[IBW_MAD_SIZE],
		      struct ibw_mad_addr *to)
{
	struct mem_transport *m = mt(t);
	struct pkt *p = pop(&m->sent_head, &m->sent_tail);

	if (!p)
		return 0;
	memcpy(mad, p->mad, IBW_MAD_SIZE);
	if (to)
		*to = p->addr;
	m->last_timeout_ms = p->timeout_ms;
	free(p);
	return 1;
}

unsigned ibw_mem_sent_timeout(struct ibw_transport *t)
{
	return mt(t)->last_timeout_ms;
}

void ibw_mem_set_reports_timeouts(struct ibw_transport *t, int on)
{
	t->reports_timeouts = on;
}

void ibw_mem_kill(struct ibw_transport *t)
{
	uint64_t one = 1;

	mt(t)->dead = 1;
	if (write(mt(t)->evfd, &one, sizeof(one)) < 0) {
		/* already readable */
	}
}

unsigned ibw_mem_recv_calls(struct ibw_transport *t)
{
	return mt(t)->recv_calls;
}

unsigned ibw_mem_sent_count(struct ibw_transport *t)
{
	return mt(t)->nsent;
}

int ibw_mem_inject(struct ibw_transport *t, const uint8_t *mad, size_t len,
		   int status)
{
	return ibw_mem_inject_from(t, mad, len, status, NULL);
}

int ibw_mem_inject_from(struct ibw_transport *t, const uint8_t *mad, size_t len,
			int status, const struct ibw_mad_addr *from)
{
	struct mem_transport *m = mt(t);
	struct pkt *p;
	uint64_t one = 1;

	if (len > sizeof(p->mad))
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	memcpy(p->mad, mad, len);
	p->len = len;
	p->status = status;
	if (from)
		p->addr = *from;
	push(&m->rx_head, &m->rx_tail, p);
	if (write(m->evfd, &one, sizeof(one)) < 0)
		return -errno;
	return 0;
}

void ibw_mem_fail_sends(struct ibw_transport *t, unsigned n, int err)
{
	mt(t)->fail_sends = n;
	mt(t)->fail_err = err;
}

void ibw_mem_fail_recv(struct ibw_transport *t, int err)
{
	uint64_t one = 1;

	mt(t)->fail_recv = err;
	if (write(mt(t)->evfd, &one, sizeof(one)) < 0) {
		/* the counter cannot overflow here */
	}
}

void ibw_mem_make_response(uint8_t mad[IBW_MAD_SIZE], int status)
{
	if (mad[1] == 0x81) {
		mad_set_field(mad, 0, IB_DRSMP_DIRECTION_F, 1);
		mad_set_field(mad, 0, IB_DRSMP_STATUS_F, status);
	} else {
		mad_set_field(mad, 0, IB_MAD_STATUS_F, status);
	}
	mad_set_field(mad, 0, IB_MAD_METHOD_F, 0x01);
	mad_set_field(mad, 0, IB_MAD_RESPONSE_F, 1);
}
