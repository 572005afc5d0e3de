/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel and fabric model's private interface (docs/testing.md, "The
 * kernel and fabric model"): the state its files share, under one mutex,
 * and the functions they call across files. One library, libibw_kmodel.so:
 *
 *   ibw_kmodel.c  the per-fd state and the wrappers of open, close, read,
 *                 write, ioctl and poll
 *   km_core.c     the state (km), configuration, the statistics line,
 *                 the pools, the timer heap, the waiting requests
 *   km_req.c      a request's life: tries, resends, the timeout report,
 *                 the agent's backlog
 *   km_dest.c     per-destination service queues, dead destinations,
 *                 protected SMAs
 *   km_ca.c       what a real port and host answer that ibsim does not,
 *                 agent registrations shared by the processes of a node
 *
 * and the km_*.h modules, each with its own interface.
 */
#ifndef IBW_KM_INT_H
#define IBW_KM_INT_H

#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Both headers define struct ib_user_mad; keep umad.h's (libibumad's
 * view, ib_user_mad_t) and take only the registration request and the
 * ioctl numbers from the kernel's. */
#define ib_user_mad ibw_kernel_user_mad
#include <rdma/ib_user_mad.h>
#undef ib_user_mad
#include <infiniband/umad.h>

/* Shared between the model's files only: the library exports the libc
 * functions it wraps, not these. */
#pragma GCC visibility push(hidden)

/* umad_size() is sizeof(struct ib_user_mad); taking the size here keeps
 * libibumad out of the preload. */
#define HDR ((size_t)sizeof(ib_user_mad_t))
#define MAD_MAX 256 /* umad2sim carries one 256-byte MAD */
#define MSG_CAP (HDR + MAD_MAX)
#define MAD_HDR 24 /* what a timeout report carries */
#define KM_ETIMEDOUT 110 /* ETIMEDOUT as the kernel writes it */

#define MAXFD 16 /* open umad fds per process */
#define FDLIM 4096 /* umad2sim's fake fds are 1024..2047 */
#define NAGENT 64 /* umad2sim hands out ids below 32 */
#define NTRY 8 /* ready times remembered per request */
#define LINGER_US 2000000 /* a timed-out request's answer is "late" */
#define DEAD_CHECK_US 20000 /* dead.<pid> looked for at most this often */
#define DEADLID_CHECK_US 100000 /* IBW_KM_DEAD_FILE likewise */
#define MKEY_CHECK_US 100000 /* IBW_KM_MKEY_FILE likewise */
#define CALID_CHECK_US 100000 /* the state dir's ca-lids likewise */
#define MKEY_MAX 64 /* protected nodes */
#define SLICE_US 20000 /* longest sleep without looking around */
#define MIXED_SLICE_MS 1 /* poll slice with other fds in the set */
#define INF UINT64_MAX

#define CLS_SMI 0x01
#define CLS_SA 0x03
#define CLS_PMA 0x04
#define CLS_DR 0x81
#define METHOD_RESP 0x80
#define METHOD_TRAP_REPRESS 0x07

enum { G_SMA, G_PMA, G_SA, G_VENDOR, NGROUP };
enum { RQ_BACKLOG = 1, RQ_WAIT, RQ_LATE };

struct msg {
	struct msg *next;
	size_t len;
	uint8_t buf[MSG_CAP];
};

struct kfd;

/* A request sent with a timeout, from write() until it is answered,
 * timed out (then lingering as RQ_LATE so a late answer is counted as
 * such) or its fd goes. */
struct req {
	struct req *hnext; /* hash chain */
	struct req *qnext; /* agent backlog, free list */
	struct kfd *kf;
	int hidx; /* timer heap slot, -1 if none */
	uint64_t when; /* timer: next thing to do */
	uint64_t try_end; /* this try's deadline */
	uint64_t final; /* the last try's deadline */
	struct msg *held; /* an answer kept until held_at */
	uint64_t held_at;
	uint64_t ready[NTRY]; /* modelled ready time of each unanswered try */
	unsigned rhead, rcount;
	uint32_t timeout_ms, tries_left, agent, tid;
	uint8_t cls, state;
	size_t len;
	uint8_t buf[MSG_CAP]; /* the request as written (resends, reports) */
};

struct agent {
	int used;
	uint8_t cls, ver, oui[3], mask[16];
	unsigned outstanding, backlog;
	struct req *bl_head, *bl_tail;
};

struct kfd {
	int fd, used, dead;
	struct msg *qhead, *qtail; /* deliverable now */
	struct msg *shead, *stail; /* answered by the model at write() */
	struct agent ag[NAGENT];
};

struct dest {
	uint64_t key;
	uint64_t busy[NGROUP];
	uint64_t node_guid; /* who answered NodeInfo here; 0: not known */
};

typedef int (*open_fn)(const char *, int, ...);
typedef int (*close_fn)(int);
typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef int (*poll_fn)(struct pollfd *, nfds_t, int);
typedef int (*ioctl_fn)(int, unsigned long, ...);

/* A CA port the fabric reaches: its LID and its node's name (ibsim's). */
struct calid {
	uint16_t lid;
	char host[64];
};

