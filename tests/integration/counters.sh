#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# PerfMgt counters on the 324-host fat tree against infiniband-diags:
# values injected with PerformanceSet come out exactly (saturation
# flagged), every port's counters sit between two ibqueryerrors reads
# taken before and after ours, error counters equal perfquery's, totals
# stay monotonic over `perfquery -R`, and survive SIGKILL and a restart.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}"

on_fattree counters 324 --osm-args "-s 0"
trap stop_started EXIT

jqe() { jq -e "$@" >/dev/null; }
pre() { LD_PRELOAD=$IBW_SIM_PRELOAD "$@"; }
con() { "$IBW_SIMFABRIC" cmd "$IBW_SIM_DIR" "$1" >/dev/null; }
guid_of() { jq -r --arg n "$1" '.nodes[] | select(.name == $n) | .guid' "$2"; }
lid_of() { jq -r --arg n "$1" '.nodes[] | select(.name == $n) | .lid' "$2"; }
# port JSON of node named $1, port $2, from file $3
port_of() { jq --arg n "$1" --argjson p "$2" '.nodes[] | select(.name == $n) | .ports[] | select(.port == $p)' "$3"; }

# 1. Injected values come out exactly.
con 'PerformanceSet "node0010"[1] PortCounters.SymbolErrorCounter=1000'
con 'PerformanceSet "node0010"[1] PortCounters.LinkDownedCounter=255'
con 'PerformanceSet "node0011"[1] PortCounters.PortXmitData=4294967295'
con 'PerformanceSet "node0012"[1] PortCountersExtended.PortXmitPkts=18446744073709551606'
pre "$IBWATCHD" --once --full --no-state-file --no-ping >a.json 2>a.err
check "--once runs" [ -s a.json ]
p10=$(port_of "node0010 HCA-1" 1 a.json)
check "SymbolErrorCounter=1000 read exactly" [ "$(jq .counters.raw.SymbolErrorCounter <<<"$p10")" = 1000 ]
check "LinkDownedCounter=255 read exactly, as a total too" [ "$(jq .counters.totals.link_downed <<<"$p10")" = 255 ]
check "LinkDownedCounter at its 8-bit maximum is flagged saturated" jqe '.counters.saturated | index("link_downed")' <<<"$p10"
check "SymbolErrorCounter over its threshold (10)" jqe '.counters.over_threshold | index("symbol_errors")' <<<"$p10"
p11=$(port_of "node0011 HCA-1" 1 a.json)
check "32-bit PortXmitData at 4294967295 is flagged saturated" jqe '.counters.saturated | index("transmit_data_bytes")' <<<"$p11"
p12=$(port_of "node0012 HCA-1" 1 a.json)
# jq's numbers are doubles: python reads the 64-bit values exactly.
lid12=$(lid_of "node0012 HCA-1" a.json)
refx=$(pre perfquery -x "$lid12" 1 | sed -n 's/^PortXmitPkts:\.*//p')
ours12=$(python3 -c 'import json
d = json.load(open("a.json"))
n = [n for n in d["nodes"] if n["name"] == "node0012 HCA-1"][0]
c = n["ports"][0]["counters"]
print(c["raw"]["PortXmitPkts"], c["totals"]["transmit_packets"])')
check "a 64-bit PortXmitPkts near 2^64 comes out exactly (ours ${ours12% *}, perfquery -x $refx)" \
	python3 -c "import sys; o, t = map(int, '$ours12'.split()); r = int('$refx')
sys.exit(not (18446744073709551606 <= o <= r <= o + 4 and t == o))"

# Detail counters, when asked for: equal to perfquery -E / -D.
con 'PerformanceSet "node0013"[1] PortRcvErrorDetails.PortMalformedPacketErrors=42'
con 'PerformanceSet "node0013"[1] PortXmitDiscardDetails.PortNeighborMTUDiscards=17'
pre "$IBWATCHD" --once --full --no-state-file --no-ping --detail-counters >det.json 2>det.err
p13=$(port_of "node0013 HCA-1" 1 det.json)
l13=$(lid_of "node0013 HCA-1" det.json)
pqe=$(pre perfquery -E "$l13" 1)
pqd=$(pre perfquery -D "$l13" 1)
check "--detail-counters: PortMalformedPacketErrors 42, as perfquery -E says" \
	test "$(jq .counters.raw.PortMalformedPktErrors <<<"$p13")" = 42 -a \
	"$(sed -n 's/^PortMalformedPktErrors:\.*//p' <<<"$pqe")" = 42
check "--detail-counters: PortNeighborMTUDiscards 17, as perfquery -D says" \
	test "$(jq .counters.totals.neighbor_mtu_discards <<<"$p13")" = 17 -a \
	"$(sed -n 's/^PortNeighborMTUDiscards:\.*//p' <<<"$pqd")" = 17
check "without --detail-counters there are none" jqe 'has("PortMalformedPktErrors") | not' <(jq '.counters.raw' <<<"$(port_of "node0013 HCA-1" 1 a.json)")

# 2. Every port between two ibqueryerrors reads.
dump_counters() { # ibqueryerrors --counters -> "nodeguid port name=value..."
	# The reference sweep itself can time out on a loaded simulator and
	# print nothing; try it up to three times, keeping its errors.
	local try
	for try in 1 2 3; do
		pre ibqueryerrors --counters >iqe.out 2>>iqe.err
		grep -q '^ *GUID 0x' iqe.out && break
		echo "# ibqueryerrors try $try printed no ports: $(tail -1 iqe.err)" >&2
	done
	sed -n 's/^ *GUID \(0x[0-9a-f]*\) port \([0-9]*\): \(.*\)$/\1 \2 \3/p' iqe.out |
	while read -r g p rest; do
		printf '%s %s %s\n' "$g" "$p" "$(grep -o '\[[A-Za-z]* == [0-9]*' <<<"$rest" | tr -d '[' | awk '{printf "%s=%s ", $1, $3}')"
	done
}
dump_counters >before.txt
pre "$IBWATCHD" --once --full --no-state-file --no-ping >b.json 2>b.err
dump_counters >after.txt
# Every port of the tree: 324 host ports and 36 switches of 36 ports
# (switch port 0, the management port, has no counters of its own and
# neither tool lists it).
ports=$((324 + 36 * 36))
check "ibqueryerrors saw every port ($ports), before and after" \
	[ "$(wc -l <before.txt)" = $ports -a "$(wc -l <after.txt)" = $ports ]
# ours: "nodeguid port name=value ..." in ibqueryerrors' form (which
# names the node GUID, without leading zeros): every port but switch
# port 0, a port we have no counters for with no values (a mismatch
# below), whether or not it has extended counters.
python3 -c 'import json, re
d = json.load(open("b.json"))
for n in d["nodes"]:
    if n["gone"]:
        continue
    for p in n["ports"]:
        if n["type"] == "switch" and p["port"] == 0:
            continue
        c = p["counters"] or {"raw": {}}
        kv = " ".join("%s=%d" % (k, v) for k, v in sorted(c["raw"].items())
                      if re.match(r"^Port(Xmit|Rcv)(Data|Pkts)$|^Port(Unicast|Multicast)", k))
        print("0x%x %d %s" % (int(n["guid"], 16), p["port"], kv))' | sort >ours.txt
check "we read every port ($ports)" [ "$(wc -l <ours.txt)" = $ports ]
python3 - <<'PY' >sandwich.txt
import re
def load(f):
    d = {}
    for line in open(f):
        parts = line.split()
        if len(parts) < 2: continue
        key = (parts[0].lower(), parts[1])
        d[key] = dict(kv.split("=") for kv in parts[2:])
    return d
b, a, o = load("before.txt"), load("after.txt"), load("ours.txt")
bad = checked = 0
# the same ports on all three sides, the same counters for each port
for key in sorted(set(o) | set(b) | set(a)):
    if not (key in o and key in b and key in a):
        print("missing", key, "ours" if key in o else "", "before" if key in b else "",
              "after" if key in a else ""); bad += 1; continue
    if not (set(o[key]) == set(b[key]) == set(a[key])) or not o[key]:
        print("keys", key, sorted(o[key]), sorted(b[key]), sorted(a[key])); bad += 1; continue
    for name, v in o[key].items():
        checked += 1
        if not int(b[key][name]) <= int(v) <= int(a[key][name]):
            print("outside", key, name, b[key][name], v, a[key][name]); bad += 1
print("checked", checked, "bad", bad)
PY
check "every port's data counters lie between two ibqueryerrors reads ($(tail -1 sandwich.txt))" grep -q ' bad 0$' sandwich.txt
grep -v '^checked' sandwich.txt | head -5 | sed 's/^/# /'
check "that compared 8 data counters on each of the $ports ports" [ "$(awk '/^checked/ {print $2}' sandwich.txt)" = $((8 * ports)) ]

# 3. Error counters equal perfquery's, read right after.
for n in node0010 node0011 node0012; do
	lid=$(lid_of "$n HCA-1" b.json)
	pre "$IBWATCHD" --once --full --no-state-file --no-ping >c.json 2>"c-$n.err"
	pq=$(pre perfquery "$lid" 1)
	pqx=$(pre perfquery -x "$lid" 1)
	pc=$(port_of "$n HCA-1" 1 c.json)
	same=1
	for f in SymbolErrorCounter LinkErrorRecoveryCounter LinkDownedCounter PortRcvErrors \
		PortRcvRemotePhysicalErrors PortRcvSwitchRelayErrors PortXmitDiscards \
		PortXmitConstraintErrors PortRcvConstraintErrors LocalLinkIntegrityErrors \
		ExcessiveBufferOverrunErrors VL15Dropped PortXmitWait; do
		ref=$(sed -n "s/^$f:\.*//p" <<<"$pq")
		[ -n "$ref" ] && [ "$(jq ".counters.raw.$f" <<<"$pc")" = "$ref" ] || { same=0; echo "# $n $f ours $(jq ".counters.raw.$f" <<<"$pc") perfquery $ref"; }
	done
	refx=$(sed -n 's/^PortXmitPkts:\.*//p' <<<"$pqx")
	ourx=$(jq -r '.counters.raw.PortXmitPkts' <<<"$pc")
	# Sent after our read: our PortVLXmitWaitCounters answer, the answer
	# to the NodeInfo that checks our readings (sent once they are in),
	# and the answers to perfquery's and perfquery -x's two MADs each.
	[ "$n" = node0012 ] || { [ -n "$refx" ] && [ "$ourx" -le "$refx" ] && [ $((refx - ourx)) -le 6 ]; } || { same=0; echo "# $n PortXmitPkts ours $ourx perfquery -x $refx"; }
	check "$n: error counters equal perfquery's, packets perfquery -x's" [ $same = 1 ]
done

# 4. Reset behind the agent's back, then SIGKILL and restart.
state=$PWD/counters.state
# --state-interval 1: every sweep appends the link windows to the
# journal, so that each one shows (docs/operations.md, "The state file").
LD_PRELOAD=$IBW_SIM_PRELOAD "$IBWATCHD" --state-file "$state" --counter-interval 1 --no-http \
	--state-interval 1 --discovery-interval 30 >d.out 2>d.err &
agent=$!
pids+=("$agent")
wait_sweeps() { # wait until the state file or its journal was written $1 more times
	local n=0 last="" m i
	for ((i = 0; i < 300 && n < $1; i++)); do
		m=$(stat -c '%i %s' "$state" "$state.journal" 2>/dev/null | tr '\n' ' ')
		[ -n "$m" ] && [ "$m" != "$last" ] && { n=$((n + 1)); last=$m; }
		sleep 0.1
	done
	[ $n -ge "$1" ]
}
# the port's last line: the snapshot's, or a later one in the journal
port_line() { cat "$state" "$state.journal" 2>/dev/null | awk -v g="$1" -v p="$2" '$1 == "p" && $2 == g && $3 == p' | tail -1; }
total_in_state() { # node guid, port, counter index -> total
	port_line "$1" "$2" | awk -v i="$3" '{ split($(8 + i), f, ":"); print f[1] }'
}
check "the agent writes its state file" wait_sweeps 2
g10=$(guid_of "node0010 HCA-1" b.json)
lid10=$(lid_of "node0010 HCA-1" b.json)
sym_before=$(total_in_state "$g10" 1 0)
echo "# state before the reset: $(grep -c '^p' "$state") ports, $g10 symbol errors $sym_before"
reset_us=$(date +%s%6N)
pre perfquery -R "$lid10" 1 >/dev/null
con 'PerformanceSet "node0010"[1] PortCounters.SymbolErrorCounter=7'
# Wait for the port's line from a reading answered after the reset (its
# updated_us, the answer's time): the first such reading finds the reset,
# a change of base the journal records. It may have read the counter
# before the set (0) or after it (7); between clears the hardware keeps
# the rest, so the total the file holds is its line's total plus what
# the counter gained since that line's reading (7 - raw), as a restart
# computes it.
read_after() {
	local i u
	for ((i = 0; i < 300; i++)); do
		u=$(port_line "$g10" 1 | awk '{ print $7 }')
		[ -n "$u" ] && [ "$u" -gt "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
check "a reading after the reset reaches the state file" read_after "$reset_us"
sym_after=$(port_line "$g10" 1 | awk '{ split($8, f, ":"); print f[1] + (7 - f[2]) }')
check "SymbolErrorCounter total stays monotonic over perfquery -R ($sym_before -> $sym_after)" [ "$sym_after" = $((sym_before + 7)) ]
resets=$(port_line "$g10" 1 | awk '{ print $5 }')
check "the reset is counted ($resets)" [ "${resets:-0}" -ge 1 ]
kill -KILL $agent
wait $agent 2>/dev/null
rc=$?
check "the agent ran until our SIGKILL (exit status $rc, 137 expected)" [ $rc = 137 ]
pids=()
check "state file intact after SIGKILL" grep -q '^end ' "$state"
echo "# its journal: $(grep -c '^batch ' "$state.journal") batches, $(grep -c "^p $g10 1 " "$state.journal") of node0010's lines"
pre "$IBWATCHD" --once --full --state-file "$state" >e.json 2>e.err
sym_restart=$(jq '.nodes[] | select(.name == "node0010 HCA-1") | .ports[0].counters.totals.symbol_errors' e.json)
check "after a restart the total continues from the state file ($sym_restart)" [ "$sym_restart" = "$sym_after" ]
check "the restart said it restored totals" grep -q 'totals .*restored' e.err
printf 'ibwatch-counters 1\np 0x1 1 0 0 0 0\n' >"$state"
pre "$IBWATCHD" --once --full --state-file "$state" >f.json 2>f.err
check "a torn state file is ignored with a warning" grep -q 'torn or corrupt' f.err
check "and the agent runs on" jqe '.nodes | length == 360' f.json

finish
