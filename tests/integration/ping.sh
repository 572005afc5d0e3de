#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Endport liveness on the 324-host fat tree: ibping and ibwatchd's
# responder answer each other in both directions, ibwatchd to ibwatchd
# works for echo, timestamp and LID/GUID, pma and smp pings need nothing
# at the target, an echo to a host without a responder is answered "not
# supported" (alive, no responder), and the C test ping_fabric (Unlink/Relink, 50% loss, a
# responder that survives strays) runs against a responder here.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}" "${PING_FABRIC:?}"

on_fattree ping 324

jqe() { jq -e "$@" once.json >/dev/null; }
trap stop_started EXIT

at node0001 "$IBWATCHD" --once --full --no-state-file --no-ping >fab.json 2>fab.err
lid_of() { jq -r --arg n "$1 HCA-1" '.nodes[] | select(.name == $n) | .lid' fab.json; }
guid_of() { jq -r --arg n "$1 HCA-1" '.nodes[] | select(.name == $n) | .ports[0].guid' fab.json; }

# The responders: ours on node0002, ibping -S on node0004. Each is the
# SM-flagged process of its node (SIM_SET_ISSM): ibsim hands such a
# process the QP1 requests it does not answer itself.
SIM_SET_ISSM=1 spawn node0002 "$IBWATCHD" --responder --no-probes >resp.log 2>&1 &
resp=$!
pids+=("$resp")
SIM_SET_ISSM=1 spawn node0004 ibping -S >ibping-server.log 2>&1 &
ibpings=$!
pids+=("$ibpings")
# registered PID NODE: PID has its MAD agents on NODE, in the kernel
# model's registry (ctest loads the model), else it is connected to ibsim.
registered() {
	if [ -n "${IBW_KM_STATE_DIR:-}" ]; then
		grep -q "^$1 " "$IBW_KM_STATE_DIR/agents.$2" 2>/dev/null
	else
		ls -l "/proc/$1/fd" 2>/dev/null | grep -q socket
	fi
}
for _ in $(seq 1 100); do registered "$resp" node0002 && registered "$ibpings" node0004 && break; sleep 0.1; done
check "ibwatchd --responder is registered on node0002" registered "$resp" node0002
check "ibping -S is registered on node0004" registered "$ibpings" node0004
l2=$(lid_of node0002) l4=$(lid_of node0004)

out=$(at node0003 timeout 10 ibping -c 5 -L "$l2" 2>&1)
check "ibping gets answers from ibwatchd --responder" grep -q '5 packets transmitted, 5 received' <<<"$out"
check "... which names its host like ibping -S" grep -q "Pong from $(hostname)" <<<"$out"

j=$(at node0003 "$IBWATCHD" --ping "$l4" --ping-method echo --count 5 2>cli-1.err)
check "ibwatchd gets answers from ibping -S" jq -e '.received == 5' <<<"$j"
check "... and records its host name" jq -e --arg h "$(hostname)" '.responder_host | startswith($h)' <<<"$j"

j=$(at node0003 "$IBWATCHD" --ping "$l2" --ping-method echo --count 5 2>cli-2.err)
check "ibwatchd to ibwatchd: echo, data echoed byte for byte" jq -e '.received == 5 and ([.probes[].result] | unique == ["ok"])' <<<"$j"
# The three stamps are times of this run, in ms since midnight UTC as the
# echo format has them: originate between our clock before and after,
# then receive and transmit in order (a midnight inside the run leaves
# only the order to check). Both hosts share this machine's clock.
ms_today() { local t; t=$(date -u +%s%3N); echo $((t % 86400000)); }
t0=$(ms_today)
j=$(at node0003 "$IBWATCHD" --ping "$l2" --ping-method echo --ping-type timestamp --count 1 2>cli-3.err)
t1=$(ms_today)
echo "# our clock $t0 .. $t1, stamps $(jq -c .timestamps <<<"$j")"
check "timestamp: originate, receive, transmit in order, each within this run's clock" \
	jq -e --argjson a "$t0" --argjson b "$t1" '.timestamps | .originate <= .receive and .receive <= .transmit and
		(if $a <= $b then $a <= .originate and .transmit <= $b else true end)' <<<"$j"