struct km_state {
	pthread_mutex_t mu;
	int on, rule, latency;
	int real_portinfo; /* PortInfo's supported sets as hardware's */
	int real_psc; /* PMAs answer PortSamplesControl, as hardware's do */
	int real_unsupported; /* hosts answer unserved classes 0x000C */
	unsigned fc_smp, fc_sa;
	uint64_t wire_us, hop_us, svc_us[NGROUP];
	char state_dir[512], dead_path[600], reg_path[700], log_path[512];
	uint8_t dead_cls[32]; /* classes a dead LID swallows */
	uint8_t dead_env[8192], dead_file[8192];
	int any_dead_env;
	char dead_file_path[512];
	uint64_t dead_file_checked;
	struct timespec dead_file_mtime;
	off_t dead_file_size;
	int dead_file_present;

	struct kfd fds[MAXFD];
	uint64_t dead_checked;
	int dead_now;
	int opened; /* a umad fd was ever opened: log at exit */

	struct req **ht;
	uint32_t htmask, nreq;
	struct req **heap;
	uint32_t nheap, capheap;
	struct req *free_req;
	struct msg *free_msg;
	struct dest *dt;
	uint32_t dtmask, ndest;

	uint64_t sent, answered, unmatched, late, timeouts, resent;
	uint64_t psc_answered; /* PortSamplesControl Gets ibsim dropped */
	uint64_t fec_answered; /* FEC ports' Gets ibsim dropped (km_fec.c) */
	uint64_t hw_answered; /* vendor MADs of NVIDIA devices (km_hw.c) */
	uint64_t backlogged, backlog_hwm, refused, dr_hops, bounced, dead_lid;
	uint64_t mkey_dropped;
	uint64_t unsupported; /* answered 0x000C: no agent at that CA */
	int logged;

	/* CA ports a request of a class nobody there registered gets
	 * "method not supported" from (the state dir's ca-lids, which the
	 * test bed writes): by LID, with their node's name. */
	char calid_path[600];
	uint64_t calid_checked;
	struct timespec calid_mtime;
	off_t calid_size;
	struct calid *calid;
	size_t ncalid;

	/* protected SMAs: node GUID and the M_Key they demand */
	char mkey_path[512];
	uint64_t mkey_checked;
	struct timespec mkey_mtime;
	off_t mkey_size;
	unsigned nprot;
	uint64_t prot_guid[MKEY_MAX], prot_key[MKEY_MAX];
};

extern struct km_state km;

extern open_fn n_open;
extern close_fn n_close;
extern read_fn n_read;
extern write_fn n_write;
extern poll_fn n_poll;
extern ioctl_fn n_ioctl;

/* km_core.c */
void km_resolve(void);
uint64_t km_now_us(void);
int km_lock(void);
void km_unlock(int old);
int km_bit_get(const uint8_t *map, unsigned i);
int km_parse_lids(const char *s, uint8_t *map);
void km_host_name(char *out, size_t n, const char *name);
void km_init(void);
void km_hook_sigterm(void);
struct msg *km_msg_get(void);
void km_msg_put(struct msg *m);
struct req *km_req_get(void);
void km_req_put(struct req *r);
void km_heap_del(struct req *r);
int km_heap_set(struct req *r, uint64_t when);
int km_ht_init(void);
void km_ht_add(struct req *r);
void km_ht_del(struct req *r);
struct req *km_ht_find(uint8_t cls, uint32_t tid, uint32_t agent);

/* km_req.c */
void km_deliver(struct kfd *kf, struct msg *m);
unsigned km_fc_limit(uint8_t cls);
struct agent *km_agent_of(struct kfd *kf, uint32_t id);
uint64_t km_pop_try(struct req *r, uint64_t now);
void km_resched(struct req *r);
void km_finish(struct req *r, uint64_t now);
void km_start(struct req *r, uint64_t now);
void km_run_timers(uint64_t now);
uint64_t km_next_timer(void);

/* km_dest.c */
uint16_t km_req_dlid(const uint8_t *buf);
uint64_t km_model_ready(const struct req *r, uint64_t now);
int km_dest_dead(const uint8_t *buf, uint8_t cls, uint64_t now);
int km_mkey_refuses(const struct req *r, const uint8_t *ans, size_t len,
		    uint64_t now);

/* km_ca.c */
void km_real_portinfo(struct msg *m);
void km_real_nodedesc(struct msg *m);
void km_real_fec(struct msg *m);
void km_pma_set_sent(const uint8_t *buf);
int km_fec_answer(struct msg *m, const struct req *r);
int km_real_psc(struct msg *m);
int km_unsupported_class(struct msg *m, const struct req *r, uint64_t now);
int km_never_answered(const uint8_t *mad);
int km_ca_reached(uint16_t lid, uint64_t now);
int km_local_answer(struct req *r, uint64_t now);
int km_mask_empty(const uint8_t *mask);
void km_reg_drop(const int *drop);
int km_do_register(struct kfd *kf, int fd, unsigned long request,
		   struct ib_user_mad_reg_req *q);
void km_drop_agents(struct kfd *kf);

#pragma GCC visibility pop

#endif
