#!/bin/bash
# Discovery against ibnetdiscover on the same fabric: nodes, port GUIDs,
# LIDs and links must be equal, on the 324-host fat tree (also after an
# Unlink of a host link and of a spine link) and on the ibsim examples.
#
#   discovery.sh            runs every case, each on its own fabric
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
: "${IBWATCHD:?}" "${IBW_FATTREE:?}"
nets=/usr/share/doc/ibsim-utils/net-examples
. "$here/lib/canon.sh"

# Inside a fabric (with-fabric.sh): compare, optionally after console
# commands. Prints one ok/not ok line per comparison.
if [ -n "${IBW_SIM_DIR:-}" ]; then
	fails=0
	compare() {
		local what=$1 ours ref
		LD_PRELOAD=$IBW_SIM_PRELOAD "$IBWATCHD" --once --no-state-file \
			>ours.json 2>ours.err || { echo "not ok - $what: ibwatchd failed"; cat ours.err; fails=$((fails + 1)); return; }
		LD_PRELOAD=$IBW_SIM_PRELOAD ibnetdiscover 2>/dev/null | canon_ibnetdiscover >ref.txt
		canon_ibwatch ours.json >ours.txt
		if [ -s ref.txt ] && diff -u ref.txt ours.txt >diff.txt; then
			echo "ok - $what ($(grep -c '^node' ref.txt) nodes, $(grep -c '^link' ref.txt) links)"
		else
			echo "not ok - $what"; head -20 diff.txt
			fails=$((fails + 1))
		fi
	}
	compare "$IBW_CASE"
	for cmd in "$@"; do
		"$IBW_SIMFABRIC" cmd "$IBW_SIM_DIR" "$cmd" >/dev/null
		compare "$IBW_CASE after $cmd"
		if [ "${cmd#Unlink}" != "$cmd" ]; then
			# a node cut off is in our picture only as gone
			:
		fi
	done
	exit $fails
fi

work=${IBW_TEST_WORK:-$PWD/test-work}
mkdir -p "$work"
"$IBW_FATTREE" --levels 2 --hosts 324 >"$work/disc-324.net"
passes=0 fails=0
run_case() { # NAME NET SM [console commands...]
	local name=$1 net=$2 sm=$3 out; shift 3
	out=$(IBW_CASE=$name "$here/lib/with-fabric.sh" "disc-$name" "$net" \
		--sm "$sm" -- "$0" "$@" 2>&1)
	echo "$out" | grep -E '^(ok|not ok)|^[-+@ ]' | grep -v '^ *$'
	passes=$((passes + $(grep -c '^ok' <<<"$out")))
	fails=$((fails + $(grep -c '^not ok' <<<"$out")))
	grep -q '^\(ok\|not ok\)' <<<"$out" || { echo "not ok - $name: no result"; echo "$out" | tail -5; fails=$((fails + 1)); }
}
run_case fattree-324 "$work/disc-324.net" node0324 \
	'Unlink "node0005"[1]' 'Unlink "spine01"[1]' 'Relink "node0005"[1]'
for n in net net.2sw2path net.2sw2path4hca net.2sw2path4hca2port; do
	sm=$(awk '/^(Hca|Ca)[ \t]/ { match($0, /"[^"]*"/); print substr($0, RSTART + 1, RLENGTH - 2); exit }' "$nets/$n")
	run_case "$n" "$nets/$n" "$sm"
done
echo "$passes passed, $fails failed"
[ $fails = 0 ] && [ $passes -gt 0 ]
