#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# /api/v1/map on the 16-host fat tree, against ibnetdiscover's topology:
# every switch once, the leaves (switches with hosts) at level 1 and the
# spines at 2; each leaf's hosts counted; every switch-to-switch cable in
# exactly one bundle per switch pair, with the cable counts ibnetdiscover
# lists; a host unlinked shows down on its leaf's tile within a sweep,
# and its cable's health there.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}"

on_fattree map 16
trap stop_started EXIT

# ibnetdiscover's view: switch GUIDs, their hosts, switch-switch cables
at node0001 ibnetdiscover >topo.txt 2>topo.err
check "ibnetdiscover runs" [ -s topo.txt ]
awk '
/^Switch/ { sw = 1; g = $0; sub(/.*"S-/, "", g); sub(/".*/, "", g); cur = "0x" g; sws[cur] = 1; next }
/^(Ca|Hca)/ { sw = 0; next }
sw && /^\[[0-9]+\]/ {
	r = $0; sub(/^[^"]*"/, "", r); t = substr(r, 1, 1); g = r; sub(/^.-/, "", g); sub(/".*/, "", g)
	if (t == "H") hosts[cur]++
	else if (t == "S") { o = "0x" g; if (cur < o) pair[cur " " o]++ }
}
END {
	for (s in sws) print "switch", s, hosts[s] + 0
	for (p in pair) print "bundle", p, pair[p]
}' topo.txt | sort >ref.txt
check "ibnetdiscover: switches with 16 hosts in all" \
	eval '[ "$(grep -c ^switch ref.txt)" -gt 0 ] && [ "$(awk "/^switch/ { n += \$3 } END { print n }" ref.txt)" = 16 ]'

start_agent node0001 --no-state-file --counter-interval 1 --counter-full-speed \
	--ping-interval-ms 500 --discovery-interval 2
check "the agent listens" [ -n "${P:-}" ]
U=http://127.0.0.1:$P
wait_counter_sweeps 2
curl -s -m 5 "$U/api/v1/map" >map.json
jq -r '(.switches[] | "switch \(.guid) \(.hosts)"),
	(.bundles[] | "bundle \(.a) \(.b) \(.cables)")' map.json | sort >ours.txt
check "every switch with its hosts, every switch pair's cables, as ibnetdiscover" \
	diff ref.txt ours.txt
check "leaves (with hosts) at level 1, the rest at 2; two levels" \
	jq -e '(.switches | all(if .hosts > 0 then .level == 1 else .level == 2 end)) and .counts.levels == 3' map.json
check "counts: hosts 16, host cables 16, switch cables = the bundles' sum" \
	jq -e '.counts.hosts == 16 and .counts.host_cables == 16 and
		.counts.switch_cables == ([.bundles[].cables] | add)' map.json
check "all ok, nothing down" \
	jq -e '(.switches | all(.health == "ok" and .hosts_down == 0)) and (.bundles | all(.health == "ok"))' map.json

# node0006 (not the agent's node0001): its leaf and port, from
# ibnetdiscover's switch sections
read -r leaf host < <(awk '/^Switch/ { n = $0; sub(/^[^#]*# "/, "", n); sub(/".*/, "", n); next }
	/^(Ca|Hca)/ { n = ""; next }
	n != "" && /"node0006 HCA-1"/ { p = $1; gsub(/[^0-9]/, "", p); print n, p; exit }' topo.txt)
check "node0006 hangs at $leaf port $host" [ -n "$host" ]
sim "Unlink \"$leaf\"[$host]"
# The pings (every 0.5 s) may take the host down before a discovery
# (every 2 s) takes its cable down: wait for both.
for _ in $(seq 1 60); do
	curl -s -m 5 "$U/api/v1/map" >map2.json
	jq -e --arg l "$leaf" '.switches[] | select(.name == $l) | .hosts_down == 1 and .host_links.down == 1' \
		map2.json >/dev/null && break
	sleep 0.5
done
check "node0006 unlinked: $leaf's tile still has 4 hosts, one down, its cable down" \
	jq -e --arg l "$leaf" '.switches[] | select(.name == $l) |
		.hosts == 4 and .hosts_down == 1 and .host_links.down == 1 and .health == "down"' map2.json
check "... and the other leaves none" \
	jq -e --arg l "$leaf" '[.switches[] | select(.name != $l) | .hosts_down] | add == 0' map2.json
check "the agent stops cleanly" stopped_clean "$agent"
finish
