// SPDX-License-Identifier: BSD-2-Clause
/*
 * Test-only preload: the Linux kernel's MAD layer on top of umad2sim,
 * plus a latency and dead-port model. Loaded first, so that libibumad's
 * open/close/read/write/poll/ioctl reach it before umad2sim's:
 *
 *   LD_PRELOAD=libibw_kmodel.so:libumad2sim.so:libibw_simguard.so
 *
 * umad2sim hands every MAD to the reader at once: answers to requests
 * sent with timeout 0, answers nobody waits for any more, and MADs
 * ibsim dropped (the request comes back with status 110). The kernel
 * (drivers/infiniband/core/mad.c, user_mad.c) hands a response to an
 * agent only while a request of that agent with the same TID waits
 * (ib_find_send_mad), retries a request itself, and reports a request
 * that got no answer only when its last try timed out, with the MAD
 * header alone. Code that works on the simulator can thus fail on
 * hardware; this library makes the simulator that strict.
 *
 * It can also play SMAs whose port the SM protected with an M_Key
 * (ibsim checks none): an SMP to a node listed in IBW_KM_MKEY_FILE that
 * carries another key gets no answer, as the IBA has a protected port
 * drop it.
 *
 * docs/testing.md, "The kernel and fabric model", lists every variable
 * and default. Only fds opened from /dev/infiniband/umad* are modelled;
 * umad2sim's own socket reads and writes pass straight through (they
 * reach these wrappers too, as umad2sim calls write() by name).
 *
 * Threads: one mutex guards everything; it is never held across a
 * blocking wait. umad2sim's read() returns -EWOULDBLOCK when empty and
 * its poll() understands one fake fd per call, so poll() here drains
 * umad2sim into per-fd queues and sleeps in slices.
 *
 * km_int.h lists the files it is made of and what they share.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "km_int.h"
#include "km_fec.h"
#include "km_hw.h"

/* Lock-free: is this fd one of ours? umad2sim's own socket writes reach
 * write() here while the mutex is held, so they must not take it. */
static unsigned char isfd_tab[FDLIM];

static int isfd(int fd)
{
	return fd >= 0 && fd < FDLIM &&
	       __atomic_load_n(&isfd_tab[fd], __ATOMIC_ACQUIRE);
}

/* ---- per-fd state ---- */

static struct kfd *kfd_of(int fd)
{
	int i;

	for (i = 0; i < MAXFD; i++)
		if (km.fds[i].used && km.fds[i].fd == fd)
			return &km.fds[i];
	return NULL;
}

