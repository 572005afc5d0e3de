/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The transport moves 256-byte MADs between the engine and the fabric.
 * Three implementations: libibumad (umad.c), an in-memory one for unit
 * tests (transport_mem.c), and two transports as one, SMPs through the
 * first (transport_pair.c). The engine builds and parses MADs; a
 * transport only addresses and carries them.
 *
 * The Linux MAD layer hands a response to user space only while the
 * request it answers is still waiting, and a request waits only if it was
 * sent with a timeout (drivers/infiniband/core/mad.c, ib_find_send_mad).
 * So every request carries the timeout of its try, and a request that
 * nobody answered comes back from the kernel as its own 24-byte MAD
 * header with status ETIMEDOUT once that timeout has passed.
 */
#ifndef IBW_TRANSPORT_H
#define IBW_TRANSPORT_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#define IBW_MAD_SIZE 256

/* Where a MAD goes (send) or came from (receive). */
struct ibw_mad_addr {
	uint16_t lid; /* 0xffff: permissive, for directed-route SMPs */
	uint32_t qpn;
	uint32_t qkey;
	uint8_t sl;
	/* The P_Key table index a MAD came in on, or goes out on: an
	 * answer goes back on its request's. */
	uint16_t pkey_index;
	/* Global route header, when the request came with one (a requester
	 * in another subnet); an answer echoes it. */
	uint8_t grh_present;
	uint8_t gid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint32_t flow_label;
	uint8_t gid[16];
};

/* A received MAD. @status is non-zero when one of our own sends came
 * back unanswered: ETIMEDOUT once its timeout ran out with no answer (the
 * kernel then returns only the 24-byte MAD header), or another errno. */
struct ibw_rx {
	struct ibw_mad_addr from;
	int status;
	size_t len; /* bytes in @mad; may exceed IBW_MAD_SIZE (RMPP) */
	const uint8_t *mad; /* valid until the next recv or close */
};

struct ibw_transport;

struct ibw_transport_ops {
	/* Send @len bytes of @mad; 0 or -errno. @timeout_ms is how long
	 * the kernel keeps a request waiting for its answer (0 for answers
	 * and other MADs that expect none). -EIO, -ENODEV: the device is
	 * gone (see ibw_transport_fatal()). */
	int (*send)(struct ibw_transport *t, const struct ibw_mad_addr *to,
		    const uint8_t *mad, size_t len, unsigned timeout_ms);
	/* Next received MAD: 1 and *rx filled, 0 when none is waiting, or
	 * -errno on a transport failure. Never blocks. */
	int (*recv)(struct ibw_transport *t, struct ibw_rx *rx);
	/* The fd that turns readable when recv may return something. */
	int (*fd)(struct ibw_transport *t);
	/* Called after recv returned 0: the caller drained the queue. */
	void (*drained)(struct ibw_transport *t);
	void (*close)(struct ibw_transport *t);
};

struct ibw_transport {
	const struct ibw_transport_ops *ops;
	/* 1: the transport reports unanswered requests itself (ETIMEDOUT
	 * at the timeout given to send), as the kernel does. */
	int reports_timeouts;
};

static inline int ibw_transport_send(struct ibw_transport *t,
				     const struct ibw_mad_addr *to,
				     const uint8_t *mad, size_t len,
				     unsigned timeout_ms)
{
	return t->ops->send(t, to, mad, len, timeout_ms);
}

/* Errors after which the device is gone for this open file: the kernel
 * marks a file's agents dead on an HCA reset or driver unload (poll says
 * EPOLLERR for good, read and write fail with EIO). */
static inline int ibw_transport_fatal(int err)
{
	return err == -EIO || err == -ENODEV || err == -EBADF ||
	       err == -ENXIO || err == -ESHUTDOWN;
}

static inline int ibw_transport_recv(struct ibw_transport *t, struct ibw_rx *rx)
{
	return t->ops->recv(t, rx);
}

static inline int ibw_transport_fd(struct ibw_transport *t)
{
	return t->ops->fd(t);
}

static inline void ibw_transport_drained(struct ibw_transport *t)
{
	if (t->ops->drained)
		t->ops->drained(t);
}

static inline void ibw_transport_close(struct ibw_transport *t)
{
	if (t)
		t->ops->close(t);
}

#endif
