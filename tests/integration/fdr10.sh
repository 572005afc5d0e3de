#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# FDR10 through the Mellanox ExtendedPortInfo (vendor SMP 0xff90) on an
# 8-host fat tree whose leaf-spine cables are built at 4x FDR10 (ibsim
# 0.10 serves the attribute and keeps FDR10 beside PortInfo's QDR).
# Switches carry a SwitchX device ID (0xc738, on infiniband-diags' list
# of devices that answer it), except spine04, which keeps device ID 0
# and so must never be asked: ibsim would answer it too, so an FDR10 at
# its ends would show that it was. Hosts run at SDR (never QDR, never
# asked). The MADs themselves are counted in tests/unit/test_discover.c.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}"

if [ -z "${IBW_SIM_DIR:-}" ]; then
	work=${IBW_TEST_WORK:-$PWD/test-work}
	mkdir -p "$work"
	# devid= applies to the nodes after it; "lid 0 4xFDR10" at the end
	# of a switch port's line enables SDR-QDR and FDR10 on that port.
	"$IBW_FATTREE" --levels 2 --hosts 8 |
		sed -e '/^Switch.*"\(spine0[123]\|leaf0[12]\)"/i devid=0xc738' \
		    -e '/^Switch.*"spine04"/i devid=0' \
		    -e '/^Hca/i devid=0' \
		    -e '/^Switch/,/^$/ s/^\[[0-9]*\]\t"\(spine\|leaf\)[0-9]*"\[[0-9]*\]$/&\t# lid 0 4xFDR10/' \
		>"$work/fdr10-8.net" || exit 1
	grep -c '4xFDR10' "$work/fdr10-8.net" | grep -qx 16 ||
		{ echo "not ok - FDR10 not placed"; exit 1; }
	exec "$here/lib/with-fabric.sh" fdr10 "$work/fdr10-8.net" --sm node0008 -- "$0"
fi

trap stop_started EXIT

at node0001 "$IBWATCHD" --links --no-state-file --no-ping >l.json 2>l.err
check "--links prints the 16 cables" jq -e '.links | length == 16' l.json

fdr10='select(all(.ends[]; .name | test("^(leaf|spine0[123])")))'
check "the 6 leaf-spine cables between SwitchX devices run at 4x FDR10" \
	jq -e "[.links[] | $fdr10] | length == 6 and
		all(.speed_active == \"FDR10\" and .width_active == \"4x\")" l.json
check "their rates: 41.25 Gb/s signalling, 40 Gb/s data (64b/66b)" \
	jq -e "[.links[] | $fdr10] | all(.signal_bps == 41250000000 and
		(.data_bps - 40000000000 | fabs) < 1)" l.json
check "both ends of those report FDR10 active, enabled and supported" \
	jq -e "[.links[] | $fdr10 | .ends[]] | length == 12 and
		all(.speed_active == \"FDR10\" and
		    (.speed_enabled | index(\"FDR10\")) and
		    (.speed_supported | index(\"FDR10\")))" l.json
check "and they are the best both ends support: no speed reason" \
	jq -e "[.links[] | $fdr10] | all(.speed_best == \"FDR10\" and
		.health == \"ok\")" l.json

sp4='select(any(.ends[]; .name == "spine04"))'
check "spine04 (device ID 0) was never asked: its ends say QDR, no FDR10" \
	jq -e "[.links[] | $sp4 | .ends[] | select(.name == \"spine04\")] |
		length == 2 and all(.speed_active == \"QDR\" and
		(.speed_supported | index(\"FDR10\") | not))" l.json
check "its cables run at QDR, the best both ends support (32 Gb/s data)" \
	jq -e "[.links[] | $sp4] | length == 2 and all(.speed_active == \"QDR\"
		and .speed_best == \"QDR\" and .data_bps == 32000000000 and
		.health == \"ok\")" l.json
check "the leaf ends facing spine04 were asked and say FDR10" \
	jq -e "[.links[] | $sp4 | .ends[] | select(.name != \"spine04\")] |
		all(.speed_active == \"FDR10\")" l.json
check "host cables stay SDR" \
	jq -e '[.links[] | select(any(.ends[]; .type == "ca"))] | length == 8 and
		all(.speed_active == "SDR")' l.json

finish
