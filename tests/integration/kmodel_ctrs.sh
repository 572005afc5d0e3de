#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The kernel and fabric model's driven counters, checked with the real
# perfquery on a 16-host fat tree (tests/preload/km_pc.h, km_fec.h,
# km_clear.h): error counters driven past their width saturate in
# PortCounters and show their true 64-bit value in PortCountersExtended
# where the PMA says IsAdditionalPortCountersExtendedSupported (x);
# perfquery -R, -x -R and -T -R clear them for every process; a FEC
# counter saturates at 32 bits; and the SM's node answers the attributes
# ibsim never answers (PortExtendedSpeedsCounters, PortSamplesControl)
# while opensm keeps running.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBW_FATTREE:?}" "${IBW_KMODEL:?}"

on_fattree kmodel_ctrs 16
trap stop_started EXIT

check "the model is loaded, with its state directory" \
	[ -d "${IBW_KM_STATE_DIR:-/nonexistent}" ]
pcf=$IBW_KM_STATE_DIR/pc
fecf=$IBW_KM_STATE_DIR/fec
export IBW_KM_LOG=$PWD/km.stats
l3=$(lid_of node0003)
l5=$(lid_of node0005)
lsm=$(lid_of "$IBW_SIM_SM")
lsw=$(at node0001 ibswitches | awk '/"leaf01"/ { print $(NF - 2) }')
osm=$(cat "$IBW_SIM_DIR/opensm.pid")
check "LIDs of node0003 ($l3), node0005 ($l5), the SM's $IBW_SIM_SM ($lsm), leaf01 ($lsw)" \
	eval '[ -n "$l3" ] && [ -n "$l5" ] && [ -n "$lsm" ] && [ -n "$lsw" ]'

# pq HOST ARGS...: FIELD=VALUE lines of perfquery's answer
pq() {
	local h=$1
	shift
	at "$h" perfquery "$@" | sed -n 's/^\([A-Za-z0-9]*\):\.*\([0-9x]*\)$/\1=\2/p'
}
# val FIELD: FIELD's value in pq's lines on stdin
val() { sed -n "s/^$1=//p"; }
# within V LO HI
within() { [ -n "$1" ] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }

# 1. Saturation and the 64-bit twins. The counters started 2 s ago.
t0=$(($(date +%s) - 2))
cat >"$pcf.tmp" <<EOF
$l3 1 x SymbolErrorCounter=65000+1000 PortXmitWait=4294967000+1000 LinkDownedCounter=300 t0=$t0
$l5 1 SymbolErrorCounter=70000 PortRcvErrors=5
$lsw 1 LinkDownedCounter=256 PortXmitDiscards=12
EOF
mv "$pcf.tmp" "$pcf"
cat >"$fecf.tmp" <<EOF
$l3 1 rs PortFECCorrectedSymbolCtr=4294967000+1000 FECCorrectableSymbolCtrLane0=65530 t0=$t0
EOF
mv "$fecf.tmp" "$fecf"
sleep 0.2 # the model looks at the files every 0.1 s

a=$(pq node0001 "$l3" 1)
check "perfquery: node0003's SymbolErrorCounter saturated at 65535" \
	eval '[ "$(val SymbolErrorCounter <<<"$a")" = 65535 ]'
check "... its PortXmitWait at 4294967295" \
	eval '[ "$(val PortXmitWait <<<"$a")" = 4294967295 ]'
check "... its LinkDownedCounter (300) at 255" \
	eval '[ "$(val LinkDownedCounter <<<"$a")" = 255 ]'
check "... an unlisted field keeps ibsim's value (PortRcvErrors 0)" \
	eval '[ "$(val PortRcvErrors <<<"$a")" = 0 ]'
out=$(at node0001 perfquery -x "$l3" 1)
check "perfquery -x: node0003's PMA says CapMask2 bit 1" \
	grep -q 'CapMask2: 0x0000002)' <<<"$out"
x=$(sed -n 's/^\([A-Za-z0-9]*\):\.*\([0-9x]*\)$/\1=\2/p' <<<"$out")
now=$(date +%s)
hi=$(((now + 1 - t0) * 1000))
se=$(val SymbolErrorCounter <<<"$x")
check "... the true SymbolErrorCounter past 65535 ($se)" \
	within "$se" 66900 $((65000 + hi))
xw=$(val PortXmitWait <<<"$x")
check "... the true PortXmitWait past 2^32 - 1 ($xw)" \
	within "$xw" 4294968900 $((4294967000 + hi))
check "... and LinkDownedCounter 300" \
	eval '[ "$(val LinkDownedCounter <<<"$x")" = 300 ]'