/* A MAD umad2sim had for this fd: hold it, queue it or drop it. */
static void classify(struct kfd *kf, struct msg *m, uint64_t now)
{
	ib_user_mad_t *u = (ib_user_mad_t *)(void *)m->buf;
	const uint8_t *mad = m->buf + HDR;
	uint8_t cls, method;
	uint32_t tid;
	struct req *r;
	int resp;

	if (m->len < HDR + MAD_HDR) {
		km_msg_put(m);
		return;
	}
	cls = mad[1];
	tid = (uint32_t)mad[12] << 24 | (uint32_t)mad[13] << 16 |
	      (uint32_t)mad[14] << 8 | mad[15];
	/* The sending agent is in TID bits 32..47 (umad2sim put it there,
	 * as the kernel puts its hi_tid); umad2sim's agent_id of a MAD
	 * handed back is the class's agent instead. */
	r = km_ht_find(cls, tid, (uint32_t)mad[10] << 8 | mad[11]);
	if (u->status && km_real_psc(m)) {
		km.psc_answered++;
		if (r)
			kmf_psc(m->buf + HDR, km_req_dlid(r->buf));
	} else if (u->status && km_fec_answer(m, r))
		km.fec_answered++;
	else if (u->status && r &&
		 kmh_answer(m->buf + HDR, (unsigned)(m->len - HDR),
			    km_req_dlid(r->buf))) {
		km.hw_answered++;
		u->status = 0;
		u->addr.lid = htons(km_req_dlid(r->buf));
	} else if (u->status && km_unsupported_class(m, r, now))
		km.unsupported++;
	method = mad[3];
	if (!u->status) {
		km_real_portinfo(m);
		km_real_nodedesc(m);
		km_real_fec(m);
	}
	resp = (method & METHOD_RESP) || method == METHOD_TRAP_REPRESS;

	if (u->status) {
		/* ibsim dropped a MAD of ours and handed it back. The
		 * kernel never learns of a lost MAD: the try just gets no
		 * answer. */
		km.bounced++;
		if (!resp && r && r->state == RQ_WAIT) {
			km_pop_try(r, now);
			if (!km.rule) {
				km.answered++;
				km_deliver(kf, m);
				km_finish(r, now);
				return;
			}
		} else if (!km.rule) {
			km_deliver(kf, m);
			return;
		}
		km_msg_put(m);
		return;
	}
	if (!resp) {
		/* A request from elsewhere (SA query, echo, trap). */
		km_deliver(kf, m);
		return;
	}
	if (r && r->state == RQ_WAIT) {
		uint64_t ready;

		if (km_mkey_refuses(r, mad, m->len - HDR, now)) {
			/* The protected SMA dropped it: the try gets no
			 * answer. */
			km.mkey_dropped++;
			km_pop_try(r, now);
			km_msg_put(m);
			return;
		}
		ready = km_pop_try(r, now);
		if (r->held) {
			/* A second answer (to a resend): the first one
			 * completes the request, this one finds nothing. */
			km.unmatched++;
			km_msg_put(m);
			return;
		}
		if (ready > r->final) {
			km.late++;
			km_msg_put(m);
			return;
		}
		if (ready <= now) {
			km.answered++;
			km_deliver(r->kf, m);
			km_finish(r, now);
			return;
		}
		r->held = m;
		r->held_at = ready;
		km_resched(r);
		return;
	}
	/* The local port answers a hop-0 directed-route SMP itself; the
	 * kernel delivers that with or without a waiting request. */
	if ((cls == CLS_DR && mad[7] == 0) || !km.rule) {
		km.answered++;
		km_deliver(kf, m);
		return;
	}
	if (r)
		km.late++;
	else
		km.unmatched++;
	km_msg_put(m);
}

/* Move what umad2sim has for this fd into the model. */
static void pump(struct kfd *kf, uint64_t now)
{
	while (kf->shead) {
		struct msg *m = kf->shead;

		kf->shead = m->next;
		if (!kf->shead)
			kf->stail = NULL;
		classify(kf, m, now);
	}
	for (;;) {
		struct msg *m = km_msg_get();
		ssize_t n;

		if (!m)
			return;
		/* umad2sim returns -EWOULDBLOCK (not -1) when empty. */
		n = n_read(kf->fd, m->buf, MSG_CAP);
		if (n <= 0) {
			km_msg_put(m);
			return;
		}
		m->len = (size_t)n;
		classify(kf, m, now);
	}
}

static void flush_fd(struct kfd *kf)
{
	uint32_t i;
	int a;

	for (i = 0; km.ht && i <= km.htmask; i++) {
		struct req **p = &km.ht[i];

		while (*p) {
			struct req *r = *p;

			if (r->kf != kf) {
				p = &r->hnext;
				continue;
			}
			*p = r->hnext;
			km.nreq--;
			km_heap_del(r);
			km_req_put(r);
		}
	}
	for (a = 0; a < NAGENT; a++) {
		struct agent *ag = &kf->ag[a];

		while (ag->bl_head) {
			struct req *r = ag->bl_head;

			ag->bl_head = r->qnext;
			km_req_put(r);
		}
		ag->bl_tail = NULL;
		ag->backlog = ag->outstanding = 0;
	}
	while (kf->qhead) {
		struct msg *m = kf->qhead;

		kf->qhead = m->next;
		km_msg_put(m);
	}
	kf->qtail = NULL;
	while (kf->shead) {
		struct msg *m = kf->shead;

		kf->shead = m->next;
		km_msg_put(m);
	}
	kf->stail = NULL;
}

/* ---- device death on cue ---- */

