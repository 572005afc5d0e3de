#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# ibwatch demo on a simulated fabric.
#
#   deploy/demo.sh          install, build, start the fabric and ibwatchd,
#                           print what to try; Ctrl-C stops it all
#   deploy/demo.sh stop     stop a demo started elsewhere
#
# Everything lives in .demo/ (IBW_DEMO_DIR); the build in build/
# (IBW_BUILD_DIR). The fabric is deploy/fabric/fattree-96.net: a 2-level
# fat tree of 96 hosts (node0001..node0096), 12 leaves and 8 spines.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
demo=${IBW_DEMO_DIR:-$top/.demo}
build=${IBW_BUILD_DIR:-$top/build}
net=$top/deploy/fabric/fattree-96.net
sf=$top/tests/lib/simfabric.sh
host=node0001 # where ibwatchd runs
http=${IBW_DEMO_HTTP:-127.0.0.1:9776}
snmp=${IBW_DEMO_SNMP:-127.0.0.1:1161} # snmpd, with ibwatchd as subagent
sm=node0096   # where opensm runs

say() { printf '%s\n' "$*"; }

stop_demo() {
	local pid
	if [ -f "$demo/ibwatchd.pid" ]; then
		pid=$(cat "$demo/ibwatchd.pid")
		if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q ibwatchd; then
			kill -TERM "$pid" 2>/dev/null
			for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
			kill -KILL "$pid" 2>/dev/null
		fi
		rm -f "$demo/ibwatchd.pid"
	fi
	if [ -f "$demo/snmp/snmpd.pid" ]; then
		pid=$(cat "$demo/snmp/snmpd.pid")
		if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q snmpd; then
			kill -TERM "$pid" 2>/dev/null
			for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
			kill -KILL "$pid" 2>/dev/null
		fi
		rm -f "$demo/snmp/snmpd.pid"
	fi
	[ -d "$demo/fabric" ] && "$sf" stop "$demo/fabric"
	unlink_mibs
	return 0
}

