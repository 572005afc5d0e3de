/*
 * The transport moves 256-byte MADs between the engine and the fabric.
 * Two implementations: libibumad (transport_umad.c) and an in-memory one
 * for unit tests (transport_mem.c). The engine builds and parses MADs; a
 * transport only addresses and carries them.
 */
#ifndef IBW_TRANSPORT_H
#define IBW_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#define IBW_MAD_SIZE 256

/* Where a MAD goes (send) or came from (receive). */
struct ibw_mad_addr {
	uint16_t lid; /* 0xffff: permissive, for directed-route SMPs */
	uint32_t qpn;
	uint32_t qkey;
	uint8_t sl;
};

/* A received MAD. @status is non-zero when the fabric handed back one of
 * our own sends undelivered (an errno, e.g. ETIMEDOUT). */
struct ibw_rx {
	struct ibw_mad_addr from;
	int status;
	size_t len; /* bytes in @mad; may exceed IBW_MAD_SIZE (RMPP) */
	const uint8_t *mad; /* valid until the next recv or close */
};

struct ibw_transport;

struct ibw_transport_ops {
	/* Send @len bytes of @mad; 0 or -errno. */
	int (*send)(struct ibw_transport *t, const struct ibw_mad_addr *to,
		    const uint8_t *mad, size_t len);
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
};

static inline int ibw_transport_send(struct ibw_transport *t,
				     const struct ibw_mad_addr *to,
				     const uint8_t *mad, size_t len)
{
	return t->ops->send(t, to, mad, len);
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
