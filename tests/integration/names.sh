#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Issue 36, point 1: a NodeDescription is set by root on any host and
# reaches us verbatim. On a small fabric whose hosts and switch have
# hostile descriptions:
#  - node0003: invalid UTF-8, double and single quotes, a backslash, a
#    newline, a NUL and markup, as root writes them to node_desc on a
#    real host (ibsim takes a description from the net file's node id,
#    which cannot hold a quote, a newline or a NUL: the kernel model's
#    nodedesc file gives node0003's answers these bytes);
#  - leaf01 (from the net file): an overlong form, a surrogate;
#  - node0004: 64 octets cut inside a 4-byte character (65 in the net
#    file); node0005: 64 octets of multi-byte text, kept whole;
# the checks:
#  - smpquery (the reference) reads node0003's bytes as a host would;
#  - promtool check metrics is clean on /metrics, its labels carry the
#    names with U+FFFD for bad bytes and '?' for control ones, escaped;
#  - /api/v1/nodes parses with jq and names every node so;
#  - snmpwalk and snmptable of IBWATCH-MIB's node table through a real
#    snmpd print the rows with the same text;
#  - when node0003's link goes, the ibwEndportDown notification that
#    snmptrapd gets, the event in /api/v1/events and the agent's log
#    line name it (the log quoted and escaped, valid UTF-8, no raw bad
#    byte or control character);
#  - the map draws in headless Chromium and shows the names as text
#    (node0003's markup stays text).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}"

# The node ids, as bytes (printf %b): what ibsim puts in NodeDescription.
bad_sw='leaf01 \xc0\xaf\xed\xa0\x80 \\'
# 61 octets, then U+1F600: the 64-octet field keeps 3 of its 4.
cut_host="node0004 $(printf 'x%.0s' $(seq 1 52))\\xf0\\x9f\\x98\\x80"
# 64 octets of multi-byte text: 5 x U+00F1, 14 x U+65E5, 3 x U+1F600
# (given by the model: ibsim keeps 63 octets of a node id).
multi="$(printf '\\xc3\\xb1%.0s' 1 2 3 4 5)$(printf '\\xe6\\x97\\xa5%.0s' $(seq 1 14))$(printf '\\xf0\\x9f\\x98\\x80%.0s' 1 2 3)"
# What root writes to node0003's node_desc (41 octets, NUL-padded by the
# kernel): the model's nodedesc file gives its answers these bytes.
bad_host='node0003 \xff\xfe\xc3 "q" \x27q\x27 \\ \n \0 <i>b</i> n\xc3\xb8de \xe6\x97\xa5'

if [ -z "${IBW_SIM_DIR:-}" ]; then
	work=${IBW_TEST_WORK:-$PWD/test-work}
	mkdir -p "$work"
	sw=$(printf '%b' "$bad_sw") h4=$(printf '%b' "$cut_host")
	{
		printf 'Switch\t8 "%s"\n' "$sw"
		printf '[1]\t"node0001"[1]\n[2]\t"node0002"[1]\n'
		printf '[3]\t"node0003"[1]\n[4]\t"%s"[1]\n' "$h4"
		printf '[5]\t"node0005"[1]\n\n'
		printf 'Hca\t1 "node0001"\n[1]\t"%s"[1]\n\n' "$sw"
		printf 'Hca\t1 "node0002"\n[1]\t"%s"[2]\n\n' "$sw"
		printf 'Hca\t1 "node0003"\n[1]\t"%s"[3]\n\n' "$sw"
		printf 'Hca\t1 "%s"\n[1]\t"%s"[4]\n\n' "$h4" "$sw"
		printf 'Hca\t1 "node0005"\n[1]\t"%s"[5]\n' "$sw"
	} >"$work/names.net"
	exec "$here/lib/with-fabric.sh" names "$work/names.net" \
		--sm node0002 -- "$0"
fi
trap stop_started EXIT

FFFD=$'\xef\xbf\xbd'
want_host="node0003 $FFFD$FFFD$FFFD \"q\" 'q' \\ ? ? <i>b</i> n"$'\xc3\xb8'"de "$'\xe6\x97\xa5'
want_sw="leaf01 $FFFD$FFFD$FFFD$FFFD$FFFD \\"
want_cut="node0004 $(printf 'x%.0s' $(seq 1 52))"
want_multi=$(printf '%b' "$multi")

