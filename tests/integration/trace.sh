#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Path traces against ibtracert: forward hops for 60 source/destination
# pairs on the 324-host fat tree and every pair of the small ibsim
# examples, reverse paths against ibtracert run at the destination,
# failures (an unlinked host, an unassigned LID), endport confirmation
# by a responder (and a mismatch), and a watched path that changes
# after a spine link goes: the new path equals ibtracert's, one event.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}" "${FAKE_RESPONDER:?}"
nets=/usr/share/doc/ibsim-utils/net-examples

if [ -z "${IBW_SIM_DIR:-}" ]; then
	work=${IBW_TEST_WORK:-$PWD/test-work}
	mkdir -p "$work"
	"$IBW_FATTREE" --levels 2 --hosts 324 >"$work/trace-324.net"
	rc=0
	"$here/lib/with-fabric.sh" trace-324 "$work/trace-324.net" --sm node0324 \
		-- env IBW_CASE=big "$0" || rc=1
	for n in net.2sw2path net.2sw2path4hca net.2sw2path4hca2port; do
		sm=$(awk '/^(Hca|Ca)[ \t]/ { match($0, /"[^"]*"/); print substr($0, RSTART + 1, RLENGTH - 2); exit }' "$nets/$n")
		"$here/lib/with-fabric.sh" "trace-$n" "$nets/$n" --sm "$sm" \
			-- env IBW_CASE="$n" "$0" || rc=1
	done
	exit $rc
fi


# ibtracert's hops as "OUT GUID IN" lines ("From" gives the first, with
# the node GUID; the others name switches by node GUID, CAs by port GUID).
canon_ref() {
	awk '/^From / { match($0, /\{0x[0-9a-f]+\}/); g = substr($0, RSTART + 1, RLENGTH - 2)
			 match($0, /portnum [0-9]+/); split(substr($0, RSTART, RLENGTH), w, " ")
			 src = g; next }
	     /^\[/ { match($0, /^\[[0-9]+\]/); o = substr($0, 2, RLENGTH - 2)
		     match($0, /\{0x[0-9a-f]+\}\[[0-9]+\]/); s = substr($0, RSTART, RLENGTH)
		     split(s, w, /[{}\[\]]/); print o, (n++ ? prev : src), w[2] "/" w[4]; prev = w[2] }'
}
# ours in the same shape: each hop's out port, its GUID, and the next
# hop's GUID (port GUID for CAs) / in port.
canon_ours() { # JSON on stdin, .path (fwd) or .reverse
	jq -r --arg p "$1" '(if $p == "rev" then .reverse else . end) | .hops as $h |
		range(0; ($h | length) - 1) as $i |
		"\($h[$i].out_port) \(if $i == 0 then $h[0].node_guid else ($h[$i] | if .type == "switch" then .node_guid else .port_guid end) end) \($h[$i + 1] | if .type == "switch" then .node_guid else .port_guid end)/\($h[$i + 1].in_port)"'
}

trap stop_started EXIT
at "${IBW_SIM_SM}" "$IBWATCHD" --once --full --no-state-file --no-ping >fab.json 2>fab.err
hosts=$(jq -r '[.nodes[] | select(.type == "ca" and (.gone | not)) | .ports[] | select(.remote != null)] | length' fab.json)
# "nodeid lid" for every host, and every switch's lid
jq -r '.nodes[] | select(.type == "ca") | . as $n | .ports[] | select(.remote != null) | "\($n.description | split(" ")[0]) \(.lid)"' fab.json >hosts.txt
jq -r '.nodes[] | select(.type == "switch") | .lid' fab.json >switches.txt

compare_pair() { # src-nodeid src-lid dst-lid [reverse: dst-nodeid]
	local s=$1 sl=$2 dl=$3 d=${4:-} ours ref
	ours=$(at "$s" "$IBWATCHD" --trace "$dl" ${d:+--reverse} 2>>trace-cli.err)
	# We trace from the port we are attached to (a CA with two linked
	# ports has a LID on each): ibtracert from that one.
	sl=$(jq -r .source_lid <<<"$ours")
	ref=$(at "$s" ibtracert "$sl" "$dl" 2>/dev/null | canon_ref)
	[ -n "$ref" ] && [ "$(canon_ours fwd <<<"$ours")" = "$ref" ] || {
		echo "# $s -> $dl: ours"; canon_ours fwd <<<"$ours"; echo "# ibtracert"; echo "$ref"; return 1; }
	[ -z "$d" ] && return 0
	# ... and back from the destination port the trace reached
	ref=$(at "$d" ibtracert "$(jq -r '.hops[-1].lid' <<<"$ours")" "$sl" 2>/dev/null | canon_ref)
	[ -n "$ref" ] && [ "$(canon_ours rev <<<"$ours")" = "$ref" ] || {
		echo "# reverse $d -> $sl: ours"; canon_ours rev <<<"$ours"; echo "# ibtracert from $d"; echo "$ref"; return 1; }
}

