#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Issue 36, point 1: a NodeDescription is set by root on any host and
# reaches us verbatim. On a small fabric whose host node0003 and switch
# leaf01 have hostile descriptions (invalid UTF-8, a backslash, a single
# quote, multi-byte text; ibsim takes a description from the net file's
# node id, which cannot hold a double quote: quotes are unit-tested in
# tests/unit/test_safename.c), and a host whose 64-octet description
# is cut inside a 4-byte character (65 octets in the net file):
#  - promtool check metrics is clean on /metrics;
#  - /api/v1/nodes parses with jq and names the nodes with U+FFFD where
#    the bad bytes were, the cut character dropped;
#  - the Prometheus labels carry the same text, backslash escaped;
#  - snmpwalk and snmptable of IBWATCH-MIB's node table through a real
#    snmpd print the rows with the same text;
#  - the agent's log is valid UTF-8 with no raw bad byte.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}"

# The node ids, as bytes (printf %b): what ibsim puts in NodeDescription.
bad_host='node0003 \xff\xfe\xc3 \x27q\x27 \\ n\xc3\xb8de \xe6\x97\xa5'
bad_sw='leaf01 \xc0\xaf\xed\xa0\x80 \\'
# 61 octets, then U+1F600: the 64-octet field keeps 3 of its 4.
cut_host="node0004 $(printf 'x%.0s' $(seq 1 52))\\xf0\\x9f\\x98\\x80"

if [ -z "${IBW_SIM_DIR:-}" ]; then
	work=${IBW_TEST_WORK:-$PWD/test-work}
	mkdir -p "$work"
	h3=$(printf '%b' "$bad_host") sw=$(printf '%b' "$bad_sw")
	h4=$(printf '%b' "$cut_host")
	{
		printf 'Switch\t8 "%s"\n' "$sw"
		printf '[1]\t"node0001"[1]\n[2]\t"node0002"[1]\n'
		printf '[3]\t"%s"[1]\n[4]\t"%s"[1]\n' "$h3" "$h4"
		printf '[5]\t"node0005"[1]\n\n'
		printf 'Hca\t1 "node0001"\n[1]\t"%s"[1]\n\n' "$sw"
		printf 'Hca\t1 "node0002"\n[1]\t"%s"[2]\n\n' "$sw"
		printf 'Hca\t1 "%s"\n[1]\t"%s"[3]\n\n' "$h3" "$sw"
		printf 'Hca\t1 "%s"\n[1]\t"%s"[4]\n\n' "$h4" "$sw"
		printf 'Hca\t1 "node0005"\n[1]\t"%s"[5]\n' "$sw"
	} >"$work/names.net"
	exec "$here/lib/with-fabric.sh" names "$work/names.net" \
		--sm node0002 -- "$0"
fi
trap stop_started EXIT

FFFD=$'\xef\xbf\xbd'
want_host="node0003 $FFFD$FFFD$FFFD 'q' \\ n"$'\xc3\xb8'"de "$'\xe6\x97\xa5'
want_sw="leaf01 $FFFD$FFFD$FFFD$FFFD$FFFD \\"
want_cut="node0004 $(printf 'x%.0s' $(seq 1 52))"

snmp_stack || bad "snmpd does not start"
MIBARGS=(-M "$here/mibs:$here/../mib" -m IBWATCH-MIB)
start_agent node0001 --no-state-file --discovery-interval 1 \
	--counter-interval 1 --log-level debug --agentx "$SOCK" ||
	{ echo "not ok - the agent does not start"; exit 1; }
U=http://127.0.0.1:$P
for _ in $(seq 1 100); do
	curl -s -m 5 "$U/api/v1/nodes" | jqe 'length == 6' && break
	sleep 0.1
done

curl -s -m 10 -o nodes.json "$U/api/v1/nodes"
check "/api/v1/nodes parses with jq: six nodes" jq -e 'length == 6' nodes.json
check "the host is named with U+FFFD for its bad bytes" \
	jq -e --arg n "$want_host" 'any(.[]; .name == $n)' nodes.json
check "the switch too (overlong form, surrogate)" \
	jq -e --arg n "$want_sw" 'any(.[]; .name == $n)' nodes.json
check "a character cut at octet 64 is dropped, not left half" \
	jq -e --arg n "$want_cut" 'any(.[]; .name == $n)' nodes.json

wait_counter_sweeps 2 || bad "no counter sweep"
curl -s -m 10 -o metrics.txt "$U/metrics"
out=$(promtool check metrics <metrics.txt 2>&1); rc=$?
check "promtool check metrics is clean" test $rc = 0 -a -z "$out" ||
	echo "$out" | head -n 5 | sed 's/^/#   /'
check "/metrics is valid UTF-8" iconv -f UTF-8 -t UTF-8 -o /dev/null metrics.txt
esc() { printf '%s' "$1" | sed 's/\\/\\\\/g'; }
check "an hca label carries the name, backslash escaped" \
	grep -qF "hca=\"$(esc "$want_host")\"" metrics.txt
check "a switch label carries the switch's name, escaped" \
	grep -qF "switch=\"$(esc "$want_sw")\"" metrics.txt
check "the info row names the host" \
	grep -qF "hca=\"$(esc "$want_host")\",lid=" metrics.txt

# The MIB's node table through a real snmpd: the rows name the nodes
# with the same safe text.
for _ in $(seq 1 100); do
	snmpwalk "${A[@]}" "${MIBARGS[@]}" -Oqv IBWATCH-MIB::ibwNodeName \
		>snmp-names.txt 2>snmp.err
	[ "$(grep -c . snmp-names.txt)" -ge 6 ] && break
	sleep 0.2
done
check "snmpwalk ibwNodeName: the host's row names it" \
	grep -qxF "$want_host" snmp-names.txt
check "... the switch's row" grep -qxF "$want_sw" snmp-names.txt
check "... the cut one's" grep -qxF "$want_cut" snmp-names.txt
snmptable "${A[@]}" "${MIBARGS[@]}" -Ob -Cf '|' IBWATCH-MIB::ibwNodeTable \
	>snmptable.txt 2>snmptable.err
check "snmptable prints the host's row" \
	grep -qF "|$want_host|$want_host|" snmptable.txt

# No log line names a fabric node today (events log GUIDs): what is
# checked is that the log never holds a raw byte of the descriptions.
logf=agent-$P.log
check "the agent's log is valid UTF-8" iconv -f UTF-8 -t UTF-8 -o /dev/null "$logf"
check "... and holds no raw byte of the descriptions" \
	test "$(LC_ALL=C grep -caP '\xff|\xfe|\xc0' "$logf")" = 0
finish
