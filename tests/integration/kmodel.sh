#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The kernel and fabric model (tests/preload/ibw_kmodel.c) checked with
# the real infiniband-diags on a 16-host fat tree: the matching rule,
# the kernel's retries and timeout report, directed routes under the
# per-hop model (ibnetdiscover), a dead LID (perfquery -t), solicited
# flow control, a refused second echo agent (ibping -S), a host's
# "not supported" answer to a class nobody there serves, and device
# death. What is asserted are the model's rules, by its own counts
# (IBW_KM_LOG) and by what the programs see; how long things take under
# it (service times, per-hop delays, timeouts) is measured against the
# configured times by tests/bench/kmodel.sh, not here.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBW_FATTREE:?}" "${IBW_KMPROBE:?}" "${IBW_KMODEL:?}"

on_fattree kmodel 16

trap stop_started EXIT
logf=$PWD/km.stats

check "the test bed loads the model first" [ "${IBW_SIM_PRELOAD%%:*}" = "$IBW_KMODEL" ]
check "and gives it a state directory" [ -d "${IBW_KM_STATE_DIR:-/nonexistent}" ]
check "opensm's SM and SA agents are registered on its node" \
	grep -q ' 3 2 ' "$IBW_KM_STATE_DIR/agents.$IBW_SIM_SM"

l3=$(lid_of node0003)
l2=$(lid_of node0002)
l5=$(lid_of node0005)
check "LIDs of node0003 ($l3) and node0005 ($l5)" eval '[ -n "$l3" ] && [ -n "$l5" ]'

