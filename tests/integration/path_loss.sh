#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# An endport whose port stays up but whose route is broken, on the
# 32-host fat tree (8 leaves of 4 hosts, 4 spines): with no SM running
# to route around it, the uplink of our leaf that the LFTs send a host's
# LID through goes down. The host's port is still active (smpquery by
# directed route says so) but nothing routed to its LID reaches it
# (perfquery fails): the agent reports it down, since it does not
# answer, and its reason says that a directed route found its port
# active; the hosts the other uplinks serve stay up. Link and SM back:
# up again.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}"

on_fattree path_loss 32
trap stop_started EXIT

start_agent node0001 --no-snmp --no-state-file --discovery-interval 2 \
	--counter-interval 60 --ping-interval-ms 300 --ping-method pma \
	--down-after 2 --up-after 2 ||
	{ echo "not ok - the agent does not start"; exit 1; }
U=http://127.0.0.1:$P
eps() { curl -s -m 5 "$U/api/v1/endports"; }
for _ in $(seq 1 200); do
	eps | jqe 'length == 32 and all(.[]; .state == "up")' && break
	sleep 0.1
done
check "all 32 endports up" jqe 'length == 32 and all(.[]; .state == "up")' < <(eps)

me=$(lid_of node0001)
# A host on another leaf whose LID route leaves leaf01 by another
# uplink than the directed route of the agent's discovery to it:
# ibtracert's line for the spine starts with leaf01's egress port; the
# discovery's route is "0,1,UPLINK,...".
pick=
for n in $(seq 5 32); do
	h=$(printf 'node%04d' "$n")
	lid=$(lid_of "$h")
	up=$(at node0001 ibtracert "$me" "$lid" 2>/dev/null |
		sed -n 's/^\[\([0-9]*\)\] -> switch .*"spine[0-9]*".*/\1/p' | head -n1)
	g=$(eps | jq -r --arg n "$h HCA-1" '.[] | select(.name == $n) | .node_guid')
	dr=$(curl -s -m 5 "$U/api/v1/nodes/$g" | jq -r '.dr_path' | cut -d, -f3)
	if [ -n "$up" ] && [ -n "$dr" ] && [ "$up" != "$dr" ]; then
		pick=$h
		break
	fi
done
check "a host whose LID route and directed route leave leaf01 by different uplinks ($pick: $up and $dr)" \
	test -n "$pick"
[ -n "$pick" ] || exit 1
# The other hosts whose LID routes use that uplink go too; those that
# do not must stay up.
: >via.txt
for n in $(seq 5 32); do
	h=$(printf 'node%04d' "$n")
	u=$(at node0001 ibtracert "$me" "$(lid_of "$h")" 2>/dev/null |
		sed -n 's/^\[\([0-9]*\)\] -> switch .*"spine[0-9]*".*/\1/p' | head -n1)
	[ "$u" = "$up" ] && echo "$h HCA-1" >>via.txt
done
nvia=$(wc -l <via.txt)

kill "$(cat "$IBW_SIM_DIR/opensm.pid")"
for _ in $(seq 1 50); do
	kill -0 "$(cat "$IBW_SIM_DIR/opensm.pid")" 2>/dev/null || break
	sleep 0.1
done
sim "Unlink \"leaf01\"[$up]"
check "with the uplink down and no SM, $pick's port is still active (smpquery by directed route)" \
	eval "at node0001 smpquery -D portinfo $(curl -s -m 5 "$U/api/v1/nodes/$g" | jq -r .dr_path) 1 | grep -q '^LinkState:\.*Active'"
check "... and its LID $lid does not answer (perfquery)" \
	eval "! at node0001 perfquery -t 200 $lid 1 >/dev/null 2>&1"
ep() { eps | jq --arg n "$pick HCA-1" '.[] | select(.name == $n)'; }
for _ in $(seq 1 100); do
	ep | jqe '.state == "down"' && break
	sleep 0.1
done
check "$pick is reported down" jqe '.state == "down"' < <(ep)
check "... its reason says its port is still active" \
	jqe '.reason | test("^[0-9]+ probes in a row unanswered; port active$")' < <(ep)
check "... at its LID, not moved" jqe --argjson l "$lid" '.lid == $l' < <(ep)
ev=$(curl -s -m 5 "$U/api/v1/events")
check "the endport_state event says so too" \
	jqe --arg g "$g" '[.events[] | select(.kind == "endport_state" and .node_guid == $g and .new == "down")] |
		length == 1 and (.[0].reason | test("; port active$"))' <<<"$ev"
check "no endport_moved event" jqe '[.events[] | select(.kind == "endport_moved")] | length == 0' <<<"$ev"
sleep 2
check "the hosts routed through the other uplinks stay up ($((28 - nvia)) of 28 on other leaves)" \
	jqe --slurpfile v <(jq -R . via.txt) '[.[] | select((.name | IN($v[])) | not)] |
		length == 32 - ($v | length) and all(.[]; .state == "up")' < <(eps)

sim "Relink \"leaf01\"[$up]"
"$IBW_SIMFABRIC" sm-restart "$IBW_SIM_DIR" || bad "opensm does not come back"
for _ in $(seq 1 200); do
	eps | jqe 'all(.[]; .state == "up")' && break
	sleep 0.1
done
check "link and SM back: every endport up again, $pick's reason cleared" \
	jqe --arg n "$pick HCA-1" 'all(.[]; .state == "up") and
		(.[] | select(.name == $n) | .reason | test("port active") | not)' < <(eps)
finish