# IBWATCH-MIB and the SMIv2 modules it imports where net-snmp's tools
# look first, ~/.snmp/mibs, as links into this tree (the package puts
# them on the MIB path of every user instead: docs/mib.md); a file of
# the user's own there is left alone. The demo's stop takes the links
# away again.
mibs_dir=$HOME/.snmp/mibs
mib_files="$top/mib/IBWATCH-MIB.txt $top/mib/ietf/SNMPv2-SMI.txt $top/mib/ietf/SNMPv2-TC.txt $top/mib/ietf/SNMPv2-CONF.txt"
link_mibs() {
	local f
	mkdir -p "$mibs_dir" || return 0
	for f in $mib_files; do
		[ -e "$mibs_dir/${f##*/}" ] && [ ! -L "$mibs_dir/${f##*/}" ] && continue
		ln -sfn "$f" "$mibs_dir/${f##*/}"
	done
}
unlink_mibs() {
	local f
	for f in $mib_files; do
		[ "$(readlink "$mibs_dir/${f##*/}" 2>/dev/null)" = "$f" ] && rm -f "$mibs_dir/${f##*/}"
	done
	return 0
}

if [ "${1:-}" = stop ]; then
	# Tell the demo's own loop that the agent's end is ours.
	[ -d "$demo" ] && touch "$demo/stopping"
	stop_demo
	say "demo stopped"
	exit 0
fi
[ $# -eq 0 ] || { say "usage: deploy/demo.sh [stop]" >&2; exit 2; }

set -e
"$top/deploy/install-deps.sh"
cmake -S "$top" -B "$build" >/dev/null
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
set +e

stop_demo
rm -rf "$demo"
mkdir -p "$demo"
trap 'stop_demo; say ""; say "demo stopped"; exit 0' INT TERM

export IBW_SIMGUARD=$build/tests/libibw_simguard.so
# Every process on the fabric under the Linux kernel's MAD rules, as on
# the test bed, when this build has the model (docs/testing.md).
if [ -r "$build/tests/libibw_kmodel.so" ]; then
	export IBW_KMODEL=$build/tests/libibw_kmodel.so
else
	unset IBW_KMODEL
fi
say "starting the simulated fabric (ibsim + opensm, $(grep -c '^Hca' "$net") hosts)..."
if ! "$sf" start "$demo/fabric" "$net" --sm "$sm"; then
	stop_demo
	exit 1
fi
# shellcheck disable=SC1091
. "$demo/fabric/env"

say ""
say "== ibwatchd --once on $host (abridged with jq) =="
(cd "$demo/fabric/work" && SIM_HOST=$host LD_PRELOAD=$IBW_SIM_PRELOAD \
	"$build/agent/ibwatchd" --once --no-state-file) >"$demo/once.json"
jq '{local_port: (.local_port | {ca, lid, node_description, port_guid, sm_lid, state}),
     sweeps: (.status.sweeps | {counters: (.counters | {duration_ms, mads, timeouts}),
                               discovery: (.discovery | {duration_ms, mads, timeouts}),
                               unreachable_ports}),
     fabric: .status.fabric, endports: .status.endports, links: .status.links,
     unhealthy_links, endports_not_up, more}' "$demo/once.json"

# snmpd as the master agent, on a loopback port and a private AgentX
# socket; nothing of /etc/snmp is read.
mkdir -p "$demo/snmp"
cat >"$demo/snmp/snmpd.conf" <<EOF
master agentx
agentXSocket $demo/snmp/agentx.sock
rocommunity public 127.0.0.1
EOF
MIBS="" MIBDIRS="" SNMP_PERSISTENT_DIR=$demo/snmp snmpd -C -c "$demo/snmp/snmpd.conf" \
	-Lf "$demo/snmp/snmpd.log" -p "$demo/snmp/snmpd.pid" "udp:$snmp" ||
	say "snmpd did not start (see $demo/snmp/snmpd.log); going on without SNMP"
link_mibs

(cd "$demo/fabric/work" && SIM_HOST=$host LD_PRELOAD=$IBW_SIM_PRELOAD \
	exec "$build/agent/ibwatchd" --log-level info \
	--agentx "$demo/snmp/agentx.sock" --agentx-ping-interval 5 \
	--ping-interval-ms 2000 \
	--state-file "$demo/counters.state" --discovery-interval 5 \
	--counter-interval 5 --http "$http" \
	--watch-path "node0090 HCA-1" --trace-interval 5 \
	>"$demo/ibwatchd.log" 2>&1) &
echo $! >"$demo/ibwatchd.pid"
for _ in $(seq 1 50); do
	curl -s -o /dev/null "http://$http/healthz" && break
	sleep 0.1
done
# node0002's node GUID, for the SNMP look-up printed below
g2=""
for _ in $(seq 1 100); do
	g2=$(curl -s "http://$http/api/v1/ports?type=ca" 2>/dev/null |
		jq -r '.[] | select(.node_name == "node0002 HCA-1") | .node_guid' 2>/dev/null)
	[ -n "$g2" ] && break
	sleep 0.1
done

cat <<MSG

== running ==
ibwatchd (pid $(cat "$demo/ibwatchd.pid")) is attached to $host, sweeping every 5 s;
its log, with every event, is $demo/ibwatchd.log. opensm runs on $sm;
snmpd answers on $snmp with ibwatchd attached as its AgentX subagent.
Try, in another shell:

  # The fabric map: open http://$http/ in a browser (docs/map.md)
  # Prometheus metrics, the ports, a trace between two named hosts
  curl -s http://$http/metrics | grep symbol_error | head -3
  curl -s 'http://$http/api/v1/ports?type=ca' | jq '.[1] | {node_name, lid, state, remote, totals: .counters.totals}'
  curl -s 'http://$http/api/v1/trace?source=node0002%20HCA-1&target=node0090%20HCA-1' | jq -c '.hops[] | [.hop, .name, .in_port, .out_port]'
  curl -s 'http://$http/api/v1/ping?target=node0042%20HCA-1&count=3' | jq '{sent, received, rtt}'
  curl -s http://$http/api/v1/status | jq .

  # SNMP by name through IBWATCH-MIB (linked into $mibs_dir for the
  # demo): the endports' state, the cables, node0002's port 1 found by
  # its node GUID (its row in the port table), the whole subtree
  snmpwalk -v2c -c public $snmp IBWATCH-MIB::ibwEndportState | head -4
  snmptable -v2c -c public -Cw 160 $snmp IBWATCH-MIB::ibwLinkTable | head -8
  snmpget -v2c -c public $snmp "IBWATCH-MIB::ibwPortLookupIndex.'${g2:-0x0000000000000000}'.1"
  snmpbulkwalk -v2c -c public -On $snmp .1.3.6.1.4.1.32473 | wc -l

  # the agent's one-shot view from another host of the fabric
  (. $demo/fabric/env; cd $demo/fabric/work;
   SIM_HOST=node0042 LD_PRELOAD=\$IBW_SIM_PRELOAD $build/agent/ibwatchd --once --no-state-file) | jq .local_port

  # follow the events while you break things below
  tail -f $demo/ibwatchd.log

  # the reference tools on the same fabric
  (. $demo/fabric/env; cd $demo/fabric/work;
   SIM_HOST=$host LD_PRELOAD=\$IBW_SIM_PRELOAD ibnetdiscover | head -40)

  # break and mend a link, set a counter (ibsim console): each shows up
  # in the log as an event within 5 s
  $sf cmd $demo/fabric 'Unlink "node0002"[1]'
  $sf cmd $demo/fabric 'Relink "node0002"[1]'
  $sf cmd $demo/fabric 'PerformanceSet "node0002"[1] PortCounters.SymbolErrorCounter=1000'

Ctrl-C here (or deploy/demo.sh stop) stops the agent, snmpd, opensm and ibsim.
MSG

# Wait for Ctrl-C, or for the agent to end on its own.
while kill -0 "$(cat "$demo/ibwatchd.pid" 2>/dev/null)" 2>/dev/null; do
	sleep 1
done
if [ -f "$demo/stopping" ] || [ ! -f "$demo/ibwatchd.pid" ]; then
	say "demo stopped"
	exit 0
fi
say "ibwatchd exited on its own; see $demo/ibwatchd.log"
stop_demo
exit 1