# kstat FIELD: FIELD of the last line the model logged.
kstat() { tail -n1 "$logf" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# (a) The rule: an answer reaches only a request that waits for it.
out=$(at node0001 "$IBW_KMPROBE" rule "$l3")
check "a request sent with timeout 0 gets no answer" grep -qx 'timeout0=none' <<<"$out"
check "the same request with a timeout gets one" grep -qx 'timeout1000=answer' <<<"$out"
check "a hop-0 directed-route SMP is answered by the local port even with timeout 0" \
	grep -qx 'dr_hop0_timeout0=answer' <<<"$out"
out=$(IBW_KM_RULE=0 at node0001 "$IBW_KMPROBE" rule "$l3")
check "without the rule (umad2sim alone) the timeout-0 answer comes" grep -qx 'timeout0=answer' <<<"$out"

# The kernel retries and reports a lost MAD only after its last try:
# ibsim hands a MAD to a LID nobody has back at once.
rm -f "$logf"
out=$(IBW_KM_LOG=$logf at node0001 "$IBW_KMPROBE" lost 0x7000 100 3)
check "a lost MAD, 100 ms x 3 tries, is reported as the kernel writes it: status 110, MAD header only (24 bytes)" \
	eval 'grep -qx len=24 <<<"$out" && grep -qx status=110 <<<"$out"'
check "... after two resends by the model, one timeout" \
	eval '[ "$(kstat resent)" = 2 ] && [ "$(kstat timeouts)" = 1 ]'
rm -f "$logf"
out=$(IBW_KM_LOG=$logf IBW_KM_RULE=0 at node0001 "$IBW_KMPROBE" lost 0x7000 100 3)
check "umad2sim alone hands back the whole MAD with status 110 ($(grep -E '^(len|status)=' <<<"$out" | xargs)), nothing resent" \
	eval 'grep -qx len=256 <<<"$out" && grep -qx status=110 <<<"$out" && [ "$(kstat resent)" = 0 ]'

# (b) Directed routes under the per-hop model: ibnetdiscover still finds
# every host, and the model counts the hops it paid for.
rm -f "$logf"
IBW_KM_LOG=$logf IBW_KM_LATENCY=1 IBW_KM_HOP_US=2000 at node0001 ibnetdiscover -o 1 >last.out 2>&1
check "ibnetdiscover -o 1 with 2000 us a hop finds all 16 hosts, over $(kstat dr_hops) directed-route hops" \
	eval '[ "$(grep -c "^Ca" last.out)" = 16 ] && [ "$(kstat dr_hops)" -gt 16 ]'

# (c) A dead LID: perfquery gets no answer on any try, and nothing is
# sent to it. Each try ends in the model's timeout report, except that
# under load libibmad's own wait for it (as long as the MAD's timeout,
# begun just after the send) can run out first, on a host as here;
# perfquery then gives up on that try without a report.
rm -f "$logf"
IBW_KM_LOG=$logf IBW_KM_DEAD_LIDS=$l3 at node0001 perfquery -t 200 "$l3" 1 >last.out 2>&1
tries=$(kstat dead_lid)
check "perfquery to a dead LID fails" grep -q 'failed' last.out
check "... each of its $tries tries dropped, $(kstat timeouts) timed out, none answered" \
	eval '[ "$tries" -ge 1 ] && [ "$(kstat sent)" = "$tries" ] &&
	      [ "$(kstat timeouts)" -ge $((tries - 1)) ] &&
	      [ "$(kstat timeouts)" -le "$tries" ] && [ "$(kstat answered)" = 0 ]' ||
	tail -n1 "$logf" | sed 's/^/# /'
echo "$l3" >deadlids
check "a dead LID from IBW_KM_DEAD_FILE: perfquery fails" \
	eval '! IBW_KM_DEAD_FILE=$PWD/deadlids at node0001 perfquery -t 100 "$l3" 1 >/dev/null 2>&1'
: >deadlids
check "... and works again once the file is emptied" \
	eval 'IBW_KM_DEAD_FILE=$PWD/deadlids at node0001 perfquery -t 100 "$l3" 1 >/dev/null 2>&1'
desc=$(IBW_KM_DEAD_LIDS=$l3 at node0001 smpquery -D nodedesc 0,1,3 2>&1)
check "a directed-route SMP still reaches the dead LID's node" grep -q 'node0003 HCA-1' <<<"$desc"

# Silent kinds (IBW_KM_SILENT, tests/preload/km_silent.h): one attribute
# at one LID, one attribute everywhere, a whole class at one LID; what
# is not named answers.
sil() { IBW_KM_SILENT=$1 at node0001 "${@:2}" >/dev/null 2>&1; }
check "IBW_KM_SILENT=pma:0x12@LID: PortCounters there unanswered" \
	eval '! sil "pma:0x12@$l3" perfquery -t 100 "$l3" 1'
check "... PortCountersExtended there answered, PortCounters elsewhere too" \
	eval 'sil "pma:0x12@$l3" perfquery -x -t 100 "$l3" 1 && sil "pma:0x12@$l3" perfquery -t 100 "$l2" 1'
check "IBW_KM_SILENT=sma:0x15: PortInfo by LID unanswered, NodeInfo answered" \
	eval '! sil sma:0x15 smpquery -t 100 portinfo "$l3" 1 && sil sma:0x15 smpquery -t 100 nodeinfo "$l3"'
check "IBW_KM_SILENT=pma@LID (a whole class at one LID): PortCountersExtended unanswered there, SMPs answered" \
	eval '! sil "pma@$l3" perfquery -x -t 100 "$l3" 1 && sil "pma@$l3" smpquery -t 100 nodeinfo "$l3"'

# Solicited flow control with a queue at the destination: 20 SMPs to
# one node, 4 in flight, each served in 20 ms one after the other.
rm -f "$logf"
out=$(IBW_KM_LOG=$logf IBW_KM_FC_SMP=4 IBW_KM_SVC_SMA_US=20000 \
	at node0001 "$IBW_KMPROBE" burst "$l3" 20)
check "flow control: 20 SMPs, 4 in flight: 16 held back, all answered" \
	eval '[ "$(kstat backlogged)" = 16 ] && [ "$(kstat backlog_hwm)" = 16 ] && grep -qx answered=20 <<<"$out"'

# (d) One agent per echo methods on a node, as in the kernel.
SIM_SET_ISSM=1 spawn node0005 ibping -S >ibping-s1.log 2>&1 &
pids+=($!)
s1=$!
reg=$IBW_KM_STATE_DIR/agents.node0005
for _ in $(seq 1 100); do
	grep -q "^$s1 .* 32 " "$reg" 2>/dev/null && break
	sleep 0.05
done
check "ibping -S registered the echo methods (class 0x32)" grep -q "^$s1 .* 32 " "$reg"
out=$(at node0003 ibping -c 2 -L "$l5" 2>&1)
check "... and answers ibping" grep -q '2 received' <<<"$out"
rm -f "$logf"
IBW_KM_LOG=$logf at node0005 timeout 10 ibping -S >ibping-s2.log 2>&1
rc=$?
check "a second ibping -S on the same node is refused (rc $rc)" \
	eval '[ "$rc" != 0 ] && [ "$rc" != 124 ] && grep -q "serve class" ibping-s2.log'
check "... counted by the model" [ "$(kstat refused_reg)" = 1 ]
stop "$s1"
spawn node0005 ibping -S >ibping-s3.log 2>&1 &
pids+=($!)
s3=$!
for _ in $(seq 1 100); do
	grep -q "^$s3 .* 32 " "$reg" 2>/dev/null && break
	kill -0 "$s3" 2>/dev/null || break
	sleep 0.05
done
check "once the first has gone, a new one gets the methods" grep -q "^$s3 .* 32 " "$reg"
stop "$s3"

# (d2) A host where nobody registered the echo class: its MAD layer
# answers ibping's Get "not supported" (status 0x000C) at once, which
# ibping counts as a loss all the same; a host the fabric no longer
# reaches answers nothing, and ibping's try times out.
l7=$(lid_of node0007)
check "ca-lids lists node0007's LID ($l7) once the subnet is up" \
	grep -qx "$l7 node0007" "$IBW_KM_STATE_DIR/ca-lids"
rm -f "$logf"
IBW_KM_LOG=$logf at node0003 ibping -c 1 -t 2000 "$l7" >last.out 2>&1
check "an echo to a host without a responder is answered 'not supported' (unsupported=$(kstat unsupported)), nothing times out" \
	eval '[ "$(kstat unsupported)" = 1 ] && [ "$(kstat timeouts)" = 0 ]'
"$IBW_SIMFABRIC" cmd "$IBW_SIM_DIR" 'Unlink "node0007"[1]' >/dev/null
check "an Unlink takes its LID out of ca-lids" \
	eval '! grep -qx "$l7 node0007" "$IBW_KM_STATE_DIR/ca-lids"'
rm -f "$logf"
IBW_KM_LOG=$logf at node0003 ibping -c 1 -t 200 "$l7" >last.out 2>&1
check "... and then the echo gets no answer (unsupported=$(kstat unsupported), timeouts=$(kstat timeouts))" \
	eval '[ "$(kstat unsupported)" = 0 ] && [ "$(kstat timeouts)" -ge 1 ]'
"$IBW_SIMFABRIC" cmd "$IBW_SIM_DIR" 'Relink "node0007"[1]' >/dev/null
check "a Relink puts it back" grep -qx "$l7 node0007" "$IBW_KM_STATE_DIR/ca-lids"

# (e) The device dies on cue: POLLERR, EIO, ENODEV, and back for new
# opens only.
out=$(at node0001 "$IBW_KMPROBE" death)
check "a live port polls empty" grep -qx 'alive_poll=0' <<<"$out"
check "after dead.<pid>, a poll returns with POLLERR alone (dead_poll=1: not its 5 s timeout)" \
	eval 'grep -qx dead_poll=1 <<<"$out" && grep -qx dead_revents=0x8 <<<"$out"'
check "... read and write fail with EIO" \
	eval 'grep -qx read_errno=EIO <<<"$out" && grep -qx write_errno=EIO <<<"$out"'
check "... a new open fails with ENODEV" grep -qx 'open_dead_errno=ENODEV' <<<"$out"
check "once the file is gone a new open works, the old fd stays dead" \
	eval 'grep -qx open_after_errno=none <<<"$out" && grep -qx old_fd_read_errno=EIO <<<"$out"'

# The reference tools and opensm work under the model.
rm -f "$logf"
IBW_KM_LOG=$logf at node0001 ibqueryerrors >last.out 2>&1
rc=$?
# (It exits 1: the lost MAD above counts as a relay error at leaf01.)
check "ibqueryerrors under the model checks all 24 nodes (rc $rc), nothing dropped or timed out" \
	eval 'grep -q "24 nodes checked" last.out && [ "$(kstat unmatched_dropped)" = 0 ] && [ "$(kstat timeouts)" = 0 ]'
check "saquery NodeRecord of node0003's LID from opensm's SA" \
	eval 'at node0001 saquery NodeRecord "$l3" | grep -q "NodeDescription.*node0003 HCA-1"'

finish
