#!/bin/bash
# Endport liveness on the 324-host fat tree: ibping and ibwatchd's
# responder answer each other in both directions, ibwatchd to ibwatchd
# works for echo, timestamp and LID/GUID, pma and smp pings need nothing
# at the target, and the C test ping_fabric (Unlink/Relink, 50% loss, a
# responder that survives strays) runs against a responder here.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}" "${PING_FABRIC:?}"

on_fattree ping 324

jqe() { jq -e "$@" once.json >/dev/null; }
trap stop_started EXIT

at node0001 "$IBWATCHD" --once --no-state-file --no-ping >fab.json 2>/dev/null
lid_of() { jq -r --arg n "$1 HCA-1" '.nodes[] | select(.name == $n) | .lid' fab.json; }
guid_of() { jq -r --arg n "$1 HCA-1" '.nodes[] | select(.name == $n) | .ports[0].guid' fab.json; }

# The responders: ours on node0002, ibping -S on node0004. Each is the
# SM-flagged process of its node (SIM_SET_ISSM): ibsim hands such a
# process the QP1 requests it does not answer itself.
SIM_SET_ISSM=1 spawn node0002 "$IBWATCHD" --responder --no-probes >resp.log 2>&1 &
pids+=($!)
SIM_SET_ISSM=1 spawn node0004 ibping -S >ibping-server.log 2>&1 &
pids+=($!)
sleep 0.5
l2=$(lid_of node0002) l4=$(lid_of node0004)

out=$(at node0003 timeout 10 ibping -c 5 -L "$l2" 2>&1)
check "ibping gets answers from ibwatchd --responder" grep -q '5 packets transmitted, 5 received' <<<"$out"
check "... which names its host like ibping -S" grep -q "Pong from $(hostname)" <<<"$out"

j=$(at node0003 "$IBWATCHD" --ping "$l4" --ping-method echo --count 5 2>/dev/null)
check "ibwatchd gets answers from ibping -S" jq -e '.received == 5' <<<"$j"
check "... and records its host name" jq -e --arg h "$(hostname)" '.responder_host | startswith($h)' <<<"$j"

j=$(at node0003 "$IBWATCHD" --ping "$l2" --ping-method echo --count 5 2>/dev/null)
check "ibwatchd to ibwatchd: echo, data echoed byte for byte" jq -e '.received == 5 and ([.probes[].result] | unique == ["ok"])' <<<"$j"
j=$(at node0003 "$IBWATCHD" --ping "$l2" --ping-method echo --ping-type timestamp --count 1 2>/dev/null)
check "timestamp: three timestamps, receive <= transmit" jq -e '.timestamps.originate > 0 and .timestamps.receive <= .timestamps.transmit' <<<"$j"
j=$(at node0003 "$IBWATCHD" --ping "$l2" --ping-method echo --ping-type info --count 1 2>/dev/null)
check "LID/GUID: equal to what discovery knows" jq -e --argjson l "$l2" --arg g "$(guid_of node0002)" '.reply_lid == $l and .reply_port_guid == $g' <<<"$j"
j=$(at node0003 "$IBWATCHD" --ping "node0002 HCA-1" --ping-method echo --count 1 2>/dev/null)
check "a target by name (through the SA)" jq -e --argjson l "$l2" '.lid == $l and .received == 1' <<<"$j"

sw=$(jq -r '[.nodes[] | select(.type == "switch")][0].lid' fab.json)
for m in pma smp; do
	j=$(at node0003 "$IBWATCHD" --ping "$sw" --ping-method $m --count 3 2>/dev/null)
	check "$m ping reaches a switch (lid $sw)" jq -e '.received == 3' <<<"$j"
	j=$(at node0003 "$IBWATCHD" --ping "$(lid_of node0100)" --ping-method $m --count 3 2>/dev/null)
	check "$m ping reaches a host with no responder" jq -e '.received == 3' <<<"$j"
done
j=$(at node0003 "$IBWATCHD" --ping "$(lid_of node0100)" --ping-method echo --count 2 --ping-timeout-ms 50 2>/dev/null)
check "an echo to a host with no responder is lost, and says so" jq -e '.received == 0 and .loss_percent == 100' <<<"$j"

# --once pings every CA port; auto finds the responders.
at node0001 "$IBWATCHD" --once --no-state-file >once.json 2>/dev/null
check "--once pings every CA port (324)" jqe '[.endports[] | select(.state == "up")] | length == 324'
check "auto used echo where a responder answered" jqe --arg g "$(guid_of node0002)" '.endports[] | select(.port_guid == $g) | .responder and .method == "echo"'
check "and pma elsewhere" jqe --arg g "$(guid_of node0100)" '.endports[] | select(.port_guid == $g) | (.responder | not) and .method == "pma"'

IBW_RESPONDER_LID=$l2 at node0001 "$PING_FABRIC"
rc=$?
check "ping_fabric (Unlink/Relink, 50% loss, strays)" [ $rc = 0 ]
check "the responder is still running" kill -0 "${pids[0]}"

finish
