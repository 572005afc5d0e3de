#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The route census (core/lft.c, core/census.c) against the reference
# tools on the 324-host fat tree (opensm without periodic sweeps, so
# that a change made by hand stays):
# - every switch's table as read equals `ibroute` for that switch, and
#   only the blocks up to LinearFDBTop were read;
# - 500 pairs: the census path equals `ibtracert`'s, hop by hop;
# - a hole made on purpose (one LFT entry set to 0xff by a directed-route
#   Set) is found and named: the broken pairs are exactly the sources
#   for which ibtracert fails, the diff counts them lost; put back, they
#   are restored;
# - a spine link unlinked: once opensm has rerouted, no route is lost,
#   the leaf's 17 surviving uplinks carry the routes its 18 did, and a
#   route_load event says so; paths still equal ibtracert's.
# The 2,592-host tree (500 pairs there) is in tests/bench/routes.sh.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
. "$here/lib/canon.sh"
: "${IBW_FATTREE:?}" "${ROUTES_FABRIC:?}"

on_fattree routes 324 --osm-args "-s 0"

trap stop_started EXIT
coproc RF { at node0001 "$ROUTES_FABRIC" 2>rf.err; }
pids+=("$RF_PID")
rf_in=${RF[1]} rf_out=${RF[0]}
# rf COMMAND: one command to the census tool; its output (up to ".") in
# $out.
rf() {
	local l
	out=""
	echo "$*" >&"$rf_in"
	while IFS= read -r -t 300 l <&"$rf_out"; do
		[ "$l" = . ] && return 0
		out+="$l"$'\n'
	done
	return 1
}
val() { awk -v k="$1" '$1 == k { print $2 }' <<<"$out"; }
# ibtracert runs on node0200, on another leaf than node0001 (whose leaf
# gets the hole below: a tool there could not even reach the
# destination) and node0100; three at a time.
export -f canon_tracert
tracert() { # FILE of "SLID DLID": "SLID DLID PATH" lines, sorted
	xargs -P 3 -L 1 bash -c 'echo "$0 $1 $(SIM_HOST=node0200 LD_PRELOAD=$IBW_SIM_PRELOAD \
		ibtracert -n "$0" "$1" 2>>tracert.err | canon_tracert)"' <"$1" | sort -u
}
# compare_paths PATHS PAIRS: the census paths against ibtracert's for
# the pairs; prints how many differ (and the first few).
compare_paths() {
	local bad
	bad=$(comm -3 <(awk '{ if ($3 != "ok") print $1, $2, "census:", $3; else {
			$3 = $4 = ""; print } }' "$1" | tr -s ' ' | sort -u) \
		<(tracert "$2" | tr -s ' ' | sed 's/ $//'))
	[ -n "$bad" ] && head -n 6 <<<"$bad" | sed 's/^/# /' >&2
	grep -c . <<<"$bad"
}

pairs=$((324 * 323))
check "the census runs" rf census
echo "$out" >census1.txt
check "324 sources, 324 destination LIDs, $pairs pairs" \
	test "$(val sources) $(val dlids) $(val pairs)" = "324 324 $pairs"
check "every pair routed: none unreachable, looping or longer than minimal" \
	test "$(val routed) $(val unreachable) $(val looping) $(val non_minimal)" = "$pairs 0 0 0"
check "36 switch tables read, none stale or missing" \
	test "$(val lft_switches) $(val lft_fresh) $(val lft_missing)" = "36 36 0"
lft_blocks=$(val lft_blocks) lft_mads=$(val lft_mads)

# Tables against ibroute.
rf "tables tables.txt"
blocks=$(awk '/^switch/ { n += int($6 / 64) + 1 } END { print n }' tables.txt)
check "only the blocks up to LinearFDBTop were read: $lft_blocks blocks in $lft_mads MADs" \
	test "$lft_blocks" = "$blocks" -a "$lft_mads" = "$blocks"
