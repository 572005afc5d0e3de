// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"

#define MAX_EVENTS 64
#define MAX_HOOKS 16
/* Timers fired per iteration: a timer that re-arms itself at zero delay
 * must not starve file descriptors. */
#define MAX_TIMERS_PER_ITER 1024

struct watch {
	ibw_fd_cb cb;
	void *arg;
	uint32_t gen; /* 0: free slot */
};

struct ibw_timer {
	struct ibw_loop *loop;
	ibw_timer_cb cb;
	void *arg;
	uint64_t deadline;
	int armed;
	struct ibw_timer *prev, *next;
};

struct hook {
	ibw_hook_cb cb;
	void *arg;
};

struct ibw_loop {
	int epfd;
	int tfd;
	struct watch *watches;
	int nwatches;
	uint32_t next_gen;
	struct ibw_timer *timers; /* armed timers, sorted by deadline */
	uint64_t tfd_deadline; /* what the timerfd is set to; 0: unset */
	struct hook hooks[MAX_HOOKS];
	int nhooks;
	int stop;
	uint64_t wakeups; /* returns from epoll_wait */
};

uint64_t ibw_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t ibw_realtime_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Set the timerfd to the earliest deadline. Called once before each
 * wait, not on every arm and disarm: the engine re-arms its timers for
 * nearly every MAD, and a timerfd_settime() each time was one system call
 * per MAD. */
static void tfd_update(struct ibw_loop *loop)
{
	struct itimerspec its;
	uint64_t when = loop->timers ? loop->timers->deadline : 0;

	if (when == loop->tfd_deadline)
		return;
	memset(&its, 0, sizeof(its));
	if (when) {
		/* An all-zero it_value disarms: keep at least 1 ns. */
		its.it_value.tv_sec = when / 1000000u;
		its.it_value.tv_nsec = (when % 1000000u) * 1000u;
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1;
	}
	timerfd_settime(loop->tfd, TFD_TIMER_ABSTIME, &its, NULL);
	loop->tfd_deadline = when;
}

struct ibw_loop *ibw_loop_new(void)
{
	struct ibw_loop *loop = calloc(1, sizeof(*loop));
	struct epoll_event ev;

	if (!loop)
		return NULL;
	loop->epfd = epoll_create1(EPOLL_CLOEXEC);
	loop->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (loop->epfd < 0 || loop->tfd < 0)
		goto fail;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.u64 = UINT64_MAX; /* the timerfd */
	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, loop->tfd, &ev) < 0)
		goto fail;
	loop->next_gen = 1;
	return loop;
fail:
	if (loop->epfd >= 0)
		close(loop->epfd);
	if (loop->tfd >= 0)
		close(loop->tfd);
	free(loop);
	return NULL;
}

void ibw_loop_free(struct ibw_loop *loop)
{
	struct ibw_timer *t;

	if (!loop)
		return;
	/* Timers still allocated by their owners become inert. */
	for (t = loop->timers; t; t = t->next)
		t->armed = 0;
	close(loop->epfd);
	close(loop->tfd);
	free(loop->watches);
	free(loop);
}

int ibw_loop_watch(struct ibw_loop *loop, int fd, unsigned events, ibw_fd_cb cb,
		   void *arg)
{
	struct epoll_event ev;
	int op = EPOLL_CTL_ADD;

	if (fd < 0 || !cb)
		return -EINVAL;
	if (fd >= loop->nwatches) {
		int n = fd + 16;
		struct watch *w = realloc(loop->watches, n * sizeof(*w));

		if (!w)
			return -ENOMEM;
		memset(w + loop->nwatches, 0,
		       (n - loop->nwatches) * sizeof(*w));
		loop->watches = w;
		loop->nwatches = n;
	}
	if (loop->watches[fd].gen)
		op = EPOLL_CTL_MOD;
	memset(&ev, 0, sizeof(ev));
	if (events & IBW_EV_READ)
		ev.events |= EPOLLIN;
	if (events & IBW_EV_WRITE)
		ev.events |= EPOLLOUT;
	loop->watches[fd].gen = loop->next_gen++;
	if (!loop->next_gen)
		loop->next_gen = 1;
	ev.data.u64 = ((uint64_t)loop->watches[fd].gen << 32) | (uint32_t)fd;
	/* A watched fd that was closed and opened again has left the epoll
	 * set on close: add it afresh. */
	if (epoll_ctl(loop->epfd, op, fd, &ev) < 0 &&
	    (op != EPOLL_CTL_MOD || errno != ENOENT ||
	     epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)) {
		int err = errno;

		loop->watches[fd].gen = 0;
		return -err;
	}
	loop->watches[fd].cb = cb;
	loop->watches[fd].arg = arg;
	return 0;
}

int ibw_loop_unwatch(struct ibw_loop *loop, int fd)
{
	if (fd < 0 || fd >= loop->nwatches || !loop->watches[fd].gen)
		return -ENOENT;
	loop->watches[fd].gen = 0;
	if (epoll_ctl(loop->epfd, EPOLL_CTL_DEL, fd, NULL) < 0)
		return -errno;
	return 0;
}

int ibw_loop_add_hook(struct ibw_loop *loop, ibw_hook_cb cb, void *arg)
{
	if (loop->nhooks == MAX_HOOKS)
		return -ENOSPC;
	loop->hooks[loop->nhooks].cb = cb;
	loop->hooks[loop->nhooks].arg = arg;
	loop->nhooks++;
	return 0;
}

