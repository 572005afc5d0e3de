#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
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
# commands. Prints one ok/not ok line per check and tap.sh's closing
# count, and fails on a sanitizer report in ibwatchd's or the reference
# tools' stderr.
if [ -n "${IBW_SIM_DIR:-}" ]; then
	. "$here/lib/tap.sh"
	n=0
	compare() {
		local what=$1
		n=$((n + 1))
		# From the SM's host, whose first port is linked (in net the
		# default client host, Hca2, has only its second port linked:
		# both tools then saw one node and agreed).
		SIM_HOST=$IBW_SIM_SM LD_PRELOAD=$IBW_SIM_PRELOAD "$IBWATCHD" --once --full --no-state-file \
			>ours.json 2>"ours-$n.err" || { bad "$what: ibwatchd failed"; cat "ours-$n.err"; return 1; }
		SIM_HOST=$IBW_SIM_SM LD_PRELOAD=$IBW_SIM_PRELOAD ibnetdiscover 2>"ref-$n.err" | canon_ibnetdiscover >ref.txt
		canon_ibwatch ours.json >ours.txt
		if [ -s ref.txt ] && diff -u ref.txt ours.txt >diff.txt; then
			ok "$what ($(grep -c '^node' ref.txt) nodes, $(grep -c '^link' ref.txt) links)"
		else
			bad "$what"; head -20 diff.txt
		fi
	}
	count() { grep -c "^$1 " ref.txt; }
	compare "$IBW_CASE"
	check "... ibnetdiscover saw every node of the topology ($IBW_NODES)" test "$(count node)" = "$IBW_NODES"
	for cmd in "$@"; do
		nodes=$(count node) links=$(count link)
		reply=$("$IBW_SIMFABRIC" cmd "$IBW_SIM_DIR" "$cmd")
		# ibsim answers a command it cannot do with a "# ..." line
		# (a node not found, a bad port); other lines are its warnings.
		check "ibsim takes '$cmd'" bash -c '! grep -q "^#" <<<"$1"' _ "$reply" || echo "# $reply"
		compare "$IBW_CASE after $cmd"
		# The command took effect, exactly: an Unlink takes one link
		# away, and a host cut off with it is in neither picture (our
		# --once has no memory of it, so not even as gone); a Relink
		# brings them back.
		case $cmd in
		Unlink*) dl=-1 ;;
		Relink*) dl=1 ;;
		*) continue ;;
		esac
		dn=0
		[[ $cmd == *'"node'* ]] && dn=$dl
		check "... one link $([ $dl = 1 ] && echo more || echo fewer), $((dn < 0 ? -dn : dn)) node $([ $dn = 0 ] && echo changed || { [ $dn = 1 ] && echo back || echo cut off; }) ($nodes -> $(count node) nodes, $links -> $(count link) links)" \
			test "$(count node)" = $((nodes + dn)) -a "$(count link)" = $((links + dl))
	done
	finish
	exit
fi

work=${IBW_TEST_WORK:-$PWD/test-work}
mkdir -p "$work"
"$IBW_FATTREE" --levels 2 --hosts 324 >"$work/disc-324.net"
passes=0 fails=0
run_case() { # NAME NET SM [console commands...]
	local name=$1 net=$2 sm=$3 out; shift 3
	# every node of the topology file is linked in these cases
	out=$(IBW_CASE=$name IBW_NODES=$(grep -c -E '^(Switch|Hca|Ca)[[:space:]]' "$net") "$here/lib/with-fabric.sh" "disc-$name" "$net" \
		--sm "$sm" -- "$0" "$@" 2>&1)
	rc=$?
	echo "$out" | grep -E '^(ok|not ok)|^[-+@#]' | grep -v '^ *$'
	passes=$((passes + $(grep -c '^ok' <<<"$out")))
	fails=$((fails + $(grep -c '^not ok' <<<"$out")))
	# A case that printed no result, or failed without saying so (the
	# fabric did not start, the script died), is a failure too.
	if ! grep -q '^\(ok\|not ok\)' <<<"$out" || { [ $rc != 0 ] && ! grep -q '^not ok' <<<"$out"; }; then
		echo "not ok - $name: no result or exit status $rc"; echo "$out" | tail -5; fails=$((fails + 1))
	fi
}
run_case fattree-324 "$work/disc-324.net" node0324 \
	'Unlink "node0005"[1]' 'Unlink "spine01"[1]' 'Relink "node0005"[1]'
for n in net net.2sw2path net.2sw2path4hca net.2sw2path4hca2port; do
	sm=$(awk '/^(Hca|Ca)[ \t]/ { match($0, /"[^"]*"/); print substr($0, RSTART + 1, RLENGTH - 2); exit }' "$nets/$n")
	run_case "$n" "$nets/$n" "$sm"
done
echo "$passes passed, $fails failed"
[ $fails = 0 ] && [ $passes -gt 0 ]
