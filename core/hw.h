/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Hardware health in-band (docs/hardware.md): the switches' and HCAs'
 * firmware, inventory, temperature sensors, fans and power supplies,
 * read through NVIDIA's access registers (core/hwreg.h) with vendor
 * class 0x0A MADs, on a slow period of its own, through the engine and
 * its flow control.
 *
 * Which devices are asked: nodes whose NodeInfo VendorID is NVIDIA's;
 * others never. Each is first asked GeneralInfo,
 * once, with no retry: one that does not answer (silent) or does not
 * say IsAccessRegisterSupported (refused) is not asked again until the
 * next discovery. A register a device answers "not supported" or "bad
 * parameter" is not asked again until it is rediscovered (gone and
 * back). The inventory (MSGI, MTCAP, MFCR, MFSL) is read once per
 * device (again each sweep until it is answered); MGIR, the sensors (MTMP), fans (MFSM) and power supplies
 * (MSPS) on every sweep.
 *
 * What a sweep found is published as a view: immutable, shared by
 * reference with snapshots (core/snapshot.h), made on the loop.
 */
#ifndef IBW_HW_H
#define IBW_HW_H

#include <stdint.h>

#include "engine.h"
#include "events.h"
#include "fabric.h"
#include "hwreg.h"
#include "links.h"
#include "loop.h"

#define IBW_HW_INTERVAL_US 60000000u /* a minute: sensors change slowly */
#define IBW_HW_VENDOR_NVIDIA 0x0002c9u
/* requests a sweep has in the engine at once, at most */
#define IBW_HW_MAX_SUBMITTED 1024

enum ibw_hw_state {
	IBW_HW_NEW, /* not asked yet (since its discovery) */
	IBW_HW_OK, /* it serves access registers */
	IBW_HW_REFUSED, /* answered GeneralInfo without them, or an error */
	IBW_HW_SILENT, /* GeneralInfo went unanswered */
	IBW_HW_VENDOR, /* another vendor: never asked */
};

/* "new", "ok", "refused", "silent", "other_vendor" */
const char *ibw_hw_state_str(enum ibw_hw_state s);

struct ibw_hw_sensor {
	unsigned index;
	char name[3 * 8 + 1];
	/* Celsius; the thresholds 0 when the device gives none */
	double temp_c, max_c, hi_c, lo_c;
	int hot; /* at or above its high threshold */
	int have; /* read by the last sweep (else not shown) */
};

struct ibw_hw_fanv {
	unsigned tacho, rpm, min_rpm, max_rpm;
	int have_limits;
	int failed; /* stopped, or under its low limit */
	int have; /* its speed read by the last sweep (else not shown) */
};

/* registers a device answered "not there" (bit per register) */
enum {
	IBW_HWR_MGIR = 1u << 0,
	IBW_HWR_MSGI = 1u << 1,
	IBW_HWR_MTCAP = 1u << 2,
	IBW_HWR_MTMP = 1u << 3,
	IBW_HWR_MFCR = 1u << 4,
	IBW_HWR_MFSM = 1u << 5,
	IBW_HWR_MFSL = 1u << 6,
	IBW_HWR_MSPS = 1u << 7,
	IBW_HWR_PDDR = 1u << 8,
};

/* The cable module at a port with its link up: PDDR's module info page
 * (identity, live values, alarm thresholds) and its latched flags page
 * (the module's own warnings and alarms), read every sweep. */
struct ibw_hw_module {
	uint8_t port;
	uint8_t have_info, have_flags;
	struct ibw_hw_modinfo info;
	struct ibw_hw_modflags flags;
	/* judged from both (core/links.h): what the link view shows */
	struct ibw_link_module judged;
};

/* A module is plugged in and reports values (not unplugged, not a
 * passive copper cable without monitoring). */
int ibw_hw_module_present(const struct ibw_hw_module *m);
/* A lane's power in dBm from microwatts, as mstlink shows it (0 uW:
 * -40 dBm). */
double ibw_hw_dbm(unsigned uw);

struct ibw_hw_node {
	uint64_t guid;
	uint16_t lid;
	uint32_t vendor_id;
	int is_switch;
	enum ibw_hw_state state;
	unsigned missing; /* IBW_HWR_* */
	/* IBW_HWR_MSGI, _MTCAP, _MFCR: the inventory read, or known
	 * missing; asked again each sweep until then */
	unsigned inv;
	/* MGIR, MSPS (and each sensor, fan and module) as the last sweep
	 * read them: a failed read shows nothing rather than old values */
	int have_mgir, have_msgi, have_psus;
	struct ibw_hw_mgir mgir;
	uint64_t mgir_us; /* CLOCK_REALTIME when MGIR was read */
	struct ibw_hw_msgi msgi;
	uint64_t sensor_map;
	uint32_t tachos;
	unsigned nsensors, nfans, nmodules;
	struct ibw_hw_sensor *sensors;
	struct ibw_hw_fanv *fans;
	struct ibw_hw_module *modules; /* by port */
	struct ibw_hw_psu psus[IBW_HW_PSUS];
	int psu_failed[IBW_HW_PSUS];
	/* its part of the last sweep: how long after the sweep's start its
	 * last answer came (not the device's own time: its requests may
	 * wait behind others) */
	uint64_t sweep_us;
	unsigned sweep_mads, sweep_timeouts, sweep_errors;
	uint64_t mads, timeouts; /* in all, since start */
};

struct ibw_hw_view {
	unsigned refs;
	uint64_t taken_us; /* CLOCK_REALTIME */
	uint64_t sweeps;
	uint64_t interval_us;
	uint64_t duration_us; /* of the last sweep */
	uint64_t mads, timeouts; /* since start */
	uint64_t sweep_mads, sweep_timeouts; /* of the last sweep */
	unsigned nnodes; /* every node of the last discovery, by GUID */
	struct ibw_hw_node *nodes;
};

struct ibw_hw_view *ibw_hw_view_ref(struct ibw_hw_view *v);
void ibw_hw_view_unref(struct ibw_hw_view *v);
/* The module at port @port of node @n, or NULL. */
const struct ibw_hw_module *ibw_hw_node_module(const struct ibw_hw_node *n,
					       unsigned port);
/* The node @guid in @v, or NULL. */
const struct ibw_hw_node *ibw_hw_view_find(const struct ibw_hw_view *v,
					   uint64_t guid);
/* The node's fans that failed and power supplies that did (counts). */
unsigned ibw_hw_node_fans_failed(const struct ibw_hw_node *n);
unsigned ibw_hw_node_psus_failed(const struct ibw_hw_node *n);

struct ibw_hw_opts {
	uint64_t interval_us; /* 0: IBW_HW_INTERVAL_US */
};

struct ibw_hw;

/* @done runs on the loop after each sweep with the new view (the
 * callee takes a reference if it keeps it). @ev: where threshold
 * crossings and failures are reported (NULL: nowhere). */
struct ibw_hw *ibw_hw_new(struct ibw_engine *e, struct ibw_loop *loop,
			  const struct ibw_hw_opts *o, struct ibw_events *ev,
			  void (*done)(struct ibw_hw_view *v, void *arg),
			  void *arg);
void ibw_hw_free(struct ibw_hw *h);
/* A discovery's fabric (a reference is taken): its nodes are the ones
 * swept from the next sweep on; the first starts the periodic sweeps. */
void ibw_hw_set_fabric(struct ibw_hw *h, struct ibw_fabric *f);
/* Sweep now (tests, --once): 0, or -EBUSY while one runs. */
int ibw_hw_sweep(struct ibw_hw *h);

#endif