if [ "$IBW_CASE" != big ]; then
	# every pair of hosts, and every host to every switch
	n=0 bad_pairs=0
	while read -r s sl; do
		while read -r d dl; do
			[ "$d" = "$s" ] && continue
			n=$((n + 1)); compare_pair "$s" "$sl" "$dl" "$d" || bad_pairs=$((bad_pairs + 1))
		done <hosts.txt
		while read -r dl; do
			n=$((n + 1)); compare_pair "$s" "$sl" "$dl" || bad_pairs=$((bad_pairs + 1))
		done <switches.txt
	done <hosts.txt
	check "$IBW_CASE: all $n pairs equal ibtracert (forward and reverse)" test $bad_pairs = 0 -a $n -gt 0
	finish
	exit
fi

# 60 pairs: sources spread over the hosts, destinations hosts and switches
n=0 bad_pairs=0 nrev=0
mapfile -t H <hosts.txt
mapfile -t S <switches.txt
for ((i = 0; i < 60; i++)); do
	read -r s sl <<<"${H[$(((i * 37 + 1) % ${#H[@]}))]}"
	[ "$s" = "$IBW_SIM_SM" ] && continue
	if ((i % 4 == 3)); then
		dl=${S[$((i % ${#S[@]}))]} d=""
	else
		read -r d dl <<<"${H[$(((i * 53 + 7) % ${#H[@]}))]}"
		[ "$d" = "$s" ] && continue
		nrev=$((nrev + 1))
	fi
	n=$((n + 1))
	compare_pair "$s" "$sl" "$dl" "$d" || bad_pairs=$((bad_pairs + 1))
done
check "$n pairs: forward hops equal ibtracert's ($nrev with reverse paths equal ibtracert's from the destination)" test $bad_pairs = 0 -a $n -ge 50

lid_of() { awk -v n="$1" '$1 == n { print $2 }' hosts.txt; }

# Failures, reported with the hop and the reason (how long a failing
# trace takes is measured in tests/bench/timing.sh).
j=$(at node0001 "$IBWATCHD" --trace 9000 2>cli-9000.err); rc=$?
check "a trace to an unassigned LID says no route" jq -e '.status == "no route" and .failed_hop == 1 and (.reason | test("no route to lid 9000"))' <<<"$j"
check "... and exits non-zero" [ $rc = 1 ]
l20=$(lid_of node0020)
# node0001's leaf, the trace's first hop
leaf=$(jq -r '.nodes[] | select(.name == "node0001 HCA-1") | .ports[0].remote.name' fab.json)
leaf_lid=$(jq -r --arg n "$leaf" '.nodes[] | select(.description == $n) | .lid' fab.json)
# "valid lids" in the leaf's forwarding table for node0020's LID: 1
# while routed, 0 once opensm has taken the route away.
routed() { at node0001 ibroute "$leaf_lid" "$l20" "$l20" 2>>ibroute.err | sed -n 's/^\([0-9]*\) valid lids dumped.*/\1/p'; }
check "ibroute: $leaf routes to node0020 (lid $l20)" [ "$(routed)" = 1 ]
"$IBW_SIMFABRIC" cmd "$IBW_SIM_DIR" 'Unlink "node0020"[1]' >/dev/null
# opensm hears of the link going (a trap) and removes the route.
for _ in $(seq 1 100); do [ "$(routed)" = 0 ] && break; sleep 0.1; done
check "ibroute: once node0020 is unlinked, opensm removes its route from $leaf" [ "$(routed)" = 0 ]
j=$(at node0001 "$IBWATCHD" --trace "$l20" 2>cli-unlinked.err)
check "a trace to the unlinked host fails where ibroute says, with the reason ($(jq -c '[.status, .failed_hop, .reason]' <<<"$j"))" \
	jq -e --arg r "$leaf has no route to lid $l20" '.status == "no route" and .failed_hop == 1 and .reason == $r' <<<"$j"
"$IBW_SIMFABRIC" cmd "$IBW_SIM_DIR" 'Relink "node0020"[1]' >/dev/null

# Endport confirmation: our responder on node0002, an impostor on node0003.
SIM_SET_ISSM=1 spawn node0002 "$IBWATCHD" --responder --no-probes >r2.log 2>&1 &
r2=$!
pids+=("$r2")
SIM_SET_ISSM=1 spawn node0003 "$FAKE_RESPONDER" 0x00000000deadbeef >r3.log 2>&1 &
r3=$!
pids+=("$r3")
# registered PID NODE: PID has its MAD agents on NODE, in the kernel
# model's registry (ctest loads the model), else it is connected to ibsim.
registered() {
	if [ -n "${IBW_KM_STATE_DIR:-}" ]; then
		grep -q "^$1 " "$IBW_KM_STATE_DIR/agents.$2" 2>/dev/null
	else
		ls -l "/proc/$1/fd" 2>/dev/null | grep -q socket
	fi
}
for _ in $(seq 1 100); do registered "$r2" node0002 && registered "$r3" node0003 && break; sleep 0.1; done
check "both responders are registered (node0002, node0003)" registered "$r2" node0002
check "... the impostor too" registered "$r3" node0003
j=$(at node0001 "$IBWATCHD" --trace "$(lid_of node0002)" --confirm 2>cli-confirm.err)
check "with a responder there the endport is confirmed" jq -e '.endport == "confirmed"' <<<"$j"
j=$(at node0001 "$IBWATCHD" --trace "$(lid_of node0003)" --confirm 2>cli-mismatch.err)
check "another port GUID answering is reported as a mismatch" jq -e '.endport == "mismatch" and .endport_guid == "0x00000000deadbeef"' <<<"$j"
j=$(at node0001 "$IBWATCHD" --trace "$(lid_of node0005)" --confirm 2>cli-noresp.err)
check "no responder: said so, the trace still ok" jq -e '.endport == "no responder" and .status == "ok"' <<<"$j"
check "the responder stops cleanly (SIGTERM, exit 0)" stopped_clean "$r2"
check "the impostor stops cleanly (SIGTERM, exit 0)" stopped_clean "$r3"

# A watched path changes when a spine link on it goes.
l100=$(lid_of node0100)
start_agent node0001 --no-state-file --no-ping --no-snmp --watch-path "node0100 HCA-1" \
	--trace-interval 1 --discovery-interval 1 --counter-interval 3600 ||
	{ echo "not ok - the watching agent does not start"; exit 1; }
w=$agent
wlog=agent-$P.log
watched() { curl -s -m 5 "http://127.0.0.1:$P/api/v1/traces" | jq -c '.[0] // empty'; }
traced_ok() { watched | jqe --argjson n "$1" '.traces >= $n and .last.status == "ok"'; }
# the path traced once (ok) before the link goes
for _ in $(seq 1 100); do traced_ok 1 && break; sleep 0.1; done
check "the watched path is traced" traced_ok 1
before=$(at node0001 ibtracert "$(lid_of node0001)" "$l100" | canon_ref)
spine_line=$(grep -m1 'switch port' <<<"$(at node0001 ibtracert "$(lid_of node0001)" "$l100")")
# the first hop is the leaf; the second the spine: unlink the spine's in port
spine_guid=$(at node0001 ibtracert "$(lid_of node0001)" "$l100" | sed -n '3s/.*{\(0x[0-9a-f]*\)}\[\([0-9]*\)\].*/\1 \2/p')
read -r sg sp <<<"$spine_guid"
sname=$(jq -r --arg g "$sg" '.nodes[] | select(.guid == $g) | .description' fab.json)
"$IBW_SIMFABRIC" cmd "$IBW_SIM_DIR" "Unlink \"$sname\"[$sp]" >/dev/null
changed=0
for _ in $(seq 1 100); do
	grep -q 'path to node0100 HCA-1 changed' "$wlog" && watched | jqe '.changes >= 1' && { changed=1; break; }
	sleep 0.1
done
# two more trace rounds, both ok: no second event
n=$(watched | jq .traces)
for _ in $(seq 1 100); do traced_ok $((n + 2)) && break; sleep 0.1; done
check "two more traces of the new path ($n, then $(watched | jq .traces))" traced_ok $((n + 2))
after=$(at node0001 ibtracert "$(lid_of node0001)" "$l100" | canon_ref)
check "the watched path changed ($sname port $sp unlinked)" [ $changed = 1 ]
check "exactly one path-change event (the log, and the count in /api/v1/traces)" \
	test "$(grep -c 'path to node0100 HCA-1 changed' "$wlog")" = 1 -a "$(watched | jq .changes)" = 1
check "ibtracert agrees that it changed" [ "$before" != "$after" ]
newpath=$(grep -m1 'path to node0100 HCA-1 changed' "$wlog" | sed 's/.* -> //; s/ (ok)$//')
# ours "0xGUID[in>out] ..." against ibtracert's switch hops
ours_sw=$(tr ' ' '\n' <<<"$newpath" | sed -n 's/^0x\([0-9a-f]*\)\[\([0-9]*\)>\([0-9]*\)\]$/\1 \2 \3/p' |
	while read -r g i o; do printf '0x%016x %s %s\n' "0x$g" "$i" "$o"; done |
	awk 'NR > 1 && $3 != 0')
ref_sw=$(at node0001 ibtracert "$(lid_of node0001)" "$l100" |
	awk '/switch port/ { match($0, /^\[[0-9]+\]/); o = substr($0, 2, RLENGTH - 2)
		match($0, /\{0x[0-9a-f]+\}\[[0-9]+\]/); s = substr($0, RSTART, RLENGTH)
		split(s, w, /[{}\[\]]/); if (g) print g, i, o; g = w[2]; i = w[4]; next }
	     /ca port/ { match($0, /^\[[0-9]+\]/); o = substr($0, 2, RLENGTH - 2); if (g) print g, i, o }')
same_path() { [ -n "$1" ] && [ "$1" = "$2" ]; }
check "the new path equals ibtracert's" same_path "$ours_sw" "$ref_sw"
[ "$ours_sw" = "$ref_sw" ] || { echo "# ours"; echo "$ours_sw"; echo "# ibtracert"; echo "$ref_sw"; }
check "the watching agent stops cleanly (SIGTERM, exit 0)" stopped_clean "$w"

finish