static void kill_fd(struct kfd *kf)
{
	uint32_t id;

	if (kf->dead)
		return;
	flush_fd(kf);
	/* The kernel frees a dead file's agents. umad2sim frees an agent
	 * only on its unregister (its close frees one of the fd's) and
	 * has 32 a device, and the process's own unregisters fail on the
	 * dead fd (EIO): without this, a process that reopens runs out of
	 * agents after six or seven deaths. */
	for (id = 0; id < NAGENT; id++)
		if (kf->ag[id].used)
			n_ioctl(kf->fd, IB_USER_MAD_UNREGISTER_AGENT, &id);
	km_drop_agents(kf);
	kf->dead = 1;
}

static void dead_poll(uint64_t now)
{
	struct stat st;
	int i;

	if (!km.dead_path[0] ||
	    (km.dead_checked && now - km.dead_checked < DEAD_CHECK_US))
		return;
	km.dead_checked = now;
	km.dead_now = stat(km.dead_path, &st) == 0;
	if (!km.dead_now)
		return;
	for (i = 0; i < MAXFD; i++)
		if (km.fds[i].used)
			kill_fd(&km.fds[i]);
}

/* ---- the wrappers ---- */

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	int fd, old, i;
	struct stat st;

	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {
		va_list ap;

		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	km_init();
	if (!km.on || strncmp(path, "/dev/infiniband/umad", 20))
		return n_open(path, flags, mode);

	if (km.dead_path[0] && stat(km.dead_path, &st) == 0) {
		/* The device is gone: nothing to open. */
		errno = ENODEV;
		return -1;
	}
	fd = n_open(path, flags, mode);
	if (fd < 0 || fd >= FDLIM)
		return fd;
	old = km_lock();
	if (km_ht_init() == 0) {
		for (i = 0; i < MAXFD; i++)
			if (!km.fds[i].used)
				break;
		if (i < MAXFD) {
			memset(&km.fds[i], 0, sizeof(km.fds[i]));
			km.fds[i].used = 1;
			km.fds[i].fd = fd;
			__atomic_store_n(&isfd_tab[fd], 1, __ATOMIC_RELEASE);
			if (!km.opened) {
				km.opened = 1;
				km_hook_sigterm();
			}
		}
	}
	km_unlock(old);
	return fd;
}

int close(int fd)
{
	struct kfd *kf;
	int old;

	km_resolve();
	if (!isfd(fd))
		return n_close(fd);
	old = km_lock();
	kf = kfd_of(fd);
	if (kf) {
		flush_fd(kf);
		km_drop_agents(kf);
		kf->used = 0;
	}
	__atomic_store_n(&isfd_tab[fd], 0, __ATOMIC_RELEASE);
	km_unlock(old);
	return n_close(fd);
}

ssize_t read(int fd, void *buf, size_t count)
{
	struct kfd *kf;
	struct msg *m = NULL;
	ssize_t n = -1;
	uint64_t now;
	int old, err = EAGAIN;

	km_resolve();
	if (!isfd(fd))
		return n_read(fd, buf, count);
	old = km_lock();
	now = km_now_us();
	dead_poll(now);
	kf = kfd_of(fd);
	if (!kf || kf->dead) {
		err = kf ? EIO : EBADF;
	} else {
		/* Only when empty: each look into umad2sim takes the locks
		 * its receiver thread needs, and a read per MAD is what it
		 * costs without the model. */
		if (!kf->qhead)
			pump(kf, now);
		km_run_timers(now);
		m = kf->qhead;
		if (m) {
			kf->qhead = m->next;
			if (!kf->qhead)
				kf->qtail = NULL;
			/* A short buffer gets the start, as from umad2sim. */
			n = (ssize_t)(m->len < count ? m->len : count);
			memcpy(buf, m->buf, (size_t)n);
			km_msg_put(m);
		}
	}
	km_unlock(old);
	if (n < 0)
		errno = err; /* EAGAIN: the kernel's answer, non-blocking */
	return n;
}

