/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The libibumad transport and what the local port says about itself.
 */
#ifndef IBW_UMAD_H
#define IBW_UMAD_H

#include <stdint.h>

#include "transport.h"

#define IBW_CA_NAME_LEN 64

/* The local CA port as libibumad (sysfs) reports it at open time. Under
 * the simulator this is a snapshot taken at attach: ask the fabric
 * (PortInfo) for live state. */
struct ibw_local_port {
	char ca_name[IBW_CA_NAME_LEN];
	int portnum;
	uint16_t lid;
	uint8_t lmc;
	uint16_t sm_lid;
	uint8_t sm_sl; /* the SL to the SM (sysfs sm_sl) */
	unsigned state; /* 1 down .. 4 active */
	unsigned phys_state;
	unsigned rate; /* Gb/s */
	uint32_t capmask;
	uint64_t gid_prefix;
	uint64_t port_guid;
	uint64_t node_guid;
	char link_layer[IBW_CA_NAME_LEN];
	/* ibw_umad_open2() with serve_echo: another agent on this port
	 * already serves the echo methods, so this one only pings. */
	int echo_refused;
	/* no vendor class 0x0A agent: no hardware health (core/hw.h) */
	int vendor_a_refused;
	/* A planarized HCA's pair: SMPs go through this CA port (empty:
	 * through the port above, as on every other HCA). */
	char smi_ca_name[IBW_CA_NAME_LEN];
	int smi_portnum;
};

/*
 * Open @ca (NULL: the first CA with an active port) port @port (0: its
 * first active port), register every agent ibwatch needs and return a
 * non-blocking transport. On failure returns -errno and, when @err is
 * given, a sentence for the operator.
 */
int ibw_umad_open(const char *ca, int port, struct ibw_transport **out,
		  struct ibw_local_port *info, char *err, size_t errlen);

/* As ibw_umad_open(); with @serve_echo the vendor echo class is also
 * registered to receive Get requests (the responder). Only one process
 * per port can do that (ibping -S is another): if another holds them,
 * the port still opens, without serving, and info->echo_refused says so. */
int ibw_umad_open2(const char *ca, int port, int serve_echo,
		   struct ibw_transport **out, struct ibw_local_port *info,
		   char *err, size_t errlen);

/* The /dev/infiniband/umadN of @ca port @port, from sysfs; 0 or -1. */
int ibw_umad_dev_path(const char *ca, int port, char *path, size_t len);

/*
 * As ibw_umad_open2(), with SMPs through @smi_ca port @smi_port and every
 * other MAD through @gsi_ca port @gsi_port (which @info describes): the
 * two devices of a planarized HCA whose port has no SMI. ibw_umad_open2()
 * opens such a pair itself where libibumad can pair devices
 * (ibw_umad_pairs_supported()).
 */
int ibw_umad_open_pair(const char *smi_ca, int smi_port, const char *gsi_ca,
		       int gsi_port, int serve_echo, struct ibw_transport **out,
		       struct ibw_local_port *info, char *err, size_t errlen);

/* 1 when the libibumad built against pairs SMI and GSI devices
 * (umad_get_smi_gsi_pair_by_ca_name, rdma-core 56 and later). */
int ibw_umad_pairs_supported(void);

/* A local CA and its ports, like `dladm show-ib` or `ibstat`. */
struct ibw_local_ca {
	char name[IBW_CA_NAME_LEN];
	char ca_type[40];
	char fw_ver[20];
	uint64_t node_guid;
	uint64_t system_guid;
	unsigned nports;
	struct ibw_local_port ports[8];
	uint16_t pkeys[8][64]; /* per port, nonzero entries first */
	unsigned npkeys[8];
};

/* Every local CA, at most @max; returns how many or -errno. */
int ibw_umad_local_cas(struct ibw_local_ca *out, unsigned max);

#endif