# As root on node0003 and node0005 would: the model answers their
# NodeDescriptions with these octets from now on, to every program.
hex() { printf '%b' "$1" | xxd -p | tr -d '\n'; }
printf '%s node0003\n%s node0005\n' "$(hex "$bad_host")" "$(hex "$multi")" \
	>"$IBW_KM_STATE_DIR/nodedesc"
desc=$(at node0001 smpquery -D nodedesc 0,1,3 2>&1)
check "smpquery reads node0003's description as a host would" \
	eval 'LC_ALL=C grep -qF "node0003 " <<<"$desc" && LC_ALL=C grep -qF "\"q\" '"'"'q'"'"' \\" <<<"$desc"' ||
	echo "# smpquery: $(head -c 200 <<<"$desc")"

snmp_stack || bad "snmpd does not start"
MIBARGS=(-M "$here/../mib:$here/../mib/ietf" -m IBWATCH-MIB)
start_agent node0001 --no-state-file --discovery-interval 1 \
	--counter-interval 1 --ping-interval-ms 300 --down-after 2 \
	--ping-method pma --log-level debug --agentx "$SOCK" ||
	{ echo "not ok - the agent does not start"; exit 1; }
U=http://127.0.0.1:$P
for _ in $(seq 1 100); do
	curl -s -m 5 "$U/api/v1/nodes" | jqe 'length == 6' && break
	sleep 0.1
done

curl -s -m 10 -o nodes.json "$U/api/v1/nodes"
check "/api/v1/nodes parses with jq: six nodes" jq -e 'length == 6' nodes.json
check "node0003 is named with U+FFFD for its bad bytes, '?' for its newline and NUL" \
	jq -e --arg n "$want_host" 'any(.[]; .name == $n)' nodes.json
check "the switch too (overlong form, surrogate)" \
	jq -e --arg n "$want_sw" 'any(.[]; .name == $n)' nodes.json
check "a character cut at octet 64 is dropped, not left half" \
	jq -e --arg n "$want_cut" 'any(.[]; .name == $n)' nodes.json
check "64 octets of multi-byte text are kept whole" \
	jq -e --arg n "$want_multi" 'any(.[]; .name == $n)' nodes.json

wait_counter_sweeps 2 || bad "no counter sweep"
curl -s -m 10 -o metrics.txt "$U/metrics"
out=$(promtool check metrics <metrics.txt 2>&1); rc=$?
check "promtool check metrics is clean" test $rc = 0 -a -z "$out" ||
	echo "$out" | head -n 5 | sed 's/^/#   /'
check "/metrics is valid UTF-8" iconv -f UTF-8 -t UTF-8 -o /dev/null metrics.txt
esc() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g'; }
check "an hca label carries node0003's name, quotes and backslash escaped" \
	grep -qF "hca=\"$(esc "$want_host")\"" metrics.txt
check "a switch label carries the switch's name, escaped" \
	grep -qF "switch=\"$(esc "$want_sw")\"" metrics.txt
check "the info row names the multi-byte host" \
	grep -qF "hca=\"$want_multi\",lid=" metrics.txt

# The MIB's node table through a real snmpd: the rows name the nodes
# with the same safe text.
for _ in $(seq 1 100); do
	snmpwalk "${A[@]}" "${MIBARGS[@]}" -Oqv IBWATCH-MIB::ibwNodeName \
		>snmp-names.txt 2>snmp.err
	[ "$(grep -c . snmp-names.txt)" -ge 6 ] && break
	sleep 0.2
done
check "snmpwalk ibwNodeName: node0003's row names it" \
	grep -qxF "$want_host" snmp-names.txt
check "... the switch's row" grep -qxF "$want_sw" snmp-names.txt
check "... the cut one's" grep -qxF "$want_cut" snmp-names.txt
check "... the multi-byte one's" grep -qxF "$want_multi" snmp-names.txt
snmptable "${A[@]}" "${MIBARGS[@]}" -Ob -Cf '|' IBWATCH-MIB::ibwNodeTable \
	>snmptable.txt 2>snmptable.err