ssize_t write(int fd, const void *buf, size_t count)
{
	const ib_user_mad_t *u = buf;
	const uint8_t *mad = (const uint8_t *)buf + HDR;
	struct kfd *kf;
	struct req *r;
	struct agent *ag;
	uint64_t now;
	ssize_t rc;
	uint8_t cls, method;
	unsigned lim;
	int old;

	km_resolve();
	if (!isfd(fd))
		return n_write(fd, buf, count);
	old = km_lock();
	now = km_now_us();
	dead_poll(now);
	kf = kfd_of(fd);
	if (!kf || kf->dead) {
		km_unlock(old);
		errno = kf ? EIO : EBADF;
		return -1;
	}
	if (count < HDR + MAD_HDR) {
		rc = n_write(fd, buf, count);
		km_unlock(old);
		return rc;
	}
	cls = mad[1];
	method = mad[3];
	if ((method & METHOD_RESP) || method == METHOD_TRAP_REPRESS) {
		/* Responses wait for nothing. */
		rc = n_write(fd, buf, count);
		km_unlock(old);
		return rc;
	}
	km.sent++;
	if (!u->timeout_ms) {
		/* Nothing will wait for the answer: it is dropped when it
		 * comes (unless a hop-0 SMP's). */
		if (km_dest_dead(buf, cls, now)) {
			km.dead_lid++;
			rc = (ssize_t)count;
		} else {
			if (cls == CLS_DR)
				km.dr_hops += mad[7];
			km_pma_set_sent(buf);
			/* one the model answers goes nowhere: its answer
			 * would be dropped */
			if (km_never_answered(mad) &&
			    km_ca_reached(km_req_dlid(buf), now))
				rc = (ssize_t)count;
			else
				rc = n_write(fd, buf, count);
		}
		km_unlock(old);
		return rc;
	}
	r = km_req_get();
	if (!r) {
		km_unlock(old);
		errno = ENOMEM;
		return -1;
	}
	r->kf = kf;
	r->len = count < MSG_CAP ? count : MSG_CAP;
	memcpy(r->buf, buf, r->len);
	r->cls = cls;
	r->tid = (uint32_t)mad[12] << 24 | (uint32_t)mad[13] << 16 |
		 (uint32_t)mad[14] << 8 | mad[15];
	r->agent = u->agent_id;
	r->timeout_ms = u->timeout_ms;
	r->tries_left = u->retries < 100 ? u->retries : 100;

	ag = km_agent_of(kf, r->agent);
	lim = km_fc_limit(cls);
	if (lim && ag && ag->outstanding >= lim) {
		/* Newer kernels hold a solicited MAD beyond the agent's
		 * limit: write() succeeds, nothing is sent yet, and the
		 * timeout clock starts when it goes out. */
		r->state = RQ_BACKLOG;
		if (ag->bl_tail)
			ag->bl_tail->qnext = r;
		else
			ag->bl_head = r;
		ag->bl_tail = r;
		ag->backlog++;
		km.backlogged++;
		if (ag->backlog > km.backlog_hwm)
			km.backlog_hwm = ag->backlog;
	} else {
		km_start(r, now);
	}
	km_unlock(old);
	return (ssize_t)count;
}

int ioctl(int fd, unsigned long request, ...)
{
	struct kfd *kf;
	va_list ap;
	void *arg;
	int rc, old;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	km_resolve();
	if (!isfd(fd))
		return n_ioctl(fd, request, arg);
	old = km_lock();
	dead_poll(km_now_us());
	kf = kfd_of(fd);
	if (!kf || kf->dead) {
		km_unlock(old);
		errno = kf ? EIO : EBADF;
		return -1;
	}
	if (request == IB_USER_MAD_REGISTER_AGENT && arg) {
		rc = km_do_register(kf, fd, request, arg);
	} else if (request == IB_USER_MAD_UNREGISTER_AGENT && arg) {
		uint32_t id = *(uint32_t *)arg;
		struct agent *ag = km_agent_of(kf, id);

		rc = n_ioctl(fd, request, arg);
		if (rc == 0 && ag && ag->used) {
			int drop[NAGENT] = { 0 };

			ag->used = 0;
			if (!km_mask_empty(ag->mask)) {
				drop[id] = 1;
				km_reg_drop(drop);
			}
		}
	} else {
		rc = n_ioctl(fd, request, arg);
	}
	km_unlock(old);
	return rc;
}

/* Look at the model fds of a poll set: drain umad2sim, run the timers,
 * fill in revents. Returns how many are ready; *due is the next timer. */