out=$(at node0001 perfquery -x "$l5" 1)
check "a port without x: CapMask2 0, no error counters in -x" \
	eval 'grep -q "CapMask2: 0x0000000)" <<<"$out" &&
		! grep -q SymbolErrorCounter <<<"$out"'
check "... and PortCounters saturated (70000: 65535), PortRcvErrors 5" \
	eval '[ "$(pq node0001 "$l5" 1 | grep -e ^SymbolErrorCounter= -e ^PortRcvErrors= | tr "\n" " ")" = "SymbolErrorCounter=65535 PortRcvErrors=5 " ]'
s=$(pq node0001 "$lsw" 1)
check "a switch port: LinkDownedCounter 256 saturates at 255, PortXmitDiscards 12" \
	eval '[ "$(val LinkDownedCounter <<<"$s")" = 255 ] &&
		[ "$(val PortXmitDiscards <<<"$s")" = 12 ]'

# 2. perfquery -R clears, for every process: node0001 clears, node0002
# reads. The counters grow 1000 a second from 0 on.
at node0001 perfquery -R "$l3" 1
check "perfquery -R left a line in the clears file" \
	grep -q "^$l3 1 pc " "$IBW_KM_STATE_DIR/clears"
b=$(pq node0002 "$l3" 1)
se=$(val SymbolErrorCounter <<<"$b")
xw=$(val PortXmitWait <<<"$b")
check "another process reads them restarted: SymbolErrorCounter $se, PortXmitWait $xw" \
	eval 'within "$se" 0 1500 && within "$xw" 0 1500 &&
		[ "$(val LinkDownedCounter <<<"$b")" = 0 ]'
check "... and one the model does not drive was cleared by ibsim (PortXmitPkts small)" \
	eval 'within "$(val PortXmitPkts <<<"$b")" 0 20'
sleep 1
se1=$(pq node0002 -x "$l3" 1 | val SymbolErrorCounter)
check "... they go on from there (-x SymbolErrorCounter $se1 > $se)" \
	eval '[ -n "$se1" ] && [ "$se1" -gt "$se" ] && [ "$se1" -le $((se + 6000)) ]'
at node0001 perfquery -x -R "$l3" 1
se2=$(pq node0002 -x "$l3" 1 | val SymbolErrorCounter)
check "perfquery -x -R clears the same counter ($se2 after $se1)" \
	eval 'within "$se2" 0 $((se1 - 1)) && within "$se2" 0 1500'
at node0001 perfquery -R "$l5" 1 0x1
c=$(pq node0002 "$l5" 1)
check "a CounterSelect of SymbolErrorCounter alone leaves PortRcvErrors (5)" \
	eval '[ "$(val SymbolErrorCounter <<<"$c")" = 0 ] &&
		[ "$(val PortRcvErrors <<<"$c")" = 5 ]'

# 3. FEC: saturates at 32 bits, perfquery -T -R clears it.
f=$(pq node0001 -T "$l3" 1)
check "perfquery -T: PortFECCorrectedSymbolCtr saturated at 4294967295" \
	eval '[ "$(val PortFECCorrectedSymbolCtr <<<"$f")" = 4294967295 ]'
at node0001 perfquery -T -R "$l3" 1
check "perfquery -T -R left a line in the clears file" \
	grep -q "^$l3 1 fec " "$IBW_KM_STATE_DIR/clears"
f=$(pq node0002 -T "$l3" 1)
fc=$(val PortFECCorrectedSymbolCtr <<<"$f")
check "another process reads it restarted ($fc) and lane 0 cleared" \
	eval 'within "$fc" 0 1500 &&
		[ "$(val FECCorrectableSymbolCtrLane0 <<<"$f")" = 0 ]'

# 4. The SM's node answers what ibsim never answers, and opensm lives.
: >"$IBW_KM_LOG"
t=$(at node0001 perfquery -T "$lsm" 1)
check "perfquery -T against the SM's node answers" \
	grep -q '^PortSelect:\.*1$' <<<"$t"
t=$(at node0001 perfquery -c "$lsm" 1)
check "perfquery -c (PortSamplesControl) too" \
	grep -q '^PortSelect:\.*1$' <<<"$t"
check "... both from the model, with no timeout" \
	eval '[ "$(grep -c " timeouts=0 " "$IBW_KM_LOG")" = 2 ]'
check "a congestion counter it does not have times out there, as elsewhere" \
	eval '! at node0001 perfquery --xmitcc "$lsm" 1 >/dev/null 2>&1'
check "opensm still runs" kill -0 "$osm"
check "... and answers: sminfo" eval 'at node0001 sminfo >/dev/null'
check "... and the SA (saquery of node0003)" \
	eval 'at node0001 saquery -N node0003 >/dev/null 2>&1 ||
		at node0001 saquery NodeRecord "$l3" >/dev/null'
finish