void ibw_loop_del_hook(struct ibw_loop *loop, ibw_hook_cb cb, void *arg)
{
	int i;

	for (i = 0; i < loop->nhooks; i++) {
		if (loop->hooks[i].cb == cb && loop->hooks[i].arg == arg) {
			memmove(&loop->hooks[i], &loop->hooks[i + 1],
				(loop->nhooks - i - 1) * sizeof(struct hook));
			loop->nhooks--;
			return;
		}
	}
}

static void timer_unlink(struct ibw_timer *t)
{
	struct ibw_loop *loop = t->loop;

	if (!t->armed)
		return;
	if (t->prev)
		t->prev->next = t->next;
	else
		loop->timers = t->next;
	if (t->next)
		t->next->prev = t->prev;
	t->prev = t->next = NULL;
	t->armed = 0;
}

struct ibw_timer *ibw_timer_new(struct ibw_loop *loop, ibw_timer_cb cb,
				void *arg)
{
	struct ibw_timer *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->loop = loop;
	t->cb = cb;
	t->arg = arg;
	return t;
}

void ibw_timer_free(struct ibw_timer *t)
{
	if (!t)
		return;
	ibw_timer_disarm(t);
	free(t);
}

void ibw_timer_arm_at(struct ibw_timer *t, uint64_t when)
{
	struct ibw_loop *loop = t->loop;
	struct ibw_timer *p, *last = NULL;

	timer_unlink(t);
	if (!when)
		when = 1;
	t->deadline = when;
	/* Insert after the last timer due no later: timers are few (one per
	 * module), so a sorted list is cheaper than a heap. */
	for (p = loop->timers; p && p->deadline <= when; p = p->next)
		last = p;
	t->prev = last;
	t->next = last ? last->next : loop->timers;
	if (t->next)
		t->next->prev = t;
	if (last)
		last->next = t;
	else
		loop->timers = t;
	t->armed = 1;
}

void ibw_timer_arm(struct ibw_timer *t, uint64_t delay_us)
{
	ibw_timer_arm_at(t, ibw_now_us() + delay_us);
}

void ibw_timer_disarm(struct ibw_timer *t)
{
	if (!t->armed)
		return;
	timer_unlink(t);
}

int ibw_timer_armed(const struct ibw_timer *t)
{
	return t->armed;
}

uint64_t ibw_timer_deadline(const struct ibw_timer *t)
{
	return t->armed ? t->deadline : 0;
}

static void run_timers(struct ibw_loop *loop)
{
	uint64_t now = ibw_now_us();
	uint64_t junk;
	int n;

	if (read(loop->tfd, &junk, sizeof(junk)) < 0) {
		/* EAGAIN: woken for another reason; timers are checked
		 * against the clock anyway. */
	}
	loop->tfd_deadline = 0; /* fired or not, set it again below */
	for (n = 0; n < MAX_TIMERS_PER_ITER && loop->timers &&
		    loop->timers->deadline <= now && !loop->stop;
	     n++) {
		struct ibw_timer *t = loop->timers;

		timer_unlink(t);
		t->cb(t, t->arg);
	}
}

int ibw_loop_run_once(struct ibw_loop *loop, int64_t max_wait_us)
{
	struct epoll_event evs[MAX_EVENTS];
	int i, n, timeout_ms;

	for (i = 0; i < loop->nhooks; i++)
		loop->hooks[i].cb(loop, loop->hooks[i].arg);
	if (loop->stop)
		return 0;
	timeout_ms = max_wait_us < 0 ? -1 : (int)((max_wait_us + 999) / 1000);
	tfd_update(loop);
	n = epoll_wait(loop->epfd, evs, MAX_EVENTS, timeout_ms);
	loop->wakeups++;
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (i = 0; i < n && !loop->stop; i++) {
		uint64_t d = evs[i].data.u64;
		unsigned events = 0;
		int fd;

		if (d == UINT64_MAX) {
			run_timers(loop);
			continue;
		}
		fd = (int)(uint32_t)d;
		/* Unwatched (or watched anew) by an earlier callback. */
		if (fd >= loop->nwatches ||
		    loop->watches[fd].gen != (uint32_t)(d >> 32))
			continue;
		if (evs[i].events & EPOLLIN)
			events |= IBW_EV_READ;
		if (evs[i].events & EPOLLOUT)
			events |= IBW_EV_WRITE;
		if (evs[i].events & (EPOLLERR | EPOLLHUP))
			events |= IBW_EV_ERROR;
		loop->watches[fd].cb(loop, fd, events, loop->watches[fd].arg);
	}
	/* A timer due while fds kept us busy still runs this iteration. */
	if (!loop->stop && loop->timers &&
	    loop->timers->deadline <= ibw_now_us())
		run_timers(loop);
	return 0;
}

int ibw_loop_run(struct ibw_loop *loop)
{
	int rc = 0;

	while (!loop->stop && rc == 0)
		rc = ibw_loop_run_once(loop, -1);
	return rc;
}

void ibw_loop_stop(struct ibw_loop *loop)
{
	loop->stop = 1;
}

int ibw_loop_stopped(const struct ibw_loop *loop)
{
	return loop->stop;
}

uint64_t ibw_loop_wakeups(const struct ibw_loop *loop)
{
	return loop->wakeups;
}