static int scan(struct pollfd *p, nfds_t n, uint64_t *due)
{
	uint64_t now;
	nfds_t i;
	int ready = 0, old;

	old = km_lock();
	now = km_now_us();
	dead_poll(now);
	for (i = 0; i < n; i++) {
		struct kfd *kf;

		if (!isfd(p[i].fd) || !(kf = kfd_of(p[i].fd)) || kf->dead ||
		    kf->qhead)
			continue;
		pump(kf, now);
	}
	km_run_timers(now);
	for (i = 0; i < n; i++) {
		struct kfd *kf;
		short ev = 0;

		if (!isfd(p[i].fd))
			continue;
		kf = kfd_of(p[i].fd);
		if (!kf)
			ev = POLLNVAL;
		else if (kf->dead)
			ev = POLLERR; /* alone, as the kernel's EPOLLERR */
		else {
			if (kf->qhead)
				ev |= p[i].events & (POLLIN | POLLRDNORM);
			ev |= p[i].events & (POLLOUT | POLLWRNORM);
		}
		p[i].revents = ev;
		if (ev)
			ready++;
	}
	*due = km_next_timer();
	km_unlock(old);
	return ready;
}

/* poll() the fds that are not ours for up to ms milliseconds. */
static int poll_others(struct pollfd *p, nfds_t n, int ms)
{
	struct pollfd small[32], *o = small;
	nfds_t i, k = 0;
	int rc;

	if (n > 32 && !(o = malloc(n * sizeof(*o))))
		return -1;
	for (i = 0; i < n; i++)
		if (!isfd(p[i].fd))
			o[k++] = p[i];
	rc = n_poll(o, k, ms);
	for (i = 0, k = 0; rc >= 0 && i < n; i++)
		if (!isfd(p[i].fd))
			p[i].revents = o[k++].revents;
	if (o != small)
		free(o);
	return rc;
}

static int sleep_us(uint64_t us)
{
	struct timespec ts = { .tv_sec = (time_t)(us / 1000000),
			       .tv_nsec = (long)(us % 1000000) * 1000 };

	return nanosleep(&ts, NULL);
}

int poll(struct pollfd *p, nfds_t n, int timeout)
{
	uint64_t deadline, due, now, wait;
	nfds_t i, nmodel = 0, mfd = 0;
	int ready;

	km_resolve();
	for (i = 0; i < n; i++)
		if (isfd(p[i].fd)) {
			nmodel++;
			mfd = i;
		}
	if (!nmodel)
		return n_poll(p, n, timeout);
	now = km_now_us();
	deadline = timeout < 0 ? INF : now + (uint64_t)timeout * 1000;
	for (;;) {
		ready = scan(p, n, &due);
		if (nmodel < n) {
			/* Other fds too: umad2sim's poll would ignore
			 * them, so look at both in short slices. */
			int ms = 0, rc;

			now = km_now_us();
			if (!ready && now < deadline) {
				ms = MIXED_SLICE_MS;
				if (deadline - now < 1000 ||
				    (due != INF && due <= now + 1000))
					ms = 0;
			}
			rc = poll_others(p, n, ms);
			if (rc < 0)
				return -1;
			ready += rc;
			if (ready)
				return ready;
			if (!ms) {
				now = km_now_us();
				if (now >= deadline)
					return 0;
				if (due != INF && due > now)
					sleep_us(due - now < 1000 ? due - now
								  : 1000);
			}
			continue;
		}
		if (ready)
			return ready;
		now = km_now_us();
		if (now >= deadline)
			return 0;
		wait = deadline - now;
		if (due != INF && due < now + wait)
			wait = due > now ? due - now : 0;
		if (wait > SLICE_US)
			wait = SLICE_US;
		if (nmodel > 1 && wait > 1000)
			wait = 1000;
		if (nmodel == 1 && wait >= 1000) {
			/* umad2sim's poll wakes when it gets a MAD. Its
			 * queue is empty after scan(), so this sleeps. */
			struct pollfd one = { .fd = p[mfd].fd,
					      .events = POLLIN };

			n_poll(&one, 1, (int)(wait / 1000));
		} else if (wait) {
			/* Under a millisecond (umad2sim's poll counts in
			 * ms), or several model fds. */
			if (sleep_us(wait) < 0 && errno == EINTR)
				return -1;
		}
	}
}