j=$(at node0003 "$IBWATCHD" --ping "$l2" --ping-method echo --ping-type info --count 1 2>cli-4.err)
check "LID/GUID: equal to what discovery knows" jq -e --argjson l "$l2" --arg g "$(guid_of node0002)" '.reply_lid == $l and .reply_port_guid == $g' <<<"$j"
j=$(at node0003 "$IBWATCHD" --ping "node0002 HCA-1" --ping-method echo --count 1 2>cli-5.err)
check "a target by name (through the SA)" jq -e --argjson l "$l2" '.lid == $l and .received == 1' <<<"$j"

sw=$(jq -r '[.nodes[] | select(.type == "switch")][0].lid' fab.json)
for m in pma smp; do
	j=$(at node0003 "$IBWATCHD" --ping "$sw" --ping-method $m --count 3 2>cli-$m-switch.err)
	check "$m ping reaches a switch (lid $sw)" jq -e '.received == 3' <<<"$j"
	j=$(at node0003 "$IBWATCHD" --ping "$(lid_of node0100)" --ping-method $m --count 3 2>cli-$m-host.err)
	check "$m ping reaches a host with no responder" jq -e '.received == 3' <<<"$j"
done
# A host without a responder: its MAD layer answers the echo class's Get
# with "not supported" at once (the kernel model plays that part; ibsim
# alone drops it: docs/testing.md). Alive, no responder, no loss. A
# host the fabric does not reach answers nothing: lost.
j=$(at node0003 "$IBWATCHD" --ping "$(lid_of node0100)" --ping-method echo --count 2 --ping-timeout-ms 2000 2>cli-8.err)
if [ -n "${IBW_KM_STATE_DIR:-}" ]; then
	check "an echo to a host with no responder: answered 'not supported', alive, no loss ($(jq -c '[.received, .no_responder, [.probes[] | .result, .rtt_ms]]' <<<"$j"))" \
		jq -e '.received == 2 and .no_responder == 2 and .loss_percent == 0 and
			([.probes[] | select(.result == "no responder" and .rtt_ms < 1000)] | length == 2)' <<<"$j"
else
	check "an echo to a host with no responder is lost on ibsim alone" jq -e '.received == 0 and .loss_percent == 100' <<<"$j"
fi

# --once pings every CA port; auto finds the responders.
at node0001 "$IBWATCHD" --once --full --no-state-file >once.json 2>once.err
check "--once pings every CA port (324)" jqe '[.endports[] | select(.state == "up")] | length == 324'
check "auto used echo where a responder answered" jqe --arg g "$(guid_of node0002)" '.endports[] | select(.port_guid == $g) | .responder and .method == "echo"'
check "and pma elsewhere" jqe --arg g "$(guid_of node0100)" '.endports[] | select(.port_guid == $g) | (.responder | not) and .method == "pma"'

# A host the fabric no longer reaches answers nothing, not even "not
# supported": its echo is lost. (After the Relink the SM routes to it
# again on its next sweep; ping_fabric below does not use it.)
if [ -n "${IBW_KM_STATE_DIR:-}" ]; then
	"$IBW_SIMFABRIC" cmd "$IBW_SIM_DIR" 'Unlink "node0100"[1]' >/dev/null
	j=$(at node0003 "$IBWATCHD" --ping "$(lid_of node0100)" --ping-method echo --count 2 --ping-timeout-ms 50 2>cli-9.err)
	"$IBW_SIMFABRIC" cmd "$IBW_SIM_DIR" 'Relink "node0100"[1]' >/dev/null
	check "an echo to a host whose link is gone is lost" \
		jq -e '.received == 0 and .no_responder == 0 and .loss_percent == 100' <<<"$j"
fi

IBW_RESPONDER_LID=$l2 at node0001 "$PING_FABRIC"
rc=$?
check "ping_fabric (Unlink/Relink, 50% loss, strays)" [ $rc = 0 ]
check "ibwatchd --responder lived through it all and stops cleanly (SIGTERM, exit 0)" stopped_clean "$resp"
# ibping -S has no SIGTERM handler: alive until now and ended by our
# SIGTERM is exit status 143 (a crash before it would be another).
ibping_rc() { stop "$ibpings" || return 1; wait "$ibpings"; local rc=$?; echo "# ibping -S: $rc"; [ $rc = 143 ]; }
pids=() # both stopped here, not by the trap
check "ibping -S lived through it all and ends on SIGTERM" ibping_rc

finish