nsw=0 badsw=0
while read -r _ guid _ lid _ top; do
	nsw=$((nsw + 1))
	ref=$(at node0001 ibroute -n "$lid" 2>>ibroute.err)
	reftop=$(sed -n 's/^Unicast lids \[0x0-\(0x[0-9a-f]*\)\].*/\1/p' <<<"$ref")
	if [ "$((reftop))" != "$top" ] ||
		! diff <(grep -E '^0x[0-9a-f]{4} [0-9]{3}' <<<"$ref" | sed 's/ *$//') \
			<(awk -v g="$guid" '/^switch/ { on = ($2 == g); next } on' tables.txt) >/dev/null; then
		badsw=$((badsw + 1))
		echo "# switch $guid (lid $lid): table differs from ibroute" >&2
	fi
done < <(grep '^switch' tables.txt)
check "every switch's table equals ibroute's ($nsw switches)" test $nsw = 36 -a $badsw = 0

# 500 pairs against ibtracert, hop by hop.
rf "sample 500 pairs.txt"
rf "paths pairs.txt paths.txt"
check "500 pairs: the census path equals ibtracert's hop by hop" \
	test "$(wc -l <paths.txt) $(compare_paths paths.txt pairs.txt)" = "500 0"

# A hole: node0001's leaf forgets node0100.
lid_of() { at "$1" ibaddr 2>/dev/null | sed -n 's/.*LID start \(0x[0-9a-f]*\).*/\1/p'; }
l1=$(($(lid_of node0001))) l100=$(($(lid_of node0100)))
path=$(at node0200 ibtracert -n "$l1" "$l100" 2>>tracert.err)
leaf=$(sed -n '2s/^\[[0-9]*\] -> {\(0x[0-9a-f]*\)}.*/\1/p' <<<"$path")
up=$(sed -n '3s/^\[\([0-9]*\)\] -> .*/\1/p' <<<"$path")
leaf_lid=$(awk -v g="$leaf" '$1 == "switch" && $2 == g { print $4 }' tables.txt)
leaf_name=$(at node0001 ibroute "$leaf_lid" 0 0 2>/dev/null | sed -n 's/.*guid 0x[0-9a-f]* (\(.*\)):$/\1/p')
orig=$(awk -v g="$leaf" -v l="$(printf '0x%04x' "$l100")" \
	'/^switch/ { on = ($2 == g); next } on && $1 == l { print $2 + 0 }' tables.txt)
check "node0001's leaf ($leaf_name, lid $leaf_lid) routes node0100 (lid $l100) by port $orig, up by $up" \
	test -n "$leaf_lid" -a -n "$leaf_name" -a -n "$orig" -a -n "$up"
rf "setlft $leaf $l100 255"
check "the entry is set to 0xff by a directed-route Set" grep -q "entry $l100 now 255" <<<"$out"
check "ibroute agrees: $leaf_name has no route to lid $l100" \
	bash -c "[ \"\$(SIM_HOST=node0001 LD_PRELOAD=$IBW_SIM_PRELOAD ibroute $leaf_lid $l100 $l100 2>/dev/null | sed -n 's/^\([0-9]*\) valid lids.*/\1/p')\" = 0 ]"
rf census
echo "$out" >census2.txt
nbroken=$(val unreachable)
check "the census finds the hole: $nbroken pairs with no entry, all others routed" \
	test "$nbroken" -gt 0 -a "$(val status_no_entry)" = "$nbroken" -a \
	"$(val routed)" = $((pairs - nbroken))
check "... the diff counts them lost" test "$(val delta_lost)" = "$nbroken"
check "... a routes_lost event names the leaf" \
	grep -q "^event routes_lost $(printf '0x%016x' "$leaf") [0-9]* $nbroken .*no entry at $leaf_name" <<<"$out"
