/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The event loop: epoll for file descriptors, one timerfd for all timers,
 * and hooks that run before every wait. Single-threaded; every callback
 * runs on the thread that called ibw_loop_run().
 */
#ifndef IBW_LOOP_H
#define IBW_LOOP_H

#include <stdint.h>

struct ibw_loop;
struct ibw_timer;

#define IBW_EV_READ 0x1u
#define IBW_EV_WRITE 0x2u
#define IBW_EV_ERROR 0x4u /* reported only, never requested */

typedef void (*ibw_fd_cb)(struct ibw_loop *loop, int fd, unsigned events,
			  void *arg);
typedef void (*ibw_timer_cb)(struct ibw_timer *timer, void *arg);
typedef void (*ibw_hook_cb)(struct ibw_loop *loop, void *arg);

/* Microseconds on CLOCK_MONOTONIC. */
uint64_t ibw_now_us(void);
/* Microseconds on CLOCK_REALTIME: for times shown to people. */
uint64_t ibw_realtime_us(void);

struct ibw_loop *ibw_loop_new(void);
void ibw_loop_free(struct ibw_loop *loop);

/* Watch @fd for @events; replaces an earlier watch of the same fd. */
int ibw_loop_watch(struct ibw_loop *loop, int fd, unsigned events, ibw_fd_cb cb,
		   void *arg);
int ibw_loop_unwatch(struct ibw_loop *loop, int fd);

/* Run @cb before every wait, in the order added. */
int ibw_loop_add_hook(struct ibw_loop *loop, ibw_hook_cb cb, void *arg);
void ibw_loop_del_hook(struct ibw_loop *loop, ibw_hook_cb cb, void *arg);

/* Run until ibw_loop_stop(); returns 0, or -errno if epoll fails. */
int ibw_loop_run(struct ibw_loop *loop);
/* Run one iteration, waiting at most @max_wait_us (-1: no limit). */
int ibw_loop_run_once(struct ibw_loop *loop, int64_t max_wait_us);
void ibw_loop_stop(struct ibw_loop *loop);
int ibw_loop_stopped(const struct ibw_loop *loop);
/* Times the loop came back from its wait: for a ready fd, a due timer,
 * a signal or the end of ibw_loop_run_once()'s wait. An idle daemon
 * wakes only for its timers and its clients, so a count far above those
 * shows a loop that spins (an fd that stays ready, a timer re-armed at
 * zero delay). */
uint64_t ibw_loop_wakeups(const struct ibw_loop *loop);

/* One-shot timers; arm again to repeat. A timer is inert until armed. */
struct ibw_timer *ibw_timer_new(struct ibw_loop *loop, ibw_timer_cb cb,
				void *arg);
void ibw_timer_free(struct ibw_timer *timer);
void ibw_timer_arm(struct ibw_timer *timer, uint64_t delay_us);
void ibw_timer_arm_at(struct ibw_timer *timer, uint64_t when_us);
void ibw_timer_disarm(struct ibw_timer *timer);
int ibw_timer_armed(const struct ibw_timer *timer);
uint64_t ibw_timer_deadline(const struct ibw_timer *timer);

#endif
