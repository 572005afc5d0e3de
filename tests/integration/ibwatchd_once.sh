#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# ibwatchd --once on the simulated fabric: by default a summary (status,
# unhealthy links, endports not up), with --full every document; the
# JSON names the local port as the reference tools see it; a bad --ca is
# a clear error.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
net=/usr/share/doc/ibsim-utils/net-examples/net.2sw2path4hca
: "${IBWATCHD:?IBWATCHD must name the ibwatchd binary}"

if [ -z "${IBW_SIM_DIR:-}" ]; then
	exec "$here/lib/with-fabric.sh" ibwatchd_once "$net" --sm Hca1 -- "$0"
fi

jqe() { jq -e "$@" >/dev/null; }
pre() { SIM_HOST=Hca3 LD_PRELOAD=$IBW_SIM_PRELOAD "$@"; }

# By default --once prints the summary: what one look needs.
sum=$(pre "$IBWATCHD" --once 2>err-summary.txt); rc=$?
check "--once exits 0" [ $rc = 0 ]
check "--once prints the summary: local port, status, unhealthy links, endports not up, broken routes ($(jq -c keys <<<"$sum"))" \
	jqe 'keys == ["broken_routes", "endports_not_up", "local_port", "more", "status", "unhealthy_links"]' <<<"$sum"
check "... its status as /api/v1/status serves it" \
	jqe --slurpfile f "$here/fixtures/status.json" '(.status | keys) == ($f[0] | keys)' <<<"$sum"
check "... its lists counted as the status counts them" \
	jqe '.unhealthy_links.count == (.status.links | .degraded + .failing + .down) and
		.endports_not_up.count == (.status.endports | .down + .degraded + .unknown) and
		(.unhealthy_links.list | length) <= 50 and (.endports_not_up.list | length) <= 50' <<<"$sum"
check "... no routes (--once reads no forwarding table), and how to get everything" \
	jqe '.broken_routes == null and (.more | test("--once --full"))' <<<"$sum"

out=$(pre "$IBWATCHD" --once --full 2>err.txt); rc=$?
check "--once --full exits 0" [ $rc = 0 ]
check "--once --full prints JSON" jqe . <<<"$out" >/dev/null

ref_lid=$(pre smpquery -D portinfo 0 1 | sed -n 's/^Lid:\.*//p')
ref_guid=$(pre ibstat -p | head -n1)
ref_state=$(pre smpquery -D portinfo 0 1 | sed -n 's/^LinkState:\.*//p' | tr 'A-Z' 'a-z')
check "lid equals smpquery's ($ref_lid)" [ "$(jq -r .local_port.lid <<<"$out")" = "$ref_lid" ]
check "port GUID equals ibstat's ($ref_guid)" [ "$(jq -r .local_port.port_guid <<<"$out")" = "$ref_guid" ]
check "state equals smpquery's ($ref_state)" [ "$(jq -r .local_port.state <<<"$out")" = "$ref_state" ]
check "CA and port named" [ "$(jq -r '.local_port.ca + "/" + (.local_port.port|tostring)' <<<"$out")" = "ibsim0/1" ]
check "the API's documents under their names: status as /api/v1/status serves it" \
	jqe --slurpfile f "$here/fixtures/status.json" '(.status | keys) == ($f[0] | keys) and (.status.fabric.nodes == (.nodes | length)) and (.status.fabric.ports == ([.ports[] | select(.port > 0)] | length))' <<<"$out"
check "... ports, endports, traces and events as the API serves them" \
	jqe '(.ports | length) == ([.nodes[].ports[]] | length) and (.ports[0] | has("node_guid") and has("node_name") and has("node_type")) and (.endports | type == "array") and (.traces | type == "array") and (.events | has("last_seq") and (.events | type == "array"))' <<<"$out"
check "engine counters present and consistent" jqe '.status.engine | .sent >= .submitted and .ok > 3 and .inflight == 0 and .queued == 0 and (.ok + .timeouts + .status_errors + .transport_errors + .cancelled == .submitted)' <<<"$out"
# The parser's options are its table's, which --dump-options prints.
check "every option in --help is parsed, and the reverse" bash -c '
	help=$("$IBWATCHD" --help | grep -o -- "--[a-z-]*" | sort -u)
	src=$("$IBWATCHD" --dump-options | cut -f1 | sed "s/^/--/" | sort -u)
	[ -n "$src" ] && [ "$help" = "$src" ] || { diff <(echo "$help") <(echo "$src"); exit 1; }'

out=$(pre "$IBWATCHD" --once --full --ca no-such-ca 2>err.txt); rc=$?
check "bad --ca exits non-zero" [ $rc -ne 0 ]
check "bad --ca says why" grep -q 'no InfiniBand port on CA no-such-ca' err.txt
check "bad --ca prints no JSON" [ -z "$out" ]
"$IBWATCHD" --full >/dev/null 2>err.txt; rc=$?
check "--full without --once exits 2 with a message" bash -c "[ $rc = 2 ] && grep -q -- '--full goes with --once alone' err.txt"
"$IBWATCHD" --port nine >/dev/null 2>err.txt; rc=$?
check "bad --port exits 2 with a message" bash -c "[ $rc = 2 ] && grep -q -- \"--port: 'nine'\" err.txt"

finish
