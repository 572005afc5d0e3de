#!/bin/bash
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

at "${IBW_SIM_SM}" "$IBWATCHD" --once --no-state-file --no-ping >fab.json 2>/dev/null
hosts=$(jq -r '[.nodes[] | select(.type == "ca" and (.gone | not)) | .ports[] | select(.remote != null)] | length' fab.json)
# "nodeid lid" for every host, and every switch's lid
jq -r '.nodes[] | select(.type == "ca") | . as $n | .ports[] | select(.remote != null) | "\($n.description | split(" ")[0]) \(.lid)"' fab.json >hosts.txt
jq -r '.nodes[] | select(.type == "switch") | .lid' fab.json >switches.txt

compare_pair() { # src-nodeid src-lid dst-lid [reverse: dst-nodeid]
	local s=$1 sl=$2 dl=$3 d=${4:-} ours ref
	ours=$(at "$s" "$IBWATCHD" --trace "$dl" ${d:+--reverse} 2>/dev/null)
	# We trace from the port we are attached to (a CA with two linked
	# ports has a LID on each): ibtracert from that one.
	sl=$(jq -r .source_lid <<<"$ours")
	ref=$(at "$s" ibtracert "$sl" "$dl" 2>/dev/null | canon_ref)
	[ -n "$ref" ] && [ "$(canon_ours fwd <<<"$ours")" = "$ref" ] || {
		echo "# $s -> $dl: ours"; canon_ours fwd <<<"$ours"; echo "# ibtracert"; echo "$ref"; return 1; }
	[ -z "$d" ] && return 0
	# ... and back from the destination port the trace reached
	ref=$(at "$d" ibtracert "$(jq -r '.hops[-1].lid' <<<"$ours")" "$sl" 2>/dev/null | canon_ref)
	[ "$(canon_ours rev <<<"$ours")" = "$ref" ] || {
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

# Failures, reported with the hop and the reason, in bounded time.
j=$(at node0001 "$IBWATCHD" --trace 9000 2>/dev/null); rc=$?
check "a trace to an unassigned LID says no route" jq -e '.status == "no route" and .failed_hop == 1 and (.reason | test("no route to lid 9000"))' <<<"$j"
check "... and exits non-zero" [ $rc = 1 ]
l20=$(lid_of node0020)
"$IBW_SIMFABRIC" cmd "$IBW_SIM_DIR" 'Unlink "node0020"[1]' >/dev/null
sleep 0.5
j=$(at node0001 "$IBWATCHD" --trace "$l20" 2>/dev/null)
check "a trace to an unlinked host fails at a hop, with the reason ($(jq -c '[.status, .failed_hop, .reason]' <<<"$j"))" \
	jq -e '.status != "ok" and .failed_hop >= 1 and (.reason | length > 0) and .duration_ms < 5000' <<<"$j"
"$IBW_SIMFABRIC" cmd "$IBW_SIM_DIR" 'Relink "node0020"[1]' >/dev/null

# Endport confirmation: our responder on node0002, an impostor on node0003.
SIM_SET_ISSM=1 spawn node0002 "$IBWATCHD" --responder --no-probes >r2.log 2>&1 &
r2=$!
SIM_SET_ISSM=1 spawn node0003 "$FAKE_RESPONDER" 0x00000000deadbeef >r3.log 2>&1 &
r3=$!
trap 'stop $r2 $r3' EXIT
sleep 0.5
j=$(at node0001 "$IBWATCHD" --trace "$(lid_of node0002)" --confirm 2>/dev/null)
check "with a responder there the endport is confirmed" jq -e '.endport == "confirmed"' <<<"$j"
j=$(at node0001 "$IBWATCHD" --trace "$(lid_of node0003)" --confirm 2>/dev/null)
check "another port GUID answering is reported as a mismatch" jq -e '.endport == "mismatch" and .endport_guid == "0x00000000deadbeef"' <<<"$j"
j=$(at node0001 "$IBWATCHD" --trace "$(lid_of node0005)" --confirm 2>/dev/null)
check "no responder: said so, the trace still ok" jq -e '.endport == "no responder" and .status == "ok"' <<<"$j"

# A watched path changes when a spine link on it goes.
l100=$(lid_of node0100)
spawn node0001 "$IBWATCHD" --no-state-file --no-ping --no-http --watch-path "node0100 HCA-1" \
	--trace-interval 1 --discovery-interval 1 --counter-interval 3600 >w.out 2>w.log &
w=$!
trap 'stop $r2 $r3 $w' EXIT
sleep 2
before=$(at node0001 ibtracert "$(lid_of node0001)" "$l100" | canon_ref)
spine_line=$(grep -m1 'switch port' <<<"$(at node0001 ibtracert "$(lid_of node0001)" "$l100")")
# the first hop is the leaf; the second the spine: unlink the spine's in port
spine_guid=$(at node0001 ibtracert "$(lid_of node0001)" "$l100" | sed -n '3s/.*{\(0x[0-9a-f]*\)}\[\([0-9]*\)\].*/\1 \2/p')
read -r sg sp <<<"$spine_guid"
sname=$(jq -r --arg g "$sg" '.nodes[] | select(.guid == $g) | .description' fab.json)
"$IBW_SIMFABRIC" cmd "$IBW_SIM_DIR" "Unlink \"$sname\"[$sp]" >/dev/null
changed=0
for _ in $(seq 1 100); do
	grep -q 'path to node0100 HCA-1 changed' w.log && { changed=1; break; }
	sleep 0.1
done
sleep 3 # two more trace rounds: no second event
after=$(at node0001 ibtracert "$(lid_of node0001)" "$l100" | canon_ref)
check "the watched path changed ($sname port $sp unlinked)" [ $changed = 1 ]
check "exactly one path-change event" [ "$(grep -c 'path to node0100 HCA-1 changed' w.log)" = 1 ]
check "ibtracert agrees that it changed" [ "$before" != "$after" ]
newpath=$(grep -m1 'path to node0100 HCA-1 changed' w.log | sed 's/.* -> //; s/ (ok)$//')
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
stop $w

finish
