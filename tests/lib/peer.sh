# SPDX-License-Identifier: BSD-2-Clause
# Sourced after tap.sh: the real infiniband_exporter beside ibwatchd
# (tests/integration/exporter.sh, tests/bench/prom_rates.sh). It is no
# part of the project: built from its upstream source and kept in
# ../shared/peers/infiniband_exporter (IBW_EXPORTER names another), absent
# in a user's clone.
peer_exporter=${IBW_EXPORTER:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/../shared/peers/infiniband_exporter/infiniband_exporter}

# start_peer_exporter ARGS...: the exporter on a free loopback port (X),
# its ibnetdiscover and perfquery run on the simulated fabric at node0001
# (wrappers in the working directory), with ARGS; its PID in pids, its
# log in exporter.log.
start_peer_exporter() {
	local tool
	for tool in ibnetdiscover perfquery; do
		printf '#!/bin/sh\nSIM_HOST=node0001 LD_PRELOAD="$IBW_SIM_PRELOAD" exec /usr/sbin/%s "$@"\n' \
			"$tool" >"sim-$tool"
		chmod +x "sim-$tool"
	done
	X=$(free_port)
	"$peer_exporter" --ibnetdiscover.path="$PWD/sim-ibnetdiscover" \
		--perfquery.path="$PWD/sim-perfquery" \
		--web.listen-address="127.0.0.1:$X" "$@" >exporter.log 2>&1 &
	pids+=($!)
}