check "snmptable prints node0003's row" \
	grep -qF "|$want_host|$want_host|" snmptable.txt

# The map draws and shows the names as text: the switch's details list
# each port's other end by name.
if /usr/bin/python3 "$here/integration/browser.py" "$U" browser.json \
	--click "$want_sw" --eval "document.querySelectorAll('#details i').length" \
	>browser.out 2>&1; then :; fi
check "the map draws in headless Chromium" \
	jq -e '.ok and .first != null and .first.hosts == 5' browser.json
check "... the switch's details name node0003, its markup as text" \
	jq -e --arg n "$want_host" '.details | contains($n)' browser.json
check "... and the multi-byte host" \
	jq -e --arg n "$want_multi" '.details | contains($n)' browser.json
check "... no element made of a name's markup" jq -e '.eval == 0' browser.json
check "... nothing on the browser console" \
	jq -e '[.console[] | select(.level == "SEVERE")] | length == 0' browser.json

# node0003's link goes: the notification, the event and the log line
# name it.
for _ in $(seq 1 100); do
	curl -s -m 5 "$U/api/v1/endports" | jqe 'length == 5 and all(.state == "up")' && break
	sleep 0.2
done
sim 'Unlink "node0003"[1]'
for _ in $(seq 1 150); do
	grep -q "OID: $ROOT\.0\.1	" traps.log && break
	sleep 0.1
done
# snmptrapd prints a string of bytes outside ASCII as Hex-STRING
trap_name=$(python3 - "$ROOT" traps.log <<'PY'
import re, sys
root = sys.argv[1]
# a Hex-STRING goes on over lines of 16 octets: one record a line again
log = re.sub(rb"\n(?=(?:[0-9A-F]{2} )+)", b"", open(sys.argv[2], "rb").read())
for line in log.split(b"\n"):
    if ("OID: %s.0.1\t" % root).encode() not in line:
        continue
    for vb in line.split(b"\t"):
        m = re.match((r"%s\.1\.4\.1\.5\.[0-9.]+ = (STRING|Hex-STRING): (.*)" % re.escape(root)).encode(), vb)
        if not m:
            continue
        v = m.group(2)
        if m.group(1) == b"Hex-STRING":
            v = bytes.fromhex(v.decode().replace(" ", ""))
        else:
            v = v.strip(b'"').replace(b'\\"', b'"').replace(b"\\\\", b"\\")
        sys.stdout.buffer.write(v)
        sys.exit(0)
PY
)
check "snmptrapd gets ibwEndportDown naming node0003" [ "$trap_name" = "$want_host" ] ||
	echo "# trap name: $(printf '%s' "$trap_name" | xxd -p | head -c 200)"
for _ in $(seq 1 50); do
	curl -s -m 5 "$U/api/v1/events" >events.json
	jqe '[.events[] | select(.kind == "endport_state" and .new == "down")] | length > 0' <events.json && break
	sleep 0.2
done
check "the endport_state event names node0003" \
	jq -e --arg n "$want_host" 'any(.events[]; .kind == "endport_state" and .new == "down" and .name == $n)' events.json

logf=agent-$P.log
quoted="\"$(esc "$want_host")\""
# The pinger's events reach /api/v1/events at once and the log at the
# next publication, a ping interval later (core/monitor.c, on_pub_timer).
for _ in $(seq 1 50); do
	grep -aqF "is down (was up)" "$logf" && break
	sleep 0.2
done
check "the agent logs the endport down with the name quoted and escaped" \
	grep -aqF "is down (was up)" "$logf"
check "... as $quoted" grep -aqF "$quoted is down (was up)" "$logf"
check "the agent's log is valid UTF-8" iconv -f UTF-8 -t UTF-8 -o /dev/null "$logf"
check "... and holds no raw byte of the descriptions, no control character" \
	test "$(LC_ALL=C grep -caP '\xff|\xfe|\xc0|[\x00-\x08\x0b-\x1f\x7f]' "$logf")" = 0
finish