rf "broken 1000"
grep '^pair' <<<"$out" >broken.txt
check "every broken pair goes to lid $l100 and breaks at $leaf_name" \
	test "$(wc -l <broken.txt)" = "$nbroken" -a \
	"$(awk -v d="$l100" -v g="$(printf '0x%016x' "$leaf")" '$3 == d && $4 == "no" && $7 == g' broken.txt | wc -l)" = "$nbroken"
# ... and they are exactly the sources ibtracert cannot trace from
rf "lids lids.txt"
grep -vx "$l100" lids.txt | xargs -P 3 -I{} bash -c "SIM_HOST=node0200 \
	LD_PRELOAD=\$IBW_SIM_PRELOAD ibtracert -n {} $l100 >/dev/null 2>&1 || echo {}" >tracert-fails.txt
check "the broken pairs' sources are exactly those ibtracert fails from ($(wc -l <tracert-fails.txt))" \
	diff <(awk '{ print $2 }' broken.txt | sort -n) <(sort -n tracert-fails.txt)
rf "setlft $leaf $l100 $orig"
rf census
check "the entry put back: every pair routed, $nbroken restored" \
	test "$(val routed) $(val delta_restored) $(val delta_lost)" = "$pairs $nbroken 0"
check "... a routes_restored event" grep -q "^event routes_restored .* $nbroken " <<<"$out"

# A spine link goes: once opensm has rerouted, nothing is lost and the
# leaf's surviving uplinks carry what its 18 did.
rf "uplinks $leaf"
before=$out
sum_before=$(sed -n 's/.* sum \([0-9]*\) .*/\1/p' <<<"$before")
ups=$(sed -n 's/.* uplinks \([0-9]*\) .*/\1/p' <<<"$before")
check "$leaf_name: $ups uplinks carrying $sum_before routes" test "$ups" = 18 -a "$sum_before" -gt 0
osm_log=$IBW_SIM_DIR/osm/osm.log
ups_before=$(grep -c 'SUBNET UP' "$osm_log")
sim "Unlink \"$leaf_name\"[$up]"
for _ in $(seq 1 200); do
	[ "$(grep -c 'SUBNET UP' "$osm_log")" -gt "$ups_before" ] && break
	sleep 0.1
done
check "opensm rerouted (SUBNET UP again)" test "$(grep -c 'SUBNET UP' "$osm_log")" -gt "$ups_before"
rf census
echo "$out" >census4.txt
check "after the reroute every pair is routed and none was lost" \
	test "$(val routed) $(val delta_lost) $(val looping)" = "$pairs 0 0"
check "a route_load event: $leaf_name has 17 uplinks now" \
	grep -q "^event route_load $(printf '0x%016x' "$leaf") .*$leaf_name: 17 uplinks carry .*(was 18 carrying" <<<"$out"
rf "uplinks $leaf"
after=$out
check "the 17 surviving uplinks carry the $sum_before routes the 18 did" \
	grep -q "uplinks 17 .* sum $sum_before " <<<"$after"
rose=1 grew=0
while read -r _ p _ n; do
	b=$(awk -v p="$p" '$1 == "port" && $2 == p { print $4 }' <<<"$before")
	[ -n "$b" ] && [ "$n" -ge "$b" ] || rose=0
	[ -n "$b" ] && [ "$n" -gt "$b" ] && grew=$((grew + 1))
done < <(grep '^port' <<<"$after")
check "... each carries at least as many as before, $grew more" test $rose = 1 -a $grew -gt 0
rf "load $leaf $up"
check "the unlinked port carries nothing (no link)" test "$out" = $'none\n'
rf "sample 100 pairs2.txt"
rf "paths pairs2.txt paths2.txt"
check "100 pairs after the reroute: census paths equal ibtracert's" \
	test "$(wc -l <paths2.txt) $(compare_paths paths2.txt pairs2.txt)" = "100 0"

echo quit >&"$rf_in"
rfpid=$RF_PID
wait "$rfpid"
check "the census tool exits cleanly" test $? = 0
pids=()
finish
